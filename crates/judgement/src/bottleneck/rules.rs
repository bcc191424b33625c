//! The rules, one function each, and [`RULES`], the order they run in. A rule reads the
//! [`Ctx`] (the window's numbers, computed once) and gives at most one verdict; a per-GPU rule also
//! sees the verdicts earlier rules gave the same GPU. Rules that exclude each other say so in their
//! conditions (e.g. a GPU at its temperature limit is not also reported at its power limit), so each
//! situation gets its verdict and no wrong one.

use super::context::{Ctx, GpuWindow};
use super::finding::{Bottleneck, Finding, verdict};
use super::starve::{cpu_busy_elsewhere, data_starved};
use crate::diagnose::Verdict;
use crate::telemetry::history::keys::{self, GpuMetric};
use crate::units;
use crate::{msg, tr_key};

/// A rule about the machine as a whole.
type MachineRule = fn(&Ctx) -> Option<Bottleneck>;

/// A rule about one GPU; it also gets the verdicts the earlier rules gave that GPU.
type GpuRule = fn(&Ctx, &GpuWindow, &[Bottleneck]) -> Option<Bottleneck>;

/// A step of the evaluation.
pub(super) enum Rule {
    /// Runs once.
    Machine(MachineRule),
    /// Runs these rules, in order, for each GPU in turn.
    EachGpu(&'static [GpuRule]),
}

/// Every rule, in the order they run (verdicts are sorted by severity and confidence afterwards;
/// among equals this order stays).
pub(super) const RULES: &[Rule] = &[
    // Multi-GPU imbalance first: it explains the idle cards.
    Rule::Machine(imbalance),
    Rule::EachGpu(&[
        // What the GPU waits for (at most one of these).
        nothing_on_gpu,
        waiting_process,
        data_starved,
        cpu_busy_elsewhere,
        underused,
        io_bound,
        // VRAM.
        vram_near_full,
        vram_growing,
        // Throttling and clocks, judged only under load.
        hardware_slowdown,
        thermal_throttle,
        power_limited,
        clocks_low,
        // The PCIe link under load (the latest sample).
        pcie_below_max,
        // Memory-bandwidth vs compute-bound, for busy GPUs.
        memory_bound,
        compute_bound,
        // Last: busy and no warning from any rule above.
        healthy,
    ]),
    Rule::Machine(host_swapping),
];

impl Bottleneck {
    /// The numbers it rests on, why it matters and what to try. `explanation` and `steps` are
    /// catalogue texts (`tr_key!`), kept as messages.
    pub(super) fn with(
        mut self,
        evidence: Vec<crate::i18n::Message>,
        explanation: &'static str,
        steps: &[&'static str],
    ) -> Self {
        self.evidence = evidence;
        self.explanation = crate::i18n::Message::new(explanation);
        self.next_steps = steps.iter().map(|&s| crate::i18n::Message::new(s)).collect();
        self
    }
}

/// Next steps for a GPU waiting on the disk.
const IO_STEPS: [&str; 4] = [
    tr_key!("Put the data on faster storage: a local NVMe disk instead of a network file system or a slow HDD."),
    tr_key!(
        "Cache: keep the dataset in RAM (page cache, /dev/shm) or preprocessed in a few large files (WebDataset/TFRecord shards) instead of many small ones."
    ),
    tr_key!("Prefetch: more loader workers for I/O and a larger prefetch_factor, so reads overlap computation."),
    tr_key!("Then measure again: if the GPU still waits with the disk idle, the CPU is the next link to check."),
];

/// Next steps for nearly full VRAM.
const VRAM_STEPS: [&str; 5] = [
    tr_key!("Keep 20-30 % headroom: lower the batch size or the sequence length / resolution first."),
    tr_key!(
        "Use mixed precision (bf16/fp16) and activation (gradient) checkpointing to cut memory without changing the model."
    ),
    tr_key!(
        "If out-of-memory errors come while much memory is free, it is fragmentation: set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, restart the worker, or split the batch."
    ),
    tr_key!("Do not keep old results on the GPU during inference (torch.no_grad(), .item() for logged losses)."),
    tr_key!("The VRAM tab estimates what a model needs on these GPUs."),
];

/// Next steps for thermal throttling.
const THERMAL_STEPS: [&str; 3] = [
    tr_key!(
        "Improve cooling: airflow through the case, clean fans and heatsinks, no blocked intakes, enough space between cards."
    ),
    tr_key!("Check the fan curve and that the fans reach high speed under load."),
    tr_key!("As a stop-gap, a lower power limit (nvidia-smi -pl) keeps clocks steadier at a small cost."),
];

/// Next steps for GPUs idle next to busy ones.
const IMBALANCE_STEPS: [&str; 4] = [
    tr_key!(
        "Check that the job is meant to use every GPU: one process per GPU (torchrun --nproc_per_node=N, DistributedDataParallel) or a launcher that spreads jobs."
    ),
    tr_key!(
        "Look for code or config pinning cuda:0, and for CUDA_VISIBLE_DEVICES set the same for every job (a device variable alone is not enough when code overrides it)."
    ),
    tr_key!(
        "CUDA numbers GPUs fastest-first, nvidia-smi by PCI address: set CUDA_DEVICE_ORDER=PCI_BUS_ID so both agree."
    ),
    tr_key!("Cards share power and cooling: when all are busy, watch the total power and every card's temperature."),
];

/// Next steps for a process that holds the GPU and does nothing.
const STUCK_STEPS: [&str; 4] = [
    tr_key!("Read the job's last log line and its time: is it still making progress?"),
    tr_key!(
        "Focus on the process (Monitor process table, or gpu-doctor-cli focus --pid PID): its state (running, sleeping, uninterruptible I/O wait, zombie), CPU, I/O and whether its output file grows."
    ),
    tr_key!(
        "Keep the evidence (inputs, parameters, log, these readings) and reproduce with a small input before restarting a big job."
    ),
    tr_key!("If it waits on a lock, the network or another process, fix that first: the GPU only waits for it."),
];

/// Some GPUs work while others sit idle (two or more GPUs).
fn imbalance(cx: &Ctx) -> Option<Bottleneck> {
    let (busy, idle) = cx.imbalance.as_ref()?;
    let names = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    let cov = cx.gpus.iter().map(|g| g.coverage).fold(1.0, f64::min);
    Some(
        verdict(
            cx,
            Finding::Imbalance,
            None,
            Verdict::Warn,
            0.9 * cov,
            {
                let one = (busy.len() == 1, idle.len() == 1);
                let (busy, idle) = (names(busy), names(idle));
                match one {
                    (true, true) => msg!("Only GPU {busy} works; GPU {idle} sits idle", busy = busy, idle = idle),
                    (true, false) => msg!("Only GPU {busy} works; GPU {idle} sit idle", busy = busy, idle = idle),
                    (false, true) => msg!("Only GPU {busy} work; GPU {idle} sits idle", busy = busy, idle = idle),
                    (false, false) => msg!("Only GPU {busy} work; GPU {idle} sit idle", busy = busy, idle = idle),
                }
            },
        )
        .with(
            cx.gpus
                .iter()
                .map(|g| {
                    msg!("GPU {gpu}: utilization {util} % on average", gpu = g.index, util = format!("{:.0}", g.util.mean))
                })
                .collect(),
            tr_key!("The work lands on some cards while the others wait: the job or the launcher uses fewer GPUs than the machine has."),
            &IMBALANCE_STEPS,
        ),
    )
}

/// The GPU does nothing and no process holds it (or the process list is not available), while
/// neither CPU nor disk explains it nor an imbalance covers it.
fn nothing_on_gpu(cx: &Ctx, g: &GpuWindow, _: &[Bottleneck]) -> Option<Bottleneck> {
    let i = g.index;
    let nothing_running = g.nothing_running();
    let fires = g.quiet(&cx.host) && !cx.idle_explained(i) && (nothing_running || g.procs.is_none());
    if !fires {
        return None;
    }
    Some(
        verdict(
            cx,
            Finding::NothingOnGpu,
            Some(i),
            Verdict::Info,
            if nothing_running { 0.9 } else { 0.6 } * g.coverage,
            msg!("Nothing uses GPU {i}", i = i),
        )
        .with(
            vec![
                g.util_ev.clone(),
                if nothing_running {
                    msg!("no process on the GPU")
                } else {
                    msg!("process list not available")
                },
            ],
            tr_key!("The GPU does no work and no program holds it. If a job should be running, it never reached the GPU."),
            &[
                tr_key!("Check that the job runs on the GPU at all: a CPU fallback (torch.cuda.is_available() is False), the wrong device (cuda:1 on a one-GPU machine), or CUDA_VISIBLE_DEVICES hiding this card."),
                tr_key!("Run the Checklist (driver, CUDA, container, environment) and the smoke test to prove the GPU computes."),
                tr_key!("If nothing should run: nothing to fix."),
            ],
        ),
    )
}

/// A process holds the GPU but it does nothing, and neither CPU nor disk explains it nor an
/// imbalance covers it.
fn waiting_process(cx: &Ctx, g: &GpuWindow, _: &[Bottleneck]) -> Option<Bottleneck> {
    let i = g.index;
    if !g.quiet(&cx.host) || cx.idle_explained(i) {
        return None;
    }
    let p = g.procs?.first()?;
    Some(
        verdict(
            cx,
            Finding::WaitingProcess,
            Some(i),
            Verdict::Warn,
            0.7 * g.coverage,
            msg!("GPU {i} holds {name} (PID {pid}) but does no work", i = i, name = p.name, pid = p.pid),
        )
        .with(
            vec![g.util_ev.clone(), msg!("neither the CPU nor the disk is saturated")],
            tr_key!("A process is on the GPU but stuck before the computation: waiting for data, a lock, the network or another process, or hung."),
            &STUCK_STEPS,
        ),
    )
}

/// Low utilization by a process while CPU and disk have room (and the GPU is not idle outright,
/// nor covered by an imbalance).
fn underused(cx: &Ctx, g: &GpuWindow, _: &[Bottleneck]) -> Option<Bottleneck> {
    let host = &cx.host;
    let i = g.index;
    // Not idle outright (waiting process, nothing on the GPU), not starved by CPU or disk.
    let fires = !g.quiet(host)
        && g.low()
        && !host.io_heavy()
        && !host.cpu_saturated()
        && g.procs.is_some_and(|p| !p.is_empty())
        && !cx.idle_explained(i);
    if !fires {
        return None;
    }
    let p = g.procs.and_then(|p| p.first()).map(|p| format!("{} (PID {})", p.name, p.pid)).unwrap_or_default();
    let mut ev = vec![g.util_ev.clone(), msg!("on the GPU: {p}", p = p)];
    ev.extend(host.evidence());
    Some(
        verdict(
            cx,
            Finding::Underused,
            Some(i),
            Verdict::Info,
            0.6 * g.coverage,
            msg!("GPU {i} is underused by {p}; CPU and disk have room", i = i, p = p),
        )
        .with(
            ev,
            tr_key!("The job gives the GPU too little work at a time, or waits between steps for something other than CPU or disk: small batches, host-device synchronisation in the loop, a single-threaded step, or the network."),
            &[
                tr_key!("Raise the batch size, one step at a time, while VRAM keeps 20-30 % headroom."),
                tr_key!("Remove synchronisation from the loop (.item(), .cpu(), printing GPU values every step)."),
                tr_key!("Profile one iteration (torch.profiler, Nsight Systems) to see where the time goes."),
                tr_key!("If it should be computing but is not, treat it as a stuck job: its state, log and output (gpu-doctor-cli focus)."),
            ],
        ),
    )
}

/// Low utilization with high iowait or I/O pressure, the CPU not saturated.
fn io_bound(cx: &Ctx, g: &GpuWindow, _: &[Bottleneck]) -> Option<Bottleneck> {
    let host = &cx.host;
    let fires = g.low() && host.io_heavy() && !host.cpu_saturated();
    if !fires {
        return None;
    }
    let i = g.index;
    let mut ev = vec![g.util_ev.clone()];
    ev.extend(host.evidence());
    let strong = host.iowait.is_some_and(|w| w >= 20.0) || host.psi_io.is_some_and(|p| p >= 25.0);
    Some(
        verdict(
            cx,
            Finding::IoBound,
            Some(i),
            Verdict::Warn,
            if strong { 0.85 } else { 0.65 } * g.coverage,
            msg!("GPU {i} waits for the disk (I/O-bound)", i = i),
        )
        .with(
            ev,
            tr_key!("Reading the data takes longer than computing on it: processes wait for the disk (iowait, I/O pressure) while neither the CPU nor the GPU is busy."),
            &IO_STEPS,
        ),
    )
}

/// VRAM used reached 95 % of the total in the window.
fn vram_near_full(cx: &Ctx, g: &GpuWindow, _: &[Bottleneck]) -> Option<Bottleneck> {
    let (total, used) = g.vram?;
    let frac = used.max / total;
    let fires = frac >= 0.95;
    if !fires {
        return None;
    }
    let i = g.index;
    Some(
        verdict(
            cx,
            Finding::VramNearFull,
            Some(i),
            Verdict::Warn,
            0.9 * g.coverage,
            msg!("GPU {i} memory is nearly full ({pct} %)", i = i, pct = format!("{:.0}", 100.0 * frac)),
        )
        .with(
            vec![msg!(
                "VRAM used up to {used} of {total}",
                used = units::bytes(used.max as u64),
                total = units::bytes(total as u64)
            )],
            tr_key!("With almost no free memory the next larger batch or longer input fails with out-of-memory; frameworks then retry with smaller batches or restart, which looks like an idle GPU."),
            &VRAM_STEPS,
        ),
    )
}

/// VRAM not nearly full but growing steadily: at least 5 % of the total over the window, with 80 %
/// of the steps going up or staying.
fn vram_growing(cx: &Ctx, g: &GpuWindow, _: &[Bottleneck]) -> Option<Bottleneck> {
    let (total, used) = g.vram?;
    if used.max / total >= 0.95 {
        // Nearly full: that verdict says it.
        return None;
    }
    let i = g.index;
    let (slope, rising) = trend(cx, i)?;
    let fires = rising >= 0.8 && slope * cx.window >= 0.05 * total;
    if !fires {
        return None;
    }
    let left = (total - used.max) / slope;
    Some(
        verdict(
            cx,
            Finding::VramGrowing,
            Some(i),
            Verdict::Warn,
            (0.5 + 0.4 * rising) * g.coverage,
            msg!("GPU {i} memory keeps growing: full in about {left}", i = i, left = units::duration_words(left)),
        )
        .with(
            vec![
                msg!(
                    "VRAM grows {rate}/s ({growth} over the window)",
                    rate = units::bytes(slope as u64),
                    growth = units::bytes((slope * cx.window) as u64)
                ),
                msg!("{pct} % of the steps went up or stayed", pct = format!("{:.0}", 100.0 * rising)),
                msg!("now {used} of {total}", used = units::bytes(used.max as u64), total = units::bytes(total as u64)),
            ],
            tr_key!("Memory that only grows is usually held by mistake: results kept on the GPU across iterations (a list of loss tensors, caches), or a leak in a library."),
            &[
                tr_key!("Log losses with .item() and drop references to GPU tensors you do not need; run inference under torch.no_grad()."),
                tr_key!("Watch torch.cuda.memory_allocated() per iteration to find the step that grows."),
                tr_key!("As a stop-gap, restart the worker periodically or split the work into smaller runs."),
            ],
        ),
    )
}

/// GPU `i`'s VRAM trend over the window.
fn trend(cx: &Ctx, i: u32) -> Option<(f64, f64)> {
    super::context::trend(cx.h, &keys::gpu(i, GpuMetric::VramUsed), cx.from, cx.to)
}

/// Busy, with a hardware slowdown or power brake in 10 % of the samples or more.
fn hardware_slowdown(cx: &Ctx, g: &GpuWindow, _: &[Bottleneck]) -> Option<Bottleneck> {
    if !g.hw_slowed() {
        return None;
    }
    let i = g.index;
    Some(
        verdict(
            cx,
            Finding::HardwareSlowdown,
            Some(i),
            Verdict::Warn,
            0.9 * g.coverage,
            msg!(
                "GPU {i} is slowed down by hardware protection {pct} % of the time",
                i = i,
                pct = format!("{:.0}", 100.0 * g.hw)
            ),
        )
        .with(
            vec![msg!("hardware slowdown reported in {pct} % of the samples", pct = format!("{:.0}", 100.0 * g.hw))],
            tr_key!("The board halves its clocks to protect itself: overheating or the power supply pulling the emergency brake."),
            &[
                tr_key!("Check the power cabling (every connector seated, no daisy-chained cables on high-power cards) and that the power supply is sized for all GPUs."),
                tr_key!("Check temperatures and cooling as for thermal throttling."),
                tr_key!("Look for Xid errors in the kernel log (Checklist, runtime step)."),
            ],
        ),
    )
}

/// Busy, with a thermal throttle reason in 20 % of the samples or more.
fn thermal_throttle(cx: &Ctx, g: &GpuWindow, _: &[Bottleneck]) -> Option<Bottleneck> {
    if !g.thermal_throttled() {
        return None;
    }
    let i = g.index;
    let temp = super::context::series(cx.h, &keys::gpu(i, GpuMetric::Temp), cx.from, cx.to, 0.0, 0.0);
    let mut ev =
        vec![msg!("thermal limit reported in {pct} % of the samples", pct = format!("{:.0}", 100.0 * g.thermal))];
    if let Some(t) = temp {
        ev.push(msg!("temperature up to {t} °C", t = format!("{:.0}", t.max)));
    }
    if let Some(sd) = g.info.and_then(|x| x.slowdown_temp_c.get()) {
        ev.push(msg!("slowdown temperature {sd} °C", sd = sd));
    }
    if let Some((c, m)) = g.clocks {
        ev.push(msg!("SM clock {c} MHz on average of {m} MHz", c = format!("{c:.0}"), m = m));
    }
    Some(
        verdict(
            cx,
            Finding::ThermalThrottle,
            Some(i),
            Verdict::Warn,
            (0.6 + 0.4 * g.thermal) * g.coverage,
            msg!("GPU {i} is thermally throttled: clocks are cut to stay cool", i = i),
        )
        .with(
            ev,
            tr_key!(
                "The GPU is at its temperature limit, so the driver lowers its clocks: the same work takes longer."
            ),
            &THERMAL_STEPS,
        ),
    )
}

/// Busy, at the power cap in half of the samples or more, and not thermally throttled.
fn power_limited(cx: &Ctx, g: &GpuWindow, _: &[Bottleneck]) -> Option<Bottleneck> {
    if !g.power_capped() {
        return None;
    }
    let i = g.index;
    Some(
        verdict(
            cx,
            Finding::PowerLimited,
            Some(i),
            Verdict::Info,
            0.8 * g.coverage,
            msg!("GPU {i} runs at its power limit", i = i),
        )
        .with(
            vec![msg!("power cap reported in {pct} % of the samples", pct = format!("{:.0}", 100.0 * g.power))],
            tr_key!("At full load a GPU often runs at its power limit and the clocks adapt to it; this is normal. A limit set below the default costs speed."),
            &[
                tr_key!("Compare the enforced power limit with the default (Monitor card, nvidia-smi -q -d POWER); restore the default if someone lowered it."),
                tr_key!("If the limit is the default, nothing to fix: judge by throughput."),
            ],
        ),
    )
}

/// Busy, the SM clock below 70 % of its maximum, and no throttle reason explains it.
fn clocks_low(cx: &Ctx, g: &GpuWindow, _: &[Bottleneck]) -> Option<Bottleneck> {
    let explained = g.hw_slowed() || g.thermal_throttled() || g.power_capped();
    let (c, m) = g.clocks?;
    let fires = g.busy() && !explained && c < 0.7 * f64::from(m);
    if !fires {
        return None;
    }
    let i = g.index;
    Some(
        verdict(
            cx,
            Finding::ClocksLow,
            Some(i),
            Verdict::Info,
            0.6 * g.coverage,
            msg!("GPU {i} runs well below its maximum clock under load", i = i),
        )
        .with(
            vec![msg!(
                "SM clock {c} MHz on average of {m} MHz, with no throttle reason reported",
                c = format!("{c:.0}"),
                m = m
            )],
            tr_key!("Without a throttle reason, low clocks under load usually come from clock settings (application clocks, locked clocks) or a power-saving profile."),
            &[tr_key!("Check locked or application clocks (nvidia-smi -q -d CLOCK) and the power profile; reset with nvidia-smi -rgc / -rac.")],
        ),
    )
}

/// Busy, and the latest sample's PCIe link is below its maximum generation or width.
fn pcie_below_max(cx: &Ctx, g: &GpuWindow, _: &[Bottleneck]) -> Option<Bottleneck> {
    if !g.busy() {
        return None;
    }
    let (s, inf) = (g.sample?, g.info?);
    let (gn, w, mg, mw) = (s.pcie_gen.get()?, s.pcie_width.get()?, inf.max_pcie_gen.get()?, inf.max_pcie_width.get()?);
    let fires = gn < mg || w < mw;
    if !fires {
        return None;
    }
    let i = g.index;
    Some(
        verdict(
            cx,
            Finding::PcieBelowMax,
            Some(i),
            Verdict::Warn,
            0.7 * g.coverage,
            msg!(
                "GPU {i}'s PCIe link runs at Gen{gn} x{w} under load; it supports Gen{mg} x{mw}",
                i = i,
                gn = gn,
                w = w,
                mg = mg,
                mw = mw
            ),
        )
        .with(
            vec![msg!(
                "link Gen{gn} x{w}, maximum Gen{mg} x{mw}, utilization {util} %",
                gn = gn,
                w = w,
                mg = mg,
                mw = mw,
                util = format!("{:.0}", g.util.mean)
            )],
            tr_key!("A narrower or slower link limits host-to-GPU copies; it matters for data-heavy jobs and multi-GPU communication without NVLink."),
            &[tr_key!("Use a full x16 slot wired to the CPU, avoid risers, reseat the card and check the BIOS PCIe settings; the smoke test measures the copy bandwidth.")],
        ),
    )
}

/// Busy, with memory-bandwidth utilization at 60 % or more and at least 70 % of the GPU's.
fn memory_bound(cx: &Ctx, g: &GpuWindow, _: &[Bottleneck]) -> Option<Bottleneck> {
    let bw = g.membw?;
    let fires = g.busy() && bw >= 60.0 && bw >= 0.7 * g.util.mean;
    if !fires {
        return None;
    }
    let i = g.index;
    Some(
        verdict(
            cx,
            Finding::MemoryBound,
            Some(i),
            Verdict::Info,
            0.7 * g.coverage,
            msg!("GPU {i}'s work is memory-bandwidth-bound", i = i),
        )
        .with(
            vec![msg!(
                "memory-bandwidth utilization {bw} % with GPU utilization {util} %",
                bw = format!("{bw:.0}"),
                util = format!("{:.0}", g.util.mean)
            )],
            tr_key!(
                "The kernels wait on GPU memory more than on arithmetic: more threads or a faster clock barely help."
            ),
            &[
                tr_key!("Move fewer bytes: lower precision (bf16/fp16, fp8 or int8 for inference) halves the traffic."),
                tr_key!("Fuse operations (torch.compile, fused optimizers, FlashAttention) so data is read once."),
                tr_key!("A larger batch improves reuse for matrix-heavy work."),
            ],
        ),
    )
}

/// Utilization at 80 % or more with memory-bandwidth utilization under 40 %.
fn compute_bound(cx: &Ctx, g: &GpuWindow, _: &[Bottleneck]) -> Option<Bottleneck> {
    let bw = g.membw?;
    let fires = g.busy() && bw < 40.0 && g.util.mean >= 80.0;
    if !fires {
        return None;
    }
    let i = g.index;
    Some(
        verdict(
            cx,
            Finding::ComputeBound,
            Some(i),
            Verdict::Info,
            0.6 * g.coverage,
            msg!("GPU {i}'s work is compute-bound", i = i),
        )
        .with(
            vec![msg!(
                "GPU utilization {util} % with memory-bandwidth utilization {bw} %",
                util = format!("{:.0}", g.util.mean),
                bw = format!("{bw:.0}")
            )],
            tr_key!("The arithmetic units are the limit, which is where a GPU should be."),
            &[tr_key!("Mixed precision (bf16/fp16) uses the tensor cores and often doubles throughput.")],
        ),
    )
}

/// Utilization at 80 % or more and no earlier rule warned about this GPU.
fn healthy(cx: &Ctx, g: &GpuWindow, found: &[Bottleneck]) -> Option<Bottleneck> {
    let fires = g.util.mean >= 80.0 && !found.iter().any(|b| b.severity >= Verdict::Warn);
    if !fires {
        return None;
    }
    let i = g.index;
    Some(
        verdict(
            cx,
            Finding::Healthy,
            Some(i),
            Verdict::Pass,
            0.8 * g.coverage,
            msg!("GPU {i} is busy and not held back", i = i),
        )
        .with(
            vec![g.util_ev.clone()],
            tr_key!("Busy, no throttling, fed in time. Utilization is a means: what counts is useful throughput (samples/s, tokens/s) and a run that finishes."),
            &[tr_key!("To go faster, change one thing at a time in the method's order (batch size within the VRAM headroom, then concurrency, then workers) and measure throughput before and after.")],
        ),
    )
}

/// The host's swap grew by 64 MiB or more in the window, or is in use while RAM is short.
fn host_swapping(cx: &Ctx) -> Option<Bottleneck> {
    let swap = super::context::series(cx.h, keys::SWAP_USED, cx.from, cx.to, 0.0, 0.0)?;
    let growth = swap.max - swap.min;
    let avail =
        cx.snap.host.as_ref().and_then(|s| s.memory.value().map(|m| (m.ram_available_bytes, m.ram_total_bytes)));
    let tight = avail.is_some_and(|(a, t)| t > 0 && (a as f64) < 0.05 * t as f64);
    let fires = growth >= 64.0 * 1_048_576.0 || (tight && swap.max > 0.0);
    if !fires {
        return None;
    }
    let mut ev = vec![msg!(
        "swap used {used} (grew {growth} in the window)",
        used = units::bytes(swap.max as u64),
        growth = units::bytes(growth as u64)
    )];
    if let Some((a, t)) = avail {
        ev.push(msg!("RAM available {available} of {total}", available = units::bytes(a), total = units::bytes(t)));
    }
    Some(
        verdict(
            cx,
            Finding::HostSwapping,
            None,
            Verdict::Warn,
            if growth >= 64.0 * 1_048_576.0 { 0.85 } else { 0.6 },
            msg!("The host is swapping: RAM is short"),
        )
        .with(
            ev,
            tr_key!("When host memory runs out, pages go to disk and every process slows down, the data loader included."),
            &[
                tr_key!("Use fewer or lighter loader workers (each copies the dataset's Python objects), smaller prefetch buffers, or memory-mapped datasets."),
                tr_key!("Close other memory-hungry programs, or add RAM."),
            ],
        ),
    )
}
