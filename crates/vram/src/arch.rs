//! The model description: [`Arch`] (the fields of a Hugging Face `config.json` that matter for
//! memory, with its mixture-of-experts and latent-attention parts), its shape checks, and the
//! parameter and KV-cache counts derived from the shapes.

use serde::{Deserialize, Serialize};

use super::error::{InputError, bad};

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
    /// The `model_type` of its config.json ("bert", "t5", "gemma2"), when known: it decides the
    /// attention implementation transformers picks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_type: Option<String>,
    /// The format the checkpoint is saved in when it is already quantised (a
    /// `quantization_config` in its config.json: bitsandbytes 4-bit or 8-bit, GPTQ, AWQ):
    /// loading it puts no 16-bit weights on the GPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantization: Option<super::quant::Quant>,
}

/// `model_type`s whose transformers implementation has no fused (SDPA/flash) attention, or had
/// none for years, so that a run keeps the whole attention-probability matrix (eager): T5 and
/// DeBERTa have only eager; Gemma-2 asks for eager because of its logit soft-capping.
const EAGER_MODEL_TYPES: [&str; 6] = ["t5", "mt5", "deberta", "deberta-v2", "gemma2", "longt5"];

fn default_true() -> bool {
    true
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
    /// Whether a run of this model gets eager attention (the score matrix kept) unless told
    /// otherwise: encoder models (BERT-style: eager in transformers before 4.41 and in most
    /// published recipes) and the model types in [`EAGER_MODEL_TYPES`].
    pub fn eager_by_default(&self) -> bool {
        self.kind == ModelKind::Encoder || self.model_type.as_deref().is_some_and(|t| EAGER_MODEL_TYPES.contains(&t))
    }

    /// Checks the shape; every problem names its field.
    pub fn validate(&self) -> Result<(), InputError> {
        const MAX: u32 = 1 << 20;
        for (field, v) in
            [("layers", self.layers), ("hidden", self.hidden), ("heads", self.heads), ("kv_heads", self.kv_heads)]
        {
            if v == 0 {
                return Err(bad(field, crate::msg!("must be at least 1")));
            }
            if v > MAX {
                return Err(bad(field, crate::msg!("{v} is not a plausible size", v = v)));
            }
        }
        if self.kind == ModelKind::Decoder && self.vocab == 0 && self.params_b.is_none() {
            return Err(bad("vocab", crate::msg!("must be at least 1")));
        }
        if self.vocab > 4 * MAX || self.intermediate > 4 * MAX {
            return Err(bad("intermediate/vocab", crate::msg!("not a plausible size")));
        }
        if self.kv_heads > self.heads || !self.heads.is_multiple_of(self.kv_heads) {
            return Err(bad(
                "kv_heads",
                crate::msg!(
                    "{kv_heads} key/value heads must divide the {heads} attention heads",
                    kv_heads = self.kv_heads,
                    heads = self.heads
                ),
            ));
        }
        if self.head_dim.is_none() && !self.hidden.is_multiple_of(self.heads) {
            return Err(bad(
                "heads",
                crate::msg!(
                    "{heads} heads do not divide the hidden size {hidden}; give head_dim",
                    heads = self.heads,
                    hidden = self.hidden
                ),
            ));
        }
        if let Some(m) = &self.moe {
            if m.experts == 0 || m.active == 0 || m.active > m.experts {
                return Err(bad(
                    "moe",
                    crate::msg!("experts must be at least 1 and active experts between 1 and experts"),
                ));
            }
            if m.dense_layers > self.layers {
                return Err(bad("moe.dense_layers", crate::msg!("more dense layers than layers")));
            }
        }
        if let Some(p) = self.params_b
            && !(p > 0.0 && p < 100_000.0)
        {
            return Err(bad("params_b", crate::msg!("must be a positive number of billions")));
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
            model_type: None,
            quantization: None,
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
    pub(super) fn active_intermediate(&self) -> f64 {
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
}
