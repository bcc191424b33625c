//! The smoke test itself, run in a child process (`gpu-doctor-cli smoke-child`): every CUDA call
//! goes through cudarc's dynamically loaded driver bindings, each stage is timed and judged, and
//! one JSON [`Msg`] per line goes to stdout for the parent.
//!
//! A crash or hang here takes down only this process; the parent reports the stage that was
//! running. cudarc panics when the driver library or one of its symbols is missing: the library
//! is probed first, and each stage runs under `catch_unwind`, so those panics become stage
//! failures with a next step instead of a crash.

use std::ffi::{CString, c_void};
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use cudarc::driver::sys;
use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};

use super::limits;
use super::{
    BurnTick, DeviceInfo, Figure, GEMM_N, MIN_DRIVER_CUDA, Msg, Options, PTX, SAXPY_ELEMENTS, Stage, StageResult,
};
use crate::diagnose::Verdict;

/// Bytes per host<->device copy.
const COPY_BYTES: usize = 64 << 20;
/// Bytes per device-to-device copy (less when the GPU has little free memory).
const D2D_BYTES: usize = 256 << 20;
/// Timed repetitions of each host copy.
const COPY_REPS: usize = 8;

/// The last panic message on this process, for turning cudarc's panics into stage failures.
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Runs the smoke test, writing JSON lines to `out`. Returns the process exit code: 0 when the
/// test ran to the end (whatever the verdicts), 1 when a stage failed.
pub fn run(opts: &Options, out: &mut dyn Write) -> i32 {
    std::panic::set_hook(Box::new(|info| {
        let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
            (*s).to_string()
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            s.clone()
        } else {
            "panic".to_string()
        };
        if let Ok(mut p) = LAST_PANIC.lock() {
            *p = Some(msg);
        }
    }));
    let mut em = Emitter { out };
    em.send(&Msg::Hello { version: env!("CARGO_PKG_VERSION").to_string(), pid: std::process::id() });
    let mut t =
        Test { opts: opts.clone(), gpu: Gpu::default(), nvml: None, nvml_index: None, device: None, driver_cuda: None };
    let ok = t.run_all(&mut em);
    t.gpu.release();
    em.send(&Msg::Done);
    if ok { 0 } else { 1 }
}

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
    summary: String,
    figures: Vec<Figure>,
    details: Vec<String>,
    next_step: Option<String>,
}

impl Good {
    fn pass(summary: impl Into<String>) -> Good {
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
    summary: String,
    next_step: String,
    details: Vec<String>,
}

impl Failure {
    fn new(error: Option<String>, summary: impl Into<String>, next_step: impl Into<String>) -> Failure {
        Failure { error, summary: summary.into(), next_step: next_step.into(), details: Vec::new() }
    }
}

/// A failed driver call.
struct CuErr {
    call: &'static str,
    code: u32,
    name: String,
}

fn ck(r: sys::CUresult, call: &'static str) -> Result<(), CuErr> {
    if r == sys::CUresult::CUDA_SUCCESS { Ok(()) } else { Err(CuErr { call, code: r as u32, name: format!("{r:?}") }) }
}

/// What the GPU-side objects are, for the release at the end.
#[derive(Default)]
struct Gpu {
    dev: Option<sys::CUdevice>,
    ctx: Option<sys::CUcontext>,
    module: Option<sys::CUmodule>,
    saxpy: Option<sys::CUfunction>,
    sgemm: Option<sys::CUfunction>,
    compare: Option<sys::CUfunction>,
    device_buffers: Vec<(&'static str, sys::CUdeviceptr, usize)>,
    pinned: Option<(*mut c_void, usize)>,
}

impl Gpu {
    fn buffer(&self, name: &str) -> sys::CUdeviceptr {
        self.device_buffers.iter().find(|b| b.0 == name).map_or(0, |b| b.1)
    }

    fn bytes(&self, name: &str) -> usize {
        self.device_buffers.iter().find(|b| b.0 == name).map_or(0, |b| b.2)
    }

    /// Frees everything that exists; errors are ignored (the process ends next).
    fn release(&mut self) -> Vec<CuErr> {
        let mut errs = Vec::new();
        let Some(dev) = self.dev else { return errs };
        if self.ctx.is_none() {
            return errs;
        }
        // SAFETY: each handle came from the matching allocation call on this context and is
        // released once (taken out of self).
        unsafe {
            if let Some(m) = self.module.take() {
                errs.extend(ck(sys::cuModuleUnload(m), "cuModuleUnload").err());
            }
            for (_, p, _) in self.device_buffers.drain(..) {
                errs.extend(ck(sys::cuMemFree_v2(p), "cuMemFree").err());
            }
            if let Some((p, _)) = self.pinned.take() {
                errs.extend(ck(sys::cuMemFreeHost(p), "cuMemFreeHost").err());
            }
            self.ctx = None;
            errs.extend(ck(sys::cuDevicePrimaryCtxRelease_v2(dev), "cuDevicePrimaryCtxRelease").err());
        }
        errs
    }
}

struct Test {
    opts: Options,
    gpu: Gpu,
    nvml: Option<Nvml>,
    nvml_index: Option<u32>,
    device: Option<DeviceInfo>,
    driver_cuda: Option<String>,
}

impl Test {
    fn run_all(&mut self, em: &mut Emitter) -> bool {
        let stages = Stage::plan(self.opts.burn_secs > 0);
        for stage in stages {
            if !self.stage(em, stage) {
                return false;
            }
        }
        true
    }

    /// Runs one stage with its start and end messages; false when it failed.
    fn stage(&mut self, em: &mut Emitter, stage: Stage) -> bool {
        em.send(&Msg::Start { stage });
        let t0 = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| self.dispatch(em, stage)));
        let ms = t0.elapsed().as_secs_f64() * 1000.0;
        let outcome = outcome.unwrap_or_else(|_| Err(panic_failure()));
        let (result, ok) = match outcome {
            Ok(g) => (
                StageResult {
                    stage,
                    verdict: g.verdict,
                    ms,
                    summary: g.summary,
                    error: None,
                    next_step: g.next_step,
                    figures: g.figures,
                    details: g.details,
                },
                true,
            ),
            Err(f) => (
                StageResult {
                    stage,
                    verdict: Verdict::Fail,
                    ms,
                    summary: f.summary,
                    error: f.error,
                    next_step: Some(f.next_step),
                    figures: Vec::new(),
                    details: f.details,
                },
                false,
            ),
        };
        em.send(&Msg::End { result });
        ok
    }

