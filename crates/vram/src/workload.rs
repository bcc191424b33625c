//! The workload: what a run does besides the model ([`Workload`]: inference engine or training
//! method, batch and sequence, GPUs and sharding, optimizer, precision, checkpointing, LoRA) and
//! its checks. The choice enums double as the `vram` command's `--mode`, `--framework`,
//! `--optimizer`, `--checkpointing` and `--sharding` values.

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

use super::error::{InputError, bad};
use super::quant::Quant;
use crate::i18n::Message;

// The `#[value]` attributes keep the command line as it was: `name` where the variant's kebab-case
// name differs, `help` for the short wording `vram --help` lists (the doc comments say more).

/// What the memory is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Serving or generating.
    #[value(help = "Serving / generation")]
    Inference,
    /// Full fine-tune (every parameter trained).
    #[value(help = "Full fine-tune")]
    Full,
    /// LoRA on a 16-bit base.
    #[value(help = "LoRA on a 16-bit base")]
    Lora,
    /// LoRA on a 4-bit NF4 base.
    #[value(help = "LoRA on a 4-bit base")]
    Qlora,
}

/// The head an encoder (BERT-style) is trained with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum EncoderHead {
    /// Sequence or token classification: a few outputs per sequence or token.
    #[default]
    #[value(help = "Sequence or token classification")]
    Classification,
    /// Masked-LM (pre-training or domain adaptation): vocabulary-sized logits for every token.
    #[value(help = "Masked-LM: vocabulary logits for every token")]
    MaskedLm,
}

/// The inference engine (how memory is allocated).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Framework {
    /// Hugging Face transformers / PyTorch (`generate`, training loops).
    #[value(help = "Hugging Face transformers / PyTorch")]
    Hf,
    /// vLLM: reserves `gpu_memory_utilization × total`, the rest of which becomes KV cache.
    #[value(help = "vLLM")]
    Vllm,
    /// llama.cpp / Ollama: weights + KV for `n_ctx` + a compute buffer.
    #[value(name = "llamacpp", help = "llama.cpp / Ollama")]
    LlamaCpp,
    /// litgpt (Lightning AI) `generate`: the output head is its own matrix (never tied) and
    /// bitsandbytes quantises it like every Linear; the KV cache is allocated at start.
    #[value(name = "litgpt", help = "litgpt (Lightning AI)")]
    LitGpt,
}

/// Hugging Face `generate` by transformers version (sources: docs/research/vram-37-inference.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HfGenerate {
    /// 4.45 or later (PR #31292): the prefill computes the last position's logits only.
    #[default]
    Current,
    /// 4.42 to 4.44: the prefill computes fp32 logits for every prompt position.
    FullLogits,
    /// Before 4.42 (PR #30536 shipped in 4.42.0): fp32 logits for every prompt position, and the
    /// old KV cache is still referenced while each step's `torch.cat` builds the new one, so two
    /// full copies exist at the end of decoding.
    CopiedCache,
}

impl HfGenerate {
    /// The behaviour of transformers `major.minor`.
    pub fn of_version(major: u32, minor: u32) -> HfGenerate {
        match (major, minor) {
            v if v < (4, 42) => HfGenerate::CopiedCache,
            v if v < (4, 45) => HfGenerate::FullLogits,
            _ => HfGenerate::Current,
        }
    }

    /// Copies of the KV cache alive at the end of decoding.
    pub fn kv_copies(self) -> f64 {
        if self == HfGenerate::CopiedCache { 2.0 } else { 1.0 }
    }

    /// Whether the prefill keeps fp32 logits for the whole prompt.
    pub fn full_logits(self) -> bool {
        self != HfGenerate::Current
    }
}

/// Optimizer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Optimizer {
    /// AdamW: two states per parameter.
    #[value(name = "adamw", help = "AdamW")]
    AdamW,
    /// bitsandbytes 8-bit AdamW: two 1-byte states.
    #[value(name = "adamw8bit", help = "8-bit AdamW (bitsandbytes)")]
    AdamW8bit,
    /// SGD with momentum: one state.
    #[value(help = "SGD with momentum")]
    Sgd,
    /// Adafactor: factored second moment, about one 4-byte state per parameter.
    #[value(help = "Adafactor")]
    Adafactor,
}

