//! Where the window's data comes from: "Connect to a server…" (the dialog that takes
//! `user@host[:port]` or an ssh alias, and the switch of the whole window — Monitor, Checklist,
//! support card, reports — to that server's data, read over the system ssh, see
//! [`crate::telemetry::remote`]), demo data, and back to this machine.

use crate::i18n::Here as _;
use std::sync::Arc;

use eframe::egui;

use super::DoctorApp;
use crate::gui::checklist::{ChecklistSource, ChecklistState};
use crate::gui::monitor::MonitorState;
use crate::gui::palette::{self, Tone};
use crate::telemetry::SourceOptions;
use crate::telemetry::demo::Scenario;
use crate::telemetry::remote::{RemoteLink, SshSetup, Target};
use crate::telemetry::sampler::Sampler;
use crate::tr;

/// The "Connect to a server" dialog.
#[derive(Debug, Default)]
pub struct ConnectDialog {
    /// Shown.
    pub open: bool,
    /// What the user typed: `user@host[:port]` or an ssh alias.
    pub server: String,
    /// The CLI on the server (empty: `gpu-doctor-cli`).
    pub remote_cli: String,
    /// Why the last input was refused.
    pub error: Option<String>,
}

impl ConnectDialog {
    /// Draws the dialog; returns the server and setup when the user connects.
    pub fn ui(&mut self, ctx: &egui::Context) -> Option<(Target, SshSetup)> {
        if !self.open {
            return None;
        }
        let mut go = None;
        let mut open = true;
        let shown = egui::Window::new(tr!("Connect to a server"))
            .open(&mut open)
            .collapsible(false)
            .resizable(false)
            .pivot(egui::Align2::CENTER_CENTER)
            .default_pos(ctx.content_rect().center())
            .show(ctx, |ui| {
            ui.label(tr!(
                "gpu-doctor runs gpu-doctor-cli on the server through your ssh: your keys, agent and ~/.ssh/config apply. It never asks for or stores a password."
            ));
            egui::Grid::new("connect_grid").num_columns(2).show(ui, |ui| {
                let l = ui.label(tr!("Server"));
                let r = ui
                    .add(egui::TextEdit::singleline(&mut self.server).hint_text("user@gpu-server:22").desired_width(260.0))
                    .labelled_by(l.id);
                if r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                    go = Some(());
                }
                ui.end_row();
                let l = ui.label(tr!("gpu-doctor-cli on the server"));
                ui.add(egui::TextEdit::singleline(&mut self.remote_cli).hint_text("gpu-doctor-cli").desired_width(260.0))
                    .labelled_by(l.id);
                ui.end_row();
            });
            if let Some(e) = &self.error {
                ui.colored_label(palette::tone(ui, Tone::Fail), e);
            }
            ui.horizontal(|ui| {
                if ui.button(tr!("Connect")).clicked() {
                    go = Some(());
                }
                ui.weak(tr!("Not installed there? Copy the .tar.gz to the server and run ./install.sh --user."));
            });
        });
        if let Some(r) = &shown {
            crate::gui::hold_keyboard(ctx, &r.response);
        }
        if !open {
            self.open = false;
        }
        go?;
        match self.server.parse::<Target>() {
            Ok(target) => {
                self.error = None;
                self.open = false;
                let cli = self.remote_cli.trim();
                let setup = SshSetup {
                    remote_cli: if cli.is_empty() { "gpu-doctor-cli".into() } else { cli.to_string() },
                    ..SshSetup::default()
                };
                Some((target, setup))
            }
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }
}

