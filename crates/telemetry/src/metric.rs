//! The per-GPU metric table: one [`MetricDef`] per [`GpuMetric`], in display order, saying
//! everything the surfaces need about a metric — its unit, its label and description (catalogue
//! keys, rendered in the reader's language where they are shown), its line in the support
//! report and in `monitor`, its Prometheus name, type and help, whether the fast or the slow
//! sampling step reads it, the Monitor chart it is drawn in, its CSV column, and how its value is
//! read from a [`GpuSample`].
//!
//! The sampler's history append (and so replay), the recordings' CSV columns, the Monitor's
//! charts, the report's recent metrics, `monitor`'s line and the exporter's per-GPU series all
//! read this table. Adding a metric is one entry here, plus the code that reads it from its
//! source (the [`GpuSample`] field, `nvml.rs`, `demo.rs`), its [`GpuMetric`] key (whose name is
//! part of the recording format) and its Chinese texts (i18n/zh-CN/).

use super::history::keys::GpuMetric;
use super::sample::GpuSample;
use super::throttle;
use crate::i18n::Message;
use crate::tr_key;
use crate::units::MetricUnit;

/// Which sampling step reads a metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampled {
    /// Every fast GPU step (each interval).
    Fast,
    /// The slow step (every max(interval, 2 s): the NVML call is slow), merged into the next
    /// fast sample.
    Slow,
    /// The slow step, from the GPU's processes and their process trees between two slow ticks:
    /// the sampler computes it and no sample holds it ([`MetricDef::read`] gives nothing).
    Processes,
}

/// The type of a Prometheus metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromKind {
    /// A value that goes up and down.
    Gauge,
    /// A total that only grows (the exposition adds `_total` to its name).
    Counter,
}

/// How the exporter (`serve`, `check --format prom`) names a metric.
#[derive(Clone, Copy, Debug)]
pub struct PromDef {
    /// Metric name: dcgm-exporter's where it has an equivalent, else `gpu_doctor_gpu_*`. Part of
    /// what dashboards and alert rules read: never rename one.
    pub name: &'static str,
    /// Its `# HELP` text (English: an exposition has no language).
    pub help: &'static str,
    /// Gauge or counter.
    pub kind: PromKind,
    /// The exported value from the reading (dcgm-exporter's frame buffer is in whole MiB).
    pub value: fn(f64) -> f64,
}

/// A gauge exported as it is read.
const fn gauge(name: &'static str, help: &'static str) -> PromDef {
    PromDef { name, help, kind: PromKind::Gauge, value: as_read }
}

fn as_read(v: f64) -> f64 {
    v
}

/// Bytes to whole MiB (dcgm-exporter's frame-buffer metrics).
fn whole_mib(bytes: f64) -> f64 {
    (bytes / (1024.0 * 1024.0)).round()
}

/// The Monitor's GPU charts, in the order they are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuChart {
    /// GPU and memory-bandwidth utilization.
    Util,
    /// VRAM used, against each GPU's total.
    Vram,
    /// Power draw, against the enforced limit.
    Power,
    /// Temperature, against the slowdown threshold.
    Temp,
    /// SM clock, against its maximum.
    Clock,
    /// PCIe traffic both ways.
    Pcie,
}

impl GpuChart {
    /// Every chart, in the order they are drawn.
    pub const ALL: [GpuChart; 6] =
        [GpuChart::Util, GpuChart::Vram, GpuChart::Power, GpuChart::Temp, GpuChart::Clock, GpuChart::Pcie];

