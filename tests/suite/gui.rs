//! GUI behaviour through egui_kittest: no display, no GPU. The app is driven by a sampler stepped
//! by hand, so every frame sees known data.
#![cfg(feature = "gui")]

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use gpu_doctor::gui::{AppInit, DoctorApp, ProcessSort, TimeWindow};
use gpu_doctor::telemetry::GpuSource;
use gpu_doctor::telemetry::demo::{DemoGpus, DemoHost, Scenario};
use gpu_doctor::telemetry::host::HostSource;
use gpu_doctor::telemetry::live::{LiveGpus, NvmlOptions};
use gpu_doctor::telemetry::pci;
use gpu_doctor::telemetry::sampler::Sampler;
use gpu_doctor::telemetry::source::{LoadAttempt, NoGpu, StaticGpus};

pub(crate) fn stepped(gpu: Arc<dyn GpuSource>, host: Box<dyn HostSource>, ticks: u32) -> Sampler {
    let s = Sampler::manual(gpu, host, Duration::from_secs(1));
    s.step_slow(0.0);
    for t in 1..=ticks {
        s.step_host(f64::from(t));
        s.step_gpu(f64::from(t));
    }
    s
}

/// Samples a `demo_app` (30 s in) on to 90 s, a full 60 s verdict window, and draws it.
fn sample_until_90_s(h: &mut Harness<'static, DoctorApp>) {
    for t in 31..=90 {
        h.state().sampler().step_host(f64::from(t));
        h.state().sampler().step_gpu(f64::from(t));
    }
    h.step();
    h.step();
}

pub(crate) fn demo_app(scenario: Scenario, gpus: u32, height: f32) -> Harness<'static, DoctorApp> {
    let sampler = stepped(Arc::new(DemoGpus::new(scenario, gpus, 3)), Box::new(DemoHost::new(scenario, 3)), 30);
    let mut h = Harness::builder()
        .with_size(eframe::egui::vec2(1280.0, height))
        .build_eframe(move |cc| DoctorApp::new(cc, AppInit::new(sampler)));
    h.run();
    h
}

#[test]
fn at_1024_by_640_the_demo_badge_covers_no_button_and_the_status_bar_is_one_line() {
    let sampler = stepped(
        Arc::new(DemoGpus::new(Scenario::HealthyTraining, 2, 3)),
        Box::new(DemoHost::new(Scenario::HealthyTraining, 3)),
        30,
    );
    let mut h = Harness::builder()
        .with_size(eframe::egui::vec2(1024.0, 640.0))
        .build_eframe(move |cc| DoctorApp::new(cc, AppInit::new(sampler)));
    h.run();
    let badge = h
        .query_all_by_label_contains("DEMO")
        .map(|n| n.rect())
        .find(|r| r.min.y < 30.0)
        .expect("a DEMO badge in the top bar");
    for button in ["Support card", "Report...", "Screenshot", "File"] {
        let b = h.get_by_label(button).rect();
        assert!(!b.intersects(badge), "the DEMO badge {badge:?} covers {button} {b:?}");
    }
    assert!(badge.max.x <= 1024.0, "{badge:?}");
    let data = h.get_by_label_contains("Data: DEMO data").rect();
    let renderer = h.get_by_label_contains("Renderer:").rect();
    assert!((data.center().y - renderer.center().y).abs() < 2.0, "status bar on one line: {data:?} {renderer:?}");
}

#[test]
fn demo_data_is_labelled() {
    let h = demo_app(Scenario::HealthyTraining, 2, 800.0);
    h.get_by_label_contains("DEMO DATA: healthy-training");
    h.get_by_label_contains("Data: DEMO data");
    assert!(h.query_by_label_contains("No NVIDIA GPU data").is_none());
}

#[test]
fn time_window_buttons_switch_the_window() {
    let mut h = demo_app(Scenario::Idle, 1, 800.0);
    assert_eq!(h.state().monitor.window, TimeWindow::Min5);
    h.get_by_label("15 min").click();
    h.run();
    assert_eq!(h.state().monitor.window, TimeWindow::Min15);
    h.get_by_label("24 h").click();
    h.run();
    assert_eq!(h.state().monitor.window, TimeWindow::Hour24);
}

#[test]
fn pause_freezes_the_view_and_resume_follows_again() {
    let mut h = demo_app(Scenario::Idle, 1, 800.0);
    assert!(h.state().monitor.paused_at.is_none());
    h.get_by_label("Pause").click();
    h.run();
    assert!(h.state().monitor.paused_at.is_some());
    h.get_by_label("PAUSED");
    // New data keeps arriving while paused; the frozen edge stays.
    let frozen = h.state().monitor.paused_at;
    h.state().sampler().step_gpu(31.0);
    h.run();
    assert_eq!(h.state().monitor.paused_at, frozen);
    h.get_by_label("Resume").click();
    h.run();
    assert!(h.state().monitor.paused_at.is_none());
    assert!(h.query_by_label("PAUSED").is_none());
}

#[test]
fn process_table_sorts_by_clicked_column() {
    let mut h = demo_app(Scenario::HealthyTraining, 2, 2400.0);
    h.get_by_label("GPU processes");
    assert_eq!(h.state().monitor.sort, ProcessSort::Vram);
    assert!(h.state().monitor.sort_desc);
    h.get_by_label("VRAM (desc)").click();
    h.run();
    assert!(!h.state().monitor.sort_desc, "second click on the same column flips the order");
    h.get_by_label("VRAM (asc)");
    h.get_by_label("PID").click();
    h.run();
    assert_eq!(h.state().monitor.sort, ProcessSort::Pid);
    h.get_by_label("PID (asc)");
    // Host summary with per-disk rates sits above the table.
    h.get_by_label_contains("nvme0n1 read");
    // Rows are there: the simulated training processes.
    assert!(h.query_all_by_label("python train.py").count() >= 2);
}

#[test]
fn gpu_filter_shows_one_gpu() {
    let mut h = demo_app(Scenario::Imbalance, 4, 800.0);
    h.get_by_label("GPU 2").click();
    h.run();
    assert_eq!(h.state().monitor.gpu_filter, Some(2));
    h.get_by_label("All").click();
    h.run();
    assert_eq!(h.state().monitor.gpu_filter, None);
}

