//! WSL checks (WSL-*): WSL version and GPU paravirtualisation (`/dev/dxg`), CUDA coming from the
//! Windows driver (`/usr/lib/wsl/lib`), and software rendering.
//!
//! Source: NVIDIA's CUDA on WSL User Guide (<https://docs.nvidia.com/cuda/wsl-user-guide>).

use super::Ctx;
use crate::diagnose::differential::{CauseFinding, NO_GPU_IN_WSL, candidate_steps};
use crate::diagnose::ldcache::WSL_LIB_DIR;
use crate::diagnose::system::LibraryFound;
use crate::diagnose::{Check, Verdict};
use crate::i18n::Message;
use crate::msg;

pub(super) fn wsl_gpu_paravirtualisation(c: Check, cx: &Ctx) -> Check {
    match cx.wsl {
        None => c.not_here("WSL", msg!("not WSL")),
        Some(1) => c
            .verdict(Verdict::Fail, msg!("WSL1 has no GPU support"))
            .found(msg!("WSL1 cannot use the GPU"))
            .text(msg!("Convert the distribution to WSL2: in PowerShell on Windows, run wsl --set-version with its name and 2 (wsl -l -v lists the names).")),
        Some(_) if cx.v.meta().device_nodes.iter().any(|n| n.path == "/dev/dxg") || cx.v.exists("/dev/dxg") => {
            c.verdict(Verdict::Pass, msg!("WSL2 with /dev/dxg (the GPU is paravirtualised from Windows)"))
                .found(msg!("WSL2 shares the GPU from Windows"))
        }
        Some(_) => {
            // What is known inside WSL: its kernel (Microsoft's is "…-microsoft-standard-WSL2"),
            // and whether the Windows driver's libraries reached /usr/lib/wsl/lib (a driver new
            // enough for WSL puts them there). The Windows build is seen only from Windows.
            let release = cx.v.read("/proc/sys/kernel/osrelease").unwrap_or_default();
            let custom = !release.trim().is_empty() && !release.contains("microsoft-standard");
            let driver_shares = cx.v.meta().libraries.iter().any(|l| l.path.starts_with(WSL_LIB_DIR));
            let mut ids = Vec::new();
            if custom {
                ids.push("wsl-custom-kernel");
            }
            ids.extend(["windows-build-without-gpu-in-wsl", "wsl-outdated"]);
            if !driver_shares {
                ids.push("windows-driver-without-wsl");
            }
            c.verdict(Verdict::Fail, msg!("WSL2 without /dev/dxg: no GPU is shared into WSL"))
                .found(msg!("Windows shares no GPU into WSL"))
                .cause(CauseFinding::candidates(&NO_GPU_IN_WSL, &ids))
                .text(msg!("Update Windows and WSL (wsl --update in PowerShell) and install the current NVIDIA Windows driver; then run wsl --shutdown in PowerShell and start WSL again."))
                .text(msg!("Which of these it is (the commands run from WSL; the .exe ones start Windows' own tools):"))
                .steps(candidate_steps(&NO_GPU_IN_WSL, &ids))
        }
    }
}

