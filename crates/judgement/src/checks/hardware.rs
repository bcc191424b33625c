//! Hardware checks (HW-*): NVIDIA display-class functions on the PCI bus (vendor 0x10de, class
//! 0x0300 VGA or 0x0302 3D controller), the kernel driver bound to each, and whether NVML manages
//! every one of them (bus ids compared in one normal form).
//!
//! Sources: the Linux sysfs PCI attributes (`/sys/bus/pci/devices/*/{vendor,class,driver}`);
//! NVIDIA's nvidia-modprobe, which matches GPUs by the same vendor and classes; the NVML API
//! reference (<https://docs.nvidia.com/deploy/nvml-api/>) for the device count and PCI bus ids.

use super::{Ctx, MISSING, fixes};
use crate::diagnose::parse::norm_bus;
use crate::diagnose::{Check, FixStep, Verdict};
use crate::i18n::Message;
use crate::msg;

pub(super) fn gpu_on_pci_bus(c: Check, cx: &Ctx) -> Check {
    let Some(pci) = &cx.pci else {
        if cx.wsl.is_some() {
            return c
                .verdict(Verdict::Info, msg!("WSL has no PCI view of the GPU; the Windows driver provides it"))
                .found(msg!("Windows provides the GPU to WSL (no PCI view here)"))
                .evidence(msg!("/sys/bus/pci/devices: not present"));
        }
        return c
            .verdict(Verdict::Skipped, crate::i18n::Message::new(MISSING))
            .evidence(msg!("/sys/bus/pci/devices: not readable"));
    };
    if pci.is_empty() {
        if cx.container.is_some() || cx.wsl.is_some() {
            return c
                .verdict(Verdict::Info, msg!("no NVIDIA PCI function visible here (normal in containers and WSL)"))
                .found(msg!("No NVIDIA PCI device is visible here (normal in a container)"))
                .evidence(msg!("/sys/bus/pci/devices: no vendor 0x10de display functions"));
        }
        return no_nvidia_on_bus(c, cx);
    }
    let mut c = c
        .verdict(
            Verdict::Pass,
            msg!(
                "{n} NVIDIA GPU(s): {list}",
                n = pci.len(),
                list = pci.iter().map(|g| g.address.as_str()).collect::<Vec<_>>().join(", ")
            ),
        )
        .found(msg!("{n} NVIDIA GPU(s) found on the PCI bus", n = pci.len()));
    for g in pci {
        c = c.evidence(msg!("/sys/bus/pci/devices/{address}: vendor 0x10de, display class", address = g.address));
    }
    c
}

/// HW-01 failing: the firmware's DMI strings and the other display devices order the causes
/// ([`NO_NVIDIA_ON_BUS`]); a hypervisor's name decides it.
fn no_nvidia_on_bus(c: Check, cx: &Ctx) -> Check {
    use crate::diagnose::differential::{CauseFinding, NO_NVIDIA_ON_BUS as D, candidate_steps};
    let dmi =
        |f: &str| cx.v.read(&format!("/sys/class/dmi/id/{f}")).map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    let system = [dmi("sys_vendor"), dmi("product_name")].into_iter().flatten().collect::<Vec<_>>().join(" ");
    // SMBIOS chassis types: 8-10, 14, 31, 32 portable; 17, 23, 28 servers.
    let chassis: Option<u32> = dmi("chassis_type").and_then(|t| t.parse().ok());
    let laptop = chassis.is_some_and(|t| matches!(t, 8 | 9 | 10 | 14 | 31 | 32));
    let server = chassis.is_some_and(|t| matches!(t, 17 | 23 | 28));
    let others = super::container::no_nvidia_gpu_on_the_bus(cx).unwrap_or_default();
    let c = c
        .verdict(Verdict::Fail, msg!("no NVIDIA GPU is visible on the PCI bus"))
        .explain(msg!("Nothing else can work until the system sees the card."))
        .evidence(msg!("/sys/bus/pci/devices: no vendor 0x10de, class 0x0300/0x0302 function"))
        .evidence(msg!(
            "PCI display devices: {list}",
            list = if others.is_empty() { msg!("none") } else { Message::data(others.join(", ")) }
        ));
    let c = if system.is_empty() {
        c
    } else {
        c.evidence(msg!("firmware (DMI): {system}", system = Message::data(system.as_str())))
    };
    if crate::diagnose::winfacts::names_a_hypervisor(&system) {
        return c
            .found(msg!("No NVIDIA GPU is visible on the PCI bus: {cause}", cause = Message::new(D.name_of("vm-without-gpu-passthrough"))))
            .cause(CauseFinding::decided(&D, "vm-without-gpu-passthrough"))
            .text(msg!("Pass the GPU through to this virtual machine in the hypervisor (PCI passthrough / vfio-pci, or a cloud instance type that has a GPU), then start it again."));
    }
    let ids: &[&str] = if laptop {
        &["machine-has-no-nvidia-gpu", "gpu-switched-off-by-firmware"]
    } else if server || others.is_empty() || chassis.is_some() {
        &["gpu-not-seated-or-powered", "machine-has-no-nvidia-gpu"]
    } else {
        &["machine-has-no-nvidia-gpu", "gpu-not-seated-or-powered"]
    };
    c.found(msg!("No NVIDIA GPU is visible on the PCI bus"))
        .cause(CauseFinding::candidates(&D, ids))
        .text(msg!("Which of these it is, most likely first:"))
        .steps(candidate_steps(&D, ids))
}

