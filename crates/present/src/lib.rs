//! What people and programs read of the domain's results: the wording shared by the front ends
//! ([`present`]), support reports and their redaction ([`report`]), the Prometheus exposition and
//! its server ([`export`]), and the user's settings file ([`settings`]).

pub mod export;
pub mod present;
pub mod report;
pub mod settings;

// The crates below this one under the names the code has always used for them (`crate::units`,
// `crate::telemetry::…`, `crate::tr!`; the ground's through `ground!`), and this crate under its
// own module name where it has one: a module keeps its paths whichever crate it lives in. (Not
// every crate uses every name.)
gpu_doctor_core::ground!();
#[allow(unused_imports)]
pub(crate) use gpu_doctor_jobs as jobs;
#[allow(unused_imports)]
pub(crate) use gpu_doctor_judgement as diagnose;
#[allow(unused_imports)]
pub(crate) use gpu_doctor_smoke as smoke;
#[allow(unused_imports)]
pub(crate) use gpu_doctor_telemetry as telemetry;
#[allow(unused_imports)]
pub(crate) use gpu_doctor_vram as vram;
