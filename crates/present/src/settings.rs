//! The user's settings (`settings.ron` in the config directory): sampling interval, chart window,
//! theme, first tab, units and the redaction defaults. Window size and position are kept by
//! eframe's own persistence.
//!
//! A settings file that cannot be read (corrupt, from a newer version, absurdly large) never stops
//! the app: it starts with defaults, the bad file is kept beside it as `settings.ron.bak` (never
//! overwriting an earlier backup), and the user is told once.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::i18n::Message;
use crate::msg;
use crate::report::redact::RedactOptions;

/// Version written into the file; a newer one is not read.
pub const SETTINGS_VERSION: u32 = 1;
/// A settings file larger than this is not read (it cannot be ours).
pub const MAX_SETTINGS_BYTES: u64 = 1 << 20;

/// Light or dark.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum Theme {
    /// Follow the system.
    #[default]
    System,
    /// Dark.
    Dark,
    /// Light.
    Light,
}

/// How byte quantities are shown (defined with the formatting in [`crate::units`]).
pub use crate::units::ByteUnits;

/// Why a settings file cannot be used (worded to follow "could not be used (...)").
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SettingsError {
    /// Not UTF-8 text.
    #[error("it is not text")]
    NotText,
    /// Not valid RON for the settings.
    #[error("it is not valid: {}", .0.en())]
    Invalid(Message),
    /// Written by a newer version.
    #[error("it was written by a newer gpu-doctor (settings version {0}; this one reads {SETTINGS_VERSION})")]
    Newer(u32),
}

impl SettingsError {
    /// The reason as a message (the `Display` text is its English, for logs and tests).
    pub fn message(&self) -> Message {
        match self {
            SettingsError::NotText => msg!("it is not text"),
            SettingsError::Invalid(why) => msg!("it is not valid: {why}", why = why.clone()),
            SettingsError::Newer(v) => msg!(
                "it was written by a newer gpu-doctor (settings version {found}; this one reads {current})",
                found = *v,
                current = SETTINGS_VERSION
            ),
        }
    }
}

/// Everything the user can set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// File format version.
    pub version: u32,
    /// Seconds between samples (0.25-10).
    pub interval_secs: f64,
    /// Chart window, seconds (60, 300, 900, 3600 or 86400).
    pub window_secs: u32,
    /// Theme.
    pub theme: Theme,
    /// Tab shown at start ("monitor", "checklist", "vram", "smoke", "about").
    pub tab: String,
    /// Byte units.
    pub units: ByteUnits,
    /// What is redacted in saved reports and screenshots' file names by default.
    pub redaction: RedactOptions,
    /// The interface language; `None` follows the system (`--lang` and `GPU_DOCTOR_LANG` win
    /// over both).
    pub language: Option<crate::i18n::Lang>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            version: SETTINGS_VERSION,
            interval_secs: crate::telemetry::interval::Interval::DEFAULT.secs(),
            window_secs: 300,
            theme: Theme::System,
            tab: "monitor".to_string(),
            units: ByteUnits::Binary,
            redaction: RedactOptions::default(),
            language: None,
        }
    }
}

/// The settings file's path.
pub fn settings_path() -> Option<PathBuf> {
    crate::paths::config_dir().map(|d| d.join("settings.ron"))
}

/// The result of loading: the settings to use and, once, what went wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded {
    /// Settings to use.
    pub settings: Settings,
    /// A message for the user when the file was unusable (shown once: the file is moved away).
    pub notice: Option<Message>,
}

impl Settings {
    /// The sampling interval the file asks for (the default when it is out of range).
    pub fn interval(&self) -> crate::telemetry::interval::Interval {
        crate::telemetry::interval::Interval::from_secs(self.interval_secs).unwrap_or_default()
    }

