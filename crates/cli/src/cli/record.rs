//! `record` (write the sampled metrics to a recording file) and `replay` (read one back as text,
//! JSON lines or CSV).

use crate::i18n::Here as _;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;

use super::{CliError, SourceArgs, exit};
use crate::telemetry::recording::{Header, Record, RecordStream, Recorder, csv_header, csv_row};
use crate::telemetry::sampler::Sampler;
use crate::tr;

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
    /// `--interval` (one definition for every command: [`super::options`]).
    #[command(flatten)]
    pub interval: super::options::IntervalArg<super::options::Sampling>,
    /// Data source options.
    #[command(flatten)]
    pub source: SourceArgs,
}

/// Arguments of `replay`.
#[derive(Debug, Clone, Args)]
pub struct ReplayArgs {
    /// A recording written by `record` or the app.
    pub file: PathBuf,
    /// `--json` (one definition for every command: [`super::options::JsonArg`]).
    #[command(flatten)]
    pub json: super::options::JsonArg<super::options::Lines>,
    /// Print CSV for spreadsheets (one row per sample, one column per metric).
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
}

/// Runs `record`; returns the exit code.
pub fn run_record(a: &RecordArgs) -> Result<ExitCode, CliError> {
    if a.out.exists() {
        return Err(CliError::runtime(tr!(
            "{path} already exists; choose a new file name (recordings never overwrite files)",
            path = a.out.display()
        )));
    }
    let (gpu, host) = a.source.options().open();
    let interval = a.interval.get().duration();
    let sampler = Sampler::start(gpu, host, interval)
        .map_err(|e| CliError::runtime(tr!("could not start sampling: {error}", error = e)))?;
    // Let the first GPU sample arrive (NVML opens lazily), so the header names the GPUs.
    let t0 = Instant::now();
    while sampler.snapshot().gpu_t.is_none() && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut rec = Recorder::create(&a.out, &sampler.snapshot()).map_err(|e| CliError::runtime(e.here()))?;
    super::errln(&format!(
        "gpu-doctor: {}",
        tr!(
            "recording to {path} every {secs} s{until}; the file is readable at any time (gpu-doctor-cli replay {arg})",
            path = a.out.display(),
            secs = a.interval.get(),
            until = a
                .duration
                .map(|d| tr!(" for {secs} s", secs = d))
                .unwrap_or_else(|| tr!(", stop with Ctrl-C").to_string()),
            arg = super::shell_word(&a.out)
        )
    ));
    let start = Instant::now();
    let mut seq = 0;
    loop {
        if a.duration.is_some_and(|d| start.elapsed().as_secs_f64() >= d) {
            break;
        }
        let snap = sampler.snapshot();
        if snap.seq != seq {
            seq = snap.seq;
            rec.append(&snap).map_err(|e| CliError::runtime(e.here()))?;
        }
        std::thread::sleep((interval / 4).min(Duration::from_millis(100)));
    }
    let _ = rec.sync();
    super::errln(&format!(
        "gpu-doctor: {}",
        tr!("wrote {n} samples to {path}", n = rec.lines.saturating_sub(1), path = a.out.display())
    ));
    Ok(ExitCode::from(exit::OK))
}

