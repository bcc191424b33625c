//! The command-line front end shared by both binaries: clap argument types, the `info` and
//! `monitor` subcommands, text and JSON rendering, and the documented exit codes.

pub mod check;
pub mod exit;
pub mod focus;
pub mod hook;
pub mod info;
pub mod monitor;
pub mod options;
pub mod record;
pub mod report;
pub mod run;
pub mod scale;
pub mod serve;
pub mod smoke;
pub mod tune;
pub mod vram;

use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde::Serialize;

use crate::telemetry::SourceOptions;
use crate::telemetry::demo::{MAX_DEMO_GPUS, Scenario};

/// `gpu-doctor-cli`'s arguments (here rather than in the binary so the packages' man page and
/// shell completions are generated from the same definition).
#[derive(Debug, clap::Parser)]
#[command(name = "gpu-doctor-cli", version, about = "Find out why an NVIDIA GPU is idle, slow or not working (headless).", after_help = exit::HELP)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// `--lang` (one definition for both binaries: [`options::LangArg`]).
    #[command(flatten)]
    pub lang: options::LangArg,
}

/// Subcommands shared by `gpu-doctor` and `gpu-doctor-cli`.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Show the GPU inventory (driver, CUDA and NVML versions, each GPU) and how NVML was loaded.
    Info(InfoArgs),
    /// Print live GPU and host metrics, one block (or one JSON object) per tick.
    Monitor(MonitorArgs),
    /// Walk the checklist (PCI device, driver, CUDA, permissions, container, WSL, environment,
    /// runtime health) and say what is wrong and how to fix it.
    Check(check::CheckArgs),
    /// Write what the checks read to a directory, for support (`check --from DIR` reads it).
    Capture(check::CaptureArgs),
    /// Estimate the GPU memory a model needs (inference or training) and whether it fits here.
    Vram(Box<vram::VramArgs>),
    /// Run the CUDA smoke test: load the driver, find the GPUs, copy, compute and verify, in a
    /// separate process; says which stage fails and what to do.
    Smoke(smoke::SmokeArgs),
    /// Write a support report (Markdown, JSON or HTML): inventory, checklist, recent metrics;
    /// host and user names, home paths, IP and MAC addresses are redacted unless --no-redact.
    Report(report::ReportArgs),
    /// Record the sampled metrics to a file (readable even if the program is killed).
    Record(record::RecordArgs),
    /// Show a recording: as text, JSON lines (--json) or CSV for spreadsheets (--csv).
    Replay(record::ReplayArgs),
    /// Measure a run: start COMMAND (after --), sample it and the GPUs until it exits, then print
    /// time, peak VRAM, utilization, CPU, memory, I/O, the bottleneck verdicts and the VRAM to plan
    /// with (on stderr). Exits with the command's exit code.
    Run(run::RunArgs),
    /// Stuck-job triage for one process (and its children): state, CPU, I/O, GPU memory, whether
    /// its log grows; then a verdict and the next step.
    Focus(focus::FocusArgs),
    /// Scaling test: run COMMAND (after --) once per --sizes value substituted for {size}, fit
    /// time against size and say whether it scales or a fixed overhead dominates.
    Scale(scale::ScaleArgs),
    /// Tune: find the batch size, the copies run at once and the workers for COMMAND (after --,
    /// with {batch}, {workers} or --param placeholders), one change per trial, each measured;
    /// keeps GPU memory headroom, writes a journal, ends with the setting and why it stopped.
    Tune(Box<tune::TuneArgs>),
    /// Compare two measured runs (run --json-out A.json, then B.json) side by side, with the
    /// change of each figure and what changed in the command.
    Compare(tune::CompareArgs),
    /// Serve Prometheus metrics (GPU, host, bottleneck verdicts, checklist, smoke test) on
    /// 127.0.0.1:9835/metrics, with dcgm-exporter's names where there is an equivalent.
    Serve(serve::ServeArgs),
}

