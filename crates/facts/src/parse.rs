//! Parsers for the text the checks read (/proc, sysfs, efivars, kernel log, torch/version.py,
//! CUDA_VISIBLE_DEVICES) and the reference tables they use (CUDA → minimum driver, Xid codes).
//! All are total: garbage in gives `None` or an empty result, never a panic.

use std::collections::BTreeMap;

/// The kernel module's version and flavour from `/proc/driver/nvidia/version`:
/// `("550.54.14", open)`.
pub fn driver_version(text: &str) -> Option<(String, bool)> {
    let line = text.lines().find(|l| l.starts_with("NVRM version:"))?;
    let open = line.contains("Open Kernel Module");
    let version = line.split_whitespace().find(|w| {
        let mut parts = w.split('.');
        w.contains('.') && parts.all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
    })?;
    Some((version.to_string(), open))
}

/// Module names from `/proc/modules`, with `-` written as `_`.
pub fn loaded_modules(text: &str) -> Vec<String> {
    text.lines().filter_map(|l| l.split_whitespace().next()).map(|m| m.replace('-', "_")).collect()
}

/// Character-device majors by name from `/proc/devices`.
pub fn char_majors(text: &str) -> BTreeMap<String, u32> {
    let mut out = BTreeMap::new();
    let mut in_char = false;
    for l in text.lines() {
        let l = l.trim();
        if l.starts_with("Character devices") {
            in_char = true;
            continue;
        }
        if l.starts_with("Block devices") {
            in_char = false;
            continue;
        }
        if in_char
            && let Some((num, name)) = l.split_once(char::is_whitespace)
            && let Ok(n) = num.parse()
        {
            out.insert(name.trim().to_string(), n);
        }
    }
    out
}

/// Secure Boot state from the `SecureBoot-8be4df61-…` efivar: 4 attribute bytes, then 1 = on.
pub fn secure_boot(efivar: &[u8]) -> Option<bool> {
    efivar.get(4).map(|b| *b == 1)
}

/// The driver version in a library's real path: `libnvidia-ml.so.550.54.15` → `550.54.15`.
/// WSL's and Windows' copies carry none (`libcuda.so.1.1`).
pub fn library_version(real_path: &str) -> Option<String> {
    let file = real_path.rsplit('/').next()?;
    let v = file.split_once(".so.")?.1;
    (v.split('.').count() >= 2
        && v.split('.').all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        && v.split('.').next().is_some_and(|m| m.len() >= 3))
    .then(|| v.to_string())
}

