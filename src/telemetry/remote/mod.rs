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

use std::io::{BufRead, BufReader, Read};
use std::process::Child;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arc_swap::{ArcSwap, ArcSwapOption};
use serde::{Deserialize, Serialize};

use super::host::HostSource;
use super::reading::Reading;
use super::sample::{GpuSample, GpuSlowSample, HostSample, Inventory};
use super::source::{GpuSource, NoGpu, SourceStatus};
use crate::tr;

/// The `schema` of `monitor --json` lines this build writes and reads best.
pub const STREAM_SCHEMA: u32 = 1;
/// The longest line read from the stream; a longer one is skipped and counted.
pub const MAX_LINE: usize = 1 << 20;
/// Lines read per second at most; more are dropped and counted.
pub const MAX_LINES_PER_SEC: u32 = 20;
/// After this long without a line, the state says "no data from host".
pub const STALE_AFTER: Duration = Duration::from_secs(5);
/// The largest output read from one command (`info --json`, `check --json`).
pub const MAX_OUTPUT: usize = 16 << 20;
/// Environment variable naming the ssh program (default `ssh` on the PATH).
pub const SSH_ENV: &str = "GPU_DOCTOR_SSH";

mod ssh;

use ssh::read_capped;
pub use ssh::{Output, RemoteError, RemoteErrorKind, SshSetup, Target, classify, run_once, spawn_error};

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
    pub unread: Vec<String>,
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
                info.unread.push(tr!(
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

/// The link's state, as shown with the host name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "state")]
pub enum RemoteState {
    /// Connecting (attempt 1, 2, ...).
    Connecting {
        /// Which attempt.
        attempt: u32,
    },
    /// Lines arrive.
    Live,
    /// Connected, but nothing arrived for this long.
    NoData {
        /// Seconds since the last line.
        secs: u64,
    },
    /// Waiting before the next attempt.
    Retrying {
        /// Seconds until it.
        in_secs: u64,
        /// Why the last one ended.
        error: RemoteError,
    },
    /// Stopped until the user acts.
    Failed {
        /// Why.
        error: RemoteError,
    },
    /// Disconnected by the user.
    Closed,
}

/// The server a snapshot's data comes from, shown as REMOTE with its name everywhere.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteInfo {
    /// The server as typed (`user@host:port`).
    pub host: String,
    /// The link's state.
    pub state: RemoteState,
    /// The server's gpu-doctor version, once known.
    #[serde(default)]
    pub version: Option<String>,
    /// Lines that were not valid JSON (or too long), skipped.
    #[serde(default)]
    pub invalid_lines: u64,
    /// Lines dropped because the server sent more than [`MAX_LINES_PER_SEC`].
    #[serde(default)]
    pub dropped_lines: u64,
    /// What could not be read from the server's newer or older output.
    #[serde(default)]
    pub unread: Vec<String>,
}

impl RemoteInfo {
    /// "REMOTE gpu1: live", "REMOTE gpu1: no data from host for 7 s", ...
    pub fn line(&self) -> String {
        let state = match &self.state {
            RemoteState::Connecting { attempt: 1 } => tr!("connecting…").to_string(),
            RemoteState::Connecting { attempt } => tr!("connecting (attempt {n})…", n = attempt),
            RemoteState::Live => tr!("live").to_string(),
            RemoteState::NoData { secs } => tr!("no data from host for {secs} s", secs = secs),
            RemoteState::Retrying { in_secs, error } => {
                tr!("{why} Retrying in {secs} s.", why = error.message, secs = in_secs)
            }
            RemoteState::Failed { error } => error.message.clone(),
            RemoteState::Closed => tr!("disconnected").to_string(),
        };
        let line = tr!("REMOTE {host}: {state}", host = self.host, state = state);
        if self.invalid_lines > 0 {
            tr!("{line} ({n} unreadable lines skipped)", line = line, n = self.invalid_lines)
        } else {
            line
        }
    }
}

/// The latest line's contents.
#[derive(Clone, Debug)]
struct Tick {
    at: Instant,
    host: Option<HostSample>,
    gpus: Vec<GpuSample>,
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
                    tr!(
                        "The gpu-doctor-cli on {host} answered info --json with something this version cannot read.",
                        host = self.target
                    ),
                    tr!("Install the same gpu-doctor version on both machines."),
                );
            }
            return Err((e, false));
        };
        self.inventory.store(Arc::new(info.inventory.clone()));
        self.info.store(Arc::new(info));
        let interval = format!("{}", self.interval.as_secs_f64().clamp(0.25, 10.0));
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
                tr!(
                    "{host} sent data that is not gpu-doctor's stream ({n} unreadable lines); the connection was closed.",
                    host = self.target,
                    n = self.sink.invalid.load(Ordering::Relaxed)
                ),
                tr!(
                    "Check that the gpu-doctor-cli found first on the server's PATH is gpu-doctor's, and that no login script prints to the session."
                ),
            );
            return Err((e, had));
        }
        Err((classify(&self.target, status.and_then(|s| s.code()), &stderr, had), had))
    }
}

