//! `focus --pid PID [--log FILE]`: the stuck-job triage ([`crate::jobs::focus`]) for one process,
//! printed as text or JSON.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use super::{CliError, SourceArgs, exit};
use crate::jobs::focus::{FocusOptions, Triage, observe};
use crate::telemetry::sampler::Sampler;

/// Arguments of `focus`.
#[derive(Debug, Clone, Args)]
pub struct FocusArgs {
    /// The process to look at (its children are included).
    #[arg(long)]
    pub pid: u32,
    /// Its log or output file: how long since it last grew.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Seconds to watch before judging.
    #[arg(long, default_value_t = 5.0, value_name = "SECS", value_parser = super::parse_watch_secs)]
    pub watch: f64,
    /// `--interval` (one definition for every command: [`super::options`]).
    #[command(flatten)]
    pub interval: super::options::IntervalArg<super::options::Sampling>,
    /// `--json` (one definition for every command: [`super::options::JsonArg`]).
    #[command(flatten)]
    pub json: super::options::JsonArg<super::options::Document>,
    /// Data source options.
    #[command(flatten)]
    pub source: SourceArgs,
}

/// Runs `focus`: exit code 1 when the process does not exist, else 0.
pub fn run(a: &FocusArgs) -> Result<ExitCode, CliError> {
    // A log that cannot be watched is said at once, not silently left out of the verdict.
    if let Some(log) = &a.log {
        crate::safe_fs::open_regular(log)
            .map_err(|e| CliError::new(exit::BAD_ARGS, format!("--log {}: {e}", log.display())))?;
    }
    let (gpu, host) = a.source.options().open();
    let sampler = Sampler::start(gpu, host, a.interval.get().duration()).ok();
    let options = FocusOptions {
        pid: a.pid,
        log: a.log.clone(),
        watch: Duration::from_secs_f64(a.watch.max(a.interval.get().secs())),
        every: a.interval.get().duration(),
    };
    let f = observe(sampler.as_ref(), &options);
    if a.json.on() {
        super::outln(&super::to_json(&f)?)?;
    } else {
        super::out(&crate::present::jobs::focus(&f, crate::i18n::current()))?;
    }
    Ok(ExitCode::from(if f.triage == Triage::Gone { exit::ERROR } else { exit::OK }))
}
