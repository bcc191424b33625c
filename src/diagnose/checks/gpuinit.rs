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
    let why = if let Some(l) = find(&["region assigned to your nvidia device is invalid", "bar1 is 0m"]) {
        Some(decided("gpu-bar-unassigned", Message::data(l.as_str())))
    } else if let Some(l) = legacy_line(lines) {
        Some(decided("legacy-gpu-not-driven", Message::data(l)))
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
            } else {
                vec!["another-driver-owns-gpu", "gpu-bar-unassigned", "driver-release-cannot-start-gpu"]
            };
            c.found(msg!("The driver does not manage {gpus}", gpus = missing.join(", ")))
                .cause(CauseFinding::candidates(&D, &ids))
                .steps(candidate_steps(&D, &ids))
        }
    }
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
