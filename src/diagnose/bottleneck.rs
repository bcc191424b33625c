//! "Why is my GPU idle?": bottleneck verdicts over the recent history (method §2, §3, §5, §7, §8).
//!
//! Each rule reads the last `window` seconds of the sampler's history (and the latest snapshot
//! for processes, link state and limits) and says what limits the GPU, with a confidence, the
//! numbers and time span it rests on, a plain explanation and the next tuning steps in the
//! method's order. Rules never fire on too little data: a window less than half covered by
//! samples gives no verdict.

use serde::{Deserialize, Serialize};

use super::Verdict;
use crate::telemetry::history::{History, keys};
use crate::telemetry::snapshot::Snapshot;
use crate::units;

/// Default window, seconds.
pub const DEFAULT_WINDOW_SECS: f64 = 60.0;

/// What a verdict found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Finding {
    /// The GPU does nothing and no process uses it.
    NothingOnGpu,
    /// A process holds the GPU but it does no work, and neither CPU nor disk explains it.
    WaitingProcess,
    /// Low or saw-tooth utilization while the CPU (or some cores) is saturated.
    DataStarved,
    /// Low utilization with high iowait / I/O pressure.
    IoBound,
    /// A process uses the GPU lightly while CPU and disk have room: small batches, waits on the
    /// host, synchronisation.
    Underused,
    /// Busy, with memory-bandwidth utilization near its top.
    MemoryBound,
    /// Busy, compute-bound.
    ComputeBound,
    /// VRAM nearly full.
    VramNearFull,
    /// VRAM growing steadily (a leak?).
    VramGrowing,
    /// Clocks lowered by temperature.
    ThermalThrottle,
    /// Clocks held at the power limit.
    PowerLimited,
    /// Hardware slowdown (power brake, overheat protection).
    HardwareSlowdown,
    /// Clocks well below maximum under load without a reason reported.
    ClocksLow,
    /// One GPU busy, the others idle.
    Imbalance,
    /// The host swaps.
    HostSwapping,
    /// The PCIe link runs below its maximum under load.
    PcieBelowMax,
    /// Busy and not throttled.
    Healthy,
}

/// One verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bottleneck {
    /// What was found.
    pub finding: Finding,
    /// The GPU it concerns (None: the host or all GPUs).
    pub gpu: Option<u32>,
    /// Pass (healthy), Info, Warn.
    pub severity: Verdict,
    /// 0..1: how sure the rule is (signal strength times data coverage).
    pub confidence: f64,
    /// One line: "GPU 0 is data-starved: the CPU cannot feed it".
    pub title: String,
    /// Numbers it rests on.
    pub evidence: Vec<String>,
    /// Start and end of the span judged, seconds since the sampler started.
    pub from: f64,
    /// End of the span.
    pub to: f64,
    /// Why this limits the work.
    pub explanation: String,
    /// What to try, in the method's order.
    pub next_steps: Vec<String>,
}

impl Bottleneck {
    /// A stable key for "the same verdict" across evaluations (events mark changes).
    pub fn key(&self) -> (Finding, Option<u32>) {
        (self.finding, self.gpu)
    }
}

/// Per-series numbers over the window.
#[derive(Clone, Copy, Debug, Default)]
struct S {
    mean: f64,
    min: f64,
    max: f64,
    low_frac: f64,
    high_frac: f64,
    /// Seconds of the window the points cover (first to last, plus one step).
    span: f64,
}

fn series(h: &History, key: &str, from: f64, to: f64, low: f64, high: f64) -> Option<S> {
    let pts = h.points(key, from, to, usize::MAX);
    if pts.is_empty() {
        return None;
    }
    let n = pts.len();
    let vals = pts.iter().map(|p| p[1]);
    let mean = vals.clone().sum::<f64>() / n as f64;
    let min = vals.clone().fold(f64::INFINITY, f64::min);
    let max = vals.clone().fold(f64::NEG_INFINITY, f64::max);
    let low_frac = vals.clone().filter(|v| *v < low).count() as f64 / n as f64;
    let high_frac = vals.filter(|v| *v > high).count() as f64 / n as f64;
    let (first, last) = (pts[0][0], pts[n - 1][0]);
    let step = if n > 1 { (last - first) / (n - 1) as f64 } else { 1.0 };
    Some(S { mean, min, max, low_frac, high_frac, span: last - first + step })
}

