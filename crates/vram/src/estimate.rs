//! The estimator: [`estimate()`] turns an architecture and a workload into a per-GPU
//! [`Breakdown`] (weights, KV cache, activations, gradients, optimizer states, CUDA context,
//! framework buffers, allocator slack), with engine models for Hugging Face `generate`, vLLM and llama.cpp.

use super::arch::{Arch, ModelKind};
use super::breakdown::{Breakdown, CUDA_CONTEXT, CUDA_CONTEXT_RANGE, GIB};
use super::error::InputError;
use super::quant::Quant;
use super::workload::{Checkpointing, Framework, HfGenerate, Mode, Optimizer, Precision, Sharding, Workload};

/// cuBLAS(Lt) workspaces and small library buffers.
const LIBRARY_BUFFERS: f64 = 64.0 * 1_048_576.0;

/// Estimates the memory of `arch` under `s`.
pub fn estimate(arch: &Arch, s: &Workload) -> Result<Breakdown, InputError> {
    arch.validate()?;
    s.validate()?;
    if let Some(family) = super::image_settings::Family::of(arch) {
        let mut out = if s.mode == Mode::Inference {
            super::image::estimate(family, s)
        } else {
            super::image::estimate_training(family, s)?
        };
        range(&mut out, s);
        return Ok(out);
    }
    let p = arch.params();
    let n = f64::from(s.gpus);
    let (b, t) = (f64::from(s.batch), f64::from(s.seq));
    let (h, l, v) = (f64::from(arch.hidden), f64::from(arch.layers), f64::from(arch.vocab));
    let mut out = Breakdown { params_b: p.total() / 1e9, ..Breakdown::default() };

    // Weights as stored.
    let quant = s.weight_quant();
    // litgpt's model has an lm_head of its own whatever the checkpoint ties (model.py's
    // `nn.Linear(n_embd, padded_vocab_size)`), and its bitsandbytes plugin replaces every
    // nn.Linear, the head included; Hugging Face keeps the head in 16 bits.
    let litgpt = s.mode == Mode::Inference && s.framework == Framework::LitGpt;
    let head = if litgpt { v * h } else { p.head };
    let (quantised, kept) = if litgpt { (p.linear + head, p.embed) } else { (p.linear, p.embed + p.head) };
    let weight_bytes = (quantised * quant.linear_bits() + kept * quant.embedding_bits()) / 8.0
        + p.other * if quant == Quant::Fp32 { 4.0 } else { 2.0 };
    if litgpt {
        out.params_b = (p.total() - p.head + head) / 1e9;
    }
    let split = match s.sharding {
        Sharding::Replicated => 1.0,
        _ => n,
    };
    out.weights = weight_bytes / split;
    if litgpt && s.sharding == Sharding::Layers && n > 1.0 {
        // litgpt's sequential generation puts the blocks in even shares on the GPUs and the
        // embedding, the head and the final norm on the first, which is the one it reports.
        let ends = (head * quant.linear_bits() + p.embed * quant.embedding_bits()) / 8.0;
        out.weights = (weight_bytes - ends) / n + ends;
    }
    if s.mode == Mode::Inference && s.sharding == Sharding::Tensor && s.framework != Framework::Vllm && n > 1.0 {
        // Tensor parallelism outside vLLM (litgpt, transformers' tp_plan) splits the attention
        // and MLP matrices; the embeddings, the head and the norms stay whole on every GPU.
        let whole = weight_bytes - p.linear * quant.linear_bits() / 8.0;
        out.weights = (weight_bytes - whole) / n + whole;
    }
    // bitsandbytes dequantises each 4-/8-bit matrix to 16 bits for its matmul (prefill,
    // training): the largest one is a transient buffer.
    // GPTQ/AWQ kernels (exllama) dequantise into a 16-bit scratch of the same size for
    // prompt-sized matmuls.
    let bnb = matches!(quant, Quant::Nf4 | Quant::Nf4Dq | Quant::Int8 | Quant::Gptq4);
    let tp_split = if s.sharding == Sharding::Tensor { n } else { 1.0 };
    let dequant_buffer = if bnb {
        let block =
            h * f64::from(arch.moe.as_ref().map_or(arch.intermediate, |m| m.expert_intermediate)) * 2.0 / tp_split;
        // litgpt's quantised head is dequantised whole for the prompt (it is never split).
        if litgpt { block.max(head * 2.0) } else { block }
    } else {
        0.0
    };
    // What a dequantising matmul holds: the 16-bit matrix, and with bitsandbytes before 0.43
    // under a bf16 compute dtype also its cast (the 4-bit state remembers fp16; litgpt's
    // resource tables ran 0.41.1: the head's second copy is what their 4-bit rows show beyond
    // the rest, 0.49 GiB for Llama 2 70B, 0.99 GiB for Falcon 40B).
    let matmul_buffer = if s.bnb_before_0_43 && s.bnb_4bit() {
        out.notes.push(crate::msg!(
            "bitsandbytes before 0.43: each 4-bit matrix is dequantised to fp16 and then cast to bf16, so the largest takes {gib} GiB in two copies at once",
            gib = format!("{:.2}", 2.0 * dequant_buffer / GIB)
        ));
        2.0 * dequant_buffer
    } else {
        dequant_buffer
    };
    if s.sharding == Sharding::Fsdp && n > 1.0 {
        // One layer is gathered in full at a time (two with prefetch).
        out.weights += 2.0 * weight_bytes / l.max(1.0);
    }

    // KV cache (inference) per GPU.
    let kv_split = match s.sharding {
        // Per-GPU KV heads = max(1, kv_heads / tp): replicated when there are fewer than GPUs.
        Sharding::Tensor => {
            let kv = f64::from(arch.kv_heads);
            kv / (kv / n).floor().max(1.0)
        }
        Sharding::Layers | Sharding::Fsdp => n,
        Sharding::Replicated => 1.0,
    };
    let kv_per_token = arch.kv_elems_per_token_layer() * l * s.kv_bytes;

    // Activations of one layer (bf16) per token, Llama-style with fused attention.
    let (nq, nkv, d) = (f64::from(arch.heads), f64::from(arch.kv_heads), f64::from(arch.head_dim()));
    let inter = arch.active_intermediate();
    let mlp_terms = if arch.gated_mlp { 8.0 * inter } else { 4.0 * inter };
    let layer_per_token = 2.0 * h + 4.0 * nq * d + 4.0 * nkv * d + 4.0 * nq + 2.0 * h + mlp_terms + 4.0 * h;
    let scores_per_token_layer = if s.flash_attention { 0.0 } else { 5.0 * nq * t };

    match s.mode {
        Mode::Inference => {
            out.trainable_b = 0.0;
            match s.framework {
                Framework::Hf => {
                    // The peak is at the prefill (the prompt's KV cache, its logits and one
                    // layer's activations), at the second step (before transformers 4.42 the
                    // first step's logits were still held, and the old cache stayed referenced
                    // while torch.cat built the new one: two copies) or at the end of decoding
                    // (the whole KV cache, twice before 4.42). Without a prompt/new-token split
                    // the whole context is taken as the prompt.
                    let generates = s.new_tokens != 1;
                    let copies = if generates { s.hf_generate.kv_copies() } else { 1.0 };
                    let prompt = (t - f64::from(s.new_tokens)).max(1.0);
                    let kv = |tokens: f64| kv_per_token * b * tokens / kv_split;
                    // The logits (before transformers 4.45 fp32 for every prompt position; since,
                    // the last position's only, in the model's dtype, then an fp32 copy to sample
                    // from), one layer's activations, attention scores when not fused.
                    let logits = if s.hf_generate.full_logits() { b * prompt * v * 4.0 } else { b * v * (2.0 + 4.0) };
                    let act = b * prompt * (layer_per_token + scores_per_token_layer * 2.0 / 5.0);
                    let prefill = kv(prompt) + logits + act + matmul_buffer;
                    let second = copies * kv(prompt) + logits + matmul_buffer;
                    out.kv_cache = copies * kv(t);
                    out.activations = (prefill.max(second) - out.kv_cache).max(matmul_buffer + b * layer_per_token);
                    out.cuda_context = CUDA_CONTEXT;
                    out.framework = LIBRARY_BUFFERS;
                    // The cache grows by concatenation: every step allocates larger tensors than
                    // the blocks the last one freed, which the allocator keeps.
                    out.allocator_slack = 0.2 * out.kv_cache + 0.1 * out.activations;
                    if bnb && quant != Quant::Gptq4 {
                        if !s.prequantized {
                            // Quantised at load from a 16-bit checkpoint, one weight at a time:
                            // the freed 16-bit block of the largest matrix stays cached.
                            out.allocator_slack += dequant_buffer;
                        }
                        out.notes.push(load_note(s.prequantized));
                    }
                    out.notes.push(match s.hf_generate {
                        HfGenerate::Current => crate::msg!("Hugging Face generate (transformers 4.45 or later): KV cache grows by concatenation; the prefill computes logits for the last position only"),
                        HfGenerate::FullLogits => crate::msg!("Hugging Face generate (transformers 4.42 to 4.44): KV cache grows by concatenation; the prefill computes fp32 logits for the whole prompt"),
                        HfGenerate::CopiedCache => crate::msg!("Hugging Face generate (transformers before 4.42): each step copies the KV cache while the old one is still held, so two copies exist at the end; the prefill computes fp32 logits for the whole prompt"),
                    });
                }
                Framework::Vllm => {
                    let tp = if s.sharding == Sharding::Tensor { n } else { 1.0 };
                    let activation = if arch.moe.is_some() { 7.4 * GIB } else { 4.8 * GIB } / tp.max(1.0);
                    let non_torch = if tp > 1.0 { 0.55 * GIB } else { 0.13 * GIB };
                    out.activations = activation;
                    out.framework = non_torch;
                    out.cuda_context = 0.0; // included in vLLM's non-torch figure
                    let needed_kv = kv_per_token * b * (t / 16.0).ceil() * 16.0 / kv_split;
                    out.kv_cache = needed_kv;
                    if let Some(total) = s.gpu_total_bytes {
                        let avail = total * s.vllm_utilization - out.weights - activation - non_torch;
                        out.vllm_kv_available = Some(avail);
                        out.notes.push(crate::msg!(
                            "vLLM reserves {pct} % of the GPU ({gib} GiB); what is left after weights and activations becomes KV cache",
                            pct = format!("{:.0}", s.vllm_utilization * 100.0),
                            gib = format!("{:.1}", total * s.vllm_utilization / GIB)
                        ));
                    }
                    out.notes.push(crate::msg!("vLLM activation peak is profiled at start-up (about 4.8 GiB for dense models, 7.4 GiB for MoE with default batching)"));
                }
                Framework::LitGpt => {
                    // The KV cache is allocated for the prompt and the new tokens before the
                    // prefill and filled in place; the prefill computes the head's output for
                    // every prompt position in the model's dtype (generate/base.py, model.py).
                    let prompt = (t - f64::from(s.new_tokens)).max(1.0);
                    out.kv_cache = kv_per_token * b * t / kv_split;
                    let logits = b * prompt * v * 2.0;
                    let act = b * prompt * (layer_per_token + scores_per_token_layer * 2.0 / 5.0);
                    out.activations = logits + act + matmul_buffer;
                    out.cuda_context = CUDA_CONTEXT;
                    out.framework = LIBRARY_BUFFERS;
                    out.allocator_slack = 0.1 * out.activations;
                    if bnb && quant != Quant::Gptq4 && !s.prequantized {
                        // Each weight is copied to the GPU in 16 bits and quantised there; the
                        // freed block of the largest stays cached.
                        out.allocator_slack += dequant_buffer;
                    }
                    out.notes.push(crate::msg!("litgpt generate: the output head is a matrix of its own (never tied) and is quantised with the other linear layers; the KV cache is allocated for the prompt and the new tokens at start"));
                }
                Framework::LlamaCpp => {
                    let pad = if s.flash_attention { 256.0 } else { 32.0 };
                    let n_ctx = (t / pad).ceil() * pad;
                    out.kv_cache = kv_per_token * b.max(1.0) * n_ctx / kv_split;
                    let ubatch = 512.0_f64.min(n_ctx);
                    let scores = if s.flash_attention { 0.0 } else { nq * ubatch * n_ctx * 4.0 };
                    out.framework = scores + 64.0 * 1_048_576.0 + ubatch * v * 4.0 / 8.0;
                    out.cuda_context = 0.3 * GIB;
                    out.notes.push(crate::msg!("llama.cpp allocates the KV cache for the whole context at start; n_ctx is padded to 256 with flash attention, 32 without"));
                }
            }
        }
        Mode::Full | Mode::Lora | Mode::Qlora => {
            let trainable = match s.mode {
                Mode::Full => p.total(),
                _ => {
                    let r = f64::from(s.lora_rank);
                    let q_out = nq * d;
                    let kv_out = nkv * d;
                    let per_layer = if s.lora_all_linear {
                        let mlp = if arch.gated_mlp { 2.0 * (h + inter) + (inter + h) } else { 2.0 * (h + inter) };
                        r * ((h + q_out) + 2.0 * (h + kv_out) + (q_out + h)) + r * mlp
                    } else {
                        r * ((h + q_out) + (h + kv_out))
                    };
                    per_layer * l
                }
            };
            out.trainable_b = trainable / 1e9;
            let state_split = match s.sharding {
                Sharding::Replicated => 1.0,
                _ => n,
            };
            let (grad_bytes, state_bytes) = match (s.mode, s.precision) {
                (Mode::Full, Precision::Bf16True) => (2.0, 2.0),
                // Mixed (torch.autocast: HF Trainer, accelerate, litgpt's bf16-mixed) keeps fp32
                // parameters, gradients and states; the 16-bit copies are counted with the weights.
                // Adapters are small; PEFT keeps them (and their states) in fp32.
                _ => (4.0, 4.0),
            };
            let states_per_param = match s.optimizer {
                Optimizer::AdamW => 2.0 * state_bytes,
                Optimizer::AdamW8bit => 2.0,
                Optimizer::Sgd => state_bytes,
                Optimizer::Adafactor => 4.0,
            };
            out.gradients = trainable * grad_bytes / state_split;
            if s.sharding == Sharding::Fsdp && n > 1.0 {
                // In backward each gathered layer's gradients exist unsharded until they are
                // reduce-scattered (two layers with prefetch), like its gathered weights.
                out.gradients += 2.0 * trainable * grad_bytes / l.max(1.0);
            }
            out.optimizer = trainable * states_per_param / state_split;
            if s.mode != Mode::Full {
                out.weights += trainable * 4.0 / state_split;
            }
            if s.mode == Mode::Full && s.precision == Precision::Mixed {
                // Autocast's 16-bit copies of the linear weights, kept from forward to backward.
                out.weights += p.linear * 2.0 / split;
            }
            // PEFT's prepare_model_for_kbit_training casts every parameter that is not 4-bit
            // (embeddings, head, norms) to fp32: they take twice the memory, and the residual
            // stream they produce is fp32, so the layer inputs kept for backward are too
            // (fms-acceleration's A100 benchmark: 19.25 vs 15.25 GiB for Mistral-7B at 4 × 4096).
            let upcast = s.mode == Mode::Qlora && s.kbit_upcast;
            if upcast {
                out.weights += (p.embed + p.head + p.other) * 2.0 / split;
            }
            // Activations: Korthikanti et al. adapted to SwiGLU/GQA (arXiv 2205.05198).
            let tp = if s.sharding == Sharding::Tensor { n } else { 1.0 };
            // LoRA dropout (litgpt's 0.05; PEFT's default is 0.0) keeps the dropped input and its
            // mask for every adapted matrix: 3 bytes per input element. Without dropout the
            // adapter reads the input the base layer keeps anyway.
            let lora_inputs = match s.mode {
                Mode::Lora | Mode::Qlora if !s.lora_dropout => 0.0,
                Mode::Lora | Mode::Qlora if s.lora_all_linear => 6.0 * h + inter,
                Mode::Lora | Mode::Qlora => 2.0 * h,
                _ => 0.0,
            };
            let layers_here = if s.sharding == Sharding::Layers { l / n } else { l };
            let encoder = arch.kind == ModelKind::Encoder;
            // What one layer keeps per token (`layer`), the bytes per attention score it keeps
            // (`scores`) and what the caching allocator holds beyond them at the peak (`slack_of`).
            let (layer, scores, input_bytes, slack_of) = if encoder {
                let e = encoder_layer(h, inter, s.precision);
                let (kept, held) = if s.flash_attention { (0.0, 0.0) } else { e.score_bytes };
                (e.per_token, kept * nq * t, e.input_bytes, 0.10 * e.per_token + (held - kept) * nq * t)
            } else {
                (layer_per_token + 3.0 * lora_inputs, scores_per_token_layer, 2.0 * h, 0.0)
            };
            let per_layer_full = b * t * (layer + scores) / tp;
            let fp32_stream = if upcast { layers_here * 2.0 * b * t * h / tp } else { 0.0 };
            let (body, body_slack) = match s.checkpointing {
                Checkpointing::None => (layers_here * per_layer_full, layers_here * b * t * slack_of / tp),
                Checkpointing::Selective => (layers_here * b * t * layer / tp, layers_here * b * t * 0.10 * layer / tp),
                // Layer inputs, plus one layer recomputed and its gradients during backward.
                Checkpointing::Full => {
                    (layers_here * input_bytes * b * t + 1.5 * per_layer_full, 1.5 * b * t * slack_of / tp)
                }
            };
            // Logits and the loss: bf16 logits, their fp32 copy and its gradient; chunked losses
            // upcast one eighth at a time. An encoder's classification head has a few outputs;
            // its masked-LM head has vocabulary logits for every token (kept, as the model returns
            // them, in the compute precision) and the loss's log-softmax (fp32 under autocast,
            // 16-bit in a pure 16-bit run), after a transform layer (dense, GELU, LayerNorm:
            // three hidden-sized tensors kept).
            let mlm = encoder && s.encoder_head == super::workload::EncoderHead::MaskedLm;
            let logits = if mlm {
                let (logit_bytes, loss_bytes, hidden_bytes) = match s.precision {
                    Precision::Fp32 => (4.0, 4.0, 4.0),
                    Precision::Mixed => (2.0, 4.0, 2.0),
                    Precision::Bf16True => (2.0, 2.0, 2.0),
                };
                b * t * (v * (logit_bytes + loss_bytes) + 3.0 * h * hidden_bytes) / tp
            } else if encoder {
                0.0
            } else if s.chunked_loss {
                b * t * v * (2.0 + 4.0 / 8.0) / tp
            } else {
                b * t * v * (2.0 + 4.0) / tp
            };
            // A loop that keeps the fp32 logits it passed to the loss (no `del logits` before
            // backward) holds them through the whole backward, the recomputed layers included:
            // torchtune's "free logits otherwise it peaks backward memory" (PRs #1046, #1235);
            // torchtitan's PR #391, 3.9 GiB for Llama 3 8B at 8192 tokens.
            let held = if s.held_logits && !s.chunked_loss && !encoder { b * t * v * 4.0 / tp } else { 0.0 };
            if held > 0.0 {
                out.notes.push(crate::msg!(
                    "The training loop keeps the fp32 logits ({gib} GiB) until backward ends",
                    gib = format!("{:.1}", held / GIB)
                ));
            }
            out.activations = fp32_stream + body + logits + held;
            // torch's AdamW (foreach, the default on CUDA) makes one state-sized temporary in its
            // step (`_foreach_sqrt` of the second moments); the activations are gone by then, so
            // the step sets the peak when that copy is the larger (a full fine-tune's 67.5 GiB
            // peak for Mistral-7B in bf16, fms-acceleration's A100 benchmark).
            if s.optimizer == Optimizer::AdamW {
                let step = trainable * state_bytes / state_split;
                if step > out.activations {
                    out.optimizer += step - out.activations;
                    out.notes.push(crate::msg!(
                        "The optimizer step sets the peak: torch's AdamW makes a temporary copy of one state ({gib} GiB), more than the activations",
                        gib = format!("{:.1}", step / GIB)
                    ));
                }
            }
            if encoder {
                out.notes.push(match (mlm, s.flash_attention) {
                    (false, true) => crate::msg!("Encoder fine-tuning with a classification head and fused attention"),
                    (false, false) => crate::msg!("Encoder fine-tuning with a classification head; eager attention keeps the attention probabilities, their dropout masks and a copy for the next matmul"),
                    (true, true) => crate::msg!("Encoder training with a masked-LM head (vocabulary logits for every token) and fused attention"),
                    (true, false) => crate::msg!("Encoder training with a masked-LM head (vocabulary logits for every token); eager attention keeps the attention probabilities, their dropout masks and a copy for the next matmul"),
                });
            }
            out.cuda_context = CUDA_CONTEXT;
            out.framework = LIBRARY_BUFFERS + if n > 1.0 && s.sharding != Sharding::Layers { 0.4 * GIB } else { 0.0 };
            if n > 1.0 && s.sharding == Sharding::Replicated {
                // DDP's gradient buckets: a second copy of the gradients (gradient_as_bucket_view
                // is off by default).
                out.framework += out.gradients;
            }
            out.allocator_slack = 0.05 * (out.activations + out.gradients + out.weights) + body_slack;
            if s.sharding == Sharding::Fsdp && n > 1.0 {
                // FSDP frees its all-gather and reduce-scatter buffers from other CUDA streams; the
                // caching allocator holds on to them (torchtune's distributed rows: 15 % of the
                // sharded state).
                out.allocator_slack += 0.15 * (out.weights + out.gradients + out.optimizer);
            }
            if s.mode == Mode::Qlora {
                // The forward and backward dequantise the 4-bit matrices (two buffers at once),
                // and quantising a 16-bit checkpoint on the GPU at load leaves freed blocks in the
                // cache (reserved, not allocated): torchtune and litgpt quantise the whole
                // model after loading it (15 % of its 16-bit linear weights stay cached, fitted
                // on their QLoRA rows).
                let linear16 = p.linear * 2.0 / split;
                out.activations += 2.0 * matmul_buffer;
                use super::workload::Trainer;
                let quantised_whole = matches!(s.trainer, Trainer::Torchtune | Trainer::Litgpt);
                if s.prequantized {
                    // A checkpoint saved in 4-bit (a bitsandbytes 4-bit repository, GPTQ, AWQ)
                    // is loaded as it is stored: no 16-bit weights reach the GPU.
                    out.notes.push(load_note(true));
                } else if quantised_whole {
                    out.allocator_slack += 0.15 * linear16;
                } else {
                    // transformers' bitsandbytes integration quantises each weight as it moves
                    // to the GPU: the freed 16-bit block is reused by the next, so one of the
                    // largest 16-bit matrices stays cached.
                    out.allocator_slack += dequant_buffer;
                    out.notes.push(load_note(false));
                }
                if s.trainer == Trainer::Litgpt && !s.prequantized {
                    // litgpt materialises the 16-bit model on the GPU before quantising it, so
                    // the load can be the peak.
                    let load = p.total() * 2.0 / split;
                    let train_peak = out.allocated();
                    if load > train_peak {
                        out.weights += load - train_peak;
                        out.notes.push(crate::msg!(
                            "The peak is at load: litgpt holds the 16-bit model ({gib} GiB) on the GPU before quantising it",
                            gib = format!("{:.1}", load / GIB)
                        ));
                    }
                }
            }
            let pct = format!("{:.2}", 100.0 * trainable / p.total().max(1.0));
            let total = format!("{:.2}", p.total() / 1e9);
            out.notes.push(if s.mode == Mode::Full {
                crate::msg!("All trainable parameters ({pct} % of {total} B)", pct = pct, total = total)
            } else {
                crate::msg!("LoRA adapter trainable parameters ({pct} % of {total} B)", pct = pct, total = total)
            });
        }
    }
    out.total = out.allocated() + out.allocator_slack + out.cuda_context + out.framework;
    range(&mut out, s);
    Ok(out)
}

