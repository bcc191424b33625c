//! The one diagnosis every surface shows first: the checklist's root cause and its first fix. The
//! Monitor's no-GPU banner, `info`, the support card and reports take it from here, so the first
//! thing a newcomer reads agrees with the checklist; NVML's own explanation is a detail under it.

use serde::Serialize;

use super::{Report, Verdict};
use crate::telemetry::source::NoGpu;

/// What is wrong, in one line, and what to do first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Headline {
    /// What was found, as a sentence ("No GPU was passed into this container").
    pub finding: String,
    /// The first fix step, when there is one.
    pub next_step: Option<String>,
    /// The check it comes from (for hover text and JSON; never printed in prose).
    pub check_id: Option<String>,
}

impl Headline {
    /// The checklist's root cause, when a check failed.
    pub fn of_report(report: &Report) -> Option<Headline> {
        let root = report.root_cause.as_ref().and_then(|id| report.get(id))?;
        (root.verdict == Verdict::Fail).then(|| Headline {
            finding: root.summary.clone(),
            next_step: root.fixes.first().cloned(),
            check_id: Some(root.id.clone()),
        })
    }

    /// NVML's own explanation, for when the checklist found no failure (or has not run).
    pub fn of_nvml(no: &NoGpu) -> Headline {
        Headline {
            finding: no.summary.clone(),
            next_step: (!no.next_step.is_empty()).then(|| no.next_step.clone()),
            check_id: None,
        }
    }

    /// The diagnosis for a machine without GPU data: the checklist's root cause when it has one,
    /// else NVML's explanation.
    pub fn for_no_gpu(report: Option<&Report>, no: &NoGpu) -> Headline {
        report.and_then(Self::of_report).unwrap_or_else(|| Self::of_nvml(no))
    }

    /// True when it came from the checklist (NVML's text is then only a detail).
    pub fn from_checklist(&self) -> bool {
        self.check_id.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::Check;
    use crate::diagnose::Layer;

    fn no_gpu() -> NoGpu {
        NoGpu {
            summary: "No NVIDIA driver seems to be installed".into(),
            next_step: "Install the driver".into(),
            attempts: Vec::new(),
        }
    }

    #[test]
    fn the_checklist_root_cause_wins_over_nvml() {
        let mut c = Check::new("CONT-02", Layer::Containers, "GPU passed into the container");
        c = c.verdict(Verdict::Fail, "no GPU was passed into this container").fix("docker run --gpus all IMAGE");
        let report = Report { checks: vec![c], root_cause: Some("CONT-02".into()), from_capture: false };
        let h = Headline::for_no_gpu(Some(&report), &no_gpu());
        assert_eq!(h.finding, "no GPU was passed into this container");
        assert_eq!(h.next_step.as_deref(), Some("docker run --gpus all IMAGE"));
        assert!(h.from_checklist());
        let none = Report { checks: Vec::new(), root_cause: None, from_capture: false };
        let h = Headline::for_no_gpu(Some(&none), &no_gpu());
        assert_eq!(h.finding, "No NVIDIA driver seems to be installed");
        assert!(!h.from_checklist());
        assert_eq!(Headline::for_no_gpu(None, &no_gpu()), h);
    }
}