/// What `torch/version.py` says about CUDA: `Some(Some("12.1"))` for a CUDA build,
/// `Some(None)` for a CPU-only build, `None` when the file has no such line.
pub fn torch_cuda(version_py: &str) -> Option<Option<String>> {
    version_py.lines().find_map(|l| {
        let l = l.trim();
        let rest = l.strip_prefix("cuda")?;
        let rest = rest.trim_start();
        let rest = rest.strip_prefix(':').map_or(rest, |r| r.split_once('=').map_or("", |(_, v)| v)).trim_start();
        let rest = rest.strip_prefix('=').unwrap_or(rest).trim();
        if rest.starts_with("None") {
            return Some(None);
        }
        let v = rest.trim_matches(|c| c == '\'' || c == '"');
        (!v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.')).then(|| Some(v.to_string()))
    })
}

/// Whether a kernel-log line is the NVIDIA driver reporting a failure without an Xid number
/// (`RmInitAdapter failed`, GSP timeouts, `NVRM: ... failed`). Common harmless lines are not:
/// the unsigned-module taint notice and the USB-C controller's i2c timeouts (`nvidia-gpu`).
pub fn is_driver_error_line(line: &str) -> bool {
    let l = line.to_ascii_lowercase();
    let nvidia = l.contains("nvrm") || l.contains("nvidia");
    let failed = l.contains("failed") || l.contains("timeout") || l.contains("timed out") || l.contains("error");
    // Module loading refused (Secure Boot, lockdown) is the Secure Boot check's evidence.
    let harmless =
        ["module verification failed", "i2c", "xid", "modprobe", "key was rejected", "required key", "lockdown"]
            .iter()
            .any(|k| l.contains(k));
    nvidia && failed && !harmless
}

/// Whether a kernel-log line is a PCIe AER error about the PCI function `address`
/// (`0000:01:00.0`; matched without the domain too).
pub fn is_aer_line_for(line: &str, address: &str) -> bool {
    let short = address.split_once(':').map_or(address, |(_, rest)| rest);
    (line.contains("AER:") || line.contains("PCIe Bus Error")) && (line.contains(address) || line.contains(short))
}

/// The `envs_dirs` of a `.condarc` (a YAML list: `envs_dirs:` then `  - /path` lines), with `~`
/// expanded to `home`. Only this key is read; anything else in the file is ignored.
pub fn condarc_envs_dirs(condarc: &str, home: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in condarc.lines() {
        let t = line.trim_end();
        if t.trim().is_empty() || t.trim_start().starts_with('#') {
            continue;
        }
        if !t.starts_with(' ') && !t.starts_with('-') {
            inside = t.trim() == "envs_dirs:";
            continue;
        }
        if let Some(item) = t.trim().strip_prefix('-').filter(|_| inside) {
            let item = item.trim().trim_matches(|c| c == '"' || c == '\'');
            let item = match item.strip_prefix('~') {
                Some(rest) => format!("{home}{rest}"),
                None => item.to_string(),
            };
            if item.starts_with('/') {
                out.push(item);
            }
        }
    }
    out
}

/// The torch version from `torch/version.py` (`2.7.1+cu126`).
pub fn torch_version(version_py: &str) -> Option<String> {
    version_py.lines().find_map(|l| {
        let v = l.trim().strip_prefix("__version__")?.split_once('=')?.1.trim();
        Some(v.trim_matches(|c| c == '\'' || c == '"').to_string())
    })
}

/// The quoted value that follows `key` in a framework's generated build file, whatever the form:
/// `cuda_version = '12.6'` (ONNX Runtime, PaddlePaddle), `'cuda_version': '12.3'` (TensorFlow's
/// dictionary), `('cuda_version', '12.3')` (its older ordered dictionary). `None` without the key
/// or a value right after it; an unquoted value (`'is_cuda_build': True`) is returned as written.
pub fn build_value(text: &str, key: &str) -> Option<String> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(at) = text.get(from..).and_then(|r| r.find(key)).map(|a| a + from) {
        let after = &text[at + key.len()..];
        from = at + key.len();
        // The key itself, not a longer name that contains it.
        if after.starts_with(word) || text[..at].ends_with(word) {
            continue;
        }
        let value = after.trim_start_matches(|c: char| {
            c == '\'' || c == '"' || c == ':' || c == '=' || c == ',' || c.is_whitespace()
        });
        let v: String =
            value.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '_').take(64).collect();
        if !v.is_empty() {
            return Some(v);
        }
    }
    None
}

/// Whether a kernel-log line says the driver failed to start a GPU (`RmInitAdapter failed!`,
/// `rm_init_adapter failed, device minor number 0`).
pub fn is_rm_init_failure(line: &str) -> bool {
    let l = line.to_ascii_lowercase();
    l.contains("rminitadapter failed") || l.contains("rm_init_adapter failed")
}

/// One decoded Xid line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Xid {
    /// The Xid number.
    pub code: u32,
    /// The PCI address in the line (`0000:2b:00`).
    pub pci: String,
    /// The whole log line.
    pub line: String,
}

/// Xid lines (`NVRM: Xid (PCI:0000:2b:00): 79, ...`) in kernel-log lines.
pub fn xids(lines: &[String]) -> Vec<Xid> {
    let mut out: Vec<Xid> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if let Some(x) = xid_line(l) {
            out.push(x);
        } else if l.contains("fallen off the bus") && !out.iter().any(|x| x.code == 79) {
            // Newer drivers may report a GPU that fell off the bus without an Xid line, and split
            // the message over lines ("NVRM: The NVIDIA GPU 0000:b3:00.0" / "NVRM: (PCI ID: ...)
            // installed in this system has" / "NVRM: fallen off the bus and is not responding to
            // commands."): it is Xid 79 all the same; the address is on one of the lines before.
            let pci = lines[i.saturating_sub(2)..=i].iter().rev().find_map(|x| pci_address(x)).unwrap_or_default();
            out.push(Xid { code: 79, pci, line: l.clone() });
        }
    }
    out
}

