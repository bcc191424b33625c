//! Keeping a library load that blocks out of the process with the window and the samplers: the
//! NVIDIA library is first loaded in a child process (gpu-doctor's own binary started with
//! [`PROBE_ARG`]), and a process whose load is stuck anyway ends without its exit handlers (they
//! would wait for the dynamic loader's lock forever).

/// Library loads in progress. A process must not run its exit handlers while one is stuck inside
/// the dynamic loader (they take the loader's lock too): see [`loading_library`].
pub(crate) static LOADING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Whether a thread is inside `dlopen` of the NVIDIA library right now (a blocked load, if this
/// is asked at exit): the process then ends with `_exit`, skipping the exit handlers that would
/// wait for the loader's lock forever.
pub fn loading_library() -> bool {
    LOADING.load(std::sync::atomic::Ordering::SeqCst) > 0
}

/// The argument with which gpu-doctor's own binaries only load a library and exit
/// ([`run_library_probe_child`]): the probe that keeps a load that blocks out of the main process.
pub const PROBE_ARG: &str = "__gpu-doctor-probe-library";

/// How long a library load may take in the probe before it counts as hung.
const PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

static CHILD_PROBE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The library probe's child process ([`PROBE_ARG`] `PATH`, entered through
/// [`crate::relaunch`]): loads the library and exits, code 0 loaded, 1 not, 2 without a path.
pub fn run_library_probe_child(path: Option<std::ffi::OsString>) -> ! {
    let code = match path {
        // SAFETY: loading a library runs its initialisers; this process exists only for that.
        Some(path) => i32::from(unsafe { libloading::Library::new(&path) }.is_err()),
        None => 2,
    };
    std::process::exit(code);
}

/// Turns the probes on for this process (gpu-doctor's binaries, when they were not started as a
/// child): NVML libraries are first loaded in a child and a load that blocks (a library
/// constructor that hangs, a dead mount) never takes the dynamic loader's lock in the process
/// with the window and the samplers; the CUDA probe runs in a child too.
pub fn turn_child_probes_on() {
    CHILD_PROBE.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Whether library loads and the CUDA probe run in child processes first (in gpu-doctor's own
/// binaries, after [`turn_child_probes_on`]).
pub fn child_probes_on() -> bool {
    CHILD_PROBE.load(std::sync::atomic::Ordering::SeqCst)
}

/// Ties a helper child to this process: on Linux the kernel kills it (SIGKILL) when the thread
/// that started it, or the whole process, ends, so a probe stuck in a load that never returns
/// cannot outlive the command that started it (a health hook run every few minutes would pile
/// them up). The caller still kills and reaps a child that outlives its own deadline. The child
/// starts with no signal blocked, whatever this process blocks
/// ([`crate::diagnose::archive::remove_scratch_on_signals`]).
pub fn tie_to_this_process(cmd: &mut std::process::Command) -> &mut std::process::Command {
    #[cfg(target_os = "linux")]
    return tie_with(cmd, libc::SIGKILL);
    #[cfg(not(target_os = "linux"))]
    cmd
}

/// Like [`tie_to_this_process`], but the child gets SIGTERM when this process ends, so it can
/// end its own work cleanly (a tune started by the window stops its trial, records it and writes
/// its journal's end when the window is killed).
pub fn stop_with_this_process(cmd: &mut std::process::Command) -> &mut std::process::Command {
    #[cfg(target_os = "linux")]
    return tie_with(cmd, libc::SIGTERM);
    #[cfg(not(target_os = "linux"))]
    cmd
}

/// `cmd` with a clean signal mask and `signal` as its parent-death signal.
#[cfg(target_os = "linux")]
fn tie_with(cmd: &mut std::process::Command, signal: libc::c_int) -> &mut std::process::Command {
    {
        use std::os::unix::process::CommandExt as _;
        let parent = std::process::id();
        // SAFETY: the closure runs in the forked child before exec and calls only prctl, getppid,
        // sigemptyset, sigprocmask and _exit, which are async-signal-safe; it allocates nothing
        // and takes no lock.
        unsafe {
            cmd.pre_exec(move || {
                let mut none: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut none);
                libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
                if libc::prctl(libc::PR_SET_PDEATHSIG, signal, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The parent may have ended between fork and prctl: then nobody waits for this.
                if libc::getppid() as u32 != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
    }
    cmd
}

/// Loads `path` in a child process first (when the probe is on). `Err` with the reason when the
/// load did not finish within [`PROBE_TIMEOUT`]; `Ok` otherwise (the child's own failure is left
/// for the real load to describe).
pub(crate) fn probe_in_child(path: &str) -> Result<(), crate::i18n::Message> {
    if !CHILD_PROBE.load(std::sync::atomic::Ordering::SeqCst) {
        return Ok(());
    }
    let Ok(exe) = std::env::current_exe() else { return Ok(()) };
    let Ok(mut child) = tie_to_this_process(&mut std::process::Command::new(exe))
        .arg(PROBE_ARG)
        .arg(path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    else {
        return Ok(());
    };
    let started = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => return Ok(()),
            Ok(None) if started.elapsed() >= PROBE_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(crate::msg!(
                    "loading {path} did not finish within {secs} s",
                    path = path,
                    secs = PROBE_TIMEOUT.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(10)),
        }
    }
}
