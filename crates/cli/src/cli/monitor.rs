//! `monitor`: live metrics on the terminal, a compact block per tick or one JSON object per line.

use crate::i18n::{Here as _, Shown as _, Word as _};
use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::exit;
use super::{CliError, MonitorArgs};
use crate::diagnose::bottleneck::{self, Bottleneck};
use crate::present;
use crate::telemetry::history::keys::GpuMetric;
use crate::telemetry::metric::GPU_METRICS;
use crate::telemetry::sample::{GpuHealth, GpuSample, HostSample, Inventory};
use crate::telemetry::sampler::Sampler;
use crate::telemetry::snapshot::{Snapshot, Stall};
use crate::telemetry::source::{ASLEEP_STATE, SourceStatus};
use crate::tr;
use crate::units;

/// One line of `monitor --json` (docs/monitor-stream.md).
#[derive(Serialize)]
struct Line<'a> {
    /// The stream's schema ([`crate::telemetry::remote::STREAM_SCHEMA`]).
    schema: u32,
    /// gpu-doctor's version.
    version: &'static str,
    time: String,
    t: f64,
    demo: bool,
    source: String,
    host: Option<&'a HostSample>,
    gpus: &'a [GpuSample],
    gpu_stall: Option<&'a Stall>,
    /// Bottleneck verdicts over the last `--window` seconds (empty until half of it is covered).
    verdicts: Vec<Bottleneck>,
}

/// A rate reading's text, or "n/a".
fn rate_or_na(r: Option<f64>) -> String {
    r.map_or_else(|| tr!("n/a").to_string(), units::rate)
}

/// The host's values, each after its label; a missing one reads "n/a", so columns keep their
/// meaning whatever is missing.
fn host_line(h: &HostSample) -> String {
    let mut o = format!("CPU {}", present::pct(&h.cpu_pct, crate::i18n::current()));
    if let Some(busiest) = h.per_core_pct.iter().copied().reduce(f64::max) {
        o.push_str(&tr!(" (busiest core {pct})", pct = units::percent(busiest)));
    }
    let _ = write!(o, "  iowait {}", present::pct(&h.iowait_pct, crate::i18n::current()));
    o.push_str(&tr!("  load {load}", load = h.load_avg.show_short(|l| format!("{:.2}", l[0]))));
    o.push_str(&tr!("  RAM {ram}", ram = present::ram(h, crate::i18n::current())));
    o.push_str(&tr!(
        "  disk read {read} write {write}",
        read = rate_or_na(h.disk_read_total()),
        write = rate_or_na(h.disk_write_total())
    ));
    o.push_str(&tr!("  net rx {rx} tx {tx}", rx = rate_or_na(h.net_rx_bps.get()), tx = rate_or_na(h.net_tx_bps.get())));
    o
}

/// One GPU's values, each after its label ("n/a" when missing): the metrics of the table that
/// have a short label, in its order, the PCIe link before the traffic on it, then the throttle
/// reasons.
fn gpu_line(g: &GpuSample, inv: &Inventory) -> String {
    if let GpuHealth::Lost(why) = &g.health {
        return tr!("GPU{gpu} LOST: {why}", gpu = g.index, why = why.here());
    }
    let info = inv.gpus.iter().find(|i| i.index == g.index);
    let mut o = format!("GPU{}", g.index);
    for d in GPU_METRICS {
        let Some(short) = d.short else { continue };
        if d.key == GpuMetric::PcieRx {
            let _ = write!(o, "  PCIe {}", present::pcie_link(g, info, crate::i18n::current()));
        }
        let _ = write!(o, "  {} {}", crate::i18n::tr(short), present::gpu_metric(d, g, info, crate::i18n::current()));
    }
    o.push_str("  ");
    o.push_str(&tr!("throttle: {throttle}", throttle = present::throttle_summary(g, crate::i18n::current())));
    o
}

