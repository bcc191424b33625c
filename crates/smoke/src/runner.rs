//! The parent side of the smoke test: starts the child (`<program> smoke-child --spec JSON`),
//! reads its JSON lines, kills it when it sends nothing for too long or the user cancels, and
//! turns whatever happened (a crash and a hang included) into a [`SmokeReport`].

use crate::i18n::Message;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::{BurnTick, ChildEnd, DeviceInfo, Msg, Options, SmokeReport, Stage, StageResult};
use crate::verdict::Verdict;

/// The hidden subcommand both binaries run the child with.
pub const CHILD_SUBCOMMAND: &str = "smoke-child";

/// How long the child may send nothing before it counts as hung. Stages report as they end and
/// the burn reports every second; the slowest stage on a healthy machine (cuInit with many GPUs
/// and persistence mode off) takes a few seconds.
pub const DEFAULT_STALL: Duration = Duration::from_secs(30);

/// Which program runs the child.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launcher {
    /// The executable.
    pub program: PathBuf,
    /// Arguments before `--spec JSON`.
    pub args: Vec<String>,
}

impl Launcher {
    /// This very program (either binary understands the child subcommand).
    pub fn this_program() -> Launcher {
        let program = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("gpu-doctor-cli"));
        Launcher::new(program)
    }

    /// Another gpu-doctor binary (tests use `gpu-doctor-cli`).
    pub fn new(program: impl Into<PathBuf>) -> Launcher {
        Launcher { program: program.into(), args: vec![CHILD_SUBCOMMAND.to_string()] }
    }
}

/// What is known so far, for live display.
#[derive(Clone, Debug, Default)]
pub struct Progress {
    /// Stages that ended, in order.
    pub stages: Vec<StageResult>,
    /// The stage running now, and since when.
    pub running: Option<(Stage, Instant)>,
    /// GPUs CUDA listed.
    pub devices: Vec<DeviceInfo>,
    /// Burn ticks so far.
    pub burn: Vec<BurnTick>,
    /// The driver library loaded.
    pub library: Option<String>,
    /// The driver's CUDA version.
    pub driver_cuda: Option<String>,
    /// The child said Done.
    pub done: bool,
    /// The child's process id.
    pub pid: Option<u32>,
}

impl Progress {
    fn apply(&mut self, msg: &Msg) {
        match msg {
            Msg::Hello { pid, .. } => self.pid = Some(*pid),
            Msg::Start { stage } => self.running = Some((*stage, Instant::now())),
            Msg::End { result } => {
                self.running = None;
                self.stages.push(result.clone());
            }
            Msg::Driver { library, cuda } => {
                if library.is_some() {
                    self.library.clone_from(library);
                }
                if cuda.is_some() {
                    self.driver_cuda.clone_from(cuda);
                }
            }
            Msg::Devices { devices } => self.devices.clone_from(devices),
            Msg::Burn { tick } => self.burn.push(tick.clone()),
            Msg::Done => self.done = true,
        }
    }
}

/// Runs the smoke test in a child process and waits for it. `on_update` is called after every
/// message with the progress so far; `cancel` set to true kills the child.
pub fn run(
    launcher: &Launcher,
    opts: &Options,
    stall: Duration,
    cancel: &AtomicBool,
    on_update: &mut dyn FnMut(&Progress, &Msg),
) -> SmokeReport {
    let t0 = Instant::now();
    let mut progress = Progress::default();
    let end = supervise(launcher, opts, stall, cancel, &mut progress, on_update);
    build_report(opts, progress, end, t0.elapsed().as_secs_f64() * 1000.0)
}

