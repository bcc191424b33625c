//! Reading files that may be hostile or unlucky: only regular files, opened without blocking (a
//! FIFO or a device where a file was expected never hangs the reader), with a size cap, and —
//! for files inside a directory from a stranger (a capture) — never through a link that leaves
//! that directory.

use std::io::Read;
use std::path::{Path, PathBuf};

/// Cap for kernel text files copied into a capture (`/proc`, `/sys` text).
pub const PROC_TEXT_CAP: u64 = 1 << 20;
/// Cap for a Hugging Face `config.json`.
pub const CONFIG_JSON_CAP: u64 = 16 << 20;
/// Cap for a presets file (RON).
pub const PRESETS_CAP: u64 = 16 << 20;

/// Why a file was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// Missing, unreadable, or another I/O error.
    #[error("{0}")]
    Io(String),
    /// A FIFO, socket, device or directory where a file was expected.
    #[error("not a regular file ({0})")]
    NotAFile(&'static str),
    /// Larger than the cap for this kind of file.
    #[error("larger than {cap} bytes ({size} bytes)")]
    TooLarge {
        /// The file's size.
        size: u64,
        /// The cap.
        cap: u64,
    },
    /// A link (or `..`) that leads outside the directory the file must stay in.
    #[error("points outside {0}")]
    Escapes(String),
}

fn kind(ft: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_char_device() || ft.is_block_device() {
            return "a device";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    if ft.is_dir() { "a directory" } else { "not a plain file" }
}

/// Opens a regular file for reading without blocking on a FIFO (O_NONBLOCK on Unix), and checks
/// its type on the open file: for readers that stream or seek (recordings, log tails).
pub fn open_regular(path: &Path) -> Result<std::fs::File, ReadError> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        const O_NONBLOCK: i32 = 0o4000;
        opts.custom_flags(O_NONBLOCK);
    }
    let f = opts.open(path).map_err(|e| ReadError::Io(e.to_string()))?;
    let md = f.metadata().map_err(|e| ReadError::Io(e.to_string()))?;
    if !md.is_file() {
        return Err(ReadError::NotAFile(kind(&md.file_type())));
    }
    Ok(f)
}

