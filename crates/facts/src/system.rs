//! [`SystemView`]: everything a check reads, from the live machine or from a capture directory.
//!
//! Plain files are read by absolute path (`/proc/modules`); what is not a plain file (environment,
//! user and groups, device nodes, symlinks, NVML answers, libraries found, kernel-log lines, the
//! app's renderer) lives in [`Meta`]. A capture is `DIR/capture.json` (the [`Meta`] plus a format
//! version) and `DIR/fs/<absolute path>` for each file the checks read. See docs/capture-format.md.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::i18n::Message;

use serde::{Deserialize, Serialize};

use crate::telemetry::sample::{GpuFacts, GpuSample, Inventory};
use crate::telemetry::source::SourceStatus;

/// The capture format this build writes and reads.
/// Version 2 added every library candidate, device-node open results, MIG devices, the kernel
/// log's source; version-1 captures still load, with those facts missing (`None`). Version 3: a
/// text of gpu-doctor's own (a reason, NVML's summary and next step, a hung call) may be a message
/// object (docs/messages.md, compact messages), which a version-2 reader cannot read; version-2
/// captures (strings only) load as they are.
pub const CAPTURE_VERSION: u32 = 3;
/// The largest `capture.json` read (a real one is well under 1 MiB).
const CAPTURE_JSON_CAP: u64 = 64 << 20;
/// Value of the `format` field of `capture.json`.
pub const CAPTURE_FORMAT: &str = "gpu-doctor-capture";

/// The current user.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserInfo {
    /// Login name, when known.
    pub name: Option<String>,
    /// Effective user id.
    pub uid: u32,
    /// Supplementary and primary groups: (gid, name).
    pub groups: Vec<(u32, String)>,
}

/// A device node's type, numbers, owner and mode.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceNode {
    /// Absolute path, e.g. `/dev/nvidiactl`.
    pub path: String,
    /// True for a character device.
    pub char_device: bool,
    /// Permission bits (e.g. 0o666).
    pub mode: u32,
    /// Owner uid.
    pub uid: u32,
    /// Owner gid.
    pub gid: u32,
    /// Group name of `gid`, when known.
    pub group: Option<String>,
    /// Device major number.
    pub major: u32,
    /// Device minor number.
    pub minor: u32,
    /// Opening the node (then closing it, nothing else): `ok`, or the error, e.g. `Operation not
    /// permitted (os error 1)`. `None` when not tried (a version-1 capture, a directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<String>,
}

/// One candidate file for a driver library. `Meta::libraries` lists every candidate of each name
/// in the dynamic loader's order (version 2; a version-1 capture holds only the first): the first
/// of a name is what a normal program loads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LibraryFound {
    /// The name looked up, e.g. `libcuda.so.1`.
    pub name: String,
    /// The file.
    pub path: String,
    /// Its real path after symlinks (carries the driver version, e.g. `libcuda.so.550.54.15`).
    pub real_path: String,
    /// Where the loader finds it: `LD_LIBRARY_PATH`, `ld.so.cache`, `system` (a default directory
    /// or `/etc/ld.so.conf.d`), or `not on the loader's path` (e.g. `/usr/lib/wsl/lib` when no
    /// configuration names it).
    pub via: String,
}

/// NVML as the product saw it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NvmlView {
    /// Loaded, failed (with every attempt), asleep...
    pub status: SourceStatus,
    /// Versions and GPUs.
    pub inventory: Inventory,
    /// One sample per GPU (throttle, PCIe link, ECC...), when NVML opened.
    pub samples: Vec<GpuSample>,
    /// Configuration and health facts per GPU (persistence, compute/MIG mode, row remapping).
    #[serde(default)]
    pub facts: Vec<GpuFacts>,
    /// Seconds after which the checks stopped waiting for NVML to open and answer (a hung
    /// driver); `None` when it answered (or in a version-1 capture, which could not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub did_not_return: Option<u64>,
    /// The NVML call that had not returned then, in words ("nvmlInit (opening NVML)",
    /// "nvmlDeviceGetTemperature on GPU 1"), when known (v2).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::i18n::message::compact_option")]
    pub hung_call: Option<crate::i18n::Message>,
}

/// Kernel-log lines about NVIDIA (NVRM, Xid), or why they could not be read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelLog {
    /// The matching lines, oldest first.
    Lines(Vec<String>),
    /// Not readable (e.g. `kernel.dmesg_restrict=1` for a non-root user): what was tried and what
    /// the system said (`/dev/kmsg: Operation not permitted (os error 1); ...`).
    Unreadable(String),
}

