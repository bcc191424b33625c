//! `compare A.json B.json`: two measured runs (`run --json-out`) side by side, with the change
//! from A to B of each figure a person needs for "one change at a time": time, GPU utilization and
//! memory, CPU, memory, I/O and the verdicts; and what changed in the command line, so a
//! comparison of two changes at once is called out.

use serde::Serialize;

use super::run::{Ended, RunSummary};
use crate::i18n::Message;
use crate::{msg, units};

/// One compared figure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// What it is.
    pub label: Message,
    /// A's value, as shown.
    pub a: Message,
    /// B's value, as shown.
    pub b: Message,
    /// B − A, as shown with its sign and percentage ("" when not a number).
    pub delta: String,
    /// Lower is better for this figure (time, memory); None when neither.
    pub lower_is_better: Option<bool>,
    /// B − A relative to A, % (None when A is 0 or not a number).
    pub change_pct: Option<f64>,
}

/// The comparison.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// The arguments that differ between the two command lines: (position, A's, B's).
    pub changed_args: Vec<(usize, String, String)>,
    /// The rows.
    pub rows: Vec<Row>,
}

fn num_row(label: Message, a: Option<f64>, b: Option<f64>, show: &dyn Fn(f64) -> String, lower: Option<bool>) -> Row {
    let fmt = |v: Option<f64>| v.map_or_else(|| "-".to_string(), show);
    let (delta, change_pct) = match (a, b) {
        (Some(a), Some(b)) => {
            let d = b - a;
            let pct = (a.abs() > f64::EPSILON).then(|| 100.0 * d / a);
            let sign = if d >= 0.0 { "+" } else { "-" };
            let text = match pct {
                Some(p) => format!("{sign}{} ({p:+.0} %)", show(d.abs())),
                None => format!("{sign}{}", show(d.abs())),
            };
            (text, pct)
        }
        _ => (String::new(), None),
    };
    Row { label, a: Message::data(fmt(a)), b: Message::data(fmt(b)), delta, lower_is_better: lower, change_pct }
}

fn ended(e: &Ended) -> Message {
    match e {
        Ended::Exited { code } => msg!("exit {code}", code = *code),
        Ended::Signal { signal } => msg!("signal {signal}", signal = *signal),
        Ended::NotStarted { .. } => msg!("not started"),
    }
}

