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
//! What the script did not collect is missing, and [`mark_not_in_report`] turns the checks that
//! needed it into "Not in this report". Every read is recorded, so the report can list the paths
//! that were asked for and not there.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::bugreport::{BugReport, SectionKind};
use super::view::{DeviceNode, KernelLog, KernelLogSource, Meta, NvmlView, SystemView, UserInfo};
use super::{Report, Verdict};
use crate::telemetry::nvml::explain_init_error;
use crate::telemetry::reading::Reading;
use crate::telemetry::sample::{GpuHealth, GpuInfo, GpuSample, Inventory};
use crate::telemetry::source::{NoGpu, SourceStatus};
use crate::tr;

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
    /// Sections in the log.
    pub sections: usize,
    /// What the checks asked for that the log does not hold (paths and kinds).
    #[serde(default)]
    pub not_in_report: Vec<String>,
    /// Sections that were there but could not be read (e.g. an nvidia-smi output of an unknown
    /// shape).
    #[serde(default)]
    pub not_understood: Vec<String>,
}

impl Imported {
    /// The report's first lines: what the file is, the machine, and what it did not hold.
    pub fn lines(&self) -> Vec<String> {
        let unknown = || tr!("unknown").to_string();
        let mut out = vec![if self.kind == "nvidia-smi -q" {
            tr!("Read from the output of nvidia-smi -q (NVML's view only; nothing else about the machine).").to_string()
        } else {
            tr!(
                "Read from an nvidia-bug-report log (script version {version}, made {date}){cut}.",
                version = self.script_version.clone().unwrap_or_else(unknown),
                date = self.date.clone().unwrap_or_else(unknown),
                cut = if self.complete { String::new() } else { tr!(", cut short before its end").to_string() }
            )
        }];
        out.push(tr!(
            "Machine: kernel {kernel}, {distribution}; GPUs: {gpus}; driver {driver}.",
            kernel = self.kernel.clone().unwrap_or_else(unknown),
            distribution = self.distribution.clone().unwrap_or_else(unknown),
            gpus = if self.gpus.is_empty() { unknown() } else { self.gpus.join(", ") },
            driver = self.driver.clone().unwrap_or_else(unknown)
        ));
        out.push(match self.driver_loaded {
            Some(true) => tr!("The NVIDIA kernel module was loaded when the report was made.").to_string(),
            Some(false) => tr!("The NVIDIA kernel module was NOT loaded when the report was made.").to_string(),
            None => tr!("The report does not say whether the NVIDIA kernel module was loaded.").to_string(),
        });
        if !self.not_in_report.is_empty() {
            let shown: Vec<&str> = self.not_in_report.iter().take(12).map(String::as_str).collect();
            let more = self.not_in_report.len().saturating_sub(shown.len());
            let items = if more == 0 {
                shown.join(", ")
            } else {
                tr!("{items} and {n} more", items = shown.join(", "), n = more)
            };
            out.push(tr!("Not in this report: {items}", items = items));
        }
        if !self.not_understood.is_empty() {
            out.push(tr!("In the report but not understood: {items}", items = self.not_understood.join(", ")));
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
}

fn blank_meta() -> Meta {
    Meta {
        platform: "linux".into(),
        env: BTreeMap::new(),
        user: UserInfo { name: None, uid: u32::MAX, groups: Vec::new() },
        device_nodes: Vec::new(),
        links: BTreeMap::new(),
        listings: BTreeMap::new(),
        nvml: None,
        libraries: Vec::new(),
        kernel_log: KernelLog::Unreadable(tr!("not in this report").to_string()),
        kernel_log_source: None,
        renderer: None,
        tdr: None,
        cuda: None,
        windows: None,
        quick: false,
        not_collected: ["device_nodes", "libraries", "environment", "python", "processes", "cuda"]
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
        }
    }

    /// Adds a file and makes its directories listable.
    fn add_file(&mut self, path: &str, text: String) {
        let mut p = path.trim_end_matches('/');
        while let Some((parent, name)) = p.rsplit_once('/') {
            let parent = if parent.is_empty() { "/" } else { parent };
            self.dirs.entry(parent.to_string()).or_default().insert(name.to_string());
            if parent == "/" {
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
        if let Some(text) = &lspci {
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
        }
        if lspci.is_none() {
            // Only the power files of some functions: not a listing of the bus.
            s.dirs.remove("/sys/bus/pci/devices");
        }
        s.add_kernel_log(r);
        match r.command(&["ls", "/dev/nvidia"]) {
            Some(sec) => {
                s.meta.device_nodes = device_nodes(&sec.body);
                s.meta.not_collected.remove("device_nodes");
            }
            None => s.imported.not_in_report.push("ls -l /dev/nvidia*".into()),
        }
        match r.command(&["nvidia-smi", "--query"]).or_else(|| r.command(&["nvidia-smi", "-q"])) {
            Some(sec) => match parse_smi(&sec.body) {
                Some(view) => {
                    // nvidia-smi ran and answered through NVML: the user-space driver is there.
                    s.meta.libraries.push(super::view::LibraryFound {
                        name: "libnvidia-ml.so.1".into(),
                        path: "libnvidia-ml.so.1".into(),
                        real_path: "libnvidia-ml.so.1".into(),
                        via: tr!("nvidia-smi ran (nvidia-bug-report)").to_string(),
                    });
                    s.meta.nvml = Some(view);
                }
                None => s.imported.not_understood.push("nvidia-smi --query".into()),
            },
            None => s.imported.not_in_report.push("nvidia-smi --query".into()),
        }
        s.add_secure_boot(r);
        s.fill_summary();
        s
    }

    /// The checks' view of the text of `nvidia-smi -q` alone: NVML's view and nothing else.
    pub fn from_smi(text: &str) -> Option<Self> {
        let view = parse_smi(text)?;
        let mut s = Self::empty("nvidia-smi -q");
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

    fn add_pci(&mut self, text: &str) {
        let base = "/sys/bus/pci/devices";
        self.dirs.entry(base.to_string()).or_default();
        for f in parse_lspci(text) {
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
            let mut earlier: Vec<String> = Vec::new();
            for line in sc.body.lines() {
                let Some((_, msg)) = line.split_once(" kernel: ") else { continue };
                let msg = match msg.trim_start().strip_prefix('[') {
                    Some(rest) => rest.split_once(']').map_or(msg, |(_, m)| m).trim_start(),
                    None => msg.trim_start(),
                };
                if msg.contains("Xid (") && !lines.iter().any(|l| l == msg) && !earlier.iter().any(|l| l.ends_with(msg))
                {
                    earlier.push(tr!("(earlier boot) {line}", line = msg));
                }
            }
            earlier.truncate(200);
            earlier.append(&mut lines);
            lines = earlier;
        }
        self.meta.kernel_log = KernelLog::Lines(lines);
        self.meta.kernel_log_source =
            Some(KernelLogSource { read: Some(format!("nvidia-bug-report: {from}")), tried: Vec::new() });
    }

    fn add_secure_boot(&mut self, r: &BugReport) {
        let mok = r.command(&["mokutil", "--sb-state"]).map(|s| s.body.to_ascii_lowercase());
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
            self.files.get("/etc/issue").and_then(|t| {
                t.lines().map(|l| l.replace("\\n", "").replace("\\l", "").trim().to_string()).find(|l| !l.is_empty())
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
        if let Some(n) = nvml
            && !n.inventory.gpus.is_empty()
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
}

/// In a report made from a log: a check that was skipped for lack of evidence (not blocked, not
/// "does not apply") says the evidence is not in this report, naming what was asked for.
pub fn mark_not_in_report(report: &mut Report, imported: &Imported) {
    let missing = crate::i18n::tr("evidence missing");
    for c in &mut report.checks {
        if c.verdict != Verdict::Skipped || c.blocked_by.is_some() || c.applies_to.is_some() {
            continue;
        }
        let mentioned: Vec<&String> = imported
            .not_in_report
            .iter()
            .filter(|p| c.summary.contains(p.as_str()) || c.evidence.iter().any(|e| e.contains(p.as_str())))
            .collect();
        if c.summary == missing || !mentioned.is_empty() || c.evidence.iter().any(|e| e.ends_with("not readable")) {
            c.finding = tr!("Not in this report: {summary}", summary = c.summary);
            if !mentioned.is_empty() {
                let list: Vec<String> = mentioned.iter().map(|p| (*p).clone()).collect();
                c.evidence.push(tr!("not collected by nvidia-bug-report.sh: {paths}", paths = list.join(", ")));
            }
        }
    }
}

/// The most detailed `lspci` listing (config-space dump, then verbose, then plain; never the tree
/// view `-t`, which has no function lines).
fn best_lspci(r: &BugReport) -> Option<String> {
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
    listings.iter().max_by_key(|(c, b)| (score(c), b.len())).map(|(_, b)| (*b).to_string())
}

/// One PCI function from lspci.
#[derive(Clone, Debug, PartialEq, Eq)]
struct PciFunction {
    address: String,
    vendor: u32,
    class: u32,
    name: String,
    driver: Option<String>,
}

/// The functions of an `lspci` listing: the address and name from the first line of each block,
/// vendor and class from the config-space dump (`00: de 10 …`), else from `[10de:2204]` and
/// `[0300]`, else from the class name; the driver from "Kernel driver in use".
fn parse_lspci(text: &str) -> Vec<PciFunction> {
    let mut out: Vec<PciFunction> = Vec::new();
    for line in text.lines() {
        let l = line.trim_end();
        if !l.starts_with([' ', '\t']) && !l.is_empty() {
            let Some((addr, rest)) = l.split_once(' ') else { continue };
            let a: Vec<&str> = addr.split([':', '.']).collect();
            if !(3..=4).contains(&a.len()) || !a.iter().all(|p| p.chars().all(|c| c.is_ascii_hexdigit())) {
                continue;
            }
            let address = if a.len() == 3 { format!("0000:{addr}") } else { addr.to_string() };
            let (class_name, name) = rest.split_once(": ").unwrap_or((rest, ""));
            let bracket = |s: &str| -> Vec<String> {
                s.split('[').skip(1).filter_map(|t| t.split_once(']').map(|x| x.0.to_string())).collect()
            };
            let class = bracket(class_name)
                .last()
                .and_then(|c| u32::from_str_radix(c, 16).ok())
                .map(|c| c << 8)
                .or_else(|| {
                    let n = class_name.to_ascii_lowercase();
                    if n.starts_with("vga compatible") {
                        Some(0x030000)
                    } else if n.starts_with("3d controller") {
                        Some(0x030200)
                    } else if n.starts_with("audio") {
                        Some(0x040300)
                    } else {
                        None
                    }
                })
                .unwrap_or(0);
            let vendor = bracket(name)
                .iter()
                .rev()
                .find_map(|t| t.split_once(':').and_then(|(v, _)| u32::from_str_radix(v, 16).ok()))
                .unwrap_or_else(|| if name.starts_with("NVIDIA") || name.starts_with("nVidia") { 0x10de } else { 0 });
            out.push(PciFunction { address, vendor, class, name: device_name(name), driver: None });
            continue;
        }
        let Some(f) = out.last_mut() else { continue };
        let t = l.trim();
        if let Some(d) = t.strip_prefix("Kernel driver in use:") {
            f.driver = Some(d.trim().to_string());
        } else if let Some(hex) = t.strip_prefix("00: ") {
            let b: Vec<u32> = hex.split_whitespace().filter_map(|x| u32::from_str_radix(x, 16).ok()).collect();
            if b.len() >= 12 {
                f.vendor = b[0] | (b[1] << 8);
                f.class = (b[11] << 16) | (b[10] << 8) | b[9];
            }
        }
    }
    out
}

/// lspci's device name without its ids and revision: `NVIDIA Corporation GA102GL [RTX A5000]`.
fn device_name(name: &str) -> String {
    let mut n = name.trim();
    for cut in [" (prog-if", " (rev"] {
        if let Some(i) = n.find(cut) {
            n = &n[..i];
        }
    }
    let n = n.trim_end();
    match n.rfind(" [") {
        Some(i)
            if n[i + 2..].trim_end_matches(']').split_once(':').is_some_and(|(a, b)| {
                a.len() == 4 && b.len() == 4 && a.chars().chain(b.chars()).all(|c| c.is_ascii_hexdigit())
            }) =>
        {
            n[..i].to_string()
        }
        _ => n.to_string(),
    }
}

/// `dmesg` lines: the `[  12.345]` stamp taken off, NVIDIA-related lines of the last boot kept.
fn dmesg_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for line in text.lines() {
        let msg = match line.trim_start().strip_prefix('[') {
            Some(rest) => rest.split_once(']').map_or(line, |(_, m)| m).trim_start(),
            None => line.trim_start(),
        };
        if msg.starts_with("Linux version ") {
            lines.clear();
        } else if super::collect::is_gpu_line(msg) {
            lines.push(msg.to_string());
        }
    }
    if lines.len() > 500 {
        lines.drain(..lines.len() - 500);
    }
    lines
}

/// `crw-rw-rw- 1 root root 195,   0 Mar  1 10:00 /dev/nvidia0` lines.
fn device_nodes(text: &str) -> Vec<DeviceNode> {
    let mut out = Vec::new();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.len() < 9 || !w[0].starts_with(['c', 'd']) || !w.last().is_some_and(|p| p.starts_with("/dev/")) {
            continue;
        }
        let mode = w[0].chars().skip(1).take(9).fold(0u32, |m, c| (m << 1) | u32::from(c != '-'));
        let major = w[4].trim_end_matches(',').parse().unwrap_or(0);
        let minor = w[5].parse().unwrap_or(0);
        let id = |n: &str| if n == "root" { 0 } else { n.parse().unwrap_or(u32::MAX) };
        out.push(DeviceNode {
            path: (*w.last().unwrap_or(&"")).to_string(),
            char_device: w[0].starts_with('c'),
            mode,
            uid: id(w[2]),
            gid: id(w[3]),
            group: Some(w[3].to_string()),
            major,
            minor,
            open: None,
        });
    }
    out
}

/// NVML's view from `nvidia-smi -q` output, or from the failure it printed. `None` when the text
/// is neither.
pub fn parse_smi(text: &str) -> Option<NvmlView> {
    let failed = |err: nvml_wrapper::error::NvmlError, said: &str| {
        let (summary, next_step) = explain_init_error(&err);
        NvmlView {
            status: SourceStatus::Unavailable(NoGpu {
                summary,
                next_step,
                attempts: vec![crate::telemetry::source::LoadAttempt {
                    path: "nvidia-smi".into(),
                    error: said.trim().to_string(),
                }],
            }),
            inventory: Inventory::default(),
            samples: Vec::new(),
            facts: Vec::new(),
            did_not_return: None,
            hung_call: None,
        }
    };
    use nvml_wrapper::error::NvmlError;
    let first = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    if text.contains("couldn't communicate with the NVIDIA driver")
        || text.contains("couldn't communicate with NVIDIA driver")
    {
        return Some(failed(NvmlError::DriverNotLoaded, first));
    }
    if text.contains("Driver/library version mismatch") {
        return Some(failed(NvmlError::LibRmVersionMismatch, first));
    }
    if text.contains("Insufficient Permissions") && !text.contains("NVSMI LOG") {
        return Some(failed(NvmlError::NoPermission, first));
    }
    let lost: Vec<(String, String)> = text
        .lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix("Unable to determine the device handle for GPU")?;
            let (addr, why) = rest.split_once(": ")?;
            Some((addr.trim().to_string(), why.trim().to_string()))
        })
        .collect();
    let nvsmi = text.contains("NVSMI LOG");
    if !nvsmi && lost.is_empty() && !text.contains("No devices were found") {
        return None;
    }
    let kv = |block: &str, key: &str| -> Option<String> {
        block.lines().find_map(|l| {
            let (k, v) = l.split_once(" : ").or_else(|| l.split_once(':'))?;
            (k.trim() == key).then(|| v.trim().to_string())
        })
    };
    let mut inventory = Inventory {
        driver_version: kv(text, "Driver Version").map(Reading::Value),
        cuda_driver_version: kv(text, "CUDA Version").map(Reading::Value),
        nvml_version: None,
        gpus: Vec::new(),
    };
    let mut samples = Vec::new();
    // The GPU blocks start at "GPU 00000000:01:00.0" at the left margin.
    let mut blocks: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if let Some(addr) = line.strip_prefix("GPU ").filter(|a| a.contains(':') && !a.contains(' ')) {
            blocks.push((addr.trim().to_string(), String::new()));
        } else if let Some(b) = blocks.last_mut() {
            b.1.push_str(line);
            b.1.push('\n');
        }
    }
    let na = tr!("not in this report");
    let mib = |v: Option<String>| {
        v.and_then(|s| s.trim_end_matches("MiB").trim().parse::<u64>().ok()).map(|m| m * 1024 * 1024)
    };
    let section = |block: &str, title: &str| -> String {
        let mut out = String::new();
        let mut inside: Option<usize> = None;
        for l in block.lines() {
            let indent = l.len() - l.trim_start().len();
            match inside {
                None if l.trim() == title => inside = Some(indent),
                Some(i) if indent > i => {
                    out.push_str(l);
                    out.push('\n');
                }
                Some(_) => break,
                None => {}
            }
        }
        out
    };
    for (i, (addr, block)) in blocks.iter().enumerate() {
        let index = u32::try_from(i).unwrap_or(u32::MAX);
        let mut info = GpuInfo::unavailable(index, na);
        info.name = kv(block, "Product Name").unwrap_or_else(|| tr!("GPU {index}", index = index));
        info.uuid = kv(block, "GPU UUID").map_or_else(|| Reading::na(na), Reading::Value);
        info.pci_bus_id = Reading::Value(addr.clone());
        let fb = section(block, "FB Memory Usage");
        if let Some(total) = mib(kv(&fb, "Total")) {
            info.vram_total_bytes = Reading::Value(total);
        }
        let link = section(block, "GPU Link Info");
        let generation = section(&link, "PCIe Generation");
        let width = section(&link, "Link Width");
        let num = |v: Option<String>| v.and_then(|s| s.trim_end_matches('x').trim().parse::<u32>().ok());
        if let Some(g) = num(kv(&generation, "Max")) {
            info.max_pcie_gen = Reading::Value(g);
        }
        if let Some(w) = num(kv(&width, "Max")) {
            info.max_pcie_width = Reading::Value(w);
        }
        let mut s = GpuSample::unavailable(index, GpuHealth::Ok, na);
        if let Some(used) = mib(kv(&fb, "Used")) {
            s.vram_used_bytes = Reading::Value(used);
        }
        if let Some(total) = mib(kv(&fb, "Total")) {
            s.vram_total_bytes = Reading::Value(total);
        }
        if let Some(g) = num(kv(&generation, "Current")) {
            s.pcie_gen = Reading::Value(g);
        }
        if let Some(w) = num(kv(&width, "Current")) {
            s.pcie_width = Reading::Value(w);
        }
        if let Some(t) = kv(block, "GPU Current Temp").and_then(|t| t.trim_end_matches('C').trim().parse().ok()) {
            s.temp_c = Reading::Value(t);
        }
        inventory.gpus.push(info);
        samples.push(s);
    }
    for (addr, why) in &lost {
        let index = u32::try_from(inventory.gpus.len()).unwrap_or(u32::MAX);
        let mut info = GpuInfo::unavailable(index, why);
        info.pci_bus_id = Reading::Value(addr.clone());
        inventory.gpus.push(info);
        // "GPU is lost" is NVML's GPU_IS_LOST (fell off the bus); other errors ("Unknown Error")
        // leave the GPU listed but unreadable.
        let health = if why.contains("GPU is lost") {
            GpuHealth::Lost(tr!("nvidia-smi: {why}", why = why))
        } else {
            GpuHealth::Ok
        };
        samples.push(GpuSample::unavailable(index, health, why));
    }
    Some(NvmlView {
        status: SourceStatus::Nvml {
            library: "libnvidia-ml.so.1 (as nvidia-smi used it)".into(),
            attempts: Vec::new(),
        },
        inventory,
        samples,
        facts: Vec::new(),
        did_not_return: None,
        hung_call: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lspci_blocks_give_vendor_class_and_driver_in_every_format() {
        let old = "01:00.0 VGA compatible controller: NVIDIA Corporation Device 0de9 (rev a1)\n\tKernel driver in use: nvidia\n\tKernel modules: nvidia, nouveau\n00: de 10 e9 0d 07 00 10 00 a1 00 00 03 00 00 80 00\n";
        let f = parse_lspci(old);
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].address.as_str(), f[0].vendor, f[0].class), ("0000:01:00.0", 0x10de, 0x030000));
        assert_eq!(f[0].driver.as_deref(), Some("nvidia"));
        let nn = "0000:3b:00.0 3D controller [0302]: NVIDIA Corporation GA102GL [A10] [10de:2236] (rev a1)\n\tKernel driver in use: nouveau\n";
        let f = parse_lspci(nn);
        assert_eq!((f[0].vendor, f[0].class, f[0].driver.as_deref()), (0x10de, 0x030200, Some("nouveau")));
        assert!(parse_lspci("garbage\n\tKernel driver in use: x\n:::: y\n").is_empty());
    }

    #[test]
    fn nvidia_smi_failures_become_nvmls_own_explanations() {
        let v = parse_smi(
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n",
        );
        assert!(matches!(v.map(|v| v.status), Some(SourceStatus::Unavailable(_))));
        let v = parse_smi("Failed to initialize NVML: Driver/library version mismatch\n").map(|v| v.status);
        assert!(
            matches!(&v, Some(SourceStatus::Unavailable(no)) if no.summary.contains("different versions")),
            "{v:?}"
        );
        let v = parse_smi(
            "Unable to determine the device handle for GPU 0000:04:00.0: GPU is lost.  Reboot the system to recover this GPU\n",
        );
        let v = v.unwrap_or_else(|| panic!("lost GPU"));
        assert!(matches!(&v.samples[0].health, GpuHealth::Lost(w) if w.contains("GPU is lost")));
        assert!(parse_smi("hello\n").is_none());
    }

    #[test]
    fn device_nodes_from_ls() {
        let n = device_nodes("crw-rw---- 1 root video 195,   0 Mar  1 10:00 /dev/nvidia0\ntotal 0\n");
        assert_eq!(n.len(), 1);
        assert_eq!((n[0].mode, n[0].major, n[0].minor, n[0].group.as_deref()), (0o660, 195, 0, Some("video")));
    }
}