/// What [`KernelLog::Unreadable`] holds on a machine that has no Linux kernel log.
pub const NO_LINUX_KERNEL_LOG: &str = crate::tr_key!("no Linux kernel log on this platform");

/// What [`KernelLog::Unreadable`] holds for an imported report that has no kernel log.
pub const NOT_IN_REPORT: &str = crate::tr_key!("not in this report");

/// Why the kernel log could not be read, in a sentence of the reader's language: `why` as
/// [`KernelLog::Unreadable`] holds it (captures made before this held the English sentence
/// around it).
pub fn kernel_log_unreadable(why: &str) -> crate::i18n::Message {
    const OLD_START: &str = "the kernel log is not readable by this user (";
    const OLD_END: &str = "); run `sudo dmesg | grep -i -e nvrm -e xid` to see it";
    let tried = why.strip_prefix(OLD_START).and_then(|w| w.strip_suffix(OLD_END)).unwrap_or(why);
    if tried == NO_LINUX_KERNEL_LOG || tried == NOT_IN_REPORT || !tried.is_ascii() {
        // (A sentence already: this platform's, or one made in the reader's language.)
        return crate::i18n::Message::from_english(tried);
    }
    crate::msg!("the kernel log is not readable by this user ({tried})", tried = tried)
}

/// Which kernel-log source was read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelLogSource {
    /// The source read, when one was readable.
    pub read: Option<String>,
    /// Sources tried and not readable: (source, why).
    pub tried: Vec<(String, String)>,
}

/// The operating system a view was taken on (`"linux"` or `"windows"` in a capture; anything else
/// a newer version may write reads as [`Platform::Other`], judged like Linux).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    /// Linux (WSL included: its facts are Linux files).
    #[default]
    Linux,
    /// Windows.
    Windows,
    /// A platform this version does not know.
    #[serde(other)]
    Other,
}

impl Platform {
    /// The platform this program runs on.
    pub fn this() -> Platform {
        if cfg!(windows) { Platform::Windows } else { Platform::Linux }
    }
}

/// Everything that is not a plain file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// The operating system.
    pub platform: Platform,
    /// GPU-related environment variables that are set.
    pub env: BTreeMap<String, String>,
    /// The user running the checks.
    pub user: UserInfo,
    /// NVIDIA device nodes (`/dev/nvidia*`, `/dev/nvidia-caps/*`, `/dev/dxg`).
    pub device_nodes: Vec<DeviceNode>,
    /// Symlink targets read by the checks (e.g. a PCI function's `driver`).
    pub links: BTreeMap<String, String>,
    /// Directory listings read by the checks.
    pub listings: BTreeMap<String, Vec<String>>,
    /// NVML's answers; `None` when not probed.
    pub nvml: Option<NvmlView>,
    /// `libcuda.so.1`, `libnvidia-ml.so.1` as the loader would find them.
    pub libraries: Vec<LibraryFound>,
    /// NVRM/Xid kernel-log lines.
    pub kernel_log: KernelLog,
    /// Where the kernel-log lines came from (`/dev/kmsg`, `/var/log/kern.log`...), and each source
    /// tried before it with why it could not be read. `None` in a version-1 capture.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_log_source: Option<KernelLogSource>,
    /// The app's renderer, when known (GUI only).
    pub renderer: Option<String>,
    /// Windows GPU watchdog (TDR) registry values; `None` elsewhere.
    #[serde(default)]
    pub tdr: Option<Tdr>,
    /// Loading libcuda and calling `cuInit`; `None` when not probed (a sleeping GPU, old capture).
    #[serde(default)]
    pub cuda: Option<CudaProbe>,
    /// Who holds the NVIDIA device files and which of NVIDIA's daemons run (v3); `None` when not
    /// collected (Windows, an imported bug report, older captures).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holders: Option<super::holders::DeviceHolders>,
    /// What the Windows checks read; `None` elsewhere (and in captures from before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub windows: Option<super::winfacts::WindowsFacts>,
    /// Collected for `check --quick` (a scheduler's health check): the cuInit probe and the
    /// Python-environment search were left out, and their checks say so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub quick: bool,
    /// Facts the source did not collect at all (an imported nvidia-bug-report.log holds no
    /// library search, device-file listing, environment or process list): `device_nodes`,
    /// `libraries`, `environment`, `python`, `processes`, `cuda`. The checks that need one say
    /// "not in this report" instead of judging an empty list. `container`: the container markers
    /// (`/.dockerenv`, `/run/.containerenv`, `/proc/1/cgroup`).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub not_collected: BTreeSet<String>,
}

