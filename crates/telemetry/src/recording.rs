//! Recordings: the sampled metrics written while monitoring, to a documented, versioned,
//! append-only file (docs/recording-format.md), and read back for replay and CSV export.
//!
//! The file is JSON Lines: a header line, then one line per sample. Each line is written whole
//! and flushed to the operating system, so a recording survives the app being killed: everything
//! up to the last complete line is readable, and a torn last line is ignored.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use serde::{Deserialize, Serialize};

use super::history::keys::GpuMetric;
use super::host_metric::HOST_METRICS;
use super::metric::GPU_METRICS;
use super::sample::{GpuSample, HostSample, Inventory, MAX_GPUS};
use super::snapshot::Snapshot;
use super::source::SourceStatus;

/// The `format` value of a recording's header.
pub const RECORDING_FORMAT: &str = "gpu-doctor-recording";
/// The newest version this build reads and the one it writes. Version 2: a text of gpu-doctor's
/// own (a reason, an event, a stalled call) may be a message object (docs/messages.md); version
/// 1 held only strings, and is read too.
pub const RECORDING_VERSION: u32 = 2;
/// Longest line accepted (a sample of 16 GPUs with long process lists is well under 1 MiB).
pub const MAX_LINE: usize = 8 << 20;

/// First line of a recording.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Always [`RECORDING_FORMAT`].
    pub format: String,
    /// Format version.
    pub version: u32,
    /// gpu-doctor version that wrote it.
    pub app_version: String,
    /// Wall-clock start, seconds since the Unix epoch; sample times are seconds after it.
    pub started_unix: f64,
    /// Sampling interval, seconds.
    pub interval_secs: f64,
    /// Where GPU data came from when recording started.
    pub source: SourceStatus,
    /// GPUs and versions when recording started.
    pub inventory: Inventory,
    /// The server the data came from over SSH (`user@host:port`); absent for this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
}

/// One sample line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Seconds after `started_unix`.
    pub t: f64,
    /// The data source, when it changed since the previous line (e.g. NVML finished opening).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceStatus>,
    /// The inventory, when it changed since the previous line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inventory: Option<Inventory>,
    /// Host metrics.
    #[serde(default)]
    pub host: Option<HostSample>,
    /// GPU metrics.
    #[serde(default)]
    pub gpus: Vec<GpuSample>,
    /// A driver call that had not returned at this tick (the GPU figures are then missing or old).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_stall: Option<super::snapshot::Stall>,
}

/// Why a recording could not be written or read ([`RecordingError::message`]; its `Display` is English).
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    /// Filesystem trouble.
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The output exists (recordings never overwrite).
    Exists(PathBuf),
    /// Not a recording at all.
    NotARecording {
        /// The file.
        path: PathBuf,
        /// What is wrong with its first line.
        why: crate::i18n::Message,
    },
    /// Written by a newer gpu-doctor.
    TooNew {
        /// The file.
        path: PathBuf,
        /// Its version.
        version: u32,
    },
}

impl RecordingError {
    /// What went wrong, as a message.
    pub fn message(&self) -> crate::i18n::Message {
        match self {
            RecordingError::Io { path, source } => crate::i18n::Message::data(format!("{}: {source}", path.display())),
            RecordingError::Exists(path) => crate::msg!(
                "{path} already exists; choose a new file name (recordings never overwrite files)",
                path = path.display()
            ),
            RecordingError::NotARecording { path, why } => {
                crate::msg!("{path} is not a gpu-doctor recording ({why})", path = path.display(), why = why)
            }
            RecordingError::TooNew { path, version } => crate::msg!(
                "{path} is a version {version} recording; this gpu-doctor reads up to version {max}. Update gpu-doctor to open it.",
                path = path.display(),
                version = *version,
                max = RECORDING_VERSION
            ),
        }
    }
}

impl crate::i18n::ToMessage for RecordingError {
    fn to_message(&self) -> crate::i18n::Message {
        self.message()
    }
}

/// In English (logs); a front end shows [`crate::i18n::ToMessage::to_message`] in its language.
impl std::fmt::Display for RecordingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message().en())
    }
}

