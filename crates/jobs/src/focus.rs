//! Stuck-job triage for one process and its children: state, CPU, threads, memory,
//! I/O, GPU memory, and how long since its log or output file last grew; then a verdict with the
//! next step. Used by `gpu-doctor-cli focus` and the app's "Focus on a process" dialog.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};

use crate::i18n::Message;
use crate::telemetry::proctree::{self, ProcStat};
use crate::telemetry::sampler::Sampler;
use crate::{msg, units};

use super::GpuAccess;

/// What the triage concluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Triage {
    /// The process does not exist (any more).
    Gone,
    /// It exited but its parent has not collected it.
    Zombie,
    /// Stopped (Ctrl-Z, a debugger).
    Stopped,
    /// Blocked in uninterruptible waits: disk or network file system.
    IoWait,
    /// Working and its output grows, or the GPU is busy for it.
    Progressing,
    /// Using CPU but its output does not grow.
    BusyNoOutput,
    /// Neither CPU, I/O nor GPU work, and no output: waiting on something.
    Waiting,
}

/// The focus result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Focus {
    /// The process.
    pub pid: u32,
    /// Its name.
    pub name: Option<String>,
    /// State letters seen, one per reading (root process).
    pub states: String,
    /// Processes in the tree at the end.
    pub processes: usize,
    /// Threads at the end.
    pub threads: u32,
    /// CPU, % of one core over the watch.
    pub cpu_pct: f64,
    /// Resident memory, bytes.
    pub rss_bytes: u64,
    /// Storage reads and writes per second over the watch.
    pub read_bps: f64,
    /// Writes per second.
    pub write_bps: f64,
    /// GPU memory of its processes, bytes (None: not reported).
    pub gpu_memory: Option<u64>,
    /// Utilization of the GPUs it is on, % (mean over the watch).
    pub gpu_util: Option<f64>,
    /// Seconds since the log file last changed, and whether it grew during the watch.
    pub log: Option<(f64, bool)>,
    /// The log's last lines report running out of GPU memory.
    #[serde(default)]
    pub oom_in_log: bool,
    /// Free share of the memory of the GPUs the process is on, when known (0..1).
    #[serde(default)]
    pub gpu_free_share: Option<f64>,
    /// What an out-of-memory report in the log means here.
    #[serde(default)]
    pub memory_note: Option<Message>,
    /// Whether a GPU driver answered while watched.
    #[serde(default)]
    pub gpu_access: GpuAccess,
    /// The GPU figures came from a simulation (`--demo`): its label. The process's own figures
    /// are this machine's either way.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::i18n::message::compact_option")]
    pub demo: Option<Message>,
    /// Verdict.
    pub triage: Triage,
    /// In words.
    pub summary: Message,
    /// What to do.
    pub next_step: Message,
}

/// CPU use, % of one core, from which the process counts as busy.
pub const BUSY_CPU_PCT: f64 = 20.0;
/// Storage traffic (reads plus writes), bytes per second, from which the process counts as doing
/// I/O work.
pub const BUSY_IO_BPS: f64 = 1_000_000.0;
/// Utilization of its GPUs, %, from which the GPU counts as working for it.
pub const BUSY_GPU_PCT: f64 = 20.0;
/// Share of readings in uninterruptible wait (`D`) from which it counts as blocked on I/O.
pub const IO_WAIT_SHARE: f64 = 0.5;

/// Judges the readings (pure, for tests).
pub fn judge(states: &str, cpu_pct: f64, io_bps: f64, log_grew: Option<bool>, gpu_util: Option<f64>) -> Triage {
    let last = states.chars().last();
    let n = states.chars().count().max(1) as f64;
    match last {
        None => return Triage::Gone,
        Some('Z') => return Triage::Zombie,
        Some('T') | Some('t') => return Triage::Stopped,
        _ => {}
    }
    let d = states.chars().filter(|c| *c == 'D').count() as f64 / n;
    if log_grew == Some(true) || gpu_util.is_some_and(|u| u >= BUSY_GPU_PCT) {
        Triage::Progressing
    } else if d >= IO_WAIT_SHARE {
        Triage::IoWait
    } else if cpu_pct >= BUSY_CPU_PCT {
        if log_grew == Some(false) { Triage::BusyNoOutput } else { Triage::Progressing }
    } else if io_bps >= BUSY_IO_BPS {
        Triage::Progressing
    } else {
        Triage::Waiting
    }
}

