//! The sampler: named background threads that read the host and the GPU source at the chosen
//! interval (and slow GPU metrics at a lower cadence), append to the [`History`] and publish a new
//! [`Snapshot`], then wake the reader (the GUI's repaint) through a callback.
//!
//! Nothing here is ever called from the UI thread except [`Sampler::snapshot`] and
//! [`Sampler::with_history`], which never wait for a source (the GUI copies what it draws out of
//! the history under the lock and lays out without it). The same step functions run
//! synchronously in tests and benchmarks through [`Sampler::manual`].
//!
//! Each slow GPU step has one owner at a time: with threads running, the GPU thread asks the
//! slow thread to run early instead of running it itself, and a slow step that finds another in
//! flight does nothing, so the watchdog's slot for slow calls is never shared.
//!
//! Publishing and recording are separate decisions: [`Publish`] says whether the reader is woken
//! (a repaint) and whether the snapshot completes a tick (a recording line).

use super::recording::{Recorder, RecordingError};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{JoinHandle, Thread};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwap;

use super::history::keys;
use super::history::{Event, EventKind, EventLevel, History, HistoryConfig};
use super::host::{HostSource, SelfProbe};
use super::host_metric::HOST_METRICS;
use super::metric::{GPU_METRICS, Sampled};
use super::sample::{GpuHealth, GpuSample, GpuSlowSample, HostSample, MAX_CORES, MAX_GPUS};
use super::snapshot::{Snapshot, Stall};
use super::source::GpuSource;

mod procs;
mod replay;
pub use replay::ReplayFile;

/// Slow GPU metrics (PCIe throughput ≈ 20 ms per call, process lists) are read at most this often.
pub const SLOW_MIN_INTERVAL: f64 = 2.0;

/// A GPU call running this long is reported as not responding.
pub const HUNG_AFTER: Duration = Duration::from_secs(2);
/// How often the watchdog looks at the GPU calls in flight.
const WATCHDOG_EVERY: Duration = Duration::from_millis(500);

/// Times the step running on one sampler thread, for the watchdog.
#[derive(Default)]
struct Watch {
    /// Milliseconds since the sampler started, plus one, when the running step began; 0 = idle.
    started_ms: AtomicU64,
    /// The `started_ms` of the step the watchdog reported as not responding (0: none). A stamp,
    /// not a flag: a report that races with the end of its step never marks the next one.
    flagged: AtomicU64,
}

impl Watch {
    fn begin(&self, now_ms: u64) {
        self.started_ms.store(now_ms + 1, Ordering::Relaxed);
    }
    /// Ends the step; returns how long it ran (ms) when the watchdog had flagged it.
    fn end(&self, now_ms: u64) -> Option<u64> {
        let began = self.started_ms.swap(0, Ordering::Relaxed);
        let flagged = self.flagged.swap(0, Ordering::Relaxed);
        (began != 0 && flagged == began).then(|| now_ms.saturating_sub(began - 1))
    }
    fn running_for_ms(&self, now_ms: u64) -> Option<u64> {
        match self.started_ms.load(Ordering::Relaxed) {
            0 => None,
            began => Some(now_ms.saturating_sub(began - 1)),
        }
    }
}

type Notify = Box<dyn Fn(&Snapshot) + Send + Sync>;

/// What a publish does besides replacing the snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Publish {
    /// Run the notify callback (the GUI repaints).
    wake: bool,
    /// The snapshot completes a tick: append it to the recording in progress.
    record: bool,
}

impl Publish {
    /// Neither wakes the reader nor records.
    const QUIET: Publish = Publish { wake: false, record: false };
    /// Wakes the reader (a state change worth showing now) but is not a tick of its own.
    const WAKE: Publish = Publish { wake: true, record: false };
    /// A completed tick: wakes the reader and appends a recording line.
    const TICK: Publish = Publish { wake: true, record: true };
}

