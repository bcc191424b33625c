//! The sequence of the smoke test's stages ([`Stage::plan`]), each timed, run under
//! `catch_unwind` and reported, and the setup stages: load the driver library, `cuInit`, list the
//! GPUs (and find the tested one in NVML), create the context, JIT-compile the PTX, allocate the
//! buffers, and release everything at the end. The measured stages are in `workload`.

use crate::i18n::Message;
use std::ffi::{CString, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use cudarc::driver::sys;
use nvml_wrapper::Nvml;

use super::advice::{self, NOT_FOUND, REPORT_BUG, STUB_ADVICE};
use super::cuda::{CuErr, ck, cuda_failure, cuda_version_text, device_info, library_path_of, panic_failure};
use super::{COPY_BYTES, D2D_BYTES, Emitter, Failure, Good, Test};
use crate::smoke::{GEMM_N, MIN_DRIVER_CUDA, Msg, PTX, SAXPY_ELEMENTS, Stage, StageResult, buffer_text, memory_text};
use crate::verdict::Verdict;

impl Test {
    /// Runs the planned stages until one fails; false when one did.
    pub(super) fn run_all(&mut self, em: &mut Emitter) -> bool {
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
                    None => Ok(Good::pass(crate::msg!("memory, kernels and context released"))),
                    Some(e) => Err(cuda_failure(Stage::Release, &e, self)),
                }
            }
        }
    }

    fn load(&mut self, em: &mut Emitter) -> Result<Good, Failure> {
        if let Some(path) = &self.opts.cuda_lib {
            // SAFETY: loading the driver library runs its initialisers, as any CUDA program does.
            match unsafe { libloading::Library::new(path) } {
                // A library that loads but has no cuInit is not the CUDA driver: say so about
                // the file named, rather than falling back to the standard names.
                // SAFETY: looking up a symbol's address, not calling it.
                Ok(lib) if unsafe { lib.get::<*const c_void>(b"cuInit\0") }.is_err() => {
                    return Err(Failure::new(
                        Some(NOT_FOUND.to_string()),
                        crate::msg!(
                            "{path} is a shared library but not the CUDA driver: it has no cuInit",
                            path = path.display()
                        ),
                        crate::i18n::Message::new(advice::CUDA_LIB_ADVICE),
                    ));
                }
                // Keep it loaded for the whole process: cudarc finds it by its soname.
                Ok(lib) => std::mem::forget(lib),
                Err(e) => {
                    let what = if std::fs::symlink_metadata(path).is_err() {
                        crate::msg!("{path} does not exist", path = path.display())
                    } else if e.to_string().contains("invalid ELF header") || e.to_string().contains("file too short") {
                        crate::msg!("{path} is not a shared library", path = path.display())
                    } else {
                        crate::msg!("could not load {path}: {error}", path = path.display(), error = e)
                    };
                    return Err(Failure::new(
                        Some(NOT_FOUND.to_string()),
                        what,
                        crate::i18n::Message::new(advice::CUDA_LIB_ADVICE),
                    ));
                }
            }
        }
        // SAFETY: dlopen of the candidate names, as cudarc itself does; nothing is called yet.
        if !unsafe { sys::is_culib_present() } {
            let (summary, next) = advice::missing_library_advice();
            return Err(Failure::new(Some(NOT_FOUND.to_string()), summary, next));
        }
        // SAFETY: the library is present (checked above), so this does not panic; it loads it once.
        let lib = unsafe { sys::culib() };
        // SAFETY: looking up a symbol's address, not calling it.
        let addr = unsafe { lib.get::<*const c_void>(b"cuInit\0") }.ok().map(|s| *s as usize);
        let path = addr.and_then(library_path_of);
        em.send(&Msg::Driver { library: path.clone(), cuda: None });
        let shown = path.clone().map_or_else(|| crate::msg!("the CUDA driver library"), Message::data);
        if path.as_deref().is_some_and(|p| p.contains("/stubs/")) {
            return Err(Failure::new(
                Some("CUDA_ERROR_STUB_LIBRARY".to_string()),
                crate::msg!("{library} is the CUDA toolkit's stub, not the driver's library", library = shown),
                crate::i18n::Message::new(STUB_ADVICE),
            ));
        }
        if let (Some(wanted), Some(p)) = (&self.opts.cuda_lib, &path) {
            let wanted = std::fs::canonicalize(wanted).unwrap_or_else(|_| wanted.clone());
            let got = std::fs::canonicalize(p).unwrap_or_else(|_| p.into());
            if wanted != got {
                return Ok(Good {
                    verdict: Verdict::Warn,
                    summary: crate::msg!(
                        "loaded {got} instead of {wanted}",
                        got = got.display(),
                        wanted = wanted.display()
                    ),
                    figures: Vec::new(),
                    details: Vec::new(),
                    next_step: Some(crate::i18n::Message::new(advice::OTHER_LIBRARY_ADVICE)),
                });
            }
        }
        Ok(Good::pass(crate::msg!("loaded {library}", library = shown)))
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
                crate::msg!(
                    "the driver supports CUDA {cuda}; the test's kernels need CUDA {min} or newer",
                    cuda = cuda,
                    min = cuda_version_text(MIN_DRIVER_CUDA)
                ),
                crate::i18n::Message::new(advice::OLD_DRIVER_ADVICE),
            ));
        }
        Ok(Good::pass(crate::msg!("cuInit succeeded; the driver supports CUDA {cuda}", cuda = cuda)))
    }

    fn devices(&mut self, em: &mut Emitter) -> Result<Good, Failure> {
        let fail = |e: CuErr, t: &Test| cuda_failure(Stage::Devices, &e, t);
        let mut count = 0;
        // SAFETY: valid out-pointer.
        ck(unsafe { sys::cuDeviceGetCount(&mut count) }, "cuDeviceGetCount").map_err(|e| fail(e, self))?;
        if count <= 0 {
            return Err(Failure::new(
                Some("CUDA_ERROR_NO_DEVICE".to_string()),
                crate::msg!("CUDA sees no GPU"),
                advice::no_device_advice(),
            ));
        }
        let mut list = Vec::new();
        for i in 0..count {
            list.push(device_info(i).map_err(|e| fail(e, self))?);
        }
        em.send(&Msg::Devices { devices: list.clone() });
        let mut details: Vec<Message> = list
            .iter()
            .map(|d| crate::msg!("{label}: {value}", label = d.index, value = d.line_in(self.opts.units)))
            .collect();
        let Some(dev) = list.iter().find(|d| d.index == self.opts.device).cloned() else {
            return Err(Failure::new(
                Some("CUDA_ERROR_INVALID_DEVICE".to_string()),
                crate::msg!(
                    "there is no CUDA device {device}; CUDA sees {count}",
                    device = self.opts.device,
                    count = count
                ),
                advice::invalid_device_advice(count),
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
                    Some(i) => details.push(crate::msg!(
                        "NVML: GPU {nvml} is CUDA device {cuda} (PCI {pci})",
                        nvml = i,
                        cuda = dev.index,
                        pci = dev.pci_bus_id
                    )),
                    None => details.push(crate::msg!(
                        "NVML: no GPU at PCI {pci}; link and clock readings unavailable",
                        pci = dev.pci_bus_id
                    )),
                }
                self.nvml = Some(nvml);
            }
            Err(why) => details.push(crate::msg!(
                "NVML not available ({why}): the PCIe link limit and clocks are not read",
                why = why
            )),
        }
        let summary = if count == 1 {
            crate::msg!("{count} GPU; testing {index}: {name}", count = count, index = dev.index, name = dev.name)
        } else {
            crate::msg!("{count} GPUs; testing {index}: {name}", count = count, index = dev.index, name = dev.name)
        };
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
        let u = self.opts.units;
        Ok(Good::pass(crate::msg!(
            "context ready; {free} free of {total}",
            free = memory_text(free as u64, u),
            total = memory_text(total as u64, u)
        )))
    }

    fn module(&mut self) -> Result<Good, Failure> {
        let image = CString::new(PTX).map_err(|_| {
            Failure::new(None, crate::msg!("the embedded PTX holds a NUL byte"), crate::i18n::Message::new(REPORT_BUG))
        })?;
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
                f.details.push(crate::msg!("JIT log: {log}", log = text));
            }
            return Err(f);
        }
        self.gpu.module = Some(module);
        for (name, slot) in [("saxpy", 0), ("sgemm", 1), ("count_mismatches", 2)] {
            let mut f: sys::CUfunction = std::ptr::null_mut();
            let cname = CString::new(name).map_err(|_| {
                Failure::new(None, crate::msg!("bad kernel name"), crate::i18n::Message::new(REPORT_BUG))
            })?;
            // SAFETY: the module was loaded above; valid out-pointer and name.
            ck(unsafe { sys::cuModuleGetFunction(&mut f, module, cname.as_ptr()) }, "cuModuleGetFunction")
                .map_err(|e| cuda_failure(Stage::Module, &e, self))?;
            match slot {
                0 => self.gpu.saxpy = Some(f),
                1 => self.gpu.sgemm = Some(f),
                _ => self.gpu.compare = Some(f),
            }
        }
        Ok(Good::pass(crate::msg!("PTX (ISA 6.0, sm_50) JIT-compiled for this GPU; 3 kernels found")))
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
        let u = self.opts.units;
        let (need_t, free_t, total_t) =
            (buffer_text(need as u64, u), memory_text(free as u64, u), memory_text(total as u64, u));
        for (name, bytes) in plan.into_iter().chain([("dst", d2d)]) {
            let mut p: sys::CUdeviceptr = 0;
            // SAFETY: valid out-pointer; freed in Gpu::release.
            if let Err(e) = ck(unsafe { sys::cuMemAlloc_v2(&mut p, bytes) }, "cuMemAlloc") {
                let mut f = cuda_failure(Stage::Alloc, &e, self);
                f.summary = crate::msg!(
                    "{error} while allocating {need} ({free} free of {total})",
                    error = f.summary,
                    need = need_t,
                    free = free_t,
                    total = total_t
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
        let mut g = Good::pass(crate::msg!(
            "{need} on the GPU and {pinned} of pinned host memory",
            need = need_t,
            pinned = buffer_text(COPY_BYTES as u64, u)
        ));
        g.details.push(crate::msg!("{free} free of {total} before allocating", free = free_t, total = total_t));
        Ok(g)
    }
}

/// Loads NVML from `library`, else from the usual places.
fn open_nvml(library: Option<&std::path::Path>) -> Result<Nvml, Message> {
    let paths = match library {
        Some(p) => vec![p.to_string_lossy().into_owned()],
        None => crate::telemetry::nvml::candidates(),
    };
    let mut first: Option<Message> = None;
    for p in paths {
        match Nvml::builder().lib_path(std::ffi::OsStr::new(&p)).init() {
            Ok(n) => return Ok(n),
            // A library that loads but fails says more than a missing file.
            Err(nvml_wrapper::error::NvmlError::LibloadingError(e)) => {
                first.get_or_insert_with(|| Message::data(format!("{p}: {e}")));
            }
            Err(e) => return Err(Message::data(format!("{p}: {e}"))),
        }
    }
    Err(first.unwrap_or_else(|| crate::msg!("no library to try")))
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
