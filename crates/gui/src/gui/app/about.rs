//! The About tab: versions, the data source, the renderer, and the settings the user can change
//! (interval, chart window, theme, byte units, redaction defaults).

use crate::i18n::Here as _;
use eframe::egui::{self, RichText};

use super::{DoctorApp, apply_theme, interval_text};
use crate::i18n::{self, Lang};
use crate::present;
use crate::settings::{ByteUnits, Theme};
use crate::telemetry::snapshot::Snapshot;
use crate::telemetry::source::SourceStatus;
use crate::tr;

impl DoctorApp {
    pub(super) fn settings_ui(&mut self, ui: &mut egui::Ui) {
        ui.heading(tr!("Settings"));
        let before = self.settings.clone();
        egui::Grid::new("settings_grid").num_columns(2).spacing([16.0, 6.0]).show(ui, |ui| {
            ui.label(tr!("Language"));
            ui.horizontal(|ui| {
                let mut chosen = self.settings.language;
                ui.selectable_value(&mut chosen, None, tr!("System"))
                    .on_hover_text(tr!("The system's language when it has a translation, else English"));
                for lang in Lang::ALL {
                    ui.selectable_value(&mut chosen, Some(lang), lang.native_name());
                }
                if chosen != self.settings.language {
                    self.settings.language = chosen;
                    // The user's choice here wins over GPU_DOCTOR_LANG; "System" goes back to it.
                    i18n::set(chosen.unwrap_or_else(|| i18n::choose(None, None)));
                    if std::env::var_os(super::NO_CJK_FONT_ENV).is_none() {
                        super::add_cjk_font(ui.ctx(), i18n::current());
                    }
                }
            });
            ui.end_row();
            ui.label(tr!("Theme"));
            ui.horizontal(|ui| {
                for (t, name) in
                    [(Theme::System, tr!("System")), (Theme::Dark, tr!("Dark")), (Theme::Light, tr!("Light"))]
                {
                    ui.selectable_value(&mut self.settings.theme, t, name);
                }
            });
            ui.end_row();
            ui.label(tr!("Sampling interval"));
            ui.horizontal(|ui| {
                for secs in [0.5, 1.0, 2.0, 5.0] {
                    ui.selectable_value(&mut self.settings.interval_secs, secs, interval_text(secs));
                }
                ui.label(RichText::new(tr!("(from the next start)")).weak());
            });
            ui.end_row();
            ui.label(tr!("Byte units"));
            ui.horizontal(|ui| {
                ui.selectable_value(&mut self.settings.units, ByteUnits::Binary, "GiB (1024)");
                ui.selectable_value(&mut self.settings.units, ByteUnits::Decimal, "GB (1000)");
            });
            ui.end_row();
            ui.label(tr!("Redact in shared reports"));
            ui.horizontal_wrapped(|ui| {
                let r = &mut self.settings.redaction;
                ui.checkbox(&mut r.hostname, tr!("host name"));
                ui.checkbox(&mut r.users, tr!("user names"));
                ui.checkbox(&mut r.ip, tr!("IP addresses"));
                ui.checkbox(&mut r.mac, tr!("MAC addresses"));
                ui.checkbox(&mut r.gpu_ids, tr!("GPU UUIDs and serials"));
            });
            ui.end_row();
            ui.label(tr!("Settings file"));
            ui.label(match &self.settings_path {
                Some(p) => p.display().to_string(),
                None => tr!("not saved in this session").to_string(),
            });
            ui.end_row();
        });
        if self.settings.theme != before.theme {
            apply_theme(ui.ctx(), self.settings.theme);
        }
        if self.settings.units != before.units {
            self.monitor.units = self.settings.units;
            self.vram.units = self.settings.units;
            self.smoke.units = self.settings.units;
        }
    }

    pub(super) fn about(&mut self, ui: &mut egui::Ui, snap: &Snapshot) {
        egui::ScrollArea::vertical().show(ui, |ui| {
            ui.heading(format!("gpu-doctor {}", env!("CARGO_PKG_VERSION")));
            ui.label(tr!(
                "Find out why an NVIDIA GPU is idle, slow or not working. Never uses the network; needs no root."
            ));
            ui.add_space(8.0);
            egui::Grid::new("about_grid").num_columns(2).striped(true).show(ui, |ui| {
                ui.label(tr!("Renderer"));
                ui.label(&self.renderer_name);
                ui.end_row();
                ui.label(tr!("Data source"));
                ui.label(snap.source.label().here());
                ui.end_row();
                let inv = &snap.inventory;
                ui.label(tr!("Driver"));
                ui.label(present::version(&inv.driver_version, crate::i18n::current()));
                ui.end_row();
                ui.label(tr!("CUDA (driver supports up to)"));
                ui.label(present::version(&inv.cuda_driver_version, crate::i18n::current()));
                ui.end_row();
                ui.label("NVML");
                ui.label(present::version(&inv.nvml_version, crate::i18n::current()));
                ui.end_row();
            });
            ui.add_space(8.0);
            let attempts = match &snap.source {
                SourceStatus::Nvml { attempts, library } => {
                    let mut v: Vec<(String, String)> =
                        attempts.iter().map(|a| (a.path.clone(), a.error.clone())).collect();
                    v.push((library.clone(), tr!("loaded").to_string()));
                    v
                }
                SourceStatus::Unavailable(no) => {
                    no.attempts.iter().map(|a| (a.path.clone(), a.error.clone())).collect()
                }
                SourceStatus::Demo { .. }
                | SourceStatus::Opening
                | SourceStatus::Asleep { .. }
                | SourceStatus::Replay { .. } => Vec::new(),
            };
            if !attempts.is_empty() {
                ui.strong(tr!("NVML load attempts"));
                for (path, result) in attempts {
                    ui.label(RichText::new(format!("{path}: {result}")).monospace());
                }
            }
            ui.add_space(8.0);
            ui.label(tr!("The same data without a window: gpu-doctor-cli info, gpu-doctor-cli monitor"));
            ui.label(
                RichText::new(tr!(
                    "Chinese text: Noto Sans CJK SC (a subset, built in), SIL Open Font License 1.1; the licence is installed with the app"
                ))
                .weak(),
            );
            ui.add_space(12.0);
            self.settings_ui(ui);
        });
    }
}
