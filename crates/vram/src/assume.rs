//! The assumptions behind an estimate that move it most: for each setting the user may not know
//! they chose (gradient checkpointing, the attention kernel, the optimizer's state precision, fp32
//! master weights, the LoRA targets, a chunked loss), the figure under the other choice. Those
//! that change the per-GPU figure by more than [`MATTERS`] are listed by the CLI, `--json`, the
//! app (as toggles next to the bar) and reports, so nobody plans a card on a setting they did not
//! mean: "with gradient checkpointing: 9.8 GiB".

use serde::Serialize;

use super::arch::Arch;
use super::breakdown::GIB;
use super::estimate::estimate;
use super::fit::need;
use super::quant::Quant;
use super::workload::{Checkpointing, Framework, HfGenerate, Mode, Optimizer, Precision, Workload};
use crate::i18n::Message;

/// A change of the figure by more than this share is worth stating.
pub const MATTERS: f64 = 0.05;

/// One assumption and what the estimate would be without it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Assumption {
    /// Stable id (`checkpointing`, `attention`, `hf_logits`, `optimizer_states`,
    /// `master_weights`, `lora_targets`, `kbit_upcast`, `prequantized`, `encoder_head`,
    /// `image_encoders`, `chunked_loss`, `held_logits`, `bnb_version`).
    pub id: &'static str,
    /// What the estimate assumes, in words ("no gradient checkpointing").
    pub assumed: Message,
    /// The other choice ("with gradient checkpointing").
    pub alternative: Message,
    /// The per-GPU figure under the other choice, bytes (what must fit, as the verdict uses it).
    pub figure_if: f64,
    /// The workload with the other choice (the app's toggle applies it).
    #[serde(skip)]
    pub workload: Workload,
}

impl Assumption {
    /// "with gradient checkpointing: 9.8 GiB".
    pub fn line(&self) -> Message {
        crate::msg!(
            "{alternative}: {gib} GiB",
            alternative = self.alternative,
            gib = format!("{:.1}", self.figure_if / GIB)
        )
    }
}

