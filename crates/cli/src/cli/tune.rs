//! `tune -- COMMAND {batch} ...` ([`crate::jobs::tune`]): the search, trial by trial, with one
//! line per trial on stderr, the journal written as it goes, and the table and the recommendation
//! at the end; `tune --resume JOURNAL` goes on where a journal stopped. `compare A.json B.json`
//! ([`crate::jobs::compare`]) shows two measured runs side by side.

use crate::i18n::Here as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Args;

use super::{CliError, SourceArgs, exit};
use crate::jobs::tune::journal::{End, GpuLine, Journal, Limits, Line, Start, VERSION, Writer};
use crate::jobs::tune::request::{self, Request};
use crate::jobs::tune::search::{self, Next};
use crate::jobs::tune::spec::{Range, TuneSpec};
use crate::jobs::tune::trial::Runner;
use crate::jobs::tune::{Stop, Trial, render};
use crate::telemetry::sampler::Sampler;

/// Arguments of `tune`.
#[derive(Debug, Clone, Args)]
pub struct TuneArgs {
    /// A placeholder's range, NAME=LO..HI (repeatable); {batch} defaults to 1..1024 and {workers}
    /// to 0..the CPU count.
    #[arg(long = "param", value_name = "NAME=LO..HI")]
    pub params: Vec<String>,
    /// How many copies of the command to run at once, LO..HI (tuned after the batch).
    #[arg(long, value_name = "LO..HI", value_parser = super::options::shown(Range::parse))]
    pub concurrency: Option<Range>,
    /// Throughput as items per second: the items one copy processes, a number or a product such
    /// as {batch}*50.
    #[arg(long, value_name = "EXPR", conflicts_with = "rate_pattern")]
    pub items: Option<String>,
    /// Throughput as the last number this regular expression's first group matches in each copy's
    /// output, summed over copies, e.g. '([0-9.]+) it/s'. Default: runs per hour.
    #[arg(long, value_name = "REGEX")]
    pub rate_pattern: Option<String>,
    /// Keep at least this share of the GPU's memory free, % (the guide: 20-30; default 20).
    #[arg(long, value_name = "PCT", value_parser = parse_headroom)]
    pub headroom: Option<f64>,
    /// Never use more GPU memory than this on purpose, GiB; a trial that goes over is stopped.
    #[arg(long, value_name = "GIB", value_parser = super::parse_gib)]
    pub vram_cap: Option<f64>,
    /// Stop a trial that runs longer than this, seconds (default 600).
    #[arg(long, value_name = "SECS", value_parser = parse_timeout)]
    pub trial_timeout: Option<f64>,
    /// A step must raise throughput by at least this much to count, % (default 5).
    #[arg(long, value_name = "PCT", value_parser = parse_margin)]
    pub margin: Option<f64>,
    /// At most this many trials (default 30).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=500))]
    pub max_trials: Option<u32>,
    /// Write the journal (JSON lines) to this new file; default tune-DATE-TIME.jsonl here. Each
    /// trial's output goes to a folder of the same name without .jsonl.
    #[arg(long, value_name = "FILE", conflicts_with = "resume")]
    pub journal: Option<PathBuf>,
    /// The tune's specification as JSON (what the app's Tune tab writes), instead of the command
    /// and its options.
    #[arg(long, value_name = "FILE", hide = true, conflicts_with_all = ["resume", "params", "concurrency", "items", "rate_pattern", "vram_cap", "command"])]
    pub spec: Option<PathBuf>,
    /// Go on with the tune this journal recorded (same command and settings), appending to it;
    /// --max-trials, --margin, --headroom and --trial-timeout given with it replace the journal's.
    #[arg(long, value_name = "JOURNAL", conflicts_with_all = ["params", "concurrency", "items", "rate_pattern", "vram_cap"])]
    pub resume: Option<PathBuf>,
    /// `--interval` (one definition for every command: [`super::options`]).
    #[command(flatten)]
    pub interval: super::options::IntervalArg<super::options::Run>,
    /// `--json` (one definition for every command: [`super::options::JsonArg`]).
    #[command(flatten)]
    pub json: super::options::JsonArg<super::options::Summary>,
    /// Data source options.
    #[command(flatten)]
    pub source: SourceArgs,
    /// The command template, after `--`, with {batch}, {workers} or --param placeholders; {out}
    /// is the trial's own output folder and {copy} the copy's number.
    #[arg(last = true, value_name = "COMMAND", required_unless_present_any = ["resume", "spec"])]
    pub command: Vec<std::ffi::OsString>,
}

