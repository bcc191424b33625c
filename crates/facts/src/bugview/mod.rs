//! An `nvidia-bug-report.log` (or the text of `nvidia-smi -q` alone) as a [`SystemView`], so the
//! checklist reads it as it reads a capture. Each section maps onto the capture model:
//!
//! - files the script copied (`*** /proc/modules`, `/proc/driver/nvidia/version`,
//!   `/sys/bus/pci/devices/…/power/runtime_status`, `/etc/os-release` …) are files;
//! - `uname` in the header gives `/proc/sys/kernel/osrelease`; `lsmod` stands in for a missing
//!   `/proc/modules`;
//! - `lspci` (`-d "10de:*" -v -xxx`, `-nnDvvvxxx(x)`, `-nn`) gives the PCI functions: vendor and
//!   class files and the `driver` link from "Kernel driver in use";
//! - `dmesg:` (else the journal or text logs of "Scanning kernel log files") gives the kernel log;
//! - `ls -l /dev/nvidia*` gives the device nodes (modes and groups; nothing was opened);
//! - `nvidia-smi --query` / `-q` gives NVML's view: the inventory and one sample per GPU, or the
//!   failure it printed ("couldn't communicate with the NVIDIA driver", "Driver/library version
//!   mismatch", "GPU is lost");
//! - `mokutil --sb-state` or the kernel's Secure Boot lines give the SecureBoot efivar.
//!
//! What the script did not collect is missing, and `mark_not_in_report` (in the checklist's input) turns the checks that
//! needed it into "Not in this report". Every read is recorded, so the report can list the paths
//! that were asked for and not there.
//!
//! Any input takes time linear in its size and memory within the caps below (a log is at most
//! [`super::bugreport::MAX_TEXT`]): what is past a cap is counted, said in the header, and not
//! read. No machine has more GPUs or PCI functions than the caps; a log holding more was made
//! by hand. `benches/import.rs` measures every section kind at the caps.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::bugreport::{BugReport, SectionKind};
pub use sections::parse_smi;
use sections::{device_nodes, dmesg_lines, parse_lspci};

mod sections;
use super::system::{KernelLog, KernelLogSource, Meta, SystemView, UserInfo};
use crate::i18n::Message;
use crate::msg;

/// The most GPUs read from nvidia-smi's output (its blocks, and GPUs it could not reach).
pub const MAX_GPUS: usize = 64;
/// The most PCI functions read from an lspci listing.
pub const MAX_PCI_FUNCTIONS: usize = 256;
/// The most file sections kept (a real log holds a few hundred).
pub const MAX_FILES: usize = 8192;
/// A file section's path longer than this, or with more components, is not a path of a real
/// machine's file and is not kept (every directory above a kept file is made listable).
pub const MAX_PATH: usize = 512;
/// See [`MAX_PATH`].
pub const MAX_DEPTH: usize = 24;
/// The most Xid lines of earlier boots kept.
const MAX_EARLIER_XIDS: usize = 200;

/// The SecureBoot efivar the Secure Boot check reads.
const SECURE_BOOT_VAR: &str = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c";

/// What was imported, for the report's first section.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Imported {
    /// `nvidia-bug-report` or `nvidia-smi -q`.
    pub kind: String,
    /// The script's version (`nvidia-bug-report.sh Version: 36900632`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_version: Option<String>,
    /// When it ran, as the machine printed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// The kernel release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// The distribution (`/etc/os-release`'s PRETTY_NAME, else `/etc/issue`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<String>,
    /// The NVIDIA GPUs (nvidia-smi's names, else lspci's).
    #[serde(default)]
    pub gpus: Vec<String>,
    /// The driver version (the loaded module's, else nvidia-smi's, else the installer log's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// Whether the NVIDIA kernel module was loaded when the report was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_loaded: Option<bool>,
    /// The script ran to its end (its last line is there).
    pub complete: bool,
    /// The section the log was cut off in, left unread (see [`BugReport::cut`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<String>,
    /// Sections in the log.
    pub sections: usize,
    /// The sections the checks read, as the log names them (`/proc/modules`, `lspci -nnDvvvxxx`,
    /// `dmesg`, `nvidia-smi --query` …).
    #[serde(default)]
    pub read: Vec<String>,
    /// What the checks asked for that the log does not hold (paths and kinds).
    #[serde(default)]
    pub not_in_report: Vec<String>,
    /// Sections that were there but could not be read (e.g. an nvidia-smi output of an unknown
    /// shape).
    #[serde(default)]
    pub not_understood: Vec<String>,
    /// What was there past a cap and not read, in words ("300000 PCI functions past the first
    /// 256").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub past_caps: Vec<Message>,
}

