#!/usr/bin/env python3
"""Writes the "wild" WSL 2 / Windows fixtures (tests/fixtures/wild/<slug>): captures of machines
as public bug threads describe them, taken systematically from fixed search queries so that the
team can measure how often gpu-doctor names the cause a thread concluded on cases it was never
tuned for. The selection (queries, order, every skipped candidate and why) is recorded in
tests/fixtures/wild/wsl-windows.md, with the cause each thread concluded.

Each block below gives the thread, the query that found it, what the thread states, and what was
filled in because the thread does not say (marked "chosen"). The conclusions are the threads';
nothing here was adjusted to what gpu-doctor answers.

Linux/WSL captures start from the synthetic healthy-wsl2 fixture; Windows captures repeat the small
helpers of windows-fixtures.py (that script writes its fixtures when imported, so it is not
imported here). Run: python3 scripts/wild-fixtures-wsl-windows.py
"""
import sys, os, json, copy
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_lib import make, base, gpu_info, sample, facts, node

GiB = 1 << 30

# --- Linux side (WSL) ---------------------------------------------------------------------------
WSL = json.load(open(f'{base}/healthy-wsl2/capture.json'))['meta']
OS = {
 'ubuntu1804': 'PRETTY_NAME="Ubuntu 18.04.1 LTS"\nNAME="Ubuntu"\nVERSION_ID="18.04"\nID=ubuntu\nID_LIKE=debian\n',
 'ubuntu2004': 'PRETTY_NAME="Ubuntu 20.04.2 LTS"\nNAME="Ubuntu"\nVERSION_ID="20.04"\nID=ubuntu\nID_LIKE=debian\n',
 'ubuntu2204': 'PRETTY_NAME="Ubuntu 22.04.3 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\nID=ubuntu\nID_LIKE=debian\n',
 'arch': 'NAME="Arch Linux"\nPRETTY_NAME="Arch Linux"\nID=arch\nBUILD_ID=rolling\n',
}
WSL_LIB = '/usr/lib/wsl/lib'


def dxg():
    n = node('/dev/dxg', 10, 125)
    n['open'] = 'ok'
    return n


def wsl_libs(via='ld.so.cache'):
    """libcuda and libnvidia-ml as the Windows driver provides them in /usr/lib/wsl/lib (copies,
    not links: the driver ships libcuda.so, libcuda.so.1 and libcuda.so.1.1 as separate files)."""
    return [{"name": n, "path": f"{WSL_LIB}/{n}", "real_path": f"{WSL_LIB}/{n}", "via": via}
            for n in ("libcuda.so.1", "libnvidia-ml.so.1")]


def wsl_nvml_ok(driver, cuda, nvml_version, name, vram, cc, power):
    """NVML as it answers inside WSL 2 (WDDM underneath, many fields not reported)."""
    nv = copy.deepcopy(WSL['nvml'])
    nv['inventory'] = {"driver_version": driver, "cuda_driver_version": cuda, "nvml_version": nvml_version,
                       "gpus": [dict(nv['inventory']['gpus'][0], name=name, vram_total_bytes=vram, compute_capability=cc,
                                     power_limit_default_w=power)]}
    s = nv['samples'][0]
    s.update({"vram_total_bytes": vram, "vram_free_bytes": vram - s['vram_used_bytes'], "power_limit_w": power})
    return nv


def nvml_unavailable_linux(failure, summary, next_step, attempts):
    return {"status": {"kind": "unavailable", "summary": summary, "next_step": next_step, "attempts": attempts, "failure": failure},
            "inventory": {"driver_version": None, "cuda_driver_version": None, "nvml_version": None, "gpus": []},
            "samples": [], "facts": []}


DRIVER_NOT_LOADED_LINUX = ("The NVIDIA library is installed but the kernel driver is not loaded.",
                           "Check `lsmod | grep nvidia` and `sudo dmesg | grep -i nvidia`; nouveau or Secure Boot may block the module. Rebooting after a driver install often fixes this.")


def wsl_meta(user, env, nvml, libs, cuda, nodes=None):
    m = copy.deepcopy(WSL)
    m['user'] = user
    m['env'] = env
    m['device_nodes'] = [dxg()] if nodes is None else nodes
    m['links'] = {}
    m['listings'] = {}
    m['nvml'] = nvml
    m['libraries'] = libs
    m['kernel_log'] = {"lines": []}
    m['kernel_log_source'] = {"read": "/dev/kmsg", "tried": []}
    m['renderer'] = None
    m['cuda'] = cuda
    return m


