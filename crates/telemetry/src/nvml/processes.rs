//! The process list of one GPU from NVML: compute and graphics contexts merged into one row per
//! process, named from /proc (else by NVML), with each process's share of the GPU and of its
//! video engines from NVML's per-process utilization samples.

use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;

use super::{Metric, NvmlSource};
use crate::i18n::Message;
use crate::msg;
use crate::telemetry::Reading;
use crate::telemetry::sample::{GpuProcess, ProcessKind};

impl NvmlSource {
    /// The processes on GPU `idx` with their VRAM and utilization; Err when the GPU is lost.
    pub(super) fn processes(
        &self,
        idx: u32,
        dev: &nvml_wrapper::Device<'_>,
    ) -> Result<Reading<Vec<GpuProcess>>, Message> {
        let compute = self.read(idx, Metric::Processes, || dev.running_compute_processes())?;
        let graphics = self.read(idx, Metric::Processes, || dev.running_graphics_processes())?;
        let mut processes = match (compute.value(), graphics.value()) {
            (None, None) => compute.map(|_| Vec::new()),
            (c, g) => Reading::Value(self.merge_processes(c.map(Vec::as_slice), g.map(Vec::as_slice))),
        };
        if let Reading::Value(list) = &mut processes
            && !list.is_empty()
        {
            let seen = self.process_util_seen.lock().ok().and_then(|m| m.get(&idx).copied());
            let samples = self.read(idx, Metric::ProcessUtil, || match dev.process_utilization_stats(seen) {
                // NVML answers NOT_FOUND when no process ran anything since `seen`.
                Err(NvmlError::NotFound) => Ok(Vec::new()),
                other => other,
            })?;
            if let Some(newest) = samples.value().and_then(|s| s.iter().map(|x| x.timestamp).max())
                && let Ok(mut m) = self.process_util_seen.lock()
            {
                m.insert(idx, newest);
            }
            let samples = samples.map(|v| {
                v.into_iter()
                    .map(|x| ProcessUtilSample { pid: x.pid, sm: x.sm_util, encoder: x.enc_util, decoder: x.dec_util })
                    .collect::<Vec<_>>()
            });
            apply_process_util(list, &samples);
        }
        Ok(processes)
    }

    fn merge_processes(
        &self,
        compute: Option<&[nvml_wrapper::struct_wrappers::device::ProcessInfo]>,
        graphics: Option<&[nvml_wrapper::struct_wrappers::device::ProcessInfo]>,
    ) -> Vec<GpuProcess> {
        let mut out: Vec<GpuProcess> = Vec::new();
        let lists = [(compute.unwrap_or(&[]), ProcessKind::Compute), (graphics.unwrap_or(&[]), ProcessKind::Graphics)];
        for (list, kind) in lists {
            for p in list {
                let vram = match p.used_gpu_memory {
                    UsedGpuMemory::Used(b) => Reading::Value(b),
                    UsedGpuMemory::Unavailable => Reading::na(msg!("not reported by the driver (Windows WDDM or WSL)")),
                };
                if let Some(existing) = out.iter_mut().find(|e| e.pid == p.pid) {
                    if existing.kind != kind {
                        existing.kind = ProcessKind::Both;
                    }
                    continue;
                }
                out.push(GpuProcess::new(p.pid, self.process_name(p.pid), vram, kind));
            }
        }
        out
    }

    fn process_name(&self, pid: u32) -> String {
        let from_proc = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok().map(|s| s.trim().to_string());
        from_proc.filter(|s| !s.is_empty()).or_else(|| self.nvml.sys_process_name(pid, 64).ok()).unwrap_or_default()
    }
}

/// One per-process utilization sample, as NVML gives it (percentages over the sample's period).
#[derive(Clone, Copy, Debug, PartialEq)]
struct ProcessUtilSample {
    pid: u32,
    sm: u32,
    encoder: u32,
    decoder: u32,
}

/// Sets each process's GPU, encoder and decoder share to the mean of its samples since the
/// previous reading: 0 where it has none (it ran nothing in that time; NVML only keeps samples of
/// processes that used the GPU), the reason where the samples could not be read. Samples of a
/// process no longer listed are dropped.
fn apply_process_util(list: &mut [GpuProcess], samples: &Reading<Vec<ProcessUtilSample>>) {
    for p in list.iter_mut() {
        let Some(all) = samples.value() else {
            let why = samples.reason().cloned().unwrap_or_else(|| msg!("not read"));
            p.sm_pct = Reading::na(why.clone());
            p.encoder_pct = Reading::na(why.clone());
            p.decoder_pct = Reading::na(why);
            continue;
        };
        let mine: Vec<&ProcessUtilSample> = all.iter().filter(|s| s.pid == p.pid).collect();
        let mean = |f: fn(&ProcessUtilSample) -> u32| -> u32 {
            if mine.is_empty() {
                return 0;
            }
            let sum: u64 = mine.iter().map(|s| u64::from(f(s).min(100))).sum();
            ((sum as f64) / (mine.len() as f64)).round() as u32
        };
        p.sm_pct = Reading::Value(mean(|s| s.sm));
        p.encoder_pct = Reading::Value(mean(|s| s.encoder));
        p.decoder_pct = Reading::Value(mean(|s| s.decoder));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_process_gets_the_mean_of_its_own_samples_and_zero_without_any() {
        let mut list = vec![
            GpuProcess::new(10, "train", Reading::Value(1), ProcessKind::Compute),
            GpuProcess::new(20, "ffmpeg", Reading::Value(1), ProcessKind::Compute),
            GpuProcess::new(30, "idle", Reading::Value(1), ProcessKind::Compute),
        ];
        let s = |pid, sm, encoder, decoder| ProcessUtilSample { pid, sm, encoder, decoder };
        // Two samples of 10, one of 20, one of a process that has exited since.
        let samples = Reading::Value(vec![s(10, 80, 0, 0), s(10, 91, 0, 0), s(20, 7, 40, 61), s(99, 100, 0, 0)]);
        apply_process_util(&mut list, &samples);
        let got: Vec<_> = list.iter().map(|p| (p.sm_pct.get(), p.encoder_pct.get(), p.decoder_pct.get())).collect();
        assert_eq!(got, [(Some(86), Some(0), Some(0)), (Some(7), Some(40), Some(61)), (Some(0), Some(0), Some(0))]);
        apply_process_util(&mut list, &Reading::na(msg!("not supported on this GPU")));
        assert!(list.iter().all(|p| p.sm_pct.get().is_none() && p.decoder_pct.reason().is_some()));
    }
}