/// What happened when the CUDA driver library was loaded and initialised.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CudaProbe {
    /// The library that loaded (`libcuda.so.1`, `nvcuda.dll`); `None` when none did.
    pub library: Option<String>,
    /// Why loading failed.
    pub load_error: Option<String>,
    /// `cuInit(0)`'s CUresult (0 = success).
    pub init_code: Option<i32>,
    /// `cuDriverGetVersion`, e.g. "12.4".
    pub driver_version: Option<String>,
    /// `cuDeviceGetCount`.
    pub devices: Option<i32>,
    /// Seconds after which the probe gave up because the calls had not returned (a hung driver);
    /// `None` when they returned (or in a version-1 capture, which could not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub did_not_return: Option<u64>,
    /// The call that had not returned then: `cuInit`, `cuDriverGetVersion` or `cuDeviceGetCount`
    /// (loading the library itself: `dlopen`), when known (v2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hung_call: Option<String>,
}

/// `HKLM\System\CurrentControlSet\Control\GraphicsDrivers` TDR values; `None` = not set (default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tdr {
    /// `TdrLevel` (0 off, 3 recover = default).
    pub level: Option<u32>,
    /// `TdrDelay`, seconds (default 2).
    pub delay: Option<u32>,
    /// `TdrDdiDelay`, seconds (default 5).
    pub ddi_delay: Option<u32>,
}

/// The environment variables a capture keeps (values only of these; nothing else is recorded).
pub const GPU_ENV_VARS: &[&str] = &[
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES",
    "NVIDIA_REQUIRE_CUDA",
    "LD_LIBRARY_PATH",
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDA_LAUNCH_BLOCKING",
    "CUDA_MODULE_LOADING",
    "PYTORCH_CUDA_ALLOC_CONF",
    "CONDA_PREFIX",
    "VIRTUAL_ENV",
    "CONDA_ENVS_PATH",
    "PYENV_ROOT",
    "PATH",
    "PWD",
    "WSL_DISTRO_NAME",
    "WSL_INTEROP",
    "KUBERNETES_SERVICE_HOST",
    "container",
    "GALLIUM_DRIVER",
    // The HPC container runtimes and schedulers a job may run under (which GPUs it was given).
    "APPTAINER_CONTAINER",
    "SINGULARITY_CONTAINER",
    "SLURM_JOB_ID",
    "SLURM_JOB_GPUS",
    "SLURM_STEP_GPUS",
    "GPU_DEVICE_ORDINAL",
    "PBS_JOBID",
    "LSB_JOBID",
    "CUDA_MPS_PIPE_DIRECTORY",
];

/// The module-configuration folders modprobe reads (modprobe.d(5)): the driver checks look in them
/// for a blacklisted NVIDIA module, and a capture keeps their lines about the GPU's drivers.
pub const MODPROBE_DIRS: &[&str] = &["/etc/modprobe.d", "/run/modprobe.d", "/usr/lib/modprobe.d", "/lib/modprobe.d"];

/// The folder names of project environments looked for in a home or working directory (the last
/// one, `env`, only there, not one level under). The capture writer keeps these names, and only
/// these, from the listings of a user's own folders.
pub const VENV_NAMES: &[&str] = &[".venv", "venv", "env"];

/// What a check reads. Paths are absolute, `/`-separated.
pub trait SystemView: Send + Sync {
    /// A text file, or `None` when missing or unreadable.
    fn read(&self, path: &str) -> Option<String>;
    /// A binary file (efivars).
    fn read_bytes(&self, path: &str) -> Option<Vec<u8>>;
    /// File names in a directory, sorted; `None` when missing.
    fn list(&self, dir: &str) -> Option<Vec<String>>;
    /// A symlink's target.
    fn link(&self, path: &str) -> Option<String>;
    /// Whether a path exists (file, directory or link).
    fn exists(&self, path: &str) -> bool;
    /// Everything that is not a plain file.
    fn meta(&self) -> &Meta;
    /// Entries that were not read because they were unsafe (a capture's links leaving it, FIFOs,
    /// devices, oversized files), as `path: why`.
    fn refused(&self) -> Vec<String> {
        Vec::new()
    }
    /// True when the view is a capture (support staff reading another machine).
    fn is_capture(&self) -> bool {
        false
    }
    /// When the file was made (a capture's `created`, a bug report's `Date:` line), as it says
    /// it; `None` for this machine now or a file that does not say.
    fn made(&self) -> Option<String> {
        None
    }
}

