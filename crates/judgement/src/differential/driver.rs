//! The symptoms of the GPU on the bus and of its driver: no NVIDIA GPU on the PCI bus (HW-01), the
//! driver not managing a GPU that is there (HW-03), the kernel module not loaded (DRV-01, DRV-04,
//! DRV-05), NVML not starting (DRV-08) and the driver not answering (DRV-HUNG), each with its
//! known causes.

use super::{CauseDef, Differential, XID_CATALOGUE};

/// The symptom "the NVIDIA kernel module is not loaded" (on a machine with an NVIDIA GPU on its
/// PCI bus, outside WSL and containers): DRV-01, DRV-04 when nouveau runs the GPU instead, DRV-05
/// when Secure Boot keeps the module out.
pub const MODULE_NOT_LOADED: Differential = Differential {
    id: "module-not-loaded",
    checks: &["DRV-01", "DRV-04", "DRV-05"],
    symptom: crate::tr_key!("The NVIDIA kernel module is not loaded"),
    causes: &[
        CauseDef {
            id: "driver-not-installed",
            name: crate::tr_key!("no NVIDIA driver is installed"),
            sources: &["https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/index.html"],
            confirm: "ldconfig -p | grep libnvidia-ml; find /lib/modules -name 'nvidia*.ko*'",
        },
        CauseDef {
            id: "module-not-built-for-kernel",
            name: crate::tr_key!("the driver's kernel module was not built for the running kernel"),
            sources: &[
                "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/index.html",
                "https://rpmfusion.org/Howto/NVIDIA",
                "https://github.com/negativo17/nvidia-driver/issues/39",
            ],
            confirm: "find /lib/modules/$(uname -r) -name 'nvidia*.ko*'",
        },
        CauseDef {
            id: "secure-boot-refused-module",
            name: crate::tr_key!("Secure Boot refused the unsigned module"),
            sources: &[
                "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/index.html",
                "https://man7.org/linux/man-pages/man7/kernel_lockdown.7.html",
            ],
            confirm: "sudo modprobe nvidia",
        },
        CauseDef {
            id: "operator-driver-not-ready",
            name: crate::tr_key!(
                "the NVIDIA GPU Operator manages this node's driver and its driver pod has not loaded the module (still starting, or failing to build it for this kernel)"
            ),
            sources: &[
                "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/troubleshooting.html",
                "https://github.com/NVIDIA/gpu-operator/issues/751",
                "https://github.com/NVIDIA/gpu-operator/issues/258",
            ],
            confirm: "kubectl get pods -A -o wide -l app=nvidia-driver-daemonset",
        },
        CauseDef {
            id: "nouveau-holds-gpu",
            name: crate::tr_key!("the open-source nouveau driver took the GPU first"),
            sources: &[
                "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/index.html",
                "https://github.com/negativo17/nvidia-driver/issues/73",
            ],
            confirm: "lspci -nnk -d 10de:",
        },
        CauseDef {
            id: "open-module-unsupported-gpu",
            name: crate::tr_key!("the open kernel module does not support this GPU (it needs Turing or newer)"),
            sources: &[
                "https://github.com/NVIDIA/open-gpu-kernel-modules#compatible-gpus",
                "https://github.com/pop-os/cosmic-epoch/issues/1886",
            ],
            confirm: "sudo dmesg | grep -i 'not supported by open'",
        },
        CauseDef {
            id: "gpu-needs-legacy-branch",
            name: crate::tr_key!(
                "the installed driver release dropped this GPU (it needs NVIDIA's legacy branch), so the module unloads"
            ),
            sources: &["https://www.nvidia.com/en-us/drivers/unix/legacy-gpu/"],
            confirm: "sudo dmesg | grep -i 'legacy'",
        },
        CauseDef {
            id: "module-blacklisted",
            name: crate::tr_key!("the module is blacklisted (modprobe.d or the kernel command line)"),
            sources: &["https://man7.org/linux/man-pages/man5/modprobe.d.5.html"],
            confirm: "grep -rs -e nvidia /etc/modprobe.d /usr/lib/modprobe.d /proc/cmdline",
        },
        CauseDef {
            id: "module-load-error",
            name: crate::tr_key!("loading the module fails with an error of its own"),
            sources: &["https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/index.html"],
            confirm: "sudo modprobe nvidia",
        },
    ],
};

