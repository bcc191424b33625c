//! Real `nvidia-bug-report.log` files from public repositories and forum threads
//! (tests/fixtures/bug-reports/, each with its SOURCE.md): every one reads (gzip, mixed
//! encodings, truncated or not), splits into its header and sections, and the sections the
//! checklist needs are found where the script collected them. Prints the parse time of each.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test reports a failure

use std::path::PathBuf;
use std::time::Instant;

use gpu_doctor::diagnose::bugreport::{self, SectionKind};

fn fixtures() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bug-reports");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("nvidia-bug-report.log.gz").is_file())
        .collect();
    v.sort();
    v
}

/// The script version SOURCE.md states ("`nvidia-bug-report.sh Version: 33421935`").
fn stated_version(dir: &std::path::Path) -> String {
    let source = std::fs::read_to_string(dir.join("SOURCE.md")).unwrap();
    let at = source.find("nvidia-bug-report.sh Version: ").expect("SOURCE.md states the script version");
    source[at + 30..].chars().take_while(char::is_ascii_digit).collect()
}

#[test]
fn every_stored_log_splits_into_its_header_and_sections() {
    let all = fixtures();
    assert!(all.len() >= 8, "{} fixtures", all.len());
    for dir in all {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let started = Instant::now();
        let text = bugreport::read(&dir.join("nvidia-bug-report.log.gz")).unwrap();
        let r = bugreport::split(&text).unwrap_or_else(|| panic!("{name}: not recognised"));
        let took = started.elapsed();
        println!(
            "{name:<48} {:>9} bytes {:>5} sections {:>6.1} ms{}",
            text.len(),
            r.sections.len(),
            took.as_secs_f64() * 1000.0,
            if r.complete { "" } else { "  (no end marker)" }
        );
        assert_eq!(r.header.version.as_deref(), Some(stated_version(&dir).as_str()), "{name}");
        // The end marker is there exactly when the log's last lines have it.
        assert_eq!(r.complete, text.contains("End of NVIDIA bug report log file"), "{name}");
        if !r.complete || name.contains("2009") {
            continue;
        }
        // A complete log from a modern script has the PCI listing and the kernel modules, and
        // the driver's version file either collected or reported missing.
        assert!(r.command(&["lspci"]).is_some(), "{name}: no lspci section");
        assert!(r.file("/proc/modules").is_some() || r.command(&["lsmod"]).is_some(), "{name}: no module list");
        let version = r.file("/proc/driver/nvidia/version");
        let driver_loaded = text.contains("NVRM version:");
        assert_eq!(version.is_some(), driver_loaded, "{name}: /proc/driver/nvidia/version");
        assert!(r.sections.iter().all(|s| !matches!(&s.kind, SectionKind::Note(t) if t.starts_with("*** "))));
    }
}

#[test]
fn a_truncated_gzip_gives_the_text_it_has() {
    let dir = tempfile::tempdir().unwrap();
    let whole = std::fs::read(fixtures()[0].join("nvidia-bug-report.log.gz")).unwrap();
    let cut = dir.path().join("cut.log.gz");
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    let text = bugreport::read(&cut).unwrap();
    assert!(!text.is_empty());
    let r = bugreport::split(&text).unwrap();
    assert!(!r.complete);
    // Not a regular file: refused in words, nothing read.
    assert!(bugreport::read(dir.path()).unwrap_err().en().contains("not a regular file"));
}

/// The check ids that may be the root cause of each kind named in SOURCE.md's "Expected root
/// cause:" line (`None`: no failure at all).
fn accepted(kind: &str) -> &'static [Option<&'static str>] {
    match kind {
        "healthy" | "none" => &[None],
        "no-driver-loaded" | "module-not-built-for-kernel" => &[Some("DRV-01")],
        // Only the user-space packages: no module, so nouveau runs the GPU; both say "install".
        "userspace-only-install" => &[Some("DRV-01"), Some("DRV-04")],
        "version-mismatch" => &[Some("DRV-06")],
        "secure-boot-blocks-module" => &[Some("DRV-05")],
        "nouveau-bound" => &[Some("DRV-04")],
        "gpu-fell-off-bus" => &[Some("RT-LOST"), Some("RT-XID")],
        // A storm of Xids that are not fatal in themselves is a warning, not a failure.
        "xid-storm" => &[Some("RT-XID"), None],
        "gsp-init-failure" => &[Some("HW-03"), Some("DRV-HUNG")],
        "gpu-vbios-unreadable" => &[Some("HW-03")],
        "dgpu-runtime-suspended" => &[None],
        other => panic!("unknown root-cause kind {other}"),
    }
}