def torch_py(ver, cuda):
    return f"__version__ = '{ver}'\ndebug = False\ncuda: Optional[str] = '{cuda}'\nhip: Optional[str] = None\n"


# (1) microsoft/WSL#3847 (closed, 2019-02-13). Query: "WSL nvidia-smi".
# Thread: Windows 10.0.17763.292, the Ubuntu app from the Store (WSL; WSL 2 did not exist yet),
# GeForce 930MX set to "High performance" in Graphics settings; nvidia-smi inside says
# "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"; the reporter had
# installed and reinstalled NVIDIA drivers of several versions. Maintainer: WSL cannot reach the
# GPU at all at this point (GPU support is a feature request, later shipped with WSL 2 GPU-PV).
# Chosen: Ubuntu 18.04; the Linux packages the reporter installed inside WSL are taken to be
# nvidia-utils-410 / libnvidia-compute-410 (410.78), whose libcuda and libnvidia-ml the loader
# finds; NVML answers "Driver Not Loaded" (what nvidia-smi's message means); cuInit 100. WSL 1 has
# no /dev/dxg, no /usr/lib/wsl/lib, no /proc/modules and no readable kernel log; its kernel string
# is 4.4.0-17763-Microsoft. WSL_DISTRO_NAME is left out (not known to be set on that build).
m = wsl_meta({"name": "hamahmi", "uid": 1000, "groups": [[1000, "hamahmi"], [27, "sudo"]]}, {},
             nvml_unavailable_linux("driver_not_loaded", *DRIVER_NOT_LOADED_LINUX,
                                    [{"path": "libnvidia-ml.so.1", "error": "Driver Not Loaded"}]),
             [{"name": n, "path": f"/usr/lib/x86_64-linux-gnu/{n}", "real_path": f"/usr/lib/x86_64-linux-gnu/{n.rsplit('.so', 1)[0]}.so.410.78", "via": "ld.so.cache"}
              for n in ("libcuda.so.1", "libnvidia-ml.so.1")],
             {"library": "libcuda.so.1", "load_error": None, "init_code": 100, "driver_version": "10.0", "devices": None},
             nodes=[])
m['kernel_log'] = {"unreadable": "no kernel log source could be read (/dev/kmsg: No such file or directory (os error 2); /var/log/kern.log: No such file or directory (os error 2))"}
m['kernel_log_source'] = {"read": None, "tried": [["/dev/kmsg", "No such file or directory (os error 2)"], ["/var/log/kern.log", "No such file or directory (os error 2)"]]}
make('wild/wsl1-build-17763-no-gpu-in-wsl', 'https://github.com/microsoft/WSL/issues/3847', m,
     {'etc/os-release': OS['ubuntu1804'], 'proc/sys/kernel/osrelease': '4.4.0-17763-Microsoft\n'}, version=2)

# (2) microsoft/WSL#11870 (closed, 2024-08-02). Query: "WSL nvidia-smi".
# Thread: Windows 10.0.22631.3880, WSL 2.2.4.0, kernel 5.15.153.1-2, Arch Linux; Game Ready driver
# 560.70 on Windows (the WSL nvidia-smi reports 560.27); nvidia-smi inside every distribution dies
# with "segmentation fault" after printing its header, while nvidia-smi on Windows works. Reporter's
# conclusion: the newer Windows drivers break nvidia-smi in WSL; driver 537.xx works.
# Chosen: GPU (RTX 3060 Laptop GPU, 6 GiB), user name, CUDA 12.6 for a 560 driver. A crash of the
# NVML query cannot be written into a capture, so NVML is recorded as having opened and answered
# the inventory (nvidia-smi printed its header, so initialisation did succeed).
m = wsl_meta({"name": "sudhanshu", "uid": 1000, "groups": [[1000, "sudhanshu"], [998, "wheel"]]}, {"WSL_DISTRO_NAME": "Arch"},
             wsl_nvml_ok("560.70", "12.6", "12.560.27", "NVIDIA GeForce RTX 3060 Laptop GPU", 6 * GiB, "8.6", 115.0),
             wsl_libs(), {"library": "libcuda.so.1", "load_error": None, "init_code": 0, "driver_version": "12.6", "devices": 1})
