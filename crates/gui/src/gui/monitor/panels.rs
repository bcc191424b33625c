//! The Monitor's panels other than charts: the banners (no driver, GPU asleep, GPU data not
//! responding), the GPU cards and their layout, the host summary and the per-core strip.

use crate::i18n::{Here as _, Shown as _, Word as _};
use eframe::egui::{self, Color32, RichText};

use super::MonitorAction;
use crate::diagnose::Verdict;
use crate::diagnose::bottleneck::{Bottleneck, Finding, UtilWindow};
use crate::diagnose::headline::Headline;
use crate::gui::palette::{self, Tone};
use crate::present;
use crate::telemetry::remote::{RemoteInfo, RemoteState};
use crate::telemetry::sample::{GpuHealth, GpuInfo, GpuSample, HostSample};
use crate::telemetry::throttle;
use crate::tr;
use crate::units::{self, ByteUnits};

/// Narrowest GPU card content, points (the longest value row fits).
const CARD_MIN_WIDTH: f32 = 272.0;
/// Widest GPU card content, points.
const CARD_MAX_WIDTH: f32 = 340.0;
/// Inner margin of a GPU card, points.
const CARD_MARGIN: f32 = 8.0;
/// What a card frame adds to its content width: margins and the 1-point stroke on both sides.
const CARD_FRAME: f32 = 2.0 * CARD_MARGIN + 2.0;
/// The banner of a machine without GPU data. It leads with the checklist's root cause and first
/// fix (the same diagnosis as the Checklist tab, `check` and `info`); while the checks run it says
/// so; without a checklist failure it shows NVML's own explanation. NVML's text and the library
/// paths tried are details under it.
pub(super) fn no_driver_banner(
    ui: &mut egui::Ui,
    no: &crate::telemetry::source::NoGpu,
    root_cause: Option<&Headline>,
    checking: bool,
) -> Option<MonitorAction> {
    let mut action = None;
    let b = palette::BANNER_NO_GPU;
    egui::Frame::group(ui.style()).fill(b.fill).inner_margin(10.0).show(ui, |ui| {
        ui.set_width(ui.available_width());
        ui.label(RichText::new(tr!("No NVIDIA GPU data")).heading().color(b.heading));
        match (root_cause, checking) {
            (Some(h), _) => {
                let found = ui.label(RichText::new(present::sentence(&h.finding.here())).strong().color(b.text));
                if let Some(id) = &h.check_id {
                    found.on_hover_text(tr!("The checklist's root cause (check {id})", id = id));
                }
                crate::gui::checklist::fix_steps(ui, &h.steps, Some(b.text));
            }
            (None, true) => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label(RichText::new(tr!("Checking what is wrong…")).color(b.text));
                });
            }
            (None, false) => {
                let (summary, next_step) = no.shown_message(cfg!(windows));
                ui.label(RichText::new(summary.here()).color(b.text));
                ui.label(RichText::new(tr!("Next step: {step}", step = next_step.here())).color(b.text));
            }
        }
        ui.label(RichText::new(tr!("Host charts below keep running.")).color(b.weak));
        // NVML's own answers: what it said (not gpu-doctor's generic next step, and not the guess
        // from a missing library, which under a container's root cause would contradict it), each
        // place the library was looked for and what the loader said.
        let nvml_shown_above = root_cause.is_none() && !checking;
        let details = if nvml_shown_above { tr!("What was tried") } else { tr!("What NVML said") };
        ui.collapsing(RichText::new(details).color(b.weak), |ui| {
            if !nvml_shown_above && !no.is_not_found() {
                ui.label(RichText::new(no.summary_message().here()).color(b.text));
            }
            for a in &no.attempts {
                ui.label(RichText::new(format!("{}: {}", a.path, a.error)).monospace().color(b.text));
            }
        });
        ui.horizontal(|ui| {
            if ui
                .button(tr!("Open the checklist"))
                .on_hover_text(tr!("Walk the stack step by step: what is wrong and how to fix it"))
                .clicked()
            {
                action = Some(MonitorAction::OpenChecklist);
            }
            ui.menu_button(tr!("Try demo mode"), |ui| {
                if let Some(s) = super::demo_menu(ui) {
                    action = Some(MonitorAction::TryDemo(s));
                }
            })
            .response
            .on_hover_text(tr!("Show simulated GPUs, clearly labelled DEMO"));
            if ui
                .button(tr!("Connect to a server…"))
                .on_hover_text(tr!("Watch a server's GPUs over SSH (your keys, agent and ~/.ssh/config)"))
                .clicked()
            {
                action = Some(MonitorAction::ConnectServer);
            }
            ui.label(RichText::new(tr!("Details without a window: gpu-doctor-cli info")).color(b.weak));
        });
    });
    action
}

