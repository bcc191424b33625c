//! What the checklist reads, as plain options: this machine (with NVML gathered on a helper thread
//! so a hung driver costs at most [`NVML_TIMEOUT`]) or a capture (directory or `.tar.gz`). One constructor for the
//! CLI's `check`, `capture` and `report`, and the app's Checklist.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::bugview::{self, BugReportSystem};
use super::system::{CaptureError, CapturedSystem, LiveSystem, NvmlView};
use super::{Report, archive, bugreport, collect};
use crate::msg;
use crate::telemetry::open::system_root;
use crate::telemetry::remote::{self, RemoteError, RemoteErrorKind, SshSetup, Target};
use crate::telemetry::{GpuSource, SourceOptions};

/// How long the checks wait for NVML to open and answer one sample.
pub const NVML_TIMEOUT: Duration = Duration::from_secs(5);

/// What the checks run on.
#[derive(Clone, Debug, PartialEq)]
pub enum CheckSource {
    /// This machine, with these NVML options.
    Live(SourceOptions),
    /// A capture directory, or a capture archive (`.tar.gz`), from support staff reading a user's
    /// machine.
    Capture(PathBuf),
    /// A server over SSH: its own `gpu-doctor-cli check --json`.
    Remote(Target, SshSetup),
}

impl CheckSource {
    /// Runs the checks (blocking: NVML may take up to [`NVML_TIMEOUT`]). `renderer` is the app's
    /// renderer or adapter name, for the software-rendering check.
    pub fn run(&self, renderer: Option<String>) -> Result<Report, CaptureError> {
        match self {
            CheckSource::Live(options) => Ok(super::run(&live_system(options, renderer))),
            CheckSource::Capture(file) => run_file(capture_folder_of(file)),
            CheckSource::Remote(target, setup) => remote_checklist(setup, target).map_err(CaptureError::Remote),
        }
    }
}

/// Runs the checks on a bug report, an `nvidia-smi -q` text, a capture archive or a capture folder.
fn run_file(file: &std::path::Path) -> Result<Report, CaptureError> {
    match bugreport::sniff(file) {
        bugreport::FileKind::BugReport | bugreport::FileKind::NvidiaSmi => run_imported(file),
        // (gzip that is neither a report nor a tar: the archive reader names the problem.)
        bugreport::FileKind::CaptureArchive | bugreport::FileKind::Other if archive::is_archive(file) => {
            // The unpacked copy lives until the checks are done, then is removed.
            let unpacked = archive::unpack(file)?;
            CapturedSystem::open(unpacked.dir()).map(|c| run_from(&c, file)).map_err(|e| e.about(file))
        }
        // A directory, or something that is none of these: the capture reader says why.
        _ => CapturedSystem::open(file).map(|c| run_from(&c, file)),
    }
}

/// A capture's `capture.json` chosen in a file dialog (or typed after `--from`) stands for its
/// capture: the folder holding it.
fn capture_folder_of(file: &std::path::Path) -> &std::path::Path {
    match (file.file_name(), file.parent()) {
        (Some(n), Some(dir)) if n == "capture.json" && !dir.as_os_str().is_empty() => dir,
        (Some(n), Some(_)) if n == "capture.json" => std::path::Path::new("."),
        _ => file,
    }
}

/// Runs the checks on a file's view and says which machine it describes.
fn run_from(view: &dyn super::system::SystemView, file: &std::path::Path) -> Report {
    let mut report = super::run(view);
    let mut origin = super::origin::Origin::of(view, file);
    origin.learn_from(&report);
    report.origin = Some(origin);
    report
}

