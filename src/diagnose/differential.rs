//! Differential diagnosis: for a symptom a check can fail with, its known causes (each with where
//! it is documented and the one command that confirms or rules it out), and what a failing check
//! concluded about them ([`CauseFinding`]): the cause when the collected facts decide it, else the
//! causes that remain, most likely first. `docs/diagnosis.md` is the same table in prose; a test
//! holds the two together.
//!
//! A check names the cause in its finding when the facts decide it; when they do not, it names
//! the symptom and offers each remaining candidate with its confirming command (a fix step of its
//! own, so the window gives it a Copy button), never a guess.
//!
//! Length: the tables are data (each cause with its sources and command), kept in one place so
//! that ids stay unique across symptoms and `docs/diagnosis.md` is checked against all of them.

use serde::{Deserialize, Serialize};

use super::FixStep;
use crate::i18n::Message;

/// One known cause of a symptom.
#[derive(Clone, Copy, Debug)]
pub struct CauseDef {
    /// Stable id (`module-not-built-for-kernel`), as `check --json` gives it.
    pub id: &'static str,
    /// The cause in words: a catalogue key ("the driver was not built for the running kernel").
    pub name: &'static str,
    /// Where the cause is documented: NVIDIA's documentation or a public thread, by URL.
    pub sources: &'static [&'static str],
    /// One runnable command whose output confirms or rules the cause out.
    pub confirm: &'static str,
}

/// A symptom and its known causes, most likely first.
#[derive(Clone, Copy, Debug)]
pub struct Differential {
    /// Stable id of the symptom (`module-not-loaded`).
    pub id: &'static str,
    /// The checks whose failure is this symptom.
    pub checks: &'static [&'static str],
    /// The symptom in words: a catalogue key.
    pub symptom: &'static str,
    /// Its causes, most likely first.
    pub causes: &'static [CauseDef],
}

/// What a failing check concluded about the cause of its symptom.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum CauseFinding {
    /// The collected facts decide the cause.
    Decided {
        /// The symptom's id.
        symptom: String,
        /// The cause's id in that symptom's table.
        id: String,
    },
    /// The facts leave these causes, most likely first.
    Candidates {
        /// The symptom's id.
        symptom: String,
        /// The remaining causes' ids, most likely first.
        ids: Vec<String>,
    },
    /// None of the symptom's known causes fits what was collected (an error code outside the
    /// documented ones, an Xid NVIDIA's catalogue does not list): said as such, with what to
    /// collect next, never a guessed cause.
    NotExplained {
        /// The symptom's id.
        symptom: String,
    },
}

impl CauseFinding {
    /// The cause the facts decide.
    pub fn decided(d: &Differential, id: &str) -> CauseFinding {
        CauseFinding::Decided { symptom: d.id.to_string(), id: id.to_string() }
    }

    /// None of the known causes fits.
    pub fn not_explained(d: &Differential) -> CauseFinding {
        CauseFinding::NotExplained { symptom: d.id.to_string() }
    }

    /// The causes that remain, most likely first.
    pub fn candidates(d: &Differential, ids: &[&str]) -> CauseFinding {
        CauseFinding::Candidates { symptom: d.id.to_string(), ids: ids.iter().map(|s| s.to_string()).collect() }
    }
}

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

