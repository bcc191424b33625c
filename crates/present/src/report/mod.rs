//! Support reports: one document ([`ReportDoc`]) built from what the app knows (inventory, the
//! checklist, a summary of the recent metrics, the smoke test, the VRAM estimate, versions and the
//! renderer), redacted ([`redact`]) and rendered as Markdown, JSON or a self-contained HTML page.
//!
//! Every field of the document is text, so redaction walks one JSON value and no format can leak
//! what another hides.

pub mod redact;
mod render;
mod sections;

use serde::{Deserialize, Serialize};

use crate::diagnose;
use crate::diagnose::headline::Headline;
use crate::i18n::Lang;
use crate::smoke::SmokeReport;
use crate::telemetry::history::History;
use crate::telemetry::snapshot::Snapshot;
use crate::telemetry::source::{ASLEEP_STATE, SourceStatus};
use crate::tr_in;
use crate::units;
use redact::Redactor;
use sections::{bottleneck_section, checklist_section, metrics_section, smoke_section};

/// Identifies the JSON form of a report.
pub const REPORT_FORMAT: &str = "gpu-doctor-report";
/// Version of the JSON form; bumped when fields change meaning.
pub const REPORT_VERSION: u32 = 1;

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Markdown, for tickets, forums and chat.
    Md,
    /// JSON, for tools.
    Json,
    /// One self-contained HTML page.
    Html,
}

impl Format {
    /// File name extension.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Md => "md",
            Format::Json => "json",
            Format::Html => "html",
        }
    }
}

/// The report, all text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReportDoc {
    /// Always [`REPORT_FORMAT`].
    pub format: String,
    /// [`REPORT_VERSION`].
    pub version: u32,
    /// "gpu-doctor report".
    pub title: String,
    /// Local time it was made, "2026-11-30 03:12:45 +01:00".
    pub generated: String,
    /// gpu-doctor version.
    pub app_version: String,
    /// What was redacted, in words ("off" when nothing was).
    pub redaction: String,
    /// The sections, in order.
    pub sections: Vec<Section>,
    /// The language it is written in (what its HTML declares and its verdict words are read in).
    /// Not part of the JSON, whose format is unchanged by it: a report read back is English.
    #[serde(skip)]
    pub lang: Lang,
}

/// A titled part of the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Section {
    /// Heading.
    pub title: String,
    /// Content.
    pub items: Vec<Item>,
}

/// One piece of content.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Item {
    /// Key-value lines.
    Facts {
        /// (key, value) pairs.
        rows: Vec<(String, String)>,
    },
    /// A paragraph.
    Text {
        /// Its text.
        text: String,
    },
    /// A table.
    Table {
        /// Column headings.
        headers: Vec<String>,
        /// Cells, row by row.
        rows: Vec<Vec<String>>,
    },
    /// Steps to take in order (the diagnosis's first fix): text, and commands kept verbatim so a
    /// copied report still holds runnable commands.
    Steps {
        /// What they are ("First fix").
        label: String,
        /// The steps.
        steps: Vec<diagnose::FixStep>,
    },
    /// A verdict line with evidence and a fix (checks, smoke stages).
    Verdict {
        /// "PASS", "WARN", "FAIL", "INFO", "SKIPPED".
        verdict: String,
        /// What was checked, e.g. "NVIDIA kernel module".
        title: String,
        /// What was found.
        summary: String,
        /// Evidence and details.
        evidence: Vec<String>,
        /// What to do, in words.
        fix: Option<String>,
        /// What to do, step by step: text, and commands rendered as code.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        steps: Vec<diagnose::FixStep>,
    },
}

/// What a report is made from; everything but the snapshot is optional.
pub struct Inputs<'a> {
    /// The latest state (inventory, source, latest samples).
    pub snapshot: &'a Snapshot,
    /// History for the metrics summary, with the window to summarise (seconds) ending at `now`.
    pub history: Option<(&'a History, f64, f64)>,
    /// Checklist results.
    pub checklist: Option<&'a diagnose::Report>,
    /// Bottleneck verdicts over the recent history.
    pub bottlenecks: Option<&'a [diagnose::bottleneck::Bottleneck]>,
    /// The last smoke test.
    pub smoke: Option<&'a SmokeReport>,
    /// The VRAM calculator's last estimate, as lines.
    pub vram: Option<Vec<String>>,
    /// Renderer (GUI only).
    pub renderer: Option<String>,
    /// Operating system, kernel, CPU, RAM lines about this machine.
    pub machine: Vec<(String, String)>,
    /// The language the report is written in.
    pub lang: Lang,
}

