//! Issue 21: a server in the app. The window connects through an ssh stand-in (a script that runs
//! the remote command here: this build's `gpu-doctor-cli` over the fake NVML), so these tests need
//! no sshd; tests/suite/remote_ssh.rs does the same link against a real OpenSSH server.
#![cfg(all(feature = "gui", unix))]
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test reports a failure

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use gpu_doctor::gui::{AppInit, DoctorApp};
use gpu_doctor::report::{Format, render};
use gpu_doctor::telemetry::demo::{DemoHost, Scenario};
use gpu_doctor::telemetry::remote::{RemoteState, SshSetup, Target};
use gpu_doctor::telemetry::sampler::Sampler;
use gpu_doctor::telemetry::source::{NoGpu, StaticGpus};

/// A stand-in for ssh: it runs the remote command (its last argument) on this machine, after
/// `before` (shell lines).
fn fake_ssh(dir: &Path, before: &str) -> PathBuf {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_gpu-doctor-cli"));
    let script = dir.join("ssh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nexport PATH={bin}:$PATH LD_LIBRARY_PATH={lib} FAKE_NVML_SCENARIO={scenario}\n{before}\nfor last; do :; done\nexec sh -c \"$last\"\n",
            bin = bin.parent().unwrap().display(),
            lib = common::fake_lib_dir(common::Fake::Current).display(),
            scenario = common::scenario("healthy").display(),
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

fn local_app() -> Harness<'static, DoctorApp> {
    let no = NoGpu {
        summary: "No NVIDIA driver here.".into(),
        next_step: "Install one.".into(),
        attempts: Vec::new(),
        failure: None,
    };
    let sampler = Sampler::manual(
        Arc::new(StaticGpus::unavailable(no)),
        Box::new(DemoHost::new(Scenario::Idle, 1)),
        Duration::from_millis(500),
    );
    sampler.step_host(1.0);
    sampler.step_gpu(1.0);
    let mut h = Harness::builder()
        .with_size(eframe::egui::vec2(1280.0, 800.0))
        .build_eframe(move |cc| DoctorApp::new(cc, AppInit::new(sampler)));
    // (Frames are stepped, never run() to settle: the link's thread brings data at its own pace,
    // so whether the window has settled after four frames depends on how busy this machine is.)
    h.run_steps(4);
    h
}

/// Steps the window until `f` holds (the link and the sampler run on their own threads).
fn step_until(
    h: &mut Harness<'static, DoctorApp>,
    secs: u64,
    what: &str,
    f: impl Fn(&Harness<'static, DoctorApp>) -> bool,
) {
    let until = Instant::now() + Duration::from_secs(secs);
    loop {
        h.step();
        if f(h) {
            return;
        }
        let snap = h.state().sampler().snapshot();
        assert!(Instant::now() < until, "{what} within {secs} s; remote: {:?}", snap.remote);
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn connect(h: &mut Harness<'static, DoctorApp>, ssh: PathBuf) -> Target {
    let target: Target = "ann@gpu-server:2222".parse().unwrap();
    let ctx = h.ctx.clone();
    h.state_mut().connect(&ctx, target.clone(), SshSetup { program: ssh, ..SshSetup::default() });
    target
}

#[test]
fn a_server_shows_live_labelled_remote_with_its_charts_checklist_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = local_app();
    h.get_by_label("No NVIDIA GPU data");
    // The no-GPU banner offers the server; the dialog refuses a name ssh would read as an option.
    h.get_by_label("Connect to a server…").click();
    h.run_steps(4);
    h.get_by_label("Connect to a server");
    h.state_mut().connect_dialog.server = "-oProxyCommand=x".into();
    h.get_by_label("Connect").click();
    h.run_steps(4);
    h.get_by_label_contains("is not a host name or address");
    h.state_mut().connect_dialog.open = false;

    connect(&mut h, fake_ssh(dir.path(), ""));
    step_until(&mut h, 60, "live data from the server", |h| {
        let s = h.state().sampler().snapshot();
        s.remote.as_ref().is_some_and(|r| r.state == RemoteState::Live)
            && s.gpus.iter().any(|g| g.util_gpu_pct.get().is_some())
    });
    h.run_steps(4);
    h.get_by_label_contains("REMOTE ann@gpu-server:2222: live");
    h.get_by_label_contains("Data: ann@gpu-server:2222 over SSH (NVML");
    assert!(h.query_by_label("No NVIDIA GPU data").is_none(), "the server's GPUs replace the local banner");
    assert!(h.query_all_by_label_contains("NVIDIA Fake Test GPU").count() >= 2, "both GPU cards");
    // A server's process is not this machine's: no Focus link on its pid.
    assert!(h.query_all_by_label_contains("Focus on this process").next().is_none());

    // A recording of the server says where its data came from.
    let rec = dir.path().join("server.gdrec");
    h.state().sampler().start_recording(&rec).unwrap();
    let t0 = h.state().sampler().snapshot().seq;
    step_until(&mut h, 20, "a recorded tick", |h| h.state().sampler().snapshot().seq > t0 + 4);
    let (_, lines) = h.state().sampler().stop_recording().unwrap();
    assert!(lines >= 1);
    let header: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&rec).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(header["remote"], "ann@gpu-server:2222");

    // The checklist ran on the server.
    step_until(&mut h, 60, "the server's checklist", |h| h.state().checklist.report.is_some());
    h.state_mut().tab = gpu_doctor::gui::Tab::Checklist;
    h.run_steps(4);
    h.get_by_label("REMOTE ann@gpu-server:2222");

    // The report says where the data came from, and leaves out this desktop's machine facts.
    let snap = h.state().sampler().snapshot();
    let doc = h.state_mut().build_report(&snap);
    let md = render(&doc, Format::Md);
    assert!(md.contains("Server (REMOTE, over SSH)") && md.contains("ann@gpu-server:2222"), "{md}");
    assert!(!md.contains("| Kernel |"), "no local machine facts: {md}");

    // Disconnect: this machine again.
    h.state_mut().tab = gpu_doctor::gui::Tab::Monitor;
    h.run_steps(4);
    h.get_by_label("Disconnect").click();
    h.run_steps(4);
    step_until(&mut h, 10, "this machine again", |h| h.state().sampler().snapshot().remote.is_none());
    assert!(h.query_by_label_contains("REMOTE").is_none());
}

#[test]
fn a_password_prompt_becomes_how_to_set_up_a_key() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = local_app();
    let ssh = fake_ssh(dir.path(), "echo 'ann@gpu-server: Permission denied (publickey,password).' >&2; exit 255");
    connect(&mut h, ssh);
    step_until(&mut h, 30, "the authentication failure", |h| {
        h.state().sampler().snapshot().remote.as_ref().is_some_and(|r| matches!(r.state, RemoteState::Failed { .. }))
    });
    h.run_steps(4);
    h.get_by_label_contains("wants a password or a key passphrase; gpu-doctor never asks for or stores either");
    h.get_by_label_contains("ssh-copy-id ann@gpu-server:2222");
    h.get_by_label("Reconnect");
    assert!(h.query_by_label("No NVIDIA GPU data").is_none(), "one banner: the link's");
}

#[test]
fn a_hostile_server_is_counted_and_escaped_never_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = local_app();
    // The server's info names its GPU with markup, and its stream starts with junk and an
    // oversized line before the real lines.
    let before = r#"case "$last" in *"info --json"*) for last; do :; done; sh -c "$last" | sed 's/NVIDIA Fake Test GPU/<img src=x onerror=alert(1)>/'; exit 0;; *monitor*) echo 'not json'; head -c 2000000 /dev/zero | tr '\0' 'x'; echo; echo '{"schema":1,"gpus":[{"index":"x"}]}';; esac"#;
    let before = format!("for last; do :; done\n{before}");
    connect(&mut h, fake_ssh(dir.path(), &before));
    step_until(&mut h, 60, "live data despite the junk", |h| {
        let s = h.state().sampler().snapshot();
        s.remote.as_ref().is_some_and(|r| r.state == RemoteState::Live && r.invalid_lines >= 2)
            && s.gpus.iter().any(|g| g.util_gpu_pct.get().is_some())
    });
    let snap = h.state().sampler().snapshot();
    assert!(snap.inventory.gpus[0].name.contains("<img"), "shown as text, as sent");
    let doc = h.state_mut().build_report(&snap);
    let html = render(&doc, Format::Html);
    assert!(!html.contains("<img src=x"), "escaped in HTML");
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"), "the name is kept, escaped");
    let md = render(&doc, Format::Md);
    assert!(md.contains("unreadable line(s)"), "{md}");
}
