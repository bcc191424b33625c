"""Writes the Windows checklist fixtures (tests/fixtures/win-*): captures of Windows machines as
public bug threads describe them. Each capture's `source` names the thread; what the thread does
not state is filled with the plainest value and said so in `source`."""
import copy
from fixture_lib import make, gpu_info, sample, facts

DISPLAY = "{4d36e968-e325-11ce-bfc1-08002be10318}"
GiB = 1 << 30

def adapter(name, dev, provider=None, version=None, date=None, problem=0, ven="10DE", power=None):
    a = {"name": name, "instance_id": f"PCI\\VEN_{ven}&DEV_{dev}&SUBSYS_00000000&REV_A1\\4&2B1C3D4E&0&0008", "problem": problem}
    if power: a["power_state"] = power
    if provider: a["provider"] = provider
    if version: a["driver_version"] = version
    if date: a["driver_date"] = date
    return a

def intel(version="31.0.101.4338"):
    return adapter("Intel(R) UHD Graphics", "46A6", "Intel Corporation", version, "2023-04-12", 0, ven="8086")

def win(build, product="Windows 10 Pro", display=None, adapters=(), files=(), prefs=None, pythons=(), tdr=None, dumps=(), wsl=None, hags=None, dch=None):
    f = {"product": product, "build": build, "adapters": list(adapters), "nvidia_files": list(files),
         "gpu_preferences": prefs or {}, "pythons": list(pythons), "watchdog_dumps": list(dumps)}
    if display: f["display_version"] = display
    if tdr is not None: f["tdr_events"] = tdr
    if wsl is not None: f["wsl_distros"] = wsl
    if hags is not None: f["hags"] = hags
    if dch is not None: f["dch"] = dch
    return f

def nvml_ok(driver, cuda, gpus, model="WDDM"):
    infos, samples, fs = [], [], []
    for i, (name, vram, cc, power) in enumerate(gpus):
        infos.append(gpu_info(i, name, f"GPU-00000000-0000-0000-0000-00000000000{i}", f":0{i+1}:00.0", vram, cc, 4, power, 2500, 9000, 90))
        samples.append(sample(i, vram, power))
        fa = facts(i); fa["driver_model"] = [model, model]
        fs.append(fa)
    return {"status": {"kind": "nvml", "library": "C:\\Windows\\System32\\nvml.dll", "attempts": []},
            "inventory": {"driver_version": driver, "cuda_driver_version": cuda, "nvml_version": f"12.{driver}", "gpus": infos},
            "samples": samples, "facts": fs}

def nvml_missing():
    return {"status": {"kind": "unavailable",
                       "summary": "The NVIDIA driver's management library (NVML) was not found, so no NVIDIA driver seems to be installed.",
                       "next_step": "Install the NVIDIA driver for your GPU.",
                       "attempts": [{"path": "C:\\Windows\\System32\\nvml.dll", "error": "LoadLibraryExW failed: The specified module could not be found. (os error 126)"},
                                    {"path": "C:\\Program Files\\NVIDIA Corporation\\NVSMI\\nvml.dll", "error": "LoadLibraryExW failed: The specified module could not be found. (os error 126)"}]},
            "inventory": {"driver_version": None, "cuda_driver_version": None, "nvml_version": None, "gpus": []},
            "samples": [], "facts": []}

def nvml_not_running():
    """nvml.dll is there (a driver is installed) but Windows stopped the GPU: NVML cannot start."""
    m = nvml_missing()
    m["status"] = {"kind": "unavailable",
                   "summary": "The NVIDIA library is installed but the NVIDIA driver is not running: Windows has stopped or disabled the GPU, or it has no NVIDIA driver.",
                   "next_step": "Open Device Manager (devmgmt.msc) → Display adapters: the NVIDIA GPU's status names the problem (Code 43, 22, 28 …). `gpu-doctor-cli check` says which and how to fix it.",
                   "attempts": [{"path": "C:\\Windows\\System32\\nvml.dll", "error": "nvmlInit: Driver Not Loaded"}]}
    return m

CUDA_NO_DEVICE = {"library": "nvcuda.dll", "load_error": None, "init_code": 100, "driver_version": None, "devices": None}

def meta(nvml, windows, cuda, env=None):
    return {"platform": "windows", "env": env or {}, "user": {"name": "user", "uid": 4294967295, "groups": []}, "device_nodes": [],
            "links": {}, "listings": {}, "nvml": nvml, "libraries": [],
            "kernel_log": {"unreadable": "no Linux kernel log on this platform"},
            "renderer": None, "tdr": {"level": None, "delay": None, "ddi_delay": None}, "cuda": cuda, "windows": windows}

