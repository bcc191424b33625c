//! The checks as a registry. [`CHECKS`] lists every check once, in the method's order (PCI device →
//! driver → CUDA → container → permissions → WSL → environment → runtime health → Windows): its
//! stable id, its layer, its title, the checks it depends on and the function that judges it. The
//! functions live in one file per layer; this module holds what a check's definition is
//! ([`CheckDef`], [`Platforms`]) and the helpers the layers share, `registry.rs` the registry,
//! `ctx.rs` the shared context [`Ctx`] (the view plus the facts several checks derive from it,
//! computed once per run) and `run.rs` the run over a view ([`all`]).
//!
//! Every check runs on every machine, in registry order, and reads only through
//! [`SystemView`](crate::diagnose::system::SystemView), so the same code judges this machine and a
//! capture. Whether a check applies (platform, container, WSL) is decided inside it: one that does
//! not apply returns a skipped verdict saying why. Ids are stable: users, reports and the test
//! fixtures refer to them. Each layer's module doc names the public sources of its rules and fix
//! texts.

mod access;
mod container;
mod ctx;
mod cuda;
mod cuinit;
mod driver;
mod env;
mod fixes;
mod frameworks;
mod gpuinit;
mod hardware;
mod nvml;
mod registry;
mod run;
mod runtime;
mod windows;
mod winstopped;
mod wsl;

pub use ctx::Ctx;
pub(crate) use ctx::pci_gpus;
pub use registry::{CHECKS, find};
pub use run::all;
pub use windows::tdr_check;

pub(crate) use run::RESERVED_FOR_VMS;

use super::{Check, Layer, Verdict};
use crate::diagnose::system::Platform;

/// Where a check runs: a Linux-only check (sysfs, kernel modules, device files, containers) is
/// not part of a Windows machine's checklist at all, and the other way round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Platforms {
    /// Linux and Windows alike (NVML, CUDA, the environment, runtime health).
    Any,
    /// Linux only.
    Linux,
    /// Windows only.
    Windows,
}

impl Platforms {
    /// Whether a check with these platforms runs on `platform` (an unknown one is judged like Linux).
    pub fn includes(self, platform: Platform) -> bool {
        match self {
            Platforms::Any => true,
            Platforms::Linux => platform != Platform::Windows,
            Platforms::Windows => platform == Platform::Windows,
        }
    }
}

/// One check's definition: everything about it but its result.
#[derive(Clone, Copy)]
pub struct CheckDef {
    /// Stable id, e.g. `DRV-01`: users, reports and the test fixtures refer to it, so never reuse one.
    pub id: &'static str,
    /// The platforms it runs on.
    pub platforms: Platforms,
    /// The layer it belongs to.
    pub layer: Layer,
    /// What is checked, e.g. "NVIDIA kernel module loaded": the title of every result it gives
    /// (a catalogue key, shown in the reader's language).
    pub title: &'static str,
    /// The checks it depends on, in the order they are consulted: when one of them failed (or is
    /// itself blocked), this check is shown as blocked by it instead of counting as another
    /// failure. They may come later in [`CHECKS`]: in a container, the driver checks depend on the
    /// container having received the GPU.
    pub depends_on: &'static [&'static str],
    /// The failures this one causes when it fails: their checks then fail as its consequences
    /// (shown under it, their own fixes held back) and the root cause is the failure that nothing
    /// else explains. A GPU that fell off the bus explains NVML missing it and cuInit failing.
    pub explains: &'static [&'static str],
    /// Judges the machine: gets the blank result ([`CheckDef::blank`]) and returns it with a
    /// verdict, summary, explanation, evidence and fixes.
    pub run: fn(Check, &Ctx) -> Check,
}

impl CheckDef {
    /// The result before the check has run: this id, layer and title, skipped, nothing else.
    pub fn blank(&self) -> Check {
        Check::new(self.id, self.layer, self.title)
    }
}

/// WIN-01, named because [`tdr_check`] gives its result outside a run as well.
const WIN_01: CheckDef = CheckDef {
    id: "WIN-01",
    platforms: Platforms::Windows,
    layer: Layer::Windows,
    title: crate::tr_key!("GPU watchdog (TDR) settings"),
    depends_on: &[],
    explains: &[],
    run: windows::tdr_settings,
};

/// The verdict summary of a check whose evidence is missing (English; shown through
/// `crate::i18n::Message::new(MISSING)`).
const MISSING: &str = crate::tr_key!("evidence missing");

/// The result of a check that searches the Python environments, under `check --quick`.
fn left_out_by_quick(c: Check) -> Check {
    c.verdict(
        Verdict::Skipped,
        crate::msg!(
            "not run by check --quick (searching the Python environments takes too long); the full check runs it"
        ),
    )
}

fn is_gpu_node(p: &str) -> bool {
    p.strip_prefix("/dev/nvidia").is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}