make('wild/wsl-nvidia-smi-segfault-driver-560', 'https://github.com/microsoft/WSL/issues/11870', m,
     {'etc/os-release': OS['arch'], 'proc/sys/kernel/osrelease': '5.15.153.1-microsoft-standard-WSL2\n', 'proc/modules': ''}, version=2)

# (3) yuk7/ArchWSL#248 (closed, 2021-10-02). Query: "libcuda.so is not a symbolic link".
# Thread: Windows 10.0.22000.194, WSL 2, ArchWSL 21.8.28.0; `pacman -Syu` prints
# "ldconfig: /usr/lib/wsl/lib/libcuda.so.1 is not a symbolic link". Conclusion (a commenter,
# confirmed "Solved" by the reporter): the NVIDIA driver ships libcuda.so and libcuda.so.1 in
# C:\Windows\System32\lxss\lib as plain copies of libcuda.so.1.1, not links; replacing them with
# links (mklink) silences the warning. Nothing else was wrong.
# Chosen: GPU (RTX 3060, 12 GiB), Windows driver 472.12 (CUDA 11.4), WSL kernel 5.10.43.3, user.
# The copies show as library entries whose real path is their own path.
m = wsl_meta({"name": "izeroo", "uid": 1000, "groups": [[1000, "izeroo"], [998, "wheel"]]}, {"WSL_DISTRO_NAME": "Arch"},
             wsl_nvml_ok("472.12", "11.4", "11.472.12", "NVIDIA GeForce RTX 3060", 12 * GiB, "8.6", 170.0),
             wsl_libs() + [{"name": "libcuda.so", "path": f"{WSL_LIB}/libcuda.so", "real_path": f"{WSL_LIB}/libcuda.so", "via": "ld.so.cache"}],
             {"library": "libcuda.so.1", "load_error": None, "init_code": 0, "driver_version": "11.4", "devices": 1})
make('wild/wsl-libcuda-copies-not-symlinks-archwsl', 'https://github.com/yuk7/ArchWSL/issues/248', m,
     {'etc/os-release': OS['arch'], 'proc/sys/kernel/osrelease': '5.10.43.3-microsoft-standard-WSL2\n', 'proc/modules': ''}, version=2)

# (4) microsoft/WSL#6809 (closed, 2021-04-15). Query: "/dev/dxg missing WSL GPU" (used in place of
# the bare "dxg", which returned nothing on WSL or GPUs; see the .md).
# Thread: after updating to Windows 10 Insider preview build 21354 the /dev/dxg device is not
# available in WSL 2 distributions; reinstalling WSL 2 did not help; the reporter updated to
# preview build 21359 and it was fixed. Conclusion: a fault of Windows build 21354.
# Chosen: Ubuntu 20.04, kernel 5.4.91, GPU and driver (RTX 2070, 465.89, the WSL preview driver of
# the time); the driver's files are taken to be still mounted in /usr/lib/wsl/lib; without the
# device NVML is recorded as "Driver Not Loaded" and cuInit as 100 (not stated in the thread).
m = wsl_meta({"name": "claire", "uid": 1000, "groups": [[1000, "claire"], [27, "sudo"]]}, {"WSL_DISTRO_NAME": "Ubuntu-20.04"},
             nvml_unavailable_linux("driver_not_loaded", *DRIVER_NOT_LOADED_LINUX,
                                    [{"path": "libnvidia-ml.so.1", "error": "Driver Not Loaded"},
                                     {"path": "libnvidia-ml.so", "error": "libnvidia-ml.so: cannot open shared object file: No such file or directory"},
                                     {"path": f"{WSL_LIB}/libnvidia-ml.so.1", "error": "Driver Not Loaded"}]),
             wsl_libs(), {"library": "libcuda.so.1", "load_error": None, "init_code": 100, "driver_version": None, "devices": None},
             nodes=[])
make('wild/wsl-no-dxg-insider-build-21354', 'https://github.com/microsoft/WSL/issues/6809', m,
     {'etc/os-release': OS['ubuntu2004'], 'proc/sys/kernel/osrelease': '5.4.91-microsoft-standard-WSL2\n', 'proc/modules': ''}, version=2)

