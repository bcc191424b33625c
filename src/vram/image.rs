//! Image-generation inference (Stable Diffusion 1.5, SDXL, FLUX.1 dev/schnell): the weights of
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
use super::image_settings::{Family, Offload, VaeDecode};
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

impl Family {
    fn denoiser(self) -> f64 {
        match self {
            Family::Sd15 => 859_520_964.0,
            Family::Sdxl => 2_567_463_684.0,
            Family::Flux { .. } => 11_901_408_320.0,
        }
    }

    /// Denoiser activations: elements per latent pixel (UNets) or per token (FLUX) and batch item.
    fn per_token(self) -> f64 {
        match self {
            Family::Sd15 => 9600.0,
            Family::Sdxl => 8800.0,
            Family::Flux { .. } => 55_000.0,
        }
    }

    fn heads(self) -> f64 {
        match self {
            Family::Sd15 => 8.0,
            Family::Sdxl => 10.0,
            Family::Flux { .. } => 24.0,
        }
    }

    /// Text-encoder activations.
    fn text_activations(self) -> f64 {
        match self {
            Family::Sd15 => 0.02 * GIB,
            Family::Sdxl => 0.03 * GIB,
            Family::Flux { .. } => 0.15 * GIB,
        }
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
        }
    } else {
        Vec::new()
    };
    let vae_params = if matches!(f, Family::Flux { .. }) { FLUX_VAE } else { VAE };
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
    let peak = phases.iter().max_by(|a, b| a.reserved().total_cmp(&b.reserved())).unwrap_or(&phases[1]);
    let quantized_on_load = matches!(s.quant, Quant::Nf4 | Quant::Nf4Dq | Quant::Int8 | Quant::Fp8 | Quant::Gptq4);
    // What must fit keeps a 5 % fragmentation margin; the rest of what a large card shows
    // reserved is cache PyTorch returns before it runs out of memory.
    let margin = DENOISE_SLACK * peak.activations;
    let mut out = Breakdown {
        weights: peak.weights,
        activations: peak.activations,
        allocator_slack: margin,
        reserved_cache: (peak.slack - margin).max(0.0) + if quantized_on_load { QUANTIZE_ON_LOAD } else { 0.0 },
        cuda_context: CONTEXT,
        params_b: (f.denoiser() + if img.text_encoders { encoder_params(f) } else { 0.0 } + vae_params) / 1e9,
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
    out.total = out.allocated() + out.allocator_slack + out.cuda_context + out.framework;
    out
}

fn encoder_params(f: Family) -> f64 {
    match f {
        Family::Sd15 => CLIP_L,
        Family::Sdxl => CLIP_L + OPENCLIP_BIGG,
        Family::Flux { .. } => CLIP_L + T5_XXL,
    }
}
