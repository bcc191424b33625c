//! What the rules read, computed once per evaluation: the window judged, the host's numbers over
//! it, and for each GPU with enough samples its utilization statistics, VRAM, throttle-reason
//! shares, clocks and memory-bandwidth use, plus which idle GPUs an imbalance explains.

use crate::i18n::Message;
use crate::telemetry::history::History;
use crate::telemetry::history::keys::{self, GpuMetric};
use crate::telemetry::sample::{GpuInfo, GpuProcess, GpuSample};
use crate::telemetry::snapshot::Snapshot;
use crate::{msg, units};

/// Share of the window a GPU's utilization samples must cover before it is judged.
pub const MIN_COVERAGE: f64 = 0.5;

/// Utilization below this, %, counts as a wait (the share of such points is `Stats::low_frac`).
pub const LOW_UTIL_PCT: f64 = 30.0;
/// Utilization above this, %, counts as a burst of work (`Stats::high_frac`).
pub const HIGH_UTIL_PCT: f64 = 70.0;
/// Mean utilization below this, %, is low.
pub(super) const LOW_MEAN_PCT: f64 = 50.0;
/// A saw-tooth: at least this share of the points below [`LOW_UTIL_PCT`]...
pub(super) const SAWTOOTH_LOW_SHARE: f64 = 0.2;
/// ...and at least this share above [`HIGH_UTIL_PCT`].
pub(super) const SAWTOOTH_HIGH_SHARE: f64 = 0.1;
/// Host CPU at or above this on average, %, is saturated.
pub(super) const HOST_CPU_SATURATED_PCT: f64 = 85.0;
/// One core at or above this on average, %, is saturated.
pub(super) const CORE_SATURATED_PCT: f64 = 95.0;
/// A core at or above this on average, %, is counted as hot in the evidence.
pub(super) const HOT_CORE_PCT: f64 = 90.0;
/// The GPU job's processes using this much CPU or more on average, % of one core, are busy
/// feeding it (a loader process near a full core, or several workers).
pub(super) const JOB_CPU_HIGH_PCT: f64 = 80.0;
/// The GPU job's processes using this share of the host's busy CPU or more are its main user,
/// even below [`JOB_CPU_HIGH_PCT`] (a machine whose cores the job shares with others).
pub(super) const JOB_CPU_SHARE: f64 = 0.4;

/// Whether a job using `job` % of one core is the CPU's main user on a host whose `cores` run at
/// `host_cpu` % on average: a full core's worth ([`JOB_CPU_HIGH_PCT`]), or at least
/// [`JOB_CPU_SHARE`] of all the CPU the host uses (its mean over all cores times the cores).
pub(super) fn job_is_cpu_user(job: f64, host_cpu: Option<f64>, cores: usize) -> bool {
    let host_busy = host_cpu.map(|c| c * cores.max(1) as f64);
    job >= JOB_CPU_HIGH_PCT || host_busy.is_some_and(|b| b > 0.0 && job >= JOB_CPU_SHARE * b)
}

/// Per-series numbers over the window.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Stats {
    /// Mean of the points.
    pub(super) mean: f64,
    /// Smallest point.
    pub(super) min: f64,
    /// Largest point.
    pub(super) max: f64,
    /// Share of the points below the `low` threshold.
    pub(super) low_frac: f64,
    /// Share of the points above the `high` threshold.
    pub(super) high_frac: f64,
    /// Seconds of the window the points cover (first to last, plus one step).
    pub(super) span: f64,
}

/// `key`'s statistics over `[from, to]`, with the shares below `low` and above `high`.
pub(super) fn series(h: &History, key: &str, from: f64, to: f64, low: f64, high: f64) -> Option<Stats> {
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
    Some(Stats { mean, min, max, low_frac, high_frac, span: last - first + step })
}

/// `key`'s mean over `[from, to]`.
pub(super) fn mean(h: &History, key: &str, from: f64, to: f64) -> Option<f64> {
    series(h, key, from, to, 0.0, 0.0).map(|s| s.mean)
}

