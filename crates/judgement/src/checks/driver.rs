//! Driver checks of the kernel module (DRV-01, DRV-02, DRV-04, DRV-05, DRV-10): whether it is
//! loaded and, when not, why (no driver, no module for the running kernel, the open module refusing
//! an older GPU, a release that dropped the GPU, a blacklist, Secure Boot, the GPU Operator's
//! driver pod), its version, its open/proprietary flavour against the GPU generation, and nouveau.
//!
//! Sources: the `/proc/driver/nvidia/version` line and the messages of NVIDIA's
//! open-gpu-kernel-modules; modprobe.d(5) and the kernel's parameter list for blacklists; the CUDA
//! Toolkit release notes (<https://docs.nvidia.com/cuda/archive/13.2.2/cuda-toolkit-release-notes/index.html>)
//! for the GPU generations each driver flavour supports.
//!
//! The module-not-loaded differential decides from facts spread over these checks (the module
//! folders, Secure Boot, the blacklists, the libraries found), so it stays with them; NVML, the
//! libraries, persistence and a hung driver are in `nvml.rs`.

use super::{Ctx, MISSING, fixes};
use crate::diagnose::differential::{CauseFinding, MODULE_NOT_LOADED, candidate_steps};
use crate::diagnose::parse;
use crate::diagnose::system::{KernelLog, MODPROBE_DIRS};
use crate::diagnose::{Check, Verdict};
use crate::i18n::Message;
use crate::msg;
use crate::telemetry::source::SourceStatus;