/// The symptom "NVML does not start" (DRV-08) where no earlier check explains it: the driver
/// answers to no management call. Its causes follow NVML's initialisation return codes
/// (<https://docs.nvidia.com/deploy/nvml-api/group__nvmlInitializationAndCleanup.html>) and what
/// on a machine produces them; a module that is not loaded, a version mismatch, a refused device
/// file, a lost GPU and a container's device rules are the earlier checks' causes.
pub const NVML_DOES_NOT_START: Differential = Differential {
    id: "nvml-does-not-start",
    checks: &["DRV-08"],
    symptom: crate::tr_key!("The driver's management library (NVML) does not start"),
    causes: &[
        CauseDef {
            id: "nvml-dependency-missing",
            name: crate::tr_key!(
                "the NVML library is there but will not load: a library it needs is missing (a damaged driver install; on Windows often the Standard driver package)"
            ),
            sources: &[NVML_INIT, "https://github.com/trexminer/T-Rex/issues/1244"],
            confirm: "nvidia-smi",
        },
        CauseDef {
            id: "nvml-off-loader-path",
            name: crate::tr_key!(
                "the driver runs, but its libraries are not where the loader looks (ldconfig not run, or a partial install)"
            ),
            sources: &[NVML_INIT, "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/index.html"],
            confirm: "ldconfig -p | grep libnvidia-ml",
        },
        CauseDef {
            id: "nvml-not-injected",
            name: crate::tr_key!(
                "the container runtime did not pass NVML in (NVIDIA_DRIVER_CAPABILITIES lacks utility)"
            ),
            sources: &[
                "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html",
            ],
            confirm: "echo \"$NVIDIA_DRIVER_CAPABILITIES\"",
        },
        CauseDef {
            id: "nvml-not-installed",
            name: crate::tr_key!("no NVML library is installed anywhere (no NVIDIA driver)"),
            sources: &[NVML_INIT],
            confirm: "nvidia-smi",
        },
    ],
};

/// The symptom "the driver does not manage a GPU on the PCI bus" (HW-03): the module runs but
/// did not take (or start) the GPU. The driver says why in the kernel log, in messages of its own
/// source (`kernel-open/nvidia/nv.c`, `nv-pci.c` in NVIDIA's open-gpu-kernel-modules).
pub const GPU_NOT_INITIALISED: Differential = Differential {
    id: "gpu-not-initialised",
    checks: &["HW-03"],
    symptom: crate::tr_key!("The driver does not manage a GPU on the PCI bus"),
    causes: &[
        CauseDef {
            id: "gpu-bar-unassigned",
            name: crate::tr_key!(
                "the firmware (BIOS) gave the GPU no room in the PCI address space (a BAR is not assigned)"
            ),
            sources: &["https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/kernel-open/nvidia/nv-pci.c"],
            confirm: "sudo dmesg | grep -i -e 'region assigned' -e 'BAR'",
        },
        CauseDef {
            id: "gpu-vbios-unreadable",
            name: crate::tr_key!(
                "the driver could not read the GPU's video BIOS (on laptops and in virtual machines the system firmware has to provide it)"
            ),
            sources: &[
                "https://github.com/Bumblebee-Project/Bumblebee/issues/111",
                "https://github.com/Bumblebee-Project/Bumblebee/issues/204",
            ],
            confirm: "sudo dmesg | grep -i vbios",
        },
        CauseDef {
            id: "gpu-firmware-boot-failed",
            name: crate::tr_key!("the GPU's own firmware did not finish booting (GFW_BOOT)"),
            sources: &["https://github.com/NVIDIA/open-gpu-kernel-modules/issues/789"],
            confirm: "sudo dmesg | grep -i gfw",
        },
        CauseDef {
            id: "open-module-cannot-start-gsp",
            name: crate::tr_key!("the open kernel module could not start the GSP firmware on this GPU"),
            sources: &["https://github.com/NVIDIA/open-gpu-kernel-modules/issues/116"],
            confirm: "cat /proc/driver/nvidia/version",
        },
        CauseDef {
            id: "legacy-gpu-not-driven",
            name: crate::tr_key!("this driver release no longer supports the GPU: it needs NVIDIA's legacy branch"),
            sources: &["https://www.nvidia.com/en-us/drivers/unix/legacy-gpu/"],
            confirm: "sudo dmesg | grep -i legacy",
        },
        CauseDef {
            id: "another-driver-owns-gpu",
            name: crate::tr_key!("another driver (nouveau, vfio-pci, a framebuffer driver) took the GPU first"),
            sources: &["https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/kernel-open/nvidia/nv.c"],
            confirm: "lspci -nnk -d 10de:",
        },
        CauseDef {
            id: "driver-release-cannot-start-gpu",
            name: crate::tr_key!("this driver release cannot start this GPU (RmInitAdapter failed)"),
            sources: &["https://github.com/NVIDIA/open-gpu-kernel-modules/issues/876"],
            confirm: "sudo dmesg | grep -i -e RmInitAdapter -e NVRM",
        },
    ],
};

