//! Driver checks of the driver's user-space side and whether it answers (DRV-08, DRV-06, DRV-09,
//! DRV-HUNG): NVML loading and, when it does not start, why (the NVML differential; a driver the
//! GPU Operator runs from its container), the libraries against the running kernel module, the
//! persistence daemon, and calls into the driver that never return (the driver-hung differential).
//!
//! Sources: the NVML API reference (<https://docs.nvidia.com/deploy/nvml-api/>) for `nvmlInit`
//! and its errors (e.g. the driver/library version mismatch); the `/proc/driver/nvidia/version`
//! line for the running module's version.

use super::{Ctx, MISSING, fixes};
use crate::diagnose::differential::{CauseFinding, DRIVER_HUNG, NVML_DOES_NOT_START, candidate_steps};
use crate::diagnose::parse;
use crate::diagnose::system::{KernelLog, Platform};
use crate::diagnose::{Check, FixStep, Verdict};
use crate::i18n::Message;
use crate::msg;
use crate::telemetry::source::SourceStatus;

pub(super) fn nvml_loads(c: Check, cx: &Ctx) -> Check {
    let Some(n) = cx.nvml else {
        return c.verdict(Verdict::Skipped, crate::i18n::Message::new(MISSING));
    };
    match &n.status {
        SourceStatus::Nvml { library, attempts } if crate::diagnose::ldcache::in_operator_root(library) => {
            let mut c = operator_managed(c, library);
            for a in attempts {
                c = c.evidence(format!("{}: {}", a.path, a.error));
            }
            c.evidence(msg!("{library}: loaded", library = Message::new(library)))
        }
        SourceStatus::Unavailable(no)
            if no.is_not_found()
                && let Some(l) =
                    cx.v.meta().libraries.iter().find(|l| {
                        l.name == "libnvidia-ml.so.1" && crate::diagnose::ldcache::in_operator_root(&l.path)
                    }) =>
        {
            operator_managed(c, &l.path)
        }
        SourceStatus::Nvml { library, attempts } => {
            let mut c = c
                .verdict(
                    Verdict::Pass,
                    msg!("loaded {library}; {n} GPU(s)", library = Message::new(library), n = n.inventory.gpus.len()),
                )
                .found(msg!("The driver's management library (NVML) works"));
            for a in attempts {
                c = c.evidence(format!("{}: {}", a.path, a.error));
            }
            c.evidence(msg!("{library}: loaded", library = Message::new(library)))
        }
        SourceStatus::Unavailable(no) => {
            // (In the reader's language, for the machine the view is from.)
            let (summary, next_step) = no.shown_message(cx.v.meta().platform == Platform::Windows);
            // A decided cause's fact is the summary: the generic one ("not found, so no driver
            // seems to be installed") would contradict it.
            let cause = nvml_cause(cx, no);
            let mut c = c.verdict(Verdict::Fail, cause.as_ref().map_or(summary, |k| k.1.clone()));
            for a in &no.attempts {
                c = c.evidence(format!("{}: {}", a.path, a.error));
            }
            match cause {
                Some((id, _, steps)) => {
                    let name = NVML_DOES_NOT_START.name_of(id);
                    c.found(msg!(
                        "The driver's management library (NVML) does not start: {cause}",
                        cause = Message::new(name)
                    ))
                    .cause(CauseFinding::decided(&NVML_DOES_NOT_START, id))
                    .steps(steps)
                }
                None => c.found(msg!("The driver's management library (NVML) does not start")).text(next_step),
            }
        }
        SourceStatus::Asleep { functions } => c
            .verdict(
                Verdict::Info,
                msg!(
                    "not opened: the GPU is asleep ({state}: {functions})",
                    // Judged by the machine's platform, so a Windows capture reads the same on Linux.
                    state = if cx.v.meta().platform == Platform::Windows {
                        msg!("power state D3")
                    } else {
                        msg!("runtime-suspended")
                    },
                    functions = functions.join(", ")
                ),
            )
            .found(msg!("The GPU is asleep, so NVML was left closed")),
        SourceStatus::Opening | SourceStatus::Demo { .. } | SourceStatus::Replay { .. } => {
            c.verdict(Verdict::Skipped, msg!("not probed"))
        }
    }
}

