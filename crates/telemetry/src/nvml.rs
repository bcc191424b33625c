//! The NVML GPU source: loads the NVIDIA Management Library from the known locations, keeps every
//! attempt with its error, reads the inventory once and samples each metric as a [`Reading`].
//!
//! A metric the GPU does not support is asked once and then remembered as "not supported" (quiet
//! data, no log spam). A GPU that fell off the bus is marked lost while the others keep updating.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::sync::{Arc, Mutex};

use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::{
    Clock, EccCounter, MemoryError, PcieUtilCounter, PerformanceState, TemperatureSensor, TemperatureThreshold,
};
use nvml_wrapper::error::NvmlError;

use super::Reading;
use super::sample::{GpuFacts, GpuHealth, GpuInfo, GpuSample, GpuSlowSample, Inventory, RemappedRows};
use super::source::NvmlFailure;
use super::source::{GpuSource, LoadAttempt, NoGpu, SourceStatus};
use crate::i18n::Message;
use crate::{msg, tr_key};

mod processes;

/// Environment variable naming one NVML library to load instead of the standard locations
/// (used by tests with a fake library, and by users with an unusual install).
pub const NVML_LIB_ENV: &str = "GPU_DOCTOR_NVML_LIB";

/// Where the NVIDIA GPU Operator's driver container puts its root on the host (the operator's
/// `driverInstallDir` by default): the driver's libraries and nvidia-smi live below it, not on the
/// host's loader path, by design (pods get them from the container toolkit). NVIDIA GPU Operator
/// documentation, <https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/>.
pub const OPERATOR_DRIVER_ROOT: &str = "/run/nvidia/driver";

/// The driver's library folders inside the operator's driver root: Debian/Ubuntu images, then
/// RHEL-like ones.
pub fn operator_lib_dirs() -> [String; 2] {
    let multiarch = if cfg!(target_arch = "aarch64") { "aarch64-linux-gnu" } else { "x86_64-linux-gnu" };
    [format!("{OPERATOR_DRIVER_ROOT}/usr/lib/{multiarch}"), format!("{OPERATOR_DRIVER_ROOT}/usr/lib64")]
}

/// The library paths tried, in order, on this platform.
pub fn candidates() -> Vec<String> {
    if let Some(p) = std::env::var_os(NVML_LIB_ENV) {
        return vec![p.to_string_lossy().into_owned()];
    }
    if cfg!(windows) {
        let mut v = Vec::new();
        let windir =
            std::env::var("SystemRoot").or_else(|_| std::env::var("WINDIR")).unwrap_or_else(|_| "C:\\Windows".into());
        v.push(format!("{windir}\\System32\\nvml.dll"));
        let pf = std::env::var("ProgramW6432").unwrap_or_else(|_| "C:\\Program Files".into());
        v.push(format!("{pf}\\NVIDIA Corporation\\NVSMI\\nvml.dll"));
        v
    } else {
        let mut v = vec![
            "libnvidia-ml.so.1".to_string(),
            "libnvidia-ml.so".to_string(),
            "/usr/lib/wsl/lib/libnvidia-ml.so.1".to_string(),
        ];
        // A node whose driver the GPU Operator runs from its container: gpu-doctor reads the
        // GPUs from there, where only it looks (the checks say host programs do not).
        v.extend(
            operator_lib_dirs()
                .iter()
                .map(|d| format!("{d}/libnvidia-ml.so.1"))
                .filter(|p| std::path::Path::new(p).exists()),
        );
        v
    }
}

