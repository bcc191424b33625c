//! The machine a file describes: when the checks read a user's capture or bug report, a support
//! report made from it must speak of that machine only (its file, OS, kernel, driver and GPUs),
//! never of the machine it was opened on, and must redact that machine's names (its host name and
//! its user), not only the names of the machine making the report.

use serde::{Deserialize, Serialize};

use super::system::{KernelLog, SystemView};

/// What a file says about the machine it came from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// The file or folder as it was opened (its name; the full path is the reader's, not the
    /// user's, and stays out of reports).
    pub file: String,
    /// The operating system, as the file names it (`/etc/os-release`'s PRETTY_NAME).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<String>,
    /// The kernel release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// The NVIDIA driver version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// When the file was made, as it says it (a capture's creation time, a bug report's date).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub made: Option<String>,
    /// The GPUs, one line each ("0: NVIDIA RTX A6000, 48 GiB (0000:01:00.0)"), every one the file
    /// names: NVML's, a GPU lost from the bus (its bus id and why), Windows' adapters with their
    /// driver and problem code, and the PCI functions NVML did not name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<String>,
    /// Host names found in the file (uname's node name, the host field of syslog lines).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hostnames: Vec<String>,
    /// User names found in the file (the user who made the capture, home directories in paths).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub users: Vec<String>,
}

impl Origin {
    /// What `view` (a capture or an imported report opened from `file`) says about its machine.
    pub fn of(view: &dyn SystemView, file: &std::path::Path) -> Origin {
        let meta = view.meta();
        let read = |p: &str| view.read(p).map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
        let os = view.read("/etc/os-release").and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim().trim_matches('"').to_string())
                .filter(|v| !v.is_empty())
        });
        let mut o = Origin {
            file: file.file_name().map_or_else(|| file.display().to_string(), |n| n.to_string_lossy().into_owned()),
            os,
            kernel: read("/proc/sys/kernel/osrelease"),
            ..Origin::default()
        };
        o.made = view.made();
        o.driver =
            meta.nvml.as_ref().and_then(|n| n.inventory.driver_version.as_ref()).and_then(|r| r.value().cloned());
        if o.driver.is_none() {
            o.driver = read("/proc/driver/nvidia/version")
                .and_then(|t| crate::diagnose::parse::driver_version(&t))
                .map(|v| v.0)
                .or_else(|| {
                    let w = meta.windows.as_ref()?;
                    w.adapters.iter().filter(|a| a.is_nvidia()).find_map(|a| a.driver_version.clone())
                });
        }
        o.gpus = gpu_rows(view);
        if let Some(h) = read("/proc/sys/kernel/hostname") {
            o.hostnames.push(h);
        }
        o.users.extend(meta.user.name.iter().cloned());
        for t in meta.env.values() {
            o.users.extend(crate::text::home_names(t));
        }
        // One pass over the kernel log: syslog's host field and the user names of home paths.
        if let KernelLog::Lines(lines) = &meta.kernel_log {
            for l in lines {
                o.hostnames.extend(syslog_host(l));
                o.users.extend(crate::text::home_names(l));
            }
        }
        for v in [&mut o.hostnames, &mut o.users] {
            v.retain(|n| !n.trim().is_empty());
            v.sort();
            v.dedup();
        }
        o
    }

    /// Adds the names quoted in the checks' own texts (home directories in evidence lines).
    pub fn learn_from(&mut self, report: &super::Report) {
        for c in &report.checks {
            for m in c.evidence.iter().chain([&c.summary, &c.finding]) {
                // (The values a message quotes, where paths are; its words are the program's.)
                let _ = m.map_data(&mut |value| {
                    self.users.extend(crate::text::home_names(value));
                    value.to_string()
                });
            }
        }
        self.users.sort();
        self.users.dedup();
    }
}