struct Shared {
    gpu: Arc<dyn GpuSource>,
    host: Mutex<Box<dyn HostSource>>,
    self_probe: Mutex<SelfProbe>,
    latest: ArcSwap<Snapshot>,
    history: Mutex<History>,
    slow: ArcSwap<Vec<GpuSlowSample>>,
    notify: Mutex<Option<Notify>>,
    seq: AtomicU64,
    stop: AtomicBool,
    publish: Mutex<()>,
    /// Fast (0) and slow (1) GPU steps in flight.
    watches: [Watch; 2],
    /// Held by the one slow step in flight; another that finds it taken does nothing.
    slow_owner: Mutex<()>,
    /// Orders the watchdog's look at the steps (and what it shows) against a step's end, so a
    /// step that has just answered is never shown as not responding again.
    stall_order: Mutex<()>,
    /// The slow thread, once started: the GPU thread wakes it early instead of running a slow
    /// step itself.
    slow_thread: OnceLock<Thread>,
    /// Set with an unpark of the slow thread: run now rather than at the next turn.
    slow_kick: AtomicBool,
    clock: Instant,
    /// A recording in progress: every publish that completes a tick appends a line.
    recorder: Mutex<Option<Recorder>>,
    /// Why the last recording stopped by itself (a write failed).
    recorder_error: Mutex<Option<crate::i18n::Message>>,
    /// For a replay: the recording's last sample time.
    replay_end: Mutex<Option<f64>>,
    /// Per GPU, the last slow tick's time and its processes' tree CPU seconds (for the job's CPU).
    job_cpu: Mutex<HashMap<u32, JobCpuReading>>,
    /// The previous reading of every process's CPU, while the host is busy.
    busiest_prev: Mutex<Option<BusyReading>>,
}

/// One slow tick's reading of a GPU's processes: its time and CPU seconds per process of their
/// trees.
type JobCpuReading = (f64, TreesCpu);
/// When every process's CPU was read, and the reading (pid, name, CPU seconds).
type BusyReading = (f64, Vec<(u32, String, f64)>);

/// Host CPU, %, from which the sampler names the busiest processes (each slow tick).
pub const BUSY_HOST_PCT: f64 = 50.0;

/// CPU seconds so far per process of a GPU's process trees.
type TreesCpu = Vec<(u32, f64)>;

/// Runs the sources and holds the latest snapshot and the history.
pub struct Sampler {
    shared: Arc<Shared>,
    interval: Duration,
    started: Instant,
    threads: Vec<JoinHandle<()>>,
}

impl Sampler {
    /// A sampler whose steps are called by hand (tests, benchmarks, replay of a fixed sequence).
    pub fn manual(gpu: Arc<dyn GpuSource>, host: Box<dyn HostSource>, interval: Duration) -> Sampler {
        Self::with_config(gpu, host, interval, HistoryConfig::default())
    }

