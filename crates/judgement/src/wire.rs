//! The JSON form of a check: each text in English (what a script or an older gpu-doctor reads)
//! beside its message (key and arguments, what a newer gpu-doctor renders in its reader's
//! language). A check written by an older version has the English only; its texts are read back
//! as [`Message::from_english`].

use serde::{Deserialize, Serialize};

use super::{Check, FixStep, Layer, Verdict};
use crate::i18n::Message;

/// [`FixStep`] as JSON: `{"text": ..., "text_message": ...}` or `{"command": ...}`.
#[derive(Serialize, Deserialize)]
pub(super) struct FixStepWire {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text_message: Option<Message>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    command: Option<String>,
}

impl From<FixStep> for FixStepWire {
    fn from(f: FixStep) -> Self {
        match f {
            FixStep::Text(m) => FixStepWire { text: Some(m.en()), text_message: Some(m), command: None },
            FixStep::Command(c) => FixStepWire { text: None, text_message: None, command: Some(c) },
        }
    }
}

impl TryFrom<FixStepWire> for FixStep {
    type Error = &'static str;
    fn try_from(w: FixStepWire) -> Result<Self, Self::Error> {
        match (w.command, w.text_message, w.text) {
            (Some(c), _, _) => Ok(FixStep::Command(c)),
            (None, Some(m), _) => Ok(FixStep::Text(m)),
            (None, None, Some(t)) => Ok(FixStep::Text(Message::from_english(&t))),
            (None, None, None) => Err("a fix step needs a text or a command"),
        }
    }
}

/// [`Check`] as JSON.
#[derive(Serialize, Deserialize)]
pub(super) struct CheckWire {
    id: String,
    layer: Layer,
    title: String,
    verdict: Verdict,
    #[serde(default)]
    finding: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    finding_message: Option<Message>,
    #[serde(default)]
    summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    summary_message: Option<Message>,
    #[serde(default)]
    explanation: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    explanation_message: Option<Message>,
    #[serde(default)]
    evidence: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    evidence_messages: Option<Vec<Message>>,
    #[serde(default)]
    fixes: Vec<FixStep>,
    #[serde(default)]
    blocked_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    explained_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    applies_to: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    applies_to_message: Option<Message>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cause: Option<super::differential::CauseFinding>,
}

impl From<Check> for CheckWire {
    fn from(c: Check) -> Self {
        CheckWire {
            id: c.id,
            layer: c.layer,
            title: c.title,
            verdict: c.verdict,
            finding: c.finding.en(),
            finding_message: Some(c.finding),
            summary: c.summary.en(),
            summary_message: Some(c.summary),
            explanation: c.explanation.en(),
            explanation_message: Some(c.explanation),
            evidence: c.evidence.iter().map(Message::en).collect(),
            evidence_messages: Some(c.evidence),
            fixes: c.fixes,
            blocked_by: c.blocked_by,
            explained_by: c.explained_by,
            applies_to: c.applies_to.as_ref().map(Message::en),
            applies_to_message: c.applies_to,
            cause: c.cause,
        }
    }
}

/// A message, or else the English text read back as one.
fn either(message: Option<Message>, english: &str) -> Message {
    message.unwrap_or_else(|| Message::from_english(english))
}

impl From<CheckWire> for Check {
    fn from(w: CheckWire) -> Self {
        let evidence = match w.evidence_messages {
            Some(m) if m.len() == w.evidence.len() || w.evidence.is_empty() => m,
            _ => w.evidence.iter().map(|e| Message::from_english(e)).collect(),
        };
        Check {
            id: w.id,
            layer: w.layer,
            title: w.title,
            verdict: w.verdict,
            finding: either(w.finding_message, &w.finding),
            summary: either(w.summary_message, &w.summary),
            explanation: either(w.explanation_message, &w.explanation),
            evidence,
            fixes: w.fixes,
            blocked_by: w.blocked_by,
            explained_by: w.explained_by,
            applies_to: match (w.applies_to_message, w.applies_to) {
                (Some(m), _) => Some(m),
                (None, Some(t)) => Some(Message::from_english(&t)),
                (None, None) => None,
            },
            cause: w.cause,
        }
    }
}
