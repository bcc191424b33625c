//! The Prometheus / OpenMetrics exposition of what gpu-doctor knows: GPU and host metrics from a
//! sampler snapshot, the bottleneck verdicts, the checklist and the last smoke test.
//!
//! GPU metrics take the names and labels of NVIDIA's dcgm-exporter where it has an equivalent
//! (`DCGM_FI_DEV_GPU_UTIL{gpu,UUID,pci_bus_id,device,modelName,Hostname}`), so its dashboards and
//! alert rules work unchanged; everything else is `gpu_doctor_*`. The table of every metric is in
//! docs/fleet.md; the per-GPU metrics' names, help and type are the metric table's
//! (`telemetry::metric::GPU_METRICS`). The text is made by the maintained `prometheus-client`
//! crate (its OpenMetrics text encoder: escaping, HELP/TYPE lines, `# EOF`), from a fresh
//! registry per exposition, so a GPU that disappears leaves no stale series behind.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::diagnose::bottleneck::Bottleneck;
use crate::diagnose::{Report, Verdict};
use crate::smoke::SmokeReport;
use crate::telemetry::host_metric::HOST_METRICS;
use crate::telemetry::metric::{GPU_METRICS, PromDef, PromKind};
use crate::telemetry::sample::{GpuHealth, GpuSample, Inventory};
use crate::telemetry::snapshot::Snapshot;
use crate::telemetry::source::SourceStatus;
use crate::telemetry::throttle;

/// The media type of [`Exposition::render`]'s text (Prometheus asks for it first).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The first line of a textfile written by `check --format prom --out FILE`: a comment the
/// Prometheus text parsers skip, and the mark that lets a later run replace the file (a file
/// without it is never overwritten).
pub const TEXTFILE_MARK: &str = "# gpu-doctor-cli check --format prom; replaced on every run";

type Labels = Vec<(String, String)>;
type Fam = Family<Labels, Gauge<f64, AtomicU64>>;
type CounterFam = Family<Labels, Counter<f64, AtomicU64>>;

/// A verdict as a number for alert rules: pass and skipped 0, info 1, warn 2, fail 3.
pub fn severity(v: Verdict) -> f64 {
    match v {
        Verdict::Skipped | Verdict::Pass => 0.0,
        Verdict::Info => 1.0,
        Verdict::Warn => 2.0,
        Verdict::Fail => 3.0,
    }
}

/// An enum's label value (`pass`, `data-starved`, `driver`...): its word in `--json`.
fn label_of<T: serde::Serialize>(v: T) -> String {
    serde_json::to_value(v).ok().and_then(|x| x.as_str().map(String::from)).unwrap_or_default()
}

/// The clock-event (throttle) reasons exported one series each, with NVML's names.
const THROTTLE_BITS: &[(u64, &str)] = &[
    (throttle::GPU_IDLE, "gpu_idle"),
    (throttle::APPLICATIONS_CLOCKS, "applications_clocks_setting"),
    (throttle::SW_POWER_CAP, "sw_power_cap"),
    (throttle::HW_SLOWDOWN, "hw_slowdown"),
    (throttle::SYNC_BOOST, "sync_boost"),
    (throttle::SW_THERMAL, "sw_thermal_slowdown"),
    (throttle::HW_THERMAL, "hw_thermal_slowdown"),
    (throttle::HW_POWER_BRAKE, "hw_power_brake_slowdown"),
    (throttle::DISPLAY_CLOCKS, "display_clock_setting"),
];

/// Bytes in a MiB (dcgm-exporter's frame-buffer metrics are in MiB).
const MIB: f64 = 1024.0 * 1024.0;

/// One exposition being built: metrics are registered on first use.
pub struct Exposition {
    reg: Registry,
    fams: HashMap<&'static str, Fam>,
    counters: HashMap<&'static str, CounterFam>,
}

impl Default for Exposition {
    fn default() -> Self {
        Self::new()
    }
}

impl Exposition {
    /// An empty exposition.
    pub fn new() -> Self {
        Exposition { reg: Registry::default(), fams: HashMap::new(), counters: HashMap::new() }
    }

    /// Sets one series of gauge `name` (registered with `help` on first use). A value that is not
    /// finite is left out: Prometheus would store it, but no reading is NaN.
    fn set(&mut self, name: &'static str, help: &'static str, labels: &[(&str, &str)], v: f64) {
        if !v.is_finite() {
            return;
        }
        let fam = self.fams.entry(name).or_insert_with(|| {
            let f = Fam::default();
            self.reg.register(name, help, f.clone());
            f
        });
        let labels: Labels = labels.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect();
        fam.get_or_create(&labels).set(v);
    }