    /// Loads `path`: defaults when it does not exist; defaults and a notice (the bad file kept as
    /// `.bak`) when it cannot be used.
    pub fn load(path: &Path) -> Loaded {
        let problem = match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Loaded { settings: Settings::default(), notice: None };
            }
            Err(e) => Some(Message::data(e.to_string())),
            Ok(m) if m.len() > MAX_SETTINGS_BYTES => Some(msg!("it is {n} bytes, far too large", n = m.len())),
            Ok(_) => match crate::safe_fs::read_regular(path, MAX_SETTINGS_BYTES) {
                Err(e) => Some(Message::data(e.to_string())),
                Ok(bytes) => match Self::parse(&bytes) {
                    Ok(s) => return Loaded { settings: s, notice: None },
                    Err(why) => Some(why.message()),
                },
            },
        };
        let why = problem.unwrap_or_default();
        let kept = crate::safe_fs::keep_as_backup(path);
        let notice = match kept {
            Ok(bak) => msg!(
                "Your settings file {path} could not be used ({why}). gpu-doctor started with default settings and kept the old file as {backup}.",
                path = path.display().to_string(),
                why = why,
                backup = bak.display().to_string()
            ),
            Err(e) => msg!(
                "Your settings file {path} could not be used ({why}) and could not be moved aside ({error}). gpu-doctor uses default settings this time.",
                path = path.display().to_string(),
                why = why,
                error = e.to_string()
            ),
        };
        Loaded { settings: Settings::default(), notice: Some(notice) }
    }

    /// Reads `path` without side effects (no backup, no notice): the settings when the file is
    /// present and valid. For the CLI, which only borrows defaults from the app's settings.
    pub fn peek(path: &Path) -> Option<Settings> {
        let m = std::fs::metadata(path).ok()?;
        if m.len() > MAX_SETTINGS_BYTES {
            return None;
        }
        Self::parse(&crate::safe_fs::read_regular(path, MAX_SETTINGS_BYTES).ok()?).ok()
    }

    /// Parses a settings file's bytes.
    pub fn parse(bytes: &[u8]) -> Result<Settings, SettingsError> {
        let text = std::str::from_utf8(bytes).map_err(|_| SettingsError::NotText)?;
        // Read the version first, so a newer file is refused with the right reason.
        #[derive(Deserialize)]
        struct Probe {
            #[serde(default)]
            version: u32,
        }
        let probe: Probe = ron::from_str(text).map_err(|e| SettingsError::Invalid(plain_error(&e, text)))?;
        if probe.version > SETTINGS_VERSION {
            return Err(SettingsError::Newer(probe.version));
        }
        let mut s: Settings = ron::from_str(text).map_err(|e| SettingsError::Invalid(plain_error(&e, text)))?;
        s.sanitize();
        Ok(s)
    }

    /// Brings out-of-range values back into range.
    pub fn sanitize(&mut self) {
        if crate::telemetry::interval::Interval::from_secs(self.interval_secs).is_err() {
            self.interval_secs = Settings::default().interval_secs;
        }
        if ![60, 300, 900, 3600, 86_400].contains(&self.window_secs) {
            self.window_secs = Settings::default().window_secs;
        }
        self.version = SETTINGS_VERSION;
    }

    /// Saves to `path` atomically (a temporary file renamed over it), creating the directory.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let text =
            ron::ser::to_string_pretty(self, ron::ser::PrettyConfig::default()).map_err(std::io::Error::other)?;
        // Atomic, and through a link to its target (the link stays): see safe_fs::replace_atomic.
        crate::safe_fs::replace_atomic(path, format!("// gpu-doctor settings\n{text}\n").as_bytes())
    }
}

