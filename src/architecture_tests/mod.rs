//! Architecture rules the compiler does not check, kept by scanning the sources. The crates keep
//! the layers apart (ARCHITECTURE.md, "Crates": a crate depends only on those below it, so an
//! upward import does not compile; and the language a person reads lives in the lowest front-end
//! crate, `gpu_doctor_cli::lang`, so no domain or presentation code can read it: they take a
//! `Lang`). What is left is inside a crate and across the tree the code's paths name (each crate
//! re-imports the ones below under their module names):
//! - the modules stand in one order of layers ([`LAYERS`]) and a module imports only modules
//!   below it (inside a crate: the ground's modules, the presentation's `present` < `report` <
//!   `export` < `settings`);
//! - no two files import each other, directly or round a circle, but through the module tree;
//! - the app reaches the command-line layer only where it dispatches a subcommand;
//! - no source file grows past about 700 lines unless its module doc says why, and none but a
//!   generated one (saying so in its first line) past 800.
//!
//! An import is a path written from `crate::`, `super::`, `self::` or, in a parent, the bare name
//! of one of its child modules (`checks::all` in `diagnose/mod.rs`), in a `use` or in code,
//! resolved to the file that defines what it names (through re-exports: `checks::CHECKS` is
//! `checks/registry.rs`'s). A parent's `mod` declarations and its re-exports of its own children
//! are the module tree, not imports; so is a circle through the module file that is the common
//! parent of every file in it (a parent uses its children, they use its shared definitions). Any
//! other circle fails: between sibling modules, or out of one module's files into another's and
//! back.

mod crates;

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
    // The front ends: the language they show (`lang`), the command line, the window.
    &["lang", "cli", "gui"],
];

/// Macros exported at the crate's root, and the module they belong to.
const ROOT_MACROS: &[(&str, &str)] = &[("tr", "lang"), ("tr_in", "i18n"), ("tr_key", "i18n"), ("msg", "i18n")];

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

/// The workspace's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Where each crate's sources stand in the module tree the code's paths name (`crate::telemetry`
/// is the telemetry crate under its own name; the facts and the judgement are both `diagnose`).
const CRATES: &[(&str, &str)] = &[
    ("core", ""),
    ("telemetry", "telemetry"),
    ("facts", "diagnose"),
    ("judgement", "diagnose"),
    ("vram", "vram"),
    ("smoke", "smoke"),
    ("jobs", "jobs"),
    ("present", ""),
    ("cli", ""),
    ("gui", ""),
];

/// Every hand-written source file: the root package's and every crate's, with its path from the
/// workspace's root.
fn real_sources() -> Vec<(PathBuf, String)> {
    let mut dirs = vec![root().join("src")];
    dirs.extend(CRATES.iter().map(|(c, _)| root().join("crates").join(c).join("src")));
    dirs.iter()
        .flat_map(|d| sources(d))
        .map(|p| {
            let r = p.strip_prefix(root()).unwrap_or(&p).to_string_lossy().replace('\\', "/");
            (p, r)
        })
        .collect()
}

/// The sources as one module tree, each file under the path the code names it by
/// (`crates/judgement/src/checks/cuda.rs` is `diagnose/checks/cuda.rs`; a crate's root is its
/// module's `mod.rs`, the core's and the presentation's are the tree's root `lib.rs`, with the
/// root package's), with its text: files that are one module (the facts' and the judgement's
/// roots) joined.
fn tree() -> Vec<(String, String)> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    let mut put = |rel: String, p: &Path| {
        let text = std::fs::read_to_string(p).unwrap_or_default();
        out.entry(rel).or_default().push_str(&text);
    };
    for p in sources(&root().join("src")) {
        let r = p.strip_prefix(root().join("src")).unwrap_or(&p).to_string_lossy().replace('\\', "/");
        put(r, &p);
    }
    for (c, module) in CRATES {
        let dir = root().join("crates").join(c).join("src");
        for p in sources(&dir) {
            let r = p.strip_prefix(&dir).unwrap_or(&p).to_string_lossy().replace('\\', "/");
            let r = match (r.as_str(), module.is_empty()) {
                ("lib.rs", true) => r,
                ("lib.rs", false) => format!("{module}/mod.rs"),
                (_, true) => r,
                (_, false) => format!("{module}/{r}"),
            };
            put(r, &p);
        }
    }
    out.into_iter().collect()
}

