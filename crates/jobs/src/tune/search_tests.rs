//! The search against models of a workload (no process runs): each shape's optimum and the reason
//! it stops, resuming, the trial limit and never running a size predicted not to fit.

use std::collections::BTreeMap;

use super::*;
use crate::jobs::tune::spec::{Param, Unit};

const GIB: u64 = 1 << 30;

fn spec(params: &[(&str, u64, u64)], concurrency: (u64, u64)) -> TuneSpec {
    TuneSpec {
        command: vec!["w".into()],
        params: params
            .iter()
            .map(|(n, lo, hi)| Param { name: n.to_string(), range: Range { lo: *lo, hi: *hi } })
            .collect(),
        concurrency: Range { lo: concurrency.0, hi: concurrency.1 },
        headroom_pct: 20.0,
        vram_cap: None,
        trial_timeout_secs: 60.0,
        margin_pct: 5.0,
        unit: Unit::RunsPerHour,
        max_trials: 40,
    }
}

/// What a model says of one setting: how it ends, throughput, device memory (bytes), util %.
type Model = dyn Fn(&Setting) -> (TrialEnd, f64, u64, f64);

fn trial(id: u32, phase: String, setting: Setting, r: (TrialEnd, f64, u64, f64)) -> Trial {
    crate::jobs::tune::test_trial(id, phase, setting, r)
}

fn simulate(spec: &TuneSpec, model: &Model, mut trials: Vec<Trial>) -> (Vec<Trial>, Outcome) {
    loop {
        match next(spec, &trials) {
            Next::Run { phase, setting } => {
                let id = trials.len() as u32 + 1;
                let r = model(&setting);
                trials.push(trial(id, phase, setting, r));
                assert!(trials.len() < 100, "the search does not end");
            }
            Next::Done(o) => return (trials, o),
        }
    }
}

fn value(t: &Trial, name: &str) -> u64 {
    t.setting.values.get(name).copied().unwrap_or(0)
}

/// Training-like: memory 1 GiB + 2 GiB + 0.4 GiB per item; OOM past 24 GiB; throughput rises.
fn memory_limited(s: &Setting) -> (TrialEnd, f64, u64, f64) {
    let b = s.values["batch"] as f64;
    let mem = ((1.0 + 2.0 + 0.4 * b) * GIB as f64) as u64;
    if mem > 24 * GIB {
        return (
            TrialEnd::OutOfMemory {
                oom: crate::jobs::tune::oom::OomLine { framework: "PyTorch".into(), line: String::new() },
            },
            0.0,
            24 * GIB,
            0.0,
        );
    }
    (TrialEnd::Ok, 1000.0 * b / (20.0 + b), mem, 100.0 * b / (20.0 + b))
}

#[test]
fn memory_limited_stops_at_the_largest_batch_within_the_headroom_without_running_past_it() {
    let sp = spec(&[("batch", 1, 1024)], (1, 1));
    let (trials, o) = simulate(&sp, &memory_limited, Vec::new());
    // 1 + 2 + 0.4 b <= 0.8 * 24  =>  b <= 40.5
    let best = trials.iter().find(|t| Some(t.id) == o.best).unwrap();
    assert_eq!(value(best, "batch"), 40);
    assert!(matches!(o.phases[0].stop, Stop::Headroom { predicted: true, .. }), "{:?}", o.phases);
    assert!(trials.iter().all(|t| t.end == TrialEnd::Ok), "a size that would not fit was run");
    let batches: Vec<u64> = trials.iter().map(|t| value(t, "batch")).collect();
    assert_eq!(batches, [1, 2, 4, 8, 16, 32, 40]);
}

