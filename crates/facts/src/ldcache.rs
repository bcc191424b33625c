//! Every file the dynamic loader could load for a driver library name, in the loader's order:
//! `LD_LIBRARY_PATH`, then `/etc/ld.so.cache` (what `ldconfig` built from `/etc/ld.so.conf.d`),
//! then the default directories. The first candidate of a name is what a normal program (nvidia-smi,
//! PyTorch, pynvml) loads; gpu-doctor's own fallbacks do not count.
//!
//! The cache format is glibc's "glibc-ld.so.cache1.1" (`elf/cache.c`, `sysdeps/generic/dl-cache.h`):
//! a 48-byte header (magic and version, entry count, string-table length, flags, extension offset),
//! then 24-byte entries (flags, key and value string offsets, OS version, hwcap) sorted so that the
//! loader takes the first entry of a name whose flags fit this machine. String offsets are relative
//! to the header. Older caches put an "ld.so-1.7.0" section first; the new one follows it.

use std::path::Path;

use super::system::LibraryFound;

/// The names whose candidates are recorded.
pub const LIBRARY_NAMES: [&str; 3] = ["libcuda.so.1", "libnvidia-ml.so.1", "libcuda.so"];

/// Where the Windows driver's libraries live inside WSL.
pub const WSL_LIB_DIR: &str = "/usr/lib/wsl/lib";

pub use crate::telemetry::nvml::{OPERATOR_DRIVER_ROOT, operator_lib_dirs};

/// A path inside the operator's driver root.
pub fn in_operator_root(path: &str) -> bool {
    path.starts_with(&format!("{OPERATOR_DRIVER_ROOT}/"))
}

const MAGIC: &[u8] = b"glibc-ld.so.cache1.1";
const HEADER: usize = 48;
const ENTRY: usize = 24;
/// At most this many cache entries are read (a real cache holds a few thousand).
const MAX_ENTRIES: usize = 200_000;

/// The library type flags of this machine's 64-bit libraries (`FLAG_X8664_LIB64`,
/// `FLAG_AARCH64_LIB64`), so that 32-bit copies (`/usr/lib/i386-linux-gnu`) are skipped.
fn wanted_arch() -> Option<i32> {
    if cfg!(target_arch = "x86_64") {
        Some(0x0300)
    } else if cfg!(target_arch = "aarch64") {
        Some(0x0a00)
    } else {
        None
    }
}

/// `(name, path)` pairs of an `ld.so.cache` image, in the file's order; `None` when it is not a
/// cache this code understands.
pub fn parse_cache(bytes: &[u8]) -> Option<Vec<(String, String)>> {
    let start = bytes.windows(MAGIC.len()).position(|w| w == MAGIC)?;
    let b = &bytes[start..];
    let u32_at = |o: usize| b.get(o..o + 4).map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]));
    let nlibs = (u32_at(20)? as usize).min(MAX_ENTRIES);
    let text = |o: u32| -> Option<String> {
        let s = b.get(o as usize..)?;
        let end = s.iter().position(|&c| c == 0)?;
        Some(String::from_utf8_lossy(&s[..end]).into_owned())
    };
    let arch = wanted_arch();
    let mut out = Vec::new();
    for i in 0..nlibs {
        let e = HEADER + i * ENTRY;
        let flags = u32_at(e)? as i32;
        if arch.is_some_and(|a| flags & 0xff00 != a) {
            continue;
        }
        out.push((text(u32_at(e + 4)?)?, text(u32_at(e + 8)?)?));
    }
    Some(out)
}

