//! The Tune tab's results, made once each time the journal is read rather than every frame: the
//! answer, and for each parameter searched the points of its two charts (throughput and peak
//! VRAM against the parameter's own value, one point per value: the mean of its runs, the
//! highest peak), at most [`MAX_POINTS`] values each. The table draws only the rows in view, so
//! a journal of 80,000 trials costs a frame what one of 20 does.

use crate::i18n::Here as _;
use eframe::egui::{self, RichText};
use egui_plot::{Line, Plot, PlotPoints, Points};

use super::palette::{self, Tone};
use crate::jobs::tune::journal::Journal;
use crate::jobs::tune::spec::CONCURRENCY;
use crate::jobs::tune::{Outcome, Trial, TrialEnd, render, search};
use crate::{tr, units};

/// At most this many values of a parameter are drawn (the chosen one always).
pub const MAX_POINTS: usize = 2000;

/// One parameter's charts.
#[derive(Clone, Debug, Default)]
pub struct PhaseChart {
    /// The parameter ("batch", "concurrency", "workers" …).
    pub phase: String,
    /// (value, mean throughput of its runs).
    pub throughput: Vec<[f64; 2]>,
    /// (value, the highest peak of its runs, GiB).
    pub vram: Vec<[f64; 2]>,
    /// The chosen value's points, when the chosen trial moved this parameter's value.
    pub chosen: Option<([f64; 2], Option<[f64; 2]>)>,
}

/// What the results show, made from one read of the journal.
#[derive(Default)]
pub struct TuneView {
    /// The parameters searched, in order, with their charts.
    pub charts: Vec<PhaseChart>,
    /// The chart shown.
    pub selected: usize,
    /// The memory a trial may use, bytes.
    pub limit: Option<u64>,
    /// The GPU's memory, bytes.
    pub total: Option<u64>,
}

/// A trial's value of `phase`.
fn value_of(t: &Trial, phase: &str) -> Option<f64> {
    if phase == CONCURRENCY {
        Some(f64::from(t.setting.concurrency))
    } else {
        t.setting.values.get(phase).map(|v| *v as f64)
    }
}

impl TuneView {
    /// The view of `j`; `selected` kept where that parameter is still there.
    pub fn of(j: &Journal, previous: Option<&TuneView>) -> TuneView {
        let spec = &j.start.spec;
        let total = j.start.gpus.iter().filter_map(|g| g.total).max();
        let best = j.end.as_ref().and_then(|e| e.outcome.best);
        let best_trial = best.and_then(|b| j.trials.iter().find(|t| t.id == b));
        let mut phases: Vec<String> = search::phases(spec).into_iter().map(|p| p.0).collect();
        for t in &j.trials {
            if !phases.contains(&t.phase) {
                phases.push(t.phase.clone());
            }
        }
        let charts: Vec<PhaseChart> = phases
            .into_iter()
            .map(|phase| {
                // value → (sum of throughput, runs, highest peak)
                let mut by: std::collections::BTreeMap<u64, (f64, u32, Option<u64>)> = Default::default();
                for t in j.trials.iter().filter(|t| t.phase == phase) {
                    let Some(v) = value_of(t, &phase) else { continue };
                    let e = by.entry(v as u64).or_insert((0.0, 0, None));
                    if let (TrialEnd::Ok, Some(thr)) = (&t.end, t.throughput) {
                        e.0 += thr;
                        e.1 += 1;
                    }
                    e.2 = e.2.max(t.device_peak);
                }
                let step = by.len().div_ceil(MAX_POINTS).max(1);
                let chosen_value = best_trial.filter(|t| t.phase == phase).and_then(|t| value_of(t, &phase));
                let mut c = PhaseChart { phase: phase.clone(), ..PhaseChart::default() };
                for (i, (v, (sum, n, peak))) in by.iter().enumerate() {
                    let x = *v as f64;
                    let keep = i % step == 0 || Some(x) == chosen_value;
                    let thr = (*n > 0).then(|| [x, sum / f64::from(*n)]);
                    let vram = peak.map(|p| [x, p as f64 / units::GIB]);
                    if Some(x) == chosen_value
                        && let Some(t) = thr
                    {
                        c.chosen = Some((t, vram));
                    }
                    if keep {
                        c.throughput.extend(thr);
                        c.vram.extend(vram);
                    }
                }
                c
            })
            .filter(|c| !c.throughput.is_empty() || !c.vram.is_empty())
            .collect();
        let selected = previous
            .and_then(|p| p.charts.get(p.selected))
            .and_then(|s| charts.iter().position(|c| c.phase == s.phase))
            .unwrap_or(0);
        TuneView {
            charts,
            selected,
            limit: search::limit(spec, &j.trials).or_else(|| search::limit_with(spec, total)),
            total,
        }
    }

