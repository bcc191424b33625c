//! The window by keyboard: Escape closes the dialog in front, Ctrl+1…6 switch tabs (shown in
//! each tab's hover text), and a dialog that opens takes the keyboard focus (its first control).

use eframe::egui::{self, Key, KeyboardShortcut, Modifiers};

use super::{DoctorApp, Tab};

/// The tabs in their bar's order with the key that selects them (with Ctrl, or ⌘ on macOS).
pub const TAB_KEYS: [(Key, Tab); 6] = [
    (Key::Num1, Tab::Monitor),
    (Key::Num2, Tab::Checklist),
    (Key::Num3, Tab::Vram),
    (Key::Num4, Tab::Smoke),
    (Key::Num5, Tab::Tune),
    (Key::Num6, Tab::About),
];

/// The shortcut that selects `tab`, as the hover text shows it ("Ctrl+3").
pub fn tab_shortcut(ctx: &egui::Context, tab: Tab) -> String {
    TAB_KEYS
        .iter()
        .find(|(_, t)| *t == tab)
        .map(|(k, _)| ctx.format_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, *k)))
        .unwrap_or_default()
}

impl DoctorApp {
    /// Handles the window's own keys, before the dialogs and tabs are drawn.
    pub(super) fn keyboard(&mut self, ctx: &egui::Context) {
        // Escape closes the dialog in front (the report over the card over the rest); with no
        // dialog open it is left to the widget that has focus.
        let front: Option<&mut bool> = [
            &mut self.end_dialog.open,
            &mut self.report.open,
            &mut self.card.open,
            &mut self.run_dialog.open,
            &mut self.focus_dialog.open,
            &mut self.connect_dialog.open,
        ]
        .into_iter()
        .find(|open| **open);
        // (An in-window file chooser takes its own Escape.)
        if let Some(open) = front
            && !crate::gui::chooser::in_window_open()
            && ctx.input_mut(|i| i.consume_key(Modifiers::NONE, Key::Escape))
        {
            *open = false;
        }
        for (key, tab) in TAB_KEYS {
            if ctx.input_mut(|i| i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, key))) {
                self.tab = tab;
                // A tab chosen by keyboard is shown, not hidden behind the card.
                self.card.open = false;
            }
        }
    }
}