/// The symptom "no GPU was passed into this container" (CONT-02 with no GPU device file).
pub const NO_GPU_IN_CONTAINER: Differential = Differential {
    id: "no-gpu-in-container",
    checks: &["CONT-02"],
    symptom: crate::tr_key!("No GPU was passed into this container"),
    causes: &[
        CauseDef {
            id: "node-has-no-nvidia-gpu",
            name: crate::tr_key!("the machine has no NVIDIA GPU to pass in (its PCI bus shows none)"),
            sources: &["https://github.com/NVIDIA/k8s-device-plugin/issues/812"],
            confirm: "lspci -nn | grep -i -e vga -e 3d -e display",
        },
        CauseDef {
            id: "nvidia-runtime-not-used",
            name: crate::tr_key!(
                "the container did not run under NVIDIA's runtime (Kubernetes: no runtimeClassName nvidia and another default runtime)"
            ),
            sources: &[
                "https://github.com/NVIDIA/k8s-device-plugin/issues/23",
                "https://github.com/vllm-project/vllm/issues/8243",
            ],
            confirm: "kubectl get runtimeclass",
        },
        CauseDef {
            id: "gpus-not-requested",
            name: crate::tr_key!(
                "the container was started without asking for GPUs (--gpus, --device nvidia.com/gpu=..., an nvidia.com/gpu limit)"
            ),
            sources: &[
                "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html",
                "https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/",
            ],
            confirm: "env | grep -e NVIDIA_VISIBLE_DEVICES -e CUDA_VISIBLE_DEVICES; ls -l /dev/nvidia*",
        },
        CauseDef {
            id: "apptainer-minimal-dev",
            name: crate::tr_key!(
                "Apptainer (Singularity) gave the container a minimal /dev (--contain, --containall), without the GPUs"
            ),
            sources: &[
                "https://github.com/apptainer/singularity/issues/1306",
                "https://apptainer.org/docs/user/latest/gpu.html",
            ],
            confirm: "ls -l /dev/nvidia*",
        },
    ],
};

