//! The Tune tab: start a tune on a command (this program's own `tune` in a child process, so the
//! window never waits on a trial) or open a journal; the trials are read back from the journal
//! as it grows: throughput and peak VRAM per trial with the headroom line and the chosen trial
//! marked, the table, and the answer with a Copy button for the command it recommends.

use crate::i18n::Here as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use eframe::egui::{self, RichText};

use super::jobs::Job;
use super::palette::{self, Tone};
use crate::jobs::tune::journal::Journal;
use crate::jobs::tune::render;
use crate::jobs::tune::request::Request;
use crate::jobs::tune::spec::Range;
use crate::tr;

/// The shell a tune's command line runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shell {
    /// `sh -c` (Linux).
    Sh,
    /// `cmd /C` (Windows).
    Cmd,
}

/// The command as the shell should get it: `{out}` (a copy's own folder, often with a space in
/// it: "C:\Users\John Smith\…") and `{copy}` name the copy's environment variables
/// (`GPU_DOCTOR_TRIAL_DIR`, `GPU_DOCTOR_COPY`) in double quotes instead of being pasted into the
/// script, so a folder's name is never split into words or run (`$(…)`). A placeholder the user
/// already quoted is quoted once.
fn in_shell(command: &str, shell: Shell) -> String {
    let var = |name: &str| match shell {
        Shell::Sh => format!("\"${name}\""),
        Shell::Cmd => format!("\"%{name}%\""),
    };
    let mut out = command.to_string();
    for (placeholder, name) in [("{out}", "GPU_DOCTOR_TRIAL_DIR"), ("{copy}", "GPU_DOCTOR_COPY")] {
        for quoted in [format!("'{placeholder}'"), format!("\"{placeholder}\"")] {
            out = out.replace(&quoted, &var(name));
        }
        out = out.replace(placeholder, &var(name));
    }
    out
}

/// The Tune tab's state.
pub struct TuneState {
    program: PathBuf,
    nvml_lib: Option<PathBuf>,
    /// The command line (run by the shell), with {batch}, {workers} or named placeholders.
    pub command: String,
    /// Ranges, `name=LO..HI` separated by spaces.
    pub ranges: String,
    /// Copies at once, `LO..HI` (empty: one).
    pub copies: String,
    /// The rate pattern (empty: runs per hour).
    pub pattern: String,
    /// Free GPU memory to keep, %.
    pub headroom: f64,
    /// A trial's time limit, seconds.
    pub timeout_secs: f64,
    job: Option<Job>,
    /// The journal shown (being written, or opened).
    pub journal_path: Option<PathBuf>,
    /// It, read.
    pub journal: Option<Journal>,
    /// What the results show, made when the journal is read.
    view: Option<super::tune_view::TuneView>,
    /// The newest journal in [`Self::journal_dir`] when the window started: the last tune, offered
    /// until another is shown.
    pub last_tune: Option<PathBuf>,
    last_read: Option<Instant>,
    /// Why the journal could not be read, or the tune not started.
    pub error: Option<String>,
    open_dialog: Option<super::share::Chooser>,
    /// "Copied" after a Copy.
    copied: bool,
    /// Where a tune started here writes its journal (the config directory's `tunes`).
    pub journal_dir: PathBuf,
}

impl TuneState {
    /// A tab that runs `program`'s `tune` subcommand.
    pub fn new(program: PathBuf, nvml_lib: Option<PathBuf>) -> Self {
        let mut me = TuneState {
            program,
            nvml_lib,
            command: String::new(),
            ranges: String::new(),
            copies: String::new(),
            pattern: String::new(),
            headroom: 20.0,
            timeout_secs: 600.0,
            job: None,
            journal_path: None,
            journal: None,
            view: None,
            last_tune: None,
            last_read: None,
            error: None,
            open_dialog: None,
            copied: false,
            journal_dir: crate::paths::config_dir().unwrap_or_else(std::env::temp_dir).join("tunes"),
        };
        me.find_last_tune();
        me
    }

    /// Looks for the newest journal a tune started here wrote, to offer it (after a restart the
    /// last tune is one click away). Names only: nothing is read until it is opened.
    pub fn find_last_tune(&mut self) {
        let newest = std::fs::read_dir(&self.journal_dir).ok().and_then(|rd| {
            rd.flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
                .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
                .max()
                .map(|(_, p)| p)
        });
        self.last_tune = newest;
    }

    /// True while a tune runs.
    pub fn running(&self) -> bool {
        self.job.is_some()
    }

