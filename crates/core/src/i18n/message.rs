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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Arg {
    /// A whole number.
    Int(i64),
    /// Data, shown as it is in every language. (Before [`Arg::Msg`]: a JSON string is data.)
    Text(String),
    /// A message of its own, rendered in the same language.
    Msg(Box<Message>),
}

/// A text of gpu-doctor's own as data: its key and its arguments by name. As JSON it is
/// `{"key": ..., "args": {...}, "text": "the English"}` (the English for scripts and older readers);
/// read back, a plain string (what older versions wrote) is [`Message::from_english`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(from = "MessageWire")]
pub struct Message {
    /// The English template, which is the catalogue's key (`"GPU {i} lost: {why}"`).
    pub key: String,
    /// The placeholders' values, by name.
    pub args: BTreeMap<String, Arg>,
}

impl Serialize for Message {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut o = s.serialize_struct("Message", 3)?;
        o.serialize_field("key", &self.key)?;
        if self.args.is_empty() {
            o.skip_field("args")?;
        } else {
            o.serialize_field("args", &self.args)?;
        }
        o.serialize_field("text", &self.en())?;
        o.end()
    }
}

/// A message as JSON: the object, or an older version's English string.
#[derive(Deserialize)]
#[serde(untagged)]
enum MessageWire {
    /// `{"key": ..., "args": ...}`.
    Whole {
        key: String,
        #[serde(default)]
        args: BTreeMap<String, Arg>,
    },
    /// `"English text"`.
    English(String),
}

impl From<MessageWire> for Message {
    fn from(w: MessageWire) -> Message {
        match w {
            MessageWire::Whole { key, args } => Message { key, args },
            MessageWire::English(text) => Message::from_english(&text),
        }
    }
}

/// Something that says itself to a person as a [`Message`]: a message, or an error of the
/// domain (its reason), which a front end renders in the language it shows.
pub trait ToMessage {
    /// What it says, as a message.
    fn to_message(&self) -> Message;
}

impl ToMessage for Message {
    fn to_message(&self) -> Message {
        self.clone()
    }
}

impl Message {
    /// The message `key` without arguments (use [`crate::msg!`], which the catalogue test reads).
    pub fn new(key: &str) -> Message {
        Message { key: key.to_string(), args: BTreeMap::new() }
    }

    /// The message's catalogue key (its English text with placeholders).
    pub fn key(&self) -> &str {
        &self.key
    }

    /// This message with the placeholder `name` set to `value`.
    pub fn arg(mut self, name: &str, value: impl Into<Arg>) -> Message {
        self.args.insert(name.to_string(), value.into());
        self
    }

    /// The message in `lang`: the catalogue's translation of the key (the key itself in English
    /// or when there is none), its placeholders filled with the arguments rendered in `lang`.
    pub fn render(&self, lang: Lang) -> String {
        if self.key == LIST {
            let sep = self.args.get("sep").map(|s| arg_text(s, lang)).unwrap_or_default();
            let items: Vec<String> = self
                .args
                .iter()
                .filter(|(name, _)| name.bytes().all(|b| b.is_ascii_digit()))
                .map(|(_, a)| arg_text(a, lang))
                .collect();
            return items.join(&sep);
        }
        if self.key == FIRST_SENTENCE {
            let text = match self.args.get("text") {
                Some(Arg::Msg(m)) => m.render(lang),
                Some(Arg::Text(t)) => t.clone(),
                _ => String::new(),
            };
            let first = text.split(". ").next().unwrap_or(&text);
            return first.split('。').next().unwrap_or(first).trim_end_matches('.').to_string();
        }
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

    /// Data shown as it is in every language (a log line, a path, a value read from the machine):
    /// the key [`DATA`] with the text as its one argument.
    pub fn data(text: impl Into<String>) -> Message {
        Message::new(DATA).arg("data", Arg::Text(text.into()))
    }

    /// A text that came without its message (from an older version's JSON): its English is the
    /// key, so a text that is a whole catalogue text still renders in the reader's language.
    pub fn from_english(text: &str) -> Message {
        if text.is_empty() { Message::default() } else { Message::new(text) }
    }

    /// A stored string: the catalogue text it is, or data (shown as it is) when it is none.
    pub fn from_text(text: &str) -> Message {
        if text.is_empty() {
            Message::default()
        } else if super::ZH.contains_key(text) {
            Message::new(text)
        } else {
            Message::data(text)
        }
    }

    /// `items` joined by the message `sep` (`msg!(", ")`), each item and the separator rendered
    /// in the reader's language. Nothing for no items.
    /// The list is flat (one level however long it is): a server's list of 300 GPUs nests no
    /// deeper in JSON than a list of two.
    pub fn join(items: impl IntoIterator<Item = Message>, sep: &Message) -> Message {
        let mut items: Vec<Message> = items.into_iter().collect();
        if items.len() <= 1 {
            return items.pop().unwrap_or_default();
        }
        let mut m = Message::new(LIST).arg("sep", Arg::Msg(Box::new(sep.clone())));
        for (i, item) in items.into_iter().enumerate() {
            m.args.insert(format!("{i:06}"), Arg::Msg(Box::new(item)));
        }
        m
    }

    /// This message with every piece of data ([`Arg::Text`], in nested messages too) passed through
    /// `f` (redaction: a user name or a path inside a message is data).
    pub fn map_data(&self, f: &mut dyn FnMut(&str) -> String) -> Message {
        let args = self
            .args
            .iter()
            .map(|(name, a)| {
                let a = match a {
                    Arg::Int(n) => Arg::Int(*n),
                    Arg::Text(t) => Arg::Text(f(t)),
                    Arg::Msg(m) => Arg::Msg(Box::new(m.map_data(f))),
                };
                (name.clone(), a)
            })
            .collect();
        Message { key: self.key.clone(), args }
    }

    /// The first sentence of `m` in the reader's language, without its full stop.
    pub fn first_sentence(m: Message) -> Message {
        Message::new(FIRST_SENTENCE).arg("text", Arg::Msg(Box::new(m)))
    }

    /// Nothing to say (the empty key).
    pub fn is_empty(&self) -> bool {
        self.key.is_empty() || (self.key == DATA && matches!(self.args.get("data"), Some(Arg::Text(t)) if t.is_empty()))
    }

    /// The text, when this is [`Message::data`] (a value read from the machine, not a sentence).
    pub fn as_data(&self) -> Option<&str> {
        match (self.key.as_str(), self.args.get("data")) {
            (DATA, Some(Arg::Text(t))) => Some(t),
            _ => None,
        }
    }
}

/// A message kept compactly where it is stored many times (a reading's reason, a sample's
/// event, a recording): a message its English says whole (a catalogue text without arguments, or
/// data) is that string, as older versions wrote it; any other message is the object. Read back,
/// a string that is a catalogue text is that text's message, any other string is data. Use with
/// `#[serde(with = "crate::i18n::message::compact")]`.
pub mod compact {
    use serde::{Deserialize as _, Serialize as _};

