//! Calibration points: a peak measured by `gpu-doctor-cli run -- COMMAND`, kept for one model and
//! its settings in a user file (`vram-calibration.json` in the config directory) and shown next
//! to the estimate whenever the same model and settings come up again (the `vram` command, its
//! `--json`, the VRAM tab).
//!
//! `run` leaves its measurement in `last-run.json`; `vram … --save-calibration` (or the VRAM
//! tab's button) files it under the settings given. Nothing here overwrites what it cannot read:
//! an unreadable calibration file is moved aside as `.bak` before a new one is written.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::arch::Arch;
use super::workload::{Trainer, Workload};

/// The calibration file's name in the config directory.
pub const FILE: &str = "vram-calibration.json";
/// Where `run` leaves its last measurement.
pub const LAST_RUN: &str = "last-run.json";
/// Files larger than this are not read.
const CAP: u64 = 4 << 20;
/// Points kept; the oldest go first.
const MAX_POINTS: usize = 500;

/// The last run `run -- COMMAND` measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LastRun {
    /// The command line.
    pub command: String,
    /// Peak GPU memory of its processes, all GPUs together, bytes.
    pub peak_bytes: f64,
    /// When it ran (local time, "2026-12-01 14:05").
    pub when: String,
}

/// A measured peak for a model and its settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// The model's name.
    pub model: String,
    /// The settings (the workload without the card's size and the trainer's name).
    pub settings: serde_json::Value,
    /// The measured peak per GPU, bytes (as nvidia-smi shows a process: context included).
    pub measured_per_gpu: f64,
    /// The command that was measured.
    pub command: String,
    /// When it ran.
    pub when: String,
}

impl Point {
    /// "measured 15.2 GiB per GPU on 2026-12-01 14:05 (python train.py)".
    pub fn line(&self, estimate: f64) -> crate::i18n::Message {
        let err = if estimate > 0.0 { 100.0 * (estimate - self.measured_per_gpu) / self.measured_per_gpu } else { 0.0 };
        crate::msg!(
            "measured {gib} GiB per GPU on {when} ({command}); the estimate is {diff} % off",
            gib = format!("{:.2}", self.measured_per_gpu / super::GIB),
            when = self.when,
            command = self.command,
            diff = format!("{err:+.0}")
        )
    }
}

#[derive(Default, Serialize, Deserialize)]
struct Stored {
    version: u32,
    points: Vec<Point>,
}

/// The settings as a calibration key: everything that changes memory.
pub fn key(s: &Workload) -> serde_json::Value {
    let w = Workload { gpu_total_bytes: None, trainer: Trainer::default(), ..s.clone() };
    serde_json::to_value(w).unwrap_or(serde_json::Value::Null)
}

/// The calibration file's path.
pub fn path() -> Option<PathBuf> {
    crate::paths::config_dir().map(|d| d.join(FILE))
}

/// The last-run file's path.
pub fn last_run_path() -> Option<PathBuf> {
    crate::paths::config_dir().map(|d| d.join(LAST_RUN))
}

/// The stored points: none when the file does not exist; an error in words when it cannot be
/// used.
pub fn load(path: &Path) -> Result<Vec<Point>, crate::i18n::Message> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(Vec::new());
    }
    let text = crate::safe_fs::read_text(path, CAP)?;
    serde_json::from_str::<Stored>(&text)
        .map(|s| s.points)
        .map_err(|e| crate::msg!("{path} is not a calibration file ({error})", path = path.display(), error = e))
}

/// The point for `arch` under `s`, if one was saved.
pub fn find<'a>(points: &'a [Point], arch: &Arch, s: &Workload) -> Option<&'a Point> {
    let k = key(s);
    points.iter().rev().find(|p| p.model == arch.name && p.settings == k)
}