/// Appends samples to a new recording file.
pub struct Recorder {
    file: File,
    path: PathBuf,
    last_source: SourceStatus,
    last_inventory: Arc<Inventory>,
    last_t: Option<f64>,
    /// Lines written, header included.
    pub lines: u64,
}

impl Recorder {
    /// Creates `path` (which must not exist) and writes the header from `snap`.
    pub fn create(path: &Path, snap: &Snapshot) -> Result<Recorder, RecordingError> {
        let file = std::fs::OpenOptions::new().append(true).create_new(true).open(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                RecordingError::Exists(path.to_path_buf())
            } else {
                RecordingError::Io { path: path.to_path_buf(), source: e }
            }
        })?;
        let mut r = Recorder {
            file,
            path: path.to_path_buf(),
            last_source: snap.source.clone(),
            last_inventory: Arc::clone(&snap.inventory),
            last_t: None,
            lines: 0,
        };
        let header = Header {
            format: RECORDING_FORMAT.to_string(),
            version: RECORDING_VERSION,
            app_version: env!("CARGO_PKG_VERSION").to_string(),
            started_unix: snap.started_unix,
            interval_secs: snap.interval_secs,
            source: snap.source.clone(),
            inventory: (*snap.inventory).clone(),
            remote: snap.remote.as_ref().map(|r| r.host.clone()),
        };
        r.write_line(&header)?;
        Ok(r)
    }

    /// Appends the snapshot's latest data once per tick: when the GPU data is newer than the last
    /// line (or, without GPU data, the host data). Host and GPU samples of one tick are published
    /// separately; the line carries the GPU sample and the latest host sample. Returns whether a
    /// line was written.
    pub fn append(&mut self, snap: &Snapshot) -> Result<bool, RecordingError> {
        let Some(t) = snap.gpu_t.or(snap.host_t) else { return Ok(false) };
        if self.last_t.is_some_and(|l| t <= l) {
            return Ok(false);
        }
        let source = (snap.source != self.last_source).then(|| snap.source.clone());
        let inventory = (!Arc::ptr_eq(&snap.inventory, &self.last_inventory)
            && *snap.inventory != *self.last_inventory)
            .then(|| (*snap.inventory).clone());
        let rec = Record {
            t,
            source,
            inventory,
            host: snap.host.clone(),
            gpus: snap.gpus.clone(),
            gpu_stall: snap.gpu_stall.clone(),
        };
        self.write_line(&rec)?;
        self.last_source = snap.source.clone();
        self.last_inventory = Arc::clone(&snap.inventory);
        self.last_t = Some(t);
        Ok(true)
    }

    fn write_line<T: Serialize>(&mut self, v: &T) -> Result<(), RecordingError> {
        let mut line = serde_json::to_vec(v)
            .map_err(|e| RecordingError::Io { path: self.path.clone(), source: std::io::Error::other(e) })?;
        line.push(b'\n');
        // One write per line: a kill leaves at most a torn last line, which readers skip.
        self.file
            .write_all(&line)
            .and_then(|_| self.file.flush())
            .map_err(|e| RecordingError::Io { path: self.path.clone(), source: e })?;
        self.lines += 1;
        Ok(())
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Forces the data to disk (for a clean stop; a kill keeps what the OS already has).
    pub fn sync(&self) -> Result<(), RecordingError> {
        self.file.sync_data().map_err(|e| RecordingError::Io { path: self.path.clone(), source: e })
    }
}

/// A recording read back.
#[derive(Clone, Debug, PartialEq)]
pub struct Recording {
    /// Its header.
    pub header: Header,
    /// Its samples, in file order.
    pub records: Vec<Record>,
    /// Lines that could not be read (a torn last line after a kill, or damage), skipped.
    pub skipped_lines: usize,
}

impl Recording {
    /// Reads a recording. A file that is not one, or one from a newer version, is an error; damaged
    /// sample lines are skipped and counted.
    pub fn open(path: &Path) -> Result<Recording, RecordingError> {
        Self::collect(RecordStream::open(path)?)
    }

