//! The checklist as plain text (what `check` prints and a support ticket quotes), in the language
//! the reader asked for: the root cause's finding first, then the checks grouped by layer, those
//! that do not apply here folded into one line. Check ids are left out (they are in the JSON).

use std::fmt::Write as _;

use crate::diagnose::headline::Headline;
use crate::diagnose::{Check, FixStep, Layer, Report, Verdict};
use crate::i18n::{Lang, Message, columns, tr_in};
use crate::msg;

/// A check's fix steps as text lines: the label once, the steps after it lined up under the first
/// (commands with their `$ `).
pub fn fix_lines(fixes: &[FixStep], lang: Lang) -> Vec<String> {
    let label = msg!("fix: {step}", step = "").render(lang);
    let indent = " ".repeat(columns(&label));
    fixes
        .iter()
        .enumerate()
        .map(|(i, f)| {
            if i == 0 {
                msg!("fix: {step}", step = f.plain(lang)).render(lang)
            } else {
                format!("{indent}{}", f.plain(lang))
            }
        })
        .collect()
}

/// `list` joined for `lang` with the separator message `sep`.
fn join(list: &[&Message], sep: Message, lang: Lang) -> String {
    list.iter().map(|m| m.render(lang)).collect::<Vec<_>>().join(&sep.render(lang))
}

/// The report as plain text in `lang` (no colour).
pub fn render_text(r: &Report, lang: Lang) -> String {
    let mut o = String::new();
    if let Some(i) = &r.imported {
        for line in i.lines() {
            let _ = writeln!(o, "{}", line.render(lang));
        }
        let _ = writeln!(o);
    }
    if !r.refused.is_empty() {
        let head = msg!("Not read from the capture ({n} entries; read as missing):", n = r.refused.len());
        let _ = writeln!(o, "{}", head.render(lang));
        for x in r.refused.iter().take(10) {
            let _ = writeln!(o, "  {x}");
        }
        let _ = writeln!(o);
    }
    match r.root() {
        Some(c) => {
            let _ = writeln!(o, "{}", msg!("Root cause: {finding}", finding = c.finding).render(lang));
            let _ = writeln!(o, "  {}", title_and_summary(c, lang));
            if !c.explanation.is_empty() {
                let _ = writeln!(o, "  {}", c.explanation.render(lang));
            }
            for line in fix_lines(&c.fixes, lang) {
                let _ = writeln!(o, "  {line}");
            }
            let consequences: Vec<&Message> =
                r.checks.iter().filter(|x| x.explained_by.as_deref() == Some(&c.id)).map(|x| &x.finding).collect();
            if !consequences.is_empty() {
                let list = join(&consequences, msg!("; "), lang);
                let _ = writeln!(o, "  {}", msg!("It also causes: {list}", list = list).render(lang));
            }
        }
        None => {
            let _ = writeln!(o, "{}", msg!("No failure found.").render(lang));
        }
    }
    let version = env!("CARGO_PKG_VERSION");
    let heading = if r.from_capture {
        msg!("gpu-doctor {version} checklist (from a capture)", version = version)
    } else {
        msg!("gpu-doctor {version} checklist", version = version)
    };
    let _ = writeln!(o, "\n{}", heading.render(lang));
    for layer in Layer::ALL {
        let in_layer: Vec<&Check> = r.checks.iter().filter(|c| c.layer == layer && c.applies_to.is_none()).collect();
        if in_layer.is_empty() {
            continue;
        }
        let _ = writeln!(o, "\n== {} ==", tr_in(lang, layer.title()));
        for c in in_layer {
            let _ = writeln!(o, "[{:<7}] {}", c.verdict.tag(), title_and_summary(c, lang));
            // (A check that could not look, with the way to look: "fix" is how to see it.)
            let how_to_see = c.verdict == Verdict::Skipped && c.blocked_by.is_none() && !c.fixes.is_empty();
            if matches!(c.verdict, Verdict::Warn | Verdict::Fail) || how_to_see {
                if !c.explanation.is_empty() {
                    let _ = writeln!(o, "          {}", c.explanation.render(lang));
                }
                for e in &c.evidence {
                    let _ = writeln!(o, "          {}", msg!("evidence: {e}", e = e).render(lang));
                }
                for line in fix_lines(&c.fixes, lang) {
                    let _ = writeln!(o, "          {line}");
                }
            }
        }
    }
    let (n, places) = r.not_applicable();
    if n > 0 {
        let places = join(&places, msg!(", "), lang);
        let line = if n == 1 {
            msg!("{n} check does not apply here: {places}", n = n, places = places)
        } else {
            msg!("{n} checks do not apply here: {places}", n = n, places = places)
        };
        let _ = writeln!(o, "\n{}", line.render(lang));
    }
    let count = |v: Verdict| r.checks.iter().filter(|c| c.verdict == v).count();
    let totals = msg!(
        "{total} checks: {fail} fail, {warn} warn, {pass} pass, {info} info, {skipped} skipped. Details and evidence: --json",
        total = r.checks.len(),
        fail = count(Verdict::Fail),
        warn = count(Verdict::Warn),
        pass = count(Verdict::Pass),
        info = count(Verdict::Info),
        skipped = count(Verdict::Skipped)
    );
    let _ = writeln!(o, "\n{}", totals.render(lang));
    o
}

/// "Title: summary", joined by the catalogue (a full-width colon in Chinese).
fn title_and_summary(c: &Check, lang: Lang) -> String {
    msg!("{label}: {value}", label = Message::new(&c.title), value = c.summary).render(lang)
}

/// A headline's steps as plain lines for a terminal: "Next step: ..." for a single instruction, else
/// "What to do:" and each step indented, commands after `$ `.
pub fn headline_steps(h: &Headline, lang: Lang) -> String {
    match h.steps.as_slice() {
        [] => String::new(),
        [FixStep::Text(t)] => format!("{}\n", msg!("Next step: {step}", step = t).render(lang)),
        steps => {
            let mut s = format!("{}\n", msg!("What to do:").render(lang));
            for step in steps {
                s.push_str(&format!("  {}\n", step.plain(lang)));
            }
            s
        }
    }
}
