//! The checklist: walks the stack in the method's order (PCI device → driver → CUDA → permissions →
//! container → WSL → environment → runtime health) over a [`view::SystemView`] (this machine or a
//! capture), giving each check evidence, a verdict, a plain explanation and fix commands. When a
//! lower layer fails, the checks that depend on it are shown as blocked by it, and the first
//! unblocked failure is named the root cause.

pub mod archive;
pub mod bottleneck;
pub mod checks;
pub mod collect;
pub mod headline;
pub mod parse;
pub mod source;
pub mod view;

use serde::{Deserialize, Serialize};

use view::SystemView;

/// A check's outcome, from best to worst.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Not applicable here, blocked by an earlier failure, or its evidence is missing.
    Skipped,
    /// Healthy.
    Pass,
    /// Context only.
    Info,
    /// Works, but degraded or likely to bite later.
    Warn,
    /// GPU compute will not work (or a hardware fault).
    Fail,
}

impl Verdict {
    /// Upper-case word for text output.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Skipped => "SKIPPED",
            Verdict::Pass => "PASS",
            Verdict::Info => "INFO",
            Verdict::Warn => "WARN",
            Verdict::Fail => "FAIL",
        }
    }
}

/// A layer of the stack, in checking order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// The PCI device.
    Hardware,
    /// Kernel module and libraries.
    Driver,
    /// CUDA versions and frameworks.
    Cuda,
    /// Device files.
    Permissions,
    /// Docker, Podman, Kubernetes.
    Containers,
    /// Windows Subsystem for Linux.
    Wsl,
    /// Environment variables and library paths.
    Environment,
    /// Errors, throttling, links while running.
    Runtime,
    /// Windows-only facts (driver files, version, driver model).
    Windows,
}

impl Layer {
    /// Every layer, in order.
    pub const ALL: [Layer; 9] = [
        Layer::Hardware,
        Layer::Driver,
        Layer::Cuda,
        Layer::Permissions,
        Layer::Containers,
        Layer::Wsl,
        Layer::Environment,
        Layer::Runtime,
        Layer::Windows,
    ];

    /// Title for a wizard step.
    pub fn title(self) -> &'static str {
        match self {
            Layer::Hardware => "GPU hardware",
            Layer::Driver => "NVIDIA driver",
            Layer::Cuda => "CUDA and frameworks",
            Layer::Permissions => "Permissions",
            Layer::Containers => "Containers",
            Layer::Wsl => "WSL",
            Layer::Environment => "Environment",
            Layer::Runtime => "Runtime health",
            Layer::Windows => "Windows",
        }
    }
}

/// One check's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// Stable id, e.g. `DRV-01`: the id of its definition in [`checks::CHECKS`].
    pub id: String,
    /// The layer it belongs to.
    pub layer: Layer,
    /// What is checked, e.g. "NVIDIA kernel module loaded".
    pub title: String,
    /// The outcome.
    pub verdict: Verdict,
    /// One line: what was found.
    pub summary: String,
    /// What it means, in plain words (empty when nothing needs explaining).
    pub explanation: String,
    /// What was read: paths and values.
    pub evidence: Vec<String>,
    /// Commands or steps that fix it, each copyable.
    pub fixes: Vec<String>,
    /// The id of the failed check this one depends on, when it is blocked.
    pub blocked_by: Option<String>,
}

impl Check {
    pub(crate) fn new(id: &str, layer: Layer, title: &str) -> Self {
        Check {
            id: id.to_string(),
            layer,
            title: title.to_string(),
            verdict: Verdict::Skipped,
            summary: String::new(),
            explanation: String::new(),
            evidence: Vec::new(),
            fixes: Vec::new(),
            blocked_by: None,
        }
    }
    pub(crate) fn verdict(mut self, v: Verdict, summary: impl Into<String>) -> Self {
        self.verdict = v;
        self.summary = summary.into();
        self
    }
    pub(crate) fn explain(mut self, text: impl Into<String>) -> Self {
        self.explanation = text.into();
        self
    }
    pub(crate) fn evidence(mut self, e: impl Into<String>) -> Self {
        self.evidence.push(e.into());
        self
    }
    pub(crate) fn fix(mut self, f: impl Into<String>) -> Self {
        self.fixes.push(f.into());
        self
    }
}