    /// Adds one series of a counter `name` (registered with `help` on first use; the exposition
    /// names it `name_total`). A value that is not finite or below zero is left out.
    fn count(&mut self, name: &'static str, help: &'static str, labels: &[(&str, &str)], v: f64) {
        if !v.is_finite() || v < 0.0 {
            return;
        }
        let fam = self.counters.entry(name).or_insert_with(|| {
            let f = CounterFam::default();
            self.reg.register(name, help, f.clone());
            f
        });
        let labels: Labels = labels.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect();
        fam.get_or_create(&labels).inc_by(v);
    }

    /// One series of a metric of the table, as its kind says.
    fn put(&mut self, p: &PromDef, labels: &[(&str, &str)], v: f64) {
        match p.kind {
            PromKind::Gauge => self.set(p.name, p.help, labels, v),
            PromKind::Counter => self.count(p.name, p.help, labels, v),
        }
    }

    /// The exporter's own facts: its version, the host name, and whether GPU data flows.
    pub fn add_exporter(&mut self, hostname: &str, snap: Option<&Snapshot>) {
        self.set(
            "gpu_doctor_exporter_info",
            "gpu-doctor's version and the host it runs on (always 1)",
            &[("version", env!("CARGO_PKG_VERSION")), ("Hostname", hostname)],
            1.0,
        );
        let Some(snap) = snap else { return };
        let (up, source) = match &snap.source {
            SourceStatus::Nvml { .. } => (1.0, "nvml"),
            SourceStatus::Demo { .. } => (1.0, "demo"),
            SourceStatus::Asleep { .. } => (0.0, "asleep"),
            SourceStatus::Opening => (0.0, "opening"),
            _ => (0.0, "unavailable"),
        };
        self.set(
            "gpu_doctor_gpu_source_up",
            "1 while GPU data is read (NVML loaded and answering); 0 with the reason in `source`",
            &[("source", source), ("Hostname", hostname)],
            if snap.gpu_stall.is_some() { 0.0 } else { up },
        );
        if let Some(st) = &snap.gpu_stall {
            self.set(
                "gpu_doctor_gpu_not_responding_seconds",
                "How long the GPU driver has not returned from a call (a hung driver)",
                &[("call", st.call.en().as_str()), ("Hostname", hostname)],
                st.secs,
            );
        }
    }

    /// GPU and host metrics of one snapshot. `processes` adds one series per GPU process (pid and
    /// name, never the command line).
    pub fn add_snapshot(&mut self, snap: &Snapshot, hostname: &str, processes: bool) {
        for g in &snap.gpus {
            self.add_gpu(g, &snap.inventory, hostname, processes);
        }
        if let Some(h) = &snap.host {
            let l: &[(&str, &str)] = &[("Hostname", hostname)];
            for d in HOST_METRICS {
                if let (Some(p), Some(v)) = (d.prom, (d.read)(h)) {
                    self.set(p.name, p.help, l, (p.value)(v));
                }
            }
        }
    }

