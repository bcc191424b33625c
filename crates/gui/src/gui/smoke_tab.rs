//! The Smoke test tab: one button runs the CUDA smoke test in a child process; stages appear as
//! they finish, with their numbers against the hardware's limits; Cancel stops it; the report can
//! be copied or exported.

use crate::i18n::{Here as _, Word as _};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use eframe::egui::{self, RichText};

use super::palette;
use crate::diagnose::Verdict;
use crate::smoke::runner::{self, Launcher, Progress};
use crate::smoke::{Figure, Options, SmokeReport, Stage, StageResult};
use crate::units::ByteUnits;

/// How the tab runs the test (tests point it at `gpu-doctor-cli` and a fake driver).
#[derive(Clone, Debug)]
pub struct SmokeSetup {
    /// The program that runs the child.
    pub launcher: Launcher,
    /// `--cuda-lib`.
    pub cuda_lib: Option<PathBuf>,
    /// `--nvml-lib`.
    pub nvml_lib: Option<PathBuf>,
    /// Seconds without progress before the test counts as hung.
    pub stall: Duration,
    /// Start a run when the tab is first drawn.
    pub autostart: bool,
}

impl Default for SmokeSetup {
    fn default() -> Self {
        SmokeSetup {
            launcher: Launcher::this_program(),
            cuda_lib: None,
            nvml_lib: None,
            stall: runner::DEFAULT_STALL,
            autostart: false,
        }
    }
}

#[derive(Default)]
struct Live {
    progress: Progress,
    report: Option<SmokeReport>,
}

/// State of the Smoke test tab.
pub struct SmokeState {
    setup: SmokeSetup,
    /// The server the window shows (the test still runs on this machine).
    pub remote_host: Option<String>,
    /// CUDA device to test.
    pub device: u32,
    /// Run the burn after the default test.
    pub burn: bool,
    /// Burn length, seconds.
    pub burn_secs: u32,
    /// How the test's texts show byte amounts (the "Byte units" setting); binary by default.
    pub units: ByteUnits,
    live: Option<Arc<Mutex<Live>>>,
    cancel: Arc<AtomicBool>,
    /// The last finished run.
    pub report: Option<SmokeReport>,
    /// Why the last run could not start.
    pub message: Option<String>,
    /// Result of the last copy or export, shown beside their buttons.
    pub note: Option<String>,
    /// Where to export the report, being chosen.
    save: Option<super::share::Chooser>,
}

impl SmokeState {
    /// A tab that has not run yet.
    pub fn new(setup: SmokeSetup) -> Self {
        SmokeState {
            remote_host: None,
            setup,
            device: 0,
            burn: false,
            burn_secs: 60,
            units: ByteUnits::default(),
            live: None,
            cancel: Arc::new(AtomicBool::new(false)),
            report: None,
            message: None,
            note: None,
            save: None,
        }
    }

    /// True while a test runs.
    pub fn running(&self) -> bool {
        self.live.is_some()
    }

    /// The stage running now, if any.
    pub fn running_stage(&self) -> Option<Stage> {
        let live = self.live.as_ref()?.lock().ok()?;
        live.progress.running.map(|(s, _)| s)
    }

    /// Starts a run on a background thread (the child process does the work).
    pub fn start(&mut self, ctx: &egui::Context) {
        if self.live.is_some() {
            return;
        }
        let opts = Options {
            device: self.device,
            burn_secs: if self.burn { self.burn_secs } else { 0 },
            cuda_lib: self.setup.cuda_lib.clone(),
            nvml_lib: self.setup.nvml_lib.clone(),
            units: self.units,
        };
        let live = Arc::new(Mutex::new(Live::default()));
        self.cancel = Arc::new(AtomicBool::new(false));
        self.report = None;
        self.message = None;
        let (shared, cancel, setup, ctx) = (live.clone(), self.cancel.clone(), self.setup.clone(), ctx.clone());
        let spawned = std::thread::Builder::new().name("gd-smoke".into()).spawn(move || {
            let report = runner::run(&setup.launcher, &opts, setup.stall, &cancel, &mut |p, _| {
                if let Ok(mut l) = shared.lock() {
                    l.progress = p.clone();
                }
                ctx.request_repaint();
            });
            if let Ok(mut l) = shared.lock() {
                l.report = Some(report);
            }
            ctx.request_repaint();
        });
        match spawned {
            Ok(_) => self.live = Some(live),
            Err(e) => self.message = Some(crate::tr!("Could not start the test: {error}", error = e)),
        }
    }

