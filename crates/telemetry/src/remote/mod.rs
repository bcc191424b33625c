//! A server's GPUs over SSH: the system OpenSSH client runs the server's `gpu-doctor-cli`
//! (`info --json` once, then `monitor --json` as a stream; `check --json` for the checklist), and
//! [`RemoteLink`] turns the stream into a [`GpuSource`] and a [`HostSource`], so the sampler,
//! history, charts, verdicts and recordings work as for this machine.
//!
//! - **No protocol or daemon of our own, no secrets:** `ssh -o BatchMode=yes` never prompts;
//!   keys, agents, `~/.ssh/config` aliases, jump hosts and known hosts are OpenSSH's business.
//!   A password or passphrase prompt becomes the message that says how to set up a key.
//! - **A hostile or broken server cannot hurt the app:** lines are capped at [`MAX_LINE`] and the
//!   stream at [`MAX_LINES_PER_SEC`]; a line that is not JSON, or holds fields of the wrong shape,
//!   is counted and skipped; the command's output ([`run_once`]) is capped in size and time.
//! - **Versions:** the stream's lines carry `schema` (docs/monitor-stream.md). An older server's
//!   lines (no `schema`) and a newer one's are read field by field; what cannot be read is named.
//! - **States:** connecting, live, "no data from host for N s" after [`STALE_AFTER`], retrying with
//!   backoff (1, 2, 4 … 30 s) after a dropped stream or an unreachable host, failed (no `ssh`,
//!   authentication, host key, `gpu-doctor-cli` missing: these wait for the user), closed.

use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;

use super::host::HostSource;
use super::reading::Reading;
use super::sample::{GpuSample, GpuSlowSample, HostSample, Inventory};
use super::source::{GpuSource, NoGpu, SourceStatus};
use crate::msg;

/// After this long without a line, the state says "no data from host".
pub const STALE_AFTER: Duration = Duration::from_secs(5);

pub mod info;
mod ssh;
mod stream;

pub use info::{RemoteInfo, RemoteState};
use ssh::read_capped;
pub use ssh::{
    MAX_OUTPUT, Output, RemoteError, RemoteErrorKind, SSH_ENV, SshSetup, Target, classify, run_once, spawn_error,
};
pub use stream::{MAX_GARBAGE, MAX_LINE, MAX_LINES_PER_SEC, STREAM_SCHEMA};
use stream::{Sink, StreamEnd, Tick, read_stream};

/// What `info --json` says about the server.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerInfo {
    /// Its gpu-doctor version.
    pub version: Option<String>,
    /// Its GPU source (NVML, or why there is none).
    pub source: Option<SourceStatus>,
    /// Its GPUs.
    pub inventory: Inventory,
    /// Fields that could not be read (a newer or older server).
    pub unread: Vec<crate::i18n::Message>,
}

/// Reads `info --json`, field by field.
pub fn parse_info(stdout: &[u8]) -> Option<ServerInfo> {
    let v: serde_json::Value = serde_json::from_slice(stdout).ok()?;
    let mut info = ServerInfo { version: v["app_version"].as_str().map(String::from), ..ServerInfo::default() };
    match serde_json::from_value::<SourceStatus>(v["source"].clone()) {
        Ok(s) => info.source = Some(s),
        Err(_) => info.unread.push("source".into()),
    }
    match serde_json::from_value::<Inventory>(v["inventory"].clone()) {
        Ok(mut i) => {
            if i.gpus.len() > crate::telemetry::sample::MAX_GPUS {
                info.unread.push(msg!(
                    "{n} GPUs past the first {max}",
                    n = i.gpus.len() - crate::telemetry::sample::MAX_GPUS,
                    max = crate::telemetry::sample::MAX_GPUS
                ));
                i.gpus.truncate(crate::telemetry::sample::MAX_GPUS);
            }
            info.inventory = i;
        }
        Err(_) => info.unread.push("inventory".into()),
    }
    Some(info)
}

/// One SSH connection to a server's `gpu-doctor-cli`, reconnecting by itself.
pub struct RemoteLink {
    target: Target,
    setup: SshSetup,
    state: Mutex<RemoteState>,
    sink: Sink,
    info: ArcSwap<ServerInfo>,
    inventory: ArcSwap<Inventory>,
    stop: AtomicBool,
    retry_now: AtomicBool,
    interval: Duration,
}

impl RemoteLink {
    /// Starts connecting to `target` on a new thread; the stream's interval is `interval`.
    pub fn start(target: Target, setup: SshSetup, interval: Duration) -> std::io::Result<Arc<RemoteLink>> {
        let link = Arc::new(RemoteLink {
            target,
            setup,
            state: Mutex::new(RemoteState::Connecting { attempt: 1 }),
            sink: Sink::default(),
            info: ArcSwap::from_pointee(ServerInfo::default()),
            inventory: ArcSwap::from_pointee(Inventory::default()),
            stop: AtomicBool::new(false),
            retry_now: AtomicBool::new(false),
            interval,
        });
        let l = Arc::clone(&link);
        std::thread::Builder::new().name("gd-remote".into()).spawn(move || l.manage())?;
        Ok(link)
    }