/// Runs the checks on an `nvidia-bug-report.log(.gz)` or the text of `nvidia-smi -q`, and marks
/// what the file did not hold.
pub fn run_imported(file: &std::path::Path) -> Result<Report, CaptureError> {
    let bad = |why: crate::i18n::Message| CaptureError::Malformed(file.to_path_buf(), why);
    let text = bugreport::read(file).map_err(bad)?;
    let view = if bugreport::is_bug_report(&text) {
        let split = bugreport::split(&text).ok_or_else(|| bad(crate::msg!("no nvidia-bug-report sections found")))?;
        BugReportSystem::from_report(&split)
    } else {
        BugReportSystem::from_smi(&text).ok_or_else(|| bad(crate::msg!("not the output of nvidia-smi -q")))?
    };
    let mut report = run_from(&view, file);
    let imported = view.imported();
    if imported.kind == "nvidia-bug-report" && imported.read.is_empty() {
        // A checklist of nothing but "not in this report" would read as "no failure found".
        return Err(bad(crate::msg!(
            "it holds none of the sections the checks read ({n} sections found); the file may be damaged, cut short or not a whole log",
            n = imported.sections
        )));
    }
    mark_not_in_report(&mut report, &imported);
    if let Some(o) = report.origin.as_mut() {
        // What the log's own summary found where the checks' files were not in it.
        o.os = o.os.take().or_else(|| imported.distribution.clone());
        o.driver = o.driver.take().or_else(|| imported.driver.clone());
        if !imported.gpus.is_empty() {
            // (nvidia-smi's or lspci's names; the view's own stand in with "GPU 0" when neither.)
            o.gpus = imported.gpus.iter().enumerate().map(|(i, g)| format!("{i}: {g}")).collect();
        }
    }
    report.imported = Some(imported);
    Ok(report)
}

/// How long a server's checklist may take (its NVML and cuInit waits included).
const REMOTE_CHECKS_TIMEOUT: Duration = Duration::from_secs(90);

/// Runs `gpu-doctor-cli check --json` on a server over SSH and reads its report (exit codes 0, 6
/// and 7 all carry one).
pub fn remote_checklist(setup: &SshSetup, target: &Target) -> Result<Report, RemoteError> {
    let out = remote::run_once(setup, target, &["check", "--json"], REMOTE_CHECKS_TIMEOUT)?;
    match serde_json::from_slice::<Report>(&out.stdout) {
        // (The checks carry their messages: they render in this machine's language where shown.)
        Ok(r) => Ok(r.bounded()),
        Err(e) => {
            let mut err = remote::classify(target, out.code, &out.stderr, false);
            if err.kind == RemoteErrorKind::Other && !out.stdout.is_empty() {
                err = RemoteError {
                    kind: RemoteErrorKind::VersionSkew,
                    message: crate::msg!(
                        "The checklist from {host} cannot be read by this version ({error}).",
                        host = target,
                        error = e
                    ),
                    next_step: crate::msg!("Install the same gpu-doctor version on both machines."),
                    detail: String::new(),
                };
            }
            Err(err)
        }
    }
}

/// NVML's answers on this machine, gathered on a helper thread so a hung driver costs at most
/// [`NVML_TIMEOUT`].
pub fn live_nvml(source: &SourceOptions) -> NvmlView {
    let live = source.live_gpus();
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = Arc::clone(&live);
    let spawned = std::thread::Builder::new().name("gd-check-nvml".into()).spawn(move || {
        worker.prepare();
        let samples = worker.sample(0.0);
        let facts = worker.facts();
        let _ = tx.send((samples, facts));
    });
    // A call that does not return is recorded as such: a hung driver, not a missing one.
    let (answer, did_not_return, hung_call) = match spawned {
        Ok(_) => match rx.recv_timeout(NVML_TIMEOUT) {
            Ok(a) => (a, None, None),
            Err(_) => (Default::default(), Some(NVML_TIMEOUT.as_secs()), live.in_flight(false)),
        },
        Err(_) => (Default::default(), None, None),
    };
    let (samples, facts) = answer;
    NvmlView {
        status: live.status(),
        inventory: (*live.inventory()).clone(),
        samples,
        facts,
        did_not_return,
        hung_call,
    }
}

/// The live machine as the checks see it.
pub fn live_system(source: &SourceOptions, renderer: Option<String>) -> LiveSystem {
    live_system_with(source, renderer, false)
}

