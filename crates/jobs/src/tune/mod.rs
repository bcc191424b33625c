//! Tuning: the guide's second half as a measured search. Start small, raise the batch until the
//! GPU's memory nears the headroom policy (doubling, then bisecting), then the copies run at once
//! while total throughput still rises, then the data-loading workers and any other parameter, one
//! parameter per trial; every trial measured like `run` and written to a JSON-lines journal a
//! person can read, from which `tune --resume` and the app's Tune view continue.
//!
//! [`spec`] is the question, [`search`] the pure decision (the next setting, or the answer and why
//! the search stopped) as a function of the trials so far, [`trial`] runs and measures one trial,
//! [`journal`] writes and reads the journal, [`oom`] recognises out-of-memory messages, [`peaks`]
//! reads a trial's memory faster than the sampler while it rises.

pub mod journal;
pub mod oom;
pub mod peaks;
pub mod render;
pub mod request;
pub mod search;
pub mod spec;
pub mod trial;

use serde::{Deserialize, Serialize};

use crate::i18n::Message;
use crate::msg;

pub use spec::{Setting, TuneSpec};

/// How a trial ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum TrialEnd {
    /// Every copy exited with 0.
    Ok,
    /// The GPU ran out of memory (a framework said so); the copies were stopped.
    OutOfMemory {
        /// The line that said so.
        oom: oom::OomLine,
    },
    /// The GPU memory in use went over the user's cap; the copies were stopped.
    OverCap {
        /// The memory seen, bytes.
        used: u64,
    },
    /// A copy failed for another reason.
    Failed {
        /// Its exit code, or 128 + the signal.
        code: i32,
        /// The last line of its output.
        last_line: String,
    },
    /// The trial ran past the time limit and was stopped.
    TimedOut,
    /// The command could not be started.
    NotStarted {
        /// Why.
        error: Message,
    },
    /// The user stopped the tune (Ctrl-C) during this trial.
    Interrupted,
}

impl TrialEnd {
    /// The words for the table ("ok", "out of memory" ...).
    pub fn word(&self) -> Message {
        match self {
            TrialEnd::Ok => msg!("ok"),
            TrialEnd::OutOfMemory { .. } => msg!("out of memory"),
            TrialEnd::OverCap { .. } => msg!("over the VRAM cap"),
            TrialEnd::Failed { code, .. } => msg!("failed (exit {code})", code = *code),
            TrialEnd::TimedOut => msg!("time limit"),
            TrialEnd::NotStarted { .. } => msg!("not started"),
            TrialEnd::Interrupted => msg!("interrupted"),
        }
    }

    /// Whether the setting was too large for the GPU's memory.
    pub fn too_much_memory(&self) -> bool {
        matches!(self, TrialEnd::OutOfMemory { .. } | TrialEnd::OverCap { .. })
    }
}

/// One trial: the setting, what ran, and what was measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// 1, 2, ... in the order run.
    pub id: u32,
    /// The parameter this trial moved ("batch", "concurrency", "workers" ...); the first trial's is
    /// its first phase's.
    pub phase: String,
    /// The setting.
    pub setting: Setting,
    /// The first copy's command line, as typed in a shell.
    pub command: String,
    /// The trial's folder (its copies' output and logs).
    pub dir: String,
    /// How it ended.
    pub end: TrialEnd,
    /// Wall time, seconds.
    pub secs: f64,
    /// Throughput in the spec's unit, summed over copies (None when not measured).
    pub throughput: Option<f64>,
    /// GPU memory the trial itself used at its peak (its processes, else the devices' rise over
    /// what was in use before it started), bytes.
    pub vram_peak: Option<u64>,
    /// Peak memory in use on the fullest GPU it used (every process), bytes.
    pub device_peak: Option<u64>,
    /// That GPU's memory, bytes.
    pub device_total: Option<u64>,
    /// Mean GPU utilization over the trial, % (the busiest GPU).
    pub util_mean: Option<f64>,
    /// Mean memory-bandwidth utilization, % (the same GPU).
    pub membw_mean: Option<f64>,
    /// Mean CPU of the trial's processes, % of one core.
    pub cpu_mean_pct: f64,
    /// Bytes read by its processes.
    pub read_bytes: u64,
    /// Bytes written to storage.
    pub write_bytes: u64,
    /// Peak resident memory of its processes, bytes.
    pub rss_peak: u64,
    /// What limited this trial, in a sentence.
    pub verdict: Message,
    /// gpu-doctor's own CPU time during the trial, seconds (the tuner's cost).
    pub tuner_cpu_secs: f64,
    /// Peak memory in use on each GPU the trial used (its memory rose there).
    #[serde(default)]
    pub per_gpu: Vec<GpuPeak>,
}

