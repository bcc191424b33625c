//! Windows-only checks (WIN-*): the display adapters and their Device Manager status, the driver
//! version in NVIDIA's numbering, where nvml.dll is (and stray copies), the driver model (WDDM /
//! TCC / MCDM), the GPU watchdog (TDR) settings and the resets it made, PyTorch builds in the
//! Python environments, per-app graphics preferences on hybrid laptops, the Windows version and
//! WSL from the Windows side. They are part of a Windows machine's (or capture's) checklist only
//! and read the capture's `meta.windows` ([`crate::diagnose::winfacts`], where their sources are
//! listed), so a Windows capture is judged the same on Linux.
//!
//! Sources: Microsoft Learn, "Testing and debugging TDR during driver development" (the
//! `TdrLevel`, `TdrDelay` and `TdrDdiDelay` registry keys); the NVML API reference
//! (<https://docs.nvidia.com/deploy/nvml-api/>) for the driver model and version queries.

use super::{Ctx, MISSING, WIN_01};
use crate::diagnose::system::Platform;
use crate::diagnose::system::Tdr;
use crate::diagnose::winfacts::{self, WindowsFacts};
use crate::diagnose::{Check, Verdict};
use crate::i18n::Message;
use crate::msg;
use crate::telemetry::source::SourceStatus;

fn facts<'a>(cx: &'a Ctx) -> Option<&'a WindowsFacts> {
    cx.v.meta().windows.as_ref()
}

/// "552.22 (31.0.15.5222)", or the file version as it is when it is not NVIDIA's numbering.
fn nvidia_version(file_version: &str) -> String {
    match crate::knowledge::windows::windows_driver_version(file_version) {
        Some(v) => format!("{v} ({file_version})"),
        None => file_version.to_string(),
    }
}

