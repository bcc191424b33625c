//! Tests of the sampler: steps, prefill, threads, recording lines, the slow-step owner.

use super::*;
use crate::telemetry::demo::{DemoGpus, DemoHost, Scenario};

fn demo(n: u32) -> Sampler {
    Sampler::manual(
        Arc::new(DemoGpus::new(Scenario::HealthyTraining, n, 1)),
        Box::new(DemoHost::new(Scenario::HealthyTraining, 1)),
        Duration::from_secs(1),
    )
}

#[test]
fn steps_publish_snapshots_and_history() {
    let s = demo(2);
    assert_eq!(s.snapshot().seq, 0);
    s.step_slow(0.0);
    s.step_host(1.0);
    s.step_gpu(1.0);
    let snap = s.snapshot();
    assert_eq!(snap.seq, 2);
    assert_eq!(snap.gpus.len(), 2);
    assert!(snap.host.is_some());
    assert!(snap.gpus.iter().all(|g| g.processes.value().is_some_and(|p| !p.is_empty())), "slow data merged");
    assert!(snap.gpus.iter().all(|g| g.pcie_rx_bps.get().is_some()));
    assert!(s.with_history(|h| h.series("gpu1.util").is_some() && h.series(keys::CPU).is_some()));
}

#[test]
fn a_recording_gets_one_line_per_tick_whatever_wakes_the_reader() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rec.jsonl");
    let s = demo(1);
    s.step_gpu(0.0);
    s.start_recording(&path).unwrap();
    let lines = || s.recording().map_or(0, |(_, n)| n);
    for t in 1..=3 {
        s.step_host(f64::from(t));
        s.check_stall();
        assert_eq!(lines(), u64::try_from(t - 1).unwrap_or(0), "host steps and the watchdog add no line");
        s.step_gpu(f64::from(t));
        assert_eq!(lines(), u64::try_from(t).unwrap_or(0), "the GPU step completes the tick");
    }
    s.step_slow(4.0);
    assert_eq!(lines(), 3, "a slow step is not a tick");
}

#[test]
fn a_slow_step_already_in_flight_is_not_run_twice() {
    let s = demo(1);
    let owner = s.shared.slow_owner.lock().unwrap();
    s.step_slow(1.0);
    assert!(s.shared.slow.load().is_empty(), "the second slow step did nothing");
    drop(owner);
    s.step_slow(2.0);
    assert_eq!(s.shared.slow.load().len(), 1);
}

#[test]
fn prefill_is_for_demo_only() {
    let s = demo(1);
    s.prefill_demo(60.0);
    assert_eq!(s.with_history(|h| h.series("gpu0.util").map(|x| x.fine_len())), Some(60));
    assert!(s.snapshot().gpu_t.is_some_and(|t| t < 0.0));
    let real = Sampler::manual(
        Arc::new(crate::telemetry::source::StaticGpus::unavailable(crate::telemetry::source::NoGpu {
            summary: Default::default(),
            next_step: Default::default(),
            attempts: Vec::new(),
            failure: None,
        })),
        Box::new(DemoHost::new(Scenario::Idle, 1)),
        Duration::from_secs(1),
    );
    real.prefill_demo(60.0);
    assert!(real.with_history(|h| h.is_empty()));
}

