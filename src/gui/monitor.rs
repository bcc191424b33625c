//! The Monitor tab: per-GPU summary cards, GPU and host charts on one linked time axis, the GPU
//! process table, the time-window and pause controls, and the banner shown when there is no GPU
//! data.

use eframe::egui::{self, Color32, RichText};

use super::charts::{self, Chart, Reference, Series, TimeAxis, Unit, gpu_color};
use crate::diagnose::bottleneck::Bottleneck;
use crate::present;
use crate::telemetry::history::{EventLevel, History, keys};
use crate::telemetry::sample::{GpuHealth, GpuInfo, GpuProcess, GpuSample, HostSample};
use crate::telemetry::snapshot::Snapshot;
use crate::telemetry::source::SourceStatus;
use crate::telemetry::throttle;
use crate::units::{self, ByteUnits};

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
    /// Compute / graphics.
    Kind,
}

/// Something the Monitor asks the app shell to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MonitorAction {
    /// Switch to demo data.
    TryDemo,
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
    /// Process table sort column.
    pub sort: ProcessSort,
    /// Sort descending.
    pub sort_desc: bool,
    /// Seconds of history the bottleneck verdicts judge.
    pub diag_window: f64,
    /// The verdicts shown in the Diagnosis panel (set by the app before drawing).
    pub verdicts: Vec<Bottleneck>,
    /// A process the user asked to focus on (taken by the app).
    pub focus_request: Option<u32>,
    /// How byte counts are shown (the app copies the "Byte units" setting here).
    pub units: ByteUnits,
}

impl Default for MonitorState {
    fn default() -> Self {
        MonitorState {
            window: TimeWindow::Min5,
            paused_at: None,
            gpu_filter: None,
            sort: ProcessSort::Vram,
            sort_desc: true,
            diag_window: crate::diagnose::bottleneck::DEFAULT_WINDOW_SECS,
            verdicts: Vec::new(),
            focus_request: None,
            units: ByteUnits::default(),
        }
    }
}

/// One row of the process table.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcessRow {
    /// GPU index.
    pub gpu: u32,
    /// The process.
    pub process: GpuProcess,
}

/// Rows of every GPU's processes, sorted as asked.
pub fn process_rows(gpus: &[GpuSample], sort: ProcessSort, desc: bool) -> Vec<ProcessRow> {
    let mut rows: Vec<ProcessRow> = gpus
        .iter()
        .filter_map(|g| g.processes.value().map(|ps| (g.index, ps)))
        .flat_map(|(gpu, ps)| ps.iter().map(move |p| ProcessRow { gpu, process: p.clone() }))
        .collect();
    rows.sort_by(|a, b| {
        let o = match sort {
            ProcessSort::Gpu => a.gpu.cmp(&b.gpu),
            ProcessSort::Pid => a.process.pid.cmp(&b.process.pid),
            ProcessSort::Name => a.process.name.to_lowercase().cmp(&b.process.name.to_lowercase()),
            ProcessSort::Vram => a.process.vram_bytes.get().cmp(&b.process.vram_bytes.get()),
            ProcessSort::Kind => a.process.kind.cmp(&b.process.kind),
        };
        let o = o.then(a.process.pid.cmp(&b.process.pid));
        if desc { o.reverse() } else { o }
    });
    rows
}

/// Narrowest GPU card content, points (the longest value row fits).
const CARD_MIN_WIDTH: f32 = 272.0;
/// Widest GPU card content, points.
const CARD_MAX_WIDTH: f32 = 340.0;
/// Inner margin of a GPU card, points.
const CARD_MARGIN: f32 = 8.0;
/// What a card frame adds to its content width: margins and the 1-point stroke on both sides.
const CARD_FRAME: f32 = 2.0 * CARD_MARGIN + 2.0;
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