/// Builds the report of a file the checklist read (a user's capture or bug report): its
/// diagnosis and the facts it holds, which file it is, and nothing of the machine the report is
/// made on (no host, OS, metrics, smoke test, VRAM estimate or renderer of the reader's).
pub fn build_from_file(checklist: &diagnose::Report, origin: &diagnose::origin::Origin, lang: Lang) -> ReportDoc {
    let head = Headline::of_report(checklist);
    let mut rows = diagnosis_rows(head.as_ref(), Some(checklist), lang);
    rows.push((tr_in!(lang, "Made from the file").to_string(), origin.file.clone()));
    for (key, value) in [
        (tr_in!(lang, "The file was made"), &origin.made),
        (tr_in!(lang, "Operating system"), &origin.os),
        (tr_in!(lang, "Kernel"), &origin.kernel),
        (tr_in!(lang, "Driver"), &origin.driver),
    ] {
        if let Some(v) = value {
            rows.push((key.to_string(), v.clone()));
        }
    }
    rows.push(("gpu-doctor".to_string(), env!("CARGO_PKG_VERSION").to_string()));
    let summary = Section {
        title: tr_in!(lang, "Summary").to_string(),
        items: [Item::Facts { rows }]
            .into_iter()
            .chain(first_fix(head.as_ref(), lang))
            .chain([Item::Text {
                text: tr_in!(lang,
                    "Everything below is what {file} holds about the machine it was made on; nothing is about the machine this report was made on.",
                    file = origin.file
                )
                .to_string(),
            }])
            .collect(),
    };
    let gpus = Section {
        title: tr_in!(lang, "GPU devices").to_string(),
        items: vec![if origin.gpus.is_empty() {
            Item::Text { text: tr_in!(lang, "The file lists no NVIDIA GPU.").to_string() }
        } else {
            Item::Table {
                headers: vec!["GPU".to_string()],
                rows: origin.gpus.iter().map(|g| vec![g.clone()]).collect(),
            }
        }],
    };
    document(vec![summary, gpus, checklist_section(checklist, lang)], lang)
}

/// Facts about this machine for the report: host name, OS, kernel, CPU, RAM.
pub fn machine_facts(lang: Lang) -> Vec<(String, String)> {
    let mut v = Vec::new();
    if let Ok(h) = sysinfo::System::host_name() {
        v.push((tr_in!(lang, "Host name").to_string(), h));
    }
    if let Ok(os) = sysinfo::System::long_os_version() {
        v.push((tr_in!(lang, "Operating system").to_string(), os));
    }
    if let Ok(k) = sysinfo::System::kernel_version() {
        v.push((tr_in!(lang, "Kernel").to_string(), k));
    }
    let Ok(mut sys) = sysinfo::System::new() else { return v };
    sys.refresh_memory();
    sys.refresh_cpu_list(sysinfo::CpuRefreshKind::nothing());
    if let Some(c) = sys.cpus().first() {
        v.push((
            "CPU".to_string(),
            tr_in!(lang, "{cpu} ({n} logical cores)", cpu = c.brand().trim(), n = sys.cpus().len()),
        ));
    }
    if sys.total_memory() > 0 {
        v.push((tr_in!(lang, "RAM").to_string(), units::bytes(sys.total_memory())));
    }
    v
}

/// Builds the document (not yet redacted).
pub fn build(inp: &Inputs<'_>) -> ReportDoc {
    let lang = inp.lang;
    let mut sections = vec![summary_section(inp), gpu_section(inp.snapshot, lang)];
    if let Some(c) = inp.checklist {
        sections.push(checklist_section(c, lang));
    }
    if let Some(b) = inp.bottlenecks {
        sections.push(bottleneck_section(b, lang));
    }
    if let Some((h, window, now)) = inp.history {
        sections.push(metrics_section(inp.snapshot, h, window, now, lang));
    }
    if let Some(s) = inp.smoke {
        sections.push(smoke_section(s, lang));
    }
    if let Some(lines) = &inp.vram {
        sections.push(Section {
            title: tr_in!(lang, "VRAM estimate").to_string(),
            items: lines.iter().map(|l| Item::Text { text: l.clone() }).collect(),
        });
    }
    document(sections, lang)
}

