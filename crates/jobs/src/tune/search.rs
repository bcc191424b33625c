//! The search, as a pure function of the trials so far: [`next`] says which setting to run next,
//! or gives the answer and why each parameter's search stopped. Because it holds no state of its
//! own, resuming a journal is replaying it, and a trial already measured is never run twice.
//!
//! The order is the guide's: the batch first, against memory (doubling from the smallest, then
//! bisecting below the first size that ran out of memory or would leave less free memory than the
//! policy, the size predicted from the trials before by a straight line through the two largest
//! so a size that would not fit is never run on purpose; a batch that no longer raises throughput
//! on a saturated GPU stops it early), then the copies run at once (1, 2, 4 … while total throughput
//! rises by the margin and the memory of one more copy fits), then the workers and the other
//! parameters (doubling while throughput rises). One parameter moves per trial; a failure stops
//! that parameter's search and is never retried.

use super::spec::{BATCH, CONCURRENCY, Range, Setting, TuneSpec};
use super::{Outcome, PhaseEnd, Stop, Trial, TrialEnd};

/// Utilization at which the GPU counts as saturated, %.
pub const SATURATED_PCT: f64 = 90.0;

/// What to do next.
#[derive(Clone, Debug, PartialEq)]
pub enum Next {
    /// Run this setting; `phase` is the parameter it moves.
    Run {
        /// The parameter searched.
        phase: String,
        /// The setting.
        setting: Setting,
    },
    /// The search is over.
    Done(Outcome),
}

/// The memory a trial may use at most: the GPU's memory less the headroom, or the user's cap if
/// smaller (None when neither is known).
pub fn limit(spec: &TuneSpec, trials: &[Trial]) -> Option<u64> {
    limit_with(spec, trials.iter().find_map(|t| t.device_total.filter(|t| *t > 0)))
}

/// [`limit`] for a GPU of `total` bytes.
pub fn limit_with(spec: &TuneSpec, total: Option<u64>) -> Option<u64> {
    let policy = total.map(|t| (t as f64 * (1.0 - spec.headroom_pct / 100.0)) as u64);
    match (policy, spec.vram_cap) {
        (Some(p), Some(c)) => Some(p.min(c)),
        (p, c) => p.or(c),
    }
}

/// The next step of the search over `trials` (interrupted trials are ignored: they run again).
pub fn next(spec: &TuneSpec, trials: &[Trial]) -> Next {
    decide(spec, trials, None)
}

/// The answer from the trials so far, for a search that ends early (`stop` for the parameter
/// being searched, e.g. [`Stop::Interrupted`]).
pub fn outcome_so_far(spec: &TuneSpec, trials: &[Trial], stop: Stop) -> Outcome {
    match decide(spec, trials, Some(stop)) {
        Next::Done(o) => o,
        // (decide never asks to run when told to stop.)
        Next::Run { .. } => Outcome { best: None, phases: Vec::new() },
    }
}

struct Ctx<'a> {
    spec: &'a TuneSpec,
    trials: Vec<&'a Trial>,
    limit: Option<u64>,
    /// Why no further trial may run (the trial limit, an interruption).
    halt: Option<Stop>,
}

enum Phase {
    Run(Setting),
    Done(Option<u64>, Stop),
}

