//! The jobs' results as text (`run`, `focus`, `tune`, `tune compare`): what the command line
//! prints and the app shows in a monospaced block, in the language passed.

use crate::diagnose::Verdict;
use crate::i18n::{Lang, Message};
use crate::jobs::GpuAccess;
use crate::jobs::compare::Comparison;
use crate::jobs::focus::{Focus, Triage, state_counts};
use crate::jobs::run::{Ended, RunSummary};
use crate::jobs::tune::render::{phase_label, rate};
use crate::jobs::tune::spec::TuneSpec;
use crate::jobs::tune::{Outcome, Trial};
use crate::telemetry::proctree;
use crate::{msg, units};

/// What `focus` found, as text in `lang`.
pub fn focus(f: &Focus, lang: Lang) -> String {
    let mut s = String::new();
    if f.demo.is_some() {
        s.push_str(
            &msg!("DEMO DATA: the GPU figures are simulated; the process figures are this machine's.").render(lang),
        );
        s.push('\n');
    }
    s.push_str(&format!("PID {}{}\n", f.pid, f.name.as_ref().map(|n| format!(" ({n})")).unwrap_or_default()));
    if f.triage != Triage::Gone {
        let state = Message::new(f.states.chars().last().map_or("unknown", proctree::state_words_key));
        let line = msg!("state: {state}; {counts}", state = state, counts = state_counts(&f.states)).render(lang);
        s.push_str(&format!("  {line}\n"));
        let line = msg!(
            "{processes} process(es), {threads} threads; CPU {cpu} % of a core; memory {memory}; reads {reads}, writes {writes}",
            processes = f.processes,
            threads = f.threads,
            cpu = format!("{:.0}", f.cpu_pct),
            memory = units::bytes(f.rss_bytes),
            reads = units::rate(f.read_bps),
            writes = units::rate(f.write_bps)
        )
        .render(lang);
        s.push_str(&format!("  {line}\n"));
        let line = match (f.gpu_memory, f.gpu_util) {
            (Some(m), Some(u)) => {
                msg!("GPU memory {memory}; its GPUs {util} % busy", memory = units::bytes(m), util = format!("{u:.0}"))
            }
            (Some(m), None) => msg!("GPU memory {memory} (not on a GPU right now)", memory = units::bytes(m)),
            (None, _) => msg!("GPU: {why}", why = Message::new(f.gpu_access.missing())),
        }
        .render(lang);
        s.push_str(&format!("  {line}\n"));
        if let Some((age, grew)) = f.log {
            let age = units::duration_words(age);
            let line = if grew {
                msg!("log last changed {age} ago; it grew while watched", age = age)
            } else {
                msg!("log last changed {age} ago; it did not grow while watched", age = age)
            }
            .render(lang);
            s.push_str(&format!("  {line}\n"));
        }
    }
    s.push_str(&format!(
        "{}\n{}\n",
        msg!("Verdict: {summary}.", summary = f.summary).render(lang),
        msg!("Next step: {next}", next = f.next_step).render(lang)
    ));
    if let Some(n) = &f.memory_note {
        s.push_str(&format!("{}\n", msg!("Memory: {note}", note = n).render(lang)));
    }
    s
}

