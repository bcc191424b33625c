//! The one-screen support card: what is wrong and the first fix, one row per GPU, the machine, the
//! checklist's problems and the smoke test, redacted, laid out to fit a 1280×800 window with up to
//! eight GPUs so a single screenshot carries it into a support ticket.

use eframe::egui::{self, RichText};

use super::palette::{self, Tone};
use crate::diagnose::FixStep;
use crate::diagnose::headline::Headline;
use crate::report::redact::{RedactOptions, Redactor, Secrets};
use crate::report::{self, Item, ReportDoc};

/// Most checklist problems the card lists (the full report has all of them).
const MAX_PROBLEMS: usize = 5;

/// The card's GPU table headings.
pub const GPU_HEADERS: [&str; 8] =
    ["GPU", "Name", "Utilization", "VRAM", "Temperature", "Power", "PCIe link", "Clocks held back by"];

/// Summary rows the card shows elsewhere (the diagnosis block) or not at all.
const SUMMARY_SHOWN_ELSEWHERE: [&str; 3] = ["Diagnosis", "First fix", "Checklist"];

/// The support card's content, redacted when it was opened.
#[derive(Default)]
pub struct SupportCard {
    /// Shown.
    pub open: bool,
    /// The redacted document it shows.
    pub doc: Option<ReportDoc>,
    /// What is wrong and the first fix (redacted), when something is.
    pub headline: Option<Headline>,
    /// One row per GPU, cells as [`GPU_HEADERS`].
    pub gpus: Vec<Vec<String>>,
}

impl SupportCard {
    /// Opens the card on `doc` with its diagnosis `headline`, redacted with `redact`.
    pub fn show_for(
        &mut self,
        mut doc: ReportDoc,
        headline: Option<Headline>,
        redact: RedactOptions,
        snap: &crate::telemetry::snapshot::Snapshot,
    ) {
        let mut red = Redactor::new(redact, Secrets::this_machine());
        report::redact_doc(&mut doc, &mut red);
        self.headline = headline.map(|h| Headline {
            finding: red.text(&h.finding),
            steps: h
                .steps
                .iter()
                .map(|s| match s {
                    FixStep::Text(t) => FixStep::Text(red.text(t)),
                    FixStep::Command(c) => FixStep::Command(red.text(c)),
                })
                .collect(),
            check_id: h.check_id,
        });
        let info = |i: u32| snap.inventory.gpus.iter().find(|g| g.index == i);
        self.gpus = snap
            .inventory
            .gpus
            .iter()
            .map(|g| {
                let mut row = vec![g.index.to_string(), red.text(&g.name)];
                match snap.gpus.iter().find(|s| s.index == g.index) {
                    Some(s) => row.extend([
                        crate::present::pct(&s.util_gpu_pct),
                        crate::present::vram(s),
                        crate::present::temperature(s, info(g.index)),
                        crate::present::power(s),
                        crate::present::pcie_link(s, info(g.index)),
                        crate::present::throttle_summary(s),
                    ]),
                    None => row.push("no sample yet".to_string()),
                }
                row
            })
            .collect();
        self.doc = Some(doc);
        self.open = true;
    }

    /// True when the card was built with the checklist's result.
    pub fn has_checklist(&self) -> bool {
        self.doc.as_ref().is_some_and(|d| section(d, "Checklist").is_some())
    }

    /// Draws the card: its own view over the whole window (scrolling only when a very small
    /// window cannot hold it).
    pub fn ui(&mut self, ctx: &egui::Context) {
        let Some(doc) = &self.doc else { return };
        let mut open = self.open;
        let area = ctx.content_rect().shrink(6.0);
        egui::Window::new("Support card").open(&mut open).collapsible(false).resizable(false).fixed_rect(area).show(
            ctx,
            |ui| {
                egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
                    ui.spacing_mut().item_spacing.y = 3.0;
                    title(ui, doc);
                    diagnosis(ui, self.headline.as_ref(), doc);
                    gpu_table(ui, &self.gpus);
                    ui.separator();
                    ui.columns(2, |cols| {
                        machine(&mut cols[0], doc);
                        problems(&mut cols[1], doc);
                        smoke(&mut cols[1], doc);
                    });
                });
            },
        );
        self.open = open;
    }
}

/// The section called `title`, if the document has it.
fn section<'a>(doc: &'a ReportDoc, title: &str) -> Option<&'a report::Section> {
    doc.sections.iter().find(|s| s.title == title || (title == "Checklist" && s.title.starts_with("Checklist")))
}

/// The key-value rows of a section's fact lists.
fn facts<'a>(doc: &'a ReportDoc, title: &str) -> impl Iterator<Item = &'a (String, String)> {
    section(doc, title).into_iter().flat_map(|s| &s.items).flat_map(|i| match i {
        Item::Facts { rows } => rows.as_slice(),
        _ => &[],
    })
}

fn title(ui: &mut egui::Ui, doc: &ReportDoc) {
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new(format!("gpu-doctor {} support card", doc.app_version)).strong().size(16.0));
        ui.label(RichText::new(format!("{} · redaction {}", doc.generated, doc.redaction)).weak());
    });
    if let Some((_, data)) = facts(doc, "Summary").find(|(k, v)| k == "GPU data" && v.starts_with("DEMO")) {
        ui.label(
            RichText::new(format!("{data}: the GPU figures are simulated"))
                .strong()
                .color(palette::tone(ui, Tone::Warn)),
        );
    }
}

