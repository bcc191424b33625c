//! Architecture rules the compiler does not check, kept by scanning the sources: the front ends
//! (`cli`, `gui`) sit on top of the domain modules and never the other way round; the app reaches
//! the command-line layer only where it dispatches a subcommand; no source file grows past about
//! 700 lines unless its module doc says why.

use std::path::{Path, PathBuf};

fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(sources(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rel(p: &Path) -> String {
    p.strip_prefix(src()).unwrap_or(p).to_string_lossy().replace('\\', "/")
}

/// Code lines, without comments (doc comments may name a front end).
fn code(text: &str) -> String {
    text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

#[test]
fn the_app_uses_the_command_line_layer_only_to_dispatch_a_subcommand() {
    let gui = sources(&src().join("gui"));
    assert!(gui.len() > 5, "found the GUI sources: {gui:?}");
    let offenders: Vec<String> = gui
        .iter()
        .filter(|p| rel(p) != "gui/mod.rs")
        .filter(|p| std::fs::read_to_string(p).is_ok_and(|t| code(&t).contains("crate::cli")))
        .map(|p| rel(p))
        .collect();
    assert!(
        offenders.is_empty(),
        "these GUI files import the CLI layer (move the engine out of src/cli/): {offenders:?}"
    );
}

#[test]
fn domain_modules_never_import_the_front_ends() {
    let offenders: Vec<String> = sources(&src())
        .iter()
        .filter(|p| {
            let r = rel(p);
            !(r.starts_with("cli/") || r.starts_with("gui/") || r.starts_with("bin/") || r == "architecture_tests.rs")
        })
        .filter(|p| {
            std::fs::read_to_string(p).is_ok_and(|t| {
                let c = code(&t);
                c.contains("crate::cli") || c.contains("crate::gui")
            })
        })
        .map(|p| rel(p))
        .collect();
    assert!(offenders.is_empty(), "domain code imports a front end: {offenders:?}");
}

#[test]
fn no_source_file_is_long_without_a_stated_reason() {
    let long: Vec<String> = sources(&src())
        .iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(p).ok()?;
            let lines = text.lines().count();
            // A file may be longer when its module doc says why, in a line starting "Length:".
            let reason = text.lines().take_while(|l| l.starts_with("//!")).any(|l| l.contains("Length:"));
            (lines > 700 && !reason).then(|| format!("{} ({lines} lines)", rel(p)))
        })
        .collect();
    assert!(long.is_empty(), "split these files or say in their module doc why they are long: {long:?}");
}
