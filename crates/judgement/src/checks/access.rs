//! Permission checks (PERM-*): the GPU device files exist (`/dev/nvidiactl`, `/dev/nvidia-uvm`,
//! `/dev/nvidiaN`) and this user can read and write them. Linux only; WSL uses `/dev/dxg`.
//!
//! Sources: NVIDIA's nvidia-modprobe (creates the device files) and the driver's
//! `NVreg_DeviceFileMode` / `ModifyDeviceFiles` parameters (`/proc/driver/nvidia/params`).

use super::{Ctx, is_gpu_node};
use crate::diagnose::differential::{CauseFinding, DEVICE_FILES_MISSING};
use crate::diagnose::system::Platform;
use crate::diagnose::system::{DeviceNode, UserInfo};
use crate::diagnose::{Check, Verdict};
use crate::i18n::Message;
use crate::msg;

/// Can `user` read and write `node`?
fn can_open(user: &UserInfo, n: &DeviceNode) -> bool {
    if user.uid == 0 {
        return true;
    }
    let bits = if user.uid == n.uid {
        n.mode >> 6
    } else if user.groups.iter().any(|(g, _)| *g == n.gid) {
        n.mode >> 3
    } else {
        n.mode
    } & 0o7;
    bits & 0o6 == 0o6
}

/// The scheduler job this runs in (Slurm, PBS, LSF), by its variable.
fn scheduler_job(cx: &Ctx) -> Option<&'static str> {
    super::env::scheduler(cx).map(|(name, _)| name)
}

/// In a scheduler's job, the GPU device files its device limits refuse ("Operation not
/// permitted"): the GPUs the job was not given. 0 outside a job.
pub(super) fn job_refused_gpus(cx: &Ctx) -> usize {
    if scheduler_job(cx).is_none() {
        return 0;
    }
    cx.v.meta()
        .device_nodes
        .iter()
        .filter(|n| is_gpu_node(&n.path) && n.open.as_deref().is_some_and(|o| o.ends_with("(os error 1)")))
        .count()
}

