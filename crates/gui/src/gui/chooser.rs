//! Choosing a file: the desktop's own dialog (rfd: the xdg-desktop-portal or zenity on Linux,
//! the system dialog on Windows and macOS) on a helper thread, or, where the desktop has none
//! (minimal and server installs, X forwarding), gpu-doctor's own chooser drawn in the window
//! ([`in_window`]).
//! A desktop dialog that answers "cancelled" at once, faster than a person can, did not open:
//! the in-window chooser takes over. Which one is used is said in its title and in the status.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

use eframe::egui;

use crate::tr;

/// The environment variable that chooses the chooser: `window` (always the in-window one) or
/// `system` (always the desktop's).
pub const CHOOSER_ENV: &str = "GPU_DOCTOR_FILE_CHOOSER";

/// A desktop dialog that returns "cancelled" sooner than this never showed itself.
const NOT_SHOWN: Duration = Duration::from_millis(250);

/// Set when the in-window chooser is always used (the setting, or a test).
static ALWAYS_IN_WINDOW: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Always use the chooser drawn in the window, whatever the desktop offers.
pub fn always_in_window(on: bool) {
    ALWAYS_IN_WINDOW.store(on, Ordering::Relaxed);
}

/// The window's memory of the pass an in-window chooser was last drawn in (Escape and the
/// keyboard go to it, not to the dialog behind). Kept per window, not per process.
const OPEN_KEY: &str = "gd_in_window_chooser_pass";

/// Notes that an in-window chooser is drawn in this pass of `ctx`'s window.
fn mark_open(ctx: &egui::Context) {
    let pass = ctx.cumulative_pass_nr();
    ctx.data_mut(|d| d.insert_temp(egui::Id::unique(OPEN_KEY), pass));
}

/// True while a chooser drawn in `ctx`'s window is open (drawn in this pass or the one before).
pub fn in_window_open(ctx: &egui::Context) -> bool {
    let pass = ctx.cumulative_pass_nr();
    ctx.data(|d| d.get_temp::<u64>(egui::Id::unique(OPEN_KEY))).is_some_and(|n| n + 1 >= pass)
}

/// What is chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Want {
    /// An existing file, of this kind (label, extension) when given.
    File(Option<(&'static str, &'static str)>),
    /// A folder.
    Folder,
    /// A new file: its proposed name and a filter (label, extension).
    Save(String, (&'static str, &'static str)),
}

mod in_window;

enum Inner {
    Desktop(Receiver<Option<PathBuf>>, Instant),
    /// Its title, and the chooser once drawn (it starts reading the folder on its first frame).
    Window(String, Option<Box<in_window::InWindow>>),
}

/// A file choice in progress.
pub struct Chooser {
    want: Want,
    dir: PathBuf,
    inner: Inner,
}

/// Why this desktop has no file dialog to use, if it has none: on Linux, neither a D-Bus session
/// (for the xdg-desktop-portal) nor zenity; the environment variable decides first.
pub fn no_desktop_dialog() -> Option<String> {
    if ALWAYS_IN_WINDOW.load(Ordering::Relaxed) {
        return Some(tr!("chosen in the settings").to_string());
    }
    match std::env::var(CHOOSER_ENV).as_deref() {
        Ok("window") => return Some(tr!("{var}=window", var = CHOOSER_ENV).to_string()),
        Ok("system") => return None,
        _ => {}
    }
    if !cfg!(target_os = "linux") {
        return None;
    }
    let bus = std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some_and(|v| !v.is_empty());
    let zenity =
        std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("zenity").is_file()));
    (!bus && !zenity).then(|| tr!("no xdg-desktop-portal or zenity here").to_string())
}

impl Chooser {
    /// Starts choosing `want`, in `dir`.
    pub fn start(want: Want, dir: PathBuf) -> Chooser {
        match no_desktop_dialog() {
            Some(why) => Chooser::in_window(want, dir, why),
            None => {
                let rx = desktop(&want, &dir);
                Chooser { want, dir, inner: Inner::Desktop(rx, Instant::now()) }
            }
        }
    }

    fn in_window(want: Want, dir: PathBuf, why: String) -> Chooser {
        let title = match &want {
            Want::File(_) => tr!("Open a file (gpu-doctor's own chooser: {why})", why = why),
            Want::Folder => tr!("Open a folder (gpu-doctor's own chooser: {why})", why = why),
            Want::Save(..) => tr!("Save as (gpu-doctor's own chooser: {why})", why = why),
        }
        .to_string();
        Chooser { want, dir, inner: Inner::Window(title, None) }
    }

    /// Some(Some(path)) chosen, Some(None) cancelled, None still open; draws the in-window
    /// chooser.
    pub fn poll(&mut self, ctx: &egui::Context) -> Option<Option<PathBuf>> {
        match &mut self.inner {
            Inner::Desktop(rx, started) => match rx.try_recv() {
                // Nothing was shown: the desktop has no working dialog (handled below).
                Ok(None) if started.elapsed() < NOT_SHOWN => {}
                Ok(answer) => return Some(answer),
                Err(TryRecvError::Empty) => {
                    ctx.request_repaint_after(Duration::from_millis(100));
                    return None;
                }
                Err(TryRecvError::Disconnected) => return Some(None),
            },
            Inner::Window(title, w) => {
                mark_open(ctx);
                let w = w.get_or_insert_with(|| {
                    Box::new(in_window::InWindow::new(ctx, self.want.clone(), self.dir.clone(), title.clone()))
                });
                return match w.show(ctx) {
                    in_window::State::Open => None,
                    in_window::State::Chosen(p) => Some(Some(p)),
                    in_window::State::Cancelled => Some(None),
                };
            }
        }
        let why = tr!("the desktop's file dialog did not open").to_string();
        *self = Chooser::in_window(self.want.clone(), self.dir.clone(), why);
        ctx.request_repaint();
        None
    }
}

/// Polls the chooser in `slot`, emptying it once answered.
pub fn poll(ctx: &egui::Context, slot: &mut Option<Chooser>) -> Option<Option<PathBuf>> {
    let answer = slot.as_mut()?.poll(ctx);
    if answer.is_some() {
        *slot = None;
    }
    answer
}

/// The desktop's dialog on a helper thread (it blocks); the answer arrives on the channel.
fn desktop(want: &Want, dir: &std::path::Path) -> Receiver<Option<PathBuf>> {
    let (tx, rx) = std::sync::mpsc::channel();
    let want = want.clone();
    let dir = dir.to_path_buf();
    let spawned = std::thread::Builder::new().name("gd-file-dialog".into()).spawn(move || {
        let d = rfd::FileDialog::new().set_directory(dir);
        let picked = match want {
            Want::File(None) => d.pick_file(),
            Want::File(Some((label, ext))) => d.add_filter(label, &[ext]).pick_file(),
            Want::Folder => d.pick_folder(),
            Want::Save(name, (label, ext)) => d.set_file_name(name).add_filter(label, &[ext]).save_file(),
        };
        let _ = tx.send(picked);
    });
    // (No thread: the receiver reports a closed channel, read as "cancelled".)
    drop(spawned);
    rx
}
