//! Health-check hooks: the exit codes and the one status line that schedulers and monitors read
//! from `check` (Slurm's `HealthCheckProgram` and prolog, LBNL NHC's `check_cmd_status`,
//! Kubernetes node-problem-detector's custom plugins, Nagios-style plugins). The contracts and
//! ready-to-paste snippets are in docs/fleet.md.

use crate::diagnose::{Report, Verdict};
use crate::i18n::Here as _;

/// The longest status line, in bytes: node-problem-detector cuts a custom plugin's message at 80
/// bytes by default (`max_output_length`), Nagios' guidelines ask for about 80 characters, and
/// `sinfo -R` shows a drain reason's start.
pub const MAX_LINE_BYTES: usize = 80;

/// Which exit-code convention `check` follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ExitCodes {
    /// gpu-doctor's own: 0 ok, 6 a warning, 7 a failure, 1 could not check.
    #[default]
    Default,
    /// Nagios / Icinga / Checkmk plugins: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.
    Nagios,
    /// Kubernetes node-problem-detector custom plugins: 0 OK, 1 problem (a failure), 2 unknown.
    Npd,
    /// Slurm health checks and prologs, NHC: 0 ok, 1 a failure (drain), 2 could not check.
    Slurm,
}

impl ExitCodes {
    /// The exit code for a checklist whose worst verdict is `worst`.
    pub fn code(self, worst: Verdict) -> u8 {
        match (self, worst) {
            (ExitCodes::Default, Verdict::Fail) => super::exit::CHECK_FAIL,
            (ExitCodes::Default, Verdict::Warn) => super::exit::CHECK_WARN,
            (ExitCodes::Nagios, Verdict::Fail) => 2,
            (ExitCodes::Nagios, Verdict::Warn) => 1,
            (ExitCodes::Npd | ExitCodes::Slurm, Verdict::Fail) => 1,
            _ => 0,
        }
    }

    /// The exit code when the checks could not run at all.
    pub fn unknown(self) -> u8 {
        match self {
            ExitCodes::Default => super::exit::ERROR,
            ExitCodes::Nagios => 3,
            ExitCodes::Npd | ExitCodes::Slurm => 2,
        }
    }

    /// The status word that starts the line.
    fn word(self, worst: Option<Verdict>) -> &'static str {
        match (self, worst) {
            (_, None) => "UNKNOWN",
            (ExitCodes::Nagios, Some(Verdict::Fail)) => "CRITICAL",
            (ExitCodes::Nagios, Some(Verdict::Warn)) => "WARNING",
            (_, Some(Verdict::Fail)) => "FAIL",
            (_, Some(Verdict::Warn)) => "WARN",
            _ => "OK",
        }
    }

    fn prefix(self, worst: Option<Verdict>) -> String {
        match self {
            // Nagios' plugin guidelines: "SERVICE STATUS: text".
            ExitCodes::Nagios => format!("GPU-DOCTOR {}: ", self.word(worst)),
            _ => format!("{}: ", self.word(worst)),
        }
    }
}

/// The exit code of a command line clap refused: the convention's "could not check" when the
/// arguments name one with `--exit-codes` (a Nagios plugin with a typo is UNKNOWN, 3, not
/// CRITICAL), else clap's own 2.
pub fn usage_error_code(args: impl IntoIterator<Item = std::ffi::OsString>) -> u8 {
    use clap::ValueEnum as _;
    let args: Vec<String> = args.into_iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let named = args.iter().enumerate().find_map(|(i, a)| match a.strip_prefix("--exit-codes") {
        Some("") => args.get(i + 1).cloned(),
        Some(rest) => rest.strip_prefix('=').map(String::from),
        None => None,
    });
    named.and_then(|n| ExitCodes::from_str(&n, true).ok()).map_or(super::exit::BAD_ARGS, ExitCodes::unknown)
}

/// The one status line for a checklist, at most [`MAX_LINE_BYTES`] bytes: the root cause
/// (or the first warning) with its check id, or how many checks passed.
pub fn status_line(report: &Report, style: ExitCodes) -> String {
    let worst = report.worst();
    let problems = |v: Verdict| report.checks.iter().filter(|c| c.verdict == v && c.blocked_by.is_none()).count();
    let text = match worst {
        Verdict::Fail => {
            let first = report.root().or_else(|| report.checks.iter().find(|c| c.verdict == Verdict::Fail));
            let more = problems(Verdict::Fail).saturating_sub(1);
            first.map_or_else(String::new, |c| with_more(&c.id, &c.finding.here(), more))
        }
        Verdict::Warn => {
            let first = report.checks.iter().find(|c| c.verdict == Verdict::Warn && c.blocked_by.is_none());
            let more = problems(Verdict::Warn).saturating_sub(1);
            first.map_or_else(String::new, |c| with_more(&c.id, &c.finding.here(), more))
        }
        _ => {
            let run = report.checks.iter().filter(|c| c.verdict != Verdict::Skipped).count();
            crate::tr!("{n} checks, no problem found", n = run)
        }
    };
    fit(&format!("{}{text}", style.prefix(Some(worst))))
}