    fn with_config(
        gpu: Arc<dyn GpuSource>,
        host: Box<dyn HostSource>,
        interval: Duration,
        cfg: HistoryConfig,
    ) -> Sampler {
        let started_unix = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0);
        let snapshot = Snapshot::before_samples(started_unix, interval.as_secs_f64(), gpu.status(), gpu.inventory());
        let started = Instant::now();
        Sampler {
            shared: Arc::new(Shared {
                gpu,
                host: Mutex::new(host),
                self_probe: Mutex::new(SelfProbe::new()),
                latest: ArcSwap::from_pointee(snapshot),
                history: Mutex::new(History::new(cfg)),
                slow: ArcSwap::from_pointee(Vec::new()),
                notify: Mutex::new(None),
                seq: AtomicU64::new(0),
                stop: AtomicBool::new(false),
                publish: Mutex::new(()),
                watches: [Watch::default(), Watch::default()],
                slow_owner: Mutex::new(()),
                stall_order: Mutex::new(()),
                slow_thread: OnceLock::new(),
                slow_kick: AtomicBool::new(false),
                clock: started,
                recorder: Mutex::new(None),
                recorder_error: Mutex::new(None),
                replay_end: Mutex::new(None),
                job_cpu: Mutex::new(HashMap::new()),
                busiest_prev: Mutex::new(None),
            }),
            interval,
            started,
            threads: Vec::new(),
        }
    }

    /// A sampler with its threads running (host, GPU, slow GPU, watchdog). Set the reader's
    /// wake-up with [`Sampler::set_notify`].
    pub fn start(gpu: Arc<dyn GpuSource>, host: Box<dyn HostSource>, interval: Duration) -> std::io::Result<Sampler> {
        let mut s = Self::manual(gpu, host, interval);
        s.spawn_threads()?;
        Ok(s)
    }

    /// Starts the sampler threads of a [`Sampler::manual`] sampler (once; later calls do nothing).
    pub fn spawn_threads(&mut self) -> std::io::Result<()> {
        if !self.threads.is_empty() {
            return Ok(());
        }
        let interval = self.interval;
        let slow_interval = Duration::from_secs_f64(interval.as_secs_f64().max(SLOW_MIN_INTERVAL));
        self.threads.push(self.spawn("gd-host", interval, |sh, t| sh.step_host(t))?);
        // The slow thread is known before the GPU thread starts, so the GPU thread always hands
        // slow steps to it instead of running one itself.
        let slow = self.spawn("gd-gpu-slow", slow_interval, |sh, t| sh.step_slow(t))?;
        let _ = self.shared.slow_thread.set(slow.thread().clone());
        self.threads.push(slow);
        self.threads.push(self.spawn("gd-gpu", interval, |sh, t| sh.step_gpu(t))?);
        self.threads.push(self.spawn("gd-watchdog", WATCHDOG_EVERY, |sh, _| sh.check_stall())?);
        Ok(())
    }

    /// Demo sources only: simulates the `secs` seconds before start, so the charts of a demo open
    /// with history instead of empty. Call before [`Sampler::spawn_threads`]; does nothing for
    /// real sources (the past of a real machine is never invented).
    pub fn prefill_demo(&self, secs: f64) {
        if !self.threads.is_empty() || !self.shared.gpu.status().is_demo() {
            return;
        }
        let dt = self.interval.as_secs_f64();
        let slow_every = (SLOW_MIN_INTERVAL / dt).ceil().max(1.0) as i64;
        let n = (secs / dt).floor() as i64;
        for k in (1..=n).rev() {
            let t = -(k as f64) * dt;
            if k % slow_every == 0 || k == n {
                self.step_slow(t);
            }
            self.step_host(t);
            self.step_gpu(t);
        }
    }

    fn spawn(&self, name: &str, every: Duration, step: fn(&Shared, f64)) -> std::io::Result<JoinHandle<()>> {
        let shared = Arc::clone(&self.shared);
        let started = self.started;
        std::thread::Builder::new().name(name.to_string()).spawn(move || {
            let mut next = Instant::now();
            while !shared.stop.load(Ordering::Relaxed) {
                step(&shared, started.elapsed().as_secs_f64());
                next += every;
                let now = Instant::now();
                if next < now {
                    // A slow call overran: skip the missed ticks instead of bursting.
                    next = now + every;
                }
                while !shared.stop.load(Ordering::Relaxed) {
                    let left = next.saturating_duration_since(Instant::now());
                    if left.is_zero() || shared.kicked() {
                        break;
                    }
                    std::thread::park_timeout(left);
                }
            }
        })
    }

    /// Sets the callback run after each publish.
    pub fn set_notify(&self, f: impl Fn(&Snapshot) + Send + Sync + 'static) {
        if let Ok(mut n) = self.shared.notify.lock() {
            *n = Some(Box::new(f));
        }
    }

    /// The latest snapshot (never blocks on a source).
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.shared.latest.load_full()
    }

    /// Runs `f` with the history locked (briefly: the sampler threads append under this lock).
    pub fn with_history<R>(&self, f: impl FnOnce(&History) -> R) -> R {
        match self.shared.history.lock() {
            Ok(h) => f(&h),
            Err(poisoned) => f(&poisoned.into_inner()),
        }
    }

    /// The GPU source, for a reader that asks it directly (a tune's fast memory probe).
    pub fn gpu_source(&self) -> Arc<dyn GpuSource> {
        Arc::clone(&self.shared.gpu)
    }

    /// The sampling interval.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Seconds since the sampler started (the time axis of the history); for a replay, the end
    /// of the recording.
    pub fn now(&self) -> f64 {
        if let Some(end) = self.shared.replay_end.lock().ok().and_then(|e| *e) {
            return end;
        }
        self.started.elapsed().as_secs_f64()
    }

    /// One host step at time `t` (called by the host thread, or by hand).
    pub fn step_host(&self, t: f64) {
        self.shared.step_host(t);
    }

    /// One fast GPU step at time `t`.
    pub fn step_gpu(&self, t: f64) {
        self.shared.step_gpu(t);
    }

    /// One slow GPU step at time `t`.
    pub fn step_slow(&self, t: f64) {
        self.shared.step_slow(t);
    }

    /// One watchdog check (the `gd-watchdog` thread runs it every 500 ms): publishes a
    /// not-responding state for a GPU call running [`HUNG_AFTER`] or longer.
    pub fn check_stall(&self) {
        self.shared.check_stall();
    }

    /// Starts recording every tick to `path`, a new file (see [`crate::telemetry::recording`]).
    pub fn start_recording(&self, path: &std::path::Path) -> Result<(), RecordingError> {
        let rec = Recorder::create(path, &self.snapshot())?;
        if let Ok(mut g) = self.shared.recorder.lock() {
            *g = Some(rec);
        }
        Ok(())
    }

    /// Stops recording; returns the file and the number of samples written.
    pub fn stop_recording(&self) -> Option<(std::path::PathBuf, u64)> {
        let rec = self.shared.recorder.lock().ok()?.take()?;
        let _ = rec.sync();
        Some((rec.path().to_path_buf(), rec.lines.saturating_sub(1)))
    }

    /// The recording in progress: its file and samples written so far.
    pub fn recording(&self) -> Option<(std::path::PathBuf, u64)> {
        let g = self.shared.recorder.lock().ok()?;
        g.as_ref().map(|r| (r.path().to_path_buf(), r.lines.saturating_sub(1)))
    }

    /// Why a recording stopped by itself, once.
    pub fn take_recording_error(&self) -> Option<crate::i18n::Message> {
        self.shared.recorder_error.lock().ok()?.take()
    }

    /// Adds an event to the history (shown as a mark on the charts).
    pub fn add_event(&self, event: Event) {
        if let Ok(mut h) = self.shared.history.lock() {
            h.add_event(event);
        }
    }

    /// Asks the GPU source to read a sleeping GPU anyway (it wakes up).
    pub fn allow_wake(&self) {
        self.shared.gpu.allow_wake();
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        for t in &self.threads {
            t.thread().unpark();
        }
        // Threads are not joined: a vendor call that hangs must not hang the app's exit.
    }
}

