//! What a tune is asked to do: the command template with its placeholders (`{batch}`,
//! `{workers}`, named ones, `{out}`, `{copy}`), each parameter's range, the throughput unit and the
//! safety policy. Parsed once from the command line and kept in the journal's first line, so
//! `tune --resume` continues with exactly the same question.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::i18n::Message;
use crate::msg;

/// The placeholder tuned first, against memory (the guide: raise the batch until VRAM nears a safe
/// level).
pub const BATCH: &str = "batch";
/// The data-loading workers, tuned after concurrency.
pub const WORKERS: &str = "workers";
/// Replaced by the trial's own output folder (one per copy), never tuned.
pub const OUT: &str = "out";
/// Replaced by the copy's number (1..=concurrency), never tuned.
pub const COPY: &str = "copy";
/// The concurrency's name in settings and the journal.
pub const CONCURRENCY: &str = "concurrency";

/// An inclusive range of whole numbers, written `LO..HI`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Range {
    /// The first value tried.
    pub lo: u64,
    /// The largest value allowed.
    pub hi: u64,
}

impl Range {
    /// The largest value a range may reach.
    pub const MAX: u64 = 1_000_000;

    /// `LO..HI` or `LO..=HI` (both inclusive), or a single number.
    pub fn parse(text: &str) -> Result<Range, Message> {
        let t = text.trim();
        let (lo, hi) = match t.split_once("..") {
            Some((lo, hi)) => (lo.trim(), hi.trim().trim_start_matches('=')),
            None => (t, t),
        };
        let num = |s: &str| s.trim().parse::<u64>().map_err(|_| msg!("{value} is not a whole number", value = s));
        let r = Range { lo: num(lo)?, hi: num(hi)? };
        if r.lo > r.hi {
            return Err(msg!("the range {range} goes downwards", range = t));
        }
        if r.hi > Self::MAX {
            return Err(msg!("{value} is too large (at most 1000000)", value = r.hi));
        }
        Ok(r)
    }
}

/// A tuned parameter: its placeholder's name and range.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Param {
    /// The placeholder's name (`batch` for `{batch}`).
    pub name: String,
    /// The values allowed; the search starts at `lo`.
    pub range: Range,
}

/// How a trial's throughput is measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Unit {
    /// Items per second: each copy processes this many items (a product of numbers and
    /// placeholders, e.g. `{batch}*50`) in the trial's wall time.
    Items {
        /// The expression as given.
        expr: String,
    },
    /// The last number the pattern's first group matches in a copy's output, summed over copies
    /// (e.g. `([0-9.]+) it/s`).
    Pattern {
        /// The regular expression.
        regex: String,
    },
    /// Completed runs per hour (every copy is one run).
    RunsPerHour,
}

impl Unit {
    /// The unit's short label for tables ("it/s" for a pattern; "items/s"; "runs/h").
    pub fn label(&self) -> Message {
        match self {
            Unit::Items { .. } => msg!("items/s"),
            Unit::Pattern { regex } => match pattern_unit(regex) {
                Some(unit) => Message::data(unit),
                None => msg!("rate (from the output)"),
            },
            Unit::RunsPerHour => msg!("runs/h"),
        }
    }
}

/// The unit a rate pattern names after its group, e.g. `it/s` in `([0-9.]+) it/s`: plain text of
/// at most 16 characters (escapes removed), else None.
fn pattern_unit(regex: &str) -> Option<String> {
    let after = &regex[regex.find(')')? + 1..];
    let text: String = after.replace('\\', "").trim().to_string();
    let plain = !text.is_empty() && text.len() <= 16 && text.chars().all(|c| c.is_alphanumeric() || "/_- ".contains(c));
    plain.then_some(text)
}

/// The whole question.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuneSpec {
    /// The command template, one argument per element.
    pub command: Vec<String>,
    /// The tuned parameters, in the order they are tuned: batch, then (after concurrency) workers,
    /// then the others as given.
    pub params: Vec<Param>,
    /// Copies run at once; `1..1` when not tuned.
    pub concurrency: Range,
    /// Keep at least this share of the GPU's memory free, %.
    pub headroom_pct: f64,
    /// Never use more than this much GPU memory on purpose, bytes.
    pub vram_cap: Option<u64>,
    /// A trial running longer than this is stopped, seconds.
    pub trial_timeout_secs: f64,
    /// A step must raise throughput by at least this much to count as a gain, %.
    pub margin_pct: f64,
    /// How throughput is measured.
    pub unit: Unit,
    /// At most this many trials.
    pub max_trials: u32,
}