impl Ctx<'_> {
    fn find(&self, s: &Setting) -> Option<&Trial> {
        self.trials.iter().rev().find(|t| &t.setting == s).copied()
    }

    /// A trial's result: None when good, else why it is not.
    fn problem(&self, t: &Trial, at: u64) -> Option<Stop> {
        match &t.end {
            TrialEnd::OutOfMemory { .. } | TrialEnd::OverCap { .. } => Some(Stop::OutOfMemory { at }),
            TrialEnd::Failed { .. } | TrialEnd::NotStarted { .. } | TrialEnd::Interrupted => Some(Stop::Failed { at }),
            TrialEnd::TimedOut => Some(Stop::TimedOut { at }),
            TrialEnd::Ok if t.throughput.is_none_or(|v| v <= 0.0) => Some(Stop::NoThroughput { at }),
            TrialEnd::Ok => match (self.limit, t.device_peak) {
                (Some(limit), Some(peak)) if peak > limit => Some(Stop::Headroom { at, predicted: false }),
                _ => None,
            },
        }
    }

    fn run(&self, s: Setting, fallback: Option<u64>) -> Phase {
        match &self.halt {
            Some(stop) => Phase::Done(fallback, stop.clone()),
            None => Phase::Run(s),
        }
    }

    fn gain_pct(a: &Trial, b: &Trial) -> f64 {
        let (a, b) = (a.throughput.unwrap_or(0.0), b.throughput.unwrap_or(0.0));
        if a > 0.0 { 100.0 * (b / a - 1.0) } else { f64::INFINITY }
    }

    /// The straight line through the two largest good batches' peak memory: (batch, memory,
    /// slope per batch item).
    fn line(good: &[(u64, &Trial)]) -> Option<(f64, f64, f64)> {
        let mut pts: Vec<(u64, u64)> = good.iter().filter_map(|(b, t)| Some((*b, t.device_peak?))).collect();
        pts.sort();
        pts.dedup_by_key(|p| p.0);
        let [.., (b1, m1), (b2, m2)] = pts[..] else { return None };
        Some((b2 as f64, m2 as f64, (m2 as f64 - m1 as f64) / (b2 as f64 - b1 as f64)))
    }

    /// Device memory at batch `v`, from the line.
    fn predict_batch(&self, good: &[(u64, &Trial)], v: u64) -> Option<u64> {
        let (b2, m2, slope) = Self::line(good)?;
        Some((m2 + slope.max(0.0) * (v as f64 - b2)).max(0.0) as u64)
    }

    /// The largest batch the line keeps within the limit.
    fn fit_batch(&self, good: &[(u64, &Trial)], limit: u64) -> Option<u64> {
        let (b2, m2, slope) = Self::line(good)?;
        (slope > 0.0).then(|| (b2 + (limit as f64 - m2) / slope).floor().max(0.0) as u64)
    }

    /// The batch: doubling, then bisecting below the first size too large for memory.
    fn memory_phase(&self, current: &Setting, name: &str, range: Range) -> Phase {
        let at = |v: u64| {
            let mut s = current.clone();
            s.values.insert(name.to_string(), v);
            s
        };
        let mut good: Vec<(u64, &Trial)> = Vec::new();
        let mut v = range.lo;
        let (mut bad, mut why) = loop {
            let Some(t) = self.find(&at(v)) else {
                if let (Some(limit), Some(p)) = (self.limit, self.predict_batch(&good, v))
                    && p > limit
                {
                    break (v, Stop::Headroom { at: v, predicted: true });
                }
                return self.run(at(v), good.last().map(|g| g.0));
            };
            match self.problem(t, v) {
                None => {
                    if let Some((gv, gt)) = good.last()
                        && gt.util_mean.is_some_and(|u| u >= SATURATED_PCT)
                        && Self::gain_pct(gt, t) < self.spec.margin_pct
                    {
                        let gain_pct = Self::gain_pct(gt, t);
                        return Phase::Done(Some(*gv), Stop::Flat { tried: v, gain_pct, saturated: true });
                    }
                    good.push((v, t));
                    if v >= range.hi {
                        return Phase::Done(Some(v), Stop::RangeEnd);
                    }
                    v = (v * 2).max(v + 1).min(range.hi);
                }
                Some(stop @ (Stop::OutOfMemory { .. } | Stop::Headroom { .. })) => break (v, stop),
                Some(other) => return Phase::Done(good.last().map(|g| g.0), other),
            }
        };
        let Some(&(mut g, _)) = good.last() else { return Phase::Done(None, why) };
        loop {
            if bad - g <= (g / 32).max(1) {
                return Phase::Done(Some(g), why);
            }
            let fitted = self.limit.and_then(|l| self.fit_batch(&good, l)).filter(|m| *m > g && *m < bad);
            let m = fitted.unwrap_or(g + (bad - g) / 2);
            match self.find(&at(m)) {
                None => {
                    if let (Some(limit), Some(p)) = (self.limit, self.predict_batch(&good, m))
                        && p > limit
                    {
                        (bad, why) = (m, Stop::Headroom { at: m, predicted: true });
                        continue;
                    }
                    return self.run(at(m), Some(g));
                }
                Some(t) => match self.problem(t, m) {
                    None => {
                        good.push((m, t));
                        g = m;
                    }
                    Some(stop @ (Stop::OutOfMemory { .. } | Stop::Headroom { .. })) => (bad, why) = (m, stop),
                    Some(other) => return Phase::Done(Some(g), other),
                },
            }
        }
    }

    /// Concurrency, workers and the rest: doubling while throughput rises by the margin.
    fn throughput_phase(&self, current: &Setting, name: &str, range: Range) -> Phase {
        let at = |v: u64| {
            let mut s = current.clone();
            if name == CONCURRENCY {
                s.concurrency = u32::try_from(v).unwrap_or(u32::MAX);
            } else {
                s.values.insert(name.to_string(), v);
            }
            s
        };
        let mut prev: Option<(u64, &Trial)> = None;
        let mut v = range.lo;
        loop {
            let Some(t) = self.find(&at(v)) else {
                if name == CONCURRENCY
                    && let (Some(limit), Some((pv, pt))) = (self.limit, prev)
                    && let (Some(own), Some(peak)) = (pt.vram_peak, pt.device_peak)
                {
                    let per_copy = own as f64 / pv.max(1) as f64;
                    let predicted = peak as f64 + per_copy * (v - pv) as f64;
                    if predicted > limit as f64 {
                        return Phase::Done(Some(pv), Stop::Headroom { at: v, predicted: true });
                    }
                }
                return self.run(at(v), prev.map(|p| p.0));
            };
            if let Some(stop) = self.problem(t, v) {
                return Phase::Done(prev.map(|p| p.0), stop);
            }
            if let Some((pv, pt)) = prev {
                let gain_pct = Self::gain_pct(pt, t);
                if gain_pct < self.spec.margin_pct {
                    let saturated = pt.util_mean.is_some_and(|u| u >= SATURATED_PCT);
                    return Phase::Done(Some(pv), Stop::Flat { tried: v, gain_pct, saturated });
                }
            }
            prev = Some((v, t));
            if v >= range.hi {
                return Phase::Done(Some(v), Stop::RangeEnd);
            }
            v = (v * 2).max(v + 1).min(range.hi);
        }
    }
}

