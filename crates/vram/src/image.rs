//! Image-generation inference (Stable Diffusion 1.5, SDXL, 3 and 3.5, FLUX.1 dev/schnell): the weights of
//! each component (denoiser, text encoders, VAE, SD 1.5's safety checker) and the peak of the
//! phase that sets it (text encoding, denoising, VAE decode), following diffusers' defaults:
//! classifier-free guidance doubles the UNet batch of SD 1.5 and SDXL (FLUX.1-dev is
//! guidance-distilled), SDXL's VAE decodes in fp32, VAE tiling starts above the VAE's sample
//! size, model CPU offload keeps only the running component on the GPU.
//!
//! The constants were fitted to 56 published measurements (Lambda's SD benchmarks, diffusers'
//! docs and benchmarks, FLUX quantisation blog posts; docs/research/vram-image-measurements.md):
//! median error 3 %, worst +20 % (the model and its constants: docs/research/vram-image-model.md;
//! the rows: tests/suite/vram_accuracy.rs).

use super::breakdown::{Breakdown, GIB};
use super::image_settings::{Family, Offload, Sd3, VaeDecode};
use super::quant::Quant;
use super::workload::Workload;

const CLIP_L: f64 = 123_060_480.0;
const OPENCLIP_BIGG: f64 = 694_659_840.0;
const T5_XXL: f64 = 4_762_310_656.0;
/// T5's token embedding, kept 16-bit by the quantisers.
const T5_EMBEDDING: f64 = 32_128.0 * 4_096.0;
const VAE: f64 = 83_653_863.0;
const FLUX_VAE: f64 = 83_819_683.0;
/// SD 1.5's safety checker (CLIP ViT-L/14 vision + projection), loaded by default.
const SAFETY_CHECKER: f64 = 303_981_588.0;
/// Score-sized buffers alive in eager attention (scores and probabilities, plus 10 %).
const EAGER_BUFFERS: f64 = 2.2;
/// VAE decode working set, elements per output pixel and image.
const DECODE_PER_PIXEL: f64 = 1080.0;
/// Reserved beyond allocated: the decode's blocks vary in size, the denoiser's are reused.
const DECODE_SLACK: f64 = 1.0;
const DENOISE_SLACK: f64 = 0.05;
/// Reserved memory left in the cache by quantise-while-loading backends (bitsandbytes, torchao,
/// quanto, layerwise fp8).
const QUANTIZE_ON_LOAD: f64 = 2.8 * GIB;
/// CUDA context with lazy loading.
const CONTEXT: f64 = 0.5 * GIB;

/// Text tokens of Stable Diffusion 3.x's joint attention: CLIP's 77 and T5's 256 (the
/// pipeline's default `max_sequence_length`).
const SD3_TEXT_TOKENS: f64 = 77.0 + 256.0;

impl Sd3 {
    /// Hidden size of the MMDiT's blocks (attention heads × 64).
    fn hidden(self) -> f64 {
        match self {
            Sd3::Medium | Sd3::Medium35 => 1536.0,
            Sd3::Large35 => 2432.0,
        }
    }
}

impl Family {
    fn denoiser(self) -> f64 {
        match self {
            Family::Sd15 => 859_520_964.0,
            Family::Sdxl => 2_567_463_684.0,
            Family::Flux { .. } => 11_901_408_320.0,
            // The quanto blog's table (2.028 B); Stability's "2.5 billion" and "8.1 billion".
            Family::Sd3(Sd3::Medium) => 2_028_000_000.0,
            Family::Sd3(Sd3::Medium35) => 2_500_000_000.0,
            Family::Sd3(Sd3::Large35) => 8_100_000_000.0,
        }
    }

    /// Denoiser activations: elements per latent pixel (UNets) or per token (transformers) and
    /// batch item. One block runs at a time, so a transformer's scale with its hidden size:
    /// FLUX's fitted 55 000 at 3072 (about 18 hidden-sized tensors per token).
    fn per_token(self) -> f64 {
        match self {
            Family::Sd15 => 9600.0,
            Family::Sdxl => 8800.0,
            Family::Flux { .. } => 55_000.0,
            Family::Sd3(sd3) => 55_000.0 / 3072.0 * sd3.hidden(),
        }
    }

    fn heads(self) -> f64 {
        match self {
            Family::Sd15 => 8.0,
            Family::Sdxl => 10.0,
            Family::Flux { .. } => 24.0,
            Family::Sd3(sd3) => sd3.hidden() / 64.0,
        }
    }