#[test]
fn an_out_of_memory_below_the_line_is_bisected_and_never_retried() {
    // Fragmentation: out of memory from batch 20 on although the line says 40 fits.
    let model = |s: &Setting| {
        if s.values["batch"] >= 20 {
            (
                TrialEnd::OutOfMemory {
                    oom: crate::jobs::tune::oom::OomLine { framework: "PyTorch".into(), line: String::new() },
                },
                0.0,
                10 * GIB,
                0.0,
            )
        } else {
            memory_limited(s)
        }
    };
    let sp = spec(&[("batch", 1, 1024)], (1, 1));
    let (trials, o) = simulate(&sp, &model, Vec::new());
    let best = trials.iter().find(|t| Some(t.id) == o.best).unwrap();
    // Out of memory at 20 keeps a margin of a sixteenth (one): 19.
    assert_eq!(value(best, "batch"), 19, "{:?}", o.phases);
    assert_eq!(o.phases[0].stop, Stop::OutOfMemory { at: 20 });
    assert_eq!(trials.iter().filter(|t| value(t, "batch") == 20).count(), 1, "an out of memory was retried");
}

/// Issue 53, item 11: a size that ran out of memory is never the neighbour of the answer: a
/// sixteenth of it (at least one) is kept free of trials, and the answer below that.
#[test]
fn the_answer_keeps_a_margin_below_the_smallest_size_that_ran_out_of_memory() {
    let oom = || TrialEnd::OutOfMemory {
        oom: crate::jobs::tune::oom::OomLine { framework: "PyTorch".into(), line: String::new() },
    };
    // NVML sees a quarter of the memory in use (a capped or shared GPU): no headroom stop, only
    // the out of memory from 100 on; throughput rises by 10 % a step, more than the margin.
    let model = move |s: &Setting| {
        let b = s.values["batch"];
        if b >= 100 { (oom(), 0.0, 6 * GIB, 0.0) } else { (TrialEnd::Ok, 1.1f64.powi(b as i32), 6 * GIB, 50.0) }
    };
    let sp = spec(&[("batch", 1, 1024)], (1, 1));
    let (trials, o) = simulate(&sp, &model, Vec::new());
    let best = trials.iter().find(|t| Some(t.id) == o.best).unwrap();
    let chosen = value(best, "batch");
    let ran_out = trials.iter().filter(|t| t.end.too_much_memory()).map(|t| value(t, "batch")).min().unwrap();
    assert!(matches!(o.phases[0].stop, Stop::OutOfMemory { at } if at == ran_out), "{:?}", o.phases);
    // Not the neighbour of the size that ran out: a sixteenth of it below, and close to that.
    let top = below_memory(ran_out, &o.phases[0].stop);
    assert!(chosen <= top && chosen + 4 >= top, "batch {chosen}, out of memory at {ran_out}: {:?}", o.phases);
    assert!(trials.iter().all(|t| value(t, "batch") <= top || t.end.too_much_memory()), "a trial ran in the margin");
    assert_eq!(below_memory(100, &Stop::OutOfMemory { at: 100 }), 94);
    assert_eq!(below_memory(2, &Stop::OutOfMemory { at: 2 }), 1);
    assert_eq!(below_memory(100, &Stop::Headroom { at: 100, predicted: false }), 99);
}

/// Issue 53, item 10: a training job on the CPU (no GPU figures) whose throughput peaks at batch
/// 256 and falls after: the search stops at the first larger batch that does not gain the margin.
#[test]
fn falling_throughput_stops_the_batch_without_any_gpu_figure() {
    let model = |s: &Setting| {
        let b = s.values["batch"] as f64;
        // Rises to 1,407 samples/s at 256, then falls (cache misses): 1,100 at 512, 846 at 1024.
        let thr = if b <= 256.0 { 1407.0 * (b / 256.0).powf(0.3) } else { 1407.0 * (256.0 / b).powf(0.37) };
        (TrialEnd::Ok, thr, 0, 0.0)
    };
    let sp = spec(&[("batch", 1, 1024)], (1, 1));
    let (trials, o) = simulate(&sp, &model, Vec::new());
    let best = trials.iter().find(|t| Some(t.id) == o.best).unwrap();
    assert_eq!(value(best, "batch"), 256, "{:?}", o.phases);
    assert!(matches!(o.phases[0].stop, Stop::Flat { tried: 512, saturated: false, .. }), "{:?}", o.phases);
    assert!(trials.iter().all(|t| value(t, "batch") <= 512), "it went on past a loss");
}

