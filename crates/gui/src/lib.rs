//! gpu-doctor's desktop app: the [`gui`] module (the window, its views and dialogs), under its
//! own name so its parts (`gui::jobs`, the tabs) stand beside the crates they show.

// The crates below this one under the names the code has always used for them (`crate::units`,
// `crate::telemetry::…`, `crate::tr!`; the ground's through `ground!`), and this crate under its
// own module name where it has one: a module keeps its paths whichever crate it lives in. (Not
// every crate uses every name.)
#[allow(unused_imports)]
pub(crate) use gpu_doctor_cli::{cli, i18n, tr, units};
gpu_doctor_core::ground!(front_end);
#[allow(unused_imports)]
pub(crate) use gpu_doctor_jobs as jobs;
#[allow(unused_imports)]
pub(crate) use gpu_doctor_judgement as diagnose;
#[allow(unused_imports)]
pub(crate) use gpu_doctor_present::{export, present, report, settings};
#[allow(unused_imports)]
pub(crate) use gpu_doctor_smoke as smoke;
#[allow(unused_imports)]
pub(crate) use gpu_doctor_telemetry as telemetry;
#[allow(unused_imports)]
pub(crate) use gpu_doctor_vram as vram;

pub mod gui;
