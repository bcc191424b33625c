//! The measured stages of the smoke test: host<->GPU copies (pinned and pageable, with the PCIe
//! link watched), saxpy, the SGEMM, copies within GPU memory, and the burn with its sensor
//! readings. Each verifies what came back (see `verify`) and judges its figures against the
//! hardware's limits.

use crate::i18n::Message;
use std::ffi::c_void;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use cudarc::driver::sys;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};

use super::advice::{LINK_ADVICE, SLOW_COPY_ADVICE, SLOW_MEMORY_ADVICE, THROTTLE_ADVICE};
use super::cuda::{CuErr, ck, cuda_failure, launch_1d, launch_compare, launch_sgemm, launch_sgemm_async, timed_copies};
use super::verify::{check_burn, check_gemm, check_round_trip, check_saxpy, group, wrong_result};
use super::{Emitter, Failure, Good, Test};
use crate::smoke::{BurnTick, Figure, GEMM_N, Msg, SAXPY_ELEMENTS, Stage, buffer_text, limits};
use crate::units;
use crate::verdict::Verdict;

impl Test {
    pub(super) fn host_copy(&mut self) -> Result<Good, Failure> {
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
        if let Some(bad) = check_round_trip(pinned_bytes(), &pageable, self.opts.units) {
            return Err(wrong_result(bad));
        }
        let limit = max_link.and_then(|(g, w)| limits::pcie_gbs(g, w).map(|l| (l, format!("PCIe Gen{g} x{w}"))));
        let fig = |label: Message, v: f64| Figure {
            label,
            value: v,
            unit: "GB/s".to_string(),
            limit: limit.as_ref().map(|l| l.0),
            limit_label: limit.as_ref().map(|l| Message::data(&l.1)),
        };
        let figures = vec![
            fig(crate::msg!("pinned host to GPU"), h2d_pinned),
            fig(crate::msg!("pinned GPU to host"), d2h_pinned),
            fig(crate::msg!("pageable host to GPU"), h2d),
            fig(crate::msg!("pageable GPU to host"), d2h),
        ];
        let summary =
            crate::msg!("{size} copies verified in both directions", size = buffer_text(n as u64, self.opts.units));
        let mut g = Good { figures, ..Good::pass(summary) };
        let seen = current.lock().map(|c| *c).unwrap_or((0, 0));
        if let Some((mg, mw)) = max_link {
            if seen.0 > 0 {
                g.details.push(crate::msg!(
                    "PCIe link during the copies: Gen{cur_gen} x{cur_width} (the GPU and slot support Gen{max_gen} x{max_width})",
                    cur_gen = seen.0,
                    cur_width = seen.1,
                    max_gen = mg,
                    max_width = mw
                ));
            }
            if seen.0 > 0 && limits::pcie_gbs(seen.0, seen.1) < limits::pcie_gbs(mg, mw) {
                g.verdict = Verdict::Warn;
                g.summary = crate::msg!(
                    "the PCIe link stayed at Gen{cur_gen} x{cur_width} during the copies; it can run at Gen{max_gen} x{max_width}",
                    cur_gen = seen.0,
                    cur_width = seen.1,
                    max_gen = mg,
                    max_width = mw
                );
                g.next_step = Some(crate::i18n::Message::new(LINK_ADVICE));
            } else if let Some((l, what)) = &limit {
                let pct = 100.0 * h2d_pinned.min(d2h_pinned) / l;
                if pct < 50.0 {
                    g.verdict = Verdict::Warn;
                    g.summary = crate::msg!(
                        "pinned copies reach only {percent} of {what}",
                        percent = units::percent_in(crate::i18n::Lang::En, pct),
                        what = what
                    );
                    g.next_step = Some(crate::i18n::Message::new(SLOW_COPY_ADVICE));
                }
            }
        } else {
            g.details.push(crate::msg!(
                "PCIe limit unknown (NVML did not report the link); bandwidth shown without a limit"
            ));
        }
        Ok(g)
    }

    /// The link the GPU and slot support (NVML's maximum generation and width).
    fn max_link(&self) -> Option<(u32, u32)> {
        let d = self.nvml.as_ref()?.device_by_index(self.nvml_index?).ok()?;
        Some((d.max_pcie_link_gen().ok()?, d.max_pcie_link_width().ok()?))
    }

    /// The memory's peak bandwidth (GB/s) and what it is, when the device reports its clock.
    fn memory_limit(&self) -> (Option<f64>, Option<Message>) {
        let Some(d) = &self.device else { return (None, None) };
        match limits::memory_gbs(d.memory_clock_khz, d.bus_width_bits) {
            Some(l) => (Some(l), Some(crate::msg!("the memory's peak ({bits}-bit bus)", bits = d.bus_width_bits))),
            None => (None, None),
        }
    }

