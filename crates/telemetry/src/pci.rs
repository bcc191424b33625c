//! NVIDIA PCI display functions as the kernel lists them in sysfs, with their runtime power state:
//! read without touching the GPU, so a runtime-suspended (sleeping) laptop GPU stays asleep.
//!
//! Reads `sys/bus/pci/devices/*/{vendor,class,power/runtime_status}` and the `driver` link under a
//! system root (normally `/`; tests point it at a fixture tree). On Windows the same question is
//! answered from the display adapters Windows lists ([`DisplayAdapter`], read by
//! `telemetry::winpci`).

use std::path::Path;

use serde::{Deserialize, Serialize};

/// PCI vendor id of NVIDIA.
pub const NVIDIA_VENDOR: u32 = 0x10de;

/// One NVIDIA display-class PCI function (VGA or 3D controller).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PciFunction {
    /// Bus address, e.g. `0000:01:00.0`.
    pub address: String,
    /// PCI class code (`0x030000` VGA, `0x030200` 3D controller).
    pub class: u32,
    /// The kernel driver bound to it (`nvidia`, `nouveau`, `vfio-pci`...), if any.
    pub driver: Option<String>,
    /// `power/runtime_status`: `active`, `suspended`, `suspending`, `resuming`, `error` or
    /// `unsupported`; `None` when the file is missing.
    pub runtime_status: Option<String>,
}

impl PciFunction {
    /// True when the kernel has put the function into runtime suspend (D3): reading it through
    /// NVML would wake it.
    pub fn is_suspended(&self) -> bool {
        self.runtime_status.as_deref() == Some("suspended")
    }
}

fn read_trimmed(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

fn parse_hex(s: &str) -> Option<u32> {
    u32::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok()
}

/// The NVIDIA display functions under `root`, sorted by address. Empty when sysfs is missing or
/// unreadable (not Linux, a restricted container): callers then simply open NVML.
pub fn nvidia_display_functions(root: &Path) -> Vec<PciFunction> {
    let dir = root.join("sys/bus/pci/devices");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<PciFunction> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let p = e.path();
            let vendor = read_trimmed(&p.join("vendor")).and_then(|v| parse_hex(&v))?;
            let class = read_trimmed(&p.join("class")).and_then(|c| parse_hex(&c))?;
            if vendor != NVIDIA_VENDOR || class >> 16 != 0x03 {
                return None;
            }
            let driver = std::fs::read_link(p.join("driver"))
                .ok()
                .and_then(|l| l.file_name().map(|n| n.to_string_lossy().into_owned()));
            Some(PciFunction {
                address: e.file_name().to_string_lossy().into_owned(),
                class,
                driver,
                runtime_status: read_trimmed(&p.join("power/runtime_status")),
            })
        })
        .collect();
    out.sort_by(|a, b| a.address.cmp(&b.address));
    out
}

/// When every NVIDIA display function is runtime-suspended, those functions; otherwise (none
/// present, or any awake) `None`.
pub fn all_asleep(functions: &[PciFunction]) -> Option<Vec<String>> {
    (!functions.is_empty() && functions.iter().all(PciFunction::is_suspended))
        .then(|| functions.iter().map(|f| f.address.clone()).collect())
}

/// Writes a fixture PCI function under `root` (tests and benchmarks).
#[doc(hidden)]
pub fn write_fixture(
    root: &Path,
    address: &str,
    vendor: u32,
    class: u32,
    runtime_status: Option<&str>,
) -> std::io::Result<()> {
    let dir = root.join("sys/bus/pci/devices").join(address);
    std::fs::create_dir_all(dir.join("power"))?;
    std::fs::write(dir.join("vendor"), format!("0x{vendor:04x}\n"))?;
    std::fs::write(dir.join("class"), format!("0x{class:06x}\n"))?;
    match runtime_status {
        Some(s) => std::fs::write(dir.join("power/runtime_status"), format!("{s}\n")),
        None => Ok(()),
    }
}

/// PCI vendor id of NVIDIA, as Windows writes it in device instance ids (`PCI\VEN_10DE&...`).
pub const NVIDIA_VEN: &str = "VEN_10DE";

