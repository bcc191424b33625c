//! Issue 33: what users send and servers say, attacked. Each test here failed before its fix:
//! a capture that copied private files, terminal escapes from imported files, Markdown structure
//! from a server's strings.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test reports a failure

use std::path::Path;

use assert_cmd::Command;

fn cli() -> Command {
    let mut c = Command::cargo_bin("gpu-doctor-cli").unwrap();
    c.env("GPU_DOCTOR_NVML_LIB", "/nonexistent/libnvidia-ml.so.1").env("GPU_DOCTOR_LANG", "en");
    c
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Every file under `dir`, with its bytes (an archive is gunzipped first).
fn all_bytes(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let md = std::fs::symlink_metadata(e.path()).unwrap();
            assert!(!md.file_type().is_symlink(), "a capture holds no links: {}", e.path().display());
            if md.is_dir() {
                stack.push(e.path());
            } else {
                out.push((e.path().display().to_string(), std::fs::read(e.path()).unwrap()));
            }
        }
    }
    out
}

/// Item 1: secrets planted in the working directory, a home and /root (with a link to a file
/// outside, and a `.condarc` that is a link to a secret) never reach the capture or the archive;
/// what the checks need (a torch build in a project environment) does, reduced; files are the
/// user's only; the manifest is printed and in the capture.
#[test]
fn a_capture_holds_no_private_file_of_the_user() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("root");
    write(&root.join("proc/modules"), "nvidia 1 0 - Live 0x0\n");
    write(&root.join("etc/os-release"), "ID=debian\nVERSION_ID=12\n");
    write(&root.join("home/alice/passwords.txt"), "SECRET-HOME\n");
    write(&root.join("home/alice/Documents/taxes-2026.txt"), "SECRET-DOC\n");
    write(&root.join("home/alice/.ssh/id_ed25519"), "SECRET-SSH\n");
    write(&root.join("home/alice/bank/statement.txt"), "SECRET-BANK\n");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("/etc/shadow", root.join("home/alice/notes")).unwrap();
        std::os::unix::fs::symlink(root.join("home/alice/passwords.txt"), root.join("home/alice/.condarc")).unwrap();
    }
    let torch = root.join("home/alice/proj/.venv/lib/python3.11/site-packages/torch/version.py");
    write(&torch, "__version__ = '2.1.0+cu121'\ndebug = False\ncuda = '12.1'\nSECRET_TOKEN = 'SECRET-TORCH'\n");
    write(&root.join("home/alice/.conda/environments.txt"), "/home/alice/proj/.venv\nSECRET-CONDA\n");
    write(&root.join("root/passwords.txt"), "SECRET-ROOT\n");
    write(&root.join("root/notes.txt"), "SECRET-ROOT-NOTES\n");
    write(&root.join("work/proj/id_rsa"), "-----BEGIN OPENSSH PRIVATE KEY----- SECRET-PWD\n");
    write(&root.join("work/proj/requirements.txt"), "SECRET-REQ\n");
    write(&root.join("work/proj/notes.txt"), "SECRET-NOTES\n");
    let cap = t.path().join("cap");
    let archive = t.path().join("cap.tar.gz");
    fn run<'a>(c: &'a mut Command, root: &Path) -> &'a mut Command {
        c.env("GPU_DOCTOR_SYSTEM_ROOT", root)
            .env("PWD", "/work/proj")
            .env_remove("CONDA_PREFIX")
            .env_remove("VIRTUAL_ENV")
            .env("PATH", "/usr/bin:/bin")
    }
    let out = run(cli().args(["capture", "--out"]).arg(&cap).arg("--archive").arg(&archive), &root).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.contains("MANIFEST") || printed.contains("everything this folder holds"), "{printed}");
    assert!(printed.contains("torch/version.py"), "the manifest names what was copied:\n{printed}");
    assert!(cap.join("MANIFEST.txt").is_file());

    let unpacked = t.path().join("unpacked");
    std::fs::create_dir(&unpacked).unwrap();
    let gz = flate2::read::GzDecoder::new(std::fs::File::open(&archive).unwrap());
    tar::Archive::new(gz).unpack(&unpacked).unwrap();
    for (path, bytes) in all_bytes(&cap).into_iter().chain(all_bytes(&unpacked)) {
        let text = String::from_utf8_lossy(&bytes);
        for secret in ["SECRET", "root:", "PRIVATE KEY"] {
            assert!(!text.contains(secret), "{path} holds {secret}:\n{text}");
        }
        for name in ["passwords.txt", "id_rsa", "Documents", "taxes", "requirements.txt", "notes", "statement", ".ssh"]
        {
            assert!(!path.contains(name) && !text.contains(name), "{path} names {name}:\n{text}");
        }
    }
    let kept =
        std::fs::read_to_string(cap.join("fs/home/alice/proj/.venv/lib/python3.11/site-packages/torch/version.py"))
            .expect("the torch build the checks judged is in the capture");
    assert!(kept.contains("__version__ = '2.1.0+cu121'") && kept.contains("cuda = '12.1'"), "{kept}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        for p in [cap.join("capture.json"), cap.join("MANIFEST.txt"), archive.clone()] {
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{} is readable by others ({mode:o})", p.display());
        }
        let mode = std::fs::metadata(cap.join("fs")).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }
    // The capture still judges what the live machine judged (the torch build found).
    let live = run(cli().args(["check", "--json"]), &root).output().unwrap();
    let from = run(cli().args(["check", "--json", "--from"]).arg(&cap), &root).output().unwrap();
    let verdicts = |b: &[u8]| {
        let v: serde_json::Value = serde_json::from_slice(b).unwrap();
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| format!("{}={}", c["id"].as_str().unwrap(), c["verdict"].as_str().unwrap()))
            .collect::<Vec<_>>()
    };
    assert_eq!(verdicts(&live.stdout), verdicts(&from.stdout));
    let from = String::from_utf8_lossy(&from.stdout);
    assert!(from.contains("2.1.0+cu121"), "CUDA-04 read the torch build from the capture");
}

