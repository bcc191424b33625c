//! `--screenshot PATH`: render a few frames once data is there, save the window as PNG, exit.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use eframe::egui;

/// Longest wait for the first data before the screenshot is taken anyway.
const DATA_WAIT: Duration = Duration::from_secs(5);

/// State of a pending screenshot.
pub struct ScreenshotPlan {
    path: PathBuf,
    frames_wanted: u32,
    frames_seen: u32,
    /// The window's size at the last frame: frames are counted from the last change, so the
    /// picture shows a settled layout (a window manager, or none, may resize it after it opens).
    size: egui::Vec2,
    requested: bool,
    created: Instant,
    done: Arc<AtomicBool>,
    failure: Arc<Mutex<Option<String>>>,
}

impl ScreenshotPlan {
    /// A plan to save `path` after `frames` frames; a failure message is left in `failure`.
    pub fn new(path: PathBuf, frames: u32, failure: Arc<Mutex<Option<String>>>) -> Self {
        ScreenshotPlan {
            path,
            frames_wanted: frames.max(1),
            frames_seen: 0,
            size: egui::Vec2::ZERO,
            requested: false,
            created: Instant::now(),
            done: Arc::new(AtomicBool::new(false)),
            failure,
        }
    }

    /// Called once per frame, after the UI was drawn.
    pub fn on_frame(&mut self, ctx: &egui::Context, has_data: bool) {
        if self.done.load(Ordering::Relaxed) {
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            return;
        }
        ctx.request_repaint();
        if self.requested || !(has_data || self.created.elapsed() > DATA_WAIT) {
            return;
        }
        let size = ctx.content_rect().size();
        if size != self.size {
            self.size = size;
            self.frames_seen = 0;
        }
        self.frames_seen += 1;
        if self.frames_seen < self.frames_wanted {
            return;
        }
        self.requested = true;
        // Never overwrite or write through a link: an existing name gets -2, -3...
        let path = super::share::new_path_like(&self.path);
        let done = Arc::clone(&self.done);
        let failure = Arc::clone(&self.failure);
        let ctx2 = ctx.clone();
        ctx.request_screenshot(move |image: Arc<egui::ColorImage>| {
            let [w, h] = image.size;
            let saved = super::share::png_bytes(&image)
                .and_then(|png| super::share::write_new(&path, &png).map_err(|e| e.to_string()));
            match saved {
                Ok(()) => eprintln!(
                    "gpu-doctor: {}",
                    crate::tr!("saved screenshot {size} to {path}", size = format!("{w}x{h}"), path = path.display())
                ),
                Err(e) => {
                    if let Ok(mut f) = failure.lock() {
                        *f = Some(crate::tr!(
                            "could not save the screenshot to {path}: {error}",
                            path = path.display(),
                            error = e
                        ));
                    }
                }
            }
            done.store(true, Ordering::Relaxed);
            ctx2.send_viewport_cmd(egui::ViewportCommand::Close);
            ctx2.request_repaint();
        });
    }
}
