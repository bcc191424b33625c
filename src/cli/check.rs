//! `check` (the checklist on this machine or on a capture) and `capture` (write what the checks
//! read to a directory for support staff).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{CliError, SourceArgs, exit};
use crate::diagnose::source::{CheckSource, live_system};
use crate::diagnose::view::write_capture;
use crate::diagnose::{self, Verdict};

/// Arguments of `check`.
#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Run the checks on a capture directory (from `capture --out DIR`) instead of this machine.
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
    /// NVML options.
    #[command(flatten)]
    pub source: SourceArgs,
}

/// Arguments of `capture`.
#[derive(Debug, Clone, Args)]
pub struct CaptureArgs {
    /// A new (or empty) directory to write the capture to.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// NVML options.
    #[command(flatten)]
    pub source: SourceArgs,
}

/// Runs `check`; exit code 7 when a check failed, 6 when the worst was a warning.
pub fn run_check(args: &CheckArgs) -> Result<ExitCode, CliError> {
    let source = match &args.from {
        Some(dir) => CheckSource::Capture(dir.clone()),
        None => CheckSource::Live(args.source.options()),
    };
    let report = source.run(None).map_err(CliError::runtime)?;
    if args.json {
        println!("{}", super::to_json(&report)?);
    } else {
        print!("{}", diagnose::render_text(&report));
    }
    Ok(ExitCode::from(match report.worst() {
        Verdict::Fail => exit::CHECK_FAIL,
        Verdict::Warn => exit::CHECK_WARN,
        _ => exit::OK,
    }))
}

/// Runs `capture`.
pub fn run_capture(args: &CaptureArgs) -> Result<ExitCode, CliError> {
    let live = live_system(&args.source.options(), None);
    // Running the checks records every file they read.
    let report = diagnose::run(&live);
    let n = write_capture(&live, &args.out).map_err(CliError::runtime)?;
    println!(
        "Wrote a capture to {} ({n} files, {} checks). Send the whole directory; support staff run: gpu-doctor-cli check --from {}",
        args.out.display(),
        report.checks.len(),
        args.out.display()
    );
    println!(
        "It holds GPU-related environment variables, your user and group names, device-node modes, driver files from /proc and /sys, NVIDIA kernel-log lines and NVML's answers; look through it before sending."
    );
    Ok(ExitCode::from(exit::OK))
}
