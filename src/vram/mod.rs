//! The VRAM calculator: a per-GPU breakdown (weights, KV cache, activations, gradients, optimizer
//! states, CUDA context, framework overhead, allocator slack) for inference (Hugging Face
//! `generate`, vLLM, llama.cpp) and training (full fine-tune, LoRA, QLoRA), one GPU or sharded.
//!
//! Formulas and constants come from ../shared/knowledge/vram.md (§1 formulas, §1.6 overheads,
//! §6 engine models); tests/vram_accuracy.rs compares the estimates with the measured rows of §4,
//! like with like (allocated vs reserved vs nvidia-smi). Pure code: no I/O, no allocation beyond
//! the notes, a few microseconds per estimate.

pub mod presets;

use serde::{Deserialize, Serialize};

/// 2^30 bytes.
pub const GIB: f64 = 1_073_741_824.0;

/// Mixture-of-experts MLP.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Moe {
    /// Routed experts per MoE layer.
    pub experts: u32,
    /// Experts used per token.
    pub active: u32,
    /// Intermediate size of one expert.
    pub expert_intermediate: u32,
    /// Always-on shared experts per MoE layer.
    #[serde(default)]
    pub shared_experts: u32,
    /// Leading layers with a dense MLP (of `intermediate`) instead of experts.
    #[serde(default)]
    pub dense_layers: u32,
}

/// Multi-head latent attention (DeepSeek-V2/V3): one compressed latent per token and layer is cached.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Mla {
    /// `kv_lora_rank` (512 on DeepSeek-V3).
    pub kv_lora_rank: u32,
    /// `qk_rope_head_dim` (64 on DeepSeek-V3).
    pub rope_dim: u32,
}

/// What kind of network; the estimator's formulas are for decoder-only transformers, other kinds
/// use their published parameter count for the weights.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelKind {
    /// Decoder-only transformer (LLM).
    #[default]
    Decoder,
    /// Encoder-only transformer (BERT).
    Encoder,
    /// Diffusion model (weights only).
    Diffusion,
}

/// A model's architecture (the fields of a Hugging Face `config.json` that matter for memory).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Arch {
    /// Display name.
    pub name: String,
    /// Network kind.
    #[serde(default)]
    pub kind: ModelKind,
    /// Transformer layers.
    pub layers: u32,
    /// Hidden size.
    pub hidden: u32,
    /// Attention (query) heads.
    pub heads: u32,
    /// Key/value heads (GQA; 1 = MQA; = heads for MHA).
    pub kv_heads: u32,
    /// Head dimension (default hidden / heads).
    #[serde(default)]
    pub head_dim: Option<u32>,
    /// MLP intermediate size (dense layers).
    pub intermediate: u32,
    /// Vocabulary size.
    pub vocab: u32,
    /// Input embeddings and output head share one matrix.
    #[serde(default)]
    pub tied_embeddings: bool,
    /// Gated MLP (SwiGLU/GeGLU: three matrices) rather than two.
    #[serde(default = "default_true")]
    pub gated_mlp: bool,
    /// Biases on q, k, v (Qwen2).
    #[serde(default)]
    pub qkv_bias: bool,
    /// Mixture of experts.
    #[serde(default)]
    pub moe: Option<Moe>,
    /// Latent KV (MLA).
    #[serde(default)]
    pub mla: Option<Mla>,
    /// Sliding-window attention size, when the model has one.
    #[serde(default)]
    pub sliding_window: Option<u32>,
    /// Maximum context.
    #[serde(default)]
    pub context: Option<u32>,
    /// Published total parameters, billions (used when the shape formula does not cover the
    /// architecture, e.g. MLA attention or diffusion).
    #[serde(default)]
    pub params_b: Option<f64>,
    /// A short note shown with the preset.
    #[serde(default)]
    pub note: String,
}

fn default_true() -> bool {
    true
}

/// An input the estimator cannot use, naming the field.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct InputError {
    /// The field.
    pub field: &'static str,
    /// What is wrong and what would be valid.
    pub problem: String,
}

fn bad(field: &'static str, problem: impl Into<String>) -> InputError {
    InputError { field, problem: problem.into() }
}

/// Parameter counts by tensor group.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Params {
    /// Input embeddings.
    pub embed: f64,
    /// Output head (0 when tied).
    pub head: f64,
    /// Linear layers of attention and MLP (all experts), the part quantisers compress.
    pub linear: f64,
    /// Norms and biases.
    pub other: f64,
}

impl Params {
    /// Every parameter.
    pub fn total(&self) -> f64 {
        self.embed + self.head + self.linear + self.other
    }
}