    /// The server.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// How it is reached.
    pub fn setup(&self) -> &SshSetup {
        &self.setup
    }

    /// Stops the stream and any retry (the ssh process is killed).
    pub fn disconnect(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.set_state(RemoteState::Closed);
    }

    /// Tries again now (after a failure that waited for the user, or during a backoff).
    pub fn reconnect(&self) {
        self.retry_now.store(true, Ordering::SeqCst);
    }

    fn set_state(&self, s: RemoteState) {
        if let Ok(mut st) = self.state.lock() {
            if *st == RemoteState::Closed && s != RemoteState::Closed {
                return;
            }
            *st = s;
        }
    }

    /// The link as shown.
    pub fn info(&self) -> RemoteInfo {
        let mut state = self.state.lock().map(|s| s.clone()).unwrap_or(RemoteState::Closed);
        if state == RemoteState::Live
            && let Some(t) = self.sink.latest.load().as_ref()
            && t.at.elapsed() >= STALE_AFTER
        {
            state = RemoteState::NoData { secs: t.at.elapsed().as_secs() };
        }
        let mut unread = self.info.load().unread.clone();
        unread.extend(self.sink.unread.lock().map(|u| u.clone()).unwrap_or_default());
        RemoteInfo {
            host: self.target.to_string(),
            state,
            version: self.info.load().version.clone(),
            invalid_lines: self.sink.invalid.load(Ordering::Relaxed),
            dropped_lines: self.sink.dropped.load(Ordering::Relaxed),
            unread,
        }
    }

    /// The GPU and host sources the sampler reads.
    pub fn sources(self: &Arc<Self>) -> (Arc<dyn GpuSource>, Box<dyn HostSource>) {
        (Arc::new(RemoteGpus(Arc::clone(self))), Box::new(RemoteHost(Arc::clone(self))))
    }

