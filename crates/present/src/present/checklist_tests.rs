//! Tests of the checklist's wording on every capture fixture (tests/fixtures): each result has a
//! finding that reads as a headline, prose never shows internal check ids, every command step is
//! one runnable command, and the driver commands follow the distribution in os-release.

use crate::diagnose::system::Platform;
use std::path::{Path, PathBuf};

use crate::diagnose::checks::CHECKS;
use crate::diagnose::system::{CapturedSystem, Meta, SystemView};
use crate::diagnose::{Check, FixStep, Report, Verdict, run};
use crate::i18n::Lang;

fn render_text(r: &Report) -> String {
    crate::present::checklist::render_text(r, Lang::En)
}

fn fixtures() -> Vec<(String, PathBuf)> {
    let base = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("tests/fixtures");
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(&base)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().join("capture.json").exists())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    out.sort();
    assert!(out.len() >= 15, "fixtures not found under {}", base.display());
    out
}

fn reports() -> Vec<(String, Report)> {
    fixtures().into_iter().map(|(n, p)| (n, run(&CapturedSystem::open(&p).unwrap()))).collect()
}

/// Where `id` occurs in `text` as a word of its own (not inside a longer token).
fn names_id(text: &str, id: &str) -> bool {
    let edge = |c: Option<char>| c.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'));
    text.match_indices(id)
        .any(|(i, _)| edge(text[..i].chars().next_back()) && edge(text[i + id.len()..].chars().next()))
}

fn prose(c: &Check) -> Vec<String> {
    let mut v = vec![c.summary.en(), c.finding.en(), c.explanation.en()];
    v.extend(c.fixes.iter().map(|f| f.en()));
    v
}

#[test]
fn every_result_has_a_finding_and_problems_are_not_named_by_their_title() {
    for (name, r) in reports() {
        let platform = if name.starts_with("win-") { Platform::Windows } else { Platform::Linux };
        assert_eq!(r.checks.len(), CHECKS.iter().filter(|d| d.platforms.includes(platform)).count(), "{name}");
        for c in &r.checks {
            assert!(!c.finding.en().trim().is_empty(), "{name}: {} has no finding", c.id);
            if matches!(c.verdict, Verdict::Fail | Verdict::Warn) {
                assert!(
                    !c.finding.en().eq_ignore_ascii_case(&c.title),
                    "{name}: {}'s finding repeats its title {:?}",
                    c.id,
                    c.title
                );
            }
        }
        if let Some(root) = r.root() {
            assert!(render_text(&r).starts_with(&format!("Root cause: {}\n", root.finding.en())), "{name}");
        }
    }
}

#[test]
fn prose_never_shows_check_ids() {
    for (name, r) in reports() {
        let text = render_text(&r);
        for d in CHECKS {
            assert!(!names_id(&text, d.id), "{name}: the text output names {}:\n{text}", d.id);
            for c in &r.checks {
                for p in prose(c) {
                    assert!(!names_id(&p, d.id), "{name}: {} names {} in {p:?}", c.id, d.id);
                }
            }
        }
        // The ids stay in the JSON, blocking included.
        let json = serde_json::to_string(&r).unwrap();
        for c in &r.checks {
            assert!(json.contains(&format!("\"id\":\"{}\"", c.id)));
            if let Some(b) = &c.blocked_by {
                assert!(json.contains(&format!("\"blocked_by\":\"{b}\"")), "{name}");
                assert!(c.summary.en().starts_with("blocked: "), "{name}: {}: {}", c.id, c.summary.en());
                assert!(c.finding.en().starts_with("Not checked until this is fixed: "), "{name}: {}", c.id);
            }
        }
    }
    assert!(names_id("see DRV-08.", "DRV-08") && !names_id("a CUDA-capable GPU", "CUDA-0"));
}

