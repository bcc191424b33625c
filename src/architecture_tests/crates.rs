//! ARCHITECTURE.md's table of crates, generated from the crates' manifests and the first sentence of
//! their root modules' docs, and the rule it shows: a crate depends only on crates below it.

use super::{CRATES, root};

/// The first sentence of a root module's doc comment (its `//!` lines up to the first full stop).
fn first_doc_sentence(text: &str) -> String {
    let doc: Vec<&str> =
        text.lines().take_while(|l| l.starts_with("//!")).map(|l| l.trim_start_matches("//!").trim()).collect();
    // (Intra-doc links read as plain code in the table.)
    let para = doc.split(|l| l.is_empty()).next().unwrap_or_default().join(" ").replace("[`", "`").replace("`]", "`");
    let end = para.find(". ").map_or(para.len(), |i| i + 1);
    para[..end].trim_end_matches('.').to_string() + "."
}

/// The crates a manifest's `[dependencies]` (and target-specific dependencies) name from this
/// workspace.
fn workspace_deps(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_deps = false;
    for line in manifest.lines() {
        if line.starts_with('[') {
            in_deps = line.ends_with("dependencies]") && !line.contains("dev-dependencies");
            continue;
        }
        let name: String = line.chars().take_while(|c| c.is_alphanumeric() || *c == '-').collect();
        if in_deps && name.starts_with("gpu-doctor-") && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// ARCHITECTURE.md's table of crates, as the manifests and the root modules' docs give it.
fn crates_table() -> String {
    let mut out = String::from("| crate | holds | depends on (in this workspace) |\n|---|---|---|\n");
    for (c, _) in CRATES {
        let dir = root().join("crates").join(c);
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_default();
        let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap_or_default();
        let deps: Vec<String> = workspace_deps(&manifest).iter().map(|d| format!("`{d}`")).collect();
        let deps = if deps.is_empty() { "nothing".to_string() } else { deps.join(", ") };
        out.push_str(&format!("| `gpu-doctor-{c}` | {} | {deps} |\n", first_doc_sentence(&lib)));
    }
    out
}

#[test]
fn each_crate_depends_only_on_crates_before_it_and_architecture_md_says_so() {
    for (i, (c, _)) in CRATES.iter().enumerate() {
        let manifest = std::fs::read_to_string(root().join("crates").join(c).join("Cargo.toml")).unwrap_or_default();
        for d in workspace_deps(&manifest) {
            let at = CRATES.iter().position(|(n, _)| d == format!("gpu-doctor-{n}"));
            assert!(at.is_some_and(|j| j < i), "gpu-doctor-{c} depends on {d}, which is not below it in CRATES");
        }
    }
    let path = root().join("ARCHITECTURE.md");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let (open, close) =
        ("<!-- crates: generated from crates/*/Cargo.toml and crates/*/src/lib.rs -->\n", "<!-- end of crates -->");
    let (Some(a), Some(b)) = (text.find(open), text.find(close)) else {
        panic!("ARCHITECTURE.md has no generated crates table ({open:?} … {close:?})")
    };
    let (a, want) = (a + open.len(), crates_table());
    if std::env::var_os("UPDATE_ARCHITECTURE").is_some() {
        let updated = format!("{}{want}{}", &text[..a], &text[b..]);
        std::fs::write(&path, updated).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    } else {
        assert_eq!(
            &text[a..b],
            want,
            "ARCHITECTURE.md's crates table is stale: UPDATE_ARCHITECTURE=1 cargo test -p gpu-doctor --lib architecture"
        );
    }
}

/// The root package's own files that the headless build compiles (the facade, the self-relaunched
/// children, the CLI binary) name the app only behind the `gui` feature: without it (`cargo build
/// -p gpu-doctor --no-default-features`, CI's `cargo tree` check) they build with no window. The
/// crates below need no such rule: gpu-doctor-cli does not depend on gpu-doctor-gui, so the
/// compiler refuses any use of it there.
#[test]
fn the_root_package_names_the_app_only_behind_its_feature() {
    let mut offenders = Vec::new();
    for f in ["src/lib.rs", "src/relaunch.rs", "src/bin/gpu-doctor-cli.rs"] {
        let text = std::fs::read_to_string(root().join(f)).unwrap_or_default();
        assert!(!text.is_empty(), "{f} is missing");
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            let names_app = code.contains("gpu_doctor_gui") || code.contains("gui::") || code.contains("crate::gui");
            let gated = i > 0 && lines[i - 1].trim() == "#[cfg(feature = \"gui\")]";
            if names_app && !gated {
                offenders.push(format!("{f}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    assert!(offenders.is_empty(), "the headless build would need the app: {offenders:?}");
}