fn mean(h: &History, key: &str, from: f64, to: f64) -> Option<f64> {
    series(h, key, from, to, 0.0, 0.0).map(|s| s.mean)
}

/// Least-squares slope (units per second) and the share of steps that did not go down.
fn trend(h: &History, key: &str, from: f64, to: f64) -> Option<(f64, f64)> {
    let pts = h.points(key, from, to, usize::MAX);
    if pts.len() < 10 {
        return None;
    }
    let n = pts.len() as f64;
    let (mt, mv) = (pts.iter().map(|p| p[0]).sum::<f64>() / n, pts.iter().map(|p| p[1]).sum::<f64>() / n);
    let cov: f64 = pts.iter().map(|p| (p[0] - mt) * (p[1] - mv)).sum();
    let var: f64 = pts.iter().map(|p| (p[0] - mt).powi(2)).sum();
    let rising = pts.windows(2).filter(|w| w[1][1] >= w[0][1]).count() as f64 / (n - 1.0);
    (var > 0.0).then(|| (cov / var, rising))
}

/// Host numbers over the window.
struct Host {
    cpu: Option<f64>,
    hottest_core: Option<(usize, f64)>,
    hot_cores: usize,
    iowait: Option<f64>,
    psi_io: Option<f64>,
    disk_read: Option<f64>,
}

impl Host {
    fn read(h: &History, snap: &Snapshot, from: f64, to: f64) -> Host {
        let cores = snap.host.as_ref().map_or(0, |s| s.per_core_pct.len());
        let core_means: Vec<(usize, f64)> =
            (0..cores).filter_map(|c| mean(h, &keys::core(c), from, to).map(|m| (c, m))).collect();
        Host {
            cpu: mean(h, keys::CPU, from, to),
            hottest_core: core_means.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)),
            hot_cores: core_means.iter().filter(|(_, m)| *m >= 90.0).count(),
            iowait: mean(h, keys::IOWAIT, from, to),
            psi_io: mean(h, keys::PSI_IO, from, to),
            disk_read: mean(h, keys::DISK_READ, from, to),
        }
    }

    fn cpu_saturated(&self) -> bool {
        self.cpu.is_some_and(|c| c >= 85.0) || self.hottest_core.is_some_and(|(_, m)| m >= 95.0)
    }

    fn io_heavy(&self) -> bool {
        self.iowait.is_some_and(|w| w >= 10.0) || self.psi_io.is_some_and(|p| p >= 10.0)
    }

    fn evidence(&self) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(c) = self.cpu {
            v.push(format!("host CPU {c:.0} % on average"));
        }
        if let Some((i, m)) = self.hottest_core {
            v.push(format!("busiest core: core {i} at {m:.0} %; {} core(s) at 90 % or more", self.hot_cores));
        }
        if let Some(w) = self.iowait {
            v.push(format!("iowait {w:.1} %"));
        }
        if let Some(p) = self.psi_io {
            v.push(format!("I/O pressure (some, avg10) {p:.0} %"));
        }
        if let Some(r) = self.disk_read {
            v.push(format!("disk reads {}", units::rate(r)));
        }
        v
    }
}

const DATA_STARVED_STEPS: [&str; 4] = [
    "Raise the data loader's worker processes (PyTorch: DataLoader(num_workers=N) with N up to the number of cores, persistent_workers=True, pin_memory=True).",
    "Preprocess in parallel or ahead of time: decode and augment once and cache the result, or move augmentation into the workers instead of the main process.",
    "Decode on the GPU where it is the bottleneck: NVIDIA DALI, torchvision.io.decode_jpeg(device='cuda'), NVDEC for video.",
    "Then, one change at a time, raise the batch size while VRAM keeps 20-30 % headroom, and measure samples/s before and after.",
];