impl Command {
    /// Whether the output is for programs (`--json`, `--csv`), which is always English.
    pub fn machine_readable(&self) -> bool {
        match self {
            Command::Info(a) => a.json.on(),
            Command::Monitor(a) => a.json.on(),
            Command::Check(a) => matches!(a.format(), check::Format::Json | check::Format::Prom),
            Command::Vram(a) => a.json.on(),
            Command::Smoke(a) => a.json.on(),
            Command::Replay(a) => a.json.on() || a.csv,
            Command::Run(a) => a.json.on(),
            Command::Focus(a) => a.json.on(),
            Command::Scale(a) => a.json.on(),
            Command::Tune(a) => a.json.on(),
            Command::Compare(a) => a.json.on(),
            Command::Capture(_) | Command::Report(_) | Command::Record(_) | Command::Serve(_) => false,
        }
    }
}

/// Where data comes from: the real machine (with [`NvmlArgs`]' choices), or a named demo scenario.
#[derive(Debug, Clone, Default, Args)]
pub struct SourceArgs {
    /// Use simulated data instead of the real machine. Scenarios: healthy-training, data-starved,
    /// io-bound, thermal-throttle, vram-full, imbalance, idle.
    #[arg(long, value_name = "SCENARIO", value_parser = parse_scenario, conflicts_with_all = ["nvml_lib", "wake_sleeping_gpu"])]
    pub demo: Option<Scenario>,
    /// Number of simulated GPUs (1-8; demo mode only).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_DEMO_GPUS)), requires = "demo")]
    pub gpus: Option<u32>,
    /// Seed of the simulation (demo mode only); the same seed gives the same data.
    #[arg(long, default_value_t = 1, requires = "demo")]
    pub seed: u64,
    /// The real machine's NVML: `--nvml-lib`, `--wake-sleeping-gpu` (one definition with the
    /// commands that only read the real machine).
    #[command(flatten)]
    pub nvml: NvmlArgs,
    /// `--gpu` (one definition for every command with a data source: [`options::GpuArg`]).
    #[command(flatten)]
    pub gpu: options::GpuArg,
}

/// Where NVML comes from: its own flags, and alone for the commands that only read the real
/// machine (`check`, `capture`): no `--demo`, since a checklist of simulated data would describe
/// no machine.
#[derive(Debug, Clone, Default, Args)]
pub struct NvmlArgs {
    /// `--nvml-lib` (one definition with the commands that use NVML only for a detail).
    #[command(flatten)]
    pub lib: NvmlLibArg,
    /// Read the GPU even when it is asleep (runtime-suspended; D3 on Windows). By default gpu-doctor leaves a
    /// sleeping GPU alone and shows it as asleep, because reading it wakes it and keeps it awake.
    #[arg(long)]
    pub wake_sleeping_gpu: bool,
}

/// `--nvml-lib PATH`: the NVML library to load, for every command that reads NVML (through
/// [`NvmlArgs`] where it is the data source; alone where NVML only adds a detail: `smoke`'s link
/// limit, `vram`'s GPUs).
#[derive(Debug, Clone, Default, Args)]
pub struct NvmlLibArg {
    /// Load NVML from this file instead of the standard places (for unusual installs).
    #[arg(long, value_name = "PATH")]
    pub nvml_lib: Option<std::path::PathBuf>,
}

impl NvmlArgs {
    /// The real machine with these NVML choices.
    pub fn options(&self) -> SourceOptions {
        SourceOptions {
            demo: None,
            gpus: None,
            seed: 1,
            nvml_lib: self.lib.nvml_lib.clone(),
            wake_sleeping_gpu: self.wake_sleeping_gpu,
            only: None,
        }
    }
}

/// Environment variable naming a system root to read instead of `/` (for tests).
pub use crate::telemetry::open::SYSTEM_ROOT_ENV;

impl SourceArgs {
    /// The same choices as plain options, for [`SourceOptions::open`].
    pub fn options(&self) -> SourceOptions {
        SourceOptions {
            demo: self.demo,
            gpus: self.gpus,
            seed: self.seed,
            only: self.gpu.gpu.clone(),
            ..self.nvml.options()
        }
    }
}

