//! gpu-doctor's ground: what every other crate of the workspace stands on and nothing of theirs
//! stands under. The languages and the catalogue of messages ([`i18n`], `tr_in!`, `msg!`), units and
//! their formatting ([`units`]), the verdict scale ([`verdict`]), NVIDIA's and the frameworks'
//! published tables ([`knowledge`]), the one way to read and write a user's files ([`safe_fs`]),
//! text made safe for where it is written ([`text`]), where the user's files live ([`paths`]) and
//! the stop signals ([`signals`]).

pub mod i18n;
pub mod knowledge;
pub mod paths;
pub mod safe_fs;
pub mod signals;
pub mod text;
pub mod units;
pub mod verdict;

/// Reverse-DNS application id shared by the window, the desktop file and the persistence folder.
pub const APP_ID: &str = "io.github.gpu_doctor.GpuDoctor";

/// Brings the ground's modules and macros into a crate of the workspace under the names its code
/// has always used for them (`crate::units`, `crate::i18n::Message`, `crate::msg!`): one line,
/// `gpu_doctor_core::ground!();`, at the crate's root. A front end writes
/// `gpu_doctor_core::ground!(front_end);` and brings its own `i18n` and `units` (the ground's,
/// with the language the front end shows).
#[macro_export]
macro_rules! ground {
    () => {
        $crate::ground!(front_end);
        #[allow(unused_imports)]
        pub(crate) use $crate::{i18n, units};
    };
    (front_end) => {
        #[allow(unused_imports)]
        pub(crate) use $crate::{APP_ID, knowledge, msg, paths, safe_fs, signals, text, tr_in, tr_key, verdict};
    };
}