/// The diagnosis a report (and the support card) leads with: the checklist's root cause and its
/// fix; without GPU data and without a checklist failure, NVML's own explanation.
pub fn headline(source: &SourceStatus, checklist: Option<&crate::diagnose::Report>) -> Option<Headline> {
    match (source, checklist) {
        (SourceStatus::Unavailable(no), c) => Some(Headline::for_no_gpu(c, no)),
        (_, Some(c)) => Headline::of_report(c),
        _ => None,
    }
}

/// A fix step as the report shows it: its words in the report's language (a report is written
/// once, in one language), commands as they are.
pub(super) fn shown_step(step: &diagnose::FixStep, lang: Lang) -> diagnose::FixStep {
    match step {
        diagnose::FixStep::Text(t) => diagnose::FixStep::Text(crate::i18n::Message::data(t.render(lang))),
        diagnose::FixStep::Command(c) => diagnose::FixStep::Command(c.clone()),
    }
}

/// A report of these sections, made now, not yet redacted.
fn document(sections: Vec<Section>, lang: Lang) -> ReportDoc {
    ReportDoc {
        format: REPORT_FORMAT.to_string(),
        version: REPORT_VERSION,
        title: tr_in!(lang, "gpu-doctor report").to_string(),
        generated: chrono::Local::now().format("%Y-%m-%d %H:%M:%S %:z").to_string(),
        app_version: env!("CARGO_PKG_VERSION").to_string(),
        redaction: tr_in!(lang, "off").to_string(),
        sections,
        lang,
    }
}

/// The summary's first rows: the diagnosis and its first fix, then the checklist's verdict.
/// The diagnosis's first fix, step by step, to follow the summary's facts.
fn first_fix(headline: Option<&Headline>, lang: Lang) -> Option<Item> {
    let h = headline.filter(|h| !h.steps.is_empty())?;
    let steps = h
        .steps
        .iter()
        .map(|s| match s {
            diagnose::FixStep::Text(t) => diagnose::FixStep::Text(crate::i18n::Message::data(t.render(lang))),
            c @ diagnose::FixStep::Command(_) => c.clone(),
        })
        .collect();
    Some(Item::Steps { label: tr_in!(lang, "First fix").to_string(), steps })
}

fn diagnosis_rows(
    headline: Option<&Headline>,
    checklist: Option<&diagnose::Report>,
    lang: Lang,
) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    if let Some(h) = headline {
        rows.push((tr_in!(lang, "Diagnosis").to_string(), crate::present::sentence(&h.finding.render(lang))));
    }
    if let Some(c) = checklist {
        let root = c.root_cause.as_ref().and_then(|id| c.get(id));
        rows.push((
            tr_in!(lang, "Checklist").to_string(),
            match root {
                Some(r) => {
                    tr_in!(
                        lang,
                        "{verdict} — root cause: {finding}",
                        verdict = c.worst().word_in(lang),
                        finding = r.finding.render(lang)
                    )
                }
                None => c.worst().word_in(lang).to_string(),
            },
        ));
    }
    rows
}

