//! Every view of the window's registry in English and in Simplified Chinese, at 1024×640, 1280×800 and 1920×1080, through
//! egui_kittest: no text is cut off at the window's edge or drawn over another, and in Chinese no
//! English sentence is left on screen (a text of the catalogue shown in English, or a run of
//! English words that is no command, path or name). Also the live switch from the settings.
//!
//! Each test runs in its own language scope (`i18n::scoped`): the window's switch of language
//! (`i18n::set`) changes the test thread's language only, so these tests share the suite's binary
//! with tests that read English.

use crate::common;
use common::english::english_run;

use std::sync::Arc;
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::{By, NodeT as _, Queryable};
use gpu_doctor::gui::{AppInit, DoctorApp, Tab};
use gpu_doctor::i18n::{self, Lang};
use gpu_doctor::telemetry::demo::{DemoGpus, DemoHost, Scenario};
use gpu_doctor::telemetry::sampler::Sampler;

fn sampler(scenario: Scenario, gpus: u32, ticks: u32) -> Sampler {
    let s = Sampler::manual(
        Arc::new(DemoGpus::new(scenario, gpus, 3)),
        Box::new(DemoHost::new(scenario, 3)),
        Duration::from_secs(1),
    );
    s.step_slow(0.0);
    for t in 1..=ticks {
        s.step_host(f64::from(t));
        s.step_gpu(f64::from(t));
    }
    s
}

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// The app on `tab` at `size`, its checklist on a broken machine's capture, drawn until the
/// checks are done.
fn app(tab: Tab, size: (f32, f32)) -> Harness<'static, DoctorApp> {
    let s = sampler(Scenario::DataStarved, 2, 90);
    let cuda = common::private_fake_cuda(false, "lib", "ok");
    let mut h = Harness::builder().with_size(eframe::egui::vec2(size.0, size.1)).build_eframe(move |cc| {
        let mut init = AppInit::new(s);
        init.tab = tab;
        init.checklist_from = Some(fixture("version-mismatch-after-upgrade"));
        init.smoke = gpu_doctor::gui::SmokeSetup {
            launcher: gpu_doctor::smoke::runner::Launcher::new(env!("CARGO_BIN_EXE_gpu-doctor-cli")),
            cuda_lib: Some(cuda.1.clone()),
            nvml_lib: Some("/nonexistent/libnvidia-ml.so.1".into()),
            stall: Duration::from_secs(60),
            autostart: tab == Tab::Smoke,
        };
        // (The fake library's directory lives as long as the app.)
        std::mem::forget(cuda.0);
        DoctorApp::new(cc, init)
    });
    // Every tab's picture includes the checklist's results (the Monitor's banner, the card).
    let ctx = h.ctx.clone();
    h.state_mut().checklist.start(&ctx, "none (test harness)");
    let deadline = Instant::now() + Duration::from_secs(30);
    while h.state().checklist.report.is_none() || h.state().smoke.running() {
        h.state_mut().checklist.poll();
        assert!(Instant::now() < deadline, "checks or smoke test did not finish");
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    h.run_steps(10);
    h
}

/// Every text node on screen: (text, rect).
fn texts(h: &Harness<'static, DoctorApp>) -> Vec<(String, eframe::egui::Rect)> {
    // (The harness draws at one pixel per point: accesskit's boxes are the window's points.)
    // (egui gives a plain label its text as the node's value, a button as its label.)
    let text =
        |n: &egui_kittest::kittest::AccessKitNode<'_>| n.label().or_else(|| n.value()).filter(|t| !t.trim().is_empty());
    // (A label's text runs repeat its text line by line: the label is the text.)
    h.query_all(By::new().predicate(move |n| {
        text(n).is_some() && n.bounding_box().is_some() && n.role() != eframe::egui::accesskit::Role::TextRun
    }))
    .filter_map(|n| {
        let node = n.accesskit_node();
        let b = node.bounding_box()?;
        let rect = eframe::egui::Rect::from_min_max(
            eframe::egui::pos2(b.x0 as f32, b.y0 as f32),
            eframe::egui::pos2(b.x1 as f32, b.y1 as f32),
        );
        Some((node.label().or_else(|| node.value()).unwrap_or_default(), rect))
    })
    .collect()
}