/// How a bitsandbytes base reaches the GPU, in words.
fn load_note(prequantized: bool) -> crate::i18n::Message {
    if prequantized {
        crate::msg!(
            "The checkpoint is saved quantised (quantization_config): it is loaded as stored, no 16-bit weights reach the GPU"
        )
    } else {
        crate::msg!(
            "A 16-bit checkpoint quantised at load, one weight at a time (transformers' bitsandbytes integration)"
        )
    }
}

/// Sets the low–high range of `out.total` and what would narrow it. vLLM's reservation is fixed
/// by its utilisation setting, so its range is the total itself.
fn range(out: &mut Breakdown, s: &Workload) {
    if s.mode == Mode::Inference && s.framework == Framework::Vllm {
        (out.low, out.high) = (out.total, out.total);
        return;
    }
    let rest = out.allocated() + out.framework;
    let (ctx_low, ctx_high) = if out.cuda_context > 0.0 { CUDA_CONTEXT_RANGE } else { (0.0, 0.0) };
    // The caching allocator's fragmentation: from half to twice the typical share (steady shapes
    // vs. varying sequence lengths; PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True keeps it low).
    out.low = rest + 0.5 * out.allocator_slack + ctx_low.min(out.cuda_context);
    out.high = rest + 2.0 * out.allocator_slack + ctx_high.max(out.cuda_context);
    out.narrow_by = vec![
        crate::msg!(
            "the PyTorch and CUDA versions: the CUDA context and libraries take from 0.3 GiB (a bare context with lazy module loading) to 2 GiB (a CUDA 11 stack without it)"
        ),
        crate::msg!("a measured run: gpu-doctor-cli run -- COMMAND, saved as a calibration point for these settings"),
    ];
    if s.mode != Mode::Inference {
        out.narrow_by.insert(
            1,
            crate::msg!("the allocator's fragmentation: fixed-length (packed) batches and PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True keep it at the low end"),
        );
    }
}

