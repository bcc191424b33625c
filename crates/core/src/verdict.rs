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

    /// The verdict's word: its catalogue key (the English `tag`).
    fn key(self) -> &'static str {
        match self {
            Verdict::Skipped => crate::tr_key!("SKIPPED"),
            Verdict::Pass => crate::tr_key!("PASS"),
            Verdict::Info => crate::tr_key!("INFO"),
            Verdict::Warn => crate::tr_key!("WARN"),
            Verdict::Fail => crate::tr_key!("FAIL"),
        }
    }

    /// The verdict in a word of `lang`, as the window and reports show it.
    pub fn word_in(self, lang: crate::i18n::Lang) -> &'static str {
        crate::i18n::tr_static(lang, self.key())
    }

    /// The verdict's word as a message, for a text made before its language is known.
    pub fn word_message(self) -> crate::i18n::Message {
        crate::i18n::Message::new(self.key())
    }
}
