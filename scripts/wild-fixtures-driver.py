#!/usr/bin/env python3
"""Writes the "wild" fixtures of the Linux driver and kernel group: broken machines rebuilt from
public bug threads that were picked by a fixed procedure (see tests/fixtures/wild/driver.md), not
to fit any check of gpu-doctor. They measure how often gpu-doctor names the cause a thread
concluded on failures it was never tuned for; nothing here is meant to match the tool's answer.

Each block: the thread's address, the search query that found it, what the thread states, and
what was filled in (marked "filled"). Facts come only from the thread; a value the thread does not
give is chosen to be plausible for that machine. Capture format version 2 (see
docs/capture-format.md). Output: tests/fixtures/wild/<slug>/.
Run: python3 scripts/wild-fixtures-driver.py
"""
import sys, os, copy, zlib
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_lib import src, node, gpu_info, sample, facts, make, nvidia_libs, pci_gpu

G = 1 << 30
SB_OFF = bytes([6, 0, 0, 0, 0])
SB_ON = bytes([6, 0, 0, 0, 1])
SB = 'sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c'

OS = {
    'cachyos': 'NAME="CachyOS Linux"\nPRETTY_NAME="CachyOS"\nID=cachyos\nID_LIKE=arch\nBUILD_ID=rolling\n',
    'pop2404': 'NAME="Pop!_OS"\nVERSION="24.04 LTS"\nID=pop\nID_LIKE="ubuntu debian"\nPRETTY_NAME="Pop!_OS 24.04 LTS"\nVERSION_ID="24.04"\n',
    'manjaro': 'NAME="Manjaro Linux"\nPRETTY_NAME="Manjaro Linux"\nID=manjaro\nID_LIKE=arch\nBUILD_ID=rolling\n',
    'fedora37': 'NAME="Fedora Linux"\nVERSION="37 (Workstation Edition)"\nID=fedora\nVERSION_ID=37\nPRETTY_NAME="Fedora Linux 37 (Workstation Edition)"\n',
    'ubuntu2204': 'PRETTY_NAME="Ubuntu 22.04.5 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\nVERSION="22.04.5 LTS (Jammy Jellyfish)"\nID=ubuntu\nID_LIKE=debian\n',
    'ubuntu2204_0': 'PRETTY_NAME="Ubuntu 22.04 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\nVERSION="22.04 LTS (Jammy Jellyfish)"\nID=ubuntu\nID_LIKE=debian\n',
    'fedora34': 'NAME=Fedora\nVERSION="34 (Workstation Edition)"\nID=fedora\nVERSION_ID=34\nPRETTY_NAME="Fedora 34 (Workstation Edition)"\n',
    'fedora41': 'NAME="Fedora Linux"\nVERSION="41 (Workstation Edition)"\nID=fedora\nVERSION_ID=41\nPRETTY_NAME="Fedora Linux 41 (Workstation Edition)"\n',
    'amzn2': 'NAME="Amazon Linux"\nVERSION="2"\nID="amzn"\nID_LIKE="centos rhel fedora"\nVERSION_ID="2"\nPRETTY_NAME="Amazon Linux 2"\n',
    'fedora29': 'NAME=Fedora\nVERSION="29 (Workstation Edition)"\nID=fedora\nVERSION_ID=29\nPRETTY_NAME="Fedora 29 (Workstation Edition)"\n',
}

PROP = 'nvidia_uvm 1527808 0 - Live 0x0000000000000000 (POE)\nnvidia_drm 94208 2 - Live 0x0000000000000000 (POE)\n' \
       'nvidia_modeset 1314816 1 nvidia_drm, Live 0x0000000000000000 (POE)\nnvidia 56721408 2 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (POE)\n'
OPEN = PROP.replace('(POE)', '(OE)')
NOUVEAU = 'nouveau 2973696 3 - Live 0x0000000000000000\nmxm_wmi 12288 1 nouveau, Live 0x0000000000000000\n' \
          'drm_ttm_helper 12288 1 nouveau, Live 0x0000000000000000\nttm 110592 2 nouveau,drm_ttm_helper, Live 0x0000000000000000\n'
NOT_LOADED = {"kind": "unavailable", "summary": "The NVIDIA library is installed but the kernel driver is not loaded.",
              "next_step": "Check `lsmod | grep nvidia` and `sudo dmesg | grep -i nvidia`; nouveau or Secure Boot may block the module.",
              "attempts": [{"path": "libnvidia-ml.so.1", "error": "Driver Not Loaded"}]}
