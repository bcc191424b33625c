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
    /// The GPUs, one line each ("0: NVIDIA RTX A6000, 48 GiB").
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
        if let Some(nvml) = &meta.nvml {
            let inv = &nvml.inventory;
            o.driver = inv.driver_version.as_ref().and_then(|r| r.value().cloned());
            o.gpus = inv
                .gpus
                .iter()
                .map(|g| match g.vram_total_bytes.value() {
                    Some(b) => format!("{}: {}, {}", g.index, g.name, crate::units::bytes(*b)),
                    None => format!("{}: {}", g.index, g.name),
                })
                .collect();
        }
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
