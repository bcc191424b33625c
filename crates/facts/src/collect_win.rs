//! Reads [`WindowsFacts`] on a live Windows machine: the registry, the Configuration Manager (a
//! device's problem code), file version resources and folder listings. No subprocess, nothing
//! written, every search bounded.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use windows_sys::Win32::Storage::FileSystem::{
    GetFileVersionInfoSizeW, GetFileVersionInfoW, VS_FIXEDFILEINFO, VerQueryValueW,
};
use windows_sys::Win32::System::EventLog::{
    EVT_HANDLE, EvtClose, EvtNext, EvtQuery, EvtQueryChannelPath, EvtQueryReverseDirection, EvtRender,
    EvtRenderEventXml,
};

use super::parse;
use super::winfacts::{FoundFile, PythonEnv, WindowsFacts};
use crate::telemetry::winpci::{Key, Root, adapters, from_wide, wide};

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
    for root in [Root::CurrentUser, Root::LocalMachine] {
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
pub fn tdr() -> super::system::Tdr {
    let k = Key::open(Root::LocalMachine, "System\\CurrentControlSet\\Control\\GraphicsDrivers");
    let get = |v: &str| k.as_ref().and_then(|k| k.dword(v));
    super::system::Tdr { level: get("TdrLevel"), delay: get("TdrDelay"), ddi_delay: get("TdrDdiDelay") }
}

/// Everything the Windows checks read from this machine; `quick` (`check --quick`) leaves out the
/// search for Python environments.
pub fn windows_facts(quick: bool) -> WindowsFacts {
    let nt = Key::open(Root::LocalMachine, "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion");
    let prefs: BTreeMap<String, String> =
        Key::open(Root::CurrentUser, "Software\\Microsoft\\DirectX\\UserGpuPreferences")
            .map(|k| k.string_values().into_iter().collect())
            .unwrap_or_default();
    let wsl = Key::open(Root::CurrentUser, "Software\\Microsoft\\Windows\\CurrentVersion\\Lxss").map(|lxss| {
        lxss.subkeys().iter().filter_map(|d| lxss.child(d).and_then(|k| k.string("DistributionName"))).collect()
    });
    let power = Key::open(Root::LocalMachine, "SYSTEM\\CurrentControlSet\\Control\\Power\\User\\PowerSchemes");
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
        hags: Key::open(Root::LocalMachine, "SYSTEM\\CurrentControlSet\\Control\\GraphicsDrivers")
            .and_then(|k| k.dword("HwSchMode")),
        wsl_distros: wsl,
        dch: Key::open(Root::LocalMachine, "SYSTEM\\CurrentControlSet\\Services\\nvlddmkm")
            .map(|k| k.has_value("DCHUVen")),
        power_scheme: power.as_ref().and_then(|k| k.string("ActivePowerScheme")).map(|g| g.to_ascii_lowercase()),
        power_mode_ac: power
            .as_ref()
            .and_then(|k| k.string("ActiveOverlayAcPowerScheme"))
            .map(|g| g.to_ascii_lowercase()),
        system: Key::open(Root::LocalMachine, "HARDWARE\\DESCRIPTION\\System\\BIOS").and_then(|k| {
            let name = [k.string("SystemManufacturer"), k.string("SystemProductName")]
                .into_iter()
                .flatten()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
            (!name.is_empty()).then_some(name)
        }),
    }
}
