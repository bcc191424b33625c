//! The app's views, in one list: each tab is one entry of [`views!`] (its name on the command line
//! and in the settings, its type) and one [`View`] implementation (its title and how it draws). The
//! tab bar, the Ctrl+1…9 shortcuts, `--tab`, the saved tab and the tests that sweep every tab all
//! read [`VIEWS`], so a new tab is one entry there plus its drawing code.

use std::sync::Arc;

use eframe::egui;

use super::DoctorApp;
use crate::gui::monitor::{MonitorAction, MonitorData};
use crate::telemetry::snapshot::Snapshot;
use crate::tr;

/// A top-level view of the window: the tab bar shows its title, Ctrl+N (its place in [`VIEWS`])
/// selects it, and the central panel draws it.
pub trait View: Sync {
    /// The tab's title, in the window's language.
    fn title(&self) -> &'static str;
    /// Draws the view into the central panel; an action the shell carries out after the frame.
    fn draw(&self, app: &mut DoctorApp, ui: &mut egui::Ui, snap: &Arc<Snapshot>) -> Option<MonitorAction>;
}

/// Declares the views: the [`Tab`] enum (their names on the command line and in the settings) and
/// [`VIEWS`] (each with its [`View`]), in the tab bar's order, from one list.
macro_rules! views {
    ($( $(#[$doc:meta])* $tab:ident => $view:ident ),* $(,)?) => {
        /// A top-level tab (its name is `--tab`'s value and the settings file's `tab`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
        pub enum Tab {
            $( $(#[$doc])* $tab, )*
        }

        /// Every view in the tab bar's order, with its tab.
        pub static VIEWS: &[(Tab, &dyn View)] = &[ $( (Tab::$tab, &$view), )* ];
    };
}

views! {
    /// Live GPU and host charts.
    Monitor => MonitorView,
    /// The step-by-step checklist: what is wrong and how to fix it.
    Checklist => ChecklistView,
    /// Will a model fit: the VRAM calculator.
    Vram => VramView,
    /// Does the GPU compute correctly: the CUDA smoke test.
    Smoke => SmokeView,
    /// Find the batch size, copies at once and workers: the tuner.
    Tune => TuneView,
    /// Version, renderer, data source and how NVML was loaded.
    About => AboutView,
}

impl Tab {
    /// Every tab, in the tab bar's order.
    pub fn all() -> impl Iterator<Item = Tab> {
        VIEWS.iter().map(|(t, _)| *t)
    }

    /// This tab's view.
    pub fn view(self) -> &'static dyn View {
        VIEWS.iter().find(|(t, _)| *t == self).map_or(&MonitorView, |(_, v)| *v)
    }

    /// Its place in the tab bar, from 0.
    pub fn position(self) -> usize {
        VIEWS.iter().position(|(t, _)| *t == self).unwrap_or(0)
    }

    /// The tab's title, in the window's language.
    pub fn title(self) -> &'static str {
        self.view().title()
    }
}

/// The Monitor tab.
struct MonitorView;
impl View for MonitorView {
    fn title(&self) -> &'static str {
        tr!("Monitor")
    }
    fn draw(&self, app: &mut DoctorApp, ui: &mut egui::Ui, snap: &Arc<Snapshot>) -> Option<MonitorAction> {
        let now = app.sampler.now().max(snap.latest_t());
        app.update_verdicts(snap, now);
        app.checklist.poll();
        app.monitor.root_cause = app.checklist.report.as_ref().and_then(crate::diagnose::headline::Headline::of_report);
        app.monitor.checking = app.checklist.running();
        // Copy what the charts need under the history lock, then lay out without it.
        let (from, to) = app.monitor.span(now);
        let wanted = app.monitor.wanted_series(snap);
        let data = app.sampler.with_history(|h| MonitorData::gather(h, &wanted, from, to));
        app.monitor.ui(ui, snap, &data, now, app.offset_secs)
    }
}

/// The Checklist tab.
struct ChecklistView;
impl View for ChecklistView {
    fn title(&self) -> &'static str {
        tr!("Checklist")
    }
    fn draw(&self, app: &mut DoctorApp, ui: &mut egui::Ui, _snap: &Arc<Snapshot>) -> Option<MonitorAction> {
        app.checklist.ui(ui, &app.renderer_name);
        None
    }
}

/// The VRAM calculator.
struct VramView;
impl View for VramView {
    fn title(&self) -> &'static str {
        tr!("VRAM")
    }
    fn draw(&self, app: &mut DoctorApp, ui: &mut egui::Ui, snap: &Arc<Snapshot>) -> Option<MonitorAction> {
        app.vram.ui(ui, snap);
        None
    }
}

/// The CUDA smoke test.
struct SmokeView;
impl View for SmokeView {
    fn title(&self) -> &'static str {
        tr!("Smoke test")
    }
    fn draw(&self, app: &mut DoctorApp, ui: &mut egui::Ui, snap: &Arc<Snapshot>) -> Option<MonitorAction> {
        app.smoke.remote_host = snap.remote.as_ref().map(|r| r.host.clone());
        app.smoke.ui(ui);
        None
    }
}

/// The tuner.
struct TuneView;
impl View for TuneView {
    fn title(&self) -> &'static str {
        tr!("Tune")
    }
    fn draw(&self, app: &mut DoctorApp, ui: &mut egui::Ui, _snap: &Arc<Snapshot>) -> Option<MonitorAction> {
        app.tune.ui(ui);
        None
    }
}

/// About and the settings.
struct AboutView;
impl View for AboutView {
    fn title(&self) -> &'static str {
        tr!("About")
    }
    fn draw(&self, app: &mut DoctorApp, ui: &mut egui::Ui, snap: &Arc<Snapshot>) -> Option<MonitorAction> {
        app.about(ui, snap);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum as _;

    #[test]
    fn every_tab_has_one_view_and_the_enum_lists_them_in_order() {
        assert_eq!(Tab::value_variants().to_vec(), Tab::all().collect::<Vec<_>>());
        for (i, t) in Tab::all().enumerate() {
            assert_eq!(t.position(), i);
            assert!(!t.title().is_empty());
        }
    }
}
