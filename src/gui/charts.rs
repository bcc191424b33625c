//! Time-series charts: one look for every chart (linked time axis and hover cursor, wall-clock
//! axis labels, hover readouts with units and time), drawn only when on screen.

use eframe::egui::{self, Color32, RichText};
use egui_plot::{HLine, Line, Plot, PlotPoints};

use crate::present;
use crate::units;

/// The unit of a chart's values; decides axis labels and hover text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Percent, 0-100.
    Percent,
    /// Bytes, plotted and shown in GiB.
    Gib,
    /// Bytes per second.
    Rate,
    /// Watts.
    Watts,
    /// Degrees Celsius.
    Celsius,
    /// Megahertz.
    Mhz,
}

impl Unit {
    /// Formats a value of this unit.
    pub fn format(self, v: f64) -> String {
        match self {
            Unit::Percent => format!("{v:.0} %"),
            Unit::Gib => format!("{v:.1} GiB"),
            Unit::Rate => units::rate(v),
            Unit::Watts => format!("{v:.0} W"),
            Unit::Celsius => format!("{v:.0} °C"),
            Unit::Mhz => format!("{v:.0} MHz"),
        }
    }

    fn axis(self, v: f64) -> String {
        if v < 0.0 {
            return String::new();
        }
        match self {
            Unit::Percent => format!("{v:.0}%"),
            Unit::Gib => format!("{v:.0} GiB"),
            Unit::Rate => units::rate(v).replace(".0 ", " ").replace(".00 ", " "),
            Unit::Watts => format!("{v:.0} W"),
            Unit::Celsius => format!("{v:.0}°C"),
            Unit::Mhz => format!("{v:.0}"),
        }
    }
}

/// One line of a chart.
pub struct Series {
    /// Legend and hover name.
    pub name: String,
    /// `[t, value]` points.
    pub points: Vec<[f64; 2]>,
    /// Line colour.
    pub color: Color32,
}

/// A horizontal reference (a limit, a threshold, a total), drawn thin and faded.
pub struct Reference {
    /// Legend name, e.g. "GPU 0 power limit".
    pub name: String,
    /// Value.
    pub value: f64,
    /// Colour (drawn as a thin, faded line).
    pub color: Color32,
}

/// A chart to draw.
pub struct Chart<'a> {
    /// Unique id.
    pub id: &'a str,
    /// Title above the chart.
    pub title: &'a str,
    /// What the title means, on hover.
    pub help: &'a str,
    /// One line under the title saying how to read the lines; empty for none (the GPU charts share
    /// one legend line instead).
    pub caption: &'a str,
    /// Unit of the values.
    pub unit: Unit,
    /// Lines.
    pub series: Vec<Series>,
    /// Dashed horizontal references.
    pub references: Vec<Reference>,
    /// Fix the y axis to 0..100 (percent charts).
    pub fixed_percent: bool,
}

/// The shared time axis of all charts in a frame.
#[derive(Clone, Copy)]
pub struct TimeAxis {
    /// Left edge, seconds since sampler start.
    pub from: f64,
    /// Right edge.
    pub to: f64,
    /// Sampler start, Unix seconds.
    pub started_unix: f64,
    /// Local offset from UTC, seconds.
    pub offset_secs: i64,
    /// Id linking the x axes and cursors of every chart.
    pub link: egui::Id,
}

/// Colour of GPU `i` (and of its references).
pub fn gpu_color(i: u32) -> Color32 {
    const PALETTE: [Color32; 8] = [
        Color32::from_rgb(118, 185, 0),
        Color32::from_rgb(66, 165, 245),
        Color32::from_rgb(255, 167, 38),
        Color32::from_rgb(171, 71, 188),
        Color32::from_rgb(38, 198, 218),
        Color32::from_rgb(239, 83, 80),
        Color32::from_rgb(212, 225, 87),
        Color32::from_rgb(141, 110, 99),
    ];
    PALETTE.get(i as usize % PALETTE.len()).copied().unwrap_or(Color32::LIGHT_GREEN)
}

