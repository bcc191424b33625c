//! Putting an English text that was made elsewhere into the current language: a server's
//! checklist (`check --json` is English on every machine), the smoke test's child, a capture from
//! an older version. The text was made by this program's own `tr!` calls in English, so it is
//! one of the catalogue's texts with its placeholders filled: [`retranslate`] finds the text
//! (exactly, or as a template whose literal parts match), and fills the translation with the same
//! values, each of them looked up the same way (a value may be a translated text itself). A text
//! that is no catalogue text (a log line, a name) is left as it is.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use regex::{Regex, RegexSet};

use super::{Lang, ZH, current};

/// How deep values inside values are looked up.
const MAX_DEPTH: u32 = 3;

/// Templates with fewer letters than this in their literal text ("{a}: {b}", "{x} ({y})",
/// "{n} s") match almost anything and are never tried.
const MIN_LETTERS: usize = 3;

/// A template with fewer letters than this explains a text only when what it leaves untranslated
/// is data (numbers, names, paths), not English prose: "{a} driver {b}" must not take apart a
/// sentence nvidia-smi printed.
const SURE_LETTERS: usize = 16;

/// A template that starts with a label of at least this many letters ("kernel log: {line}",
/// "(earlier boot) {line}") puts data after it, English or not.
const LABEL_LETTERS: usize = 6;

/// The catalogue's texts with placeholders, as patterns.
struct Templates {
    set: RegexSet,
    each: Vec<Template>,
}

struct Template {
    regex: Regex,
    /// Placeholder names, in the order of the pattern's groups.
    names: Vec<String>,
    /// Letters in the literal (non-placeholder) text: the more, the surer a match.
    literal: usize,
    /// Characters of literal text (punctuation too): of two templates as sure, the longer.
    chars: usize,
    /// Letters of the literal text before the first placeholder (a label: "kernel log: {line}").
    prefix: usize,
    translation: String,
}

static TEMPLATES: LazyLock<Templates> = LazyLock::new(|| {
    let mut each = Vec::new();
    for (en, zh) in ZH.iter() {
        let Some((pattern, names, literal)) = pattern_of(en) else { continue };
        let Ok(regex) = Regex::new(&pattern) else { continue };
        let chars = en.chars().count() - names.iter().map(|n| n.len() + 2).sum::<usize>();
        let prefix = letters(en.split('{').next().unwrap_or(""));
        each.push(Template { regex, names, literal, chars, prefix, translation: zh.clone() });
    }
    // (Surest first, so that of several matches the one with the most literal text wins.)
    each.sort_by(|a, b| {
        (b.literal, b.chars).cmp(&(a.literal, a.chars)).then_with(|| a.regex.as_str().cmp(b.regex.as_str()))
    });
    let set = RegexSet::new(each.iter().map(|t| t.regex.as_str())).unwrap_or_else(|_| RegexSet::empty());
    Templates { set, each }
});

/// `^literal(.+?)literal…$` for a text with placeholders, with the names and the literal length;
/// `None` for a text without any.
fn pattern_of(en: &str) -> Option<(String, Vec<String>, usize)> {
    let mut pattern = String::from("(?s)^");
    let mut names = Vec::new();
    let mut literal = 0;
    let mut rest = en;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let close = after.find('}');
        let name = close
            .map(|c| &after[..c])
            .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        match (name, close) {
            (Some(name), Some(close)) => {
                pattern.push_str(&regex::escape(&rest[..open]));
                literal += letters(&rest[..open]);
                pattern.push_str("(.*?)");
                names.push(name.to_string());
                rest = &after[close + 1..];
            }
            _ => {
                pattern.push_str(&regex::escape(&rest[..=open]));
                literal += letters(&rest[..=open]);
                rest = after;
            }
        }
    }
    pattern.push_str(&regex::escape(rest));
    literal += letters(rest);
    pattern.push('$');
    (!names.is_empty() && literal >= MIN_LETTERS).then_some((pattern, names, literal))
}

fn letters(text: &str) -> usize {
    text.chars().filter(char::is_ascii_alphabetic).count()
}

/// The first sentences of the catalogue's texts of several sentences, with theirs: a headline is
/// often the first sentence of a longer text.
static FIRST: LazyLock<HashMap<String, String>> = LazyLock::new(|| {
    let mut out = HashMap::new();
    for (en, zh) in ZH.iter() {
        if en.contains('{') {
            continue;
        }
        let (Some((en_first, _)), Some((zh_first, _))) = (en.split_once(". "), zh.split_once('。')) else { continue };
        out.entry(en_first.to_string()).or_insert_with(|| zh_first.to_string());
    }
    out
});

/// Whether `text` holds English prose: three words in a row.
fn is_prose(text: &str) -> bool {
    let mut run = 0;
    for w in text.split_whitespace() {
        let w = w.trim_matches(|c: char| ",.;:()'\"".contains(c));
        if w.len() >= 2 && w.chars().all(|c| c.is_ascii_alphabetic()) {
            run += 1;
            if run >= 3 {
                return true;
            }
        } else {
            run = 0;
        }
    }
    false
}

