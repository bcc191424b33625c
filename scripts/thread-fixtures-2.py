#!/usr/bin/env python3
"""Writes the second set of checklist fixtures taken from public threads, as capture format
version 2 (every library candidate, device-node open results, MIG devices, the kernel log's
source). As in thread-fixtures.py, each fixture holds the facts its thread states (URL in the
top-level "source"); what a thread does not give (user, distribution release, kernel, driver patch
level, PCI addresses) is chosen to vary and marked "chosen" in the comments.
Run: python3 scripts/thread-fixtures-2.py
"""
import sys, os, json, copy, zlib
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_lib import *

OS = {
 'ubuntu2204': 'PRETTY_NAME="Ubuntu 22.04.4 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\nID=ubuntu\nID_LIKE=debian\n',
 'ubuntu2210': 'PRETTY_NAME="Ubuntu 22.10"\nNAME="Ubuntu"\nVERSION_ID="22.10"\nID=ubuntu\nID_LIKE=debian\n',
 'ubuntu2004': 'PRETTY_NAME="Ubuntu 20.04.6 LTS"\nNAME="Ubuntu"\nVERSION_ID="20.04"\nID=ubuntu\nID_LIKE=debian\n',
 'ubuntu1604': 'PRETTY_NAME="Ubuntu 16.04.4 LTS"\nNAME="Ubuntu"\nVERSION_ID="16.04"\nID=ubuntu\nID_LIKE=debian\n',
 'ubuntu1404': 'PRETTY_NAME="Ubuntu 14.04.5 LTS"\nNAME="Ubuntu"\nVERSION_ID="14.04"\nID=ubuntu\nID_LIKE=debian\n',
 'ubuntu2304': 'PRETTY_NAME="Ubuntu Lunar Lobster (development branch)"\nNAME="Ubuntu"\nVERSION_ID="23.04"\nID=ubuntu\nID_LIKE=debian\n',
 'rhel8': 'NAME="Red Hat Enterprise Linux"\nVERSION="8.6 (Ootpa)"\nID="rhel"\nID_LIKE="fedora"\nVERSION_ID="8.6"\nPRETTY_NAME="Red Hat Enterprise Linux 8.6 (Ootpa)"\n',
 'fedora27': 'NAME=Fedora\nVERSION="27 (Workstation Edition)"\nID=fedora\nVERSION_ID=27\nPRETTY_NAME="Fedora 27 (Workstation Edition)"\n',
 'arch': 'NAME="Arch Linux"\nPRETTY_NAME="Arch Linux"\nID=arch\nBUILD_ID=rolling\n',
 'cachyos': 'NAME="CachyOS Linux"\nPRETTY_NAME="CachyOS"\nID=cachyos\nID_LIKE=arch\nBUILD_ID=rolling\n',
 'bottlerocket': 'NAME=Bottlerocket\nID=bottlerocket\nVERSION="1.30.0 (aws-k8s-1.30-nvidia)"\nPRETTY_NAME="Bottlerocket OS 1.30.0 (aws-k8s-1.30-nvidia)"\nVARIANT_ID=aws-k8s-1.30-nvidia\n',
 'debian12': 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nID=debian\n',
}
SB_OFF = bytes([6, 0, 0, 0, 0])
SB_ON = bytes([6, 0, 0, 0, 1])


def version_file(driver, open_module=False):
    kind = 'Open Kernel Module' if open_module else 'Kernel Module'
    return f'NVRM version: NVIDIA UNIX x86_64 {kind}  {driver}  Release Build  (dvs-builder@U16-T02-35-3)\nGCC version:  gcc version 11.4.0\n'