/// The settings of `s` that could be otherwise, each with its other choice, in the order shown.
fn alternatives(arch: &Arch, s: &Workload) -> Vec<(&'static str, Message, Message, Workload)> {
    let mut out = Vec::new();
    let training = s.mode != Mode::Inference;
    if training {
        let (assumed, alternative, other) = if s.checkpointing == Checkpointing::None {
            (crate::msg!("no gradient checkpointing"), crate::msg!("with gradient checkpointing"), Checkpointing::Full)
        } else {
            (crate::msg!("gradient checkpointing"), crate::msg!("without gradient checkpointing"), Checkpointing::None)
        };
        out.push(("checkpointing", assumed, alternative, Workload { checkpointing: other, ..s.clone() }));
    }
    // The attention kernel matters where the whole score matrix would be kept: training, and the
    // prefill of Hugging Face generate.
    if training || s.framework == Framework::Hf {
        let (assumed, alternative) = if s.flash_attention {
            (crate::msg!("fused attention (SDPA / FlashAttention)"), crate::msg!("with eager attention"))
        } else {
            (crate::msg!("eager attention (scores kept)"), crate::msg!("with fused attention (SDPA / FlashAttention)"))
        };
        let w = Workload { flash_attention: !s.flash_attention, ..s.clone() };
        out.push(("attention", assumed, alternative, w));
    }
    // Hugging Face generate's logits: the transformers version decides (4.45 kept the last
    // position's only); at long prompts the older behaviour is the biggest part of the prefill.
    if !training && s.framework == Framework::Hf && arch.vocab > 0 {
        let (assumed, alternative, other) = match s.hf_generate {
            HfGenerate::Current => (
                crate::msg!("transformers 4.45+ (last logits only)"),
                crate::msg!("with transformers before 4.45"),
                HfGenerate::FullLogits,
            ),
            HfGenerate::FullLogits => (
                crate::msg!("transformers before 4.45 (full fp32 logits)"),
                crate::msg!("with transformers 4.45+"),
                HfGenerate::Current,
            ),
            HfGenerate::CopiedCache => (
                crate::msg!("transformers before 4.42 (full fp32 logits, two copies of the KV cache)"),
                crate::msg!("with transformers 4.45+"),
                HfGenerate::Current,
            ),
        };
        out.push(("hf_logits", assumed, alternative, Workload { hf_generate: other, ..s.clone() }));
    }
    if training {
        let (assumed, alternative, other) = match s.optimizer {
            Optimizer::AdamW8bit => {
                (crate::msg!("8-bit AdamW states"), crate::msg!("with 32-bit AdamW states"), Optimizer::AdamW)
            }
            _ => (crate::msg!("32-bit optimizer states"), crate::msg!("with 8-bit AdamW states"), Optimizer::AdamW8bit),
        };
        if matches!(s.optimizer, Optimizer::AdamW | Optimizer::AdamW8bit) {
            let w = Workload { optimizer: other, ..s.clone() };
            out.push(("optimizer_states", assumed, alternative, w));
        }
    }
    if s.mode == Mode::Full && s.precision != Precision::Fp32 {
        let (assumed, alternative, other) = if s.precision == Precision::Mixed {
            (
                crate::msg!("mixed precision with fp32 master weights"),
                crate::msg!("with everything in bf16 (no master weights)"),
                Precision::Bf16True,
            )
        } else {
            (
                crate::msg!("everything in bf16 (no master weights)"),
                crate::msg!("with fp32 master weights (mixed precision)"),
                Precision::Mixed,
            )
        };
        out.push(("master_weights", assumed, alternative, Workload { precision: other, ..s.clone() }));
    }
    if matches!(s.mode, Mode::Lora | Mode::Qlora) {
        let (assumed, alternative) = if s.lora_all_linear {
            (crate::msg!("LoRA on every linear layer"), crate::msg!("with LoRA on q and v only"))
        } else {
            (crate::msg!("LoRA on q and v only"), crate::msg!("with LoRA on every linear layer"))
        };
        let w = Workload { lora_all_linear: !s.lora_all_linear, ..s.clone() };
        out.push(("lora_targets", assumed, alternative, w));
    }
    if s.mode == Mode::Qlora {
        let (assumed, alternative) = if s.kbit_upcast {
            (
                crate::msg!("non-4-bit parameters upcast to fp32 (PEFT's k-bit preparation)"),
                crate::msg!("without the fp32 upcast (TRL, Axolotl, Unsloth)"),
            )
        } else {
            (
                crate::msg!("non-4-bit parameters kept in bf16"),
                crate::msg!("with PEFT's fp32 upcast (prepare_model_for_kbit_training)"),
            )
        };
        let w = Workload { kbit_upcast: !s.kbit_upcast, ..s.clone() };
        out.push(("kbit_upcast", assumed, alternative, w));
    }
    // Training an image model: its text encoders and VAE on the GPU, or their outputs computed
    // beforehand.
    if training && super::image_settings::Family::of(arch).is_some() {
        let (assumed, alternative) = if s.image.text_encoders {
            (crate::msg!("text encoders and VAE on the GPU"), crate::msg!("with prompt embeddings and latents cached"))
        } else {
            (
                crate::msg!("prompt embeddings and latents cached"),
                crate::msg!("with the text encoders and VAE on the GPU"),
            )
        };
        let mut w = s.clone();
        w.image.text_encoders = !s.image.text_encoders;
        out.push(("image_encoders", assumed, alternative, w));
    }
    // Whether the checkpoint is saved quantised or quantised from 16 bits at load (QLoRA and
    // bitsandbytes inference): what the load leaves in the allocator's cache.
    let bnb_load = matches!(s.weight_quant(), Quant::Nf4 | Quant::Nf4Dq | Quant::Int8 | Quant::Gptq4);
    if s.mode == Mode::Qlora || (s.mode == Mode::Inference && bnb_load && s.weight_quant() != Quant::Gptq4) {
        let (assumed, alternative) = if s.prequantized {
            (crate::msg!("a checkpoint saved quantised"), crate::msg!("with a 16-bit checkpoint quantised at load"))
        } else {
            (
                crate::msg!("a 16-bit checkpoint quantised at load"),
                crate::msg!("with a checkpoint saved quantised (bnb-4bit, GPTQ, AWQ)"),
            )
        };
        let w = Workload { prequantized: !s.prequantized, ..s.clone() };
        out.push(("prequantized", assumed, alternative, w));
    }
    if s.bnb_4bit() {
        let (assumed, alternative) = if s.bnb_before_0_43 {
            (
                crate::msg!("bitsandbytes before 0.43 (dequantised through fp16)"),
                crate::msg!("with bitsandbytes 0.43 or later"),
            )
        } else {
            (
                crate::msg!("bitsandbytes 0.43 or later"),
                crate::msg!("with bitsandbytes before 0.43 (dequantised through fp16)"),
            )
        };
        let w = Workload { bnb_before_0_43: !s.bnb_before_0_43, ..s.clone() };
        out.push(("bnb_version", assumed, alternative, w));
    }
    if training && arch.kind == super::arch::ModelKind::Encoder {
        use super::workload::EncoderHead;
        let (assumed, alternative, other) = match s.encoder_head {
            EncoderHead::Classification => (
                crate::msg!("a classification head"),
                crate::msg!("with a masked-LM head (vocabulary logits)"),
                EncoderHead::MaskedLm,
            ),
            EncoderHead::MaskedLm => (
                crate::msg!("a masked-LM head (vocabulary logits)"),
                crate::msg!("with a classification head"),
                EncoderHead::Classification,
            ),
        };
        out.push(("encoder_head", assumed, alternative, Workload { encoder_head: other, ..s.clone() }));
    }
    if training && arch.vocab > 0 && arch.kind != super::arch::ModelKind::Encoder {
        let (assumed, alternative) = if s.chunked_loss {
            (crate::msg!("a chunked loss (no full fp32 logits)"), crate::msg!("with a plain loss (full fp32 logits)"))
        } else {
            (
                crate::msg!("a plain loss (full fp32 logits)"),
                crate::msg!("with a chunked loss (Liger, torchtune, Unsloth)"),
            )
        };
        let w = Workload { chunked_loss: !s.chunked_loss, ..s.clone() };
        out.push(("chunked_loss", assumed, alternative, w));
        if !s.chunked_loss {
            let (assumed, alternative) = if s.held_logits {
                (crate::msg!("fp32 logits kept through backward"), crate::msg!("with the logits freed before backward"))
            } else {
                (crate::msg!("logits freed before backward"), crate::msg!("with the fp32 logits kept through backward"))
            };
            let w = Workload { held_logits: !s.held_logits, ..s.clone() };
            out.push(("held_logits", assumed, alternative, w));
        }
    }
    out
}

