//! `gpu-doctor`: opens the app; with a subcommand it runs headless like `gpu-doctor-cli`.
#![cfg_attr(all(windows, not(debug_assertions)), windows_subsystem = "windows")]

use clap::Parser;

fn main() -> std::process::ExitCode {
    gpu_doctor::telemetry::libprobe::run_library_probe();
    #[cfg(windows)]
    attach_console_for_text();
    gpu_doctor::gui::prefer_lean_software_rendering();
    gpu_doctor::gui::main_with(gpu_doctor::gui::GuiArgs::parse())
}

/// A GUI-subsystem program has no console; attach to the parent's so `--help`, `--version` and
/// subcommands print where the user typed them.
#[cfg(windows)]
fn attach_console_for_text() {
    unsafe extern "system" {
        fn AttachConsole(process_id: u32) -> i32;
    }
    const ATTACH_PARENT_PROCESS: u32 = u32::MAX;
    if std::env::args().count() > 1 {
        // SAFETY: documented Win32 call without pointers; failure (no parent console) is harmless.
        unsafe {
            AttachConsole(ATTACH_PARENT_PROCESS);
        }
    }
}
