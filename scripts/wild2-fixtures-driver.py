#!/usr/bin/env python3
"""Writes the second round of "wild" fixtures of the Linux driver and kernel group: broken machines
rebuilt from public bug threads picked by a fixed procedure (see tests/fixtures/wild2/driver.md),
not to fit any check of gpu-doctor. They measure how often gpu-doctor names the cause a thread
concluded on failures it was never tuned for; nothing here is meant to match the tool's answer.

Each block: the thread's address, the search query that found it, what the thread states, and
what was filled in (marked "Filled"). Facts come only from the thread; a value the thread does not
give is chosen to be plausible for that machine. Capture format version 3 (see
docs/capture-format.md). Output: tests/fixtures/wild2/<slug>/.
Run: python3 scripts/wild2-fixtures-driver.py
"""
import sys, os, copy, zlib
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_lib import src, node, sample, facts, make, pci_gpu

G = 1 << 30
MiB = 1 << 20
SB_OFF = bytes([6, 0, 0, 0, 0])
SB = 'sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c'

OS = {
    'ubuntu1404': 'NAME="Ubuntu"\nVERSION="14.04.1 LTS, Trusty Tahr"\nID=ubuntu\nID_LIKE=debian\nPRETTY_NAME="Ubuntu 14.04.1 LTS"\nVERSION_ID="14.04"\n',
    'ubuntu1604': 'NAME="Ubuntu"\nVERSION="16.04.1 LTS (Xenial Xerus)"\nID=ubuntu\nID_LIKE=debian\nPRETTY_NAME="Ubuntu 16.04.1 LTS"\nVERSION_ID="16.04"\n',
    'ubuntu1804': 'NAME="Ubuntu"\nVERSION="18.04.5 LTS (Bionic Beaver)"\nID=ubuntu\nID_LIKE=debian\nPRETTY_NAME="Ubuntu 18.04.5 LTS"\nVERSION_ID="18.04"\n',
    'ubuntu2004': 'NAME="Ubuntu"\nVERSION="20.04.2 LTS (Focal Fossa)"\nID=ubuntu\nID_LIKE=debian\nPRETTY_NAME="Ubuntu 20.04.2 LTS"\nVERSION_ID="20.04"\n',
    'rocky8': 'NAME="Rocky Linux"\nVERSION="8.8 (Green Obsidian)"\nID="rocky"\nID_LIKE="rhel centos fedora"\nVERSION_ID="8.8"\nPRETTY_NAME="Rocky Linux 8.8 (Green Obsidian)"\n',
    'bazzite42': 'NAME="Bazzite"\nVERSION="42.20250522 (Kinoite)"\nID=bazzite\nID_LIKE="fedora"\nVERSION_ID=42\nPRETTY_NAME="Bazzite 42 (FROM Fedora Kinoite)"\n',
    'arch': 'NAME="Arch Linux"\nPRETTY_NAME="Arch Linux"\nID=arch\nBUILD_ID=rolling\n',
}

NOT_LOADED = {"kind": "unavailable", "summary": "The NVIDIA library is installed but the kernel driver is not loaded.",
              "next_step": "Check `lsmod | grep nvidia` and `sudo dmesg | grep -i nvidia`; nouveau or Secure Boot may block the module. Rebooting after a driver install often fixes this.",
              "attempts": [{"path": "libnvidia-ml.so.1", "error": "Driver Not Loaded"}], "failure": "driver_not_loaded"}
MISMATCH = {"kind": "unavailable",
            "summary": "The driver was updated: the loaded kernel module and the user-space library have different versions.",
            "next_step": "Reboot (or reload the nvidia kernel modules) so both sides run the same version.",
            "attempts": [{"path": "libnvidia-ml.so.1", "error": "Driver/library version mismatch"}], "failure": "version_mismatch"}
NVML_OK = {"kind": "nvml", "library": "libnvidia-ml.so.1", "attempts": []}
EMPTY_INV = {"driver_version": None, "cuda_driver_version": None, "nvml_version": None, "gpus": []}
EIO = 'Input/output error (os error 5)'

# Module lists as /proc/modules prints them (sizes plausible, addresses hidden as for a non-root reader).
MODS_OPEN_FULL = 'nvidia_uvm 1957888 0 - Live 0x0000000000000000 (OE)\nnvidia_drm 135168 1 - Live 0x0000000000000000 (OE)\n' \
                 'nvidia_modeset 1724416 1 nvidia_drm, Live 0x0000000000000000 (OE)\nnvidia 11636736 2 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (OE)\n'
