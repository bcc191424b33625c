#!/usr/bin/env python3
"""Writes the second set of "wild" container / HPC-job / Windows / framework fixtures
(tests/fixtures/wild2/<slug>): captures rebuilt from closed public bug threads in which an NVIDIA GPU
did not work inside a container, a Slurm job, on Windows, or for a framework, taken in the order fixed
search queries returned them. tests/fixtures/wild2/containers.md lists the queries, the accepted
threads with the cause each one concluded, and every skipped candidate with its reason.

These fixtures exist to measure, not to tune: each holds only what its thread states plus plausible
filler (marked "filled in" below and in containers.md). The thread's conclusion is written down in
containers.md, never in the capture, and nothing here was adjusted to what gpu-doctor answers.

The helpers are copies of those in scripts/wild-fixtures-containers.py and
scripts/wild-fixtures-wsl-windows.py (those scripts write their fixtures when run, so they are not
imported here).

Run: python3 scripts/wild2-fixtures-containers.py   (writes tests/fixtures/wild2/<slug>/)
"""
import sys, os, copy, zlib
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_lib import make, src, node, gpu_info, sample, facts, pci_gpu, nvidia_libs

OS = {
    'ubuntu1604': 'PRETTY_NAME="Ubuntu 16.04.7 LTS"\nNAME="Ubuntu"\nVERSION_ID="16.04"\nID=ubuntu\nID_LIKE=debian\n',
    'ubuntu1604-2017': 'PRETTY_NAME="Ubuntu 16.04.2 LTS"\nNAME="Ubuntu"\nVERSION_ID="16.04"\nID=ubuntu\nID_LIKE=debian\n',
    'ubuntu2004': 'PRETTY_NAME="Ubuntu 20.04.3 LTS"\nNAME="Ubuntu"\nVERSION_ID="20.04"\nID=ubuntu\nID_LIKE=debian\n',
    'ubuntu2204': 'PRETTY_NAME="Ubuntu 22.04.2 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\nID=ubuntu\nID_LIKE=debian\n',
    'rocky8': 'NAME="Rocky Linux"\nVERSION="8.9 (Green Obsidian)"\nID="rocky"\nID_LIKE="rhel centos fedora"\nVERSION_ID="8.9"\nPRETTY_NAME="Rocky Linux 8.9 (Green Obsidian)"\n',
}
SB_OFF = bytes([6, 0, 0, 0, 0])
SB_PATH = 'sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c'
G = 1 << 30
ROOT = {"name": "root", "uid": 0, "groups": [[0, "root"]]}
EPERM = 'Operation not permitted (os error 1)'
KMSG_DENIED = ({"unreadable": "the kernel log is not readable by this user (/dev/kmsg: Operation not permitted (os error 1)); run `sudo dmesg | grep -i -e nvrm -e xid` to see it"},
               {"read": None, "tried": [["/dev/kmsg", EPERM]]})
NO_NVML = {"driver_version": None, "cuda_driver_version": None, "nvml_version": None, "gpus": []}
NVML_NOT_FOUND = {"status": {"kind": "unavailable", "summary": "The driver's management library (NVML) was not found.",
                             "next_step": "See the checklist.",
                             "attempts": [{"path": "libnvidia-ml.so.1", "error": "a libloading error occurred: libnvidia-ml.so.1: cannot open shared object file: No such file or directory"}]},
                  "inventory": dict(NO_NVML), "samples": [], "facts": []}
CUDA_NOT_FOUND = {"library": None, "load_error": "libcuda.so.1: cannot open shared object file: No such file or directory",
                  "init_code": None, "driver_version": None, "devices": None}


def version_file(driver, open_module=False):
    kind = 'Open Kernel Module' if open_module else 'Kernel Module'
    return f'NVRM version: NVIDIA UNIX x86_64 {kind}  {driver}  Release Build  (dvs-builder@U16-T02-35-3)\nGCC version:  gcc version 9.4.0\n'