    /// The two charts of the parameter chosen (a choice of parameter above them when the tune
    /// searched more than one).
    pub fn charts(&mut self, ui: &mut egui::Ui, unit: &str) {
        if self.charts.is_empty() {
            return;
        }
        if self.charts.len() > 1 {
            ui.horizontal(|ui| {
                ui.label(tr!("Parameter"));
                for (i, c) in self.charts.iter().enumerate() {
                    ui.selectable_value(&mut self.selected, i, render::phase_label(&c.phase).here());
                }
            });
        }
        let Some(c) = self.charts.get(self.selected.min(self.charts.len() - 1)) else { return };
        let chosen = palette::tone(ui, Tone::Pass);
        let line = ui.visuals().text_color().gamma_multiply(0.6);
        let warn = palette::tone(ui, Tone::Warn);
        let width = ((ui.available_width() - 16.0) / 2.0).max(240.0);
        let x_label = render::phase_label(&c.phase).here();
        ui.horizontal(|ui| {
            ui.vertical(|ui| {
                ui.horizontal_wrapped(|ui| {
                    ui.label(RichText::new(tr!("Throughput ({unit})", unit = unit)).strong());
                    // The key, outside the plot so it never covers a point.
                    swatch(ui, line, true);
                    ui.label(tr!("mean of the runs"));
                    swatch(ui, chosen, true);
                    ui.label(tr!("chosen"));
                });
                still_plot(("tune_throughput", self.selected), width, x_label.clone()).show(ui, |p| {
                    p.line(Line::new(tr!("throughput"), PlotPoints::from(c.throughput.clone())).color(line));
                    p.points(
                        Points::new(tr!("trials"), PlotPoints::from(c.throughput.clone())).radius(3.0).color(line),
                    );
                    if let Some((t, _)) = c.chosen {
                        p.points(Points::new(tr!("chosen"), PlotPoints::from(vec![t])).radius(7.0).color(chosen));
                    }
                });
            });
            ui.vertical(|ui| {
                ui.horizontal_wrapped(|ui| {
                    ui.label(RichText::new(tr!("Peak VRAM (GiB)")).strong());
                    if !c.vram.is_empty() {
                        swatch(ui, chosen, true);
                        ui.label(tr!("chosen"));
                        if let Some(l) = self.limit {
                            swatch(ui, warn, false);
                            ui.label(tr!("headroom limit {limit}", limit = units::bytes(l)));
                        }
                        if let Some(t) = self.total {
                            swatch(ui, line, false);
                            ui.label(tr!("GPU memory {total}", total = units::bytes(t)));
                        }
                    }
                });
                if c.vram.is_empty() {
                    // No axis without data: say why there is no chart.
                    ui.add_sized(
                        [width, 200.0],
                        egui::Label::new(
                            RichText::new(tr!(
                                "No GPU memory figures in this journal: no NVIDIA driver answered while it ran."
                            ))
                            .weak(),
                        )
                        .wrap(),
                    );
                    return;
                }
                let (lo, hi) = c.vram.iter().fold((f64::MAX, f64::MIN), |(lo, hi), p| (lo.min(p[0]), hi.max(p[0])));
                still_plot(("tune_vram", self.selected), width, x_label).show(ui, |p| {
                    p.points(Points::new(tr!("peak VRAM"), PlotPoints::from(c.vram.clone())).radius(3.0).color(line));
                    if let Some((_, Some(v))) = c.chosen {
                        p.points(Points::new(tr!("chosen"), PlotPoints::from(vec![v])).radius(7.0).color(chosen));
                    }
                    let across = |y: f64| PlotPoints::from(vec![[lo, y], [hi, y]]);
                    if let Some(l) = self.limit {
                        p.line(Line::new("headroom", across(l as f64 / units::GIB)).color(warn).width(1.5));
                    }
                    if let Some(t) = self.total {
                        p.line(Line::new("memory", across(t as f64 / units::GIB)).color(line).width(1.0));
                    }
                });
            });
        });
    }
}