/// The status line when the checks could not run.
pub fn unknown_line(style: ExitCodes, why: &str) -> String {
    fit(&format!("{}{why}", style.prefix(None)))
}

fn with_more(id: &str, finding: &str, more: usize) -> String {
    if more == 0 {
        format!("{id}: {finding}")
    } else {
        crate::tr!("{id}: {finding} (+{n} more)", id = id, finding = finding, n = more)
    }
}

/// One line (control characters become spaces), cut to [`MAX_LINE_BYTES`] bytes on a character
/// boundary, ending in "…" when cut.
fn fit(s: &str) -> String {
    let clean: String = s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    if clean.len() <= MAX_LINE_BYTES {
        return clean;
    }
    let mut end = MAX_LINE_BYTES - '…'.len_utf8();
    while !clean.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &clean[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::{Check, Layer};

    fn check(id: &str, v: Verdict, finding: &str) -> Check {
        let mut c = Check::new(id, Layer::Driver, "t");
        c.verdict = v;
        c.finding = finding.into();
        c
    }

    fn report(checks: Vec<Check>) -> Report {
        let root = checks.iter().find(|c| c.verdict == Verdict::Fail).map(|c| c.id.clone());
        Report { checks, root_cause: root, from_capture: false, refused: Vec::new(), imported: None, origin: None }
    }

    #[test]
    fn each_convention_maps_verdicts_to_its_codes_and_one_short_line() {
        let long = "GPU 0 fell off the bus: the driver lost contact with it and every call fails; reseat it and check the power cables\nsecond line";
        let fail = report(vec![
            check("HW-01", Verdict::Pass, "ok"),
            check("RT-LOST", Verdict::Fail, long),
            check("CUDA-INIT", Verdict::Fail, "x"),
            check("RT-05", Verdict::Warn, "w"),
        ]);
        let warn =
            report(vec![check("HW-01", Verdict::Pass, "ok"), check("RT-05", Verdict::Warn, "GPU 0 is throttled")]);
        let ok = report(vec![check("HW-01", Verdict::Pass, "ok"), check("WSL-01", Verdict::Skipped, "n/a")]);
        let codes = |s: ExitCodes| (s.code(fail.worst()), s.code(warn.worst()), s.code(ok.worst()), s.unknown());
        assert_eq!(codes(ExitCodes::Default), (7, 6, 0, 1));
        assert_eq!(codes(ExitCodes::Nagios), (2, 1, 0, 3));
        assert_eq!(codes(ExitCodes::Npd), (1, 0, 0, 2));
        assert_eq!(codes(ExitCodes::Slurm), (1, 0, 0, 2));

        let line = status_line(&fail, ExitCodes::Slurm);
        assert!(line.starts_with("FAIL: RT-LOST: GPU 0 fell off the bus"), "{line}");
        assert_eq!(line.len(), MAX_LINE_BYTES, "{line}");
        assert!(line.ends_with('…') && !line.contains('\n'), "{line}");
        assert_eq!(status_line(&warn, ExitCodes::Npd), "WARN: RT-05: GPU 0 is throttled");
        assert_eq!(status_line(&warn, ExitCodes::Nagios), "GPU-DOCTOR WARNING: RT-05: GPU 0 is throttled");
        assert_eq!(status_line(&ok, ExitCodes::Slurm), "OK: 1 checks, no problem found");
        assert!(status_line(&fail, ExitCodes::Nagios).starts_with("GPU-DOCTOR CRITICAL: RT-LOST"));
        assert_eq!(unknown_line(ExitCodes::Nagios, "capture unreadable"), "GPU-DOCTOR UNKNOWN: capture unreadable");
        // Bytes, cut on a character boundary: a Chinese finding stays valid UTF-8.
        let zh = report(vec![check("RT-LOST", Verdict::Fail, &"显存".repeat(60))]);
        let line = status_line(&zh, ExitCodes::Npd);
        assert!(line.len() <= MAX_LINE_BYTES && line.len() > MAX_LINE_BYTES - 4 && line.ends_with('…'), "{line}");
    }
}