/// PERM-02 when the modes allow this user but the kernel refused to open some files: the
/// errno and the job around it decide the cause ([`DEVICE_OPEN_REFUSED`]); a scheduler that
/// limits a job to the GPUs it allocated is doing its job, not failing.
fn refused_open(c: Check, cx: &Ctx, relevant: &[&DeviceNode], refused: &[String]) -> Check {
    use crate::diagnose::differential::{DEVICE_OPEN_REFUSED as D, candidate_steps};
    let eperm = refused.iter().all(|r| r.ends_with("(os error 1)"));
    let eacces = refused.iter().all(|r| r.ends_with("(os error 13)"));
    let gpus: Vec<&&DeviceNode> = relevant.iter().filter(|n| is_gpu_node(&n.path)).collect();
    // The GPUs this process was not refused (opened, or not tried).
    let opened = gpus.iter().filter(|n| !n.open.as_deref().is_some_and(|o| o.ends_with("(os error 1)"))).count();
    let c = refused.iter().take(8).fold(c, |c, r| c.evidence(Message::data(r.as_str())));
    let decided = |c: Check, id: &str| {
        c.found(msg!("The kernel refuses to open the GPU device files: {cause}", cause = Message::new(D.name_of(id))))
            .cause(CauseFinding::decided(&D, id))
    };
    match scheduler_job(cx) {
        Some(scheduler) if eperm && opened > 0 => {
            return c
                .verdict(
                    Verdict::Info,
                    msg!(
                        "this {scheduler} job may open {n} of the {m} GPUs; its device limits refuse the others, as configured",
                        scheduler = scheduler,
                        n = opened,
                        m = gpus.len()
                    ),
                )
                .found(msg!("The scheduler gave this job {n} GPU(s)", n = opened))
                .explain(msg!("Schedulers that confine jobs to their GPUs (Slurm's ConstrainDevices, and the like) let a job open only the device files of the GPUs it was allocated: the others are refused with \"Operation not permitted\". Programs in the job see just these GPUs, numbered from 0. To use more, ask for more in the job request."));
        }
        Some(scheduler) if eperm => {
            let c = decided(
                c.verdict(
                    Verdict::Fail,
                    msg!(
                        "this {scheduler} job may open none of the {m} GPUs: its device limits refuse them all",
                        scheduler = scheduler,
                        m = gpus.len()
                    ),
                ),
                "job-given-no-gpu",
            );
            return if scheduler == "Slurm" {
                c.text(msg!("Ask for GPUs in the job request (sbatch/srun), for example:"))
                    .cmd("srun --gres=gpu:1 --pty bash")
            } else {
                c.text(msg!(
                    "Ask for GPUs in the job request (the scheduler's GPU resource, e.g. ngpus= for PBS, -gpu for LSF)."
                ))
            };
        }
        _ => {}
    }
    let c = c.verdict(
        Verdict::Fail,
        msg!("the file modes allow it, but opening fails: {files}", files = refused.join(", ")),
    );
    if eacces {
        return decided(c, "security-module-denies")
            .text(msg!("Find the denial in the kernel's audit messages, then allow the GPU device files in the policy (or run with a profile that allows them):"))
            .cmd(D.causes[2].confirm);
    }
    if eperm {
        return decided(c, "device-rules-exclude-gpu")
            .text(msg!("See the device rules of the unit this runs in, then allow the GPU there (DeviceAllow=/dev/nvidiactl rw and the /dev/nvidia* files, or start it outside that unit):"))
            .cmd(D.causes[1].confirm);
    }
    let ids = ["device-rules-exclude-gpu", "security-module-denies"];
    c.found(msg!("The kernel refuses to open the GPU device files"))
        .cause(CauseFinding::candidates(&D, &ids))
        .explain(msg!("Something other than the file permissions blocks the GPU: a container's or a systemd service's device rules (DeviceAllow=), or SELinux/AppArmor."))
        .steps(candidate_steps(&D, &ids))
}

