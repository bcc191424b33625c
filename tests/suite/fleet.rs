//! Issue 21, beyond one machine: the health-check hooks' contracts (`check --quick`, `--format
//! line`, `--exit-codes`), the textfile collector's file (`check --format prom --out`), and
//! `serve` scraped by a real Prometheus (Debian's `prometheus`, started here on loopback with a
//! generated configuration) over the fake NVML's eight GPUs.
//!
//! Without a `prometheus` binary the Prometheus test says so and passes, unless
//! `GPU_DOCTOR_REQUIRE_FLEET=1` (set by `.ci/run`, which installs it).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test reports a failure

use crate::common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use common::{Fake, fake_lib_dir, scenario};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn cli() -> Command {
    let mut c = Command::cargo_bin("gpu-doctor-cli").unwrap();
    c.env("GPU_DOCTOR_LANG", "en").timeout(Duration::from_secs(60));
    c
}

/// Every convention's exit code and its one status line, for a healthy machine, one with a
/// warning, one with a failure, and a capture that cannot be read.
#[test]
fn health_check_hooks_get_their_exit_codes_and_one_short_line() {
    let cases = [
        ("healthy-workstation", [0, 0, 0, 0], "OK"),
        ("pcie-link-downtrained", [6, 1, 0, 0], "WARN"),
        ("fallen-off-bus-without-xid", [7, 2, 1, 1], "FAIL"),
        ("no-such-capture", [1, 3, 2, 2], "UNKNOWN"),
    ];
    for (capture, codes, word) in cases {
        for (style, code) in ["default", "nagios", "npd", "slurm"].iter().zip(codes) {
            let out = cli()
                .args(["check", "--format", "line", "--exit-codes", style, "--from"])
                .arg(fixture(capture))
                .output()
                .unwrap();
            let stdout = text(&out.stdout);
            assert_eq!(out.status.code(), Some(code), "{capture} {style}: {stdout}{}", text(&out.stderr));
            assert_eq!(stdout.lines().count(), 1, "{capture} {style}: one line: {stdout:?}");
            let line = stdout.trim_end_matches('\n');
            assert!(line.len() <= 80, "{capture} {style}: {line}");
            let expect = match (*style, word) {
                ("nagios", "WARN") => "GPU-DOCTOR WARNING: ".to_string(),
                ("nagios", "FAIL") => "GPU-DOCTOR CRITICAL: ".to_string(),
                ("nagios", w) => format!("GPU-DOCTOR {w}: "),
                (_, w) => format!("{w}: "),
            };
            assert!(line.starts_with(&expect), "{capture} {style}: {line}");
        }
    }
    // The failure names the root cause by its check id, which a drain reason can be grepped for.
    let out = cli()
        .args(["check", "--format", "line", "--from"])
        .arg(fixture("fallen-off-bus-without-xid"))
        .output()
        .unwrap();
    assert!(text(&out.stdout).contains("RT-LOST") || text(&out.stdout).contains("RT-XID"), "{}", text(&out.stdout));
}

/// `--quick` leaves out the cuInit probe and the Python search, and says so in those checks: a
/// libcuda that crashes in cuInit fails the full check but does not reach the quick one.
#[cfg(target_os = "linux")]
#[test]
fn quick_check_leaves_out_the_cuinit_probe_and_the_python_search() {
    let dir = tempfile::tempdir().unwrap();
    common::c_library(dir.path(), "libcuda.so.1", "int cuInit(unsigned f) { *(volatile int *)0 = 1; return 0; }\n");
    let run = |quick: bool| {
        let mut c = cli();
        c.args(["check", "--json"]).env("LD_LIBRARY_PATH", dir.path());
        if quick {
            c.arg("--quick");
        }
        let out = c.output().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["checks"].as_array().unwrap().clone()
    };
    let find = |checks: &[serde_json::Value], id: &str| checks.iter().find(|c| c["id"] == id).unwrap().to_string();
    let full = run(false);
    assert!(find(&full, "CUDA-INIT").contains("crashed"), "{}", find(&full, "CUDA-INIT"));
    let quick = run(true);
    assert_eq!(quick.len(), full.len(), "the same checklist, some left out");
    for id in ["CUDA-INIT", "CUDA-04", "CUDA-07"] {
        let c = find(&quick, id);
        assert!(c.contains("not run by check --quick") && !c.contains("crashed"), "{id}: {c}");
    }
}