    /// Stops a running test (kills the child).
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    fn poll(&mut self) -> Option<Progress> {
        let live = self.live.as_ref()?;
        let (progress, report) = match live.lock() {
            Ok(mut l) => (l.progress.clone(), l.report.take()),
            Err(_) => (Progress::default(), None),
        };
        if let Some(r) = report {
            self.report = Some(r);
            self.live = None;
            return None;
        }
        Some(progress)
    }

    /// Draws the tab.
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        if std::mem::take(&mut self.setup.autostart) {
            self.start(ui.ctx());
        }
        let progress = self.poll();
        ui.heading(crate::tr!("CUDA smoke test"));
        ui.label(crate::tr!(
            "Proves in seconds that the GPU computes correctly: loads the driver, finds the GPUs, copies data, runs \
             verified kernels and measures bandwidth against the hardware's limits. It runs in a separate process, so \
             a crash or hang cannot take this window down. No CUDA toolkit needed."
        ));
        if let Some(host) = &self.remote_host {
            ui.colored_label(
                super::palette::tone(ui, super::palette::Tone::Warn),
                crate::tr!(
                    "The window shows {host}, but this test runs on this machine. To test the server's GPU, run there: gpu-doctor-cli smoke",
                    host = host
                ),
            );
        }
        ui.add_space(6.0);
        self.controls(ui, progress.is_some());
        ui.add_space(8.0);
        if let Some(msg) = &self.message {
            ui.label(msg);
        }
        if let Some(Some(path)) = super::share::poll_dialog(ui.ctx(), &mut self.save)
            && let Some(r) = &self.report
        {
            self.note = Some(match write_report(r, &path) {
                Ok(()) => crate::tr!("Saved {path}", path = path.display()),
                Err(e) => crate::tr!("Could not save {path}: {error}", path = path.display(), error = e),
            });
        }
        egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
            if let Some(p) = &progress {
                self.live_view(ui, p);
                ui.ctx().request_repaint_after(Duration::from_millis(250));
            } else if let Some(r) = self.report.clone() {
                self.report_view(ui, &r);
            } else {
                ui.label(RichText::new(crate::tr!("Not run yet.")).weak());
            }
        });
    }

    fn controls(&mut self, ui: &mut egui::Ui, running: bool) {
        ui.horizontal(|ui| {
            let big = |text: &str| egui::Button::new(RichText::new(text).size(18.0).strong());
            if running {
                if ui.add_sized([220.0, 40.0], big(crate::tr!("Cancel"))).clicked() {
                    self.cancel();
                }
            } else if ui.add_sized([220.0, 40.0], big(crate::tr!("Run smoke test"))).clicked() {
                self.start(ui.ctx());
            }
            ui.add_space(16.0);
            ui.add_enabled_ui(!running, |ui| {
                let l = ui.label(crate::tr!("CUDA device"));
                ui.add(egui::DragValue::new(&mut self.device).range(0..=63)).labelled_by(l.id);
                if let Some(d) = self.known_device() {
                    ui.label(RichText::new(d).weak());
                }
                ui.add_space(12.0);
                ui.checkbox(&mut self.burn, crate::tr!("Burn"));
                let l = ui.label(crate::tr!("seconds"));
                ui.add_enabled(self.burn, egui::DragValue::new(&mut self.burn_secs).range(5..=3600)).labelled_by(l.id);
            });
        });
    }

    fn known_device(&self) -> Option<String> {
        let r = self.report.as_ref()?;
        r.devices.iter().find(|d| d.index == self.device).map(|d| d.name.clone())
    }

    fn live_view(&self, ui: &mut egui::Ui, p: &Progress) {
        let plan = Stage::plan(self.burn);
        let done = p.stages.len();
        ui.add(
            egui::ProgressBar::new(done as f32 / plan.len() as f32)
                .text(crate::tr!("{done} of {total} stages", done = done, total = plan.len()))
                .desired_width(400.0),
        );
        ui.add_space(4.0);
        egui::Grid::new("smoke_live").num_columns(4).spacing([12.0, 6.0]).show(ui, |ui| {
            for r in &p.stages {
                stage_row(ui, r);
            }
            if let Some((s, since)) = p.running {
                ui.horizontal(|ui| {
                    ui.spinner();
                });
                ui.label(RichText::new(crate::i18n::tr(s.title())).strong());
                ui.label(format!("{:.1} s", since.elapsed().as_secs_f64()));
                ui.label(crate::tr!("running..."));
                ui.end_row();
            }
        });
        if let Some(t) = p.burn.last() {
            ui.add_space(6.0);
            ui.label(burn_line(t));
        }
    }

    fn report_view(&mut self, ui: &mut egui::Ui, original: &SmokeReport) {
        // (The run's texts are messages: drawn in the window's language, whichever it is now.)
        let r = original;
        let color = palette::verdict(ui, r.verdict);
        let word = if r.verdict == Verdict::Skipped { crate::tr!("CANCELLED") } else { r.verdict.word() };
        egui::Frame::group(ui.style()).stroke(egui::Stroke::new(2.0, color)).show(ui, |ui| {
            ui.set_width(ui.available_width() - 12.0);
            let headline = crate::tr!("{verdict}: {summary}", verdict = word, summary = r.summary.here());
            ui.label(RichText::new(headline).size(17.0).strong().color(color));
            if let Some(n) = &r.next_step {
                // (Words to read, not a command: no Copy button.)
                ui.horizontal_wrapped(|ui| {
                    ui.label(RichText::new(crate::tr!("Next step:")).strong());
                    ui.label(n.here());
                });
            }
            let mut facts = Vec::new();
            if let Some(d) = r.device() {
                facts.push(crate::tr!(
                    "Device {index}: {device}",
                    index = d.index,
                    device = d.line_in(r.options.units).here()
                ));
            }
            if let Some(l) = &r.library {
                facts.push(crate::tr!(
                    "Driver library {library}{cuda}",
                    library = l,
                    cuda = r.driver_cuda.as_ref().map(|c| format!(" (CUDA {c})")).unwrap_or_default()
                ));
            }
            facts.push(crate::tr!("Took {secs} s", secs = format!("{:.1}", r.total_ms / 1000.0)));
            ui.label(RichText::new(facts.join("  |  ")).weak());
        });
        ui.add_space(6.0);
        ui.horizontal(|ui| {
            if ui.button(crate::tr!("Copy report")).clicked() {
                ui.ctx().copy_text(crate::present::smoke::report_text(r, crate::i18n::current()));
                self.note = Some(crate::tr!("Report copied to the clipboard.").to_string());
            }
            if ui
                .button(crate::tr!("Export..."))
                .on_hover_text(crate::tr!("Save the report as text; a name ending in .json saves it as JSON"))
                .clicked()
                && self.save.is_none()
            {
                let name = format!("gpu-doctor-smoke-{}.txt", chrono::Local::now().format("%Y%m%d-%H%M%S"));
                self.save = Some(super::share::save_dialog(name, (crate::tr!("Text"), "txt")));
            }
            // The outcome beside the buttons: nothing below moves when it appears.
            if let Some(n) = &self.note {
                ui.label(n);
            }
        });
        ui.add_space(6.0);
        egui::Grid::new("smoke_report").num_columns(4).spacing([12.0, 6.0]).show(ui, |ui| {
            for s in &r.stages {
                stage_row(ui, s);
            }
        });
        if !r.burn.is_empty() {
            ui.add_space(6.0);
            ui.label(RichText::new(crate::tr!("Burn")).strong());
            for t in &r.burn {
                ui.label(burn_line(t));
            }
        }
    }
}

