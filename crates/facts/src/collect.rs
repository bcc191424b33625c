//! Collects the live machine's [`Meta`]: environment, user and groups, device nodes, driver
//! libraries as the loader finds them, NVIDIA kernel-log lines, and NVML's answers. Never spawns a
//! process; every part that fails is recorded as such.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::system::{
    CudaProbe, DeviceNode, GPU_ENV_VARS, KernelLog, KernelLogSource, LibraryFound, Meta, NvmlView, UserInfo,
};

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
    let mut nodes = paths
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
                open: None,
            })
        })
        .collect::<Vec<_>>();
    try_open(root, &mut nodes, std::time::Duration::from_secs(3));
    nodes
}

/// Opens each character node (read-write, else read-only) and closes it at once, nothing else,
/// recording `ok` or the error: a node that is listed but cannot be opened (`Operation not
/// permitted` while its mode allows it) is a container that lost its device rules. Runs on its own
/// thread, so a wedged driver whose open() blocks costs at most `timeout`.
#[cfg(unix)]
fn try_open(root: &Path, nodes: &mut [DeviceNode], timeout: std::time::Duration) {
    use std::os::unix::fs::OpenOptionsExt;
    const O_NONBLOCK: i32 = 0o4000;
    let paths: Vec<(usize, PathBuf)> = nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.char_device)
        .map(|(i, n)| (i, root.join(n.path.trim_start_matches('/'))))
        .collect();
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new().name("gd-open-nodes".into()).spawn(move || {
        for (i, p) in paths {
            let open = |write: bool| {
                std::fs::OpenOptions::new().read(true).write(write).custom_flags(O_NONBLOCK).open(&p).map(drop)
            };
            let result = match open(true) {
                Ok(()) => "ok".to_string(),
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied && open(false).is_ok() => {
                    "ok (read-only)".to_string()
                }
                Err(e) => e.to_string(),
            };
            if tx.send((i, result)).is_err() {
                return;
            }
        }
    });
    if spawned.is_err() {
        return;
    }
    let deadline = std::time::Instant::now() + timeout;
    while let Ok((i, r)) = rx.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now())) {
        if let Some(n) = nodes.get_mut(i) {
            n.open = Some(r);
        }
    }
    for n in nodes.iter_mut().filter(|n| n.char_device && n.open.is_none()) {
        n.open = Some(format!("did not return within {} s", timeout.as_secs()));
    }
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
    for d in DEFAULT_LIB_DIRS {
        dirs.push((d.to_string(), "system"));
    }
    dirs
}

/// The loader's default directories (multiarch first, as Debian and Ubuntu configure it).
const DEFAULT_LIB_DIRS: [&str; 7] = [
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/lib/x86_64-linux-gnu",
    "/lib64",
    "/lib",
    "/usr/lib/aarch64-linux-gnu",
];

/// Every candidate of `libcuda.so.1` and `libnvidia-ml.so.1`, in the dynamic loader's order
/// (see [`super::ldcache`]).
pub fn libraries(root: &Path, ld_library_path: Option<&str>) -> Vec<LibraryFound> {
    let all = library_dirs(root, None);
    let conf: Vec<String> =
        all.iter().filter(|(d, _)| !DEFAULT_LIB_DIRS.contains(&d.as_str())).map(|(d, _)| d.clone()).collect();
    super::ldcache::candidates(root, ld_library_path, &conf, &DEFAULT_LIB_DIRS)
}

/// Whether a kernel-log line is one the checks use: the NVIDIA driver (NVRM, Xid, nvidia-modeset,
/// nvidia-drm), nouveau, kernel lockdown refusing unsigned modules, and PCIe AER errors.
pub fn is_gpu_line(msg: &str) -> bool {
    ["NVRM", "nvidia", "Xid", "nouveau", "Lockdown", "lockdown", "AER:", "PCIe Bus Error"]
        .iter()
        .any(|k| msg.contains(k))
}

/// At most this many kernel-log lines are kept (the newest).
const MAX_LOG_LINES: usize = 500;
/// At most this much of the end of a text log file is read.
#[cfg(target_os = "linux")]
const MAX_LOG_TAIL: u64 = 8 << 20;

