//! Collects the live machine's [`Meta`]: environment, user and groups, device nodes, driver
//! libraries as the loader finds them, NVIDIA kernel-log lines, and NVML's answers. Never spawns a
//! process; every part that fails is recorded as such.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::view::{CudaProbe, DeviceNode, GPU_ENV_VARS, KernelLog, LibraryFound, Meta, NvmlView, UserInfo};

/// The GPU-related environment variables that are set.
pub fn gpu_env() -> BTreeMap<String, String> {
    GPU_ENV_VARS.iter().filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v))).collect()
}

fn read(root: &Path, path: &str) -> Option<String> {
    std::fs::read_to_string(root.join(path.trim_start_matches('/'))).ok()
}

/// `gid → name` from `/etc/group`.
pub fn group_names(etc_group: &str) -> BTreeMap<u32, String> {
    etc_group
        .lines()
        .filter_map(|l| {
            let mut f = l.split(':');
            let name = f.next()?;
            let gid = f.nth(1)?.parse().ok()?;
            Some((gid, name.to_string()))
        })
        .collect()
}

/// The user from `/proc/self/status` (effective uid, groups) and `/etc/passwd`, `/etc/group`.
pub fn user(root: &Path) -> UserInfo {
    let status = read(root, "/proc/self/status").unwrap_or_default();
    let field = |k: &str| status.lines().find_map(|l| l.strip_prefix(k)).map(str::trim).unwrap_or("");
    let uid: u32 = field("Uid:").split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(u32::MAX);
    let gid: Option<u32> = field("Gid:").split_whitespace().nth(1).and_then(|s| s.parse().ok());
    let names = group_names(&read(root, "/etc/group").unwrap_or_default());
    let mut gids: Vec<u32> = field("Groups:").split_whitespace().filter_map(|s| s.parse().ok()).collect();
    gids.extend(gid);
    gids.sort_unstable();
    gids.dedup();
    let name = read(root, "/etc/passwd").and_then(|p| {
        p.lines().find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.get(2).and_then(|u| u.parse::<u32>().ok()) == Some(uid)).then(|| f[0].to_string())
        })
    });
    UserInfo {
        name,
        uid,
        groups: gids.into_iter().map(|g| (g, names.get(&g).cloned().unwrap_or_else(|| g.to_string()))).collect(),
    }
}

/// NVIDIA device nodes under `root/dev`.
#[cfg(unix)]
pub fn device_nodes(root: &Path) -> Vec<DeviceNode> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let names = group_names(&read(root, "/etc/group").unwrap_or_default());
    let mut paths: Vec<String> = Vec::new();
    for (dir, keep) in [("/dev", "nvidia"), ("/dev/nvidia-caps", "nvidia-cap"), ("/dev", "dxg")] {
        if let Ok(rd) = std::fs::read_dir(root.join(dir.trim_start_matches('/'))) {
            for e in rd.filter_map(Result::ok) {
                let n = e.file_name().to_string_lossy().into_owned();
                if n.starts_with(keep) {
                    paths.push(format!("{dir}/{n}"));
                }
            }
        }
    }
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .filter_map(|p| {
            let md = std::fs::metadata(root.join(p.trim_start_matches('/'))).ok()?;
            if md.is_dir() {
                return None;
            }
            let rdev = md.rdev();
            // Linux dev_t encoding (glibc gnu_dev_major/minor).
            let major = (((rdev >> 32) & 0xffff_f000) | ((rdev >> 8) & 0x0000_0fff)) as u32;
            let minor = (((rdev >> 12) & 0xffff_ff00) | (rdev & 0x0000_00ff)) as u32;
            Some(DeviceNode {
                path: p,
                char_device: md.file_type().is_char_device(),
                mode: md.mode() & 0o7777,
                uid: md.uid(),
                gid: md.gid(),
                group: names.get(&md.gid()).cloned(),
                major,
                minor,
            })
        })
        .collect()
}

/// NVIDIA device nodes (none outside Unix).
#[cfg(not(unix))]
pub fn device_nodes(_root: &Path) -> Vec<DeviceNode> {
    Vec::new()
}

