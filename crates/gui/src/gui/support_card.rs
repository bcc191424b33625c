//! The one-screen support card: what is wrong and the first fix, one row per GPU, the machine, the
//! checklist's problems and the smoke test, redacted, laid out to fit a 1280×800 window with up to
//! eight GPUs so a single screenshot carries it into a support ticket.

use crate::i18n::Here as _;
use eframe::egui::{self, RichText};

use super::palette::{self, Tone};
use crate::diagnose::FixStep;
use crate::diagnose::headline::Headline;
use crate::report::redact::{RedactOptions, Redactor, Secrets};
use crate::report::{self, Item, ReportDoc};
use crate::{tr, tr_key};

/// Most checklist problems the card lists (the full report has all of them).
const MAX_PROBLEMS: usize = 5;

/// The card's GPU table headings (in English; shown through `crate::i18n::tr`).
pub const GPU_HEADERS: [&str; 8] = [
    "GPU",
    tr_key!("Name"),
    tr_key!("Utilization"),
    tr_key!("VRAM"),
    tr_key!("Temperature"),
    tr_key!("Power"),
    tr_key!("PCIe link"),
    tr_key!("Clocks held back by"),
];

/// Summary rows the card shows elsewhere (the diagnosis block) or not at all.
const SUMMARY_SHOWN_ELSEWHERE: [&str; 3] = ["Diagnosis", "First fix", "Checklist"];

/// True when a title or key of the document is `en`, in English or in the current language (the
/// document is written in the language of the moment it was made).
fn is(text: &str, en: &'static str) -> bool {
    text == en || text == crate::i18n::tr(en)
}

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
    /// The GPU data is simulated (demo mode).
    pub demo: bool,
    /// The file (a user's capture or bug report) the card was made from, redacted.
    pub from_file: Option<String>,
    /// A save dialog in flight.
    save: Option<super::share::Chooser>,
    /// The last copy or save outcome.
    pub message: Option<String>,
    /// The redaction it was made with (a saved file's name leaves the host out when it is on).
    redact: RedactOptions,
    /// The keyboard focus moves to the first button when the card opens.
    focus_first: bool,
}

/// What the card's buttons ask of the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CardAction {
    /// Take a screenshot of the card (named after it).
    Screenshot,
}

impl SupportCard {
    /// Opens the card on `doc` with its diagnosis `headline`, redacted with `redact`.
    pub fn show_for(
        &mut self,
        mut doc: ReportDoc,
        headline: Option<Headline>,
        redact: RedactOptions,
        snap: &crate::telemetry::snapshot::Snapshot,
        origin: Option<&crate::diagnose::origin::Origin>,
    ) {
        let mut red = Redactor::new(redact, Secrets::this_machine().with_origin(origin));
        self.redact = redact;
        self.message = None;
        self.focus_first |= !self.open;
        report::redact_doc(&mut doc, &mut red);
        self.headline = headline.map(|h| Headline {
            finding: red.message(&h.finding),
            steps: h
                .steps
                .iter()
                .map(|s| match s {
                    FixStep::Text(t) => FixStep::Text(red.message(t)),
                    FixStep::Command(c) => FixStep::Command(red.text(c)),
                })
                .collect(),
            check_id: h.check_id,
        });
        self.from_file = origin.map(|o| red.text(&o.file));
        if let Some(o) = origin {
            // A user's file: its GPUs as it lists them; it holds no live readings.
            self.gpus = o
                .gpus
                .iter()
                .map(|g| {
                    let (i, name) = g.split_once(": ").unwrap_or(("", g));
                    vec![i.to_string(), red.text(name)]
                })
                .collect();
            self.demo = false;
            self.doc = Some(doc);
            self.open = true;
            return;
        }
        let info = |i: u32| snap.inventory.gpus.iter().find(|g| g.index == i);
        self.gpus = snap
            .inventory
            .gpus
            .iter()
            .map(|g| {
                let mut row =
                    vec![g.index.to_string(), red.text(&crate::present::gpu_name(&g.name, crate::i18n::current()))];
                match snap.gpus.iter().find(|s| s.index == g.index) {
                    Some(s) => row.extend([
                        crate::present::pct(&s.util_gpu_pct, crate::i18n::current()),
                        crate::present::vram(s, crate::i18n::current()),
                        crate::present::temperature(s, info(g.index), crate::i18n::current()),
                        crate::present::power(s, crate::i18n::current()),
                        crate::present::pcie_link(s, info(g.index), crate::i18n::current()),
                        crate::present::throttle_summary(s, crate::i18n::current()),
                    ]),
                    None => row.push(tr!("no sample yet").to_string()),
                }
                row
            })
            .collect();
        self.demo = snap.is_demo();
        self.doc = Some(doc);
        self.open = true;
    }

    /// True when the card was built with the checklist's result.
    pub fn has_checklist(&self) -> bool {
        self.doc.as_ref().is_some_and(|d| section(d, "Checklist").is_some())
    }

