//! The one-click CUDA smoke test: a minimal CUDA program, run in a child process, that proves in
//! seconds whether the GPU computes correct results and says which stage fails.
//!
//! - [`child`] is the test itself (the hidden `smoke-child` subcommand): it loads the CUDA driver
//!   library through cudarc, runs the [`Stage`]s in order and writes one JSON [`Msg`] per line on
//!   stdout.
//! - [`runner`] is the parent side used by `gpu-doctor-cli smoke` and the GUI: it starts the child,
//!   reads its messages, enforces a time limit without news, survives a crash or hang, and builds
//!   the [`SmokeReport`].
//! - [`limits`] holds the hardware limits the figures are judged against.
//!
//! The kernels ship as PTX text ([`PTX`], from `assets/kernels/smoke.cu`), so no CUDA toolkit is
//! needed at run time.

// The crates below this one under the names the code has always used for them (`crate::units`,
// `crate::telemetry::…`, `crate::tr!`; the ground's through `ground!`), and this crate under its
// own module name where it has one: a module keeps its paths whichever crate it lives in. (Not
// every crate uses every name.)
#[allow(unused_imports)]
use crate as smoke;
gpu_doctor_core::ground!();
#[allow(unused_imports)]
pub(crate) use gpu_doctor_telemetry as telemetry;

pub mod child;
pub mod limits;
pub mod runner;

use serde::{Deserialize, Serialize};

use crate::i18n::{Lang, Message};
use crate::units::ByteUnits;
use crate::verdict::Verdict;

/// The kernels' PTX (PTX ISA 6.0, sm_50), generated from `assets/kernels/smoke.cu` by
/// `scripts/kernels.py`; the driver JIT-compiles it for the GPU it runs on.
pub const PTX: &str = include_str!("../../../assets/kernels/smoke.ptx");

/// The oldest CUDA driver API version the PTX can be JIT-compiled by (PTX ISA 6.0 = CUDA 9.0).
pub const MIN_DRIVER_CUDA: i32 = 9000;

/// Elements in the saxpy check (16 M).
pub const SAXPY_ELEMENTS: usize = 16 << 20;
/// Rows and columns of the GEMM check.
pub const GEMM_N: usize = 1024;

/// The steps of the test, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Load the CUDA driver library (libcuda.so.1 / nvcuda.dll).
    Load,
    /// `cuInit` and the driver's CUDA version.
    Init,
    /// Device count; each device's name, compute capability, SMs and memory.
    Devices,
    /// Create (retain) the device's primary context.
    Context,
    /// JIT-compile the embedded PTX and find the kernels.
    Module,
    /// Allocate the device and pinned host buffers.
    Alloc,
    /// Host-to-device and device-to-host copies, pinned and pageable, with bandwidth.
    HostCopy,
    /// saxpy over 16 M elements, verified against the CPU.
    Kernel,
    /// A tiled SGEMM, verified, with GFLOP/s.
    Gemm,
    /// Device-to-device copy bandwidth.
    DeviceCopy,
    /// Optional: repeated GEMMs compared bit for bit while clocks, temperature and throttle
    /// reasons are watched.
    Burn,
    /// Free everything and release the context.
    Release,
}

impl Stage {
    /// The stages a run goes through, with or without the burn.
    pub fn plan(burn: bool) -> Vec<Stage> {
        use Stage::*;
        let mut v = vec![Load, Init, Devices, Context, Module, Alloc, HostCopy, Kernel, Gemm, DeviceCopy];
        if burn {
            v.push(Burn);
        }
        v.push(Release);
        v
    }

