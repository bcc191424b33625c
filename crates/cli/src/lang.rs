//! The language the front ends show, and nothing below them: the window's choice (switched live)
//! or the command line's (`--lang`, then `GPU_DOCTOR_LANG`, the app's setting, the system's),
//! resolved once by the front end and kept here. The domain and the presentation layer take the
//! language as an argument ([`Lang`]); they cannot read this setting, which lives in the lowest
//! front-end crate. The front ends' shortcuts ([`tr!`](crate::tr), [`Here::here`],
//! [`Shown::show`], [`Word::word`], [`UnitHere::format`], [`percent`]) render in it.
//!
//! A test chooses the language through the same setting: [`scoped`] holds a language for one
//! thread (a test of the window in Chinese beside one in English).

use std::cell::Cell;
use std::sync::atomic::{AtomicU8, Ordering};

use gpu_doctor_core::i18n::{self as ground, Lang, ToMessage};
use gpu_doctor_core::units::MetricUnit;
use gpu_doctor_core::verdict::Verdict;
use gpu_doctor_telemetry::Reading;

static CURRENT: AtomicU8 = AtomicU8::new(0);

thread_local! {
    static SCOPED: Cell<Option<Lang>> = const { Cell::new(None) };
}

fn code(lang: Lang) -> u8 {
    match lang {
        Lang::En => 0,
        Lang::ZhCn => 1,
    }
}

fn from_code(v: u8) -> Lang {
    if v == 1 { Lang::ZhCn } else { Lang::En }
}

/// Makes `lang` the language the front end shows from now on (the window switches live). Inside
/// [`scoped`] it is this thread's language until the scope ends, and the process's stays as it
/// was: a test drives the window's switch of language without changing what other tests read.
pub fn set(lang: Lang) {
    if SCOPED.with(Cell::get).is_some() {
        SCOPED.with(|s| s.set(Some(lang)));
    } else {
        CURRENT.store(code(lang), Ordering::Relaxed);
    }
}

/// The language the front end shows on this thread.
pub fn current() -> Lang {
    SCOPED.with(Cell::get).unwrap_or_else(|| from_code(CURRENT.load(Ordering::Relaxed)))
}

/// Runs `f` with `lang` as this thread's language (a test of the window in one language).
pub fn scoped<T>(lang: Lang, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<Lang>);
    impl Drop for Restore {
        fn drop(&mut self) {
            SCOPED.with(|s| s.set(self.0));
        }
    }
    let _restore = Restore(SCOPED.with(|s| s.replace(Some(lang))));
    f()
}

/// `en`, a text of the catalogue, in the language shown.
pub fn tr(en: &'static str) -> &'static str {
    ground::tr_static(current(), en)
}

/// `en`, a catalogue text known only at run time, in the language shown.
pub fn tr_dyn(en: &str) -> String {
    ground::tr_in(current(), en)
}

/// `cmd` with its help in the language shown.
pub fn localize_command(cmd: clap::Command) -> clap::Command {
    ground::localize_command(cmd, current())
}

/// A percentage as the language shown writes it (`7.5 %`, `7.5%`).
pub fn percent(p: f64) -> String {
    gpu_doctor_core::units::percent_in(current(), p)
}

/// A whole percentage as the language shown writes it (`83 %`, `83%`).
pub fn percent_whole(p: f64) -> String {
    gpu_doctor_core::units::percent_whole_in(current(), p)
}

/// A message in the language shown.
pub trait Here {
    /// The message rendered in the language the front end shows now.
    fn here(&self) -> String;
}

/// A message, or a domain error's reason.
impl<T: ToMessage + ?Sized> Here for T {
    fn here(&self) -> String {
        self.to_message().render(current())
    }
}

/// A reading as the front end shows it.
pub trait Shown<T> {
    /// The value formatted with `f`, or `n/a (reason)` in the language shown.
    fn show(&self, f: impl FnOnce(&T) -> String) -> String;
    /// The value formatted with `f`, or a short `n/a` in the language shown.
    fn show_short(&self, f: impl FnOnce(&T) -> String) -> String;
}

impl<T> Shown<T> for Reading<T> {
    fn show(&self, f: impl FnOnce(&T) -> String) -> String {
        self.show_in(current(), f)
    }

    fn show_short(&self, f: impl FnOnce(&T) -> String) -> String {
        self.show_short_in(current(), f)
    }
}

/// A verdict in a word of the language shown.
pub trait Word {
    /// "FAIL", "失败".
    fn word(self) -> &'static str;
}

impl Word for Verdict {
    fn word(self) -> &'static str {
        self.word_in(current())
    }
}

/// A metric's value as the front end shows it.
pub trait UnitHere {
    /// [`MetricUnit::format_in`] in the language shown.
    fn format(self, v: f64) -> String;
    /// [`MetricUnit::format_whole_in`] in the language shown.
    fn format_whole(self, v: f64) -> String;
}

impl UnitHere for MetricUnit {
    fn format(self, v: f64) -> String {
        self.format_in(current(), v)
    }

    fn format_whole(self, v: f64) -> String {
        self.format_whole_in(current(), v)
    }
}

/// A text in the language the front end shows: `tr!("Checklist")`, or with named placeholders
/// `tr!("{n} checks", n = count)`.
#[macro_export]
macro_rules! tr {
    ($en:literal) => {
        $crate::lang::tr($en)
    };
    ($en:literal, $($name:ident = $value:expr),+ $(,)?) => {
        $crate::i18n::fill($crate::lang::tr($en), &[$((stringify!($name), &$value as &dyn ::std::fmt::Display)),+])
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_doctor_core::i18n::Message;

    #[test]
    fn a_switch_inside_a_scope_changes_only_this_thread() {
        let before = CURRENT.load(Ordering::Relaxed);
        scoped(Lang::En, || {
            set(Lang::ZhCn);
            assert_eq!(current(), Lang::ZhCn);
            let elsewhere = std::thread::spawn(|| CURRENT.load(Ordering::Relaxed)).join().unwrap_or(u8::MAX);
            assert_eq!(elsewhere, before, "the process's language changed");
        });
        assert_eq!(CURRENT.load(Ordering::Relaxed), before);
    }

    #[test]
    fn a_scoped_language_holds_on_this_thread_only_and_ends_with_the_scope() {
        let outside = current();
        let inside = scoped(Lang::ZhCn, || {
            let other = std::thread::spawn(current).join().unwrap_or_default();
            (current(), other)
        });
        assert_eq!(inside.0, Lang::ZhCn);
        assert_eq!(inside.1, from_code(CURRENT.load(Ordering::Relaxed)));
        assert_eq!(current(), outside);
        assert_eq!(scoped(Lang::ZhCn, || tr("Checklist")), "检查清单");
        assert_eq!(scoped(Lang::En, || tr("Checklist")), "Checklist");
        assert_eq!(scoped(Lang::ZhCn, || Message::new("Checklist").here()), "检查清单");
    }
}