    fn dispatch(&mut self, em: &mut Emitter, stage: Stage) -> Result<Good, Failure> {
        match stage {
            Stage::Load => self.load(em),
            Stage::Init => self.init(em),
            Stage::Devices => self.devices(em),
            Stage::Context => self.context(),
            Stage::Module => self.module(),
            Stage::Alloc => self.alloc(),
            Stage::HostCopy => self.host_copy(),
            Stage::Kernel => self.kernel(),
            Stage::Gemm => self.gemm(),
            Stage::DeviceCopy => self.device_copy(),
            Stage::Burn => self.burn(em),
            Stage::Release => {
                let errs = self.gpu.release();
                match errs.into_iter().next() {
                    None => Ok(Good::pass("memory, kernels and context released")),
                    Some(e) => Err(cuda_failure(Stage::Release, &e, self)),
                }
            }
        }
    }

    fn load(&mut self, em: &mut Emitter) -> Result<Good, Failure> {
        if let Some(path) = &self.opts.cuda_lib {
            // SAFETY: loading the driver library runs its initialisers, as any CUDA program does.
            match unsafe { libloading::Library::new(path) } {
                // Keep it loaded for the whole process: cudarc finds it by its soname.
                Ok(lib) => std::mem::forget(lib),
                Err(e) => {
                    return Err(Failure::new(
                        Some(NOT_FOUND.to_string()),
                        format!("could not load {}: {e}", path.display()),
                        "Check the path given with --cuda-lib, or leave the option out to load the driver's library from the standard places.",
                    ));
                }
            }
        }
        // SAFETY: dlopen of the candidate names, as cudarc itself does; nothing is called yet.
        if !unsafe { sys::is_culib_present() } {
            let (summary, next) = missing_library_advice();
            return Err(Failure::new(Some(NOT_FOUND.to_string()), summary, next));
        }
        // SAFETY: the library is present (checked above), so this does not panic; it loads it once.
        let lib = unsafe { sys::culib() };
        // SAFETY: looking up a symbol's address, not calling it.
        let addr = unsafe { lib.get::<*const c_void>(b"cuInit\0") }.ok().map(|s| *s as usize);
        let path = addr.and_then(library_path_of);
        em.send(&Msg::Driver { library: path.clone(), cuda: None });
        let shown = path.clone().unwrap_or_else(|| "the CUDA driver library".to_string());
        if path.as_deref().is_some_and(|p| p.contains("/stubs/")) {
            return Err(Failure::new(
                Some("CUDA_ERROR_STUB_LIBRARY".to_string()),
                format!("{shown} is the CUDA toolkit's stub, not the driver's library"),
                STUB_ADVICE,
            ));
        }
        if let (Some(wanted), Some(p)) = (&self.opts.cuda_lib, &path) {
            let wanted = std::fs::canonicalize(wanted).unwrap_or_else(|_| wanted.clone());
            let got = std::fs::canonicalize(p).unwrap_or_else(|_| p.into());
            if wanted != got {
                return Ok(Good {
                    verdict: Verdict::Warn,
                    summary: format!("loaded {} instead of {}", got.display(), wanted.display()),
                    figures: Vec::new(),
                    details: Vec::new(),
                    next_step: Some("Another libcuda comes first in the loader's search order; put the directory of the library you want first in LD_LIBRARY_PATH.".to_string()),
                });
            }
        }
        Ok(Good::pass(format!("loaded {shown}")))
    }

    fn init(&mut self, em: &mut Emitter) -> Result<Good, Failure> {
        // SAFETY: driver API calls with valid out-pointers.
        let version = unsafe {
            ck(sys::cuInit(0), "cuInit").map_err(|e| cuda_failure(Stage::Init, &e, self))?;
            let mut v = 0;
            ck(sys::cuDriverGetVersion(&mut v), "cuDriverGetVersion")
                .map_err(|e| cuda_failure(Stage::Init, &e, self))?;
            v
        };
        let cuda = cuda_version_text(version);
        em.send(&Msg::Driver { library: None, cuda: Some(cuda.clone()) });
        self.driver_cuda = Some(cuda.clone());
        if version < MIN_DRIVER_CUDA {
            return Err(Failure::new(
                Some("INSUFFICIENT_DRIVER".to_string()),
                format!(
                    "the driver supports CUDA {cuda}; the test's kernels need CUDA {} or newer",
                    cuda_version_text(MIN_DRIVER_CUDA)
                ),
                "Update the NVIDIA driver (any driver from 2017 on, R384 or newer, is enough for this test; current frameworks need R525 or newer).",
            ));
        }
        Ok(Good::pass(format!("cuInit succeeded; the driver supports CUDA {cuda}")))
    }

    fn devices(&mut self, em: &mut Emitter) -> Result<Good, Failure> {
        let fail = |e: CuErr, t: &Test| cuda_failure(Stage::Devices, &e, t);
        let mut count = 0;
        // SAFETY: valid out-pointer.
        ck(unsafe { sys::cuDeviceGetCount(&mut count) }, "cuDeviceGetCount").map_err(|e| fail(e, self))?;
        if count <= 0 {
            return Err(Failure::new(Some("CUDA_ERROR_NO_DEVICE".to_string()), "CUDA sees no GPU", no_device_advice()));
        }
        let mut list = Vec::new();
        for i in 0..count {
            list.push(device_info(i).map_err(|e| fail(e, self))?);
        }
        em.send(&Msg::Devices { devices: list.clone() });
        let mut details: Vec<String> = list.iter().map(|d| format!("{}: {}", d.index, d.line())).collect();
        let Some(dev) = list.iter().find(|d| d.index == self.opts.device).cloned() else {
            return Err(Failure::new(
                Some("CUDA_ERROR_INVALID_DEVICE".to_string()),
                format!("there is no CUDA device {}; CUDA sees {count}", self.opts.device),
                format!(
                    "Choose a device from 0 to {} (CUDA numbers the GPUs it can see, after CUDA_VISIBLE_DEVICES).",
                    count - 1
                ),
            ));
        };
        let mut handle = 0;
        // SAFETY: valid out-pointer; the ordinal exists.
        ck(unsafe { sys::cuDeviceGet(&mut handle, dev.index as i32) }, "cuDeviceGet").map_err(|e| fail(e, self))?;
        self.gpu.dev = Some(handle);
        match open_nvml(self.opts.nvml_lib.as_deref()) {
            Ok(nvml) => {
                self.nvml_index = nvml_index_for(&nvml, &dev.pci_bus_id);
                match self.nvml_index {
                    Some(i) => {
                        details.push(format!("NVML: GPU {i} is CUDA device {} (PCI {})", dev.index, dev.pci_bus_id))
                    }
                    None => details
                        .push(format!("NVML: no GPU at PCI {}; link and clock readings unavailable", dev.pci_bus_id)),
                }
                self.nvml = Some(nvml);
            }
            Err(why) => {
                details.push(format!("NVML not available ({why}): the PCIe link limit and clocks are not read"))
            }
        }
        let summary = format!("{count} GPU{}; testing {}: {}", if count == 1 { "" } else { "s" }, dev.index, dev.name);
        self.device = Some(dev);
        Ok(Good { details, ..Good::pass(summary) })
    }

