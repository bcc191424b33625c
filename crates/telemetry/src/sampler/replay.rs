//! A sampler holding a recording (the Monitor's REPLAY): its history filled from every sample, its
//! snapshot the last one, the GPU side a [`StaticGpus`] with the recording's status and
//! inventory, the host side the last recorded host sample. No threads; nothing is sampled.
//!
//! A recording file is read once, one sample at a time ([`ReplayFile::open`]): the samples go into
//! the sampler's bounded history (15 min at full rate, 24 h of buckets) and each sample leaves
//! only a 16-byte mark (its time and where its line starts), so a 1 GB recording is opened in a
//! few tens of MB. The slider's "sample at this moment" reads the one line it needs again.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::{Publish, Sampler, record_gpu, record_host};
use crate::telemetry::demo::{DemoHost, Scenario};
use crate::telemetry::history::{History, HistoryConfig};
use crate::telemetry::host::HostSource;
use crate::telemetry::recording::{
    Header, Record, RecordStream, Recording, RecordingError, csv_header, csv_row, note_gpu, read_record_at,
};
use crate::telemetry::sample::{GpuSample, HostSample, Inventory};
use crate::telemetry::source::{SourceStatus, StaticGpus};

/// Folds samples, in file order, into what a replay sampler needs.
struct Builder {
    header: Header,
    inventory: Inventory,
    recorded: SourceStatus,
    history: History,
    last_host: Option<(f64, HostSample)>,
    last_gpu: Option<(f64, Vec<GpuSample>)>,
    end: Option<f64>,
}

impl Builder {
    fn new(header: &Header) -> Self {
        Builder {
            header: header.clone(),
            inventory: header.inventory.clone(),
            recorded: header.source.clone(),
            history: History::new(HistoryConfig::default()),
            last_host: None,
            last_gpu: None,
            end: None,
        }
    }

    fn add(&mut self, r: &Record) {
        if let Some(i) = &r.inventory {
            self.inventory = i.clone();
        }
        if let Some(s) = &r.source {
            self.recorded = s.clone();
        }
        if let Some(host) = &r.host {
            record_host(&mut self.history, r.t, host);
            self.last_host = Some((r.t, host.clone()));
        }
        for g in &r.gpus {
            record_gpu(&mut self.history, r.t, g);
        }
        if !r.gpus.is_empty() {
            self.last_gpu = Some((r.t, r.gpus.clone()));
        }
        self.end = Some(r.t);
    }

    fn finish(self, file: &str) -> Sampler {
        let recorded = match &self.header.remote {
            Some(host) => crate::msg!("{host} over SSH: {source}", host = host, source = self.recorded.label()),
            None => self.recorded.label(),
        };
        let status = SourceStatus::Replay { file: file.to_string(), recorded };
        let inventory = Arc::new(self.inventory);
        let gpu = Arc::new(StaticGpus::new(status.clone(), Arc::clone(&inventory)));
        let interval = crate::telemetry::interval::Interval::clamped(self.header.interval_secs).duration();
        let last_host = self.last_host;
        let host = Box::new(ReplayHost(
            last_host.as_ref().map_or_else(|| DemoHost::new(Scenario::Idle, 0).sample(0.0), |(_, h)| h.clone()),
        ));
        let s = Sampler::with_config(gpu, host, interval, HistoryConfig::default());
        if let Ok(mut h) = s.shared.history.lock() {
            *h = self.history;
        }
        let last_gpu = self.last_gpu;
        let header = self.header;
        s.shared.publish(Publish::QUIET, |snap| {
            snap.started_unix = header.started_unix;
            snap.interval_secs = header.interval_secs;
            snap.source = status;
            snap.inventory = inventory;
            snap.host_t = last_host.as_ref().map(|(t, _)| *t);
            snap.host = last_host.map(|(_, h)| h);
            snap.gpu_t = last_gpu.as_ref().map(|(t, _)| *t);
            snap.gpus = last_gpu.map(|(_, g)| g).unwrap_or_default();
        });
        if let Ok(mut e) = s.shared.replay_end.lock() {
            *e = Some(self.end.unwrap_or(0.0));
        }
        s
    }
}

impl Sampler {
    /// A sampler holding a recording: its history filled from every sample, its snapshot the last
    /// sample, its source labelled REPLAY. No threads; nothing is sampled.
    pub fn from_recording(rec: &Recording, file: &str) -> Sampler {
        let mut b = Builder::new(&rec.header);
        for r in &rec.records {
            b.add(r);
        }
        b.finish(file)
    }
}

/// The sample has a host part.
const HAS_HOST: u64 = 1 << 63;
/// The sample has GPU parts.
const HAS_GPUS: u64 = 1 << 62;

/// One sample of the file: its time and where its line starts (with the two flags above).
#[derive(Clone, Copy)]
struct Mark {
    t: f64,
    at: u64,
}

impl Mark {
    fn offset(self) -> u64 {
        self.at & !(HAS_HOST | HAS_GPUS)
    }
}