impl Arch {
    /// Checks the shape; every problem names its field.
    pub fn validate(&self) -> Result<(), InputError> {
        const MAX: u32 = 1 << 20;
        for (field, v) in
            [("layers", self.layers), ("hidden", self.hidden), ("heads", self.heads), ("kv_heads", self.kv_heads)]
        {
            if v == 0 {
                return Err(bad(field, "must be at least 1"));
            }
            if v > MAX {
                return Err(bad(field, format!("{v} is not a plausible size")));
            }
        }
        if self.kind == ModelKind::Decoder && self.vocab == 0 && self.params_b.is_none() {
            return Err(bad("vocab", "must be at least 1"));
        }
        if self.vocab > 4 * MAX || self.intermediate > 4 * MAX {
            return Err(bad("intermediate/vocab", "not a plausible size"));
        }
        if self.kv_heads > self.heads || !self.heads.is_multiple_of(self.kv_heads) {
            return Err(bad(
                "kv_heads",
                format!("{} key/value heads must divide the {} attention heads", self.kv_heads, self.heads),
            ));
        }
        if self.head_dim.is_none() && !self.hidden.is_multiple_of(self.heads) {
            return Err(bad(
                "heads",
                format!("{} heads do not divide the hidden size {}; give head_dim", self.heads, self.hidden),
            ));
        }
        if let Some(m) = &self.moe {
            if m.experts == 0 || m.active == 0 || m.active > m.experts {
                return Err(bad("moe", "experts must be at least 1 and active experts between 1 and experts"));
            }
            if m.dense_layers > self.layers {
                return Err(bad("moe.dense_layers", "more dense layers than layers"));
            }
        }
        if let Some(p) = self.params_b
            && !(p > 0.0 && p < 100_000.0)
        {
            return Err(bad("params_b", "must be a positive number of billions"));
        }
        Ok(())
    }

    /// A plain decoder (dense, gated MLP, untied embeddings, no biases) with the given shape; the
    /// other fields take their defaults.
    pub fn decoder(
        name: &str,
        layers: u32,
        hidden: u32,
        heads: u32,
        kv_heads: u32,
        intermediate: u32,
        vocab: u32,
    ) -> Arch {
        Arch {
            name: name.to_string(),
            kind: ModelKind::Decoder,
            layers,
            hidden,
            heads,
            kv_heads,
            head_dim: None,
            intermediate,
            vocab,
            tied_embeddings: false,
            gated_mlp: true,
            qkv_bias: false,
            moe: None,
            mla: None,
            sliding_window: None,
            context: None,
            params_b: None,
            note: String::new(),
        }
    }

    /// Head dimension.
    pub fn head_dim(&self) -> u32 {
        self.head_dim.unwrap_or(self.hidden / self.heads.max(1))
    }

    /// Parameters by group, from the shapes (or the published total when given).
    pub fn params(&self) -> Params {
        let (h, l, v) = (f64::from(self.hidden), f64::from(self.layers), f64::from(self.vocab));
        let (nq, nkv, d) = (f64::from(self.heads), f64::from(self.kv_heads), f64::from(self.head_dim()));
        let attn = h * nq * d + 2.0 * h * nkv * d + nq * d * h;
        let mats = if self.gated_mlp { 3.0 } else { 2.0 };
        let mlp_dense = mats * h * f64::from(self.intermediate);
        let mlp_total = match &self.moe {
            Some(m) => {
                let moe_layers = l - f64::from(m.dense_layers);
                let per = mats * h * f64::from(m.expert_intermediate) * f64::from(m.experts + m.shared_experts)
                    + h * f64::from(m.experts);
                f64::from(m.dense_layers) * mlp_dense + moe_layers * per
            }
            None => l * mlp_dense,
        };
        let bias = if self.qkv_bias { l * (nq * d + 2.0 * nkv * d) } else { 0.0 };
        let embed = v * h;
        let head = if self.tied_embeddings { 0.0 } else { v * h };
        let other = l * 2.0 * h + h + bias;
        let linear = l * attn + mlp_total;
        match self.params_b {
            Some(total) => {
                let total = total * 1e9;
                let linear = (total - embed - head - other).max(0.0);
                Params { embed: embed.min(total), head: head.min(total), linear, other: other.min(total) }
            }
            None => Params { embed, head, linear, other },
        }
    }

    /// Parameters used per token (MoE: only the active experts), for activation sizes.
    fn active_intermediate(&self) -> f64 {
        match &self.moe {
            Some(m) => f64::from(m.expert_intermediate) * f64::from(m.active + m.shared_experts),
            None => f64::from(self.intermediate),
        }
    }

    /// KV-cache elements per token and layer (K and V together; MLA: the latent).
    pub fn kv_elems_per_token_layer(&self) -> f64 {
        match &self.mla {
            Some(m) => f64::from(m.kv_lora_rank + m.rope_dim),
            None => 2.0 * f64::from(self.kv_heads) * f64::from(self.head_dim()),
        }
    }
}

