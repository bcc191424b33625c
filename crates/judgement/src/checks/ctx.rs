//! [`Ctx`], what every check reads: the view, plus the facts several checks derive from it (NVIDIA's
//! PCI functions and their drivers, the loaded kernel modules, NVML's answers, the container, WSL,
//! the distribution), computed once per run.

use crate::diagnose::parse;
use crate::diagnose::system::{NvmlView, Platform, SystemView};
use crate::telemetry::sample::{GpuFacts, GpuSample};
use crate::telemetry::source::SourceStatus;

/// What the checks read: the view, plus the facts several of them derive from it, computed once
/// per run.
pub struct Ctx<'a> {
    /// This machine or a capture.
    pub(super) v: &'a dyn SystemView,
    /// NVIDIA GPUs on the PCI bus; `None` when the bus is not readable.
    pub(super) pci: Option<Vec<PciGpu>>,
    /// Loaded kernel modules; `None` when `/proc/modules` is not readable.
    pub(super) modules: Option<Vec<String>>,
    /// NVML's answers; `None` when not probed.
    pub(super) nvml: Option<&'a NvmlView>,
    /// The container kind, when running in one.
    pub(super) container: Option<String>,
    /// The WSL version, when running in WSL.
    pub(super) wsl: Option<u8>,
    /// The Linux distribution (from os-release), which decides the package commands of fixes.
    pub(super) distro: parse::Distro,
    /// The Python environments looked at (computed once; see `cuda::python_prefixes`).
    pub(super) python: std::sync::OnceLock<Vec<String>>,
}

impl<'a> Ctx<'a> {
    pub(super) fn new(v: &'a dyn SystemView) -> Self {
        Ctx {
            v,
            pci: pci_gpus(v),
            modules: v.read("/proc/modules").map(|t| parse::loaded_modules(&t)),
            nvml: v.meta().nvml.as_ref(),
            container: detect_container(v),
            wsl: detect_wsl(v),
            distro: detect_distro(v),
            python: std::sync::OnceLock::new(),
        }
    }
    pub(super) fn module(&self, m: &str) -> Option<bool> {
        self.modules.as_ref().map(|ms| ms.iter().any(|x| x == m))
    }
    pub(super) fn nvml_open(&self) -> bool {
        matches!(self.nvml.map(|n| &n.status), Some(SourceStatus::Nvml { .. }))
    }
    pub(super) fn nvml_gpus(&self) -> Vec<(u32, String)> {
        self.nvml
            .map(|n| n.inventory.gpus.iter().map(|g| (g.index, g.uuid.value().cloned().unwrap_or_default())).collect())
            .unwrap_or_default()
    }
    pub(super) fn env(&self, k: &str) -> Option<&str> {
        self.v.meta().env.get(k).map(String::as_str)
    }
    /// NVML's configuration and health facts per GPU (empty without NVML).
    pub(super) fn facts(&self) -> &'a [GpuFacts] {
        self.nvml.map(|n| n.facts.as_slice()).unwrap_or(&[])
    }
    /// NVML's sample per GPU (empty without NVML).
    pub(super) fn nvml_samples(&self) -> &'a [GpuSample] {
        self.nvml.map(|n| n.samples.as_slice()).unwrap_or(&[])
    }
}

/// An NVIDIA display-class PCI function and the kernel driver bound to it.
pub(crate) struct PciGpu {
    pub(crate) address: String,
    pub(crate) driver: Option<String>,
}

/// At most this many PCI functions are looked at.
const MAX_PCI_FUNCTIONS: usize = 4096;

