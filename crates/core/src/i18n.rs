//! The languages gpu-doctor speaks: English, the source text, and Simplified Chinese from the
//! catalogue `i18n/zh-CN/*.ron` (one file per part of the app), compiled into the binary.
//!
//! A translatable text is written in English at its place in the code with [`tr!`]; the English
//! text is its key. Placeholders are named, `{name}`, and filled by the macro's arguments in either
//! language, so a translation can move them. Tests (`tests/suite/i18n.rs`) hold the catalogue to the
//! code: every `tr!` text has a translation, no translation is left without its text, the
//! placeholders agree, and the bundled font has a glyph for every character of the catalogue.
//!
//! Never translated: JSON keys and enum values, check ids, exit codes, file formats, command names
//! and flags, and shell commands inside fixes (those are never passed through [`tr!`]).
//!
//! Nothing here holds a language: every text is made in the [`Lang`] its caller passes
//! ([`tr_in!`], [`Message::render`]). The language a person reads is chosen by a front end
//! ([`choose`]: `--lang`, then `GPU_DOCTOR_LANG`, then the app's setting, then the system's
//! locale) and kept there (`gpu_doctor_cli::lang`), so no domain code can answer differently
//! because of a process-wide setting: the compiler refuses it (the crates below the front ends
//! cannot see that setting).
//!
//! ```compile_fail
//! // The ground holds no language to read: a text is made in the language passed.
//! let _ = gpu_doctor_core::i18n::current();
//! ```
//!
//! ```
//! use gpu_doctor_core::i18n::Lang;
//! assert_eq!(gpu_doctor_core::tr_in!(Lang::ZhCn, "Checklist"), "检查清单");
//! ```

use std::collections::{BTreeSet, HashMap};
use std::fmt::Display;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

pub mod message;
pub use message::{Arg, Message, ToMessage};

/// The bundled Chinese font: Noto Sans CJK SC cut down to the catalogue's characters
/// (assets/fonts/, SIL Open Font License; made by scripts/make-cjk-font.py).
pub const CJK_FONT: &[u8] = include_bytes!("../../../assets/fonts/NotoSansSC-gpu-doctor.otf");

/// The Chinese quotation marks “”‘’ alone, full-width, from the same font, with egui's Latin line
/// metrics: a Chinese window draws them before the Latin font's narrow ones (same script).
pub const CJK_QUOTES_FONT: &[u8] = include_bytes!("../../../assets/fonts/NotoSansSC-quotes-gpu-doctor.otf");

/// The pictographs the in-window file chooser draws (folder, open folder; from Noto Emoji, OFL)
/// and (floppy disk, up arrow, refresh, folder and file entries; from emoji-icon-font, MIT),
/// which egui's default fonts lack: a few KiB made by scripts/make-symbol-font.py.
pub const SYMBOL_FONTS: [(&str, &[u8]); 2] = [
    ("noto-emoji-gpu-doctor", include_bytes!("../../../assets/fonts/NotoEmoji-gpu-doctor.ttf")),
    ("emoji-icon-gpu-doctor", include_bytes!("../../../assets/fonts/emoji-icon-gpu-doctor.ttf")),
];

/// Environment variable choosing the language of both programs (`en` or `zh-CN`).
pub const LANG_ENV: &str = "GPU_DOCTOR_LANG";

/// A language of the interface.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
pub enum Lang {
    /// English (the source text).
    #[default]
    #[value(name = "en")]
    #[serde(rename = "en")]
    En,
    /// Simplified Chinese.
    #[value(name = "zh-CN")]
    #[serde(rename = "zh-CN")]
    ZhCn,
}

impl Lang {
    /// Every language, in the order a chooser lists them.
    pub const ALL: [Lang; 2] = [Lang::En, Lang::ZhCn];

