//! Reads [`WindowsFacts`] on a live Windows machine: the registry, the Configuration Manager (a
//! device's problem code), file version resources and folder listings. No subprocess, nothing
//! written, every search bounded.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use windows_sys::Win32::Devices::DeviceAndDriverInstallation::{
    CM_Get_DevNode_PropertyW, CM_Get_DevNode_Status, CM_LOCATE_DEVNODE_NORMAL, CM_Locate_DevNodeW, DN_HAS_PROBLEM,
};
use windows_sys::Win32::Devices::Properties::DEVPKEY_Device_PowerData;
use windows_sys::Win32::Storage::FileSystem::{
    GetFileVersionInfoSizeW, GetFileVersionInfoW, VS_FIXEDFILEINFO, VerQueryValueW,
};
use windows_sys::Win32::System::EventLog::{
    EVT_HANDLE, EvtClose, EvtNext, EvtQuery, EvtQueryChannelPath, EvtQueryReverseDirection, EvtRender,
    EvtRenderEventXml,
};
use windows_sys::Win32::System::Registry::{
    HKEY, HKEY_CURRENT_USER, HKEY_LOCAL_MACHINE, KEY_READ, RRF_RT_ANY, RRF_RT_REG_DWORD, RRF_RT_REG_SZ, RegCloseKey,
    RegEnumKeyExW, RegEnumValueW, RegGetValueW, RegOpenKeyExW,
};

use super::parse;
use super::winfacts::{DisplayAdapter, FoundFile, PythonEnv, WindowsFacts};

/// The Display device class.
const DISPLAY_CLASS: &str = "{4d36e968-e325-11ce-bfc1-08002be10318}";

/// At most this many subkeys or values are read from one key.
const MAX_ENTRIES: u32 = 4096;

fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(Some(0)).collect()
}

fn from_wide(buf: &[u16]) -> String {
    let end = buf.iter().position(|c| *c == 0).unwrap_or(buf.len());
    String::from_utf16_lossy(&buf[..end])
}

/// An open registry key, closed when dropped.
struct Key(HKEY);

impl Drop for Key {
    fn drop(&mut self) {
        // SAFETY: the handle came from RegOpenKeyExW and is closed once.
        unsafe {
            RegCloseKey(self.0);
        }
    }
}

impl Key {
    fn open(root: HKEY, path: &str) -> Option<Key> {
        let p = wide(path);
        let mut k: HKEY = std::ptr::null_mut();
        // SAFETY: `p` is NUL-terminated and outlives the call; `k` receives the handle.
        let rc = unsafe { RegOpenKeyExW(root, p.as_ptr(), 0, KEY_READ, &mut k) };
        (rc == 0).then_some(Key(k))
    }

    fn child(&self, path: &str) -> Option<Key> {
        Key::open(self.0, path)
    }

