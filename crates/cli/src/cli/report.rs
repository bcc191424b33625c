//! `report`: a support report (Markdown, JSON or HTML), redacted by default.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use super::{CliError, SourceArgs, exit};
use crate::diagnose;
use crate::diagnose::input::live_system;
use crate::report::redact::{RedactOptions, Redactor, Secrets};
use crate::report::{self, Format, Inputs};
use crate::telemetry::sampler::Sampler;

/// Arguments of `report`.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Write the report to this new file (an existing file is never overwritten). Default: stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Md)]
    pub format: Format,
    /// Keep host names, user names, home paths, IP and MAC addresses (redacted by default; what
    /// is redacted follows the app's settings).
    #[arg(long)]
    pub no_redact: bool,
    /// Also redact GPU UUIDs and serial numbers.
    #[arg(long, conflicts_with = "no_redact")]
    pub redact_gpu_ids: bool,
    /// Seconds of metrics to sample for the "Recent metrics" section (0-600; 0 leaves it out).
    #[arg(long, value_name = "SECS", default_value_t = 5, value_parser = clap::value_parser!(u64).range(0..=600))]
    pub sample: u64,
    /// Also run the CUDA smoke test (in a child process) and include its stages.
    #[arg(long)]
    pub smoke: bool,
    /// Data source options.
    #[command(flatten)]
    pub source: SourceArgs,
}

impl ReportArgs {
    /// The app's redaction defaults (settings file), then these flags.
    fn redact_options(&self) -> RedactOptions {
        if self.no_redact {
            return RedactOptions::off();
        }
        let base = crate::settings::settings_path()
            .and_then(|p| crate::settings::Settings::peek(&p))
            .map(|s| s.redaction)
            .filter(|r| r.enabled)
            .unwrap_or_default();
        RedactOptions { gpu_ids: base.gpu_ids || self.redact_gpu_ids, ..base }
    }
}

/// Runs `report`; returns the exit code.
pub fn run(a: &ReportArgs) -> Result<ExitCode, CliError> {
    if let Some(out) = &a.out
        && out.exists()
    {
        return Err(CliError::runtime(crate::tr!(
            "{path} already exists; choose a new file name (reports never overwrite files)",
            path = out.display()
        )));
    }
    let source = a.source.options();
    let (gpu, host) = source.open();
    let sampler = Sampler::start(gpu, host, Duration::from_secs(1))
        .map_err(|e| CliError::runtime(crate::tr!("could not start sampling: {error}", error = e)))?;
    if a.sample > 0 {
        super::errln(&format!("gpu-doctor: {}", crate::tr!("sampling for {secs} s...", secs = a.sample)));
        std::thread::sleep(Duration::from_secs(a.sample) + Duration::from_millis(200));
    }
    let checklist = diagnose::run(&live_system(&source, None));
    let smoke = a.smoke.then(|| {
        super::errln(&format!("gpu-doctor: {}", crate::tr!("running the CUDA smoke test...")));
        let opts =
            crate::smoke::Options { nvml_lib: a.source.nvml.lib.nvml_lib.clone(), ..crate::smoke::Options::default() };
        crate::smoke::runner::run(
            &crate::smoke::runner::Launcher::this_program(),
            &opts,
            crate::smoke::runner::DEFAULT_STALL,
            &std::sync::atomic::AtomicBool::new(false),
            &mut |_, _| {},
        )
    });
    // The GPU part waits for NVML to finish opening (on a loaded machine that can outlast the
    // checks), up to the limit `info` uses; a driver that never answers is reported as hung.
    super::info::wait_until_opened(&sampler, false);
    let snap = sampler.snapshot();
    let now = sampler.now();
    let text = sampler.with_history(|h| {
        // Verdicts judge the sampled span when it is long enough to mean something.
        let verdicts = (a.sample >= 10).then(|| crate::diagnose::bottleneck::evaluate(&snap, h, a.sample as f64, now));
        let inputs = Inputs {
            snapshot: &snap,
            history: (a.sample > 0).then_some((h, a.sample as f64 + 1.0, now)),
            checklist: Some(&checklist),
            bottlenecks: verdicts.as_deref(),
            smoke: smoke.as_ref(),
            vram: None,
            renderer: None,
            machine: report::machine_facts(crate::i18n::current()),
            lang: crate::i18n::current(),
        };
        let mut doc = report::build(&inputs);
        report::redact_doc(&mut doc, &mut Redactor::new(a.redact_options(), Secrets::this_machine()));
        report::render(&doc, a.format)
    });
    match &a.out {
        Some(path) => {
            write_new(path, &text).map_err(|e| {
                CliError::runtime(crate::tr!("could not write {path}: {error}", path = path.display(), error = e))
            })?;
            super::errln(&format!("gpu-doctor: {}", crate::tr!("wrote {path}", path = path.display())));
            Ok(ExitCode::from(exit::OK))
        }
        None => {
            super::out(&text)?;
            Ok(ExitCode::from(exit::OK))
        }
    }
}

/// Writes a file that must not exist yet (create-new: a race with another writer fails too).
pub fn write_new(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    // All or nothing: a full disk leaves no truncated report behind.
    crate::safe_fs::write_new_atomic(path, text.as_bytes())
}