impl Shared {
    /// True (once) when the GPU thread asked the slow thread to run now; only the slow thread
    /// consumes it.
    fn kicked(&self) -> bool {
        self.slow_thread.get().is_some_and(|t| t.id() == std::thread::current().id())
            && self.slow_kick.swap(false, Ordering::Relaxed)
    }

    /// Replaces the snapshot; `how` says whether to wake the reader and whether the snapshot
    /// completes a tick (a recording line). Host and GPU data arrive on separate threads in the
    /// same tick: waking the reader for each would draw every tick twice, so only the GPU publish
    /// completes a tick (the host publish when there are no GPUs, or while the GPU step hangs).
    fn publish(&self, how: Publish, update: impl FnOnce(&mut Snapshot)) {
        let _guard = self.publish.lock();
        let mut next = Snapshot::clone(&self.latest.load());
        let was_stalled = next.gpu_stall.is_some();
        next.seq = self.seq.fetch_add(1, Ordering::Relaxed) + 1;
        update(&mut next);
        if let (false, Some(st)) = (was_stalled, &next.gpu_stall)
            && let Ok(mut hist) = self.history.lock()
        {
            // Whichever thread shows the stall first (the watchdog, or the GPU thread while a
            // slow call hangs) marks it in the history, once per stall.
            hist.add_event(Event {
                t: self.clock.elapsed().as_secs_f64(),
                kind: EventKind::GpuStall,
                gpu: None,
                level: EventLevel::Error,
                text: crate::msg!(
                    "NVML not responding: {call} blocked for {secs} s",
                    call = &st.call,
                    secs = format!("{:.0}", st.secs)
                ),
            });
        }
        let next = Arc::new(next);
        self.latest.store(Arc::clone(&next));
        if how.record
            && let Ok(mut guard) = self.recorder.lock()
            && let Some(rec) = guard.as_mut()
            && let Err(e) = rec.append(&next)
        {
            // A full disk or a removed drive: stop recording, keep what was written, tell the user.
            if let Ok(mut err) = self.recorder_error.lock() {
                *err = Some(crate::msg!("Recording stopped: {error}", error = e.message()));
            }
            *guard = None;
        }
        if how.wake
            && let Ok(n) = self.notify.lock()
            && let Some(f) = n.as_ref()
        {
            f(&next);
        }
    }