    /// The names of its subkeys.
    fn subkeys(&self) -> Vec<String> {
        let mut out = Vec::new();
        for i in 0..MAX_ENTRIES {
            let mut name = [0u16; 256];
            let mut len = name.len() as u32;
            // SAFETY: `name` holds `len` UTF-16 units; the other out-pointers are optional.
            let rc = unsafe {
                RegEnumKeyExW(
                    self.0,
                    i,
                    name.as_mut_ptr(),
                    &mut len,
                    std::ptr::null(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )
            };
            if rc != 0 {
                break;
            }
            out.push(from_wide(&name[..len as usize]));
        }
        out
    }

    /// Its string values: (name, text).
    fn string_values(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for i in 0..MAX_ENTRIES {
            let mut name = [0u16; 1024];
            let mut name_len = name.len() as u32;
            let mut data = [0u16; 512];
            let mut data_len = (data.len() * 2) as u32;
            let mut kind = 0u32;
            // SAFETY: each buffer's size is passed with it (data in bytes, name in UTF-16 units).
            let rc = unsafe {
                RegEnumValueW(
                    self.0,
                    i,
                    name.as_mut_ptr(),
                    &mut name_len,
                    std::ptr::null(),
                    &mut kind,
                    data.as_mut_ptr().cast(),
                    &mut data_len,
                )
            };
            // 234: ERROR_MORE_DATA (a value longer than the buffer): skipped.
            if rc == 234 {
                continue;
            }
            if rc != 0 {
                break;
            }
            // 1: REG_SZ, 2: REG_EXPAND_SZ.
            if kind == 1 || kind == 2 {
                out.push((from_wide(&name[..name_len as usize]), from_wide(&data[..(data_len as usize) / 2])));
            }
        }
        out
    }

    /// A string value ("" for the default value).
    fn string(&self, value: &str) -> Option<String> {
        let v = wide(value);
        let mut buf = vec![0u16; 1024];
        let mut size = (buf.len() * 2) as u32;
        // SAFETY: `buf` holds `size` bytes; RRF_RT_REG_SZ makes the API refuse other types.
        let rc = unsafe {
            RegGetValueW(
                self.0,
                std::ptr::null(),
                v.as_ptr(),
                RRF_RT_REG_SZ,
                std::ptr::null_mut(),
                buf.as_mut_ptr().cast(),
                &mut size,
            )
        };
        (rc == 0).then(|| from_wide(&buf)).filter(|s| !s.is_empty())
    }

    fn dword(&self, value: &str) -> Option<u32> {
        let v = wide(value);
        let mut data = 0u32;
        let mut size = 4u32;
        // SAFETY: `data` is 4 bytes and `size` says so; RRF_RT_REG_DWORD refuses other types.
        let rc = unsafe {
            RegGetValueW(
                self.0,
                std::ptr::null(),
                v.as_ptr(),
                RRF_RT_REG_DWORD,
                std::ptr::null_mut(),
                (&mut data as *mut u32).cast(),
                &mut size,
            )
        };
        (rc == 0).then_some(data)
    }

    /// Whether the key has a value of this name, of any type.
    fn has_value(&self, value: &str) -> bool {
        let v = wide(value);
        // SAFETY: no data buffer: only the value's existence is asked for.
        let rc = unsafe {
            RegGetValueW(
                self.0,
                std::ptr::null(),
                v.as_ptr(),
                RRF_RT_ANY,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        rc == 0
    }
}

/// The device's Configuration Manager problem code (0 = working) and its most recent power state
/// ("D0"-"D3"); `None` when it is not present.
fn device_state(instance_id: &str) -> Option<(u32, Option<String>)> {
    let id = wide(instance_id);
    let mut node = 0u32;
    // SAFETY: `id` is NUL-terminated; `node` receives the handle.
    if unsafe { CM_Locate_DevNodeW(&mut node, id.as_ptr(), CM_LOCATE_DEVNODE_NORMAL) } != 0 {
        return None;
    }
    let (mut status, mut problem) = (0u32, 0u32);
    // SAFETY: both out-pointers are valid u32s; `node` came from CM_Locate_DevNodeW.
    if unsafe { CM_Get_DevNode_Status(&mut status, &mut problem, node, 0) } != 0 {
        return None;
    }
    // CM_POWER_DATA: PD_Size (u32), then PD_MostRecentPowerState (DEVICE_POWER_STATE: 1 = D0 ...
    // 4 = D3). Read as bytes, so only the field used is interpreted.
    let mut buf = [0u8; 64];
    let (mut kind, mut size) = (0u32, buf.len() as u32);
    // SAFETY: the buffer's size is passed in `size`; `kind` receives the property type.
    let rc =
        unsafe { CM_Get_DevNode_PropertyW(node, &DEVPKEY_Device_PowerData, &mut kind, buf.as_mut_ptr(), &mut size, 0) };
    let power = (rc == 0 && size >= 8)
        .then(|| i32::from_le_bytes([buf[4], buf[5], buf[6], buf[7]]))
        .filter(|d| (1..=4).contains(d))
        .map(|d| format!("D{}", d - 1));
    Some((if status & DN_HAS_PROBLEM != 0 { problem } else { 0 }, power))
}

/// The NVIDIA GPUs' instance ids when every working one sleeps (see
/// [`super::winfacts::sleeping_nvidia`]); read before NVML is opened.
pub fn sleeping_nvidia() -> Option<Vec<String>> {
    super::winfacts::sleeping_nvidia(&adapters())
}

/// The display adapters present: every PCI device of the Display class, its driver from the class
/// key its `Driver` value names, and its problem code.
fn adapters() -> Vec<DisplayAdapter> {
    let Some(pci) = Key::open(HKEY_LOCAL_MACHINE, "SYSTEM\\CurrentControlSet\\Enum\\PCI") else { return Vec::new() };
    let mut out = Vec::new();
    for dev in pci.subkeys() {
        let Some(dk) = pci.child(&dev) else { continue };
        for inst in dk.subkeys() {
            let Some(ik) = dk.child(&inst) else { continue };
            if !ik.string("ClassGUID").is_some_and(|g| g.eq_ignore_ascii_case(DISPLAY_CLASS)) {
                continue;
            }
            let instance_id = format!("PCI\\{dev}\\{inst}");
            // Devices not present now (a card removed) are not located: left out.
            let Some((problem, power_state)) = device_state(&instance_id) else { continue };
            let driver = ik.string("Driver").and_then(|d| {
                Key::open(HKEY_LOCAL_MACHINE, &format!("SYSTEM\\CurrentControlSet\\Control\\Class\\{d}"))
            });
            let desc = ik.string("DeviceDesc").map(|d| d.rsplit(';').next().unwrap_or(&d).to_string());
            out.push(DisplayAdapter {
                name: driver.as_ref().and_then(|k| k.string("DriverDesc")).or(desc).unwrap_or_else(|| dev.clone()),
                instance_id,
                provider: driver.as_ref().and_then(|k| k.string("ProviderName")),
                driver_version: driver.as_ref().and_then(|k| k.string("DriverVersion")),
                driver_date: driver.as_ref().and_then(|k| k.string("DriverDate")),
                problem: Some(problem),
                power_state,
            });
            if out.len() >= 16 {
                return out;
            }
        }
    }
    out
}

/// The version resource of a file ("31.0.15.5222").
fn file_version(path: &Path) -> Option<String> {
    let p = wide(&path.to_string_lossy());
    let mut handle = 0u32;
    // SAFETY: `p` is NUL-terminated.
    let size = unsafe { GetFileVersionInfoSizeW(p.as_ptr(), &mut handle) };
    if size == 0 || size > 1 << 20 {
        return None;
    }
    let mut data = vec![0u8; size as usize];
    // SAFETY: `data` holds `size` bytes.
    if unsafe { GetFileVersionInfoW(p.as_ptr(), 0, size, data.as_mut_ptr().cast()) } == 0 {
        return None;
    }
    let root = wide("\\");
    let mut info: *mut core::ffi::c_void = std::ptr::null_mut();
    let mut len = 0u32;
    // SAFETY: `data` is the block GetFileVersionInfoW filled; `info` points into it afterwards.
    if unsafe { VerQueryValueW(data.as_ptr().cast(), root.as_ptr(), &mut info, &mut len) } == 0
        || info.is_null()
        || (len as usize) < std::mem::size_of::<VS_FIXEDFILEINFO>()
    {
        return None;
    }
    // SAFETY: VerQueryValueW returned a VS_FIXEDFILEINFO of at least that size inside `data`.
    let f = unsafe { std::ptr::read_unaligned(info.cast::<VS_FIXEDFILEINFO>()) };
    Some(format!(
        "{}.{}.{}.{}",
        f.dwFileVersionMS >> 16,
        f.dwFileVersionMS & 0xffff,
        f.dwFileVersionLS >> 16,
        f.dwFileVersionLS & 0xffff
    ))
}

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).map(PathBuf::from)
}

/// `nvml.dll` and `nvidia-smi.exe` where drivers put them: System32, the old NVSMI folder, and
/// the DCH driver store's `nv*` folders.
fn nvidia_files() -> Vec<FoundFile> {
    let windir = env_path("SystemRoot").unwrap_or_else(|| PathBuf::from("C:\\Windows"));
    let program_files = env_path("ProgramFiles").unwrap_or_else(|| PathBuf::from("C:\\Program Files"));
    let mut dirs = vec![windir.join("System32"), program_files.join("NVIDIA Corporation\\NVSMI")];
    let store = windir.join("System32\\DriverStore\\FileRepository");
    if let Ok(rd) = std::fs::read_dir(&store) {
        let mut nv: Vec<PathBuf> = rd
            .flatten()
            .take(20_000)
            .map(|e| e.path())
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().to_ascii_lowercase().starts_with("nv")))
            .collect();
        nv.sort();
        dirs.extend(nv.into_iter().take(64));
    }
    let mut out = Vec::new();
    for d in dirs {
        for f in ["nvml.dll", "nvidia-smi.exe"] {
            let p = d.join(f);
            if p.is_file() {
                out.push(FoundFile { version: file_version(&p), path: p.display().to_string() });
            }
        }
    }
    out
}

