//! `nvidia-bug-report.log` (and `.log.gz`): what the script collected, split into its sections.
//!
//! Every NVIDIA driver ships `nvidia-bug-report.sh`; its log is a header (script version, date,
//! `uname`, the flags it ran with) and then sections, each after a line of underscores: a file
//! (`*** /proc/driver/nvidia/version`, with an `*** ls:` line; `*** /path does not exist`; bare
//! paths in the 2009-era scripts), a command and its output (`/usr/bin/lspci -d "10de:*" -v -xxx`,
//! `/usr/bin/nvidia-smi --query`), or a note ("Scanning kernel log files for NVIDIA kernel
//! messages:"). The log ends with "End of NVIDIA bug report log file." unless the script was
//! interrupted.
//!
//! Logs reach support staff pasted into issue bodies and forum posts, so the splitter is tolerant:
//! a markdown quote or indent before every line is recognised and taken off, anything between
//! sections stays in the section before it, a truncated log gives the sections it has, and mixed
//! encodings are read lossily. [`read`] caps what it reads (compressed and uncompressed) and never
//! follows the file outside itself; [`split`] does not allocate more than the text it is given.
//! Pure code apart from [`read`]; no panics on any input (property tests below).

use std::io::Read as _;
use std::path::Path;

/// At most this much text is read from a log (after decompression).
pub const MAX_TEXT: u64 = 64 << 20;

/// The phrase the script writes at the top of every log.
const START: &str = "Start of NVIDIA bug report log file";
/// The phrase it writes last.
const END: &str = "End of NVIDIA bug report log file";
/// The version line's label.
const VERSION: &str = "nvidia-bug-report.sh Version:";

/// What a section holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SectionKind {
    /// A file's contents; `missing` when the script wrote "does not exist".
    File {
        /// The path as the script names it, `/./` segments taken out.
        path: String,
        /// The file was not there.
        missing: bool,
    },
    /// A command and its output.
    Command(String),
    /// Any other block (the script's own notes, summary tables).
    Note(String),
}

/// One section of the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// What it holds.
    pub kind: SectionKind,
    /// The 1-based line of its title in the text.
    pub line: usize,
    /// Its text, without the title and `*** ls:` lines.
    pub body: String,
}

/// The log's header.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Header {
    /// `nvidia-bug-report.sh Version: 33421935`.
    pub version: Option<String>,
    /// `Date: …` as the machine printed it.
    pub date: Option<String>,
    /// `uname: Linux host 6.8.0-48-generic …`.
    pub uname: Option<String>,
    /// `command line flags: --safe-mode`.
    pub flags: Option<String>,
}

/// A log split into its header and sections.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BugReport {
    /// The header.
    pub header: Header,
    /// The sections in order.
    pub sections: Vec<Section>,
    /// The end marker was there (the script ran to its end).
    pub complete: bool,
    /// What stood before every line when pasted ("> ", four spaces); empty for a log as written.
    pub prefix: String,
    /// The section the log was cut off in (a log without its end marker), as its title names
    /// it: left out of `sections`, because a section cut short is evidence of nothing (an lspci
    /// listing cut before the GPU does not mean there is none).
    pub cut: Option<String>,
}

/// Whether `text` is an nvidia-bug-report log (its start phrase or version line is there).
pub fn is_bug_report(text: &str) -> bool {
    text.contains(START) || text.contains(VERSION)
}

/// The characters a paste puts before each line.
fn paste_prefix(text: &str) -> String {
    let Some(line) = text.lines().find(|l| l.contains(START) || l.contains(VERSION)) else {
        return String::new();
    };
    let at = line.find(START).or_else(|| line.find(VERSION)).unwrap_or(0);
    let before = &line[..at];
    if before.chars().all(|c| matches!(c, '>' | ' ' | '\t' | '|' | '#')) { before.to_string() } else { String::new() }
}

/// `line` without the paste prefix (also when trailing blanks of the prefix were trimmed away).
fn unprefixed<'a>(line: &'a str, prefix: &str) -> &'a str {
    if prefix.is_empty() {
        return line;
    }
    line.strip_prefix(prefix).or_else(|| line.strip_prefix(prefix.trim_end())).unwrap_or(line)
}

fn is_separator(line: &str) -> bool {
    let t = line.trim();
    t.len() >= 20 && t.bytes().all(|b| b == b'_')
}

/// `/proc/driver/nvidia/./version` → `/proc/driver/nvidia/version`.
fn clean_path(p: &str) -> String {
    let mut s = p.replace("/./", "/");
    while s.contains("//") {
        s = s.replace("//", "/");
    }
    s
}

