//! Issue 38 item 8: where the desktop has no file dialog (no xdg-desktop-portal, no zenity),
//! Open… draws gpu-doctor's own chooser in the window, says so in its title, speaks the
//! window's language and closes with Cancel or Escape.
#![cfg(feature = "gui")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test reports a failure

use eframe::egui::Key;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use gpu_doctor::gui::{DoctorApp, Tab};

fn window() -> Harness<'static, DoctorApp> {
    super::gui_import::demo_window()
}

#[test]
fn open_draws_its_own_chooser_where_the_desktop_has_none() {
    gpu_doctor::gui::always_in_window(true);
    let mut h = window();
    h.state_mut().tab = Tab::Checklist;
    h.step();
    h.get_by_label("Open…").click();
    h.run_steps(4);
    h.get_by_label("Cancel");
    h.get_by_label_contains("Open a file (gpu-doctor's own chooser: chosen in the settings)");
    // Escape goes to the chooser, not to anything behind it.
    h.key_press(Key::Escape);
    h.run_steps(4);
    assert!(h.query_by_label_contains("gpu-doctor's own chooser").is_none(), "Escape closed the chooser");
    assert_eq!(h.state().tab, Tab::Checklist);
    // Open folder… and Cancel.
    h.get_by_label("Open folder…").click();
    h.run_steps(4);
    h.get_by_label_contains("Open a folder (gpu-doctor's own chooser");
    h.get_by_label("Cancel").click();
    h.run_steps(4);
    assert!(h.query_by_label_contains("gpu-doctor's own chooser").is_none(), "Cancel closed the chooser");
}
