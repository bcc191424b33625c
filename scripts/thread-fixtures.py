#!/usr/bin/env python3
"""Writes the checklist fixtures taken from public bug reports and forum threads.

Each fixture is a capture (tests/fixtures/<name>/capture.json + fs/) built from the facts a public
thread states (driver version, GPU, PCI address, kernel-log lines, what nvidia-smi printed); the
thread's address is stored in the capture's top-level "source" field. Details a thread does not
give (distribution release, kernel, user name, other PCI addresses) are chosen to vary across the
fixtures and are marked as such in the comments below. Starts from the synthetic
xid-79-fallen-off-bus and no-driver fixtures (examples/make_fixtures.rs) for the fields that do not
matter to the case. Run: python3 scripts/thread-fixtures.py
"""
import sys, os, json, copy
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_lib import *

# (a) One of four RTX 2080 Ti fell off the bus (openSUSE Leap 15.2, open module 520.61.05):
# nvidia-smi "Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error".
m=copy.deepcopy(src['meta'])
m['user']={"name": "daniel", "uid": 1000, "groups": [[100, "users"], [484, "video"]]}
buses=[":04:00.0", ":0b:00.0", ":86:00.0", ":87:00.0"]
uuids=["GPU-67a571b1-79ee-1016-8ea3-c1fff3f1c1d2", "GPU-3e34e62f-d88e-f448-415e-be2cbf2c6178",
       "GPU-2d540dd6-583b-cf11-80dd-cc28edc1dd62", "GPU-80be5c9a-eb7d-2388-ad7c-7d3ee8f87235"]
vram=11811160064
m['device_nodes']=[node('/dev/nvidiactl',195,255), node('/dev/nvidia-uvm',511,0)]+[node(f'/dev/nvidia{i}',195,i) for i in range(4)]
m['links']={f'/sys/bus/pci/devices/0000{b}/driver': '../../../bus/pci/drivers/nvidia' for b in buses}
visible=[0,2,3]
m['nvml']['inventory']={"driver_version": "520.61.05", "cuda_driver_version": "11.8", "nvml_version": "11.520.61.05",
    "gpus": [gpu_info(n, "NVIDIA GeForce RTX 2080 Ti", uuids[i], buses[i], vram, "7.5", 3, 250.0, 2100, 7000, 89) for n,i in enumerate(visible)]}
m['nvml']['samples']=[sample(n, vram, 250.0) for n in range(3)]
m['nvml']['facts']=[facts(n) for n in range(3)]
m['libraries']=nvidia_libs('/usr/lib64', '520.61.05')
m['kernel_log']={"lines": [
    "NVRM: GPU at PCI:0000:0b:00: GPU-3e34e62f-d88e-f448-415e-be2cbf2c6178",
    "NVRM: GPU Board Serial Number: 0",
    "NVRM: Xid (PCI:0000:0b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
    "NVRM: GPU 0000:0b:00.0: GPU has fallen off the bus.",
]}
m['cuda']={"library": "libcuda.so.1", "load_error": None, "init_code": 999, "driver_version": "11.8", "devices": None}
files={
 'etc/os-release': 'NAME="openSUSE Leap"\nVERSION="15.2"\nID="opensuse-leap"\nID_LIKE="suse opensuse"\nVERSION_ID="15.2"\nPRETTY_NAME="openSUSE Leap 15.2"\n',
 'proc/sys/kernel/osrelease': '5.3.18-lp152.106-default\n',
 'proc/modules': 'nvidia_uvm 1343488 0 - Live 0x0000000000000000 (OE)\nnvidia_modeset 1241088 0 - Live 0x0000000000000000 (OE)\nnvidia 40644608 2 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (OE)\n',
 'proc/driver/nvidia/version': 'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  520.61.05  Release Build  (dvs-builder@U16-T02-35-3)  Thu Sep 29 05:30:25 UTC 2022\nGCC version:  gcc version 7.5.0 (SUSE Linux)\n',
 'sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c': bytes([6,0,0,0,0]),
 'home/daniel/.local/lib/python3.8/site-packages/torch/version.py': "__version__ = '1.13.0+cu117'\ndebug = False\ncuda: Optional[str] = '11.7'\nhip: Optional[str] = None\n",
}
for b in buses:
    files.update(pci_gpu('0000' + b))
make('xid-79-one-of-four-gpus-lost', 'https://github.com/NVIDIA/open-gpu-kernel-modules/issues/387', m, files)

