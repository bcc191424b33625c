//! The checklist: walks the stack in the method's order (PCI device → driver → CUDA → permissions →
//! container → WSL → environment → runtime health) over a [`system::SystemView`] (this machine or a
//! capture), giving each check evidence, a verdict, a plain explanation and fix commands. When a
//! lower layer fails, the checks that depend on it are shown as blocked by it, and the first
//! unblocked failure is named the root cause.

// The crates below this one under the names the code has always used for them (`crate::units`,
// `crate::telemetry::…`, `crate::tr!`; the ground's through `ground!`), and this crate under its
// own module name where it has one: a module keeps its paths whichever crate it lives in. (Not
// every crate uses every name.)
#[allow(unused_imports)]
use crate as diagnose;
gpu_doctor_core::ground!();
#[allow(unused_imports)]
pub(crate) use gpu_doctor_telemetry as telemetry;

pub mod bottleneck;
pub mod checks;
pub mod differential;
pub mod headline;
pub mod input;
pub mod origin;
mod wire;

// The facts the checks read, under the names they have always had (`crate::diagnose::system`).
pub use gpu_doctor_facts::{
    archive, bugreport, bugview, capture, collect, holders, journal, ldcache, parse, system, winfacts,
};

use serde::{Deserialize, Serialize};

use system::SystemView;

use crate::i18n::{Lang, Message};

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

    /// Title for a wizard step: its catalogue key (shown through `crate::i18n::tr`).
    pub fn title(self) -> &'static str {
        match self {
            Layer::Hardware => crate::tr_key!("GPU hardware"),
            Layer::Driver => crate::tr_key!("NVIDIA driver"),
            Layer::Cuda => crate::tr_key!("CUDA and frameworks"),
            Layer::Permissions => crate::tr_key!("Permissions"),
            Layer::Containers => crate::tr_key!("Containers"),
            Layer::Wsl => "WSL",
            Layer::Environment => crate::tr_key!("Environment"),
            Layer::Runtime => crate::tr_key!("Runtime health"),
            Layer::Windows => "Windows",
        }
    }
}

/// One step of a fix: prose to read, or one shell command to run as it stands.
///
/// Serialised as `{"text": "English", "text_message": {...}}` or `{"command": "..."}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "wire::FixStepWire", try_from = "wire::FixStepWire")]
pub enum FixStep {
    /// An instruction in words (may name a command in passing; never meant for a shell).
    Text(Message),
    /// Exactly one command line for a shell: no prose, no distribution prefix, no comment.
    Command(String),
}

impl FixStep {
    /// The step in English (a command as it is): for logs and tests.
    pub fn en(&self) -> String {
        self.plain(Lang::En).trim_start_matches("$ ").to_string()
    }

    /// The step as one line of plain text in `lang`: commands indented by `$ `.
    pub fn plain(&self, lang: Lang) -> String {
        match self {
            FixStep::Text(t) => t.render(lang),
            FixStep::Command(c) => format!("$ {c}"),
        }
    }
}

/// One check's result. Its texts are messages ([`Message`]), rendered where they are shown;
/// serialised with each text in English beside its message (`finding` and `finding_message`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "wire::CheckWire", from = "wire::CheckWire")]
pub struct Check {
    /// Stable id, e.g. `DRV-01`: the id of its definition in [`checks::CHECKS`].
    pub id: String,
    /// The layer it belongs to.
    pub layer: Layer,
    /// What is checked, e.g. "NVIDIA kernel module": the catalogue key of its title.
    pub title: String,
    /// The outcome.
    pub verdict: Verdict,
    /// The finding as a short sentence that reads right as a headline, for this verdict
    /// ("The NVIDIA driver is not installed", "GPU 0 fell off the bus", "Not checked: ...").
    pub finding: Message,
    /// One line: what was found, with the details.
    pub summary: Message,
    /// What it means, in plain words (empty when nothing needs explaining).
    pub explanation: Message,
    /// What was read: paths and values.
    pub evidence: Vec<Message>,
    /// The steps that fix it, in order: prose, and commands (each one copyable on its own).
    pub fixes: Vec<FixStep>,
    /// The id of the failed check this one depends on, when it is blocked.
    pub blocked_by: Option<String>,
    /// The id of the failure that causes this one, when it is a consequence (its own fixes are
    /// then held back: fixing the cause comes first).
    pub explained_by: Option<String>,
    /// Set when the check does not apply to this kind of machine: where it does apply
    /// ("Windows", "WSL", "containers", ...). Text output folds such checks into one line.
    pub applies_to: Option<Message>,
    /// For a failure whose symptom has a differential ([`differential`]): the cause the facts
    /// decide, or the candidates they leave.
    pub cause: Option<differential::CauseFinding>,
}