/// WIN-ADAPTER: Windows sees the NVIDIA GPU, an NVIDIA driver drives it and Device Manager reports
/// no problem code.
pub(super) fn win_adapter(c: Check, cx: &Ctx) -> Check {
    let Some(f) = facts(cx) else { return c.verdict(Verdict::Skipped, crate::i18n::Message::new(MISSING)) };
    let mut c = c;
    for a in &f.adapters {
        let mut state = match a.problem {
            Some(0) => msg!("working"),
            Some(p) => winfacts::problem_text(p).0,
            None => msg!("status unknown"),
        };
        if let Some(p) = &a.power_state {
            let power =
                if a.asleep() { msg!(", power state {p} (asleep)", p = p) } else { msg!(", power state {p}", p = p) };
            state = Message::join([state, power], &Message::default());
        }
        // NVIDIA's numbering only for NVIDIA's drivers (Intel's and AMD's follow other rules).
        let version = |v: &String| if a.is_nvidia() && !a.basic_display() { nvidia_version(v) } else { v.clone() };
        let driver = match (&a.provider, &a.driver_version) {
            (Some(p), Some(v)) => msg!("{provider} driver {version}", provider = p, version = version(v)),
            (None, Some(v)) => msg!("driver {version}", version = version(v)),
            _ => msg!("no driver"),
        };
        c = c.evidence(msg!(
            "{adapter}: {driver}, {state} [{id}]",
            adapter = a.name,
            driver = driver,
            state = state,
            id = a.instance_id
        ));
    }
    let nvidia: Vec<&winfacts::DisplayAdapter> = f.nvidia().collect();
    let nvml_gpus = cx.nvml.map_or(0, |n| n.inventory.gpus.len());
    if nvidia.is_empty() && nvml_gpus > 0 {
        // The driver answers for GPUs the display-adapter list lacks: the list is what is short,
        // not the GPU (a compute-only card, or a machine whose device list could not be read).
        return c
            .verdict(
                Verdict::Info,
                msg!("NVML answers for {n} GPU(s); none is listed as a display adapter", n = nvml_gpus),
            )
            .found(msg!("The NVIDIA driver answers for {n} GPU(s)", n = nvml_gpus))
            .explain(msg!("A compute-only GPU (TCC or MCDM driver model) can be listed outside 'Display adapters', e.g. under 'Compute accelerators'. The GPUs answer, so the driver works; Device Manager shows where they are listed."));
    }
    if nvidia.is_empty() {
        return c
            .verdict(Verdict::Fail, msg!("Windows lists no NVIDIA display adapter"))
            .found(msg!("Windows does not see an NVIDIA GPU"))
            .explain(msg!("Device Manager has no NVIDIA device: the GPU is not detected at all. On laptops the NVIDIA GPU can be switched off in the firmware (a 'hybrid/discrete graphics' or 'MUX' setting) or by the maker's power tool; on desktops the card may be unseated, unpowered or faulty."))
            .text(msg!("Desktops: power off, reseat the card and connect every power cable it has; try another PCIe slot. Laptops: check the firmware's graphics setting and the maker's control app (e.g. 'Eco mode')."))
            .text(msg!("Then look in Device Manager under 'Display adapters' (and 'Other devices') for the NVIDIA GPU:"))
            .cmd("devmgmt.msc");
    }
    if let Some(a) = nvidia.iter().find(|a| a.problem.is_some_and(|p| p != 0)) {
        let code = a.problem.unwrap_or(0);
        let (said, why) = winfacts::problem_text(code);
        let c = c.verdict(Verdict::Fail, msg!("{adapter}: {problem}", adapter = a.name, problem = said));
        return match code {
            22 => c
                .found(msg!("The NVIDIA GPU is disabled in Device Manager"))
                .explain(msg!("A disabled device gets no driver: NVML, CUDA and every program see no NVIDIA GPU."))
                .text(msg!(
                    "Enable it (Device Manager → Display adapters → right-click → Enable device), or in an administrator terminal:"
                ))
                .cmd(format!("pnputil /enable-device \"{}\"", a.instance_id)),
            28 => c
                .found(msg!("No driver is installed for the NVIDIA GPU"))
                .explain(msg!("Windows sees the GPU but {why}.", why = why))
                .text(msg!("Install the NVIDIA driver for this GPU from nvidia.com/drivers (or the laptop maker's support page), then reboot.")),
            _ => super::winstopped::stopped_gpu(c, f, a, &nvidia, code),
        };
    }
    if let Some(a) =
        nvidia.iter().find(|a| a.basic_display() || a.provider.as_deref().is_some_and(|p| p.contains("Microsoft")))
    {
        return c
            .verdict(
                Verdict::Fail,
                msg!("the NVIDIA GPU ({id}) runs on Windows' fallback driver: {adapter}", id = a.instance_id, adapter = a.name),
            )
            .found(msg!("The NVIDIA driver is not installed"))
            .explain(msg!("Windows drives the GPU with its basic display driver: the screen works, but there is no nvml.dll, no CUDA and no NVIDIA control panel."))
            .text(msg!("Install the NVIDIA driver for this GPU from nvidia.com/drivers (or the laptop maker's support page), then reboot."));
    }
    let list = nvidia
        .iter()
        .map(|a| match &a.driver_version {
            Some(v) => msg!("{adapter} (driver {version})", adapter = a.name, version = nvidia_version(v)),
            None => Message::data(&a.name),
        })
        .collect::<Vec<_>>();
    let list = Message::join(list, &msg!(", "));
    let c = c.verdict(Verdict::Pass, list).found(msg!("Windows sees the NVIDIA GPU and its driver works"));
    if f.hybrid() && nvidia.iter().any(|a| a.asleep()) {
        // A sleeping dGPU is how hybrid laptops save power, not a fault: say so before the user
        // reads 0 % in Task Manager as "the GPU is not used".
        return c.explain(msg!("The NVIDIA GPU is asleep: on a laptop with two GPUs Windows powers it down while no program uses it, and Task Manager then shows it at 0 %. A CUDA program (or nvidia-smi) wakes it within a second; if your program still runs on the integrated GPU or the CPU, the check 'Programs held on the integrated GPU' and the PyTorch check say why."));
    }
    c
}

