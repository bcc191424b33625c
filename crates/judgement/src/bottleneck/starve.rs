//! The feed-chain rules about the CPU: a GPU starved by its own job's CPU work (data-starved), and
//! a partly used GPU next to a CPU that other programs keep busy. Both need low or saw-tooth
//! utilization with the CPU saturated and the disk not; what tells them apart is the CPU used by
//! the processes on the GPU and their process trees (the `job_cpu` series). Where that series is
//! absent (no per-process CPU: Windows, a container) the data-starved verdict keeps firing on the
//! host's CPU alone, with a lower confidence and a line saying so.
//!
//! Every sentence matches its evidence: the saw-tooth is named only when it was detected, and the
//! thresholds quoted come from the constants the conditions use.

use super::context::{Ctx, GpuWindow};
use super::finding::{Bottleneck, Finding, verdict};
use crate::diagnose::Verdict;
use crate::{msg, tr_key};

/// Next steps for a GPU the CPU cannot feed.
const DATA_STARVED_STEPS: [&str; 4] = [
    tr_key!(
        "Raise the data loader's worker processes (PyTorch: DataLoader(num_workers=N) with N up to the number of cores, persistent_workers=True, pin_memory=True)."
    ),
    tr_key!(
        "Preprocess in parallel or ahead of time: decode and augment once and cache the result, or move augmentation into the workers instead of the main process."
    ),
    tr_key!(
        "Decode on the GPU where it is the bottleneck: NVIDIA DALI, torchvision.io.decode_jpeg(device='cuda'), NVDEC for video."
    ),
    tr_key!(
        "Then, one change at a time, raise the batch size while VRAM keeps 20-30 % headroom, and measure samples/s before and after."
    ),
];

/// Next steps for a GPU next to a CPU busy with other programs.
const BUSY_ELSEWHERE_STEPS: [&str; 3] = [
    tr_key!(
        "Find the programs that keep the CPU busy (top or htop sorted by CPU) and pause them, move them to another machine or lower their priority (nice -n 19)."
    ),
    tr_key!(
        "Then judge the GPU again: if it stays partly used with the CPU free, the job gives it too little work at a time (batch size, synchronisation in the loop)."
    ),
    tr_key!(
        "If the job must share the machine, give it cores of its own (taskset, cgroups cpusets) so the other programs cannot take them."
    ),
];

/// The explanation when the saw-tooth was detected.
const SAWTOOTH_EXPLANATION: &str = tr_key!(
    "The GPU finishes each batch and then waits while the CPU decodes, augments and collates the next one (the saw-tooth): the CPU side of the feed chain is the limit."
);

/// The explanation for low utilization without a saw-tooth.
const LOW_STEADY_EXPLANATION: &str = tr_key!(
    "The GPU's utilization stays low while the CPU is saturated: the CPU side of the feed chain (decoding, augmenting, collating batches) cannot prepare work as fast as the GPU could do it."
);

/// The low-or-saw-tooth pattern with the CPU saturated and the disk not: what both rules need.
fn starved_pattern(cx: &Ctx, g: &GpuWindow) -> bool {
    (g.low() || g.sawtooth()) && cx.host.cpu_saturated() && !cx.host.io_heavy()
}

/// Low or saw-tooth utilization while the CPU (or a core) is saturated, the disk is not, and the
/// GPU's own job keeps the CPU busy ([`super::context::JOB_CPU_HIGH_PCT`] of one core or more on average). Without
/// per-process CPU readings it judges by the host alone, less sure.
pub(super) fn data_starved(cx: &Ctx, g: &GpuWindow, _: &[Bottleneck]) -> Option<Bottleneck> {
    let job_high = g.job_cpu_high(&cx.host);
    if !starved_pattern(cx, g) || job_high == Some(false) {
        return None;
    }
    let host = &cx.host;
    let i = g.index;
    let mut ev = vec![g.util_ev.clone()];
    match g.job_cpu_ev() {
        Some(line) => ev.push(line),
        None => ev.push(msg!("could not tell which processes use the CPU (no per-process CPU readings)")),
    }
    ev.extend(host.evidence());
    let conf = (0.6
        + if g.sawtooth() { 0.2 } else { 0.0 }
        + if host.hottest_core.is_some_and(|c| c.1 >= 97.0) || host.cpu.is_some_and(|c| c >= 95.0) {
            0.15
        } else {
            0.0
        })
        * if job_high.is_none() { 0.75 } else { 1.0 };
    Some(
        verdict(
            cx,
            Finding::DataStarved,
            Some(i),
            Verdict::Warn,
            conf * g.coverage,
            msg!("GPU {i} is data-starved: the CPU cannot feed it fast enough", i = i),
        )
        .with(
            ev,
            if g.sawtooth() { SAWTOOTH_EXPLANATION } else { LOW_STEADY_EXPLANATION },
            &DATA_STARVED_STEPS,
        ),
    )
}

/// The starved pattern, but the GPU's processes use little CPU (below [`super::context::JOB_CPU_HIGH_PCT`] of one
/// core): other programs saturate the CPU, and the GPU is partly used for reasons of its own job.
pub(super) fn cpu_busy_elsewhere(cx: &Ctx, g: &GpuWindow, _: &[Bottleneck]) -> Option<Bottleneck> {
    let has_job = g.procs.is_some_and(|p| !p.is_empty());
    if !starved_pattern(cx, g) || g.job_cpu_high(&cx.host) != Some(false) || !has_job {
        return None;
    }
    let i = g.index;
    let mut ev = vec![g.util_ev.clone()];
    ev.extend(g.job_cpu_ev());
    ev.extend(cx.host.evidence());
    // Name the busiest program that is not one of the GPU's processes, when the sampler read them.
    let gpu_pids: Vec<u32> =
        cx.snap.gpus.iter().flat_map(|s| s.processes.value().into_iter().flatten()).map(|p| p.pid).collect();
    let top = cx.snap.busiest.iter().find(|p| !gpu_pids.contains(&p.pid));
    let title = match top {
        Some(p) => msg!(
            "GPU {i} is partly used; the CPU is busy with other programs (top: {name}, {pct} %)",
            i = i,
            name = p.name,
            pct = format!("{:.0}", p.cpu_pct)
        ),
        None => msg!("GPU {i} is partly used; the CPU is busy with other programs", i = i),
    };
    if let Some(p) = top {
        ev.push(msg!(
            "busiest other program: {name} (pid {pid}) at {pct} % of one core",
            name = p.name,
            pid = p.pid,
            pct = format!("{:.0}", p.cpu_pct)
        ));
    }
    Some(
        verdict(cx, Finding::CpuBusyElsewhere, Some(i), Verdict::Info, 0.7 * g.coverage, title)
        .with(
            ev,
            tr_key!("The CPU is saturated, but not by the job on this GPU: its processes use little CPU, so they are not starved by their own data preparation. Other programs take the CPU; they may slow the job down, and the GPU's partial use also comes from the job itself."),
            &BUSY_ELSEWHERE_STEPS,
        ),
    )
}

#[cfg(test)]
mod tests;