/// Adds `point` to the file at `path`, replacing an earlier one for the same model and settings.
/// A file that cannot be read is kept as `NAME.bak` first; returns where it went, if anywhere.
/// Every error names the path it is about ("cannot write /x/vram-calibration.json: Permission
/// denied").
pub fn save(path: &Path, point: Point) -> Result<Option<PathBuf>, crate::i18n::Message> {
    let about = |p: &Path, e: &dyn std::fmt::Display| {
        crate::msg!("cannot write {path}: {error}", path = p.display(), error = e)
    };
    let (mut points, moved) = match load(path) {
        Ok(p) => (p, None),
        Err(_) => (Vec::new(), Some(crate::safe_fs::keep_as_backup(path).map_err(|e| about(path, &e))?)),
    };
    points.retain(|p| !(p.model == point.model && p.settings == point.settings));
    points.push(point);
    if points.len() > MAX_POINTS {
        points.drain(..points.len() - MAX_POINTS);
    }
    let text = serde_json::to_string_pretty(&Stored { version: 1, points })
        .map_err(|e| crate::i18n::Message::data(e.to_string()))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| about(dir, &e))?;
    }
    crate::safe_fs::replace_atomic(path, text.as_bytes()).map_err(|e| about(path, &e))?;
    Ok(moved)
}

/// Reads the last run `run` measured.
pub fn load_last_run(path: &Path) -> Option<LastRun> {
    serde_json::from_str(&crate::safe_fs::read_text(path, CAP).ok()?).ok()
}

/// Records the last run (written atomically; the previous one is replaced).
pub fn save_last_run(path: &Path, run: &LastRun) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text = serde_json::to_string_pretty(run).map_err(std::io::Error::other)?;
    crate::safe_fs::replace_atomic(path, text.as_bytes())
}

/// The point `last` makes for `arch` under `s` (its peak shared over the run's GPUs).
pub fn point_from(last: &LastRun, arch: &Arch, s: &Workload) -> Point {
    Point {
        model: arch.name.clone(),
        settings: key(s),
        measured_per_gpu: last.peak_bytes / f64::from(s.gpus.max(1)),
        command: last.command.clone(),
        when: last.when.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vram::{GIB, Mode, presets};

    fn llama() -> Arch {
        presets::find(&presets::built_in(), "Llama-3.1-8B").cloned().unwrap()
    }

    #[test]
    fn a_point_is_found_for_the_same_settings_only_and_replaced_not_duplicated() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(FILE);
        let s = Workload { mode: Mode::Lora, batch: 2, seq: 2048, ..Workload::default() };
        let last =
            LastRun { command: "python train.py".into(), peak_bytes: 18.0 * GIB, when: "2026-12-01 14:05".into() };
        assert_eq!(save(&file, point_from(&last, &llama(), &s)).unwrap(), None);
        let points = load(&file).unwrap();
        assert_eq!(find(&points, &llama(), &s).map(|p| p.measured_per_gpu), Some(18.0 * GIB));
        // The card's size and the trainer's name do not change the key; the batch does.
        let same = Workload { gpu_total_bytes: Some(24.0 * GIB), ..s.clone() };
        assert!(find(&points, &llama(), &same).is_some());
        assert!(find(&points, &llama(), &Workload { batch: 4, ..s.clone() }).is_none());
        // A setting added later leaves the key of points saved before it alone while it is off.
        assert!(key(&s).get("held_logits").is_none());
        assert!(find(&points, &llama(), &Workload { held_logits: true, ..s.clone() }).is_none());
        let again = LastRun { peak_bytes: 19.0 * GIB, ..last };
        save(&file, point_from(&again, &llama(), &s)).unwrap();
        let points = load(&file).unwrap();
        assert_eq!(points.len(), 1);
        assert_eq!(points[0].measured_per_gpu, 19.0 * GIB);
    }

    #[test]
    fn an_unreadable_file_is_kept_aside_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(FILE);
        std::fs::write(&file, "{ not json").unwrap();
        assert!(load(&file).unwrap_err().en().contains("not a calibration file"));
        let last = LastRun { command: "x".into(), peak_bytes: GIB, when: "now".into() };
        let moved = save(&file, point_from(&last, &llama(), &Workload::default())).unwrap().unwrap();
        assert_eq!(std::fs::read_to_string(moved).unwrap(), "{ not json");
        assert_eq!(load(&file).unwrap().len(), 1);
    }
}