def healthy(user, gpus, driver, cuda, distro, kernel, libdir='/usr/lib/x86_64-linux-gnu', open_module=False):
    """A working machine: `gpus` is a list of (name, bus ':0b:00.0', vram bytes, compute capability,
    max PCIe gen, power W). Returns (meta, files) for a fault to be applied to."""
    m = copy.deepcopy(src['meta'])
    m['user'] = user
    m['env'] = {}
    m['device_nodes'] = [node('/dev/nvidiactl', 195, 255), node('/dev/nvidia-uvm', 510, 0)] + \
        [node(f'/dev/nvidia{i}', 195, i) for i in range(len(gpus))]
    for n in m['device_nodes']:
        n['open'] = 'ok'
    m['links'] = {f'/sys/bus/pci/devices/0000{g[1]}/driver': '../../../bus/pci/drivers/nvidia' for g in gpus}
    m['listings'] = {}
    uuid = lambda i: f'GPU-{zlib.crc32(f"{driver}-{i}".encode()):08x}-1f2e-4d3c-8b4a-{i:012x}'
    m['nvml'] = {"status": {"kind": "nvml", "library": "libnvidia-ml.so.1", "attempts": []},
                 "inventory": {"driver_version": driver, "cuda_driver_version": cuda, "nvml_version": f"{cuda.split('.')[0]}.{driver}",
                               "gpus": [gpu_info(i, g[0], uuid(i), g[1], g[2], g[3], g[4], g[5], 1800, 5000, 90) for i, g in enumerate(gpus)]},
                 "samples": [sample(i, g[2], g[5]) for i, g in enumerate(gpus)],
                 "facts": [facts(i) for i in range(len(gpus))]}
    for f in m['nvml']['facts']:
        f['mig_devices'] = {"na": "MIG is off"}
    m['libraries'] = [dict(l, via='ld.so.cache') for l in nvidia_libs(libdir, driver)]
    m['kernel_log'] = {"lines": [f"NVRM: loading NVIDIA UNIX x86_64 Kernel Module  {driver}  Release Build  (dvs-builder@U16-T02-35-3)"]}
    m['kernel_log_source'] = {"read": "/dev/kmsg", "tried": []}
    m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 0, "driver_version": cuda, "devices": len(gpus)}
    files = {
        'etc/os-release': OS[distro],
        'proc/sys/kernel/osrelease': kernel + '\n',
        'proc/modules': 'nvidia_uvm 1372160 0 - Live 0x0000000000000000 (POE)\nnvidia 56512512 1 nvidia_uvm, Live 0x0000000000000000 (POE)\n',
        'proc/driver/nvidia/version': version_file(driver, open_module),
        'sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c': SB_OFF,
    }
    for g in gpus:
        files.update(pci_gpu('0000' + g[1], '0x030200' if 'Tesla' in g[0] or 'A1' in g[0] or 'A100' in g[0] else '0x030000'))
    return m, files


def torch(ver, cuda):
    return f"__version__ = '{ver}'\ndebug = False\ncuda: Optional[str] = '{cuda}'\nhip: Optional[str] = None\n"


def save(name, url, m, files):
    make(name, url, m, files, version=2)


G = 1 << 30
RTX2080TI = ('NVIDIA GeForce RTX 2080 Ti', 11 * G, '7.5', 3, 250.0)
A100_40 = ('NVIDIA A100-SXM4-40GB', 40 * G, '8.0', 4, 400.0)


def gpu(model, bus):
    return (model[0], bus, model[1], model[2], model[3], model[4])


# --- A. A Linux driver inside WSL2 -------------------------------------------------------------
wsl = json.load(open(f'{base}/healthy-wsl2/capture.json'))['meta']
wsl_files = {'etc/os-release': OS['ubuntu2210'], 'proc/sys/kernel/osrelease': '5.15.79.1-microsoft-standard-WSL2\n', 'proc/modules': ''}

