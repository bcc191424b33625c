//! Writes the checklist fixtures under tests/fixtures/: capture directories of machines in known
//! states (healthy, no driver, nouveau, Secure Boot, version mismatch, ...), in the format
//! `gpu-doctor-cli capture` writes (docs/capture-format.md). Each is a healthy workstation with
//! the few facts changed that make the fault. Run: `cargo run --example make_fixtures`.
#![allow(missing_docs)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // a tool for developers: stop at the first failure

use std::collections::BTreeMap;
use std::path::Path;

use gpu_doctor::diagnose::system::{
    CudaProbe, DeviceNode, KernelLog, LibraryFound, Meta, NvmlView, UserInfo, write_capture_json,
};
use gpu_doctor::telemetry::GpuSource;
use gpu_doctor::telemetry::Reading;
use gpu_doctor::telemetry::demo::{DemoGpus, Scenario};
use gpu_doctor::telemetry::sample::{GpuFacts, GpuHealth, RemappedRows};
use gpu_doctor::telemetry::source::{LoadAttempt, NoGpu, SourceStatus};
use gpu_doctor::telemetry::throttle;

const GPU_BUS: &str = "0000:01:00.0";
const SECURE_BOOT: &str = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c";
const DRIVER_LINE: &str = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\nGCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n";
const OS_RELEASE: &str = "PRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\nVERSION=\"22.04.4 LTS (Jammy Jellyfish)\"\nVERSION_CODENAME=jammy\nID=ubuntu\nID_LIKE=debian\nHOME_URL=\"https://www.ubuntu.com/\"\nUBUNTU_CODENAME=jammy\n";
const OS_RELEASE_FEDORA: &str = "NAME=\"Fedora Linux\"\nVERSION=\"40 (Workstation Edition)\"\nID=fedora\nVERSION_ID=40\nPRETTY_NAME=\"Fedora Linux 40 (Workstation Edition)\"\nHOME_URL=\"https://fedoraproject.org/\"\n";
const TORCH_PY: &str = "/home/alice/miniconda3/envs/ml/lib/python3.11/site-packages/torch/version.py";

struct Fx {
    files: BTreeMap<String, Vec<u8>>,
    meta: Meta,
}

impl Fx {
    fn file(&mut self, path: &str, text: &str) {
        self.files.insert(path.to_string(), text.as_bytes().to_vec());
    }
    fn drop_file(&mut self, path: &str) {
        self.files.remove(path);
    }
    fn nvml(&mut self) -> &mut NvmlView {
        self.meta.nvml.as_mut().unwrap_or_else(|| panic!("no NVML view"))
    }
    fn nvml_fails(&mut self, summary: &str, next: &str, error: &str) {
        self.nvml().status = SourceStatus::Unavailable(NoGpu {
            summary: summary.into(),
            next_step: next.into(),
            attempts: vec![LoadAttempt { path: "libnvidia-ml.so.1".into(), error: error.into() }],
            // (As captures made before the field existed: the checks must read those too.)
            failure: None,
        });
        self.nvml().inventory = Default::default();
        self.nvml().samples.clear();
    }
    /// cuInit's answer on this machine.
    fn cuinit(&mut self, code: i32) {
        self.meta.cuda = Some(CudaProbe {
            library: Some("libcuda.so.1".into()),
            load_error: None,
            init_code: Some(code),
            driver_version: Some("12.4".into()),
            devices: None,
            did_not_return: None,
            hung_call: None,
        });
    }
    fn no_library(&mut self) {
        self.meta.libraries.clear();
        self.meta.cuda = Some(CudaProbe {
            load_error: Some("libcuda.so.1: cannot open shared object file: No such file or directory".into()),
            ..CudaProbe::default()
        });
        self.nvml_fails(
            "The NVIDIA driver's management library (NVML) was not found, so no NVIDIA driver seems to be installed.",
            "Install the NVIDIA driver for your GPU.",
            "a libloading error occurred: libnvidia-ml.so.1: cannot open shared object file: No such file or directory",
        );
    }
    fn unload_module(&mut self) {
        self.file(
            "/proc/modules",
            "snd_hda_intel 57344 3 - Live 0x0000000000000000\ni915 3895296 12 - Live 0x0000000000000000\n",
        );
        self.drop_file("/proc/driver/nvidia/version");
        self.meta.links.remove(&format!("/sys/bus/pci/devices/{GPU_BUS}/driver"));
        self.meta.device_nodes.clear();
    }
}