/// [`live_system`], or with `quick` the checks a scheduler's health check can afford (see
/// [`collect::collect_meta`]).
pub fn live_system_with(source: &SourceOptions, renderer: Option<String>, quick: bool) -> LiveSystem {
    let root = system_root();
    let meta = collect::collect_meta(&root, Some(live_nvml(source)), renderer, quick);
    LiveSystem::new(root, meta)
}

/// What a file that the checklist could not read is, in words, from its first bytes ("a PNG
/// image, 12.0 KiB", "a text file that begins “hello”"): said with the error, so a wrong file
/// dropped on the window is named for what it is, not by an operating-system error.
pub fn what_file_is(path: &std::path::Path) -> crate::i18n::Message {
    use std::io::Read;
    let Ok(meta) = std::fs::metadata(path) else { return crate::msg!("a path that does not exist") };
    if meta.is_dir() {
        return if path.join("capture.json").exists() {
            crate::msg!("a gpu-doctor capture folder")
        } else {
            crate::msg!("a folder without a capture.json, so not a gpu-doctor capture")
        };
    }
    let mut head = Vec::with_capacity(512);
    if let Ok(f) = std::fs::File::open(path) {
        let _ = f.take(512).read_to_end(&mut head);
    }
    let size = crate::units::bytes(meta.len());
    let starts = |magic: &[u8]| head.starts_with(magic);
    let kind = if meta.len() == 0 {
        return crate::msg!("an empty file");
    } else if starts(b"\x89PNG") {
        crate::msg!("a PNG image")
    } else if starts(b"\xff\xd8\xff") {
        crate::msg!("a JPEG image")
    } else if starts(b"GIF8") {
        crate::msg!("a GIF image")
    } else if starts(b"%PDF") {
        crate::msg!("a PDF document")
    } else if starts(b"PK\x03\x04") {
        crate::msg!("a ZIP archive")
    } else if starts(b"\x7fELF") {
        crate::msg!("a Linux program or library (ELF)")
    } else if starts(b"MZ") {
        crate::msg!("a Windows program or library")
    } else if starts(b"\x1f\x8b") {
        crate::msg!("a gzip-compressed file")
    } else if head.len() > 262 && &head[257..262] == b"ustar" {
        crate::msg!("an uncompressed tar archive")
    } else if let Ok(text) = std::str::from_utf8(&head[..head.len().min(200)])
        && !text.contains('\0')
    {
        let first: String = text.lines().next().unwrap_or("").chars().take(60).collect();
        crate::msg!("a text file that begins “{start}”", start = first.trim())
    } else {
        crate::msg!("a binary file of an unknown kind")
    };
    crate::msg!("{kind}, {size}", kind = kind, size = size)
}

/// In a report made from a log: a check that was skipped for lack of evidence (not blocked, not
/// "does not apply") says the evidence is not in this report, naming what was asked for.
fn mark_not_in_report(report: &mut crate::Report, imported: &bugview::Imported) {
    let missing = msg!("evidence missing");
    // (The evidence of a file the checks could not read, in the language it was written in.)
    let unreadable = [msg!("/proc/modules: not readable"), msg!("/sys/bus/pci/devices: not readable")];
    for c in &mut report.checks {
        if c.verdict != crate::Verdict::Skipped || c.blocked_by.is_some() || c.applies_to.is_some() {
            continue;
        }
        let mentioned: Vec<&String> = imported
            .not_in_report
            .iter()
            .filter(|p| c.summary.en().contains(p.as_str()) || c.evidence.iter().any(|e| e.en().contains(p.as_str())))
            .collect();
        if c.summary == missing || !mentioned.is_empty() || c.evidence.iter().any(|e| unreadable.contains(e)) {
            c.finding = msg!("Not in this report: {summary}", summary = c.summary);
            if !mentioned.is_empty() {
                let list: Vec<String> = mentioned.iter().map(|p| (*p).clone()).collect();
                c.evidence.push(msg!("not collected by nvidia-bug-report.sh: {paths}", paths = list.join(", ")));
            }
        }
    }
}
