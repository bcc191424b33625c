//! The kernel's messages of one boot from systemd journal files, read directly (no `journalctl`
//! subprocess): for a user in group `adm` or `systemd-journal` this is often the only readable
//! kernel log on Ubuntu and Debian, where `dmesg` is restricted.
//!
//! The format is systemd's "Journal File Format" (<https://systemd.io/JOURNAL_FILE_FORMAT/>): a
//! header (signature `LPKSHHRH`, incompatible flags at 12, the boot of the last entry at 56,
//! header size at 88, arena size at 96), then 8-byte aligned objects, each with a 16-byte object
//! header (type, flags, size). ENTRY objects (type 3) hold the boot id at 40 and their items from
//! 64: in "compact" files (incompatible flag 16) 4-byte DATA offsets, else 16-byte (offset, hash)
//! pairs. DATA objects (type 1) hold one `FIELD=value` payload from 64 (72 in compact files);
//! compressed payloads (object flags 1, 2, 4) are skipped — the kernel's short lines are stored
//! uncompressed (systemd compresses only payloads above its threshold, 512 bytes by default).

const SIGNATURE: &[u8] = b"LPKSHHRH";
const COMPACT: u32 = 16;
const OBJECT_DATA: u8 = 1;
const OBJECT_ENTRY: u8 = 3;
const COMPRESSED: u8 = 1 | 2 | 4;
/// At most this many entries of one file are looked at.
const MAX_ENTRIES: usize = 2_000_000;

fn u64_at(b: &[u8], o: usize) -> Option<u64> {
    b.get(o..o + 8).map(|s| u64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]]))
}