/// The training framework: its defaults are what a run gets unless the user changes them
/// (sources: docs/research/vram-training-defaults.md, summarised in ARCHITECTURE.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Trainer {
    /// Hugging Face transformers `Trainer` (with PEFT for LoRA/QLoRA).
    #[default]
    #[value(name = "hf-trainer", help = "Hugging Face Trainer (+ PEFT)")]
    HfTrainer,
    /// TRL `SFTTrainer`.
    #[value(help = "TRL SFTTrainer")]
    Trl,
    /// torchtune recipes.
    #[value(help = "torchtune")]
    Torchtune,
    /// litgpt `finetune`.
    #[value(help = "litgpt")]
    Litgpt,
    /// Axolotl (its example configs).
    #[value(help = "Axolotl")]
    Axolotl,
    /// LLaMA-Factory.
    #[value(name = "llama-factory", help = "LLaMA-Factory")]
    LlamaFactory,
    /// Unsloth.
    #[value(help = "Unsloth")]
    Unsloth,
}

impl Trainer {
    /// Every trainer, in the order a chooser lists them.
    pub const ALL: [Trainer; 7] = [
        Trainer::HfTrainer,
        Trainer::Trl,
        Trainer::Torchtune,
        Trainer::Litgpt,
        Trainer::Axolotl,
        Trainer::LlamaFactory,
        Trainer::Unsloth,
    ];

    /// The name people know it by.
    pub fn name(self) -> &'static str {
        match self {
            Trainer::HfTrainer => "HF Trainer",
            Trainer::Trl => "TRL",
            Trainer::Torchtune => "torchtune",
            Trainer::Litgpt => "litgpt",
            Trainer::Axolotl => "Axolotl",
            Trainer::LlamaFactory => "LLaMA-Factory",
            Trainer::Unsloth => "Unsloth",
        }
    }

    /// `s` with this trainer's defaults for its mode: gradient checkpointing, precision, loss,
    /// LoRA rank and targets. The other settings stay as they are.
    ///
    /// LoRA dropout: PEFT's default is 0.0 (HF Trainer, TRL, LLaMA-Factory, Unsloth; torchtune's
    /// configs too), litgpt's 0.05, Axolotl's examples 0.05.
    ///
    /// - HF Trainer: `gradient_checkpointing=False`, except QLoRA, where PEFT's
    ///   `prepare_model_for_kbit_training` turns it on; bf16/fp16 autocast over fp32 weights
    ///   (mixed); the full fp32 logits (`ForCausalLMLoss` upcasts); PEFT's r = 8 on q and v.
    /// - TRL SFTTrainer: checkpointing on (since 0.22), bf16 autocast over a float32 load
    ///   (mixed), the `chunked_nll` loss (since 1.7); PEFT's LoRA defaults.
    /// - torchtune: `dtype: bf16`, activation checkpointing on in the single-device configs,
    ///   `CEWithChunkedOutputLoss`; LoRA r = 8 on attention and MLP.
    /// - litgpt: `bf16-mixed` on the command line, no checkpointing on one GPU, logits kept;
    ///   r = 8 on q and v.
    /// - Axolotl (example configs): bf16, `gradient_checkpointing: true`, full logits (CCE/Liger
    ///   only where configured); r = 32 on every linear layer.
    /// - LLaMA-Factory: checkpointing on, trainable parameters upcast to fp32 (mixed), full
    ///   logits; `lora_target: all`, r = 8.
    /// - Unsloth: its gradient checkpointing, bf16, a fused chunked loss; r = 16 on all seven
    ///   projections.
    pub fn apply(self, s: &Workload) -> Workload {
        use Checkpointing::{Full, None};
        let adapters = matches!(s.mode, Mode::Lora | Mode::Qlora);
        let (checkpointing, precision, chunked_loss, rank, all_linear, dropout) = match self {
            Trainer::HfTrainer => {
                (if s.mode == Mode::Qlora { Full } else { None }, Precision::Mixed, false, 8, false, false)
            }
            Trainer::Trl => (Full, Precision::Mixed, true, 8, false, false),
            Trainer::Torchtune => (Full, Precision::Bf16True, true, 8, true, false),
            Trainer::Litgpt => (None, Precision::Mixed, false, 8, false, true),
            Trainer::Axolotl => (Full, Precision::Bf16True, false, 32, true, true),
            Trainer::LlamaFactory => (Full, Precision::Mixed, false, 8, true, false),
            Trainer::Unsloth => (Full, Precision::Bf16True, true, 16, true, false),
        };
        Workload {
            trainer: self,
            checkpointing,
            // An fp32 run stays fp32; otherwise the trainer's precision.
            precision: if s.precision == Precision::Fp32 { Precision::Fp32 } else { precision },
            chunked_loss,
            lora_rank: if adapters { rank } else { s.lora_rank },
            lora_all_linear: if adapters { all_linear } else { s.lora_all_linear },
            lora_dropout: dropout,
            kbit_upcast: self == Trainer::HfTrainer && s.mode == Mode::Qlora,
            ..s.clone()
        }
    }
}