/// The measured figures a verdict is put in words with, so the words agree with the numbers
/// shown above them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figures {
    /// The process.
    pub pid: u32,
    /// CPU, % of one core.
    pub cpu_pct: f64,
    /// Reads plus writes, bytes per second.
    pub io_bps: f64,
    /// Utilization of the GPUs it is on, %.
    pub gpu_util: Option<f64>,
    /// Whether its log grew while watched (None: no log given).
    pub log_grew: Option<bool>,
    /// Whether a GPU driver answered.
    pub gpu_access: GpuAccess,
}

impl Figures {
    fn cpu(&self) -> Message {
        if self.cpu_pct < 0.5 {
            msg!("no CPU")
        } else {
            msg!(
                "CPU {pct} % of a core (busy from {busy} %)",
                pct = format!("{:.0}", self.cpu_pct),
                busy = format!("{BUSY_CPU_PCT:.0}")
            )
        }
    }

    fn io(&self) -> Message {
        if self.io_bps < 0.5 {
            msg!("no I/O")
        } else {
            msg!("I/O {rate} (busy from {busy})", rate = units::rate(self.io_bps), busy = units::rate(BUSY_IO_BPS))
        }
    }

    fn gpu(&self) -> Message {
        match (self.gpu_util, self.gpu_access) {
            (Some(u), _) if u < 0.5 => msg!("its GPUs idle"),
            (Some(u), _) => msg!(
                "its GPUs {pct} % busy (working from {busy} %)",
                pct = format!("{u:.0}"),
                busy = format!("{BUSY_GPU_PCT:.0}")
            ),
            (None, GpuAccess::Answered) => msg!("no GPU work"),
            (None, GpuAccess::NoDriver) => msg!("GPU not read (no NVIDIA driver answered)"),
            (None, GpuAccess::Stalled) => msg!("GPU not read (the NVIDIA driver stopped answering)"),
            (None, _) => msg!("GPU not read"),
        }
    }
}

/// `parts` as a list, joined in the reader's language.
fn joined(parts: Vec<Message>) -> Message {
    Message::join(parts, &msg!(", "))
}

/// The verdict in words (summary, next step) for `t`, stated with the measured figures, with the
/// real PID in the commands of the next step.
pub fn verdict_words(t: Triage, f: &Figures) -> (Message, Message) {
    let (summary, next) = match t {
        Triage::Gone => (
            msg!("the process is not running"),
            msg!(
                "Check its exit status and the end of its log; it may have crashed or been killed (kernel log: out-of-memory killer)."
            ),
        ),
        Triage::Zombie => (
            msg!("it has exited, but its parent has not collected it (zombie)"),
            msg!(
                "The work is over. Look at the parent process: it is stuck or ignores its children; restarting the parent clears the zombie."
            ),
        ),
        Triage::Stopped => {
            (msg!("it is stopped (Ctrl-Z or a debugger)"), msg!("Resume it with fg or kill -CONT {pid}.", pid = f.pid))
        }
        Triage::IoWait => (
            msg!("it is blocked in uninterruptible I/O waits (disk or network file system)"),
            msg!(
                "Check the storage: a hung NFS/SMB mount, a failing disk (kernel log), or a full disk. The process cannot be killed until the I/O returns."
            ),
        ),
        Triage::Progressing => {
            let why = if f.log_grew == Some(true) {
                msg!("its log grows")
            } else if f.gpu_util.is_some_and(|u| u >= BUSY_GPU_PCT) {
                f.gpu()
            } else if f.cpu_pct >= BUSY_CPU_PCT {
                f.cpu()
            } else {
                f.io()
            };
            (
                msg!("it is making progress ({why})", why = why),
                msg!("Let it run; to make it faster, see the Monitor's diagnosis."),
            )
        }
        Triage::BusyNoOutput => (
            msg!("it uses CPU ({pct} % of a core) but its output does not grow", pct = format!("{:.0}", f.cpu_pct)),
            msg!(
                "A long step, or a loop that never ends: look at the last log line, and sample its stack (py-spy dump --pid {pid} for Python, gdb -p {pid}) before deciding to stop it.",
                pid = f.pid
            ),
        ),
        Triage::Waiting => {
            let mut parts = vec![f.cpu(), f.io(), f.gpu()];
            if f.log_grew == Some(false) {
                parts.push(msg!("no output to its log"));
            }
            let nothing = f.cpu_pct < 0.5 && f.io_bps < 0.5 && f.gpu_util.is_none_or(|u| u < 0.5);
            let parts = joined(parts);
            (
                if nothing {
                    msg!("it does nothing: {parts}", parts = parts)
                } else {
                    msg!("it does too little to be working: {parts}", parts = parts)
                },
                msg!(
                    "It waits on something: a lock, the network, another process, input. Sample its stack (py-spy dump --pid {pid}, gdb -p {pid}); keep the log and the inputs, and reproduce small before restarting the big job.",
                    pid = f.pid
                ),
            )
        }
    };
    (summary, next)
}

