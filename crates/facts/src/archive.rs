//! One-file captures: `capture --archive FILE.tar.gz` packs a capture directory into a
//! gzip-compressed tar file to send, and `check --from FILE.tar.gz` unpacks one into a fresh
//! private temporary directory (removed afterwards). Unpacking trusts nothing in the file: only
//! plain files and directories are accepted, every path must stay inside the directory (no
//! absolute paths, no `..`), links and device files are refused, no file is overwritten, and the
//! size and the number of entries are capped.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;

use super::system::CaptureError;
use crate::i18n::Message;
use crate::msg;

/// The most bytes an archive may unpack to.
pub const MAX_UNPACKED_BYTES: u64 = 512 << 20;
/// The most entries an archive may hold.
pub const MAX_ENTRIES: usize = 100_000;
/// The folder the capture is put in inside the archive.
pub const TOP_DIR: &str = "gpu-doctor-capture";

/// The scratch directories and half-written archives that exist now, removed by
/// [`remove_scratch_on_signals`]'s thread if the process is interrupted.
static LIVE_SCRATCH: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Held by a writer for each step that creates something in a scratch directory (a file, its
/// folders) or puts an archive under its name. The signal thread takes it before it removes
/// them and keeps it until the process ends, so no step can recreate a folder after the removal
/// or name a half-written archive.
static GATE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// How long the signal thread waits for a writer's step (a write to a hung network mount) before
/// it removes what it can anyway.
const GATE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Set by the signal thread before it takes [`GATE`]: no writer starts another step.
static STOPPING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The gate for one writing step (see [`GATE`]). Once the process is being interrupted, a writer
/// that asks for it waits for the end (the signal thread removes what was written and exits).
pub fn writing() -> std::sync::MutexGuard<'static, ()> {
    if STOPPING.load(std::sync::atomic::Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
    GATE.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn live(path: &Path, add: bool) {
    if let Ok(mut live) = LIVE_SCRATCH.lock() {
        if add {
            live.push(path.to_path_buf());
        } else {
            live.retain(|p| p != path);
        }
    }
}

/// From now on SIGINT, SIGTERM and SIGHUP remove every [`ScratchDir`] and half-written archive
/// of this process before it ends (with 128 + the signal's number, as the shell expects), so an
/// interrupted `check --from big.tar.gz` or `capture --archive` leaves no unpacked copy in /tmp
/// and no partial archive. The removal waits for the writing step under way ([`writing`]). The
/// signals are blocked in the calling thread (and the threads it starts later) and taken by one
/// thread with `sigwait`, so no code runs inside a signal handler. Call it from the main thread
/// before any other thread exists. Not on Windows, where a console's Ctrl+C ends the process and
/// its temporary folder is the user's.
pub fn remove_scratch_on_signals() {
    crate::signals::take_stop_signals(|sig| {
        STOPPING.store(true, std::sync::atomic::Ordering::SeqCst);
        let until = std::time::Instant::now() + GATE_WAIT;
        let held = loop {
            match GATE.try_lock() {
                Ok(g) => break Some(g),
                Err(std::sync::TryLockError::Poisoned(p)) => break Some(p.into_inner()),
                Err(std::sync::TryLockError::WouldBlock) if std::time::Instant::now() < until => {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                Err(std::sync::TryLockError::WouldBlock) => break None,
            }
        };
        let paths = LIVE_SCRATCH.lock().map(|d| d.clone()).unwrap_or_default();
        for p in paths {
            if p.is_dir() {
                let _ = fs::remove_dir_all(p);
            } else {
                let _ = fs::remove_file(p);
            }
        }
        // Kept to the end: no writer takes another step.
        let _held = held;
        crate::signals::exit_for(sig)
    });
}

/// A new, private directory under the system's temporary directory, removed (with everything in
/// it) when dropped, or by [`remove_scratch_on_signals`] when the process is interrupted.
#[derive(Debug)]
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// Makes one; the name is new (`create_dir` fails on an existing one, and another is tried).
    pub fn new() -> io::Result<Self> {
        let base = std::env::temp_dir();
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let mut last = io::Error::other("no attempt");
        for attempt in 0..16u32 {
            let path = base.join(format!("gpu-doctor-{}-{nanos}-{attempt}", std::process::id()));
            let builder = private_dir_builder();
            match builder.create(&path) {
                Ok(()) => {
                    live(&path, true);
                    return Ok(ScratchDir(path));
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
        live(&self.0, false);
    }
}

pub use super::system::is_archive;

/// Packs the capture directory `dir` into a new `.tar.gz` file `file`. Never overwrites: an
/// existing `file` is an error. File owners, modes and times are not stored (deterministic
/// headers), so the archive says no more than the directory's contents. The archive is written
/// under a temporary name beside `file` and given its name only once whole, so a pack that fails
/// or is interrupted never leaves a partial archive under the name asked for.
pub fn write_archive(dir: &Path, file: &Path) -> Result<(), CaptureError> {
    let err = |e: io::Error| CaptureError::Write(file.into(), Message::data(e.to_string()));
    if fs::symlink_metadata(file).is_ok() {
        return Err(err(io::Error::from(io::ErrorKind::AlreadyExists)));
    }
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let partial = file.with_file_name(format!(".{name}.partial-{}", std::process::id()));
    let mut options = File::options();
    options.write(true).create_new(true);
    // Readable by the user only, like the capture directory it packs.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let out = {
        let _step = writing();
        let out = options.open(&partial).map_err(err)?;
        live(&partial, true);
        out
    };
    let packed = (|| {
        let mut tar = tar::Builder::new(GzEncoder::new(out, Compression::default()));
        tar.follow_symlinks(false);
        tar.mode(tar::HeaderMode::Deterministic);
        tar.append_dir_all(TOP_DIR, dir)?;
        tar.into_inner()?.finish()?.sync_all()?;
        // Named only when whole, and never over a file that appeared meanwhile.
        let _step = writing();
        let named = match fs::hard_link(&partial, file) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists && fs::symlink_metadata(file).is_err() => {
                fs::rename(&partial, file)
            }
            other => other,
        };
        let _ = fs::remove_file(&partial);
        live(&partial, false);
        named
    })();
    if let Err(e) = packed {
        // The half-written file is the one just created here, never the user's.
        let _ = fs::remove_file(&partial);
        live(&partial, false);
        return Err(err(e));
    }
    Ok(())
}

/// A capture unpacked from an archive; its files are removed when this is dropped.
#[derive(Debug)]
pub struct Unpacked {
    scratch: ScratchDir,
    dir: PathBuf,
}

impl Unpacked {
    /// The capture directory (the one holding `capture.json`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The temporary directory everything was unpacked into.
    pub fn root(&self) -> &Path {
        self.scratch.path()
    }
}

/// The path as plain names below the directory, or None when it is absolute or climbs out.
fn inside(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Normal(name) => out.push(name),
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) | Component::ParentDir => return None,
        }
    }
    Some(out)
}