fn supervise(
    launcher: &Launcher,
    opts: &Options,
    stall: Duration,
    cancel: &AtomicBool,
    progress: &mut Progress,
    on_update: &mut dyn FnMut(&Progress, &Msg),
) -> ChildEnd {
    let spec = match serde_json::to_string(opts) {
        Ok(s) => s,
        Err(e) => return ChildEnd::SpawnFailed { error: Message::data(e.to_string()) },
    };
    let mut cmd = Command::new(&launcher.program);
    // A burn must not go on after the program that asked for it was killed.
    crate::telemetry::libprobe::tie_to_this_process(&mut cmd);
    cmd.args(&launcher.args).arg("--spec").arg(spec).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // The child's texts (stage summaries, next steps) in English, like the rest of the report:
    // what shows it puts it into the reader's language (`SmokeReport::localized`), so a report
    // reads the same after a switch of language, and its JSON is the same on every machine.
    cmd.env(crate::i18n::LANG_ENV, crate::i18n::Lang::En.code());
    #[cfg(unix)]
    if let Some(dir) = opts.cuda_lib.as_ref().and_then(|p| p.parent()).filter(|d| !d.as_os_str().is_empty()) {
        // The loader searches LD_LIBRARY_PATH first, so every name cudarc tries finds the chosen
        // library's directory before the system's.
        let mut path = std::ffi::OsString::from(dir);
        if let Some(old) = std::env::var_os("LD_LIBRARY_PATH").filter(|o| !o.is_empty()) {
            path.push(":");
            path.push(old);
        }
        cmd.env("LD_LIBRARY_PATH", path);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return ChildEnd::SpawnFailed {
                error: crate::msg!(
                    "could not start {program}: {error}",
                    program = launcher.program.display(),
                    error = e
                ),
            };
        }
    };
    let (tx, rx) = mpsc::channel::<Msg>();
    if let Some(out) = child.stdout.take() {
        std::thread::Builder::new()
            .name("gd-smoke-read".into())
            .spawn(move || {
                for line in BufReader::new(out).lines() {
                    let Ok(line) = line else { break };
                    // Anything else on stdout (a library printing) is not ours: skip it.
                    if let Ok(msg) = serde_json::from_str::<Msg>(&line)
                        && tx.send(msg).is_err()
                    {
                        break;
                    }
                }
            })
            .ok();
    }
    let stderr = child.stderr.take().and_then(|mut err| {
        std::thread::Builder::new()
            .name("gd-smoke-stderr".into())
            .spawn(move || {
                let mut buf = Vec::new();
                let _ = err.read_to_end(&mut buf);
                let text = String::from_utf8_lossy(&buf);
                let tail: Vec<&str> = text.lines().rev().take(12).collect();
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            })
            .ok()
    });
    let mut last = Instant::now();
    let end = loop {
        if cancel.load(Ordering::Relaxed) {
            let _ = child.kill();
            let _ = child.wait();
            break ChildEnd::Cancelled;
        }
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(msg) => {
                last = Instant::now();
                progress.apply(&msg);
                on_update(progress, &msg);
            }
            Err(RecvTimeoutError::Timeout) => {
                if last.elapsed() >= stall {
                    let _ = child.kill();
                    let _ = child.wait();
                    break ChildEnd::NotResponding { secs: stall.as_secs_f64() };
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                // stdout closed: the child is exiting (or closed it and hangs; give it a moment).
                let deadline = Instant::now() + Duration::from_secs(5);
                let status = loop {
                    match child.try_wait() {
                        Ok(Some(s)) => break Some(s),
                        Ok(None) if Instant::now() < deadline && !cancel.load(Ordering::Relaxed) => {
                            std::thread::sleep(Duration::from_millis(20));
                        }
                        _ => {
                            let _ = child.kill();
                            break child.wait().ok();
                        }
                    }
                };
                let code = status.and_then(|s| s.code());
                #[cfg(unix)]
                let signal = status.and_then(|s| std::os::unix::process::ExitStatusExt::signal(&s));
                #[cfg(not(unix))]
                let signal = None;
                break if progress.done && matches!(code, Some(0 | 1)) {
                    ChildEnd::Finished
                } else {
                    ChildEnd::Crashed { code, signal, stderr: String::new() }
                };
            }
        }
    };
    match end {
        ChildEnd::Crashed { code, signal, .. } => {
            let stderr = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
            ChildEnd::Crashed { code, signal, stderr }
        }
        other => other,
    }
}