impl MonitorState {
    /// Draws the tab. `now` is the sampler time of the right edge when not paused.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        snap: &Snapshot,
        history: &History,
        now: f64,
        offset_secs: i64,
    ) -> Option<MonitorAction> {
        let mut action = None;
        egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
            match &snap.source {
                SourceStatus::Unavailable(no) => action = no_driver_banner(ui, no),
                SourceStatus::Asleep { functions } => action = asleep_banner(ui, functions),
                SourceStatus::Opening => {
                    ui.weak("Opening NVML (the NVIDIA Management Library)…");
                }
                _ => {}
            }
            if let Some(stall) = &snap.gpu_stall {
                stall_banner(ui, stall);
            }
            self.cards(ui, snap);
            ui.add_space(6.0);
            self.diagnosis(ui);
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
                self.gpu_charts(ui, snap, history, axis);
            }
            ui.add_space(8.0);
            ui.heading("Host");
            host_summary(ui, snap.host.as_ref());
            host_charts(ui, snap.host.as_ref(), history, axis);
            if !snap.inventory.gpus.is_empty() {
                ui.add_space(8.0);
                self.process_table(ui, &snap.gpus);
            }
        });
        action
    }

    fn toolbar(&mut self, ui: &mut egui::Ui, snap: &Snapshot, now: f64) {
        ui.horizontal_wrapped(|ui| {
            ui.label("Window:");
            for w in TimeWindow::ALL {
                ui.selectable_value(&mut self.window, w, w.label());
            }
            ui.separator();
            let paused = self.paused_at.is_some();
            if ui
                .button(if paused { "Resume" } else { "Pause" })
                .on_hover_text("Freeze the charts; sampling goes on in the background.")
                .clicked()
            {
                self.paused_at = if paused { None } else { Some(now) };
            }
            if paused {
                ui.label(RichText::new("PAUSED").strong().color(Color32::from_rgb(255, 183, 77)));
            }
            if snap.inventory.gpus.len() > 1 {
                ui.separator();
                ui.label("GPUs:");
                ui.selectable_value(&mut self.gpu_filter, None, "All");
                for g in &snap.inventory.gpus {
                    ui.selectable_value(&mut self.gpu_filter, Some(g.index), format!("GPU {}", g.index));
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
        let (per_row, width) =
            card_layout(ui.available_width(), ui.spacing().item_spacing.x, snap.inventory.gpus.len());
        // Explicit rows: horizontal_wrapped does not wrap framed groups.
        for row in snap.inventory.gpus.chunks(per_row) {
            ui.horizontal_top(|ui| {
                for info in row {
                    let sample = snap.gpus.iter().find(|g| g.index == info.index);
                    gpu_card(ui, info, sample, width);
                }
            });
        }
    }

    fn gpu_charts(&self, ui: &mut egui::Ui, snap: &Snapshot, h: &History, axis: TimeAxis) {
        let gpus: Vec<&GpuInfo> = snap.inventory.gpus.iter().filter(|g| self.shown(g.index)).collect();
        // The busiest charts (utilization, PCIe) have two lines per GPU.
        let max_points = points_per_line(2 * gpus.len());
        let line = |i: u32, metric: &str, name: String, color: Color32| Series {
            name,
            points: h.points(&keys::gpu(i, metric), axis.from, axis.to, max_points),
            color,
        };
        let latest = |i: u32| snap.gpus.iter().find(|g| g.index == i);
        let mut util = Vec::new();
        let mut vram = Vec::new();
        let mut power = Vec::new();
        let mut temp = Vec::new();
        let mut clock = Vec::new();
        let mut pcie = Vec::new();
        let (mut vram_ref, mut power_ref, mut temp_ref, mut clock_ref) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for g in &gpus {
            let i = g.index;
            let c = gpu_color(i);
            util.push(line(i, "util", format!("GPU {i} GPU utilization"), c));
            util.push(line(i, "membw", format!("GPU {i} memory bandwidth"), c.gamma_multiply(0.55)));
            vram.push(line(i, "vram_used", format!("GPU {i} VRAM used"), c));
            if let Some(total) = g.vram_total_bytes.get() {
                vram_ref.push(Reference { name: format!("GPU {i} VRAM total"), value: total as f64, color: c });
            }
            power.push(line(i, "power", format!("GPU {i} power"), c));
            if let Some(limit) = latest(i).and_then(|s| s.power_limit_w.get()) {
                power_ref.push(Reference { name: format!("GPU {i} power limit"), value: limit, color: c });
            }
            temp.push(line(i, "temp", format!("GPU {i} temperature"), c));
            if let Some(s) = g.slowdown_temp_c.get() {
                temp_ref.push(Reference { name: format!("GPU {i} slowdown"), value: f64::from(s), color: c });
            }
            clock.push(line(i, "sm_clock", format!("GPU {i} SM clock"), c));
            if let Some(m) = g.max_sm_clock_mhz.get() {
                clock_ref.push(Reference { name: format!("GPU {i} max SM clock"), value: f64::from(m), color: c });
            }
            pcie.push(line(i, "pcie_rx", format!("GPU {i} PCIe RX (to GPU)"), c));
            pcie.push(line(i, "pcie_tx", format!("GPU {i} PCIe TX (from GPU)"), c.gamma_multiply(0.55)));
        }
        let charts = vec![
            Chart {
                id: "gpu_util",
                title: "GPU utilization and memory bandwidth utilization",
                help: "GPU utilization: % of time a kernel ran. Memory bandwidth utilization: % of time device memory was read or written. Neither is the share of VRAM in use.",
                caption: "",
                unit: Unit::Percent,
                series: util,
                references: Vec::new(),
                fixed_percent: true,
                marks: event_marks(h, &axis),
            },
            Chart {
                id: "gpu_vram",
                title: "VRAM used vs total",
                help: "Device memory in use; the thin line is each GPU's total.",
                caption: "",
                unit: Unit::Gib,
                series: vram,
                references: vram_ref,
                fixed_percent: false,
                marks: Vec::new(),
            },
            Chart {
                id: "gpu_power",
                title: "Power draw vs enforced limit",
                help: "Board power draw; the thin line is the power limit the driver enforces.",
                caption: "",
                unit: Unit::Watts,
                series: power,
                references: power_ref,
                fixed_percent: false,
                marks: Vec::new(),
            },
            Chart {
                id: "gpu_temp",
                title: "Temperature vs slowdown threshold",
                help: "GPU core temperature; the thin line is where the hardware starts to slow down.",
                caption: "",
                unit: Unit::Celsius,
                series: temp,
                references: temp_ref,
                fixed_percent: false,
                marks: Vec::new(),
            },
            Chart {
                id: "gpu_clock",
                title: "SM clock vs maximum (MHz)",
                help: "Streaming-multiprocessor clock; the thin line is the maximum. Far below the maximum under load means throttling.",
                caption: "",
                unit: Unit::Mhz,
                series: clock,
                references: clock_ref,
                fixed_percent: false,
                marks: Vec::new(),
            },
            Chart {
                id: "gpu_pcie",
                title: "PCIe throughput",
                help: "Host-to-GPU (RX) and GPU-to-host (TX) traffic, sampled every 2 s or slower (the NVML call is slow).",
                caption: "",
                unit: Unit::Rate,
                series: pcie,
                references: Vec::new(),
                fixed_percent: false,
                marks: Vec::new(),
            },
        ];
        ui.label(
            RichText::new(
                "Line colour = GPU, as on the cards. Faded lines: memory bandwidth (utilization chart) and TX (PCIe \
                 chart). Thin lines: totals, limits, thresholds and maxima. Hover a title for details.",
            )
            .small()
            .weak(),
        );
        chart_grid(ui, charts, axis);
    }

    fn process_table(&mut self, ui: &mut egui::Ui, gpus: &[GpuSample]) {
        ui.heading("GPU processes");
        let unavailable: Vec<String> =
            gpus.iter().filter_map(|g| g.processes.reason().map(|r| format!("GPU {}: {r}", g.index))).collect();
        let rows = process_rows(gpus, self.sort, self.sort_desc);
        if rows.is_empty() {
            ui.label(if unavailable.is_empty() { "No process is using a GPU." } else { "Process list unavailable." });
        }
        for u in &unavailable {
            ui.weak(u);
        }
        if rows.is_empty() {
            return;
        }
        egui::Grid::new("process_table").striped(true).num_columns(5).min_col_width(60.0).show(ui, |ui| {
            for (col, label) in [
                (ProcessSort::Gpu, "GPU"),
                (ProcessSort::Pid, "PID"),
                (ProcessSort::Name, "Name"),
                (ProcessSort::Vram, "VRAM"),
                (ProcessSort::Kind, "Type"),
            ] {
                let arrow = match (self.sort == col, self.sort_desc) {
                    (true, true) => " (desc)",
                    (true, false) => " (asc)",
                    _ => "",
                };
                if ui
                    .button(RichText::new(format!("{label}{arrow}")).strong())
                    .on_hover_text(format!("Sort by {label}"))
                    .clicked()
                {
                    if self.sort == col {
                        self.sort_desc = !self.sort_desc;
                    } else {
                        self.sort = col;
                        self.sort_desc = matches!(col, ProcessSort::Vram);
                    }
                }
            }
            ui.end_row();
            for r in rows {
                ui.label(r.gpu.to_string());
                if ui
                    .link(r.process.pid.to_string())
                    .on_hover_text("Focus on this process: state, CPU, I/O, is it stuck?")
                    .clicked()
                {
                    self.focus_request = Some(r.process.pid);
                }
                ui.label(&r.process.name);
                ui.label(r.process.vram_bytes.show_short(|b| units::bytes_in(*b, self.units)));
                ui.label(r.process.kind.label());
                ui.end_row();
            }
        });
        ui.weak("In a container the PIDs are those of the host's PID namespace unless it runs with --pid=host.");
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

fn no_driver_banner(ui: &mut egui::Ui, no: &crate::telemetry::source::NoGpu) -> Option<MonitorAction> {
    let mut action = None;
    egui::Frame::group(ui.style()).fill(Color32::from_rgb(74, 50, 20)).inner_margin(10.0).show(ui, |ui| {
        ui.set_width(ui.available_width());
        ui.label(RichText::new("No NVIDIA GPU data").heading().color(Color32::from_rgb(255, 204, 128)));
        ui.label(RichText::new(&no.summary).color(Color32::WHITE));
        ui.label(RichText::new(format!("Next step: {}", no.next_step)).color(Color32::WHITE));
        ui.label(RichText::new("Host charts below keep running.").color(Color32::LIGHT_GRAY));
        ui.collapsing("What was tried", |ui| {
            for a in &no.attempts {
                ui.label(RichText::new(format!("{}: {}", a.path, a.error)).monospace());
            }
        });
        ui.horizontal(|ui| {
            if ui
                .button("Open the checklist")
                .on_hover_text("Walk the stack step by step: what is wrong and how to fix it")
                .clicked()
            {
                action = Some(MonitorAction::OpenChecklist);
            }
            if ui.button("Try demo mode").on_hover_text("Show simulated GPUs, clearly labelled DEMO").clicked() {
                action = Some(MonitorAction::TryDemo);
            }
            ui.label(RichText::new("Details without a window: gpu-doctor-cli info").color(Color32::LIGHT_GRAY));
        });
    });
    action
}

fn banner(ui: &mut egui::Ui, fill: Color32, add: impl FnOnce(&mut egui::Ui)) {
    egui::Frame::group(ui.style()).fill(fill).inner_margin(10.0).show(ui, |ui| {
        ui.set_width(ui.available_width());
        add(ui);
    });
}

fn asleep_banner(ui: &mut egui::Ui, functions: &[String]) -> Option<MonitorAction> {
    let mut action = None;
    banner(ui, Color32::from_rgb(28, 44, 66), |ui| {
        ui.label(RichText::new("GPU asleep (runtime-suspended)").heading().color(Color32::from_rgb(144, 202, 249)));
        ui.label(
            RichText::new(format!(
                "The kernel has powered down the NVIDIA GPU ({}) because nothing uses it. gpu-doctor leaves it asleep: reading it would wake it and keep it awake, costing battery. Only sysfs is read; GPU data appears as soon as something wakes the GPU.",
                functions.join(", ")
            ))
            .color(Color32::WHITE),
        );
        ui.horizontal(|ui| {
            if ui
                .button("Read it anyway (wakes the GPU)")
                .on_hover_text("Opens NVML now; the GPU wakes up and stays awake while gpu-doctor runs. Start with --wake-sleeping-gpu to always do this.")
                .clicked()
            {
                action = Some(MonitorAction::WakeGpu);
            }
            ui.label(RichText::new("Host charts below keep running.").color(Color32::LIGHT_GRAY));
        });
    });
    action
}

fn stall_banner(ui: &mut egui::Ui, stall: &crate::telemetry::snapshot::Stall) {
    banner(ui, Color32::from_rgb(80, 24, 24), |ui| {
        ui.label(RichText::new("GPU data not responding").heading().color(Color32::from_rgb(255, 138, 128)));
        ui.label(RichText::new(stall.message()).color(Color32::WHITE));
    });
}

/// Cards per row and the content width of each, so that as many cards as fit share a row exactly
/// (a card frame adds [`CARD_FRAME`] points); never wider than [`CARD_MAX_WIDTH`] nor narrower than
/// [`CARD_MIN_WIDTH`] (a single card on a narrow window may then be clipped at the right).
pub fn card_layout(available: f32, spacing: f32, cards: usize) -> (usize, f32) {
    let slot = CARD_MIN_WIDTH + CARD_FRAME + spacing;
    let per_row = (((available + spacing) / slot).floor() as usize).clamp(1, cards.max(1));
    let width =
        ((available + spacing) / per_row as f32 - spacing - CARD_FRAME).floor().clamp(CARD_MIN_WIDTH, CARD_MAX_WIDTH);
    (per_row, width)
}

fn gpu_card(ui: &mut egui::Ui, info: &GpuInfo, sample: Option<&GpuSample>, width: f32) {
    egui::Frame::group(ui.style()).inner_margin(CARD_MARGIN).show(ui, |ui| {
        ui.set_width(width);
        ui.vertical(|ui| {
            ui.label(RichText::new(format!("GPU {}  {}", info.index, info.name)).strong().color(gpu_color(info.index)));
            let Some(s) = sample else {
                ui.weak("waiting for the first sample…");
                return;
            };
            if let GpuHealth::Lost(why) = &s.health {
                ui.label(RichText::new("LOST").strong().color(Color32::LIGHT_RED));
                ui.label(why);
                return;
            }
            egui::Grid::new(("card", info.index)).num_columns(2).spacing([10.0, 2.0]).show(ui, |ui| {
                let mut row = |k: &str, v: String, help: &str| {
                    ui.label(k).on_hover_text(help);
                    ui.label(v);
                    ui.end_row();
                };
                row(present::GPU_UTIL_LABEL, present::pct(&s.util_gpu_pct), "% of time a kernel was running");
                row(
                    "Memory bandwidth",
                    present::pct(&s.util_mem_bw_pct),
                    "% of time device memory was read or written (not VRAM in use)",
                );
                row("VRAM", present::vram(s), "device memory in use / total");
                row("Temperature", present::temperature(s, Some(info)), "GPU core temperature");
                row("Power", present::power(s), "board power draw / enforced limit");
                row("SM clock", present::sm_clock(s, Some(info)), "current / maximum");
                row(
                    "PCIe link",
                    present::pcie_link(s, Some(info)),
                    "current link (the link trains down when idle; judge it under load)",
                );
                row(
                    "Fan · P-state",
                    format!(
                        "{} · {}",
                        s.fan_pct.show_short(|f| format!("{f} %")),
                        s.pstate.show_short(|p| format!("P{p}"))
                    ),
                    "fan speed; performance state (P0 = maximum)",
                );
            });
            match s.throttle_mask.value() {
                Some(&mask) if throttle::is_limiting(mask) => {
                    for r in throttle::decode(mask).iter().filter(|r| r.severity >= throttle::Severity::Warn) {
                        let color = if r.severity == throttle::Severity::Severe {
                            Color32::LIGHT_RED
                        } else {
                            Color32::from_rgb(255, 204, 128)
                        };
                        ui.label(RichText::new(format!("Throttled: {}", r.name)).strong().color(color))
                            .on_hover_text(r.sentence);
                        ui.small(r.sentence);
                    }
                }
                Some(&mask) if mask & throttle::GPU_IDLE != 0 => {
                    ui.weak("Clocks lowered: GPU idle (normal).");
                }
                Some(_) => {
                    ui.weak("Clocks not held back.");
                }
                None => {
                    ui.weak(format!("Throttle reasons: {}", present::throttle_summary(s)));
                }
            }
        });
    });
}

fn host_summary(ui: &mut egui::Ui, host: Option<&HostSample>) {
    let Some(h) = host else {
        ui.weak("waiting for the first host sample…");
        return;
    };
    ui.horizontal_wrapped(|ui| {
        ui.label(format!("CPU {}", present::pct(&h.cpu_pct)));
        ui.separator();
        ui.label(format!("iowait {}", present::pct(&h.iowait_pct)))
            .on_hover_text(h.iowait_pct.reason().unwrap_or("share of CPU time spent waiting for disk I/O"));
        ui.separator();
        ui.label(format!("load {}", h.load_avg.show_short(|l| format!("{:.2} {:.2} {:.2}", l[0], l[1], l[2]))));
        ui.separator();
        ui.label(format!("RAM {}", present::ram(h)));
        if let Some(m) = h.memory.value()
            && m.swap_total_bytes > 0
        {
            ui.separator();
            ui.label(format!("swap {}", units::bytes_in(m.swap_used_bytes, self.units)));
        }
        ui.separator();
        ui.label(format!(
            "net rx {} tx {}",
            h.net_rx_bps.show_short(|r| units::rate(*r)),
            h.net_tx_bps.show_short(|r| units::rate(*r))
        ));
        if let Some(p) = h.pressure.value() {
            ui.separator();
            ui.label(format!(
                "pressure: cpu {} · io {} · memory {}",
                p.cpu_some.map_or("n/a".into(), |v| format!("{v:.0} %")),
                p.io_some.map_or("n/a".into(), |v| format!("{v:.0} %")),
                p.memory_some.map_or("n/a".into(), |v| format!("{v:.0} %"))
            ))
            .on_hover_text("Share of the last 10 s in which some task waited for CPU, I/O or memory (Linux PSI).");
        }
    });
    match h.disks.value() {
        Some(disks) if !disks.is_empty() => {
            ui.horizontal_wrapped(|ui| {
                ui.label("Disks:").on_hover_text("Read and write rates of each physical disk.");
                for d in disks {
                    ui.label(format!("{} read {} write {}", d.name, units::rate(d.read_bps), units::rate(d.write_bps)));
                    ui.separator();
                }
            });
        }
        Some(_) => {}
        None => {
            ui.weak(format!("Disks: {}", h.disks.show(|_| String::new())));
        }
    }
    per_core_strip(ui, &h.per_core_pct);
}

fn per_core_strip(ui: &mut egui::Ui, cores: &[f64]) {
    if cores.is_empty() {
        return;
    }
    ui.horizontal(|ui| {
        ui.label("Per core:").on_hover_text("Each bar is one logical CPU; a single full bar with an idle GPU often means a single-threaded data loader.");
        let w = ((ui.available_width() - 8.0) / cores.len() as f32).clamp(3.0, 18.0);
        let (rect, resp) = ui.allocate_exact_size(egui::vec2(w * cores.len() as f32, 26.0), egui::Sense::hover());
        let painter = ui.painter_at(rect);
        for (i, c) in cores.iter().enumerate() {
            let x0 = rect.left() + i as f32 * w;
            let cell = egui::Rect::from_min_max(egui::pos2(x0 + 1.0, rect.top()), egui::pos2(x0 + w - 1.0, rect.bottom()));
            painter.rect_filled(cell, 1.0, ui.visuals().extreme_bg_color);
            let h = cell.height() * (*c as f32 / 100.0).clamp(0.0, 1.0);
            let fill = egui::Rect::from_min_max(egui::pos2(cell.left(), cell.bottom() - h), cell.max);
            let color = if *c > 90.0 { Color32::from_rgb(239, 83, 80) } else { Color32::from_rgb(66, 165, 245) };
            painter.rect_filled(fill, 1.0, color);
        }
        if let Some(pos) = resp.hover_pos() {
            let i = ((pos.x - rect.left()) / w).floor() as usize;
            if let Some(v) = cores.get(i) {
                resp.on_hover_text(format!("CPU {i}: {v:.0} %"));
            }
        }
    });
}

impl MonitorState {
    /// The Diagnosis panel: what limits each GPU now, with evidence and next steps.
    fn diagnosis(&mut self, ui: &mut egui::Ui) {
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
        });
        if self.verdicts.is_empty() {
            ui.label(RichText::new("Collecting data: verdicts need half of the window.").weak());
            return;
        }
        for (n, v) in self.verdicts.iter().enumerate() {
            let color = match v.severity {
                crate::diagnose::Verdict::Warn | crate::diagnose::Verdict::Fail => Color32::from_rgb(255, 204, 128),
                crate::diagnose::Verdict::Pass => Color32::from_rgb(129, 199, 132),
                _ => Color32::from_rgb(144, 202, 249),
            };
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

/// Vertical marks for the history's events in the visible window (verdicts starting and ending,
/// lost GPUs, a driver not answering).
fn event_marks(h: &History, axis: &TimeAxis) -> Vec<charts::Mark> {
    h.events()
        .filter(|e| e.t >= axis.from && e.t <= axis.to)
        .map(|e| charts::Mark {
            t: e.t,
            name: e.text.clone(),
            color: match e.level {
                EventLevel::Info => Color32::from_rgb(144, 202, 249),
                EventLevel::Warn => Color32::from_rgb(255, 183, 77),
                EventLevel::Error => Color32::from_rgb(239, 83, 80),
            },
        })
        .collect()
}

fn host_charts(ui: &mut egui::Ui, host: Option<&HostSample>, h: &History, axis: TimeAxis) {
    let pts = |key: &str| h.points(key, axis.from, axis.to, CHART_POINTS);
    let ram_total = host.and_then(|x| x.memory.value().map(|m| m.ram_total_bytes as f64));
    let charts = vec![
        Chart {
            id: "host_cpu",
            title: "CPU utilization (all cores)",
            help: "Average over all logical CPUs; see the per-core strip for single saturated cores.",
            caption: "average over all logical CPUs",
            unit: Unit::Percent,
            series: vec![Series { name: "CPU".into(), points: pts(keys::CPU), color: Color32::from_rgb(66, 165, 245) }],
            references: Vec::new(),
            fixed_percent: true,
            marks: Vec::new(),
        },
        Chart {
            id: "host_ram",
            title: "RAM used",
            help: "Host memory in use; the thin line is the total.",
            caption: "purple: RAM used · red: swap used · thin grey: total",
            unit: Unit::Gib,
            series: vec![
                Series { name: "RAM used".into(), points: pts(keys::RAM_USED), color: Color32::from_rgb(171, 71, 188) },
                Series {
                    name: "swap used".into(),
                    points: pts(keys::SWAP_USED),
                    color: Color32::from_rgb(239, 83, 80),
                },
            ],
            references: ram_total
                .map(|t| vec![Reference { name: "RAM total".into(), value: t, color: Color32::GRAY }])
                .unwrap_or_default(),
            fixed_percent: false,
            marks: Vec::new(),
        },
        Chart {
            id: "host_disk",
            title: "Disk read / write",
            help: "Sum over physical disks.",
            caption: "cyan: read · orange: write (physical disks)",
            unit: Unit::Rate,
            series: vec![
                Series { name: "read".into(), points: pts(keys::DISK_READ), color: Color32::from_rgb(38, 198, 218) },
                Series { name: "write".into(), points: pts(keys::DISK_WRITE), color: Color32::from_rgb(255, 167, 38) },
            ],
            references: Vec::new(),
            fixed_percent: false,
            marks: Vec::new(),
        },
        Chart {
            id: "host_iowait",
            title: "CPU iowait and I/O pressure",
            help: "iowait: share of CPU time idle while waiting for I/O. I/O pressure: share of time some task stalled on I/O (Linux PSI).",
            caption: "orange: iowait · yellow: I/O pressure (PSI some, 10 s)",
            unit: Unit::Percent,
            series: vec![
                Series { name: "iowait".into(), points: pts(keys::IOWAIT), color: Color32::from_rgb(255, 112, 67) },
                Series {
                    name: "I/O pressure".into(),
                    points: pts(keys::PSI_IO),
                    color: Color32::from_rgb(255, 202, 40),
                },
            ],
            references: Vec::new(),
            fixed_percent: true,
            marks: Vec::new(),
        },
        Chart {
            id: "host_net",
            title: "Network receive / transmit",
            help: "Sum over all interfaces except loopback.",
            caption: "green: receive · brown: transmit",
            unit: Unit::Rate,
            series: vec![
                Series { name: "rx".into(), points: pts(keys::NET_RX), color: Color32::from_rgb(102, 187, 106) },
                Series { name: "tx".into(), points: pts(keys::NET_TX), color: Color32::from_rgb(141, 110, 99) },
            ],
            references: Vec::new(),
            fixed_percent: false,
            marks: Vec::new(),
        },
    ];
    chart_grid(ui, charts, axis);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::Reading;
    use crate::telemetry::sample::ProcessKind;

    fn gpu_with(index: u32, procs: Vec<(u32, &str, u64)>) -> GpuSample {
        let mut g = GpuSample::unavailable(index, GpuHealth::Ok, "x");
        g.processes = Reading::Value(
            procs
                .into_iter()
                .map(|(pid, name, vram)| GpuProcess {
                    pid,
                    name: name.into(),
                    vram_bytes: Reading::Value(vram),
                    kind: ProcessKind::Compute,
                })
                .collect(),
        );
        g
    }

    #[test]
    fn cards_share_a_row_exactly() {
        let spacing = 8.0;
        for (avail, cards) in [(1264.0, 4), (1264.0, 8), (900.0, 4), (600.0, 2), (2400.0, 2), (250.0, 1)] {
            let (per_row_used, w) = card_layout(avail, spacing, cards);
            assert!(per_row_used >= 1 && per_row_used <= cards);
            assert!((CARD_MIN_WIDTH..=CARD_MAX_WIDTH).contains(&w), "{avail} {cards}: {w}");
            let per_row = (((avail + spacing) / (w + CARD_FRAME + spacing)).floor() as usize).max(1);
            if avail >= CARD_MIN_WIDTH + CARD_FRAME {
                assert!(per_row as f32 * (w + CARD_FRAME + spacing) - spacing <= avail, "{avail} {cards}: {w}");
            }
        }
        // 4 cards on a 1280-wide window: one row of four.
        let (n, w) = card_layout(1264.0, spacing, 4);
        assert_eq!(n, 4);
        assert_eq!(card_layout(1264.0, spacing, 8).0, 4, "eight cards: two rows of four");
        assert!(4.0 * (w + CARD_FRAME) + 3.0 * spacing <= 1264.0);
    }

    #[test]
    fn process_rows_sort_by_each_column() {
        let gpus = vec![gpu_with(0, vec![(10, "b", 5), (30, "a", 1)]), gpu_with(1, vec![(20, "C", 9)])];
        let pids = |s, d| process_rows(&gpus, s, d).iter().map(|r| r.process.pid).collect::<Vec<_>>();
        assert_eq!(pids(ProcessSort::Vram, true), [20, 10, 30]);
        assert_eq!(pids(ProcessSort::Pid, false), [10, 20, 30]);
        assert_eq!(pids(ProcessSort::Name, false), [30, 10, 20]);
        assert_eq!(pids(ProcessSort::Gpu, true), [20, 30, 10]);
    }
}
