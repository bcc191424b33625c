//! Support reports: snapshot tests of the three formats, redaction property tests (secrets planted
//! in every field never survive in any format), and `gpu-doctor-cli report`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test reports a failure

use std::path::PathBuf;
use std::process::Command;

use gpu_doctor::report::redact::{RedactOptions, Redactor, Secrets};
use gpu_doctor::report::{self, Format, Item, ReportDoc, Section};
use proptest::prelude::*;

const CLI: &str = env!("CARGO_BIN_EXE_gpu-doctor-cli");

fn sample_doc() -> ReportDoc {
    ReportDoc {
        lang: gpu_doctor::i18n::Lang::En,
        format: report::REPORT_FORMAT.into(),
        version: report::REPORT_VERSION,
        title: "gpu-doctor report".into(),
        generated: "2026-11-30 03:00:00 +00:00".into(),
        app_version: "0.1.0".into(),
        redaction: "off".into(),
        sections: vec![
            Section {
                title: "Summary".into(),
                items: vec![
                    Item::Facts {
                        rows: vec![
                            ("Host name".into(), "gpu-node-07".into()),
                            ("Checklist".into(), "FAIL — root cause DRV-08".into()),
                        ],
                    },
                    Item::Text {
                        text: "Logged in as alice from 192.168.1.20 (/home/alice); NIC 00:1a:2b:3c:4d:5e.".into(),
                    },
                ],
            },
            Section {
                title: "GPU devices".into(),
                items: vec![Item::Table {
                    headers: vec!["GPU".into(), "Name".into(), "UUID".into()],
                    rows: vec![vec![
                        "0".into(),
                        "NVIDIA A100 | 80GB <PCIe>".into(),
                        "GPU-8f6e2a4c-1b3d-4e5f-9a7b-0c1d2e3f4a5b".into(),
                    ]],
                }],
            },
            Section {
                title: "Checklist".into(),
                items: vec![Item::Verdict {
                    verdict: "FAIL (ROOT CAUSE)".into(),
                    title: "DRV-08 NVML loads".into(),
                    summary: "libnvidia-ml.so.1 not found".into(),
                    evidence: vec!["tried /usr/lib/x86_64-linux-gnu".into()],
                    fix: Some("Install the driver & reboot.".into()),
                    steps: Vec::new(),
                }],
            },
        ],
    }
}

fn secrets() -> Secrets {
    Secrets { hostnames: vec!["gpu-node-07".into()], users: vec!["alice".into()], serials: Vec::new() }
}

fn snapshot_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots").join(name)
}

/// Compares with the checked-in snapshot; `UPDATE_SNAPSHOTS=1` rewrites it.
fn assert_snapshot(name: &str, got: &str) {
    let path = snapshot_path(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap_or(&path)).unwrap();
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_SNAPSHOTS=1 writes it)", path.display()));
    assert_eq!(got, want, "{name} differs from its snapshot (UPDATE_SNAPSHOTS=1 rewrites it after review)");
}

#[test]
fn formats_match_their_snapshots() {
    let mut doc = sample_doc();
    report::redact_doc(&mut doc, &mut Redactor::new(RedactOptions::default(), secrets()));
    assert_snapshot("report.md", &report::render(&doc, Format::Md));
    assert_snapshot("report.html", &report::render(&doc, Format::Html));
    assert_snapshot("report.json", &report::render(&doc, Format::Json));
}

#[test]
fn redaction_off_keeps_everything_and_json_round_trips() {
    let mut doc = sample_doc();
    report::redact_doc(&mut doc, &mut Redactor::new(RedactOptions::off(), secrets()));
    let md = report::render(&doc, Format::Md);
    assert!(md.contains("gpu-node-07") && md.contains("192.168.1.20") && md.contains("Redaction: off"));
    let back: ReportDoc = serde_json::from_str(&report::render(&doc, Format::Json)).unwrap();
    assert_eq!(back, doc);
    // HTML escapes markup from the data.
    let html = report::render(&doc, Format::Html);
    assert!(html.contains("NVIDIA A100 | 80GB &lt;PCIe&gt;"));
    assert!(!html.contains("<PCIe>"));
}