/// The diagnosis block: the root cause and its first fix (prose wrapped, each command on its own
/// line with a Copy button), or the report's diagnosis line when there is no failure.
fn diagnosis(ui: &mut egui::Ui, headline: Option<&Headline>, doc: &ReportDoc) {
    ui.separator();
    match headline {
        Some(h) => {
            let tone = if h.from_checklist() { Tone::Fail } else { Tone::Warn };
            // With demo GPU data the checklist still judged this machine: say so.
            let demo = facts(doc, "Summary").any(|(k, v)| k == "GPU data" && v.starts_with("DEMO"));
            let prefix = if demo { "Root cause on this machine (not the demo data)" } else { "Root cause" };
            ui.label(
                RichText::new(format!("{prefix}: {}", crate::present::sentence(&h.finding)))
                    .strong()
                    .size(15.0)
                    .color(palette::tone(ui, tone)),
            );
            if !h.steps.is_empty() {
                ui.label(RichText::new("First fix").strong());
                super::checklist::fix_steps(ui, &h.steps, None);
            }
        }
        None => {
            let line = facts(doc, "Summary")
                .find(|(k, _)| k == "Checklist")
                .map_or("The checklist has not run.".to_string(), |(_, v)| format!("Checklist: {v}"));
            ui.label(RichText::new(line).strong());
        }
    }
}

fn gpu_table(ui: &mut egui::Ui, rows: &[Vec<String>]) {
    if rows.is_empty() {
        return;
    }
    ui.separator();
    egui::Grid::new("card_gpus").striped(true).spacing([10.0, 2.0]).show(ui, |ui| {
        for h in GPU_HEADERS {
            ui.label(RichText::new(h).strong());
        }
        ui.end_row();
        for r in rows {
            for c in r {
                ui.label(c);
            }
            ui.end_row();
        }
    });
}

/// The machine: the summary's facts (OS, kernel, CPU, RAM, renderer...) and the driver, CUDA and
/// NVML versions.
fn machine(ui: &mut egui::Ui, doc: &ReportDoc) {
    ui.label(RichText::new("Machine").strong());
    let rows =
        facts(doc, "Summary").filter(|(k, _)| !SUMMARY_SHOWN_ELSEWHERE.contains(&k.as_str())).chain(facts(doc, "GPUs"));
    egui::Grid::new("card_machine").num_columns(2).spacing([10.0, 2.0]).show(ui, |ui| {
        for (k, v) in rows {
            ui.label(RichText::new(k).weak());
            ui.add(egui::Label::new(v).wrap());
            ui.end_row();
        }
    });
}

/// What a verdict word's colour is.
fn tone_of(verdict: &str) -> Option<Tone> {
    if verdict.starts_with("FAIL") {
        Some(Tone::Fail)
    } else if verdict.starts_with("WARN") {
        Some(Tone::Warn)
    } else {
        None
    }
}

/// The verdict lines of a section that are failures or warnings.
fn bad_lines<'a>(doc: &'a ReportDoc, title: &str) -> Vec<(&'a str, &'a str, &'a str)> {
    section(doc, title)
        .into_iter()
        .flat_map(|s| &s.items)
        .filter_map(|i| match i {
            Item::Verdict { verdict, title, summary, .. } if tone_of(verdict).is_some() => {
                Some((verdict.as_str(), title.as_str(), summary.as_str()))
            }
            _ => None,
        })
        .collect()
}

fn verdict_line(ui: &mut egui::Ui, (verdict, title, summary): (&str, &str, &str)) {
    let color = palette::tone(ui, tone_of(verdict).unwrap_or(Tone::Info));
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new(verdict).strong().color(color));
        ui.label(format!("{title}: {summary}"));
    });
}

/// The checklist's failures and warnings, at most [`MAX_PROBLEMS`].
fn problems(ui: &mut egui::Ui, doc: &ReportDoc) {
    let Some(sec) = section(doc, "Checklist") else { return };
    ui.label(RichText::new(&sec.title).strong());
    let bad = bad_lines(doc, "Checklist");
    if bad.is_empty() {
        ui.label("No failures or warnings.");
    }
    let more = bad.len().saturating_sub(MAX_PROBLEMS);
    for line in bad.into_iter().take(MAX_PROBLEMS) {
        verdict_line(ui, line);
    }
    if more > 0 {
        ui.weak(format!("…and {more} more in the full report."));
    }
}

/// The smoke test's result: its facts and the stages that failed.
fn smoke(ui: &mut egui::Ui, doc: &ReportDoc) {
    const TITLE: &str = "CUDA smoke test";
    if section(doc, TITLE).is_none() {
        return;
    }
    ui.add_space(4.0);
    ui.label(RichText::new(TITLE).strong());
    egui::Grid::new("card_smoke").num_columns(2).spacing([10.0, 2.0]).show(ui, |ui| {
        for (k, v) in facts(doc, TITLE) {
            ui.label(RichText::new(k).weak());
            ui.add(egui::Label::new(v).wrap());
            ui.end_row();
        }
    });
    for line in bad_lines(doc, TITLE) {
        verdict_line(ui, line);
    }
}
