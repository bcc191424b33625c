//! The desktop app (feature `gui`): command-line options of `gpu-doctor`, the renderer policy
//! (glow or wgpu, one relaunch with the other when the window cannot be created), and the app
//! shell with its tabs.

mod app;
mod charts;
mod checklist;
mod chooser;
mod end_dialog;
mod jobs;
mod monitor;
pub mod palette;
mod screenshot;
mod share;
mod smoke_tab;
mod support_card;
mod tune_tab;
mod tune_view;
mod vram_image;
mod vram_tab;

pub use app::{AppInit, DoctorApp, Tab, is_software_renderer};
pub use checklist::{ChecklistSource, ChecklistState};
pub use chooser::{CHOOSER_ENV, always_in_window};
pub use monitor::{MonitorData, MonitorState, ProcessSort, TimeWindow};
pub use share::{ReportDialog, unique_path};
pub use smoke_tab::{SmokeSetup, SmokeState, write_report};
pub use tune_tab::TuneState;
pub use vram_tab::VramState;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use clap::{Parser, ValueEnum};

use crate::cli::{self, Command, SourceArgs, exit};
use crate::telemetry::interval::Interval;
use crate::telemetry::sampler::Sampler;

/// Which graphics backend draws the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RendererChoice {
    /// OpenGL through glow (default on Linux: Mesa's software GL always exists).
    Gl,
    /// wgpu: Vulkan, Metal or DX12 (default on Windows, with the WARP software fallback).
    Wgpu,
}

impl RendererChoice {
    /// The platform default.
    pub fn platform_default() -> Self {
        if cfg!(windows) { RendererChoice::Wgpu } else { RendererChoice::Gl }
    }

    /// The other renderer.
    pub fn other(self) -> Self {
        match self {
            RendererChoice::Gl => RendererChoice::Wgpu,
            RendererChoice::Wgpu => RendererChoice::Gl,
        }
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            RendererChoice::Gl => "gl",
            RendererChoice::Wgpu => "wgpu",
        }
    }
}

/// Environment variable set on the one relaunch with the other renderer.
const FALLBACK_ENV: &str = "GPU_DOCTOR_FALLBACK_RENDERER";
/// Environment variable: seconds of simulated history a demo opens with (default 300; the
/// measurement scripts use 86400 to see the app with a full 24 h history).
pub const DEMO_PREFILL_ENV: &str = "GPU_DOCTOR_DEMO_PREFILL_SECS";

