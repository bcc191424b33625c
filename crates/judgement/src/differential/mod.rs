//! Differential diagnosis: for a symptom a check can fail with, its known causes (each with where
//! it is documented and the one command that confirms or rules it out), and what a failing check
//! concluded about them ([`CauseFinding`]): the cause when the collected facts decide it, else the
//! causes that remain, most likely first. `docs/diagnosis.md` is the same table in prose; a test
//! holds the two together.
//!
//! A check names the cause in its finding when the facts decide it; when they do not, it names
//! the symptom and offers each remaining candidate with its confirming command (a fix step of its
//! own, so the window gives it a Copy button), never a guess.
//!
//! This module holds the types and the steps made from them; the tables are in one file per part
//! of the stack (`driver.rs`, `cuda.rs`, `access.rs`, `windows.rs`), all listed in [`DIFFERENTIALS`]
//! so that ids stay unique across symptoms and `docs/diagnosis.md` is checked against all of them.

mod access;
mod cuda;
mod driver;
mod windows;

pub use access::{CONTAINER_LOST_GPU, DEVICE_FILES_MISSING, DEVICE_OPEN_REFUSED, NO_GPU_IN_CONTAINER};
pub use cuda::{CUDA_DOES_NOT_START, GPU_ERRORS_LOGGED};
pub use driver::{DRIVER_HUNG, GPU_NOT_INITIALISED, MODULE_NOT_LOADED, NO_NVIDIA_ON_BUS, NVML_DOES_NOT_START};
pub use windows::{NO_GPU_IN_WSL, WINDOWS_STOPPED_GPU};

use serde::{Deserialize, Serialize};

use super::FixStep;
use crate::i18n::Message;

/// One known cause of a symptom.
#[derive(Clone, Copy, Debug)]
pub struct CauseDef {
    /// Stable id (`module-not-built-for-kernel`), as `check --json` gives it.
    pub id: &'static str,
    /// The cause in words: a catalogue key ("the driver was not built for the running kernel").
    pub name: &'static str,
    /// Where the cause is documented: NVIDIA's documentation or a public thread, by URL.
    pub sources: &'static [&'static str],
    /// One runnable command whose output confirms or rules the cause out.
    pub confirm: &'static str,
}

/// A symptom and its known causes, most likely first.
#[derive(Clone, Copy, Debug)]
pub struct Differential {
    /// Stable id of the symptom (`module-not-loaded`).
    pub id: &'static str,
    /// The checks whose failure is this symptom.
    pub checks: &'static [&'static str],
    /// The symptom in words: a catalogue key.
    pub symptom: &'static str,
    /// Its causes, most likely first.
    pub causes: &'static [CauseDef],
}

/// What a failing check concluded about the cause of its symptom.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum CauseFinding {
    /// The collected facts decide the cause.
    Decided {
        /// The symptom's id.
        symptom: String,
        /// The cause's id in that symptom's table.
        id: String,
    },
    /// The facts leave these causes, most likely first.
    Candidates {
        /// The symptom's id.
        symptom: String,
        /// The remaining causes' ids, most likely first.
        ids: Vec<String>,
    },
    /// None of the symptom's known causes fits what was collected (an error code outside the
    /// documented ones, an Xid NVIDIA's catalogue does not list): said as such, with what to
    /// collect next, never a guessed cause.
    NotExplained {
        /// The symptom's id.
        symptom: String,
    },
}

impl CauseFinding {
    /// The cause the facts decide.
    pub fn decided(d: &Differential, id: &str) -> CauseFinding {
        CauseFinding::Decided { symptom: d.id.to_string(), id: id.to_string() }
    }

    /// None of the known causes fits.
    pub fn not_explained(d: &Differential) -> CauseFinding {
        CauseFinding::NotExplained { symptom: d.id.to_string() }
    }

    /// The causes that remain, most likely first.
    pub fn candidates(d: &Differential, ids: &[&str]) -> CauseFinding {
        CauseFinding::Candidates { symptom: d.id.to_string(), ids: ids.iter().map(|s| s.to_string()).collect() }
    }
}

/// NVIDIA's Xid catalogue.
const XID_CATALOGUE: &str = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html";

/// Every symptom with a differential.
pub static DIFFERENTIALS: &[Differential] = &[
    MODULE_NOT_LOADED,
    GPU_NOT_INITIALISED,
    DEVICE_FILES_MISSING,
    NVML_DOES_NOT_START,
    CUDA_DOES_NOT_START,
    GPU_ERRORS_LOGGED,
    DRIVER_HUNG,
    NO_GPU_IN_CONTAINER,
    CONTAINER_LOST_GPU,
    NO_GPU_IN_WSL,
    WINDOWS_STOPPED_GPU,
    DEVICE_OPEN_REFUSED,
    NO_NVIDIA_ON_BUS,
];

impl Differential {
    /// The name (a catalogue key) of this symptom's cause `id`; empty for an id it does not have.
    pub fn name_of(&self, id: &str) -> &'static str {
        self.causes.iter().find(|c| c.id == id).map_or("", |c| c.name)
    }
}