fn summary_section(inp: &Inputs<'_>) -> Section {
    let lang = inp.lang;
    // The one diagnosis shown first everywhere: the checklist's root cause and its fix; without GPU
    // data and without a checklist failure, NVML's own explanation.
    let head = headline(&inp.snapshot.source, inp.checklist);
    let mut rows = diagnosis_rows(head.as_ref(), inp.checklist, lang);
    if let Some(s) = inp.smoke {
        rows.push((
            tr_in!(lang, "Smoke test").to_string(),
            tr_in!(lang, "{label}: {value}", label = s.verdict.word_in(lang), value = s.summary.render(lang)),
        ));
    }
    // A driver call that hung while the metrics were sampled is said here, not only in the
    // metrics' event list: the GPU figures of that time are missing.
    let stalls: Vec<String> = inp
        .history
        .map(|(h, from, to)| {
            h.events()
                .filter(|e| e.t >= from && e.t <= to && e.kind == crate::telemetry::history::EventKind::GpuStall)
                .map(|e| e.text.render(lang))
                .collect()
        })
        .unwrap_or_default();
    if let Some(st) = &inp.snapshot.gpu_stall {
        rows.push((tr_in!(lang, "GPU not responding").to_string(), st.message().render(lang)));
    } else if let Some(first) = stalls.first() {
        rows.push((
            tr_in!(lang, "GPU not responding").to_string(),
            tr_in!(lang,
                "the driver stopped answering {n} time(s) while sampling ({first}); check the kernel log (sudo dmesg | grep -i -e xid -e nvrm)",
                n = stalls.len(),
                first = first
            ),
        ));
    }
    rows.push((tr_in!(lang, "GPU data").to_string(), inp.snapshot.source.label().render(lang)));
    match &inp.snapshot.remote {
        // The machine facts would describe the desktop the report was made on, not the server.
        Some(r) => {
            rows.push((tr_in!(lang, "Server (REMOTE, over SSH)").to_string(), r.host.clone()));
            rows.push((tr_in!(lang, "Link").to_string(), r.line().render(lang)));
            if let Some(v) = &r.version {
                rows.push((tr_in!(lang, "gpu-doctor on the server").to_string(), v.clone()));
            }
            if r.invalid_lines + r.dropped_lines > 0 || !r.unread.is_empty() {
                rows.push((
                    tr_in!(lang, "Stream problems").to_string(),
                    tr_in!(
                        lang,
                        "{invalid} unreadable line(s), {dropped} dropped; not understood: {unread}",
                        invalid = r.invalid_lines,
                        dropped = r.dropped_lines,
                        unread = r.unread_list().render(lang)
                    ),
                ));
            }
        }
        None => rows.extend(inp.machine.iter().cloned()),
    }
    rows.push(("gpu-doctor".to_string(), env!("CARGO_PKG_VERSION").to_string()));
    if let Some(r) = &inp.renderer {
        rows.push((tr_in!(lang, "Renderer").to_string(), r.clone()));
    }
    let mut items = vec![Item::Facts { rows }];
    items.extend(first_fix(head.as_ref(), lang));
    if inp.snapshot.is_demo() {
        items.push(Item::Text {
            text: tr_in!(lang, "DEMO DATA: the GPU figures are simulated, not this machine.").to_string(),
        });
    }
    Section { title: tr_in!(lang, "Summary").to_string(), items }
}

fn reading<T: std::fmt::Display>(r: &crate::telemetry::reading::Reading<T>, lang: Lang) -> String {
    match r.value() {
        Some(v) => v.to_string(),
        None => tr_in!(lang, "n/a").to_string(),
    }
}

fn gpu_section(snap: &Snapshot, lang: Lang) -> Section {
    let inv = &snap.inventory;
    let mut facts = Vec::new();
    if let Some(d) = &inv.driver_version {
        facts.push((tr_in!(lang, "Driver").to_string(), reading(d, lang)));
    }
    if let Some(c) = &inv.cuda_driver_version {
        facts.push((tr_in!(lang, "CUDA (driver)").to_string(), reading(c, lang)));
    }
    if let Some(n) = &inv.nvml_version {
        facts.push(("NVML".to_string(), reading(n, lang)));
    }
    let headers = [
        "GPU",
        tr_in!(lang, "Name"),
        "UUID",
        "PCI",
        tr_in!(lang, "VRAM"),
        tr_in!(lang, "Compute capability"),
        tr_in!(lang, "Max PCIe"),
        "VBIOS",
    ];
    let rows = inv
        .gpus
        .iter()
        .map(|g| {
            vec![
                g.index.to_string(),
                crate::present::gpu_name(&g.name, lang),
                reading(&g.uuid, lang),
                reading(&g.pci_bus_id, lang),
                g.vram_total_bytes.value().map_or(tr_in!(lang, "n/a").to_string(), |b| units::bytes(*b)),
                reading(&g.compute_capability, lang),
                match (g.max_pcie_gen.value(), g.max_pcie_width.value()) {
                    (Some(gen_), Some(w)) => format!("Gen{gen_} x{w}"),
                    _ => tr_in!(lang, "n/a").to_string(),
                },
                reading(&g.vbios_version, lang),
            ]
        })
        .collect::<Vec<_>>();
    let mut items = Vec::new();
    if !facts.is_empty() {
        items.push(Item::Facts { rows: facts });
    }
    if rows.is_empty() {
        items.push(Item::Text { text: no_gpu_sentence(&snap.source, lang) });
    } else {
        items.push(Item::Table { headers: headers.iter().map(|h| (*h).to_string()).collect(), rows });
    }
    // ("GPU devices", not "GPUs": the catalogue's "GPUs" is a number of GPUs, GPU 数量.)
    Section { title: tr_in!(lang, "GPU devices").to_string(), items }
}