/// A planted secret: something realistic that carries a digit, so it is never a word of the
/// report's own text or of a token.
#[derive(Clone, Debug)]
struct Planted {
    host: String,
    user: String,
    ip: String,
    mac: String,
    uuid: String,
}

fn planted() -> impl Strategy<Value = Planted> {
    (
        "[a-z]{2,6}[0-9]{1,3}(-[a-z0-9]{1,4})?",
        "[a-z]{2,6}[0-9]{1,3}",
        (1u8..=254, 0u8..=255, 0u8..=255, 1u8..=254),
        proptest::array::uniform6(0u8..=255),
        "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    )
        .prop_map(|(host, user, (a, b, c, d), m, u)| Planted {
            host,
            user,
            ip: format!("{a}.{b}.{c}.{d}"),
            mac: m.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(":"),
            uuid: format!("GPU-{u}"),
        })
}

/// A document with a secret in every field, in varied surroundings.
fn doc_with(p: &Planted, filler: &str) -> ReportDoc {
    let s = |i: usize| match i % 6 {
        0 => format!("{filler} {} {filler}", p.host),
        1 => format!("{}@{}:/home/{}/data", p.user, p.host, p.user),
        2 => format!("addr={};{filler}", p.ip),
        3 => format!("({}) {}", p.mac, p.uuid),
        4 => format!("C:\\Users\\{}\\x {}", p.user, p.host.to_uppercase()),
        _ => format!("{}.example.org {} {}", p.host, p.user, p.ip),
    };
    ReportDoc {
        lang: gpu_doctor::i18n::Lang::En,
        format: report::REPORT_FORMAT.into(),
        version: 1,
        title: s(0),
        generated: s(1),
        app_version: s(2),
        redaction: s(3),
        sections: vec![Section {
            title: s(4),
            items: vec![
                Item::Facts { rows: vec![(s(5), s(0)), (s(1), s(2))] },
                Item::Text { text: s(3) },
                Item::Table { headers: vec![s(4), s(5)], rows: vec![vec![s(0), s(1)], vec![s(2), s(3)]] },
                Item::Verdict {
                    verdict: s(4),
                    title: s(5),
                    summary: s(0),
                    evidence: vec![s(1), s(2)],
                    fix: Some(s(3)),
                    steps: vec![
                        gpu_doctor::diagnose::FixStep::Text(gpu_doctor::i18n::Message::data(s(4))),
                        gpu_doctor::diagnose::FixStep::Command(s(5)),
                    ],
                },
            ],
        }],
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn planted_secrets_never_survive(p in planted(), filler in "[A-Za-z ,.:]{0,12}") {
        let mut doc = doc_with(&p, &filler);
        let opts = RedactOptions { gpu_ids: true, ..RedactOptions::default() };
        let sec = Secrets { hostnames: vec![p.host.clone()], users: vec![p.user.clone()], serials: Vec::new() };
        report::redact_doc(&mut doc, &mut Redactor::new(opts, sec));
        for f in [Format::Md, Format::Json, Format::Html] {
            let out = report::render(&doc, f).to_lowercase();
            for secret in [&p.host, &p.user, &p.ip, &p.mac, &p.uuid] {
                prop_assert!(!out.contains(&secret.to_lowercase()), "{:?} survived in {:?}:\n{}", secret, f, out);
            }
        }
    }

    #[test]
    fn the_same_value_gets_the_same_token(p in planted()) {
        let sec = Secrets { hostnames: vec![p.host.clone()], users: vec![p.user.clone()], serials: Vec::new() };
        let mut r = Redactor::new(RedactOptions::default(), sec);
        let a = r.text(&format!("{} {} {}", p.host, p.ip, p.user));
        let b = r.text(&format!("{} {} {}", p.user, p.ip, p.host));
        let ta: Vec<&str> = a.split(' ').collect();
        let tb: Vec<&str> = b.split(' ').collect();
        prop_assert_eq!((ta[0], ta[1], ta[2]), (tb[2], tb[1], tb[0]));
    }
}

#[test]
fn cli_report_formats_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let run = |args: &[&str]| {
        Command::new(CLI)
            .args(["report", "--demo", "data-starved", "--sample", "1"])
            .args(args)
            .env("GPU_DOCTOR_NVML_LIB", "/nonexistent/libnvidia-ml.so.1")
            .output()
            .unwrap()
    };
    let o = run(&["--format", "json", "--out", out.to_str().unwrap_or_default()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: ReportDoc = serde_json::from_str(&std::fs::read_to_string(&out).unwrap_or_default()).unwrap();
    let titles: Vec<&str> = doc.sections.iter().map(|s| s.title.as_str()).collect();
    assert_eq!(titles, ["Summary", "GPU devices", "Checklist", "Recent metrics"]);
    assert!(doc.redaction.starts_with("on:"));
    // The demo data is labelled as such.
    assert!(serde_json::to_string(&doc).unwrap_or_default().contains("DEMO DATA"));
    // A second run must not overwrite the first.
    let before = std::fs::read(&out).unwrap_or_default();
    let o = run(&["--format", "json", "--out", out.to_str().unwrap_or_default()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("already exists"));
    assert_eq!(std::fs::read(&out).unwrap_or_default(), before);
    // HTML to stdout is one self-contained page.
    let o = run(&["--format", "html"]);
    let html = String::from_utf8_lossy(&o.stdout);
    assert!(
        html.starts_with("<!DOCTYPE html>") && html.contains("<h2>Recent metrics</h2>") && !html.contains("<script")
    );
    // With --smoke the smoke test's stages join the report (no driver library here: it fails at
    // the first stage, with its next step).
    let md = String::from_utf8_lossy(&run(&["--smoke"]).stdout).to_string();
    assert!(md.contains("## CUDA smoke test") && md.contains("Load the CUDA driver library"), "{md}");
    // The host name is in the unredacted report only.
    if let Ok(host) = Command::new("hostname").output().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        && host.len() >= 2
    {
        let md = String::from_utf8_lossy(&run(&[]).stdout).to_string();
        assert!(!md.contains(&format!("**Host name:** {host}\n")), "{md}");
        let md = String::from_utf8_lossy(&run(&["--no-redact"]).stdout).to_string();
        assert!(md.contains(&format!("**Host name:** {host}")), "{md}");
    }
}

#[test]
fn cli_report_follows_the_apps_redaction_settings() {
    let Ok(host) = Command::new("hostname").output().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    else {
        crate::common::skip("cli_report_follows_the_apps_redaction_settings", "no hostname(1) here");
        return;
    };
    if host.len() < 2 {
        crate::common::skip(
            "cli_report_follows_the_apps_redaction_settings",
            "this machine's host name is too short to find",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("settings.ron"),
        "(redaction: (enabled: true, hostname: false, users: true, ip: true, mac: true, gpu_ids: false))",
    )
    .unwrap();
    let out = Command::new(CLI)
        .args(["report", "--demo", "idle", "--sample", "0"])
        .env("GPU_DOCTOR_CONFIG_DIR", dir.path())
        .env("GPU_DOCTOR_NVML_LIB", "/nonexistent/libnvidia-ml.so.1")
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.contains(&format!("**Host name:** {host}")), "{md}");
    assert!(md.contains("Redaction: on: user names and home paths, IP addresses, MAC addresses."), "{md}");
}

#[test]
fn cli_report_without_a_gpu_says_so_and_nothing_about_ecc() {
    let out = Command::new(CLI)
        .args(["report", "--format", "html", "--sample", "0"])
        .env("GPU_DOCTOR_NVML_LIB", "/nonexistent/libnvidia-ml.so.1")
        .output()
        .unwrap();
    let html = String::from_utf8_lossy(&out.stdout);
    assert!(html.contains("<p>No NVIDIA GPU could be read: "), "{html}");
    assert!(!html.contains("<table>\n</table>"), "{html}");
    assert!(!html.contains("GeForce boards"), "{html}");
}

/// Issue 33, item 3: a server's strings (a driver version holding `\n# Title`, a GPU name holding
/// `## Checklist`, a fake verdict and an image link, a remote `<img>`) in every kind of field never
/// become the Markdown report's structure: the headings, list items and verdicts are the report's
/// own, and no image or HTML reaches a renderer. In HTML they are escaped text.
#[test]
fn values_from_outside_never_become_report_structure() {
    let evil = "535.1\n# Title\n## Checklist\n- **PASS (ROOT CAUSE)** ![x](http://e.invalid/p.png) <img src=http://e.invalid/q>\r\n1. item";
    let mut doc = sample_doc();
    doc.sections[0].items.push(Item::Facts { rows: vec![("Driver".into(), evil.into())] });
    doc.sections[0].items.push(Item::Text { text: evil.into() });
    doc.sections[1].items.push(Item::Table { headers: vec!["Name".into()], rows: vec![vec![evil.into()]] });
    doc.sections[2].items.push(Item::Verdict {
        verdict: "PASS".into(),
        title: evil.into(),
        summary: evil.into(),
        evidence: vec![evil.into()],
        fix: Some(evil.into()),
        steps: vec![gpu_doctor::diagnose::FixStep::Command(format!("nvidia-smi {evil}"))],
    });
    let md = report::render(&doc, Format::Md);
    // A command is a code span, shown verbatim and inert (on one line); the rest is checked.
    let run_line = format!("  - Run: `nvidia-smi {}`", evil.replace("\r\n", " ").replace('\n', " "));
    assert!(md.lines().any(|l| l == run_line), "{md}");
    let md: String = md.lines().filter(|l| *l != run_line).map(|l| format!("{l}\n")).collect();
    let headings: Vec<&str> = md.lines().filter(|l| l.starts_with('#')).collect();
    assert_eq!(headings, ["# gpu-doctor report", "## Summary", "## GPU devices", "## Checklist"], "{md}");
    assert_eq!(md.matches("**PASS (ROOT CAUSE)**").count(), 0, "{md}");
    assert!(!md.contains("![") && !md.replace("\\<", "").contains("<img"), "{md}");
    assert!(!md.contains('\r'), "{md}");
    for line in md.lines() {
        // Every list item is one the renderer made: a fact, a verdict, or an indented detail.
        let t = line.trim_start();
        if t.starts_with("- ") || t.starts_with("1. ") {
            assert!(t.starts_with("- **") || line.starts_with("  - "), "a value started a list item: {line}\n{md}");
        }
    }
    let html = report::render(&doc, Format::Html);
    assert!(!html.contains("<img") && !html.contains("<h1>Title"), "{html}");
}

/// Issue 33, item 2: every word of gpu-doctor's own texts (its message catalogue) as the user
/// name, and as the host name, changes nothing in real reports (a demo machine's report with the
/// checklist of every stored fixture, fix commands included) but the values where such a name
/// would stand: labels ("Kernel" with USER=kernel), field-final words ("restart docker") and
/// sentences stay as written. Checked line by line against the same report redacted with no names.
#[test]
fn a_name_that_is_a_word_of_the_report_never_changes_its_text() {
    use gpu_doctor::diagnose::system::CapturedSystem;
    use gpu_doctor::telemetry::demo::{DemoGpus, DemoHost, Scenario};
    use gpu_doctor::telemetry::sampler::Sampler;
    use std::collections::{BTreeSet, HashMap};
    use std::sync::Arc;
    let s = Sampler::manual(
        Arc::new(DemoGpus::new(Scenario::DataStarved, 2, 1)),
        Box::new(DemoHost::new(Scenario::DataStarved, 1)),
        std::time::Duration::from_secs(1),
    );
    s.step_slow(0.0);
    for t in 0..30 {
        s.step_host(f64::from(t));
        s.step_gpu(f64::from(t));
    }
    let snap = s.snapshot();
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut docs = Vec::new();
    for e in std::fs::read_dir(&fixtures).unwrap().filter_map(Result::ok) {
        let Ok(cap) = CapturedSystem::open(&e.path()) else { continue };
        let checklist = gpu_doctor::diagnose::run(&cap);
        let doc = s.with_history(|h| {
            report::build(&report::Inputs {
                snapshot: &snap,
                history: Some((h, 30.0, 29.0)),
                checklist: Some(&checklist),
                bottlenecks: None,
                smoke: None,
                vram: None,
                renderer: None,
                machine: vec![
                    ("Host name".into(), "node-0042".into()),
                    ("Operating system".into(), "Linux 13 Debian GNU/Linux".into()),
                    ("Kernel".into(), "6.18.44".into()),
                ],
                lang: gpu_doctor::i18n::Lang::En,
            })
        });
        docs.push(doc);
    }
    assert!(docs.len() >= 40, "{} fixtures", docs.len());
    let render = |doc: &ReportDoc, secrets: Secrets| {
        let mut d = doc.clone();
        report::redact_doc(&mut d, &mut Redactor::new(RedactOptions::default(), secrets));
        report::render(&d, Format::Md)
    };
    let baseline: Vec<String> = docs.iter().map(|d| render(d, Secrets::default())).collect();
    // Which report (by line) holds each word, so each name is checked where it occurs.
    let mut at: HashMap<String, BTreeSet<usize>> = HashMap::new();
    for (i, md) in baseline.iter().enumerate() {
        for w in md.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_')) {
            at.entry(w.to_lowercase()).or_default().insert(i);
        }
    }
    let mut vocabulary: BTreeSet<String> = BTreeSet::new();
    for text in gpu_doctor::i18n::zh_catalogue().keys() {
        for w in text.split(|c: char| !c.is_ascii_alphabetic()) {
            if w.len() >= 2 {
                vocabulary.insert(w.to_lowercase());
            }
        }
    }
    assert!(vocabulary.len() > 1500, "{} words", vocabulary.len());
    let mut wrong = Vec::new();
    for word in &vocabulary {
        let Some(reports) = at.get(word) else { continue };
        for &i in reports.iter().take(3) {
            for (kind, secrets) in [
                ("user", Secrets { users: vec![word.clone()], ..Secrets::default() }),
                ("host", Secrets { hostnames: vec![word.clone()], ..Secrets::default() }),
            ] {
                let got = render(&docs[i], secrets);
                if got != baseline[i] {
                    let line = got.lines().zip(baseline[i].lines()).find(|(a, b)| a != b).map(|(a, _)| a.to_string());
                    wrong.push(format!("{kind}={word}: {}", line.unwrap_or_default()));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{} names changed the report's own text:\n{}", wrong.len(), wrong.join("\n"));
}

/// Issue 38 item 2, over every fixture (captures and bug reports): a report made from a user's
/// file names neither that machine's user nor its host anywhere (fact rows, findings, evidence,
/// commands such as `usermod`, the HTML), in any format. The names are read here from the files
/// themselves (the capture's `meta.user.name`, the bug report's `uname:` line and home paths),
/// not from what the product found; names that are words of the report's own texts are checked
/// where they stand as values.
#[test]
fn a_report_made_from_a_users_file_redacts_that_machines_names_in_every_format() {
    use gpu_doctor::diagnose::input::CheckSource;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("capture.json").exists())
        .collect();
    for e in std::fs::read_dir(root.join("bug-reports")).unwrap().filter_map(Result::ok) {
        if let Some(f) = std::fs::read_dir(e.path())
            .ok()
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|f| f.path())
            .find(|f| f.file_name().is_some_and(|n| n.to_string_lossy().starts_with("nvidia-bug-report")))
        {
            files.push(f);
        }
    }
    files.sort();
    assert!(files.len() >= 60, "{} fixtures", files.len());
    let home = regex::Regex::new(r"/home/([A-Za-z0-9._-]+)").unwrap();
    let mut checked_users = 0;
    for file in &files {
        // (A log cut short before any section the checks read is refused with why: no report.)
        let Ok(checklist) = CheckSource::Capture(file.clone()).run(None) else { continue };
        let origin = checklist.origin.clone().unwrap_or_else(|| panic!("{}: no origin", file.display()));
        // The machine's names, read here from the file.
        let mut users = Vec::new();
        let mut hosts = Vec::new();
        let capture = file.join("capture.json");
        if capture.exists() {
            let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&capture).unwrap()).unwrap();
            if let Some(u) = v["meta"]["user"]["name"].as_str() {
                users.push(u.to_string());
            }
        } else {
            let mut text = String::new();
            use std::io::Read;
            flate2::read::GzDecoder::new(std::fs::File::open(file).unwrap()).read_to_string(&mut text).unwrap();
            if let Some(line) = text.lines().find(|l| l.starts_with("uname:")) {
                hosts.extend(line.split_whitespace().nth(2).map(String::from));
            }
            users.extend(home.captures_iter(&text).map(|c| c[1].to_string()));
        }
        let doc = report::build_from_file(&checklist, &origin, gpu_doctor::i18n::Lang::En);
        let mut red = Redactor::new(RedactOptions::default(), Secrets::default().with_origin(Some(&origin)));
        let mut d = doc.clone();
        report::redact_doc(&mut d, &mut red);
        for format in [Format::Md, Format::Json, Format::Html] {
            let out = report::render(&d, format);
            for h in &hosts {
                assert!(!out.contains(h.as_str()), "{}: host {h} in the {format:?} report", file.display());
            }
            for u in &users {
                for shown in [format!("/home/{u}"), format!("usermod -aG video {u}"), format!("user: {u}")] {
                    assert!(!out.contains(&shown), "{}: `{shown}` in the {format:?} report", file.display());
                }
                if !gpu_doctor::report::redact::is_report_word(u) {
                    let word = regex::Regex::new(&format!(r"(?i)\b{}\b", regex::escape(u))).unwrap();
                    assert!(!word.is_match(&out), "{}: user {u} in the {format:?} report", file.display());
                    checked_users += 1;
                }
            }
        }
    }
    assert!(checked_users >= 20, "only {checked_users} distinctive user names were checked");
}

/// Issue 53, item 21: a report (and card) made from a file names the GPU that matters: the GPU
/// of a capture whose driver did not start (from the PCI bus), the Windows adapter with its driver
/// and problem code, the GPU lost from the bus with its bus id beside the healthy ones; and when
/// the file was made.
#[test]
fn a_report_from_a_file_names_the_gpu_that_matters_and_when_the_file_was_made() {
    use gpu_doctor::diagnose::input::CheckSource;
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let cases: [(&str, &[&str]); 4] = [
        ("secure-boot-blocks-module", &["PCI 10de", "driver none"]),
        ("win-code43-rtx3060-mini-pc", &["RTX 3060", "Code 43", "driver "]),
        ("xid-79-one-of-four-gpus-lost", &["Xid 79"]),
        ("bug-reports/srinivasgln-2020-p3200mobile-modeset-mismatch/nvidia-bug-report.log.gz", &["P3200"]),
    ];
    for (name, want) in cases {
        let checklist = CheckSource::Capture(fixtures.join(name)).run(None).unwrap();
        let origin = checklist.origin.clone().unwrap();
        let md = report::render(&report::build_from_file(&checklist, &origin, gpu_doctor::i18n::Lang::En), Format::Md);
        assert!(!md.contains("lists no NVIDIA GPU"), "{name}: {md}");
        for w in want {
            assert!(origin.gpus.iter().any(|g| g.contains(w)), "{name}: no {w} in {:?}", origin.gpus);
        }
        assert!(md.contains("The file was made"), "{name}: no date in {md}");
    }
    // The lost GPU's row carries its bus id, and the healthy ones stay listed.
    let checklist = CheckSource::Capture(fixtures.join("xid-79-one-of-four-gpus-lost")).run(None).unwrap();
    let gpus = checklist.origin.unwrap().gpus;
    let lost: Vec<&String> = gpus.iter().filter(|g| g.contains("Xid 79")).collect();
    assert_eq!(lost.len(), 1, "{gpus:?}");
    assert!(lost[0].contains(":00"), "no bus id: {gpus:?}");
    assert!(gpus.len() >= 2, "{gpus:?}");
}

/// Issue 53, item 21: "Copy as text" (the Markdown report) gives the first fix one numbered line
/// per step, each command a code span as written: no Markdown escapes inside a command.
#[test]
fn the_first_fix_is_one_line_per_step_with_commands_as_written() {
    use gpu_doctor::diagnose::input::CheckSource;
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/bug-reports/srinivasgln-2020-p3200mobile-modeset-mismatch/nvidia-bug-report.log.gz");
    let checklist = CheckSource::Capture(file).run(None).unwrap();
    let origin = checklist.origin.clone().unwrap();
    let doc = report::build_from_file(&checklist, &origin, gpu_doctor::i18n::Lang::En);
    let md = report::render(&doc, Format::Md);
    let at = md.find("- **First fix:**").unwrap_or_else(|| panic!("{md}"));
    let steps: Vec<&str> = md[at..].lines().skip(1).take_while(|l| l.starts_with("  ")).collect();
    assert!(steps.len() >= 4, "{steps:?}");
    for (i, l) in steps.iter().enumerate() {
        assert!(l.starts_with(&format!("  {}. ", i + 1)), "{l}");
    }
    let purge = steps.iter().find(|l| l.contains("apt-get remove")).unwrap_or_else(|| panic!("{steps:?}"));
    assert!(purge.contains("`sudo apt-get remove --purge 'nvidia-driver-*' 'nvidia-[0-9]*'"), "escaped: {purge}");
    assert!(!purge.contains('\\'), "escaped: {purge}");
    assert!(steps.iter().any(|l| l.ends_with("`dkms status`")), "{steps:?}");
    let html = report::render(&doc, Format::Html);
    assert!(html.contains("<li><code>dkms status</code></li>"), "{html}");
}

/// Issue 38 item 1: a report made from a file holds the file's facts and says which file; the
/// reader's machine (its host, OS, kernel, CPU, RAM, renderer, metrics, smoke test, VRAM estimate)
/// never appears.
#[test]
fn a_report_made_from_a_file_holds_the_files_facts_only() {
    use gpu_doctor::diagnose::input::CheckSource;
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/bug-reports/clementpla-2024-3xa6000-xid45-rminit/nvidia-bug-report.log.gz");
    let checklist = CheckSource::Capture(file).run(None).unwrap();
    let origin = checklist.origin.clone().unwrap();
    let md = report::render(&report::build_from_file(&checklist, &origin, gpu_doctor::i18n::Lang::En), Format::Md);
    assert!(md.contains("nvidia-bug-report.log.gz"), "{md}");
    assert!(md.contains("6.5.0-17-generic"), "the file's kernel: {md}");
    assert!(md.contains("535.154.05"), "the file's driver: {md}");
    assert!(md.contains("RTX A6000"), "the file's GPUs: {md}");
    for reader in [
        sysinfo::System::kernel_version().ok(),
        sysinfo::System::long_os_version().ok(),
        sysinfo::System::host_name().ok().filter(|h| h.len() > 3),
    ]
    .into_iter()
    .flatten()
    .filter(|v| v != "6.5.0-17-generic")
    {
        assert!(!md.contains(&reader), "the reader's {reader} in {md}");
    }
    for absent in ["Renderer", "CPU", "RAM", "Smoke test", "VRAM estimate", "GPU data", "Metrics"] {
        assert!(!md.contains(absent), "{absent} in a report from a file: {md}");
    }
}
