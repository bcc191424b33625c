//! gpu-doctor: find out why an NVIDIA GPU is idle, slow or not working.
//!
//! The library holds every piece of domain logic; the two binaries are thin wrappers. Modules:
//! - [`telemetry`]: what is measured: GPU sources (NVML, demo, replay), host metrics, the
//!   sampler threads, the bounded history and recordings.
//! - [`diagnose`]: the checklist (a registry of checks over a live or captured system view) and
//!   the bottleneck verdicts over the history.
//! - [`jobs`]: measuring a run, stuck-job triage of one process, the scaling test's fit.
//! - [`vram`]: the VRAM estimator, its presets and the fit verdict against real GPUs.
//! - [`smoke`]: the CUDA smoke test (a parent that runs the stages in a child process).
//! - [`report`]: support reports (Markdown, JSON, HTML) and redaction.
//! - [`export`]: Prometheus exposition, the exporter's HTTP server, health-check hook output.
//! - [`settings`]: the user's settings file.
//! - [`present`] and [`units`]: how values are worded and formatted, shared by every front end.
//! - Front ends: [`cli`] (clap arguments, text/JSON output, exit codes) and, with the `gui`
//!   feature, `gui` (the desktop app). Front ends call the modules above; never the reverse.
#![deny(missing_docs)]

pub mod cli;
pub mod diagnose;
pub mod export;
pub mod i18n;
pub mod jobs;
pub mod knowledge;
pub mod paths;
pub mod present;
pub mod relaunch;
pub mod report;
pub mod safe_fs;
pub mod settings;
pub mod signals;
pub mod smoke;
pub mod telemetry;
pub mod text;
pub mod units;
pub mod verdict;
pub mod vram;

#[cfg(feature = "gui")]
pub mod gui;

#[cfg(test)]
mod architecture_tests;

/// Reverse-DNS application id shared by the window, the desktop file and the persistence folder.
pub const APP_ID: &str = "io.github.gpu_doctor.GpuDoctor";
