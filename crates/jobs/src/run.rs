//! Measuring a run: start a command (its output passes through untouched), sample it and the
//! GPUs until it exits, and summarise its time, peak VRAM (its own processes and the device), GPU
//! utilization, CPU, memory and I/O, the bottleneck verdicts over the run and the VRAM budget to
//! plan with. Used by `gpu-doctor-cli run` and the app's "Measure a run" dialog.

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::diagnose::bottleneck::{self, Bottleneck};
use crate::i18n::Message;
use crate::msg;
use crate::telemetry::history::keys::{self, GpuMetric};
use crate::telemetry::proctree;
use crate::telemetry::sampler::Sampler;

use super::GpuAccess;

/// How the command ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Ended {
    /// Exited with a code.
    Exited {
        /// The code.
        code: i32,
    },
    /// Killed by a signal.
    Signal {
        /// Its number.
        signal: i32,
    },
    /// Could not be started.
    NotStarted {
        /// Why.
        error: Message,
    },
}

/// Per-GPU figures over the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuRun {
    /// GPU index.
    pub gpu: u32,
    /// Mean utilization, %.
    pub util_mean: f64,
    /// Peak utilization, %.
    pub util_peak: f64,
    /// Peak VRAM used on the device (all processes), bytes.
    pub vram_peak_device: u64,
    /// The device's VRAM, bytes.
    pub vram_total: Option<u64>,
    /// Mean memory-bandwidth utilization, % (absent in summaries from before it was kept).
    #[serde(default)]
    pub membw_mean: Option<f64>,
}

/// The summary of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// The command line.
    pub command: String,
    /// How it ended.
    pub ended: Ended,
    /// Wall time, seconds.
    pub secs: f64,
    /// Peak GPU memory of the command's own processes (all GPUs), bytes; None when the driver
    /// does not report per-process memory.
    pub vram_peak_process: Option<u64>,
    /// Per GPU.
    pub gpus: Vec<GpuRun>,
    /// Mean CPU of the command's processes, % of one core.
    pub cpu_mean_pct: f64,
    /// Peak CPU, % of one core.
    pub cpu_peak_pct: f64,
    /// Most threads seen.
    pub threads_peak: u32,
    /// Peak resident memory of its processes, bytes.
    pub rss_peak: u64,
    /// Bytes read (through read calls, page cache included).
    pub read_bytes: u64,
    /// Bytes written to storage.
    pub write_bytes: u64,
    /// Bottleneck verdicts over the run.
    pub verdicts: Vec<Bottleneck>,
    /// VRAM to plan with: the peak plus 20 % and plus 30 %, bytes.
    pub vram_plan: Option<(u64, u64)>,
    /// The GPU data was simulated (`--demo`).
    pub demo: bool,
    /// Whether a GPU driver answered during the run.
    #[serde(default)]
    pub gpu_access: GpuAccess,
}