    /// Reads a recording from any reader (`path` is for messages).
    pub fn read(r: impl BufRead, path: &Path) -> Result<Recording, RecordingError> {
        Self::collect(RecordStream::new(r, path)?)
    }

    fn collect<R: BufRead>(mut stream: RecordStream<R>) -> Result<Recording, RecordingError> {
        let mut records = Vec::new();
        for rec in stream.by_ref() {
            records.push(rec?);
        }
        Ok(Recording { header: stream.header.clone(), records, skipped_lines: stream.skipped_lines })
    }

    /// Seconds covered (first to last sample).
    pub fn span_secs(&self) -> f64 {
        match (self.records.first(), self.records.last()) {
            (Some(a), Some(b)) => b.t - a.t,
            _ => 0.0,
        }
    }

    /// The inventory in force at each record (the header's, updated by inventory lines).
    pub fn final_inventory(&self) -> Inventory {
        self.records.iter().rev().find_map(|r| r.inventory.clone()).unwrap_or_else(|| self.header.inventory.clone())
    }
}

/// A recording read one sample at a time: memory stays flat whatever the file's size (`replay`
/// of a 1 GB recording; the GUI keeps only its bounded history).
pub struct RecordStream<R> {
    /// The header.
    pub header: Header,
    /// Lines skipped so far (torn or damaged).
    pub skipped_lines: usize,
    reader: R,
    path: PathBuf,
    /// Bytes read so far.
    pos: u64,
    /// Where the line of the last sample returned starts.
    last_start: u64,
}

impl RecordStream<BufReader<File>> {
    /// Opens a recording file (a FIFO or a device is refused at once).
    pub fn open(path: &Path) -> Result<Self, RecordingError> {
        let io = |e: std::io::Error| RecordingError::Io { path: path.to_path_buf(), source: e };
        let file = match crate::safe_fs::open_regular(path) {
            Ok(f) => f,
            // The open error again, with its kind (not found, permission denied).
            Err(crate::safe_fs::ReadError::Io(_)) => File::open(path).map_err(io)?,
            Err(other) => {
                return Err(RecordingError::NotARecording {
                    path: path.to_path_buf(),
                    why: crate::i18n::Message::data(other.to_string()),
                });
            }
        };
        Self::new(BufReader::new(file), path)
    }
}

impl<R: BufRead> RecordStream<R> {
    /// Reads and checks the header; the samples follow through the iterator.
    pub fn new(mut r: R, path: &Path) -> Result<Self, RecordingError> {
        let io = |e: std::io::Error| RecordingError::Io { path: path.to_path_buf(), source: e };
        let not = |why: crate::i18n::Message| RecordingError::NotARecording { path: path.to_path_buf(), why };
        let (first, pos) = match read_line_capped(&mut r).map_err(io)? {
            None => return Err(not(crate::msg!("the file is empty"))),
            Some((Line::TooLong, _)) => {
                return Err(not(crate::msg!("its first line is not a recording header")));
            }
            Some((Line::Text(l), n)) => (l, n),
        };
        let probe: serde_json::Value =
            serde_json::from_str(&first).map_err(|_| not(crate::msg!("its first line is not JSON")))?;
        if probe.get("format").and_then(|f| f.as_str()) != Some(RECORDING_FORMAT) {
            return Err(not(crate::msg!("no \"format\": \"{format}\" in its first line", format = RECORDING_FORMAT)));
        }
        let version = probe.get("version").and_then(|v| v.as_u64()).unwrap_or(0);
        if version > u64::from(RECORDING_VERSION) {
            return Err(RecordingError::TooNew { path: path.to_path_buf(), version: version as u32 });
        }
        let header: Header =
            serde_json::from_value(probe).map_err(|e| not(crate::msg!("bad header: {error}", error = e)))?;
        Ok(RecordStream { header, skipped_lines: 0, reader: r, path: path.to_path_buf(), pos, last_start: pos })
    }