    fn context(&mut self) -> Result<Good, Failure> {
        let dev = self.gpu.dev.unwrap_or(0);
        let mut ctx: sys::CUcontext = std::ptr::null_mut();
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: valid out-pointers; the context is released in Gpu::release.
        unsafe {
            ck(sys::cuDevicePrimaryCtxRetain(&mut ctx, dev), "cuDevicePrimaryCtxRetain")
                .map_err(|e| cuda_failure(Stage::Context, &e, self))?;
            self.gpu.ctx = Some(ctx);
            ck(sys::cuCtxSetCurrent(ctx), "cuCtxSetCurrent").map_err(|e| cuda_failure(Stage::Context, &e, self))?;
            ck(sys::cuMemGetInfo_v2(&mut free, &mut total), "cuMemGetInfo")
                .map_err(|e| cuda_failure(Stage::Context, &e, self))?;
        }
        Ok(Good::pass(format!("context ready; {} free of {}", gib(free), gib(total))))
    }

    fn module(&mut self) -> Result<Good, Failure> {
        let image =
            CString::new(PTX).map_err(|_| Failure::new(None, "the embedded PTX holds a NUL byte", REPORT_BUG))?;
        let mut log = vec![0u8; 8192];
        let mut opts =
            [sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER, sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
        let mut vals: [*mut c_void; 2] = [log.as_mut_ptr().cast(), log.len() as *mut c_void];
        let mut module: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: a NUL-terminated PTX image, two JIT options with a log buffer that outlives the call.
        let r = unsafe {
            sys::cuModuleLoadDataEx(&mut module, image.as_ptr().cast(), 2, opts.as_mut_ptr(), vals.as_mut_ptr())
        };
        if let Err(e) = ck(r, "cuModuleLoadDataEx") {
            let mut f = cuda_failure(Stage::Module, &e, self);
            let text = String::from_utf8_lossy(&log);
            let text = text.trim_end_matches('\0').trim();
            if !text.is_empty() {
                f.details.push(format!("JIT log: {text}"));
            }
            return Err(f);
        }
        self.gpu.module = Some(module);
        for (name, slot) in [("saxpy", 0), ("sgemm", 1), ("count_mismatches", 2)] {
            let mut f: sys::CUfunction = std::ptr::null_mut();
            let cname = CString::new(name).map_err(|_| Failure::new(None, "bad kernel name", REPORT_BUG))?;
            // SAFETY: the module was loaded above; valid out-pointer and name.
            ck(unsafe { sys::cuModuleGetFunction(&mut f, module, cname.as_ptr()) }, "cuModuleGetFunction")
                .map_err(|e| cuda_failure(Stage::Module, &e, self))?;
            match slot {
                0 => self.gpu.saxpy = Some(f),
                1 => self.gpu.sgemm = Some(f),
                _ => self.gpu.compare = Some(f),
            }
        }
        Ok(Good::pass("PTX (ISA 6.0, sm_50) JIT-compiled for this GPU; 3 kernels found"))
    }

    fn alloc(&mut self) -> Result<Good, Failure> {
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: valid out-pointers.
        ck(unsafe { sys::cuMemGetInfo_v2(&mut free, &mut total) }, "cuMemGetInfo")
            .map_err(|e| cuda_failure(Stage::Alloc, &e, self))?;
        let gemm = GEMM_N * GEMM_N * 4;
        let fixed = COPY_BYTES + 2 * SAXPY_ELEMENTS * 4 + 4 * gemm + 4;
        let d2d = if fixed + 2 * D2D_BYTES < free / 10 * 9 { D2D_BYTES } else { 32 << 20 };
        let plan: [(&'static str, usize); 9] = [
            ("copy", COPY_BYTES),
            ("x", SAXPY_ELEMENTS * 4),
            ("y", SAXPY_ELEMENTS * 4),
            ("a", gemm),
            ("b", gemm),
            ("c", gemm),
            ("c2", gemm),
            ("errors", 4),
            ("src", d2d),
        ];
        let need = fixed + 2 * d2d;
        for (name, bytes) in plan.into_iter().chain([("dst", d2d)]) {
            let mut p: sys::CUdeviceptr = 0;
            // SAFETY: valid out-pointer; freed in Gpu::release.
            if let Err(e) = ck(unsafe { sys::cuMemAlloc_v2(&mut p, bytes) }, "cuMemAlloc") {
                let mut f = cuda_failure(Stage::Alloc, &e, self);
                f.summary = format!(
                    "{f_summary} while allocating {need_t} ({free_t} free of {total_t})",
                    f_summary = f.summary,
                    need_t = mib(need),
                    free_t = gib(free),
                    total_t = gib(total)
                );
                return Err(f);
            }
            self.gpu.device_buffers.push((name, p, bytes));
        }
        let mut host: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer; freed in Gpu::release.
        ck(unsafe { sys::cuMemAllocHost_v2(&mut host, COPY_BYTES) }, "cuMemAllocHost")
            .map_err(|e| cuda_failure(Stage::Alloc, &e, self))?;
        self.gpu.pinned = Some((host, COPY_BYTES));
        let mut g = Good::pass(format!("{} on the GPU and {} of pinned host memory", mib(need), mib(COPY_BYTES)));
        g.details.push(format!("{} free of {} before allocating", gib(free), gib(total)));
        Ok(g)
    }

    fn host_copy(&mut self) -> Result<Good, Failure> {
        let dev_buf = self.gpu.buffer("copy");
        let (pinned, n) = self.gpu.pinned.unwrap_or((std::ptr::null_mut(), 0));
        // SAFETY: `pinned` is a live allocation of n bytes from cuMemAllocHost; no other
        // reference to it exists while these short-lived slices do.
        let pinned_bytes = || unsafe { std::slice::from_raw_parts_mut(pinned.cast::<u8>(), n) };
        for (i, w) in pinned_bytes().chunks_exact_mut(8).enumerate() {
            w.copy_from_slice(&(i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes());
        }
        let mut pageable = vec![0u8; n];
        let stop = AtomicBool::new(false);
        let (max_link, current) = (self.max_link(), Mutex::new((0u32, 0u32)));
        let nvml_dev = self.nvml_index;
        let nvml = self.nvml.as_ref();
        let measured = std::thread::scope(|s| {
            // Watch the link while the copies run: an idle link trains down to save power, so only
            // the best state seen under load says what the slot delivers.
            if let (Some(nv), Some(i)) = (nvml, nvml_dev) {
                let (stop, current) = (&stop, &current);
                s.spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        if let Ok(d) = nv.device_by_index(i)
                            && let (Ok(g), Ok(w)) = (d.current_pcie_link_gen(), d.current_pcie_link_width())
                            && let Ok(mut c) = current.lock()
                            && limits::pcie_gbs(g, w) > limits::pcie_gbs(c.0, c.1)
                        {
                            *c = (g, w);
                        }
                        std::thread::sleep(Duration::from_millis(5));
                    }
                });
            }
            let r = (|| -> Result<[f64; 4], CuErr> {
                let pattern: *const c_void = pinned;
                // SAFETY: every pointer is a live allocation of `n` bytes.
                unsafe {
                    // Pinned out, pageable back: the bytes must survive the round trip.
                    let h2d_pinned = timed_copies(|| ck(sys::cuMemcpyHtoD_v2(dev_buf, pattern, n), "cuMemcpyHtoD"), n)?;
                    let d2h = timed_copies(
                        || ck(sys::cuMemcpyDtoH_v2(pageable.as_mut_ptr().cast(), dev_buf, n), "cuMemcpyDtoH"),
                        n,
                    )?;
                    Ok([h2d_pinned, 0.0, 0.0, d2h])
                }
            })()
            .and_then(|mut v| {
                if *pinned_bytes() != *pageable {
                    return Ok(v);
                }
                pinned_bytes().fill(0);
                // SAFETY: as above. Pageable out, pinned back.
                unsafe {
                    v[2] = timed_copies(
                        || ck(sys::cuMemcpyHtoD_v2(dev_buf, pageable.as_ptr().cast(), n), "cuMemcpyHtoD"),
                        n,
                    )?;
                    v[1] = timed_copies(|| ck(sys::cuMemcpyDtoH_v2(pinned, dev_buf, n), "cuMemcpyDtoH"), n)?;
                }
                Ok(v)
            });
            stop.store(true, Ordering::Relaxed);
            r
        });
        let [h2d_pinned, d2h_pinned, h2d, d2h] = measured.map_err(|e| cuda_failure(Stage::HostCopy, &e, self))?;
        if *pinned_bytes() != *pageable
            && let Some(i) = pinned_bytes().iter().zip(&pageable).position(|(a, b)| a != b)
        {
            return Err(wrong_result(format!(
                "a 64 MiB buffer came back from the GPU changed (first difference at byte {i})"
            )));
        }
        let limit = max_link.and_then(|(g, w)| limits::pcie_gbs(g, w).map(|l| (l, format!("PCIe Gen{g} x{w}"))));
        let fig = |label: &str, v: f64| Figure {
            label: label.to_string(),
            value: v,
            unit: "GB/s".to_string(),
            limit: limit.as_ref().map(|l| l.0),
            limit_label: limit.as_ref().map(|l| l.1.clone()),
        };
        let figures = vec![
            fig("pinned host to GPU", h2d_pinned),
            fig("pinned GPU to host", d2h_pinned),
            fig("pageable host to GPU", h2d),
            fig("pageable GPU to host", d2h),
        ];
        let mut g = Good { figures, ..Good::pass("64 MiB copies verified in both directions") };
        let seen = current.lock().map(|c| *c).unwrap_or((0, 0));
        if let Some((mg, mw)) = max_link {
            if seen.0 > 0 {
                g.details.push(format!(
                    "PCIe link during the copies: Gen{} x{} (the GPU and slot support Gen{mg} x{mw})",
                    seen.0, seen.1
                ));
            }
            if seen.0 > 0 && limits::pcie_gbs(seen.0, seen.1) < limits::pcie_gbs(mg, mw) {
                g.verdict = Verdict::Warn;
                g.summary = format!(
                    "the PCIe link stayed at Gen{} x{} during the copies; it can run at Gen{mg} x{mw}",
                    seen.0, seen.1
                );
                g.next_step = Some(LINK_ADVICE.to_string());
            } else if let Some((l, what)) = &limit {
                let pct = 100.0 * h2d_pinned.min(d2h_pinned) / l;
                if pct < 50.0 {
                    g.verdict = Verdict::Warn;
                    g.summary = format!("pinned copies reach only {pct:.0} % of {what}");
                    g.next_step = Some(SLOW_COPY_ADVICE.to_string());
                }
            }
        } else {
            g.details
                .push("PCIe limit unknown (NVML did not report the link); bandwidth shown without a limit".to_string());
        }
        Ok(g)
    }