/// A chart of the tab: fixed in place (no drag, zoom or scroll), from zero up, 200 points high.
fn still_plot<'a>(id: (&str, usize), width: f32, x_label: String) -> Plot<'a> {
    Plot::new(id)
        .width(width)
        .height(200.0)
        .include_y(0.0)
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .x_axis_label(x_label)
}

/// The trials' table: a header and only the rows in view (a scroll area of fixed-height rows).
pub fn table(ui: &mut egui::Ui, j: &Journal, outcome: Option<&Outcome>) {
    let best = outcome.and_then(|o| o.best);
    let lang = crate::i18n::current();
    let unit = j.start.spec.unit.label().render(lang);
    const WIDTHS: [f32; 7] = [54.0, 190.0, 110.0, 64.0, 96.0, 150.0, 70.0];
    let cell = |ui: &mut egui::Ui, w: f32, text: RichText| {
        ui.allocate_ui_with_layout(
            egui::vec2(w, ui.spacing().interact_size.y),
            egui::Layout::left_to_right(egui::Align::Center),
            |ui| {
                // A column as wide as the header's, whatever the cell holds.
                ui.set_min_width(w);
                ui.set_max_width(w);
                ui.add(egui::Label::new(text).truncate());
            },
        );
    };
    let heads =
        [tr!("trial"), tr!("setting"), tr!("result"), tr!("time"), unit.as_str(), tr!("peak VRAM"), tr!("GPU util")];
    ui.horizontal(|ui| {
        for (w, h) in WIDTHS.iter().zip(heads) {
            cell(ui, *w, RichText::new(h).strong());
        }
        ui.label(RichText::new(tr!("what limited it")).strong());
    });
    let row_h = ui.spacing().interact_size.y + ui.spacing().item_spacing.y;
    egui::ScrollArea::vertical().id_salt("tune_trials").max_height(360.0).auto_shrink([false, true]).show_rows(
        ui,
        row_h,
        j.trials.len(),
        |ui, rows| {
            for t in &j.trials[rows] {
                ui.horizontal(|ui| {
                    let mark = if Some(t.id) == best { " *" } else { "" };
                    cell(ui, WIDTHS[0], RichText::new(format!("{}{mark}", t.id)));
                    cell(ui, WIDTHS[1], RichText::new(t.setting.describe().render(lang)));
                    let tone = if t.end == TrialEnd::Ok { Tone::Pass } else { Tone::Warn };
                    cell(ui, WIDTHS[2], RichText::new(t.end.word().render(lang)).color(palette::tone(ui, tone)));
                    cell(ui, WIDTHS[3], RichText::new(format!("{:.1} s", t.secs)));
                    cell(ui, WIDTHS[4], RichText::new(t.throughput.map_or_else(|| "-".into(), render::rate)));
                    let peak = match (t.device_peak, t.headroom_pct()) {
                        (Some(p), Some(f)) => {
                            tr!("{peak} ({free} free)", peak = units::bytes(p), free = crate::units::percent_whole(f))
                                .to_string()
                        }
                        (Some(p), None) => units::bytes(p),
                        _ => "-".into(),
                    };
                    cell(ui, WIDTHS[5], RichText::new(peak));
                    cell(
                        ui,
                        WIDTHS[6],
                        RichText::new(t.util_mean.map_or_else(|| "-".into(), crate::units::percent_whole)),
                    );
                    let verdict = outcome.map_or_else(|| t.verdict.clone(), |o| render::row_verdict(t, o));
                    ui.add(egui::Label::new(verdict.render(lang)).truncate()).on_hover_text(verdict.render(lang));
                });
            }
        },
    );
}

/// A key's mark drawn, not typed (the bundled fonts lack the symbols): a dot or a short line.
pub fn swatch(ui: &mut egui::Ui, color: egui::Color32, dot: bool) {
    let (rect, _) = ui.allocate_exact_size(egui::vec2(14.0, 12.0), egui::Sense::hover());
    if dot {
        ui.painter().circle_filled(rect.center(), 5.0, color);
    } else {
        ui.painter().line_segment([rect.left_center(), rect.right_center()], egui::Stroke::new(2.0, color));
    }
}
