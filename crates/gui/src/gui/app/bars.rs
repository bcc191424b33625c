//! The app's top bar (tabs, menus, demo switch, screenshot and report buttons) and status bar
//! (source, sampling interval, renderer, the app's own CPU and memory).

use crate::i18n::Here as _;
use eframe::egui::{self, RichText};

use super::{DoctorApp, Tab, interval_text};
use crate::gui::monitor::MonitorAction;
use crate::gui::palette::{self, Tone};
use crate::gui::share;
use crate::telemetry::snapshot::Snapshot;
use crate::telemetry::source::SourceStatus;
use crate::tr;
use crate::units;

/// True when `text` as a strong label fits the width left in `ui`.
fn fits(ui: &egui::Ui, text: &str) -> bool {
    let galley = egui::WidgetText::from(RichText::new(text).strong()).into_galley(
        ui,
        Some(egui::TextWrapMode::Extend),
        f32::INFINITY,
        egui::TextStyle::Body,
    );
    galley.size().x + 8.0 <= ui.available_width()
}

/// A badge (DEMO, REPLAY, REMOTE) in the top bar: the full text where it fits, else the short
/// one, else the word alone, so that on a narrow window it never covers the buttons.
pub(super) fn badge(ui: &mut egui::Ui, style: palette::Badge, full: &str, short: &str, word: &str) -> egui::Response {
    let shown = [format!(" {full} "), format!(" {short} ")]
        .into_iter()
        .find(|t| fits(ui, t))
        .unwrap_or_else(|| format!(" {word} "));
    ui.label(RichText::new(shown).strong().color(style.text).background_color(style.fill))
}

