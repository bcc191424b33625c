//! The CLI in Simplified Chinese: chosen by the system locale (`LANG=zh_CN.UTF-8`), by
//! `GPU_DOCTOR_LANG` and by `--lang`; text output and help in Chinese, `--json` output the same
//! bytes in every language, and a report in English on request.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test reports a failure

use crate::common;

use assert_cmd::Command;
use common::english::english_run;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/version-mismatch-after-upgrade");

/// The CLI in a locale, with no language chosen otherwise.
fn cli(locale: &str) -> Command {
    let mut c = Command::cargo_bin("gpu-doctor-cli").unwrap();
    c.env("GPU_DOCTOR_NVML_LIB", "/nonexistent/gpu-doctor-test/libnvidia-ml.so.1")
        .env_remove("GPU_DOCTOR_LANG")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env_remove("LANGUAGE")
        .env("LANG", locale);
    c
}

fn out(c: &mut Command) -> (Option<i32>, String) {
    let o = c.output().unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned())
}

fn han(s: &str) -> usize {
    s.chars().filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c)).count()
}

#[test]
fn a_chinese_locale_gets_the_checklist_in_chinese_and_the_same_json() {
    let (code_zh, zh) = out(cli("zh_CN.UTF-8").args(["check", "--from", FIXTURE]));
    let (code_en, en) = out(cli("en_US.UTF-8").args(["check", "--from", FIXTURE]));
    assert_eq!(code_zh, code_en, "the exit code is the same in every language");
    assert_eq!(code_zh, Some(7));
    assert!(han(&zh) > 200, "little Chinese in:\n{zh}");
    assert_eq!(han(&en), 0, "Chinese in the English output:\n{en}");
    // Commands and the verdict tags stay as they are.
    assert!(zh.contains("[FAIL"), "{zh}");
    for command in ["sudo reboot", "nvidia-smi"] {
        assert_eq!(zh.contains(command), en.contains(command), "{command} in one language only");
    }
    let (_, json_zh) = out(cli("zh_CN.UTF-8").args(["check", "--json", "--from", FIXTURE]));
    let (_, json_en) = out(cli("C").args(["check", "--json", "--from", FIXTURE]));
    assert_eq!(json_zh, json_en, "--json is the same in every language");
    assert!(serde_json::from_str::<serde_json::Value>(&json_zh).is_ok());
}

#[test]
fn the_flag_beats_the_environment_and_the_environment_beats_the_locale() {
    let (_, s) = out(cli("zh_CN.UTF-8").args(["--lang", "en", "check", "--from", FIXTURE]));
    assert_eq!(han(&s), 0, "{s}");
    let (_, s) = out(cli("en_US.UTF-8").env("GPU_DOCTOR_LANG", "zh-CN").args(["check", "--from", FIXTURE]));
    assert!(han(&s) > 200, "{s}");
    let (_, s) =
        out(cli("en_US.UTF-8").env("GPU_DOCTOR_LANG", "zh-CN").args(["check", "--lang=en", "--from", FIXTURE]));
    assert_eq!(han(&s), 0, "{s}");
    // Traditional Chinese has no catalogue yet: English.
    let (_, s) = out(cli("zh_TW.UTF-8").args(["check", "--from", FIXTURE]));
    assert_eq!(han(&s), 0, "{s}");
}

#[test]
fn help_is_in_chinese_with_the_same_flags() {
    let (code, zh) = out(cli("zh_CN.UTF-8").args(["check", "--help"]));
    assert_eq!(code, Some(0));
    let (_, en) = out(cli("C").args(["check", "--help"]));
    assert!(zh.contains("用法：") && zh.contains("选项："), "{zh}");
    assert!(en.contains("Usage:") && en.contains("Options:"), "{en}");
    for flag in ["--json", "--from", "--lang", "--help"] {
        assert!(zh.contains(flag) && en.contains(flag), "{flag}");
    }
    let (_, top) = out(cli("zh_CN.UTF-8").arg("--help"));
    assert!(top.contains("命令：") && top.contains("check") && top.contains("退出码"), "{top}");
    // clap's own words (possible values, defaults) are written in Chinese too, with the same values.
    for args in [&["check", "--help"][..], &["check", "-h"], &["vram", "--help"], &["report", "--help"]] {
        let (_, zh) = out(cli("zh_CN.UTF-8").args(args));
        let (_, en) = out(cli("C").args(args));
        for english in ["Possible values", "possible values", "[default:"] {
            assert!(!zh.contains(english), "{args:?}: {english:?} in\n{zh}");
        }
        assert!(zh.contains("可选值") && en.to_lowercase().contains("possible values"), "{args:?}:\n{zh}");
        assert!(zh.contains("默认值") == en.contains("[default:"), "{args:?}:\n{zh}");
        for value in ["nagios", "zh-CN", "markdown", "full"] {
            assert_eq!(zh.contains(value), en.contains(value), "{args:?}: {value}");
        }
    }
}

