//! "Why is my GPU idle?": bottleneck verdicts over the recent history. The rules follow the feed
//! chain (disk and CPU feeding the GPU), VRAM headroom, clocks and throttling, the PCIe link,
//! the balance between GPUs and the host's memory.
//!
//! Each rule reads the last `window` seconds of the sampler's history (and the latest snapshot
//! for processes, link state and limits) and says what limits the GPU, with a confidence, the
//! numbers and time span it rests on, a plain explanation and the next tuning steps, one change
//! at a time. Rules never fire on too little data: a window less than half covered by samples
//! gives no verdict.
//!
//! This module runs the rules ([`evaluate`]); `finding` holds the verdict types, `context` computes
//! the window's numbers once, `rules` holds one function per rule and the order they run in, and
//! `starve` the CPU feed-chain rules.

mod context;
pub use context::MIN_COVERAGE;
pub use context::{HIGH_UTIL_PCT, LOW_UTIL_PCT};
mod finding;
pub use finding::{Bottleneck, Finding};
mod rules;
mod starve;

use self::context::Ctx;
use self::rules::Rule;
use crate::telemetry::history::History;
use crate::telemetry::history::keys::GpuMetric;
use crate::telemetry::snapshot::Snapshot;

/// Default window, seconds.
pub const DEFAULT_WINDOW_SECS: f64 = 60.0;

/// Evaluates every rule over `[now - window, now]`: the window's numbers are read once, the rules
/// run in their fixed order (`rules::RULES`), and the verdicts come back worst first (by severity,
/// then confidence; equals keep the rules' order).
pub fn evaluate(snap: &Snapshot, h: &History, window: f64, now: f64) -> Vec<Bottleneck> {
    let cx = Ctx::new(snap, h, window, now);
    let mut out: Vec<Bottleneck> = Vec::new();
    for rule in rules::RULES {
        match rule {
            Rule::Machine(judge) => out.extend(judge(&cx)),
            Rule::EachGpu(per_gpu) => {
                for g in &cx.gpus {
                    let mut found: Vec<Bottleneck> = Vec::new();
                    for judge in *per_gpu {
                        if let Some(b) = judge(&cx, g, &found) {
                            found.push(b);
                        }
                    }
                    out.extend(found);
                }
            }
        }
    }
    out.sort_by(|a, b| b.severity.cmp(&a.severity).then(b.confidence.total_cmp(&a.confidence)));
    out
}

/// Seconds until the first verdict on a GPU over `[now - window, now]`: the coverage needed
/// ([`MIN_COVERAGE`] of the window) minus the span the best-covered GPU's utilization samples
/// cover, rounded up. `None` when some GPU is covered enough already or there is no GPU to wait
/// for.
pub fn first_verdict_in(snap: &Snapshot, h: &History, window: f64, now: f64) -> Option<f64> {
    if snap.inventory.gpus.is_empty() || window.is_nan() || window <= 0.0 {
        return None;
    }
    let covered = snap
        .inventory
        .gpus
        .iter()
        .filter_map(|g| {
            context::series(
                h,
                &crate::telemetry::history::keys::gpu(g.index, GpuMetric::Util),
                now - window,
                now,
                0.0,
                0.0,
            )
        })
        .map(|s| s.span)
        .fold(0.0, f64::max);
    let left = (MIN_COVERAGE * window - covered).ceil();
    (left > 0.0).then_some(left)
}

/// Points in a card's utilization sparkline.
pub const SPARK_POINTS: usize = 60;

/// A GPU's utilization over the verdicts' window, as its card and table row show it: the same
/// numbers the verdicts quote (one computation), and a short sparkline.
#[derive(Clone, Debug, PartialEq)]
pub struct UtilWindow {
    /// The GPU.
    pub gpu: u32,
    /// Mean utilization over the window, %.
    pub mean: f64,
    /// Lowest reading, %.
    pub min: f64,
    /// Highest reading, %.
    pub max: f64,
    /// Seconds the readings cover (less than the window while the history is young).
    pub span: f64,
    /// Up to [`SPARK_POINTS`] readings, oldest first (min/max decimated: spikes stay).
    pub spark: Vec<f64>,
}

/// Each GPU's utilization over `[now - window, now]` (GPUs without readings there are left out).
pub fn util_windows(snap: &Snapshot, h: &History, window: f64, now: f64) -> Vec<UtilWindow> {
    snap.inventory
        .gpus
        .iter()
        .filter_map(|g| {
            let key = crate::telemetry::history::keys::gpu(g.index, GpuMetric::Util);
            let s = context::series(h, &key, now - window, now, 0.0, 0.0)?;
            let spark = h.points(&key, now - window, now, SPARK_POINTS).iter().map(|p| p[1]).collect();
            Some(UtilWindow { gpu: g.index, mean: s.mean, min: s.min, max: s.max, span: s.span.min(window), spark })
        })
        .collect()
}

/// What the Diagnosis panel says while there is no verdict yet, counting down to the first one.
pub fn countdown_text(secs: f64) -> crate::i18n::Message {
    crate::msg!("Collecting data: first verdict in {time}.", time = crate::units::duration_words(secs))
}