    /// The link the GPU and slot support (NVML's maximum generation and width).
    fn max_link(&self) -> Option<(u32, u32)> {
        let d = self.nvml.as_ref()?.device_by_index(self.nvml_index?).ok()?;
        Some((d.max_pcie_link_gen().ok()?, d.max_pcie_link_width().ok()?))
    }

    fn memory_limit(&self) -> (Option<f64>, Option<String>) {
        let Some(d) = &self.device else { return (None, None) };
        match limits::memory_gbs(d.memory_clock_khz, d.bus_width_bits) {
            Some(l) => (Some(l), Some(format!("the memory's peak ({}-bit bus)", d.bus_width_bits))),
            None => (None, None),
        }
    }

    fn kernel(&mut self) -> Result<Good, Failure> {
        let n = SAXPY_ELEMENTS;
        let (dx, dy) = (self.gpu.buffer("x"), self.gpu.buffer("y"));
        let f = self.gpu.saxpy.unwrap_or(std::ptr::null_mut());
        let a = 2.0f32;
        let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.001).collect();
        let mut y: Vec<f32> = (0..n).map(|i| 1.0 - (i % 777) as f32 * 0.002).collect();
        let expected: Vec<f32> = x.iter().zip(&y).map(|(x, y)| a * x + y).collect();
        let blocks = n.div_ceil(256).min(65_535) as u32;
        let launch = |reps: usize| -> Result<f64, CuErr> {
            let mut n_i = n as i32;
            let mut a_v = a;
            let (mut px, mut py) = (dx, dy);
            let mut params: [*mut c_void; 4] =
                [(&raw mut n_i).cast(), (&raw mut a_v).cast(), (&raw mut px).cast(), (&raw mut py).cast()];
            let t0 = Instant::now();
            // SAFETY: the kernel's parameters match saxpy(int, float, const float*, float*); the
            // buffers hold n floats each.
            unsafe {
                for _ in 0..reps {
                    launch_1d(f, blocks, &mut params)?;
                }
                ck(sys::cuCtxSynchronize(), "cuCtxSynchronize")?;
            }
            Ok(t0.elapsed().as_secs_f64())
        };
        let mut run = || -> Result<f64, CuErr> {
            // SAFETY: the buffers hold n floats.
            unsafe {
                ck(sys::cuMemcpyHtoD_v2(dx, x.as_ptr().cast(), n * 4), "cuMemcpyHtoD")?;
                ck(sys::cuMemcpyHtoD_v2(dy, y.as_ptr().cast(), n * 4), "cuMemcpyHtoD")?;
            }
            launch(1)?;
            // SAFETY: as above.
            unsafe { ck(sys::cuMemcpyDtoH_v2(y.as_mut_ptr().cast(), dy, n * 4), "cuMemcpyDtoH")? };
            let reps = 10;
            Ok(launch(reps)? / reps as f64)
        };
        let per_launch = run().map_err(|e| cuda_failure(Stage::Kernel, &e, self))?;
        let wrong: Vec<usize> =
            (0..n).filter(|&i| (y[i] - expected[i]).abs() > 1e-5 * expected[i].abs().max(1.0)).collect();
        if let Some(&i) = wrong.first() {
            return Err(wrong_result(format!(
                "saxpy gave {} wrong value{} of {}; first at element {i}: {} instead of {}",
                wrong.len(),
                if wrong.len() == 1 { "" } else { "s" },
                n,
                y[i],
                expected[i]
            )));
        }
        let (limit, limit_label) = self.memory_limit();
        let gbs = 12.0 * n as f64 / per_launch / 1e9;
        let mut g = Good::pass(format!("all {} results correct", group(n)));
        g.figures.push(Figure {
            label: "saxpy memory traffic".into(),
            value: gbs,
            unit: "GB/s".into(),
            limit,
            limit_label,
        });
        g.figures.push(Figure::plain("saxpy kernel time", per_launch * 1000.0, "ms"));
        Ok(g)
    }

    fn gemm(&mut self) -> Result<Good, Failure> {
        let n = GEMM_N;
        let (da, db, dc) = (self.gpu.buffer("a"), self.gpu.buffer("b"), self.gpu.buffer("c"));
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            ((rng >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        };
        let a: Vec<f32> = (0..n * n).map(|_| next()).collect();
        let b: Vec<f32> = (0..n * n).map(|_| next()).collect();
        let mut c = vec![0f32; n * n];
        let f = self.gpu.sgemm.unwrap_or(std::ptr::null_mut());
        let first = (|| -> Result<f64, CuErr> {
            // SAFETY: the buffers hold n*n floats.
            unsafe {
                ck(sys::cuMemcpyHtoD_v2(da, a.as_ptr().cast(), n * n * 4), "cuMemcpyHtoD")?;
                ck(sys::cuMemcpyHtoD_v2(db, b.as_ptr().cast(), n * n * 4), "cuMemcpyHtoD")?;
            }
            let t = launch_sgemm(f, n, da, db, dc, 1)?;
            // SAFETY: as above.
            unsafe { ck(sys::cuMemcpyDtoH_v2(c.as_mut_ptr().cast(), dc, n * n * 4), "cuMemcpyDtoH")? };
            Ok(t)
        })()
        .map_err(|e| cuda_failure(Stage::Gemm, &e, self))?;
        if let Some(bad) = check_gemm(n, &a, &b, &c) {
            return Err(wrong_result(bad));
        }
        // Enough repetitions for about a quarter of a second, into a scratch output (C stays the
        // verified reference for the burn).
        let reps = ((0.25 / first.max(1e-6)) as usize).clamp(1, 50);
        let dc2 = self.gpu.buffer("c2");
        let t = launch_sgemm(f, n, da, db, dc2, reps).map_err(|e| cuda_failure(Stage::Gemm, &e, self))?;
        let gflops = 2.0 * (n as f64).powi(3) * reps as f64 / t / 1e9;
        let peak = self.device.as_ref().and_then(|d| {
            limits::fp32_peak_gflops(d.compute_capability[0], d.compute_capability[1], d.sms, d.clock_khz)
        });
        let mut g = Good::pass(format!("{n} x {n} product correct (checked against the CPU)"));
        g.figures.push(Figure {
            label: "SGEMM throughput".into(),
            value: gflops,
            unit: "GFLOP/s".into(),
            limit: peak,
            limit_label: peak.map(|_| "FP32 peak".to_string()),
        });
        g.details.push("A simple tiled kernel, not a tuned library: 10-40 % of the FP32 peak is normal.".to_string());
        Ok(g)
    }

    fn device_copy(&mut self) -> Result<Good, Failure> {
        let (src, dst, n) = (self.gpu.buffer("src"), self.gpu.buffer("dst"), self.gpu.bytes("src"));
        // SAFETY: both buffers hold n bytes.
        let per_copy = unsafe {
            timed_copies(|| ck(sys::cuMemcpyDtoD_v2(dst, src, n), "cuMemcpyDtoD"), n).map(|gbs| n as f64 / gbs / 1e9)
        }
        .map_err(|e| cuda_failure(Stage::DeviceCopy, &e, self))?;
        // A copy reads and writes every byte.
        let gbs = 2.0 * n as f64 / per_copy / 1e9;
        let (limit, limit_label) = self.memory_limit();
        let fig = Figure {
            label: format!("{} copy (read + write)", mib(n)),
            value: gbs,
            unit: "GB/s".into(),
            limit,
            limit_label,
        };
        let pct = fig.percent();
        let mut g = Good { figures: vec![fig], ..Good::pass("copies within GPU memory work") };
        if let Some(p) = pct
            && p < 50.0
        {
            g.verdict = Verdict::Warn;
            g.summary = format!("copies within GPU memory reach only {p:.0} % of the memory's peak");
            g.next_step = Some(SLOW_MEMORY_ADVICE.to_string());
        }
        Ok(g)
    }

    fn burn(&mut self, em: &mut Emitter) -> Result<Good, Failure> {
        let n = GEMM_N;
        let (da, db, dc, dc2, derr) = (
            self.gpu.buffer("a"),
            self.gpu.buffer("b"),
            self.gpu.buffer("c"),
            self.gpu.buffer("c2"),
            self.gpu.buffer("errors"),
        );
        let (sgemm, compare) =
            (self.gpu.sgemm.unwrap_or(std::ptr::null_mut()), self.gpu.compare.unwrap_or(std::ptr::null_mut()));
        let total = Duration::from_secs(u64::from(self.opts.burn_secs));
        let start = Instant::now();
        let mut iterations = 0u64;
        let mut batch = 1usize;
        let (mut last_tick, mut last_iter) = (start, 0u64);
        let mut errors = 0u32;
        let mut ticks: Vec<BurnTick> = Vec::new();
        let fail = |e: CuErr, t: &Test| cuda_failure(Stage::Burn, &e, t);
        // SAFETY: a 4-byte buffer.
        ck(unsafe { sys::cuMemsetD32_v2(derr, 0, 1) }, "cuMemsetD32").map_err(|e| fail(e, self))?;
        while start.elapsed() < total {
            let t0 = Instant::now();
            for _ in 0..batch {
                launch_sgemm_async(sgemm, n, da, db, dc2).map_err(|e| fail(e, self))?;
                launch_compare(compare, n * n, dc2, dc, derr).map_err(|e| fail(e, self))?;
            }
            // SAFETY: synchronise, then read the 4-byte counter.
            unsafe {
                ck(sys::cuCtxSynchronize(), "cuCtxSynchronize").map_err(|e| fail(e, self))?;
                ck(sys::cuMemcpyDtoH_v2((&raw mut errors).cast(), derr, 4), "cuMemcpyDtoH")
                    .map_err(|e| fail(e, self))?;
            }
            iterations += batch as u64;
            if t0.elapsed() < Duration::from_millis(250) {
                batch = (batch * 2).min(4096);
            }
            let now = Instant::now();
            if now.duration_since(last_tick) >= Duration::from_secs(1) || start.elapsed() >= total {
                let dt = now.duration_since(last_tick).as_secs_f64();
                let mut tick = BurnTick {
                    t_s: start.elapsed().as_secs_f64(),
                    iterations,
                    errors: u64::from(errors),
                    gflops: 2.0 * (n as f64).powi(3) * (iterations - last_iter) as f64 / dt / 1e9,
                    sm_clock_mhz: None,
                    temperature_c: None,
                    power_w: None,
                    throttle_mask: None,
                };
                self.read_sensors(&mut tick);
                em.send(&Msg::Burn { tick: tick.clone() });
                ticks.push(tick);
                last_tick = now;
                last_iter = iterations;
            }
        }
        let secs = start.elapsed().as_secs_f64();
        let mean_gflops = 2.0 * (n as f64).powi(3) * iterations as f64 / secs / 1e9;
        if errors > 0 {
            let first = ticks.iter().find(|t| t.errors > 0).map_or(0.0, |t| t.t_s);
            return Err(wrong_result(format!(
                "{errors} wrong value{} in {iterations} repeated GEMMs (first seen by {first:.0} s); the same inputs must give the same bits",
                if errors == 1 { "" } else { "s" }
            )));
        }
        let mut g = Good::pass(format!("{iterations} GEMMs in {secs:.0} s, all bit-identical to the verified result"));
        g.figures.push(Figure::plain("mean SGEMM throughput", mean_gflops, "GFLOP/s"));
        if let Some(t) = ticks.iter().filter_map(|t| t.temperature_c).max() {
            g.figures.push(Figure::plain("hottest", f64::from(t), "°C"));
        }
        if let Some(c) = ticks.iter().filter_map(|t| t.sm_clock_mhz).min() {
            g.figures.push(Figure::plain("lowest SM clock", f64::from(c), "MHz"));
        }
        let mask = ticks.iter().filter_map(|t| t.throttle_mask).fold(0, |a, m| a | m);
        if crate::telemetry::throttle::is_limiting(mask) {
            g.verdict = Verdict::Warn;
            g.summary = format!(
                "results correct, but the clocks were held back: {}",
                crate::telemetry::throttle::summary(mask)
            );
            g.details.extend(crate::telemetry::throttle::sentences(mask));
            g.next_step = Some(THROTTLE_ADVICE.to_string());
        }
        Ok(g)
    }

    fn read_sensors(&self, tick: &mut BurnTick) {
        let (Some(nvml), Some(i)) = (&self.nvml, self.nvml_index) else { return };
        let Ok(d) = nvml.device_by_index(i) else { return };
        tick.sm_clock_mhz = d.clock_info(Clock::SM).ok();
        tick.temperature_c = d.temperature(TemperatureSensor::Gpu).ok();
        tick.power_w = d.power_usage().ok().map(|mw| f64::from(mw) / 1000.0);
        tick.throttle_mask = d.current_throttle_reasons().ok().map(|r| r.bits());
    }
}