/// What the GPU section says instead of an empty table.
fn no_gpu_sentence(source: &SourceStatus, lang: Lang) -> String {
    match source {
        SourceStatus::Unavailable(no) => {
            tr_in!(lang, "No NVIDIA GPU could be read: {reason}", reason = no.summary_message().render(lang))
        }
        SourceStatus::Asleep { .. } => tr_in!(
            lang,
            "The NVIDIA GPU is asleep ({state}); it was not read, so it stays asleep.",
            state = crate::i18n::tr_static(lang, ASLEEP_STATE)
        ),
        SourceStatus::Opening => tr_in!(lang, "NVML was still opening; no GPU had been read yet.").to_string(),
        SourceStatus::Nvml { .. } => tr_in!(lang, "The NVIDIA driver answered but lists no GPU.").to_string(),
        other => tr_in!(lang, "No GPU in this data ({source}).", source = other.label().render(lang)),
    }
}

/// Redacts every string of the document and records what was redacted.
pub fn redact_doc(doc: &mut ReportDoc, red: &mut Redactor) {
    let lang = doc.lang;
    let o = red.options();
    doc.redaction = if o.enabled {
        let mut what = Vec::new();
        if o.hostname {
            what.push(tr_in!(lang, "host names"));
        }
        if o.users {
            what.push(tr_in!(lang, "user names and home paths"));
        }
        if o.ip {
            what.push(tr_in!(lang, "IP addresses"));
        }
        if o.mac {
            what.push(tr_in!(lang, "MAC addresses"));
        }
        if o.gpu_ids {
            what.push(tr_in!(lang, "GPU UUIDs and serial numbers"));
        }
        tr_in!(lang, "on: {what}", what = what.join(tr_in!(lang, ", ")))
    } else {
        tr_in!(lang, "off").to_string()
    };
    // By structure: only the host name's fact may be a name as a whole; every other text (a
    // heading, a fact's name or value, a column, a verdict word, a check's title, a sentence) is
    // never taken whole for a name that is a word ("Kernel" with USER=kernel, "INFO" with
    // USER=info); names are redacted wherever they stand as values inside it.
    let host_label = tr_in!(lang, "Host name");
    let value = |red: &mut Redactor, s: &mut String| *s = red.inside(s);
    let label = value;
    label(red, &mut doc.title);
    value(red, &mut doc.generated);
    value(red, &mut doc.app_version);
    for sec in &mut doc.sections {
        label(red, &mut sec.title);
        for item in &mut sec.items {
            match item {
                Item::Facts { rows } => {
                    for (k, v) in rows {
                        *v = if k == host_label { red.text(v) } else { red.inside(v) };
                        label(red, k);
                    }
                }
                Item::Text { text } => value(red, text),
                Item::Table { headers, rows } => {
                    headers.iter_mut().for_each(|h| label(red, h));
                    rows.iter_mut().flatten().for_each(|c| value(red, c));
                }
                Item::Steps { label: l, steps } => {
                    label(red, l);
                    for st in steps {
                        match st {
                            diagnose::FixStep::Text(t) => *t = red.message(t),
                            diagnose::FixStep::Command(t) => value(red, t),
                        }
                    }
                }
                Item::Verdict { verdict, title, summary, evidence, fix, steps } => {
                    label(red, verdict);
                    label(red, title);
                    value(red, summary);
                    evidence.iter_mut().for_each(|e| value(red, e));
                    if let Some(f) = fix {
                        value(red, f);
                    }
                    for st in steps {
                        match st {
                            diagnose::FixStep::Text(t) => *t = red.message(t),
                            diagnose::FixStep::Command(t) => value(red, t),
                        }
                    }
                }
            }
        }
    }
}

pub use render::{escape_html, render};

#[cfg(test)]
mod tests;