fn demo_prefill_secs() -> f64 {
    std::env::var(DEMO_PREFILL_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map_or(300.0, |v| v.min(2.0 * 86_400.0))
}

/// Environment variable: print the time from start to the first frame on stderr.
pub const STARTUP_TIMING_ENV: &str = "GPU_DOCTOR_STARTUP_TIMING";

fn parse_size(s: &str) -> Result<[f32; 2], String> {
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(|| format!("'{s}' is not a size like 1280x800"))?;
    let w: f32 = w.trim().parse().map_err(|_| format!("'{s}' is not a size like 1280x800"))?;
    let h: f32 = h.trim().parse().map_err(|_| format!("'{s}' is not a size like 1280x800"))?;
    if !(320.0..=8192.0).contains(&w) || !(240.0..=8192.0).contains(&h) {
        return Err(format!("window size {s} is out of range (320x240 to 8192x8192)"));
    }
    Ok([w, h])
}

/// Command line of `gpu-doctor`: opens the window unless a subcommand is given.
#[derive(Debug, Parser)]
#[command(
    name = "gpu-doctor",
    version,
    about = "Find out why an NVIDIA GPU is idle, slow or not working. Opens the app; subcommands run headless like gpu-doctor-cli.",
    after_help = exit::HELP
)]
pub struct GuiArgs {
    /// Run a headless subcommand instead of opening the window.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Data source options.
    #[command(flatten)]
    pub source: SourceArgs,
    /// `--interval` (one definition for every command: [`cli::options`]); the default is the
    /// settings file's.
    #[command(flatten)]
    pub interval: cli::options::IntervalArg<cli::options::FromSettings>,
    /// Graphics backend (default: gl on Linux, wgpu on Windows). If the window cannot be created,
    /// gpu-doctor retries once with the other one.
    #[arg(long, value_enum)]
    pub renderer: Option<RendererChoice>,
    /// Render, save a PNG of the window to PATH and exit.
    #[arg(long, value_name = "PATH")]
    pub screenshot: Option<PathBuf>,
    /// Frames to render before taking the screenshot.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub frames: u32,
    /// Tab to open (default: the one open when the app was last closed).
    #[arg(long, value_enum)]
    pub tab: Option<Tab>,
    /// Open the Checklist on a capture directory (from `gpu-doctor-cli capture`) instead of this
    /// machine.
    #[arg(long, value_name = "DIR")]
    pub checklist_from: Option<PathBuf>,
    /// Show a recording (from `gpu-doctor-cli record` or the Record button) in the Monitor,
    /// labelled REPLAY, with a time slider.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// Open a tune's journal (from `gpu-doctor-cli tune` or the Tune tab) in the Tune tab.
    #[arg(long, value_name = "FILE")]
    pub tune_journal: Option<PathBuf>,
    /// Open the one-screen support card when the window opens.
    #[arg(long)]
    pub support_card: bool,
    /// Start the CUDA smoke test as soon as the window opens (with `--tab smoke`).
    #[arg(long)]
    pub run_smoke: bool,
    /// Load the CUDA driver library from this file for the smoke test (for unusual installs).
    #[arg(long, value_name = "PATH")]
    pub cuda_lib: Option<PathBuf>,
    /// Colour theme for this run (default: the settings file's, else the system's). With
    /// --screenshot, the way to capture the light theme headless.
    #[arg(long, value_enum)]
    pub theme: Option<crate::settings::Theme>,
    /// `--lang` (one definition for both binaries: [`cli::options::LangArg`]).
    #[command(flatten)]
    pub lang: cli::options::LangArg,
    /// Window size in logical pixels, e.g. 1280x800.
    /// (Without it, the window opens at the size it last had, else 1280x800.)
    #[arg(long, value_parser = parse_size, value_name = "WxH")]
    pub size: Option<[f32; 2]>,
    /// Show a server's GPUs over SSH (user@host[:port] or an ssh alias): runs gpu-doctor-cli there
    /// through the system ssh, labelled REMOTE.
    #[arg(long, value_name = "SERVER", conflicts_with_all = ["demo", "replay", "checklist_from"])]
    pub connect: Option<crate::telemetry::remote::Target>,
    /// gpu-doctor-cli on the server (a name on its PATH or a path; with --connect).
    #[arg(long, value_name = "PATH", default_value = "gpu-doctor-cli", requires = "connect")]
    pub remote_cli: String,
}

/// Makes the dialog whose window answered `window` modal for this frame: the keyboard focus (Tab,
/// Space, Enter) and clicks stay in it and above it, and it stays in front. Call every frame the
/// dialog is shown. While gpu-doctor's own file chooser is open (a dialog's Save… or Open…), the
/// chooser holds them.
pub(crate) fn hold_keyboard(ctx: &eframe::egui::Context, window: &eframe::egui::Response) {
    if !chooser::in_window_open(ctx) {
        ctx.memory_mut(|m| m.set_modal_layer(window.layer_id));
        ctx.move_to_top(window.layer_id);
    }
}

/// Keeps what follows clear of a floating scroll bar on the right: the width left less the bar's
/// own width and margins (text wraps before the bar, never under it).
pub(crate) fn clear_of_scroll_bar(ui: &mut eframe::egui::Ui) {
    let s = &ui.spacing().scroll;
    let bar = s.bar_width + s.bar_inner_margin + s.bar_outer_margin;
    ui.set_max_width((ui.available_width() - bar).max(120.0));
}

