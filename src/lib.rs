//! gpu-doctor: find out why an NVIDIA GPU is idle, slow or not working.
//!
//! The library holds every piece of domain logic: telemetry sources and the sampler
//! ([`telemetry`]), formatting of units ([`units`]), the command-line front end ([`cli`]) and,
//! with the `gui` feature, the desktop app ([`gui`]). The two binaries are thin wrappers.
#![deny(missing_docs)]

pub mod cli;
pub mod diagnose;
pub mod present;
pub mod report;
pub mod settings;
pub mod smoke;
pub mod telemetry;
pub mod units;
pub mod vram;

#[cfg(feature = "gui")]
pub mod gui;

/// Reverse-DNS application id shared by the window, the desktop file and the persistence folder.
pub const APP_ID: &str = "io.github.gpu_doctor.GpuDoctor";
