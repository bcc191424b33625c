//! WSL checks (WSL-*): WSL version and GPU paravirtualisation (`/dev/dxg`), CUDA coming from the
//! Windows driver (`/usr/lib/wsl/lib`), and software rendering.
//!
//! Source: NVIDIA's CUDA on WSL User Guide (<https://docs.nvidia.com/cuda/wsl-user-guide>).

use super::Ctx;
use crate::diagnose::{Check, Verdict};

pub(super) fn wsl_01(c: Check, cx: &Ctx) -> Check {
    match cx.wsl {
        None => c.not_here("WSL", "not WSL"),
        Some(1) => c
            .verdict(Verdict::Fail, "WSL1 has no GPU support")
            .found("WSL1 cannot use the GPU")
            .text("Convert the distribution to WSL2: in PowerShell on Windows, run wsl --set-version with its name and 2 (wsl -l -v lists the names)."),
        Some(_) if cx.v.meta().device_nodes.iter().any(|n| n.path == "/dev/dxg") || cx.v.exists("/dev/dxg") => {
            c.verdict(Verdict::Pass, "WSL2 with /dev/dxg (the GPU is paravirtualised from Windows)")
                .found("WSL2 shares the GPU from Windows")
        }
        Some(_) => c
            .verdict(Verdict::Fail, "WSL2 without /dev/dxg: no GPU is shared into WSL")
            .found("Windows shares no GPU into WSL")
            .text("Update Windows and WSL (wsl --update in PowerShell) and install the current NVIDIA Windows driver; then run wsl --shutdown in PowerShell and start WSL again."),
    }
}

pub(super) fn wsl_02(c: Check, cx: &Ctx) -> Check {
    if cx.wsl != Some(2) {
        return if cx.wsl.is_none() {
            c.not_here("WSL", "WSL2 only")
        } else {
            c.verdict(Verdict::Skipped, "WSL2 only")
        };
    }
    match cx.v.meta().libraries.iter().find(|l| l.name == "libcuda.so.1") {
        Some(l) if l.path.starts_with("/usr/lib/wsl/lib") => c.verdict(Verdict::Pass, format!("libcuda.so.1 from {}", l.path)).found("CUDA comes from the Windows driver"),
        Some(l) => c
            .verdict(Verdict::Fail, format!("libcuda.so.1 resolves to {}: a Linux NVIDIA driver is installed inside WSL", l.path))
            .found("A Linux NVIDIA driver inside WSL shadows the Windows one")
            .explain("Inside WSL the driver must come from Windows; a Linux driver package shadows it and breaks CUDA.")
            .evidence(format!("{} -> {}", l.path, l.real_path))
            .text("Remove the Linux driver packages (the CUDA toolkit can stay):")
            .cmd("sudo apt-get remove --purge 'nvidia-driver-*' 'libnvidia-*' 'nvidia-utils-*' cuda-drivers")
            .text("Then run wsl --shutdown in PowerShell on Windows and start WSL again."),
        None => c
            .verdict(Verdict::Fail, "libcuda.so.1 is missing")
            .found("The CUDA library from the Windows driver is missing")
            .text("Install or update the NVIDIA driver on Windows (it provides /usr/lib/wsl/lib); then run wsl --shutdown in PowerShell and start WSL again."),
    }
}

pub(super) fn wsl_08(c: Check, cx: &Ctx) -> Check {
    if cx.wsl.is_none() {
        return c.not_here("WSL", "not WSL");
    }
    match &cx.v.meta().renderer {
        None => c.verdict(Verdict::Skipped, "renderer unknown (run the check from the app to include it)"),
        Some(r) if r.to_ascii_lowercase().contains("llvmpipe") => c
            .verdict(Verdict::Warn, format!("this app renders on the CPU ({r})"))
            .found("Graphics fall back to software rendering on the CPU")
            .explain("CUDA and graphics are separate questions: CUDA can work while OpenGL falls back to software rendering.")
            .text("Try the Direct3D 12 Mesa driver for this shell, and update WSL (wsl --update) and the Windows driver:")
            .cmd("export GALLIUM_DRIVER=d3d12"),
        Some(r) => c.verdict(Verdict::Pass, format!("hardware rendering: {r}")).found("Graphics render on the GPU"),
    }
}
