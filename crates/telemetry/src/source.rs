//! The [`GpuSource`] trait (NVML, demo, or nothing) and [`SourceStatus`], which says in plain words
//! where GPU data comes from, or why there is none and what to do.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::i18n::Message;

use super::sample::{GpuFacts, GpuSample, GpuSlowSample, Inventory};

/// How the operating system says a GPU sleeps, for the words shown with "asleep".
/// A catalogue key (`tr_key!`): show it as `Message::new(ASLEEP_STATE)`.
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
    fn in_flight(&self, _slow: bool) -> Option<crate::i18n::Message> {
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
    fn remote(&self) -> Option<super::remote::info::RemoteInfo> {
        None
    }
    /// Each GPU's memory in use now, bytes: one cheap call per GPU, for a reader that needs the
    /// figure more often than the sampler takes it (a tune's trial while its memory rises).
    /// Empty when the source cannot say (none open, a simulation, a remote server).
    fn memory_used(&self) -> Vec<(u32, u64)> {
        Vec::new()
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

/// A device query's NVML_ERROR_INSUFFICIENT_POWER, NVML_ERROR_IRQ_ISSUE,
/// NVML_ERROR_RESET_REQUIRED, NVML_ERROR_CORRUPTED_INFOROM and NVML_ERROR_TIMEOUT, as a reading's
/// reason (NVML API reference, `nvmlReturn_t` and `nvmlDeviceGetHandleByIndex_v2`:
/// <https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceEnumvs.html>).
pub const NVML_INSUFFICIENT_POWER: &str =
    crate::tr_key!("the GPU's external power cables are not attached properly (NVML: insufficient power)");
/// See [`NVML_INSUFFICIENT_POWER`].
pub const NVML_IRQ_ISSUE: &str = crate::tr_key!("the driver saw an interrupt problem with the GPU (NVML: IRQ issue)");
/// See [`NVML_INSUFFICIENT_POWER`].
pub const NVML_RESET_REQUIRED: &str =
    crate::tr_key!("the GPU needs a reset before it works again (NVML: reset required)");
/// See [`NVML_INSUFFICIENT_POWER`].
pub const NVML_CORRUPTED_INFOROM: &str = crate::tr_key!("the GPU's InfoROM is corrupted (NVML: corrupted InfoROM)");
/// See [`NVML_INSUFFICIENT_POWER`].
pub const NVML_TIMEOUT: &str = crate::tr_key!("the driver did not answer in time (NVML: timeout)");

/// Why there is no GPU data, in plain words, with the next step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoGpu {
    /// One sentence: what is wrong.
    #[serde(with = "crate::i18n::message::compact")]
    pub summary: Message,
    /// What to do next.
    #[serde(with = "crate::i18n::message::compact")]
    pub next_step: Message,
    /// Every library path tried, with its error.
    pub attempts: Vec<LoadAttempt>,
    /// What kind of failure NVML's initialisation gave, when it got that far: the stable fact
    /// behind `summary`, which checks judge by and which a reader in another language gets
    /// explained in theirs. (Absent in captures from before it existed.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<NvmlFailure>,
}

impl NoGpu {
    /// The summary and next step for a machine running Windows or not: made again from `failure`
    /// when it is known (a Linux capture read on a Windows desk gets the Linux advice), else the
    /// stored messages (a catalogue text in captures made before messages existed).
    pub fn shown_message(&self, windows: bool) -> (Message, Message) {
        match self.failure {
            Some(f) if f != NvmlFailure::Other => f.explain_message(windows),
            _ => (self.summary.clone(), self.next_step.clone()),
        }
    }

    /// The summary for this machine (see [`NoGpu::shown_message`]).
    pub fn summary_message(&self) -> Message {
        self.shown_message(cfg!(windows)).0
    }

    /// Whether no NVML library was found at all.
    pub fn is_not_found(&self) -> bool {
        self.failure == Some(NvmlFailure::NotFound)
            // (A capture made before `failure` existed holds the English summary.)
            || (self.failure.is_none() && self.summary.en().contains("was not found"))
    }

    /// Whether NVML said the driver's kernel module and its libraries differ in version.
    pub fn is_version_mismatch(&self) -> bool {
        self.failure == Some(NvmlFailure::VersionMismatch)
            // (A capture made before `failure` existed holds the English summary.)
            || self.summary.en().contains("different versions")
    }
}

/// The kinds of NVML initialisation failure gpu-doctor explains.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NvmlFailure {
    /// The library is not there: no driver installed.
    NotFound,
    /// The library loaded but the driver is not running.
    DriverNotLoaded,
    /// The kernel module and the libraries have different versions.
    VersionMismatch,
    /// The driver refused this user.
    NoPermission,
    /// NVML loaded but a library it needs did not.
    DependencyMissing,
    /// A GPU fell off the bus.
    GpuLost,
    /// The operating system blocked access (a container's device rules).
    OsBlocked,
    /// The library lacks a function gpu-doctor needs.
    TooOld,
    /// Anything else.
    Other,
}

