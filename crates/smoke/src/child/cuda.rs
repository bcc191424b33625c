//! The driver-call helpers of the smoke test: checking a call's result ([`ck`]) and turning a
//! failed call into a stage failure ([`cuda_failure`]), cudarc's panics into failures
//! ([`record_panics`], [`panic_failure`]), the GPU-side objects and their release ([`Gpu`]),
//! timed copies and kernel launches, and reading a device's facts.

use std::ffi::c_void;
use std::sync::Mutex;
use std::time::Instant;

use cudarc::driver::sys;

use super::advice;
use super::{COPY_REPS, Failure, Test};
use crate::smoke::{DeviceInfo, Stage};

/// The last panic message on this process, for turning cudarc's panics into stage failures.
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Keeps each panic's message (instead of printing it) for [`panic_failure`]; stages run under
/// `catch_unwind`.
pub(super) fn record_panics() {
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
}

/// The failure for a stage that panicked: cudarc's "Missing symbol" and "Unable to dynamically
/// load" panics are a too-old or missing driver library; anything else is a bug.
pub(super) fn panic_failure() -> Failure {
    let msg = LAST_PANIC.lock().ok().and_then(|mut p| p.take()).unwrap_or_else(|| "unknown".to_string());
    if let Some(rest) = msg.strip_prefix("Missing symbol ") {
        let symbol = rest.split(':').next().unwrap_or(rest).to_string();
        return Failure::new(
            Some("INSUFFICIENT_DRIVER".to_string()),
            crate::msg!("the driver library has no {symbol}: it is older than this test needs", symbol = symbol),
            crate::i18n::Message::new(advice::OLD_LIBRARY_ADVICE),
        );
    }
    if msg.contains("Unable to dynamically load") {
        let (summary, next) = advice::missing_library_advice();
        return Failure::new(Some(advice::NOT_FOUND.to_string()), summary, next);
    }
    Failure::new(
        None,
        crate::msg!("internal error: {message}", message = msg),
        crate::i18n::Message::new(advice::REPORT_BUG),
    )
}

/// A failed driver call.
pub(super) struct CuErr {
    /// The call, e.g. "cuMemAlloc".
    pub(super) call: &'static str,
    /// Its `CUresult` code.
    pub(super) code: u32,
    /// The code's name, e.g. "CUDA_ERROR_OUT_OF_MEMORY".
    pub(super) name: String,
}

/// `Ok` for `CUDA_SUCCESS`, else the error of `call`.
pub(super) fn ck(r: sys::CUresult, call: &'static str) -> Result<(), CuErr> {
    if r == sys::CUresult::CUDA_SUCCESS { Ok(()) } else { Err(CuErr { call, code: r as u32, name: format!("{r:?}") }) }
}

/// The failure for a driver call, with the next step for its error code.
pub(super) fn cuda_failure(stage: Stage, e: &CuErr, t: &Test) -> Failure {
    Failure::new(
        Some(e.name.clone()),
        crate::msg!("{call} failed: {error}", call = e.call, error = e.name),
        advice::for_cuda_error(e.code, stage, t.driver_cuda.as_deref()),
    )
}

/// What the GPU-side objects are, for the release at the end.
#[derive(Default)]
pub(super) struct Gpu {
    /// The tested device.
    pub(super) dev: Option<sys::CUdevice>,
    /// Its primary context, retained.
    pub(super) ctx: Option<sys::CUcontext>,
    /// The kernels' module.
    pub(super) module: Option<sys::CUmodule>,
    /// `saxpy(int, float, const float*, float*)`.
    pub(super) saxpy: Option<sys::CUfunction>,
    /// `sgemm(int, const float*, const float*, float*)`.
    pub(super) sgemm: Option<sys::CUfunction>,
    /// `count_mismatches(int, const float*, const float*, unsigned*)`.
    pub(super) compare: Option<sys::CUfunction>,
    /// Device buffers: name, pointer, bytes.
    pub(super) device_buffers: Vec<(&'static str, sys::CUdeviceptr, usize)>,
    /// The pinned host buffer and its bytes.
    pub(super) pinned: Option<(*mut c_void, usize)>,
}

impl Gpu {
    /// The device buffer of this name (0 when there is none).
    pub(super) fn buffer(&self, name: &str) -> sys::CUdeviceptr {
        self.device_buffers.iter().find(|b| b.0 == name).map_or(0, |b| b.1)
    }

