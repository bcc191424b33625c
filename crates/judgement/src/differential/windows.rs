//! The symptoms on the Windows side: Windows sharing no GPU into WSL (WSL-01) and Device Manager
//! reporting a problem with the NVIDIA GPU (WIN-ADAPTER), each with its known causes.

use super::{CauseDef, Differential};

/// The symptom "Windows shares no GPU into WSL" (WSL-01: WSL2 without `/dev/dxg`).
pub const NO_GPU_IN_WSL: Differential = Differential {
    id: "no-gpu-in-wsl",
    checks: &["WSL-01"],
    symptom: crate::tr_key!("Windows shares no GPU into WSL"),
    causes: &[
        CauseDef {
            id: "wsl-custom-kernel",
            name: crate::tr_key!("WSL runs a custom kernel, which may lack the dxgkrnl driver that makes /dev/dxg"),
            sources: &["https://learn.microsoft.com/en-us/windows/wsl/tutorials/gpu-compute"],
            confirm: "uname -r",
        },
        CauseDef {
            id: "windows-build-without-gpu-in-wsl",
            name: crate::tr_key!(
                "this Windows build does not share GPUs into WSL (too old, or a build where it broke)"
            ),
            sources: &[
                "https://docs.nvidia.com/cuda/wsl-user-guide/index.html",
                "https://github.com/microsoft/WSL/issues/6809",
            ],
            confirm: "cmd.exe /c ver",
        },
        CauseDef {
            id: "wsl-outdated",
            name: crate::tr_key!("WSL itself is outdated (the current WSL brings GPU support)"),
            sources: &["https://learn.microsoft.com/en-us/windows/wsl/tutorials/gpu-compute"],
            confirm: "wsl.exe --version",
        },
        CauseDef {
            id: "windows-driver-without-wsl",
            name: crate::tr_key!("the Windows NVIDIA driver is too old to share CUDA into WSL"),
            sources: &["https://docs.nvidia.com/cuda/wsl-user-guide/index.html"],
            confirm: "cmd.exe /c nvidia-smi",
        },
    ],
};

/// Microsoft Learn: the Device Manager problem codes.
const DEVICE_MANAGER_CODES: &str =
    "https://learn.microsoft.com/en-us/windows-hardware/drivers/install/device-manager-error-messages";

/// The symptom "Device Manager reports a problem with the NVIDIA GPU" (WIN-ADAPTER with a problem
/// code other than 22, disabled, and 28, no driver: those two name their cause themselves).
pub const WINDOWS_STOPPED_GPU: Differential = Differential {
    id: "windows-stopped-gpu",
    checks: &["WIN-ADAPTER"],
    symptom: crate::tr_key!("Device Manager reports a problem with the NVIDIA GPU"),
    causes: &[
        CauseDef {
            id: "driver-install-damaged",
            name: crate::tr_key!("the driver install is damaged or mixed with an older one"),
            sources: &[
                DEVICE_MANAGER_CODES,
                "https://learn.microsoft.com/en-us/windows-hardware/drivers/install/cm-prob-failed-post-start",
                "https://github.com/seerge/g-helper/issues/5943",
            ],
            confirm: "pnputil /enum-drivers /class Display",
        },
        CauseDef {
            id: "hybrid-gpu-switched-off",
            name: crate::tr_key!(
                "the laptop's GPU switch (an 'Eco' or integrated-only mode of the maker's tool or firmware) turned the NVIDIA GPU off and the driver could not start it again"
            ),
            sources: &[
                "https://github.com/seerge/g-helper/issues/4581",
                "https://github.com/seerge/g-helper/issues/5943",
            ],
            confirm: "pnputil /enum-devices /class Display /problem",
        },
        CauseDef {
            id: "gpu-passthrough-guest",
            name: crate::tr_key!(
                "this Windows runs in a virtual machine and the host did not hand the GPU over cleanly (its framebuffer or driver held the card, or the card's ROM could not be read)"
            ),
            sources: &[
                "https://github.com/QaidVoid/Complete-Single-GPU-Passthrough/issues/12",
                "https://nvidia.custhelp.com/app/answers/detail/a_id/5173",
            ],
            confirm: "sudo dmesg | grep -iE 'vfio|efifb|simplefb|can.t reserve'",
        },
        CauseDef {
            id: "geforce-vm-driver-too-old",
            name: crate::tr_key!("a GeForce driver older than R465, which stops the GPU inside a virtual machine"),
            sources: &["https://nvidia.custhelp.com/app/answers/detail/a_id/5173"],
            confirm: "powershell -NoProfile -Command \"Get-CimInstance Win32_VideoController | Select-Object Name,DriverVersion\"",
        },
        CauseDef {
            id: "firmware-pci-settings",
            name: crate::tr_key!(
                "a firmware setting keeps the GPU from starting: its memory windows do not fit ('Above 4G decoding' off, Code 12) or DMA remapping (VT-d, IOMMU) is on for a card whose driver cannot work with it"
            ),
            sources: &[
                "https://learn.microsoft.com/en-us/windows-hardware/drivers/install/cm-prob-normal-conflict",
                "https://github.com/dartraiden/NVIDIA-patcher/issues/145",
            ],
            confirm: "msinfo32",
        },
        CauseDef {
            id: "driver-signature-refused",
            name: crate::tr_key!(
                "Windows refused the driver's signature (a modified or test-signed driver on a machine that enforces signatures)"
            ),
            sources: &["https://learn.microsoft.com/en-us/windows-hardware/drivers/install/cm-prob-unsigned-driver"],
            confirm: "bcdedit /enum",
        },
        CauseDef {
            id: "gpu-not-connected",
            name: crate::tr_key!(
                "the GPU is no longer connected (an external GPU unplugged, or a laptop that switched it off)"
            ),
            sources: &["https://learn.microsoft.com/en-us/windows-hardware/drivers/install/cm-prob-phantom"],
            confirm: "pnputil /enum-devices /connected /class Display",
        },
        CauseDef {
            id: "gpu-hardware-fault",
            name: crate::tr_key!("the card itself, its power cables or its slot is failing"),
            sources: &[
                "https://learn.microsoft.com/en-us/windows-hardware/drivers/install/cm-prob-failed-post-start",
                "https://github.com/arutar/FrankenDriver/issues/77",
                "https://github.com/dartraiden/NVIDIA-patcher/issues/531",
            ],
            confirm: "powershell -NoProfile -Command \"Get-WinEvent -FilterHashtable @{LogName='System';ProviderName='nvlddmkm'} -MaxEvents 20\"",
        },
    ],
};
