//! The VRAM calculator: a per-GPU breakdown (weights, KV cache, activations, gradients, optimizer
//! states, CUDA context, framework overhead, allocator slack) for inference (Hugging Face
//! `generate`, vLLM, llama.cpp) and training (full fine-tune, LoRA, QLoRA), one GPU or sharded.
//!
//! Formulas and constants come from public sources: weights per tensor group (Hugging Face
//! "Optimizing LLMs for speed and memory"; llama.cpp's quantize README for the bits per weight of
//! GGUF mixes), the KV cache (2 · layers · kv_heads · head_dim per token), training activations
//! after Korthikanti et al. 2022 (arXiv 2205.05198), framework overheads from PyTorch PRs #86509
//! (CUDA context with lazy loading) and #120925 (cuBLASLt workspace), and vLLM's
//! `gpu_memory_utilization` reservation. tests/suite/vram_accuracy.rs compares the estimates with
//! published measurements, like with like (allocated vs reserved vs nvidia-smi). Pure code (no I/O,
//! no allocation beyond the notes, a few microseconds per estimate), except [`calibration`], which
//! keeps the user's measured peaks in a file.
//!
//! The parts, all re-exported here:
//! - `arch`: the model description ([`Arch`]) and the parameter counts derived from it;
//! - `quant`: weight formats ([`Quant`]) and their bits per weight;
//! - `workload`: the settings of a run ([`Workload`] and its choice enums);
//! - `estimate`: the estimator ([`estimate()`] → [`Breakdown`]);
//! - `image`: image-generation inference (SD 1.5, SDXL, SD 3.x, FLUX.1) by pipeline phase;
//! - `fit`: what must fit on a GPU ([`need`]) and the verdict for one GPU ([`fit()`]), naming the
//!   processes to stop when the card is big enough but busy ([`FITS_ONCE_FREED`]);
//! - `solver`: the largest batch / longest sequence that fit ([`limits`]), and the one advice list
//!   the CLI and the app show ([`advice`]);
//! - `assume`: the assumptions that move the estimate by more than 5 %, each with the figure
//!   under the other choice ([`assumptions`]);
//! - `error`: [`InputError`], naming the field an input is wrong in;
//! - [`calibration`]: measured peaks saved for a model and its settings, shown with the estimate;
//! - [`presets`]: built-in and user model presets, Hugging Face `config.json` import.

// The crates below this one under the names the code has always used for them (`crate::units`,
// `crate::telemetry::…`, `crate::tr!`; the ground's through `ground!`), and this crate under its
// own module name where it has one: a module keeps its paths whichever crate it lives in. (Not
// every crate uses every name.)
#[allow(unused_imports)]
use crate as vram;
gpu_doctor_core::ground!();
#[allow(unused_imports)]
pub(crate) use gpu_doctor_telemetry as telemetry;

mod answer;
mod arch;
mod assume;
mod breakdown;
pub mod calibration;
mod error;
mod estimate;
mod fit;
mod image;
mod image_settings;
pub mod presets;
mod quant;
mod solver;
mod workload;

pub use answer::{Answer, answer};
pub use arch::{Arch, Mla, ModelKind, Moe, Params};
pub use assume::{Assumption, MATTERS, assumptions};
pub use breakdown::{Breakdown, GIB};
pub use error::InputError;
pub use estimate::estimate;
pub use fit::{Fit, FitVerdict, HEADROOM, Holder, Target, fit, need};
pub use image_settings::{Family, ImageSettings, Offload, Sd3, VaeDecode};
pub use quant::Quant;
pub use solver::{Limits, Suggestion, advice, advice_heading, limits, max_batch, max_seq, suggestions};
pub use workload::{
    Attention, Checkpointing, EncoderHead, Framework, HfGenerate, MAX_BATCH, Mode, Optimizer, Precision, Sharding,
    Trainer, Workload,
};
