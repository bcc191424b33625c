//! The CLI in Simplified Chinese: chosen by the system locale (`LANG=zh_CN.UTF-8`), by
//! `GPU_DOCTOR_LANG` and by `--lang`; text output and help in Chinese, `--json` output the same
//! bytes in every language, and a report in English on request.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test reports a failure

mod common;

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
#[test]
fn every_stored_machine_reads_the_same_in_both_languages_and_all_chinese() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut inputs = Vec::new();
    for e in std::fs::read_dir(&root).unwrap().flatten() {
        if e.path().join("capture.json").is_file() {
            inputs.push(e.path());
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
    assert!(inputs.len() >= 60, "only {} stored machines", inputs.len());
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
