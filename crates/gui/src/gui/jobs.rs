//! The "Measure a run" and "Focus on a process" dialogs. Both run this program's own CLI in a
//! child process (`run`, `focus`), so a job that hangs or floods its output never blocks the
//! window; the dialog shows the live output and then the summary.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use eframe::egui::{self, RichText};

use crate::jobs::focus::Focus;
use crate::jobs::run::RunSummary;
use crate::tr;

/// Lines of output kept.
const KEEP_LINES: usize = 400;

/// A child process whose stdout and stderr are collected.
pub(super) struct Job {
    pub(super) child: Child,
    output: Arc<Mutex<Vec<String>>>,
}

impl Job {
    pub(super) fn start(program: &PathBuf, args: &[std::ffi::OsString]) -> std::io::Result<Job> {
        let mut command = Command::new(program);
        // A job ends with the window: killed or crashed, the window takes no job with it that
        // would run on headless (a tune stops its trial and writes its journal's end).
        crate::telemetry::libprobe::stop_with_this_process(&mut command);
        let mut child =
            command.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
        let output = Arc::new(Mutex::new(Vec::new()));
        for stream in [
            child.stdout.take().map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
            child.stderr.take().map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
        ]
        .into_iter()
        .flatten()
        {
            let out = Arc::clone(&output);
            let _ = std::thread::Builder::new().name("gd-job-output".into()).spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    if let Ok(mut o) = out.lock() {
                        o.push(line);
                        let extra = o.len().saturating_sub(KEEP_LINES);
                        o.drain(..extra);
                    }
                }
            });
        }
        Ok(Job { child, output })
    }

    /// Some(exit code) once it ended.
    pub(super) fn poll(&mut self) -> Option<Option<i32>> {
        match self.child.try_wait() {
            Ok(Some(s)) => Some(s.code()),
            Ok(None) => None,
            Err(_) => Some(None),
        }
    }

    pub(super) fn text(&self) -> String {
        self.output.lock().map(|o| o.join("\n")).unwrap_or_default()
    }
}

/// A spinner while a job runs, and the error of the last one.
fn status(ui: &mut egui::Ui, running: bool, what: &str, error: Option<&str>) {
    if running {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(what);
        });
    }
    if let Some(e) = error {
        ui.colored_label(super::palette::tone(ui, super::palette::Tone::Fail), e);
    }
}

fn shell(command: &str) -> Vec<std::ffi::OsString> {
    if cfg!(windows) {
        vec!["cmd".into(), "/C".into(), command.into()]
    } else {
        vec!["sh".into(), "-c".into(), command.into()]
    }
}

/// "Measure a run": a command line, its live output, then the summary.
pub struct RunDialog {
    /// Shown.
    pub open: bool,
    /// The command line (run by the shell).
    pub command: String,
    program: PathBuf,
    nvml_lib: Option<PathBuf>,
    job: Option<Job>,
    summary_file: Option<PathBuf>,
    /// The last run's summary.
    pub summary: Option<RunSummary>,
    /// Output of the last run.
    pub output: String,
    /// Why the last run could not start.
    pub error: Option<String>,
}

impl RunDialog {
    /// A closed dialog that runs `program`'s `run` subcommand.
    pub fn new(program: PathBuf, nvml_lib: Option<PathBuf>) -> Self {
        RunDialog {
            open: false,
            command: String::new(),
            program,
            nvml_lib,
            job: None,
            summary_file: None,
            summary: None,
            output: String::new(),
            error: None,
        }
    }

    /// True while the command runs.
    pub fn running(&self) -> bool {
        self.job.is_some()
    }

    /// Starts the command.
    pub fn start(&mut self) {
        self.summary = None;
        self.error = None;
        self.output.clear();
        static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let file = std::env::temp_dir().join(format!("gpu-doctor-run-{}-{n}.json", std::process::id()));
        let _ = std::fs::remove_file(&file);
        let mut args: Vec<std::ffi::OsString> =
            vec!["run".into(), "--quiet".into(), "--json-out".into(), file.clone().into()];
        if let Some(l) = &self.nvml_lib {
            args.push("--nvml-lib".into());
            args.push(l.into());
        }
        args.push("--".into());
        args.extend(shell(&self.command));
        match Job::start(&self.program, &args) {
            Ok(j) => {
                self.job = Some(j);
                self.summary_file = Some(file);
            }
            Err(e) => self.error = Some(tr!("could not start: {error}", error = e)),
        }
    }

    /// Polls the job; true when it just ended.
    pub fn poll(&mut self) -> bool {
        let Some(job) = self.job.as_mut() else { return false };
        self.output = job.text();
        if job.poll().is_none() {
            return false;
        }
        // The output threads finish with the pipes; give them a moment.
        std::thread::sleep(std::time::Duration::from_millis(30));
        self.output = job.text();
        self.job = None;
        if let Some(f) = self.summary_file.take() {
            match crate::safe_fs::read_text(&f, crate::safe_fs::CONFIG_JSON_CAP)
                .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
            {
                Ok(s) => self.summary = Some(s),
                Err(e) => self.error = Some(tr!("no summary: {error}", error = e)),
            }
            let _ = std::fs::remove_file(&f);
        }
        true
    }

