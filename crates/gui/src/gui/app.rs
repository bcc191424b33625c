//! The app shell: top bar with tabs and the DEMO badge, the status bar, the About tab, and the
//! wiring between the sampler (which wakes the UI) and the Monitor.

use crate::i18n::Here as _;
use std::sync::Arc;
use std::time::Instant;

use clap::ValueEnum;
use eframe::egui::{self, Color32};

use super::checklist::{ChecklistSource, ChecklistState};
use super::jobs;
use super::monitor::TimeWindow;
use super::monitor::{MonitorAction, MonitorState};
use super::palette::{self, Tone};
use super::screenshot::ScreenshotPlan;
use super::share;
use super::smoke_tab::SmokeState;
use super::vram_tab::VramState;
use crate::diagnose::headline::Headline;
use crate::present;
use crate::settings::{Settings, Theme};
use crate::telemetry::SourceOptions;
use crate::telemetry::sampler::Sampler;
use crate::telemetry::snapshot::Snapshot;
use crate::telemetry::source::SourceStatus;
use crate::tr;

mod about;
mod bars;
mod init;
mod keys;
mod language;
mod pacing;
mod remote;
mod replay;
mod views;

pub use init::AppInit;
use pacing::{FrameStats, Pacer};
use replay::replay_snapshot;
pub use views::{Tab, View};

/// True when the renderer draws on the CPU: Mesa llvmpipe/softpipe/swrast, Windows WARP (Microsoft
/// Basic Render Driver), or a wgpu CPU adapter. The WSL and "software rendering" checks use it too.
pub fn is_software_renderer(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["llvmpipe", "softpipe", "swrast", "microsoft basic render", "lavapipe", "devicetype::cpu", "(cpu,"]
        .iter()
        .any(|k| n.contains(k))
}

/// Reads the renderer and adapter name from the creation context.
pub fn renderer_name(cc: &eframe::CreationContext<'_>) -> String {
    if let Some(gl) = cc.gl.as_ref() {
        use eframe::glow::HasContext as _;
        // SAFETY: plain string queries on the context eframe just created on this thread.
        let (renderer, version) = unsafe {
            (gl.get_parameter_string(eframe::glow::RENDERER), gl.get_parameter_string(eframe::glow::VERSION))
        };
        return format!("OpenGL (glow): {renderer}, {version}");
    }
    if let Some(rs) = cc.wgpu_render_state.as_ref() {
        let info = rs.adapter.get_info();
        return format!("wgpu {:?}: {} ({:?}, driver {})", info.backend, info.name, info.device_type, info.driver)
            .replace("(Cpu,", "(cpu,");
    }
    "unknown renderer".to_string()
}

/// Leaves the bundled Chinese font out when set: for scripts/measure-fonts.sh, which measures what
/// the font costs (a Chinese window then shows boxes where the system has no CJK font).
pub const NO_CJK_FONT_ENV: &str = "GPU_DOCTOR_NO_CJK_FONT";

/// The bundled Chinese font (a subset of Noto Sans CJK SC with the catalogue's characters, ~300 KiB;
/// assets/fonts/, made by scripts/make-cjk-font.py), after egui's own fonts in both families, so
/// Latin text keeps its face and the app's Chinese text renders on any machine. Chinese user data
/// beyond it (process names, paths) comes from a system CJK font through eframe's system fonts.
/// In a Chinese window the Chinese quotation marks come first, so “” and ‘’ are drawn full-width
/// as Chinese sets them rather than by egui's Latin font; called again when the language changes.
pub fn add_cjk_font(ctx: &egui::Context, lang: crate::i18n::Lang) {
    use egui::FontFamily::{Monospace, Proportional};
    let mut defs = egui::FontDefinitions::default();
    let mut add = |name: &str, data: &'static [u8], families: &[egui::FontFamily]| {
        defs.font_data.insert(name.to_string(), std::sync::Arc::new(egui::FontData::from_static(data)));
        for f in families {
            defs.families.entry(f.clone()).or_default().push(name.to_string());
        }
    };
    for (name, data) in crate::i18n::SYMBOL_FONTS {
        add(name, data, &[Proportional]);
    }
    add("noto-sans-sc-gpu-doctor", crate::i18n::CJK_FONT, &[Proportional, Monospace]);
    let quotes = "noto-sans-sc-quotes-gpu-doctor";
    add(quotes, crate::i18n::CJK_QUOTES_FONT, &[]);
    if lang == crate::i18n::Lang::ZhCn {
        defs.families.entry(Proportional).or_default().insert(0, quotes.to_string());
    }
    ctx.set_fonts(defs);
}