/// Starts `command`, samples it until it exits, and summarises.
pub fn measure(sampler: &Sampler, command: &[OsString], interval: Duration) -> RunSummary {
    let shown = command.iter().map(|c| c.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ");
    let demo = sampler.snapshot().is_demo();
    let gpu_access = GpuAccess::of(&sampler.snapshot().source);
    let empty = |ended| RunSummary {
        command: shown.clone(),
        ended,
        secs: 0.0,
        vram_peak_process: None,
        gpus: Vec::new(),
        cpu_mean_pct: 0.0,
        cpu_peak_pct: 0.0,
        threads_peak: 0,
        rss_peak: 0,
        read_bytes: 0,
        write_bytes: 0,
        verdicts: Vec::new(),
        vram_plan: None,
        demo,
        gpu_access,
    };
    let Some((prog, args)) = command.split_first() else {
        return empty(Ended::NotStarted { error: msg!("no command given") });
    };
    let t0 = sampler.now();
    let wall = Instant::now();
    let mut child = match Command::new(prog).args(args).spawn() {
        Ok(c) => c,
        Err(e) => {
            let error = match e.kind() {
                std::io::ErrorKind::NotFound => {
                    msg!("{program}: command not found", program = prog.to_string_lossy())
                }
                std::io::ErrorKind::PermissionDenied => {
                    msg!("{program}: permission denied (not executable)", program = prog.to_string_lossy())
                }
                _ => Message::data(format!("{}: {e}", prog.to_string_lossy())),
            };
            return empty(Ended::NotStarted { error });
        }
    };
    let pid = child.id();
    let mut meter = TreeMeter::default();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) => {}
            Err(_) => break None,
        }
        meter.tick(sampler, &[pid]);
        std::thread::sleep(interval.min(Duration::from_millis(250)));
    };
    let secs = wall.elapsed().as_secs_f64();
    let t1 = sampler.now();
    // Let the GPU sampler publish the last tick of the run.
    std::thread::sleep(Duration::from_millis(50));
    let ended = match status {
        Some(s) => match (s.code(), signal_of(&s)) {
            (Some(code), _) => Ended::Exited { code },
            (None, Some(signal)) => Ended::Signal { signal },
            (None, None) => Ended::Exited { code: 1 },
        },
        None => Ended::Exited { code: 1 },
    };
    let (gpus, verdicts) = gpu_figures(sampler, t0, t1);
    let peak =
        meter.vram_proc.filter(|v| *v > 0).or_else(|| gpus.iter().map(|g| g.vram_peak_device).max().filter(|v| *v > 0));
    RunSummary {
        command: shown,
        ended,
        secs,
        vram_peak_process: meter.vram_proc,
        gpus,
        cpu_mean_pct: meter.cpu_mean(),
        cpu_peak_pct: meter.cpu_peak,
        threads_peak: meter.threads_peak,
        rss_peak: meter.rss_peak,
        read_bytes: meter.read,
        write_bytes: meter.written,
        verdicts,
        vram_plan: peak.map(|p| ((p as f64 * 1.2) as u64, (p as f64 * 1.3) as u64)),
        demo,
        gpu_access: GpuAccess::during(sampler, t0),
    }
}

/// The figures of process trees watched tick by tick: CPU, threads, memory, I/O and their own GPU
/// memory. Shared by `run` and each `tune` trial.
#[derive(Debug)]
pub(crate) struct TreeMeter {
    cpu_prev: f64,
    t_prev: Instant,
    cpu_sum: f64,
    cpu_n: u32,
    /// Peak CPU, % of one core.
    pub cpu_peak: f64,
    /// Most threads seen.
    pub threads_peak: u32,
    /// Peak resident memory, bytes.
    pub rss_peak: u64,
    /// Bytes read through read calls.
    pub read: u64,
    /// Bytes written to storage.
    pub written: u64,
    /// Peak GPU memory of the trees' processes (None when the driver reports none).
    pub vram_proc: Option<u64>,
}

impl Default for TreeMeter {
    fn default() -> Self {
        TreeMeter {
            cpu_prev: 0.0,
            t_prev: Instant::now(),
            cpu_sum: 0.0,
            cpu_n: 0,
            cpu_peak: 0.0,
            threads_peak: 0,
            rss_peak: 0,
            read: 0,
            written: 0,
            vram_proc: None,
        }
    }
}

