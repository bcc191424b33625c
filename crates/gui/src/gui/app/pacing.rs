//! When new data is drawn, and the frame statistics the idle-cost measurement reads
//! (`GPU_DOCTOR_STARTUP_TIMING`).
//!
//! Every frame costs about the same whatever changed (egui lays out and a software renderer
//! clears, redraws and copies the whole window), and a frame after a pause costs several times
//! one drawn right after another (measured under Xvfb with llvmpipe: about 3.5 ms per frame at
//! 200 frames/s, 15 to 25 ms at 1 frame/s, most of it in the renderer's first touch of the
//! window's 4 MB). So the idle cost is the frame rate. The samples of one interval share a
//! frame; a focused window draws every interval. A window without focus (left open beside a
//! training run) draws within [`UNFOCUSED_EVERY`] when what a glance would notice changed (a
//! GPU's utilization band, a throttle reason, VRAM by a tenth, a GPU lost, a hung driver call:
//! see [`glance`]), and every [`UNFOCUSED_CALM_EVERY`] otherwise. Sampling and recording go on
//! at the chosen interval; the charts catch up on the next frame. eframe itself draws nothing
//! while the window is minimised or covered.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use eframe::egui;

use crate::diagnose::bottleneck::{HIGH_UTIL_PCT, LOW_UTIL_PCT};
use crate::telemetry::sample::GpuHealth;
use crate::telemetry::snapshot::Snapshot;
use crate::telemetry::source::SourceStatus;
use crate::telemetry::throttle;

/// How long a wake waits before drawing, so the host's and the GPUs' samples of one interval,
/// published by different threads moments apart, are drawn in one frame instead of two.
pub const WAKE_COALESCE: Duration = Duration::from_millis(120);

/// Least time between frames drawn for new data while the window has no focus.
pub const UNFOCUSED_EVERY: Duration = Duration::from_secs(2);

/// Time between frames while the window has no focus and nothing a glance would notice changed.
pub const UNFOCUSED_CALM_EVERY: Duration = Duration::from_secs(5);

/// Utilization at or below this, %, reads as idle.
const IDLE_UTIL_PCT: f64 = 5.0;

/// Throttle reasons a user would want to see as soon as they start or end. Not the software power
/// cap: a GPU working at its power limit toggles it from one sample to the next (real cards and
/// the demo alike), so it would make every sample "new"; the power chart and the verdicts, judged
/// over a window, show it.
const NOTABLE_THROTTLE: u64 =
    throttle::HW_SLOWDOWN | throttle::SW_THERMAL | throttle::HW_THERMAL | throttle::HW_POWER_BRAKE;

/// A digest of what a glance at the window would notice: which source is shown, a hung driver
/// call, and per GPU whether it answers, its utilization band (idle, low, partial, busy: the
/// verdicts' thresholds), its notable throttle reasons and its VRAM use in tenths of the card.
/// Two snapshots with the same digest look alike apart from the charts' newest points.
pub fn glance(snap: &Snapshot) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::mem::discriminant(&snap.source).hash(&mut h);
    matches!(snap.source, SourceStatus::Unavailable(_)).hash(&mut h);
    snap.gpu_stall.is_some().hash(&mut h);
    snap.inventory.gpus.len().hash(&mut h);
    for g in &snap.gpus {
        g.index.hash(&mut h);
        matches!(g.health, GpuHealth::Ok).hash(&mut h);
        let band = g.util_gpu_pct.get().map(|u| match u {
            u if u <= IDLE_UTIL_PCT => 0u8,
            u if u < LOW_UTIL_PCT => 1,
            u if u < HIGH_UTIL_PCT => 2,
            _ => 3,
        });
        band.hash(&mut h);
        g.throttle_mask.get().map(|m| m & NOTABLE_THROTTLE).hash(&mut h);
        let tenth = match (g.vram_used_bytes.get(), g.vram_total_bytes.get()) {
            (Some(used), Some(total)) if total > 0 => Some(used.saturating_mul(10) / total),
            _ => None,
        };
        tenth.hash(&mut h);
    }
    h.finish()
}

/// Paces the frames new data asks for (shared with the sampler's notify callback).
#[derive(Debug)]
pub struct Pacer {
    started: Instant,
    /// The window had focus at the last frame (unknown counts as focused).
    focused: AtomicBool,
    /// When the last frame was drawn, milliseconds after `started`.
    last_frame_ms: AtomicU64,
    /// [`glance`] of the snapshot the last frame drew.
    drawn: AtomicU64,
    /// When the frame asked for since the last one will be drawn, milliseconds after `started`
    /// (`u64::MAX`: none asked for). A wake that would not draw sooner does not wake the UI.
    pending_ms: AtomicU64,
}

impl Default for Pacer {
    fn default() -> Self {
        Pacer {
            started: Instant::now(),
            focused: AtomicBool::new(true),
            last_frame_ms: AtomicU64::new(0),
            drawn: AtomicU64::new(0),
            pending_ms: AtomicU64::new(u64::MAX),
        }
    }
}