/// Issue 53, item 10: flat throughput (100 samples/s from batch 8 to 64) keeps the smallest.
#[test]
fn flat_throughput_keeps_the_smallest_batch() {
    let model = |_: &Setting| (TrialEnd::Ok, 100.0, 0, 0.0);
    let sp = spec(&[("batch", 8, 64)], (1, 1));
    let (trials, o) = simulate(&sp, &model, Vec::new());
    let best = trials.iter().find(|t| Some(t.id) == o.best).unwrap();
    assert_eq!(value(best, "batch"), 8, "{:?}", o.phases);
    // The deciding gain (0 %) is within the margin: 8 and 16 were each measured twice.
    let batches: Vec<u64> = trials.iter().map(|t| value(t, "batch")).collect();
    assert_eq!(batches, [8, 16, 8, 16]);
}

/// Issue 53, item 10: a gain within the margin is measured again and decided on the means, so
/// one lucky run does not choose (noise ±30 % on a busy machine).
#[test]
fn a_decision_within_the_margin_is_taken_on_two_runs_each() {
    use std::cell::Cell;
    // Batch 16 truly gains 10 % over 8, but its first run is unlucky (-1 %): alone it would stop
    // the search at 8; its second run (+21 %) brings the mean to +10 %.
    let runs16 = std::rc::Rc::new(Cell::new(0));
    let model = move |s: &Setting| {
        let b = s.values["batch"];
        let thr = match b {
            8 => 100.0,
            16 => {
                runs16.set(runs16.get() + 1);
                if runs16.get() == 1 { 99.0 } else { 121.0 }
            }
            _ => 110.0,
        };
        (TrialEnd::Ok, thr, 0, 0.0)
    };
    let sp = spec(&[("batch", 8, 32)], (1, 1));
    let (trials, o) = simulate(&sp, &model, Vec::new());
    let best = trials.iter().find(|t| Some(t.id) == o.best).unwrap();
    assert_eq!(value(best, "batch"), 16, "{:?}", o.phases);
    let batches: Vec<u64> = trials.iter().map(|t| value(t, "batch")).collect();
    assert_eq!(batches, [8, 16, 8, 16, 32, 32], "{:?}", o.phases);
}

/// Inference-like: the GPU saturates at batch ~20 (a minimum kernel time, a per-step overhead).
fn saturating(s: &Setting) -> (TrialEnd, f64, u64, f64) {
    let b = s.values["batch"] as f64;
    let gpu = (10.0f64).max(1.0 * b);
    let step = 2.0 + gpu;
    let n = s.concurrency as f64;
    let demand = n * gpu / step;
    let share = (1.0 / demand).min(1.0);
    let mem = ((1.0 + n * (1.0 + 0.1 * b)) * GIB as f64) as u64;
    (TrialEnd::Ok, n * 1000.0 * b / step * share, mem, (100.0 * demand).min(100.0))
}

#[test]
fn a_saturated_gpu_stops_the_batch_and_concurrency_on_flat_throughput() {
    let sp = spec(&[("batch", 1, 1024)], (1, 16));
    let (trials, o) = simulate(&sp, &saturating, Vec::new());
    let best = trials.iter().find(|t| Some(t.id) == o.best).unwrap();
    assert_eq!((value(best, "batch"), best.setting.concurrency), (32, 2), "{:?}", o.phases);
    assert!(matches!(o.phases[0].stop, Stop::Flat { tried: 64, saturated: true, .. }), "{:?}", o.phases);
    assert!(matches!(o.phases[1].stop, Stop::Flat { tried: 4, .. }), "{:?}", o.phases);
}

/// Loading-bound: each worker loads 100 items/s, the CPU has 4 cores; the GPU could do 800/s.
fn worker_limited(s: &Setting) -> (TrialEnd, f64, u64, f64) {
    let w = s.values["workers"] as f64;
    let load = if w == 0.0 { 50.0 } else { 100.0 * w.min(4.0) };
    let thr = load.min(800.0);
    (TrialEnd::Ok, thr, 6 * GIB, 100.0 * thr / 800.0)
}

