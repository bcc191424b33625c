//! Container checks (CONT-*): whether this runs in a container (Docker, Podman, Kubernetes) and
//! whether GPUs were passed into it.
//!
//! Sources: the NVIDIA Container Toolkit documentation (installation, "Specialized Configurations
//! with Docker", Container Device Interface support); Kubernetes "Schedule GPUs"; podman-run(1).

use super::{Ctx, is_gpu_node};
use crate::diagnose::differential::{CONTAINER_LOST_GPU, CauseFinding, NO_GPU_IN_CONTAINER, candidate_steps};
use crate::diagnose::{Check, Verdict};
use crate::i18n::Message;
use crate::msg;

pub(super) fn in_container(c: Check, cx: &Ctx) -> Check {
    match &cx.container {
        Some(k) => c.verdict(Verdict::Info, msg!("yes: {kind}", kind = k)).found(msg!("This runs in a {kind} container", kind = k)).explain(msg!("Process lists from NVML show host PIDs; inside a container they match nothing here unless it runs with --pid=host.")),
        None => c.verdict(Verdict::Pass, msg!("no container detected")).found(msg!("Not in a container")),
    }
}

pub(super) fn gpus_passed_into_container(c: Check, cx: &Ctx) -> Check {
    let Some(kind) = &cx.container else {
        return c.not_here(msg!("containers"), msg!("not in a container"));
    };
    let nodes = &cx.v.meta().device_nodes;
    let ctl = nodes.iter().any(|n| n.path == "/dev/nvidiactl");
    let gpus = nodes.iter().filter(|n| is_gpu_node(&n.path)).count();
    let visible = cx.env("NVIDIA_VISIBLE_DEVICES");
    let c = c
        .evidence(Message::join(
            [Message::data("NVIDIA_VISIBLE_DEVICES="), visible.map_or_else(|| msg!("(unset)"), Message::data)],
            &Message::default(),
        ))
        .evidence(if ctl {
            msg!("/dev/nvidiactl present, {gpus} /dev/nvidiaN node(s)", gpus = gpus)
        } else {
            msg!("/dev/nvidiactl missing, {gpus} /dev/nvidiaN node(s)", gpus = gpus)
        });
    // Listed but refused by the kernel (EPERM, whatever the mode): the container's device rules
    // (cgroup) no longer include the GPU.
    let refused: Vec<String> = nodes
        .iter()
        .filter(|n| n.path == "/dev/nvidiactl" || is_gpu_node(&n.path))
        .filter_map(|n| n.open.as_deref().filter(|o| is_eperm(o)).map(|o| format!("{}: {o}", n.path)))
        .collect();
    // A scheduler's job confined to the GPUs it was given (inside a container too: Slurm with
    // pyxis/enroot): nvidiactl opens, some GPUs do, the others refuse. Not lost rules.
    let job_refused = super::access::job_refused_gpus(cx);
    let job_confined =
        job_refused > 0 && gpus > job_refused && !refused.iter().any(|r| r.starts_with("/dev/nvidiactl:"));
    if ctl && gpus > 0 && !refused.is_empty() && !job_confined {
        let mut c = c
            .verdict(Verdict::Fail, msg!("the device files are here but the kernel refuses to open them ({n} of them)", n = refused.len()))
            .found(msg!("This container lost access to the GPU"))
            .explain(msg!("The GPU was passed in when the container started, but its device permissions no longer include it: opening /dev/nvidia* fails with \"Operation not permitted\" whatever the file mode. A known cause is systemctl daemon-reload (or a package update that runs it) on the host when Docker uses the systemd cgroup driver; nvidia-smi then says \"Failed to initialize NVML: Unknown Error\". Commands inside the container cannot repair it."));
        for r in refused.iter().take(4) {
            c = c.evidence(r.clone());
        }
        // Why the rules changed is decided on the host, not in here: the causes, each with the
        // command to run on the host (or node) that confirms or rules it out.
        let left: &[&str] = if kind == "Kubernetes" {
            &["cgroup-rewritten-by-systemd", "kubelet-static-cpu-manager", "toolkit-no-cgroups"]
        } else {
            &["cgroup-rewritten-by-systemd", "toolkit-no-cgroups"]
        };
        let c = c.cause(CauseFinding::candidates(&CONTAINER_LOST_GPU, left));
        let c = match kind.as_str() {
            "Kubernetes" => c.text(msg!("Delete the pod so that it is created again with the GPU (the node's device plugin passes it in afresh).")),
            _ => c
                .text(msg!("On the host, restart (or recreate) this container; its GPU access comes back when it starts again. To keep it from happening again, NVIDIA's documented workaround is to create the /dev/char links on the host:"))
                .cmd("sudo nvidia-ctk system create-dev-char-symlinks --create-all")
                .text(msg!("or to pass the device files explicitly (--device /dev/nvidiactl --device /dev/nvidia0 ...) when starting the container.")),
        };
        return c
            .text(msg!("Why its device rules changed is seen on the host (or node), not in here; run these there:"))
            .steps(candidate_steps(&CONTAINER_LOST_GPU, left));
    }
    if ctl && gpus > 0 {
        return c
            .verdict(Verdict::Pass, msg!("{gpus} GPU device node(s) present", gpus = gpus))
            .found(msg!("The container received the GPU"));
    }
    let why = match visible.map(str::trim) {
        Some("none") => {
            msg!("NVIDIA_VISIBLE_DEVICES=none asks the NVIDIA runtime for the driver libraries but no GPU.")
        }
        Some("void") | Some("") => {
            msg!("NVIDIA_VISIBLE_DEVICES is empty or 'void': the NVIDIA runtime injects nothing.")
        }
        _ => msg!(
            "NVIDIA_VISIBLE_DEVICES alone proves nothing (CUDA base images set it to 'all'); the container must be started with GPUs so the runtime injects the device nodes and driver libraries."
        ),
    };
    let c = c.verdict(Verdict::Fail, msg!("no GPU was passed into this {kind} container", kind = kind));
    // The machine has none to pass: its PCI bus is visible and shows no NVIDIA GPU, and no NVIDIA
    // kernel module runs on it.
    if let Some(others) = no_nvidia_gpu_on_the_bus(cx) {
        // Issue 38, item 5: the host has no GPU to pass, so the container toolkit is not the fix.
        let c = c
            .found(msg!("The machine this container runs on has no NVIDIA GPU, so there is none to pass in"))
            .cause(CauseFinding::decided(&NO_GPU_IN_CONTAINER, "node-has-no-nvidia-gpu"))
            .evidence(msg!(
                "PCI display devices: {list}",
                list = if others.is_empty() { msg!("none") } else { Message::data(others.join(", ")) }
            ))
            .evidence(msg!("/proc/driver/nvidia: absent"));
        return if others.is_empty() {
            c.text(msg!("This machine (often a virtual machine or cloud instance without a GPU) has no GPU at all. Run the job on a machine (Kubernetes: a node) with an NVIDIA GPU, or give this one a GPU (a GPU instance type, or PCI passthrough on its host); the container then needs the NVIDIA Container Toolkit there."))
        } else {
            c.text(msg!("The NVIDIA runtime and CUDA serve NVIDIA GPUs only. Run the job on a machine (Kubernetes: a node) that has one, or use the stack of this GPU's maker (AMD: ROCm and its Kubernetes device plugin)."))
        };
    }
    if kind == "Apptainer" {
        // Apptainer binds the host's /dev unless told to contain it: no device file means a
        // minimal /dev.
        return c
            .found(msg!("No GPU was passed into this container: {cause}", cause = Message::new(NO_GPU_IN_CONTAINER.name_of("apptainer-minimal-dev"))))
            .cause(CauseFinding::decided(&NO_GPU_IN_CONTAINER, "apptainer-minimal-dev"))
            .text(msg!("Run it with --nv and without --contain or --containall (or bind the device files with --bind /dev/nvidia0,/dev/nvidiactl,/dev/nvidia-uvm); old Singularity releases (2.4) dropped them with -c --nv: update it."));
    }
    let allocated = visible.map(str::trim).is_some_and(|v| {
        v.split(',').all(|d| {
            d.starts_with("GPU-") || d.starts_with("MIG-") || (!d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        })
    });
    if kind == "Kubernetes" && allocated {
        // The device plugin gave the pod GPUs (their ids are in its environment), yet nothing of
        // the driver reached it: the runtime that injects them did not run.
        return c
            .found(msg!("No GPU was passed into this container: {cause}", cause = Message::new(NO_GPU_IN_CONTAINER.name_of("nvidia-runtime-not-used"))))
            .cause(CauseFinding::decided(&NO_GPU_IN_CONTAINER, "nvidia-runtime-not-used"))
            .explain(msg!("NVIDIA_VISIBLE_DEVICES holds the ids of GPUs the device plugin allocated to this pod, but no device file and no driver library reached it: NVIDIA's runtime, which injects them, did not run the container."))
            .text(msg!("Add runtimeClassName: nvidia to the pod spec (the GPU Operator creates that runtime class), or make nvidia the default runtime of the node's container runtime. The classes this cluster has:"))
            .cmd("kubectl get runtimeclass");
    }
    let left: &[&str] = if kind == "Kubernetes" {
        &["nvidia-runtime-not-used", "gpus-not-requested"]
    } else {
        &["gpus-not-requested", "nvidia-runtime-not-used"]
    };
    // The fix passes GPUs in whichever of the two it is; the questions that tell them apart come
    // after it.
    let c = c
        .found(msg!("No GPU was passed into this container"))
        .cause(CauseFinding::candidates(&NO_GPU_IN_CONTAINER, left))
        .explain(why);
    let c = match kind.as_str() {
        "Kubernetes" => c.text(msg!("Request GPUs in the pod spec: resources: { limits: { nvidia.com/gpu: 1 } }; the node needs the NVIDIA device plugin or GPU Operator.")),
        "Podman" => c
            .text(msg!("On the host, with the NVIDIA Container Toolkit installed, describe the GPUs for Podman:"))
            .cmd("sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml")
            .text(msg!("Then start the container with --device nvidia.com/gpu=all; to try it:"))
            .cmd("podman run --rm --device nvidia.com/gpu=all ubuntu nvidia-smi"),
        _ => c
            .text(msg!("On the host, install the NVIDIA Container Toolkit and register it with Docker:"))
            .cmd("sudo nvidia-ctk runtime configure --runtime=docker")
            .cmd("sudo systemctl restart docker")
            .text(msg!("Then start the container with --gpus all; to try it:"))
            .cmd("docker run --gpus all --rm ubuntu nvidia-smi"),
    };
    c.text(msg!("Which of the two it is:")).steps(candidate_steps(&NO_GPU_IN_CONTAINER, left))
}

/// Whether a device node's open result is "Operation not permitted" (EPERM, os error 1): refused by
/// the cgroup device controller or a security module, not by the file's mode (that is EACCES).
pub(super) fn is_eperm(open: &str) -> bool {
    open.contains("os error 1)") || open.contains("Operation not permitted")
}

/// When this machine has no NVIDIA GPU: its PCI bus is visible (at least one function listed),
/// none of its GPUs is NVIDIA's, and no NVIDIA kernel module answers in /proc. The other display
/// devices found ("0000:03:00.0 (AMD)").
pub(super) fn no_nvidia_gpu_on_the_bus(cx: &Ctx) -> Option<Vec<String>> {
    let base = "/sys/bus/pci/devices";
    let functions = cx.v.list(base)?;
    if functions.is_empty()
        || cx.pci.as_ref().is_none_or(|p| !p.is_empty())
        || cx.v.exists("/proc/driver/nvidia/version")
    {
        return None;
    }
    let hex = |s: Option<String>| s.and_then(|s| u32::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok());
    let others = functions
        .iter()
        .take(4096)
        .filter(|a| hex(cx.v.read(&format!("{base}/{a}/class"))).is_some_and(|c| c >> 16 == 0x03))
        .map(|a| {
            let maker = match hex(cx.v.read(&format!("{base}/{a}/vendor"))) {
                Some(0x1002) => "AMD",
                Some(0x8086) => "Intel",
                Some(0x1a03) => "ASPEED",
                Some(0x1414) => "Microsoft",
                _ => "other",
            };
            format!("{a} ({maker})")
        })
        .take(8)
        .collect();
    Some(others)
}