    /// The byte offset of the line holding the last sample the iterator returned (an index into
    /// the file: [`read_record_at`] reads that sample again).
    pub fn last_offset(&self) -> u64 {
        self.last_start
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.pos
    }
}

/// Reads the sample whose line starts at `offset` (from [`RecordStream::last_offset`]).
pub fn read_record_at(file: &mut File, offset: u64) -> Result<Record, crate::i18n::Message> {
    use std::io::{Seek, SeekFrom};
    let data = |e: &dyn std::fmt::Display| crate::i18n::Message::data(e.to_string());
    file.seek(SeekFrom::Start(offset)).map_err(|e| data(&e))?;
    match read_line_capped(&mut BufReader::new(file)).map_err(|e| data(&e))? {
        Some((Line::Text(l), _)) => serde_json::from_str(&l).map_err(|e| data(&e)),
        Some((Line::TooLong, _)) => Err(crate::msg!("the line is too long")),
        None => Err(crate::msg!("the file ended early")),
    }
}

impl<R: BufRead> Iterator for RecordStream<R> {
    type Item = Result<Record, RecordingError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let start = self.pos;
            let line = match read_line_capped(&mut self.reader) {
                Ok(Some((l, n))) => {
                    self.pos += n;
                    l
                }
                Ok(None) => return None,
                Err(e) => return Some(Err(RecordingError::Io { path: self.path.clone(), source: e })),
            };
            match line {
                Line::Text(l) if l.trim().is_empty() => {}
                Line::Text(l) => match serde_json::from_str::<Record>(&l) {
                    Ok(rec) if rec.t.is_finite() => {
                        self.last_start = start;
                        return Some(Ok(rec));
                    }
                    _ => self.skipped_lines += 1,
                },
                Line::TooLong => self.skipped_lines += 1,
            }
        }
    }
}

enum Line {
    Text(String),
    TooLong,
}

/// Reads one line of at most [`MAX_LINE`] bytes; a longer one is consumed and reported, so a huge
/// file without newlines cannot exhaust memory. Also says how many bytes it consumed.
fn read_line_capped(r: &mut impl BufRead) -> std::io::Result<Option<(Line, u64)>> {
    let mut buf = Vec::new();
    let n = r.by_ref().take(MAX_LINE as u64 + 1).read_until(b'\n', &mut buf)?;
    if n == 0 {
        return Ok(None);
    }
    let mut consumed = n as u64;
    if buf.len() > MAX_LINE && buf.last() != Some(&b'\n') {
        // Skip to the end of this line.
        loop {
            let avail = r.fill_buf()?;
            if avail.is_empty() {
                break;
            }
            match avail.iter().position(|b| *b == b'\n') {
                Some(p) => {
                    r.consume(p + 1);
                    consumed += p as u64 + 1;
                    break;
                }
                None => {
                    let len = avail.len();
                    r.consume(len);
                    consumed += len as u64;
                }
            }
        }
        return Ok(Some((Line::TooLong, consumed)));
    }
    Ok(Some((Line::Text(String::from_utf8_lossy(&buf).into_owned()), consumed)))
}

/// The CSV header and rows for spreadsheets: one row per sample, wall-clock time, host columns,
/// then each GPU's columns.
pub fn to_csv(rec: &Recording) -> String {
    let gpus = csv_gpus(rec.records.iter());
    let mut out = csv_header(&gpus);
    for r in &rec.records {
        out.push_str(&csv_row(&rec.header, &gpus, r));
    }
    out
}

/// The GPU indices of a recording's samples, sorted (the CSV has a column group per GPU): the
/// first [`MAX_GPUS`] seen (a file naming a new index in every sample must not make a column
/// for each).
pub fn csv_gpus<'a>(records: impl Iterator<Item = &'a Record>) -> Vec<u32> {
    let mut v: Vec<u32> = Vec::new();
    for r in records {
        for g in &r.gpus {
            note_gpu(&mut v, g.index);
        }
    }
    v
}

