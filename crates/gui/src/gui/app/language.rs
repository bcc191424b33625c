//! What the window says in words that it keeps, not draws: after a switch of language the
//! machine facts and the support card are made again (the checklist's results, the verdicts and
//! the smoke test are messages, drawn in the new language as they are); and the support report,
//! in the window's language or (for support upstream) in another, rendered in that language from
//! the same results.

use super::DoctorApp;
use crate::telemetry::snapshot::Snapshot;

impl DoctorApp {
    /// After a switch of language: what the window holds as text (the support card, the machine
    /// facts) is made again in the new one. Labels and messages (the checklist, the verdicts, the
    /// smoke test) are rendered every frame and need nothing: the checks do not run again.
    pub(super) fn follow_language(&mut self) {
        let lang = crate::i18n::current();
        if lang != self.lang {
            self.lang = lang;
            self.machine = None;
            self.card_pending |= self.card.open;
        }
    }

    /// The support report of what the app knows now (not yet redacted).
    pub fn build_report(&mut self, snap: &Snapshot) -> crate::report::ReportDoc {
        let checklist = self.checklist.report.clone();
        self.build_report_from(snap, checklist, false, crate::i18n::current())
    }

    /// The report dialog's report in the language it asks for: the same results (checklist,
    /// verdicts, smoke test) rendered in that language.
    pub(super) fn serve_report_language(&mut self, snap: &Snapshot) {
        if let Some(lang) = self.report.wants_doc_in() {
            let checklist = self.checklist.report.clone();
            let other = lang != crate::i18n::current();
            // (The window's own texts in the report, the VRAM tab's lines, follow the language too.)
            let doc = crate::i18n::scoped(lang, || self.build_report_from(snap, checklist, other, lang));
            self.report.set_doc(doc, lang);
        }
    }

    /// The report with these checklist results; `fresh_text` makes the texts the window keeps
    /// (machine facts) again, for a report in another language than the window's.
    fn build_report_from(
        &mut self,
        snap: &Snapshot,
        checklist: Option<crate::diagnose::Report>,
        fresh_text: bool,
        lang: crate::i18n::Lang,
    ) -> crate::report::ReportDoc {
        if let Some((c, origin)) = checklist.as_ref().and_then(|c| c.origin.as_ref().map(|o| (c, o))) {
            // A user's file: the report is about the machine it came from, and nothing else.
            return crate::report::build_from_file(c, origin, lang);
        }
        let machine = if fresh_text {
            crate::report::machine_facts(lang)
        } else {
            self.machine.get_or_insert_with(|| crate::report::machine_facts(lang)).clone()
        };
        let now = self.sampler.now().max(snap.latest_t());
        let window = self.monitor.window.secs();
        // The smoke test ran on this machine: it says nothing about a server's GPUs.
        let smoke = if snap.remote.is_some() { None } else { self.smoke.report.clone() };
        let vram = self.vram.report_lines(snap);
        let verdicts = self.monitor.verdicts.clone();
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
                lang,
            })
        })
    }
}

impl DoctorApp {
    /// The machine the checklist's file describes, when it read one.
    pub(super) fn origin(&self) -> Option<crate::diagnose::origin::Origin> {
        self.checklist.report.as_ref().and_then(|r| r.origin.clone())
    }

    /// Opens the report dialog on what the app knows now.
    pub(super) fn open_report(&mut self, snap: &Snapshot) {
        let doc = self.build_report(snap);
        let origin = self.origin();
        self.report.show_for(doc, self.settings.redaction, origin);
    }

    /// Opens (or refreshes) the support card on what the app knows now.
    pub(super) fn open_card(&mut self, snap: &Snapshot) {
        let doc = self.build_report(snap);
        let origin = self.origin();
        self.card.show_for(doc, self.headline(snap), self.settings.redaction, snap, origin.as_ref());
    }
}