MODS_PROP_FULL = MODS_OPEN_FULL.replace('(OE)', '(POE)')


def uuid(seed):
    h = zlib.crc32(seed.encode())
    return f'GPU-{h:08x}-{h & 0xffff:04x}-4a1b-9c2d-{zlib.crc32(seed[::-1].encode()):012x}'


def base(user, kernel, distro, libdir, driver, cuda, sb=SB_OFF, mllibdir=None):
    """A machine with the driver's user-space libraries installed; each block below sets what
    its thread says of the kernel side. Returns (meta, files)."""
    m = copy.deepcopy(src['meta'])
    m['user'] = user
    m['env'] = {}
    m['device_nodes'] = []
    m['links'] = {}
    m['listings'] = {}
    m['nvml'] = {"status": NOT_LOADED, "inventory": dict(EMPTY_INV), "samples": [], "facts": []}
    mld = mllibdir or libdir
    m['libraries'] = [
        {"name": "libcuda.so.1", "path": f"{libdir}/libcuda.so.1", "real_path": f"{libdir}/libcuda.so.{driver}", "via": "ld.so.cache"},
        {"name": "libnvidia-ml.so.1", "path": f"{mld}/libnvidia-ml.so.1", "real_path": f"{mld}/libnvidia-ml.so.{driver}", "via": "ld.so.cache"},
    ]
    m['kernel_log'] = {"lines": []}
    m['kernel_log_source'] = {"read": "/dev/kmsg", "tried": []}
    m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 100, "driver_version": cuda, "devices": None}
    files = {'proc/sys/kernel/osrelease': kernel + '\n'}
    if distro is not None:
        files['etc/os-release'] = OS[distro]
    if sb is not None:
        files[SB] = sb
    return m, files


def nodes(*specs):
    """(path, major, minor, open result) -> device-node records."""
    out = []
    for path, major, minor, opened in specs:
        n = node(path, major, minor)
        n['open'] = opened
        out.append(n)
    return out


def std_nodes(uvm_major, uvm=True, modeset=True, nvidia0=('ok',)):
    specs = [('/dev/nvidiactl', 195, 255, 'ok'), ('/dev/nvidia0', 195, 0, nvidia0[0])]
    if modeset:
        specs.append(('/dev/nvidia-modeset', 195, 254, 'ok'))
    if uvm:
        specs += [('/dev/nvidia-uvm', uvm_major, 0, 'ok'), ('/dev/nvidia-uvm-tools', uvm_major, 1, 'ok')]
    return nodes(*specs)


def pci(addr, vendor, cls):
    return {f'sys/bus/pci/devices/{addr}/vendor': vendor + '\n', f'sys/bus/pci/devices/{addr}/class': cls + '\n'}


def bound(addr, driver):
    return {f'/sys/bus/pci/devices/{addr}/driver': f'../../../bus/pci/drivers/{driver}'}


def version_file(kind, driver, build, gcc):
    if kind == 'open':
        return f'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {driver}  Release Build  {build}\nGCC version:  {gcc}\n'
    return f'NVRM version: NVIDIA UNIX x86_64 Kernel Module  {driver}  {build}\nGCC version:  {gcc}\n'


def gpu(i, name, seed, bus, vram, cc, maxg, power, sm, mem, slow, width=16):
    """An NVML inventory entry; a value given as None is recorded as not supported."""
    na = {"na": "not supported on this GPU"}
    return {"index": i, "name": name, "uuid": uuid(seed), "pci_bus_id": "0000" + bus, "vram_total_bytes": vram,
            "power_limit_default_w": na if power is None else power, "max_sm_clock_mhz": sm, "max_mem_clock_mhz": mem,
            "max_pcie_gen": maxg, "max_pcie_width": width, "slowdown_temp_c": na if slow is None else slow,
            "compute_capability": cc}


def gpu_unavailable(i, why):
    """What the collector records for a GPU whose handle NVML refused (GpuInfo::unavailable)."""
    na = {"na": why}
    return {"index": i, "name": f"GPU {i}", "uuid": na, "pci_bus_id": na, "vram_total_bytes": na,
            "power_limit_default_w": na, "max_sm_clock_mhz": na, "max_mem_clock_mhz": na, "max_pcie_gen": na,
            "max_pcie_width": na, "slowdown_temp_c": na, "compute_capability": na}


