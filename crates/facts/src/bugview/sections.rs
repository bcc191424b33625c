//! The sections of an nvidia-bug-report log read into the capture model's terms: `lspci`
//! listings, `dmesg`, `ls -l /dev/nvidia*` and `nvidia-smi -q` (or the failure it printed).

use super::super::system::{DeviceNode, NvmlView};
use crate::msg;
use crate::telemetry::reading::Reading;
use crate::telemetry::sample::{GpuHealth, GpuInfo, GpuSample, Inventory};
use crate::telemetry::source::{NoGpu, SourceStatus};

/// One PCI function from lspci.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct PciFunction {
    pub(super) address: String,
    pub(super) vendor: u32,
    pub(super) class: u32,
    pub(super) name: String,
    pub(super) driver: Option<String>,
}

/// The functions of an `lspci` listing: the address and name from the first line of each block,
/// vendor and class from the config-space dump (`00: de 10 …`), else from `[10de:2204]` and
/// `[0300]`, else from the class name; the driver from "Kernel driver in use".
pub(super) fn parse_lspci(text: &str) -> (Vec<PciFunction>, usize) {
    let mut out: Vec<PciFunction> = Vec::new();
    let mut dropped = 0usize;
    for line in text.lines() {
        let l = line.trim_end();
        if !l.starts_with([' ', '\t']) && !l.is_empty() {
            let Some((addr, rest)) = l.split_once(' ') else { continue };
            let a: Vec<&str> = addr.split([':', '.']).collect();
            if !(3..=4).contains(&a.len()) || !a.iter().all(|p| p.chars().all(|c| c.is_ascii_hexdigit())) {
                continue;
            }
            if out.len() >= super::MAX_PCI_FUNCTIONS {
                // Counted, not read: the lines below it then belong to the last one read and
                // are ignored by the check below.
                dropped += 1;
                continue;
            }
            let address = if a.len() == 3 { format!("0000:{addr}") } else { addr.to_string() };
            let (class_name, name) = rest.split_once(": ").unwrap_or((rest, ""));
            let bracket = |s: &str| -> Vec<String> {
                s.split('[').skip(1).filter_map(|t| t.split_once(']').map(|x| x.0.to_string())).collect()
            };
            let class = bracket(class_name)
                .last()
                .and_then(|c| u32::from_str_radix(c, 16).ok())
                .map(|c| c << 8)
                .or_else(|| {
                    let n = class_name.to_ascii_lowercase();
                    if n.starts_with("vga compatible") {
                        Some(0x030000)
                    } else if n.starts_with("3d controller") {
                        Some(0x030200)
                    } else if n.starts_with("audio") {
                        Some(0x040300)
                    } else {
                        None
                    }
                })
                .unwrap_or(0);
            let vendor = bracket(name)
                .iter()
                .rev()
                .find_map(|t| t.split_once(':').and_then(|(v, _)| u32::from_str_radix(v, 16).ok()))
                .unwrap_or_else(|| if name.starts_with("NVIDIA") || name.starts_with("nVidia") { 0x10de } else { 0 });
            out.push(PciFunction { address, vendor, class, name: device_name(name), driver: None });
            continue;
        }
        let Some(f) = out.last_mut().filter(|_| dropped == 0) else { continue };
        let t = l.trim();
        if let Some(d) = t.strip_prefix("Kernel driver in use:") {
            f.driver = Some(d.trim().to_string());
        } else if let Some(hex) = t.strip_prefix("00: ") {
            let b: Vec<u32> = hex.split_whitespace().filter_map(|x| u32::from_str_radix(x, 16).ok()).collect();
            if b.len() >= 12 {
                f.vendor = b[0] | (b[1] << 8);
                f.class = (b[11] << 16) | (b[10] << 8) | b[9];
            }
        }
    }
    (out, dropped)
}

/// lspci's device name without its ids and revision: `NVIDIA Corporation GA102GL [RTX A5000]`.
fn device_name(name: &str) -> String {
    let mut n = name.trim();
    for cut in [" (prog-if", " (rev"] {
        if let Some(i) = n.find(cut) {
            n = &n[..i];
        }
    }
    let n = n.trim_end();
    match n.rfind(" [") {
        Some(i)
            if n[i + 2..].trim_end_matches(']').split_once(':').is_some_and(|(a, b)| {
                a.len() == 4 && b.len() == 4 && a.chars().chain(b.chars()).all(|c| c.is_ascii_hexdigit())
            }) =>
        {
            n[..i].to_string()
        }
        _ => n.to_string(),
    }
}