/// Reads `path` as UTF-8 text (lossy) with [`read_regular`]'s rules, for messages `path: why`.
pub fn read_text(path: &Path, cap: u64) -> Result<String, String> {
    read_regular(path, cap)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads a regular file of at most `cap` bytes. Opening does not block (O_NONBLOCK on Unix, so a
/// FIFO without a writer returns at once) and the type is checked on the open file.
pub fn read_regular(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    let f = open_regular(path)?;
    let md = f.metadata().map_err(|e| ReadError::Io(e.to_string()))?;
    // sysfs and procfs report 0 or 4096 whatever they hold: the cap is enforced on what is read.
    let mut out = Vec::new();
    f.take(cap + 1).read_to_end(&mut out).map_err(|e| ReadError::Io(e.to_string()))?;
    if out.len() as u64 > cap {
        return Err(ReadError::TooLarge { size: md.len().max(out.len() as u64), cap });
    }
    Ok(out)
}

/// `rel` (an absolute path inside a captured machine, e.g. `/proc/modules`) under `root`, as long
/// as it stays there once links are followed; `Err(Escapes)` for a link that leaves it, `Err(Io)`
/// when it does not exist.
pub fn contained(root: &Path, rel: &str) -> Result<PathBuf, ReadError> {
    let clean: PathBuf = Path::new(rel).components().filter(|c| matches!(c, std::path::Component::Normal(_))).collect();
    let joined = root.join(clean);
    let real_root = root.canonicalize().map_err(|e| ReadError::Io(e.to_string()))?;
    let real = joined.canonicalize().map_err(|e| ReadError::Io(e.to_string()))?;
    if real.starts_with(&real_root) { Ok(real) } else { Err(ReadError::Escapes(root.display().to_string())) }
}

/// A temporary name beside `path` (same folder, so a rename is atomic).
fn temp_beside(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    path.with_file_name(format!(".{name}.{}-{nanos}.tmp", std::process::id()))
}

/// Writes to a temporary file beside `path` through `fill` (synced), then hands it to `finish`; on
/// any failure the temporary file is removed, so a full disk never leaves a partial file.
fn via_temp(
    path: &Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
    finish: impl FnOnce(&Path) -> std::io::Result<()>,
) -> std::io::Result<()> {
    use std::io::Write as _;
    let tmp = temp_beside(path);
    let result = (|| {
        let f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        let mut w = std::io::BufWriter::new(f);
        fill(&mut w)?;
        w.flush()?;
        let f = w.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()?;
        drop(f);
        finish(&tmp)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Creates `path` with `bytes`, all or nothing: written under a temporary name and then linked to
/// `path`, which must not exist (an existing file or link is an error, never overwritten).
pub fn write_new_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_new_atomic_with(path, |w| w.write_all(bytes))
}

/// [`write_new_atomic`] for output made piece by piece (a CSV export of a 1 GB recording is never
/// held in memory whole): `fill` writes it; an error from `fill` leaves nothing behind.
pub fn write_new_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    via_temp(path, fill, |tmp| {
        let linked = std::fs::hard_link(tmp, path);
        let _ = std::fs::remove_file(tmp);
        linked
    })
}

/// Replaces the file at `path` with `bytes` atomically. When `path` is a link (dotfile managers
/// such as stow or home-manager), the file it points to is replaced and the link stays.
pub fn replace_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut target = path.to_path_buf();
    for _ in 0..16 {
        match std::fs::read_link(&target) {
            Ok(next) => {
                target = if next.is_absolute() { next } else { target.parent().unwrap_or(Path::new(".")).join(next) };
            }
            Err(_) => break,
        }
    }
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    via_temp(&target, |w| w.write_all(bytes), |tmp| std::fs::rename(tmp, &target))
}

/// Moves a bad file to `NAME.bak` (or `NAME.bak.2`, `.bak.3`... if earlier backups exist).
pub fn keep_as_backup(path: &Path) -> std::io::Result<PathBuf> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "file".into());
    for n in 1..1000 {
        let bak = path.with_file_name(if n == 1 { format!("{name}.bak") } else { format!("{name}.bak.{n}") });
        if !bak.exists() {
            std::fs::rename(path, &bak)?;
            return Ok(bak);
        }
    }
    Err(std::io::Error::other(crate::msg!("too many backups").en()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_small_regular_files_are_read_and_nothing_blocks() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let f = dir.path().join("f");
        std::fs::write(&f, b"hello").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read_regular(&f, 5).ok().as_deref(), Some(&b"hello"[..]));
        assert!(matches!(read_regular(&f, 4), Err(ReadError::TooLarge { .. })));
        assert_eq!(read_regular(dir.path(), 10), Err(ReadError::NotAFile("a directory")));
        #[cfg(unix)]
        {
            // A FIFO without a writer: refused at once, not read forever.
            let fifo = dir.path().join("fifo");
            let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).unwrap_or_default();
            // SAFETY: mkfifo with a valid NUL-terminated path.
            assert_eq!(unsafe { libc_mkfifo(c.as_ptr(), 0o600) }, 0);
            assert_eq!(read_regular(&fifo, 10), Err(ReadError::NotAFile("a FIFO")));
            // /dev/zero through a link: a device, not read until memory runs out.
            let z = dir.path().join("zero");
            std::os::unix::fs::symlink("/dev/zero", &z).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(read_regular(&z, 1 << 20), Err(ReadError::NotAFile("a device")));
        }
    }

    #[cfg(unix)]
    unsafe extern "C" {
        #[link_name = "mkfifo"]
        fn libc_mkfifo(path: *const std::ffi::c_char, mode: u32) -> i32;
    }

    #[cfg(unix)]
    #[test]
    fn writes_are_all_or_nothing_never_overwrite_and_keep_links() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let f = dir.path().join("report.md");
        assert!(write_new_atomic(&f, b"one").is_ok());
        assert!(write_new_atomic(&f, b"two").is_err(), "never overwritten");
        assert_eq!(std::fs::read(&f).ok().as_deref(), Some(&b"one"[..]));
        // A dotfile manager's link: the target is replaced, the link stays a link.
        let real = dir.path().join("dotfiles/settings.ron");
        std::fs::create_dir_all(real.parent().unwrap_or(dir.path())).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&real, b"old").unwrap_or_else(|e| panic!("{e}"));
        let link = dir.path().join("settings.ron");
        std::os::unix::fs::symlink("dotfiles/settings.ron", &link).unwrap_or_else(|e| panic!("{e}"));
        assert!(replace_atomic(&link, b"new").is_ok());
        assert!(std::fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink()));
        assert_eq!(std::fs::read(&real).ok().as_deref(), Some(&b"new"[..]));
        // A failed write leaves neither the file nor a temporary behind.
        assert!(write_new_atomic(&dir.path().join("missing-dir/x"), b"x").is_err());
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .map(|r| r.filter_map(Result::ok).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
    }

    #[cfg(unix)]
    #[test]
    fn links_may_stay_inside_the_root_but_never_leave_it() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path().join("fs");
        std::fs::create_dir_all(root.join("proc/driver/nvidia")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join("etc-os-release"), "ID=x\n").unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink("../../../etc-os-release", root.join("proc/driver/nvidia/inside"))
            .unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink("/etc/passwd", root.join("proc/driver/nvidia/version"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(contained(&root, "/proc/driver/nvidia/inside").is_ok());
        assert!(matches!(contained(&root, "/proc/driver/nvidia/version"), Err(ReadError::Escapes(_))));
        assert!(matches!(contained(&root, "/missing"), Err(ReadError::Io(_))));
    }
}