/// What one encoder layer (BERT-style: post-LayerNorm, GELU MLP, dropout 0.1 on the hidden states
/// and on the attention probabilities) keeps for backward, bytes per token.
struct EncoderLayer {
    /// Hidden-state tensors and dropout masks.
    per_token: f64,
    /// Eager attention, per score element: (what the autograd graph keeps, what the allocator
    /// holds at the peak). fp32: softmax output 4 + dropout mask 1 + dropout output 4; AMP: the
    /// softmax runs in fp32 (4) + mask 1 + the 16-bit copy the next matmul keeps (2); the held
    /// figures add the backward's score-sized temporaries and the allocator's fragmentation
    /// around them, calibrated on Hugging Face's BERT-large fine-tuning measurements (V100, fp32
    /// and fp16 AMP, batch 1 and 4 at 512 tokens: within 2 %).
    score_bytes: (f64, f64),
    /// A layer input kept under full checkpointing.
    input_bytes: f64,
}

/// The saved tensors of one encoder layer: the q/k/v input, q, k, v, the attention output's
/// input, the first LayerNorm's input, the MLP input, the GELU input and output, the second
/// LayerNorm's input (8 × hidden + 2 × intermediate elements) and two dropout masks (1 byte).
/// Under AMP the LayerNorm outputs and the residual stream stay fp32 and each linear keeps its
/// own 16-bit cast of its input (so the q, k and v projections keep three).
fn encoder_layer(h: f64, inter: f64, precision: Precision) -> EncoderLayer {
    match precision {
        Precision::Fp32 => EncoderLayer {
            per_token: 4.0 * (8.0 * h + 2.0 * inter) + 2.0 * h,
            score_bytes: (9.0, 13.0),
            input_bytes: 4.0 * h,
        },
        Precision::Mixed => {
            EncoderLayer { per_token: 26.0 * h + 4.0 * inter, score_bytes: (7.0, 12.0), input_bytes: 4.0 * h }
        }
        Precision::Bf16True => EncoderLayer {
            per_token: 2.0 * (8.0 * h + 2.0 * inter) + 2.0 * h,
            score_bytes: (5.0, 7.0),
            input_bytes: 2.0 * h,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn llama31_8b() -> Arch {
        Arch { context: Some(131_072), ..Arch::decoder("Llama-3.1-8B", 32, 4096, 32, 8, 14336, 128_256) }
    }

    #[test]
    fn kv_cache_uses_kv_heads() {
        let a = llama31_8b();
        // 128 KiB per token in fp16 (from its config.json).
        assert_eq!(a.kv_elems_per_token_layer() * 32.0 * 2.0, 131_072.0);
        let s = Workload { seq: 8192, ..Workload::default() };
        let e = estimate(&a, &s).unwrap();
        assert!((e.kv_cache / GIB - 1.0).abs() < 1e-9, "{}", e.kv_cache / GIB);
    }

    #[test]
    fn before_transformers_4_42_decoding_holds_two_copies_of_the_cache_and_the_prompt_sets_the_prefill() {
        use crate::vram::HfGenerate;
        assert_eq!(HfGenerate::of_version(4, 41), HfGenerate::CopiedCache);
        assert_eq!(HfGenerate::of_version(4, 44), HfGenerate::FullLogits);
        assert_eq!(HfGenerate::of_version(4, 45), HfGenerate::Current);
        let a = llama31_8b();
        // Batch 64 × (256 prompt + 512 new): the end of decoding holds the whole cache twice.
        let w = |g| Workload { batch: 64, seq: 768, new_tokens: 512, hf_generate: g, ..Workload::default() };
        let one = kv_gib(&a, &w(HfGenerate::FullLogits));
        let two = kv_gib(&a, &w(HfGenerate::CopiedCache));
        assert!((two / one - 2.0).abs() < 1e-9, "{one} vs {two}");
        // A prefill-only run (one new token) never holds two.
        let prefill = Workload { new_tokens: 1, ..w(HfGenerate::CopiedCache) };
        assert!((kv_gib(&a, &prefill) - one).abs() < 1e-9);
        // The fp32 logits are the prompt's, not the whole context's.
        let long_answer = Workload { batch: 1, seq: 8192, new_tokens: 8000, ..w(HfGenerate::FullLogits) };
        let long_prompt = Workload { new_tokens: 0, ..long_answer.clone() };
        let act = |s: &Workload| estimate(&a, s).unwrap().activations;
        assert!(act(&long_prompt) - act(&long_answer) > 3.0 * GIB, "{} vs {}", act(&long_prompt), act(&long_answer));
        let bad = Workload { new_tokens: 8192, ..long_answer };
        assert_eq!(estimate(&a, &bad).err().map(|e| e.field), Some("new_tokens"));
    }

    #[test]
    fn a_loop_that_keeps_its_logits_holds_them_through_backward() {
        // torchtitan PR #391: `del logits` for Llama 3 8B at batch 1 × 8192 tokens saves 3.9 GB
        // (1 × 8192 × 128256 fp32 logits = 3.9 GiB).
        let a = llama31_8b();
        let plain = Workload { mode: Mode::Full, batch: 1, seq: 8192, ..Workload::default() };
        let held = Workload { held_logits: true, ..plain.clone() };
        let e = |s: &Workload| estimate(&a, s).unwrap();
        let more = e(&held).activations - e(&plain).activations;
        assert!((more / GIB - 3.91).abs() < 0.01, "{}", more / GIB);
        assert!(e(&held).notes.iter().any(|n| n.en().contains("keeps the fp32 logits")));
        assert!(!e(&plain).notes.iter().any(|n| n.en().contains("keeps the fp32 logits")));
        // A chunked loss never has the full logits to keep; inference has no backward.
        let chunked = Workload { chunked_loss: true, ..plain.clone() };
        assert_eq!(e(&Workload { held_logits: true, ..chunked.clone() }).activations, e(&chunked).activations);
        let infer = Workload { seq: 8192, ..Workload::default() };
        assert_eq!(e(&Workload { held_logits: true, ..infer.clone() }).total, e(&infer).total);
        // Over two tensor-parallel GPUs each holds its half of the vocabulary.
        let tp = |s: &Workload| Workload { gpus: 2, sharding: Sharding::Tensor, ..s.clone() };
        let more_tp = e(&tp(&held)).activations - e(&tp(&plain)).activations;
        assert!((more_tp / more - 0.5).abs() < 1e-9);
    }

    #[test]
    fn old_bitsandbytes_dequantises_through_fp16_so_a_bf16_matmul_holds_two_copies() {
        // litgpt generate of Llama 2 70B in nf4-dq (bitsandbytes 0.41.1, bf16-true): the prompt's
        // matmul through the 32000 × 8192 head holds its fp16 dequantisation and the bf16 cast.
        let a = Arch::decoder("Llama-2-70B", 80, 8192, 64, 8, 28672, 32_000);
        let now = Workload { framework: Framework::LitGpt, quant: Quant::Nf4Dq, seq: 256, ..Workload::default() };
        let old = Workload { bnb_before_0_43: true, ..now.clone() };
        let e = |s: &Workload| estimate(&a, s).unwrap();
        let head16 = 32_000.0 * 8192.0 * 2.0;
        assert!((e(&old).activations - e(&now).activations - head16).abs() < 1.0);
        assert!(e(&old).notes.iter().any(|n| n.en().starts_with("bitsandbytes before 0.43")));
        // The load's cached 16-bit block is one copy in either version.
        assert_eq!(
            e(&old).allocator_slack - 0.1 * e(&old).activations,
            e(&now).allocator_slack - 0.1 * e(&now).activations
        );
        // Nothing changes for weights that bitsandbytes' 4-bit path does not hold.
        for quant in [Quant::Bf16, Quant::Gptq4, Quant::Int8] {
            let w = Workload { quant, ..now.clone() };
            assert_eq!(e(&Workload { bnb_before_0_43: true, ..w.clone() }).total, e(&w).total, "{quant:?}");
        }
        // QLoRA's forward and backward each dequantise: both hold the two copies.
        let qlora = Workload { mode: Mode::Qlora, seq: 2048, ..Workload::default() };
        let more = e(&Workload { bnb_before_0_43: true, ..qlora.clone() }).activations - e(&qlora).activations;
        assert!((more - 2.0 * 8192.0 * 28672.0 * 2.0).abs() < 1.0, "{more}");
    }

    fn kv_gib(a: &Arch, s: &Workload) -> f64 {
        estimate(a, s).unwrap().kv_cache / GIB
    }

    #[test]
    fn a_checkpoint_saved_quantised_leaves_nothing_from_the_load() {
        use crate::vram::Trainer;
        let a = Arch { context: Some(131_072), ..Arch::decoder("Llama-3.1-70B", 80, 8192, 64, 8, 28672, 128_256) };
        let q = |trainer, prequantized| Workload {
            mode: Mode::Qlora,
            trainer,
            prequantized,
            seq: 2048,
            ..Workload::default()
        };
        let reserved = |s: &Workload| estimate(&a, s).unwrap().reserved() / GIB;
        // torchtune quantises the whole 16-bit model after loading it: 15 % of its linear
        // weights stay cached (about 20 GiB at 70B); a saved 4-bit checkpoint has none of it.
        let tt = reserved(&q(Trainer::Torchtune, false)) - reserved(&q(Trainer::Torchtune, true));
        assert!(tt > 15.0, "{tt}");
        // transformers quantises one weight at a time: one 16-bit matrix stays cached.
        let hf = reserved(&q(Trainer::HfTrainer, false)) - reserved(&q(Trainer::HfTrainer, true));
        assert!(hf > 0.3 && hf < 0.6, "{hf}");
        let notes = |s: &Workload| estimate(&a, s).unwrap().notes.iter().map(|n| n.en()).collect::<Vec<_>>().join("\n");
        assert!(notes(&q(Trainer::HfTrainer, true)).contains("saved quantised"));
        assert!(notes(&q(Trainer::HfTrainer, false)).contains("quantised at load"));
        // A GPTQ base keeps its own format.
        let gptq = Workload { quant: crate::vram::Quant::Gptq4, ..q(Trainer::HfTrainer, true) };
        assert_eq!(gptq.weight_quant(), crate::vram::Quant::Gptq4);
    }

    #[test]
    fn bad_shapes_name_the_field() {
        let mut a = llama31_8b();
        a.layers = 0;
        assert_eq!(estimate(&a, &Workload::default()).err().map(|e| e.field), Some("layers"));
        let mut a = llama31_8b();
        a.kv_heads = 7;
        assert_eq!(estimate(&a, &Workload::default()).err().map(|e| e.field), Some("kv_heads"));
        let mut a = llama31_8b();
        a.heads = 30;
        assert_eq!(estimate(&a, &Workload::default()).err().map(|e| e.field), Some("kv_heads"));
        let s = Workload { batch: 0, ..Workload::default() };
        assert_eq!(estimate(&llama31_8b(), &s).err().map(|e| e.field), Some("batch"));
        let s = Workload { vllm_utilization: 1.5, ..Workload::default() };
        assert_eq!(estimate(&llama31_8b(), &s).err().map(|e| e.field), Some("vllm_utilization"));
    }
}