/// Python environments: the Python launcher's registrations, the default per-user installs,
/// conda's environments, and the portable folders of Stable Diffusion front ends and ComfyUI
/// one level under the desktop, downloads, documents and the home folder.
fn pythons() -> Vec<PythonEnv> {
    let mut prefixes: Vec<PathBuf> = Vec::new();
    for root in [HKEY_CURRENT_USER, HKEY_LOCAL_MACHINE] {
        if let Some(core) = Key::open(root, "Software\\Python\\PythonCore") {
            for v in core.subkeys() {
                if let Some(p) = core.child(&format!("{v}\\InstallPath")).and_then(|k| k.string("")) {
                    prefixes.push(PathBuf::from(p));
                }
            }
        }
    }
    let home = env_path("USERPROFILE");
    if let Some(local) = env_path("LOCALAPPDATA")
        && let Ok(rd) = std::fs::read_dir(local.join("Programs\\Python"))
    {
        prefixes.extend(rd.flatten().take(64).map(|e| e.path()));
    }
    if let Some(home) = &home {
        if let Ok(text) = std::fs::read_to_string(home.join(".conda\\environments.txt")) {
            prefixes
                .extend(text.lines().take(256).map(|l| PathBuf::from(l.trim())).filter(|p| !p.as_os_str().is_empty()));
        }
        for conda in ["miniconda3", "anaconda3", "miniforge3"] {
            let base = home.join(conda);
            if base.is_dir() {
                prefixes.push(base.clone());
                if let Ok(rd) = std::fs::read_dir(base.join("envs")) {
                    prefixes.extend(rd.flatten().take(256).map(|e| e.path()));
                }
            }
        }
        for place in ["", "Desktop", "Downloads", "Documents"] {
            let Ok(rd) = std::fs::read_dir(home.join(place)) else { continue };
            for e in rd.flatten().take(512) {
                let p = e.path();
                for sub in
                    ["python_embeded", "ComfyUI_windows_portable\\python_embeded", "venv", ".venv", "system\\python"]
                {
                    let c = p.join(sub);
                    if c.join("python.exe").is_file() || c.join("Scripts\\python.exe").is_file() {
                        prefixes.push(c);
                    }
                }
            }
        }
    }
    prefixes.sort();
    prefixes.dedup();
    prefixes
        .into_iter()
        .take(256)
        .filter(|p| p.join("python.exe").is_file() || p.join("Scripts\\python.exe").is_file())
        .map(|p| {
            let py = std::fs::read_to_string(p.join("Lib\\site-packages\\torch\\version.py")).ok();
            PythonEnv {
                prefix: p.display().to_string(),
                torch: py.as_deref().and_then(parse::torch_version),
                torch_cuda: py.as_deref().and_then(parse::torch_cuda).flatten(),
            }
        })
        .collect()
}

