//! The differential of "the driver does not manage a GPU on the PCI bus" (HW-03,
//! [`GPU_NOT_INITIALISED`]): the nvidia module runs but did not take or start a GPU, and says why
//! in the kernel log in messages of its own source (`kernel-open/nvidia/nv.c` and `nv-pci.c` of
//! NVIDIA's open-gpu-kernel-modules): a BAR the firmware left unassigned, the GPU's firmware not
//! booting, GSP not starting under the open module, a GPU the release no longer supports (legacy),
//! another driver holding it.

use super::Ctx;
use crate::diagnose::differential::{CauseFinding, GPU_NOT_INITIALISED as D, candidate_steps};
use crate::diagnose::system::KernelLog;
use crate::diagnose::{Check, FixStep, parse};
use crate::i18n::Message;
use crate::msg;

/// The cause of GPUs (`missing`, their PCI addresses) the driver does not manage, and the
/// kernel-log line or fact that decides it; else the candidates, most likely first.
pub(super) fn explain(c: Check, cx: &Ctx, missing: &[&str]) -> Check {
    let lines: &[String] = match &cx.v.meta().kernel_log {
        KernelLog::Lines(l) => l,
        KernelLog::Unreadable(_) => &[],
    };
    let find = |needles: &[&str]| {
        lines.iter().find(|l| {
            let l = l.to_ascii_lowercase();
            needles.iter().any(|n| l.contains(n))
        })
    };
    let open = cx.v.read("/proc/driver/nvidia/version").and_then(|t| parse::driver_version(&t)).is_some_and(|v| v.1);
    let other_driver = cx
        .pci
        .iter()
        .flatten()
        .find(|g| {
            missing.iter().any(|m| m.eq_ignore_ascii_case(&g.address))
                && g.driver.as_deref().is_some_and(|d| d != "nvidia")
        })
        .map(|g| format!("{}: {}", g.address, g.driver.as_deref().unwrap_or_default()));
    let decided = |id: &'static str, fact: Message| (id, fact);
    // What the kernel assigned to each GPU's first two BARs (registers, framebuffer window),
    // readable by every user where the kernel log may not be.
    let bars: Vec<(&str, [Option<u64>; 2])> = missing
        .iter()
        .filter_map(|a| Some((*a, bar_windows(&cx.v.read(&format!("/sys/bus/pci/devices/{a}/resource"))?)?)))
        .collect();
    let unassigned = bars.iter().find(|(_, b)| b.iter().any(Option::is_none));
    let why = if let Some(l) = find(&["region assigned to your nvidia device is invalid", "bar1 is 0m"]) {
        Some(decided("gpu-bar-unassigned", Message::data(l.as_str())))
    } else if let Some((addr, b)) = unassigned {
        Some(decided("gpu-bar-unassigned", bar_fact(addr, b)))
    } else if let Some(l) = legacy_line(lines) {
        Some(decided("legacy-gpu-not-driven", Message::data(l)))
    } else if let Some(l) = find(&["failed to copy vbios"]) {
        Some(decided("gpu-vbios-unreadable", Message::data(l.as_str())))
    } else if let Some(l) = find(&["gfw_boot", "gfw boot"]) {
        Some(decided("gpu-firmware-boot-failed", Message::data(l.as_str())))
    } else if let (true, Some(l)) = (open, find(&["cannot initialize gsp"])) {
        Some(decided("open-module-cannot-start-gsp", Message::data(l.as_str())))
    } else if let Some(d) = other_driver {
        Some(decided("another-driver-owns-gpu", msg!("driver link: {d}", d = d)))
    } else {
        find(&["probe routine was not called"]).map(|l| decided("another-driver-owns-gpu", Message::data(l.as_str())))
    };
    match why {
        Some((id, fact)) => c
            .found(msg!(
                "The driver does not manage {gpus}: {cause}",
                gpus = missing.join(", "),
                cause = Message::new(D.name_of(id))
            ))
            .cause(CauseFinding::decided(&D, id))
            .evidence(fact)
            .steps(fix(id, cx)),
        None => {
            let failed = lines.iter().any(|l| parse::is_rm_init_failure(l));
            let ids: Vec<&str> = if failed {
                let mut v = vec!["driver-release-cannot-start-gpu", "gpu-firmware-boot-failed"];
                if open {
                    v.push("open-module-cannot-start-gsp");
                }
                v
            } else if !bars.is_empty() && bars.len() == missing.len() {
                // Every BAR of these GPUs was assigned: that cause is ruled out.
                vec!["another-driver-owns-gpu", "driver-release-cannot-start-gpu"]
            } else {
                vec!["another-driver-owns-gpu", "gpu-bar-unassigned", "driver-release-cannot-start-gpu"]
            };
            let c = bars.iter().fold(c, |c, (a, b)| c.evidence(bar_fact(a, b)));
            c.found(msg!("The driver does not manage {gpus}", gpus = missing.join(", ")))
                .cause(CauseFinding::candidates(&D, &ids))
                .steps(candidate_steps(&D, &ids))
        }
    }
}