/// NVIDIA lines of the kernel log, from the first readable source: `/dev/kmsg`, then the systemd
/// journal files (readable by groups `adm`/`systemd-journal`), then the text logs an ordinary user
/// in group `adm` may read (`/var/log/kern.log`, `/var/log/syslog`) and `/var/log/messages`, each
/// from the current boot only. Records which source was read and why
/// each one before it was not.
#[cfg(target_os = "linux")]
pub fn kernel_log(root: &Path) -> (KernelLog, KernelLogSource) {
    let mut source = KernelLogSource::default();
    match kmsg_lines(root) {
        Ok(lines) => {
            source.read = Some("/dev/kmsg".into());
            return (KernelLog::Lines(lines), source);
        }
        Err(e) => source.tried.push(("/dev/kmsg".into(), e)),
    }
    for dir in ["/var/log/journal", "/run/log/journal"] {
        match journal_lines(root, dir) {
            Ok(lines) => {
                source.read = Some(format!("the systemd journal in {dir} (this boot)"));
                return (KernelLog::Lines(lines), source);
            }
            Err(e) => source.tried.push((dir.into(), e)),
        }
    }
    for file in ["/var/log/kern.log", "/var/log/syslog", "/var/log/messages"] {
        match text_log_lines(&root.join(file.trim_start_matches('/'))) {
            Ok(lines) => {
                source.read = Some(format!("{file} (this boot)"));
                return (KernelLog::Lines(lines), source);
            }
            Err(e) => source.tried.push((file.into(), e)),
        }
    }
    // (What was tried and what the system said: the checks put it in words, in the reader's
    // language.)
    let tried = source.tried.iter().map(|(s, e)| format!("{s}: {e}")).collect::<Vec<_>>().join("; ");
    (KernelLog::Unreadable(tried), source)
}

#[cfg(target_os = "linux")]
fn kmsg_lines(root: &Path) -> Result<Vec<String>, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    const O_NONBLOCK: i32 = 0o4000;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(O_NONBLOCK)
        .open(root.join("dev/kmsg"))
        .map_err(|e| e.to_string())?;
    let mut lines = Vec::new();
    let mut buf = vec![0u8; 8192];
    // Each read returns one record; stop at the end (WouldBlock) or after a bound.
    for _ in 0..100_000 {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let rec = String::from_utf8_lossy(&buf[..n]);
                let msg = rec.split_once(';').map_or(rec.as_ref(), |(_, m)| m).lines().next().unwrap_or("").to_string();
                if is_gpu_line(&msg) {
                    lines.push(msg);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) if e.raw_os_error() == Some(32) => continue, // EPIPE: records were overwritten
            Err(e) => return Err(format!("reading failed: {e}")),
        }
    }
    if lines.len() > MAX_LOG_LINES {
        lines.drain(..lines.len() - MAX_LOG_LINES);
    }
    Ok(lines)
}

/// At most this many bytes of journal files are read (the newest files first).
#[cfg(target_os = "linux")]
const MAX_JOURNAL_BYTES: u64 = 256 << 20;

