//! The Chinese catalogue (i18n/zh-CN/*.ron) against the code and the bundled font: every text the
//! code passes through `tr!` or marks with `tr_key!` has a translation and nothing else does (the
//! command line help, cli-help.ron, is held to the built clap command tree instead), each translation keeps its
//! text's placeholders, and the bundled font has a glyph for every character the catalogue uses.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use gpu_doctor::i18n::{self, Lang};
use skrifa::MetadataProvider as _;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten().collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The value of the Rust string literal starting at `s` (just after its opening quote), and the
/// rest after its closing quote.
fn literal(s: &str) -> Option<(String, &str)> {
    let mut out = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, &s[i + 1..])),
            '\\' => match chars.next()?.1 {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                '\\' => out.push('\\'),
                '"' => out.push('"'),
                '\'' => out.push('\''),
                '0' => out.push('\0'),
                // A line continuation: the newline and the next line's leading whitespace go.
                '\n' => {
                    let rest = &s[i + 2..];
                    let skip = rest.len() - rest.trim_start().len();
                    for _ in 0..rest[..skip].chars().count() {
                        chars.next();
                    }
                }
                other => panic!("unexpected escape \\{other} in a tr! text"),
            },
            c => out.push(c),
        }
    }
    None
}

/// Every `tr!("...")`, `tr_in!(lang, "...")`, `msg!("...")` and `tr_key!("...")` text in the sources, with the first place it
/// occurs.
fn texts_in_code() -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    // The built-in model presets' notes are shown translated too (i18n::tr_dyn).
    let presets = std::fs::read_to_string(repo().join("assets/models.ron")).unwrap_or_default();
    for (n, line) in presets.lines().enumerate() {
        if let Some((text, _)) = line.find("note: \"").and_then(|at| literal(&line[at + 7..])) {
            found.entry(text).or_insert_with(|| format!("assets/models.ron:{}", n + 1));
        }
    }
    let mut files = Vec::new();
    // (The root package's and every crate's sources.)
    rust_files(&repo().join("src"), &mut files);
    rust_files(&repo().join("crates"), &mut files);
    for f in files {
        let code = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let mut rest = code.as_str();
        // `tr!` (a text in the language a front end shows), `tr_in!` (a text in the language
        // passed, its first argument), `msg!` (a text as data) and `tr_key!` (a key kept for later).
        const MACROS: [&str; 4] = ["tr!(", "tr_in!(", "msg!(", "tr_key!("];
        while let Some((at, len)) =
            MACROS.iter().filter_map(|m| rest.find(m).map(|at| (at, m.len()))).min_by_key(|(at, _)| *at)
        {
            let before = &rest[..at];
            let after = rest[at + len..].trim_start();
            let after = if rest[at..].starts_with("tr_in!(") {
                after.split_once(',').map_or(after, |(_, text)| text.trim_start())
            } else {
                after
            };
            rest = &rest[at + len..];
            // `include_str!(` is not a use, nor is a mention in a comment or the macro's own
            // definition (no literal follows).
            let word_start = before.chars().next_back().is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            let line_start = before.rfind('\n').map_or(before, |i| &before[i + 1..]);
            if !word_start || line_start.trim_start().starts_with("//") {
                continue;
            }
            let Some(open) = after.strip_prefix('"') else { continue };
            let (text, _) = literal(open).unwrap_or_else(|| panic!("{}: an unterminated tr! text", f.display()));
            let line = code[..code.len() - rest.len()].lines().count();
            found.entry(text).or_insert_with(|| format!("{}:{line}", f.strip_prefix(repo()).unwrap_or(&f).display()));
        }
    }
    found
}

/// The catalogue's parts: (file name, text), every `.ron` file of i18n/zh-CN/.
fn catalogue_files() -> Vec<(String, String)> {
    let dir = repo().join("i18n/zh-CN");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "ron"))
        .map(|e| {
            let text = std::fs::read_to_string(e.path()).unwrap_or_else(|err| panic!("{}: {err}", e.path().display()));
            (e.file_name().to_string_lossy().into_owned(), text)
        })
        .collect();
    out.sort();
    out
}

