//! Memory after 24 h of 1 s samples: drives the real sampler steps (host + GPUs from the demo) for
//! 86 400 simulated seconds, then prints the history size and the process's resident memory.
//!
//! `cargo run --release --example history_24h -- [GPUS]` (default 4 GPUs).

use std::sync::Arc;
use std::time::{Duration, Instant};

use gpu_doctor::telemetry::demo::{DemoGpus, DemoHost, Scenario};
use gpu_doctor::telemetry::sampler::Sampler;

fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
}

fn main() {
    let gpus: u32 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(4);
    let s = Sampler::manual(
        Arc::new(DemoGpus::new(Scenario::DataStarved, gpus, 1)),
        Box::new(DemoHost::new(Scenario::DataStarved, 1)),
        Duration::from_secs(1),
    );
    let started = Instant::now();
    let report = |hours: u32| {
        let (series, bytes) = s.with_history(|h| (h.len(), h.approx_bytes()));
        println!(
            "after {hours:>2} h simulated: {series} series, history buffers {:.1} MiB, process RSS {} MiB",
            bytes as f64 / 1048576.0,
            rss_kib().map_or("n/a".to_string(), |k| format!("{:.1}", k as f64 / 1024.0))
        );
    };
    for t in 0..(48 * 3600u32) {
        let t = f64::from(t);
        if t % 2.0 == 0.0 {
            s.step_slow(t);
        }
        s.step_host(t);
        s.step_gpu(t);
        let h = (t as u32 + 1) / 3600;
        if (t as u32 + 1).is_multiple_of(12 * 3600) {
            report(h);
        }
    }
    println!("{} GPUs, 172800 ticks in {:.1} s", gpus, started.elapsed().as_secs_f64());
}
