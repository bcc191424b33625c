//! `scale --sizes 1,2,4 -- COMMAND ... {size} ...`: the scaling test ([`crate::jobs::scale`]):
//! runs the command once per size, prints each size's time and the fit's reading.

use crate::i18n::Here as _;
use std::ffi::OsString;
use std::process::ExitCode;

use clap::Args;

use super::{CliError, exit};
use crate::jobs::scale::{ScaleError, Sizes, measure_sizes, parse_sizes};

/// Arguments of `scale`.
#[derive(Debug, Clone, Args)]
pub struct ScaleArgs {
    /// Sizes to substitute for `{size}`, comma-separated (at least two; three or more to tell the
    /// shape, e.g. 1,2,4).
    #[arg(long, default_value = "1,2,4", value_parser = super::options::shown(parse_sizes))]
    pub sizes: Sizes,
    /// `--json` (one definition for every command: [`super::options::JsonArg`]).
    #[command(flatten)]
    pub json: super::options::JsonArg<super::options::Document>,
    /// The command template, after `--`; `{size}` is replaced in every argument.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

/// Runs `scale`: exit code 0 when every run succeeded, else the failed run's code (127 not found,
/// 126 not executable).
pub fn run(a: &ScaleArgs) -> Result<ExitCode, CliError> {
    let fit = measure_sizes(&a.command, &a.sizes, |size, line| {
        super::errln(&format!("gpu-doctor: {}", crate::tr!("size {size}: {line}", size = size, line = line)));
    });
    let s = match fit {
        Ok(s) => s,
        Err(e) => {
            let code = match &e {
                ScaleError::NoCommand | ScaleError::NoPlaceholder => exit::BAD_ARGS,
                ScaleError::RunFailed { status, .. } => u8::try_from(status.code().unwrap_or(1)).unwrap_or(exit::ERROR),
                ScaleError::NotStarted { source, .. } if source.kind() == std::io::ErrorKind::NotFound => 127,
                ScaleError::NotStarted { .. } => 126,
            };
            return Err(CliError::new(code, e.here()));
        }
    };
    if a.json.on() {
        super::outln(&super::to_json(&s)?)?;
    } else {
        for (size, secs) in &s.runs {
            super::outln(&crate::tr!("size {size}: {secs} s", size = size, secs = format!("{secs:.2}")))?;
        }
        super::outln(&s.summary.here())?;
    }
    Ok(ExitCode::from(exit::OK))
}
