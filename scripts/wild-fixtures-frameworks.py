#!/usr/bin/env python3
"""Writes the "wild" ML-framework / inference-server fixtures: captures rebuilt from closed public bug
threads of pytorch/pytorch, ollama/ollama, vllm-project/vllm, tensorflow/tensorflow, jax-ml/jax and
microsoft/onnxruntime in which a framework could not use the GPU. The threads were taken in the order
the search returned them (see tests/fixtures/wild/frameworks.md for the queries, the accepted threads
and every skipped candidate).

These fixtures exist to measure, not to tune: each holds only what its thread states plus plausible
filler (marked "chosen" below). The thread's conclusion is written down in frameworks.md, never in the
capture, and nothing here was adjusted to match what gpu-doctor answers.

Queries (stored issue index, each also run with a framework's name in front, e.g. "ollama cuInit"):
"CUDA initialization: CUDA unknown error", "no CUDA-capable device is detected", "cuInit",
"torch.cuda.is_available() False", "CUDA driver version is insufficient", "Failed to initialize NVML",
"forward compatibility was attempted on non supported HW", "CUDA error: system not yet initialized".

Run: python3 scripts/wild-fixtures-frameworks.py   (writes tests/fixtures/wild/<slug>/)
"""
import sys, os, copy, json, zlib
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_lib import *

OS = {
    'ubuntu1804': 'PRETTY_NAME="Ubuntu 18.04.3 LTS"\nNAME="Ubuntu"\nVERSION_ID="18.04"\nID=ubuntu\nID_LIKE=debian\n',
    'ubuntu2004': 'PRETTY_NAME="Ubuntu 20.04.6 LTS"\nNAME="Ubuntu"\nVERSION_ID="20.04"\nID=ubuntu\nID_LIKE=debian\n',
    'ubuntu2204': 'PRETTY_NAME="Ubuntu 22.04.4 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\nID=ubuntu\nID_LIKE=debian\n',
    'ubuntu2504': 'PRETTY_NAME="Ubuntu 25.04"\nNAME="Ubuntu"\nVERSION_ID="25.04"\nVERSION="25.04 (Plucky Puffin)"\nID=ubuntu\nID_LIKE=debian\n',
    'tencentos31': 'NAME="TencentOS Server"\nVERSION="3.1 (Final)"\nID="tencentos"\nID_LIKE="rhel fedora centos"\nVERSION_ID="3.1"\nPRETTY_NAME="TencentOS Server 3.1 (Final)"\n',
}
SB_OFF = bytes([6, 0, 0, 0, 0])
SB_PATH = 'sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c'
G = 1 << 30
ROOT = {"name": "root", "uid": 0, "groups": [[0, "root"]]}
EPERM = 'Operation not permitted (os error 1)'
KMSG_DENIED = ({"unreadable": "the kernel log is not readable by this user (/dev/kmsg: Operation not permitted (os error 1)); run `sudo dmesg | grep -i -e nvrm -e xid` to see it"},
               {"read": None, "tried": [["/dev/kmsg", EPERM]]})
NO_NVML = {"driver_version": None, "cuda_driver_version": None, "nvml_version": None, "gpus": []}


def version_file(driver, open_module=False):
    kind = 'Open Kernel Module' if open_module else 'Kernel Module'
    return f'NVRM version: NVIDIA UNIX x86_64 {kind}  {driver}  Release Build  (dvs-builder@U16-T02-35-3)\nGCC version:  gcc version 11.4.0\n'


def uuid(driver, i):
    return f'GPU-{zlib.crc32(f"frameworks-{driver}-{i}".encode()):08x}-2d4b-4f1e-a6c3-{i:012x}'


