//! Clock-event (throttle) reasons: NVML's bit mask decoded into sentences a newcomer can act on.
//!
//! Bit values follow NVML's `nvmlClocksEventReasons` defines (the same mask as the older
//! "clocks throttle reasons").

use serde::{Deserialize, Serialize};

use crate::tr_key;

/// How much a reason matters to someone asking "why is my GPU slow?".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Severity {
    /// Expected behaviour (idle, settings chosen by the user).
    Info,
    /// Performance is limited; often normal under heavy load but worth knowing.
    Warn,
    /// A protective slowdown that costs half the clock or more.
    Severe,
}

/// One decoded reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThrottleReason {
    /// The NVML bit.
    pub bit: u64,
    /// Short name, e.g. "power cap" (a catalogue key: `Message::new(name)`).
    pub name: &'static str,
    /// A plain sentence: what it means and what to do (a catalogue key).
    pub sentence: &'static str,
    /// How much it matters.
    pub severity: Severity,
}

/// NVML bit: nothing runs on the GPU, clocks drop to idle.
pub const GPU_IDLE: u64 = 0x1;
/// NVML bit: applications-clocks setting.
pub const APPLICATIONS_CLOCKS: u64 = 0x2;
/// NVML bit: software power cap.
pub const SW_POWER_CAP: u64 = 0x4;
/// NVML bit: hardware slowdown.
pub const HW_SLOWDOWN: u64 = 0x8;
/// NVML bit: sync boost.
pub const SYNC_BOOST: u64 = 0x10;
/// NVML bit: software thermal slowdown.
pub const SW_THERMAL: u64 = 0x20;
/// NVML bit: hardware thermal slowdown.
pub const HW_THERMAL: u64 = 0x40;
/// NVML bit: hardware power brake.
pub const HW_POWER_BRAKE: u64 = 0x80;
/// NVML bit: display clock setting.
pub const DISPLAY_CLOCKS: u64 = 0x100;

const TABLE: [ThrottleReason; 9] = [
    ThrottleReason {
        bit: GPU_IDLE,
        name: tr_key!("idle"),
        sentence: tr_key!("Nothing is running on the GPU, so its clocks are lowered to save power (normal)."),
        severity: Severity::Info,
    },
    ThrottleReason {
        bit: APPLICATIONS_CLOCKS,
        name: tr_key!("application clocks"),
        sentence: tr_key!(
            "Clocks are held by an application-clocks setting (nvidia-smi --applications-clocks); reset it with nvidia-smi -rac if that was not intended."
        ),
        severity: Severity::Info,
    },
    ThrottleReason {
        bit: SW_POWER_CAP,
        name: tr_key!("power cap"),
        sentence: tr_key!(
            "Clocks are lowered to stay within the power limit. Normal under full load; if the limit looks low, compare it with the card's default limit."
        ),
        severity: Severity::Warn,
    },
    ThrottleReason {
        bit: HW_SLOWDOWN,
        name: tr_key!("hardware slowdown"),
        sentence: tr_key!(
            "The hardware cut the clocks by half or more (too hot, or the power supply signalled a problem). If it persists, check cooling and power cables."
        ),
        severity: Severity::Severe,
    },
    ThrottleReason {
        bit: SYNC_BOOST,
        name: tr_key!("sync boost"),
        sentence: tr_key!("The GPU is held to the clocks of its sync-boost group (informational)."),
        severity: Severity::Info,
    },
    ThrottleReason {
        bit: SW_THERMAL,
        name: tr_key!("thermal limit"),
        sentence: tr_key!(
            "The GPU is above its maximum operating temperature, so the driver lowers clocks. Improve airflow or clean the cooler."
        ),
        severity: Severity::Warn,
    },
    ThrottleReason {
        bit: HW_THERMAL,
        name: tr_key!("hardware thermal slowdown"),
        sentence: tr_key!(
            "The GPU is far too hot and the hardware halved its clocks. Check fans, airflow and the heatsink now."
        ),
        severity: Severity::Severe,
    },
    ThrottleReason {
        bit: HW_POWER_BRAKE,
        name: tr_key!("power brake"),
        sentence: tr_key!(
            "An external power-brake signal (often the power supply) halved the clocks. Check the PSU and the GPU's power cables."
        ),
        severity: Severity::Severe,
    },
    ThrottleReason {
        bit: DISPLAY_CLOCKS,
        name: tr_key!("display clocks"),
        sentence: tr_key!("Clocks are limited by the display clock setting (informational)."),
        severity: Severity::Info,
    },
];