EMPTY_INV = {"driver_version": None, "cuda_driver_version": None, "nvml_version": None, "gpus": []}
EIO = 'Input/output error (os error 5)'


def uuid(seed):
    h = zlib.crc32(seed.encode())
    return f'GPU-{h:08x}-{h & 0xffff:04x}-4a1b-9c2d-{zlib.crc32(seed[::-1].encode()):012x}'


def base(user, kernel, distro, libdir, driver, cuda, sb=SB_OFF):
    """A machine with the driver's user-space libraries installed; each block below sets what
    its thread says of the kernel side. Returns (meta, files)."""
    m = copy.deepcopy(src['meta'])
    m['user'] = user
    m['env'] = {}
    m['device_nodes'] = []
    m['links'] = {}
    m['listings'] = {}
    m['nvml'] = {"status": NOT_LOADED, "inventory": dict(EMPTY_INV), "samples": [], "facts": []}
    m['libraries'] = [dict(l, via='ld.so.cache') for l in nvidia_libs(libdir, driver)]
    m['kernel_log'] = {"lines": []}
    m['kernel_log_source'] = {"read": "/dev/kmsg", "tried": []}
    m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 100, "driver_version": cuda, "devices": None}
    files = {'etc/os-release': OS[distro], 'proc/sys/kernel/osrelease': kernel + '\n'}
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


def pci(addr, vendor, cls):
    return {f'sys/bus/pci/devices/{addr}/vendor': vendor + '\n', f'sys/bus/pci/devices/{addr}/class': cls + '\n'}


def bound(addr, driver):
    return {f'/sys/bus/pci/devices/{addr}/driver': f'../../../bus/pci/drivers/{driver}'}


def version_file(kind, driver, build, gcc):
    if kind == 'open':
        return f'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {driver}  Release Build  {build}\nGCC version:  {gcc}\n'
    return f'NVRM version: NVIDIA UNIX x86_64 Kernel Module  {driver}  {build}\nGCC version:  {gcc}\n'


def save(slug, url, m, files):
    make('wild/' + slug, url, m, files, version=2)
    print('wrote', slug)


# 1 ---------------------------------------------------------------------------------------------
# https://github.com/NVIDIA/open-gpu-kernel-modules/issues/876 (closed)
# Query: "RmInitAdapter failed solved" (issues), rank 7.
# Thread: CachyOS, kernel 6.14.4, open module 575.57.08, RTX 5070 Ti laptop GPU; nvidia-smi finds
# no device; downgrading the driver fixes it. An NVIDIA maintainer read the reporter's log: "with
# this driver, we are failing to initialize GSP on the GPU" (GPU at PCI:0000:64:00, UUID
# GPU-b4c029e6-..., Xid 120 GSP task exception: load access page fault); a later comment sums up that
# the fix NVIDIA announced shipped in 570.169 / 575.64. Cause: a bug in that driver release.
# Filled: user, kernel suffix, GCC line, AMD iGPU at 65:00.0, PCI class, Secure Boot off, CUDA
# version 12.9, device-node open results (nvidia0 refuses with EIO as an adapter that failed to
# initialize does), and the RmInitAdapter lines after the Xid, copied from another reporter's log
# in the same thread (Fedora 42, RTX 5080 laptop, same driver) because the quoted log stops there.
drv = '575.57.08'
m, f = base({"name": "lena", "uid": 1000, "groups": [[1000, "lena"], [998, "wheel"], [985, "video"]]},
            '6.14.4-2-cachyos', 'cachyos', '/usr/lib', drv, '12.9')
addr = '0000:64:00.0'
m['device_nodes'] = nodes(('/dev/nvidiactl', 195, 255, 'ok'), ('/dev/nvidia-modeset', 195, 254, 'ok'),
                          ('/dev/nvidia-uvm', 506, 0, 'ok'), ('/dev/nvidia0', 195, 0, EIO))
m['links'] = bound(addr, 'nvidia')
m['nvml'] = {"status": {"kind": "nvml", "library": "libnvidia-ml.so.1", "attempts": []},
             "inventory": {"driver_version": drv, "cuda_driver_version": "12.9", "nvml_version": "12.575.57.08", "gpus": []},
             "samples": [], "facts": []}