impl TreeMeter {
    /// Reads the process trees under `roots` once.
    pub fn tick(&mut self, sampler: &Sampler, roots: &[u32]) {
        let root = Path::new("/");
        let tree = proctree::trees(root, roots);
        let pids: Vec<u32> = tree.iter().map(|p| p.pid).collect();
        // The kernel adds a collected child's CPU time and I/O to its parent's counters, so the
        // live tree's sums include the processes that already ended; they only ever grow.
        let cpu_total: f64 = tree.iter().map(|p| p.cpu_secs + p.children_cpu_secs).sum::<f64>().max(self.cpu_prev);
        let now = Instant::now();
        let dt = now.duration_since(self.t_prev).as_secs_f64();
        if dt > 0.0 && self.cpu_prev > 0.0 {
            let pct = 100.0 * (cpu_total - self.cpu_prev) / dt;
            self.cpu_sum += pct;
            self.cpu_n += 1;
            self.cpu_peak = self.cpu_peak.max(pct);
        }
        (self.cpu_prev, self.t_prev) = (cpu_total, now);
        self.threads_peak = self.threads_peak.max(tree.iter().map(|p| p.threads).sum());
        self.rss_peak = self.rss_peak.max(tree.iter().map(|p| p.rss_bytes).sum());
        self.read = self.read.max(tree.iter().filter_map(|p| p.rchar).sum());
        self.written = self.written.max(tree.iter().filter_map(|p| p.write_bytes).sum());
        if let (Some(mine), _) = super::gpu_use(&sampler.snapshot(), &pids) {
            self.vram_proc = Some(self.vram_proc.unwrap_or(0).max(mine));
        }
    }

    /// Mean CPU, % of one core.
    pub fn cpu_mean(&self) -> f64 {
        if self.cpu_n == 0 { 0.0 } else { self.cpu_sum / f64::from(self.cpu_n) }
    }
}

/// Each GPU's figures between sampler times `t0` and `t1`, and the bottleneck verdicts then.
pub(crate) fn gpu_figures(sampler: &Sampler, t0: f64, t1: f64) -> (Vec<GpuRun>, Vec<Bottleneck>) {
    let snap = sampler.snapshot();
    sampler.with_history(|h| {
        let gpus: Vec<GpuRun> = snap
            .inventory
            .gpus
            .iter()
            .filter_map(|g| {
                let u = h.stats(&keys::gpu(g.index, GpuMetric::Util), t0, t1)?;
                let v = h.stats(&keys::gpu(g.index, GpuMetric::VramUsed), t0, t1);
                let bw = h.stats(&keys::gpu(g.index, GpuMetric::MemBw), t0, t1);
                Some(GpuRun {
                    gpu: g.index,
                    util_mean: u.mean,
                    util_peak: u.max,
                    vram_peak_device: v.map_or(0, |v| v.max as u64),
                    vram_total: g.vram_total_bytes.get(),
                    membw_mean: bw.map(|b| b.mean),
                })
            })
            .collect();
        let window = (t1 - t0).max(1.0);
        (gpus, bottleneck::evaluate(&snap, h, window, t1))
    })
}

#[cfg(unix)]
pub(crate) fn signal_of(s: &std::process::ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(s)
}

#[cfg(not(unix))]
pub(crate) fn signal_of(_: &std::process::ExitStatus) -> Option<i32> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A summary as `run --json-out` wrote it before it said whether the driver answered.
    const BEFORE_THE_ACCESS_FIELD: &str = r#"{"command": "python train.py", "ended": {"kind": "exited", "code": 0},
        "secs": 1.0, "vram_peak_process": null, "gpus": [], "cpu_mean_pct": 0.0, "cpu_peak_pct": 0.0,
        "threads_peak": 1, "rss_peak": 0, "read_bytes": 0, "write_bytes": 0, "verdicts": [],
        "vram_plan": null, "demo": false}"#;

    #[test]
    fn summaries_saved_before_the_access_field_read_as_answered() {
        let old: RunSummary = serde_json::from_str(BEFORE_THE_ACCESS_FIELD).unwrap();
        assert_eq!(old.gpu_access, GpuAccess::Answered);
        let mut now = old.clone();
        now.gpu_access = GpuAccess::NoDriver;
        let v = serde_json::to_value(&now).unwrap();
        assert_eq!(v["gpu_access"], "no-driver");
        assert_eq!(serde_json::from_value::<RunSummary>(v).unwrap(), now);
    }
}