/// The escape sequences planted in the tests below: OSC 52 writes the reader's clipboard, CSI 2J
/// clears the screen, OSC 0 sets the window title, and a bidirectional override reorders text.
const ESCAPES: &str = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x1b]0;pwned\x07\u{202e}";

fn assert_inert(what: &str, out: &[u8]) {
    let text = String::from_utf8_lossy(out);
    for c in ['\x1b', '\x07', '\u{9b}', '\u{202e}'] {
        assert!(!text.contains(c), "{what}: {c:?} reached the terminal:\n{text}");
    }
}

/// Item 4: escape sequences in a bug report's GPU name and kernel-log lines never reach the
/// terminal through `check --from` (text, and the hook's line), and the values are still shown
/// (made visible).
#[test]
fn escape_sequences_in_a_bug_report_never_reach_the_terminal() {
    let t = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/bug-reports/bekal-2026-2x3080-healthy/nvidia-bug-report.log.gz");
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(std::fs::File::open(src).unwrap()), &mut text)
        .unwrap();
    let text = text.replace("NVIDIA GeForce RTX 3080", &format!("NVIDIA GeForce {ESCAPES}RTX 3080")).replacen(
        "NVRM: loading NVIDIA UNIX",
        &format!(
            "NVRM: Xid (PCI:0000:01:00): 79, pid=1, {ESCAPES}GPU has fallen off the bus.\nNVRM: loading NVIDIA UNIX"
        ),
        1,
    );
    let log = t.path().join("nvidia-bug-report.log");
    std::fs::write(&log, text).unwrap();
    for args in [&["check", "--from"][..], &["check", "--format", "line", "--from"][..]] {
        let out = cli().args(args).arg(&log).output().unwrap();
        assert!(out.status.code().is_some());
        assert_inert(&format!("{args:?}"), &out.stdout);
        assert_inert(&format!("{args:?} (stderr)"), &out.stderr);
        if args.len() == 2 {
            assert!(String::from_utf8_lossy(&out.stdout).contains("\\u{1b}"), "the value is shown, made visible");
        }
    }
    // JSON keeps the value exactly (escaped by JSON).
    let out = cli().args(["check", "--json", "--from"]).arg(&log).output().unwrap();
    assert_inert("json", &out.stdout);
    assert!(String::from_utf8_lossy(&out.stdout).contains("\\u001b]52"));
}

