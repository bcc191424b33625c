//! The journal: one JSON object per line. The first line is the question (`start`: the spec, the
//! GPUs, where the trials' folders are), then one `trial` line per trial, written and flushed the
//! moment it ends, and an `end` line with the answer. A tune stopped at any point leaves whole
//! lines; `tune --resume` reads the question and the trials and appends to the same file; the app's
//! Tune view reads it, live or afterwards. A torn or foreign line is skipped and counted.

use std::io::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Outcome, Trial, TuneSpec};

/// The journal format's version.
pub const VERSION: u32 = 1;
/// The largest journal read (a tune of a thousand trials is a few MiB).
pub const CAP: u64 = 64 << 20;

/// A GPU of the machine the tune ran on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuLine {
    /// Its index.
    pub index: u32,
    /// Its name.
    pub name: String,
    /// Its memory, bytes.
    pub total: Option<u64>,
}

/// The first line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Start {
    /// [`VERSION`].
    pub version: u32,
    /// When the tune started (local time, `YYYY-MM-DD HH:MM:SS`).
    pub started: String,
    /// The question.
    pub spec: TuneSpec,
    /// The machine's GPUs.
    pub gpus: Vec<GpuLine>,
    /// The GPU figures were simulated (`--demo`).
    pub demo: bool,
    /// CPU cores.
    pub cpus: u32,
    /// The folder holding each trial's folder.
    pub trials_dir: String,
}

/// The last line of a run of the tuner (a resumed tune has one per run).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct End {
    /// The answer.
    pub outcome: Outcome,
    /// When it ended.
    pub finished: String,
    /// The user stopped it.
    pub interrupted: bool,
}

/// Limits a `--resume` changed (the trial limit, the margin, the headroom, the time limit): from
/// this line on they replace the start line's, so a tune stopped by its trial limit can go on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// When (local time, `YYYY-MM-DD HH:MM:SS`).
    pub changed: String,
    /// Keep this share of the GPU's memory free, %.
    pub headroom_pct: f64,
    /// A trial's time limit, seconds.
    pub trial_timeout_secs: f64,
    /// The gain a step must make, %.
    pub margin_pct: f64,
    /// At most this many trials.
    pub max_trials: u32,
}

impl Limits {
    /// The limits `spec` holds.
    pub fn of(spec: &TuneSpec, changed: String) -> Limits {
        Limits {
            changed,
            headroom_pct: spec.headroom_pct,
            trial_timeout_secs: spec.trial_timeout_secs,
            margin_pct: spec.margin_pct,
            max_trials: spec.max_trials,
        }
    }

    /// Puts these limits into `spec`.
    pub fn apply(&self, spec: &mut TuneSpec) {
        spec.headroom_pct = self.headroom_pct;
        spec.trial_timeout_secs = self.trial_timeout_secs;
        spec.margin_pct = self.margin_pct;
        spec.max_trials = self.max_trials;
    }
}

/// One line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Line {
    /// The question.
    Start(Box<Start>),
    /// A trial.
    Trial(Box<Trial>),
    /// An answer.
    End(Box<End>),
    /// New limits from a `--resume`.
    Limits(Box<Limits>),
}

/// A journal read back.
#[derive(Clone, Debug, PartialEq)]
pub struct Journal {
    /// The question.
    pub start: Start,
    /// The trials, in order.
    pub trials: Vec<Trial>,
    /// The last answer written, if any.
    pub end: Option<End>,
    /// Lines that were not part of a journal (torn by a crash, edited), skipped.
    pub skipped: usize,
}

/// Why a journal could not be read.
#[derive(Debug)]
pub enum JournalError {
    /// Not readable.
    Read(crate::safe_fs::ReadError),
    /// No start line: not a tune journal.
    NotAJournal,
    /// A newer format.
    Newer(u32),
}

impl From<crate::safe_fs::ReadError> for JournalError {
    fn from(e: crate::safe_fs::ReadError) -> Self {
        JournalError::Read(e)
    }
}

impl crate::i18n::ToMessage for JournalError {
    fn to_message(&self) -> crate::i18n::Message {
        match self {
            JournalError::Read(e) => crate::i18n::Message::data(e.to_string()),
            JournalError::NotAJournal => crate::msg!("not a gpu-doctor tune journal (no start line)"),
            JournalError::Newer(v) => crate::msg!(
                "a journal of a newer gpu-doctor (format {version}); update gpu-doctor to read it",
                version = *v
            ),
        }
    }
}

/// In English (logs); a front end shows [`crate::i18n::ToMessage::to_message`] in its language.
impl std::fmt::Display for JournalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::i18n::ToMessage::to_message(self).en())
    }
}

impl std::error::Error for JournalError {}

impl Journal {
    /// Reads `path`.
    pub fn read(path: &Path) -> Result<Journal, JournalError> {
        let bytes = crate::safe_fs::read_regular(path, CAP)?;
        Self::parse(&String::from_utf8_lossy(&bytes))
    }