/// The rects of the status bar's own texts: the texts under the status bar's panel in the
/// accessibility tree (its node: the highest ancestor of the renderer's line that stays within that
/// line's row). What scrolls under the bar may land on the very same row; it is not the bar's.
fn status_bar(h: &Harness<'static, DoctorApp>) -> Vec<eframe::egui::Rect> {
    use egui_kittest::kittest::NodeT as _;
    let rect = |n: &egui_kittest::Node<'_>| {
        let b = n.accesskit_node().bounding_box()?;
        Some(eframe::egui::Rect::from_min_max(
            eframe::egui::pos2(b.x0 as f32, b.y0 as f32),
            eframe::egui::pos2(b.x1 as f32, b.y1 as f32),
        ))
    };
    let is_renderer = |n: &egui_kittest::kittest::AccessKitNode<'_>| {
        n.label().or_else(|| n.value()).is_some_and(|t| t.starts_with("Renderer") || t.starts_with("渲染器"))
    };
    let Some(line) = h.query_all(By::new().predicate(is_renderer)).next() else { return Vec::new() };
    let Some(row) = rect(&line) else { return Vec::new() };
    let mut panel = line;
    while let Some(up) = panel.parent() {
        match rect(&up) {
            Some(r) if r.min.y >= row.min.y - 8.0 && r.max.y <= row.max.y + 8.0 => panel = up,
            _ => break,
        }
    }
    std::iter::once(panel).chain(panel.children_recursive()).filter_map(|n| rect(&n)).collect()
}

/// What is wrong with the layout: text past the window's edge, or two texts drawn over each
/// other (a text inside another's rect, as a label in its button, is fine).
fn layout_problems(items: &[(String, eframe::egui::Rect)], size: (f32, f32)) -> Vec<String> {
    layout_problems_with(items, size, None)
}

/// [`layout_problems`], told which rects are the status bar's own texts.
fn layout_problems_with(
    items: &[(String, eframe::egui::Rect)],
    size: (f32, f32),
    status_own: Option<&[eframe::egui::Rect]>,
) -> Vec<String> {
    let on_screen: Vec<&(String, eframe::egui::Rect)> =
        items.iter().filter(|(_, r)| r.min.y >= 0.0 && r.max.y <= size.1 && r.width() > 0.5).collect();
    let mut out = Vec::new();
    for (t, r) in &on_screen {
        if r.min.x < -1.0 || r.max.x > size.0 + 1.0 {
            out.push(format!("cut off at the window's edge: {t:?} {r:?}"));
        }
    }
    // The status bar is a panel of its own (its row: the renderer's line): what scrolls under it
    // is clipped there, not drawn over.
    let status = items.iter().find(|(t, _)| t.starts_with("Renderer") || t.starts_with("渲染器")).map(|(_, r)| *r);
    // (The status bar's texts share one row exactly; what scrolls under it is off by some fraction.)
    let in_status = |r: &eframe::egui::Rect| match status_own {
        Some(own) => own.contains(r),
        None => status.is_some_and(|s| (r.min.y - s.min.y).abs() < 0.25 && (r.max.y - s.max.y).abs() < 0.25),
    };
    let hidden = |r: &eframe::egui::Rect| status.is_some_and(|s| r.max.y > s.min.y) && !in_status(r);
    for (i, (a, ra)) in on_screen.iter().enumerate() {
        for (b, rb) in &on_screen[i + 1..] {
            if hidden(ra) || hidden(rb) {
                continue;
            }
            let overlap = ra.intersect(*rb);
            let nested = ra.expand(1.0).contains_rect(*rb) || rb.expand(1.0).contains_rect(*ra);
            if overlap.is_positive() && overlap.area() > 6.0 && !nested {
                out.push(format!("drawn over each other: {a:?} {ra:?} and {b:?} {rb:?}"));
            }
        }
    }
    out
}

fn open(h: &mut Harness<'static, DoctorApp>, tab: Tab) {
    h.state_mut().tab = tab;
    h.run_steps(10);
}

