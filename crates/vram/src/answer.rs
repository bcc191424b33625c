//! The calculator's one result for a model, a workload and the GPUs to judge against: the
//! estimate, what must fit, the fit per GPU with its limits, the advice and the assumptions that
//! move the figure. The command line, the app's tab and the report render this; none of them
//! assembles it.

use serde::Serialize;

use super::arch::Arch;
use super::assume::{Assumption, assumptions};
use super::breakdown::{Breakdown, GIB};
use super::error::InputError;
use super::estimate::estimate;
use super::fit::{Fit, Target, fit, need};
use super::solver::{Limits, Suggestion, advice, limits};
use super::workload::Workload;

/// The calculator's answer (`vram --json` carries its fields at the top level).
#[derive(Clone, Debug, Serialize)]
pub struct Answer {
    /// Where the memory goes, per GPU.
    pub breakdown: Breakdown,
    /// What must fit on each GPU (the high end of the range), GiB.
    pub per_gpu_gib: f64,
    /// The fit on each GPU judged against.
    pub fits: Vec<Fit>,
    /// Per fit: the largest batch and longest context.
    pub limits: Vec<Limits>,
    /// What to do, in order ([`advice`]).
    pub suggestions: Vec<Suggestion>,
    /// The settings that change the figure by more than 5 %, each with the figure without it.
    pub assumptions: Vec<Assumption>,
}

impl Answer {
    /// What must fit on each GPU, bytes.
    pub fn need(&self) -> f64 {
        self.per_gpu_gib * GIB
    }
}

/// Estimates `workload` for `arch` and judges it on `targets`.
pub fn answer(arch: &Arch, workload: &Workload, targets: &[Target]) -> Result<Answer, InputError> {
    let breakdown = estimate(arch, workload)?;
    let need = need(&breakdown, workload);
    let fits: Vec<Fit> = targets.iter().map(|t| fit(need, t)).collect();
    let limits = fits.iter().map(|f| limits(arch, workload, f)).collect();
    let suggestions = advice(arch, workload, &fits);
    Ok(Answer {
        breakdown,
        per_gpu_gib: need / GIB,
        fits,
        limits,
        suggestions,
        assumptions: assumptions(arch, workload),
    })
}
