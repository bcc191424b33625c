//! The Monitor tab: per-GPU summary cards, GPU and host charts on one linked time axis, the GPU
//! process table, the time-window and pause controls, and the banner shown when there is no GPU
//! data.

use crate::i18n::Here as _;
use eframe::egui::{self, Color32, RichText};

use super::charts::{self, Chart, Reference, Series, TimeAxis, Unit, gpu_color};
use super::palette::{self, Tone};
use crate::diagnose::bottleneck::Bottleneck;
use crate::diagnose::headline::Headline;
use crate::telemetry::history::keys::{self, GpuMetric};
use crate::telemetry::history::{Event, EventLevel, History};
use crate::telemetry::metric::{self, GPU_METRICS, GpuChart, MetricDef};
use crate::telemetry::sample::{GpuInfo, GpuSample, HostSample};
use crate::telemetry::snapshot::Snapshot;
use crate::telemetry::source::SourceStatus;
use crate::tr;
use crate::units::{ByteUnits, MetricUnit};

mod diagnosis;
mod panels;
mod processes;
mod utilbar;

pub use panels::card_layout;
use panels::{
    COMPACT_FROM_GPUS, asleep_banner, gpu_card, gpu_table, host_summary, no_driver_banner, remote_banner, stall_banner,
};

/// Visible span of the charts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeWindow {
    /// 1 minute.
    Min1,
    /// 5 minutes.
    Min5,
    /// 15 minutes.
    Min15,
    /// 1 hour.
    Hour1,
    /// 24 hours.
    Hour24,
}

impl TimeWindow {
    /// Every window, in button order.
    pub const ALL: [TimeWindow; 5] =
        [TimeWindow::Min1, TimeWindow::Min5, TimeWindow::Min15, TimeWindow::Hour1, TimeWindow::Hour24];

    /// Length in seconds.
    pub fn secs(self) -> f64 {
        match self {
            TimeWindow::Min1 => 60.0,
            TimeWindow::Min5 => 300.0,
            TimeWindow::Min15 => 900.0,
            TimeWindow::Hour1 => 3600.0,
            TimeWindow::Hour24 => 86_400.0,
        }
    }

    /// Button label.
    pub fn label(self) -> &'static str {
        match self {
            TimeWindow::Min1 => "1 min",
            TimeWindow::Min5 => "5 min",
            TimeWindow::Min15 => "15 min",
            TimeWindow::Hour1 => "60 min",
            TimeWindow::Hour24 => "24 h",
        }
    }
}

/// Column the process table is sorted by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessSort {
    /// GPU index.
    Gpu,
    /// Process id.
    Pid,
    /// Process name.
    Name,
    /// VRAM used.
    Vram,
    /// The process's share of the GPU (its kernels' time).
    Sm,
    /// Compute / graphics.
    Kind,
}

/// The demo scenarios as menu entries (name and what it shows); the one picked, if any.
pub fn demo_menu(ui: &mut egui::Ui) -> Option<crate::telemetry::demo::Scenario> {
    let mut picked = None;
    for s in crate::telemetry::demo::Scenario::ALL {
        if ui.button(format!("{} — {}", s.name(), s.description().here())).clicked() {
            picked = Some(s);
            ui.close();
        }
    }
    picked
}

/// Something the Monitor asks the app shell to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MonitorAction {
    /// Switch to demo data of this scenario.
    TryDemo(crate::telemetry::demo::Scenario),
    /// Switch back to the real machine.
    LeaveDemo,
    /// Read the sleeping GPU anyway (wakes it).
    WakeGpu,
    /// Open the Checklist tab.
    OpenChecklist,
    /// Start recording to a new file.
    StartRecording,
    /// Stop recording.
    StopRecording,
    /// Open "Connect to a server".
    ConnectServer,
    /// Try the server again now.
    Reconnect,
    /// Leave the server for this machine.
    Disconnect,
}