fn parse_headroom(s: &str) -> Result<f64, String> {
    super::parse_bounded(s, 0.0, 90.0, "%")
}

fn parse_timeout(s: &str) -> Result<f64, String> {
    super::parse_bounded(s, 1.0, 604_800.0, "s")
}

fn parse_margin(s: &str) -> Result<f64, String> {
    super::parse_bounded(s, 0.0, 100.0, "%")
}

/// Set by the first Ctrl-C (SIGINT, SIGTERM, SIGHUP): the trial running is stopped and recorded,
/// and the tune ends with the answer so far.
static STOP: AtomicBool = AtomicBool::new(false);

/// Set by a second one (two Ctrl-C, or `timeout`, which signals the tuner and then its process
/// group): the trial's processes get SIGKILL at once, and the trial and end lines are still
/// written; the process ends by itself within [`FORCED_EXIT`] whatever holds it.
static FORCE: AtomicBool = AtomicBool::new(false);

/// How long the tuner has, after a second signal, to end its trial and write its journal.
const FORCED_EXIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Takes SIGINT, SIGTERM and SIGHUP on a thread of their own (as the capture's scratch
/// directories do): the first sets [`STOP`], a second [`FORCE`], and the process ends
/// [`FORCED_EXIT`] later if it has not by then. Call before any other thread starts. Not on
/// Windows, where a console's Ctrl+C ends the process and the journal keeps every trial written
/// so far.
pub fn stop_on_signals() {
    crate::signals::take_stop_signals(|sig| {
        if STOP.swap(true, Ordering::SeqCst) && !FORCE.swap(true, Ordering::SeqCst) {
            let _ = std::thread::Builder::new().name("gd-forced-exit".into()).spawn(move || {
                std::thread::sleep(FORCED_EXIT);
                crate::signals::exit_for(sig)
            });
        }
    });
}

fn now() -> String {
    chrono::Local::now().format("%Y-%m-%d %H:%M:%S").to_string()
}

/// The spec from the arguments: the command and its options as a [`Request`], or the spec file
/// the Tune tab wrote (`--spec`); checked the same way either way.
fn spec_of(a: &TuneArgs, cpus: u32) -> Result<TuneSpec, CliError> {
    let bad = |e: &dyn std::fmt::Display| CliError::new(exit::BAD_ARGS, e);
    if let Some(path) = &a.spec {
        let text =
            crate::safe_fs::read_regular(path, SPEC_CAP).map_err(|e| bad(&format!("{}: {e}", path.display())))?;
        let s: TuneSpec = serde_json::from_slice(&text).map_err(|e| bad(&format!("{}: {e}", path.display())))?;
        request::check(&s).map_err(|e| bad(&e.here()))?;
        return Ok(s);
    }
    let command: Vec<String> = a
        .command
        .iter()
        .map(|c| c.to_str().map(String::from))
        .collect::<Option<_>>()
        .ok_or_else(|| bad(&crate::tr!("the command must be valid UTF-8 text to be kept in the journal")))?;
    let r = Request {
        command,
        params: a.params.clone(),
        concurrency: a.concurrency,
        items: a.items.clone(),
        rate_pattern: a.rate_pattern.clone(),
        headroom_pct: a.headroom.unwrap_or(Request::HEADROOM_PCT),
        vram_cap_gib: a.vram_cap,
        trial_timeout_secs: a.trial_timeout.unwrap_or(Request::TRIAL_TIMEOUT_SECS),
        margin_pct: a.margin.unwrap_or(Request::MARGIN_PCT),
        max_trials: a.max_trials.unwrap_or(Request::MAX_TRIALS),
    };
    r.spec(u64::from(cpus)).map_err(|e| bad(&e.here()))
}

/// The largest spec file read (a spec is a few hundred bytes).
const SPEC_CAP: u64 = 1 << 20;

/// The trials' folder beside a journal: its name without `.jsonl` (a journal named without an
/// extension gets `NAME.trials`, never its own name).
pub fn trials_dir(journal: &Path) -> PathBuf {
    let stem = journal.file_stem().map(|s| s.to_os_string()).unwrap_or_else(|| "tune".into());
    if journal.file_name() == Some(stem.as_os_str()) {
        let mut name = stem;
        name.push(".trials");
        return journal.with_file_name(name);
    }
    journal.with_file_name(stem)
}

/// Runs `tune`.
pub fn run(a: &TuneArgs) -> Result<ExitCode, CliError> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| u32::try_from(n.get()).unwrap_or(1));
    let (gpu, host) = a.source.options().open();
    let sampler = Sampler::start(gpu, host, a.interval.get().duration())
        .map_err(|e| CliError::runtime(crate::tr!("could not start sampling: {error}", error = e)))?;
    // The GPUs' memory is known before the first trial: NVML opened and sampled once (up to the
    // limit `info` uses; a driver that never answers leaves the tune without memory figures).
    super::info::wait_until_opened(&sampler, true);
    let (journal_path, mut writer, start, mut trials, ended_before, limits) = match &a.resume {
        Some(path) => {
            // Held first, then read: a second --resume of the same journal is refused before it
            // reads what the first is about to extend.
            let w = Writer::append(path).map_err(|e| {
                if e.kind() == std::io::ErrorKind::ResourceBusy {
                    CliError::new(
                        exit::BAD_ARGS,
                        crate::tr!(
                            "another gpu-doctor tune is going on with {path}; wait for it to end",
                            path = path.display()
                        ),
                    )
                } else {
                    CliError::runtime(crate::tr!("could not write {path}: {error}", path = path.display(), error = e))
                }
            })?;
            let j = Journal::read(path).map_err(|e| CliError::runtime(format!("{}: {}", path.display(), e.here())))?;
            // Every value read back is held to the command line's bounds (a journal is a file
            // anyone can edit).
            crate::jobs::tune::request::check(&j.start.spec)
                .map_err(|e| CliError::new(exit::BAD_ARGS, format!("{}: {}", path.display(), e.here())))?;
            super::errln(&format!(
                "gpu-doctor: {}",
                crate::tr!("going on with {path}: {n} trials so far", path = path.display(), n = j.trials.len())
            ));
            let mut start = j.start;
            let limits = new_limits(a, &mut start.spec)
                .map_err(|e| CliError::new(exit::BAD_ARGS, format!("{}: {}", path.display(), e.here())))?;
            (path.clone(), w, start, j.trials, j.end, limits)
        }
        None => {
            let spec = spec_of(a, cpus)?;
            let path = a.journal.clone().unwrap_or_else(|| {
                PathBuf::from(format!("tune-{}.jsonl", chrono::Local::now().format("%Y%m%d-%H%M%S")))
            });
            super::run::check_new_file(&path)?;
            // Kept absolute, so a --resume from another folder writes beside the journal still.
            let dir = std::path::absolute(trials_dir(&path)).unwrap_or_else(|_| trials_dir(&path));
            if std::fs::symlink_metadata(&dir).is_ok() {
                return Err(CliError::new(
                    exit::BAD_ARGS,
                    crate::tr!(
                        "{path} already exists; gpu-doctor never overwrites a file: choose a new name",
                        path = dir.display()
                    ),
                ));
            }
            let w = Writer::create(&path).map_err(|e| {
                CliError::runtime(crate::tr!("could not write {path}: {error}", path = path.display(), error = e))
            })?;
            let snap = sampler.snapshot();
            let start = Start {
                version: VERSION,
                started: now(),
                spec,
                gpus: snap
                    .inventory
                    .gpus
                    .iter()
                    .map(|g| GpuLine { index: g.index, name: g.name.clone(), total: g.vram_total_bytes.get() })
                    .collect(),
                demo: snap.is_demo(),
                cpus,
                trials_dir: dir.to_string_lossy().into_owned(),
            };
            (path, w, start, Vec::new(), None, None)
        }
    };
    let spec = start.spec.clone();
    let pattern = request::pattern(&spec.unit).map_err(|e| CliError::new(exit::BAD_ARGS, e.here()))?;
    let write = |w: &mut Writer, line: &Line| {
        w.write(line).map_err(|e| {
            CliError::runtime(crate::tr!("could not write {path}: {error}", path = journal_path.display(), error = e))
        })
    };
    if a.resume.is_none() {
        write(&mut writer, &Line::Start(Box::new(start.clone())))?;
    }
    if let Some(l) = limits {
        write(&mut writer, &Line::Limits(Box::new(l)))?;
    }
    let dir = PathBuf::from(&start.trials_dir);
    std::fs::create_dir_all(&dir).map_err(|e| {
        CliError::runtime(crate::tr!("could not write {path}: {error}", path = dir.display(), error = e))
    })?;
    super::errln(&format!("gpu-doctor: {}", crate::tr!("journal: {path}", path = journal_path.display())));
    let total = start.gpus.iter().filter_map(|g| g.total).max();
    super::errln(&format!("gpu-doctor: {}", render::policy(&spec, total).here()));
    if start.demo {
        super::errln(&format!(
            "gpu-doctor: {}",
            crate::tr!("(GPU figures are DEMO data: simulated, not this machine)")
        ));
    }
    let runner = Runner {
        spec: &spec,
        sampler: &sampler,
        stop: &STOP,
        force: &FORCE,
        pattern,
        cpus,
        tick: a.interval.get().duration(),
    };
    // What a trial starts and leaves its parent becomes this process's child, to be ended with it.
    crate::jobs::tune::trial::become_subreaper();
    let mut interrupted = false;
    let outcome = loop {
        match search::next(&spec, &trials) {
            Next::Done(o) => break o,
            Next::Run { phase, setting } => {
                if STOP.load(Ordering::SeqCst) {
                    interrupted = true;
                    break search::outcome_so_far(&spec, &trials, Stop::Interrupted);
                }
                let id = trials.iter().map(|t| t.id).max().unwrap_or(0) + 1;
                if !trials.is_empty() {
                    // The memory of the trial before is given back before the next one is measured.
                    std::thread::sleep(std::time::Duration::from_millis(500));
                }
                let line = if trials.iter().any(|t| t.setting == setting) {
                    // A second run: the gain that decides lies within the margin.
                    crate::tr!(
                        "trial {id} ({phase}): {setting} again, to decide a gain within the margin on two runs ...",
                        id = id,
                        phase = render::phase_label(&phase).here(),
                        setting = setting.describe().here()
                    )
                } else {
                    crate::tr!(
                        "trial {id} ({phase}): {setting} ...",
                        id = id,
                        phase = render::phase_label(&phase).here(),
                        setting = setting.describe().here()
                    )
                };
                super::errln(&format!("gpu-doctor: {line}"));
                // Named by trial, input and time: no trial ever writes over another's results.
                let when = chrono::Local::now().format("%H%M%S");
                let trial_dir = dir.join(format!("t{id:03}-{}-{when}", setting.slug()));
                let t = runner.run(id, &phase, &setting, &trial_dir);
                write(&mut writer, &Line::Trial(Box::new(t.clone())))?;
                super::errln(&format!("gpu-doctor: {}", trial_line(&spec, &t)));
                let stop = t.end == crate::jobs::tune::TrialEnd::Interrupted;
                trials.push(t);
                if stop {
                    interrupted = true;
                    break search::outcome_so_far(&spec, &trials, Stop::Interrupted);
                }
            }
        }
    };
    let end = End { outcome: outcome.clone(), finished: now(), interrupted };
    // A finished journal resumed with nothing left to run keeps its one end line: the answer is
    // shown again, not written twice.
    let unchanged = ended_before.as_ref().is_some_and(|e| e.outcome == end.outcome && e.interrupted == end.interrupted);
    if !unchanged {
        write(&mut writer, &Line::End(Box::new(end.clone())))?;
    }
    let answer = render::answer(&spec, &trials, &outcome);
    if a.json.on() {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            journal: String,
            trials: &'a [Trial],
            end: &'a End,
            command: Option<String>,
        }
        let out = Out {
            journal: journal_path.display().to_string(),
            trials: &trials,
            end: &end,
            command: answer.command.clone(),
        };
        super::outln(&super::to_json(&out)?)?;
    } else {
        let lang = crate::i18n::current();
        super::out(&crate::present::jobs::tune_table(&spec, &trials, &outcome, lang))?;
        super::outln("")?;
        super::outln(&answer.headline.render(lang))?;
        for p in &answer.phases {
            super::outln(&format!("  {}", p.render(lang)))?;
        }
        if let Some(c) = &answer.command {
            super::outln(&crate::tr!("Command: {command}", command = c))?;
        }
        let (own, total) = render::own_cost(&trials);
        if total >= 1.0 {
            super::outln(&crate::tr!(
                "gpu-doctor's own CPU: {own} s over {total} s of trials ({pct} %)",
                own = format!("{own:.2}"),
                total = format!("{total:.1}"),
                pct = format!("{:.2}", 100.0 * own / total)
            ))?;
        }
        super::outln(&crate::tr!(
            "Journal: {journal} (each trial's output in {dir})",
            journal = journal_path.display(),
            dir = dir.display()
        ))?;
        if interrupted {
            super::outln(&crate::tr!(
                "Interrupted: continue with gpu-doctor-cli tune --resume {journal}",
                journal = journal_path.display()
            ))?;
        }
    }
    Ok(ExitCode::from(if interrupted {
        130
    } else if outcome.best.is_some() {
        exit::OK
    } else {
        exit::ERROR
    }))
}