/// The NVIDIA display-class functions of the view's PCI bus (`None` when it has no PCI listing).
pub(crate) fn pci_gpus(v: &dyn SystemView) -> Option<Vec<PciGpu>> {
    let base = "/sys/bus/pci/devices";
    let list = v.list(base)?;
    Some(
        // A real machine has at most a few hundred PCI functions; a capture claiming millions is
        // read only up to this bound, so the checks stay linear and quick.
        list.into_iter()
            .take(MAX_PCI_FUNCTIONS)
            .filter_map(|a| {
                let vendor = v.read(&format!("{base}/{a}/vendor"))?;
                let class = v.read(&format!("{base}/{a}/class"))?;
                let hex = |s: &str| u32::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok();
                (hex(&vendor)? == 0x10de && matches!(hex(&class)? >> 8, 0x0300 | 0x0302)).then(|| PciGpu {
                    driver: v
                        .link(&format!("{base}/{a}/driver"))
                        .and_then(|l| l.rsplit('/').next().map(str::to_string)),
                    address: a,
                })
            })
            .collect(),
    )
}

fn detect_container(v: &dyn SystemView) -> Option<String> {
    let env = &v.meta().env;
    if env.contains_key("KUBERNETES_SERVICE_HOST") {
        return Some("Kubernetes".into());
    }
    if v.exists("/run/.containerenv") || env.get("container").is_some_and(|c| c == "podman") {
        return Some("Podman".into());
    }
    if v.exists("/.dockerenv") {
        return Some("Docker".into());
    }
    // Apptainer (Singularity) marks its containers in the environment and keeps its own folder at
    // the root; with --nv it binds the driver's libraries into /.singularity.d/libs.
    if ["APPTAINER_CONTAINER", "SINGULARITY_CONTAINER"].iter().any(|k| env.contains_key(*k))
        || v.exists("/.singularity.d")
        || env.get("LD_LIBRARY_PATH").is_some_and(|p| p.split(':').any(|d| d.starts_with("/.singularity.d/")))
    {
        return Some("Apptainer".into());
    }
    let cg = v.read("/proc/1/cgroup").unwrap_or_default();
    if cg.contains("/docker/") {
        return Some("Docker".into());
    }
    if cg.contains("kubepods") {
        return Some("Kubernetes".into());
    }
    if cg.contains("libpod") {
        return Some("Podman".into());
    }
    if cg.contains("/lxc/") || cg.contains("/lxc.payload") {
        return Some("container (lxc)".into());
    }
    // systemd inside a container writes its kind here (systemd-detect-virt reads it): lxc,
    // systemd-nspawn, docker, podman …, also where the cgroup path says nothing (cgroup v2).
    let kind = v.read("/run/systemd/container").map(|k| k.trim().to_string()).filter(|k| !k.is_empty());
    match kind.as_deref().or(env.get("container").map(String::as_str)) {
        Some("docker") => Some("Docker".into()),
        Some("podman") => Some("Podman".into()),
        Some(k) => Some(format!("container ({k})")),
        None => None,
    }
}

/// The distribution from os-release (`/etc/os-release`, else `/usr/lib/os-release`, as
/// os-release(5) says), else from the name `/etc/issue` starts with (old bug-report scripts copy
/// only that: "Ubuntu 16.04.6 LTS \n \l"); `Unknown` on Windows and where neither says.
fn detect_distro(v: &dyn SystemView) -> parse::Distro {
    if v.meta().platform == Platform::Windows {
        return parse::Distro::Unknown;
    }
    if let Some(t) = v.read("/etc/os-release").or_else(|| v.read("/usr/lib/os-release")) {
        return parse::distro(&t);
    }
    let issue = v.read("/etc/issue").unwrap_or_default();
    let first = issue.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
    // The first word as an os-release ID ("Ubuntu", "Debian", "Fedora", "Arch"...).
    parse::distro(&format!("ID={}", first.trim_matches(|c: char| !c.is_ascii_alphanumeric())))
}

fn detect_wsl(v: &dyn SystemView) -> Option<u8> {
    let rel = v.read("/proc/sys/kernel/osrelease")?;
    if rel.contains("microsoft") || rel.contains("WSL2") {
        Some(2)
    } else if rel.contains("Microsoft") {
        Some(1)
    } else {
        None
    }
}