/// The sizes of BAR0 (the GPU's registers) and BAR1 (its framebuffer window) from a PCI function's
/// sysfs `resource` file (`start end flags` per line, BAR0 first; `drivers/pci/pci-sysfs.c`), or
/// `None` for a BAR the kernel could not place: it zeroes a resource it fails to assign
/// (`reset_resource` in `drivers/pci/setup-bus.c`), and no assigned window starts at address 0.
/// `None` overall when the file is not that format.
pub(super) fn bar_windows(resource: &str) -> Option<[Option<u64>; 2]> {
    let mut out = [None, None];
    let mut lines = resource.lines();
    for slot in &mut out {
        let mut f = lines.next()?.split_whitespace().map(|x| u64::from_str_radix(x.trim_start_matches("0x"), 16));
        let (start, end) = (f.next()?.ok()?, f.next()?.ok()?);
        if start != 0 && end > start {
            *slot = Some(end - start + 1);
        }
    }
    Some(out)
}

/// "0000:01:00.0: BAR0 16 MiB, BAR1 unassigned".
fn bar_fact(addr: &str, bars: &[Option<u64>; 2]) -> Message {
    let size = |b: &Option<u64>| match b {
        Some(n) => Message::data(crate::units::bytes(*n)),
        None => msg!("unassigned"),
    };
    msg!("{addr}: BAR0 {bar0}, BAR1 {bar1}", addr = addr, bar0 = size(&bars[0]), bar1 = size(&bars[1]))
}

/// The driver's line saying a GPU is supported only by a legacy branch ("The NVIDIA GeForce GTX
/// 1060 GPU installed in this system is supported through the NVIDIA 580.xx Legacy drivers"),
/// joined where the log wraps it.
pub(super) fn legacy_line(lines: &[String]) -> Option<String> {
    let joined: Vec<String> = lines.iter().map(|l| l.trim_start_matches("NVRM:").trim().to_string()).collect();
    let text = joined.join(" ");
    let lower = text.to_ascii_lowercase();
    let at = lower.find("supported through the nvidia ")?;
    let start = lower[..at].rfind("the nvidia ").unwrap_or(at);
    let end = lower[at..].find("legacy").map_or(text.len(), |e| (at + e + "legacy drivers".len()).min(text.len()));
    Some(text.get(start..end)?.to_string())
}

/// The legacy branch a legacy line names ("580.xx" → "580").
pub(super) fn legacy_branch(line: &str) -> Option<String> {
    let lower = line.to_ascii_lowercase();
    let rest = &line[lower.find("supported through the nvidia ")? + "supported through the nvidia ".len()..];
    let branch: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    (!branch.is_empty()).then_some(branch)
}