fn node(path: &str, major: u32, minor: u32, mode: u32, gid: u32) -> DeviceNode {
    DeviceNode {
        path: path.into(),
        char_device: true,
        mode,
        uid: 0,
        gid,
        group: Some(if gid == 0 { "root" } else { "video" }.into()),
        major,
        minor,
        open: None,
    }
}

fn lib(name: &str, dir: &str, real: &str) -> LibraryFound {
    LibraryFound {
        name: name.into(),
        path: format!("{dir}/{name}"),
        real_path: format!("{dir}/{real}"),
        via: "system".into(),
    }
}

fn healthy() -> Fx {
    let demo = DemoGpus::new(Scenario::Idle, 1, 1);
    let mut inventory = (*demo.inventory()).clone();
    inventory.driver_version = Some(Reading::Value("550.54.15".into()));
    inventory.cuda_driver_version = Some(Reading::Value("12.4".into()));
    inventory.nvml_version = Some(Reading::Value("12.550.54.15".into()));
    for g in &mut inventory.gpus {
        g.name = "NVIDIA GeForce RTX 4090".into();
        g.uuid = Reading::Value("GPU-5f2c1e8a-7d3b-4c61-9e0a-2b8f4d6c1a37".into());
        g.pci_bus_id = Reading::Value("00000000:01:00.0".into());
    }
    let mut samples = demo.sample(1.0);
    for s in &mut samples {
        s.processes = Reading::Value(Vec::new());
        s.ecc_uncorrected_volatile = Reading::na("not supported on this GPU");
    }
    let mut fx = Fx {
        files: BTreeMap::new(),
        meta: Meta {
            platform: gpu_doctor::diagnose::system::Platform::Linux,
            env: BTreeMap::new(),
            user: UserInfo {
                name: Some("alice".into()),
                uid: 1000,
                groups: vec![(1000, "alice".into()), (27, "sudo".into())],
            },
            device_nodes: vec![
                node("/dev/nvidia-modeset", 195, 254, 0o666, 0),
                node("/dev/nvidia-uvm", 508, 0, 0o666, 0),
                node("/dev/nvidia-uvm-tools", 508, 1, 0o666, 0),
                node("/dev/nvidia0", 195, 0, 0o666, 0),
                node("/dev/nvidiactl", 195, 255, 0o666, 0),
            ],
            links: BTreeMap::from([(
                format!("/sys/bus/pci/devices/{GPU_BUS}/driver"),
                "../../../bus/pci/drivers/nvidia".to_string(),
            )]),
            listings: BTreeMap::new(),
            kernel_log_source: None,
            nvml: Some(NvmlView {
                status: SourceStatus::Nvml { library: "libnvidia-ml.so.1".into(), attempts: Vec::new() },
                inventory,
                samples,
                facts: vec![GpuFacts {
                    index: 0,
                    persistence: Reading::Value(false),
                    compute_mode: Reading::Value("Default".into()),
                    mig: Reading::na("not supported on this GPU"),
                    mig_devices: Reading::na("MIG is off"),
                    remapped_rows: Reading::na("not supported on this GPU"),
                    pages_pending_retirement: Reading::na("not supported on this GPU"),
                    driver_model: Reading::na("Windows only"),
                }],
                did_not_return: None,
                hung_call: None,
            }),
            libraries: vec![
                lib("libcuda.so.1", "/usr/lib/x86_64-linux-gnu", "libcuda.so.550.54.15"),
                lib("libnvidia-ml.so.1", "/usr/lib/x86_64-linux-gnu", "libnvidia-ml.so.550.54.15"),
            ],
            kernel_log: KernelLog::Lines(vec![
                "nvidia: loading out-of-tree module taints kernel.".into(),
                "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024".into(),
            ]),
            renderer: None,
            tdr: None,
            cuda: Some(CudaProbe {
                library: Some("libcuda.so.1".into()),
                load_error: None,
                init_code: Some(0),
                driver_version: Some("12.4".into()),
                devices: Some(1),
                did_not_return: None,
                hung_call: None,
            }),
            windows: None,
            holders: None,
            quick: false,
            not_collected: Default::default(),
        },
    };
    fx.file("/proc/sys/kernel/osrelease", "6.8.0-45-generic\n");
    fx.file("/etc/os-release", OS_RELEASE);
    fx.file(
        "/proc/modules",
        "nvidia_uvm 4956160 0 - Live 0x0000000000000000 (POE)\nnvidia_drm 122880 4 - Live 0x0000000000000000 (POE)\nnvidia_modeset 1355776 8 nvidia_drm, Live 0x0000000000000000 (POE)\nnvidia 54173696 98 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (POE)\nsnd_hda_intel 57344 3 - Live 0x0000000000000000\n",
    );
    fx.file("/proc/driver/nvidia/version", DRIVER_LINE);
    for (bus, vendor, class) in [
        (GPU_BUS, "0x10de", "0x030000"),
        ("0000:01:00.1", "0x10de", "0x040300"),
        ("0000:00:02.0", "0x8086", "0x030000"),
    ] {
        fx.file(&format!("/sys/bus/pci/devices/{bus}/vendor"), &format!("{vendor}\n"));
        fx.file(&format!("/sys/bus/pci/devices/{bus}/class"), &format!("{class}\n"));
    }
    fx.files.insert(SECURE_BOOT.into(), vec![6, 0, 0, 0, 0]);
    fx.file("/run/nvidia-persistenced/socket", "");
    fx.file(TORCH_PY, "__version__ = '2.5.1+cu121'\ndebug = False\ncuda: Optional[str] = '12.1'\ngit_version = 'a8d6afb511a69687bbb2b7e88a3cf67917e1697e'\nhip: Optional[str] = None\n");
    fx
}

