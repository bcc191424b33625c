//! Jobs the user runs or watches: measuring a run ([`run`]), stuck-job triage of one process
//! ([`focus`]) and the scaling test's fit ([`scale`]). Plain option structs and results in, no
//! command-line or window types: the CLI and the app both call these.

// The crates below this one under the names the code has always used for them (`crate::units`,
// `crate::telemetry::…`, `crate::tr!`; the ground's through `ground!`), and this crate under its
// own module name where it has one: a module keeps its paths whichever crate it lives in. (Not
// every crate uses every name.)
#[allow(unused_imports)]
use crate as jobs;
gpu_doctor_core::ground!();
#[allow(unused_imports)]
pub(crate) use gpu_doctor_judgement as diagnose;
#[allow(unused_imports)]
pub(crate) use gpu_doctor_telemetry as telemetry;

pub mod compare;
pub mod focus;
pub mod run;
pub mod scale;
pub mod tune;

use serde::{Deserialize, Serialize};

use crate::telemetry::snapshot::Snapshot;
use crate::telemetry::source::SourceStatus;

/// Whether GPU data was there to be read while a job was watched: the wording of a missing GPU
/// figure depends on it ("no driver answered" is not "the driver does not report it").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GpuAccess {
    /// A driver (NVML), a demo or a replay answered. The default, for results saved before this
    /// field existed.
    #[default]
    Answered,
    /// No NVIDIA driver answered (NVML could not be opened).
    NoDriver,
    /// Every NVIDIA GPU was asleep and was left unread.
    Asleep,
    /// NVML was still being opened.
    Opening,
    /// GPU sampling did not start.
    NotSampled,
    /// A driver call did not return while the job was watched (a hung driver): the GPU figures
    /// of that time are missing.
    Stalled,
}

impl GpuAccess {
    /// The access while a job ran from sampler time `from` on: [`GpuAccess::Stalled`] when a
    /// driver call hung then (now, or marked in the history), else what the source status gives.
    pub fn during(sampler: &crate::telemetry::sampler::Sampler, from: f64) -> Self {
        let snap = sampler.snapshot();
        let stalled = snap.gpu_stall.is_some()
            || sampler.with_history(|h| {
                h.events().any(|e| e.t >= from && e.kind == crate::telemetry::history::EventKind::GpuStall)
            });
        if stalled { GpuAccess::Stalled } else { GpuAccess::of(&snap.source) }
    }

    /// The access a sampler's source status gives.
    pub fn of(status: &SourceStatus) -> Self {
        match status {
            SourceStatus::Unavailable(_) => GpuAccess::NoDriver,
            SourceStatus::Asleep { .. } => GpuAccess::Asleep,
            SourceStatus::Opening => GpuAccess::Opening,
            SourceStatus::Nvml { .. } | SourceStatus::Demo { .. } | SourceStatus::Replay { .. } => GpuAccess::Answered,
        }
    }

    /// Why there is no GPU figure, as a line's end ("GPU: {this}" reads as a sentence): a catalogue
    /// key, shown through `crate::i18n::tr` or as a message.
    pub fn missing(self) -> &'static str {
        let asleep = if cfg!(windows) {
            crate::tr_key!("asleep (power state D3), left unread so it stays asleep")
        } else {
            crate::tr_key!("asleep (runtime-suspended), left unread so it stays asleep")
        };
        match self {
            GpuAccess::Answered => crate::tr_key!("memory not reported by the driver for these processes"),
            GpuAccess::NoDriver => crate::tr_key!("no NVIDIA driver answered (see gpu-doctor-cli check)"),
            GpuAccess::Asleep => asleep,
            GpuAccess::Opening => crate::tr_key!("not read yet (the driver was still being opened)"),
            GpuAccess::NotSampled => crate::tr_key!("not read (GPU sampling did not start)"),
            GpuAccess::Stalled => crate::tr_key!(
                "not read: the NVIDIA driver stopped answering (a call did not return); see gpu-doctor-cli check"
            ),
        }
    }
}

/// What these processes use of the GPUs in `snap`: their GPU memory summed over all GPUs (None
/// when no GPU reports per-process memory) and the utilization of each GPU they are on.
pub(crate) fn gpu_use(snap: &Snapshot, pids: &[u32]) -> (Option<u64>, Vec<f64>) {
    let mut memory = None;
    let mut utilization = Vec::new();
    for g in &snap.gpus {
        let Some(list) = g.processes.value() else { continue };
        let mine = list.iter().filter(|p| pids.contains(&p.pid));
        memory = Some(memory.unwrap_or(0) + mine.clone().filter_map(|p| p.vram_bytes.get()).sum::<u64>());
        if mine.count() > 0
            && let Some(u) = g.util_gpu_pct.get()
        {
            utilization.push(u);
        }
    }
    (memory, utilization)
}
