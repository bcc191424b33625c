//! The fit verdict: what of an estimate must fit on a GPU ([`need`]), and whether it does on a
//! given GPU, keeping [`HEADROOM`] ([`Target`], [`fit()`] → [`Fit`]). Shared by the `vram` command
//! and the app's VRAM tab.

use serde::Serialize;

use super::estimate::{Breakdown, GIB};
use super::workload::{Framework, Mode, Workload};

/// Per-GPU bytes that must fit for `s`: the whole total, except vLLM, which takes its
/// reservation anyway and only needs room for weights, activations and the requested KV cache.
pub fn need(b: &Breakdown, s: &Workload) -> f64 {
    if s.mode == Mode::Inference && s.framework == Framework::Vllm {
        b.weights + b.activations + b.framework + b.kv_cache
    } else {
        b.total
    }
}

/// A GPU to judge the estimate against.
#[derive(Clone, Debug, Serialize)]
pub struct Target {
    /// "GPU 0 NVIDIA GeForce RTX 4090" or "hypothetical 24 GiB GPU".
    pub name: String,
    /// Total memory, bytes.
    pub total: f64,
    /// Free right now, bytes (this machine only).
    pub free: Option<f64>,
}

/// How an estimate fits a GPU.
#[derive(Clone, Debug, Serialize)]
pub struct Fit {
    /// The GPU.
    pub target: Target,
    /// `fits`, `tight` (fits without the 20 % headroom), `does not fit now` (the total would do,
    /// the free memory does not), or `does not fit`.
    pub verdict: &'static str,
    /// Sentence.
    pub detail: String,
}

/// Headroom the calculator keeps: the 20-30 % rule of thumb for allocator fragmentation and
/// peaks the estimate does not model.
pub const HEADROOM: f64 = 0.2;

/// Judges `need` bytes per GPU against `t`.
pub fn fit(need: f64, t: &Target) -> Fit {
    let room = t.free.unwrap_or(t.total);
    let (verdict, detail) = if need <= room * (1.0 - HEADROOM) {
        (
            "fits",
            format!(
                "{:.1} GiB of {:.1} GiB{} with the 20 % headroom kept",
                need / GIB,
                room / GIB,
                if t.free.is_some() { " free" } else { "" }
            ),
        )
    } else if need <= room {
        (
            "tight",
            format!(
                "{:.1} GiB of {:.1} GiB{}: fits, but without the 20 % headroom a longer input or a second process can run out of memory",
                need / GIB,
                room / GIB,
                if t.free.is_some() { " free" } else { "" }
            ),
        )
    } else if need <= t.total {
        (
            "does not fit now",
            format!(
                "needs {:.1} GiB but only {:.1} GiB is free of {:.1} GiB (other processes hold the rest)",
                need / GIB,
                room / GIB,
                t.total / GIB
            ),
        )
    } else {
        ("does not fit", format!("needs {:.1} GiB, the GPU has {:.1} GiB", need / GIB, t.total / GIB))
    };
    Fit { target: t.clone(), verdict, detail }
}
