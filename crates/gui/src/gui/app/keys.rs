//! The window by keyboard: Escape closes the dialog in front, Ctrl+1…9 switch tabs (the views in their bar's order) (shown in
//! each tab's hover text), and a dialog that opens takes the keyboard focus (its first control).

use eframe::egui::{self, Key, KeyboardShortcut, Modifiers};

use super::{DoctorApp, Tab};

/// The number keys, in order: the n-th view in the tab bar is selected with Ctrl+n (⌘ on macOS).
const NUMBER_KEYS: [Key; 9] =
    [Key::Num1, Key::Num2, Key::Num3, Key::Num4, Key::Num5, Key::Num6, Key::Num7, Key::Num8, Key::Num9];

/// The key that selects `tab` with Ctrl (its place in the tab bar), if it is among the first nine.
pub fn tab_key(tab: Tab) -> Option<Key> {
    NUMBER_KEYS.get(tab.position()).copied()
}

/// The shortcut that selects `tab`, as the hover text shows it ("Ctrl+3").
pub fn tab_shortcut(ctx: &egui::Context, tab: Tab) -> String {
    tab_key(tab).map(|k| ctx.format_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, k))).unwrap_or_default()
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
            && !crate::gui::chooser::in_window_open(ctx)
            && ctx.input_mut(|i| i.consume_key(Modifiers::NONE, Key::Escape))
        {
            *open = false;
        }
        for (tab, key) in Tab::all().filter_map(|t| tab_key(t).map(|k| (t, k))) {
            if ctx.input_mut(|i| i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, key))) {
                self.tab = tab;
                // A tab chosen by keyboard is shown, not hidden behind the card.
                self.card.open = false;
            }
        }
    }
}