/// This boot's NVIDIA kernel lines from the journal files of `dir` (`<dir>/<machine id>/system*.journal`,
/// newest last; user journals are not read). `Err` when there are none or none is readable.
#[cfg(target_os = "linux")]
fn journal_lines(root: &Path, dir: &str) -> Result<Vec<String>, String> {
    let base = root.join(dir.trim_start_matches('/'));
    let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = Vec::new();
    for machine in std::fs::read_dir(&base).map_err(|e| e.to_string())?.filter_map(Result::ok) {
        for f in std::fs::read_dir(machine.path()).into_iter().flatten().filter_map(Result::ok) {
            let name = f.file_name().to_string_lossy().into_owned();
            let Ok(md) = f.metadata() else { continue };
            if name.starts_with("system") && name.ends_with(".journal") && md.is_file() {
                files.push((md.modified().unwrap_or(std::time::UNIX_EPOCH), md.len(), f.path()));
            }
        }
    }
    if files.is_empty() {
        return Err("no system journal files".into());
    }
    files.sort();
    let boot = std::fs::read_to_string(root.join("proc/sys/kernel/random/boot_id"))
        .ok()
        .and_then(|t| super::journal::parse_boot_id(&t));
    // The newest files within the byte budget, read oldest first.
    let mut budget = MAX_JOURNAL_BYTES;
    let mut chosen = Vec::new();
    for (_, len, p) in files.iter().rev() {
        if *len > budget {
            break;
        }
        budget -= len;
        chosen.push(p);
    }
    let mut lines = Vec::new();
    let mut errors = Vec::new();
    let mut read_any = false;
    for p in chosen.into_iter().rev() {
        match std::fs::read(p) {
            Ok(bytes) => match super::journal::kernel_messages(&bytes, boot) {
                Ok(msgs) => {
                    read_any = true;
                    lines.extend(msgs.into_iter().filter(|m| is_gpu_line(m)));
                }
                Err(e) => errors.push(format!("{}: {e}", p.display())),
            },
            Err(e) => errors.push(e.to_string()),
        }
    }
    if !read_any {
        return Err(errors.first().cloned().unwrap_or_else(|| "no journal file within the size limit".into()));
    }
    if lines.len() > MAX_LOG_LINES {
        lines.drain(..lines.len() - MAX_LOG_LINES);
    }
    Ok(lines)
}

/// The kernel's lines of a syslog-style text file since the last boot, without the syslog prefix
/// and the kernel's timestamp. Reads only a regular file's last [`MAX_LOG_TAIL`] bytes.
#[cfg(target_os = "linux")]
fn text_log_lines(path: &Path) -> Result<Vec<String>, String> {
    use std::io::{Read, Seek, SeekFrom};
    let md = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !md.is_file() {
        return Err("not a regular file".into());
    }
    let mut f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let start = md.len().saturating_sub(MAX_LOG_TAIL);
    f.seek(SeekFrom::Start(start)).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    f.take(MAX_LOG_TAIL).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    Ok(kernel_lines_of_text_log(&String::from_utf8_lossy(&bytes)))
}

/// See [`text_log_lines`]: `Nov 30 10:00:01 host kernel: [  12.5] NVRM: ...` (or the ISO form of
/// newer rsyslog) becomes `NVRM: ...`; lines before the last "Linux version" (a boot) are dropped.
pub fn kernel_lines_of_text_log(text: &str) -> Vec<String> {
    // The newest MAX_LOG_LINES, kept as they come: memory stays bounded on any log.
    let mut lines: std::collections::VecDeque<String> = std::collections::VecDeque::new();
    for line in text.lines() {
        let Some((_, msg)) = line.split_once(" kernel: ") else { continue };
        let msg = match msg.trim_start().strip_prefix('[') {
            Some(rest) if rest.split_once(']').is_some_and(|(t, _)| t.trim().parse::<f64>().is_ok()) => {
                rest.split_once(']').map_or(msg, |(_, m)| m).trim_start()
            }
            _ => msg.trim_start(),
        };
        if msg.starts_with("Linux version ") {
            lines.clear();
        } else if is_gpu_line(msg) {
            if lines.len() == MAX_LOG_LINES {
                lines.pop_front();
            }
            lines.push_back(msg.to_string());
        }
    }
    lines.into()
}

/// The kernel log (not available on this platform).
#[cfg(not(target_os = "linux"))]
pub fn kernel_log(_root: &Path) -> (KernelLog, KernelLogSource) {
    (KernelLog::Unreadable(super::system::NO_LINUX_KERNEL_LOG.into()), KernelLogSource::default())
}

/// The GPU watchdog (TDR) settings from the registry.
#[cfg(windows)]
pub fn tdr() -> Option<super::system::Tdr> {
    Some(super::collect_win::tdr())
}

/// The GPU watchdog (TDR) settings (Windows only).
#[cfg(not(windows))]
pub fn tdr() -> Option<super::system::Tdr> {
    None
}

