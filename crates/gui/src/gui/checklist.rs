//! The Checklist tab: a step-by-step wizard over the layers of the stack (one layer per step, with
//! progress, Back / Next and Re-check) and an all-results view for experts. The checks run on a
//! background thread (NVML may be slow or hung); the window stays responsive meanwhile.

use crate::i18n::{Here as _, Word as _};
use std::sync::mpsc::{Receiver, TryRecvError};

use eframe::egui::{self, Color32, RichText};

use super::palette;

use crate::diagnose::input::CheckSource;
use crate::diagnose::{Check, FixStep, Layer, Report, Verdict};
use crate::tr;

/// What the checklist reads (this machine or a capture directory).
pub type ChecklistSource = CheckSource;

/// State of the Checklist tab.
pub struct ChecklistState {
    source: ChecklistSource,
    /// The latest results.
    pub report: Option<Report>,
    /// Why the last run failed (e.g. an unreadable capture).
    pub error: Option<String>,
    pending: Option<Receiver<Result<Report, String>>>,
    /// The wizard step (index into [`Layer::ALL`]).
    pub step: usize,
    /// Show every result at once instead of the wizard.
    pub show_all: bool,
    /// "Open…" dialogs in flight.
    open_dialog: Option<super::share::Chooser>,
    /// Where "Back to this machine" returns to (this machine, or the server connected to).
    home: ChecklistSource,
    /// What was shown before a file was opened (its source, results and step): shown again when
    /// the file cannot be read, so a wrong file dropped on the window loses nothing.
    previous: Option<(ChecklistSource, Option<Report>, usize)>,
}

fn run_checks(source: &ChecklistSource, renderer: Option<String>) -> Result<Report, String> {
    source.run(renderer).map_err(|e| match source {
        // A file that is not one the checklist reads is named for what it is, with what was
        // expected, before the reader's own words.
        // (The reader's own error says nothing more about a file of another kind.)
        ChecklistSource::Capture(path) if is_other_kind(path) => tr!(
            "Could not read {file}: it is {what}. The checklist reads an nvidia-bug-report.log(.gz), the text output of nvidia-smi -q, or a gpu-doctor capture (.tar.gz or its folder).",
            file = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned()),
            what = crate::diagnose::input::what_file_is(path).here()
        ),
        ChecklistSource::Capture(path) => tr!(
            "Could not read {file}: it is {what}. The checklist reads an nvidia-bug-report.log(.gz), the text output of nvidia-smi -q, or a gpu-doctor capture (.tar.gz or its folder). ({error})",
            file = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned()),
            what = crate::diagnose::input::what_file_is(path).here(),
            error = e.here()
        ),
        _ => e.to_string(),
    })
}

/// A file that is none of the kinds the checklist reads (not a folder, an archive, a bug report
/// or nvidia-smi output).
fn is_other_kind(path: &std::path::Path) -> bool {
    use crate::diagnose::bugreport::{FileKind, sniff};
    path.is_file() && sniff(path) == FileKind::Other && !crate::diagnose::archive::is_archive(path)
}

impl ChecklistState {
    /// A tab that runs its checks when first shown.
    pub fn new(source: ChecklistSource) -> Self {
        ChecklistState {
            home: source.clone(),
            source,
            report: None,
            error: None,
            pending: None,
            step: 0,
            show_all: false,
            open_dialog: None,
            previous: None,
        }
    }

    /// The same, with `home` as where "Back to this machine" returns (a window started on a
    /// file returns to this machine).
    pub fn with_home(mut self, home: ChecklistSource) -> Self {
        self.home = home;
        self
    }

    /// True when the results are a file's (a capture or bug report), not this machine's.
    pub fn reads_a_file(&self) -> bool {
        matches!(self.source, ChecklistSource::Capture(_))
    }

