//! Where gpu-doctor keeps the user's files: one configuration folder for the settings, the VRAM
//! calibration and the user's model presets. At the ground floor: every layer that keeps a file
//! asks here, so no layer asks another for a path.

use std::path::PathBuf;

/// Environment variable naming the config directory (tests; portable installs).
pub const CONFIG_DIR_ENV: &str = "GPU_DOCTOR_CONFIG_DIR";

/// The platform's folder for gpu-doctor: `$XDG_CONFIG_HOME/gpu-doctor` (default
/// `~/.config/gpu-doctor`), or `%APPDATA%\gpu-doctor` on Windows; `None` without a home.
pub fn platform_config_dir() -> Option<PathBuf> {
    let base = if cfg!(windows) {
        std::env::var_os("APPDATA").map(PathBuf::from)
    } else {
        std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
    };
    base.map(|b| b.join("gpu-doctor"))
}

/// The config directory: `$GPU_DOCTOR_CONFIG_DIR`, else [`platform_config_dir`].
pub fn config_dir() -> Option<PathBuf> {
    match std::env::var_os(CONFIG_DIR_ENV) {
        Some(d) => Some(PathBuf::from(d)),
        None => platform_config_dir(),
    }
}