fn expected_kind(dir: &std::path::Path) -> String {
    let source = std::fs::read_to_string(dir.join("SOURCE.md")).unwrap();
    let line = source.lines().find_map(|l| l.strip_prefix("Expected root cause:")).expect("SOURCE.md states it");
    line.split_whitespace().next().unwrap_or_default().to_string()
}

/// Issue 22: `check --from nvidia-bug-report.log.gz` on every stored log gives the root cause
/// the thread concluded (the resolution, not the tool's output), says what the log is and what
/// it did not hold, and marks the checks whose evidence the script never collects.
#[test]
fn every_stored_log_gives_the_root_cause_its_thread_concluded() {
    for dir in fixtures() {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let kind = expected_kind(&dir);
        let out = assert_cmd::Command::cargo_bin("gpu-doctor-cli")
            .unwrap()
            .env("GPU_DOCTOR_LANG", "en")
            .args(["check", "--json", "--from"])
            .arg(dir.join("nvidia-bug-report.log.gz"))
            .output()
            .unwrap();
        if kind == "none" && out.stdout.is_empty() {
            // Issue 33, item 10: a log that holds nothing the checks read says so (and is no
            // "No failure found").
            let e = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{name}: {e}");
            assert!(e.contains("none of the sections the checks read"), "{name}: {e}");
            continue;
        }
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{name}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        let root = v["root_cause"].as_str();
        assert!(accepted(&kind).contains(&root), "{name}: expected {kind}, root cause {root:?}");
        let checks = v["checks"].as_array().unwrap();
        let get = |id: &str| checks.iter().find(|c| c["id"] == id).unwrap();
        if kind == "xid-storm" {
            let x = get("RT-XID");
            assert!(["warn", "fail"].contains(&x["verdict"].as_str().unwrap()), "{name}: {x}");
        }
        let imported = &v["imported"];
        assert_eq!(imported["kind"], "nvidia-bug-report", "{name}");
        assert_eq!(imported["script_version"].as_str(), Some(stated_version(&dir).as_str()), "{name}");
        // No log lists the device files: the permission checks say so instead of judging.
        let perm = get("PERM-01");
        if perm["blocked_by"].is_null() {
            assert!(perm["finding"].as_str().unwrap().starts_with("Not in this report"), "{name}: {perm}");
        }
        // The driver loaded at the time, in the header, agrees with the module check.
        if let (Some(loaded), "pass") =
            (imported["driver_loaded"].as_bool(), get("DRV-01")["verdict"].as_str().unwrap())
        {
            assert!(loaded, "{name}: DRV-01 passed but the header says not loaded");
        }
    }
}

/// Issue 38, item 7: a log taken while the driver could not start the only GPU (its VBIOS could
/// not be copied; no nvidia-smi section) is no "No failure found": HW-03 fails from the kernel
/// log and names the unreadable VBIOS, in today's format (the GPU's address in each line) and in
/// the older one that names no GPU.
#[test]
fn a_gpu_whose_vbios_cannot_be_read_fails_without_an_nvml_view() {
    let log = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/bug-reports/assembled-2026-laptop-vbios-copy-failed/nvidia-bug-report.log.gz");
    let today = bugreport::read(&log).unwrap();
    assert!(!today.contains("nvidia-smi --query"));
    // Before about 2015 the lines named no GPU (Bumblebee issue 111).
    let old = today
        .replace("NVRM: GPU 0000:01:00.0: Failed to copy vbios", "NVRM: failed to copy vbios")
        .replace(
            "NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x30:0xffff:794)",
            "NVRM: RmInitAdapter failed! (0x30:0xffffffff:859)",
        )
        .replace(
            "NVRM: GPU 0000:01:00.0: rm_init_adapter failed, device minor number 0",
            "NVRM: rm_init_adapter(0) failed",
        );
    assert_ne!(old, today);
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [("today", &today), ("old", &old)] {
        let path = dir.path().join(format!("{name}.log"));
        std::fs::write(&path, text).unwrap();
        let out = assert_cmd::Command::cargo_bin("gpu-doctor-cli")
            .unwrap()
            .env("GPU_DOCTOR_LANG", "en")
            .args(["check", "--json", "--from"])
            .arg(&path)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["root_cause"], "HW-03", "{name}");
        let hw = v["checks"].as_array().unwrap().iter().find(|c| c["id"] == "HW-03").unwrap();
        assert_eq!(hw["verdict"], "fail", "{name}: {hw}");
        assert_eq!(hw["cause"]["id"], "gpu-vbios-unreadable", "{name}: {hw}");
        assert!(hw["finding"].as_str().unwrap().contains("0000:01:00.0"), "{name}: {hw}");
        let text = assert_cmd::Command::cargo_bin("gpu-doctor-cli")
            .unwrap()
            .env("GPU_DOCTOR_LANG", "en")
            .args(["check", "--from"])
            .arg(&path)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&text.stdout);
        assert!(!text.contains("No failure found"), "{name}: {text}");
        assert!(text.contains("sudo dmesg | grep -i vbios"), "{name}: {text}");
    }
}

