//! The journal: one JSON object per line. The first line is the question (`start`: the spec, the
//! GPUs, where the trials' folders are), then one `trial` line per trial, written and flushed the
//! moment it ends, and an `end` line with the answer. A tune stopped at any point leaves whole
//! lines; `tune --resume` reads the question and the trials and appends to the same file; the app's
//! Tune view reads it, live or afterwards. A torn or foreign line is skipped and counted.

use std::io::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Outcome, Trial, TuneSpec};

/// The journal format's version.
pub const VERSION: u32 = 1;
/// The largest journal read (a tune of a thousand trials is a few MiB).
pub const CAP: u64 = 64 << 20;

/// A GPU of the machine the tune ran on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuLine {
    /// Its index.
    pub index: u32,
    /// Its name.
    pub name: String,
    /// Its memory, bytes.
    pub total: Option<u64>,
}

/// The first line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Start {
    /// [`VERSION`].
    pub version: u32,
    /// When the tune started (local time, `YYYY-MM-DD HH:MM:SS`).
    pub started: String,
    /// The question.
    pub spec: TuneSpec,
    /// The machine's GPUs.
    pub gpus: Vec<GpuLine>,
    /// The GPU figures were simulated (`--demo`).
    pub demo: bool,
    /// CPU cores.
    pub cpus: u32,
    /// The folder holding each trial's folder.
    pub trials_dir: String,
}

/// The last line of a run of the tuner (a resumed tune has one per run).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct End {
    /// The answer.
    pub outcome: Outcome,
    /// When it ended.
    pub finished: String,
    /// The user stopped it.
    pub interrupted: bool,
}

/// One line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Line {
    /// The question.
    Start(Box<Start>),
    /// A trial.
    Trial(Box<Trial>),
    /// An answer.
    End(Box<End>),
}

/// A journal read back.
#[derive(Clone, Debug, PartialEq)]
pub struct Journal {
    /// The question.
    pub start: Start,
    /// The trials, in order.
    pub trials: Vec<Trial>,
    /// The last answer written, if any.
    pub end: Option<End>,
    /// Lines that were not part of a journal (torn by a crash, edited), skipped.
    pub skipped: usize,
}

/// Why a journal could not be read.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// Not readable.
    #[error("{0}")]
    Read(#[from] crate::safe_fs::ReadError),
    /// No start line: not a tune journal.
    #[error("{}", crate::tr!("not a gpu-doctor tune journal (no start line)"))]
    NotAJournal,
    /// A newer format.
    #[error("{}", crate::tr!("a journal of a newer gpu-doctor (format {version}); update gpu-doctor to read it", version = .0))]
    Newer(u32),
}

impl Journal {
    /// Reads `path`.
    pub fn read(path: &Path) -> Result<Journal, JournalError> {
        let bytes = crate::safe_fs::read_regular(path, CAP)?;
        Self::parse(&String::from_utf8_lossy(&bytes))
    }

    /// Parses a journal's text.
    pub fn parse(text: &str) -> Result<Journal, JournalError> {
        let (mut start, mut trials, mut end, mut skipped) = (None, Vec::new(), None, 0);
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            match serde_json::from_str::<Line>(line) {
                Ok(Line::Start(s)) if start.is_none() => {
                    if s.version > VERSION {
                        return Err(JournalError::Newer(s.version));
                    }
                    start = Some(*s);
                }
                Ok(Line::Trial(t)) if start.is_some() => trials.push(*t),
                Ok(Line::End(e)) if start.is_some() => end = Some(*e),
                _ => skipped += 1,
            }
        }
        let start = start.ok_or(JournalError::NotAJournal)?;
        Ok(Journal { start, trials, end, skipped })
    }
}

/// Appends lines to a journal, each in one write, flushed and synced.
pub struct Writer {
    file: std::fs::File,
}

impl Writer {
    /// A new journal at `path` (never an existing file).
    pub fn create(path: &Path) -> std::io::Result<Writer> {
        let file = std::fs::OpenOptions::new().write(true).create_new(true).open(path)?;
        Ok(Writer { file })
    }

    /// An existing journal, to go on (`--resume`).
    pub fn append(path: &Path) -> std::io::Result<Writer> {
        let mut file = std::fs::OpenOptions::new().read(true).append(true).open(path)?;
        // A line torn by a crash is ended first, so it spoils only itself.
        let len = file.metadata()?.len();
        if len > 0 {
            use std::io::{Read as _, Seek as _};
            let mut last = [0u8; 1];
            file.seek(std::io::SeekFrom::Start(len - 1))?;
            file.read_exact(&mut last)?;
            if last[0] != b'\n' {
                file.write_all(b"\n")?;
            }
        }
        Ok(Writer { file })
    }

    /// Writes one line.
    pub fn write(&mut self, line: &Line) -> std::io::Result<()> {
        let mut text = serde_json::to_string(line).map_err(std::io::Error::other)?;
        text.push('\n');
        self.file.write_all(text.as_bytes())?;
        self.file.flush()?;
        self.file.sync_data()
    }
}