/// Training precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    /// Everything in bf16 (torchtune `dtype: bf16`, litgpt `bf16-true`): 2-byte weights, gradients
    /// and optimizer states.
    #[value(name = "bf16", help = "Everything bf16")]
    Bf16True,
    /// Mixed precision (autocast): fp32 weights, gradients and optimizer states, with 16-bit
    /// copies of the weights for the matrix multiplications.
    #[value(help = "bf16/fp16 autocast over fp32 master weights")]
    Mixed,
    /// Everything fp32.
    #[value(help = "Everything fp32")]
    Fp32,
}

/// The attention implementation of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Attention {
    /// As transformers picks it for the model: eager for encoder models, T5, DeBERTa and
    /// Gemma-2; fused (SDPA / FlashAttention) otherwise.
    #[default]
    #[value(help = "As transformers picks it for the model")]
    Auto,
    /// The score matrix is materialised and kept for backward.
    #[value(help = "Eager: the score matrix is kept")]
    Eager,
    /// SDPA / FlashAttention: no score matrix.
    #[value(help = "SDPA / FlashAttention")]
    Fused,
}

impl Attention {
    /// Whether `arch` runs with fused attention under this choice.
    pub fn fused_for(self, arch: &super::arch::Arch) -> bool {
        match self {
            Attention::Auto => !arch.eager_by_default(),
            Attention::Eager => false,
            Attention::Fused => true,
        }
    }
}

/// Activation checkpointing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Checkpointing {
    /// Every activation kept.
    #[value(help = "Keep every activation")]
    None,
    /// Attention internals recomputed.
    #[value(help = "Recompute attention internals")]
    Selective,
    /// Only layer inputs kept; each layer recomputed in backward.
    #[value(help = "Recompute each layer")]
    Full,
}

/// How the work is spread over GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Sharding {
    /// Each GPU holds a full copy (data parallel / DDP, or one GPU).
    #[value(name = "dp", help = "Each GPU holds a full copy (data parallel)")]
    Replicated,
    /// Tensor parallel: weights, KV heads and activations split.
    #[value(name = "tp", help = "Tensor parallel")]
    Tensor,
    /// FSDP / ZeRO-3: weights, gradients and optimizer states sharded; one layer gathered at a time.
    #[value(help = "FSDP / ZeRO-3")]
    Fsdp,
    /// Layers split in sequence over the GPUs (pipeline / `device_map="auto"`).
    #[value(help = "Layers split over the GPUs")]
    Layers,
}

/// The largest batch the calculator takes, searches and offers: one ceiling for the command line,
/// the app's input and the solver.
pub const MAX_BATCH: u32 = 65_536;

