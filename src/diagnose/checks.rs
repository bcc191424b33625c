//! The checks, in the method's order. Each reads only through [`SystemView`] and returns a
//! [`Check`]; rules, fix texts and sources are in ../shared/knowledge/checks.md (ids match).

use super::parse;
use super::view::{DeviceNode, KernelLog, NvmlView, SystemView};
use super::{Check, Layer, Verdict};
use crate::telemetry::sample::GpuHealth;
use crate::telemetry::source::SourceStatus;
use crate::telemetry::throttle;

/// The checks a check depends on: when one of them failed, this one is blocked by it.
pub fn depends_on(id: &str) -> &'static [&'static str] {
    match id {
        "HW-02" => &["HW-01", "DRV-04", "DRV-01"],
        "DRV-01" => &["HW-01", "DRV-04", "DRV-05"],
        "DRV-04" => &["HW-01"],
        "DRV-06" => &["DRV-01", "HW-01"],
        "DRV-08" => &["DRV-01", "HW-01", "DRV-06", "CONT-02", "WSL-01", "WSL-02", "PERM-02", "PERM-01"],
        "HW-03" => &["DRV-08", "DRV-06", "DRV-01"],
        "CUDA-01" => &["DRV-08", "DRV-06", "DRV-01"],
        "CUDA-LIB" => &["DRV-08", "DRV-06", "DRV-01", "CONT-02", "WSL-01", "WSL-02"],
        "CUDA-04" => &["CUDA-01", "DRV-08"],
        "CUDA-07" => &["DRV-08"],
        "CUDA-INIT" => &[
            "CUDA-LIB", "DRV-08", "DRV-06", "DRV-01", "PERM-01", "PERM-02", "CONT-02", "WSL-01", "WSL-02", "ENV-01",
            "ENV-03",
        ],
        "PERM-01" => &["DRV-01", "CONT-02"],
        "PERM-02" => &["PERM-01"],
        "WSL-02" => &["WSL-01"],
        "ENV-01" | "ENV-02" => &["DRV-08", "PERM-02"],
        "RT-XID" | "RT-LOST" | "RT-05" | "RT-04" | "RT-ECC" | "RT-03" | "RT-06" | "RT-07" | "RT-08" => &["DRV-08"],
        _ => &[],
    }
}

/// An NVIDIA display-class PCI function.
struct PciGpu {
    address: String,
    driver: Option<String>,
}