    /// The chart's id (unique among the Monitor's charts).
    pub fn id(self) -> &'static str {
        match self {
            GpuChart::Util => "gpu_util",
            GpuChart::Vram => "gpu_vram",
            GpuChart::Power => "gpu_power",
            GpuChart::Temp => "gpu_temp",
            GpuChart::Clock => "gpu_clock",
            GpuChart::Pcie => "gpu_pcie",
        }
    }

    /// Its title (a catalogue key).
    pub fn title(self) -> &'static str {
        match self {
            GpuChart::Util => tr_key!("GPU utilization and memory bandwidth utilization"),
            GpuChart::Vram => tr_key!("VRAM used vs total"),
            GpuChart::Power => tr_key!("Power draw vs enforced limit"),
            GpuChart::Temp => tr_key!("Temperature vs slowdown threshold"),
            GpuChart::Clock => tr_key!("SM clock vs maximum (MHz)"),
            GpuChart::Pcie => tr_key!("PCIe throughput"),
        }
    }

    /// What the title means, shown on hover (a catalogue key).
    pub fn help(self) -> &'static str {
        match self {
            GpuChart::Util => tr_key!(
                "GPU utilization: % of time a kernel ran. Memory bandwidth utilization: % of time device memory was read or written. Neither is the share of VRAM in use."
            ),
            GpuChart::Vram => tr_key!("Device memory in use; the thin line is each GPU's total."),
            GpuChart::Power => tr_key!("Board power draw; the thin line is the power limit the driver enforces."),
            GpuChart::Temp => tr_key!("GPU core temperature; the thin line is where the hardware starts to slow down."),
            GpuChart::Clock => tr_key!(
                "Streaming-multiprocessor clock; the thin line is the maximum. Far below the maximum under load means throttling."
            ),
            GpuChart::Pcie => tr_key!(
                "Host-to-GPU (RX) and GPU-to-host (TX) traffic, sampled every 2 s or slower (the NVML call is slow)."
            ),
        }
    }
}

/// Where a metric is charted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChartLine {
    /// The chart its line is in.
    pub chart: GpuChart,
    /// The line's name, `{i}` the GPU (a catalogue key), where the chart names it otherwise
    /// than [`MetricDef::per_gpu`] does.
    pub name: Option<&'static str>,
    /// Drawn dashed and fainter: the chart's second metric of the same GPU.
    pub dashed: bool,
}

/// One per-GPU metric: everything the surfaces need about it.
#[derive(Clone, Copy, Debug)]
pub struct MetricDef {
    /// Its history key (`gpu0.util`).
    pub key: GpuMetric,
    /// The unit of its values (how they are written).
    pub unit: MetricUnit,
    /// Its name beside a value, e.g. "GPU utilization" (a catalogue key).
    pub label: &'static str,
    /// What it measures, in a few words (a catalogue key).
    pub description: &'static str,
    /// Its name for one GPU, `{i}` the GPU's index, e.g. "GPU {i} utilization" (a catalogue
    /// key): the report's rows and, unless [`ChartLine::name`] says otherwise, the chart's line.
    pub per_gpu: &'static str,
    /// Its short label in `monitor`'s line, e.g. "util" (a catalogue key); `None`: not there.
    pub short: Option<&'static str>,
    /// A row of the report's recent metrics (min / mean / max).
    pub report: bool,
    /// Which sampling step reads it.
    pub sampled: Sampled,
    /// How the exporter names it; `None`: not exported as a series of its own.
    pub prom: Option<PromDef>,
    /// The Monitor chart it is drawn in; `None`: not charted.
    pub chart: Option<ChartLine>,
    /// Its column in a recording's CSV (`gpuN_` comes before it); `None`: no column.
    pub csv: Option<&'static str>,
    /// Its value in a sample; `None` when the sample has none.
    pub read: fn(&GpuSample) -> Option<f64>,
}

impl MetricDef {
    /// Its name beside a value, as a message.
    pub fn label_message(&self) -> Message {
        Message::new(self.label)
    }

    /// What it measures, as a message.
    pub fn description_message(&self) -> Message {
        Message::new(self.description)
    }

    /// Its name for GPU `gpu` ("GPU 0 utilization"), as a message.
    pub fn for_gpu(&self, gpu: u32) -> Message {
        Message::new(self.per_gpu).arg("i", gpu)
    }

    /// Its line's name in its chart for GPU `gpu`, as a message; `None` when it is not charted.
    pub fn chart_name(&self, gpu: u32) -> Option<Message> {
        let line = self.chart?;
        Some(Message::new(line.name.unwrap_or(self.per_gpu)).arg("i", gpu))
    }
}

