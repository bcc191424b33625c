//! The one diagnosis every surface shows first: the checklist's root cause and its first fix. The
//! Monitor's no-GPU banner, `info`, the support card and reports take it from here, so the first
//! thing a newcomer reads agrees with the checklist; NVML's own explanation is a detail under it.

use serde::Serialize;

use super::{FixStep, Report, Verdict};
use crate::i18n::Message;
use crate::telemetry::source::NoGpu;

/// What is wrong, in one line, and what to do first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Headline {
    /// What was found, as a sentence ("No GPU was passed into this container").
    pub finding: Message,
    /// What to do: the root cause's fix, step by step (prose and runnable commands).
    pub steps: Vec<FixStep>,
    /// The check it comes from (for hover text and JSON; never printed in prose).
    pub check_id: Option<String>,
}

impl Headline {
    /// The checklist's root cause, when a check failed.
    pub fn of_report(report: &Report) -> Option<Headline> {
        let root = report.root_cause.as_ref().and_then(|id| report.get(id))?;
        (root.verdict == Verdict::Fail).then(|| Headline {
            finding: root.finding.clone(),
            steps: root.fixes.clone(),
            check_id: Some(root.id.clone()),
        })
    }

    /// NVML's own explanation, for when the checklist found no failure (or has not run).
    pub fn of_nvml(no: &NoGpu) -> Headline {
        let (finding, next_step) = no.shown_message(cfg!(windows));
        Headline {
            finding,
            steps: if next_step.is_empty() { Vec::new() } else { vec![FixStep::Text(next_step)] },
            check_id: None,
        }
    }

    /// The diagnosis for a machine without GPU data: the checklist's root cause when it has one,
    /// else NVML's explanation.
    pub fn for_no_gpu(report: Option<&Report>, no: &NoGpu) -> Headline {
        // A host that gives its GPUs to virtual machines has no NVIDIA driver on purpose: NVML's
        // "not found, install the driver" would contradict the checklist.
        let reserved =
            report.and_then(|r| r.get("DRV-08")).is_some_and(|c| c.summary.key() == super::checks::RESERVED_FOR_VMS);
        if reserved {
            return Headline {
                finding: crate::msg!(
                    "The NVIDIA GPUs are reserved for virtual machines: no NVIDIA driver is meant to run on this host"
                ),
                steps: Vec::new(),
                check_id: Some("HW-02".into()),
            };
        }
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
            failure: None,
        }
    }

    #[test]
    fn the_checklist_root_cause_wins_over_nvml() {
        let mut c = Check::new("CONT-02", Layer::Containers, "GPU passed into the container");
        c = c.verdict(Verdict::Fail, "no GPU was passed into this container").cmd("docker run --gpus all IMAGE");
        c.finding = "No GPU was passed into this container".into();
        let report = Report {
            checks: vec![c],
            root_cause: Some("CONT-02".into()),
            from_capture: false,
            refused: Vec::new(),
            imported: None,
            origin: None,
        };
        let h = Headline::for_no_gpu(Some(&report), &no_gpu());
        assert_eq!(h.finding.en(), "No GPU was passed into this container");
        assert_eq!(h.steps, vec![FixStep::Command("docker run --gpus all IMAGE".into())]);
        assert!(h.from_checklist());
        let none = Report {
            checks: Vec::new(),
            root_cause: None,
            from_capture: false,
            refused: Vec::new(),
            imported: None,
            origin: None,
        };
        let h = Headline::for_no_gpu(Some(&none), &no_gpu());
        assert_eq!(h.finding.en(), "No NVIDIA driver seems to be installed");
        assert_eq!(h.steps, vec![FixStep::Text("Install the driver".into())]);
        assert!(!h.from_checklist());
        assert_eq!(Headline::for_no_gpu(None, &no_gpu()), h);
    }
}