    /// The size of the device buffer of this name (0 when there is none).
    pub(super) fn bytes(&self, name: &str) -> usize {
        self.device_buffers.iter().find(|b| b.0 == name).map_or(0, |b| b.2)
    }

    /// Frees everything that exists; errors are ignored (the process ends next).
    pub(super) fn release(&mut self) -> Vec<CuErr> {
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

/// Runs `copy` once to warm up, then COPY_REPS times; returns GB/s for `bytes` per copy.
pub(super) fn timed_copies(mut copy: impl FnMut() -> Result<(), CuErr>, bytes: usize) -> Result<f64, CuErr> {
    copy()?;
    let t0 = Instant::now();
    for _ in 0..COPY_REPS {
        copy()?;
    }
    let t = t0.elapsed().as_secs_f64().max(1e-9);
    Ok((COPY_REPS * bytes) as f64 / t / 1e9)
}

/// Launches one n x n GEMM (C = A B) and returns without waiting.
pub(super) fn launch_sgemm_async(
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
pub(super) fn launch_sgemm(
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

/// Launches the kernel that adds the number of elements where `a` and `b` differ (bit for bit)
/// to the counter at `errors`; returns without waiting.
pub(super) fn launch_compare(
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
pub(super) fn launch_1d(f: sys::CUfunction, blocks: u32, params: &mut [*mut c_void]) -> Result<(), CuErr> {
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

/// The facts of CUDA device `index`.
pub(super) fn device_info(index: i32) -> Result<DeviceInfo, CuErr> {
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

/// The file a code address belongs to: the module holding it (Windows).
#[cfg(windows)]
pub(super) fn library_path_of(addr: usize) -> Option<String> {
    use windows_sys::Win32::System::LibraryLoader::{
        GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS, GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT, GetModuleFileNameW,
        GetModuleHandleExW,
    };
    let mut module = std::ptr::null_mut();
    let mut buf = vec![0u16; 32768];
    // SAFETY: with FROM_ADDRESS the "name" is an address inside a module (not dereferenced as a
    // string); UNCHANGED_REFCOUNT takes no reference to release. The buffer's length is passed.
    let n = unsafe {
        if GetModuleHandleExW(
            GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
            addr as *const u16,
            &mut module,
        ) == 0
        {
            return None;
        }
        GetModuleFileNameW(module, buf.as_mut_ptr(), buf.len() as u32)
    };
    (n > 0 && (n as usize) < buf.len()).then(|| String::from_utf16_lossy(&buf[..n as usize]))
}

/// The file a code address belongs to, from /proc/self/maps (Linux).
#[cfg(not(windows))]
pub(super) fn library_path_of(addr: usize) -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().find_map(|line| {
        let mut parts = line.split_whitespace();
        let (lo, hi) = parts.next()?.split_once('-')?;
        let (lo, hi) = (usize::from_str_radix(lo, 16).ok()?, usize::from_str_radix(hi, 16).ok()?);
        let path = parts.nth(4)?;
        (lo <= addr && addr < hi && path.starts_with('/')).then(|| path.to_string())
    })
}

/// 12040 -> "12.4".
pub(super) fn cuda_version_text(v: i32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_library_of_an_address() {
        let here = finds_the_library_of_an_address as fn() as usize;
        let path = library_path_of(here).unwrap_or_default();
        assert!(!path.is_empty());
    }
}
