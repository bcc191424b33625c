//! The link's state and the server a snapshot's data comes from ([`RemoteInfo`]): what every
//! surface shows as REMOTE with the server's name. Apart from the link itself, so that the GPU
//! source's trait can name it without a circle through the link.

use serde::{Deserialize, Serialize};

use super::ssh::RemoteError;
use crate::i18n::Message;
use crate::msg;

/// The link's state, as shown with the host name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "state")]
pub enum RemoteState {
    /// Connecting (attempt 1, 2, ...).
    Connecting {
        /// Which attempt.
        attempt: u32,
    },
    /// Lines arrive.
    Live,
    /// Connected, but nothing arrived for this long.
    NoData {
        /// Seconds since the last line.
        secs: u64,
    },
    /// Waiting before the next attempt.
    Retrying {
        /// Seconds until it.
        in_secs: u64,
        /// Why the last one ended.
        error: RemoteError,
    },
    /// Stopped until the user acts.
    Failed {
        /// Why.
        error: RemoteError,
    },
    /// Disconnected by the user.
    Closed,
}

/// The server a snapshot's data comes from, shown as REMOTE with its name everywhere.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteInfo {
    /// The server as typed (`user@host:port`).
    pub host: String,
    /// The link's state.
    pub state: RemoteState,
    /// The server's gpu-doctor version, once known.
    #[serde(default)]
    pub version: Option<String>,
    /// Lines that were not valid JSON (or too long), skipped.
    #[serde(default)]
    pub invalid_lines: u64,
    /// Lines dropped because the server sent more than [`super::MAX_LINES_PER_SEC`].
    #[serde(default)]
    pub dropped_lines: u64,
    /// What could not be read from the server's newer or older output.
    #[serde(default)]
    pub unread: Vec<Message>,
}

impl RemoteInfo {
    /// What could not be read, as one list (`-` when nothing).
    pub fn unread_list(&self) -> Message {
        if self.unread.is_empty() { Message::data("-") } else { Message::join(self.unread.clone(), &msg!(", ")) }
    }

    /// "REMOTE gpu1: live", "REMOTE gpu1: no data from host for 7 s", ...
    pub fn line(&self) -> Message {
        let state = match &self.state {
            RemoteState::Connecting { attempt: 1 } => msg!("connecting…"),
            RemoteState::Connecting { attempt } => msg!("connecting (attempt {n})…", n = *attempt),
            RemoteState::Live => msg!("live"),
            RemoteState::NoData { secs } => msg!("no data from host for {secs} s", secs = *secs),
            RemoteState::Retrying { in_secs, error } => {
                msg!("{why} Retrying in {secs} s.", why = &error.message, secs = *in_secs)
            }
            RemoteState::Failed { error } => error.message.clone(),
            RemoteState::Closed => msg!("disconnected"),
        };
        let line = msg!("REMOTE {host}: {state}", host = self.host, state = state);
        if self.invalid_lines > 0 {
            msg!("{line} ({n} unreadable lines skipped)", line = line, n = self.invalid_lines)
        } else {
            line
        }
    }
}
