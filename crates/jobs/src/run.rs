//! Measuring a run: start a command (its output passes through untouched), sample it and the
//! GPUs until it exits, and summarise its time, peak VRAM (its own processes and the device), GPU
//! utilization, CPU, memory and I/O, the bottleneck verdicts over the run and the VRAM budget to
//! plan with. Used by `gpu-doctor-cli run` and the app's "Measure a run" dialog.

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
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
    /// The rate the command printed (`run --rate-pattern`): the last number the pattern matched
    /// in its output, and the pattern; `None` when not asked for or never matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput: Option<Rate>,
    /// Whether a GPU driver answered during the run.
    #[serde(default)]
    pub gpu_access: GpuAccess,
}

/// A rate a command printed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    /// The last value found.
    pub value: f64,
    /// The regular expression that found it (its first group, else the whole match).
    pub pattern: String,
}

/// The last number `re` finds in `line` (its first group, else the whole match), finite.
pub fn rate_in(line: &str, re: &regex::Regex) -> Option<f64> {
    let c = re.captures_iter(line).last()?;
    let v = c.get(1).or_else(|| c.get(0))?.as_str().trim().parse::<f64>().ok()?;
    v.is_finite().then_some(v)
}

/// The longest line looked at for a rate; a longer one is read in pieces of this size.
const RATE_LINE_CAP: usize = 65_536;

/// Copies a child's output stream to ours as it comes (stdout to stdout, stderr to stderr) and
/// keeps the last rate `re` finds in its lines (ended by `\n` or, for progress bars, `\r`).
fn tee(
    mut from: impl std::io::Read + Send + 'static,
    to_err: bool,
    re: regex::Regex,
    last: Arc<Mutex<Option<f64>>>,
    done: std::sync::mpsc::Sender<()>,
) {
    let _ = std::thread::Builder::new().name("gd-run-tee".into()).spawn(move || {
        use std::io::Write as _;
        let mut buf = [0u8; 8192];
        let mut line: Vec<u8> = Vec::new();
        let look = |line: &mut Vec<u8>| {
            if let Some(v) = rate_in(&String::from_utf8_lossy(line), &re)
                && let Ok(mut l) = last.lock()
            {
                *l = Some(v);
            }
            line.clear();
        };
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            let _ = if to_err {
                std::io::stderr().lock().write_all(&buf[..n])
            } else {
                let mut o = std::io::stdout().lock();
                o.write_all(&buf[..n]).and_then(|()| o.flush())
            };
            for &b in &buf[..n] {
                if b == b'\n' || b == b'\r' {
                    look(&mut line);
                } else {
                    line.push(b);
                    if line.len() >= RATE_LINE_CAP {
                        look(&mut line);
                    }
                }
            }
        }
        look(&mut line);
        let _ = done.send(());
    });
}

/// Starts `command`, samples it until it exits, and summarises.
pub fn measure(sampler: &Sampler, command: &[OsString], interval: Duration) -> RunSummary {
    measure_with(sampler, command, interval, None)
}

/// [`measure`], and where `rate` is given the last number it finds in the command's output (its
/// output is copied through as it comes).
pub fn measure_with(
    sampler: &Sampler,
    command: &[OsString],
    interval: Duration,
    rate: Option<&regex::Regex>,
) -> RunSummary {
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
        throughput: None,
        gpu_access,
    };
    let Some((prog, args)) = command.split_first() else {
        return empty(Ended::NotStarted { error: msg!("no command given") });
    };
    let t0 = sampler.now();
    let wall = Instant::now();
    let mut cmd = Command::new(prog);
    cmd.args(args);
    if rate.is_some() {
        cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    }
    let mut child = match cmd.spawn() {
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
    let found: Arc<Mutex<Option<f64>>> = Arc::default();
    let (done_tx, done) = std::sync::mpsc::channel();
    let mut streams = 0;
    if let Some(re) = rate {
        if let Some(o) = child.stdout.take() {
            tee(o, false, re.clone(), Arc::clone(&found), done_tx.clone());
            streams += 1;
        }
        if let Some(e) = child.stderr.take() {
            tee(e, true, re.clone(), Arc::clone(&found), done_tx.clone());
            streams += 1;
        }
    }
    drop(done_tx);
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
        throughput: rate.and_then(|re| {
            // The last lines are read once the command's output is closed (a process it left
            // behind may hold it open: at most 2 s are waited for).
            for _ in 0..streams {
                if done.recv_timeout(Duration::from_secs(2)).is_err() {
                    break;
                }
            }
            let value = found.lock().ok().and_then(|v| *v)?;
            Some(Rate { value, pattern: re.as_str().to_string() })
        }),
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
