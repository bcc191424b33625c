//! What the Windows checks read, in the capture's `meta.windows` (format: docs/capture-format.md):
//! the display adapters with their driver and Device Manager problem code, where `nvml.dll` and
//! `nvidia-smi.exe` are, the per-app graphics preferences of hybrid laptops, the Python
//! environments and their PyTorch builds, the driver resets (TDR) of the last days, the Windows
//! version and the WSL side. Read live on Windows (`collect::windows_facts`, registry and
//! Configuration Manager, no subprocess) and judged anywhere, so `check --from` on Linux judges a
//! Windows capture the same way.
//!
//! Sources for the rules the checks apply to these facts:
//! - Device Manager problem codes: Microsoft Learn, "Device Manager error codes" and the
//!   CM_PROB_* list (10 cannot start, 22 disabled, 28 no driver, 31 driver failed to load,
//!   43 stopped after reporting problems).
//! - Driver version numbering: NVIDIA's Windows file version 31.0.15.5222 is driver 552.22 (the
//!   last five digits of the last two fields), see `crate::knowledge::windows::windows_driver_version`.
//! - Graphics preference: Microsoft's "UserGpuPreferences" registry values
//!   (`GpuPreference=0;` let Windows decide, `1` power saving, `2` high performance).
//! - TDR events: the "Display" source's event 4101 ("Display driver nvlddmkm stopped responding
//!   and has successfully recovered") and `C:\Windows\LiveKernelReports\WATCHDOG` dumps.
//! - WSL GPU support: Microsoft's "GPU accelerated ML training in WSL" (Windows 11, or Windows 10
//!   21H2, build 19044, and later).
//! - DCH and Standard driver packages: NVIDIA's "DCH/Standard drivers" FAQ (the Standard installer
//!   refuses a DCH system with "This NVIDIA graphics driver is not compatible with this version of
//!   Windows"); DCH packages mark the `nvlddmkm` service with a `DCHUVen` value.
//! - Power plans: the GUIDs of `powercfg /list` and of Windows 11's power modes.
//! - Device power states: `DEVPKEY_Device_PowerData` (`CM_POWER_DATA.PD_MostRecentPowerState`).
//! - CUDA toolkit and driver: NVIDIA's "CUDA Compatibility" guide (a toolkit newer than the
//!   driver's CUDA version runs only within the same major version, without PTX JIT).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::telemetry::pci::NVIDIA_VEN;

/// The Windows build from which WSL 2 runs CUDA (Windows 10 21H2).
pub const WSL_GPU_MIN_BUILD: u32 = 19044;

/// Everything the Windows checks read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowsFacts {
    /// The edition, e.g. "Windows 11 Pro" (the registry's ProductName; Windows 11 still says
    /// "Windows 10" there, so [`WindowsFacts::edition`] corrects it by the build).
    #[serde(default)]
    pub product: Option<String>,
    /// The release, e.g. "23H2" (DisplayVersion).
    #[serde(default)]
    pub display_version: Option<String>,
    /// The build number, e.g. 22631.
    #[serde(default)]
    pub build: Option<u32>,
    /// The display adapters Windows knows (the Display device class), NVIDIA and others.
    #[serde(default)]
    pub adapters: Vec<DisplayAdapter>,
    /// `nvml.dll` and `nvidia-smi.exe` files found where drivers put them.
    #[serde(default)]
    pub nvidia_files: Vec<FoundFile>,
    /// Per-app graphics preferences (`HKCU\Software\Microsoft\DirectX\UserGpuPreferences`):
    /// program path → value, e.g. `GpuPreference=2;`.
    #[serde(default)]
    pub gpu_preferences: BTreeMap<String, String>,
    /// Python environments found and the PyTorch each holds.
    #[serde(default)]
    pub pythons: Vec<PythonEnv>,
    /// Driver resets in the last 7 days: the "Display" source's event 4101, oldest first
    /// ("2026-11-29 21:14:03 Display driver nvlddmkm stopped responding and has successfully
    /// recovered."). `None` when the event log could not be read.
    #[serde(default)]
    pub tdr_events: Option<Vec<String>>,
    /// `C:\Windows\LiveKernelReports\WATCHDOG` dumps of the last 7 days (file names).
    #[serde(default)]
    pub watchdog_dumps: Vec<String>,
    /// Hardware-accelerated GPU scheduling (`HwSchMode`: 2 on, 1 off; `None` not set).
    #[serde(default)]
    pub hags: Option<u32>,
    /// WSL distributions registered for this user; `None` when WSL is not installed.
    #[serde(default)]
    pub wsl_distros: Option<Vec<String>>,
    /// The NVIDIA driver package is a DCH one: the `nvlddmkm` service has the `DCHUVen` value
    /// that DCH packages set (`Some(false)`: the service is there without it, a Standard package;
    /// `None`: no NVIDIA service, or not read).
    #[serde(default)]
    pub dch: Option<bool>,
    /// The active power plan's GUID (`powercfg /getactivescheme`), lowercase.
    #[serde(default)]
    pub power_scheme: Option<String>,
    /// Windows 11's power mode on mains power (an overlay on the plan's settings), GUID lowercase.
    #[serde(default)]
    pub power_mode_ac: Option<String>,
    /// The machine's maker and model as its firmware (SMBIOS) names them, e.g. "LENOVO 21D6" or
    /// "QEMU Standard PC (Q35 + ICH9, 2009)" (v3; `None` when not read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
}