/// The assumptions of the estimate of `arch` under `s` that change its per-GPU figure by more
/// than [`MATTERS`], biggest change first. Empty when the workload cannot be estimated.
pub fn assumptions(arch: &Arch, s: &Workload) -> Vec<Assumption> {
    let Ok(base) = estimate(arch, s).map(|b| need(&b, s)) else { return Vec::new() };
    let mut out: Vec<Assumption> = alternatives(arch, s)
        .into_iter()
        .filter_map(|(id, assumed, alternative, workload)| {
            let figure_if = need(&estimate(arch, &workload).ok()?, &workload);
            ((figure_if - base).abs() > MATTERS * base).then_some(Assumption {
                id,
                assumed,
                alternative,
                figure_if,
                workload,
            })
        })
        .collect();
    out.sort_by(|a, b| (b.figure_if - base).abs().total_cmp(&(a.figure_if - base).abs()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn llama8b() -> Arch {
        Arch { context: Some(131_072), ..Arch::decoder("Llama-3.1-8B", 32, 4096, 32, 8, 14336, 128_256) }
    }

    #[test]
    fn a_plain_trainer_run_names_checkpointing_with_the_figure_it_would_give() {
        let s = Workload {
            mode: Mode::Lora,
            batch: 4,
            seq: 2048,
            checkpointing: Checkpointing::None,
            ..Workload::default()
        };
        let list = assumptions(&llama8b(), &s);
        let ckpt = list.iter().find(|a| a.id == "checkpointing").expect("checkpointing matters here");
        let base = need(&estimate(&llama8b(), &s).unwrap(), &s);
        assert!(ckpt.figure_if < base * 0.8, "{} vs {}", ckpt.figure_if, base);
        assert_eq!(ckpt.workload.checkpointing, Checkpointing::Full);
        assert!(ckpt.line().en().starts_with("with gradient checkpointing: "), "{}", ckpt.line().en());
        // Biggest change first; every one listed changes the figure by more than 5 %.
        for w in list.windows(2) {
            assert!((w[0].figure_if - base).abs() >= (w[1].figure_if - base).abs());
        }
        assert!(list.iter().all(|a| (a.figure_if - base).abs() > MATTERS * base));
    }

    #[test]
    fn a_long_prompt_on_current_transformers_keeps_the_last_logits_only_and_names_the_old_version() {
        // Llama 3.1 8B, a 16k-token prompt, bf16, HF generate: before 4.45 the prefill's fp32
        // logits alone are 16384 x 128256 x 4 bytes (7.8 GiB) and a 32 GB card is too small;
        // since, one row of logits, and it fits.
        let s = Workload { seq: 16_384, ..Workload::default() };
        let now = need(&estimate(&llama8b(), &s).unwrap(), &s);
        let old_w = Workload { hf_generate: HfGenerate::FullLogits, ..s.clone() };
        let old = need(&estimate(&llama8b(), &old_w).unwrap(), &old_w);
        assert!(now < 32.0 * 1e9, "fits on a 32 GB card: {:.1} GiB", now / GIB);
        assert!(old > 32.0 * 1e9, "did not fit before: {:.1} GiB", old / GIB);
        assert!(old - now > 7.5 * GIB, "{:.1} vs {:.1} GiB", old / GIB, now / GIB);
        let a = assumptions(&llama8b(), &s).into_iter().find(|a| a.id == "hf_logits").expect("it matters here");
        assert!((a.figure_if - old).abs() < 1.0, "{} vs {}", a.figure_if, old);
        assert!(a.assumed.en().contains("4.45+"), "{}", a.assumed.en());
        // At a short prompt the version does not matter and is not listed.
        let short = Workload { seq: 512, ..Workload::default() };
        assert!(assumptions(&llama8b(), &short).iter().all(|a| a.id != "hf_logits"));
    }

    #[test]
    fn peft_adds_no_dropout_inputs_where_litgpt_does() {
        let lora = Workload { mode: Mode::Lora, batch: 2, seq: 2048, ..Workload::default() };
        let hf = crate::vram::Trainer::HfTrainer.apply(&lora);
        let lit = Workload {
            checkpointing: hf.checkpointing,
            precision: hf.precision,
            ..crate::vram::Trainer::Litgpt.apply(&lora)
        };
        assert!(!hf.lora_dropout && lit.lora_dropout);
        let a = |w: &Workload| estimate(&llama8b(), w).unwrap().activations;
        assert!(a(&hf) < a(&lit), "{} vs {}", a(&hf), a(&lit));
    }

    #[test]
    fn inference_on_vllm_has_no_training_assumptions() {
        let s = Workload { framework: Framework::Vllm, ..Workload::default() };
        assert!(assumptions(&llama8b(), &s).iter().all(|a| a.id != "checkpointing" && a.id != "optimizer_states"));
    }
}
