//! The diagnosis's facts: what the checklist reads and where it comes from. The view of a system
//! ([`system::SystemView`]: this machine as [`system::LiveSystem`], a capture as
//! [`system::CapturedSystem`]), collecting it live ([`collect`], the kernel log from
//! [`journal`], the loader's cache from [`ldcache`], the device files' [`holders`]), writing and
//! unpacking captures ([`capture`], [`archive`]), importing an nvidia-bug-report.log or
//! `nvidia-smi -q` text ([`bugreport`], [`bugview`]), the parsers ([`parse`]) and the Windows facts
//! ([`winfacts`]). No judgement: the checks that read these are the judgement crate's.

pub mod archive;
pub mod bugreport;
pub mod bugview;
pub mod capture;
pub mod collect;
#[cfg(windows)]
pub(crate) mod collect_win;
pub mod holders;
pub mod journal;
pub mod ldcache;
pub mod parse;
pub mod system;
pub mod winfacts;

pub use crate::verdict::Verdict;

// The crates below this one under the names the code has always used for them (`crate::units`,
// `crate::telemetry::…`, `crate::tr!`; the ground's through `ground!`), and this crate under its
// own module name where it has one: a module keeps its paths whichever crate it lives in. (Not
// every crate uses every name.)
#[allow(unused_imports)]
use crate as diagnose;
gpu_doctor_core::ground!();
#[allow(unused_imports)]
pub(crate) use gpu_doctor_telemetry as telemetry;