    fn step_host(&self, t: f64) {
        let (sample, usage) = match self.host.lock() {
            Ok(mut h) => (h.sample(t), self.self_probe.lock().ok().and_then(|mut p| p.sample())),
            Err(_) => return,
        };
        if let Ok(mut hist) = self.history.lock() {
            record_host(&mut hist, t, &sample);
        }
        let shown = self.latest.load();
        // The GPU publish completes the tick, unless there are no GPUs or the GPU step hangs.
        let completes_tick = shown.inventory.gpus.is_empty() || shown.gpu_stall.is_some();
        let remote = self.gpu.remote();
        self.publish(if completes_tick { Publish::TICK } else { Publish::QUIET }, |s| {
            s.host_t = Some(t);
            s.host = Some(sample);
            s.self_usage = usage;
            s.remote = remote;
        });
    }

    fn now_ms(&self) -> u64 {
        self.clock.elapsed().as_millis() as u64
    }

    /// The longest GPU call in flight for [`HUNG_AFTER`] or more, marking its step as flagged.
    fn stall(&self) -> Option<Stall> {
        let now = self.now_ms();
        let mut worst: Option<Stall> = None;
        for (i, w) in self.watches.iter().enumerate() {
            let began = w.started_ms.load(Ordering::Relaxed);
            let Some(ms) = w.running_for_ms(now) else { continue };
            if ms < HUNG_AFTER.as_millis() as u64 || began == 0 {
                continue;
            }
            w.flagged.store(began, Ordering::Relaxed);
            if w.started_ms.load(Ordering::Relaxed) != began {
                // It ended meanwhile: nothing is stalled there.
                continue;
            }
            let secs = ms as f64 / 1000.0;
            if worst.as_ref().is_none_or(|s| secs > s.secs) {
                let call = self.gpu.in_flight(i == 1).unwrap_or_else(|| {
                    if i == 1 {
                        crate::msg!("the slow GPU sample (PCIe, processes)")
                    } else {
                        crate::msg!("the GPU sample")
                    }
                });
                worst = Some(Stall { call, secs });
            }
        }
        worst
    }

    fn check_stall(&self) {
        let _order = self.stall_order.lock();
        let stall = self.stall();
        let shown = self.latest.load().gpu_stall.clone();
        let changed = match (&shown, &stall) {
            (None, None) => false,
            (Some(a), Some(b)) => a.secs.floor() != b.secs.floor() || a.call != b.call,
            _ => true,
        };
        if changed {
            self.publish(Publish::WAKE, |s| s.gpu_stall = stall);
        }
    }

    /// Records the end of a step the watchdog had flagged.
    fn answered_again(&self, t: f64, ms: u64) {
        if let Ok(mut hist) = self.history.lock() {
            hist.add_event(Event {
                t,
                kind: EventKind::AnsweringAgain,
                gpu: None,
                level: EventLevel::Info,
                text: crate::msg!("NVML answering again after {secs} s", secs = format!("{:.1}", ms as f64 / 1000.0)),
            });
        }
    }