/// One stage: badge, title, time, summary; then its figures, details and next step.
fn stage_row(ui: &mut egui::Ui, r: &StageResult) {
    let color = palette::verdict(ui, r.verdict);
    ui.label(RichText::new(r.verdict.word()).strong().color(color));
    ui.label(crate::i18n::tr(r.stage.title()));
    ui.label(match r.ms {
        _ if r.verdict == Verdict::Skipped => String::new(),
        ms if ms < 10.0 => format!("{ms:.1} ms"),
        ms => format!("{ms:.0} ms"),
    });
    ui.label(r.summary.here());
    ui.end_row();
    for f in &r.figures {
        ui.label("");
        ui.label(RichText::new(f.label.here()).weak());
        ui.label("");
        figure(ui, f);
        ui.end_row();
    }
    let mut extra: Vec<String> = r.details.iter().map(crate::i18n::Here::here).collect();
    if let Some(e) = &r.error {
        extra.push(crate::tr!("error: {error}", error = e));
    }
    if let Some(n) = &r.next_step {
        extra.push(crate::tr!("next step: {step}", step = n.here()));
    }
    for d in extra {
        ui.label("");
        ui.label("");
        ui.label("");
        ui.add(egui::Label::new(RichText::new(d).weak()).wrap());
        ui.end_row();
    }
}