def machine(user, gpus, driver, cuda, distro, kernel, libdir='/usr/lib/x86_64-linux-gnu', open_module=False):
    """A machine whose GPUs work: `gpus` = [(name, ':bus', vram bytes, cc, max PCIe gen, watts)].
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
    m['kernel_log'] = {"lines": [f"NVRM: loading NVIDIA UNIX x86_64 {'Open ' if open_module else ''}Kernel Module  {driver}  Release Build  (dvs-builder@U16-T02-35-3)"]}
    m['kernel_log_source'] = {"read": "/dev/kmsg", "tried": []}
    m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 0, "driver_version": cuda, "devices": len(gpus)}
    files = {
        'etc/os-release': OS[distro],
        'proc/sys/kernel/osrelease': kernel + '\n',
        'proc/modules': 'nvidia_uvm 1372160 0 - Live 0x0000000000000000 (POE)\nnvidia_drm 77824 2 - Live 0x0000000000000000 (POE)\n'
                        'nvidia_modeset 1302528 1 nvidia_drm, Live 0x0000000000000000 (POE)\n'
                        'nvidia 56512512 3 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (POE)\n',
        'proc/driver/nvidia/version': version_file(driver, open_module),
        SB_PATH: SB_OFF,
    }
    for g in gpus:
        cls = '0x030200' if g[0].startswith(('Tesla', 'NVIDIA A1', 'NVIDIA A100', 'NVIDIA H')) else '0x030000'
        files.update(pci_gpu('0000' + g[1], cls))
    return m, files


def torch_file(ver, cuda):
    """torch/version.py as the wheels of 2.x write it."""
    return f"__version__ = '{ver}'\ndebug = False\ncuda: Optional[str] = '{cuda}'\nhip: Optional[str] = None\n"


def save(slug, url, m, files):
    make(f'wild/{slug}', url, m, files, version=2)


# ---------------------------------------------------------------------------------------------------------
# 1. ollama/ollama#11593 (2025-07-31), query "ollama Failed to initialize NVML".
# Thread: Ubuntu 25.04, RTX PRO 6000 Blackwell, driver 570.158.01 (CUDA 12.8) and later 575.57.08
# (CUDA 12.9); ollama: "Unable to load cudart library /usr/lib/x86_64-linux-gnu/libcuda.so.575.57.08:
# cuda driver library init failure: 3" (cuInit returns CUDA_ERROR_NOT_INITIALIZED). The maintainer asks
# whether nvidia-smi shows the GPU (the reporter runs nvidia-smi fine).
# Filled in: user, kernel 6.14.0-24-generic (Ubuntu 25.04's series), open kernel module (required for
# Blackwell), PCI address 01:00.0, 96 GB / cc 12.0 / PCIe 5 / 600 W as the card's data sheet gives, the
# nvidia_uvm parameter uvm_disable_hmm at its default "N" (HMM in use), no error lines in the kernel log.
m, f = machine({"name": "tj", "uid": 1000, "groups": [[1000, "tj"], [27, "sudo"], [44, "video"]]},
               [('NVIDIA RTX PRO 6000 Blackwell Workstation Edition', ':01:00.0', 96 * G, '12.0', 5, 600.0)],
               '575.57.08', '12.9', 'ubuntu2504', '6.14.0-24-generic', open_module=True)
m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 3, "driver_version": "12.9", "devices": None}
f['sys/module/nvidia_uvm/parameters/uvm_disable_hmm'] = 'N\n'
save('ollama-blackwell-cuinit-not-initialized-uvm-hmm', 'https://github.com/ollama/ollama/issues/11593', m, f)

# ---------------------------------------------------------------------------------------------------------
# 2. vllm-project/vllm#11623 (2024-12-30), query "vllm CUDA driver version is insufficient".
# Thread: TencentOS Linux 3.1, Python 3.8 with packages in /usr/local/lib64/python3.8/site-packages,
# torch 2.4.0+cu121; "The NVIDIA driver on your system is too old (found version 11040)" (the driver
# supports CUDA 11.4); vLLM's _C fails with an undefined cuTensorMapEncodeTiled; the reporter asks for a
# CUDA 11.8 build.
# Filled in: driver 470.182.03 (a CUDA 11.4 driver), GPU (Tesla V100-SXM2-32GB at 00:08.0), kernel
# 5.4.119-19.0009.28 (a TencentOS 3.1 kernel), libraries in /usr/lib64, user root, no Secure Boot variable.
m, f = machine(ROOT, [('Tesla V100-SXM2-32GB', ':00:08.0', 32 * G, '7.0', 3, 300.0)],
               '470.182.03', '11.4', 'tencentos31', '5.4.119-19.0009.28', libdir='/usr/lib64')
del f[SB_PATH]
m['env'] = {"PATH": "/usr/local/bin:/usr/bin:/usr/local/sbin:/usr/sbin"}
f['usr/local/lib64/python3.8/site-packages/torch/version.py'] = torch_file('2.4.0+cu121', '12.1')
save('vllm-torch-cu121-driver-cuda-11-4-tencentos', 'https://github.com/vllm-project/vllm/issues/11623', m, f)

# ---------------------------------------------------------------------------------------------------------
# 3. vllm-project/vllm#8243 (2024-09), query "vllm no CUDA-capable device is detected".
# Thread: the vLLM OpenAI server image in a Kubernetes pod fails at startup (get_device_capability raises
# NotImplementedError: no GPU platform detected; another participant shows libcuda.so.1 not found); vLLM
# in /usr/local/lib/python3.10/dist-packages. The reporter found the pod spec had no
# `runtimeClassName: nvidia`, so the container ran without the NVIDIA runtime.
# Filled in: the capture is taken inside that pod (root, no device nodes, no driver libraries, kernel log
# not readable); the node's GPU (NVIDIA A10G at 00:1e.0), its driver 535.183.01 and kernel
# 5.15.0-1068-aws as seen through /proc and /sys; torch 2.4.0+cu121 (what vLLM 0.6.0 used); the service
# address; NVIDIA_VISIBLE_DEVICES/NVIDIA_DRIVER_CAPABILITIES as the CUDA base image sets them; cgroup v2.
m, f = machine(ROOT, [('NVIDIA A10G', ':00:1e.0', 24 * G, '8.6', 4, 300.0)], '535.183.01', '12.2', 'ubuntu2204', '5.15.0-1068-aws')
del f[SB_PATH]
m['device_nodes'] = []
m['libraries'] = []
m['nvml'] = {"status": {"kind": "unavailable", "summary": "The driver's management library (NVML) was not found.",
                        "next_step": "See the checklist.",
                        "attempts": [{"path": "libnvidia-ml.so.1", "error": "a libloading error occurred: libnvidia-ml.so.1: cannot open shared object file: No such file or directory"}]},
             "inventory": dict(NO_NVML), "samples": [], "facts": []}
m['cuda'] = {"library": None, "load_error": "libcuda.so.1: cannot open shared object file: No such file or directory", "init_code": None, "driver_version": None, "devices": None}
m['kernel_log'], m['kernel_log_source'] = KMSG_DENIED
m['env'] = {"KUBERNETES_SERVICE_HOST": "10.100.0.1", "NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_DRIVER_CAPABILITIES": "compute,utility",
            "PATH": "/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
f['proc/1/cgroup'] = '0::/\n'
f['usr/local/lib/python3.10/dist-packages/torch/version.py'] = torch_file('2.4.0+cu121', '12.1')
save('vllm-k8s-pod-without-nvidia-runtime-class', 'https://github.com/vllm-project/vllm/issues/8243', m, f)

# ---------------------------------------------------------------------------------------------------------
# 4. ollama/ollama#4563 (2024-05-21), query "ollama Failed to initialize NVML".
# Thread: the reporter updated the host's NVIDIA driver to the 555 release (RTX 4070 Ti); ollama 0.1.38
# inside an Ubuntu 20.04 container then ran on the CPU. Participants: with the 555 driver, nvidia-smi in a
# container says "Failed to initialize NVML: Unknown Error" and any CUDA container fails; going back to
# the previous driver fixed it, which the reporter confirmed.
# Filled in: the capture is taken inside that container (root, /.dockerenv); host driver 555.42.02 (the
# 555 Linux release of that day), CUDA 12.5, host kernel 6.5.0-35-generic, PCI address 01:00.0, 12 GB /
# cc 8.9; the device nodes present but refused (how "Unknown Error" looks from inside a container);
# NVIDIA_VISIBLE_DEVICES=all; cuInit returning 999. The host's OS is not stated (the thread's talk of the
# container toolkit's config.toml points to a Linux host).
m, f = machine(ROOT, [('NVIDIA GeForce RTX 4070 Ti', ':01:00.0', 12 * G, '8.9', 4, 285.0)], '555.42.02', '12.5', 'ubuntu2004', '6.5.0-35-generic')
del f[SB_PATH]
f['.dockerenv'] = ''
for n in m['device_nodes']:
    n['open'] = EPERM
m['nvml'] = {"status": {"kind": "unavailable", "summary": "NVML failed to start: Unknown Error", "next_step": "See the checklist.",
                        "attempts": [{"path": "libnvidia-ml.so.1", "error": "Unknown Error"}]},
             "inventory": dict(NO_NVML), "samples": [], "facts": []}
m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 999, "driver_version": "12.5", "devices": None}
m['kernel_log'], m['kernel_log_source'] = KMSG_DENIED
m['env'] = {"NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_DRIVER_CAPABILITIES": "compute,utility"}
save('ollama-container-after-host-driver-555', 'https://github.com/ollama/ollama/issues/4563', m, f)

# ---------------------------------------------------------------------------------------------------------
# 5. vllm-project/vllm#3812 (2024-04-03), query "vllm CUDA driver version is insufficient".
# Thread: Tesla V100 on a shared server whose driver supports CUDA 11.4, and the reporter may not
# upgrade it; the maintainer answers that vLLM's wheels (CUDA 12.1, or 11.8) need a newer driver.
# Filled in: driver 470.161.03, Tesla V100-PCIE-32GB at 3b:00.0, Ubuntu 20.04 / 5.4.0-150-generic, user,
# a conda environment "vllm" with torch 2.1.2+cu121 (what vLLM 0.4.0 installs), CONDA_PREFIX set.
m, f = machine({"name": "zhou", "uid": 1012, "groups": [[1012, "zhou"], [44, "video"]]},
               [('Tesla V100-PCIE-32GB', ':3b:00.0', 32 * G, '7.0', 3, 250.0)], '470.161.03', '11.4', 'ubuntu2004', '5.4.0-150-generic')
m['env'] = {"CONDA_PREFIX": "/home/zhou/miniconda3/envs/vllm", "PATH": "/home/zhou/miniconda3/envs/vllm/bin:/home/zhou/miniconda3/condabin:/usr/local/bin:/usr/bin:/bin"}
f['home/zhou/miniconda3/envs/vllm/lib/python3.10/site-packages/torch/version.py'] = torch_file('2.1.2+cu121', '12.1')
save('vllm-v100-driver-cuda-11-4-no-upgrade-rights', 'https://github.com/vllm-project/vllm/issues/3812', m, f)

# ---------------------------------------------------------------------------------------------------------
# 6. ollama/ollama#2934 (2024-03-06), query "ollama CUDA initialization: CUDA unknown error".
# Thread: Dell XPS laptop, RTX 4080 Laptop GPU (compute 8.9, 12 GB, VBIOS 95.04.3C.40.1D); ollama logs
# "Unable to init GPU: unknown error" (CUDA error 999). The maintainer closed it with a documentation
# change: after a suspend/resume the driver can leave CUDA broken; reloading nvidia_uvm (or a reboot)
# recovers it.
# Filled in: driver 545.29.06 (CUDA 12.3), Ubuntu 22.04 / 6.5.0-21-generic, user, PCI address 01:00.0,
# power limit, the Intel iGPU at 00:02.0; NVML still answering; PreserveVideoMemoryAllocations at its
# default 0; no kernel-log errors.
m, f = machine({"name": "dev", "uid": 1000, "groups": [[1000, "dev"], [27, "sudo"], [44, "video"]]},
               [('NVIDIA GeForce RTX 4080 Laptop GPU', ':01:00.0', 12 * G, '8.9', 4, 150.0)], '545.29.06', '12.3', 'ubuntu2204', '6.5.0-21-generic')
m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 999, "driver_version": "12.3", "devices": None}
f['proc/driver/nvidia/params'] = 'ResmanDebugLevel: 4294967295\nDynamicPowerManagement: 3\nPreserveVideoMemoryAllocations: 0\nEnableS0ixPowerManagement: 0\n'
f.update(pci_gpu('0000:00:02.0'))
f['sys/bus/pci/devices/0000:00:02.0/vendor'] = '0x8086\n'
# Added when captures learned to read it (issue 35, part 3): the thread's failure followed a resume,
# which the kernel counts in /sys/power/suspend_stats/success.
f['sys/power/suspend_stats/success'] = '1\n'
save('ollama-laptop-cuda-999-after-suspend', 'https://github.com/ollama/ollama/issues/2934', m, f)

# ---------------------------------------------------------------------------------------------------------
# 7. ollama/ollama#1898 (2024-01-10), found among the results of "ollama no CUDA-capable device is
# detected" (looking up #1167).
# Thread: RTX 5000 under WSL; ollama (run as a systemd service) logs "CUDA not detected: nvml vram init
# failure: 9"; other programs use the GPU. The reporter found that a libnvidia-ml in /lib/x86_64-linux-gnu
# is found before /usr/lib/wsl/lib/libnvidia-ml.so.1 (`ldconfig -p | grep libnvidia-ml` should list the
# WSL folder first) and fixed it with a link to the WSL library; NVML error 9 is "driver not loaded".
# Filled in: Quadro RTX 5000 (16 GB, cc 7.5), WSL Ubuntu 22.04 / 5.15.133.1-microsoft-standard-WSL2,
# user, the stray library being a Linux driver package's libnvidia-ml.so.1 at 545.23.08 (version
# chosen), libcuda from the WSL folder working (CUDA 12.3).
m = copy.deepcopy(json.load(open(f'{base}/healthy-wsl2/capture.json'))['meta'])
m['user'] = {"name": "zen", "uid": 1000, "groups": [[1000, "zen"], [27, "sudo"]]}
m['env'] = {"WSL_DISTRO_NAME": "Ubuntu-22.04"}
for n in m['device_nodes']:
    n['open'] = 'ok'
m['libraries'] = [
    {"name": "libcuda.so.1", "path": "/usr/lib/wsl/lib/libcuda.so.1", "real_path": "/usr/lib/wsl/lib/libcuda.so.1", "via": "ld.so.cache"},
    {"name": "libnvidia-ml.so.1", "path": "/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "real_path": "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.545.23.08", "via": "ld.so.cache"},
    {"name": "libnvidia-ml.so.1", "path": "/usr/lib/wsl/lib/libnvidia-ml.so.1", "real_path": "/usr/lib/wsl/lib/libnvidia-ml.so.1", "via": "ld.so.cache"},
]
m['nvml'] = {"status": {"kind": "unavailable", "summary": "NVML failed to start: Driver Not Loaded", "next_step": "See the checklist.",
                        "attempts": [{"path": "libnvidia-ml.so.1", "error": "Driver Not Loaded"}]},
             "inventory": dict(NO_NVML), "samples": [], "facts": []}
m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 0, "driver_version": "12.3", "devices": 1}
m['kernel_log'] = {"lines": []}
m['kernel_log_source'] = {"read": "/dev/kmsg", "tried": []}
m['renderer'] = None
f = {'etc/os-release': OS['ubuntu2204'], 'proc/sys/kernel/osrelease': '5.15.133.1-microsoft-standard-WSL2\n', 'proc/modules': ''}
save('ollama-wsl-linux-nvml-found-before-wsl-lib', 'https://github.com/ollama/ollama/issues/1898', m, f)

# ---------------------------------------------------------------------------------------------------------
# 8. vllm-project/vllm#1772 (2023-11-24), query "vllm CUDA driver version is insufficient".
# Thread: building vLLM from source fails at import with "RuntimeError: The NVIDIA driver on your system
# is too old"; the maintainer answers that the driver only covers CUDA 11.4 and must be upgraded.
# Filled in: driver 470.199.02, GPU (NVIDIA A100-PCIE-40GB at 81:00.0), Ubuntu 20.04 / 5.4.0-165-generic,
# user, a venv in the source checkout with torch 2.1.0+cu121 (what vLLM 0.2.2 required), run from there.
m, f = machine({"name": "lab", "uid": 1001, "groups": [[1001, "lab"], [44, "video"]]},
               [('NVIDIA A100-PCIE-40GB', ':81:00.0', 40 * G, '8.0', 4, 250.0)], '470.199.02', '11.4', 'ubuntu2004', '5.4.0-165-generic')
home = 'home/lab/src/vllm'
m['env'] = {"VIRTUAL_ENV": f"/{home}/.venv", "PWD": f"/{home}", "PATH": f"/{home}/.venv/bin:/usr/local/bin:/usr/bin:/bin"}
f[f'{home}/.venv/lib/python3.10/site-packages/torch/version.py'] = torch_file('2.1.0+cu121', '12.1')
save('vllm-source-build-driver-cuda-11-4', 'https://github.com/vllm-project/vllm/issues/1772', m, f)

# ---------------------------------------------------------------------------------------------------------
# 9. jax-ml/jax#11477 (2022-07-13), query "jax failed call to cuInit" (the cuInit query).
# Thread: after an upgrade on Ubuntu 22.04, jax prints "kernel version 515.48.7 does not match DSO version
# 510.73.5 -- cannot find working devices in this configuration": the loaded kernel module is 515.48.07
# while the user-space libcuda is 510.73.05. The maintainer: not a JAX problem, the kernel module and the
# installed libraries differ, a reboot may help; the reporter got it working by reinstalling the 510 driver.
# Filled in: GPU (RTX 3080 at 01:00.0), kernel 5.15.0-41-generic, user, libnvidia-ml also at 510.73.05,
# NVML's "Driver/library version mismatch", the kernel's API-mismatch line, cuInit returning 803
# (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH), libcuda reporting CUDA 11.6. No Python files (jax is not read).
m, f = machine({"name": "cottrell", "uid": 1000, "groups": [[1000, "cottrell"], [27, "sudo"], [44, "video"]]},
               [('NVIDIA GeForce RTX 3080', ':01:00.0', 10 * G, '8.6', 4, 320.0)], '515.48.07', '11.7', 'ubuntu2204', '5.15.0-41-generic')
m['libraries'] = [dict(l, via='ld.so.cache') for l in nvidia_libs('/usr/lib/x86_64-linux-gnu', '510.73.05')]
m['nvml'] = {"status": {"kind": "unavailable", "summary": "NVML failed to start: Driver/library version mismatch", "next_step": "See the checklist.",
                        "attempts": [{"path": "libnvidia-ml.so.1", "error": "Driver/library version mismatch"}]},
             "inventory": dict(NO_NVML), "samples": [], "facts": []}
m['kernel_log'] = {"lines": [
    "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  515.48.07  Release Build  (dvs-builder@U16-T02-35-3)",
    "NVRM: API mismatch: the client has the version 510.73.05, but NVRM: this kernel module has the version 515.48.07.  Please make sure that this kernel module and all NVIDIA driver components have the same version.",
]}
m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 803, "driver_version": "11.6", "devices": None}
save('jax-module-515-libraries-510', 'https://github.com/jax-ml/jax/issues/11477', m, f)

# ---------------------------------------------------------------------------------------------------------
# 10. pytorch/pytorch#31243 (2019-12-13), query "torch.cuda.is_available() False".
# Thread: Ubuntu 18.04, Anaconda Python 3.7.5, `pip install torch===1.3.0`, torch.cuda.is_available()
# returns False; nvidia-smi gives driver 410.48. The maintainer: the driver must be updated to at least
# 418.39 (the 1.3.0 wheels are built with CUDA 10.1).
# Filled in: GPU (GeForce GTX 1080 Ti at 01:00.0), kernel 4.15.0-72-generic, user, Anaconda at
# ~/anaconda3 with torch in its base site-packages, version.py as the 1.3 wheels wrote it (cuda '10.1').
m, f = machine({"name": "ucas", "uid": 1000, "groups": [[1000, "ucas"], [27, "sudo"], [44, "video"]]},
               [('GeForce GTX 1080 Ti', ':01:00.0', 11 * G, '6.1', 3, 250.0)], '410.48', '10.0', 'ubuntu1804', '4.15.0-72-generic')
m['env'] = {"CONDA_PREFIX": "/home/ucas/anaconda3", "PATH": "/home/ucas/anaconda3/bin:/home/ucas/anaconda3/condabin:/usr/local/bin:/usr/bin:/bin"}
f['home/ucas/anaconda3/lib/python3.7/site-packages/torch/version.py'] = "__version__ = '1.3.0'\ndebug = False\ncuda = '10.1'\n"
save('torch-1-3-cu101-driver-410', 'https://github.com/pytorch/pytorch/issues/31243', m, f)

print('ok')