    pub(super) fn kernel(&mut self) -> Result<Good, Failure> {
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
        if let Some(bad) = check_saxpy(&y, &expected) {
            return Err(wrong_result(bad));
        }
        let (limit, limit_label) = self.memory_limit();
        let gbs = 12.0 * n as f64 / per_launch / 1e9;
        let mut g = Good::pass(crate::msg!("all {count} results correct", count = group(n)));
        g.figures.push(Figure {
            label: crate::msg!("saxpy memory traffic"),
            value: gbs,
            unit: "GB/s".into(),
            limit,
            limit_label,
        });
        g.figures.push(Figure::plain(crate::msg!("saxpy kernel time"), per_launch * 1000.0, "ms"));
        Ok(g)
    }

    pub(super) fn gemm(&mut self) -> Result<Good, Failure> {
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
        let mut g = Good::pass(crate::msg!("{n} x {n} product correct (checked against the CPU)", n = n));
        g.figures.push(Figure {
            label: crate::msg!("SGEMM throughput"),
            value: gflops,
            unit: "GFLOP/s".into(),
            limit: peak,
            limit_label: peak.map(|_| crate::msg!("FP32 peak")),
        });
        g.details.push(crate::msg!("A simple tiled kernel, not a tuned library: 10-40 % of the FP32 peak is normal."));
        Ok(g)
    }

    pub(super) fn device_copy(&mut self) -> Result<Good, Failure> {
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
            label: crate::msg!("{size} copy (read + write)", size = buffer_text(n as u64, self.opts.units)),
            value: gbs,
            unit: "GB/s".into(),
            limit,
            limit_label,
        };
        let pct = fig.percent();
        let mut g = Good { figures: vec![fig], ..Good::pass(crate::msg!("copies within GPU memory work")) };
        if let Some(p) = pct
            && p < 50.0
        {
            g.verdict = Verdict::Warn;
            g.summary = crate::msg!(
                "copies within GPU memory reach only {percent} of the memory's peak",
                percent = units::percent_in(crate::i18n::Lang::En, p)
            );
            g.next_step = Some(crate::i18n::Message::new(SLOW_MEMORY_ADVICE));
        }
        Ok(g)
    }

    pub(super) fn burn(&mut self, em: &mut Emitter) -> Result<Good, Failure> {
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
        if let Some(bad) = check_burn(errors, iterations, &ticks) {
            return Err(wrong_result(bad));
        }
        let mut g = Good::pass(crate::msg!(
            "{iterations} GEMMs in {duration}, all bit-identical to the verified result",
            iterations = iterations,
            duration = units::duration_words(secs)
        ));
        g.figures.push(Figure::plain(crate::msg!("mean SGEMM throughput"), mean_gflops, "GFLOP/s"));
        if let Some(t) = ticks.iter().filter_map(|t| t.temperature_c).max() {
            g.figures.push(Figure::plain(crate::msg!("hottest"), f64::from(t), "°C"));
        }
        if let Some(c) = ticks.iter().filter_map(|t| t.sm_clock_mhz).min() {
            g.figures.push(Figure::plain(crate::msg!("lowest SM clock"), f64::from(c), "MHz"));
        }
        let mask = ticks.iter().filter_map(|t| t.throttle_mask).fold(0, |a, m| a | m);
        if crate::telemetry::throttle::is_limiting(mask) {
            g.verdict = Verdict::Warn;
            g.summary = crate::msg!(
                "results correct, but the clocks were held back: {reasons}",
                reasons = crate::telemetry::throttle::summary_message(mask)
            );
            g.details.extend(crate::telemetry::throttle::sentence_messages(mask));
            g.next_step = Some(crate::i18n::Message::new(THROTTLE_ADVICE));
        }
        Ok(g)
    }

    /// Reads the SM clock, temperature, power and throttle reasons into `tick`, when NVML can.
    fn read_sensors(&self, tick: &mut BurnTick) {
        let (Some(nvml), Some(i)) = (&self.nvml, self.nvml_index) else { return };
        let Ok(d) = nvml.device_by_index(i) else { return };
        tick.sm_clock_mhz = d.clock_info(Clock::SM).ok();
        tick.temperature_c = d.temperature(TemperatureSensor::Gpu).ok();
        tick.power_w = d.power_usage().ok().map(|mw| f64::from(mw) / 1000.0);
        tick.throttle_mask = d.current_throttle_reasons().ok().map(|r| r.bits());
    }
}