/// `C:\Windows\LiveKernelReports\WATCHDOG` dumps changed in the last 7 days.
fn watchdog_dumps() -> Vec<String> {
    let windir = env_path("SystemRoot").unwrap_or_else(|| PathBuf::from("C:\\Windows"));
    let week = std::time::Duration::from_secs(7 * 86_400);
    let Ok(rd) = std::fs::read_dir(windir.join("LiveKernelReports\\WATCHDOG")) else { return Vec::new() };
    let mut out: Vec<String> = rd
        .flatten()
        .take(4096)
        .filter(|e| {
            e.metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age <= week)
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// An event-log handle, closed when dropped.
struct Evt(EVT_HANDLE);

impl Drop for Evt {
    fn drop(&mut self) {
        // SAFETY: the handle came from EvtQuery or EvtNext and is closed once.
        unsafe {
            EvtClose(self.0);
        }
    }
}

/// The text of `attr='…'` or `<tag>…</tag>` after `key` in an event's XML.
fn xml_after<'a>(xml: &'a str, key: &str, end: char) -> Option<&'a str> {
    let rest = &xml[xml.find(key)? + key.len()..];
    Some(&rest[..rest.find(end)?])
}

/// The System log's "Display" event 4101 (the driver stopped responding and was recovered) of the
/// last 7 days, newest 200 at most, oldest first: "2026-11-29 21:14:03 Display driver nvlddmkm
/// stopped responding and has successfully recovered." `None` when the log cannot be queried.
fn tdr_events() -> Option<Vec<String>> {
    let channel = wide("System");
    let query = wide(
        "*[System[Provider[@Name='Display'] and (EventID=4101) and TimeCreated[timediff(@SystemTime) <= 604800000]]]",
    );
    // SAFETY: both strings are NUL-terminated; session 0 is the local computer.
    let results =
        unsafe { EvtQuery(0, channel.as_ptr(), query.as_ptr(), EvtQueryChannelPath | EvtQueryReverseDirection) };
    if results == 0 {
        return None;
    }
    let results = Evt(results);
    let mut out = Vec::new();
    while out.len() < 200 {
        let mut handles: [EVT_HANDLE; 16] = [0; 16];
        let mut returned = 0u32;
        // SAFETY: `handles` holds 16 handles and says so; `returned` receives how many were filled.
        if unsafe { EvtNext(results.0, 16, handles.as_mut_ptr(), 2000, 0, &mut returned) } == 0 {
            break;
        }
        for h in handles.iter().take(returned as usize).map(|h| Evt(*h)) {
            let mut buf = vec![0u16; 8192];
            let (mut used, mut count) = (0u32, 0u32);
            // SAFETY: `buf` holds the byte size passed; the event handle came from EvtNext.
            let ok = unsafe {
                EvtRender(
                    0,
                    h.0,
                    EvtRenderEventXml,
                    (buf.len() * 2) as u32,
                    buf.as_mut_ptr().cast(),
                    &mut used,
                    &mut count,
                )
            };
            if ok == 0 {
                continue;
            }
            let xml = from_wide(&buf);
            let time =
                xml_after(&xml, "SystemTime='", '\'').or_else(|| xml_after(&xml, "SystemTime=\"", '"')).unwrap_or("");
            let when = time.get(..19).unwrap_or(time).replace('T', " ");
            let driver = xml_after(&xml, "<Data>", '<').unwrap_or("nvlddmkm");
            out.push(format!("{when} Display driver {driver} stopped responding and has successfully recovered."));
        }
    }
    out.reverse();
    Some(out)
}