pub(super) fn device_files_present(c: Check, cx: &Ctx) -> Check {
    if cx.wsl.is_some() {
        return c.not_here(msg!("native Linux"), msg!("WSL uses /dev/dxg instead"));
    }
    if cx.v.meta().platform == Platform::Windows {
        return c.not_here("Linux", msg!("Linux only"));
    }
    let nodes = &cx.v.meta().device_nodes;
    let has = |p: &str| nodes.iter().any(|n| n.path == p);
    let gpus = nodes.iter().filter(|n| is_gpu_node(&n.path)).count();
    let expected =
        cx.nvml.map(|n| n.inventory.gpus.len()).filter(|n| *n > 0).or(cx.pci.as_ref().map(Vec::len)).unwrap_or(0);
    let mut c = c;
    for n in nodes {
        let numbers = format!("{},{} mode {:o} uid {} gid {}", n.major, n.minor, n.mode, n.uid, n.gid);
        c = c.evidence(crate::msg!(
            "{label}: {value}",
            label = n.path,
            value = if n.char_device {
                Message::data(format!("char {numbers}"))
            } else {
                crate::msg!("{label}: {value}", label = crate::msg!("not a char device"), value = numbers)
            }
        ));
    }
    if !has("/dev/nvidiactl") || gpus == 0 {
        let c = c.verdict(Verdict::Fail, msg!("/dev/nvidiactl or /dev/nvidiaN is missing"));
        // With the module loaded and bound to every GPU (its probe took them), what should have
        // made the files did not: told not to (the ModifyDeviceFiles option), or nothing ran (udev
        // rule, nvidia-modprobe). A GPU without the driver bound (lost, or held by another
        // driver) is the earlier checks' cause instead.
        let bound =
            cx.pci.as_ref().is_some_and(|p| !p.is_empty() && p.iter().all(|g| g.driver.as_deref() == Some("nvidia")));
        let loaded = cx.container.is_none() && cx.module("nvidia") == Some(true) && bound;
        let disabled =
            cx.v.read("/proc/driver/nvidia/params")
                .and_then(|p| {
                    p.lines().find(|l| l.trim_start().starts_with("ModifyDeviceFiles:")).map(|l| l.trim().to_string())
                })
                .filter(|l| l.ends_with(": 0"));
        return match (loaded, disabled) {
            (true, Some(line)) => c
                .found(msg!("The GPU device files are missing: {cause}", cause = Message::new(DEVICE_FILES_MISSING.name_of("device-files-disabled"))))
                .cause(CauseFinding::decided(&DEVICE_FILES_MISSING, "device-files-disabled"))
                .evidence(msg!("/proc/driver/nvidia/params: {line}", line = Message::data(line.as_str())))
                .text(msg!("Remove the NVreg_ModifyDeviceFiles=0 option (grep -r ModifyDeviceFiles /etc/modprobe.d), or create the files the way this setup intends (nvidia-modprobe, as root):"))
                .cmd("sudo nvidia-modprobe -u -c=0"),
            (true, None) => c
                .found(msg!("The GPU device files are missing: {cause}", cause = Message::new(DEVICE_FILES_MISSING.name_of("device-files-not-created"))))
                .cause(CauseFinding::decided(&DEVICE_FILES_MISSING, "device-files-not-created"))
                .evidence(msg!("/proc/modules: nvidia is loaded, and every NVIDIA GPU is bound to it"))
                .text(msg!("Create them now with NVIDIA's helper (it makes /dev/nvidiactl, /dev/nvidia0 and /dev/nvidia-uvm):"))
                .cmd("sudo nvidia-modprobe -u -c=0")
                .text(msg!("For them to appear at every boot, the driver package's udev rule (or nvidia-modprobe, setuid root) must be installed and name this driver's device files; reinstall the package, or report it to the packager if its rule is stale.")),
            _ => c
                .found(msg!("The GPU device files are missing"))
                .text(msg!("Create them (loading the driver creates them too):"))
                .cmd("sudo nvidia-modprobe")
                .text(msg!("If the module loads but the files stay missing, check the udev rules and ModifyDeviceFiles in /proc/driver/nvidia/params.")),
        };
    }
    if !has("/dev/nvidia-uvm") {
        return c
            .verdict(Verdict::Fail, msg!("/dev/nvidia-uvm is missing: CUDA cannot start (torch.cuda.is_available() is False, 'CUDA unknown error')"))
            .found(msg!("/dev/nvidia-uvm is missing, so CUDA cannot start"))
            .cause(CauseFinding::decided(&DEVICE_FILES_MISSING, "uvm-device-file-missing"))
            .cmd("sudo modprobe nvidia-uvm && sudo nvidia-modprobe -u -c=0");
    }
    if expected > gpus {
        return c
            .verdict(
                Verdict::Warn,
                msg!("{gpus} /dev/nvidiaN node(s) for {expected} GPU(s)", gpus = gpus, expected = expected),
            )
            .found(msg!("Some GPUs have no device file"));
    }
    c.verdict(Verdict::Pass, msg!("/dev/nvidiactl, /dev/nvidia-uvm and {gpus} GPU node(s)", gpus = gpus))
        .found(msg!("The GPU device files are present"))
}

