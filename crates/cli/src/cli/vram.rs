//! `vram`: the VRAM calculator on the command line: a breakdown and a fit verdict for this
//! machine's GPUs (or a hypothetical card).

use crate::i18n::Here as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde::Serialize;

use super::{CliError, exit};
use crate::diagnose::input::live_nvml;
use crate::telemetry::SourceOptions;
use crate::vram::calibration::{self, Point};
use crate::vram::{
    self, Arch, Attention, Checkpointing, Framework, GIB, InputError, Mode, Offload, Optimizer, Precision, Quant,
    Sharding, Target, Trainer, VaeDecode, Workload,
};

/// Arguments of `vram`.
#[derive(Debug, Clone, Args)]
pub struct VramArgs {
    /// List the built-in model presets and exit.
    #[arg(long)]
    pub list_presets: bool,
    /// A model preset (see --list-presets).
    #[arg(long, value_name = "NAME", conflicts_with = "config")]
    pub preset: Option<String>,
    /// A Hugging Face config.json to read the architecture from.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// A presets file (RON list) to use instead of the built-in one.
    #[arg(long, value_name = "FILE")]
    pub presets_file: Option<PathBuf>,
    /// Layers (custom architecture).
    #[arg(long)]
    pub layers: Option<u32>,
    /// Hidden size.
    #[arg(long)]
    pub hidden: Option<u32>,
    /// Attention heads.
    #[arg(long)]
    pub heads: Option<u32>,
    /// Key/value heads (GQA; default = heads).
    #[arg(long)]
    pub kv_heads: Option<u32>,
    /// Head dimension (default hidden / heads).
    #[arg(long)]
    pub head_dim: Option<u32>,
    /// MLP intermediate size (default 4 × hidden).
    #[arg(long)]
    pub intermediate: Option<u32>,
    /// Vocabulary size.
    #[arg(long)]
    pub vocab: Option<u32>,
    /// Total parameters in billions, when the shape formula does not cover the model.
    #[arg(long, value_name = "BILLIONS")]
    pub params: Option<f64>,
    /// Inference or a training method.
    #[arg(long, value_enum, default_value_t = Mode::Inference)]
    pub mode: Mode,
    /// Weight format: fp32, bf16 (fp16), fp8, int8, gptq4 (awq), nf4, nf4-dq, q8_0, q6_k, q5_k_m, q4_k_m, q4_0, q3_k_l, q3_k_s, q2_k (default: the checkpoint's quantization_config, else bf16).
    #[arg(long, alias = "dtype", value_parser = super::options::shown(Quant::parse))]
    pub quant: Option<Quant>,
    /// The checkpoint is saved already quantised (a bitsandbytes 4-bit repository, GPTQ, AWQ), so
    /// no 16-bit weights pass through the GPU at load (default: on when config.json has a
    /// quantization_config).
    #[arg(long, value_name = "on|off", value_parser = parse_on_off)]
    pub prequantized: Option<bool>,
    /// Of --seq, the tokens generate adds after the prompt (Hugging Face engine; default: the
    /// whole context taken as the prompt).
    #[arg(long, value_name = "N")]
    pub new_tokens: Option<u32>,
    /// Training precision (default: the trainer's); --mixed-precision is --precision mixed.
    #[arg(long, value_enum)]
    pub precision: Option<Precision>,
    /// Mixed precision: fp32 master weights and states (same as --precision mixed).
    #[arg(long, conflicts_with = "precision")]
    pub mixed_precision: bool,
    /// The training framework: its defaults for checkpointing, precision, loss and LoRA apply
    /// unless given here.
    #[arg(long, value_enum, default_value_t = Trainer::HfTrainer)]
    pub trainer: Trainer,
    /// Sequences at once.
    #[arg(long, default_value_t = 1)]
    pub batch: u32,
    /// Tokens per sequence (inference: the whole context).
    #[arg(long, default_value_t = 4096)]
    pub seq: u32,
    /// KV-cache element bytes: 2 (f16), 1 (fp8 / q8_0), 0.5625 (q4_0).
    #[arg(long, default_value_t = 2.0)]
    pub kv_bytes: f64,
    /// GPUs.
    #[arg(long, default_value_t = 1)]
    pub gpus: u32,
    /// How the GPUs share the work.
    #[arg(long, value_enum, default_value_t = Sharding::Replicated)]
    pub sharding: Sharding,
    /// Inference engine.
    #[arg(long, value_enum, default_value_t = Framework::Hf)]
    pub framework: Framework,
    /// The transformers version generate runs on (e.g. 4.44): before 4.45 the prefill keeps fp32
    /// logits for the whole prompt, before 4.42 decoding also holds two copies of the KV cache
    /// (default: 4.45 or later).
    #[arg(long, value_name = "VERSION", value_parser = parse_transformers)]
    pub transformers: Option<(u32, u32)>,
    /// The bitsandbytes version (e.g. 0.41): before 0.43 4-bit weights were quantised from fp16, so a bf16 run dequantises each matrix to fp16 and then casts it, two copies at once (default: 0.43 or later).
    #[arg(long, value_name = "VERSION", value_parser = parse_bitsandbytes)]
    pub bitsandbytes: Option<(u32, u32)>,
    /// vLLM gpu_memory_utilization.
    #[arg(long, default_value_t = 0.9)]
    pub gpu_memory_utilization: f64,
    /// Optimizer.
    #[arg(long, value_enum, default_value_t = Optimizer::AdamW)]
    pub optimizer: Optimizer,
    /// Activation checkpointing (default: the trainer's).
    #[arg(long, value_enum)]
    pub checkpointing: Option<Checkpointing>,
    /// Compute the loss in chunks (no full fp32 logits; default: the trainer's).
    #[arg(long)]
    pub chunked_loss: bool,
    /// The training loop keeps the fp32 logits through backward (no del logits before backward: torchtune before 0.3, many hand-written loops).
    #[arg(long)]
    pub held_logits: bool,
    /// Encoder models: the head trained (masked-lm: vocabulary logits for every token).
    #[arg(long, value_enum, default_value_t = vram::EncoderHead::Classification)]
    pub head: vram::EncoderHead,
    /// Attention implementation (auto: as transformers picks it for the model).
    #[arg(long, value_enum, default_value_t = Attention::Auto)]
    pub attention: Attention,
    /// No fused (flash/SDPA) attention (same as --attention eager).
    #[arg(long, conflicts_with = "attention")]
    pub no_flash_attention: bool,
    /// LoRA rank (default: the trainer's).
    #[arg(long)]
    pub lora_rank: Option<u32>,
    /// LoRA on every linear layer (default: the trainer's).
    #[arg(long)]
    pub lora_all_linear: bool,
    /// Image models: width in pixels (default: the model's native size).
    #[arg(long)]
    pub width: Option<u32>,
    /// Image models: height in pixels (default: the model's native size).
    #[arg(long)]
    pub height: Option<u32>,
    /// Image models: classifier-free guidance, which doubles the denoiser's batch (default: the
    /// pipeline's, on for SD 1.5 and SDXL, off for FLUX).
    #[arg(long, value_name = "on|off", value_parser = parse_on_off)]
    pub cfg: Option<bool>,
    /// Image models: how the VAE decodes the batch.
    #[arg(long, value_enum, default_value_t = VaeDecode::Full)]
    pub vae_decode: VaeDecode,
    /// Image models: the VAE decodes in fp32 (default: the pipeline's, on for SDXL).
    #[arg(long, value_name = "on|off", value_parser = parse_on_off)]
    pub vae_fp32: Option<bool>,
    /// Image models: what stays on the GPU.
    #[arg(long, value_enum, default_value_t = Offload::None)]
    pub offload: Offload,
    /// Image models: the text encoders are not on the GPU (prompts encoded elsewhere).
    #[arg(long)]
    pub no_text_encoders: bool,
    /// Image models: the T5 encoder (FLUX, Stable Diffusion 3) is quantised like the transformer.
    #[arg(long)]
    pub quantize_text_encoder: bool,
    /// Stable Diffusion 3: without the T5-XXL encoder (text_encoder_3=None).
    #[arg(long)]
    pub without_t5: bool,
    /// Image models: SD 1.5 without its safety checker.
    #[arg(long)]
    pub no_safety_checker: bool,
    /// Save the peak of the last `run -- COMMAND` (or this many GiB per GPU) as a calibration
    /// point for this model and these settings; later estimates show it.
    #[arg(long, value_name = "GIB", num_args = 0..=1, default_missing_value = "last-run")]
    pub save_calibration: Option<String>,
    /// Judge against a hypothetical GPU of this many GiB instead of this machine's GPUs.
    #[arg(long, value_name = "GIB", value_parser = crate::cli::parse_gib)]
    pub vram_gib: Option<f64>,
    /// `--json` (one definition for every command: [`super::options::JsonArg`]).
    #[command(flatten)]
    pub json: super::options::JsonArg<super::options::Document>,
    /// `--nvml-lib` (one definition for every command: [`super::NvmlLibArg`]), for this machine's
    /// GPUs.
    #[command(flatten)]
    pub nvml: super::NvmlLibArg,
}