/// WIN-TORCH: the PyTorch builds in the Python environments found can use the GPU.
pub(super) fn win_torch(c: Check, cx: &Ctx) -> Check {
    if cx.v.meta().quick {
        return super::left_out_by_quick(c);
    }
    let Some(f) = facts(cx) else { return c.verdict(Verdict::Skipped, crate::i18n::Message::new(MISSING)) };
    let with_torch: Vec<&winfacts::PythonEnv> = f.pythons.iter().filter(|p| p.torch.is_some()).collect();
    if with_torch.is_empty() {
        return c
            .verdict(Verdict::Skipped, msg!("no PyTorch in the {n} Python environment(s) found", n = f.pythons.len()));
    }
    let mut c = c;
    for p in &with_torch {
        c = c.evidence(msg!(
            "{prefix}: torch {version} ({build})",
            prefix = p.prefix,
            version = p.torch.as_deref().unwrap_or("?"),
            build = p.torch_cuda.as_deref().map_or(msg!("a CPU-only build"), |v| msg!("built for CUDA {v}", v = v))
        ));
    }
    let cpu: Vec<&&winfacts::PythonEnv> = with_torch.iter().filter(|p| p.torch_cuda.is_none()).collect();
    if cpu.is_empty() {
        return c
            .verdict(Verdict::Pass, msg!("{n} environment(s) with a CUDA build of PyTorch", n = with_torch.len()))
            .found(msg!("PyTorch is built for CUDA"));
    }
    let wheel = cx
        .nvml
        .and_then(|n| n.inventory.cuda_driver_version.as_ref())
        .and_then(|r| r.value().cloned())
        .and_then(|v| crate::knowledge::frameworks::torch_wheel_for_driver(&v, None))
        .map(|(tag, _)| tag)
        .unwrap_or("cu126");
    let mut c = c
        .verdict(
            Verdict::Fail,
            msg!(
                "CPU-only PyTorch ({version}) in {envs}",
                version = cpu[0].torch.as_deref().unwrap_or("?"),
                envs = cpu.iter().map(|p| p.prefix.as_str()).collect::<Vec<_>>().join(", ")
            ),
        )
        .found(msg!("PyTorch is a CPU-only build: it cannot use the GPU"))
        .explain(msg!("A '+cpu' wheel (what a plain `pip install torch` gives on Windows) has no CUDA at all: torch.cuda.is_available() is False and front ends say 'Torch is not able to use GPU', whatever the driver. Reinstall it from PyTorch's CUDA index into the same environment."));
    for p in cpu.iter().take(3) {
        c = c.cmd(format!(
            "\"{}\" -m pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/{wheel}",
            python_exe(&p.prefix)
        ));
    }
    c
}

/// WIN-GPUPREF: on a hybrid laptop, programs set to the power-saving GPU.
pub(super) fn win_gpupref(c: Check, cx: &Ctx) -> Check {
    let Some(f) = facts(cx) else { return c.verdict(Verdict::Skipped, crate::i18n::Message::new(MISSING)) };
    if !f.hybrid() {
        return c.verdict(Verdict::Skipped, msg!("one GPU: nothing to choose between"));
    }
    let saving: Vec<(&String, &String)> =
        f.gpu_preferences.iter().filter(|(_, v)| winfacts::gpu_preference(v) == Some(1)).collect();
    let mut c = c;
    for (exe, v) in &f.gpu_preferences {
        c = c.evidence(format!("{exe}: {v}"));
    }
    let explain = msg!(
        "CUDA programs (PyTorch, TensorFlow, ComfyUI, Ollama's CUDA backend) always run on the NVIDIA GPU whatever this setting says; it decides which GPU draws DirectX, OpenGL and Vulkan work, which is what DirectML and Vulkan backends (some Stable Diffusion and LLM front ends) compute on."
    );
    if saving.is_empty() {
        // Pythons without a high-performance preference: their DirectML or Vulkan work goes to
        // the power-saving GPU, Windows' default for programs without one on hybrid laptops.
        let unset: Vec<String> = f
            .pythons
            .iter()
            .map(|p| python_exe(&p.prefix))
            .filter(|exe| {
                !f.gpu_preferences
                    .iter()
                    .any(|(k, v)| k.eq_ignore_ascii_case(exe) && winfacts::gpu_preference(v) == Some(2))
            })
            .collect();
        if unset.is_empty() {
            return c
                .verdict(
                    Verdict::Info,
                    msg!(
                        "hybrid graphics: {n} program(s) with a preference, none set to power saving",
                        n = f.gpu_preferences.len()
                    ),
                )
                .found(msg!("No program is held on the power-saving GPU"))
                .explain(explain);
        }
        let mut c = c
            .verdict(Verdict::Info, msg!("hybrid graphics: {n} Python interpreter(s) without a GPU preference use the power-saving GPU for DirectX work", n = unset.len()))
            .found(msg!("Python's DirectML and Vulkan work runs on the integrated GPU"))
            .explain(explain)
            .text(msg!("If a DirectML or Vulkan front end runs on the Intel/AMD GPU: Settings → System → Display → Graphics → add python.exe → High performance, or for this user:"));
        for exe in unset.iter().take(3) {
            c = c.cmd(format!("reg add \"HKCU\\Software\\Microsoft\\DirectX\\UserGpuPreferences\" /v \"{exe}\" /t REG_SZ /d \"GpuPreference=2;\" /f"));
        }
        return c;
    }
    let names = saving.iter().map(|(e, _)| e.rsplit('\\').next().unwrap_or(e)).collect::<Vec<_>>().join(", ");
    c.verdict(Verdict::Warn, msg!("set to the power-saving (integrated) GPU: {names}", names = names))
        .found(msg!("{names} set to run on the integrated GPU", names = names))
        .explain(explain)
        .text(msg!("Settings → System → Display → Graphics: choose the program, Options → High performance (the NVIDIA GPU). Then restart it."))
}