def uuid(driver, i):
    return f'GPU-{zlib.crc32(f"wild2-{driver}-{i}".encode()):08x}-6e2a-4b9d-8c31-{i:012x}'


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
        SB_PATH: SB_OFF,
    }
    for g in gpus:
        files.update(pci_gpu('0000' + g[1], '0x030200' if g[0].startswith(('Tesla', 'NVIDIA A1', 'NVIDIA A100', 'NVIDIA T4')) else '0x030000'))
    return m, files


def in_container(m, f, cgroup='0::/\n', dockerenv=True):
    """Seen from inside a container: no EFI variables, the kernel log closed, PID 1's cgroup."""
    f.pop(SB_PATH, None)
    f['proc/1/cgroup'] = cgroup
    if dockerenv:
        f['.dockerenv'] = ''
    m['kernel_log'], m['kernel_log_source'] = copy.deepcopy(KMSG_DENIED)


def torch_file(ver, cuda):
    """torch/version.py as the 1.x / 2.x wheels write it (`cuda` None for a CPU-only build)."""
    c = 'None' if cuda is None else f"'{cuda}'"
    return f"__version__ = '{ver}'\ndebug = False\ncuda: Optional[str] = {c}\nhip: Optional[str] = None\n"


def save(slug, source, m, f):
    make(f'wild2/{slug}', source, m, f, version=3)


# --- Windows helpers (copied from scripts/wild-fixtures-wsl-windows.py) ------------------------------
SYS32 = "C:\\Windows\\System32"


def adapter(name, dev, provider=None, version=None, date=None, problem=0, ven="10DE", inst="4&2B1C3D4E&0&0008"):
    a = {"name": name, "instance_id": f"PCI\\VEN_{ven}&DEV_{dev}&SUBSYS_00000000&REV_A1\\{inst}", "problem": problem}
    if provider: a["provider"] = provider
    if version: a["driver_version"] = version
    if date: a["driver_date"] = date
    return a


def win(build, product, display, adapters, files, pythons=(), dch=None, wsl=None):
    f = {"product": product, "build": build, "display_version": display, "adapters": list(adapters), "nvidia_files": list(files),
         "gpu_preferences": {}, "pythons": list(pythons), "watchdog_dumps": [], "tdr_events": [], "hags": None}
    if dch is not None: f["dch"] = dch
    if wsl is not None: f["wsl_distros"] = wsl
    return f


def nvml_ok_win(driver, cuda, gpus, library=f"{SYS32}\\nvml.dll", model="WDDM"):
    infos, samples, fs = [], [], []
    for i, (name, vram, cc, power) in enumerate(gpus):
        infos.append(gpu_info(i, name, f"GPU-7c2e4a1b-3d5f-4a60-8b9c-00000000000{i}", f":0{i + 1}:00.0", vram, cc, 3, power, 1900, 4000, 90))
        samples.append(sample(i, vram, power))
        fa = facts(i); fa["driver_model"] = [model, model]; fa["mig_devices"] = {"na": "MIG is off"}
        fs.append(fa)
    return {"status": {"kind": "nvml", "library": library, "attempts": []},
            "inventory": {"driver_version": driver, "cuda_driver_version": cuda, "nvml_version": f"{cuda.split('.')[0]}.{driver}", "gpus": infos},
            "samples": samples, "facts": fs}


def dch_files(version, store="nv_dispi.inf_amd64_3b7c9e1f2a4d6b80"):
    s = f"{SYS32}\\DriverStore\\FileRepository\\{store}"
    return [{"path": f"{SYS32}\\nvml.dll", "version": version}, {"path": f"{SYS32}\\nvidia-smi.exe", "version": version},
            {"path": f"{s}\\nvml.dll", "version": version}, {"path": f"{s}\\nvidia-smi.exe", "version": version}]


