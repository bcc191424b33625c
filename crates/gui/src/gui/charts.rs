//! Time-series charts: one look for every chart (linked time axis and hover cursor, wall-clock
//! axis labels, hover readouts with units and time), drawn only when on screen.

use eframe::egui::{self, Color32, RichText};
use egui_plot::{HLine, Line, Plot, PlotPoints, VLine};

use crate::present;
use crate::tr;
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
    /// A plain number (a load average).
    Number,
}

impl Unit {
    /// Formats a value of this unit.
    pub fn format(self, v: f64) -> String {
        match self {
            Unit::Percent => units::percent_whole(v),
            Unit::Gib => format!("{v:.1} GiB"),
            Unit::Rate => units::rate(v),
            Unit::Watts => format!("{v:.0} W"),
            Unit::Celsius => format!("{v:.0} °C"),
            Unit::Mhz => format!("{v:.0} MHz"),
            Unit::Number => format!("{v:.2}"),
        }
    }

    /// The label of a value-axis mark (empty below zero: no unit here has negative values).
    pub fn axis_label(self, v: f64) -> String {
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
            Unit::Number => format!("{v:.1}"),
        }
    }
}

/// A metric's unit as a chart's: percentages on a percent axis (a 0/1 flag too), bytes in GiB,
/// rates, watts, degrees, megahertz and plain numbers as they are.
impl From<units::MetricUnit> for Unit {
    fn from(u: units::MetricUnit) -> Unit {
        match u {
            units::MetricUnit::Percent | units::MetricUnit::CorePercent | units::MetricUnit::Flag => Unit::Percent,
            units::MetricUnit::Bytes => Unit::Gib,
            units::MetricUnit::BytesPerSec => Unit::Rate,
            units::MetricUnit::Watts => Unit::Watts,
            units::MetricUnit::Celsius => Unit::Celsius,
            units::MetricUnit::Mhz => Unit::Mhz,
            units::MetricUnit::Number => Unit::Number,
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
    /// Drawn dashed: the second metric of the same GPU (memory bandwidth beside utilization, TX
    /// beside RX), told apart by more than a fainter shade.
    pub dashed: bool,
}

impl Series {
    /// A solid line.
    pub fn solid(name: impl Into<String>, points: Vec<[f64; 2]>, color: Color32) -> Series {
        Series { name: name.into(), points, color, dashed: false }
    }
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
    /// Vertical marks at events (verdicts starting and ending, a GPU lost...).
    pub marks: Vec<Mark>,
}

/// A vertical mark at a point in time.
pub struct Mark {
    /// Seconds since sampler start.
    pub t: f64,
    /// What happened (shown on hover).
    pub name: String,
    /// Colour.
    pub color: Color32,
}

/// The names of the marks within `tolerance` seconds of `x`: what the vertical line under the
/// pointer stands for (a verdict starting or ending, a GPU lost).
pub fn marks_near(marks: &[(f64, String)], x: f64, tolerance: f64) -> Vec<&str> {
    marks.iter().filter(|(t, _)| (t - x).abs() <= tolerance).map(|(_, n)| n.as_str()).collect()
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

/// Wall-clock steps the time axis may use, seconds.
const TIME_STEPS: [f64; 17] = [
    1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0, 10800.0, 21600.0,
    43200.0,
];
/// Least distance between two time labels, points ("23:55:00" plus a gap).
const TIME_LABEL_SPACING: f64 = 110.0;
/// Time labels are centred on their mark; none closer to a chart edge than this, points.
const TIME_EDGE_PX: f64 = 30.0;
/// egui_plot hides grid lines closer than the lower end (points). Below every mark spacing used
/// here ([`VALUE_LABEL_SPACING`], [`TIME_LABEL_SPACING`]), so each labelled mark gets its line;
/// lines are drawn at one strength (no fading), so there is one level of grid.
const GRID_SPACING: std::ops::RangeInclusive<f32> = 24.0..=120.0;

/// Marks of the time axis: the smallest round wall-clock step (1 s ... 12 h) that keeps labels at
/// least [`TIME_LABEL_SPACING`] apart over `width_px`, placed on whole local-time multiples of it
/// (so a 5-minute window shows 23:54:00, 23:55:00, ... rather than arbitrary seconds). One level
/// only: minor lines would cost triangles on every frame and carry no label.
pub fn time_marks(from: f64, to: f64, width_px: f64, clock_offset: f64) -> Vec<egui_plot::GridMark> {
    let span = to - from;
    if !(span > 0.0 && width_px > 0.0) {
        return Vec::new();
    }
    let per_px = span / width_px;
    let step = TIME_STEPS.iter().copied().find(|s| s / per_px >= TIME_LABEL_SPACING).unwrap_or(86400.0);
    // Values v with (v + clock_offset) a multiple of step, not so close to either edge that the
    // centred label would run into the value axis or off the chart.
    let edge = TIME_EDGE_PX * per_px;
    let first = ((from + edge + clock_offset) / step).ceil() * step - clock_offset;
    let count = ((to - edge - first) / step).floor().max(-1.0) as i64 + 1;
    (0..count.max(0)).map(|k| egui_plot::GridMark { value: first + k as f64 * step, step_size: step }).collect()
}

/// Least distance between two value labels, points.
const VALUE_LABEL_SPACING: f64 = 30.0;

/// Width reserved for the value-axis labels of every chart, points: wide enough for the widest
/// label ("1.25 GB/s"), so the plot areas of neighbouring charts start at the same x.
pub const VALUE_AXIS_WIDTH: f32 = 76.0;

impl Unit {
    /// The smallest step between two value-axis marks whose labels still differ (in plotted
    /// units: GiB for [`Unit::Gib`]).
    fn least_step(self) -> f64 {
        match self {
            Unit::Percent | Unit::Gib | Unit::Rate | Unit::Watts | Unit::Celsius | Unit::Mhz => 1.0,
            Unit::Number => 0.1,
        }
    }

    /// The least top of the value axis (in plotted units): a small round value of the unit, so an
    /// all-zero or tiny series (an idle network, a GPU drawing nothing) reads "0 B/s, 250 B/s, ...
    /// 1 kB/s" rather than fractions of a byte, and the axis never centres on 0 with negative
    /// values.
    pub fn least_top(self) -> f64 {
        match self {
            Unit::Percent => 100.0,
            Unit::Gib => 1.0,
            Unit::Rate => 1000.0,
            Unit::Watts => 10.0,
            Unit::Celsius => 10.0,
            Unit::Mhz => 100.0,
            Unit::Number => 1.0,
        }
    }
}

/// Marks of a value axis in `unit`: the smallest step of the form 1, 2, 2.5 or 5 × 10^k that keeps
/// labels at least [`VALUE_LABEL_SPACING`] apart over `height_px` (so 0-450 W reads 0, 100, ...
/// 400 rather than 0 and 1000) and gives every mark its own label (so an all-zero rate chart never
/// reads "1 B/s, 1 B/s, 0 B/s, 0 B/s"), on multiples of the step, from zero up (no unit here has
/// negative values). One level only, as for [`time_marks`]: the grid lines are exactly the
/// labelled marks. Labels come out distinct and increasing.
pub fn value_marks(unit: Unit, lo: f64, hi: f64, height_px: f64) -> Vec<egui_plot::GridMark> {
    let span = hi - lo;
    if !(span > 0.0 && height_px > 0.0 && span.is_finite()) {
        return Vec::new();
    }
    let least = (span / height_px * VALUE_LABEL_SPACING).max(unit.least_step());
    let mut decade = 10f64.powf(least.log10().floor());
    // Try round steps from the least one up until every label differs (at most a few decades).
    for _ in 0..4 {
        for m in [1.0, 2.0, 2.5, 5.0] {
            let step = m * decade;
            if step < least {
                continue;
            }
            let first = (lo.max(0.0) / step).ceil() * step;
            let count = ((hi - first) / step).floor().max(-1.0) as i64 + 1;
            let marks: Vec<egui_plot::GridMark> = (0..count.clamp(0, 1000))
                .map(|k| egui_plot::GridMark { value: first + k as f64 * step, step_size: step })
                .collect();
            let labels: Vec<String> = marks.iter().map(|m| unit.axis_label(m.value)).collect();
            let distinct = labels.windows(2).all(|w| w[0] != w[1]);
            if distinct {
                return marks;
            }
        }
        decade *= 10.0;
    }
    Vec::new()
}

/// The mean of each solid line over the window it holds, as a thin reference line: a saw-tooth
/// that fills a long window solid still shows its level (a data-starved GPU's 30 %).
pub fn mean_references(series: &[Series]) -> Vec<Reference> {
    series
        .iter()
        .filter(|s| !s.dashed && !s.points.is_empty())
        .map(|s| {
            let mean = s.points.iter().map(|p| p[1]).sum::<f64>() / s.points.len() as f64;
            Reference {
                name: tr!("{series}: mean {value}", series = s.name, value = units::percent_whole(mean)),
                value: mean,
                color: s.color,
            }
        })
        .collect()
}

/// One entry of a chart's legend.
pub struct LegendEntry {
    /// The line's colour.
    pub color: Color32,
    /// Its name as the legend shows it ("thin: GPU 0 power limit" for a reference).
    pub name: String,
    /// Drawn dashed: the swatch is dashed, and the hover text says so.
    pub dashed: bool,
}

/// The legend of a chart: every line, then every reference (drawn thin).
pub fn legend(series: &[Series], references: &[Reference]) -> Vec<LegendEntry> {
    series
        .iter()
        .map(|s| LegendEntry { color: s.color, name: s.name.clone(), dashed: s.dashed })
        .chain(references.iter().map(|r| LegendEntry {
            color: r.color.gamma_multiply(0.6),
            name: tr!("thin: {name}", name = r.name),
            dashed: false,
        }))
        .collect()
}

/// The whole legend in words, for the hover text and screen readers.
fn legend_text(entries: &[LegendEntry]) -> String {
    entries
        .iter()
        .map(|e| if e.dashed { tr!("dashed: {name}", name = e.name) } else { e.name.clone() })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// One line of coloured swatches and names: the legend shown under a title without a caption.
fn legend_job(ui: &egui::Ui, entries: &[LegendEntry]) -> egui::text::LayoutJob {
    let mut job = egui::text::LayoutJob::default();
    // Legends are read, not glanced at: never below 11 points (egui's small text is 9).
    let mut font = egui::TextStyle::Small.resolve(ui.style());
    font.size = font.size.max(LEGEND_MIN_SIZE);
    let weak = ui.visuals().weak_text_color();
    for (k, e) in entries.iter().enumerate() {
        let fmt = |color| egui::TextFormat { font_id: font.clone(), color, ..Default::default() };
        if k > 0 {
            job.append(" · ", 0.0, fmt(weak));
        }
        job.append(if e.dashed { "- - " } else { "— " }, 0.0, fmt(e.color));
        job.append(&e.name, 0.0, fmt(weak));
    }
    job
}

/// The smallest legend text, points.
const LEGEND_MIN_SIZE: f32 = 11.0;

/// Draws `chart` at `size`; when it is scrolled out of view only the space is reserved.
pub fn draw(ui: &mut egui::Ui, chart: Chart<'_>, axis: TimeAxis, size: egui::Vec2) {
    ui.allocate_ui(size, |ui| {
        ui.set_min_size(size);
        ui.vertical(|ui| {
            ui.label(RichText::new(chart.title).strong()).on_hover_text(chart.help);
            // Every drawn line is named: the chart's caption, or else a legend of its lines, wrapped
            // onto as many lines as it needs (never cut with "…"); the plot gives up the height.
            let mut legend_height = 18.0;
            if chart.caption.is_empty() {
                let entries = legend(&chart.series, &chart.references);
                let full = legend_text(&entries);
                let mut job = legend_job(ui, &entries);
                job.wrap.max_width = size.x - 14.0;
                let galley = ui.painter().layout_job(job);
                legend_height = galley.size().y.max(legend_height);
                ui.add(egui::Label::new(galley)).on_hover_text(full);
            } else {
                ui.label(RichText::new(chart.caption).small().weak());
            }
            let plot_height = size.y - 22.0 - legend_height;
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
                    tr!("no data in this window"),
                    egui::FontId::proportional(12.0),
                    ui.visuals().weak_text_color(),
                );
                return;
            }
            let accessible_lines = legend_text(&legend(&chart.series, &chart.references));
            let unit = chart.unit;
            let grid_color = ui.visuals().widgets.noninteractive.bg_stroke.color;
            // Byte charts are plotted in GiB so the axis ticks land on whole GiB.
            let scale = if unit == Unit::Gib { 1.0 / units::GIB } else { 1.0 };
            let TimeAxis { from, to, started_unix, offset_secs, link } = axis;
            // The marks in view, named on hover within 6 points of the pointer.
            let near: Vec<(f64, String)> =
                chart.marks.iter().filter(|m| (from..=to).contains(&m.t)).map(|m| (m.t, m.name.clone())).collect();
            let tolerance = (to - from) / f64::from(size.x.max(1.0)) * 6.0;
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
                .include_y(unit.least_top())
                .x_axis_formatter(move |m, _| present::wall_clock(started_unix, m.value, offset_secs))
                .y_axis_formatter(move |m, _| unit.axis_label(m.value))
                .y_axis_min_width(VALUE_AXIS_WIDTH)
                .grid_spacing(GRID_SPACING)
                .grid_fade(0.0)
                .grid_color(grid_color)
                .x_grid_spacer(move |input| {
                    // bounds span / base_step_size = plot width / minimum grid spacing
                    let (lo, hi) = input.bounds;
                    let width_px = (hi - lo) / input.base_step_size * f64::from(*GRID_SPACING.start());
                    time_marks(lo, hi, width_px, started_unix + offset_secs as f64)
                })
                .y_grid_spacer(move |input| {
                    let (lo, hi) = input.bounds;
                    value_marks(unit, lo, hi, (hi - lo) / input.base_step_size * f64::from(*GRID_SPACING.start()))
                })
                .label_formatter(move |pos| {
                    let (x, value) = match pos {
                        egui_plot::HoverPosition::NearDataPoint { plot_name, position, .. } => {
                            (position.x, Some(format!("{plot_name}: {}", unit.format(position.y))))
                        }
                        egui_plot::HoverPosition::Elsewhere { position } => (position.x, None),
                    };
                    let marks = marks_near(&near, x, tolerance);
                    if value.is_none() && marks.is_empty() {
                        return None;
                    }
                    let mut lines: Vec<String> = marks.iter().map(|m| (*m).to_string()).collect();
                    lines.extend(value);
                    lines.push(present::wall_clock(started_unix, x, offset_secs));
                    Some(lines.join("\n"))
                });
            if chart.fixed_percent {
                plot = plot.include_y(100.0).auto_bounds([false, false]).default_y_bounds(0.0, 100.0);
            }
            let shown = plot.show(ui, |p| {
                p.set_plot_bounds_x(from..=to);
                if chart.fixed_percent {
                    p.set_plot_bounds_y(0.0..=105.0);
                }
                for r in chart.references {
                    // Solid rather than dashed: a dashed line is dozens of separate segments, each
                    // a cost on every frame for a software rasteriser.
                    p.hline(HLine::new(r.name, r.value * scale).color(r.color.gamma_multiply(0.6)).width(1.0));
                }
                for m in chart.marks {
                    if (from..=to).contains(&m.t) {
                        p.vline(VLine::new(m.name, m.t).color(m.color).width(1.0));
                    }
                }
                for mut s in chart.series {
                    if scale != 1.0 {
                        s.points.iter_mut().for_each(|pt| pt[1] *= scale);
                    }
                    let style =
                        if s.dashed { egui_plot::LineStyle::dashed_dense() } else { egui_plot::LineStyle::Solid };
                    p.line(Line::new(s.name, PlotPoints::from(s.points)).color(s.color).width(1.5).style(style));
                }
            });
            // Screen readers hear the chart by its title, and its lines in the description.
            let (title, lines) = (tr!("{title} (chart)", title = chart.title), accessible_lines.clone());
            ui.ctx().accesskit_node_builder(shown.response.id, |node| {
                node.set_label(title);
                node.set_description(lines);
            });
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_solid_line_gets_its_mean_and_a_dashed_one_none() {
        let util =
            Series::solid("GPU 0 utilization", vec![[0.0, 0.0], [1.0, 90.0], [2.0, 0.0], [3.0, 30.0]], Color32::RED);
        let mut bw = Series::solid("GPU 0 memory bandwidth", vec![[0.0, 10.0]], Color32::RED);
        bw.dashed = true;
        let refs = mean_references(&[util, bw]);
        assert_eq!(refs.len(), 1);
        assert!((refs[0].value - 30.0).abs() < 1e-9);
        assert_eq!(refs[0].name, "GPU 0 utilization: mean 30 %");
    }

    #[test]
    fn a_mark_under_the_pointer_is_named_and_one_further_away_is_not() {
        let marks = vec![(100.0, "data-starved starts".to_string()), (160.0, "data-starved ends".to_string())];
        assert_eq!(marks_near(&marks, 101.0, 2.0), vec!["data-starved starts"]);
        assert_eq!(marks_near(&marks, 160.0, 2.0), vec!["data-starved ends"]);
        assert!(marks_near(&marks, 130.0, 2.0).is_empty());
    }

    #[test]
    fn time_marks_land_on_round_local_times_and_keep_labels_apart() {
        // 5-minute window, 400 px wide; the clock offset makes t=0 fall at 23:53:57 local.
        let offset = 86_400.0 * 20_000.0 + 23.0 * 3600.0 + 53.0 * 60.0 + 57.0;
        let marks = time_marks(0.0, 300.0, 400.0, offset);
        assert!(!marks.is_empty() && marks.len() <= 4, "{marks:?}");
        let step = marks[0].step_size;
        assert!(step / (300.0 / 400.0) >= TIME_LABEL_SPACING);
        for m in &marks {
            assert!((TIME_EDGE_PX * 0.75..=300.0 - TIME_EDGE_PX * 0.75).contains(&m.value), "{m:?} at an edge");
            assert_eq!(((m.value + offset) % step).abs(), 0.0, "{m:?} not on a {step} s boundary");
        }
        // 24 h over 1200 px: hours, not seconds.
        let day = time_marks(0.0, 86_400.0, 1200.0, offset);
        assert!(day[0].step_size >= 3600.0 && day.len() <= 12, "{day:?}");
        // Degenerate ranges give no marks rather than a panic or a flood.
        assert!(time_marks(5.0, 5.0, 400.0, offset).is_empty());
        assert!(time_marks(0.0, 300.0, 0.0, offset).is_empty());
        assert!(time_marks(0.0, f64::NAN, 400.0, offset).is_empty());
    }

    /// Issue 38, item 13: memory bandwidth is told from utilization by a dashed line, and its
    /// legend swatch and hover text say so.
    #[test]
    fn a_dashed_series_has_a_dashed_swatch_and_says_so() {
        let green = Color32::from_rgb(118, 185, 0);
        let series = [
            Series::solid("GPU 0 utilization", Vec::new(), green),
            Series { dashed: true, ..Series::solid("GPU 0 memory bandwidth", Vec::new(), green.gamma_multiply(0.55)) },
        ];
        let entries = legend(&series, &[]);
        assert!(!entries[0].dashed && entries[1].dashed);
        assert_eq!(legend_text(&entries), "GPU 0 utilization · dashed: GPU 0 memory bandwidth");
    }

    #[test]
    fn value_marks_use_round_steps_a_label_apart() {
        let values = |lo, hi, px| value_marks(Unit::Watts, lo, hi, px).iter().map(|m| m.value).collect::<Vec<_>>();
        assert_eq!(values(0.0, 450.0, 150.0), vec![0.0, 100.0, 200.0, 300.0, 400.0]);
        assert_eq!(values(0.0, 105.0, 150.0), vec![0.0, 25.0, 50.0, 75.0, 100.0]);
        assert_eq!(values(0.0, 2.0e9, 150.0), vec![0.0, 5.0e8, 1.0e9, 1.5e9, 2.0e9]);
        // No unit has negative values: no marks (and no blank labels) below zero.
        assert_eq!(values(-3.0, 3.0, 150.0), vec![0.0, 2.0]);
        assert!(value_marks(Unit::Watts, 1.0, 1.0, 150.0).is_empty());
        assert!(value_marks(Unit::Watts, 0.0, f64::INFINITY, 150.0).is_empty());
    }

    /// The labels of the marks, checked distinct, increasing in value and inside `lo..=hi`.
    fn labels(unit: Unit, lo: f64, hi: f64, px: f64) -> Vec<String> {
        let marks = value_marks(unit, lo, hi, px);
        assert!(marks.windows(2).all(|w| w[0].value < w[1].value), "{unit:?} {lo}..{hi}: {marks:?}");
        assert!(marks.iter().all(|m| (lo..=hi).contains(&m.value)), "{unit:?} {lo}..{hi}: {marks:?}");
        let labels: Vec<String> = marks.iter().map(|m| unit.axis_label(m.value)).collect();
        let mut unique = labels.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), labels.len(), "{unit:?} {lo}..{hi}: repeated labels {labels:?}");
        assert!(labels.iter().all(|l| !l.is_empty()), "{unit:?}: blank label in {labels:?}");
        labels
    }

    #[test]
    fn flat_series_get_distinct_round_labels() {
        const ALL: [Unit; 7] =
            [Unit::Percent, Unit::Gib, Unit::Rate, Unit::Watts, Unit::Celsius, Unit::Mhz, Unit::Number];
        // All zero: the chart's y range is 0 to the unit's least top, plus egui_plot's margins.
        assert_eq!(
            labels(Unit::Rate, -0.05 * 1000.0, 1.05 * Unit::Rate.least_top(), 150.0),
            ["0 B/s", "250 B/s", "500 B/s", "750 B/s", "1 kB/s"]
        );
        for unit in ALL {
            let top = unit.least_top();
            let l = labels(unit, -0.05 * top, 1.05 * top, 150.0);
            assert!(l.len() >= 2, "{unit:?}: {l:?}");
            assert_eq!(l[0], unit.axis_label(0.0));
            // The range egui_plot would get if the top were not raised: 0..1 with margins. Old
            // code labelled it "0 B/s, 0 B/s, 1 B/s, 1 B/s".
            labels(unit, -0.05, 1.05, 150.0);
            // Tiny and constant non-zero ranges, short and tall charts.
            for (lo, hi) in [(0.0, 0.3), (0.0, 2.0), (0.0, 45.0), (0.0, 1.4e3), (0.0, 7.3e9), (0.2, 0.21)] {
                for px in [40.0, 150.0, 600.0] {
                    labels(unit, lo, hi, px);
                }
            }
        }
    }
}
