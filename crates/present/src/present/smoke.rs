//! The CUDA smoke test's result as text (`smoke`, "Copy report"), in the language passed.

use crate::i18n::Lang;
use crate::msg;
use crate::smoke::{SmokeReport, StageResult};
use crate::verdict::Verdict;

/// The smoke test's plain-text report (CLI output, "Copy report") in `lang`.
pub fn report_text(r: &SmokeReport, lang: Lang) -> String {
    let mut s = String::new();
    s.push_str(
        &msg!("gpu-doctor {version} CUDA smoke test, device {device}", version = r.version, device = r.options.device)
            .render(lang),
    );
    if let Some(d) = r.device() {
        s.push_str(&format!(": {}", d.line_in(r.options.units).render(lang)));
    }
    s.push('\n');
    if let Some(l) = &r.library {
        s.push_str(&msg!("driver library: {library}", library = l).render(lang));
        if let Some(c) = &r.driver_cuda {
            s.push_str(&format!(" (CUDA {c})"));
        }
        s.push('\n');
    }
    s.push('\n');
    for stage in &r.stages {
        s.push_str(&stage_text(stage, lang));
    }
    s.push('\n');
    let verdict = msg!("{verdict}: {summary}", verdict = r.verdict.word_message(), summary = r.summary);
    s.push_str(&verdict.render(lang));
    s.push('\n');
    if let Some(n) = &r.next_step {
        s.push_str(&msg!("Next step: {step}", step = n).render(lang));
        s.push('\n');
    }
    s.push_str(&msg!("Took {secs} s.", secs = format!("{:.1}", r.total_ms / 1000.0)).render(lang));
    s.push('\n');
    s
}

/// The lines for one stage in the text report, in `lang`.
pub fn stage_text(r: &StageResult, lang: Lang) -> String {
    let mut s = format!(
        "  {:<7} {} {:>7}  {}\n",
        r.verdict.tag(),
        crate::i18n::pad(&crate::i18n::tr_in(lang, r.stage.title()), 34),
        ms_text(r),
        r.summary.render(lang)
    );
    for f in &r.figures {
        s.push_str(&format!("          {} {}\n", crate::i18n::pad(&f.label.render(lang), 32), f.text(lang)));
    }
    for d in &r.details {
        s.push_str(&format!("          {}\n", d.render(lang)));
    }
    if let Some(e) = &r.error {
        s.push_str(&format!("          {}\n", msg!("error: {error}", error = e).render(lang)));
    }
    if let Some(n) = &r.next_step {
        s.push_str(&format!("          {}\n", msg!("next step: {step}", step = n).render(lang)));
    }
    s
}

fn ms_text(r: &StageResult) -> String {
    match r.verdict {
        Verdict::Skipped => String::new(),
        _ if r.ms >= 1000.0 => format!("{:.2} s", r.ms / 1000.0),
        _ => format!("{:.0} ms", r.ms),
    }
}
