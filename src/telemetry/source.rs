//! The [`GpuSource`] trait (NVML, demo, or nothing) and [`SourceStatus`], which says in plain words
//! where GPU data comes from, or why there is none and what to do.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::sample::{GpuFacts, GpuSample, GpuSlowSample, Inventory};

/// How the operating system says a GPU sleeps, for the words shown with "asleep".
/// A catalogue text (`tr_key!`): show it with `crate::i18n::tr(ASLEEP_STATE)`.
pub const ASLEEP_STATE: &str =
    if cfg!(windows) { crate::tr_key!("power state D3") } else { crate::tr_key!("runtime-suspended") };

/// A producer of GPU samples. Implementations are shared between the fast and the slow sampler
/// threads, so they take `&self` and keep any mutable state behind their own locks.
pub trait GpuSource: Send + Sync {
    /// Where the data comes from.
    fn status(&self) -> SourceStatus;
    /// Versions and devices, read once when the source opens (empty before).
    fn inventory(&self) -> Arc<Inventory>;
    /// Fast metrics of every GPU. `t` is seconds since the sampler started. The slow fields
    /// (PCIe throughput, processes) are filled in by the sampler from [`GpuSource::sample_slow`].
    fn sample(&self, t: f64) -> Vec<GpuSample>;
    /// Slow metrics of every GPU (PCIe throughput, process list), called at a lower cadence.
    fn sample_slow(&self, t: f64) -> Vec<GpuSlowSample>;
    /// The vendor call now running on the fast (`slow == false`) or slow sampler thread, in words
    /// ("nvmlDeviceGetTemperature on GPU 1"), for the not-responding message.
    fn in_flight(&self, _slow: bool) -> Option<String> {
        None
    }
    /// The user asked to read a sleeping GPU anyway (it wakes up).
    fn allow_wake(&self) {}
    /// Configuration and health facts of every GPU (persistence, compute and MIG mode, row
    /// remapping...), read on demand by the checklist; empty when the source has none.
    fn facts(&self) -> Vec<GpuFacts> {
        Vec::new()
    }
    /// The server the data comes from, for a source reading one over SSH (`None`: this machine).
    fn remote(&self) -> Option<super::remote::RemoteInfo> {
        None
    }
    /// Gets ready to sample (opens the library when the source opens lazily). Called on the GPU
    /// sampler thread before [`GpuSource::sample`], so a new inventory is shown before the first
    /// sample (which may block) is taken.
    fn prepare(&self) {}
}

/// One library path tried when loading NVML, and what happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadAttempt {
    /// The path or library name passed to the loader.
    pub path: String,
    /// The loader's or NVML's answer.
    pub error: String,
}

/// Why there is no GPU data, in plain words, with the next step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoGpu {
    /// One sentence: what is wrong.
    pub summary: String,
    /// What to do next.
    pub next_step: String,
    /// Every library path tried, with its error.
    pub attempts: Vec<LoadAttempt>,
}

/// Where GPU data comes from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SourceStatus {
    /// The NVIDIA Management Library, loaded from `library`.
    Nvml {
        /// The library path that loaded.
        library: String,
        /// The paths tried before it, with their errors.
        attempts: Vec<LoadAttempt>,
    },
    /// NVML is being opened (on the sampler thread, so a hung driver cannot block the window).
    Opening,
    /// Every NVIDIA GPU is asleep (runtime-suspended on Linux, in power state D3 on Windows); only
    /// its power state is read so it stays asleep.
    Asleep {
        /// PCI addresses of the sleeping functions.
        functions: Vec<String>,
    },
    /// Simulated data. Always labelled DEMO.
    Demo {
        /// Scenario name.
        scenario: String,
        /// Number of simulated GPUs.
        gpus: u32,
        /// Seed of the simulation.
        seed: u64,
    },
    /// No GPU data.
    Unavailable(NoGpu),
    /// A recording played back. Always labelled REPLAY.
    Replay {
        /// The recording's file.
        file: String,
        /// Where its data came from when it was recorded (e.g. "NVML (libnvidia-ml.so.1)").
        recorded: String,
    },
}

impl SourceStatus {
    /// Short label for a status bar: "NVML (libnvidia-ml.so.1)", "DEMO: data-starved", "no GPU data".
    pub fn label(&self) -> String {
        match self {
            SourceStatus::Nvml { library, .. } => format!("NVML ({library})"),
            SourceStatus::Demo { scenario, gpus, .. } => {
                crate::tr!("DEMO data: {scenario}, {gpus} simulated GPU(s)", scenario = scenario, gpus = gpus)
            }
            SourceStatus::Opening => crate::tr!("opening NVML").to_string(),
            SourceStatus::Asleep { .. } => {
                crate::tr!("GPU asleep ({state})", state = crate::i18n::tr(ASLEEP_STATE))
            }
            SourceStatus::Unavailable(_) => crate::tr!("no GPU data").to_string(),
            SourceStatus::Replay { file, recorded } => {
                crate::tr!("REPLAY of {file} (recorded from {recorded})", file = file, recorded = recorded)
            }
        }
    }

    /// True for a recording played back.
    pub fn is_replay(&self) -> bool {
        matches!(self, SourceStatus::Replay { .. })
    }

    /// True for simulated data.
    pub fn is_demo(&self) -> bool {
        matches!(self, SourceStatus::Demo { .. })
    }
}

/// A source whose status and inventory never change and which is never sampled: the machine
/// without a usable driver (no GPUs, and why) or a recording played back.
pub struct StaticGpus {
    status: SourceStatus,
    inventory: Arc<Inventory>,
}

impl StaticGpus {
    /// A source with this status and inventory.
    pub fn new(status: SourceStatus, inventory: Arc<Inventory>) -> Self {
        StaticGpus { status, inventory }
    }

    /// The source used when NVML could not be opened: no GPUs, and the reason.
    pub fn unavailable(reason: NoGpu) -> Self {
        Self::new(SourceStatus::Unavailable(reason), Arc::new(Inventory::default()))
    }
}

impl GpuSource for StaticGpus {
    fn status(&self) -> SourceStatus {
        self.status.clone()
    }
    fn inventory(&self) -> Arc<Inventory> {
        Arc::clone(&self.inventory)
    }
    fn sample(&self, _t: f64) -> Vec<GpuSample> {
        Vec::new()
    }
    fn sample_slow(&self, _t: f64) -> Vec<GpuSlowSample> {
        Vec::new()
    }
}