/// Arguments of `info`.
#[derive(Debug, Clone, Args)]
pub struct InfoArgs {
    /// `--json` (one definition for every command: [`options::JsonArg`]).
    #[command(flatten)]
    pub json: options::JsonArg<options::Document>,
    /// Data source options.
    #[command(flatten)]
    pub source: SourceArgs,
}

/// Arguments of `monitor`.
#[derive(Debug, Clone, Args)]
pub struct MonitorArgs {
    /// Data source options.
    #[command(flatten)]
    pub source: SourceArgs,
    /// `--interval` (one definition for every command: [`options`]).
    #[command(flatten)]
    pub interval: options::IntervalArg<options::Sampling>,
    /// Stop after N ticks (default: run until interrupted).
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
    /// `--json` (one definition for every command: [`options::JsonArg`]).
    #[command(flatten)]
    pub json: options::JsonArg<options::Lines>,
    /// Seconds of history the bottleneck verdicts judge (10-3600).
    #[arg(long, default_value_t = 60.0, value_name = "SECS", value_parser = parse_window)]
    pub window: f64,
}

/// clap value parser for `--window`.
pub fn parse_window(s: &str) -> Result<f64, String> {
    let v: f64 = s.trim().parse().map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if (10.0..=3600.0).contains(&v) { Ok(v) } else { Err(format!("{v} s is outside 10-3600 s")) }
}

/// clap value parser for `--demo`.
pub fn parse_scenario(s: &str) -> Result<Scenario, String> {
    s.parse::<Scenario>().map_err(|e| crate::i18n::Here::here(&e))
}

/// A finite number within `[min, max]` with its unit in the error: the one parser behind every
/// duration and size flag (`--watch`, `--duration`, `--vram-gib`...), so NaN, infinity, negative
/// and absurd values are refused by clap with exit 2 instead of panicking or running forever.
pub fn parse_bounded(s: &str, min: f64, max: f64, unit: &str) -> Result<f64, String> {
    let v: f64 = s.trim().parse().map_err(|_| format!("'{s}' is not a number of {unit}"))?;
    if !v.is_finite() || v < min || v > max {
        return Err(format!("'{s}' is out of range: give {min}-{max} {unit}"));
    }
    Ok(v)
}

/// clap value parser for `--watch`: 0.25 s (one reading) to 1 h.
pub fn parse_watch_secs(s: &str) -> Result<f64, String> {
    parse_bounded(s, 0.25, 3600.0, "seconds")
}

/// clap value parser for `--duration`: 1 s to 30 days.
pub fn parse_duration_secs(s: &str) -> Result<f64, String> {
    parse_bounded(s, 1.0, 30.0 * 86400.0, "seconds")
}

/// clap value parser for a GPU memory size: 0.5 to 4096 GiB.
pub fn parse_gib(s: &str) -> Result<f64, String> {
    parse_bounded(s, 0.5, 4096.0, "GiB")
}

/// A command's failure, handled once: [`run`] prints `gpu-doctor: {message}` on stderr and exits
/// with `code` (one of [`exit`]'s codes, or a child command's).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct CliError {
    /// The exit code.
    pub code: u8,
    /// What went wrong, for the user.
    pub message: String,
}

impl CliError {
    /// A failure with this exit code and message.
    pub fn new(code: u8, message: impl std::fmt::Display) -> Self {
        CliError { code, message: message.to_string() }
    }

    /// A runtime error (exit code 1).
    pub fn runtime(message: impl std::fmt::Display) -> Self {
        Self::new(exit::ERROR, message)
    }
}

/// Pretty JSON of a result, or the error to report.
pub fn to_json<T: Serialize + ?Sized>(value: &T) -> Result<String, CliError> {
    serde_json::to_string_pretty(value)
        .map_err(|e| CliError::runtime(crate::tr!("cannot encode JSON: {error}", error = e)))
}

/// The schema of `check --json` and `smoke --json` (docs/messages.md): 2 since their texts carry
/// messages beside the English.
pub const RESULT_JSON_SCHEMA: u32 = 2;