    /// Draws the card: its own view over the whole window (scrolling only when a very small
    /// window cannot hold it).
    pub fn ui(&mut self, ctx: &egui::Context, screenshot_message: Option<&str>) -> Option<CardAction> {
        if let Some(Some(path)) = super::share::poll_dialog(ctx, &mut self.save)
            && let Some(doc) = &self.doc
        {
            let text = report::render(doc, report::Format::Md);
            self.message = Some(match super::share::write_new(&path, text.as_bytes()) {
                Ok(()) => tr!("Support card saved to {path}.", path = path.display()),
                Err(e) => tr!("Could not save {path}: {error}", path = path.display(), error = e),
            });
        }
        if self.save.is_some() {
            ctx.request_repaint_after(std::time::Duration::from_millis(100));
        }
        let Some(doc) = &self.doc else { return None };
        let mut action = None;
        let mut copy = false;
        let mut save = false;
        let mut open = self.open;
        let area = ctx.content_rect().shrink(6.0);
        let shown = egui::Window::new(tr!("Support card"))
            .open(&mut open)
            .collapsible(false)
            .resizable(false)
            .fixed_rect(area)
            .show(ctx, |ui| {
                // The buttons and their outcome in one row above the card, which never moves: a
                // message takes the rest of the row instead of pushing the card down.
                ui.horizontal(|ui| {
                    let first = ui
                        .button(tr!("Copy as text"))
                        .on_hover_text(tr!("Copy the card's report as Markdown text, redacted as shown"));
                    if std::mem::take(&mut self.focus_first) {
                        first.request_focus();
                    }
                    copy = first.clicked();
                    save = ui
                        .button(tr!("Save..."))
                        .on_hover_text(tr!("Save the card's report as a Markdown file"))
                        .clicked();
                    if ui
                        .button(tr!("Screenshot of the card"))
                        .on_hover_text(tr!("Save a PNG of the card and copy it to the clipboard"))
                        .clicked()
                    {
                        action = Some(CardAction::Screenshot);
                    }
                    if let Some(m) = self.message.as_deref().or(screenshot_message) {
                        ui.add(egui::Label::new(RichText::new(m).weak()).truncate());
                    }
                });
                egui::ScrollArea::both().auto_shrink([false, false]).show(ui, |ui| {
                    ui.spacing_mut().item_spacing.y = 3.0;
                    if let Some(file) = &self.from_file {
                        ui.label(
                            RichText::new(tr!(
                                "FROM THE FILE {file}: the machine it was made on, not this one",
                                file = file
                            ))
                            .strong()
                            .color(palette::BADGE_REPLAY.text)
                            .background_color(palette::BADGE_REPLAY.fill),
                        );
                    }
                    title(ui, doc, self.demo);
                    diagnosis(ui, self.headline.as_ref(), doc, self.demo);
                    gpu_table(ui, &self.gpus);
                    ui.separator();
                    ui.columns(2, |cols| {
                        machine(&mut cols[0], doc);
                        problems(&mut cols[1], doc);
                        smoke(&mut cols[1], doc);
                    });
                });
            });
        if let Some(r) = &shown {
            super::hold_keyboard(ctx, &r.response);
        }
        self.open = open;
        if copy {
            ctx.copy_text(report::render(doc, report::Format::Md));
            self.message = Some(tr!("Support card copied to the clipboard as text.").to_string());
        }
        if save && self.save.is_none() {
            let name = format!("{}.md", super::share::file_stem("support-card", &self.redact));
            self.save = Some(super::share::save_dialog(name, (tr!("Report"), "md")));
        }
        if action.is_some() {
            self.message = None;
        }
        action
    }
}

/// The section called `title` (in English or in the current language), if the document has it.
fn section<'a>(doc: &'a ReportDoc, title: &'static str) -> Option<&'a report::Section> {
    let names = [title, crate::i18n::tr(title)];
    doc.sections
        .iter()
        .find(|s| names.iter().any(|n| s.title == *n || (title == "Checklist" && s.title.starts_with(*n))))
}

/// The key-value rows of a section's fact lists.
fn facts<'a>(doc: &'a ReportDoc, title: &'static str) -> impl Iterator<Item = &'a (String, String)> {
    section(doc, title).into_iter().flat_map(|s| &s.items).flat_map(|i| match i {
        Item::Facts { rows } => rows.as_slice(),
        _ => &[],
    })
}

fn title(ui: &mut egui::Ui, doc: &ReportDoc, demo: bool) {
    ui.horizontal_wrapped(|ui| {
        ui.label(
            RichText::new(tr!("gpu-doctor {version} support card", version = doc.app_version)).strong().size(16.0),
        );
        ui.label(
            RichText::new(tr!(
                "{generated} · redaction {redaction}",
                generated = doc.generated,
                redaction = doc.redaction
            ))
            .weak(),
        );
    });
    let demo_data = facts(doc, "Summary").find(|(k, v)| is(k, "GPU data") && (demo || v.starts_with("DEMO")));
    if let Some((_, data)) = demo_data {
        ui.label(
            RichText::new(tr!("{data}: the GPU figures are simulated", data = data))
                .strong()
                .color(palette::tone(ui, Tone::Warn)),
        );
    }
}