/// The interpreter of a Python environment: `Scripts\python.exe` in a venv, `python.exe` otherwise.
fn python_exe(prefix: &str) -> String {
    let p = prefix.trim_end_matches('\\');
    let lower = p.to_ascii_lowercase();
    if lower.ends_with("venv") || lower.ends_with(".venv") {
        format!("{p}\\Scripts\\python.exe")
    } else {
        format!("{p}\\python.exe")
    }
}

/// WIN-TDR: driver resets Windows made in the last 7 days.
pub(super) fn win_tdr(c: Check, cx: &Ctx) -> Check {
    let Some(f) = facts(cx) else { return c.verdict(Verdict::Skipped, crate::i18n::Message::new(MISSING)) };
    let Some(events) = &f.tdr_events else {
        return match f.watchdog_dumps.len() {
            0 => c.verdict(Verdict::Skipped, msg!("the event log was not read")),
            n => c
                .verdict(
                    Verdict::Warn,
                    msg!("{n} watchdog report(s) in LiveKernelReports\\WATCHDOG in the last 7 days", n = n),
                )
                .found(msg!("Windows reset the graphics driver recently"))
                .evidence(f.watchdog_dumps.join(", ")),
        };
    };
    let n = events.len();
    let mut c = c;
    for e in events.iter().rev().take(5) {
        c = c.evidence(e.clone());
    }
    if n == 0 {
        return c
            .verdict(Verdict::Pass, msg!("no driver reset (event 4101) in the last 7 days"))
            .found(msg!("No driver resets lately"));
    }
    let tdr = cx.v.meta().tdr.unwrap_or_default();
    let c = c
        .verdict(
            if n >= 3 { Verdict::Fail } else { Verdict::Warn },
            msg!("the display driver stopped responding and was recovered {n} time(s) in 7 days (event 4101)", n = n),
        )
        .found(msg!("Windows reset the NVIDIA driver {n} time(s) this week", n = n))
        .explain(msg!("Windows resets the driver when the GPU does not answer within the watchdog's limit (TdrDelay, 2 s by default). Two causes: a compute kernel that runs longer than that on a GPU that also drives a display (CUDA error 702, 'the launch timed out'), or an unstable GPU (overclock or undervolt, overheating, power delivery, a driver bug)."));
    if tdr.delay.is_some_and(|d| d > 2) {
        c.text(msg!("The watchdog limit is already raised: look for instability. Remove overclocks and undervolts (MSI Afterburner and similar back to defaults), check temperatures under load, update or clean-reinstall the driver."))
    } else {
        c.text(msg!("If the resets come during long CUDA work on the GPU that drives your monitor: run the display on another GPU, or raise the limit in an administrator terminal and reboot:"))
            .cmd("reg add \"HKLM\\System\\CurrentControlSet\\Control\\GraphicsDrivers\" /v TdrDelay /t REG_DWORD /d 60 /f")
            .text(msg!("If they come during games or light use: remove overclocks and undervolts, check temperatures and power cables, and clean-reinstall the driver."))
    }
}

/// WIN-VER: the Windows version, and settings that change how the GPU is shared.
pub(super) fn win_ver(c: Check, cx: &Ctx) -> Check {
    let Some(f) = facts(cx) else { return c.verdict(Verdict::Skipped, crate::i18n::Message::new(MISSING)) };
    let hags = match f.hags {
        Some(2) => msg!("hardware-accelerated GPU scheduling on"),
        Some(1) => msg!("hardware-accelerated GPU scheduling off"),
        _ => msg!("hardware-accelerated GPU scheduling not set"),
    };
    c.verdict(Verdict::Info, msg!("{edition}; {hags}", edition = f.edition(), hags = hags))
        .found(msg!("{edition} is installed", edition = f.edition()))
}

/// WIN-WSL: WSL from the Windows side: installed distributions and whether this Windows runs
/// CUDA in them.
pub(super) fn win_wsl(c: Check, cx: &Ctx) -> Check {
    let Some(f) = facts(cx) else { return c.verdict(Verdict::Skipped, crate::i18n::Message::new(MISSING)) };
    let Some(distros) = &f.wsl_distros else { return c.verdict(Verdict::Skipped, msg!("WSL is not installed")) };
    let c = c.evidence(msg!(
        "distributions: {list}",
        list = if distros.is_empty() { msg!("none") } else { Message::data(distros.join(", ")) }
    ));
    match f.build {
        Some(b) if b < winfacts::WSL_GPU_MIN_BUILD => c
            .verdict(Verdict::Warn, msg!("Windows build {b} is older than 19044 (Windows 10 21H2): WSL 2 gets no GPU", b = b))
            .found(msg!("This Windows is too old for CUDA in WSL"))
            .text(msg!("Update Windows (Settings → Windows Update) to Windows 10 21H2 or Windows 11, then update WSL:"))
            .cmd("wsl --update"),
        _ => c
            .verdict(Verdict::Info, msg!("{n} WSL distribution(s); this Windows passes the GPU to WSL 2", n = distros.len()))
            .found(msg!("WSL 2 can use the GPU here"))
            .explain(msg!("Inside WSL the GPU comes from this Windows driver (/usr/lib/wsl/lib): install no Linux NVIDIA driver in the distribution. Run gpu-doctor-cli check inside it for that side.")),
    }
}