/// The entries of `dir`, sorted; `None` when it cannot be read.
pub(crate) fn sorted_names(dir: &Path) -> Option<Vec<String>> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    Some(v)
}

// ---------------------------------------------------------------------------------------------
// The live machine

/// How a check used a path (a [`LiveSystem`] records it; the capture writer decides by it what
/// of the path a capture may hold: only a path that was *read* can have its content copied).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Access {
    /// Its content was read.
    pub read: bool,
    /// It was listed as a directory.
    pub list: bool,
    /// It was read as a symlink.
    pub link: bool,
    /// Only whether it exists was asked.
    pub exists: bool,
}

/// The machine this process runs on, read under a system root (normally `/`). Records every path
/// it is asked for and how, so that [`super::capture::write_capture`] can copy what the checks
/// read (by its allow-list) and nothing else.
pub struct LiveSystem {
    root: PathBuf,
    meta: Meta,
    touched: Mutex<BTreeMap<String, Access>>,
}

impl LiveSystem {
    /// A live view with already collected `meta` (see [`collect_meta`]).
    pub fn new(root: PathBuf, meta: Meta) -> Self {
        LiveSystem { root, meta, touched: Mutex::new(BTreeMap::new()) }
    }

    /// Where `path` is on this machine. `None` on Windows: the checks' paths are Linux paths
    /// (`/sys`, `/proc`, `/dev`), and on Windows `/sys` would be a folder on the current drive (under
    /// Wine, the Linux host's own `/sys`): what a Windows check needs is read into
    /// [`Meta::windows`] instead.
    fn at(&self, path: &str, how: fn(&mut Access)) -> Option<PathBuf> {
        if cfg!(windows) {
            return None;
        }
        if let Ok(mut t) = self.touched.lock() {
            how(t.entry(path.to_string()).or_default());
        }
        Some(self.root.join(path.trim_start_matches('/')))
    }

    /// Every path read, listed, linked or looked for so far, with how.
    pub fn touched(&self) -> Vec<(String, Access)> {
        self.touched.lock().map(|t| t.iter().map(|(p, a)| (p.clone(), *a)).collect()).unwrap_or_default()
    }

    /// Where `path` (absolute, as the checks name it) is on this machine, without recording it.
    pub(crate) fn host_path(&self, path: &str) -> PathBuf {
        self.root.join(path.trim_start_matches('/'))
    }

    /// The metadata collected for this machine.
    pub(crate) fn collected(&self) -> &Meta {
        &self.meta
    }
}

impl SystemView for LiveSystem {
    fn read(&self, path: &str) -> Option<String> {
        self.read_bytes(path).map(|b| String::from_utf8_lossy(&b).into_owned())
    }
    fn read_bytes(&self, path: &str) -> Option<Vec<u8>> {
        // Regular files only, capped: a FIFO or device where a file was expected never hangs.
        crate::safe_fs::read_regular(&self.at(path, |a| a.read = true)?, crate::safe_fs::PROC_TEXT_CAP).ok()
    }
    fn list(&self, dir: &str) -> Option<Vec<String>> {
        sorted_names(&self.at(dir, |a| a.list = true)?)
    }
    fn link(&self, path: &str) -> Option<String> {
        std::fs::read_link(self.at(path, |a| a.link = true)?).ok().map(|p| p.to_string_lossy().into_owned())
    }
    fn exists(&self, path: &str) -> bool {
        self.at(path, |a| a.exists = true).is_some_and(|p| std::fs::symlink_metadata(p).is_ok())
    }
    fn meta(&self) -> &Meta {
        &self.meta
    }
}

// ---------------------------------------------------------------------------------------------
// A capture directory

/// Why a capture cannot be opened.
#[derive(Debug)]
pub enum CaptureError {
    /// No `capture.json`, or it cannot be read.
    Missing(PathBuf, Message),
    /// `capture.json` is not valid JSON of the expected shape.
    Malformed(PathBuf, Message),
    /// Written by a newer gpu-doctor.
    FutureVersion {
        /// The capture directory.
        path: PathBuf,
        /// Its version.
        found: u32,
    },
    /// Writing failed.
    Write(PathBuf, Message),
    /// A capture archive (`.tar.gz`) cannot be read or holds something unsafe.
    Archive(PathBuf, Message),
    /// The checklist of a server over SSH could not be run or read.
    Remote(crate::telemetry::remote::RemoteError),
}