/// The limits given with `--resume` put into the journal's `spec`, held to the command line's
/// bounds; the journal line to write when any changed (said on stderr, old and new).
fn new_limits(a: &TuneArgs, spec: &mut TuneSpec) -> Result<Option<Limits>, crate::jobs::tune::spec::SpecError> {
    let before = spec.clone();
    if let Some(v) = a.headroom {
        spec.headroom_pct = v;
    }
    if let Some(v) = a.trial_timeout {
        spec.trial_timeout_secs = v;
    }
    if let Some(v) = a.margin {
        spec.margin_pct = v;
    }
    if let Some(v) = a.max_trials {
        spec.max_trials = v;
    }
    request::check(spec)?;
    let changes: Vec<String> = [
        ("--max-trials", f64::from(before.max_trials), f64::from(spec.max_trials)),
        ("--margin", before.margin_pct, spec.margin_pct),
        ("--headroom", before.headroom_pct, spec.headroom_pct),
        ("--trial-timeout", before.trial_timeout_secs, spec.trial_timeout_secs),
    ]
    .iter()
    .filter(|(_, a, b)| a != b)
    .map(|(name, a, b)| format!("{name} {a} → {b}"))
    .collect();
    if changes.is_empty() {
        return Ok(None);
    }
    super::errln(&format!(
        "gpu-doctor: {}",
        crate::tr!("from now on this journal's limits are: {changes}", changes = changes.join(", "))
    ));
    Ok(Some(Limits::of(spec, now())))
}