    fn step_gpu(&self, t: f64) {
        self.watches[0].begin(self.now_ms());
        self.gpu.prepare();
        let (status, inventory) = (self.gpu.status(), self.gpu.inventory());
        let shown = self.latest.load();
        if shown.source != status || !Arc::ptr_eq(&shown.inventory, &inventory) {
            // Opened (or failed, or fell asleep): show it before sampling, which may block.
            self.publish(Publish::WAKE, |s| {
                s.source = status;
                s.inventory = inventory;
            });
        }
        let mut samples = self.gpu.sample(t);
        let ended = {
            let _order = self.stall_order.lock();
            self.watches[0].end(self.now_ms())
        };
        if let Some(ms) = ended {
            self.answered_again(t, ms);
        }
        let (status, inventory) = (self.gpu.status(), self.gpu.inventory());
        // Whatever a source says (a server's stream can name any index), only the inventory's
        // GPUs are kept, at most MAX_GPUS: the history never grows a series per index seen.
        samples.retain(|g| inventory.gpus.iter().take(MAX_GPUS).any(|i| i.index == g.index));
        samples.truncate(MAX_GPUS);
        if !inventory.gpus.is_empty() && self.slow.load().is_empty() {
            // The source has just opened: read the slow metrics now rather than at the slow
            // thread's next turn, up to 2 s away. With threads, the slow thread does it (a slow
            // call that hangs must not hold this thread); by hand, it runs here.
            match self.slow_thread.get() {
                Some(slow) => {
                    self.slow_kick.store(true, Ordering::Relaxed);
                    slow.unpark();
                }
                None => self.step_slow(t),
            }
        }
        let slow = self.slow.load();
        for g in &mut samples {
            if let Some(sl) = slow.iter().find(|s| s.index == g.index)
                && g.health == GpuHealth::Ok
            {
                g.pcie_rx_bps = sl.pcie_rx_bps.clone();
                g.pcie_tx_bps = sl.pcie_tx_bps.clone();
                g.processes = sl.processes.clone();
            }
        }
        let previous = self.latest.load();
        if let Ok(mut hist) = self.history.lock() {
            for g in &samples {
                let was_ok =
                    previous.gpus.iter().find(|p| p.index == g.index).is_none_or(|p| p.health == GpuHealth::Ok);
                if let (true, GpuHealth::Lost(why)) = (was_ok, &g.health) {
                    hist.add_event(Event {
                        t,
                        kind: EventKind::GpuLost,
                        gpu: Some(g.index),
                        level: EventLevel::Error,
                        text: crate::msg!("GPU {gpu} lost: {why}", gpu = g.index, why = why),
                    });
                }
                record_gpu(&mut hist, t, g);
            }
        }
        // With no GPUs the host publish completes the tick; this one only wakes the reader when
        // the source just changed.
        let changed = previous.source != status || !Arc::ptr_eq(&previous.inventory, &inventory);
        let how = if !inventory.gpus.is_empty() {
            Publish::TICK
        } else if changed {
            Publish::WAKE
        } else {
            Publish::QUIET
        };
        let stall = self.stall();
        let remote = self.gpu.remote();
        self.publish(how, |s| {
            s.gpu_t = Some(t);
            s.gpus = samples;
            s.source = status;
            s.inventory = inventory;
            s.gpu_stall = stall;
            s.remote = remote;
        });
    }

    fn step_slow(&self, t: f64) {
        // One owner at a time: the watchdog's slot (and the source's record of the call in
        // flight) belong to the step that holds this; another one now would misdate a stall.
        let Ok(_owner) = self.slow_owner.try_lock() else { return };
        self.watches[1].begin(self.now_ms());
        let slow = self.gpu.sample_slow(t);
        let order = self.stall_order.lock();
        if let Some(ms) = self.watches[1].end(self.now_ms()) {
            self.answered_again(t, ms);
            let stall = self.stall();
            self.publish(Publish::WAKE, |s| s.gpu_stall = stall);
        }
        drop(order);
        self.record_job_cpu(t, &slow);
        self.slow.store(Arc::new(slow));
        self.record_busiest(t);
    }
}

/// Appends a host sample's metrics: every metric of the host table that is kept over time, and
/// each core's CPU.
fn record_host(h: &mut History, t: f64, s: &HostSample) {
    for d in HOST_METRICS {
        if let (Some(key), Some(v)) = (d.key, (d.read)(s)) {
            h.push(key, t, v);
        }
    }
    for (i, c) in s.per_core_pct.iter().take(MAX_CORES).enumerate() {
        h.push(&keys::core(i), t, *c);
    }
}

/// Appends a sample's metrics: every metric of the table a sample holds (the job's CPU comes from
/// the slow step's process trees, `record_job_cpu`). A throttle reason is a 0/1 series, whose mean
/// over a window is the share of time throttled.
fn record_gpu(h: &mut History, t: f64, g: &GpuSample) {
    for d in GPU_METRICS.iter().filter(|d| d.sampled != Sampled::Processes) {
        if let Some(v) = (d.read)(g) {
            h.push(&keys::gpu(g.index, d.key), t, v);
        }
    }
}

#[cfg(test)]
mod tests;
