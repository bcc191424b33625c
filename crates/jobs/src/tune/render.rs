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
    if phase == CONCURRENCY { msg!("{n} copies", n = v) } else { Message::data(format!("{phase} {v}")) }
}

/// A parameter's name as shown: the placeholder's own, or "copies at once".
pub fn phase_label(phase: &str) -> Message {
    if phase == CONCURRENCY { msg!("copies at once") } else { Message::data(phase) }
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
    let thr = t.throughput.map_or_else(|| "?".to_string(), rate);
    let memory = match (t.device_peak, t.headroom_pct()) {
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

    #[test]
    fn rates_keep_three_figures() {
        assert_eq!(rate(1234.56), "1235");
        assert_eq!(rate(12.345), "12.3");
        assert_eq!(rate(0.5), "0.50");
    }
}