def wmeta(nvml, windows, cuda, env=None, user="user"):
    return {"platform": "windows", "env": env or {}, "user": {"name": user, "uid": 4294967295, "groups": []}, "device_nodes": [],
            "links": {}, "listings": {}, "nvml": nvml, "libraries": [],
            "kernel_log": {"unreadable": "no Linux kernel log on this platform"},
            "renderer": None, "tdr": {"level": None, "delay": None, "ddi_delay": None}, "cuda": cuda, "windows": windows}


def cuda_ok_win(ver, n=1):
    return {"library": "nvcuda.dll", "load_error": None, "init_code": 0, "driver_version": ver, "devices": n}


# ---------------------------------------------------------------------------------------------------
# 1. fboulnois/stable-diffusion-docker#82 (2023-05-25), query 'could not select device driver "" with
# capabilities: [[gpu]]'. Thread: `./build.sh run 'Andromeda galaxy in a bottle'` ends with "docker: Error
# response from daemon: could not select device driver "" with capabilities: [[gpu]]." on Ubuntu
# 22.04.02 LTS, Core i7-1195G7, 16 GB, graphics "Mesa Intel Xe Graphics (TGL GT2)". The container never
# starts, so the capture is of the laptop itself, in the reporter's shell.
# Filled in: user name and groups (docker group), kernel 5.19.0-42-generic (the 22.04.2 HWE kernel of that
# month), the iGPU at 0000:00:02.0 (8086, VGA class) bound to i915, /proc/modules with i915, Secure Boot
# variable off, kernel log readable and without NVIDIA lines, no NVIDIA driver files anywhere (nothing in
# the thread mentions one).
m, f = machine({"name": "locnd", "uid": 1000, "groups": [[1000, "locnd"], [4, "adm"], [27, "sudo"], [998, "docker"]]},
               [], '530.41.03', '12.1', 'ubuntu2204', '5.19.0-42-generic')
m['device_nodes'] = []
m['libraries'] = []
m['nvml'] = copy.deepcopy(NVML_NOT_FOUND)
m['cuda'] = dict(CUDA_NOT_FOUND)
m['kernel_log'] = {"lines": []}
m['links'] = {'/sys/bus/pci/devices/0000:00:02.0/driver': '../../../bus/pci/drivers/i915'}
del f['proc/driver/nvidia/version']
f['proc/modules'] = 'i915 3448832 32 - Live 0x0000000000000000\ndrm_buddy 20480 1 i915, Live 0x0000000000000000\nvideo 65536 2 i915, Live 0x0000000000000000\n'
f['sys/bus/pci/devices/0000:00:02.0/class'] = '0x030000\n'
f['sys/bus/pci/devices/0000:00:02.0/vendor'] = '0x8086\n'
m['env'] = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/snap/bin", "PWD": "/home/locnd/stable-diffusion-docker"}
save('docker-laptop-intel-xe-could-not-select-gpu-driver',
     'https://github.com/fboulnois/stable-diffusion-docker/issues/82 (Ubuntu 22.04.2 laptop, i7-1195G7 with Intel Xe graphics: '
     '`./build.sh run` fails with docker "could not select device driver \\"\\" with capabilities: [[gpu]]")', m, f)

# ---------------------------------------------------------------------------------------------------
# 2. endernewton/tf-faster-rcnn#38 (2017-04-03), query "no CUDA-capable device is detected".
# Thread: `CUDA_VISIBLE_DEVICES=$0 ./tools/demo.py` (TensorFlow Faster R-CNN demo) is greeted with "no
# CUDA-capable device is detected"; TITAN X on Ubuntu 16.04 with CUDA installed; nvidia-smi shows the GPU
# as device 0. The capture is taken the same way the demo was run, so its environment carries what the
# shell expanded $0 to.
# Filled in: $0 as an interactive bash expands it ("bash"), the GPU model (GeForce GTX TITAN X, 12 GB,
# cc 5.2, at 0000:01:00.0), driver 375.39 (CUDA 8.0), kernel 4.4.0-72-generic, Ubuntu 16.04.2, user and
# working directory; NVML (which ignores CUDA_VISIBLE_DEVICES) answering; cuInit returning 100
# (CUDA_ERROR_NO_DEVICE, the text of the error shown). No TensorFlow build file (its version is not stated).
m, f = machine({"name": "kevinkit", "uid": 1000, "groups": [[1000, "kevinkit"], [27, "sudo"]]},
               [('GeForce GTX TITAN X', ':01:00.0', 12 * G, '5.2', 3, 250.0)], '375.39', '8.0', 'ubuntu1604-2017', '4.4.0-72-generic')