    fn add_gpu(&mut self, g: &GpuSample, inv: &Inventory, hostname: &str, processes: bool) {
        let info = inv.gpus.iter().find(|i| i.index == g.index);
        let gpu = g.index.to_string();
        let uuid = info.and_then(|i| i.uuid.value().cloned()).unwrap_or_default();
        let bus = info.and_then(|i| i.pci_bus_id.value().cloned()).unwrap_or_default();
        let model = info.map(|i| i.name.clone()).unwrap_or_default();
        let device = format!("nvidia{}", g.index);
        let l: &[(&str, &str)] = &[
            ("gpu", &gpu),
            ("UUID", &uuid),
            ("pci_bus_id", &bus),
            ("device", &device),
            ("modelName", &model),
            ("Hostname", hostname),
        ];
        let lost = matches!(g.health, GpuHealth::Lost(_));
        self.set(
            "gpu_doctor_gpu_lost",
            "1 when the GPU fell off the bus or stopped answering",
            l,
            f64::from(u8::from(lost)),
        );
        if lost {
            return;
        }
        // The metric table's series (dcgm-exporter's names where it has one), then the sample's
        // facts that are no history metric.
        for d in GPU_METRICS {
            if let (Some(p), Some(v)) = (d.prom, (d.read)(g)) {
                self.put(&p, l, (p.value)(v));
            }
        }
        let f = |r: Option<u32>| r.map(f64::from);
        let mib = |r: Option<u64>| r.map(|b| (b as f64 / MIB).round());
        let gauges: [(&'static str, &'static str, Option<f64>); 8] = [
            ("DCGM_FI_DEV_FB_FREE", "Frame buffer (VRAM) free (MiB)", mib(g.vram_free_bytes.get())),
            ("DCGM_FI_DEV_FB_TOTAL", "Frame buffer (VRAM) total (MiB)", mib(g.vram_total_bytes.get())),
            ("DCGM_FI_DEV_PSTATE", "Performance state (0 fastest, 15 slowest)", f(g.pstate.get())),
            ("DCGM_FI_DEV_PCIE_LINK_GEN", "PCIe link generation now", f(g.pcie_gen.get())),
            ("DCGM_FI_DEV_PCIE_LINK_WIDTH", "PCIe link width now (lanes)", f(g.pcie_width.get())),
            ("DCGM_FI_DEV_ENC_UTIL", "Video encoder utilization (%)", f(g.encoder_pct.get())),
            ("DCGM_FI_DEV_DEC_UTIL", "Video decoder utilization (%)", f(g.decoder_pct.get())),
            (
                "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
                "Uncorrectable ECC errors since the driver loaded",
                g.ecc_uncorrected_volatile.get().map(|n| n as f64),
            ),
        ];
        for (name, help, v) in gauges {
            if let Some(v) = v {
                self.set(name, help, l, v);
            }
        }
        if let Some(i) = info {
            if let Some(v) = i.max_pcie_gen.get() {
                self.set(
                    "DCGM_FI_DEV_PCIE_MAX_LINK_GEN",
                    "PCIe link generation the GPU and slot support",
                    l,
                    f64::from(v),
                );
            }
            if let Some(v) = i.max_pcie_width.get() {
                self.set(
                    "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH",
                    "PCIe link width the GPU and slot support (lanes)",
                    l,
                    f64::from(v),
                );
            }
        }
        if let Some(mask) = g.throttle_mask.get() {
            self.set(
                "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
                "Clock event (throttle) reasons, NVML's bit mask",
                l,
                mask as f64,
            );
            for (bit, reason) in THROTTLE_BITS {
                let mut with = l.to_vec();
                with.push(("reason", reason));
                self.set(
                    "gpu_doctor_gpu_clocks_event_reason",
                    "1 while this clock event (throttle) reason is active",
                    &with,
                    f64::from(u8::from(mask & bit != 0)),
                );
            }
        }
        if let Some(ps) = g.processes.value() {
            self.set("gpu_doctor_gpu_processes", "Processes using the GPU", l, ps.len() as f64);
            if processes {
                for p in ps {
                    let pid = p.pid.to_string();
                    let mut with = l.to_vec();
                    with.push(("pid", &pid));
                    with.push(("process", &p.name));
                    if let Some(b) = p.vram_bytes.get() {
                        self.set(
                            "gpu_doctor_process_vram_bytes",
                            "VRAM used by one process (--expose-processes)",
                            &with,
                            b as f64,
                        );
                    }
                    for (name, help, value) in [
                        (
                            "gpu_doctor_process_sm_utilization_percent",
                            "% of time one process's kernels ran on the GPU since the previous reading (--expose-processes)",
                            &p.sm_pct,
                        ),
                        (
                            "gpu_doctor_process_encoder_utilization_percent",
                            "Video encoder utilization by one process, % (--expose-processes)",
                            &p.encoder_pct,
                        ),
                        (
                            "gpu_doctor_process_decoder_utilization_percent",
                            "Video decoder utilization by one process, % (--expose-processes)",
                            &p.decoder_pct,
                        ),
                    ] {
                        if let Some(v) = value.get() {
                            self.set(name, help, &with, f64::from(v));
                        }
                    }
                }
            }
        }
    }

    /// The bottleneck verdicts: one series per verdict, its confidence as the value.
    pub fn add_verdicts(&mut self, verdicts: &[Bottleneck], hostname: &str) {
        for v in verdicts {
            let gpu = v.gpu.map(|g| g.to_string()).unwrap_or_default();
            let kind = label_of(v.finding);
            let sev = label_of(v.severity);
            self.set(
                "gpu_doctor_bottleneck",
                "A bottleneck verdict over the last window: its confidence (0-1); `kind` says what, `severity` how bad, `gpu` empty for the host",
                &[("gpu", &gpu), ("kind", &kind), ("severity", &sev), ("Hostname", hostname)],
                v.confidence,
            );
        }
    }