    /// The tag used on the command line, in the environment and in settings.
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::ZhCn => "zh-CN",
        }
    }

    /// The language's own name, as a chooser shows it.
    pub fn native_name(self) -> &'static str {
        match self {
            Lang::En => "English",
            Lang::ZhCn => "简体中文",
        }
    }

    /// The language for a locale tag, BCP 47 (`zh-Hans-CN`) or POSIX (`zh_CN.UTF-8`). Chinese
    /// written in Traditional characters (`zh-TW`, `zh-HK`, `zh-MO`, `zh-Hant…`) is `None` until a
    /// Traditional catalogue exists, as is any other language.
    pub fn from_locale(tag: &str) -> Option<Lang> {
        let tag = tag.split(['.', '@']).next().unwrap_or("").replace('_', "-").to_ascii_lowercase();
        let mut parts = tag.split('-');
        match parts.next()? {
            "en" => Some(Lang::En),
            "zh" => {
                let rest: Vec<&str> = parts.collect();
                let traditional = rest.iter().any(|p| matches!(*p, "hant" | "tw" | "hk" | "mo"));
                (!traditional).then_some(Lang::ZhCn)
            }
            _ => None,
        }
    }
}

/// The first of the system's preferred locales that has a catalogue.
pub fn system() -> Option<Lang> {
    sys_locale::get_locales().find_map(|l| Lang::from_locale(&l))
}

/// The language to use: the `--lang` flag, else `GPU_DOCTOR_LANG` (when it names a language),
/// else the app's saved setting, else the system's, else English.
pub fn choose(flag: Option<Lang>, setting: Option<Lang>) -> Lang {
    flag.or_else(|| std::env::var(LANG_ENV).ok().and_then(|v| Lang::from_locale(&v)))
        .or(setting)
        .or_else(system)
        .unwrap_or_default()
}

/// The `--lang` given on a command line (`--lang zh-CN` or `--lang=zh-CN`), read before clap
/// parses it so that `--help` itself is in that language. An unknown value is left for clap to
/// reject.
pub fn lang_in_args(args: impl IntoIterator<Item = std::ffi::OsString>) -> Option<Lang> {
    let args: Vec<String> = args.into_iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let mut found = None;
    for (i, a) in args.iter().enumerate() {
        if a == "--" {
            break;
        }
        let value = match a.strip_prefix("--lang") {
            Some("") => args.get(i + 1).map(String::as_str),
            Some(v) => v.strip_prefix('='),
            None => None,
        };
        if let Some(v) = value {
            found = <Lang as clap::ValueEnum>::from_str(v, true).ok().or(found);
        }
    }
    found
}

/// Every help text of a command tree (abouts, argument helps, after-help), as the catalogue's
/// cli-help part translates them; clap's own `--help`/`--version` helps included.
pub fn help_texts(cmd: &clap::Command) -> BTreeSet<String> {
    let mut cmd = cmd.clone();
    cmd.build();
    let mut out = BTreeSet::new();
    collect_help(&cmd, &mut out);
    out
}

fn collect_help(cmd: &clap::Command, out: &mut BTreeSet<String>) {
    let texts = [cmd.get_about(), cmd.get_long_about(), cmd.get_after_help(), cmd.get_after_long_help()];
    out.extend(texts.into_iter().flatten().map(|t| t.to_string()));
    for a in cmd.get_arguments() {
        out.extend([a.get_help(), a.get_long_help()].into_iter().flatten().map(|t| t.to_string()));
        if !a.is_hide_possible_values_set() {
            out.extend(a.get_possible_values().iter().filter_map(|v| v.get_help()).map(ToString::to_string));
        }
    }
    for sub in cmd.get_subcommands() {
        collect_help(sub, out);
    }
}

/// `cmd` with its help in `lang`: every help text through the catalogue's cli-help part, and the
/// section headings of clap's help page (`Usage:`, `Options:`) in a template of the same layout.
/// English leaves the command as it is. clap's own error messages stay English.
pub fn localize_command(mut cmd: clap::Command, lang: Lang) -> clap::Command {
    if lang == Lang::En {
        return cmd;
    }
    cmd.build();
    localize_one(cmd, lang)
}