/// Compares `a` with `b`.
pub fn compare(a: &RunSummary, b: &RunSummary) -> Comparison {
    let (wa, wb): (Vec<&str>, Vec<&str>) = (a.command.split(' ').collect(), b.command.split(' ').collect());
    let changed_args = (0..wa.len().max(wb.len()))
        .filter_map(|i| {
            let (x, y) = (wa.get(i).copied().unwrap_or(""), wb.get(i).copied().unwrap_or(""));
            (x != y).then(|| (i, x.to_string(), y.to_string()))
        })
        .collect();
    let secs = |v: f64| format!("{v:.1} s");
    let pct = |v: f64| format!("{v:.0} %");
    let bytes = |v: f64| units::bytes(v as u64);
    let mut rows = vec![
        Row {
            label: msg!("ended"),
            a: ended(&a.ended),
            b: ended(&b.ended),
            delta: String::new(),
            lower_is_better: None,
            change_pct: None,
        },
        num_row(msg!("wall time"), Some(a.secs), Some(b.secs), &secs, Some(true)),
        num_row(
            msg!("its own GPU memory, peak"),
            a.vram_peak_process.map(|v| v as f64),
            b.vram_peak_process.map(|v| v as f64),
            &bytes,
            Some(true),
        ),
    ];
    // The rate each printed (run --rate-pattern): what a throughput change is measured by, not
    // the wall time of runs that may do different amounts of work.
    if a.throughput.is_some() || b.throughput.is_some() {
        let rate = |s: &RunSummary| s.throughput.as_ref().map(|t| t.value);
        rows.insert(2, num_row(msg!("throughput"), rate(a), rate(b), &crate::jobs::tune::render::rate, Some(false)));
    }
    // GPUs as a machine has them (at most 64, as replay reads): a summary listing more (a file
    // made by hand) costs no more than that.
    let gpus: std::collections::BTreeSet<u32> = a
        .gpus
        .iter()
        .chain(&b.gpus)
        .map(|g| g.gpu)
        .filter(|i| (*i as usize) < crate::telemetry::sample::MAX_GPUS)
        .collect();
    for i in gpus {
        let (ga, gb) = (a.gpus.iter().find(|g| g.gpu == i), b.gpus.iter().find(|g| g.gpu == i));
        rows.push(num_row(
            msg!("GPU {gpu} utilization, mean", gpu = i),
            ga.map(|g| g.util_mean),
            gb.map(|g| g.util_mean),
            &pct,
            Some(false),
        ));
        rows.push(num_row(
            msg!("GPU {gpu} memory bandwidth, mean", gpu = i),
            ga.and_then(|g| g.membw_mean),
            gb.and_then(|g| g.membw_mean),
            &pct,
            None,
        ));
        rows.push(num_row(
            msg!("GPU {gpu} memory in use, peak (whole device)", gpu = i),
            ga.map(|g| g.vram_peak_device as f64),
            gb.map(|g| g.vram_peak_device as f64),
            &bytes,
            Some(true),
        ));
    }
    rows.push(num_row(msg!("CPU, mean (% of a core)"), Some(a.cpu_mean_pct), Some(b.cpu_mean_pct), &pct, None));
    rows.push(num_row(
        msg!("memory (RSS), peak"),
        Some(a.rss_peak as f64),
        Some(b.rss_peak as f64),
        &bytes,
        Some(true),
    ));
    rows.push(num_row(msg!("read"), Some(a.read_bytes as f64), Some(b.read_bytes as f64), &bytes, None));
    rows.push(num_row(msg!("written"), Some(a.write_bytes as f64), Some(b.write_bytes as f64), &bytes, None));
    let titles = |s: &RunSummary| {
        let t: Vec<Message> = s.verdicts.iter().map(|v| v.title.clone()).collect();
        if t.is_empty() { Message::data("-") } else { Message::join(t, &Message::data("; ")) }
    };
    rows.push(Row {
        label: msg!("diagnosis"),
        a: titles(a),
        b: titles(b),
        delta: String::new(),
        lower_is_better: None,
        change_pct: None,
    });
    Comparison { changed_args, rows }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::run::GpuRun;

    fn summary(gpus: u32) -> RunSummary {
        let v = serde_json::json!({"command": "python train.py --bs 8", "ended": {"kind": "exited", "code": 0},
            "secs": 10.0, "vram_peak_process": null, "gpus": [], "cpu_mean_pct": 100.0, "cpu_peak_pct": 100.0,
            "threads_peak": 4, "rss_peak": 0, "read_bytes": 0, "write_bytes": 0, "verdicts": [],
            "vram_plan": null, "demo": false});
        let mut s: RunSummary = serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"));
        s.gpus = (0..gpus)
            .map(|gpu| GpuRun {
                gpu,
                util_mean: 50.0,
                util_peak: 90.0,
                vram_peak_device: 1 << 30,
                vram_total: Some(24 << 30),
                membw_mean: None,
            })
            .collect();
        s
    }

    /// Issue 53, item 13: a summary listing 100,000 GPUs (made by hand) is compared over the GPUs
    /// a machine can have, as replay reads them, not one row per listed GPU.
    #[test]
    fn a_summary_with_absurdly_many_gpus_is_compared_over_64() {
        let c = compare(&summary(100_000), &summary(3));
        let gpu_rows = c.rows.iter().filter(|r| r.label.key.starts_with("GPU {gpu}")).count();
        assert_eq!(gpu_rows, 64 * 3);
        let normal = compare(&summary(2), &summary(2));
        assert_eq!(normal.rows.iter().filter(|r| r.label.key.starts_with("GPU {gpu}")).count(), 6);
    }
}