/// Decodes a reason mask into its known reasons, most severe first, their names and sentences as
/// catalogue keys. Unknown bits are reported once as "other reasons (0x...)" so newer
/// drivers never make the decoder lose information.
pub fn decode(mask: u64) -> Vec<ThrottleReason> {
    let mut out: Vec<ThrottleReason> = TABLE
        .iter()
        .filter(|r| mask & r.bit != 0)
        .map(|r| ThrottleReason { bit: r.bit, name: r.name, sentence: r.sentence, severity: r.severity })
        .collect();
    out.sort_by_key(|r| std::cmp::Reverse(r.severity));
    out
}

/// Bits in `mask` this decoder does not know.
pub fn unknown_bits(mask: u64) -> u64 {
    let known = TABLE.iter().fold(0, |acc, r| acc | r.bit);
    mask & !known
}

/// One line for a card or table cell: "none", or the short names joined, e.g.
/// "hardware thermal slowdown, power cap"; the names are catalogue texts, so it renders in the
/// reader's language where it is shown.
pub fn summary_message(mask: u64) -> crate::i18n::Message {
    use crate::i18n::Message;
    let mut reasons: Vec<(Severity, &'static str)> =
        TABLE.iter().filter(|r| mask & r.bit != 0).map(|r| (r.severity, r.name)).collect();
    reasons.sort_by_key(|r| std::cmp::Reverse(r.0));
    let mut names: Vec<Message> = reasons.iter().map(|r| Message::new(r.1)).collect();
    let unknown = unknown_bits(mask);
    if unknown != 0 {
        names.push(crate::msg!("other ({bits})", bits = format!("0x{unknown:x}")));
    }
    if names.is_empty() { crate::msg!("none") } else { Message::join(names, &crate::msg!(", ")) }
}

/// Full sentences for every reason in the mask; empty when the clocks are not held back.
pub fn sentence_messages(mask: u64) -> Vec<crate::i18n::Message> {
    use crate::i18n::Message;
    let mut reasons: Vec<(Severity, &'static str)> =
        TABLE.iter().filter(|r| mask & r.bit != 0).map(|r| (r.severity, r.sentence)).collect();
    reasons.sort_by_key(|r| std::cmp::Reverse(r.0));
    let mut out: Vec<Message> = reasons.iter().map(|r| Message::new(r.1)).collect();
    let unknown = unknown_bits(mask);
    if unknown != 0 {
        out.push(crate::msg!(
            "The driver reports a reason this version of gpu-doctor does not know (bits {bits}).",
            bits = format!("0x{unknown:x}")
        ));
    }
    out
}

/// True when the mask holds a reason that lowers performance under load (anything but idle and
/// informational settings).
pub fn is_limiting(mask: u64) -> bool {
    decode(mask).iter().any(|r| r.severity >= Severity::Warn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_bits_most_severe_first() {
        let r = decode(SW_POWER_CAP | HW_THERMAL | GPU_IDLE);
        let names: Vec<_> = r.iter().map(|x| x.name).collect();
        assert_eq!(names, ["hardware thermal slowdown", "power cap", "idle"]);
        assert_eq!(summary_message(0).en(), "none");
        assert_eq!(summary_message(SW_POWER_CAP).en(), "power cap");
        assert_eq!(
            summary_message(SW_POWER_CAP | HW_THERMAL).render(crate::i18n::Lang::ZhCn),
            "硬件过热降频、功耗上限"
        );
    }

    #[test]
    fn unknown_bits_are_kept() {
        assert_eq!(unknown_bits(0x400 | SW_POWER_CAP), 0x400);
        assert_eq!(summary_message(0x400).en(), "other (0x400)");
        assert_eq!(sentence_messages(0x400).len(), 1);
    }

    #[test]
    fn limiting_excludes_idle_and_settings() {
        assert!(!is_limiting(GPU_IDLE | APPLICATIONS_CLOCKS));
        assert!(is_limiting(SW_THERMAL));
        assert!(sentence_messages(HW_POWER_BRAKE).iter().any(|s| s.en().contains("power supply")));
    }
}