/// Names: all of them when there are few; else the same ones counted ("NVIDIA A100 ×300, NVIDIA
/// T4"), at most 8 distinct names, then how many more.
fn summarise(names: &[String]) -> Message {
    if names.len() <= 8 {
        return Message::data(names.join(", "));
    }
    let mut counted: Vec<(&str, usize)> = Vec::new();
    let mut at: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for n in names {
        match at.get(n.as_str()) {
            Some(&i) => counted[i].1 += 1,
            None => {
                at.insert(n, counted.len());
                counted.push((n, 1));
            }
        }
    }
    let shown: Vec<String> =
        counted.iter().take(8).map(|(n, c)| if *c == 1 { (*n).to_string() } else { format!("{n} ×{c}") }).collect();
    let more = counted.len().saturating_sub(shown.len());
    if more == 0 {
        Message::data(shown.join(", "))
    } else {
        msg!("{items} and {n} more", items = shown.join(", "), n = more)
    }
}

impl Imported {
    /// The report's first lines: what the file is, the machine, and what it did not hold.
    pub fn lines(&self) -> Vec<Message> {
        let unknown = || msg!("unknown");
        let mut out = vec![if self.kind == "nvidia-smi -q" {
            msg!("Read from the output of nvidia-smi -q (NVML's view only; nothing else about the machine).")
        } else {
            msg!(
                "Read from an nvidia-bug-report log (script version {version}, made {date}){cut}.",
                version = self.script_version.clone().map_or_else(unknown, Message::data),
                date = self.date.clone().map_or_else(unknown, Message::data),
                cut = if self.complete { Message::default() } else { msg!(", cut short before its end") }
            )
        }];
        out.push(msg!(
            "Machine: kernel {kernel}; distribution: {distribution}; GPUs: {gpus}; driver: {driver}.",
            kernel = self.kernel.clone().map_or_else(unknown, Message::data),
            distribution = self.distribution.clone().map_or_else(unknown, Message::data),
            gpus = if self.gpus.is_empty() { unknown() } else { summarise(&self.gpus) },
            driver = self.driver.clone().map_or_else(unknown, Message::data)
        ));
        if let Some(cut) = &self.cut {
            out.push(msg!(
                "The log ends inside {section}; a section cut short proves nothing, so it was not read.",
                section = cut
            ));
        }
        if !self.read.is_empty() {
            let items = Message::join(self.read.iter().map(|r| Message::new(r)), &msg!(", "));
            out.push(msg!("Sections read: {items}", items = items));
        }
        out.push(match self.driver_loaded {
            Some(true) => msg!("The NVIDIA kernel module was loaded when the report was made."),
            Some(false) => msg!("The NVIDIA kernel module was NOT loaded when the report was made."),
            None => msg!("The report does not say whether the NVIDIA kernel module was loaded."),
        });
        if !self.not_in_report.is_empty() {
            let shown: Vec<&str> = self.not_in_report.iter().take(12).map(String::as_str).collect();
            let more = self.not_in_report.len().saturating_sub(shown.len());
            let items = if more == 0 {
                Message::data(shown.join(", "))
            } else {
                msg!("{items} and {n} more", items = shown.join(", "), n = more)
            };
            out.push(msg!("Not in this report: {items}", items = items));
        }
        if !self.not_understood.is_empty() {
            out.push(msg!("In the report but not understood: {items}", items = self.not_understood.join(", ")));
        }
        if !self.past_caps.is_empty() {
            out.push(msg!(
                "Not read (past gpu-doctor's limits): {items}",
                items = Message::join(self.past_caps.clone(), &msg!(", "))
            ));
        }
        out
    }
}