/// The cause of an NVML that did not start, when the facts decide one of the causes no earlier
/// check names: the cause, the fact, and its fix steps.
fn nvml_cause(cx: &Ctx, no: &crate::telemetry::source::NoGpu) -> Option<(&'static str, Message, Vec<FixStep>)> {
    use crate::telemetry::source::NvmlFailure;
    let not_found = no.is_not_found();
    if cx.v.meta().platform == Platform::Windows {
        let win = cx.v.meta().windows.as_ref()?;
        // nvml.dll is on disk, yet loading it fails with "module not found" (126): a DLL it
        // depends on is missing.
        let Some(dll) = win.nvidia_files.iter().find(|f| f.path.to_ascii_lowercase().ends_with("nvml.dll")) else {
            // None anywhere a driver puts it: no NVIDIA driver.
            return not_found.then(|| {
                (
                    "nvml-not-installed",
                    msg!("no nvml.dll in System32, the NVSMI folder or the driver store"),
                    vec![FixStep::Text(msg!(
                        "Install the NVIDIA driver for this GPU from nvidia.com/drivers (or the laptop maker's support page), then reboot."
                    ))],
                )
            });
        };
        let missing_dependency = no.attempts.iter().any(|a| a.error.contains("os error 126"));
        if !missing_dependency {
            return None;
        }
        let package = if win.dch == Some(false) { msg!(" (the Standard driver package)") } else { Message::default() };
        return Some((
            "nvml-dependency-missing",
            msg!(
                "{path} exists but does not load (error 126: a library it needs is missing){package}",
                path = dll.path.as_str(),
                package = package
            ),
            vec![FixStep::Text(msg!(
                "Reinstall the driver cleanly: download the current DCH driver for this GPU from NVIDIA, run it, choose Custom and tick \"Perform a clean installation\", then restart."
            ))],
        ));
    }
    if matches!(no.failure, Some(NvmlFailure::DependencyMissing)) {
        return Some((
            "nvml-dependency-missing",
            msg!("nvmlInit: a library NVML needs could not be loaded"),
            vec![FixStep::Text(msg!(
                "Reinstall the driver with the distribution's tools (its libraries are incomplete), then reboot."
            ))],
        ));
    }
    if !not_found {
        return None;
    }
    if cx.container.is_some() {
        let caps = cx.env("NVIDIA_DRIVER_CAPABILITIES")?;
        let has = |c: &str| caps.split(',').any(|x| x.trim() == c || x.trim() == "all");
        if has("utility") || !cx.v.meta().device_nodes.iter().any(|n| n.path == "/dev/nvidiactl") {
            return None;
        }
        return Some((
            "nvml-not-injected",
            msg!(
                "NVIDIA_DRIVER_CAPABILITIES={caps}: no utility, so the runtime passes no libnvidia-ml.so.1 in",
                caps = caps
            ),
            vec![
                FixStep::Text(msg!(
                    "Start the container with the utility capability (the runtime then passes NVML and nvidia-smi in):"
                )),
                FixStep::Command(
                    "docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility --rm ubuntu nvidia-smi".into(),
                ),
            ],
        ));
    }
    if cx.v.read("/proc/driver/nvidia/version").is_some() {
        return Some((
            "nvml-off-loader-path",
            msg!(
                "the nvidia kernel module runs (/proc/driver/nvidia/version), but the loader finds no libnvidia-ml.so.1"
            ),
            vec![
                FixStep::Text(msg!(
                    "Find where the driver's libraries are; if they are on disk, refresh the loader's cache, else reinstall the driver's library package (Ubuntu: libnvidia-compute-<branch>):"
                )),
                FixStep::Command("find / -xdev -name 'libnvidia-ml.so*' 2>/dev/null".into()),
                FixStep::Command("sudo ldconfig".into()),
            ],
        ));
    }
    // No library anywhere and no module running: no driver at all (DRV-01 says it first where
    // the machine has an NVIDIA GPU; this is what NVML's own check concludes).
    Some((
        "nvml-not-installed",
        msg!("no libnvidia-ml.so.1 where the loader (or gpu-doctor) looks, and no NVIDIA kernel module runs"),
        fixes::install_driver(cx.distro),
    ))
}