fn u32_at(b: &[u8], o: usize) -> Option<u32> {
    b.get(o..o + 4).map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// A boot id as the journal stores it, from `/proc/sys/kernel/random/boot_id` text
/// (`4c9d5f1e-...`, 32 hex digits with or without dashes).
pub fn parse_boot_id(text: &str) -> Option<[u8; 16]> {
    let hex: String = text.trim().chars().filter(|c| *c != '-').collect();
    if hex.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// The kernel messages (`_TRANSPORT=kernel`) of boot `boot` in one journal file image, in file
/// order; `boot` `None` takes the boot of the file's last entry. `Err` when the image is not a
/// journal file.
pub fn kernel_messages(file: &[u8], boot: Option<[u8; 16]>) -> Result<Vec<String>, String> {
    if file.get(..8) != Some(SIGNATURE) {
        return Err("not a journal file".into());
    }
    let incompatible = u32_at(file, 12).ok_or("truncated header")?;
    let compact = incompatible & COMPACT != 0;
    let boot = match boot {
        Some(b) => b,
        None => file.get(56..72).and_then(|s| s.try_into().ok()).ok_or("truncated header")?,
    };
    let header = usize::try_from(u64_at(file, 88).ok_or("truncated header")?).map_err(|e| e.to_string())?;
    let arena = usize::try_from(u64_at(file, 96).ok_or("truncated header")?).map_err(|e| e.to_string())?;
    let end = header.saturating_add(arena).min(file.len());
    let payload_at = if compact { 72 } else { 64 };
    let data = |offset: usize| -> Option<&[u8]> {
        let (kind, flags) = (*file.get(offset)?, *file.get(offset + 1)?);
        let size = usize::try_from(u64_at(file, offset + 8)?).ok()?;
        if kind != OBJECT_DATA || flags & COMPRESSED != 0 || size < payload_at {
            return None;
        }
        file.get(offset + payload_at..offset.checked_add(size)?)
    };
    let mut out = Vec::new();
    let mut offset = header;
    let mut entries = 0;
    while offset + 16 <= end && entries < MAX_ENTRIES {
        let kind = file[offset];
        let size = usize::try_from(u64_at(file, offset + 8).unwrap_or(0)).unwrap_or(0);
        if kind == 0 || size < 16 || offset.checked_add(size).is_none_or(|e| e > end) {
            break;
        }
        if kind == OBJECT_ENTRY && file.get(offset + 40..offset + 56) == Some(&boot[..]) {
            entries += 1;
            let (step, item_size) = if compact { (4, 4) } else { (16, 16) };
            let mut kernel = false;
            let mut message = None;
            let mut item = offset + 64;
            while item + item_size <= offset + size {
                let target = if compact {
                    u32_at(file, item).map(|v| v as usize)
                } else {
                    u64_at(file, item).and_then(|v| usize::try_from(v).ok())
                };
                if let Some(p) = target.and_then(data) {
                    if p == b"_TRANSPORT=kernel" {
                        kernel = true;
                    } else if let Some(m) = p.strip_prefix(b"MESSAGE=") {
                        message = Some(String::from_utf8_lossy(m).into_owned());
                    }
                }
                item += step;
            }
            if let (true, Some(m)) = (kernel, message) {
                out.push(m);
            }
        }
        offset += size.div_ceil(8) * 8;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A journal written by systemd's own writer: `systemd-journal-remote` 252 (Debian 12) from
    /// the export stream `tests/data/two-boots.export` (two boots, kernel and non-kernel
    /// messages; compact, keyed-hash and zstd flags set), gzip-compressed.
    fn two_boots() -> Vec<u8> {
        use std::io::Read;
        let gz: &[u8] = include_bytes!("../../../tests/data/two-boots.journal.gz");
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(gz).read_to_end(&mut out).unwrap_or_default();
        out
    }

    #[test]
    fn kernel_messages_of_one_boot_from_a_journal_systemd_wrote() {
        let two = two_boots();
        let j = two.as_slice();
        let new = parse_boot_id("fedcba98-7654-3210-fedc-ba9876543210");
        let old = parse_boot_id("0123456789abcdef0123456789abcdef");
        assert_eq!(
            kernel_messages(j, new).unwrap_or_default(),
            [
                "Linux version 6.1.0-new",
                "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15",
                "pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0",
            ]
        );
        // The other boot's lines (an Xid) never leak into this boot; non-kernel lines are left out.
        assert_eq!(
            kernel_messages(j, old).unwrap_or_default(),
            ["Linux version 6.1.0-old", "NVRM: Xid (PCI:0000:01:00): 79, pid=1, GPU has fallen off the bus."]
        );
        // Without a boot id: the boot of the file's last entry.
        assert_eq!(kernel_messages(j, None).unwrap_or_default().len(), 3);
    }

    #[test]
    fn damaged_or_foreign_files_are_refused_or_read_partly_without_panicking() {
        let two = two_boots();
        let j = two.as_slice();
        assert!(kernel_messages(b"not a journal", None).is_err());
        for cut in [8, 20, 100, 300, 1000, j.len() / 2] {
            let _ = kernel_messages(&j[..cut.min(j.len())], None);
        }
        let mut bad = j.to_vec();
        for i in (300..bad.len()).step_by(7) {
            bad[i] = bad[i].wrapping_mul(31).wrapping_add(7);
        }
        let _ = kernel_messages(&bad, None);
        assert_eq!(parse_boot_id("xyz"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_kernel_log_falls_back_to_the_journal_when_kmsg_is_not_readable() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        let mid = root.join("var/log/journal/5d41402abc4b2a76b9719d911017c592");
        std::fs::create_dir_all(&mid).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(root.join("proc/sys/kernel/random")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(mid.join("system.journal"), two_boots()).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join("proc/sys/kernel/random/boot_id"), "fedcba98-7654-3210-fedc-ba9876543210\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let (log, source) = crate::diagnose::collect::kernel_log(root);
        assert_eq!(
            log,
            crate::diagnose::system::KernelLog::Lines(vec![
                "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15".into(),
                "pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0".into(),
            ])
        );
        assert_eq!(source.read.as_deref(), Some("the systemd journal in /var/log/journal (this boot)"));
        assert_eq!(source.tried.first().map(|t| t.0.as_str()), Some("/dev/kmsg"));
    }

    /// With systemd's own writer installed (CI installs systemd-journal-remote), a journal it
    /// writes now reads the same: the reader follows the format of the systemd on this machine,
    /// not only the checked-in file.
    #[test]
    fn a_journal_written_by_this_machines_systemd_reads_the_same() {
        let tool = ["/lib/systemd/systemd-journal-remote", "/usr/lib/systemd/systemd-journal-remote"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists());
        let Some(tool) = tool else {
            eprintln!("SKIPPED: systemd-journal-remote is not installed");
            return;
        };
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let out = dir.path().join("system.journal");
        let export = std::fs::File::open(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/two-boots.export"))
            .unwrap_or_else(|e| panic!("{e}"));
        let status = std::process::Command::new(tool)
            .arg(format!("--output={}", out.display()))
            .arg("-")
            .stdin(export)
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(status.success());
        let bytes = std::fs::read(&out).unwrap_or_else(|e| panic!("{e}"));
        let new = parse_boot_id("fedcba9876543210fedcba9876543210");
        assert_eq!(kernel_messages(&bytes, new).ok(), kernel_messages(&two_boots(), new).ok());
        assert_eq!(kernel_messages(&bytes, new).map(|m| m.len()).ok(), Some(3));
    }
}
