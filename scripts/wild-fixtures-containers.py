#!/usr/bin/env python3
"""Writes the "wild" container/HPC-runtime fixtures: captures rebuilt from closed public bug threads
of NVIDIA/nvidia-container-toolkit, NVIDIA/libnvidia-container, apptainer/apptainer (and the older
apptainer/singularity and sylabs/singularity trackers), NVIDIA/k8s-device-plugin and
NVIDIA/gpu-operator, chosen in the order the search returned them (see
tests/fixtures/wild/containers.md for the queries, the accepted threads and every skipped candidate).

These fixtures exist to measure, not to tune: each holds only what its thread states plus plausible
filler (marked "chosen" below). The thread's conclusion is recorded in containers.md, never in the
capture, and nothing here was adjusted to match what gpu-doctor answers.

Search queries were run against the stored issue index as "<repository short name> <query>", with the
queries of the brief: cuInit, no CUDA-capable device, NVML, Failed to initialize NVML,
nvidia-smi Unknown Error, --nv, CDI.

Run: python3 scripts/wild-fixtures-containers.py   (writes tests/fixtures/wild/<slug>/)
"""
import sys, os, copy, zlib
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_lib import *

OS = {
    'ubuntu1604': 'PRETTY_NAME="Ubuntu 16.04.6 LTS"\nNAME="Ubuntu"\nVERSION_ID="16.04"\nID=ubuntu\nID_LIKE=debian\n',
    'ubuntu1804': 'PRETTY_NAME="Ubuntu 18.04.6 LTS"\nNAME="Ubuntu"\nVERSION_ID="18.04"\nID=ubuntu\nID_LIKE=debian\n',
    'ubuntu2004': 'PRETTY_NAME="Ubuntu 20.04.6 LTS"\nNAME="Ubuntu"\nVERSION_ID="20.04"\nID=ubuntu\nID_LIKE=debian\n',
    'ubuntu2204': 'PRETTY_NAME="Ubuntu 22.04.3 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\nID=ubuntu\nID_LIKE=debian\n',
    'centos7': 'NAME="CentOS Linux"\nVERSION="7 (Core)"\nID="centos"\nID_LIKE="rhel fedora"\nVERSION_ID="7"\nPRETTY_NAME="CentOS Linux 7 (Core)"\n',
    'rocky8': 'NAME="Rocky Linux"\nVERSION="8.8 (Green Obsidian)"\nID="rocky"\nID_LIKE="rhel centos fedora"\nVERSION_ID="8.8"\nPRETTY_NAME="Rocky Linux 8.8 (Green Obsidian)"\n',
}
SB_OFF = bytes([6, 0, 0, 0, 0])
G = 1 << 30
ROOT = {"name": "root", "uid": 0, "groups": [[0, "root"]]}
KMSG_DENIED = ({"unreadable": "the kernel log is not readable by this user (/dev/kmsg: Operation not permitted (os error 1)); run `sudo dmesg | grep -i -e nvrm -e xid` to see it"},
               {"read": None, "tried": [["/dev/kmsg", "Operation not permitted (os error 1)"]]})
EPERM = 'Operation not permitted (os error 1)'


def version_file(driver, open_module=False):
    kind = 'Open Kernel Module' if open_module else 'Kernel Module'
    return f'NVRM version: NVIDIA UNIX x86_64 {kind}  {driver}  Release Build  (dvs-builder@U16-T02-35-3)\nGCC version:  gcc version 9.4.0\n'


def uuid(driver, i):
    return f'GPU-{zlib.crc32(f"wild-{driver}-{i}".encode()):08x}-5c1d-4e7a-9b2f-{i:012x}'


