//! A sampler holding a recording (the Monitor's REPLAY): its history filled from every sample, its
//! snapshot the last one, the GPU side a [`StaticGpus`] with the recording's status and
//! inventory, the host side the last recorded host sample. No threads; nothing is sampled.

use std::sync::Arc;
use std::time::Duration;

use super::{Publish, Sampler, record_gpu, record_host};
use crate::telemetry::demo::{DemoHost, Scenario};
use crate::telemetry::history::HistoryConfig;
use crate::telemetry::host::HostSource;
use crate::telemetry::recording::Recording;
use crate::telemetry::sample::HostSample;
use crate::telemetry::source::{SourceStatus, StaticGpus};

impl Sampler {
    /// A sampler holding a recording: its history filled from every sample, its snapshot the last
    /// sample, its source labelled REPLAY. No threads; nothing is sampled.
    pub fn from_recording(rec: &Recording, file: &str) -> Sampler {
        let mut inventory = Arc::new(rec.header.inventory.clone());
        let mut recorded = rec.header.source.clone();
        for r in &rec.records {
            if let Some(i) = &r.inventory {
                inventory = Arc::new(i.clone());
            }
            if let Some(s) = &r.source {
                recorded = s.clone();
            }
        }
        let status = SourceStatus::Replay { file: file.to_string(), recorded: recorded.label() };
        let gpu = Arc::new(StaticGpus::new(status.clone(), Arc::clone(&inventory)));
        let interval = Duration::from_secs_f64(rec.header.interval_secs.clamp(0.25, 10.0));
        let last_host = rec.records.iter().rev().find_map(|r| r.host.clone().map(|h| (r.t, h)));
        let host = Box::new(ReplayHost(
            last_host.as_ref().map_or_else(|| DemoHost::new(Scenario::Idle, 0).sample(0.0), |(_, h)| h.clone()),
        ));
        let s = Self::with_config(gpu, host, interval, HistoryConfig::default());
        let last_gpu = rec.records.iter().rev().find(|r| !r.gpus.is_empty()).map(|r| (r.t, r.gpus.clone()));
        if let Ok(mut h) = s.shared.history.lock() {
            for r in &rec.records {
                if let Some(host) = &r.host {
                    record_host(&mut h, r.t, host);
                }
                for g in &r.gpus {
                    record_gpu(&mut h, r.t, g);
                }
            }
        }
        let end = rec.records.last().map_or(0.0, |r| r.t);
        s.shared.publish(Publish::QUIET, |snap| {
            snap.started_unix = rec.header.started_unix;
            snap.interval_secs = rec.header.interval_secs;
            snap.source = status;
            snap.inventory = inventory;
            snap.host_t = last_host.as_ref().map(|(t, _)| *t);
            snap.host = last_host.map(|(_, h)| h);
            snap.gpu_t = last_gpu.as_ref().map(|(t, _)| *t);
            snap.gpus = last_gpu.map(|(_, g)| g).unwrap_or_default();
        });
        if let Ok(mut e) = s.shared.replay_end.lock() {
            *e = Some(end);
        }
        s
    }
}

/// The host side of a replay: never sampled (a replay has no threads); answers with the last
/// recorded sample if asked.
struct ReplayHost(HostSample);

impl HostSource for ReplayHost {
    fn sample(&mut self, _t: f64) -> HostSample {
        self.0.clone()
    }
}