def sample_unavailable(i, why):
    """GpuSample::unavailable with health Ok: every reading carries `why`."""
    s = copy.deepcopy(src['meta']['nvml']['samples'][0])
    for k in list(s):
        s[k] = {"na": why}
    s['index'] = i
    s['health'] = 'Ok'
    return s


def save(slug, url, summary, m, files):
    make('wild2/' + slug, f'{url} ({summary})', m, files, version=3)
    print('wrote', slug)


# 1 ---------------------------------------------------------------------------------------------
# https://github.com/Bumblebee-Project/Bumblebee/issues/623 (closed), 2014-12-18
# Query: "nvidia-uvm not loaded" (issues), rank 2.
# Thread: fresh Ubuntu GNOME 14.04.1, kernel 3.13.0-43-generic, nvidia-331-updates, GeForce GTX 765M
# in a Bumblebee (bbswitch) Optimus laptop. (py)CUDA fails with "pycuda._driver.Error: cuInit
# failed: unknown"; installing nvidia-modprobe shows "modprobe: FATAL: Module nvidia-uvm not found."
# The package's module is installed as nvidia-331-updates-uvm. The reporter's fix, which worked:
# "alias nvidia-uvm nvidia-331-updates-uvm" in /etc/modprobe.d/bumblebee.conf, after which CUDA
# runs. Kernel log (after the fix): bbswitch enabling the card, nvidia-drm initialised for
# 0000:01:00.0, "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  331.113  Mon Dec  1 21:08:13 PST
# 2014", MSI irq, then "nvidia_uvm: Loaded the UVM driver" (left out here: it is the fixed state).
# Cause: the nvidia-uvm module was never loaded (Ubuntu's renamed module had no alias).
# Filled: user (in the bumblebee group), Intel iGPU at 00:02.0, library paths of the Ubuntu
# packages, GCC line, VRAM/limits of the GTX 765M, NVML version string, CUDA 6.0, the device nodes
# (present while the card is on, no /dev/nvidia-uvm), Secure Boot off, the DKMS module paths. The
# contents of /etc/modprobe.d/bumblebee.conf before the fix are not quoted, so no modprobe.d file
# is written.
drv = '331.113'
kern = '3.13.0-43-generic'
m, f = base({"name": "nl", "uid": 1000, "groups": [[1000, "nl"], [4, "adm"], [27, "sudo"], [124, "bumblebee"]]},
            kern, 'ubuntu1404', '/usr/lib/x86_64-linux-gnu', drv, '6.0', mllibdir='/usr/lib/nvidia-331-updates')
m['device_nodes'] = std_nodes(0, uvm=False, modeset=False)
m['links'] = {**bound('0000:01:00.0', 'nvidia'), **bound('0000:00:02.0', 'i915')}
vram = 2 * G
gi = gpu(0, "GeForce GTX 765M", 'gtx765m-bb623', ':01:00.0', vram, '3.0', 3, None, 862, 2000, None)
s = sample(0, vram, 0.0)
s['power_w'] = {"na": "not supported on this GPU"}
s['power_limit_w'] = {"na": "not supported on this GPU"}
m['nvml'] = {"status": NVML_OK,
             "inventory": {"driver_version": drv, "cuda_driver_version": "6.0", "nvml_version": "5.331.113", "gpus": [gi]},
             "samples": [s], "facts": [facts(0)]}
m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 999, "driver_version": "6.0", "devices": None}
m['kernel_log'] = {"lines": [
    "[drm] Initialized nvidia-drm 0.0.0 20130102 for 0000:01:00.0 on minor 1",
    "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  331.113  Mon Dec  1 21:08:13 PST 2014",
    "nvidia 0000:01:00.0: irq 50 for MSI/MSI-X",
]}
f.update({
    'proc/modules': 'nvidia 10675249 40 - Live 0x0000000000000000 (POF)\nbbswitch 13943 0 - Live 0x0000000000000000 (OF)\n'
                    'i915 783485 3 - Live 0x0000000000000000\ndrm 303102 5 nvidia,i915,drm_kms_helper, Live 0x0000000000000000\n',
    'proc/driver/nvidia/version': version_file('prop', drv, 'Mon Dec  1 21:08:13 PST 2014', 'gcc version 4.8.2 (Ubuntu 4.8.2-19ubuntu1)'),
    **pci_gpu('0000:01:00.0', '0x030000'),
    **pci('0000:00:02.0', '0x8086', '0x030000'),
    f'lib/modules/{kern}/updates/dkms/nvidia_331_updates.ko': '',
    f'lib/modules/{kern}/updates/dkms/nvidia_331_updates_uvm.ko': '',
})
save('gtx765m-ubuntu1404-optimus-pycuda-cuinit-unknown', 'https://github.com/Bumblebee-Project/Bumblebee/issues/623',
     'Ubuntu 14.04 Optimus laptop, GTX 765M, nvidia-331-updates: pycuda "cuInit failed: unknown"; modprobe cannot find nvidia-uvm, '
     'the module is installed as nvidia-331-updates-uvm; adding "alias nvidia-uvm nvidia-331-updates-uvm" to modprobe.d made CUDA work',
     m, f)

