//! `check` (the checklist on this machine or on a capture) and `capture` (write what the checks
//! read to a directory and/or one `.tar.gz` file for support staff).

use crate::i18n::Here as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{CliError, NvmlArgs, exit, hook};
use crate::diagnose;
use crate::diagnose::archive::{self, ScratchDir};
use crate::diagnose::capture::write_capture;
use crate::diagnose::input::{CheckSource, live_system, live_system_with};
use crate::export::prom;
use crate::tr;

/// What `check` prints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The checklist as text.
    #[default]
    Text,
    /// The report as JSON (the same as --json).
    Json,
    /// Prometheus text format, for node_exporter's textfile collector (with --out FILE.prom).
    Prom,
    /// One status line of at most 80 characters, for health-check hooks.
    Line,
}

/// Arguments of `check`.
#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// `--json` (one definition for every command: [`super::options::JsonArg`]).
    #[command(flatten)]
    pub json: super::options::JsonArg<super::options::Document>,
    /// Output format: text, json, prom (Prometheus text for node_exporter's textfile collector) or
    /// line (one status line of at most 80 characters, for schedulers' health checks).
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    pub format: Option<Format>,
    /// Write the output to FILE instead of stdout, atomically (a temporary file, then a rename).
    /// An existing file is replaced only when an earlier `check --format prom` wrote it.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Only the checks that finish in about 2 s, for schedulers' health checks (prolog, epilog,
    /// HealthCheckProgram): no cuInit probe and no search of Python environments.
    #[arg(long, conflicts_with = "from")]
    pub quick: bool,
    /// Exit-code convention: default (0 ok, 6 warning, 7 failure), nagios (0/1/2/3), npd
    /// (node-problem-detector: 0 ok, 1 failure, 2 unknown) or slurm (0 ok, 1 failure: drain, 2 could
    /// not check).
    #[arg(long, value_enum, value_name = "STYLE", default_value = "default")]
    pub exit_codes: super::hook::ExitCodes,
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

impl CheckArgs {
    /// The output format asked for.
    pub fn format(&self) -> Format {
        if self.json.on() { Format::Json } else { self.format.unwrap_or_default() }
    }
}

/// Runs `check`; the exit code follows `--exit-codes` (by default 7 when a check failed, 6 when
/// the worst was a warning).
pub fn run_check(args: &CheckArgs) -> Result<ExitCode, CliError> {
    let style = args.exit_codes;
    let format = args.format();
    let report = match &args.from {
        Some(dir) => CheckSource::Capture(dir.clone()).run(None).map_err(|e| CliError::runtime(e.here())),
        None if args.quick => Ok(diagnose::run(&live_system_with(&args.source.options(), None, true))),
        None => CheckSource::Live(args.source.options()).run(None).map_err(|e| CliError::runtime(e.here())),
    };
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            // A hook reads its status from stdout as well as from the exit code.
            if format == Format::Line {
                let _ = super::outln(&hook::unknown_line(style, &e.message));
            }
            return Err(CliError::new(style.unknown(), e.message));
        }
    };
    let text = match format {
        Format::Json => {
            super::to_versioned_json(&report).map_err(|e| CliError::new(style.unknown(), e.message))? + "\n"
        }
        Format::Text => crate::present::checklist::render_text(&report, crate::i18n::current()),
        Format::Line => hook::status_line(&report, style) + "\n",
        Format::Prom => {
            let host = prom::hostname();
            let mut e = prom::Exposition::new();
            e.add_exporter(&host, None);
            let now =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
            e.add_checks(&report, now, &host);
            format!("{}\n{}", prom::TEXTFILE_MARK, e.render())
        }
    };
    match &args.out {
        Some(path) => write_out(path, &text).map_err(|e| CliError::new(style.unknown(), e))?,
        // A status that could not be written is no status: the convention's "could not check",
        // never "drain the node" (a full disk under stdout).
        None => super::out(&text).map_err(|e| CliError::new(style.unknown(), e.message))?,
    }
    Ok(ExitCode::from(style.code(report.worst())))
}

/// Writes `--out FILE` atomically. A file that is there already is replaced only when an earlier
/// `check --format prom` wrote it (its first line is [`prom::TEXTFILE_MARK`]) or it is empty:
/// a mistyped path never destroys someone's file.
fn write_out(path: &std::path::Path, text: &str) -> Result<(), String> {
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        let ours = meta.is_file()
            && (meta.len() == 0
                || crate::safe_fs::read_text(path, 1 << 20)
                    .is_ok_and(|t| t.lines().next() == Some(prom::TEXTFILE_MARK)));
        if !ours {
            return Err(tr!(
                "{path} exists and was not written by gpu-doctor-cli check --format prom; it is left as it is: choose another file",
                path = path.display()
            ));
        }
    }
    crate::safe_fs::replace_atomic(path, text.as_bytes())
        .map_err(|e| tr!("cannot write {path}: {error}", path = path.display(), error = e))
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
    let written = write_capture(&live, &dir, crate::i18n::current()).map_err(|e| CliError::runtime(e.here()))?;
    let n = written.files;
    // What is about to be sent, before the sentence saying where it is.
    super::out(&written.manifest)?;
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
        archive::write_archive(&dir, file).map_err(|e| CliError::runtime(e.here()))?;
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
