//! The report's sections of results: the checklist (root cause first), the bottleneck verdicts,
//! the recent metrics (min / mean / max of every GPU and host metric the tables mark for the
//! report) and the CUDA smoke test, each in the language asked for.

use super::{Item, Section, shown_step};
use crate::diagnose;
use crate::i18n::Lang;
use crate::smoke::SmokeReport;
use crate::telemetry::history::History;
use crate::telemetry::history::keys;
use crate::telemetry::host_metric::HOST_METRICS;
use crate::telemetry::metric::GPU_METRICS;
use crate::telemetry::snapshot::Snapshot;
use crate::tr_in;
use crate::units;

pub(super) fn checklist_section(c: &diagnose::Report, lang: Lang) -> Section {
    let mut checks: Vec<&diagnose::Check> = c.checks.iter().collect();
    // Root cause first, then failures, warnings, the rest in the checklist's order.
    checks.sort_by_key(|k| (Some(&k.id) != c.root_cause.as_ref(), std::cmp::Reverse(k.verdict)));
    let items = checks
        .into_iter()
        .map(|k| {
            let evidence = k.evidence.iter().map(|m| m.render(lang)).collect();
            Item::Verdict {
                verdict: if Some(&k.id) == c.root_cause.as_ref() {
                    tr_in!(lang, "{verdict} (ROOT CAUSE)", verdict = k.verdict.word_in(lang))
                } else {
                    k.verdict.word_in(lang).to_string()
                },
                title: crate::i18n::tr_in(lang, &k.title),
                summary: if k.verdict >= diagnose::Verdict::Warn {
                    tr_in!(
                        lang,
                        "{finding}. {summary}",
                        finding = k.finding.render(lang),
                        summary = k.summary.render(lang)
                    )
                } else {
                    k.summary.render(lang)
                },
                evidence,
                fix: None,
                steps: k.fixes.iter().map(|f| shown_step(f, lang)).collect(),
            }
        })
        .collect::<Vec<Item>>();
    let mut items = items;
    if let Some(i) = &c.imported {
        // The file the checks read comes first: the machine it describes is not this one.
        let lines: Vec<Item> = i.lines().iter().map(|text| Item::Text { text: text.render(lang) }).collect();
        items.splice(0..0, lines);
    }
    let title = match &c.imported {
        Some(i) if i.kind == "nvidia-smi -q" => tr_in!(lang, "Checklist (from nvidia-smi -q output)"),
        Some(_) => tr_in!(lang, "Checklist (from an nvidia-bug-report log)"),
        None if c.from_capture => tr_in!(lang, "Checklist (from a capture)"),
        None => tr_in!(lang, "Checklist"),
    };
    Section { title: title.to_string(), items }
}

pub(super) fn bottleneck_section(b: &[diagnose::bottleneck::Bottleneck], lang: Lang) -> Section {
    let mut items: Vec<Item> = b
        .iter()
        .map(|v| {
            let mut evidence = vec![v.explanation.render(lang)];
            evidence.extend(v.evidence.iter().map(|m| m.render(lang)));
            Item::Verdict {
                verdict: tr_in!(
                    lang,
                    "{verdict} ({confidence} % sure)",
                    verdict = v.severity.word_in(lang),
                    confidence = format!("{:.0}", 100.0 * v.confidence)
                ),
                title: v.title.render(lang),
                summary: tr_in!(lang, "over {duration}", duration = units::duration_words(v.to - v.from).render(lang)),
                evidence,
                fix: (!v.next_steps.is_empty()).then(|| {
                    v.next_steps
                        .iter()
                        .enumerate()
                        .map(|(i, s)| format!("{}. {}", i + 1, s.render(lang)))
                        .collect::<Vec<_>>()
                        .join(" ")
                }),
                steps: Vec::new(),
            }
        })
        .collect();
    if items.is_empty() {
        items.push(Item::Text {
            text: tr_in!(lang, "No verdict: too little history (half of the window must be covered).").to_string(),
        });
    }
    Section { title: tr_in!(lang, "Bottleneck verdicts").to_string(), items }
}