/// NVML's initialisation and its return codes.
const NVML_INIT: &str = "https://docs.nvidia.com/deploy/nvml-api/group__nvmlInitializationAndCleanup.html";

/// The symptom "the NVIDIA driver is not responding" (DRV-HUNG): a call into it did not return.
pub const DRIVER_HUNG: Differential = Differential {
    id: "driver-hung",
    checks: &["DRV-HUNG"],
    symptom: crate::tr_key!("The NVIDIA driver is not responding (calls into it do not return)"),
    causes: &[
        CauseDef {
            id: "gsp-firmware-timeout",
            name: crate::tr_key!("the GPU's firmware (GSP) stopped answering the driver"),
            sources: &[XID_CATALOGUE, "https://github.com/NVIDIA/open-gpu-kernel-modules/issues/446"],
            confirm: "sudo dmesg | grep -i -e 'RPC from GSP' -e 'Xid'",
        },
        CauseDef {
            id: "gpu-gone-from-bus",
            name: crate::tr_key!("the GPU fell off the PCIe bus while the driver waited for it"),
            sources: &[XID_CATALOGUE],
            confirm: "sudo dmesg | grep -i -e 'fallen off the bus' -e 'Xid.*79'",
        },
        CauseDef {
            id: "process-stuck-in-driver",
            name: crate::tr_key!("a process is stuck inside the driver (uninterruptible sleep) and holds it"),
            sources: &["https://github.com/NVIDIA/nvidia-docker/issues/377"],
            confirm: "ps -eo pid,stat,wchan:32,cmd | awk '$2 ~ /D/'",
        },
    ],
};

/// The symptom "no NVIDIA GPU is visible on the PCI bus" (HW-01 on a machine, not a container or
/// WSL): the firmware's DMI strings (a hypervisor, a laptop's chassis) and the other makers'
/// display devices order the causes.
pub const NO_NVIDIA_ON_BUS: Differential = Differential {
    id: "no-nvidia-gpu-on-bus",
    checks: &["HW-01"],
    symptom: crate::tr_key!("No NVIDIA GPU is visible on the PCI bus"),
    causes: &[
        CauseDef {
            id: "vm-without-gpu-passthrough",
            name: crate::tr_key!("this is a virtual machine and its hypervisor passes no NVIDIA GPU through to it"),
            sources: &[
                "https://docs.kernel.org/driver-api/vfio.html",
                "https://github.com/systemd/systemd/blob/main/src/basic/virt.c",
            ],
            confirm: "cat /sys/class/dmi/id/sys_vendor /sys/class/dmi/id/product_name",
        },
        CauseDef {
            id: "machine-has-no-nvidia-gpu",
            name: crate::tr_key!(
                "this machine has no NVIDIA GPU: its PCI bus shows only other makers' display devices"
            ),
            sources: &[
                "https://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html",
                "https://github.com/fboulnois/stable-diffusion-docker/issues/82",
            ],
            confirm: "lspci -nn | grep -i -e vga -e 3d -e display",
        },
        CauseDef {
            id: "gpu-switched-off-by-firmware",
            name: crate::tr_key!(
                "the laptop's firmware or its GPU switch (an integrated-only or Eco mode) turned the NVIDIA GPU off, so it is not on the bus"
            ),
            sources: &["https://github.com/seerge/g-helper/issues/4581"],
            confirm: "sudo dmesg | grep -i -e 10de -e nvidia",
        },
        CauseDef {
            id: "gpu-not-seated-or-powered",
            name: crate::tr_key!(
                "the card is not seated or not powered, is disabled in the firmware (BIOS/UEFI), or has failed"
            ),
            sources: &["https://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html"],
            confirm: "sudo dmesg | grep -i -e 'pcie bus error' -e 'link down' -e 10de",
        },
    ],
};