# 2 ---------------------------------------------------------------------------------------------
# https://github.com/lyulyul/shine-cluster/issues/30 (closed), 2021-04-27
# Query: "Failed to initialize NVML: Driver/library version mismatch" (issues), rank 8.
# Thread: on the Slurm node "eureka" nvidia-smi prints "Failed to initialize NVML: Driver/library
# version mismatch"; GPU jobs already running keep working. /var/log/apt/history.log shows
# unattended-upgrade on 2021-04-24 upgrading libnvidia-common-460 from 460.56-0ubuntu0.20.04.1 to
# 460.73.01-0ubuntu0.20.04.1. The admins' conclusion: remove 450, pin 460 to prevent unexpected
# upgrades. Cause (stated by the reporter from the apt log): an automatic upgrade replaced the
# driver's user-space side while the 460.56 kernel module stayed loaded.
# Filled: kernel (5.4.0-72-generic), Ubuntu point release, user, two GPUs (PCI functions only:
# NVML does not answer), library paths, that libcuda/libnvidia-ml are at 460.73.01 (the thread
# shows only the libnvidia-common line; the NVML error implies the library moved), the loaded
# module's version file (460.56, from the upgrade's "from" version) and its build line, device
# nodes, Secure Boot off, cuInit's answer (803). No kernel log is quoted, none is written.
m, f = base({"name": "ops", "uid": 1000, "groups": [[1000, "ops"], [4, "adm"], [27, "sudo"]]},
            '5.4.0-72-generic', 'ubuntu2004', '/usr/lib/x86_64-linux-gnu', '460.73.01', '11.2')
m['device_nodes'] = std_nodes(508)
m['links'] = {**bound('0000:3b:00.0', 'nvidia'), **bound('0000:af:00.0', 'nvidia')}
m['nvml'] = {"status": MISMATCH, "inventory": dict(EMPTY_INV), "samples": [], "facts": []}
m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 803, "driver_version": "11.2", "devices": None}
f.update({
    'proc/modules': MODS_PROP_FULL,
    'proc/driver/nvidia/version': version_file('prop', '460.56', 'Tue Feb 23 23:23:13 UTC 2021', 'gcc version 9.3.0 (Ubuntu 9.3.0-17ubuntu1~20.04)'),
    **pci_gpu('0000:3b:00.0', '0x030000'),
    **pci_gpu('0000:af:00.0', '0x030000'),
})
save('slurm-node-ubuntu2004-nvml-mismatch-460', 'https://github.com/lyulyul/shine-cluster/issues/30',
     'Slurm GPU node, Ubuntu 20.04: nvidia-smi "Driver/library version mismatch" while running jobs keep working; apt history shows '
     'unattended-upgrade moving the 460 driver packages from 460.56 to 460.73.01; admins removed 450 and pinned 460',
     m, f)

# 3 ---------------------------------------------------------------------------------------------
# https://github.com/pytorch/pytorch/issues/49081 (closed), 2020-12-09
# Query: "pytorch/pytorch CUDA unknown error this may be due to an incorrectly set up environment
# nvidia driver Linux" (issues), rank 7.
# Thread: NVIDIA A100, PyTorch 1.7.0, CUDA 11.0, conda env ~/anaconda3/envs/Pt (Python 3.6):
# "RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment ...".
# The reporter had "export CUDA_VISIBLE_DEVICES = 0" in ~/.bashrc (with spaces, which bash rejects,
# so the variable is not set). A maintainer asked "Did you update any drivers without a reboot?";
# the reporter: "I take your advice and reboot after Nvidia Driver installation, and it seems
# work! After my last nvidia driver installation, I check nvidia-smi and it returns the normal
# table with right driver version ... And then I install CUDA-1[1.0]". Cause: a driver installed
# (then the CUDA toolkit) without rebooting; the reboot fixed it.
# Filled: distribution (Ubuntu 18.04), kernel, driver 450.80.02, the A100 PCIe board and its bus,
# user name, the conda prefix/PATH, NVML readings, torch/version.py's other lines, device nodes,
# module list (all at the same version: the thread does not say what was stale), Secure Boot off,
# cuInit's answer (999, CUDA's "unknown error").
drv = '450.80.02'
m, f = base({"name": "wz", "uid": 1000, "groups": [[1000, "wz"], [27, "sudo"]]},
            '5.4.0-56-generic', 'ubuntu1804', '/usr/lib/x86_64-linux-gnu', drv, '11.0')
