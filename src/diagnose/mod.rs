//! The checklist: walks the stack in the method's order (PCI device → driver → CUDA → permissions →
//! container → WSL → environment → runtime health) over a [`system::SystemView`] (this machine or a
//! capture), giving each check evidence, a verdict, a plain explanation and fix commands. When a
//! lower layer fails, the checks that depend on it are shown as blocked by it, and the first
//! unblocked failure is named the root cause.

pub mod archive;
pub mod bottleneck;
pub mod bugreport;
pub mod bugview;
pub mod capture;
pub mod checks;
pub mod collect;
#[cfg(windows)]
pub(crate) mod collect_win;
pub mod headline;
pub mod input;
pub mod journal;
pub mod ldcache;
pub mod parse;
pub mod system;
pub mod winfacts;
#[cfg(test)]
mod wording_tests;

use serde::{Deserialize, Serialize};

use system::SystemView;

pub use crate::verdict::Verdict;

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
            Layer::Hardware => crate::tr!("GPU hardware"),
            Layer::Driver => crate::tr!("NVIDIA driver"),
            Layer::Cuda => crate::tr!("CUDA and frameworks"),
            Layer::Permissions => crate::tr!("Permissions"),
            Layer::Containers => crate::tr!("Containers"),
            Layer::Wsl => "WSL",
            Layer::Environment => crate::tr!("Environment"),
            Layer::Runtime => crate::tr!("Runtime health"),
            Layer::Windows => "Windows",
        }
    }
}

/// One step of a fix: prose to read, or one shell command to run as it stands.
///
/// Serialised as `{"text": "..."}` or `{"command": "..."}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FixStep {
    /// An instruction in words (may name a command in passing; never meant for a shell).
    Text(String),
    /// Exactly one command line for a shell: no prose, no distribution prefix, no comment.
    Command(String),
}

impl FixStep {
    /// The step's text, whichever kind it is.
    pub fn as_str(&self) -> &str {
        match self {
            FixStep::Text(t) | FixStep::Command(t) => t,
        }
    }

