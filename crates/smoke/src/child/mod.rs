//! The smoke test itself, run in a child process (`gpu-doctor-cli smoke-child`): every CUDA call
//! goes through cudarc's dynamically loaded driver bindings, each stage is timed and judged, and
//! one JSON [`Msg`] per line goes to stdout for the parent.
//!
//! A crash or hang here takes down only this process; the parent reports the stage that was
//! running. cudarc panics when the driver library or one of its symbols is missing: the library
//! is probed first, and each stage runs under `catch_unwind`, so those panics become stage
//! failures with a next step instead of a crash.
//!
//! This module owns the entry point ([`run`]) and the types the parts share; the parts are:
//! - `stages`: the sequence of stages and the setup ones (load the library, init, devices,
//!   context, PTX JIT, alloc, release);
//! - `workload`: the measured stages (host copies, saxpy, SGEMM, device copies, burn);
//! - `cuda`: the driver-call helpers (error mapping, kernel launches, the GPU objects, panics);
//! - `verify`: checking the GPU's results (round trips, saxpy, Freivalds' check, mismatches);
//! - `advice`: the next-step texts for each failure.
//!
//! Byte amounts in the texts follow [`Options::units`]; bandwidth figures are always GB/s.

mod advice;
mod cuda;
mod stages;
mod verify;
mod workload;

use crate::i18n::Message;
use std::io::Write;

use nvml_wrapper::Nvml;

pub use verify::check_gemm;

use super::{DeviceInfo, Figure, Msg, Options};
use crate::verdict::Verdict;

/// Bytes per host<->device copy.
const COPY_BYTES: usize = 64 << 20;
/// Bytes per device-to-device copy (less when the GPU has little free memory).
const D2D_BYTES: usize = 256 << 20;
/// Timed repetitions of each host copy.
const COPY_REPS: usize = 8;

/// Runs the smoke test, writing JSON lines to `out`. Returns the process exit code: 0 when the
/// test ran to the end (whatever the verdicts), 1 when a stage failed.
pub fn run(opts: &Options, out: &mut dyn Write) -> i32 {
    cuda::record_panics();
    let mut em = Emitter { out };
    em.send(&Msg::Hello { version: env!("CARGO_PKG_VERSION").to_string(), pid: std::process::id() });
    let mut t = Test {
        opts: opts.clone(),
        gpu: cuda::Gpu::default(),
        nvml: None,
        nvml_index: None,
        device: None,
        driver_cuda: None,
    };
    let ok = t.run_all(&mut em);
    t.gpu.release();
    em.send(&Msg::Done);
    if ok { 0 } else { 1 }
}

/// Writes the messages for the parent, one JSON line each.
struct Emitter<'a> {
    out: &'a mut dyn Write,
}

impl Emitter<'_> {
    fn send(&mut self, msg: &Msg) {
        let line = serde_json::to_string(msg).unwrap_or_else(|e| format!("{{\"event\":\"error\",\"error\":\"{e}\"}}"));
        // The parent reads line by line; if it is gone there is nobody to report to.
        if writeln!(self.out, "{line}").and_then(|_| self.out.flush()).is_err() {
            std::process::exit(3);
        }
    }
}

/// A stage that went well enough to continue.
struct Good {
    verdict: Verdict,
    summary: Message,
    figures: Vec<Figure>,
    details: Vec<Message>,
    next_step: Option<Message>,
}

impl Good {
    fn pass(summary: impl Into<Message>) -> Good {
        Good {
            verdict: Verdict::Pass,
            summary: summary.into(),
            figures: Vec::new(),
            details: Vec::new(),
            next_step: None,
        }
    }
}

/// A stage that failed: the test stops here.
struct Failure {
    error: Option<String>,
    summary: Message,
    next_step: Message,
    details: Vec<Message>,
}

impl Failure {
    fn new(error: Option<String>, summary: impl Into<Message>, next_step: impl Into<Message>) -> Failure {
        Failure { error, summary: summary.into(), next_step: next_step.into(), details: Vec::new() }
    }
}

/// The test's state from stage to stage.
struct Test {
    /// What was asked.
    opts: Options,
    /// The GPU-side objects made so far.
    gpu: cuda::Gpu,
    /// NVML, when it loaded (for the PCIe link, clocks and temperatures).
    nvml: Option<Nvml>,
    /// NVML's index of the tested GPU.
    nvml_index: Option<u32>,
    /// The tested GPU, once listed.
    device: Option<DeviceInfo>,
    /// The driver's CUDA version, once known ("12.4").
    driver_cuda: Option<String>,
}