m['kernel_log'] = {"lines": [
    "nvidia-nvlink: Nvlink Core is being initialized, major device number 240",
    "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  Release Build  (notroot@)  Fri Jun  6 21:24:15 UTC 2025",
    "nvidia-modeset: Loading NVIDIA UNIX Open Kernel Mode Setting Driver for x86_64  575.57.08  Release Build  (notroot@)  Fri Jun  6 21:24:06 UTC 2025",
    "[drm] [nvidia-drm] [GPU ID 0x00006400] Loading driver",
    "NVRM: testIfDsmSubFunctionEnabled: GPS ACPI DSM called before _acpiDsmSupportedFuncCacheInit subfunction = 11.",
    "NVRM: kgspHealthCheck_TU102: ****************************** GSP-CrashCat Report *******************************",
    "NVRM: GPU at PCI:0000:64:00: GPU-b4c029e6-637f-bc9b-6c84-28d005fbad48",
    "NVRM: Xid (PCI:0000:64:00): 120, GSP task exception: load access page fault (cause:0xd) @ pc:0x140c7f6, partition:4#0, task:3",
    # filled from the second reporter's log in the same thread:
    "NVRM: _kgspBootGspRm: unexpected WPR2 already up, cannot proceed with booting GSP",
    "NVRM: _kgspBootGspRm: (the GPU is likely in a bad state and may need to be reset)",
    "NVRM: RmInitAdapter: Cannot initialize GSP firmware RM",
    "NVRM: GPU 0000:64:00.0: RmInitAdapter failed! (0x62:0x40:1941)",
    "NVRM: GPU 0000:64:00.0: rm_init_adapter failed, device minor number 0",
]}
f.update({
    'proc/modules': OPEN,
    'proc/driver/nvidia/version': version_file('open', drv, '(notroot@)  Fri Jun  6 21:24:15 UTC 2025', 'gcc version 15.1.1 20250425 (GCC)'),
    **pci_gpu(addr, '0x030000'),
    **pci('0000:65:00.0', '0x1002', '0x030000'),
    'lib/modules/6.14.4-2-cachyos/extramodules/nvidia.ko.zst': '',
})
save('gsp-init-fails-rtx5070ti-laptop-575', 'https://github.com/NVIDIA/open-gpu-kernel-modules/issues/876', m, f)

# 2 ---------------------------------------------------------------------------------------------
# https://github.com/pop-os/cosmic-epoch/issues/1886 (closed)
# Query: "nvidia probe routine failed solved" (issues), rank 11.
# Thread: GTX 1060 6GB; the Pop!_OS COSMIC alpha 7 NVIDIA image loops on "probe with driver nvidia
# failed with error -1". A maintainer: alpha 6 used nvidia-driver-565, alpha 7 switched to
# nvidia-driver-570-open, and the open kernel modules do not support this (pre-Turing) card;
# install the Intel/AMD image and the non-open driver. Cause: open kernel module on a GPU it does
# not support.
# Filled: kernel, the 570 patch level (570.133.07), user (the live session's), bus 01:00.0, Secure
# Boot off, DKMS module path, and the NVRM lines the open module prints when it turns such a GPU
# away (the thread quotes only the probe line; the wording is the driver's own for this case).
drv = '570.133.07'
kern = '6.12.10-76061203-generic'
m, f = base({"name": "pop-os", "uid": 999, "groups": [[999, "pop-os"], [27, "sudo"], [44, "video"]]},
            kern, 'pop2404', '/usr/lib/x86_64-linux-gnu', drv, '12.8')
m['kernel_log'] = {"lines": [
    "NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:1c03)",
    "NVRM: installed in this system is not supported by open",
    "NVRM: nvidia.ko because it does not include the required GPU",
    "NVRM: System Processor (GSP).",
    "NVRM: Please see the 'Open Linux Kernel Modules' and 'GSP",
    "NVRM: Firmware' sections in the driver README, available on",
    "NVRM: the Linux graphics driver download page at",
    "NVRM: www.nvidia.com.",
    "nvidia 0000:01:00.0: probe with driver nvidia failed with error -1",
    "NVRM: The NVIDIA probe routine failed for 1 device(s).",
    "NVRM: None of the NVIDIA devices were initialized.",
    "nvidia 0000:01:00.0: probe with driver nvidia failed with error -1",
]}
f.update({
    'proc/modules': 'snd_hda_intel 61440 2 - Live 0x0000000000000000\nr8169 110592 0 - Live 0x0000000000000000\n',
    **pci_gpu('0000:01:00.0', '0x030000'),
    f'lib/modules/{kern}/updates/dkms/nvidia.ko.zst': '',
})
save('open-module-on-gtx1060-popos-570-open', 'https://github.com/pop-os/cosmic-epoch/issues/1886', m, f)

