//! Bounded metric history: every series keeps full-rate points for a recent window (15 min by
//! default) and min/mean/max buckets for a long window (24 h of 10 s buckets by default).
//!
//! Memory is bounded by the configuration, not by how long the app runs: old points fall off the
//! front of fixed-capacity ring buffers.

use std::collections::{HashMap, VecDeque};

use serde::{Deserialize, Serialize};

/// Retention settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HistoryConfig {
    /// Seconds of full-rate points kept.
    pub fine_secs: f64,
    /// Most full-rate points per series (guards against tiny intervals).
    pub fine_max_points: usize,
    /// Width of a long-term bucket, seconds.
    pub bucket_secs: f64,
    /// Seconds of long-term buckets kept.
    pub coarse_secs: f64,
}

impl Default for HistoryConfig {
    fn default() -> Self {
        // 15 min at the fastest interval (0.25 s) is 3600 points.
        HistoryConfig { fine_secs: 15.0 * 60.0, fine_max_points: 3600, bucket_secs: 10.0, coarse_secs: 24.0 * 3600.0 }
    }
}

/// One long-term bucket.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// Start of the bucket, seconds since the sampler started.
    pub t: f64,
    /// Smallest value in the bucket.
    pub min: f32,
    /// Mean of the bucket.
    pub mean: f32,
    /// Largest value in the bucket.
    pub max: f32,
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    t: f64,
    min: f32,
    max: f32,
    sum: f64,
    n: u32,
}

impl Pending {
    fn bucket(&self) -> Bucket {
        Bucket { t: self.t, min: self.min, mean: (self.sum / f64::from(self.n.max(1))) as f32, max: self.max }
    }
}

/// One metric over time.
#[derive(Clone, Debug)]
pub struct Series {
    fine: VecDeque<(f64, f32)>,
    coarse: VecDeque<Bucket>,
    pending: Option<Pending>,
}

/// Summary of a series over a time range.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Smallest value.
    pub min: f64,
    /// Mean value.
    pub mean: f64,
    /// Largest value.
    pub max: f64,
}

impl Series {
    fn new(cfg: &HistoryConfig) -> Self {
        Series { fine: VecDeque::with_capacity(cfg.fine_max_points.min(256)), coarse: VecDeque::new(), pending: None }
    }

    fn push(&mut self, cfg: &HistoryConfig, t: f64, v: f64) {
        let v32 = v as f32;
        let max_buckets = (cfg.coarse_secs / cfg.bucket_secs).ceil() as usize;
        grow_capped(&mut self.fine, cfg.fine_max_points + 1);
        self.fine.push_back((t, v32));
        while self.fine.len() > cfg.fine_max_points || self.fine.front().is_some_and(|(t0, _)| *t0 < t - cfg.fine_secs)
        {
            self.fine.pop_front();
        }
        let start = (t / cfg.bucket_secs).floor() * cfg.bucket_secs;
        match &mut self.pending {
            Some(p) if p.t == start => {
                p.min = p.min.min(v32);
                p.max = p.max.max(v32);
                p.sum += v;
                p.n += 1;
            }
            other => {
                if let Some(done) = other.take() {
                    grow_capped(&mut self.coarse, max_buckets);
                    self.coarse.push_back(done.bucket());
                }
                *other = Some(Pending { t: start, min: v32, max: v32, sum: v, n: 1 });
            }
        }
        while self.coarse.len() + 1 > max_buckets {
            self.coarse.pop_front();
        }
    }

    /// The newest value and its time.
    pub fn last(&self) -> Option<(f64, f64)> {
        self.fine.back().map(|(t, v)| (*t, f64::from(*v)))
    }

    /// Number of full-rate points held.
    pub fn fine_len(&self) -> usize {
        self.fine.len()
    }

    /// Number of long-term buckets held (the open one included).
    pub fn coarse_len(&self) -> usize {
        self.coarse.len() + usize::from(self.pending.is_some())
    }