/// A log as the checks see it.
pub struct BugReportSystem {
    files: BTreeMap<String, String>,
    /// Paths the script looked for and wrote "does not exist".
    absent: BTreeSet<String>,
    dirs: BTreeMap<String, BTreeSet<String>>,
    links: BTreeMap<String, String>,
    bytes: BTreeMap<String, Vec<u8>>,
    meta: Meta,
    imported: Imported,
    /// Paths read that the log does not hold (and did not say were absent).
    misses: Mutex<BTreeSet<String>>,
    /// File sections not kept: a path past [`MAX_PATH`]/[`MAX_DEPTH`], or past [`MAX_FILES`].
    skipped_paths: usize,
    skipped_files: usize,
}

fn blank_meta() -> Meta {
    Meta {
        platform: crate::diagnose::system::Platform::Linux,
        env: BTreeMap::new(),
        user: UserInfo { name: None, uid: u32::MAX, groups: Vec::new() },
        device_nodes: Vec::new(),
        links: BTreeMap::new(),
        listings: BTreeMap::new(),
        nvml: None,
        libraries: Vec::new(),
        kernel_log: KernelLog::Unreadable(crate::diagnose::system::NOT_IN_REPORT.to_string()),
        kernel_log_source: None,
        renderer: None,
        tdr: None,
        cuda: None,
        windows: None,
        holders: None,
        quick: false,
        not_collected: ["device_nodes", "libraries", "environment", "python", "processes", "cuda", "container"]
            .iter()
            .map(|s| (*s).to_string())
            .collect(),
    }
}

impl BugReportSystem {
    fn empty(kind: &str) -> Self {
        BugReportSystem {
            files: BTreeMap::new(),
            absent: BTreeSet::new(),
            dirs: BTreeMap::new(),
            links: BTreeMap::new(),
            bytes: BTreeMap::new(),
            meta: blank_meta(),
            imported: Imported { kind: kind.into(), ..Imported::default() },
            misses: Mutex::new(BTreeSet::new()),
            skipped_paths: 0,
            skipped_files: 0,
        }
    }

    /// Adds a file and makes its directories listable. Paths past [`MAX_PATH`]/[`MAX_DEPTH`] and
    /// files past [`MAX_FILES`] are counted, not kept; the walk up stops at the first directory
    /// already listed (its own parents are).
    fn add_file(&mut self, path: &str, text: String) {
        if path.len() > MAX_PATH || path.matches('/').count() > MAX_DEPTH {
            self.skipped_paths += 1;
            return;
        }
        if self.files.len() >= MAX_FILES && !self.files.contains_key(path) {
            self.skipped_files += 1;
            return;
        }
        let mut p = path.trim_end_matches('/');
        while let Some((parent, name)) = p.rsplit_once('/') {
            let parent = if parent.is_empty() { "/" } else { parent };
            let known = self.dirs.contains_key(parent);
            self.dirs.entry(parent.to_string()).or_default().insert(name.to_string());
            if parent == "/" || known {
                break;
            }
            p = parent;
        }
        self.files.insert(path.to_string(), text);
    }