pub(super) fn kernel_driver_bound(c: Check, cx: &Ctx) -> Check {
    let Some(pci) = cx.pci.as_ref().filter(|p| !p.is_empty()) else {
        return c.verdict(Verdict::Skipped, msg!("no NVIDIA PCI function to look at"));
    };
    let mut worst = Verdict::Pass;
    let mut c = c;
    let mut fixes = Vec::new();
    for g in pci {
        let d = g.driver.as_deref().unwrap_or("none");
        let shown = if g.driver.is_some() { Message::data(d) } else { msg!("none") };
        c = c.evidence(msg!("{address}: driver {driver}", address = g.address, driver = shown));
        let v = match d {
            "nvidia" => Verdict::Pass,
            // A GPU handed to virtual machines on purpose: information, not a fault.
            "vfio-pci" | "pci-stub" => {
                fixes.push(FixStep::Text(msg!("GPU {address} is reserved for VM passthrough ({d}); if that is not intended, remove the vfio/driver_override configuration and reboot.", address = g.address, d = d)));
                Verdict::Info
            }
            "nouveau" => {
                fixes.extend(fixes::blacklist_nouveau(cx.distro));
                Verdict::Fail
            }
            _ => {
                fixes.push(FixStep::Text(msg!(
                    "GPU {address} has no driver bound: install the NVIDIA driver, or load it and read the error it prints:",
                    address = g.address
                )));
                fixes.push(FixStep::Command("sudo modprobe nvidia".into()));
                Verdict::Fail
            }
        };
        worst = worst.max(v);
    }
    let summary = match worst {
        Verdict::Pass => msg!("every GPU is bound to the nvidia driver"),
        _ => msg!(
            "not every GPU is bound to the nvidia driver ({list})",
            list = Message::join(
                pci.iter().map(|g| msg!(
                    "{label}: {value}",
                    label = g.address,
                    value = g.driver.as_deref().map_or_else(|| msg!("none"), Message::data)
                )),
                &msg!(", ")
            )
        ),
    };
    let finding = match pci.iter().find(|g| g.driver.as_deref() != Some("nvidia")) {
        None => msg!("Every GPU is bound to the NVIDIA driver"),
        Some(g) => match g.driver.as_deref() {
            Some(d @ ("vfio-pci" | "pci-stub")) => {
                msg!("GPU {address} is reserved for virtual machines ({d})", address = g.address, d = d)
            }
            Some(d) => msg!("GPU {address} is bound to {d}, not to the NVIDIA driver", address = g.address, d = d),
            None => msg!("GPU {address} has no kernel driver bound", address = g.address),
        },
    };
    let mut c = c.verdict(worst, summary).found(finding);
    let mut unique: Vec<FixStep> = Vec::new();
    for f in fixes {
        if !unique.contains(&f) {
            unique.push(f);
        }
    }
    let fixes = unique;
    c.fixes = fixes;
    c
}