# microsoft/WSL#9166: `apt install nvidia-utils-510` inside Ubuntu 22.10 on WSL2 (RTX 2080 Ti);
# nvidia-smi "Failed to initialize NVML: GPU access blocked by the operating system". The package's
# libnvidia-ml.so.1 comes first in the loader cache (510.108.03 chosen); libcuda still from Windows.
m = copy.deepcopy(wsl)
m['user'] = {"name": "kenji", "uid": 1000, "groups": [[1000, "kenji"], [27, "sudo"]]}
m['env'] = {"WSL_DISTRO_NAME": "Ubuntu-22.10"}
m['libraries'] = [
    {"name": "libcuda.so.1", "path": "/usr/lib/wsl/lib/libcuda.so.1", "real_path": "/usr/lib/wsl/lib/libcuda.so.1", "via": "ld.so.cache"},
    {"name": "libnvidia-ml.so.1", "path": "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "real_path": "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.510.108.03", "via": "ld.so.cache"},
    {"name": "libnvidia-ml.so.1", "path": "/usr/lib/wsl/lib/libnvidia-ml.so.1", "real_path": "/usr/lib/wsl/lib/libnvidia-ml.so.1", "via": "ld.so.cache"},
]
m['kernel_log_source'] = {"read": "/dev/kmsg", "tried": []}
m['renderer'] = None
save('wsl-nvidia-utils-shadows-nvml', 'https://github.com/microsoft/WSL/issues/9166', m, dict(wsl_files))

# NVIDIA/nvidia-docker#1551 (re-reported as nvidia-container-toolkit#289): libnvidia-compute-470
# 470.57.02 installed inside the WSL distribution; its libcuda and libnvidia-ml shadow the Windows ones.
m = copy.deepcopy(wsl)
m['user'] = {"name": "dev", "uid": 1000, "groups": [[1000, "dev"], [27, "sudo"], [998, "docker"]]}
m['env'] = {"WSL_DISTRO_NAME": "Ubuntu-20.04"}
m['libraries'] = []
for n in ("libcuda.so.1", "libnvidia-ml.so.1"):
    stem = n.rsplit('.so', 1)[0]
    m['libraries'] += [
        {"name": n, "path": f"/usr/lib/x86_64-linux-gnu/{n}", "real_path": f"/usr/lib/x86_64-linux-gnu/{stem}.so.470.57.02", "via": "ld.so.cache"},
        {"name": n, "path": f"/usr/lib/wsl/lib/{n}", "real_path": f"/usr/lib/wsl/lib/{n}", "via": "ld.so.cache"},
    ]
m['kernel_log_source'] = {"read": "/dev/kmsg", "tried": []}
m['renderer'] = None
save('wsl-libnvidia-compute-470-inside', 'https://github.com/NVIDIA/nvidia-docker/issues/1551', m,
     dict(wsl_files, **{'etc/os-release': OS['ubuntu2004'], 'proc/sys/kernel/osrelease': '5.10.60.1-microsoft-standard-WSL2\n'}))

# microsoft/WSL#11888: "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system" after
# packages were installed and removed; the WSL library folder is no longer on the loader's path
# (the reporter repaired links). A conda base environment is active.
m = copy.deepcopy(wsl)
m['user'] = {"name": "york", "uid": 1000, "groups": [[1000, "york"], [27, "sudo"]]}
m['env'] = {"WSL_DISTRO_NAME": "Ubuntu", "CONDA_PREFIX": "/home/york/miniconda3"}
m['libraries'] = [
    {"name": "libcuda.so.1", "path": "/usr/lib/wsl/lib/libcuda.so.1", "real_path": "/usr/lib/wsl/lib/libcuda.so.1", "via": "not on the loader's path"},
    {"name": "libnvidia-ml.so.1", "path": "/usr/lib/wsl/lib/libnvidia-ml.so.1", "real_path": "/usr/lib/wsl/lib/libnvidia-ml.so.1", "via": "not on the loader's path"},
]
m['kernel_log_source'] = {"read": "/dev/kmsg", "tried": []}
m['renderer'] = None
save('wsl-lib-folder-off-the-loader-path', 'https://github.com/microsoft/WSL/issues/11888', m,
     dict(wsl_files, **{'etc/os-release': OS['ubuntu2204'], 'proc/sys/kernel/osrelease': '5.15.153.1-microsoft-standard-WSL2\n'}))

# --- B. MIG on, no instance ---------------------------------------------------------------------
# wilicc/gpu-burn#122: 4x A100-SXM4-40GB; MIG enabled on GPU 0 (00000000:06:00.0) with no
# instances; gpu_burn fails to initialise while MIG is on (driver 525.105.17, Ubuntu 20.04 chosen).
m, f = healthy({"name": "user", "uid": 1000, "groups": [[1000, "user"], [44, "video"], [27, "sudo"]]},
               [gpu(A100_40, b) for b in (':06:00.0', ':07:00.0', ':47:00.0', ':4e:00.0')], '525.105.17', '12.0', 'ubuntu2004', '5.4.0-150-generic')
m['nvml']['facts'][0]['mig'] = [True, True]
m['nvml']['facts'][0]['mig_devices'] = 0
m['cuda']['devices'] = 3
save('mig-on-without-instances-a100-sxm', 'https://github.com/wilicc/gpu-burn/issues/122', m, f)

# nanoporetech/megalodon#275: an A100-PCIE-40GB partitioned with MIG, no instance assigned to the
# session; guppy "CUDA_ERROR_NO_DEVICE" (RHEL 8 and driver 515.65.01 chosen).
m, f = healthy({"name": "nanopore", "uid": 1005, "groups": [[1005, "nanopore"], [39, "video"]]},
               [('NVIDIA A100-PCIE-40GB', ':3b:00.0', 40 * G, '8.0', 4, 250.0)], '515.65.01', '11.7', 'rhel8', '4.18.0-372.9.1.el8.x86_64',
               libdir='/usr/lib64')
m['nvml']['facts'][0]['mig'] = [True, True]
m['nvml']['facts'][0]['mig_devices'] = 0
m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 100, "driver_version": "11.7", "devices": None}
save('mig-on-without-instances-cuda-no-device', 'https://github.com/nanoporetech/megalodon/issues/275', m, f)

