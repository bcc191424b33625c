//! Parsers for the Linux `/proc` and `/sys` files the host collector reads directly: CPU time
//! split (for iowait), pressure stall information and per-disk I/O counters.
//!
//! Every reader takes a system root (normally `/`) so tests can point it at a fixture tree, and
//! returns a plain-words error naming the file when it cannot be read or parsed.

use std::path::{Path, PathBuf};

use super::sample::Pressure;

/// Cumulative CPU time counters from the first `cpu` line of `/proc/stat`, in clock ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// Time spent in any state.
    pub total: u64,
    /// Time spent idle.
    pub idle: u64,
    /// Time spent waiting for I/O while idle.
    pub iowait: u64,
}

/// Cumulative byte counters of one whole block device from `/proc/diskstats`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiskCounters {
    /// Device name.
    pub name: String,
    /// Bytes read since boot.
    pub read_bytes: u64,
    /// Bytes written since boot.
    pub written_bytes: u64,
}

fn path_in(root: &Path, rel: &str) -> PathBuf {
    root.join(rel.trim_start_matches('/'))
}

/// Why a `/proc` file gave no value (the text becomes the metric's "n/a" reason, in the current
/// language).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProcError {
    /// The file could not be read.
    Read {
        /// The file.
        path: PathBuf,
        /// Why (the system's message).
        why: String,
    },
    /// `/proc/stat` has no aggregate `cpu` line.
    NoCpuLine,
    /// The `cpu` line has too few fields.
    BadCpuLine(String),
    /// A pressure file has neither a `some` nor a `full` line.
    BadPressure(String),
    /// None of the pressure files could be used.
    NoPressure(Box<ProcError>),
}

impl ProcError {
    /// What went wrong, as a message.
    pub fn message(&self) -> crate::i18n::Message {
        match self {
            ProcError::Read { path, why } => crate::msg!("cannot read {path}: {why}", path = path.display(), why = why),
            ProcError::NoCpuLine => crate::msg!("no aggregate 'cpu' line in /proc/stat"),
            ProcError::BadCpuLine(line) => crate::msg!("unexpected /proc/stat cpu line: '{line}'", line = line),
            ProcError::BadPressure(text) => crate::msg!("unexpected pressure file contents: '{text}'", text = text),
            ProcError::NoPressure(why) => {
                crate::msg!("pressure stall information unavailable ({why})", why = why.message())
            }
        }
    }
}

impl crate::i18n::ToMessage for ProcError {
    fn to_message(&self) -> crate::i18n::Message {
        self.message()
    }
}

/// In English (logs); a front end shows [`crate::i18n::ToMessage::to_message`] in its language.
impl std::fmt::Display for ProcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message().en())
    }
}

fn read(root: &Path, rel: &str) -> Result<String, ProcError> {
    let path = path_in(root, rel);
    std::fs::read_to_string(&path).map_err(|e| ProcError::Read { path, why: e.to_string() })
}