m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 100, "driver_version": "8.0", "devices": None}
m['env'] = {"CUDA_VISIBLE_DEVICES": "bash", "PWD": "/home/kevinkit/tf-faster-rcnn",
            "LD_LIBRARY_PATH": "/usr/local/cuda/lib64", "PATH": "/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
save('tf-faster-rcnn-titan-x-no-cuda-device-ubuntu1604',
     'https://github.com/endernewton/tf-faster-rcnn/issues/38 (TITAN X, Ubuntu 16.04: `CUDA_VISIBLE_DEVICES=$0 ./tools/demo.py` '
     'says "no CUDA-capable device is detected" while nvidia-smi shows the GPU as device 0)', m, f)

# ---------------------------------------------------------------------------------------------------
# 3. NVIDIA/pyxis#47 (2021-05), query "Slurm CUDA_VISIBLE_DEVICES no GPU".
# Thread: Slurm with pyxis/enroot on a node with A100 GPUs; `srun -p gpu --container-image=cuda-11.2.2
# --gres=gpu:A100:1 ...` gives "no CUDA-capable device is detected"; inside the container
# CUDA_VISIBLE_DEVICES is 2 and of /dev/nvidia0..7 only /dev/nvidia2 exists; /etc/slurm/cgroup.conf is
# "CgroupAutomount=yes, ConstrainCores=yes". Node nodeGPU01, user cnavarro. Captured inside that
# container (a one-GPU job).
# Filled in: eight A100-SXM4-40GB (the node's /dev/nvidia0..7) at the usual DGX A100 bus addresses (all
# visible in /sys), driver 460.73.01 (CUDA 11.2), node kernel 5.4.0-72-generic, the image's Ubuntu 20.04
# and its NVIDIA_* variables, uid, job id, SLURM_JOB_GPUS / SLURM_STEP_GPUS / GPU_DEVICE_ORDINAL as Slurm
# sets them for GPU 2, no PID namespace (PID 1 is the node's systemd, cgroup v1), NVML answering for the
# one GPU whose node it can open, cuInit returning 100 (the error shown).
a100 = ('NVIDIA A100-SXM4-40GB', 40 * G, '8.0', 4, 400.0)
buses = [':07:00.0', ':0f:00.0', ':47:00.0', ':4e:00.0', ':87:00.0', ':90:00.0', ':b7:00.0', ':bd:00.0']
m, f = machine({"name": "cnavarro", "uid": 1000, "groups": [[1000, "cnavarro"]]},
               [(a100[0], b, a100[1], a100[2], a100[3], a100[4]) for b in buses], '460.73.01', '11.2', 'ubuntu2004', '5.4.0-72-generic')
in_container(m, f, cgroup='12:devices:/\n11:memory:/\n1:name=systemd:/init.scope\n0::/init.scope\n', dockerenv=False)
m['device_nodes'] = [n for n in m['device_nodes'] if n['path'] in ('/dev/nvidiactl', '/dev/nvidia-uvm', '/dev/nvidia-uvm-tools', '/dev/nvidia2')]
g2 = m['nvml']['inventory']['gpus'][2]
m['nvml']['inventory']['gpus'] = [dict(g2, index=0)]
m['nvml']['samples'] = [dict(m['nvml']['samples'][2], index=0)]
m['nvml']['facts'] = [dict(m['nvml']['facts'][2], index=0)]
m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 100, "driver_version": "11.2", "devices": None}
m['env'] = {"CUDA_VISIBLE_DEVICES": "2", "SLURM_JOB_ID": "48213", "SLURM_JOB_GPUS": "2", "SLURM_STEP_GPUS": "2", "GPU_DEVICE_ORDINAL": "2",
            "NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_DRIVER_CAPABILITIES": "compute,utility",
            "PATH": "/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
save('slurm-enroot-a100-one-gpu-no-cuda-device',
     'https://github.com/NVIDIA/pyxis/issues/47 (Slurm + pyxis/enroot on an A100 node: a one-GPU job in the cuda-11.2.2 container '
     'gets "no CUDA-capable device is detected"; inside, CUDA_VISIBLE_DEVICES=2 and only /dev/nvidia2 exists)', m, f)

# ---------------------------------------------------------------------------------------------------
# 4. GoogleCloudPlatform/cluster-toolkit#2634 (2024-05), query "Slurm CUDA_VISIBLE_DEVICES no GPU".
# Thread: a Slurm cluster built with the Cluster Toolkit on A2 instances; a job runs torch_test.sh
# (`source /etc/profile.d/conda.sh; conda activate pytorch; python3 torch_test.py`), which prints
# "Using device: cpu": no CUDA devices are visible. The srun command carried no --gpus/--gres option
# (the reporter's note: "I thought because of the instance type, there was no need to set the gpu").
# Captured inside that job step, on the A2 node.
# Filled in: a2-highgpu-1g (one A100-SXM4-40GB at 0000:00:04.0), driver 550.54.15 (CUDA 12.4), the node
# image's Rocky Linux 8.9 and kernel, libraries in /usr/lib64, no Secure Boot variable (cloud VM), user id,
# job id, conda at /opt/conda with torch 2.3.0+cu121 in the "pytorch" environment; how a job without a GPU
# allocation meets the node's GPU under Slurm's device cgroup (ConstrainDevices): /dev/nvidia0 present
# but refused (EPERM), NVML opening and listing no GPU ("No devices were found"), cuInit returning 100.
m, f = machine({"name": "msis", "uid": 2001, "groups": [[2001, "msis"]]},
               [('NVIDIA A100-SXM4-40GB', ':00:04.0', 40 * G, '8.0', 4, 400.0)], '550.54.15', '12.4', 'rocky8',
               '4.18.0-513.24.1.el8_9.x86_64', libdir='/usr/lib64')
del f[SB_PATH]
f['proc/1/cgroup'] = '12:devices:/\n1:name=systemd:/init.scope\n'
for n in m['device_nodes']:
    if n['path'] == '/dev/nvidia0':
        n['open'] = EPERM
m['nvml']['inventory']['gpus'] = []
m['nvml']['samples'] = []
m['nvml']['facts'] = []
m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 100, "driver_version": "12.4", "devices": None}
m['env'] = {"SLURM_JOB_ID": "7", "CONDA_PREFIX": "/opt/conda/envs/pytorch",
            "PATH": "/opt/conda/envs/pytorch/bin:/opt/conda/condabin:/usr/local/bin:/usr/bin:/usr/local/sbin:/usr/sbin",
            "PWD": "/var/tmp"}
