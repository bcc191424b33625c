//! What the window says in words that it keeps, not draws: after a switch of language the
//! checklist's results, the verdicts, the machine facts and the support card are made again; and
//! the support report, in the window's language or (for support upstream) in another, its checks
//! run again in that language on a background thread.

use eframe::egui;

use super::DoctorApp;
use crate::telemetry::snapshot::Snapshot;

impl DoctorApp {
    /// After a switch of language: what the window holds as text (the checklist's results, the
    /// verdicts, the support card, the machine facts) is made again in the new one. Labels are
    /// looked up every frame and need nothing.
    pub(super) fn follow_language(&mut self, ctx: &egui::Context) {
        let lang = crate::i18n::current();
        if lang != self.lang {
            self.lang = lang;
            self.relang_checklist = self.checklist.report.is_some() || self.checklist.running();
            self.verdicts_for = None;
            self.machine = None;
            self.card_pending |= self.card.open;
        }
        if self.relang_checklist {
            self.checklist.poll();
            if !self.checklist.running() {
                self.relang_checklist = false;
                self.checklist.start(ctx, &self.renderer_name);
            }
        }
    }

    /// The support report of what the app knows now (not yet redacted).
    pub fn build_report(&mut self, snap: &Snapshot) -> crate::report::ReportDoc {
        let checklist = self.checklist.report.clone();
        self.build_report_from(snap, checklist, false)
    }

    /// The report dialog's report in the language it asks for: the window's at once, another
    /// once the checks have run again in it (on a background thread).
    pub(super) fn serve_report_language(&mut self, ctx: &egui::Context, snap: &Snapshot) {
        use std::sync::mpsc::TryRecvError;
        if let Some(lang) = self.report.wants_doc_in() {
            if lang == crate::i18n::current() {
                let doc = self.build_report(snap);
                self.report.set_doc(doc, lang);
            } else {
                self.report.making = true;
                self.report_checks = Some((lang, self.checklist.run_in(lang, ctx, &self.renderer_name)));
            }
        }
        let Some((lang, rx)) = &self.report_checks else { return };
        let (lang, checks) = match rx.try_recv() {
            Ok(r) => (*lang, r.ok()),
            Err(TryRecvError::Empty) => return,
            Err(TryRecvError::Disconnected) => (*lang, None),
        };
        self.report_checks = None;
        let doc = crate::i18n::scoped(lang, || self.build_report_from(snap, checks, true));
        self.report.set_doc(doc, lang);
    }

    /// The report with these checklist results; `fresh_text` makes the texts the window keeps
    /// (machine facts, verdicts) again, for a report in another language than the window's.
    fn build_report_from(
        &mut self,
        snap: &Snapshot,
        checklist: Option<crate::diagnose::Report>,
        fresh_text: bool,
    ) -> crate::report::ReportDoc {
        let machine = if fresh_text {
            crate::report::machine_facts()
        } else {
            self.machine.get_or_insert_with(crate::report::machine_facts).clone()
        };
        let now = self.sampler.now().max(snap.latest_t());
        let window = self.monitor.window.secs();
        // The smoke test ran on this machine: it says nothing about a server's GPUs.
        let smoke = if snap.remote.is_some() { None } else { self.smoke.report.clone() };
        let vram = self.vram.report_lines(snap);
        let verdicts = if fresh_text {
            let at = self.monitor.paused_at.filter(|_| snap.source.is_replay()).unwrap_or(now);
            let judged = self.monitor.judged_span.unwrap_or(self.monitor.diag_window);
            self.sampler.with_history(|h| crate::diagnose::bottleneck::evaluate(snap, h, judged, at))
        } else {
            self.monitor.verdicts.clone()
        };
        let renderer = Some(self.renderer_name.clone());
        self.sampler.with_history(|h| {
            crate::report::build(&crate::report::Inputs {
                snapshot: snap,
                history: Some((h, window, now)),
                checklist: checklist.as_ref(),
                bottlenecks: Some(&verdicts),
                smoke: smoke.as_ref(),
                vram,
                renderer,
                machine,
            })
        })
    }
}
