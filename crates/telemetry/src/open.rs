//! Opening the data sources a front end asks for: the real machine (NVML opened lazily on the
//! sampler thread, host metrics from `/proc`) or a named demo scenario. Plain options, so the CLI,
//! the app and tests share one way to open them.

use std::path::PathBuf;
use std::sync::Arc;

use super::GpuSource;
use super::demo::{DemoGpus, DemoHost, Scenario};
use super::host::{HostSource, LiveHost};
use super::live::{LiveGpus, NvmlOptions};

/// Environment variable naming a system root (a directory holding `proc/` and `sys/`) to read
/// instead of `/`: for tests with fixture trees.
pub const SYSTEM_ROOT_ENV: &str = "GPU_DOCTOR_SYSTEM_ROOT";

/// The system root to read: `$GPU_DOCTOR_SYSTEM_ROOT`, else `/`.
pub fn system_root() -> PathBuf {
    std::env::var_os(SYSTEM_ROOT_ENV).map_or_else(|| PathBuf::from("/"), PathBuf::from)
}

/// Where data comes from: the real machine or a demo scenario.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SourceOptions {
    /// Simulated data of this scenario instead of the real machine.
    pub demo: Option<Scenario>,
    /// Number of simulated GPUs (demo only; default: the scenario's).
    pub gpus: Option<u32>,
    /// Seed of the simulation (demo only).
    pub seed: u64,
    /// Load NVML from this file instead of the standard places.
    pub nvml_lib: Option<PathBuf>,
    /// Read GPUs even when they are runtime-suspended (wakes them).
    pub wake_sleeping_gpu: bool,
    /// Only these GPUs (`--gpu`); `None`: every GPU.
    pub only: Option<super::select::GpuSelection>,
}

impl SourceOptions {
    /// Opens the GPU and host sources. The real machine without a usable NVIDIA driver gives a
    /// source that reports why.
    pub fn open(&self) -> (Arc<dyn GpuSource>, Box<dyn HostSource>) {
        match self.demo {
            Some(sc) => (
                self.selected(Arc::new(DemoGpus::new(sc, self.gpus.unwrap_or(sc.default_gpus()), self.seed))),
                Box::new(DemoHost::new(sc, self.seed)),
            ),
            None => {
                let live = self.live_gpus();
                let host = LiveHost::with_root(live.root().to_path_buf());
                (self.selected(live), Box::new(host))
            }
        }
    }

    /// `gpus` showing only the GPUs of `--gpu` (all of them without it).
    pub fn selected(&self, gpus: Arc<dyn GpuSource>) -> Arc<dyn GpuSource> {
        match &self.only {
            Some(keep) => Arc::new(super::select::SelectedGpus::new(gpus, keep.clone())),
            None => gpus,
        }
    }

    /// The real machine's GPU source (NVML opened lazily, on the sampler thread).
    pub fn live_gpus(&self) -> Arc<LiveGpus> {
        Arc::new(LiveGpus::new(NvmlOptions {
            library: self.nvml_lib.clone(),
            wake_sleeping: self.wake_sleeping_gpu,
            root: system_root(),
        }))
    }
}