/// One trial's line on stderr.
fn trial_line(spec: &TuneSpec, t: &Trial) -> String {
    let rate = t.throughput.map_or_else(|| "-".into(), render::rate);
    let peak = t.device_peak.map_or_else(|| "-".into(), crate::units::bytes);
    crate::tr!(
        "trial {id}: {result} in {secs} s; {rate} {unit}; peak VRAM {peak}; {verdict}",
        id = t.id,
        result = t.end.word().here(),
        secs = format!("{:.1}", t.secs),
        rate = rate,
        unit = spec.unit.label().here(),
        peak = peak,
        verdict = t.verdict.here()
    )
}

/// Arguments of `compare`.
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// The first run's summary (run --json-out A.json).
    #[arg(value_name = "A.json")]
    pub a: PathBuf,
    /// The second run's summary.
    #[arg(value_name = "B.json")]
    pub b: PathBuf,
    /// `--json` (one definition for every command: [`super::options::JsonArg`]).
    #[command(flatten)]
    pub json: super::options::JsonArg<super::options::Document>,
}

/// Runs `compare`.
pub fn run_compare(a: &CompareArgs) -> Result<ExitCode, CliError> {
    let read = |p: &Path| -> Result<crate::jobs::run::RunSummary, CliError> {
        let text = crate::safe_fs::read_text(p, crate::safe_fs::CONFIG_JSON_CAP).map_err(CliError::runtime)?;
        serde_json::from_str(&text).map_err(|e| {
            CliError::runtime(crate::tr!(
                "{path} is not a run summary (write one with gpu-doctor-cli run --json-out FILE -- COMMAND): {error}",
                path = p.display(),
                error = e
            ))
        })
    };
    let (ra, rb) = (read(&a.a)?, read(&a.b)?);
    let c = crate::jobs::compare::compare(&ra, &rb);
    if a.json.on() {
        super::outln(&super::to_json(&c)?)?;
    } else {
        let name =
            |p: &Path| p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned());
        super::out(&crate::present::jobs::comparison(&c, &name(&a.a), &name(&a.b), crate::i18n::current()))?;
    }
    Ok(ExitCode::from(exit::OK))
}
