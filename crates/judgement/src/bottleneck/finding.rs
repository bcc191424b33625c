//! The verdict types of the bottleneck rules: what was found ([`Finding`]), one verdict
//! ([`Bottleneck`]) and the one way a rule starts one ([`verdict`]).

use serde::{Deserialize, Serialize};

use super::context::Ctx;
use crate::i18n::Message;
use crate::verdict::Verdict;

/// What a verdict found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Finding {
    /// The GPU does nothing and no process uses it.
    NothingOnGpu,
    /// A process holds the GPU but it does no work, and neither CPU nor disk explains it.
    WaitingProcess,
    /// Low or saw-tooth utilization while the CPU (or some cores) is saturated by the GPU's own
    /// job (or, without per-process CPU readings, by anything).
    DataStarved,
    /// Low or saw-tooth utilization while other programs, not the GPU's job, saturate the CPU.
    CpuBusyElsewhere,
    /// Low utilization with high iowait / I/O pressure.
    IoBound,
    /// A process uses the GPU lightly while CPU and disk have room: small batches, waits on the
    /// host, synchronisation.
    Underused,
    /// Busy, with memory-bandwidth utilization near its top.
    MemoryBound,
    /// Busy, compute-bound.
    ComputeBound,
    /// VRAM nearly full.
    VramNearFull,
    /// VRAM growing steadily (a leak?).
    VramGrowing,
    /// Clocks lowered by temperature.
    ThermalThrottle,
    /// Clocks held at the power limit.
    PowerLimited,
    /// Hardware slowdown (power brake, overheat protection).
    HardwareSlowdown,
    /// Clocks well below maximum under load without a reason reported.
    ClocksLow,
    /// One GPU busy, the others idle.
    Imbalance,
    /// The host swaps.
    HostSwapping,
    /// The PCIe link runs below its maximum under load.
    PcieBelowMax,
    /// Busy and not throttled.
    Healthy,
}

/// One verdict. Its texts are messages, serialised in English beside each message (`title` and
/// `title_message`, ...).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "BottleneckWire", from = "BottleneckWire")]
pub struct Bottleneck {
    /// What was found.
    pub finding: Finding,
    /// The GPU it concerns (None: the host or all GPUs).
    pub gpu: Option<u32>,
    /// Pass (healthy), Info, Warn.
    pub severity: Verdict,
    /// 0..1: how sure the rule is (signal strength times data coverage).
    pub confidence: f64,
    /// One line: "GPU 0 is data-starved: the CPU cannot feed it".
    pub title: Message,
    /// Numbers it rests on.
    pub evidence: Vec<Message>,
    /// Start and end of the span judged, seconds since the sampler started.
    pub from: f64,
    /// End of the span.
    pub to: f64,
    /// Why this limits the work.
    pub explanation: Message,
    /// What to try, in the method's order.
    pub next_steps: Vec<Message>,
}

/// [`Bottleneck`] as JSON: each text in English beside its message (older files have the
/// English only, read back with [`Message::from_english`]).
#[derive(Serialize, Deserialize)]
struct BottleneckWire {
    finding: Finding,
    gpu: Option<u32>,
    severity: Verdict,
    confidence: f64,
    title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    title_message: Option<Message>,
    #[serde(default)]
    evidence: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    evidence_messages: Option<Vec<Message>>,
    from: f64,
    to: f64,
    #[serde(default)]
    explanation: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    explanation_message: Option<Message>,
    #[serde(default)]
    next_steps: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    next_steps_messages: Option<Vec<Message>>,
}

impl From<Bottleneck> for BottleneckWire {
    fn from(b: Bottleneck) -> Self {
        BottleneckWire {
            finding: b.finding,
            gpu: b.gpu,
            severity: b.severity,
            confidence: b.confidence,
            title: b.title.en(),
            title_message: Some(b.title),
            evidence: b.evidence.iter().map(Message::en).collect(),
            evidence_messages: Some(b.evidence),
            from: b.from,
            to: b.to,
            explanation: b.explanation.en(),
            explanation_message: Some(b.explanation),
            next_steps: b.next_steps.iter().map(Message::en).collect(),
            next_steps_messages: Some(b.next_steps),
        }
    }
}

/// The messages, or the English texts read back as messages.
fn messages(m: Option<Vec<Message>>, english: &[String]) -> Vec<Message> {
    m.unwrap_or_else(|| english.iter().map(|t| Message::from_english(t)).collect())
}

impl From<BottleneckWire> for Bottleneck {
    fn from(w: BottleneckWire) -> Self {
        Bottleneck {
            finding: w.finding,
            gpu: w.gpu,
            severity: w.severity,
            confidence: w.confidence,
            title: w.title_message.unwrap_or_else(|| Message::from_english(&w.title)),
            evidence: messages(w.evidence_messages, &w.evidence),
            from: w.from,
            to: w.to,
            explanation: w.explanation_message.unwrap_or_else(|| Message::from_english(&w.explanation)),
            next_steps: messages(w.next_steps_messages, &w.next_steps),
        }
    }
}

impl Bottleneck {
    /// A stable key for "the same verdict" across evaluations (events mark changes).
    pub fn key(&self) -> (Finding, Option<u32>) {
        (self.finding, self.gpu)
    }
}

/// A verdict over the window judged; `confidence` is clamped to 0..1 and rounded to two decimals.
pub(super) fn verdict(
    cx: &Ctx,
    finding: Finding,
    gpu: Option<u32>,
    severity: Verdict,
    confidence: f64,
    title: Message,
) -> Bottleneck {
    Bottleneck {
        finding,
        gpu,
        severity,
        confidence: (confidence.clamp(0.0, 1.0) * 100.0).round() / 100.0,
        title,
        evidence: Vec::new(),
        from: cx.from,
        to: cx.to,
        explanation: Message::default(),
        next_steps: Vec::new(),
    }
}
