//! The report's renderers: Markdown (GitHub-flavoured, fix commands as code spans) and a
//! self-contained HTML page (escaped, commands in `<code>`). JSON is the document itself.

use super::{Format, Item, ReportDoc};
use crate::diagnose;
use crate::i18n::Lang;
use crate::tr_in;

/// Renders the document.
pub fn render(doc: &ReportDoc, format: Format) -> String {
    match format {
        Format::Json => serde_json::to_string_pretty(doc).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}")),
        Format::Md => markdown(doc),
        Format::Html => html(doc),
    }
}

/// A Markdown code span holding `s` verbatim: the fence is one backtick longer than the longest
/// run inside, padded with spaces when `s` starts or ends with a backtick (CommonMark, "Code spans").
fn md_code(s: &str) -> String {
    let one_line = crate::text::one_line(s);
    let longest = one_line.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if one_line.starts_with('`') || one_line.ends_with('`') { " " } else { "" };
    format!("{fence}{pad}{one_line}{pad}{fence}")
}

/// Markdown text that renders as written, whatever it holds: a server's GPU name or driver
/// version with a newline and `# Title`, `**PASS**` or an image link stays text on its line.
fn md(s: &str) -> String {
    crate::text::md_inline(s)
}

/// [`md`] in a table cell, where `|` would end the cell.
fn md_cell(s: &str) -> String {
    md(s).replace('|', "\\|")
}

/// A paragraph of several lines: each line as [`md`]; an empty line separates paragraphs.
fn md_lines(s: &str) -> String {
    s.lines().map(md).collect::<Vec<_>>().join("\n")
}

