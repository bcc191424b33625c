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

/// What every spec must satisfy, however it was made (a request, or a spec file written by the
/// Tune tab): something to tune and a rate pattern that compiles.
pub fn check(s: &TuneSpec) -> Result<(), SpecError> {
    if search::phases(s).is_empty() {
        return Err(SpecError::NothingToTune);
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
}