impl crate::i18n::ToMessage for CaptureError {
    fn to_message(&self) -> crate::i18n::Message {
        self.message()
    }
}

/// In English (logs); a front end shows [`crate::i18n::ToMessage::to_message`] in its language.
impl std::fmt::Display for CaptureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message().en())
    }
}

/// True when `path` is a file that starts like a gzip stream (a capture archive, not a directory).
/// (Here, below the archive module that reads them, so that a capture error can tell an archive
/// from an imported log without an import cycle.)
pub fn is_archive(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 2];
    path.is_file()
        && std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok()
        && magic == [0x1f, 0x8b]
}

impl CaptureError {
    /// What went wrong, as a message.
    pub fn message(&self) -> Message {
        match self {
            CaptureError::Missing(dir, why) => crate::msg!(
                "{dir}: not a gpu-doctor capture (cannot read capture.json: {why})",
                dir = dir.display(),
                why = why
            ),
            // (An imported log or nvidia-smi output is a file with no capture.json.)
            CaptureError::Malformed(file, why) if file.is_file() && !is_archive(file) => {
                crate::msg!("{file}: {why}", file = file.display(), why = why)
            }
            CaptureError::Malformed(dir, why) => {
                crate::msg!("{dir}: capture.json is damaged ({why})", dir = dir.display(), why = why)
            }
            CaptureError::FutureVersion { path, found } => crate::msg!(
                "{path}: capture format version {found} is newer than this gpu-doctor understands (version {version}); update gpu-doctor to read it",
                path = path.display(),
                found = found,
                version = CAPTURE_VERSION
            ),
            CaptureError::Write(dir, why) => {
                crate::msg!("cannot write the capture to {dir}: {why}", dir = dir.display(), why = why)
            }
            CaptureError::Archive(file, why) => {
                crate::msg!("{file}: cannot use this capture archive: {why}", file = file.display(), why = why)
            }
            CaptureError::Remote(e) => {
                crate::msg!("{message} Next step: {next_step}", message = &e.message, next_step = &e.next_step)
            }
        }
    }
}

impl std::error::Error for CaptureError {}