# (5) NVIDIA/cuml#5624 (closed, 2023-10-18). Query: "CUDA_ERROR_NO_DEVICE WSL".
# Thread: Windows 11, WSL 2, CUDA 12.2; importing cuML fails in numba with "Call to cuInit results
# in CUDA_ERROR_NO_DEVICE (100)" although nvidia-smi works. The reporter's fix: export
# LD_LIBRARY_PATH=/usr/lib/wsl/lib/ and NUMBA_CUDA_DRIVER=/usr/lib/wsl/lib/libcuda.so.1, i.e. make
# numba load the Windows driver's libcuda from /usr/lib/wsl/lib. The thread does not say which
# libcuda numba had picked instead, so no other libcuda is invented here: the system's loader path
# is as on a healthy WSL 2 (libcuda from /usr/lib/wsl/lib), and gpu-doctor's own probe is recorded
# as succeeding through it.
# Chosen: GPU (RTX 3070, 8 GiB), driver 537.58 (CUDA 12.2), Ubuntu 22.04, kernel 5.15.123.1, the
# conda environment's name and path, user.
m = wsl_meta({"name": "eric", "uid": 1000, "groups": [[1000, "eric"], [27, "sudo"]]},
             {"WSL_DISTRO_NAME": "Ubuntu-22.04", "CONDA_PREFIX": "/home/eric/miniconda3/envs/rapids-23.10"},
             wsl_nvml_ok("537.58", "12.2", "12.537.58", "NVIDIA GeForce RTX 3070", 8 * GiB, "8.6", 220.0),
             wsl_libs(), {"library": "libcuda.so.1", "load_error": None, "init_code": 0, "driver_version": "12.2", "devices": 1})
make('wild/wsl-numba-cuinit-no-device-cuml', 'https://github.com/NVIDIA/cuml/issues/5624', m,
     {'etc/os-release': OS['ubuntu2204'], 'proc/sys/kernel/osrelease': '5.15.123.1-microsoft-standard-WSL2\n', 'proc/modules': '',
      'home/eric/.conda/environments.txt': '/home/eric/miniconda3\n/home/eric/miniconda3/envs/rapids-23.10\n'}, version=2)


# --- Windows side ---------------------------------------------------------------------------------
SYS32 = "C:\\Windows\\System32"
NVSMI = "C:\\Program Files\\NVIDIA Corporation\\NVSMI"


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


def nvml_ok(driver, cuda, gpus, library=f"{SYS32}\\nvml.dll", model="WDDM"):
    infos, samples, fs = [], [], []
    for i, (name, vram, cc, power) in enumerate(gpus):
        infos.append(gpu_info(i, name, f"GPU-5a1c0d2e-7b3f-4e61-9c8d-00000000000{i}", f":0{i + 1}:00.0", vram, cc, 3, power, 1900, 5000, 90))
        samples.append(sample(i, vram, power))
        fa = facts(i); fa["driver_model"] = [model, model]; fa["mig_devices"] = {"na": "MIG is off"}
        fs.append(fa)
    return {"status": {"kind": "nvml", "library": library, "attempts": []},
            "inventory": {"driver_version": driver, "cuda_driver_version": cuda, "nvml_version": f"{cuda.split('.')[0]}.{driver}", "gpus": infos},
            "samples": samples, "facts": fs}


def nvml_not_running():
    return {"status": {"kind": "unavailable",
                       "summary": "The NVIDIA library is installed but the NVIDIA driver is not running: Windows has stopped or disabled the GPU, or it has no NVIDIA driver.",
                       "next_step": "Open Device Manager (devmgmt.msc) → Display adapters: the NVIDIA GPU's status names the problem (Code 43, 22, 28 …). `gpu-doctor-cli check` says which and how to fix it.",
                       "attempts": [{"path": f"{SYS32}\\nvml.dll", "error": "nvmlInit: Driver Not Loaded"}], "failure": "driver_not_loaded"},
            "inventory": {"driver_version": None, "cuda_driver_version": None, "nvml_version": None, "gpus": []}, "samples": [], "facts": []}


def wmeta(nvml, windows, cuda, env=None):
    return {"platform": "windows", "env": env or {}, "user": {"name": "user", "uid": 4294967295, "groups": []}, "device_nodes": [],
            "links": {}, "listings": {}, "nvml": nvml, "libraries": [],
            "kernel_log": {"unreadable": "no Linux kernel log on this platform"},
            "renderer": None, "tdr": {"level": None, "delay": None, "ddi_delay": None}, "cuda": cuda, "windows": windows}


