//! `serve`: a Prometheus exporter. The sampler reads the GPUs and the host; once per tick the
//! latest snapshot, the bottleneck verdicts, the last checklist (re-run every `--checks-every`
//! seconds on its own thread) and the last smoke test (with `--smoke-every`) become one
//! exposition text, swapped in atomically; the HTTP server ([`crate::export::http`]) hands out
//! whichever text is current, so a scrape never waits for the sampler, a check or the driver.

use std::net::{SocketAddr, TcpListener};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use arc_swap::{ArcSwap, ArcSwapOption};
use clap::Args;

use super::{CliError, SourceArgs, exit};
use crate::diagnose::Report;
use crate::diagnose::input::CheckSource;
use crate::export::http::{self, Limits, Page};
use crate::export::prom::{self, Exposition};
use crate::smoke::SmokeReport;
use crate::telemetry::sampler::Sampler;
use crate::tr;

/// The port `serve` listens on by default.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9835";

/// Arguments of `serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address and port to listen on. Only loopback addresses unless --allow-remote.
    #[arg(long, default_value = DEFAULT_LISTEN, value_name = "ADDR:PORT")]
    pub listen: SocketAddr,
    /// Allow listening on an address other networks can reach (for example 0.0.0.0:9835). The
    /// metrics then tell anyone who can connect the GPU models, driver, host name and checklist.
    #[arg(long)]
    pub allow_remote: bool,
    /// Also export each GPU process's pid, name and VRAM (never its command line or environment).
    #[arg(long)]
    pub expose_processes: bool,
    /// `--interval` (one definition for every command: [`super::options`]).
    #[command(flatten)]
    pub interval: super::options::IntervalArg<super::options::Sampling>,
    /// Seconds of history the bottleneck verdicts judge (10-3600).
    #[arg(long, default_value_t = 60.0, value_name = "SECS", value_parser = super::parse_window)]
    pub window: f64,
    /// Run the checklist every SECS seconds (30-86400; not in demo mode).
    #[arg(long, default_value_t = 300, value_name = "SECS", value_parser = clap::value_parser!(u64).range(30..=86400))]
    pub checks_every: u64,
    /// Run the CUDA smoke test every SECS seconds (300-604800) and export its result; off by
    /// default (it briefly uses the GPU).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(300..=604_800))]
    pub smoke_every: Option<u64>,
    /// Connections served at once (1-64); more are answered 503.
    #[arg(long, default_value_t = 8, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub max_connections: u16,
    /// Data source options.
    #[command(flatten)]
    pub source: SourceArgs,
}

fn unix_now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// Runs `serve` until the process is stopped.
pub fn run(args: &ServeArgs) -> Result<ExitCode, CliError> {
    if !args.listen.ip().is_loopback() && !args.allow_remote {
        return Err(CliError::new(
            exit::BAD_ARGS,
            tr!(
                "{addr} can be reached from other machines; the metrics name the GPUs, the driver, the host and the checklist's findings. Add --allow-remote to serve them there, or listen on 127.0.0.1.",
                addr = args.listen
            ),
        ));
    }
    let listener = TcpListener::bind(args.listen).map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::AddrInUse {
            tr!(" (another exporter or an earlier gpu-doctor-cli serve uses it: choose another port with --listen)")
                .to_string()
        } else {
            String::new()
        };
        CliError::runtime(tr!("cannot listen on {addr}: {error}{hint}", addr = args.listen, error = e, hint = hint))
    })?;
    let (gpu, host) = args.source.options().open();
    let interval = args.interval.get().duration();
    let sampler = Sampler::start(gpu, host, interval)
        .map_err(|e| CliError::runtime(tr!("cannot start the sampler threads: {error}", error = e)))?;
    let page = Arc::new(ArcSwap::from_pointee(Page { body: "# EOF\n".into(), content_type: prom::CONTENT_TYPE }));
    let server =
        http::Server::start(listener, Arc::clone(&page), Limits { connections: usize::from(args.max_connections) })
            .map_err(|e| CliError::runtime(tr!("cannot start the HTTP server: {error}", error = e)))?;
    let hostname = prom::hostname();
    let demo = args.source.demo.is_some();

    let checks: Arc<ArcSwapOption<(Report, f64)>> = Arc::new(ArcSwapOption::empty());
    if !demo {
        let (slot, options, every) =
            (Arc::clone(&checks), args.source.options(), Duration::from_secs(args.checks_every));
        std::thread::Builder::new()
            .name("gd-serve-checks".into())
            .spawn(move || {
                loop {
                    if let Ok(report) = CheckSource::Live(options.clone()).run(None) {
                        slot.store(Some(Arc::new((report, unix_now()))));
                    }
                    std::thread::sleep(every);
                }
            })
            .map_err(|e| CliError::runtime(tr!("cannot start the sampler threads: {error}", error = e)))?;
    }
    let smoke: Arc<ArcSwapOption<(SmokeReport, f64)>> = Arc::new(ArcSwapOption::empty());
    if let Some(every) = args.smoke_every.filter(|_| !demo) {
        let slot = Arc::clone(&smoke);
        let nvml_lib = args.source.nvml.lib.nvml_lib.clone();
        std::thread::Builder::new()
            .name("gd-serve-smoke".into())
            .spawn(move || {
                loop {
                    let opts = crate::smoke::Options {
                        device: 0,
                        burn_secs: 0,
                        cuda_lib: None,
                        nvml_lib: nvml_lib.clone(),
                        units: crate::units::ByteUnits::Binary,
                    };
                    let report = crate::smoke::runner::run(
                        &crate::smoke::runner::Launcher::this_program(),
                        &opts,
                        Duration::from_secs(30),
                        &AtomicBool::new(false),
                        &mut |_, _| {},
                    );
                    slot.store(Some(Arc::new((report, unix_now()))));
                    std::thread::sleep(Duration::from_secs(every));
                }
            })
            .map_err(|e| CliError::runtime(tr!("cannot start the sampler threads: {error}", error = e)))?;
    }

    super::errln(&tr!(
        "Serving metrics on http://{addr}/metrics (stop with Ctrl+C). Checklist every {secs} s.",
        addr = server.addr(),
        secs = args.checks_every
    ));
    if demo {
        super::errln(tr!(
            "DEMO: the metrics are simulated (gpu_doctor_gpu_source_up says source=\"demo\"); no checklist is run."
        ));
    }
    let started = Instant::now();
    let mut tick: u64 = 0;
    loop {
        tick += 1;
        let (snap, verdicts) = super::monitor::next_tick(&sampler, started, interval, tick, args.window);
        let mut e = Exposition::new();
        e.add_exporter(&hostname, Some(&snap));
        e.add_snapshot(&snap, &hostname, args.expose_processes);
        e.add_verdicts(&verdicts, &hostname);
        if let Some(c) = checks.load_full() {
            e.add_checks(&c.0, c.1, &hostname);
        }
        if let Some(s) = smoke.load_full() {
            e.add_smoke(&s.0, s.1, &hostname);
        }
        page.store(Arc::new(Page { body: e.render(), content_type: prom::CONTENT_TYPE }));
    }
}
