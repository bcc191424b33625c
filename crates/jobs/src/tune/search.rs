//! The search, as a pure function of the trials so far: [`next`] says which setting to run next,
//! or gives the answer and why each parameter's search stopped. Because it holds no state of its
//! own, resuming a journal is replaying it.
//!
//! The order is the guide's: the batch first, against memory (doubling from the smallest while
//! throughput rises by the margin, then bisecting below the first size that ran out of memory or
//! would leave less free memory than the policy, the size predicted from the trials before by a
//! straight line through the two largest so a size that would not fit is never run on purpose, and
//! kept a margin below a size that ran out), then the copies run at once (1, 2, 4 … while total
//! throughput rises by the margin and the memory of one more copy fits), then the workers and the
//! other parameters (doubling while throughput rises). One parameter moves per trial; a failure
//! stops that parameter's search and is never retried.
//!
//! A step that does not gain the margin ends its parameter's search whatever the GPU's
//! utilization says. Run-to-run noise on a busy machine is larger than a 5 % margin, so when the
//! gain that decides lies within the margin, both settings are measured a second time and the
//! decision is taken on the means; among values within the margin of the best, the smallest is
//! kept.

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

    /// Every trial of a setting: one, or two when a decision within the margin measured it again.
    fn runs(&self, s: &Setting) -> impl Iterator<Item = &Trial> {
        self.trials.iter().copied().filter(move |t| &t.setting == s)
    }

    /// A setting's result: None when every run of it is good, else why the first bad one is not
    /// (a setting that fails once is not one to recommend).
    fn problem_of(&self, s: &Setting, at: u64) -> Option<Stop> {
        self.runs(s).find_map(|t| self.problem(t, at))
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

    /// A setting's throughput: the mean of its runs.
    fn mean(&self, s: &Setting) -> f64 {
        mean_throughput(self.runs(s))
    }

    /// How much `hi` raised throughput over `lo`, %, on the means of their runs; when that gain
    /// decides and lies within the margin (either way), each setting measured once is measured
    /// again first: `Err` is that trial to run (`fallback` the value kept if none may run).
    fn settle(&self, lo: &Setting, hi: &Setting, fallback: Option<u64>) -> Result<f64, Phase> {
        let gain = gain_pct(self.mean(lo), self.mean(hi));
        if gain.abs() < self.spec.margin_pct {
            for s in [lo, hi] {
                if self.runs(s).count() < 2 {
                    return Err(self.run(s.clone(), fallback));
                }
            }
        }
        Ok(gain)
    }

    /// Among the good values of a parameter up to `chosen`, the smallest whose throughput is
    /// within the margin of the best of them (docs/tune.md: a smaller setting that does as well
    /// leaves memory and CPU to spare); `Some` with the stop that says why when it is not `chosen`.
    fn smallest_within(&self, good: &[u64], chosen: u64, at: &dyn Fn(u64) -> Setting) -> Option<(u64, Stop)> {
        let mut kept: Vec<(u64, f64)> =
            good.iter().filter(|v| **v <= chosen).map(|v| (*v, self.mean(&at(*v)))).collect();
        kept.sort_by_key(|k| k.0);
        kept.dedup_by_key(|k| k.0);
        let &(best_v, best) = kept.iter().max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))?;
        let &(v, thr) = kept.iter().find(|(_, thr)| gain_pct(*thr, best) < self.spec.margin_pct)?;
        (v != chosen).then(|| {
            let tried = if best_v > v { best_v } else { chosen };
            let saturated = self.find(&at(v)).is_some_and(|t| t.util_mean.is_some_and(|u| u >= SATURATED_PCT));
            (v, Stop::Flat { tried, gain_pct: gain_pct(thr, self.mean(&at(tried))), saturated })
        })
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

    /// The batch: doubling while throughput rises by the margin, then bisecting below the first
    /// size too large for memory, a margin below the smallest that ran out.
    fn memory_phase(&self, current: &Setting, name: &str, range: Range) -> Phase {
        let at = |v: u64| {
            let mut s = current.clone();
            s.values.insert(name.to_string(), v);
            s
        };
        let margin = self.spec.margin_pct;
        let saturated = |t: &Trial| t.util_mean.is_some_and(|u| u >= SATURATED_PCT);
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
            match self.problem_of(&at(v), v) {
                None => {
                    // A larger batch that does not gain the margin ends the search, whatever the
                    // GPU's utilization says (a CPU job has none; a busy one is not saturated).
                    if let Some(&(gv, gt)) = good.last() {
                        let gain_pct = match self.settle(&at(gv), &at(v), Some(gv)) {
                            Ok(g) => g,
                            Err(again) => return again,
                        };
                        if gain_pct < margin {
                            return Phase::Done(Some(gv), Stop::Flat { tried: v, gain_pct, saturated: saturated(gt) });
                        }
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
        loop {
            let top = below_memory(bad, &why);
            let Some(&(g, gt)) = good.iter().filter(|(b, _)| *b <= top).max_by_key(|(b, _)| *b) else {
                return Phase::Done(None, why);
            };
            if top <= g || top - g < (g / 32).max(1) {
                let values: Vec<u64> = good.iter().map(|(b, _)| *b).collect();
                return match self.smallest_within(&values, g, &at) {
                    Some((v, flat)) => Phase::Done(Some(v), flat),
                    None => Phase::Done(Some(g), why),
                };
            }
            let fitted = self.limit.and_then(|l| self.fit_batch(&good, l)).filter(|m| *m > g && *m <= top);
            let m = fitted.unwrap_or(g + (top - g).div_ceil(2));
            let Some(t) = self.find(&at(m)) else {
                if let (Some(limit), Some(p)) = (self.limit, self.predict_batch(&good, m))
                    && p > limit
                {
                    (bad, why) = (m, Stop::Headroom { at: m, predicted: true });
                    continue;
                }
                return self.run(at(m), Some(g));
            };
            match self.problem_of(&at(m), m) {
                None => {
                    let gain_pct = match self.settle(&at(g), &at(m), Some(g)) {
                        Ok(gain) => gain,
                        Err(again) => return again,
                    };
                    if gain_pct < margin {
                        return Phase::Done(Some(g), Stop::Flat { tried: m, gain_pct, saturated: saturated(gt) });
                    }
                    good.push((m, t));
                }
                Some(stop @ (Stop::OutOfMemory { .. } | Stop::Headroom { .. })) => (bad, why) = (m, stop),
                Some(other) => return Phase::Done(Some(g), other),
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
            if let Some(stop) = self.problem_of(&at(v), v) {
                return Phase::Done(prev.map(|p| p.0), stop);
            }
            if let Some((pv, pt)) = prev {
                let gain_pct = match self.settle(&at(pv), &at(v), Some(pv)) {
                    Ok(g) => g,
                    Err(again) => return again,
                };
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

/// How much `b` raises throughput over `a`, % (infinite when `a` measured none).
pub fn gain_pct(a: f64, b: f64) -> f64 {
    if a > 0.0 { 100.0 * (b / a - 1.0) } else { f64::INFINITY }
}

/// The mean throughput of a setting's runs (0 when none measured one).
pub fn mean_throughput<'a>(runs: impl Iterator<Item = &'a Trial>) -> f64 {
    let v: Vec<f64> = runs.filter_map(|t| t.throughput).collect();
    if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 }
}

/// The largest batch the search may keep below one that did not fit: a margin below a size that
/// ran out of memory (a sixteenth of it, at least one), since the same job can peak a little
/// higher on another run and a short peak can fall between two samples; just below one that
/// left too little memory free (the headroom policy is the margin there).
pub fn below_memory(bad: u64, why: &Stop) -> u64 {
    match why {
        Stop::OutOfMemory { .. } => bad.saturating_sub((bad / 16).max(1)),
        _ => bad.saturating_sub(1),
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