/// The readings' states in words with counts, most frequent first: "sleeping 6 of 6 readings",
/// "running 4, sleeping 2 of 6 readings".
pub fn state_counts(states: &str) -> Message {
    let mut counts: Vec<(char, usize)> = Vec::new();
    for c in states.chars() {
        match counts.iter_mut().find(|(k, _)| *k == c) {
            Some((_, n)) => *n += 1,
            None => counts.push((c, 1)),
        }
    }
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    let total = states.chars().count();
    let parts: Vec<Message> = counts
        .iter()
        .map(|(c, n)| msg!("{state} {n}", state = Message::new(proctree::state_short_key(*c)), n = n))
        .collect();
    let states = joined(parts);
    if total == 1 {
        msg!("{states} of {total} reading", states = states, total = total)
    } else {
        msg!("{states} of {total} readings", states = states, total = total)
    }
}

fn log_age(path: &Path) -> Option<(f64, u64)> {
    let m = std::fs::metadata(path).ok()?;
    let age = m.modified().ok().and_then(|t| SystemTime::now().duration_since(t).ok()).map_or(0.0, |d| d.as_secs_f64());
    Some((age, m.len()))
}

/// One reading of the process tree.
type Reading = (Instant, Vec<ProcStat>);

/// What to watch, and for how long.
#[derive(Clone, Debug, PartialEq)]
pub struct FocusOptions {
    /// The process (its children are included).
    pub pid: u32,
    /// Its log or output file: how long since it last grew.
    pub log: Option<PathBuf>,
    /// How long to watch before judging.
    pub watch: Duration,
    /// Time between readings.
    pub every: Duration,
}