    use super::{Message, MessageWire};

    /// The message as its string when the string says it whole, else as the object.
    pub fn serialize<S: serde::Serializer>(m: &Message, s: S) -> Result<S::Ok, S::Error> {
        match m.as_data() {
            Some(d) if !super::ZH.contains_key(d) => s.serialize_str(d),
            None if m.args.is_empty() => s.serialize_str(&m.key),
            _ => m.serialize(s),
        }
    }

    /// A string or the object.
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Message, D::Error> {
        Ok(match MessageWire::deserialize(d)? {
            MessageWire::Whole { key, args } => Message { key, args },
            MessageWire::English(text) => Message::from_text(&text),
        })
    }
}

/// [`compact`] for an optional message (`None` is `null`; use with `default`).
pub mod compact_option {
    use serde::Deserialize as _;

    use super::Message;

    /// The message compactly, or `null`.
    pub fn serialize<S: serde::Serializer>(m: &Option<Message>, s: S) -> Result<S::Ok, S::Error> {
        match m {
            Some(m) => super::compact::serialize(m, s),
            None => s.serialize_none(),
        }
    }

    /// A string, the object, or `null`.
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Message>, D::Error> {
        #[derive(serde::Deserialize)]
        struct Held(#[serde(with = "super::compact")] Message);
        Ok(Option::<Held>::deserialize(d)?.map(|h| h.0))
    }
}

/// The key of a message that is data, not a sentence ([`Message::data`]).
pub const DATA: &str = "{data}";

/// An argument as text in `lang`.
fn arg_text(a: &Arg, lang: Lang) -> String {
    match a {
        Arg::Int(n) => n.to_string(),
        Arg::Msg(m) => m.render(lang),
        Arg::Text(t) => t.clone(),
    }
}

/// The key of a message's first sentence ([`Message::first_sentence`]), cut where it is rendered:
/// a sentence ends at ". " in English and at "。" in Chinese.
pub const FIRST_SENTENCE: &str = "{first sentence of text}";

/// The key of a list of messages joined by a separator ([`Message::join`]): its items are the
/// arguments named by their position (`000000`, `000001`, ...), the separator is `sep`.
pub const LIST: &str = "{list}";

/// A value read from the machine or written by a person is data: it is never translated.
impl From<String> for Message {
    fn from(text: String) -> Message {
        Message::data(text)
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Message {
        Message::data(text)
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

/// A value on its way into a [`Message`]'s argument (see [`crate::msg!`]): messages stay messages,
/// whole numbers stay numbers, anything else that can be shown becomes data ([`Arg::Text`]).
#[doc(hidden)]
pub struct ArgOf<'a, T: ?Sized>(pub &'a T);

/// [`ArgOf`] for the kinds of value an argument keeps as they are (chosen before [`AsText`]).
#[doc(hidden)]
pub trait AsTyped {
    /// The argument.
    fn arg(&self) -> Arg;
}

/// [`ArgOf`] for any value shown with `Display`: data.
#[doc(hidden)]
pub trait AsText {
    /// The argument.
    fn arg(&self) -> Arg;
}

impl AsTyped for ArgOf<'_, Message> {
    fn arg(&self) -> Arg {
        Arg::Msg(Box::new(self.0.clone()))
    }
}

impl AsTyped for ArgOf<'_, &Message> {
    fn arg(&self) -> Arg {
        Arg::Msg(Box::new((*self.0).clone()))
    }
}

impl AsTyped for ArgOf<'_, Arg> {
    fn arg(&self) -> Arg {
        self.0.clone()
    }
}

macro_rules! typed_int {
    ($($t:ty),*) => {
        $(impl AsTyped for ArgOf<'_, $t> {
            fn arg(&self) -> Arg {
                Arg::from(*self.0)
            }
        }
        impl AsTyped for ArgOf<'_, &$t> {
            fn arg(&self) -> Arg {
                Arg::from(**self.0)
            }
        })*
    };
}
typed_int!(u8, u16, u32, u64, usize, i32, i64);

