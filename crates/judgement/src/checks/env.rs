//! Environment checks (ENV-*): `CUDA_VISIBLE_DEVICES` (with CUDA's parsing rules), whether CUDA and
//! nvidia-smi number the GPUs the same way (`CUDA_DEVICE_ORDER`), and `LD_LIBRARY_PATH` shadowing
//! the driver's libcuda with a stub or compat copy.
//!
//! Source: the CUDA Programming Guide, "CUDA Environment Variables"
//! (<https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/environment-variables.html>).

use super::{Ctx, MISSING};
use crate::diagnose::parse;
use crate::diagnose::{Check, Verdict};
use crate::msg;

pub(super) fn cuda_visible_devices(c: Check, cx: &Ctx) -> Check {
    let Some(val) = cx.env("CUDA_VISIBLE_DEVICES") else {
        return c
            .verdict(Verdict::Pass, msg!("not set: CUDA programs see every GPU"))
            .found(msg!("CUDA programs see every GPU"));
    };
    let gpus = cx.nvml_gpus();
    let c = c.evidence(format!("CUDA_VISIBLE_DEVICES={val:?}"));
    if gpus.is_empty() {
        return c
            .verdict(Verdict::Info, msg!("set to {val}; no GPU list to compare it with", val = format!("{val:?}")))
            .found(msg!("CUDA_VISIBLE_DEVICES is set (no GPU list to compare it with)"));
    }
    let vis = parse::cuda_visible(val, &gpus);
    let shown = vis.gpus.iter().map(|g| format!("GPU {g}")).collect::<Vec<_>>().join(", ");
    if vis.gpus.is_empty() && vis.mig.is_empty() {
        let why = match &vis.cut_at {
            None => msg!("an empty value hides every GPU"),
            Some(e) => msg!(
                "its first entry {entry} matches no GPU, and CUDA ignores everything after an invalid entry",
                entry = format!("{e:?}")
            ),
        };
        let c = c.verdict(
            Verdict::Fail,
            msg!("CUDA_VISIBLE_DEVICES={val} hides every GPU: {why}", val = format!("{val:?}"), why = why),
        );
        // Slurm set it to the node's numbers of the job's GPUs, but the job sees only those GPUs,
        // renumbered from 0 (a container, or device limits Slurm does not know of): Slurm numbers
        // them from 0 itself only with ConstrainDevices=yes (cgroup.conf).
        let assigned = ["SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "GPU_DEVICE_ORDINAL"].iter().find_map(|k| cx.env(k));
        if scheduler(cx).is_some() && assigned.is_some_and(|a| a.trim() == val.trim()) {
            let local = (0..gpus.len()).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
            return c
                .found(msg!(
                    "CUDA_VISIBLE_DEVICES holds the node's numbers of the job's GPUs, but the job sees them numbered from 0"
                ))
                .explain(msg!(
                    "The scheduler set CUDA_VISIBLE_DEVICES={val}, the GPUs' numbers on the whole node, while this job (its container, or its device limits) sees only {n} GPU(s), numbered from 0: no GPU has that number here. Slurm numbers a job's GPUs from 0 itself only when cgroup.conf has ConstrainDevices=yes; ask the administrators for it. Until then, in the job:",
                    val = format!("{val:?}"),
                    n = gpus.len()
                ))
                .cmd(format!("export CUDA_VISIBLE_DEVICES={local}"));
        }
        return c.found(msg!("CUDA_VISIBLE_DEVICES hides every GPU")).cmd("unset CUDA_VISIBLE_DEVICES").text(msg!(
            "Or set it to GPU indices or UUIDs that exist here: {gpus}",
            gpus = gpus.iter().map(|(i, u)| format!("{i} ({u})")).collect::<Vec<_>>().join(", ")
        ));
    }
    match vis.cut_at {
        Some(e) => c
            .verdict(
                Verdict::Warn,
                msg!(
                    "only {shown} visible: {entry} matches no GPU and hides every entry after it",
                    shown = shown,
                    entry = format!("{e:?}")
                ),
            )
            .found(msg!("CUDA_VISIBLE_DEVICES hides some GPUs by mistake")),
        None => c
            .verdict(
                Verdict::Info,
                if vis.mig.is_empty() {
                    msg!("CUDA sees {shown}", shown = shown)
                } else {
                    msg!("CUDA sees {shown} and MIG {mig}", shown = shown, mig = vis.mig.join(", "))
                },
            )
            .found(msg!("CUDA_VISIBLE_DEVICES selects some GPUs"))
            .explain(scheduler(cx).map_or_else(crate::i18n::Message::default, |(name, job)| {
                msg!(
                    "The {scheduler} job {job} was given these GPUs; the others belong to other jobs. That is the scheduler's doing, not a fault: ask for more GPUs in the job request if it needs them.",
                    scheduler = name,
                    job = job
                )
            })),
    }
}

/// The batch scheduler that started this job, and the job's id, from the variables it sets.
pub(super) fn scheduler<'c>(cx: &'c Ctx) -> Option<(&'static str, &'c str)> {
    [("SLURM_JOB_ID", "Slurm"), ("PBS_JOBID", "PBS"), ("LSB_JOBID", "LSF")]
        .into_iter()
        .find_map(|(k, name)| cx.env(k).map(|v| (name, v)))
}

