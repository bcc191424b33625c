//! Bottleneck rules on recorded fixtures: recordings (the documented format) of situations the
//! demo scenarios do not cover — a VRAM leak, a swapping host, a PCIe link below its maximum under
//! load, a hardware slowdown, memory-bandwidth-bound work and a process that holds the GPU but
//! does nothing — each replayed and judged like live data: its verdict, and no wrong one.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test reports a failure

use std::sync::Arc;
use std::time::Duration;

use gpu_doctor::diagnose::Verdict;
use gpu_doctor::diagnose::bottleneck::{self, Finding};
use gpu_doctor::telemetry::demo::{DemoGpus, DemoHost, Scenario};
use gpu_doctor::telemetry::reading::Reading;
use gpu_doctor::telemetry::recording::{Recorder, Recording};
use gpu_doctor::telemetry::sample::{GpuProcess, GpuSample, HostSample, ProcessKind};
use gpu_doctor::telemetry::sampler::Sampler;
use gpu_doctor::telemetry::throttle;

const GIB: u64 = 1 << 30;

/// Writes a 90 s recording of a healthy-training demo GPU and host, each sample changed by
/// `edit(t, gpu, host)`, reads it back and judges the last 60 s.
fn judge(edit: impl Fn(f64, &mut GpuSample, &mut HostSample)) -> Vec<bottleneck::Bottleneck> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fixture.gdrec");
    let s = Sampler::manual(
        Arc::new(DemoGpus::new(Scenario::HealthyTraining, 1, 9)),
        Box::new(DemoHost::new(Scenario::HealthyTraining, 9)),
        Duration::from_secs(1),
    );
    s.step_slow(0.0);
    s.step_host(0.0);
    s.step_gpu(0.0);
    let mut rec = Recorder::create(&path, &s.snapshot()).unwrap();
    for t in 1..=90 {
        let t = f64::from(t);
        if (t as u32).is_multiple_of(5) {
            s.step_slow(t);
        }
        s.step_host(t);
        s.step_gpu(t);
        let mut snap = (*s.snapshot()).clone();
        if let (Some(g), Some(h)) = (snap.gpus.first_mut(), snap.host.as_mut()) {
            edit(t, g, h);
        }
        rec.append(&snap).unwrap();
    }
    drop(rec);
    let r = Recording::open(&path).unwrap();
    let replay = Sampler::from_recording(&r, "fixture.gdrec");
    let snap = replay.snapshot();
    replay.with_history(|h| bottleneck::evaluate(&snap, h, 60.0, 90.0))
}

fn expect(name: &str, got: &[bottleneck::Bottleneck], want: Finding) {
    let keys: Vec<Finding> = got.iter().map(|b| b.finding).collect();
    assert!(keys.contains(&want), "{name}: {want:?} missing in {keys:?}");
    for b in got {
        if b.severity >= Verdict::Warn {
            assert_eq!(b.finding, want, "{name}: unexpected {:?}: {}", b.finding, b.title.en());
        }
    }
    assert!(!keys.contains(&Finding::Healthy) || want == Finding::Healthy, "{name}: healthy next to {want:?}");
}

#[test]
fn a_vram_leak() {
    let v = judge(|t, g, _| g.vram_used_bytes = Reading::Value(4 * GIB + (t * 80.0 * f64::from(1 << 20)) as u64));
    expect("leak", &v, Finding::VramGrowing);
    let leak = v.iter().find(|b| b.finding == Finding::VramGrowing).map(|b| b.title.clone()).unwrap_or_default();
    assert!(leak.en().contains("full in about"), "{}", leak.en());
}

#[test]
fn a_swapping_host() {
    let v = judge(|t, _, h| {
        if let Some(m) = h.memory.value().cloned() {
            let mut m = m;
            m.swap_used_bytes = (t * 20.0 * f64::from(1 << 20)) as u64;
            m.swap_total_bytes = 8 * GIB;
            h.memory = Reading::Value(m);
        }
    });
    // The GPU itself stays healthy-looking, but a host problem is a warning: no "healthy" GPU
    // verdict is wrong here, so only the warning is asserted.
    assert!(v.iter().any(|b| b.finding == Finding::HostSwapping && b.severity == Verdict::Warn), "{v:?}");
}

#[test]
fn a_pcie_link_below_its_maximum_under_load() {
    let v = judge(|_, g, _| {
        g.pcie_gen = Reading::Value(3);
        g.pcie_width = Reading::Value(8);
    });
    expect("pcie", &v, Finding::PcieBelowMax);
}

#[test]
fn a_hardware_slowdown() {
    let v = judge(|_, g, _| g.throttle_mask = Reading::Value(throttle::HW_POWER_BRAKE | throttle::HW_SLOWDOWN));
    expect("hw slowdown", &v, Finding::HardwareSlowdown);
}

#[test]
fn memory_bandwidth_bound_work() {
    let v = judge(|_, g, _| g.util_mem_bw_pct = Reading::Value(88.0));
    assert!(v.iter().any(|b| b.finding == Finding::MemoryBound), "{v:?}");
    assert!(v.iter().any(|b| b.finding == Finding::Healthy), "memory-bound work on a busy GPU is still healthy: {v:?}");
}

#[test]
fn a_process_that_holds_the_gpu_and_does_nothing() {
    let v = judge(|_, g, h| {
        g.util_gpu_pct = Reading::Value(0.0);
        g.processes = Reading::Value(vec![GpuProcess::new(
            4242,
            "python train.py",
            Reading::Value(6 * GIB),
            ProcessKind::Compute,
        )]);
        // The host idles too: nothing explains the wait.
        h.cpu_pct = Reading::Value(3.0);
        h.per_core_pct.iter_mut().for_each(|c| *c = 3.0);
    });
    expect("stuck", &v, Finding::WaitingProcess);
    let w = v
        .iter()
        .find(|b| b.finding == Finding::WaitingProcess)
        .map(|b| b.next_steps.iter().map(gpu_doctor::i18n::Message::en).collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    assert!(w.contains("focus"), "{w}");
}