/// A result with its schema number first (`{"schema": 2, ...the result's fields}`).
#[derive(Serialize)]
pub struct Versioned<'a, T: Serialize> {
    /// [`RESULT_JSON_SCHEMA`].
    pub schema: u32,
    /// The result.
    #[serde(flatten)]
    pub body: &'a T,
}

/// `value` as pretty JSON with `"schema"` ([`RESULT_JSON_SCHEMA`]) first.
pub fn to_versioned_json<T: Serialize>(value: &T) -> Result<String, CliError> {
    to_json(&Versioned { schema: RESULT_JSON_SCHEMA, body: value })
}

/// `path` as one shell word, for the commands gpu-doctor prints for the user to run: as it is when
/// it holds only safe characters, else in single quotes (a `'` inside becomes `'\''`).
pub fn shell_word(path: &std::path::Path) -> String {
    let s = path.to_string_lossy();
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "_./-:+=,@%".contains(c)) {
        s.into_owned()
    } else if cfg!(windows) {
        // cmd and PowerShell both take a double-quoted path (Windows paths hold no '"').
        format!("\"{s}\"")
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Ends the process for a command line clap refused (or `--help`/`--version`, which clap prints):
/// clap's message, then the exit code of the `--exit-codes` convention the line names
/// ([`hook::usage_error_code`]).
pub fn usage_exit(e: &clap::Error) -> ! {
    if !e.use_stderr() {
        e.exit()
    }
    let _ = e.print();
    std::process::exit(i32::from(hook::usage_error_code(std::env::args_os().skip(1))))
}

/// Ends the process at once with `code` (after flushing stdout and stderr), skipping the exit
/// handlers: for a process whose library load is stuck inside the dynamic loader.
pub fn exit_now(code: &ExitCode) -> ! {
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // ExitCode has no public number; it is compared with each (the command's own code is kept:
    // `check --exit-codes nagios` must still say CRITICAL or UNKNOWN in its convention).
    let n = (0..=u8::MAX).find(|n| ExitCode::from(*n) == *code).map_or(i32::from(EXIT_CODE_ON_STUCK_LOAD), i32::from);
    #[cfg(unix)]
    {
        unsafe extern "C" {
            fn _exit(status: i32) -> !;
        }
        // SAFETY: _exit ends the process without running exit handlers; nothing after it runs.
        unsafe { _exit(n) }
    }
    #[cfg(not(unix))]
    std::process::exit(n)
}

/// The exit code of a command that ended while the NVIDIA library load was stuck.
const EXIT_CODE_ON_STUCK_LOAD: u8 = exit::NOT_RESPONDING;

/// Writes a command's output to stdout, flushed. A reader that went away (`| head`) ends the
/// output quietly (`Ok`: the command keeps its own exit code); any other write error (a full disk,
/// `/dev/full`) is one line and exit 1 — never a panic.
pub fn out(text: &str) -> Result<(), CliError> {
    use std::io::Write as _;
    let mut o = std::io::stdout().lock();
    // Text from outside (a bug report, a capture, a server) never drives the terminal; Chinese
    // is written in the terminal's character set.
    let text = crate::text::terminal_bytes(text, crate::text::Stream::Out);
    match o.write_all(&text).and_then(|()| o.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::runtime(crate::tr!("could not write the output: {error}", error = e))),
    }
}

/// [`out`] with a line end.
pub fn outln(text: &str) -> Result<(), CliError> {
    out(&format!("{text}\n"))
}

/// Writes a progress or diagnostic line to stderr, in the terminal's character set like [`out`]
/// and made safe the same way. A stderr that went away (a closed window, `| head` on `2>&1`, a
/// dropped SSH session) is ignored: the command goes on and ends as it would (its journal, its
/// output file and its exit code matter more than a line nobody can read) — `eprintln!` would
/// panic there.
pub fn err(text: &str) {
    use std::io::Write as _;
    let mut e = std::io::stderr().lock();
    let text = crate::text::terminal_bytes(text, crate::text::Stream::Err);
    let _ = e.write_all(&text).and_then(|()| e.flush());
}

/// [`err`] with a line end.
pub fn errln(text: &str) {
    err(&format!("{text}\n"))
}