    /// Long-term buckets overlapping `[from, to]`, oldest first, the open bucket included.
    pub fn buckets(&self, from: f64, to: f64, bucket_secs: f64) -> Vec<Bucket> {
        self.coarse
            .iter()
            .copied()
            .chain(self.pending.map(|p| p.bucket()))
            .filter(|b| b.t + bucket_secs >= from && b.t <= to)
            .collect()
    }

    /// Points for a chart over `[from, to]`: full-rate points when they cover the range, bucket
    /// means otherwise. At most about `max_points` points: when there are more, each group keeps
    /// its minimum and maximum in time order, so spikes and saw-tooth patterns stay visible.
    pub fn points(&self, from: f64, to: f64, max_points: usize, bucket_secs: f64) -> Vec<[f64; 2]> {
        // The full-rate points cover the range when they reach back to its start, or when none
        // were dropped yet (the first one lies in the first bucket): a young history then gives
        // its real points rather than 10 s bucket means that overstate how much time it covers.
        let fine_covers = self
            .fine
            .front()
            .is_some_and(|(t0, _)| *t0 <= from || self.coarse.front().is_none_or(|b| *t0 < b.t + bucket_secs))
            || self.coarse.is_empty();
        let raw: Vec<[f64; 2]> = if fine_covers {
            self.fine.iter().filter(|(t, _)| *t >= from && *t <= to).map(|(t, v)| [*t, f64::from(*v)]).collect()
        } else {
            self.buckets(from, to, bucket_secs).iter().map(|b| [b.t + bucket_secs / 2.0, f64::from(b.mean)]).collect()
        };
        decimate(raw, max_points)
    }

    /// Min, mean and max over `[from, to]` from the full-rate points (bucket data beyond them).
    pub fn stats(&self, from: f64, to: f64, bucket_secs: f64) -> Option<Stats> {
        let mut n = 0.0;
        let mut sum = 0.0;
        let mut min = f64::INFINITY;
        let mut max = f64::NEG_INFINITY;
        let fine_from = self.fine.front().map_or(f64::INFINITY, |(t, _)| *t);
        if from < fine_from {
            for b in self.buckets(from, fine_from.min(to), bucket_secs) {
                if b.t + bucket_secs <= fine_from {
                    n += 1.0;
                    sum += f64::from(b.mean);
                    min = min.min(f64::from(b.min));
                    max = max.max(f64::from(b.max));
                }
            }
        }
        for (t, v) in &self.fine {
            if *t >= from && *t <= to {
                let v = f64::from(*v);
                n += 1.0;
                sum += v;
                min = min.min(v);
                max = max.max(v);
            }
        }
        (n > 0.0).then(|| Stats { min, mean: sum / n, max })
    }

    fn approx_bytes(&self) -> usize {
        self.fine.capacity() * std::mem::size_of::<(f64, f32)>()
            + self.coarse.capacity() * std::mem::size_of::<Bucket>()
    }
}

/// Grows a full ring buffer by doubling, but never past `cap`, so a buffer that fills up holds
/// exactly what it may keep (plain doubling would leave up to half of it unused yet touched).
fn grow_capped<T>(buf: &mut VecDeque<T>, cap: usize) {
    if buf.len() == buf.capacity() && buf.capacity() < cap {
        let extra = buf.capacity().max(32).min(cap - buf.capacity());
        buf.reserve_exact(extra);
    }
}

/// Keeps the min and max of each of `max_points / 2` groups, in time order.
fn decimate(points: Vec<[f64; 2]>, max_points: usize) -> Vec<[f64; 2]> {
    if points.len() <= max_points.max(4) {
        return points;
    }
    let groups = (max_points / 2).max(2);
    let per = points.len().div_ceil(groups);
    let mut out = Vec::with_capacity(groups * 2);
    for chunk in points.chunks(per) {
        let lo = chunk.iter().min_by(|a, b| a[1].total_cmp(&b[1]));
        let hi = chunk.iter().max_by(|a, b| a[1].total_cmp(&b[1]));
        if let (Some(lo), Some(hi)) = (lo, hi) {
            if lo[0] <= hi[0] {
                out.push(*lo);
                if hi != lo {
                    out.push(*hi);
                }
            } else {
                out.push(*hi);
                out.push(*lo);
            }
        }
    }
    out
}