    /// Short title for lists: its catalogue key (shown through `crate::i18n::tr`).
    pub fn title(self) -> &'static str {
        match self {
            Stage::Load => crate::tr_key!("Load the CUDA driver library"),
            Stage::Init => crate::tr_key!("Initialise the driver (cuInit)"),
            Stage::Devices => crate::tr_key!("Find the GPUs"),
            Stage::Context => crate::tr_key!("Create a context"),
            Stage::Module => crate::tr_key!("Compile the kernels (PTX JIT)"),
            Stage::Alloc => crate::tr_key!("Allocate GPU memory"),
            Stage::HostCopy => crate::tr_key!("Copy host <-> GPU"),
            Stage::Kernel => crate::tr_key!("Run a kernel (saxpy, verified)"),
            Stage::Gemm => crate::tr_key!("Matrix multiply (SGEMM, verified)"),
            Stage::DeviceCopy => crate::tr_key!("Copy within GPU memory"),
            Stage::Burn => crate::tr_key!("Burn (repeat and compare)"),
            Stage::Release => crate::tr_key!("Release"),
        }
    }
}

/// One measured number, with the limit it is judged against.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// What was measured, e.g. "pinned host to GPU".
    pub label: Message,
    /// The value, in `unit`.
    pub value: f64,
    /// Unit, e.g. "GB/s" (10^9 bytes per second), "GFLOP/s", "ms".
    pub unit: String,
    /// The theoretical limit, in the same unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<f64>,
    /// What the limit is, e.g. "PCIe Gen4 x16".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_label: Option<Message>,
}

impl Figure {
    /// A figure without a limit.
    pub fn plain(label: impl Into<Message>, value: f64, unit: &str) -> Figure {
        Figure { label: label.into(), value, unit: unit.to_string(), limit: None, limit_label: None }
    }

    /// Per cent of the limit, when there is one.
    pub fn percent(&self) -> Option<f64> {
        self.limit.filter(|l| *l > 0.0).map(|l| 100.0 * self.value / l)
    }

    /// "24.8 GB/s (79 % of PCIe Gen4 x16, 31.5 GB/s)", in `lang`.
    pub fn text(&self, lang: Lang) -> String {
        let mut s = format!("{} {}", number(self.value), self.unit);
        if let (Some(p), Some(l)) = (self.percent(), self.limit) {
            let what = self.limit_label.clone().unwrap_or_else(|| crate::msg!("the limit"));
            s.push_str(
                &crate::msg!(
                    " ({p} % of {what}, {limit} {unit})",
                    p = format!("{p:.0}"),
                    what = what,
                    limit = number(l),
                    unit = self.unit
                )
                .render(lang),
            );
        }
        s
    }
}

/// Three significant digits, no exponent.
pub fn number(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The result of one stage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StageResult {
    /// Which stage.
    pub stage: Stage,
    /// Its verdict: Pass, Warn (works, below what the hardware can do), Fail, Skipped (not run).
    pub verdict: Verdict,
    /// Wall time of the stage, in milliseconds.
    pub ms: f64,
    /// One line: what happened.
    pub summary: Message,
    /// The CUDA error name, e.g. `CUDA_ERROR_NO_DEVICE`, when a call failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What to do next, for a failure or warning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_step: Option<Message>,
    /// Measured numbers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<Figure>,
    /// More lines: the JIT log, per-device facts, notes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<Message>,
}

impl StageResult {
    /// A stage that did not run.
    pub fn skipped(stage: Stage, why: impl Into<Message>) -> StageResult {
        StageResult {
            stage,
            verdict: Verdict::Skipped,
            ms: 0.0,
            summary: why.into(),
            error: None,
            next_step: None,
            figures: Vec::new(),
            details: Vec::new(),
        }
    }
}

/// One GPU as the CUDA driver reports it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// CUDA device ordinal (after `CUDA_VISIBLE_DEVICES`).
    pub index: u32,
    /// Name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// Compute capability, e.g. [9, 0].
    pub compute_capability: [i32; 2],
    /// Streaming multiprocessors.
    pub sms: i32,
    /// Total memory, bytes.
    pub memory_bytes: u64,
    /// PCI address "0000:17:00.0".
    pub pci_bus_id: String,
    /// Peak SM clock, kHz.
    pub clock_khz: i32,
    /// Peak memory clock, kHz (as CUDA reports it; the data rate is twice this).
    pub memory_clock_khz: i32,
    /// Memory bus width, bits.
    pub bus_width_bits: i32,
}