/// A node whose driver the NVIDIA GPU Operator runs from its container: the library is in the
/// operator's driver root, where host programs do not look, by design. Info, not a fault: pods
/// get the driver from the container toolkit.
pub(super) fn operator_managed(c: Check, path: &str) -> Check {
    use crate::diagnose::ldcache::OPERATOR_DRIVER_ROOT;
    c.verdict(
        Verdict::Info,
        msg!("the NVIDIA GPU Operator runs the driver from its container: {path}", path = Message::data(path)),
    )
    .found(msg!("The GPU Operator manages this node's driver"))
    .explain(msg!("The driver's libraries and nvidia-smi live in the operator's driver root ({root}), not on the host's library path: pods get them through the container toolkit, and programs started on the host itself do not find them. That is how the operator works, not a fault.", root = OPERATOR_DRIVER_ROOT))
    .text(msg!("To run nvidia-smi on the node itself:"))
    .cmd(format!("sudo chroot {OPERATOR_DRIVER_ROOT} nvidia-smi"))
}

/// Two parts of the driver that refused each other in this boot's kernel log, as the modules
/// print it: (the first part and its version, the second and its, the line). From the kernel
/// modules' source (NVIDIA/open-gpu-kernel-modules, the same words in the proprietary modules):
/// kernel-open/nvidia-modeset/nvidia-modeset-linux.c prints "Version mismatch: nvidia.ko(%s)
/// nvidia-modeset.ko(%s)" and kernel-open/nvidia-drm/nvidia-drm-drv.c "Version mismatch:
/// nvidia-modeset.ko(%s) nvidia-drm.ko(%s)" when a module loads beside one of another version.
pub(crate) fn mixed_modules(lines: &[String]) -> Option<(String, String, String, String, String)> {
    lines.iter().find_map(|l| {
        let rest = &l[l.find("Version mismatch: ")? + "Version mismatch: ".len()..];
        let mut parts = rest.split_whitespace().filter_map(|w| {
            let (name, ver) = w.split_once('(')?;
            let ver = ver.strip_suffix(')')?;
            (name.ends_with(".ko") && !ver.is_empty()).then(|| (name.to_string(), ver.to_string()))
        });
        let ((a, av), (b, bv)) = (parts.next()?, parts.next()?);
        (av != bv).then(|| (a, av, b, bv, l.trim().to_string()))
    })
}

