//! A GPU's utilization as its card leads with it: the window's average in large type, a bar with
//! the average filled and the min–max range as a band, a tick at the latest reading, and a
//! sparkline of the window. The numbers are the ones the verdicts quote
//! ([`crate::diagnose::bottleneck::util_windows`]), so card and verdict cannot disagree.

use crate::i18n::Here as _;
use eframe::egui::{self, Color32, RichText, Stroke, pos2, vec2};

use crate::diagnose::bottleneck::UtilWindow;
use crate::tr;
use crate::units;

/// [`crate::present::GPU_UTIL_LABEL`]'s text, marked for the catalogue (shown with
/// [`crate::i18n::tr`]).
const _: &str = crate::tr_key!("GPU utilization");

/// Height of the bar, points.
const BAR_HEIGHT: f32 = 10.0;
/// Height of the sparkline, points.
const SPARK_HEIGHT: f32 = 26.0;

/// The caption under the big number: what it averages over, the range and the latest reading.
pub fn caption(w: &UtilWindow, latest: Option<f64>) -> String {
    let mut s = tr!(
        "average over {span} · min {min} – max {max} %",
        span = units::duration_words(w.span.round()).here(),
        min = format!("{:.0}", w.min),
        max = format!("{:.0}", w.max)
    );
    if let Some(now) = latest {
        s.push_str(&tr!(" · now {now} %", now = format!("{now:.0}")));
    }
    s
}

/// The big number: the window's average, or the latest reading while there is no window yet.
pub fn big_number(w: Option<&UtilWindow>, latest: Option<f64>) -> Option<String> {
    match (w, latest) {
        (Some(w), _) => Some(crate::units::percent_whole(w.mean)),
        (None, Some(now)) => Some(crate::units::percent_whole(now)),
        (None, None) => None,
    }
}

/// Draws the block `width` points wide in `color` (the GPU's hue).
pub fn block(ui: &mut egui::Ui, w: Option<&UtilWindow>, latest: Option<f64>, width: f32, color: Color32) {
    let Some(big) = big_number(w, latest) else {
        ui.weak(tr!("GPU utilization: not reported"));
        return;
    };
    ui.horizontal(|ui| {
        ui.label(RichText::new(big).size(24.0).strong().color(ui.visuals().strong_text_color()));
        ui.vertical(|ui| {
            ui.label(RichText::new(crate::i18n::tr(crate::present::GPU_UTIL_LABEL)).strong());
            let small = match w {
                Some(w) => caption(w, latest),
                None => tr!("now (the window's average follows)").to_string(),
            };
            ui.small(small);
        });
    })
    .response
    .on_hover_text(tr!(
        "% of time a kernel was running, averaged over the window the verdicts judge; the band is the \
         window's min–max, the tick the latest reading"
    ));
    let (mean, min, max) = w.map_or((latest.unwrap_or(0.0), f64::NAN, f64::NAN), |w| (w.mean, w.min, w.max));
    bar(ui, width, mean, min, max, latest, color);
    if let Some(w) = w.filter(|w| w.spark.len() >= 2) {
        sparkline(ui, width, &w.spark, color);
    }
}

/// The x position of `pct` in `[left, right]`.
fn x_of(left: f32, right: f32, pct: f64) -> f32 {
    left + (right - left) * (pct.clamp(0.0, 100.0) / 100.0) as f32
}

/// A horizontal bar `width` wide: track, min–max band (when known), the mean filled, a tick at the
/// latest reading.
pub fn bar(ui: &mut egui::Ui, width: f32, mean: f64, min: f64, max: f64, latest: Option<f64>, color: Color32) {
    let (rect, _) = ui.allocate_exact_size(vec2(width, BAR_HEIGHT), egui::Sense::hover());
    let p = ui.painter();
    let track = ui.visuals().extreme_bg_color;
    p.rect_filled(rect, 3.0, track);
    if min.is_finite() && max.is_finite() {
        let band = egui::Rect::from_min_max(
            pos2(x_of(rect.left(), rect.right(), min), rect.top()),
            pos2(x_of(rect.left(), rect.right(), max).max(x_of(rect.left(), rect.right(), min) + 1.0), rect.bottom()),
        );
        p.rect_filled(band, 3.0, color.gamma_multiply(0.35));
    }
    let fill = egui::Rect::from_min_max(
        pos2(rect.left(), rect.top() + 2.0),
        pos2(x_of(rect.left(), rect.right(), mean), rect.bottom() - 2.0),
    );
    p.rect_filled(fill, 2.0, color);
    if let Some(now) = latest {
        let x = x_of(rect.left(), rect.right(), now);
        p.line_segment(
            [pos2(x, rect.top() - 2.0), pos2(x, rect.bottom() + 2.0)],
            Stroke::new(2.0, ui.visuals().strong_text_color()),
        );
    }
}

/// The window's readings as a line `width` wide, 0–100 % from bottom to top.
fn sparkline(ui: &mut egui::Ui, width: f32, values: &[f64], color: Color32) {
    let (rect, _) = ui.allocate_exact_size(vec2(width, SPARK_HEIGHT), egui::Sense::hover());
    let p = ui.painter();
    let n = values.len().max(2) - 1;
    let pts: Vec<egui::Pos2> = values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let x = rect.left() + rect.width() * i as f32 / n as f32;
            let y = rect.bottom() - rect.height() * (v.clamp(0.0, 100.0) / 100.0) as f32;
            pos2(x, y)
        })
        .collect();
    p.line_segment([rect.left_bottom(), rect.right_bottom()], Stroke::new(1.0, ui.visuals().weak_text_color()));
    p.add(egui::Shape::line(pts, Stroke::new(1.5, color)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(mean: f64, min: f64, max: f64) -> UtilWindow {
        UtilWindow { gpu: 0, mean, min, max, span: 60.0, spark: vec![min, max, mean] }
    }

    #[test]
    fn the_big_number_is_the_windows_average_not_the_latest_reading() {
        assert_eq!(big_number(Some(&w(29.4, 3.0, 92.0)), Some(92.0)).as_deref(), Some("29 %"));
        assert_eq!(big_number(None, Some(92.0)).as_deref(), Some("92 %"));
        assert_eq!(big_number(None, None), None);
        let c = caption(&w(29.4, 3.0, 92.0), Some(92.0));
        assert!(c.contains("min 3 – max 92 %") && c.contains("now 92 %") && c.contains("1 min"), "{c}");
    }
}