/// All checks, in order, with the root cause.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// Every check, in the method's order.
    pub checks: Vec<Check>,
    /// The first failure not explained by an earlier one.
    pub root_cause: Option<String>,
    /// True when run on a capture rather than this machine.
    pub from_capture: bool,
}

impl Report {
    /// The worst verdict of any check.
    pub fn worst(&self) -> Verdict {
        self.checks.iter().map(|c| c.verdict).max().unwrap_or(Verdict::Pass)
    }

    /// The check with `id`.
    pub fn get(&self, id: &str) -> Option<&Check> {
        self.checks.iter().find(|c| c.id == id)
    }
}

/// Runs every check over `view`, marks dependents of failures as blocked, and names the root cause.
pub fn run(view: &dyn SystemView) -> Report {
    let mut list = checks::all(view);
    // A check whose prerequisite failed is blocked by it rather than counted as another failure.
    // Prerequisites may come later in the order (in a container, the driver checks depend on the
    // container having received the GPU), so this runs to a fixed point.
    loop {
        let mut changed = false;
        for i in 0..list.len() {
            if !matches!(list[i].verdict, Verdict::Fail | Verdict::Warn | Verdict::Skipped)
                || list[i].blocked_by.is_some()
            {
                continue;
            }
            let deps = checks::find(&list[i].id).map_or(&[][..], |d| d.depends_on);
            let blocker = deps.iter().find_map(|dep| {
                list.iter().find(|c| c.id == *dep && c.id != list[i].id).and_then(|c| {
                    match (&c.verdict, &c.blocked_by) {
                        (_, Some(b)) if *b != list[i].id => Some(b.clone()),
                        (Verdict::Fail, None) => Some(c.id.clone()),
                        _ => None,
                    }
                })
            });
            if let Some(b) = blocker {
                let c = &mut list[i];
                c.evidence.insert(0, format!("own result before blocking: {} — {}", c.verdict.word(), c.summary));
                c.verdict = Verdict::Skipped;
                c.summary = format!("blocked by {b}: fix that first");
                c.fixes.clear();
                c.blocked_by = Some(b);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let root_cause = list.iter().find(|c| c.verdict == Verdict::Fail && c.blocked_by.is_none()).map(|c| c.id.clone());
    Report { checks: list, root_cause, from_capture: view.is_capture() }
}

/// The report as plain text (no colour), grouped by layer, root cause first.
pub fn render_text(r: &Report) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "gpu-doctor {} checklist{}",
        env!("CARGO_PKG_VERSION"),
        if r.from_capture { " (from a capture)" } else { "" }
    );
    match r.root_cause.as_ref().and_then(|id| r.get(id)) {
        Some(c) => {
            let _ = writeln!(o, "\nROOT CAUSE: {} {} — {}", c.id, c.title, c.summary);
            if !c.explanation.is_empty() {
                let _ = writeln!(o, "  {}", c.explanation);
            }
            for f in &c.fixes {
                let _ = writeln!(o, "  fix: {f}");
            }
        }
        None => {
            let _ = writeln!(o, "\nNo failure found.");
        }
    }
    for layer in Layer::ALL {
        let in_layer: Vec<&Check> = r.checks.iter().filter(|c| c.layer == layer).collect();
        if in_layer.is_empty() {
            continue;
        }
        let _ = writeln!(o, "\n== {} ==", layer.title());
        for c in in_layer {
            let _ = writeln!(o, "[{:<7}] {} {}: {}", c.verdict.word(), c.id, c.title, c.summary);
            if matches!(c.verdict, Verdict::Warn | Verdict::Fail) {
                if !c.explanation.is_empty() {
                    let _ = writeln!(o, "          {}", c.explanation);
                }
                for e in &c.evidence {
                    let _ = writeln!(o, "          evidence: {e}");
                }
                for f in &c.fixes {
                    let _ = writeln!(o, "          fix: {f}");
                }
            }
        }
    }
    let count = |v: Verdict| r.checks.iter().filter(|c| c.verdict == v).count();
    let _ = writeln!(
        o,
        "\n{} checks: {} fail, {} warn, {} pass, {} info, {} skipped. Details and evidence: --json",
        r.checks.len(),
        count(Verdict::Fail),
        count(Verdict::Warn),
        count(Verdict::Pass),
        count(Verdict::Info),
        count(Verdict::Skipped)
    );
    o
}
