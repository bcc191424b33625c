//! Issue 38 item 14: nothing moves under the pointer. A note (a screenshot saved, an export
//! written) appears over the window's corner instead of pushing the tab down; the VRAM tab's
//! assumption rows keep their places when one is clicked.
#![cfg(feature = "gui")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test reports a failure

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use gpu_doctor::gui::{DoctorApp, Tab};

fn window() -> Harness<'static, DoctorApp> {
    super::gui_import::demo_window()
}

#[test]
fn a_note_appears_over_the_corner_and_moves_nothing() {
    let mut h = window();
    h.state_mut().tab = Tab::Vram;
    h.run();
    let before = h.get_by_label("LoRA").rect();
    h.state().set_info("Screenshot saved to /tmp/x.png and copied to the clipboard.".into());
    h.run();
    let note = h.get_by_label("Screenshot saved to /tmp/x.png and copied to the clipboard.").rect();
    assert_eq!(h.get_by_label("LoRA").rect(), before, "the tab did not move");
    assert!(note.min.x > 640.0 && note.min.y > 600.0, "the note sits in the lower right corner: {note:?}");
    h.get_by_label("Dismiss").click();
    h.run();
    assert!(h.query_by_label_contains("Screenshot saved").is_none());
    assert_eq!(h.get_by_label("LoRA").rect(), before);
}

#[test]
fn the_vram_assumption_rows_keep_their_places_when_one_is_clicked() {
    let mut h = window();
    h.state_mut().tab = Tab::Vram;
    h.run();
    h.get_by_label("LoRA").click();
    h.run();
    // Two assumptions: attention (eager) and checkpointing (none); checkpointing moves the figure
    // more. Clicking it makes it a choice, no longer an assumption: its row goes, and the other
    // row stays where it was (rows in a fixed order, not by how much they move the figure).
    let attention = h.get_by_label_contains("with eager attention: ").rect();
    let checkpointing = h.get_by_label_contains("with gradient checkpointing: ");
    assert!(checkpointing.rect().min.y > attention.min.y, "fixed order: attention first");
    checkpointing.click();
    h.run();
    assert_eq!(h.get_by_label_contains("with eager attention: ").rect().min, attention.min, "the other row stayed");
}

/// A long alternative ("with a checkpoint saved quantised (bnb-4bit, GPTQ, AWQ): …") wraps inside
/// the window instead of running past its right edge.
#[test]
fn the_vram_assumption_buttons_stay_inside_the_window() {
    use gpu_doctor::vram::{Framework, Quant};
    let mut h = window();
    h.state_mut().tab = Tab::Vram;
    let s = &mut h.state_mut().vram.settings;
    (s.framework, s.quant, s.seq, s.bnb_before_0_43) = (Framework::LitGpt, Quant::Nf4Dq, 2048, true);
    h.run();
    let width = 1280.0;
    let buttons: Vec<_> = h.query_all_by_label_contains(" GiB").filter(|n| n.rect().min.x > 600.0).collect();
    assert!(
        buttons.iter().any(|n| n.rect().height() > 30.0),
        "the long alternative takes two lines: {:?}",
        buttons.iter().map(|n| n.rect()).collect::<Vec<_>>()
    );
    for b in &buttons {
        assert!(b.rect().max.x <= width, "{:?} runs past the window", b.rect());
    }
}