/// Draws `chart` at `size`; when it is scrolled out of view only the space is reserved.
pub fn draw(ui: &mut egui::Ui, chart: Chart<'_>, axis: TimeAxis, size: egui::Vec2) {
    ui.allocate_ui(size, |ui| {
        ui.set_min_size(size);
        ui.vertical(|ui| {
            ui.label(RichText::new(chart.title).strong()).on_hover_text(chart.help);
            let mut plot_height = size.y - 22.0;
            if !chart.caption.is_empty() {
                ui.label(RichText::new(chart.caption).small().weak());
                plot_height -= 18.0;
            }
            let plot_height = plot_height.max(40.0);
            let probe = egui::Rect::from_min_size(ui.cursor().min, egui::vec2(size.x, plot_height));
            if !ui.is_rect_visible(probe) {
                ui.add_space(plot_height);
                return;
            }
            if chart.series.iter().all(|s| s.points.is_empty()) {
                let (rect, _) = ui.allocate_exact_size(egui::vec2(size.x, plot_height), egui::Sense::hover());
                ui.painter().rect_stroke(
                    rect,
                    4.0,
                    ui.visuals().widgets.noninteractive.bg_stroke,
                    egui::StrokeKind::Inside,
                );
                ui.painter().text(
                    rect.center(),
                    egui::Align2::CENTER_CENTER,
                    "no data in this window",
                    egui::FontId::proportional(12.0),
                    ui.visuals().weak_text_color(),
                );
                return;
            }
            let unit = chart.unit;
            // Byte charts are plotted in GiB so the axis ticks land on whole GiB.
            let scale = if unit == Unit::Gib { 1.0 / units::GIB } else { 1.0 };
            let TimeAxis { from, to, started_unix, offset_secs, link } = axis;
            let mut plot = Plot::new(chart.id)
                .height(plot_height)
                .width(size.x - 14.0)
                .allow_zoom(false)
                .allow_drag(false)
                .allow_scroll(false)
                .allow_boxed_zoom(false)
                .show_background(false)
                .link_cursor(link, [true, false])
                .include_y(0.0)
                .x_axis_formatter(move |m, _| present::wall_clock(started_unix, m.value, offset_secs))
                .y_axis_formatter(move |m, _| unit.axis(m.value))
                .y_axis_min_width(48.0)
                .label_formatter(move |pos| match pos {
                    egui_plot::HoverPosition::NearDataPoint { plot_name, position, .. } => Some(format!(
                        "{plot_name}: {}\n{}",
                        unit.format(position.y),
                        present::wall_clock(started_unix, position.x, offset_secs)
                    )),
                    _ => None,
                });
            if matches!(unit, Unit::Percent | Unit::Celsius) {
                // Base-10 steps would label only 0 and 100 on a short chart.
                plot = plot.y_grid_spacer(egui_plot::uniform_grid_spacer(|_| [5.0, 25.0, 50.0]));
            }
            if chart.fixed_percent {
                plot = plot.include_y(100.0).auto_bounds([false, false]).default_y_bounds(0.0, 100.0);
            }
            plot.show(ui, |p| {
                p.set_plot_bounds_x(from..=to);
                if chart.fixed_percent {
                    p.set_plot_bounds_y(0.0..=105.0);
                }
                for r in chart.references {
                    // Solid rather than dashed: a dashed line is dozens of separate segments, each
                    // a cost on every frame for a software rasteriser.
                    p.hline(HLine::new(r.name, r.value * scale).color(r.color.gamma_multiply(0.6)).width(1.0));
                }
                for mut s in chart.series {
                    if scale != 1.0 {
                        s.points.iter_mut().for_each(|pt| pt[1] *= scale);
                    }
                    p.line(Line::new(s.name, PlotPoints::from(s.points)).color(s.color).width(1.5));
                }
            });
        });
    });
}
