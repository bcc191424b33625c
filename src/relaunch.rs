//! The self-relaunch children, all in one room: gpu-doctor's binaries start copies of themselves
//! for work that must not run in the process with the window or the command (a library load that
//! may block inside the dynamic loader, a CUDA driver that may hang or crash, the smoke test's
//! kernels). Each binary calls [`enter_child_if_asked`] first thing; a process started as a
//! child does its one job there and exits, any other goes on with the child probes turned on.
//!
//! | first argument | the child | started by |
//! |---|---|---|
//! | `__gpu-doctor-probe-library PATH` | loads one NVIDIA library, exit 0 loaded / 1 not | `telemetry::libprobe` |
//! | `__gpu-doctor-probe-cuda` | `cuInit` and friends, each stage printed | `diagnose::collect::cuda_probe` |
//! | `smoke-child --spec JSON` | the smoke test, JSON lines on stdout | `smoke::runner` |
//!
//! The parent side of each (its argument, its deadline, reading its output) stays with the layer
//! that starts it; this room sits above them all and only dispatches.

use std::ffi::OsString;

/// Exit code of a child started with arguments it cannot use (the command line's usage-error code).
const BAD_ARGS: i32 = 2;

/// Runs the child this process was started as, if any (it never returns then); otherwise turns
/// the child probes on for this process and returns.
pub fn enter_child_if_asked() {
    let mut args = std::env::args_os().skip(1);
    let first = args.next();
    match first.as_deref().and_then(|a| a.to_str()) {
        Some(crate::telemetry::libprobe::PROBE_ARG) => crate::telemetry::libprobe::run_library_probe_child(args.next()),
        Some(crate::diagnose::collect::CUDA_PROBE_ARG) => crate::diagnose::collect::run_cuda_probe_child(),
        Some(crate::smoke::runner::CHILD_SUBCOMMAND) => smoke_child(args.collect()),
        _ => crate::telemetry::libprobe::turn_child_probes_on(),
    }
}

/// The smoke test's child: `--spec JSON` (the parent's [`crate::smoke::Options`]), the test's
/// JSON lines on stdout, its exit code.
fn smoke_child(args: Vec<OsString>) -> ! {
    use std::io::Write as _;
    let spec = match args.as_slice() {
        [flag, spec] if flag == "--spec" => spec.to_str().map(str::to_owned),
        _ => None,
    };
    let opts = spec.as_deref().map(serde_json::from_str::<crate::smoke::Options>);
    let code = match opts {
        Some(Ok(opts)) => {
            let mut out = std::io::stdout().lock();
            let code = crate::smoke::child::run(&opts, &mut out);
            let _ = out.flush();
            code
        }
        Some(Err(e)) => {
            eprintln!("bad --spec: {e}");
            BAD_ARGS
        }
        None => {
            eprintln!("usage: smoke-child --spec JSON");
            BAD_ARGS
        }
    };
    std::process::exit(code)
}