pub(super) fn kernel_module_loaded(c: Check, cx: &Ctx) -> Check {
    if cx.wsl.is_some() {
        return c.not_here(msg!("native Linux"), msg!("not applicable in WSL: the Windows driver serves the GPU"));
    }
    match cx.module("nvidia") {
        None => {
            if cx.container.is_some() {
                c.verdict(Verdict::Skipped, msg!("the host's kernel modules are not visible from this container"))
            } else {
                c.verdict(Verdict::Skipped, crate::i18n::Message::new(MISSING)).evidence(msg!("/proc/modules: not readable"))
            }
        }
        Some(true) => {
            let others: Vec<&str> = ["nvidia_uvm", "nvidia_modeset", "nvidia_drm"].into_iter().filter(|m| cx.module(m) == Some(true)).collect();
            c.verdict(Verdict::Pass, msg!("nvidia is loaded")).found(msg!("The NVIDIA kernel module is loaded")).evidence(format!("/proc/modules: nvidia{}", others.iter().map(|m| format!(", {m}")).collect::<String>()))
        }
        Some(false) if cx.container.is_some() => c.verdict(Verdict::Info, msg!("no nvidia module listed (the host's modules may not be visible here)")).found(msg!("The host's NVIDIA module is not visible from this container")),
        Some(false) if operator_node(cx) => c
            .verdict(Verdict::Fail, msg!("the nvidia module is not loaded, and the NVIDIA GPU Operator manages this node's driver (/run/nvidia)"))
            .found(msg!("The NVIDIA kernel module is not loaded: {cause}", cause = Message::new(MODULE_NOT_LOADED.name_of("operator-driver-not-ready"))))
            .cause(CauseFinding::decided(&MODULE_NOT_LOADED, "operator-driver-not-ready"))
            .explain(msg!("On this node the operator's driver pod builds and loads the module; until it has, no pod gets a GPU. Do not install a driver on the host as well: the two conflict."))
            .text(msg!("See the driver pod's state on this node, then its log (the operator's namespace is gpu-operator by default):"))
            .cmd("kubectl get pods -A -o wide -l app=nvidia-driver-daemonset")
            .cmd("kubectl logs -n gpu-operator -l app=nvidia-driver-daemonset --all-containers --tail=50"),
        Some(false) if no_driver_installed(cx) => c
            .verdict(Verdict::Fail, msg!("no NVIDIA driver is installed: neither the kernel module nor its libraries are present"))
            .found(msg!("The NVIDIA driver is not installed"))
            .cause(CauseFinding::decided(&MODULE_NOT_LOADED, "driver-not-installed"))
            .evidence(msg!("/proc/modules: no nvidia; /proc/driver/nvidia: absent; libnvidia-ml.so.1: not found"))
            .steps(fixes::install_driver(cx.distro)),
        Some(false) => match module_built_for_running_kernel(cx) {
            Some((release, false, looked)) => c
                .verdict(
                    Verdict::Fail,
                    msg!("no NVIDIA kernel module is installed for the running kernel {release}", release = release),
                )
                .found(msg!("The NVIDIA driver was not built for the running kernel ({release})", release = release))
                .cause(CauseFinding::decided(&MODULE_NOT_LOADED, "module-not-built-for-kernel"))
                .explain(msg!("The driver is installed, but its kernel module exists only for other kernels: after a kernel update DKMS (or akmods) has to build it for the new one, and that failed or never ran (missing headers, a compiler error, or a driver installed without DKMS)."))
                .evidence(msg!("looked in: {dirs}", dirs = looked.join(", ")))
                .steps(fixes::rebuild_module(cx.distro))
                .text(msg!("If the driver came from NVIDIA's .run installer without DKMS, run that installer again for this kernel instead (with --dkms, so later kernel updates rebuild it), then reboot:"))
                .cmd("sudo reboot"),
            _ if !open_module_refusals(cx).is_empty() => c
                .verdict(
                    Verdict::Fail,
                    msg!("the open NVIDIA kernel module refused the GPU: it supports Turing and newer GPUs only"),
                )
                .found(msg!("The open NVIDIA kernel module does not support this GPU"))
                .cause(CauseFinding::decided(&MODULE_NOT_LOADED, "open-module-unsupported-gpu"))
                .explain(msg!("The driver installed is the open kernel-module flavour, which needs the GSP processor of Turing (GeForce RTX 20, GTX 16) and newer GPUs; the module loads, finds no GPU it can drive and is unloaded. Older GPUs need the proprietary flavour of the same driver."))
                .evidence(msg!("kernel log: {lines}", lines = Message::data(open_module_refusals(cx).join(" "))))
                .text(msg!("Install the proprietary kernel-module flavour of the driver (Ubuntu and Pop!_OS: the nvidia-driver-<branch> package without -open; Maxwell to Volta GPUs: the R580 legacy branch for future updates), then reboot."))
                .cmd("sudo reboot"),
            _ => {
                // The driver's own word on the GPU (a release that dropped it), then a blacklist;
                // each read once.
                if let Some(line) = legacy_refusal(cx) {
                    return c.verdict(Verdict::Fail, msg!("the installed driver release no longer supports this GPU, so the module unloads"))
                        .found(msg!("The NVIDIA kernel module is not loaded: {cause}", cause = Message::new(MODULE_NOT_LOADED.name_of("gpu-needs-legacy-branch"))))
                        .cause(CauseFinding::decided(&MODULE_NOT_LOADED, "gpu-needs-legacy-branch"))
                        .evidence(msg!("kernel log: {line}", line = Message::data(line.as_str())))
                        .steps(super::gpuinit::legacy_fix(cx, None));
                }
                if let Some((place, line)) = blacklisted(cx, "nvidia") {
                    return c.verdict(Verdict::Fail, msg!("the nvidia module is blacklisted: {line}", line = Message::data(line.as_str())))
                        .found(msg!("The NVIDIA kernel module is not loaded: {cause}", cause = Message::new(MODULE_NOT_LOADED.name_of("module-blacklisted"))))
                        .cause(CauseFinding::decided(&MODULE_NOT_LOADED, "module-blacklisted"))
                        .evidence(msg!("{place}: {line}", place = Message::data(place.as_str()), line = Message::data(line.as_str())))
                        .text(msg!("Remove that line (or the kernel parameter from the boot loader's configuration: /etc/default/grub, then update-grub or grub2-mkconfig), rebuild the initramfs, and reboot:"))
                        .steps([fixes::rebuild_initramfs(cx.distro)])
                        .cmd("sudo reboot");
                }
                // The module exists for this kernel and nothing collected says why it is not
                // loaded: the causes that remain, each with the command that tells.
                let mut left = Vec::new();
                // Secure Boot stays a candidate while its state is unknown (on, DRV-05 fails
                // first; off or a legacy BIOS boot, it is ruled out).
                let sb_known = cx
                    .v
                    .read_bytes("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c")
                    .is_some()
                    || (!cx.v.exists("/sys/firmware/efi") && cx.v.exists("/sys/bus/pci/devices"));
                if !sb_known {
                    left.push("secure-boot-refused-module");
                }
                // A blacklist stays a candidate while the kernel command line or the modprobe.d
                // folders were not read (a capture made before gpu-doctor read them).
                let blacklist_known = cx.v.read("/proc/cmdline").is_some()
                    && MODPROBE_DIRS.iter().any(|d| cx.v.list(d).is_some());
                if !blacklist_known {
                    left.push("module-blacklisted");
                }
                left.push("module-load-error");
                c.verdict(Verdict::Fail, msg!("the NVIDIA kernel module is not loaded"))
                    .found(msg!("The NVIDIA kernel module is not loaded"))
                    .cause(CauseFinding::candidates(&MODULE_NOT_LOADED, &left))
                    .explain(msg!("The module is installed for the running kernel, but nothing collected says why it is not loaded. The causes that remain are in the steps below, most likely first, each with the command that confirms or rules it out."))
                    .evidence(msg!("/proc/modules: no line starting with nvidia"))
                    .steps(candidate_steps(&MODULE_NOT_LOADED, &left))
            }
        },
    }
}