    /// Leaves the file: the checks run on this machine (or the server connected to) again.
    pub fn back_home(&mut self, ctx: &egui::Context, renderer: &str) {
        self.source = self.home.clone();
        self.report = None;
        self.error = None;
        self.step = 0;
        self.pending = None;
        self.previous = None;
        self.start(ctx, renderer);
    }

    /// Runs the checks on `path` instead: a capture directory or `.tar.gz`, an
    /// `nvidia-bug-report.log(.gz)`, or the text of `nvidia-smi -q` (from Open… or a file dropped
    /// on the window).
    pub fn open(&mut self, ctx: &egui::Context, path: std::path::PathBuf, renderer: &str) {
        let old = std::mem::replace(&mut self.source, ChecklistSource::Capture(path));
        // (While another file is still opening, what to go back to is what was shown before it.)
        if self.previous.is_none() || self.report.is_some() {
            self.previous = Some((old, self.report.take(), self.step));
        }
        self.report = None;
        self.error = None;
        self.step = 0;
        // A run in flight for the old source is dropped; its result is never shown.
        self.pending = None;
        self.start(ctx, renderer);
    }

    /// True while checks are running.
    pub fn running(&self) -> bool {
        self.pending.is_some()
    }

    /// Starts a run on a background thread; the UI is woken when it ends.
    pub fn start(&mut self, ctx: &egui::Context, renderer: &str) {
        if self.pending.is_some() {
            return;
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let source = self.source.clone();
        let renderer = Some(renderer.to_string());
        let ctx = ctx.clone();
        let spawned = std::thread::Builder::new().name("gd-checklist".into()).spawn(move || {
            let _ = tx.send(run_checks(&source, renderer));
            ctx.request_repaint();
        });
        match spawned {
            Ok(_) => self.pending = Some(rx),
            Err(e) => self.error = Some(tr!("cannot start the checks: {error}", error = e)),
        }
    }

    fn set_report(&mut self, r: Report) {
        // Open the wizard on the root cause's layer.
        if let Some(layer) = r.root_cause.as_ref().and_then(|id| r.get(id)).map(|c| c.layer) {
            self.step = Layer::ALL.iter().position(|l| *l == layer).unwrap_or(0);
        }
        self.report = Some(r);
        self.error = None;
    }

    /// Takes the result of a background run if it has finished.
    pub fn poll(&mut self) {
        let Some(rx) = &self.pending else { return };
        match rx.try_recv() {
            Ok(Ok(r)) => {
                self.pending = None;
                self.previous = None;
                self.set_report(r);
            }
            Ok(Err(e)) => {
                self.pending = None;
                match self.previous.take() {
                    // The file could not be read: what was shown before comes back, with why.
                    Some((source, Some(report), step)) => {
                        self.source = source;
                        self.report = Some(report);
                        self.step = step;
                        self.error = Some(tr!("{error} The results shown are still the previous ones.", error = e));
                    }
                    _ => self.error = Some(e),
                }
            }
            Err(TryRecvError::Empty) => {}
            Err(TryRecvError::Disconnected) => {
                self.pending = None;
                self.error = Some(tr!("the checks stopped unexpectedly").into());
            }
        }
    }

    /// Draws the tab.
    pub fn ui(&mut self, ui: &mut egui::Ui, renderer: &str) {
        if let Some(Some(path)) = super::share::poll_dialog(ui.ctx(), &mut self.open_dialog) {
            self.open(ui.ctx(), path, renderer);
        }
        if self.open_dialog.is_some() {
            ui.ctx().request_repaint_after(std::time::Duration::from_millis(100));
        }
        self.poll();
        if self.report.is_none() && self.error.is_none() && self.pending.is_none() {
            self.start(ui.ctx(), renderer);
        }
        ui.horizontal_wrapped(|ui| {
            ui.heading(tr!("Checklist"));
            if let ChecklistSource::Capture(dir) = &self.source {
                let text = match (dir.is_file(), dir.file_name()) {
                    (true, Some(name)) => tr!("FILE: {name}", name = name.to_string_lossy()),
                    _ => tr!("CAPTURE: {dir}", dir = dir.display()),
                };
                ui.label(
                    RichText::new(text)
                        .strong()
                        .color(palette::BADGE_REPLAY.text)
                        .background_color(palette::BADGE_REPLAY.fill),
                )
                .on_hover_text(dir.display().to_string());
            }
            if let ChecklistSource::Remote(target, _) = &self.source {
                ui.label(
                    RichText::new(tr!("REMOTE {host}", host = target))
                        .strong()
                        .color(palette::BADGE_REMOTE.text)
                        .background_color(palette::BADGE_REMOTE.fill),
                )
                .on_hover_text(tr!("The checklist ran on the server (gpu-doctor-cli check over ssh)."));
            }
            let back = match self.home {
                ChecklistSource::Remote(..) => tr!("Back to the server"),
                _ => tr!("Back to this machine"),
            };
            if self.reads_a_file()
                && ui
                    .button(back)
                    .on_hover_text(tr!("Leave the file and run the checks here again"))
                    .clicked()
            {
                self.back_home(ui.ctx(), renderer);
            }
            ui.separator();
            let recheck = ui
                .add_enabled(!self.running(), egui::Button::new(tr!("Re-check")))
                .on_hover_text(tr!("Run every check again"));
            if recheck.clicked() {
                self.start(ui.ctx(), renderer);
            }
            if ui
                .button(tr!("Open…"))
                .on_hover_text(tr!(
                    "Run the checklist on a file instead of this machine: an nvidia-bug-report.log(.gz), the output of nvidia-smi -q, or a capture (.tar.gz). You can also drop the file on the window."
                ))
                .clicked()
                && self.open_dialog.is_none()
            {
                self.open_dialog = Some(super::share::open_dialog(super::share::default_dir()));
            }
            if ui.button(tr!("Open folder…")).on_hover_text(tr!("A capture directory from gpu-doctor-cli capture --out DIR")).clicked()
                && self.open_dialog.is_none()
            {
                self.open_dialog = Some(super::share::folder_dialog(super::share::default_dir()));
            }
            ui.selectable_value(&mut self.show_all, false, tr!("Step by step"));
            ui.selectable_value(&mut self.show_all, true, tr!("All results"));
            if self.running() {
                ui.spinner();
                ui.label(tr!("checking…"));
            }
        });
        if let Some(e) = &self.error {
            ui.colored_label(palette::verdict(ui, Verdict::Fail), e);
        }
        let Some(report) = self.report.clone() else {
            if self.error.is_none() {
                ui.label(tr!("Running the checks…"));
            }
            return;
        };
        if let Some(imported) = &report.imported {
            // What the file is and what it held, before any verdict drawn from it.
            egui::Frame::group(ui.style()).show(ui, |ui| {
                ui.set_width(ui.available_width());
                for (i, line) in imported.lines().iter().enumerate() {
                    if i == 0 {
                        ui.strong(line.here());
                    } else {
                        ui.label(line.here());
                    }
                }
            });
            ui.add_space(4.0);
        }
        root_cause_banner(ui, &report, &mut self.step);
        ui.add_space(4.0);
        if self.show_all {
            egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
                for layer in Layer::ALL {
                    let checks: Vec<&Check> =
                        report.checks.iter().filter(|c| c.layer == layer && c.applies_to.is_none()).collect();
                    if checks.is_empty() {
                        continue;
                    }
                    ui.add_space(6.0);
                    ui.strong(crate::i18n::tr(layer.title()));
                    for c in checks {
                        check_row(ui, c);
                    }
                }
                let (n, places) = report.not_applicable();
                if n > 0 {
                    ui.add_space(6.0);
                    egui::CollapsingHeader::new(if n == 1 {
                        tr!("{n} check does not apply here: {places}", n = n, places = places_text(&places))
                    } else {
                        tr!("{n} checks do not apply here: {places}", n = n, places = places_text(&places))
                    })
                    .id_salt("not-applicable")
                    .default_open(false)
                    .show(ui, |ui| {
                        for c in report.checks.iter().filter(|c| c.applies_to.is_some()) {
                            check_row(ui, c);
                        }
                    });
                }
            });
        } else {
            self.wizard(ui, &report);
        }
    }

    fn wizard(&mut self, ui: &mut egui::Ui, report: &Report) {
        // The steps are the layers this machine's checklist has (a Windows machine has no
        // container or device-file step, a Linux one no Windows step).
        let present: Vec<usize> =
            (0..Layer::ALL.len()).filter(|i| report.checks.iter().any(|c| c.layer == Layer::ALL[*i])).collect();
        let Some(&first) = present.first() else { return };
        if !present.contains(&self.step) {
            self.step = present.iter().copied().find(|i| *i > self.step).unwrap_or(first);
        }
        let pos = present.iter().position(|i| *i == self.step).unwrap_or(0);
        let n = present.len();
        // Progress: one chip per layer, coloured by its worst verdict; click to jump.
        ui.horizontal_wrapped(|ui| {
            for (k, &i) in present.iter().enumerate() {
                let layer = Layer::ALL[i];
                let worst = report
                    .checks
                    .iter()
                    .filter(|c| c.layer == layer)
                    .map(|c| c.verdict)
                    .max()
                    .unwrap_or(Verdict::Skipped);
                let text = RichText::new(format!("{} {}", k + 1, crate::i18n::tr(layer.title())))
                    .color(palette::verdict(ui, worst));
                if ui
                    .selectable_label(self.step == i, text)
                    .on_hover_text(tr!("worst result: {verdict}", verdict = worst.word()))
                    .clicked()
                {
                    self.step = i;
                }
            }
        });
        let layer = Layer::ALL[self.step];
        ui.add_space(4.0);
        ui.label(
            RichText::new(tr!(
                "Step {step} of {n}: {layer}",
                step = pos + 1,
                n = n,
                layer = crate::i18n::tr(layer.title())
            ))
            .heading(),
        );
        ui.horizontal(|ui| {
            if ui.add_enabled(pos > 0, egui::Button::new(tr!("Back"))).clicked() {
                self.step = present[pos - 1];
            }
            if ui.add_enabled(pos + 1 < n, egui::Button::new(tr!("Next"))).clicked() {
                self.step = present[pos + 1];
            }
        });
        egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
            for c in report.checks.iter().filter(|c| c.layer == layer) {
                check_row(ui, c);
            }
        });
    }
}