fn pci_gpus(v: &dyn SystemView) -> Option<Vec<PciGpu>> {
    let base = "/sys/bus/pci/devices";
    let list = v.list(base)?;
    Some(
        list.into_iter()
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

/// `00000000:01:00.0` and `0000:01:00.0` → `0000:01:00.0`.
fn norm_bus(id: &str) -> String {
    let id = id.to_ascii_lowercase();
    match id.split_once(':') {
        Some((dom, rest)) if dom.len() > 4 => format!("{}:{rest}", &dom[dom.len() - 4..]),
        _ => id,
    }
}

struct Ctx<'a> {
    v: &'a dyn SystemView,
    pci: Option<Vec<PciGpu>>,
    modules: Option<Vec<String>>,
    nvml: Option<&'a NvmlView>,
    container: Option<String>,
    wsl: Option<u8>,
}

impl Ctx<'_> {
    fn module(&self, m: &str) -> Option<bool> {
        self.modules.as_ref().map(|ms| ms.iter().any(|x| x == m))
    }
    fn nvml_open(&self) -> bool {
        matches!(self.nvml.map(|n| &n.status), Some(SourceStatus::Nvml { .. }))
    }
    fn nvml_gpus(&self) -> Vec<(u32, String)> {
        self.nvml
            .map(|n| n.inventory.gpus.iter().map(|g| (g.index, g.uuid.value().cloned().unwrap_or_default())).collect())
            .unwrap_or_default()
    }
    fn env(&self, k: &str) -> Option<&str> {
        self.v.meta().env.get(k).map(String::as_str)
    }
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
    env.get("container").map(|c| format!("container ({c})"))
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

/// Every check, in order.
pub fn all(v: &dyn SystemView) -> Vec<Check> {
    let cx = Ctx {
        v,
        pci: pci_gpus(v),
        modules: v.read("/proc/modules").map(|t| parse::loaded_modules(&t)),
        nvml: v.meta().nvml.as_ref(),
        container: detect_container(v),
        wsl: detect_wsl(v),
    };
    vec![
        hw_01(&cx),
        hw_02(&cx),
        drv_01(&cx),
        drv_02(&cx),
        drv_04(&cx),
        drv_05(&cx),
        drv_08(&cx),
        drv_06(&cx),
        hw_03(&cx),
        drv_09(&cx),
        drv_10(&cx),
        cuda_01(&cx),
        cuda_lib(&cx),
        cuda_init(&cx),
        cuda_04(&cx),
        cuda_07(&cx),
        cont_01(&cx),
        cont_02(&cx),
        perm_01(&cx),
        perm_02(&cx),
        wsl_01(&cx),
        wsl_02(&cx),
        wsl_08(&cx),
        env_01(&cx),
        env_02(&cx),
        env_03(&cx),
        rt_lost(&cx),
        rt_03(&cx),
        rt_xid(&cx),
        rt_05(&cx),
        rt_04(&cx),
        rt_ecc(&cx),
        rt_08(&cx),
        rt_06(&cx),
        rt_07(&cx),
        win_02(&cx),
        win_01(&cx),
        win_04(&cx),
        win_03(&cx),
    ]
}

const MISSING: &str = "skipped: evidence missing";

fn hw_01(cx: &Ctx) -> Check {
    let c = Check::new("HW-01", Layer::Hardware, "NVIDIA GPU on the PCI bus");
    let Some(pci) = &cx.pci else {
        if cx.wsl.is_some() {
            return c
                .verdict(Verdict::Info, "WSL has no PCI view of the GPU; the Windows driver provides it")
                .evidence("/sys/bus/pci/devices: not present");
        }
        return c.verdict(Verdict::Skipped, MISSING).evidence("/sys/bus/pci/devices: not readable");
    };
    if pci.is_empty() {
        if cx.container.is_some() || cx.wsl.is_some() {
            return c
                .verdict(Verdict::Info, "no NVIDIA PCI function visible here (normal in containers and WSL)")
                .evidence("/sys/bus/pci/devices: no vendor 0x10de display functions");
        }
        return c
            .verdict(Verdict::Fail, "no NVIDIA GPU is visible on the PCI bus")
            .explain("Nothing else can work until the system sees the card.")
            .evidence("/sys/bus/pci/devices: no vendor 0x10de, class 0x0300/0x0302 function")
            .fix("Check the card is seated and powered (PCIe power cables) and enabled in the BIOS/UEFI; in a VM, pass the GPU through to this VM.");
    }
    let mut c = c.verdict(
        Verdict::Pass,
        format!(
            "{} NVIDIA GPU(s): {}",
            pci.len(),
            pci.iter().map(|g| g.address.as_str()).collect::<Vec<_>>().join(", ")
        ),
    );
    for g in pci {
        c = c.evidence(format!("/sys/bus/pci/devices/{}: vendor 0x10de, display class", g.address));
    }
    c
}

fn hw_02(cx: &Ctx) -> Check {
    let c = Check::new("HW-02", Layer::Hardware, "Kernel driver bound to each GPU");
    let Some(pci) = cx.pci.as_ref().filter(|p| !p.is_empty()) else {
        return c.verdict(Verdict::Skipped, "no NVIDIA PCI function to look at");
    };
    let mut worst = Verdict::Pass;
    let mut c = c;
    let mut fixes = Vec::new();
    for g in pci {
        let d = g.driver.as_deref().unwrap_or("none");
        c = c.evidence(format!("{}: driver {d}", g.address));
        let v = match d {
            "nvidia" => Verdict::Pass,
            "vfio-pci" | "pci-stub" => {
                fixes.push(format!("GPU {} is reserved for VM passthrough ({d}); if that is not intended, remove the vfio/driver_override configuration and reboot.", g.address));
                Verdict::Warn
            }
            "nouveau" => {
                fixes.push("Blacklist nouveau: echo -e 'blacklist nouveau\\noptions nouveau modeset=0' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf && sudo update-initramfs -u (Fedora/RHEL: sudo dracut --force), then reboot".to_string());
                Verdict::Fail
            }
            _ => {
                fixes.push(format!("GPU {} has no driver bound: install the NVIDIA driver, or load it with `sudo modprobe nvidia` and read the error.", g.address));
                Verdict::Fail
            }
        };
        worst = worst.max(v);
    }
    let summary = match worst {
        Verdict::Pass => "every GPU is bound to the nvidia driver".to_string(),
        _ => format!(
            "not every GPU is bound to the nvidia driver ({})",
            pci.iter()
                .map(|g| format!("{}: {}", g.address, g.driver.as_deref().unwrap_or("none")))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut c = c.verdict(worst, summary);
    fixes.dedup();
    c.fixes = fixes;
    c
}

fn drv_01(cx: &Ctx) -> Check {
    let c = Check::new("DRV-01", Layer::Driver, "NVIDIA kernel module loaded");
    if cx.wsl.is_some() {
        return c.verdict(Verdict::Skipped, "not applicable in WSL: the Windows driver serves the GPU");
    }
    match cx.module("nvidia") {
        None => {
            if cx.container.is_some() {
                c.verdict(Verdict::Skipped, "the host's kernel modules are not visible from this container")
            } else {
                c.verdict(Verdict::Skipped, MISSING).evidence("/proc/modules: not readable")
            }
        }
        Some(true) => {
            let others: Vec<&str> = ["nvidia_uvm", "nvidia_modeset", "nvidia_drm"].into_iter().filter(|m| cx.module(m) == Some(true)).collect();
            c.verdict(Verdict::Pass, "nvidia is loaded").evidence(format!("/proc/modules: nvidia{}", others.iter().map(|m| format!(", {m}")).collect::<String>()))
        }
        Some(false) if cx.container.is_some() => c.verdict(Verdict::Info, "no nvidia module listed (the host's modules may not be visible here)"),
        Some(false) if no_driver_installed(cx) => c
            .verdict(Verdict::Fail, "no NVIDIA driver is installed: neither the kernel module nor its libraries are present")
            .evidence("/proc/modules: no nvidia; /proc/driver/nvidia: absent; libnvidia-ml.so.1: not found")
            .fix("Ubuntu/Debian: sudo ubuntu-drivers install   (or: sudo apt install nvidia-driver-<branch>)")
            .fix("Fedora: enable RPM Fusion, then sudo dnf install akmod-nvidia; others: your distribution's NVIDIA driver package, or NVIDIA's installer")
            .fix("Reboot after installing."),
        Some(false) => c
            .verdict(Verdict::Fail, "the NVIDIA kernel module is not loaded")
            .explain("Common causes: the driver is not built for the running kernel (after a kernel update), Secure Boot rejected the module, or nouveau holds the GPU.")
            .evidence("/proc/modules: no line starting with nvidia")
            .fix("sudo modprobe nvidia   # read the error it prints")
            .fix("After a kernel update: install the headers for this kernel and rebuild the module (sudo dkms autoinstall), or reinstall the driver package, then reboot."),
    }
}

/// Neither the module nor the NVML library exists (as opposed to an installed driver that fails).
fn no_driver_installed(cx: &Ctx) -> bool {
    let lib = cx.v.meta().libraries.iter().any(|l| l.name == "libnvidia-ml.so.1");
    !lib && !cx.v.exists("/proc/driver/nvidia/version")
        && matches!(cx.nvml.map(|n| &n.status), Some(SourceStatus::Unavailable(_)) | None)
}

fn drv_02(cx: &Ctx) -> Check {
    let c = Check::new("DRV-02", Layer::Driver, "Kernel module version");
    if cx.wsl.is_some() {
        return c.verdict(Verdict::Skipped, "not applicable in WSL");
    }
    match cx.v.read("/proc/driver/nvidia/version").and_then(|t| parse::driver_version(&t)) {
        Some((ver, open)) => c
            .verdict(Verdict::Info, format!("{ver} ({} kernel module)", if open { "open" } else { "proprietary" }))
            .evidence(format!("/proc/driver/nvidia/version: {ver}")),
        None => c.verdict(Verdict::Skipped, "no /proc/driver/nvidia/version (module not loaded, or not visible here)"),
    }
}

fn drv_04(cx: &Ctx) -> Check {
    let c = Check::new("DRV-04", Layer::Driver, "nouveau not holding the GPU");
    let bound = cx.pci.as_ref().is_some_and(|p| p.iter().any(|g| g.driver.as_deref() == Some("nouveau")));
    match (bound, cx.module("nouveau")) {
        (true, _) => c
            .verdict(Verdict::Fail, "the open-source nouveau driver has taken the GPU, so the NVIDIA driver cannot")
            .evidence("a GPU's driver link points to nouveau")
            .fix("echo -e 'blacklist nouveau\\noptions nouveau modeset=0' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf")
            .fix("sudo update-initramfs -u   # Fedora/RHEL/openSUSE: sudo dracut --force")
            .fix("sudo reboot"),
        (false, Some(true)) => c.verdict(Verdict::Warn, "nouveau is loaded but not bound to an NVIDIA GPU").evidence("/proc/modules: nouveau"),
        (false, Some(false)) => c.verdict(Verdict::Pass, "nouveau is not loaded"),
        (false, None) => c.verdict(Verdict::Skipped, MISSING),
    }
}

fn drv_05(cx: &Ctx) -> Check {
    let c = Check::new("DRV-05", Layer::Driver, "Secure Boot and the kernel module");
    if cx.wsl.is_some() || cx.container.is_some() {
        return c.verdict(Verdict::Skipped, "decided by the host");
    }
    let sb =
        cx.v.read_bytes("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c")
            .and_then(|b| parse::secure_boot(&b));
    let efi = cx.v.exists("/sys/firmware/efi");
    let loaded = cx.module("nvidia");
    let log_rejected = match &cx.v.meta().kernel_log {
        KernelLog::Lines(l) => l.iter().any(|x| {
            x.contains("Key was rejected")
                || x.contains("Required key not available")
                || x.contains("module verification failed")
        }),
        KernelLog::Unreadable(_) => false,
    };
    match (sb, loaded) {
        (Some(true), Some(false)) => c
            .verdict(Verdict::Fail, "Secure Boot is on and the NVIDIA module is not loaded: the firmware only accepts signed modules")
            .evidence("efivars SecureBoot: enabled")
            .evidence(if log_rejected { "kernel log: module key rejected" } else { "kernel log: no explicit rejection line found" })
            .fix("Install the driver from your distribution's signed packages (Ubuntu: Software & Updates > Additional Drivers, or `sudo ubuntu-drivers install`).")
            .fix("Or enroll the DKMS signing key: sudo mokutil --import /var/lib/shim-signed/mok/MOK.der, reboot and finish the blue 'MOK management' screen.")
            .fix("Or disable Secure Boot in the firmware settings."),
        (Some(true), _) => c.verdict(Verdict::Pass, "Secure Boot is on and the module is loaded (it is signed with a trusted key)").evidence("efivars SecureBoot: enabled"),
        (Some(false), _) => c.verdict(Verdict::Pass, "Secure Boot is off").evidence("efivars SecureBoot: disabled"),
        (None, _) if !efi && cx.v.exists("/sys/bus/pci/devices") => {
            c.verdict(Verdict::Pass, "legacy BIOS boot: no Secure Boot").evidence("/sys/firmware/efi: absent")
        }
        (None, _) => c.verdict(Verdict::Skipped, MISSING),
    }
}

fn drv_08(cx: &Ctx) -> Check {
    let c = Check::new("DRV-08", Layer::Driver, "NVML (the driver's management library) loads");
    let Some(n) = cx.nvml else {
        return c.verdict(Verdict::Skipped, MISSING);
    };
    match &n.status {
        SourceStatus::Nvml { library, attempts } => {
            let mut c = c.verdict(Verdict::Pass, format!("loaded {library}; {} GPU(s)", n.inventory.gpus.len()));
            for a in attempts {
                c = c.evidence(format!("{}: {}", a.path, a.error));
            }
            c.evidence(format!("{library}: loaded"))
        }
        SourceStatus::Unavailable(no) => {
            let mut c = c.verdict(Verdict::Fail, no.summary.clone()).fix(no.next_step.clone());
            for a in &no.attempts {
                c = c.evidence(format!("{}: {}", a.path, a.error));
            }
            c
        }
        SourceStatus::Asleep { functions } => c.verdict(
            Verdict::Info,
            format!("not opened: the GPU is asleep (runtime-suspended: {})", functions.join(", ")),
        ),
        SourceStatus::Opening | SourceStatus::Demo { .. } | SourceStatus::Replay { .. } => {
            c.verdict(Verdict::Skipped, "not probed")
        }
    }
}

fn drv_06(cx: &Ctx) -> Check {
    let c = Check::new("DRV-06", Layer::Driver, "Kernel module and libraries have the same version");
    let kernel = cx.v.read("/proc/driver/nvidia/version").and_then(|t| parse::driver_version(&t)).map(|x| x.0);
    let lib = cx.v.meta().libraries.iter().find(|l| l.name == "libnvidia-ml.so.1");
    let lib_ver = lib.and_then(|l| parse::library_version(&l.real_path));
    let nvml_says = matches!(cx.nvml.map(|n| &n.status), Some(SourceStatus::Unavailable(no)) if no.summary.contains("different versions"));
    let mismatch_fix = "Reboot (or unload and reload the nvidia kernel modules) so the kernel module and the libraries run the same version.";
    match (&kernel, &lib_ver) {
        (Some(k), Some(l)) if k != l => c
            .verdict(Verdict::Fail, format!("the driver was updated: kernel module {k}, libraries {l}"))
            .explain("The libraries on disk were updated but the old kernel module is still running.")
            .evidence(format!("/proc/driver/nvidia/version: {k}"))
            .evidence(format!("{}: {l}", lib.map(|x| x.real_path.as_str()).unwrap_or("")))
            .fix(mismatch_fix),
        _ if nvml_says => c
            .verdict(Verdict::Fail, "NVML reports a driver/library version mismatch: the driver was updated")
            .evidence("nvmlInit: LIB_RM_VERSION_MISMATCH")
            .fix(mismatch_fix),
        (Some(k), Some(_)) => c.verdict(Verdict::Pass, format!("both {k}")),
        (Some(k), None) => {
            c.verdict(Verdict::Info, format!("kernel module {k}; the library's version is not in its file name"))
        }
        (None, _) => {
            c.verdict(Verdict::Skipped, "no kernel module version to compare (module not loaded, WSL or container)")
        }
    }
}

fn hw_03(cx: &Ctx) -> Check {
    let c = Check::new("HW-03", Layer::Hardware, "NVML sees every PCI GPU");
    let (Some(pci), true) = (cx.pci.as_ref().filter(|p| !p.is_empty()), cx.nvml_open()) else {
        return c.verdict(Verdict::Skipped, "needs both the PCI list and NVML");
    };
    let nvml_ids: Vec<String> = cx
        .nvml
        .map(|n| n.inventory.gpus.iter().filter_map(|g| g.pci_bus_id.value().map(|b| norm_bus(b))).collect())
        .unwrap_or_default();
    let missing: Vec<&str> =
        pci.iter().filter(|g| !nvml_ids.contains(&norm_bus(&g.address))).map(|g| g.address.as_str()).collect();
    let c = c
        .evidence(format!("PCI: {}", pci.iter().map(|g| g.address.as_str()).collect::<Vec<_>>().join(", ")))
        .evidence(format!("NVML: {}", nvml_ids.join(", ")));
    if missing.is_empty() {
        c.verdict(Verdict::Pass, format!("all {} GPU(s) managed by the driver", pci.len()))
    } else if nvml_ids.is_empty() {
        c.verdict(Verdict::Fail, "the driver manages none of the PCI GPUs")
            .fix("Look at the kernel log for these addresses (sudo dmesg | grep -i -e nvrm -e xid): 'RmInitAdapter failed', Xid 79, or 'probe routine was not called'.")
    } else {
        c.verdict(Verdict::Warn, format!("NVML does not see {}", missing.join(", ")))
            .fix("Look at the kernel log for that address (sudo dmesg | grep -i -e nvrm -e xid), check it is not bound to another driver, and reseat or power-check the card.")
    }
}

fn drv_09(cx: &Ctx) -> Check {
    let c = Check::new("DRV-09", Layer::Driver, "Persistence daemon");
    if cx.wsl.is_some() || cx.container.is_some() || cx.module("nvidia") != Some(true) {
        return c.verdict(Verdict::Skipped, "Linux host with the driver loaded only");
    }
    let modes: Vec<(u32, bool)> = cx
        .nvml
        .map(|n| n.facts.iter().filter_map(|f| f.persistence.value().map(|p| (f.index, *p))).collect())
        .unwrap_or_default();
    if !modes.is_empty() {
        let on = modes.iter().filter(|m| m.1).count();
        return if on == modes.len() {
            c.verdict(Verdict::Info, "persistence mode is on: the driver stays initialised between jobs")
        } else {
            c.verdict(Verdict::Info, format!("persistence mode is off on {} GPU(s): each first use re-initialises the driver (slower start; on headless servers, turn it on)", modes.len() - on))
                .fix("sudo systemctl enable --now nvidia-persistenced")
        };
    }
    if cx.v.exists("/run/nvidia-persistenced/socket") || cx.v.exists("/var/run/nvidia-persistenced/socket") {
        c.verdict(Verdict::Info, "nvidia-persistenced is running (the driver stays initialised between jobs)")
    } else {
        c.verdict(Verdict::Info, "nvidia-persistenced is not running: each first use re-initialises the driver (slower start; on headless servers, enable it)")
            .fix("sudo systemctl enable --now nvidia-persistenced")
    }
}

fn drv_10(cx: &Ctx) -> Check {
    let c = Check::new("DRV-10", Layer::Driver, "Kernel module flavour fits the GPU generation");
    let flavour = cx.v.read("/proc/driver/nvidia/version").and_then(|t| parse::driver_version(&t)).map(|x| x.1);
    let ccs: Vec<(u32, f64)> = cx
        .nvml
        .map(|n| {
            n.inventory
                .gpus
                .iter()
                .filter_map(|g| g.compute_capability.value().and_then(|c| c.parse().ok()).map(|v| (g.index, v)))
                .collect()
        })
        .unwrap_or_default();
    let (Some(open), false) = (flavour, ccs.is_empty()) else {
        return c.verdict(Verdict::Skipped, "needs the module flavour and the GPUs' compute capability");
    };
    let old: Vec<String> = ccs.iter().filter(|(_, cc)| *cc < 7.5).map(|(i, cc)| format!("GPU {i} ({cc:.1})")).collect();
    let new: Vec<String> =
        ccs.iter().filter(|(_, cc)| *cc >= 10.0).map(|(i, cc)| format!("GPU {i} ({cc:.1})")).collect();
    if open && !old.is_empty() {
        c.verdict(Verdict::Fail, format!("the open kernel modules do not support GPUs older than Turing: {}", old.join(", ")))
            .fix("Install the proprietary kernel-module flavour of the driver (Maxwell to Volta: the R580 legacy branch for future updates).")
    } else if !open && !new.is_empty() {
        c.verdict(Verdict::Fail, format!("Blackwell GPUs need the open kernel modules: {}", new.join(", ")))
            .fix("Install the open kernel-module flavour (e.g. Ubuntu: nvidia-driver-<branch>-open; NVIDIA installer: -m=kernel-open).")
    } else {
        c.verdict(Verdict::Pass, format!("{} kernel module suits every GPU", if open { "open" } else { "proprietary" }))
    }
}

fn driver_cuda(cx: &Ctx) -> Option<String> {
    cx.nvml.and_then(|n| n.inventory.cuda_driver_version.as_ref()).and_then(|r| r.value().cloned())
}

fn cuda_01(cx: &Ctx) -> Check {
    let c = Check::new("CUDA-01", Layer::Cuda, "Newest CUDA the driver supports");
    match driver_cuda(cx) {
        Some(v) => c
            .verdict(Verdict::Info, format!("CUDA {v}"))
            .explain("This is what nvidia-smi shows as 'CUDA Version': the newest CUDA the driver runs, not an installed toolkit (`nvcc --version` shows that)."),
        None => c.verdict(Verdict::Skipped, "NVML did not report it"),
    }
}

fn cuda_lib(cx: &Ctx) -> Check {
    let c = Check::new("CUDA-LIB", Layer::Cuda, "CUDA driver library (libcuda.so.1) present");
    match cx.v.meta().libraries.iter().find(|l| l.name == "libcuda.so.1") {
        Some(l) => c.verdict(Verdict::Pass, format!("found {}", l.path)).evidence(format!("{} -> {} (via {})", l.path, l.real_path, l.via)),
        None if cx.v.meta().platform == "windows" => c.verdict(Verdict::Skipped, "Windows: nvcuda.dll"),
        None => c
            .verdict(Verdict::Fail, "libcuda.so.1 was not found in the library path")
            .explain("CUDA programs load the driver's libcuda.so.1; without it nothing can use the GPU.")
            .fix("Install the driver's CUDA library (Ubuntu: libnvidia-compute-<branch>; it comes with the full nvidia-driver-<branch> package). In a container: start it with --gpus all so the toolkit mounts it."),
    }
}

/// The CUresult names and meanings `cuInit` returns in practice (also used by the smoke test).
pub(crate) fn cu_result(code: i32) -> (&'static str, &'static str) {
    match code {
        0 => ("CUDA_SUCCESS", ""),
        2 => (
            "CUDA_ERROR_OUT_OF_MEMORY",
            "The GPU has no memory left to create the driver's context; close other GPU programs.",
        ),
        3 => ("CUDA_ERROR_NOT_INITIALIZED", "The driver did not initialise; see the kernel log."),
        34 => (
            "CUDA_ERROR_STUB_LIBRARY",
            "The CUDA toolkit's stub libcuda was loaded instead of the driver's; remove the stubs directory from LD_LIBRARY_PATH.",
        ),
        46 => ("CUDA_ERROR_DEVICE_UNAVAILABLE", "The GPU is busy or set to an exclusive/prohibited compute mode."),
        100 => (
            "CUDA_ERROR_NO_DEVICE",
            "CUDA sees no GPU: the driver is not running, the device files are missing or not accessible, or CUDA_VISIBLE_DEVICES hides every GPU.",
        ),
        304 => ("CUDA_ERROR_OPERATING_SYSTEM", "The operating system or container runtime blocked the GPU."),
        803 => (
            "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
            "The driver was updated but the old kernel module still runs (or a forward-compatibility libcuda does not match it); reboot.",
        ),
        804 => (
            "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
            "A forward-compatibility libcuda is loaded on a GPU that does not support it; remove /usr/local/cuda/compat from the library path.",
        ),
        999 => (
            "CUDA_ERROR_UNKNOWN",
            "Often /dev/nvidia-uvm is missing or broken (e.g. after suspend): sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm.",
        ),
        _ => ("CUDA error", "See the CUDA driver API error list for this number."),
    }
}

fn cuda_init(cx: &Ctx) -> Check {
    let c = Check::new("CUDA-INIT", Layer::Cuda, "CUDA driver initialises (cuInit)");
    let Some(p) = &cx.v.meta().cuda else {
        return c.verdict(Verdict::Skipped, "not probed (a sleeping GPU is left asleep)");
    };
    let Some(lib) = &p.library else {
        return c
            .verdict(Verdict::Fail, "no CUDA driver library could be loaded")
            .evidence(p.load_error.clone().unwrap_or_default())
            .fix("Install the NVIDIA driver (it provides libcuda.so.1 / nvcuda.dll); in a container start it with --gpus all; in WSL keep /usr/lib/wsl/lib on the library path.");
    };
    let c = c.evidence(format!("{lib}: cuInit = {}", p.init_code.map_or("not called".to_string(), |x| x.to_string())));
    match p.init_code {
        Some(0) => c.verdict(
            Verdict::Pass,
            format!(
                "CUDA driver API {} sees {} device(s)",
                p.driver_version.as_deref().unwrap_or("?"),
                p.devices.map_or("?".to_string(), |d| d.to_string())
            ),
        ),
        Some(code) => {
            let (name, next) = cu_result(code);
            c.verdict(Verdict::Fail, format!("cuInit failed with {name} ({code})")).fix(next)
        }
        None => c.verdict(Verdict::Fail, format!("{lib} has no cuInit: not a CUDA driver library")),
    }
}

/// Python environments' `torch/version.py` files.
fn torch_installs(cx: &Ctx) -> Vec<String> {
    let mut prefixes: Vec<String> = Vec::new();
    for k in ["CONDA_PREFIX", "VIRTUAL_ENV"] {
        if let Some(p) = cx.env(k) {
            prefixes.push(p.to_string());
        }
    }
    let homes: Vec<String> =
        cx.v.list("/home")
            .unwrap_or_default()
            .into_iter()
            .map(|h| format!("/home/{h}"))
            .chain(["/root".to_string()])
            .collect();
    for h in &homes {
        prefixes.push(format!("{h}/.local"));
        prefixes.push(format!("{h}/.venv"));
        for conda in ["miniconda3", "anaconda3", "miniforge3", "mambaforge"] {
            prefixes.push(format!("{h}/{conda}"));
            for env in cx.v.list(&format!("{h}/{conda}/envs")).unwrap_or_default() {
                prefixes.push(format!("{h}/{conda}/envs/{env}"));
            }
        }
    }
    prefixes.extend(["/usr", "/usr/local", "/opt/conda"].map(String::from));
    let mut out = Vec::new();
    for p in prefixes {
        for py in cx.v.list(&format!("{p}/lib")).unwrap_or_default().into_iter().filter(|d| d.starts_with("python3")) {
            for sp in ["site-packages", "dist-packages"] {
                let f = format!("{p}/lib/{py}/{sp}/torch/version.py");
                if cx.v.exists(&f) && !out.contains(&f) {
                    out.push(f);
                }
            }
        }
    }
    out
}

fn cuda_04(cx: &Ctx) -> Check {
    let c = Check::new("CUDA-04", Layer::Cuda, "PyTorch builds vs the driver");
    let installs = torch_installs(cx);
    if installs.is_empty() {
        return c.verdict(Verdict::Skipped, "no PyTorch install found in the Python environments looked at");
    }
    let driver = driver_cuda(cx);
    let mut worst = Verdict::Pass;
    let mut notes = Vec::new();
    let mut c = c;
    for f in &installs {
        let text = cx.v.read(f).unwrap_or_default();
        let ver = parse::torch_version(&text).unwrap_or_else(|| "?".into());
        let (v, note) = match (parse::torch_cuda(&text), &driver) {
            (None, _) => (Verdict::Skipped, format!("{f}: torch {ver}, no cuda line")),
            (Some(None), _) => (Verdict::Warn, format!("torch {ver} is a CPU-only build ({f}): it never uses the GPU")),
            (Some(Some(tc)), Some(dc)) => {
                let major = |s: &str| s.split('.').next().and_then(|m| m.parse::<u32>().ok()).unwrap_or(0);
                match parse::cmp_version(dc, &tc) {
                    std::cmp::Ordering::Less if major(dc) < major(&tc) => (
                        Verdict::Fail,
                        format!(
                            "torch {ver} needs CUDA {tc}, but the driver supports only CUDA {dc} (older major version)"
                        ),
                    ),
                    std::cmp::Ordering::Less => (
                        Verdict::Warn,
                        format!(
                            "torch {ver} is built for CUDA {tc}, newer than the driver's CUDA {dc}: it runs in minor-version compatibility with a limited feature set"
                        ),
                    ),
                    _ => (Verdict::Pass, format!("torch {ver} (CUDA {tc}) runs on this driver (CUDA {dc})")),
                }
            }
            (Some(Some(tc)), None) => {
                (Verdict::Info, format!("torch {ver} built for CUDA {tc}; the driver's CUDA version is unknown"))
            }
        };
        worst = worst.max(v);
        c = c.evidence(format!("{f}: {}", note));
        notes.push(note);
    }
    let mut c = c.verdict(worst, notes.join("; "));
    if worst == Verdict::Fail {
        let need = notes
            .iter()
            .find_map(|n| n.split("needs CUDA ").nth(1).and_then(|r| r.split(',').next()))
            .unwrap_or("")
            .to_string();
        let min = parse::cuda_min_driver(&need)
            .map(|(l, w)| format!("Linux >= {l}{}", w.map(|w| format!(", Windows >= {w}")).unwrap_or_default()))
            .unwrap_or_default();
        c = c.explain(format!("PyTorch ships its own CUDA runtime, which needs a driver at least as new as that CUDA version ({min}).")).fix(format!("Update the NVIDIA driver ({min}), or install a PyTorch build for the driver's CUDA, e.g. pip install torch --index-url https://download.pytorch.org/whl/cu{}", driver_cuda(cx).unwrap_or_default().replace('.', "")));
    } else if worst == Verdict::Warn && notes.iter().any(|n| n.contains("CPU-only")) {
        c = c.fix("Install a CUDA build of PyTorch (pick the CUDA version at pytorch.org/get-started; it must not be newer than the driver's CUDA version shown by CUDA-01).");
    }
    c
}

fn cuda_07(cx: &Ctx) -> Check {
    let c = Check::new("CUDA-07", Layer::Cuda, "GPU architecture supported by the PyTorch builds");
    let installs = torch_installs(cx);
    let gpus: Vec<(u32, String, f64)> = cx
        .nvml
        .map(|n| {
            n.inventory
                .gpus
                .iter()
                .filter_map(|g| {
                    g.compute_capability
                        .value()
                        .and_then(|cc| cc.parse::<f64>().ok().map(|v| (g.index, g.name.clone(), v)))
                })
                .collect()
        })
        .unwrap_or_default();
    if installs.is_empty() || gpus.is_empty() {
        return c.verdict(Verdict::Skipped, "needs a PyTorch install and the GPUs' compute capability");
    }
    let mut c = c;
    let mut worst = Verdict::Pass;
    for f in &installs {
        let text = cx.v.read(f).unwrap_or_default();
        let (Some(ver), Some(Some(cuda))) = (parse::torch_version(&text), parse::torch_cuda(&text)) else { continue };
        let (min_cc, blackwell) = parse::torch_arch_support(&ver, &cuda);
        for (i, name, cc) in &gpus {
            let (v, note) = if *cc < min_cc {
                (
                    Verdict::Fail,
                    format!(
                        "torch {ver} has no kernels for GPU {i} ({name}, compute capability {cc:.1}; this build needs {min_cc:.1} or newer)"
                    ),
                )
            } else if *cc >= 10.0 && !blackwell {
                (
                    Verdict::Fail,
                    format!(
                        "torch {ver} (CUDA {cuda}) predates GPU {i} ({name}, compute capability {cc:.1}): 'no kernel image is available'; use a CUDA 12.8+ build"
                    ),
                )
            } else {
                (Verdict::Pass, format!("torch {ver} runs on GPU {i} (compute capability {cc:.1})"))
            };
            worst = worst.max(v);
            c = c.evidence(note);
        }
    }
    let summary = if worst == Verdict::Pass {
        "every GPU is covered by the PyTorch builds found".to_string()
    } else {
        c.evidence.iter().find(|e| e.contains("no kernel")).cloned().unwrap_or_default()
    };
    let c = c.verdict(worst, summary);
    if worst == Verdict::Fail {
        c.fix("Install a PyTorch build whose CUDA version covers this GPU (Blackwell: cu128 or newer; Maxwell/Pascal: cu126 or older), not newer than the driver's CUDA version.")
    } else {
        c
    }
}

fn cont_01(cx: &Ctx) -> Check {
    let c = Check::new("CONT-01", Layer::Containers, "Running in a container");
    match &cx.container {
        Some(k) => c.verdict(Verdict::Info, format!("yes: {k}")).explain("Process lists from NVML show host PIDs; inside a container they match nothing here unless it runs with --pid=host."),
        None => c.verdict(Verdict::Pass, "no container detected"),
    }
}

fn cont_02(cx: &Ctx) -> Check {
    let c = Check::new("CONT-02", Layer::Containers, "GPUs passed into the container");
    let Some(kind) = &cx.container else {
        return c.verdict(Verdict::Skipped, "not in a container");
    };
    let nodes = &cx.v.meta().device_nodes;
    let ctl = nodes.iter().any(|n| n.path == "/dev/nvidiactl");
    let gpus = nodes.iter().filter(|n| is_gpu_node(&n.path)).count();
    let visible = cx.env("NVIDIA_VISIBLE_DEVICES");
    let c = c
        .evidence(format!("NVIDIA_VISIBLE_DEVICES={}", visible.unwrap_or("(unset)")))
        .evidence(format!("/dev/nvidiactl {}, {gpus} /dev/nvidiaN node(s)", if ctl { "present" } else { "missing" }));
    if ctl && gpus > 0 {
        return c.verdict(Verdict::Pass, format!("{gpus} GPU device node(s) present"));
    }
    let why = match visible.map(str::trim) {
        Some("none") => "NVIDIA_VISIBLE_DEVICES=none asks the NVIDIA runtime for the driver libraries but no GPU.".to_string(),
        Some("void") | Some("") => "NVIDIA_VISIBLE_DEVICES is empty or 'void': the NVIDIA runtime injects nothing.".to_string(),
        _ => "NVIDIA_VISIBLE_DEVICES alone proves nothing (CUDA base images set it to 'all'); the container must be started with GPUs so the runtime injects the device nodes and driver libraries.".to_string(),
    };
    let c = c.verdict(Verdict::Fail, format!("no GPU was passed into this {kind} container")).explain(why);
    match kind.as_str() {
        "Kubernetes" => c.fix("Request GPUs in the pod spec: resources: { limits: { nvidia.com/gpu: 1 } }; the node needs the NVIDIA device plugin or GPU Operator."),
        "Podman" => c.fix("podman run --device nvidia.com/gpu=all ...   (after: sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml)"),
        _ => c.fix("docker run --gpus all ...   (the host needs the NVIDIA Container Toolkit: sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker)"),
    }
}

fn is_gpu_node(p: &str) -> bool {
    p.strip_prefix("/dev/nvidia").is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// Can `user` read and write `node`?
fn can_open(user: &super::view::UserInfo, n: &DeviceNode) -> bool {
    if user.uid == 0 {
        return true;
    }
    let bits = if user.uid == n.uid {
        n.mode >> 6
    } else if user.groups.iter().any(|(g, _)| *g == n.gid) {
        n.mode >> 3
    } else {
        n.mode
    } & 0o7;
    bits & 0o6 == 0o6
}

fn perm_01(cx: &Ctx) -> Check {
    let c = Check::new("PERM-01", Layer::Permissions, "GPU device files present");
    if cx.wsl.is_some() {
        return c.verdict(Verdict::Skipped, "WSL uses /dev/dxg instead");
    }
    if cx.v.meta().platform == "windows" {
        return c.verdict(Verdict::Skipped, "Linux only");
    }
    let nodes = &cx.v.meta().device_nodes;
    let has = |p: &str| nodes.iter().any(|n| n.path == p);
    let gpus = nodes.iter().filter(|n| is_gpu_node(&n.path)).count();
    let expected =
        cx.nvml.map(|n| n.inventory.gpus.len()).filter(|n| *n > 0).or(cx.pci.as_ref().map(Vec::len)).unwrap_or(0);
    let mut c = c;
    for n in nodes {
        c = c.evidence(format!(
            "{}: {} {},{} mode {:o} uid {} gid {}",
            n.path,
            if n.char_device { "char" } else { "not a char device" },
            n.major,
            n.minor,
            n.mode,
            n.uid,
            n.gid
        ));
    }
    if !has("/dev/nvidiactl") || gpus == 0 {
        return c
            .verdict(Verdict::Fail, "/dev/nvidiactl or /dev/nvidiaN is missing")
            .fix("sudo nvidia-modprobe   # or: sudo modprobe nvidia; the driver creates the nodes when it loads")
            .fix("If the module loads but nodes stay missing, check udev rules and /proc/driver/nvidia/params (ModifyDeviceFiles).");
    }
    if !has("/dev/nvidia-uvm") {
        return c
            .verdict(Verdict::Fail, "/dev/nvidia-uvm is missing: CUDA cannot start (torch.cuda.is_available() is False, 'CUDA unknown error')")
            .fix("sudo modprobe nvidia-uvm && sudo nvidia-modprobe -u -c=0");
    }
    if expected > gpus {
        return c.verdict(Verdict::Warn, format!("{gpus} /dev/nvidiaN node(s) for {expected} GPU(s)"));
    }
    c.verdict(Verdict::Pass, format!("/dev/nvidiactl, /dev/nvidia-uvm and {gpus} GPU node(s)"))
}

fn perm_02(cx: &Ctx) -> Check {
    let c = Check::new("PERM-02", Layer::Permissions, "This user can open the GPU device files");
    if cx.wsl.is_some() || cx.v.meta().platform == "windows" {
        return c.verdict(Verdict::Skipped, "Linux device files only");
    }
    let m = cx.v.meta();
    let relevant: Vec<&DeviceNode> = m
        .device_nodes
        .iter()
        .filter(|n| n.path == "/dev/nvidiactl" || n.path == "/dev/nvidia-uvm" || is_gpu_node(&n.path))
        .collect();
    if relevant.is_empty() {
        return c.verdict(Verdict::Skipped, "no device files to check");
    }
    let denied: Vec<&&DeviceNode> = relevant.iter().filter(|n| !can_open(&m.user, n)).collect();
    let who = m.user.name.clone().unwrap_or_else(|| format!("uid {}", m.user.uid));
    let c = c.evidence(format!(
        "user {who}, groups {}",
        m.user.groups.iter().map(|(g, n)| format!("{n}({g})")).collect::<Vec<_>>().join(", ")
    ));
    if denied.is_empty() {
        return c.verdict(Verdict::Pass, format!("{who} can read and write all {} of them", relevant.len()));
    }
    let group = denied.iter().find_map(|n| n.group.clone().or_else(|| (n.gid != 0).then(|| n.gid.to_string())));
    let mut c = c.verdict(
        Verdict::Fail,
        format!(
            "{who} cannot open {}",
            denied.iter().map(|n| format!("{} (mode {:o})", n.path, n.mode)).collect::<Vec<_>>().join(", ")
        ),
    );
    c = match group {
        Some(g) => c.explain(format!("The device files belong to group '{g}' and are not open to others.")).fix(
            format!("sudo usermod -aG {g} {}   # then log out and back in", m.user.name.as_deref().unwrap_or("$USER")),
        ),
        None => c.fix(
            "Ask an administrator to restore the driver's default mode 0666 (NVreg_DeviceFileMode) for /dev/nvidia*.",
        ),
    };
    c
}

fn wsl_01(cx: &Ctx) -> Check {
    let c = Check::new("WSL-01", Layer::Wsl, "WSL version and GPU paravirtualisation");
    match cx.wsl {
        None => c.verdict(Verdict::Skipped, "not WSL"),
        Some(1) => c.verdict(Verdict::Fail, "WSL1 has no GPU support").fix("In PowerShell: wsl --set-version <DistroName> 2"),
        Some(_) if cx.v.meta().device_nodes.iter().any(|n| n.path == "/dev/dxg") || cx.v.exists("/dev/dxg") => {
            c.verdict(Verdict::Pass, "WSL2 with /dev/dxg (the GPU is paravirtualised from Windows)")
        }
        Some(_) => c
            .verdict(Verdict::Fail, "WSL2 without /dev/dxg: no GPU is shared into WSL")
            .fix("Update Windows and WSL (wsl --update in PowerShell) and install the current NVIDIA Windows driver; then wsl --shutdown."),
    }
}

fn wsl_02(cx: &Ctx) -> Check {
    let c = Check::new("WSL-02", Layer::Wsl, "CUDA comes from the Windows driver (/usr/lib/wsl/lib)");
    if cx.wsl != Some(2) {
        return c.verdict(Verdict::Skipped, "WSL2 only");
    }
    match cx.v.meta().libraries.iter().find(|l| l.name == "libcuda.so.1") {
        Some(l) if l.path.starts_with("/usr/lib/wsl/lib") => c.verdict(Verdict::Pass, format!("libcuda.so.1 from {}", l.path)),
        Some(l) => c
            .verdict(Verdict::Fail, format!("libcuda.so.1 resolves to {}: a Linux NVIDIA driver is installed inside WSL", l.path))
            .explain("Inside WSL the driver must come from Windows; a Linux driver package shadows it and breaks CUDA.")
            .evidence(format!("{} -> {}", l.path, l.real_path))
            .fix("sudo apt-get remove --purge 'nvidia-driver-*' 'libnvidia-*' 'nvidia-utils-*' cuda-drivers   # keep the toolkit; then wsl --shutdown"),
        None => c.verdict(Verdict::Fail, "libcuda.so.1 is missing").fix("Install or update the NVIDIA driver on Windows (it provides /usr/lib/wsl/lib); then wsl --shutdown."),
    }
}

fn wsl_08(cx: &Ctx) -> Check {
    let c = Check::new("WSL-08", Layer::Wsl, "Graphics rendering in WSL");
    if cx.wsl.is_none() {
        return c.verdict(Verdict::Skipped, "not WSL");
    }
    match &cx.v.meta().renderer {
        None => c.verdict(Verdict::Skipped, "renderer unknown (run the check from the app to include it)"),
        Some(r) if r.to_ascii_lowercase().contains("llvmpipe") => c
            .verdict(Verdict::Warn, format!("this app renders on the CPU ({r})"))
            .explain("CUDA and graphics are separate questions: CUDA can work while OpenGL falls back to software rendering.")
            .fix("Try GALLIUM_DRIVER=d3d12; update WSL (wsl --update) and the Windows driver."),
        Some(r) => c.verdict(Verdict::Pass, format!("hardware rendering: {r}")),
    }
}

fn env_01(cx: &Ctx) -> Check {
    let c = Check::new("ENV-01", Layer::Environment, "CUDA_VISIBLE_DEVICES");
    let Some(val) = cx.env("CUDA_VISIBLE_DEVICES") else {
        return c.verdict(Verdict::Pass, "not set: CUDA programs see every GPU");
    };
    let gpus = cx.nvml_gpus();
    let c = c.evidence(format!("CUDA_VISIBLE_DEVICES={val:?}"));
    if gpus.is_empty() {
        return c.verdict(Verdict::Info, format!("set to {val:?}; no GPU list to compare it with"));
    }
    let vis = parse::cuda_visible(val, &gpus);
    let shown = vis.gpus.iter().map(|g| format!("GPU {g}")).collect::<Vec<_>>().join(", ");
    if vis.gpus.is_empty() && vis.mig.is_empty() {
        let why = match &vis.cut_at {
            None => "an empty value hides every GPU".to_string(),
            Some(e) => {
                format!("its first entry {e:?} matches no GPU, and CUDA ignores everything after an invalid entry")
            }
        };
        return c
            .verdict(Verdict::Fail, format!("CUDA_VISIBLE_DEVICES={val:?} hides every GPU: {why}"))
            .fix("unset CUDA_VISIBLE_DEVICES   # or set it to GPU indices or UUIDs from this list")
            .fix(format!(
                "Valid values here: {}",
                gpus.iter().map(|(i, u)| format!("{i} ({u})")).collect::<Vec<_>>().join(", ")
            ));
    }
    match vis.cut_at {
        Some(e) => c.verdict(
            Verdict::Warn,
            format!("only {shown} visible: {e:?} matches no GPU and hides every entry after it"),
        ),
        None => c.verdict(
            Verdict::Info,
            format!(
                "CUDA sees {shown}{}",
                if vis.mig.is_empty() { String::new() } else { format!(" and MIG {}", vis.mig.join(", ")) }
            ),
        ),
    }
}

fn env_02(cx: &Ctx) -> Check {
    let c = Check::new("ENV-02", Layer::Environment, "CUDA and nvidia-smi number the GPUs the same way");
    let Some(n) = cx.nvml else { return c.verdict(Verdict::Skipped, MISSING) };
    let mut names: Vec<&str> = n.inventory.gpus.iter().map(|g| g.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let order = cx.env("CUDA_DEVICE_ORDER");
    if n.inventory.gpus.len() < 2 || names.len() < 2 || order == Some("PCI_BUS_ID") {
        return c.verdict(Verdict::Pass, "same numbering (one GPU model, or CUDA_DEVICE_ORDER=PCI_BUS_ID)");
    }
    c.verdict(
        Verdict::Warn,
        "different GPU models and CUDA_DEVICE_ORDER is not PCI_BUS_ID: CUDA's GPU 0 may not be nvidia-smi's GPU 0",
    )
    .fix("export CUDA_DEVICE_ORDER=PCI_BUS_ID   # before starting the program; or select GPUs by UUID")
}

fn env_03(cx: &Ctx) -> Check {
    let c = Check::new("ENV-03", Layer::Environment, "LD_LIBRARY_PATH does not shadow the driver");
    let Some(ld) = cx.env("LD_LIBRARY_PATH") else { return c.verdict(Verdict::Pass, "LD_LIBRARY_PATH not set") };
    let c = c.evidence(format!("LD_LIBRARY_PATH={ld}"));
    let libcuda = cx.v.meta().libraries.iter().find(|l| l.name == "libcuda.so.1");
    if let Some(l) = libcuda.filter(|l| l.path.contains("/stubs/")) {
        return c
            .verdict(Verdict::Fail, format!("libcuda.so.1 resolves to the toolkit's stub library {}", l.path))
            .explain("The stub only exists for linking; loading it fails with 'CUDA driver is a stub library'.")
            .fix(format!("Remove {} from LD_LIBRARY_PATH", l.path.rsplit_once('/').map_or("", |x| x.0)));
    }
    if let Some(l) = libcuda.filter(|l| l.path.contains("/compat/")) {
        return c.verdict(Verdict::Warn, format!("libcuda.so.1 comes from a CUDA forward-compatibility package ({})", l.path)).fix("Remove the compat directory from LD_LIBRARY_PATH unless this is a data-center GPU set up for forward compatibility.");
    }
    if ld.split(':').any(|d| d.contains("/stubs")) {
        return c
            .verdict(Verdict::Warn, "a stubs directory is on LD_LIBRARY_PATH")
            .fix("Remove the stubs directory from LD_LIBRARY_PATH; it is only for linking.");
    }
    c.verdict(Verdict::Pass, "no stub or compat driver library first in line")
}

fn rt_08(cx: &Ctx) -> Check {
    let c = Check::new("RT-08", Layer::Runtime, "Other programs holding the GPU");
    let samples = nvml_samples(cx);
    if samples.is_empty() {
        return c.verdict(Verdict::Skipped, "NVML not open");
    }
    let mut c = c;
    let mut worst = Verdict::Pass;
    let mut notes = Vec::new();
    for s in samples {
        let procs = s.processes.value().map(Vec::len);
        let (used, total) = (s.vram_used_bytes.get(), s.vram_total_bytes.get());
        let full = matches!((used, total), (Some(u), Some(t)) if t > 0 && u as f64 / t as f64 > 0.9);
        if let Some(list) = s.processes.value() {
            for p in list {
                c = c.evidence(format!(
                    "GPU {}: pid {} {} ({})",
                    s.index,
                    p.pid,
                    p.name,
                    p.vram_bytes.show_short(|b| crate::units::bytes(*b))
                ));
            }
        }
        if full {
            worst = Verdict::Warn;
            notes.push(format!(
                "GPU {} VRAM is over 90 % used{}",
                s.index,
                procs.map(|n| format!(" by {n} process(es)")).unwrap_or_default()
            ));
        }
    }
    if worst == Verdict::Warn {
        c.verdict(Verdict::Warn, notes.join("; ")).fix("Close the programs holding the memory (often a forgotten Jupyter kernel or a stuck Python process) before starting a new job.")
    } else {
        let n: usize = samples.iter().filter_map(|s| s.processes.value().map(Vec::len)).sum();
        c.verdict(
            if n == 0 { Verdict::Pass } else { Verdict::Info },
            if n == 0 {
                "no process is using the GPU".to_string()
            } else {
                format!("{n} process(es) use the GPU; memory is not full")
            },
        )
    }
}

fn facts<'a>(cx: &Ctx<'a>) -> &'a [crate::telemetry::sample::GpuFacts] {
    cx.nvml.map(|n| n.facts.as_slice()).unwrap_or(&[])
}

fn rt_03(cx: &Ctx) -> Check {
    let c = Check::new("RT-03", Layer::Runtime, "Memory repair (row remapping, retired pages)");
    let mut c = c;
    let mut worst = Verdict::Skipped;
    for f in facts(cx) {
        if let Some(r) = f.remapped_rows.value() {
            c = c.evidence(format!(
                "GPU {}: remapped rows {} correctable, {} uncorrectable, pending {}, failure {}",
                f.index, r.correctable, r.uncorrectable, r.pending, r.failed
            ));
            let v = if r.failed {
                Verdict::Fail
            } else if r.pending {
                Verdict::Warn
            } else {
                Verdict::Pass
            };
            worst = if worst == Verdict::Skipped { v } else { worst.max(v) };
        }
        if let Some(p) = f.pages_pending_retirement.value() {
            c = c.evidence(format!("GPU {}: retired pages pending: {p}", f.index));
            let v = if *p { Verdict::Warn } else { Verdict::Pass };
            worst = if worst == Verdict::Skipped { v } else { worst.max(v) };
        }
    }
    match worst {
        Verdict::Skipped => c.verdict(Verdict::Skipped, "not reported (GeForce boards do not have it)"),
        Verdict::Pass => c.verdict(Verdict::Pass, "nothing pending, no failure"),
        Verdict::Warn => c
            .verdict(Verdict::Warn, "a memory repair waits for a GPU reset")
            .fix("Reset the GPU (sudo nvidia-smi -r -i <id>, with no process on it) or reboot when convenient."),
        _ => c
            .verdict(Verdict::Fail, "row remapping failed: the GPU has no spare memory rows left")
            .fix("Contact the vendor (RMA); until then expect uncorrectable memory errors on this GPU."),
    }
}

fn rt_06(cx: &Ctx) -> Check {
    let c = Check::new("RT-06", Layer::Runtime, "MIG (multi-instance GPU) mode");
    let modes: Vec<(u32, (bool, bool))> =
        facts(cx).iter().filter_map(|f| f.mig.value().map(|m| (f.index, *m))).collect();
    if modes.is_empty() {
        return c.verdict(Verdict::Skipped, "not a MIG-capable GPU");
    }
    if let Some((i, _)) = modes.iter().find(|(_, (cur, pend))| cur != pend) {
        return c
            .verdict(Verdict::Warn, format!("GPU {i}: MIG mode changes at the next GPU reset"))
            .fix("Reset the GPU or reboot to apply the pending MIG mode.");
    }
    let on: Vec<String> = modes.iter().filter(|(_, (cur, _))| *cur).map(|(i, _)| format!("GPU {i}")).collect();
    if on.is_empty() {
        c.verdict(Verdict::Pass, "MIG is off")
    } else {
        c.verdict(Verdict::Info, format!("MIG is on for {}: CUDA sees its instances, selected with MIG- UUIDs in CUDA_VISIBLE_DEVICES (nvidia-smi -L lists them)", on.join(", ")))
    }
}

fn rt_07(cx: &Ctx) -> Check {
    let c = Check::new("RT-07", Layer::Runtime, "Compute mode");
    let modes: Vec<(u32, String)> =
        facts(cx).iter().filter_map(|f| f.compute_mode.value().map(|m| (f.index, m.clone()))).collect();
    if modes.is_empty() {
        return c.verdict(Verdict::Skipped, "not reported");
    }
    if let Some((i, _)) = modes.iter().find(|(_, m)| m == "Prohibited") {
        return c
            .verdict(Verdict::Fail, format!("GPU {i} is set to Prohibited: no program can create a CUDA context on it"))
            .fix(format!("sudo nvidia-smi -i {i} -c DEFAULT"));
    }
    if let Some((i, _)) = modes.iter().find(|(_, m)| m == "ExclusiveProcess") {
        return c.verdict(
            Verdict::Info,
            format!(
                "GPU {i} is exclusive-process: one program at a time ('all CUDA-capable devices are busy' for the next)"
            ),
        );
    }
    c.verdict(Verdict::Pass, "Default (shared)")
}

fn win_02(cx: &Ctx) -> Check {
    let c = Check::new("WIN-02", Layer::Windows, "Driver model (WDDM / TCC / MCDM)");
    if cx.v.meta().platform != "windows" {
        return c.verdict(Verdict::Skipped, "Windows only");
    }
    let models: Vec<(u32, (String, String))> =
        facts(cx).iter().filter_map(|f| f.driver_model.value().map(|m| (f.index, m.clone()))).collect();
    if models.is_empty() {
        return c.verdict(Verdict::Skipped, "not reported");
    }
    if let Some((i, (cur, pend))) = models.iter().find(|(_, (c, p))| c != p) {
        return c
            .verdict(Verdict::Warn, format!("GPU {i}: {cur} now, {pend} after a reboot"))
            .fix("Reboot to apply the pending driver model.");
    }
    let list = models.iter().map(|(i, (cur, _))| format!("GPU {i}: {cur}")).collect::<Vec<_>>().join(", ");
    c.verdict(Verdict::Info, list).explain(
        "WDDM is needed for displays, DirectX and WSL; TCC/MCDM are for compute-only cards (no display, no WSL).",
    )
}

/// The TDR verdict for these registry values (pure, so it is tested on every platform).
pub fn tdr_check(t: &super::view::Tdr) -> Check {
    let c = Check::new("WIN-01", Layer::Windows, "GPU watchdog (TDR) settings");
    let shown = |v: Option<u32>, default: u32| v.map_or(format!("{default} (default)"), |x| x.to_string());
    let c = c.evidence(format!(
        "HKLM\\System\\CurrentControlSet\\Control\\GraphicsDrivers: TdrLevel {}, TdrDelay {} s, TdrDdiDelay {} s",
        shown(t.level, 3),
        shown(t.delay, 2),
        shown(t.ddi_delay, 5)
    ));
    match t.level {
        Some(0) => c
            .verdict(Verdict::Warn, "the GPU watchdog is off (TdrLevel 0): a hung GPU freezes the desktop instead of being reset")
            .fix("Delete the TdrLevel value (or set it to 3) under HKLM\\System\\CurrentControlSet\\Control\\GraphicsDrivers, then reboot."),
        _ if t.delay.is_some_and(|d| d > 2) => c.verdict(
            Verdict::Info,
            format!("TdrDelay raised to {} s: long GPU kernels on a display GPU are allowed longer before Windows resets the driver", t.delay.unwrap_or(2)),
        ),
        _ => c
            .verdict(Verdict::Info, "defaults: Windows resets the driver when the GPU does not respond for 2 s")
            .explain("A compute kernel running longer than that on a GPU that drives a display fails with 'the launch timed out' (CUDA error 702); split long kernels or use a GPU without a monitor."),
    }
}

fn win_01(cx: &Ctx) -> Check {
    if cx.v.meta().platform != "windows" {
        return Check::new("WIN-01", Layer::Windows, "GPU watchdog (TDR) settings")
            .verdict(Verdict::Skipped, "Windows only");
    }
    match &cx.v.meta().tdr {
        Some(t) => tdr_check(t),
        None => Check::new("WIN-01", Layer::Windows, "GPU watchdog (TDR) settings").verdict(Verdict::Skipped, MISSING),
    }
}

fn win_04(cx: &Ctx) -> Check {
    let c = Check::new("WIN-04", Layer::Windows, "nvml.dll found");
    if cx.v.meta().platform != "windows" {
        return c.verdict(Verdict::Skipped, "Windows only");
    }
    match cx.nvml.map(|n| &n.status) {
        Some(SourceStatus::Nvml { library, .. }) => c.verdict(Verdict::Pass, format!("loaded {library}")),
        Some(SourceStatus::Unavailable(no)) if no.attempts.iter().all(|a| a.error.contains("load")) => {
            let mut c = c
                .verdict(Verdict::Fail, "nvml.dll was not found in System32 or NVSMI")
                .fix("Reinstall the NVIDIA display driver (nvidia.com/drivers; a clean install).");
            for a in &no.attempts {
                c = c.evidence(format!("{}: {}", a.path, a.error));
            }
            c
        }
        _ => c.verdict(Verdict::Skipped, "see DRV-08"),
    }
}

fn win_03(cx: &Ctx) -> Check {
    let c = Check::new("WIN-03", Layer::Windows, "Driver version");
    if cx.v.meta().platform != "windows" {
        return c.verdict(Verdict::Skipped, "Windows only");
    }
    match cx.nvml.and_then(|n| n.inventory.driver_version.as_ref()).and_then(|r| r.value().cloned()) {
        Some(v) => {
            let shown = parse::windows_driver_version(&v).unwrap_or(v.clone());
            c.verdict(Verdict::Info, format!("NVIDIA driver {shown}")).evidence(format!("reported: {v}"))
        }
        None => c.verdict(Verdict::Skipped, "not reported"),
    }
}

fn nvml_samples<'a>(cx: &Ctx<'a>) -> &'a [crate::telemetry::sample::GpuSample] {
    cx.nvml.map(|n| n.samples.as_slice()).unwrap_or(&[])
}

fn rt_lost(cx: &Ctx) -> Check {
    let c = Check::new("RT-LOST", Layer::Runtime, "Every GPU answers");
    if !cx.nvml_open() {
        return c.verdict(Verdict::Skipped, "NVML not open");
    }
    let lost: Vec<String> = nvml_samples(cx)
        .iter()
        .filter_map(|s| match &s.health {
            GpuHealth::Lost(_) => Some(format!("GPU {}", s.index)),
            GpuHealth::Ok => None,
        })
        .collect();
    if lost.is_empty() {
        c.verdict(Verdict::Pass, "all GPUs answer")
    } else {
        c.verdict(Verdict::Fail, format!("{} fell off the bus", lost.join(", ")))
            .explain("The GPU stopped responding on the PCIe bus (Xid 79).")
            .fix("Reboot (a GPU reset is usually not possible). If it repeats: reseat the card, check the PSU and PCIe power cables, try another slot, check temperatures; if it persists, RMA.")
    }
}

fn rt_xid(cx: &Ctx) -> Check {
    let c = Check::new("RT-XID", Layer::Runtime, "GPU errors in the kernel log (Xid)");
    if cx.wsl.is_some() {
        return c.verdict(Verdict::Skipped, "WSL has no NVRM kernel log");
    }
    let lines = match &cx.v.meta().kernel_log {
        KernelLog::Lines(l) => l,
        KernelLog::Unreadable(why) => return c.verdict(Verdict::Skipped, format!("kernel log not readable: {why}")),
    };
    let xs = parse::xids(lines);
    if xs.is_empty() {
        return c.verdict(Verdict::Pass, "no Xid errors logged since boot");
    }
    let mut c = c;
    let mut worst = Verdict::Info;
    let mut codes: Vec<u32> = Vec::new();
    for x in &xs {
        let (fatal, text) = parse::xid_meaning(x.code);
        worst = worst.max(if fatal { Verdict::Fail } else { Verdict::Warn });
        if !codes.contains(&x.code) {
            codes.push(x.code);
            c = c.fix(format!("Xid {} ({}): {text}", x.code, x.pci));
        }
        c = c.evidence(x.line.clone());
    }
    c.verdict(worst, format!("Xid {} logged", codes.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")))
}

fn rt_05(cx: &Ctx) -> Check {
    let c = Check::new("RT-05", Layer::Runtime, "Clocks held back (throttle reasons)");
    let samples = nvml_samples(cx);
    let masks: Vec<(u32, u64)> =
        samples.iter().filter_map(|s| s.throttle_mask.value().map(|m| (s.index, *m))).collect();
    if masks.is_empty() {
        return c.verdict(Verdict::Skipped, "not reported");
    }
    let mut c = c;
    let mut worst = Verdict::Pass;
    for (i, m) in &masks {
        for r in throttle::decode(*m).iter().filter(|r| r.severity >= throttle::Severity::Warn) {
            worst = Verdict::Warn;
            c = c.evidence(format!("GPU {i}: {} — {}", r.name, r.sentence));
        }
    }
    if worst == Verdict::Pass {
        c.verdict(Verdict::Pass, "no GPU is held back")
    } else {
        c.verdict(worst, "clocks are being lowered (see evidence); power cap under full load is normal")
    }
}

fn rt_04(cx: &Ctx) -> Check {
    let c = Check::new("RT-04", Layer::Runtime, "PCIe link at its maximum");
    let inv = cx.nvml.map(|n| &n.inventory.gpus);
    let mut c = c;
    let mut worst = Verdict::Skipped;
    for s in nvml_samples(cx) {
        let Some(info) = inv.and_then(|g| g.iter().find(|g| g.index == s.index)) else { continue };
        let (Some(g), Some(w), Some(mg), Some(mw)) =
            (s.pcie_gen.get(), s.pcie_width.get(), info.max_pcie_gen.get(), info.max_pcie_width.get())
        else {
            continue;
        };
        let busy = s.util_gpu_pct.get().is_some_and(|u| u >= 50.0);
        c = c.evidence(format!(
            "GPU {}: Gen{g} x{w} (max Gen{mg} x{mw}), utilization {}",
            s.index,
            s.util_gpu_pct.show_short(|u| format!("{u:.0} %"))
        ));
        let v = if g >= mg && w >= mw {
            Verdict::Pass
        } else if busy {
            Verdict::Warn
        } else {
            Verdict::Info
        };
        worst = if worst == Verdict::Skipped { v } else { worst.max(v) };
    }
    match worst {
        Verdict::Skipped => c.verdict(Verdict::Skipped, "link data not reported"),
        Verdict::Pass => c.verdict(Verdict::Pass, "every link at its maximum"),
        Verdict::Info => c.verdict(
            Verdict::Info,
            "a link is below its maximum while the GPU is idle: normal power saving; judge it under load",
        ),
        v => c.verdict(v, "a link is below its maximum under load").fix(
            "Reseat the card in a CPU-attached x16 slot, avoid risers and extenders, check the BIOS PCIe settings.",
        ),
    }
}

fn rt_ecc(cx: &Ctx) -> Check {
    let c = Check::new("RT-ECC", Layer::Runtime, "Uncorrectable memory (ECC) errors");
    let counts: Vec<(u32, u64)> =
        nvml_samples(cx).iter().filter_map(|s| s.ecc_uncorrected_volatile.value().map(|n| (s.index, *n))).collect();
    if counts.is_empty() {
        return c.verdict(Verdict::Skipped, "ECC not reported (GeForce boards have none)");
    }
    let bad: Vec<String> = counts.iter().filter(|(_, n)| *n > 0).map(|(i, n)| format!("GPU {i}: {n}")).collect();
    if bad.is_empty() {
        c.verdict(Verdict::Pass, "none since the driver loaded")
    } else {
        c.verdict(Verdict::Warn, format!("uncorrectable errors since the driver loaded ({})", bad.join(", ")))
            .fix("Reset the GPU or reboot when convenient; if errors keep coming, contact the vendor (RMA).")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::view::Tdr;

    #[test]
    fn tdr_verdicts() {
        assert_eq!(tdr_check(&Tdr::default()).verdict, Verdict::Info);
        assert!(tdr_check(&Tdr::default()).evidence[0].contains("TdrLevel 3 (default), TdrDelay 2 (default) s"));
        let off = tdr_check(&Tdr { level: Some(0), ..Tdr::default() });
        assert_eq!(off.verdict, Verdict::Warn);
        assert!(off.fixes[0].contains("TdrLevel"));
        let long = tdr_check(&Tdr { level: Some(3), delay: Some(60), ddi_delay: None });
        assert!(long.summary.contains("60 s"), "{}", long.summary);
    }

    #[test]
    fn bus_ids_normalise() {
        assert_eq!(norm_bus("00000000:01:00.0"), "0000:01:00.0");
        assert_eq!(norm_bus("0000:2B:00.0"), "0000:2b:00.0");
    }
}
