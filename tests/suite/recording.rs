//! Recordings: crash safety (a recording child killed with SIGKILL mid-write), damaged, garbage,
//! huge and future-version files, the CLI `record` / `replay`, and the round trip.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test reports a failure

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gpu_doctor::telemetry::demo::{DemoGpus, DemoHost, Scenario};
use gpu_doctor::telemetry::recording::{MAX_LINE, Recorder, Recording, RecordingError, to_csv};
use gpu_doctor::telemetry::sampler::{ReplayFile, Sampler};

const CLI: &str = env!("CARGO_BIN_EXE_gpu-doctor-cli");

fn demo_recording(path: &Path, ticks: u32) {
    let s = Sampler::manual(
        Arc::new(DemoGpus::new(Scenario::DataStarved, 2, 1)),
        Box::new(DemoHost::new(Scenario::DataStarved, 1)),
        Duration::from_secs(1),
    );
    s.step_slow(0.0);
    s.step_host(0.0);
    s.step_gpu(0.0);
    let mut r = Recorder::create(path, &s.snapshot()).unwrap();
    for t in 0..ticks {
        let t = f64::from(t);
        s.step_host(t);
        s.step_gpu(t);
        assert!(r.append(&s.snapshot()).unwrap_or(false));
        // The same tick is written once.
        assert!(!r.append(&s.snapshot()).unwrap_or(true));
    }
}

#[test]
fn round_trip_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.gdrec");
    demo_recording(&path, 10);
    let rec = Recording::open(&path).unwrap();
    assert_eq!(rec.records.len(), 10);
    assert_eq!(rec.skipped_lines, 0);
    assert_eq!(rec.header.inventory.gpus.len(), 2);
    assert!(rec.records.iter().all(|r| r.gpus.len() == 2 && r.host.is_some()));
    assert_eq!(rec.span_secs(), 9.0);
    let csv = to_csv(&rec);
    let mut lines = csv.lines();
    let header = lines.next().unwrap_or_default();
    assert!(header.starts_with("time_unix,time_utc,t_s,cpu_pct"));
    assert!(header.contains(",gpu1_util_pct,") && header.ends_with("gpu1_throttle_mask"));
    let cols = header.split(',').count();
    assert!(lines.clone().all(|l| l.split(',').count() == cols));
    assert_eq!(lines.count(), 10);
    // A recording is never overwritten.
    let before = std::fs::read(&path).unwrap_or_default();
    let s = Sampler::manual(
        Arc::new(DemoGpus::new(Scenario::Idle, 1, 1)),
        Box::new(DemoHost::new(Scenario::Idle, 1)),
        Duration::from_secs(1),
    );
    assert!(matches!(Recorder::create(&path, &s.snapshot()), Err(RecordingError::Exists(_))));
    assert_eq!(std::fs::read(&path).unwrap_or_default(), before);
}

#[test]
fn a_killed_recorder_leaves_a_readable_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("killed.gdrec");
    let mut child = Command::new(CLI)
        .args(["record", "--demo", "healthy-training", "--interval", "0.25", "--out"])
        .arg(&path)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while std::fs::read_to_string(&path).map(|s| s.lines().count()).unwrap_or(0) < 8 {
        assert!(t0.elapsed() < Duration::from_secs(30), "the recorder wrote nothing");
        std::thread::sleep(Duration::from_millis(50));
    }
    // SIGKILL: no chance to clean up.
    child.kill().unwrap();
    let killed_at =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0);
    let _ = child.wait();
    let rec = Recording::open(&path).unwrap();
    assert!(rec.records.len() >= 7, "{} records", rec.records.len());
    assert!(rec.skipped_lines <= 1);
    assert!(rec.records.windows(2).all(|w| w[1].t > w[0].t));
    let last = rec.header.started_unix + rec.records.last().map_or(0.0, |r| r.t);
    assert!(killed_at - last < 1.0, "the last second is missing: {:.2} s", killed_at - last);
    // A line torn in the middle (the kill landed inside a write) is skipped, the rest kept.
    let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(b"{\"t\": 99.0, \"host\": {\"cpu_pct\"").unwrap();
    drop(f);
    let torn = Recording::open(&path).unwrap();
    assert_eq!(torn.records, rec.records);
    assert_eq!(torn.skipped_lines, rec.skipped_lines + 1);
}