/// The GPU watchdog (TDR) settings (`None` fields: not set, the default).
pub fn tdr() -> super::view::Tdr {
    let k = Key::open(HKEY_LOCAL_MACHINE, "System\\CurrentControlSet\\Control\\GraphicsDrivers");
    let get = |v: &str| k.as_ref().and_then(|k| k.dword(v));
    super::view::Tdr { level: get("TdrLevel"), delay: get("TdrDelay"), ddi_delay: get("TdrDdiDelay") }
}

/// Everything the Windows checks read from this machine; `quick` (`check --quick`) leaves out the
/// search for Python environments.
pub fn windows_facts(quick: bool) -> WindowsFacts {
    let nt = Key::open(HKEY_LOCAL_MACHINE, "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion");
    let prefs: BTreeMap<String, String> =
        Key::open(HKEY_CURRENT_USER, "Software\\Microsoft\\DirectX\\UserGpuPreferences")
            .map(|k| k.string_values().into_iter().collect())
            .unwrap_or_default();
    let wsl = Key::open(HKEY_CURRENT_USER, "Software\\Microsoft\\Windows\\CurrentVersion\\Lxss").map(|lxss| {
        lxss.subkeys().iter().filter_map(|d| lxss.child(d).and_then(|k| k.string("DistributionName"))).collect()
    });
    let power = Key::open(HKEY_LOCAL_MACHINE, "SYSTEM\\CurrentControlSet\\Control\\Power\\User\\PowerSchemes");
    WindowsFacts {
        product: nt.as_ref().and_then(|k| k.string("ProductName")),
        display_version: nt.as_ref().and_then(|k| k.string("DisplayVersion")),
        build: nt.as_ref().and_then(|k| k.string("CurrentBuildNumber")).and_then(|b| b.trim().parse().ok()),
        adapters: adapters(),
        nvidia_files: nvidia_files(),
        gpu_preferences: prefs,
        pythons: if quick { Vec::new() } else { pythons() },
        tdr_events: tdr_events(),
        watchdog_dumps: watchdog_dumps(),
        hags: Key::open(HKEY_LOCAL_MACHINE, "SYSTEM\\CurrentControlSet\\Control\\GraphicsDrivers")
            .and_then(|k| k.dword("HwSchMode")),
        wsl_distros: wsl,
        dch: Key::open(HKEY_LOCAL_MACHINE, "SYSTEM\\CurrentControlSet\\Services\\nvlddmkm")
            .map(|k| k.has_value("DCHUVen")),
        power_scheme: power.as_ref().and_then(|k| k.string("ActivePowerScheme")).map(|g| g.to_ascii_lowercase()),
        power_mode_ac: power
            .as_ref()
            .and_then(|k| k.string("ActiveOverlayAcPowerScheme"))
            .map(|g| g.to_ascii_lowercase()),
    }
}