# --- C. A container that lost its GPUs ------------------------------------------------------------
def lost_container(m):
    for n in m['device_nodes']:
        n['open'] = 'Operation not permitted (os error 1)'
    m['nvml'] = {"status": {"kind": "unavailable", "summary": "NVML failed to start: Unknown Error",
                            "next_step": "See the checklist.", "attempts": [{"path": "libnvidia-ml.so.1", "error": "Unknown Error"}]},
                 "inventory": {"driver_version": None, "cuda_driver_version": None, "nvml_version": None, "gpus": []}, "samples": [], "facts": []}
    m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 999, "driver_version": m['cuda']['driver_version'], "devices": None}
    m['kernel_log'] = {"unreadable": "the kernel log is not readable by this user (/dev/kmsg: Operation not permitted (os error 1)); run `sudo dmesg | grep -i -e nvrm -e xid` to see it"}
    m['kernel_log_source'] = {"read": None, "tried": [["/dev/kmsg", "Operation not permitted (os error 1)"]]}
    m['env'] = {"NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_DRIVER_CAPABILITIES": "compute,utility"}

# NVIDIA/nvidia-docker#1671: `docker run --gpus all ... nvidia/cuda:11.4.2-base-ubuntu18.04`, then
# `systemctl daemon-reload` on the host; nvidia-smi inside: "Failed to initialize NVML: Unknown
# Error". RTX 2080 Ti at 00000000:02:00.0, host driver 510.68.02 (CUDA 11.6).
m, f = healthy({"name": "root", "uid": 0, "groups": [[0, "root"]]}, [gpu(RTX2080TI, ':02:00.0')], '510.68.02', '11.6', 'ubuntu2004', '5.13.0-52-generic')
lost_container(m)
f['.dockerenv'] = ''
f['etc/os-release'] = 'NAME="Ubuntu"\nVERSION="18.04.6 LTS (Bionic Beaver)"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID="18.04"\n'
del f['sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c']
save('container-lost-gpus-after-daemon-reload', 'https://github.com/NVIDIA/nvidia-docker/issues/1671', m, f)

# NVIDIA/nvidia-container-toolkit#1227: Ubuntu 22.04 host (5.15.0-25-generic, systemd 249),
# driver 570.133.20, 2x A10 + 2x T4; after `systemctl daemon-reload` the container's
# `nvidia-smi -L` says "Failed to initialize NVML: Unknown Error" while the host lists the GPUs.
m, f = healthy({"name": "root", "uid": 0, "groups": [[0, "root"]]},
               [('NVIDIA A10', ':17:00.0', 24 * G, '8.6', 4, 150.0), ('NVIDIA A10', ':31:00.0', 24 * G, '8.6', 4, 150.0),
                ('Tesla T4', ':b1:00.0', 16 * G, '7.5', 3, 70.0), ('Tesla T4', ':ca:00.0', 16 * G, '7.5', 3, 70.0)],
               '570.133.20', '12.8', 'ubuntu2204', '5.15.0-25-generic', open_module=True)
lost_container(m)
f['.dockerenv'] = ''
del f['sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c']
save('container-lost-gpus-a10-t4', 'https://github.com/NVIDIA/nvidia-container-toolkit/issues/1227', m, f)

# --- D. Lockdown, Secure Boot, PCIe AER -----------------------------------------------------------
def no_module(m, f):
    f['proc/modules'] = 'nls_ascii 16384 1 - Live 0x0000000000000000\n'
    del f['proc/driver/nvidia/version']
    m['device_nodes'] = []
    m['links'] = {}
    m['nvml'] = {"status": {"kind": "unavailable", "summary": "The NVIDIA library is installed but the kernel driver is not loaded.",
                            "next_step": "Check lsmod.", "attempts": [{"path": "libnvidia-ml.so.1", "error": "Driver Not Loaded"}]},
                 "inventory": {"driver_version": None, "cuda_driver_version": None, "nvml_version": None, "gpus": []}, "samples": [], "facts": []}
    m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 100, "driver_version": m['cuda']['driver_version'], "devices": 0}