/// The translations of the code's texts: every part but the command line help.
fn code_catalogue() -> HashMap<String, String> {
    let mut all = HashMap::new();
    for (name, text) in catalogue_files() {
        if name != "cli-help.ron" {
            all.extend(ron::from_str::<HashMap<String, String>>(&text).unwrap_or_default());
        }
    }
    all
}

#[test]
fn every_part_parses_one_entry_per_line_and_is_compiled_in() {
    let files = catalogue_files();
    let compiled: BTreeSet<&str> = i18n::ZH_PARTS.iter().map(|(n, _)| *n).chain(["cli-help.ron"]).collect();
    let on_disk: BTreeSet<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(on_disk, compiled, "i18n/zh-CN/ and i18n::ZH_PARTS list different parts");
    // scripts/make-cjk-font.py reads the files line by line: every entry on a line of its own.
    let entry =
        regex::Regex::new(r#"^\s*"(?:[^"\\]|\\.)*"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*$"#).unwrap_or_else(|e| panic!("{e}"));
    let mut seen: HashMap<String, (String, String)> = HashMap::new();
    for (name, text) in &files {
        let parsed: HashMap<String, String> = ron::from_str(text).unwrap_or_else(|e| panic!("i18n/zh-CN/{name}: {e}"));
        if name == "cli-help.ron" {
            assert_eq!(&parsed, i18n::zh_help_catalogue(), "cli-help.ron: the compiled-in help is not the file");
        } else {
            let compiled = i18n::ZH_PARTS.iter().find(|(n, _)| n == name).map(|(_, t)| *t);
            assert_eq!(compiled, Some(text.as_str()), "i18n/zh-CN/{name}: the compiled-in part is not the file");
        }
        let mut lines = 0;
        for (n, line) in text.lines().enumerate() {
            let t = line.trim();
            if t.is_empty() || t.starts_with("//") || t == "{" || t == "}" {
                continue;
            }
            assert!(entry.is_match(line), "i18n/zh-CN/{name}:{}: not one \"english\": \"中文\", entry: {line}", n + 1);
            lines += 1;
        }
        assert_eq!(lines, parsed.len(), "i18n/zh-CN/{name}: an entry is repeated");
        // The same text in two parts must read the same in both (the help is a world of its own).
        if name == "cli-help.ron" {
            continue;
        }
        for (en, zh) in parsed {
            if let Some((other, zh0)) = seen.get(&en) {
                assert_eq!(zh0, &zh, "{en:?} is translated differently in {other} and {name}");
            }
            seen.insert(en, (name.clone(), zh));
        }
    }
    assert_eq!(seen.len(), i18n::zh_catalogue().len(), "the compiled catalogue is the files");
}

#[test]
fn every_text_in_the_code_has_a_translation_and_every_translation_a_text() {
    let code = texts_in_code();
    let zh = &code_catalogue();
    assert!(code.len() >= 40, "only {} tr! texts found: is the scanner broken?", code.len());
    let missing: Vec<String> =
        code.iter().filter(|(t, _)| !zh.contains_key(*t)).map(|(t, at)| format!("{at}: {t:?}")).collect();
    assert!(missing.is_empty(), "tr! texts without a Chinese translation:\n{}", missing.join("\n"));
    let mut stale: Vec<&String> = zh.keys().filter(|k| !code.contains_key(*k)).collect();
    stale.sort();
    assert!(stale.is_empty(), "translations whose English text is in no tr! (changed or removed?): {stale:?}");
}

#[test]
fn translations_keep_their_placeholders_and_say_something() {
    for (en, zh) in i18n::zh_catalogue() {
        assert_eq!(i18n::placeholders(en), i18n::placeholders(zh), "placeholders differ: {en:?} → {zh:?}");
        assert!(!zh.trim().is_empty(), "empty translation for {en:?}");
        // A translation that is the English text again is a forgotten one (names excepted).
        if en.chars().filter(|c| c.is_ascii_alphabetic()).count() > 12 {
            assert_ne!(en, zh, "not translated: {en:?}");
        }
    }
}

#[test]
fn the_bundled_font_has_every_character_of_the_catalogue() {
    let font = skrifa::FontRef::new(i18n::CJK_FONT).unwrap_or_else(|e| panic!("the bundled font: {e}"));
    let charmap = font.charmap();
    let mut missing: BTreeSet<char> = BTreeSet::new();
    let names: Vec<String> = Lang::ALL.iter().map(|l| l.native_name().to_string()).collect();
    for zh in i18n::zh_catalogue().values().chain(&names) {
        missing.extend(zh.chars().filter(|c| !c.is_ascii() && charmap.map(*c).is_none()));
    }
    assert!(
        missing.is_empty(),
        "characters without a glyph in assets/fonts/NotoSansSC-gpu-doctor.otf (run scripts/make-cjk-font.py): {}",
        missing.iter().collect::<String>()
    );
}

#[test]
fn the_language_follows_the_flag_then_the_environment_then_the_setting() {
    // (The environment is read by `choose`; this process's GPU_DOCTOR_LANG is left unset by CI.)
    if std::env::var_os(i18n::LANG_ENV).is_none() {
        assert_eq!(i18n::choose(Some(Lang::ZhCn), Some(Lang::En)), Lang::ZhCn);
        assert_eq!(i18n::choose(None, Some(Lang::ZhCn)), Lang::ZhCn);
        assert_eq!(i18n::choose(None, Some(Lang::En)), Lang::En);
    }
}

#[test]
fn the_command_line_help_is_translated_whole() {
    use clap::CommandFactory as _;
    let mut texts = i18n::help_texts(&gpu_doctor::cli::Cli::command());
    #[cfg(feature = "gui")]
    texts.extend(i18n::help_texts(&gpu_doctor::gui::GuiArgs::command()));
    let (_, part) =
        catalogue_files().into_iter().find(|(n, _)| n == "cli-help.ron").unwrap_or_else(|| panic!("no cli-help.ron"));
    let help: HashMap<String, String> = ron::from_str(&part).unwrap_or_else(|e| panic!("cli-help.ron: {e}"));
    let missing: Vec<&String> = texts.iter().filter(|t| !help.contains_key(*t)).collect();
    assert!(missing.is_empty(), "help texts without a translation in i18n/zh-CN/cli-help.ron:\n{missing:#?}");
    let stale: BTreeSet<&String> = help.keys().filter(|k| !texts.contains(*k)).collect();
    assert!(stale.is_empty(), "cli-help.ron entries that are no help text (changed or removed?): {stale:?}");
    // The translated tree is what `--help` prints: every text in Chinese.
    let zh = i18n::scoped(Lang::ZhCn, || i18n::localize_command(gpu_doctor::cli::Cli::command()));
    let mut check = zh.clone();
    let page = check.render_help().to_string();
    assert!(page.contains("用法：") && page.contains("选项："), "{page}");
    let sub = zh.find_subcommand("check").map(|c| c.clone().render_help().to_string()).unwrap_or_default();
    assert!(sub.contains("选项："), "{sub}");
}

/// Issue 53, item 26 (a native GPU engineer's review): the words docs/glossary-zh.md rejects are
/// nowhere in the Chinese, and no translation doubles a colon.
#[test]
fn the_chinese_uses_the_glossarys_words() {
    // (rejected form, the glossary's word)
    const REJECTED: [(&str, &str); 6] = [
        ("运行这个容器的机器", "容器所在的宿主机"),
        ("云宿主机", "云主机实例"),
        ("调优日志", "调优记录"),
        ("仅 CPU 的构建", "CPU 版（不含 CUDA）"),
        ("无需窗口", "命令行"),
        ("聚焦", "排查"),
    ];
    let glossary = std::fs::read_to_string(repo().join("docs/glossary-zh.md")).unwrap_or_default();
    let mut found = Vec::new();
    let all = i18n::zh_catalogue().iter().chain(i18n::zh_help_catalogue());
    for (en, zh) in all {
        for (bad, good) in REJECTED {
            assert!(glossary.contains(good) && glossary.contains(bad), "docs/glossary-zh.md lacks {good} / {bad}");
            if zh.contains(bad) {
                found.push(format!("{en:?} → {zh:?}: write {good}, not {bad}"));
            }
        }
        // A tune's journal is 调优记录; 日志 is a program's log.
        if en.to_lowercase().contains("journal") && zh.contains("日志") && !en.to_lowercase().contains("log") {
            found.push(format!("{en:?} → {zh:?}: a tune journal is 调优记录, not 日志"));
        }
        if zh.contains("：：") || zh.contains("::") && !en.contains("::") {
            found.push(format!("{en:?} → {zh:?}: a doubled colon"));
        }
    }
    assert!(found.is_empty(), "translations against the glossary:\n{}", found.join("\n"));
}

/// The Latin words a Chinese sentence may hold outside “ ” quotes, placeholders and code (a
/// token with digits or punctuation is code or a path; one in capitals or with a capital inside
/// is a name): names of
/// products, tools and commands, units and the technical terms Chinese GPU engineers write in
/// English (the glossary, docs/glossary-zh.md). An English word of prose (batch, copies, the…)
/// is not here: it is translated.
const LATIN_ALLOWED: &[&str] = &[
    "Adafactor",
    "Afterburner",
    "Apptainer",
    "Armoury",
    "Axolotl",
    "Blackwell",
    "Checkmk",
    "Container",
    "Core",
    "Crate",
    "Default",
    "Diffusion",
    "Display",
    "Docker",
    "Driver",
    "Eco",
    "Error",
    "Exclusive",
    "Face",
    "False",
    "Fedora",
    "Fusion",
    "Gen",
    "Hugging",
    "Icinga",
    "Jupyter",
    "Kubernetes",
    "Large",
    "Lenovo",
    "Liger",
    "Lightning",
    "Lines",
    "Linux",
    "Markdown",
    "Maxwell",
    "Medium",
    "Mesa",
    "Metal",
    "Nagios",
    "Noto",
    "Nsight",
    "Ollama",
    "Operator",
    "Optimus",
    "Pod",
    "Podman",
    "Process",
    "Prohibited",
    "Prometheus",
    "Python",
    "Resizable",
    "Runtime",
    "Sans",
    "Singularity",
    "Slurm",
    "Stable",
    "Standard",
    "Systems",
    "Tensor",
    "Toolkit",
    "Trainer",
    "Transformer",
    "Turing",
    "Ubuntu",
    "Uninstaller",
    "Unknown",
    "Unsloth",
    "Vantage",
    "Volta",
    "Vulkan",
    "Windows",
    "Xid",
    "Xvfb",
    "agent",
    "akmods",
    "all",
    "apt",
    "attention",
    "auto",
    "autocast",
    "average",
    "awq",
    "bitsandbytes",
    "bug",
    "capture",
    "cgroup",
    "cgroups",
    "check",
    "collector",
    "compare",
    "compat",
    "conda",
    "contrib",
    "cpu",
    "cpuset",
    "cuda",
    "default",
    "del",
    "device",
    "diffusers",
    "dmesg",
    "dnf",
    "docker",
    "dracut",
    "drain",
    "dropout",
    "dump",
    "dxgkrnl",
    "eager",
    "efivars",
    "epilog",
    "export",
    "exporter",
    "fabric",
    "failed",
    "false",
    "fg",
    "flash",
    "focus",
    "format",
    "free",
    "gdb",
    "generate",
    "gl",
    "glow",
    "grep",
    "gzip",
    "heads",
    "hidden",
    "hostdev",
    "htop",
    "idle",
    "imbalance",
    "info",
    "initramfs",
    "install",
    "iowait",
    "json",
    "key",
    "kill",
    "killed",
    "killer",
    "kubelet",
    "ldconfig",
    "legacy",
    "libcuda",
    "libnvidia",
    "libvirt",
    "limit",
    "line",
    "linux",
    "litgpt",
    "load",
    "lockdown",
    "logits",
    "loss",
    "ls",
    "manager",
    "memory",
    "mixed",
    "mkinitcpio",
    "modprobe",
    "mokutil",
    "monitor",
    "nagios",
    "nice",
    "nonfree",
    "nouveau",
    "npd",
    "numactl",
    "nvidia",
    "nvlddmkm",
    "nvrm",
    "of",
    "offload",
    "on",
    "oom",
    "operator",
    "out",
    "pid",
    "pip",
    "plugin",
    "pnputil",
    "pod",
    "podman",
    "prolog",
    "prom",
    "pyenv",
    "pynvml",
    "python",
    "q",
    "replay",
    "riser",
    "rmmod",
    "root",
    "run",
    "rw",
    "rx",
    "s",
    "saxpy",
    "scale",
    "schema",
    "serve",
    "setuid",
    "shell",
    "slurm",
    "smoke",
    "some",
    "spec",
    "ssh",
    "sshd",
    "static",
    "stderr",
    "stub",
    "stubs",
    "sudo",
    "systemctl",
    "systemd",
    "tar",
    "taskset",
    "text",
    "textfile",
    "token",
    "top",
    "torch",
    "torchrun",
    "torchtune",
    "transformer",
    "transformers",
    "true",
    "tune",
    "tx",
    "udev",
    "utility",
    "v",
    "version",
    "video",
    "vram",
    "wgpu",
    "wheel",
    "worker",
    "wsl",
    "x",
    "xid",
    "zenity",
];

/// Issue 53, item 26: no English prose and no backticks inside Chinese sentences ("batch 44",
/// not 批次大小 44; `name` where Chinese quotes a name as “name”).
#[test]
fn chinese_sentences_hold_no_english_prose_and_no_backticks() {
    let placeholder = regex::Regex::new(r"\{[a-z_0-9]+\}").unwrap();
    let quoted = regex::Regex::new(r"“[^”]*”").unwrap();
    let code = regex::Regex::new(r##"[0-9_./\-=:+*\[\]'@~$()<>|\\,!?"#%&;]"##).unwrap();
    let split =
        regex::Regex::new(r"[\u{3000}-\u{303f}\u{4e00}-\u{9fff}\u{ff00}-\u{ffef}“”‘’…—，。；：（）、]+").unwrap();
    let mut found = Vec::new();
    let all = i18n::zh_catalogue().iter().chain(i18n::zh_help_catalogue());
    for (en, zh) in all {
        if zh.contains('`') {
            found.push(format!("{en:?} → {zh:?}: a backtick (quote with “ ”)"));
        }
        let text = quoted.replace_all(zh, "");
        let text = placeholder.replace_all(&text, "");
        for run in split.split(&text) {
            for t in run.split_whitespace() {
                // An acronym or a unit (GPU, B, W) or a CamelCase name (PyTorch) is a name.
                let name = t.chars().all(|c| c.is_ascii_uppercase()) || t.chars().skip(1).any(char::is_uppercase);
                if code.is_match(t) || !t.chars().all(|c| c.is_ascii_alphabetic()) || name {
                    continue;
                }
                if !LATIN_ALLOWED.contains(&t) {
                    found.push(format!("{en:?} → {zh:?}: the English word {t:?}"));
                }
            }
        }
    }
    assert!(found.is_empty(), "Chinese with English prose or backticks:\n{}", found.join("\n"));
}
