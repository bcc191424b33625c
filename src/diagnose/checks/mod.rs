//! The checks as a registry. [`CHECKS`] lists every check once, in the method's order (PCI device →
//! driver → CUDA → container → permissions → WSL → environment → runtime health → Windows): its
//! stable id, its layer, its title, the checks it depends on and the function that judges it. The
//! functions live in one file per layer; this module holds the registry, the shared context
//! [`Ctx`] (the view plus the facts several checks derive from it, computed once per run) and the
//! helpers the layers share.
//!
//! Every check runs on every machine, in registry order, and reads only through [`SystemView`], so
//! the same code judges this machine and a capture. Whether a check applies (platform, container,
//! WSL) is decided inside it: one that does not apply returns a skipped verdict saying why. Ids are
//! stable: users, reports and the test fixtures refer to them. Each layer's module doc names the
//! public sources of its rules and fix texts.
//!
//! Length: the registry is one table of every check (about 400 lines of plain data that read best
//! in one place, in the method's order); the check functions live in the layer files.

mod access;
mod container;
mod cuda;
mod cuinit;
mod frameworks;
mod gpuinit;
pub(crate) use cuda::VENV_NAMES;
mod driver;
mod env;
mod fixes;
mod hardware;
mod runtime;
mod windows;
mod winstopped;
mod wsl;

pub use windows::tdr_check;

use super::parse;
use super::system::{NvmlView, SystemView};
use super::{Check, Layer, Verdict};
use crate::diagnose::system::Platform;
use crate::telemetry::sample::{GpuFacts, GpuSample};
use crate::telemetry::source::SourceStatus;

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
    /// (in English here; [`CheckDef::blank`] puts it in the current language).
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