# bottlerocket-os/bottlerocket#4218: kernel lockdown=integrity refuses the NVIDIA modules
# (modprobe: "could not insert 'nvidia': Operation not permitted"); the kernel's own lockdown
# notice is the line it prints in that case. EC2 instance (no EFI Secure Boot variable), T4 and
# driver 535.183.01 chosen.
m, f = healthy({"name": "root", "uid": 0, "groups": [[0, "root"]]}, [('Tesla T4', ':00:1e.0', 16 * G, '7.5', 3, 70.0)],
               '535.183.01', '12.2', 'bottlerocket', '6.1.102', libdir='/usr/lib64')
no_module(m, f)
del f['sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c']
f['lib/modules/6.1.102/kernel/drivers/extra/video/nvidia/tesla/nvidia.ko'] = ''
m['kernel_log'] = {"lines": ["Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7"] * 3}
save('lockdown-refuses-unsigned-module', 'https://github.com/bottlerocket-os/bottlerocket/issues/4218', m, f)

# acidanthera/bugtracker#2237: Ubuntu 23.04, Secure Boot on with a MOK enrolled, DKMS 3.0.10,
# driver 530.30.02: "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service".
m, f = healthy({"name": "cs", "uid": 1000, "groups": [[1000, "cs"], [27, "sudo"]]}, [('NVIDIA GeForce RTX 3060', ':01:00.0', 12 * G, '8.6', 4, 170.0)],
               '530.30.02', '12.1', 'ubuntu2304', '6.2.0-20-generic')
no_module(m, f)
f['sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c'] = SB_ON
f['lib/modules/6.2.0-20-generic/updates/dkms/nvidia.ko'] = ''
m['kernel_log'] = {"lines": ["modprobe: ERROR: could not insert 'nvidia': Key was rejected by service"]}
save('secure-boot-key-rejected-dkms', 'https://github.com/acidanthera/bugtracker/issues/2237', m, f)

# rwth-i6/returnn#1500: a training job hangs; the kernel log shows fatal PCIe AER errors on the
# GPU's root port ("PCIe Bus Error: severity=Uncorrected (Fatal)", "CmpltTO", "AER: device
# recovery failed") for nvidia 0000:03:00.0. No Xid line. (GPU, driver and distribution chosen.)
m, f = healthy({"name": "zeyer", "uid": 1000, "groups": [[1000, "zeyer"], [44, "video"]]}, [('NVIDIA GeForce GTX 1080 Ti', ':03:00.0', 11 * G, '6.1', 3, 250.0)],
               '535.104.05', '12.2', 'ubuntu2204', '5.15.0-86-generic')
m['kernel_log'] = {"lines": [
    "nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)",
    "pcieport 0000:00:03.0: AER: Multiple Uncorrected (Fatal) error received: 0000:00:03.0",
    "pcieport 0000:00:03.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)",
    "pcieport 0000:00:03.0: AER: Root Port link has been reset (0)",
    "pcieport 0000:00:03.0: AER: device recovery failed",
]}
save('pcie-aer-fatal-errors-no-xid', 'https://github.com/rwth-i6/returnn/issues/1500', m, f)

# --- E. PyTorch built for a newer CUDA than the driver, in environments not activated -------------
# AUTOMATIC1111/stable-diffusion-webui#15282: Quadro RTX 5000, "The NVIDIA driver on your system is
# too old (found version 11040)"; torch in the web UI's venv at
# /home/brogalski/bachelorarbeit/models/stable-diffusion-webui/venv (run from that folder; torch
# 2.1.2+cu121 and driver 470.223.02 chosen).
m, f = healthy({"name": "brogalski", "uid": 1000, "groups": [[1000, "brogalski"], [44, "video"]]},
               [('Quadro RTX 5000', ':65:00.0', 16 * G, '7.5', 3, 230.0)], '470.223.02', '11.4', 'ubuntu2004', '5.15.0-91-generic')