pub(super) fn markdown(doc: &ReportDoc) -> String {
    let lang = doc.lang;
    let mut s = format!(
        "# {}\n\n{}\n",
        md(&doc.title),
        tr_in!(
            lang,
            "Generated {generated} by gpu-doctor {version}. Redaction: {redaction}.",
            generated = md(&doc.generated),
            version = md(&doc.app_version),
            redaction = md(&doc.redaction)
        )
    );
    for sec in &doc.sections {
        s.push_str(&format!("\n## {}\n\n", md(&sec.title)));
        for item in &sec.items {
            match item {
                Item::Facts { rows } if rows.is_empty() => {}
                Item::Facts { rows } => {
                    for (k, v) in rows {
                        s.push_str(&format!("- **{}:** {}\n", md(k), md(v)));
                    }
                    s.push('\n');
                }
                Item::Text { text } => s.push_str(&format!("{}\n\n", md_lines(text))),
                Item::Table { headers, rows } => {
                    s.push_str(&format!(
                        "| {} |\n",
                        headers.iter().map(|h| md_cell(h)).collect::<Vec<_>>().join(" | ")
                    ));
                    s.push_str(&format!("|{}\n", " --- |".repeat(headers.len())));
                    for r in rows {
                        s.push_str(&format!("| {} |\n", r.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | ")));
                    }
                    s.push('\n');
                }
                Item::Steps { label, steps } => {
                    // One numbered line per step, each command a code span as written: a copied
                    // report's commands run as they stand.
                    s.push_str(&format!("- **{}**\n", tr_in!(lang, "{label}:", label = md(label))));
                    for (i, st) in steps.iter().enumerate() {
                        let line = match st {
                            diagnose::FixStep::Text(t) => md(&t.render(lang)),
                            diagnose::FixStep::Command(c) => md_code(c),
                        };
                        s.push_str(&format!("  {}. {line}\n", i + 1));
                    }
                    s.push('\n');
                }
                Item::Verdict { verdict, title, summary, evidence, fix, steps } => {
                    // (Title and summary joined by the catalogue: a full-width colon in Chinese.)
                    let line = tr_in!(lang, "{label}: {value}", label = md(title), value = md(summary));
                    s.push_str(&format!("- **{}** {line}\n", md(verdict)));
                    for e in evidence {
                        s.push_str(&format!("  - {}\n", md(e)));
                    }
                    if let Some(f) = fix {
                        s.push_str(&format!("  - {}\n", tr_in!(lang, "Fix: {fix}", fix = md(f))));
                    }
                    for st in steps {
                        match st {
                            diagnose::FixStep::Text(t) => {
                                s.push_str(&format!("  - {}\n", tr_in!(lang, "Fix: {fix}", fix = md(&t.render(lang)))))
                            }
                            diagnose::FixStep::Command(c) => {
                                s.push_str(&format!("  - {}\n", tr_in!(lang, "Run: {command}", command = md_code(c))))
                            }
                        }
                    }
                }
            }
        }
    }
    s
}

/// Escapes text for HTML element content and attribute values.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The CSS class of a verdict line: its verdict word, in English or in the report's language
/// ("FAIL (ROOT CAUSE)", "失败（根因）").
fn verdict_class(v: &str, lang: Lang) -> &'static str {
    let is = |word: &'static str| v.starts_with(word) || v.starts_with(crate::i18n::tr_static(lang, word));
    if is("PASS") {
        "pass"
    } else if is("WARN") {
        "warn"
    } else if is("FAIL") {
        "fail"
    } else if is("INFO") {
        "info"
    } else {
        "skip"
    }
}

pub(super) fn html(doc: &ReportDoc) -> String {
    let lang = doc.lang;
    let e = escape_html;
    let mut s = format!(
        "<!DOCTYPE html>\n<html lang=\"{}\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
        lang.code()
    );
    s.push_str(&format!("<title>{}</title>\n", e(&doc.title)));
    s.push_str(
        "<style>\nbody{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}\n\
         table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}\n\
         th{background:#f3f3f3}.v{font-weight:bold;padding:0 .4em;border-radius:3px}\n\
         .pass{background:#c8e6c9}.warn{background:#ffe0b2}.fail{background:#ffcdd2}.info{background:#bbdefb}.skip{background:#eee}\n\
         li{margin:.2em 0}.meta{color:#666}\n</style>\n</head>\n<body>\n",
    );
    s.push_str(&format!(
        "<h1>{}</h1>\n<p class=\"meta\">{}</p>\n",
        e(&doc.title),
        tr_in!(
            lang,
            "Generated {generated} by gpu-doctor {version}. Redaction: {redaction}.",
            generated = e(&doc.generated),
            version = e(&doc.app_version),
            redaction = e(&doc.redaction)
        )
    ));
    for sec in &doc.sections {
        s.push_str(&format!("<h2>{}</h2>\n", e(&sec.title)));
        for item in &sec.items {
            match item {
                Item::Facts { rows } if rows.is_empty() => {}
                Item::Facts { rows } => {
                    s.push_str("<table>\n");
                    for (k, v) in rows {
                        s.push_str(&format!("<tr><th>{}</th><td>{}</td></tr>\n", e(k), e(v)));
                    }
                    s.push_str("</table>\n");
                }
                Item::Text { text } => s.push_str(&format!("<p>{}</p>\n", e(text))),
                Item::Table { headers, rows } => {
                    s.push_str("<table>\n<tr>");
                    for h in headers {
                        s.push_str(&format!("<th>{}</th>", e(h)));
                    }
                    s.push_str("</tr>\n");
                    for r in rows {
                        s.push_str("<tr>");
                        for c in r {
                            s.push_str(&format!("<td>{}</td>", e(c)));
                        }
                        s.push_str("</tr>\n");
                    }
                    s.push_str("</table>\n");
                }
                Item::Steps { label, steps } => {
                    s.push_str(&format!("<p><b>{}</b></p>\n<ol>\n", e(label)));
                    for st in steps {
                        match st {
                            diagnose::FixStep::Text(t) => s.push_str(&format!("<li>{}</li>\n", e(&t.render(lang)))),
                            diagnose::FixStep::Command(c) => s.push_str(&format!("<li><code>{}</code></li>\n", e(c))),
                        }
                    }
                    s.push_str("</ol>\n");
                }
                Item::Verdict { verdict, title, summary, evidence, fix, steps } => {
                    let line =
                        tr_in!(lang, "{label}: {value}", label = format!("<b>{}</b>", e(title)), value = e(summary));
                    s.push_str(&format!(
                        "<p><span class=\"v {}\">{}</span> {line}</p>\n",
                        verdict_class(verdict, lang),
                        e(verdict)
                    ));
                    if !evidence.is_empty() || fix.is_some() || !steps.is_empty() {
                        s.push_str("<ul>\n");
                        for x in evidence {
                            s.push_str(&format!("<li>{}</li>\n", e(x)));
                        }
                        if let Some(f) = fix {
                            s.push_str(&format!("<li><b>{}</b> {}</li>\n", tr_in!(lang, "Fix:"), e(f)));
                        }
                        for st in steps {
                            match st {
                                diagnose::FixStep::Text(t) => s.push_str(&format!(
                                    "<li><b>{}</b> {}</li>\n",
                                    tr_in!(lang, "Fix:"),
                                    e(&t.render(lang))
                                )),
                                diagnose::FixStep::Command(c) => s.push_str(&format!(
                                    "<li><b>{}</b> <code>{}</code></li>\n",
                                    tr_in!(lang, "Run:"),
                                    e(c)
                                )),
                            }
                        }
                        s.push_str("</ul>\n");
                    }
                }
            }
        }
    }
    s.push_str("</body>\n</html>\n");
    s
}