f['opt/conda/envs/pytorch/lib/python3.10/site-packages/torch/version.py'] = torch_file('2.3.0', '12.1')
save('slurm-gcp-a2-job-torch-no-cuda-devices',
     'https://github.com/GoogleCloudPlatform/cluster-toolkit/issues/2634 (Cluster Toolkit Slurm cluster on A2 instances: a job '
     'running a PyTorch test in the conda env "pytorch" sees no CUDA device and prints "Using device: cpu")', m, f)

# ---------------------------------------------------------------------------------------------------
# 5. ComparativeGenomicsToolkit/cactus#1343 (2024-04-07), query "apptainer --nv GPU not detected inside
# container CUDA" (the variant run after "apptainer --nv" returned no bug threads).
# Thread: `docker run -v $(pwd):/data --rm -it cactus_songht:v281-gpu --gpu 7 cactus ...` on host
# compate187 prints the CUDA image banner ("CUDA Version 11.4.3") and "WARNING: The NVIDIA Driver was not
# detected. GPU functionality will not be available.", then the entrypoint fails on "--". Captured inside
# that container.
# Filled in: the host's GPUs (eight A100-PCIE-40GB; the thread's "--gpu 7" implies at least eight), driver
# 470.182.03 (CUDA 11.4), host CentOS 7 kernel 3.10.0-1160 with cgroup v1, the image's Ubuntu 20.04 and the
# variables a CUDA 11.4.3 image sets, root in the container, no device nodes and no driver libraries in the
# container (what the banner's warning means).
a100p = ('NVIDIA A100-PCIE-40GB', 40 * G, '8.0', 4, 250.0)
m, f = machine(ROOT, [(a100p[0], b, a100p[1], a100p[2], a100p[3], a100p[4]) for b in
                      (':1b:00.0', ':1c:00.0', ':3d:00.0', ':3e:00.0', ':88:00.0', ':89:00.0', ':b1:00.0', ':b2:00.0')],
               '470.182.03', '11.4', 'ubuntu2004', '3.10.0-1160.el7.x86_64')