#[test]
fn the_no_gpu_banner_leads_with_the_checklists_root_cause() {
    // In a container started without GPUs NVML is simply missing, which on its own reads as "no
    // driver installed"; the checklist knows better. The banner must say what the checklist says.
    let no = NoGpu {
        summary: gpu_doctor::i18n::Message::from_text("NVML was not found, so no NVIDIA driver seems to be installed."),
        next_step: gpu_doctor::i18n::Message::from_text("Install the NVIDIA driver for your GPU."),
        attempts: vec![LoadAttempt { path: "libnvidia-ml.so.1".to_string(), error: "not found".to_string() }],
        failure: None,
    };
    let sampler = stepped(Arc::new(StaticGpus::unavailable(no)), Box::new(DemoHost::new(Scenario::Idle, 1)), 3);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/container-without-gpus");
    let mut h = Harness::builder().with_size(eframe::egui::vec2(1280.0, 800.0)).build_eframe(move |cc| {
        let mut init = AppInit::new(sampler);
        init.checklist_from = Some(dir);
        init.diagnose_at_start = true;
        DoctorApp::new(cc, init)
    });
    h.step();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while h.state().checklist.report.is_none() {
        assert!(std::time::Instant::now() < deadline, "checks did not finish");
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    h.run();
    h.get_by_label("No NVIDIA GPU data");
    h.get_by_label_contains("No GPU was passed into this container");
    // The fix, runnable: commands on their own lines with their own Copy buttons.
    h.get_by_label("docker run --gpus all --rm ubuntu nvidia-smi");
    assert!(h.query_all_by_label("Copy").count() >= 3, "one Copy button per command");
    assert!(h.query_by_label_contains("Install the NVIDIA driver").is_none(), "NVML's guess is only a detail");
    assert!(h.query_by_label_contains("no NVIDIA driver seems to be installed").is_none());
    // Opened, NVML's own answers are there, and no advice that contradicts the diagnosis above
    // (issue 53, item 24: it told the container's user to install the driver).
    h.get_by_label("What NVML said").click();
    h.run();
    assert!(
        h.query_by_label_contains("cannot open shared object file").is_some()
            || h.query_by_label_contains("libnvidia-ml").is_some()
    );
    assert!(h.query_by_label_contains("Install the NVIDIA driver").is_none(), "the details contradict the root cause");
    assert!(h.query_by_label_contains("no NVIDIA driver seems to be installed").is_none());
}

#[test]
fn no_driver_banner_explains_and_offers_demo() {
    let no = NoGpu {
        summary: gpu_doctor::i18n::Message::from_text(
            "The NVIDIA driver's management library (NVML) was not found, so no NVIDIA driver seems to be installed.",
        ),
        next_step: gpu_doctor::i18n::Message::from_text("Install the NVIDIA driver for your GPU."),
        attempts: vec![LoadAttempt {
            path: "libnvidia-ml.so.1".to_string(),
            error: "cannot open shared object file".to_string(),
        }],
        failure: None,
    };
    let sampler = stepped(Arc::new(StaticGpus::unavailable(no)), Box::new(DemoHost::new(Scenario::Idle, 1)), 5);
    let mut h = Harness::builder()
        .with_size(eframe::egui::vec2(1280.0, 800.0))
        .build_eframe(move |cc| DoctorApp::new(cc, AppInit::new(sampler)));
    h.run();
    h.get_by_label("No NVIDIA GPU data");
    assert!(h.query_all_by_label_contains("(NVML) was not found").count() >= 1);
    h.get_by_label_contains("Next step: Install the NVIDIA driver");
    h.get_by_label("Host charts below keep running.");
    h.get_by_label("Data: this machine's host metrics only (no NVIDIA GPU data)");
    h.get_by_label_contains("gpu-doctor-cli info");
    assert!(h.query_by_label_contains("DEMO DATA").is_none());
    // The demo is a choice of scenarios.
    h.get_by_label("Try demo mode").click();
    h.run();
    h.get_by_label_contains("data-starved —").click();
    h.run();
    h.get_by_label_contains("DEMO DATA: data-starved");
    h.get_by_label("Back to this machine");
    assert!(h.query_by_label("No NVIDIA GPU data").is_none());
}

#[test]
fn about_tab_shows_renderer_and_source() {
    let mut h = demo_app(Scenario::Idle, 1, 800.0);
    h.get_by_label("About").click();
    h.run();
    h.get_by_label("Renderer");
    h.get_by_label("none (test harness)");
    h.get_by_label_contains("gpu-doctor 0.");
}

#[test]
fn four_gpus_get_a_compact_table_and_three_chart_columns_fit_a_1280_window() {
    let h = demo_app(Scenario::HealthyTraining, 4, 800.0);
    // From four GPUs, one row each instead of cards: the charts stay above the fold.
    let row = h.get_by_label_contains("3  Simulated");
    assert!(row.rect().max.x < 1270.0, "GPU 3's row ends at {}, outside the window", row.rect().max.x);
    assert!(h.query_by_label_contains("GPU 3  Simulated").is_none(), "no cards from four GPUs up");
    let charts_top = h.get_by_label("GPU utilization and memory bandwidth utilization").rect().min.y;
    assert!(charts_top < 800.0 - 150.0, "the first charts start at y={charts_top}, below the fold");
    // Three equal chart columns: the third ends inside the window (it used to run 10-20 px past it
    // when a too-wide card row widened the scroll area).
    let first = h.get_by_label("GPU utilization and memory bandwidth utilization").rect().min.x;
    let third = h.get_by_label("PCIe throughput").rect().min.x;
    let column = (third - first) / 2.0;
    let spacing = 8.0;
    let right = third + column - spacing;
    assert!(right <= 1280.0 - first, "third chart column ends at x={right}");
}

// The real NVML path against the test-only fake library (tests/fake_nvml).

pub(crate) fn fake_source(scenario_text: &str, root: Option<&std::path::Path>) -> (tempfile::TempDir, Arc<LiveGpus>) {
    let (dir, lib) = common::private_fake(common::Fake::Current, scenario_text);
    let root = root.map_or_else(|| dir.path().to_path_buf(), std::path::Path::to_path_buf);
    let src = Arc::new(LiveGpus::new(NvmlOptions { library: Some(lib), wake_sleeping: false, root }));
    (dir, src)
}

fn app_on(sampler: Sampler) -> Harness<'static, DoctorApp> {
    app_on_sized(sampler, 800.0)
}

pub(crate) fn app_on_sized(sampler: Sampler, height: f32) -> Harness<'static, DoctorApp> {
    let mut h = Harness::builder()
        .with_size(eframe::egui::vec2(1280.0, height))
        .build_eframe(move |cc| DoctorApp::new(cc, AppInit::new(sampler)));
    h.run();
    h
}

#[test]
fn fake_nvml_init_failures_explain_and_host_charts_stay() {
    for (name, cause, step) in [
        ("version-mismatch", "The driver was updated", "Next step: Reboot"),
        ("driver-not-loaded", "kernel driver is not loaded", "Next step: Check `lsmod | grep nvidia`"),
    ] {
        let (_dir, src) = fake_source(&common::scenario_text(name), None);
        let h = app_on(stepped(src, Box::new(DemoHost::new(Scenario::Idle, 1)), 5));
        h.get_by_label("No NVIDIA GPU data");
        h.get_by_label_contains(cause);
        h.get_by_label_contains(step);
        h.get_by_label("Host");
        h.get_by_label("Host charts below keep running.");
        h.get_by_label("CPU utilization (all cores) (chart)");
    }
}

#[test]
fn fake_nvml_old_driver_and_refused_process_lists_degrade_only_their_metrics() {
    let (dir, lib) = common::private_fake(common::Fake::OldDriver, &common::scenario_text("healthy"));
    let src =
        Arc::new(LiveGpus::new(NvmlOptions { library: Some(lib), wake_sleeping: false, root: dir.path().into() }));
    let h = app_on_sized(stepped(src, Box::new(DemoHost::new(Scenario::Idle, 1)), 3), 2400.0);
    assert_eq!(h.query_all_by_label_contains("/ 80.0 GiB").count(), 2, "VRAM read on both cards");
    assert!(h.query_all_by_label_contains("not available in this driver version").count() >= 2);

    let (_dir, src) = fake_source(&common::scenario_text("no-permission"), None);
    let h = app_on_sized(stepped(src, Box::new(DemoHost::new(Scenario::Idle, 1)), 3), 2400.0);
    h.get_by_label("Process list unavailable.");
    h.get_by_label("GPU 0: needs administrator rights");
    h.get_by_label_contains("GPU 0  NVIDIA Fake Test GPU");
    assert!(h.query_by_label_contains("n/a").is_none(), "every card metric still read");
}

#[test]
fn fake_nvml_eight_gpus_fit_a_compact_table_with_the_charts_above_the_fold() {
    let (_dir, src) = fake_source(&common::scenario_text("eight-gpus"), None);
    let h = app_on(stepped(src, Box::new(DemoHost::new(Scenario::Idle, 1)), 3));
    let rows: Vec<_> = (0..8).map(|i| h.get_by_label(&format!("{i}  NVIDIA Fake Test GPU")).rect()).collect();
    assert!(rows.iter().all(|r| r.max.x < 1280.0), "{rows:?}");
    assert!(rows.windows(2).all(|w| w[1].min.y > w[0].min.y), "one row per GPU: {rows:?}");
    let charts_top = h.get_by_label("GPU utilization and memory bandwidth utilization").rect().min.y;
    assert!(charts_top < 800.0 - 150.0, "the first charts start at y={charts_top}, below the fold");
}

