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
    /// The size asked for (`--size`), in points: a smaller picture says why.
    wanted: Option<[f32; 2]>,
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
            wanted: None,
        }
    }

    /// The same plan, told the window size that was asked for.
    pub fn wanting(mut self, size: [f32; 2]) -> Self {
        self.wanted = Some(size);
        self
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
        if let Some(note) = self.wanted.and_then(|w| clamped(w, size)) {
            eprintln!("gpu-doctor: {note}");
        }
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

/// What to say when the window came out smaller than `wanted` (the screen could not hold it, so
/// the window system clamped it): the size asked for, the size got, and how to get a larger one.
pub fn clamped(wanted: [f32; 2], got: egui::Vec2) -> Option<String> {
    let short = |w: f32, g: f32| g + 1.0 < w;
    (short(wanted[0], got.x) || short(wanted[1], got.y)).then(|| {
        crate::tr!(
            "the window is {got}, not the {wanted} asked for: the screen is smaller (under Xvfb, give a larger screen: xvfb-run -s \"-screen 0 {wide}x{high}x24\")",
            got = format!("{:.0}x{:.0}", got.x, got.y),
            wanted = format!("{:.0}x{:.0}", wanted[0], wanted[1]),
            wide = format!("{:.0}", wanted[0].max(got.x) + 100.0),
            high = format!("{:.0}", wanted[1].max(got.y) + 100.0)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_smaller_than_asked_says_so_and_a_fitting_one_says_nothing() {
        let note = clamped([2000.0, 1200.0], egui::vec2(1600.0, 1000.0)).unwrap();
        assert!(note.contains("1600x1000") && note.contains("2000x1200") && note.contains("2100x1300"), "{note}");
        assert_eq!(clamped([1280.0, 800.0], egui::vec2(1280.0, 800.0)), None);
        assert_eq!(clamped([1280.0, 800.0], egui::vec2(1280.0, 799.5)), None);
    }
}