def cuda_ok(ver, n=1):
    return {"library": "nvcuda.dll", "load_error": None, "init_code": 0, "driver_version": ver, "devices": n}


CUDA_NO_DEVICE = {"library": "nvcuda.dll", "load_error": None, "init_code": 100, "driver_version": None, "devices": None}


def dch_files(version, store="nv_dispi.inf_amd64_8f2a7c1d9e0b4a63"):
    s = f"{SYS32}\\DriverStore\\FileRepository\\{store}"
    return [{"path": f"{SYS32}\\nvml.dll", "version": version}, {"path": f"{SYS32}\\nvidia-smi.exe", "version": version},
            {"path": f"{s}\\nvml.dll", "version": version}, {"path": f"{s}\\nvidia-smi.exe", "version": version}]


# (6) QaidVoid/Complete-Single-GPU-Passthrough#12 (closed, 2022-05-15). Query: "Code 43 NVIDIA GPU
# Device Manager Windows has stopped this device" (used in place of the bare "Code 43", which
# returned only unrelated pages; see the .md).
# Thread: a Windows guest in a libvirt/KVM single-GPU passthrough (NIC model e1000e; host passes
# PCI 0000:07:00.0 and 07:00.1) shows Code 43 for the NVIDIA card. The reporter's fix: host kernel
# parameters video=vesafb:off,efifb:off — the host's EFI framebuffer had kept the card — after which
# the passthrough works and Code 43 is gone.
# Chosen (the capture is of the Windows guest): GPU (GeForce GTX 1070), driver 512.15
# (30.0.15.1215), Windows 10 21H2 build 19044; the guest sees only the passed-through card.
make('wild/win-vfio-guest-code43-host-efifb',
     'https://github.com/QaidVoid/Complete-Single-GPU-Passthrough/issues/12',
     wmeta(nvml_not_running(),
           win(19044, "Windows 10 Pro", "21H2", [adapter("NVIDIA GeForce GTX 1070", "1B81", "NVIDIA", "30.0.15.1215", "2022-03-30", 43, inst="3&267A616A&0&28")],
               dch_files("30.0.15.1215"), dch=True),
           CUDA_NO_DEVICE), {}, version=2)

# (7) dartraiden/NVIDIA-patcher#531 (closed, 2026-05-22). Query: as (6).
# Thread: Windows 11; a GTX 1080 Ti in the first slot works; a P102-100 in the second slot shows
# "Windows has stopped this device because it has reported problems. (Code 43)"; two P102-100
# cards both did; they did not work under Ubuntu either. Reporter's conclusion: the card is
# probably bricked (a hardware fault).
# Chosen: Windows 11 25H2 build 26200, patched driver 581.57 (32.0.15.8157) on both cards, that
# both P102-100 are present (one in the second slot at a time in the thread: one is recorded), and
# the GTX 1080 Ti answering NVML and CUDA.
make('wild/win-p102-code43-card-bricked',
     'https://github.com/dartraiden/NVIDIA-patcher/issues/531',
     wmeta(nvml_ok("581.57", "13.0", [("NVIDIA GeForce GTX 1080 Ti", 11 * GiB, "6.1", 250.0)]),
           win(26200, "Windows 10 Pro", "25H2",
               [adapter("NVIDIA GeForce GTX 1080 Ti", "1B06", "NVIDIA", "32.0.15.8157", "2025-10-01", 0, inst="4&1A2B3C4D&0&0008"),
                adapter("NVIDIA P102-100", "1B07", "NVIDIA", "32.0.15.8157", "2025-10-01", 43, inst="4&5E6F7A8B&0&0010")],
               dch_files("32.0.15.8157"), dch=True),
           cuda_ok("13.0")), {}, version=2)

