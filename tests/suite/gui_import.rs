//! Issue 22 in the window: an nvidia-bug-report.log dropped on the window opens in the Checklist
//! with what it is, the machine it came from and its root cause; Checklist → Open… is there.
#![cfg(feature = "gui")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test reports a failure

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use gpu_doctor::gui::{AppInit, DoctorApp, Tab};
use gpu_doctor::telemetry::demo::{DemoGpus, DemoHost, Scenario};
use gpu_doctor::telemetry::sampler::Sampler;

/// A file dropped on the window, as the windowing layer hands it over.
#[derive(Debug)]
struct Dropped(PathBuf);

impl eframe::egui::DroppedFile for Dropped {
    fn path(&self) -> &Path {
        &self.0
    }
    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

fn log(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/bug-reports")
        .join(name)
        .join("nvidia-bug-report.log.gz")
}

fn drop_file(h: &mut Harness<'static, DoctorApp>, path: PathBuf) {
    h.input_mut().dropped_files.push(Arc::new(Dropped(path)));
    h.step();
    let until = Instant::now() + Duration::from_secs(30);
    while h.state().checklist.running() {
        assert!(Instant::now() < until, "the checks on the dropped file ended");
        std::thread::sleep(Duration::from_millis(20));
        h.step();
    }
    h.run();
}

#[test]
fn a_bug_report_dropped_on_the_window_opens_in_the_checklist() {
    let mut h = demo_window();
    drop_file(&mut h, log("trourest-2023-2080ti-vm-nvml-mismatch"));
    assert_eq!(h.state().tab, Tab::Checklist);
    h.get_by_label_contains("Read from an nvidia-bug-report log (script version 32875599");
    h.get_by_label_contains("The NVIDIA kernel module was loaded when the report was made.");
    let report = h.state().checklist.report.clone().unwrap();
    assert_eq!(report.root_cause.as_deref(), Some("DRV-06"));
    assert!(h.query_all_by_label_contains("The driver was updated but the old kernel module still runs").count() >= 1);
    h.get_by_label("Open…");
    h.get_by_label("Open folder…");
    // Another file replaces it.
    drop_file(&mut h, log("bekal-2026-2x3080-healthy"));
    h.get_by_label_contains("script version 36900632");
    assert_eq!(h.state().checklist.report.as_ref().unwrap().root_cause, None);
}

fn capture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// A window on one idle demo GPU, 1280x800, settled (shared by the window tests of issue 38).
pub(crate) fn demo_window() -> Harness<'static, DoctorApp> {
    let sampler = Sampler::manual(
        Arc::new(DemoGpus::new(Scenario::Idle, 1, 1)),
        Box::new(DemoHost::new(Scenario::Idle, 1)),
        Duration::from_secs(1),
    );
    sampler.step_host(1.0);
    sampler.step_gpu(1.0);
    let mut h = Harness::builder()
        .with_size(eframe::egui::vec2(1280.0, 800.0))
        .build_eframe(move |cc| DoctorApp::new(cc, AppInit::new(sampler)));
    h.run();
    h
}

/// Issue 38 items 1 and 4: with a user's capture open, the report dialog and the support card
/// are about the capture's machine only (its kernel, its user redacted), say which file, and the
/// card copies itself as text and names its screenshot after itself.
#[test]
fn the_report_and_card_of_an_open_file_are_about_that_machine_only() {
    let mut h = demo_window();
    drop_file(&mut h, capture("user-not-in-video-group"));
    h.get_by_label("Report...").click();
    h.run();
    let preview = h.state().report.preview.clone();
    assert!(preview.contains("user-not-in-video-group"), "which file: {preview}");
    assert!(preview.contains("6.8.0-45-generic"), "the capture's kernel: {preview}");
    assert!(!preview.contains("alice"), "the capture's user is redacted: {preview}");
    assert!(preview.contains("usermod -aG video [user-1]"), "the command names the redacted user: {preview}");
    for reader in ["Renderer", "DEMO DATA", "CPU", "VRAM estimate", "Metrics"] {
        assert!(!preview.contains(reader), "{reader} of the reader's machine: {preview}");
    }
    if let Some(k) = sysinfo::System::kernel_version().ok().filter(|k| k != "6.8.0-45-generic") {
        assert!(!preview.contains(&k), "the reader's kernel {k}: {preview}");
    }
    h.state_mut().report.open = false;
    h.run();
    h.get_by_label("Support card").click();
    h.run();
    assert!(h.state().card.open);
    h.get_by_label_contains("FROM THE FILE user-not-in-video-group");
    let doc = h.state().card.doc.clone().unwrap();
    let text = gpu_doctor::report::render(&doc, gpu_doctor::report::Format::Md);
    assert!(!text.contains("alice") && !text.contains("DEMO"), "{text}");
    // The fix names the redacted user: it is shown, with no Copy button (not runnable as shown).
    h.get_by_label("sudo usermod -aG video [user-1]");
    h.get_by_label("redacted");
    // The demo GPU of the reader's window is not the capture's: the capture's own GPU is (its PCI
    // function: NVML did not open there).
    assert_eq!(h.state().card.gpus, [["0000:01:00.0", "PCI 10de, driver nvidia"]], "{:?}", h.state().card.gpus);
    h.get_by_label("Copy as text").click();
    h.run();
    h.get_by_label_contains("Support card copied to the clipboard as text.");
    h.get_by_label("Save...");
    h.get_by_label("Screenshot of the card");
}

/// Issue 38 item 3: a wrong file dropped on the window is named for what it is with what was
/// expected, and the result already shown stays; "Back to this machine" leaves the file.
#[test]
fn a_wrong_file_keeps_the_result_shown_and_back_returns_to_this_machine() {
    let mut h = demo_window();
    drop_file(&mut h, log("trourest-2023-2080ti-vm-nvml-mismatch"));
    assert_eq!(h.state().checklist.report.as_ref().unwrap().root_cause.as_deref(), Some("DRV-06"));
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("screenshot.png");
    std::fs::write(&png, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR rest of an image").unwrap();
    drop_file(&mut h, png);
    let error = h.state().checklist.error.clone().unwrap();
    assert!(error.contains("screenshot.png") && error.contains("a PNG image"), "{error}");
    assert!(error.contains("nvidia-bug-report.log(.gz)"), "what was expected: {error}");
    assert!(!error.contains("os error"), "no operating-system error first: {error}");
    assert_eq!(
        h.state().checklist.report.as_ref().unwrap().root_cause.as_deref(),
        Some("DRV-06"),
        "the previous result is still shown"
    );
    assert!(h.state().checklist.reads_a_file());
    h.get_by_label("Back to this machine").click();
    h.step();
    h.step();
    assert!(!h.state().checklist.reads_a_file());
    assert!(h.query_by_label("Back to this machine").is_none());
    let until = Instant::now() + Duration::from_secs(60);
    while h.state().checklist.running() {
        assert!(Instant::now() < until, "the checks on this machine ended");
        std::thread::sleep(Duration::from_millis(20));
        h.step();
    }
    h.run();
    assert!(h.state().checklist.report.as_ref().unwrap().origin.is_none(), "this machine's results");
}