fn figure(ui: &mut egui::Ui, f: &Figure) {
    ui.horizontal(|ui| {
        ui.label(RichText::new(format!("{} {}", crate::smoke::number(f.value), f.unit)).strong());
        if let (Some(p), Some(l)) = (f.percent(), f.limit) {
            let what = f.limit_label.as_ref().map_or_else(|| crate::tr!("limit").to_string(), crate::i18n::Here::here);
            ui.add(
                egui::ProgressBar::new((p / 100.0).clamp(0.0, 1.0) as f32)
                    .desired_width(120.0)
                    .text(crate::units::percent_whole(p)),
            );
            let of =
                crate::tr!("of {what} ({limit} {unit})", what = what, limit = crate::smoke::number(l), unit = f.unit);
            ui.label(RichText::new(of).weak());
        }
    });
}

fn burn_line(t: &crate::smoke::BurnTick) -> String {
    let mut s = crate::tr!(
        "burn {secs} s: {iterations} GEMMs, {errors} wrong, {gflops} GFLOP/s",
        secs = format!("{:.0}", t.t_s),
        iterations = t.iterations,
        errors = t.errors,
        gflops = format!("{:.0}", t.gflops)
    );
    if let Some(c) = t.sm_clock_mhz {
        s.push_str(&crate::tr!(", SM {mhz} MHz", mhz = c));
    }
    if let Some(c) = t.temperature_c {
        s.push_str(&crate::tr!(", {celsius} C", celsius = c));
    }
    if let Some(w) = t.power_w {
        s.push_str(&crate::tr!(", {watts} W", watts = format!("{w:.0}")));
    }
    if let Some(m) = t.throttle_mask.filter(|m| crate::telemetry::throttle::is_limiting(*m)) {
        s.push_str(&crate::tr!(
            ", held back: {reasons}",
            reasons = crate::telemetry::throttle::summary_message(m).here()
        ));
    }
    s
}

/// Writes the report to `path`: JSON when it ends in .json, the text report otherwise.
pub fn write_report(r: &SmokeReport, path: &std::path::Path) -> std::io::Result<()> {
    let json = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"));
    // (JSON as the run made it, in English like every --json; the text in the reader's language.)
    let body = if json {
        serde_json::to_string_pretty(r).map_err(std::io::Error::other)?
    } else {
        crate::present::smoke::report_text(r, crate::i18n::current())
    };
    std::fs::write(path, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burn_line_names_held_back_clocks() {
        let t = crate::smoke::BurnTick {
            t_s: 3.0,
            iterations: 40,
            errors: 0,
            gflops: 1234.4,
            sm_clock_mhz: Some(1410),
            temperature_c: Some(83),
            power_w: Some(301.2),
            throttle_mask: Some(crate::telemetry::throttle::HW_THERMAL),
        };
        let s = burn_line(&t);
        assert!(
            s.contains("40 GEMMs, 0 wrong, 1234 GFLOP/s, SM 1410 MHz, 83 C, 301 W, held back: hardware thermal"),
            "{s}"
        );
    }
}
