//! The sampling interval, the one parameter every live view shares: one type ([`Interval`]) with
//! its one range (0.25-10 s), its one parser (the command line's `--interval`, the settings file)
//! and its one default (1 s). Values read from elsewhere (a recording's header, a server's
//! stream) are brought into the range with [`Interval::clamped`] rather than refused.

use std::time::Duration;

/// An interval outside the allowed range.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct BadInterval(pub f64);

impl BadInterval {
    /// What is wrong, as a message.
    pub fn message(&self) -> crate::i18n::Message {
        crate::msg!("interval {secs} s is out of range: choose between 0.25 and 10 seconds", secs = self.0)
    }
}

impl crate::i18n::ToMessage for BadInterval {
    fn to_message(&self) -> crate::i18n::Message {
        self.message()
    }
}

/// In English (logs); a front end shows [`crate::i18n::ToMessage::to_message`] in its language.
impl std::fmt::Display for BadInterval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message().en())
    }
}

/// Seconds between two samples, within [`Interval::MIN_SECS`]..=[`Interval::MAX_SECS`].
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Interval(f64);

impl Interval {
    /// The shortest interval, seconds.
    pub const MIN_SECS: f64 = 0.25;
    /// The longest interval, seconds.
    pub const MAX_SECS: f64 = 10.0;
    /// The interval when nobody chose one: one second.
    pub const DEFAULT: Interval = Interval(1.0);
    /// `run`'s default: a measured job may last seconds, so it is sampled twice as often.
    pub const RUN_DEFAULT: Interval = Interval(0.5);

    /// `secs` when it is in the range.
    pub fn from_secs(secs: f64) -> Result<Interval, BadInterval> {
        if secs.is_finite() && (Self::MIN_SECS..=Self::MAX_SECS).contains(&secs) {
            Ok(Interval(secs))
        } else {
            Err(BadInterval(secs))
        }
    }

    /// `secs` brought into the range (a value that is not a number: the default).
    pub fn clamped(secs: f64) -> Interval {
        if secs.is_nan() { Self::DEFAULT } else { Interval(secs.clamp(Self::MIN_SECS, Self::MAX_SECS)) }
    }

    /// The command line's and the settings' parser: a number of seconds in the range.
    pub fn parse_message(s: &str) -> Result<Interval, crate::i18n::Message> {
        let v: f64 = s.trim().parse().map_err(|_| crate::msg!("'{value}' is not a number of seconds", value = s))?;
        Self::from_secs(v).map_err(|e| e.message())
    }

    /// Seconds.
    pub fn secs(self) -> f64 {
        self.0
    }

    /// As a duration.
    pub fn duration(self) -> Duration {
        Duration::from_secs_f64(self.0)
    }
}

impl Default for Interval {
    fn default() -> Interval {
        Self::DEFAULT
    }
}

impl std::fmt::Display for Interval {
    /// The seconds as typed: `1`, `0.5`, `0.25`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_range_one_parser_one_default() {
        assert_eq!(Interval::from_secs(0.25).map(Interval::secs), Ok(0.25));
        assert_eq!(Interval::from_secs(10.0).map(Interval::secs), Ok(10.0));
        for bad in [0.1, 11.0, f64::NAN, -1.0, f64::INFINITY] {
            let e = Interval::from_secs(bad).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains("between 0.25 and 10"), "{e}");
        }
        assert_eq!(Interval::parse_message(" 0.5 ").map(Interval::duration), Ok(Duration::from_millis(500)));
        assert!(Interval::parse_message("fast").is_err_and(|e| e.en().contains("not a number of seconds")));
        assert_eq!(Interval::clamped(99.0).secs(), 10.0);
        assert_eq!(Interval::clamped(0.0).secs(), 0.25);
        assert_eq!(Interval::clamped(f64::NAN), Interval::DEFAULT);
        assert_eq!(Interval::default().to_string(), "1");
        assert_eq!(Interval::parse_message(&Interval::DEFAULT.to_string()), Ok(Interval::DEFAULT));
    }
}
