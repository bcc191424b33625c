//! "End a process": the confirmation the process table asks for before it ends a process, then
//! what became of it (ended, still running with the choice to force it, or why it could not be
//! asked).

use crate::i18n::Here as _;
use std::time::{Duration, Instant};

use eframe::egui::{self, RichText};

use super::palette::{self, Tone};
use crate::telemetry::endproc::{self, How};
use crate::tr;

/// How long a process is given to exit after it was asked before forcing is offered.
const GRACE: Duration = Duration::from_secs(5);

/// Where the dialog is.
#[derive(Clone, Debug, PartialEq)]
enum Phase {
    /// Asking the user to confirm.
    Confirm,
    /// The request was sent at this time; waiting for the process to exit.
    Sent(Instant, How),
    /// The process has ended.
    Ended,
    /// The request could not be sent: why.
    Failed(String),
}

/// The dialog's state.
#[derive(Clone, Debug)]
pub struct EndDialog {
    /// Whether it is shown.
    pub open: bool,
    pid: u32,
    name: String,
    gpu: u32,
    phase: Phase,
}

impl Default for EndDialog {
    fn default() -> Self {
        EndDialog { open: false, pid: 0, name: String::new(), gpu: 0, phase: Phase::Confirm }
    }
}

impl EndDialog {
    /// Opens the dialog to confirm ending `pid` (`name`, on GPU `gpu`).
    pub fn ask(&mut self, pid: u32, name: String, gpu: u32) {
        *self = EndDialog { open: true, pid, name, gpu, phase: Phase::Confirm };
    }

    fn send(&mut self, how: How) {
        self.phase = match endproc::end(self.pid, how) {
            Ok(()) => Phase::Sent(Instant::now(), how),
            Err(why) => Phase::Failed(why.here()),
        };
    }

    /// Draws the dialog.
    pub fn ui(&mut self, ctx: &egui::Context) {
        if !self.open {
            return;
        }
        if let Phase::Sent(..) = self.phase {
            if !endproc::is_running(self.pid) {
                self.phase = Phase::Ended;
            } else {
                ctx.request_repaint_after(Duration::from_millis(200));
            }
        }
        let mut open = self.open;
        let mut close = false;
        let (pid, name, gpu) = (self.pid, self.name.clone(), self.gpu);
        let window = egui::Window::new(tr!("End a process")).id(egui::Id::unique("end_a_process"));
        // In the middle of the window: the table that asked is often scrolled far below its top.
        let window = window.anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0]);
        let shown = window.open(&mut open).collapsible(false).resizable(false).default_width(460.0).show(ctx, |ui| {
            ui.label(
                RichText::new(tr!("Process {pid} ({name}) on GPU {gpu}", pid = pid, name = name, gpu = gpu)).strong(),
            );
            match self.phase.clone() {
                Phase::Confirm => {
                    ui.label(if cfg!(windows) {
                        tr!("Windows ends it at once; whatever it has not saved is lost.")
                    } else {
                        tr!(
                            "It is asked to exit (SIGTERM): a program can save its work and free the GPU cleanly. Whatever it has not saved is lost."
                        )
                    });
                    ui.horizontal(|ui| {
                        let cancel = ui.button(tr!("Cancel"));
                        // Cancel has the focus: Enter or Space does no harm.
                        if !ui.ctx().memory(|m| m.focused().is_some()) {
                            cancel.request_focus();
                        }
                        if cancel.clicked() {
                            close = true;
                        }
                        let end = egui::Button::new(
                            RichText::new(tr!("End process {pid}", pid = pid)).color(palette::tone(ui, Tone::Fail)),
                        );
                        if ui.add(end).clicked() {
                            self.send(How::Ask);
                        }
                    });
                }
                Phase::Sent(at, how) if at.elapsed() >= GRACE && how == How::Ask && !cfg!(windows) => {
                    ui.label(
                        RichText::new(tr!(
                            "Still running {secs} s after it was asked to exit: it may be saving, or it ignores SIGTERM.",
                            secs = GRACE.as_secs()
                        ))
                        .color(palette::tone(ui, Tone::Warn)),
                    );
                    ui.horizontal(|ui| {
                        if ui.button(tr!("Leave it running")).clicked() {
                            close = true;
                        }
                        let force = egui::Button::new(
                            RichText::new(tr!("Force it to end (SIGKILL)")).color(palette::tone(ui, Tone::Fail)),
                        );
                        if ui.add(force).on_hover_text(tr!("Ends it at once; it cannot save anything.")).clicked() {
                            self.send(How::Force);
                        }
                    });
                }
                Phase::Sent(..) => {
                    ui.horizontal(|ui| {
                        ui.spinner();
                        ui.label(tr!("Asked to exit; waiting for it to end…"));
                    });
                }
                Phase::Ended => {
                    ui.label(RichText::new(tr!("It has ended.")).color(palette::tone(ui, Tone::Pass)));
                    ui.label(tr!("The process table drops it at its next reading; its GPU memory is free again."));
                    if ui.button(tr!("Close")).clicked() {
                        close = true;
                    }
                }
                Phase::Failed(why) => {
                    ui.label(RichText::new(why).color(palette::tone(ui, Tone::Fail)));
                    if ui.button(tr!("Close")).clicked() {
                        close = true;
                    }
                }
            }
        });
        if let Some(r) = &shown {
            super::hold_keyboard(ctx, &r.response);
        }
        self.open = open && !close;
    }
}