home = '/home/brogalski/bachelorarbeit/models/stable-diffusion-webui'
m['env'] = {"PWD": home, "PATH": "/usr/local/bin:/usr/bin:/bin"}
f[home.lstrip('/') + '/venv/lib/python3.10/site-packages/torch/version.py'] = torch('2.1.2+cu121', '12.1')
save('torch-cu121-in-project-venv-driver-470', 'https://github.com/AUTOMATIC1111/stable-diffusion-webui/issues/15282', m, f)

# IEIT-Yuan/Yuan-2.0#65: fine-tuning in the provided CUDA 12.1 container, torch in
# /usr/local/lib/python3.10/dist-packages; the host driver reports CUDA 11.0 ("found version 11000"):
# an early 450 driver (450.51.06 chosen), too old even for minor-version compatibility.
m, f = healthy({"name": "root", "uid": 0, "groups": [[0, "root"]]}, [('NVIDIA A100-SXM4-80GB', ':4b:00.0', 80 * G, '8.0', 4, 400.0)],
               '450.51.06', '11.0', 'ubuntu2204', '5.4.0-42-generic')
f['.dockerenv'] = ''
m['env'] = {"NVIDIA_VISIBLE_DEVICES": "all", "PATH": "/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin"}
f['usr/local/lib/python3.10/dist-packages/torch/version.py'] = torch('2.1.0+cu121', '12.1')
save('torch-cu121-container-driver-450', 'https://github.com/IEIT-Yuan/Yuan-2.0/issues/65', m, f)

# RVC-Boss/GPT-SoVITS#83: "The NVIDIA driver on your system is too old (found version 11040)"; the
# maintainers build with cu118/cu121. Here the environment lives under /data/conda/envs (listed in
# ~/.conda/environments.txt, not activated); torch 2.1.1+cu121, driver 470.182.03 chosen.
m, f = healthy({"name": "lin", "uid": 1001, "groups": [[1001, "lin"], [44, "video"]]},
               [('NVIDIA GeForce RTX 3090', ':1a:00.0', 24 * G, '8.6', 4, 350.0)], '470.182.03', '11.4', 'debian12', '6.1.0-18-amd64')
f['home/lin/.conda/environments.txt'] = '/home/lin/miniforge3\n/data/conda/envs/GPTSoVits\n'
f['data/conda/envs/GPTSoVits/lib/python3.9/site-packages/torch/version.py'] = torch('2.1.1+cu121', '12.1')
m['listings'] = {"/home": ["lin"]}
save('torch-cu121-conda-env-elsewhere-driver-470', 'https://github.com/RVC-Boss/GPT-SoVITS/issues/83', m, f)

# --- F. Hardware faults ------------------------------------------------------------------------------
# wilicc/gpu-burn#1: during a burn test, "PCIe Bus Error: severity=Uncorrected (Fatal)" / "Surprise
# Down Error" on the root port, then "NVRM: Xid (PCI:0000:02:00): 79, GPU has fallen off the bus";
# CUDA_ERROR_UNKNOWN. (Tesla P100 and driver 418.87.01 chosen.)
m, f = healthy({"name": "burn", "uid": 1000, "groups": [[1000, "burn"], [44, "video"]]},
               [('Tesla P100-PCIE-16GB', ':02:00.0', 16 * G, '6.0', 3, 250.0)], '418.87.01', '10.1', 'ubuntu1604', '4.4.0-166-generic')
m['nvml']['samples'][0].update({"health": {"Lost": "GPU has fallen off the bus and stopped answering. Look for Xid 79 in the kernel log."}})
m['kernel_log'] = {"lines": [
    "pcieport 0000:00:02.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, id=0010(Receiver ID)",
    "pcieport 0000:00:02.0:    [ 5] Surprise Down Error    (First)",
    "nvidia 0000:02:00.0: device has no AER-aware driver",
    "NVRM: GPU at PCI:0000:02:00: GPU-660d987e-5b28-3bf6-2a2d-1d5ecae7f6df",
    "NVRM: Xid (PCI:0000:02:00): 79, GPU has fallen off the bus.",
]}
m['cuda']['init_code'] = 999
m['cuda']['devices'] = None
save('xid-79-after-pcie-surprise-down', 'https://github.com/wilicc/gpu-burn/issues/1', m, f)