fn root_cause_banner(ui: &mut egui::Ui, report: &Report, step: &mut usize) {
    let b = if report.root_cause.is_some() { palette::BANNER_ROOT_CAUSE } else { palette::BANNER_ALL_CLEAR };
    egui::Frame::group(ui.style()).fill(b.fill).inner_margin(8.0).show(ui, |ui| {
        ui.set_width(ui.available_width());
        match report.root() {
            Some(c) => {
                ui.label(
                    RichText::new(tr!("Root cause: {finding}", finding = c.finding.here())).strong().color(b.heading),
                )
                .on_hover_text(&c.id);
                ui.label(RichText::new(title_and_summary(c)).color(b.text));
                if !c.explanation.is_empty() {
                    ui.label(RichText::new(c.explanation.here()).color(b.text));
                }
                let blocked = report.checks.iter().filter(|x| x.blocked_by.as_deref() == Some(c.id.as_str())).count();
                ui.horizontal(|ui| {
                    if blocked > 0 {
                        ui.label(
                            RichText::new(tr!("{blocked} later check(s) wait for this fix.", blocked = blocked))
                                .color(b.weak),
                        );
                    }
                    if ui.button(tr!("Show this step")).clicked() {
                        *step = Layer::ALL.iter().position(|l| *l == c.layer).unwrap_or(0);
                    }
                });
            }
            None => {
                let warns = report.checks.iter().filter(|c| c.verdict == Verdict::Warn).count();
                ui.label(
                    RichText::new(if warns == 0 {
                        tr!("No problem found.").to_string()
                    } else {
                        tr!("No failure found; {warns} warning(s) below.", warns = warns)
                    })
                    .strong()
                    .color(b.text),
                );
            }
        }
    });
}

