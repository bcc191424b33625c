//! Support material costs: a full report (8 GPUs, 15 min of history at 1 s, a checklist from a
//! capture) built, redacted and rendered in each format; one recording line for 8 GPUs (the
//! per-tick cost of recording); and opening a 24 h recording (86 400 samples) for replay.
#![allow(missing_docs)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark stops at the first failure

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use gpu_doctor::diagnose::system::CapturedSystem;
use gpu_doctor::report::redact::{RedactOptions, Redactor, Secrets};
use gpu_doctor::report::{self, Format, Inputs};
use gpu_doctor::telemetry::demo::{DemoGpus, DemoHost, Scenario};
use gpu_doctor::telemetry::recording::{Recorder, Recording};
use gpu_doctor::telemetry::sampler::Sampler;

fn sampler(gpus: u32, secs: u32) -> Sampler {
    let s = Sampler::manual(
        Arc::new(DemoGpus::new(Scenario::ThermalThrottle, gpus, 1)),
        Box::new(DemoHost::new(Scenario::ThermalThrottle, 1)),
        Duration::from_secs(1),
    );
    s.step_slow(0.0);
    for t in 0..secs {
        s.step_host(f64::from(t));
        s.step_gpu(f64::from(t));
    }
    s
}

fn report_bench(c: &mut Criterion) {
    let s = sampler(8, 900);
    let snap = s.snapshot();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pcie-link-downtrained");
    let checklist = gpu_doctor::diagnose::run(&CapturedSystem::open(std::path::Path::new(dir)).unwrap());
    let machine = report::machine_facts(gpu_doctor::i18n::Lang::En);
    for format in [Format::Md, Format::Html, Format::Json] {
        c.bench_function(&format!("report: build + redact + render {format:?} (8 GPUs, 15 min, checklist)"), |b| {
            b.iter(|| {
                s.with_history(|h| {
                    let mut doc = report::build(&Inputs {
                        snapshot: &snap,
                        history: Some((h, 900.0, 899.0)),
                        checklist: Some(&checklist),
                        bottlenecks: None,
                        smoke: None,
                        vram: None,
                        renderer: None,
                        machine: machine.clone(),
                        lang: gpu_doctor::i18n::Lang::En,
                    });
                    report::redact_doc(&mut doc, &mut Redactor::new(RedactOptions::default(), Secrets::this_machine()));
                    report::render(&doc, format)
                })
            })
        });
    }
}

fn recording_bench(c: &mut Criterion) {
    let s = sampler(8, 2);
    let dir = tempfile::tempdir().unwrap();
    let mut rec = Recorder::create(&dir.path().join("b.gdrec"), &s.snapshot()).unwrap();
    let mut t = 2.0;
    c.bench_function("record: one line, 8 GPUs + host (write + flush)", |b| {
        b.iter(|| {
            t += 1.0;
            s.step_host(t);
            s.step_gpu(t);
            rec.append(&s.snapshot())
        })
    });
}

/// Not a criterion loop (one run takes about a second): writes a 24 h recording once and times
/// opening it, as `gpu-doctor --replay` does.
fn replay_24h(_c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("day.gdrec");
    let s = sampler(1, 1);
    let mut rec = Recorder::create(&path, &s.snapshot()).unwrap();
    for t in 1..=86_400 {
        s.step_host(f64::from(t));
        s.step_gpu(f64::from(t));
        let _ = rec.append(&s.snapshot());
    }
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    for _ in 0..3 {
        let t0 = Instant::now();
        let r = Recording::open(&path).unwrap();
        let read = t0.elapsed();
        let sampler = Sampler::from_recording(&r, "day.gdrec");
        let total = t0.elapsed();
        assert_eq!(r.records.len(), 86_400);
        drop(sampler);
        println!(
            "replay 24 h (86400 samples, 1 GPU, {:.0} MiB): read {:.2} s, history built, total {:.2} s",
            size as f64 / 1048576.0,
            read.as_secs_f64(),
            total.as_secs_f64()
        );
    }
}

/// Every bottleneck rule over 15 min of history for 8 GPUs (budget: 2 ms).
fn verdicts_bench(c: &mut Criterion) {
    // 16 min sampled, judged over the last 890 s: every point at full rate (no 10 s buckets).
    let s = sampler(8, 960);
    let snap = s.snapshot();
    let v = s.with_history(|h| gpu_doctor::diagnose::bottleneck::evaluate(&snap, h, 890.0, 959.0));
    assert!(
        v.iter().filter(|b| b.finding == gpu_doctor::diagnose::bottleneck::Finding::ThermalThrottle).count() == 8,
        "{v:?}"
    );
    c.bench_function("bottleneck verdicts: 8 GPUs, 15 min window", |b| {
        b.iter(|| s.with_history(|h| gpu_doctor::diagnose::bottleneck::evaluate(&snap, h, 890.0, 959.0)))
    });
}

criterion_group!(benches, report_bench, recording_bench, verdicts_bench, replay_24h);
criterion_main!(benches);