pub(super) fn module_and_libraries_match(c: Check, cx: &Ctx) -> Check {
    if let KernelLog::Lines(lines) = &cx.v.meta().kernel_log
        && let Some((a, av, b, bv, line)) = mixed_modules(lines)
    {
        let mut steps = fixes::remove_every_driver(cx.distro);
        steps.extend(fixes::install_driver(cx.distro));
        return c
            .verdict(
                Verdict::Fail,
                msg!("the kernel modules are from two driver versions: {a} {av}, {b} {bv}", a = a, av = av, b = b, bv = bv),
            )
            .found(msg!("Two NVIDIA driver installations are mixed"))
            .explain(msg!("The kernel loaded NVIDIA modules of different driver versions (the kernel log says so): parts of two installations are on this machine (a runfile and a package, or two driver branches built by DKMS). The modules refuse each other, and the user-space libraries match one of them at most. A reboot loads the same mix again: remove every installation, then install one driver from one source."))
            .evidence(line)
            .steps(steps);
    }
    let kernel = cx.v.read("/proc/driver/nvidia/version").and_then(|t| parse::driver_version(&t)).map(|x| x.0);
    let lib = cx.v.meta().libraries.iter().find(|l| l.name == "libnvidia-ml.so.1");
    let lib_ver = lib.and_then(|l| parse::library_version(&l.real_path));
    let nvml_says =
        matches!(cx.nvml.map(|n| &n.status), Some(SourceStatus::Unavailable(no)) if no.is_version_mismatch());
    let mismatch_fix = msg!(
        "Reboot (or unload and reload the nvidia kernel modules) so the kernel module and the libraries run the same version."
    );
    let mismatch = msg!("The driver was updated but the old kernel module still runs");
    // Without a reboot, the old module unloads only once nothing holds the device files.
    let reload = |c: Check| {
        match cx.v.meta().holders.as_ref().filter(|h| !h.holders.is_empty()) {
        Some(h) => c
            .text(msg!(
                "Without a reboot: stop the programs that hold the GPU's device files ({names}), then reload the modules:",
                names = h.names()
            ))
            .cmd("sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia"),
        None => c,
    }
    };
    match (&kernel, &lib_ver) {
        (Some(k), Some(l)) if k != l => reload(
            c.verdict(Verdict::Fail, msg!("the driver was updated: kernel module {k}, libraries {l}", k = k, l = l))
                .found(mismatch)
                .explain(msg!("The libraries on disk were updated but the old kernel module is still running."))
                .evidence(format!("/proc/driver/nvidia/version: {k}"))
                .evidence(format!("{}: {l}", lib.map(|x| x.real_path.as_str()).unwrap_or("")))
                .text(mismatch_fix)
                .cmd("sudo reboot"),
        ),
        _ if nvml_says => reload(
            c.verdict(Verdict::Fail, msg!("NVML reports a driver/library version mismatch: the driver was updated"))
                .found(mismatch)
                .evidence("nvmlInit: LIB_RM_VERSION_MISMATCH")
                .text(mismatch_fix)
                .cmd("sudo reboot"),
        ),
        (Some(k), Some(_)) => {
            c.verdict(Verdict::Pass, msg!("both {k}", k = k)).found(msg!("The kernel module and the libraries match"))
        }
        (Some(k), None) => c
            .verdict(Verdict::Info, msg!("kernel module {k}; the library's version is not in its file name", k = k))
            .found(msg!("The library's version is unknown; nothing to compare")),
        (None, _) => c.verdict(
            Verdict::Skipped,
            msg!("no kernel module version to compare (module not loaded, WSL or container)"),
        ),
    }
}

pub(super) fn persistence_daemon(c: Check, cx: &Ctx) -> Check {
    if cx.wsl.is_some() || cx.container.is_some() || cx.module("nvidia") != Some(true) {
        return c.verdict(Verdict::Skipped, msg!("for a Linux host with the driver loaded only"));
    }
    let modes: Vec<(u32, bool)> = cx
        .nvml
        .map(|n| n.facts.iter().filter_map(|f| f.persistence.value().map(|p| (f.index, *p))).collect())
        .unwrap_or_default();
    if !modes.is_empty() {
        let on = modes.iter().filter(|m| m.1).count();
        return if on == modes.len() {
            c.verdict(Verdict::Info, msg!("persistence mode is on: the driver stays initialised between jobs"))
                .found(msg!("Persistence mode is on"))
        } else {
            c.verdict(Verdict::Info, msg!("persistence mode is off on {n} GPU(s): each first use re-initialises the driver (slower start; on headless servers, turn it on)", n = modes.len() - on))
                .found(msg!("Persistence mode is off"))
                .cmd("sudo systemctl enable --now nvidia-persistenced")
        };
    }
    if cx.v.exists("/run/nvidia-persistenced/socket") || cx.v.exists("/var/run/nvidia-persistenced/socket") {
        c.verdict(Verdict::Info, msg!("nvidia-persistenced is running (the driver stays initialised between jobs)"))
            .found(msg!("The persistence daemon is running"))
    } else {
        c.verdict(Verdict::Info, msg!("nvidia-persistenced is not running: each first use re-initialises the driver (slower start; on headless servers, enable it)"))
            .found(msg!("The persistence daemon is not running"))
            .cmd("sudo systemctl enable --now nvidia-persistenced")
    }
}

/// Kernel-log lines that show the driver or the GPU's firmware timing out or failing to start.
fn hang_lines(lines: &[String]) -> Vec<&String> {
    const SIGNS: [&str; 6] = ["Xid", "GSP", "RmInitAdapter failed", "timeout", "Timeout", "not responding"];
    lines.iter().filter(|l| SIGNS.iter().any(|s| l.contains(s))).take(5).collect()
}