/// Item 4: a recording whose GPU and process names hold escape sequences is replayed as text
/// without them acting on the terminal.
#[test]
fn escape_sequences_in_a_recording_never_reach_the_terminal() {
    let t = tempfile::tempdir().unwrap();
    let rec = t.path().join("a.gdrec");
    let out = cli()
        .args(["record", "--demo", "data-starved", "--duration", "2", "--interval", "0.5", "--out"])
        .arg(&rec)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let json_escapes = serde_json::to_string(ESCAPES).unwrap();
    let json_escapes = json_escapes.trim_matches('"');
    let text = std::fs::read_to_string(&rec)
        .unwrap()
        .replace("Simulated ", &format!("Simulated {json_escapes}"))
        .replace("(DEMO)", &format!("(DEMO){json_escapes}"))
        .replace("\"name\":\"python", &format!("\"name\":\"{json_escapes}python"));
    assert!(text.contains("\\u001b"), "the names were planted");
    let evil = t.path().join("evil.gdrec");
    std::fs::write(&evil, text).unwrap();
    for args in [&["replay"][..], &["replay", "--csv"][..]] {
        let out = cli().args(args).arg(&evil).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert_inert(&format!("{args:?}"), &out.stdout);
    }
}

/// Item 9: an archive made in a folder named like nvidia-smi's header (the name is in the
/// capture's PWD) is read as a capture, not as nvidia-smi text.
#[test]
fn a_capture_archive_is_a_capture_whatever_names_it_holds() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("==============NVSMI LOG==============");
    std::fs::create_dir(&dir).unwrap();
    let archive = dir.join("cap.tar.gz");
    let out = cli().current_dir(&dir).env("PWD", &dir).args(["capture", "--archive"]).arg(&archive).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = cli().args(["check", "--json", "--from"]).arg(&archive).output().unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report.get("imported").is_none_or(serde_json::Value::is_null), "read as an imported report: {report}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("not in this report"));
}