pub(super) fn driver_model(c: Check, cx: &Ctx) -> Check {
    if cx.v.meta().platform != Platform::Windows {
        return c.not_here("Windows", msg!("Windows only"));
    }
    let models: Vec<(u32, (String, String))> =
        cx.facts().iter().filter_map(|f| f.driver_model.value().map(|m| (f.index, m.clone()))).collect();
    if models.is_empty() {
        return c.verdict(Verdict::Skipped, msg!("not reported"));
    }
    if let Some((i, (cur, pend))) = models.iter().find(|(_, (c, p))| c != p) {
        return c
            .verdict(Verdict::Warn, msg!("GPU {i}: {cur} now, {pend} after a reboot", i = i, cur = cur, pend = pend))
            .found(msg!("A driver model change waits for a reboot"))
            .text(msg!("Reboot to apply the pending driver model."));
    }
    let list = models.iter().map(|(i, (cur, _))| format!("GPU {i}: {cur}")).collect::<Vec<_>>().join(", ");
    c.verdict(Verdict::Info, list).found(msg!("The driver model is set")).explain(msg!(
        "WDDM is needed for displays, DirectX and WSL; TCC/MCDM are for compute-only cards (no display, no WSL)."
    ))
}

/// The TDR verdict for these registry values (pure, so it is tested on every platform).
pub fn tdr_check(t: &Tdr) -> Check {
    tdr_verdict(WIN_01.blank(), t)
}

/// WIN-01's verdict on `c` for these registry values.
fn tdr_verdict(c: Check, t: &Tdr) -> Check {
    let shown = |v: Option<u32>, default: u32| v.map_or(format!("{default} (default)"), |x| x.to_string());
    let c = c.evidence(format!(
        "HKLM\\System\\CurrentControlSet\\Control\\GraphicsDrivers: TdrLevel {}, TdrDelay {} s, TdrDdiDelay {} s",
        shown(t.level, 3),
        shown(t.delay, 2),
        shown(t.ddi_delay, 5)
    ));
    match t.level {
        Some(0) => c
            .verdict(
                Verdict::Warn,
                msg!("the GPU watchdog is off (TdrLevel 0): a hung GPU freezes the desktop instead of being reset"),
            )
            .found(msg!("The GPU watchdog (TDR) is off"))
            .text(msg!("Delete the TdrLevel value (or set it to 3) under HKLM\\System\\CurrentControlSet\\Control\\GraphicsDrivers, then reboot.")),
        _ if t.delay.is_some_and(|d| d > 2) => c
            .verdict(
                Verdict::Info,
                msg!("TdrDelay raised to {delay} s: long GPU kernels on a display GPU are allowed longer before Windows resets the driver", delay = t.delay.unwrap_or(2)),
            )
            .found(msg!("The GPU watchdog allows long kernels")),
        _ => c
            .verdict(Verdict::Info, msg!("defaults: Windows resets the driver when the GPU does not respond for 2 s"))
            .found(msg!("The GPU watchdog has its default 2 s limit"))
            .explain(msg!("A compute kernel running longer than that on a GPU that drives a display fails with 'the launch timed out' (CUDA error 702); split long kernels or use a GPU without a monitor.")),
    }
}

pub(super) fn tdr_settings(c: Check, cx: &Ctx) -> Check {
    if cx.v.meta().platform != Platform::Windows {
        return c.not_here("Windows", msg!("Windows only"));
    }
    match &cx.v.meta().tdr {
        Some(t) => tdr_verdict(c, t),
        None => c.verdict(Verdict::Skipped, crate::i18n::Message::new(MISSING)),
    }
}