/// Where the stream reader leaves what it read.
#[derive(Clone, Default)]
struct Sink {
    latest: Arc<ArcSwapOption<Tick>>,
    invalid: Arc<AtomicU64>,
    dropped: Arc<AtomicU64>,
    unread: Arc<Mutex<Vec<String>>>,
}

/// How much that is not a line of the stream (too long, not JSON) a server may send in a row
/// before the connection is given up as not gpu-doctor's stream.
pub const MAX_GARBAGE: usize = 16 * MAX_LINE;

/// How a stream ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StreamEnd {
    /// The server closed it (or reading failed).
    Closed,
    /// More than [`MAX_GARBAGE`] bytes in a row were not stream lines.
    Garbage,
}

/// Reads `monitor --json` lines: bounded in length and rate, each parsed field by field. Gives
/// up after [`MAX_GARBAGE`] bytes in a row that are not stream lines (endless data without a
/// line end, or no JSON at all): the connection is then closed and the failure shown, never a
/// "connecting…" that lasts forever.
fn read_stream(out: impl Read, sink: &Sink, got: &AtomicBool) -> StreamEnd {
    let mut r = BufReader::new(out);
    let mut line = Vec::new();
    let mut second = Instant::now();
    let mut in_second = 0u32;
    let mut garbage = 0usize;
    loop {
        if garbage > MAX_GARBAGE {
            return StreamEnd::Garbage;
        }
        line.clear();
        let n = match (&mut r).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return StreamEnd::Closed,
            Ok(n) => n,
        };
        if n > MAX_LINE && !line.ends_with(b"\n") {
            // Too long: count it and skip to the end of the line.
            sink.invalid.fetch_add(1, Ordering::Relaxed);
            garbage += n;
            let mut rest = Vec::new();
            loop {
                if garbage > MAX_GARBAGE {
                    return StreamEnd::Garbage;
                }
                rest.clear();
                match (&mut r).take(MAX_LINE as u64).read_until(b'\n', &mut rest) {
                    Ok(0) | Err(_) => return StreamEnd::Closed,
                    Ok(_) if rest.ends_with(b"\n") => break,
                    Ok(k) => garbage += k,
                }
            }
            continue;
        }
        if second.elapsed() >= Duration::from_secs(1) {
            second = Instant::now();
            in_second = 0;
        }
        in_second += 1;
        if in_second > MAX_LINES_PER_SEC {
            sink.dropped.fetch_add(1, Ordering::Relaxed);
            // (A real stream's lines between these reset the count: only a flood of nothing
            // readable adds up.)
            garbage += n;
            continue;
        }
        match parse_line(&line) {
            Some((tick, unread)) => {
                garbage = 0;
                got.store(true, Ordering::Relaxed);
                sink.latest.store(Some(Arc::new(tick)));
                if let Ok(mut u) = sink.unread.lock() {
                    *u = unread;
                }
            }
            None => {
                sink.invalid.fetch_add(1, Ordering::Relaxed);
                garbage += n;
            }
        }
    }
}