/// Assembles the report: every planned stage in order, the one that was running when the child
/// died or hung marked failed, the rest skipped; the overall verdict and next step.
pub fn build_report(opts: &Options, progress: Progress, end: ChildEnd, total_ms: f64) -> SmokeReport {
    let plan = Stage::plan(opts.burn_secs > 0);
    let mut stages = progress.stages.clone();
    let interrupted = progress.running.map(|(s, since)| (s, since.elapsed().as_secs_f64() * 1000.0));
    let abnormal = match &end {
        ChildEnd::Finished => None,
        ChildEnd::Crashed { code, signal, stderr } => {
            let how = match (signal, code) {
                (Some(s), _) => crate::msg!("killed by signal {signal} ({name})", signal = s, name = signal_name(*s)),
                (None, Some(c)) => exit_code_text(*c),
                (None, None) => crate::msg!("ended without an exit status"),
            };
            let mut r = StageResult::skipped(Stage::Load, crate::msg!("the test process crashed: {how}", how = how));
            r.verdict = Verdict::Fail;
            r.error = Some("CRASHED".to_string());
            r.next_step =
                Some(crate::i18n::Message::new(if *signal == Some(9) { OOM_KILL_ADVICE } else { CRASH_ADVICE }));
            r.details = stderr
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| Message::data(format!("stderr: {l}")))
                .collect();
            Some(r)
        }
        ChildEnd::NotResponding { secs } => {
            let mut r = StageResult::skipped(
                Stage::Load,
                crate::msg!(
                    "no answer for {secs} s: the driver or the GPU hung; the test process was killed",
                    secs = format!("{secs:.0}")
                ),
            );
            r.verdict = Verdict::Fail;
            r.error = Some("NOT_RESPONDING".to_string());
            r.next_step = Some(crate::i18n::Message::new(HANG_ADVICE));
            Some(r)
        }
        ChildEnd::Cancelled => Some(StageResult::skipped(Stage::Load, crate::msg!("cancelled"))),
        ChildEnd::SpawnFailed { error } => {
            let mut r = StageResult::skipped(Stage::Load, error.clone());
            r.verdict = Verdict::Fail;
            r.error = Some("SPAWN_FAILED".to_string());
            r.next_step = Some(crate::msg!(
                "gpu-doctor could not start its own program to run the test; reinstall gpu-doctor, or run gpu-doctor-cli smoke from a terminal."
            ));
            Some(r)
        }
    };
    if let Some(mut r) = abnormal {
        // Blame the stage that was running, else the one after the last that ended.
        let next_planned = plan.iter().copied().find(|s| !stages.iter().any(|d| d.stage == *s));
        match (interrupted, next_planned) {
            (Some((s, ms)), _) => {
                r.stage = s;
                r.ms = ms;
                stages.push(r);
            }
            (None, Some(s)) => {
                r.stage = s;
                stages.push(r);
            }
            (None, None) => {}
        }
    }
    let stop_reason = stages
        .iter()
        .find(|r| r.verdict == Verdict::Fail)
        .map(|r| r.stage)
        .or_else(|| matches!(end, ChildEnd::Cancelled).then(|| stages.last().map(|r| r.stage)).flatten());
    for s in &plan {
        if !stages.iter().any(|r| r.stage == *s) {
            let why = match (&end, stop_reason) {
                (ChildEnd::Cancelled, _) => crate::msg!("not run: cancelled"),
                (_, Some(f)) => crate::msg!("not run: '{stage}' failed", stage = f.title()),
                _ => crate::msg!("not run"),
            };
            stages.push(StageResult::skipped(*s, why));
        }
    }
    stages.sort_by_key(|r| plan.iter().position(|s| *s == r.stage).unwrap_or(usize::MAX));
    let worst = stages.iter().map(|r| r.verdict).max().unwrap_or(Verdict::Skipped);
    let (verdict, summary, next_step) = if matches!(end, ChildEnd::Cancelled) {
        let text = match stop_reason {
            Some(s) => crate::msg!("cancelled during '{stage}'; nothing was concluded", stage = s.title()),
            None => crate::msg!("cancelled; nothing was concluded"),
        };
        (Verdict::Skipped, text, None)
    } else if worst == Verdict::Fail {
        let f = stages.iter().find(|r| r.verdict == Verdict::Fail);
        let text = f
            .map(|r| crate::msg!("failed at '{stage}': {summary}", stage = r.stage.title(), summary = r.summary))
            .unwrap_or_default();
        (Verdict::Fail, text, f.and_then(|r| r.next_step.clone()))
    } else if worst == Verdict::Warn {
        let w = stages.iter().find(|r| r.verdict == Verdict::Warn);
        let text = crate::msg!(
            "the GPU computes correct results, but {summary}",
            summary = w.map(|r| r.summary.clone()).unwrap_or_default()
        );
        (Verdict::Warn, text, w.and_then(|r| r.next_step.clone()))
    } else {
        (Verdict::Pass, crate::msg!("the GPU computes correct results; copies and kernels work"), None)
    };
    SmokeReport {
        version: env!("CARGO_PKG_VERSION").to_string(),
        options: opts.clone(),
        library: progress.library,
        driver_cuda: progress.driver_cuda,
        devices: progress.devices,
        stages,
        burn: progress.burn,
        end,
        verdict,
        summary,
        next_step,
        total_ms,
        child_pid: progress.pid,
    }
}