# (b) The only GPU fell off the bus while the driver probed it, reported without an Xid line
# (open module 570.158.01; "NVRM: The NVIDIA probe routine failed for 1 device(s)").
m=copy.deepcopy(src['meta'])
m['user']={"name": "svc-train", "uid": 1001, "groups": [[1001, "svc-train"], [39, "video"]]}
m['device_nodes']=[node('/dev/nvidiactl',195,255), node('/dev/nvidia-uvm',509,0)]
m['links']={}
m['nvml']['inventory']={"driver_version": "570.158.01", "cuda_driver_version": "12.8", "nvml_version": "12.570.158.01", "gpus": []}
m['nvml']['samples']=[]
m['nvml']['facts']=[]
m['libraries']=nvidia_libs('/usr/lib64', '570.158.01')
m['kernel_log']={"lines": [
    "NVRM: The NVIDIA GPU 0000:b3:00.0",
    "NVRM: (PCI ID: 10de:26b5) installed in this system has",
    "NVRM: fallen off the bus and is not responding to commands.",
    "NVRM: The NVIDIA probe routine failed for 1 device(s).",
    "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.158.01  Release Build  (dvs-builder@U22-I3-B10-02-5)  Mon Jun  2 13:13:04 UTC 2025",
]}
m['cuda']={"library": "libcuda.so.1", "load_error": None, "init_code": 100, "driver_version": "12.8", "devices": 0}
files={
 'etc/os-release': 'NAME="Rocky Linux"\nVERSION="9.4 (Blue Onyx)"\nID="rocky"\nID_LIKE="rhel centos fedora"\nVERSION_ID="9.4"\nPRETTY_NAME="Rocky Linux 9.4 (Blue Onyx)"\n',
 'proc/sys/kernel/osrelease': '5.14.0-427.13.1.el9_4.x86_64\n',
 'proc/modules': 'nvidia_uvm 1806336 0 - Live 0x0000000000000000 (OE)\nnvidia 10846208 1 nvidia_uvm, Live 0x0000000000000000 (OE)\n',
 'proc/driver/nvidia/version': 'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.158.01  Release Build  (dvs-builder@U22-I3-B10-02-5)  Mon Jun  2 13:13:04 UTC 2025\nGCC version:  gcc version 11.4.1 20231218 (Red Hat 11.4.1-3) (GCC)\n',
 'sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c': bytes([6,0,0,0,0]),
 **pci_gpu('0000:b3:00.0', '0x030200'),
 'opt/venv/lib/python3.11/site-packages/torch/version.py': "__version__ = '2.7.1+cu128'\ndebug = False\ncuda: Optional[str] = '12.8'\nhip: Optional[str] = None\n",
}
make('fallen-off-bus-without-xid', 'https://github.com/NVIDIA/NVSentinel/issues/155', m, files)
print('ok')

# (c) A driver whose firmware (GSP) stopped answering: nvidia-smi hangs, Xid 119 "Timeout waiting
# for RPC from GSP!" repeats in the kernel log; the checks' NVML and cuInit probes never return.
m=copy.deepcopy(src['meta'])
m['user']={"name": "ops", "uid": 1002, "groups": [[1002, "ops"], [44, "video"], [27, "sudo"]]}
m['device_nodes']=[node('/dev/nvidiactl',195,255), node('/dev/nvidia-uvm',508,0), node('/dev/nvidia0',195,0)]
m['links']={'/sys/bus/pci/devices/0000:61:00.0/driver': '../../../bus/pci/drivers/nvidia'}
m['nvml']={"status": {"kind": "opening"}, "inventory": {"driver_version": None, "cuda_driver_version": None, "nvml_version": None, "gpus": []},
           "samples": [], "facts": [], "did_not_return": 5}
m['libraries']=nvidia_libs('/usr/lib/x86_64-linux-gnu', '525.85.12')
m['kernel_log']={"lines": [
    "NVRM: Xid (PCI:0000:61:00): 119, pid=1346198, name=nvidia-smi, Timeout waiting for RPC from GSP! Expected function 103 (GSP_RM_ALLOC) (0x80 0x38).",
    "NVRM: Xid (PCI:0000:61:00): 119, pid=1346198, name=nvidia-smi, Timeout waiting for RPC from GSP! Expected function 103 (GSP_RM_ALLOC) (0x2080 0x4).",
    "NVRM: Xid (PCI:0000:61:00): 119, pid=1346198, name=nvidia-smi, Timeout waiting for RPC from GSP! Expected function 76 (GSP_RM_CONTROL) (0x20800110 0x84).",
]}
m['cuda']={"library": None, "load_error": None, "init_code": None, "driver_version": None, "devices": None, "did_not_return": 5}
files={
 'etc/os-release': 'PRETTY_NAME="Debian GNU/Linux 11 (bullseye)"\nNAME="Debian GNU/Linux"\nVERSION_ID="11"\nVERSION="11 (bullseye)"\nVERSION_CODENAME=bullseye\nID=debian\n',
 'proc/sys/kernel/osrelease': '5.10.0-21-amd64\n',
 'proc/modules': 'nvidia_uvm 1372160 2 - Live 0x0000000000000000 (OE)\nnvidia 56512512 19 nvidia_uvm, Live 0x0000000000000000 (OE)\n',
 'proc/driver/nvidia/version': 'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  525.85.12  Release Build  (dvs-builder@U16-T02-35-3)  Sat Jan 28 02:10:06 UTC 2023\nGCC version:  gcc version 10.2.1 20210110 (Debian 10.2.1-6)\n',
 **pci_gpu('0000:61:00.0', '0x030200'),
}
make('gsp-timeout-driver-hung', 'https://github.com/NVIDIA/open-gpu-kernel-modules/issues/446', m, files)
print('ok c')

