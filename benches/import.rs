//! Issue 33, item 5: `check --from` on hostile bug reports of every section kind, in size ladders
//! up to the importer's text cap (64 MiB): wall time and peak memory of the real binary, per
//! kind and size. Asserts what the caps promise: time grows linearly (the largest input takes
//! less than 8 times as long as a quarter of it: quadratic work would take 16 times), and memory
//! stays under 1 GiB at the cap. Run with `cargo bench --bench import`; prints a table.
#![allow(missing_docs)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark stops at the first failure

#[cfg(target_os = "linux")]
fn main() {
    use std::fmt::Write as _;
    use std::time::Instant;

    const CAP: usize = 60 << 20;
    let sep = format!("{}\n", "_".repeat(44));
    let head = format!(
        "{sep}Start of NVIDIA bug report log file.\nnvidia-bug-report.sh Version: 1\nuname: Linux h 6.8.0 x\n{sep}*** /proc/driver/nvidia/version\nNVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15\n{sep}"
    );
    // Each kind: the section's title, then a line made from a counter, repeated to the size.
    type Line = fn(usize) -> String;
    let kinds: [(&str, String, Line); 8] = [
        ("Xid lines (scanned logs)", "Scanning kernel log files for NVIDIA kernel messages:\n".into(), |i| {
            format!(
                "Jan 25 10:31:17 host kernel: [ {i}.0] NVRM: Xid (PCI:0000:01:00): 13, pid={i}, Graphics Exception {i}\n"
            )
        }),
        ("kernel lines (dmesg)", "/bin/dmesg\n\n".into(), |i| {
            format!("[ {i}.5] NVRM: GPU at PCI:0000:01:00: GPU-{i:08x} error {i}\n")
        }),
        ("lost GPUs (nvidia-smi)", "/usr/bin/nvidia-smi --query\n\n".into(), |i| {
            format!("Unable to determine the device handle for GPU {i:08X}:01:00.0: Unknown Error\n")
        }),
        (
            "GPU blocks (nvidia-smi)",
            "/usr/bin/nvidia-smi --query\n\n==============NVSMI LOG==============\n".into(),
            |i| format!("GPU {i:x}:0\n"),
        ),
        ("PCI functions (lspci)", "/usr/bin/lspci -nnDvvvxxxx\n\n".into(), |i| {
            format!(
                "{:04x}:{:02x}:{:02x}.{} 3D controller [0302]: NVIDIA Corporation Device [10de:2330]\n\tKernel driver in use: nvidia\n\n",
                i >> 16,
                (i >> 8) & 0xff,
                (i >> 3) & 0x1f,
                i & 7
            )
        }),
        ("file sections (deep paths)", String::new(), |i| {
            format!("*** /sys/{i}{}/x\nvalue\n{}\n", "/d".repeat(20), "_".repeat(44))
        }),
        ("one section title of 60 MiB", "*** /proc".into(), |_| "/a".repeat(512)),
        ("one line without an end", String::new(), |_| "x".repeat(4096)),
    ];
    let exe = env!("CARGO_BIN_EXE_gpu-doctor-cli");
    let dir = tempfile::tempdir().unwrap();
    let mut table = String::new();
    let _ = writeln!(table, "{:<30} {:>9} {:>9} {:>10}", "kind", "MiB", "seconds", "peak MiB");
    let mut failures = Vec::new();
    for (name, title, line) in kinds {
        let mut times = Vec::new();
        for size in [CAP / 16, CAP / 4, CAP] {
            let mut log = head.clone();
            log.push_str(&title);
            let mut i = 0;
            while log.len() < size {
                log.push_str(&line(i));
                i += 1;
            }
            log.push_str(&format!("\n{sep}End of NVIDIA bug report log file.\n"));
            let file = dir.path().join("log");
            std::fs::write(&file, &log).unwrap();
            drop(log);
            let started = Instant::now();
            // Reaped by wait4 below, which also gives its peak memory.
            #[allow(clippy::zombie_processes)]
            let child = std::process::Command::new(exe)
                .args(["check", "--from"])
                .arg(&file)
                .env("GPU_DOCTOR_NVML_LIB", "/nonexistent")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            // SAFETY: rusage is plain integers and timevals, for which all-zero bytes are valid.
            let (mut status, mut usage): (libc::c_int, libc::rusage) = (0, unsafe { std::mem::zeroed() });
            // SAFETY: waits for our own child; `status` and `usage` are valid out-pointers.
            let r = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
            assert!(r > 0, "wait4 failed");
            let secs = started.elapsed().as_secs_f64();
            let peak_mib = usage.ru_maxrss as f64 / 1024.0;
            let _ = writeln!(table, "{name:<30} {:>9.1} {secs:>9.2} {peak_mib:>10.1}", size as f64 / (1 << 20) as f64);
            times.push(secs);
            if size == CAP && peak_mib > 1024.0 {
                failures.push(format!("{name}: {peak_mib:.0} MiB at the cap"));
            }
        }
        // Linear: 4× the input, well under 8× the time (with a floor for times near zero).
        if times[2] > 0.5 && times[2] > 8.0 * times[1] {
            failures.push(format!("{name}: {:.2} s at the cap, {:.2} s at a quarter: not linear", times[2], times[1]));
        }
    }
    println!("{table}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[cfg(not(target_os = "linux"))]
fn main() {
    println!("benches/import.rs measures with wait4: Linux only");
}