fn localize_one(mut cmd: clap::Command, lang: Lang) -> clap::Command {
    if let Some(t) = cmd.get_about().map(ToString::to_string) {
        cmd = cmd.about(help_tr(lang, &t));
    }
    if let Some(t) = cmd.get_long_about().map(ToString::to_string) {
        cmd = cmd.long_about(help_tr(lang, &t));
    }
    if let Some(t) = cmd.get_after_help().map(ToString::to_string) {
        cmd = cmd.after_help(help_tr(lang, &t));
    }
    if let Some(t) = cmd.get_after_long_help().map(ToString::to_string) {
        cmd = cmd.after_long_help(help_tr(lang, &t));
    }
    let ids: Vec<clap::Id> = cmd.get_arguments().map(|a| a.get_id().clone()).collect();
    for id in ids {
        cmd = cmd.mut_arg(id, |a| {
            // clap writes "[default: …]" and "Possible values:" itself, in English: they are
            // hidden and written here instead, in the language of the help.
            let (short_extra, long_extra) = values_and_default(&a, lang);
            let help = a.get_help().map(|t| help_tr(lang, &t.to_string()));
            let long = a.get_long_help().map(|t| help_tr(lang, &t.to_string()));
            let a = if short_extra.is_empty() { a } else { a.hide_possible_values(true).hide_default_value(true) };
            let a = match help {
                Some(h) => a.help(format!("{h}{short_extra}")),
                None => a,
            };
            match long {
                Some(h) => a.long_help(format!("{h}{long_extra}")),
                None if !long_extra.is_empty() => {
                    let h = a.get_help().map(ToString::to_string).unwrap_or_default();
                    let h = h.strip_suffix(&short_extra).unwrap_or(&h).to_string();
                    a.long_help(format!("{h}{long_extra}"))
                }
                None => a,
            }
        });
    }
    let mut template = format!("{{before-help}}{{about-with-newline}}\n{} {{usage}}\n", crate::tr_in!(lang, "Usage:"));
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        template += &format!("\n{}\n{{subcommands}}\n", crate::tr_in!(lang, "Commands:"));
    }
    if cmd.get_positionals().any(|a| !a.is_hide_set()) {
        template += &format!("\n{}\n{{positionals}}\n", crate::tr_in!(lang, "Arguments:"));
    }
    template += &format!("\n{}\n{{options}}{{after-help}}", crate::tr_in!(lang, "Options:"));
    cmd = cmd.help_template(template);
    let subs: Vec<String> = cmd.get_subcommands().map(|s| s.get_name().to_string()).collect();
    for name in subs {
        cmd = cmd.mut_subcommand(name, |c| localize_one(c, lang));
    }
    cmd
}

/// What clap would add to an argument's help, in `lang`: the default value and the
/// possible values, for the short help (`-h`) and the long help (`--help`). Empty when the
/// argument has neither (or shows neither).
fn values_and_default(a: &clap::Arg, lang: Lang) -> (String, String) {
    let mut short = String::new();
    let mut long = String::new();
    let all = a.get_possible_values();
    let values: Vec<&clap::builder::PossibleValue> = all.iter().filter(|v| !v.is_hide_set()).collect();
    let shown_values = a.get_action().takes_values() && !a.is_hide_possible_values_set() && !values.is_empty();
    // (A flag's "false" is no default worth showing; clap leaves it out too.)
    let defaults: Vec<String> = a.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()).collect();
    let shown_default = a.get_action().takes_values() && !a.is_hide_default_value_set() && !defaults.is_empty();
    if shown_default {
        let d = crate::tr_in!(lang, "[default: {value}]", value = defaults.join(", "));
        short.push(' ');
        short.push_str(&d);
        long.push_str("\n\n");
        long.push_str(&d);
    }
    if shown_values {
        let names: Vec<&str> = values.iter().map(|v| v.get_name()).collect();
        short.push(' ');
        short.push_str(&crate::tr_in!(lang, "[possible values: {values}]", values = names.join(", ")));
        long.push_str("\n\n");
        long.push_str(crate::tr_in!(lang, "Possible values:"));
        for v in values {
            match v.get_help() {
                Some(h) => long.push_str(&format!("\n- {}: {}", v.get_name(), help_tr(lang, &h.to_string()))),
                None => long.push_str(&format!("\n- {}", v.get_name())),
            }
        }
    }
    (short, long)
}