fn wsl(fx: &mut Fx) {
    fx.file("/proc/sys/kernel/osrelease", "5.15.167.4-microsoft-standard-WSL2\n");
    fx.files.retain(|p, _| !p.starts_with("/sys/") && !p.starts_with("/proc/driver") && !p.starts_with("/run/"));
    fx.file("/proc/modules", "");
    fx.meta.links.clear();
    fx.meta.device_nodes = vec![DeviceNode {
        path: "/dev/dxg".into(),
        char_device: true,
        mode: 0o666,
        uid: 0,
        gid: 0,
        group: Some("root".into()),
        major: 10,
        minor: 125,
        open: None,
    }];
    fx.meta.libraries = vec![
        lib("libcuda.so.1", "/usr/lib/wsl/lib", "libcuda.so.1"),
        lib("libnvidia-ml.so.1", "/usr/lib/wsl/lib", "libnvidia-ml.so.1"),
    ];
    fx.meta.env.insert("WSL_DISTRO_NAME".into(), "Ubuntu-22.04".into());
    fx.meta.kernel_log = KernelLog::Lines(Vec::new());
    fx.meta.renderer =
        Some("OpenGL (glow): D3D12 (NVIDIA GeForce RTX 4060 Laptop GPU), 4.6 (Core Profile) Mesa 24.0.9".into());
    let n = fx.nvml();
    n.status = SourceStatus::Nvml { library: "libnvidia-ml.so.1".into(), attempts: Vec::new() };
    for g in &mut n.inventory.gpus {
        g.name = "NVIDIA GeForce RTX 4060 Laptop GPU".into();
    }
    for s in &mut n.samples {
        s.processes = Reading::na("not supported on this GPU");
        s.pcie_gen = Reading::na("not supported on this GPU");
    }
}

fn container(fx: &mut Fx) {
    fx.file("/.dockerenv", "");
    fx.file("/proc/1/cgroup", "0::/\n");
    fx.files.retain(|p, _| !p.starts_with("/home/") && p != SECURE_BOOT && !p.starts_with("/run/"));
    fx.meta.env.insert("NVIDIA_VISIBLE_DEVICES".into(), "all".into());
    fx.meta.env.insert("NVIDIA_DRIVER_CAPABILITIES".into(), "compute,utility".into());
    fx.meta.user = UserInfo { name: Some("root".into()), uid: 0, groups: vec![(0, "root".into())] };
    fx.meta.kernel_log = KernelLog::Unreadable("/dev/kmsg: Operation not permitted (os error 1)".into());
}

