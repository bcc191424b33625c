//! Human-readable formatting of the units the product shows: bytes, rates, percentages, watts.
//!
//! One place decides how a number looks, so the GUI, the CLI table and reports agree.

use crate::i18n::Lang;
use serde::{Deserialize, Serialize};

/// How byte quantities are shown (the "Byte units" setting). A value passed to formatting, never
/// process-wide state: the GUI passes the user's choice, the CLI and reports use the default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ByteUnits {
    /// GiB, MiB (powers of 1024), as the driver tools show them.
    #[default]
    Binary,
    /// GB, MB (powers of 1000), as vendors print them on the box.
    Decimal,
}

/// Bytes in one GiB.
pub const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// Formats a byte count with binary prefixes: `512 B`, `1.5 KiB`, `23.9 GiB`.
///
/// ```
/// assert_eq!(gpu_doctor_core::units::bytes(1536), "1.5 KiB");
/// ```
pub fn bytes(n: u64) -> String {
    bytes_in(n, ByteUnits::Binary)
}

/// Formats a byte count in the chosen units: `1.5 KiB` (binary) or `1.5 kB` (decimal).
///
/// ```
/// use gpu_doctor_core::units::{ByteUnits, bytes_in};
/// assert_eq!(bytes_in(24 * 1024 * 1024 * 1024, ByteUnits::Decimal), "25.8 GB");
/// ```
pub fn bytes_in(n: u64, units: ByteUnits) -> String {
    let (units, step) = if units == ByteUnits::Decimal {
        (["B", "kB", "MB", "GB", "TB", "PB"], 1000.0)
    } else {
        (["B", "KiB", "MiB", "GiB", "TiB", "PiB"], 1024.0)
    };
    let mut value = n as f64;
    let mut unit = 0;
    while value >= step && unit + 1 < units.len() {
        value /= step;
        unit += 1;
    }
    if unit == 0 { format!("{n} B") } else { format!("{value:.1} {}", units.get(unit).copied().unwrap_or("B")) }
}

/// Formats a transfer rate in bytes per second with decimal prefixes, as disk and network tools do:
/// `0 B/s`, `12.3 MB/s`, `1.20 GB/s`.
///
/// ```
/// assert_eq!(gpu_doctor_core::units::rate(12_300_000.0), "12.3 MB/s");
/// ```
pub fn rate(bytes_per_sec: f64) -> String {
    let v = bytes_per_sec.max(0.0);
    if v >= 1e9 {
        format!("{:.2} GB/s", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.1} MB/s", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} kB/s", v / 1e3)
    } else {
        format!("{v:.0} B/s")
    }
}

/// Formats a percentage with no decimals below 10 % precision needs, as `lang` writes it:
/// `7.5 %`, `93 %` (Chinese writes the sign against the number: `93%`).
pub fn percent_in(lang: Lang, p: f64) -> String {
    if p < 10.0 && p > 0.0 { format!("{p:.1}{}%", percent_space(lang)) } else { percent_whole_in(lang, p) }
}

/// A whole percentage as `lang` writes it: `83 %` in English, `83%` in Chinese.
pub fn percent_whole_in(lang: Lang, p: f64) -> String {
    format!("{p:.0}{}%", percent_space(lang))
}

/// What stands between a number and its percent sign in `lang`.
fn percent_space(lang: Lang) -> &'static str {
    if lang == Lang::ZhCn { "" } else { " " }
}

/// The unit of a metric's values (the metric table's, `telemetry::metric`): how a value is
/// written, one way on every surface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricUnit {
    /// Percent, 0-100.
    Percent,
    /// Percent of one CPU core (above 100 when a process tree runs on several cores).
    CorePercent,
    /// Bytes.
    Bytes,
    /// Bytes per second.
    BytesPerSec,
    /// Watts.
    Watts,
    /// Degrees Celsius.
    Celsius,
    /// Megahertz.
    Mhz,
    /// 0 or 1 (a state off or on); a mean over time is the share of the time it was on.
    Flag,
    /// A plain number (a load average).
    Number,
}

impl MetricUnit {
    /// A value as a reading shows it in `lang`: `7.5 %`, `23.9 GiB`, `1.20 GB/s`, `410 W`,
    /// `72 °C`, `2520 MHz`; a flag as the share of time it was on (`100 %`).
    pub fn format_in(self, lang: Lang, v: f64) -> String {
        match self {
            MetricUnit::Percent | MetricUnit::CorePercent => percent_in(lang, v),
            MetricUnit::Bytes => bytes(v.max(0.0) as u64),
            MetricUnit::BytesPerSec => rate(v),
            MetricUnit::Watts => format!("{v:.0} W"),
            MetricUnit::Celsius => format!("{v:.0} °C"),
            MetricUnit::Mhz => format!("{v:.0} MHz"),
            MetricUnit::Flag => percent_whole_in(lang, 100.0 * v),
            MetricUnit::Number => format!("{v:.2}"),
        }
    }

