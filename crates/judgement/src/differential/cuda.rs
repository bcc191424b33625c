//! The symptoms of CUDA and of the GPU at work: CUDA not starting (CUDA-INIT) and GPU errors in the
//! kernel log (RT-XID, by NVIDIA's Xid catalogue), each with its known causes.

use super::{CauseDef, Differential, XID_CATALOGUE};

/// The symptom "CUDA does not start": `cuInit` (or counting the devices after it) fails. Its
/// causes cover the `CUresult` codes the initialisation and device calls return (CUDA Driver API,
/// "Data types used by CUDA driver": <https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html>)
/// and what on a machine produces each.
pub const CUDA_DOES_NOT_START: Differential = Differential {
    id: "cuda-does-not-start",
    checks: &["CUDA-INIT"],
    symptom: crate::tr_key!("CUDA does not start"),
    causes: &[
        CauseDef {
            id: "uvm-not-loaded",
            name: crate::tr_key!("the nvidia-uvm module or its device file /dev/nvidia-uvm is missing"),
            sources: &["https://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html"],
            confirm: "grep nvidia_uvm /proc/modules; ls -l /dev/nvidia-uvm",
        },
        CauseDef {
            id: "uvm-stale-after-resume",
            name: crate::tr_key!("the machine was suspended and resumed, and the nvidia-uvm module did not recover"),
            sources: &[
                "https://github.com/ollama/ollama/issues/2934",
                "https://download.nvidia.com/XFree86/Linux-x86_64/580.95.05/README/powermanagement.html",
            ],
            confirm: "sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm",
        },
        CauseDef {
            id: "gpu-not-answering",
            name: crate::tr_key!("the GPU stopped answering the driver (a hung GPU or its GSP firmware)"),
            sources: &[
                "https://github.com/awslabs/amazon-eks-ami/issues/1523",
                "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",
            ],
            confirm: "nvidia-smi --query-gpu=index,temperature.gpu,memory.used --format=csv",
        },
        CauseDef {
            id: "driver-could-not-start-gpu",
            name: crate::tr_key!("the driver could not start the GPU (RmInitAdapter failed)"),
            sources: &["https://github.com/NVIDIA/open-gpu-kernel-modules/issues/876"],
            confirm: "sudo dmesg | grep -i -e RmInitAdapter -e Xid",
        },
        CauseDef {
            id: "uvm-hmm-failure",
            name: crate::tr_key!("the nvidia-uvm module's HMM support fails on this kernel"),
            sources: &[
                "https://github.com/NVIDIA/open-gpu-kernel-modules/issues/947",
                "https://github.com/NVIDIA/open-gpu-kernel-modules/issues/901",
                "https://github.com/ollama/ollama/issues/11593",
            ],
            confirm: "sudo modprobe -r nvidia_uvm && sudo modprobe nvidia_uvm uvm_disable_hmm=1",
        },
        CauseDef {
            id: "module-library-mismatch",
            name: crate::tr_key!("the driver was updated but the old kernel module still runs"),
            sources: &["https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html"],
            confirm: "nvidia-smi",
        },
        CauseDef {
            id: "forward-compat-mismatch",
            name: crate::tr_key!(
                "a forward-compatibility libcuda (cuda-compat) is loaded that this driver or GPU cannot use"
            ),
            sources: &["https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html"],
            confirm: "ldconfig -p | grep libcuda.so.1; echo \"$LD_LIBRARY_PATH\"",
        },
        CauseDef {
            id: "stub-libcuda",
            name: crate::tr_key!("the CUDA toolkit's stub libcuda was loaded instead of the driver's"),
            sources: &["https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html"],
            confirm: "echo \"$LD_LIBRARY_PATH\" | tr : '\\n' | grep -i stubs",
        },
        CauseDef {
            id: "compute-mode-blocks",
            name: crate::tr_key!(
                "the GPU's compute mode lets no further program on it (Prohibited, or Exclusive-process and taken)"
            ),
            sources: &["https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceEnumvs.html"],
            confirm: "nvidia-smi --query-gpu=index,compute_mode --format=csv",
        },
        CauseDef {
            id: "fabric-manager-not-running",
            name: crate::tr_key!("the NVSwitch fabric manager is not running (HGX and DGX systems)"),
            sources: &["https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html"],
            confirm: "systemctl status nvidia-fabricmanager",
        },
        CauseDef {
            id: "fabric-not-ready",
            name: crate::tr_key!(
                "the fabric manager runs but the NVSwitch fabric is not ready (its version differs from the driver's, or an NVSwitch or NVLink fault)"
            ),
            sources: &["https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html"],
            confirm: "journalctl -u nvidia-fabricmanager -n 50 --no-pager",
        },
        CauseDef {
            id: "gpus-hidden",
            name: crate::tr_key!("CUDA_VISIBLE_DEVICES (or MIG without instances) hides every GPU"),
            sources: &["https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars"],
            confirm: "echo \"CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES\"; nvidia-smi -L",
        },
        CauseDef {
            id: "container-blocks-device",
            name: crate::tr_key!("the container runtime or a security policy keeps the GPU's device files closed"),
            sources: &["https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/troubleshooting.html"],
            confirm: "ls -l /dev/nvidia*; cat /proc/self/cgroup",
        },
        CauseDef {
            id: "gpu-memory-full",
            name: crate::tr_key!("the GPU's memory is full, so not even the driver's context fits"),
            sources: &["https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html"],
            confirm: "nvidia-smi --query-compute-apps=pid,used_memory --format=csv",
        },
    ],
};