/// For a library the user named (`--nvml-lib`), what is wrong with *that file*: it does not
/// exist, it is not a shared library, or it is a library without NVML in it. Other failures (the
/// driver not loaded, a version mismatch) keep their own explanation.
fn named_file_error(path: &std::path::Path, e: NoGpu) -> NoGpu {
    let error = e.attempts.first().map(|a| a.error.clone()).unwrap_or_default();
    let shown = path.display();
    let (summary, next_step) = if std::fs::symlink_metadata(path).is_err() {
        (
            msg!("{path} does not exist.", path = shown),
            msg!(
                "Check the path given to --nvml-lib (or GPU_DOCTOR_NVML_LIB); without it gpu-doctor looks in the standard places."
            ),
        )
    } else if !path.is_file() {
        (
            msg!("{path} is not a file.", path = shown),
            msg!("Give the path of libnvidia-ml.so.1 (Linux) or nvml.dll (Windows)."),
        )
    } else if error.contains("invalid ELF header")
        || error.contains("file too short")
        || error.contains("not a valid Win32")
    {
        (
            msg!("{path} is not a shared library ({error}).", path = shown, error = error),
            msg!("Give the path of libnvidia-ml.so.1 (Linux) or nvml.dll (Windows)."),
        )
    } else if error.contains("undefined symbol")
        || error.contains("nvmlInit")
        || error.contains("FunctionNotFound")
        || error.contains("symbol")
    {
        (
            msg!("{path} is a shared library but not NVML: it has no nvmlInit_v2.", path = shown),
            msg!("Give the path of the NVIDIA driver's libnvidia-ml.so.1 (Linux) or nvml.dll (Windows)."),
        )
    } else {
        return e;
    };
    NoGpu { summary, next_step, attempts: e.attempts, failure: None }
}

/// Plain-words summary and next step for an NVML init failure on this machine.
pub fn explain_init_error(err: &NvmlError) -> (Message, Message) {
    explain_init_error_on(err, cfg!(windows))
}

/// [`explain_init_error`] for a machine running Windows (`windows`) or Linux, whichever this one
/// is: an imported Linux bug report read on a Windows desk gets the Linux advice.
pub fn explain_init_error_on(err: &NvmlError, windows: bool) -> (Message, Message) {
    NvmlFailure::of(err).explain_message(windows)
}

impl NvmlFailure {
    /// The kind of an NVML error.
    pub fn of(err: &NvmlError) -> NvmlFailure {
        match err {
            NvmlError::LibloadingError(_) => NvmlFailure::NotFound,
            NvmlError::DriverNotLoaded => NvmlFailure::DriverNotLoaded,
            NvmlError::LibRmVersionMismatch => NvmlFailure::VersionMismatch,
            NvmlError::NoPermission => NvmlFailure::NoPermission,
            NvmlError::LibraryNotFound => NvmlFailure::DependencyMissing,
            NvmlError::GpuLost => NvmlFailure::GpuLost,
            NvmlError::OperatingSystem => NvmlFailure::OsBlocked,
            NvmlError::FailedToLoadSymbol(_) | NvmlError::FunctionNotFound => NvmlFailure::TooOld,
            _ => NvmlFailure::Other,
        }
    }
}

/// Which per-device metric a cached "unsupported" answer refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Metric {
    Util,
    Memory,
    Temp,
    Power,
    PowerLimit,
    SmClock,
    MemClock,
    PcieGen,
    PcieWidth,
    PcieRx,
    PcieTx,
    Fan,
    Pstate,
    Throttle,
    Encoder,
    Decoder,
    Ecc,
    Processes,
    ProcessUtil,
    Handle,
}