    /// Text-encoder activations.
    fn text_activations(self) -> f64 {
        match self {
            Family::Sd15 => 0.02 * GIB,
            Family::Sdxl => 0.03 * GIB,
            Family::Flux { .. } | Family::Sd3(_) => 0.15 * GIB,
        }
    }

    /// The 16-channel VAE of FLUX.1 and Stable Diffusion 3 (the same architecture).
    fn sixteen_channel_vae(self) -> bool {
        matches!(self, Family::Flux { .. } | Family::Sd3(_))
    }
}

/// Bytes of `params` in format `q`; quantised formats leave `keep16` parameters 16-bit.
fn bytes(params: f64, q: Quant, keep16: f64) -> f64 {
    let bits = q.linear_bits();
    if bits < 16.0 { keep16 * 2.0 + (params - keep16) * bits / 8.0 } else { params * bits / 8.0 }
}

/// The memory of one phase: what is on the GPU, the activations, the reserved-but-unused part.
struct Phase {
    name: &'static str,
    weights: f64,
    activations: f64,
    slack: f64,
}

impl Phase {
    fn reserved(&self) -> f64 {
        self.weights + self.activations + self.slack
    }
}

/// The per-GPU breakdown of an image-generation run.
pub fn estimate(f: Family, s: &Workload) -> Breakdown {
    let img = &s.image;
    let native = f.native();
    let (w, h) = img.size(f);
    let (w, h) = (f64::from(w), f64::from(h));
    let batch = f64::from(s.batch.max(1));
    let cfg = img.cfg.unwrap_or(f.cfg_default());
    let denoiser_batch = batch * if cfg { 2.0 } else { 1.0 };
    let fp32 = s.quant == Quant::Fp32;
    let act = if fp32 { 4.0 } else { 2.0 };
    let sixteen = if fp32 { Quant::Fp32 } else { Quant::Bf16 };
    let w_den = bytes(f.denoiser(), s.quant, 0.0);
    let encoders: Vec<f64> = if img.text_encoders {
        match f {
            Family::Sd15 => vec![bytes(CLIP_L, sixteen, 0.0)],
            Family::Sdxl => vec![bytes(CLIP_L, sixteen, 0.0), bytes(OPENCLIP_BIGG, sixteen, 0.0)],
            Family::Flux { .. } => {
                let t5 = if img.quantized_text_encoder { s.quant } else { sixteen };
                vec![bytes(CLIP_L, sixteen, 0.0), bytes(T5_XXL, t5, T5_EMBEDDING)]
            }
            Family::Sd3(_) => {
                let t5 = if img.quantized_text_encoder { s.quant } else { sixteen };
                let mut v = vec![bytes(CLIP_L, sixteen, 0.0), bytes(OPENCLIP_BIGG, sixteen, 0.0)];
                if !img.without_t5 {
                    v.push(bytes(T5_XXL, t5, T5_EMBEDDING));
                }
                v
            }
        }
    } else {
        Vec::new()
    };
    let vae_params = if f.sixteen_channel_vae() { FLUX_VAE } else { VAE };
    let vae_fp32 = fp32 || img.vae_fp32.unwrap_or(f == Family::Sdxl);
    let w_vae_stored = vae_params * act;
    let w_vae_decode = vae_params * if vae_fp32 { 4.0 } else { 2.0 };
    let w_safety = if f == Family::Sd15 && img.safety_checker { SAFETY_CHECKER * act } else { 0.0 };

    // Denoiser activations, with the score matrices of eager attention.
    let latent = (w / 8.0).floor() * (h / 8.0).floor();
    let (tokens, attended) = match f {
        Family::Flux { schnell } => {
            let t = (w / 16.0).floor() * (h / 16.0).floor() + if schnell { 256.0 } else { 512.0 };
            (t, t)
        }
        // Latents 8× smaller than the image, patches of 2 × 2: one token per 16 × 16 pixels.
        Family::Sd3(_) => {
            let t = (w / 16.0).floor() * (h / 16.0).floor() + SD3_TEXT_TOKENS;
            (t, t)
        }
        Family::Sdxl => (latent, latent / 4.0),
        Family::Sd15 => (latent, latent),
    };
    let mut a_den = denoiser_batch * f.per_token() * tokens * act;
    if !s.flash_attention {
        a_den += denoiser_batch * EAGER_BUFFERS * f.heads() * attended * attended * act;
    }
    // VAE decode.
    let images = if img.vae == VaeDecode::Sliced { 1.0 } else { batch };
    let tile = f64::from(native);
    let pixels = if img.vae == VaeDecode::Tiled && (w > tile || h > tile) { w.min(tile) * h.min(tile) } else { w * h };
    let a_dec = images * pixels * DECODE_PER_PIXEL * if vae_fp32 { 4.0 } else { 2.0 };
    let a_text = if encoders.is_empty() { 0.0 } else { f.text_activations() };

    let all_encoders: f64 = encoders.iter().sum();
    let largest_encoder = encoders.iter().copied().fold(0.0, f64::max);
    let (w_text, w_denoise, w_decode) = match img.offload {
        Offload::Model => (largest_encoder, w_den, w_vae_decode + w_safety),
        Offload::None => {
            let rest = all_encoders + w_safety;
            (w_den + rest + w_vae_stored, w_den + rest + w_vae_stored, w_den + rest + w_vae_decode)
        }
    };
    let phases = [
        Phase {
            name: crate::tr_key!("text encoding"),
            weights: w_text,
            activations: a_text,
            slack: DENOISE_SLACK * a_text,
        },
        Phase {
            name: crate::tr_key!("denoising"),
            weights: w_denoise,
            activations: a_den,
            slack: DENOISE_SLACK * a_den,
        },
        Phase {
            name: crate::tr_key!("VAE decode"),
            weights: w_decode,
            activations: a_dec,
            slack: DECODE_SLACK * a_dec,
        },
    ];
    // What must fit is the largest phase's weights and activations with a 5 % fragmentation
    // margin; what a large card shows reserved is the largest phase's reserved figure, the rest
    // of which is cache PyTorch returns before it runs out of memory. (With model offload the
    // two can be different phases: denoising needs the most, the VAE decode reserves the most.)
    let must_fit = |p: &Phase| p.weights + p.activations * (1.0 + DENOISE_SLACK);
    let peak = phases.iter().max_by(|a, b| must_fit(a).total_cmp(&must_fit(b))).unwrap_or(&phases[1]);
    let most_reserved = phases.iter().map(Phase::reserved).fold(0.0, f64::max);
    let quantized_on_load = matches!(s.quant, Quant::Nf4 | Quant::Nf4Dq | Quant::Int8 | Quant::Fp8 | Quant::Gptq4);
    let margin = DENOISE_SLACK * peak.activations;
    let mut out = Breakdown {
        weights: peak.weights,
        activations: peak.activations,
        allocator_slack: margin,
        reserved_cache: (most_reserved - must_fit(peak)).max(0.0)
            + if quantized_on_load { QUANTIZE_ON_LOAD } else { 0.0 },
        cuda_context: CONTEXT,
        params_b: (f.denoiser() + if img.text_encoders { encoder_params(f, img.without_t5) } else { 0.0 } + vae_params)
            / 1e9,
        ..Breakdown::default()
    };
    let gib = |x: f64| format!("{:.1}", x / GIB);
    out.notes.push(crate::msg!(
        "Image generation at {w}×{h}, {images} per batch{cfg}: the peak is in the {phase} phase",
        w = w,
        h = h,
        images = batch,
        cfg = if cfg {
            crate::msg!(", doubled to {n} by classifier-free guidance", n = denoiser_batch)
        } else {
            crate::i18n::Message::default()
        },
        phase = crate::i18n::Message::new(peak.name)
    ));
    out.notes.push(crate::msg!(
        "Weights: denoiser {den} GiB, text encoders {text} GiB, VAE {vae} GiB; activations: denoising {act_den} GiB, VAE decode {act_dec} GiB",
        den = gib(w_den),
        text = if img.text_encoders { crate::i18n::Message::data(gib(all_encoders)) } else { crate::msg!("off the GPU") },
        vae = gib(w_vae_decode),
        act_den = gib(a_den),
        act_dec = gib(a_dec)
    ));
    if peak.name == "VAE decode" && img.vae == VaeDecode::Full && batch > 1.0 {
        out.notes.push(crate::msg!(
            "The VAE decodes all images at once; VAE slicing (pipe.enable_vae_slicing()) decodes one at a time"
        ));
    }
    if out.reserved_cache > 0.0 {
        out.notes.push(crate::msg!(
            "On a card with room to spare PyTorch also keeps {gib} GiB cached; it gives it back before running out",
            gib = gib(out.reserved_cache)
        ));
    }
    if quantized_on_load {
        out.notes.push(crate::msg!("Quantising while loading leaves about 2.8 GiB in PyTorch's cache"));
    }
    if img.vae == VaeDecode::Tiled && w <= tile && h <= tile {
        out.notes.push(crate::msg!(
            "VAE tiling starts above {size}×{size} px: at this size the image is decoded whole, so tiling changes nothing",
            size = native
        ));
    }
    out.total = out.allocated() + out.allocator_slack + out.cuda_context + out.framework;
    out
}