pub(super) fn wsl_cuda_from_windows_driver(c: Check, cx: &Ctx) -> Check {
    if cx.wsl != Some(2) {
        return if cx.wsl.is_none() {
            c.not_here("WSL", msg!("WSL2 only"))
        } else {
            c.verdict(Verdict::Skipped, msg!("WSL2 only"))
        };
    }
    let libs = &cx.v.meta().libraries;
    let from_windows = |l: &LibraryFound| l.path.starts_with(WSL_LIB_DIR) || l.real_path.starts_with(WSL_LIB_DIR);
    let mut c = c;
    for l in libs {
        c = c.evidence(msg!(
            "{path} ({via}) -> {real}",
            path = l.path,
            via = crate::i18n::Message::new(&l.via),
            real = l.real_path
        ));
    }
    // What a normal program (nvidia-smi, PyTorch, pynvml) loads: the first candidate on the
    // loader's path, not gpu-doctor's own fallback.
    let first = |name: &str| libs.iter().find(|l| l.name == name && l.via != NOT_ON_PATH);
    let mut linux = Vec::new();
    let mut off_path = Vec::new();
    let mut missing = Vec::new();
    for name in ["libcuda.so.1", "libnvidia-ml.so.1"] {
        match first(name) {
            Some(l) if from_windows(l) => {}
            Some(l) => linux.push(l),
            None if libs.iter().any(|l| l.name == name && l.via == NOT_ON_PATH) => off_path.push(name),
            None if name == "libcuda.so.1" || !libs.is_empty() => missing.push(name),
            None => {}
        }
    }
    if let Some(l) = linux.first() {
        let names = linux.iter().map(|l| format!("{} ({})", l.path, l.real_path)).collect::<Vec<_>>().join(", ");
        return c
            .verdict(Verdict::Fail, msg!("programs load {names} before the Windows driver's {dir}: a Linux NVIDIA driver is installed inside WSL", names = names, dir = WSL_LIB_DIR))
            .found(msg!("A Linux NVIDIA driver inside WSL shadows the Windows one"))
            .explain(msg!("Inside WSL the driver must come from Windows ({dir}); a Linux driver package puts its own {lib} in front, and nvidia-smi, PyTorch and pynvml then fail.", dir = WSL_LIB_DIR, lib = l.name))
            .steps(super::fixes::remove_linux_driver_in_wsl(cx.distro))
            .text(msg!("Then run wsl --shutdown in PowerShell on Windows and start WSL again."));
    }
    if !off_path.is_empty() {
        return c
            .verdict(Verdict::Fail, msg!("{libs} exists only in {dir}, which is not on the loader's path", libs = Message::join(off_path.iter().map(|l| Message::data(*l)), &msg!(" and ")), dir = WSL_LIB_DIR))
            .found(msg!("{dir} is missing from the library path", dir = WSL_LIB_DIR))
            .explain(msg!("WSL normally registers the Windows driver's folder in /etc/ld.so.conf.d/ld.wsl.conf; without it programs do not find CUDA."))
            .cmd(format!("echo {WSL_LIB_DIR} | sudo tee /etc/ld.so.conf.d/ld.wsl.conf"))
            .cmd("sudo ldconfig");
    }
    if !missing.is_empty() {
        return c
            .verdict(Verdict::Fail, msg!("{libs} is missing", libs = Message::join(missing.iter().map(|l| Message::data(*l)), &msg!(" and "))))
            .found(msg!("The CUDA library from the Windows driver is missing"))
            .text(msg!("Install or update the NVIDIA driver on Windows (it provides /usr/lib/wsl/lib); then run wsl --shutdown in PowerShell and start WSL again."));
    }
    c.verdict(Verdict::Pass, msg!("libcuda.so.1 and libnvidia-ml.so.1 come from {dir}", dir = WSL_LIB_DIR))
        .found(msg!("CUDA comes from the Windows driver"))
}

/// `via` of a candidate the loader does not search.
const NOT_ON_PATH: &str = crate::tr_key!("not on the loader's path");

pub(super) fn wsl_graphics(c: Check, cx: &Ctx) -> Check {
    if cx.wsl.is_none() {
        return c.not_here("WSL", msg!("not WSL"));
    }
    match &cx.v.meta().renderer {
        None => c.verdict(Verdict::Skipped, msg!("renderer unknown (run the check from the app to include it)")),
        Some(r) if r.to_ascii_lowercase().contains("llvmpipe") => c
            .verdict(Verdict::Warn, msg!("this app renders on the CPU ({renderer})", renderer = r))
            .found(msg!("Graphics fall back to software rendering on the CPU"))
            .explain(msg!(
                "CUDA and graphics are separate questions: CUDA can work while OpenGL falls back to software rendering."
            ))
            .text(msg!(
                "Try the Direct3D 12 Mesa driver for this shell, and update WSL (wsl --update) and the Windows driver:"
            ))
            .cmd("export GALLIUM_DRIVER=d3d12"),
        Some(r) => c
            .verdict(Verdict::Pass, msg!("hardware rendering: {renderer}", renderer = r))
            .found(msg!("Graphics render on the GPU")),
    }
}