/// The model: a preset, an imported config.json, or the custom shape of the flags.
fn arch_from(args: &VramArgs) -> Result<Arch, String> {
    let presets = match &args.presets_file {
        Some(p) => {
            vram::presets::parse(&crate::safe_fs::read_text(p, crate::safe_fs::PRESETS_CAP)?).map_err(|e| e.here())?
        }
        None => {
            let (list, warning) = vram::presets::load_all();
            if let Some(w) = warning {
                super::errln(&format!("gpu-doctor: {}", w.here()));
            }
            list
        }
    };
    if let Some(name) = &args.preset {
        let arch = vram::presets::find(&presets, name).cloned().map_err(|e| e.here())?;
        if !arch.name.eq_ignore_ascii_case(name.trim()) {
            let note =
                if arch.note.is_empty() { String::new() } else { format!(" ({})", crate::i18n::tr_dyn(&arch.note)) };
            super::errln(&crate::tr!(
                "gpu-doctor: --preset '{name}' read as {model}{note}",
                name = name,
                model = arch.name,
                note = note
            ));
        }
        return Ok(arch);
    }
    if let Some(path) = &args.config {
        return vram::presets::from_hf_config_file(path).map_err(|e| e.here());
    }
    let (Some(layers), Some(hidden), Some(heads), Some(vocab)) = (args.layers, args.hidden, args.heads, args.vocab)
    else {
        return Err(crate::tr!(
            "give --preset NAME, --config config.json, or --layers, --hidden, --heads and --vocab (see --list-presets)"
        )
        .into());
    };
    let arch = Arch {
        head_dim: args.head_dim,
        params_b: args.params,
        ..Arch::decoder(
            "custom",
            layers,
            hidden,
            heads,
            args.kv_heads.unwrap_or(heads),
            args.intermediate.unwrap_or(hidden.saturating_mul(4)),
            vocab,
        )
    };
    arch.validate().map_err(|e| e.here())?;
    Ok(arch)
}