fn encoder_params(f: Family, without_t5: bool) -> f64 {
    match f {
        Family::Sd15 => CLIP_L,
        Family::Sdxl => CLIP_L + OPENCLIP_BIGG,
        Family::Flux { .. } => CLIP_L + T5_XXL,
        Family::Sd3(_) => CLIP_L + OPENCLIP_BIGG + if without_t5 { 0.0 } else { T5_XXL },
    }
}

/// FLUX.1's transformer: 19 double-stream and 38 single-stream blocks of hidden size 3072.
const FLUX_BLOCKS: f64 = 57.0;
const FLUX_HIDDEN: f64 = 3072.0;
/// diffusers' LoRA targets for FLUX (`to_q`, `to_k`, `to_v`, `to_out.0`): four 3072 × 3072
/// projections in each double block, three in each single block.
const FLUX_LORA_MATRICES: f64 = 19.0 * 4.0 + 38.0 * 3.0;
/// Elements a FLUX block keeps per token for backward without checkpointing (its q, k, v and
/// attention output, the MLP's input, hidden and activation, norms and modulations: about 15
/// hidden-sized tensors).
const FLUX_BLOCK_KEPT: f64 = 15.0 * FLUX_HIDDEN;

/// LoRA or QLoRA training of FLUX.1's transformer, the way diffusers' and SimpleTuner's scripts
/// run it: the base frozen (16-bit for LoRA, NF4 for QLoRA), LoRA on the attention projections,
/// fp32 adapters with their optimizer states, gradient checkpointing per block when on; the
/// text encoders and the VAE on the GPU unless their outputs were computed beforehand
/// (`text_encoders: false`: cached prompt embeddings and latents). Sources:
/// docs/research/vram-37-training-image.md §3b.
pub fn estimate_training(f: Family, s: &Workload) -> Result<Breakdown, crate::vram::InputError> {
    use super::workload::{Checkpointing, Mode, Optimizer};
    let not_modelled = |problem| Err(crate::vram::InputError { field: "mode", problem });
    if !matches!(f, Family::Flux { .. }) {
        return not_modelled(crate::msg!(
            "training is modelled for FLUX.1 (LoRA, QLoRA); for Stable Diffusion 1.5, XL and 3.x choose inference"
        ));
    }
    if s.mode == Mode::Full {
        return not_modelled(crate::msg!("a full fine-tune of FLUX.1 is not modelled; choose LoRA or QLoRA"));
    }
    let img = &s.image;
    let (w, h) = img.size(f);
    let batch = f64::from(s.batch.max(1));
    // Image tokens (16 × 16 pixels each after the VAE and 2 × 2 packing) and 512 text tokens.
    let tokens = (f64::from(w) / 16.0).floor() * (f64::from(h) / 16.0).floor() + 512.0;
    let base = if s.mode == Mode::Qlora { s.weight_quant() } else { Quant::Bf16 };
    let w_den = bytes(f.denoiser(), base, 0.0);
    // bitsandbytes dequantises each 4-bit matrix for its matmul, forward and backward: the
    // largest (the single blocks' 3072 × 15360 projection) twice at once.
    let dequant = if s.mode == Mode::Qlora { 2.0 * FLUX_HIDDEN * 5.0 * FLUX_HIDDEN * 2.0 } else { 0.0 };
    // Adapters: fp32 weights and gradients, and their optimizer states.
    let trainable = f64::from(s.lora_rank) * 2.0 * FLUX_HIDDEN * FLUX_LORA_MATRICES;
    let states = match s.optimizer {
        Optimizer::AdamW => 8.0,
        Optimizer::AdamW8bit => 2.0,
        Optimizer::Sgd | Optimizer::Adafactor => 4.0,
    };
    // Activations: under checkpointing every block's input (bf16) plus one block recomputed
    // with its gradients; without it what every block keeps.
    let act = match s.checkpointing {
        Checkpointing::None => batch * tokens * FLUX_BLOCKS * FLUX_BLOCK_KEPT * 2.0,
        _ => batch * tokens * (FLUX_BLOCKS * FLUX_HIDDEN * 2.0 + 2.0 * FLUX_BLOCK_KEPT * 2.0),
    };
    let encoders = if img.text_encoders {
        bytes(CLIP_L, Quant::Bf16, 0.0) + bytes(T5_XXL, Quant::Bf16, 0.0) + FLUX_VAE * 2.0
    } else {
        0.0
    };
    let mut out = Breakdown {
        weights: w_den + encoders + trainable * 4.0,
        activations: act + dequant,
        gradients: trainable * 4.0,
        optimizer: trainable * states,
        cuda_context: super::breakdown::CUDA_CONTEXT,
        framework: 64.0 * 1_048_576.0,
        params_b: (f.denoiser() + if img.text_encoders { CLIP_L + T5_XXL + FLUX_VAE } else { 0.0 }) / 1e9,
        trainable_b: trainable / 1e9,
        ..Breakdown::default()
    };
    out.allocator_slack = 0.05 * (out.activations + out.weights);
    if s.mode == Mode::Qlora && !s.prequantized {
        // diffusers quantises the transformer one weight at a time as it loads it.
        out.allocator_slack += FLUX_HIDDEN * 5.0 * FLUX_HIDDEN * 2.0;
    }
    let gib = |x: f64| format!("{:.1}", x / GIB);
    out.notes.push(crate::msg!(
        "FLUX.1 {method} at {w}×{h}, {images} per batch: transformer {den} GiB, adapters {adapters} M parameters, activations {act} GiB",
        method = s.mode_label(),
        w = w,
        h = h,
        images = batch,
        den = gib(w_den),
        adapters = format!("{:.1}", trainable / 1e6),
        act = gib(out.activations)
    ));
    out.notes.push(if img.text_encoders {
        crate::msg!("The text encoders and the VAE stay on the GPU ({gib} GiB); caching prompt embeddings and latents beforehand frees them", gib = gib(encoders))
    } else {
        crate::msg!("Prompt embeddings and latents computed beforehand: no text encoder or VAE on the GPU")
    });
    out.total = out.allocated() + out.allocator_slack + out.cuda_context + out.framework;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vram::image_settings::ImageSettings;
    use crate::vram::workload::Mode;

    fn run(f: Family, change: impl FnOnce(&mut ImageSettings)) -> Breakdown {
        let mut image = ImageSettings::default();
        change(&mut image);
        estimate(f, &Workload { mode: Mode::Inference, quant: Quant::Bf16, batch: 1, image, ..Workload::default() })
    }

    #[test]
    fn with_model_offload_the_phase_that_needs_most_sets_what_must_fit() {
        // SD3 Medium without T5, offloaded: denoising holds the 3.8 GiB transformer and its
        // activations (4.2 GiB); the VAE decode reserves more (4.4 GiB with its cache) but needs
        // less (2.3 GiB).
        let b = run(Family::Sd3(Sd3::Medium), |i| {
            i.offload = Offload::Model;
            i.without_t5 = true;
        });
        assert!((b.weights / GIB - 3.78).abs() < 0.05, "the transformer's weights: {}", b.weights / GIB);
        assert!(b.reserved() > 4.3 * GIB && b.reserved() > b.allocated(), "the decode's reserved figure is kept");
        assert!(b.notes.iter().any(|n| n.en().contains("denoising phase")), "{:?}", b.notes);
    }

    #[test]
    fn sd3_leaves_t5_out_when_asked_and_sd35_large_is_the_largest() {
        let with = run(Family::Sd3(Sd3::Medium), |_| {});
        let without = run(Family::Sd3(Sd3::Medium), |i| i.without_t5 = true);
        // T5-XXL's 4.76 B parameters in 16 bits.
        assert!(((with.weights - without.weights) / GIB - 8.87).abs() < 0.05);
        assert!(run(Family::Sd3(Sd3::Large35), |_| {}).weights > with.weights + 7.0 * GIB);
    }
}