/// Least-squares slope (units per second) and the share of steps that did not go down.
pub(super) fn trend(h: &History, key: &str, from: f64, to: f64) -> Option<(f64, f64)> {
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
pub(super) struct Host {
    /// Total CPU utilization, % on average.
    pub(super) cpu: Option<f64>,
    /// The busiest core and its mean utilization, %.
    pub(super) hottest_core: Option<(usize, f64)>,
    /// Cores at 90 % or more on average.
    pub(super) hot_cores: usize,
    /// iowait, % on average.
    pub(super) iowait: Option<f64>,
    /// I/O pressure (some, avg10), % on average.
    pub(super) psi_io: Option<f64>,
    /// Disk reads, bytes/s on average.
    pub(super) disk_read: Option<f64>,
    /// Logical CPUs.
    pub(super) cores: usize,
}

impl Host {
    fn read(h: &History, snap: &Snapshot, from: f64, to: f64) -> Host {
        let cores = snap.host.as_ref().map_or(0, |s| s.per_core_pct.len());
        let core_means: Vec<(usize, f64)> =
            (0..cores).filter_map(|c| mean(h, &keys::core(c), from, to).map(|m| (c, m))).collect();
        Host {
            cpu: mean(h, keys::CPU, from, to),
            hottest_core: core_means.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)),
            hot_cores: core_means.iter().filter(|(_, m)| *m >= HOT_CORE_PCT).count(),
            iowait: mean(h, keys::IOWAIT, from, to),
            psi_io: mean(h, keys::PSI_IO, from, to),
            disk_read: mean(h, keys::DISK_READ, from, to),
            cores,
        }
    }

    /// The whole CPU, or one core, is saturated.
    pub(super) fn cpu_saturated(&self) -> bool {
        self.cpu.is_some_and(|c| c >= HOST_CPU_SATURATED_PCT)
            || self.hottest_core.is_some_and(|(_, m)| m >= CORE_SATURATED_PCT)
    }

    /// Processes wait for the disk (iowait or I/O pressure).
    pub(super) fn io_heavy(&self) -> bool {
        self.iowait.is_some_and(|w| w >= 10.0) || self.psi_io.is_some_and(|p| p >= 10.0)
    }

    /// The host's numbers as evidence lines.
    pub(super) fn evidence(&self) -> Vec<Message> {
        let mut v = Vec::new();
        if let Some(c) = self.cpu {
            v.push(msg!("host CPU {cpu} % on average", cpu = format!("{c:.0}")));
        }
        if let Some((i, m)) = self.hottest_core {
            v.push(msg!(
                "busiest core: core {core} at {pct} %; {n} core(s) at {hot} % or more",
                core = i,
                pct = format!("{m:.0}"),
                n = self.hot_cores,
                hot = format!("{HOT_CORE_PCT:.0}")
            ));
        }
        if let Some(w) = self.iowait {
            v.push(format!("iowait {w:.1} %").into());
        }
        if let Some(p) = self.psi_io {
            v.push(msg!("I/O pressure (some, avg10) {pct} %", pct = format!("{p:.0}")));
        }
        if let Some(r) = self.disk_read {
            v.push(msg!("disk reads {rate}", rate = units::rate(r)));
        }
        v
    }
}

