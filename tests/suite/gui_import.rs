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
