//! A tune's answer in words, for the terminal and the app alike: each trial's row, why each
//! parameter's search stopped, and the recommendation with the command to run.

use super::spec::{CONCURRENCY, TuneSpec, shell_line};
use super::{Outcome, Stop, Trial};
use crate::i18n::Message;
use crate::{msg, units};

/// A rate with a sensible number of digits.
pub fn rate(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// "batch 40" / "4 copies".
fn named(phase: &str, v: u64) -> Message {
    if phase == CONCURRENCY { msg!("{n} copies", n = v) } else { super::spec::param_value(phase, v) }
}

/// A parameter's name as shown: "copies at once", the batch and the workers in the reader's
/// language, any other placeholder by its own name.
pub fn phase_label(phase: &str) -> Message {
    match phase {
        CONCURRENCY => msg!("copies at once"),
        super::spec::BATCH => msg!("batch"),
        super::spec::WORKERS => msg!("workers"),
        _ => Message::data(phase),
    }
}

/// Why a parameter's search stopped, in a sentence.
pub fn stop_reason(spec: &TuneSpec, phase: &str, stop: &Stop) -> Message {
    match stop {
        Stop::Flat { tried, gain_pct, saturated } => {
            let base = if *gain_pct < 0.0 {
                msg!(
                    "{setting} lowered throughput by {loss} %",
                    setting = named(phase, *tried),
                    loss = format!("{:.1}", -gain_pct)
                )
            } else {
                msg!(
                    "{setting} raised throughput by {gain} %, less than the {margin} % margin",
                    setting = named(phase, *tried),
                    gain = format!("{gain_pct:.1}"),
                    margin = format!("{:.0}", spec.margin_pct)
                )
            };
            if *saturated { msg!("{reason}: the GPU is saturated", reason = base) } else { base }
        }
        Stop::OutOfMemory { at } => msg!("{setting} ran out of GPU memory", setting = named(phase, *at)),
        Stop::Headroom { at, predicted: true } => msg!(
            "{setting} would leave less GPU memory free than the policy allows (predicted from the trials before it; not run)",
            setting = named(phase, *at)
        ),
        Stop::Headroom { at, predicted: false } => {
            msg!("{setting} left less GPU memory free than the policy allows", setting = named(phase, *at))
        }
        Stop::Failed { at } => msg!(
            "{setting} failed, not from lack of memory (not retried: run that setting alone to see whether it fails again)",
            setting = named(phase, *at)
        ),
        Stop::TimedOut { at } => msg!(
            "{setting} ran past the time limit of {secs} s",
            setting = named(phase, *at),
            secs = format!("{:.0}", spec.trial_timeout_secs)
        ),
        Stop::RangeEnd => msg!("the end of its range was reached"),
        Stop::TrialLimit => msg!("the trial limit ({n}) was reached", n = spec.max_trials),
        Stop::Interrupted => msg!("the tune was interrupted (continue it with --resume)"),
        Stop::NoThroughput { at } => msg!(
            "{setting} gave no throughput figure: the rate pattern matched nothing in its output (see its log)",
            setting = named(phase, *at)
        ),
    }
}

/// The memory policy in words for a GPU of `total` bytes: "keep 20 % of the GPU's memory free;
/// at most 19.2 GiB in use".
pub fn policy(spec: &TuneSpec, total: Option<u64>) -> Message {
    match super::search::limit_with(spec, total) {
        Some(limit) => msg!(
            "keep {headroom} % of the GPU's memory free; at most {limit} in use",
            headroom = format!("{:.0}", spec.headroom_pct),
            limit = units::bytes(limit)
        ),
        None => msg!("no GPU memory figures: the batch is bounded by out-of-memory failures only"),
    }
}

/// The answer: the setting, its measured throughput and memory, each phase's end, the command.
pub struct Answer {
    /// The headline ("Use batch 40, 2 copies: 950 it/s, 19.0 GiB at peak (21 % free)").
    pub headline: Message,
    /// Each parameter: its value and why its search stopped.
    pub phases: Vec<Message>,
    /// The command line to run (one copy; run `concurrency` of them at once), when there is one.
    pub command: Option<String>,
}

/// The answer for `outcome`.
pub fn answer(spec: &TuneSpec, trials: &[Trial], outcome: &Outcome) -> Answer {
    let best = outcome.best.and_then(|id| trials.iter().find(|t| t.id == id));
    let phases = outcome
        .phases
        .iter()
        .map(|p| {
            let why = stop_reason(spec, &p.phase, &p.stop);
            match p.chosen {
                Some(v) if matches!(p.stop, Stop::OutOfMemory { at } if at > v + 1) => msg!(
                    "{phase}: {value}, because {why}; {margin} below it are kept as a margin (a peak differs from run to run and can fall between two samples)",
                    phase = phase_label(&p.phase),
                    value = v,
                    why = why,
                    margin = match p.stop {
                        Stop::OutOfMemory { at } => at - v - 1,
                        _ => 0,
                    }
                ),
                Some(v) => msg!("{phase}: {value}, because {why}", phase = phase_label(&p.phase), value = v, why = why),
                None => msg!("{phase}: no value worked: {why}", phase = phase_label(&p.phase), why = why),
            }
        })
        .collect();
    let Some(t) = best else {
        let not_started = trials.iter().find_map(|t| match &t.end {
            super::TrialEnd::NotStarted { error } => Some(error.clone()),
            _ => None,
        });
        let interrupted = trials.iter().all(|t| t.end == super::TrialEnd::Interrupted);
        let headline = match not_started {
            Some(error) => msg!("The command could not be started: {error}", error = error),
            // Stopped before any trial ended: nothing failed, nothing was measured.
            None if interrupted => msg!("Stopped before a trial ended: no setting was measured."),
            None => msg!("No setting worked: even the first trial failed. See its log and run it alone."),
        };
        return Answer { headline, phases, command: None };
    };
    let runs = runs_of(trials, t);
    let thr = if runs.is_empty() { "?".to_string() } else { rate(runs.iter().sum::<f64>() / runs.len() as f64) };
    let hidden = unseen_memory(trials, outcome);
    let memory = match (t.device_peak, t.headroom_pct()) {
        // Out of memory with a large share shown free: the free figure is not this job's.
        (Some(peak), Some(_)) if hidden.is_some() => {
            msg!("{peak} in use at peak as NVML saw it", peak = units::bytes(peak))
        }
        (Some(peak), Some(free)) => {
            msg!("{peak} in use at peak ({free} % free)", peak = units::bytes(peak), free = format!("{free:.0}"))
        }
        _ => msg!("GPU memory not measured"),
    };
    let headline = msg!(
        "Use {setting}: {rate} {unit}, {memory}",
        setting = t.setting.describe(),
        rate = thr,
        unit = spec.unit.label(),
        memory = memory
    );
    let mut phases = phases;
    if runs.len() >= 2 {
        let mean = runs.iter().sum::<f64>() / runs.len() as f64;
        let spread = runs.iter().map(|r| (r - mean).abs()).fold(0.0, f64::max) / mean * 100.0;
        phases.push(msg!(
            "throughput: the mean of {n} runs ({runs} {unit}), spread ±{spread} %",
            n = runs.len(),
            runs = runs.iter().map(|r| rate(*r)).collect::<Vec<_>>().join(", "),
            unit = spec.unit.label(),
            spread = format!("{spread:.1}")
        ));
    }
    if let Some((at, free)) = hidden {
        phases.push(msg!(
            "batch {at} ran out of memory while the GPU showed {free} % free: the memory this job may use is less than what NVML reports for the GPU (a capped or shared GPU, a MIG slice, a sandbox), or its peak was shorter than the sampling interval; the answer keeps a margin below it",
            at = at,
            free = format!("{free:.0}")
        ));
    }
    let command = spec_command(spec, t);
    Answer { headline, phases, command: Some(command) }
}

/// The chosen setting's command line, runnable as it stands: `{out}` becomes a folder of its own
/// (`out-batch40-c1-1`), and copies run at once in the background, then `wait`.
fn spec_command(spec: &TuneSpec, t: &Trial) -> String {
    let out = |k: u32| format!("out-{}-{k}", t.setting.slug());
    let line = shell_line(&t.setting.command(&spec.command, &out(1), 1));
    if t.setting.concurrency > 1 {
        let mut copies = Vec::new();
        for k in 1..=t.setting.concurrency {
            copies.push(format!("{} &", shell_line(&t.setting.command(&spec.command, &out(k), k))));
        }
        copies.push("wait".into());
        copies.join(" ")
    } else {
        line
    }
}

/// Where the batch search ran out of memory while NVML showed at least [`UNSEEN_FREE_PCT`] of
/// the GPU free: (the batch, the free share at that trial's peak, %).
pub fn unseen_memory(trials: &[Trial], outcome: &Outcome) -> Option<(u64, f64)> {
    let at = outcome.phases.iter().find_map(|p| match p.stop {
        Stop::OutOfMemory { at } if p.phase == super::spec::BATCH => Some(at),
        _ => None,
    })?;
    let oom =
        trials.iter().filter(|t| t.end.too_much_memory() && t.setting.values.get(super::spec::BATCH) == Some(&at));
    let free = oom.filter_map(Trial::headroom_pct).fold(f64::NAN, f64::min);
    (free >= UNSEEN_FREE_PCT).then_some((at, free))
}

/// A GPU that ran out of memory with this share free, %, did not run out of the memory NVML
/// reports (a framework's own fragmentation rarely leaves more than a few % unused).
pub const UNSEEN_FREE_PCT: f64 = 15.0;

/// What limited a trial, as its row shows it: the chosen trial of a batch search that stopped
/// because a larger batch did not fit says so, where the trial alone would offer a larger batch.
pub fn row_verdict(t: &Trial, outcome: &Outcome) -> Message {
    let memory_bound = outcome
        .phases
        .iter()
        .any(|p| p.phase == super::spec::BATCH && matches!(p.stop, Stop::OutOfMemory { .. } | Stop::Headroom { .. }));
    match t.util_mean {
        Some(u) if Some(t.id) == outcome.best && memory_bound && t.verdict == super::trial::busy(u, true) => {
            super::trial::busy(u, false)
        }
        _ => t.verdict.clone(),
    }
}

/// The throughputs measured for `t`'s setting, in the order run (two when a decision within the
/// margin measured it again).
pub fn runs_of(trials: &[Trial], t: &Trial) -> Vec<f64> {
    trials
        .iter()
        .filter(|r| r.setting == t.setting && r.end == super::TrialEnd::Ok)
        .filter_map(|r| r.throughput)
        .collect()
}

/// gpu-doctor's own CPU over the trials: (its seconds, the trials' seconds).
pub fn own_cost(trials: &[Trial]) -> (f64, f64) {
    (trials.iter().map(|t| t.tuner_cpu_secs).sum(), trials.iter().map(|t| t.secs).sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 53, item 12: a step that lost throughput says so, not "raised by -24.1 %".
    #[test]
    fn a_step_that_lost_throughput_says_it_lowered_it() {
        let spec = super::super::request::Request::new(vec!["train".into(), "{batch}".into()])
            .spec(4)
            .unwrap_or_else(|e| panic!("{e}"));
        let lost = stop_reason(&spec, "batch", &Stop::Flat { tried: 64, gain_pct: -24.1, saturated: false });
        assert_eq!(lost.en(), "batch 64 lowered throughput by 24.1 %");
        let flat = stop_reason(&spec, "batch", &Stop::Flat { tried: 64, gain_pct: 3.0, saturated: false });
        assert_eq!(flat.en(), "batch 64 raised throughput by 3.0 %, less than the 5 % margin");
    }

    /// Issue 53, items 10-12: the answer shows the spread of a setting measured twice, says
    /// plainly that memory ran out while NVML showed much of it free (and gives no "% free" as if
    /// it applied), names the margin kept below the size that ran out, and its row does not offer
    /// a larger batch.
    #[test]
    fn the_answer_says_the_spread_the_unseen_memory_and_the_margin() {
        use crate::jobs::tune::{Outcome, PhaseEnd, TrialEnd, test_trial};
        const GIB: u64 = 1 << 30;
        let spec = super::super::request::Request::new(vec!["train".into(), "{batch}".into()])
            .spec(4)
            .unwrap_or_else(|e| panic!("{e}"));
        let at = |b: u64| {
            let mut s = crate::jobs::tune::search::start(&spec);
            s.values.insert("batch".into(), b);
            s
        };
        let oom = TrialEnd::OutOfMemory {
            oom: crate::jobs::tune::oom::OomLine { framework: "PyTorch".into(), line: String::new() },
        };
        let mut chosen = test_trial(2, "batch".into(), at(90), (TrialEnd::Ok, 900.0, 6 * GIB, 60.0));
        chosen.verdict = super::super::trial::busy(60.0, true);
        let trials = vec![
            test_trial(1, "batch".into(), at(90), (TrialEnd::Ok, 1000.0, 6 * GIB, 60.0)),
            chosen,
            test_trial(3, "batch".into(), at(100), (oom, 0.0, 6 * GIB, 0.0)),
        ];
        let outcome = Outcome {
            best: Some(2),
            phases: vec![PhaseEnd { phase: "batch".into(), chosen: Some(90), stop: Stop::OutOfMemory { at: 100 } }],
        };
        let a = answer(&spec, &trials, &outcome);
        let head = a.headline.en();
        assert!(head.contains("950 runs/h") && head.contains("as NVML saw it") && !head.contains("% free"), "{head}");
        let said: Vec<String> = a.phases.iter().map(Message::en).collect();
        assert!(said[0].contains("9 below it are kept as a margin"), "{said:?}");
        assert!(said.iter().any(|p| p.contains("the mean of 2 runs (1000, 900 runs/h), spread ±5.3 %")), "{said:?}");
        assert!(
            said.iter().any(|p| p.contains("batch 100 ran out of memory while the GPU showed 75 % free")),
            "{said:?}"
        );
        let row = row_verdict(&trials[1], &outcome).en();
        assert!(row.contains("a larger batch does not fit") && !row.contains("room for"), "{row}");
        // Another row, or the same trial in a search that did not stop for memory, keeps its own.
        assert_eq!(row_verdict(&trials[0], &outcome), trials[0].verdict);
        let flat = Outcome {
            best: Some(2),
            phases: vec![PhaseEnd {
                phase: "batch".into(),
                chosen: Some(90),
                stop: Stop::Flat { tried: 100, gain_pct: 1.0, saturated: false },
            }],
        };
        assert_eq!(row_verdict(&trials[1], &flat), trials[1].verdict);
    }

    #[test]
    fn rates_keep_three_figures() {
        assert_eq!(rate(1234.56), "1235");
        assert_eq!(rate(12.345), "12.3");
        assert_eq!(rate(0.5), "0.50");
    }
}