/// Item 12: whatever happens, `check --exit-codes` answers in its convention: a status that could
/// not be written (stdout on a full disk) is "could not check", never "drain the node" or
/// WARNING; a usage error is UNKNOWN for Nagios.
#[cfg(target_os = "linux")]
#[test]
fn exit_codes_follow_the_convention_on_every_outcome() {
    let full = || std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    for (style, unknown) in [("nagios", 3), ("slurm", 2), ("npd", 2), ("default", 1)] {
        for format in ["line", "text", "json"] {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_gpu-doctor-cli"))
                .env("GPU_DOCTOR_NVML_LIB", "/nonexistent/libnvidia-ml.so.1")
                .args(["check", "--quick", "--exit-codes", style, "--format", format])
                .stdout(full())
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(unknown), "{style} {format}: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
    let out = cli().args(["check", "--exit-codes", "nagios", "--bogus"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let out = cli().args(["check", "--exit-codes=slurm", "--bogus"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = cli().args(["check", "--bogus"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = cli().args(["check", "--help"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
}

fn healthy_log() -> String {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/bug-reports/bekal-2026-2x3080-healthy/nvidia-bug-report.log.gz");
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(std::fs::File::open(src).unwrap()), &mut text)
        .unwrap();
    text
}

fn check_json(file: &Path) -> (Option<i32>, serde_json::Value, String) {
    let out = cli().args(["check", "--json", "--from"]).arg(file).output().unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code(), v, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Item 10: a healthy log cut inside its lspci listing (a paste limit) is not "no GPU on the
/// bus"; the same log with old-Mac line ends (CR only) or Windows ones reads as the original;
/// a log holds no container markers, so the container check says "not in this report", never
/// PASS; a file of sections the checks do not read says so instead of "No failure found".
#[test]
fn truncated_or_odd_logs_are_evidence_of_nothing_they_do_not_hold() {
    let t = tempfile::tempdir().unwrap();
    let text = healthy_log();
    let whole = t.path().join("whole.log");
    std::fs::write(&whole, &text).unwrap();
    let (_, reference, _) = check_json(&whole);
    let root = reference["root_cause"].clone();
    let cont = reference["checks"].as_array().unwrap().iter().find(|c| c["id"] == "CONT-01").unwrap().clone();
    assert_eq!(cont["verdict"], "skipped", "{cont}");
    assert!(
        cont.to_string().contains("not in this report") || cont.to_string().contains("Not in this report"),
        "{cont}"
    );

    // Cut inside the lspci listing, before the NVIDIA functions.
    let at = text.find("/usr/bin/lspci -nnDvvvxxxx").unwrap();
    let at = at + text[at..].find("0000:00:01.0").unwrap();
    let cut = t.path().join("cut.log");
    std::fs::write(&cut, &text[..at]).unwrap();
    let (code, v, err) = check_json(&cut);
    assert!(code.is_some(), "{err}");
    let hw01 = v["checks"].as_array().unwrap().iter().find(|c| c["id"] == "HW-01").unwrap();
    assert_ne!(hw01["verdict"], "fail", "a cut listing proves no GPU missing: {hw01}");
    assert_ne!(v["root_cause"], "HW-01");
    let header = v["imported"].to_string();
    assert!(header.contains("lspci -nnDvvvxxxx"), "the header names the cut section: {header}");

    for (name, ends) in [("cr.log", "\r"), ("crlf.log", "\r\n")] {
        let f = t.path().join(name);
        std::fs::write(&f, text.replace('\n', ends)).unwrap();
        let (_, v, err) = check_json(&f);
        assert_eq!(v["root_cause"], root, "{name}: {err}");
        let verdicts = |r: &serde_json::Value| {
            r["checks"].as_array().map(|c| c.iter().map(|c| c["verdict"].clone()).collect::<Vec<_>>())
        };
        assert_eq!(verdicts(&v), verdicts(&reference), "{name}");
    }

    // A "log" of nothing the checks read: said, exit 1, not "No failure found".
    let empty = t.path().join("empty.log");
    std::fs::write(&empty, text.lines().take(20).collect::<Vec<_>>().join("\n") + "\n").unwrap();
    let out = cli().args(["check", "--from"]).arg(&empty).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("none of the sections the checks read"));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("No failure found"));
}

/// Item 5: past its caps an import reads no more and says what it left (the time and memory at
/// the caps are measured by benches/import.rs): 100 000 lspci functions, lost GPUs and GPU
/// blocks, a 200 000-component section path.
#[test]
fn an_import_past_its_caps_says_what_it_left() {
    let t = tempfile::tempdir().unwrap();
    let head = "Start of NVIDIA bug report log file.\nnvidia-bug-report.sh Version: 1\n";
    let sep = format!("{}\n", "_".repeat(44));
    let mut log = format!(
        "{head}{sep}*** /proc/driver/nvidia/version\nNVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15\n{sep}"
    );
    log.push_str("/usr/bin/lspci -d \"10de:*\" -v -xxx\n\n");
    for i in 0..100_000u32 {
        log.push_str(&format!(
            "{:02x}:{:02x}.{} 3D controller: NVIDIA Corporation Device 2330\n\tKernel driver in use: nvidia\n\n",
            (i >> 8) & 0xff,
            (i >> 3) & 0x1f,
            i & 7
        ));
    }
    log.push_str(&format!("{sep}*** /proc{}\nx\n{sep}", "/a".repeat(200_000)));
    log.push_str("/usr/bin/nvidia-smi --query\n\n==============NVSMI LOG==============\n");
    for i in 0..100_000u32 {
        log.push_str(&format!("GPU {i:08X}:01:00.0\n    Product Name : NVIDIA H100\n"));
        log.push_str(&format!("Unable to determine the device handle for GPU {i:08X}:02:00.0: Unknown Error\n"));
    }
    log.push_str(&format!("{sep}End of NVIDIA bug report log file.\n"));
    let f = t.path().join("big.log");
    std::fs::write(&f, log).unwrap();
    let out = cli().args(["check", "--from"]).arg(&f).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let machine = text.lines().find(|l| l.starts_with("Machine:")).unwrap();
    assert!(machine.len() < 300, "the GPUs are summarised: {machine}");
    let past =
        text.lines().find(|l| l.starts_with("Not read (past gpu-doctor's limits)")).unwrap_or_else(|| panic!("{text}"));
    for what in
        ["PCI functions past the first 256", "GPUs in nvidia-smi's output past the first 64", "longer than 512 bytes"]
    {
        assert!(past.contains(what), "{past}");
    }
}

/// Item 11: `check --from big.tar.gz` interrupted by SIGINT or SIGTERM while it unpacks leaves no
/// temporary directory behind, and ends as the shell expects (128 + the signal).
#[cfg(target_os = "linux")]
#[test]
fn an_interrupted_import_leaves_no_temporary_directory() {
    let t = tempfile::tempdir().unwrap();
    let cap = t.path().join("cap");
    let out = cli().args(["capture", "--out"]).arg(&cap).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // 300 MB of zeros: a small archive that takes a while to unpack.
    let f = std::fs::File::create(cap.join("fs/big.bin")).unwrap();
    f.set_len(300 << 20).unwrap();
    let archive = t.path().join("big.tar.gz");
    let status =
        std::process::Command::new("tar").arg("-czf").arg(&archive).arg("-C").arg(&cap).arg(".").status().unwrap();
    assert!(status.success());
    for (signal, code) in [("-INT", 130), ("-TERM", 143)] {
        let tmp = t.path().join(format!("tmp{signal}"));
        std::fs::create_dir(&tmp).unwrap();
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_gpu-doctor-cli"))
            .env("TMPDIR", &tmp)
            .args(["check", "--from"])
            .arg(&archive)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Wait until it is unpacking (its scratch directory holds data), then interrupt.
        let started = std::time::Instant::now();
        let mut unpacking = false;
        while started.elapsed() < std::time::Duration::from_secs(20) {
            let size: u64 = walk(&tmp);
            if size > 1 << 20 {
                unpacking = true;
                break;
            }
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        if !unpacking {
            let _ = child.kill();
            crate::common::skip(
                "an interrupted unpack",
                &format!("the archive was unpacked before it could be interrupted by {signal}"),
            );
            continue;
        }
        let _ = std::process::Command::new("kill").arg(signal).arg(child.id().to_string()).status();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(code), "{signal}: {status:?}");
        let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().filter_map(Result::ok).map(|e| e.path()).collect();
        assert!(left.is_empty(), "{signal} left {left:?}");
    }
}

/// Issue 53, item 17: signals at any moment of an unpack or a pack (not only in the middle of a
/// large file) leave no scratch folder and never a partial archive under the name asked for:
/// the removal waits for the writing step under way. Twelve moments each, spread over the work.
#[cfg(target_os = "linux")]
#[test]
fn signals_at_any_moment_leave_no_scratch_and_no_partial_archive() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let t = tempfile::tempdir().unwrap();
    let cap = t.path().join("cap");
    let out = cli().args(["capture", "--out"]).arg(&cap).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // Many folders and files (each entry recreates its folders): 1,500 files of 40 KB.
    for i in 0..1500u32 {
        let d = cap.join(format!("fs/many/d{}/e{}", i % 50, i % 7));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(format!("f{i}")), vec![b'x'; 40 << 10]).unwrap();
    }
    let archive = t.path().join("many.tar.gz");
    let ok = Command::new("tar").arg("-czf").arg(&archive).arg("-C").arg(&cap).arg(".").status().unwrap();
    assert!(ok.success());
    let bin = env!("CARGO_BIN_EXE_gpu-doctor-cli");
    // How long a whole unpack takes here, to spread the signals over it.
    let t0 = Instant::now();
    let whole = Command::new(bin).args(["check", "--from"]).arg(&archive).stdout(Stdio::null()).status().unwrap();
    assert!(whole.code().is_some());
    let span = t0.elapsed().max(Duration::from_millis(200));
    for k in 0..12u32 {
        let tmp = t.path().join(format!("unpack-tmp{k}"));
        std::fs::create_dir(&tmp).unwrap();
        let mut child = Command::new(bin)
            .env("TMPDIR", &tmp)
            .args(["check", "--from"])
            .arg(&archive)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(span * k / 12);
        let signal = if k % 2 == 0 { "-INT" } else { "-TERM" };
        let _ = Command::new("kill").arg(signal).arg(child.id().to_string()).status();
        child.wait().unwrap();
        let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().filter_map(Result::ok).map(|e| e.path()).collect();
        assert!(left.is_empty(), "check --from, {signal} after {:?}: left {left:?}", span * k / 12);
    }
    // capture --archive: the same, and the archive's name holds a whole archive or nothing.
    let t0 = Instant::now();
    let probe = t.path().join("probe.tar.gz");
    let whole = cli().args(["capture", "--archive"]).arg(&probe).output().unwrap();
    assert_eq!(whole.status.code(), Some(0), "{}", String::from_utf8_lossy(&whole.stderr));
    let span = t0.elapsed().max(Duration::from_millis(200));
    for k in 0..12u32 {
        let tmp = t.path().join(format!("pack-tmp{k}"));
        std::fs::create_dir(&tmp).unwrap();
        let file = t.path().join(format!("out{k}.tar.gz"));
        let mut child = Command::new(bin)
            .env("TMPDIR", &tmp)
            .args(["capture", "--archive"])
            .arg(&file)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(span * k / 12);
        let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
        child.wait().unwrap();
        let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().filter_map(Result::ok).map(|e| e.path()).collect();
        assert!(left.is_empty(), "capture --archive, TERM after {:?}: left {left:?}", span * k / 12);
        let partials: Vec<_> = std::fs::read_dir(t.path())
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().contains(".partial-"))
            .map(|e| e.path())
            .collect();
        assert!(partials.is_empty(), "left {partials:?}");
        // (A signal after the archive was named leaves it: whole.)
        if file.exists() {
            let listed = Command::new("tar").arg("-tzf").arg(&file).stdout(Stdio::null()).status().unwrap();
            assert!(listed.success(), "{} is not a whole archive", file.display());
        }
    }
}

/// Bytes of every file under `dir`.
#[cfg(target_os = "linux")]
fn walk(dir: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(dir) else { return 0 };
    rd.filter_map(Result::ok)
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => walk(&e.path()),
            Ok(_) => e.metadata().map(|m| m.len()).unwrap_or(0),
            Err(_) => 0,
        })
        .sum()
}

/// Item 13: in a GB18030 (GBK) Chinese locale, what a terminal shows is in its character set, not
/// UTF-8 mojibake; a pipe still gets UTF-8. Run on a pseudo-terminal (`script`); skipped where
/// `script` or `iconv` is missing.
#[cfg(target_os = "linux")]
#[test]
fn a_gbk_terminal_gets_its_own_character_set() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/no-driver");
    let args = format!("check --from '{}'", fixture.display());
    let dir = std::env::temp_dir();
    let (Some(gb), Some(utf8)) = (on_tty(&args, "zh_CN.GB18030", &dir), on_tty(&args, "zh_CN.UTF-8", &dir)) else {
        crate::common::skip("GB18030 terminal output", "no script(1) here (util-linux)");
        return;
    };
    let Some(decoded) = from_gb18030(&gb.stdout) else {
        crate::common::skip("GB18030 terminal output", "no iconv(1) here (libc-bin)");
        return;
    };
    assert!(String::from_utf8(gb.stdout.clone()).is_err(), "GB18030 bytes, not UTF-8");
    let clean = |b: &[u8]| String::from_utf8_lossy(b).replace('\r', "");
    assert_eq!(clean(&decoded.stdout), clean(&utf8.stdout));
    assert!(clean(&utf8.stdout).contains("根因"), "{}", clean(&utf8.stdout));
    // A pipe gets UTF-8 in any locale.
    let piped = cli()
        .env_remove("GPU_DOCTOR_LANG")
        .env("LANG", "zh_CN.GB18030")
        .args(["check", "--from"])
        .arg(&fixture)
        .output()
        .unwrap();
    assert!(String::from_utf8(piped.stdout).is_ok());
}

/// `gpu-doctor-cli ARGS` on a pseudo-terminal (`script`) in locale `lang`, run in `dir`; None
/// where script(1) is missing.
#[cfg(target_os = "linux")]
fn on_tty(args: &str, lang: &str, dir: &Path) -> Option<std::process::Output> {
    let exe = env!("CARGO_BIN_EXE_gpu-doctor-cli");
    std::process::Command::new("script")
        .args(["-qc", &format!("'{exe}' {args}"), "/dev/null"])
        .current_dir(dir)
        .env("LANG", lang)
        .env_remove("LC_ALL")
        .env_remove("LC_CTYPE")
        .env_remove("GPU_DOCTOR_LANG")
        .output()
        .ok()
}

/// `bytes` decoded from GB18030 by iconv(1); None where iconv is missing.
#[cfg(target_os = "linux")]
fn from_gb18030(bytes: &[u8]) -> Option<std::process::Output> {
    let mut iconv = std::process::Command::new("iconv")
        .args(["-f", "GB18030", "-t", "UTF-8"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    std::io::Write::write_all(&mut iconv.stdin.take()?, bytes).ok()?;
    iconv.wait_with_output().ok()
}

/// Issue 53, item 19: on a GB18030 terminal, tune's progress lines (stderr) are in the terminal's
/// character set like its table: the whole screen decodes as GB18030, none of it is UTF-8.
#[cfg(target_os = "linux")]
#[test]
fn tune_progress_lines_on_a_gbk_terminal_are_in_its_character_set() {
    let t = tempfile::tempdir().unwrap();
    let args = "tune --demo idle --max-trials 1 --trial-timeout 5 --journal t-13 -- true {batch}";
    let Some(gb) = on_tty(args, "zh_CN.GB18030", t.path()) else {
        crate::common::skip("GB18030 terminal output", "no script(1) here (util-linux)");
        return;
    };
    let Some(decoded) = from_gb18030(&gb.stdout) else {
        crate::common::skip("GB18030 terminal output", "no iconv(1) here (libc-bin)");
        return;
    };
    assert!(decoded.status.success(), "not all GB18030");
    let text = String::from_utf8_lossy(&decoded.stdout);
    // The progress line (stderr) and the table (stdout), both readable after decoding.
    assert!(text.contains("试验 1") && text.contains("调优记录"), "{text}");
    assert!(String::from_utf8(gb.stdout.clone()).is_err(), "UTF-8 on a GB18030 terminal: {text}");
}

/// Item 13: small but misleading answers, each now clear and at once.
#[cfg(target_os = "linux")]
#[test]
fn small_misleading_answers_are_clear() {
    let t = tempfile::tempdir().unwrap();
    let text = |o: &std::process::Output| {
        format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
    };
    // A FIFO as --cuda-lib is refused at once, as --nvml-lib is, not "the driver or the GPU hung".
    let fifo = t.path().join("libcuda.so.1");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let started = std::time::Instant::now();
    let out = cli().args(["smoke", "--cuda-lib"]).arg(&fifo).output().unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--cuda-lib") && text(&out).contains("not a regular file (a FIFO)"), "{}", text(&out));
    // A calibration that cannot be written names where.
    let file = t.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let out = cli()
        .env("XDG_CONFIG_HOME", file.join("cfg"))
        .args(["vram", "--preset", "Llama-3.1-8B", "--mode", "inference", "--save-calibration", "17.5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains(&file.display().to_string()), "{}", text(&out));
    // A negative size in config.json is wrong, not missing.
    let cfg = t.path().join("config.json");
    std::fs::write(
        &cfg,
        r#"{"num_hidden_layers": 32, "hidden_size": -4096, "num_attention_heads": 32, "vocab_size": 32000}"#,
    )
    .unwrap();
    let out = cli().args(["vram", "--config"]).arg(&cfg).output().unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out).contains("hidden_size") && text(&out).contains("-4096") && !text(&out).contains("missing"),
        "{}",
        text(&out)
    );
    // A presets file's mistakes in plain words, with the file and the place.
    let presets = t.path().join("models.ron");
    std::fs::write(&presets, "[(name: \"x\", layers: 2)]").unwrap();
    let out = cli().args(["vram", "--list-presets", "--presets-file"]).arg(&presets).output().unwrap();
    let said = text(&out);
    assert!(
        said.contains("models.ron") && said.contains("line 1, column") && said.contains("needs `hidden`"),
        "{said}"
    );
    assert!(!said.contains("Unexpected") && !said.contains("Arch"), "{said}");
    // focus --demo labels its simulated GPU figures, in text and JSON.
    let pid = std::process::id().to_string();
    let out = cli()
        .args(["focus", "--pid", &pid, "--watch", "0.5", "--interval", "0.25", "--demo", "idle"])
        .output()
        .unwrap();
    assert!(text(&out).starts_with("DEMO DATA"), "{}", text(&out));
    let out = cli()
        .args(["focus", "--pid", &pid, "--watch", "0.5", "--interval", "0.25", "--demo", "idle", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["demo"]["text"].as_str().is_some_and(|d| d.contains("DEMO")), "{v}");
}