    /// The checks' view of a split log.
    pub fn from_report(r: &BugReport) -> Self {
        let mut s = Self::empty("nvidia-bug-report");
        s.imported.script_version = r.header.version.clone();
        s.imported.date = r.header.date.clone();
        s.imported.complete = r.complete;
        s.imported.cut = r.cut.clone();
        s.imported.sections = r.sections.len();
        for sec in &r.sections {
            match &sec.kind {
                SectionKind::File { path, missing: false } => s.add_file(path, sec.body.clone()),
                SectionKind::File { path, missing: true } => {
                    s.absent.insert(path.clone());
                }
                _ => {}
            }
        }
        let kernel = r.header.uname.as_deref().and_then(|u| u.split_whitespace().nth(2)).map(String::from);
        if let Some(k) = &kernel {
            s.add_file("/proc/sys/kernel/osrelease", format!("{k}\n"));
        }
        s.imported.kernel = kernel;
        // uname's node name: the machine's host name, which a report made from the log redacts.
        if let Some(host) = r.header.uname.as_deref().and_then(|u| u.split_whitespace().nth(1)) {
            s.add_file("/proc/sys/kernel/hostname", format!("{host}\n"));
        }
        if !s.files.contains_key("/proc/modules")
            && let Some(lsmod) = r.command(&["lsmod"])
        {
            let modules: String = lsmod
                .body
                .lines()
                .filter(|l| !l.starts_with("Module") && !l.trim().is_empty())
                .map(|l| format!("{l}\n"))
                .collect();
            s.add_file("/proc/modules", modules);
        }
        let lspci = best_lspci(r);
        for f in ["/proc/modules", "/proc/driver/nvidia/version", "/etc/os-release", "/etc/issue", "/proc/version"] {
            if s.files.contains_key(f) {
                s.imported.read.push(f.to_string());
            }
        }
        if let Some((command, text)) = &lspci {
            s.imported.read.push(command.clone());
            s.add_pci(text);
        } else {
            s.imported.not_in_report.push("lspci".into());
        }
        // `modinfo nvidia | grep vermagic`: whether a module exists for the running kernel.
        if let (Some(k), Some(sec)) = (&s.imported.kernel.clone(), r.command(&["modinfo", "nvidia"])) {
            let base = format!("/lib/modules/{k}/updates/dkms");
            let names: BTreeSet<String> = if sec.body.contains("vermagic:") {
                ["nvidia.ko".to_string()].into_iter().collect()
            } else {
                BTreeSet::new()
            };
            s.dirs.insert(base, names);
            s.imported.read.push("modinfo nvidia".into());
        }
        if lspci.is_none() {
            // Only the power files of some functions: not a listing of the bus.
            s.dirs.remove("/sys/bus/pci/devices");
        }
        s.add_kernel_log(r);
        match r.command(&["ls", "/dev/nvidia"]) {
            Some(sec) => {
                s.imported.read.push("ls -l /dev/nvidia*".into());
                s.meta.device_nodes = device_nodes(&sec.body);
                s.meta.not_collected.remove("device_nodes");
            }
            None => s.imported.not_in_report.push("ls -l /dev/nvidia*".into()),
        }
        match r.command(&["nvidia-smi", "--query"]).or_else(|| r.command(&["nvidia-smi", "-q"])) {
            Some(sec) => match sections::parse_smi_counted(&sec.body) {
                Some((view, dropped)) => {
                    s.note_gpus_past_cap(dropped);
                    s.imported.read.push("nvidia-smi --query".into());
                    // nvidia-smi ran and answered through NVML: the user-space driver is there.
                    s.meta.libraries.push(super::system::LibraryFound {
                        name: "libnvidia-ml.so.1".into(),
                        path: "libnvidia-ml.so.1".into(),
                        real_path: "libnvidia-ml.so.1".into(),
                        via: "nvidia-bug-report: nvidia-smi --query".into(),
                    });
                    s.meta.nvml = Some(view);
                }
                None => s.imported.not_understood.push("nvidia-smi --query".into()),
            },
            None => s.imported.not_in_report.push("nvidia-smi --query".into()),
        }
        s.add_secure_boot(r);
        s.fill_summary();
        // nvidia-bug-report.sh looks for no container marker; a log that holds PID 1's cgroup
        // file (copied by hand) says enough.
        if s.files.contains_key("/proc/1/cgroup") {
            s.meta.not_collected.remove("container");
        }
        if s.skipped_paths > 0 {
            let n = s.skipped_paths;
            s.imported.past_caps.push(msg!(
                "{n} file sections whose path is longer than {max} bytes",
                n = n,
                max = MAX_PATH
            ));
        }
        if s.skipped_files > 0 {
            let n = s.skipped_files;
            s.imported.past_caps.push(msg!("{n} file sections past the first {max}", n = n, max = MAX_FILES));
        }
        s
    }