def machine(user, gpus, driver, cuda, distro, kernel, libdir='/usr/lib/x86_64-linux-gnu', open_module=False):
    """A machine (or container) whose GPUs work: `gpus` = [(name, ':bus', vram bytes, cc, max gen, watts)].
    Each fixture then applies the state its thread describes."""
    m = copy.deepcopy(src['meta'])
    m['user'] = user
    m['env'] = {}
    m['device_nodes'] = [node('/dev/nvidiactl', 195, 255), node('/dev/nvidia-uvm', 510, 0), node('/dev/nvidia-uvm-tools', 510, 1)] + \
        [node(f'/dev/nvidia{i}', 195, i) for i in range(len(gpus))]
    for n in m['device_nodes']:
        n['open'] = 'ok'
    m['links'] = {f'/sys/bus/pci/devices/0000{g[1]}/driver': '../../../bus/pci/drivers/nvidia' for g in gpus}
    m['listings'] = {}
    m['nvml'] = {"status": {"kind": "nvml", "library": "libnvidia-ml.so.1", "attempts": []},
                 "inventory": {"driver_version": driver, "cuda_driver_version": cuda, "nvml_version": f"{cuda.split('.')[0]}.{driver}",
                               "gpus": [gpu_info(i, g[0], uuid(driver, i), g[1], g[2], g[3], g[4], g[5], 1800, 5000, 90) for i, g in enumerate(gpus)]},
                 "samples": [sample(i, g[2], g[5]) for i, g in enumerate(gpus)],
                 "facts": [facts(i) for i in range(len(gpus))]}
    for f in m['nvml']['facts']:
        f['mig_devices'] = {"na": "MIG is off"}
    m['libraries'] = [dict(l, via='ld.so.cache') for l in nvidia_libs(libdir, driver)]
    m['kernel_log'] = {"lines": [f"NVRM: loading NVIDIA UNIX x86_64 Kernel Module  {driver}  Release Build  (dvs-builder@U16-T02-35-3)"]}
    m['kernel_log_source'] = {"read": "/dev/kmsg", "tried": []}
    m['renderer'] = None
    m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 0, "driver_version": cuda, "devices": len(gpus)}
    files = {
        'etc/os-release': OS[distro],
        'proc/sys/kernel/osrelease': kernel + '\n',
        'proc/modules': 'nvidia_uvm 1372160 0 - Live 0x0000000000000000 (POE)\nnvidia_modeset 1241088 0 - Live 0x0000000000000000 (POE)\nnvidia 56512512 1 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (POE)\n',
        'proc/driver/nvidia/version': version_file(driver, open_module),
        'sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c': SB_OFF,
    }
    for g in gpus:
        files.update(pci_gpu('0000' + g[1], '0x030200' if g[0].startswith(('Tesla', 'NVIDIA A1', 'NVIDIA A100', 'NVIDIA T4')) else '0x030000'))
    return m, files


def in_container(m, f, cgroup='0::/\n', dockerenv=True):
    """Seen from inside a container: no EFI variables, the kernel log closed, PID 1's cgroup."""
    f.pop('sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c', None)
    f['proc/1/cgroup'] = cgroup
    if dockerenv:
        f['.dockerenv'] = ''
    m['kernel_log'], m['kernel_log_source'] = copy.deepcopy(KMSG_DENIED)


def device_access_lost(m):
    """Device nodes are there but the container's device rules refuse them (EPERM on open):
    NVML says Unknown Error, cuInit 999."""
    for n in m['device_nodes']:
        n['open'] = EPERM
    m['nvml'] = {"status": {"kind": "unavailable", "summary": "NVML failed to start: Unknown Error",
                            "next_step": "See the checklist.", "attempts": [{"path": "libnvidia-ml.so.1", "error": "Unknown Error"}]},
                 "inventory": {"driver_version": None, "cuda_driver_version": None, "nvml_version": None, "gpus": []}, "samples": [], "facts": []}
    m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 999, "driver_version": m['cuda']['driver_version'], "devices": None}


def no_nvml_in_container(m):
    """Nothing of the driver was injected: no libraries, no device nodes."""
    m['device_nodes'] = []
    m['libraries'] = []
    m['nvml'] = {"status": {"kind": "unavailable", "summary": "The driver's management library (NVML) was not found.",
                            "next_step": "See the checklist.",
                            "attempts": [{"path": "libnvidia-ml.so.1", "error": "a libloading error occurred: libnvidia-ml.so.1: cannot open shared object file: No such file or directory"}]},
                 "inventory": {"driver_version": None, "cuda_driver_version": None, "nvml_version": None, "gpus": []}, "samples": [], "facts": []}
    m['cuda'] = {"library": None, "load_error": "libcuda.so.1: cannot open shared object file: No such file or directory",
                 "init_code": None, "driver_version": None, "devices": None}