/// Two runs compared (`tune compare`), as text in `lang`.
pub fn comparison(c: &Comparison, a_name: &str, b_name: &str, lang: Lang) -> String {
    let mut out = String::new();
    match c.changed_args.len() {
        0 => out.push_str(&msg!("Both runs ran the same command line.").render(lang)),
        1 => {
            let (_, x, y) = &c.changed_args[0];
            out.push_str(&msg!("One change: {a} → {b}", a = x.clone(), b = y.clone()).render(lang));
        }
        n => {
            out.push_str(
                &msg!(
                    "{n} arguments changed: a difference below cannot be pinned to one change (change one thing at a time)",
                    n = n
                )
                .render(lang),
            );
            // Which ones, each as the one change line says it.
            for (_, x, y) in &c.changed_args {
                out.push_str("\n  ");
                out.push_str(&crate::text::one_line(&format!("{x} → {y}")));
            }
        }
    }
    out.push('\n');
    let mut rows: Vec<[String; 4]> =
        vec![[String::new(), a_name.to_string(), b_name.to_string(), msg!("change").render(lang)]];
    for r in &c.rows {
        let verdict = match (r.lower_is_better, r.change_pct) {
            (Some(lower), Some(p)) if p.abs() >= 1.0 => {
                if (p < 0.0) == lower { msg!("better") } else { msg!("worse") }.render(lang)
            }
            _ => String::new(),
        };
        let delta = if verdict.is_empty() { r.delta.clone() } else { format!("{}  {verdict}", r.delta) };
        rows.push([r.label.render(lang), r.a.render(lang), r.b.render(lang), delta]);
    }
    let widths: Vec<usize> =
        (0..3).map(|c| rows.iter().map(|r| crate::i18n::columns(&r[c])).max().unwrap_or(0)).collect();
    for r in &rows {
        let line = format!(
            "{}  {}  {}  {}",
            crate::i18n::pad(&r[0], widths[0]),
            crate::i18n::pad(&r[1], widths[1]),
            crate::i18n::pad(&r[2], widths[2]),
            r[3]
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// What `run` measured, as text in `lang`.
pub fn run_summary(s: &RunSummary, lang: Lang) -> String {
    let mut o = String::from("\n");
    let secs = format!("{:.1}", s.secs);
    let first = match &s.ended {
        Ended::Exited { code } => msg!(
            "gpu-doctor: `{command}` exited with code {code} after {secs} s",
            command = s.command,
            code = code,
            secs = secs
        )
        .render(lang),
        Ended::Signal { signal } => msg!(
            "gpu-doctor: `{command}` was killed by signal {signal} after {secs} s",
            command = s.command,
            signal = signal,
            secs = secs
        )
        .render(lang),
        Ended::NotStarted { error } => {
            return format!(
                "{}\n",
                msg!("gpu-doctor: could not start the command: {error}", error = error).render(lang)
            );
        }
    };
    o.push_str(&format!("{first}\n"));
    if let Some(t) = &s.throughput {
        o.push_str(&format!(
            "  {}\n",
            msg!("throughput: {rate} (the last match of {pattern})", rate = rate(t.value), pattern = t.pattern.clone())
                .render(lang)
        ));
    }
    if s.demo {
        o.push_str(&format!("  {}\n", msg!("(GPU figures are DEMO data: simulated, not this machine)").render(lang)));
    }
    for g in &s.gpus {
        let (mean, peak, vram) =
            (format!("{:.0}", g.util_mean), format!("{:.0}", g.util_peak), units::bytes(g.vram_peak_device));
        let line = match g.vram_total {
            Some(t) => msg!(
                "GPU {gpu}: utilization mean {mean} %, peak {peak} %; VRAM peak {vram} of {total} (whole device)",
                gpu = g.gpu,
                mean = mean,
                peak = peak,
                vram = vram,
                total = units::bytes(t)
            )
            .render(lang),
            None => msg!(
                "GPU {gpu}: utilization mean {mean} %, peak {peak} %; VRAM peak {vram} (whole device)",
                gpu = g.gpu,
                mean = mean,
                peak = peak,
                vram = vram
            )
            .render(lang),
        };
        o.push_str(&format!("  {line}\n"));
    }
    let line = match (s.vram_peak_process, s.gpu_access) {
        (Some(v), _) => msg!("the command's own GPU memory peak: {peak}", peak = units::bytes(v)).render(lang),
        (None, GpuAccess::Answered) => msg!("the command's own GPU memory: not reported by the driver").render(lang),
        (None, access) => msg!("GPU: {why}", why = Message::new(access.missing())).render(lang),
    };
    o.push_str(&format!("  {line}\n"));
    let line = msg!(
        "CPU mean {mean} % of a core (peak {peak} %), up to {threads} threads; memory peak {memory}; read {read}, wrote {written}",
        mean = format!("{:.0}", s.cpu_mean_pct),
        peak = format!("{:.0}", s.cpu_peak_pct),
        threads = s.threads_peak,
        memory = units::bytes(s.rss_peak),
        read = units::bytes(s.read_bytes),
        written = units::bytes(s.write_bytes)
    ).render(lang);
    o.push_str(&format!("  {line}\n"));
    for v in &s.verdicts {
        let line = msg!(
            "Diagnosis: {verdict} {title} ({pct} % sure)",
            verdict = v.severity.word_message(),
            title = v.title,
            pct = format!("{:.0}", 100.0 * v.confidence)
        )
        .render(lang);
        o.push_str(&format!("  {line}\n"));
        if v.severity >= Verdict::Warn
            && let Some(step) = v.next_steps.first()
        {
            o.push_str(&format!("    {}\n", msg!("next: {step}", step = step).render(lang)));
        }
    }
    if let Some((lo, hi)) = s.vram_plan {
        let (lo, hi) = (units::bytes(lo), units::bytes(hi));
        let line = if s.vram_peak_process.is_some_and(|v| v > 0) {
            msg!("Plan VRAM: {low} to {high} for this workload (its own peak + 20-30 % headroom)", low = lo, high = hi)
                .render(lang)
        } else {
            msg!(
                "Plan VRAM: {low} to {high} for this workload (the device's peak + 20-30 % headroom)",
                low = lo,
                high = hi
            )
            .render(lang)
        };
        o.push_str(&format!("  {line}\n"));
    }
    o
}

/// A tune's trials: the header and one row per trial, columns padded for a terminal, in `lang`.
pub fn tune_table(spec: &TuneSpec, trials: &[Trial], outcome: &Outcome, lang: Lang) -> String {
    let best = outcome.best;
    let head: Vec<String> = [
        msg!("trial"),
        msg!("moved"),
        msg!("setting"),
        msg!("result"),
        msg!("time"),
        spec.unit.label(),
        msg!("peak VRAM"),
        msg!("free"),
        msg!("GPU util"),
        msg!("what limited it"),
    ]
    .iter()
    .map(|m| m.render(lang))
    .collect();
    let mut rows = vec![head];
    for t in trials {
        rows.push(vec![
            format!("{}{}", t.id, if Some(t.id) == best { " *" } else { "" }),
            phase_label(&t.phase).render(lang),
            t.setting.describe().render(lang),
            t.end.word().render(lang),
            format!("{:.1} s", t.secs),
            t.throughput.map_or_else(|| "-".into(), rate),
            t.device_peak.map_or_else(|| "-".into(), units::bytes),
            t.headroom_pct().map_or_else(|| "-".into(), |f| units::percent_whole_in(lang, f)),
            t.util_mean.map_or_else(|| "-".into(), |u| units::percent_whole_in(lang, u)),
            crate::jobs::tune::render::row_verdict(t, outcome).render(lang),
        ]);
    }
    let cols = rows[0].len();
    let widths: Vec<usize> =
        (0..cols).map(|c| rows.iter().map(|r| crate::i18n::columns(&r[c])).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, cell)| if i + 1 == cols { cell.clone() } else { crate::i18n::pad(cell, widths[i]) })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_told_by_its_states_in_words_and_its_gpu_access() {
        let f = Focus {
            pid: 4242,
            name: Some("python".into()),
            states: "SSSSSS".into(),
            processes: 1,
            threads: 3,
            cpu_pct: 0.0,
            rss_bytes: 1 << 20,
            read_bps: 30_500.0,
            write_bps: 0.0,
            gpu_memory: None,
            gpu_util: None,
            log: None,
            oom_in_log: false,
            gpu_free_share: None,
            memory_note: None,
            gpu_access: GpuAccess::NoDriver,
            demo: None,
            triage: Triage::Waiting,
            summary: Message::default(),
            next_step: Message::default(),
        };
        let text = focus(&f, Lang::En);
        assert!(text.contains("sleeping 6 of 6 readings") && !text.contains("SSSSSS"), "{text}");
        assert!(text.contains("GPU: no NVIDIA driver answered (see gpu-doctor-cli check)"), "{text}");
        assert!(text.contains("reads 30.5 kB/s"), "{text}");
    }

    fn summary(access: GpuAccess) -> RunSummary {
        RunSummary {
            command: "python train.py".into(),
            ended: Ended::Exited { code: 0 },
            secs: 1.0,
            vram_peak_process: None,
            gpus: Vec::new(),
            cpu_mean_pct: 0.0,
            cpu_peak_pct: 0.0,
            threads_peak: 1,
            rss_peak: 0,
            read_bytes: 0,
            write_bytes: 0,
            verdicts: Vec::new(),
            vram_plan: None,
            demo: false,
            throughput: None,
            gpu_access: access,
        }
    }

    #[test]
    fn no_driver_is_not_called_unreported_memory() {
        let text = run_summary(&summary(GpuAccess::NoDriver), Lang::En);
        assert!(text.contains("GPU: no NVIDIA driver answered (see gpu-doctor-cli check)"), "{text}");
        assert!(!text.contains("not reported by the driver"), "{text}");
        let text = run_summary(&summary(GpuAccess::Answered), Lang::En);
        assert!(text.contains("own GPU memory: not reported by the driver"), "{text}");
    }

    /// Issue 53, item 12: with more than one argument changed, the comparison says which.
    #[test]
    fn a_comparison_names_every_changed_argument() {
        let mut a = summary(GpuAccess::Answered);
        let mut b = summary(GpuAccess::Answered);
        a.command = "python train.py --bs 8 --workers 2".into();
        b.command = "python train.py --bs 16 --workers 4".into();
        let text = comparison(&crate::jobs::compare::compare(&a, &b), "A", "B", Lang::En);
        assert!(text.starts_with("2 arguments changed"), "{text}");
        assert!(text.contains("\n  8 → 16\n  2 → 4\n"), "{text}");
    }
}