prefix = '/home/wz/anaconda3/envs/Pt'
m['env'] = {"CONDA_PREFIX": prefix, "PATH": f"{prefix}/bin:/home/wz/anaconda3/condabin:/usr/local/cuda-11.0/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
m['device_nodes'] = std_nodes(509)
m['links'] = bound('0000:3b:00.0', 'nvidia')
vram = 40 * G
gi = gpu(0, "A100-PCIE-40GB", 'a100-49081', ':3b:00.0', vram, '8.0', 4, 250.0, 1410, 1215, 88)
s = sample(0, vram, 250.0)
fa = facts(0)
fa['mig'] = [False, False]
fa['mig_devices'] = {"na": "MIG is off"}
fa['remapped_rows'] = {"correctable": 0, "uncorrectable": 0, "pending": False, "failed": False}
m['nvml'] = {"status": NVML_OK,
             "inventory": {"driver_version": drv, "cuda_driver_version": "11.0", "nvml_version": "11.450.80.02", "gpus": [gi]},
             "samples": [s], "facts": [fa]}
m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 999, "driver_version": "11.0", "devices": None}
m['kernel_log'] = {"lines": ["NVRM: loading NVIDIA UNIX x86_64 Kernel Module  450.80.02  Wed Sep 23 01:13:39 UTC 2020"]}
f.update({
    'proc/modules': MODS_PROP_FULL,
    'proc/driver/nvidia/version': version_file('prop', drv, 'Wed Sep 23 01:13:39 UTC 2020', 'gcc version 7.5.0 (Ubuntu 7.5.0-3ubuntu1~18.04)'),
    **pci_gpu('0000:3b:00.0', '0x030200'),
    f'home/wz/anaconda3/envs/Pt/lib/python3.6/site-packages/torch/version.py':
        "__version__ = '1.7.0'\ndebug = False\ncuda = '11.0'\ngit_version = 'e85d494707b835c12165976b8442af54b9afcb26'\nhip = None\n",
})
save('a100-conda-torch17-cuda-unknown-error', 'https://github.com/pytorch/pytorch/issues/49081',
     'A100, PyTorch 1.7.0/CUDA 11.0 in conda: "CUDA unknown error" while nvidia-smi shows the new driver; a maintainer asked whether '
     'the driver was updated without a reboot, and rebooting after the driver (and CUDA toolkit) install fixed it',
     m, f)

# 4 ---------------------------------------------------------------------------------------------
# https://github.com/stackhpc/ansible-slurm-appliance/issues/287 (closed), 2023-06-30
# Query: "NVRM: API mismatch: the client has the version but this kernel module has the version"
# (issues), rank 1.
# Thread: after running the appliance's extras.yml (its cuda role), the task "Enable NVIDIA
# Persistence Daemon" logs on node gpu-0: "NVRM: API mismatch: the client has the version
# 535.54.03, but#012NVRM: this kernel module has the version 530.30.02. ..." "It is fixed by a
# reboot." /proc/driver/nvidia/version and /sys/module/nvidia/version did NOT disagree (both the
# loaded 530.30.02). Fixed in the appliance by a later pull request. Cause: the role installed the
# 535 user-space driver while the 530 kernel module stayed loaded, without a reboot.
# Filled: distribution (Rocky Linux 8.8, the appliance's base), kernel, root user, the GPU (an
# A100 PCIe in an OpenStack VM), library paths, device nodes, the version file's build line,
# Secure Boot variable absent (VM), NVML's answer (version mismatch, as nvidia-smi gives with this
# log), cuInit's answer (803). The kernel log lines are the thread's, split at its #012 newlines.
m, f = base({"name": "root", "uid": 0, "groups": [[0, "root"]]},
            '4.18.0-477.15.1.el8_8.x86_64', 'rocky8', '/usr/lib64', '535.54.03', '12.2', sb=None)