# NVIDIA/open-gpu-kernel-modules#789: Ubuntu 22.04 (5.15.0-131-generic), driver 550.144.03, RTX
# 3090 at 0000:98:00.0: "RmInitAdapter: Cannot initialize GSP firmware RM", "RmInitAdapter
# failed!", "failed to wait for GFW_BOOT"; no Xid line; NVML finds no GPU.
m, f = healthy({"name": "ml", "uid": 1000, "groups": [[1000, "ml"], [44, "video"]]},
               [('NVIDIA GeForce RTX 3090', ':98:00.0', 24 * G, '8.6', 4, 350.0)], '550.144.03', '12.4', 'ubuntu2204', '5.15.0-131-generic', open_module=True)
m['nvml']['inventory']['gpus'] = []
m['nvml']['samples'] = []
m['nvml']['facts'] = []
m['kernel_log'] = {"lines": [
    "NVRM: RmInitAdapter: Cannot initialize GSP firmware RM",
    "NVRM: GPU 0000:98:00.0: RmInitAdapter failed! (0x62:0x65:1792)",
    "NVRM: GPU 0000:98:00.0: rm_init_adapter failed, device minor number 0",
    "NVRM: gpuWaitForGfwBootComplete_TU102: failed to wait for GFW_BOOT: (progress 0x3)",
    "NVRM: kgspWaitForGfwBootOk_TU102: failed to wait for GFW boot complete: 0x65 VBIOS version 94.02.59.00.05",
]}
m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 100, "driver_version": "12.4", "devices": None}
save('rminitadapter-failed-gsp-no-xid', 'https://github.com/NVIDIA/open-gpu-kernel-modules/issues/789', m, f)

# --- G. Calls that never return -----------------------------------------------------------------------
def hung(m):
    m['nvml'] = {"status": {"kind": "opening"}, "inventory": {"driver_version": None, "cuda_driver_version": None, "nvml_version": None, "gpus": []},
                 "samples": [], "facts": [], "did_not_return": 5}
    m['cuda'] = {"library": None, "load_error": None, "init_code": None, "driver_version": None, "devices": None, "did_not_return": 5}

# NVIDIA/dcgm-exporter#84: RHEL 8 Kubernetes node, A100 with MIG, driver 515.48.07; after the
# exporter was killed the GPU froze: Xid 120 "GSP Error" then Xid 119 "Timeout waiting for RPC from GSP!".
m, f = healthy({"name": "root", "uid": 0, "groups": [[0, "root"]]}, [('NVIDIA A100-PCIE-40GB', ':3b:00.0', 40 * G, '8.0', 4, 250.0)],
               '515.48.07', '11.7', 'rhel8', '4.18.0-372.16.1.el8_6.x86_64', libdir='/usr/lib64')
hung(m)
m['kernel_log'] = {"lines": [
    "NVRM: Xid (PCI:0000:3b:00): 120, pid='<unknown>', name=<unknown>, GSP Error: Task 1 raised error code 0x5 for reason 0x0 at 0x63f01ac (0 more errors skipped)",
    "NVRM: Xid (PCI:0000:3b:00): 119, pid='<unknown>', name=<unknown>, Timeout waiting for RPC from GSP! Expected function FREE (0x0 0x0).",
]}
save('gsp-error-then-rpc-timeout-driver-hung', 'https://github.com/NVIDIA/dcgm-exporter/issues/84', m, f)

# NVIDIA/nvidia-docker#377: Azure VM, Ubuntu 16.04.4, Tesla K80, driver 375.51: nvidia-smi,
# nvidia-persistenced and the docker plugin stuck in D state. Run as an ordinary user, so the kernel
# log is not readable: the hang is still named, with how to read the log.
m, f = healthy({"name": "azureuser", "uid": 1000, "groups": [[1000, "azureuser"], [4, "adm"], [27, "sudo"]]},
               [('Tesla K80', ':00:04.0', 12 * G, '3.7', 3, 149.0)], '375.51', '8.0', 'ubuntu1604', '4.13.0-1016-azure')
hung(m)
m['kernel_log'] = {"unreadable": "the kernel log is not readable by this user (/dev/kmsg: Operation not permitted (os error 1); /var/log/kern.log: Permission denied (os error 13); /var/log/syslog: Permission denied (os error 13); /var/log/messages: No such file or directory (os error 2)); run `sudo dmesg | grep -i -e nvrm -e xid` to see it"}
m['kernel_log_source'] = {"read": None, "tried": [["/dev/kmsg", "Operation not permitted (os error 1)"], ["/var/log/kern.log", "Permission denied (os error 13)"],
                                                  ["/var/log/syslog", "Permission denied (os error 13)"], ["/var/log/messages", "No such file or directory (os error 2)"]]}