pub(super) fn device_files_open(c: Check, cx: &Ctx) -> Check {
    if cx.wsl.is_some() || cx.v.meta().platform == Platform::Windows {
        return c.not_here(
            if cx.wsl.is_some() { msg!("native Linux") } else { Message::data("Linux") },
            msg!("Linux device files only"),
        );
    }
    let m = cx.v.meta();
    let relevant: Vec<&DeviceNode> = m
        .device_nodes
        .iter()
        .filter(|n| n.path == "/dev/nvidiactl" || n.path == "/dev/nvidia-uvm" || is_gpu_node(&n.path))
        .collect();
    if relevant.is_empty() {
        return c.verdict(Verdict::Skipped, msg!("no device files to check"));
    }
    let denied: Vec<&&DeviceNode> = relevant.iter().filter(|n| !can_open(&m.user, n)).collect();
    let who = m.user.name.clone().unwrap_or_else(|| format!("uid {}", m.user.uid));
    let c = c.evidence(msg!(
        "user {who}, groups {groups}",
        who = who,
        groups = m.user.groups.iter().map(|(g, n)| format!("{n}({g})")).collect::<Vec<_>>().join(", ")
    ));
    // The mode allows it, but opening failed: the kernel refused (device rules, a security module).
    let refused: Vec<String> = relevant
        .iter()
        .filter(|n| can_open(&m.user, n))
        .filter_map(|n| n.open.as_deref().filter(|o| !o.starts_with("ok")).map(|o| format!("{}: {o}", n.path)))
        .collect();
    // An I/O error (EIO), "no such device or address" (ENXIO) or "no such device" (ENODEV) is
    // the driver saying the GPU behind the file could not be initialised (RmInitAdapter failed:
    // its firmware, a GPU off the bus, power, PCIe), not an access rule: those refuse with
    // "Operation not permitted" (a cgroup's device rules) or "Permission denied" (SELinux,
    // AppArmor).
    let not_started = |o: &str| ["(os error 5)", "(os error 6)", "(os error 19)"].iter().any(|e| o.ends_with(e));
    if denied.is_empty() && !refused.is_empty() && refused.iter().all(|r| not_started(r)) {
        return c
            .verdict(Verdict::Fail, msg!("opening the GPU's device file fails with a device error: {files}", files = refused.join(", ")))
            .found(msg!("The GPU did not start: its device file answers with a device error"))
            .explain(msg!("The file modes allow it and nothing refused this user: the driver could not initialise the GPU behind the file (its firmware, a GPU that fell off the bus, power or PCIe). The kernel log says why."))
            .text(msg!("Read what the driver said when it tried to start the GPU:"))
            .cmd("sudo dmesg | grep -i -e NVRM -e xid");
    }
    if denied.is_empty() && !refused.is_empty() {
        return refused_open(c, cx, &relevant, &refused);
    }
    if denied.is_empty() {
        let tried = relevant.iter().filter(|n| n.open.is_some()).count();
        return c
            .verdict(
                Verdict::Pass,
                if tried > 0 {
                    msg!(
                        "{who} can read and write all {n} of them (opened and closed each)",
                        who = who,
                        n = relevant.len()
                    )
                } else {
                    msg!("{who} can read and write all {n} of them", who = who, n = relevant.len())
                },
            )
            .found(msg!("This user can open the GPU device files"));
    }
    let group = denied.iter().find_map(|n| n.group.clone().or_else(|| (n.gid != 0).then(|| n.gid.to_string())));
    let mut c = c
        .verdict(
            Verdict::Fail,
            msg!(
                "{who} cannot open {files}",
                who = who,
                files = Message::join(
                    denied.iter().map(|n| msg!("{path} (mode {mode})", path = n.path, mode = format!("{:o}", n.mode))),
                    &msg!(", ")
                )
            ),
        )
        .found(msg!("{who} may not open the GPU device files", who = who));
    c = match group {
        Some(g) => c
            .explain(msg!("The device files belong to group '{g}' and are not open to others.", g = g))
            .cmd(format!("sudo usermod -aG {g} {}", m.user.name.as_deref().unwrap_or("$USER")))
            .text(msg!("Then log out and back in.")),
        None => c.text(msg!(
            "Ask an administrator to restore the driver's default mode 0666 (NVreg_DeviceFileMode) for /dev/nvidia*."
        )),
    };
    c
}