# 3 ---------------------------------------------------------------------------------------------
# https://github.com/Cyridd/cmpunlocker/issues/4 (closed)
# Query: "negativo17 nvidia-driver NVRM GPU RmInitAdapter Xid" (issues), rank 4.
# Thread: CMP 40HX (TU106, 10de:1f0b), Manjaro, kernel 7.2.0-1-MANJARO, open modules 610.57.04 built
# with the project's patches, card in the x16 slot (no riser). The compute and ReBAR patches work;
# the reporter found that the PCIe Gen2 unlock patch makes the GPU fall off the bus (Xid 79) right
# after the link is retrained to 5 GT/s; afterwards every RmInitAdapter fails (0x22:0x56:894,
# "osInitNvMapping: *** Cannot attach gpu"). Cause: a third-party patch to the driver that forces a
# PCIe link retrain.
# Filled: user, build string, GCC, bus 01:00.0, 3D-controller class, Secure Boot off, the Xid 79
# line's exact wording (the title gives only "Xid 79"), device-node open results, CUDA result. The
# patch's own CMP40_PCIE_GEN2 log lines are not NVRM lines, so a capture would not keep them.
drv = '610.57.04'
m, f = base({"name": "ms", "uid": 1000, "groups": [[1000, "ms"], [998, "wheel"], [986, "video"]]},
            '7.2.0-1-MANJARO', 'manjaro', '/usr/lib', drv, '13.2')
addr = '0000:01:00.0'
m['device_nodes'] = nodes(('/dev/nvidiactl', 195, 255, 'ok'), ('/dev/nvidia-uvm', 507, 0, 'ok'),
                          ('/dev/nvidia0', 195, 0, EIO))
m['links'] = bound(addr, 'nvidia')
m['nvml'] = {"status": {"kind": "nvml", "library": "libnvidia-ml.so.1", "attempts": []},
             "inventory": {"driver_version": drv, "cuda_driver_version": "13.2", "nvml_version": "13.610.57.04", "gpus": []},
             "samples": [], "facts": []}
m['cuda']['init_code'] = 999
attach = ["NVRM: osInitNvMapping: *** Cannot attach gpu",
          "NVRM: RmInitAdapter: osInitNvMapping failed, bailing out of RmInitAdapter",
          "NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:894)",
          "NVRM: GPU 0000:01:00.0: rm_init_adapter failed, device minor number 0"]
m['kernel_log'] = {"lines": [
    "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  610.57.04  Release Build  (builduser@manjaro)",
    "NVRM: GPU at PCI:0000:01:00: " + uuid('cmp40hx'),
    "NVRM: Xid (PCI:0000:01:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
    "NVRM: GPU 0000:01:00.0: GPU has fallen off the bus.",
] + attach * 3}
f.update({
    'proc/modules': OPEN,
    'proc/driver/nvidia/version': version_file('open', drv, '(builduser@manjaro)', 'gcc version 15.2.1 20250813 (GCC)'),
    **pci_gpu(addr, '0x030200'),
    'lib/modules/7.2.0-1-MANJARO/extramodules/nvidia.ko.zst': '',
})
save('cmp40hx-pcie-gen2-unlock-fell-off-bus', 'https://github.com/Cyridd/cmpunlocker/issues/4', m, f)

# 4 ---------------------------------------------------------------------------------------------
# https://github.com/negativo17/nvidia-driver/issues/145 (closed)
# Query: "RmInitAdapter failed 515.57 Ubuntu 22.04 5.15.0-41-generic the problem was solved after"
# (issues), rank 8 (a query written to read another thread; it names no cause).
# Thread: Fedora 37, GTX 1070, upgrade from 535.113.01-1 to 545.29.02-1 (negativo17 packages);
# Xorg "Failed to initialize the NVIDIA kernel module". Cause agreed by the packager: the udev rule
# of the 545 packages was broken (it still named the nvidia-frontend device of older drivers), so
# the /dev/nvidia* nodes were not created; editing the rule to nvidiactl, or installing
# nvidia-modprobe, fixed it, and the packaging was corrected.
# Filled: kernel, user, bus 01:00.0, Secure Boot off, the module-load lines (the reporter's logs were
# attachments), no /dev/nvidia* nodes at all (what the cause implies), NVML's and cuInit's answers.
drv = '545.29.02'
kern = '6.5.12-100.fc37.x86_64'
m, f = base({"name": "mvrk", "uid": 1000, "groups": [[1000, "mvrk"], [10, "wheel"], [39, "video"]]},
            kern, 'fedora37', '/usr/lib64', drv, '12.3')