m['device_nodes'] = std_nodes(236)
m['links'] = bound('0000:00:05.0', 'nvidia')
m['nvml'] = {"status": MISMATCH, "inventory": dict(EMPTY_INV), "samples": [], "facts": []}
m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 803, "driver_version": "12.2", "devices": None}
m['kernel_log'] = {"lines": [
    "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  530.30.02  Wed Feb 22 04:11:39 UTC 2023",
    "NVRM: API mismatch: the client has the version 535.54.03, but",
    "NVRM: this kernel module has the version 530.30.02.  Please",
    "NVRM: make sure that this kernel module and all NVIDIA driver",
    "NVRM: components have the same version.",
]}
f.update({
    'proc/modules': MODS_PROP_FULL,
    'proc/driver/nvidia/version': version_file('prop', '530.30.02', 'Wed Feb 22 04:11:39 UTC 2023', 'gcc version 8.5.0 20210514 (Red Hat 8.5.0-18) (GCC)'),
    'sys/module/nvidia/version': '530.30.02\n',
    **pci_gpu('0000:00:05.0', '0x030200'),
})
save('slurm-gpu-node-rocky-api-mismatch-535-530', 'https://github.com/stackhpc/ansible-slurm-appliance/issues/287',
     'Slurm appliance GPU node: after the cuda role ran, "NVRM: API mismatch: the client has the version 535.54.03, but this kernel '
     'module has the version 530.30.02" when enabling nvidia-persistenced; fixed by a reboot',
     m, f)

# 5 ---------------------------------------------------------------------------------------------
# https://github.com/NVIDIA/nvidia-docker/issues/182 (closed), 2016-08-26
# Query: "NVRM: API mismatch: ..." (issues), rank 3.
# Thread: Ubuntu 16.04; the reporter accidentally upgraded the driver to 367.44; nvidia-smi and the
# nvidia-docker service stop working; journal: "NVRM: API mismatch: the client has the version
# 367.44, but / NVRM: this kernel module has the version 367.35. ..." A maintainer: "Your kernel
# module is still 367.35, you should load the 367.44 instead" (rmmod + nvidia-modprobe). The
# reporter: "it appears after I upgraded I needed to reboot. Once I rebooted everything is working
# fine now." Cause: driver upgraded on the host without a reboot; the old module stayed loaded.
# Filled: kernel (4.4.0-34-generic), user, GPU (GeForce GTX 1080 at 01:00.0), library paths of the
# graphics-drivers PPA's nvidia-367 packages, device nodes, version file's build line, Secure Boot
# off, NVML's answer (version mismatch), cuInit's answer (803).
m, f = base({"name": "ny", "uid": 1000, "groups": [[1000, "ny"], [27, "sudo"], [999, "docker"]]},
            '4.4.0-34-generic', 'ubuntu1604', '/usr/lib/x86_64-linux-gnu', '367.44', '8.0', mllibdir='/usr/lib/nvidia-367')
m['device_nodes'] = std_nodes(246)
m['links'] = bound('0000:01:00.0', 'nvidia')
m['nvml'] = {"status": MISMATCH, "inventory": dict(EMPTY_INV), "samples": [], "facts": []}
m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 803, "driver_version": "8.0", "devices": None}
m['kernel_log'] = {"lines": [
    "NVRM: API mismatch: the client has the version 367.44, but",
    "NVRM: this kernel module has the version 367.35.  Please",
    "NVRM: make sure that this kernel module and all NVIDIA driver",
    "NVRM: components have the same version.",
]}
f.update({
    'proc/modules': MODS_PROP_FULL,
    'proc/driver/nvidia/version': version_file('prop', '367.35', 'Mon Jul 11 23:14:21 PDT 2016', 'gcc version 5.4.0 20160609 (Ubuntu 5.4.0-6ubuntu1~16.04.2)'),
    **pci_gpu('0000:01:00.0', '0x030000'),
})
save('ubuntu1604-nvidia-smi-fails-after-367-44-upgrade', 'https://github.com/NVIDIA/nvidia-docker/issues/182',
     'Ubuntu 16.04 host: after an accidental driver upgrade to 367.44, nvidia-smi and nvidia-docker fail with "NVRM: API mismatch ... '
     'this kernel module has the version 367.35"; a maintainer said the old module was still loaded, the reporter rebooted and it worked',
     m, f)