/// State of the Monitor tab.
#[derive(Clone, Debug, PartialEq)]
pub struct MonitorState {
    /// Visible time span.
    pub window: TimeWindow,
    /// When paused, the sampler time the view is frozen at (sampling goes on).
    pub paused_at: Option<f64>,
    /// Show only this GPU's lines (None: all GPUs).
    pub gpu_filter: Option<u32>,
    /// With several GPUs, one utilization chart per GPU (small multiples) instead of one chart
    /// where their lines overlap.
    pub split_util: bool,
    /// Process table sort column.
    pub sort: ProcessSort,
    /// Sort descending.
    pub sort_desc: bool,
    /// Seconds of history the bottleneck verdicts judge.
    pub diag_window: f64,
    /// The verdicts shown in the Diagnosis panel (set by the app before drawing).
    pub verdicts: Vec<Bottleneck>,
    /// Each GPU's utilization over the verdicts' window (set by the app with the verdicts): what
    /// the cards and the table lead with.
    pub util: Vec<crate::diagnose::bottleneck::UtilWindow>,
    /// Seconds until the first verdict, while the history covers too little of the window (set
    /// by the app with the verdicts).
    pub first_verdict_in: Option<f64>,
    /// The span a replay shorter than the window was judged over, seconds (set by the app).
    pub judged_span: Option<f64>,
    /// A process the user asked to focus on (taken by the app).
    pub focus_request: Option<u32>,
    /// A process the user asked to end: PID, name, GPU (taken by the app, which asks to confirm).
    pub end_request: Option<(u32, String, u32)>,
    /// Whose each listed process is, decided once when it first appears in the list (not on
    /// every frame: on Windows it takes a process snapshot), dropped when it leaves the list.
    pub owners: std::collections::HashMap<u32, crate::telemetry::endproc::Owner>,
    /// How byte counts are shown (the app copies the "Byte units" setting here).
    pub units: ByteUnits,
    /// The checklist's root cause, shown first in the no-GPU banner (set by the app).
    pub root_cause: Option<Headline>,
    /// The checklist is running (the banner says so instead of guessing).
    pub checking: bool,
}

impl Default for MonitorState {
    fn default() -> Self {
        MonitorState {
            window: TimeWindow::Min5,
            paused_at: None,
            gpu_filter: None,
            split_util: false,
            sort: ProcessSort::Vram,
            sort_desc: true,
            diag_window: crate::diagnose::bottleneck::DEFAULT_WINDOW_SECS,
            verdicts: Vec::new(),
            util: Vec::new(),
            first_verdict_in: None,
            judged_span: None,
            focus_request: None,
            end_request: None,
            owners: std::collections::HashMap::new(),
            units: ByteUnits::default(),
            root_cause: None,
            checking: false,
        }
    }
}

/// Most points per chart line when a chart has one or two lines (about one per two pixels of a
/// chart column); min/max decimation keeps spikes.
const CHART_POINTS: usize = 160;
/// Points shared by all lines of one chart. Each point costs vertices on every frame, which a
/// software rasteriser pays for on the CPU; with many GPUs each line gets fewer points.
const CHART_POINT_BUDGET: usize = 360;
/// Fewest points per line, however many GPUs are shown.
const CHART_MIN_POINTS: usize = 45;

/// Points per line for a chart with `lines` lines.
fn points_per_line(lines: usize) -> usize {
    (CHART_POINT_BUDGET / lines.max(1)).clamp(CHART_MIN_POINTS, CHART_POINTS)
}

/// What the Monitor's charts draw, copied out of the history while its lock is held (briefly),
/// so laying out and drawing the tab never holds the lock the sampler threads append under.
#[derive(Clone, Debug, Default)]
pub struct MonitorData {
    points: std::collections::HashMap<String, Vec<[f64; 2]>>,
    /// The history's events (chart marks).
    pub events: Vec<Event>,
}

impl MonitorData {
    /// Copies the `wanted` series (key, point budget) over `[from, to]` and the events in it.
    pub fn gather(h: &History, wanted: &[(String, usize)], from: f64, to: f64) -> Self {
        let points = wanted.iter().map(|(key, max)| (key.clone(), h.points(key, from, to, *max))).collect();
        let events = h.events().filter(|e| e.t >= from && e.t <= to).cloned().collect();
        MonitorData { points, events }
    }