m['links'] = bound('0000:01:00.0', 'nvidia')
m['kernel_log'] = {"lines": [
    "nvidia: loading out-of-tree module taints kernel.",
    "nvidia-nvlink: Nvlink Core is being initialized, major device number 236",
    "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  545.29.02  Thu Oct 26 21:21:38 UTC 2023",
    "nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms  545.29.02  Thu Oct 26 20:48:53 UTC 2023",
    "[drm] [nvidia-drm] [GPU ID 0x00000100] Loading driver",
    "[drm] Initialized nvidia-drm 0.0.0 20160202 for 0000:01:00.0 on minor 1",
]}
f.update({
    'proc/modules': PROP,
    'proc/driver/nvidia/version': version_file('prop', drv, 'Thu Oct 26 21:21:38 UTC 2023', 'gcc version 12.3.1 20230508 (Red Hat 12.3.1-1) (GCC)'),
    **pci_gpu('0000:01:00.0', '0x030000'),
    f'lib/modules/{kern}/extra/nvidia/nvidia.ko.xz': '',
})
save('udev-rule-no-device-nodes-545-fedora', 'https://github.com/negativo17/nvidia-driver/issues/145', m, f)

# 5 ---------------------------------------------------------------------------------------------
# https://www.wanpihou.xyz/archives/nvidiaqu-dong-ban-ben-bu-pi-pei-dao-zhi-nvidia-smishi-xiao
# Query: "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver" (pages),
# rank 5. A case write-up with a stated cause and fix.
# States: nvidia-smi "Failed to initialize NVML: Driver/library version mismatch" (NVML library
# 570.133); unattended-upgrades had installed kernel 5.15.0-138-generic and DKMS did not build the
# module for it; uname -r 5.15.0-94-generic; dkms status nvidia/570.133.07 for 5.15.0-94-generic;
# modinfo says 570.133.07 but /sys/module/nvidia/version (the loaded module) 570.124.06; dmesg
# "NVRM: API mismatch" between client 570.133.07 and kernel module 570.124.06; mixed package states.
# Cause: an old kernel module still loaded under newer user-space libraries after an automatic
# update; fixed by purging and reinstalling the driver.
# Filled: GPU (RTX 3090 at 01:00.0), user, the exact driver wording of the API-mismatch line (the
# page quotes it shortened), device nodes, Secure Boot off, cuInit's answer (803).
m, f = base({"name": "ops", "uid": 1000, "groups": [[1000, "ops"], [4, "adm"], [27, "sudo"]]},
            '5.15.0-94-generic', 'ubuntu2204', '/usr/lib/x86_64-linux-gnu', '570.133.07', '12.8')
m['device_nodes'] = nodes(('/dev/nvidiactl', 195, 255, 'ok'), ('/dev/nvidia0', 195, 0, 'ok'),
                          ('/dev/nvidia-uvm', 510, 0, 'ok'), ('/dev/nvidia-modeset', 195, 254, 'ok'))
m['links'] = bound('0000:01:00.0', 'nvidia')
m['nvml']['status'] = {"kind": "unavailable",
                       "summary": "The driver was updated: the loaded kernel module and the user-space library have different versions.",
                       "next_step": "Reboot (or reload the nvidia kernel modules) so both sides run the same version.",
                       "attempts": [{"path": "libnvidia-ml.so.1", "error": "Driver/library version mismatch"}]}
m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 803, "driver_version": "12.8", "devices": None}
m['kernel_log'] = {"lines": [
    "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  570.124.06  Fri Feb 21 21:47:16 UTC 2025",
    "NVRM: API mismatch: the client has the version 570.133.07, but",
    "NVRM: this kernel module has the version 570.124.06.  Please",
    "NVRM: make sure that this kernel module and all NVIDIA driver",
    "NVRM: components have the same version.",
]}
f.update({
    'proc/modules': PROP,
    'proc/driver/nvidia/version': version_file('prop', '570.124.06', 'Fri Feb 21 21:47:16 UTC 2025', 'gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)'),
    **pci_gpu('0000:01:00.0', '0x030000'),
    'lib/modules/5.15.0-94-generic/updates/dkms/nvidia.ko': '',
    'lib/modules/5.15.0-138-generic/kernel/drivers/video/fbdev/.keep': '',
})
save('stale-module-after-unattended-upgrade-570', 'https://www.wanpihou.xyz/archives/nvidiaqu-dong-ban-ben-bu-pi-pei-dao-zhi-nvidia-smishi-xiao', m, f)

