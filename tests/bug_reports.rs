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
    assert!(bugreport::read(dir.path()).unwrap_err().contains("not a regular file"));
}
