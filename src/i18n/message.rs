//! Messages as data: a text of gpu-doctor's own kept as its catalogue key (the English template,
//! as [`crate::tr!`] writes it) and its arguments, rendered in a language chosen where it is shown
//! ([`Message::render`]), not where it is made. A message crosses a process or a machine whole
//! (JSON: `{"key": "...", "args": {"name": value}}`), so a server's or a child's text is shown in
//! the reader's language without recovering it from English prose, and a language switch redraws
//! it. Values that are data (a name, a path, a command, a number already formatted) are
//! [`Arg::Text`] and never translated; a message inside a message is [`Arg::Msg`].
//!
//! A key this build does not know (from a newer version) is shown as its English template,
//! filled: nothing is lost.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Lang, ZH, fill};

/// One argument of a [`Message`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Arg {
    /// A whole number.
    Int(i64),
    /// A message of its own, rendered in the same language.
    Msg(Box<Message>),
    /// Data, shown as it is in every language.
    Text(String),
}

/// A text of gpu-doctor's own as data: its key and its arguments by name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// The English template, which is the catalogue's key (`"GPU {i} lost: {why}"`).
    pub key: String,
    /// The placeholders' values, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub args: BTreeMap<String, Arg>,
}

impl Message {
    /// The message `key` without arguments (use [`crate::msg!`], which the catalogue test reads).
    pub fn new(key: &str) -> Message {
        Message { key: key.to_string(), args: BTreeMap::new() }
    }

    /// This message with the placeholder `name` set to `value`.
    pub fn arg(mut self, name: &str, value: impl Into<Arg>) -> Message {
        self.args.insert(name.to_string(), value.into());
        self
    }

    /// The message in `lang`: the catalogue's translation of the key (the key itself in English
    /// or when there is none), its placeholders filled with the arguments rendered in `lang`.
    pub fn render(&self, lang: Lang) -> String {
        let template = match lang {
            Lang::En => self.key.as_str(),
            Lang::ZhCn => ZH.get(&self.key).map_or(self.key.as_str(), String::as_str),
        };
        let values: Vec<(&str, String)> = self
            .args
            .iter()
            .map(|(name, a)| {
                let v = match a {
                    Arg::Int(n) => n.to_string(),
                    Arg::Msg(m) => m.render(lang),
                    Arg::Text(t) => t.clone(),
                };
                (name.as_str(), v)
            })
            .collect();
        let refs: Vec<(&str, &dyn std::fmt::Display)> =
            values.iter().map(|(n, v)| (*n, v as &dyn std::fmt::Display)).collect();
        fill(template, &refs)
    }

    /// The message in English, the language of `--json` text fields and of logs.
    pub fn en(&self) -> String {
        self.render(Lang::En)
    }
}

impl From<Message> for Arg {
    fn from(m: Message) -> Arg {
        Arg::Msg(Box::new(m))
    }
}

impl From<String> for Arg {
    fn from(s: String) -> Arg {
        Arg::Text(s)
    }
}

impl From<&String> for Arg {
    fn from(s: &String) -> Arg {
        Arg::Text(s.clone())
    }
}

impl From<&str> for Arg {
    fn from(s: &str) -> Arg {
        Arg::Text(s.to_string())
    }
}

macro_rules! int_arg {
    ($($t:ty),*) => {
        $(impl From<$t> for Arg {
            fn from(n: $t) -> Arg {
                i64::try_from(n).map_or_else(|_| Arg::Text(n.to_string()), Arg::Int)
            }
        })*
    };
}
int_arg!(u8, u16, u32, u64, usize, i32, i64);

/// A message as data: `msg!("GPU {i} lost: {why}", i = 0, why = reason)`. Like [`crate::tr!`], but
/// nothing is rendered until the reader's language is known ([`Message::render`]).
#[macro_export]
macro_rules! msg {
    ($en:literal) => {
        $crate::i18n::Message::new($en)
    };
    ($en:literal, $($name:ident = $value:expr),+ $(,)?) => {
        $crate::i18n::Message::new($en)$(.arg(stringify!($name), $value))+
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_message_renders_in_both_languages_in_one_process() {
        let m = crate::msg!("GPU {gpu} lost: {why}", gpu = 3u32, why = "fell off the bus");
        assert_eq!(m.render(Lang::En), "GPU 3 lost: fell off the bus");
        assert_eq!(m.render(Lang::ZhCn), "GPU 3 掉线：fell off the bus");
        // Nested messages follow the reader's language; data does not.
        let outer = crate::msg!("{label}: {value}", label = crate::msg!("Checklist"), value = "ok");
        assert_eq!(outer.render(Lang::ZhCn), "检查清单：ok");
        assert_eq!(outer.render(Lang::En), "Checklist: ok");
    }

    #[test]
    fn a_message_crosses_json_whole_and_an_unknown_key_shows_its_english() {
        let m = crate::msg!("GPU {gpu} lost: {why}", gpu = 1u32, why = crate::msg!("Checklist"));
        let json = serde_json::to_string(&m).unwrap_or_default();
        assert_eq!(json, r#"{"key":"GPU {gpu} lost: {why}","args":{"gpu":1,"why":{"key":"Checklist"}}}"#);
        let back: Message = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, m);
        assert_eq!(back.render(Lang::ZhCn), "GPU 1 掉线：检查清单");
        let newer: Message =
            serde_json::from_str(r#"{"key":"A text from a newer {what}","args":{"what":"server"}}"#).unwrap();
        assert_eq!(newer.render(Lang::ZhCn), "A text from a newer server");
    }
}
