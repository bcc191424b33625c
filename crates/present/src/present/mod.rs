//! Presentation helpers shared by the CLI, the GUI and reports: one wording and one unit for each
//! metric, so "memory bandwidth utilization" is never shown as "memory used".

pub mod checklist;
#[cfg(test)]
mod checklist_tests;
pub mod jobs;
pub mod smoke;
pub mod vram;

use crate::i18n::Lang;
use crate::telemetry::Reading;
use crate::telemetry::history::keys::GpuMetric;
use crate::telemetry::metric::MetricDef;
use crate::telemetry::sample::{GpuInfo, GpuSample, HostSample};
use crate::telemetry::throttle;
use crate::units;
use crate::{tr_in, tr_key};

/// Label of GPU (SM) utilization (shown through `crate::i18n::tr`).
pub const GPU_UTIL_LABEL: &str = tr_key!("GPU utilization");

/// Local time zone offset from UTC in seconds, read once.
pub fn local_offset_secs() -> i64 {
    i64::from(chrono::Local::now().offset().local_minus_utc())
}

/// Local wall-clock `HH:MM:SS` of sampler time `t`.
pub fn wall_clock(started_unix: f64, t: f64, offset_secs: i64) -> String {
    units::clock(started_unix + t + offset_secs as f64)
}

/// A version string from the inventory: the value, `n/a (reason)`, or `n/a` when the source has none.
pub fn version(v: &Option<Reading<String>>, lang: Lang) -> String {
    v.as_ref().map_or(tr_in!(lang, "n/a").to_string(), |r| r.show_in(lang, |s| crate::i18n::tr_in(lang, s)))
}

/// A GPU's name as shown: the hardware's own, or the demo's label in the reader's language (an
/// exact text of the catalogue; a hardware name is never one).
pub fn gpu_name(name: &str, lang: Lang) -> String {
    crate::i18n::tr_in(lang, name)
}

/// "Gen4 x16 (max Gen4 x16)"; parts that are unknown are left out or shown as n/a.
pub fn pcie_link(sample: &GpuSample, info: Option<&GpuInfo>, lang: Lang) -> String {
    let current = match (sample.pcie_gen.get(), sample.pcie_width.get()) {
        (Some(g), Some(w)) => format!("Gen{g} x{w}"),
        (Some(g), None) => format!("Gen{g}"),
        _ => tr_in!(lang, "n/a").to_string(),
    };
    let max = info.and_then(|i| match (i.max_pcie_gen.get(), i.max_pcie_width.get()) {
        (Some(g), Some(w)) => Some(format!("Gen{g} x{w}")),
        _ => None,
    });
    match max {
        Some(m) => tr_in!(lang, "{current} (max {max})", current = current, max = m),
        None => current,
    }
}

/// "20.0 / 24.0 GiB (83 %)".
pub fn vram(sample: &GpuSample, lang: Lang) -> String {
    match (sample.vram_used_bytes.get(), sample.vram_total_bytes.get()) {
        (Some(u), Some(t)) if t > 0 => {
            format!(
                "{:.1} / {:.1} GiB ({})",
                u as f64 / units::GIB,
                t as f64 / units::GIB,
                units::percent_whole_in(lang, 100.0 * u as f64 / t as f64)
            )
        }
        _ => sample.vram_used_bytes.show_in(lang, |u| units::bytes(*u)),
    }
}

/// "410 / 450 W".
pub fn power(sample: &GpuSample, lang: Lang) -> String {
    match (sample.power_w.get(), sample.power_limit_w.get()) {
        (Some(p), Some(l)) => format!("{p:.0} / {l:.0} W"),
        (Some(p), None) => format!("{p:.0} W"),
        _ => sample.power_w.show_in(lang, |p| format!("{p:.0} W")),
    }
}

/// "72 °C (slowdown at 90 °C)".
pub fn temperature(sample: &GpuSample, info: Option<&GpuInfo>, lang: Lang) -> String {
    let t = sample.temp_c.show_in(lang, |t| format!("{t} °C"));
    match info.and_then(|i| i.slowdown_temp_c.get()) {
        Some(s) if sample.temp_c.get().is_some() => {
            tr_in!(lang, "{temp} (slowdown at {slowdown} °C)", temp = t, slowdown = s)
        }
        _ => t,
    }
}

/// "2520 / 2790 MHz".
pub fn sm_clock(sample: &GpuSample, info: Option<&GpuInfo>, lang: Lang) -> String {
    match (sample.sm_clock_mhz.get(), info.and_then(|i| i.max_sm_clock_mhz.get())) {
        (Some(c), Some(m)) => format!("{c} / {m} MHz"),
        _ => sample.sm_clock_mhz.show_in(lang, |c| format!("{c} MHz")),
    }
}