pub(super) fn nvml_dll_found(c: Check, cx: &Ctx) -> Check {
    if cx.v.meta().platform != Platform::Windows {
        return c.not_here("Windows", msg!("Windows only"));
    }
    // Copies of nvml.dll from another driver than the one installed (an old NVSMI folder left by a
    // Standard driver, a copy beside a program): whoever loads them gets a version mismatch.
    let driver = facts(cx)
        .and_then(|f| f.nvidia().find_map(|a| a.driver_version.clone()))
        .and_then(|v| crate::knowledge::windows::windows_driver_version(&v));
    // Copies whose version is not the installed driver's: in the driver store they are older
    // packages Windows keeps for rollback (loaded by nothing); anywhere else a program may load them.
    let other_versions: Vec<(String, String)> = facts(cx)
        .map(|f| {
            f.nvidia_files
                .iter()
                .filter(|x| x.path.to_ascii_lowercase().ends_with("nvml.dll"))
                .filter_map(|x| {
                    let v = x.version.as_deref().and_then(crate::knowledge::windows::windows_driver_version)?;
                    (driver.as_ref().is_some_and(|d| *d != v)).then(|| (x.path.clone(), v))
                })
                .collect()
        })
        .unwrap_or_default();
    let in_store = |p: &str| p.to_ascii_lowercase().contains("\\driverstore\\");
    let (kept, stray): (Vec<_>, Vec<_>) = other_versions.into_iter().partition(|(p, _)| in_store(p));
    if let (Some(d), Some((path, v))) = (&driver, stray.first()) {
        let mut c = c
            .verdict(Verdict::Warn, msg!("{path} is from driver {v}, but driver {d} is installed", path = path, v = v, d = d))
            .found(msg!("An nvml.dll from another driver is left on this machine"))
            .explain(msg!("Programs that load this copy (tools that look in its folder first, old scripts that call NVSMI\\nvidia-smi.exe) fail with 'Driver/library version mismatch' or report the old driver. The installed driver keeps its own nvml.dll in System32 and the driver store."));
        for (p, v) in &stray {
            c = c.evidence(msg!("{path}: driver {version}", path = p, version = v));
        }
        return c
            .text(msg!("Delete the stale copy (an administrator terminal), or reinstall the driver with 'Perform a clean installation':"))
            .cmd(format!("del \"{path}\""));
    }
    match cx.nvml.map(|n| &n.status) {
        Some(SourceStatus::Nvml { library, .. }) if !kept.is_empty() => {
            let mut versions: Vec<&str> = kept.iter().map(|(_, v)| v.as_str()).collect();
            versions.sort_unstable();
            versions.dedup();
            let mut c = c
                .verdict(
                    Verdict::Info,
                    msg!(
                        "loaded {library}; the driver store also keeps driver {versions}",
                        library = library,
                        versions = versions.join(", ")
                    ),
                )
                .found(msg!("nvml.dll is installed; older driver packages are kept"))
                .explain(msg!("Windows keeps the packages of earlier drivers in its driver store so that a driver can be rolled back; nothing loads their files, so they cause no version mismatch. They only take disk space."));
            for (p, v) in &kept {
                c = c.evidence(msg!("{path}: driver {version}", path = p, version = v));
            }
            c.text(msg!("To remove old driver packages, list them, then delete an old NVIDIA one by its oemNN.inf name with pnputil /delete-driver (an administrator terminal):"))
                .cmd("pnputil /enum-drivers /class Display")
        }
        Some(SourceStatus::Nvml { library, .. }) => {
            c.verdict(Verdict::Pass, msg!("loaded {library}", library = library)).found(msg!("nvml.dll is installed"))
        }
        Some(SourceStatus::Asleep { .. }) => {
            let mut c = c
                .verdict(Verdict::Info, msg!("not loaded while the GPU sleeps (loading it would wake the GPU)"))
                .found(msg!("nvml.dll is left unloaded while the GPU sleeps"));
            for x in facts(cx).map(|f| f.nvidia_files.as_slice()).unwrap_or_default() {
                c = c.evidence(format!(
                    "{}{}",
                    x.path,
                    x.version.as_ref().map(|v| format!(": {v}")).unwrap_or_default()
                ));
            }
            c
        }
        Some(SourceStatus::Unavailable(no)) if no.attempts.iter().all(|a| a.error.contains("load")) => {
            let mut c = c
                .verdict(Verdict::Fail, msg!("nvml.dll was not found in System32 or NVSMI"))
                .found(msg!("nvml.dll is missing"))
                .text(msg!("Reinstall the NVIDIA display driver (nvidia.com/drivers; a clean install)."));
            for a in &no.attempts {
                c = c.evidence(format!("{}: {}", a.path, a.error));
            }
            c
        }
        _ => c.verdict(Verdict::Skipped, msg!("the management library check above tells why NVML did not load")),
    }
}