#[test]
fn damaged_and_foreign_files_give_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    let err = |p: &Path| Recording::open(p).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err(&write("empty", b"")).contains("empty"));
    assert!(err(&write("garbage", &[0xff, 0x00, 0x13, b'\n', 0x80])).contains("not a gpu-doctor recording"));
    assert!(err(&write("other.json", b"{\"format\": \"something-else\"}\n")).contains("not a gpu-doctor recording"));
    let future = write("future", b"{\"format\": \"gpu-doctor-recording\", \"version\": 99}\n");
    assert!(err(&future).contains("version 99 recording") && err(&future).contains("Update gpu-doctor"));
    assert!(err(&dir.path().join("missing")).contains("No such file"));
    // A huge line (no newline for longer than any sample can be) is skipped without reading it
    // into memory; good lines after it are kept.
    let good = dir.path().join("good");
    demo_recording(&good, 3);
    let text = std::fs::read_to_string(&good).unwrap_or_default();
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default();
    let mut huge = format!("{header}\n").into_bytes();
    huge.extend(std::iter::repeat_n(b'x', MAX_LINE + 1000));
    huge.push(b'\n');
    for l in lines {
        huge.extend_from_slice(l.as_bytes());
        huge.push(b'\n');
    }
    let rec = Recording::open(&write("huge", &huge)).unwrap();
    assert_eq!((rec.records.len(), rec.skipped_lines), (3, 1));
}

#[test]
fn cli_record_and_replay() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.gdrec");
    let o = Command::new(CLI)
        .args(["record", "--demo", "io-bound", "--interval", "0.25", "--duration", "1.5", "--out"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let replay = |args: &[&str]| Command::new(CLI).arg("replay").arg(&path).args(args).output().unwrap();
    let text = String::from_utf8_lossy(&replay(&[]).stdout).to_string();
    assert!(text.contains("Source: DEMO data: io-bound") && text.contains("GPU 0: Simulated"), "{text}");
    let csv = String::from_utf8_lossy(&replay(&["--csv"]).stdout).to_string();
    assert!(csv.lines().count() >= 5, "{csv}");
    let json = String::from_utf8_lossy(&replay(&["--json"]).stdout).to_string();
    assert!(json.lines().all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()));
    // Never overwritten; garbage is a clear error.
    let again =
        Command::new(CLI).args(["record", "--demo", "idle", "--duration", "1", "--out"]).arg(&path).output().unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
    let junk = dir.path().join("junk");
    std::fs::write(&junk, "hello\n").unwrap();
    let o = Command::new(CLI).arg("replay").arg(&junk).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not a gpu-doctor recording"));
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// The recording reader on arbitrary bytes after a valid header, and on damaged lines of a
        /// real recording: an error or a recording, never a panic.
        #[test]
        fn the_recording_reader_never_panics(
            body in proptest::collection::vec(any::<u8>(), 0..4096),
            lines in proptest::collection::vec("[ -~]{0,200}", 0..20),
        ) {
            let header = r#"{"format":"gpu-doctor-recording","version":1,"started_unix":1700000000.0,"interval_secs":1.0,"app_version":"0.1.0"}"#;
            let mut bytes = header.as_bytes().to_vec();
            bytes.push(b'\n');
            bytes.extend_from_slice(&body);
            let _ = Recording::read(std::io::Cursor::new(&bytes), Path::new("fuzz.rec"));
            let text = format!("{header}\n{}\n", lines.join("\n"));
            let _ = Recording::read(std::io::Cursor::new(text.as_bytes()), Path::new("fuzz.rec"));
            let _ = Recording::read(std::io::Cursor::new(body.as_slice()), Path::new("fuzz.rec"));
        }
    }
}

/// A recording of at least `bytes` (8 demo GPUs at 0.25 s), and its number of samples.
fn big_recording(dir: &Path, bytes: usize) -> (std::path::PathBuf, u64) {
    let small = dir.join("small.rec");
    let out = Command::new(CLI)
        .args(["record", "--demo", "healthy-training", "--gpus", "8", "--interval", "0.25", "--duration", "1", "--out"])
        .arg(&small)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&small).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().to_string();
    let sample: serde_json::Value = serde_json::from_str(lines.last().unwrap()).unwrap();
    let big = dir.join("big.rec");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&big).unwrap());
    writeln!(f, "{header}").unwrap();
    let mut n = 0u64;
    let mut size = 0usize;
    while size < bytes {
        let mut s = sample.clone();
        s["t"] = serde_json::json!(n as f64 * 0.25);
        s.as_object_mut().unwrap().remove("inventory");
        s.as_object_mut().unwrap().remove("source");
        let line = serde_json::to_string(&s).unwrap();
        size += line.len() + 1;
        writeln!(f, "{line}").unwrap();
        n += 1;
    }
    f.flush().unwrap();
    (big, n)
}

/// Set to a recording's path, [`replay_file_child`] opens it for the GUI's replay (the parent test
/// runs it in a child process with an address-space limit).
const CHILD_ENV: &str = "GPU_DOCTOR_TEST_REPLAY_CHILD";