/// A settings parse error in plain words: which line, which setting, what was wrong; no parser
/// internals (type names, "serde", "struct").
fn plain_error(e: &ron::error::SpannedError, text: &str) -> Message {
    use ron::error::Error as E;
    let line = e.span.start.line;
    // The setting is the last `name:` before the error on its line (a file written on one line
    // holds every setting there: the first on the line is not the one that is wrong).
    let before: String = text
        .lines()
        .nth(line.saturating_sub(1))
        .unwrap_or("")
        .chars()
        .take(e.span.start.col.saturating_sub(1))
        .collect();
    let names_itself = matches!(e.code, E::NoSuchStructField { .. } | E::DuplicateStructField { .. });
    let setting = before
        .split(':')
        .rev()
        .skip(1)
        .find_map(|part| {
            let key: String = part
                .chars()
                .rev()
                .skip_while(|c| c.is_whitespace())
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let key: String = key.chars().rev().collect();
            (!key.is_empty() && !key.starts_with(|c: char| c.is_ascii_digit())).then_some(key)
        })
        .filter(|_| !names_itself);
    let what = match &e.code {
        E::NoSuchStructField { found, .. } => msg!("there is no setting called \"{found}\"", found = found.clone()),
        E::NoSuchEnumVariant { found, expected, .. } => {
            msg!(
                "\"{found}\" is not one of the choices ({choices})",
                found = found.clone(),
                choices = expected.join(", ")
            )
        }
        E::DuplicateStructField { field, .. } => {
            msg!("the setting \"{field}\" is given twice", field = field.to_string())
        }
        E::ExpectedFloat | E::ExpectedInteger | E::IntegerOutOfBounds | E::InvalidIntegerDigit { .. } => {
            msg!("a number was expected")
        }
        E::ExpectedBoolean => msg!("true or false was expected"),
        E::ExpectedString | E::ExpectedStringEnd => msg!("a text in double quotes was expected"),
        E::Eof => msg!("the file ends too early (a closing bracket is missing?)"),
        E::TrailingCharacters => msg!("there is text after the end of the settings"),
        E::InvalidValueForType { found, .. } => msg!("{found} is not a valid value here", found = found.clone()),
        _ => msg!("the text does not have the shape of a settings file"),
    };
    match setting {
        Some(s) => msg!("line {line}, setting \"{setting}\": {what}", line = line, setting = s, what = what),
        None => msg!("line {line}: {what}", line = line, what = what),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_settings_file_is_explained_in_plain_words() {
        for (text, want) in [
            ("(\n    interval_secs: \"fast\",\n)", "line 2, setting \"interval_secs\": a number was expected"),
            ("(\n    theme: Purple,\n)", "line 2, setting \"theme\": \"Purple\" is not one of the choices"),
            ("garbage {{{", "line 1: "),
            // Issue 33, item 13: everything on one line names the setting that is wrong.
            (
                "(version: 1, theme: Dark, interval_secs: \"fast\")",
                "line 1, setting \"interval_secs\": a number was expected",
            ),
        ] {
            let e = Settings::parse(text.as_bytes()).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains(want), "{text}: {e}");
            for internal in ["Expected struct", "serde", "Probe", "Settings`", "`"] {
                assert!(!e.contains(internal), "{text}: {e}");
            }
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_or_a_device_as_the_settings_file_gives_defaults_at_once() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let zero = dir.path().join("zero.ron");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap_or_else(|e| panic!("{e}"));
        let started = std::time::Instant::now();
        let loaded = Settings::load(&zero);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert_eq!(loaded.settings, Settings::default());
        assert!(
            loaded.notice.as_ref().is_some_and(|n| n.en().contains("not a regular file (a device)")),
            "{:?}",
            loaded.notice
        );
        assert!(Settings::peek(&zero).is_none());
    }

    #[test]
    fn round_trip_and_missing_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("settings.ron");
        assert_eq!(Settings::load(&path), Loaded { settings: Settings::default(), notice: None });
        let s = Settings {
            interval_secs: 0.5,
            window_secs: 900,
            theme: Theme::Light,
            tab: "smoke".into(),
            ..Settings::default()
        };
        s.save(&path).unwrap();
        assert_eq!(Settings::load(&path), Loaded { settings: s, notice: None });
    }

    #[test]
    fn peek_has_no_side_effects() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.ron");
        assert_eq!(Settings::peek(&path), None);
        std::fs::write(&path, "(broken").unwrap();
        assert_eq!(Settings::peek(&path), None);
        assert!(path.exists() && !dir.path().join("settings.ron.bak").exists());
        std::fs::write(&path, "(redaction: (enabled: true, hostname: false))").unwrap();
        assert_eq!(Settings::peek(&path).map(|s| s.redaction.hostname), Some(false));
    }

    #[test]
    fn unknown_fields_and_out_of_range_values() {
        // Fields this version does not know (written by a later minor change) are ignored; values
        // out of range fall back to their defaults.
        let s = Settings::parse(b"(interval_secs: 99.0, window_secs: 7, future_thing: true, tab: \"vram\")").unwrap();
        assert_eq!((s.interval_secs, s.window_secs, s.tab.as_str()), (1.0, 300, "vram"));
    }

    #[test]
    fn bad_files_are_kept_and_reported_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.ron");
        for (i, bad) in [
            b"(interval_secs: 0.5, ".to_vec(),
            vec![0xff, 0xfe, 0x00],
            b"(version: 7, interval_secs: 0.5)".to_vec(),
            vec![b' '; (MAX_SETTINGS_BYTES + 1) as usize],
        ]
        .into_iter()
        .enumerate()
        {
            std::fs::write(&path, &bad).unwrap();
            let l = Settings::load(&path);
            assert_eq!(l.settings, Settings::default());
            let notice = l.notice.unwrap_or_default().en();
            assert!(notice.contains("started with default settings"), "{notice}");
            let bak = if i == 0 { "settings.ron.bak".to_string() } else { format!("settings.ron.bak.{}", i + 1) };
            assert!(notice.contains(&bak), "{notice}");
            // The bad file is kept byte for byte; the next start is clean and silent.
            assert_eq!(std::fs::read(dir.path().join(&bak)).unwrap_or_default(), bad);
            assert_eq!(Settings::load(&path).notice, None);
        }
        let newer = std::fs::read_to_string(dir.path().join("settings.ron.bak.3")).unwrap_or_default();
        assert!(newer.contains("version: 7"));
    }
}