/// How much an event matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventLevel {
    /// Informational.
    Info,
    /// Something degraded.
    Warn,
    /// Something failed.
    Error,
}

/// What kind of thing happened: what code decides on (a report lists the driver calls that hung
/// while it sampled), never read back from the event's text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A driver call did not return in time (the watchdog's stall).
    GpuStall,
    /// The driver answers again after a stall.
    AnsweringAgain,
    /// A GPU fell off or stopped answering.
    GpuLost,
    /// A bottleneck verdict began or ended.
    Verdict,
    /// Anything else.
    #[default]
    Other,
}

/// Something that happened at a point in time (a GPU lost, a source stopped answering).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Seconds since the sampler started.
    pub t: f64,
    /// What kind of event it is.
    #[serde(default)]
    pub kind: EventKind,
    /// The GPU it concerns, if any.
    pub gpu: Option<u32>,
    /// How much it matters.
    pub level: EventLevel,
    /// What happened, in plain words (compact: a recording holds up to a thousand).
    #[serde(with = "crate::i18n::message::compact")]
    pub text: crate::i18n::Message,
}

const MAX_EVENTS: usize = 1000;

/// The most series one history holds: every metric of [`crate::telemetry::sample::MAX_GPUS`] GPUs
/// and [`crate::telemetry::sample::MAX_CORES`] cores with room to spare. Values for a new series
/// past it are dropped and counted ([`History::dropped_series`]), so no source can grow the
/// history without bound.
pub const MAX_SERIES: usize = 8192;

/// All series of a session plus its events.
#[derive(Clone, Debug)]
pub struct History {
    cfg: HistoryConfig,
    series: HashMap<String, Series>,
    events: VecDeque<Event>,
    dropped_series: usize,
}

impl Default for History {
    fn default() -> Self {
        History::new(HistoryConfig::default())
    }
}

impl History {
    /// An empty history.
    pub fn new(cfg: HistoryConfig) -> Self {
        History { cfg, series: HashMap::new(), events: VecDeque::new(), dropped_series: 0 }
    }

    /// Values not kept because they would have started a series past [`MAX_SERIES`].
    pub fn dropped_series(&self) -> usize {
        self.dropped_series
    }

    /// The retention settings.
    pub fn config(&self) -> HistoryConfig {
        self.cfg
    }

    /// Appends `v` at time `t` to series `key`. Non-finite values are skipped.
    pub fn push(&mut self, key: &str, t: f64, v: f64) {
        if !v.is_finite() {
            return;
        }
        let cfg = self.cfg;
        let full = self.series.len() >= MAX_SERIES;
        match self.series.get_mut(key) {
            Some(s) => s.push(&cfg, t, v),
            None if full => self.dropped_series += 1,
            None => {
                let mut s = Series::new(&cfg);
                s.push(&cfg, t, v);
                self.series.insert(key.to_string(), s);
            }
        }
    }

    /// The series `key`, if anything was pushed to it.
    pub fn series(&self, key: &str) -> Option<&Series> {
        self.series.get(key)
    }

    /// Chart points of `key` over `[from, to]` (see [`Series::points`]); empty when unknown.
    pub fn points(&self, key: &str, from: f64, to: f64, max_points: usize) -> Vec<[f64; 2]> {
        self.series.get(key).map(|s| s.points(from, to, max_points, self.cfg.bucket_secs)).unwrap_or_default()
    }

    /// Statistics of `key` over `[from, to]`.
    pub fn stats(&self, key: &str, from: f64, to: f64) -> Option<Stats> {
        self.series.get(key).and_then(|s| s.stats(from, to, self.cfg.bucket_secs))
    }

