//! Sampler cost: one tick (host + 8 demo GPUs, history append, snapshot publish); the same with
//! 8 GPUs read through the real NVML code path from the test-only fake libnvidia-ml (whose own
//! work per call is a few nanoseconds, so the figure is gpu-doctor's cost plus the dlopen'd call
//! overhead); and chart point extraction from a full history.
#![allow(missing_docs)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use gpu_doctor::telemetry::demo::{DemoGpus, DemoHost, Scenario};
use gpu_doctor::telemetry::history::keys;
use gpu_doctor::telemetry::host::LiveHost;
use gpu_doctor::telemetry::live::{LiveGpus, NvmlOptions};
use gpu_doctor::telemetry::sampler::Sampler;

/// Benchmarks host + GPU steps of `sampler` under `name`; returns the last time stepped.
fn bench_ticks(c: &mut Criterion, name: &str, sampler: &Sampler) -> f64 {
    sampler.step_slow(0.0);
    let mut t = 0.0;
    c.bench_function(name, |b| {
        b.iter(|| {
            t += 1.0;
            sampler.step_host(t);
            sampler.step_gpu(t);
        })
    });
    t
}

fn gpus8() -> Arc<DemoGpus> {
    Arc::new(DemoGpus::new(Scenario::HealthyTraining, 8, 1))
}

fn tick(c: &mut Criterion) {
    let demo = Sampler::manual(gpus8(), Box::new(DemoHost::new(Scenario::HealthyTraining, 1)), Duration::from_secs(1));
    let t = bench_ticks(c, "tick: demo host + 8 demo GPUs", &demo);
    let live = Sampler::manual(gpus8(), Box::new(LiveHost::new()), Duration::from_secs(1));
    bench_ticks(c, "tick: live host + 8 demo GPUs", &live);

    let (dir, lib) = common::private_fake(common::Fake::Current, "gpus = 8\n");
    let fake = || {
        Arc::new(LiveGpus::new(NvmlOptions {
            library: Some(lib.clone()),
            wake_sleeping: false,
            root: dir.path().into(),
        }))
    };
    let nvml = Sampler::manual(fake(), Box::new(DemoHost::new(Scenario::Idle, 1)), Duration::from_secs(1));
    nvml.step_gpu(0.0);
    assert_eq!(nvml.snapshot().gpus.len(), 8, "the fake library did not open");
    let mut tn = 0.0;
    c.bench_function("gpu step: 8 GPUs through NVML (fake library)", |b| {
        b.iter(|| {
            tn += 1.0;
            nvml.step_gpu(tn);
        })
    });
    c.bench_function("slow step: 8 GPUs through NVML (fake library)", |b| b.iter(|| nvml.step_slow(tn)));
    let nvml_live = Sampler::manual(fake(), Box::new(LiveHost::new()), Duration::from_secs(1));
    bench_ticks(c, "tick: live host + 8 GPUs through NVML (fake library)", &nvml_live);

    // Chart extraction over a full 15-minute window (what one GUI frame does per line).
    for i in 0..900 {
        demo.step_gpu(t + f64::from(i));
    }
    let end = t + 900.0;
    c.bench_function("chart points: 15 min window, 1 series", |b| {
        b.iter(|| demo.with_history(|h| h.points(&keys::gpu(0, keys::GpuMetric::Util), end - 900.0, end, 600).len()))
    });
    monitor_frame(c, &demo, end);
}

/// How long one Monitor frame holds the history lock (copying the chart series out) against how
/// long the whole frame takes to lay out: the sampler threads wait at most the first, never the
/// second.
#[cfg(feature = "gui")]
fn monitor_frame(c: &mut Criterion, sampler: &Sampler, end: f64) {
    use gpu_doctor::gui::{MonitorData, MonitorState};
    let snap = sampler.snapshot();
    let state = MonitorState::default();
    let (from, to) = state.span(end);
    let wanted = state.wanted_series(&snap);
    c.bench_function("monitor frame: history lock held (8 GPUs, 5 min window)", |b| {
        b.iter(|| sampler.with_history(|h| MonitorData::gather(h, &wanted, from, to)))
    });
    let data = sampler.with_history(|h| MonitorData::gather(h, &wanted, from, to));
    let mut harness = egui_kittest::Harness::builder().with_size(eframe::egui::vec2(1280.0, 800.0)).build_ui_state(
        |ui, state: &mut MonitorState| {
            let _ = state.ui(ui, &snap, &data, end, 0);
        },
        MonitorState::default(),
    );
    c.bench_function("monitor frame: layout without the lock (8 GPUs, 5 min window)", |b| b.iter(|| harness.step()));
}

#[cfg(not(feature = "gui"))]
fn monitor_frame(_: &mut Criterion, _: &Sampler, _: f64) {}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = tick
}
criterion_main!(benches);
