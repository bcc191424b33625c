//! The VRAM calculator: a per-GPU breakdown (weights, KV cache, activations, gradients, optimizer
//! states, CUDA context, framework overhead, allocator slack) for inference (Hugging Face
//! `generate`, vLLM, llama.cpp) and training (full fine-tune, LoRA, QLoRA), one GPU or sharded.
//!
//! Formulas and constants come from ../shared/knowledge/vram.md (§1 formulas, §1.6 overheads,
//! §6 engine models); tests/vram_accuracy.rs compares the estimates with the measured rows of §4,
//! like with like (allocated vs reserved vs nvidia-smi). Pure code: no I/O, no allocation beyond
//! the notes, a few microseconds per estimate.
//!
//! The parts, all re-exported here:
//! - `arch`: the model description ([`Arch`]) and the parameter counts derived from it;
//! - `quant`: weight formats ([`Quant`]) and their bits per weight;
//! - `workload`: the settings of a run ([`Workload`] and its choice enums);
//! - `estimate`: the estimator ([`estimate()`] → [`Breakdown`]);
//! - `fit`: what must fit on a GPU ([`need`]) and the verdict for one GPU ([`fit()`]);
//! - `solver`: the largest batch / longest sequence that fit, and ways to need less;
//! - `error`: [`InputError`], naming the field an input is wrong in;
//! - [`presets`]: built-in and user model presets, Hugging Face `config.json` import.

mod arch;
mod error;
mod estimate;
mod fit;
pub mod presets;
mod quant;
mod solver;
mod workload;

pub use arch::{Arch, Mla, ModelKind, Moe, Params};
pub use error::InputError;
pub use estimate::{Breakdown, GIB, estimate};
pub use fit::{Fit, HEADROOM, Target, fit, need};
pub use quant::Quant;
pub use solver::{Suggestion, max_batch, max_seq, suggestions};
pub use workload::{Checkpointing, Framework, Mode, Optimizer, Precision, Sharding, Workload};