/// `dmesg` lines: the `[  12.345]` stamp taken off, NVIDIA-related lines of the last boot kept.
pub(super) fn dmesg_lines(text: &str) -> Vec<String> {
    // The newest 500, kept as they come: memory stays bounded on any section.
    let mut lines: std::collections::VecDeque<String> = std::collections::VecDeque::new();
    for line in text.lines() {
        let msg = match line.trim_start().strip_prefix('[') {
            Some(rest) => rest.split_once(']').map_or(line, |(_, m)| m).trim_start(),
            None => line.trim_start(),
        };
        if msg.starts_with("Linux version ") {
            lines.clear();
        } else if crate::diagnose::collect::is_gpu_line(msg) {
            if lines.len() == 500 {
                lines.pop_front();
            }
            lines.push_back(msg.to_string());
        }
    }
    lines.into()
}

/// `crw-rw-rw- 1 root root 195,   0 Mar  1 10:00 /dev/nvidia0` lines.
pub(super) fn device_nodes(text: &str) -> Vec<DeviceNode> {
    let mut out = Vec::new();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.len() < 9 || !w[0].starts_with(['c', 'd']) || !w.last().is_some_and(|p| p.starts_with("/dev/")) {
            continue;
        }
        let mode = w[0].chars().skip(1).take(9).fold(0u32, |m, c| (m << 1) | u32::from(c != '-'));
        let major = w[4].trim_end_matches(',').parse().unwrap_or(0);
        let minor = w[5].parse().unwrap_or(0);
        let id = |n: &str| if n == "root" { 0 } else { n.parse().unwrap_or(u32::MAX) };
        out.push(DeviceNode {
            path: (*w.last().unwrap_or(&"")).to_string(),
            char_device: w[0].starts_with('c'),
            mode,
            uid: id(w[2]),
            gid: id(w[3]),
            group: Some(w[3].to_string()),
            major,
            minor,
            open: None,
        });
    }
    out
}

/// NVML's view from `nvidia-smi -q` output, or from the failure it printed. `None` when the text
/// is neither. At most [`super::MAX_GPUS`] GPUs are read (see [`parse_smi_counted`]).
pub fn parse_smi(text: &str) -> Option<NvmlView> {
    parse_smi_counted(text).map(|(v, _)| v)
}