#[test]
fn command_steps_are_single_commands() {
    for (name, r) in reports() {
        for c in &r.checks {
            for f in &c.fixes {
                let FixStep::Command(cmd) = f else { continue };
                let first = cmd.split_whitespace().next().unwrap_or_default();
                assert!(!cmd.trim().is_empty(), "{name}: {}: empty command", c.id);
                assert_eq!(cmd.trim(), cmd, "{name}: {}: {cmd:?}", c.id);
                assert!(!cmd.contains(['\n', '\r']), "{name}: {}: {cmd:?}", c.id);
                assert!(!cmd.ends_with('.'), "{name}: {}: {cmd:?} ends like a sentence", c.id);
                assert!(!first.ends_with(':'), "{name}: {}: {cmd:?} starts with a label", c.id);
                for word in ["Ubuntu", "Debian", "Fedora", "Arch", "Others", "then", "Then", "Or", "or", "In", "After"]
                {
                    assert_ne!(first.trim_end_matches([':', '/']), word, "{name}: {}: {cmd:?}", c.id);
                }
                assert!(!cmd.contains(" # ") && !cmd.contains("..."), "{name}: {}: {cmd:?}", c.id);
                assert!(!cmd.contains(", then") && !cmd.contains(" (or"), "{name}: {}: {cmd:?}", c.id);
            }
        }
    }
}

#[test]
fn checks_that_do_not_apply_fold_into_one_line() {
    for (name, r) in reports() {
        let text = render_text(&r);
        let (n, places) = r.not_applicable();
        // Windows checks are not part of a Linux checklist at all (nor Linux ones of a Windows one).
        assert!(!places.iter().any(|p| p.en() == "Windows"), "{name}: {n} {places:?}");
        if n > 0 {
            assert!(text.contains(&format!("{n} checks do not apply here: ")), "{name}:\n{text}");
        }
        assert!(!text.contains("Windows only"), "{name}:\n{text}");
        assert!(text.lines().filter(|l| l.starts_with("[SKIPPED]")).count() + n <= r.checks.len());
        // JSON keeps every check.
        let back: Report = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }
}

/// A capture with its os-release replaced.
struct WithOsRelease<'a> {
    inner: &'a CapturedSystem,
    os: Option<&'a str>,
}

impl SystemView for WithOsRelease<'_> {
    fn read(&self, path: &str) -> Option<String> {
        if path.ends_with("/os-release") {
            return self.os.map(str::to_string);
        }
        self.inner.read(path)
    }
    fn read_bytes(&self, path: &str) -> Option<Vec<u8>> {
        self.inner.read_bytes(path)
    }
    fn list(&self, dir: &str) -> Option<Vec<String>> {
        self.inner.list(dir)
    }
    fn link(&self, path: &str) -> Option<String> {
        self.inner.link(path)
    }
    fn exists(&self, path: &str) -> bool {
        self.inner.exists(path)
    }
    fn meta(&self) -> &Meta {
        self.inner.meta()
    }
}

fn driver_commands(os: Option<&str>) -> Vec<String> {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("tests/fixtures/no-driver");
    let cap = CapturedSystem::open(&dir).unwrap();
    let r = run(&WithOsRelease { inner: &cap, os });
    assert_eq!(r.root().map(|c| c.finding.en()).as_deref(), Some("The NVIDIA driver is not installed"));
    r.root()
        .unwrap()
        .fixes
        .iter()
        .filter_map(|f| match f {
            FixStep::Command(c) => Some(c.clone()),
            FixStep::Text(_) => None,
        })
        .collect()
}

#[test]
fn driver_install_commands_follow_the_distribution() {
    let ubuntu = driver_commands(Some("NAME=\"Ubuntu\"\nID=ubuntu\nID_LIKE=debian\n"));
    assert!(ubuntu.iter().any(|c| c == "sudo ubuntu-drivers install"), "{ubuntu:?}");
    let debian = driver_commands(Some("PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n"));
    assert!(debian.iter().all(|c| !c.contains("ubuntu-drivers")), "{debian:?}");
    assert!(debian.iter().any(|c| c.contains("apt install nvidia-driver firmware-misc-nonfree")), "{debian:?}");
    let fedora = driver_commands(Some("ID=fedora\nVERSION_ID=40\n"));
    assert!(fedora.iter().any(|c| c == "sudo dnf install akmod-nvidia"), "{fedora:?}");
    let arch = driver_commands(Some("ID=arch\n"));
    assert!(arch.iter().all(|c| c.starts_with("sudo pacman")), "{arch:?}");
    // An old capture without os-release: words only, no package command to paste.
    assert!(driver_commands(None).is_empty());
}