/// Loads the CUDA driver library as a CUDA program would and calls `cuInit(0)`,
/// `cuDriverGetVersion` and `cuDeviceGetCount`, with a time limit (a hung driver costs at most
/// `timeout`). In gpu-doctor's binaries this runs in a child process ([`CUDA_PROBE_ARG`]): a
/// libcuda whose load blocks never holds the dynamic loader's lock in the process with the window
/// and the samplers, and one that crashes takes only the child with it. Elsewhere (library users,
/// tests) it runs on a helper thread.
pub fn cuda_probe(timeout: std::time::Duration) -> CudaProbe {
    if crate::telemetry::libprobe::child_probes_on()
        && let Some(p) = cuda_probe_in_child(timeout)
    {
        return p;
    }
    use std::sync::atomic::{AtomicU8, Ordering};
    let stage = std::sync::Arc::new(AtomicU8::new(0));
    let (tx, rx) = std::sync::mpsc::channel();
    let at = std::sync::Arc::clone(&stage);
    let spawned = std::thread::Builder::new().name("gd-cuda-probe".into()).spawn(move || {
        let _ = tx.send(cuda_probe_here(&|n, _| at.store(n, Ordering::Relaxed)));
    });
    match spawned.ok().and_then(|_| rx.recv_timeout(timeout).ok()) {
        Some(p) => p,
        None => cuda_hung(timeout, stage.load(Ordering::Relaxed), None),
    }
}

/// Not "no library": the calls hang, which is a wedged driver (the hung-driver check says so).
fn cuda_hung(timeout: std::time::Duration, stage: u8, library: Option<String>) -> CudaProbe {
    CudaProbe {
        library,
        did_not_return: Some(timeout.as_secs()),
        hung_call: Some(CUDA_STAGES[usize::from(stage).min(CUDA_STAGES.len() - 1)].to_string()),
        ..CudaProbe::default()
    }
}

/// The argument with which gpu-doctor's binaries only run the CUDA probe, print its progress and
/// result on standard output, and exit ([`run_cuda_probe_child`]).
pub const CUDA_PROBE_ARG: &str = "__gpu-doctor-probe-cuda";

/// The CUDA probe's child process: prints `stage N LIBRARY` as it reaches each call, then the
/// result as one JSON line.
pub fn run_cuda_probe_child() -> ! {
    use std::io::Write as _;
    let say = |line: String| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    };
    let probe = cuda_probe_here(&|n, lib| say(format!("stage {n} {lib}")));
    say(serde_json::to_string(&probe).unwrap_or_default());
    // The CUDA library may have started threads; leave without waiting for them.
    std::process::exit(0)
}

/// Runs the probe in a child process; `None` when no child could be started.
fn cuda_probe_in_child(timeout: std::time::Duration) -> Option<CudaProbe> {
    use std::io::BufRead as _;
    use std::sync::mpsc::RecvTimeoutError;
    let mut child =
        crate::telemetry::libprobe::tie_to_this_process(&mut std::process::Command::new(std::env::current_exe().ok()?))
            .arg(CUDA_PROBE_ARG)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .ok()?;
    let out = child.stdout.take()?;
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::Builder::new().name("gd-cuda-probe".into()).spawn(move || {
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    if reader.is_err() {
        let _ = child.kill();
        let _ = child.wait();
        return None;
    }
    let deadline = std::time::Instant::now() + timeout;
    let (mut stage, mut library) = (0u8, None);
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now())) {
            Ok(line) => {
                if let Some((n, lib)) = line.strip_prefix("stage ").and_then(|r| r.split_once(' ')) {
                    stage = n.parse().unwrap_or(stage);
                    library = Some(lib.to_string()).filter(|l| !l.is_empty());
                } else if let Ok(p) = serde_json::from_str::<CudaProbe>(&line) {
                    let _ = child.wait();
                    return Some(p);
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                let _ = child.wait();
                return Some(cuda_hung(timeout, stage, library.filter(|_| stage > 0)));
            }
            Err(RecvTimeoutError::Disconnected) => {
                // The child ended without a result: the CUDA library crashed it.
                let how = match child.wait() {
                    Ok(status) => status.to_string(),
                    Err(e) => e.to_string(),
                };
                let call = CUDA_STAGES[usize::from(stage).min(CUDA_STAGES.len() - 1)];
                return Some(CudaProbe {
                    library: library.filter(|_| stage > 0),
                    load_error: Some(format!("the process that called {call} crashed ({how})")),
                    ..CudaProbe::default()
                });
            }
        }
    }
}