/// Every candidate for each of [`LIBRARY_NAMES`] under `root`, in loader order. `conf_dirs` are
/// the directories of `/etc/ld.so.conf.d` (used when there is no readable cache) and
/// `default_dirs` the loader's built-in ones.
pub fn candidates(
    root: &Path,
    ld_library_path: Option<&str>,
    conf_dirs: &[String],
    default_dirs: &[&str],
) -> Vec<LibraryFound> {
    let cache =
        crate::safe_fs::read_regular(&root.join("etc/ld.so.cache"), 64 << 20).ok().and_then(|b| parse_cache(&b));
    let mut out: Vec<LibraryFound> = Vec::new();
    for name in LIBRARY_NAMES {
        let mut push = |path: &str, via: &str| {
            let p = root.join(path.trim_start_matches('/'));
            if !p.exists() || out.iter().any(|l| l.name == name && l.path == path) {
                return;
            }
            let real = std::fs::canonicalize(&p).unwrap_or_else(|_| p.clone());
            let real =
                format!("/{}", real.strip_prefix(root).unwrap_or(&real).to_string_lossy().trim_start_matches('/'));
            out.push(LibraryFound {
                name: name.to_string(),
                path: path.to_string(),
                real_path: real,
                via: via.to_string(),
            });
        };
        for d in ld_library_path.unwrap_or("").split(':').filter(|d| d.starts_with('/')) {
            push(&format!("{}/{name}", d.trim_end_matches('/')), "LD_LIBRARY_PATH");
        }
        match &cache {
            Some(entries) => {
                for (_, path) in entries.iter().filter(|(n, _)| n == name) {
                    push(path, "ld.so.cache");
                }
            }
            None => {
                for d in conf_dirs {
                    push(&format!("{}/{name}", d.trim_end_matches('/')), "system");
                }
            }
        }
        for d in default_dirs {
            push(&format!("{d}/{name}"), "system");
        }
        push(&format!("{WSL_LIB_DIR}/{name}"), "not on the loader's path");
        for d in operator_lib_dirs() {
            push(&format!("{d}/{name}"), "not on the loader's path");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cache image with the given (flags, name, path) entries.
    pub(crate) fn cache_image(entries: &[(i32, &str, &str)]) -> Vec<u8> {
        let mut strings = Vec::new();
        let base = HEADER + entries.len() * ENTRY;
        let mut offs = Vec::new();
        for (_, n, p) in entries {
            let k = base + strings.len();
            strings.extend_from_slice(n.as_bytes());
            strings.push(0);
            let v = base + strings.len();
            strings.extend_from_slice(p.as_bytes());
            strings.push(0);
            offs.push((k as u32, v as u32));
        }
        let mut b = Vec::new();
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&(entries.len() as u32).to_le_bytes());
        b.extend_from_slice(&(strings.len() as u32).to_le_bytes());
        b.extend_from_slice(&[0u8; 4]);
        b.extend_from_slice(&[0u8; 16]);
        for ((f, _, _), (k, v)) in entries.iter().zip(&offs) {
            b.extend_from_slice(&f.to_le_bytes());
            b.extend_from_slice(&k.to_le_bytes());
            b.extend_from_slice(&v.to_le_bytes());
            b.extend_from_slice(&0u32.to_le_bytes());
            b.extend_from_slice(&0u64.to_le_bytes());
        }
        b.extend_from_slice(&strings);
        b
    }

    #[test]
    fn a_cache_lists_each_name_in_file_order_and_skips_other_architectures() {
        let lib64 = wanted_arch().unwrap_or(0x0300) | 0x03;
        let img = cache_image(&[
            (0x0003, "libcuda.so.1", "/usr/lib/i386-linux-gnu/libcuda.so.1"),
            (lib64, "libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"),
            (lib64, "libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1"),
        ]);
        let mut with_old = b"ld.so-1.7.0\0\0\0\0\0".to_vec();
        with_old.extend_from_slice(&img);
        for image in [img, with_old] {
            let e = parse_cache(&image).unwrap_or_default();
            assert_eq!(
                e,
                vec![
                    ("libcuda.so.1".to_string(), "/usr/lib/x86_64-linux-gnu/libcuda.so.1".to_string()),
                    ("libcuda.so.1".to_string(), "/usr/lib/wsl/lib/libcuda.so.1".to_string()),
                ]
            );
        }
        assert!(parse_cache(b"not a cache").is_none());
        assert!(parse_cache(&MAGIC[..10]).is_none());
        // Truncated entries end the list without panicking.
        let mut cut = cache_image(&[(lib64, "libcuda.so.1", "/x/libcuda.so.1")]);
        cut.truncate(HEADER + 10);
        assert!(parse_cache(&cut).is_none());
    }

    #[test]
    fn candidates_follow_the_loader_order_and_record_every_file() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        let operator = operator_lib_dirs()[0].trim_start_matches('/').to_string();
        for d in ["usr/lib/x86_64-linux-gnu", "usr/lib/wsl/lib", "opt/env/lib", "etc", operator.as_str()] {
            std::fs::create_dir_all(root.join(d)).unwrap_or_else(|e| panic!("{e}"));
        }
        for f in [
            "usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
            "usr/lib/wsl/lib/libnvidia-ml.so.1",
            "usr/lib/wsl/lib/libcuda.so.1",
            "opt/env/lib/libcuda.so.1",
        ] {
            std::fs::write(root.join(f), b"").unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(root.join(&operator).join("libcuda.so.1"), b"").unwrap_or_else(|e| panic!("{e}"));
        let lib64 = wanted_arch().unwrap_or(0x0300) | 0x03;
        std::fs::write(
            root.join("etc/ld.so.cache"),
            cache_image(&[
                (lib64, "libnvidia-ml.so.1", "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"),
                (lib64, "libnvidia-ml.so.1", "/usr/lib/wsl/lib/libnvidia-ml.so.1"),
            ]),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let c = candidates(root, Some("/opt/env/lib"), &[], &["/usr/lib/x86_64-linux-gnu"]);
        let got: Vec<(&str, &str, &str)> =
            c.iter().map(|l| (l.name.as_str(), l.path.as_str(), l.via.as_str())).collect();
        assert_eq!(
            got,
            vec![
                ("libcuda.so.1", "/opt/env/lib/libcuda.so.1", "LD_LIBRARY_PATH"),
                ("libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1", "not on the loader's path"),
                ("libcuda.so.1", &format!("/{operator}/libcuda.so.1"), "not on the loader's path"),
                ("libnvidia-ml.so.1", "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "ld.so.cache"),
                ("libnvidia-ml.so.1", "/usr/lib/wsl/lib/libnvidia-ml.so.1", "ld.so.cache"),
            ]
        );
        assert!(in_operator_root(&c[2].path) && !in_operator_root(&c[1].path));
    }
}