    /// A value in whole units, as a report's min / mean / max columns write it: percentages as
    /// `83 %` in every language, the rest as [`MetricUnit::format_in`].
    pub fn format_whole_in(self, lang: Lang, v: f64) -> String {
        match self {
            MetricUnit::Percent | MetricUnit::CorePercent => format!("{v:.0} %"),
            MetricUnit::Flag => format!("{:.0} %", 100.0 * v),
            other => other.format_in(lang, v),
        }
    }
}

/// Formats a duration in seconds as the shortest clear form: `45 s`, `5 min`, `1 h 30 min`.
pub fn duration_secs(secs: f64) -> String {
    let s = secs.round().max(0.0) as u64;
    if s < 60 {
        format!("{s} s")
    } else if s < 3600 {
        if s.is_multiple_of(60) { format!("{} min", s / 60) } else { format!("{} min {} s", s / 60, s % 60) }
    } else if s.is_multiple_of(3600) {
        format!("{} h", s / 3600)
    } else {
        format!("{} h {} min", s / 3600, (s % 3600) / 60)
    }
}

/// A duration for running prose, in the reader's words: "5 min" in English, "5 分钟" in Chinese
/// (docs/glossary-zh.md: units in words in prose). Labels and table cells keep
/// [`duration_secs`].
pub fn duration_words(secs: f64) -> crate::i18n::Message {
    let s = secs.round().max(0.0) as u64;
    if s < 60 {
        crate::msg!("{n} s", n = s)
    } else if s < 3600 {
        if s.is_multiple_of(60) {
            crate::msg!("{n} min", n = s / 60)
        } else {
            crate::msg!("{m} min {s} s", m = s / 60, s = s % 60)
        }
    } else if s.is_multiple_of(3600) {
        crate::msg!("{n} h", n = s / 3600)
    } else {
        crate::msg!("{h} h {m} min", h = s / 3600, m = (s % 3600) / 60)
    }
}

/// Formats a clock-time offset of seconds as `HH:MM:SS` (wrapping at 24 h), for chart axes.
pub fn clock(secs_of_day: f64) -> String {
    let s = secs_of_day.rem_euclid(86_400.0) as u64;
    format!("{:02}:{:02}:{:02}", s / 3600, (s % 3600) / 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_use_binary_prefixes() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(24 * 1024 * 1024 * 1024), "24.0 GiB");
    }

    #[test]
    fn rates_use_decimal_prefixes() {
        assert_eq!(rate(0.0), "0 B/s");
        assert_eq!(rate(-5.0), "0 B/s");
        assert_eq!(rate(12_300_000.0), "12.3 MB/s");
        assert_eq!(rate(1_200_000_000.0), "1.20 GB/s");
    }

    #[test]
    fn durations_and_clock() {
        assert_eq!(duration_secs(45.0), "45 s");
        assert_eq!(duration_secs(300.0), "5 min");
        // In prose the unit is a word in the reader's language.
        let zh = |secs| duration_words(secs).render(crate::i18n::Lang::ZhCn);
        assert_eq!(duration_words(300.0).en(), "5 min");
        assert_eq!(zh(60.0), "1 分钟");
        assert_eq!(zh(90.0), "1 分 30 秒");
        assert_eq!(zh(45.0), "45 秒");
        assert_eq!(zh(7200.0), "2 小时");
        assert_eq!(zh(3900.0), "1 小时 5 分钟");
        assert_eq!(duration_secs(5400.0), "1 h 30 min");
        assert_eq!(clock(3661.0), "01:01:01");
        assert_eq!(clock(86_400.0 + 5.0), "00:00:05");
        assert_eq!(percent_in(Lang::En, 7.52), "7.5 %");
        assert_eq!(percent_in(Lang::En, 93.4), "93 %");
        let zh = (percent_in(Lang::ZhCn, 7.52), percent_in(Lang::ZhCn, 43.0));
        assert_eq!(zh, ("7.5%".to_string(), "43%".to_string()), "Chinese writes no space before %");
    }

    #[test]
    fn metric_units_write_values_one_way() {
        assert_eq!(MetricUnit::Percent.format_in(Lang::En, 7.52), "7.5 %");
        assert_eq!(MetricUnit::Percent.format_whole_in(Lang::En, 7.52), "8 %");
        assert_eq!(MetricUnit::Bytes.format_in(Lang::En, 1536.0), "1.5 KiB");
        assert_eq!(MetricUnit::Bytes.format_in(Lang::En, -1.0), "0 B");
        assert_eq!(MetricUnit::BytesPerSec.format_whole_in(Lang::En, 1.2e9), "1.20 GB/s");
        assert_eq!(MetricUnit::Watts.format_in(Lang::En, 410.4), "410 W");
        assert_eq!(MetricUnit::Celsius.format_whole_in(Lang::En, 72.0), "72 °C");
        assert_eq!(MetricUnit::Mhz.format_in(Lang::En, 2520.0), "2520 MHz");
        assert_eq!(MetricUnit::Flag.format_whole_in(Lang::En, 0.25), "25 %");
        assert_eq!(MetricUnit::CorePercent.format_whole_in(Lang::En, 250.0), "250 %");
    }
}