/// What hypervisors write into the SMBIOS maker and model of their guests (the DMI table of
/// systemd's `detect-virt`, src/basic/virt.c, and Hyper-V's "Microsoft Corporation Virtual
/// Machine").
pub const HYPERVISOR_NAMES: &[&str] = &[
    "QEMU",
    "KVM",
    "VMware",
    "VirtualBox",
    "innotek",
    "Xen",
    "Bochs",
    "Parallels",
    "BHYVE",
    "Virtual Machine",
    "OpenStack",
    "KubeVirt",
    "Standard PC (",
];

/// Whether a firmware maker or model string (SMBIOS) is a hypervisor's.
pub fn names_a_hypervisor(s: &str) -> bool {
    HYPERVISOR_NAMES.iter().any(|h| s.contains(h))
}

/// The power plans and power modes Windows ships, by GUID: (name, whether it holds the processor
/// and PCIe link low to save energy). Microsoft Learn, "Power policy settings" / "Customize the
/// Windows performance power slider". The names are English; shown through `crate::i18n::tr`.
pub const POWER_PLANS: &[(&str, &str, bool)] = &[
    ("a1841308-3541-4fab-bc81-f71556f20b4a", crate::tr_key!("Power saver"), true),
    ("381b4222-f694-41f0-9685-ff5bb260df2e", crate::tr_key!("Balanced"), false),
    ("8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c", crate::tr_key!("High performance"), false),
    ("e9a42b02-d5df-448d-aa00-03f14749eb61", crate::tr_key!("Ultimate Performance"), false),
    ("961cc777-2547-4f9d-8174-7d86181b8a7a", crate::tr_key!("Best power efficiency (power mode)"), true),
    ("00000000-0000-0000-0000-000000000000", crate::tr_key!("Balanced (power mode)"), false),
    ("ded574b5-45a0-4f42-8737-46345c09c238", crate::tr_key!("Best performance (power mode)"), false),
];

/// The (English) name of a power plan or mode and whether it saves energy at the cost of speed.
pub fn power_plan(guid: &str) -> Option<(&'static str, bool)> {
    let g = guid.trim().trim_matches(|c| c == '{' || c == '}').to_ascii_lowercase();
    POWER_PLANS.iter().find(|(id, _, _)| *id == g).map(|(_, name, saver)| (*name, *saver))
}

pub use crate::telemetry::pci::DisplayAdapter;

/// A file found, with its version resource when it has one.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoundFile {
    /// The full path.
    pub path: String,
    /// The file version, e.g. "31.0.15.5222" (NVIDIA's numbering) or "8.17.15.5222".
    #[serde(default)]
    pub version: Option<String>,
}