    /// Shows the journal at `path` (read now and again while a tune writes it).
    pub fn open(&mut self, path: PathBuf) {
        self.journal_path = Some(path);
        self.journal = None;
        self.view = None;
        self.error = None;
        self.copied = false;
        self.read();
    }

    fn read(&mut self) {
        let Some(path) = &self.journal_path else { return };
        self.last_read = Some(Instant::now());
        match Journal::read(path) {
            Ok(j) => {
                self.view = Some(super::tune_view::TuneView::of(&j, self.view.as_ref()));
                self.journal = Some(j);
                self.error = None;
            }
            // A tune just started may not have written its first line yet.
            Err(_) if self.job.is_some() => {}
            Err(e) => self.error = Some(format!("{}: {}", path.display(), e.here())),
        }
    }

    /// The form as the tune it asks for (the same [`Request`] the command line fills), or what
    /// is missing or wrong, as `tune` would say it.
    pub fn request(&self) -> Result<Request, String> {
        if self.command.trim().is_empty() {
            return Err(tr!("Write the command to tune, with {batch} or {workers} where the value goes.").to_string());
        }
        let command = if cfg!(windows) {
            vec!["cmd".to_string(), "/C".to_string(), in_shell(&self.command, Shell::Cmd)]
        } else {
            vec!["sh".to_string(), "-c".to_string(), in_shell(&self.command, Shell::Sh)]
        };
        let mut r = Request::new(command);
        r.params = self.ranges.split_whitespace().map(String::from).collect();
        if !self.copies.trim().is_empty() {
            r.concurrency =
                Some(Range::parse(&self.copies).map_err(|e| format!("{}: {}", tr!("Copies at once"), e.here()))?);
        }
        r.rate_pattern = Some(self.pattern.trim().to_string()).filter(|p| !p.is_empty());
        r.headroom_pct = self.headroom;
        r.trial_timeout_secs = self.timeout_secs;
        Ok(r)
    }

    /// The arguments of `tune` for the form: the checked spec written beside the journal (as
    /// data, `--spec FILE`), or what is missing or wrong.
    pub fn arguments(&self, journal: &std::path::Path) -> Result<Vec<std::ffi::OsString>, String> {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
        let spec = self.request()?.spec(cpus).map_err(|e| e.here())?;
        let path = journal.with_extension("spec.json");
        let json = serde_json::to_vec_pretty(&spec).map_err(|e| e.to_string())?;
        crate::safe_fs::write_new_atomic(&path, &json)
            .map_err(|e| tr!("could not write {path}: {error}", path = path.display(), error = e))?;
        let mut args: Vec<std::ffi::OsString> =
            vec!["tune".into(), "--journal".into(), journal.into(), "--spec".into(), path.into()];
        if let Some(l) = &self.nvml_lib {
            args.extend(["--nvml-lib".into(), l.into()]);
        }
        Ok(args)
    }

    /// Starts a tune of the form's command; its journal goes to the config directory's `tunes`.
    pub fn start(&mut self) {
        self.error = None;
        let dir = self.journal_dir.clone();
        if let Err(e) = std::fs::create_dir_all(&dir) {
            self.error = Some(tr!("could not write {path}: {error}", path = dir.display(), error = e));
            return;
        }
        let path = dir.join(format!("tune-{}.jsonl", chrono::Local::now().format("%Y%m%d-%H%M%S")));
        let args = match self.arguments(&path) {
            Ok(a) => a,
            Err(e) => {
                self.error = Some(e);
                return;
            }
        };
        match Job::start(&self.program, &args) {
            Ok(j) => {
                self.job = Some(j);
                self.journal_path = Some(path);
                self.journal = None;
                self.copied = false;
            }
            Err(e) => self.error = Some(tr!("could not start: {error}", error = e)),
        }
    }

    /// Asks the running tune to stop: it ends its trial, records it and writes its answer.
    pub fn stop(&mut self) {
        let Some(job) = self.job.as_mut() else { return };
        #[cfg(target_os = "linux")]
        if let Ok(pid) = libc::pid_t::try_from(job.child.id()) {
            // SAFETY: kill() only sends SIGINT to the tune we started.
            unsafe { libc::kill(pid, libc::SIGINT) };
            return;
        }
        let _ = job.child.kill();
    }

