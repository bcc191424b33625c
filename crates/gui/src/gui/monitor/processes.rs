//! The Monitor's GPU process table: rows from every GPU's process list with each process's share
//! of the GPU and of its video engines, sortable by column; a PID opens the "Focus on a process"
//! triage, and a process of this user can be ended (the app asks to confirm).

use crate::i18n::{Here as _, Shown as _};
use eframe::egui::{self, RichText};

use super::{MonitorState, ProcessSort};
use crate::telemetry::endproc::{self, Owner};
use crate::telemetry::sample::{GpuProcess, GpuSample, SAMPLED_SLOWER};
use crate::tr;
use crate::units;

/// Where the processes shown run, which decides what can be done with them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Where {
    /// This machine, read live: focus and end are offered.
    ThisMachine,
    /// A server this window is connected to: its PIDs mean nothing here.
    Server,
    /// Demo data or a recording: the PIDs are not processes of this machine.
    NotLive,
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
            ProcessSort::Sm => a.process.sm_pct.get().cmp(&b.process.sm_pct.get()),
            ProcessSort::Kind => a.process.kind.cmp(&b.process.kind),
        };
        let o = o.then(a.process.pid.cmp(&b.process.pid));
        if desc { o.reverse() } else { o }
    });
    rows
}

impl MonitorState {
    /// The process table of the processes running `here`.
    pub(super) fn process_table(&mut self, ui: &mut egui::Ui, gpus: &[GpuSample], here: Where) {
        ui.heading(tr!("GPU processes"));
        let unavailable: Vec<String> = gpus
            .iter()
            .filter_map(|g| g.processes.reason().map(|r| format!("GPU {}: {}", g.index, r.here())))
            .collect();
        let rows = process_rows(gpus, self.sort, self.sort_desc);
        if here == Where::ThisMachine {
            self.owners.retain(|pid, _| rows.iter().any(|r| r.process.pid == *pid));
            for r in &rows {
                self.owners.entry(r.process.pid).or_insert_with(|| endproc::owner(r.process.pid));
            }
        }
        if rows.is_empty() {
            // The list is read every few seconds, apart from the fast sample: not read yet.
            if gpus.iter().any(|g| g.processes.reason().is_some_and(|r| r.key() == SAMPLED_SLOWER)) {
                ui.weak(tr!("Reading the process list…"));
                return;
            }
            ui.label(if unavailable.is_empty() {
                tr!("No process is using a GPU.")
            } else {
                tr!("Process list unavailable.")
            });
        }
        for u in &unavailable {
            ui.weak(u);
        }
        if rows.is_empty() {
            return;
        }
        let columns = if here == Where::ThisMachine { 8 } else { 7 };
        egui::Grid::new("process_table").striped(true).num_columns(columns).min_col_width(48.0).show(ui, |ui| {
            let sortable = [
                (ProcessSort::Gpu, "GPU", ""),
                (ProcessSort::Pid, "PID", ""),
                (ProcessSort::Name, tr!("Name"), ""),
                (
                    ProcessSort::Sm,
                    tr!("GPU util."),
                    tr!(
                        "% of time this process's kernels ran on the GPU, the mean of NVML's samples since the previous reading (0: it ran none)"
                    ),
                ),
            ];
            for (col, label, help) in sortable {
                self.sort_header(ui, col, label, help);
            }
            ui.label(RichText::new(tr!("Enc. / dec.")).strong())
                .on_hover_text(tr!("This process's use of the video encoder / decoder, %"));
            for (col, label) in [(ProcessSort::Vram, tr!("VRAM")), (ProcessSort::Kind, tr!("Type"))] {
                self.sort_header(ui, col, label, "");
            }
            if here == Where::ThisMachine {
                ui.label("");
            }
            ui.end_row();
            for r in rows {
                let p = &r.process;
                ui.label(r.gpu.to_string());
                match here {
                    Where::ThisMachine => {
                        if ui
                            .link(p.pid.to_string())
                            .on_hover_text(tr!("Focus on this process: state, CPU, I/O, is it stuck?"))
                            .clicked()
                        {
                            self.focus_request = Some(p.pid);
                        }
                    }
                    Where::Server => {
                        ui.label(p.pid.to_string()).on_hover_text(tr!(
                            "A process on the server: run gpu-doctor-cli focus --pid PID there for its triage"
                        ));
                    }
                    Where::NotLive => {
                        ui.label(p.pid.to_string());
                    }
                }
                ui.label(p.shown_name().here());
                ui.label(p.sm_pct.show_short(|v| units::percent_whole(f64::from(*v))));
                ui.label(match (p.encoder_pct.get(), p.decoder_pct.get()) {
                    (Some(e), Some(d)) => {
                        format!("{} / {}", units::percent_whole(f64::from(e)), units::percent_whole(f64::from(d)))
                    }
                    _ => p.encoder_pct.show_short(|v| units::percent_whole(f64::from(*v))),
                });
                ui.label(p.vram_bytes.show_short(|b| units::bytes_in(*b, self.units)));
                ui.label(p.kind.label().here());
                if here == Where::ThisMachine {
                    self.end_cell(ui, &r);
                }
                ui.end_row();
            }
        });
        ui.weak(tr!("In a container the PIDs are those of the host's PID namespace unless it runs with --pid=host."));
    }

    /// A sortable column's header button.
    fn sort_header(&mut self, ui: &mut egui::Ui, col: ProcessSort, label: &str, help: &str) {
        let arrow = match (self.sort == col, self.sort_desc) {
            (true, true) => tr!(" (desc)"),
            (true, false) => tr!(" (asc)"),
            _ => "",
        };
        let sort_hint = tr!("Sort by {label}", label = label);
        let hover = if help.is_empty() { sort_hint } else { format!("{help}\n{sort_hint}") };
        if ui.button(RichText::new(format!("{label}{arrow}")).strong()).on_hover_text(hover).clicked() {
            if self.sort == col {
                self.sort_desc = !self.sort_desc;
            } else {
                self.sort = col;
                self.sort_desc = matches!(col, ProcessSort::Vram | ProcessSort::Sm);
            }
        }
    }

    /// "End…" for a process of this user (never gpu-doctor's own); the app asks to confirm.
    fn end_cell(&mut self, ui: &mut egui::Ui, r: &ProcessRow) {
        if self.owners.get(&r.process.pid) != Some(&Owner::Me) {
            ui.label("");
            return;
        }
        let name = r.process.shown_name().here();
        if ui
            .small_button(tr!("End…"))
            .on_hover_text(tr!("End process {pid} ({name}): asks to confirm first", pid = r.process.pid, name = name))
            .clicked()
        {
            self.end_request = Some((r.process.pid, name, r.gpu));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::Reading;
    use crate::telemetry::sample::{GpuHealth, ProcessKind};

    fn gpu_with(index: u32, procs: Vec<(u32, &str, u64)>) -> GpuSample {
        let mut g = GpuSample::unavailable(index, GpuHealth::Ok, "x");
        g.processes = Reading::Value(
            procs
                .into_iter()
                .map(|(pid, name, vram)| GpuProcess::new(pid, name, Reading::Value(vram), ProcessKind::Compute))
                .collect(),
        );
        g
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
