//! `tune`'s processes under careless and hostile use (issue 53, items 1–4), with real processes:
//! what a trial starts ends with it (in the background, in a new session, double-forked) and
//! starts with no signal blocked; a second signal still leaves a whole journal and no survivor;
//! a stderr that went away does not crash the tuner; the end of a fast trial's output is read.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test reports a failure
#![cfg(target_os = "linux")]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const CLI: &str = env!("CARGO_BIN_EXE_gpu-doctor-cli");

/// The live processes whose whole command line is `needle` (`sleep 3041`: the program, not the
/// shell whose script names it).
fn alive_with(needle: &str) -> Vec<u32> {
    let me = std::process::id();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != me)
        .filter(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // A zombie has ended; only its parent has not collected it yet.
            let zombie = state.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z'));
            !zombie && String::from_utf8_lossy(&cmd).replace('\0', " ").trim_end() == needle
        })
        .collect()
}

fn kill_all(needles: &[String]) {
    for pid in needles.iter().flat_map(|n| alive_with(n)) {
        let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    }
}

/// A tune of `script` (run by sh, `{batch}` and `{out}` in it) on simulated GPU data, one trial.
fn tune(dir: &Path, script: &str, extra: &[&str]) -> Command {
    let mut c = Command::new(CLI);
    c.current_dir(dir)
        .env("GPU_DOCTOR_LANG", "en")
        .args(["tune", "--demo", "idle", "--interval", "0.25", "--max-trials", "1", "--trial-timeout", "60"])
        .args(["--rate-pattern", "([0-9.]+) it/s", "--journal"])
        .arg(dir.join("tune.jsonl"))
        .args(extra)
        .args(["--", "sh", "-c", script]);
    c
}