/// What a title line says the section holds.
fn kind_of(title: &str) -> SectionKind {
    let t = title.trim();
    if let Some(rest) = t.strip_prefix("*** ") {
        let rest = rest.trim();
        if let Some(path) = rest.strip_suffix(" does not exist") {
            return SectionKind::File { path: clean_path(path.trim()), missing: true };
        }
        return SectionKind::File { path: clean_path(rest), missing: false };
    }
    // The 2009-era script names files by their bare path; commands have arguments or live in a
    // bin directory.
    let in_bin = ["/bin/", "/sbin/", "/usr/bin/", "/usr/sbin/", "/usr/local/bin/"].iter().any(|d| t.starts_with(d));
    if t.starts_with('/') && !t.contains(char::is_whitespace) && !in_bin {
        return SectionKind::File { path: clean_path(t), missing: false };
    }
    if t.starts_with('/') || t.starts_with("ls ") || t.starts_with("dmesg") || t.starts_with("journalctl") {
        return SectionKind::Command(t.to_string());
    }
    SectionKind::Note(t.to_string())
}

/// Splits `text` into the header and the sections; `None` when it is not a bug-report log.
pub fn split(text: &str) -> Option<BugReport> {
    if !is_bug_report(text) {
        return None;
    }
    let prefix = paste_prefix(text);
    let mut report = BugReport {
        header: Header::default(),
        sections: Vec::new(),
        complete: false,
        prefix: prefix.clone(),
        cut: None,
    };
    // (title line number, title, body lines) of the section being read.
    let mut current: Option<(usize, String, String)> = None;
    let mut after_separator = false;
    // The header runs from the start phrase to the separator after its version line.
    let mut seen_start = false;
    let mut header_done = false;
    let finish = |report: &mut BugReport, current: &mut Option<(usize, String, String)>| {
        if let Some((line, title, body)) = current.take() {
            report.sections.push(Section { kind: kind_of(&title), line, body });
        }
    };
    for (i, raw) in text.lines().enumerate() {
        let line = unprefixed(raw, &prefix);
        let t = line.trim();
        if t.contains(END) {
            report.complete = true;
        }
        if is_separator(line) {
            finish(&mut report, &mut current);
            after_separator = true;
            header_done |= seen_start && report.header.version.is_some();
            continue;
        }
        if !header_done {
            seen_start |= t.contains(START) || t.starts_with(VERSION);
            if let Some(v) = t.strip_prefix(VERSION) {
                report.header.version = Some(v.trim().to_string());
            } else if let Some(v) = t.strip_prefix("Date:") {
                report.header.date = Some(v.trim().to_string());
            } else if let Some(v) = t.strip_prefix("uname:") {
                report.header.uname = Some(v.trim().to_string());
            } else if let Some(v) = t.strip_prefix("command line flags:") {
                report.header.flags = Some(v.trim().to_string());
            }
            continue;
        }
        if after_separator {
            if t.is_empty() {
                continue;
            }
            after_separator = false;
            current = Some((i + 1, t.to_string(), String::new()));
            continue;
        }
        if let Some((_, _, body)) = current.as_mut() {
            if body.is_empty() && t.starts_with("*** ls:") {
                continue;
            }
            body.push_str(line);
            body.push('\n');
        }
    }
    finish(&mut report, &mut current);
    if !report.complete
        && let Some(last) = report.sections.pop()
    {
        report.cut = Some(match last.kind {
            SectionKind::File { path, .. } => path,
            SectionKind::Command(c) | SectionKind::Note(c) => c,
        });
    }
    Some(report)
}

impl BugReport {
    /// The section of the file at `path` (`/./` and repeated slashes ignored), if the script
    /// collected it and it existed.
    pub fn file(&self, path: &str) -> Option<&Section> {
        let want = clean_path(path);
        self.sections.iter().find(|s| matches!(&s.kind, SectionKind::File { path, missing: false } if *path == want))
    }

    /// Whether the script looked for `path` and wrote that it does not exist.
    pub fn file_missing(&self, path: &str) -> bool {
        let want = clean_path(path);
        self.sections.iter().any(|s| matches!(&s.kind, SectionKind::File { path, missing: true } if *path == want))
    }

    /// The files under `dir` the script collected.
    pub fn files_under<'a>(&'a self, dir: &'a str) -> impl Iterator<Item = (&'a str, &'a Section)> + 'a {
        self.sections.iter().filter_map(move |s| match &s.kind {
            SectionKind::File { path, missing: false } if path.starts_with(dir) => Some((path.as_str(), s)),
            _ => None,
        })
    }