/// One GPU's numbers over the window (only GPUs whose utilization covers half of it or more).
pub(super) struct GpuWindow<'a> {
    /// NVML index.
    pub(super) index: u32,
    /// Utilization, with the shares below [`LOW_UTIL_PCT`] and above [`HIGH_UTIL_PCT`].
    pub(super) util: Stats,
    /// 0.5..1: the share of the window the utilization points cover.
    pub(super) coverage: f64,
    /// Its static facts (limits, maxima).
    pub(super) info: Option<&'a GpuInfo>,
    /// Its latest sample (processes, PCIe link).
    pub(super) sample: Option<&'a GpuSample>,
    /// The processes on it in the latest sample; `None` when not available.
    pub(super) procs: Option<&'a [GpuProcess]>,
    /// The utilization as an evidence line.
    pub(super) util_ev: Message,
    /// VRAM total (bytes) and used over the window, when both are known.
    pub(super) vram: Option<(f64, Stats)>,
    /// Share of the samples with a thermal throttle reason.
    pub(super) thermal: f64,
    /// Share of the samples at the software power cap.
    pub(super) power: f64,
    /// Share of the samples with a hardware slowdown or power brake.
    pub(super) hw: f64,
    /// Mean SM clock and the maximum, MHz, when both are known.
    pub(super) clocks: Option<(f64, u32)>,
    /// Memory-bandwidth utilization, % on average.
    pub(super) membw: Option<f64>,
    /// CPU of the processes on it and their trees, % of one core; `None` where per-process CPU
    /// could not be read (not Linux, a container).
    pub(super) job_cpu: Option<Stats>,
}

impl GpuWindow<'_> {
    /// Busy enough for throttling, clocks, the PCIe link and the kind of work to be judged.
    pub(super) fn busy(&self) -> bool {
        self.util.mean >= 60.0
    }

    /// Low utilization on average.
    pub(super) fn low(&self) -> bool {
        self.util.mean < LOW_MEAN_PCT
    }

    /// Utilization alternating between low and high (the GPU waits between batches).
    pub(super) fn sawtooth(&self) -> bool {
        self.util.low_frac >= SAWTOOTH_LOW_SHARE && self.util.high_frac >= SAWTOOTH_HIGH_SHARE
    }

    /// The job on the GPU keeps the CPU busy (its processes' trees, on average): a full core's
    /// worth, or a large share of all the CPU the host uses; `None` when not known.
    pub(super) fn job_cpu_high(&self, host: &Host) -> Option<bool> {
        self.job_cpu.map(|j| job_is_cpu_user(j.mean, host.cpu, host.cores))
    }

    /// The job's CPU as an evidence line.
    pub(super) fn job_cpu_ev(&self) -> Option<Message> {
        self.job_cpu.map(|j| {
            msg!(
                "GPU {gpu}'s processes and their children use {mean} % of one core on average (up to {max} %)",
                gpu = self.index,
                mean = format!("{:.0}", j.mean),
                max = format!("{:.0}", j.max)
            )
        })
    }

    /// Practically no work, while neither the CPU nor the disk explains it.
    pub(super) fn quiet(&self, host: &Host) -> bool {
        self.util.mean < 5.0 && self.util.max < 15.0 && !host.cpu_saturated() && !host.io_heavy()
    }

    /// The process list is known and empty.
    pub(super) fn nothing_running(&self) -> bool {
        self.procs.is_some_and(<[GpuProcess]>::is_empty)
    }

    /// Busy and slowed by hardware protection.
    pub(super) fn hw_slowed(&self) -> bool {
        self.busy() && self.hw >= 0.1
    }

    /// Busy and at its temperature limit.
    pub(super) fn thermal_throttled(&self) -> bool {
        self.busy() && self.thermal >= 0.2
    }

    /// Busy and at its power limit (and not thermally throttled, which explains it first).
    pub(super) fn power_capped(&self) -> bool {
        self.busy() && self.power >= 0.5 && !self.thermal_throttled()
    }
}

/// The window judged and everything the rules read, computed once.
pub(super) struct Ctx<'a> {
    /// The latest snapshot (processes, link state, limits).
    pub(super) snap: &'a Snapshot,
    /// The history the window is read from.
    pub(super) h: &'a History,
    /// Length of the window, seconds.
    pub(super) window: f64,
    /// Start of the window, seconds since the sampler started.
    pub(super) from: f64,
    /// End of the window.
    pub(super) to: f64,
    /// The host's numbers.
    pub(super) host: Host,
    /// The GPUs with enough samples, in inventory order.
    pub(super) gpus: Vec<GpuWindow<'a>>,
    /// With two or more GPUs, some busy while others idle: the indices of (busy, idle) ones.
    pub(super) imbalance: Option<(Vec<u32>, Vec<u32>)>,
}