impl Pacer {
    /// Records a frame, whether the window had focus (`None`: the platform does not say) and
    /// the snapshot it draws.
    pub fn on_frame(&self, focused: Option<bool>, drawn: &Snapshot) {
        self.focused.store(focused.unwrap_or(true), Ordering::Relaxed);
        self.drawn.store(glance(drawn), Ordering::Relaxed);
        self.pending_ms.store(u64::MAX, Ordering::Relaxed);
        self.last_frame_ms.store(self.elapsed_ms(), Ordering::Relaxed);
    }

    fn elapsed_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// How long new data waits before it is drawn, `since_frame` after the last frame;
    /// `changed`: a glance would notice a difference from what the last frame drew.
    pub fn delay(&self, since_frame: Duration, changed: bool) -> Duration {
        if self.focused.load(Ordering::Relaxed) {
            return WAKE_COALESCE;
        }
        let every = if changed { UNFOCUSED_EVERY } else { UNFOCUSED_CALM_EVERY };
        every.saturating_sub(since_frame).max(WAKE_COALESCE)
    }

    /// Asks for one frame for the new snapshot `latest`. (`request_repaint()` schedules two
    /// frames to let layouts settle; a delay schedules one. A frame already asked for as soon
    /// is kept and the UI thread is not woken, so wakes close together share a frame.)
    pub fn wake(&self, ctx: &egui::Context, latest: &Snapshot) {
        let now = self.elapsed_ms();
        let since = Duration::from_millis(now.saturating_sub(self.last_frame_ms.load(Ordering::Relaxed)));
        let delay = self.delay(since, glance(latest) != self.drawn.load(Ordering::Relaxed));
        let at = now + delay.as_millis() as u64;
        if self.pending_ms.fetch_min(at, Ordering::Relaxed) <= at {
            return;
        }
        ctx.request_repaint_after(delay);
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
    use crate::telemetry::reading::Reading;
    use crate::telemetry::sample::GpuSample;

    #[test]
    fn unfocused_windows_draw_changes_within_two_seconds_and_calm_data_every_five() {
        let snap = with(gpu(95.0, 20, 0));
        let p = Pacer::default();
        p.on_frame(Some(true), &snap);
        assert_eq!(p.delay(Duration::from_millis(10), false), WAKE_COALESCE);
        p.on_frame(None, &snap);
        assert_eq!(p.delay(Duration::from_millis(10), false), WAKE_COALESCE, "unknown focus counts as focused");
        p.on_frame(Some(false), &snap);
        assert_eq!(p.delay(Duration::from_millis(500), true), Duration::from_millis(1500));
        assert_eq!(p.delay(Duration::from_millis(500), false), Duration::from_millis(4500));
        assert_eq!(p.delay(Duration::from_secs(5), true), WAKE_COALESCE);
        assert_eq!(p.delay(Duration::from_secs(6), false), WAKE_COALESCE);
    }

    fn gpu(util: f64, used_gib: u64, mask: u64) -> GpuSample {
        let mut g = GpuSample::unavailable(0, GpuHealth::Ok, "test");
        g.util_gpu_pct = Reading::Value(util);
        g.vram_used_bytes = Reading::Value(used_gib << 30);
        g.vram_total_bytes = Reading::Value(24 << 30);
        g.throttle_mask = Reading::Value(mask);
        g
    }

    fn with(g: GpuSample) -> Snapshot {
        let inventory = std::sync::Arc::new(crate::telemetry::sample::Inventory::default());
        let source = SourceStatus::Opening;
        Snapshot { gpus: vec![g], ..Snapshot::before_samples(0.0, 1.0, source, inventory) }
    }

    #[test]
    fn a_glance_notices_bands_throttling_vram_tenths_and_lost_gpus_not_jitter() {
        let base = glance(&with(gpu(95.0, 20, throttle::SW_POWER_CAP)));
        // Jitter inside the busy band, the idle bit and a few MiB look the same.
        assert_eq!(base, glance(&with(gpu(99.0, 20, throttle::SW_POWER_CAP | throttle::GPU_IDLE))));
        assert_eq!(base, glance(&with(gpu(71.0, 20, throttle::SW_POWER_CAP))));
        // Anything a verdict or a card would show differently does not.
        assert_ne!(base, glance(&with(gpu(40.0, 20, throttle::SW_POWER_CAP))), "busy to partly used");
        assert_ne!(base, glance(&with(gpu(95.0, 20, throttle::SW_POWER_CAP | throttle::HW_THERMAL))));
        // A GPU at its power limit toggles the software power cap from sample to sample.
        assert_eq!(base, glance(&with(gpu(95.0, 20, 0))), "power cap flickering");
        assert_ne!(base, glance(&with(gpu(95.0, 23, throttle::SW_POWER_CAP))), "VRAM up a tenth of the card");
        let mut lost = gpu(95.0, 20, throttle::SW_POWER_CAP);
        lost.health = GpuHealth::Lost("fell off the bus".into());
        assert_ne!(base, glance(&with(lost)));
        assert_ne!(glance(&with(gpu(3.0, 1, 0))), glance(&with(gpu(20.0, 1, 0))), "idle to low");
    }
}