#[test]
fn a_report_can_be_written_in_english_from_a_chinese_desktop() {
    let base = ["report", "--sample", "0", "--demo", "healthy-training"];
    let (code, zh) = out(cli("zh_CN.UTF-8").args(base));
    assert_eq!(code, Some(0));
    assert!(han(&zh) > 50, "{zh}");
    let (_, en) = out(cli("zh_CN.UTF-8").args(base).args(["--lang", "en"]));
    assert_eq!(han(&en), 0, "{en}");
    let (_, html) = out(cli("zh_CN.UTF-8").args(base).args(["--format", "html"]));
    assert!(han(&html) > 50 && html.contains("lang=\"zh-CN\""), "{html}");
}

/// Every stored capture and bug report (real machines, most from public threads), checked in
/// English and in Chinese: the same exit code and the same verdict for every check in the same
/// order (no check may judge by a text that changes with the language), and no English sentence
/// left in the Chinese text. A run of English words counts as data, not as a left-over, when the
/// machine's own files hold it (a kernel-log line, a device name, an error of the system).
fn fixtures() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Every stored machine: the capture directories and the bug reports.
fn stored_machines() -> Vec<std::path::PathBuf> {
    let root = fixtures();
    let mut inputs = Vec::new();
    // The fixtures, and the machines written from public threads (tests/fixtures/wild, wild2).
    for dir in [root.clone(), root.join("wild"), root.join("wild2")] {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            if e.path().join("capture.json").is_file() {
                inputs.push(e.path());
            }
        }
    }
    for e in std::fs::read_dir(root.join("bug-reports")).unwrap().flatten() {
        for f in std::fs::read_dir(e.path()).into_iter().flatten().flatten() {
            let name = f.file_name().to_string_lossy().into_owned();
            if name.starts_with("nvidia-bug-report") || name.starts_with("nvidia-smi") {
                inputs.push(f.path());
            }
        }
    }
    inputs.sort();
    // A log that holds nothing the checks read gives an error, not a checklist (tests/suite/hostile.rs).
    inputs.retain(|p| gpu_doctor::diagnose::input::CheckSource::Capture(p.clone()).run(None).is_ok());
    assert!(inputs.len() >= 60, "only {} stored machines", inputs.len());
    inputs
}