    /// The checks' view of the text of `nvidia-smi -q` alone: NVML's view and nothing else.
    pub fn from_smi(text: &str) -> Option<Self> {
        let (view, dropped) = sections::parse_smi_counted(text)?;
        let mut s = Self::empty("nvidia-smi -q");
        s.note_gpus_past_cap(dropped);
        s.meta.nvml = Some(view);
        s.fill_summary();
        Some(s)
    }

    /// What was imported.
    pub fn imported(&self) -> Imported {
        let mut i = self.imported.clone();
        if let Ok(m) = self.misses.lock() {
            for p in m.iter() {
                if !i.not_in_report.contains(p) {
                    i.not_in_report.push(p.clone());
                }
            }
        }
        i
    }

    fn note_gpus_past_cap(&mut self, dropped: usize) {
        if dropped > 0 {
            self.imported.past_caps.push(msg!(
                "{n} GPUs in nvidia-smi's output past the first {max}",
                n = dropped,
                max = MAX_GPUS
            ));
        }
    }

    fn add_pci(&mut self, text: &str) {
        let base = "/sys/bus/pci/devices";
        self.dirs.entry(base.to_string()).or_default();
        let (functions, dropped) = parse_lspci(text);
        if dropped > 0 {
            self.imported.past_caps.push(msg!(
                "{n} PCI functions past the first {max}",
                n = dropped,
                max = MAX_PCI_FUNCTIONS
            ));
        }
        for f in functions {
            let dir = format!("{base}/{}", f.address);
            self.add_file(&format!("{dir}/vendor"), format!("0x{:04x}\n", f.vendor));
            self.add_file(&format!("{dir}/class"), format!("0x{:06x}\n", f.class));
            if let Some(d) = &f.driver {
                self.links.insert(format!("{dir}/driver"), format!("../../../bus/pci/drivers/{d}"));
            }
            if f.vendor == 0x10de && matches!(f.class >> 8, 0x0300 | 0x0302) {
                self.imported.gpus.push(f.name.clone());
            }
        }
    }

    fn add_kernel_log(&mut self, r: &BugReport) {
        let dmesg = r.command(&["dmesg"]).or_else(|| r.note("dmesg"));
        let scanned = r.note("Scanning kernel log files").or_else(|| r.command(&["journalctl", "-b", "-0"]));
        let (lines, from) = match (dmesg, scanned) {
            (Some(d), _) if !d.body.trim().is_empty() => (dmesg_lines(&d.body), "dmesg"),
            (_, Some(sc)) => (super::collect::kernel_lines_of_text_log(&sc.body), "journal / kernel log files"),
            _ => {
                self.imported.not_in_report.push("dmesg".into());
                return;
            }
        };
        let mut lines = lines;
        // Support reads a report for what happened before it too: Xid lines of earlier boots in the
        // scanned logs are kept, marked as such.
        if let Some(sc) = scanned {
            // Sets, not searches of the lists: linear in the log.
            let this_boot: std::collections::HashSet<&str> = lines.iter().map(String::as_str).collect();
            let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
            let mut earlier: Vec<String> = Vec::new();
            for line in sc.body.lines() {
                if earlier.len() >= MAX_EARLIER_XIDS {
                    break;
                }
                let Some((_, msg)) = line.split_once(" kernel: ") else { continue };
                let msg = match msg.trim_start().strip_prefix('[') {
                    Some(rest) => rest.split_once(']').map_or(msg, |(_, m)| m).trim_start(),
                    None => msg.trim_start(),
                };
                if msg.contains("Xid (") && !this_boot.contains(msg) && seen.insert(msg) {
                    earlier.push(msg!("(earlier boot) {line}", line = msg).en());
                }
            }
            earlier.append(&mut lines);
            lines = earlier;
        }
        self.imported.read.push(from.to_string());
        self.meta.kernel_log = KernelLog::Lines(lines);
        self.meta.kernel_log_source =
            Some(KernelLogSource { read: Some(format!("nvidia-bug-report: {from}")), tried: Vec::new() });
    }