/// Applies the theme setting.
fn apply_theme(ctx: &egui::Context, theme: Theme) {
    ctx.set_theme(match theme {
        Theme::System => egui::ThemePreference::System,
        Theme::Dark => egui::ThemePreference::Dark,
        Theme::Light => egui::ThemePreference::Light,
    });
}

/// "1 s", "0.25 s", "2.5 s": the sampling interval as the user typed it.
fn interval_text(secs: f64) -> String {
    let t = format!("{secs:.2}");
    format!("{} s", t.trim_end_matches('0').trim_end_matches('.'))
}

/// The gpu-doctor window.
pub struct DoctorApp {
    sampler: Sampler,
    /// The visible tab.
    pub tab: Tab,
    /// Monitor tab state.
    pub monitor: MonitorState,
    renderer_name: String,
    screenshot: Option<ScreenshotPlan>,
    process_start: Option<Instant>,
    report_startup: bool,
    first_frame_done: bool,
    offset_secs: i64,
    demo_started_here: bool,
    message: Option<String>,
    source: SourceOptions,
    /// Checklist tab state.
    pub checklist: ChecklistState,
    /// VRAM tab state.
    pub vram: VramState,
    /// Smoke test tab state.
    pub smoke: SmokeState,
    /// The settings being edited (window and tab come from the tabs themselves).
    pub settings: Settings,
    saved_settings: Settings,
    settings_path: Option<std::path::PathBuf>,
    /// A message about the settings file, until dismissed.
    pub settings_notice: Option<crate::i18n::Message>,
    /// The report dialog.
    pub report: share::ReportDialog,
    /// The support card.
    pub card: super::support_card::SupportCard,
    /// "Measure a run".
    pub run_dialog: jobs::RunDialog,
    /// "Focus on a process".
    pub focus_dialog: jobs::FocusDialog,
    /// "End a process", asked from the process table.
    pub end_dialog: super::end_dialog::EndDialog,
    /// The Tune tab.
    pub tune: super::tune_tab::TuneState,
    /// Outcome of the last screenshot, recording or export (set from callbacks too).
    pub info: Arc<std::sync::Mutex<Option<String>>>,
    screenshot_dialog: Option<share::Chooser>,
    open_dialog: Option<share::Chooser>,
    csv_dialog: Option<share::Chooser>,
    machine: Option<Vec<(String, String)>>,
    /// First and last sample time of the recording being replayed.
    pub replay_span: Option<(f64, f64)>,
    /// The recording being replayed.
    replay: Option<Arc<crate::telemetry::sampler::ReplayFile>>,
    /// A recording being read, to replay once read.
    replay_opening: Option<replay::Opening>,
    /// Open the support card when the first data is there.
    card_pending: bool,
    /// What the verdicts were last evaluated for (snapshot, window, position).
    verdicts_for: Option<(u64, u64, u64)>,
    /// Frames and their time, printed every 10 s in startup-timing mode.
    frame_stats: FrameStats,
    /// When new data is drawn.
    pacer: Arc<Pacer>,
    /// The language the window's made texts (checklist, verdicts, card) are in.
    lang: crate::i18n::Lang,
    /// The server whose data the window shows, over SSH.
    pub remote: Option<Arc<crate::telemetry::remote::RemoteLink>>,
    /// "Connect to a server…".
    pub connect_dialog: remote::ConnectDialog,
}