/// One display adapter.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisplayAdapter {
    /// The name Device Manager shows ("NVIDIA GeForce RTX 4070 Laptop GPU", "Microsoft Basic
    /// Display Adapter" when no vendor driver is installed).
    pub name: String,
    /// The device instance id, e.g. `PCI\VEN_10DE&DEV_2786&SUBSYS_...\4&1E1A8B1&0&0008`.
    pub instance_id: String,
    /// The driver's provider ("NVIDIA", "Microsoft", "Intel Corporation").
    #[serde(default)]
    pub provider: Option<String>,
    /// The driver's file version, e.g. "31.0.15.5222".
    #[serde(default)]
    pub driver_version: Option<String>,
    /// The driver's date, e.g. "2024-04-11".
    #[serde(default)]
    pub driver_date: Option<String>,
    /// The Configuration Manager problem code: 0 when the device works; `None` when unknown.
    #[serde(default)]
    pub problem: Option<u32>,
    /// The device's most recent power state, "D0" (on) to "D3" (off: a hybrid laptop's NVIDIA GPU
    /// sleeps there while nothing uses it); `None` when unknown.
    #[serde(default)]
    pub power_state: Option<String>,
}

impl DisplayAdapter {
    /// An NVIDIA device (by its PCI vendor id, whatever driver it has).
    pub fn is_nvidia(&self) -> bool {
        self.instance_id.to_ascii_uppercase().contains(NVIDIA_VEN)
    }

    /// In a low-power state (D1-D3): asleep until a program uses it.
    pub fn asleep(&self) -> bool {
        self.power_state.as_deref().is_some_and(|s| matches!(s, "D1" | "D2" | "D3"))
    }

    /// Driven by Windows' fallback driver instead of a vendor driver.
    pub fn basic_display(&self) -> bool {
        self.name.contains("Basic Display") || self.name.contains("Basic Render")
    }
}

/// The instance ids of the NVIDIA adapters when every working one is asleep (a hybrid laptop's
/// dGPU while nothing uses it): then NVML is left closed, since asking it wakes the GPU and
/// polling it keeps it awake. `None` when any NVIDIA GPU is awake, has a problem or its state is
/// unknown, or there is none.
pub fn sleeping_nvidia(adapters: &[DisplayAdapter]) -> Option<Vec<String>> {
    let working: Vec<&DisplayAdapter> =
        adapters.iter().filter(|a| a.is_nvidia() && !a.basic_display() && a.problem == Some(0)).collect();
    (!working.is_empty() && working.iter().all(|a| a.asleep()))
        .then(|| working.iter().map(|a| a.instance_id.clone()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nvidia_display_functions_and_their_power_state() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write_fixture(root, "0000:01:00.0", 0x10de, 0x030000, Some("suspended")).unwrap();
        write_fixture(root, "0000:01:00.1", 0x10de, 0x040300, Some("suspended")).unwrap(); // audio
        write_fixture(root, "0000:00:02.0", 0x8086, 0x030000, Some("active")).unwrap(); // iGPU
        let f = nvidia_display_functions(root);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].address, "0000:01:00.0");
        assert!(f[0].is_suspended());
        assert_eq!(all_asleep(&f), Some(vec!["0000:01:00.0".to_string()]));

        write_fixture(root, "0000:02:00.0", 0x10de, 0x030200, Some("active")).unwrap();
        assert_eq!(nvidia_display_functions(root).len(), 2);
        assert_eq!(all_asleep(&nvidia_display_functions(root)), None, "one awake: open NVML");
    }

    #[test]
    fn missing_or_garbage_sysfs_is_no_functions() {
        let dir = tempfile::tempdir().unwrap();
        assert!(nvidia_display_functions(dir.path()).is_empty());
        assert_eq!(all_asleep(&[]), None);
        let bad = dir.path().join("sys/bus/pci/devices/0000:03:00.0");
        std::fs::create_dir_all(&bad).unwrap();
        std::fs::write(bad.join("vendor"), "garbage").unwrap();
        assert!(nvidia_display_functions(dir.path()).is_empty());
        // No runtime_status file (runtime PM not compiled in): not asleep.
        write_fixture(dir.path(), "0000:04:00.0", 0x10de, 0x030000, None).unwrap();
        assert_eq!(all_asleep(&nvidia_display_functions(dir.path())), None);
    }
}
