//! What the slow tick reads about processes: each GPU job's CPU (its process trees) into the
//! history, and while the host is busy the programs that use the CPU most.

use super::{BUSY_HOST_PCT, Publish, Shared, TreesCpu};
use crate::telemetry::history::keys::{self, GpuMetric};
use crate::telemetry::sample::GpuSlowSample;

impl Shared {
    /// While the host's CPU is busy, finds the processes that use it most since the last slow
    /// tick (a verdict names the top one); on a quiet host reads nothing and clears the list.
    pub(super) fn record_busiest(&self, t: f64) {
        let cpu = self.latest.load().host.as_ref().and_then(|h| h.cpu_pct.get());
        let Ok(mut prev) = self.busiest_prev.lock() else { return };
        if !cpu.is_some_and(|c| c >= BUSY_HOST_PCT) {
            let had = prev.take().is_some();
            drop(prev);
            if had {
                self.publish(Publish::QUIET, |s| s.busiest = Vec::new());
            }
            return;
        }
        let now = match self.host.lock() {
            Ok(mut host) => host.all_cpu_secs(t),
            Err(_) => return,
        };
        let Some(now) = now else { return };
        let busiest = match prev.as_ref() {
            Some((t0, before)) => crate::telemetry::proctree::busiest_between(before, &now, t - t0, 3),
            None => Vec::new(),
        };
        *prev = Some((t, now));
        drop(prev);
        self.publish(Publish::QUIET, |s| s.busiest = busiest);
    }

    /// Appends each GPU's job CPU (its processes' trees, % of one core) since the last slow tick;
    /// nothing for a GPU whose processes or their CPU could not be read.
    pub(super) fn record_job_cpu(&self, t: f64, slow: &[GpuSlowSample]) {
        let readings: Vec<(u32, Option<TreesCpu>)> = match self.host.lock() {
            Ok(mut host) => slow
                .iter()
                .map(|s| {
                    let pids: Option<Vec<u32>> = s.processes.value().map(|p| p.iter().map(|p| p.pid).collect());
                    (s.index, pids.and_then(|pids| host.trees_cpu_secs(&pids, t)))
                })
                .collect(),
            Err(_) => return,
        };
        let Ok(mut prev) = self.job_cpu.lock() else { return };
        let mut points = Vec::new();
        for (i, now) in readings {
            match now {
                Some(now) => {
                    if let Some(pct) = prev
                        .get(&i)
                        .and_then(|(t0, before)| crate::telemetry::proctree::cpu_pct_between(before, &now, t - t0))
                    {
                        points.push((i, pct));
                    }
                    prev.insert(i, (t, now));
                }
                None => {
                    prev.remove(&i);
                }
            }
        }
        drop(prev);
        if let Ok(mut hist) = self.history.lock() {
            for (i, pct) in points {
                hist.push(&keys::gpu(i, GpuMetric::JobCpu), t, pct);
            }
        }
    }
}