impl<'a> Ctx<'a> {
    /// Reads `[now - window, now]`.
    pub(super) fn new(snap: &'a Snapshot, h: &'a History, window: f64, now: f64) -> Self {
        let from = now - window;
        let gpus: Vec<GpuWindow> =
            snap.inventory.gpus.iter().filter_map(|info| gpu_window(snap, h, info.index, window, from, now)).collect();
        let imbalance = (gpus.len() >= 2)
            .then(|| {
                let busy: Vec<u32> = gpus.iter().filter(|g| g.util.mean >= 60.0).map(|g| g.index).collect();
                let idle: Vec<u32> = gpus.iter().filter(|g| g.util.mean <= 15.0).map(|g| g.index).collect();
                (busy, idle)
            })
            .filter(|(busy, idle)| !busy.is_empty() && !idle.is_empty());
        Ctx { snap, h, window, from, to: now, host: Host::read(h, snap, from, now), gpus, imbalance }
    }

    /// GPU `index` is idle while others work: the imbalance verdict covers it.
    pub(super) fn idle_explained(&self, index: u32) -> bool {
        self.imbalance.as_ref().is_some_and(|(_, idle)| idle.contains(&index))
    }
}

/// GPU `i`'s numbers over `[from, to]`; `None` when its utilization covers less than half of the
/// window.
fn gpu_window<'a>(snap: &'a Snapshot, h: &History, i: u32, window: f64, from: f64, to: f64) -> Option<GpuWindow<'a>> {
    let util = series(h, &keys::gpu(i, GpuMetric::Util), from, to, LOW_UTIL_PCT, HIGH_UTIL_PCT)?;
    // Over a long window the history returns 10 s buckets: coverage is judged by time span.
    let coverage = (util.span / window).min(1.0);
    if coverage < MIN_COVERAGE {
        return None;
    }
    let info = snap.inventory.gpus.iter().find(|x| x.index == i);
    let sample = snap.gpus.iter().find(|x| x.index == i);
    let total = sample.and_then(|s| s.vram_total_bytes.get()).or_else(|| info.and_then(|x| x.vram_total_bytes.get()));
    let vram = match (total, series(h, &keys::gpu(i, GpuMetric::VramUsed), from, to, 0.0, 0.0)) {
        (Some(total), Some(used)) => Some((total as f64, used)),
        _ => None,
    };
    let frac = |m: GpuMetric| mean(h, &keys::gpu(i, m), from, to).unwrap_or(0.0);
    let clocks =
        match (mean(h, &keys::gpu(i, GpuMetric::SmClock), from, to), info.and_then(|x| x.max_sm_clock_mhz.get())) {
            (Some(c), Some(m)) => Some((c, m)),
            _ => None,
        };
    Some(GpuWindow {
        index: i,
        util,
        coverage,
        info,
        sample,
        procs: sample.and_then(|s| s.processes.value()).map(Vec::as_slice),
        util_ev: msg!(
            "GPU {i} utilization {mean} % on average (min {min}, max {max}); below {low} % {share} % of the time",
            i = i,
            mean = format!("{:.0}", util.mean),
            min = format!("{:.0}", util.min),
            max = format!("{:.0}", util.max),
            low = format!("{LOW_UTIL_PCT:.0}"),
            share = format!("{:.0}", 100.0 * util.low_frac)
        ),
        vram,
        thermal: frac(GpuMetric::ThrottleThermal),
        power: frac(GpuMetric::ThrottlePower),
        hw: frac(GpuMetric::ThrottleHw),
        clocks,
        membw: mean(h, &keys::gpu(i, GpuMetric::MemBw), from, to),
        job_cpu: series(h, &keys::gpu(i, GpuMetric::JobCpu), from, to, 0.0, 0.0),
    })
}