fn journal(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("tune.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("torn journal line {l}: {e}")))
        .collect()
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The signal mask of the first process whose command line holds `needle`.
fn blocked(needle: &str) -> String {
    let pid = alive_with(needle).first().copied().unwrap_or_default();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status.lines().find_map(|l| l.strip_prefix("SigBlk:")).unwrap_or("").trim().to_string()
}

#[test]
fn what_a_trial_starts_ends_with_it_and_starts_with_nothing_blocked() {
    let dir = tempfile::tempdir().unwrap();
    let tag = format!("4{}", std::process::id() % 100_000);
    // In the background, in a new session, and double-forked; then the copy itself waits a little
    // (so the children can be looked at) and exits as a trial does.
    let script = format!(
        "sleep 30{tag}1 & setsid sleep 30{tag}2 & (sleep 30{tag}3 &); \
         while [ ! -e {{out}}/go ]; do sleep 0.05; done; echo '{{batch}} it/s'"
    );
    let child = tune(dir.path(), &script, &[]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    wait_for("the trial's children", || (1..=3).all(|i| !alive_with(&format!("sleep 30{tag}{i}")).is_empty()));
    for i in 1..=3 {
        let mask = blocked(&format!("sleep 30{tag}{i}"));
        assert_eq!(mask, "0000000000000000", "sleep 30{tag}{i} starts with signals blocked");
    }
    let out_dir = std::fs::read_dir(dir.path().join("tune"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("copy-1"))
        .find(|p| p.is_dir())
        .unwrap();
    std::fs::write(out_dir.join("go"), "").unwrap();
    let out = child.wait_with_output().unwrap();
    let survivors: Vec<u32> = (1..=3).flat_map(|i| alive_with(&format!("sleep 30{tag}{i}"))).collect();
    kill_all(&(1..=3).map(|i| format!("sleep 30{tag}{i}")).collect::<Vec<_>>());
    assert_eq!(out.status.code(), Some(0));
    assert!(survivors.is_empty(), "processes of the trial outlived the tune: {survivors:?}");
    let lines = journal(dir.path());
    assert_eq!(lines.last().map(|l| l["type"].clone()), Some(Value::from("end")));
}

/// `timeout 4 tune …` signals the tuner, then its whole process group: the second signal must
/// not leave the trial running or the journal without its trial and end lines.
#[test]
fn a_second_signal_still_ends_the_trial_and_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let tag = format!("5{}", std::process::id() % 100_000);
    // A job that ignores SIGTERM, as some launchers do.
    let script = format!("trap '' TERM; echo '{{batch}} it/s'; exec sleep 30{tag}9");
    let child = tune(dir.path(), &script, &[]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    wait_for("the trial", || !alive_with(&format!("sleep 30{tag}9")).is_empty());
    let pid = child.id().to_string();
    let started = Instant::now();
    for _ in 0..2 {
        assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let took = started.elapsed();
    let survivors = alive_with(&format!("sleep 30{tag}9"));
    kill_all(&[format!("sleep 30{tag}9")]);
    assert!(survivors.is_empty(), "the trial outlived the tuner: {survivors:?}");
    assert!(took < Duration::from_secs(2), "a second signal waited out the grace period: {took:?}");
    assert_eq!(out.status.code(), Some(130), "an interrupted tune ends with 130");
    let kinds: Vec<String> = journal(dir.path()).iter().map(|l| l["type"].as_str().unwrap_or("").to_string()).collect();
    assert_eq!(kinds, ["start", "trial", "end"]);
}

/// The window closed, `2>&1 | head`, an SSH session dropped: stderr is gone, the tune goes on.
#[test]
fn a_stderr_that_went_away_does_not_crash_the_tune() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = tune(dir.path(), "echo '{batch} it/s'", &[]);
    let mut child = c.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "the tuner did not end normally with no stderr");
    let lines = journal(dir.path());
    assert_eq!(lines.last().map(|l| l["type"].clone()), Some(Value::from("end")));
}

/// A trial that writes faster than one look reads: its last rate and an out-of-memory line at the
/// very end are read.
#[test]
fn the_end_of_a_fast_trials_output_is_read() {
    let dir = tempfile::tempdir().unwrap();
    // About 40 MB of progress, then the final rate.
    let fast = ": {batch}; yes '1.0 it/s' | head -c 40000000; echo; echo '999 it/s'";
    let out = tune(dir.path(), fast, &["--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["trials"][0]["throughput"], 999.0, "{:#}", v["trials"][0]);
    // An out-of-memory message after the flood is an out-of-memory trial, not a plain failure.
    let dir = tempfile::tempdir().unwrap();
    let oom = ": {batch}; yes 'step' | head -c 40000000; echo; \
               echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB'; exit 1";
    let out = tune(dir.path(), oom, &["--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(v["trials"][0]["end"]["kind"], "out-of-memory", "{:#}", v["trials"][0]);
}

/// A journal is a file anyone can edit, and two `--resume`s can be started by mistake: the values
/// read back are held to the command line's bounds, and a journal being extended is held.
#[test]
fn a_resumed_journal_is_checked_and_held() {
    let dir = tempfile::tempdir().unwrap();
    let out = tune(dir.path(), "echo '{batch} it/s'", &[]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let path = dir.path().join("tune.jsonl");
    let resume = || {
        Command::new(CLI)
            .current_dir(dir.path())
            .env("GPU_DOCTOR_LANG", "en")
            .args(["tune", "--demo", "idle", "--resume"])
            .arg(&path)
            .output()
            .unwrap()
    };
    // Held: another tune is going on with it.
    {
        let held = std::fs::OpenOptions::new().read(true).open(&path).unwrap();
        held.lock().unwrap();
        let out = resume();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("another gpu-doctor tune is going on with"), "{err}");
    }
    // Tampered: a time limit no trial could ever reach, a parameter named like a path.
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    for (field, value, want) in [
        ("trial_timeout_secs", serde_json::json!(1e300), "--trial-timeout"),
        ("concurrency", serde_json::json!({"lo": 1, "hi": 1_000_000_000_000_000u64}), "--concurrency"),
    ] {
        let mut changed = lines.clone();
        changed[0]["spec"][field] = value;
        let body: Vec<String> = changed.iter().map(|l| l.to_string()).collect();
        std::fs::write(&path, body.join("\n") + "\n").unwrap();
        let out = resume();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{field}: {err}");
        assert!(err.contains(want), "{field}: {err}");
    }
    lines[0]["spec"]["params"][0]["name"] = Value::from("../../../../tmp/x");
    let body: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(&path, body.join("\n") + "\n").unwrap();
    let out = resume();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no placeholder name"));
}

/// Issue 53, item 12: resuming a tune that had finished shows its answer and writes no second end.
#[test]
fn resuming_a_finished_tune_writes_no_second_end() {
    let dir = tempfile::tempdir().unwrap();
    let out = tune(dir.path(), "echo '{batch} it/s'", &[]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let before = std::fs::read_to_string(dir.path().join("tune.jsonl")).unwrap();
    let out = Command::new(CLI)
        .current_dir(dir.path())
        .env("GPU_DOCTOR_LANG", "en")
        .args(["tune", "--demo", "idle", "--resume"])
        .arg(dir.path().join("tune.jsonl"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Use batch 1"), "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(std::fs::read_to_string(dir.path().join("tune.jsonl")).unwrap(), before);
}