pub(super) fn driver_version_on_windows(c: Check, cx: &Ctx) -> Check {
    if cx.v.meta().platform != Platform::Windows {
        return c.not_here("Windows", msg!("Windows only"));
    }
    let from_adapter = facts(cx).and_then(|f| f.nvidia().find_map(|a| a.driver_version.clone()));
    match cx.nvml.and_then(|n| n.inventory.driver_version.as_ref()).and_then(|r| r.value().cloned()).or(from_adapter) {
        Some(v) => {
            let shown = crate::knowledge::windows::windows_driver_version(&v).unwrap_or(v.clone());
            let package = match facts(cx).and_then(|f| f.dch) {
                Some(true) => msg!(" (DCH package)"),
                Some(false) => msg!(" (Standard package)"),
                None => Message::default(),
            };
            let c = c
                .verdict(Verdict::Info, msg!("NVIDIA driver {version}{package}", version = shown, package = package))
                .found(msg!("NVIDIA driver {version} is installed", version = shown))
                .evidence(msg!("reported: {version}", version = v));
            match facts(cx).and_then(|f| f.dch) {
                Some(dch) => c
                    .evidence(if dch {
                        msg!("nvlddmkm service has the DCHUVen value")
                    } else {
                        msg!("nvlddmkm service lacks the DCHUVen value")
                    })
                    .explain(msg!(
                        "Installed drivers are {kind} packages. The NVIDIA installer refuses a package of the other type with 'This NVIDIA graphics driver is not compatible with this version of Windows': download the {kind} type, or remove the installed driver first (Display Driver Uninstaller) to change type.",
                        kind = if dch { "DCH" } else { "Standard" }
                    )),
                None => c,
            }
        }
        None => c.verdict(Verdict::Skipped, msg!("not reported")),
    }
}

/// "...\\CUDA\\v12.4" → (12, 4): the toolkit version in a CUDA_PATH.
fn toolkit_version(path: &str) -> Option<(u32, u32)> {
    let last = path.trim_end_matches(['\\', '/']).rsplit(['\\', '/']).next()?;
    let (major, minor) = last.strip_prefix(['v', 'V'])?.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// WIN-CUDAPATH: the CUDA toolkit in CUDA_PATH is not newer than the CUDA version the driver
/// supports.
pub(super) fn win_cudapath(c: Check, cx: &Ctx) -> Check {
    let Some(path) = cx.v.meta().env.get("CUDA_PATH") else {
        return c.verdict(
            Verdict::Skipped,
            msg!(
                "no CUDA toolkit (CUDA_PATH is not set): not needed to run PyTorch or other programs that ship their CUDA runtime"
            ),
        );
    };
    let c = c.evidence(format!("CUDA_PATH={path}"));
    let Some((tk_major, tk_minor)) = toolkit_version(path) else {
        return c.verdict(Verdict::Skipped, msg!("the toolkit version is not in CUDA_PATH's folder name"));
    };
    let driver = cx
        .nvml
        .and_then(|n| n.inventory.cuda_driver_version.as_ref())
        .and_then(|r| r.value().cloned())
        .or_else(|| cx.v.meta().cuda.as_ref().and_then(|p| p.driver_version.clone()));
    let Some((d_major, d_minor)) = driver.as_deref().and_then(|d| {
        let (a, b) = d.split_once('.')?;
        Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?))
    }) else {
        return c.verdict(
            Verdict::Skipped,
            msg!("the driver's CUDA version is not known (the driver checks above say why)"),
        );
    };
    let (tk, drv) = (format!("{tk_major}.{tk_minor}"), format!("{d_major}.{d_minor}"));
    if tk_major > d_major {
        c.verdict(Verdict::Fail, msg!("CUDA toolkit {tk} is newer than the driver's CUDA {drv}", tk = tk, drv = drv))
            .found(msg!("The CUDA toolkit ({tk}) needs a newer driver", tk = tk))
            .explain(msg!("Programs you build with CUDA {tk} (and extensions pip compiles with it) fail on this driver with 'CUDA driver version is insufficient for CUDA runtime version': a driver runs toolkits of its own CUDA major version at most.", tk = tk))
            .text(msg!("Update the NVIDIA driver to one that supports CUDA {tk} (nvidia.com/drivers), or install a CUDA {major}.x toolkit and point CUDA_PATH at it.", tk = tk, major = d_major))
    } else if tk_major == d_major && tk_minor > d_minor {
        c.verdict(Verdict::Warn, msg!("CUDA toolkit {tk} is newer than the driver's CUDA {drv}", tk = tk, drv = drv))
            .found(msg!("The CUDA toolkit ({tk}) is newer than the driver", tk = tk))
            .explain(msg!("Within CUDA {major}.x, programs built with a newer toolkit mostly run (minor-version compatibility), but kernels compiled just in time from PTX fail with 'the provided PTX was compiled with an unsupported toolchain', and features newer than CUDA {drv} are missing.", major = d_major, drv = drv))
            .text(msg!("Update the NVIDIA driver to one that supports CUDA {tk} (nvidia.com/drivers).", tk = tk))
    } else {
        c.verdict(Verdict::Pass, msg!("CUDA toolkit {tk}; the driver supports CUDA {drv}", tk = tk, drv = drv))
            .found(msg!("The CUDA toolkit ({tk}) suits the driver", tk = tk))
    }
}