/// "exited with code 3 before finishing"; Windows exception codes by name.
fn exit_code_text(code: i32) -> Message {
    let name = match code as u32 {
        0xC000_0005 => Some(crate::msg!("access violation")),
        0xC000_001D => Some(crate::msg!("illegal instruction")),
        0xC000_00FD => Some(crate::msg!("stack overflow")),
        0xC000_0409 => Some(crate::msg!("stack buffer overrun / fail-fast")),
        0xC000_0135 => Some(crate::msg!("a DLL was not found")),
        _ => None,
    };
    match name {
        Some(n) => {
            crate::msg!("ended with exception {code} ({name})", code = format!("0x{:08X}", code as u32), name = n)
        }
        None => crate::msg!("exited with code {code} before finishing", code = code),
    }
}

fn signal_name(s: i32) -> &'static str {
    match s {
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        15 => "SIGTERM",
        _ => "signal",
    }
}

// The next steps below are shown translated: crate::i18n::tr(..) where they are used.
const CRASH_ADVICE: &str = if cfg!(windows) {
    crate::tr_key!(
        "The driver library crashed the test process. This points at a broken or mismatched driver installation: reinstall the NVIDIA driver ('Perform a clean installation'), reboot, and look in Event Viewer (eventvwr.msc → Windows Logs → System) for nvlddmkm errors. The Checklist (gpu-doctor-cli check) compares the driver's parts."
    )
} else {
    crate::tr_key!(
        "The driver library crashed the test process. This points at a broken or mismatched driver installation: reinstall the NVIDIA driver, reboot, and look at the kernel log (sudo dmesg | grep -i -e nvrm -e xid). The Checklist (gpu-doctor-cli check) compares the driver's parts."
    )
};

const OOM_KILL_ADVICE: &str = crate::tr_key!(
    "Something killed the test process (SIGKILL), often the kernel's out-of-memory killer: check free host memory and the kernel log (sudo dmesg | grep -i -e oom -e killed)."
);