impl DoctorApp {
    /// Builds the app and lets the sampler wake it whenever new data is published.
    pub fn new(cc: &eframe::CreationContext<'_>, init: AppInit) -> Self {
        let ctx = cc.egui_ctx.clone();
        if is_software_renderer(&init.renderer_name) {
            // Anti-aliasing feathers every edge with extra triangles; a CPU rasteriser pays for each
            // one on every frame (measured: about 40 % of the idle cost under llvmpipe).
            ctx.tessellation_options_mut(|o| o.feathering = false);
        }
        let pacer = Arc::new(Pacer::default());
        let p = Arc::clone(&pacer);
        init.sampler.set_notify(move |snap| p.wake(&ctx, snap));
        apply_theme(&cc.egui_ctx, init.settings.theme);
        palette::tune(&cc.egui_ctx);
        if std::env::var_os(NO_CJK_FONT_ENV).is_none() {
            add_cjk_font(&cc.egui_ctx, crate::i18n::current());
        }
        let mut monitor = MonitorState { units: init.settings.units, ..MonitorState::default() };
        if let Some(w) = TimeWindow::ALL.into_iter().find(|w| w.secs() as u32 == init.settings.window_secs) {
            monitor.window = w;
        }
        let replay = init.replay.clone();
        let (program, nvml_lib) = (init.smoke.launcher.program.clone(), init.source.nvml_lib.clone());
        let mut app = DoctorApp {
            sampler: init.sampler,
            tab: init.tab,
            monitor,
            renderer_name: init.renderer_name,
            screenshot: init.screenshot,
            process_start: init.process_start,
            report_startup: init.report_startup,
            first_frame_done: false,
            offset_secs: present::local_offset_secs(),
            demo_started_here: false,
            message: None,
            checklist: ChecklistState::new(match init.checklist_from {
                Some(dir) => ChecklistSource::Capture(dir),
                None => ChecklistSource::Live(init.source.clone()),
            })
            .with_home(ChecklistSource::Live(init.source.clone())),
            source: init.source,
            vram: VramState::default(),
            smoke: SmokeState::new(init.smoke),
            report: share::ReportDialog::new(init.settings.redaction),
            card: super::support_card::SupportCard::default(),
            run_dialog: jobs::RunDialog::new(program.clone(), nvml_lib.clone()),
            focus_dialog: jobs::FocusDialog::new(program.clone(), nvml_lib.clone()),
            end_dialog: Default::default(),
            tune: super::tune_tab::TuneState::new(program, nvml_lib),
            info: Arc::new(std::sync::Mutex::new(None)),
            screenshot_dialog: None,
            open_dialog: None,
            csv_dialog: None,
            machine: None,
            replay_span: None,
            replay: None,
            replay_opening: None,
            card_pending: init.support_card,
            lang: crate::i18n::current(),
            remote: None,
            connect_dialog: remote::ConnectDialog::default(),
            verdicts_for: None,
            frame_stats: FrameStats::default(),
            pacer,
            saved_settings: init.settings.clone(),
            settings: init.settings,
            settings_path: init.settings_path,
            settings_notice: init.settings_notice,
        };
        app.vram.units = app.settings.units;
        if app.settings_path.is_none() {
            // Tests and screenshots: the user's measured runs stay out of the picture.
            app.vram.calibration = Some(super::vram_tab::Calibration::default());
        }
        app.smoke.units = app.settings.units;
        if init.diagnose_at_start && app.source.demo.is_none() {
            let renderer = app.renderer_name.clone();
            app.checklist.start(&cc.egui_ctx, &renderer);
        }
        if let Some(path) = replay {
            app.open_replay(&cc.egui_ctx, &path);
        }
        if let Some(path) = init.tune_journal {
            app.tune.open(path);
        }
        if let Some((target, setup)) = init.connect {
            app.connect(&cc.egui_ctx, target, setup);
        }
        app
    }

    fn tab_name(&self) -> String {
        if self.card.open {
            // The card covers the tab: a screenshot is of the card.
            return "support-card".to_string();
        }
        self.tab.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_default()
    }

    /// Shows a note of what just happened (the toast over the lower right corner).
    pub fn set_info(&self, text: String) {
        if let Ok(mut i) = self.info.lock() {
            *i = Some(text);
        }
    }

    /// Saves a PNG of the window (to `path`, or a new file in the Pictures folder) and copies it.
    pub fn take_screenshot(&self, ctx: &egui::Context, path: Option<std::path::PathBuf>) {
        share::screenshot(
            ctx,
            path,
            share::file_stem(&self.tab_name(), &self.settings.redaction),
            Arc::clone(&self.info),
        );
    }