    /// The step as one line of plain text: commands indented by `$ `.
    pub fn plain(&self) -> String {
        match self {
            FixStep::Text(t) => t.clone(),
            FixStep::Command(c) => format!("$ {c}"),
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
    /// The finding as a short sentence that reads right as a headline, for this verdict
    /// ("The NVIDIA driver is not installed", "GPU 0 fell off the bus", "Not checked: ...").
    #[serde(default)]
    pub finding: String,
    /// One line: what was found, with the details.
    pub summary: String,
    /// What it means, in plain words (empty when nothing needs explaining).
    pub explanation: String,
    /// What was read: paths and values.
    pub evidence: Vec<String>,
    /// The steps that fix it, in order: prose, and commands (each one copyable on its own).
    pub fixes: Vec<FixStep>,
    /// The id of the failed check this one depends on, when it is blocked.
    pub blocked_by: Option<String>,
    /// The id of the failure that causes this one, when it is a consequence (its own fixes are
    /// then held back: fixing the cause comes first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explained_by: Option<String>,
    /// Set when the check does not apply to this kind of machine: where it does apply
    /// ("Windows", "WSL", "containers", ...). Text output folds such checks into one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applies_to: Option<String>,
}

impl Check {
    pub(crate) fn new(id: &str, layer: Layer, title: &str) -> Self {
        Check {
            id: id.to_string(),
            layer,
            title: title.to_string(),
            verdict: Verdict::Skipped,
            finding: String::new(),
            summary: String::new(),
            explanation: String::new(),
            evidence: Vec::new(),
            fixes: Vec::new(),
            blocked_by: None,
            explained_by: None,
            applies_to: None,
        }
    }
    /// Sets the verdict and the detailed summary. A skipped verdict also gets the finding
    /// "Not checked: <summary>" unless [`Check::found`] gives a better one afterwards.
    pub(crate) fn verdict(mut self, v: Verdict, summary: impl Into<String>) -> Self {
        self.verdict = v;
        self.summary = summary.into();
        if v == Verdict::Skipped {
            let finding = crate::tr!("Not checked: {summary}", summary = self.summary);
            self.finding = finding;
        }
        self
    }
    /// Sets the headline finding.
    pub(crate) fn found(mut self, finding: impl Into<String>) -> Self {
        self.finding = finding.into();
        self
    }
    /// Skips a check that does not apply to this kind of machine; `place` is where it does.
    pub(crate) fn not_here(self, place: &str, summary: impl Into<String>) -> Self {
        let mut c = self.verdict(Verdict::Skipped, summary);
        c.finding = crate::tr!("Does not apply here (only on {place})", place = place);
        c.applies_to = Some(place.to_string());
        c
    }
    pub(crate) fn explain(mut self, text: impl Into<String>) -> Self {
        self.explanation = text.into();
        self
    }
    pub(crate) fn evidence(mut self, e: impl Into<String>) -> Self {
        self.evidence.push(e.into());
        self
    }
    /// Adds a fix step in words.
    pub(crate) fn text(mut self, t: impl Into<String>) -> Self {
        self.fixes.push(FixStep::Text(t.into()));
        self
    }
    /// Adds a fix step that is one shell command.
    pub(crate) fn cmd(mut self, c: impl Into<String>) -> Self {
        self.fixes.push(FixStep::Command(c.into()));
        self
    }
    /// Adds fix steps.
    pub(crate) fn steps(mut self, s: impl IntoIterator<Item = FixStep>) -> Self {
        self.fixes.extend(s);
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
    /// Entries of a capture that were not read: links leaving the capture, FIFOs, devices,
    /// oversized files (`path: why`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
    /// Set when the checks ran on an imported file (`nvidia-bug-report.log`, `nvidia-smi -q`):
    /// what it is and what it held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported: Option<bugview::Imported>,
}

/// The most evidence lines a check from elsewhere (a server's `check --json`) keeps; our own
/// checks quote far fewer.
pub const MAX_EVIDENCE: usize = 64;
/// The most checks a report from elsewhere keeps (gpu-doctor has a few dozen).
pub const MAX_CHECKS: usize = 256;

impl Report {
    /// A report made elsewhere, cut to what a person can read: at most [`MAX_CHECKS`] checks and
    /// [`MAX_EVIDENCE`] evidence lines each (the last kept line says how many more there were),
    /// and fix steps likewise. A server's 16 MB checklist with 250 000 evidence lines must not
    /// take the window's memory with it.
    pub fn bounded(mut self) -> Report {
        self.checks.truncate(MAX_CHECKS);
        for c in &mut self.checks {
            if c.evidence.len() > MAX_EVIDENCE {
                let more = c.evidence.len() - (MAX_EVIDENCE - 1);
                c.evidence.truncate(MAX_EVIDENCE - 1);
                c.evidence.push(crate::tr!("… and {n} more lines not shown", n = more));
            }
            c.fixes.truncate(MAX_EVIDENCE);
        }
        self
    }

    /// The report with its texts in the current language, for a report made in English elsewhere
    /// (a server's `check --json`): titles, findings, summaries, explanations, evidence and the
    /// fix steps in words (commands stay as they are).
    pub fn localized(mut self) -> Report {
        let tr = crate::i18n::retranslate;
        for c in &mut self.checks {
            for text in [&mut c.title, &mut c.finding, &mut c.summary, &mut c.explanation] {
                *text = tr(text);
            }
            for e in &mut c.evidence {
                *e = tr(e);
            }
            if let Some(place) = &mut c.applies_to {
                *place = tr(place);
            }
            for f in &mut c.fixes {
                if let FixStep::Text(t) = f {
                    *t = tr(t);
                }
            }
        }
        self
    }

    /// The worst verdict of any check.
    pub fn worst(&self) -> Verdict {
        self.checks.iter().map(|c| c.verdict).max().unwrap_or(Verdict::Pass)
    }

    /// The check with `id`.
    pub fn get(&self, id: &str) -> Option<&Check> {
        self.checks.iter().find(|c| c.id == id)
    }

    /// The root-cause check, when there is one.
    pub fn root(&self) -> Option<&Check> {
        self.root_cause.as_ref().and_then(|id| self.get(id))
    }

    /// Checks that do not apply to this kind of machine, and the places they apply to (in
    /// first-seen order, without repeats).
    pub fn not_applicable(&self) -> (usize, Vec<&str>) {
        let mut places: Vec<&str> = Vec::new();
        let mut n = 0;
        for p in self.checks.iter().filter_map(|c| c.applies_to.as_deref()) {
            n += 1;
            if !places.contains(&p) {
                places.push(p);
            }
        }
        (n, places)
    }
}

/// Runs every check over `view`, marks dependents of failures as blocked, and names the root cause.
pub fn run(view: &dyn SystemView) -> Report {
    let mut list = checks::all(view);
    // Blocked checks name what blocks it by its own finding, taken before any blocking.
    let own: Vec<(String, String)> = list.iter().map(|c| (c.id.clone(), c.finding.clone())).collect();
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
                let because = own.iter().find(|(id, _)| *id == b).map_or(String::new(), |x| x.1.clone());
                let c = &mut list[i];
                let own_result = crate::tr!(
                    "own result before blocking: {verdict} — {summary}",
                    verdict = c.verdict.word(),
                    summary = c.summary
                );
                c.evidence.insert(0, own_result);
                c.verdict = Verdict::Skipped;
                c.summary = crate::tr!("blocked: {because} (fix that first)", because = because);
                c.finding = crate::tr!("Not checked until this is fixed: {because}", because = because);
                c.fixes.clear();
                c.blocked_by = Some(b);
                c.applies_to = None;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    explain_consequences(&mut list);
    let root_cause = list
        .iter()
        .find(|c| c.verdict == Verdict::Fail && c.blocked_by.is_none() && c.explained_by.is_none())
        .map(|c| c.id.clone());
    Report { checks: list, root_cause, from_capture: view.is_capture(), refused: view.refused(), imported: None }
}

/// Causes before symptoms: each failure that another (unblocked) failure explains
/// ([`checks::CheckDef::explains`]) becomes its consequence, its own fixes replaced by "fix the
/// cause first". Chains resolve to their first cause (the registry has no cycles), so the root
/// cause is the failure nothing else explains, wherever it sits in the list.
fn explain_consequences(list: &mut [Check]) {
    let is_problem = |c: &Check| matches!(c.verdict, Verdict::Fail | Verdict::Warn) && c.blocked_by.is_none();
    let mut links: Vec<(usize, usize)> = Vec::new();
    for (ci, cause) in list.iter().enumerate() {
        if cause.verdict != Verdict::Fail || cause.blocked_by.is_some() {
            continue;
        }
        for id in checks::find(&cause.id).map_or(&[][..], |d| d.explains) {
            if let Some(ei) = list.iter().position(|c| c.id == *id && is_problem(c)) {
                links.push((ci, ei));
            }
        }
    }
    // The first cause of a chain: follow "explained by" up while the cause is itself explained.
    let first_cause = |mut i: usize| {
        for _ in 0..list.len() {
            match links.iter().find(|(_, e)| *e == i) {
                Some((c, _)) => i = *c,
                None => break,
            }
        }
        i
    };
    let marks: Vec<(usize, usize)> =
        links.iter().map(|&(_, e)| (e, first_cause(e))).filter(|(e, root)| e != root).collect();
    for (e, root) in marks {
        if list[e].explained_by.is_some() {
            continue;
        }
        let (root_id, root_finding) = (list[root].id.clone(), list[root].finding.clone());
        let c = &mut list[e];
        let summary = crate::tr!("{summary} — a consequence of: {cause}", summary = c.summary, cause = root_finding);
        c.summary = summary;
        c.fixes = vec![FixStep::Text(crate::tr!("Fix the cause first: {cause}.", cause = root_finding))];
        c.explained_by = Some(root_id);
    }
}

/// A check's fix steps as text lines: the label once, the steps after it lined up under the first
/// (commands with their `$ `).
fn fix_lines(fixes: &[FixStep]) -> Vec<String> {
    let label = crate::tr!("fix: {step}", step = "");
    let indent = " ".repeat(crate::i18n::columns(&label));
    fixes
        .iter()
        .enumerate()
        .map(
            |(i, f)| {
                if i == 0 { crate::tr!("fix: {step}", step = f.plain()) } else { format!("{indent}{}", f.plain()) }
            },
        )
        .collect()
}

/// The report as plain text (no colour): the root cause's finding first, then the checks grouped
/// by layer, those that do not apply here folded into one line. Check ids are left out (they are
/// in the JSON).
pub fn render_text(r: &Report) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    if let Some(i) = &r.imported {
        for line in i.lines() {
            let _ = writeln!(o, "{line}");
        }
        let _ = writeln!(o);
    }
    if !r.refused.is_empty() {
        let _ = writeln!(
            o,
            "{}",
            crate::tr!("Not read from the capture ({n} entries; read as missing):", n = r.refused.len())
        );
        for x in r.refused.iter().take(10) {
            let _ = writeln!(o, "  {x}");
        }
        let _ = writeln!(o);
    }
    match r.root() {
        Some(c) => {
            let _ = writeln!(o, "{}", crate::tr!("Root cause: {finding}", finding = c.finding));
            let _ = writeln!(o, "  {}", crate::tr!("{label}: {value}", label = c.title, value = c.summary));
            if !c.explanation.is_empty() {
                let _ = writeln!(o, "  {}", c.explanation);
            }
            for line in fix_lines(&c.fixes) {
                let _ = writeln!(o, "  {line}");
            }
            let consequences: Vec<&str> = r
                .checks
                .iter()
                .filter(|x| x.explained_by.as_deref() == Some(&c.id))
                .map(|x| x.finding.as_str())
                .collect();
            if !consequences.is_empty() {
                let _ = writeln!(
                    o,
                    "  {}",
                    crate::tr!("It also causes: {list}", list = consequences.join(crate::tr!("; ")))
                );
            }
        }
        None => {
            let _ = writeln!(o, "{}", crate::tr!("No failure found."));
        }
    }
    let version = env!("CARGO_PKG_VERSION");
    let heading = if r.from_capture {
        crate::tr!("gpu-doctor {version} checklist (from a capture)", version = version)
    } else {
        crate::tr!("gpu-doctor {version} checklist", version = version)
    };
    let _ = writeln!(o, "\n{heading}");
    for layer in Layer::ALL {
        let in_layer: Vec<&Check> = r.checks.iter().filter(|c| c.layer == layer && c.applies_to.is_none()).collect();
        if in_layer.is_empty() {
            continue;
        }
        let _ = writeln!(o, "\n== {} ==", layer.title());
        for c in in_layer {
            let line = crate::tr!("{label}: {value}", label = c.title, value = c.summary);
            let _ = writeln!(o, "[{:<7}] {line}", c.verdict.tag());
            // (A check that could not look, with the way to look: "fix" is how to see it.)
            let how_to_see = c.verdict == Verdict::Skipped && c.blocked_by.is_none() && !c.fixes.is_empty();
            if matches!(c.verdict, Verdict::Warn | Verdict::Fail) || how_to_see {
                if !c.explanation.is_empty() {
                    let _ = writeln!(o, "          {}", c.explanation);
                }
                for e in &c.evidence {
                    let _ = writeln!(o, "          {}", crate::tr!("evidence: {e}", e = e));
                }
                for line in fix_lines(&c.fixes) {
                    let _ = writeln!(o, "          {line}");
                }
            }
        }
    }
    let (n, places) = r.not_applicable();
    if n > 0 {
        let places = places.join(crate::tr!(", "));
        let line = if n == 1 {
            crate::tr!("{n} check does not apply here: {places}", n = n, places = places)
        } else {
            crate::tr!("{n} checks do not apply here: {places}", n = n, places = places)
        };
        let _ = writeln!(o, "\n{line}");
    }
    let count = |v: Verdict| r.checks.iter().filter(|c| c.verdict == v).count();
    let totals = crate::tr!(
        "{total} checks: {fail} fail, {warn} warn, {pass} pass, {info} info, {skipped} skipped. Details and evidence: --json",
        total = r.checks.len(),
        fail = count(Verdict::Fail),
        warn = count(Verdict::Warn),
        pass = count(Verdict::Pass),
        info = count(Verdict::Info),
        skipped = count(Verdict::Skipped)
    );
    let _ = writeln!(o, "\n{totals}");
    o
}