/// The text of `nvidia-smi -q` alone (as pasted into a ticket) reads as NVML's view: its GPUs,
/// and every other check "not in this report".
#[test]
fn nvidia_smi_q_alone_is_nvmls_view() {
    let log = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/bug-reports/bekal-2026-2x3080-healthy/nvidia-bug-report.log.gz");
    let text = bugreport::read(&log).unwrap();
    let r = bugreport::split(&text).unwrap();
    let smi = r.command(&["nvidia-smi", "--query"]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("nvidia-smi-q.txt");
    std::fs::write(&file, &smi.body).unwrap();
    let out = assert_cmd::Command::cargo_bin("gpu-doctor-cli")
        .unwrap()
        .env("GPU_DOCTOR_LANG", "en")
        .args(["check", "--from"])
        .arg(&file)
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(t.starts_with("Read from the output of nvidia-smi -q"), "{t}");
    assert!(t.contains("NVIDIA GeForce RTX 3080, NVIDIA GeForce RTX 3080") && t.contains("driver: 535.288.01"), "{t}");
    assert!(t.contains("management library): loaded"), "{t}");
    // A file that is neither a log nor nvidia-smi output is not taken for one.
    std::fs::write(&file, "hello\n").unwrap();
    let out = assert_cmd::Command::cargo_bin("gpu-doctor-cli")
        .unwrap()
        .args(["check", "--from"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

/// Issue 33: the importer as a whole (splitter, section mapping, checks, header) fuzzed with
/// logs built from every section kind it reads, with hostile content: no panic, GPUs and header
/// within their caps, and the same file with any line ends gives the same checklist. Bounded
/// (a fixed number of cases) so CI runs it every time.
mod fuzz {
    use gpu_doctor::diagnose::bugview::{BugReportSystem, MAX_GPUS};
    use gpu_doctor::diagnose::system::SystemView;
    use gpu_doctor::diagnose::{self, bugreport};
    use proptest::prelude::*;

    /// One section of a log, by kind, with arbitrary content.
    fn section() -> impl Strategy<Value = String> {
        let text = "[ -~\\t\u{1b}\u{7}\u{202e}中]{0,60}";
        let lines = proptest::collection::vec(text, 0..12);
        let path = prop_oneof![
            Just("/proc/driver/nvidia/version".to_string()),
            Just("/proc/modules".to_string()),
            Just("/etc/os-release".to_string()),
            Just("/proc/1/cgroup".to_string()),
            "/(proc|sys|etc|a)(/[a-z0-9.:]{1,12}){0,40}",
        ];
        prop_oneof![
            (path, lines.clone()).prop_map(|(p, l)| format!("*** {p}\n*** ls: x\n{}\n", l.join("\n"))),
            (path_missing(), Just(())).prop_map(|(p, ())| format!("*** {p} does not exist\n")),
            proptest::collection::vec((0u32..300, 0u8..32, 0u8..8, "[A-Za-z0-9 ]{0,20}"), 0..40).prop_map(|fs| {
                let mut s = "/usr/bin/lspci -nnDvvvxxxx\n\n".to_string();
                for (b, d, f, n) in fs {
                    s.push_str(&format!("0000:{b:02x}:{d:02x}.{f} 3D controller [0302]: NVIDIA Corporation {n} [10de:2330]\n\tKernel driver in use: nvidia\n\n"));
                }
                s
            }),
            proptest::collection::vec((0u32..200, "[A-Za-z0-9 ]{0,20}", any::<bool>()), 0..90).prop_map(|gs| {
                let mut s = "/usr/bin/nvidia-smi --query\n\n==============NVSMI LOG==============\nDriver Version : 550.54.15\n".to_string();
                for (i, n, lost) in gs {
                    if lost {
                        s.push_str(&format!("Unable to determine the device handle for GPU {i:08X}:01:00.0: Unknown Error\n"));
                    } else {
                        s.push_str(&format!("GPU {i:08X}:01:00.0\n    Product Name : {n}\n    FB Memory Usage\n        Total : {i} MiB\n"));
                    }
                }
                s
            }),
            proptest::collection::vec((0u32..100, "[ -~]{0,40}"), 0..60).prop_map(|xs| {
                let mut s = "Scanning kernel log files for NVIDIA kernel messages:\n".to_string();
                for (x, m) in xs {
                    s.push_str(&format!("Jan 25 10:31:17 host kernel: [ 7.1] NVRM: Xid (PCI:0000:01:00): {x}, {m}\n"));
                }
                s
            }),
            lines.prop_map(|l| format!("{}\n", l.join("\n"))),
        ]
    }

    fn path_missing() -> impl Strategy<Value = String> {
        prop_oneof![Just("/proc/driver/nvidia/version".to_string()), "/[a-z]{1,8}(/[a-z]{1,8}){0,4}"]
    }

    fn checklist(text: &str) -> Option<diagnose::Report> {
        let split = bugreport::split(text)?;
        let view = BugReportSystem::from_report(&split);
        let report = diagnose::run(&view);
        if let Some(n) = &view.meta().nvml {
            assert!(n.inventory.gpus.len() <= 2 * MAX_GPUS, "{} GPUs", n.inventory.gpus.len());
        }
        let header = view.imported().lines().iter().map(gpu_doctor::i18n::Message::en).collect::<Vec<_>>().join("\n");
        assert!(header.len() < 16 << 10, "a header of {} bytes", header.len());
        Some(report)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

        #[test]
        fn the_importer_never_panics_and_stays_bounded(
            sections in proptest::collection::vec(section(), 0..10),
            complete in any::<bool>(),
            ends in prop_oneof![Just("\n"), Just("\r\n"), Just("\r")],
        ) {
            let sep = format!("{}\n", "_".repeat(44));
            let mut log = format!("{sep}Start of NVIDIA bug report log file.\nnvidia-bug-report.sh Version: 1\nuname: Linux h 6.8.0 x\n{sep}");
            for s in &sections {
                log.push_str(s);
                log.push_str(&sep);
            }
            if complete {
                log.push_str("End of NVIDIA bug report log file.\n");
            }
            let unix = checklist(&log);
            prop_assert!(unix.is_some());
            // The same log with other line ends, read as a file is read: the same checklist.
            let dir = tempfile::tempdir().unwrap();
            let f = dir.path().join("log");
            std::fs::write(&f, log.replace('\n', ends)).unwrap();
            let text = bugreport::read(&f).unwrap();
            let other = checklist(&text);
            let verdicts = |r: &Option<diagnose::Report>| {
                r.as_ref().map(|r| r.checks.iter().map(|c| (c.id.clone(), c.verdict)).collect::<Vec<_>>())
            };
            prop_assert_eq!(verdicts(&unix), verdicts(&other));
        }

        /// A real log with bytes changed anywhere reads, or is refused, without a panic.
        #[test]
        fn a_damaged_real_log_never_panics(
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..24),
            cut in any::<prop::sample::Index>(),
        ) {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/bug-reports/bekal-2026-2x3080-healthy/nvidia-bug-report.log.gz");
            let mut bytes = bugreport::read(&dir).unwrap().into_bytes();
            for (at, b) in edits {
                let i = at.index(bytes.len());
                bytes[i] = b;
            }
            bytes.truncate(cut.index(bytes.len() + 1));
            let _ = checklist(&String::from_utf8_lossy(&bytes));
        }
    }
}