/// One "Xid (PCI:...): N, ..." line.
fn xid_line(l: &str) -> Option<Xid> {
    let rest = &l[l.find("Xid (")? + 5..];
    let (pci, after) = rest.split_once(')')?;
    let code = after.trim_start_matches(':').trim().split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()?;
    Some(Xid { code, pci: pci.trim_start_matches("PCI:").to_string(), line: l.to_string() })
}

/// A PCI bus id in one form: `00000000:01:00.0` (NVML) and `0000:01:00.0` (sysfs) →
/// `0000:01:00.0`; an Xid line's `0000:01:00` keeps its shorter form (compare by prefix).
pub fn norm_bus(id: &str) -> String {
    let id = id.to_ascii_lowercase();
    match id.split_once(':') {
        Some((dom, rest)) if dom.len() > 4 => format!("{}:{rest}", &dom[dom.len() - 4..]),
        _ => id,
    }
}

/// The first PCI address (`0000:b3:00.0`) in `s`.
pub fn pci_address(s: &str) -> Option<String> {
    let b = s.as_bytes();
    (0..b.len().saturating_sub(11)).find_map(|i| {
        let w = &b[i..i + 12];
        let hex = |r: std::ops::Range<usize>| w[r].iter().all(u8::is_ascii_hexdigit);
        let ok = hex(0..4)
            && w[4] == b':'
            && hex(5..7)
            && w[7] == b':'
            && hex(8..10)
            && w[10] == b'.'
            && w[11].is_ascii_digit();
        ok.then(|| String::from_utf8_lossy(w).into_owned())
    })
}

/// `CUDA_VISIBLE_DEVICES` read with CUDA's rules against the GPUs `(index, uuid)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Visible {
    /// NVML indices CUDA will see, in CUDA's order.
    pub gpus: Vec<u32>,
    /// The first entry that matched no GPU (it hides itself and every entry after it).
    pub cut_at: Option<String>,
    /// MIG entries (handled by CUDA, not matched here).
    pub mig: Vec<String>,
}

/// Applies CUDA's rules: an empty value hides every GPU; entries are indices, `GPU-` UUIDs (a
/// unique prefix is enough) or `MIG-` ids; the first entry that matches nothing ends the list.
pub fn cuda_visible(value: &str, gpus: &[(u32, String)]) -> Visible {
    let mut out = Visible { gpus: Vec::new(), cut_at: None, mig: Vec::new() };
    if value.trim().is_empty() {
        return out;
    }
    for raw in value.split(',') {
        let e = raw.trim();
        if e.starts_with("MIG-") {
            out.mig.push(e.to_string());
            continue;
        }
        let found = if let Ok(i) = e.parse::<i64>() {
            gpus.iter().find(|(idx, _)| i64::from(*idx) == i).map(|g| g.0)
        } else if e.starts_with("GPU-") {
            let m: Vec<u32> = gpus.iter().filter(|(_, u)| u.starts_with(e)).map(|g| g.0).collect();
            (m.len() == 1).then(|| m[0])
        } else {
            None
        };
        match found {
            Some(i) if !out.gpus.contains(&i) => out.gpus.push(i),
            Some(_) => {}
            None => {
                out.cut_at = Some(e.to_string());
                break;
            }
        }
    }
    out
}

/// The Linux distribution family, from `/etc/os-release` (`ID` and `ID_LIKE`), which decides
/// the package commands a fix gives. See os-release(5) for the fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distro {
    /// Ubuntu and its derivatives (Linux Mint, Pop!_OS, ...): `ubuntu-drivers`.
    Ubuntu,
    /// Debian and derivatives that are not Ubuntu-based: apt with the non-free components.
    Debian,
    /// Fedora: RPM Fusion's `akmod-nvidia`.
    Fedora,
    /// Red Hat Enterprise Linux and rebuilds (Rocky, Alma, CentOS): dnf, dracut.
    RedHat,
    /// openSUSE and SLES: zypper, dracut.
    Suse,
    /// Arch Linux and derivatives: pacman, mkinitcpio.
    Arch,
    /// Not known (no os-release, e.g. an old capture, or another distribution).
    Unknown,
}