# 6 ---------------------------------------------------------------------------------------------
# https://github.com/gridhead/nvidia-auto-installer-for-fedora-linux/issues/75 (closed)
# Query: "Fedora 43 ProArt P16 RTX 5060 laptop nvidia-smi couldn't communicate akmod 580.105.08 open
# kernel module solved" (issues), rank 8 (written to read another thread; names no cause of this one).
# Thread: Fedora 34, RTX 2060 Super; after installing the driver with the tool and rebooting,
# `sudo nvidia-smi` "couldn't communicate with the NVIDIA driver" and Settings shows NV166 (nouveau).
# The reporter found Secure Boot enabled in the firmware (left from Windows); after disabling it,
# erasing the NVIDIA packages and reinstalling, the driver works. Cause: Secure Boot refused the
# unsigned akmod-built module.
# Filled: kernel, driver 470.74 (RPM Fusion's at the time), user, bus 01:00.0, the akmod module path,
# nouveau lines, and the kernel's lockdown refusal line (the thread quotes no kernel log; this is
# what a Fedora kernel logs when Secure Boot blocks an unsigned module).
drv = '470.74'
kern = '5.14.9-200.fc34.x86_64'
m, f = base({"name": "hn", "uid": 1000, "groups": [[1000, "hn"], [10, "wheel"]]},
            kern, 'fedora34', '/usr/lib64', drv, '11.4', sb=SB_ON)
m['links'] = bound('0000:01:00.0', 'nouveau')
m['kernel_log'] = {"lines": [
    "Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7",
    "nouveau 0000:01:00.0: NVIDIA TU106 (166000a1)",
    "nouveau 0000:01:00.0: bios: version 90.06.44.00.2f",
    "nouveau 0000:01:00.0: DRM: VRAM: 8192 MiB",
    "[drm] Initialized nouveau 1.3.1 20120801 for 0000:01:00.0 on minor 0",
]}
f.update({
    'proc/modules': NOUVEAU,
    **pci_gpu('0000:01:00.0', '0x030000'),
    f'lib/modules/{kern}/extra/nvidia/nvidia.ko.xz': '',
})
save('secure-boot-on-fedora34-akmod-rtx2060s', 'https://github.com/gridhead/nvidia-auto-installer-for-fedora-linux/issues/75', m, f)

# 7 ---------------------------------------------------------------------------------------------
# https://github.com/CachyOS/copr-linux-cachyos/issues/16 (closed)
# Query: same as block 6, rank 10.
# Thread: Fedora 41, RTX 3080, the CachyOS LTO kernel from the Copr; the akmod build fails (log
# "560.35.03-1-for-6.12.0-cb1.0.lto.fc41.x86_64.failed.log") and the system falls back to nouveau.
# A maintainer: all 560 drivers are incompatible with kernel 6.12; 565 is patched (RPM Fusion ships
# it). Cause: the installed driver branch cannot build against the running kernel, so there is no
# module for it.
# Filled: user, bus 01:00.0, Secure Boot off, the earlier stock kernel that still has a built module
# (6.11.8-300.fc41), nouveau lines.
drv = '560.35.03'
kern = '6.12.0-cb1.0.lto.fc41.x86_64'
m, f = base({"name": "eis", "uid": 1000, "groups": [[1000, "eis"], [10, "wheel"]]},
            kern, 'fedora41', '/usr/lib64', drv, '12.6')
m['links'] = bound('0000:01:00.0', 'nouveau')
m['kernel_log'] = {"lines": [
    "nouveau 0000:01:00.0: NVIDIA GA102 (172000a1)",
    "nouveau 0000:01:00.0: bios: version 94.02.42.00.a9",
    "nouveau 0000:01:00.0: DRM: VRAM: 10240 MiB",
    "[drm] Initialized nouveau 1.4.0 20120801 for 0000:01:00.0 on minor 1",
]}
f.update({
    'proc/modules': NOUVEAU,
    **pci_gpu('0000:01:00.0', '0x030000'),
    'lib/modules/6.11.8-300.fc41.x86_64/extra/nvidia/nvidia.ko.xz': '',
    f'lib/modules/{kern}/kernel/drivers/gpu/drm/nouveau/nouveau.ko.xz': '',
})
save('akmod-560-fails-on-kernel-6-12', 'https://github.com/CachyOS/copr-linux-cachyos/issues/16', m, f)