impl Metric {
    /// The NVML function behind the metric (what a not-responding message names).
    fn call(self) -> &'static str {
        match self {
            Metric::Util => "nvmlDeviceGetUtilizationRates",
            Metric::Memory => "nvmlDeviceGetMemoryInfo",
            Metric::Temp => "nvmlDeviceGetTemperature",
            Metric::Power => "nvmlDeviceGetPowerUsage",
            Metric::PowerLimit => "nvmlDeviceGetEnforcedPowerLimit",
            Metric::SmClock | Metric::MemClock => "nvmlDeviceGetClockInfo",
            Metric::PcieGen => "nvmlDeviceGetCurrPcieLinkGeneration",
            Metric::PcieWidth => "nvmlDeviceGetCurrPcieLinkWidth",
            Metric::PcieRx | Metric::PcieTx => "nvmlDeviceGetPcieThroughput",
            Metric::Fan => "nvmlDeviceGetFanSpeed",
            Metric::Pstate => "nvmlDeviceGetPerformanceState",
            Metric::Throttle => "nvmlDeviceGetCurrentClocksThrottleReasons",
            Metric::Encoder => "nvmlDeviceGetEncoderUtilization",
            Metric::Decoder => "nvmlDeviceGetDecoderUtilization",
            Metric::Ecc => "nvmlDeviceGetTotalEccErrors",
            Metric::Processes => "nvmlDeviceGetComputeRunningProcesses",
            Metric::ProcessUtil => "nvmlDeviceGetProcessUtilization",
            Metric::Handle => "nvmlDeviceGetHandleByIndex",
        }
    }

    /// Read by the slow sampler thread.
    fn is_slow(self) -> bool {
        matches!(self, Metric::PcieRx | Metric::PcieTx | Metric::Processes | Metric::ProcessUtil)
    }
}

/// A catalogue text (`tr_key!`), put in the reader's language where it is shown.
const LOST_TEXT: &str = tr_key!(
    "GPU has fallen off the bus and stopped answering. Look for Xid 79 in the kernel log (sudo dmesg | grep -i xid); check the card's seating, power and temperature, then reboot."
);

/// GPU data from NVML.
pub struct NvmlSource {
    nvml: Nvml,
    library: String,
    attempts: Vec<LoadAttempt>,
    inventory: Arc<Inventory>,
    /// Metrics that answered "not supported" (or similar) once, with the reason shown since.
    quiet: Mutex<HashMap<(u32, Metric), Message>>,
    lost: Mutex<HashMap<u32, Message>>,
    /// The call running now on the fast (0) and slow (1) sampler thread.
    calls: [Mutex<Option<(u32, Metric)>>; 2],
    /// Per GPU, the newest per-process utilization sample read (NVML's CPU timestamp, µs): the
    /// next reading asks for the samples after it.
    process_util_seen: Mutex<HashMap<u32, u64>>,
}

/// A missing metric's reason, chosen from the error; `quiet` errors are cached so they are not
/// asked again.
fn reason(err: &NvmlError) -> (Message, bool) {
    match err {
        NvmlError::NotSupported => (msg!("not supported on this GPU"), true),
        NvmlError::FunctionNotFound | NvmlError::FailedToLoadSymbol(_) => {
            (msg!("not available in this driver version"), true)
        }
        NvmlError::NoPermission => (msg!("needs administrator rights"), true),
        NvmlError::NotFound => (msg!("no data yet"), false),
        // What NVML's reference says these codes mean for a device: the checks name each as the
        // cause of a GPU that does not answer (RT-LOST).
        NvmlError::InsufficientPower => (Message::new(crate::telemetry::source::NVML_INSUFFICIENT_POWER), true),
        NvmlError::IrqIssue => (Message::new(crate::telemetry::source::NVML_IRQ_ISSUE), false),
        NvmlError::ResetRequired => (Message::new(crate::telemetry::source::NVML_RESET_REQUIRED), false),
        NvmlError::CorruptedInfoROM => (Message::new(crate::telemetry::source::NVML_CORRUPTED_INFOROM), true),
        NvmlError::Timeout => (Message::new(crate::telemetry::source::NVML_TIMEOUT), false),
        // NVML's own words for NVML_ERROR_UNKNOWN (nvmlErrorString), as nvidia-smi prints them
        // and as the checks recognise a GPU that stopped answering.
        NvmlError::Unknown => (Message::data("Unknown Error"), false),
        other => (Message::data(other.to_string()), false),
    }
}

/// [`reason`] for one metric's query. A GPU without fans (data-centre boards cooled by the
/// chassis) answers a fan query with INVALID_ARGUMENT, fan 0 not existing: seen on an H200 with
/// driver 580.159.04.
fn metric_reason(metric: Metric, err: &NvmlError) -> (Message, bool) {
    match err {
        NvmlError::InvalidArg if metric == Metric::Fan => (msg!("no fan on this GPU (cooled by the chassis)"), true),
        other => reason(other),
    }
}

