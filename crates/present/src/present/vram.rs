//! The VRAM calculator's answer as text: the breakdown, the assumptions that move it, the fit per
//! GPU with its limits, and the advice. One wording for the command line (`vram`) and the
//! support report (the app's VRAM tab adds it); the app's tab draws the same answer.

use std::fmt::Write as _;

use crate::vram::calibration::Point;
use crate::vram::{Answer, Arch, GIB, Mode, Workload};

/// Renders the breakdown, the fits with their limits and the advice as text.
pub fn text(arch: &Arch, s: &Workload, answer: &Answer, calibration: Option<&Point>) -> String {
    let (b, fits, limits, advice) = (&answer.breakdown, &answer.fits, &answer.limits, &answer.suggestions);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{}",
        crate::tr!(
            "{model}: {params} B parameters{note}",
            model = arch.name,
            params = format!("{:.2}", b.params_b),
            note = if arch.note.is_empty() { String::new() } else { format!(" ({})", crate::i18n::tr_dyn(&arch.note)) }
        )
    );
    let _ = writeln!(o, "{}", s.summary_for(arch).here());
    if s.mode != Mode::Inference {
        let _ = writeln!(o, "{}", crate::tr!("trainer: {name} (its defaults, unless given)", name = s.trainer.name()));
    }
    let rows = [
        (crate::tr!("weights"), b.weights),
        (crate::tr!("KV cache"), b.kv_cache),
        (crate::tr!("activations"), b.activations),
        (crate::tr!("gradients"), b.gradients),
        (crate::tr!("optimizer states"), b.optimizer),
        (crate::tr!("CUDA context"), b.cuda_context),
        (crate::tr!("framework buffers"), b.framework),
        (crate::tr!("allocator slack"), b.allocator_slack),
    ];
    for (name, v) in rows {
        if v > 0.0 {
            let _ = writeln!(o, "  {} {:>9.2} GiB", crate::i18n::pad(name, 18), v / GIB);
        }
    }
    let _ = writeln!(
        o,
        "  {}",
        crate::tr!(
            "{label} {value} GiB per GPU (as nvidia-smi would show it)",
            label = crate::i18n::pad(crate::tr!("total"), 18),
            value = format!("{:>9.2}", b.total / GIB)
        )
    );
    if b.high > b.low {
        let _ = writeln!(
            o,
            "  {}",
            crate::tr!(
                "{label} {low}–{high} GiB; the verdict uses the high end. What would narrow it:",
                label = crate::i18n::pad(crate::tr!("range"), 18),
                low = format!("{:.1}", b.low / GIB),
                high = format!("{:.1}", b.high / GIB)
            )
        );
        for n in &b.narrow_by {
            let _ = writeln!(o, "    - {}", n.here());
        }
    }
    if let Some(kv) = b.vllm_kv_available {
        let _ = writeln!(
            o,
            "  {}",
            crate::tr!(
                "vLLM KV cache available: {available} GiB (needed for this batch and context: {needed} GiB)",
                available = format!("{:.2}", kv / GIB),
                needed = format!("{:.2}", b.kv_cache / GIB)
            )
        );
    }
    for n in &b.notes {
        let _ = writeln!(o, "  {}", crate::tr!("note: {note}", note = n.here()));
    }
    if let Some(p) = calibration {
        let _ = writeln!(o, "  {}", crate::tr!("calibration: {line}", line = p.line(b.total).here()));
    }
    if !answer.assumptions.is_empty() {
        let _ = writeln!(o, "  {}", crate::tr!("Assumed (each changes the figure by more than 5 %):"));
        for a in &answer.assumptions {
            let _ = writeln!(o, "    {} — {}", a.assumed.here(), a.line().here());
        }
    }
    if fits.is_empty() {
        let _ = writeln!(
            o,
            "\n{}",
            crate::tr!("No GPU to compare with (no NVIDIA GPU data here); use --vram-gib X for a hypothetical card.")
        );
    }
    for (i, f) in fits.iter().enumerate() {
        let verdict = f.verdict.word().here().to_uppercase();
        let detail = format!("{verdict} — {}", f.detail.render(crate::i18n::current()));
        let _ = writeln!(o, "\n{}", crate::tr!("{label}: {value}", label = f.target.name.here(), value = detail));
        if let Some(l) = limits.get(i) {
            let _ = writeln!(o, "  {}", l.sentence().here());
        }
    }
    if !advice.is_empty() {
        let _ = writeln!(o, "\n{}", crate::tr!("{heading}:", heading = crate::vram::advice_heading(advice).here()));
        for a in advice {
            let _ = writeln!(o, "  • {}", a.line().here());
        }
    }
    o
}