pub(super) fn nvml_sees_every_gpu(c: Check, cx: &Ctx) -> Check {
    let (Some(pci), true) = (cx.pci.as_ref().filter(|p| !p.is_empty()), cx.nvml_open()) else {
        // Without NVML (a bug report taken while the driver failed, a capture without
        // nvidia-smi) the kernel log can still say that the driver could not start a GPU.
        if let Some(pci) = cx.pci.as_ref().filter(|p| !p.is_empty()) {
            let failed = init_failed_gpus(cx, pci);
            if !failed.is_empty() {
                let c = c.evidence(format!(
                    "PCI: {}",
                    pci.iter().map(|g| g.address.as_str()).collect::<Vec<_>>().join(", ")
                ));
                return not_managed(c, cx, &failed, true);
            }
        }
        return c.verdict(Verdict::Skipped, msg!("needs both the PCI list and NVML"));
    };
    let nvml_ids: Vec<String> = cx
        .nvml
        .map(|n| n.inventory.gpus.iter().filter_map(|g| g.pci_bus_id.value().map(|b| norm_bus(b))).collect())
        .unwrap_or_default();
    // GPUs reserved for virtual machines (vfio-pci, pci-stub) are not the driver's to manage.
    let missing: Vec<&str> = pci
        .iter()
        .filter(|g| !nvml_ids.contains(&norm_bus(&g.address)))
        .filter(|g| !g.driver.as_deref().is_some_and(|d| matches!(d, "vfio-pci" | "pci-stub")))
        .map(|g| g.address.as_str())
        .collect();
    let c = c
        .evidence(format!("PCI: {}", pci.iter().map(|g| g.address.as_str()).collect::<Vec<_>>().join(", ")))
        .evidence(format!("NVML: {}", nvml_ids.join(", ")));
    // GPUs a scheduler's job was not given: their device files refuse it.
    let job_refused = super::access::job_refused_gpus(cx);
    if missing.is_empty() {
        c.verdict(Verdict::Pass, msg!("all {n} GPU(s) managed by the driver", n = pci.len()))
            .found(msg!("The driver manages every GPU on the PCI bus"))
    } else if job_refused >= missing.len() && nvml_ids.is_empty() {
        // A scheduler's job whose device limits refuse every GPU: NVML cannot open what the job
        // was not given; PERM-02 says why (no GPU requested).
        c.verdict(
            Verdict::Info,
            msg!("NVML sees no GPU: this job's device limits refuse {gpus}", gpus = missing.join(", ")),
        )
        .found(msg!("The scheduler gave this job no GPU"))
    } else if job_refused >= missing.len() {
        // A scheduler's job sees the GPUs it was given; the others' device files refuse it.
        c.verdict(
            Verdict::Info,
            msg!(
                "NVML sees the {n} GPU(s) this job was given; the job's device limits hide {gpus}",
                n = nvml_ids.len(),
                gpus = missing.join(", ")
            ),
        )
        .found(msg!("The scheduler gave this job {n} GPU(s)", n = nvml_ids.len()))
    } else if (cx.container.is_some() || super::env::scheduler(cx).is_some())
        && !nvml_ids.is_empty()
        && init_failed_line(cx, &missing).is_none()
    {
        // A container or a scheduler's job sees the node's whole PCI bus but is given only some
        // of its GPUs.
        c.verdict(
            Verdict::Info,
            msg!(
                "this container or job was given {n} of the node's {m} GPUs; the others are not passed in",
                n = nvml_ids.len(),
                m = pci.len()
            ),
        )
        .found(msg!("The container or job was given {n} GPU(s)", n = nvml_ids.len()))
    } else {
        not_managed(c, cx, &missing, nvml_ids.is_empty())
    }
}

/// Why the driver does not manage `missing`: the kernel log decides it, or leaves candidates.
fn not_managed(c: Check, cx: &Ctx, missing: &[&str], none_managed: bool) -> Check {
    let init_failed = init_failed_line(cx, missing);
    let c = match (&init_failed, none_managed) {
        (Some(line), _) => c.evidence(line.clone()).verdict(
            Verdict::Fail,
            msg!("the driver could not initialise {gpus} (RmInitAdapter failed)", gpus = missing.join(", ")),
        ),
        (None, true) => c.verdict(Verdict::Fail, msg!("the driver manages none of the PCI GPUs")),
        (None, false) => c.verdict(Verdict::Warn, msg!("NVML does not see {gpus}", gpus = missing.join(", "))),
    };
    super::gpuinit::explain(c, cx, missing)
}

/// The PCI GPUs the kernel log says the driver failed to start: those an `RmInitAdapter
/// failed` line names, or, when the lines name none (drivers before about 2015 wrote
/// `NVRM: RmInitAdapter failed! (…)` and `rm_init_adapter(0) failed`), every GPU bound to it.
fn init_failed_gpus<'a>(cx: &Ctx, pci: &'a [super::ctx::PciGpu]) -> Vec<&'a str> {
    let super::super::system::KernelLog::Lines(lines) = &cx.v.meta().kernel_log else { return Vec::new() };
    let failures: Vec<String> =
        lines.iter().filter(|l| super::super::parse::is_rm_init_failure(l)).map(|l| l.to_ascii_lowercase()).collect();
    if failures.is_empty() {
        return Vec::new();
    }
    let named: Vec<&str> = pci
        .iter()
        .filter(|g| failures.iter().any(|l| l.contains(&norm_bus(&g.address))))
        .map(|g| g.address.as_str())
        .collect();
    if !named.is_empty() || failures.iter().any(|l| l.contains("gpu 0000:") || l.contains("gpu 00000000:")) {
        return named;
    }
    pci.iter().filter(|g| g.driver.as_deref() == Some("nvidia")).map(|g| g.address.as_str()).collect()
}

/// The kernel-log line saying the driver failed to initialise one of `missing`
/// (`NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x62:0x25:2015)`).
fn init_failed_line(cx: &Ctx, missing: &[&str]) -> Option<String> {
    let super::super::system::KernelLog::Lines(lines) = &cx.v.meta().kernel_log else { return None };
    let failed = |l: &&String| l.contains("RmInitAdapter failed");
    lines
        .iter()
        .rev()
        .filter(failed)
        .find(|l| missing.iter().any(|m| l.to_ascii_lowercase().contains(&norm_bus(m))))
        // An old driver's line names no GPU (`NVRM: RmInitAdapter failed! (0x30:0xffffffff:858)`).
        .or_else(|| lines.iter().rev().filter(failed).find(|l| !l.to_ascii_lowercase().contains("gpu 0")))
        .cloned()
}
