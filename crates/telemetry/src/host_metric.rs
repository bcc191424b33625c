//! The host metric table: one [`HostMetricDef`] per metric of the machine around the GPUs (CPU,
//! I/O wait, load, RAM, swap, disks, network, pressure), in the order the surfaces list them,
//! saying what each needs: its history key (and so the Monitor's host charts and replay), its
//! unit, its row in the support report, its CSV column in a recording, its Prometheus name and
//! help, and how its value is read from a [`HostSample`]. The GPU metrics have their own table
//! ([`crate::metric`]); the per-core CPU series (one key per core) are the sampler's.
//!
//! The sampler's history append, the recordings' CSV columns, the report's recent metrics and the
//! exporter's host series all read this table. Adding a host metric is one entry here, plus the
//! code that reads it from the machine ([`HostSample`], `host.rs`, the demo) and its Chinese text.

use super::history::keys;
use super::metric::{PromDef, PromKind};
use super::sample::HostSample;
use crate::i18n::Message;
use crate::tr_key;
use crate::units::MetricUnit;

/// One host metric: everything the surfaces need about it.
#[derive(Clone, Copy, Debug)]
pub struct HostMetricDef {
    /// Its history key (`host.cpu`); `None`: not kept over time (only the latest value is shown
    /// and exported).
    pub key: Option<&'static str>,
    /// The unit of its values.
    pub unit: MetricUnit,
    /// Its name in a report row, e.g. "Host CPU" (a catalogue key).
    pub label: &'static str,
    /// A row of the report's recent metrics (min / mean / max over the window).
    pub report: bool,
    /// Its column in a recording's CSV; `None`: no column.
    pub csv: Option<&'static str>,
    /// How the exporter names it (always a gauge of the latest value); `None`: not exported.
    pub prom: Option<PromDef>,
    /// Its value in a sample; `None` when the sample has none.
    pub read: fn(&HostSample) -> Option<f64>,
}

impl HostMetricDef {
    /// Its name in a report row, as a message.
    pub fn label_message(&self) -> Message {
        Message::new(self.label)
    }
}

/// A gauge of the host, exported as read.
const fn host_gauge(name: &'static str, help: &'static str) -> Option<PromDef> {
    Some(PromDef { name, help, kind: PromKind::Gauge, value: as_read })
}

fn as_read(v: f64) -> f64 {
    v
}