pub(super) fn metrics_section(snap: &Snapshot, h: &History, window: f64, now: f64, lang: Lang) -> Section {
    let from = now - window;
    let mut rows = Vec::new();
    let mut row = |name: String, key: &str, fmt: &dyn Fn(f64) -> String| {
        if let Some(s) = h.stats(key, from, now) {
            rows.push(vec![name, fmt(s.min), fmt(s.mean), fmt(s.max)]);
        }
    };
    for g in &snap.inventory.gpus {
        for d in GPU_METRICS.iter().filter(|d| d.report) {
            row(d.for_gpu(g.index).render(lang), &keys::gpu(g.index, d.key), &|v| d.unit.format_whole_in(lang, v));
        }
    }
    for d in HOST_METRICS.iter().filter(|d| d.report) {
        if let Some(key) = d.key {
            row(d.label_message().render(lang), key, &|v| d.unit.format_whole_in(lang, v));
        }
    }
    let mut items = vec![Item::Text {
        text: tr_in!(
            lang,
            "Over the last {duration} (min / mean / max).",
            duration = units::duration_words(window.min(now.max(0.0)).max(0.0)).render(lang)
        ),
    }];
    if rows.is_empty() {
        items.push(Item::Text { text: tr_in!(lang, "No samples in this window.").to_string() });
    } else {
        items.push(Item::Table {
            headers: [tr_in!(lang, "Metric"), tr_in!(lang, "Min"), tr_in!(lang, "Mean"), tr_in!(lang, "Max")]
                .iter()
                .map(|s| (*s).to_string())
                .collect(),
            rows,
        });
    }
    let throttled: Vec<String> = snap
        .gpus
        .iter()
        .filter_map(|g| {
            g.throttle_mask.get().filter(|m| crate::telemetry::throttle::is_limiting(*m)).map(|m| {
                tr_in!(
                    lang,
                    "GPU {index}: {reasons}",
                    index = g.index,
                    reasons = crate::telemetry::throttle::summary_message(m).render(lang)
                )
            })
        })
        .collect();
    if !throttled.is_empty() {
        items
            .push(Item::Text { text: tr_in!(lang, "Clocks held back now: {reasons}", reasons = throttled.join("; ")) });
    }
    let events: Vec<Vec<String>> = h
        .events()
        .filter(|e| e.t >= from)
        .map(|e| {
            vec![
                crate::present::wall_clock(snap.started_unix, e.t, crate::present::local_offset_secs()),
                e.gpu.map_or(String::new(), |g| format!("GPU {g}")),
                e.text.render(lang),
            ]
        })
        .collect();
    if !events.is_empty() {
        items.push(Item::Table {
            headers: vec![tr_in!(lang, "Time").into(), "GPU".into(), tr_in!(lang, "Event").into()],
            rows: events,
        });
    }
    Section { title: tr_in!(lang, "Recent metrics").to_string(), items }
}

pub(super) fn smoke_section(s: &SmokeReport, lang: Lang) -> Section {
    // (The run's texts are messages; the report's language is the one it is made in.)
    let mut items = vec![Item::Facts {
        rows: [
            (
                tr_in!(lang, "Verdict").to_string(),
                tr_in!(lang, "{label}: {value}", label = s.verdict.word_in(lang), value = s.summary.render(lang)),
            ),
            (
                tr_in!(lang, "Device").to_string(),
                s.device().map_or(format!("{}", s.options.device), |d| d.line().render(lang)),
            ),
            (
                tr_in!(lang, "Driver library").to_string(),
                s.library.clone().unwrap_or_else(|| tr_in!(lang, "not loaded").to_string()),
            ),
            (tr_in!(lang, "Took").to_string(), format!("{:.1} s", s.total_ms / 1000.0)),
        ]
        .into_iter()
        .collect(),
    }];
    for r in &s.stages {
        let mut evidence: Vec<String> = r
            .figures
            .iter()
            .map(|f| tr_in!(lang, "{label}: {value}", label = f.label.render(lang), value = f.text(lang)))
            .collect();
        evidence.extend(r.details.iter().map(|m| m.render(lang)));
        if let Some(e) = &r.error {
            evidence.push(tr_in!(lang, "error: {error}", error = e));
        }
        items.push(Item::Verdict {
            verdict: r.verdict.word_in(lang).to_string(),
            title: crate::i18n::tr_static(lang, r.stage.title()).to_string(),
            summary: r.summary.render(lang),
            evidence,
            fix: r.next_step.as_ref().map(|m| m.render(lang)),
            steps: Vec::new(),
        });
    }
    Section { title: tr_in!(lang, "CUDA smoke test").to_string(), items }
}