impl NvmlFailure {
    /// Plain-words summary and next step, as messages, for a machine running Windows
    /// (`windows`) or Linux.
    pub fn explain_message(self, windows: bool) -> (Message, Message) {
        let (s, n) = match self {
            NvmlFailure::NotFound => (
                crate::msg!(
                    "The NVIDIA driver's management library (NVML) was not found, so no NVIDIA driver seems to be installed."
                ),
                crate::msg!(
                    "Install the NVIDIA driver for your GPU (Linux: your distribution's nvidia-driver package; Windows: the driver from NVIDIA). In a container, start it with --gpus all (Docker) or pass the GPU through CDI."
                ),
            ),
            NvmlFailure::DriverNotLoaded if windows => (
                crate::msg!(
                    "The NVIDIA library is installed but the NVIDIA driver is not running: Windows has stopped or disabled the GPU, or it has no NVIDIA driver."
                ),
                crate::msg!(
                    "Open Device Manager (devmgmt.msc) → Display adapters: the NVIDIA GPU's status names the problem (Code 43, 22, 28 …). `gpu-doctor-cli check` says which and how to fix it."
                ),
            ),
            NvmlFailure::DriverNotLoaded => (
                crate::msg!("The NVIDIA library is installed but the kernel driver is not loaded."),
                crate::msg!(
                    "Check `lsmod | grep nvidia` and `sudo dmesg | grep -i nvidia`; nouveau or Secure Boot may block the module. Rebooting after a driver install often fixes this."
                ),
            ),
            NvmlFailure::VersionMismatch => (
                crate::msg!(
                    "The driver was updated: the loaded kernel module and the user-space library have different versions."
                ),
                crate::msg!("Reboot (or reload the nvidia kernel modules) so both sides run the same version."),
            ),
            NvmlFailure::NoPermission => (
                crate::msg!("The NVIDIA driver refused access to the GPU for this user."),
                crate::msg!(
                    "Check that /dev/nvidia* are readable by your user (group 'video' on some distributions), or ask an administrator."
                ),
            ),
            NvmlFailure::DependencyMissing => (
                crate::msg!("NVML loaded but could not find a library it depends on."),
                crate::msg!("Reinstall the NVIDIA driver so its libraries match."),
            ),
            NvmlFailure::GpuLost => (
                crate::msg!("A GPU has fallen off the bus."),
                crate::msg!(
                    "Look for Xid 79 in the kernel log (`sudo dmesg | grep -i xid`), reseat the card or check its power, then reboot."
                ),
            ),
            NvmlFailure::OsBlocked => (
                crate::msg!(
                    "The operating system blocked access to the GPU (often a container's cgroup device rules)."
                ),
                crate::msg!("Start the container with the NVIDIA container runtime (--gpus all or CDI)."),
            ),
            NvmlFailure::TooOld => (
                crate::msg!("The NVIDIA library is too old for gpu-doctor (a function is missing)."),
                crate::msg!("Update the NVIDIA driver."),
            ),
            NvmlFailure::Other => (
                crate::msg!("NVML could not start."),
                crate::msg!("Run `gpu-doctor-cli info` and check the kernel log (`sudo dmesg | grep -i nvidia`)."),
            ),
        };
        (s, n)
    }
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
        #[serde(with = "crate::i18n::message::compact")]
        recorded: Message,
    },
}

impl SourceStatus {
    /// Short label for a status bar: "NVML (libnvidia-ml.so.1)", "DEMO: data-starved", "no GPU data".
    pub fn label(&self) -> Message {
        match self {
            SourceStatus::Nvml { library, .. } => Message::data(format!("NVML ({library})")),
            SourceStatus::Demo { scenario, gpus, .. } => {
                crate::msg!("DEMO data: {scenario}, {gpus} simulated GPU(s)", scenario = scenario, gpus = *gpus)
            }
            SourceStatus::Opening => crate::msg!("opening NVML"),
            SourceStatus::Asleep { .. } => crate::msg!("GPU asleep ({state})", state = Message::new(ASLEEP_STATE)),
            SourceStatus::Unavailable(_) => crate::msg!("no GPU data"),
            SourceStatus::Replay { file, recorded } => {
                crate::msg!("REPLAY of {file} (recorded from {recorded})", file = file, recorded = recorded)
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