/// `--transformers 4.44` (or 4.44.2): its major and minor version.
fn parse_transformers(s: &str) -> Result<(u32, u32), String> {
    parse_version(s, "4.44")
}

/// `--bitsandbytes 0.41` (or 0.41.1): its major and minor version.
fn parse_bitsandbytes(s: &str) -> Result<(u32, u32), String> {
    parse_version(s, "0.42")
}

/// A MAJOR.MINOR[.PATCH] version; the error shows `example`.
fn parse_version(s: &str, example: &str) -> Result<(u32, u32), String> {
    let mut parts = s.trim().split('.');
    let num = |p: Option<&str>| p.and_then(|x| x.trim().parse::<u32>().ok());
    match (num(parts.next()), num(parts.next())) {
        (Some(major), Some(minor)) => Ok((major, minor)),
        _ => Err(crate::tr!("{value} is not a version such as {example}", value = s, example = example)),
    }
}

/// The workload the arguments describe; `total` is the first GPU's memory (vLLM sizes its KV
/// cache from it).
fn workload_from(args: &VramArgs, arch: &Arch, total: Option<f64>) -> Workload {
    // A checkpoint saved quantised is used as stored unless the flags say otherwise.
    let quant = args.quant.or(arch.quantization).unwrap_or(Quant::Bf16);
    let base = Workload {
        mode: args.mode,
        quant,
        new_tokens: args.new_tokens.unwrap_or(0),
        encoder_head: args.head,
        framework: args.framework,
        batch: args.batch,
        seq: args.seq,
        kv_bytes: args.kv_bytes,
        gpus: args.gpus,
        sharding: args.sharding,
        optimizer: args.optimizer,
        precision: if quant == Quant::Fp32 { Precision::Fp32 } else { Precision::Bf16True },
        flash_attention: !args.no_flash_attention && args.attention.fused_for(arch),
        vllm_utilization: args.gpu_memory_utilization,
        gpu_total_bytes: total,
        hf_generate: args.transformers.map_or(vram::HfGenerate::Current, |(a, b)| vram::HfGenerate::of_version(a, b)),
        ..Workload::default()
    };
    let base = Workload {
        image: vram::ImageSettings {
            width: args.width.unwrap_or(0),
            height: args.height.unwrap_or(0),
            cfg: args.cfg,
            vae: args.vae_decode,
            vae_fp32: args.vae_fp32,
            offload: args.offload,
            text_encoders: !args.no_text_encoders,
            quantized_text_encoder: args.quantize_text_encoder,
            without_t5: args.without_t5,
            safety_checker: !args.no_safety_checker,
        },
        ..base
    };
    // Training starts from the trainer's defaults; what the flags say wins.
    let mut w = if args.mode == Mode::Inference { base } else { args.trainer.apply(&base) };
    w.trainer = args.trainer;
    if let Some(p) = args.precision {
        w.precision = p;
    } else if args.mixed_precision {
        w.precision = Precision::Mixed;
    }
    if let Some(c) = args.checkpointing {
        w.checkpointing = c;
    }
    if let Some(r) = args.lora_rank {
        w.lora_rank = r;
    }
    w.lora_all_linear |= args.lora_all_linear;
    w.chunked_loss |= args.chunked_loss;
    w.held_logits |= args.held_logits;
    w.bnb_before_0_43 = args.bitsandbytes.is_some_and(|v| v < (0, 43));
    w.prequantized = args.prequantized.unwrap_or(arch.quantization == Some(w.weight_quant()));
    w
}

