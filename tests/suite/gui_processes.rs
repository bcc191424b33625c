//! The Monitor's process table as nvitop and nvtop users expect it (issue 38, item 15): each
//! process's share of the GPU and of the video engines, and ending a process of this user after
//! a confirmation; never a process of demo data or of a server.
#![cfg(all(feature = "gui", unix))]

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use gpu_doctor::gui::DoctorApp;
use gpu_doctor::telemetry::demo::{DemoHost, Scenario};

use crate::gui::{app_on_sized, demo_app, fake_source, stepped};

/// The "End…" button on the row of `pid` (the table lists other tests' children too).
fn end_button_of<'a>(h: &'a Harness<'static, DoctorApp>, pid: u32) -> Option<egui_kittest::Node<'a>> {
    let row = h.get_by_label(&pid.to_string()).rect().center().y;
    h.query_all_by_label("End…").find(|b| (b.rect().center().y - row).abs() < 4.0)
}

fn sleeper() -> Child {
    Command::new("sleep").arg("300").spawn().expect("sleep runs")
}

/// Draws frames until `label` is shown or 10 s pass.
fn until_shown(h: &mut Harness<'static, DoctorApp>, label: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while h.query_by_label_contains(label).is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        h.run_steps(2);
    }
    h.get_by_label_contains(label);
}

#[test]
fn a_process_of_this_user_is_ended_only_after_it_is_confirmed() {
    let mut child = sleeper();
    let pid = child.id();
    // The fake's compute process list is the test process's children: `sleep` among them.
    let (_dir, src) = fake_source("gpus = 1\nchild_processes = 1\n", None);
    let mut h = app_on_sized(stepped(src, Box::new(DemoHost::new(Scenario::Idle, 1)), 3), 2400.0);
    h.get_by_label("GPU util.");
    h.get_by_label("Enc. / dec.");
    assert!(h.query_all_by_label("sleep").count() >= 1, "the child is listed by name");

    // Cancel leaves it running.
    end_button_of(&h, pid).expect("an End… button on the sleeper's row").click();
    h.run_steps(3);
    h.get_by_label_contains(&format!("Process {pid} (sleep) on GPU 0"));
    // In the middle of the window (2400 px tall), not at its top, far from the table.
    let middle = h.get_by_label_contains(&format!("Process {pid} (sleep)")).rect().center().y;
    assert!((900.0..1500.0).contains(&middle), "the dialog is at y={middle}");
    h.get_by_label("Cancel").click();
    h.run_steps(3);
    assert!(h.query_by_label_contains(&format!("Process {pid} (sleep)")).is_none(), "the dialog closed");
    std::thread::sleep(Duration::from_millis(200));
    assert!(child.try_wait().expect("wait").is_none(), "cancelled: still running");

    // Confirmed, it is asked to exit (SIGTERM) and the dialog says it has ended.
    end_button_of(&h, pid).expect("an End… button on the sleeper's row").click();
    h.run_steps(3);
    h.get_by_label(&format!("End process {pid}")).click();
    until_shown(&mut h, "It has ended.");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(child.wait().expect("collected").signal(), Some(libc_sigterm()));
    h.get_by_label("Close").click();
    h.run_steps(3);
    assert!(h.query_by_label("It has ended.").is_none());
}

/// SIGTERM's number on Linux (the tests do not link libc).
fn libc_sigterm() -> i32 {
    15
}

#[test]
fn demo_processes_show_their_share_of_the_gpu_and_offer_no_end() {
    let h = demo_app(Scenario::HealthyTraining, 2, 2400.0);
    h.get_by_label("GPU util.");
    // The simulated job runs every kernel on its GPU; its share is a percentage.
    assert!(h.query_all_by_label("python train.py").count() >= 2);
    assert!(h.query_all_by_label("0 % / 0 %").count() >= 2, "encoder / decoder of each process");
    // Demo PIDs may be real processes of this machine: nothing may end them.
    assert!(h.query_by_label("End…").is_none());
}
