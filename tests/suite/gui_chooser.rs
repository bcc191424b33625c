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

/// Types `text` into the focused widget and presses Enter.
fn type_enter(h: &mut Harness<'static, DoctorApp>, text: &str) {
    h.event(eframe::egui::Event::Text(text.to_string()));
    h.run_steps(2);
    h.key_press(Key::Enter);
    h.run_steps(2);
}

/// Steps the window until a label containing `text` shows (the folder is read on a thread of its
/// own), for at most 20 s.
fn wait_for(h: &mut Harness<'static, DoctorApp>, text: &str) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while h.query_by_label_contains(text).is_none() {
        if std::time::Instant::now() >= until {
            let state = ["gpu-doctor's own chooser", "Reading the folder", "items", "Cannot read"]
                .map(|s| (s, h.query_by_label_contains(s).is_some()));
            panic!("{text} never showed; {state:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        h.step();
    }
}

/// Issue 53, items 18 and 23: gpu-doctor's own chooser reads a folder of 100,000 files off the
/// window's thread (the frame that asks shows "Reading the folder…") and does not repaint once it
/// has; its path field has the keyboard when it opens, and Tab and Space stay in it (the tabs
/// behind do not move); a folder that does not exist opens the nearest one above it; a name that
/// is not UTF-8 (its bytes as `\\xNN`) and a name with a newline are shown on one line.
#[cfg(target_os = "linux")]
#[test]
fn the_own_chooser_reads_off_the_window_thread_and_holds_the_keyboard() {
    use std::os::unix::ffi::OsStrExt as _;
    gpu_doctor::gui::always_in_window(true);
    let t = tempfile::tempdir().unwrap();
    let many = t.path().join("many");
    std::fs::create_dir(&many).unwrap();
    for i in 0..100_000u32 {
        std::fs::File::create(many.join(format!("f{i:06}.log"))).unwrap();
    }
    let odd = t.path().join("odd");
    std::fs::create_dir(&odd).unwrap();
    std::fs::write(odd.join(std::ffi::OsStr::from_bytes(b"bad\xffname.txt")), "x").unwrap();
    std::fs::write(odd.join("two\nlines.txt"), "x").unwrap();

    let mut h = window();
    h.state_mut().tab = Tab::Checklist;
    h.step();
    h.get_by_label("Open…").click();
    h.run_steps(4);
    // The path field has the keyboard: typing goes there.
    type_enter(&mut h, &many.display().to_string());
    let started = std::time::Instant::now();
    h.step();
    let first_frame = started.elapsed();
    wait_for(&mut h, "100000 items");
    eprintln!("first frame after Enter: {first_frame:?}; listed after {:?}", started.elapsed());
    h.get_by_label("f000000.log");
    // Nothing moves once listed: no repaint is asked for.
    assert!(h.try_run().is_ok(), "the chooser repaints while nothing changes");
    // Tab stays in the chooser: it never reaches a tab (or anything) behind it, so Space cannot
    // switch one.
    for n in 0..25 {
        h.key_press(Key::Tab);
        h.run_steps(2);
        for t in Tab::all() {
            for node in h.query_all_by_label(t.title()) {
                assert!(!node.is_focused(), "Tab {n} reached the {} tab behind the chooser", t.title());
            }
        }
        assert!(h.query_by_label_contains("gpu-doctor's own chooser").is_some(), "Tab {n} left the chooser");
    }
    assert_eq!(h.state().tab, Tab::Checklist);
    h.key_press(Key::Escape);
    h.run_steps(4);

    // A folder that does not exist: the nearest one above it.
    h.get_by_label("Open…").click();
    h.run_steps(4);
    let gone = t.path().join("no/such/folder");
    type_enter(&mut h, &gone.display().to_string());
    wait_for(&mut h, "does not exist: its nearest folder is shown");
    h.get_by_label("many/");
    h.key_press(Key::Escape);
    h.run_steps(4);

    // Names as one line of text.
    h.get_by_label("Open…").click();
    h.run_steps(4);
    type_enter(&mut h, &odd.display().to_string());
    wait_for(&mut h, "2 items");
    h.get_by_label("bad\\xFFname.txt");
    h.get_by_label("two\\nlines.txt");
    h.key_press(Key::Escape);
    h.run_steps(4);
}