/// [`parse_smi`], with how many GPU entries (blocks and lost GPUs) were past the cap and not read.
/// Linear in the text: every GPU's block is cut out once, lost GPUs are told apart by a set.
pub(super) fn parse_smi_counted(text: &str) -> Option<(NvmlView, usize)> {
    let failed = |kind: crate::telemetry::source::NvmlFailure, said: &str| {
        // A bug report is always from Linux, whatever machine reads it.
        let (summary, next_step) = kind.explain_message(false);
        let failure = Some(kind);
        NvmlView {
            status: SourceStatus::Unavailable(NoGpu {
                summary,
                next_step,
                attempts: vec![crate::telemetry::source::LoadAttempt {
                    path: "nvidia-smi".into(),
                    error: said.trim().to_string(),
                }],
                failure,
            }),
            inventory: Inventory::default(),
            samples: Vec::new(),
            facts: Vec::new(),
            did_not_return: None,
            hung_call: None,
        }
    };
    use crate::telemetry::source::NvmlFailure;
    let first = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    if text.contains("couldn't communicate with the NVIDIA driver")
        || text.contains("couldn't communicate with NVIDIA driver")
    {
        return Some((failed(NvmlFailure::DriverNotLoaded, first), 0));
    }
    if text.contains("Driver/library version mismatch") {
        return Some((failed(NvmlFailure::VersionMismatch, first), 0));
    }
    if text.contains("Insufficient Permissions") && !text.contains("NVSMI LOG") {
        return Some((failed(NvmlFailure::NoPermission, first), 0));
    }
    // nvidia-smi's own words when the loader finds no NVML ("NVIDIA-SMI couldn't find
    // libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display Driver is
    // properly installed and present in your system.").
    if text.contains("couldn't find libnvidia-ml.so") {
        return Some((failed(NvmlFailure::NotFound, first), 0));
    }
    let mut dropped = 0usize;
    let mut lost: Vec<(String, String)> = Vec::new();
    let mut lost_seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for l in text.lines() {
        let Some(rest) = l.trim().strip_prefix("Unable to determine the device handle for GPU") else { continue };
        let Some((addr, why)) = rest.split_once(": ") else { continue };
        if lost_seen.insert(addr.trim()) {
            if lost.len() < super::MAX_GPUS {
                lost.push((addr.trim().to_string(), why.trim().to_string()));
            } else {
                dropped += 1;
            }
        }
    }
    let nvsmi = text.contains("NVSMI LOG");
    if !nvsmi && lost.is_empty() && !text.contains("No devices were found") {
        return None;
    }
    let kv = |block: &str, key: &str| -> Option<String> {
        block.lines().find_map(|l| {
            let (k, v) = l.split_once(" : ").or_else(|| l.split_once(':'))?;
            (k.trim() == key).then(|| v.trim().to_string())
        })
    };
    let mut inventory = Inventory {
        driver_version: kv(text, "Driver Version").map(Reading::Value),
        cuda_driver_version: kv(text, "CUDA Version").map(Reading::Value),
        nvml_version: None,
        gpus: Vec::new(),
    };
    let mut samples = Vec::new();
    // The GPU blocks start at "GPU 00000000:01:00.0" at the left margin.
    let mut blocks: Vec<(String, String)> = Vec::new();
    let mut reading = false;
    for line in text.lines() {
        if let Some(addr) = line.strip_prefix("GPU ").filter(|a| a.contains(':') && !a.contains(' ')) {
            reading = blocks.len() < super::MAX_GPUS;
            if reading {
                blocks.push((addr.trim().to_string(), String::new()));
            } else {
                dropped += 1;
            }
        } else if let Some(b) = blocks.last_mut().filter(|_| reading) {
            b.1.push_str(line);
            b.1.push('\n');
        }
    }
    let na = msg!("not in this report");
    let mib = |v: Option<String>| {
        v.and_then(|s| s.trim_end_matches("MiB").trim().parse::<u64>().ok()).map(|m| m * 1024 * 1024)
    };
    let section = |block: &str, title: &str| -> String {
        let mut out = String::new();
        let mut inside: Option<usize> = None;
        for l in block.lines() {
            let indent = l.len() - l.trim_start().len();
            match inside {
                None if l.trim() == title => inside = Some(indent),
                Some(i) if indent > i => {
                    out.push_str(l);
                    out.push('\n');
                }
                Some(_) => break,
                None => {}
            }
        }
        out
    };
    for (i, (addr, block)) in blocks.iter().enumerate() {
        let index = u32::try_from(i).unwrap_or(u32::MAX);
        let mut info = GpuInfo::unavailable(index, na.clone());
        info.name = kv(block, "Product Name").unwrap_or_else(|| format!("GPU {index}"));
        info.uuid = kv(block, "GPU UUID").map_or_else(|| Reading::na(na.clone()), Reading::Value);
        info.pci_bus_id = Reading::Value(addr.clone());
        let fb = section(block, "FB Memory Usage");
        if let Some(total) = mib(kv(&fb, "Total")) {
            info.vram_total_bytes = Reading::Value(total);
        }
        let link = section(block, "GPU Link Info");
        let generation = section(&link, "PCIe Generation");
        let width = section(&link, "Link Width");
        let num = |v: Option<String>| v.and_then(|s| s.trim_end_matches('x').trim().parse::<u32>().ok());
        if let Some(g) = num(kv(&generation, "Max")) {
            info.max_pcie_gen = Reading::Value(g);
        }
        if let Some(w) = num(kv(&width, "Max")) {
            info.max_pcie_width = Reading::Value(w);
        }
        let mut s = GpuSample::unavailable(index, GpuHealth::Ok, na.clone());
        if let Some(used) = mib(kv(&fb, "Used")) {
            s.vram_used_bytes = Reading::Value(used);
        }
        if let Some(total) = mib(kv(&fb, "Total")) {
            s.vram_total_bytes = Reading::Value(total);
        }
        if let Some(g) = num(kv(&generation, "Current")) {
            s.pcie_gen = Reading::Value(g);
        }
        if let Some(w) = num(kv(&width, "Current")) {
            s.pcie_width = Reading::Value(w);
        }
        if let Some(t) = kv(block, "GPU Current Temp").and_then(|t| t.trim_end_matches('C').trim().parse().ok()) {
            s.temp_c = Reading::Value(t);
        }
        inventory.gpus.push(info);
        samples.push(s);
    }
    for (addr, why) in &lost {
        let index = u32::try_from(inventory.gpus.len()).unwrap_or(u32::MAX);
        let mut info = GpuInfo::unavailable(index, why.as_str());
        info.pci_bus_id = Reading::Value(addr.clone());
        inventory.gpus.push(info);
        // "GPU is lost" is NVML's GPU_IS_LOST (fell off the bus); other errors ("Unknown Error")
        // leave the GPU listed but unreadable.
        let health = if why.contains("GPU is lost") {
            GpuHealth::Lost(msg!("nvidia-smi: {why}", why = why))
        } else {
            GpuHealth::Ok
        };
        samples.push(GpuSample::unavailable(index, health, why.as_str()));
    }
    let view = NvmlView {
        status: SourceStatus::Nvml {
            library: msg!("libnvidia-ml.so.1 (as nvidia-smi used it)").en(),
            attempts: Vec::new(),
        },
        inventory,
        samples,
        facts: Vec::new(),
        did_not_return: None,
        hung_call: None,
    };
    Some((view, dropped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lspci_blocks_give_vendor_class_and_driver_in_every_format() {
        let old = "01:00.0 VGA compatible controller: NVIDIA Corporation Device 0de9 (rev a1)\n\tKernel driver in use: nvidia\n\tKernel modules: nvidia, nouveau\n00: de 10 e9 0d 07 00 10 00 a1 00 00 03 00 00 80 00\n";
        let (f, dropped) = parse_lspci(old);
        assert_eq!((f.len(), dropped), (1, 0));
        assert_eq!((f[0].address.as_str(), f[0].vendor, f[0].class), ("0000:01:00.0", 0x10de, 0x030000));
        assert_eq!(f[0].driver.as_deref(), Some("nvidia"));
        let nn = "0000:3b:00.0 3D controller [0302]: NVIDIA Corporation GA102GL [A10] [10de:2236] (rev a1)\n\tKernel driver in use: nouveau\n";
        let (f, _) = parse_lspci(nn);
        assert_eq!((f[0].vendor, f[0].class, f[0].driver.as_deref()), (0x10de, 0x030200, Some("nouveau")));
        assert!(parse_lspci("garbage\n\tKernel driver in use: x\n:::: y\n").0.is_empty());
    }

    #[test]
    fn nvidia_smi_failures_become_nvmls_own_explanations() {
        let v = parse_smi(
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n",
        );
        assert!(matches!(v.map(|v| v.status), Some(SourceStatus::Unavailable(_))));
        // Issue 53, item 20: nvidia-smi's words when the loader finds no NVML.
        let v = parse_smi("NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display Driver is properly installed and present in your system.\n").map(|v| v.status);
        assert!(matches!(&v, Some(SourceStatus::Unavailable(no)) if no.is_not_found()), "{v:?}");
        let v = parse_smi("Failed to initialize NVML: Driver/library version mismatch\n").map(|v| v.status);
        assert!(
            matches!(&v, Some(SourceStatus::Unavailable(no)) if no.is_version_mismatch() && no.failure.is_some()),
            "{v:?}"
        );
        let v = parse_smi(
            "Unable to determine the device handle for GPU 0000:04:00.0: GPU is lost.  Reboot the system to recover this GPU\n",
        );
        let v = v.unwrap_or_else(|| panic!("lost GPU"));
        assert!(matches!(&v.samples[0].health, GpuHealth::Lost(w) if w.en().contains("GPU is lost")));
        assert!(parse_smi("hello\n").is_none());
    }

    #[test]
    fn device_nodes_from_ls() {
        let n = device_nodes("crw-rw---- 1 root video 195,   0 Mar  1 10:00 /dev/nvidia0\ntotal 0\n");
        assert_eq!(n.len(), 1);
        assert_eq!((n[0].mode, n[0].major, n[0].minor, n[0].group.as_deref()), (0o660, 195, 0, Some("video")));
    }
}
