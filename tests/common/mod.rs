//! Test helpers shared by the integration tests: the test-only fake `libnvidia-ml.so.1`
//! (tests/fake_nvml/fake_nvml.c), compiled once per test binary with the system C compiler.
#![allow(dead_code)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test reports a failure

pub mod english;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// Which fake library to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fake {
    /// Exports every entry point gpu-doctor uses.
    Current,
    /// Lacks the newer symbols, like an old driver's library.
    OldDriver,
}

static BUILD: Mutex<()> = Mutex::new(());

/// Says that a test did not run here and why, in the one form a CI log can be searched for
/// (`SKIP: `): a test that cannot run on this machine returns after this, never silently.
pub fn skip(test: &str, why: &str) {
    eprintln!("SKIP: {test}: {why}");
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Path of a checked-in scenario file, e.g. `scenario("hung-call")`.
pub fn scenario(name: &str) -> PathBuf {
    repo().join("tests/fake_nvml/scenarios").join(format!("{name}.scenario"))
}

/// Whether `lib` is newer than its C source and the shared platform header.
fn built_after_sources(lib: &Path, src: &Path) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let header = repo().join("tests/fake_platform.h");
    match (modified(lib), modified(src), modified(&header)) {
        (Some(l), Some(s), Some(h)) => l >= s && l >= h,
        _ => false,
    }
}

/// Builds (once) and returns the directory holding the fake `libnvidia-ml.so.1`.
pub fn fake_lib_dir(kind: Fake) -> PathBuf {
    let _one = BUILD.lock().unwrap_or_else(|p| p.into_inner());
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(match kind {
        Fake::Current => "fake-nvml",
        Fake::OldDriver => "fake-nvml-old",
    });
    let lib = dir.join("libnvidia-ml.so.1");
    let src = repo().join("tests/fake_nvml/fake_nvml.c");
    if built_after_sources(&lib, &src) {
        return dir;
    }
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    let tmp = dir.join(format!("libnvidia-ml.so.1.{}", std::process::id()));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let mut cmd = Command::new(&cc);
    cmd.args(["-shared", "-fPIC", "-O2", "-Wall", "-fvisibility=hidden", "-o"]).arg(&tmp).arg(&src).arg("-lpthread");
    if kind == Fake::OldDriver {
        cmd.arg("-DFAKE_OLD_DRIVER");
    }
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run the C compiler '{cc}' to build the fake NVML: {e}"));
    assert!(out.status.success(), "building the fake NVML failed:\n{}", String::from_utf8_lossy(&out.stderr));
    std::fs::rename(&tmp, &lib).unwrap_or_else(|e| panic!("rename: {e}"));
    dir
}

/// A fresh directory holding a private copy of the fake library and a `fake-nvml.scenario`
/// with `scenario_text`: each test process or in-process test gets its own library instance
/// (a distinct file is loaded separately), with its own scenario.
pub fn private_fake(kind: Fake, scenario_text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("libnvidia-ml.so.1");
    std::fs::copy(fake_lib_dir(kind).join("libnvidia-ml.so.1"), &lib).unwrap();
    std::fs::write(dir.path().join("fake-nvml.scenario"), scenario_text).unwrap();
    (dir, lib)
}

/// The text of a checked-in scenario.
pub fn scenario_text(name: &str) -> String {
    std::fs::read_to_string(scenario(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

static BUILD_CUDA: Mutex<()> = Mutex::new(());

/// Builds (once) and returns the test-only fake CUDA driver library `libcuda.so.1`
/// (tests/fake_cuda/fake_cuda.c); `old` builds one lacking a newer symbol.
pub fn fake_cuda_lib(old: bool) -> PathBuf {
    let _one = BUILD_CUDA.lock().unwrap_or_else(|p| p.into_inner());
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(if old { "fake-cuda-old" } else { "fake-cuda" });
    let lib = dir.join("libcuda.so.1");
    let src = repo().join("tests/fake_cuda/fake_cuda.c");
    if built_after_sources(&lib, &src) {
        return lib;
    }
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    let tmp = dir.join(format!("libcuda.so.1.{}", std::process::id()));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let mut cmd = Command::new(&cc);
    cmd.args(["-shared", "-fPIC", "-O2", "-Wall", "-fvisibility=hidden", "-Wl,-soname,libcuda.so.1", "-o"])
        .arg(&tmp)
        .arg(&src);
    if old {
        cmd.arg("-DFAKE_OLD_DRIVER");
    }
    let out =
        cmd.output().unwrap_or_else(|e| panic!("cannot run the C compiler '{cc}' to build the fake libcuda: {e}"));
    assert!(out.status.success(), "building the fake libcuda failed:\n{}", String::from_utf8_lossy(&out.stderr));
    std::fs::rename(&tmp, &lib).unwrap_or_else(|e| panic!("rename: {e}"));
    lib
}

/// A fresh directory (named `sub`, e.g. "lib" or "stubs") holding a private copy of the fake
/// libcuda (and a `libcuda.so` link to it) and a `fake-cuda.scenario` with `scenario_text`.
pub fn private_fake_cuda(old: bool, sub: &str, scenario_text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let libdir = dir.path().join(sub);
    std::fs::create_dir_all(&libdir).unwrap();
    let lib = libdir.join("libcuda.so.1");
    std::fs::copy(fake_cuda_lib(old), &lib).unwrap();
    std::os::unix::fs::symlink("libcuda.so.1", libdir.join("libcuda.so")).unwrap();
    std::fs::write(libdir.join("fake-cuda.scenario"), scenario_text).unwrap();
    (dir, lib)
}

/// Makes a FIFO at `path` (what a hostile or unlucky user puts where a file is expected).
#[cfg(unix)]
pub fn mkfifo(path: &Path) {
    unsafe extern "C" {
        fn mkfifo(path: *const std::ffi::c_char, mode: u32) -> i32;
    }
    let c = std::ffi::CString::new(path.to_string_lossy().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo {}", path.display());
}

/// Builds a shared library named `name` in `dir` from the C `source` (for libraries that misbehave
/// when loaded or called: a constructor that never returns, a call that crashes).
#[cfg(unix)]
pub fn c_library(dir: &Path, name: &str, source: &str) -> PathBuf {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, source).unwrap_or_else(|e| panic!("{e}"));
    let lib = dir.join(name);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let built = std::process::Command::new(cc)
        .args(["-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&src)
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler: {e}"));
    assert!(built.success(), "building {name} failed");
    lib
}

/// C source of a library whose constructor never returns (a load that blocks: in real life a dead
/// network mount or a wedged driver), with the entry points NVML and CUDA users look for.
pub const HANGING_LIBRARY: &str = "#include <unistd.h>\n__attribute__((constructor)) static void hang(void) { for (;;) pause(); }\nint nvmlInit_v2(void) { return 0; }\nint cuInit(unsigned f) { return 0; }\n";