#[test]
fn workers_rise_until_the_cpu_is_full() {
    let sp = spec(&[("workers", 0, 16)], (1, 1));
    let (trials, o) = simulate(&sp, &worker_limited, Vec::new());
    let best = trials.iter().find(|t| Some(t.id) == o.best).unwrap();
    assert_eq!(value(best, "workers"), 4);
    assert!(matches!(o.phases[0].stop, Stop::Flat { tried: 8, saturated: false, .. }), "{:?}", o.phases);
    // 8 gains nothing over 4: within the margin, so both were measured a second time.
    let tried: Vec<u64> = trials.iter().map(|t| value(t, "workers")).collect();
    assert_eq!(tried, [0, 1, 2, 4, 8, 4, 8]);
}

#[test]
fn a_failure_stops_its_parameter_and_keeps_the_last_good_value() {
    let model = |s: &Setting| {
        if s.values["batch"] == 16 {
            (TrialEnd::Failed { code: 1, last_line: "illegal memory access".into() }, 0.0, 3 * GIB, 0.0)
        } else {
            memory_limited(s)
        }
    };
    let sp = spec(&[("batch", 1, 1024), ("workers", 1, 2)], (1, 1));
    let (trials, o) = simulate(&sp, &model, Vec::new());
    assert_eq!(o.phases[0], PhaseEnd { phase: "batch".into(), chosen: Some(8), stop: Stop::Failed { at: 16 } });
    assert_eq!(trials.iter().filter(|t| value(t, "batch") == 16).count(), 1, "a failure was retried");
    // The search goes on with the next parameter at batch 8.
    assert!(trials.iter().any(|t| t.phase == "workers" && value(t, "batch") == 8 && value(t, "workers") == 2));
}

#[test]
fn resuming_replays_the_journal_and_interrupted_trials_run_again() {
    let sp = spec(&[("batch", 1, 1024)], (1, 1));
    let (all, done) = simulate(&sp, &memory_limited, Vec::new());
    let mut part: Vec<Trial> = all[..3].to_vec();
    part.push(trial(4, "batch".into(), all[3].setting.clone(), (TrialEnd::Interrupted, 0.0, 0, 0.0)));
    let so_far = outcome_so_far(&sp, &part, Stop::Interrupted);
    assert_eq!(so_far.phases[0], PhaseEnd { phase: "batch".into(), chosen: Some(4), stop: Stop::Interrupted });
    assert_eq!(so_far.best, Some(3));
    let (resumed, again) = simulate(&sp, &memory_limited, part);
    assert_eq!(resumed.len(), all.len() + 1);
    let best = |ts: &[Trial], o: &Outcome| ts.iter().find(|t| Some(t.id) == o.best).map(|t| t.setting.clone());
    assert_eq!(best(&resumed, &again), best(&all, &done));
}

#[test]
fn the_trial_limit_ends_with_the_best_so_far() {
    let mut sp = spec(&[("batch", 1, 1024)], (1, 1));
    sp.max_trials = 3;
    let (trials, o) = simulate(&sp, &memory_limited, Vec::new());
    assert_eq!(trials.len(), 3);
    assert_eq!(o.phases[0].stop, Stop::TrialLimit);
    assert_eq!(o.best, Some(3));
}

#[test]
fn a_cap_below_the_headroom_is_the_limit() {
    let mut sp = spec(&[("batch", 1, 1024)], (1, 1));
    sp.vram_cap = Some(10 * GIB);
    let (trials, o) = simulate(&sp, &memory_limited, Vec::new());
    let best = trials.iter().find(|t| Some(t.id) == o.best).unwrap();
    // 1 + 2 + 0.4 b <= 10  =>  b <= 17.5; 17 gains 3 % over 16, within the margin: 16 is kept.
    assert_eq!(value(best, "batch"), 16);
    assert!(trials.iter().any(|t| value(t, "batch") == 17), "17 was not tried");
    assert!(trials.iter().all(|t| t.device_peak.unwrap() <= 10 * GIB));
    let _unused: BTreeMap<String, u64> = BTreeMap::new();
}