#[test]
fn fake_nvml_unsupported_metrics_show_na_without_errors() {
    let (_dir, src) = fake_source(&common::scenario_text("unsupported"), None);
    let h = app_on(stepped(src, Box::new(DemoHost::new(Scenario::Idle, 1)), 5));
    h.get_by_label_contains("GPU 0  NVIDIA Fake Test GPU");
    assert!(h.query_all_by_label_contains("n/a").count() >= 5, "unsupported values read n/a");
    assert!(h.query_by_label_contains("rror").is_none(), "no error text anywhere");
    assert!(h.query_by_label("No NVIDIA GPU data").is_none());
}

#[test]
fn fake_nvml_lost_gpu_is_marked_while_the_other_updates() {
    let (_dir, src) = fake_source(&common::scenario_text("gpu-lost"), None);
    let sampler = stepped(src, Box::new(DemoHost::new(Scenario::Idle, 1)), 6);
    let h = app_on(sampler);
    h.get_by_label("LOST");
    assert!(h.query_all_by_label_contains("fallen off the bus").count() >= 1);
    assert!(h.query_all_by_label_contains("Xid 79").count() >= 1);
    let cards = h.query_all_by_label_contains("NVIDIA Fake Test GPU").count();
    assert_eq!(cards, 2, "both cards stay");
    assert_eq!(h.query_all_by_label("GPU utilization").count(), 1, "GPU 0's card keeps its metric rows");
}

