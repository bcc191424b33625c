//! A trial's memory peak, read faster than the sampler while it is still rising: a job that
//! peaks for a few tenths of a second at the end of a trial falls between two samples at the
//! default interval (one recommended a batch whose real peak was 23.8 of 24 GiB as "59 % free").
//! A thread of its own asks the GPUs for their memory in use (one cheap call per GPU) every
//! [`FAST`] while the figure rose within the last [`RISING_FOR`], every [`SLOW`] otherwise, so the
//! cost stays within the tuner's CPU budget; a driver call that hangs holds only that thread.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::telemetry::source::GpuSource;

/// The interval while memory rises.
pub const FAST: Duration = Duration::from_millis(50);
/// The interval otherwise.
pub const SLOW: Duration = Duration::from_millis(200);
/// How long memory counts as rising after it last rose.
pub const RISING_FOR: Duration = Duration::from_secs(1);

/// A rise smaller than this is noise (the driver's own allocations).
const RISE: u64 = 1 << 20;

/// The probe of one trial: started with it, read when it ends.
pub struct FastPeaks {
    peaks: Arc<Mutex<BTreeMap<u32, u64>>>,
    stop: Arc<AtomicBool>,
    reads: Arc<Mutex<u64>>,
}

impl FastPeaks {
    /// Starts reading `source`'s memory (None when the thread cannot start: the sampler's
    /// figures stand alone).
    pub fn start(source: Arc<dyn GpuSource>) -> Option<FastPeaks> {
        let me = FastPeaks { peaks: Arc::default(), stop: Arc::new(AtomicBool::new(false)), reads: Arc::default() };
        let (peaks, stop, reads) = (Arc::clone(&me.peaks), Arc::clone(&me.stop), Arc::clone(&me.reads));
        std::thread::Builder::new()
            .name("gd-tune-peaks".into())
            .spawn(move || {
                let mut last: BTreeMap<u32, u64> = BTreeMap::new();
                let mut rose = Instant::now();
                while !stop.load(Ordering::Relaxed) {
                    for (gpu, used) in source.memory_used() {
                        if last.get(&gpu).is_none_or(|l| used > l + RISE) {
                            rose = Instant::now();
                        }
                        last.insert(gpu, used);
                        if let Ok(mut p) = peaks.lock() {
                            let e = p.entry(gpu).or_insert(0);
                            *e = (*e).max(used);
                        }
                    }
                    if let Ok(mut n) = reads.lock() {
                        *n += 1;
                    }
                    std::thread::sleep(if rose.elapsed() < RISING_FOR { FAST } else { SLOW });
                }
            })
            .ok()?;
        Some(me)
    }

    /// The peak memory in use seen on each GPU so far, bytes.
    pub fn peaks(&self) -> BTreeMap<u32, u64> {
        self.peaks.lock().map(|p| p.clone()).unwrap_or_default()
    }

    /// How many times the GPUs were read.
    pub fn reads(&self) -> u64 {
        self.reads.lock().map(|n| *n).unwrap_or(0)
    }
}

impl Drop for FastPeaks {
    /// Ends the thread (it finishes the read it is in; one that hangs is left behind).
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source whose memory follows a script: a short peak the sampler's 0.5 s would miss.
    struct Spike {
        started: Instant,
    }

    impl GpuSource for Spike {
        fn status(&self) -> crate::telemetry::source::SourceStatus {
            crate::telemetry::source::SourceStatus::Opening
        }
        fn inventory(&self) -> Arc<crate::telemetry::sample::Inventory> {
            Arc::default()
        }
        fn sample(&self, _t: f64) -> Vec<crate::telemetry::sample::GpuSample> {
            Vec::new()
        }
        fn sample_slow(&self, _t: f64) -> Vec<crate::telemetry::sample::GpuSlowSample> {
            Vec::new()
        }
        fn memory_used(&self) -> Vec<(u32, u64)> {
            // Rising for 0.6 s, a 0.2 s peak of 23 GiB, then 8 GiB.
            let t = self.started.elapsed().as_secs_f64();
            let gib = if t < 0.6 {
                2.0 + 10.0 * t
            } else if t < 0.8 {
                23.0
            } else {
                8.0
            };
            vec![(0, (gib * (1u64 << 30) as f64) as u64)]
        }
    }

    #[test]
    fn a_short_peak_while_memory_rises_is_caught() {
        let probe = FastPeaks::start(Arc::new(Spike { started: Instant::now() })).unwrap();
        std::thread::sleep(Duration::from_millis(1300));
        let peak = probe.peaks()[&0];
        assert_eq!(peak, 23 << 30, "the 0.2 s peak was missed");
        // Fast while rising (about 26 reads in 1.3 s), not at the slow pace alone (about 6).
        assert!(probe.reads() >= 15, "{} reads", probe.reads());
    }
}