/// "Title: summary" in the window's language, joined by the catalogue (a full-width colon in
/// Chinese).
fn title_and_summary(c: &Check) -> String {
    crate::msg!("{label}: {value}", label = crate::i18n::Message::new(&c.title), value = c.summary).here()
}

/// The places checks apply to, listed in the window's language.
fn places_text(places: &[&crate::i18n::Message]) -> String {
    crate::i18n::Message::join(places.iter().map(|p| (*p).clone()), &crate::msg!(", ")).here()
}

fn check_row(ui: &mut egui::Ui, c: &Check) {
    ui.add_space(2.0);
    ui.horizontal_wrapped(|ui| {
        ui.label(
            RichText::new(format!("[{}]", c.verdict.word()))
                .monospace()
                .strong()
                .color(palette::verdict(ui, c.verdict)),
        );
        ui.label(RichText::new(crate::i18n::tr_dyn(&c.title)).strong()).on_hover_text(&c.id);
        let summary = ui.label(c.summary.here());
        if let Some(id) = &c.blocked_by {
            summary.on_hover_text(tr!("blocked by {id}", id = id));
        }
    });
    if !c.explanation.is_empty() && c.verdict >= Verdict::Warn {
        ui.label(RichText::new(c.explanation.here()).weak());
    }
    fix_steps(ui, &c.fixes, None);
    if !c.evidence.is_empty() {
        egui::CollapsingHeader::new(tr!("Evidence ({n})", n = c.evidence.len())).id_salt(("evidence", &c.id)).show(
            ui,
            |ui| {
                if ui.small_button(tr!("Copy evidence")).clicked() {
                    let lines: Vec<String> = c.evidence.iter().map(crate::i18n::Here::here).collect();
                    ui.ctx().copy_text(format!("{}\n{}", title_and_summary(c), lines.join("\n")));
                }
                for e in &c.evidence {
                    ui.label(RichText::new(e.here()).monospace().small());
                }
            },
        );
    }
}

