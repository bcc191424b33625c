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
    /// Set when the user insists (a second Ctrl-C, `timeout`'s second signal): the trial's
    /// processes get SIGKILL at once instead of a grace period, and the trial is still recorded.
    pub force: &'a AtomicBool,
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

/// Bytes read from a log at a time; a look reads chunks until the end of what is written (at
/// most [`LOOK_CAP`] while the trial runs, all of it once it has ended), so a fast trial's last
/// rate and an out-of-memory line after hundreds of MB of output are both read.
const READ_CHUNK: usize = 1 << 20;

/// The most read in one look while the trial runs (the rest on the next look): a look stays short
/// even behind a job writing faster than the disk can be read back.
const LOOK_CAP: u64 = 64 << 20;

impl LogWatch {
    fn new(path: PathBuf) -> Self {
        LogWatch { path, offset: 0, partial: String::new(), oom: None, rate: None, last_line: String::new() }
    }

    fn look(&mut self, pattern: Option<&Regex>, finished: bool) {
        let Ok(mut f) = File::open(&self.path) else { return };
        if f.seek(SeekFrom::Start(self.offset)).is_err() {
            return;
        }
        let mut read = 0u64;
        loop {
            let mut buf = Vec::with_capacity(READ_CHUNK);
            let got = f.by_ref().take(READ_CHUNK as u64).read_to_end(&mut buf).unwrap_or(0);
            self.offset += got as u64;
            read += got as u64;
            self.partial.push_str(&String::from_utf8_lossy(&buf));
            let more = got == READ_CHUNK && (finished || read < LOOK_CAP);
            if !more {
                self.lines(pattern, finished);
                return;
            }
            // Whole lines are read chunk by chunk; the end of the last one waits for the next.
            self.lines(pattern, false);
        }
    }

    /// The complete lines read so far (every line, the last one too, once `finished`).
    fn lines(&mut self, pattern: Option<&Regex>, finished: bool) {
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
        if let Some(v) = pattern.and_then(|re| crate::jobs::run::rate_in(line, re)) {
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
        .env("GPU_DOCTOR_COPY", copy.to_string())
        .env(MARK_ENV, mark_value(id));
    // Its own process group: a stop ends the copy and everything it started, and the terminal's
    // Ctrl-C reaches gpu-doctor, which records the trial before stopping it.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    // The copy starts as any program started from a shell does: nothing blocked, nothing ignored.
    // (gpu-doctor blocks SIGINT, SIGTERM and SIGHUP in its own threads to take them on one thread;
    // a mask is inherited through fork and exec, so without this a child the command puts in the
    // background could only be ended with SIGKILL.)
    #[cfg(target_os = "linux")]
    // SAFETY: the closure runs in the forked child before exec and calls only sigemptyset,
    // sigprocmask and signal, which are async-signal-safe; it allocates nothing and takes no lock.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT, libc::SIGPIPE] {
                libc::signal(sig, libc::SIG_DFL);
            }
            Ok(())
        });
    }
    cmd.spawn()
}

/// The environment entry every process of a trial inherits, so the ones that leave its process
/// groups can still be found and ended.
const MARK_ENV: &str = "GPU_DOCTOR_TRIAL_MARK";

/// The mark of trial `id` of this tuner (its pid and the trial's number: unique on the machine
/// while the tuner runs).
fn mark_value(id: u32) -> String {
    format!("{}-{id}", std::process::id())
}

/// How long a stopped trial's processes have between SIGTERM and SIGKILL.
#[cfg(target_os = "linux")]
const GRACE: Duration = Duration::from_secs(3);