    /// Parses a journal's text.
    pub fn parse(text: &str) -> Result<Journal, JournalError> {
        let (mut start, mut trials, mut end, mut skipped) = (None, Vec::new(), None, 0);
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            match serde_json::from_str::<Line>(line) {
                Ok(Line::Start(s)) if start.is_none() => {
                    if s.version > VERSION {
                        return Err(JournalError::Newer(s.version));
                    }
                    start = Some(*s);
                }
                Ok(Line::Trial(t)) if start.is_some() => trials.push(*t),
                Ok(Line::End(e)) if start.is_some() => end = Some(*e),
                Ok(Line::Limits(l)) => match start.as_mut() {
                    Some(s) => l.apply(&mut s.spec),
                    None => skipped += 1,
                },
                _ => skipped += 1,
            }
        }
        let start = start.ok_or(JournalError::NotAJournal)?;
        Ok(Journal { start, trials, end, skipped })
    }
}

/// Appends lines to a journal, each in one write, flushed and synced.
pub struct Writer {
    file: std::fs::File,
}

/// An exclusive lock on the journal for as long as the file is open (advisory: other tunes
/// ask for it; the lock ends with the process, however it ends).
fn hold(file: &std::fs::File) -> std::io::Result<()> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => {
            Err(std::io::Error::new(std::io::ErrorKind::ResourceBusy, "the journal is held by another tune"))
        }
        Err(std::fs::TryLockError::Error(e)) if e.kind() == std::io::ErrorKind::Unsupported => Ok(()),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

impl Writer {
    /// A new journal at `path` (never an existing file), held for this tune alone.
    pub fn create(path: &Path) -> std::io::Result<Writer> {
        let file = std::fs::OpenOptions::new().write(true).create_new(true).open(path)?;
        hold(&file)?;
        Ok(Writer { file })
    }

    /// An existing journal, to go on (`--resume`), held for this tune alone: a second `--resume`
    /// of the same journal is refused instead of running the same trial twice at once on the
    /// same GPU. Take it before reading the journal, so what is read is what this tune goes on from.
    pub fn append(path: &Path) -> std::io::Result<Writer> {
        let mut file = std::fs::OpenOptions::new().read(true).append(true).open(path)?;
        hold(&file)?;
        // A line torn by a crash is ended first, so it spoils only itself.
        let len = file.metadata()?.len();
        if len > 0 {
            use std::io::{Read as _, Seek as _};
            let mut last = [0u8; 1];
            file.seek(std::io::SeekFrom::Start(len - 1))?;
            file.read_exact(&mut last)?;
            if last[0] != b'\n' {
                file.write_all(b"\n")?;
            }
        }
        Ok(Writer { file })
    }

    /// Writes one line.
    pub fn write(&mut self, line: &Line) -> std::io::Result<()> {
        let mut text = serde_json::to_string(line).map_err(std::io::Error::other)?;
        text.push('\n');
        self.file.write_all(text.as_bytes())?;
        self.file.flush()?;
        self.file.sync_data()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = r#"{"type":"start","version":1,"started":"2026-12-02 20:49:12","spec":{"command":["w","{batch}"],"params":[{"name":"batch","range":{"lo":1,"hi":8}}],"concurrency":{"lo":1,"hi":1},"headroom_pct":20.0,"vram_cap":null,"trial_timeout_secs":60.0,"margin_pct":5.0,"unit":{"kind":"runs-per-hour"},"max_trials":30},"gpus":[],"demo":false,"cpus":2,"trials_dir":"t"}"#;

    #[test]
    fn torn_and_foreign_lines_are_skipped_and_counted() {
        let text = format!("{{\"type\":\"trial\",\"id\":0}}\n{START}\nnot json\n{{\"type\":\"end\",\"outc");
        let j = Journal::parse(&text).unwrap();
        assert_eq!((j.trials.len(), j.end.is_none(), j.skipped), (0, true, 3));
        assert!(matches!(Journal::parse("{}\n"), Err(JournalError::NotAJournal)));
        let newer = START.replace("\"version\":1", "\"version\":9");
        assert!(matches!(Journal::parse(&newer), Err(JournalError::Newer(9))));
    }

    /// Issue 53, item 12: limits a resume changed replace the start line's when read back.
    #[test]
    fn limits_changed_by_a_resume_are_read_back() {
        let mut j = Journal::parse(START).unwrap();
        assert_eq!(j.start.spec.max_trials, 30);
        let mut spec = j.start.spec.clone();
        spec.max_trials = 60;
        spec.margin_pct = 10.0;
        let line = serde_json::to_string(&Line::Limits(Box::new(Limits::of(&spec, "x".into())))).unwrap();
        j = Journal::parse(&format!("{START}\n{line}\n")).unwrap();
        assert_eq!((j.start.spec.max_trials, j.start.spec.margin_pct, j.skipped), (60, 10.0, 0));
    }

    #[test]
    fn appending_after_a_torn_line_spoils_only_that_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        std::fs::write(&path, format!("{START}\n{{\"type\":\"tri")).unwrap();
        let end = End {
            outcome: crate::jobs::tune::Outcome { best: None, phases: Vec::new() },
            finished: "x".into(),
            interrupted: true,
        };
        Writer::append(&path).unwrap().write(&Line::End(Box::new(end.clone()))).unwrap();
        let j = Journal::read(&path).unwrap();
        assert_eq!((j.end, j.skipped), (Some(end), 1));
        assert!(Writer::create(&path).is_err(), "an existing journal was opened for writing anew");
    }
}