/// The parts of the Simplified Chinese catalogue of the code's texts, by file name (tests/suite/i18n.rs
/// checks that every file of `i18n/zh-CN/` but the command line help, cli-help.ron, is here).
pub const ZH_PARTS: &[(&str, &str)] = &[
    ("gui.ron", include_str!("../../../i18n/zh-CN/gui.ron")),
    ("checks-linux.ron", include_str!("../../../i18n/zh-CN/checks-linux.ron")),
    ("checks-more.ron", include_str!("../../../i18n/zh-CN/checks-more.ron")),
    ("checks-windows.ron", include_str!("../../../i18n/zh-CN/checks-windows.ron")),
    ("bottleneck.ron", include_str!("../../../i18n/zh-CN/bottleneck.ron")),
    ("smoke.ron", include_str!("../../../i18n/zh-CN/smoke.ron")),
    ("vram.ron", include_str!("../../../i18n/zh-CN/vram.ron")),
    ("report.ron", include_str!("../../../i18n/zh-CN/report.ron")),
    ("cli.ron", include_str!("../../../i18n/zh-CN/cli.ron")),
    ("tune.ron", include_str!("../../../i18n/zh-CN/tune.ron")),
    ("clap.ron", include_str!("../../../i18n/zh-CN/clap.ron")),
];

/// The Chinese command line help (clap's about/help texts → translation), apart from the code's
/// texts: a help text and a label may share their English ("GPUs") but not their translation.
const ZH_HELP_PART: &str = include_str!("../../../i18n/zh-CN/cli-help.ron");

static ZH_HELP: LazyLock<HashMap<String, String>> = LazyLock::new(|| ron::from_str(ZH_HELP_PART).unwrap_or_default());

/// The Chinese command line help's entries (for the tests).
pub fn zh_help_catalogue() -> &'static HashMap<String, String> {
    &ZH_HELP
}

/// A help text of the command line in `lang`.
fn help_tr(lang: Lang, en: &str) -> String {
    match lang {
        Lang::En => en.to_string(),
        Lang::ZhCn => ZH_HELP.get(en).cloned().unwrap_or_else(|| en.to_string()),
    }
}

/// The Simplified Chinese catalogue: English text → translation, all parts together. A part that
/// does not parse (a test fails first) leaves its English texts in place.
static ZH: LazyLock<HashMap<String, String>> = LazyLock::new(|| {
    let mut all = HashMap::new();
    for (_, text) in ZH_PARTS {
        all.extend(ron::from_str::<HashMap<String, String>>(text).unwrap_or_default());
    }
    all
});

/// The Chinese catalogue's entries (for the tests and the font subsetting script).
pub fn zh_catalogue() -> &'static HashMap<String, String> {
    &ZH
}