/// Every GPU the file names, one row each (see [`Origin::gpus`]).
fn gpu_rows(view: &dyn SystemView) -> Vec<String> {
    use crate::diagnose::parse::{norm_bus, xids};
    use crate::telemetry::sample::GpuHealth;
    let meta = view.meta();
    let lines: &[String] = match &meta.kernel_log {
        KernelLog::Lines(l) => l,
        KernelLog::Unreadable(_) => &[],
    };
    // GPUs that fell off the bus (Xid 79), by their bus id as the kernel writes it (0000:1a:00).
    let mut fell: Vec<String> =
        xids(lines).into_iter().filter(|x| x.code == 79 && !x.pci.is_empty()).map(|x| norm_bus(&x.pci)).collect();
    fell.sort();
    fell.dedup();
    let is_fell = |bus: &str| fell.iter().any(|f| bus.starts_with(f.as_str()));
    let mut rows = Vec::new();
    let mut named: Vec<String> = Vec::new();
    if let Some(nvml) = &meta.nvml {
        for g in &nvml.inventory.gpus {
            let bus = g.pci_bus_id.value().map(|b| norm_bus(b));
            let mut row = format!("{}: {}", g.index, g.name);
            if let Some(b) = g.vram_total_bytes.value() {
                row.push_str(&format!(", {}", crate::units::bytes(*b)));
            }
            if let Some(b) = &bus {
                row.push_str(&format!(" ({b})"));
                named.push(b.clone());
            }
            let lost = nvml.samples.iter().find(|s| s.index == g.index).and_then(|s| match &s.health {
                GpuHealth::Lost(why) => Some(why.en()),
                _ => None,
            });
            match (lost, bus.as_deref().is_some_and(is_fell)) {
                (Some(why), _) => row.push_str(&format!(": {why}")),
                (None, true) => row.push_str(": Xid 79"),
                (None, false) => {}
            }
            rows.push(row);
        }
    }
    for f in &fell {
        if !named.iter().any(|b| b.starts_with(f.as_str())) {
            rows.push(format!("{f}: Xid 79"));
            named.push(f.clone());
        }
    }
    if let Some(w) = &meta.windows {
        for a in w.adapters.iter().filter(|a| a.is_nvidia()) {
            let mut row = a.name.clone();
            if let Some(v) = &a.driver_version {
                row.push_str(&format!(", driver {v}"));
            }
            if let Some(p) = a.problem.filter(|p| *p != 0) {
                row.push_str(&format!(", Code {p}"));
            }
            rows.push(row);
        }
    }
    // The PCI functions NVML did not name (a driver that did not start, a GPU it does not see).
    for g in super::checks::pci_gpus(view).unwrap_or_default() {
        let bus = norm_bus(&g.address);
        if named.iter().any(|b| bus.starts_with(b.as_str()) || b.starts_with(bus.as_str())) {
            continue;
        }
        // The PCI id where the file holds it ("10de:2204"), the vendor's alone otherwise.
        let id = view
            .read(&format!("/sys/bus/pci/devices/{}/device", g.address))
            .map(|d| d.trim().trim_start_matches("0x").to_ascii_lowercase())
            .filter(|d| !d.is_empty())
            .map_or_else(|| "10de".to_string(), |d| format!("10de:{d}"));
        let driver = g.driver.unwrap_or_else(|| "none".into());
        rows.push(format!("{bus}: PCI {id}, driver {driver}"));
    }
    rows.iter().map(|r| crate::text::one_line(r)).collect()
}

/// The host field of a syslog line (`Jan 25 10:31:17 HOST kernel: ...`).
pub fn syslog_host(line: &str) -> Option<String> {
    let mut words = line.split_whitespace();
    let (month, day, time, host, tag) = (words.next()?, words.next()?, words.next()?, words.next()?, words.next()?);
    let is_time = time.len() >= 8 && time.as_bytes()[2] == b':' && time.as_bytes()[5] == b':';
    (month.len() == 3
        && month.chars().all(|c| c.is_ascii_alphabetic())
        && day.chars().all(|c| c.is_ascii_digit())
        && is_time
        && tag.ends_with(':')
        && !host.contains(':'))
    .then(|| host.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_syslog_line_names_its_host_and_a_dmesg_line_none() {
        assert_eq!(syslog_host("Jan 25 10:31:17 lab-7 kernel: NVRM: Xid 79").as_deref(), Some("lab-7"));
        assert_eq!(syslog_host("Aug 19 18:51:27 gpu-host kernel: nvidia-nvlink: x").as_deref(), Some("gpu-host"));
        assert_eq!(syslog_host("[  4.78] NVRM: loading NVIDIA UNIX x86_64 Kernel Module"), None);
        assert_eq!(syslog_host("NVRM: Xid (PCI:0000:1a:00): 79, pid=1, GPU has fallen off the bus."), None);
    }
}