impl DoctorApp {
    /// Shows `target`'s data in the whole window, read over ssh.
    pub fn connect(&mut self, ctx: &egui::Context, target: Target, setup: SshSetup) {
        let link = match RemoteLink::start(target.clone(), setup.clone(), self.sampler.interval()) {
            Ok(l) => l,
            Err(e) => {
                self.message = Some(tr!("Could not start sampling: {error}", error = e));
                return;
            }
        };
        let (gpu, host) = link.sources();
        let mut sampler = Sampler::manual(gpu, host, self.sampler.interval());
        match sampler.spawn_threads() {
            Ok(()) => {
                self.install_sampler(ctx, sampler);
                if let Some(old) = self.remote.replace(Arc::clone(&link)) {
                    old.disconnect();
                }
                self.checklist = ChecklistState::new(ChecklistSource::Remote(target, setup));
                self.checklist.start(ctx, &self.renderer_name);
            }
            Err(e) => {
                link.disconnect();
                self.message = Some(tr!("Could not start sampling: {error}", error = e));
            }
        }
    }

    /// Leaves the server: this machine's data again.
    pub fn disconnect(&mut self, ctx: &egui::Context) {
        if let Some(link) = self.remote.take() {
            link.disconnect();
        }
        self.checklist = ChecklistState::new(ChecklistSource::Live(self.source.clone()));
        self.switch_source(ctx, None);
    }

    /// This machine (`demo` None) or a demo scenario, in place of whatever the window shows.
    pub(super) fn switch_source(&mut self, ctx: &egui::Context, demo: Option<Scenario>) {
        let args = SourceOptions { demo, gpus: None, seed: 1, ..self.source.clone() };
        let (gpu, host) = args.open();
        let mut sampler = Sampler::manual(gpu, host, self.sampler.interval());
        sampler.prefill_demo(5.0 * 60.0);
        match sampler.spawn_threads() {
            Ok(()) => {
                if let Some(link) = self.remote.take() {
                    link.disconnect();
                    self.checklist = ChecklistState::new(ChecklistSource::Live(self.source.clone()));
                }
                self.install_sampler(ctx, sampler);
                self.demo_started_here = demo.is_some();
            }
            Err(e) => self.message = Some(tr!("Could not start sampling: {error}", error = e)),
        }
    }

    /// Replaces the sampler (its notifications wake this window) and starts the Monitor afresh.
    pub(super) fn install_sampler(&mut self, ctx: &egui::Context, sampler: Sampler) {
        let c = ctx.clone();
        let p = Arc::clone(&self.pacer);
        sampler.set_notify(move |snap| p.wake(&c, snap));
        self.sampler = sampler;
        self.monitor = MonitorState { units: self.settings.units, ..MonitorState::default() };
        self.replay_span = None;
        self.replay = None;
        self.machine = None;
    }

    /// A file dropped on the window: a recording opens in the Monitor; anything else (a bug report,
    /// nvidia-smi output, a capture) in the Checklist.
    pub(super) fn take_dropped_file(&mut self, ctx: &egui::Context) {
        let dropped = ctx
            .input(|i| i.raw.dropped_files.iter().map(|f| f.path().to_path_buf()).find(|p| !p.as_os_str().is_empty()));
        let Some(path) = dropped else { return };
        if path.extension().is_some_and(|e| e == "gdrec") {
            self.tab = super::Tab::Monitor;
            self.open_replay(ctx, &path);
        } else {
            self.tab = super::Tab::Checklist;
            let renderer = self.renderer_name.clone();
            self.checklist.open(ctx, path, &renderer);
        }
    }

    /// The REMOTE badge in the top bar: the server and the link's state.
    pub(super) fn remote_badge(&self, ui: &mut egui::Ui, info: &crate::telemetry::remote::RemoteInfo) {
        let full = info.line().here();
        let short = tr!("REMOTE {host}", host = info.host);
        let mut hover = full.clone();
        if let Some(v) = &info.version {
            hover.push_str(&format!("\n{} {v}", tr!("gpu-doctor on the server")));
        }
        if info.invalid_lines + info.dropped_lines > 0 || !info.unread.is_empty() {
            hover.push('\n');
            hover.push_str(&tr!(
                "{invalid} unreadable line(s), {dropped} dropped; not understood: {unread}",
                invalid = info.invalid_lines,
                dropped = info.dropped_lines,
                unread = info.unread_list().here()
            ));
        }
        super::bars::badge(ui, palette::BADGE_REMOTE, &full, &short, tr!("REMOTE")).on_hover_text(hover);
    }
}