    /// The points of one series (empty when it was not gathered or has no data).
    pub fn points(&self, key: &str) -> Vec<[f64; 2]> {
        self.points.get(key).cloned().unwrap_or_default()
    }
}

impl MonitorState {
    /// Draws the tab. `now` is the sampler time of the right edge when not paused.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        snap: &Snapshot,
        data: &MonitorData,
        now: f64,
        offset_secs: i64,
    ) -> Option<MonitorAction> {
        let mut action = None;
        let view_before = (self.window, self.paused_at, self.gpu_filter);
        egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
            let remote_down = snap.remote.as_ref().filter(|r| r.state != crate::telemetry::remote::RemoteState::Live);
            if let Some(r) = remote_down {
                // The link's state is the news: the GPU source below it only repeats it.
                action = remote_banner(ui, r);
            }
            match &snap.source {
                _ if remote_down.is_some() => {}
                SourceStatus::Unavailable(no) => {
                    action = no_driver_banner(ui, no, self.root_cause.as_ref(), self.checking);
                }
                SourceStatus::Asleep { functions } => action = asleep_banner(ui, functions),
                SourceStatus::Opening => {
                    ui.weak(tr!("Opening NVML (the NVIDIA Management Library)…"));
                }
                _ => {}
            }
            if let Some(stall) = &snap.gpu_stall {
                stall_banner(ui, stall);
            }
            self.cards(ui, snap);
            if !snap.inventory.gpus.is_empty() {
                // Without GPU data the banner above is the diagnosis; no empty verdict panel.
                ui.add_space(6.0);
                self.diagnosis(ui);
            }
            ui.add_space(6.0);
            self.toolbar(ui, snap, now);
            let to = self.paused_at.unwrap_or(now);
            let axis = TimeAxis {
                from: to - self.window.secs(),
                to,
                started_unix: snap.started_unix,
                offset_secs,
                link: egui::Id::unique("monitor_time_axis"),
            };
            if !snap.inventory.gpus.is_empty() {
                ui.add_space(4.0);
                self.gpu_charts(ui, snap, data, axis);
            }
            ui.add_space(8.0);
            ui.heading(tr!("Host"));
            host_summary(ui, snap.host.as_ref(), self.units);
            host_charts(ui, snap.host.as_ref(), data, axis);
            if !snap.inventory.gpus.is_empty() {
                ui.add_space(8.0);
                let here = if snap.remote.is_some() {
                    processes::Where::Server
                } else if matches!(snap.source, SourceStatus::Nvml { .. }) {
                    processes::Where::ThisMachine
                } else {
                    processes::Where::NotLive
                };
                self.process_table(ui, &snap.gpus, here);
            }
        });
        if (self.window, self.paused_at, self.gpu_filter) != view_before {
            // The series were copied for the old view before this frame: draw the new one now.
            ui.ctx().request_repaint();
        }
        action
    }

    /// The time span the charts show: `[from, to]` in sampler seconds.
    pub fn span(&self, now: f64) -> (f64, f64) {
        let to = self.paused_at.unwrap_or(now);
        (to - self.window.secs(), to)
    }

    /// The history series the charts draw, each with its point budget.
    pub fn wanted_series(&self, snap: &Snapshot) -> Vec<(String, usize)> {
        let gpus: Vec<u32> = snap.inventory.gpus.iter().map(|g| g.index).filter(|i| self.shown(*i)).collect();
        let per_line = points_per_line(2 * gpus.len());
        let mut out = Vec::new();
        for i in gpus {
            for d in GPU_METRICS.iter().filter(|d| d.chart.is_some()) {
                out.push((keys::gpu(i, d.key), per_line));
            }
        }
        // (The host charts draw every host series kept over time: the host table's.)
        for key in crate::telemetry::host_metric::HOST_METRICS.iter().filter_map(|d| d.key) {
            out.push((key.to_string(), CHART_POINTS));
        }
        out
    }

    fn toolbar(&mut self, ui: &mut egui::Ui, snap: &Snapshot, now: f64) {
        ui.horizontal_wrapped(|ui| {
            ui.label(tr!("Window:"));
            for w in TimeWindow::ALL {
                // (In the reader's words: "5 min", "5 分钟".)
                ui.selectable_value(&mut self.window, w, crate::units::duration_words(w.secs()).here());
            }
            ui.separator();
            let paused = self.paused_at.is_some();
            if ui
                .button(if paused { tr!("Resume") } else { tr!("Pause") })
                .on_hover_text(tr!("Freeze the charts; sampling goes on in the background."))
                .clicked()
            {
                self.paused_at = if paused { None } else { Some(now) };
            }
            if paused {
                ui.label(RichText::new(tr!("PAUSED")).strong().color(palette::tone(ui, Tone::Warn)));
            }
            if snap.inventory.gpus.len() > 1 {
                ui.separator();
                ui.label(tr!("GPUs:"));
                ui.selectable_value(&mut self.gpu_filter, None, tr!("All"));
                for g in &snap.inventory.gpus {
                    ui.selectable_value(&mut self.gpu_filter, Some(g.index), format!("GPU {}", g.index));
                }
                if self.gpu_filter.is_none() {
                    ui.separator();
                    ui.toggle_value(&mut self.split_util, tr!("Utilization per GPU")).on_hover_text(tr!(
                        "One small utilization chart per GPU instead of one chart where their lines overlap"
                    ));
                }
            }
        });
    }

    fn shown(&self, index: u32) -> bool {
        self.gpu_filter.is_none_or(|f| f == index)
    }

    fn cards(&self, ui: &mut egui::Ui, snap: &Snapshot) {
        if snap.inventory.gpus.is_empty() {
            return;
        }
        if snap.inventory.gpus.len() >= COMPACT_FROM_GPUS {
            // Many GPUs: one row each, so the charts stay above the fold.
            gpu_table(ui, snap, &self.verdicts, &self.util);
            return;
        }
        let (per_row, width) =
            card_layout(ui.available_width(), ui.spacing().item_spacing.x, snap.inventory.gpus.len());
        // Explicit rows: horizontal_wrapped does not wrap framed groups.
        for row in snap.inventory.gpus.chunks(per_row) {
            ui.horizontal_top(|ui| {
                for info in row {
                    let sample = snap.gpus.iter().find(|g| g.index == info.index);
                    let util = self.util.iter().find(|u| u.gpu == info.index);
                    gpu_card(ui, info, sample, width, &self.verdicts, util);
                }
            });
        }
    }

    fn gpu_charts(&self, ui: &mut egui::Ui, snap: &Snapshot, h: &MonitorData, axis: TimeAxis) {
        let gpus: Vec<&GpuInfo> = snap.inventory.gpus.iter().filter(|g| self.shown(g.index)).collect();
        let latest = |i: u32| snap.gpus.iter().find(|g| g.index == i);
        // Small multiples: each GPU's utilization lines in a chart of its own.
        let split = self.split_util && gpus.len() > 1;
        let names: Vec<(String, String)> = if split {
            gpus.iter()
                .map(|g| {
                    (format!("gpu_util_{}", g.index), tr!("GPU {gpu} utilization and memory bandwidth", gpu = g.index))
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut charts = Vec::new();
        // Each chart draws the metrics the table puts in it, each GPU's lines together.
        for group in GpuChart::ALL {
            let defs: Vec<&MetricDef> =
                GPU_METRICS.iter().filter(|d| d.chart.is_some_and(|c| c.chart == group)).collect();
            let Some(first) = defs.first() else { continue };
            let (unit, fixed_percent) = (Unit::from(first.unit), first.unit == MetricUnit::Percent);
            let (title, help) = (crate::i18n::tr(group.title()), crate::i18n::tr(group.help()));
            let per_gpu: Vec<Vec<Series>> = gpus.iter().map(|g| gpu_lines(h, g.index, &defs)).collect();
            if group == GpuChart::Util {
                // The utilization charts carry the events' marks and each solid line's mean.
                let titled: Vec<(&str, &str, Vec<Series>)> = if split {
                    names
                        .iter()
                        .zip(per_gpu)
                        .map(|((id, title), series)| (id.as_str(), title.as_str(), series))
                        .collect()
                } else {
                    vec![(group.id(), title, per_gpu.into_iter().flatten().collect())]
                };
                for (id, title, series) in titled {
                    charts.push(Chart {
                        id,
                        title,
                        help,
                        caption: "",
                        unit,
                        references: charts::mean_references(&series),
                        series,
                        fixed_percent,
                        marks: event_marks(h, &axis),
                    });
                }
                continue;
            }
            charts.push(Chart {
                id: group.id(),
                title,
                help,
                caption: "",
                unit,
                series: per_gpu.into_iter().flatten().collect(),
                references: gpus.iter().filter_map(|g| reference(group, g, latest(g.index))).collect(),
                fixed_percent,
                marks: Vec::new(),
            });
        }
        ui.label(
            RichText::new(tr!(
                "Line colour = GPU, as on the cards. Dashed lines: memory bandwidth (utilization chart) and TX (PCIe \
                 chart). Thin lines: totals, limits, thresholds and maxima. Hover a title for details."
            ))
            .small()
            .weak(),
        );
        chart_grid(ui, charts, axis);
    }
}

fn chart_grid(ui: &mut egui::Ui, charts: Vec<Chart<'_>>, axis: TimeAxis) {
    let avail = ui.available_width();
    let cols = if avail > 1100.0 {
        3
    } else if avail > 700.0 {
        2
    } else {
        1
    };
    let spacing = ui.spacing().item_spacing.x;
    let w = ((avail - spacing * (cols as f32 - 1.0)) / cols as f32 - 4.0).floor().max(160.0);
    let size = egui::vec2(w, 190.0);
    let mut it = charts.into_iter().peekable();
    while it.peek().is_some() {
        ui.horizontal(|ui| {
            for _ in 0..cols {
                if let Some(c) = it.next() {
                    charts::draw(ui, c, axis, size);
                }
            }
        });
    }
}

/// One GPU's lines of a chart: its metrics `defs` in the table's order, named as the table names
/// them, in the GPU's colour (a dashed line fainter).
fn gpu_lines(h: &MonitorData, gpu: u32, defs: &[&MetricDef]) -> Vec<Series> {
    let c = gpu_color(gpu);
    defs.iter()
        .filter_map(|d| {
            let (line, name) = (d.chart?, d.chart_name(gpu)?);
            Some(Series {
                name: name.here(),
                points: h.points(&keys::gpu(gpu, d.key)),
                color: if line.dashed { c.gamma_multiply(0.55) } else { c },
                dashed: line.dashed,
            })
        })
        .collect()
}

/// A GPU's thin reference line in a chart: its VRAM total, its enforced power limit (the latest
/// reading), its slowdown temperature, its maximum SM clock.
fn reference(chart: GpuChart, g: &GpuInfo, latest: Option<&GpuSample>) -> Option<Reference> {
    let i = g.index;
    let (name, value) = match chart {
        GpuChart::Vram => (tr!("GPU {i} VRAM total", i = i), g.vram_total_bytes.get()? as f64),
        GpuChart::Power => {
            let limit = metric::def(GpuMetric::PowerLimit)?;
            (limit.for_gpu(i).here(), (limit.read)(latest?)?)
        }
        GpuChart::Temp => (tr!("GPU {i} slowdown", i = i), f64::from(g.slowdown_temp_c.get()?)),
        GpuChart::Clock => (tr!("GPU {i} max SM clock", i = i), f64::from(g.max_sm_clock_mhz.get()?)),
        GpuChart::Util | GpuChart::Pcie => return None,
    };
    Some(Reference { name, value, color: gpu_color(i) })
}

/// Vertical marks for the history's events in the visible window (verdicts starting and ending,
/// lost GPUs, a driver not answering).
fn event_marks(h: &MonitorData, axis: &TimeAxis) -> Vec<charts::Mark> {
    h.events
        .iter()
        .filter(|e| e.t >= axis.from && e.t <= axis.to)
        .map(|e| charts::Mark {
            t: e.t,
            name: e.text.here(),
            color: match e.level {
                EventLevel::Info => Color32::from_rgb(144, 202, 249),
                EventLevel::Warn => Color32::from_rgb(255, 183, 77),
                EventLevel::Error => Color32::from_rgb(239, 83, 80),
            },
        })
        .collect()
}

fn host_charts(ui: &mut egui::Ui, host: Option<&HostSample>, h: &MonitorData, axis: TimeAxis) {
    let pts = |key: &str| h.points(key);
    let ram_total = host.and_then(|x| x.memory.value().map(|m| m.ram_total_bytes as f64));
    let charts = vec![
        Chart {
            id: "host_cpu",
            title: tr!("CPU utilization (all cores)"),
            help: tr!("Average over all logical CPUs; see the per-core strip for single saturated cores."),
            caption: tr!("average over all logical CPUs"),
            unit: Unit::Percent,
            series: vec![Series::solid("CPU", pts(keys::CPU), Color32::from_rgb(66, 165, 245))],
            references: Vec::new(),
            fixed_percent: true,
            marks: Vec::new(),
        },
        Chart {
            id: "host_ram",
            title: tr!("RAM used"),
            help: tr!("Host memory in use; the thin line is the total."),
            caption: tr!("purple: RAM used · red: swap used · thin grey: total"),
            unit: Unit::Gib,
            series: vec![
                Series::solid(tr!("RAM used"), pts(keys::RAM_USED), Color32::from_rgb(171, 71, 188)),
                Series::solid(tr!("swap used"), pts(keys::SWAP_USED), Color32::from_rgb(239, 83, 80)),
            ],
            references: ram_total
                .map(|t| vec![Reference { name: tr!("RAM total").into(), value: t, color: Color32::GRAY }])
                .unwrap_or_default(),
            fixed_percent: false,
            marks: Vec::new(),
        },
        Chart {
            id: "host_disk",
            title: tr!("Disk read / write"),
            help: tr!("Sum over physical disks."),
            caption: tr!("cyan: read · orange: write (physical disks)"),
            unit: Unit::Rate,
            series: vec![
                Series::solid(tr!("read"), pts(keys::DISK_READ), Color32::from_rgb(38, 198, 218)),
                Series::solid(tr!("write"), pts(keys::DISK_WRITE), Color32::from_rgb(255, 167, 38)),
            ],
            references: Vec::new(),
            fixed_percent: false,
            marks: Vec::new(),
        },
        Chart {
            id: "host_iowait",
            title: tr!("CPU iowait and I/O pressure"),
            help: tr!(
                "iowait: share of CPU time idle while waiting for I/O. I/O pressure: share of time some task stalled on I/O (Linux PSI)."
            ),
            caption: tr!("orange: iowait · yellow: I/O pressure (PSI some, 10 s)"),
            unit: Unit::Percent,
            series: vec![
                Series::solid("iowait", pts(keys::IOWAIT), Color32::from_rgb(255, 112, 67)),
                Series::solid(tr!("I/O pressure"), pts(keys::PSI_IO), Color32::from_rgb(255, 202, 40)),
            ],
            references: Vec::new(),
            fixed_percent: true,
            marks: Vec::new(),
        },
        Chart {
            id: "host_net",
            title: tr!("Network receive / transmit"),
            help: tr!("Sum over all interfaces except loopback."),
            caption: tr!("green: receive · brown: transmit"),
            unit: Unit::Rate,
            series: vec![
                Series::solid("rx", pts(keys::NET_RX), Color32::from_rgb(102, 187, 106)),
                Series::solid("tx", pts(keys::NET_TX), Color32::from_rgb(141, 110, 99)),
            ],
            references: Vec::new(),
            fixed_percent: false,
            marks: Vec::new(),
        },
    ];
    chart_grid(ui, charts, axis);
}