/// The workload: everything besides the architecture.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    /// Inference or a training method.
    pub mode: Mode,
    /// The training framework whose defaults the training settings started from.
    #[serde(default)]
    pub trainer: Trainer,
    /// Weight format (inference; QLoRA uses NF4 regardless).
    pub quant: Quant,
    /// Engine (inference).
    pub framework: Framework,
    /// Sequences at once.
    pub batch: u32,
    /// Tokens per sequence (context for inference: prompt + generated).
    pub seq: u32,
    /// Bytes per KV-cache element (2 for f16, 1 for fp8/q8, ~0.56 for q4_0).
    pub kv_bytes: f64,
    /// GPUs.
    pub gpus: u32,
    /// How they share the work.
    pub sharding: Sharding,
    /// Optimizer (training).
    pub optimizer: Optimizer,
    /// Training precision.
    pub precision: Precision,
    /// Activation checkpointing (training).
    pub checkpointing: Checkpointing,
    /// Fused (flash / SDPA) attention: no seq² score matrix.
    pub flash_attention: bool,
    /// LoRA rank.
    pub lora_rank: u32,
    /// LoRA on every linear layer (else only q and v).
    pub lora_all_linear: bool,
    /// vLLM `gpu_memory_utilization`.
    pub vllm_utilization: f64,
    /// Total memory of the GPU, bytes (vLLM sizes its KV cache from it).
    pub gpu_total_bytes: Option<f64>,
    /// The loss is computed over chunks of the output (torchtune's CEWithChunkedOutputLoss,
    /// Unsloth, Liger): no full fp32 copy of the logits.
    #[serde(default)]
    pub chunked_loss: bool,
    /// The training loop keeps the model's fp32 logits (batch × tokens × vocabulary, 4 bytes
    /// each) in a variable until backward ends, so they are held through the whole backward
    /// (a loop without `del logits` before `loss.backward()`: torchtune before 0.3, torchtitan
    /// before its PR #391, many hand-written loops). Hugging Face's Trainer drops them with the
    /// model's outputs. Left out of the JSON when off, so calibration points saved before it
    /// existed keep their key.
    #[serde(default, skip_serializing_if = "is_false")]
    pub held_logits: bool,
    /// bitsandbytes before 0.43: 4-bit weights were quantised from fp16 (`Params4bit.cuda` called
    /// `.half()`), so with a bf16 compute dtype every dequantising matmul makes the fp16 matrix
    /// and then its bf16 cast (`dequantize_4bit(B).to(A.dtype)`): two copies at once. From 0.43
    /// the weight keeps its own dtype and the cast is a no-op. Left out of the JSON when off.
    #[serde(default, skip_serializing_if = "is_false")]
    pub bnb_before_0_43: bool,
    /// LoRA dropout is on (litgpt's 0.05, Axolotl's examples): each adapted layer keeps its
    /// dropped input and mask. PEFT's default is 0.0, which keeps nothing extra.
    #[serde(default = "yes")]
    pub lora_dropout: bool,
    /// QLoRA: the parameters that are not 4-bit are upcast to fp32 (PEFT's
    /// `prepare_model_for_kbit_training`, which a plain HF Trainer run calls; TRL ≥ 0.27, Axolotl,
    /// LLaMA-Factory and Unsloth do not).
    #[serde(default)]
    pub kbit_upcast: bool,
    /// How the transformers version in use runs `generate` (inference with the Hugging Face
    /// engine): the logits its prefill keeps and how its KV cache grows.
    #[serde(default)]
    pub hf_generate: HfGenerate,
    /// Of `seq`, the tokens `generate` adds after the prompt (inference with the Hugging Face
    /// engine); 0 when not known, and the whole context is then taken as the prompt (the larger
    /// prefill).
    #[serde(default)]
    pub new_tokens: u32,
    /// The checkpoint is stored already quantised (a bitsandbytes 4-bit repository, GPTQ, AWQ: a
    /// `quantization_config` in its config.json), so no 16-bit weights pass through the GPU at load.
    #[serde(default)]
    pub prequantized: bool,
    /// The head an encoder is trained with.
    #[serde(default)]
    pub encoder_head: EncoderHead,
    /// Image-generation settings (diffusion models only).
    #[serde(default)]
    pub image: super::image_settings::ImageSettings,
}

