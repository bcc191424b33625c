//! The options many commands share, each defined once and flattened into every command (and the
//! window's command line) that takes it: `--interval` ([`IntervalArg`]), `--lang` ([`LangArg`])
//! and the data source ([`super::SourceArgs`], [`super::NvmlArgs`]). Their help text, range and
//! parser live here only; a command chooses the default of its `--interval` by a type
//! ([`Sampling`], [`Run`], [`FromSettings`]) and reads the value resolved with
//! [`IntervalArg::get`].

use std::marker::PhantomData;

use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};

use crate::i18n::{Here as _, Message};
use crate::telemetry::interval::Interval;
use crate::telemetry::select::GpuSelection;

/// A domain parser as clap's value parser: the domain says what is wrong as a message, and clap
/// prints it as it is, so it is rendered here, in the language the command line shows.
pub fn shown<T>(parse: fn(&str) -> Result<T, Message>) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync {
    move |s| parse(s).map_err(|m| m.here())
}

/// The default of a command's `--interval`.
pub trait IntervalDefault: Send + Sync + 'static {
    /// The interval when none is given (`None`: the caller decides, e.g. from the settings), and
    /// how the help shows it.
    const DEFAULT: Option<(Interval, &'static str)>;
}

/// Commands that watch the machine: one sample a second.
#[derive(Debug, Clone, Copy)]
pub struct Sampling;
impl IntervalDefault for Sampling {
    const DEFAULT: Option<(Interval, &'static str)> = Some((Interval::DEFAULT, "1"));
}

/// Commands that measure a job (`run`, `tune`): twice a second.
#[derive(Debug, Clone, Copy)]
pub struct Run;
impl IntervalDefault for Run {
    const DEFAULT: Option<(Interval, &'static str)> = Some((Interval::RUN_DEFAULT, "0.5"));
}

/// The window: the settings file's interval, else 1 s ([`crate::settings::Settings::interval`]).
#[derive(Debug, Clone, Copy)]
pub struct FromSettings;
impl IntervalDefault for FromSettings {
    const DEFAULT: Option<(Interval, &'static str)> = None;
}

/// `--interval SECS`: seconds between samples, 0.25-10 ([`Interval`]'s range and parser).
pub struct IntervalArg<D> {
    value: Option<Interval>,
    default: PhantomData<D>,
}

impl<D> Clone for IntervalArg<D> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<D> Copy for IntervalArg<D> {}

impl<D> std::fmt::Debug for IntervalArg<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("IntervalArg").field(&self.value).finish()
    }
}

impl<D: IntervalDefault> Default for IntervalArg<D> {
    fn default() -> Self {
        IntervalArg { value: D::DEFAULT.map(|(i, _)| i), default: PhantomData }
    }
}

impl<D: IntervalDefault> IntervalArg<D> {
    const ID: &'static str = "interval";

    /// The argument, the one place its name, value, parser and help are written.
    fn arg() -> Arg {
        let arg = Arg::new(Self::ID).long("interval").value_name("SECS").value_parser(shown(Interval::parse_message));
        match D::DEFAULT {
            Some((_, text)) => arg.default_value(text).help("Seconds between samples (0.25-10)"),
            None => arg.help("Seconds between samples (0.25-10). Default: the settings file's, else 1"),
        }
    }

    /// The interval given on the command line, else the command's default; `None` where the
    /// default is the caller's ([`FromSettings`]) and none was given.
    pub fn given(self) -> Option<Interval> {
        self.value
    }

    /// The interval: the one given, else the command's default (for [`FromSettings`] without
    /// one: 1 s, as with no settings file).
    pub fn get(self) -> Interval {
        self.value.or(D::DEFAULT.map(|(i, _)| i)).unwrap_or(Interval::DEFAULT)
    }

    /// An interval as if given on the command line.
    pub fn new(value: Interval) -> Self {
        IntervalArg { value: Some(value), default: PhantomData }
    }
}

impl<D: IntervalDefault> FromArgMatches for IntervalArg<D> {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let value = m.try_get_one::<Interval>(Self::ID).ok().flatten().copied().or(D::DEFAULT.map(|(i, _)| i));
        Ok(IntervalArg { value, default: PhantomData })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        if let Ok(Some(v)) = m.try_get_one::<Interval>(Self::ID) {
            self.value = Some(*v);
        }
        Ok(())
    }
}

impl<D: IntervalDefault> Args for IntervalArg<D> {
    fn augment_args(cmd: Command) -> Command {
        cmd.arg(Self::arg())
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        cmd.arg(Self::arg())
    }
}