/// The driver's line that it supports a GPU only through a legacy branch (the module then finds
/// no GPU it drives and unloads).
fn legacy_refusal(cx: &Ctx) -> Option<String> {
    let KernelLog::Lines(lines) = &cx.v.meta().kernel_log else { return None };
    super::gpuinit::legacy_line(lines)
}

/// Where the kernel module `module` is blacklisted, and the line that does it: the kernel command
/// line (`modprobe.blacklist=`, `module_blacklist=`, `rd.driver.blacklist=`) or a modprobe.d file
/// (`blacklist nvidia`, `install nvidia /bin/false`, `alias nvidia off`), as modprobe.d(5) and
/// the kernel's parameter list describe them. The module's name must match exactly: Ubuntu's
/// `blacklist nvidiafb` (the old framebuffer driver) does not count.
pub(super) fn blacklisted(cx: &Ctx, module: &str) -> Option<(String, String)> {
    let listed = |v: &str| v.split(',').any(|m| m.trim().replace('-', "_") == module);
    if let Some(cmdline) = cx.v.read("/proc/cmdline") {
        for w in cmdline.split_whitespace() {
            if let Some((k, v)) = w.split_once('=')
                && ["modprobe.blacklist", "module_blacklist", "rd.driver.blacklist"].contains(&k)
                && listed(v)
            {
                return Some(("/proc/cmdline".into(), w.to_string()));
            }
        }
    }
    for dir in MODPROBE_DIRS {
        for name in cx.v.list(dir).unwrap_or_default().into_iter().filter(|n| n.ends_with(".conf")).take(256) {
            let path = format!("{dir}/{name}");
            let text = cx.v.read(&path).unwrap_or_default();
            for line in text.lines().take(512) {
                let words: Vec<&str> = line.split_whitespace().collect();
                let hit = match words.as_slice() {
                    ["blacklist", m] => listed(m),
                    ["install", m, cmd, ..] => {
                        listed(m) && matches!(*cmd, "/bin/false" | "/bin/true" | "/usr/bin/false" | "/usr/bin/true")
                    }
                    ["alias", m, "off"] => listed(m),
                    _ => false,
                };
                if hit {
                    return Some((path, line.trim().to_string()));
                }
            }
        }
    }
    None
}