    /// Polls the tune and re-reads its journal; true while something changes.
    fn poll(&mut self) -> bool {
        if let Some(job) = self.job.as_mut()
            && let Some(code) = job.poll()
        {
            let output = job.text();
            self.job = None;
            self.read();
            // Its own refusal (bad arguments) or a failure is in its last lines.
            if code != Some(0) && code != Some(130) && (self.journal.is_none() || code == Some(2)) {
                let last: Vec<&str> = output.lines().rev().take(3).collect();
                self.error = Some(last.into_iter().rev().collect::<Vec<_>>().join("\n"));
            }
            return true;
        }
        if self.job.is_some() && self.last_read.is_none_or(|t| t.elapsed() >= Duration::from_millis(500)) {
            self.read();
        }
        self.job.is_some()
    }

    /// Draws the tab.
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        if self.poll() {
            ui.ctx().request_repaint_after(Duration::from_millis(300));
        }
        if let Some(picked) = super::share::poll_dialog(ui.ctx(), &mut self.open_dialog) {
            if let Some(p) = picked {
                self.open(p);
            }
        } else if self.open_dialog.is_some() {
            ui.ctx().request_repaint_after(Duration::from_millis(200));
        }
        egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
            super::clear_of_scroll_bar(ui);
            ui.heading(tr!("Tune: batch size, copies at once, workers"));
            ui.label(tr!(
                "One change per trial, each measured: the batch first until GPU memory nears the headroom, then copies at once while throughput still rises, then the data-loading workers."
            ));
            ui.add_space(4.0);
            self.form(ui);
            ui.add_space(8.0);
            if let Some(e) = &self.error {
                ui.colored_label(palette::tone(ui, Tone::Fail), e);
            }
            if self.journal.is_some() {
                self.results(ui);
            } else if self.running() {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label(tr!("Starting the tune..."));
                });
            } else {
                ui.label(
                    RichText::new(tr!(
                        "No tune shown: write a command and start, or open a journal (gpu-doctor-cli tune writes one)."
                    ))
                    .weak(),
                );
                if let Some(last) = self.last_tune.clone() {
                    let name = last.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                    if ui.button(tr!("Open the last tune ({name})", name = name)).clicked() {
                        self.open(last);
                    }
                }
            }
        });
    }

    fn form(&mut self, ui: &mut egui::Ui) {
        let enabled = !self.running();
        egui::Grid::new("tune_form").num_columns(2).spacing([10.0, 6.0]).show(ui, |ui| {
            text_row(
                ui,
                enabled,
                tr!("Command"),
                &mut self.command,
                620.0,
                "python train.py --batch-size {batch} --num-workers {workers}",
                None,
            );
            let hover = tr!("NAME=LO..HI for each placeholder; {batch} and {workers} have defaults");
            text_row(ui, enabled, tr!("Ranges"), &mut self.ranges, 300.0, "batch=1..256 workers=0..8", Some(hover));
            let hover = tr!("Empty: one copy. A range tunes how many copies run at once.");
            text_row(ui, enabled, tr!("Copies at once"), &mut self.copies, 100.0, "1..4", Some(hover));
            let hover = tr!("A regular expression whose first group is the rate; empty: runs per hour");
            text_row(ui, enabled, tr!("Rate in the output"), &mut self.pattern, 300.0, "([0-9.]+) it/s", Some(hover));
            let l = ui.label(tr!("Headroom"));
            ui.add_enabled(enabled, egui::DragValue::new(&mut self.headroom).range(5.0..=50.0).suffix(" %").speed(1.0))
                .labelled_by(l.id)
                .on_hover_text(tr!("GPU memory kept free; the guide keeps 20-30 %"));
            ui.end_row();
            let l = ui.label(tr!("Time limit per trial"));
            ui.add_enabled(
                enabled,
                egui::DragValue::new(&mut self.timeout_secs).range(10.0..=86_400.0).suffix(" s").speed(10.0),
            )
            .labelled_by(l.id);
            ui.end_row();
        });
        ui.horizontal(|ui| {
            if self.running() {
                if ui
                    .button(tr!("Stop"))
                    .on_hover_text(tr!("Ends the running trial and writes the answer so far"))
                    .clicked()
                {
                    self.stop();
                }
                ui.spinner();
            } else if ui.button(tr!("Start tuning")).clicked() {
                self.start();
            }
            if ui.add_enabled(!self.running(), egui::Button::new(tr!("Open journal..."))).clicked() {
                let dir = crate::paths::config_dir().map(|d| d.join("tunes")).filter(|d| d.is_dir());
                self.open_dialog = Some(super::share::open_dialog(dir.unwrap_or_else(super::share::default_dir)));
            }
        });
    }

    fn results(&mut self, ui: &mut egui::Ui) {
        let Some(j) = &self.journal else { return };
        let lang = crate::i18n::current();
        let spec = &j.start.spec;
        let path = self.journal_path.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
        ui.horizontal_wrapped(|ui| {
            ui.label(tr!("Journal:"));
            ui.add(egui::Label::new(RichText::new(&path).monospace()).selectable(true));
            ui.label(tr!("(started {when})", when = j.start.started));
        });
        if j.start.demo {
            ui.colored_label(
                palette::tone(ui, Tone::Warn),
                tr!("(GPU figures are DEMO data: simulated, not this machine)"),
            );
        }
        if j.skipped > 0 {
            ui.colored_label(palette::tone(ui, Tone::Warn), tr!("{n} damaged lines skipped", n = j.skipped));
        }
        let total = j.start.gpus.iter().filter_map(|g| g.total).max();
        ui.label(render::policy(spec, total).render(lang));
        // The answer, once the tune has written one.
        match (&j.end, self.running()) {
            (Some(end), false) => {
                let answer = render::answer(spec, &j.trials, &end.outcome);
                let tone = if answer.command.is_some() { Tone::Pass } else { Tone::Fail };
                egui::Frame::group(ui.style()).stroke(egui::Stroke::new(2.0, palette::tone(ui, tone))).show(ui, |ui| {
                    ui.label(RichText::new(answer.headline.render(lang)).strong());
                    for p in &answer.phases {
                        ui.label(format!("• {}", p.render(lang)));
                    }
                    if end.interrupted {
                        ui.label(tr!(
                            "Interrupted: continue with gpu-doctor-cli tune --resume {journal}",
                            journal = path
                        ));
                    }
                    if let Some(cmd) = &answer.command {
                        ui.horizontal_wrapped(|ui| {
                            ui.monospace(cmd);
                            if ui
                                .small_button(tr!("Copy"))
                                .on_hover_text(tr!("Copy this command to the clipboard"))
                                .clicked()
                            {
                                ui.ctx().copy_text(cmd.clone());
                                self.copied = true;
                            }
                            // Kept in the row (no layout shift): empty until copied.
                            ui.label(if self.copied { tr!("copied") } else { "" });
                        });
                    }
                });
            }
            _ => {
                let running = j.trials.len() + 1;
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label(tr!("Trial {n} is running...", n = running));
                });
            }
        }
        ui.add_space(6.0);
        let unit = spec.unit.label().render(lang);
        if let Some(v) = self.view.as_mut() {
            v.charts(ui, &unit);
        }
        ui.add_space(6.0);
        super::tune_view::table(ui, j, j.end.as_ref().map(|e| &e.outcome));
    }
}

