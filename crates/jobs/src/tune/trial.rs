//! Running one trial: the setting's copies started at once (each in its own process group, its
//! output to its own log in the trial's folder), watched like `run` (the process trees' CPU,
//! memory and I/O, the GPUs' memory and utilization), stopped at out of memory, over the VRAM
//! cap, past the time limit or on Ctrl-C, and summed up as a [`Trial`].

use std::fs::File;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use regex::Regex;

use super::spec::{Setting, TuneSpec, Unit, WORKERS, shell_line};
use super::{Trial, TrialEnd, oom};
use crate::diagnose::Verdict;
use crate::i18n::Message;
use crate::jobs::run::{TreeMeter, gpu_figures, signal_of};
use crate::telemetry::sampler::Sampler;
use crate::{msg, units};

/// What every trial of a tune shares.
pub struct Runner<'a> {
    /// The question.
    pub spec: &'a TuneSpec,
    /// The running sampler (its GPUs and history).
    pub sampler: &'a Sampler,
    /// Set when the user asks to stop (Ctrl-C): the running trial is stopped and recorded.
    pub stop: &'a AtomicBool,
    /// The rate pattern, compiled.
    pub pattern: Option<Regex>,
    /// CPU cores of this machine.
    pub cpus: u32,
    /// How often the copies are looked at (out of memory, time, exits); at least 250 ms.
    pub tick: Duration,
}

/// A copy's log, read as it grows: out-of-memory lines, the last rate the pattern matched and
/// the last line.
struct LogWatch {
    path: PathBuf,
    offset: u64,
    partial: String,
    oom: Option<oom::OomLine>,
    rate: Option<f64>,
    last_line: String,
}

/// A trial shorter than this gets no bottleneck rule's verdict, only the tuner's own reading.
const MIN_RULE_SECS: f64 = 30.0;

/// Bytes read from a log per look (the rest on the next).
const READ_CHUNK: usize = 1 << 20;

impl LogWatch {
    fn new(path: PathBuf) -> Self {
        LogWatch { path, offset: 0, partial: String::new(), oom: None, rate: None, last_line: String::new() }
    }

    fn look(&mut self, pattern: Option<&Regex>, finished: bool) {
        let Ok(mut f) = File::open(&self.path) else { return };
        if f.seek(SeekFrom::Start(self.offset)).is_err() {
            return;
        }
        let mut buf = Vec::new();
        let got = f.by_ref().take(READ_CHUNK as u64).read_to_end(&mut buf).unwrap_or(0);
        self.offset += got as u64;
        self.partial.push_str(&String::from_utf8_lossy(&buf));
        // Progress bars redraw with carriage returns: each redraw is a line.
        let text = std::mem::take(&mut self.partial).replace('\r', "\n");
        let (complete, rest) = match text.rfind('\n') {
            Some(i) if !finished => (&text[..=i], &text[i + 1..]),
            None if !finished => ("", &text[..]),
            _ => (&text[..], ""),
        };
        for line in complete.lines() {
            self.line(line, pattern);
        }
        // A line without an end that grows past 64 KiB is read as it is.
        if rest.len() > 65_536 {
            self.line(rest, pattern);
        } else {
            self.partial = rest.to_string();
        }
    }

    fn line(&mut self, line: &str, pattern: Option<&Regex>) {
        if self.oom.is_none() {
            self.oom = oom::find(line);
        }
        if let Some(re) = pattern
            && let Some(c) = re.captures_iter(line).last()
            && let Some(v) = c.get(1).or_else(|| c.get(0)).and_then(|m| m.as_str().trim().parse::<f64>().ok())
            && v.is_finite()
        {
            self.rate = Some(v);
        }
        if !line.trim().is_empty() {
            self.last_line = line.trim().chars().take(300).collect();
        }
    }
}

/// gpu-doctor's own CPU time, seconds (None where it cannot be read).
fn own_cpu_secs() -> Option<f64> {
    crate::telemetry::proctree::read(Path::new("/"), std::process::id()).map(|p| p.cpu_secs)
}

fn start(args: &[String], dir: &Path, id: u32, copy: u32, log: &Path) -> std::io::Result<Child> {
    let out = File::create(log)?;
    let err = out.try_clone()?;
    let (prog, rest) = args.split_first().ok_or_else(|| std::io::Error::other("no command"))?;
    let mut cmd = Command::new(prog);
    cmd.args(rest)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .env("GPU_DOCTOR_TRIAL", id.to_string())
        .env("GPU_DOCTOR_TRIAL_DIR", dir)
        .env("GPU_DOCTOR_COPY", copy.to_string());
    // Its own process group: a stop ends the copy and everything it started, and the terminal's
    // Ctrl-C reaches gpu-doctor, which records the trial before stopping it.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd.spawn()
}