impl<T: std::fmt::Display + ?Sized> AsText for &ArgOf<'_, T> {
    fn arg(&self) -> Arg {
        Arg::Text(self.0.to_string())
    }
}

/// A message as data: `msg!("GPU {i} lost: {why}", i = 0, why = reason)`. Like [`crate::tr!`], but
/// nothing is rendered until the reader's language is known ([`Message::render`]). An argument
/// that is a [`Message`] stays one (rendered in the same language), a whole number stays a number,
/// anything else shown with `Display` is data.
#[macro_export]
macro_rules! msg {
    ($en:literal) => {
        $crate::i18n::Message::new($en)
    };
    ($en:literal, $($name:ident = $value:expr),+ $(,)?) => {{
        #[allow(unused_imports)]
        use $crate::i18n::message::{AsText as _, AsTyped as _};
        $crate::i18n::Message::new($en)$(.arg(stringify!($name), (&$crate::i18n::message::ArgOf(&$value)).arg()))+
    }};
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
    fn a_long_list_stays_flat_and_crosses_json() {
        // (Nested pairwise, 500 items would pass serde_json's depth limit and a server's
        // checklist would not be readable.)
        let items = (0..500).map(|i| Message::data(format!("GPU {i}")));
        let list = Message::join(items, &crate::msg!(", "));
        let json = serde_json::to_string(&list).unwrap_or_default();
        let back: Message = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, list);
        let zh = back.render(Lang::ZhCn);
        assert!(zh.starts_with("GPU 0、GPU 1、GPU 2") && zh.ends_with("GPU 498、GPU 499"), "{zh}");
        assert!(back.en().starts_with("GPU 0, GPU 1, "));
        assert_eq!(Message::join([Message::data("one")], &crate::msg!(", ")).en(), "one");
        assert!(Message::join(Vec::new(), &crate::msg!(", ")).is_empty());
    }

    #[test]
    fn a_message_crosses_json_whole_and_an_unknown_key_shows_its_english() {
        let m = crate::msg!("GPU {gpu} lost: {why}", gpu = 1u32, why = crate::msg!("Checklist"));
        let json = serde_json::to_string(&m).unwrap_or_default();
        assert_eq!(
            json,
            r#"{"key":"GPU {gpu} lost: {why}","args":{"gpu":1,"why":{"key":"Checklist","text":"Checklist"}},"text":"GPU 1 lost: Checklist"}"#
        );
        let back: Message = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, m);
        assert_eq!(back.render(Lang::ZhCn), "GPU 1 掉线：检查清单");
        let newer: Message =
            serde_json::from_str(r#"{"key":"A text from a newer {what}","args":{"what":"server"}}"#).unwrap();
        assert_eq!(newer.render(Lang::ZhCn), "A text from a newer server");
    }

    #[test]
    fn a_compact_message_is_a_string_when_its_english_says_it_whole() {
        #[derive(Serialize, Deserialize, PartialEq, Debug)]
        struct Held(#[serde(with = "compact")] Message);
        let json = |m: &Message| serde_json::to_string(&Held(m.clone())).unwrap_or_default();
        let back = |j: &str| serde_json::from_str::<Held>(j).map(|h| h.0).unwrap_or_else(|e| panic!("{e}"));
        let (key, data) = (crate::msg!("Checklist"), Message::data("libnvidia-ml.so.1: no such file"));
        let with_args = crate::msg!("GPU {gpu} lost: {why}", gpu = 1u32, why = "bus");
        // A data text that is by chance a catalogue text stays data.
        let data_like_key = Message::data("Checklist");
        assert_eq!(json(&key), r#""Checklist""#);
        assert_eq!(json(&data), r#""libnvidia-ml.so.1: no such file""#);
        assert!(json(&with_args).starts_with(r#"{"key":"#));
        assert!(json(&data_like_key).starts_with(r#"{"key":"{data}""#));
        for m in [key, data, with_args, data_like_key, Message::default()] {
            assert_eq!(back(&json(&m)), m);
        }
        assert_eq!(back(r#""Checklist""#).render(Lang::ZhCn), "检查清单");
    }
}
