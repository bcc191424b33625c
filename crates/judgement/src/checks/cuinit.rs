//! The differential of "CUDA does not start" (CUDA-INIT, [`CUDA_DOES_NOT_START`]): from the
//! `CUresult` the probe's `cuInit` returned and the facts collected, the cause when they decide it,
//! else the causes that remain, most likely first.
//!
//! Sources: the CUDA Driver API's `CUresult` list
//! (<https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html>), the CUDA installation
//! guide's device-node section, NVIDIA's power-management README, the forward-compatibility and
//! Fabric Manager guides, and the public threads each cause in `docs/diagnosis.md` cites.

use super::Ctx;
use crate::diagnose::differential::{CUDA_DOES_NOT_START as D, CauseFinding, candidate_steps};
use crate::diagnose::system::KernelLog;
use crate::diagnose::{Check, FixStep, Verdict, parse};
use crate::i18n::Message;
use crate::msg;

/// What the facts say about a failed `cuInit`.
enum Why {
    /// The cause, with the fact that decides it.
    Decided(&'static str, Message),
    /// The causes that remain, most likely first.
    Candidates(Vec<&'static str>),
    /// A code outside the documented ones: no known cause fits.
    NotExplained,
}

/// CUDA-INIT's verdict for a `cuInit` that returned `code` (0 with no device counts as a
/// failure too: `code` is then `None`).
pub(super) fn cuda_does_not_start(c: Check, code: Option<i32>, cx: &Ctx) -> Check {
    let (name, _) = crate::knowledge::cuda::cu_result(code.unwrap_or(100));
    let c = match code {
        Some(code) => c.verdict(Verdict::Fail, msg!("cuInit failed with {name} ({code})", name = name, code = code)),
        None => c.verdict(Verdict::Fail, msg!("cuInit succeeded but CUDA sees no device")),
    };
    match why(code, cx) {
        Why::Decided(id, fact) => c
            .found(msg!("CUDA does not start: {cause}", cause = Message::new(D.name_of(id))))
            .cause(CauseFinding::decided(&D, id))
            .evidence(fact)
            .steps(fix(id)),
        Why::NotExplained => c
            .found(msg!("CUDA does not start ({name}): not explained by the known causes", name = name))
            .cause(CauseFinding::not_explained(&D))
            .explain(msg!("cuInit returned a code that none of the causes gpu-doctor knows produces. What stands out is in the evidence; the driver's own report holds what is needed next (attach it when asking NVIDIA's forum or support):"))
            .cmd("sudo nvidia-bug-report.sh"),
        Why::Candidates(ids) => {
            let finding = match code {
                Some(_) => msg!("CUDA does not start ({name})", name = name),
                None => msg!("CUDA starts but sees no GPU"),
            };
            c.found(finding)
                .cause(CauseFinding::candidates(&D, &ids))
                .explain(msg!(
                    "Nothing collected decides which cause it is: the steps ask about each, most likely first, with the command that confirms or rules it out."
                ))
                .steps(candidate_steps(&D, &ids))
        }
    }
}

fn why(code: Option<i32>, cx: &Ctx) -> Why {
    // Facts that decide whatever the code.
    if let Some(gpus) = silent_gpus(cx) {
        return Why::Decided(
            "gpu-not-answering",
            msg!("NVML: {gpus} answer every query with Unknown Error", gpus = gpus),
        );
    }
    if let Some(line) = rm_init_failed(cx) {
        return Why::Decided("driver-could-not-start-gpu", msg!("kernel log: {line}", line = Message::data(line)));
    }
    match code {
        Some(34) => return Why::Decided("stub-libcuda", msg!("cuInit returned CUDA_ERROR_STUB_LIBRARY (34)")),
        Some(2) => return Why::Decided("gpu-memory-full", msg!("cuInit returned CUDA_ERROR_OUT_OF_MEMORY (2)")),
        Some(802) => {
            // The daemons' names are readable for every user; in a container the host's are not
            // visible.
            let fm_runs =
                cx.v.meta()
                    .holders
                    .as_ref()
                    .filter(|_| cx.container.is_none())
                    .is_some_and(|h| h.runs("nvidia-fabricmanager"));
            return if fm_runs {
                Why::Decided(
                    "fabric-not-ready",
                    msg!("cuInit returned CUDA_ERROR_SYSTEM_NOT_READY (802) while nvidia-fabricmanager runs"),
                )
            } else {
                Why::Decided(
                    "fabric-manager-not-running",
                    msg!("cuInit returned CUDA_ERROR_SYSTEM_NOT_READY (802): the GPUs wait for their NVSwitch fabric"),
                )
            };
        }
        Some(803 | 804) => {
            return match compat_libcuda(cx) {
                Some(path) => Why::Decided(
                    "forward-compat-mismatch",
                    msg!("the CUDA library loaded is a forward-compatibility one: {path}", path = path),
                ),
                None if code == Some(804) => Why::Decided(
                    "forward-compat-mismatch",
                    msg!("cuInit returned CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804)"),
                ),
                None => Why::Decided(
                    "module-library-mismatch",
                    msg!("cuInit returned CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803) with the driver's own libcuda"),
                ),
            };
        }
        _ => {}
    }
    if let Some(fact) = uvm_missing(cx) {
        return Why::Decided("uvm-not-loaded", fact);
    }
    if (code == Some(100) || code.is_none()) && hides_every_gpu(cx) {
        return Why::Decided(
            "gpus-hidden",
            msg!(
                "CUDA_VISIBLE_DEVICES={val} names no GPU here",
                val = format!("{:?}", cx.env("CUDA_VISIBLE_DEVICES").unwrap_or(""))
            ),
        );
    }
    let in_container = cx.container.is_some();
    match code {
        Some(46) => match blocking_mode(cx) {
            Some((i, mode)) => {
                Why::Decided("compute-mode-blocks", msg!("GPU {i}: compute mode {mode}", i = i, mode = mode))
            }
            None => Why::Candidates(vec!["compute-mode-blocks", "container-blocks-device"]),
        },
        Some(999) => match resumes_since_boot(cx) {
            Some(n) => Why::Decided(
                "uvm-stale-after-resume",
                msg!("/sys/power/suspend_stats/success: {n} suspend and resume since boot", n = n),
            ),
            None => {
                let mut ids = vec!["uvm-stale-after-resume", "gpu-not-answering"];
                if in_container {
                    ids.insert(0, "container-blocks-device");
                }
                Why::Candidates(ids)
            }
        },
        Some(3) => match hmm_on(cx) {
            Some(true) => Why::Decided(
                "uvm-hmm-failure",
                msg!(
                    "the open kernel module runs with nvidia-uvm's HMM support on (uvm_disable_hmm is not set), and NVML answers while cuInit fails"
                ),
            ),
            Some(false) => Why::Candidates(vec!["driver-could-not-start-gpu", "uvm-stale-after-resume"]),
            None => Why::Candidates(vec!["uvm-hmm-failure", "driver-could-not-start-gpu", "uvm-stale-after-resume"]),
        },
        Some(304) => Why::Candidates(vec!["container-blocks-device", "uvm-not-loaded"]),
        Some(100) | None if in_container => {
            Why::Candidates(vec!["container-blocks-device", "uvm-not-loaded", "gpus-hidden"])
        }
        Some(100) | None => Why::Candidates(vec!["uvm-not-loaded", "gpus-hidden", "driver-could-not-start-gpu"]),
        _ => Why::NotExplained,
    }
}

/// The GPUs NVML lists but that answer every live query with NVML's "Unknown Error" (the inventory
/// read at start-up came through; nothing after it did): "GPU 0, GPU 1".
pub(super) fn silent_gpus(cx: &Ctx) -> Option<String> {
    let silent: Vec<String> = cx
        .nvml_samples()
        .iter()
        .filter(|s| {
            // NVML's words for NVML_ERROR_UNKNOWN, and the Rust binding's (in captures made
            // before gpu-doctor used NVML's).
            let unknown = |m: Option<&Message>| {
                m.is_some_and(|m| {
                    let t = m.en();
                    t.eq_ignore_ascii_case("Unknown Error") || t == "an internal driver error occurred"
                })
            };
            [
                s.util_gpu_pct.na_reason(),
                s.vram_used_bytes.na_reason(),
                s.temp_c.na_reason(),
                s.power_w.na_reason(),
                s.sm_clock_mhz.na_reason(),
            ]
            .into_iter()
            .all(unknown)
        })
        .map(|s| format!("GPU {}", s.index))
        .collect();
    (!silent.is_empty()).then(|| silent.join(", "))
}

/// A kernel-log line in which the driver failed to start a GPU.
fn rm_init_failed(cx: &Ctx) -> Option<String> {
    let KernelLog::Lines(lines) = &cx.v.meta().kernel_log else { return None };
    lines.iter().find(|l| parse::is_rm_init_failure(l)).cloned()
}

/// The loaded libcuda, when it is a forward-compatibility one (`cuda-compat`: a `compat` folder).
fn compat_libcuda(cx: &Ctx) -> Option<String> {
    let lib = cx.v.meta().libraries.iter().find(|l| l.name == "libcuda.so.1")?;
    [&lib.path, &lib.real_path].into_iter().find(|p| p.contains("/compat/")).cloned()
}

/// The fact that `nvidia-uvm` is missing, outside WSL and containers: the module not loaded while
/// `nvidia` is, or its device file absent while `/dev/nvidiactl` is there.
fn uvm_missing(cx: &Ctx) -> Option<Message> {
    if cx.wsl.is_some() {
        return None;
    }
    if cx.container.is_none() && cx.module("nvidia") == Some(true) && cx.module("nvidia_uvm") == Some(false) {
        return Some(msg!("/proc/modules: nvidia is loaded, nvidia_uvm is not"));
    }
    let nodes = &cx.v.meta().device_nodes;
    let has = |p: &str| nodes.iter().any(|n| n.path == p);
    (has("/dev/nvidiactl") && !has("/dev/nvidia-uvm")).then(|| msg!("/dev/nvidiactl is there, /dev/nvidia-uvm is not"))
}

fn hides_every_gpu(cx: &Ctx) -> bool {
    let Some(val) = cx.env("CUDA_VISIBLE_DEVICES") else { return false };
    let gpus = cx.nvml_gpus();
    if gpus.is_empty() {
        return val.trim().is_empty();
    }
    let vis = parse::cuda_visible(val, &gpus);
    vis.gpus.is_empty() && vis.mig.is_empty()
}

/// A GPU whose compute mode keeps a new program off it.
fn blocking_mode(cx: &Ctx) -> Option<(u32, String)> {
    cx.facts().iter().find_map(|f| {
        f.compute_mode
            .value()
            .filter(|m| m.as_str() == "Prohibited" || m.as_str() == "ExclusiveProcess")
            .map(|m| (f.index, m.clone()))
    })
}

/// How many times the machine suspended and resumed since it booted, when at least once
/// (`/sys/power/suspend_stats/success`).
fn resumes_since_boot(cx: &Ctx) -> Option<u64> {
    cx.v.read("/sys/power/suspend_stats/success")?.trim().parse().ok().filter(|n| *n > 0)
}

/// Whether nvidia-uvm's HMM support is on: the open kernel module (only it uses HMM) with
/// `uvm_disable_hmm` not set. `None` when the facts are not there.
fn hmm_on(cx: &Ctx) -> Option<bool> {
    let (_, open) = parse::driver_version(&cx.v.read("/proc/driver/nvidia/version")?)?;
    if !open {
        return Some(false);
    }
    let disabled = cx.v.read("/sys/module/nvidia_uvm/parameters/uvm_disable_hmm")?;
    Some(!matches!(disabled.trim(), "Y" | "y" | "1"))
}

/// The fix steps of a decided cause.
pub(super) fn fix(id: &str) -> Vec<FixStep> {
    let t = FixStep::Text;
    let c = |s: &str| FixStep::Command(s.to_string());
    match id {
        "uvm-not-loaded" => vec![
            t(msg!("Load the module; it creates /dev/nvidia-uvm:")),
            c("sudo modprobe nvidia-uvm"),
            t(msg!("If the device file is still missing, NVIDIA's helper creates it:")),
            c("sudo nvidia-modprobe -u -c=0"),
        ],
        "uvm-stale-after-resume" => vec![
            t(msg!("Close the programs using CUDA, then reload the module (or reboot):")),
            c("sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm"),
            t(msg!(
                "So that it does not recur, let the driver keep the GPU's state across suspend with NVIDIA's suspend services (the driver's power-management README):"
            )),
            c("sudo systemctl enable nvidia-suspend.service nvidia-hibernate.service nvidia-resume.service"),
        ],
        "gpu-not-answering" => vec![
            t(msg!("Reset the GPU (as root, with nothing running on it: nvidia-smi -r) or reboot:")),
            c("sudo reboot"),
            t(msg!(
                "If it recurs, update the driver. With the proprietary kernel module, turning the GSP firmware off is NVIDIA's documented workaround for firmware hangs (the open module always uses it):"
            )),
            c("echo 'options nvidia NVreg_EnableGpuFirmware=0' | sudo tee /etc/modprobe.d/nvidia-gsp.conf"),
        ],
        "driver-could-not-start-gpu" => vec![
            t(msg!(
                "The kernel log lines around it say why. A driver release that cannot start this GPU needs another one (a newer release, or the last one that worked); a GPU that fails with every driver needs the vendor:"
            )),
            c("sudo dmesg | grep -i -e NVRM -e Xid"),
        ],
        "uvm-hmm-failure" => vec![
            t(msg!(
                "Turn off nvidia-uvm's HMM support (a known bug of the open kernel module), then reload the module or reboot:"
            )),
            c("echo 'options nvidia_uvm uvm_disable_hmm=1' | sudo tee /etc/modprobe.d/nvidia-uvm-hmm.conf"),
            c("sudo modprobe -r nvidia_uvm && sudo modprobe nvidia_uvm"),
        ],
        "module-library-mismatch" => vec![t(msg!("Reboot, so the updated kernel module loads:")), c("sudo reboot")],
        "forward-compat-mismatch" => vec![t(msg!(
            "Take the cuda-compat folder off LD_LIBRARY_PATH (and out of the loader's configuration): forward compatibility works only on data-center GPUs, with a compat package made for the driver that runs."
        ))],
        "stub-libcuda" => vec![t(msg!(
            "Take the toolkit's stubs folder (…/lib64/stubs) off LD_LIBRARY_PATH: those libraries are for linking, not for running."
        ))],
        "compute-mode-blocks" => vec![
            t(msg!(
                "On a shared server this mode may be the administrators' choice: ask them. On your own machine, return it to the default:"
            )),
            c("sudo nvidia-smi -c DEFAULT"),
        ],
        "fabric-manager-not-running" => vec![
            t(msg!("Start the fabric manager (its package must be the same version as the driver):")),
            c("sudo systemctl enable --now nvidia-fabricmanager"),
        ],
        "fabric-not-ready" => vec![
            t(msg!(
                "The fabric manager's package must be exactly the driver's version; its log says whether it is and which NVSwitch or NVLink failed:"
            )),
            c("journalctl -u nvidia-fabricmanager -n 50 --no-pager"),
            t(msg!("After installing the matching fabric manager (or fixing the fault), restart it:")),
            c("sudo systemctl restart nvidia-fabricmanager"),
        ],
        "gpus-hidden" => vec![
            t(msg!(
                "Unset CUDA_VISIBLE_DEVICES, or set it to GPU indices or UUIDs that exist here (nvidia-smi -L lists them):"
            )),
            c("unset CUDA_VISIBLE_DEVICES"),
        ],
        "gpu-memory-full" => vec![
            t(msg!("Close the programs that hold the GPU's memory:")),
            c("nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv"),
        ],
        "container-blocks-device" => vec![t(msg!(
            "Start the container with the GPUs passed in: docker run --gpus all, podman run --device nvidia.com/gpu=all, or a Kubernetes pod with an nvidia.com/gpu limit."
        ))],
        _ => Vec::new(),
    }
}