const IO_STEPS: [&str; 4] = [
    "Put the data on faster storage: a local NVMe disk instead of a network file system or a slow HDD.",
    "Cache: keep the dataset in RAM (page cache, /dev/shm) or preprocessed in a few large files (WebDataset/TFRecord shards) instead of many small ones.",
    "Prefetch: more loader workers for I/O and a larger prefetch_factor, so reads overlap computation.",
    "Then measure again: if the GPU still waits with the disk idle, the CPU is the next link to check.",
];

const VRAM_STEPS: [&str; 5] = [
    "Keep 20-30 % headroom: lower the batch size or the sequence length / resolution first.",
    "Use mixed precision (bf16/fp16) and activation (gradient) checkpointing to cut memory without changing the model.",
    "If out-of-memory errors come while much memory is free, it is fragmentation: set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, restart the worker, or split the batch.",
    "Do not keep old results on the GPU during inference (torch.no_grad(), .item() for logged losses).",
    "The VRAM tab estimates what a model needs on these GPUs.",
];

const THERMAL_STEPS: [&str; 3] = [
    "Improve cooling: airflow through the case, clean fans and heatsinks, no blocked intakes, enough space between cards.",
    "Check the fan curve and that the fans reach high speed under load.",
    "As a stop-gap, a lower power limit (nvidia-smi -pl) keeps clocks steadier at a small cost.",
];

const IMBALANCE_STEPS: [&str; 4] = [
    "Check that the job is meant to use every GPU: one process per GPU (torchrun --nproc_per_node=N, DistributedDataParallel) or a launcher that spreads jobs.",
    "Look for code or config pinning cuda:0, and for CUDA_VISIBLE_DEVICES set the same for every job (a device variable alone is not enough when code overrides it).",
    "CUDA numbers GPUs fastest-first, nvidia-smi by PCI address: set CUDA_DEVICE_ORDER=PCI_BUS_ID so both agree.",
    "Cards share power and cooling: when all are busy, watch the total power and every card's temperature.",
];

const STUCK_STEPS: [&str; 4] = [
    "Read the job's last log line and its time: is it still making progress?",
    "Focus on the process (Monitor process table, or gpu-doctor-cli focus --pid PID): its state (running, sleeping, uninterruptible I/O wait, zombie), CPU, I/O and whether its output file grows.",
    "Keep the evidence (inputs, parameters, log, these readings) and reproduce with a small input before restarting a big job.",
    "If it waits on a lock, the network or another process, fix that first: the GPU only waits for it.",
];