/// Every check, in the order they run (the order of [`super::Report::checks`]).
pub static CHECKS: &[CheckDef] = &[
    CheckDef {
        id: "WIN-ADAPTER",
        platforms: Platforms::Windows,
        layer: Layer::Hardware,
        title: crate::tr_key!("NVIDIA display adapter (Device Manager)"),
        depends_on: &[],
        explains: &["DRV-08", "CUDA-INIT", "WIN-04", "RT-LOST"],
        run: windows::win_adapter,
    },
    CheckDef {
        id: "HW-01",
        platforms: Platforms::Linux,
        layer: Layer::Hardware,
        title: crate::tr_key!("NVIDIA GPU on the PCI bus"),
        depends_on: &[],
        explains: &[],
        run: hardware::gpu_on_pci_bus,
    },
    CheckDef {
        id: "HW-02",
        platforms: Platforms::Linux,
        layer: Layer::Hardware,
        title: crate::tr_key!("Kernel driver of each GPU"),
        depends_on: &["HW-01", "DRV-04", "DRV-01"],
        explains: &[],
        run: hardware::kernel_driver_bound,
    },
    CheckDef {
        id: "DRV-01",
        platforms: Platforms::Linux,
        layer: Layer::Driver,
        title: crate::tr_key!("NVIDIA kernel module"),
        depends_on: &["HW-01", "DRV-04", "DRV-05"],
        explains: &[],
        run: driver::kernel_module_loaded,
    },
    CheckDef {
        id: "DRV-02",
        platforms: Platforms::Linux,
        layer: Layer::Driver,
        title: crate::tr_key!("Kernel module version"),
        depends_on: &[],
        explains: &[],
        run: driver::kernel_module_version,
    },
    CheckDef {
        id: "DRV-04",
        platforms: Platforms::Linux,
        layer: Layer::Driver,
        title: crate::tr_key!("nouveau and the GPU"),
        depends_on: &["HW-01"],
        explains: &[],
        run: driver::nouveau_not_holding_gpu,
    },
    CheckDef {
        id: "DRV-05",
        platforms: Platforms::Linux,
        layer: Layer::Driver,
        title: crate::tr_key!("Secure Boot and the kernel module"),
        depends_on: &[],
        // nouveau takes the GPU when Secure Boot keeps the NVIDIA module out.
        explains: &["DRV-04"],
        run: driver::secure_boot_and_module,
    },
    CheckDef {
        id: "DRV-HUNG",
        platforms: Platforms::Any,
        layer: Layer::Driver,
        title: crate::tr_key!("Driver responsiveness"),
        depends_on: &[],
        // A call that never returns wedges everything that calls the driver after it.
        explains: &["DRV-08", "CUDA-LIB", "CUDA-INIT", "CUDA-01", "HW-03", "RT-LOST", "RT-XID"],
        run: driver::drv_hung,
    },
    CheckDef {
        id: "DRV-08",
        platforms: Platforms::Any,
        layer: Layer::Driver,
        title: crate::tr_key!("NVML (the driver's management library)"),
        depends_on: &["DRV-01", "HW-01", "DRV-06", "CONT-02", "WSL-01", "WSL-02", "PERM-02", "PERM-01"],
        explains: &[],
        run: driver::nvml_loads,
    },
    CheckDef {
        id: "DRV-06",
        platforms: Platforms::Linux,
        layer: Layer::Driver,
        title: crate::tr_key!("Kernel module and library versions"),
        depends_on: &["DRV-01", "HW-01"],
        explains: &[],
        run: driver::module_and_libraries_match,
    },
    CheckDef {
        id: "HW-03",
        platforms: Platforms::Linux,
        layer: Layer::Hardware,
        title: crate::tr_key!("PCI GPUs seen by NVML"),
        depends_on: &["DRV-08", "DRV-06", "DRV-01"],
        explains: &[],
        run: hardware::nvml_sees_every_gpu,
    },
    CheckDef {
        id: "DRV-09",
        platforms: Platforms::Linux,
        layer: Layer::Driver,
        title: crate::tr_key!("Persistence daemon"),
        depends_on: &[],
        explains: &[],
        run: driver::persistence_daemon,
    },
    CheckDef {
        id: "DRV-10",
        platforms: Platforms::Linux,
        layer: Layer::Driver,
        title: crate::tr_key!("Kernel module flavour for the GPU generation"),
        depends_on: &[],
        explains: &[],
        run: driver::module_flavour_fits_gpu,
    },
    CheckDef {
        id: "CUDA-01",
        platforms: Platforms::Any,
        layer: Layer::Cuda,
        title: crate::tr_key!("Newest CUDA the driver supports"),
        depends_on: &["DRV-08", "DRV-06", "DRV-01"],
        explains: &[],
        run: cuda::driver_cuda_version,
    },
    CheckDef {
        id: "CUDA-LIB",
        platforms: Platforms::Linux,
        layer: Layer::Cuda,
        title: crate::tr_key!("CUDA driver library (libcuda.so.1)"),
        depends_on: &["DRV-08", "DRV-06", "DRV-01", "CONT-02", "WSL-01", "WSL-02"],
        explains: &[],
        run: cuda::cuda_lib,
    },
    CheckDef {
        id: "CUDA-INIT",
        platforms: Platforms::Any,
        layer: Layer::Cuda,
        title: crate::tr_key!("CUDA driver initialisation (cuInit)"),
        depends_on: &[
            "CUDA-LIB", "DRV-08", "DRV-06", "DRV-01", "PERM-01", "PERM-02", "CONT-02", "WSL-01", "WSL-02", "ENV-01",
            "ENV-03",
        ],
        explains: &[],
        run: cuda::cuda_init,
    },
    CheckDef {
        id: "CUDA-04",
        platforms: Platforms::Linux,
        layer: Layer::Cuda,
        title: crate::tr_key!("PyTorch builds vs the driver"),
        depends_on: &["CUDA-01", "DRV-08"],
        explains: &[],
        run: cuda::torch_builds_vs_driver,
    },
    CheckDef {
        id: "CUDA-08",
        platforms: Platforms::Linux,
        layer: Layer::Cuda,
        title: crate::tr_key!("TensorFlow, JAX, ONNX Runtime and PaddlePaddle builds vs the driver"),
        depends_on: &["CUDA-01", "DRV-08"],
        explains: &[],
        run: frameworks::framework_builds_vs_driver,
    },
    CheckDef {
        id: "CUDA-07",
        platforms: Platforms::Linux,
        layer: Layer::Cuda,
        title: crate::tr_key!("GPU architecture supported by the PyTorch builds"),
        depends_on: &["DRV-08"],
        explains: &[],
        run: cuda::gpu_arch_in_torch_builds,
    },
    CheckDef {
        id: "WIN-TORCH",
        platforms: Platforms::Windows,
        layer: Layer::Cuda,
        title: crate::tr_key!("CUDA in the Python environments' PyTorch"),
        depends_on: &["WIN-ADAPTER"],
        explains: &[],
        run: windows::win_torch,
    },
    CheckDef {
        id: "CONT-01",
        platforms: Platforms::Linux,
        layer: Layer::Containers,
        title: crate::tr_key!("Container environment"),
        depends_on: &[],
        explains: &[],
        run: container::in_container,
    },
    CheckDef {
        id: "CONT-02",
        platforms: Platforms::Linux,
        layer: Layer::Containers,
        title: crate::tr_key!("GPUs in the container"),
        depends_on: &[],
        explains: &["DRV-08", "CUDA-LIB", "CUDA-INIT", "CUDA-01", "PERM-01", "PERM-02", "HW-03"],
        run: container::gpus_passed_into_container,
    },
    CheckDef {
        id: "PERM-01",
        platforms: Platforms::Linux,
        layer: Layer::Permissions,
        title: crate::tr_key!("GPU device files"),
        depends_on: &["DRV-01", "CONT-02"],
        explains: &[],
        run: access::device_files_present,
    },
    CheckDef {
        id: "PERM-02",
        platforms: Platforms::Linux,
        layer: Layer::Permissions,
        title: crate::tr_key!("This user's access to the GPU device files"),
        depends_on: &["PERM-01"],
        explains: &[],
        run: access::device_files_open,
    },
    CheckDef {
        id: "WSL-01",
        platforms: Platforms::Linux,
        layer: Layer::Wsl,
        title: crate::tr_key!("WSL version and GPU paravirtualisation"),
        depends_on: &[],
        explains: &[],
        run: wsl::wsl_gpu_paravirtualisation,
    },
    CheckDef {
        id: "WSL-02",
        platforms: Platforms::Linux,
        layer: Layer::Wsl,
        title: crate::tr_key!("Source of CUDA in WSL (/usr/lib/wsl/lib)"),
        depends_on: &["WSL-01"],
        explains: &["DRV-08", "CUDA-LIB", "CUDA-INIT", "CUDA-01"],
        run: wsl::wsl_cuda_from_windows_driver,
    },
    CheckDef {
        id: "WSL-08",
        platforms: Platforms::Linux,
        layer: Layer::Wsl,
        title: crate::tr_key!("Graphics rendering in WSL"),
        depends_on: &[],
        explains: &[],
        run: wsl::wsl_graphics,
    },
    CheckDef {
        id: "WIN-GPUPREF",
        platforms: Platforms::Windows,
        layer: Layer::Environment,
        title: crate::tr_key!("Programs held on the integrated GPU (hybrid laptops)"),
        depends_on: &[],
        explains: &[],
        run: windows::win_gpupref,
    },
    CheckDef {
        id: "ENV-01",
        platforms: Platforms::Any,
        layer: Layer::Environment,
        title: "CUDA_VISIBLE_DEVICES",
        depends_on: &["DRV-08", "PERM-02"],
        explains: &["CUDA-INIT"],
        run: env::cuda_visible_devices,
    },
    CheckDef {
        id: "ENV-02",
        platforms: Platforms::Any,
        layer: Layer::Environment,
        title: crate::tr_key!("GPU numbering in CUDA and nvidia-smi"),
        depends_on: &["DRV-08", "PERM-02"],
        explains: &[],
        run: env::cuda_and_smi_order,
    },
    CheckDef {
        id: "ENV-03",
        platforms: Platforms::Linux,
        layer: Layer::Environment,
        title: crate::tr_key!("LD_LIBRARY_PATH and the driver's libraries"),
        depends_on: &[],
        explains: &[],
        run: env::ld_library_path_shadows,
    },
    CheckDef {
        id: "WIN-TDR",
        platforms: Platforms::Windows,
        layer: Layer::Runtime,
        title: crate::tr_key!("Driver resets (TDR) in the last 7 days"),
        depends_on: &[],
        explains: &[],
        run: windows::win_tdr,
    },
    CheckDef {
        id: "RT-LOST",
        platforms: Platforms::Any,
        layer: Layer::Runtime,
        title: crate::tr_key!("GPUs answering"),
        depends_on: &["DRV-08"],
        // A lost GPU is missing from NVML's count, fails cuInit, and its Xid lines are the same fault.
        explains: &["HW-03", "CUDA-INIT", "CUDA-01", "RT-XID"],
        run: runtime::rt_lost,
    },
    CheckDef {
        id: "RT-03",
        platforms: Platforms::Any,
        layer: Layer::Runtime,
        title: crate::tr_key!("Memory repair (row remapping, retired pages)"),
        depends_on: &["DRV-08"],
        explains: &[],
        run: runtime::memory_repair,
    },
    CheckDef {
        id: "RT-XID",
        platforms: Platforms::Linux,
        layer: Layer::Runtime,
        title: crate::tr_key!("GPU errors in the kernel log (Xid)"),
        // The kernel log does not need NVML: a GPU that fell off the bus before NVML saw it is
        // found here. A fatal Xid (only those fail) explains what the GPU's loss breaks above it.
        depends_on: &["CONT-02", "WSL-02"],
        explains: &["HW-02", "HW-03", "DRV-08", "CUDA-INIT", "CUDA-01", "PERM-01", "PERM-02"],
        run: runtime::rt_xid,
    },
    CheckDef {
        id: "RT-05",
        platforms: Platforms::Any,
        layer: Layer::Runtime,
        title: crate::tr_key!("Clocks held back (throttle reasons)"),
        depends_on: &["DRV-08"],
        explains: &[],
        run: runtime::clocks_held_back,
    },
    CheckDef {
        id: "RT-04",
        platforms: Platforms::Any,
        layer: Layer::Runtime,
        title: crate::tr_key!("PCIe link speed and width"),
        depends_on: &["DRV-08"],
        explains: &[],
        run: runtime::pcie_link_at_max,
    },
    CheckDef {
        id: "RT-ECC",
        platforms: Platforms::Any,
        layer: Layer::Runtime,
        title: crate::tr_key!("Uncorrectable memory (ECC) errors"),
        depends_on: &["DRV-08"],
        explains: &[],
        run: runtime::rt_ecc,
    },
    CheckDef {
        id: "RT-08",
        platforms: Platforms::Any,
        layer: Layer::Runtime,
        title: crate::tr_key!("Other programs holding the GPU"),
        depends_on: &["DRV-08"],
        explains: &[],
        run: runtime::other_programs_on_gpu,
    },
    CheckDef {
        id: "RT-06",
        platforms: Platforms::Any,
        layer: Layer::Runtime,
        title: crate::tr_key!("MIG (multi-instance GPU) mode"),
        depends_on: &["DRV-08"],
        explains: &["CUDA-INIT"],
        run: runtime::mig_mode,
    },
    CheckDef {
        id: "RT-07",
        platforms: Platforms::Any,
        layer: Layer::Runtime,
        title: crate::tr_key!("Compute mode"),
        depends_on: &["DRV-08"],
        explains: &[],
        run: runtime::compute_mode,
    },
    CheckDef {
        id: "WIN-CUDAPATH",
        platforms: Platforms::Windows,
        layer: Layer::Cuda,
        title: crate::tr_key!("CUDA toolkit (CUDA_PATH) vs the driver"),
        depends_on: &["WIN-ADAPTER", "DRV-08"],
        explains: &[],
        run: windows::win_cudapath,
    },
    CheckDef {
        id: "WIN-POWER",
        platforms: Platforms::Windows,
        layer: Layer::Windows,
        title: crate::tr_key!("Power plan"),
        depends_on: &[],
        explains: &[],
        run: windows::win_power,
    },
    CheckDef {
        id: "WIN-02",
        platforms: Platforms::Windows,
        layer: Layer::Windows,
        title: crate::tr_key!("Driver model (WDDM / TCC / MCDM)"),
        depends_on: &[],
        explains: &[],
        run: windows::driver_model,
    },
    CheckDef {
        id: "WIN-VER",
        platforms: Platforms::Windows,
        layer: Layer::Windows,
        title: crate::tr_key!("Windows version"),
        depends_on: &[],
        explains: &[],
        run: windows::win_ver,
    },
    CheckDef {
        id: "WIN-WSL",
        platforms: Platforms::Windows,
        layer: Layer::Windows,
        title: crate::tr_key!("WSL from the Windows side"),
        depends_on: &[],
        explains: &[],
        run: windows::win_wsl,
    },
    WIN_01,
    CheckDef {
        id: "WIN-04",
        platforms: Platforms::Windows,
        layer: Layer::Windows,
        title: crate::tr_key!("nvml.dll"),
        depends_on: &[],
        explains: &[],
        run: windows::nvml_dll_found,
    },
    CheckDef {
        id: "WIN-03",
        platforms: Platforms::Windows,
        layer: Layer::Windows,
        title: crate::tr_key!("Driver version"),
        depends_on: &[],
        explains: &[],
        run: windows::driver_version_on_windows,
    },
];