/// The window a replay at `at` is judged over: the chosen `window`, or the span recorded up to
/// `at` (from `recorded_from`) when that is shorter, so a recording shorter than the window still
/// gets verdicts over what it has.
pub fn replay_window(window: f64, recorded_from: f64, at: f64) -> f64 {
    let recorded = at - recorded_from;
    if recorded > 0.0 { window.min(recorded) } else { window }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::telemetry::demo::{DemoGpus, DemoHost, Scenario};
    use crate::telemetry::sampler::Sampler;

    /// 90 s of a demo scenario, judged over the last 60 s.
    fn judge(sc: Scenario) -> Vec<Bottleneck> {
        let s = Sampler::manual(
            Arc::new(DemoGpus::new(sc, sc.default_gpus(), 5)),
            Box::new(DemoHost::new(sc, 5)),
            Duration::from_secs(1),
        );
        for t in 0..=90 {
            let t = f64::from(t);
            if (t as u32).is_multiple_of(5) {
                s.step_slow(t);
            }
            s.step_host(t);
            s.step_gpu(t);
        }
        let snap = s.snapshot();
        s.with_history(|h| evaluate(&snap, h, 60.0, 90.0))
    }

    fn findings(v: &[Bottleneck]) -> Vec<(Finding, Option<u32>)> {
        v.iter().map(Bottleneck::key).collect()
    }

    /// The scenario yields every expected finding and no warning besides them.
    fn expect(sc: Scenario, want: &[(Finding, Option<u32>)]) {
        let got = judge(sc);
        let keys = findings(&got);
        for w in want {
            assert!(keys.contains(w), "{sc:?}: missing {w:?} in {keys:?}");
        }
        for b in &got {
            if b.severity >= crate::verdict::Verdict::Warn {
                assert!(want.contains(&b.key()), "{sc:?}: unexpected {:?}: {}", b.key(), b.title.en());
            }
            assert!(!b.evidence.is_empty() && !b.next_steps.is_empty() && b.confidence > 0.3, "{b:?}");
            assert_eq!((b.from, b.to), (30.0, 90.0));
        }
        if want.iter().all(|(f, _)| *f != Finding::Healthy) {
            assert!(!keys.iter().any(|(f, _)| *f == Finding::Healthy), "{sc:?}: healthy next to a problem: {keys:?}");
        }
    }

    #[test]
    fn every_demo_scenario_gets_its_verdict_and_no_wrong_one() {
        use Finding::*;
        expect(Scenario::HealthyTraining, &[(Healthy, Some(0))]);
        expect(Scenario::DataStarved, &[(DataStarved, Some(0))]);
        expect(Scenario::IoBound, &[(IoBound, Some(0))]);
        expect(Scenario::ThermalThrottle, &[(ThermalThrottle, Some(0))]);
        expect(Scenario::VramFull, &[(VramNearFull, Some(0))]);
        expect(Scenario::Imbalance, &[(Imbalance, None), (Healthy, Some(0))]);
        expect(Scenario::Idle, &[(NothingOnGpu, Some(0))]);
    }

    #[test]
    fn the_data_starved_demo_rests_on_its_jobs_cpu() {
        let v = judge(Scenario::DataStarved);
        let b = v.iter().find(|b| b.finding == Finding::DataStarved).map(|b| b.evidence.clone()).unwrap_or_default();
        assert!(b.iter().any(|e| e.en().contains("use 342 % of one core")), "{b:?}");
    }

    #[test]
    fn too_little_data_gives_no_verdict() {
        let s = Sampler::manual(
            Arc::new(DemoGpus::new(Scenario::DataStarved, 1, 5)),
            Box::new(DemoHost::new(Scenario::DataStarved, 5)),
            Duration::from_secs(1),
        );
        for t in 0..20 {
            s.step_host(f64::from(t));
            s.step_gpu(f64::from(t));
        }
        let snap = s.snapshot();
        let v = s.with_history(|h| evaluate(&snap, h, 60.0, 20.0));
        assert!(v.iter().all(|b| b.gpu.is_none()), "{v:?}");
    }

    /// A data-starved demo sampled every second at `1..=secs`.
    fn sampled(secs: u32) -> Sampler {
        let s = Sampler::manual(
            Arc::new(DemoGpus::new(Scenario::DataStarved, 1, 5)),
            Box::new(DemoHost::new(Scenario::DataStarved, 5)),
            Duration::from_secs(1),
        );
        s.step_slow(1.0);
        for t in 1..=secs {
            s.step_host(f64::from(t));
            s.step_gpu(f64::from(t));
        }
        s
    }

    #[test]
    fn the_wait_for_the_first_verdict_counts_down() {
        let s = sampled(10);
        let snap = s.snapshot();
        // 10 s covered of the 30 s a 60 s window needs.
        let left = s.with_history(|h| first_verdict_in(&snap, h, 60.0, 10.0));
        assert_eq!(left, Some(20.0));
        assert_eq!(countdown_text(20.0).en(), "Collecting data: first verdict in 20 s.");
        let s = sampled(30);
        let snap = s.snapshot();
        assert_eq!(s.with_history(|h| first_verdict_in(&snap, h, 60.0, 30.0)), None);
        assert!(s.with_history(|h| evaluate(&snap, h, 60.0, 30.0)).iter().any(|b| b.gpu == Some(0)));
    }

    #[test]
    fn a_replay_shorter_than_the_window_is_judged_over_what_it_recorded() {
        for (secs, window) in [(40, 300.0), (20, 60.0)] {
            let s = sampled(secs);
            let snap = s.snapshot();
            let at = f64::from(secs);
            // Half of the chosen window is not covered...
            assert!(s.with_history(|h| evaluate(&snap, h, window, at)).iter().all(|b| b.gpu.is_none()));
            // ...but the recorded span is, and gets the recording's verdict over that span.
            let judged = replay_window(window, 1.0, at);
            assert_eq!(judged, at - 1.0);
            let v = s.with_history(|h| evaluate(&snap, h, judged, at));
            let b = v.iter().find(|b| b.finding == Finding::DataStarved).expect("a data-starved verdict");
            assert_eq!((b.from, b.to), (1.0, at));
        }
        // A recording longer than the window keeps the window.
        assert_eq!(replay_window(60.0, 1.0, 120.0), 60.0);
    }
}
