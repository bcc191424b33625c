//! What a workload says about image generation: the model family (Stable Diffusion 1.5, SDXL,
//! FLUX.1) and the pipeline's settings (resolution, steps, guidance, VAE decode, offload). The
//! estimator for these is `image.rs`; the workload only names them.

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

use super::arch::{Arch, ModelKind};

/// How the VAE decodes the batch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum VaeDecode {
    /// Every image at once (diffusers' default).
    #[default]
    #[value(help = "Every image at once")]
    Full,
    /// One image at a time (`enable_vae_slicing`).
    #[value(help = "One image at a time (enable_vae_slicing)")]
    Sliced,
    /// In tiles, above the VAE's sample size (`enable_vae_tiling`).
    #[value(help = "In tiles (enable_vae_tiling)")]
    Tiled,
}

/// What stays on the GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Offload {
    /// Everything on the GPU.
    #[default]
    #[value(help = "Everything on the GPU")]
    None,
    /// Only the running component (`enable_model_cpu_offload`).
    #[value(help = "Only the running component (enable_model_cpu_offload)")]
    Model,
}

/// The settings of an image-generation run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ImageSettings {
    /// Width in pixels (0: the model's native size).
    pub width: u32,
    /// Height in pixels (0: the model's native size).
    pub height: u32,
    /// Classifier-free guidance doubles the denoiser's batch (None: the pipeline's default).
    pub cfg: Option<bool>,
    /// How the VAE decodes.
    pub vae: VaeDecode,
    /// The VAE decodes in fp32 (None: the pipeline's default, on for SDXL).
    pub vae_fp32: Option<bool>,
    /// Model CPU offload.
    pub offload: Offload,
    /// The text encoders are on the GPU (not encoded elsewhere or on the CPU).
    pub text_encoders: bool,
    /// The T5 encoder (FLUX, Stable Diffusion 3) is quantised like the denoiser.
    pub quantized_text_encoder: bool,
    /// Stable Diffusion 3 without its T5-XXL encoder (`text_encoder_3=None`: the pipeline
    /// feeds zeros in its place).
    pub without_t5: bool,
    /// SD 1.5's safety checker is loaded (the pipeline's default).
    pub safety_checker: bool,
}

impl Default for ImageSettings {
    fn default() -> Self {
        ImageSettings {
            width: 0,
            height: 0,
            cfg: None,
            vae: VaeDecode::Full,
            vae_fp32: None,
            offload: Offload::None,
            text_encoders: true,
            quantized_text_encoder: false,
            without_t5: false,
            safety_checker: true,
        }
    }
}

impl ImageSettings {
    /// Width and height in pixels, the model's native size where not given.
    pub fn size(&self, f: Family) -> (u32, u32) {
        let n = f.native();
        (if self.width == 0 { n } else { self.width }, if self.height == 0 { n } else { self.height })
    }
}

/// The image models the estimator knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Stable Diffusion 1.x (860 M UNet).
    Sd15,
    /// SDXL base 1.0 (2.6 B UNet, two text encoders).
    Sdxl,
    /// FLUX.1 (12 B transformer, T5-XXL); `schnell` uses 256 text tokens instead of 512.
    Flux {
        /// FLUX.1-schnell.
        schnell: bool,
    },
    /// Stable Diffusion 3 / 3.5 (an MMDiT transformer, CLIP-L, OpenCLIP bigG and T5-XXL, a
    /// 16-channel VAE).
    Sd3(Sd3),
}

/// The Stable Diffusion 3.x transformers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sd3 {
    /// SD3 Medium: 24 joint blocks of hidden size 1536 (2.03 B).
    Medium,
    /// SD3.5 Medium: SD3 Medium's shape with a second attention in its first 13 blocks (2.5 B).
    Medium35,
    /// SD3.5 Large: 38 joint blocks of hidden size 2432 (8.1 B).
    Large35,
}

impl Family {
    /// The family of a diffusion preset, by its name.
    pub fn of(arch: &Arch) -> Option<Family> {
        if arch.kind != ModelKind::Diffusion {
            return None;
        }
        let n = arch.name.to_ascii_lowercase();
        if n.contains("flux") {
            Some(Family::Flux { schnell: n.contains("schnell") })
        } else if n.contains("sd3") || n.contains("sd-3") || n.contains("diffusion-3") {
            Some(Family::Sd3(if n.contains("large") {
                Sd3::Large35
            } else if n.contains("3.5") || n.contains("3-5") {
                Sd3::Medium35
            } else {
                Sd3::Medium
            }))
        } else if n.contains("xl") {
            Some(Family::Sdxl)
        } else if ["1.5", "1-5", "v1", "sd15", "sd-1", "sd1", "1.4"].iter().any(|k| n.contains(k)) {
            Some(Family::Sd15)
        } else {
            None
        }
    }

    /// Native size in pixels (the VAE's sample size).
    pub fn native(self) -> u32 {
        match self {
            Family::Sd15 => 512,
            _ => 1024,
        }
    }

    /// Whether the pipeline runs classifier-free guidance by default.
    pub fn cfg_default(self) -> bool {
        !matches!(self, Family::Flux { .. })
    }
}
