//! Opening a recording for replay. The file is read on a helper thread, one sample at a time, into
//! the sampler's bounded history and an index ([`ReplayFile`]); the window stays live meanwhile
//! and says how far the read got, so a recording of many hours or a gigabyte never freezes it.

use crate::i18n::Here as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};

use eframe::egui;

use super::DoctorApp;
use crate::gui::Tab;
use crate::gui::monitor::{MonitorState, TimeWindow};
use crate::telemetry::recording::RecordingError;
use crate::telemetry::sampler::{ReplayFile, Sampler};
use crate::telemetry::snapshot::Snapshot;
use crate::tr;

type Opened = Result<(Sampler, ReplayFile), RecordingError>;

/// A recording being read.
pub(super) struct Opening {
    path: PathBuf,
    done: Receiver<Opened>,
    /// Bytes read so far, and the file's size.
    read: Arc<(AtomicU64, AtomicU64)>,
}

/// The replay's snapshot at time `at`: the last host and GPU samples at or before it.
pub(super) fn replay_snapshot(base: &Snapshot, file: &ReplayFile, at: f64) -> Snapshot {
    let (host, gpu) = file.at(at);
    let mut s = base.clone();
    if let Some(r) = host {
        s.host_t = Some(r.t);
        s.host = r.host;
    }
    if let Some(r) = gpu {
        s.gpu_t = Some(r.t);
        s.gpus = r.gpus;
    }
    s
}

impl DoctorApp {
    /// Starts reading a recording to show in the Monitor, labelled REPLAY, with a time slider.
    pub fn open_replay(&mut self, ctx: &egui::Context, path: &Path) {
        let (tx, rx) = std::sync::mpsc::channel();
        let read = Arc::new((AtomicU64::new(0), AtomicU64::new(0)));
        let (p, r, c) = (path.to_path_buf(), Arc::clone(&read), ctx.clone());
        let spawned = std::thread::Builder::new().name("gd-replay-open".into()).spawn(move || {
            let opened = ReplayFile::open(&p, |n, size| {
                r.0.store(n, Ordering::Relaxed);
                r.1.store(size, Ordering::Relaxed);
                c.request_repaint();
            });
            let _ = tx.send(opened);
            c.request_repaint();
        });
        match spawned {
            Ok(_) => self.replay_opening = Some(Opening { path: path.to_path_buf(), done: rx, read }),
            // No thread to spare: read it here.
            Err(_) => {
                let opened = ReplayFile::open(path, |_, _| {});
                self.install_replay(ctx, path, opened);
            }
        }
    }

    /// A recording is still being read (a screenshot waits for it).
    pub fn replay_opening(&self) -> bool {
        self.replay_opening.is_some()
    }

    /// Takes the recording once it is read; until then, says how far the read got.
    pub(super) fn poll_replay(&mut self, ctx: &egui::Context) {
        let Some(opening) = &self.replay_opening else { return };
        match opening.done.try_recv() {
            Ok(opened) => {
                let path = opening.path.clone();
                self.replay_opening = None;
                self.install_replay(ctx, &path, opened);
            }
            Err(TryRecvError::Empty) => {
                let (n, size) = (opening.read.0.load(Ordering::Relaxed), opening.read.1.load(Ordering::Relaxed));
                let pct = if size > 0 { format!(" {:.0} %", 100.0 * n as f64 / size as f64) } else { String::new() };
                self.set_info(tr!("Opening {path}…{pct}", path = opening.path.display(), pct = pct));
            }
            Err(TryRecvError::Disconnected) => {
                self.replay_opening = None;
                self.message = Some(tr!("Could not open the recording: the reading thread stopped.").to_string());
            }
        }
    }

    fn install_replay(&mut self, ctx: &egui::Context, path: &Path, opened: Opened) {
        let (sampler, file) = match opened {
            Ok(o) => o,
            Err(e) => {
                if let Ok(mut i) = self.info.lock() {
                    *i = None;
                }
                self.message = Some(tr!("Could not open the recording: {error}", error = e.here()));
                return;
            }
        };
        let _ = self.sampler.stop_recording();
        self.sampler = sampler;
        let c = ctx.clone();
        let p = Arc::clone(&self.pacer);
        self.sampler.set_notify(move |snap| p.wake(&c, snap));
        self.monitor = MonitorState { units: self.settings.units, ..MonitorState::default() };
        let span = file.span();
        if let Some((a, b)) = span {
            // Show the whole recording when it is short, else its last window; the slider moves it.
            if let Some(w) = TimeWindow::ALL.into_iter().find(|w| w.secs() >= b - a) {
                self.monitor.window = w;
            }
            self.monitor.paused_at = Some(b);
        }
        let skipped = file.skipped_lines;
        self.replay = Some(Arc::new(file));
        self.replay_span = span;
        self.tab = Tab::Monitor;
        self.set_info(if skipped > 0 {
            tr!("Opened {path} ({skipped} unreadable line(s) skipped).", path = path.display(), skipped = skipped)
        } else {
            tr!("Opened {path}.", path = path.display())
        });
        ctx.request_repaint();
    }
}
