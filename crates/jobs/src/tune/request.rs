//! A tune as a person asks for it, before it is checked: the command line's options or the Tune
//! tab's form fill the same [`Request`], and [`Request::spec`] turns it into the [`TuneSpec`] the
//! search runs (the one place its options are checked and its defaults written). The Tune tab
//! hands the spec to the `tune` it starts as data (`tune --spec FILE`), never as flags rebuilt
//! from its fields.

use super::search;
use super::spec::{self, Range, SpecError, TuneSpec, Unit};

/// What a tune is asked to do.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// The command template, one argument per element.
    pub command: Vec<String>,
    /// The ranges given, `NAME=LO..HI`.
    pub params: Vec<String>,
    /// Copies at once, when tuned.
    pub concurrency: Option<Range>,
    /// Throughput as items per second (a number or a product such as `{batch}*50`).
    pub items: Option<String>,
    /// Throughput as the last number a regular expression's first group matches in the output.
    pub rate_pattern: Option<String>,
    /// Keep at least this share of the GPU's memory free, %.
    pub headroom_pct: f64,
    /// Never use more GPU memory than this on purpose, GiB.
    pub vram_cap_gib: Option<f64>,
    /// A trial running longer than this is stopped, seconds.
    pub trial_timeout_secs: f64,
    /// A step must raise throughput by at least this much to count, %.
    pub margin_pct: f64,
    /// At most this many trials.
    pub max_trials: u32,
}

impl Request {
    /// Free GPU memory kept when none is asked, % (the guide: 20-30).
    pub const HEADROOM_PCT: f64 = 20.0;
    /// A trial's time limit when none is asked, seconds.
    pub const TRIAL_TIMEOUT_SECS: f64 = 600.0;
    /// The gain a step must bring when none is asked, %.
    pub const MARGIN_PCT: f64 = 5.0;
    /// Trials at most when none is asked.
    pub const MAX_TRIALS: u32 = 30;
    /// The free share a tune may be asked to keep, % (`--headroom`).
    pub const HEADROOM_RANGE: (f64, f64) = (0.0, 90.0);
    /// A trial's time limit, seconds (`--trial-timeout`: 1 s to a week).
    pub const TRIAL_TIMEOUT_RANGE: (f64, f64) = (1.0, 604_800.0);
    /// The gain a step must bring, % (`--margin`).
    pub const MARGIN_RANGE: (f64, f64) = (0.0, 100.0);
    /// Trials a tune may be allowed (`--max-trials`).
    pub const MAX_TRIALS_RANGE: (u32, u32) = (1, 500);
    /// The most copies a tune runs at once (`--concurrency`): a stated cap, far above what one
    /// machine's GPUs gain from, and far below what would exhaust its processes.
    pub const MAX_CONCURRENCY: u64 = 64;
    /// The largest `--vram-cap`, GiB.
    pub const MAX_VRAM_CAP_GIB: f64 = 4096.0;

    /// A request to tune `command` with every other choice at its default.
    pub fn new(command: Vec<String>) -> Request {
        Request {
            command,
            params: Vec::new(),
            concurrency: None,
            items: None,
            rate_pattern: None,
            headroom_pct: Self::HEADROOM_PCT,
            vram_cap_gib: None,
            trial_timeout_secs: Self::TRIAL_TIMEOUT_SECS,
            margin_pct: Self::MARGIN_PCT,
            max_trials: Self::MAX_TRIALS,
        }
    }

    /// The checked spec (`cpus`: the default top of `{workers}`), or what is wrong, named by the
    /// option a person gave.
    pub fn spec(&self, cpus: u64) -> Result<TuneSpec, SpecError> {
        let params = spec::params(&self.command, &self.params, cpus)?;
        let unit = match (&self.items, &self.rate_pattern) {
            (Some(expr), _) => {
                spec::check_items(expr, &params)?;
                Unit::Items { expr: expr.clone() }
            }
            (None, Some(re)) => Unit::Pattern { regex: re.clone() },
            (None, None) => Unit::RunsPerHour,
        };
        let s = TuneSpec {
            command: self.command.clone(),
            params,
            concurrency: self
                .concurrency
                .map(|r| Range { lo: r.lo.max(1), hi: r.hi.max(1) })
                .unwrap_or(Range { lo: 1, hi: 1 }),
            headroom_pct: self.headroom_pct,
            vram_cap: self.vram_cap_gib.map(|g| (g * crate::units::GIB) as u64),
            trial_timeout_secs: self.trial_timeout_secs,
            margin_pct: self.margin_pct,
            unit,
            max_trials: self.max_trials,
        };
        check(&s)?;
        Ok(s)
    }
}

