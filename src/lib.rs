//! gpu-doctor: find out why an NVIDIA GPU is idle, slow or not working.
//!
//! The workspace's crates, each a layer the compiler keeps in its place (ARCHITECTURE.md says
//! which may depend on which), re-exported here under the names the binaries, the tests, the
//! benchmarks and the examples use:
//! - [`i18n`], [`units`], [`verdict`], [`knowledge`], [`safe_fs`], [`text`], [`paths`],
//!   [`signals`] (crate `gpu-doctor-core`): the ground; `i18n` and `units` as the front ends
//!   see them, with the language they show ([`lang`]).
//! - [`telemetry`] (`gpu-doctor-telemetry`): what is measured: GPU sources (NVML, demo, replay),
//!   host metrics, the sampler threads, the bounded history, recordings, the metric table.
//! - [`diagnose`] (`gpu-doctor-judgement`, over the facts of `gpu-doctor-facts`): the checklist,
//!   the differentials and the bottleneck verdicts.
//! - [`vram`], [`smoke`], [`jobs`]: the VRAM calculator, the CUDA smoke test, the jobs (run,
//!   focus, scale, tune, compare).
//! - [`present`], [`report`], [`export`], [`settings`] (`gpu-doctor-present`): what people and
//!   programs read.
//! - Front ends: [`cli`] (`gpu-doctor-cli`) and, with the `gui` feature, `gui`
//!   (`gpu-doctor-gui`). [`relaunch`] is the binaries' own: the self-relaunched children.
#![deny(missing_docs)]

pub use gpu_doctor_cli::{cli, i18n, lang, tr, units};
pub use gpu_doctor_core::{APP_ID, knowledge, msg, paths, safe_fs, signals, text, tr_in, tr_key, verdict};
#[cfg(feature = "gui")]
pub use gpu_doctor_gui::gui;
pub use gpu_doctor_jobs as jobs;
pub use gpu_doctor_judgement as diagnose;
pub use gpu_doctor_present::{export, present, report, settings};
pub use gpu_doctor_smoke as smoke;
pub use gpu_doctor_telemetry as telemetry;
pub use gpu_doctor_vram as vram;

pub mod relaunch;

#[cfg(test)]
mod architecture_tests;