    /// Records an event; the oldest are dropped beyond a fixed count.
    pub fn add_event(&mut self, event: Event) {
        self.events.push_back(event);
        while self.events.len() > MAX_EVENTS {
            self.events.pop_front();
        }
    }

    /// Events, oldest first.
    pub fn events(&self) -> impl Iterator<Item = &Event> {
        self.events.iter()
    }

    /// Number of series.
    pub fn len(&self) -> usize {
        self.series.len()
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.series.is_empty()
    }

    /// Approximate heap bytes held by the point buffers.
    pub fn approx_bytes(&self) -> usize {
        self.series.iter().map(|(k, s)| k.capacity() + s.approx_bytes()).sum::<usize>()
            + self.events.capacity() * std::mem::size_of::<Event>()
    }
}

/// Series key names shared by the sampler, the GUI and the CLI.
pub mod keys {
    /// A per-GPU metric kept in the history. Its [`GpuMetric::name`] is the stored key's suffix
    /// (`gpu0.util`), part of the recording and CSV formats: never rename one. Each has one entry
    /// in the metric table, [`crate::telemetry::metric::GPU_METRICS`] (its unit, wording, chart,
    /// CSV column, Prometheus name and how it is read).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum GpuMetric {
        /// GPU utilization (% of time a kernel ran).
        Util,
        /// Memory bandwidth utilization, %.
        MemBw,
        /// VRAM used, bytes.
        VramUsed,
        /// Core temperature, °C.
        Temp,
        /// Board power draw, W.
        Power,
        /// Enforced power limit, W.
        PowerLimit,
        /// SM clock, MHz.
        SmClock,
        /// Memory clock, MHz.
        MemClock,
        /// PCIe receive (to the GPU), bytes/s.
        PcieRx,
        /// PCIe transmit (from the GPU), bytes/s.
        PcieTx,
        /// Fan speed, %.
        Fan,
        /// Thermal throttling (software or hardware) active: 0 or 1.
        ThrottleThermal,
        /// Software power cap active: 0 or 1.
        ThrottlePower,
        /// Hardware slowdown or power brake active: 0 or 1.
        ThrottleHw,
        /// CPU used by the processes on the GPU and their process trees, % of one core (from the
        /// slow step; absent where per-process CPU cannot be read).
        JobCpu,
    }

    impl GpuMetric {
        /// The stored key's suffix.
        pub const fn name(self) -> &'static str {
            match self {
                GpuMetric::Util => "util",
                GpuMetric::MemBw => "membw",
                GpuMetric::VramUsed => "vram_used",
                GpuMetric::Temp => "temp",
                GpuMetric::Power => "power",
                GpuMetric::PowerLimit => "power_limit",
                GpuMetric::SmClock => "sm_clock",
                GpuMetric::MemClock => "mem_clock",
                GpuMetric::PcieRx => "pcie_rx",
                GpuMetric::PcieTx => "pcie_tx",
                GpuMetric::Fan => "fan",
                GpuMetric::ThrottleThermal => "thr_thermal",
                GpuMetric::ThrottlePower => "thr_power",
                GpuMetric::ThrottleHw => "thr_hw",
                GpuMetric::JobCpu => "job_cpu",
            }
        }
    }

    /// Key of a per-GPU metric, e.g. `gpu0.util`.
    pub fn gpu(index: u32, metric: GpuMetric) -> String {
        format!("gpu{index}.{}", metric.name())
    }
    /// Key of a CPU core's utilization.
    pub fn core(index: usize) -> String {
        format!("host.core{index}")
    }
    /// Total CPU utilization, %.
    pub const CPU: &str = "host.cpu";
    /// iowait, %.
    pub const IOWAIT: &str = "host.iowait";
    /// RAM used, bytes.
    pub const RAM_USED: &str = "host.ram_used";
    /// Swap used, bytes.
    pub const SWAP_USED: &str = "host.swap_used";
    /// Sum of disk reads, bytes/s.
    pub const DISK_READ: &str = "host.disk_read";
    /// Sum of disk writes, bytes/s.
    pub const DISK_WRITE: &str = "host.disk_write";
    /// Network receive, bytes/s.
    pub const NET_RX: &str = "host.net_rx";
    /// Network transmit, bytes/s.
    pub const NET_TX: &str = "host.net_tx";
    /// I/O pressure (some, avg10), %.
    pub const PSI_IO: &str = "host.psi_io";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fine_window_is_bounded_by_time_and_count() {
        let mut h = History::default();
        for i in 0..5000 {
            h.push("x", f64::from(i), f64::from(i));
        }
        let s = h.series("x").map(|s| (s.fine_len(), s.last())).unwrap_or_default();
        assert_eq!(s.0, 901, "15 min of 1 s points (inclusive)");
        assert_eq!(s.1, Some((4999.0, 4999.0)));
        let mut fast = History::default();
        for i in 0..10_000 {
            fast.push("x", f64::from(i) * 0.1, 1.0);
        }
        assert_eq!(fast.series("x").map(Series::fine_len), Some(3600), "count cap for tiny intervals");
    }

    #[test]
    fn buckets_hold_min_mean_max() {
        let mut h = History::default();
        for (t, v) in [(0.0, 1.0), (3.0, 5.0), (9.0, 3.0), (10.0, 7.0)] {
            h.push("x", t, v);
        }
        let b = h.series("x").map(|s| s.buckets(0.0, 20.0, 10.0)).unwrap_or_default();
        assert_eq!(b.len(), 2);
        assert_eq!(b.first().copied(), Some(Bucket { t: 0.0, min: 1.0, mean: 3.0, max: 5.0 }));
        assert_eq!(b.get(1).map(|b| b.mean), Some(7.0));
    }

    #[test]
    fn size_does_not_grow_with_run_time() {
        let run = |secs: u32| {
            let mut h = History::default();
            for i in 0..secs {
                for k in ["a", "b", "c"] {
                    h.push(k, f64::from(i), f64::from(i % 100));
                }
            }
            (h.series("a").map(|s| (s.fine_len(), s.coarse_len())), h.approx_bytes())
        };
        let day = run(86_400);
        let two_days = run(2 * 86_400);
        assert_eq!(day.0, two_days.0);
        assert_eq!(day.0, Some((901, 8640)));
        assert!(two_days.1 <= day.1 * 11 / 10, "{} vs {}", two_days.1, day.1);
    }

    #[test]
    fn long_windows_use_buckets_and_charts_are_decimated() {
        let mut h = History::default();
        for i in 0..7200 {
            h.push("x", f64::from(i), if i % 8 < 2 { 95.0 } else { 5.0 });
        }
        let long = h.points("x", 0.0, 7200.0, 10_000);
        assert!(long.len() <= 721 && long.len() >= 700, "{}", long.len());
        let short = h.points("x", 7000.0, 7200.0, 100);
        assert!(short.len() <= 100);
        assert!(short.iter().any(|p| p[1] == 95.0) && short.iter().any(|p| p[1] == 5.0), "spikes survive");
        let st = h.stats("x", 7100.0, 7199.0).unwrap_or(Stats { min: 0.0, mean: 0.0, max: 0.0 });
        assert_eq!((st.min, st.max), (5.0, 95.0));
        assert!(h.stats("x", 0.0, 7200.0).is_some());
        h.push("x", 7201.0, f64::NAN);
        assert_eq!(h.series("x").and_then(Series::last).map(|l| l.0), Some(7199.0));
    }

    #[test]
    fn events_are_bounded() {
        let mut h = History::default();
        for i in 0..1500 {
            h.add_event(Event {
                t: f64::from(i),
                kind: EventKind::Other,
                gpu: None,
                level: EventLevel::Info,
                text: crate::i18n::Message::default(),
            });
        }
        assert_eq!(h.events().count(), 1000);
        assert_eq!(h.events().next().map(|e| e.t), Some(500.0));
    }
}