/// A Python environment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PythonEnv {
    /// Its folder (the one holding python.exe).
    pub prefix: String,
    /// The PyTorch version installed there (torch/version.py's `__version__`, e.g. "2.3.1+cpu").
    #[serde(default)]
    pub torch: Option<String>,
    /// The CUDA version that PyTorch was built for (`cuda = '12.1'`; `None` for a CPU build).
    #[serde(default)]
    pub torch_cuda: Option<String>,
}

impl WindowsFacts {
    /// "Windows 11 Pro 23H2 (build 22631)": the edition corrected for Windows 11 (builds from
    /// 22000 on, whose registry still says "Windows 10").
    pub fn edition(&self) -> crate::i18n::Message {
        let mut name = self.product.clone().unwrap_or_else(|| "Windows".to_string());
        if self.build.is_some_and(|b| b >= 22000) && name.contains("Windows 10") {
            name = name.replacen("Windows 10", "Windows 11", 1);
        }
        let mut s = name;
        if let Some(v) = &self.display_version {
            s.push(' ');
            s.push_str(v);
        }
        match self.build {
            Some(b) => crate::i18n::Message::join(
                [crate::i18n::Message::data(s), crate::msg!(" (build {b})", b = b)],
                &crate::i18n::Message::default(),
            ),
            None => crate::i18n::Message::data(s),
        }
    }

    /// This Windows runs in a virtual machine (by its firmware's maker and model).
    pub fn virtual_machine(&self) -> bool {
        self.system.as_deref().is_some_and(names_a_hypervisor)
    }

    /// A laptop with an integrated GPU beside a mobile NVIDIA GPU (NVIDIA names those "… Laptop
    /// GPU", "… with Max-Q", or MX): the kind whose maker's tool can switch the NVIDIA GPU off.
    pub fn hybrid_laptop(&self) -> bool {
        self.hybrid()
            && self
                .nvidia()
                .any(|a| a.name.contains("Laptop GPU") || a.name.contains("Max-Q") || a.name.contains("GeForce MX"))
    }

    /// The NVIDIA adapters.
    pub fn nvidia(&self) -> impl Iterator<Item = &DisplayAdapter> {
        self.adapters.iter().filter(|a| a.is_nvidia())
    }

    /// Another GPU beside the NVIDIA one (an Intel or AMD integrated GPU: a hybrid laptop).
    pub fn hybrid(&self) -> bool {
        self.nvidia().next().is_some() && self.adapters.iter().any(|a| !a.is_nvidia() && !a.basic_display())
    }
}

/// The meaning of a Device Manager problem code, as Device Manager words it, and what usually
/// causes it on an NVIDIA GPU, as messages.
pub fn problem_text(code: u32) -> (crate::i18n::Message, crate::i18n::Message) {
    use crate::msg;
    match code {
        10 => (msg!("This device cannot start (Code 10)"), msg!("the driver failed to start the GPU")),
        22 => (msg!("This device is disabled (Code 22)"), msg!("the GPU was disabled in Device Manager")),
        28 => (
            msg!("The drivers for this device are not installed (Code 28)"),
            msg!("no NVIDIA driver is installed for it"),
        ),
        31 => (
            msg!("This device is not working properly because Windows cannot load the drivers required (Code 31)"),
            msg!("the installed driver does not load (a damaged or mismatched install)"),
        ),
        43 => (
            msg!("Windows has stopped this device because it has reported problems (Code 43)"),
            msg!(
                "the driver found the GPU not responding as it should: a failed driver install, power or seating, or failing hardware"
            ),
        ),
        12 => (
            msg!("This device cannot find enough free resources (Code 12)"),
            msg!("the PCI resources (BAR space) do not fit"),
        ),
        45 => (
            msg!("Currently, this hardware device is not connected to the computer (Code 45)"),
            msg!("the GPU is not connected now (an external GPU unplugged, or switched off)"),
        ),
        52 => (
            msg!("Windows cannot verify the digital signature for the drivers required for this device (Code 52)"),
            msg!("the driver's signature was refused"),
        ),
        _ => (msg!("The device has a problem"), msg!("Device Manager reports a problem code")),
    }
}

