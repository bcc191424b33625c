//! The scaling test: run a command once per size, fit time = fixed + per-unit × size,
//! and say whether the work scales (near-linear: compute and data balanced) or a fixed overhead
//! dominates (model loading, initialisation, file scanning).

use std::ffi::OsString;
use std::time::Instant;

use serde::Serialize;

use crate::i18n::Message;
use crate::msg;

/// The sizes to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Sizes(pub Vec<(String, f64)>);

/// The sizes of `--sizes` (a front end shows the error in its language).
pub fn parse_sizes(s: &str) -> Result<Sizes, crate::i18n::Message> {
    // The user's text goes into the command unchanged (9007199254740993 stays itself); the
    // number is only for the fit.
    let v: Result<Vec<(String, f64)>, _> =
        s.split(',').map(|x| x.trim().parse::<f64>().map(|n| (x.trim().to_string(), n))).collect();
    let v = v.map_err(|_| msg!("'{text}' is not a list of numbers like 1,2,4", text = s))?;
    let mut distinct: Vec<f64> = v.iter().map(|(_, n)| *n).collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    if distinct.len() < 2 || v.iter().any(|(_, x)| !x.is_finite() || *x <= 0.0) {
        return Err(msg!("give at least two different positive sizes, e.g. 1,2,4"));
    }
    Ok(Sizes(v))
}

/// The fit and its reading.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scaling {
    /// (size, seconds) per run.
    pub runs: Vec<(f64, f64)>,
    /// Fixed part, seconds (the fit's intercept, not below 0).
    pub fixed_secs: f64,
    /// Seconds per unit of size.
    pub per_unit_secs: f64,
    /// How well a straight line fits (R²).
    pub r2: f64,
    /// "near-linear", "fixed-overhead", "mixed", or "too-few-sizes" (fewer than three different
    /// sizes: any two points fit a line, so the shape is unknown).
    pub kind: String,
    /// The sentence for the user.
    pub summary: Message,
}

/// Fits time against size and reads it.
pub fn analyse(runs: &[(f64, f64)]) -> Scaling {
    let n = runs.len() as f64;
    let (mx, my) = (runs.iter().map(|r| r.0).sum::<f64>() / n, runs.iter().map(|r| r.1).sum::<f64>() / n);
    let sxx: f64 = runs.iter().map(|r| (r.0 - mx).powi(2)).sum();
    let sxy: f64 = runs.iter().map(|r| (r.0 - mx) * (r.1 - my)).sum();
    let slope = if sxx > 0.0 { (sxy / sxx).max(0.0) } else { 0.0 };
    let intercept = (my - slope * mx).max(0.0);
    let ss_tot: f64 = runs.iter().map(|r| (r.1 - my).powi(2)).sum();
    let ss_res: f64 = runs.iter().map(|r| (r.1 - (intercept + slope * r.0)).powi(2)).sum();
    let r2 = if ss_tot > 0.0 { 1.0 - ss_res / ss_tot } else { 1.0 };
    let (small, big) = (
        runs.iter().min_by(|a, b| a.0.total_cmp(&b.0)).map_or(0.0, |r| r.1),
        runs.iter().max_by(|a, b| a.0.total_cmp(&b.0)).map_or(0.0, |r| r.1),
    );
    let mut sizes: Vec<f64> = runs.iter().map(|r| r.0).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    let (kind, summary) = if sizes.len() < 3 {
        // A straight line passes through any two points: their fit says nothing about the shape.
        (
            "too-few-sizes",
            msg!(
                "two sizes cannot show the shape: the line through them is {fixed} s fixed plus {per_unit} s per unit, but any two points fit a line exactly. Measure at least three sizes to tell (e.g. --sizes 1,2,4).",
                fixed = format!("{intercept:.1}"),
                per_unit = format!("{slope:.2}")
            ),
        )
    } else if small > 0.0 && intercept / small >= 0.5 {
        (
            "fixed-overhead",
            msg!(
                "fixed overhead dominates ({fixed} s of {smallest} s at the smallest size): model loading, initialisation or file scanning, not the work itself. Keep the process alive between jobs (a server or a queue worker), cache what it loads, and give it bigger inputs per call.",
                fixed = format!("{intercept:.2}"),
                smallest = format!("{small:.2}")
            ),
        )
    } else if big > 0.0 && intercept / big <= 0.2 && r2 >= 0.9 {
        (
            "near-linear",
            msg!(
                "near-linear: balanced ({per_unit} s per unit, {fixed} s fixed). Time grows with the input, so compute and data keep pace; tune throughput with the batch size, then concurrency.",
                per_unit = format!("{slope:.2}"),
                fixed = format!("{intercept:.1}")
            ),
        )
    } else {
        (
            "mixed",
            msg!(
                "mixed: {fixed} s fixed plus {per_unit} s per unit (fit R² {r2}). Both the start-up and the work matter; measure more sizes to separate them.",
                fixed = format!("{intercept:.1}"),
                per_unit = format!("{slope:.2}"),
                r2 = format!("{r2:.2}")
            ),
        )
    };
    Scaling { runs: runs.to_vec(), fixed_secs: intercept, per_unit_secs: slope, r2, kind: kind.to_string(), summary }
}