/// clap value parser for on/off switches.
fn parse_on_off(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "on" | "yes" | "true" | "1" => Ok(true),
        "off" | "no" | "false" | "0" => Ok(false),
        _ => Err(format!("'{s}': give on or off")),
    }
}

/// This machine's GPUs (NVML with a time limit), or the hypothetical one.
fn targets(args: &VramArgs) -> Vec<Target> {
    if let Some(g) = args.vram_gib {
        return vec![Target {
            name: crate::msg!("hypothetical {gib} GiB GPU", gib = g),
            total: g * GIB,
            card_total: None,
            free: None,
            holders: Vec::new(),
        }];
    }
    let source = SourceOptions { nvml_lib: args.nvml.nvml_lib.clone(), ..SourceOptions::default() };
    let view = live_nvml(&source);
    view.inventory
        .gpus
        .iter()
        .filter_map(|g| {
            Target::of_gpu(g, view.samples.iter().find(|s| s.index == g.index), crate::i18n::Message::default())
        })
        .collect()
}

/// The schema of `vram --json` (docs/messages.md): 1 added messages beside the fit and advice texts
/// (`fits[].detail_message`, `suggestions[].change_message`); 2 made the estimate's notes, the
/// inputs that would narrow its range and each assumption's words message objects (each with its
/// English `text`). Fields are only added within a schema.
pub const JSON_SCHEMA: u32 = 2;

