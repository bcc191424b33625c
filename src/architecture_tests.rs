//! Architecture rules the compiler does not check, kept by scanning the sources:
//! - the modules stand in one order of layers ([`LAYERS`]) and a module imports only modules
//!   below it: the ground (words, units, paths, the verdict, the knowledge tables), then the
//!   machine's data (`telemetry`), the domain (smoke test, checklist, VRAM calculator, jobs), the
//!   presentation and outputs (`present`, `report`, `export`), the saved settings, the
//!   self-relaunch children, and the front ends (`cli`, `gui`) on top;
//! - no two files import each other, directly or round a circle;
//! - the app reaches the command-line layer only where it dispatches a subcommand;
//! - no source file grows past about 700 lines unless its module doc says why.
//!
//! An import is a path written from `crate::`, `super::` or `self::` (in a `use` or in code),
//! resolved to the file that defines its module; a parent's use of its own child modules by their
//! bare names is the module tree itself and not counted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first: each module may import only the modules listed before it (within a
/// row, only those to its left). A new top-level module must be placed here.
const LAYERS: &[&[&str]] = &[
    // The ground: no knowledge of GPUs' data, only words, numbers, files and tables.
    &["i18n", "units", "text", "paths", "safe_fs", "verdict", "knowledge", "signals"],
    // The machine's data: GPU and host sources, samples, history, recordings.
    &["telemetry"],
    // The domain: what is wrong, will it fit, does CUDA work, what does a job do.
    &["smoke", "diagnose", "vram", "jobs"],
    // What people and programs read: wording, reports, Prometheus.
    &["present", "report", "export"],
    // The front ends' saved state, and the children the binaries start of themselves.
    &["settings", "relaunch"],
    // The front ends.
    &["cli", "gui"],
];

/// Macros exported at the crate's root, and the module they belong to.
const ROOT_MACROS: &[(&str, &str)] = &[("tr", "i18n"), ("tr_key", "i18n"), ("msg", "i18n")];

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

/// The top-level module of a source file (`diagnose/checks/cuda.rs` → `diagnose`); `None` for the
/// crate root and the binaries.
fn top_module(rel: &str) -> Option<String> {
    let first = rel.split('/').next()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "bin" | "architecture_tests")).then(|| name.to_string())
}

/// Every `crate::NAME` a file's code names (a `use crate::{a, b}` list included), macros mapped
/// to their module.
fn crate_imports(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut add = |name: &str| {
        let name = ROOT_MACROS.iter().find(|(m, _)| *m == name).map_or(name, |(_, owner)| owner);
        out.insert(name.to_string());
    };
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(list) = rest.strip_prefix('{') {
            let end = list.find('}').unwrap_or(list.len());
            for item in list[..end].split(',') {
                let name: String = item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() {
                    add(&name);
                }
            }
        } else {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                add(&name);
            }
        }
    }
    out
}

fn layer_of(module: &str) -> Option<(usize, usize)> {
    LAYERS.iter().enumerate().find_map(|(i, row)| row.iter().position(|m| *m == module).map(|j| (i, j)))
}

#[test]
fn every_module_imports_only_the_layers_below_it() {
    let files = sources(&src());
    let mut modules = BTreeSet::new();
    let mut upward = Vec::new();
    for p in &files {
        let r = rel(p);
        let Some(me) = top_module(&r) else { continue };
        modules.insert(me.clone());
        let Some(mine) = layer_of(&me) else { continue };
        let text = std::fs::read_to_string(p).unwrap_or_default();
        for other in crate_imports(&code(&text)) {
            // A constant of the crate's root (`crate::APP_ID`) is no module.
            if other == me || other.starts_with(|c: char| c.is_ascii_uppercase()) {
                continue;
            }
            // The app dispatches a subcommand to the command-line layer: its own test below.
            if me == "gui" && other == "cli" {
                continue;
            }
            match layer_of(&other) {
                Some(theirs) if theirs < mine => {}
                Some(_) => upward.push(format!("{r} imports {other}")),
                None => upward.push(format!("{r} imports {other}, which is in no layer")),
            }
        }
    }
    let unplaced: Vec<&String> = modules.iter().filter(|m| layer_of(m).is_none()).collect();
    assert!(unplaced.is_empty(), "place these modules in LAYERS: {unplaced:?}");
    assert!(modules.len() >= 15, "found the modules: {modules:?}");
    assert!(upward.is_empty(), "imports against the layer order (move the definition down): {upward:#?}");
}