    /// Re-evaluates the bottleneck verdicts when new data arrived (or the window or replay position
    /// moved) and marks verdicts that start or end as events on the charts.
    fn update_verdicts(&mut self, snap: &Snapshot, now: f64) {
        let at = self.monitor.paused_at.filter(|_| snap.source.is_replay()).unwrap_or(now);
        let key = (snap.seq, self.monitor.diag_window.to_bits(), at.to_bits());
        if self.verdicts_for == Some(key) {
            return;
        }
        self.verdicts_for = Some(key);
        use crate::diagnose::bottleneck;
        let mut window = self.monitor.diag_window;
        // A replay shorter than the window is judged over what it recorded.
        self.monitor.judged_span = None;
        if let (true, Some((first, _))) = (snap.source.is_replay(), self.replay_span) {
            let judged = bottleneck::replay_window(window, first, at);
            if judged < window {
                self.monitor.judged_span = Some(judged);
            }
            window = judged;
        }
        let (verdicts, wait, util) = self.sampler.with_history(|h| {
            (
                bottleneck::evaluate(snap, h, window, at),
                bottleneck::first_verdict_in(snap, h, window, at),
                bottleneck::util_windows(snap, h, window, at),
            )
        });
        self.monitor.util = util;
        self.monitor.first_verdict_in = wait.filter(|_| verdicts.is_empty() && !snap.source.is_replay());
        if !snap.source.is_replay() {
            use crate::telemetry::history::{Event, EventKind, EventLevel};
            let old: Vec<_> =
                self.monitor.verdicts.iter().filter(|v| v.severity >= crate::diagnose::Verdict::Warn).collect();
            let new: Vec<_> = verdicts.iter().filter(|v| v.severity >= crate::diagnose::Verdict::Warn).collect();
            for v in &new {
                if !old.iter().any(|o| o.key() == v.key()) {
                    self.sampler.add_event(Event {
                        t: at,
                        kind: EventKind::Verdict,
                        gpu: v.gpu,
                        level: EventLevel::Warn,
                        text: v.title.clone(),
                    });
                }
            }
            for o in &old {
                if !new.iter().any(|v| v.key() == o.key()) {
                    self.sampler.add_event(Event {
                        t: at,
                        kind: EventKind::Verdict,
                        gpu: o.gpu,
                        level: EventLevel::Info,
                        text: crate::msg!("no longer: {title}", title = &o.title),
                    });
                }
            }
        }
        self.monitor.verdicts = verdicts;
    }

    /// The settings as the user has them now (window, tab, theme...).
    pub fn current_settings(&self) -> Settings {
        Settings {
            window_secs: self.monitor.window.secs() as u32,
            tab: self.tab.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_default(),
            ..self.settings.clone()
        }
    }

    /// Saves the settings when they changed since the last save.
    fn save_settings_if_changed(&mut self) {
        let now = self.current_settings();
        if now == self.saved_settings {
            return;
        }
        self.saved_settings = now;
        if let Some(p) = &self.settings_path
            && let Err(e) = self.saved_settings.save(p)
        {
            self.message = Some(tr!("Could not save the settings to {path}: {error}", path = p.display(), error = e));
            self.settings_path = None;
        }
    }

    /// The diagnosis reports and the support card lead with.
    pub(super) fn headline(&self, snap: &Snapshot) -> Option<Headline> {
        match &self.checklist.report {
            // A user's file: its diagnosis, never this machine's NVML state.
            Some(c) if c.origin.is_some() => Headline::of_report(c),
            c => crate::report::headline(&snap.source, c.as_ref()),
        }
    }

    /// The sampler feeding the app.
    pub fn sampler(&self) -> &Sampler {
        &self.sampler
    }
}

