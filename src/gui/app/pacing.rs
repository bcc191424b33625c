//! When new data is drawn, and the frame statistics the idle-cost measurement reads
//! (`GPU_DOCTOR_STARTUP_TIMING`).
//!
//! Every frame costs the same whatever changed (egui lays out and a software renderer redraws the
//! whole window), so the idle cost is the frame rate: the samples of one interval share a frame,
//! and a window without focus (left open beside a training run) draws at most every
//! [`UNFOCUSED_EVERY`], like btop's default update. Sampling and recording go on at the chosen
//! interval; the charts catch up on the next frame. eframe itself draws nothing while the window
//! is minimised or covered.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use eframe::egui;

/// How long a wake waits before drawing, so the host's and the GPUs' samples of one interval,
/// published by different threads moments apart, are drawn in one frame instead of two.
pub const WAKE_COALESCE: Duration = Duration::from_millis(120);

/// Least time between frames drawn for new data while the window has no focus.
pub const UNFOCUSED_EVERY: Duration = Duration::from_secs(2);

/// Paces the frames new data asks for (shared with the sampler's notify callback).
#[derive(Debug)]
pub struct Pacer {
    started: Instant,
    /// The window had focus at the last frame (unknown counts as focused).
    focused: AtomicBool,
    /// When the last frame was drawn, milliseconds after `started`.
    last_frame_ms: AtomicU64,
}

impl Default for Pacer {
    fn default() -> Self {
        Pacer { started: Instant::now(), focused: AtomicBool::new(true), last_frame_ms: AtomicU64::new(0) }
    }
}

impl Pacer {
    /// Records a frame and whether the window had focus (`None`: the platform does not say).
    pub fn on_frame(&self, focused: Option<bool>) {
        self.focused.store(focused.unwrap_or(true), Ordering::Relaxed);
        self.last_frame_ms.store(self.started.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    /// How long new data waits before it is drawn, `since_frame` after the last frame.
    pub fn delay(&self, since_frame: Duration) -> Duration {
        if self.focused.load(Ordering::Relaxed) {
            WAKE_COALESCE
        } else {
            UNFOCUSED_EVERY.saturating_sub(since_frame).max(WAKE_COALESCE)
        }
    }

    /// Asks for one frame for new data. (`request_repaint()` schedules two frames to let layouts
    /// settle; a delay schedules one. A repaint already scheduled sooner is kept, so wakes close
    /// together share a frame.)
    pub fn wake(&self, ctx: &egui::Context) {
        let last = Duration::from_millis(self.last_frame_ms.load(Ordering::Relaxed));
        let since = self.started.elapsed().saturating_sub(last);
        ctx.request_repaint_after(self.delay(since));
    }
}

/// Frames drawn and the wall time of each (layout, tessellation and paint calls; eframe leaves
/// out the buffer swap, where a software renderer rasterises), printed to stderr every 10 s when
/// `GPU_DOCTOR_STARTUP_TIMING` is set (the idle-cost measurement reads it).
#[derive(Debug)]
pub(super) struct FrameStats {
    since: Instant,
    frames: u32,
    frame_secs: f64,
}

impl Default for FrameStats {
    fn default() -> Self {
        FrameStats { since: Instant::now(), frames: 0, frame_secs: 0.0 }
    }
}

impl FrameStats {
    /// Counts a frame; `last_frame` is the previous frame's layout time (eframe's `cpu_usage`).
    pub(super) fn count(&mut self, last_frame: Option<f32>) {
        self.frames += 1;
        self.frame_secs += f64::from(last_frame.unwrap_or(0.0));
        let secs = self.since.elapsed().as_secs_f64();
        if secs >= 10.0 {
            eprintln!(
                "gpu-doctor: {:.2} frames/s, {:.2} ms per frame before the swap",
                f64::from(self.frames) / secs,
                1000.0 * self.frame_secs / f64::from(self.frames.max(1))
            );
            *self = FrameStats::default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unfocused_windows_draw_new_data_at_most_every_two_seconds() {
        let p = Pacer::default();
        p.on_frame(Some(true));
        assert_eq!(p.delay(Duration::from_millis(10)), WAKE_COALESCE);
        p.on_frame(None);
        assert_eq!(p.delay(Duration::from_millis(10)), WAKE_COALESCE, "unknown focus counts as focused");
        p.on_frame(Some(false));
        assert_eq!(p.delay(Duration::from_millis(500)), Duration::from_millis(1500));
        assert_eq!(p.delay(Duration::from_secs(5)), WAKE_COALESCE);
    }
}
