//! Tests of the CPU feed-chain rules: a history built point by point (GPU utilization, host CPU,
//! per-core CPU, the job's CPU) judged over 60 s, and a property test that every verdict's words
//! agree with its evidence.

use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;

use super::super::context::{JOB_CPU_HIGH_PCT, JOB_CPU_SHARE, LOW_UTIL_PCT, SAWTOOTH_HIGH_SHARE, SAWTOOTH_LOW_SHARE};
use super::super::{Bottleneck, Finding, evaluate};
use crate::telemetry::demo::{DemoGpus, DemoHost, Scenario};
use crate::telemetry::history::keys::{self, GpuMetric};
use crate::telemetry::history::{History, HistoryConfig};
use crate::telemetry::sampler::Sampler;
use crate::telemetry::snapshot::Snapshot;

/// One GPU with a training process on it, on the demo's 16-core host.
fn snapshot() -> Arc<Snapshot> {
    let s = Sampler::manual(
        Arc::new(DemoGpus::new(Scenario::HealthyTraining, 1, 3)),
        Box::new(DemoHost::new(Scenario::HealthyTraining, 3)),
        Duration::from_secs(1),
    );
    s.step_slow(0.0);
    s.step_host(0.0);
    s.step_gpu(0.0);
    s.snapshot()
}

/// The window's numbers, one point a second at 31..=90.
struct Window {
    /// GPU 0's utilization, one value per second.
    util: Vec<f64>,
    /// Host CPU, % (every core the same).
    cpu: f64,
    /// iowait, %.
    iowait: f64,
    /// The job's CPU, % of one core, one value per 5 s; `None`: the series is absent.
    job: Option<f64>,
}

/// Judges `w` over `[30, 90]`.
fn judge(w: &Window) -> Vec<Bottleneck> {
    judge_on(w, snapshot())
}

/// Judges `w` over `[30, 90]` with `snap` as the latest snapshot.
fn judge_on(w: &Window, snap: Arc<Snapshot>) -> Vec<Bottleneck> {
    let cores = snap.host.as_ref().map_or(0, |h| h.per_core_pct.len());
    let mut h = History::new(HistoryConfig::default());
    for (k, u) in w.util.iter().enumerate() {
        let t = 31.0 + k as f64;
        h.push(&keys::gpu(0, GpuMetric::Util), t, *u);
        h.push(keys::CPU, t, w.cpu);
        for c in 0..cores {
            h.push(&keys::core(c), t, w.cpu);
        }
        h.push(keys::IOWAIT, t, w.iowait);
        if let Some(j) = w.job.filter(|_| k % 5 == 4) {
            h.push(&keys::gpu(0, GpuMetric::JobCpu), t, j);
        }
    }
    evaluate(&snap, &h, 60.0, 90.0)
}

fn find(v: &[Bottleneck], f: Finding) -> Option<&Bottleneck> {
    v.iter().find(|b| b.finding == f)
}

/// 8 s cycles: 2 s of work at 95 %, 6 s of waiting at 8 %.
fn sawtooth() -> Vec<f64> {
    (0..60).map(|k| if k % 8 < 2 { 95.0 } else { 8.0 }).collect()
}

#[test]
fn flat_utilization_with_the_cpu_busy_elsewhere_is_not_data_starved() {
    // The report in issue 14: 37 % flat, an unrelated build saturating the CPU.
    let v = judge(&Window { util: vec![37.0; 60], cpu: 92.0, iowait: 0.5, job: Some(15.0) });
    assert!(find(&v, Finding::DataStarved).is_none(), "{v:#?}");
    let b = find(&v, Finding::CpuBusyElsewhere).unwrap_or_else(|| panic!("no busy-elsewhere verdict: {v:#?}"));
    assert_eq!(b.title.en(), "GPU 0 is partly used; the CPU is busy with other programs");
    assert!(b.evidence.iter().any(|e| e.en().contains("use 15 % of one core")), "{:?}", b.evidence);
    assert!(b.evidence.iter().any(|e| e.en().contains("host CPU 92 %")), "{:?}", b.evidence);
    assert!(!b.explanation.en().contains("saw-tooth"));
}

#[test]
fn the_busy_elsewhere_verdict_names_the_busiest_program_that_is_not_the_gpus() {
    use crate::telemetry::proctree::BusyProcess;
    let mut snap = (*snapshot()).clone();
    let gpu_pid = snap.gpus[0].processes.value().and_then(|p| p.first()).map(|p| p.pid).expect("a GPU process");
    let busy = |pid: u32, name: &str, cpu_pct: f64| BusyProcess { pid, name: name.into(), cpu_pct };
    // The GPU's own process tops the list here; the verdict names the first other program.
    snap.busiest = vec![busy(gpu_pid, "python", 300.0), busy(999_999, "cargo", 180.0), busy(4, "rustc", 90.0)];
    let v = judge_on(&Window { util: vec![37.0; 60], cpu: 92.0, iowait: 0.5, job: Some(15.0) }, Arc::new(snap));
    let b = find(&v, Finding::CpuBusyElsewhere).unwrap_or_else(|| panic!("no busy-elsewhere verdict: {v:#?}"));
    assert_eq!(b.title.en(), "GPU 0 is partly used; the CPU is busy with other programs (top: cargo, 180 %)");
    assert!(
        b.evidence.iter().any(|e| e.en() == "busiest other program: cargo (pid 999999) at 180 % of one core"),
        "{:?}",
        b.evidence
    );
}