/// Why a scaling test stopped before the fit ([`ScaleError::message`]; its `Display` is English).
#[derive(Debug, thiserror::Error)]
pub enum ScaleError {
    /// No command was given.
    NoCommand,
    /// No argument holds `{size}`.
    NoPlaceholder,
    /// One run exited unsuccessfully.
    RunFailed {
        /// The size as substituted.
        size: String,
        /// How it ended.
        status: std::process::ExitStatus,
        /// Seconds it ran.
        secs: f64,
    },
    /// The command could not be started.
    NotStarted {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
}

impl crate::i18n::ToMessage for ScaleError {
    fn to_message(&self) -> crate::i18n::Message {
        self.message()
    }
}

/// In English (logs); a front end shows [`crate::i18n::ToMessage::to_message`] in its language.
impl std::fmt::Display for ScaleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message().en())
    }
}

impl ScaleError {
    /// What went wrong, as a message.
    pub fn message(&self) -> crate::i18n::Message {
        match self {
            ScaleError::NoCommand => msg!("no command given"),
            // `{size}` is written as it is: the placeholder the user puts in the command.
            ScaleError::NoPlaceholder => msg!(
                "the command has no {size} to replace; e.g. gpu-doctor-cli scale --sizes 1,2,4 -- python infer.py --n {size}",
                size = "{size}"
            ),
            ScaleError::RunFailed { size, status, secs } => msg!(
                "size {size} failed ({status}) after {secs} s; the scaling test needs every run to succeed",
                size = size,
                status = status,
                secs = format!("{secs:.1}")
            ),
            ScaleError::NotStarted { program, source } => {
                msg!("could not start {program}: {error}", program = program, error = source)
            }
        }
    }
}

/// Runs `command` once per size with `{size}` replaced in every argument, timing each run;
/// `on_start` is told each size and the command line before it starts. Then fits the times.
pub fn measure_sizes(
    command: &[OsString],
    sizes: &Sizes,
    mut on_start: impl FnMut(&str, &str),
) -> Result<Scaling, ScaleError> {
    let Some((prog, args)) = command.split_first() else {
        return Err(ScaleError::NoCommand);
    };
    if !command.iter().any(|c| c.to_string_lossy().contains("{size}")) {
        return Err(ScaleError::NoPlaceholder);
    }
    let mut runs = Vec::new();
    for (text, size) in &sizes.0 {
        let (text, size) = (text.clone(), *size);
        let sub = |s: &OsString| OsString::from(s.to_string_lossy().replace("{size}", &text));
        let line = std::iter::once(prog)
            .chain(args)
            .map(|s| sub(s).to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ");
        on_start(&text, &line);
        let t0 = Instant::now();
        let status = std::process::Command::new(sub(prog)).args(args.iter().map(sub)).status();
        let secs = t0.elapsed().as_secs_f64();
        match status {
            Ok(s) if s.success() => runs.push((size, secs)),
            Ok(status) => return Err(ScaleError::RunFailed { size: text, status, secs }),
            Err(source) => {
                return Err(ScaleError::NotStarted { program: prog.to_string_lossy().into_owned(), source });
            }
        }
    }
    Ok(analyse(&runs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_reach_the_command_as_the_user_wrote_them() {
        let sizes = parse_sizes("9007199254740993, 2.50,4").unwrap_or_else(|e| panic!("{}", e.en()));
        let texts: Vec<&str> = sizes.0.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(texts, ["9007199254740993", "2.50", "4"]);
        let mut seen = Vec::new();
        let cmd: Vec<std::ffi::OsString> = ["true", "{size}"].iter().map(std::ffi::OsString::from).collect();
        let _ = measure_sizes(&cmd, &sizes, |size, _| seen.push(size.to_string()));
        assert_eq!(seen, ["9007199254740993", "2.50", "4"]);
        assert!(parse_sizes("2,2.0").is_err() && parse_sizes("1,NaN").is_err() && parse_sizes("1,-2").is_err());
    }

    #[test]
    fn reads_the_shape_of_the_curve() {
        assert_eq!(analyse(&[(1.0, 1.0), (2.0, 2.0), (4.0, 4.1)]).kind, "near-linear");
        let f = analyse(&[(1.0, 10.2), (2.0, 10.4), (4.0, 10.8)]);
        assert_eq!(f.kind, "fixed-overhead");
        assert!(f.summary.en().starts_with("fixed overhead dominates (10.00 s of 10.20 s"), "{}", f.summary.en());
        assert_eq!(analyse(&[(1.0, 1.0), (2.0, 2.0), (4.0, 6.0)]).kind, "mixed");
        // Two sizes fit a line exactly, whatever the shape: no claim, a fit and a request for more.
        for two in
            [&[(1.0, 1.0), (2.0, 2.0)][..], &[(1.0, 1.75), (2.0, 2.75), (2.0, 2.75)], &[(1.0, 10.2), (2.0, 10.4)]]
        {
            let f = analyse(two);
            assert_eq!(f.kind, "too-few-sizes", "{two:?}");
            assert!(
                f.summary.en().contains("measure at least three sizes")
                    || f.summary.en().contains("Measure at least three sizes")
            );
            assert!(!f.summary.en().contains("near-linear"), "{}", f.summary.en());
        }
        assert!(analyse(&[(1.0, 1.75), (2.0, 2.75)]).summary.en().contains("0.8 s fixed plus 1.00 s per unit"));
        assert!(parse_sizes("1,2,4").is_ok());
        assert!(
            parse_sizes("1").is_err()
                && parse_sizes("1,1").is_err()
                && parse_sizes("a,b").is_err()
                && parse_sizes("0,1").is_err()
        );
    }
}
