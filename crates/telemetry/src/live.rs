//! The real machine's GPU source. NVML is opened lazily, by the first sample on the sampler's GPU
//! thread, so a driver that hangs in `nvmlInit` cannot block the window or the CLI's clock; and it
//! is not opened at all while every NVIDIA GPU sleeps (opening it would wake a sleeping laptop GPU
//! and keep it awake). While asleep only the power state is read, once per tick (Linux: sysfs
//! `runtime_status`; Windows: the device's most recent power state, D3, from the Configuration
//! Manager); NVML is opened as soon as a GPU is active, or when the user allows waking it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::{ArcSwap, ArcSwapOption};

use super::nvml::NvmlSource;
#[cfg(not(windows))]
use super::pci;
use super::sample::{GpuSample, GpuSlowSample, Inventory};
use super::source::{GpuSource, SourceStatus};

/// How the real machine's NVML is found and opened.
#[derive(Clone, Debug)]
pub struct NvmlOptions {
    /// The library to load (`--nvml-lib`); otherwise `GPU_DOCTOR_NVML_LIB`, else the standard places.
    pub library: Option<PathBuf>,
    /// Open NVML even when every NVIDIA GPU is runtime-suspended (wakes them).
    pub wake_sleeping: bool,
    /// System root for sysfs (normally `/`; tests use a fixture tree).
    pub root: PathBuf,
}

impl Default for NvmlOptions {
    fn default() -> Self {
        NvmlOptions { library: None, wake_sleeping: false, root: PathBuf::from("/") }
    }
}

struct View {
    status: SourceStatus,
    inventory: Arc<Inventory>,
}

/// NVML on this machine, opened on first use.
pub struct LiveGpus {
    opts: NvmlOptions,
    wake: AtomicBool,
    opening: AtomicBool,
    failed: AtomicBool,
    transition: Mutex<()>,
    open: ArcSwapOption<NvmlSource>,
    view: ArcSwap<View>,
}

impl LiveGpus {
    /// A source that has not opened NVML yet. Reads sysfs once so a sleeping GPU shows as such
    /// from the first frame.
    pub fn new(opts: NvmlOptions) -> LiveGpus {
        let live = LiveGpus {
            opts,
            wake: AtomicBool::new(false),
            opening: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            transition: Mutex::new(()),
            open: ArcSwapOption::empty(),
            view: ArcSwap::from_pointee(View { status: SourceStatus::Opening, inventory: Arc::default() }),
        };
        if let Some(functions) = live.asleep() {
            live.set_view(SourceStatus::Asleep { functions }, Arc::default());
        }
        live
    }

    /// The system root sysfs is read under.
    pub fn root(&self) -> &std::path::Path {
        &self.opts.root
    }

    fn set_view(&self, status: SourceStatus, inventory: Arc<Inventory>) {
        self.view.store(Arc::new(View { status, inventory }));
    }

    /// The sleeping functions, when every NVIDIA GPU sleeps and waking is not allowed.
    fn asleep(&self) -> Option<Vec<String>> {
        if self.opts.wake_sleeping || self.wake.load(Ordering::Relaxed) {
            return None;
        }
        #[cfg(windows)]
        return super::winpci::sleeping_nvidia();
        #[cfg(not(windows))]
        pci::all_asleep(&pci::nvidia_display_functions(&self.opts.root))
    }

    /// Moves towards an open library: does nothing once open or failed; stays asleep while the
    /// GPUs sleep; otherwise opens NVML here, on the calling thread (which may block as long as
    /// the driver does).
    pub fn advance(&self) {
        let Ok(_one_opener) = self.transition.lock() else {
            return;
        };
        if self.open.load().is_some() || self.failed.load(Ordering::Relaxed) {
            return;
        }
        if let Some(functions) = self.asleep() {
            if !matches!(&self.view.load().status, SourceStatus::Asleep { functions: f } if *f == functions) {
                self.set_view(SourceStatus::Asleep { functions }, Arc::default());
            }
            return;
        }
        self.set_view(SourceStatus::Opening, Arc::default());
        self.opening.store(true, Ordering::Relaxed);
        let result = NvmlSource::open_with(self.opts.library.as_deref());
        self.opening.store(false, Ordering::Relaxed);
        match result {
            Ok(n) => {
                self.set_view(n.status(), n.inventory());
                self.open.store(Some(Arc::new(n)));
            }
            Err(no) => {
                self.failed.store(true, Ordering::Relaxed);
                self.set_view(SourceStatus::Unavailable(no), Arc::default());
            }
        }
    }

    /// Opens now on a helper thread and waits at most `timeout` (the CLI's `info`). Returns false
    /// when NVML did not answer in time; the helper thread is left to finish or hang on its own.
    pub fn advance_within(self: &Arc<Self>, timeout: Duration) -> bool {
        let (tx, rx) = std::sync::mpsc::channel();
        let me = Arc::clone(self);
        let spawned = std::thread::Builder::new().name("gd-nvml-open".into()).spawn(move || {
            me.advance();
            let _ = tx.send(());
        });
        match spawned {
            Ok(_) => rx.recv_timeout(timeout).is_ok(),
            Err(_) => {
                self.advance();
                true
            }
        }
    }
}

impl GpuSource for LiveGpus {
    fn status(&self) -> SourceStatus {
        self.view.load().status.clone()
    }
    fn inventory(&self) -> Arc<Inventory> {
        Arc::clone(&self.view.load().inventory)
    }
    fn sample(&self, t: f64) -> Vec<GpuSample> {
        if self.open.load().is_none() {
            self.advance();
        }
        self.open.load().as_ref().map(|n| n.sample(t)).unwrap_or_default()
    }
    fn sample_slow(&self, t: f64) -> Vec<GpuSlowSample> {
        self.open.load().as_ref().map(|n| n.sample_slow(t)).unwrap_or_default()
    }
    fn in_flight(&self, slow: bool) -> Option<crate::i18n::Message> {
        if !slow && self.opening.load(Ordering::Relaxed) {
            return Some(crate::msg!("nvmlInit (opening NVML)"));
        }
        self.open.load().as_ref().and_then(|n| n.in_flight(slow))
    }
    fn allow_wake(&self) {
        self.wake.store(true, Ordering::Relaxed);
    }
    fn facts(&self) -> Vec<super::sample::GpuFacts> {
        self.open.load().as_ref().map(|n| n.facts()).unwrap_or_default()
    }
    fn memory_used(&self) -> Vec<(u32, u64)> {
        self.open.load().as_ref().map(|n| n.memory_used()).unwrap_or_default()
    }
    fn prepare(&self) {
        if self.open.load().is_none() {
            self.advance();
        }
    }
}
