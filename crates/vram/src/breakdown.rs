//! The estimator's result: where the memory goes, bytes per GPU ([`Breakdown`]), shared by the
//! language-model estimator (`estimate.rs`) and the image-generation one (`image.rs`).

use serde::{Deserialize, Serialize};

use crate::i18n::Message;

/// 2^30 bytes.
pub const GIB: f64 = 1_073_741_824.0;

/// The CUDA context and the runtime's memory outside PyTorch's allocator, as nvidia-smi counts
/// it for a PyTorch process: 1343 MiB on a V100 with CUDA 11.2 (Hugging Face's
/// perf_train_gpu_one, a driver from before R510, whose used memory had no reservation in it);
/// on an A100 80GB, optimum-benchmark's running-llamas reports read NVML's version-1 used, which
/// counts the driver's reservation (669 MiB on that card) too: about 0.8 GB with torch 2.1.1
/// (1474 MB above torch's max reserved) and about 1.4 GB with torch 2.0.1 once the reservation is
/// taken off. The bare context with lazy module loading is smaller (PyTorch PR #86509: 287 MB),
/// but the kernels and library handles a model run loads come on top.
pub(super) const CUDA_CONTEXT: f64 = 1.5 * GIB;
/// The CUDA context's range: from a bare context with lazy module loading (0.3 GiB) to 2 GiB,
/// above the largest measured (a CUDA 11 stack without lazy loading, 1343 MiB, plus the kernels
/// a larger model run loads).
pub(super) const CUDA_CONTEXT_RANGE: (f64, f64) = (0.3 * GIB, 2.0 * GIB);

/// Where the memory goes, bytes per GPU.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Breakdown {
    /// Model weights (this GPU's share).
    pub weights: f64,
    /// KV cache.
    pub kv_cache: f64,
    /// Activations at the peak (incl. logits).
    pub activations: f64,
    /// Gradients.
    pub gradients: f64,
    /// Optimizer states, and what the optimizer step's temporaries add beyond the backward peak.
    pub optimizer: f64,
    /// CUDA context (seen by nvidia-smi, not by PyTorch's counters).
    pub cuda_context: f64,
    /// Framework buffers (cuBLAS workspace, NCCL, vLLM non-torch memory, llama.cpp compute buffer).
    pub framework: f64,
    /// Caching-allocator slack (reserved but unallocated).
    pub allocator_slack: f64,
    /// Memory PyTorch keeps cached at the peak on a card with room to spare and gives back before
    /// it runs out (image pipelines: the VAE decode's blocks); not part of what must fit.
    #[serde(default)]
    pub reserved_cache: f64,
    /// Sum: what nvidia-smi would show for this process.
    pub total: f64,
    /// Parameters (all, billions).
    pub params_b: f64,
    /// Trainable parameters (billions; LoRA adapters or all).
    pub trainable_b: f64,
    /// vLLM: KV-cache memory the engine would have (util × total − the rest); `None` elsewhere.
    pub vllm_kv_available: Option<f64>,
    /// What the figures assume.
    pub notes: Vec<Message>,
    /// The low end of the total where inputs are unknown (the CUDA context's size, the caching
    /// allocator's fragmentation), bytes.
    #[serde(default)]
    pub low: f64,
    /// The high end; the fit verdict is decided on it.
    #[serde(default)]
    pub high: f64,
    /// The inputs that would narrow the range.
    #[serde(default)]
    pub narrow_by: Vec<Message>,
}

impl Breakdown {
    /// What PyTorch's `max_memory_allocated()` would report.
    pub fn allocated(&self) -> f64 {
        self.weights + self.kv_cache + self.activations + self.gradients + self.optimizer
    }
    /// What `max_memory_reserved()` would report.
    pub fn reserved(&self) -> f64 {
        self.allocated() + self.allocator_slack + self.reserved_cache
    }
}