/// DRV-HUNG: the probes of NVML and cuInit returned. A call that never returns is a hung or
/// wedged driver (often with Xid 119/120 GSP timeouts), never "no driver": the fix is a reset or
/// reboot and a driver update, not an installation.
pub(super) fn drv_hung(c: Check, cx: &Ctx) -> Check {
    let nvml = cx.nvml.and_then(|n| n.did_not_return);
    let cuda = cx.v.meta().cuda.as_ref().and_then(|p| p.did_not_return);
    if nvml.is_none() && cuda.is_none() {
        if cx.nvml.is_some_and(|n| matches!(n.status, SourceStatus::Asleep { .. })) && cx.v.meta().cuda.is_none() {
            return c.verdict(
                Verdict::Skipped,
                msg!("not called: the GPU is asleep, and calling the driver would wake it"),
            );
        }
        let probed = cx.nvml.is_some_and(|n| !matches!(n.status, SourceStatus::Opening)) || cx.v.meta().cuda.is_some();
        // Only a call that reached a working driver shows that it answers: NVML opening, or
        // cuInit succeeding. Without a driver (no module, no library, a version mismatch) the
        // calls return at once with an error, and that judges nothing.
        let reached = cx.nvml_open() || cx.v.meta().cuda.as_ref().is_some_and(|p| p.init_code == Some(0));
        return if reached {
            c.verdict(Verdict::Pass, msg!("NVML and cuInit returned")).found(msg!("No call into the driver hangs"))
        } else if probed {
            c.verdict(
                Verdict::Skipped,
                msg!("not judged: no call reached a working driver (NVML did not open and cuInit did not succeed)"),
            )
        } else {
            c.verdict(Verdict::Skipped, msg!("the driver was not called"))
        };
    }
    let mut hung = Vec::new();
    if let Some(s) = nvml {
        let call = cx.nvml.and_then(|n| n.hung_call.clone());
        hung.push(match call {
            Some(call) => msg!("NVML did not answer within {s} s ({call} had not returned)", s = s, call = call),
            None => msg!("NVML did not answer within {s} s", s = s),
        });
    }
    if let Some(s) = cuda {
        let call = cx.v.meta().cuda.as_ref().and_then(|p| p.hung_call.clone()).unwrap_or_else(|| "cuInit".into());
        hung.push(msg!("{call} did not return within {s} s", call = call, s = s));
    }
    let mut c = c
        .verdict(Verdict::Fail, Message::join(hung.clone(), &msg!("; ")))
        .found(msg!("The NVIDIA driver is not responding (calls into it do not return)"))
        .explain(
            msg!("A call into the driver that never returns means the driver or the GPU's firmware is wedged, not that it is missing: reinstalling does not help, and every program that touches the GPU (nvidia-smi too) will hang the same way."),
        );
    for h in &hung {
        c = c.evidence(h.clone());
    }
    c = match &cx.v.meta().kernel_log {
        KernelLog::Lines(l) => {
            let signs = hang_lines(l);
            if signs.is_empty() {
                c.evidence(msg!("kernel log: no timeout or Xid line among the NVIDIA lines read"))
            } else {
                signs.into_iter().fold(c, |c, l| c.evidence(msg!("kernel log: {line}", line = l)))
            }
        }
        KernelLog::Unreadable(why) => c.evidence(msg!(
            "kernel log unknown: {why}; read it with: sudo dmesg | grep -i -e nvrm -e xid",
            why = crate::diagnose::system::kernel_log_unreadable(why)
        )),
    };
    // Why it hangs: the kernel log's Xid numbers decide it; without them, the candidates.
    let xids: Vec<u32> = match &cx.v.meta().kernel_log {
        KernelLog::Lines(l) => parse::xids(l).into_iter().map(|x| x.code).collect(),
        KernelLog::Unreadable(_) => Vec::new(),
    };
    let logged =
        |needle: &str| matches!(&cx.v.meta().kernel_log, KernelLog::Lines(l) if l.iter().any(|x| x.contains(needle)));
    let c = if xids.contains(&79) || logged("fallen off the bus") {
        c.cause(CauseFinding::decided(&DRIVER_HUNG, "gpu-gone-from-bus")).found(msg!(
            "The NVIDIA driver is not responding: {cause}",
            cause = Message::new(DRIVER_HUNG.name_of("gpu-gone-from-bus"))
        ))
    } else if xids.iter().any(|x| [119, 120].contains(x)) || logged("RPC from GSP") {
        c.cause(CauseFinding::decided(&DRIVER_HUNG, "gsp-firmware-timeout")).found(msg!(
            "The NVIDIA driver is not responding: {cause}",
            cause = Message::new(DRIVER_HUNG.name_of("gsp-firmware-timeout"))
        ))
    } else if let Some(stuck) =
        cx.v.meta()
            .holders
            .as_ref()
            .map(|h| h.holders.iter().filter(|p| p.stuck()).collect::<Vec<_>>())
            .filter(|s| !s.is_empty())
    {
        let c = stuck.iter().fold(c, |c, p| {
            c.evidence(msg!(
                "{name} (pid {pid}) is in uninterruptible sleep (D) holding {files}",
                name = Message::data(&p.name),
                pid = p.pid,
                files = p.files.join(", ")
            ))
        });
        c.cause(CauseFinding::decided(&DRIVER_HUNG, "process-stuck-in-driver")).found(msg!(
            "The NVIDIA driver is not responding: {cause}",
            cause = Message::new(DRIVER_HUNG.name_of("process-stuck-in-driver"))
        ))
    } else if cx.v.meta().holders.as_ref().is_some_and(|h| h.complete()) {
        // Every process's open files were read and none waits inside the driver.
        let left = ["gsp-firmware-timeout", "gpu-gone-from-bus"];
        c.evidence(msg!("no process holding the GPU's device files waits inside the driver (state D)"))
            .cause(CauseFinding::candidates(&DRIVER_HUNG, &left))
            .steps(candidate_steps(&DRIVER_HUNG, &left))
    } else {
        c.cause(CauseFinding::candidates(&DRIVER_HUNG, &["process-stuck-in-driver", "gsp-firmware-timeout"]))
            .steps(candidate_steps(&DRIVER_HUNG, &["process-stuck-in-driver", "gsp-firmware-timeout"]))
    };
    c.text(msg!("Save the kernel log for the bug report before anything else:"))
        .cmd("sudo dmesg --ctime > nvidia-hang-dmesg.txt")
        .text(msg!("Stop the programs using the GPU, then try a GPU reset (not possible while a display runs on it):"))
        .cmd("sudo nvidia-smi --gpu-reset")
        .text(msg!("If the reset fails or hangs too, reboot. If it happens again, update the driver: firmware (GSP) timeouts, Xid 119 and 120, are usually fixed in newer drivers; attach the saved log when reporting it."))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 53, item 20: the modules' own words for two driver versions loaded side by side.
    #[test]
    fn mixed_modules_are_read_from_the_kernel_log() {
        let lines: Vec<String> = [
            "nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms  418.152.00",
            "nvidia-modeset: Version mismatch: nvidia.ko(418.152.00) nvidia-modeset.ko(430.64)",
        ]
        .map(String::from)
        .to_vec();
        let (a, av, b, bv, _) = mixed_modules(&lines).unwrap();
        assert_eq!(
            (a.as_str(), av.as_str(), b.as_str(), bv.as_str()),
            ("nvidia.ko", "418.152.00", "nvidia-modeset.ko", "430.64")
        );
        let drm = ["[drm:nv_drm_init [nvidia_drm]] *ERROR* [nvidia-drm] Version mismatch: nvidia-modeset.ko(418.152.00) nvidia-drm.ko(430.64)".to_string()];
        assert_eq!(mixed_modules(&drm).map(|m| m.2), Some("nvidia-drm.ko".to_string()));
        // The same version on both sides, or no module names, is no mix.
        assert!(mixed_modules(&["Version mismatch: nvidia.ko(1) nvidia-modeset.ko(1)".to_string()]).is_none());
        assert!(mixed_modules(&["Version mismatch: something else".to_string()]).is_none());
    }
}