/// "runtime-suspended" / "power state D3" in the current language.
fn i18n_asleep_state() -> &'static str {
    if cfg!(windows) { tr!("power state D3") } else { tr!("runtime-suspended") }
}

/// The banner of a server that is not streaming: connecting, no data for a while, retrying, or
/// failed with the next step; with Reconnect and Disconnect.
pub(super) fn remote_banner(ui: &mut egui::Ui, r: &RemoteInfo) -> Option<MonitorAction> {
    let mut action = None;
    let (b, error) = match &r.state {
        RemoteState::Failed { error } => (palette::BANNER_NO_GPU, Some(error)),
        RemoteState::Retrying { error, .. } => (palette::BANNER_STALL, Some(error)),
        RemoteState::NoData { .. } => (palette::BANNER_STALL, None),
        _ => (palette::BANNER_ASLEEP, None),
    };
    banner(ui, b, |ui| {
        ui.label(RichText::new(r.line().here()).heading().color(b.heading));
        match (&r.state, error) {
            (RemoteState::NoData { .. }, _) => {
                ui.label(
                    RichText::new(tr!(
                        "The connection is open but the server sent nothing: it may be overloaded, or the network stalls. The charts pause until data comes back; ssh ends the connection after about 15 s of silence and gpu-doctor reconnects."
                    ))
                    .color(b.text),
                );
            }
            (_, Some(e)) => {
                ui.label(RichText::new(tr!("Next step: {step}", step = e.next_step.here())).color(b.text));
                if !e.detail.is_empty() {
                    ui.collapsing(RichText::new(tr!("What ssh said")).color(b.weak), |ui| {
                        ui.label(RichText::new(&e.detail).monospace().color(b.text));
                    });
                }
            }
            _ => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label(RichText::new(tr!("Running gpu-doctor-cli on the server over ssh…")).color(b.text));
                });
            }
        }
        ui.horizontal(|ui| {
            if !matches!(r.state, RemoteState::Connecting { .. }) && ui.button(tr!("Reconnect")).clicked() {
                action = Some(MonitorAction::Reconnect);
            }
            if ui.button(tr!("Disconnect")).on_hover_text(tr!("Back to this machine")).clicked() {
                action = Some(MonitorAction::Disconnect);
            }
        });
    });
    action
}

fn banner(ui: &mut egui::Ui, b: palette::Banner, add: impl FnOnce(&mut egui::Ui)) {
    egui::Frame::group(ui.style()).fill(b.fill).inner_margin(10.0).show(ui, |ui| {
        ui.set_width(ui.available_width());
        add(ui);
    });
}

pub(super) fn asleep_banner(ui: &mut egui::Ui, functions: &[String]) -> Option<MonitorAction> {
    let mut action = None;
    let b = palette::BANNER_ASLEEP;
    banner(ui, b, |ui| {
        ui.label(RichText::new(tr!("GPU asleep ({state})", state = i18n_asleep_state())).heading().color(b.heading));
        ui.label(
            RichText::new(if cfg!(windows) {
                tr!("Windows has powered down the NVIDIA GPU ({gpus}) because nothing uses it. gpu-doctor leaves it asleep: reading it would wake it and keep it awake, costing battery. Only its power state is read; GPU data appears as soon as something wakes the GPU.", gpus = functions.join(", "))
            } else {
                tr!("The kernel has powered down the NVIDIA GPU ({gpus}) because nothing uses it. gpu-doctor leaves it asleep: reading it would wake it and keep it awake, costing battery. Only its power state is read; GPU data appears as soon as something wakes the GPU.", gpus = functions.join(", "))
            })
            .color(b.text),
        );
        ui.horizontal(|ui| {
            if ui
                .button(tr!("Read it anyway (wakes the GPU)"))
                .on_hover_text(tr!("Opens NVML now; the GPU wakes up and stays awake while gpu-doctor runs. Start with --wake-sleeping-gpu to always do this."))
                .clicked()
            {
                action = Some(MonitorAction::WakeGpu);
            }
            ui.label(RichText::new(tr!("Host charts below keep running.")).color(b.weak));
        });
    });
    action
}