#[test]
fn fake_nvml_hung_call_shows_not_responding_while_the_ui_keeps_running() {
    let (_dir, src) = fake_source("gpus = 2\nhang = nvmlDeviceGetTemperature\nhang_after = 2\nhang_secs = 4\n", None);
    let sampler = Sampler::start(src, Box::new(DemoHost::new(Scenario::Idle, 1)), Duration::from_millis(250)).unwrap();
    let mut h = Harness::builder()
        .with_size(eframe::egui::vec2(1280.0, 800.0))
        .build_eframe(move |cc| DoctorApp::new(cc, AppInit::new(sampler)));
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let (mut frames_while_hung, mut seen, mut cleared) = (0, false, false);
    while std::time::Instant::now() < deadline {
        h.step();
        let hung = h.query_by_label("GPU data not responding").is_some();
        if hung {
            seen = true;
            frames_while_hung += 1;
            h.get_by_label_contains("nvmlDeviceGetTemperature on GPU");
            // The UI answers input while the sampler thread is stuck in the driver.
            h.get_by_label("15 min").click();
        } else if seen {
            cleared = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(seen, "the stall was never shown");
    assert!(frames_while_hung >= 10, "only {frames_while_hung} frames while hung");
    assert_eq!(h.state().monitor.window, TimeWindow::Min15, "clicks handled while hung");
    assert!(cleared, "the banner did not clear after the call returned");
    assert!(h.state().sampler().snapshot().gpu_stall.is_none());
}

#[test]
fn fake_nvml_sleeping_gpu_is_left_asleep_until_the_user_wakes_it() {
    let root = tempfile::tempdir().unwrap();
    pci::write_fixture(root.path(), "0000:01:00.0", 0x10de, 0x030000, Some("suspended")).unwrap();
    let (_dir, src) = fake_source(&common::scenario_text("healthy"), Some(root.path()));
    let sampler = stepped(src, Box::new(DemoHost::new(Scenario::Idle, 1)), 3);
    let mut h = app_on(sampler);
    h.get_by_label("GPU asleep (runtime-suspended)");
    assert!(h.query_by_label_contains("NVIDIA Fake Test GPU").is_none(), "not opened");
    h.get_by_label("Read it anyway (wakes the GPU)").click();
    h.run();
    h.state().sampler().step_gpu(4.0);
    h.run();
    h.get_by_label_contains("GPU 0  NVIDIA Fake Test GPU");
    assert!(h.query_by_label("GPU asleep (runtime-suspended)").is_none());
}

// The Checklist tab, on capture fixtures (tests/fixtures).

fn checklist_app(fixture: &str) -> Harness<'static, DoctorApp> {
    let sampler = stepped(Arc::new(DemoGpus::new(Scenario::Idle, 1, 3)), Box::new(DemoHost::new(Scenario::Idle, 3)), 3);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(fixture);
    let mut h = Harness::builder().with_size(eframe::egui::vec2(1280.0, 900.0)).build_eframe(move |cc| {
        let mut init = AppInit::new(sampler);
        init.tab = gpu_doctor::gui::Tab::Checklist;
        init.checklist_from = Some(dir);
        DoctorApp::new(cc, init)
    });
    // The checks run on a background thread; wait for their result.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while h.state().checklist.report.is_none() {
        assert!(std::time::Instant::now() < deadline, "checks did not finish");
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    h.run();
    h
}

#[test]
fn checklist_wizard_opens_on_the_root_cause_and_steps_through_layers() {
    let mut h = checklist_app("nouveau-bound");
    h.get_by_label("Root cause: The open-source nouveau driver holds the GPU");
    h.get_by_label("Step 2 of 8: NVIDIA driver");
    h.get_by_label_contains("blacklist nouveau");
    assert!(h.query_all_by_label("Copy").count() >= 3, "each fix has a copy button");
    h.get_by_label("Next").click();
    h.run();
    h.get_by_label("Step 3 of 8: CUDA and frameworks");
    h.get_by_label("Back").click();
    h.run();
    h.get_by_label("Back").click();
    h.run();
    h.get_by_label("Step 1 of 8: GPU hardware");
    h.get_by_label_contains("8 Runtime health").click();
    h.run();
    h.get_by_label("Step 8 of 8: Runtime health");
    // A Linux machine's checklist has no Windows step.
    assert!(h.query_by_label("9 Windows").is_none());
    h.get_by_label("Show this step").click();
    h.run();
    assert_eq!(h.state().checklist.step, 1);
}

#[test]
fn checklist_all_results_lists_every_check_and_recheck_runs_again() {
    let mut h = checklist_app("user-not-in-video-group");
    h.get_by_label("All results").click();
    h.run();
    assert!(h.state().checklist.show_all);
    for title in [
        "NVIDIA GPU on the PCI bus",
        "This user's access to the GPU device files",
        "CUDA_VISIBLE_DEVICES",
        "GPUs answering",
    ] {
        h.get_by_label(title);
    }
    h.get_by_label_contains("sudo usermod -aG video alice");
    h.get_by_label("Re-check").click();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while h.state().checklist.running() {
        assert!(std::time::Instant::now() < deadline);
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(h.state().checklist.report.as_ref().is_some_and(|r| r.root_cause.as_deref() == Some("PERM-02")));
}

#[test]
fn checklist_headline_is_the_finding_and_copy_buttons_copy_commands() {
    let mut h = checklist_app("no-driver");
    // The headline says what is wrong, not the name of the check that failed.
    h.get_by_label("Root cause: The NVIDIA driver is not installed");
    assert!(h.query_by_label_contains("Root cause: NVIDIA kernel module").is_none());
    assert!(h.query_by_label_contains("DRV-01").is_none(), "check ids stay out of the visible text");
    // Checks waiting for the fix name it by its finding.
    assert!(h.query_all_by_label("blocked: The NVIDIA driver is not installed (fix that first)").count() >= 2);
    // The fix's prose has no Copy button; its one command has one, which copies exactly the command.
    h.get_by_label("Install the recommended NVIDIA driver:");
    h.get_by_label("Reboot once the installation has finished.");
    h.get_by_label("sudo ubuntu-drivers install");
    assert_eq!(h.query_all_by_label("Copy").count(), 1, "one Copy button, for the one command");
    h.get_by_label("Copy").click();
    h.step();
    let copied: Vec<&str> = h
        .output()
        .platform_output
        .commands
        .iter()
        .filter_map(|c| match c {
            eframe::egui::OutputCommand::CopyText(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(copied, ["sudo ubuntu-drivers install"]);
}

#[test]
fn checklist_folds_the_checks_that_do_not_apply() {
    let mut h = checklist_app("healthy-workstation");
    h.get_by_label("All results").click();
    h.run();
    h.get_by_label_contains("checks do not apply here: ");
    assert!(h.query_by_label("Driver model (WDDM / TCC / MCDM)").is_none(), "Windows checks are folded away");
}

#[test]
fn checklist_healthy_machine_says_no_problem() {
    let h = checklist_app("healthy-workstation");
    h.get_by_label("No problem found.");
}

#[test]
fn no_driver_banner_links_to_the_checklist() {
    let no = NoGpu {
        summary: gpu_doctor::i18n::Message::from_text("No NVML."),
        next_step: gpu_doctor::i18n::Message::from_text("Install the driver."),
        attempts: vec![],
        failure: None,
    };
    let sampler = stepped(Arc::new(StaticGpus::unavailable(no)), Box::new(DemoHost::new(Scenario::Idle, 1)), 2);
    let mut h = app_on(sampler);
    h.get_by_label("Open the checklist").click();
    h.step();
    h.step();
    assert_eq!(h.state().tab, gpu_doctor::gui::Tab::Checklist);
    assert_eq!(h.query_all_by_label("Checklist").count(), 2, "tab button and the tab's heading");
}

// The VRAM tab.

fn vram_app(gpus: u32) -> Harness<'static, DoctorApp> {
    vram_app_in(Scenario::Idle, gpus)
}

fn vram_app_in(scenario: Scenario, gpus: u32) -> Harness<'static, DoctorApp> {
    let sampler = stepped(Arc::new(DemoGpus::new(scenario, gpus, 3)), Box::new(DemoHost::new(scenario, 3)), 3);
    let mut h = Harness::builder().with_size(eframe::egui::vec2(1280.0, 900.0)).build_eframe(move |cc| {
        let mut init = AppInit::new(sampler);
        init.tab = gpu_doctor::gui::Tab::Vram;
        DoctorApp::new(cc, init)
    });
    h.run();
    h
}

/// Issue 34: the VRAM answer is made once ([`gpu_doctor::vram::answer`]) and the report made in the
/// app carries the same text `gpu-doctor-cli vram` prints for it: the breakdown in the command's
/// words, the fit on this machine's GPU with its verdict, and the limits.
#[test]
fn the_report_carries_the_vram_answer_in_the_commands_words() {
    let mut h = vram_app(1);
    h.state_mut().vram.settings.seq = 16384;
    h.run();
    h.get_by_label("TIGHT");
    h.get_by_label("Report...").click();
    h.step();
    h.step();
    let preview = h.state().report.preview.clone();
    assert!(preview.contains("per GPU (as nvidia-smi would show it)"), "{preview}");
    assert!(preview.contains("Simulated GeForce RTX 4090 (DEMO): TIGHT — "), "{preview}");
    assert!(preview.contains("largest batch"), "{preview}");
    // The words of the old, separately made report lines are gone.
    assert!(!preview.contains(" in all (weights "), "{preview}");
}

#[test]
fn vram_tab_shows_breakdown_fit_and_suggestions_for_this_machines_gpus() {
    let mut h = vram_app(1);
    h.get_by_label_contains("8.03 B parameters");
    h.get_by_label("weights");
    h.get_by_label("14.96 GiB");
    // The idle demo GPU has 23.5 of 24 GiB free: at 16384 tokens an 8B model in bf16 (21.8 GiB)
    // fits only without the 20 % headroom; at 4096 tokens (17.7 GiB) it fits with it.
    h.state_mut().vram.settings.seq = 16384;
    h.run();
    h.get_by_label("TIGHT");
    h.state_mut().vram.settings.seq = 4096;
    h.run();
    h.get_by_label("FITS");
    h.get_by_label_contains("Within the headroom: largest batch");
    h.get_by_label_contains("To need less memory");
    // QLoRA needs less than inference in bf16? Switch to a full fine-tune: it does not fit.
    h.get_by_label("Full fine-tune").click();
    h.run();
    assert!(h.query_by_label("DOES NOT FIT").is_some() || h.query_by_label("DOES NOT FIT NOW").is_some());
    h.get_by_label_contains("LoRA instead of a full fine-tune");
    h.get_by_label("QLoRA").click();
    h.run();
    assert_eq!(h.state().vram.settings.mode, gpu_doctor::vram::Mode::Qlora);
}

#[test]
fn vram_tab_training_takes_the_trainers_defaults_and_toggles_an_assumption() {
    use gpu_doctor::vram::{Checkpointing, Trainer};
    let mut h = vram_app(1);
    h.get_by_label("LoRA").click();
    h.run();
    // The Hugging Face Trainer's defaults: no gradient checkpointing.
    assert_eq!(h.state().vram.settings.trainer, Trainer::HfTrainer);
    assert_eq!(h.state().vram.settings.checkpointing, Checkpointing::None);
    h.get_by_label("no gradient checkpointing");
    let toggle = h.get_by_label_contains("with gradient checkpointing: ");
    let label = egui_kittest::kittest::NodeT::accesskit_node(&toggle).label().unwrap_or_default();
    toggle.click();
    h.run();
    assert_eq!(h.state().vram.settings.checkpointing, Checkpointing::Full, "{label}");
    // The heading now shows the figure the toggle promised.
    let gib = label.rsplit(": ").next().unwrap_or_default().trim_end_matches(" GiB").to_string();
    // The heading's range ends at the figure the toggle promised (both are the high end).
    h.get_by_label_contains(&format!("–{gib} GiB per GPU"));
    // Another trainer starts from its own defaults.
    h.get_by_label("Unsloth").click();
    h.run();
    let s = &h.state().vram.settings;
    assert_eq!((s.trainer, s.lora_rank, s.lora_all_linear, s.chunked_loss), (Trainer::Unsloth, 16, true, true));
}

/// A loop that keeps its fp32 logits through backward (torchtune before 0.3, a hand-written loop
/// without `del logits`): the checkbox adds them, the breakdown says so, the advice offers to free
/// them and the assumption toggles back; a chunked loss has no such checkbox.
#[test]
fn vram_tab_counts_logits_a_training_loop_keeps() {
    use gpu_doctor::vram::Checkpointing;
    let mut h = vram_app(1);
    h.get_by_label("LoRA").click();
    h.run();
    h.state_mut().vram.settings.checkpointing = Checkpointing::Full;
    h.run();
    assert!(h.query_by_label_contains("The training loop keeps the fp32 logits (").is_none());
    h.get_by_label("Advanced").click();
    h.run();
    h.get_by_label("The loop keeps the logits through backward").click();
    h.run();
    assert!(h.state().vram.settings.held_logits);
    h.get_by_label_contains("The training loop keeps the fp32 logits (2.0 GiB) until backward ends");
    h.get_by_label_contains("free the logits before backward (del logits once the loss is computed)");
    // Folded again, so the assumption's button is on the screen.
    h.get_by_label("Advanced").click();
    h.run();
    h.get_by_label_contains("with the logits freed before backward: ").click();
    h.run();
    assert!(!h.state().vram.settings.held_logits);
    h.get_by_label("Advanced").click();
    h.run();
    h.get_by_label("Chunked loss (torchtune, Unsloth, Liger)").click();
    h.run();
    assert!(h.query_by_label("The loop keeps the logits through backward").is_none());
}

/// A 4-bit model offers the bitsandbytes version in the Advanced section; before 0.43 the
/// breakdown says the matmul holds two copies.
#[test]
fn vram_tab_takes_an_old_bitsandbytes() {
    use gpu_doctor::vram::{Framework, Quant};
    let mut h = vram_app(1);
    h.get_by_label("Advanced").click();
    h.run();
    assert!(h.query_by_label("bitsandbytes before 0.43 (dequantised through fp16)").is_none());
    h.state_mut().vram.settings.quant = Quant::Nf4Dq;
    h.state_mut().vram.settings.framework = Framework::LitGpt;
    h.run();
    assert!(h.query_by_label_contains("each 4-bit matrix is dequantised to fp16").is_none());
    h.get_by_label("bitsandbytes before 0.43 (dequantised through fp16)").click();
    h.run();
    assert!(h.state().vram.settings.bnb_before_0_43);
    h.get_by_label_contains("bitsandbytes before 0.43: each 4-bit matrix is dequantised to fp16 and then cast to bf16");
}

#[test]
fn vram_tab_on_a_busy_card_says_what_to_stop_before_shrinking_the_model() {
    // The VramFull demo: `python serve.py` (pid 4242) holds 23 of 24 GiB. An 8B model in bf16 at
    // 2048 tokens fits the card with the headroom once that process is stopped.
    let mut h = vram_app_in(Scenario::VramFull, 1);
    h.state_mut().vram.settings.seq = 2048;
    h.run();
    h.get_by_label("FITS ONCE FREED");
    h.get_by_label_contains("fits this 24 GiB card once `python serve.py` (pid 4242) is stopped");
    h.get_by_label_contains("With the card free, within the headroom: largest batch");
    assert!(h.query_by_label_contains("largest batch none").is_none());
    h.get_by_label_contains("What to do (in the order to try it)");
    h.get_by_label_contains("• stop `python serve.py` (pid 4242)");
}

#[test]
fn vram_tab_imports_a_config_and_reports_a_bad_one() {
    let mut h = vram_app(1);
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("mistral").join("config.json");
    std::fs::create_dir_all(good.parent().unwrap_or(dir.path())).unwrap();
    std::fs::write(&good, r#"{"model_type":"mistral","num_hidden_layers":32,"hidden_size":4096,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":32000}"#).unwrap();
    h.state_mut().vram.import_config(&good);
    h.run();
    h.get_by_label_contains("7.24 B parameters");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"hidden_size\": 4096}").unwrap();
    h.state_mut().vram.import_config(&bad);
    h.run();
    h.get_by_label_contains("num_hidden_layers: missing");
    h.get_by_label_contains("7.24 B parameters");
}

fn smoke_app(scenario: &str) -> (Harness<'static, DoctorApp>, tempfile::TempDir) {
    let (dir, lib) = common::private_fake_cuda(false, "lib", scenario);
    let sampler = stepped(Arc::new(DemoGpus::new(Scenario::Idle, 1, 3)), Box::new(DemoHost::new(Scenario::Idle, 3)), 5);
    let mut h = Harness::builder().with_size(eframe::egui::vec2(1280.0, 1000.0)).build_eframe(move |cc| {
        let mut init = AppInit::new(sampler);
        init.tab = gpu_doctor::gui::Tab::Smoke;
        init.smoke = gpu_doctor::gui::SmokeSetup {
            launcher: gpu_doctor::smoke::runner::Launcher::new(env!("CARGO_BIN_EXE_gpu-doctor-cli")),
            cuda_lib: Some(lib),
            nvml_lib: Some("/nonexistent/libnvidia-ml.so.1".into()),
            stall: Duration::from_secs(60),
            autostart: false,
        };
        DoctorApp::new(cc, init)
    });
    h.step();
    (h, dir)
}

/// Steps frames (the child runs in real time) until `done` holds or `secs` pass.
fn step_until(h: &mut Harness<'static, DoctorApp>, secs: u64, done: impl Fn(&DoctorApp) -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    while !done(h.state()) {
        assert!(std::time::Instant::now() < deadline, "timed out");
        std::thread::sleep(Duration::from_millis(20));
        h.step();
    }
    h.step();
}

#[test]
fn smoke_tab_runs_the_test_and_shows_stages_numbers_and_verdict() {
    let (mut h, _dir) = smoke_app("mem_clock_khz = 0\n");
    h.get_by_label("Not run yet.");
    h.get_by_label("Run smoke test").click();
    h.step();
    assert!(h.state().smoke.running());
    // Stages appear while it runs, with Cancel instead of Run.
    step_until(&mut h, 60, |a| a.smoke.running_stage().is_some_and(|s| s != gpu_doctor::smoke::Stage::Load));
    if h.state().smoke.running() {
        h.get_by_label("Cancel");
    }
    step_until(&mut h, 120, |a| !a.smoke.running());
    h.get_by_label_contains("PASS: the GPU computes correct results");
    h.get_by_label("pinned host to GPU");
    h.get_by_label("all 16,777,216 results correct");
    h.get_by_label("Copy report");
    h.get_by_label("Export...");
    let r = h.state().smoke.report.clone().expect("no report");
    assert_eq!(r.verdict, gpu_doctor::diagnose::Verdict::Pass);
    // The exported files are the text report and JSON.
    let dir = tempfile::tempdir().unwrap();
    gpu_doctor::gui::write_report(&r, &dir.path().join("r.txt")).unwrap();
    gpu_doctor::gui::write_report(&r, &dir.path().join("r.json")).unwrap();
    let text = std::fs::read_to_string(dir.path().join("r.txt")).unwrap_or_default();
    assert!(text.contains("PASS: the GPU computes correct results"), "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap_or_default())
            .unwrap_or_default();
    assert_eq!(json["verdict"], "pass");
    h.get_by_label("Copy report").click();
    h.step();
    h.step();
    h.get_by_label("Report copied to the clipboard.");
}

#[test]
fn smoke_tab_cancel_stops_a_hung_test_and_the_window_stays_responsive() {
    let (mut h, _dir) = smoke_app("hang = cuCtxSynchronize\n");
    h.get_by_label("Run smoke test").click();
    h.step();
    step_until(&mut h, 60, |a| a.smoke.running_stage() == Some(gpu_doctor::smoke::Stage::Kernel));
    // Frames keep coming while the child hangs.
    for _ in 0..10 {
        h.step();
    }
    h.get_by_label("Cancel").click();
    h.step();
    step_until(&mut h, 15, |a| !a.smoke.running());
    h.get_by_label_contains("CANCELLED: cancelled during 'Run a kernel (saxpy, verified)'");
    h.get_by_label("Run smoke test");
}

#[test]
fn smoke_tab_shows_a_failure_with_its_next_step() {
    let (mut h, _dir) = smoke_app("init = 34\n");
    h.get_by_label("Run smoke test").click();
    h.step();
    step_until(&mut h, 60, |a| !a.smoke.running());
    h.get_by_label_contains("FAIL: failed at 'Initialise the driver (cuInit)'");
    h.get_by_label("Next step:");
    // (The next step is words to read: no Copy button pretends it is a command.)
    assert!(h.query_by_label("Copy next step").is_none());
    h.get_by_label("error: CUDA_ERROR_STUB_LIBRARY");
}

fn app_with(init: impl FnOnce(&mut AppInit) + 'static) -> Harness<'static, DoctorApp> {
    let sampler =
        stepped(Arc::new(DemoGpus::new(Scenario::Idle, 1, 3)), Box::new(DemoHost::new(Scenario::Idle, 3)), 10);
    let mut h = Harness::builder().with_size(eframe::egui::vec2(1280.0, 900.0)).build_eframe(move |cc| {
        let mut i = AppInit::new(sampler);
        init(&mut i);
        DoctorApp::new(cc, i)
    });
    h.step();
    h
}

#[test]
fn settings_notice_once_and_changes_are_saved() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.ron");
    std::fs::write(&path, "(interval_secs: ").unwrap();
    let loaded = gpu_doctor::settings::Settings::load(&path);
    let p2 = path.clone();
    let mut h = app_with(move |i| {
        i.settings = loaded.settings;
        i.settings_notice = loaded.notice;
        i.settings_path = Some(p2);
    });
    h.get_by_label_contains("started with default settings and kept the old file as");
    h.get_by_label("OK").click();
    h.step();
    h.step();
    assert!(h.query_by_label_contains("started with default settings").is_none());
    // A changed chart window is saved.
    h.get_by_label("15 min").click();
    h.step();
    h.step();
    let saved = gpu_doctor::settings::Settings::load(&path).settings;
    assert_eq!(saved.window_secs, 900);
    // The theme and units from the About tab.
    h.state_mut().tab = gpu_doctor::gui::Tab::About;
    h.step();
    h.get_by_label("Light").click();
    h.step();
    h.step();
    let saved = gpu_doctor::settings::Settings::load(&path).settings;
    assert_eq!(saved.theme, gpu_doctor::settings::Theme::Light);
    assert_eq!(saved.tab, "about");
    // (The byte-units switch changes a process-wide setting; tests/suite/units.rs covers it alone.)
    h.get_by_label("GB (1000)");
}

#[test]
fn report_dialog_previews_redacts_and_copies() {
    let mut h = app_with(|_| {});
    h.get_by_label("Report...").click();
    h.step();
    h.step();
    h.get_by_label_contains("Preview: exactly what will be saved or copied");
    let preview = h.state().report.preview.clone();
    assert!(preview.starts_with("# gpu-doctor report"), "{preview}");
    assert!(preview.contains("Redaction: on: host names"));
    assert!(preview.contains("## Recent metrics") && preview.contains("DEMO DATA"));
    h.get_by_label("HTML page").click();
    h.step();
    h.step();
    assert!(h.state().report.preview.starts_with("<!DOCTYPE html>"));
    h.get_by_label("Redact").click();
    h.step();
    h.step();
    assert!(h.state().report.preview.contains("Redaction: off"));
    h.get_by_label_contains("Not redacted");
    h.get_by_label("Copy").click();
    h.step();
    h.step();
    h.get_by_label("Report copied to the clipboard.");
}

/// Writes a recording of `ticks` seconds of a demo scenario.
fn demo_recording(path: &std::path::Path, scenario: Scenario, gpus: u32, ticks: u32) {
    let s = stepped(Arc::new(DemoGpus::new(scenario, gpus, 1)), Box::new(DemoHost::new(scenario, 1)), 0);
    s.step_host(0.0);
    s.step_gpu(0.0);
    let mut r =
        gpu_doctor::telemetry::recording::Recorder::create(path, &s.snapshot()).unwrap_or_else(|e| panic!("{e}"));
    for t in 1..=ticks {
        s.step_host(f64::from(t));
        s.step_gpu(f64::from(t));
        let _ = r.append(&s.snapshot());
    }
}

/// The app replaying `path`, once the helper thread has read it.
fn replaying(path: &std::path::Path) -> Harness<'static, DoctorApp> {
    let p = path.to_path_buf();
    let mut h = app_with(move |i| i.replay = Some(p));
    for _ in 0..200 {
        if !h.state().replay_opening() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        h.step();
    }
    h.step();
    h
}

#[test]
fn replay_shows_a_recording_with_label_and_slider() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.gdrec");
    demo_recording(&path, Scenario::DataStarved, 2, 120);
    // The file is read on a helper thread; the window stays live meanwhile.
    let mut h = replaying(&path);
    h.get_by_label_contains("REPLAY: r.gdrec (recorded, not live)");
    h.get_by_label_contains("Data: REPLAY of");
    assert_eq!(h.state().replay_span, Some((1.0, 120.0)));
    assert_eq!(h.state().monitor.paused_at, Some(120.0));
    // Judged over the 5 minutes chosen, the 2-minute recording still gets verdicts, over its span.
    h.state_mut().monitor.diag_window = 300.0;
    h.step();
    h.step();
    assert_eq!(h.state().monitor.judged_span, Some(119.0));
    assert!(!h.state().monitor.verdicts.is_empty());
    // Moving the slider moves the view (and the cards) back in time.
    h.state_mut().monitor.paused_at = Some(30.0);
    h.step();
    assert_eq!(h.state().monitor.paused_at, Some(30.0));
    assert!(h.get_all_by_label("Replay position").count() >= 1);
    // Back to the live machine.
    h.get_by_label("Back to this machine").click();
    h.step();
    h.step();
    assert!(h.state().replay_span.is_none());
    assert!(h.query_by_label_contains("REPLAY:").is_none());
}

#[test]
fn record_from_the_file_menu_and_stop() {
    let dir = tempfile::tempdir().unwrap();
    // SAFETY: set before the app reads it; this test binary's other tests do not read it.
    unsafe { std::env::set_var("XDG_DATA_HOME", dir.path()) };
    let mut h = app_with(|_| {});
    h.get_by_label("File").click();
    h.step();
    h.step();
    h.get_by_label("Record metrics to a file").click();
    h.step();
    h.step();
    assert!(h.state().sampler().recording().is_some());
    for t in 11..=14 {
        h.state().sampler().step_host(f64::from(t));
        h.state().sampler().step_gpu(f64::from(t));
    }
    h.step();
    h.get_by_label("Stop recording (4)").click();
    h.step();
    h.step();
    assert!(h.state().sampler().recording().is_none());
    h.get_by_label_contains("Recorded 4 samples to");
    let files: Vec<_> = std::fs::read_dir(dir.path().join("gpu-doctor").join("recordings"))
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    assert_eq!(files.len(), 1);
    let rec = gpu_doctor::telemetry::recording::Recording::open(&files[0]).unwrap();
    assert_eq!(rec.records.len(), 4);
}

#[test]
fn support_card_is_redacted_and_reports_carry_the_vram_estimate() {
    let mut h = app_with(|_| {});
    h.get_by_label("Support card").click();
    h.step();
    h.step();
    h.get_by_label_contains("support card");
    h.get_by_label("Clocks held back by");
    h.get_by_label("[host-1]");
    // Its own full view: it spans the window instead of floating over the Monitor.
    let title = h.get_by_label_contains("support card").rect();
    // (Below the card's own row of buttons.)
    assert!(title.min.x < 40.0 && title.min.y < 100.0, "the card starts at the window's corner: {title:?}");
    // The VRAM estimate joins reports once the tab was used (the card closed first: it covers the
    // window).
    h.state_mut().card.open = false;
    h.state_mut().tab = gpu_doctor::gui::Tab::Vram;
    h.step();
    h.get_by_label("Report...").click();
    h.step();
    h.step();
    let preview = h.state().report.preview.clone();
    assert!(preview.contains("## VRAM estimate") && preview.contains("Llama-3.1-8B"), "{preview}");
}

#[test]
fn diagnosis_panel_names_the_bottleneck_and_marks_it_on_the_charts() {
    let mut h = demo_app(Scenario::DataStarved, 1, 900.0);
    sample_until_90_s(&mut h);
    assert_eq!(
        h.query_all_by_label_contains("GPU 0 is data-starved: the CPU cannot feed it fast enough").count(),
        2,
        "named in the Diagnosis panel and in the GPU's card header"
    );
    h.get_by_label_contains("Raise the data loader's worker processes");
    let v = &h.state().monitor.verdicts;
    assert_eq!(v[0].finding, gpu_doctor::diagnose::bottleneck::Finding::DataStarved);
    // The verdict's start is an event in the history (drawn as a mark on the utilization chart).
    let events: Vec<String> = h.state().sampler().with_history(|hist| hist.events().map(|e| e.text.en()).collect());
    assert!(events.iter().any(|e| e.contains("data-starved")), "{events:?}");
}

#[test]
fn diagnosis_panel_counts_down_to_the_first_verdict_right_after_start() {
    // 10 s of samples; a 60 s window needs 30 s before the first verdict.
    let sampler = stepped(
        Arc::new(DemoGpus::new(Scenario::DataStarved, 1, 3)),
        Box::new(DemoHost::new(Scenario::DataStarved, 3)),
        10,
    );
    let mut h = app_on_sized(sampler, 900.0);
    h.step();
    h.get_by_label_contains("Collecting data: first verdict in");
    let first = h.state().monitor.first_verdict_in.expect("a countdown");
    assert!((1.0..=30.0).contains(&first), "{first}");
    assert!(h.state().monitor.verdicts.is_empty());
    for t in 11..=15 {
        h.state().sampler().step_host(f64::from(t));
        h.state().sampler().step_gpu(f64::from(t));
    }
    h.step();
    h.step();
    assert_eq!(h.state().monitor.first_verdict_in, Some(first - 5.0));
    h.get_by_label_contains(&format!("first verdict in {} s", first - 5.0));
}

fn jobs_app() -> Harness<'static, DoctorApp> {
    app_with(|i| {
        i.smoke.launcher = gpu_doctor::smoke::runner::Launcher::new(env!("CARGO_BIN_EXE_gpu-doctor-cli"));
        i.source.nvml_lib = Some("/nonexistent/libnvidia-ml.so.1".into());
    })
}

