//! `gpu-doctor`: opens the app; with a subcommand it runs headless like `gpu-doctor-cli`.
// The window's subsystem in every profile (CI packages and runs under Wine the very programs its
// tests built, in a profile with debug assertions): no console window behind the app.
#![cfg_attr(windows, windows_subsystem = "windows")]

use clap::{CommandFactory, FromArgMatches};
use gpu_doctor::gui::GuiArgs;
use gpu_doctor::i18n;

fn main() -> std::process::ExitCode {
    gpu_doctor::relaunch::enter_child_if_asked();
    #[cfg(windows)]
    attach_console_for_text();
    gpu_doctor::gui::prefer_lean_software_rendering();
    // The help's language; the window's is settled by main_with (the saved setting counts there).
    i18n::set(i18n::choose(i18n::lang_in_args(std::env::args_os()), None));
    let matches = i18n::localize_command(GuiArgs::command())
        .try_get_matches()
        .unwrap_or_else(|e| gpu_doctor::cli::usage_exit(&e));
    let args = GuiArgs::from_arg_matches(&matches).unwrap_or_else(|e| gpu_doctor::cli::usage_exit(&e));
    gpu_doctor::gui::main_with(args)
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