/// 1 while one of `bits` is set in a sample's clock-event (throttle) mask, else 0: a 0/1 series
/// whose mean over a window is the share of time throttled.
fn throttled(g: &GpuSample, bits: u64) -> Option<f64> {
    g.throttle_mask.get().map(|m| if m & bits != 0 { 1.0 } else { 0.0 })
}

/// Every per-GPU metric, one entry per [`GpuMetric`], in display order.
pub static GPU_METRICS: &[MetricDef] = &[
    MetricDef {
        key: GpuMetric::Util,
        unit: MetricUnit::Percent,
        label: tr_key!("GPU utilization"),
        description: tr_key!("% of time a kernel ran"),
        per_gpu: tr_key!("GPU {i} utilization"),
        short: Some(tr_key!("util")),
        report: true,
        sampled: Sampled::Fast,
        prom: Some(gauge("DCGM_FI_DEV_GPU_UTIL", "GPU utilization: time a kernel ran (%)")),
        chart: Some(ChartLine { chart: GpuChart::Util, name: None, dashed: false }),
        csv: Some("util_pct"),
        read: |g| g.util_gpu_pct.get(),
    },
    MetricDef {
        key: GpuMetric::MemBw,
        unit: MetricUnit::Percent,
        label: tr_key!("Memory bandwidth utilization"),
        description: tr_key!("% of time device memory was read or written (not VRAM in use)"),
        per_gpu: tr_key!("GPU {i} memory-bandwidth utilization"),
        short: Some(tr_key!("mem-bw")),
        report: true,
        sampled: Sampled::Fast,
        prom: Some(gauge(
            "DCGM_FI_DEV_MEM_COPY_UTIL",
            "Memory bandwidth utilization: time memory was read or written (%)",
        )),
        chart: Some(ChartLine { chart: GpuChart::Util, name: Some(tr_key!("GPU {i} memory bandwidth")), dashed: true }),
        csv: Some("mem_bw_util_pct"),
        read: |g| g.util_mem_bw_pct.get(),
    },
    MetricDef {
        key: GpuMetric::VramUsed,
        unit: MetricUnit::Bytes,
        label: tr_key!("VRAM used"),
        description: tr_key!("device memory in use"),
        per_gpu: tr_key!("GPU {i} VRAM used"),
        short: Some(tr_key!("VRAM")),
        report: true,
        sampled: Sampled::Fast,
        prom: Some(PromDef {
            name: "DCGM_FI_DEV_FB_USED",
            help: "Frame buffer (VRAM) used (MiB)",
            kind: PromKind::Gauge,
            value: whole_mib,
        }),
        chart: Some(ChartLine { chart: GpuChart::Vram, name: None, dashed: false }),
        csv: Some("vram_used_bytes"),
        read: |g| g.vram_used_bytes.get().map(|b| b as f64),
    },
    MetricDef {
        key: GpuMetric::Temp,
        unit: MetricUnit::Celsius,
        label: tr_key!("Temperature"),
        description: tr_key!("GPU core temperature"),
        per_gpu: tr_key!("GPU {i} temperature"),
        short: Some(tr_key!("temp")),
        report: true,
        sampled: Sampled::Fast,
        prom: Some(gauge("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (°C)")),
        chart: Some(ChartLine { chart: GpuChart::Temp, name: None, dashed: false }),
        csv: Some("temp_c"),
        read: |g| g.temp_c.get().map(f64::from),
    },
    MetricDef {
        key: GpuMetric::Power,
        unit: MetricUnit::Watts,
        label: tr_key!("Power"),
        description: tr_key!("board power draw"),
        per_gpu: tr_key!("GPU {i} power"),
        short: Some(tr_key!("power")),
        report: true,
        sampled: Sampled::Fast,
        prom: Some(gauge("DCGM_FI_DEV_POWER_USAGE", "Power draw (W)")),
        chart: Some(ChartLine { chart: GpuChart::Power, name: None, dashed: false }),
        csv: Some("power_w"),
        read: |g| g.power_w.get(),
    },
    MetricDef {
        key: GpuMetric::PowerLimit,
        unit: MetricUnit::Watts,
        label: tr_key!("Power limit"),
        description: tr_key!("the power limit the driver enforces"),
        per_gpu: tr_key!("GPU {i} power limit"),
        short: None,
        report: false,
        sampled: Sampled::Fast,
        prom: Some(gauge("DCGM_FI_DEV_POWER_MGMT_LIMIT", "Power limit now enforced (W)")),
        // (Drawn as the power chart's thin reference line, not as a line of its own.)
        chart: None,
        csv: Some("power_limit_w"),
        read: |g| g.power_limit_w.get(),
    },
    MetricDef {
        key: GpuMetric::SmClock,
        unit: MetricUnit::Mhz,
        label: tr_key!("SM clock"),
        description: tr_key!("streaming-multiprocessor clock"),
        per_gpu: tr_key!("GPU {i} SM clock"),
        short: Some(tr_key!("SM")),
        report: true,
        sampled: Sampled::Fast,
        prom: Some(gauge("DCGM_FI_DEV_SM_CLOCK", "SM clock (MHz)")),
        chart: Some(ChartLine { chart: GpuChart::Clock, name: None, dashed: false }),
        csv: Some("sm_clock_mhz"),
        read: |g| g.sm_clock_mhz.get().map(f64::from),
    },
    MetricDef {
        key: GpuMetric::MemClock,
        unit: MetricUnit::Mhz,
        label: tr_key!("Memory clock"),
        description: tr_key!("device memory clock"),
        per_gpu: tr_key!("GPU {i} memory clock"),
        short: None,
        report: false,
        sampled: Sampled::Fast,
        prom: Some(gauge("DCGM_FI_DEV_MEM_CLOCK", "Memory clock (MHz)")),
        chart: None,
        csv: Some("mem_clock_mhz"),
        read: |g| g.mem_clock_mhz.get().map(f64::from),
    },
    MetricDef {
        key: GpuMetric::PcieRx,
        unit: MetricUnit::BytesPerSec,
        label: tr_key!("PCIe receive"),
        description: tr_key!("PCIe traffic into the GPU (host to GPU)"),
        per_gpu: tr_key!("GPU {i} PCIe receive"),
        short: Some(tr_key!("rx")),
        report: true,
        sampled: Sampled::Slow,
        prom: Some(gauge(
            "gpu_doctor_gpu_pcie_rx_bytes_per_second",
            "PCIe traffic into the GPU (NVML's sampled throughput)",
        )),
        chart: Some(ChartLine {
            chart: GpuChart::Pcie,
            name: Some(tr_key!("GPU {i} PCIe RX (to GPU)")),
            dashed: false,
        }),
        csv: Some("pcie_rx_bps"),
        read: |g| g.pcie_rx_bps.get(),
    },
    MetricDef {
        key: GpuMetric::PcieTx,
        unit: MetricUnit::BytesPerSec,
        label: tr_key!("PCIe transmit"),
        description: tr_key!("PCIe traffic out of the GPU (GPU to host)"),
        per_gpu: tr_key!("GPU {i} PCIe transmit"),
        short: None,
        report: false,
        sampled: Sampled::Slow,
        prom: Some(gauge(
            "gpu_doctor_gpu_pcie_tx_bytes_per_second",
            "PCIe traffic out of the GPU (NVML's sampled throughput)",
        )),
        chart: Some(ChartLine {
            chart: GpuChart::Pcie,
            name: Some(tr_key!("GPU {i} PCIe TX (from GPU)")),
            dashed: true,
        }),
        csv: Some("pcie_tx_bps"),
        read: |g| g.pcie_tx_bps.get(),
    },
    MetricDef {
        key: GpuMetric::Fan,
        unit: MetricUnit::Percent,
        label: tr_key!("Fan speed"),
        description: tr_key!("fan speed, % of its maximum"),
        per_gpu: tr_key!("GPU {i} fan speed"),
        short: None,
        report: false,
        sampled: Sampled::Fast,
        prom: Some(gauge("DCGM_FI_DEV_FAN_SPEED", "Fan speed (% of maximum)")),
        chart: None,
        csv: Some("fan_pct"),
        read: |g| g.fan_pct.get().map(f64::from),
    },
    MetricDef {
        key: GpuMetric::ThrottleThermal,
        unit: MetricUnit::Flag,
        label: tr_key!("Thermal slowdown"),
        description: tr_key!("1 while the clocks are cut to stay cool (software or hardware)"),
        per_gpu: tr_key!("GPU {i} thermal slowdown"),
        short: None,
        report: false,
        sampled: Sampled::Fast,
        // (The exporter has one series per throttle reason, from the mask.)
        prom: None,
        chart: None,
        csv: None,
        read: |g| throttled(g, throttle::SW_THERMAL | throttle::HW_THERMAL),
    },
    MetricDef {
        key: GpuMetric::ThrottlePower,
        unit: MetricUnit::Flag,
        label: tr_key!("Power cap"),
        description: tr_key!("1 while the clocks are held to the power limit"),
        per_gpu: tr_key!("GPU {i} power cap"),
        short: None,
        report: false,
        sampled: Sampled::Fast,
        prom: None,
        chart: None,
        csv: None,
        read: |g| throttled(g, throttle::SW_POWER_CAP),
    },
    MetricDef {
        key: GpuMetric::ThrottleHw,
        unit: MetricUnit::Flag,
        label: tr_key!("Hardware slowdown"),
        description: tr_key!("1 while the hardware slows the clocks down (slowdown or power brake)"),
        per_gpu: tr_key!("GPU {i} hardware slowdown"),
        short: None,
        report: false,
        sampled: Sampled::Fast,
        prom: None,
        chart: None,
        csv: None,
        read: |g| throttled(g, throttle::HW_SLOWDOWN | throttle::HW_POWER_BRAKE),
    },
    MetricDef {
        key: GpuMetric::JobCpu,
        unit: MetricUnit::CorePercent,
        label: tr_key!("Job CPU"),
        description: tr_key!("CPU used by the GPU's processes and their child processes, % of one core"),
        per_gpu: tr_key!("GPU {i} job CPU"),
        short: None,
        report: false,
        sampled: Sampled::Processes,
        prom: None,
        chart: None,
        csv: None,
        read: |_| None,
    },
];

