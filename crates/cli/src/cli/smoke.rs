//! `smoke`: the CUDA smoke test from the command line (the test runs in a child process, see
//! [`crate::smoke`]; the child itself is entered through [`crate::relaunch`]).

use crate::i18n::{Here as _, Word as _};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use clap::Args;

use super::{CliError, exit};
use crate::diagnose::Verdict;
use crate::present::smoke::stage_text;
use crate::smoke::runner::{self, Launcher};
use crate::smoke::{ChildEnd, Msg, Options};
use crate::units::ByteUnits;

/// Arguments of `smoke`.
#[derive(Debug, Clone, Args)]
pub struct SmokeArgs {
    /// CUDA device to test (CUDA's numbering, after CUDA_VISIBLE_DEVICES).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub device: u32,
    /// After the default test, repeat a matrix multiply for SECS seconds, counting wrong results
    /// and watching clocks, temperature and throttle reasons (1-3600).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u32).range(1..=3600))]
    pub burn: Option<u32>,
    /// `--json` (one definition for every command: [`super::options::JsonArg`]).
    #[command(flatten)]
    pub json: super::options::JsonArg<super::options::Document>,
    /// Seconds without progress after which the test counts as hung and is stopped (1-600).
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=600))]
    pub timeout: u64,
    /// Load the CUDA driver library from this file first (for unusual installs).
    #[arg(long, value_name = "PATH")]
    pub cuda_lib: Option<PathBuf>,
    /// `--nvml-lib` (one definition for every command: [`super::NvmlLibArg`]), for the PCIe link
    /// limit, clocks and temperatures.
    #[command(flatten)]
    pub nvml: super::NvmlLibArg,
}

impl SmokeArgs {
    /// The options passed to the child.
    pub fn options(&self) -> Options {
        Options {
            device: self.device,
            burn_secs: self.burn.unwrap_or(0),
            cuda_lib: self.cuda_lib.clone(),
            nvml_lib: self.nvml.nvml_lib.clone(),
            // The command line keeps binary units; the app passes the user's choice.
            units: ByteUnits::Binary,
        }
    }
}

/// Runs `smoke`: text lines as stages end, or one JSON report at the end.
pub fn run(a: &SmokeArgs) -> Result<ExitCode, CliError> {
    // A library named by path must be a file: a FIFO or a device would block the loader until the
    // stall limit and then read as "the driver or the GPU hung". Refused at once, like --nvml-lib.
    for (flag, path) in [("--cuda-lib", &a.cuda_lib), ("--nvml-lib", &a.nvml.nvml_lib)] {
        if let Some(p) = path
            && let Err(e @ crate::safe_fs::ReadError::NotAFile(_)) = crate::safe_fs::open_regular(p)
        {
            return Err(CliError::new(
                exit::BAD_ARGS,
                crate::tr!("{flag} {path}: {why}", flag = flag, path = p.display(), why = e),
            ));
        }
    }
    let opts = a.options();
    let mut out = std::io::stdout().lock();
    if !a.json.on() {
        let _ = writeln!(
            out,
            "{}\n",
            crate::tr!("CUDA smoke test on device {device} (in a separate process)...", device = opts.device)
        );
        let _ = out.flush();
    }
    let mut printed = 0usize;
    let json = a.json.on();
    let report = runner::run(
        &Launcher::this_program(),
        &opts,
        Duration::from_secs(a.timeout),
        &AtomicBool::new(false),
        &mut |p, msg| {
            if json {
                return;
            }
            let mut o = std::io::stdout().lock();
            match msg {
                Msg::End { .. } => {
                    for r in &p.stages[printed..] {
                        let _ = o.write_all(&crate::text::terminal_bytes(
                            &stage_text(r, crate::i18n::current()),
                            crate::text::Stream::Out,
                        ));
                    }
                    printed = p.stages.len();
                }
                Msg::Burn { tick } => {
                    let mut line = crate::tr!(
                        "        burn {secs} s: {n} GEMMs, {wrong} wrong, {gflops} GFLOP/s",
                        secs = format!("{:>4.0}", tick.t_s),
                        n = tick.iterations,
                        wrong = tick.errors,
                        gflops = format!("{:.0}", tick.gflops)
                    );
                    if let Some(c) = tick.sm_clock_mhz {
                        line.push_str(&format!(", SM {c} MHz"));
                    }
                    if let Some(t) = tick.temperature_c {
                        line.push_str(&format!(", {t} °C"));
                    }
                    let _ = writeln!(o, "{line}");
                }
                _ => {}
            }
            let _ = o.flush();
        },
    );
    if a.json.on() {
        let _ = writeln!(out, "{}", super::to_versioned_json(&report)?);
    } else {
        let lang = crate::i18n::current();
        for r in &report.stages[printed.min(report.stages.len())..] {
            let _ = write!(out, "{}", stage_text(r, lang));
        }
        let _ = writeln!(
            out,
            "\n{}",
            crate::tr!("{verdict}: {summary}", verdict = report.verdict.word(), summary = report.summary.here())
        );
        if let Some(n) = &report.next_step {
            let _ = writeln!(out, "{}", crate::tr!("Next step: {step}", step = n.here()));
        }
        let _ = writeln!(out, "{}", crate::tr!("Took {secs} s.", secs = format!("{:.1}", report.total_ms / 1000.0)));
    }
    Ok(ExitCode::from(match (&report.end, report.verdict) {
        (ChildEnd::NotResponding { .. }, _) => exit::NOT_RESPONDING,
        (_, Verdict::Fail) => exit::CHECK_FAIL,
        (_, Verdict::Warn) => exit::CHECK_WARN,
        _ => exit::OK,
    }))
}