/// What `vram` shows, text or `--json`: the model, the workload (`settings`), the engine's one
/// answer ([`vram::Answer`], its fields at the top level) and a saved calibration.
#[derive(Serialize)]
pub(crate) struct Out<'a> {
    /// The output's schema ([`JSON_SCHEMA`]; docs/messages.md).
    schema: u32,
    model: &'a Arch,
    settings: Workload,
    #[serde(flatten)]
    answer: vram::Answer,
    /// A measured peak saved for this model and these settings.
    calibration: Option<Point>,
}

/// Estimates `workload` and judges it on `targets` ([`vram::answer`]).
pub(crate) fn outcome<'a>(arch: &'a Arch, workload: Workload, targets: &[Target]) -> Result<Out<'a>, InputError> {
    let answer = vram::answer(arch, &workload, targets)?;
    Ok(Out { schema: JSON_SCHEMA, model: arch, settings: workload, answer, calibration: None })
}

/// Runs `vram`: exit code 2 for a model or workload that cannot be estimated.
pub fn run(args: &VramArgs) -> Result<ExitCode, CliError> {
    let bad = |e: &dyn crate::i18n::ToMessage| CliError::new(exit::BAD_ARGS, e.here());
    if args.list_presets {
        let list = match &args.presets_file {
            Some(p) => vram::presets::read(p).map_err(|e| bad(&e))?,
            None => vram::presets::load_all().0,
        };
        for a in &list {
            super::outln(&format!(
                "{:<24} {:>8.2} B  {}",
                a.name,
                a.params().total() / 1e9,
                crate::i18n::tr_dyn(&a.note)
            ))?;
        }
        return Ok(ExitCode::from(exit::OK));
    }
    let arch = arch_from(args).map_err(|e| CliError::new(exit::BAD_ARGS, e))?;
    if let Some(value) = &args.save_calibration {
        save_calibration(args, &arch, value)?;
    }
    // (--json is the same in every language: the answer's texts are messages, which JSON carries
    // with their English.)
    let targets = targets(args);
    let workload = workload_from(args, &arch, targets.first().map(|t| t.total));
    let mut out = outcome(&arch, workload, &targets).map_err(|e| bad(&e))?;
    if let Some(path) = calibration::path() {
        match calibration::load(&path) {
            Ok(points) => out.calibration = calibration::find(&points, &arch, &out.settings).cloned(),
            Err(e) => super::errln(&format!("gpu-doctor: {}", e.here())),
        }
    }
    if args.json.on() {
        super::outln(&super::to_json(&out)?)?;
    } else {
        super::out(&crate::present::vram::text(
            &arch,
            &out.settings,
            &out.answer,
            out.calibration.as_ref(),
            crate::i18n::current(),
        ))?;
    }
    Ok(ExitCode::from(exit::OK))
}