/// The definition of the check with `id`.
pub fn find(id: &str) -> Option<&'static CheckDef> {
    CHECKS.iter().find(|d| d.id == id)
}

/// Runs every check for the view's platform over `v`, in registry order.
pub fn all(v: &dyn SystemView) -> Vec<Check> {
    let cx = Ctx::new(v);
    let platform = v.meta().platform;
    // A host that reserves every NVIDIA GPU for virtual machines (bound to vfio-pci or pci-stub)
    // runs no NVIDIA driver on purpose: the driver's, CUDA's, the device files' and the runtime's
    // checks do not apply to it, and none of them fails.
    let reserved = reserved_for_vms(&cx);
    CHECKS
        .iter()
        .filter(|d| d.platforms.includes(platform))
        .map(|d| match not_collected_for(d.id, v) {
            Some(what) => d
                .blank()
                .verdict(Verdict::Skipped, crate::msg!("not in this report: {what}", what = what))
                .found(crate::msg!("Not in this report: {what}", what = what)),
            None if reserved.is_some()
                && matches!(d.layer, Layer::Driver | Layer::Cuda | Layer::Permissions | Layer::Runtime) =>
            {
                d.blank().verdict(
                    Verdict::Skipped,
                    crate::i18n::Message::new(RESERVED_FOR_VMS).arg("gpus", reserved.clone().unwrap_or_default()),
                )
            }
            None => (d.run)(d.blank(), &cx),
        })
        .collect()
}