/// `en`, a text of the catalogue, in `lang` (the English text itself when it has no translation).
pub fn tr_static(lang: Lang, en: &'static str) -> &'static str {
    match lang {
        Lang::En => en,
        Lang::ZhCn => ZH.get(en).map_or(en, String::as_str),
    }
}

/// `en`, a catalogue text known only at run time, in `lang`.
pub fn tr_in(lang: Lang, en: &str) -> String {
    match lang {
        Lang::En => en.to_string(),
        Lang::ZhCn => ZH.get(en).cloned().unwrap_or_else(|| en.to_string()),
    }
}

/// `text` padded with spaces to `width` terminal columns, a CJK character taking two (what
/// `{:<width}` does for ASCII text), for the command line's aligned columns.
pub fn pad(text: &str, width: usize) -> String {
    format!("{text}{}", " ".repeat(width.saturating_sub(columns(text))))
}

/// Terminal columns of `text`, a CJK character (or full-width punctuation) taking two.
pub fn columns(text: &str) -> usize {
    text.chars().map(|c| if c >= '\u{2E80}' { 2 } else { 1 }).sum()
}

/// `template` with each `{name}` replaced by its value; other braces are left as they are.
pub fn fill(template: &str, args: &[(&str, &dyn Display)]) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let value =
            after.find('}').and_then(|close| args.iter().find(|(k, _)| *k == &after[..close]).map(|(_, v)| (v, close)));
        match value {
            Some((v, close)) => {
                out.push_str(&v.to_string());
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The `{name}` placeholders of a text (a name is letters, digits and `_`).
pub fn placeholders(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        if let Some(close) = after.find('}') {
            let name = &after[..close];
            if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                out.insert(name.to_string());
            }
        }
        rest = after;
    }
    out
}

/// Marks an English text for the catalogue where it must stay a `&'static str` (a constant, a
/// table entry, a check's title): `tr_key!("text")` is the text itself, translated where it is
/// shown with [`tr`]. The catalogue test finds these as it finds [`tr!`].
#[macro_export]
macro_rules! tr_key {
    ($en:literal) => {
        $en
    };
}

/// A text in the language `lang`: `tr_in!(lang, "Checklist")` (a `&'static str`), or with named
/// placeholders `tr_in!(lang, "{n} checks", n = count)` (a `String`). The front ends' `tr!` is the
/// same with the language they show.
#[macro_export]
macro_rules! tr_in {
    ($lang:expr, $en:literal) => {
        $crate::i18n::tr_static($lang, $en)
    };
    ($lang:expr, $en:literal, $($name:ident = $value:expr),+ $(,)?) => {
        $crate::i18n::fill($crate::i18n::tr_static($lang, $en), &[$((stringify!($name), &$value as &dyn ::std::fmt::Display)),+])
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locales_map_to_simplified_chinese_or_nothing() {
        for tag in ["zh-CN", "zh_CN.UTF-8", "zh-SG", "zh-Hans", "zh-Hans-CN", "zh", "ZH_cn"] {
            assert_eq!(Lang::from_locale(tag), Some(Lang::ZhCn), "{tag}");
        }
        for tag in ["zh-TW", "zh_HK.UTF-8", "zh-Hant-TW", "zh-MO", "ja-JP", "de_DE.UTF-8", "C", ""] {
            assert_eq!(Lang::from_locale(tag), None, "{tag}");
        }
        assert_eq!(Lang::from_locale("en_US.UTF-8"), Some(Lang::En));
    }

    #[test]
    fn placeholders_are_filled_by_name_in_any_order() {
        let n = 3;
        assert_eq!(fill("{n} of {total} GPUs", &[("total", &8), ("n", &n)]), "3 of 8 GPUs");
        assert_eq!(fill("共 {total} 块 GPU，其中 {n} 块", &[("n", &n), ("total", &8)]), "共 8 块 GPU，其中 3 块");
        // Unknown names and lone braces stay as written.
        assert_eq!(fill("{x} {", &[("n", &1)]), "{x} {");
        assert_eq!(placeholders("{n} of {total} {not a name}"), ["n", "total"].map(String::from).into());
    }

    #[test]
    fn a_text_is_made_in_the_language_asked_for() {
        assert_eq!(tr_static(Lang::ZhCn, "Checklist"), "检查清单");
        assert_eq!(tr_static(Lang::En, "Checklist"), "Checklist");
        assert_eq!(crate::tr_in!(Lang::ZhCn, "Checklist"), "检查清单");
    }
}
