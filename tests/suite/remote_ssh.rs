//! Issue 21, a server over SSH, against a real OpenSSH server: Debian's `sshd` started here on
//! 127.0.0.1 with a generated host key and user key, on a free port, in a temporary directory,
//! with this build's `gpu-doctor-cli` (over the fake NVML's two GPUs) on the session's PATH. The
//! app's SSH source ([`RemoteLink`]) connects through the system `ssh` client.
//!
//! Without `sshd` and `ssh` the test says so and passes, unless `GPU_DOCTOR_REQUIRE_FLEET=1`
//! (set by `.ci/run`, which installs them).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test reports a failure

use crate::common;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Fake, fake_lib_dir, scenario};
use gpu_doctor::diagnose::input::{CheckSource, remote_checklist};
use gpu_doctor::telemetry::remote::{RemoteErrorKind, RemoteLink, RemoteState, SshSetup, Target};
use gpu_doctor::telemetry::sampler::Sampler;

struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn sh(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn keygen(path: &Path) {
    sh(Command::new("ssh-keygen").args(["-q", "-t", "ed25519", "-N", "", "-C", "gpu-doctor-test", "-f"]).arg(path));
}

fn user_name() -> String {
    let out = Command::new("id").arg("-un").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A running sshd and the client setup that reaches it.
struct Server {
    _sshd: Kill,
    dir: tempfile::TempDir,
    port: u16,
}

impl Server {
    fn start() -> Option<Server> {
        let sshd = PathBuf::from("/usr/sbin/sshd");
        if !sshd.exists() || Command::new("ssh").arg("-V").output().is_err() {
            assert!(
                std::env::var_os("GPU_DOCTOR_REQUIRE_FLEET").is_none(),
                "GPU_DOCTOR_REQUIRE_FLEET is set but sshd or ssh is missing (apt-get install openssh-server openssh-client)"
            );
            common::skip("a_server_over_real_ssh", "no sshd/ssh here (apt-get install openssh-server openssh-client)");
            return None;
        }
        // sshd wants its privilege-separation directory (made by its package's service, not here).
        let _ = std::fs::create_dir_all("/run/sshd");
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        keygen(&d.join("host_key"));
        keygen(&d.join("user_key"));
        keygen(&d.join("wrong_key"));
        std::fs::copy(d.join("user_key.pub"), d.join("authorized_keys")).unwrap();
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let bin = PathBuf::from(env!("CARGO_BIN_EXE_gpu-doctor-cli"));
        let bin_dir = bin.parent().unwrap();
        std::fs::write(
            d.join("sshd_config"),
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n\
                 AuthorizedKeysFile {d}/authorized_keys\nStrictModes no\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nUsePAM no\nPermitRootLogin prohibit-password\n\
                 SetEnv PATH={bin}:/usr/bin:/bin LD_LIBRARY_PATH={lib} FAKE_NVML_SCENARIO={scenario}\n",
                d = d.display(),
                bin = bin_dir.display(),
                lib = fake_lib_dir(Fake::Current).display(),
                scenario = scenario("healthy").display(),
            ),
        )
        .unwrap();
        let host_pub = std::fs::read_to_string(d.join("host_key.pub")).unwrap();
        let mut parts = host_pub.split_whitespace();
        let known = format!("[127.0.0.1]:{port} {} {}\n", parts.next().unwrap(), parts.next().unwrap());
        std::fs::write(d.join("known_hosts"), known).unwrap();
        let child = Command::new(&sshd)
            .args(["-D", "-e", "-f"])
            .arg(d.join("sshd_config"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(d.join("sshd.log")).unwrap())
            .spawn()
            .unwrap();
        let server = Server { _sshd: Kill(child), dir, port };
        let until = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < until, "sshd did not start: {}", server.log());
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(server)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }

    /// An ssh wrapper using `key` and this server's known host key, with no agent.
    fn client(&self, key: &str) -> SshSetup {
        let d = self.dir.path();
        let config = d.join(format!("ssh_config_{key}"));
        std::fs::write(
            &config,
            format!(
                "Host *\n  IdentityFile {d}/{key}\n  IdentitiesOnly yes\n  UserKnownHostsFile {d}/known_hosts\n  StrictHostKeyChecking yes\n  LogLevel ERROR\n",
                d = d.display()
            ),
        )
        .unwrap();
        let wrapper = d.join(format!("ssh-{key}"));
        std::fs::write(&wrapper, format!("#!/bin/sh\nunset SSH_AUTH_SOCK\nexec ssh -F {} \"$@\"\n", config.display()))
            .unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
        SshSetup { program: wrapper, ..SshSetup::default() }
    }

    fn target(&self) -> Target {
        format!("{}@127.0.0.1:{}", user_name(), self.port).parse().unwrap()
    }
}

/// Polls until `f` holds, or panics with `what` after `secs`.
fn wait_until(secs: u64, what: &str, mut f: impl FnMut() -> bool, log: impl Fn() -> String) {
    let until = Instant::now() + Duration::from_secs(secs);
    while !f() {
        assert!(Instant::now() < until, "{what} within {secs} s\n{}", log());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Signals the server's `monitor --json` process (SIGKILL, SIGSTOP, SIGCONT).
fn signal_remote_monitor(sig: &str) {
    let _ = Command::new("pkill").args([&format!("-{sig}"), "-f", "gpu-doctor-cli monitor --json --interval"]).status();
}

#[cfg(target_os = "linux")]
#[test]
fn a_server_over_real_ssh_streams_and_reports_stops_and_wrong_keys() {
    let Some(server) = Server::start() else { return };
    let target = server.target();

    // Samples flow: the sampler reads the server's two (fake) GPUs and host, labelled REMOTE.
    let link = RemoteLink::start(target.clone(), server.client("user_key"), Duration::from_millis(500)).unwrap();
    let (gpu, host) = link.sources();
    let sampler = Sampler::start(gpu, host, Duration::from_millis(500)).unwrap();
    let log = || format!("{:?}\nsshd: {}", link.info(), server.log());
    wait_until(
        60,
        "samples from the server",
        || {
            let s = sampler.snapshot();
            // (The link marks itself live on its next poll, up to 100 ms after the first line: on
            // a loaded machine a snapshot can fall in between.)
            s.gpus.len() == 2
                && s.gpus.iter().all(|g| g.util_gpu_pct.get().is_some())
                && s.host.as_ref().is_some_and(|h| h.cpu_pct.get().is_some())
                && s.remote.as_ref().is_some_and(|r| r.line().en().contains(": live"))
        },
        log,
    );
    let snap = sampler.snapshot();
    assert_eq!(snap.inventory.gpus.len(), 2);
    assert_eq!(snap.inventory.gpus[0].name, "NVIDIA Fake Test GPU");
    let remote = snap.remote.clone().expect("the snapshot names the server");
    assert_eq!(remote.host, target.to_string());
    assert!(remote.line().en().starts_with(&format!("REMOTE {target}: live")), "{}", remote.line().en());
    assert_eq!(remote.version.as_deref(), Some(env!("CARGO_PKG_VERSION")));
    assert_eq!((remote.invalid_lines, remote.dropped_lines), (0, 0));
    assert!(remote.unread.is_empty(), "{:?}", remote.unread);
    assert!(matches!(snap.source, gpu_doctor::telemetry::source::SourceStatus::Nvml { .. }), "{:?}", snap.source);

    // A stream that stops sending: "no data from host for N s" after 5 s, and live again after.
    signal_remote_monitor("STOP");
    wait_until(20, "the no-data state", || matches!(link.info().state, RemoteState::NoData { secs } if secs >= 5), log);
    assert!(link.info().line().en().contains("no data from host for"), "{}", link.info().line().en());
    wait_until(
        5,
        "stale values no longer shown as current",
        || sampler.snapshot().gpus.iter().all(|g| g.util_gpu_pct.get().is_none()),
        log,
    );
    signal_remote_monitor("CONT");
    wait_until(20, "live again", || link.info().state == RemoteState::Live, log);

    // A killed stream is reported, then the link reconnects by itself.
    signal_remote_monitor("KILL");
    let mut saw_retry = None;
    wait_until(
        30,
        "the stopped stream reported",
        || {
            if let RemoteState::Retrying { error, .. } = link.info().state {
                saw_retry = Some(error);
            }
            saw_retry.is_some()
        },
        log,
    );
    let e = saw_retry.unwrap();
    assert_eq!(e.kind, RemoteErrorKind::StreamEnded, "{e:?}");
    wait_until(
        60,
        "reconnected",
        || {
            link.info().state == RemoteState::Live
                && sampler.snapshot().gpus.iter().all(|g| g.util_gpu_pct.get().is_some())
        },
        log,
    );

    // The checklist runs on the server and comes back as a report.
    let report = remote_checklist(link.setup(), &target).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(report.get("DRV-HUNG").is_some(), "{report:?}");
    let via_source = CheckSource::Remote(target.clone(), server.client("user_key")).run(None).unwrap();
    assert_eq!(via_source.checks.len(), report.checks.len());
    link.disconnect();
    wait_until(10, "closed", || link.info().state == RemoteState::Closed, log);

    // A key the server does not accept: the authentication message, with how to set up a key.
    let wrong = RemoteLink::start(target.clone(), server.client("wrong_key"), Duration::from_secs(1)).unwrap();
    let mut failed = None;
    wait_until(
        40,
        "the authentication failure",
        || {
            if let RemoteState::Failed { error } = wrong.info().state {
                failed = Some(error);
            }
            failed.is_some()
        },
        || format!("{:?}", wrong.info()),
    );
    let e = failed.unwrap();
    assert_eq!(e.kind, RemoteErrorKind::Auth, "{e:?}");
    assert!(
        e.message.en().contains("password or a key passphrase") && e.next_step.en().contains("ssh-copy-id"),
        "{e:?}"
    );
    wrong.disconnect();

    // gpu-doctor-cli missing on the server.
    let missing = SshSetup { remote_cli: "gpu-doctor-cli-not-here".into(), ..server.client("user_key") };
    let e = remote_checklist(&missing, &target).unwrap_err();
    assert_eq!(e.kind, RemoteErrorKind::NotInstalled, "{e:?}");
    assert!(e.next_step.en().contains("install.sh --user"), "{e:?}");

    // No ssh program at all.
    let none = SshSetup { program: "/nonexistent/ssh".into(), ..SshSetup::default() };
    assert_eq!(remote_checklist(&none, &target).unwrap_err().kind, RemoteErrorKind::NoSsh);
}