pub(super) fn cuda_and_smi_order(c: Check, cx: &Ctx) -> Check {
    let Some(n) = cx.nvml else { return c.verdict(Verdict::Skipped, crate::i18n::Message::new(MISSING)) };
    let mut names: Vec<&str> = n.inventory.gpus.iter().map(|g| g.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let order = cx.env("CUDA_DEVICE_ORDER");
    if n.inventory.gpus.len() < 2 || names.len() < 2 || order == Some("PCI_BUS_ID") {
        return c
            .verdict(Verdict::Pass, msg!("same numbering (one GPU model, or CUDA_DEVICE_ORDER=PCI_BUS_ID)"))
            .found(msg!("CUDA and nvidia-smi number the GPUs alike"));
    }
    c.verdict(
        Verdict::Warn,
        msg!(
            "different GPU models and CUDA_DEVICE_ORDER is not PCI_BUS_ID: CUDA's GPU 0 may not be nvidia-smi's GPU 0"
        ),
    )
    .found(msg!("CUDA may number the GPUs differently from nvidia-smi"))
    .text(msg!("Set this before starting the program (or select GPUs by UUID):"))
    .cmd("export CUDA_DEVICE_ORDER=PCI_BUS_ID")
}

pub(super) fn ld_library_path_shadows(c: Check, cx: &Ctx) -> Check {
    let Some(ld) = cx.env("LD_LIBRARY_PATH") else {
        return c
            .verdict(Verdict::Pass, msg!("LD_LIBRARY_PATH not set"))
            .found(msg!("Nothing shadows the driver's CUDA library"));
    };
    let c = c.evidence(format!("LD_LIBRARY_PATH={ld}"));
    let libcuda = cx.v.meta().libraries.iter().find(|l| l.name == "libcuda.so.1");
    if let Some(l) = libcuda.filter(|l| l.path.contains("/stubs/")) {
        return c
            .verdict(Verdict::Fail, msg!("libcuda.so.1 resolves to the toolkit's stub library {path}", path = l.path))
            .found(msg!("A stub CUDA library shadows the driver's"))
            .explain(msg!("The stub only exists for linking; loading it fails with 'CUDA driver is a stub library'."))
            .text(msg!("Remove {dir} from LD_LIBRARY_PATH.", dir = l.path.rsplit_once('/').map_or("", |x| x.0)));
    }
    if let Some(l) = libcuda.filter(|l| l.path.contains("/compat/")) {
        return c.verdict(Verdict::Warn, msg!("libcuda.so.1 comes from a CUDA forward-compatibility package ({path})", path = l.path)).found(msg!("A forward-compatibility CUDA library comes before the driver's")).text(msg!("Remove the compat directory from LD_LIBRARY_PATH unless this is a data-center GPU set up for forward compatibility."));
    }
    if ld.split(':').any(|d| d.contains("/stubs")) {
        return c
            .verdict(Verdict::Warn, msg!("a stubs directory is on LD_LIBRARY_PATH"))
            .found(msg!("A CUDA stubs directory is on LD_LIBRARY_PATH"))
            .text(msg!("Remove the stubs directory from LD_LIBRARY_PATH; it is only for linking."));
    }
    c.verdict(Verdict::Pass, msg!("no stub or compat driver library first in line"))
        .found(msg!("Nothing shadows the driver's CUDA library"))
}