/// How the weights are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Quant {
    /// 32-bit float.
    Fp32,
    /// fp16 or bf16.
    Bf16,
    /// FP8 (E4M3/E5M2); embeddings and head stay 16-bit.
    Fp8,
    /// bitsandbytes LLM.int8; embeddings and head stay 16-bit.
    Int8,
    /// GPTQ or AWQ 4-bit, group size 128.
    Gptq4,
    /// bitsandbytes NF4 (QLoRA), 64-weight blocks with an fp32 scale.
    Nf4,
    /// NF4 with double quantisation of the scales.
    Nf4Dq,
    /// GGUF Q8_0.
    GgufQ8_0,
    /// GGUF Q6_K.
    GgufQ6K,
    /// GGUF Q5_K_M file mix.
    GgufQ5KM,
    /// GGUF Q4_K_M file mix.
    GgufQ4KM,
    /// GGUF Q4_0.
    GgufQ4_0,
    /// GGUF Q3_K_L file mix.
    GgufQ3KL,
    /// GGUF Q3_K_S file mix.
    GgufQ3KS,
    /// GGUF Q2_K file mix.
    GgufQ2K,
}

impl Quant {
    /// Every format, in the order the UI lists them.
    pub const ALL: [Quant; 15] = [
        Quant::Fp32,
        Quant::Bf16,
        Quant::Fp8,
        Quant::Int8,
        Quant::Gptq4,
        Quant::Nf4,
        Quant::Nf4Dq,
        Quant::GgufQ8_0,
        Quant::GgufQ6K,
        Quant::GgufQ5KM,
        Quant::GgufQ4KM,
        Quant::GgufQ4_0,
        Quant::GgufQ3KL,
        Quant::GgufQ3KS,
        Quant::GgufQ2K,
    ];

    /// The name used on the command line and in the UI.
    pub fn name(self) -> &'static str {
        match self {
            Quant::Fp32 => "fp32",
            Quant::Bf16 => "bf16",
            Quant::Fp8 => "fp8",
            Quant::Int8 => "int8",
            Quant::Gptq4 => "gptq4",
            Quant::Nf4 => "nf4",
            Quant::Nf4Dq => "nf4-dq",
            Quant::GgufQ8_0 => "q8_0",
            Quant::GgufQ6K => "q6_k",
            Quant::GgufQ5KM => "q5_k_m",
            Quant::GgufQ4KM => "q4_k_m",
            Quant::GgufQ4_0 => "q4_0",
            Quant::GgufQ3KL => "q3_k_l",
            Quant::GgufQ3KS => "q3_k_s",
            Quant::GgufQ2K => "q2_k",
        }
    }

    /// Parses a name (`bf16`, `fp16`, `awq`, `Q4_K_M`...).
    pub fn parse(s: &str) -> Result<Quant, String> {
        let s = s.trim().to_ascii_lowercase().replace('-', "_");
        let q = match s.as_str() {
            "fp16" | "float16" | "half" => Quant::Bf16,
            "awq" | "awq4" | "gptq" | "int4" => Quant::Gptq4,
            "nf4_dq" | "nf4dq" | "qlora" => Quant::Nf4Dq,
            "f16" => Quant::Bf16,
            "f32" | "float32" => Quant::Fp32,
            other => match Quant::ALL.iter().find(|q| q.name().replace('-', "_") == other) {
                Some(q) => *q,
                None => {
                    return Err(format!(
                        "unknown weight format '{s}'; choose one of: {}",
                        Quant::ALL.iter().map(|q| q.name()).collect::<Vec<_>>().join(", ")
                    ));
                }
            },
        };
        Ok(q)
    }

    /// True for GGUF formats (llama.cpp).
    pub fn is_gguf(self) -> bool {
        self.name().starts_with('q')
    }

    /// Bits per weight of the compressed linear layers. GGUF file mixes use the bits per weight
    /// measured on whole files (vram.md §1.1: llama.cpp's quantize table), which already include
    /// their higher-precision tensors.
    fn linear_bits(self) -> f64 {
        match self {
            Quant::Fp32 => 32.0,
            Quant::Bf16 => 16.0,
            Quant::Fp8 | Quant::Int8 => 8.0,
            Quant::Gptq4 => 4.0 + 16.0 / 128.0 + 4.0 / 128.0,
            Quant::Nf4 => 4.5,
            Quant::Nf4Dq => 4.127,
            Quant::GgufQ8_0 => 8.5008,
            Quant::GgufQ6K => 6.5633,
            Quant::GgufQ5KM => 5.7036,
            Quant::GgufQ4KM => 4.8944,
            Quant::GgufQ4_0 => 4.5,
            Quant::GgufQ3KL => 4.2979,
            Quant::GgufQ3KS => 3.6429,
            Quant::GgufQ2K => 3.1593,
        }
    }

    /// Bits per weight of embeddings and output head.
    fn embedding_bits(self) -> f64 {
        match self {
            Quant::Fp32 => 32.0,
            Quant::GgufQ4_0 => 6.5625, // the output tensor gets Q6_K
            q if q.is_gguf() => q.linear_bits(),
            _ => 16.0,
        }
    }
}

