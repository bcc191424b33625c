//! The Diagnosis panel of the Monitor tab: the bottleneck verdicts with their evidence and next
//! steps, the window they judge, and while there is too little data a countdown to the first one.

use crate::i18n::{Here as _, Word as _};
use eframe::egui::{self, RichText};

use super::MonitorState;
use super::panels::card_verdict;
use crate::diagnose::Verdict;
use crate::diagnose::bottleneck::Bottleneck;
use crate::gui::palette;
use crate::tr;
use crate::units;

/// What the panel says when there is no verdict: the countdown to the first one while the
/// history covers too little of the window, else that the window holds too little GPU data.
pub fn empty_text(first_verdict_in: Option<f64>) -> String {
    match first_verdict_in {
        Some(secs) => crate::diagnose::bottleneck::countdown_text(secs).here(),
        None => tr!("No verdict: too little GPU data in this window.").to_string(),
    }
}

/// The panel's lines: one per GPU (its card's verdict, the same one the card header shows) with
/// that GPU's other informational verdicts folded under it, plus every warning or failure on its
/// own line, and the verdicts about no single GPU (imbalance, host swapping).
pub fn panel_lines(verdicts: &[Bottleneck]) -> Vec<(&Bottleneck, Vec<&Bottleneck>)> {
    let mut out: Vec<(&Bottleneck, Vec<&Bottleneck>)> = Vec::new();
    for v in verdicts {
        let headline = v.gpu.and_then(|g| card_verdict(verdicts, g));
        let folded = v.severity < Verdict::Warn && headline.is_some_and(|h| !std::ptr::eq(h, v));
        if !folded {
            out.push((v, Vec::new()));
        }
    }
    for v in verdicts {
        let Some(h) = v.gpu.and_then(|g| card_verdict(verdicts, g)) else { continue };
        if v.severity < Verdict::Warn
            && !std::ptr::eq(h, v)
            && let Some(line) = out.iter_mut().find(|(l, _)| std::ptr::eq(*l, h))
        {
            line.1.push(v);
        }
    }
    out
}

impl MonitorState {
    /// The Diagnosis panel: what limits each GPU now, with evidence and next steps.
    pub(super) fn diagnosis(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            ui.label(RichText::new(tr!("Diagnosis")).strong()).on_hover_text(tr!(
                "Bottleneck verdicts over the recent history: what limits the GPU and what to try, in the method's order."
            ));
            let l = ui.label(tr!("over the last"));
            egui::ComboBox::from_id_salt("diag_window")
                .selected_text(units::duration_words(self.diag_window).here())
                .show_ui(ui, |ui| {
                    for w in [30.0, 60.0, 300.0, 900.0] {
                        ui.selectable_value(&mut self.diag_window, w, units::duration_words(w).here());
                    }
                })
                .response
                .labelled_by(l.id);
            if let Some(span) = self.judged_span {
                ui.label(tr!("(over the {span} recorded)", span = units::duration_words(span).here()))
                    .on_hover_text(tr!("The recording is shorter than the window: it is judged over all it holds."));
            }
        });
        if self.verdicts.is_empty() {
            ui.label(RichText::new(empty_text(self.first_verdict_in)).weak());
            return;
        }
        let lines = panel_lines(&self.verdicts);
        // Many GPUs: the table's Verdict column already names each one's verdict, so the panel
        // opens none and lists the first few, the rest under one line (the charts stay in view).
        let many = lines.len() > SHOWN_LINES + 1;
        let (first, rest) = lines.split_at(if many { SHOWN_LINES } else { lines.len() });
        for (n, (v, also)) in first.iter().enumerate() {
            verdict_line(ui, n, v, also, n == 0 && !many);
        }
        if !rest.is_empty() {
            egui::CollapsingHeader::new(tr!("{n} more verdicts", n = rest.len())).id_salt("more_verdicts").show(
                ui,
                |ui| {
                    for (n, (v, also)) in rest.iter().enumerate() {
                        verdict_line(ui, SHOWN_LINES + n, v, also, false);
                    }
                },
            );
        }
    }
}

/// Verdict lines the panel lists before folding the rest under "N more verdicts".
const SHOWN_LINES: usize = 3;

/// One verdict: its header (open when `open` and it is a problem) with explanation, evidence,
/// next steps and the GPU's other information folded under it.
fn verdict_line(ui: &mut egui::Ui, n: usize, v: &Bottleneck, also: &[&Bottleneck], open: bool) {
    let color = palette::verdict(ui, v.severity);
    let header = RichText::new(tr!(
        "{verdict}  {title}  ({sure} % sure)",
        verdict = v.severity.word(),
        title = v.title.here(),
        sure = format!("{:.0}", 100.0 * v.confidence)
    ))
    .color(color);
    egui::CollapsingHeader::new(header)
        .id_salt(("verdict", n, v.key()))
        .default_open(open && v.severity >= Verdict::Warn)
        .show(ui, |ui| {
            ui.label(v.explanation.here());
            for e in &v.evidence {
                ui.label(RichText::new(format!("- {}", e.here())).weak());
            }
            ui.label(RichText::new(tr!("Next steps")).strong());
            for (k, s) in v.next_steps.iter().enumerate() {
                ui.label(format!("{}. {}", k + 1, s.here()));
            }
            for a in also {
                ui.label(
                    RichText::new(tr!("Also: {title}", title = a.title.here())).color(palette::verdict(ui, a.severity)),
                )
                .on_hover_text(a.explanation.here());
            }
        });
    if !also.is_empty() {
        ui.label(
            RichText::new(tr!(
                "      also: {titles}",
                titles = also.iter().map(|a| a.title.here()).collect::<Vec<_>>().join(crate::i18n::tr("; "))
            ))
            .small()
            .weak(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::bottleneck::Finding;

    fn v(finding: Finding, gpu: Option<u32>, severity: Verdict, title: &str) -> Bottleneck {
        Bottleneck {
            finding,
            gpu,
            severity,
            confidence: 0.8,
            title: crate::i18n::Message::data(title),
            evidence: Vec::new(),
            from: 0.0,
            to: 60.0,
            explanation: crate::i18n::Message::default(),
            next_steps: Vec::new(),
        }
    }

    #[test]
    fn one_line_per_gpu_with_its_information_folded_and_problems_kept() {
        let all = vec![
            v(Finding::PowerLimited, Some(0), Verdict::Info, "GPU 0 runs at its power limit"),
            v(Finding::PowerLimited, Some(1), Verdict::Info, "GPU 1 runs at its power limit"),
            v(Finding::Healthy, Some(0), Verdict::Pass, "GPU 0 is busy and not held back"),
            v(Finding::Healthy, Some(1), Verdict::Pass, "GPU 1 is busy and not held back"),
            v(Finding::VramNearFull, Some(1), Verdict::Warn, "GPU 1's memory is nearly full"),
            v(Finding::HostSwapping, None, Verdict::Warn, "The host is swapping"),
        ];
        let lines = panel_lines(&all);
        let titles: Vec<String> = lines.iter().map(|(l, _)| l.title.en()).collect();
        // GPU 1's warning is its headline (as on its card); its other lines fold under it.
        assert_eq!(
            titles,
            ["GPU 0 is busy and not held back", "GPU 1's memory is nearly full", "The host is swapping"]
        );
        assert_eq!(lines[0].1.len(), 1, "GPU 0's power limit folded under its verdict");
        assert_eq!(lines[0].1[0].title.en(), "GPU 0 runs at its power limit");
        assert_eq!(lines[1].1.len(), 2);
        assert!(lines[2].1.is_empty());
    }
}