/// The kernel-log lines in which the open kernel module refuses a GPU it cannot drive (a GPU
/// older than Turing: "... is not supported by open nvidia.ko because it does not include the
/// required GPU System Processor (GSP)"), joined where the driver wraps them.
fn open_module_refusals(cx: &Ctx) -> Vec<String> {
    let KernelLog::Lines(lines) = &cx.v.meta().kernel_log else { return Vec::new() };
    let text: Vec<&str> = lines.iter().map(|l| l.trim_start_matches("NVRM:").trim()).collect();
    let joined = text.join(" ");
    match joined.find("is not supported by open") {
        Some(at) => {
            let start = joined[..at].rfind("The NVIDIA GPU").unwrap_or(at);
            let end = joined[at..].find("(GSP).").map_or(joined.len(), |e| at + e + "(GSP).".len());
            vec![joined[start..end].to_string()]
        }
        None => Vec::new(),
    }
}

/// Where distributions and installers put the NVIDIA module under `/lib/modules/<release>/`
/// (DKMS, akmods, the .run installer, Arch; Ubuntu's signed packages use `kernel/nvidia-<branch>/`;
/// RPM Fusion's and negativo17's akmods one level deeper, in `extra/nvidia/`).
const MODULE_DIRS: [&str; 6] = ["updates/dkms", "updates", "extra", "extramodules", "kernel/drivers/video", "misc"];

/// The core NVIDIA module's file, under whatever name the packaging gives it (nvidia.ko.zst,
/// Debian's nvidia-current.ko, nvidia-legacy-390xx.ko), not its companions (uvm, modeset, drm,
/// peermem, vfio).
fn is_core_module(name: &str) -> bool {
    let stem = name.split(".ko").next().unwrap_or(name);
    name.contains(".ko")
        && stem.starts_with("nvidia")
        && !["uvm", "modeset", "drm", "peermem", "vfio"].iter().any(|c| stem.ends_with(c))
}

/// Whether an `nvidia.ko*` exists for the running kernel: (release, found, the directories that
/// could be listed). `None` when that cannot be told (no release, nothing listable: an old capture).
fn module_built_for_running_kernel(cx: &Ctx) -> Option<(String, bool, Vec<String>)> {
    let release = cx.v.read("/proc/sys/kernel/osrelease")?.trim().to_string();
    let base = format!("/lib/modules/{release}");
    let is_module = |n: &String| is_core_module(n);
    let mut looked = Vec::new();
    let mut dirs: Vec<String> = MODULE_DIRS.iter().map(|d| format!("{base}/{d}")).collect();
    if let Some(kernel) = cx.v.list(&format!("{base}/kernel")) {
        looked.push(format!("{base}/kernel"));
        dirs.extend(kernel.iter().filter(|n| n.starts_with("nvidia")).map(|n| format!("{base}/kernel/{n}")));
    }
    let mut i = 0;
    while i < dirs.len() {
        let d = dirs[i].clone();
        i += 1;
        if let Some(names) = cx.v.list(&d) {
            if names.iter().any(is_module) {
                return Some((release, true, vec![d]));
            }
            // A folder of NVIDIA's own inside a module directory (`extra/nvidia/`), one level.
            if !d.ends_with("/nvidia") {
                dirs.extend(names.iter().filter(|n| *n == "nvidia").map(|n| format!("{d}/{n}")));
            }
            looked.push(d);
        }
    }
    if looked.is_empty() {
        // No module directory for this kernel at all counts too, when /lib/modules lists others.
        let others = cx.v.list("/lib/modules")?;
        if others.contains(&release) {
            return None;
        }
        looked.push(format!("/lib/modules (kernels: {})", others.join(", ")));
    }
    Some((release, false, looked))
}

/// The running kernel has no NVIDIA module at all (user-space packages alone, or a module built
/// only for other kernels): nouveau then runs the GPU for lack of anything else.
fn no_module_for_this_kernel(cx: &Ctx) -> bool {
    cx.module("nvidia") == Some(false)
        && !cx.v.exists("/proc/driver/nvidia/version")
        && matches!(module_built_for_running_kernel(cx), Some((_, false, _)))
}

