//! `check` (the checklist on this machine or on a capture) and `capture` (write what the checks
//! read to a directory for support staff).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use super::{SourceArgs, exit};
use crate::diagnose::view::{CapturedSystem, LiveSystem, NvmlView, SystemView, write_capture};
use crate::diagnose::{self, Verdict, collect};
use crate::telemetry::GpuSource;

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

/// How long the checks wait for NVML to open and answer one sample.
pub const NVML_TIMEOUT: Duration = Duration::from_secs(5);

/// NVML's answers on this machine, gathered on a helper thread so a hung driver costs at most
/// [`NVML_TIMEOUT`].
pub fn live_nvml(source: &SourceArgs) -> NvmlView {
    let live = source.live_gpus();
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = Arc::clone(&live);
    let spawned = std::thread::Builder::new().name("gd-check-nvml".into()).spawn(move || {
        worker.prepare();
        let samples = worker.sample(0.0);
        let facts = worker.facts();
        let _ = tx.send((samples, facts));
    });
    let (samples, facts) = match spawned {
        Ok(_) => rx.recv_timeout(NVML_TIMEOUT).unwrap_or_default(),
        Err(_) => Default::default(),
    };
    NvmlView { status: live.status(), inventory: (*live.inventory()).clone(), samples, facts }
}

/// The live machine as the checks see it.
pub fn live_system(source: &SourceArgs, renderer: Option<String>) -> LiveSystem {
    let root = std::env::var_os(super::SYSTEM_ROOT_ENV).map_or_else(|| PathBuf::from("/"), PathBuf::from);
    let meta = collect::collect_meta(&root, Some(live_nvml(source)), renderer);
    LiveSystem::new(root, meta)
}

/// Runs `check`; returns the exit code.
pub fn run_check(args: &CheckArgs) -> u8 {
    let report = match &args.from {
        Some(dir) => match CapturedSystem::open(dir) {
            Ok(cap) => diagnose::run(&cap),
            Err(e) => {
                eprintln!("gpu-doctor: {e}");
                return exit::ERROR;
            }
        },
        None => diagnose::run(&live_system(&args.source, None)),
    };
    if args.json {
        match serde_json::to_string_pretty(&report) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("gpu-doctor: cannot encode JSON: {e}");
                return exit::ERROR;
            }
        }
    } else {
        print!("{}", diagnose::render_text(&report));
    }
    match report.worst() {
        Verdict::Fail => exit::CHECK_FAIL,
        Verdict::Warn => exit::CHECK_WARN,
        _ => exit::OK,
    }
}

/// Runs `capture`; returns the exit code.
pub fn run_capture(args: &CaptureArgs) -> u8 {
    let live = live_system(&args.source, None);
    // Running the checks records every file they read.
    let report = diagnose::run(&live);
    match write_capture(&live, &args.out) {
        Ok(n) => {
            println!(
                "Wrote a capture to {} ({n} files, {} checks). Send the whole directory; support staff run: gpu-doctor-cli check --from {}",
                args.out.display(),
                report.checks.len(),
                args.out.display()
            );
            println!(
                "It holds GPU-related environment variables, your user and group names, device-node modes, driver files from /proc and /sys, NVIDIA kernel-log lines and NVML's answers; look through it before sending."
            );
            exit::OK
        }
        Err(e) => {
            eprintln!("gpu-doctor: {e}");
            exit::ERROR
        }
    }
}

/// For tests: a view's report.
pub fn report_of(view: &dyn SystemView) -> diagnose::Report {
    diagnose::run(view)
}