# 8 ---------------------------------------------------------------------------------------------
# https://github.com/awslabs/amazon-eks-ami/issues/1523 (closed)
# Query: "nvidia GSP solved" (issues), rank 10.
# Thread: EKS GPU AMI nodes on g4dn/g5/g5g; GPUs become unresponsive. On a g5: driver 535.54.03, CUDA
# 12.2, NVIDIA A10G at 00000000:00:1E.0, persistence mode on, `nvidia-smi -a` shows "Unknown Error"
# for MIG mode, the device plugin fails with "error creating nvml.Device 0: nvml: Unknown Error";
# about four boots in five. Maintainers' conclusion: the GPU System Processor firmware (GSP) of the
# driver causes it; the next AMI release disables GSP automatically on g4dn (and the g5 case needed
# the open module, where GSP cannot be disabled). Cause: the driver's GSP firmware hangs the GPU.
# Filled: kernel, user root, Amazon Linux 2 release, no EFI Secure Boot variable (EC2), A10G's
# fixed properties, the sample's failures (taken as NVML's "Unknown Error" on GPU 0), cuInit 999,
# the module-load line. The thread quotes no Xid lines, so none are written.
drv = '535.54.03'
m, f = base({"name": "root", "uid": 0, "groups": [[0, "root"]]},
            '5.10.198-187.748.amzn2.x86_64', 'amzn2', '/usr/lib64', drv, '12.2', sb=None)
addr = '0000:00:1e.0'
m['device_nodes'] = nodes(('/dev/nvidiactl', 195, 255, 'ok'), ('/dev/nvidia0', 195, 0, 'ok'),
                          ('/dev/nvidia-uvm', 245, 0, 'ok'), ('/dev/nvidia-uvm-tools', 245, 1, 'ok'))
m['links'] = bound(addr, 'nvidia')
vram = 24146608128
gi = gpu_info(0, "NVIDIA A10G", uuid('a10g-eks'), ':00:1e.0', vram, '8.6', 4, 300.0, 1710, 6251, 98)
s = sample(0, vram, 300.0)
for k in list(s):
    if k not in ('index', 'health'):
        s[k] = {"na": "Unknown Error"}
s['health'] = 'Ok'
fa = facts(0)
fa.update({"persistence": True, "mig": {"na": "Unknown Error"}, "mig_devices": {"na": "Unknown Error"}})
m['nvml'] = {"status": {"kind": "nvml", "library": "libnvidia-ml.so.1", "attempts": []},
             "inventory": {"driver_version": drv, "cuda_driver_version": "12.2", "nvml_version": "12.535.54.03", "gpus": [gi]},
             "samples": [s], "facts": [fa]}
m['cuda'] = {"library": "libcuda.so.1", "load_error": None, "init_code": 999, "driver_version": "12.2", "devices": None}
m['kernel_log'] = {"lines": ["NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.54.03  Tue Jun  6 22:20:39 UTC 2023"]}
f.update({
    'proc/modules': PROP,
    'proc/driver/nvidia/version': version_file('prop', drv, 'Tue Jun  6 22:20:39 UTC 2023', 'gcc version 10.5.0 20230707 (Red Hat 10.5.0-1) (GCC)'),
    **pci_gpu(addr, '0x030000'),
    'lib/modules/5.10.198-187.748.amzn2.x86_64/kernel/drivers/video/nvidia.ko': '',
})
save('gsp-firmware-hang-eks-g5-a10g', 'https://github.com/awslabs/amazon-eks-ami/issues/1523', m, f)

# 9 ---------------------------------------------------------------------------------------------
# https://github.com/NVIDIA/open-gpu-kernel-modules/issues/116 (closed; labels bug, Implemented,
# NV-Triaged)
# Query: "NVRM: GPU" (issues), rank 6.
# Thread: Ubuntu 22.04, RTX 2060 at 0000:01:00.0, open kernel module 515.43.04 from the CUDA apt
# repository: "kgspInitRm_IMPL: missing NVDEC0 engine, cannot initialize GSP-RM", RmInitAdapter
# failed (0x63:0x56:1689), nvidia-drm cannot register the device; the proprietary module of the same
# version works (UUID GPU-0e997e95-3209-c2c9-6214-347945351445, VBIOS 90.06.2E.C0.0B). NVIDIA triaged
# it as a bug of the open module and marked the fix implemented. Cause: an open-module bug on this
# GPU (GSP-RM expected a video-decode engine this board does not report).
# Filled: kernel, user, Secure Boot off, GCC, device-node open results, CUDA version and result.
drv = '515.43.04'
kern = '5.15.0-30-generic'
m, f = base({"name": "kfz", "uid": 1000, "groups": [[1000, "kfz"], [27, "sudo"], [44, "video"]]},
            kern, 'ubuntu2204_0', '/usr/lib/x86_64-linux-gnu', drv, '11.7')