/// The files of one module of the tree (`gui` → `gui/…` and `gui.rs`).
fn module_files(module: &str) -> Vec<(String, String)> {
    tree().into_iter().filter(|(r, _)| r.starts_with(&format!("{module}/")) || *r == format!("{module}.rs")).collect()
}

/// Code lines, without comments (doc comments may name a front end).
fn code(text: &str) -> String {
    text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

#[test]
fn the_app_uses_the_command_line_layer_only_to_dispatch_a_subcommand() {
    let gui = module_files("gui");
    assert!(gui.len() > 5, "found the GUI sources: {}", gui.len());
    let offenders: Vec<String> = gui
        .iter()
        .filter(|(r, _)| r != "gui/mod.rs")
        .filter(|(_, t)| code(t).contains("crate::cli"))
        .map(|(r, _)| r.clone())
        .collect();
    assert!(
        offenders.is_empty(),
        "these GUI files import the CLI layer (move the engine out of the cli crate): {offenders:?}"
    );
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
    let mut modules = BTreeSet::new();
    let mut upward = Vec::new();
    for (r, text) in tree() {
        let Some(me) = top_module(&r) else { continue };
        modules.insert(me.clone());
        let Some(mine) = layer_of(&me) else { continue };
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

/// The paths the rest of a path names (the text after `head::`), each as its segments after the
/// head, and how many bytes of the text they span: `a::b` gives `[[a, b]]`; a `use` list
/// `{a, b::{self, c as d}, e::*}` gives `[[a], [b, self], [b, c], [e]]`.
fn path_rest(rest: &str) -> (Vec<Vec<String>>, usize) {
    if !rest.starts_with('{') {
        let n = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
        if n == 0 {
            return (vec![Vec::new()], 0);
        }
        let Some(more) = rest[n..].strip_prefix("::") else { return (vec![vec![rest[..n].to_string()]], n) };
        let (mut paths, used) = path_rest(more);
        for p in &mut paths {
            p.insert(0, rest[..n].to_string());
        }
        return (paths, n + 2 + used);
    }
    let mut paths = Vec::new();
    let mut at = 1;
    while at < rest.len() {
        let item = rest[at..].trim_start();
        at = rest.len() - item.len();
        if item.starts_with('}') {
            return (paths, at + 1);
        }
        let (more, used) = path_rest(item);
        paths.extend(more);
        at += used;
        // On past an `as` name or a `*` to the next item, or to the list's end.
        match rest[at..].find([',', '}']) {
            Some(i) if rest[at + i..].starts_with(',') => at += i + 1,
            Some(i) => return (paths, at + i + 1),
            None => break,
        }
    }
    (paths, rest.len())
}

/// Whether the code before a path ends with `pub use` (or `pub(crate) use`, `pub(super) use`):
/// the path is re-exported.
fn reexported(before: &str) -> bool {
    let Some(b) = before.trim_end().strip_suffix("use") else { return false };
    let b = b.trim_end();
    let b = match b.strip_suffix(')') {
        Some(inner) => match inner.rfind("pub(") {
            Some(i) => &inner[..i + 3],
            None => return false,
        },
        None => b,
    };
    b.strip_suffix("pub").is_some_and(|rest| !rest.ends_with(|c: char| c.is_alphanumeric() || c == '_'))
}

/// The paths the code of the file with module path `me` names, made absolute, each with whether
/// it is re-exported (`pub use`): every path written from `crate::`, `super::`, `self::` or the
/// bare name of one of the file's own child modules (`checks::all` in `diagnose/mod.rs`), with
/// `use` lists expanded.
fn named_paths(me: &[String], children: &BTreeSet<String>, code: &str) -> Vec<(Vec<String>, bool)> {
    let mut out = Vec::new();
    // The end of the last path read: a `use` list's items are not paths of their own.
    let mut skip = 0;
    for (i, _) in code.match_indices("::") {
        if i < skip {
            continue;
        }
        let head_len: usize =
            code[..i].chars().rev().take_while(|c| c.is_alphanumeric() || *c == '_').map(char::len_utf8).sum();
        let start = i - head_len;
        let head = &code[start..i];
        let wanted = matches!(head, "crate" | "super" | "self") || children.contains(head);
        if !wanted || code[..start].ends_with("::") {
            continue;
        }
        let (rests, used) = path_rest(&code[i + 2..]);
        skip = i + 2 + used;
        let reexport = reexported(&code[..start]);
        for rest in rests {
            let mut path: Vec<String> = match head {
                "crate" => Vec::new(),
                "self" => me.to_vec(),
                "super" => me[..me.len().saturating_sub(1)].to_vec(),
                child => {
                    let mut p = me.to_vec();
                    p.push(child.to_string());
                    p
                }
            };
            for seg in rest {
                if seg == "super" {
                    path.pop();
                } else if seg != "self" {
                    path.push(seg);
                }
            }
            out.push((path, reexport));
        }
    }
    out
}

/// The file that defines what `path` names: the deepest file module on it, followed through that
/// file's re-exports (`pub use`) to the file the name comes from.
fn resolve(
    path: &[String],
    by_path: &BTreeMap<Vec<String>, String>,
    reexports: &BTreeMap<String, BTreeMap<String, Vec<String>>>,
    depth: usize,
) -> Option<String> {
    let n = (1..=path.len()).rev().find(|n| by_path.contains_key(&path[..*n]))?;
    let file = by_path.get(&path[..n])?;
    let through = match (path.get(n), reexports.get(file)) {
        (Some(name), Some(names)) if depth < 8 => names.get(name).and_then(|to| {
            let mut p = to.clone();
            p.extend_from_slice(&path[n + 1..]);
            resolve(&p, by_path, reexports, depth + 1)
        }),
        _ => None,
    };
    Some(through.unwrap_or_else(|| file.clone()))
}

/// The files each of `files` (path under `src/`, text) imports from: the paths its code names
/// ([`named_paths`]) resolved to the files that define them ([`resolve`]). A parent's re-export of
/// its own descendants (`pub use cuda::X` in `checks/mod.rs`) is the module tree, not an import.
fn imports_among(files: &[(String, String)]) -> BTreeMap<String, BTreeSet<String>> {
    let by_path: BTreeMap<Vec<String>, String> = files.iter().map(|(r, _)| (module_path(r), r.clone())).collect();
    let mut children: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    for p in by_path.keys() {
        if let Some((name, parent)) = p.split_last() {
            children.entry(parent.to_vec()).or_default().insert(name.clone());
        }
    }
    let none: BTreeSet<String> = BTreeSet::new();
    let named = files
        .iter()
        .map(|(r, text)| {
            let me = module_path(r);
            let paths = named_paths(&me, children.get(&me).unwrap_or(&none), &code(without_unit_tests(text)));
            (r.clone(), me, paths)
        })
        .collect::<Vec<_>>();
    let mut reexports: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for (r, _, paths) in &named {
        for (path, _) in paths.iter().filter(|(_, re)| *re) {
            if let Some(name) = path.last() {
                reexports.entry(r.clone()).or_default().insert(name.clone(), path.clone());
            }
        }
    }
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (r, me, paths) in &named {
        let mut targets: BTreeSet<String> = BTreeSet::new();
        for (path, re) in paths {
            if *re && path.len() > me.len() && path.starts_with(me) {
                continue;
            }
            targets.extend(resolve(path, &by_path, &reexports, 0));
        }
        targets.remove(r.as_str());
        out.insert(r.clone(), targets);
    }
    out
}

/// The files each file of the crate imports from (the binaries and the test files left out).
fn file_imports() -> BTreeMap<String, BTreeSet<String>> {
    let files: Vec<(String, String)> = tree()
        .into_iter()
        .filter(|(r, _)| !r.starts_with("bin/") && !r.ends_with("tests.rs") && !r.contains("/tests/"))
        .collect();
    imports_among(&files)
}

/// The strongly connected components of `graph` with two or more files (Tarjan), each sorted.
fn strongly_connected(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
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
    let mut walk = Walk { graph, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), circles: Vec::new() };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.circles.into_iter().map(|c| c.into_iter().map(String::from).collect::<Vec<_>>()).collect()
}

/// The circles of imports among `graph`'s files that are not the module tree, each given as the
/// imports in it that cross between two modules (`diagnose/capture.rs -> diagnose/checks/cuda.rs`).
/// A parent that uses its children while they use its shared definitions is one module: a circle
/// through the module file that is the common parent of all its files (`checks/mod.rs` runs
/// `driver::loaded`, which takes `super::Ctx`) is allowed. Any other circle fails: between sibling
/// modules, or out of one module's files into another's and back, whichever files it enters by.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let paths: BTreeMap<String, Vec<String>> = graph.keys().map(|f| (f.clone(), module_path(f))).collect();
    // Every module with files below it, the crate's root included: below it, with its own file
    // left out, no circle may span two of its branches.
    let parents: BTreeSet<&[String]> = paths.values().flat_map(|p| (0..p.len()).map(move |n| &p[..n])).collect();
    let mut out = Vec::new();
    for parent in parents {
        // The child of `parent` a file lies under.
        let branch = |f: &str| {
            paths.get(f).filter(|p| p.len() > parent.len() && p.starts_with(parent)).map(|p| p[parent.len()].clone())
        };
        let below: BTreeMap<String, BTreeSet<String>> = graph
            .iter()
            .filter(|(f, _)| branch(f.as_str()).is_some())
            .map(|(f, to)| {
                (f.clone(), to.iter().filter(|t| branch(t.as_str()).is_some()).cloned().collect::<BTreeSet<_>>())
            })
            .collect();
        for comp in strongly_connected(&below) {
            let mut crossing = Vec::new();
            for f in &comp {
                for t in below.get(f).into_iter().flatten() {
                    if comp.contains(t) && branch(f.as_str()) != branch(t.as_str()) {
                        crossing.push(format!("{f} -> {t}"));
                    }
                }
            }
            if !crossing.is_empty() {
                out.push(crossing);
            }
        }
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
    assert!(
        graph.get("diagnose/mod.rs").is_some_and(|t| t.iter().any(|f| f.starts_with("diagnose/checks/"))),
        "the resolver follows a parent's bare child module names (checks::all): {:?}",
        graph.get("diagnose/mod.rs")
    );
    let found = circles(&graph);
    assert!(found.is_empty(), "files that import each other (move what both need into a third): {found:#?}");
}

#[test]
fn a_circle_through_a_parents_bare_child_names_is_seen_and_the_module_tree_is_none() {
    // capture.rs and the checks before the names both need moved down into system.rs: capture.rs
    // reads a name checks/mod.rs re-exports from checks/cuda.rs, checks/driver.rs reads one of
    // capture.rs's, and checks/mod.rs runs the checks by their modules' bare names.
    let checks = "mod cuda;\nmod driver;\npub(crate) use cuda::VENV_NAMES;\npub struct Ctx;\n\
                  pub fn all() { driver::loaded(&Ctx) }\n";
    let capture = "pub(crate) const MODPROBE_DIRS: &[&str] = &[];\n\
                   fn keep(n: &str) -> bool { crate::diagnose::checks::VENV_NAMES.contains(&n) }\n";
    let driver = "use super::Ctx;\nuse crate::diagnose::Check;\n\
                  pub(super) fn loaded(_: &Ctx) { for _ in crate::diagnose::capture::MODPROBE_DIRS {} }\n";
    let tree = |capture: &str, checks: &str, driver: &str| {
        let file = |r: &str, t: &str| (r.to_string(), t.to_string());
        imports_among(&[
            file(
                "diagnose/mod.rs",
                "pub mod capture;\npub mod checks;\npub mod system;\npub struct Check;\nfn run() { checks::all() }\n",
            ),
            file(
                "diagnose/system.rs",
                "pub(crate) const MODPROBE_DIRS: &[&str] = &[];\npub(crate) const VENV_NAMES: &[&str] = &[];\n",
            ),
            file("diagnose/capture.rs", capture),
            file("diagnose/checks/mod.rs", checks),
            file("diagnose/checks/cuda.rs", "use super::Ctx;\npub(crate) const VENV_NAMES: &[&str] = &[\".venv\"];\n"),
            file("diagnose/checks/driver.rs", driver),
        ])
    };
    let before = tree(capture, checks, driver);
    // A parent's bare child name is an import; a path through a re-export leads to the file that
    // defines the name; the re-export itself is none.
    assert!(before["diagnose/checks/mod.rs"].contains("diagnose/checks/driver.rs"), "{before:#?}");
    assert!(!before["diagnose/checks/mod.rs"].contains("diagnose/checks/cuda.rs"), "{before:#?}");
    assert!(before["diagnose/capture.rs"].contains("diagnose/checks/cuda.rs"), "{before:#?}");
    assert!(before["diagnose/mod.rs"].contains("diagnose/checks/mod.rs"), "{before:#?}");
    assert_eq!(
        circles(&before),
        vec![vec![
            "diagnose/capture.rs -> diagnose/checks/cuda.rs".to_string(),
            "diagnose/checks/driver.rs -> diagnose/capture.rs".to_string(),
        ]]
    );
    // The names moved down: no circle. A parent using its children while they use its shared
    // definitions (diagnose/mod.rs and checks/driver.rs, checks/mod.rs and checks/driver.rs) is
    // the module tree.
    let capture_after = "use super::system::VENV_NAMES;\nfn keep(n: &str) -> bool { VENV_NAMES.contains(&n) }\n";
    let driver_after = "use super::Ctx;\nuse crate::diagnose::Check;\nuse crate::diagnose::system::MODPROBE_DIRS;\n\
                        pub(super) fn loaded(_: &Ctx) { for _ in MODPROBE_DIRS {} }\n";
    let after = tree(capture_after, checks, driver_after);
    assert!(after["diagnose/checks/driver.rs"].contains("diagnose/checks/mod.rs"), "{after:#?}");
    assert!(after["diagnose/checks/driver.rs"].contains("diagnose/mod.rs"), "{after:#?}");
    assert_eq!(circles(&after), Vec::<Vec<String>>::new());
    // A circle back through a parent's own code, entered by one of its children, is seen too.
    let capture_kept = [capture, "pub(crate) const KEPT: usize = 1;\n"].concat();
    let checks_reading_capture = [checks, "pub fn kept() -> usize { super::capture::KEPT }\n"].concat();
    let through_parent = tree(capture_kept.as_str(), checks_reading_capture.as_str(), driver_after);
    assert_eq!(
        circles(&through_parent),
        vec![vec![
            "diagnose/capture.rs -> diagnose/checks/cuda.rs".to_string(),
            "diagnose/checks/mod.rs -> diagnose/capture.rs".to_string(),
        ]]
    );
}

#[test]
fn the_order_checks_catch_an_upward_import_and_a_circle() {
    assert_eq!(
        crate_imports("use crate::{tr_in, units};\nlet x = crate::report::redact::x();"),
        ["i18n", "report", "units"].map(String::from).into()
    );
    assert!(layer_of("telemetry") < layer_of("diagnose") && layer_of("diagnose") < layer_of("cli"));
    assert!(layer_of("report") > layer_of("vram") && layer_of("settings") > layer_of("report"));
}

#[test]
fn no_source_file_is_long_without_a_stated_reason() {
    let long: Vec<String> = real_sources()
        .iter()
        .filter_map(|(p, r)| {
            let text = std::fs::read_to_string(p).ok()?;
            let lines = text.lines().count();
            // A file may be longer when its module doc says why, in a line starting "Length:".
            let reason = text.lines().take_while(|l| l.starts_with("//!")).any(|l| l.contains("Length:"));
            // Past 800 lines no reason is enough, unless the file is generated and says so first.
            let generated = text.lines().next().is_some_and(|l| l.to_ascii_lowercase().contains("generated"));
            ((lines > 700 && !reason) || (lines > 800 && !generated)).then(|| format!("{r} ({lines} lines)"))
        })
        .collect();
    assert!(
        long.is_empty(),
        "split these files (none over 800 lines), or say in their module doc why they pass 700: {long:?}"
    );
}