/// The symptom "the kernel log shows GPU errors" (RT-XID): its causes are what NVIDIA's Xid
/// catalogue implicates ([`crate::knowledge::xid::Part`]); the Xid numbers decide which.
pub const GPU_ERRORS_LOGGED: Differential = Differential {
    id: "gpu-errors-logged",
    checks: &["RT-XID"],
    symptom: crate::tr_key!("The kernel log shows GPU errors"),
    causes: &[
        CauseDef {
            id: "xid-application-fault",
            name: crate::tr_key!("a program's fault on the GPU, not the GPU's"),
            sources: &[XID_CATALOGUE],
            confirm: "gpu-doctor-cli smoke",
        },
        CauseDef {
            id: "xid-driver-firmware-fault",
            name: crate::tr_key!("the driver or the firmware it runs on the GPU (GSP, PMU) failed"),
            sources: &[XID_CATALOGUE, "https://github.com/NVIDIA/open-gpu-kernel-modules/issues/876"],
            confirm: "nvidia-smi -q | grep -i -e 'Driver Version' -e 'GSP Firmware'",
        },
        CauseDef {
            id: "xid-memory-error",
            name: crate::tr_key!("the GPU's memory has errors"),
            sources: &[XID_CATALOGUE],
            confirm: "nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT",
        },
        CauseDef {
            id: "xid-pcie-link-lost",
            name: crate::tr_key!("the PCIe link failed (slot, riser, cable or power)"),
            sources: &[XID_CATALOGUE, "https://github.com/Cyridd/cmpunlocker/issues/4"],
            confirm: "sudo lspci -vv -d 10de: | grep -e LnkSta -e UESta",
        },
        CauseDef {
            id: "xid-nvlink-error",
            name: crate::tr_key!("an NVLink connection between GPUs failed"),
            sources: &[XID_CATALOGUE],
            confirm: "nvidia-smi nvlink -e",
        },
        CauseDef {
            id: "xid-board-power",
            name: crate::tr_key!("the board's auxiliary power is not connected"),
            sources: &[XID_CATALOGUE],
            confirm: "nvidia-smi -q -d POWER",
        },
        CauseDef {
            id: "xid-gpu-stopped",
            name: crate::tr_key!("the GPU stopped processing (the catalogue names no part)"),
            sources: &[XID_CATALOGUE],
            confirm: "sudo dmesg | grep -i -e NVRM -e Xid",
        },
        CauseDef {
            id: "xid-vgpu-mismatch",
            name: crate::tr_key!("the virtual GPU's guest and host drivers do not match"),
            sources: &[XID_CATALOGUE],
            confirm: "nvidia-smi -q | grep -i -e 'Driver Version' -e vGPU",
        },
    ],
};