    /// The first command section whose command line contains all of `words` ("lspci", "-v").
    pub fn command(&self, words: &[&str]) -> Option<&Section> {
        self.sections.iter().find(|s| match &s.kind {
            SectionKind::Command(c) => words.iter().all(|w| c.contains(w)),
            SectionKind::File { path, missing: false } => words.len() == 1 && path.ends_with(words[0]),
            _ => false,
        })
    }

    /// The first note section whose title contains `words`.
    pub fn note(&self, words: &str) -> Option<&Section> {
        self.sections.iter().find(|s| matches!(&s.kind, SectionKind::Note(t) if t.contains(words)))
    }
}

/// Reads a log as text: plain or gzip-compressed (by its magic bytes), at most [`MAX_TEXT`]
/// bytes of text, mixed encodings read lossily. Only regular files are read.
pub fn read(path: &Path) -> Result<String, crate::i18n::Message> {
    read_capped(path, MAX_TEXT).map(unix_line_ends)
}

/// `text` with Windows (`\r\n`) and old Mac (`\r` alone) line ends made `\n`: a log saved or
/// pasted through another system still splits into its lines.
fn unix_line_ends(text: String) -> String {
    if text.contains('\r') { text.replace("\r\n", "\n").replace('\r', "\n") } else { text }
}

/// What a path given to `check --from` (or dropped on the window) holds, judged from its content
/// alone, in this one place: a directory is a capture; a gzip stream whose content starts with a
/// tar header is a capture archive (whatever names are inside it); otherwise the first 256 KiB of
/// text say whether it is a bug report or nvidia-smi's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A capture directory.
    CaptureDir,
    /// A capture archive (`capture --archive`: a tar inside gzip).
    CaptureArchive,
    /// An nvidia-bug-report log (plain or gzip).
    BugReport,
    /// The output of `nvidia-smi -q` (or its failure message) alone.
    NvidiaSmi,
    /// Anything else.
    Other,
}

/// True when the gzip stream in `path` starts with a tar header ("ustar" at offset 257 of the
/// first 512-byte block).
fn holds_tar(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else { return false };
    let mut block = Vec::with_capacity(512);
    let read = flate2::read::GzDecoder::new(file).take(512).read_to_end(&mut block);
    read.is_ok() && block.get(257..262) == Some(b"ustar".as_slice())
}

/// Sniffs what `path` holds (see [`FileKind`]; reads at most 256 KiB of its text).
pub fn sniff(path: &Path) -> FileKind {
    if path.is_dir() {
        return FileKind::CaptureDir;
    }
    if super::archive::is_archive(path) && holds_tar(path) {
        return FileKind::CaptureArchive;
    }
    let Ok(text) = read_capped(path, 256 << 10) else { return FileKind::Other };
    if is_bug_report(&text) {
        FileKind::BugReport
    } else if [
        "NVSMI LOG",
        "NVIDIA-SMI has failed",
        "Failed to initialize NVML",
        "Unable to determine the device handle",
    ]
    .iter()
    .any(|k| text.contains(k))
    {
        FileKind::NvidiaSmi
    } else {
        FileKind::Other
    }
}