#[test]
fn every_view_in_both_languages_fits_1024_by_640_1280_by_800_and_1920_by_1080() {
    i18n::scoped(Lang::En, || {
        let zh = i18n::zh_catalogue();
        let mut problems = Vec::new();
        for lang in Lang::ALL {
            i18n::set(lang);
            for size in [(1024.0, 640.0), (1280.0, 800.0), (1920.0, 1080.0)] {
                // (Every view of the registry; the VRAM tab four times: inference, then runs whose assumption toggles have
                // long alternatives: a LoRA run, a QLoRA run, litgpt's 4-bit engine on an old
                // bitsandbytes.)
                let vram_runs = [1, 2, 3].map(|k| (Tab::Vram, k));
                for (tab, run) in Tab::all().map(|t| (t, 0)).chain(vram_runs) {
                    let mut h = app(tab, size);
                    use gpu_doctor::vram::{Framework, Mode, Quant, Trainer, Workload};
                    let lora = |mode| Trainer::HfTrainer.apply(&Workload { mode, ..Default::default() });
                    match run {
                        1 => h.state_mut().vram.settings = lora(Mode::Lora),
                        2 => h.state_mut().vram.settings = lora(Mode::Qlora),
                        3 => {
                            h.state_mut().vram.settings = Workload {
                                framework: Framework::LitGpt,
                                quant: Quant::Nf4Dq,
                                seq: 2048,
                                bnb_before_0_43: true,
                                ..Default::default()
                            }
                        }
                        _ => {}
                    }
                    open(&mut h, tab);
                    let items = texts(&h);
                    assert!(items.len() > 5, "{lang:?} {tab:?}: almost nothing on screen");
                    for p in layout_problems_with(&items, size, Some(&status_bar(&h))) {
                        problems.push(format!("{lang:?} {size:?} {tab:?}: {p}"));
                    }
                    eprintln!("{lang:?} {size:?} {tab:?}: {} texts on screen", items.len());
                    if std::env::var_os("GD_DUMP").is_some() {
                        eprintln!("{:#?}", items.iter().map(|(t, _)| t).collect::<Vec<_>>());
                    }
                    if lang == Lang::En {
                        // The detector sees English where there is English (else it proves nothing).
                        let english = items.iter().filter(|(t, _)| english_run(t).is_some()).count();
                        assert!(english > 0, "{size:?} {tab:?}: no English found in English");
                    }
                    if lang == Lang::ZhCn {
                        for (t, _) in &items {
                            let shown_in_english = zh.get(t.as_str()).is_some_and(|z| z != t);
                            if shown_in_english {
                                problems.push(format!("{size:?} {tab:?}: shown in English: {t:?}"));
                            } else if let Some(run) = english_run(t) {
                                problems.push(format!("{size:?} {tab:?}: English words {run:?} in {t:?}"));
                            }
                        }
                    }
                }
            }
        }
        i18n::set(Lang::En);
        problems.dedup();
        assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
    });
}

#[test]
fn switching_to_chinese_in_the_settings_redraws_the_window_and_the_checklist_live() {
    i18n::scoped(Lang::En, || {
        i18n::set(Lang::En);
        let mut h = app(Tab::About, (1280.0, 800.0));
        h.get_by_label("Checklist");
        let before = h.state().checklist.report.as_ref().map(|r| r.checks[0].title.clone()).unwrap_or_default();
        h.get_by_label("550.54.15 (DEMO)");
        h.get_by_label("简体中文").click();
        h.run_steps(4);
        // (Data the window held before the switch is shown in the new language too: the demo's label.)
        h.get_by_label("550.54.15（演示）");
        // The checklist is not run again: its results are messages, drawn in the new language. The
        // first layer's title and the first check's title are shown in Chinese from the same results.
        h.state_mut().tab = Tab::Checklist;
        h.run_steps(10);
        assert!(!h.state().checklist.running(), "a language switch started the checks again");
        let report = h.state().checklist.report.clone().expect("the checklist's results are kept");
        assert_eq!(report.checks[0].title, before, "the results were made again");
        assert!(h.query_all_by_label("检查清单").count() > 0, "no 检查清单");
        assert!(h.query_all_by_label("Checklist").count() == 0, "the tab bar still says Checklist");
        let title = report.checks[0].title_in(Lang::ZhCn);
        assert!(title.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)), "checklist title {title:?}");
        let layer = i18n::tr_in(Lang::ZhCn, report.checks[0].layer.title());
        assert!(
            h.query_all_by_label_contains(&layer).count() > 0,
            "the checklist tab does not show the layer {layer:?} in Chinese"
        );
        // Issue 38, item 13: small text (legends, captions, card statistics) is 11 px in Chinese,
        // egui's 9 px in English.
        let small = |h: &Harness<'static, DoctorApp>| {
            h.ctx.global_style().text_styles.get(&eframe::egui::TextStyle::Small).map(|f| f.size)
        };
        assert_eq!(small(&h), Some(gpu_doctor::gui::palette::SMALL_CJK));
        // Issue 38, item 16: Chinese quotation marks are the CJK font's, full-width, and putting
        // that font first changed no row's height.
        let (quote, row) = quote_and_row(&h);
        assert!(quote >= 13.0, "“ is {quote} points wide at 14 points: not the CJK font's full-width mark");
        // And back.
        h.state_mut().tab = Tab::About;
        h.run_steps(10);
        h.get_by_label("English").click();
        h.run_steps(10);
        assert_eq!(small(&h), Some(gpu_doctor::gui::palette::SMALL_LATIN));
        let (latin_quote, latin_row) = quote_and_row(&h);
        assert!(latin_quote < 8.0, "English keeps the Latin font's “ ({latin_quote} points)");
        assert_eq!(row, latin_row, "the quotation marks' font changed the height of a Latin row");
        assert!(h.query_all_by_label("Checklist").count() > 0, "the tab bar does not say Checklist again");
        h.get_by_label("550.54.15 (DEMO)");
        i18n::set(Lang::En);
    });
}

