//! Weight formats: [`Quant`] (fp32 and 16-bit, FP8, int8, GPTQ/AWQ, bitsandbytes NF4, the GGUF
//! mixes), their command-line names, and the bits per weight each stores.

use serde::{Deserialize, Serialize};

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
    pub fn parse(s: &str) -> Result<Quant, crate::i18n::Message> {
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
                    return Err(crate::msg!(
                        "unknown weight format '{format}'; choose one of: {formats}",
                        format = s,
                        formats = Quant::ALL.iter().map(|q| q.name()).collect::<Vec<_>>().join(", ")
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
    /// measured on whole files (llama.cpp's `tools/quantize/README.md` table), which already include
    /// their higher-precision tensors.
    pub(super) fn linear_bits(self) -> f64 {
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
    pub(super) fn embedding_bits(self) -> f64 {
        match self {
            Quant::Fp32 => 32.0,
            Quant::GgufQ4_0 => 6.5625, // the output tensor gets Q6_K
            q if q.is_gguf() => q.linear_bits(),
            _ => 16.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quant_names_parse() {
        assert_eq!(Quant::parse("Q4_K_M"), Ok(Quant::GgufQ4KM));
        assert_eq!(Quant::parse("fp16"), Ok(Quant::Bf16));
        assert_eq!(Quant::parse("nf4-dq"), Ok(Quant::Nf4Dq));
        assert!(Quant::parse("q9").err().is_some_and(|e| e.en().contains("q4_k_m")));
    }
}