/// What the memory is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Serving or generating.
    Inference,
    /// Full fine-tune (every parameter trained).
    Full,
    /// LoRA on a 16-bit base.
    Lora,
    /// LoRA on a 4-bit NF4 base.
    Qlora,
}

/// The inference engine (how memory is allocated).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Framework {
    /// Hugging Face transformers / PyTorch (`generate`, training loops).
    Hf,
    /// vLLM: reserves `gpu_memory_utilization × total`, the rest of which becomes KV cache.
    Vllm,
    /// llama.cpp / Ollama: weights + KV for `n_ctx` + a compute buffer.
    LlamaCpp,
}

/// Optimizer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Optimizer {
    /// AdamW: two states per parameter.
    AdamW,
    /// bitsandbytes 8-bit AdamW: two 1-byte states.
    AdamW8bit,
    /// SGD with momentum: one state.
    Sgd,
    /// Adafactor: factored second moment, about one 4-byte state per parameter.
    Adafactor,
}

/// Training precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    /// Everything in bf16 (torchtune `dtype: bf16`, litgpt `bf16-true`): 2-byte weights, gradients
    /// and optimizer states.
    Bf16True,
    /// Mixed precision: 16-bit weights and gradients, fp32 master weights and optimizer states.
    Mixed,
    /// Everything fp32.
    Fp32,
}

/// Activation checkpointing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Checkpointing {
    /// Every activation kept.
    None,
    /// Attention internals recomputed.
    Selective,
    /// Only layer inputs kept; each layer recomputed in backward.
    Full,
}

/// How the work is spread over GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sharding {
    /// Each GPU holds a full copy (data parallel / DDP, or one GPU).
    Replicated,
    /// Tensor parallel: weights, KV heads and activations split.
    Tensor,
    /// FSDP / ZeRO-3: weights, gradients and optimizer states sharded; one layer gathered at a time.
    Fsdp,
    /// Layers split in sequence over the GPUs (pipeline / `device_map="auto"`).
    Layers,
}

/// Everything besides the architecture.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Inference or a training method.
    pub mode: Mode,
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
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            mode: Mode::Inference,
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
        }
    }
}

impl Settings {
    /// Checks the numbers; every problem names its field.
    pub fn validate(&self) -> Result<(), InputError> {
        if self.batch == 0 || self.batch > 1 << 20 {
            return Err(bad("batch", "must be between 1 and 1,048,576"));
        }
        if self.seq == 0 || self.seq > 1 << 24 {
            return Err(bad("seq", "must be between 1 and 16,777,216 tokens"));
        }
        if self.gpus == 0 || self.gpus > 4096 {
            return Err(bad("gpus", "must be between 1 and 4096"));
        }
        if !(self.kv_bytes > 0.0 && self.kv_bytes <= 4.0) {
            return Err(bad("kv_bytes", "must be between 0 and 4 bytes per element"));
        }
        if !(self.vllm_utilization > 0.0 && self.vllm_utilization <= 1.0) {
            return Err(bad("vllm_utilization", "must be in (0, 1]"));
        }
        if matches!(self.mode, Mode::Lora | Mode::Qlora) && (self.lora_rank == 0 || self.lora_rank > 65_536) {
            return Err(bad("lora_rank", "must be between 1 and 65536"));
        }
        Ok(())
    }
}

/// Where the memory goes, bytes per GPU.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Breakdown {
    /// Model weights (this GPU's share).
    pub weights: f64,
    /// KV cache.
    pub kv_cache: f64,
    /// Activations at the peak (incl. logits).
    pub activations: f64,
    /// Gradients.
    pub gradients: f64,
    /// Optimizer states (and fp32 master weights under mixed precision).
    pub optimizer: f64,
    /// CUDA context (seen by nvidia-smi, not by PyTorch's counters).
    pub cuda_context: f64,
    /// Framework buffers (cuBLAS workspace, NCCL, vLLM non-torch memory, llama.cpp compute buffer).
    pub framework: f64,
    /// Caching-allocator slack (reserved but unallocated).
    pub allocator_slack: f64,
    /// Sum: what nvidia-smi would show for this process.
    pub total: f64,
    /// Parameters (all, billions).
    pub params_b: f64,
    /// Trainable parameters (billions; LoRA adapters or all).
    pub trainable_b: f64,
    /// vLLM: KV-cache memory the engine would have (util × total − the rest); `None` elsewhere.
    pub vllm_kv_available: Option<f64>,
    /// What the figures assume.
    pub notes: Vec<String>,
}