pub use crate::telemetry::pci::sleeping_nvidia;

/// "GpuPreference=2;" → 2.
pub fn gpu_preference(value: &str) -> Option<u32> {
    value.split(';').find_map(|kv| kv.trim().strip_prefix("GpuPreference=")).and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_11_is_named_by_its_build_and_hybrids_need_another_real_gpu() {
        let f = WindowsFacts {
            product: Some("Windows 10 Pro".into()),
            display_version: Some("23H2".into()),
            build: Some(22631),
            ..WindowsFacts::default()
        };
        assert_eq!(f.edition().en(), "Windows 11 Pro 23H2 (build 22631)");
        let nv = DisplayAdapter {
            name: "NVIDIA GeForce RTX 4060 Laptop GPU".into(),
            instance_id: "PCI\\VEN_10DE&DEV_28A0\\4&1".into(),
            ..DisplayAdapter::default()
        };
        let intel = DisplayAdapter {
            name: "Intel(R) UHD Graphics".into(),
            instance_id: "PCI\\VEN_8086&DEV_A788\\3&1".into(),
            ..DisplayAdapter::default()
        };
        let basic = DisplayAdapter {
            name: "Microsoft Basic Display Adapter".into(),
            instance_id: "PCI\\VEN_1234&DEV_1111\\3&1".into(),
            ..DisplayAdapter::default()
        };
        assert!(!WindowsFacts { adapters: vec![nv.clone(), basic], ..WindowsFacts::default() }.hybrid());
        assert!(WindowsFacts { adapters: vec![intel.clone(), nv.clone()], ..WindowsFacts::default() }.hybrid());
        assert!(WindowsFacts { adapters: vec![intel, nv], ..WindowsFacts::default() }.hybrid_laptop());
        for (system, vm) in [
            (Some("QEMU Standard PC (Q35 + ICH9, 2009)"), true),
            (Some("Microsoft Corporation Virtual Machine"), true),
            (Some("VMware, Inc. VMware7,1"), true),
            (Some("LENOVO 21D6"), false),
            (Some("ASUSTeK COMPUTER INC. ROG Zephyrus G16 GU605CP"), false),
            (None, false),
        ] {
            let f = WindowsFacts { system: system.map(str::to_string), ..WindowsFacts::default() };
            assert_eq!(f.virtual_machine(), vm, "{system:?}");
        }
        assert_eq!(gpu_preference("SwapEffectUpgradeEnable=1;GpuPreference=2;"), Some(2));
        assert_eq!(gpu_preference("GpuPreference=1;"), Some(1));
        assert_eq!(gpu_preference("AutoHDREnable=1;"), None);
    }

    #[test]
    fn nvml_is_left_closed_only_while_every_working_nvidia_gpu_sleeps() {
        let gpu = |state: Option<&str>, problem| DisplayAdapter {
            name: "NVIDIA GeForce RTX 4060 Laptop GPU".into(),
            instance_id: "PCI\\VEN_10DE&DEV_28A0\\4&1".into(),
            problem: Some(problem),
            power_state: state.map(str::to_string),
            ..DisplayAdapter::default()
        };
        let intel = DisplayAdapter {
            name: "Intel(R) UHD Graphics".into(),
            instance_id: "PCI\\VEN_8086&DEV_A788\\3&1".into(),
            problem: Some(0),
            power_state: Some("D0".into()),
            ..DisplayAdapter::default()
        };
        assert_eq!(
            sleeping_nvidia(&[intel.clone(), gpu(Some("D3"), 0)]),
            Some(vec!["PCI\\VEN_10DE&DEV_28A0\\4&1".to_string()])
        );
        assert_eq!(sleeping_nvidia(&[intel.clone(), gpu(Some("D0"), 0)]), None);
        // Unknown state, a GPU with a problem code, or no NVIDIA GPU: NVML is tried (and says why).
        assert_eq!(sleeping_nvidia(&[intel.clone(), gpu(None, 0)]), None);
        assert_eq!(sleeping_nvidia(&[gpu(Some("D3"), 43)]), None);
        assert_eq!(sleeping_nvidia(&[intel]), None);
    }
}
