//! The verdict every part of gpu-doctor gives (a check, a smoke-test stage, a bottleneck rule, a
//! run): one scale from "not applicable" to "GPU compute will not work", at the ground floor so
//! that each layer can give one without importing another.

use serde::{Deserialize, Serialize};

/// A check's outcome, from best to worst.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Not applicable here, blocked by an earlier failure, or its evidence is missing.
    Skipped,
    /// Healthy.
    Pass,
    /// Context only.
    Info,
    /// Works, but degraded or likely to bite later.
    Warn,
    /// GPU compute will not work (or a hardware fault).
    Fail,
}

impl Verdict {
    /// Upper-case word for text output, in the current language.
    /// The verdict as the command line's text output tags it, `[FAIL   ]`: ASCII in every language,
    /// so columns stay aligned and `grep FAIL` works on any machine.
    pub fn tag(self) -> &'static str {
        match self {
            Verdict::Skipped => "SKIPPED",
            Verdict::Pass => "PASS",
            Verdict::Info => "INFO",
            Verdict::Warn => "WARN",
            Verdict::Fail => "FAIL",
        }
    }

    /// The verdict in a word of the current language, as the window and reports show it.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Skipped => crate::tr!("SKIPPED"),
            Verdict::Pass => crate::tr!("PASS"),
            Verdict::Info => crate::tr!("INFO"),
            Verdict::Warn => crate::tr!("WARN"),
            Verdict::Fail => crate::tr!("FAIL"),
        }
    }

    /// The verdict's word as a message, for a text made before its language is known.
    pub fn word_message(self) -> crate::i18n::Message {
        match self {
            Verdict::Skipped => crate::msg!("SKIPPED"),
            Verdict::Pass => crate::msg!("PASS"),
            Verdict::Info => crate::msg!("INFO"),
            Verdict::Warn => crate::msg!("WARN"),
            Verdict::Fail => crate::msg!("FAIL"),
        }
    }
}