/// A fix, step by step: text wraps as prose; each command is shown whole (wrapped, in monospace)
/// with its own Copy button that copies exactly that command.
/// `color` is the text colour on a banner's own fill (None: the theme's).
pub(crate) fn fix_steps(ui: &mut egui::Ui, steps: &[FixStep], color: Option<Color32>) {
    let text = |t: &str| match color {
        Some(c) => RichText::new(t).color(c),
        None => RichText::new(t),
    };
    for step in steps {
        match step {
            FixStep::Text(t) => {
                ui.add(egui::Label::new(text(&t.here())).wrap());
            }
            FixStep::Command(cmd) => {
                ui.horizontal(|ui| {
                    if crate::report::redact::has_token(cmd) {
                        // A redacted name makes it no command to copy: it says so instead.
                        ui.label(RichText::new(tr!("redacted")).weak()).on_hover_text(tr!(
                            "A name in this command is redacted; run it with the real name on the machine it is for"
                        ));
                    } else if ui
                        .small_button(tr!("Copy"))
                        .on_hover_text(tr!("Copy this command to the clipboard: {command}", command = cmd))
                        .clicked()
                    {
                        ui.ctx().copy_text(cmd.clone());
                    }
                    ui.add(egui::Label::new(text(cmd).monospace()).wrap());
                });
            }
        }
    }
}