/// Runs `replay`; returns the exit code. The file is streamed (twice for text and CSV: once for
/// the summary and the GPU columns, once for the rows), so memory stays flat for any size.
pub fn run_replay(a: &ReplayArgs) -> Result<ExitCode, CliError> {
    let open = || RecordStream::open(&a.file).map_err(|e| CliError::runtime(e.here()));
    let mut out = Out::new();
    let skipped;
    if a.json.on() {
        let mut stream = open()?;
        let header = serde_json::to_string(&stream.header).map_err(|e| CliError::runtime(e.to_string()))?;
        if out.put(&header)? && out.put("\n")? {
            for r in stream.by_ref() {
                let line = serde_json::to_string(&r.map_err(|e| CliError::runtime(e.here()))?)
                    .map_err(|e| CliError::runtime(e.to_string()))?;
                if !(out.put(&line)? && out.put("\n")?) {
                    break;
                }
            }
        }
        skipped = stream.skipped_lines;
    } else {
        // Pass 1: what the first lines (text) or the columns (CSV) need.
        let mut first = open()?;
        let (mut n, mut t0, mut t1, mut inventory, mut gpus) = (0usize, None, 0.0, None, Vec::new());
        for r in first.by_ref() {
            let r = r.map_err(|e| CliError::runtime(e.here()))?;
            n += 1;
            t0.get_or_insert(r.t);
            t1 = r.t;
            if let Some(inv) = r.inventory {
                inventory = Some(inv);
            }
            for g in &r.gpus {
                crate::telemetry::recording::note_gpu(&mut gpus, g.index);
            }
        }
        let mut second = open()?;
        let head = if a.csv {
            csv_header(&gpus)
        } else {
            let mut inv = inventory.unwrap_or_else(|| second.header.inventory.clone());
            inv.gpus.truncate(crate::telemetry::sample::MAX_GPUS);
            text_head(&second.header, n, t1 - t0.unwrap_or(t1), &inv)
        };
        let offset = crate::present::local_offset_secs();
        if out.put(&head)? {
            let header = second.header.clone();
            for r in second.by_ref() {
                let mut r = r.map_err(|e| CliError::runtime(e.here()))?;
                // Only the first MAX_GPUS GPUs the file names (its columns, its text).
                r.gpus.retain(|g| gpus.binary_search(&g.index).is_ok());
                let row = if a.csv { csv_row(&header, &gpus, &r) } else { text_row(&header, &r, offset) };
                if !out.put(&row)? {
                    break;
                }
            }
        }
        skipped = second.skipped_lines;
    }
    out.finish()?;
    if skipped > 0 {
        super::errln(&format!(
            "gpu-doctor: {}",
            tr!(
                "skipped {skipped} unreadable line(s) (a recording cut off by a crash ends with one)",
                skipped = skipped
            )
        ));
    }
    Ok(ExitCode::from(exit::OK))
}

/// Buffered stdout for long outputs: `put` says whether to go on (false once the reader went
/// away, e.g. `| head`); other write errors are one line and exit 1.
struct Out {
    w: std::io::BufWriter<std::io::StdoutLock<'static>>,
    closed: bool,
}

impl Out {
    fn new() -> Self {
        Out { w: std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock()), closed: false }
    }

    fn check(&mut self, r: std::io::Result<()>) -> Result<bool, CliError> {
        match r {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(false)
            }
            Err(e) => Err(CliError::runtime(tr!("could not write the output: {error}", error = e))),
        }
    }

    fn put(&mut self, s: &str) -> Result<bool, CliError> {
        if self.closed {
            return Ok(false);
        }
        let r = self.w.write_all(&crate::text::terminal_bytes(s, crate::text::Stream::Out));
        self.check(r)
    }

    fn finish(&mut self) -> Result<(), CliError> {
        if self.closed {
            return Ok(());
        }
        let r = self.w.flush();
        self.check(r).map(|_| ())
    }
}

/// The first lines of `replay`'s text: who recorded, when, what.
fn text_head(h: &Header, samples: usize, span: f64, inv: &crate::telemetry::sample::Inventory) -> String {
    let start = chrono::DateTime::from_timestamp_millis((h.started_unix * 1000.0) as i64)
        .map(|d| d.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M:%S %:z").to_string())
        .unwrap_or_default();
    let mut s = tr!(
        "Recording by gpu-doctor {app} (format version {format}), started {start}, every {secs} s\nSource: {source}\nSamples: {samples} over {span} s\n",
        app = h.app_version,
        format = h.version,
        start = start,
        secs = h.interval_secs,
        source = h.source.label().here(),
        samples = samples,
        span = format!("{span:.0}"),
    );
    for g in &inv.gpus {
        s.push_str(&format!("GPU {}: {}\n", g.index, g.name));
    }
    s.push('\n');
    s
}

/// One sample as a line of `replay`'s text.
fn text_row(h: &Header, r: &Record, offset: i64) -> String {
    let mut s = crate::present::wall_clock(h.started_unix, r.t, offset);
    if let Some(host) = &r.host {
        s.push_str(&format!("  CPU {}", crate::present::pct(&host.cpu_pct, crate::i18n::current())));
    }
    for g in &r.gpus {
        s.push_str(&format!(
            "  | GPU {} {} {} {}",
            g.index,
            crate::present::pct(&g.util_gpu_pct, crate::i18n::current()),
            crate::present::vram(g, crate::i18n::current()),
            crate::present::power(g, crate::i18n::current())
        ));
    }
    s.push('\n');
    s
}
