//! `check` (the checklist on this machine or on a capture) and `capture` (write what the checks
//! read to a directory and/or one `.tar.gz` file for support staff).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{CliError, NvmlArgs, exit};
use crate::diagnose::archive::{self, ScratchDir};
use crate::diagnose::source::{CheckSource, live_system};
use crate::diagnose::view::write_capture;
use crate::diagnose::{self, Verdict};
use crate::tr;

/// Arguments of `check`.
#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Run the checks on a capture (the directory from `capture --out DIR`, or the file from
    /// `capture --archive FILE.tar.gz`) instead of this machine.
    #[arg(long, value_name = "DIR|FILE.tar.gz")]
    pub from: Option<PathBuf>,
    /// NVML options.
    #[command(flatten)]
    pub source: NvmlArgs,
}

/// Arguments of `capture`.
#[derive(Debug, Clone, Args)]
pub struct CaptureArgs {
    /// A new (or empty) directory to write the capture to.
    #[arg(long, value_name = "DIR", required_unless_present = "archive")]
    pub out: Option<PathBuf>,
    /// Also (or, without --out, only) write the capture as one new .tar.gz file, the easiest
    /// thing to send; an existing file is never overwritten.
    #[arg(long, value_name = "FILE.tar.gz")]
    pub archive: Option<PathBuf>,
    /// NVML options.
    #[command(flatten)]
    pub source: NvmlArgs,
}

/// Runs `check`; exit code 7 when a check failed, 6 when the worst was a warning.
pub fn run_check(args: &CheckArgs) -> Result<ExitCode, CliError> {
    let source = match &args.from {
        Some(dir) => CheckSource::Capture(dir.clone()),
        None => CheckSource::Live(args.source.options()),
    };
    let report = source.run(None).map_err(CliError::runtime)?;
    if args.json {
        super::outln(&super::to_json(&report)?)?;
    } else {
        super::out(&diagnose::render_text(&report))?;
    }
    Ok(ExitCode::from(match report.worst() {
        Verdict::Fail => exit::CHECK_FAIL,
        Verdict::Warn => exit::CHECK_WARN,
        _ => exit::OK,
    }))
}

/// Runs `capture`.
pub fn run_capture(args: &CaptureArgs) -> Result<ExitCode, CliError> {
    if let Some(file) = args.archive.as_ref().filter(|f| f.exists()) {
        // Said before the checks run; writing uses create_new, so a file appearing meanwhile is
        // not overwritten either.
        return Err(CliError::runtime(tr!("{path} already exists; choose a new file name", path = file.display())));
    }
    let scratch = match &args.out {
        Some(_) => None,
        None => Some(
            ScratchDir::new()
                .map_err(|e| CliError::runtime(tr!("cannot make a temporary directory: {error}", error = e)))?,
        ),
    };
    let dir = match (&args.out, &scratch) {
        (Some(d), _) => d.clone(),
        (None, Some(s)) => s.path().join(archive::TOP_DIR),
        (None, None) => return Err(CliError::new(exit::BAD_ARGS, tr!("give --out DIR or --archive FILE.tar.gz"))),
    };
    let live = live_system(&args.source.options(), None);
    // Running the checks records every file they read.
    let report = diagnose::run(&live);
    let n = write_capture(&live, &dir).map_err(CliError::runtime)?;
    if let Some(out) = &args.out {
        super::outln(&tr!(
            "Wrote a capture to {dir} ({n} files, {checks} checks). Send the whole directory; support staff run: gpu-doctor-cli check --from {arg}",
            dir = out.display(),
            n = n,
            checks = report.checks.len(),
            arg = super::shell_word(out)
        ))?;
    }
    if let Some(file) = &args.archive {
        archive::write_archive(&dir, file).map_err(CliError::runtime)?;
        super::outln(&tr!(
            "Wrote the capture as one file: {file} ({n} files, {checks} checks). Send this file; support staff run: gpu-doctor-cli check --from {arg}",
            file = file.display(),
            n = n,
            checks = report.checks.len(),
            arg = super::shell_word(file)
        ))?;
    }
    super::outln(if cfg!(windows) {
        tr!(
            "It holds GPU-related environment variables, your user name, the display adapters and their drivers, where nvml.dll is, the Python environments in your folders, GPU event-log entries and NVML's answers; look through it before sending."
        )
    } else {
        tr!(
            "It holds GPU-related environment variables, your user and group names, device-node modes, driver files from /proc and /sys, NVIDIA kernel-log lines and NVML's answers; look through it before sending."
        )
    })?;
    Ok(ExitCode::from(exit::OK))
}