fn yes() -> bool {
    true
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            mode: Mode::Inference,
            trainer: Trainer::HfTrainer,
            quant: Quant::Bf16,
            framework: Framework::Hf,
            batch: 1,
            seq: 4096,
            kv_bytes: 2.0,
            gpus: 1,
            sharding: Sharding::Replicated,
            optimizer: Optimizer::AdamW,
            precision: Precision::Bf16True,
            checkpointing: Checkpointing::Full,
            flash_attention: true,
            lora_rank: 8,
            lora_all_linear: false,
            vllm_utilization: 0.9,
            gpu_total_bytes: None,
            chunked_loss: false,
            held_logits: false,
            bnb_before_0_43: false,
            lora_dropout: true,
            kbit_upcast: false,
            hf_generate: HfGenerate::Current,
            new_tokens: 0,
            prequantized: false,
            encoder_head: EncoderHead::Classification,
            image: super::image_settings::ImageSettings::default(),
        }
    }
}

impl Workload {
    /// The format the weights are stored in: the chosen one for inference, NF4 (or NF4 with
    /// double quantisation) for a QLoRA base, bf16 (fp32 when training in fp32) otherwise.
    pub fn weight_quant(&self) -> Quant {
        match self.mode {
            // A GPTQ/AWQ base is trained with LoRA the same way (PEFT over AutoGPTQ/AutoAWQ).
            Mode::Qlora if matches!(self.quant, Quant::Nf4Dq | Quant::Gptq4) => self.quant,
            Mode::Qlora => Quant::Nf4,
            Mode::Full if self.precision != Precision::Bf16True => Quant::Fp32,
            Mode::Full | Mode::Lora => Quant::Bf16,
            Mode::Inference => self.quant,
        }
    }

    /// The weights go through bitsandbytes' 4-bit path (nf4, nf4-dq), so its version
    /// ([`Workload::bnb_before_0_43`]) matters.
    pub fn bnb_4bit(&self) -> bool {
        matches!(self.weight_quant(), Quant::Nf4 | Quant::Nf4Dq)
    }

    /// The weight format in words: "weights BF16", "weights NF4 (QLoRA base)".
    pub fn weights_label(&self) -> Message {
        let q = self.weight_quant().name().to_uppercase();
        if self.mode == Mode::Qlora {
            crate::msg!("weights {quant} (QLoRA base)", quant = q)
        } else {
            crate::msg!("weights {quant}", quant = q)
        }
    }

    /// The GPUs and how they share the work, in plain words: "1 GPU", "2 GPUs, each with a full
    /// copy (data parallel)", "2 GPUs, model split across them (tensor parallel)", "sharded
    /// across 4 GPUs (FSDP)", "4 GPUs, layers split across them (pipeline)".
    pub fn gpus_label(&self) -> Message {
        let n = self.gpus;
        if n <= 1 {
            return crate::msg!("1 GPU");
        }
        match self.sharding {
            Sharding::Replicated => crate::msg!("{n} GPUs, each with a full copy (data parallel)", n = n),
            Sharding::Tensor => crate::msg!("{n} GPUs, model split across them (tensor parallel)", n = n),
            Sharding::Fsdp => crate::msg!("sharded across {n} GPUs (FSDP)", n = n),
            Sharding::Layers => crate::msg!("{n} GPUs, layers split across them (pipeline)", n = n),
        }
    }

    /// The method in words: "inference", "full fine-tune", "LoRA", "QLoRA".
    pub fn mode_label(&self) -> Message {
        match self.mode {
            Mode::Inference => crate::msg!("inference"),
            Mode::Full => crate::msg!("full fine-tune"),
            Mode::Lora => Message::data("LoRA"),
            Mode::Qlora => Message::data("QLoRA"),
        }
    }

    /// One line for the CLI and reports: "QLoRA, 1 × 4096 tokens, 1 GPU, weights NF4 (QLoRA base)".
    pub fn summary(&self) -> Message {
        self.summary_with(None)
    }

    /// [`Workload::summary`] for `arch`: an image model's run is described in images and pixels.
    pub fn summary_for(&self, arch: &super::arch::Arch) -> Message {
        self.summary_with(super::image_settings::Family::of(arch))
    }