#[test]
fn measure_a_run_from_the_file_menu() {
    let mut h = jobs_app();
    h.get_by_label("File").click();
    h.step();
    h.step();
    h.get_by_label("Measure a run...").click();
    h.step();
    h.step();
    h.state_mut().run_dialog.command = "echo hello-from-the-job; sleep 1; exit 2".to_string();
    h.step();
    h.get_by_label("Run").click();
    h.step();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while h.state().run_dialog.running()
        || h.state().run_dialog.summary.is_none() && h.state().run_dialog.error.is_none()
    {
        assert!(std::time::Instant::now() < deadline, "timed out");
        std::thread::sleep(Duration::from_millis(50));
        h.step();
    }
    h.step();
    let d = &h.state().run_dialog;
    assert!(d.error.is_none(), "{:?}", d.error);
    assert!(d.output.contains("hello-from-the-job"), "{}", d.output);
    h.get_by_label_contains("exited with code 2");
}

#[test]
fn focus_on_a_process_from_its_pid() {
    let mut h = jobs_app();
    let mut sleeper = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    h.state_mut().monitor.focus_request = Some(sleeper.id());
    h.step();
    assert!(h.state().focus_dialog.open && h.state().focus_dialog.running());
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while h.state().focus_dialog.running() {
        assert!(std::time::Instant::now() < deadline, "timed out");
        std::thread::sleep(Duration::from_millis(50));
        h.step();
    }
    h.step();
    let r = h.state().focus_dialog.result.clone().unwrap_or_else(|| panic!("{:?}", h.state().focus_dialog.error));
    assert_eq!(r.pid, sleeper.id());
    h.get_by_label_contains("Verdict: it does nothing");
    let _ = sleeper.kill();
    let _ = sleeper.wait();
}