def save(slug, url, m, f):
    make(f'wild/{slug}', url, m, f, version=2)


# ---------------------------------------------------------------------------------------------------
# 1. NVIDIA/gpu-operator#430 (query "gpu-operator Failed to initialize NVML"), opened 2022-11-01.
# Thread: Kubeflow 1.6.1 with the GPU Operator installed by helm at v22.9.0; training works, then after
# a day or two `nvidia-smi` in the notebook pod ("(base) jovyan@agm-0") prints "Failed to initialize
# NVML: Unknown Error". Captured inside that pod after the failure.
# Chosen: GPU (one RTX A5000 at 0000:41:00.0), driver 525.60.13 (the operator's driver container),
# node Ubuntu 20.04 / kernel 5.15.0-52, notebook image Ubuntu 20.04 with conda at /opt/conda,
# service address, uid 1000 for jovyan.
m, f = machine({"name": "jovyan", "uid": 1000, "groups": [[100, "users"]]},
               [('NVIDIA RTX A5000', ':41:00.0', 24 * G, '8.6', 4, 230.0)], '525.60.13', '12.0', 'ubuntu2004', '5.15.0-52-generic')
in_container(m, f, dockerenv=False)
device_access_lost(m)
m['env'] = {"NVIDIA_VISIBLE_DEVICES": uuid('525.60.13', 0), "NVIDIA_DRIVER_CAPABILITIES": "compute,utility",
            "KUBERNETES_SERVICE_HOST": "10.96.0.1", "CONDA_PREFIX": "/opt/conda", "PATH": "/opt/conda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "PWD": "/home/jovyan/vol-1"}
save('gpu-operator-pod-loses-gpu-after-days', 'https://github.com/NVIDIA/gpu-operator/issues/430', m, f)

# ---------------------------------------------------------------------------------------------------
# 2. NVIDIA/nvidia-container-toolkit#381 (query "nvidia-container-toolkit Failed to initialize NVML"),
# comments from 2024-03-03. Thread: `docker run --gpus all ... nvidia-smi` gives "Failed to initialize
# NVML: Unknown Error" even after the pinned daemon-reload notice; downgrading the toolkit to 1.14.0
# makes it work. Participant's host (jacksonsc007): GeForce RTX 4090 at 00000000:01:00.0, driver
# 545.23.08, CUDA 12.3. Captured inside the failing container.
# Chosen: host Ubuntu 22.04 / kernel 6.5.0-21, container image Ubuntu 22.04, root in the container.
m, f = machine(ROOT, [('NVIDIA GeForce RTX 4090', ':01:00.0', 24 * G, '8.9', 4, 450.0)], '545.23.08', '12.3', 'ubuntu2204', '6.5.0-21-generic')
in_container(m, f)
device_access_lost(m)
m['env'] = {"NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_DRIVER_CAPABILITIES": "compute,utility"}
save('toolkit-container-nvml-unknown-error-rtx4090', 'https://github.com/NVIDIA/nvidia-container-toolkit/issues/381', m, f)

# ---------------------------------------------------------------------------------------------------
# 3. NVIDIA/nvidia-container-toolkit#108 (query "nvidia-container-toolkit nvidia-smi Unknown Error"),
# opened 2023-09-08. Thread: AWS g4dn instances running k3s; after the automatic upgrade of the
# container toolkit to 1.14, pods fail to start with "nvidia-container-cli: device error:
# /var/run/nvidia-container-devices: unknown device"; `nvidia-smi` on the host works (driver 535.54.03,
# CUDA 12.2). No container starts, so this is captured on the host.
# Chosen: one Tesla T4 at 0000:00:1e.0 (what a g4dn.xlarge has), Ubuntu 22.04, kernel 5.15.0-1044-aws,
# user "ubuntu"; no EFI Secure Boot variable (EC2).
m, f = machine({"name": "ubuntu", "uid": 1000, "groups": [[1000, "ubuntu"], [4, "adm"], [27, "sudo"]]},
               [('Tesla T4', ':00:1e.0', 15 * G, '7.5', 3, 70.0)], '535.54.03', '12.2', 'ubuntu2204', '5.15.0-1044-aws')
del f['sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c']
save('k3s-pods-fail-after-toolkit-upgrade-g4dn', 'https://github.com/NVIDIA/nvidia-container-toolkit/issues/108', m, f)

# ---------------------------------------------------------------------------------------------------
# 4. NVIDIA/k8s-device-plugin#23 (query "k8s-device-plugin Failed to initialize NVML"), opened
# 2018-01-19. Thread: nvidia-docker2 installed, device plugin deployed on Kubernetes 1.8; the plugin pod
# logs "Loading NVML" / "Failed to start nvml with error: could not load NVML library". Captured inside
# the device-plugin container.
# Chosen: GPU (GeForce GTX 1080 Ti at 0000:02:00.0, visible through /sys), host driver 384.111 (its
# /proc files are visible in the container), Ubuntu 16.04 host and image, kernel 4.4.0-109, cgroup v1
# path, service address; NVIDIA_VISIBLE_DEVICES/NVIDIA_DRIVER_CAPABILITIES as the plugin image sets them.
m, f = machine(ROOT, [('GeForce GTX 1080 Ti', ':02:00.0', 11 * G, '6.1', 3, 250.0)], '384.111', '9.0', 'ubuntu1604', '4.4.0-109-generic')
in_container(m, f, cgroup='11:devices:/kubepods/besteffort/pod5f0b9c1e-fd0a-11e7-9d4b-0cc47a3f5e12/3c9d0a1f2e4b\n')
no_nvml_in_container(m)
m['env'] = {"NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_DRIVER_CAPABILITIES": "utility", "KUBERNETES_SERVICE_HOST": "10.96.0.1"}
save('device-plugin-could-not-load-nvml-k8s-1-8', 'https://github.com/NVIDIA/k8s-device-plugin/issues/23', m, f)

# ---------------------------------------------------------------------------------------------------
# 5. NVIDIA/k8s-device-plugin#66 (query "k8s-device-plugin cuInit"), opened 2018-08-17. Thread:
# `docker run ... nvidia/k8s-device-plugin:1.11` exits with "nvidia-device-plugin: symbol lookup error:
# nvidia-device-plugin: undefined symbol: nvmlDeviceGetPciInfo_v3"; 1.10 works; the host is on a CUDA
# 8.0 driver. Captured inside the plugin container (started with the NVIDIA runtime, so the host's
# libraries are there).
# Chosen: driver 375.66 (a CUDA 8.0 driver), one Tesla K80 at 0000:06:00.0, Ubuntu 16.04 host,
# kernel 4.4.0-131, the plugin image's Ubuntu 16.04.
m, f = machine(ROOT, [('Tesla K80', ':06:00.0', 12 * G, '3.7', 3, 149.0)], '375.66', '8.0', 'ubuntu1604', '4.4.0-131-generic')
in_container(m, f, cgroup='12:devices:/docker/8f2d6c0b9a1e4d7c3b5a6f8e9d0c1b2a3f4e5d6c7b8a9f0e1d2c3b4a5f6e7d8c\n')
m['env'] = {"NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_DRIVER_CAPABILITIES": "utility"}
save('device-plugin-1-11-on-cuda-8-driver', 'https://github.com/NVIDIA/k8s-device-plugin/issues/66', m, f)

# ---------------------------------------------------------------------------------------------------
# 6. apptainer/singularity#1306 (query "singularity --nv no CUDA-capable device"), opened 2018-02-14.
# Thread: Singularity 2.4.2; `singularity exec -c --nv <image>` gives CUDA errors in Chainer and
# Detectron containers; the /dev/nvidia* files are missing when -c is added. Captured inside such a
# container: the --nv libraries are bound (in /.singularity.d/libs on LD_LIBRARY_PATH), no device nodes.
# Chosen: host (CentOS 7, kernel 3.10.0-693, driver 384.111, one Tesla P100 at 0000:03:00.0), user,
# the image's Ubuntu 16.04, what NVML and cuInit return without the nodes ("Driver Not Loaded",
# CUDA_ERROR_NO_DEVICE).
m, f = machine({"name": "paulo", "uid": 1001, "groups": [[1001, "paulo"]]},
               [('Tesla P100-PCIE-16GB', ':03:00.0', 16 * G, '6.0', 3, 250.0)], '384.111', '9.0', 'ubuntu1604', '3.10.0-693.11.6.el7.x86_64')
in_container(m, f, cgroup='11:devices:/user.slice\n', dockerenv=False)
m['device_nodes'] = []
m['libraries'] = [{"name": n, "path": f"/.singularity.d/libs/{n}", "real_path": f"/.singularity.d/libs/{n}", "via": "LD_LIBRARY_PATH"}
                  for n in ("libcuda.so.1", "libnvidia-ml.so.1")]
m['nvml'] = {"status": {"kind": "unavailable", "summary": "NVML failed to start: Driver Not Loaded", "next_step": "See the checklist.",
                        "attempts": [{"path": "libnvidia-ml.so.1", "error": "Driver Not Loaded"}]},
             "inventory": {"driver_version": None, "cuda_driver_version": None, "nvml_version": None, "gpus": []}, "samples": [], "facts": []}
m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 100, "driver_version": "9.0", "devices": 0}
m['env'] = {"LD_LIBRARY_PATH": "/.singularity.d/libs", "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
save('singularity-contain-nv-no-device-nodes', 'https://github.com/apptainer/singularity/issues/1306', m, f)

# ---------------------------------------------------------------------------------------------------
# 7. NVIDIA/k8s-device-plugin#145 (query "k8s-device-plugin nvidia-smi Unknown Error"), opened
# 2019-11-13. Thread: kubelet with --cpu-manager-policy=static --kube-reserved cpu=0.1, Kubernetes
# v1.14.8, device plugin 1.11 (also 1.0.0-beta4); a pod requesting one nvidia.com/gpu and running
# "sleep 30; nvidia-smi" in nvidia/cuda:8.0-runtime-ubuntu16.04 always ends with "Failed to initialize
# NVML: Unknown Error"; without the sleep nvidia-smi works. Captured inside that pod after the sleep.
# Chosen: GPU (Tesla V100-PCIE-16GB at 0000:3b:00.0), driver 418.87.01, node kernel 4.15.0-66, cgroup v1
# path, service address, the device plugin's UUID in NVIDIA_VISIBLE_DEVICES (os-release is the stated image's).
m, f = machine(ROOT, [('Tesla V100-PCIE-16GB', ':3b:00.0', 16 * G, '7.0', 3, 250.0)], '418.87.01', '10.1', 'ubuntu1604', '4.15.0-66-generic')
in_container(m, f, cgroup='11:devices:/kubepods/pod2b7c4d1e-0611-11ea-8d71-0cc47a3f5e12/9e8d7c6b5a4f\n')
device_access_lost(m)
m['env'] = {"NVIDIA_VISIBLE_DEVICES": uuid('418.87.01', 0), "KUBERNETES_SERVICE_HOST": "10.96.0.1",
            "LD_LIBRARY_PATH": "/usr/local/nvidia/lib:/usr/local/nvidia/lib64", "PATH": "/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
save('k8s-static-cpu-manager-pod-loses-gpu', 'https://github.com/NVIDIA/k8s-device-plugin/issues/145', m, f)

# ---------------------------------------------------------------------------------------------------
# 8. NVIDIA/k8s-device-plugin#812 (query "k8s-device-plugin no CUDA-capable device"), opened
# 2024-07-09. Thread: "RuntimeError: Found no NVIDIA driver on your system" from a workload using the
# NVIDIA device plugin; the reporter's GPU is an AMD one. Captured inside the workload pod.
# Chosen: the AMD card (Radeon RX 7900 XTX, 1002:744c, at 0000:03:00.0, amdgpu bound), pytorch image
# (Ubuntu 22.04, torch 2.3.1+cu121 under /opt/conda), node kernel 6.5.0-41, cgroup v2, service address.
m, f = machine(ROOT, [], '550.90.07', '12.4', 'ubuntu2204', '6.5.0-41-generic')
in_container(m, f)
no_nvml_in_container(m)
del f['proc/driver/nvidia/version']
f['proc/modules'] = 'amdgpu 15908864 0 - Live 0x0000000000000000\ndrm_ttm_helper 16384 1 amdgpu, Live 0x0000000000000000\n'
f['sys/bus/pci/devices/0000:03:00.0/class'] = '0x030000\n'
f['sys/bus/pci/devices/0000:03:00.0/vendor'] = '0x1002\n'
m['links'] = {'/sys/bus/pci/devices/0000:03:00.0/driver': '../../../bus/pci/drivers/amdgpu'}
m['nvml']['facts'] = []
f['opt/conda/lib/python3.10/site-packages/torch/version.py'] = "__version__ = '2.3.1+cu121'\ndebug = False\ncuda: Optional[str] = '12.1'\nhip: Optional[str] = None\n"
m['env'] = {"NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_DRIVER_CAPABILITIES": "compute,utility", "KUBERNETES_SERVICE_HOST": "10.96.0.1",
            "CONDA_PREFIX": "/opt/conda", "PATH": "/opt/conda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
save('k8s-pod-on-amd-gpu-node', 'https://github.com/NVIDIA/k8s-device-plugin/issues/812', m, f)

# ---------------------------------------------------------------------------------------------------
# 9. apptainer/apptainer#1752 (query "apptainer NVML"), opened 2023-10-20. Thread: Apptainer 1.1.9 and
# 1.2.4 with --nv (and /etc/OpenCL bound in); with drivers newer than 525.85.05 OpenCL kernels no longer
# build inside the container and no build log is produced. Captured inside the container: NVML and CUDA
# answer normally.
# Chosen: driver 535.104.05, one Tesla T4 at 0000:3b:00.0, host Rocky 8 / kernel 4.18.0-477, the image's
# CentOS 7, the user (named after the reporter's handle), library paths as Apptainer binds them.
m, f = machine({"name": "briedel", "uid": 20513, "groups": [[20513, "briedel"]]},
               [('Tesla T4', ':3b:00.0', 15 * G, '7.5', 3, 70.0)], '535.104.05', '12.2', 'centos7', '4.18.0-477.27.1.el8_8.x86_64')
in_container(m, f, cgroup='0::/user.slice/user-20513.slice/session-4.scope\n', dockerenv=False)
m['libraries'] = [{"name": n, "path": f"/.singularity.d/libs/{n}", "real_path": f"/.singularity.d/libs/{n}", "via": "LD_LIBRARY_PATH"}
                  for n in ("libcuda.so.1", "libnvidia-ml.so.1")]
m['env'] = {"LD_LIBRARY_PATH": "/.singularity.d/libs", "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
save('apptainer-nv-opencl-fails-newer-driver', 'https://github.com/apptainer/apptainer/issues/1752', m, f)

# ---------------------------------------------------------------------------------------------------
# 10. apptainer/singularity#1548 (query "singularity --nv"), opened 2018-05-15. Thread: Singularity
# 2.5.0; `singularity shell --nv` of the OSG tensorflow-gpu image from /cvmfs aborts ("Library bind
# directory not present in container", "Failed creating directory .../.singularity.d/libs", Retval 255),
# so no container starts; the host's nvidia-smi shows driver 396.26 and GeForce GTX 1080 Ti cards
# (11178 MiB) at 0000:04:00.0, 0000:05:00.0, 0000:08:00.0 and more. Captured on the host (user cuser1).
# Chosen: a fourth card at 0000:09:00.0, CentOS 7 / kernel 3.10.0-862, groups.
gtx = ('GeForce GTX 1080 Ti', 11178 * (1 << 20), '6.1', 3, 250.0)
m, f = machine({"name": "cuser1", "uid": 5001, "groups": [[5001, "cuser1"], [39, "video"]]},
               [(gtx[0], b, gtx[1], gtx[2], gtx[3], gtx[4]) for b in (':04:00.0', ':05:00.0', ':08:00.0', ':09:00.0')],
               '396.26', '9.2', 'centos7', '3.10.0-862.3.2.el7.x86_64', libdir='/usr/lib64')
save('singularity-2-5-nv-aborts-gtx1080ti-host', 'https://github.com/apptainer/singularity/issues/1548', m, f)

print('wrote 10 fixtures under tests/fixtures/wild/')
