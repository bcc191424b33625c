//! `gpu-doctor-cli tune` against a real workload (tests/tune_workload/workload.c, built here)
//! whose memory and speed follow its parameters like training, reporting its GPU memory and load
//! through the fake NVML (vram_dir) and dying with PyTorch's out-of-memory message past the
//! device: in each shape the tuner must find the known optimum and stop for the right reason;
//! Ctrl-C leaves a whole journal and --resume finishes it; compare puts two runs side by side.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test reports a failure

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

use serde_json::Value;

use crate::common;

const CLI: &str = env!("CARGO_BIN_EXE_gpu-doctor-cli");

static BUILD: Mutex<()> = Mutex::new(());

/// The workload, built once per test binary.
fn workload() -> PathBuf {
    let _one = BUILD.lock().unwrap_or_else(|p| p.into_inner());
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tune-workload");
    let bin = dir.join("workload");
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/tune_workload/workload.c");
    let fresh = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if let (Some(b), Some(s)) = (fresh(&bin), fresh(&src))
        && b >= s
    {
        return bin;
    }
    std::fs::create_dir_all(&dir).unwrap();
    let tmp = dir.join(format!("workload.{}", std::process::id()));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let out = Command::new(&cc).args(["-O1", "-Wall", "-o"]).arg(&tmp).arg(&src).output().unwrap();
    assert!(out.status.success(), "building the workload failed:\n{}", String::from_utf8_lossy(&out.stderr));
    std::fs::rename(&tmp, &bin).unwrap();
    bin
}

/// One tuning lab: a private fake NVML with a 24 GiB GPU that reports the workload's memory, and
/// a folder for the journal.
struct Lab {
    _fake: tempfile::TempDir,
    lib: PathBuf,
    dir: tempfile::TempDir,
}

impl Lab {
    fn new() -> Lab {
        let dir = tempfile::tempdir().unwrap();
        let vram = dir.path().join("vram");
        std::fs::create_dir(&vram).unwrap();
        let (fake, lib) = common::private_fake(
            common::Fake::Current,
            &format!("gpus = 1\nvram_dir = {}\nvram_total_gib = 24\n", vram.display()),
        );
        Lab { _fake: fake, lib, dir }
    }

    fn journal(&self) -> PathBuf {
        self.dir.path().join("tune.jsonl")
    }

    fn command(&self, args: &[&str], command: &[&str]) -> Command {
        let mut c = Command::new(CLI);
        c.current_dir(self.dir.path())
            .env("FAKE_VRAM_DIR", self.dir.path().join("vram"))
            .env("GPU_DOCTOR_LANG", "en")
            .args(["tune", "--nvml-lib"])
            .arg(&self.lib)
            .args(["--interval", "0.25", "--rate-pattern", "([0-9.]+) it/s", "--journal"])
            .arg(self.journal())
            .args(args)
            .arg("--")
            .arg(workload())
            .args(command);
        c
    }

    /// Runs a tune with --json; returns the output and the JSON answer.
    fn tune(&self, args: &[&str], command: &[&str]) -> (Output, Value) {
        let out = self.command(&[args, &["--json"]].concat(), command).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let v: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{e}: {text}\n{}", String::from_utf8_lossy(&out.stderr)));
        (out, v)
    }
}

fn best(v: &Value) -> &Value {
    let id = &v["end"]["outcome"]["best"];
    v["trials"].as_array().unwrap().iter().find(|t| &t["id"] == id).unwrap_or_else(|| panic!("no best: {v:#}"))
}

fn stop(v: &Value, phase: usize) -> &Value {
    &v["end"]["outcome"]["phases"][phase]["stop"]
}

fn trials_where(v: &Value, end: &str) -> usize {
    v["trials"].as_array().unwrap().iter().filter(|t| t["end"]["kind"] == end).count()
}