/// What is wrong with a tune's arguments.
#[derive(Debug, PartialEq)]
pub enum SpecError {
    /// No placeholder to tune and no concurrency range.
    NothingToTune,
    /// A `--param` names a placeholder the command lacks.
    UnusedParam(String),
    /// The command has a placeholder no range was given for and that has no default.
    NoRange(String),
    /// A bad `--param`: the text and why.
    BadParam(String, Message),
    /// A bad `--items` expression.
    BadItems(String),
    /// A pattern that does not compile.
    BadPattern(String),
    /// A value outside what a tune accepts (from the command line, a spec file or a journal read
    /// back): the option, the value and what is allowed.
    OutOfRange {
        /// The option, as the command line names it (`--trial-timeout`).
        option: &'static str,
        /// The value given.
        value: String,
        /// What is allowed (`1-604800 s`).
        allowed: String,
    },
    /// A parameter name that is no placeholder name (a journal's `../../x`).
    BadName(String),
}

impl crate::i18n::ToMessage for SpecError {
    fn to_message(&self) -> Message {
        match self {
            SpecError::NothingToTune => msg!(
                "nothing to tune: put {batch}, {workers} or a --param placeholder in the command, or give --concurrency"
            ),
            SpecError::UnusedParam(name) => {
                msg!("--param {name}: the command has no such placeholder", name = name.clone())
            }
            SpecError::NoRange(name) => msg!(
                "the command has the placeholder {placeholder} but no --param {name}=LO..HI",
                placeholder = format!("{{{name}}}"),
                name = name
            ),
            SpecError::BadParam(text, why) => {
                msg!(
                    "--param {text}: {why} (write NAME=LO..HI, e.g. batch=1..256)",
                    text = text.clone(),
                    why = why.clone()
                )
            }
            SpecError::BadItems(text) => {
                msg!("--items {text}: write a number or a product such as {batch}*50", text = text.clone())
            }
            SpecError::BadPattern(error) => msg!("--rate-pattern: {error}", error = error.clone()),
            SpecError::OutOfRange { option, value, allowed } => msg!(
                "{option} {value} is out of range: give {allowed}",
                option = *option,
                value = value.clone(),
                allowed = allowed.clone()
            ),
            SpecError::BadName(name) => {
                msg!("'{name}' is no placeholder name (letters, digits and _, at most 32)", name = name.clone())
            }
        }
    }
}

/// In English (logs); a front end shows [`crate::i18n::ToMessage::to_message`] in its language.
impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::i18n::ToMessage::to_message(self).en())
    }
}

impl std::error::Error for SpecError {}

/// The placeholders `{name}` in the template, in order of first appearance (names are ASCII
/// letters, digits and `_`; anything else in braces is left alone).
pub fn placeholders(command: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    for arg in command {
        let mut rest = arg.as_str();
        while let Some(open) = rest.find('{') {
            let after = &rest[open + 1..];
            match after.find('}') {
                Some(close) if is_name(&after[..close]) => {
                    let name = after[..close].to_string();
                    if !found.contains(&name) {
                        found.push(name);
                    }
                    rest = &after[close + 1..];
                }
                _ => rest = after,
            }
        }
    }
    found
}

/// True for a placeholder's name: ASCII letters, digits and `_`, 1 to 32 of them.
pub fn is_name(s: &str) -> bool {
    !s.is_empty() && s.len() <= 32 && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The template with every `{name}` of `values` replaced.
pub fn substitute(command: &[String], values: &BTreeMap<String, String>) -> Vec<String> {
    command
        .iter()
        .map(|arg| {
            let mut a = arg.clone();
            for (name, value) in values {
                a = a.replace(&format!("{{{name}}}"), value);
            }
            a
        })
        .collect()
}

/// The tuned parameters from the template and the `--param NAME=LO..HI` texts: every tuned
/// placeholder needs a range, except `{workers}` (default 0..the CPU count) and `{batch}`
/// (default 1..1024); `{out}` and `{copy}` are filled in, never tuned.
pub fn params(command: &[String], given: &[String], cpus: u64) -> Result<Vec<Param>, SpecError> {
    let names = placeholders(command);
    let mut ranges = BTreeMap::new();
    for text in given {
        let (name, range) = text.split_once('=').ok_or_else(|| SpecError::BadParam(text.clone(), msg!("no '='")))?;
        let range = Range::parse(range).map_err(|why| SpecError::BadParam(text.clone(), why))?;
        let name = name.trim().to_string();
        if !names.contains(&name) {
            return Err(SpecError::UnusedParam(name));
        }
        ranges.insert(name, range);
    }
    let mut out = Vec::new();
    let order = [BATCH, WORKERS];
    let mut tuned: Vec<&String> = names.iter().filter(|n| *n != OUT && *n != COPY).collect();
    // batch first, workers second, the rest in the order they appear.
    tuned.sort_by_key(|n| order.iter().position(|o| o == n).unwrap_or(order.len()));
    for name in tuned {
        let range = match (ranges.get(name), name.as_str()) {
            (Some(r), _) => *r,
            (None, BATCH) => Range { lo: 1, hi: 1024 },
            (None, WORKERS) => Range { lo: 0, hi: cpus.max(1) },
            (None, _) => return Err(SpecError::NoRange(name.clone())),
        };
        out.push(Param { name: name.clone(), range });
    }
    Ok(out)
}

/// Items a copy processes: the product of the expression's factors (numbers and placeholders).
pub fn items(expr: &str, values: &BTreeMap<String, u64>) -> Option<f64> {
    let mut product = 1.0;
    for factor in expr.split('*') {
        let f = factor.trim();
        let v = if let Some(name) = f.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
            *values.get(name)? as f64
        } else {
            f.parse::<f64>().ok().filter(|v| v.is_finite() && *v > 0.0)?
        };
        product *= v;
    }
    // One number, finite: a product that overflows is no count of items.
    product.is_finite().then_some(product)
}

