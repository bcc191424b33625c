//! `record` (write the sampled metrics to a recording file) and `replay` (read one back as text,
//! JSON lines or CSV).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;

use super::{CliError, SourceArgs, exit, parse_interval};
use crate::telemetry::recording::{Recorder, Recording, to_csv};
use crate::telemetry::sampler::Sampler;

/// Arguments of `record`.
#[derive(Debug, Clone, Args)]
pub struct RecordArgs {
    /// The new recording file (an existing file is never overwritten).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Stop after this many seconds (default: until interrupted; the file stays readable when the
    /// program is killed).
    #[arg(long, value_name = "SECS", value_parser = super::parse_duration_secs)]
    pub duration: Option<f64>,
    /// Seconds between samples (0.25-10).
    #[arg(long, default_value_t = 1.0, value_parser = parse_interval, value_name = "SECS")]
    pub interval: f64,
    /// Data source options.
    #[command(flatten)]
    pub source: SourceArgs,
}

/// Arguments of `replay`.
#[derive(Debug, Clone, Args)]
pub struct ReplayArgs {
    /// A recording written by `record` or the app.
    pub file: PathBuf,
    /// Print the header and every sample as JSON lines.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV for spreadsheets (one row per sample, one column per metric).
    #[arg(long)]
    pub csv: bool,
}

/// Runs `record`; returns the exit code.
pub fn run_record(a: &RecordArgs) -> Result<ExitCode, CliError> {
    if a.out.exists() {
        return Err(CliError::runtime(format!(
            "{} already exists; choose a new file name (recordings never overwrite files)",
            a.out.display()
        )));
    }
    let (gpu, host) = a.source.options().open();
    let interval = Duration::from_secs_f64(a.interval);
    let sampler =
        Sampler::start(gpu, host, interval).map_err(|e| CliError::runtime(format!("could not start sampling: {e}")))?;
    // Let the first GPU sample arrive (NVML opens lazily), so the header names the GPUs.
    let t0 = Instant::now();
    while sampler.snapshot().gpu_t.is_none() && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut rec = Recorder::create(&a.out, &sampler.snapshot()).map_err(CliError::runtime)?;
    eprintln!(
        "gpu-doctor: recording to {} every {} s{}; the file is readable at any time (gpu-doctor-cli replay {})",
        a.out.display(),
        a.interval,
        a.duration.map(|d| format!(" for {d} s")).unwrap_or_else(|| ", stop with Ctrl-C".to_string()),
        super::shell_word(&a.out)
    );
    let start = Instant::now();
    let mut seq = 0;
    loop {
        if a.duration.is_some_and(|d| start.elapsed().as_secs_f64() >= d) {
            break;
        }
        let snap = sampler.snapshot();
        if snap.seq != seq {
            seq = snap.seq;
            rec.append(&snap).map_err(CliError::runtime)?;
        }
        std::thread::sleep((interval / 4).min(Duration::from_millis(100)));
    }
    let _ = rec.sync();
    eprintln!("gpu-doctor: wrote {} samples to {}", rec.lines.saturating_sub(1), a.out.display());
    Ok(ExitCode::from(exit::OK))
}

/// Runs `replay`; returns the exit code.
pub fn run_replay(a: &ReplayArgs) -> Result<ExitCode, CliError> {
    let rec = Recording::open(&a.file).map_err(CliError::runtime)?;
    if rec.skipped_lines > 0 {
        eprintln!(
            "gpu-doctor: skipped {} unreadable line(s) (a recording cut off by a crash ends with one)",
            rec.skipped_lines
        );
    }
    let mut out = std::io::stdout().lock();
    let written = if a.csv {
        out.write_all(to_csv(&rec).as_bytes())
    } else if a.json {
        (|| {
            writeln!(out, "{}", serde_json::to_string(&rec.header).map_err(std::io::Error::other)?)?;
            for r in &rec.records {
                writeln!(out, "{}", serde_json::to_string(r).map_err(std::io::Error::other)?)?;
            }
            Ok(())
        })()
    } else {
        out.write_all(text(&rec).as_bytes())
    };
    match written.and_then(|_| out.flush()) {
        Ok(()) => Ok(ExitCode::from(exit::OK)),
        // The reader went away (e.g. `| head`): nothing more to say.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::from(exit::OK)),
        Err(e) => Err(CliError::runtime(format!("could not write the output: {e}"))),
    }
}

fn text(rec: &Recording) -> String {
    let h = &rec.header;
    let start = chrono::DateTime::from_timestamp_millis((h.started_unix * 1000.0) as i64)
        .map(|d| d.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M:%S %:z").to_string())
        .unwrap_or_default();
    let mut s = format!(
        "Recording by gpu-doctor {} (format version {}), started {start}, every {} s\nSource: {}\nSamples: {} over {:.0} s\n",
        h.app_version,
        h.version,
        h.interval_secs,
        h.source.label(),
        rec.records.len(),
        rec.span_secs()
    );
    for g in &rec.final_inventory().gpus {
        s.push_str(&format!("GPU {}: {}\n", g.index, g.name));
    }
    s.push('\n');
    let offset = crate::present::local_offset_secs();
    for r in &rec.records {
        s.push_str(&crate::present::wall_clock(h.started_unix, r.t, offset));
        if let Some(host) = &r.host {
            s.push_str(&format!("  CPU {}", crate::present::pct(&host.cpu_pct)));
        }
        for g in &r.gpus {
            s.push_str(&format!(
                "  | GPU {} {} {} {}",
                g.index,
                crate::present::pct(&g.util_gpu_pct),
                crate::present::vram(g),
                crate::present::power(g)
            ));
        }
        s.push('\n');
    }
    s
}