/// Unpacks the capture archive `file` into a new temporary directory (see the module's rules).
pub fn unpack(file: &Path) -> Result<Unpacked, CaptureError> {
    let bad = |why: Message| CaptureError::Archive(file.into(), why);
    let data = |e: &dyn std::fmt::Display| Message::data(e.to_string());
    let input = File::open(file).map_err(|e| bad(data(&e)))?;
    let scratch = ScratchDir::new().map_err(|e| bad(msg!("cannot make a temporary directory: {error}", error = e)))?;
    let root = scratch.path().to_path_buf();
    let mut archive = tar::Archive::new(GzDecoder::new(input));
    let mut total = 0u64;
    let entries = archive.entries().map_err(|e| bad(data(&e)))?;
    for (n, entry) in entries.enumerate() {
        if n >= MAX_ENTRIES {
            return Err(bad(msg!("more than {n} entries", n = MAX_ENTRIES)));
        }
        let mut entry = entry.map_err(|e| bad(data(&e)))?;
        // Each entry's folders and file are made under the gate, and its data copied a chunk
        // at a time under it: an interruption removes the directory between two steps, never
        // while one recreates a folder, and within a chunk's time.
        let step = writing();
        let path = entry.path().map_err(|e| bad(data(&e)))?.into_owned();
        let rel = inside(&path)
            .ok_or_else(|| bad(msg!("refused path {path} (outside the capture)", path = path.display())))?;
        let kind = entry.header().entry_type();
        let dst = root.join(&rel);
        if kind.is_dir() {
            fs::create_dir_all(&dst).map_err(|e| bad(data(&e)))?;
        } else if kind.is_file() {
            if rel.as_os_str().is_empty() {
                return Err(bad(msg!("a file entry without a name")));
            }
            if let Some(parent) = dst.parent() {
                fs::create_dir_all(parent).map_err(|e| bad(data(&e)))?;
            }
            let mut out = File::options()
                .write(true)
                .create_new(true)
                .open(&dst)
                .map_err(|e| bad(Message::data(format!("{}: {e}", rel.display()))))?;
            drop(step);
            let room = MAX_UNPACKED_BYTES - total;
            let copied = copy_in_steps(&mut (&mut entry).take(room + 1), &mut out).map_err(|e| bad(data(&e)))?;
            if copied > room {
                return Err(bad(msg!("unpacks to more than {mib} MiB", mib = MAX_UNPACKED_BYTES >> 20)));
            }
            total += copied;
        } else if matches!(kind, tar::EntryType::XGlobalHeader | tar::EntryType::XHeader) {
            // Metadata for the entries, not files.
        } else {
            return Err(bad(msg!(
                "refused {path} (links and special files are not part of a capture)",
                path = path.display()
            )));
        }
    }
    let dir = if root.join("capture.json").is_file() {
        root.clone()
    } else {
        let mut dirs = fs::read_dir(&root).map_err(|e| bad(data(&e)))?.filter_map(|e| e.ok().map(|e| e.path()));
        match (dirs.next(), dirs.next()) {
            (Some(only), None) if only.join("capture.json").is_file() => only,
            _ => return Err(bad(msg!("it holds no capture.json: not a gpu-doctor capture"))),
        }
    };
    Ok(Unpacked { scratch, dir })
}