#[test]
fn replay_file_child() {
    // Does nothing unless run by `the_guis_replay_opens_a_recording_larger_than_its_memory_limit`.
    let Some(path) = std::env::var_os(CHILD_ENV) else { return };
    let (sampler, file) = ReplayFile::open(Path::new(&path), |_, _| {}).unwrap();
    println!("samples {} span {:?}", file.len(), file.span());
    let (_, gpu) = file.at(1000.0);
    println!("gpus at 1000 s: {} of t {:?}", gpu.as_ref().map_or(0, |r| r.gpus.len()), gpu.map(|r| r.t));
    println!("last gpus {}", sampler.snapshot().gpus.len());
}

/// Issue 16, item 4 (GUI): the window's replay reads the file one sample at a time into its
/// bounded history and an index, under an address-space limit smaller than the file.
#[cfg(target_os = "linux")]
#[test]
fn the_guis_replay_opens_a_recording_larger_than_its_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let (big, n) = big_recording(dir.path(), 160 << 20);
    let me = std::env::current_exe().unwrap();
    // 144 MiB of address space for the whole test process: less than the 160 MB of samples.
    let cmd = format!(
        "ulimit -v 147456; exec '{}' --exact recording::replay_file_child --nocapture --test-threads 1",
        me.display()
    );
    let out = Command::new("bash").args(["-c", &cmd]).env(CHILD_ENV, &big).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let last = (n - 1) as f64 * 0.25;
    assert!(stdout.contains(&format!("samples {n} span Some((0.0, {last:?}))")), "{stdout}");
    assert!(stdout.contains("gpus at 1000 s: 8 of t Some(1000.0)"), "{stdout}");
    assert!(stdout.contains("last gpus 8"), "{stdout}");
}

#[test]
fn a_replay_file_answers_the_slider_and_exports_the_same_csv_as_a_whole_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.gdrec");
    demo_recording(&path, 300);
    // A torn last line, as after a kill.
    std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(b"{\"t\": 301, \"gp").unwrap();
    let whole = Recording::open(&path).unwrap();
    let mut seen = Vec::new();
    let (sampler, file) = ReplayFile::open(&path, |n, size| seen.push((n, size))).unwrap();
    assert_eq!(file.len(), whole.records.len());
    assert_eq!(file.skipped_lines, 1);
    assert_eq!(file.span(), Some((whole.records[0].t, whole.records.last().unwrap().t)));
    let size = std::fs::metadata(&path).unwrap().len();
    assert_eq!(seen.last(), Some(&(size, size)));
    // The slider: the last host and GPU samples at or before the position, read back from the file.
    for at in [0.0, 0.5, 17.0, 150.3, 299.0, 1e9] {
        let upto = whole.records.partition_point(|r| r.t <= at);
        let host = whole.records[..upto].iter().rev().find(|r| r.host.is_some()).cloned();
        let gpu = whole.records[..upto].iter().rev().find(|r| !r.gpus.is_empty()).cloned();
        assert_eq!(file.at(at), (host.clone(), gpu.clone()), "at {at}");
        // Asked again (the cache), the same.
        assert_eq!(file.at(at), (host, gpu), "at {at}, again");
    }
    assert_eq!(file.at(-1.0), (None, None));
    // The same history as a sampler filled from the whole recording.
    let from_whole = Sampler::from_recording(&whole, "r.gdrec");
    assert_eq!(sampler.snapshot().gpus, from_whole.snapshot().gpus);
    assert_eq!(sampler.snapshot().host, from_whole.snapshot().host);
    // The CSV export, streamed, is byte for byte the whole-file one.
    let mut csv = Vec::new();
    assert_eq!(file.write_csv(&mut csv).unwrap(), whole.records.len());
    assert_eq!(String::from_utf8(csv).unwrap(), to_csv(&whole));
}

/// Issue 16, item 4: `replay` streams: a recording far larger than the memory it may use is
/// replayed as text, JSON lines and CSV, with every sample, under an address-space limit that
/// loading the whole file would break.
#[cfg(target_os = "linux")]
#[test]
fn replay_streams_a_recording_larger_than_its_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let (big, n) = big_recording(dir.path(), 80 << 20);
    for (flag, expect_lines) in [("--csv", n + 1), ("--json", n + 1)] {
        // 72 MiB of address space: less than the 80 MB of samples would need all at once.
        let cmd = format!("ulimit -v 73728; exec {CLI} replay {} {flag} | wc -l", big.display());
        let out = Command::new("bash").args(["-c", &cmd]).output().unwrap();
        let count: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap_or(0);
        assert_eq!(count, expect_lines, "{flag}: {}", String::from_utf8_lossy(&out.stderr));
    }
}
