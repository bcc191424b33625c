#![cfg(feature = "gui")]
#![allow(clippy::unwrap_used)]
use egui_kittest::Harness;
use egui_kittest::kittest::{By, NodeT as _, Queryable};
use gpu_doctor::gui::{AppInit, DoctorApp, Tab};
use gpu_doctor::telemetry::demo::{DemoGpus, DemoHost, Scenario};
use gpu_doctor::telemetry::sampler::Sampler;
use std::sync::Arc;
use std::time::Duration;
#[test]
fn wide() {
    let s = Sampler::manual(
        Arc::new(DemoGpus::new(Scenario::DataStarved, 2, 3)),
        Box::new(DemoHost::new(Scenario::DataStarved, 3)),
        Duration::from_secs(1),
    );
    s.step_slow(0.0);
    for t in 1..=30 {
        s.step_host(t as f64);
        s.step_gpu(t as f64);
    }
    let mut h = Harness::builder().with_size(eframe::egui::vec2(1024.0, 640.0)).build_eframe(move |cc| {
        let mut i = AppInit::new(s);
        i.tab = Tab::Vram;
        DoctorApp::new(cc, i)
    });
    h.run_steps(10);
    for n in h.query_all(By::new().predicate(|n| n.bounding_box().is_some_and(|b| b.x1 > 1000.0))) {
        let b = n.accesskit_node().bounding_box().unwrap();
        eprintln!(
            "{:?} {:.0}-{:.0} y{:.0} {:?}",
            n.accesskit_node().role(),
            b.x0,
            b.x1,
            b.y0,
            n.accesskit_node().label().or(n.accesskit_node().value()).map(|s| s.chars().take(60).collect::<String>())
        );
    }
}