/// Library directories in loader order: `LD_LIBRARY_PATH`, then `/etc/ld.so.conf.d/*.conf`, then
/// the standard ones.
pub fn library_dirs(root: &Path, ld_library_path: Option<&str>) -> Vec<(String, &'static str)> {
    let mut dirs: Vec<(String, &'static str)> = ld_library_path
        .unwrap_or("")
        .split(':')
        .filter(|d| !d.is_empty())
        .map(|d| (d.to_string(), "LD_LIBRARY_PATH"))
        .collect();
    let mut confs: Vec<PathBuf> = std::fs::read_dir(root.join("etc/ld.so.conf.d"))
        .map(|rd| {
            rd.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "conf")).collect()
        })
        .unwrap_or_default();
    confs.sort();
    for c in confs {
        for l in std::fs::read_to_string(&c).unwrap_or_default().lines() {
            let l = l.trim();
            if l.starts_with('/') {
                dirs.push((l.to_string(), "system"));
            }
        }
    }
    for d in [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
        "/lib/x86_64-linux-gnu",
        "/lib64",
        "/usr/lib/aarch64-linux-gnu",
    ] {
        dirs.push((d.to_string(), "system"));
    }
    dirs
}

/// `libcuda.so.1` and `libnvidia-ml.so.1` as the dynamic loader would find them.
pub fn libraries(root: &Path, ld_library_path: Option<&str>) -> Vec<LibraryFound> {
    let dirs = library_dirs(root, ld_library_path);
    ["libcuda.so.1", "libnvidia-ml.so.1", "libcuda.so"]
        .iter()
        .filter_map(|name| {
            dirs.iter().find_map(|(d, via)| {
                let p = root.join(d.trim_start_matches('/')).join(name);
                p.exists().then(|| {
                    let real = std::fs::canonicalize(&p).unwrap_or_else(|_| p.clone());
                    let strip = |x: &Path| {
                        format!("/{}", x.strip_prefix(root).unwrap_or(x).to_string_lossy().trim_start_matches('/'))
                    };
                    LibraryFound {
                        name: name.to_string(),
                        path: strip(&p),
                        real_path: strip(&real),
                        via: via.to_string(),
                    }
                })
            })
        })
        .collect()
}

/// NVIDIA lines of the kernel log from `/dev/kmsg` (non-blocking), or why it cannot be read.
#[cfg(target_os = "linux")]
pub fn kernel_log(root: &Path) -> KernelLog {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    const O_NONBLOCK: i32 = 0o4000;
    let path = root.join("dev/kmsg");
    let mut f = match std::fs::OpenOptions::new().read(true).custom_flags(O_NONBLOCK).open(&path) {
        Ok(f) => f,
        Err(e) => {
            return KernelLog::Unreadable(format!(
                "cannot read the kernel log ({e}); as a non-root user this is normal when kernel.dmesg_restrict=1: run `sudo dmesg | grep -i -e nvrm -e xid` to see it"
            ));
        }
    };
    let mut lines = Vec::new();
    let mut buf = vec![0u8; 8192];
    // Each read returns one record; stop at the end (WouldBlock) or after a bound.
    for _ in 0..100_000 {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let rec = String::from_utf8_lossy(&buf[..n]);
                let msg = rec.split_once(';').map_or(rec.as_ref(), |(_, m)| m).lines().next().unwrap_or("").to_string();
                if msg.contains("NVRM") || msg.contains("nvidia") || msg.contains("Xid") || msg.contains("nouveau") {
                    lines.push(msg);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) if e.raw_os_error() == Some(32) => continue, // EPIPE: records were overwritten
            Err(e) => return KernelLog::Unreadable(format!("reading the kernel log failed: {e}")),
        }
    }
    if lines.len() > 500 {
        lines.drain(..lines.len() - 500);
    }
    KernelLog::Lines(lines)
}

/// The kernel log (not available on this platform).
#[cfg(not(target_os = "linux"))]
pub fn kernel_log(_root: &Path) -> KernelLog {
    KernelLog::Unreadable("no Linux kernel log on this platform".into())
}

/// A DWORD under `HKEY_LOCAL_MACHINE\subkey`, or `None` when absent.
#[cfg(windows)]
fn reg_dword(subkey: &str, value: &str) -> Option<u32> {
    use windows_sys::Win32::System::Registry::{HKEY_LOCAL_MACHINE, RRF_RT_REG_DWORD, RegGetValueW};
    let k: Vec<u16> = subkey.encode_utf16().chain(Some(0)).collect();
    let v: Vec<u16> = value.encode_utf16().chain(Some(0)).collect();
    let mut data: u32 = 0;
    let mut size: u32 = 4;
    // SAFETY: both names are NUL-terminated UTF-16 buffers that outlive the call; `data` is a
    // 4-byte buffer and `size` says so; RRF_RT_REG_DWORD makes the API refuse other types.
    let rc = unsafe {
        RegGetValueW(
            HKEY_LOCAL_MACHINE,
            k.as_ptr(),
            v.as_ptr(),
            RRF_RT_REG_DWORD,
            std::ptr::null_mut(),
            (&mut data as *mut u32).cast(),
            &mut size,
        )
    };
    (rc == 0).then_some(data)
}