save('nvidia-smi-stuck-in-d-state', 'https://github.com/NVIDIA/nvidia-docker/issues/377', m, f)

# --- I. No module for the running kernel ----------------------------------------------------------------
def module_for_other_kernel(m, f, old, new, module_path):
    no_module(m, f)
    f['proc/sys/kernel/osrelease'] = new + '\n'
    f[f'lib/modules/{old}/{module_path}'] = ''
    f[f'lib/modules/{new}/kernel/drivers/video/fbdev/.keep'] = ''
    m['kernel_log'] = {"lines": []}

# NVIDIA/nvidia-docker#365: the host driver came from the .run installer; after an update to
# 3.13.0-116-generic "modprobe: FATAL: Module nvidia not found" (the module exists only under
# /lib/modules/3.13.0-88-generic/kernel/drivers/video/nvidia.ko; dkms not installed).
m, f = healthy({"name": "root", "uid": 0, "groups": [[0, "root"]]}, [('GeForce GTX TITAN X', ':03:00.0', 12 * G, '5.2', 3, 250.0)],
               '375.39', '8.0', 'ubuntu1404', '3.13.0-116-generic')
module_for_other_kernel(m, f, '3.13.0-88-generic', '3.13.0-116-generic', 'kernel/drivers/video/nvidia.ko')
save('run-installer-module-for-old-kernel', 'https://github.com/NVIDIA/nvidia-docker/issues/365', m, f)

# negativo17/nvidia-driver#39: Fedora 27 after the update to 4.14.13-300.fc27.x86_64, driver 387.34,
# Quadro M3000M at 01:00.0: the akmod had not built a module for the new kernel.
m, f = healthy({"name": "mk", "uid": 1000, "groups": [[1000, "mk"], [10, "wheel"]]}, [('Quadro M3000M', ':01:00.0', 4 * G, '5.2', 3, 75.0)],
               '387.34', '9.1', 'fedora27', '4.14.13-300.fc27.x86_64', libdir='/usr/lib64')
module_for_other_kernel(m, f, '4.14.11-300.fc27.x86_64', '4.14.13-300.fc27.x86_64', 'extra/nvidia/nvidia.ko.xz')
save('akmod-not-built-for-new-fedora-kernel', 'https://github.com/negativo17/nvidia-driver/issues/39', m, f)

# NVIDIA/open-gpu-kernel-modules#558: Arch, kernel 6.5.2-arch1-1, the DKMS build of the legacy 390.157
# driver fails ("Error! Bad return status for module build on kernel: 6.5.2-arch1-1"); the module of
# the previous kernel (6.4.12-arch1-1 chosen) remains.
m, f = healthy({"name": "arch", "uid": 1000, "groups": [[1000, "arch"], [998, "wheel"]]}, [('GeForce GTX 760', ':01:00.0', 2 * G, '3.0', 3, 170.0)],
               '390.157', '9.1', 'arch', '6.5.2-arch1-1', libdir='/usr/lib')
module_for_other_kernel(m, f, '6.4.12-arch1-1', '6.5.2-arch1-1', 'updates/dkms/nvidia.ko.zst')
save('dkms-build-failed-after-arch-kernel-update', 'https://github.com/NVIDIA/open-gpu-kernel-modules/issues/558', m, f)

# CachyOS/linux-cachyos#118: nvidia-dkms had built modules only for the stock kernel; booted into
# linux-cachyos, nvidia-smi "couldn't communicate with the NVIDIA driver" (versions chosen).
m, f = healthy({"name": "cachy", "uid": 1000, "groups": [[1000, "cachy"], [998, "wheel"]]}, [('NVIDIA GeForce RTX 3070', ':2b:00.0', 8 * G, '8.6', 4, 220.0)],
               '525.78.01', '12.0', 'cachyos', '6.1.7-1-cachyos', libdir='/usr/lib')
module_for_other_kernel(m, f, '6.1.7-arch1-1', '6.1.7-1-cachyos', 'updates/dkms/nvidia.ko.zst')
save('dkms-module-only-for-stock-kernel', 'https://github.com/CachyOS/linux-cachyos/issues/118', m, f)
print('ok')