/// What one run of a subcommand is set to, resolved once before it runs (as the window's
/// [`crate::gui::Launch`] is): the language of what it prints, and whether the output is for
/// programs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// The language of the output: `--lang`, else `GPU_DOCTOR_LANG`, else the system's locale,
    /// else English; English for machine-readable output whatever was asked.
    pub lang: crate::i18n::Lang,
    /// `--json`, `--format prom`, `--csv`: output for programs, the same bytes in every language
    /// (scripts and support tools parse its text fields too).
    pub machine_readable: bool,
}

impl Launch {
    /// The launch of `command` with `--lang` (or none) on this machine.
    pub fn resolve(lang_flag: Option<crate::i18n::Lang>, command: &Command) -> Launch {
        Launch::of(crate::i18n::choose(lang_flag, None), command)
    }

    /// The launch of `command` when `asked` is the language the flag, environment and system
    /// chose.
    pub fn of(asked: crate::i18n::Lang, command: &Command) -> Launch {
        let machine_readable = command.machine_readable();
        Launch { lang: if machine_readable { crate::i18n::Lang::En } else { asked }, machine_readable }
    }
}

/// Runs a subcommand as `launch` says and returns the process exit code; a failure is printed
/// here, once.
pub fn run(launch: &Launch, command: &Command) -> ExitCode {
    crate::i18n::set(launch.lang);
    // The commands that unpack or pack in a temporary directory remove it when interrupted.
    if matches!(command, Command::Capture(_)) || matches!(command, Command::Check(a) if a.from.is_some()) {
        crate::diagnose::archive::remove_scratch_on_signals();
    }
    // A tune stops its trial and writes its answer when interrupted.
    if matches!(command, Command::Tune(_)) {
        tune::stop_on_signals();
    }
    let result = match command {
        Command::Info(a) => info::run(a),
        Command::Monitor(a) => monitor::run(a),
        Command::Check(a) => check::run_check(a),
        Command::Capture(a) => check::run_capture(a),
        Command::Vram(a) => vram::run(a),
        Command::Smoke(a) => smoke::run(a),
        Command::Report(a) => report::run(a),
        Command::Record(a) => record::run_record(a),
        Command::Run(a) => run::run(a),
        Command::Focus(a) => focus::run(a),
        Command::Scale(a) => scale::run(a),
        Command::Replay(a) => record::run_replay(a),
        Command::Serve(a) => serve::run(a),
        Command::Tune(a) => tune::run(a),
        Command::Compare(a) => tune::run_compare(a),
    };
    result.unwrap_or_else(|e| {
        use std::io::Write as _;
        let _ = std::io::stderr()
            .write_all(&crate::text::terminal_bytes(&format!("gpu-doctor: {e}\n"), crate::text::Stream::Err));
        ExitCode::from(e.code)
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::{Cli, Launch};
    use crate::i18n::Lang;

    fn launch(args: &[&str]) -> Launch {
        let cli = Cli::try_parse_from(args).unwrap_or_else(|e| panic!("{e}"));
        Launch::resolve(cli.lang.lang, &cli.command)
    }

    #[test]
    fn the_flag_chooses_the_language_and_output_for_programs_is_english() {
        assert_eq!(
            launch(&["gpu-doctor-cli", "--lang", "zh-CN", "info"]),
            Launch { lang: Lang::ZhCn, machine_readable: false }
        );
        for json in
            [&["info", "--json"][..], &["check", "--format", "prom"], &["vram", "--preset", "llama-3-8b", "--json"]]
        {
            let args: Vec<&str> = ["gpu-doctor-cli", "--lang", "zh-CN"].iter().chain(json).copied().collect();
            assert_eq!(launch(&args), Launch { lang: Lang::En, machine_readable: true }, "{json:?}");
        }
        // (What the flag, the environment and the system chose, put to a command for people.)
        let cli = Cli::try_parse_from(["gpu-doctor-cli", "check"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(Launch::of(Lang::ZhCn, &cli.command).lang, Lang::ZhCn);
    }
}