/// The diagnosis block: the root cause and its first fix (prose wrapped, each command on its own
/// line with a Copy button), or the report's diagnosis line when there is no failure.
fn diagnosis(ui: &mut egui::Ui, headline: Option<&Headline>, doc: &ReportDoc, demo: bool) {
    ui.separator();
    match headline {
        Some(h) => {
            let tone = if h.from_checklist() { Tone::Fail } else { Tone::Warn };
            // With demo GPU data the checklist still judged this machine: say so.
            let demo = demo || facts(doc, "Summary").any(|(k, v)| is(k, "GPU data") && v.starts_with("DEMO"));
            let finding = crate::present::sentence(&h.finding.here());
            let line = if demo {
                tr!("Root cause on this machine (not the demo data): {finding}", finding = finding)
            } else {
                tr!("Root cause: {finding}", finding = finding)
            };
            ui.label(RichText::new(line).strong().size(15.0).color(palette::tone(ui, tone)));
            if !h.steps.is_empty() {
                ui.label(RichText::new(tr!("First fix")).strong());
                // The fix, without the questions about which cause it is that may follow it (the
                // checklist and the report hold them); questions that are the whole fix stay.
                let cut = h
                    .steps
                    .iter()
                    .position(crate::diagnose::differential::is_candidate_question)
                    .filter(|&i| i > 0)
                    .unwrap_or(h.steps.len());
                super::checklist::fix_steps(ui, &h.steps[..cut], None);
                if cut < h.steps.len() {
                    ui.label(RichText::new(tr!("Which cause it is: see the checklist")).weak());
                }
            }
        }
        None => {
            let line = facts(doc, "Summary")
                .find(|(k, _)| is(k, "Checklist"))
                .map_or(tr!("The checklist has not run.").to_string(), |(_, v)| tr!("Checklist: {result}", result = v));
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
        // (A file's GPUs have a name and no live readings: only those columns.)
        let columns = rows.iter().map(Vec::len).max().unwrap_or(0).max(2);
        for h in GPU_HEADERS.iter().take(columns) {
            ui.label(RichText::new(crate::i18n::tr(h)).strong());
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
    ui.label(RichText::new(tr!("Machine")).strong());
    let rows = facts(doc, "Summary")
        .filter(|(k, _)| !SUMMARY_SHOWN_ELSEWHERE.into_iter().any(|en| is(k, en)))
        .chain(facts(doc, "GPU devices"));
    egui::Grid::new("card_machine").num_columns(2).spacing([10.0, 2.0]).show(ui, |ui| {
        for (k, v) in rows {
            ui.label(RichText::new(k).weak());
            ui.add(egui::Label::new(v).wrap());
            ui.end_row();
        }
    });
}

/// What a verdict word's colour is (the word in English or in the current language).
fn tone_of(verdict: &str) -> Option<Tone> {
    let says = |word: &'static str| verdict.starts_with(word) || verdict.starts_with(crate::i18n::tr(word));
    if says("FAIL") {
        Some(Tone::Fail)
    } else if says("WARN") {
        Some(Tone::Warn)
    } else {
        None
    }
}

/// The verdict lines of a section that are failures or warnings.
fn bad_lines<'a>(doc: &'a ReportDoc, title: &'static str) -> Vec<(&'a str, &'a str, &'a str)> {
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
        ui.label(tr!("{label}: {value}", label = title, value = summary));
    });
}

/// The checklist's failures and warnings, at most [`MAX_PROBLEMS`].
fn problems(ui: &mut egui::Ui, doc: &ReportDoc) {
    let Some(sec) = section(doc, "Checklist") else { return };
    ui.label(RichText::new(&sec.title).strong());
    let bad = bad_lines(doc, "Checklist");
    if bad.is_empty() {
        ui.label(tr!("No failures or warnings."));
    }
    let more = bad.len().saturating_sub(MAX_PROBLEMS);
    for line in bad.into_iter().take(MAX_PROBLEMS) {
        verdict_line(ui, line);
    }
    if more > 0 {
        ui.weak(tr!("…and {more} more in the full report.", more = more));
    }
}

/// The smoke test's result: its facts and the stages that failed.
fn smoke(ui: &mut egui::Ui, doc: &ReportDoc) {
    const TITLE: &str = tr_key!("CUDA smoke test");
    if section(doc, TITLE).is_none() {
        return;
    }
    ui.add_space(4.0);
    ui.label(RichText::new(crate::i18n::tr(TITLE)).strong());
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
