//! [`Reading`]: a measured value, or the reason there is none.
//!
//! "Not supported on this GPU" is normal data in this product, never an error popup. Every
//! metric is a `Reading`, so the UI can show `n/a (reason)` and the JSON output carries the reason.

use serde::{Deserialize, Serialize};

use crate::i18n::Message;

/// A measured value or the reason it is missing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Reading<T> {
    /// The value was measured.
    Value(T),
    /// No value; `na` says why (for example "not supported on this GPU").
    Na {
        /// Why there is no value, in plain words (compact: kept in every sample of a recording).
        #[serde(with = "crate::i18n::message::compact")]
        na: Message,
    },
}

impl<T> Reading<T> {
    /// A missing value with its reason (a message of gpu-doctor's own, or a library's error
    /// text as data).
    pub fn na(reason: impl Into<Message>) -> Self {
        Reading::Na { na: reason.into() }
    }

    /// Why there is no value, when there is none.
    pub fn na_reason(&self) -> Option<&Message> {
        match self {
            Reading::Na { na } => Some(na),
            Reading::Value(_) => None,
        }
    }

    /// The value, if there is one.
    pub fn value(&self) -> Option<&T> {
        match self {
            Reading::Value(v) => Some(v),
            Reading::Na { .. } => None,
        }
    }

    /// The reason, if the value is missing.
    pub fn reason(&self) -> Option<&Message> {
        match self {
            Reading::Value(_) => None,
            Reading::Na { na } => Some(na),
        }
    }

    /// Maps the value, keeping the reason.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Reading<U> {
        match self {
            Reading::Value(v) => Reading::Value(f(v)),
            Reading::Na { na } => Reading::Na { na },
        }
    }

    /// Borrowing variant of [`Reading::map`].
    pub fn as_ref(&self) -> Reading<&T> {
        match self {
            Reading::Value(v) => Reading::Value(v),
            Reading::Na { na } => Reading::Na { na: na.clone() },
        }
    }

    /// Formats the value with `f`, or `n/a (reason)` in `lang`.
    pub fn show_in(&self, lang: crate::i18n::Lang, f: impl FnOnce(&T) -> String) -> String {
        match self {
            Reading::Value(v) => f(v),
            Reading::Na { na } => crate::msg!("n/a ({reason})", reason = na).render(lang),
        }
    }

    /// Formats the value with `f`, or a short `n/a` in `lang` (for narrow table cells).
    pub fn show_short_in(&self, lang: crate::i18n::Lang, f: impl FnOnce(&T) -> String) -> String {
        match self {
            Reading::Value(v) => f(v),
            Reading::Na { .. } => crate::msg!("n/a").render(lang),
        }
    }
}

impl<T: Copy> Reading<T> {
    /// The value copied out, if there is one.
    pub fn get(&self) -> Option<T> {
        self.value().copied()
    }
}

/// A result's error is the reason (a message, or a library's text as data).
impl<T, E: Into<Message>> From<Result<T, E>> for Reading<T> {
    fn from(r: Result<T, E>) -> Self {
        match r {
            Ok(v) => Reading::Value(v),
            Err(e) => Reading::na(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_value_or_reason() {
        let ok: Reading<u32> = Reading::Value(42);
        let na: Reading<u32> = Reading::na("not supported on this GPU");
        let en = crate::i18n::Lang::En;
        assert_eq!(ok.show_in(en, |v| format!("{v} W")), "42 W");
        assert_eq!(na.show_in(en, |v| format!("{v} W")), "n/a (not supported on this GPU)");
        assert_eq!(na.show_short_in(en, |v| v.to_string()), "n/a");
        assert_eq!(ok.get(), Some(42));
        assert_eq!(na.reason().map(Message::en).as_deref(), Some("not supported on this GPU"));
    }

    #[test]
    fn serializes_value_plainly_and_reason_as_object() {
        let ok: Reading<u32> = Reading::Value(7);
        let na: Reading<u32> = Reading::na("no fan");
        assert_eq!(serde_json::to_string(&ok).ok().as_deref(), Some("7"));
        assert_eq!(serde_json::to_string(&na).ok().as_deref(), Some(r#"{"na":"no fan"}"#));
        let back: Reading<u32> = serde_json::from_str(r#"{"na":"no fan"}"#).unwrap_or(Reading::Value(0));
        assert_eq!(back, na);
        // A reason of gpu-doctor's own travels as its message and renders in the reader's language.
        let lost: Reading<u32> = Reading::na(crate::msg!("GPU lost"));
        let json = serde_json::to_string(&lost).unwrap_or_default();
        assert_eq!(json, r#"{"na":"GPU lost"}"#);
        let back: Reading<u32> = serde_json::from_str(&json).unwrap_or(Reading::Value(0));
        assert_eq!(
            back.reason().map(|r| r.render(crate::i18n::Lang::ZhCn)),
            lost.reason().map(|r| r.render(crate::i18n::Lang::ZhCn))
        );
        assert_ne!(back.reason().map(|r| r.render(crate::i18n::Lang::ZhCn)).as_deref(), Some("GPU lost"));
    }
}