CUDA_OK = {"library": "nvcuda.dll", "load_error": None, "init_code": 0, "driver_version": "12.4", "devices": 1}
CUDA_NONE = {"library": None, "load_error": "nvcuda.dll: The specified module could not be found. (os error 126)", "init_code": None, "driver_version": None, "devices": None}
SYS32 = "C:\\Windows\\System32"
def dch_files(version):
    store = f"{SYS32}\\DriverStore\\FileRepository\\nv_dispi.inf_amd64_8f2a7c1d9e0b4a63"
    return [{"path": f"{SYS32}\\nvml.dll", "version": version}, {"path": f"{SYS32}\\nvidia-smi.exe", "version": version},
            {"path": f"{store}\\nvml.dll", "version": version}, {"path": f"{store}\\nvidia-smi.exe", "version": version}]

def broken(name, source, adapters, build=22631, display="23H2", product="Windows 10 Home"):
    # With a driver installed (Code 43, 31, 10) nvml.dll loads and cannot start; without one
    # (Code 28, the basic display adapter) it is not there at all.
    installed = any(a.get("provider") == "NVIDIA" for a in adapters)
    nvml, cuda = (nvml_not_running(), CUDA_NO_DEVICE) if installed else (nvml_missing(), CUDA_NONE)
    make(name, source, meta(nvml, win(build, product, display, adapters), cuda), {}, version=2)

# 1-6: Device Manager states
broken("win-code43-laptop-dgpu-after-eco-mode",
       "https://github.com/seerge/g-helper/issues/4581 (ROG Zephyrus G16 GU605CP, Windows 11 24H2: after switching from Eco to Standard the dGPU shows 'Windows has stopped this device because it has reported problems. (Code 43)'); GPU model and driver version not stated: RTX 4070 Laptop GPU and 31.0.15.6081 used",
       [intel(), adapter("NVIDIA GeForce RTX 4070 Laptop GPU", "2860", "NVIDIA", "31.0.15.6081", "2024-08-20", 43)], 26100, "24H2")
broken("win-code43-rtx3060-mini-pc",
       "https://github.com/arutar/FrankenDriver/issues/77 (RTX 3060 in an Acemagic Tank 03 mini PC, Windows, 'suddenly code 43'd'; DDU and reinstall did not help; maintainer: a hardware error); driver version not stated: 31.0.15.5222 used",
       [intel(), adapter("NVIDIA GeForce RTX 3060", "2504", "NVIDIA", "31.0.15.5222", "2024-04-11", 43)], 22631, "23H2")
broken("win-basic-display-adapter-after-silent-install",
       "https://github.com/jantari/LSUClient/issues/135 (Lenovo P16, NVIDIA package 32.0.15.8183 installed silently; the GPU stayed on the Microsoft Basic Display Adapter because PnP never re-enumerated it)",
       [intel(), adapter("Microsoft Basic Display Adapter", "2730", "Microsoft", "10.0.22621.3527", "2006-06-21", 0)], 22631, "23H2", "Windows 10 Pro")
broken("win-code28-p106-no-driver",
       "https://github.com/dartraiden/NVIDIA-patcher/issues/363 (P106-100, Device Manager: the drivers for this device are not installed (Code 28); the driver's signature was refused); Windows build not stated: 19045 used",
       [adapter("NVIDIA P106-100", "1C07", None, None, None, 28), adapter("Intel(R) HD Graphics 630", "5912", "Intel Corporation", "31.0.101.2111", "2022-07-28", 0, ven="8086")], 19045, "22H2")
broken("win-code31-dgpu-after-eco-reboot",
       "https://github.com/seerge/g-helper/issues/5943 (laptop, after rebooting in Eco mode the dGPU shows 'Error 31: driver failed to load'); GPU and driver not stated: RTX 4060 Laptop GPU and 31.0.15.6614 used",
       [intel(), adapter("NVIDIA GeForce RTX 4060 Laptop GPU", "28A0", "NVIDIA", "31.0.15.6614", "2024-10-30", 31)], 26100, "24H2")
broken("win-code10-p106-vt-d",
       "https://github.com/dartraiden/NVIDIA-patcher/issues/145 (P106-100: 'GPU hardware detected but unable to start (error code 10)'; fixed by turning off Intel VT-d in the firmware); driver and build not stated: 31.0.15.3623 and 19045 used",
       [adapter("NVIDIA P106-100", "1C07", "NVIDIA", "31.0.15.3623", "2023-06-13", 10), intel("31.0.101.2111")], 19045, "22H2")