m['device_nodes'] = nodes(('/dev/nvidiactl', 195, 255, 'ok'), ('/dev/nvidia-uvm', 510, 0, 'ok'),
                          ('/dev/nvidia0', 195, 0, EIO))
m['links'] = bound('0000:01:00.0', 'nvidia')
m['nvml'] = {"status": {"kind": "nvml", "library": "libnvidia-ml.so.1", "attempts": []},
             "inventory": {"driver_version": drv, "cuda_driver_version": "11.7", "nvml_version": "11.515.43.04", "gpus": []},
             "samples": [], "facts": []}
m['kernel_log'] = {"lines": [
    "NVRM kgspInitRm_IMPL: missing NVDEC0 engine, cannot initialize GSP-RM",
    "NVRM RmInitAdapter: Cannot initialize GSP firmware RM",
    "NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x63:0x56:1689)",
    "NVRM: GPU 0000:01:00.0: rm_init_adapter failed, device minor number 0",
    "[drm:nv_drm_load [nvidia_drm]] *ERROR* [nvidia-drm] [GPU ID 0x00000100] Failed to allocate NvKmsKapiDevice",
    "[drm:nv_drm_probe_devices [nvidia_drm]] *ERROR* [nvidia-drm] [GPU ID 0x00000100] Failed to register device",
    "nvidia-gpu 0000:01:00.3: i2c timeout error e0000000",
]}
f.update({
    'proc/modules': OPEN,
    'proc/driver/nvidia/version': version_file('open', drv, '(dvs-builder@U16-T02-35-3)  Mon Apr 25 23:00:00 UTC 2022', 'gcc version 11.2.0 (Ubuntu 11.2.0-19ubuntu1)'),
    **pci_gpu('0000:01:00.0', '0x030000'),
    f'lib/modules/{kern}/updates/dkms/nvidia.ko': '',
})
save('open-module-bug-rtx2060-nvdec0', 'https://github.com/NVIDIA/open-gpu-kernel-modules/issues/116', m, f)

# 10 --------------------------------------------------------------------------------------------
# https://github.com/negativo17/nvidia-driver/issues/73 (closed)
# Query: "nvidia-auto-installer Fedora 37 6.0.17-300.fc37 525.60.11 kmod built but nouveau loaded,
# cause found" (issues), rank 4 (written to read another thread; names no cause of this one).
# Thread: Fedora 29, kernel 4.20.6-200.fc29.x86_64, command line with rd.driver.blacklist=nouveau
# only; the kernel log shows nouveau taking the GM204 card at 0000:01:00.0 (4096 MiB). A packager in the thread:
# nouveau is loaded and prevents the nvidia module from loading; add modprobe.blacklist=nouveau.
# Cause: nouveau still binds the GPU, so the NVIDIA module cannot.
# Filled: driver 415.27 (negativo17's at the time), the card's name (GTX 970), user, Secure Boot off,
# the akmod module path. The kernel command line is not part of a capture.
drv = '415.27'
kern = '4.20.6-200.fc29.x86_64'
m, f = base({"name": "fx", "uid": 1000, "groups": [[1000, "fx"], [10, "wheel"]]},
            kern, 'fedora29', '/usr/lib64', drv, '10.0')
m['links'] = bound('0000:01:00.0', 'nouveau')
m['kernel_log'] = {"lines": [
    "nouveau 0000:01:00.0: enabling device (0000 -> 0003)",
    "nouveau 0000:01:00.0: NVIDIA GM204 (124020a1)",
    "nouveau 0000:01:00.0: bios: version 84.04.1f.00.6f",
    "nouveau 0000:01:00.0: fb: 4096 MiB GDDR5",
    "nouveau 0000:01:00.0: bus: MMIO write of 8000012c FAULT at 10eb14 [ IBUS ]",
    "nouveau 0000:01:00.0: DRM: VRAM: 4096 MiB",
    "nouveau 0000:01:00.0: DRM: GART: 1048576 MiB",
]}
f.update({
    'proc/modules': NOUVEAU,
    **pci_gpu('0000:01:00.0', '0x030000'),
    f'lib/modules/{kern}/extra/nvidia/nvidia.ko.xz': '',
})
save('nouveau-holds-gpu-fedora29-negativo17', 'https://github.com/negativo17/nvidia-driver/issues/73', m, f)
print('ok')