/// A recording opened for replay: its header, a mark per sample, and the file, read again only
/// for the sample at the slider's position (and for a CSV export).
pub struct ReplayFile {
    /// The file.
    pub path: PathBuf,
    /// Its header.
    pub header: Header,
    /// Lines that could not be read (a torn last line after a kill, or damage), or whose time
    /// runs backwards, skipped.
    pub skipped_lines: usize,
    /// The GPU indices its samples hold, sorted.
    pub gpus: Vec<u32>,
    marks: Vec<Mark>,
    file: Mutex<File>,
    /// The last answer of [`ReplayFile::at`]: the host and GPU marks' positions and their samples.
    cache: Mutex<Option<Cached>>,
}

type Cached = ((Option<usize>, Option<usize>), (Option<Record>, Option<Record>));

impl ReplayFile {
    /// Reads a recording once, one sample at a time, into a replay sampler (its history bounded as
    /// for live data) and an index for the slider. `progress(bytes read, file size)` is called now
    /// and then. A file that is not a recording, or one from a newer version, is an error.
    pub fn open(path: &Path, mut progress: impl FnMut(u64, u64)) -> Result<(Sampler, ReplayFile), RecordingError> {
        let mut stream = RecordStream::open(path)?;
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let mut b = Builder::new(&stream.header);
        let mut marks = Vec::new();
        let mut gpus: Vec<u32> = Vec::new();
        let mut next_report = 0u64;
        let mut out_of_order = 0usize;
        while let Some(r) = stream.next() {
            let mut r = r?;
            // A sample dated before the one before it (a clock set back, an edited file) cannot
            // be placed on the time line: skipped and counted with the unreadable lines.
            if !r.t.is_finite() || marks.last().is_some_and(|m: &Mark| r.t < m.t) {
                out_of_order += 1;
                continue;
            }
            // The first MAX_GPUS GPUs seen; samples of others are not kept.
            r.gpus.retain(|g| note_gpu(&mut gpus, g.index));
            let mut at = stream.last_offset();
            if r.host.is_some() {
                at |= HAS_HOST;
            }
            if !r.gpus.is_empty() {
                at |= HAS_GPUS;
            }
            marks.push(Mark { t: r.t, at });
            b.add(&r);
            if stream.bytes_read() >= next_report {
                progress(stream.bytes_read(), size);
                next_report = stream.bytes_read() + (4 << 20);
            }
        }
        progress(size, size);
        let file = File::open(path).map_err(|e| RecordingError::Io { path: path.to_path_buf(), source: e })?;
        let sampler = b.finish(&path.display().to_string());
        let replay = ReplayFile {
            path: path.to_path_buf(),
            header: stream.header.clone(),
            skipped_lines: stream.skipped_lines + out_of_order,
            gpus,
            marks,
            file: Mutex::new(file),
            cache: Mutex::new(None),
        };
        Ok((sampler, replay))
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.marks.len()
    }

    /// No samples at all.
    pub fn is_empty(&self) -> bool {
        self.marks.is_empty()
    }

    /// First and last sample time.
    pub fn span(&self) -> Option<(f64, f64)> {
        Some((self.marks.first()?.t, self.marks.last()?.t))
    }

    /// The last sample with a host part and the last with GPU parts at or before `at` (the
    /// Monitor's cards at the slider's position). Read from the file; the last answer is kept.
    pub fn at(&self, at: f64) -> (Option<Record>, Option<Record>) {
        let upto = self.marks.partition_point(|m| m.t <= at);
        let before = &self.marks[..upto];
        let host = before.iter().rposition(|m| m.at & HAS_HOST != 0);
        let gpu = before.iter().rposition(|m| m.at & HAS_GPUS != 0);
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((key, found)) = cache.as_ref()
            && *key == (host, gpu)
        {
            return found.clone();
        }
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        let mut read = |i: Option<usize>| i.and_then(|i| read_record_at(&mut file, self.marks[i].offset()).ok());
        let found = (read(host), read(gpu));
        *cache = Some(((host, gpu), found.clone()));
        found
    }

    /// Writes the recording as CSV (see [`csv_header`]), reading the file again one sample at a
    /// time. Returns the number of rows.
    pub fn write_csv(&self, w: &mut dyn std::io::Write) -> Result<usize, RecordingError> {
        let io = |e: std::io::Error| RecordingError::Io { path: self.path.clone(), source: e };
        let stream = RecordStream::open(&self.path)?;
        w.write_all(csv_header(&self.gpus).as_bytes()).map_err(io)?;
        let mut n = 0;
        for r in stream {
            w.write_all(csv_row(&self.header, &self.gpus, &r?).as_bytes()).map_err(io)?;
            n += 1;
        }
        Ok(n)
    }
}

/// The host side of a replay: never sampled (a replay has no threads); answers with the last
/// recorded sample if asked.
struct ReplayHost(HostSample);

impl HostSource for ReplayHost {
    fn sample(&mut self, _t: f64) -> HostSample {
        self.0.clone()
    }
}