impl Breakdown {
    /// What PyTorch's `max_memory_allocated()` would report.
    pub fn allocated(&self) -> f64 {
        self.weights + self.kv_cache + self.activations + self.gradients + self.optimizer
    }
    /// What `max_memory_reserved()` would report.
    pub fn reserved(&self) -> f64 {
        self.allocated() + self.allocator_slack
    }
}

/// CUDA context with lazy module loading (PyTorch PR #86509: 287 MB lazy, 667 MB eager).
const CUDA_CONTEXT: f64 = 0.5 * GIB;
/// cuBLAS(Lt) workspaces and small library buffers.
const LIBRARY_BUFFERS: f64 = 64.0 * 1_048_576.0;

/// Estimates the memory of `arch` under `s`.
pub fn estimate(arch: &Arch, s: &Settings) -> Result<Breakdown, InputError> {
    arch.validate()?;
    s.validate()?;
    let p = arch.params();
    let n = f64::from(s.gpus);
    let (b, t) = (f64::from(s.batch), f64::from(s.seq));
    let (h, l, v) = (f64::from(arch.hidden), f64::from(arch.layers), f64::from(arch.vocab));
    let mut out = Breakdown { params_b: p.total() / 1e9, ..Breakdown::default() };

    // Weights as stored.
    let quant = match s.mode {
        Mode::Qlora => {
            if s.quant == Quant::Nf4Dq {
                Quant::Nf4Dq
            } else {
                Quant::Nf4
            }
        }
        Mode::Full => match s.precision {
            Precision::Fp32 => Quant::Fp32,
            _ => Quant::Bf16,
        },
        Mode::Lora => Quant::Bf16,
        Mode::Inference => s.quant,
    };
    let weight_bytes = (p.linear * quant.linear_bits() + (p.embed + p.head) * quant.embedding_bits()) / 8.0
        + p.other * if quant == Quant::Fp32 { 4.0 } else { 2.0 };
    let split = match s.sharding {
        Sharding::Replicated => 1.0,
        _ => n,
    };
    out.weights = weight_bytes / split;
    if s.sharding == Sharding::Fsdp && n > 1.0 {
        // One layer is gathered in full at a time (two with prefetch).
        out.weights += 2.0 * weight_bytes / l.max(1.0);
    }

    // KV cache (inference) per GPU.
    let kv_split = match s.sharding {
        // Per-GPU KV heads = max(1, kv_heads / tp): replicated when there are fewer than GPUs.
        Sharding::Tensor => {
            let kv = f64::from(arch.kv_heads);
            kv / (kv / n).floor().max(1.0)
        }
        Sharding::Layers | Sharding::Fsdp => n,
        Sharding::Replicated => 1.0,
    };
    let kv_per_token = arch.kv_elems_per_token_layer() * l * s.kv_bytes;

    // Activations of one layer (bf16) per token, Llama-style with fused attention.
    let (nq, nkv, d) = (f64::from(arch.heads), f64::from(arch.kv_heads), f64::from(arch.head_dim()));
    let inter = arch.active_intermediate();
    let mlp_terms = if arch.gated_mlp { 8.0 * inter } else { 4.0 * inter };
    let layer_per_token = 2.0 * h + 4.0 * nq * d + 4.0 * nkv * d + 4.0 * nq + 2.0 * h + mlp_terms + 4.0 * h;
    let scores_per_token_layer = if s.flash_attention { 0.0 } else { 5.0 * nq * t };

    match s.mode {
        Mode::Inference => {
            out.trainable_b = 0.0;
            match s.framework {
                Framework::Hf => {
                    out.kv_cache = kv_per_token * b * t / kv_split;
                    // Prefill: full-prompt fp32 logits, one layer's activations, attention scores
                    // when not fused.
                    let logits = b * t * v * 4.0;
                    let act = b * t * (layer_per_token + scores_per_token_layer * 2.0 / 5.0);
                    out.activations = logits + act;
                    out.cuda_context = CUDA_CONTEXT;
                    out.framework = LIBRARY_BUFFERS;
                    out.allocator_slack = 0.1 * (out.kv_cache + out.activations);
                    out.notes.push("Hugging Face generate: KV cache grows by concatenation; the prefill computes fp32 logits for the whole prompt".into());
                }
                Framework::Vllm => {
                    let tp = if s.sharding == Sharding::Tensor { n } else { 1.0 };
                    let activation = if arch.moe.is_some() { 7.4 * GIB } else { 4.8 * GIB } / tp.max(1.0);
                    let non_torch = if tp > 1.0 { 0.55 * GIB } else { 0.13 * GIB };
                    out.activations = activation;
                    out.framework = non_torch;
                    out.cuda_context = 0.0; // included in vLLM's non-torch figure
                    let needed_kv = kv_per_token * b * (t / 16.0).ceil() * 16.0 / kv_split;
                    out.kv_cache = needed_kv;
                    if let Some(total) = s.gpu_total_bytes {
                        let avail = total * s.vllm_utilization - out.weights - activation - non_torch;
                        out.vllm_kv_available = Some(avail);
                        out.notes.push(format!(
                            "vLLM reserves {:.0} % of the GPU ({:.1} GiB); what is left after weights and activations becomes KV cache",
                            s.vllm_utilization * 100.0,
                            total * s.vllm_utilization / GIB
                        ));
                    }
                    out.notes.push("vLLM activation peak is profiled at start-up (about 4.8 GiB for dense models, 7.4 GiB for MoE with default batching)".into());
                }
                Framework::LlamaCpp => {
                    let pad = if s.flash_attention { 256.0 } else { 32.0 };
                    let n_ctx = (t / pad).ceil() * pad;
                    out.kv_cache = kv_per_token * b.max(1.0) * n_ctx / kv_split;
                    let ubatch = 512.0_f64.min(n_ctx);
                    let scores = if s.flash_attention { 0.0 } else { nq * ubatch * n_ctx * 4.0 };
                    out.framework = scores + 64.0 * 1_048_576.0 + ubatch * v * 4.0 / 8.0;
                    out.cuda_context = 0.3 * GIB;
                    out.notes.push("llama.cpp allocates the KV cache for the whole context at start; n_ctx is padded to 256 with flash attention, 32 without".into());
                }
            }
        }
        Mode::Full | Mode::Lora | Mode::Qlora => {
            let trainable = match s.mode {
                Mode::Full => p.total(),
                _ => {
                    let r = f64::from(s.lora_rank);
                    let q_out = nq * d;
                    let kv_out = nkv * d;
                    let per_layer = if s.lora_all_linear {
                        let mlp = if arch.gated_mlp { 2.0 * (h + inter) + (inter + h) } else { 2.0 * (h + inter) };
                        r * ((h + q_out) + 2.0 * (h + kv_out) + (q_out + h)) + r * mlp
                    } else {
                        r * ((h + q_out) + (h + kv_out))
                    };
                    per_layer * l
                }
            };
            out.trainable_b = trainable / 1e9;
            let state_split = match s.sharding {
                Sharding::Replicated => 1.0,
                _ => n,
            };
            let (grad_bytes, state_bytes, master) = match (s.mode, s.precision) {
                (Mode::Full, Precision::Bf16True) => (2.0, 2.0, 0.0),
                (Mode::Full, Precision::Mixed) => (2.0, 4.0, 4.0),
                (Mode::Full, Precision::Fp32) => (4.0, 4.0, 0.0),
                // Adapters are small; PEFT keeps them (and their states) in fp32.
                _ => (4.0, 4.0, 0.0),
            };
            let states_per_param = match s.optimizer {
                Optimizer::AdamW => 2.0 * state_bytes,
                Optimizer::AdamW8bit => 2.0,
                Optimizer::Sgd => state_bytes,
                Optimizer::Adafactor => 4.0,
            };
            out.gradients = trainable * grad_bytes / state_split;
            out.optimizer = trainable * (states_per_param + master) / state_split;
            if s.mode != Mode::Full {
                out.weights += trainable * 4.0 / state_split;
            }
            // Activations: Korthikanti et al. adapted to SwiGLU/GQA (vram.md §1.4).
            let tp = if s.sharding == Sharding::Tensor { n } else { 1.0 };
            // LoRA dropout (litgpt and PEFT default 0.05) keeps the dropped input and its mask
            // for every adapted matrix: 3 bytes per input element.
            let lora_inputs = match s.mode {
                Mode::Lora | Mode::Qlora if s.lora_all_linear => 6.0 * h + inter,
                Mode::Lora | Mode::Qlora => 2.0 * h,
                _ => 0.0,
            };
            let per_layer_full = b * t * (layer_per_token + scores_per_token_layer + 3.0 * lora_inputs) / tp;
            let layers_here = if s.sharding == Sharding::Layers { l / n } else { l };
            let body = match s.checkpointing {
                Checkpointing::None => layers_here * per_layer_full,
                Checkpointing::Selective => layers_here * b * t * (layer_per_token + 3.0 * lora_inputs) / tp,
                // Layer inputs, plus one layer recomputed and its gradients during backward.
                Checkpointing::Full => layers_here * 2.0 * b * t * h + 1.5 * per_layer_full,
            };
            // Logits and the loss: bf16 logits, their fp32 copy and its gradient; chunked losses
            // upcast one eighth at a time.
            let logits = if s.chunked_loss { b * t * v * (2.0 + 4.0 / 8.0) } else { b * t * v * (2.0 + 4.0) } / tp;
            out.activations = body + logits;
            out.cuda_context = CUDA_CONTEXT;
            out.framework = LIBRARY_BUFFERS + if n > 1.0 && s.sharding != Sharding::Layers { 0.4 * GIB } else { 0.0 };
            out.allocator_slack = 0.05 * (out.activations + out.gradients + out.weights);
            out.notes.push(format!(
                "{} trainable parameters ({:.2} % of {:.2} B)",
                if s.mode == Mode::Full { "All" } else { "LoRA adapter" },
                100.0 * trainable / p.total().max(1.0),
                p.total() / 1e9
            ));
        }
    }
    out.total = out.allocated() + out.allocator_slack + out.cuda_context + out.framework;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn llama31_8b() -> Arch {
        Arch { context: Some(131_072), ..Arch::decoder("Llama-3.1-8B", 32, 4096, 32, 8, 14336, 128_256) }
    }

    #[test]
    fn parameter_counts_match_published_ones() {
        let p = llama31_8b().params().total() / 1e9;
        assert!((p - 8.030).abs() < 0.005, "{p}");
        let mut a70 = llama31_8b();
        a70.layers = 80;
        a70.hidden = 8192;
        a70.heads = 64;
        a70.intermediate = 28672;
        assert!((a70.params().total() / 1e9 - 70.55).abs() < 0.05);
    }

    #[test]
    fn kv_cache_uses_kv_heads() {
        let a = llama31_8b();
        // 128 KiB per token in fp16 (vram.md §5).
        assert_eq!(a.kv_elems_per_token_layer() * 32.0 * 2.0, 131_072.0);
        let s = Settings { seq: 8192, ..Settings::default() };
        let e = estimate(&a, &s).unwrap_or_else(|e| panic!("{e}"));
        assert!((e.kv_cache / GIB - 1.0).abs() < 1e-9, "{}", e.kv_cache / GIB);
    }

    #[test]
    fn bad_shapes_name_the_field() {
        let mut a = llama31_8b();
        a.layers = 0;
        assert_eq!(estimate(&a, &Settings::default()).err().map(|e| e.field), Some("layers"));
        let mut a = llama31_8b();
        a.kv_heads = 7;
        assert_eq!(estimate(&a, &Settings::default()).err().map(|e| e.field), Some("kv_heads"));
        let mut a = llama31_8b();
        a.heads = 30;
        assert_eq!(estimate(&a, &Settings::default()).err().map(|e| e.field), Some("kv_heads"));
        let s = Settings { batch: 0, ..Settings::default() };
        assert_eq!(estimate(&llama31_8b(), &s).err().map(|e| e.field), Some("batch"));
        let s = Settings { vllm_utilization: 1.5, ..Settings::default() };
        assert_eq!(estimate(&llama31_8b(), &s).err().map(|e| e.field), Some("vllm_utilization"));
    }

    #[test]
    fn quant_names_parse() {
        assert_eq!(Quant::parse("Q4_K_M"), Ok(Quant::GgufQ4KM));
        assert_eq!(Quant::parse("fp16"), Ok(Quant::Bf16));
        assert_eq!(Quant::parse("nf4-dq"), Ok(Quant::Nf4Dq));
        assert!(Quant::parse("q9").err().is_some_and(|e| e.contains("q4_k_m")));
    }
}