#[test]
fn a_sawtooth_with_the_job_on_the_cpu_is_data_starved() {
    let v = judge(&Window { util: sawtooth(), cpu: 96.0, iowait: 0.5, job: Some(340.0) });
    let b = find(&v, Finding::DataStarved).unwrap_or_else(|| panic!("no data-starved verdict: {v:#?}"));
    assert!(b.explanation.en().contains("saw-tooth"), "{}", b.explanation.en());
    assert!(b.evidence.iter().any(|e| e.en().contains("use 340 % of one core")), "{:?}", b.evidence);
    assert!(find(&v, Finding::CpuBusyElsewhere).is_none());
}

#[test]
fn low_steady_utilization_is_worded_without_the_sawtooth() {
    let v = judge(&Window { util: vec![37.0; 60], cpu: 92.0, iowait: 0.5, job: Some(300.0) });
    let b = find(&v, Finding::DataStarved).unwrap_or_else(|| panic!("no data-starved verdict: {v:#?}"));
    assert!(
        !b.explanation.en().contains("saw-tooth") && b.explanation.en().contains("stays low"),
        "{}",
        b.explanation.en()
    );
}

#[test]
fn a_job_with_a_large_share_of_a_shared_cpu_is_still_its_user() {
    use super::super::context::job_is_cpu_user;
    // A 2-core machine at 95 %: 190 % of one core busy. A job at 60 % is a third of it (another
    // program takes the rest): not its main user. A job at 90 %, or one at 78 % of a 1-core host
    // at 100 %, is.
    assert!(!job_is_cpu_user(60.0, Some(95.0), 2));
    assert!(job_is_cpu_user(90.0, Some(95.0), 2));
    assert!(job_is_cpu_user(78.0, Some(100.0), 1));
    assert!(!job_is_cpu_user(10.0, Some(100.0), 16), "the issue's case: an unrelated build takes the CPU");
    assert!(job_is_cpu_user(120.0, None, 0));
}

#[test]
fn without_per_process_cpu_it_judges_by_the_host_and_says_so() {
    let with_job = judge(&Window { util: sawtooth(), cpu: 92.0, iowait: 0.5, job: Some(300.0) });
    let without = judge(&Window { util: sawtooth(), cpu: 92.0, iowait: 0.5, job: None });
    let (a, b) = match (find(&with_job, Finding::DataStarved), find(&without, Finding::DataStarved)) {
        (Some(a), Some(b)) => (a, b),
        _ => panic!("data-starved missing: {with_job:#?} {without:#?}"),
    };
    assert!(b.confidence < a.confidence, "{} vs {}", b.confidence, a.confidence);
    assert!(
        b.evidence.iter().any(|e| e.en().contains("could not tell which processes use the CPU")),
        "{:?}",
        b.evidence
    );
    assert!(find(&without, Finding::CpuBusyElsewhere).is_none());
}

/// The number right before `suffix` in `line` ("... 42 % of the time" -> 42).
fn number_before(line: &str, suffix: &str) -> Option<f64> {
    let head = &line[..line.find(suffix)?];
    head.split_whitespace().last()?.parse().ok()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Every verdict names the saw-tooth only when it held, and its numbers agree with the
    /// window's: the share below the low threshold, the job's CPU against its threshold.
    #[test]
    fn verdicts_agree_with_their_evidence(
        util in prop::collection::vec(0u8..=100, 60),
        cpu in 0u8..=100,
        iowait in 0u8..=30,
        job in prop::option::of(0u16..=800),
    ) {
        let util: Vec<f64> = util.into_iter().map(f64::from).collect();
        let w = Window { util, cpu: f64::from(cpu), iowait: f64::from(iowait), job: job.map(f64::from) };
        let n = w.util.len() as f64;
        let low = w.util.iter().filter(|u| **u < LOW_UTIL_PCT).count() as f64 / n;
        let high = w.util.iter().filter(|u| **u > super::super::context::HIGH_UTIL_PCT).count() as f64 / n;
        let sawtooth = low >= SAWTOOTH_LOW_SHARE && high >= SAWTOOTH_HIGH_SHARE;
        for b in judge(&w) {
            let words = format!("{} {}", b.title.en(), b.explanation.en());
            prop_assert!(sawtooth || !words.contains("saw-tooth"), "{b:#?}");
            for e in b.evidence.iter().map(crate::i18n::Message::en) {
                let e = e.as_str();
                if let Some(share) = number_before(e, "% of the time") {
                    let below = format!("below {LOW_UTIL_PCT:.0} %");
                    prop_assert!(e.contains(&below), "{e}");
                    prop_assert!((share - 100.0 * low).abs() <= 0.5, "{e}: {low}");
                }
                if let Some(used) = number_before(e, "% of one core on average") {
                    let j = w.job.unwrap_or(f64::NAN);
                    prop_assert!((used - j).abs() <= 0.5, "{e}: {j}");
                }
            }
            // The job is the CPU's user with a full core's worth, or a large share of the host's
            // busy CPU (16 cores at `cpu` % each).
            let busy = w.cpu * 16.0;
            let job_high = |j: f64| j >= JOB_CPU_HIGH_PCT || (busy > 0.0 && j >= JOB_CPU_SHARE * busy);
            match b.finding {
                Finding::DataStarved => prop_assert!(w.job.is_none_or(job_high), "{b:#?}"),
                Finding::CpuBusyElsewhere => prop_assert!(w.job.is_some_and(|j| !job_high(j)), "{b:#?}"),
                _ => {}
            }
        }
    }
}