/// `--save-calibration [GIB]`: files the last run's peak (or the value given) under this model
/// and these settings.
fn save_calibration(args: &VramArgs, arch: &Arch, value: &str) -> Result<(), CliError> {
    let fail = |e: String| CliError::new(exit::ERROR, e);
    let (Some(path), Some(last_path)) = (calibration::path(), calibration::last_run_path()) else {
        return Err(fail(crate::tr!("no config directory (set GPU_DOCTOR_CONFIG_DIR)").into()));
    };
    let settings = workload_from(args, arch, None);
    let last = if value == "last-run" {
        calibration::load_last_run(&last_path).ok_or_else(|| {
            CliError::new(
                exit::BAD_ARGS,
                crate::tr!(
                    "no measured run to save: measure one first with gpu-doctor-cli run -- COMMAND, or give the peak: --save-calibration GIB"
                ),
            )
        })?
    } else {
        let gib = crate::cli::parse_gib(value).map_err(|e| CliError::new(exit::BAD_ARGS, e))?;
        calibration::LastRun {
            command: crate::tr!("entered by hand").into(),
            peak_bytes: gib * GIB * f64::from(settings.gpus.max(1)),
            when: chrono::Local::now().format("%Y-%m-%d %H:%M").to_string(),
        }
    };
    let point = calibration::point_from(&last, arch, &settings);
    let moved = calibration::save(&path, point.clone()).map_err(|e| fail(e.here()))?;
    if let Some(bak) = moved {
        super::errln(&format!(
            "gpu-doctor: {}",
            crate::tr!(
                "{path} could not be read; it was kept as {backup}",
                path = path.display(),
                backup = bak.display()
            )
        ));
    }
    super::errln(&crate::tr!(
        "Saved a calibration point for {model}: {gib} GiB per GPU ({command}) in {path}",
        model = arch.name,
        gib = format!("{:.2}", point.measured_per_gpu / GIB),
        command = point.command,
        path = path.display()
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vram::Holder;

    /// A 24 GiB card of which `python serve.py` holds 23 GiB.
    fn busy() -> Target {
        Target {
            name: "GPU 0 RTX 4090".into(),
            total: 24.0 * GIB,
            card_total: None,
            free: Some(GIB),
            holders: vec![Holder { name: "python serve.py".into(), pid: 4242, bytes: Some(23.0 * GIB) }],
        }
    }

    #[test]
    fn the_command_shows_the_engines_advice_in_the_engines_order() {
        let list = vram::presets::built_in();
        let arch = vram::presets::find(&list, "Llama-3.1-8B").cloned().unwrap();
        let w = Workload { seq: 2048, ..Workload::default() };
        let out = outcome(&arch, w.clone(), &[busy()]).unwrap();
        let fits = [vram::fit(vram::need(&vram::estimate(&arch, &w).unwrap(), &w), &busy())];
        assert_eq!(out.answer.suggestions, vram::advice(&arch, &w, &fits));
        assert!(
            out.answer.suggestions.len() > 2 && out.answer.suggestions[0].frees_others,
            "{:?}",
            out.answer.suggestions
        );
        let text = crate::present::vram::text(&arch, &out.settings, &out.answer, None, crate::i18n::current());
        assert!(
            text.contains("FITS ONCE FREED — fits this 24 GiB card once `python serve.py` (pid 4242) is stopped"),
            "{text}"
        );
        assert!(text.contains("With the card free, within the headroom: largest batch"), "{text}");
        let mut at = 0;
        for s in &out.answer.suggestions {
            let i = text[at..]
                .find(&s.line().en())
                .unwrap_or_else(|| panic!("{} missing or out of order:\n{text}", s.line().en()));
            at += i + 1;
        }
        let json = serde_json::to_value(&out).unwrap();
        assert_eq!(json["suggestions"].as_array().map(Vec::len), Some(out.answer.suggestions.len()));
        assert_eq!(json["suggestions"][0]["change"], out.answer.suggestions[0].change.en().as_str());
        assert_eq!(json["suggestions"][0]["change_message"]["key"], "stop {processes} to free {gpu}");
        // The fit's detail crosses JSON as data too: the same English, and Chinese made from it
        // whole (the nested "once … is stopped" and the process list included), in one process.
        assert_eq!(json["schema"], JSON_SCHEMA);
        let m: crate::i18n::Message = serde_json::from_value(json["fits"][0]["detail_message"].clone()).unwrap();
        assert_eq!(json["fits"][0]["detail"].as_str(), Some(m.en().as_str()));
        let zh = m.render(crate::i18n::Lang::ZhCn);
        assert!(
            zh.contains("“python serve.py”") && !zh.contains('`') && !zh.contains("once") && !zh.contains("stopped"),
            "{zh}"
        );
        let q = Workload { mode: Mode::Qlora, gpus: 2, sharding: Sharding::Fsdp, ..Workload::default() };
        let out = outcome(&arch, q, &[busy()]).unwrap();
        let text = crate::present::vram::text(&arch, &out.settings, &out.answer, None, crate::i18n::current());
        assert!(text.contains("weights NF4") && text.contains("sharded across 2 GPUs"), "{text}");
        assert!(!text.contains("GPU(s)") && !text.contains("Fsdp"), "{text}");
    }
}