/// Renders one tick as the text block `monitor` prints.
pub fn render_tick(s: &Snapshot, offset_secs: i64) -> String {
    let mut o = String::new();
    let time = present::wall_clock(s.started_unix, s.latest_t(), offset_secs);
    let tag = if s.is_demo() { format!("{} ", tr!("[DEMO]")) } else { String::new() };
    match &s.host {
        Some(h) => {
            let _ = writeln!(o, "{tag}{time}  {}  {}", tr!("host"), host_line(h));
        }
        None => {
            let _ = writeln!(o, "{tag}{time}  {}  {}", tr!("host"), tr!("(no data yet)"));
        }
    }
    if let Some(st) = &s.gpu_stall {
        let _ = writeln!(
            o,
            "{tag}{time}  GPU   {}",
            tr!(
                "NOT RESPONDING: {call} (for {secs} s); values below are the last ones read",
                call = st.call.here(),
                secs = format!("{:.0}", st.secs)
            )
        );
    }
    if let SourceStatus::Asleep { .. } = &s.source {
        let _ = writeln!(
            o,
            "{time}  GPU   {}",
            tr!("asleep ({state}): not read, so it stays asleep", state = crate::i18n::tr(ASLEEP_STATE))
        );
    }
    for g in &s.gpus {
        let _ = writeln!(o, "{tag}{time}  {}", gpu_line(g, &s.inventory));
    }
    o
}

/// Tells the user on stderr what the GPU source turned out to be, once it is known.
fn announce(status: &SourceStatus, json: bool) {
    match status {
        SourceStatus::Unavailable(no) => super::errln(&tr!(
            "No NVIDIA GPU data: {summary}\nNext step: {step}\nShowing host metrics only. Details: gpu-doctor-cli info",
            summary = no.summary_message().here(),
            step = no.shown_message(cfg!(windows)).1.here()
        )),
        SourceStatus::Asleep { functions } => super::errln(&tr!(
            "The NVIDIA GPU is asleep ({state}: {gpus}); it is left asleep and only its power state is read. To read it anyway (wakes it): --wake-sleeping-gpu",
            state = crate::i18n::tr(ASLEEP_STATE),
            gpus = functions.join(", ")
        )),
        SourceStatus::Demo { scenario, gpus, seed } if !json => {
            super::errln(&tr!(
                "DEMO: simulated data ({scenario}, {gpus} GPU(s), seed {seed}), not this machine.",
                scenario = scenario,
                gpus = gpus,
                seed = seed
            ));
        }
        _ => {}
    }
}

/// Waits for tick number `tick` (counted from `started`) and returns the latest snapshot with the
/// bottleneck verdicts over the last `window` seconds. Ticks are paced by the clock, not by the
/// sources, so a source that stops answering cannot hold the caller: it then gets the last data
/// there was.
pub(super) fn next_tick(
    sampler: &Sampler,
    started: Instant,
    interval: Duration,
    tick: u64,
    window: f64,
) -> (std::sync::Arc<Snapshot>, Vec<Bottleneck>) {
    let due = started + interval.mul_f64(tick as f64) + Duration::from_millis(30);
    std::thread::sleep(due.saturating_duration_since(Instant::now()));
    let snap = sampler.snapshot();
    let now = snap.latest_t();
    let verdicts = sampler.with_history(|h| bottleneck::evaluate(&snap, h, window, now));
    (snap, verdicts)
}