/// Per-GPU bytes that must fit for `s`: the whole total, except vLLM, which takes its
/// reservation anyway and only needs room for weights, activations and the requested KV cache.
pub fn need(b: &Breakdown, s: &Settings) -> f64 {
    if s.mode == Mode::Inference && s.framework == Framework::Vllm {
        b.weights + b.activations + b.framework + b.kv_cache
    } else {
        b.total
    }
}

fn largest(lo: u32, hi: u32, fits: impl Fn(u32) -> bool) -> Option<u32> {
    if !fits(lo) {
        return None;
    }
    let (mut good, mut bad) = (lo, hi + 1);
    while bad - good > 1 {
        let mid = good + (bad - good) / 2;
        if fits(mid) {
            good = mid;
        } else {
            bad = mid;
        }
    }
    Some(good)
}

/// The largest batch (up to 65,536) whose estimate fits in `capacity` bytes per GPU; `None` when
/// not even one sequence fits.
pub fn max_batch(arch: &Arch, s: &Settings, capacity: f64) -> Option<u32> {
    largest(1, 65_536, |batch| estimate(arch, &Settings { batch, ..s.clone() }).is_ok_and(|b| need(&b, s) <= capacity))
}

/// The longest sequence (up to the model's context, or 1 M tokens) that fits in `capacity`.
pub fn max_seq(arch: &Arch, s: &Settings, capacity: f64) -> Option<u32> {
    let hi = arch.context.unwrap_or(1 << 20).max(1);
    largest(1, hi, |seq| estimate(arch, &Settings { seq, ..s.clone() }).is_ok_and(|b| need(&b, s) <= capacity))
}