/// `--gpu INDEX[,INDEX…]`: only these GPUs, NVML's indices (as `nvidia-smi -i` takes them), in
/// every command that reads a data source and in the window.
#[derive(Debug, Clone, Default, Args)]
pub struct GpuArg {
    /// Only these GPUs: NVML indices as nvidia-smi lists them, e.g. 0, 0,2 or 1-3 (default: all)
    #[arg(long, value_name = "INDICES", value_parser = shown(GpuSelection::parse))]
    pub gpu: Option<GpuSelection>,
}

/// What a command's `--json` prints: its help, chosen by a type as `--interval`'s default is.
pub trait JsonKind: Send + Sync + 'static {
    /// The help of `--json` for this kind of output.
    const HELP: &'static str;
}

/// A result printed once, as a JSON document in place of the text (check, info, vram, smoke...).
#[derive(Debug, Clone, Copy)]
pub struct Document;
impl JsonKind for Document {
    const HELP: &'static str = "Print JSON instead of text";
}

/// A stream: one JSON object per line in place of each line of text (monitor, replay).
#[derive(Debug, Clone, Copy)]
pub struct Lines;
impl JsonKind for Lines {
    const HELP: &'static str = "Print one JSON object per line instead of text";
}

/// A job's summary: printed as JSON where and when the text summary would be (run, tune).
#[derive(Debug, Clone, Copy)]
pub struct Summary;
impl JsonKind for Summary {
    const HELP: &'static str = "Print the summary as JSON where and when the text summary would be";
}

/// `--json`: machine-readable output, the same in every language (its texts in English, each with
/// its message). Whether it is on is [`JsonArg::on`]; what it prints is the command's [`JsonKind`].
pub struct JsonArg<K> {
    on: bool,
    kind: PhantomData<K>,
}

impl<K> Clone for JsonArg<K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K> Copy for JsonArg<K> {}

impl<K> Default for JsonArg<K> {
    fn default() -> Self {
        JsonArg { on: false, kind: PhantomData }
    }
}

impl<K> std::fmt::Debug for JsonArg<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("JsonArg").field(&self.on).finish()
    }
}

impl<K: JsonKind> JsonArg<K> {
    /// Its id, for `conflicts_with` ("json").
    pub const ID: &'static str = "json";

    /// The argument, the one place its name and help are written.
    fn arg() -> Arg {
        Arg::new(Self::ID).long("json").action(clap::ArgAction::SetTrue).help(K::HELP)
    }

    /// True when `--json` was given.
    pub fn on(self) -> bool {
        self.on
    }

    /// `--json` as if given (or not) on the command line.
    pub fn new(on: bool) -> Self {
        JsonArg { on, kind: PhantomData }
    }
}

impl<K: JsonKind> FromArgMatches for JsonArg<K> {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(JsonArg::new(m.try_get_one::<bool>(Self::ID).ok().flatten().copied().unwrap_or(false)))
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        if let Ok(Some(v)) = m.try_get_one::<bool>(Self::ID) {
            self.on = *v;
        }
        Ok(())
    }
}

impl<K: JsonKind> Args for JsonArg<K> {
    fn augment_args(cmd: Command) -> Command {
        cmd.arg(Self::arg())
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        cmd.arg(Self::arg())
    }
}

/// `--lang`: the language of the window, the output and reports, on both binaries and every
/// subcommand (global).
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct LangArg {
    /// Language of the output, reports and the window (default: GPU_DOCTOR_LANG, then the window's
    /// own setting for the window, then the system's locale). --json output, exit codes and
    /// commands are the same in every language.
    #[arg(long, value_enum, global = true)]
    pub lang: Option<crate::i18n::Lang>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The help's default is the value the command gets.
    #[test]
    fn each_default_is_shown_as_it_is() {
        for (value, text) in [Sampling::DEFAULT, Run::DEFAULT].into_iter().flatten() {
            assert_eq!(Interval::parse_message(text), Ok(value));
        }
        assert_eq!(IntervalArg::<Sampling>::default().get(), Interval::DEFAULT);
        assert_eq!(IntervalArg::<Run>::default().get(), Interval::RUN_DEFAULT);
        assert_eq!(IntervalArg::<FromSettings>::default().given(), None);
    }

    #[derive(Debug, clap::Parser)]
    struct Probe {
        #[command(flatten)]
        interval: IntervalArg<Run>,
    }

    #[test]
    fn given_default_and_out_of_range() {
        use clap::Parser as _;
        assert_eq!(Probe::try_parse_from(["p"]).map(|p| p.interval.get()).ok(), Some(Interval::RUN_DEFAULT));
        let two = Probe::try_parse_from(["p", "--interval", "2"]).map(|p| p.interval.get().secs()).ok();
        assert_eq!(two, Some(2.0));
        assert!(Probe::try_parse_from(["p", "--interval", "11"]).is_err());
    }
}