/// Neither the module nor the NVML library exists (as opposed to an installed driver that fails).
fn no_driver_installed(cx: &Ctx) -> bool {
    let lib = cx.v.meta().libraries.iter().any(|l| l.name == "libnvidia-ml.so.1");
    !lib && !cx.v.exists("/proc/driver/nvidia/version")
        && matches!(cx.nvml.map(|n| &n.status), Some(SourceStatus::Unavailable(_)) | None)
}

pub(super) fn kernel_module_version(c: Check, cx: &Ctx) -> Check {
    if cx.wsl.is_some() {
        return c.not_here(msg!("native Linux"), msg!("not applicable in WSL"));
    }
    match cx.v.read("/proc/driver/nvidia/version").and_then(|t| parse::driver_version(&t)) {
        Some((ver, open)) => c
            .verdict(
                Verdict::Info,
                if open {
                    msg!("{ver} (open kernel module)", ver = ver)
                } else {
                    msg!("{ver} (proprietary kernel module)", ver = ver)
                },
            )
            .found(msg!("The kernel module is version {ver}", ver = ver))
            .evidence(format!("/proc/driver/nvidia/version: {ver}")),
        None => {
            c.verdict(Verdict::Skipped, msg!("no /proc/driver/nvidia/version (module not loaded, or not visible here)"))
        }
    }
}