/// node_exporter's textfile collector: the file is written whole (a temporary file renamed), is
/// replaced by the next run, and a file gpu-doctor did not write is never overwritten.
#[test]
fn prom_textfile_is_replaced_atomically_and_never_clobbers_another_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gpu_doctor.prom");
    for _ in 0..2 {
        let out = cli()
            .args(["check", "--format", "prom", "--exit-codes", "slurm", "--out"])
            .arg(&file)
            .arg("--from")
            .arg(fixture("fallen-off-bus-without-xid"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        assert!(out.stdout.is_empty(), "the output went to the file");
    }
    let t = std::fs::read_to_string(&file).unwrap();
    assert!(t.contains(r#"gpu_doctor_check{check="HW-01",layer="hardware",verdict="pass""#), "{t}");
    assert!(t.contains(r#"gpu_doctor_root_cause{check=""#) && t.contains("gpu_doctor_checks_worst{"), "{t}");
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["gpu_doctor.prom"], "no temporary file left behind");

    let theirs = dir.path().join("node.prom");
    std::fs::write(&theirs, "node_custom 1\n").unwrap();
    let out = cli()
        .args(["check", "--format", "prom", "--out"])
        .arg(&theirs)
        .arg("--from")
        .arg(fixture("healthy-workstation"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("was not written by gpu-doctor-cli"), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "node_custom 1\n");
}

#[test]
fn serve_listens_beyond_loopback_only_when_asked() {
    let out = cli().args(["serve", "--demo", "idle", "--listen", "0.0.0.0:0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--allow-remote"), "{}", text(&out.stderr));
}

/// A free loopback port (bound, then released for the child to take).
fn free_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap()
}

/// `GET path` over HTTP/1.0: (status, body).
fn get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    let raw = text(&raw);
    let (head, body) = raw.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, body.to_string()))
}

/// Kills the child when the test ends, however it ends.
struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(addr: SocketAddr, extra: &[&str]) -> Kill {
    let bin = assert_cmd::cargo::cargo_bin("gpu-doctor-cli");
    // The fake NVML, and the fake libcuda for the smoke test's child.
    let cuda = common::fake_cuda_lib(false);
    let path = std::env::join_paths([fake_lib_dir(Fake::Current), cuda.parent().unwrap().to_path_buf()]).unwrap();
    let child = std::process::Command::new(bin)
        .args(["serve", "--listen", &addr.to_string(), "--window", "10", "--interval", "0.5"])
        .args(extra)
        .env("LD_LIBRARY_PATH", path)
        .env("FAKE_NVML_SCENARIO", scenario("eight-idle-gpus"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Kill(child)
}

/// Polls `f` every 250 ms until it gives a value or `secs` pass.
fn wait_for<T>(secs: u64, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let until = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < until {
        if let Some(v) = f() {
            return Some(v);
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    None
}

/// The exporter alone: dcgm-exporter's names for eight GPUs, verdicts, the checklist; no process
/// details unless asked.
#[test]
fn serve_exports_gpus_verdicts_and_checks_and_processes_only_when_asked() {
    let addr = free_port();
    let _s = serve(addr, &[]);
    let body = wait_for(60, || {
        get(addr, "/metrics")
            .filter(|(_, b)| b.contains("gpu_doctor_check{") && b.contains("gpu_doctor_bottleneck{"))
            .map(|r| r.1)
    })
    .expect("the exporter served GPU metrics, verdicts and the checklist within 60 s");
    let util = body.lines().filter(|l| l.starts_with("DCGM_FI_DEV_GPU_UTIL{")).count();
    assert_eq!(util, 8, "{body}");
    assert!(body.contains(r#"modelName="NVIDIA Fake Test GPU""#) && body.contains(r#"device="nvidia7""#), "{body}");
    assert!(body.contains("gpu_doctor_gpu_processes{") && !body.contains("gpu_doctor_process_vram_bytes"), "{body}");
    assert!(!body.contains("--listen"), "no command line in the metrics");
    assert!(body.trim_end().ends_with("# EOF"));
    assert_eq!(get(addr, "/other").map(|r| r.0), Some(404));

    let addr = free_port();
    let _s = serve(addr, &["--expose-processes", "--smoke-every", "300"]);
    let body = wait_for(30, || {
        get(addr, "/metrics").filter(|(_, b)| b.contains("gpu_doctor_process_vram_bytes{")).map(|r| r.1)
    })
    .expect("per-process series with --expose-processes");
    assert!(body.contains(r#"process="gpu-doctor-cli""#), "{body}");
    // With each process's share of the GPU and of the video engines (NVML's per-process samples:
    // the fake's second process decodes video at 25 %).
    let share = |metric: &str| {
        body.lines()
            .filter(|l| l.starts_with(metric))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .collect::<Vec<_>>()
    };
    let sm = share("gpu_doctor_process_sm_utilization_percent{");
    assert!(!sm.is_empty() && sm.iter().all(|v| (0.0..=100.0).contains(v)), "{body}");
    assert!(share("gpu_doctor_process_decoder_utilization_percent{").contains(&25.0), "{body}");
    // The smoke test ran once at start (over the fake libcuda) and its result is exported.
    let body = wait_for(60, || get(addr, "/metrics").filter(|(_, b)| b.contains("gpu_doctor_smoke_ok{")).map(|r| r.1))
        .expect("the smoke test's result with --smoke-every");
    assert!(body.contains("gpu_doctor_smoke_stage{"), "{body}");
    assert!(
        body.lines().any(|l| l.starts_with("gpu_doctor_smoke_ok{") && l.ends_with(" 1.0")),
        "passed on the fake libcuda: {body}"
    );
}

fn prometheus_binary() -> Option<PathBuf> {
    ["/usr/bin/prometheus", "/usr/local/bin/prometheus"].iter().map(PathBuf::from).find(|p| p.exists())
}

/// Asks Prometheus's HTTP API for `query`: the result vector, when there is one.
fn query(prom: SocketAddr, q: &str) -> Vec<serde_json::Value> {
    let enc: String = q
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"_-.".contains(&b) { (b as char).to_string() } else { format!("%{b:02X}") }
        })
        .collect();
    get(prom, &format!("/api/v1/query?query={enc}"))
        .and_then(|(_, body)| serde_json::from_str::<serde_json::Value>(&body).ok())
        .and_then(|v| v["data"]["result"].as_array().cloned())
        .unwrap_or_default()
}

#[test]
fn a_real_prometheus_scrapes_serve_and_answers_queries() {
    let Some(prometheus) = prometheus_binary() else {
        assert!(
            std::env::var_os("GPU_DOCTOR_REQUIRE_FLEET").is_none(),
            "GPU_DOCTOR_REQUIRE_FLEET is set but there is no prometheus binary (apt-get install prometheus)"
        );
        common::skip(
            "a_real_prometheus_scrapes_serve_and_answers_queries",
            "no prometheus binary here (apt-get install prometheus)",
        );
        return;
    };
    let exporter = free_port();
    let _s = serve(exporter, &[]);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: gpu-doctor\n    static_configs:\n      - targets: ['{exporter}']\n"
        ),
    )
    .unwrap();
    let web = free_port();
    let child = std::process::Command::new(prometheus)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!("--storage.tsdb.path={}", dir.path().join("data").display()))
        .arg(format!("--web.listen-address={web}"))
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.path().join("prometheus.log")).unwrap())
        .spawn()
        .unwrap();
    let _p = Kill(child);
    let log = |d: &Path| std::fs::read_to_string(d.join("prometheus.log")).unwrap_or_default();

    let up = wait_for(90, || query(web, r#"up{job="gpu-doctor"}"#).into_iter().find(|r| r["value"][1] == "1"));
    assert!(up.is_some(), "Prometheus scraped the exporter: {}", log(dir.path()));
    let gpus = wait_for(60, || Some(query(web, "DCGM_FI_DEV_FB_TOTAL")).filter(|r| r.len() == 8));
    let gpus = gpus.unwrap_or_else(|| {
        panic!("eight GPUs' VRAM in Prometheus: {:?}\n{}", query(web, "DCGM_FI_DEV_FB_TOTAL"), log(dir.path()))
    });
    assert_eq!(gpus[0]["metric"]["modelName"], "NVIDIA Fake Test GPU");
    // The fake GPUs are held by processes that do no work: "waiting-process" (warn) on a quiet
    // host; on a host whose CPU other programs keep busy (a loaded test machine) the rules say
    // that instead, "cpu-busy-elsewhere" (info), and not both (rules.rs: `quiet`). (A loaded
    // machine may add verdicts of its own: the GPUs' one is looked for among them.)
    let expected = [("waiting-process", "warn"), ("cpu-busy-elsewhere", "info")];
    let verdict = wait_for(60, || {
        query(web, "gpu_doctor_bottleneck")
            .into_iter()
            .find(|v| expected.iter().any(|(k, _)| v["metric"]["kind"] == *k))
    });
    let verdict = verdict.unwrap_or_else(|| {
        panic!("a bottleneck verdict in Prometheus: {:?}\n{}", query(web, "gpu_doctor_bottleneck"), log(dir.path()))
    });
    let severity = expected.iter().find(|(k, _)| verdict["metric"]["kind"] == *k).map(|(_, s)| *s);
    assert_eq!(verdict["metric"]["severity"].as_str(), severity, "{verdict}");
    let check = wait_for(60, || query(web, r#"gpu_doctor_check{check="DRV-HUNG"}"#).into_iter().next());
    let check = check.unwrap_or_else(|| panic!("a check result in Prometheus: {}", log(dir.path())));
    assert!(
        ["pass", "info", "warn", "fail", "skipped"].contains(&check["metric"]["verdict"].as_str().unwrap_or("")),
        "{check}"
    );

    // Issue 33, item 7: eight clients that send a request line and then one byte every 3 s hold
    // every connection slot they can; Prometheus's scrapes beside them must all succeed.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let slow: Vec<_> = (0..8)
        .map(|_| {
            let stop = std::sync::Arc::clone(&stop);
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    let Ok(mut s) = std::net::TcpStream::connect(exporter) else { break };
                    let _ = std::io::Write::write_all(&mut s, b"GET /metrics HTTP/1.1\r\n");
                    let mut waited = 0;
                    while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                        std::thread::sleep(std::time::Duration::from_millis(100));
                        waited += 100;
                        if waited % 3000 == 0 && std::io::Write::write_all(&mut s, b"X").is_err() {
                            break;
                        }
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_secs(12));
    let during = query(web, r#"min_over_time(up{job="gpu-doctor"}[10s])"#);
    let scrapes = query(web, r#"count_over_time(up{job="gpu-doctor"}[10s])"#);
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for t in slow {
        let _ = t.join();
    }
    assert_eq!(
        during.first().map(|r| r["value"][1].clone()),
        Some(serde_json::json!("1")),
        "a scrape failed beside slow clients: {during:?}\n{}",
        log(dir.path())
    );
    let n: f64 = scrapes.first().and_then(|r| r["value"][1].as_str()).and_then(|v| v.parse().ok()).unwrap_or(0.0);
    assert!(n >= 5.0, "only {n} scrapes in 10 s beside slow clients");
}