/// The table's entry for `key` (every key has one: the table's test checks it).
pub fn def(key: GpuMetric) -> Option<&'static MetricDef> {
    GPU_METRICS.iter().find(|d| d.key == key)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::telemetry::Reading;
    use crate::telemetry::sample::GpuHealth;

    /// Every variant of [`GpuMetric`]. The match below stops compiling when a variant is added,
    /// until it is listed here (and so checked against the table).
    fn variants() -> Vec<GpuMetric> {
        use GpuMetric::*;
        let all = [
            Util,
            MemBw,
            VramUsed,
            Temp,
            Power,
            PowerLimit,
            SmClock,
            MemClock,
            PcieRx,
            PcieTx,
            Fan,
            ThrottleThermal,
            ThrottlePower,
            ThrottleHw,
            JobCpu,
        ];
        for m in all {
            match m {
                Util | MemBw | VramUsed | Temp | Power | PowerLimit | SmClock | MemClock | PcieRx | PcieTx | Fan
                | ThrottleThermal | ThrottlePower | ThrottleHw | JobCpu => {}
            }
        }
        all.to_vec()
    }

    /// A valid Prometheus metric name: `[a-zA-Z_:][a-zA-Z0-9_:]*`.
    fn valid_prom_name(name: &str) -> bool {
        let mut chars = name.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
    }

    #[test]
    fn the_table_is_complete_and_its_names_unique_and_valid() {
        let variants = variants();
        assert_eq!(GPU_METRICS.len(), variants.len(), "one entry per GpuMetric");
        for v in &variants {
            assert_eq!(GPU_METRICS.iter().filter(|d| d.key == *v).count(), 1, "{v:?} must appear exactly once");
            assert_eq!(def(*v).map(|d| d.key), Some(*v));
        }
        let unique = |what: &str, names: Vec<&str>| {
            let set: BTreeSet<&str> = names.iter().copied().collect();
            assert_eq!(set.len(), names.len(), "{what} repeat: {names:?}");
        };
        unique("history names", GPU_METRICS.iter().map(|d| d.key.name()).collect());
        unique("labels", GPU_METRICS.iter().map(|d| d.label).collect());
        unique("per-GPU names", GPU_METRICS.iter().map(|d| d.per_gpu).collect());
        unique("short labels", GPU_METRICS.iter().filter_map(|d| d.short).collect());
        unique("CSV columns", GPU_METRICS.iter().filter_map(|d| d.csv).collect());
        let prom: Vec<&PromDef> = GPU_METRICS.iter().filter_map(|d| d.prom.as_ref()).collect();
        unique("Prometheus names", prom.iter().map(|p| p.name).collect());
        for p in &prom {
            assert!(valid_prom_name(p.name), "not a Prometheus name: {:?}", p.name);
            assert!(!p.help.is_empty() && !p.help.contains('\n'), "{}: one line of help", p.name);
            if p.kind == PromKind::Counter {
                assert!(!p.name.ends_with("_total"), "{}: the exposition adds _total to a counter", p.name);
            }
        }
        for d in GPU_METRICS {
            assert!(d.per_gpu.contains("{i}"), "{:?}: the per-GPU name names the GPU", d.key);
            if let Some(name) = d.chart.and_then(|c| c.name) {
                assert!(name.contains("{i}"), "{:?}: the chart's line names the GPU", d.key);
            }
            if let Some(c) = d.csv {
                assert!(c.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'), "{c}");
            }
            assert_eq!(d.sampled == Sampled::Processes, d.key == GpuMetric::JobCpu, "{:?}", d.key);
        }
        // Every chart has its lines, all in one unit.
        for chart in GpuChart::ALL {
            let units: BTreeSet<String> = GPU_METRICS
                .iter()
                .filter(|d| d.chart.is_some_and(|c| c.chart == chart))
                .map(|d| format!("{:?}", d.unit))
                .collect();
            assert_eq!(units.len(), 1, "{chart:?}: {units:?}");
        }
    }

    #[test]
    fn the_names_are_the_recording_formats_and_the_exporters() {
        // Recordings and dashboards depend on these: the table must not rename them.
        let names: Vec<(&str, Option<&str>, Option<&str>)> =
            GPU_METRICS.iter().map(|d| (d.key.name(), d.csv, d.prom.map(|p| p.name))).collect();
        assert_eq!(
            names,
            [
                ("util", Some("util_pct"), Some("DCGM_FI_DEV_GPU_UTIL")),
                ("membw", Some("mem_bw_util_pct"), Some("DCGM_FI_DEV_MEM_COPY_UTIL")),
                ("vram_used", Some("vram_used_bytes"), Some("DCGM_FI_DEV_FB_USED")),
                ("temp", Some("temp_c"), Some("DCGM_FI_DEV_GPU_TEMP")),
                ("power", Some("power_w"), Some("DCGM_FI_DEV_POWER_USAGE")),
                ("power_limit", Some("power_limit_w"), Some("DCGM_FI_DEV_POWER_MGMT_LIMIT")),
                ("sm_clock", Some("sm_clock_mhz"), Some("DCGM_FI_DEV_SM_CLOCK")),
                ("mem_clock", Some("mem_clock_mhz"), Some("DCGM_FI_DEV_MEM_CLOCK")),
                ("pcie_rx", Some("pcie_rx_bps"), Some("gpu_doctor_gpu_pcie_rx_bytes_per_second")),
                ("pcie_tx", Some("pcie_tx_bps"), Some("gpu_doctor_gpu_pcie_tx_bytes_per_second")),
                ("fan", Some("fan_pct"), Some("DCGM_FI_DEV_FAN_SPEED")),
                ("thr_thermal", None, None),
                ("thr_power", None, None),
                ("thr_hw", None, None),
                ("job_cpu", None, None),
            ]
        );
    }

    fn sample() -> GpuSample {
        let mut g = GpuSample::unavailable(3, GpuHealth::Ok, "not read");
        g.util_gpu_pct = Reading::Value(97.5);
        g.util_mem_bw_pct = Reading::Value(41.0);
        g.vram_used_bytes = Reading::Value(20 << 30);
        g.vram_total_bytes = Reading::Value(24 << 30);
        g.temp_c = Reading::Value(72);
        g.power_w = Reading::Value(410.5);
        g.power_limit_w = Reading::Value(450.0);
        g.sm_clock_mhz = Reading::Value(2520);
        g.mem_clock_mhz = Reading::Value(10501);
        g.pcie_rx_bps = Reading::Value(1.2e9);
        g.pcie_tx_bps = Reading::Value(3.0e8);
        g.fan_pct = Reading::Value(55);
        g.throttle_mask = Reading::Value(throttle::SW_THERMAL | throttle::SW_POWER_CAP);
        g
    }

    #[test]
    fn a_sample_round_trips_through_read() {
        let want = |m: GpuMetric| -> Option<f64> {
            match m {
                GpuMetric::Util => Some(97.5),
                GpuMetric::MemBw => Some(41.0),
                GpuMetric::VramUsed => Some((20u64 << 30) as f64),
                GpuMetric::Temp => Some(72.0),
                GpuMetric::Power => Some(410.5),
                GpuMetric::PowerLimit => Some(450.0),
                GpuMetric::SmClock => Some(2520.0),
                GpuMetric::MemClock => Some(10501.0),
                GpuMetric::PcieRx => Some(1.2e9),
                GpuMetric::PcieTx => Some(3.0e8),
                GpuMetric::Fan => Some(55.0),
                GpuMetric::ThrottleThermal | GpuMetric::ThrottlePower => Some(1.0),
                GpuMetric::ThrottleHw => Some(0.0),
                // Computed by the sampler from the processes' trees, never in a sample.
                GpuMetric::JobCpu => None,
            }
        };
        let g = sample();
        // Through a recording line (JSON) and back, every metric reads the same.
        let json = serde_json::to_string(&g).unwrap_or_default();
        let back: GpuSample = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
        for d in GPU_METRICS {
            assert_eq!((d.read)(&g), want(d.key), "{:?}", d.key);
            assert_eq!((d.read)(&back), want(d.key), "{:?} after JSON", d.key);
        }
        // A sample with no readings gives no value at all (nothing is invented).
        let none = GpuSample::unavailable(0, GpuHealth::Ok, "not supported");
        assert!(GPU_METRICS.iter().all(|d| (d.read)(&none).is_none()));
        // The exporter's frame buffer is whole MiB.
        let fb = def(GpuMetric::VramUsed).and_then(|d| d.prom.map(|p| (p.value)((d.read)(&g).unwrap_or(0.0))));
        assert_eq!(fb, Some(20.0 * 1024.0));
    }

    #[test]
    fn the_labels_render_in_both_languages() {
        use crate::i18n::Lang;
        let util = def(GpuMetric::Util).unwrap_or_else(|| panic!("no Util"));
        assert_eq!(util.for_gpu(0).render(Lang::En), "GPU 0 utilization");
        assert_eq!(util.chart_name(0).map(|m| m.en()).as_deref(), Some("GPU 0 utilization"));
        assert_eq!(util.label_message().en(), "GPU utilization");
        let bw = def(GpuMetric::MemBw).unwrap_or_else(|| panic!("no MemBw"));
        assert_eq!(bw.chart_name(1).map(|m| m.en()).as_deref(), Some("GPU 1 memory bandwidth"));
        assert_eq!(def(GpuMetric::Fan).and_then(|d| d.chart_name(0)), None);
        for d in GPU_METRICS {
            for m in [d.label_message(), d.description_message(), d.for_gpu(2)] {
                let zh = m.render(Lang::ZhCn);
                assert_ne!(zh, m.en(), "{:?}: {:?} has no Chinese text", d.key, m.key());
            }
        }
    }
}