/// A GPU metric's value as a line of values shows it (`monitor`): VRAM, power and the SM clock
/// with what they are measured against ("20.0 / 24.0 GiB (83 %)", "410 / 450 W", "2520 / 2790
/// MHz"), any other metric in its unit ("97 %", "72 °C", "1.20 GB/s"); "n/a" when it has none.
pub fn gpu_metric(def: &MetricDef, sample: &GpuSample, info: Option<&GpuInfo>, lang: Lang) -> String {
    match def.key {
        GpuMetric::VramUsed => vram(sample, lang),
        GpuMetric::Power => power(sample, lang),
        GpuMetric::SmClock => sm_clock(sample, info, lang),
        _ => (def.read)(sample).map_or_else(|| tr_in!(lang, "n/a").to_string(), |v| def.unit.format_in(lang, v)),
    }
}

/// Short throttle summary: "none", "power cap", or the reason when unavailable.
pub fn throttle_summary(sample: &GpuSample, lang: Lang) -> String {
    sample.throttle_mask.show_in(lang, |m| throttle::summary_message(*m).render(lang))
}

/// Percentage reading as "97 %".
pub fn pct(r: &Reading<f64>, lang: Lang) -> String {
    r.show_short_in(lang, |v| units::percent_in(lang, *v))
}

/// A finding as a sentence for a headline: capital first letter, one final full stop (the
/// Chinese full stop `。` when the text is written in Chinese).
///
/// ```
/// assert_eq!(gpu_doctor_present::present::sentence("no GPU was passed in"), "No GPU was passed in.");
/// ```
pub fn sentence(text: &str) -> String {
    let t = text.trim().trim_end_matches(['.', '。']);
    let stop = if t.chars().any(is_cjk) { '。' } else { '.' };
    let mut c = t.chars();
    match c.next() {
        Some(first) => format!("{}{}{stop}", first.to_uppercase(), c.as_str()),
        None => String::new(),
    }
}

/// A Chinese character or full-width punctuation mark.
fn is_cjk(c: char) -> bool {
    matches!(c, '\u{3000}'..='\u{303F}' | '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{FF00}'..='\u{FFEF}')
}

/// "38.0 / 64.0 GiB" for host RAM.
pub fn ram(host: &HostSample, lang: Lang) -> String {
    host.memory.show_in(lang, |m| {
        format!("{:.1} / {:.1} GiB", m.ram_used_bytes as f64 / units::GIB, m.ram_total_bytes as f64 / units::GIB)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::GpuSource;
    use crate::telemetry::demo::{DemoGpus, Scenario};

    #[test]
    fn link_and_vram_wording() {
        let demo = DemoGpus::new(Scenario::HealthyTraining, 1, 1);
        let s = demo.sample(1.0).remove(0);
        let inv = demo.inventory();
        let info = inv.gpus.first();
        assert_eq!(pcie_link(&s, info, Lang::En), "Gen4 x16 (max Gen4 x16)");
        assert!(
            vram(&s, Lang::En).ends_with("GiB (83 %)") || vram(&s, Lang::En).contains("/ 24.0 GiB"),
            "{}",
            vram(&s, Lang::En)
        );
        assert!(temperature(&s, info, Lang::En).contains("slowdown at 90 °C"));
        let lost = GpuSample::unavailable(0, crate::telemetry::sample::GpuHealth::Ok, "not supported on this GPU");
        assert_eq!(pcie_link(&lost, None, Lang::En), "n/a");
        assert_eq!(power(&lost, Lang::En), "n/a (not supported on this GPU)");
        assert_eq!(wall_clock(3600.0, 61.0, 0), "01:01:01");
        let metric =
            |m| crate::telemetry::metric::def(m).map(|d| gpu_metric(d, &s, info, Lang::En)).unwrap_or_default();
        assert!(metric(GpuMetric::Temp).ends_with(" °C"), "{}", metric(GpuMetric::Temp));
        assert_eq!(metric(GpuMetric::VramUsed), vram(&s, Lang::En));
        let missing =
            |m| crate::telemetry::metric::def(m).map(|d| gpu_metric(d, &lost, None, Lang::En)).unwrap_or_default();
        assert_eq!(missing(GpuMetric::Util), "n/a");
        assert_eq!(missing(GpuMetric::Power), "n/a (not supported on this GPU)");
    }
}