pub(super) fn nouveau_not_holding_gpu(c: Check, cx: &Ctx) -> Check {
    let bound = cx.pci.as_ref().is_some_and(|p| p.iter().any(|g| g.driver.as_deref() == Some("nouveau")));
    match (bound, cx.module("nouveau")) {
        // A fresh desktop: nouveau runs the GPU because no NVIDIA driver is installed at all.
        // Blacklisting nouveau then would leave the machine with no driver; the distribution's
        // installer sets up the NVIDIA driver and keeps nouveau away itself.
        (true, _) if no_driver_installed(cx) => c
            .verdict(Verdict::Fail, msg!("no NVIDIA driver is installed, so the open-source nouveau driver runs the GPU"))
            .found(msg!("The NVIDIA driver is not installed (the open-source nouveau driver runs the GPU)"))
            .cause(CauseFinding::decided(&MODULE_NOT_LOADED, "driver-not-installed"))
            .evidence(msg!("a GPU's driver link points to nouveau"))
            .evidence(msg!("/proc/modules: no nvidia; libnvidia-ml.so.1: not found"))
            .text(msg!("Install the NVIDIA driver with your distribution's tools: they also keep nouveau from taking the GPU (do not blacklist nouveau before a driver is installed)."))
            .steps(fixes::install_driver(cx.distro)),
        // The driver is installed but has no module for this kernel: nouveau runs the GPU for
        // lack of anything else. Blacklisting nouveau would leave no driver at all.
        (true, _) if no_module_for_this_kernel(cx) => {
            let release = cx.v.read("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_string();
            c.verdict(
                Verdict::Fail,
                msg!("the NVIDIA driver has no kernel module for the running kernel {release}, so the open-source nouveau driver runs the GPU", release = release.as_str()),
            )
            .found(msg!("The NVIDIA driver was not built for the running kernel ({release})", release = release.as_str()))
            .cause(CauseFinding::decided(&MODULE_NOT_LOADED, "module-not-built-for-kernel"))
            .explain(msg!("The driver is installed, but its kernel module exists only for other kernels: after a kernel update DKMS (or akmods) has to build it for the new one, and that failed or never ran (missing headers, a compiler error, or a driver branch too old for this kernel). nouveau took the GPU because nothing else could; do not blacklist it before the module is built."))
            .evidence(msg!("a GPU's driver link points to nouveau"))
            .steps(fixes::rebuild_module(cx.distro))
        }
        (true, _) => c
            .verdict(Verdict::Fail, msg!("the open-source nouveau driver has taken the GPU, so the NVIDIA driver cannot"))
            .found(msg!("The open-source nouveau driver holds the GPU"))
            .cause(CauseFinding::decided(&MODULE_NOT_LOADED, "nouveau-holds-gpu"))
            .evidence(msg!("a GPU's driver link points to nouveau"))
            .steps(fixes::blacklist_nouveau(cx.distro)),
        (false, Some(true)) => c
            .verdict(Verdict::Warn, msg!("nouveau is loaded but not bound to an NVIDIA GPU"))
            .found(msg!("The nouveau driver is loaded (not on an NVIDIA GPU)"))
            .evidence("/proc/modules: nouveau"),
        (false, Some(false)) => c.verdict(Verdict::Pass, msg!("nouveau is not loaded")).found(msg!("nouveau is not in the way")),
        (false, None) => c.verdict(Verdict::Skipped, crate::i18n::Message::new(MISSING)),
    }
}

pub(super) fn secure_boot_and_module(c: Check, cx: &Ctx) -> Check {
    if cx.wsl.is_some() || cx.container.is_some() {
        return c.not_here(msg!("the host"), msg!("decided by the host"));
    }
    let sb =
        cx.v.read_bytes("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c")
            .and_then(|b| parse::secure_boot(&b));
    let efi = cx.v.exists("/sys/firmware/efi");
    let loaded = cx.module("nvidia");
    let log_rejected = match &cx.v.meta().kernel_log {
        KernelLog::Lines(l) => l.iter().any(|x| {
            x.contains("Key was rejected")
                || x.contains("Required key not available")
                || x.contains("module verification failed")
                || x.contains("unsigned module loading is restricted")
        }),
        KernelLog::Unreadable(_) => false,
    };
    let log_readable = matches!(&cx.v.meta().kernel_log, KernelLog::Lines(_));
    match (sb, loaded) {
        // Nothing for Secure Boot to block before a driver is installed.
        (Some(true), Some(false)) if no_driver_installed(cx) => c
            .verdict(Verdict::Info, msg!("Secure Boot is on; no NVIDIA driver is installed yet"))
            .found(msg!("Secure Boot is on (the driver installer will sign the module or ask to enroll a key)"))
            .evidence(msg!("efivars SecureBoot: enabled")),
        (Some(true), Some(false)) => c
            .verdict(
                Verdict::Fail,
                msg!("Secure Boot is on and the NVIDIA module is not loaded: the firmware only accepts signed modules"),
            )
            .found(msg!("Secure Boot keeps the unsigned NVIDIA module out"))
            .cause(CauseFinding::decided(&MODULE_NOT_LOADED, "secure-boot-refused-module"))
            .evidence(msg!("efivars SecureBoot: enabled"))
            .evidence(match (log_rejected, log_readable) {
                (true, _) => msg!("kernel log: module key rejected"),
                (false, true) => msg!("kernel log: no explicit rejection line found"),
                (false, false) => {
                    msg!("kernel log: unknown (not readable); read it with: sudo dmesg | grep -i -e nvidia -e key")
                }
            })
            .steps(fixes::secure_boot(cx.distro)),
        // The firmware variable was not readable, but the kernel says it refused the module.
        (None, Some(false)) if log_rejected => c
            .verdict(Verdict::Fail, msg!("the kernel refused to load an unsigned module (lockdown / Secure Boot)"))
            .found(msg!("Secure Boot keeps the unsigned NVIDIA module out"))
            .cause(CauseFinding::decided(&MODULE_NOT_LOADED, "secure-boot-refused-module"))
            .evidence(match &cx.v.meta().kernel_log {
                KernelLog::Lines(l) => l
                    .iter()
                    .filter(|x| {
                        x.contains("unsigned module") || x.contains("Key was rejected") || x.contains("Required key")
                    })
                    .take(3)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(" | "),
                KernelLog::Unreadable(_) => String::new(),
            })
            .steps(fixes::secure_boot(cx.distro)),
        (Some(true), _) => c
            .verdict(
                Verdict::Pass,
                msg!("Secure Boot is on and the module is loaded (it is signed with a trusted key)"),
            )
            .found(msg!("Secure Boot accepts the NVIDIA module"))
            .evidence(msg!("efivars SecureBoot: enabled")),
        (Some(false), _) => c
            .verdict(Verdict::Pass, msg!("Secure Boot is off"))
            .found(msg!("Secure Boot is off"))
            .evidence(msg!("efivars SecureBoot: disabled")),
        (None, _) if !efi && cx.v.exists("/sys/bus/pci/devices") => c
            .verdict(Verdict::Pass, msg!("legacy BIOS boot: no Secure Boot"))
            .found(msg!("No Secure Boot (legacy BIOS boot)"))
            .evidence(msg!("/sys/firmware/efi: absent")),
        (None, _) => c.verdict(Verdict::Skipped, crate::i18n::Message::new(MISSING)),
    }
}

/// The GPU Operator manages this node's driver (its driver root or validation folder exists) and
/// this is the node, not a container.
fn operator_node(cx: &Ctx) -> bool {
    cx.container.is_none()
        && cx.v.list("/run/nvidia").is_some_and(|l| l.iter().any(|n| n == "driver" || n == "validations"))
}

pub(super) fn module_flavour_fits_gpu(c: Check, cx: &Ctx) -> Check {
    let flavour = cx.v.read("/proc/driver/nvidia/version").and_then(|t| parse::driver_version(&t)).map(|x| x.1);
    let ccs: Vec<(u32, f64)> = cx
        .nvml
        .map(|n| {
            n.inventory
                .gpus
                .iter()
                .filter_map(|g| g.compute_capability.value().and_then(|c| c.parse().ok()).map(|v| (g.index, v)))
                .collect()
        })
        .unwrap_or_default();
    let (Some(open), false) = (flavour, ccs.is_empty()) else {
        return c.verdict(Verdict::Skipped, msg!("needs the module flavour and the GPUs' compute capability"));
    };
    let old: Vec<String> = ccs.iter().filter(|(_, cc)| *cc < 7.5).map(|(i, cc)| format!("GPU {i} ({cc:.1})")).collect();
    let new: Vec<String> =
        ccs.iter().filter(|(_, cc)| *cc >= 10.0).map(|(i, cc)| format!("GPU {i} ({cc:.1})")).collect();
    if open && !old.is_empty() {
        c.verdict(Verdict::Fail, msg!("the open kernel modules do not support GPUs older than Turing: {gpus}", gpus = old.join(", ")))
            .found(msg!("The open kernel module cannot drive this older GPU"))
            .text(msg!("Install the proprietary kernel-module flavour of the driver (Maxwell to Volta: the R580 legacy branch for future updates)."))
    } else if !open && !new.is_empty() {
        c.verdict(Verdict::Fail, msg!("Blackwell GPUs need the open kernel modules: {gpus}", gpus = new.join(", ")))
            .found(msg!("This Blackwell GPU needs the open kernel module"))
            .text(msg!("Install the open kernel-module flavour of the driver (Ubuntu: the nvidia-driver-<branch>-open package; NVIDIA's installer: the -m=kernel-open option)."))
    } else {
        c.verdict(
            Verdict::Pass,
            if open {
                msg!("open kernel module suits every GPU")
            } else {
                msg!("proprietary kernel module suits every GPU")
            },
        )
        .found(msg!("The kernel module flavour suits every GPU"))
    }
}

#[cfg(test)]
mod tests {
    use super::is_core_module;

    #[test]
    fn the_core_module_is_recognised_under_every_packaging_name() {
        for yes in ["nvidia.ko", "nvidia.ko.zst", "nvidia.ko.xz", "nvidia-current.ko", "nvidia-legacy-390xx.ko"] {
            assert!(is_core_module(yes), "{yes}");
        }
        for no in [
            "nvidia-uvm.ko",
            "nvidia_uvm.ko.zst",
            "nvidia-modeset.ko",
            "nvidia-drm.ko",
            "nvidia-current-uvm.ko",
            "nvidia-peermem.ko",
            "nvidia",
            "nouveau.ko",
        ] {
            assert!(!is_core_module(no), "{no}");
        }
    }
}