impl DeviceInfo {
    /// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.6 GiB, PCI 0000:17:00.0)", in binary units.
    pub fn line(&self) -> Message {
        self.line_in(ByteUnits::Binary)
    }

    /// [`DeviceInfo::line`] with the memory in the chosen units ("85.5 GB" in decimal).
    pub fn line_in(&self, units: ByteUnits) -> Message {
        crate::msg!(
            "{name} (sm_{major}{minor}, {sms} SMs, {memory}, PCI {pci})",
            name = self.name,
            major = self.compute_capability[0],
            minor = self.compute_capability[1],
            sms = self.sms,
            memory = memory_text(self.memory_bytes, units),
            pci = self.pci_bus_id
        )
    }
}

/// A memory amount (a GPU's total, free memory) in the chosen units. Binary keeps the smoke test's
/// fixed form, GiB with one decimal also below 1 GiB ("0.5 GiB", "79.6 GiB"), so amounts compare
/// at a glance; decimal is [`units::bytes_in`]'s ("524.3 MB", "85.5 GB").
fn memory_text(bytes: u64, units: ByteUnits) -> String {
    match units {
        ByteUnits::Binary => format!("{:.1} GiB", bytes as f64 / units::GIB),
        ByteUnits::Decimal => units::bytes_in(bytes, units),
    }
}

/// A buffer size in the chosen units: whole MiB in binary ("64 MiB", "272 MiB"), as the smoke test
/// has always shown them; [`units::bytes_in`]'s form in decimal ("67.1 MB").
fn buffer_text(bytes: u64, units: ByteUnits) -> String {
    match units {
        ByteUnits::Binary => format!("{} MiB", bytes >> 20),
        ByteUnits::Decimal => units::bytes_in(bytes, units),
    }
}

/// About once a second during the burn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BurnTick {
    /// Seconds since the burn started.
    pub t_s: f64,
    /// GEMMs run so far.
    pub iterations: u64,
    /// Output values that differed from the verified reference so far.
    pub errors: u64,
    /// GEMM throughput over the last tick.
    pub gflops: f64,
    /// SM clock, MHz (NVML).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_clock_mhz: Option<u32>,
    /// Temperature, °C (NVML).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_c: Option<u32>,
    /// Board power, W (NVML).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_w: Option<f64>,
    /// Clock throttle reasons mask (NVML), when readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttle_mask: Option<u64>,
}

/// What the child says, one JSON object per line on stdout.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Msg {
    /// First line: the child's version and process id.
    Hello {
        /// gpu-doctor version.
        version: String,
        /// The child's process id.
        pid: u32,
    },
    /// A stage begins.
    Start {
        /// Which.
        stage: Stage,
    },
    /// A stage ended.
    End {
        /// Its result.
        result: StageResult,
    },
    /// The library that was loaded and the driver's CUDA version, once known.
    Driver {
        /// Path of the loaded driver library.
        #[serde(default)]
        library: Option<String>,
        /// The driver's CUDA version, e.g. "12.4".
        #[serde(default)]
        cuda: Option<String>,
    },
    /// The GPUs CUDA sees.
    Devices {
        /// All of them.
        devices: Vec<DeviceInfo>,
    },
    /// Burn progress.
    Burn {
        /// This tick.
        tick: BurnTick,
    },
    /// The test finished (whatever the verdicts).
    Done,
}

/// What the smoke test is asked to do; passed to the child as JSON.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Options {
    /// CUDA device ordinal to test.
    pub device: u32,
    /// Seconds of burn after the default test (0 = none).
    pub burn_secs: u32,
    /// Load the CUDA driver library from this path first.
    #[serde(default)]
    pub cuda_lib: Option<std::path::PathBuf>,
    /// Load NVML from this path (for the PCIe link, clocks and temperatures).
    #[serde(default)]
    pub nvml_lib: Option<std::path::PathBuf>,
    /// How byte amounts are shown in the stages' texts (the "Byte units" setting): binary unless
    /// the app passes the user's choice. Left out of the JSON when binary.
    #[serde(default, skip_serializing_if = "is_binary")]
    pub units: ByteUnits,
}