# 7: a stale nvml.dll left in NVSMI after a driver update
make("win-stale-nvsmi-nvml-after-update",
     "https://github.com/RainbowMiner/RainbowMiner/issues/1287 (Windows 10 Pro 20H2, build 19042.685: 'C:\\Program Files\\NVIDIA Corporation\\NVSMI\\nvml.dll has wrong version 441.41 vs. 460.89' after updating the driver to 460.89); GPU not stated: GeForce RTX 3070 used",
     meta(nvml_ok("460.89", "11.2", [("NVIDIA GeForce RTX 3070", 8 * GiB, "8.6", 220.0)]),
          win(19042, "Windows 10 Pro", "20H2", [adapter("NVIDIA GeForce RTX 3070", "2484", "NVIDIA", "27.21.14.6089", "2020-12-15")],
              dch_files("27.21.14.6089") + [{"path": "C:\\Program Files\\NVIDIA Corporation\\NVSMI\\nvml.dll", "version": "26.21.14.4141"}]),
          dict(CUDA_OK, driver_version="11.2")), {}, version=2)

# 8-9: CPU-only PyTorch
make("win-torch-cpu-wheel-conda-laptop",
     "https://github.com/pytorch/pytorch/issues/122924 (RTX 4080 Laptop GPU, Windows 11 Education 10.0.22631, driver 551.86, Anaconda Python 3.10.13 with torch 2.2.2 from PyPI: 'Is CUDA available: False', 'CUDA used to build PyTorch: Could not collect'); the environment's folder is not stated: C:\\Users\\user\\anaconda3 used",
     meta(nvml_ok("551.86", "12.4", [("NVIDIA GeForce RTX 4080 Laptop GPU", 12 * GiB, "8.9", 150.0)]),
          win(22631, "Windows 10 Education", "23H2", [intel(), adapter("NVIDIA GeForce RTX 4080 Laptop GPU", "27E0", "NVIDIA", "31.0.15.5186", "2024-03-14")],
              dch_files("31.0.15.5186"), pythons=[{"prefix": "C:\\Users\\user\\anaconda3", "torch": "2.2.2+cpu"}]),
          CUDA_OK), {}, version=2)
make("win-comfyui-portable-torch-not-compiled-with-cuda",
     "https://github.com/Comfy-Org/ComfyUI/issues/2427 (ComfyUI_windows_portable: after updating custom nodes python_embeded's torch raised 'AssertionError: Torch not compiled with CUDA enabled'; fixed with python_embeded\\python.exe -m pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu118 (later cu121)); GPU, driver and torch version not stated: RTX 3060, 546.33 and 2.1.2+cpu used",
     meta(nvml_ok("546.33", "12.3", [("NVIDIA GeForce RTX 3060", 12 * GiB, "8.6", 170.0)]),
          win(22631, "Windows 10 Pro", "23H2", [adapter("NVIDIA GeForce RTX 3060", "2504", "NVIDIA", "31.0.15.4633", "2023-12-12")], dch_files("31.0.15.4633"),
              pythons=[{"prefix": "C:\\Users\\user\\Downloads\\ComfyUI_windows_portable\\python_embeded", "torch": "2.1.2+cpu"}]),
          dict(CUDA_OK, driver_version="12.3")), {}, version=2)

# 10: TDR: long CUDA kernels on a GPU in WDDM mode
make("win-tdr-launch-timeout-tesla-m40-wddm",
     "https://github.com/lllyasviel/stable-diffusion-webui-forge/issues/763 ('RuntimeError: CUDA error: the launch timed out and was terminated' on a Tesla M40 24GB in WDDM mode, NVIDIA-SMI 537.13, CUDA 12.2). The Display 4101 event lines are what Windows logs for each such reset (message text from Microsoft's DISPMSG_NOTIFY_USER_TDR_RECOVERY_TEXT); their times are not in the thread",
     meta(nvml_ok("537.13", "12.2", [("Tesla M40 24GB", 24 * GiB, "5.2", 250.0)]),
          win(19045, "Windows 10 Pro", "22H2", [adapter("NVIDIA Tesla M40 24GB", "17FD", "NVIDIA", "31.0.15.3713", "2023-08-21"), adapter("Intel(R) UHD Graphics 770", "4680", "Intel Corporation", "31.0.101.4502", "2023-06-20", 0, ven="8086")],
              dch_files("31.0.15.3713"),
              tdr=[f"2024-06-1{d} 2{d}:14:03 Display driver nvlddmkm stopped responding and has successfully recovered." for d in (2, 3, 4, 5)]),
          dict(CUDA_OK, driver_version="12.2")), {}, version=2)