const HANG_ADVICE: &str = if cfg!(windows) {
    crate::tr_key!(
        "The driver or GPU stopped answering. Look in Event Viewer (eventvwr.msc → Windows Logs → System) for 'Display driver nvlddmkm stopped responding' and other nvlddmkm errors; processes holding the GPU show in nvidia-smi. A reboot usually clears it; if it repeats, check cooling, power and seating."
    )
} else {
    crate::tr_key!(
        "The driver or GPU stopped answering. Look for Xid errors in the kernel log (sudo dmesg | grep -i xid); processes stuck on the GPU show in nvidia-smi. A GPU reset (sudo nvidia-smi -r, with nothing running on it) or a reboot usually clears it; if it repeats, check cooling, power and seating."
    )
};

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(stage: Stage, verdict: Verdict) -> StageResult {
        let mut r = StageResult::skipped(stage, "x");
        r.verdict = verdict;
        r
    }

    #[test]
    fn a_hang_blames_the_running_stage_and_skips_the_rest() {
        let p = Progress {
            stages: vec![ended(Stage::Load, Verdict::Pass), ended(Stage::Init, Verdict::Pass)],
            running: Some((Stage::Devices, Instant::now())),
            ..Progress::default()
        };
        let r = build_report(&Options::default(), p, ChildEnd::NotResponding { secs: 3.0 }, 3000.0);
        assert_eq!(r.verdict, Verdict::Fail);
        assert_eq!(r.stages.len(), Stage::plan(false).len());
        let d = &r.stages[2];
        assert_eq!((d.stage, d.verdict, d.error.as_deref()), (Stage::Devices, Verdict::Fail, Some("NOT_RESPONDING")));
        assert!(
            r.stages[3..].iter().all(|s| s.verdict == Verdict::Skipped && s.summary.en().contains("Find the GPUs"))
        );
        assert!(r.summary.en().starts_with("failed at 'Find the GPUs'"), "{}", r.summary.en());
        assert!(r.next_step.unwrap_or_default().en().contains("Xid"));
    }

    #[test]
    fn a_crash_between_stages_blames_the_next_one() {
        let p = Progress { stages: vec![ended(Stage::Load, Verdict::Pass)], ..Progress::default() };
        let end = ChildEnd::Crashed { code: None, signal: Some(11), stderr: "boom".into() };
        let r = build_report(&Options { burn_secs: 5, ..Options::default() }, p, end, 10.0);
        assert_eq!(r.stages[1].stage, Stage::Init);
        assert!(r.stages[1].summary.en().contains("SIGSEGV"));
        assert_eq!(r.stages[1].details, [Message::data("stderr: boom")]);
        assert!(r.stages.iter().any(|s| s.stage == Stage::Burn));
    }

    #[test]
    fn windows_exception_codes_are_named() {
        assert_eq!(exit_code_text(0xC000_0005_u32 as i32).en(), "ended with exception 0xC0000005 (access violation)");
        assert_eq!(exit_code_text(3).en(), "exited with code 3 before finishing");
    }

    #[test]
    fn warnings_and_passes() {
        let mut stages: Vec<StageResult> = Stage::plan(false).into_iter().map(|s| ended(s, Verdict::Pass)).collect();
        let p = Progress { stages: stages.clone(), done: true, ..Progress::default() };
        let r = build_report(&Options::default(), p, ChildEnd::Finished, 1.0);
        assert_eq!(r.verdict, Verdict::Pass);
        stages[6].verdict = Verdict::Warn;
        stages[6].summary = "slow link".into();
        let p = Progress { stages, done: true, ..Progress::default() };
        let r = build_report(&Options::default(), p, ChildEnd::Finished, 1.0);
        assert_eq!(r.verdict, Verdict::Warn);
        assert!(r.summary.en().ends_with("slow link"));
    }

    #[test]
    fn cancel_is_not_a_verdict() {
        let p = Progress { running: Some((Stage::Burn, Instant::now())), ..Progress::default() };
        let r = build_report(&Options { burn_secs: 60, ..Options::default() }, p, ChildEnd::Cancelled, 1.0);
        assert_eq!(r.verdict, Verdict::Skipped);
        assert!(r.summary.en().contains("cancelled during 'Burn"), "{}", r.summary.en());
    }
}
