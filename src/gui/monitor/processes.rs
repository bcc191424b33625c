//! The Monitor's GPU process table: rows from every GPU's process list, sortable by column; a
//! PID opens the "Focus on a process" triage.

use eframe::egui::{self, RichText};

use super::{MonitorState, ProcessSort};
use crate::telemetry::sample::{GpuProcess, GpuSample};
use crate::tr;
use crate::units;

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

impl MonitorState {
    /// The process table; `remote`: the processes run on a server, where "Focus on a process"
    /// (which reads this machine) cannot follow them.
    pub(super) fn process_table(&mut self, ui: &mut egui::Ui, gpus: &[GpuSample], remote: bool) {
        ui.heading(tr!("GPU processes"));
        let unavailable: Vec<String> = gpus
            .iter()
            .filter_map(|g| g.processes.reason().map(|r| format!("GPU {}: {}", g.index, r.here())))
            .collect();
        let rows = process_rows(gpus, self.sort, self.sort_desc);
        if rows.is_empty() {
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
        egui::Grid::new("process_table").striped(true).num_columns(5).min_col_width(60.0).show(ui, |ui| {
            for (col, label) in [
                (ProcessSort::Gpu, "GPU"),
                (ProcessSort::Pid, "PID"),
                (ProcessSort::Name, tr!("Name")),
                (ProcessSort::Vram, tr!("VRAM")),
                (ProcessSort::Kind, tr!("Type")),
            ] {
                let arrow = match (self.sort == col, self.sort_desc) {
                    (true, true) => tr!(" (desc)"),
                    (true, false) => tr!(" (asc)"),
                    _ => "",
                };
                if ui
                    .button(RichText::new(format!("{label}{arrow}")).strong())
                    .on_hover_text(tr!("Sort by {label}", label = label))
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
                if remote {
                    ui.label(r.process.pid.to_string()).on_hover_text(tr!(
                        "A process on the server: run gpu-doctor-cli focus --pid PID there for its triage"
                    ));
                } else if ui
                    .link(r.process.pid.to_string())
                    .on_hover_text(tr!("Focus on this process: state, CPU, I/O, is it stuck?"))
                    .clicked()
                {
                    self.focus_request = Some(r.process.pid);
                }
                ui.label(r.process.shown_name().here());
                ui.label(r.process.vram_bytes.show_short(|b| units::bytes_in(*b, self.units)));
                ui.label(r.process.kind.label().here());
                ui.end_row();
            }
        });
        ui.weak(tr!("In a container the PIDs are those of the host's PID namespace unless it runs with --pid=host."));
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
    fn process_rows_sort_by_each_column() {
        let gpus = vec![gpu_with(0, vec![(10, "b", 5), (30, "a", 1)]), gpu_with(1, vec![(20, "C", 9)])];
        let pids = |s, d| process_rows(&gpus, s, d).iter().map(|r| r.process.pid).collect::<Vec<_>>();
        assert_eq!(pids(ProcessSort::Vram, true), [20, 10, 30]);
        assert_eq!(pids(ProcessSort::Pid, false), [10, 20, 30]);
        assert_eq!(pids(ProcessSort::Name, false), [30, 10, 20]);
        assert_eq!(pids(ProcessSort::Gpu, true), [20, 30, 10]);
    }
}