/// One row of the form: a label, its text field (named by the label, an example as its hint) and
/// what the field takes on hover.
fn text_row(
    ui: &mut egui::Ui,
    enabled: bool,
    label: &str,
    value: &mut String,
    width: f32,
    example: &str,
    hover: Option<&str>,
) {
    let l = ui.label(label);
    let field =
        egui::TextEdit::singleline(value).desired_width(width).hint_text(tr!("e.g. {example}", example = example));
    let r = ui.add_enabled(enabled, field).labelled_by(l.id);
    if let Some(h) = hover {
        r.on_hover_text(h);
    }
    ui.end_row();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 53, item 7: a folder with a space (or a `$(…)`) in its name reaches the command as
    /// one word, never as shell code.
    #[test]
    fn the_copys_folder_reaches_the_shell_quoted() {
        assert_eq!(
            in_shell("python train.py --bs {batch} --out {out}/m.pt", Shell::Sh),
            "python train.py --bs {batch} --out \"$GPU_DOCTOR_TRIAL_DIR\"/m.pt"
        );
        assert_eq!(in_shell("x '{out}' \"{copy}\"", Shell::Sh), "x \"$GPU_DOCTOR_TRIAL_DIR\" \"$GPU_DOCTOR_COPY\"");
        assert_eq!(in_shell("x {out}", Shell::Cmd), "x \"%GPU_DOCTOR_TRIAL_DIR%\"");
        // Run for real: a folder named with a space and a command substitution stays a name.
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let out = dir.path().join("John Smith $(touch pwned)");
        std::fs::create_dir(&out).unwrap_or_else(|e| panic!("{e}"));
        let script = in_shell("echo ok > {out}/result.txt", Shell::Sh);
        let status = std::process::Command::new("sh")
            .args(["-c", &script])
            .env("GPU_DOCTOR_TRIAL_DIR", &out)
            .current_dir(dir.path())
            .status()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(status.success());
        assert!(out.join("result.txt").is_file(), "the output went elsewhere");
        assert!(!dir.path().join("pwned").exists(), "a folder's name was run");
    }
}