/// Runs `monitor`; returns the exit code.
pub fn run(args: &MonitorArgs) -> Result<ExitCode, CliError> {
    let (gpu, host) = args.source.options().open();
    let mut announced = gpu.status();
    announce(&announced, args.json.on());
    let interval = args.interval.get().duration();
    let sampler = Sampler::start(gpu, host, interval)
        .map_err(|e| CliError::runtime(tr!("cannot start the sampler threads: {error}", error = e)))?;
    let offset = present::local_offset_secs();
    let started = Instant::now();
    let mut stdout = std::io::stdout().lock();
    let mut tick: u64 = 0;
    let mut shown = Vec::new();
    while args.count.is_none_or(|n| tick < n) {
        tick += 1;
        let (snap, verdicts) = next_tick(&sampler, started, interval, tick, args.window);
        if std::mem::discriminant(&snap.source) != std::mem::discriminant(&announced) {
            announced = snap.source.clone();
            announce(&announced, args.json.on());
        }
        let text = if args.json.on() {
            let line = Line {
                schema: crate::telemetry::remote::STREAM_SCHEMA,
                version: env!("CARGO_PKG_VERSION"),
                time: present::wall_clock(snap.started_unix, snap.latest_t(), offset),
                t: snap.latest_t(),
                demo: snap.is_demo(),
                source: snap.source.label().en(),
                host: snap.host.as_ref(),
                gpus: &snap.gpus,
                gpu_stall: snap.gpu_stall.as_ref(),
                verdicts,
            };
            serde_json::to_string(&line)
                .map_err(|e| CliError::runtime(tr!("cannot encode JSON: {error}", error = e)))?
                + "\n"
        } else {
            let mut t = render_tick(&snap, offset);
            // Verdicts are printed when they change, not every tick.
            let keys: Vec<_> = verdicts.iter().map(Bottleneck::key).collect();
            if keys != shown {
                for v in &verdicts {
                    let _ = writeln!(
                        t,
                        "{}",
                        tr!(
                            "  Diagnosis: {verdict} {title} (confidence {pct} %)",
                            verdict = v.severity.word(),
                            title = v.title.here(),
                            pct = format!("{:.0}", 100.0 * v.confidence)
                        )
                    );
                    if let Some(step) = v.next_steps.first().filter(|_| v.severity >= crate::diagnose::Verdict::Warn) {
                        let _ = writeln!(t, "{}", tr!("    next: {step}", step = step.here()));
                    }
                }
                shown = keys;
            }
            t
        };
        match stdout
            .write_all(&crate::text::terminal_bytes(&text, crate::text::Stream::Out))
            .and_then(|()| stdout.flush())
        {
            Ok(()) => {}
            // The reader went away (e.g. `| head`): stop quietly.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => break,
            Err(e) => return Err(CliError::runtime(tr!("could not write the output: {error}", error = e))),
        }
    }
    let last = sampler.snapshot();
    if let Some(st) = &last.gpu_stall {
        // The sampler thread stuck in the driver is not joined: the process ends on time anyway.
        return Err(CliError::new(exit::NOT_RESPONDING, st.message().here()));
    }
    Ok(ExitCode::from(if matches!(last.source, SourceStatus::Unavailable(_)) { exit::NO_GPU } else { exit::OK }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::reading::Reading;

    #[test]
    fn every_value_keeps_its_label_when_missing() {
        let host = HostSample {
            cpu_pct: Reading::na("x"),
            per_core_pct: Vec::new(),
            iowait_pct: Reading::na("x"),
            load_avg: Reading::na("x"),
            memory: Reading::na("x"),
            disks: Reading::na("x"),
            pressure: Reading::na("x"),
            net_rx_bps: Reading::na("x"),
            net_tx_bps: Reading::na("x"),
        };
        let line = host_line(&host);
        for label in ["CPU n/a", "iowait n/a", "load n/a", "RAM n/a", "disk read n/a write n/a", "net rx n/a tx n/a"] {
            assert!(line.contains(label), "{label}: {line}");
        }
        let gpu = GpuSample::unavailable(0, GpuHealth::Ok, "not supported");
        let line = gpu_line(&gpu, &Inventory::default());
        for label in [
            "util n/a",
            "mem-bw n/a",
            "VRAM n/a",
            "temp n/a",
            "power n/a",
            "SM n/a",
            "PCIe n/a",
            "rx n/a",
            "throttle: n/a",
        ] {
            assert!(line.contains(label), "{label}: {line}");
        }
    }
}