/// A file's module path (`diagnose/checks/mod.rs` → `["diagnose", "checks"]`).
fn module_path(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel.trim_end_matches(".rs").split('/').map(String::from).collect();
    if parts.last().is_some_and(|l| l == "mod" || l == "lib") {
        parts.pop();
    }
    parts
}

/// The code outside a file's unit tests (a test may reach back to its parent).
fn without_unit_tests(text: &str) -> &str {
    text.find("#[cfg(test)]\nmod tests").map_or(text, |i| &text[..i])
}

/// The files each file imports from: `crate::`, `super::` and `self::` paths resolved to the
/// deepest file module they name.
fn file_imports() -> BTreeMap<String, BTreeSet<String>> {
    let files: Vec<(String, String)> = sources(&src())
        .iter()
        .map(|p| (rel(p), std::fs::read_to_string(p).unwrap_or_default()))
        .filter(|(r, _)| !r.starts_with("bin/") && !r.ends_with("tests.rs") && !r.contains("/tests/"))
        .collect();
    let by_path: BTreeMap<Vec<String>, String> = files.iter().map(|(r, _)| (module_path(r), r.clone())).collect();
    let resolve =
        |path: &[String]| -> Option<String> { (1..=path.len()).rev().find_map(|n| by_path.get(&path[..n]).cloned()) };
    let mut out = BTreeMap::new();
    for (r, text) in &files {
        let me = module_path(r);
        let code = code(without_unit_tests(text));
        let mut targets = BTreeSet::new();
        for (i, _) in code.match_indices("::") {
            // The path this `::` is the first separator of.
            let start = code[..i].rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |s| s + 1);
            let head = &code[start..i];
            if !matches!(head, "crate" | "super" | "self") || code[..start].ends_with("::") {
                continue;
            }
            let mut base: Vec<String> = match head {
                "crate" => Vec::new(),
                "self" => me.clone(),
                _ => me[..me.len().saturating_sub(1)].to_vec(),
            };
            let tail = &code[i + 2..];
            let mut segs: Vec<String> = Vec::new();
            let mut lists: Vec<String> = Vec::new();
            let mut s = tail;
            loop {
                if let Some(list) = s.strip_prefix('{') {
                    let end = list.find('}').unwrap_or(list.len());
                    lists.extend(
                        list[..end].split(',').map(|x| x.trim().split(" as ").next().unwrap_or("").to_string()),
                    );
                    break;
                }
                let seg: String = s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if seg.is_empty() {
                    break;
                }
                s = &s[seg.len()..];
                if seg == "super" {
                    base.pop();
                } else {
                    segs.push(seg);
                }
                match s.strip_prefix("::") {
                    Some(more) => s = more,
                    None => break,
                }
            }
            let mut path = base.clone();
            path.extend(segs.iter().cloned());
            if lists.is_empty() {
                targets.extend(resolve(&path));
            } else {
                for item in lists.iter().filter(|x| !x.is_empty()) {
                    let mut p = path.clone();
                    p.extend(item.split("::").map(|x| x.trim().to_string()));
                    targets.extend(resolve(&p));
                }
            }
        }
        targets.remove(r);
        out.insert(r.clone(), targets);
    }
    out
}

#[test]
fn no_two_files_import_each_other_even_round_a_circle() {
    let graph = file_imports();
    assert!(graph.len() > 100, "read the sources: {} files", graph.len());
    assert!(
        graph.get("diagnose/checks/cuda.rs").is_some_and(|t| t.contains("knowledge/cuda.rs")),
        "the resolver follows crate:: paths: {:?}",
        graph.get("diagnose/checks/cuda.rs")
    );
    // Strongly connected components (Tarjan): any with two or more files is a circle.
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        circles: Vec<Vec<&'a str>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    self.low.entry(v).and_modify(|l| *l = (*l).min(lw));
                } else if self.stack.contains(&w) {
                    let iw = self.index[w];
                    self.low.entry(v).and_modify(|l| *l = (*l).min(iw));
                }
            }
            if self.low[v] == self.index[v] {
                let mut comp = Vec::new();
                while let Some(w) = self.stack.pop() {
                    comp.push(w);
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    comp.sort();
                    self.circles.push(comp);
                }
            }
        }
    }
    let mut walk =
        Walk { graph: &graph, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), circles: Vec::new() };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    assert!(
        walk.circles.is_empty(),
        "files that import each other (move what both need into a third): {:#?}",
        walk.circles
    );
}