    fn add_secure_boot(&mut self, r: &BugReport) {
        let mok = r.command(&["mokutil", "--sb-state"]).map(|s| s.body.to_ascii_lowercase());
        let source = if mok.is_some() { "mokutil --sb-state" } else { crate::tr_key!("Secure Boot (kernel log)") };
        let log: Vec<String> = match &self.meta.kernel_log {
            KernelLog::Lines(l) => l.clone(),
            KernelLog::Unreadable(_) => Vec::new(),
        };
        let all_log = r.command(&["dmesg"]).map(|s| s.body.clone()).unwrap_or_default();
        let enabled = match mok {
            Some(m) if m.contains("secureboot enabled") => Some(true),
            Some(m) if m.contains("secureboot disabled") => Some(false),
            _ if all_log.contains("Secure boot enabled")
                || all_log.contains("locked down from EFI Secure Boot mode") =>
            {
                Some(true)
            }
            _ if all_log.contains("Secure boot disabled") => Some(false),
            _ if log.iter().any(|l| l.contains("locked down from EFI Secure Boot mode")) => Some(true),
            _ => None,
        };
        if let Some(on) = enabled {
            self.imported.read.push(source.into());
            self.dirs.entry("/sys/firmware/efi".into()).or_default().insert("efivars".into());
            self.dirs.entry("/sys/firmware".into()).or_default().insert("efi".into());
            // An efivar: 4 bytes of attributes, then the value.
            self.bytes.insert(SECURE_BOOT_VAR.into(), vec![6, 0, 0, 0, u8::from(on)]);
        }
    }

    fn fill_summary(&mut self) {
        let release = |text: &str| {
            text.lines().find_map(|l| l.strip_prefix("PRETTY_NAME=")).map(|v| v.trim_matches('"').to_string())
        };
        self.imported.distribution = self.files.get("/etc/os-release").and_then(|t| release(t)).or_else(|| {
            // (Fedora's is `\S` then agetty's `Kernel \r on an \m (\l)`: no name at all.)
            self.files.get("/etc/issue").and_then(|t| {
                t.lines().map(issue_line).find(|l| !(l.is_empty() || l.starts_with("Kernel ") && l.contains(" on a")))
            })
        });
        let module = self.files.get("/proc/driver/nvidia/version").and_then(|t| super::parse::driver_version(t));
        let nvml = self.meta.nvml.as_ref();
        let smi_driver = nvml.and_then(|n| n.inventory.driver_version.as_ref()).and_then(|r| r.value().cloned());
        self.imported.driver = module.as_ref().map(|(v, _)| v.clone()).or(smi_driver);
        let loaded_by_modules =
            self.files.get("/proc/modules").map(|t| super::parse::loaded_modules(t).iter().any(|m| m == "nvidia"));
        self.imported.driver_loaded = match (module.is_some(), loaded_by_modules) {
            (true, _) => Some(true),
            (false, Some(l)) => Some(l),
            (false, None) if self.absent.contains("/proc/driver/nvidia/version") => Some(false),
            _ => None,
        };
        // nvidia-smi's names, unless it could not read every GPU (then the PCI list says more).
        if let Some(n) = nvml
            && !n.inventory.gpus.is_empty()
            && n.samples.iter().all(|s| s.util_gpu_pct.reason().is_none_or(|r| !r.en().contains("Unknown Error")))
            && (self.imported.gpus.is_empty() || n.inventory.gpus.len() >= self.imported.gpus.len())
        {
            self.imported.gpus = n.inventory.gpus.iter().map(|g| g.name.clone()).collect();
        }
    }

