//! Issue 38 items 9 and 10 in the window: Escape closes the dialog in front, Ctrl+1…6 switch
//! tabs, a dialog takes the keyboard focus when it opens; the demo scenario is chosen in the
//! window (not always healthy-training).
#![cfg(feature = "gui")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test reports a failure

use std::sync::Arc;
use std::time::Duration;

use eframe::egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use gpu_doctor::gui::{AppInit, DoctorApp, Tab};
use gpu_doctor::telemetry::demo::{DemoGpus, DemoHost, Scenario};
use gpu_doctor::telemetry::sampler::Sampler;
use gpu_doctor::telemetry::source::SourceStatus;

fn window() -> Harness<'static, DoctorApp> {
    super::gui_import::demo_window()
}

#[test]
fn escape_closes_the_dialog_in_front_and_ctrl_digits_switch_tabs() {
    let mut h = window();
    h.get_by_label("Report...").click();
    h.run_steps(8);
    assert!(h.state().report.open);
    // The report dialog takes the focus: its first control.
    assert!(h.get_by_label("Markdown").is_focused(), "the report dialog's first control has the focus");
    h.key_press(Key::Escape);
    h.run_steps(8);
    assert!(!h.state().report.open, "Escape closes the report dialog");
    h.get_by_label("Support card").click();
    h.run_steps(8);
    assert!(h.state().card.open);
    h.key_press(Key::Escape);
    h.run_steps(8);
    assert!(!h.state().card.open, "Escape closes the card");
    for (key, tab) in
        [(Key::Num3, Tab::Vram), (Key::Num2, Tab::Checklist), (Key::Num5, Tab::Tune), (Key::Num1, Tab::Monitor)]
    {
        h.key_press_modifiers(Modifiers::COMMAND, key);
        h.run_steps(8);
        assert_eq!(h.state().tab, tab, "{key:?}");
    }
}

#[test]
fn the_support_card_takes_the_focus_when_it_opens() {
    let mut h = window();
    h.get_by_label("Support card").click();
    h.run_steps(8);
    assert!(h.get_by_label("Copy as text").is_focused());
}

#[test]
fn a_demo_scenario_is_chosen_in_the_window() {
    let mut h = window();
    h.get_by_label("File").click();
    h.run_steps(8);
    h.get_by_label("Show demo data").hover();
    h.run_steps(8);
    h.get_by_label_contains("thermal-throttle").click();
    h.run_steps(8);
    let snap = h.state().sampler().snapshot();
    match &snap.source {
        SourceStatus::Demo { scenario, .. } => assert_eq!(scenario.to_string(), "thermal-throttle"),
        other => panic!("not the demo: {other:?}"),
    }
}

#[test]
fn screen_readers_hear_each_chart_by_its_title_and_each_copy_button_by_its_command() {
    use egui_kittest::kittest::NodeT;
    let h = window();
    let chart = h.get_by_label("GPU utilization and memory bandwidth utilization (chart)");
    let lines = chart.accesskit_node().description().unwrap_or_default().to_string();
    assert!(lines.contains("GPU 0 utilization"), "its lines are described: {lines}");
    // A Copy button says which command it copies.
    let mut init = AppInit::new(Sampler::manual(
        Arc::new(DemoGpus::new(Scenario::Idle, 1, 1)),
        Box::new(DemoHost::new(Scenario::Idle, 1)),
        Duration::from_secs(1),
    ));
    init.checklist_from =
        Some(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/user-not-in-video-group"));
    init.tab = Tab::Checklist;
    let mut h = Harness::builder()
        .with_size(eframe::egui::vec2(1280.0, 800.0))
        .build_eframe(move |cc| DoctorApp::new(cc, init));
    let until = std::time::Instant::now() + Duration::from_secs(30);
    while h.state().checklist.report.is_none() {
        assert!(std::time::Instant::now() < until, "the checks ended");
        std::thread::sleep(Duration::from_millis(20));
        h.step();
    }
    h.run_steps(8);
    let described: Vec<String> =
        h.query_all_by_label("Copy").filter_map(|n| n.accesskit_node().description().map(|d| d.to_string())).collect();
    assert!(
        described.iter().any(|d| d.contains("sudo usermod -aG video alice")),
        "a Copy button names its command: {described:?}"
    );
}

/// Issue 53, item 23: Tab stays inside a modal dialog (the report dialog, the support card): it
/// never reaches the tabs behind, so Space cannot switch one.
#[test]
fn tab_stays_inside_the_dialog_in_front() {
    let mut h = window();
    for open in ["Report...", "Support card"] {
        h.get_by_label(open).click();
        h.run_steps(8);
        let before = h.state().tab;
        for n in 0..30 {
            h.key_press(Key::Tab);
            h.run_steps(2);
            for t in Tab::all() {
                for node in h.query_all_by_label(t.title()) {
                    assert!(!node.is_focused(), "{open}: Tab {n} reached the {} tab behind", t.title());
                }
            }
        }
        h.key_press(Key::Space);
        h.run_steps(2);
        assert_eq!(h.state().tab, before);
        h.key_press(Key::Escape);
        h.run_steps(8);
    }
}