impl CaptureError {
    /// The same error about `path` (a capture archive, rather than the temporary directory it was
    /// unpacked into).
    pub fn about(self, path: &Path) -> Self {
        let p = path.to_path_buf();
        match self {
            CaptureError::Missing(_, e) => CaptureError::Missing(p, e),
            CaptureError::Malformed(_, e) => CaptureError::Malformed(p, e),
            CaptureError::FutureVersion { found, .. } => CaptureError::FutureVersion { path: p, found },
            CaptureError::Write(_, e) => CaptureError::Write(p, e),
            CaptureError::Archive(_, e) => CaptureError::Archive(p, e),
            CaptureError::Remote(e) => CaptureError::Remote(e),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct CaptureFile {
    format: String,
    version: u32,
    #[serde(default)]
    created: String,
    #[serde(default)]
    app_version: String,
    meta: Meta,
}

/// A machine as captured by `gpu-doctor-cli capture`.
pub struct CapturedSystem {
    fs: PathBuf,
    meta: Meta,
    created: String,
    refused: Mutex<BTreeSet<String>>,
}

impl CapturedSystem {
    /// Opens `dir` (checks the format and version).
    pub fn open(dir: &Path) -> Result<Self, CaptureError> {
        let file = dir.join("capture.json");
        // A FIFO or a device here must not hang or exhaust the reader.
        let bytes = crate::safe_fs::read_regular(&file, CAPTURE_JSON_CAP)
            .map_err(|e| CaptureError::Missing(dir.into(), Message::data(e.to_string())))?;
        let text = String::from_utf8_lossy(&bytes);
        let head: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| CaptureError::Malformed(dir.into(), Message::data(e.to_string())))?;
        if head.get("format").and_then(|f| f.as_str()) != Some(CAPTURE_FORMAT) {
            return Err(CaptureError::Malformed(
                dir.into(),
                crate::msg!("the format field is not \"{format}\"", format = CAPTURE_FORMAT),
            ));
        }
        match head.get("version").and_then(serde_json::Value::as_u64) {
            Some(v) if v > u64::from(CAPTURE_VERSION) => {
                return Err(CaptureError::FutureVersion { path: dir.into(), found: v as u32 });
            }
            Some(_) => {}
            None => return Err(CaptureError::Malformed(dir.into(), crate::msg!("no version field"))),
        }
        let cap: CaptureFile = serde_json::from_value(head)
            .map_err(|e| CaptureError::Malformed(dir.into(), Message::data(e.to_string())))?;
        let mut refused = BTreeSet::new();
        let mut fs = dir.join("fs");
        // `fs` itself a link (to `/`, say) would make the support engineer's machine the user's.
        if std::fs::symlink_metadata(&fs).is_ok_and(|m| m.file_type().is_symlink()) {
            refused.insert(format!("fs: {}", crate::safe_fs::ReadError::Escapes(dir.display().to_string())));
            fs = dir.join("fs-is-a-link-and-was-not-read");
        }
        Ok(CapturedSystem { fs, meta: cap.meta, created: cap.created, refused: Mutex::new(refused) })
    }

    /// `path` inside the capture, or `None` (and the path noted as refused) when a link leads out
    /// of it. A capture is a stranger's files: nothing outside `fs/` is ever read.
    fn at(&self, path: &str) -> Option<PathBuf> {
        match crate::safe_fs::contained(&self.fs, path) {
            Ok(p) => Some(p),
            Err(e @ crate::safe_fs::ReadError::Escapes(_)) => {
                self.refuse(path, &e);
                None
            }
            Err(_) => None,
        }
    }

    fn refuse(&self, path: &str, why: &crate::safe_fs::ReadError) {
        if let Ok(mut r) = self.refused.lock() {
            r.insert(format!("{path}: {why}"));
        }
    }

    fn bytes(&self, path: &str) -> Option<Vec<u8>> {
        let p = self.at(path)?;
        match crate::safe_fs::read_regular(&p, crate::safe_fs::PROC_TEXT_CAP) {
            Ok(b) => Some(b),
            Err(crate::safe_fs::ReadError::Io(_)) => None,
            Err(e) => {
                self.refuse(path, &e);
                None
            }
        }
    }
}

impl SystemView for CapturedSystem {
    fn read(&self, path: &str) -> Option<String> {
        self.bytes(path).map(|b| String::from_utf8_lossy(&b).into_owned())
    }
    fn read_bytes(&self, path: &str) -> Option<Vec<u8>> {
        self.bytes(path)
    }
    fn list(&self, dir: &str) -> Option<Vec<String>> {
        if let Some(l) = self.meta.listings.get(dir) {
            return Some(l.clone());
        }
        sorted_names(&self.at(dir)?)
    }
    fn link(&self, path: &str) -> Option<String> {
        self.meta.links.get(path).cloned()
    }
    fn exists(&self, path: &str) -> bool {
        self.meta.links.contains_key(path) || self.meta.listings.contains_key(path) || self.at(path).is_some()
    }
    fn meta(&self) -> &Meta {
        &self.meta
    }
    fn refused(&self) -> Vec<String> {
        self.refused.lock().map(|r| r.iter().cloned().collect()).unwrap_or_default()
    }
    fn is_capture(&self) -> bool {
        true
    }
    fn made(&self) -> Option<String> {
        // RFC 3339 in UTC, shown to the minute ("2026-12-07 20:49 UTC").
        let t = chrono::DateTime::parse_from_rfc3339(self.created.trim()).ok()?;
        Some(t.with_timezone(&chrono::Utc).format("%Y-%m-%d %H:%M UTC").to_string())
    }
}

/// Writes `dir/capture.json` for `meta` (the files under `dir/fs/` are the caller's).
pub fn write_capture_json(dir: &Path, meta: Meta) -> Result<(), CaptureError> {
    let file = CaptureFile {
        format: CAPTURE_FORMAT.to_string(),
        version: CAPTURE_VERSION,
        created: chrono::Utc::now().to_rfc3339(),
        app_version: env!("CARGO_PKG_VERSION").to_string(),
        meta,
    };
    let json = serde_json::to_string_pretty(&file)
        .map_err(|e| CaptureError::Write(dir.into(), Message::data(e.to_string())))?;
    crate::safe_fs::write_new_atomic(&dir.join("capture.json"), (json + "\n").as_bytes())
        .map_err(|e| CaptureError::Write(dir.into(), Message::data(e.to_string())))
}