/// The symptom "this container lost access to the GPU" (CONT-02: the device files are there but
/// the kernel refuses to open them).
pub const CONTAINER_LOST_GPU: Differential = Differential {
    id: "container-lost-gpu",
    checks: &["CONT-02"],
    symptom: crate::tr_key!("This container lost access to the GPU"),
    causes: &[
        CauseDef {
            id: "cgroup-rewritten-by-systemd",
            name: crate::tr_key!(
                "the host's systemd rewrote the container's device rules (systemctl daemon-reload with the systemd cgroup driver, no /dev/char links)"
            ),
            sources: &[
                "https://github.com/NVIDIA/nvidia-container-toolkit/issues/48",
                "https://github.com/NVIDIA/gpu-operator/issues/430",
            ],
            confirm: "ls -l /dev/char | grep -i nvidia",
        },
        CauseDef {
            id: "kubelet-static-cpu-manager",
            name: crate::tr_key!("kubelet's static CPU manager policy rewrote the pod's device rules"),
            sources: &["https://github.com/NVIDIA/k8s-device-plugin/issues/145"],
            confirm: "grep -i cpuManagerPolicy /var/lib/kubelet/config.yaml",
        },
        CauseDef {
            id: "toolkit-no-cgroups",
            name: crate::tr_key!(
                "the NVIDIA Container Toolkit is set to no-cgroups = true (meant for rootless containers)"
            ),
            sources: &["https://github.com/NVIDIA/nvidia-container-toolkit/issues/381"],
            confirm: "grep -n no-cgroups /etc/nvidia-container-runtime/config.toml",
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

/// The symptom "the kernel refuses to open the GPU device files" (PERM-02 when the files' modes
/// allow this user but opening fails): the errno tells a cgroup's device rules (`EPERM`, the
/// device controller) from a security module (`EACCES`), and a scheduler's job from the rest.
pub const DEVICE_OPEN_REFUSED: Differential = Differential {
    id: "device-open-refused",
    checks: &["PERM-02"],
    symptom: crate::tr_key!("The kernel refuses to open the GPU device files"),
    causes: &[
        CauseDef {
            id: "job-given-no-gpu",
            name: crate::tr_key!(
                "this job was given no GPU: its scheduler's device limits (cgroup) refuse every GPU it did not allocate, and it allocated none"
            ),
            sources: &["https://slurm.schedmd.com/cgroup.conf.html", "https://slurm.schedmd.com/gres.html"],
            confirm: "scontrol show job $SLURM_JOB_ID | grep -i -e gres -e tres",
        },
        CauseDef {
            id: "device-rules-exclude-gpu",
            name: crate::tr_key!(
                "the device rules (cgroup) of the container, service or session this runs in leave the GPU out (systemd's DeviceAllow= or PrivateDevices=, or a container's rules rewritten)"
            ),
            sources: &[
                "https://www.freedesktop.org/software/systemd/man/latest/systemd.resource-control.html",
                "https://docs.kernel.org/admin-guide/cgroup-v1/devices.html",
            ],
            confirm: "systemctl show -p DeviceAllow -p DevicePolicy -p PrivateDevices $(ps -o unit= -p $$)",
        },
        CauseDef {
            id: "security-module-denies",
            name: crate::tr_key!("SELinux or AppArmor denies opening the GPU device files"),
            sources: &[
                "https://docs.kernel.org/admin-guide/LSM/index.html",
                "https://docs.redhat.com/en/documentation/red_hat_enterprise_linux/9/html/using_selinux/troubleshooting-problems-related-to-selinux_using-selinux",
            ],
            confirm: "sudo journalctl -k -b | grep -i -e avc -e apparmor",
        },
    ],
};

/// The symptom "the GPU device files are missing" (PERM-01) on a machine whose nvidia module is
/// loaded (a module that is not loaded is DRV-01's; a container's files are CONT-02's).
pub const DEVICE_FILES_MISSING: Differential = Differential {
    id: "device-files-missing",
    checks: &["PERM-01"],
    symptom: crate::tr_key!("The GPU device files are missing"),
    causes: &[
        CauseDef {
            id: "device-files-disabled",
            name: crate::tr_key!("the driver is set not to create its device files (NVreg_ModifyDeviceFiles=0)"),
            sources: &["https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/kernel-open/nvidia/nv-reg.h"],
            confirm: "grep ModifyDeviceFiles /proc/driver/nvidia/params",
        },
        CauseDef {
            id: "device-files-not-created",
            name: crate::tr_key!(
                "the module is loaded but nothing created its device files (a udev rule or nvidia-modprobe missing)"
            ),
            sources: &[
                "https://github.com/negativo17/nvidia-driver/issues/145",
                "https://github.com/NVIDIA/nvidia-modprobe",
            ],
            confirm: "ls /usr/lib/udev/rules.d /etc/udev/rules.d | grep -i nvidia; command -v nvidia-modprobe",
        },
        CauseDef {
            id: "uvm-device-file-missing",
            name: crate::tr_key!(
                "/dev/nvidia-uvm was not created (the nvidia-uvm module is not loaded, or its file was never made)"
            ),
            sources: &["https://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html"],
            confirm: "grep nvidia_uvm /proc/modules; ls -l /dev/nvidia-uvm",
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

/// NVIDIA's Xid catalogue.
const XID_CATALOGUE: &str = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html";

/// Every symptom with a differential.
pub static DIFFERENTIALS: &[Differential] = &[
    MODULE_NOT_LOADED,
    GPU_NOT_INITIALISED,
    DEVICE_FILES_MISSING,
    NVML_DOES_NOT_START,
    CUDA_DOES_NOT_START,
    GPU_ERRORS_LOGGED,
    DRIVER_HUNG,
    NO_GPU_IN_CONTAINER,
    CONTAINER_LOST_GPU,
    NO_GPU_IN_WSL,
    WINDOWS_STOPPED_GPU,
    DEVICE_OPEN_REFUSED,
    NO_NVIDIA_ON_BUS,
];

impl Differential {
    /// The name (a catalogue key) of this symptom's cause `id`; empty for an id it does not have.
    pub fn name_of(&self, id: &str) -> &'static str {
        self.causes.iter().find(|c| c.id == id).map_or("", |c| c.name)
    }
}

/// Checks whose every failure names its own cause in the finding, with that cause's fix (a
/// PyTorch build for a newer CUDA, the old kernel module still running, `CUDA_VISIBLE_DEVICES`
/// hiding every GPU, a user outside the device files' group, MIG on without instances, a Linux
/// driver inside WSL, a CPU-only PyTorch on Windows, ...): no differential is needed, as the
/// facts that fail them are the cause. Every other failing check carries a [`CauseFinding`].
pub const CAUSE_IS_THE_FINDING: &[&str] = &[
    "CUDA-04",
    "CUDA-07",
    "CUDA-08",
    "DRV-06",
    "ENV-01",
    "ENV-03",
    "PERM-02",
    "RT-03",
    "RT-06",
    "RT-07",
    "RT-LOST",
    "WIN-TDR",
    "WIN-TORCH",
    "WSL-02",
];

/// The cause `id` of the symptom `symptom`.
pub fn cause(symptom: &str, id: &str) -> Option<&'static CauseDef> {
    DIFFERENTIALS.iter().find(|d| d.id == symptom).and_then(|d| d.causes.iter().find(|c| c.id == id))
}

/// The question a candidate's fix step asks.
const QUESTION: &str = crate::tr_key!("{n}. Is it that {cause}? This confirms or rules it out:");

/// The fix steps that ask about each candidate in turn: the cause in words, then the command that
/// confirms or rules it out.
pub fn candidate_steps(d: &Differential, ids: &[&str]) -> Vec<FixStep> {
    let mut out = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let Some(c) = d.causes.iter().find(|c| c.id == *id) else { continue };
        out.push(FixStep::Text(Message::new(QUESTION).arg("n", i + 1).arg("cause", Message::new(c.name))));
        out.push(FixStep::Command(c.confirm.to_string()));
    }
    out
}

/// Whether a fix step is a candidate's question (from [`candidate_steps`]): a front end that has
/// room for the fix only (the support card) stops before the questions that follow it.
pub fn is_candidate_question(step: &FixStep) -> bool {
    matches!(step, FixStep::Text(m) if m.key() == QUESTION)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cause_has_a_source_and_a_confirming_command_and_ids_are_unique() {
        let mut ids = std::collections::HashSet::new();
        for d in DIFFERENTIALS {
            assert!(ids.insert(d.id), "symptom id {} twice", d.id);
            assert!(!d.checks.is_empty() && d.causes.len() >= 2, "{}", d.id);
            for c in d.causes {
                assert!(ids.insert(c.id), "cause id {} twice", c.id);
                assert!(!c.sources.is_empty() && c.sources.iter().all(|s| s.starts_with("https://")), "{}", c.id);
                assert!(!c.confirm.trim().is_empty() && !c.confirm.contains('<'), "{}: a runnable command", c.id);
                assert!(c.id.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'), "{}", c.id);
            }
            for check in d.checks {
                assert!(crate::diagnose::checks::find(check).is_some(), "{}: no check {check}", d.id);
            }
        }
    }

    #[test]
    fn docs_diagnosis_holds_every_symptom_and_cause_with_its_sources() {
        let doc = include_str!("../../docs/diagnosis.md");
        for d in DIFFERENTIALS {
            assert!(doc.contains(&format!("`{}`", d.id)), "docs/diagnosis.md lacks the symptom {}", d.id);
            for c in d.causes {
                assert!(doc.contains(&format!("`{}`", c.id)), "docs/diagnosis.md lacks the cause {}", c.id);
                for s in c.sources {
                    assert!(doc.contains(s), "docs/diagnosis.md lacks {s} for {}", c.id);
                }
                assert!(doc.contains(&format!("`{}`", c.confirm)), "docs/diagnosis.md lacks {}'s command", c.id);
            }
        }
    }

    #[test]
    fn candidates_become_questions_each_with_its_command() {
        let steps = candidate_steps(&MODULE_NOT_LOADED, &["module-blacklisted", "module-load-error"]);
        assert_eq!(steps.len(), 4);
        assert!(matches!(&steps[1], FixStep::Command(c) if c.starts_with("grep -rs")));
        assert!(matches!(&steps[3], FixStep::Command(c) if c == "sudo modprobe nvidia"));
        let FixStep::Text(t) = &steps[2] else { panic!("{steps:?}") };
        assert!(t.en().starts_with("2. Is it that loading the module fails"), "{}", t.en());
        let json = serde_json::to_string(&CauseFinding::candidates(&MODULE_NOT_LOADED, &["module-blacklisted"]))
            .unwrap_or_default();
        assert_eq!(json, r#"{"kind":"candidates","symptom":"module-not-loaded","ids":["module-blacklisted"]}"#);
        assert!(cause("module-not-loaded", "nouveau-holds-gpu").is_some() && cause("x", "y").is_none());
    }
}
