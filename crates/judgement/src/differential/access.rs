//! The symptoms of reaching the GPU's device files: the files missing (PERM-01), the kernel
//! refusing to open them (PERM-02), and a container that was given no GPU or lost it (CONT-02),
//! each with its known causes.

use super::{CauseDef, Differential};

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