/// Ends the copies still running: SIGTERM to each process group, then SIGKILL after 3 s.
fn stop_all(children: &mut [(Child, Option<std::process::ExitStatus>)]) {
    #[cfg(target_os = "linux")]
    {
        let signal_all = |sig: libc::c_int, children: &[(Child, Option<std::process::ExitStatus>)]| {
            for (c, status) in children {
                if status.is_none()
                    && let Ok(pid) = libc::pid_t::try_from(c.id())
                {
                    // SAFETY: kill() only sends a signal; a negative pid names the copy's own group.
                    unsafe { libc::kill(-pid, sig) };
                }
            }
        };
        signal_all(libc::SIGTERM, children);
        let until = Instant::now() + Duration::from_secs(3);
        while Instant::now() < until {
            let mut running = false;
            for (c, status) in children.iter_mut() {
                if status.is_none() {
                    *status = c.try_wait().ok().flatten();
                    running |= status.is_none();
                }
            }
            if !running {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        signal_all(libc::SIGKILL, children);
    }
    for (c, status) in children.iter_mut() {
        if status.is_none() {
            let _ = c.kill();
            *status = c.wait().ok();
        }
    }
}

impl Runner<'_> {
    /// Runs trial `id` of `setting` with its folder `dir` (created here).
    pub fn run(&self, id: u32, phase: &str, setting: &Setting, dir: &Path) -> Trial {
        let copies = setting.concurrency.max(1);
        let first_command = shell_line(&setting.command(&self.spec.command, &dir.join("copy-1").to_string_lossy(), 1));
        let mut trial = Trial {
            id,
            phase: phase.to_string(),
            setting: setting.clone(),
            command: first_command,
            dir: dir.to_string_lossy().into_owned(),
            end: TrialEnd::Ok,
            secs: 0.0,
            throughput: None,
            vram_peak: None,
            device_peak: None,
            device_total: None,
            util_mean: None,
            membw_mean: None,
            cpu_mean_pct: 0.0,
            read_bytes: 0,
            write_bytes: 0,
            rss_peak: 0,
            verdict: Message::data(""),
            tuner_cpu_secs: 0.0,
            per_gpu: Vec::new(),
        };
        let cpu_before = own_cpu_secs();
        let baseline: Vec<(u32, u64)> =
            self.sampler.snapshot().gpus.iter().filter_map(|g| Some((g.index, g.vram_used_bytes.get()?))).collect();
        let mut children = Vec::new();
        let mut logs = Vec::new();
        let t0 = self.sampler.now();
        let wall = Instant::now();
        for copy in 1..=copies {
            let out = dir.join(format!("copy-{copy}"));
            let log = dir.join(format!("copy-{copy}.log"));
            let args = setting.command(&self.spec.command, &out.to_string_lossy(), copy);
            let started = std::fs::create_dir_all(&out).and_then(|()| start(&args, &out, id, copy, &log));
            match started {
                Ok(child) => children.push((child, None)),
                Err(e) => {
                    let program = args.first().cloned().unwrap_or_default();
                    let error = match e.kind() {
                        std::io::ErrorKind::NotFound => msg!("{program}: command not found", program = program),
                        std::io::ErrorKind::PermissionDenied => {
                            msg!("{program}: permission denied (not executable)", program = program)
                        }
                        _ => Message::data(format!("{program}: {e}")),
                    };
                    trial.end = TrialEnd::NotStarted { error };
                    break;
                }
            }
            logs.push(LogWatch::new(log));
        }
        let mut meter = TreeMeter::default();
        let limit = Duration::from_secs_f64(self.spec.trial_timeout_secs.max(0.1));
        let tick = self.tick.max(Duration::from_millis(250));
        while trial.end == TrialEnd::Ok {
            for (c, status) in children.iter_mut() {
                if status.is_none() {
                    *status = c.try_wait().ok().flatten();
                }
            }
            let live: Vec<u32> = children.iter().filter(|(_, s)| s.is_none()).map(|(c, _)| c.id()).collect();
            meter.tick(self.sampler, &live);
            for w in &mut logs {
                w.look(self.pattern.as_ref(), false);
            }
            if let Some(o) = logs.iter().find_map(|w| w.oom.clone()) {
                trial.end = TrialEnd::OutOfMemory { oom: o };
            } else if let Some(used) = self.over_cap() {
                trial.end = TrialEnd::OverCap { used };
            } else if self.stop.load(Ordering::SeqCst) {
                trial.end = TrialEnd::Interrupted;
            } else if live.is_empty() {
                break;
            } else if wall.elapsed() >= limit {
                trial.end = TrialEnd::TimedOut;
            } else {
                std::thread::sleep(tick);
            }
        }
        stop_all(&mut children);
        trial.secs = wall.elapsed().as_secs_f64();
        let t1 = self.sampler.now();
        // Let the GPU sampler publish the trial's last tick.
        std::thread::sleep(Duration::from_millis(60));
        for w in &mut logs {
            w.look(self.pattern.as_ref(), true);
        }
        if trial.end == TrialEnd::Ok {
            if let Some(o) = logs.iter().find_map(|w| w.oom.clone()) {
                trial.end = TrialEnd::OutOfMemory { oom: o };
            } else if let Some(((_, status), w)) =
                children.iter().zip(&logs).find(|((_, s), _)| s.is_none_or(|s| !s.success()))
            {
                let code = status.map_or(1, |s| s.code().unwrap_or_else(|| 128 + signal_of(&s).unwrap_or(0)));
                trial.end = TrialEnd::Failed { code, last_line: w.last_line.clone() };
            }
        }
        self.figures(&mut trial, &meter, &baseline, &logs, t0, t1);
        trial.tuner_cpu_secs = match (cpu_before, own_cpu_secs()) {
            (Some(a), Some(b)) => (b - a).max(0.0),
            _ => 0.0,
        };
        trial
    }

    /// The memory in use on a GPU when it is over the user's cap.
    fn over_cap(&self) -> Option<u64> {
        let cap = self.spec.vram_cap?;
        self.sampler.snapshot().gpus.iter().filter_map(|g| g.vram_used_bytes.get()).find(|u| *u > cap)
    }

    fn figures(&self, t: &mut Trial, meter: &TreeMeter, baseline: &[(u32, u64)], logs: &[LogWatch], t0: f64, t1: f64) {
        let (gpus, verdicts) = gpu_figures(self.sampler, t0, t1);
        let rise = |g: &crate::jobs::run::GpuRun| {
            let before = baseline.iter().find(|(i, _)| *i == g.gpu).map_or(0, |(_, b)| *b);
            g.vram_peak_device.saturating_sub(before)
        };
        // The GPUs it used: their memory rose by 64 MiB or more. Headroom is judged on the fullest
        // of them (the one that runs out first); with none, on the busiest GPU.
        let used: Vec<&crate::jobs::run::GpuRun> = gpus.iter().filter(|g| rise(g) >= 64 << 20).collect();
        let fullness = |g: &crate::jobs::run::GpuRun| match g.vram_total.filter(|t| *t > 0) {
            Some(total) => g.vram_peak_device as f64 / total as f64,
            None => g.vram_peak_device as f64,
        };
        let judged = used
            .iter()
            .copied()
            .max_by(|a, b| fullness(a).total_cmp(&fullness(b)))
            .or_else(|| gpus.iter().max_by(|a, b| a.util_mean.total_cmp(&b.util_mean)));
        t.per_gpu =
            used.iter().map(|g| super::GpuPeak { gpu: g.gpu, peak: g.vram_peak_device, total: g.vram_total }).collect();
        if let Some(g) = judged {
            t.device_peak = (g.vram_peak_device > 0).then_some(g.vram_peak_device);
            t.device_total = g.vram_total;
            let before = baseline.iter().find(|(i, _)| *i == g.gpu).map_or(0, |(_, b)| *b);
            let (util, membw) =
                steady_means(self.sampler, g.gpu, before, t0, t1).unwrap_or((Some(g.util_mean), g.membw_mean));
            t.util_mean = util;
            t.membw_mean = membw;
        }
        let rises: u64 = gpus.iter().map(rise).sum();
        t.vram_peak = match (meter.vram_proc.filter(|v| *v > 0), rises) {
            (Some(own), r) => Some(own.max(r)),
            (None, r) if r > 0 => Some(r),
            _ => None,
        };
        t.cpu_mean_pct = meter.cpu_mean();
        t.read_bytes = meter.read;
        t.write_bytes = meter.written;
        t.rss_peak = meter.rss_peak;
        let copies = f64::from(t.setting.concurrency.max(1));
        if t.end == TrialEnd::Ok && t.secs > 0.0 {
            t.throughput = match &self.spec.unit {
                Unit::Pattern { .. } => {
                    let rates: Option<Vec<f64>> = logs.iter().map(|w| w.rate).collect();
                    rates.map(|r| r.iter().sum())
                }
                Unit::Items { expr } => super::spec::items(expr, &t.setting.values).map(|n| n * copies / t.secs),
                Unit::RunsPerHour => Some(copies * 3600.0 / t.secs),
            };
        }
        // The bottleneck rules judge a window of samples; a trial of a few seconds is too short
        // for them (a busy neighbour on the host reads as this job's starvation).
        let top = (t.secs >= MIN_RULE_SECS)
            .then(|| verdicts.iter().find(|v| v.severity >= Verdict::Warn).map(|v| v.title.clone()))
            .flatten();
        t.verdict = verdict(t, self.cpus, top);
    }
}

/// A GPU's mean utilization and memory bandwidth while the trial held its memory (at least half
/// of its rise over `before`), so a job's start-up and teardown do not dilute its working speed;
/// None when its memory did not rise.
fn steady_means(sampler: &Sampler, gpu: u32, before: u64, t0: f64, t1: f64) -> Option<(Option<f64>, Option<f64>)> {
    use crate::telemetry::history::keys::{self, GpuMetric};
    sampler.with_history(|h| {
        let vram = h.points(&keys::gpu(gpu, GpuMetric::VramUsed), t0, t1, 100_000);
        let peak = vram.iter().map(|p| p[1]).fold(0.0, f64::max);
        let rise = peak - before as f64;
        if rise < 64.0 * 1024.0 * 1024.0 {
            return None;
        }
        let loaded = |t: f64| {
            vram.iter()
                .min_by(|a, b| (a[0] - t).abs().total_cmp(&(b[0] - t).abs()))
                .is_some_and(|p| p[1] >= before as f64 + rise / 2.0)
        };
        let mean = |m: GpuMetric| {
            let v: Vec<f64> =
                h.points(&keys::gpu(gpu, m), t0, t1, 100_000).iter().filter(|p| loaded(p[0])).map(|p| p[1]).collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        };
        Some((mean(GpuMetric::Util), mean(GpuMetric::MemBw)))
    })
}

/// What limited the trial, in one sentence.
pub fn verdict(t: &Trial, cpus: u32, bottleneck: Option<Message>) -> Message {
    match &t.end {
        TrialEnd::OutOfMemory { oom } => {
            return msg!("the GPU ran out of memory ({framework} said so)", framework = oom.framework.clone());
        }
        TrialEnd::OverCap { used } => {
            return msg!("GPU memory in use reached {used}, over your cap: stopped", used = units::bytes(*used));
        }
        TrialEnd::Failed { code: 137, .. } => {
            return msg!(
                "killed (signal 9): often the kernel's out-of-memory killer (host RAM, not the GPU); see the kernel log"
            );
        }
        TrialEnd::Failed { code, last_line } => {
            return msg!("the command failed (exit {code}): {line}", code = *code, line = last_line.clone());
        }
        TrialEnd::TimedOut => return msg!("stopped at the time limit"),
        TrialEnd::NotStarted { error } => return error.clone(),
        TrialEnd::Interrupted => return msg!("interrupted"),
        TrialEnd::Ok => {}
    }
    let cores = f64::from(cpus.max(1));
    if let Some(u) = t.util_mean.filter(|u| *u >= super::search::SATURATED_PCT) {
        return msg!("the GPU is saturated (utilization {util} %)", util = format!("{u:.0}"));
    }
    if t.cpu_mean_pct >= 85.0 * cores {
        return msg!(
            "the CPU is full ({cpu} % of {cores} cores): more workers cannot help",
            cpu = format!("{:.0}", t.cpu_mean_pct),
            cores = cpus
        );
    }
    if let Some(w) = t.setting.values.get(WORKERS).filter(|w| **w > 0) {
        let given = (*w as f64 + f64::from(t.setting.concurrency)).min(cores);
        if t.cpu_mean_pct >= 85.0 * given {
            return msg!(
                "workers are the limit now: the job uses the {cores} cores its workers give it",
                cores = format!("{given:.0}")
            );
        }
    }
    if let Some(title) = bottleneck {
        return title;
    }
    match t.util_mean {
        Some(u) => msg!(
            "the GPU is busy {util} % of the time: room for a larger batch, more copies or more workers",
            util = format!("{u:.0}")
        ),
        None => msg!("no GPU utilization figure (no NVIDIA driver answered)"),
    }
}