#[test]
fn support_card_with_eight_gpus_fits_one_1280_by_800_screen_with_the_root_cause_and_first_fix() {
    let sampler = stepped(
        Arc::new(DemoGpus::new(Scenario::HealthyTraining, 8, 3)),
        Box::new(DemoHost::new(Scenario::HealthyTraining, 3)),
        30,
    );
    // The checklist's result as this machine's (a capture's checks without its origin): the card
    // of a file is about the file alone, and has no live GPUs.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/container-without-gpus");
    let mut checklist = gpu_doctor::diagnose::input::CheckSource::Capture(dir).run(None).unwrap();
    checklist.origin = None;
    let mut h = Harness::builder().with_size(eframe::egui::vec2(1280.0, 800.0)).build_eframe(move |cc| {
        let mut init = AppInit::new(sampler);
        init.support_card = true;
        DoctorApp::new(cc, init)
    });
    // (A fresh state: a live run already started here must not replace the result.)
    let mut state = gpu_doctor::gui::ChecklistState::new(gpu_doctor::gui::ChecklistSource::Live(Default::default()));
    state.report = Some(checklist);
    h.state_mut().checklist = state;
    // (And the card made again from it, should the live result have reached it first.)
    h.state_mut().card.doc = None;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !h.state().card.has_checklist() {
        assert!(std::time::Instant::now() < deadline, "the card never got the checklist's result");
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    h.run();
    let root = h.get_by_label_contains("Root cause").rect();
    assert!(root.min.y < 200.0, "the root cause leads the card: {root:?}");
    // Demo GPU data, but the checklist judged this machine: the card says whose root cause it is.
    h.get_by_label("Root cause on this machine (not the demo data): No GPU was passed into this container.");
    h.get_by_label("sudo nvidia-ctk runtime configure --runtime=docker");
    // Everything on it is inside the 800-point window: nothing needs scrolling.
    for label in
        ["Simulated GeForce RTX 4090 (DEMO)", "NVML", "Renderer", "docker run --gpus all --rm ubuntu nvidia-smi"]
    {
        let bottom = h.query_all_by_label(label).map(|n| n.rect().max.y).fold(0.0, f32::max);
        assert!(bottom > 0.0 && bottom <= 794.0, "{label:?} ends at {bottom}, below the window");
    }
    let rows = h.query_all_by_label("Simulated GeForce RTX 4090 (DEMO)").count();
    assert_eq!(rows, 8, "one row per GPU");
}

#[test]
fn a_gpu_card_leads_with_the_windows_average_utilization_the_verdict_quotes() {
    let mut h = demo_app(Scenario::DataStarved, 2, 900.0);
    sample_until_90_s(&mut h);
    let util = h.state().monitor.util.clone();
    assert_eq!(util.len(), 2, "{util:?}");
    for u in &util {
        let big = format!("{:.0} %", u.mean);
        assert!(h.query_all_by_label(&big).count() >= 1, "no card shows {big}");
        let range = format!("min {:.0} – max {:.0} %", u.min, u.max);
        assert!(h.query_all_by_label_contains(&range).count() >= 1, "no card shows {range}");
        // The verdict quotes the same average.
        let quoted = format!("GPU {} utilization {:.0} % on average", u.gpu, u.mean);
        let verdicts = &h.state().monitor.verdicts;
        assert!(
            verdicts.iter().any(|v| v.gpu == Some(u.gpu) && v.evidence.iter().any(|e| e.en().contains(&quoted))),
            "no verdict quotes {quoted:?}: {verdicts:?}"
        );
    }
}

#[test]
fn utilization_can_be_split_into_one_small_chart_per_gpu() {
    let mut h = demo_app(Scenario::DataStarved, 2, 1400.0);
    h.get_by_label("GPU utilization and memory bandwidth utilization");
    h.get_by_label("Utilization per GPU").click();
    h.run();
    h.get_by_label("GPU 0 utilization and memory bandwidth");
    h.get_by_label("GPU 1 utilization and memory bandwidth");
    assert!(h.query_by_label("GPU utilization and memory bandwidth utilization").is_none());
    // Showing one GPU needs no split: the toggle goes away and the single chart is back.
    h.get_by_label("GPU 1").click();
    h.run();
    assert!(h.query_by_label("Utilization per GPU").is_none());
    h.get_by_label("GPU utilization and memory bandwidth utilization");
}

#[test]
fn eight_starved_gpus_keep_the_charts_above_the_fold_at_1280_by_800() {
    let mut h = demo_app(Scenario::DataStarved, 8, 800.0);
    sample_until_90_s(&mut h);
    assert!(h.state().monitor.verdicts.len() >= 8, "one verdict per GPU at least");
    h.get_by_label_contains("more verdicts");
    let charts_top = h.get_by_label("GPU utilization and memory bandwidth utilization").rect().min.y;
    assert!(charts_top < 760.0, "the first chart starts at y={charts_top}, below the fold");
}

/// Issue 37: a checkpoint saved quantised brings its format and says it is loaded as stored; a
/// plain model afterwards is 16-bit again; an encoder in training offers its head as an
/// assumption that moves the figure.
#[test]
fn vram_tab_takes_a_saved_quantised_checkpoint_as_stored_and_names_an_encoders_head() {
    use gpu_doctor::vram::{EncoderHead, Quant, presets};
    let mut h = vram_app(1);
    let list = presets::built_in();
    let bnb = presets::find(&list, "Llama-3.1-70B-bnb-4bit").cloned().unwrap();
    h.state_mut().vram.set_arch(bnb);
    h.run();
    assert_eq!(h.state().vram.settings.quant, Quant::Nf4Dq);
    assert!(h.state().vram.settings.prequantized);
    h.get_by_label_contains("The checkpoint is saved quantised");
    let plain = presets::find(&list, "Llama-3.1-70B").cloned().unwrap();
    h.state_mut().vram.set_arch(plain);
    h.run();
    assert_eq!(h.state().vram.settings.quant, Quant::Bf16);
    assert!(!h.state().vram.settings.prequantized);
    // BERT in training: the classification head is the assumption, a masked-LM head the toggle.
    let bert = presets::find(&list, "BERT-base").cloned().unwrap();
    h.state_mut().vram.set_arch(bert);
    h.state_mut().vram.settings.seq = 512;
    h.state_mut().vram.settings.batch = 16;
    h.run();
    h.get_by_label("Full fine-tune").click();
    h.run();
    h.get_by_label("a classification head");
    h.get_by_label_contains("with a masked-LM head (vocabulary logits): ").click();
    h.run();
    assert_eq!(h.state().vram.settings.encoder_head, EncoderHead::MaskedLm);
    h.get_by_label_contains("Encoder training with a masked-LM head");
}

/// Issue 37, item 5: FLUX.1 can be trained in the tab: LoRA starts from diffusers' recipe
/// (checkpointing, 8-bit AdamW, rank 4, prompts and latents cached) and caching is an assumption
/// with its figure.
#[test]
fn vram_tab_trains_a_flux_lora_from_diffusers_recipe() {
    use gpu_doctor::vram::{Checkpointing, Mode, presets};
    let mut h = vram_app(1);
    let flux = presets::find(&presets::built_in(), "FLUX.1-dev").cloned().unwrap();
    h.state_mut().vram.set_arch(flux);
    h.run();
    h.get_by_label("QLoRA").click();
    h.run();
    let s = &h.state().vram.settings;
    assert_eq!(
        (s.mode, s.checkpointing, s.lora_rank, s.image.text_encoders),
        (Mode::Qlora, Checkpointing::Full, 4, false)
    );
    h.get_by_label_contains("FLUX.1 QLoRA at 1024×1024");
    h.get_by_label("prompt embeddings and latents cached");
    h.get_by_label_contains("with the text encoders and VAE on the GPU: ").click();
    h.run();
    assert!(h.state().vram.settings.image.text_encoders);
    h.get_by_label_contains("The text encoders and the VAE stay on the GPU");
    // Back to generating images: the inference inputs return.
    h.get_by_label("Generate images").click();
    h.run();
    assert_eq!(h.state().vram.settings.mode, Mode::Inference);
    h.get_by_label("VAE decode");
}

/// Issue 38, item 11: a preset of another kind starts from its native settings: SDXL after
/// SD 1.5 at 512 × 512 and an LLM's batch of 8 answers for 1 image at 1024 × 1024; tiling at the
/// VAE's own size says it changes nothing.
#[test]
fn vram_tab_presets_start_from_their_native_settings() {
    use gpu_doctor::vram::{Family, VaeDecode, presets};
    let mut h = vram_app(1);
    let list = presets::built_in();
    h.state_mut().vram.settings.batch = 8;
    h.state_mut().vram.set_arch(presets::find(&list, "SD-1.5").cloned().unwrap());
    h.run();
    assert_eq!(h.state().vram.settings.batch, 1);
    let sd15 = Family::of(&h.state().vram.arch).unwrap();
    assert_eq!(h.state().vram.settings.image.size(sd15), (512, 512));
    h.get_by_label("tiled").click();
    h.run();
    assert_eq!(h.state().vram.settings.image.vae, VaeDecode::Tiled);
    h.get_by_label_contains("so tiling changes nothing");
    h.state_mut().vram.set_arch(presets::find(&list, "SDXL-base-1.0").cloned().unwrap());
    h.run();
    let sdxl = Family::of(&h.state().vram.arch).unwrap();
    assert_eq!(h.state().vram.settings.image.size(sdxl), (1024, 1024));
    assert_eq!(h.state().vram.settings.image.vae, VaeDecode::Full);
    h.get_by_label_contains("at 1024×1024, 1 per batch");
}

/// Issue 37, item 5: Stable Diffusion 3 in the VRAM tab, with the T5-XXL encoder left out by a
/// checkbox only SD3 shows; litgpt as an inference engine.
#[test]
fn vram_tab_leaves_sd3s_t5_out_and_offers_litgpt() {
    use gpu_doctor::vram::{Framework, presets};
    let mut h = vram_app(1);
    let list = presets::built_in();
    h.state_mut().vram.set_arch(presets::find(&list, "SD3-medium").cloned().unwrap());
    h.run();
    h.get_by_label_contains("text encoders 10.4 GiB");
    h.get_by_label("left out (text_encoder_3=None)").click();
    h.run();
    assert!(h.state().vram.settings.image.without_t5);
    h.get_by_label_contains("text encoders 1.5 GiB");
    h.state_mut().vram.set_arch(presets::find(&list, "SDXL-base-1.0").cloned().unwrap());
    h.run();
    assert!(h.query_by_label("left out (text_encoder_3=None)").is_none(), "only SD3 has a T5 to leave out");
    h.state_mut().vram.set_arch(presets::find(&list, "Falcon-40B").cloned().unwrap());
    h.run();
    h.get_by_label("litgpt").click();
    h.run();
    assert_eq!(h.state().vram.settings.framework, Framework::LitGpt);
    h.get_by_label_contains("litgpt generate: the output head is a matrix of its own");
}

#[test]
fn vram_tab_answers_an_image_model_in_images_pixels_and_the_vae_decode() {
    use gpu_doctor::vram::{VaeDecode, presets};
    let mut h = vram_app(1);
    let sdxl = presets::find(&presets::built_in(), "SDXL-base-1.0").cloned().unwrap();
    h.state_mut().vram.set_arch(sdxl);
    h.state_mut().vram.settings.batch = 4;
    h.run();
    // Image inputs replace tokens and engines; the peak is the fp32 decode of all four images.
    h.get_by_label("Images per batch");
    assert!(h.query_all_by_label("Size (pixels)").next().is_some());
    assert!(h.query_by_label("Context (tokens)").is_none());
    h.get_by_label_contains("the peak is in the VAE decode phase");
    h.get_by_label_contains("decode one image at a time (pipe.enable_vae_slicing())");
    let need = |h: &Harness<'static, DoctorApp>| {
        let v = &h.state().vram;
        let b = gpu_doctor::vram::estimate(&v.arch, &v.settings).unwrap();
        gpu_doctor::vram::need(&b, &v.settings)
    };
    let before = need(&h);
    h.get_by_label("one image at a time").click();
    h.run();
    assert_eq!(h.state().vram.settings.image.vae, VaeDecode::Sliced);
    assert!(need(&h) < before * 0.7, "{} vs {before}", need(&h));
}

