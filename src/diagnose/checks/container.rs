//! Container checks (CONT-*): whether this runs in a container (Docker, Podman, Kubernetes) and
//! whether GPUs were passed into it.
//!
//! Sources: the NVIDIA Container Toolkit documentation (installation, "Specialized Configurations
//! with Docker", Container Device Interface support); Kubernetes "Schedule GPUs"; podman-run(1).

use super::{Ctx, is_gpu_node};
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
    if ctl && gpus > 0 && !refused.is_empty() {
        let mut c = c
            .verdict(Verdict::Fail, msg!("the device files are here but the kernel refuses to open them ({n} of them)", n = refused.len()))
            .found(msg!("This container lost access to the GPU"))
            .explain(msg!("The GPU was passed in when the container started, but its device permissions no longer include it: opening /dev/nvidia* fails with \"Operation not permitted\" whatever the file mode. A known cause is systemctl daemon-reload (or a package update that runs it) on the host when Docker uses the systemd cgroup driver; nvidia-smi then says \"Failed to initialize NVML: Unknown Error\". Commands inside the container cannot repair it."));
        for r in refused.iter().take(4) {
            c = c.evidence(r.clone());
        }
        return match kind.as_str() {
            "Kubernetes" => c.text(msg!("Delete the pod so that it is created again with the GPU (the node's device plugin passes it in afresh).")),
            _ => c
                .text(msg!("On the host, restart (or recreate) this container; its GPU access comes back when it starts again. To keep it from happening again, NVIDIA's documented workaround is to create the /dev/char links on the host:"))
                .cmd("sudo nvidia-ctk system create-dev-char-symlinks --create-all")
                .text(msg!("or to pass the device files explicitly (--device /dev/nvidiactl --device /dev/nvidia0 ...) when starting the container.")),
        };
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
    let c = c
        .verdict(Verdict::Fail, msg!("no GPU was passed into this {kind} container", kind = kind))
        .found(msg!("No GPU was passed into this container"))
        .explain(why);
    match kind.as_str() {
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
    }
}

/// Whether a device node's open result is "Operation not permitted" (EPERM, os error 1): refused by
/// the cgroup device controller or a security module, not by the file's mode (that is EACCES).
pub(super) fn is_eperm(open: &str) -> bool {
    open.contains("os error 1)") || open.contains("Operation not permitted")
}