/// Watches the process for `watch` and judges; `sampler` (when given) supplies its GPU memory and
/// the utilization of its GPUs.
pub fn observe(sampler: Option<&Sampler>, options: &FocusOptions) -> Focus {
    let FocusOptions { pid, ref log, watch, every } = *options;
    let log = log.as_deref();
    let root = Path::new("/");
    let start = Instant::now();
    let first_log = log.and_then(log_age);
    let mut states = String::new();
    let (mut first, mut last): (Option<Reading>, Option<Reading>) = (None, None);
    let mut util_sum = (0.0, 0usize);
    let mut gpu_memory = None;
    loop {
        let tree = proctree::tree(root, pid);
        if let Some(me) = tree.iter().find(|p| p.pid == pid) {
            states.push(me.state);
        }
        if !tree.is_empty() {
            if first.is_none() {
                first = Some((Instant::now(), tree.clone()));
            }
            if let Some(s) = sampler {
                let pids: Vec<u32> = tree.iter().map(|p| p.pid).collect();
                let (mem, utilization) = super::gpu_use(&s.snapshot(), &pids);
                for u in utilization {
                    util_sum = (util_sum.0 + u, util_sum.1 + 1);
                }
                if mem.is_some() {
                    gpu_memory = mem;
                }
            }
            last = Some((Instant::now(), tree));
        }
        if start.elapsed() >= watch || last.is_none() {
            break;
        }
        std::thread::sleep(every);
    }
    let end_log = log.and_then(log_age);
    let name = last.as_ref().and_then(|(_, t)| t.iter().find(|p| p.pid == pid).map(|p| p.name.clone()));
    let (cpu_pct, read_bps, write_bps, threads, rss, processes) = match (&first, &last) {
        (Some((t0, a)), Some((t1, b))) => {
            let dt = t1.duration_since(*t0).as_secs_f64().max(1e-3);
            let sum = |v: &[ProcStat], f: &dyn Fn(&ProcStat) -> f64| v.iter().map(f).sum::<f64>();
            let cpu = |p: &ProcStat| p.cpu_secs + p.children_cpu_secs;
            let rd = |p: &ProcStat| p.rchar.unwrap_or(0) as f64;
            let wr = |p: &ProcStat| p.write_bytes.unwrap_or(0) as f64;
            (
                (100.0 * (sum(b, &cpu) - sum(a, &cpu)) / dt).max(0.0),
                ((sum(b, &rd) - sum(a, &rd)) / dt).max(0.0),
                ((sum(b, &wr) - sum(a, &wr)) / dt).max(0.0),
                b.iter().map(|p| p.threads).sum(),
                b.iter().map(|p| p.rss_bytes).sum(),
                b.len(),
            )
        }
        _ => (0.0, 0.0, 0.0, 0, 0, 0),
    };
    let log_state = end_log.map(|(age, len)| (age, first_log.is_some_and(|(_, l0)| len > l0)));
    let oom_in_log = log.and_then(log_tail).is_some_and(|t| mentions_oom(&t));
    let gpu_free_share = sampler.and_then(|s| {
        let snap = s.snapshot();
        let on: Vec<_> =
            snap.gpus.iter().filter(|g| g.processes.value().is_some_and(|l| l.iter().any(|p| p.pid == pid))).collect();
        let (free, total): (u64, u64) = on
            .iter()
            .filter_map(|g| Some((g.vram_free_bytes.get()?, g.vram_total_bytes.get()?)))
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        (total > 0).then(|| free as f64 / total as f64)
    });
    let memory_note = oom_note(oom_in_log, gpu_free_share);
    let gpu_util = (util_sum.1 > 0).then(|| util_sum.0 / util_sum.1 as f64);
    let gpu_access = sampler.map_or(GpuAccess::NotSampled, |s| GpuAccess::during(s, 0.0));
    let demo = sampler.map(Sampler::snapshot).filter(|s| s.source.is_demo()).map(|s| s.source.label());
    let figures =
        Figures { pid, cpu_pct, io_bps: read_bps + write_bps, gpu_util, log_grew: log_state.map(|l| l.1), gpu_access };
    let triage = judge(&states, cpu_pct, figures.io_bps, figures.log_grew, gpu_util);
    let (summary, next_step) = verdict_words(triage, &figures);
    Focus {
        pid,
        name,
        states,
        processes,
        threads,
        cpu_pct,
        rss_bytes: rss,
        read_bps,
        write_bps,
        gpu_memory,
        gpu_util,
        log: log_state,
        oom_in_log,
        gpu_free_share,
        memory_note,
        gpu_access,
        demo,
        triage,
        summary,
        next_step,
    }
}

