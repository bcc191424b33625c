//! Solvers over the estimator: the largest batch and the longest sequence that fit a capacity
//! ([`max_batch`], [`max_seq`], binary searches), and the ways to need less memory, each with
//! its saving ([`suggestions`]).

use serde::{Deserialize, Serialize};

use super::arch::Arch;
use super::estimate::{GIB, estimate};
use super::fit::need;
use super::quant::Quant;
use super::workload::{Checkpointing, Framework, Mode, Optimizer, Precision, Sharding, Workload};

/// The largest value in `lo..=hi` that `fits` (which must hold up to some value and not above
/// it); `None` when not even `lo` fits.
fn largest(lo: u32, hi: u32, fits: impl Fn(u32) -> bool) -> Option<u32> {
    if !fits(lo) {
        return None;
    }
    let (mut good, mut bad) = (lo, hi + 1);
    while bad - good > 1 {
        let mid = good + (bad - good) / 2;
        if fits(mid) {
            good = mid;
        } else {
            bad = mid;
        }
    }
    Some(good)
}

/// The largest batch (up to 65,536) whose estimate fits in `capacity` bytes per GPU; `None` when
/// not even one sequence fits.
pub fn max_batch(arch: &Arch, s: &Workload, capacity: f64) -> Option<u32> {
    largest(1, 65_536, |batch| estimate(arch, &Workload { batch, ..s.clone() }).is_ok_and(|b| need(&b, s) <= capacity))
}

/// The longest sequence (up to the model's context, or 1 M tokens) that fits in `capacity`.
pub fn max_seq(arch: &Arch, s: &Workload, capacity: f64) -> Option<u32> {
    let hi = arch.context.unwrap_or(1 << 20).max(1);
    largest(1, hi, |seq| estimate(arch, &Workload { seq, ..s.clone() }).is_ok_and(|b| need(&b, s) <= capacity))
}

/// One way to need less memory, with what it saves per GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Suggestion {
    /// What to change.
    pub change: String,
    /// Bytes saved per GPU.
    pub saving: f64,
}

/// Ways to cut memory in the method's order (batch, sequence, precision, checkpointing,
/// quantisation, sharding), each estimated; only those that save something.
pub fn suggestions(arch: &Arch, s: &Workload) -> Vec<Suggestion> {
    let Ok(base) = estimate(arch, s) else { return Vec::new() };
    let base_need = need(&base, s);
    let training = s.mode != Mode::Inference;
    let mut tries: Vec<(String, Workload)> = Vec::new();
    if s.batch > 1 {
        tries.push((
            format!("halve the batch ({} to {})", s.batch, s.batch / 2),
            Workload { batch: s.batch / 2, ..s.clone() },
        ));
    }
    if s.seq > 256 {
        tries.push((
            format!("halve the sequence length ({} to {} tokens)", s.seq, s.seq / 2),
            Workload { seq: s.seq / 2, ..s.clone() },
        ));
    }
    if training && s.mode == Mode::Full && s.precision != Precision::Bf16True {
        tries.push((
            "train in bf16 (no fp32 master copy)".into(),
            Workload { precision: Precision::Bf16True, ..s.clone() },
        ));
    }
    if training && s.optimizer == Optimizer::AdamW {
        tries.push(("8-bit AdamW".into(), Workload { optimizer: Optimizer::AdamW8bit, ..s.clone() }));
    }
    if training && s.checkpointing != Checkpointing::Full {
        tries.push((
            "activation checkpointing on every layer".into(),
            Workload { checkpointing: Checkpointing::Full, ..s.clone() },
        ));
    }
    if !s.flash_attention {
        tries.push(("fused (flash / SDPA) attention".into(), Workload { flash_attention: true, ..s.clone() }));
    }
    match s.mode {
        Mode::Full => {
            tries.push(("LoRA instead of a full fine-tune".into(), Workload { mode: Mode::Lora, ..s.clone() }))
        }
        Mode::Lora => tries.push(("QLoRA (4-bit base)".into(), Workload { mode: Mode::Qlora, ..s.clone() })),
        Mode::Inference => {
            for q in [Quant::Fp8, Quant::Gptq4, Quant::GgufQ4KM] {
                if q.linear_bits() < s.quant.linear_bits() && (q.is_gguf() == (s.framework == Framework::LlamaCpp)) {
                    tries.push((format!("{} weights", q.name()), Workload { quant: q, ..s.clone() }));
                }
            }
            if s.kv_bytes > 1.0 {
                tries.push(("8-bit KV cache".into(), Workload { kv_bytes: 1.0, ..s.clone() }));
            }
        }
        Mode::Qlora => {}
    }
    if s.gpus == 1 {
        let sharding = if training { Sharding::Fsdp } else { Sharding::Tensor };
        tries.push((
            format!("shard over 2 GPUs ({})", if training { "FSDP" } else { "tensor parallel" }),
            Workload { gpus: 2, sharding, ..s.clone() },
        ));
    }
    tries
        .into_iter()
        .filter_map(|(change, t)| {
            let b = estimate(arch, &t).ok()?;
            let saving = base_need - need(&b, &t);
            (saving > 0.01 * GIB).then_some(Suggestion { change, saving })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vram::presets;

    #[test]
    fn solver_finds_the_boundary_and_suggestions_save_memory() {
        let list = presets::built_in();
        let a = presets::find(&list, "Llama-3.1-8B").unwrap();
        let s = Workload { seq: 4096, ..Workload::default() };
        let cap = 40.0 * GIB;
        let b = max_batch(a, &s, cap).expect("one fits");
        assert!(need(&estimate(a, &Workload { batch: b, ..s.clone() }).unwrap_or_default(), &s) <= cap);
        assert!(need(&estimate(a, &Workload { batch: b + 1, ..s.clone() }).unwrap_or_default(), &s) > cap);
        let t = max_seq(a, &Workload { batch: 1, ..s.clone() }, 24.0 * GIB).unwrap_or(0);
        assert!(t > 1000 && t < 131_072, "{t}");
        assert_eq!(max_batch(a, &s, 4.0 * GIB), None, "8B bf16 weights alone exceed 4 GiB");
        let full = Workload {
            mode: Mode::Full,
            precision: Precision::Mixed,
            checkpointing: Checkpointing::None,
            batch: 4,
            ..s
        };
        let sug = suggestions(a, &full);
        assert!(sug.iter().any(|x| x.change.starts_with("halve the batch")), "{sug:?}");
        assert!(sug.iter().any(|x| x.change.contains("bf16")), "{sug:?}");
        assert!(sug.iter().all(|x| x.saving > 0.0));
    }
}