/// A GPU's peak memory during a trial.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuPeak {
    /// The GPU's index.
    pub gpu: u32,
    /// Memory in use at the peak (every process), bytes.
    pub peak: u64,
    /// Its memory, bytes.
    pub total: Option<u64>,
}

impl Trial {
    /// Free GPU memory at the trial's peak, % of the device (None without memory figures).
    pub fn headroom_pct(&self) -> Option<f64> {
        let (peak, total) = (self.device_peak?, self.device_total.filter(|t| *t > 0)?);
        Some(100.0 * (1.0 - peak as f64 / total as f64))
    }
}

/// Why the search for one parameter stopped.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Stop {
    /// The next step raised throughput by less than the margin.
    Flat {
        /// The value tried.
        tried: u64,
        /// Its gain over the chosen value, %.
        gain_pct: f64,
        /// The GPU was saturated (utilization ≥ 90 %) at the chosen value.
        saturated: bool,
    },
    /// The next value ran out of memory (or over the cap).
    OutOfMemory {
        /// The value.
        at: u64,
    },
    /// The next value left less free memory than the policy, measured or predicted.
    Headroom {
        /// The value.
        at: u64,
        /// Predicted from the trials before, not run.
        predicted: bool,
    },
    /// The next value failed for another reason (not retried).
    Failed {
        /// The value.
        at: u64,
    },
    /// The next value ran past the time limit.
    TimedOut {
        /// The value.
        at: u64,
    },
    /// The range's end was reached.
    RangeEnd,
    /// The trial limit was reached.
    TrialLimit,
    /// The tune was interrupted.
    Interrupted,
    /// A trial gave no throughput figure (the pattern matched nothing).
    NoThroughput {
        /// The value.
        at: u64,
    },
}

/// The end of one parameter's search.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseEnd {
    /// The parameter ("batch", "concurrency", ...).
    pub phase: String,
    /// The value kept (None: not even the first value worked).
    pub chosen: Option<u64>,
    /// Why it stopped.
    pub stop: Stop,
}

/// The answer: the setting to use (the trial that measured it) and why each search stopped.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// The chosen trial's id (None when nothing worked).
    pub best: Option<u32>,
    /// Each parameter's end, in the order searched.
    pub phases: Vec<PhaseEnd>,
}

/// A trial for the tests: how it ended, its throughput, its GPU's peak memory (bytes, on a 24 GiB
/// GPU) and utilization %.
#[cfg(test)]
pub(crate) fn test_trial(
    id: u32,
    phase: String,
    setting: Setting,
    (end, thr, mem, util): (TrialEnd, f64, u64, f64),
) -> Trial {
    const GIB: u64 = 1 << 30;
    Trial {
        id,
        phase,
        setting,
        command: String::new(),
        dir: String::new(),
        end,
        secs: 1.0,
        throughput: Some(thr),
        vram_peak: Some(mem.saturating_sub(GIB)),
        device_peak: Some(mem),
        device_total: Some(24 * GIB),
        util_mean: Some(util),
        membw_mean: None,
        cpu_mean_pct: 0.0,
        read_bytes: 0,
        write_bytes: 0,
        rss_peak: 0,
        verdict: crate::i18n::Message::data(""),
        tuner_cpu_secs: 0.0,
        per_gpu: Vec::new(),
    }
}
