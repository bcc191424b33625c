//! [`Snapshot`]: the latest state published by the sampler. Immutable once published; readers
//! load it through an `ArcSwap` without blocking the sampler threads.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::sample::{GpuSample, HostSample, Inventory, SelfUsage};
use super::source::SourceStatus;

/// The latest measurements and where they came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Increases with every publish.
    pub seq: u64,
    /// Wall-clock time the sampler started, seconds since the Unix epoch; add a `t` to get the
    /// wall-clock time of a sample.
    pub started_unix: f64,
    /// Sampling interval, seconds.
    pub interval_secs: f64,
    /// Where GPU data comes from.
    pub source: SourceStatus,
    /// Versions and devices.
    pub inventory: Arc<Inventory>,
    /// Time of the latest host sample, seconds since start.
    pub host_t: Option<f64>,
    /// The latest host sample.
    pub host: Option<HostSample>,
    /// Time of the latest GPU sample, seconds since start.
    pub gpu_t: Option<f64>,
    /// The latest GPU samples, one per GPU.
    pub gpus: Vec<GpuSample>,
    /// gpu-doctor's own CPU and memory.
    pub self_usage: Option<SelfUsage>,
    /// A GPU call that has not returned for [`crate::telemetry::sampler::HUNG_AFTER`] or longer
    /// (the driver may be hung); `None` while the source answers.
    #[serde(default)]
    pub gpu_stall: Option<Stall>,
    /// The processes using the most CPU over the last slow tick, busiest first; read only while
    /// the host's CPU is busy ([`crate::telemetry::sampler::BUSY_HOST_PCT`]), else empty.
    #[serde(default)]
    pub busiest: Vec<super::proctree::BusyProcess>,
    /// The server the data comes from (shown as REMOTE with its name); `None` for this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<super::remote::info::RemoteInfo>,
}

/// A vendor call that is not returning.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stall {
    /// The call, e.g. "nvmlDeviceGetTemperature on GPU 1".
    #[serde(with = "crate::i18n::message::compact")]
    pub call: crate::i18n::Message,
    /// Seconds it has been running.
    pub secs: f64,
}

impl Stall {
    /// The not-responding message with its next step.
    pub fn message(&self) -> crate::i18n::Message {
        crate::msg!(
            "GPU data not responding: {call} has not returned for {secs} s. The NVIDIA driver may be hung; check the kernel log (sudo dmesg | grep -i -e xid -e nvrm). Host data keeps updating; GPU data resumes if the call returns.",
            call = self.call,
            secs = format!("{:.0}", self.secs)
        )
    }
}

impl Snapshot {
    /// The snapshot before any sample: what the source reports about itself, nothing measured.
    pub fn before_samples(
        started_unix: f64,
        interval_secs: f64,
        source: SourceStatus,
        inventory: Arc<Inventory>,
    ) -> Self {
        Snapshot {
            seq: 0,
            started_unix,
            interval_secs,
            source,
            inventory,
            host_t: None,
            host: None,
            gpu_t: None,
            gpus: Vec::new(),
            self_usage: None,
            gpu_stall: None,
            busiest: Vec::new(),
            remote: None,
        }
    }

    /// Time of the newest data, seconds since start.
    pub fn latest_t(&self) -> f64 {
        self.host_t.unwrap_or(0.0).max(self.gpu_t.unwrap_or(0.0))
    }

    /// True when the data is simulated.
    pub fn is_demo(&self) -> bool {
        self.source.is_demo()
    }
}