/// The distribution family named by an os-release file; `Unknown` when none fits. `ID` wins over
/// `ID_LIKE`, and within `ID_LIKE` the first known entry wins (Linux Mint lists "ubuntu debian").
pub fn distro(os_release: &str) -> Distro {
    let field = |key: &str| {
        os_release.lines().find_map(|l| {
            let (k, v) = l.trim().split_once('=')?;
            (k.trim() == key).then(|| v.trim().trim_matches(|c| c == '"' || c == '\'').to_ascii_lowercase())
        })
    };
    let of = |id: &str| match id {
        "ubuntu" => Some(Distro::Ubuntu),
        "debian" => Some(Distro::Debian),
        "fedora" => Some(Distro::Fedora),
        "rhel" | "centos" | "rocky" | "almalinux" => Some(Distro::RedHat),
        "suse" | "opensuse" | "opensuse-leap" | "opensuse-tumbleweed" | "sles" => Some(Distro::Suse),
        "arch" | "archlinux" => Some(Distro::Arch),
        _ => None,
    };
    let id = field("ID").unwrap_or_default();
    let like = field("ID_LIKE").unwrap_or_default();
    // A derivative whose ID_LIKE names Ubuntu is Ubuntu-based even when it also lists Debian.
    if like.split_whitespace().any(|x| x == "ubuntu") && of(&id).is_none() {
        return Distro::Ubuntu;
    }
    of(&id).or_else(|| like.split_whitespace().find_map(of)).unwrap_or(Distro::Unknown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_ids_normalise() {
        assert_eq!(norm_bus("00000000:01:00.0"), "0000:01:00.0");
        assert_eq!(norm_bus("0000:2B:00.0"), "0000:2b:00.0");
    }

    #[test]
    fn condarc_envs_dirs_reads_only_that_list_and_expands_the_home() {
        let rc = "channels:\n  - conda-forge\nenvs_dirs:\n  - ~/big/envs\n  - \"/data/conda envs\"\n  # a comment\n  - relative\nauto_activate_base: false\n";
        assert_eq!(condarc_envs_dirs(rc, "/home/ana"), vec!["/home/ana/big/envs", "/data/conda envs"]);
        assert!(condarc_envs_dirs("envs_dirs: []\n", "/h").is_empty());
        assert!(condarc_envs_dirs("", "/h").is_empty());
    }

    #[test]
    fn distributions_from_os_release() {
        assert_eq!(distro("NAME=\"Ubuntu\"\nID=ubuntu\nID_LIKE=debian\n"), Distro::Ubuntu);
        assert_eq!(distro("ID=linuxmint\nID_LIKE=\"ubuntu debian\"\n"), Distro::Ubuntu);
        assert_eq!(distro("PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n"), Distro::Debian);
        assert_eq!(distro("ID=fedora\n"), Distro::Fedora);
        assert_eq!(distro("ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n"), Distro::RedHat);
        assert_eq!(distro("ID=\"opensuse-tumbleweed\"\nID_LIKE=\"opensuse suse\"\n"), Distro::Suse);
        assert_eq!(distro("ID=endeavouros\nID_LIKE=arch\n"), Distro::Arch);
        assert_eq!(distro("ID=nixos\n"), Distro::Unknown);
        assert_eq!(distro(""), Distro::Unknown);
    }

    #[test]
    fn driver_version_lines() {
        let p = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.216.03  Thu Apr  3 01:14:19 UTC 2025\nGCC version:  gcc version 12.2.0";
        assert_eq!(driver_version(p), Some(("535.216.03".into(), false)));
        let o = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.195.03  Release Build  (dvs-builder@U16-I3-B03-4-3)  Sat Sep 20 00:00:00 UTC 2025";
        assert_eq!(driver_version(o), Some(("570.195.03".into(), true)));
        assert_eq!(driver_version("garbage"), None);
    }

    #[test]
    fn proc_parsers() {
        let m = loaded_modules("nvidia_uvm 1 0 - Live 0x0\nnvidia-drm 2 0 - Live\nnvidia 1 2 nvidia_uvm, Live");
        assert_eq!(m, vec!["nvidia_uvm", "nvidia_drm", "nvidia"]);
        let d = char_majors("Character devices:\n  1 mem\n195 nvidia\n234 nvidia-uvm\n\nBlock devices:\n  8 sd\n");
        assert_eq!(d.get("nvidia-uvm"), Some(&234));
        assert_eq!(d.get("sd"), None);
        assert_eq!(secure_boot(&[6, 0, 0, 0, 1]), Some(true));
        assert_eq!(secure_boot(&[6, 0, 0, 0, 0]), Some(false));
        assert_eq!(secure_boot(&[6]), None);
    }

    #[test]
    fn library_versions() {
        assert_eq!(library_version("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.15"), Some("550.54.15".into()));
        assert_eq!(library_version("/usr/lib/wsl/lib/libcuda.so.1.1"), None);
        assert_eq!(library_version("/usr/lib/x86_64-linux-gnu/libcuda.so.1"), None);
    }

    #[test]
    fn torch_version_py() {
        let new =
            "__version__ = '2.7.1+cu126'\ndebug = False\ncuda: Optional[str] = '12.6'\nhip: Optional[str] = None\n";
        assert_eq!(torch_cuda(new), Some(Some("12.6".into())));
        assert_eq!(torch_version(new), Some("2.7.1+cu126".into()));
        assert_eq!(torch_cuda("__version__ = '2.3.0+cpu'\ncuda: Optional[str] = None\n"), Some(None));
        assert_eq!(torch_cuda("cuda = '11.8'\n"), Some(Some("11.8".into())));
        assert_eq!(torch_cuda("nothing here"), None);
    }

    #[test]
    fn xid_lines_decode() {
        let lines = vec![
            "NVRM: Xid (PCI:0000:2b:00): 79, pid=1234, name=python, GPU has fallen off the bus.".to_string(),
            "NVRM: Xid (PCI:0000:01:00): 13, Graphics Exception".to_string(),
            "unrelated".to_string(),
        ];
        let x = xids(&lines);
        assert_eq!(x.len(), 2);
        assert_eq!((x[0].code, x[0].pci.as_str()), (79, "0000:2b:00"));
        assert!(crate::knowledge::xid::xid_meaning(79).0 && !crate::knowledge::xid::xid_meaning(13).0);
        // The same GPU's second "fallen off the bus" line is the same Xid 79, not another one.
        let twice = vec![lines[0].clone(), "NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus.".to_string()];
        assert_eq!(xids(&twice).len(), 1);
    }

    #[test]
    fn a_gpu_fallen_off_the_bus_without_an_xid_line_is_xid_79() {
        // Driver 570's multi-line message (NVIDIA/NVSentinel issue 155): the address is two lines up.
        let lines: Vec<String> = [
            "NVRM: The NVIDIA GPU 0000:b3:00.0",
            "NVRM: (PCI ID: 10de:26b5) installed in this system has",
            "NVRM: fallen off the bus and is not responding to commands.",
            "NVRM: The NVIDIA probe routine failed for 1 device(s).",
        ]
        .map(String::from)
        .to_vec();
        let x = xids(&lines);
        assert_eq!(x.len(), 1, "{x:?}");
        assert_eq!((x[0].code, x[0].pci.as_str()), (79, "0000:b3:00.0"));
        assert_eq!(pci_address("GPU at PCI:0000:0b:00: GPU-3e"), None, "no function number: not a full address");
        assert_eq!(pci_address("dev 0000:0B:00.0 x").as_deref(), Some("0000:0B:00.0"));
    }

    #[test]
    fn cuda_visible_devices_rules() {
        let g = vec![
            (0, "GPU-8932f937-aaaa".to_string()),
            (1, "GPU-1234abcd-bbbb".to_string()),
            (2, "GPU-77aa".to_string()),
        ];
        assert_eq!(cuda_visible("", &g).gpus, Vec::<u32>::new());
        assert_eq!(cuda_visible("0,2,-1,1", &g), Visible { gpus: vec![0, 2], cut_at: Some("-1".into()), mig: vec![] });
        assert_eq!(cuda_visible("GPU-8932f937,1", &g).gpus, vec![0, 1]);
        assert_eq!(cuda_visible("GPU-", &g).cut_at, Some("GPU-".into()), "ambiguous prefix matches nothing");
        assert_eq!(cuda_visible("5", &g).gpus, Vec::<u32>::new());
        assert_eq!(cuda_visible("NoDevFiles", &g).cut_at, Some("NoDevFiles".into()));
        assert_eq!(cuda_visible("2,0", &g).gpus, vec![2, 0], "order is CUDA's order");
    }
}