/// Adds `index` to the sorted `seen` unless it is there or `seen` holds [`MAX_GPUS`] already;
/// true when `index` is (now) one of them.
pub fn note_gpu(seen: &mut Vec<u32>, index: u32) -> bool {
    match seen.binary_search(&index) {
        Ok(_) => true,
        Err(_) if seen.len() >= MAX_GPUS => false,
        Err(i) => {
            seen.insert(i, index);
            true
        }
    }
}

/// How a GPU's CSV cell is read from its sample.
type CellReader = fn(&GpuSample) -> Option<f64>;

/// The sample's facts with a CSV column that are no history metric, each placed after the column
/// of a metric (the documented order, docs/recording-format.md).
const CSV_FIELDS: [(GpuMetric, &str, CellReader); 4] = [
    (GpuMetric::VramUsed, "vram_total_bytes", |g| g.vram_total_bytes.get().map(|v| v as f64)),
    (GpuMetric::MemClock, "pcie_gen", |g| g.pcie_gen.get().map(f64::from)),
    (GpuMetric::MemClock, "pcie_width", |g| g.pcie_width.get().map(f64::from)),
    (GpuMetric::Fan, "throttle_mask", |g| g.throttle_mask.get().map(|m| m as f64)),
];

/// The CSV columns per GPU: every metric of the table with a CSV column, in the table's order,
/// each followed by the facts placed after it. A metric added at the table's end is a new last
/// column, so the columns spreadsheets know keep their places.
static CSV_GPU_COLS: LazyLock<Vec<(&'static str, CellReader)>> = LazyLock::new(|| {
    let mut cols: Vec<(&'static str, CellReader)> = Vec::new();
    for d in GPU_METRICS {
        if let Some(name) = d.csv {
            cols.push((name, d.read));
        }
        cols.extend(CSV_FIELDS.iter().filter(|(after, _, _)| *after == d.key).map(|(_, name, read)| (*name, *read)));
    }
    cols
});

/// The CSV header line for these GPUs.
pub fn csv_header(gpus: &[u32]) -> String {
    let mut out = String::from("time_unix,time_utc,t_s");
    for c in HOST_METRICS.iter().filter_map(|d| d.csv) {
        out.push(',');
        out.push_str(c);
    }
    for g in gpus {
        for (c, _) in CSV_GPU_COLS.iter() {
            out.push_str(&format!(",gpu{g}_{c}"));
        }
    }
    out.push('\n');
    out
}

/// One sample as a CSV line.
pub fn csv_row(header: &Header, gpus: &[u32], r: &Record) -> String {
    let mut out = String::new();
    let num = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    {
        let unix = header.started_unix + r.t;
        let utc = chrono::DateTime::from_timestamp_millis((unix * 1000.0) as i64)
            .map(|d| d.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
            .unwrap_or_default();
        let h = r.host.as_ref();
        let mut cells = vec![format!("{unix:.3}"), utc, format!("{:.3}", r.t)];
        cells.extend(HOST_METRICS.iter().filter(|d| d.csv.is_some()).map(|d| num(h.and_then(d.read))));
        out.push_str(&cells.join(","));
        for gi in gpus {
            let g = r.gpus.iter().find(|g| g.index == *gi);
            for (_, read) in CSV_GPU_COLS.iter() {
                out.push(',');
                out.push_str(&num(g.and_then(*read)));
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_csv_columns_are_the_documented_ones() {
        // docs/recording-format.md: spreadsheets read these names, in this order.
        assert_eq!(
            csv_header(&[1]),
            "time_unix,time_utc,t_s,cpu_pct,iowait_pct,ram_used_bytes,swap_used_bytes,disk_read_bps,\
             disk_write_bps,gpu1_util_pct,gpu1_mem_bw_util_pct,gpu1_vram_used_bytes,gpu1_vram_total_bytes,\
             gpu1_temp_c,gpu1_power_w,gpu1_power_limit_w,gpu1_sm_clock_mhz,gpu1_mem_clock_mhz,gpu1_pcie_gen,\
             gpu1_pcie_width,gpu1_pcie_rx_bps,gpu1_pcie_tx_bps,gpu1_fan_pct,gpu1_throttle_mask\n"
        );
    }
}