#[test]
fn threads_publish_and_wake_the_reader() {
    let s = Sampler::start(
        Arc::new(DemoGpus::new(Scenario::Idle, 1, 1)),
        Box::new(DemoHost::new(Scenario::Idle, 1)),
        Duration::from_millis(250),
    )
    .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    s.set_notify(move |snap| {
        let _ = tx.send(snap.seq);
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.snapshot().gpu_t.is_none() || s.snapshot().host_t.is_none() {
        assert!(Instant::now() < deadline, "sampler threads published nothing");
        let _ = rx.recv_timeout(Duration::from_millis(100));
    }
    assert!(rx.recv_timeout(Duration::from_secs(5)).is_ok(), "notify called");
}

/// A host whose CPU runs at `cpu` % and where "cargo" uses 1.8 cores and "sh" a little.
struct BusyHost {
    cpu: f64,
}

impl HostSource for BusyHost {
    fn sample(&mut self, t: f64) -> HostSample {
        let mut demo = DemoHost::new(Scenario::HealthyTraining, 1).sample(t);
        demo.cpu_pct = crate::telemetry::Reading::Value(self.cpu);
        demo
    }

    fn all_cpu_secs(&mut self, t: f64) -> Option<Vec<(u32, String, f64)>> {
        Some(vec![(100, "cargo".into(), 1.8 * t), (101, "sh".into(), 0.001 * t)])
    }
}

/// A sampler on a host at `cpu` %, after two host and slow ticks 5 s apart.
fn two_slow_ticks_on(cpu: f64) -> Sampler {
    let s = Sampler::manual(
        Arc::new(DemoGpus::new(Scenario::HealthyTraining, 1, 1)),
        Box::new(BusyHost { cpu }),
        Duration::from_secs(1),
    );
    for t in [1.0, 6.0] {
        s.step_host(t);
        s.step_slow(t);
    }
    s
}

#[test]
fn a_busy_host_gets_its_busiest_programs_named_and_a_quiet_one_is_not_read() {
    let top = two_slow_ticks_on(92.0).snapshot().busiest.clone();
    assert_eq!(top.len(), 1, "{top:?}");
    assert_eq!((top[0].name.as_str(), top[0].cpu_pct.round()), ("cargo", 180.0));
    assert!(two_slow_ticks_on(12.0).snapshot().busiest.is_empty());
}

/// A source that names 1 300 GPUs per sample with new indices every time (a hostile server), and
/// a host with 100 000 cores.
struct Hostile {
    inventory: Arc<crate::telemetry::sample::Inventory>,
    tick: std::sync::atomic::AtomicU32,
}

impl GpuSource for Hostile {
    fn status(&self) -> crate::telemetry::source::SourceStatus {
        DemoGpus::new(Scenario::Idle, 1, 1).status()
    }
    fn inventory(&self) -> Arc<crate::telemetry::sample::Inventory> {
        Arc::clone(&self.inventory)
    }
    fn sample(&self, _t: f64) -> Vec<GpuSample> {
        let k = self.tick.fetch_add(1, Ordering::Relaxed);
        (0..1300)
            .map(|i| {
                let mut g = GpuSample::unavailable(k * 1300 + i, GpuHealth::Ok, "x");
                g.util_gpu_pct = crate::telemetry::reading::Reading::Value(50.0);
                g
            })
            .collect()
    }
    fn sample_slow(&self, _t: f64) -> Vec<GpuSlowSample> {
        Vec::new()
    }
}

/// Issue 33, item 6: GPUs the source's inventory does not name are not kept, and no source can
/// grow the history past its caps: 50 ticks of 1 300 new GPU indices and 100 000 cores leave the
/// inventory's GPUs, MAX_CORES cores and a bounded number of series.
#[test]
fn a_hostile_source_cannot_grow_the_history() {
    let demo_inv = DemoGpus::new(Scenario::HealthyTraining, 2, 1).inventory();
    let gpu = Arc::new(Hostile { inventory: demo_inv, tick: std::sync::atomic::AtomicU32::new(0) });
    let s = Sampler::manual(gpu, Box::new(DemoHost::new(Scenario::Idle, 1)), Duration::from_secs(1));
    for t in 0..50 {
        s.step_gpu(f64::from(t));
    }
    let snap = s.snapshot();
    assert!(snap.gpus.iter().all(|g| g.index < 2), "only the inventory's GPUs: {}", snap.gpus.len());
    let series = s.with_history(History::len);
    assert!(series < 100, "{series} series");
    // The history's own cap, and the cores' cap.
    let mut h = History::default();
    let mut host = DemoHost::new(Scenario::Idle, 1).sample(0.0);
    host.per_core_pct = vec![1.0; 100_000];
    record_host(&mut h, 0.0, &host);
    assert!(h.len() <= MAX_CORES + 64, "{}", h.len());
    for i in 0..crate::telemetry::history::MAX_SERIES + 10 {
        h.push(&format!("x{i}"), 0.0, 1.0);
    }
    assert_eq!(h.len(), crate::telemetry::history::MAX_SERIES);
    assert!(h.dropped_series() >= 10);
}