/// The GPU watchdog (TDR) settings from the registry.
#[cfg(windows)]
pub fn tdr() -> Option<super::view::Tdr> {
    const KEY: &str = "System\\CurrentControlSet\\Control\\GraphicsDrivers";
    Some(super::view::Tdr {
        level: reg_dword(KEY, "TdrLevel"),
        delay: reg_dword(KEY, "TdrDelay"),
        ddi_delay: reg_dword(KEY, "TdrDdiDelay"),
    })
}

/// The GPU watchdog (TDR) settings (Windows only).
#[cfg(not(windows))]
pub fn tdr() -> Option<super::view::Tdr> {
    None
}

/// Loads the CUDA driver library as a CUDA program would and calls `cuInit(0)`,
/// `cuDriverGetVersion` and `cuDeviceGetCount`. Runs on a helper thread with a time limit (a hung
/// driver costs at most `timeout`).
pub fn cuda_probe(timeout: std::time::Duration) -> CudaProbe {
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new().name("gd-cuda-probe".into()).spawn(move || {
        let _ = tx.send(cuda_probe_here());
    });
    match spawned.ok().and_then(|_| rx.recv_timeout(timeout).ok()) {
        Some(p) => p,
        // Not "no library": the calls hang, which is a wedged driver (the hung-driver check says so).
        None => CudaProbe { did_not_return: Some(timeout.as_secs()), ..CudaProbe::default() },
    }
}

fn cuda_probe_here() -> CudaProbe {
    let names: &[&str] = if cfg!(windows) { &["nvcuda.dll"] } else { &["libcuda.so.1", "libcuda.so"] };
    let mut errors = Vec::new();
    for name in names {
        // SAFETY: loading the CUDA driver library runs its initialisers, as any CUDA program
        // does; the symbols are declared with the driver API's C signatures.
        let lib = match unsafe { libloading::Library::new(name) } {
            Ok(l) => l,
            Err(e) => {
                errors.push(format!("{name}: {e}"));
                continue;
            }
        };
        let mut probe = CudaProbe { library: Some((*name).to_string()), ..CudaProbe::default() };
        // SAFETY: as above; cuInit(unsigned) -> CUresult, cuDriverGetVersion(int*) -> CUresult,
        // cuDeviceGetCount(int*) -> CUresult; the out-pointers are valid i32s.
        unsafe {
            type Init = unsafe extern "C" fn(u32) -> i32;
            type OutInt = unsafe extern "C" fn(*mut i32) -> i32;
            if let Ok(f) = lib.get::<Init>(b"cuInit\0") {
                probe.init_code = Some(f(0));
            }
            if let Ok(f) = lib.get::<OutInt>(b"cuDriverGetVersion\0") {
                let mut v = 0;
                if f(&mut v) == 0 {
                    probe.driver_version = Some(format!("{}.{}", v / 1000, (v % 1000) / 10));
                }
            }
            if probe.init_code == Some(0)
                && let Ok(f) = lib.get::<OutInt>(b"cuDeviceGetCount\0")
            {
                let mut n = 0;
                if f(&mut n) == 0 {
                    probe.devices = Some(n);
                }
            }
        }
        // Keep the library loaded: unloading the CUDA driver while it may run threads is unsafe.
        std::mem::forget(lib);
        return probe;
    }
    CudaProbe { load_error: Some(errors.join("; ")), ..CudaProbe::default() }
}

/// Collects the live machine's metadata under `root`, with NVML's answers.
pub fn collect_meta(root: &Path, nvml: Option<NvmlView>, renderer: Option<String>) -> Meta {
    let env = gpu_env();
    // A sleeping GPU is left asleep: cuInit would wake it.
    let asleep =
        matches!(nvml.as_ref().map(|n| &n.status), Some(crate::telemetry::source::SourceStatus::Asleep { .. }));
    let cuda = (!asleep).then(|| cuda_probe(std::time::Duration::from_secs(5)));
    Meta {
        platform: if cfg!(windows) { "windows" } else { "linux" }.to_string(),
        libraries: libraries(root, env.get("LD_LIBRARY_PATH").map(String::as_str)),
        env,
        user: user(root),
        device_nodes: device_nodes(root),
        links: BTreeMap::new(),
        listings: BTreeMap::new(),
        nvml,
        kernel_log: kernel_log(root),
        renderer,
        tdr: tdr(),
        cuda,
    }
}