/// Every host metric, in the order the report, the CSV and the exporter list them.
pub const HOST_METRICS: &[HostMetricDef] = &[
    HostMetricDef {
        key: Some(keys::CPU),
        unit: MetricUnit::Percent,
        label: tr_key!("Host CPU"),
        report: true,
        csv: Some("cpu_pct"),
        prom: host_gauge("gpu_doctor_host_cpu_utilization_percent", "Host CPU busy, all cores (%)"),
        read: |h| h.cpu_pct.get(),
    },
    HostMetricDef {
        key: None,
        unit: MetricUnit::Percent,
        label: tr_key!("Busiest CPU core"),
        report: false,
        csv: None,
        prom: host_gauge("gpu_doctor_host_cpu_busiest_core_percent", "The busiest CPU core (%)"),
        read: |h| h.per_core_pct.iter().copied().reduce(f64::max),
    },
    HostMetricDef {
        key: Some(keys::IOWAIT),
        unit: MetricUnit::Percent,
        label: tr_key!("Host iowait"),
        report: true,
        csv: Some("iowait_pct"),
        prom: host_gauge("gpu_doctor_host_iowait_percent", "CPU time waiting for I/O (%)"),
        read: |h| h.iowait_pct.get(),
    },
    HostMetricDef {
        key: None,
        unit: MetricUnit::Number,
        label: tr_key!("Load average (1 min)"),
        report: false,
        csv: None,
        prom: host_gauge("gpu_doctor_host_load1", "1-minute load average"),
        read: |h| h.load_avg.get().map(|l| l[0]),
    },
    HostMetricDef {
        key: Some(keys::RAM_USED),
        unit: MetricUnit::Bytes,
        label: tr_key!("Host RAM used"),
        report: true,
        csv: Some("ram_used_bytes"),
        prom: host_gauge("gpu_doctor_host_memory_used_bytes", "Host RAM in use"),
        read: |h| h.memory.value().map(|m| m.ram_used_bytes as f64),
    },
    HostMetricDef {
        key: None,
        unit: MetricUnit::Bytes,
        label: tr_key!("Host RAM"),
        report: false,
        csv: None,
        prom: host_gauge("gpu_doctor_host_memory_total_bytes", "Host RAM"),
        read: |h| h.memory.value().map(|m| m.ram_total_bytes as f64),
    },
    HostMetricDef {
        key: Some(keys::SWAP_USED),
        unit: MetricUnit::Bytes,
        label: tr_key!("Host swap used"),
        report: true,
        csv: Some("swap_used_bytes"),
        prom: host_gauge("gpu_doctor_host_swap_used_bytes", "Swap in use"),
        read: |h| h.memory.value().map(|m| m.swap_used_bytes as f64),
    },
    HostMetricDef {
        key: Some(keys::DISK_READ),
        unit: MetricUnit::BytesPerSec,
        label: tr_key!("Disk read"),
        report: true,
        csv: Some("disk_read_bps"),
        prom: host_gauge("gpu_doctor_host_disk_read_bytes_per_second", "Disk reads, all disks"),
        read: HostSample::disk_read_total,
    },
    HostMetricDef {
        key: Some(keys::DISK_WRITE),
        unit: MetricUnit::BytesPerSec,
        label: tr_key!("Disk write"),
        report: true,
        csv: Some("disk_write_bps"),
        prom: host_gauge("gpu_doctor_host_disk_write_bytes_per_second", "Disk writes, all disks"),
        read: HostSample::disk_write_total,
    },
    HostMetricDef {
        key: Some(keys::NET_RX),
        unit: MetricUnit::BytesPerSec,
        label: tr_key!("Network received"),
        report: false,
        csv: None,
        prom: host_gauge("gpu_doctor_host_network_receive_bytes_per_second", "Network received"),
        read: |h| h.net_rx_bps.get(),
    },
    HostMetricDef {
        key: Some(keys::NET_TX),
        unit: MetricUnit::BytesPerSec,
        label: tr_key!("Network sent"),
        report: false,
        csv: None,
        prom: host_gauge("gpu_doctor_host_network_transmit_bytes_per_second", "Network sent"),
        read: |h| h.net_tx_bps.get(),
    },
    HostMetricDef {
        key: Some(keys::PSI_IO),
        unit: MetricUnit::Percent,
        label: tr_key!("I/O pressure"),
        report: false,
        csv: None,
        prom: host_gauge("gpu_doctor_host_pressure_io_some_percent", "Linux PSI: I/O pressure, some (avg10, %)"),
        read: |h| h.pressure.value().and_then(|p| p.io_some),
    },
    HostMetricDef {
        key: None,
        unit: MetricUnit::Percent,
        label: tr_key!("CPU pressure"),
        report: false,
        csv: None,
        prom: host_gauge("gpu_doctor_host_pressure_cpu_some_percent", "Linux PSI: CPU pressure, some (avg10, %)"),
        read: |h| h.pressure.value().and_then(|p| p.cpu_some),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The history keys, the CSV columns and the exporter's names are formats (recordings,
    /// dashboards and alert rules read them): a change here is a change of format.
    #[test]
    fn the_names_are_the_recording_formats_and_the_exporters() {
        let keys: Vec<&str> = HOST_METRICS.iter().filter_map(|d| d.key).collect();
        assert_eq!(
            keys,
            [
                "host.cpu",
                "host.iowait",
                "host.ram_used",
                "host.swap_used",
                "host.disk_read",
                "host.disk_write",
                "host.net_rx",
                "host.net_tx",
                "host.psi_io"
            ]
        );
        let csv: Vec<&str> = HOST_METRICS.iter().filter_map(|d| d.csv).collect();
        assert_eq!(
            csv,
            ["cpu_pct", "iowait_pct", "ram_used_bytes", "swap_used_bytes", "disk_read_bps", "disk_write_bps"]
        );
        let mut names: Vec<&str> = HOST_METRICS.iter().filter_map(|d| d.prom.map(|p| p.name)).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "an exported name twice");
        assert!(names.iter().all(|n| n.starts_with("gpu_doctor_host_")));
    }

    #[test]
    fn every_metric_reads_its_own_field() {
        let mut demo = crate::telemetry::demo::DemoHost::new(crate::telemetry::demo::Scenario::HealthyTraining, 8);
        let h = crate::telemetry::host::HostSource::sample(&mut demo, 5.0);
        let read = |label: &str| HOST_METRICS.iter().find(|d| d.label == label).and_then(|d| (d.read)(&h));
        assert_eq!(read("Host CPU"), h.cpu_pct.get());
        assert_eq!(read("Host RAM used"), h.memory.value().map(|m| m.ram_used_bytes as f64));
        assert_eq!(read("Host RAM"), h.memory.value().map(|m| m.ram_total_bytes as f64));
        assert_eq!(read("Disk write"), h.disk_write_total());
        assert_eq!(read("Busiest CPU core"), h.per_core_pct.iter().copied().reduce(f64::max));
    }
}