    fn summary_with(&self, family: Option<super::image_settings::Family>) -> Message {
        if let Some(f) = family {
            let (w, h) = self.image.size(f);
            if self.mode != Mode::Inference {
                return crate::msg!(
                    "{mode}, {batch} × {w}×{h} px, {weights}",
                    mode = self.mode_label(),
                    batch = self.batch,
                    w = w,
                    h = h,
                    weights = self.weights_label()
                );
            }
            return crate::msg!(
                "image generation, {batch} × {w}×{h} px, weights {weights}",
                batch = self.batch,
                w = w,
                h = h,
                weights = self.quant.name().to_uppercase()
            );
        }
        crate::msg!(
            "{mode}, {batch} × {seq} tokens, {gpus}, {weights}",
            mode = self.mode_label(),
            batch = self.batch,
            seq = self.seq,
            gpus = self.gpus_label(),
            weights = self.weights_label()
        )
    }

    /// Checks the numbers; every problem names its field.
    pub fn validate(&self) -> Result<(), InputError> {
        for (field, v) in [("width", self.image.width), ("height", self.image.height)] {
            if v > 16_384 || (v != 0 && v < 64) {
                return Err(bad(field, crate::msg!("must be between 64 and 16384 pixels")));
            }
        }
        if self.batch == 0 || self.batch > MAX_BATCH {
            return Err(bad("batch", crate::msg!("must be between 1 and 65536")));
        }
        if self.seq == 0 || self.seq > 1 << 24 {
            return Err(bad("seq", crate::msg!("must be between 1 and 16,777,216 tokens")));
        }
        if self.new_tokens >= self.seq {
            return Err(bad(
                "new_tokens",
                crate::msg!("must be fewer than the tokens per sequence (the prompt needs at least one)"),
            ));
        }
        if self.gpus == 0 || self.gpus > 4096 {
            return Err(bad("gpus", crate::msg!("must be between 1 and 4096")));
        }
        if !(self.kv_bytes > 0.0 && self.kv_bytes <= 4.0) {
            return Err(bad("kv_bytes", crate::msg!("must be between 0 and 4 bytes per element")));
        }
        if !(self.vllm_utilization > 0.0 && self.vllm_utilization <= 1.0) {
            return Err(bad("vllm_utilization", crate::msg!("must be in (0, 1]")));
        }
        if matches!(self.mode, Mode::Lora | Mode::Qlora) && (self.lora_rank == 0 || self.lora_rank > 65_536) {
            return Err(bad("lora_rank", crate::msg!("must be between 1 and 65536")));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_follow_the_quantisation_used_and_say_the_gpus_in_words() {
        let q = Workload { mode: Mode::Qlora, ..Workload::default() };
        assert_eq!(q.weight_quant(), Quant::Nf4);
        assert!(q.summary().en().contains("weights NF4"), "{}", q.summary().en());
        assert!(!q.summary().en().to_lowercase().contains("bf16"), "{}", q.summary().en());
        let inf = Workload { quant: Quant::GgufQ4KM, ..Workload::default() };
        assert_eq!(inf.weights_label().en(), "weights Q4_K_M");
        assert_eq!(Workload { mode: Mode::Lora, quant: Quant::Fp8, ..Workload::default() }.weight_quant(), Quant::Bf16);
        assert_eq!(Workload::default().gpus_label().en(), "1 GPU");
        let n = |gpus, sharding| Workload { gpus, sharding, ..Workload::default() }.gpus_label();
        assert_eq!(n(2, Sharding::Replicated).en(), "2 GPUs, each with a full copy (data parallel)");
        assert_eq!(n(2, Sharding::Tensor).en(), "2 GPUs, model split across them (tensor parallel)");
        assert_eq!(n(4, Sharding::Fsdp).en(), "sharded across 4 GPUs (FSDP)");
        assert!(!Workload::default().summary().en().contains("GPU(s)"));
        assert!(!Workload::default().summary().en().contains("Replicated"));
    }
}