/// When Mesa's llvmpipe ends up drawing the window (no GPU driver for the display, VMs, Xvfb),
/// rasterise on the UI thread instead of a pool of threads: a monitor that draws about one frame
/// per second pays more for waking and syncing the pool than it gains (measured under Xvfb with 4
/// demo GPUs: about 1.1 % of a core with the pool, 0.95 % without). A value the user set wins;
/// other drivers ignore the variable.
///
/// Call at the very start of `main`, before any thread exists.
pub fn prefer_lean_software_rendering() {
    if std::env::var_os("LP_NUM_THREADS").is_none() {
        // SAFETY: called first thing in main, before any other thread is started, so nothing can
        // read the environment concurrently.
        unsafe { std::env::set_var("LP_NUM_THREADS", "0") };
    }
}

/// Runs the `gpu-doctor` binary: a subcommand, or the window.
pub fn main_with(args: GuiArgs) -> ExitCode {
    if let Some(cmd) = &args.command {
        return cli::run(&cli::Launch::resolve(args.lang.lang, cmd), cmd);
    }
    let process_start = Instant::now();
    if cfg!(all(unix, not(target_os = "macos")))
        && std::env::var_os("DISPLAY").is_none()
        && std::env::var_os("WAYLAND_DISPLAY").is_none()
        && std::env::var_os("WAYLAND_SOCKET").is_none()
    {
        eprintln!(
            "gpu-doctor: {}",
            crate::tr!(
                "no display to open a window on (neither DISPLAY nor WAYLAND_DISPLAY is set).\n\
                 Over SSH or on a server, run the same diagnosis headless: gpu-doctor-cli info, gpu-doctor-cli monitor"
            )
        );
        return ExitCode::from(exit::NO_DISPLAY);
    }
    let fallback = std::env::var(FALLBACK_ENV).ok().and_then(|v| RendererChoice::from_str(&v, true).ok());
    let renderer = fallback.or(args.renderer).unwrap_or_else(RendererChoice::platform_default);
    match launch(&args, renderer, process_start) {
        Ok(()) => ExitCode::from(exit::OK),
        Err(e) if fallback.is_some() => {
            eprintln!(
                "gpu-doctor: {}",
                crate::tr!(
                    "the {renderer} renderer could not open a window either: {error}",
                    renderer = renderer.name(),
                    error = e
                )
            );
            ExitCode::from(exit::NO_DISPLAY)
        }
        Err(e) => {
            let other = renderer.other();
            eprintln!(
                "gpu-doctor: {}",
                crate::tr!(
                    "the {renderer} renderer could not open a window ({error}); retrying once with {other}.",
                    renderer = renderer.name(),
                    error = e,
                    other = other.name()
                )
            );
            relaunch(other)
        }
    }
}

fn relaunch(renderer: RendererChoice) -> ExitCode {
    let status = std::env::current_exe().and_then(|exe| {
        std::process::Command::new(exe).args(std::env::args_os().skip(1)).env(FALLBACK_ENV, renderer.name()).status()
    });
    match status {
        Ok(s) if s.success() => ExitCode::from(exit::OK),
        Ok(s) => {
            eprintln!(
                "gpu-doctor: {}",
                crate::tr!(
                    "no renderer could open a window. The same diagnosis works without one:\n  gpu-doctor-cli info\n  gpu-doctor-cli monitor"
                )
            );
            ExitCode::from(u8::try_from(s.code().unwrap_or(i32::from(exit::NO_DISPLAY))).unwrap_or(exit::NO_DISPLAY))
        }
        Err(e) => {
            eprintln!(
                "gpu-doctor: {}",
                crate::tr!(
                    "could not relaunch with the {renderer} renderer: {error}. Use gpu-doctor-cli instead.",
                    renderer = renderer.name(),
                    error = e
                )
            );
            ExitCode::from(exit::NO_DISPLAY)
        }
    }
}