/// Evaluates every rule over `[now - window, now]`.
pub fn evaluate(snap: &Snapshot, h: &History, window: f64, now: f64) -> Vec<Bottleneck> {
    let from = now - window;
    let host = Host::read(h, snap, from, now);
    let mut out: Vec<Bottleneck> = Vec::new();
    let make = |finding,
                gpu,
                severity,
                confidence: f64,
                title: String,
                evidence: Vec<String>,
                explanation: &str,
                steps: &[&str]| Bottleneck {
        finding,
        gpu,
        severity,
        confidence: (confidence.clamp(0.0, 1.0) * 100.0).round() / 100.0,
        title,
        evidence,
        from,
        to: now,
        explanation: explanation.to_string(),
        next_steps: steps.iter().map(|s| (*s).to_string()).collect(),
    };

    struct G {
        index: u32,
        util: S,
        coverage: f64,
    }
    let mut gpus: Vec<G> = Vec::new();
    for info in &snap.inventory.gpus {
        let i = info.index;
        let Some(util) = series(h, &keys::gpu(i, "util"), from, now, 30.0, 70.0) else { continue };
        // Over a long window the history returns 10 s buckets: coverage is judged by time span.
        let coverage = (util.span / window).min(1.0);
        if coverage < 0.5 {
            continue;
        }
        gpus.push(G { index: i, util, coverage });
    }

    // Multi-GPU imbalance first: it explains the idle cards.
    let mut explained_idle: Vec<u32> = Vec::new();
    if gpus.len() >= 2 {
        let busy: Vec<&G> = gpus.iter().filter(|g| g.util.mean >= 60.0).collect();
        let idle: Vec<&G> = gpus.iter().filter(|g| g.util.mean <= 15.0).collect();
        if !busy.is_empty() && !idle.is_empty() {
            let names = |v: &[&G]| v.iter().map(|g| g.index.to_string()).collect::<Vec<_>>().join(", ");
            let cov = gpus.iter().map(|g| g.coverage).fold(1.0, f64::min);
            explained_idle = idle.iter().map(|g| g.index).collect();
            out.push(make(
                Finding::Imbalance,
                None,
                Verdict::Warn,
                0.9 * cov,
                format!("Only GPU {} work{}; GPU {} sit{} idle", names(&busy), if busy.len() == 1 { "s" } else { "" }, names(&idle), if idle.len() == 1 { "s" } else { "" }),
                gpus.iter().map(|g| format!("GPU {}: utilization {:.0} % on average", g.index, g.util.mean)).collect(),
                "The work lands on some cards while the others wait: the job or the launcher uses fewer GPUs than the machine has.",
                &IMBALANCE_STEPS,
            ));
        }
    }

    for g in &gpus {
        let i = g.index;
        let info = snap.inventory.gpus.iter().find(|x| x.index == i);
        let sample = snap.gpus.iter().find(|x| x.index == i);
        let u = g.util;
        let mut gpu_warned = false;
        let util_ev = format!(
            "GPU {i} utilization {:.0} % on average (min {:.0}, max {:.0}); below 30 % {:.0} % of the time",
            u.mean,
            u.min,
            u.max,
            100.0 * u.low_frac
        );
        let procs = sample.and_then(|s| s.processes.value().cloned());
        let nothing_running = procs.as_ref().is_some_and(|p| p.is_empty());
        let low = u.mean < 50.0;
        let sawtooth = u.low_frac >= 0.2 && u.high_frac >= 0.1;

        if u.mean < 5.0 && u.max < 15.0 && !host.cpu_saturated() && !host.io_heavy() {
            if explained_idle.contains(&i) {
                // Covered by the imbalance verdict.
            } else if nothing_running || procs.is_none() {
                out.push(make(
                    Finding::NothingOnGpu,
                    Some(i),
                    Verdict::Info,
                    if nothing_running { 0.9 } else { 0.6 } * g.coverage,
                    format!("Nothing uses GPU {i}"),
                    vec![util_ev.clone(), if nothing_running { "no process on the GPU".to_string() } else { "process list not available".to_string() }],
                    "The GPU does no work and no program holds it. If a job should be running, it never reached the GPU.",
                    &[
                        "Check that the job runs on the GPU at all: a CPU fallback (torch.cuda.is_available() is False), the wrong device (cuda:1 on a one-GPU machine), or CUDA_VISIBLE_DEVICES hiding this card.",
                        "Run the Checklist (driver, CUDA, container, environment) and the smoke test to prove the GPU computes.",
                        "If nothing should run: nothing to fix.",
                    ],
                ));
            } else if let Some(p) = procs.as_ref().and_then(|p| p.first()) {
                gpu_warned = true;
                out.push(make(
                    Finding::WaitingProcess,
                    Some(i),
                    Verdict::Warn,
                    0.7 * g.coverage,
                    format!("GPU {i} holds {} (PID {}) but does no work", p.name, p.pid),
                    vec![util_ev.clone(), "neither the CPU nor the disk is saturated".to_string()],
                    "A process is on the GPU but stuck before the computation: waiting for data, a lock, the network or another process, or hung.",
                    &STUCK_STEPS,
                ));
            }
        } else if (low || sawtooth) && host.cpu_saturated() && !host.io_heavy() {
            gpu_warned = true;
            let mut ev = vec![util_ev.clone()];
            ev.extend(host.evidence());
            let conf = 0.6
                + if sawtooth { 0.2 } else { 0.0 }
                + if host.hottest_core.is_some_and(|c| c.1 >= 97.0) || host.cpu.is_some_and(|c| c >= 95.0) {
                    0.15
                } else {
                    0.0
                };
            out.push(make(
                Finding::DataStarved,
                Some(i),
                Verdict::Warn,
                conf * g.coverage,
                format!("GPU {i} is data-starved: the CPU cannot feed it fast enough"),
                ev,
                "The GPU finishes each batch and then waits while the CPU decodes, augments and collates the next one (the saw-tooth): the CPU side of the feed chain is the limit.",
                &DATA_STARVED_STEPS,
            ));
        } else if low
            && !host.io_heavy()
            && !host.cpu_saturated()
            && procs.as_ref().is_some_and(|p| !p.is_empty())
            && !explained_idle.contains(&i)
        {
            let p = procs
                .as_ref()
                .and_then(|p| p.first())
                .map(|p| format!("{} (PID {})", p.name, p.pid))
                .unwrap_or_default();
            let mut ev = vec![util_ev.clone(), format!("on the GPU: {p}")];
            ev.extend(host.evidence());
            out.push(make(
                Finding::Underused,
                Some(i),
                Verdict::Info,
                0.6 * g.coverage,
                format!("GPU {i} is underused by {p}; CPU and disk have room"),
                ev,
                "The job gives the GPU too little work at a time, or waits between steps for something other than CPU or disk: small batches, host-device synchronisation in the loop, a single-threaded step, or the network.",
                &[
                    "Raise the batch size, one step at a time, while VRAM keeps 20-30 % headroom.",
                    "Remove synchronisation from the loop (.item(), .cpu(), printing GPU values every step).",
                    "Profile one iteration (torch.profiler, Nsight Systems) to see where the time goes.",
                    "If it should be computing but is not, treat it as a stuck job: its state, log and output (gpu-doctor-cli focus).",
                ],
            ));
        } else if low && host.io_heavy() && !host.cpu_saturated() {
            gpu_warned = true;
            let mut ev = vec![util_ev.clone()];
            ev.extend(host.evidence());
            let strong = host.iowait.is_some_and(|w| w >= 20.0) || host.psi_io.is_some_and(|p| p >= 25.0);
            out.push(make(
                Finding::IoBound,
                Some(i),
                Verdict::Warn,
                if strong { 0.85 } else { 0.65 } * g.coverage,
                format!("GPU {i} waits for the disk (I/O-bound)"),
                ev,
                "Reading the data takes longer than computing on it: processes wait for the disk (iowait, I/O pressure) while neither the CPU nor the GPU is busy.",
                &IO_STEPS,
            ));
        }

        // VRAM.
        let total =
            sample.and_then(|s| s.vram_total_bytes.get()).or_else(|| info.and_then(|x| x.vram_total_bytes.get()));
        if let (Some(total), Some(used)) = (total, series(h, &keys::gpu(i, "vram_used"), from, now, 0.0, 0.0)) {
            let total = total as f64;
            let frac = used.max / total;
            if frac >= 0.95 {
                gpu_warned = true;
                out.push(make(
                    Finding::VramNearFull,
                    Some(i),
                    Verdict::Warn,
                    0.9 * g.coverage,
                    format!("GPU {i} memory is nearly full ({:.0} %)", 100.0 * frac),
                    vec![format!("VRAM used up to {} of {}", units::bytes(used.max as u64), units::bytes(total as u64))],
                    "With almost no free memory the next larger batch or longer input fails with out-of-memory; frameworks then retry with smaller batches or restart, which looks like an idle GPU.",
                    &VRAM_STEPS,
                ));
            } else if let Some((slope, rising)) = trend(h, &keys::gpu(i, "vram_used"), from, now)
                && rising >= 0.8
                && slope * window >= 0.05 * total
            {
                gpu_warned = true;
                let left = (total - used.max) / slope;
                out.push(make(
                    Finding::VramGrowing,
                    Some(i),
                    Verdict::Warn,
                    (0.5 + 0.4 * rising) * g.coverage,
                    format!("GPU {i} memory keeps growing: full in about {}", units::duration_secs(left)),
                    vec![
                        format!("VRAM grows {}/s ({} over the window)", units::bytes(slope as u64), units::bytes((slope * window) as u64)),
                        format!("{:.0} % of the steps went up or stayed", 100.0 * rising),
                        format!("now {} of {}", units::bytes(used.max as u64), units::bytes(total as u64)),
                    ],
                    "Memory that only grows is usually held by mistake: results kept on the GPU across iterations (a list of loss tensors, caches), or a leak in a library.",
                    &[
                        "Log losses with .item() and drop references to GPU tensors you do not need; run inference under torch.no_grad().",
                        "Watch torch.cuda.memory_allocated() per iteration to find the step that grows.",
                        "As a stop-gap, restart the worker periodically or split the work into smaller runs.",
                    ],
                ));
            }
        }

        // Throttling and clocks, judged only under load.
        let busy = u.mean >= 60.0;
        let frac = |name: &str| mean(h, &keys::gpu(i, name), from, now).unwrap_or(0.0);
        let (thermal, power, hw) = (frac("thr_thermal"), frac("thr_power"), frac("thr_hw"));
        let mut explained_clocks = false;
        if busy && hw >= 0.1 {
            gpu_warned = true;
            explained_clocks = true;
            out.push(make(
                Finding::HardwareSlowdown,
                Some(i),
                Verdict::Warn,
                0.9 * g.coverage,
                format!("GPU {i} is slowed down by hardware protection {:.0} % of the time", 100.0 * hw),
                vec![format!("hardware slowdown reported in {:.0} % of the samples", 100.0 * hw)],
                "The board halves its clocks to protect itself: overheating or the power supply pulling the emergency brake.",
                &[
                    "Check the power cabling (every connector seated, no daisy-chained cables on high-power cards) and that the power supply is sized for all GPUs.",
                    "Check temperatures and cooling as for thermal throttling.",
                    "Look for Xid errors in the kernel log (Checklist, runtime step).",
                ],
            ));
        }
        if busy && thermal >= 0.2 {
            gpu_warned = true;
            explained_clocks = true;
            let temp = series(h, &keys::gpu(i, "temp"), from, now, 0.0, 0.0);
            let mut ev = vec![format!("thermal limit reported in {:.0} % of the samples", 100.0 * thermal)];
            if let Some(t) = temp {
                ev.push(format!("temperature up to {:.0} °C", t.max));
            }
            if let Some(sd) = info.and_then(|x| x.slowdown_temp_c.get()) {
                ev.push(format!("slowdown temperature {sd} °C"));
            }
            if let (Some(c), Some(m)) =
                (mean(h, &keys::gpu(i, "sm_clock"), from, now), info.and_then(|x| x.max_sm_clock_mhz.get()))
            {
                ev.push(format!("SM clock {c:.0} MHz on average of {m} MHz"));
            }
            out.push(make(
                Finding::ThermalThrottle,
                Some(i),
                Verdict::Warn,
                (0.6 + 0.4 * thermal) * g.coverage,
                format!("GPU {i} is thermally throttled: clocks are cut to stay cool"),
                ev,
                "The GPU is at its temperature limit, so the driver lowers its clocks: the same work takes longer.",
                &THERMAL_STEPS,
            ));
        } else if busy && power >= 0.5 {
            explained_clocks = true;
            out.push(make(
                Finding::PowerLimited,
                Some(i),
                Verdict::Info,
                0.8 * g.coverage,
                format!("GPU {i} runs at its power limit"),
                vec![format!("power cap reported in {:.0} % of the samples", 100.0 * power)],
                "At full load a GPU often runs at its power limit and the clocks adapt to it; this is normal. A limit set below the default costs speed.",
                &[
                    "Compare the enforced power limit with the default (Monitor card, nvidia-smi -q -d POWER); restore the default if someone lowered it.",
                    "If the limit is the default, nothing to fix: judge by throughput.",
                ],
            ));
        }
        if busy
            && !explained_clocks
            && let (Some(c), Some(m)) =
                (mean(h, &keys::gpu(i, "sm_clock"), from, now), info.and_then(|x| x.max_sm_clock_mhz.get()))
            && c < 0.7 * f64::from(m)
        {
            out.push(make(
                Finding::ClocksLow,
                Some(i),
                Verdict::Info,
                0.6 * g.coverage,
                format!("GPU {i} runs well below its maximum clock under load"),
                vec![format!("SM clock {c:.0} MHz on average of {m} MHz, with no throttle reason reported")],
                "Without a throttle reason, low clocks under load usually come from clock settings (application clocks, locked clocks) or a power-saving profile.",
                &["Check locked or application clocks (nvidia-smi -q -d CLOCK) and the power profile; reset with nvidia-smi -rgc / -rac."],
            ));
        }

        // PCIe link under load (the latest sample).
        if busy
            && let (Some(s), Some(inf)) = (sample, info)
            && let (Some(gn), Some(w), Some(mg), Some(mw)) =
                (s.pcie_gen.get(), s.pcie_width.get(), inf.max_pcie_gen.get(), inf.max_pcie_width.get())
            && (gn < mg || w < mw)
        {
            gpu_warned = true;
            out.push(make(
                Finding::PcieBelowMax,
                Some(i),
                Verdict::Warn,
                0.7 * g.coverage,
                format!("GPU {i}'s PCIe link runs at Gen{gn} x{w} under load; it supports Gen{mg} x{mw}"),
                vec![format!("link Gen{gn} x{w}, maximum Gen{mg} x{mw}, utilization {:.0} %", u.mean)],
                "A narrower or slower link limits host-to-GPU copies; it matters for data-heavy jobs and multi-GPU communication without NVLink.",
                &["Use a full x16 slot wired to the CPU, avoid risers, reseat the card and check the BIOS PCIe settings; the smoke test measures the copy bandwidth."],
            ));
        }

        // Memory-bandwidth vs compute-bound, for busy GPUs.
        if busy && let Some(bw) = mean(h, &keys::gpu(i, "membw"), from, now) {
            if bw >= 60.0 && bw >= 0.7 * u.mean {
                out.push(make(
                    Finding::MemoryBound,
                    Some(i),
                    Verdict::Info,
                    0.7 * g.coverage,
                    format!("GPU {i}'s work is memory-bandwidth-bound"),
                    vec![format!("memory-bandwidth utilization {bw:.0} % with GPU utilization {:.0} %", u.mean)],
                    "The kernels wait on GPU memory more than on arithmetic: more threads or a faster clock barely help.",
                    &[
                        "Move fewer bytes: lower precision (bf16/fp16, fp8 or int8 for inference) halves the traffic.",
                        "Fuse operations (torch.compile, fused optimizers, FlashAttention) so data is read once.",
                        "A larger batch improves reuse for matrix-heavy work.",
                    ],
                ));
            } else if bw < 40.0 && u.mean >= 80.0 {
                out.push(make(
                    Finding::ComputeBound,
                    Some(i),
                    Verdict::Info,
                    0.6 * g.coverage,
                    format!("GPU {i}'s work is compute-bound"),
                    vec![format!("GPU utilization {:.0} % with memory-bandwidth utilization {bw:.0} %", u.mean)],
                    "The arithmetic units are the limit, which is where a GPU should be.",
                    &["Mixed precision (bf16/fp16) uses the tensor cores and often doubles throughput."],
                ));
            }
        }

        if u.mean >= 80.0 && !gpu_warned {
            out.push(make(
                Finding::Healthy,
                Some(i),
                Verdict::Pass,
                0.8 * g.coverage,
                format!("GPU {i} is busy and not held back"),
                vec![util_ev.clone()],
                "Busy, no throttling, fed in time. Utilization is a means: what counts is useful throughput (samples/s, tokens/s) and a run that finishes.",
                &["To go faster, change one thing at a time in the method's order (batch size within the VRAM headroom, then concurrency, then workers) and measure throughput before and after."],
            ));
        }
    }

    // Host swapping.
    if let Some(swap) = series(h, keys::SWAP_USED, from, now, 0.0, 0.0) {
        let growth = swap.max - swap.min;
        let avail =
            snap.host.as_ref().and_then(|s| s.memory.value().map(|m| (m.ram_available_bytes, m.ram_total_bytes)));
        let tight = avail.is_some_and(|(a, t)| t > 0 && (a as f64) < 0.05 * t as f64);
        if growth >= 64.0 * 1_048_576.0 || (tight && swap.max > 0.0) {
            let mut ev = vec![format!(
                "swap used {} (grew {} in the window)",
                units::bytes(swap.max as u64),
                units::bytes(growth as u64)
            )];
            if let Some((a, t)) = avail {
                ev.push(format!("RAM available {} of {}", units::bytes(a), units::bytes(t)));
            }
            out.push(make(
                Finding::HostSwapping,
                None,
                Verdict::Warn,
                if growth >= 64.0 * 1_048_576.0 { 0.85 } else { 0.6 },
                "The host is swapping: RAM is short".to_string(),
                ev,
                "When host memory runs out, pages go to disk and every process slows down, the data loader included.",
                &[
                    "Use fewer or lighter loader workers (each copies the dataset's Python objects), smaller prefetch buffers, or memory-mapped datasets.",
                    "Close other memory-hungry programs, or add RAM.",
                ],
            ));
        }
    }
    out.sort_by(|a, b| b.severity.cmp(&a.severity).then(b.confidence.total_cmp(&a.confidence)));
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::telemetry::demo::{DemoGpus, DemoHost, Scenario};
    use crate::telemetry::sampler::Sampler;

    /// 90 s of a demo scenario, judged over the last 60 s.
    fn judge(sc: Scenario) -> Vec<Bottleneck> {
        let s = Sampler::manual(
            Arc::new(DemoGpus::new(sc, sc.default_gpus(), 5)),
            Box::new(DemoHost::new(sc, 5)),
            Duration::from_secs(1),
        );
        for t in 0..=90 {
            let t = f64::from(t);
            if (t as u32).is_multiple_of(5) {
                s.step_slow(t);
            }
            s.step_host(t);
            s.step_gpu(t);
        }
        let snap = s.snapshot();
        s.with_history(|h| evaluate(&snap, h, 60.0, 90.0))
    }

    fn findings(v: &[Bottleneck]) -> Vec<(Finding, Option<u32>)> {
        v.iter().map(Bottleneck::key).collect()
    }

    /// The scenario yields every expected finding and no warning besides them.
    fn expect(sc: Scenario, want: &[(Finding, Option<u32>)]) {
        let got = judge(sc);
        let keys = findings(&got);
        for w in want {
            assert!(keys.contains(w), "{sc:?}: missing {w:?} in {keys:?}");
        }
        for b in &got {
            if b.severity >= Verdict::Warn {
                assert!(want.contains(&b.key()), "{sc:?}: unexpected {:?}: {}", b.key(), b.title);
            }
            assert!(!b.evidence.is_empty() && !b.next_steps.is_empty() && b.confidence > 0.3, "{b:?}");
            assert_eq!((b.from, b.to), (30.0, 90.0));
        }
        if want.iter().all(|(f, _)| *f != Finding::Healthy) {
            assert!(!keys.iter().any(|(f, _)| *f == Finding::Healthy), "{sc:?}: healthy next to a problem: {keys:?}");
        }
    }

    #[test]
    fn every_demo_scenario_gets_its_verdict_and_no_wrong_one() {
        use Finding::*;
        expect(Scenario::HealthyTraining, &[(Healthy, Some(0))]);
        expect(Scenario::DataStarved, &[(DataStarved, Some(0))]);
        expect(Scenario::IoBound, &[(IoBound, Some(0))]);
        expect(Scenario::ThermalThrottle, &[(ThermalThrottle, Some(0))]);
        expect(Scenario::VramFull, &[(VramNearFull, Some(0))]);
        expect(Scenario::Imbalance, &[(Imbalance, None), (Healthy, Some(0))]);
        expect(Scenario::Idle, &[(NothingOnGpu, Some(0))]);
    }

    #[test]
    fn too_little_data_gives_no_verdict() {
        let s = Sampler::manual(
            Arc::new(DemoGpus::new(Scenario::DataStarved, 1, 5)),
            Box::new(DemoHost::new(Scenario::DataStarved, 5)),
            Duration::from_secs(1),
        );
        for t in 0..20 {
            s.step_host(f64::from(t));
            s.step_gpu(f64::from(t));
        }
        let snap = s.snapshot();
        let v = s.with_history(|h| evaluate(&snap, h, 60.0, 20.0));
        assert!(v.iter().all(|b| b.gpu.is_none()), "{v:?}");
    }
}
