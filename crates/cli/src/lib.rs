//! gpu-doctor's command-line front end: the [`cli`] module (clap arguments shared by both
//! binaries, one file per subcommand, text and JSON output, exit codes), under its own name so its
//! subcommand modules (`cli::vram`, `cli::smoke`, `cli::report`) stand beside the crates they
//! drive.

// The crates below this one under the names the code has always used for them (`crate::units`,
// `crate::telemetry::…`, `crate::tr!`; the ground's through `ground!`), and this crate under its
// own module name where it has one: a module keeps its paths whichever crate it lives in. (Not
// every crate uses every name.)
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

pub mod cli;
pub mod lang;

/// The ground's languages and catalogue ([`gpu_doctor_core::i18n`]) with the language the front
/// ends show ([`lang`]): `i18n::tr`, `i18n::current`, `i18n::set` and the shortcuts that render in
/// it.
pub mod i18n {
    pub use crate::lang::{Here, Shown, UnitHere, Word, current, localize_command, scoped, set, tr, tr_dyn};
    pub use gpu_doctor_core::i18n::*;
}

/// The ground's units ([`gpu_doctor_core::units`]) with percentages written in the language the
/// front ends show.
pub mod units {
    pub use crate::lang::{percent, percent_whole};
    pub use gpu_doctor_core::units::*;
}
