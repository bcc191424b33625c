//! The Diagnosis panel of the Monitor tab: the bottleneck verdicts with their evidence and next
//! steps, the window they judge, and while there is too little data a countdown to the first one.

use eframe::egui::{self, RichText};

use super::MonitorState;
use crate::gui::palette;
use crate::units;

/// What the panel says when there is no verdict: the countdown to the first one while the
/// history covers too little of the window, else that the window holds too little GPU data.
pub fn empty_text(first_verdict_in: Option<f64>) -> String {
    match first_verdict_in {
        Some(secs) => crate::diagnose::bottleneck::countdown_text(secs),
        None => "No verdict: too little GPU data in this window.".to_string(),
    }
}

impl MonitorState {
    /// The Diagnosis panel: what limits each GPU now, with evidence and next steps.
    pub(super) fn diagnosis(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            ui.label(RichText::new("Diagnosis").strong())
                .on_hover_text("Bottleneck verdicts over the recent history: what limits the GPU and what to try, in the method's order.");
            let l = ui.label("over the last");
            egui::ComboBox::from_id_salt("diag_window")
                .selected_text(units::duration_secs(self.diag_window))
                .show_ui(ui, |ui| {
                    for w in [30.0, 60.0, 300.0, 900.0] {
                        ui.selectable_value(&mut self.diag_window, w, units::duration_secs(w));
                    }
                })
                .response
                .labelled_by(l.id);
            if let Some(span) = self.judged_span {
                ui.label(format!("(over the {} recorded)", units::duration_secs(span)))
                    .on_hover_text("The recording is shorter than the window: it is judged over all it holds.");
            }
        });
        if self.verdicts.is_empty() {
            ui.label(RichText::new(empty_text(self.first_verdict_in)).weak());
            return;
        }
        for (n, v) in self.verdicts.iter().enumerate() {
            let color = palette::verdict(ui, v.severity);
            let header =
                RichText::new(format!("{}  {}  ({:.0} % sure)", v.severity.word(), v.title, 100.0 * v.confidence))
                    .color(color);
            egui::CollapsingHeader::new(header)
                .id_salt(("verdict", n, v.title.as_str()))
                .default_open(n == 0 && v.severity >= crate::diagnose::Verdict::Warn)
                .show(ui, |ui| {
                    ui.label(&v.explanation);
                    for e in &v.evidence {
                        ui.label(RichText::new(format!("- {e}")).weak());
                    }
                    ui.label(RichText::new("Next steps").strong());
                    for (k, s) in v.next_steps.iter().enumerate() {
                        ui.label(format!("{}. {s}", k + 1));
                    }
                });
        }
    }
}