static CACHE: LazyLock<Mutex<HashMap<String, String>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// `en`, an English text this program made (perhaps on another machine or in another process),
/// in the current language. Unknown text comes back unchanged.
pub fn retranslate(en: &str) -> String {
    if current() == Lang::En || en.trim().is_empty() {
        return en.to_string();
    }
    let key = format!("{}\n{en}", current().code());
    if let Some(hit) = CACHE.lock().ok().and_then(|c| c.get(&key).cloned()) {
        return hit;
    }
    let out = look_up(en, MAX_DEPTH);
    if let Ok(mut c) = CACHE.lock() {
        // (Texts come and go with what the window shows; a bounded cache is enough.)
        if c.len() > 4096 {
            c.clear();
        }
        c.insert(key, out.clone());
    }
    out
}

fn look_up(en: &str, depth: u32) -> String {
    look_up_scored(en, depth, false).0
}

/// The text in the current language, with how many pieces of English prose it leaves as they
/// were (0: all of it is explained). `strict`: only the catalogue's texts and sure templates (for
/// the parts of a text cut at a separator, which may be anything).
fn look_up_scored(en: &str, depth: u32, strict: bool) -> (String, usize) {
    if let Some(zh) = ZH.get(en).or_else(|| FIRST.get(en)) {
        return (zh.clone(), 0);
    }
    let unknown = || (en.to_string(), usize::from(is_prose(en)));
    if depth == 0 || en.chars().any(|c| c >= '\u{2E80}') {
        return unknown();
    }
    let t = &*TEMPLATES;
    // (text, prose it leaves, prose it leaves as seen from outside: none when the template is
    // sure of itself, the English in it then being data.)
    let mut best: Option<(String, usize, usize)> = None;
    // (The set's matches are in the templates' order, the surest first: of the readings that
    // leave the least prose, the surest.)
    for i in t.set.matches(en).iter() {
        let template = &t.each[i];
        let Some(caps) = template.regex.captures(en) else { continue };
        let mut left = 0;
        let values: Vec<(String, String)> = template
            .names
            .iter()
            .enumerate()
            .map(|(g, name)| {
                let (shown, l) = look_up_scored(caps.get(g + 1).map_or("", |m| m.as_str()), depth - 1, false);
                left += l;
                (name.clone(), shown)
            })
            .collect();
        // A short template that leaves prose is a guess ("{provider} driver {version}" inside a
        // sentence of nvidia-smi's), unless it is a label in front of data ("kernel log: {line}").
        // (What a sure template leaves in English is data inside one of our sentences: an error
        // of the system, a log line.)
        let sure = template.literal >= SURE_LETTERS || template.prefix >= LABEL_LETTERS;
        if (left > 0 || strict) && !sure {
            continue;
        }
        if best.as_ref().is_some_and(|(_, b, _)| *b <= left) {
            continue;
        }
        let args: Vec<(&str, &dyn std::fmt::Display)> =
            values.iter().map(|(n, v)| (n.as_str(), v as &dyn std::fmt::Display)).collect();
        best = Some((super::fill(&template.translation, &args), left, if sure { 0 } else { left }));
        if left == 0 {
            break;
        }
    }
    // Texts the program joined without a template ("{a}; {b}", "{path}: {text}"): part by part.
    if best.as_ref().is_none_or(|(_, left, _)| *left > 0) {
        for sep in ["; ", " — ", ": "] {
            let parts: Vec<&str> = if sep == ": " { en.splitn(2, sep).collect() } else { en.split(sep).collect() };
            if parts.len() < 2 {
                continue;
            }
            let shown: Vec<(String, usize)> = parts.iter().map(|p| look_up_scored(p, depth - 1, true)).collect();
            let left: usize = shown.iter().map(|(_, l)| l).sum();
            let changed = shown.iter().zip(&parts).any(|((s, _), p)| s != p);
            if changed && best.as_ref().is_none_or(|(_, b, _)| left < *b) {
                let joined = shown.into_iter().map(|(s, _)| s).collect::<Vec<_>>().join(sep);
                best = Some((joined, left, left));
            }
        }
    }
    best.map(|(text, _, seen)| (text, seen)).unwrap_or_else(unknown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::{Lang, scoped};

    #[test]
    fn an_english_text_made_by_the_program_comes_back_as_its_translation() {
        // Made in English (a server's checklist), shown in Chinese: the same as made in Chinese.
        let made = |lang| {
            scoped(lang, || {
                crate::tr!(
                    "the kernel log is not readable by this user ({tried})",
                    tried = "/dev/kmsg: Operation not permitted (os error 1)"
                )
            })
        };
        let en = made(Lang::En);
        assert_eq!(scoped(Lang::ZhCn, || retranslate(&en)), made(Lang::ZhCn));
        // A value that is a catalogue text itself is translated too.
        let nested = |lang| {
            scoped(lang, || {
                crate::tr!(
                    "unknown: {why}",
                    why = crate::tr!("the kernel log is not readable by this user ({tried})", tried = "x")
                )
            })
        };
        assert_eq!(scoped(Lang::ZhCn, || retranslate(&nested(Lang::En))), nested(Lang::ZhCn));
        // Exact texts, and texts that are no catalogue text (a log line) are left alone.
        assert_eq!(scoped(Lang::ZhCn, || retranslate("Checklist")), scoped(Lang::ZhCn, || crate::tr!("Checklist")));
        let log = "NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus.";
        assert_eq!(scoped(Lang::ZhCn, || retranslate(log)), log);
        // In English nothing changes.
        assert_eq!(scoped(Lang::En, || retranslate(&en)), en);
    }
}