# (8) trexminer/T-Rex#1244 (open, reporter states it solved, 2022-04-19). Query: "nvml.dll".
# Thread: Windows, Game Ready driver 472.12 (downgraded to it for the LHR unlocker); T-Rex 0.25.12
# logs "Can't load NVML library, dlopen(126): failed to load nvml.dll, dlopen(126): failed to
# load %PROGRAMFILES%\NVIDIA Corporation\NVSMI\nvml.dll", "NVML error, code 12", "NVIDIA Driver
# version N/A", although NVSMI\nvml.dll exists; mining itself worked. Reporter's conclusion: the
# non-DCH (Standard) driver package was installed; installing the DCH package of the driver
# stopped the error.
# Chosen: GPU (RTX 3060 Ti, an LHR card), Windows 10 21H2 build 19044, driver date; the Standard
# package's files are in NVSMI only; NVML's two attempts fail as T-Rex's did (error 126).
make('wild/win-standard-driver-nvml-load-fails-trex',
     'https://github.com/trexminer/T-Rex/issues/1244',
     wmeta({"status": {"kind": "unavailable",
                       "summary": "The NVIDIA driver's management library (NVML) was not found, so no NVIDIA driver seems to be installed.",
                       "next_step": "Install the NVIDIA driver for your GPU.",
                       "attempts": [{"path": f"{SYS32}\\nvml.dll", "error": "LoadLibraryExW failed: The specified module could not be found. (os error 126)"},
                                    {"path": f"{NVSMI}\\nvml.dll", "error": "LoadLibraryExW failed: The specified module could not be found. (os error 126)"}],
                       "failure": "not_found"},
            "inventory": {"driver_version": None, "cuda_driver_version": None, "nvml_version": None, "gpus": []}, "samples": [], "facts": []},
           win(19044, "Windows 10 Pro", "21H2", [adapter("NVIDIA GeForce RTX 3060 Ti", "2489", "NVIDIA", "30.0.14.7212", "2021-09-14")],
               [{"path": f"{NVSMI}\\nvml.dll", "version": "30.0.14.7212"}, {"path": f"{NVSMI}\\nvidia-smi.exe", "version": "30.0.14.7212"}], dch=False),
           cuda_ok("11.4")), {}, version=2)

# (9) gpuopenanalytics/pynvml#31 (closed, 2021-04-25). Query: "nvml.dll".
# Thread: Windows 10, driver 461.55, Quadro RTX 4000; nvml.dll and nvidia-smi.exe are in
# C:\WINDOWS\system32 (Get-Command), not in NVSMI where pynvml looked, so pynvml could not load
# NVML. Reporter's conclusion: the driver now puts NVML in System32 (the layout of DCH drivers);
# the library has to look there (or be given the path).
# Chosen: Windows 10 20H2 build 19042, driver date, a Python 3.9 installation without PyTorch.
make('wild/win-dch-nvml-in-system32-pynvml',
     'https://github.com/gpuopenanalytics/pynvml/issues/31',
     wmeta(nvml_ok("461.55", "11.2", [("Quadro RTX 4000", 8 * GiB, "7.5", 125.0)]),
           win(19042, "Windows 10 Pro", "20H2", [adapter("Quadro RTX 4000", "1EB1", "NVIDIA", "27.21.14.6155", "2021-02-16")],
               dch_files("27.21.14.6155"), pythons=[{"prefix": "C:\\Users\\user\\AppData\\Local\\Programs\\Python\\Python39", "torch": None}], dch=True),
           cuda_ok("11.2")), {}, version=2)

# (10) MicrosoftDocs/azure-docs#110142 (closed, 2023-05-29). Query: "nvidia-smi not found Windows".
# Thread: an Azure N-series VM, Windows 10 22H2, NVIDIA GRID driver 15.2 installed as Microsoft's
# page describes; nvidia-smi.exe is not in C:\Program Files\NVIDIA Corporation\NVSMI as the page
# says, it is in C:\Windows\System32. Resolved by the reporter (Microsoft: "self-resolved"): the
# driver installs nvidia-smi in System32; the page's path is outdated.
# Chosen: the GPU (Tesla M60 of an NV-series v3 VM), 528.89 as the Windows driver of GRID 15.2
# (31.0.15.2889), build 19045, WDDM.
make('wild/win-azure-grid-nvidia-smi-in-system32',
     'https://github.com/MicrosoftDocs/azure-docs/issues/110142',
     wmeta(nvml_ok("528.89", "12.0", [("Tesla M60", 8 * GiB, "5.2", 150.0)]),
           win(19045, "Windows 10 Enterprise", "22H2", [adapter("NVIDIA Tesla M60", "13F2", "NVIDIA", "31.0.15.2889", "2023-03-23", inst="5&3A1B2C3D&0&0")],
               dch_files("31.0.15.2889", "nvgridsw_azure.inf_amd64_1c2d3e4f5a6b7c8d"), dch=True),
           cuda_ok("12.0")), {}, version=2)

print("written")