#[test]
fn memory_limited_ends_at_the_largest_batch_within_the_headroom() {
    let lab = Lab::new();
    let (out, v) = lab.tune(&[], &["memory", "{batch}"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    // 1 GiB in use + 2 GiB + 0.4 GiB per item <= 80 % of 24 GiB  =>  batch 40.
    assert_eq!(best(&v)["setting"]["values"]["batch"], 40, "{err}");
    assert_eq!(stop(&v, 0)["kind"], "headroom", "{v:#}");
    assert_eq!(stop(&v, 0)["predicted"], true);
    assert_eq!(trials_where(&v, "ok"), v["trials"].as_array().unwrap().len(), "a trial that would not fit ran");
    let peak = best(&v)["device_peak"].as_u64().unwrap() as f64 / (1u64 << 30) as f64;
    assert!((peak - 19.0).abs() < 0.05, "peak {peak} GiB");
    assert_eq!(v["command"], format!("{} memory 40", workload().display()));
    // Each trial's output in its own folder, named by trial and setting.
    let trial = std::fs::read_dir(lab.dir.path().join("tune"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("t007-batch40-c1-"))
        .expect("trial 7's folder, named by trial, setting and time");
    let log = trial.join("copy-1.log");
    assert!(std::fs::read_to_string(&log).unwrap().contains("it/s"), "{}", log.display());
    // The journal is whole: a start line, a line per trial and the end.
    let text = std::fs::read_to_string(lab.journal()).unwrap();
    let kinds: Vec<String> =
        text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["type"].as_str().unwrap().to_string()).collect();
    assert_eq!(kinds.first().map(String::as_str), Some("start"));
    assert_eq!(kinds.last().map(String::as_str), Some("end"));
    assert_eq!(kinds.iter().filter(|k| *k == "trial").count(), 7);
}

#[test]
fn out_of_memory_is_recognised_bisected_and_not_retried() {
    let lab = Lab::new();
    let (out, v) = lab.tune(&[], &["fragment", "{batch}"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(best(&v)["setting"]["values"]["batch"], 19, "{v:#}");
    assert_eq!(stop(&v, 0), &serde_json::json!({"kind": "out-of-memory", "at": 20}));
    let ooms: Vec<&Value> =
        v["trials"].as_array().unwrap().iter().filter(|t| t["end"]["kind"] == "out-of-memory").collect();
    assert!(!ooms.is_empty());
    assert!(ooms.iter().all(|t| t["end"]["oom"]["framework"] == "PyTorch"));
    assert!(
        ooms.iter().all(|t| t["verdict"]["text"].as_str().unwrap_or("").contains("ran out of memory")),
        "{ooms:#?}"
    );
    let mut settings: Vec<String> = v["trials"].as_array().unwrap().iter().map(|t| t["setting"].to_string()).collect();
    let n = settings.len();
    settings.sort();
    settings.dedup();
    assert_eq!(settings.len(), n, "a setting ran twice");
}

#[test]
fn a_saturated_gpu_stops_the_batch_then_copies_help_until_flat() {
    let lab = Lab::new();
    let (out, v) = lab.tune(&["--concurrency", "1..8"], &["saturating", "{batch}"]);
    assert_eq!(out.status.code(), Some(0));
    let b = best(&v);
    assert_eq!(
        (b["setting"]["values"]["batch"].as_u64(), b["setting"]["concurrency"].as_u64()),
        (Some(32), Some(2)),
        "{v:#}"
    );
    assert_eq!(stop(&v, 0)["kind"], "flat");
    assert_eq!(stop(&v, 0)["saturated"], true);
    assert_eq!(stop(&v, 1)["kind"], "flat");
    assert_eq!(stop(&v, 1)["tried"], 4);
    assert!(b["verdict"]["text"].as_str().unwrap().contains("saturated"), "{b:#}");
    // The command to copy runs both copies at once.
    let cmd = v["command"].as_str().unwrap();
    assert!(cmd.ends_with("& wait") && cmd.matches("saturating 32 &").count() == 2, "{cmd}");
}

#[test]
fn workers_help_until_the_cpu_is_full() {
    let lab = Lab::new();
    let (out, v) = lab.tune(&["--param", "workers=0..16"], &["workers", "32", "{workers}"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(best(&v)["setting"]["values"]["workers"], 4, "{v:#}");
    assert_eq!(stop(&v, 0)["kind"], "flat");
    assert_eq!(stop(&v, 0)["tried"], 8);
    let tried: Vec<u64> =
        v["trials"].as_array().unwrap().iter().map(|t| t["setting"]["values"]["workers"].as_u64().unwrap()).collect();
    // 8 gains nothing over 4, within the margin: both are measured a second time to say so.
    assert_eq!(tried, [0, 1, 2, 4, 8, 4, 8]);
}

#[test]
fn a_flaky_failure_is_recorded_once_and_the_last_good_batch_kept() {
    let lab = Lab::new();
    let (out, v) = lab.tune(&[], &["flaky", "{batch}"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(best(&v)["setting"]["values"]["batch"], 8);
    assert_eq!(stop(&v, 0), &serde_json::json!({"kind": "failed", "at": 16}));
    let failed: Vec<&Value> = v["trials"].as_array().unwrap().iter().filter(|t| t["end"]["kind"] == "failed").collect();
    assert_eq!(failed.len(), 1, "a failure was retried");
    assert!(failed[0]["end"]["last_line"].as_str().unwrap().contains("illegal memory access"));
    // The text answer says why it stopped.
    let lab2 = Lab::new();
    let text = lab2.command(&[], &["flaky", "{batch}"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(stdout.contains("Use batch 8:"), "{stdout}");
    assert!(stdout.contains("batch 16 failed, not from lack of memory (not retried"), "{stdout}");
}

#[test]
fn the_time_limit_stops_a_trial_and_the_search() {
    let lab = Lab::new();
    let (out, v) = lab.tune(&["--trial-timeout", "2"], &["slow", "{batch}"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(best(&v)["setting"]["values"]["batch"], 4);
    assert_eq!(stop(&v, 0), &serde_json::json!({"kind": "timed-out", "at": 8}));
    let slow = v["trials"].as_array().unwrap().iter().find(|t| t["end"]["kind"] == "timed-out").unwrap();
    assert!(slow["secs"].as_f64().unwrap() < 6.0, "the trial was not stopped: {slow:#}");
    // Its process was ended: nothing holds the fake GPU any more.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let live = std::fs::read_dir(lab.dir.path().join("vram"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| Path::new(&format!("/proc/{pid}")).exists())
        .count();
    assert_eq!(live, 0);
}

#[test]
fn ctrl_c_leaves_a_whole_journal_and_resume_finishes_it() {
    let lab = Lab::new();
    let child = lab.command(&[], &["memory", "{batch}"]).stdout(std::process::Stdio::piped()).spawn().unwrap();
    // Wait until two trials are in the journal, then interrupt the third.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let n = std::fs::read_to_string(lab.journal()).unwrap_or_default().matches("\"type\":\"trial\"").count();
        if n >= 2 || std::time::Instant::now() > until {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let sent = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{stdout}");
    assert!(stdout.contains("continue with gpu-doctor-cli tune --resume"), "{stdout}");
    let text = std::fs::read_to_string(lab.journal()).unwrap();
    for line in text.lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("torn line {line}: {e}"));
    }
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "end");
    assert_eq!(last["interrupted"], true);
    // Resume: the same question, the trials kept, the same answer as an uninterrupted tune.
    let out = Command::new(CLI)
        .current_dir(lab.dir.path())
        .env("FAKE_VRAM_DIR", lab.dir.path().join("vram"))
        .args(["tune", "--nvml-lib"])
        .arg(&lab.lib)
        .args(["--interval", "0.25", "--json", "--resume"])
        .arg(lab.journal())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(best(&v)["setting"]["values"]["batch"], 40);
    let ok: Vec<u64> = v["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["end"]["kind"] == "ok")
        .map(|t| t["setting"]["values"]["batch"].as_u64().unwrap())
        .collect();
    assert_eq!(ok, [1, 2, 4, 8, 16, 32, 40], "a trial ran twice or was lost");
}

/// Issue 53, item 12: a tune stopped by its trial limit goes on with a larger one given to
/// --resume; the new limit is written to the journal and holds on the next resume.
#[test]
fn resume_takes_new_limits_and_the_journal_keeps_them() {
    let lab = Lab::new();
    let (out, v) = lab.tune(&["--max-trials", "3"], &["memory", "{batch}"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stop(&v, 0)["kind"], "trial-limit");
    let resume = |extra: &[&str]| {
        Command::new(CLI)
            .current_dir(lab.dir.path())
            .env("FAKE_VRAM_DIR", lab.dir.path().join("vram"))
            .env("GPU_DOCTOR_LANG", "en")
            .args(["tune", "--nvml-lib"])
            .arg(&lab.lib)
            .args(["--interval", "0.25", "--json", "--resume"])
            .arg(lab.journal())
            .args(extra)
            .output()
            .unwrap()
    };
    let out = resume(&["--max-trials", "30", "--margin", "4"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("--max-trials 3 → 30, --margin 5 → 4"), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(best(&v)["setting"]["values"]["batch"], 40, "the tune did not go on past its old limit");
    let text = std::fs::read_to_string(lab.journal()).unwrap();
    assert_eq!(text.matches("\"type\":\"limits\"").count(), 1, "{text}");
    // Read back, the journal has the new limits: a resume without them changes nothing.
    let out = resume(&[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("limits are"));
    let again = std::fs::read_to_string(lab.journal()).unwrap();
    assert_eq!(again, text, "a resume with nothing left to run wrote to the journal");
    // A limit out of bounds is refused with the journal untouched.
    let out = resume(&["--max-trials", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(lab.journal()).unwrap(), text);
}

/// Issue 53, item 11: a peak in the last 250 ms of a 3.4 s trial, between two samples at a 2 s
/// interval (7 times in 8 without the fast probe), is the trial's peak.
#[test]
fn a_short_peak_at_the_end_of_a_trial_is_measured() {
    let lab = Lab::new();
    let (out, v) = Command::new(CLI)
        .current_dir(lab.dir.path())
        .env("FAKE_VRAM_DIR", lab.dir.path().join("vram"))
        .env("GPU_DOCTOR_LANG", "en")
        .args(["tune", "--nvml-lib"])
        .arg(&lab.lib)
        .env("HOLD_MS", "3000")
        .args(["--interval", "2", "--rate-pattern", "([0-9.]+) it/s", "--param", "batch=10..10", "--json"])
        .args(["--journal"])
        .arg(lab.journal())
        .arg("--")
        .arg(workload())
        .args(["spike", "{batch}"])
        .output()
        .map(|o| {
            let v: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
            (o, v)
        })
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // 2 + 0.4 x 10 = 6 GiB, doubled for the last 250 ms: 12 GiB (and the fake's 1 GiB in use).
    let peak = best(&v)["device_peak"].as_u64().unwrap();
    assert!(peak >= 12 << 30, "the peak was missed: {:.1} GiB", peak as f64 / (1u64 << 30) as f64);
}

#[test]
fn bad_arguments_are_refused_before_anything_runs() {
    let lab = Lab::new();
    let cases: [(&[&str], &str); 4] = [
        (&["--", "true"], "nothing to tune"),
        (&["--param", "seed=1..4", "--", "train", "{batch}"], "--param seed: the command has no such placeholder"),
        (&["--", "train", "{lr}"], "the command has the placeholder {lr} but no --param lr=LO..HI"),
        (&["--rate-pattern", "([0-9", "--", "train", "{batch}"], "--rate-pattern"),
    ];
    for (args, want) in cases {
        let out =
            Command::new(CLI).current_dir(lab.dir.path()).args(["tune", "--demo", "idle"]).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    // An existing journal is never overwritten.
    std::fs::write(lab.journal(), "mine").unwrap();
    let out = lab.command(&[], &["memory", "{batch}"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(lab.journal()).unwrap(), "mine");
    // A file that is not a journal is refused by --resume with what it is.
    let out = Command::new(CLI).args(["tune", "--demo", "idle", "--resume"]).arg(lab.journal()).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a gpu-doctor tune journal"));
}

#[test]
fn compare_puts_two_runs_side_by_side_and_names_the_change() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, secs: &str| {
        let path = dir.path().join(name);
        let out = Command::new(CLI)
            .env("GPU_DOCTOR_CONFIG_DIR", dir.path())
            .args(["run", "--demo", "idle", "--quiet", "--interval", "0.25", "--json-out"])
            .arg(&path)
            .args(["--", "sleep", secs])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        path
    };
    let (a, b) = (run("a.json", "0.3"), run("b.json", "0.9"));
    let out = Command::new(CLI).env("GPU_DOCTOR_LANG", "en").arg("compare").arg(&a).arg(&b).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("One change: 0.3 → 0.9"), "{text}");
    let wall = text.lines().find(|l| l.starts_with("wall time")).unwrap();
    assert!(wall.contains("worse") && wall.contains('+'), "{wall}");
    let out = Command::new(CLI).args(["compare", "--json"]).arg(&a).arg(&b).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["rows"][1]["change_pct"].as_f64().unwrap() > 50.0, "{v:#}");
    // Not a run summary: says what is expected.
    std::fs::write(dir.path().join("x.json"), "{}").unwrap();
    let out = Command::new(CLI).arg("compare").arg(&a).arg(dir.path().join("x.json")).output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("is not a run summary (write one with gpu-doctor-cli run --json-out")
    );
}

/// Issue 53, item 12: run --rate-pattern keeps the rate the command printed (its output still
/// shown), and compare has a throughput row: a 30 % drop in samples/s is not "wall time +2 %".
#[test]
fn compare_shows_the_throughput_each_run_printed() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, rate: &str| {
        let path = dir.path().join(name);
        let out = Command::new(CLI)
            .env("GPU_DOCTOR_CONFIG_DIR", dir.path())
            .args([
                "run",
                "--demo",
                "idle",
                "--interval",
                "0.25",
                "--rate-pattern",
                "([0-9.]+) samples/s",
                "--json-out",
            ])
            .arg(&path)
            .args([
                "--",
                "sh",
                "-c",
                &format!("echo 'epoch 1: 5 samples/s'; printf 'step\\r{rate} samples/s\\n'; sleep 0.3"),
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        // The command's own output is passed through.
        assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("{rate} samples/s")));
        path
    };
    let (a, b) = (run("a.json", "100"), run("b.json", "70"));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
    assert_eq!(v["throughput"]["value"], 100.0, "the last match, after a \\r: {v:#}");
    let out = Command::new(CLI).env("GPU_DOCTOR_LANG", "en").arg("compare").arg(&a).arg(&b).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let row = text.lines().find(|l| l.starts_with("throughput")).unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains("100") && row.contains("70.0") && row.contains("-30 %") && row.contains("worse"), "{row}");
    // A pattern that does not compile is refused before anything runs.
    let out =
        Command::new(CLI).args(["run", "--demo", "idle", "--rate-pattern", "([0-9", "--", "true"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// The Tune tab, end to end: a tune started from the form (this program's own CLI in a child
/// process, on the fake GPU), its journal read back as it grows, the answer with the command to
/// copy, the charts' key and the table; then the same journal opened in Chinese.
#[cfg(feature = "gui")]
#[test]
fn the_tune_tab_starts_a_tune_and_shows_the_answer() {
    use egui_kittest::kittest::Queryable;
    use gpu_doctor::gui::{AppInit, DoctorApp, Tab};
    use gpu_doctor::telemetry::demo::{DemoGpus, DemoHost, Scenario};
    use gpu_doctor::telemetry::sampler::Sampler;

    let lab = Lab::new();
    let app = |lab_lib: PathBuf, dir: PathBuf| {
        let sampler = Sampler::manual(
            std::sync::Arc::new(DemoGpus::new(Scenario::Idle, 1, 3)),
            Box::new(DemoHost::new(Scenario::Idle, 3)),
            std::time::Duration::from_secs(1),
        );
        egui_kittest::Harness::builder().with_size(eframe::egui::vec2(1280.0, 900.0)).build_eframe(move |cc| {
            let mut i = AppInit::new(sampler);
            i.tab = Tab::Tune;
            i.smoke.launcher = gpu_doctor::smoke::runner::Launcher::new(CLI);
            i.source.nvml_lib = Some(lab_lib);
            let mut a = DoctorApp::new(cc, i);
            a.tune.journal_dir = dir;
            a
        })
    };
    let mut h = app(lab.lib.clone(), lab.dir.path().join("tunes"));
    h.step();
    // Nothing written yet: Start says what is missing, and nothing runs.
    h.get_by_label("Start tuning").click();
    h.step();
    h.step();
    h.get_by_label_contains("Write the command to tune");
    let command =
        format!("FAKE_VRAM_DIR={} {} memory {{batch}}", lab.dir.path().join("vram").display(), workload().display());
    h.state_mut().tune.command = command.clone();
    h.state_mut().tune.pattern = "([0-9.]+) it/s".into();
    h.step();
    h.get_by_label("Start tuning").click();
    h.step();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while h.state().tune.running() {
        assert!(std::time::Instant::now() < deadline, "timed out");
        std::thread::sleep(std::time::Duration::from_millis(100));
        h.step();
    }
    h.step();
    h.step();
    assert!(h.state().tune.error.is_none(), "{:?}", h.state().tune.error);
    h.get_by_label_contains("Use batch 40:");
    h.get_by_label_contains("batch: 40, because batch 41 would leave less GPU memory free");
    h.get_by_label("headroom limit 19.2 GiB");
    h.get_by_label("GPU memory 24.0 GiB");
    // The recommended command is the shell's line with the value in place, and Copy copies it.
    let want =
        format!("sh -c 'FAKE_VRAM_DIR={} {} memory 40'", lab.dir.path().join("vram").display(), workload().display());
    h.get_by_label(&want);
    h.get_by_label("Copy").click();
    h.step();
    let copied: Vec<String> = h
        .output()
        .platform_output
        .commands
        .iter()
        .filter_map(|c| match c {
            eframe::egui::OutputCommand::CopyText(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(copied, std::slice::from_ref(&want));
    // Seven trials in the table, the chosen one marked.
    h.get_by_label("7 *");
    let journal = std::fs::read_dir(lab.dir.path().join("tunes"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .unwrap();
    // The same journal, opened in Chinese.
    gpu_doctor::i18n::scoped(gpu_doctor::i18n::Lang::ZhCn, || {
        let mut h = app(lab.lib.clone(), lab.dir.path().join("tunes"));
        h.state_mut().tune.open(journal.clone());
        h.step();
        h.step();
        h.get_by_label_contains("建议使用 批次大小 40：");
        h.get_by_label("余量线 19.2 GiB");
        h.get_by_label(&want);
    });
    // After a restart the last tune is offered (issue 53, item 14), and opens with one click.
    let mut h = app(lab.lib.clone(), lab.dir.path().join("tunes"));
    h.state_mut().tune.find_last_tune();
    h.step();
    let name = journal.file_name().unwrap().to_string_lossy().into_owned();
    h.get_by_label(&format!("Open the last tune ({name})")).click();
    h.step();
    h.step();
    h.get_by_label_contains("Use batch 40:");
    // The charts' x axis is the parameter, and the journal's path is shown whole.
    h.get_by_label(&journal.display().to_string());
}

/// Issue 53, item 14: a journal of 80,000 trials opens in the Tune tab without drawing every
/// trial: the rows in view only, one point per value of the parameter in the charts, and frames
/// that do not grow with the journal (the time is printed for the notes, not asserted).
#[test]
fn a_journal_of_80000_trials_draws_only_what_is_in_view() {
    use egui_kittest::kittest::Queryable as _;
    use gpu_doctor::gui::{AppInit, DoctorApp, Tab};
    use gpu_doctor::telemetry::demo::{DemoGpus, DemoHost, Scenario};
    use gpu_doctor::telemetry::sampler::Sampler;
    let lab = Lab::new();
    let (out, _) = lab.tune(&["--max-trials", "3"], &["memory", "{batch}"]);
    assert_eq!(out.status.code(), Some(0));
    let text = std::fs::read_to_string(lab.journal()).unwrap();
    let start = text.lines().next().unwrap().to_string();
    let mut trial: Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    let mut big = start + "\n";
    for id in 1..=80_000u32 {
        trial["id"] = id.into();
        trial["setting"]["values"]["batch"] = (id % 5000 + 1).into();
        trial["throughput"] = (f64::from(id % 5000) + 1.0).into();
        big.push_str(&serde_json::to_string(&trial).unwrap());
        big.push('\n');
    }
    let path = lab.dir.path().join("big.jsonl");
    std::fs::write(&path, big).unwrap();
    let sampler = Sampler::manual(
        std::sync::Arc::new(DemoGpus::new(Scenario::Idle, 1, 3)),
        Box::new(DemoHost::new(Scenario::Idle, 3)),
        std::time::Duration::from_secs(1),
    );
    let mut h = egui_kittest::Harness::builder().with_size(eframe::egui::vec2(1280.0, 900.0)).build_eframe(move |cc| {
        let mut i = AppInit::new(sampler);
        i.tab = Tab::Tune;
        DoctorApp::new(cc, i)
    });
    let t0 = std::time::Instant::now();
    h.state_mut().tune.open(path);
    let read = t0.elapsed();
    h.step();
    let t1 = std::time::Instant::now();
    for _ in 0..5 {
        h.step();
    }
    let frame = t1.elapsed() / 5;
    eprintln!("80,000 trials: read and prepared in {read:?}; a frame takes {frame:?}");
    // Rows in view only: the 80,000th trial is not drawn, the first is.
    h.get_by_label("1");
    assert!(h.query_by_label("80000").is_none(), "every row is drawn");
}

#[test]
fn without_a_driver_the_batch_is_bounded_by_out_of_memory_and_says_so() {
    let lab = Lab::new();
    let out = Command::new(CLI)
        .current_dir(lab.dir.path())
        .env("FAKE_VRAM_DIR", lab.dir.path().join("vram"))
        .env("GPU_DOCTOR_LANG", "en")
        .args(["tune", "--nvml-lib", "/nonexistent/libnvidia-ml.so.1", "--interval", "0.25", "--json"])
        .args(["--rate-pattern", "([0-9.]+) it/s", "--journal"])
        .arg(lab.journal())
        .arg("--")
        .arg(workload())
        .args(["memory", "{batch}"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("no GPU memory figures: the batch is bounded by out-of-memory failures only"), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The workload dies past 23 GiB of its own: 2 + 0.4 x 52 fits, 53 does not. The answer keeps
    // a margin below 53 (50 at most), and a batch within the margin of a larger one's throughput.
    let ran_out: Vec<u64> = v["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["end"]["kind"] == "out-of-memory")
        .map(|t| t["setting"]["values"]["batch"].as_u64().unwrap())
        .collect();
    assert_eq!(ran_out.iter().min(), Some(&53), "{v:#}");
    let chosen = best(&v)["setting"]["values"]["batch"].as_u64().unwrap();
    assert!((40..=50).contains(&chosen), "{v:#}");
    // Without a GPU figure the row still says what it can: the CPU the job kept busy.
    let verdict = best(&v)["verdict"]["text"].as_str().unwrap();
    assert!(verdict.contains("no GPU figure") && verdict.contains("CPU cores busy"), "{v:#}");
}
