//! Differential diagnosis: for a symptom a check can fail with, its known causes (each with where
//! it is documented and the one command that confirms or rules it out), and what a failing check
//! concluded about them ([`CauseFinding`]): the cause when the collected facts decide it, else the
//! causes that remain, most likely first. `docs/diagnosis.md` is the same table in prose; a test
//! holds the two together.
//!
//! A check names the cause in its finding when the facts decide it; when they do not, it names
//! the symptom and offers each remaining candidate with its confirming command (a fix step of its
//! own, so the window gives it a Copy button), never a guess.

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
}

impl CauseFinding {
    /// The cause the facts decide.
    pub fn decided(d: &Differential, id: &str) -> CauseFinding {
        CauseFinding::Decided { symptom: d.id.to_string(), id: id.to_string() }
    }

    /// The causes that remain, most likely first.
    pub fn candidates(d: &Differential, ids: &[&str]) -> CauseFinding {
        CauseFinding::Candidates { symptom: d.id.to_string(), ids: ids.iter().map(|s| s.to_string()).collect() }
    }
}

/// The symptom "the NVIDIA kernel module is not loaded" (on a machine with an NVIDIA GPU on its
/// PCI bus, outside WSL and containers): DRV-01, DRV-04 when nouveau runs the GPU instead, DRV-05
/// when Secure Boot keeps the module out.
pub const MODULE_NOT_LOADED: Differential = Differential {
    id: "module-not-loaded",
    checks: &["DRV-01", "DRV-04", "DRV-05"],
    symptom: crate::tr_key!("The NVIDIA kernel module is not loaded"),
    causes: &[
        CauseDef {
            id: "driver-not-installed",
            name: crate::tr_key!("no NVIDIA driver is installed"),
            sources: &["https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/index.html"],
            confirm: "ldconfig -p | grep libnvidia-ml; find /lib/modules -name 'nvidia*.ko*'",
        },
        CauseDef {
            id: "module-not-built-for-kernel",
            name: crate::tr_key!("the driver's kernel module was not built for the running kernel"),
            sources: &[
                "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/index.html",
                "https://rpmfusion.org/Howto/NVIDIA",
                "https://github.com/negativo17/nvidia-driver/issues/39",
            ],
            confirm: "find /lib/modules/$(uname -r) -name 'nvidia*.ko*'",
        },
        CauseDef {
            id: "secure-boot-refused-module",
            name: crate::tr_key!("Secure Boot refused the unsigned module"),
            sources: &[
                "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/index.html",
                "https://man7.org/linux/man-pages/man7/kernel_lockdown.7.html",
            ],
            confirm: "sudo modprobe nvidia",
        },
        CauseDef {
            id: "nouveau-holds-gpu",
            name: crate::tr_key!("the open-source nouveau driver took the GPU first"),
            sources: &[
                "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/index.html",
                "https://github.com/negativo17/nvidia-driver/issues/73",
            ],
            confirm: "lspci -nnk -d 10de:",
        },
        CauseDef {
            id: "open-module-unsupported-gpu",
            name: crate::tr_key!("the open kernel module does not support this GPU (it needs Turing or newer)"),
            sources: &[
                "https://github.com/NVIDIA/open-gpu-kernel-modules#compatible-gpus",
                "https://github.com/pop-os/cosmic-epoch/issues/1886",
            ],
            confirm: "sudo dmesg | grep -i 'not supported by open'",
        },
        CauseDef {
            id: "module-blacklisted",
            name: crate::tr_key!("the module is blacklisted (modprobe.d or the kernel command line)"),
            sources: &["https://man7.org/linux/man-pages/man5/modprobe.d.5.html"],
            confirm: "grep -rs -e nvidia /etc/modprobe.d /usr/lib/modprobe.d /proc/cmdline",
        },
        CauseDef {
            id: "module-load-error",
            name: crate::tr_key!("loading the module fails with an error of its own"),
            sources: &["https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/index.html"],
            confirm: "sudo modprobe nvidia",
        },
    ],
};

/// Every symptom with a differential.
pub static DIFFERENTIALS: &[Differential] = &[MODULE_NOT_LOADED];

/// The cause `id` of the symptom `symptom`.
pub fn cause(symptom: &str, id: &str) -> Option<&'static CauseDef> {
    DIFFERENTIALS.iter().find(|d| d.id == symptom).and_then(|d| d.causes.iter().find(|c| c.id == id))
}

/// The fix steps that ask about each candidate in turn: the cause in words, then the command that
/// confirms or rules it out.
pub fn candidate_steps(d: &Differential, ids: &[&str]) -> Vec<FixStep> {
    let mut out = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let Some(c) = d.causes.iter().find(|c| c.id == *id) else { continue };
        out.push(FixStep::Text(crate::msg!(
            "{n}. Is it that {cause}? This confirms or rules it out:",
            n = i + 1,
            cause = Message::new(c.name)
        )));
        out.push(FixStep::Command(c.confirm.to_string()));
    }
    out
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
        let doc = include_str!("../../docs/diagnosis.md");
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