# 11: hybrid laptop: DirectML on the integrated GPU
make("win-hybrid-directml-on-intel-igpu",
     "https://github.com/microsoft/Olive/issues/307 (RTX 3070 Ti Laptop GPU, Windows 11 22H2 build 22621.1778, NVIDIA 532.03, Intel 31.0.101.4338, Python 3.10.11: DirectML Stable Diffusion ran on the Intel GPU; hybrid laptops default to the power-saving GPU; fixed under Settings > Display > Graphics > python.exe > High performance)",
     meta(nvml_ok("532.03", "12.1", [("NVIDIA GeForce RTX 3070 Ti Laptop GPU", 8 * GiB, "8.6", 125.0)]),
          win(22621, "Windows 10 Home", "22H2", [intel(), adapter("NVIDIA GeForce RTX 3070 Ti Laptop GPU", "24A0", "NVIDIA", "31.0.15.3203", "2023-05-23")],
              dch_files("31.0.15.3203"), prefs={}, pythons=[{"prefix": "C:\\Users\\user\\AppData\\Local\\Programs\\Python\\Python310", "torch": None}]),
          dict(CUDA_OK, driver_version="12.1")), {}, version=2)

# 12-13: healthy machines
make("win-healthy-rtx4060-wddm",
     "https://github.com/ollama/ollama/issues/4270 (Windows, nvidia-smi: 'NVIDIA-SMI 537.70 Driver Version: 537.70 CUDA Version: 12.2', 'NVIDIA GeForce RTX 4060 WDDM | 00000000:01:00.0 On'); Windows build not stated: 22631 used",
     meta(nvml_ok("537.70", "12.2", [("NVIDIA GeForce RTX 4060", 8 * GiB, "8.9", 115.0)]),
          win(22631, "Windows 10 Pro", "23H2", [adapter("NVIDIA GeForce RTX 4060", "2882", "NVIDIA", "31.0.15.3770", "2023-10-24")], dch_files("31.0.15.3770"),
              pythons=[{"prefix": "C:\\Users\\user\\AppData\\Local\\Programs\\Python\\Python311", "torch": "2.3.1+cu121", "torch_cuda": "12.1"}], tdr=[], hags=2),
          dict(CUDA_OK, driver_version="12.2")), {}, version=2)
make("win-healthy-tesla-p4-tcc-server",
     "https://github.com/jamesstringer90/Easy-GPU-PV/issues/358 (nvidia-smi: 'NVIDIA-SMI 538.15 Driver Version: 538.15 CUDA Version: 12.2', 'Tesla P4 TCC | 00000000:41:00.0 Off'); the host's Windows Server build is not stated: 20348 (Server 2022) used",
     meta(nvml_ok("538.15", "12.2", [("Tesla P4", 8 * GiB, "6.1", 75.0)], model="TCC"),
          win(20348, "Windows Server 2022 Datacenter", "21H2", [adapter("NVIDIA Tesla P4", "1BB3", "NVIDIA", "31.0.15.3815", "2023-11-02"), adapter("Microsoft Basic Display Adapter", "0534", "Microsoft", "10.0.20348.1", "2006-06-21", 0, ven="102B")],
              [{"path": "C:\\Program Files\\NVIDIA Corporation\\NVSMI\\nvml.dll", "version": "31.0.15.3815"}, {"path": f"{SYS32}\\nvml.dll", "version": "31.0.15.3815"}], tdr=[]),
          dict(CUDA_OK, driver_version="12.2")), {}, version=2)

# 14: WSL on a Windows too old for the GPU in WSL
make("win-wsl-build-before-21h2",
     "https://github.com/NVIDIA/nvidia-docker/issues/1542 ('dxcore initialization failed' in WSL 2: NVIDIA's reply, the Windows version does not support the GPU in WSL, which needs Windows 10 21H2 (build 19044) or Windows 11); the build is not stated: 19043 (21H1) and an RTX 3080 at 471.41 used",
     meta(nvml_ok("471.41", "11.4", [("NVIDIA GeForce RTX 3080", 10 * GiB, "8.6", 320.0)]),
          win(19043, "Windows 10 Pro", "21H1", [adapter("NVIDIA GeForce RTX 3080", "2206", "NVIDIA", "30.0.14.7141", "2021-07-09")], dch_files("30.0.14.7141"), wsl=["Ubuntu-20.04"]),
          dict(CUDA_OK, driver_version="11.4")), {}, version=2)