impl DoctorApp {
    pub(super) fn top_bar(&mut self, ui: &mut egui::Ui, snap: &Snapshot) -> Option<MonitorAction> {
        let mut action = None;
        ui.horizontal(|ui| {
            ui.heading("gpu-doctor");
            ui.separator();
            for tab in Tab::all() {
                ui.selectable_value(&mut self.tab, tab, tab.title())
                    .on_hover_text(super::keys::tab_shortcut(ui.ctx(), tab));
            }
            ui.separator();
            if ui
                .button(tr!("Screenshot"))
                .on_hover_text(tr!("Save a PNG of the window and copy it (Ctrl+Shift+S)"))
                .clicked()
            {
                self.take_screenshot(ui.ctx(), None);
            }
            if ui
                .button(tr!("Report..."))
                .on_hover_text(tr!("A support report: preview, redaction, save or copy"))
                .clicked()
            {
                self.open_report(snap);
            }
            if ui
                .button(tr!("Support card"))
                .on_hover_text(tr!("One screen with what support needs, for a screenshot"))
                .clicked()
            {
                self.open_card(snap);
            }
            if let Some((_, n)) = self.sampler.recording()
                && ui
                    .button(RichText::new(tr!("Stop recording ({n})", n = n)).color(palette::tone(ui, Tone::Fail)))
                    .on_hover_text(tr!("Samples written so far"))
                    .clicked()
            {
                action = Some(MonitorAction::StopRecording);
            }
            ui.menu_button(tr!("File"), |ui| {
                if self.sampler.recording().is_none()
                    && !snap.source.is_replay()
                    && ui.button(tr!("Record metrics to a file")).clicked()
                {
                    action = Some(MonitorAction::StartRecording);
                }
                if ui.button(tr!("Measure a run...")).clicked() {
                    self.run_dialog.open = true;
                }
                if ui.button(tr!("Focus on a process...")).clicked() {
                    self.focus_dialog.open = true;
                }
                if ui.button(tr!("Connect to a server…")).clicked() {
                    self.connect_dialog.open = true;
                }
                ui.menu_button(tr!("Show demo data"), |ui| {
                    if let Some(s) = super::super::monitor::demo_menu(ui) {
                        action = Some(MonitorAction::TryDemo(s));
                    }
                });
                if ui.button(tr!("Open recording...")).clicked() && self.open_dialog.is_none() {
                    self.open_dialog = Some(share::open_dialog(share::recordings_dir()));
                }
                if self.replay.is_some()
                    && ui.button(tr!("Export recording as CSV...")).clicked()
                    && self.csv_dialog.is_none()
                {
                    let name = format!("{}.csv", share::file_stem("recording", &self.settings.redaction));
                    self.csv_dialog = Some(share::save_dialog(name, ("CSV", "csv")));
                }
                if ui.button(tr!("Save screenshot as...")).clicked() && self.screenshot_dialog.is_none() {
                    let name = format!("{}.png", share::file_stem(&self.tab_name(), &self.settings.redaction));
                    self.screenshot_dialog = Some(share::save_dialog(name, (tr!("PNG image"), "png")));
                }
            });
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                if let Some(info) = &snap.remote {
                    if ui.button(tr!("Disconnect")).on_hover_text(tr!("Back to this machine")).clicked() {
                        action = Some(MonitorAction::Disconnect);
                    }
                    self.remote_badge(ui, info);
                }
                if let SourceStatus::Replay { file, .. } = &snap.source {
                    if ui.button(tr!("Back to this machine")).clicked() {
                        action = Some(MonitorAction::LeaveDemo);
                    }
                    let name = std::path::Path::new(file)
                        .file_name()
                        .map_or(file.clone(), |n| n.to_string_lossy().into_owned());
                    let full = tr!("REPLAY: {name} (recorded, not live)", name = name);
                    badge(ui, palette::BADGE_REPLAY, &full, &tr!("REPLAY: {name}", name = name), tr!("REPLAY"))
                        .on_hover_text(full);
                }
                if let SourceStatus::Demo { scenario, .. } = &snap.source {
                    if self.demo_started_here && ui.button(tr!("Back to this machine")).clicked() {
                        action = Some(MonitorAction::LeaveDemo);
                    }
                    let full = tr!("DEMO DATA: {scenario} (simulated, not this machine)", scenario = scenario);
                    let short = tr!("DEMO DATA: {scenario}", scenario = scenario);
                    badge(ui, palette::BADGE_DEMO, &full, &short, tr!("DEMO")).on_hover_text(full);
                }
            });
        });
        action
    }

    pub(super) fn status_bar(&self, ui: &mut egui::Ui, snap: &Snapshot) {
        // One line at any width: the renderer, last, is cut to fit (whole on hover).
        ui.horizontal(|ui| {
            let (source, why) = match (&snap.source, &snap.remote) {
                (other, Some(r)) => (
                    tr!("Data: {host} over SSH ({source})", host = r.host, source = other.label().here()),
                    tr!("Read from gpu-doctor-cli on the server, through your ssh.").to_string(),
                ),
                (SourceStatus::Unavailable(no), None) => (
                    tr!("Data: this machine's host metrics only (no NVIDIA GPU data)").to_string(),
                    no.summary_message().here(),
                ),
                (other, None) => (
                    tr!("Data: {source}", source = other.label().here()),
                    tr!("Where the GPU data comes from.").to_string(),
                ),
            };
            ui.label(source).on_hover_text(why);
            ui.separator();
            ui.label(tr!("Interval {interval}", interval = interval_text(snap.interval_secs)))
                .on_hover_text(tr!("Seconds between samples; change with --interval (0.25-10 s)."));
            ui.separator();
            match snap.self_usage {
                Some(u) => ui.label(tr!(
                    "gpu-doctor: CPU {cpu} · {memory}",
                    cpu = units::percent(u.cpu_pct),
                    memory = units::bytes_in(u.rss_bytes, self.settings.units)
                )),
                None => ui.label(tr!("gpu-doctor: own usage n/a")),
            }
            .on_hover_text(tr!("CPU (% of one core) and memory used by this app."));
            ui.separator();
            let renderer = tr!("Renderer: {renderer}", renderer = self.renderer_name);
            ui.add(egui::Label::new(&renderer).truncate()).on_hover_text(renderer);
        });
    }
}

impl DoctorApp {
    /// What just happened (a screenshot saved, an export written) as a note over the window's
    /// lower right corner, above the status bar: it covers nothing the pointer is on and moves
    /// nothing when it appears or goes.
    pub(super) fn info_toast(&self, ctx: &egui::Context) {
        let Some(text) = self.info.lock().ok().and_then(|i| i.clone()) else { return };
        egui::Area::new(egui::Id::unique("gd-info-toast"))
            .anchor(egui::Align2::RIGHT_BOTTOM, [-12.0, -36.0])
            .order(egui::Order::Foreground)
            .show(ctx, |ui| {
                egui::Frame::popup(ui.style()).show(ui, |ui| {
                    ui.set_max_width(520.0);
                    ui.horizontal_wrapped(|ui| {
                        ui.label(text);
                        if ui.small_button(tr!("Dismiss")).clicked()
                            && let Ok(mut i) = self.info.lock()
                        {
                            *i = None;
                        }
                    });
                });
            });
    }
}