/// One way to need less memory, with what it saves per GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Suggestion {
    /// What to change.
    pub change: String,
    /// Bytes saved per GPU.
    pub saving: f64,
}

/// Ways to cut memory in the method's order (batch, sequence, precision, checkpointing,
/// quantisation, sharding), each estimated; only those that save something.
pub fn suggestions(arch: &Arch, s: &Settings) -> Vec<Suggestion> {
    let Ok(base) = estimate(arch, s) else { return Vec::new() };
    let base_need = need(&base, s);
    let training = s.mode != Mode::Inference;
    let mut tries: Vec<(String, Settings)> = Vec::new();
    if s.batch > 1 {
        tries.push((
            format!("halve the batch ({} to {})", s.batch, s.batch / 2),
            Settings { batch: s.batch / 2, ..s.clone() },
        ));
    }
    if s.seq > 256 {
        tries.push((
            format!("halve the sequence length ({} to {} tokens)", s.seq, s.seq / 2),
            Settings { seq: s.seq / 2, ..s.clone() },
        ));
    }
    if training && s.mode == Mode::Full && s.precision != Precision::Bf16True {
        tries.push((
            "train in bf16 (no fp32 master copy)".into(),
            Settings { precision: Precision::Bf16True, ..s.clone() },
        ));
    }
    if training && s.optimizer == Optimizer::AdamW {
        tries.push(("8-bit AdamW".into(), Settings { optimizer: Optimizer::AdamW8bit, ..s.clone() }));
    }
    if training && s.checkpointing != Checkpointing::Full {
        tries.push((
            "activation checkpointing on every layer".into(),
            Settings { checkpointing: Checkpointing::Full, ..s.clone() },
        ));
    }
    if !s.flash_attention {
        tries.push(("fused (flash / SDPA) attention".into(), Settings { flash_attention: true, ..s.clone() }));
    }
    match s.mode {
        Mode::Full => {
            tries.push(("LoRA instead of a full fine-tune".into(), Settings { mode: Mode::Lora, ..s.clone() }))
        }
        Mode::Lora => tries.push(("QLoRA (4-bit base)".into(), Settings { mode: Mode::Qlora, ..s.clone() })),
        Mode::Inference => {
            for q in [Quant::Fp8, Quant::Gptq4, Quant::GgufQ4KM] {
                if q.linear_bits() < s.quant.linear_bits() && (q.is_gguf() == (s.framework == Framework::LlamaCpp)) {
                    tries.push((format!("{} weights", q.name()), Settings { quant: q, ..s.clone() }));
                }
            }
            if s.kv_bytes > 1.0 {
                tries.push(("8-bit KV cache".into(), Settings { kv_bytes: 1.0, ..s.clone() }));
            }
        }
        Mode::Qlora => {}
    }
    if s.gpus == 1 {
        let sharding = if training { Sharding::Fsdp } else { Sharding::Tensor };
        tries.push((
            format!("shard over 2 GPUs ({})", if training { "FSDP" } else { "tensor parallel" }),
            Settings { gpus: 2, sharding, ..s.clone() },
        ));
    }
    tries
        .into_iter()
        .filter_map(|(change, t)| {
            let b = estimate(arch, &t).ok()?;
            let saving = base_need - need(&b, &t);
            (saving > 0.01 * GIB).then_some(Suggestion { change, saving })
        })
        .collect()
}