fn fix(id: &str, cx: &Ctx) -> Vec<FixStep> {
    let t = FixStep::Text;
    let c = |s: &str| FixStep::Command(s.to_string());
    match id {
        "gpu-bar-unassigned" => vec![t(msg!(
            "Turn on \"Above 4G Decoding\" (and Resizable BAR, where offered) in the BIOS/UEFI setup. If that is on already, the kernel can reassign the PCI windows: add pci=realloc to the kernel command line. In a virtual machine, give the guest a larger 64-bit MMIO window. Then reboot."
        ))],
        "gpu-vbios-unreadable" => vec![
            t(msg!(
                "The driver reads the GPU's video BIOS from the card or, on a laptop, from the system firmware (ACPI). Update the laptop's or board's BIOS/UEFI and the kernel; in a virtual machine with a passed-through GPU, give the guest the GPU's ROM file (libvirt: a <rom file='...'/> element in the hostdev). Then see whether the error is gone:"
            )),
            c("sudo dmesg | grep -i vbios"),
        ],
        "gpu-firmware-boot-failed" => vec![t(msg!(
            "Power the machine off completely (unplug it for a minute), then start it again; reseat the card and check its power cables. If the GPU's firmware still does not boot, the card needs its vendor."
        ))],
        "open-module-cannot-start-gsp" => vec![
            t(msg!(
                "Install the proprietary kernel-module flavour of the same driver (Ubuntu: nvidia-driver-<branch> without -open), or a newer release that fixes this GPU, then reboot:"
            )),
            c("sudo reboot"),
        ],
        "legacy-gpu-not-driven" => legacy_fix(cx, None),
        "another-driver-owns-gpu" => {
            let mut v = vec![
                t(msg!(
                    "See which driver holds each NVIDIA function; keep nouveau away (below), and take the GPU out of a vfio-pci or driver_override setup if it was not meant for virtual machines:"
                )),
                c("lspci -nnk -d 10de:"),
            ];
            v.extend(super::fixes::blacklist_nouveau(cx.distro));
            v
        }
        _ => Vec::new(),
    }
}

/// Installing the legacy branch the driver named.
pub(super) fn legacy_fix(cx: &Ctx, branch: Option<&str>) -> Vec<FixStep> {
    let KernelLog::Lines(lines) = &cx.v.meta().kernel_log else { return Vec::new() };
    let branch = branch.map(str::to_string).or_else(|| legacy_line(lines).and_then(|l| legacy_branch(&l)));
    let mut v = vec![FixStep::Text(match &branch {
        Some(b) => msg!(
            "Install NVIDIA's {branch} legacy branch instead of the driver installed (it keeps receiving fixes for these GPUs), then reboot:",
            branch = b.as_str()
        ),
        None => msg!("Install the legacy branch the kernel log names instead of the driver installed, then reboot:"),
    })];
    if let (Some(b), parse::Distro::Ubuntu) = (&branch, cx.distro) {
        v.push(FixStep::Command(format!("sudo apt install nvidia-driver-{b}")));
    }
    v.push(FixStep::Command("sudo reboot".into()));
    v
}

#[cfg(test)]
mod tests {
    use super::bar_windows;

    #[test]
    fn bar_sizes_come_from_the_sysfs_resource_file_and_an_unplaced_bar_reads_as_none() {
        // An RTX 4090 with Resizable BAR: 16 MiB of registers, a 32 GiB framebuffer window.
        let ok = "0x00000000fb000000 0x00000000fbffffff 0x0000000000040200\n\
                  0x0000006000000000 0x00000067ffffffff 0x000000000014220c\n\
                  0x0000000000000000 0x0000000000000000 0x0000000000000000\n";
        assert_eq!(bar_windows(ok), Some([Some(16 << 20), Some(32 << 30)]));
        // BAR1 the firmware could not place: the kernel zeroed it.
        let lost = "0x00000000fb000000 0x00000000fbffffff 0x0000000000040200\n\
                    0x0000000000000000 0x0000000000000000 0x0000000000000000\n";
        assert_eq!(bar_windows(lost), Some([Some(16 << 20), None]));
        assert_eq!(bar_windows("garbage\n"), None);
        assert_eq!(bar_windows(""), None);
    }
}