pub(super) fn stall_banner(ui: &mut egui::Ui, stall: &crate::telemetry::snapshot::Stall) {
    let b = palette::BANNER_STALL;
    banner(ui, b, |ui| {
        ui.label(RichText::new(tr!("GPU data not responding")).heading().color(b.heading));
        ui.label(RichText::new(stall.message().here()).color(b.text));
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

/// Width from which the GPU table shows all its columns, points.
const TABLE_FULL_WIDTH: f32 = 1200.0;

/// From this many GPUs the Monitor shows a compact table, one row per GPU, instead of cards.
pub const COMPACT_FROM_GPUS: usize = 4;

/// The one verdict a GPU's card or row shows: its most severe problem (warning or failure), else
/// its "healthy" verdict, else its most severe remaining one (information).
pub fn card_verdict(verdicts: &[Bottleneck], gpu: u32) -> Option<&Bottleneck> {
    let mine = || verdicts.iter().filter(move |v| v.gpu == Some(gpu));
    mine()
        .filter(|v| v.severity >= Verdict::Warn)
        .max_by_key(|v| v.severity)
        .or_else(|| mine().find(|v| v.severity == Verdict::Pass))
        .or_else(|| mine().max_by_key(|v| v.severity))
}

/// True when the window's verdicts say this GPU ran at its power limit.
fn power_limited(verdicts: &[Bottleneck], gpu: u32) -> bool {
    verdicts.iter().any(|v| v.gpu == Some(gpu) && v.finding == Finding::PowerLimited)
}

pub(super) fn gpu_card(
    ui: &mut egui::Ui,
    info: &GpuInfo,
    sample: Option<&GpuSample>,
    width: f32,
    verdicts: &[Bottleneck],
    util: Option<&UtilWindow>,
) {
    egui::Frame::group(ui.style()).inner_margin(CARD_MARGIN).show(ui, |ui| {
        ui.set_width(width);
        ui.vertical(|ui| {
            ui.label(
                RichText::new(format!(
                    "GPU {}  {}",
                    info.index,
                    crate::present::gpu_name(&info.name, crate::i18n::current())
                ))
                .strong()
                .color(palette::gpu_text(info.index, palette::is_dark(ui))),
            )
            .on_hover_text(tr!(
                "PCI {bus} · VBIOS {vbios} · compute capability {cc}",
                bus = info.pci_bus_id.show_short(|b| b.clone()),
                vbios = info.vbios_version.show_short(|v| v.clone()),
                cc = info.compute_capability.show_short(|c| c.clone())
            ));
            if let Some(v) = card_verdict(verdicts, info.index) {
                ui.label(
                    RichText::new(format!("{} {}", v.severity.word(), v.title.here()))
                        .color(palette::verdict(ui, v.severity)),
                )
                .on_hover_text(tr!("The Diagnosis panel's verdict for this GPU over its window"));
            }
            let Some(s) = sample else {
                ui.weak(tr!("waiting for the first sample…"));
                return;
            };
            if let GpuHealth::Lost(why) = &s.health {
                ui.label(RichText::new(tr!("LOST")).strong().color(palette::tone(ui, Tone::Fail)));
                ui.label(why.here());
                return;
            }
            let dark = palette::is_dark(ui);
            super::utilbar::block(ui, util, s.util_gpu_pct.get(), width, palette::gpu_text(info.index, dark));
            ui.add_space(2.0);
            egui::Grid::new(("card", info.index)).num_columns(2).spacing([10.0, 2.0]).show(ui, |ui| {
                let mut row = |k: &str, v: String, help: &str| {
                    ui.label(k).on_hover_text(help);
                    ui.label(v);
                    ui.end_row();
                };
                row(
                    tr!("Memory bandwidth"),
                    present::pct(&s.util_mem_bw_pct, crate::i18n::current()),
                    tr!("% of time device memory was read or written (not VRAM in use)"),
                );
                row(tr!("VRAM"), present::vram(s, crate::i18n::current()), tr!("device memory in use / total"));
                row(
                    tr!("Temperature"),
                    present::temperature(s, Some(info), crate::i18n::current()),
                    tr!("GPU core temperature"),
                );
                row(tr!("Power"), present::power(s, crate::i18n::current()), tr!("board power draw / enforced limit"));
                row(
                    tr!("SM clock"),
                    present::sm_clock(s, Some(info), crate::i18n::current()),
                    tr!("current / maximum"),
                );
                row(
                    tr!("PCIe link"),
                    present::pcie_link(s, Some(info), crate::i18n::current()),
                    tr!("current link (the link trains down when idle; judge it under load)"),
                );
                row(
                    tr!("Fan · P-state"),
                    format!(
                        "{} · {}",
                        s.fan_pct.show_short(|f| crate::units::percent_whole(f64::from(*f))),
                        s.pstate.show_short(|p| format!("P{p}"))
                    ),
                    tr!("fan speed; performance state (P0 = maximum)"),
                );
            });
            for line in clock_lines(s, power_limited(verdicts, info.index)) {
                match line.tone {
                    Some(tone) => {
                        ui.label(RichText::new(&line.text).strong().color(palette::tone(ui, tone)))
                            .on_hover_text(line.detail);
                        ui.small(line.detail);
                    }
                    None => {
                        ui.weak(&line.text);
                    }
                }
            }
        });
    });
}

/// One line of a card's clock section: a reason the clocks are held back (coloured by what it
/// means), or a plain remark (no colour).
#[derive(Clone, Debug, PartialEq)]
pub struct ClockLine {
    /// The line.
    pub text: String,
    /// What it means (shown small below, and on hover).
    pub detail: &'static str,
    /// Its colour; None for a plain remark.
    pub tone: Option<Tone>,
}

/// Share of the enforced power limit from which a busy GPU counts as at its limit.
const AT_POWER_LIMIT: f64 = 0.97;
/// Utilization from which reaching the power limit is normal full-load behaviour.
const FULL_LOAD_PCT: f64 = 80.0;

/// What a card says about its clocks. A power cap reached under full load is normal and shown the
/// same way on every GPU, whether the driver reports the power-cap reason or only the power draw
/// sits at the limit; hardware slowdowns are failures; other limits are warnings.
/// `limited_in_window`: the window's verdicts found the GPU at its power limit (the card then agrees
/// with them even when this instant's reading is just under the limit).
pub fn clock_lines(s: &GpuSample, limited_in_window: bool) -> Vec<ClockLine> {
    let busy = s.util_gpu_pct.get().is_some_and(|u| u >= FULL_LOAD_PCT) || limited_in_window;
    let at_limit = limited_in_window
        || matches!((s.power_w.get(), s.power_limit_w.get()), (Some(p), Some(l)) if l > 0.0 && p >= AT_POWER_LIMIT * l);
    let power_normal = ClockLine {
        text: tr!("At its power limit (normal under full load)").to_string(),
        detail: tr!(
            "The driver keeps the board within its power limit; under full load that is expected. If the limit looks low, compare it with the card's default limit."
        ),
        tone: Some(Tone::Info),
    };
    let mut out = Vec::new();
    let mask = s.throttle_mask.get();
    if let Some(mask) = mask {
        for r in throttle::decode(mask).iter().filter(|r| r.severity >= throttle::Severity::Warn) {
            if r.bit == throttle::SW_POWER_CAP && (busy || at_limit) {
                out.push(power_normal.clone());
                continue;
            }
            let tone = if r.severity == throttle::Severity::Severe { Tone::Fail } else { Tone::Warn };
            out.push(ClockLine {
                text: tr!("Throttled: {reason}", reason = crate::i18n::tr(r.name)),
                detail: crate::i18n::tr(r.sentence),
                tone: Some(tone),
            });
        }
    }
    if busy && at_limit && !out.contains(&power_normal) {
        out.insert(0, power_normal);
    }
    if out.is_empty() {
        let text = match mask {
            Some(m) if m & throttle::GPU_IDLE != 0 => tr!("Clocks lowered: GPU idle (normal).").to_string(),
            Some(_) => tr!("Clocks not held back.").to_string(),
            None => tr!("Throttle reasons: {reasons}", reasons = present::throttle_summary(s, crate::i18n::current())),
        };
        out.push(ClockLine { text, detail: "", tone: None });
    }
    out
}

/// Many GPUs: one compact row each (index and name, verdict, utilization, memory bandwidth, VRAM,
/// temperature, power, SM clock, PCIe link, clocks).
pub(super) fn gpu_table(
    ui: &mut egui::Ui,
    snap: &crate::telemetry::snapshot::Snapshot,
    verdicts: &[Bottleneck],
    util: &[UtilWindow],
) {
    // A narrow window leaves out memory bandwidth and the SM clock (both are charted below) so
    // the row fits instead of being cut off at the right.
    let narrow = ui.available_width() < TABLE_FULL_WIDTH;
    let columns = if narrow { 8 } else { 10 };
    egui::Grid::new("gpu_table").striped(true).num_columns(columns).spacing([12.0, 3.0]).show(ui, |ui| {
        for h in [
            "GPU",
            crate::tr_key!("Verdict"),
            present::GPU_UTIL_LABEL,
            crate::tr_key!("Mem. bandwidth"),
            crate::tr_key!("VRAM"),
            crate::tr_key!("Temp."),
            crate::tr_key!("Power"),
            crate::tr_key!("SM clock"),
            "PCIe",
            crate::tr_key!("Clocks"),
        ] {
            if narrow && (h == "Mem. bandwidth" || h == "SM clock") {
                continue;
            }
            ui.label(RichText::new(crate::i18n::tr(h)).strong());
        }
        ui.end_row();
        for info in &snap.inventory.gpus {
            let dark = palette::is_dark(ui);
            ui.label(
                RichText::new(format!(
                    "{}  {}",
                    info.index,
                    crate::present::gpu_name(&info.name, crate::i18n::current())
                ))
                .color(palette::gpu_text(info.index, dark)),
            );
            match card_verdict(verdicts, info.index) {
                Some(v) => {
                    ui.label(RichText::new(v.severity.word()).strong().color(palette::verdict(ui, v.severity)))
                        .on_hover_text(v.title.here());
                }
                None => {
                    ui.label("");
                }
            }
            let Some(s) = snap.gpus.iter().find(|g| g.index == info.index) else {
                ui.weak(tr!("waiting for the first sample…"));
                ui.end_row();
                continue;
            };
            if let GpuHealth::Lost(why) = &s.health {
                ui.label(RichText::new(tr!("LOST")).strong().color(palette::tone(ui, Tone::Fail)))
                    .on_hover_text(why.here());
                ui.end_row();
                continue;
            }
            util_cell(ui, util.iter().find(|u| u.gpu == info.index), s.util_gpu_pct.get(), info.index);
            if !narrow {
                ui.label(present::pct(&s.util_mem_bw_pct, crate::i18n::current()));
            }
            ui.label(present::vram(s, crate::i18n::current()));
            ui.label(s.temp_c.show_short(|t| format!("{t} °C")));
            ui.label(present::power(s, crate::i18n::current()));
            if !narrow {
                ui.label(s.sm_clock_mhz.show_short(|c| format!("{c} MHz")));
            }
            // The table keeps each cell short (the full text is on hover): the current link, the
            // clock line up to its parenthesis.
            let link = present::pcie_link(s, Some(info), crate::i18n::current());
            let short_link = link.split(" (").next().unwrap_or(&link);
            ui.label(short_link.split('（').next().unwrap_or(short_link)).on_hover_text(&link);
            let lines = clock_lines(s, power_limited(verdicts, info.index));
            match lines.first() {
                Some(l) => {
                    let short = l.text.split(" (").next().unwrap_or(&l.text);
                    let short = short.split('（').next().unwrap_or(short).trim_end_matches(['.', '。']);
                    let hover = format!("{}\n{}", l.text, l.detail);
                    match l.tone {
                        Some(t) => ui.label(RichText::new(short).color(palette::tone(ui, t))).on_hover_text(hover),
                        None => ui.weak(short).on_hover_text(hover),
                    }
                }
                None => ui.label(""),
            };
            ui.end_row();
        }
    });
}

/// The table's utilization cell: a short bar (average, min–max band, latest tick) and the
/// window's average with its range, the same numbers as the verdicts.
fn util_cell(ui: &mut egui::Ui, w: Option<&UtilWindow>, latest: Option<f64>, gpu: u32) {
    let color = palette::gpu_text(gpu, palette::is_dark(ui));
    ui.horizontal(|ui| {
        let (mean, min, max) = w.map_or((latest.unwrap_or(0.0), f64::NAN, f64::NAN), |w| (w.mean, w.min, w.max));
        if w.is_none() && latest.is_none() {
            ui.weak(tr!("not reported"));
            return;
        }
        ui.vertical(|ui| {
            ui.add_space(4.0);
            super::utilbar::bar(ui, 44.0, mean, min, max, latest, color);
        });
        let text = match w {
            Some(w) => tr!(
                "{mean} % avg ({min}–{max})",
                mean = format!("{:.0}", w.mean),
                min = format!("{:.0}", w.min),
                max = format!("{:.0}", w.max)
            ),
            None => tr!("{now} % now", now = format!("{mean:.0}")),
        };
        ui.label(text).on_hover_text(match w {
            Some(w) => super::utilbar::caption(w, latest),
            None => tr!("the latest reading; the window's average follows").to_string(),
        });
    });
}

pub(super) fn host_summary(ui: &mut egui::Ui, host: Option<&HostSample>, byte_units: ByteUnits) {
    let Some(h) = host else {
        ui.weak(tr!("waiting for the first host sample…"));
        return;
    };
    ui.horizontal_wrapped(|ui| {
        ui.label(format!("CPU {}", present::pct(&h.cpu_pct, crate::i18n::current())));
        ui.separator();
        ui.label(format!("iowait {}", present::pct(&h.iowait_pct, crate::i18n::current()))).on_hover_text(
            h.iowait_pct.reason().map_or_else(
                || tr!("share of CPU time spent waiting for disk I/O").to_string(),
                crate::i18n::Here::here,
            ),
        );
        ui.separator();
        ui.label(tr!("load {load}", load = h.load_avg.show_short(|l| format!("{:.2} {:.2} {:.2}", l[0], l[1], l[2]))));
        ui.separator();
        ui.label(tr!("RAM {ram}", ram = present::ram(h, crate::i18n::current())));
        if let Some(m) = h.memory.value()
            && m.swap_total_bytes > 0
        {
            ui.separator();
            ui.label(tr!("swap {swap}", swap = units::bytes_in(m.swap_used_bytes, byte_units)));
        }
        ui.separator();
        ui.label(tr!(
            "net rx {rx} tx {tx}",
            rx = h.net_rx_bps.show_short(|r| units::rate(*r)),
            tx = h.net_tx_bps.show_short(|r| units::rate(*r))
        ));
        if let Some(p) = h.pressure.value() {
            ui.separator();
            let na = || tr!("n/a").to_string();
            ui.label(tr!(
                "pressure: cpu {cpu} · io {io} · memory {memory}",
                cpu = p.cpu_some.map_or_else(na, crate::units::percent_whole),
                io = p.io_some.map_or_else(na, crate::units::percent_whole),
                memory = p.memory_some.map_or_else(na, crate::units::percent_whole)
            ))
            .on_hover_text(tr!("Share of the last 10 s in which some task waited for CPU, I/O or memory (Linux PSI)."));
        }
    });
    match h.disks.value() {
        Some(disks) if !disks.is_empty() => {
            ui.horizontal_wrapped(|ui| {
                ui.label(tr!("Disks:")).on_hover_text(tr!("Read and write rates of each physical disk."));
                for d in disks {
                    ui.label(tr!(
                        "{disk} read {read} write {write}",
                        disk = d.name,
                        read = units::rate(d.read_bps),
                        write = units::rate(d.write_bps)
                    ));
                    ui.separator();
                }
            });
        }
        Some(_) => {}
        None => {
            ui.weak(tr!("Disks: {disks}", disks = h.disks.show(|_| String::new())));
        }
    }
    per_core_strip(ui, &h.per_core_pct);
}

fn per_core_strip(ui: &mut egui::Ui, cores: &[f64]) {
    if cores.is_empty() {
        return;
    }
    ui.horizontal(|ui| {
        ui.label(tr!("Per core:")).on_hover_text(tr!(
            "Each bar is one logical CPU; a single full bar with an idle GPU often means a single-threaded data loader."
        ));
        let w = ((ui.available_width() - 8.0) / cores.len() as f32).clamp(3.0, 18.0);
        let (rect, resp) = ui.allocate_exact_size(egui::vec2(w * cores.len() as f32, 26.0), egui::Sense::hover());
        let painter = ui.painter_at(rect);
        for (i, c) in cores.iter().enumerate() {
            let x0 = rect.left() + i as f32 * w;
            let cell =
                egui::Rect::from_min_max(egui::pos2(x0 + 1.0, rect.top()), egui::pos2(x0 + w - 1.0, rect.bottom()));
            painter.rect_filled(cell, 1.0, ui.visuals().extreme_bg_color);
            let h = cell.height() * (*c as f32 / 100.0).clamp(0.0, 1.0);
            let fill = egui::Rect::from_min_max(egui::pos2(cell.left(), cell.bottom() - h), cell.max);
            let color = if *c > 90.0 { Color32::from_rgb(239, 83, 80) } else { Color32::from_rgb(66, 165, 245) };
            painter.rect_filled(fill, 1.0, color);
        }
        if let Some(pos) = resp.hover_pos() {
            let i = ((pos.x - rect.left()) / w).floor() as usize;
            if let Some(v) = cores.get(i) {
                resp.on_hover_text(format!("CPU {i}: {}", crate::units::percent_whole(*v)));
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::Reading;

    fn gpu(util: f64, power: f64, limit: f64, mask: u64) -> GpuSample {
        let mut g = GpuSample::unavailable(0, GpuHealth::Ok, "x");
        g.util_gpu_pct = Reading::Value(util);
        g.power_w = Reading::Value(power);
        g.power_limit_w = Reading::Value(limit);
        g.throttle_mask = Reading::Value(mask);
        g
    }

    #[test]
    fn a_power_cap_under_full_load_reads_the_same_on_every_gpu_and_is_normal() {
        // Two GPUs at the same power under full load: one driver reports the power-cap reason,
        // the other only draws at its limit. Both cards must say the same, neutrally.
        let with_reason = clock_lines(&gpu(99.0, 349.0, 350.0, throttle::SW_POWER_CAP), false);
        let without = clock_lines(&gpu(99.0, 349.0, 350.0, 0), false);
        // Just under the limit at this instant, but the window's verdict says it ran at it.
        let by_verdict = clock_lines(&gpu(97.0, 320.0, 350.0, 0), true);
        assert_eq!(with_reason, by_verdict);
        assert_eq!(with_reason, without);
        assert_eq!(with_reason.len(), 1);
        assert_eq!(with_reason[0].tone, Some(Tone::Info));
        assert!(with_reason[0].text.starts_with("At its power limit"), "{with_reason:?}");
        // A hardware slowdown stays a failure; an idle GPU is a plain remark.
        let hw = clock_lines(&gpu(99.0, 200.0, 350.0, throttle::HW_SLOWDOWN), false);
        assert!(hw.iter().any(|l| l.tone == Some(Tone::Fail)), "{hw:?}");
        let idle = clock_lines(&gpu(0.0, 20.0, 350.0, throttle::GPU_IDLE), false);
        assert_eq!(idle[0].tone, None);
        assert!(idle[0].text.contains("idle"));
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
}