in_container(m, f, cgroup='11:devices:/docker/5e0c9a7d41b2f38c6d9e0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f\n')
m['device_nodes'] = []
m['libraries'] = []
m['nvml'] = copy.deepcopy(NVML_NOT_FOUND)
m['cuda'] = dict(CUDA_NOT_FOUND)
m['env'] = {"NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_DRIVER_CAPABILITIES": "compute,utility",
            "NVIDIA_REQUIRE_CUDA": "cuda>=11.4 brand=tesla,driver>=418,driver<419 brand=tesla,driver>=440,driver<441 driver>=450",
            "LD_LIBRARY_PATH": "/usr/local/nvidia/lib:/usr/local/nvidia/lib64",
            "PATH": "/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "PWD": "/data"}
save('docker-cactus-gpu-image-driver-not-detected',
     'https://github.com/ComparativeGenomicsToolkit/cactus/issues/1343 (docker run of a Cactus GPU image built on CUDA 11.4.3: the '
     'container prints "WARNING: The NVIDIA Driver was not detected. GPU functionality will not be available.")', m, f)

# ---------------------------------------------------------------------------------------------------
# 6. NVIDIA/nvidia-docker#1442 (2021-01-02), query "nvidia-container-cli: requirement error: unsatisfied
# condition: cuda". Thread: Ubuntu 16.04 (xenial) with docker-ce 5:19.03.4; starting a container fails
# with "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=11.0, please update your
# driver to a newer version, or use an earlier cuda container: unknown." The container never starts, so
# the capture is of the host.
# Filled in: the GPU (GeForce GTX 1080 Ti at 0000:01:00.0), driver 440.100 (CUDA 10.2), kernel
# 4.15.0-128-generic (the xenial HWE kernel of that month), user and groups; the thread states no driver
# version.
m, f = machine({"name": "chenzheng", "uid": 1000, "groups": [[1000, "chenzheng"], [27, "sudo"], [999, "docker"]]},
               [('GeForce GTX 1080 Ti', ':01:00.0', 11 * G, '6.1', 3, 250.0)], '440.100', '10.2', 'ubuntu1604', '4.15.0-128-generic')
m['env'] = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
save('ubuntu1604-host-cuda11-container-requirement-error',
     'https://github.com/NVIDIA/nvidia-docker/issues/1442 (Ubuntu 16.04 with docker-ce 19.03.4: starting a GPU container fails with '
     '"nvidia-container-cli: requirement error: unsatisfied condition: cuda>=11.0, please update your driver to a newer version, '
     'or use an earlier cuda container")', m, f)

# ---------------------------------------------------------------------------------------------------
# 7. X-PLUG/MobileAgent#60 (2024-09-13), query "AssertionError: Torch not compiled with CUDA enabled".
# Thread: "AssertionError: Torch not compiled with CUDA enabled"; nvidia-smi shows "NVIDIA-SMI 475.14
# Driver Version: 475.14 CUDA Version: 11.4"; Python 3.10.11. 475.14 is a Windows driver number (the
# R470 Windows branch), so the machine is Windows.
# Filled in: the GPU (GeForce GTX 1060 6GB, DEV_1C03), Windows 10 22H2 build 19045, the DCH driver package
# (30.0.14.7514 = 475.14) and its date, Python from the python.org installer in
# %LOCALAPPDATA%\Programs\Python\Python310 with torch 2.4.1+cpu (a build without CUDA is what the
# assertion says; the version number is chosen), NVML and CUDA answering.
m = wmeta(nvml_ok_win("475.14", "11.4", [("NVIDIA GeForce GTX 1060 6GB", 6 * G, "6.1", 120.0)]),
          win(19045, "Windows 10 Pro", "22H2",
              [adapter("NVIDIA GeForce GTX 1060 6GB", "1C03", "NVIDIA", "30.0.14.7514", "2023-08-08")],
              dch_files("30.0.14.7514"),
              pythons=[{"prefix": "C:\\Users\\user\\AppData\\Local\\Programs\\Python\\Python310", "torch": "2.4.1+cpu", "torch_cuda": None}],
              dch=True),
          cuda_ok_win("11.4"))
save('win-torch-not-compiled-with-cuda-driver-475',
     'https://github.com/X-PLUG/MobileAgent/issues/60 (Windows, driver 475.14 / CUDA 11.4, Python 3.10.11: running the agent '
     'fails with "AssertionError: Torch not compiled with CUDA enabled")', m, {})

# ---------------------------------------------------------------------------------------------------
# 8. pytorch/pytorch#72957 (2022-02-16), query "CUDA error: no kernel image is available for execution on
# the device pytorch". Thread: host "Jack-c", kernel 5.13.0-28-generic; conda environment visionEnv
# (/home/Jack/anaconda3/envs/visionEnv, Python 3.7) with pytorch 1.10.2 py3.7_cuda10.2_cudnn7.6.5_0,
# cudatoolkit 10.2.89, torchvision 0.11.3 / torchaudio 0.10.2 (cu102); torch.relu_ raises "CUDA error: no
# kernel image is available for execution on the device".
# Filled in: the GPU (GeForce RTX 3060, 12 GB, cc 8.6, at 0000:01:00.0) and driver 470.103.01 (CUDA 11.4)
# (the stored copy of the thread holds neither), Ubuntu 20.04.3 (the distribution of that kernel), user
# and groups, CONDA_PREFIX set to the environment, conda's environments.txt; NVML and cuInit answering.
m, f = machine({"name": "Jack", "uid": 1000, "groups": [[1000, "Jack"], [27, "sudo"], [44, "video"]]},
               [('NVIDIA GeForce RTX 3060', ':01:00.0', 12 * G, '8.6', 4, 170.0)], '470.103.01', '11.4', 'ubuntu2004', '5.13.0-28-generic')
env = '/home/Jack/anaconda3/envs/visionEnv'
m['env'] = {"CONDA_PREFIX": env, "PATH": f"{env}/bin:/home/Jack/anaconda3/condabin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
f[f'{env[1:]}/lib/python3.7/site-packages/torch/version.py'] = "__version__ = '1.10.2'\ndebug = False\ncuda = '10.2'\nhip = None\n"
f['home/Jack/.conda/environments.txt'] = '/home/Jack/anaconda3\n/home/Jack/anaconda3/envs/visionEnv\n'
save('torch-1-10-conda-no-kernel-image-ubuntu2004',
     'https://github.com/pytorch/pytorch/issues/72957 (Ubuntu, kernel 5.13.0-28: conda env with pytorch 1.10.2 '
     '(py3.7_cuda10.2_cudnn7.6.5_0) fails in torch.relu_ with "CUDA error: no kernel image is available for execution on the device")', m, f)

print('wrote 8 fixtures under tests/fixtures/wild2/')
