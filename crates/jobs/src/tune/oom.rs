//! Out of GPU memory, recognised in a command's output: the messages the frameworks print when an
//! allocation on the GPU fails (sources in docs/research/tune-oom.md). A line that matches names
//! the framework; the tuner stops the trial there and treats the setting as too large.

/// One recognised message: the text to find (case as printed) and who prints it.
struct Pattern {
    text: &'static str,
    framework: &'static str,
}

/// The messages, most specific first (a PyTorch line also contains the generic CUDA words).
const PATTERNS: &[Pattern] = &[
    Pattern { text: "OutOfMemoryError: CUDA out of memory", framework: "PyTorch" },
    Pattern { text: "CUDA out of memory. Tried to allocate", framework: "PyTorch" },
    Pattern { text: "HIP out of memory. Tried to allocate", framework: "PyTorch (ROCm)" },
    Pattern { text: "would exceed allowed memory. (out of memory)", framework: "PyTorch" },
    Pattern { text: "OOM when allocating tensor", framework: "TensorFlow" },
    Pattern { text: "ResourceExhaustedError", framework: "TensorFlow" },
    Pattern { text: "RESOURCE_EXHAUSTED: Out of memory", framework: "JAX/XLA" },
    Pattern { text: "Out of memory while trying to allocate", framework: "JAX/XLA" },
    Pattern { text: "Failed to allocate memory for requested buffer of size", framework: "ONNX Runtime" },
    Pattern { text: "cudaMalloc failed: out of memory", framework: "llama.cpp" },
    Pattern { text: "failed to allocate CUDA", framework: "llama.cpp" },
    Pattern { text: "unable to allocate CUDA", framework: "llama.cpp" },
    Pattern { text: "CUDA failure 2: out of memory", framework: "ONNX Runtime" },
    Pattern { text: "BFC Arena ran out of memory trying to allocate", framework: "ONNX Runtime" },
    Pattern { text: "No available memory for the cache blocks", framework: "vLLM" },
    Pattern { text: "larger than the available KV cache memory", framework: "vLLM" },
    Pattern { text: "is less than desired GPU memory utilization", framework: "vLLM" },
    Pattern { text: "CUDA_ERROR_OUT_OF_MEMORY", framework: "CUDA" },
    Pattern { text: "cudaErrorMemoryAllocation", framework: "CUDA" },
    Pattern { text: "CUBLAS_STATUS_ALLOC_FAILED", framework: "cuBLAS" },
    Pattern { text: "CUDNN_STATUS_ALLOC_FAILED", framework: "cuDNN" },
    Pattern { text: "CUDA error: out of memory", framework: "CUDA" },
];

/// A line of output that says the GPU ran out of memory.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OomLine {
    /// Who printed it ("PyTorch", "vLLM" ...).
    pub framework: String,
    /// The line, shortened to 300 characters.
    pub line: String,
}

/// The first line of `text` that reports running out of GPU memory.
pub fn find(text: &str) -> Option<OomLine> {
    text.lines().find_map(|line| {
        PATTERNS
            .iter()
            .find(|p| line.contains(p.text))
            .map(|p| OomLine { framework: p.framework.to_string(), line: line.trim().chars().take(300).collect() })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_framework_is_named_and_other_failures_are_not_oom() {
        let cases = [
            (
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity",
                "PyTorch",
            ),
            (
                "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity)",
                "PyTorch",
            ),
            (
                "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[256,1024]",
                "TensorFlow",
            ),
            (
                "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1.2GiB",
                "JAX/XLA",
            ),
            (
                "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4096.00 MiB on device 0: cudaMalloc failed: out of memory",
                "llama.cpp",
            ),
            ("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`", "vLLM"),
        ];
        for (line, who) in cases {
            let found = find(&format!("step 1\n{line}\nexit")).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(found.framework, who, "{line}");
            assert_eq!(found.line, line);
        }
        assert_eq!(find("RuntimeError: CUDA error: an illegal memory access was encountered"), None);
        assert_eq!(find("MemoryError\nKilled"), None);
        // Host memory is not the GPU's.
        assert_eq!(
            find("XlaRuntimeError: RESOURCE_EXHAUSTED: Out of host memory while trying to allocate 9 GiB"),
            None
        );
    }
}