fn main() {
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut all: Vec<(&str, Fx)> = Vec::new();

    all.push(("healthy-workstation", healthy()));

    let mut f = healthy();
    wsl(&mut f);
    all.push(("healthy-wsl2", f));

    let mut f = healthy();
    container(&mut f);
    all.push(("healthy-container", f));

    let mut f = healthy();
    f.unload_module();
    f.no_library();
    f.meta.kernel_log = KernelLog::Lines(Vec::new());
    all.push(("no-driver", f));

    let mut f = healthy();
    f.unload_module();
    f.file(
        "/proc/modules",
        "nouveau 2322432 3 - Live 0x0000000000000000\ndrm_ttm_helper 16384 1 nouveau, Live 0x0000000000000000\n",
    );
    f.meta.links.insert(format!("/sys/bus/pci/devices/{GPU_BUS}/driver"), "../../../bus/pci/drivers/nouveau".into());
    f.nvml_fails(
        "The NVIDIA library is installed but the kernel driver is not loaded.",
        "Check `lsmod | grep nvidia` and `sudo dmesg | grep -i nvidia`; nouveau or Secure Boot may block the module.",
        "Driver Not Loaded",
    );
    f.meta.kernel_log = KernelLog::Lines(vec![
        "NVRM: The NVIDIA probe routine was not called for 1 device(s).".into(),
        "NVRM: This can occur when a driver such as: nouveau, rivafb, nvidiafb or rivatv was loaded and obtained ownership of the NVIDIA device(s).".into(),
        "NVRM: No NVIDIA devices probed.".into(),
    ]);
    f.cuinit(100);
    // A Fedora machine: its fixes use dracut rather than update-initramfs.
    f.file("/etc/os-release", OS_RELEASE_FEDORA);
    all.push(("nouveau-bound", f));

    let mut f = healthy();
    f.unload_module();
    f.files.insert(SECURE_BOOT.into(), vec![6, 0, 0, 0, 1]);
    f.nvml_fails(
        "The NVIDIA library is installed but the kernel driver is not loaded.",
        "Check `lsmod | grep nvidia` and `sudo dmesg | grep -i nvidia`; nouveau or Secure Boot may block the module.",
        "Driver Not Loaded",
    );
    f.meta.kernel_log = KernelLog::Lines(vec![
        "Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7".into(),
        "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service".into(),
    ]);
    f.cuinit(100);
    all.push(("secure-boot-blocks-module", f));

    let mut f = healthy();
    f.file("/proc/driver/nvidia/version", &DRIVER_LINE.replace("550.54.15", "550.54.14"));
    f.meta.libraries = vec![
        lib("libcuda.so.1", "/usr/lib/x86_64-linux-gnu", "libcuda.so.550.107.02"),
        lib("libnvidia-ml.so.1", "/usr/lib/x86_64-linux-gnu", "libnvidia-ml.so.550.107.02"),
    ];
    f.nvml_fails(
        "The driver was updated: the loaded kernel module and the user-space library have different versions.",
        "Reboot (or reload the nvidia kernel modules) so both sides run the same version.",
        "Driver/library version mismatch",
    );
    f.meta.kernel_log = KernelLog::Lines(vec!["NVRM: API mismatch: the client has the version 550.107.02, but NVRM: this kernel module has the version 550.54.14.  Please make sure that this kernel module and all NVIDIA driver components have the same version.".into()]);
    f.cuinit(803);
    all.push(("version-mismatch-after-upgrade", f));

    let mut f = healthy();
    for n in &mut f.meta.device_nodes {
        n.mode = 0o660;
        n.gid = 44;
        n.group = Some("video".into());
    }
    f.nvml_fails(
        "The NVIDIA driver refused access to the GPU for this user.",
        "Check that /dev/nvidia* are readable by your user (group 'video' on some distributions), or ask an administrator.",
        "Insufficient Permissions",
    );
    f.cuinit(100);
    all.push(("user-not-in-video-group", f));

    let mut f = healthy();
    f.meta.device_nodes.retain(|n| !n.path.starts_with("/dev/nvidia-uvm"));
    f.file("/proc/modules", "nvidia_drm 122880 4 - Live 0x0000000000000000 (POE)\nnvidia_modeset 1355776 8 nvidia_drm, Live 0x0000000000000000 (POE)\nnvidia 54173696 98 nvidia_modeset, Live 0x0000000000000000 (POE)\n");
    f.cuinit(999);
    all.push(("nvidia-uvm-missing", f));

    let mut f = healthy();
    container(&mut f);
    f.meta.env.remove("NVIDIA_DRIVER_CAPABILITIES");
    f.meta.device_nodes.clear();
    f.no_library();
    all.push(("container-without-gpus", f));

    let mut f = healthy();
    wsl(&mut f);
    f.meta.libraries = vec![
        lib("libcuda.so.1", "/usr/lib/x86_64-linux-gnu", "libcuda.so.550.54.15"),
        lib("libnvidia-ml.so.1", "/usr/lib/x86_64-linux-gnu", "libnvidia-ml.so.550.54.15"),
    ];
    f.nvml_fails(
        "The operating system blocked access to the GPU (often a container's cgroup device rules).",
        "Start the container with the NVIDIA container runtime (--gpus all or CDI).",
        "GPU access blocked by the operating system",
    );
    f.cuinit(100);
    all.push(("wsl-linux-driver-inside", f));

    let mut f = healthy();
    f.meta.env.insert("CUDA_VISIBLE_DEVICES".into(), String::new());
    f.cuinit(100);
    all.push(("cuda-visible-devices-hides-all", f));

    let mut f = healthy();
    f.file(
        TORCH_PY,
        "__version__ = '2.9.0+cu130'\ndebug = False\ncuda: Optional[str] = '13.0'\nhip: Optional[str] = None\n",
    );
    all.push(("torch-newer-cuda-than-driver", f));

    let mut f = healthy();
    if let Some(s) = f.nvml().samples.first_mut() {
        s.health = GpuHealth::Lost(
            "GPU has fallen off the bus and stopped answering. Look for Xid 79 in the kernel log.".into(),
        );
    }
    f.meta.kernel_log = KernelLog::Lines(vec![
        "NVRM: Xid (PCI:0000:01:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.".into(),
        "NVRM: GPU 0000:01:00.0: GPU has fallen off the bus.".into(),
    ]);
    all.push(("xid-79-fallen-off-bus", f));

    let mut f = healthy();
    if let Some(s) = f.nvml().samples.first_mut() {
        s.util_gpu_pct = Reading::Value(98.0);
        s.pcie_gen = Reading::Value(1);
        s.pcie_width = Reading::Value(16);
        s.throttle_mask = Reading::Value(throttle::SW_POWER_CAP);
    }
    all.push(("pcie-link-downtrained", f));

    let mut f = healthy();
    for g in &mut f.nvml().inventory.gpus {
        g.name = "NVIDIA A100-SXM4-80GB".into();
    }
    if let Some(x) = f.nvml().facts.first_mut() {
        x.persistence = Reading::Value(true);
        x.mig = Reading::Value((false, false));
        x.remapped_rows =
            Reading::Value(RemappedRows { correctable: 0, uncorrectable: 512, pending: false, failed: true });
    }
    if let Some(s) = f.nvml().samples.first_mut() {
        s.ecc_uncorrected_volatile = Reading::Value(3);
    }
    f.meta.kernel_log = KernelLog::Lines(vec!["NVRM: Xid (PCI:0000:01:00): 64, pid=2211, name=python3, Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x3c041".into()]);
    // A capture from before gpu-doctor read os-release: fixes fall back to distribution-neutral steps.
    f.drop_file("/etc/os-release");
    all.push(("row-remapping-failed", f));

    let mut f = healthy();
    for g in &mut f.nvml().inventory.gpus {
        g.name = "NVIDIA GeForce RTX 5090".into();
        g.compute_capability = Reading::Value("12.0".into());
    }
    f.nvml().inventory.cuda_driver_version = Some(Reading::Value("12.8".into()));
    f.nvml().inventory.driver_version = Some(Reading::Value("570.133.07".into()));
    f.file(
        "/proc/driver/nvidia/version",
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.133.07  Release Build  (dvs-builder@U16-I3-B03-4-3)  Fri Mar 14 13:19:45 UTC 2025\nGCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n",
    );
    f.meta.libraries = vec![
        lib("libcuda.so.1", "/usr/lib/x86_64-linux-gnu", "libcuda.so.570.133.07"),
        lib("libnvidia-ml.so.1", "/usr/lib/x86_64-linux-gnu", "libnvidia-ml.so.570.133.07"),
    ];
    f.file(
        TORCH_PY,
        "__version__ = '2.4.1+cu124'\ndebug = False\ncuda: Optional[str] = '12.4'\nhip: Optional[str] = None\n",
    );
    all.push(("blackwell-gpu-old-pytorch", f));

    for (name, fx) in all {
        let dir = out.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        for (path, bytes) in &fx.files {
            let p = dir.join("fs").join(path.trim_start_matches('/'));
            std::fs::create_dir_all(p.parent().unwrap_or(&dir)).unwrap();
            std::fs::write(&p, bytes).unwrap();
        }
        write_capture_json(&dir, fx.meta).unwrap();
        println!("wrote {}", dir.display());
    }
}