    /// Draws the dialog.
    pub fn ui(&mut self, ctx: &egui::Context) {
        if !self.open {
            return;
        }
        if self.poll() || self.running() {
            ctx.request_repaint_after(std::time::Duration::from_millis(200));
        }
        let mut open = self.open;
        let window = egui::Window::new(tr!("Measure a run")).id(egui::Id::unique("measure_a_run"));
        window.open(&mut open).default_size([760.0, 520.0]).show(ctx, |ui| {
            ui.label(tr!(
                "Runs a command, samples it and the GPUs until it exits, and says what limited it and how much VRAM to plan for."
            ));
            ui.horizontal(|ui| {
                let l = ui.label(tr!("Command"));
                ui.add_enabled(!self.running(), egui::TextEdit::singleline(&mut self.command).desired_width(480.0).hint_text("python train.py --epochs 1"))
                    .labelled_by(l.id);
                if self.running() {
                    if ui.button(tr!("Stop")).clicked()
                        && let Some(j) = self.job.as_mut()
                    {
                        let _ = j.child.kill();
                    }
                } else if ui.add_enabled(!self.command.trim().is_empty(), egui::Button::new(tr!("Run"))).clicked() {
                    self.start();
                }
            });
            status(ui, self.running(), tr!("running..."), self.error.as_deref());
            if let Some(s) = &self.summary {
                ui.label(RichText::new(crate::present::jobs::run_summary(s, crate::i18n::current()).trim()).monospace());
            }
            ui.label(RichText::new(tr!("Output")).strong());
            egui::ScrollArea::vertical().max_height(220.0).stick_to_bottom(true).show(ui, |ui| {
                ui.label(RichText::new(&self.output).monospace().small());
            });
        });
        self.open = open;
    }
}

/// "Focus on a process": watches a PID for a few seconds and shows the triage.
pub struct FocusDialog {
    /// Shown.
    pub open: bool,
    /// The process.
    pub pid: u32,
    /// Its log or output file, optional.
    pub log: String,
    program: PathBuf,
    nvml_lib: Option<PathBuf>,
    job: Option<Job>,
    /// The last result.
    pub result: Option<Focus>,
    /// Why it failed.
    pub error: Option<String>,
}

impl FocusDialog {
    /// A closed dialog that runs `program`'s `focus` subcommand.
    pub fn new(program: PathBuf, nvml_lib: Option<PathBuf>) -> Self {
        FocusDialog { open: false, pid: 0, log: String::new(), program, nvml_lib, job: None, result: None, error: None }
    }

    /// True while watching.
    pub fn running(&self) -> bool {
        self.job.is_some()
    }

    /// Opens the dialog on `pid` and starts watching it.
    pub fn focus_on(&mut self, pid: u32) {
        self.pid = pid;
        self.open = true;
        self.start();
    }

    /// Starts watching.
    pub fn start(&mut self) {
        self.result = None;
        self.error = None;
        let mut args: Vec<std::ffi::OsString> = vec![
            "focus".into(),
            "--json".into(),
            "--watch".into(),
            "5".into(),
            "--pid".into(),
            self.pid.to_string().into(),
        ];
        if !self.log.trim().is_empty() {
            args.push("--log".into());
            args.push(self.log.trim().into());
        }
        if let Some(l) = &self.nvml_lib {
            args.push("--nvml-lib".into());
            args.push(l.into());
        }
        match Job::start(&self.program, &args) {
            Ok(j) => self.job = Some(j),
            Err(e) => self.error = Some(tr!("could not start: {error}", error = e)),
        }
    }

    /// Polls; true when a result just arrived.
    pub fn poll(&mut self) -> bool {
        let Some(job) = self.job.as_mut() else { return false };
        if job.poll().is_none() {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(30));
        let text = job.text();
        self.job = None;
        match text.find('{').map(|i| serde_json::from_str::<Focus>(&text[i..])) {
            Some(Ok(f)) => self.result = Some(f),
            _ => self.error = Some(tr!("no result: {line}", line = text.lines().last().unwrap_or(""))),
        }
        true
    }

    /// Draws the dialog.
    pub fn ui(&mut self, ctx: &egui::Context) {
        if !self.open {
            return;
        }
        if self.poll() || self.running() {
            ctx.request_repaint_after(std::time::Duration::from_millis(200));
        }
        let mut open = self.open;
        let window = egui::Window::new(tr!("Focus on a process")).id(egui::Id::unique("focus_on_a_process"));
        window.open(&mut open).default_width(640.0).show(ctx, |ui| {
            ui.horizontal(|ui| {
                let l = ui.label("PID");
                ui.add(egui::DragValue::new(&mut self.pid).range(1..=u32::MAX)).labelled_by(l.id);
                let l = ui.label(tr!("log file (optional)"));
                ui.add(egui::TextEdit::singleline(&mut self.log).desired_width(220.0)).labelled_by(l.id);
                if ui.add_enabled(!self.running(), egui::Button::new(tr!("Watch 5 s"))).clicked() {
                    self.start();
                }
            });
            status(ui, self.running(), tr!("watching..."), self.error.as_deref());
            if let Some(f) = &self.result {
                ui.label(RichText::new(crate::present::jobs::focus(f, crate::i18n::current()).trim()).monospace());
            }
        });
        self.open = open;
    }
}