/// Runs `copy` once to warm up, then COPY_REPS times; returns GB/s for `bytes` per copy.
fn timed_copies(mut copy: impl FnMut() -> Result<(), CuErr>, bytes: usize) -> Result<f64, CuErr> {
    copy()?;
    let t0 = Instant::now();
    for _ in 0..COPY_REPS {
        copy()?;
    }
    let t = t0.elapsed().as_secs_f64().max(1e-9);
    Ok((COPY_REPS * bytes) as f64 / t / 1e9)
}

fn launch_sgemm_async(
    f: sys::CUfunction,
    n: usize,
    a: sys::CUdeviceptr,
    b: sys::CUdeviceptr,
    c: sys::CUdeviceptr,
) -> Result<(), CuErr> {
    let mut n_i = n as i32;
    let (mut pa, mut pb, mut pc) = (a, b, c);
    let mut params: [*mut c_void; 4] =
        [(&raw mut n_i).cast(), (&raw mut pa).cast(), (&raw mut pb).cast(), (&raw mut pc).cast()];
    let g = n.div_ceil(16) as u32;
    // SAFETY: parameters match sgemm(int, const float*, const float*, float*); the buffers hold
    // n*n floats; the driver copies the parameters at launch.
    ck(
        unsafe {
            sys::cuLaunchKernel(
                f,
                g,
                g,
                1,
                16,
                16,
                1,
                0,
                std::ptr::null_mut(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        },
        "cuLaunchKernel",
    )
}

/// Launches `reps` GEMMs and waits; returns seconds.
fn launch_sgemm(
    f: sys::CUfunction,
    n: usize,
    a: sys::CUdeviceptr,
    b: sys::CUdeviceptr,
    c: sys::CUdeviceptr,
    reps: usize,
) -> Result<f64, CuErr> {
    let t0 = Instant::now();
    for _ in 0..reps {
        launch_sgemm_async(f, n, a, b, c)?;
    }
    // SAFETY: no arguments.
    ck(unsafe { sys::cuCtxSynchronize() }, "cuCtxSynchronize")?;
    Ok(t0.elapsed().as_secs_f64())
}

fn launch_compare(
    f: sys::CUfunction,
    n: usize,
    a: sys::CUdeviceptr,
    b: sys::CUdeviceptr,
    errors: sys::CUdeviceptr,
) -> Result<(), CuErr> {
    let mut n_i = n as i32;
    let (mut pa, mut pb, mut pe) = (a, b, errors);
    let mut params: [*mut c_void; 4] =
        [(&raw mut n_i).cast(), (&raw mut pa).cast(), (&raw mut pb).cast(), (&raw mut pe).cast()];
    // Parameters match count_mismatches(int, const float*, const float*, unsigned*).
    launch_1d(f, n.div_ceil(256).min(65_535) as u32, &mut params)
}

/// Launches a kernel on a 1-D grid of 256-thread blocks and returns without waiting.
fn launch_1d(f: sys::CUfunction, blocks: u32, params: &mut [*mut c_void]) -> Result<(), CuErr> {
    // SAFETY: every caller passes a function of this module's PTX with `params` pointing at live
    // values of the kernel's parameter types; the driver copies them at launch.
    ck(
        unsafe {
            sys::cuLaunchKernel(
                f,
                blocks,
                1,
                1,
                256,
                1,
                1,
                0,
                std::ptr::null_mut(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        },
        "cuLaunchKernel",
    )
}

/// Checks C = A B with Freivalds' method (C r against A (B r) for a random ±1 vector r, in f64),
/// which catches any single wrong element bigger than the rounding noise, in O(n²). Returns a
/// description of the first wrong element, located exactly.
pub fn check_gemm(n: usize, a: &[f32], b: &[f32], c: &[f32]) -> Option<String> {
    let r: Vec<f64> = (0..n).map(|j| if (j.wrapping_mul(2_654_435_761) >> 7) & 1 == 0 { 1.0 } else { -1.0 }).collect();
    let br: Vec<f64> = (0..n).map(|k| (0..n).map(|j| f64::from(b[k * n + j]) * r[j]).sum()).collect();
    for i in 0..n {
        let row = &c[i * n..(i + 1) * n];
        let cr: f64 = row.iter().zip(&r).map(|(c, r)| f64::from(*c) * r).sum();
        let abr: f64 = (0..n).map(|k| f64::from(a[i * n + k]) * br[k]).sum();
        let scale: f64 = row.iter().map(|c| f64::from(c.abs())).sum();
        if (cr - abr).abs() > 1e-5 * scale + 1e-3 || !cr.is_finite() {
            // Locate the column: recompute this row exactly.
            let (mut worst, mut col, mut want) = (-1.0f64, 0, 0.0f64);
            for j in 0..n {
                let exact: f64 = (0..n).map(|k| f64::from(a[i * n + k]) * f64::from(b[k * n + j])).sum();
                let d = (f64::from(row[j]) - exact).abs();
                if d > worst || d.is_nan() {
                    (worst, col, want) = (d, j, exact);
                }
            }
            return Some(format!(
                "the matrix product is wrong at row {i}, column {col}: {} instead of {want:.4}",
                row[col]
            ));
        }
    }
    None
}

fn device_info(index: i32) -> Result<DeviceInfo, CuErr> {
    let mut dev = 0;
    let mut name = [0 as std::ffi::c_char; 256];
    let mut bytes = 0usize;
    // SAFETY: valid out-pointers; the name buffer's length is passed.
    unsafe {
        ck(sys::cuDeviceGet(&mut dev, index), "cuDeviceGet")?;
        ck(sys::cuDeviceGetName(name.as_mut_ptr(), name.len() as i32, dev), "cuDeviceGetName")?;
        ck(sys::cuDeviceTotalMem_v2(&mut bytes, dev), "cuDeviceTotalMem")?;
    }
    // SAFETY: the driver NUL-terminates within the buffer; the last byte is NUL-initialised and
    // never written past `len`.
    let name = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned();
    use sys::CUdevice_attribute as A;
    let attr = |a: A| -> Result<i32, CuErr> {
        let mut v = 0;
        // SAFETY: valid out-pointer.
        ck(unsafe { sys::cuDeviceGetAttribute(&mut v, a, dev) }, "cuDeviceGetAttribute")?;
        Ok(v)
    };
    let (domain, bus, device) = (
        attr(A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)?,
        attr(A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)?,
        attr(A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)?,
    );
    Ok(DeviceInfo {
        index: index as u32,
        name,
        compute_capability: [
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        ],
        sms: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        memory_bytes: bytes as u64,
        pci_bus_id: format!("{domain:04x}:{bus:02x}:{device:02x}.0"),
        clock_khz: attr(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)?,
        memory_clock_khz: attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)?,
        bus_width_bits: attr(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?,
    })
}

fn open_nvml(library: Option<&std::path::Path>) -> Result<Nvml, String> {
    let paths = match library {
        Some(p) => vec![p.to_string_lossy().into_owned()],
        None => crate::telemetry::nvml::candidates(),
    };
    let mut first: Option<String> = None;
    for p in paths {
        match Nvml::builder().lib_path(std::ffi::OsStr::new(&p)).init() {
            Ok(n) => return Ok(n),
            // A library that loads but fails says more than a missing file.
            Err(nvml_wrapper::error::NvmlError::LibloadingError(e)) => {
                first.get_or_insert_with(|| format!("{p}: {e}"));
            }
            Err(e) => return Err(format!("{p}: {e}")),
        }
    }
    Err(first.unwrap_or_else(|| "no library to try".to_string()))
}

/// NVML's index of the GPU at a PCI address ("0000:17:00.0"); NVML and CUDA number GPUs
/// differently (CUDA puts the fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID).
fn nvml_index_for(nvml: &Nvml, pci: &str) -> Option<u32> {
    let count = nvml.device_count().ok()?;
    (0..count).find(|&i| {
        nvml.device_by_index(i)
            .ok()
            .and_then(|d| d.pci_info().ok())
            .is_some_and(|p| format!("{:04x}:{:02x}:{:02x}.0", p.domain, p.bus, p.device) == pci)
    })
}

/// The file a code address belongs to, from /proc/self/maps (Linux).
fn library_path_of(addr: usize) -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().find_map(|line| {
        let mut parts = line.split_whitespace();
        let (lo, hi) = parts.next()?.split_once('-')?;
        let (lo, hi) = (usize::from_str_radix(lo, 16).ok()?, usize::from_str_radix(hi, 16).ok()?);
        let path = parts.nth(4)?;
        (lo <= addr && addr < hi && path.starts_with('/')).then(|| path.to_string())
    })
}

fn cuda_version_text(v: i32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

fn gib(bytes: usize) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

fn mib(bytes: usize) -> String {
    format!("{} MiB", bytes >> 20)
}

/// 16777216 -> "16,777,216".
fn group(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn panic_failure() -> Failure {
    let msg = LAST_PANIC.lock().ok().and_then(|mut p| p.take()).unwrap_or_else(|| "unknown".to_string());
    if let Some(rest) = msg.strip_prefix("Missing symbol ") {
        let symbol = rest.split(':').next().unwrap_or(rest).to_string();
        return Failure::new(
            Some("INSUFFICIENT_DRIVER".to_string()),
            format!("the driver library has no {symbol}: it is older than this test needs"),
            "Update the NVIDIA driver; the installed libcuda is too old (or is not NVIDIA's).",
        );
    }
    if msg.contains("Unable to dynamically load") {
        let (summary, next) = missing_library_advice();
        return Failure::new(Some(NOT_FOUND.to_string()), summary, next);
    }
    Failure::new(None, format!("internal error: {msg}"), REPORT_BUG)
}

fn wrong_result(summary: String) -> Failure {
    Failure::new(Some("WRONG_RESULT".to_string()), summary, WRONG_RESULT_ADVICE)
}

/// The failure for a driver call, with the next step for its error code.
fn cuda_failure(stage: Stage, e: &CuErr, t: &Test) -> Failure {
    let mut f = Failure::new(Some(e.name.clone()), format!("{} failed: {}", e.call, e.name), "");
    f.next_step = match e.code {
        2 => format!(
            "The GPU has too little free memory{}. Close other programs using it (the Monitor lists them), then run the test again.",
            if stage == Stage::Context { " even for a context" } else { "" }
        ),
        34 => STUB_ADVICE.to_string(),
        100 => no_device_advice(),
        209 => "The driver has no code for this GPU; it is likely too old for this GPU model. Update the NVIDIA driver.".to_string(),
        218 | 300 => format!("The driver's JIT compiler rejected the test's PTX. {REPORT_BUG}"),
        222 => format!(
            "The driver's JIT compiler is older than the kernels' PTX (ISA 6.0, CUDA 9.0){}. Update the NVIDIA driver. If the driver is new, a CUDA forward-compatibility libcuda (/usr/local/cuda/compat) that does not match it may be on the library path: remove it.",
            t.driver_cuda.as_ref().map(|c| format!("; this driver supports CUDA {c}")).unwrap_or_default()
        ),
        700 | 716 | 719 => "The GPU faulted while running the test kernel. Check the kernel log for Xid errors (sudo dmesg | grep -i xid), remove overclocks, and reset or reboot; if it repeats, the card needs service.".to_string(),
        code => {
            let (_, meaning) = crate::diagnose::checks::cu_result(code as i32);
            format!("{meaning} Run the Checklist (gpu-doctor-cli check) for the cause.")
        }
    };
    f
}

/// The error name when no driver library could be loaded.
const NOT_FOUND: &str = "LIBRARY_NOT_FOUND";

const STUB_ADVICE: &str = "The CUDA toolkit's stub libcuda (in a .../stubs directory, only for linking) was loaded instead of the driver's. Remove the stubs directory from LD_LIBRARY_PATH, and install the NVIDIA driver if there is none.";

const REPORT_BUG: &str = "This is a gpu-doctor bug: please report it with this output.";

const WRONG_RESULT_ADVICE: &str = "The GPU computed a wrong answer: a sign of failing hardware or unstable clocks. Remove any overclock, check the kernel log for Xid errors (48, 63, 64, 94, 95: memory) and the ECC and row-remapping counters (gpu-doctor-cli check), then run a longer burn (--burn 120). If wrong results repeat, have the card serviced.";

const LINK_ADVICE: &str = "The GPU runs on fewer PCIe lanes or a slower generation than it supports. Use a full x16 slot wired to the CPU (not the chipset), avoid risers and x4/x8 adapters, reseat the card, and check the BIOS PCIe settings.";

const SLOW_COPY_ADVICE: &str = "Host copies are far below the link's speed. Close other programs copying to the GPU, keep the process on the CPU socket next to the GPU (numactl --cpunodebind), check the BIOS PCIe and IOMMU settings, and compare with the slot's wiring in the mainboard manual.";

const SLOW_MEMORY_ADVICE: &str = "GPU memory is far slower than its specification. Look at the memory clock and throttle reasons in the Monitor while the test runs, check that no other program uses the GPU, and that no power or clock limit is set (nvidia-smi -q -d CLOCK,POWER).";

const THROTTLE_ADVICE: &str = "Look at the reasons above: thermal limits need airflow and clean fans, power limits a power limit at the board's default (nvidia-smi -q -d POWER) and sound power cabling.";

/// Summary and next step when no CUDA driver library can be loaded, for this kind of machine.
fn missing_library_advice() -> (String, String) {
    let wsl = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .is_ok_and(|r| r.to_lowercase().contains("microsoft"))
        || std::path::Path::new("/dev/dxg").exists();
    let container = std::path::Path::new("/.dockerenv").exists() || std::path::Path::new("/run/.containerenv").exists();
    missing_library_text(cfg!(windows), wsl, container)
}

fn missing_library_text(windows: bool, wsl: bool, container: bool) -> (String, String) {
    if windows {
        return (
            "nvcuda.dll, the NVIDIA driver's CUDA library, was not found".to_string(),
            "Install the NVIDIA driver for this GPU (from NVIDIA or Windows Update); the CUDA toolkit alone is not enough.".to_string(),
        );
    }
    let summary = "no CUDA driver library (libcuda.so.1) could be loaded".to_string();
    let next = if wsl {
        "In WSL the library comes from the Windows driver, in /usr/lib/wsl/lib. Make it visible: export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH (or run sudo ldconfig), keep the Windows NVIDIA driver current, and do not install a Linux NVIDIA driver inside WSL."
    } else if container {
        "This container has no GPU driver library: the GPU was not passed in. Start it with --gpus all (Docker with the NVIDIA Container Toolkit), or request nvidia.com/gpu in Kubernetes."
    } else {
        "Install the NVIDIA driver (Ubuntu: sudo ubuntu-drivers install; or the libnvidia-compute package of your driver branch). Check with: ldconfig -p | grep libcuda. The CUDA toolkit alone does not provide it."
    };
    (summary, next.to_string())
}

fn no_device_advice() -> String {
    let visible = std::env::var("CUDA_VISIBLE_DEVICES").ok();
    let mut s = String::from("CUDA sees no GPU. ");
    match visible.as_deref() {
        Some(v) => s.push_str(&format!("CUDA_VISIBLE_DEVICES is set to '{v}': unset it or list a GPU that exists. ")),
        None => s.push_str("Check that the driver is loaded (nvidia-smi), that /dev/nvidia* exist and are accessible, and in a container that it was started with --gpus all. "),
    }
    s.push_str("The Checklist (gpu-doctor-cli check) finds which.");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn product(n: usize, a: &[f32], b: &[f32]) -> Vec<f32> {
        let mut c = vec![0f32; n * n];
        for i in 0..n {
            for k in 0..n {
                for j in 0..n {
                    c[i * n + j] += a[i * n + k] * b[k * n + j];
                }
            }
        }
        c
    }

    #[test]
    fn freivalds_accepts_a_right_product_and_finds_a_wrong_element() {
        let n = 64;
        let a: Vec<f32> = (0..n * n).map(|i| ((i * 37 % 101) as f32 / 50.0) - 1.0).collect();
        let b: Vec<f32> = (0..n * n).map(|i| ((i * 53 % 97) as f32 / 48.0) - 1.0).collect();
        let mut c = product(n, &a, &b);
        assert_eq!(check_gemm(n, &a, &b, &c), None);
        c[5 * n + 9] += 0.25;
        let msg = check_gemm(n, &a, &b, &c).unwrap_or_default();
        assert!(msg.contains("row 5, column 9"), "{msg}");
        c[5 * n + 9] = f32::NAN;
        assert!(check_gemm(n, &a, &b, &c).is_some());
    }

    #[test]
    fn missing_library_advice_fits_the_machine() {
        assert!(missing_library_text(false, true, false).1.contains("/usr/lib/wsl/lib"));
        assert!(missing_library_text(false, false, true).1.contains("--gpus all"));
        assert!(missing_library_text(false, false, false).1.contains("ldconfig -p | grep libcuda"));
        assert!(missing_library_text(true, false, false).0.contains("nvcuda.dll"));
        // WSL inside a container is still WSL: the library path is the fix.
        assert!(missing_library_text(false, true, true).1.contains("/usr/lib/wsl/lib"));
    }

    #[test]
    fn groups_thousands() {
        assert_eq!(group(16_777_216), "16,777,216");
        assert_eq!(group(999), "999");
    }

    #[test]
    fn finds_the_library_of_an_address() {
        let here = finds_the_library_of_an_address as fn() as usize;
        let path = library_path_of(here).unwrap_or_default();
        assert!(!path.is_empty());
    }
}