    fn miss(&self, path: &str) {
        // What the script could have collected: system files, not a user's folders (the checks'
        // search for Python environments reads many paths no log holds).
        let system = ["/proc/", "/sys/", "/dev/", "/etc/", "/lib/modules", "/run/", "/var/log/"];
        if system.iter().any(|p| path.starts_with(p))
            && !self.absent.contains(path)
            && let Ok(mut m) = self.misses.lock()
            && m.len() < 200
        {
            m.insert(path.to_string());
        }
    }
}

impl SystemView for BugReportSystem {
    fn read(&self, path: &str) -> Option<String> {
        let got = self.files.get(path).cloned();
        if got.is_none() {
            self.miss(path);
        }
        got
    }
    fn read_bytes(&self, path: &str) -> Option<Vec<u8>> {
        self.bytes.get(path).cloned().or_else(|| self.files.get(path).map(|t| t.clone().into_bytes()))
    }
    fn list(&self, dir: &str) -> Option<Vec<String>> {
        let got = self.dirs.get(dir.trim_end_matches('/')).map(|s| s.iter().cloned().collect());
        if got.is_none() {
            self.miss(dir);
        }
        got
    }
    fn link(&self, path: &str) -> Option<String> {
        self.links.get(path).cloned()
    }
    fn exists(&self, path: &str) -> bool {
        let p = path.trim_end_matches('/');
        self.files.contains_key(p)
            || self.dirs.contains_key(p)
            || self.links.contains_key(p)
            || self.bytes.contains_key(p)
    }
    fn meta(&self) -> &Meta {
        &self.meta
    }
    fn is_capture(&self) -> bool {
        true
    }
    fn made(&self) -> Option<String> {
        self.imported.date.as_deref().map(crate::text::one_line)
    }
}

/// The most detailed `lspci` listing (config-space dump, then verbose, then plain; never the tree
/// view `-t`, which has no function lines).
fn best_lspci(r: &BugReport) -> Option<(String, String)> {
    let listings: Vec<(&str, &str)> = r
        .sections
        .iter()
        .filter_map(|s| match &s.kind {
            SectionKind::Command(c) if c.contains("lspci") => Some((c.as_str(), s.body.as_str())),
            _ => None,
        })
        .filter(|(c, _)| !c.split_whitespace().any(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('t')))
        .collect();
    let score = |c: &str| u8::from(c.contains("xxx")) * 2 + u8::from(c.contains('v'));
    listings.iter().max_by_key(|(c, b)| (score(c), b.len())).map(|(c, b)| (short_command(c), (*b).to_string()))
}

/// A command line without the directory of its program: `lspci -nnDvvvxxx`.
fn short_command(c: &str) -> String {
    let c = c.trim();
    match c.split_once(' ') {
        Some((prog, rest)) => format!("{} {rest}", prog.rsplit('/').next().unwrap_or(prog)),
        None => c.rsplit('/').next().unwrap_or(c).to_string(),
    }
}

/// `/etc/issue`'s first line without its getty escapes (`Ubuntu 22.04.5 LTS \n \l`,
/// `Arch Linux \r (\l)`).
fn issue_line(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            chars.next();
        } else {
            out.push(c);
        }
    }
    out.replace("()", "").split_whitespace().collect::<Vec<_>>().join(" ")
}