/// The window's size when neither `--size` nor a saved size says otherwise.
const DEFAULT_SIZE: [f32; 2] = [1280.0, 800.0];

fn native_options(args: &GuiArgs, renderer: RendererChoice) -> eframe::NativeOptions {
    let mut viewport = eframe::egui::ViewportBuilder::default()
        .with_title("gpu-doctor")
        .with_app_id(crate::APP_ID)
        .with_inner_size(args.size.unwrap_or(DEFAULT_SIZE))
        .with_min_inner_size([640.0, 420.0]);
    if let Ok(icon) = eframe::icon_data::from_png_bytes(include_bytes!("../../../../assets/icon.png")) {
        viewport = viewport.with_icon(Arc::new(icon));
    }
    let mut wgpu_options = eframe::egui_wgpu::WgpuConfiguration::default();
    // Draw on the low-power adapter so the app does not wake or load the GPU it watches.
    if let eframe::egui_wgpu::WgpuSetup::CreateNew(create) = &mut wgpu_options.wgpu_setup {
        create.power_preference =
            eframe::wgpu::PowerPreference::from_env().unwrap_or(eframe::wgpu::PowerPreference::LowPower);
    }
    eframe::NativeOptions {
        viewport,
        renderer: match renderer {
            RendererChoice::Gl => eframe::Renderer::Glow,
            RendererChoice::Wgpu => eframe::Renderer::Wgpu,
        },
        wgpu_options,
        // Dithering costs a shader step on every pixel of every frame; with software rendering
        // (llvmpipe, WARP) that is a large share of the idle cost and the charts do not need it.
        dithering: false,
        // Screenshot runs must not read or write the user's window state: they get a throw-away
        // state file (eframe restores a saved window size even when persist_window is off).
        // An explicit --size wins over the saved one in the same way.
        persist_window: args.screenshot.is_none() && args.size.is_none(),
        persistence_path: (args.screenshot.is_some() || args.size.is_some()).then(screenshot_state_file),
        ..Default::default()
    }
}

/// Where a `--screenshot` run keeps eframe's state: a per-process file in the temp folder,
/// removed when the run ends.
fn screenshot_state_file() -> PathBuf {
    std::env::temp_dir().join(format!("gpu-doctor-screenshot-{}.ron", std::process::id()))
}

/// The window's options, each resolved once from the command line, else the environment
/// (`GPU_DOCTOR_LANG`), else the saved settings, else its default: the one place that order is
/// written. The renderer's own order (the relaunch's choice first) is [`main_with`]'s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Launch {
    /// Seconds between samples.
    pub interval: Interval,
    /// The tab shown first.
    pub tab: Tab,
    /// Light or dark.
    pub theme: crate::settings::Theme,
    /// The window's language.
    pub lang: crate::i18n::Lang,
}

impl Launch {
    /// `args` over `settings` (a tab the settings name that no longer exists: the Monitor).
    pub fn resolve(args: &GuiArgs, settings: &crate::settings::Settings) -> Launch {
        Launch {
            interval: args.interval.given().unwrap_or(settings.interval()),
            tab: args.tab.or_else(|| Tab::from_str(&settings.tab, true).ok()).unwrap_or(Tab::Monitor),
            theme: args.theme.unwrap_or(settings.theme),
            lang: crate::i18n::choose(args.lang.lang, settings.language),
        }
    }
}