/// Checks whose every failure names its own cause in the finding, with that cause's fix (a
/// PyTorch build for a newer CUDA, the old kernel module still running, `CUDA_VISIBLE_DEVICES`
/// hiding every GPU, a user outside the device files' group, MIG on without instances, a Linux
/// driver inside WSL, a CPU-only PyTorch on Windows, ...): no differential is needed, as the
/// facts that fail them are the cause. Every other failing check carries a [`CauseFinding`].
pub const CAUSE_IS_THE_FINDING: &[&str] = &[
    "CUDA-04",
    "CUDA-07",
    "CUDA-08",
    "DRV-06",
    "ENV-01",
    "ENV-03",
    "PERM-02",
    "RT-03",
    "RT-06",
    "RT-07",
    "RT-LOST",
    "WIN-TDR",
    "WIN-TORCH",
    "WSL-02",
];

/// The cause `id` of the symptom `symptom`.
pub fn cause(symptom: &str, id: &str) -> Option<&'static CauseDef> {
    DIFFERENTIALS.iter().find(|d| d.id == symptom).and_then(|d| d.causes.iter().find(|c| c.id == id))
}

/// The question a candidate's fix step asks.
const QUESTION: &str = crate::tr_key!("{n}. Is it that {cause}? This confirms or rules it out:");

/// The fix steps that ask about each candidate in turn: the cause in words, then the command that
/// confirms or rules it out.
pub fn candidate_steps(d: &Differential, ids: &[&str]) -> Vec<FixStep> {
    let mut out = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let Some(c) = d.causes.iter().find(|c| c.id == *id) else { continue };
        out.push(FixStep::Text(Message::new(QUESTION).arg("n", i + 1).arg("cause", Message::new(c.name))));
        out.push(FixStep::Command(c.confirm.to_string()));
    }
    out
}

/// Whether a fix step is a candidate's question (from [`candidate_steps`]): a front end that has
/// room for the fix only (the support card) stops before the questions that follow it.
pub fn is_candidate_question(step: &FixStep) -> bool {
    matches!(step, FixStep::Text(m) if m.key() == QUESTION)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cause_has_a_source_and_a_confirming_command_and_ids_are_unique() {
        let mut ids = std::collections::HashSet::new();
        for d in DIFFERENTIALS {
            assert!(ids.insert(d.id), "symptom id {} twice", d.id);
            assert!(!d.checks.is_empty() && d.causes.len() >= 2, "{}", d.id);
            for c in d.causes {
                assert!(ids.insert(c.id), "cause id {} twice", c.id);
                assert!(!c.sources.is_empty() && c.sources.iter().all(|s| s.starts_with("https://")), "{}", c.id);
                assert!(!c.confirm.trim().is_empty() && !c.confirm.contains('<'), "{}: a runnable command", c.id);
                assert!(c.id.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'), "{}", c.id);
            }
            for check in d.checks {
                assert!(crate::diagnose::checks::find(check).is_some(), "{}: no check {check}", d.id);
            }
        }
    }

    #[test]
    fn docs_diagnosis_holds_every_symptom_and_cause_with_its_sources() {
        let doc = include_str!("../../../../docs/diagnosis.md");
        for d in DIFFERENTIALS {
            assert!(doc.contains(&format!("`{}`", d.id)), "docs/diagnosis.md lacks the symptom {}", d.id);
            for c in d.causes {
                assert!(doc.contains(&format!("`{}`", c.id)), "docs/diagnosis.md lacks the cause {}", c.id);
                for s in c.sources {
                    assert!(doc.contains(s), "docs/diagnosis.md lacks {s} for {}", c.id);
                }
                assert!(doc.contains(&format!("`{}`", c.confirm)), "docs/diagnosis.md lacks {}'s command", c.id);
            }
        }
    }

    #[test]
    fn candidates_become_questions_each_with_its_command() {
        let steps = candidate_steps(&MODULE_NOT_LOADED, &["module-blacklisted", "module-load-error"]);
        assert_eq!(steps.len(), 4);
        assert!(matches!(&steps[1], FixStep::Command(c) if c.starts_with("grep -rs")));
        assert!(matches!(&steps[3], FixStep::Command(c) if c == "sudo modprobe nvidia"));
        let FixStep::Text(t) = &steps[2] else { panic!("{steps:?}") };
        assert!(t.en().starts_with("2. Is it that loading the module fails"), "{}", t.en());
        let json = serde_json::to_string(&CauseFinding::candidates(&MODULE_NOT_LOADED, &["module-blacklisted"]))
            .unwrap_or_default();
        assert_eq!(json, r#"{"kind":"candidates","symptom":"module-not-loaded","ids":["module-blacklisted"]}"#);
        assert!(cause("module-not-loaded", "nouveau-holds-gpu").is_some() && cause("x", "y").is_none());
    }
}