impl Check {
    /// A check not run yet: skipped, with its id, layer and title (the checks fill in the rest).
    pub fn new(id: &str, layer: Layer, title: &str) -> Self {
        Check {
            id: id.to_string(),
            layer,
            title: title.to_string(),
            verdict: Verdict::Skipped,
            finding: Message::default(),
            summary: Message::default(),
            explanation: Message::default(),
            evidence: Vec::new(),
            fixes: Vec::new(),
            blocked_by: None,
            explained_by: None,
            applies_to: None,
            cause: None,
        }
    }
    /// The title in `lang`.
    pub fn title_in(&self, lang: Lang) -> String {
        crate::i18n::tr_in(lang, &self.title)
    }
    /// Sets the verdict and the detailed summary. A skipped verdict also gets the finding
    /// "Not checked: <summary>" unless [`Check::found`] gives a better one afterwards.
    pub(crate) fn verdict(mut self, v: Verdict, summary: impl Into<Message>) -> Self {
        self.verdict = v;
        self.summary = summary.into();
        if v == Verdict::Skipped {
            self.finding = crate::msg!("Not checked: {summary}", summary = self.summary);
        }
        self
    }
    /// Sets the headline finding.
    pub(crate) fn found(mut self, finding: impl Into<Message>) -> Self {
        self.finding = finding.into();
        self
    }
    /// Skips a check that does not apply to this kind of machine; `place` is where it does.
    pub(crate) fn not_here(self, place: impl Into<Message>, summary: impl Into<Message>) -> Self {
        let place = place.into();
        let mut c = self.verdict(Verdict::Skipped, summary);
        c.finding = crate::msg!("Does not apply here (only on {place})", place = place);
        c.applies_to = Some(place);
        c
    }
    pub(crate) fn explain(mut self, text: impl Into<Message>) -> Self {
        self.explanation = text.into();
        self
    }
    pub(crate) fn evidence(mut self, e: impl Into<Message>) -> Self {
        self.evidence.push(e.into());
        self
    }
    /// Adds a fix step in words.
    pub(crate) fn text(mut self, t: impl Into<Message>) -> Self {
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
    /// Records what the facts say about the cause of this failure's symptom.
    pub(crate) fn cause(mut self, cause: differential::CauseFinding) -> Self {
        self.cause = Some(cause);
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
    /// Set when the checks read a file (a capture, an imported report): the machine it describes,
    /// which reports made from it speak of instead of the machine they are made on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<origin::Origin>,
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
                c.evidence.push(crate::msg!("… and {n} more lines not shown", n = more));
            }
            c.fixes.truncate(MAX_EVIDENCE);
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
    pub fn not_applicable(&self) -> (usize, Vec<&Message>) {
        let mut places: Vec<&Message> = Vec::new();
        let mut n = 0;
        for p in self.checks.iter().filter_map(|c| c.applies_to.as_ref()) {
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
    let own: Vec<(String, Message)> = list.iter().map(|c| (c.id.clone(), c.finding.clone())).collect();
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
                let because = own.iter().find(|(id, _)| *id == b).map_or_else(Message::default, |x| x.1.clone());
                let c = &mut list[i];
                let own_result = crate::msg!(
                    "own result before blocking: {verdict} — {summary}",
                    verdict = c.verdict.word_message(),
                    summary = c.summary
                );
                c.evidence.insert(0, own_result);
                c.verdict = Verdict::Skipped;
                c.summary = crate::msg!("blocked: {because} (fix that first)", because = because);
                c.finding = crate::msg!("Not checked until this is fixed: {because}", because = because);
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
    Report {
        checks: list,
        root_cause,
        from_capture: view.is_capture(),
        refused: view.refused(),
        imported: None,
        origin: None,
    }
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
        let summary = crate::msg!("{summary} — a consequence of: {cause}", summary = c.summary, cause = root_finding);
        c.summary = summary;
        c.fixes = vec![FixStep::Text(crate::msg!("Fix the cause first: {cause}.", cause = root_finding))];
        c.explained_by = Some(root_id);
    }
}