/// Checks an `--items` expression against the tuned names.
pub fn check_items(expr: &str, params: &[Param]) -> Result<(), SpecError> {
    let values: BTreeMap<String, u64> = params.iter().map(|p| (p.name.clone(), 1)).collect();
    items(expr, &values).map(|_| ()).ok_or_else(|| SpecError::BadItems(expr.to_string()))
}

/// One setting: a value per tuned parameter and the concurrency.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Setting {
    /// Value per parameter name.
    pub values: BTreeMap<String, u64>,
    /// Copies run at once.
    pub concurrency: u32,
}

impl Setting {
    /// "batch 16, workers 4, 2 copies" (names as in the command).
    pub fn describe(&self) -> Message {
        let mut parts: Vec<Message> = self.values.iter().map(|(k, v)| param_value(k, *v)).collect();
        if self.concurrency > 1 {
            parts.push(msg!("{n} copies", n = self.concurrency));
        }
        if parts.is_empty() { msg!("(no parameters)") } else { Message::join(parts, &Message::data(", ")) }
    }

    /// The short form used in folder names: `batch16-workers4-c2`.
    pub fn slug(&self) -> String {
        let mut parts: Vec<String> = self.values.iter().map(|(k, v)| format!("{k}{v}")).collect();
        parts.push(format!("c{}", self.concurrency));
        parts.join("-")
    }

    /// The command line of one copy, with `out` as its output folder.
    pub fn command(&self, template: &[String], out: &str, copy: u32) -> Vec<String> {
        let mut values: BTreeMap<String, String> =
            self.values.iter().map(|(k, v)| (k.clone(), v.to_string())).collect();
        values.insert(OUT.into(), out.into());
        values.insert(COPY.into(), copy.to_string());
        substitute(template, &values)
    }
}

/// A parameter and its value in words: the batch and the workers in the reader's language
/// ("batch 44", 批次大小 44), any other placeholder by its own name ("lr 3").
pub fn param_value(name: &str, v: u64) -> Message {
    match name {
        BATCH => msg!("batch {n}", n = v),
        WORKERS => msg!("workers {n}", n = v),
        _ => Message::data(format!("{name} {v}")),
    }
}

/// A command line as a person would type it in a POSIX shell (single quotes where needed).
pub fn shell_line(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            let plain = !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%{}".contains(c));
            if plain { a.clone() } else { format!("'{}'", a.replace('\'', "'\\''")) }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    #[test]
    fn placeholders_ranges_and_order() {
        let c = cmd("python train.py --bs {batch} --lr {lr} --nw={workers} --out {out}/x {not a name}");
        assert_eq!(placeholders(&c), ["batch", "lr", "workers", "out"]);
        assert_eq!(params(&c, &[], 8), Err(SpecError::NoRange("lr".into())));
        let p = params(&c, &["lr=1..4".into()], 8).unwrap();
        let names: Vec<&str> = p.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["batch", "workers", "lr"]);
        assert_eq!(p[1].range, Range { lo: 0, hi: 8 });
        assert_eq!(params(&c, &["seed=1..2".into()], 8), Err(SpecError::UnusedParam("seed".into())));
        assert!(matches!(params(&c, &["lr=9..2".into()], 8), Err(SpecError::BadParam(..))));
        assert!(matches!(params(&c, &["lr".into()], 8), Err(SpecError::BadParam(..))));
        assert_eq!(Range::parse("4"), Ok(Range { lo: 4, hi: 4 }));
        assert_eq!(Range::parse("1..=64"), Ok(Range { lo: 1, hi: 64 }));
    }

    #[test]
    fn settings_fill_the_template() {
        let s = Setting { values: [("batch".to_string(), 16)].into(), concurrency: 2 };
        let c = cmd("run --bs={batch} --out {out}/r{copy}.json {batch}");
        assert_eq!(s.command(&c, "/t/t003", 2), cmd("run --bs=16 --out /t/t003/r2.json 16"));
        assert_eq!(s.slug(), "batch16-c2");
        assert_eq!(items("{batch}*50", &s.values), Some(800.0));
        assert_eq!(items("{nope}*50", &s.values), None);
        assert_eq!(items("2.5", &s.values), Some(2.5));
        assert_eq!(shell_line(&cmd("sh -c it's")), "sh -c 'it'\\''s'");
        assert_eq!(pattern_unit("([0-9.]+) it/s"), Some("it/s".into()));
        assert_eq!(pattern_unit(r"([0-9.]+)\s*samples/sec"), None);
        assert_eq!(pattern_unit("tok/s: ([0-9.]+)"), None);
    }
}