#[cfg(test)]
mod solver_tests {
    use super::*;

    #[test]
    fn solver_finds_the_boundary_and_suggestions_save_memory() {
        let list = presets::built_in();
        let a = presets::find(&list, "Llama-3.1-8B").unwrap_or_else(|e| panic!("{e}"));
        let s = Settings { seq: 4096, ..Settings::default() };
        let cap = 40.0 * GIB;
        let b = max_batch(a, &s, cap).unwrap_or_else(|| panic!("one fits"));
        assert!(need(&estimate(a, &Settings { batch: b, ..s.clone() }).unwrap_or_default(), &s) <= cap);
        assert!(need(&estimate(a, &Settings { batch: b + 1, ..s.clone() }).unwrap_or_default(), &s) > cap);
        let t = max_seq(a, &Settings { batch: 1, ..s.clone() }, 24.0 * GIB).unwrap_or(0);
        assert!(t > 1000 && t < 131_072, "{t}");
        assert_eq!(max_batch(a, &s, 4.0 * GIB), None, "8B bf16 weights alone exceed 4 GiB");
        let full = Settings {
            mode: Mode::Full,
            precision: Precision::Mixed,
            checkpointing: Checkpointing::None,
            batch: 4,
            ..s
        };
        let sug = suggestions(a, &full);
        assert!(sug.iter().any(|x| x.change.starts_with("halve the batch")), "{sug:?}");
        assert!(sug.iter().any(|x| x.change.contains("bf16")), "{sug:?}");
        assert!(sug.iter().all(|x| x.saving > 0.0));
    }
}
