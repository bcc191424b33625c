//! What the app starts with: [`AppInit`], filled by the launcher from the command line and
//! settings, or by tests with [`AppInit::new`].

use std::time::Instant;

use super::super::screenshot::ScreenshotPlan;
use super::super::smoke_tab::SmokeSetup;
use super::Tab;
use crate::settings::Settings;
use crate::telemetry::SourceOptions;
use crate::telemetry::sampler::Sampler;

/// What the app starts with.
pub struct AppInit {
    /// The sampler, already running (or stepped by hand in tests).
    pub sampler: Sampler,
    /// The tab shown first.
    pub tab: Tab,
    /// Renderer and adapter name, e.g. "OpenGL: llvmpipe (LLVM 15.0.6, 256 bits)".
    pub renderer_name: String,
    /// A pending `--screenshot`.
    pub screenshot: Option<ScreenshotPlan>,
    /// When the process started, for the start-to-first-frame figure.
    pub process_start: Option<Instant>,
    /// Print the start-to-first-frame time on stderr.
    pub report_startup: bool,
    /// The data-source options the app was started with (kept when switching to demo and back).
    pub source: SourceOptions,
    /// A capture directory to run the checklist on instead of this machine.
    pub checklist_from: Option<std::path::PathBuf>,
    /// How the Smoke test tab runs its child process.
    pub smoke: SmokeSetup,
    /// The user's settings.
    pub settings: Settings,
    /// Why the settings file could not be used (shown once).
    pub settings_notice: Option<crate::i18n::Message>,
    /// Where settings are saved when they change; None: never saved (tests, screenshots).
    pub settings_path: Option<std::path::PathBuf>,
    /// A recording to open in the Monitor instead of live data.
    pub replay: Option<std::path::PathBuf>,
    /// A tune's journal to show in the Tune tab.
    pub tune_journal: Option<std::path::PathBuf>,
    /// Open the support card once data is there.
    pub support_card: bool,
    /// Run the checklist in the background at start, so the no-GPU banner can lead with its root
    /// cause (the app does; tests that pin the NVML text do not).
    pub diagnose_at_start: bool,
    /// A server to show instead of this machine (`--connect`).
    pub connect: Option<(crate::telemetry::remote::Target, crate::telemetry::remote::SshSetup)>,
}

impl AppInit {
    /// An init for tests and embedding: no screenshot, no timing.
    pub fn new(sampler: Sampler) -> Self {
        AppInit {
            sampler,
            tab: Tab::Monitor,
            renderer_name: "none (test harness)".to_string(),
            screenshot: None,
            process_start: None,
            report_startup: false,
            source: SourceOptions::default(),
            checklist_from: None,
            smoke: SmokeSetup::default(),
            settings: Settings::default(),
            settings_notice: None,
            settings_path: None,
            replay: None,
            tune_journal: None,
            support_card: false,
            diagnose_at_start: false,
            connect: None,
        }
    }
}