# 6 ---------------------------------------------------------------------------------------------
# https://github.com/ublue-os/bazzite/issues/2668 (closed; labels bug, upstream), 2025-05-22
# Query: "NVRM: API mismatch: ..." (issues), rank 10.
# Thread: Bazzite image 42.20250522 with an NVIDIA GPU does not boot into the desktop. Kernel log:
# three times "NVRM: API mismatch: the client has the version 570.153.02, but this kernel module
# has the version 570.144. ...", then "nvidia 0000:07:00.0: Direct firmware load for
# nvidia/570.144/gsp_ga10x.bin failed with error -2", "NVRM: RmFetchGspRmImages: No firmware
# image found", "NVRM: GPU 0000:07:00.0: RmInitAdapter failed! (0x61:0x56:1770)", "rm_init_adapter
# failed, device minor number 0". The reporter: "Nvidia driver seems to have been updated, but not
# the kernel module"; maintainers labelled it upstream (the same day ublue-os/main merged "ensure
# kmod-nvidia version matches nvidia-driver"). Cause: the image shipped a 570.144 kernel module
# with 570.153.02 user space and firmware.
# Filled: the open-module image variant, kernel, user, device nodes (nvidia0 refuses with EIO as a
# GPU whose adapter init failed does), library paths, the version file's build line, Secure Boot
# off, NVML's answer (version mismatch), cuInit's answer (803). The closing comment is not in the
# stored thread.
kern = '6.14.6-105.bazzite.fc42.x86_64'
m, f = base({"name": "jj", "uid": 1000, "groups": [[1000, "jj"], [10, "wheel"]]},
            kern, 'bazzite42', '/usr/lib64', '570.153.02', '12.8')
m['device_nodes'] = std_nodes(505, nvidia0=(EIO,))
m['links'] = bound('0000:07:00.0', 'nvidia')
m['nvml'] = {"status": MISMATCH, "inventory": dict(EMPTY_INV), "samples": [], "facts": []}
m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 803, "driver_version": "12.8", "devices": None}
mism = ["NVRM: API mismatch: the client has the version 570.153.02, but",
        "NVRM: this kernel module has the version 570.144.  Please",
        "NVRM: make sure that this kernel module and all NVIDIA driver",
        "NVRM: components have the same version."]
m['kernel_log'] = {"lines": mism * 3 + [
    "nvidia 0000:07:00.0: Direct firmware load for nvidia/570.144/gsp_ga10x.bin failed with error -2",
    "NVRM: RmFetchGspRmImages: No firmware image found",
    "NVRM: GPU 0000:07:00.0: RmInitAdapter failed! (0x61:0x56:1770)",
    "NVRM: GPU 0000:07:00.0: rm_init_adapter failed, device minor number 0",
]}
f.update({
    'proc/modules': MODS_OPEN_FULL,
    'proc/driver/nvidia/version': version_file('open', '570.144', '(mockbuild@)  Tue Apr 29 18:10:23 UTC 2025', 'gcc version 15.1.1 20250425 (Red Hat 15.1.1-1) (GCC)'),
    **pci_gpu('0000:07:00.0', '0x030000'),
    f'lib/modules/{kern}/extra/nvidia/nvidia.ko.xz': '',
})
save('bazzite-ampere-no-desktop-after-image-update-570', 'https://github.com/ublue-os/bazzite/issues/2668',
     'Bazzite 42.20250522 does not reach the desktop: "API mismatch: the client has the version 570.153.02, but this kernel module has '
     'the version 570.144", no gsp firmware for 570.144, RmInitAdapter failed; the image shipped a kmod older than the driver '
     '(reporter; maintainers labelled it upstream)',
     m, f)

# 7 ---------------------------------------------------------------------------------------------
# https://github.com/Frogging-Family/nvidia-all/issues/70 (closed), 2021-10-31
# Query: "NVIDIA kernel module missing. Falling back to nouveau" (issues), rank 7.
# Thread: 460 driver installed with nvidia-all (DKMS); "a quick `modprobe nvidia` showed that the
# module does not exist. seems to be a DKMS error" (make.log and xorg.log attached, not stored). The
# maintainer: "That driver doesn't seem to be compatible with kernel 5.14. Support was officially
# added with 470 series, so please either use 460 with 5.10 LTS or upgrade to 470 or newer for
# 5.14+." Cause: the 460 branch does not build for kernel 5.14, so no module exists for it.
# Filled: Arch Linux, the exact kernel (5.14.15-arch1-1) and driver (460.91.03), user, GPU (GeForce
# GTX 1070 at 01:00.0, no driver bound), the packaged nouveau blacklist in /usr/lib/modprobe.d,
# library paths, Secure Boot off, cuInit's answer (100). No kernel log is quoted.
kern = '5.14.15-arch1-1'
m, f = base({"name": "nova", "uid": 1000, "groups": [[1000, "nova"], [998, "wheel"], [985, "video"]]},
            kern, 'arch', '/usr/lib', '460.91.03', '11.2')
