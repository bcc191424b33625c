//! The report's unit tests.
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::telemetry::demo::{DemoHost, Scenario};
use crate::telemetry::sampler::Sampler;
use crate::telemetry::source::{NoGpu, StaticGpus};

#[test]
fn no_gpu_gives_a_sentence_not_an_empty_table() {
    let no =
        NoGpu { summary: "no driver here".into(), next_step: Default::default(), attempts: Vec::new(), failure: None };
    let sampler = Sampler::manual(
        Arc::new(StaticGpus::unavailable(no)),
        Box::new(DemoHost::new(Scenario::Idle, 1)),
        Duration::from_secs(1),
    );
    sampler.step_gpu(0.0);
    sampler.step_host(0.0);
    let snap = sampler.snapshot();
    let mut inputs = Inputs {
        snapshot: &snap,
        history: None,
        checklist: None,
        bottlenecks: None,
        smoke: None,
        vram: None,
        renderer: None,
        machine: Vec::new(),
        lang: Lang::En,
    };
    let doc = build(&inputs);
    let html = render(&doc, Format::Html);
    let gpus = html.split("<h2>GPU devices</h2>").nth(1).unwrap_or_default();
    assert!(gpus.starts_with("\n<p>No NVIDIA GPU could be read: no driver here</p>"), "{gpus}");
    assert!(!html.contains("<table>\n</table>"), "{html}");
    let md = render(&doc, Format::Md);
    assert!(md.contains("## GPU devices\n\nNo NVIDIA GPU could be read: no driver here"), "{md}");
    // In Chinese every heading is Chinese (the GPU section was left "## GPUs").
    inputs.lang = Lang::ZhCn;
    let zh = render(&build(&inputs), Format::Md);
    assert!(zh.contains("## GPU 设备\n\n"), "{zh}");
    assert!(!zh.lines().any(|l| l.starts_with("## ") && l.chars().skip(3).all(|c| c.is_ascii())), "{zh}");
}

#[test]
fn fix_commands_render_as_code_and_text_as_text() {
    let doc = ReportDoc {
        format: REPORT_FORMAT.into(),
        version: REPORT_VERSION,
        title: "t".into(),
        generated: "g".into(),
        app_version: "v".into(),
        redaction: "off".into(),
        lang: Lang::En,
        sections: vec![Section {
            title: "Checklist".into(),
            items: vec![Item::Verdict {
                verdict: "FAIL".into(),
                title: "NVIDIA kernel module loaded".into(),
                summary: "The NVIDIA driver is not installed".into(),
                evidence: Vec::new(),
                fix: None,
                steps: vec![
                    diagnose::FixStep::Text("Reboot <after> installing.".into()),
                    diagnose::FixStep::Command("sudo ubuntu-drivers install".into()),
                    diagnose::FixStep::Command("echo `uname -r`".into()),
                ],
            }],
        }],
    };
    let md = render::markdown(&doc);
    assert!(md.contains("  - Fix: Reboot \\<after> installing.\n"), "{md}");
    assert!(md.contains("  - Run: `sudo ubuntu-drivers install`\n"), "{md}");
    assert!(md.contains("  - Run: `` echo `uname -r` ``\n"), "{md}");
    let h = render::html(&doc);
    assert!(h.contains("<li><b>Run:</b> <code>sudo ubuntu-drivers install</code></li>"), "{h}");
    assert!(h.contains("<li><b>Fix:</b> Reboot &lt;after&gt; installing.</li>"), "{h}");
    let json = serde_json::to_string(&doc).unwrap_or_default();
    assert!(json.contains(r#"{"command":"sudo ubuntu-drivers install"}"#), "{json}");
}