/// The domain modules whose texts are messages: they make [`crate::i18n::Message`]s and never
/// render a sentence in the process's language (`tr!`, `i18n::tr`, `tr_dyn`, `i18n::current`).
/// A front end renders them where they are shown, in the language it is drawing in. (Telemetry is
/// the one domain layer still to move; see ARCHITECTURE.md.)
const MESSAGE_DOMAINS: &[&str] = &["diagnose", "smoke", "jobs", "vram", "knowledge", "telemetry"];

/// Where `code` renders a text in the process's language.
fn renders_in_place(code: &str) -> Option<&'static str> {
    // (Written apart so the catalogue test, which reads the sources for texts, does not take these
    // for texts.)
    [concat!("tr", "!("), "i18n::tr(", "tr_dyn(", "i18n::current()"].into_iter().find(|p| {
        code.match_indices(p).any(|(i, _)| {
            // `tr!(` inside `include_str!(` or `tr_key!(` is not a render.
            !(code[..i].ends_with("include_s") || code[..i].ends_with("crate::i18n::") && p.starts_with("tr"))
        })
    })
}

#[test]
fn the_domain_makes_messages_and_never_renders_a_sentence() {
    let mut offenders = Vec::new();
    for module in MESSAGE_DOMAINS {
        let files = sources(&src().join(module));
        assert!(!files.is_empty(), "no sources in src/{module}");
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            let c = code(without_unit_tests(&text));
            if let Some(what) = renders_in_place(&c) {
                offenders.push(format!("{} renders with {what}", rel(&f)));
            }
        }
    }
    assert!(offenders.is_empty(), "domain code renders sentences (make a msg! instead): {offenders:?}");
    // And the check finds one.
    assert_eq!(renders_in_place(concat!("let x = crate::tr", "!(\"Checklist\");")), Some(concat!("tr", "!(")));
    assert_eq!(renders_in_place(concat!("let x = crate::msg", "!(\"Checklist\"); let y = tr_key", "!(\"a\");")), None);
}

/// The functions of a domain module that may render in the language shown now: a `Display`
/// (`fmt`) and a command-line parser (`from_str`, `parse…`), which clap and `{}` print as they
/// are, and `Reading::show…` for a front end drawing a value now. Everywhere else the domain
/// hands out the message.
const RENDER_AT_THE_EDGE: &[&str] = &["fmt", "from_str", "parse", "show"];

/// The functions of `code` that render a message in the language shown now (`.here()`) and are
/// not allowed to.
fn renders_here_outside_the_edge(code: &str) -> Vec<String> {
    code.match_indices(".here()")
        .filter_map(|(i, _)| {
            let before = &code[..i];
            let name = before
                .rfind("fn ")
                .map(|f| before[f + 3..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>());
            match name {
                Some(n) if RENDER_AT_THE_EDGE.iter().any(|e| n == *e || n.starts_with(&format!("{e}_"))) => None,
                Some(n) => Some(n),
                None => Some(String::from("(outside any function)")),
            }
        })
        .collect()
}

#[test]
fn the_domain_renders_in_the_shown_language_only_at_its_edge() {
    let mut offenders = Vec::new();
    for module in MESSAGE_DOMAINS {
        for f in sources(&src().join(module)) {
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            for name in renders_here_outside_the_edge(&code(without_unit_tests(&text))) {
                offenders.push(format!("{} fn {name}", rel(&f)));
            }
        }
    }
    assert!(offenders.is_empty(), "domain functions render with .here() (return the message instead): {offenders:?}");
    assert_eq!(
        renders_here_outside_the_edge("fn fmt(&self) { self.m().here() } fn parse_sizes() { m.here() }"),
        Vec::<String>::new()
    );
    assert_eq!(renders_here_outside_the_edge("fn summary(m: u64) -> String { x(m).here() }"), ["summary"]);
}

#[test]
fn the_order_checks_catch_an_upward_import_and_a_circle() {
    assert_eq!(
        crate_imports("use crate::{tr, units};\nlet x = crate::report::redact::x();"),
        ["i18n", "report", "units"].map(String::from).into()
    );
    assert!(layer_of("telemetry") < layer_of("diagnose") && layer_of("diagnose") < layer_of("cli"));
    assert!(layer_of("report") > layer_of("vram") && layer_of("settings") > layer_of("report"));
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