impl eframe::App for DoctorApp {
    fn clear_color(&self, visuals: &egui::Visuals) -> [f32; 4] {
        // The window is cleared with the panel colour and the central panel draws no fill of its
        // own: one less full-window layer to rasterise every frame (it matters with software GL).
        visuals.panel_fill.to_normalized_gamma_f32()
    }

    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        if self.report_startup {
            self.frame_stats.count(frame.info().cpu_usage);
        }
        self.poll_replay(ui.ctx());
        let mut snap: Arc<Snapshot> = self.sampler.snapshot();
        self.pacer.on_frame(ui.ctx().input(|i| i.viewport().focused), &snap);
        if let (Some(rec), Some(at)) = (&self.replay, self.monitor.paused_at) {
            // The cards show the sample at the replay position, like live data at that moment.
            snap = Arc::new(replay_snapshot(&snap, rec, at));
        }
        let ctx = ui.ctx().clone();
        self.follow_language();
        palette::small_text_for(&ctx, self.lang);
        let mut action = None;
        egui::Panel::top("top_bar").show(ui, |ui| {
            action = self.top_bar(ui, &snap);
        });
        egui::Panel::bottom("status_bar").show(ui, |ui| self.status_bar(ui, &snap));
        egui::CentralPanel::default().frame(egui::Frame::central_panel(ui.style()).fill(Color32::TRANSPARENT)).show(
            ui,
            |ui| {
                if let Some(msg) = &self.message {
                    ui.colored_label(palette::tone(ui, Tone::Fail), msg);
                }
                self.info_toast(ui.ctx());
                if let (true, Some((a, b))) = (self.tab == Tab::Monitor && snap.source.is_replay(), self.replay_span) {
                    // (Ordered whatever the file held: clamp panics on an inverted range.)
                    let (a, b) = (a.min(b), a.max(b));
                    ui.horizontal(|ui| {
                        let l = ui.label(tr!("Replay position"));
                        let mut at = self.monitor.paused_at.unwrap_or(b).clamp(a, b);
                        let (start, offset) = (snap.started_unix, self.offset_secs);
                        let slider = egui::Slider::new(&mut at, a..=b.max(a + 1.0))
                            .custom_formatter(move |v, _| present::wall_clock(start, v, offset))
                            .step_by(snap.interval_secs.max(crate::telemetry::interval::Interval::MIN_SECS));
                        if ui.add_sized([ui.available_width().min(700.0), 18.0], slider).labelled_by(l.id).changed() {
                            self.monitor.paused_at = Some(at);
                        }
                    });
                }
                if let Some(notice) = self.settings_notice.as_ref().map(crate::i18n::Here::here) {
                    ui.horizontal_wrapped(|ui| {
                        ui.colored_label(palette::tone(ui, Tone::Warn), notice);
                        if ui.button(tr!("OK")).clicked() {
                            self.settings_notice = None;
                        }
                    });
                }
                if let Some(a) = self.tab.view().draw(self, ui, &snap) {
                    action = Some(a);
                }
            },
        );
        match action {
            Some(MonitorAction::TryDemo(scenario)) => self.switch_source(&ctx, Some(scenario)),
            Some(MonitorAction::LeaveDemo) => self.switch_source(&ctx, None),
            Some(MonitorAction::WakeGpu) => self.sampler.allow_wake(),
            Some(MonitorAction::OpenChecklist) => self.tab = Tab::Checklist,
            Some(MonitorAction::ConnectServer) => self.connect_dialog.open = true,
            Some(MonitorAction::Reconnect) => {
                if let Some(link) = &self.remote {
                    link.reconnect();
                }
            }
            Some(MonitorAction::Disconnect) => self.disconnect(&ctx),
            Some(MonitorAction::StartRecording) => {
                let dir = share::recordings_dir();
                let path = share::unique_path(&dir, &share::file_stem("recording", &self.settings.redaction), "gdrec");
                let started = std::fs::create_dir_all(&dir)
                    .map_err(|e| e.to_string())
                    .and_then(|()| self.sampler.start_recording(&path).map_err(|e| e.here()));
                self.set_info(match started {
                    Ok(()) => tr!("Recording to {path}", path = path.display()),
                    Err(e) => tr!("Could not start recording: {error}", error = e),
                });
            }
            Some(MonitorAction::StopRecording) => {
                if let Some((path, n)) = self.sampler.stop_recording() {
                    self.set_info(tr!(
                        "Recorded {n} samples to {path} (Open recording... replays it)",
                        n = n,
                        path = path.display()
                    ));
                }
            }
            None => {}
        }
        if self.card_pending && (snap.gpu_t.is_some() || snap.host_t.is_some()) {
            self.card_pending = false;
            self.open_card(&snap);
        }
        if self.card.open {
            // The card says what is wrong: run the checklist for it, and refresh the card when the
            // results arrive.
            self.checklist.poll();
            if self.checklist.report.is_none() && self.checklist.error.is_none() && !self.checklist.running() {
                self.checklist.start(&ctx, &self.renderer_name);
            }
            // (The Monitor may have taken the result earlier in this frame: compare with what the
            // card was built from, not with the start of this block.)
            if !self.card.has_checklist() && self.checklist.report.is_some() {
                self.open_card(&snap);
            }
        }
        self.serve_report_language(&snap);
        self.report.ui(&ctx);
        let shot = self.info.lock().ok().and_then(|i| i.clone());
        if let Some(super::support_card::CardAction::Screenshot) = self.card.ui(&ctx, shot.as_deref()) {
            if let Ok(mut i) = self.info.lock() {
                *i = None;
            }
            self.take_screenshot(&ctx, None);
        }
        if let Some(pid) = self.monitor.focus_request.take() {
            self.focus_dialog.focus_on(pid);
        }
        self.run_dialog.ui(&ctx);
        self.focus_dialog.ui(&ctx);
        if let Some((pid, name, gpu)) = self.monitor.end_request.take() {
            self.end_dialog.ask(pid, name, gpu);
        }
        self.end_dialog.ui(&ctx);
        if let Some((target, setup)) = self.connect_dialog.ui(&ctx) {
            self.connect(&ctx, target, setup);
        }
        self.take_dropped_file(&ctx);
        if let Some(Some(path)) = share::poll_dialog(&ctx, &mut self.screenshot_dialog) {
            self.take_screenshot(&ctx, Some(path));
        }
        if let Some(Some(path)) = share::poll_dialog(&ctx, &mut self.open_dialog) {
            self.open_replay(&ctx, &path);
        }
        if let (Some(Some(path)), Some(rec)) = (share::poll_dialog(&ctx, &mut self.csv_dialog), &self.replay) {
            let mut rows = 0;
            let written = crate::safe_fs::write_new_atomic_with(&path, |w| {
                rows = rec.write_csv(w).map_err(std::io::Error::other)?;
                Ok(())
            });
            self.set_info(match written {
                Ok(()) => tr!("Exported {rows} samples to {path}", rows = rows, path = path.display()),
                Err(e) => tr!("Could not export to {path}: {error}", path = path.display(), error = e),
            });
        }
        if self.screenshot_dialog.is_some() || self.open_dialog.is_some() || self.csv_dialog.is_some() {
            ctx.request_repaint_after(std::time::Duration::from_millis(100));
        }
        self.keyboard(&ctx);
        if ctx.input_mut(|i| {
            i.consume_shortcut(&egui::KeyboardShortcut::new(
                egui::Modifiers::COMMAND | egui::Modifiers::SHIFT,
                egui::Key::S,
            ))
        }) {
            self.take_screenshot(&ctx, None);
        }
        if let Some(e) = self.sampler.take_recording_error() {
            self.message = Some(e.here());
        }
        self.save_settings_if_changed();
        if !self.first_frame_done {
            self.first_frame_done = true;
            if let (true, Some(start)) = (self.report_startup, self.process_start) {
                eprintln!(
                    "gpu-doctor: first frame {:.0} ms after process start",
                    start.elapsed().as_secs_f64() * 1000.0
                );
            }
        }
        if self.screenshot.is_some()
            && (self.smoke.running() || (self.card.open && self.checklist.running()) || self.replay_opening())
        {
            // A screenshot of the Smoke test tab shows the finished run; one of the support card
            // shows the checklist's result; one of a replay, the recording.
            ctx.request_repaint_after(std::time::Duration::from_millis(50));
        } else if let Some(plan) = self.screenshot.as_mut() {
            // A server: once its data flows (or the link has failed and says why).
            let remote_ready = snap.remote.as_ref().is_none_or(|r| match r.state {
                crate::telemetry::remote::RemoteState::Connecting { .. } => false,
                crate::telemetry::remote::RemoteState::Live => {
                    snap.inventory.gpus.is_empty() || snap.gpus.iter().any(|g| g.util_gpu_pct.get().is_some())
                }
                _ => true,
            });
            plan.on_frame(
                &ctx,
                remote_ready
                    && snap.host.is_some()
                    && (snap.gpu_t.is_some()
                        || !snap.inventory.gpus.is_empty()
                        || matches!(snap.source, SourceStatus::Unavailable(_) | SourceStatus::Asleep { .. })),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_software_renderer;

    #[test]
    fn interval_is_shown_as_typed() {
        assert_eq!(super::interval_text(1.0), "1 s");
        assert_eq!(super::interval_text(0.25), "0.25 s");
        assert_eq!(super::interval_text(2.5), "2.5 s");
        assert_eq!(super::interval_text(10.0), "10 s");
    }

    #[test]
    fn software_renderers_are_recognised() {
        assert!(is_software_renderer(
            "OpenGL (glow): llvmpipe (LLVM 15.0.6, 256 bits), 4.5 (Core Profile) Mesa 22.3.6"
        ));
        assert!(is_software_renderer("wgpu Dx12: Microsoft Basic Render Driver (cpu, driver )"));
        assert!(is_software_renderer("wgpu Vulkan: llvmpipe (LLVM 15.0.6, 256 bits) (cpu, driver llvmpipe)"));
        assert!(!is_software_renderer("OpenGL (glow): NVIDIA GeForce RTX 4090/PCIe/SSE2, 4.6.0 NVIDIA 550.54.15"));
        assert!(!is_software_renderer(
            "wgpu Vulkan: Intel(R) UHD Graphics 770 (IntegratedGpu, driver Intel open-source Mesa driver)"
        ));
    }
}