/// The summary of a check that does not apply because every GPU is reserved for virtual machines.
pub(crate) const RESERVED_FOR_VMS: &str = crate::tr_key!(
    "the GPUs are reserved for virtual machines ({gpus}): no NVIDIA driver is meant to run on this host"
);

/// The NVIDIA GPUs and the driver that holds each ("0000:01:00.0: vfio-pci"), when every one is
/// bound to a driver that reserves it for virtual machines (vfio-pci, pci-stub).
fn reserved_for_vms(cx: &Ctx) -> Option<String> {
    let pci = cx.pci.as_ref().filter(|p| !p.is_empty())?;
    pci.iter().all(|g| g.driver.as_deref().is_some_and(is_vm_driver)).then(|| {
        pci.iter()
            .map(|g| format!("{}: {}", g.address, g.driver.as_deref().unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// Whether a PCI driver reserves a device for virtual machines.
fn is_vm_driver(d: &str) -> bool {
    matches!(d, "vfio-pci" | "pci-stub")
}

/// The facts each check needs that a source may not have collected at all (see
/// [`super::system::Meta::not_collected`]), with how the report names them.
const NEEDS: &[(&str, &str)] = &[
    ("PERM-01", "device_nodes"),
    ("PERM-02", "device_nodes"),
    ("CUDA-LIB", "libraries"),
    ("WSL-02", "libraries"),
    ("ENV-01", "environment"),
    ("ENV-02", "environment"),
    ("ENV-03", "environment"),
    ("CUDA-04", "python"),
    ("CUDA-07", "python"),
    ("CUDA-08", "python"),
    ("DRV-09", "processes"),
    ("CUDA-INIT", "cuda"),
    ("CONT-01", "container"),
    ("CONT-02", "container"),
];

/// What `id` needs that the view did not collect, in words.
fn not_collected_for(id: &str, v: &dyn SystemView) -> Option<crate::i18n::Message> {
    let missing = &v.meta().not_collected;
    let (_, fact) = NEEDS.iter().find(|(c, f)| *c == id && missing.contains(*f))?;
    Some(match *fact {
        "device_nodes" => crate::msg!("the device files (ls -l /dev/nvidia*)"),
        "libraries" => crate::msg!("which driver libraries the loader finds"),
        "environment" => crate::msg!("the environment variables"),
        "python" => crate::msg!("the Python environments"),
        "processes" => crate::msg!("the running processes"),
        "container" => {
            crate::msg!("whether this runs in a container (/.dockerenv, /run/.containerenv, /proc/1/cgroup)")
        }
        _ => crate::msg!("a cuInit call"),
    })
}

/// The verdict summary of a check whose evidence is missing (English; shown through
/// `crate::i18n::Message::new(MISSING)`).
const MISSING: &str = crate::tr_key!("evidence missing");

/// What the checks read: the view, plus the facts several of them derive from it, computed once
/// per run.
pub struct Ctx<'a> {
    /// This machine or a capture.
    v: &'a dyn SystemView,
    /// NVIDIA GPUs on the PCI bus; `None` when the bus is not readable.
    pci: Option<Vec<PciGpu>>,
    /// Loaded kernel modules; `None` when `/proc/modules` is not readable.
    modules: Option<Vec<String>>,
    /// NVML's answers; `None` when not probed.
    nvml: Option<&'a NvmlView>,
    /// The container kind, when running in one.
    container: Option<String>,
    /// The WSL version, when running in WSL.
    wsl: Option<u8>,
    /// The Linux distribution (from os-release), which decides the package commands of fixes.
    distro: parse::Distro,
    /// The Python environments looked at (computed once; see `cuda::python_prefixes`).
    python: std::sync::OnceLock<Vec<String>>,
}

/// The result of a check that searches the Python environments, under `check --quick`.
fn left_out_by_quick(c: Check) -> Check {
    c.verdict(
        Verdict::Skipped,
        crate::msg!(
            "not run by check --quick (searching the Python environments takes too long); the full check runs it"
        ),
    )
}

impl<'a> Ctx<'a> {
    fn new(v: &'a dyn SystemView) -> Self {
        Ctx {
            v,
            pci: pci_gpus(v),
            modules: v.read("/proc/modules").map(|t| parse::loaded_modules(&t)),
            nvml: v.meta().nvml.as_ref(),
            container: detect_container(v),
            wsl: detect_wsl(v),
            distro: detect_distro(v),
            python: std::sync::OnceLock::new(),
        }
    }
    fn module(&self, m: &str) -> Option<bool> {
        self.modules.as_ref().map(|ms| ms.iter().any(|x| x == m))
    }
    fn nvml_open(&self) -> bool {
        matches!(self.nvml.map(|n| &n.status), Some(SourceStatus::Nvml { .. }))
    }
    fn nvml_gpus(&self) -> Vec<(u32, String)> {
        self.nvml
            .map(|n| n.inventory.gpus.iter().map(|g| (g.index, g.uuid.value().cloned().unwrap_or_default())).collect())
            .unwrap_or_default()
    }
    fn env(&self, k: &str) -> Option<&str> {
        self.v.meta().env.get(k).map(String::as_str)
    }
    /// NVML's configuration and health facts per GPU (empty without NVML).
    fn facts(&self) -> &'a [GpuFacts] {
        self.nvml.map(|n| n.facts.as_slice()).unwrap_or(&[])
    }
    /// NVML's sample per GPU (empty without NVML).
    fn nvml_samples(&self) -> &'a [GpuSample] {
        self.nvml.map(|n| n.samples.as_slice()).unwrap_or(&[])
    }
}

/// An NVIDIA display-class PCI function and the kernel driver bound to it.
struct PciGpu {
    address: String,
    driver: Option<String>,
}

/// At most this many PCI functions are looked at.
const MAX_PCI_FUNCTIONS: usize = 4096;

fn pci_gpus(v: &dyn SystemView) -> Option<Vec<PciGpu>> {
    let base = "/sys/bus/pci/devices";
    let list = v.list(base)?;
    Some(
        // A real machine has at most a few hundred PCI functions; a capture claiming millions is
        // read only up to this bound, so the checks stay linear and quick.
        list.into_iter()
            .take(MAX_PCI_FUNCTIONS)
            .filter_map(|a| {
                let vendor = v.read(&format!("{base}/{a}/vendor"))?;
                let class = v.read(&format!("{base}/{a}/class"))?;
                let hex = |s: &str| u32::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok();
                (hex(&vendor)? == 0x10de && matches!(hex(&class)? >> 8, 0x0300 | 0x0302)).then(|| PciGpu {
                    driver: v
                        .link(&format!("{base}/{a}/driver"))
                        .and_then(|l| l.rsplit('/').next().map(str::to_string)),
                    address: a,
                })
            })
            .collect(),
    )
}

fn detect_container(v: &dyn SystemView) -> Option<String> {
    let env = &v.meta().env;
    if env.contains_key("KUBERNETES_SERVICE_HOST") {
        return Some("Kubernetes".into());
    }
    if v.exists("/run/.containerenv") || env.get("container").is_some_and(|c| c == "podman") {
        return Some("Podman".into());
    }
    if v.exists("/.dockerenv") {
        return Some("Docker".into());
    }
    // Apptainer (Singularity) marks its containers in the environment and keeps its own folder at
    // the root; with --nv it binds the driver's libraries into /.singularity.d/libs.
    if ["APPTAINER_CONTAINER", "SINGULARITY_CONTAINER"].iter().any(|k| env.contains_key(*k))
        || v.exists("/.singularity.d")
        || env.get("LD_LIBRARY_PATH").is_some_and(|p| p.split(':').any(|d| d.starts_with("/.singularity.d/")))
    {
        return Some("Apptainer".into());
    }
    let cg = v.read("/proc/1/cgroup").unwrap_or_default();
    if cg.contains("/docker/") {
        return Some("Docker".into());
    }
    if cg.contains("kubepods") {
        return Some("Kubernetes".into());
    }
    if cg.contains("libpod") {
        return Some("Podman".into());
    }
    if cg.contains("/lxc/") || cg.contains("/lxc.payload") {
        return Some("container (lxc)".into());
    }
    // systemd inside a container writes its kind here (systemd-detect-virt reads it): lxc,
    // systemd-nspawn, docker, podman …, also where the cgroup path says nothing (cgroup v2).
    let kind = v.read("/run/systemd/container").map(|k| k.trim().to_string()).filter(|k| !k.is_empty());
    match kind.as_deref().or(env.get("container").map(String::as_str)) {
        Some("docker") => Some("Docker".into()),
        Some("podman") => Some("Podman".into()),
        Some(k) => Some(format!("container ({k})")),
        None => None,
    }
}

/// The distribution from os-release (`/etc/os-release`, else `/usr/lib/os-release`, as
/// os-release(5) says); `Unknown` on Windows and in captures that lack the file.
fn detect_distro(v: &dyn SystemView) -> parse::Distro {
    if v.meta().platform == Platform::Windows {
        return parse::Distro::Unknown;
    }
    v.read("/etc/os-release")
        .or_else(|| v.read("/usr/lib/os-release"))
        .map_or(parse::Distro::Unknown, |t| parse::distro(&t))
}

fn detect_wsl(v: &dyn SystemView) -> Option<u8> {
    let rel = v.read("/proc/sys/kernel/osrelease")?;
    if rel.contains("microsoft") || rel.contains("WSL2") {
        Some(2)
    } else if rel.contains("Microsoft") {
        Some(1)
    } else {
        None
    }
}

fn is_gpu_node(p: &str) -> bool {
    p.strip_prefix("/dev/nvidia").is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashSet};

    use super::*;
    use crate::diagnose::system::{KernelLog, Meta, Tdr, UserInfo};

    /// Issue 38, item 6: a title names what is checked, never the outcome, so that
    /// "[FAIL] <title>: <summary>" cannot contradict itself ("[FAIL] GPU passed into container:
    /// no GPU passed into this container"); in Chinese a question (是否, 能否) or a noun.
    #[test]
    fn titles_name_what_is_checked_not_the_outcome() {
        const CLAIMS: [&str; 14] = [
            " loaded",
            " loads",
            " present",
            " found",
            " answers",
            " works",
            " can ",
            " sees ",
            " does not ",
            " not holding",
            " have the same",
            " passed into",
            " fits ",
            " at its maximum",
        ];
        for d in CHECKS {
            let t = d.title;
            assert!(!CLAIMS.iter().any(|c| format!("{t} ").contains(c)), "{}: \"{t}\" reads as an outcome", d.id);
            assert!(!t.starts_with("The ") && !t.starts_with("Every "), "{}: \"{t}\"", d.id);
        }
        let cont = CHECKS.iter().find(|d| d.id == "CONT-02").map(|d| d.title).unwrap_or_default();
        assert_eq!(crate::i18n::Message::new(cont).render(crate::i18n::Lang::ZhCn), "容器中是否有 GPU");
    }

    /// A machine where nothing can be read.
    struct Bare(Meta);

    impl SystemView for Bare {
        fn read(&self, _: &str) -> Option<String> {
            None
        }
        fn read_bytes(&self, _: &str) -> Option<Vec<u8>> {
            None
        }
        fn list(&self, _: &str) -> Option<Vec<String>> {
            None
        }
        fn link(&self, _: &str) -> Option<String> {
            None
        }
        fn exists(&self, _: &str) -> bool {
            false
        }
        fn meta(&self) -> &Meta {
            &self.0
        }
    }

    fn bare(platform: Platform) -> Bare {
        Bare(Meta {
            platform,
            env: BTreeMap::new(),
            user: UserInfo::default(),
            device_nodes: Vec::new(),
            links: BTreeMap::new(),
            listings: BTreeMap::new(),
            nvml: None,
            libraries: Vec::new(),
            kernel_log: KernelLog::Lines(Vec::new()),
            kernel_log_source: None,
            renderer: None,
            tdr: Some(Tdr::default()),
            cuda: None,
            quick: false,
            not_collected: Default::default(),
            windows: None,
            holders: None,
        })
    }

    #[test]
    fn no_gpu_says_nothing_about_ecc_or_memory_repair() {
        let got = all(&bare(Platform::Linux));
        for id in ["RT-ECC", "RT-03"] {
            let c = got.iter().find(|c| c.id == id);
            let summary = c.map(|c| c.summary.en()).unwrap_or_default();
            assert_eq!(summary, "no GPU data (NVML not open)", "{id}");
        }
    }

    #[test]
    fn ids_are_unique() {
        let mut seen = HashSet::new();
        for d in CHECKS {
            assert!(seen.insert(d.id), "{} is defined twice", d.id);
        }
    }

    #[test]
    fn every_dependency_is_another_check_of_the_registry() {
        for d in CHECKS {
            for dep in d.depends_on {
                assert!(find(dep).is_some(), "{} depends on {dep}, which is not in the registry", d.id);
                assert_ne!(*dep, d.id, "{} depends on itself", d.id);
            }
        }
    }

    /// Asserts that following `edges` from every check never comes back to where it started.
    fn assert_acyclic(what: &str, edges: fn(&CheckDef) -> &'static [&'static str]) {
        // Depth-first search; `path` holds the ids being visited, `done` those proven acyclic.
        fn visit(
            id: &'static str,
            edges: fn(&CheckDef) -> &'static [&'static str],
            what: &str,
            path: &mut Vec<&'static str>,
            done: &mut HashSet<&'static str>,
        ) {
            if done.contains(id) {
                return;
            }
            assert!(!path.contains(&id), "{what} cycle: {} -> {id}", path.join(" -> "));
            path.push(id);
            for next in find(id).map_or(&[][..], edges) {
                visit(next, edges, what, path, done);
            }
            path.pop();
            done.insert(id);
        }
        let mut done = HashSet::new();
        for d in CHECKS {
            visit(d.id, edges, what, &mut Vec::new(), &mut done);
        }
        assert_eq!(done.len(), CHECKS.len());
    }

    #[test]
    fn the_dependencies_have_no_cycle() {
        assert_acyclic("dependency", |d| d.depends_on);
    }

    #[test]
    fn causes_and_consequences_have_no_cycle_and_name_real_checks() {
        assert_acyclic("explains", |d| d.explains);
        for d in CHECKS {
            for e in d.explains {
                assert!(find(e).is_some() && *e != d.id, "{} explains {e}, which is not another check", d.id);
            }
        }
    }

    #[test]
    fn every_result_carries_its_definitions_id_layer_and_title() {
        for platform in [Platform::Linux, Platform::Windows] {
            let got = all(&bare(platform));
            let defs: Vec<&CheckDef> = CHECKS.iter().filter(|d| d.platforms.includes(platform)).collect();
            assert_eq!(got.len(), defs.len());
            // A Windows checklist has no Linux-only check and the other way round.
            assert!(got.iter().all(|c| !c.id.starts_with(if platform == Platform::Windows {
                "CONT-"
            } else {
                "WIN-"
            })));
            for (c, d) in got.iter().zip(defs) {
                assert_eq!((c.id.as_str(), c.layer, c.title.as_str()), (d.id, d.layer, d.title), "{platform:?}");
            }
        }
        let tdr = tdr_check(&Tdr::default());
        assert_eq!((tdr.id.as_str(), tdr.layer, tdr.title.as_str()), (WIN_01.id, WIN_01.layer, WIN_01.title));
        assert!(CHECKS.iter().any(|d| d.id == WIN_01.id && d.title == WIN_01.title));
    }
}
