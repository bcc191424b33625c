//! Jobs the user runs or watches: measuring a run ([`run`]), stuck-job triage of one process
//! ([`focus`]) and the scaling test's fit ([`scale`]). Plain option structs and results in, no
//! command-line or window types: the CLI and the app both call these.

pub mod focus;
pub mod run;
pub mod scale;

use crate::telemetry::snapshot::Snapshot;

/// What these processes use of the GPUs in `snap`: their GPU memory summed over all GPUs (None
/// when no GPU reports per-process memory) and the utilization of each GPU they are on.
pub(crate) fn gpu_use(snap: &Snapshot, pids: &[u32]) -> (Option<u64>, Vec<f64>) {
    let mut memory = None;
    let mut utilization = Vec::new();
    for g in &snap.gpus {
        let Some(list) = g.processes.value() else { continue };
        let mine = list.iter().filter(|p| pids.contains(&p.pid));
        memory = Some(memory.unwrap_or(0) + mine.clone().filter_map(|p| p.vram_bytes.get()).sum::<u64>());
        if mine.count() > 0
            && let Some(u) = g.util_gpu_pct.get()
        {
            utilization.push(u);
        }
    }
    (memory, utilization)
}