/// Issue 33, item 6: a recording whose times run backwards (a clock set back, an edited file)
/// and that names a new GPU index in every sample opens in the window without a panic: the
/// samples out of order are skipped, the GPUs kept are the first 64.
#[test]
fn a_recording_with_times_running_backwards_opens() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.gdrec");
    demo_recording(&good, Scenario::Idle, 1, 20);
    // Times reversed, and each sample's GPU renumbered to a new index.
    let text = std::fs::read_to_string(&good).unwrap();
    let mut lines = text.lines();
    let mut out = format!("{}\n", lines.next().unwrap());
    for (k, l) in lines.enumerate() {
        let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
        v["t"] = serde_json::json!(1000.0 - k as f64 * 10.0);
        if let Some(g) = v["gpus"].as_array_mut().and_then(|a| a.first_mut()) {
            g["index"] = serde_json::json!(100 + k);
        }
        out.push_str(&format!("{v}\n"));
    }
    let path = dir.path().join("backwards.gdrec");
    std::fs::write(&path, out).unwrap();
    let mut h = replaying(&path);
    h.step();
    h.get_by_label_contains("REPLAY: backwards.gdrec");
    let (a, b) = h.state().replay_span.unwrap();
    assert!(a <= b, "{a} {b}");
    // The CLI's CSV has at most 64 GPU column groups, whatever the file names.
    let csv = std::process::Command::new(env!("CARGO_BIN_EXE_gpu-doctor-cli"))
        .arg("replay")
        .arg("--csv")
        .arg(&path)
        .output()
        .unwrap();
    let csv = String::from_utf8_lossy(&csv.stdout);
    let header = csv.lines().next().unwrap_or_default();
    assert!(header.matches("_util_pct").count() <= 64, "{header}");
}