fn launch(args: &GuiArgs, renderer: RendererChoice, process_start: Instant) -> Result<(), eframe::Error> {
    let (gpu, host) = args.source.options().open();
    // A --screenshot run neither reads nor writes the user's settings: it is reproducible.
    let settings_path = if args.screenshot.is_some() { None } else { crate::settings::settings_path() };
    let loaded = settings_path
        .as_deref()
        .map(crate::settings::Settings::load)
        .unwrap_or(crate::settings::Loaded { settings: crate::settings::Settings::default(), notice: None });
    let resolved = Launch::resolve(args, &loaded.settings);
    let interval = resolved.interval.duration();
    let prefill = args.source.demo.is_some();
    let screenshot = args.screenshot.clone();
    let tab = resolved.tab;
    let mut loaded = loaded;
    loaded.settings.theme = resolved.theme;
    crate::i18n::set(resolved.lang);
    let frames = args.frames;
    let source = args.source.options();
    let checklist_from = args.checklist_from.clone();
    let replay = args.replay.clone();
    let tune_journal = args.tune_journal.clone();
    let support_card = args.support_card;
    let connect = args.connect.clone().map(|target| {
        let setup = crate::telemetry::remote::SshSetup {
            remote_cli: args.remote_cli.clone(),
            ..crate::telemetry::remote::SshSetup::default()
        };
        (target, setup)
    });
    let smoke = SmokeSetup {
        cuda_lib: args.cuda_lib.clone(),
        nvml_lib: args.source.nvml.lib.nvml_lib.clone(),
        autostart: args.run_smoke,
        ..SmokeSetup::default()
    };
    let options = native_options(args, renderer);
    let wanted_size = args.size.unwrap_or(DEFAULT_SIZE);
    let failure: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
    let failure_in = Arc::clone(&failure);
    let result = eframe::run_native(
        "gpu-doctor",
        options,
        Box::new(move |cc| {
            let mut sampler = Sampler::manual(gpu, host, interval);
            if prefill {
                sampler.prefill_demo(demo_prefill_secs());
            }
            sampler.spawn_threads().map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)?;
            let init = AppInit {
                sampler,
                tab,
                renderer_name: app::renderer_name(cc),
                screenshot: screenshot
                    .map(|path| screenshot::ScreenshotPlan::new(path, frames, failure_in).wanting(wanted_size)),
                process_start: Some(process_start),
                report_startup: std::env::var_os(STARTUP_TIMING_ENV).is_some(),
                source,
                checklist_from,
                smoke,
                settings: loaded.settings,
                settings_notice: loaded.notice,
                settings_path,
                replay,
                tune_journal,
                support_card,
                diagnose_at_start: connect.is_none(),
                connect,
            };
            Ok(Box::new(DoctorApp::new(cc, init)))
        }),
    );
    if args.screenshot.is_some() {
        let _ = std::fs::remove_file(screenshot_state_file());
    }
    if let Ok(f) = failure.lock()
        && let Some(msg) = f.as_ref()
    {
        eprintln!("gpu-doctor: {msg}");
        std::process::exit(i32::from(exit::ERROR));
    }
    result
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;
    use crate::settings::{Settings, Theme};

    #[test]
    fn the_command_line_wins_over_the_settings_and_the_settings_over_the_defaults() {
        let saved = Settings { interval_secs: 2.0, tab: "vram".into(), theme: Theme::Light, ..Settings::default() };
        let bare = GuiArgs::try_parse_from(["gpu-doctor"]).unwrap_or_else(|e| panic!("{e}"));
        let l = Launch::resolve(&bare, &saved);
        assert_eq!((l.interval.secs(), l.tab, l.theme), (2.0, Tab::Vram, Theme::Light));
        let given =
            GuiArgs::try_parse_from(["gpu-doctor", "--interval", "0.5", "--tab", "checklist", "--theme", "dark"])
                .unwrap_or_else(|e| panic!("{e}"));
        let l = Launch::resolve(&given, &saved);
        assert_eq!((l.interval.secs(), l.tab, l.theme), (0.5, Tab::Checklist, Theme::Dark));
        // Settings a newer or older version wrote that mean nothing here give the defaults.
        let odd = Settings { interval_secs: 99.0, tab: "gone".into(), ..Settings::default() };
        let l = Launch::resolve(&bare, &odd);
        assert_eq!((l.interval, l.tab), (Interval::DEFAULT, Tab::Monitor));
    }
}