/// One stream line, field by field: `None` when it is not a JSON object; the fields that could
/// not be read are named.
fn parse_line(line: &[u8]) -> Option<(Tick, Vec<String>)> {
    let v: serde_json::Value = serde_json::from_slice(line).ok()?;
    let obj = v.as_object()?;
    let mut unread = Vec::new();
    match obj.get("schema").and_then(serde_json::Value::as_u64) {
        None => unread.push(tr!("an older gpu-doctor-cli (its lines carry no schema)").to_string()),
        Some(s) if s > u64::from(STREAM_SCHEMA) => unread.push(tr!(
            "a newer gpu-doctor-cli (stream schema {found}, this app reads {ours})",
            found = s,
            ours = STREAM_SCHEMA
        )),
        Some(_) => {}
    }
    let host = match obj.get("host") {
        None | Some(serde_json::Value::Null) => None,
        Some(h) => match serde_json::from_value::<HostSample>(h.clone()) {
            Ok(mut h) => {
                h.per_core_pct.truncate(crate::telemetry::sample::MAX_CORES);
                Some(h)
            }
            Err(_) => {
                unread.push("host".into());
                None
            }
        },
    };
    let mut gpus = Vec::new();
    let listed = obj.get("gpus").and_then(serde_json::Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    if listed.len() > crate::telemetry::sample::MAX_GPUS {
        unread.push(tr!(
            "{n} GPUs past the first {max}",
            n = listed.len() - crate::telemetry::sample::MAX_GPUS,
            max = crate::telemetry::sample::MAX_GPUS
        ));
    }
    for (i, g) in listed.iter().take(crate::telemetry::sample::MAX_GPUS).enumerate() {
        match serde_json::from_value::<GpuSample>(g.clone()) {
            Ok(g) => gpus.push(g),
            Err(_) => unread.push(format!("gpus[{i}]")),
        }
    }
    Some((Tick { at: Instant::now(), host, gpus }, unread))
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
                let why = tr!("no data from {host}", host = self.0.target);
                self.0
                    .inventory
                    .load()
                    .gpus
                    .iter()
                    .map(|g| GpuSample::unavailable(g.index, super::sample::GpuHealth::Ok, &why))
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
                let why = tr!("no data from {host}", host = self.0.target);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_lines_are_read_field_by_field_and_bad_ones_are_counted() {
        let sink = Sink::default();
        let long = "x".repeat(MAX_LINE + 10);
        let text = format!(
            "not json\n{long}\n[1,2]\n{{\"schema\":99,\"host\":{{\"cpu_pct\":\"wrong\"}},\"gpus\":[{{\"index\":\"zero\"}}]}}\n"
        );
        let got = AtomicBool::new(false);
        read_stream(text.as_bytes(), &sink, &got);
        assert_eq!(sink.invalid.load(Ordering::Relaxed), 3, "not JSON, too long, not an object");
        assert!(got.load(Ordering::Relaxed));
        let unread = sink.unread.lock().map(|u| u.clone()).unwrap_or_default();
        assert!(unread.iter().any(|u| u.contains("schema 99")) && unread.contains(&"host".to_string()), "{unread:?}");
        assert!(unread.contains(&"gpus[0]".to_string()), "{unread:?}");
        // A flood is capped per second.
        let flood: String = (0..200).map(|_| "{\"schema\":1}\n").collect();
        read_stream(flood.as_bytes(), &sink, &got);
        assert!(sink.dropped.load(Ordering::Relaxed) >= 150, "{}", sink.dropped.load(Ordering::Relaxed));
    }

    /// Issue 33, item 6: endless data without a line end (1 MiB chunks forever) ends the
    /// connection as "not gpu-doctor's stream" after MAX_GARBAGE bytes, with the count shown,
    /// rather than "connecting…" forever; a line naming 1 300 GPUs keeps MAX_GPUS of them.
    #[test]
    fn a_hostile_stream_is_given_up_and_bounded() {
        struct Endless(usize);
        impl Read for Endless {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.0 += buf.len();
                assert!(self.0 < 64 * MAX_GARBAGE, "the reader never gave up");
                buf.fill(b'x');
                Ok(buf.len())
            }
        }
        let sink = Sink::default();
        let got = AtomicBool::new(false);
        assert_eq!(read_stream(Endless(0), &sink, &got), StreamEnd::Garbage);
        assert!(!got.load(Ordering::Relaxed));
        let info = RemoteInfo {
            host: "gpu1".into(),
            state: RemoteState::Connecting { attempt: 1 },
            version: None,
            invalid_lines: sink.invalid.load(Ordering::Relaxed),
            dropped_lines: 0,
            unread: Vec::new(),
        };
        assert!(info.invalid_lines >= 1 && info.line().contains("unreadable lines skipped"), "{}", info.line());
        // Lines of JSON that is not the stream, forever, are given up too.
        let junk: String = (0..60_000).map(|_| format!("[{}]\n", "1,".repeat(200) + "1")).collect();
        assert_eq!(read_stream(junk.as_bytes(), &Sink::default(), &got), StreamEnd::Garbage);
        let gpus: Vec<String> = (0..1300).map(|i| format!("{{\"index\":{i}}}")).collect();
        let line = format!("{{\"schema\":1,\"gpus\":[{}]}}", gpus.join(","));
        let (tick, unread) = parse_line(line.as_bytes()).unwrap_or_else(|| panic!("parsed"));
        assert!(tick.gpus.len() <= crate::telemetry::sample::MAX_GPUS);
        assert!(unread.iter().any(|u| u.contains("past the first 64")), "{unread:?}");
    }

    mod fuzz {
        use super::*;
        use proptest::prelude::*;

        /// One line a server (or something in its place) might send.
        fn line() -> impl Strategy<Value = Vec<u8>> {
            prop_oneof![
                // Stream lines with fields of any shape.
                (any::<u8>(), 0usize..200, "[ -~]{0,30}", any::<f64>()).prop_map(|(schema, gpus, name, x)| {
                    let g: Vec<String> = (0..gpus)
                        .map(|i| format!("{{\"index\":{i},\"util_gpu_pct\":{x:?},\"name\":{name:?}}}"))
                        .collect();
                    format!(
                        "{{\"schema\":{schema},\"host\":{{\"cpu_pct\":{x:?},\"per_core_pct\":[1,2]}},\"gpus\":[{}]}}\n",
                        g.join(",")
                    )
                    .into_bytes()
                }),
                // Any JSON-ish text, any bytes, an endless-looking line.
                "[ -~]{0,200}\n".prop_map(String::into_bytes),
                proptest::collection::vec(any::<u8>(), 0..400),
                (1usize..3).prop_map(|k| vec![b'{'; k * MAX_LINE / 2]),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

            /// Issue 33: the SSH stream reader on anything: it returns, never panics, and what
            /// it keeps is within its caps.
            #[test]
            fn the_stream_reader_takes_anything(lines in proptest::collection::vec(line(), 0..40)) {
                let bytes: Vec<u8> = lines.concat();
                let sink = Sink::default();
                let got = AtomicBool::new(false);
                let _ = read_stream(bytes.as_slice(), &sink, &got);
                if let Some(t) = sink.latest.load_full() {
                    prop_assert!(t.gpus.len() <= crate::telemetry::sample::MAX_GPUS);
                    prop_assert!(t.host.as_ref().is_none_or(|h| h.per_core_pct.len() <= crate::telemetry::sample::MAX_CORES));
                }
                for l in &lines {
                    let _ = parse_line(l);
                }
            }
        }
    }
}