/// The phases in order: (name, range, against memory).
pub fn phases(spec: &TuneSpec) -> Vec<(String, Range, bool)> {
    let mut out = Vec::new();
    for p in spec.params.iter().filter(|p| p.name == BATCH) {
        out.push((p.name.clone(), p.range, true));
    }
    if spec.concurrency.hi > spec.concurrency.lo {
        out.push((CONCURRENCY.to_string(), spec.concurrency, false));
    }
    for p in spec.params.iter().filter(|p| p.name != BATCH) {
        out.push((p.name.clone(), p.range, false));
    }
    out
}

/// The first setting: every parameter at the bottom of its range.
pub fn start(spec: &TuneSpec) -> Setting {
    Setting {
        values: spec.params.iter().map(|p| (p.name.clone(), p.range.lo)).collect(),
        concurrency: u32::try_from(spec.concurrency.lo.max(1)).unwrap_or(1),
    }
}

fn decide(spec: &TuneSpec, trials: &[Trial], stop: Option<Stop>) -> Next {
    let kept: Vec<&Trial> = trials.iter().filter(|t| t.end != TrialEnd::Interrupted).collect();
    let halt = stop.or_else(|| (kept.len() >= spec.max_trials as usize).then_some(Stop::TrialLimit));
    let ctx = Ctx { spec, trials: kept, limit: limit(spec, trials), halt };
    let mut current = start(spec);
    let mut ends = Vec::new();
    for (name, range, memory) in phases(spec) {
        let result = if memory {
            ctx.memory_phase(&current, &name, range)
        } else {
            ctx.throughput_phase(&current, &name, range)
        };
        match result {
            Phase::Run(setting) => return Next::Run { phase: name, setting },
            Phase::Done(chosen, why) => {
                ends.push(PhaseEnd { phase: name.clone(), chosen, stop: why });
                let Some(v) = chosen else {
                    return Next::Done(Outcome { best: None, phases: ends });
                };
                if name == CONCURRENCY {
                    current.concurrency = u32::try_from(v).unwrap_or(1);
                } else {
                    current.values.insert(name, v);
                }
                if ctx.halt.is_some() && ends.last().map(|e| &e.stop) == ctx.halt.as_ref() {
                    break;
                }
            }
        }
    }
    Next::Done(Outcome { best: ctx.find(&current).map(|t| t.id), phases: ends })
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