/// Ends everything a trial started: each copy's process group (the copy, and what it started in
/// the background, even after the copy itself exited), and the processes that left their group
/// (`setsid`, a double fork) but still carry the trial's mark in their environment. SIGTERM
/// first; SIGKILL to what is left after [`GRACE`], at once when `now` is set (a second Ctrl-C).
fn stop_all(children: &mut [(Child, Option<std::process::ExitStatus>)], id: u32, now: &AtomicBool) {
    #[cfg(target_os = "linux")]
    {
        let groups: Vec<libc::pid_t> =
            children.iter().filter_map(|(c, _)| libc::pid_t::try_from(c.id()).ok()).collect();
        let mark = format!("{MARK_ENV}={}", mark_value(id)).into_bytes();
        let signal_groups = |sig: libc::c_int| {
            for pid in &groups {
                // SAFETY: kill() only sends a signal; a negative pid names the copy's own group.
                unsafe { libc::kill(-pid, sig) };
            }
        };
        signal_groups(libc::SIGTERM);
        escapers::signal(&mark, libc::SIGTERM);
        let until = Instant::now() + GRACE;
        loop {
            for (c, status) in children.iter_mut() {
                if status.is_none() {
                    *status = c.try_wait().ok().flatten();
                }
            }
            // SAFETY: signal 0 only asks whether a process of the group is left.
            let left = groups.iter().any(|pid| unsafe { libc::kill(-pid, 0) } == 0) || escapers::any(&mark);
            if !left || Instant::now() >= until || now.load(Ordering::SeqCst) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        signal_groups(libc::SIGKILL);
        escapers::kill(&mark);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (id, now);
    for (c, status) in children.iter_mut() {
        if status.is_none() {
            let _ = c.kill();
            *status = c.wait().ok();
        }
    }
}

/// A Windows Job Object holding every process of one trial (the copies are put in it as they
/// start, and what they start joins it): ended as one, and closed with gpu-doctor's last handle
/// (`JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`), so nothing a trial started outlives it or the tuner.
/// Source: Microsoft's Job Objects documentation (CreateJobObjectW, SetInformationJobObject with
/// JobObjectExtendedLimitInformation, AssignProcessToJobObject, TerminateJobObject).
#[cfg(windows)]
mod winjob {
    use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
    use windows_sys::Win32::System::JobObjects::{
        AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
        JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation, SetInformationJobObject,
        TerminateJobObject,
    };

    /// One trial's Job Object.
    pub struct Job(HANDLE);

    impl Job {
        /// A new job whose processes end when it is closed; None where Windows refuses one.
        pub fn new() -> Option<Job> {
            // SAFETY: both pointers may be null (default security, no name); the handle returned
            // is owned by the Job and closed once in Drop.
            let h = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
            if h.is_null() {
                return None;
            }
            let mut info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
            info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
            // SAFETY: `info` is a valid JOBOBJECT_EXTENDED_LIMIT_INFORMATION of the size given,
            // and `h` a job handle just created.
            unsafe {
                SetInformationJobObject(
                    h,
                    JobObjectExtendedLimitInformation,
                    std::ptr::from_ref(&info).cast(),
                    u32::try_from(std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>()).unwrap_or(0),
                )
            };
            Some(Job(h))
        }

        /// Puts a started copy in the job (what it starts from now on joins it).
        pub fn add(&self, child: &std::process::Child) {
            use std::os::windows::io::AsRawHandle as _;
            // SAFETY: both handles are valid: the job's, and the child's while `child` lives.
            unsafe { AssignProcessToJobObject(self.0, child.as_raw_handle() as HANDLE) };
        }

        /// Ends every process in the job.
        pub fn end(&self) {
            // SAFETY: the job's own handle.
            unsafe { TerminateJobObject(self.0, 1) };
        }
    }

    impl Drop for Job {
        fn drop(&mut self) {
            // SAFETY: the handle is owned here and closed once.
            unsafe { CloseHandle(self.0) };
        }
    }
}

/// The processes of a trial that left its process groups: found by the mark every process the
/// trial starts inherits (`GPU_DOCTOR_TRIAL_MARK=<tuner pid>-<trial>` in its environment), among
/// the processes this user may read.
#[cfg(target_os = "linux")]
mod escapers {

    /// The processes whose environment holds `mark` as a whole entry (never this one).
    fn marked(mark: &[u8]) -> Vec<libc::pid_t> {
        let me = std::process::id();
        let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
        dir.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| *pid != me)
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|env| env.split(|b| *b == 0).any(|entry| entry == mark))
            })
            .filter_map(|pid| libc::pid_t::try_from(pid).ok())
            .collect()
    }

    /// Sends `sig` to every marked process.
    pub fn signal(mark: &[u8], sig: libc::c_int) {
        for pid in marked(mark) {
            // SAFETY: kill() only sends a signal to one process.
            unsafe { libc::kill(pid, sig) };
        }
    }

    /// True while a marked process is left (a zombie has no environment to read).
    pub fn any(mark: &[u8]) -> bool {
        !marked(mark).is_empty()
    }

    /// SIGKILL to every marked process, and those that ended as this process's children (it is
    /// their subreaper: [`super::become_subreaper`]) collected, so none is left a zombie.
    pub fn kill(mark: &[u8]) {
        let mut pids = marked(mark);
        for pid in &pids {
            // SAFETY: kill() only sends a signal to one process.
            unsafe { libc::kill(*pid, libc::SIGKILL) };
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        while !pids.is_empty() && std::time::Instant::now() < deadline {
            // SAFETY: waitpid on one pid with WNOHANG: it collects that process when it is this
            // one's child and has ended, and answers at once otherwise (ECHILD when it is not ours).
            pids.retain(|pid| unsafe { libc::waitpid(*pid, std::ptr::null_mut(), libc::WNOHANG) } == 0);
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// Makes this process the subreaper of what its trials start: a process that leaves its parent
/// (a double fork) becomes this one's child instead of init's, so it can be found, ended and
/// collected. Once per process, before the first trial.
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(PR_SET_CHILD_SUBREAPER) only sets a flag of this process.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
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
        let fast = super::peaks::FastPeaks::start(self.sampler.gpu_source());
        // Windows: every process of the trial in one Job Object, ended together (and with
        // gpu-doctor, should it end first).
        #[cfg(windows)]
        let job = winjob::Job::new();
        let t0 = self.sampler.now();
        let wall = Instant::now();
        for copy in 1..=copies {
            let out = dir.join(format!("copy-{copy}"));
            let log = dir.join(format!("copy-{copy}.log"));
            let args = setting.command(&self.spec.command, &out.to_string_lossy(), copy);
            let started = std::fs::create_dir_all(&out).and_then(|()| start(&args, &out, id, copy, &log));
            match started {
                Ok(child) => {
                    #[cfg(windows)]
                    if let Some(j) = &job {
                        j.add(&child);
                    }
                    children.push((child, None))
                }
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
            } else if let Some(used) = self.over_cap(fast.as_ref()) {
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
        #[cfg(windows)]
        if let Some(j) = &job {
            j.end();
        }
        stop_all(&mut children, id, self.force);
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
        let fast = fast.map(|f| f.peaks()).unwrap_or_default();
        self.figures(&mut trial, &meter, &baseline, &logs, (t0, t1), &fast);
        trial.tuner_cpu_secs = match (cpu_before, own_cpu_secs()) {
            (Some(a), Some(b)) => (b - a).max(0.0),
            _ => 0.0,
        };
        trial
    }

    /// The memory in use on a GPU when it is over the user's cap (the fast probe's peak counts).
    fn over_cap(&self, fast: Option<&super::peaks::FastPeaks>) -> Option<u64> {
        let cap = self.spec.vram_cap?;
        let probed = fast.map(|f| f.peaks().into_values().collect::<Vec<u64>>()).unwrap_or_default();
        let sampled = self.sampler.snapshot().gpus.iter().filter_map(|g| g.vram_used_bytes.get()).collect::<Vec<u64>>();
        sampled.into_iter().chain(probed).find(|u| *u > cap)
    }

    fn figures(
        &self,
        t: &mut Trial,
        meter: &TreeMeter,
        baseline: &[(u32, u64)],
        logs: &[LogWatch],
        (t0, t1): (f64, f64),
        fast: &std::collections::BTreeMap<u32, u64>,
    ) {
        let (mut gpus, verdicts) = gpu_figures(self.sampler, t0, t1);
        // A peak between two samples, caught by the fast probe, is the peak.
        for g in &mut gpus {
            if let Some(p) = fast.get(&g.gpu) {
                g.vram_peak_device = g.vram_peak_device.max(*p);
            }
        }
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

/// "The GPU is busy N % of the time", and what could use the rest: a larger batch only where
/// one still fits in its memory (`batch_fits`).
pub fn busy(util: f64, batch_fits: bool) -> Message {
    let util = format!("{util:.0}");
    if batch_fits {
        msg!("the GPU is busy {util} % of the time: room for a larger batch, more copies or more workers", util = util)
    } else {
        msg!(
            "the GPU is busy {util} % of the time, and a larger batch does not fit its memory: more copies or workers may use the rest",
            util = util
        )
    }
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
        Some(u) => busy(u, true),
        // Without a GPU figure, what can be said is the CPU: how many cores the job kept busy.
        None => msg!(
            "no GPU figure (no NVIDIA driver answered); the job kept {busy} of {cores} CPU cores busy",
            busy = format!("{:.1}", t.cpu_mean_pct / 100.0),
            cores = cpus
        ),
    }
}