# 15: a CUDA toolkit newer than the driver
make("win-cuda-toolkit-11.3-newer-than-driver",
     "https://github.com/NVIDIA/gvdb-voxels/issues/120 (Windows, 'nvcc -V': release 11.3, V11.3.109; cuModuleLoad of cuda_gvdb_module.ptx failed with 'the provided PTX was compiled with an unsupported toolchain'; maintainer: CUDA 11.3 requires driver 465.89 or newer); GPU, driver and Windows build not stated: RTX 2070, 461.92 (CUDA 11.2) and 19042 used; CUDA_PATH is the toolkit installer's default folder for 11.3",
     meta(nvml_ok("461.92", "11.2", [("NVIDIA GeForce RTX 2070", 8 * GiB, "7.5", 175.0)]),
          win(19042, "Windows 10 Pro", "20H2", [adapter("NVIDIA GeForce RTX 2070", "1F07", "NVIDIA", "27.21.14.6192", "2021-03-13")], dch_files("27.21.14.6192")),
          dict(CUDA_OK, driver_version="11.2"),
          env={"CUDA_PATH": "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.3"}), {}, version=2)

# 16: a DCH driver (from Windows Update), on which a Standard installer is refused
make("win-dch-driver-standard-installer-refused",
     "https://github.com/AeliusSaionji/chocopkgs/issues/25 (clean install of Windows 10 1903 with an RTX 2080 Ti: the Standard driver package failed, by hand the installer said it was the wrong version of Windows; the DCH package installed; see also https://github.com/lord-carlos/nvidia-update/issues/24: a fresh Windows installs a DCH driver, after which Standard packages do not install); the driver version is not stated: 431.60 used",
     meta(nvml_ok("431.60", "10.1", [("NVIDIA GeForce RTX 2080 Ti", 11 * GiB, "7.5", 250.0)]),
          win(18362, "Windows 10 Pro", None, [adapter("NVIDIA GeForce RTX 2080 Ti", "1E07", "NVIDIA", "26.21.14.3160", "2019-07-18")], dch_files("26.21.14.3160"), dch=True),
          dict(CUDA_OK, driver_version="10.1")), {}, version=2)

# 17: a hybrid laptop whose NVIDIA GPU sleeps (D3): NVML left closed so it stays asleep
nv_asleep = adapter("NVIDIA GeForce RTX 5080 Laptop GPU", "2C59", "NVIDIA", "32.0.15.7688", "2025-07-10", 0, power="D3")
make("win-optimus-dgpu-asleep-d3",
     "https://github.com/theantipopau/omencore/pull/166 (OMEN MAX 16, RTX 5080 Laptop GPU, Optimus/RTD3: the dGPU parks in D3 while nothing renders, read from DEVPKEY_Device_PowerData; NVML and NVAPI polling woke it and kept it awake); Windows build and driver not stated: 26100 (24H2) and 576.88 used",
     meta({"status": {"kind": "asleep", "functions": [nv_asleep["instance_id"]]},
           "inventory": {"driver_version": None, "cuda_driver_version": None, "nvml_version": None, "gpus": []}, "samples": [], "facts": []},
          win(26100, "Windows 10 Home", "24H2", [dict(intel(), power_state="D0"), nv_asleep], dch_files("32.0.15.7688"), dch=True),
          None), {}, version=2)

# 18: older driver packages kept in the driver store after upgrades
store_old = f"{SYS32}\\DriverStore\\FileRepository\\nv_dispi.inf_amd64_3c1f0e8a7b2d9c41"
make("win-old-driver-packages-in-driver-store",
     "https://github.com/lostindark/DriverStoreExplorer/issues/195 (installing NVIDIA 516.59 with a clean install left the 472.98 package in the driver store as well; removed by hand) and https://github.com/sebhildebrandt/systeminformation/pull/458 (after earlier driver installs the driver store holds several nv folders, not all of the installed driver); GPU and Windows build not stated: RTX 3060 and 19044 used",
     meta(nvml_ok("516.59", "11.7", [("NVIDIA GeForce RTX 3060", 12 * GiB, "8.6", 170.0)]),
          win(19044, "Windows 10 Pro", "21H2", [adapter("NVIDIA GeForce RTX 3060", "2504", "NVIDIA", "31.0.15.1659", "2022-06-28")],
              dch_files("31.0.15.1659") + [{"path": f"{store_old}\\nvml.dll", "version": "30.0.14.7298"}, {"path": f"{store_old}\\nvidia-smi.exe", "version": "30.0.14.7298"}], dch=True),
          dict(CUDA_OK, driver_version="11.7")), {}, version=2)
print("written")