    /// Sleeps `d` in short steps; true when asked to stop or retry meanwhile.
    fn wait(&self, d: Duration) -> bool {
        let until = Instant::now() + d;
        while Instant::now() < until {
            if self.stop.load(Ordering::SeqCst) || self.retry_now.swap(false, Ordering::SeqCst) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }

    fn manage(&self) {
        let mut attempt: u32 = 1;
        let mut backoff = Duration::from_secs(1);
        while !self.stop.load(Ordering::SeqCst) {
            self.set_state(RemoteState::Connecting { attempt });
            let result = self.connect_once();
            if self.stop.load(Ordering::SeqCst) {
                break;
            }
            let (error, had_data) = match result {
                Ok(had_data) => (None, had_data),
                Err((e, had_data)) => (Some(e), had_data),
            };
            if had_data {
                backoff = Duration::from_secs(1);
                attempt = 1;
            }
            let error = error.unwrap_or_else(|| classify(&self.target, Some(0), "", true));
            if error.kind.needs_user() {
                self.set_state(RemoteState::Failed { error });
                // Waits for "Reconnect" (or disconnect).
                while !self.wait(Duration::from_secs(3600)) {}
                attempt = 1;
                backoff = Duration::from_secs(1);
                continue;
            }
            self.set_state(RemoteState::Retrying { in_secs: backoff.as_secs(), error });
            self.wait(backoff);
            attempt += 1;
            backoff = (backoff * 2).min(Duration::from_secs(30));
        }
        self.set_state(RemoteState::Closed);
    }

    /// One connection: the inventory, then the stream until it ends. `Ok(true)`: data flowed and
    /// the stream ended; the error says why it ended (and whether data had flowed).
    fn connect_once(&self) -> Result<bool, (RemoteError, bool)> {
        let out = run_once(&self.setup, &self.target, &["info", "--json"], Duration::from_secs(30))
            .map_err(|e| (e, false))?;
        let Some(info) = parse_info(&out.stdout) else {
            let mut e = classify(&self.target, out.code, &out.stderr, false);
            if e.kind == RemoteErrorKind::Other && out.code.is_some_and(|c| c == 0 || c == 3) {
                e = RemoteError::new(
                    RemoteErrorKind::VersionSkew,
                    msg!(
                        "The gpu-doctor-cli on {host} answered info --json with something this version cannot read.",
                        host = self.target
                    ),
                    msg!("Install the same gpu-doctor version on both machines."),
                );
            }
            return Err((e, false));
        };
        self.inventory.store(Arc::new(info.inventory.clone()));
        self.info.store(Arc::new(info));
        let interval = super::interval::Interval::clamped(self.interval.as_secs_f64()).to_string();
        let mut child: Child = self
            .setup
            .command(&self.target, &["monitor", "--json", "--interval", &interval])
            .map_err(|e| (e, false))?
            .spawn()
            .map_err(|e| (spawn_error(&self.setup, &e), false))?;
        let err = child.stderr.take().map(|e| std::thread::spawn(move || read_capped(e, 64 << 10)));
        let got = Arc::new(AtomicBool::new(false));
        let reader = child.stdout.take().map(|o| {
            let (sink, got) = (self.sink.clone(), Arc::clone(&got));
            std::thread::spawn(move || read_stream(o, &sink, &got))
        });
        let mut live = false;
        loop {
            if !live && got.load(Ordering::Relaxed) {
                live = true;
                self.set_state(RemoteState::Live);
            }
            let gave_up = reader.as_ref().is_some_and(std::thread::JoinHandle::is_finished);
            if self.stop.load(Ordering::SeqCst) || self.retry_now.swap(false, Ordering::SeqCst) || gave_up {
                let _ = child.kill();
            }
            match child.try_wait() {
                Ok(Some(_)) | Err(_) => break,
                Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
        let status = child.wait().ok();
        let end = reader.and_then(|h| h.join().ok());
        let stderr = String::from_utf8_lossy(&err.and_then(|h| h.join().ok()).unwrap_or_default()).into_owned();
        let had = got.load(Ordering::Relaxed);
        if end == Some(StreamEnd::Garbage) {
            let e = RemoteError::new(
                RemoteErrorKind::VersionSkew,
                msg!(
                    "{host} sent data that is not gpu-doctor's stream ({n} unreadable lines); the connection was closed.",
                    host = self.target,
                    n = self.sink.invalid.load(Ordering::Relaxed)
                ),
                msg!(
                    "Check that the gpu-doctor-cli found first on the server's PATH is gpu-doctor's, and that no login script prints to the session."
                ),
            );
            return Err((e, had));
        }
        Err((classify(&self.target, status.and_then(|s| s.code()), &stderr, had), had))
    }
}

struct RemoteGpus(Arc<RemoteLink>);

impl RemoteGpus {
    /// The latest line, while it is fresh.
    fn fresh(&self) -> Option<Arc<Tick>> {
        self.0.sink.latest.load_full().filter(|t| t.at.elapsed() < STALE_AFTER)
    }
}

impl GpuSource for RemoteGpus {
    fn status(&self) -> SourceStatus {
        match (&self.0.info.load().source, self.0.info()) {
            (Some(s), RemoteInfo { state: RemoteState::Live | RemoteState::NoData { .. }, .. }) => s.clone(),
            (_, info) => match info.state {
                RemoteState::Failed { error } | RemoteState::Retrying { error, .. } => {
                    SourceStatus::Unavailable(NoGpu {
                        summary: error.message,
                        next_step: error.next_step,
                        attempts: Vec::new(),
                        failure: None,
                    })
                }
                _ => self.0.info.load().source.clone().unwrap_or(SourceStatus::Opening),
            },
        }
    }
    fn inventory(&self) -> Arc<Inventory> {
        self.0.inventory.load_full()
    }
    fn sample(&self, _t: f64) -> Vec<GpuSample> {
        match self.fresh() {
            Some(t) => t.gpus.clone(),
            None => {
                let why = msg!("no data from {host}", host = self.0.target);
                self.0
                    .inventory
                    .load()
                    .gpus
                    .iter()
                    .map(|g| GpuSample::unavailable(g.index, super::sample::GpuHealth::Ok, why.clone()))
                    .collect()
            }
        }
    }
    fn sample_slow(&self, _t: f64) -> Vec<GpuSlowSample> {
        self.fresh()
            .map(|t| {
                t.gpus
                    .iter()
                    .map(|g| GpuSlowSample {
                        index: g.index,
                        pcie_rx_bps: g.pcie_rx_bps.clone(),
                        pcie_tx_bps: g.pcie_tx_bps.clone(),
                        processes: g.processes.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
    fn remote(&self) -> Option<RemoteInfo> {
        Some(self.0.info())
    }
}

struct RemoteHost(Arc<RemoteLink>);

impl HostSource for RemoteHost {
    fn sample(&mut self, _t: f64) -> HostSample {
        let fresh = self.0.sink.latest.load_full().filter(|t| t.at.elapsed() < STALE_AFTER);
        match fresh.and_then(|t| t.host.clone()) {
            Some(h) => h,
            None => {
                let why = msg!("no data from {host}", host = self.0.target);
                HostSample {
                    cpu_pct: Reading::na(why.clone()),
                    per_core_pct: Vec::new(),
                    iowait_pct: Reading::na(why.clone()),
                    load_avg: Reading::na(why.clone()),
                    memory: Reading::na(why.clone()),
                    disks: Reading::na(why.clone()),
                    pressure: Reading::na(why.clone()),
                    net_rx_bps: Reading::na(why.clone()),
                    net_tx_bps: Reading::na(why),
                }
            }
        }
    }
}