    /// The checklist: one series per check id with its verdict, the worst verdict, the root cause
    /// and when the checks ran (`at_unix`).
    pub fn add_checks(&mut self, report: &Report, at_unix: f64, hostname: &str) {
        for c in &report.checks {
            let layer = label_of(c.layer);
            let verdict = label_of(c.verdict);
            self.set(
                "gpu_doctor_check",
                "One check of the checklist: its verdict as a number (pass/skipped 0, info 1, warn 2, fail 3) and as the `verdict` label",
                &[("check", &c.id), ("layer", &layer), ("verdict", &verdict), ("Hostname", hostname)],
                severity(c.verdict),
            );
        }
        self.set(
            "gpu_doctor_checks_worst",
            "The worst verdict of the checklist (pass 0, info 1, warn 2, fail 3)",
            &[("Hostname", hostname)],
            severity(report.worst()),
        );
        let failed = report.checks.iter().filter(|c| c.verdict == Verdict::Fail).count();
        self.set("gpu_doctor_checks_failed", "Checks that failed", &[("Hostname", hostname)], failed as f64);
        if let Some(root) = &report.root_cause {
            self.set(
                "gpu_doctor_root_cause",
                "The failed check nothing else explains (always 1; the id is in `check`)",
                &[("check", root), ("Hostname", hostname)],
                1.0,
            );
        }
        self.set(
            "gpu_doctor_checks_timestamp_seconds",
            "When the checklist last ran (Unix time)",
            &[("Hostname", hostname)],
            at_unix,
        );
    }

    /// The last smoke test: passed or not, each stage's verdict, when it ran.
    pub fn add_smoke(&mut self, smoke: &SmokeReport, at_unix: f64, hostname: &str) {
        self.set(
            "gpu_doctor_smoke_ok",
            "1 when the last CUDA smoke test passed (a warning counts as passed), 0 when it failed",
            &[("Hostname", hostname)],
            f64::from(u8::from(smoke.verdict < Verdict::Fail)),
        );
        for s in &smoke.stages {
            let stage = label_of(s.stage);
            let verdict = label_of(s.verdict);
            self.set(
                "gpu_doctor_smoke_stage",
                "One stage of the last smoke test: its verdict as a number (pass/skipped 0, warn 2, fail 3) and label",
                &[("stage", &stage), ("verdict", &verdict), ("Hostname", hostname)],
                severity(s.verdict),
            );
        }
        self.set(
            "gpu_doctor_smoke_timestamp_seconds",
            "When the last smoke test ran (Unix time)",
            &[("Hostname", hostname)],
            at_unix,
        );
    }

    /// The exposition text (OpenMetrics, ending in `# EOF`).
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail; an encoder error would leave what was written.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.reg);
        out
    }
}

/// The host name labels carry (`Hostname`, as dcgm-exporter's), or `unknown`.
pub fn hostname() -> String {
    sysinfo::System::host_name().ok().filter(|h| !h.is_empty()).unwrap_or_else(|| "unknown".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_escaped_and_series_are_gauges() {
        let mut e = Exposition::new();
        e.add_exporter("node\"1\n", None);
        e.set("gpu_doctor_test", "help", &[("a", "x\\y")], 2.5);
        e.set("gpu_doctor_test", "help", &[("a", "nan")], f64::NAN);
        let t = e.render();
        assert!(t.contains(r#"Hostname="node\"1\n""#), "{t}");
        assert!(t.contains(r#"gpu_doctor_test{a="x\\y"} 2.5"#), "{t}");
        assert!(!t.contains("nan\""), "a NaN value is left out: {t}");
        assert!(t.contains("# TYPE gpu_doctor_test gauge") && t.trim_end().ends_with("# EOF"), "{t}");
    }

    #[test]
    fn the_metric_tables_series_keep_their_names_help_and_type() {
        use crate::telemetry::Reading;
        let mut g = GpuSample::unavailable(0, GpuHealth::Ok, "not supported");
        g.util_gpu_pct = Reading::Value(97.0);
        g.util_mem_bw_pct = Reading::Value(40.0);
        g.vram_used_bytes = Reading::Value(3 << 30);
        g.temp_c = Reading::Value(70);
        g.power_w = Reading::Value(300.0);
        g.power_limit_w = Reading::Value(350.0);
        g.sm_clock_mhz = Reading::Value(2000);
        g.mem_clock_mhz = Reading::Value(9000);
        g.pcie_rx_bps = Reading::Value(1e9);
        g.pcie_tx_bps = Reading::Value(2e8);
        g.fan_pct = Reading::Value(50);
        let mut e = Exposition::new();
        e.add_gpu(&g, &Inventory::default(), "node", false);
        let t = e.render();
        for p in GPU_METRICS.iter().filter_map(|d| d.prom) {
            let head = format!("# HELP {0} {1}.\n# TYPE {0} gauge\n{0}{{", p.name, p.help);
            assert!(t.contains(&head), "{head}\n{t}");
        }
        assert!(t.contains("DCGM_FI_DEV_FB_USED{") && t.contains("} 3072"), "VRAM in whole MiB: {t}");
        // A counter of the table would be exported as one.
        let events = PromDef { name: "gpu_doctor_test_events", help: "Events", kind: PromKind::Counter, value: |v| v };
        e.put(&events, &[("gpu", "0")], 3.0);
        let t = e.render();
        assert!(
            t.contains("# TYPE gpu_doctor_test_events counter") && t.contains("gpu_doctor_test_events_total{"),
            "{t}"
        );
    }
}