/// The width of “ and the height of a row of Latin text, at 14 points, with the window's fonts.
fn quote_and_row(h: &Harness<'static, DoctorApp>) -> (f32, f32) {
    use eframe::egui::{Color32, FontId};
    h.ctx.fonts_mut(|f| {
        let quote = f.layout_no_wrap("“".into(), FontId::proportional(14.0), Color32::WHITE).size().x;
        let row = f.layout_no_wrap("GPU 0 (x)".into(), FontId::proportional(14.0), Color32::WHITE).size().y;
        (quote, row)
    })
}

/// What the Chinese window shows on a machine with no driver (NVML's explanation, made in English
/// before the language was switched), in the Connect dialog, and on an imported bug report: all
/// Chinese, nothing cut off. English words the report itself holds (its log lines, its device
/// names) are data.
#[test]
fn the_no_gpu_banner_the_connect_dialog_and_an_imported_report_are_all_chinese() {
    i18n::scoped(Lang::En, || {
        use gpu_doctor::telemetry::source::{LoadAttempt, NoGpu, NvmlFailure, StaticGpus};
        let size = (1024.0, 640.0);
        let mut problems = Vec::new();
        // (`inside`: only what a dialog window of that title holds, drawn over the page: what is in
        // its rect and was not on the page before, `page`.)
        type Texts = Vec<(String, eframe::egui::Rect)>;
        let mut look = |h: &Harness<'static, DoctorApp>, what: &str, data: &str, inside: Option<(&str, &Texts)>| {
            let mut items = texts(h);
            if let Some((title, page)) = inside {
                let window = items.iter().find(|(t, r)| t == title && r.height() > 60.0).map(|(_, r)| *r);
                let window = window.unwrap_or_else(|| panic!("{what}: no window {title:?}"));
                items.retain(|item| window.expand(1.0).contains_rect(item.1) && !page.contains(item));
                assert!(items.len() > 3, "{what}: almost nothing in the window");
            }
            for p in layout_problems(&items, size) {
                problems.push(format!("{what}: {p}"));
            }
            for (t, _) in &items {
                if let Some(run) = english_run(t)
                    && !data.contains(&run)
                {
                    problems.push(format!("{what}: English words {run:?} in {t:?}"));
                }
            }
        };
        // The sampler opened NVML while the window was English.
        let (summary, next_step) = NvmlFailure::NotFound.explain_message(false);
        let no = NoGpu {
            summary,
            next_step,
            attempts: vec![LoadAttempt {
                path: "libnvidia-ml.so.1".into(),
                error: "cannot open shared object file".into(),
            }],
            failure: Some(NvmlFailure::NotFound),
        };
        i18n::set(Lang::ZhCn);
        let s = Sampler::manual(
            Arc::new(StaticGpus::unavailable(no)),
            Box::new(DemoHost::new(Scenario::Idle, 1)),
            Duration::from_secs(1),
        );
        s.step_host(1.0);
        s.step_gpu(1.0);
        let mut h = Harness::builder().with_size(eframe::egui::vec2(size.0, size.1)).build_eframe(move |cc| {
            let mut init = AppInit::new(s);
            init.tab = Tab::Monitor;
            DoctorApp::new(cc, init)
        });
        h.run_steps(10);
        // (NVML's explanation in Chinese although it was made in English.)
        h.get_by_label_contains("找不到 NVIDIA 驱动的管理库");
        look(&h, "no-GPU banner", "", None);
        let page = texts(&h);
        h.get_by_label("连接服务器…").click();
        h.run_steps(5);
        h.get_by_label("连接服务器");
        look(&h, "Connect dialog", "", Some(("连接服务器", &page)));
        // An imported nvidia-bug-report log on the Checklist.
        let log = fixture("bug-reports/trourest-2023-2080ti-vm-nvml-mismatch/nvidia-bug-report.log.gz");
        let data = gpu_doctor::diagnose::bugreport::read(&log).unwrap();
        let data = data.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut h = app(Tab::Checklist, size);
        let ctx = h.ctx.clone();
        h.state_mut().checklist.open(&ctx, log.clone(), "none (test harness)");
        let deadline = Instant::now() + Duration::from_secs(30);
        while h.state().checklist.report.as_ref().is_none_or(|r| r.imported.is_none()) {
            h.state_mut().checklist.poll();
            assert!(Instant::now() < deadline, "the imported checklist did not come");
            h.step();
            std::thread::sleep(Duration::from_millis(20));
        }
        h.run_steps(10);
        assert!(h.query_all_by_label_contains("nvidia-bug-report").count() > 0, "no import header");
        look(&h, "imported report", &data, None);
        i18n::set(Lang::En);
        assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
    });
}