/// [`read`] with a cap of `cap` bytes of text.
fn read_capped(path: &Path, cap: u64) -> Result<String, crate::i18n::Message> {
    let io = |e: std::io::Error| crate::i18n::Message::data(format!("{}: {e}", path.display()));
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(crate::msg!("{path} is not a regular file", path = path.display()));
    }
    let file = std::fs::File::open(path).map_err(io)?;
    let mut head = [0u8; 2];
    let mut probe = std::io::BufReader::new(file);
    let mut bytes = Vec::new();
    {
        use std::io::BufRead as _;
        let buf = probe.fill_buf().map_err(io)?;
        head[..buf.len().min(2)].copy_from_slice(&buf[..buf.len().min(2)]);
    }
    let read = if head == [0x1f, 0x8b] {
        flate2::read::MultiGzDecoder::new(probe).take(cap).read_to_end(&mut bytes)
    } else {
        probe.take(cap).read_to_end(&mut bytes)
    };
    // A truncated .gz still gives what it decompressed so far.
    if let Err(e) = read
        && bytes.is_empty()
    {
        return Err(io(e));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SAMPLE: &str = "____________________________________________

Start of NVIDIA bug report log file.  Please include this file, along
with a detailed description of your problem.

nvidia-bug-report.sh Version: 33421935

Date: Thu Nov 16 10:20:11 AM UTC 2023
uname: Linux gpu-host 6.5.0-1-generic #1 SMP x86_64 GNU/Linux
command line flags: 

____________________________________________

*** /proc/driver/nvidia/./version
*** ls: -r--r--r-- 1 root root 0 2023-11-16 10:20:11 /proc/driver/nvidia/./version
NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023
GCC version:  gcc version 12.3.0

____________________________________________

*** /var/log/nvidia-installer.log does not exist

____________________________________________

/usr/bin/lspci -d \"10de:*\" -v -xxx

01:00.0 VGA compatible controller: NVIDIA Corporation Device 2684 (rev a1)
\tKernel driver in use: nvidia

____________________________________________

Scanning kernel log files for NVIDIA kernel messages:
[    3.1] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.129.03

____________________________________________

End of NVIDIA bug report log file.
";

    #[test]
    fn a_log_splits_into_its_header_and_sections() {
        let r = split(SAMPLE).unwrap();
        assert_eq!(r.header.version.as_deref(), Some("33421935"));
        assert_eq!(r.header.date.as_deref(), Some("Thu Nov 16 10:20:11 AM UTC 2023"));
        assert!(r.header.uname.as_deref().unwrap_or_default().starts_with("Linux gpu-host 6.5.0"));
        assert!(r.complete);
        let v = r.file("/proc/driver/nvidia/version").unwrap();
        assert!(v.body.starts_with("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03"), "{:?}", v.body);
        assert!(r.file_missing("/var/log/nvidia-installer.log"));
        assert!(r.command(&["lspci", "10de"]).unwrap().body.contains("Kernel driver in use: nvidia"));
        assert!(r.note("Scanning kernel log files").unwrap().body.contains("NVRM: loading"));
    }

    #[test]
    fn a_pasted_log_is_read_through_its_quote_marks() {
        let quoted: String = SAMPLE.lines().map(|l| format!("> {l}\n")).collect();
        assert_eq!(split(&quoted).unwrap().sections, split(SAMPLE).unwrap().sections);
        let indented: String = SAMPLE.lines().map(|l| format!("    {l}\n")).collect();
        let r = split(&indented).unwrap();
        assert_eq!(r.prefix, "    ");
        assert_eq!(r.sections, split(SAMPLE).unwrap().sections);
    }

    #[test]
    fn other_text_is_not_a_bug_report() {
        assert!(split("==============NVSMI LOG==============\n").is_none());
        assert!(split("").is_none());
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Cut anywhere: no panic, never "complete" before the end marker, and every section
        /// that ended before the cut is the same as in the whole log.
        #[test]
        fn truncation_keeps_the_sections_before_the_cut(cut in 0usize..SAMPLE.len()) {
            let mut at = cut;
            while !SAMPLE.is_char_boundary(at) {
                at -= 1;
            }
            let part = &SAMPLE[..at];
            let whole = split(SAMPLE).unwrap();
            if let Some(r) = split(part) {
                prop_assert!(!r.complete || part.contains(END));
                for s in r.sections.iter().take(r.sections.len().saturating_sub(1)) {
                    prop_assert!(whole.sections.contains(s), "{s:?}");
                }
            }
        }

        /// Lines of garbage inside sections do not move or merge sections.
        #[test]
        fn garbage_between_lines_stays_inside_its_section(
            garbage in proptest::collection::vec("[a-zA-Z0-9 :.=\\[\\]-]{0,40}", 1..8),
            at in 1usize..40,
        ) {
            let lines: Vec<&str> = SAMPLE.lines().collect();
            let at = at.min(lines.len() - 1);
            // Not inside the header, not right after a separator (where it would be a title).
            prop_assume!(at > 12 && !is_separator(lines[at - 1]) && !lines[at - 1].trim().is_empty());
            let mut text: Vec<String> = lines.iter().map(|l| (*l).to_string()).collect();
            for (k, g) in garbage.iter().enumerate() {
                text.insert(at + k, g.clone());
            }
            let r = split(&text.join("\n")).unwrap();
            let whole = split(SAMPLE).unwrap();
            let kinds: Vec<&SectionKind> = r.sections.iter().map(|s| &s.kind).collect();
            let want: Vec<&SectionKind> = whole.sections.iter().map(|s| &s.kind).collect();
            prop_assert_eq!(kinds, want);
        }

        /// Any bytes at all: no panic.
        #[test]
        fn arbitrary_text_never_panics(s in "\\PC{0,400}") {
            let text = format!("{START}\n{s}\n____________________________________________\n*** {s}\n{s}");
            let _ = split(&text);
        }
    }
}