/// WIN-POWER: the power plan (and Windows 11's power mode) does not hold the machine back.
pub(super) fn win_power(c: Check, cx: &Ctx) -> Check {
    let Some(f) = facts(cx) else { return c.verdict(Verdict::Skipped, crate::i18n::Message::new(MISSING)) };
    let Some(scheme) = &f.power_scheme else { return c.verdict(Verdict::Skipped, crate::i18n::Message::new(MISSING)) };
    let plan = winfacts::power_plan(scheme);
    let mode = f.power_mode_ac.as_deref().and_then(winfacts::power_plan);
    let c = c.evidence(msg!(
        "active power plan: {plan} ({scheme})",
        plan = plan.map_or(msg!("a custom plan"), |p| crate::i18n::Message::new(p.0)),
        scheme = scheme
    ));
    let c = match (&f.power_mode_ac, mode) {
        (Some(g), Some((name, _))) => c.evidence(msg!(
            "power mode on mains power: {mode} ({guid})",
            mode = crate::i18n::Message::new(name),
            guid = g
        )),
        (Some(g), None) => c.evidence(msg!("power mode on mains power: {guid}", guid = g)),
        _ => c,
    };
    if plan.is_some_and(|p| p.1) {
        return c
            .verdict(Verdict::Warn, msg!("the Power saver plan is active: the CPU and the PCIe link are held at low speed"))
            .found(msg!("Windows' Power saver plan slows the machine"))
            .explain(msg!("Power saver caps the processor's speed and lets the PCIe link drop to a low-power state: data loading, preprocessing and host-to-GPU copies slow down, so the GPU waits. On laptops the GPU's own power limit is lowered as well."))
            .text(msg!("Switch to the Balanced plan (or High performance on a desktop):"))
            .cmd("powercfg /setactive SCHEME_BALANCED");
    }
    if mode.is_some_and(|m| m.1) {
        return c
            .verdict(Verdict::Warn, msg!("the power mode is 'Best power efficiency': the CPU and GPU are held back"))
            .found(msg!("Windows' power mode favours battery life"))
            .explain(msg!("With 'Best power efficiency' Windows limits processor speed and the laptop maker's tools usually lower the GPU's power limit too."))
            .text(msg!("Settings → System → Power & battery → Power mode: Balanced or Best performance:"))
            .cmd("start ms-settings:powersleep");
    }
    let name = match (plan, mode) {
        (Some((p, _)), Some((m, _))) => {
            msg!("{plan}; {mode}", plan = crate::i18n::Message::new(p), mode = crate::i18n::Message::new(m))
        }
        (Some((p, _)), None) => crate::i18n::Message::new(p),
        (None, _) => msg!("a custom power plan"),
    };
    c.verdict(Verdict::Pass, name).found(msg!("The power plan does not hold the machine back"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::system::Tdr;

    #[test]
    fn tdr_verdicts() {
        assert_eq!(tdr_check(&Tdr::default()).verdict, Verdict::Info);
        assert!(tdr_check(&Tdr::default()).evidence[0].en().contains("TdrLevel 3 (default), TdrDelay 2 (default) s"));
        let off = tdr_check(&Tdr { level: Some(0), ..Tdr::default() });
        assert_eq!(off.verdict, Verdict::Warn);
        assert!(off.fixes[0].en().contains("TdrLevel"));
        let long = tdr_check(&Tdr { level: Some(3), delay: Some(60), ddi_delay: None });
        assert!(long.summary.en().contains("60 s"), "{}", long.summary.en());
    }

    #[test]
    fn toolkit_versions_come_from_cuda_path_folder_names() {
        assert_eq!(toolkit_version("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.6"), Some((12, 6)));
        assert_eq!(toolkit_version("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\\"), Some((11, 8)));
        assert_eq!(toolkit_version("D:\\cuda"), None);
        assert_eq!(winfacts::power_plan("{A1841308-3541-4FAB-BC81-F71556F20B4A}"), Some(("Power saver", true)));
        assert_eq!(winfacts::power_plan("381b4222-f694-41f0-9685-ff5bb260df2e"), Some(("Balanced", false)));
        assert_eq!(winfacts::power_plan("0000"), None);
    }
}