#[test]
fn every_stored_machine_reads_the_same_in_both_languages_and_all_chinese() {
    let root = fixtures();
    let inputs = stored_machines();
    let words = |s: &str| -> String {
        s.split_whitespace()
            .map(|w| w.trim_matches(|c: char| ",.;:()[]'\"!?".contains(c)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let tags = |s: &str| -> Vec<String> {
        s.lines().filter(|l| l.starts_with('[')).map(|l| l.split(']').next().unwrap_or("").to_string()).collect()
    };
    let mut problems = Vec::new();
    for input in &inputs {
        let name = input.strip_prefix(&root).unwrap().display().to_string();
        let (code_en, en) = out(cli("C").args(["--lang", "en", "check", "--from"]).arg(input));
        let (code_zh, zh) = out(cli("C").args(["--lang", "zh-CN", "check", "--from"]).arg(input));
        if code_en != code_zh {
            problems.push(format!("{name}: exit code {code_en:?} in English, {code_zh:?} in Chinese"));
        }
        if tags(&en) != tags(&zh) || tags(&en).is_empty() {
            problems.push(format!("{name}: the verdicts differ between the languages"));
        }
        // (The same findings, evidence and steps: one line each in either language.)
        if en.lines().count() != zh.lines().count() {
            problems.push(format!(
                "{name}: {} lines in English, {} in Chinese",
                en.lines().count(),
                zh.lines().count()
            ));
        }
        let own = if input.is_dir() {
            let mut text = String::new();
            let mut stack = vec![input.clone()];
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(&d).unwrap().flatten() {
                    if e.path().is_dir() {
                        stack.push(e.path());
                    } else {
                        text.push_str(&String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()));
                        text.push('\n');
                    }
                }
            }
            text
        } else {
            gpu_doctor::diagnose::bugreport::read(input).unwrap()
        };
        let own = words(&own);
        for line in zh.lines() {
            // (A fix's command is a command in every language.)
            let prose = line.split("$ ").next().unwrap_or(line);
            if let Some(run) = english_run(prose)
                && !own.contains(&run)
            {
                problems.push(format!("{name}: English {run:?} in {line:?}"));
            }
        }
    }
    problems.dedup();
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

/// The checklist made in each language, in this process: the same checks with the same verdicts,
/// the same root cause, what blocks and explains what, as much evidence, the same steps with the
/// same commands, and the same checks marked "not in this report".
#[test]
fn the_checklist_is_the_same_whatever_the_language() {
    use gpu_doctor::diagnose::input::CheckSource;
    use gpu_doctor::i18n::{Lang, scoped};
    let not_in = |lang| scoped(lang, || gpu_doctor::tr!("Not in this report: {summary}", summary = ""));
    let shape = |lang: Lang, input: &std::path::Path| {
        let r = scoped(lang, || CheckSource::Capture(input.to_path_buf()).run(None)).unwrap();
        let prefix = not_in(lang);
        let checks: Vec<String> = r
            .checks
            .iter()
            .map(|c| {
                let steps: Vec<String> = c
                    .fixes
                    .iter()
                    .map(|f| match f {
                        gpu_doctor::diagnose::FixStep::Command(x) => format!("$ {x}"),
                        gpu_doctor::diagnose::FixStep::Text(_) => "text".into(),
                    })
                    .collect();
                format!(
                    "{} {:?} blocked_by={:?} explained_by={:?} evidence={} not_in_report={} steps={steps:?}",
                    c.id,
                    c.verdict,
                    c.blocked_by,
                    c.explained_by,
                    c.evidence.len(),
                    c.finding.render(lang).starts_with(&prefix),
                )
            })
            .collect();
        (r.root_cause.clone(), checks)
    };
    // (Also nvidia-smi -q's text alone, as pasted into a ticket: almost nothing is in it.)
    let log = fixtures().join("bug-reports/bekal-2026-2x3080-healthy/nvidia-bug-report.log.gz");
    let text = gpu_doctor::diagnose::bugreport::read(&log).unwrap();
    let smi = gpu_doctor::diagnose::bugreport::split(&text)
        .unwrap()
        .command(&["nvidia-smi", "--query"])
        .unwrap()
        .body
        .clone();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("nvidia-smi-q.txt"), smi).unwrap();
    let mut problems = Vec::new();
    for input in stored_machines().into_iter().chain([dir.path().join("nvidia-smi-q.txt")]) {
        let (en, zh) = (shape(Lang::En, &input), shape(Lang::ZhCn, &input));
        if en.0 != zh.0 {
            problems.push(format!("{}: root cause {:?} in English, {:?} in Chinese", input.display(), en.0, zh.0));
        }
        for (a, b) in en.1.iter().zip(&zh.1) {
            if a != b {
                problems.push(format!("{}:\n  en {a}\n  zh {b}", input.display()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A checklist made on an English machine (a server's `check --json`) and read here renders in
/// Chinese exactly as the checklist made on a Chinese machine: every title, finding, summary,
/// explanation, piece of evidence and fix step of every stored machine, all of them.
#[test]
fn an_english_checklist_put_into_chinese_reads_as_one_made_in_chinese() {
    use gpu_doctor::diagnose::input::CheckSource;
    use gpu_doctor::i18n::{Lang, scoped};
    let texts = |r: &gpu_doctor::diagnose::Report| -> Vec<String> {
        let mut out = Vec::new();
        for c in &r.checks {
            out.extend([c.title_in(Lang::ZhCn), c.finding.render(Lang::ZhCn), c.summary.render(Lang::ZhCn)]);
            out.push(c.explanation.render(Lang::ZhCn));
            out.extend(c.evidence.iter().map(|e| e.render(Lang::ZhCn)));
            out.extend(c.fixes.iter().map(|f| f.plain(Lang::ZhCn)));
        }
        out
    };
    let (mut same, mut all) = (0usize, 0usize);
    let mut differ = Vec::new();
    for input in stored_machines() {
        let run = |lang| scoped(lang, || CheckSource::Capture(input.clone()).run(None)).unwrap();
        let english = run(Lang::En);
        let (en, zh) = (texts(&english), texts(&run(Lang::ZhCn)));
        let json = serde_json::to_string(&english).unwrap();
        let put = texts(&serde_json::from_str::<gpu_doctor::diagnose::Report>(&json).unwrap());
        for ((e, z), back) in en.iter().zip(&zh).zip(put) {
            all += 1;
            if &back == z {
                same += 1;
            } else if differ.len() < 400 {
                differ.push(format!("{}\n  en {e:?}\n  zh {z:?}\n  →  {back:?}", input.display()));
            }
        }
    }
    eprintln!("{same} of {all} texts the same");
    assert_eq!(same, all, "{same} of {all} texts the same; for example:\n{}", differ.join("\n"));
}