f.update({
    'proc/modules': 'snd_hda_intel 57344 3 - Live 0x0000000000000000\nr8169 98304 0 - Live 0x0000000000000000\n',
    **pci_gpu('0000:01:00.0', '0x030000'),
    'usr/lib/modprobe.d/nvidia-utils.conf': 'blacklist nouveau\n',
    # Added after the first-sight run: a capture always lists the running kernel's module tree
    # when the nvidia module is not loaded; the thread states no nvidia module exists in it.
    f'lib/modules/{kern}/kernel/drivers/gpu/drm/nouveau/nouveau.ko.zst': '',
})
save('arch-dkms-460-kernel-5-14-no-module', 'https://github.com/Frogging-Family/nvidia-all/issues/70',
     'nvidia-all 460 driver with DKMS: `modprobe nvidia` finds no module, "seems to be a DKMS error"; the maintainer: 460 is not '
     'compatible with kernel 5.14 (support came with 470), use 5.10 LTS or 470+',
     m, f)

# 8 ---------------------------------------------------------------------------------------------
# https://github.com/pdbear/syno_nvidia_gpu_driver/issues/22 (closed), 2024-06-13
# Query: "Unable to determine the device handle for GPU: Unknown Error nvidia-smi" (issues), rank 9.
# Thread: Synology DS1621+ on DSM 7.2.1-69057 Update 5 with a Tesla P4, driven by the project's
# NvidiaGPU driver package. It worked; after a reboot `nvidia-smi` prints "Unable to determine the
# device handle for GPU0000:07:00.0: Unknown Error"; the package starts and stops without errors.
# The maintainer: "tesla p4 need fan, it will over heat and shutdown if not." Cause: the passively
# cooled Tesla P4 has no airflow in the NAS and overheats.
# Filled: kernel (DSM's 4.4.302+), driver 535.154.05 (the package's current base per its README),
# library paths, user, device nodes, the module list, the version file's build line, no Secure
# Boot variable; no os-release (DSM keeps its version elsewhere); NVML's answers as the collector
# records a handle refused with NVML_ERROR_UNKNOWN ("Unknown Error"), cuInit's answer (999). No
# kernel log is quoted, none is written.
drv = '535.154.05'
m, f = base({"name": "admin", "uid": 1024, "groups": [[100, "users"], [101, "administrators"]]},
            '4.4.302+', None, '/usr/lib', drv, '12.2', sb=None)
m['device_nodes'] = std_nodes(246, modeset=False)
m['links'] = bound('0000:07:00.0', 'nvidia')
m['nvml'] = {"status": NVML_OK,
             "inventory": {"driver_version": drv, "cuda_driver_version": "12.2", "nvml_version": "12.535.154.05",
                           "gpus": [gpu_unavailable(0, "Unknown Error")]},
             "samples": [sample_unavailable(0, "Unknown Error")], "facts": []}
m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 999, "driver_version": "12.2", "devices": None}
f.update({
    'proc/modules': 'nvidia_uvm 1380352 0 - Live 0x0000000000000000 (POE)\nnvidia 56246272 1 nvidia_uvm, Live 0x0000000000000000 (POE)\n',
    'proc/driver/nvidia/version': version_file('prop', drv, 'Thu Jan 11 13:50:34 UTC 2024', 'gcc version 8.5.0 (GCC)'),
    **pci_gpu('0000:07:00.0', '0x030200'),
})
save('synology-ds1621-tesla-p4-no-device-handle', 'https://github.com/pdbear/syno_nvidia_gpu_driver/issues/22',
     'Synology DS1621+ (DSM 7.2.1) with a Tesla P4: after a reboot nvidia-smi says "Unable to determine the device handle for '
     'GPU0000:07:00.0: Unknown Error"; the maintainer: the Tesla P4 needs a fan, it overheats and shuts down without one',
     m, f)
print('ok')