/// What every spec must satisfy, however it was made (a request, a spec file written by the Tune
/// tab, or a journal read back by `--resume`): the command line's bounds on every value, names
/// that are placeholder names, something to tune, a rate pattern that compiles and a count of
/// items that is a finite number.
pub fn check(s: &TuneSpec) -> Result<(), SpecError> {
    let out = |option: &'static str, value: String, allowed: String| SpecError::OutOfRange { option, value, allowed };
    let within = |v: f64, (lo, hi): (f64, f64)| v.is_finite() && v >= lo && v <= hi;
    if !within(s.headroom_pct, Request::HEADROOM_RANGE) {
        let (lo, hi) = Request::HEADROOM_RANGE;
        return Err(out("--headroom", s.headroom_pct.to_string(), format!("{lo}-{hi} %")));
    }
    if !within(s.trial_timeout_secs, Request::TRIAL_TIMEOUT_RANGE) {
        let (lo, hi) = Request::TRIAL_TIMEOUT_RANGE;
        return Err(out("--trial-timeout", s.trial_timeout_secs.to_string(), format!("{lo}-{hi} s")));
    }
    if !within(s.margin_pct, Request::MARGIN_RANGE) {
        let (lo, hi) = Request::MARGIN_RANGE;
        return Err(out("--margin", s.margin_pct.to_string(), format!("{lo}-{hi} %")));
    }
    let (lo, hi) = Request::MAX_TRIALS_RANGE;
    if !(lo..=hi).contains(&s.max_trials) {
        return Err(out("--max-trials", s.max_trials.to_string(), format!("{lo}-{hi}")));
    }
    if s.vram_cap.is_some_and(|c| c as f64 > Request::MAX_VRAM_CAP_GIB * crate::units::GIB) {
        return Err(out(
            "--vram-cap",
            format!("{} B", s.vram_cap.unwrap_or(0)),
            format!("0.5-{} GiB", Request::MAX_VRAM_CAP_GIB),
        ));
    }
    let c = s.concurrency;
    if c.lo < 1 || c.lo > c.hi || c.hi > Request::MAX_CONCURRENCY {
        return Err(out("--concurrency", format!("{}..{}", c.lo, c.hi), format!("1..{}", Request::MAX_CONCURRENCY)));
    }
    for p in &s.params {
        if !spec::is_name(&p.name) {
            return Err(SpecError::BadName(p.name.clone()));
        }
        if p.range.lo > p.range.hi || p.range.hi > spec::Range::MAX {
            return Err(out(
                "--param",
                format!("{}={}..{}", p.name, p.range.lo, p.range.hi),
                format!("0..{}", spec::Range::MAX),
            ));
        }
    }
    if search::phases(s).is_empty() {
        return Err(SpecError::NothingToTune);
    }
    if let Unit::Items { expr } = &s.unit {
        spec::check_items(expr, &s.params)?;
        // The largest setting must still count a finite number of items.
        let top: std::collections::BTreeMap<String, u64> =
            s.params.iter().map(|p| (p.name.clone(), p.range.hi.max(1))).collect();
        if spec::items(expr, &top).is_none() {
            return Err(SpecError::BadItems(expr.clone()));
        }
    }
    pattern(&s.unit).map(|_| ())
}

/// The compiled rate pattern of `unit`, if it has one (bounded in size).
pub fn pattern(unit: &Unit) -> Result<Option<regex::Regex>, SpecError> {
    match unit {
        Unit::Pattern { regex } => regex::RegexBuilder::new(regex)
            .size_limit(1 << 20)
            .build()
            .map(Some)
            .map_err(|e| SpecError::BadPattern(e.to_string())),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn a_request_with_defaults_tunes_the_batch() {
        let s = Request::new(cmd("train --bs {batch}")).spec(4);
        let s = s.map_err(|e| e.to_string());
        assert_eq!(s.as_ref().map(|s| s.params[0].name.as_str()), Ok("batch"));
        assert_eq!(s.as_ref().map(|s| (s.headroom_pct, s.max_trials)), Ok((20.0, 30)));
    }

    #[test]
    fn nothing_to_tune_and_a_bad_pattern_are_named() {
        assert_eq!(Request::new(cmd("train")).spec(4), Err(SpecError::NothingToTune));
        let mut r = Request::new(cmd("train --bs {batch}"));
        r.rate_pattern = Some("([0-9".into());
        assert!(matches!(r.spec(4), Err(SpecError::BadPattern(_))));
    }

    /// Issue 53, items 5, 6 and 8: whatever a spec comes from (the command line, the Tune tab's
    /// file, a journal read back), every value is held to the command line's bounds.
    #[test]
    fn every_value_is_held_to_the_command_lines_bounds() {
        let good = Request::new(cmd("train --bs {batch}")).spec(4).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(check(&good), Ok(()));
        let refused = |change: &dyn Fn(&mut TuneSpec)| {
            let mut s = good.clone();
            change(&mut s);
            check(&s).err().map(|e| e.to_string()).unwrap_or_default()
        };
        assert!(refused(&|s| s.trial_timeout_secs = 1e300).contains("--trial-timeout"));
        assert!(refused(&|s| s.trial_timeout_secs = f64::NAN).contains("--trial-timeout"));
        assert!(refused(&|s| s.headroom_pct = -5.0).contains("--headroom"));
        assert!(refused(&|s| s.margin_pct = 1e9).contains("--margin"));
        assert!(refused(&|s| s.max_trials = 100_000).contains("--max-trials"));
        assert!(refused(&|s| s.concurrency = Range { lo: 1, hi: 1_000_000_000_000_000 }).contains("--concurrency"));
        assert!(refused(&|s| s.params[0].name = "../../../../tmp/x".into()).contains("no placeholder name"));
        assert!(refused(&|s| s.params[0].range = Range { lo: 1, hi: u64::MAX }).contains("--param"));
        // A count of items that overflows is refused, not an infinite throughput.
        let mut r = Request::new(cmd("train --bs {batch}"));
        r.items = Some("{batch}*1e300*1e10".into());
        assert!(matches!(r.spec(4), Err(SpecError::BadItems(_))));
        // The concurrency a person may ask for is capped, and the error says the cap.
        let mut r = Request::new(cmd("train --bs {batch}"));
        r.concurrency = Some(Range { lo: 1, hi: 1_000_000 });
        let e = r.spec(4).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("--concurrency 1..1000000 is out of range: give 1..64"), "{e}");
    }
}