/// Parses the aggregate `cpu` line of `/proc/stat` text.
pub fn parse_cpu_times(stat: &str) -> Result<CpuTimes, ProcError> {
    let line = stat.lines().find(|l| l.starts_with("cpu ")).ok_or(ProcError::NoCpuLine)?;
    let fields: Vec<u64> = line.split_whitespace().skip(1).map_while(|f| f.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal guest guest_nice; guest time is already
    // counted in user/nice, so only the first eight fields make up the total.
    if fields.len() < 5 {
        return Err(ProcError::BadCpuLine(line.to_string()));
    }
    let idle = fields.get(3).copied().unwrap_or(0);
    let iowait = fields.get(4).copied().unwrap_or(0);
    Ok(CpuTimes { total: fields.iter().take(8).sum(), idle, iowait })
}

/// Reads `/proc/stat` under `root`.
pub fn read_cpu_times(root: &Path) -> Result<CpuTimes, ProcError> {
    parse_cpu_times(&read(root, "/proc/stat")?)
}

/// Share of CPU time spent in iowait between two readings, %.
pub fn iowait_pct(prev: CpuTimes, now: CpuTimes) -> Option<f64> {
    let total = now.total.checked_sub(prev.total)?;
    let wait = now.iowait.checked_sub(prev.iowait)?;
    (total > 0).then(|| 100.0 * wait as f64 / total as f64)
}

/// Parses one `/proc/pressure/*` file into its `some` and `full` avg10 values.
pub fn parse_pressure(text: &str) -> Result<(Option<f64>, Option<f64>), ProcError> {
    let mut some = None;
    let mut full = None;
    for line in text.lines() {
        let mut parts = line.split_whitespace();
        let kind = parts.next();
        let avg10 = parts.find_map(|p| p.strip_prefix("avg10=")).and_then(|v| v.parse::<f64>().ok());
        match kind {
            Some("some") => some = avg10,
            Some("full") => full = avg10,
            _ => {}
        }
    }
    if some.is_none() && full.is_none() {
        return Err(ProcError::BadPressure(text.trim().to_string()));
    }
    Ok((some, full))
}

/// Reads `/proc/pressure/{cpu,io,memory}` under `root`. Fails only when none of them can be read
/// (kernel without PSI, or PSI disabled with `psi=0`).
pub fn read_pressure(root: &Path) -> Result<Pressure, ProcError> {
    let cpu = read(root, "/proc/pressure/cpu").and_then(|t| parse_pressure(&t));
    let io = read(root, "/proc/pressure/io").and_then(|t| parse_pressure(&t));
    let mem = read(root, "/proc/pressure/memory").and_then(|t| parse_pressure(&t));
    let (cpu, io, mem) = match (cpu, io, mem) {
        (Err(e), Err(_), Err(_)) => return Err(ProcError::NoPressure(Box::new(e))),
        (cpu, io, mem) => (cpu, io, mem),
    };
    Ok(Pressure {
        cpu_some: cpu.as_ref().ok().and_then(|p| p.0),
        io_some: io.as_ref().ok().and_then(|p| p.0),
        io_full: io.as_ref().ok().and_then(|p| p.1),
        memory_some: mem.as_ref().ok().and_then(|p| p.0),
        memory_full: mem.as_ref().ok().and_then(|p| p.1),
    })
}

/// True for block devices that are not physical disks or that would count the same I/O twice.
fn is_virtual_disk(name: &str) -> bool {
    ["loop", "ram", "zram", "dm-", "md", "sr", "fd"].iter().any(|p| name.starts_with(p))
}

/// Parses `/proc/diskstats`, keeping whole devices only (`is_whole` decides; partitions would
/// count the same bytes twice).
pub fn parse_diskstats(text: &str, is_whole: impl Fn(&str) -> bool) -> Vec<DiskCounters> {
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let name = *f.get(2)?;
            if is_virtual_disk(name) || !is_whole(name) {
                return None;
            }
            let sectors_read: u64 = f.get(5)?.parse().ok()?;
            let sectors_written: u64 = f.get(9)?.parse().ok()?;
            // /proc/diskstats counts 512-byte sectors whatever the device's real sector size.
            Some(DiskCounters {
                name: name.to_string(),
                read_bytes: sectors_read * 512,
                written_bytes: sectors_written * 512,
            })
        })
        .collect()
}

/// Reads `/proc/diskstats` under `root`; a device is whole when `/sys/block/NAME` exists.
pub fn read_diskstats(root: &Path) -> Result<Vec<DiskCounters>, ProcError> {
    let text = read(root, "/proc/diskstats")?;
    let sys_block = path_in(root, "/sys/block");
    let have_sys = sys_block.is_dir();
    Ok(parse_diskstats(&text, |name| !have_sys || sys_block.join(name).exists()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  100 0 50 800 40 5 5 0 0 0\ncpu0 50 0 25 400 20 2 3 0 0 0\nintr 1\n";

    #[test]
    fn cpu_times_and_iowait() {
        let a = parse_cpu_times(STAT).unwrap_or_default();
        assert_eq!(a, CpuTimes { total: 1000, idle: 800, iowait: 40 });
        let b = CpuTimes { total: 1200, idle: 900, iowait: 90 };
        assert_eq!(iowait_pct(a, b), Some(25.0));
        assert_eq!(iowait_pct(b, a), None, "counters going backwards give no value");
        assert!(parse_cpu_times("garbage").is_err());
        assert!(parse_cpu_times("cpu  1 2").is_err());
    }

    #[test]
    fn pressure_lines() {
        let io = "some avg10=12.50 avg60=3.00 avg300=1.00 total=100\nfull avg10=4.25 avg60=1.00 avg300=0.00 total=50\n";
        assert_eq!(parse_pressure(io), Ok((Some(12.5), Some(4.25))));
        assert!(parse_pressure("nonsense").is_err());
    }

    #[test]
    fn diskstats_keeps_whole_physical_disks() {
        let text = "   8       0 sda 100 0 2048 10 50 0 4096 20 0 30 30\n   8       1 sda1 100 0 2048 10 50 0 4096 20 0 30 30\n   7       0 loop0 1 0 8 0 0 0 0 0 0 0 0\n 259 0 nvme0n1 5 0 10 1 5 0 20 1 0 1 1\n";
        let disks = parse_diskstats(text, |n| !n.ends_with('1') || n == "nvme0n1");
        let names: Vec<_> = disks.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["sda", "nvme0n1"]);
        assert_eq!(disks.first().map(|d| (d.read_bytes, d.written_bytes)), Some((2048 * 512, 4096 * 512)));
    }

    #[test]
    fn missing_files_name_the_path() {
        let dir = std::env::temp_dir().join("gpu-doctor-no-such-root");
        let err = read_cpu_times(&dir).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("proc/stat"), "{err}");
        let err = read_pressure(&dir).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("pressure stall information unavailable"), "{err}");
        assert!(read_diskstats(&dir).is_err());
    }
}