/// The calls of the CUDA probe, in order (the index is what the probe has reached).
const CUDA_STAGES: [&str; 4] = ["dlopen of libcuda", "cuInit", "cuDriverGetVersion", "cuDeviceGetCount"];

/// The probe itself, in this process; `stage(n, library)` is told each call before it is made.
fn cuda_probe_here(stage: &dyn Fn(u8, &str)) -> CudaProbe {
    let mut names: Vec<String> =
        if cfg!(windows) { vec!["nvcuda.dll".into()] } else { vec!["libcuda.so.1".into(), "libcuda.so".into()] };
    // A node whose driver the GPU Operator runs from its container (only gpu-doctor looks there;
    // the checks say host programs do not).
    if !cfg!(windows) {
        names.extend(
            super::ldcache::operator_lib_dirs()
                .iter()
                .map(|d| format!("{d}/libcuda.so.1"))
                .filter(|p| Path::new(p).exists()),
        );
    }
    let mut errors = Vec::new();
    for name in &names {
        let name = name.as_str();
        stage(0, "");
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
            stage(1, name);
            if let Ok(f) = lib.get::<Init>(b"cuInit\0") {
                probe.init_code = Some(f(0));
            }
            stage(2, name);
            if let Ok(f) = lib.get::<OutInt>(b"cuDriverGetVersion\0") {
                let mut v = 0;
                if f(&mut v) == 0 {
                    probe.driver_version = Some(format!("{}.{}", v / 1000, (v % 1000) / 10));
                }
            }
            stage(3, name);
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

/// What the Windows checks read from this machine.
#[cfg(windows)]
fn windows_facts(quick: bool) -> Option<super::winfacts::WindowsFacts> {
    Some(super::collect_win::windows_facts(quick))
}

/// What the Windows checks read (Windows only).
#[cfg(not(windows))]
fn windows_facts(_quick: bool) -> Option<super::winfacts::WindowsFacts> {
    None
}

/// Collects the live machine's metadata under `root`, with NVML's answers. `quick` (for
/// `check --quick`) leaves out the cuInit probe (a child process that may take seconds) and, on
/// Windows, the search for Python environments.
pub fn collect_meta(root: &Path, nvml: Option<NvmlView>, renderer: Option<String>, quick: bool) -> Meta {
    let env = gpu_env();
    // A sleeping GPU is left asleep: cuInit would wake it.
    let asleep =
        matches!(nvml.as_ref().map(|n| &n.status), Some(crate::telemetry::source::SourceStatus::Asleep { .. }));
    let cuda = (!asleep && !quick).then(|| cuda_probe(std::time::Duration::from_secs(5)));
    let (kernel_log, kernel_log_source) = kernel_log(root);
    // Windows reads none of the Linux sources (under Wine they would be the host's files).
    let windows = cfg!(windows);
    Meta {
        platform: if windows { super::system::Platform::Windows } else { super::system::Platform::Linux },
        libraries: if windows { Vec::new() } else { libraries(root, env.get("LD_LIBRARY_PATH").map(String::as_str)) },
        env,
        user: if windows {
            UserInfo { name: std::env::var("USERNAME").ok(), uid: u32::MAX, groups: Vec::new() }
        } else {
            user(root)
        },
        device_nodes: if windows { Vec::new() } else { device_nodes(root) },
        holders: if windows { None } else { super::holders::scan(root) },
        links: BTreeMap::new(),
        listings: BTreeMap::new(),
        nvml,
        kernel_log,
        kernel_log_source: Some(kernel_log_source),
        renderer,
        tdr: tdr(),
        cuda,
        windows: windows_facts(quick),
        quick,
        not_collected: Default::default(),
    }
}
