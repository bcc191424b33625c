//! The VRAM calculator's answer as text: the breakdown, the assumptions that move it, the fit per
//! GPU with its limits, and the advice. One wording for the command line (`vram`) and the
//! support report (the app's VRAM tab adds it); the app's tab draws the same answer.

use std::fmt::Write as _;

use crate::i18n::Lang;
use crate::vram::calibration::Point;
use crate::vram::{Answer, Arch, GIB, Mode, Workload};

/// Renders the breakdown, the fits with their limits and the advice as text.
pub fn text(arch: &Arch, s: &Workload, answer: &Answer, calibration: Option<&Point>, lang: Lang) -> String {
    let (b, fits, limits, advice) = (&answer.breakdown, &answer.fits, &answer.limits, &answer.suggestions);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{}",
        crate::tr_in!(
            lang,
            "{model}: {params} B parameters{note}",
            model = arch.name,
            params = format!("{:.2}", b.params_b),
            note = if arch.note.is_empty() {
                String::new()
            } else {
                format!(" ({})", crate::i18n::tr_in(lang, &arch.note))
            }
        )
    );
    let _ = writeln!(o, "{}", s.summary_for(arch).render(lang));
    if s.mode != Mode::Inference {
        let _ = writeln!(
            o,
            "{}",
            crate::tr_in!(lang, "trainer: {name} (its defaults, unless given)", name = s.trainer.name())
        );
    }
    let rows = [
        (crate::tr_in!(lang, "weights"), b.weights),
        (crate::tr_in!(lang, "KV cache"), b.kv_cache),
        (crate::tr_in!(lang, "activations"), b.activations),
        (crate::tr_in!(lang, "gradients"), b.gradients),
        (crate::tr_in!(lang, "optimizer states"), b.optimizer),
        (crate::tr_in!(lang, "CUDA context"), b.cuda_context),
        (crate::tr_in!(lang, "framework buffers"), b.framework),
        (crate::tr_in!(lang, "allocator slack"), b.allocator_slack),
    ];
    for (name, v) in rows {
        if v > 0.0 {
            let _ = writeln!(o, "  {} {:>9.2} GiB", crate::i18n::pad(name, 18), v / GIB);
        }
    }
    let _ = writeln!(
        o,
        "  {}",
        crate::tr_in!(
            lang,
            "{label} {value} GiB per GPU (as nvidia-smi would show it)",
            label = crate::i18n::pad(crate::tr_in!(lang, "total"), 18),
            value = format!("{:>9.2}", b.total / GIB)
        )
    );
    if b.high > b.low {
        let _ = writeln!(
            o,
            "  {}",
            crate::tr_in!(
                lang,
                "{label} {low}–{high} GiB; the verdict uses the high end. What would narrow it:",
                label = crate::i18n::pad(crate::tr_in!(lang, "range"), 18),
                low = format!("{:.1}", b.low / GIB),
                high = format!("{:.1}", b.high / GIB)
            )
        );
        for n in &b.narrow_by {
            let _ = writeln!(o, "    - {}", n.render(lang));
        }
    }
    if let Some(kv) = b.vllm_kv_available {
        let _ = writeln!(
            o,
            "  {}",
            crate::tr_in!(
                lang,
                "vLLM KV cache available: {available} GiB (needed for this batch and context: {needed} GiB)",
                available = format!("{:.2}", kv / GIB),
                needed = format!("{:.2}", b.kv_cache / GIB)
            )
        );
    }
    for n in &b.notes {
        let _ = writeln!(o, "  {}", crate::tr_in!(lang, "note: {note}", note = n.render(lang)));
    }
    if let Some(p) = calibration {
        let _ = writeln!(o, "  {}", crate::tr_in!(lang, "calibration: {line}", line = p.line(b.total).render(lang)));
    }
    if !answer.assumptions.is_empty() {
        let _ = writeln!(o, "  {}", crate::tr_in!(lang, "Assumed (each changes the figure by more than 5 %):"));
        for a in &answer.assumptions {
            let _ = writeln!(o, "    {} — {}", a.assumed.render(lang), a.line().render(lang));
        }
    }
    if fits.is_empty() {
        let _ = writeln!(
            o,
            "\n{}",
            crate::tr_in!(
                lang,
                "No GPU to compare with (no NVIDIA GPU data here); use --vram-gib X for a hypothetical card."
            )
        );
    }
    for (i, f) in fits.iter().enumerate() {
        let verdict = f.verdict.word().render(lang).to_uppercase();
        let detail = format!("{verdict} — {}", f.detail.render(lang));
        let _ = writeln!(
            o,
            "\n{}",
            crate::tr_in!(lang, "{label}: {value}", label = f.target.name.render(lang), value = detail)
        );
        if let Some(l) = limits.get(i) {
            let _ = writeln!(o, "  {}", l.sentence().render(lang));
        }
    }
    if !advice.is_empty() {
        let _ = writeln!(
            o,
            "\n{}",
            crate::tr_in!(lang, "{heading}:", heading = crate::vram::advice_heading(advice).render(lang))
        );
        for a in advice {
            let _ = writeln!(o, "  • {}", a.line().render(lang));
        }
    }
    o
}
