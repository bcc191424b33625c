//! `run -- COMMAND...`: measure a run ([`crate::jobs::run`]) and print the summary on stderr.
//! Returns the command's exit code.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Args;

use super::{CliError, SourceArgs, exit};
use crate::jobs::run::{Ended, measure_with};
use crate::telemetry::sampler::Sampler;

/// Arguments of `run`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// `--interval` (one definition for every command: [`super::options`]).
    #[command(flatten)]
    pub interval: super::options::IntervalArg<super::options::Run>,
    /// `--json` (one definition for every command: [`super::options::JsonArg`]).
    #[command(flatten)]
    pub json: super::options::JsonArg<super::options::Summary>,
    /// Also write the summary as JSON to this new file.
    #[arg(long, value_name = "FILE")]
    pub json_out: Option<std::path::PathBuf>,
    /// Print no summary on stderr (with --json-out).
    #[arg(long, requires = "json_out")]
    pub quiet: bool,
    /// The command's throughput: the last number this regular expression's first group matches
    /// in its output, e.g. '([0-9.]+) samples/s' (the output is passed through as it comes); kept
    /// in the summary, compared by compare.
    #[arg(long, value_name = "REGEX")]
    pub rate_pattern: Option<String>,
    /// Data source options.
    #[command(flatten)]
    pub source: SourceArgs,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

/// Runs `run`; returns the command's exit code (128 + signal when killed; 127 not found; 126 not
/// executable).
pub fn run(a: &RunArgs) -> Result<ExitCode, CliError> {
    // A summary that could not be written must be known before the command runs, not after.
    if let Some(path) = &a.json_out {
        check_new_file(path)?;
    }
    // A pattern that does not compile is refused before anything runs.
    let rate = match &a.rate_pattern {
        Some(p) => Some(
            regex::RegexBuilder::new(p)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| CliError::new(exit::BAD_ARGS, format!("--rate-pattern: {e}")))?,
        ),
        None => None,
    };
    let (gpu, host) = a.source.options().open();
    let sampler = Sampler::start(gpu, host, a.interval.get().duration())
        .map_err(|e| CliError::new(exit::ERROR, crate::tr!("could not start sampling: {error}", error = e)))?;
    let summary = measure_with(&sampler, &a.command, a.interval.get().duration(), rate.as_ref());
    let kept = keep_for_calibration(&summary);
    if a.quiet {
    } else if a.json.on() {
        super::errln(&super::to_json(&summary)?);
    } else {
        super::err(&crate::present::jobs::run_summary(&summary, crate::i18n::current()));
        if let Some(peak) = kept {
            super::errln(&crate::tr!(
                "To keep this peak ({gib} GiB) as a calibration point for the VRAM estimate, add --save-calibration to the vram command that describes this run (its model and settings).",
                gib = format!("{:.2}", peak / crate::units::GIB)
            ));
        }
    }
    if let Some(path) = &a.json_out {
        let written = serde_json::to_string_pretty(&summary)
            .map_err(std::io::Error::other)
            .and_then(|s| super::report::write_new(path, &s));
        if let Err(e) = written {
            // The command ran: its exit code stays the result; the lost summary is a warning.
            super::errln(&format!(
                "gpu-doctor: {}",
                crate::tr!("could not write {path}: {error}", path = path.display(), error = e)
            ));
        }
    }
    Ok(ExitCode::from(match &summary.ended {
        Ended::Exited { code } => u8::try_from(*code).unwrap_or(exit::ERROR),
        Ended::Signal { signal } => u8::try_from(128 + signal).unwrap_or(exit::ERROR),
        Ended::NotStarted { error } if error.en().contains("not found") => 127,
        Ended::NotStarted { .. } => 126,
    }))
}

/// Leaves the run's measured peak in the config directory's `last-run.json`, for `vram
/// --save-calibration`; returns the peak. Demo data and runs without a per-process figure are not
/// kept.
fn keep_for_calibration(summary: &crate::jobs::run::RunSummary) -> Option<f64> {
    let peak = summary.vram_peak_process.filter(|p| *p > 0 && !summary.demo)? as f64;
    let path = crate::vram::calibration::last_run_path()?;
    let last = crate::vram::calibration::LastRun {
        command: summary.command.clone(),
        peak_bytes: peak,
        when: chrono::Local::now().format("%Y-%m-%d %H:%M").to_string(),
    };
    match crate::vram::calibration::save_last_run(&path, &last) {
        Ok(()) => Some(peak),
        Err(e) => {
            super::errln(&format!(
                "gpu-doctor: {}",
                crate::tr!("could not write {path}: {error}", path = path.display(), error = e)
            ));
            None
        }
    }
}

/// `path` can be created: it does not exist (not even as a dangling link) and its folder does.
pub fn check_new_file(path: &std::path::Path) -> Result<(), CliError> {
    if std::fs::symlink_metadata(path).is_ok() {
        return Err(CliError::new(
            exit::BAD_ARGS,
            crate::tr!(
                "{path} already exists; gpu-doctor never overwrites a file: choose a new name",
                path = path.display()
            ),
        ));
    }
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    if !parent.is_dir() {
        return Err(CliError::new(
            exit::BAD_ARGS,
            crate::tr!("{path}: the folder {folder} does not exist", path = path.display(), folder = parent.display()),
        ));
    }
    Ok(())
}