/// How many MIG devices (GPU + compute instances) exist on a GPU in MIG mode: the slots up to the
/// maximum that hold one (an empty slot answers NOT_FOUND).
fn mig_device_count(dev: &nvml_wrapper::Device<'_>) -> Result<u32, NvmlError> {
    let max = dev.mig_device_count()?;
    let mut n = 0;
    for i in 0..max.min(64) {
        match dev.mig_device_by_index(i) {
            Ok(_) => n += 1,
            Err(NvmlError::NotFound) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

impl NvmlSource {
    /// Tries every candidate library in order; returns the first that initialises, or why none did.
    pub fn open() -> Result<NvmlSource, NoGpu> {
        Self::open_from(&candidates())
    }

    /// Opens the library the user named (`--nvml-lib`), or else tries the candidates.
    pub fn open_with(library: Option<&std::path::Path>) -> Result<NvmlSource, NoGpu> {
        match library {
            Some(p) => Self::open_from(&[p.to_string_lossy().into_owned()]).map_err(|e| named_file_error(p, e)),
            None => Self::open(),
        }
    }

    /// Like [`NvmlSource::open`] with an explicit candidate list.
    pub fn open_from(paths: &[String]) -> Result<NvmlSource, NoGpu> {
        let mut attempts = Vec::new();
        let mut last_err = None;
        for path in paths {
            // A path (not a bare name the loader searches) is opened by us first, without
            // blocking and outside the dynamic loader's lock: a FIFO or a device is refused here,
            // and a file that hangs (a dead network mount) hangs only this thread, never the
            // loader that the window and every other thread need.
            if path.contains('/')
                && let Err(e @ crate::safe_fs::ReadError::NotAFile(_)) =
                    crate::safe_fs::open_regular(std::path::Path::new(path))
            {
                attempts.push(LoadAttempt { path: path.clone(), error: e.to_string() });
                last_err = Some(NvmlError::LibloadingError(libloading::Error::DlOpenUnknown));
                continue;
            }
            if let Err(why) = super::libprobe::probe_in_child(path) {
                // A load that hangs is a hung library or mount, not a missing driver.
                attempts.push(LoadAttempt { path: path.clone(), error: why.en() });
                return Err(NoGpu {
                    summary: msg!("The NVIDIA library did not finish loading: {why}.", why = why),
                    next_step: msg!(
                        "A library that hangs while loading means a hung file system (a network mount) or a damaged library; check the path, the mount, and the kernel log (sudo dmesg | grep -i -e xid -e nvrm)."
                    ),
                    attempts,
                    failure: None,
                });
            }
            super::libprobe::LOADING.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let opened = Nvml::builder().lib_path(OsStr::new(path)).init();
            super::libprobe::LOADING.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            match opened {
                Ok(nvml) => {
                    let inventory = Arc::new(read_inventory(&nvml));
                    return Ok(NvmlSource {
                        nvml,
                        library: path.clone(),
                        attempts,
                        inventory,
                        quiet: Mutex::new(HashMap::new()),
                        lost: Mutex::new(HashMap::new()),
                        calls: [Mutex::new(None), Mutex::new(None)],
                        process_util_seen: Mutex::new(HashMap::new()),
                    });
                }
                Err(e) => {
                    attempts.push(LoadAttempt { path: path.clone(), error: e.to_string() });
                    // A library that loads but fails to initialise says more than "file not found".
                    let informative = !matches!(e, NvmlError::LibloadingError(_));
                    if informative || last_err.is_none() {
                        last_err = Some(e);
                    }
                }
            }
        }
        let failure = last_err.as_ref().map(NvmlFailure::of);
        let (summary, next_step) = match &last_err {
            Some(e) => explain_init_error(e),
            None => (msg!("No NVML library locations to try."), msg!("Set GPU_DOCTOR_NVML_LIB to the library path.")),
        };
        Err(NoGpu { summary, next_step, attempts, failure })
    }

    fn read<T>(
        &self,
        idx: u32,
        metric: Metric,
        f: impl FnOnce() -> Result<T, NvmlError>,
    ) -> Result<Reading<T>, Message> {
        if let Some(why) = self.quiet.lock().ok().and_then(|q| q.get(&(idx, metric)).cloned()) {
            return Ok(Reading::na(why));
        }
        let answer = self.calling(idx, metric, f);
        match answer {
            Ok(v) => Ok(Reading::Value(v)),
            Err(NvmlError::GpuLost) => Err(Message::new(LOST_TEXT)),
            Err(e) => {
                let (text, quiet) = metric_reason(metric, &e);
                if quiet && let Ok(mut q) = self.quiet.lock() {
                    q.insert((idx, metric), text.clone());
                }
                Ok(Reading::na(text))
            }
        }
    }

    /// Runs one NVML call, noting it as in flight (for the watchdog's message) while it runs.
    fn calling<T>(&self, idx: u32, metric: Metric, f: impl FnOnce() -> T) -> T {
        let slot = &self.calls[usize::from(metric.is_slow())];
        if let Ok(mut c) = slot.lock() {
            *c = Some((idx, metric));
        }
        let out = f();
        if let Ok(mut c) = slot.lock() {
            *c = None;
        }
        out
    }

    /// VRAM through the unversioned `nvmlDeviceGetMemoryInfo`, for drivers older than R510
    /// whose library lacks `nvmlDeviceGetMemoryInfo_v2` (nvml-wrapper asks only for the latter).
    fn memory_v1(&self, dev: &nvml_wrapper::Device<'_>) -> Result<(u64, u64, u64), NvmlError> {
        let sym = self
            .nvml
            .lib()
            .nvmlDeviceGetMemoryInfo
            .as_ref()
            .map_err(|e| NvmlError::FailedToLoadSymbol(e.to_string()))?;
        let mut info = nvml_wrapper_sys::bindings::nvmlMemory_t { total: 0, free: 0, used: 0 };
        // SAFETY: the symbol comes from the loaded NVML library, the handle from the same
        // initialised library, and `info` is a valid out-pointer of the declared struct type.
        let code = unsafe { sym(dev.handle(), &mut info) };
        nvml_wrapper::error::nvml_try(code)?;
        Ok((info.total, info.free, info.used))
    }

    fn memory(&self, dev: &nvml_wrapper::Device<'_>) -> Result<(u64, u64, u64), NvmlError> {
        match dev.memory_info() {
            Ok(m) => Ok((m.total, m.free, m.used)),
            Err(NvmlError::FailedToLoadSymbol(_)) => self.memory_v1(dev),
            Err(e) => Err(e),
        }
    }

    fn remapped_rows(&self, dev: &nvml_wrapper::Device<'_>) -> Result<RemappedRows, NvmlError> {
        let sym = self
            .nvml
            .lib()
            .nvmlDeviceGetRemappedRows
            .as_ref()
            .map_err(|e| NvmlError::FailedToLoadSymbol(e.to_string()))?;
        let (mut corr, mut unc, mut pending, mut failed) = (0u32, 0u32, 0u32, 0u32);
        // SAFETY: symbol and handle come from the same initialised library; the out-pointers are
        // valid u32s as the NVML signature declares.
        let code = unsafe { sym(dev.handle(), &mut corr, &mut unc, &mut pending, &mut failed) };
        nvml_wrapper::error::nvml_try(code)?;
        Ok(RemappedRows { correctable: corr, uncorrectable: unc, pending: pending != 0, failed: failed != 0 })
    }

    fn facts_one(&self, idx: u32) -> Option<GpuFacts> {
        let dev = self.nvml.device_by_index(idx).ok()?;
        let r = |e: NvmlError| reason(&e).0;
        #[cfg(target_os = "linux")]
        let persistence = Reading::from(dev.is_in_persistent_mode().map_err(r));
        #[cfg(not(target_os = "linux"))]
        let persistence = Reading::na(msg!("Linux only"));
        #[cfg(target_os = "windows")]
        let driver_model = Reading::from(
            dev.driver_model()
                .map(|m| {
                    // NVML calls TCC "WDM".
                    let name = |d: &dyn std::fmt::Debug| format!("{d:?}").replace("WDM", "TCC");
                    (name(&m.current), name(&m.pending))
                })
                .map_err(r),
        );
        #[cfg(not(target_os = "windows"))]
        let driver_model = Reading::na(msg!("Windows only"));
        let mig = Reading::from(dev.mig_mode().map(|m| (m.current == 1, m.pending == 1)).map_err(r));
        Some(GpuFacts {
            index: idx,
            persistence,
            compute_mode: Reading::from(dev.compute_mode().map(|m| format!("{m:?}")).map_err(r)),
            mig_devices: match mig {
                Reading::Value((true, _)) => Reading::from(mig_device_count(&dev).map_err(r)),
                _ => Reading::na(msg!("MIG is off")),
            },
            mig,
            remapped_rows: Reading::from(self.remapped_rows(&dev).map_err(r)),
            pages_pending_retirement: Reading::from(dev.are_pages_pending_retired().map_err(r)),
            driver_model,
        })
    }

    fn mark_lost(&self, idx: u32, why: Message) -> GpuSample {
        if let Ok(mut l) = self.lost.lock() {
            l.insert(idx, why.clone());
        }
        GpuSample::unavailable(idx, GpuHealth::Lost(why), msg!("GPU lost"))
    }

    fn sample_one(&self, idx: u32) -> GpuSample {
        if let Some(why) = self.lost.lock().ok().and_then(|l| l.get(&idx).cloned()) {
            return GpuSample::unavailable(idx, GpuHealth::Lost(why), msg!("GPU lost"));
        }
        let dev = match self.calling(idx, Metric::Handle, || self.nvml.device_by_index(idx)) {
            Ok(d) => d,
            Err(NvmlError::GpuLost) => return self.mark_lost(idx, Message::new(LOST_TEXT)),
            Err(e) => return GpuSample::unavailable(idx, GpuHealth::Ok, reason(&e).0),
        };
        let result = (|| -> Result<GpuSample, Message> {
            let util = self.read(idx, Metric::Util, || dev.utilization_rates())?;
            let mem = self.read(idx, Metric::Memory, || self.memory(&dev))?;
            Ok(GpuSample {
                index: idx,
                health: GpuHealth::Ok,
                util_gpu_pct: util.as_ref().map(|u| f64::from(u.gpu)),
                util_mem_bw_pct: util.map(|u| f64::from(u.memory)),
                vram_used_bytes: mem.as_ref().map(|m| m.2),
                vram_free_bytes: mem.as_ref().map(|m| m.1),
                vram_total_bytes: mem.map(|m| m.0),
                temp_c: self.read(idx, Metric::Temp, || dev.temperature(TemperatureSensor::Gpu))?,
                power_w: self.read(idx, Metric::Power, || dev.power_usage())?.map(|mw| f64::from(mw) / 1000.0),
                power_limit_w: self
                    .read(idx, Metric::PowerLimit, || dev.enforced_power_limit())?
                    .map(|mw| f64::from(mw) / 1000.0),
                sm_clock_mhz: self.read(idx, Metric::SmClock, || dev.clock_info(Clock::SM))?,
                mem_clock_mhz: self.read(idx, Metric::MemClock, || dev.clock_info(Clock::Memory))?,
                pcie_gen: self.read(idx, Metric::PcieGen, || dev.current_pcie_link_gen())?,
                pcie_width: self.read(idx, Metric::PcieWidth, || dev.current_pcie_link_width())?,
                pcie_rx_bps: Reading::na(Message::new(crate::telemetry::sample::SAMPLED_SLOWER)),
                pcie_tx_bps: Reading::na(Message::new(crate::telemetry::sample::SAMPLED_SLOWER)),
                fan_pct: self.read(idx, Metric::Fan, || dev.fan_speed(0))?,
                pstate: self.read(idx, Metric::Pstate, || dev.performance_state())?.map(pstate_number),
                throttle_mask: self.read(idx, Metric::Throttle, || dev.current_throttle_reasons())?.map(|r| r.bits()),
                encoder_pct: self.read(idx, Metric::Encoder, || dev.encoder_utilization())?.map(|u| u.utilization),
                decoder_pct: self.read(idx, Metric::Decoder, || dev.decoder_utilization())?.map(|u| u.utilization),
                ecc_uncorrected_volatile: self
                    .read(idx, Metric::Ecc, || dev.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Volatile))?,
                processes: Reading::na(Message::new(crate::telemetry::sample::SAMPLED_SLOWER)),
            })
        })();
        result.unwrap_or_else(|why| self.mark_lost(idx, why))
    }

    fn slow_one(&self, idx: u32) -> GpuSlowSample {
        let lost = || GpuSlowSample {
            index: idx,
            pcie_rx_bps: Reading::na(msg!("GPU lost")),
            pcie_tx_bps: Reading::na(msg!("GPU lost")),
            processes: Reading::na(msg!("GPU lost")),
        };
        if self.lost.lock().map(|l| l.contains_key(&idx)).unwrap_or(false) {
            return lost();
        }
        let Ok(dev) = self.nvml.device_by_index(idx) else {
            return lost();
        };
        let result = (|| -> Result<GpuSlowSample, Message> {
            // NVML reports PCIe throughput in KiB/s over a 20 ms window.
            let rx = self.read(idx, Metric::PcieRx, || dev.pcie_throughput(PcieUtilCounter::Receive))?;
            let tx = self.read(idx, Metric::PcieTx, || dev.pcie_throughput(PcieUtilCounter::Send))?;
            let processes = self.processes(idx, &dev)?;
            Ok(GpuSlowSample {
                index: idx,
                pcie_rx_bps: rx.map(|k| f64::from(k) * 1024.0),
                pcie_tx_bps: tx.map(|k| f64::from(k) * 1024.0),
                processes,
            })
        })();
        result.unwrap_or_else(|why| {
            if let Ok(mut l) = self.lost.lock() {
                l.insert(idx, why);
            }
            lost()
        })
    }
}

fn pstate_number(p: PerformanceState) -> u32 {
    use PerformanceState as P;
    match p {
        P::Zero => 0,
        P::One => 1,
        P::Two => 2,
        P::Three => 3,
        P::Four => 4,
        P::Five => 5,
        P::Six => 6,
        P::Seven => 7,
        P::Eight => 8,
        P::Nine => 9,
        P::Ten => 10,
        P::Eleven => 11,
        P::Twelve => 12,
        P::Thirteen => 13,
        P::Fourteen => 14,
        P::Fifteen => 15,
        P::Unknown => 32,
    }
}

fn read_inventory(nvml: &Nvml) -> Inventory {
    let r = |res: Result<String, NvmlError>| Reading::from(res.map_err(|e| reason(&e).0));
    let cuda = nvml.sys_cuda_driver_version().map(|v| {
        format!("{}.{}", nvml_wrapper::cuda_driver_version_major(v), nvml_wrapper::cuda_driver_version_minor(v))
    });
    let count = nvml.device_count().unwrap_or(0);
    let gpus = (0..count)
        .map(|i| match nvml.device_by_index(i) {
            Ok(d) => GpuInfo {
                index: i,
                name: d.name().unwrap_or_else(|_| format!("GPU {i}")),
                uuid: r(d.uuid()),
                pci_bus_id: r(d.pci_info().map(|p| p.bus_id)),
                vram_total_bytes: Reading::from(d.memory_info().map(|m| m.total).map_err(|e| reason(&e).0)),
                power_limit_default_w: Reading::from(
                    d.power_management_limit_default().map(|mw| f64::from(mw) / 1000.0).map_err(|e| reason(&e).0),
                ),
                max_sm_clock_mhz: Reading::from(d.max_clock_info(Clock::SM).map_err(|e| reason(&e).0)),
                max_mem_clock_mhz: Reading::from(d.max_clock_info(Clock::Memory).map_err(|e| reason(&e).0)),
                max_pcie_gen: Reading::from(d.max_pcie_link_gen().map_err(|e| reason(&e).0)),
                max_pcie_width: Reading::from(d.max_pcie_link_width().map_err(|e| reason(&e).0)),
                slowdown_temp_c: Reading::from(
                    d.temperature_threshold(TemperatureThreshold::Slowdown).map_err(|e| reason(&e).0),
                ),
                compute_capability: Reading::from(
                    d.cuda_compute_capability().map(|c| format!("{}.{}", c.major, c.minor)).map_err(|e| reason(&e).0),
                ),
                vbios_version: r(d.vbios_version()),
            },
            Err(e) => GpuInfo::unavailable(i, reason(&e).0),
        })
        .collect();
    Inventory {
        driver_version: Some(r(nvml.sys_driver_version())),
        cuda_driver_version: Some(Reading::from(cuda.map_err(|e| reason(&e).0))),
        nvml_version: Some(r(nvml.sys_nvml_version())),
        gpus,
    }
}

impl GpuSource for NvmlSource {
    fn status(&self) -> SourceStatus {
        SourceStatus::Nvml { library: self.library.clone(), attempts: self.attempts.clone() }
    }
    fn inventory(&self) -> Arc<Inventory> {
        Arc::clone(&self.inventory)
    }
    fn sample(&self, _t: f64) -> Vec<GpuSample> {
        (0..self.inventory.gpus.len() as u32).map(|i| self.sample_one(i)).collect()
    }
    fn sample_slow(&self, _t: f64) -> Vec<GpuSlowSample> {
        (0..self.inventory.gpus.len() as u32).map(|i| self.slow_one(i)).collect()
    }
    fn facts(&self) -> Vec<GpuFacts> {
        (0..self.inventory.gpus.len() as u32).filter_map(|i| self.facts_one(i)).collect()
    }
    fn memory_used(&self) -> Vec<(u32, u64)> {
        let lost = self.lost.lock().map(|l| l.keys().copied().collect::<Vec<u32>>()).unwrap_or_default();
        (0..self.inventory.gpus.len() as u32)
            .filter(|i| !lost.contains(i))
            .filter_map(|i| {
                let dev = self.nvml.device_by_index(i).ok()?;
                Some((i, self.memory(&dev).ok()?.2))
            })
            .collect()
    }
    fn in_flight(&self, slow: bool) -> Option<crate::i18n::Message> {
        let call = self.calls[usize::from(slow)].lock().ok().and_then(|c| *c);
        call.map(|(idx, m)| msg!("{call} on GPU {idx}", call = m.call(), idx = idx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_library_lists_every_attempt_and_says_what_to_do() {
        let paths = vec!["/nonexistent/libnvidia-ml.so.1".to_string(), "/also/missing/libnvidia-ml.so".to_string()];
        let Err(no) = NvmlSource::open_from(&paths) else {
            panic!("a missing library must not open");
        };
        assert_eq!(no.attempts.len(), 2);
        assert!(no.attempts.iter().all(|a| !a.error.is_empty()));
        assert!(no.summary.en().contains("not found"), "{}", no.summary.en());
        assert!(no.next_step.en().contains("driver"), "{}", no.next_step.en());
    }

    #[test]
    fn version_mismatch_says_reboot() {
        let (summary, next) = explain_init_error(&NvmlError::LibRmVersionMismatch);
        assert!(summary.en().contains("driver was updated"));
        assert!(next.en().starts_with("Reboot"));
    }

    #[test]
    fn candidate_order_on_linux() {
        if cfg!(target_os = "linux") && std::env::var_os(NVML_LIB_ENV).is_none() {
            assert_eq!(candidates(), ["libnvidia-ml.so.1", "libnvidia-ml.so", "/usr/lib/wsl/lib/libnvidia-ml.so.1"]);
        }
    }
}