fn is_binary(units: &ByteUnits) -> bool {
    *units == ByteUnits::Binary
}

/// How the child process ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ChildEnd {
    /// It ran to the end and exited normally.
    Finished,
    /// It died: killed by a signal or exited without finishing.
    Crashed {
        /// Exit code, when it exited.
        #[serde(default)]
        code: Option<i32>,
        /// Signal number, when a signal killed it (Unix).
        #[serde(default)]
        signal: Option<i32>,
        /// The last lines it wrote on stderr.
        #[serde(default)]
        stderr: String,
    },
    /// It sent nothing for this long and was killed.
    NotResponding {
        /// The limit, seconds.
        secs: f64,
    },
    /// The user cancelled; it was killed.
    Cancelled,
    /// It could not be started.
    SpawnFailed {
        /// Why.
        error: Message,
    },
}

/// The whole run, as shown, copied and exported.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SmokeReport {
    /// gpu-doctor version.
    pub version: String,
    /// What was asked.
    pub options: Options,
    /// Driver library loaded.
    pub library: Option<String>,
    /// Driver's CUDA version.
    pub driver_cuda: Option<String>,
    /// GPUs CUDA saw.
    pub devices: Vec<DeviceInfo>,
    /// Every planned stage, in order (those not reached are Skipped).
    pub stages: Vec<StageResult>,
    /// Burn ticks.
    pub burn: Vec<BurnTick>,
    /// How the child ended.
    pub end: ChildEnd,
    /// Overall verdict.
    pub verdict: Verdict,
    /// One line for the user.
    pub summary: Message,
    /// The next step, when something failed or is below par.
    pub next_step: Option<Message>,
    /// End-to-end wall time, ms (starting the child included).
    pub total_ms: f64,
    /// The child's process id, once it said hello.
    #[serde(default)]
    pub child_pid: Option<u32>,
}

impl SmokeReport {
    /// The tested device, when CUDA listed it.
    pub fn device(&self) -> Option<&DeviceInfo> {
        self.devices.iter().find(|d| d.index == self.options.device)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_texts_keep_the_binary_form_and_follow_decimal() {
        assert_eq!(memory_text(500 << 20, ByteUnits::Binary), "0.5 GiB");
        assert_eq!(memory_text(80 << 30, ByteUnits::Binary), "80.0 GiB");
        assert_eq!(memory_text(500 << 20, ByteUnits::Decimal), "524.3 MB");
        assert_eq!(buffer_text((272 << 20) + 4, ByteUnits::Binary), "272 MiB");
        assert_eq!(buffer_text(64 << 20, ByteUnits::Decimal), "67.1 MB");
        let d = DeviceInfo {
            index: 0,
            name: "GPU".into(),
            compute_capability: [9, 0],
            sms: 132,
            memory_bytes: 80 << 30,
            pci_bus_id: "0000:17:00.0".into(),
            clock_khz: 0,
            memory_clock_khz: 0,
            bus_width_bits: 0,
        };
        assert_eq!(d.line().en(), "GPU (sm_90, 132 SMs, 80.0 GiB, PCI 0000:17:00.0)");
        assert_eq!(d.line_in(ByteUnits::Decimal).en(), "GPU (sm_90, 132 SMs, 85.9 GB, PCI 0000:17:00.0)");
    }

    #[test]
    fn the_units_reach_the_child_in_the_spec() {
        // Binary is left out, so the default spec and report JSON are as before.
        let spec = serde_json::to_string(&Options::default()).unwrap_or_default();
        assert!(!spec.contains("units"), "{spec}");
        let back: Result<Options, _> = serde_json::from_str(&spec);
        assert_eq!(back.ok().map(|o| o.units), Some(ByteUnits::Binary));
        let decimal = Options { units: ByteUnits::Decimal, ..Options::default() };
        let spec = serde_json::to_string(&decimal).unwrap_or_default();
        let back: Result<Options, _> = serde_json::from_str(&spec);
        assert_eq!(back.ok(), Some(decimal));
    }
}