/// The last 64 KiB of a log file.
fn log_tail(path: &Path) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = crate::safe_fs::open_regular(path).ok()?;
    let len = f.metadata().ok()?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(64 * 1024))).ok()?;
    let mut buf = Vec::new();
    f.take(64 * 1024).read_to_end(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// True when the text reports a GPU out-of-memory error (PyTorch, CUDA, TensorFlow, JAX wording).
pub fn mentions_oom(text: &str) -> bool {
    let t = text.to_lowercase();
    [
        "cuda out of memory",
        "cuda_error_out_of_memory",
        "outofmemoryerror",
        "out of memory on device",
        "resource_exhausted",
        "cudaerrormemoryallocation",
    ]
    .iter()
    .any(|k| t.contains(k))
}

/// The meaning of an out-of-memory report given how much GPU memory is free now.
pub fn oom_note(oom: bool, free_share: Option<f64>) -> Option<Message> {
    if !oom {
        return None;
    }
    Some(match free_share {
        Some(f) if f >= 0.3 => msg!(
            "The log reports running out of GPU memory while {pct} % of it is free: that is fragmentation (or a single huge allocation), not capacity. Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, restart the worker, or split the batch; check the input for an oversized item first.",
            pct = format!("{:.0}", 100.0 * f)
        ),
        Some(f) => msg!(
            "The log reports running out of GPU memory and only {pct} % is free: capacity. Lower the batch size or sequence length, use mixed precision or checkpointing (the VRAM tab estimates the need).",
            pct = format!("{:.0}", 100.0 * f)
        ),
        None => msg!(
            "The log reports running out of GPU memory. Compare with the free VRAM in the Monitor: much free means fragmentation (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, restart the worker, split the batch); little free means capacity (smaller batch)."
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_memory_while_free_is_fragmentation() {
        let log = "step 41\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.6 GiB of which 9.1 GiB is free.";
        assert!(mentions_oom(log) && !mentions_oom("all fine"));
        assert!(oom_note(true, Some(0.4)).unwrap_or_default().en().contains("fragmentation"));
        assert!(oom_note(true, Some(0.05)).unwrap_or_default().en().contains("capacity"));
        assert!(oom_note(true, None).is_some() && oom_note(false, Some(0.5)).is_none());
    }

    #[test]
    fn triage_rules() {
        assert_eq!(judge("", 0.0, 0.0, None, None), Triage::Gone);
        assert_eq!(judge("SSZ", 0.0, 0.0, None, None), Triage::Zombie);
        assert_eq!(judge("DDDS", 1.0, 0.0, Some(false), None), Triage::IoWait);
        assert_eq!(judge("RRRR", 99.0, 0.0, Some(false), None), Triage::BusyNoOutput);
        assert_eq!(judge("RRRR", 99.0, 0.0, None, None), Triage::Progressing);
        assert_eq!(judge("SSSS", 0.0, 0.0, Some(true), None), Triage::Progressing);
        assert_eq!(judge("SSSS", 0.0, 0.0, Some(false), Some(95.0)), Triage::Progressing);
        assert_eq!(judge("SSSS", 0.5, 10.0, Some(false), Some(0.0)), Triage::Waiting);
        assert_eq!(judge("T", 0.0, 0.0, None, None), Triage::Stopped);
    }

    fn figures(io_bps: f64) -> Figures {
        Figures {
            pid: 4242,
            cpu_pct: 0.0,
            io_bps,
            gpu_util: None,
            log_grew: Some(false),
            gpu_access: GpuAccess::Answered,
        }
    }

    #[test]
    fn the_verdict_agrees_with_the_figures_shown() {
        let f = figures(30_500.0);
        let t = judge("SSSSSS", f.cpu_pct, f.io_bps, f.log_grew, f.gpu_util);
        assert_eq!(t, Triage::Waiting);
        let (summary, next) = verdict_words(t, &f);
        assert!(!summary.en().contains("no I/O"), "{}", summary.en());
        assert!(
            summary.en().contains(&units::rate(30_500.0)) && summary.en().contains(&units::rate(BUSY_IO_BPS)),
            "{}",
            summary.en()
        );
        assert!(next.en().contains("py-spy dump --pid 4242") && next.en().contains("gdb -p 4242"), "{}", next.en());
        assert!(!next.en().contains("PID"), "{}", next.en());
        let (quiet, _) = verdict_words(Triage::Waiting, &figures(0.0));
        assert!(quiet.en().starts_with("it does nothing: no CPU, no I/O"), "{}", quiet.en());
        let (busy, next) = verdict_words(Triage::BusyNoOutput, &Figures { cpu_pct: 99.0, ..figures(0.0) });
        assert!(busy.en().contains("99 %") && next.en().contains("--pid 4242"), "{} {}", busy.en(), next.en());
        let (_, resume) = verdict_words(Triage::Stopped, &figures(0.0));
        assert!(resume.en().contains("kill -CONT 4242"), "{}", resume.en());
        let no_driver = Figures { gpu_access: GpuAccess::NoDriver, ..figures(0.0) };
        let (waiting, _) = verdict_words(Triage::Waiting, &no_driver);
        assert!(waiting.en().contains("GPU not read (no NVIDIA driver answered)"), "{}", waiting.en());
    }

    #[test]
    fn rendered_states_are_words_with_counts() {
        assert_eq!(state_counts("SSSSSS").en(), "sleeping 6 of 6 readings");
        assert_eq!(state_counts("RSRRSR").en(), "running 4, sleeping 2 of 6 readings");
        assert_eq!(state_counts("D").en(), "uninterruptible wait 1 of 1 reading");
    }
}