# (d) No NVIDIA driver at all, nouveau bound (Proxmox VE 6.4 on Debian 10; `lshw` shows
# "configuration: driver=nouveau" for the GeForce 9300 GS at pci@0000:03:00.0; nvidia-smi is not
# installed). Secure Boot on, so the Secure Boot check must not blame it for a missing module.
nd=json.load(open(f'{base}/no-driver/capture.json'))['meta']
m=copy.deepcopy(nd)
m['user']={"name": "root", "uid": 0, "groups": [[0, "root"]]}
m['device_nodes']=[]
m['links']={'/sys/bus/pci/devices/0000:03:00.0/driver': '../../../bus/pci/drivers/nouveau'}
m['libraries']=[]
m['kernel_log']={"lines": []}
m['cuda']={"library": None, "load_error": "libcuda.so.1: cannot open shared object file: No such file or directory", "init_code": None, "driver_version": None, "devices": None}
files={
 'etc/os-release': 'PRETTY_NAME="Debian GNU/Linux 10 (buster)"\nNAME="Debian GNU/Linux"\nVERSION_ID="10"\nVERSION="10 (buster)"\nVERSION_CODENAME=buster\nID=debian\n',
 'proc/sys/kernel/osrelease': '5.4.106-1-pve\n',
 'proc/modules': 'nouveau 1949696 1 - Live 0x0000000000000000\nmxm_wmi 16384 1 nouveau, Live 0x0000000000000000\nttm 106496 1 nouveau, Live 0x0000000000000000\n',
 'sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c': bytes([6,0,0,0,1]),
 **pci_gpu('0000:03:00.0', '0x030000'),
}
make('nouveau-and-no-nvidia-driver', 'https://github.com/peci1/nvidia-htop/issues/23', m, files)
print('ok d')

# (e) A kernel update without DKMS: the driver (installed with NVIDIA's .run file into
# kernel/drivers/video of the old kernel) has no module for the new kernel, so after the reboot
# nvidia-smi "couldn't communicate with the NVIDIA driver" (GCP Debian image, compute-gpu-installation).
m=copy.deepcopy(src['meta'])
m['user']={"name": "mlrunner", "uid": 1003, "groups": [[1003, "mlrunner"], [4, "adm"], [27, "sudo"]]}
m['device_nodes']=[]
m['links']={}
m['nvml']={"status": {"kind": "unavailable", "summary": "The NVIDIA library is installed but the kernel driver is not loaded.",
           "next_step": "Check `lsmod | grep nvidia` and `sudo dmesg | grep -i nvidia`; nouveau or Secure Boot may block the module. Rebooting after a driver install often fixes this.",
           "attempts": [{"path": "libnvidia-ml.so.1", "error": "Driver Not Loaded"}]},
           "inventory": {"driver_version": None, "cuda_driver_version": None, "nvml_version": None, "gpus": []}, "samples": [], "facts": []}
m['libraries']=nvidia_libs('/usr/lib/x86_64-linux-gnu', '525.85.12')
m['kernel_log']={"lines": []}
m['cuda']={"library": "libcuda.so.1", "load_error": None, "init_code": 100, "driver_version": "12.0", "devices": 0}
old, new = '5.10.0-20-cloud-amd64', '5.10.0-21-cloud-amd64'
files={
 'etc/os-release': 'PRETTY_NAME="Debian GNU/Linux 11 (bullseye)"\nNAME="Debian GNU/Linux"\nVERSION_ID="11"\nVERSION="11 (bullseye)"\nVERSION_CODENAME=bullseye\nID=debian\n',
 'proc/sys/kernel/osrelease': new+'\n',
 'proc/modules': 'virtio_net 57344 0 - Live 0x0000000000000000\n',
 **pci_gpu('0000:00:04.0', '0x030200'),
 f'lib/modules/{old}/kernel/drivers/video/nvidia.ko': '',
 f'lib/modules/{old}/kernel/drivers/video/nvidia-uvm.ko': '',
 f'lib/modules/{new}/kernel/drivers/video/fbdev/.keep': '',
 f'lib/modules/{new}/kernel/drivers/video/backlight/.keep': '',
}
make('module-missing-after-kernel-update', 'https://github.com/GoogleCloudPlatform/compute-gpu-installation/pull/18', m, files)
print('ok e')