/// Copies `from` into `to` a MiB at a time, each under the gate of an interruption.
fn copy_in_steps(from: &mut dyn Read, to: &mut File) -> io::Result<u64> {
    use std::io::Write as _;
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let _step = writing();
        let n = from.read(&mut buf)?;
        if n == 0 {
            return Ok(total);
        }
        to.write_all(&buf[..n])?;
        total += n as u64;
    }
}

/// A directory builder that makes the directory readable by its owner only (Unix: mode 0700).
fn private_dir_builder() -> fs::DirBuilder {
    #[cfg(unix)]
    {
        let mut builder = fs::DirBuilder::new();
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder
    }
    #[cfg(not(unix))]
    {
        fs::DirBuilder::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture_dir() -> ScratchDir {
        let d = ScratchDir::new().unwrap();
        fs::write(d.path().join("capture.json"), "{}").unwrap();
        fs::create_dir_all(d.path().join("fs/proc/driver/nvidia")).unwrap();
        fs::write(d.path().join("fs/proc/driver/nvidia/version"), "NVRM version: 550.54.15").unwrap();
        d
    }

    #[test]
    fn round_trip_and_never_overwrite() {
        let src = capture_dir();
        let out = ScratchDir::new().unwrap();
        let file = out.path().join("c.tar.gz");
        write_archive(src.path(), &file).unwrap();
        assert!(is_archive(&file) && !is_archive(src.path()));
        let before = fs::read(&file).unwrap();
        assert!(write_archive(src.path(), &file).is_err(), "an existing file is never overwritten");
        assert_eq!(fs::read(&file).unwrap(), before);
        let u = unpack(&file).unwrap();
        assert_eq!(u.dir(), u.root().join(TOP_DIR));
        let version = fs::read_to_string(u.dir().join("fs/proc/driver/nvidia/version")).unwrap();
        assert_eq!(version, "NVRM version: 550.54.15");
        let root = u.root().to_path_buf();
        drop(u);
        assert!(!root.exists(), "the unpacked files are removed");
    }

    /// A tar.gz built by hand, with whatever headers a hostile sender could write.
    fn hostile(file: &Path, name: &[u8], kind: tar::EntryType, link: Option<&str>) {
        let mut b = tar::Builder::new(GzEncoder::new(File::create(file).unwrap(), Compression::default()));
        let mut h = tar::Header::new_gnu();
        h.set_size(0);
        h.set_entry_type(kind);
        h.set_mode(0o644);
        if let Some(l) = link {
            h.set_link_name(l).unwrap();
        }
        // Written raw, as set_path refuses `..` (a hostile archive would not).
        let raw = h.as_old_mut();
        raw.name[..name.len()].copy_from_slice(name);
        h.set_cksum();
        b.append(&h, io::empty()).unwrap();
        b.into_inner().unwrap().finish().unwrap();
    }

    #[test]
    fn unsafe_entries_are_refused() {
        let dir = ScratchDir::new().unwrap();
        let cases: [(&[u8], tar::EntryType, Option<&str>, &str); 4] = [
            (b"../evil", tar::EntryType::Regular, None, "outside the capture"),
            (b"/etc/evil", tar::EntryType::Regular, None, "outside the capture"),
            (b"a/../../evil", tar::EntryType::Regular, None, "outside the capture"),
            (b"link", tar::EntryType::Symlink, Some("/etc/passwd"), "links and special files"),
        ];
        for (i, (name, kind, link, why)) in cases.into_iter().enumerate() {
            let file = dir.path().join(format!("{i}.tar.gz"));
            hostile(&file, name, kind, link);
            let e = unpack(&file).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains(why), "{}: {e}", String::from_utf8_lossy(name));
        }
        assert!(!dir.path().parent().unwrap_or(dir.path()).join("evil").exists());
        let empty = dir.path().join("empty.tar.gz");
        hostile(&empty, b"readme.txt", tar::EntryType::Regular, None);
        let e = unpack(&empty).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("no capture.json"), "{e}");
    }
}
