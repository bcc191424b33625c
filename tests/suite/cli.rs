//! The headless CLI end to end: demo data, a machine without NVML, bad arguments, exit codes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test reports a failure

use assert_cmd::Command;

fn cli() -> Command {
    let mut c = Command::cargo_bin("gpu-doctor-cli").unwrap();
    // Never pick up a real driver on a developer machine: these tests are about known data.
    c.env("GPU_DOCTOR_NVML_LIB", "/nonexistent/gpu-doctor-test/libnvidia-ml.so.1");
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn info_demo_lists_simulated_gpus_and_says_demo() {
    let out = cli().args(["info", "--demo", "healthy-training", "--gpus", "2"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let s = text(&out.stdout);
    assert!(s.contains("DEMO: simulated data"), "{s}");
    assert!(s.contains("GPU 1  Simulated GeForce RTX 4090 (DEMO)"), "{s}");
    assert!(s.contains("Max PCIe link  Gen4 x16"), "{s}");
}

#[test]
fn info_json_is_machine_readable() {
    let out = cli().args(["info", "--json", "--demo", "imbalance"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["demo"], true);
    assert_eq!(v["source"]["kind"], "demo");
    assert_eq!(v["inventory"]["gpus"].as_array().map(Vec::len), Some(4));
    assert_eq!(v["inventory"]["gpus"][0]["max_pcie_width"], 16);
}

/// `--gpu` (one definition in every command with a data source): only those GPUs, by NVML index;
/// a list that is no list is refused with the expected form, in the language asked for.
#[test]
fn gpu_selection_shows_only_the_chosen_gpus_everywhere() {
    let out = cli().args(["info", "--json", "--demo", "imbalance", "--gpu", "1,3"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let listed: Vec<u64> = v["inventory"]["gpus"]
        .as_array()
        .map(|g| g.iter().filter_map(|g| g["index"].as_u64()).collect())
        .unwrap_or_default();
    assert_eq!(listed, [1, 3]);
    let out = cli().args(["monitor", "--json", "--demo", "imbalance", "--gpu", "2", "--count", "1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let line = text(&out.stdout);
    let tick: serde_json::Value = serde_json::from_str(line.lines().last().unwrap_or_default()).unwrap();
    let sampled: Vec<u64> =
        tick["gpus"].as_array().map(|g| g.iter().filter_map(|g| g["index"].as_u64()).collect()).unwrap_or_default();
    assert_eq!(sampled, [2], "{line}");
    for lang in ["en", "zh-CN"] {
        let out = cli().args(["info", "--demo", "idle", "--gpu", "first", "--lang", lang]).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = text(&out.stderr);
        let want =
            if lang == "en" { "is not a list of GPU indices like 0 or 0,2 or 1-3" } else { "不是 GPU 编号列表" };
        assert!(err.contains(want), "{lang}: {err}");
    }
}

#[test]
fn info_without_nvml_explains_and_exits_3() {
    let out = cli().arg("info").output().unwrap();
    assert_eq!(out.status.code(), Some(3), "documented 'no GPU/driver' code");
    let s = text(&out.stdout);
    assert!(s.contains("No NVIDIA GPU data."), "{s}");
    // NVML's own answer is kept: the loader's words for each place tried. Its generic reading
    // ("no driver seems to be installed", "install the driver") leads only where no check found
    // the cause; under the checklist's root cause it would contradict it (issue 53, item 24).
    assert!(s.contains("libnvidia-ml.so.1: ") && s.contains("NVML load attempts:"), "NVML's answer is kept: {s}");
    if s.contains("(The checklist's root cause") {
        assert!(
            !s.contains("no NVIDIA driver seems to be installed") && !s.contains("Install the NVIDIA driver"),
            "{s}"
        );
    } else {
        assert!(s.contains("The NVIDIA driver's management library (NVML) was not found"), "{s}");
    }
    // One diagnosis everywhere: `info` leads with the checklist's root cause and its first fix
    // when a check failed (in a container without GPUs: "no GPU was passed into this container",
    // not NVML's "install the driver"), else with NVML's explanation.
    let check = cli().args(["check", "--json"]).output().unwrap();
    let report: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap();
    let root = report["checks"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| Some(&c["id"]) == Some(&report["root_cause"])))
        .cloned();
    let first = s.lines().find(|l| l.starts_with("No NVIDIA GPU data.")).unwrap_or_default().to_lowercase();
    match root {
        Some(c) => {
            let finding = c["finding"].as_str().unwrap_or_default().trim_end_matches('.').to_lowercase();
            assert!(first.contains(&finding), "info leads with the checklist's root cause '{finding}': {s}");
            for step in c["fixes"].as_array().into_iter().flatten() {
                let line = match (step["text"].as_str(), step["command"].as_str()) {
                    (Some(t), _) => t.to_string(),
                    (_, Some(cmd)) => format!("$ {cmd}"),
                    _ => panic!("a fix step is text or a command: {step}"),
                };
                assert!(s.contains(&line), "the root cause's fix is shown: {line}\n{s}");
            }
        }
        None => assert!(s.contains("Next step: Install the NVIDIA driver"), "{s}"),
    }
    assert!(s.contains("/nonexistent/gpu-doctor-test/libnvidia-ml.so.1: "), "every path tried is listed: {s}");
    assert!(s.contains("--demo"), "points to demo mode: {s}");

    let out = cli().args(["info", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["source"]["kind"], "unavailable");
    assert!(v["source"]["attempts"][0]["error"].as_str().is_some_and(|e| !e.is_empty()));
}

#[test]
fn monitor_demo_json_prints_one_object_per_tick() {
    let out = cli()
        .args(["monitor", "--demo", "data-starved", "--count", "3", "--interval", "0.25", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let s = text(&out.stdout);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines.len(), 3, "{s}");
    for l in lines {
        let v: serde_json::Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
        assert_eq!(v["demo"], true);
        assert_eq!(v["gpus"].as_array().map(Vec::len), Some(1));
        assert!(v["gpus"][0]["util_gpu_pct"].is_number());
        assert!(v["gpus"][0]["util_mem_bw_pct"].is_number());
        assert!(v["host"]["per_core_pct"].as_array().is_some_and(|c| c.len() == 16));
    }
}

#[test]
fn monitor_json_carries_bottleneck_verdicts() {
    // 10 s window at 0.25 s: verdicts once 5 s are covered.
    let out = cli()
        .args(["monitor", "--demo", "io-bound", "--count", "32", "--interval", "0.25", "--window", "10", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let s = text(&out.stdout);
    let lines: Vec<serde_json::Value> =
        s.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    assert_eq!(lines[0]["verdicts"], serde_json::json!([]), "no verdict from too little data");
    let last = &lines[lines.len() - 1]["verdicts"];
    assert_eq!(last[0]["finding"], "io-bound", "{last}");
    assert_eq!(last[0]["severity"], "warn");
    assert!(last[0]["next_steps"][0].as_str().is_some_and(|n| n.contains("faster storage")));
    let bad = cli().args(["monitor", "--demo", "idle", "--window", "5"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn monitor_demo_table_is_labelled_and_uses_exact_metric_names() {
    let out =
        cli().args(["monitor", "--demo", "thermal-throttle", "--count", "2", "--interval", "0.25"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let s = text(&out.stdout);
    assert_eq!(s.lines().filter(|l| l.starts_with("[DEMO]")).count(), 4, "{s}");
    assert!(s.contains("mem-bw"), "{s}");
    assert!(s.contains("thermal limit"), "throttle decoded: {s}");
    assert!(text(&out.stderr).contains("DEMO: simulated data"));
}

#[test]
fn monitor_without_nvml_shows_host_and_exits_3() {
    let out = cli().args(["monitor", "--count", "1", "--interval", "0.25"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out.stderr).contains("No NVIDIA GPU data"));
    assert!(text(&out.stderr).contains("Showing host metrics only"));
    assert!(text(&out.stdout).contains(" host  CPU "), "{}", text(&out.stdout));
}

#[test]
fn bad_arguments_exit_2_with_clear_words() {
    let out = cli().args(["monitor", "--demo", "fast"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = text(&out.stderr);
    assert!(
        e.contains("unknown demo scenario 'fast'") && e.contains("healthy-training, data-starved, io-bound"),
        "{e}"
    );

    for bad in ["0.1", "11", "abc"] {
        let out = cli().args(["monitor", "--interval", bad]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "--interval {bad}");
        assert!(text(&out.stderr).contains("--interval"), "{}", text(&out.stderr));
    }
    let out = cli().args(["monitor", "--demo", "idle", "--gpus", "9"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = cli().output().unwrap();
    assert_eq!(out.status.code(), Some(2), "a subcommand is required");
}

#[test]
fn help_documents_exit_codes() {
    let out = cli().arg("--help").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let s = text(&out.stdout);
    assert!(s.contains("3 no NVIDIA GPU/driver usable"), "{s}");
    assert!(s.contains("monitor") && s.contains("info"));
}

#[cfg(feature = "gui")]
mod gui_binary {
    use super::text;
    use assert_cmd::Command;

    fn app() -> Command {
        let mut c = Command::cargo_bin("gpu-doctor").unwrap();
        c.env("GPU_DOCTOR_NVML_LIB", "/nonexistent/gpu-doctor-test/libnvidia-ml.so.1");
        c
    }

    #[test]
    fn subcommands_run_headless() {
        let out = app().args(["info", "--demo", "idle"]).env_remove("DISPLAY").output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert!(text(&out.stdout).contains("Simulated GeForce"));
    }

    #[test]
    fn no_display_gives_a_plain_message_and_the_cli_command() {
        let out = app()
            .args(["--demo", "idle"])
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("WAYLAND_SOCKET")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(4));
        let e = text(&out.stderr);
        assert!(e.contains("no display") && e.contains("gpu-doctor-cli info"), "{e}");
    }

    #[test]
    fn broken_display_relaunches_once_with_the_other_renderer() {
        let out = app()
            .args(["--demo", "idle", "--renderer", "gl"])
            .env("DISPLAY", ":987")
            .env_remove("WAYLAND_DISPLAY")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(4));
        let e = text(&out.stderr);
        assert!(e.contains("the gl renderer could not open a window"), "{e}");
        assert!(e.contains("retrying once with wgpu"), "{e}");
        assert!(e.contains("the wgpu renderer could not open a window either"), "{e}");
        assert_eq!(e.matches("retrying once").count(), 1, "only one relaunch: {e}");
        assert!(e.contains("gpu-doctor-cli monitor"), "{e}");
    }
}

#[test]
fn every_subcommand_has_valid_help() {
    // Also runs clap's debug assertions (duplicate argument names...) for each subcommand.
    for sub in ["info", "monitor", "check", "capture", "vram"] {
        let out = cli().args([sub, "--help"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{sub}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains("Usage:"), "{sub}");
    }
}

#[test]
fn vram_breakdown_and_fit_for_a_hypothetical_card() {
    let out = cli().args(["vram", "--preset", "Llama-3.1-8B", "--seq", "8192", "--vram-gib", "24"]).output().unwrap();
    let s = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(s.contains("Llama-3.1-8B: 8.03 B parameters"), "{s}");
    assert!(s.contains("weights") && s.contains("14.96 GiB") && s.contains("KV cache"), "{s}");
    assert!(s.contains("hypothetical 24 GiB GPU: FITS") || s.contains("hypothetical 24 GiB GPU: TIGHT"), "{s}");
    let out = cli().args(["vram", "--preset", "Llama-3.1-70B", "--vram-gib", "24", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["fits"][0]["verdict"], "does not fit");
    let out = cli().args(["vram", "--list-presets"]).output().unwrap();
    assert!(text(&out.stdout).lines().count() >= 25);
}

#[test]
fn vram_prints_the_engines_advice_in_text_and_json() {
    use gpu_doctor::vram;
    let args = ["vram", "--preset", "Llama-3.1-8B", "--mode", "full", "--batch", "4", "--vram-gib", "24"];
    let out = cli().args(args).arg("--json").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let list = vram::presets::built_in();
    let arch = vram::presets::find(&list, "Llama-3.1-8B").unwrap();
    let w: vram::Workload = serde_json::from_value(v["settings"].clone()).unwrap();
    let t = vram::Target {
        name: "hypothetical 24 GiB GPU".into(),
        total: 24.0 * vram::GIB,
        card_total: None,
        free: None,
        holders: vec![],
    };
    let need = vram::need(&vram::estimate(arch, &w).unwrap(), &w);
    let advice = vram::advice(arch, &w, &[vram::fit(need, &t)]);
    assert!(!advice.is_empty());
    let got: Vec<vram::Suggestion> = serde_json::from_value(v["suggestions"].clone()).unwrap();
    // (The same list; a saving may differ in its last bit after the JSON round trip.)
    assert_eq!(got.iter().map(|g| &g.change).collect::<Vec<_>>(), advice.iter().map(|a| &a.change).collect::<Vec<_>>());
    assert!(
        got.iter().zip(&advice).all(|(g, a)| (g.saving - a.saving).abs() < 1.0 && g.frees_others == a.frees_others)
    );
    let s = text(&cli().args(args).output().unwrap().stdout);
    assert!(s.contains("To need less memory (in the order to try them):"), "{s}");
    let lines: Vec<&str> = s.lines().filter_map(|l| l.trim().strip_prefix("• ")).collect();
    assert_eq!(lines, advice.iter().map(|a| a.line().en()).collect::<Vec<_>>(), "{s}");
    assert!(s.contains("full fine-tune, 4 × 4096 tokens, 1 GPU, weights FP32"), "{s}");
    let s = text(
        &cli()
            .args(["vram", "--preset", "Llama-3.1-8B", "--mode", "qlora", "--vram-gib", "24"])
            .output()
            .unwrap()
            .stdout,
    );
    assert!(s.contains("weights NF4 (QLoRA base)") && !s.contains("GPU(s)"), "{s}");
}

#[test]
fn vram_bad_input_names_the_problem() {
    let out = cli().args(["vram", "--preset", "lama-3.1-8b"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("Closest: Llama-3.1-8B"), "{}", text(&out.stderr));
    let out = cli()
        .args(["vram", "--layers", "0", "--hidden", "4096", "--heads", "32", "--vocab", "32000"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("layers: must be at least 1"), "{}", text(&out.stderr));
    let out = cli()
        .args(["vram", "--layers", "32", "--hidden", "4096", "--heads", "30", "--vocab", "32000"])
        .output()
        .unwrap();
    assert!(text(&out.stderr).contains("heads"), "{}", text(&out.stderr));
    let out = cli().args(["vram", "--preset", "Llama-2-7B", "--quant", "q9"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("q4_k_m"));
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.json");
    std::fs::write(&cfg, r#"{"model_type":"llama","hidden_size":4096}"#).unwrap();
    let out = cli().args(["vram", "--config"]).arg(&cfg).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("num_hidden_layers: missing"), "{}", text(&out.stderr));
}

/// A config.json with a `quantization_config` (an "-bnb-4bit" or GPTQ repository): the weights
/// default to its format, the run is marked saved quantised, and `--prequantized off` and
/// `--quant` still decide.
#[test]
fn vram_reads_how_a_checkpoint_is_saved_from_its_config() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.json");
    std::fs::write(
        &cfg,
        r#"{"model_type":"llama","num_hidden_layers":80,"hidden_size":8192,"num_attention_heads":64,
            "num_key_value_heads":8,"intermediate_size":28672,"vocab_size":128256,
            "quantization_config":{"quant_method":"bitsandbytes","load_in_4bit":true,
            "bnb_4bit_quant_type":"nf4","bnb_4bit_use_double_quant":true}}"#,
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let out = cli()
            .args(["vram", "--vram-gib", "80", "--seq", "2048", "--json", "--config"])
            .arg(&cfg)
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let v = run(&[]);
    assert_eq!(v["settings"]["quant"], "nf4_dq", "{}", v["settings"]);
    assert_eq!(v["settings"]["prequantized"], true);
    assert_eq!(v["model"]["quantization"], "nf4_dq");
    let notes = v["breakdown"]["notes"].to_string();
    assert!(notes.contains("saved quantised"), "{notes}");
    // Quantised at load instead: the load's note, and never less memory.
    let at_load = run(&["--prequantized", "off"]);
    assert_eq!(at_load["settings"]["prequantized"], false);
    assert!(at_load["breakdown"]["notes"].to_string().contains("quantised at load"));
    assert!(at_load["per_gpu_gib"].as_f64().unwrap() >= v["per_gpu_gib"].as_f64().unwrap());
    // An explicit format wins, and a 16-bit run is not "saved quantised".
    let bf16 = run(&["--quant", "bf16"]);
    assert_eq!(bf16["settings"]["quant"], "bf16");
    assert_eq!(bf16["settings"]["prequantized"], false);
    // QLoRA over it keeps the saved format.
    let q = run(&["--mode", "qlora"]);
    assert_eq!(q["settings"]["prequantized"], true);
}

/// Issue 37, item 5: FLUX.1 LoRA and QLoRA training; SD 1.5 and SDXL training say what is
/// modelled instead.
#[test]
fn vram_estimates_flux_lora_training_and_names_what_is_not_modelled() {
    let run = |args: &[&str]| cli().args(["vram", "--vram-gib", "24"]).args(args).output().unwrap();
    let flux = [
        "--preset",
        "FLUX.1-dev",
        "--width",
        "512",
        "--height",
        "768",
        "--checkpointing",
        "full",
        "--no-text-encoders",
        "--lora-rank",
        "4",
    ];
    let q = run(&[&flux[..], &["--mode", "qlora"]].concat());
    assert_eq!(q.status.code(), Some(0), "{}", text(&q.stderr));
    let out = text(&q.stdout);
    assert!(out.contains("QLoRA, 1 × 512×768 px, weights NF4 (QLoRA base)"), "{out}");
    assert!(out.contains("hypothetical 24 GiB GPU: FITS"), "{out}");
    let l = run(&[&flux[..], &["--mode", "lora"]].concat());
    assert!(text(&l.stdout).contains("DOES NOT FIT"), "{}", text(&l.stdout));
    let sdxl = run(&["--preset", "SDXL-base-1.0", "--mode", "lora"]);
    assert_eq!(sdxl.status.code(), Some(2));
    assert!(text(&sdxl.stderr).contains("training is modelled for FLUX.1"), "{}", text(&sdxl.stderr));
}

#[test]
fn vram_presets_are_found_by_near_names() {
    for name in ["llama3 8b", "llama-3.1-8b", "Llama 3.1 8B"] {
        let out = cli().args(["vram", "--preset", name, "--vram-gib", "24"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains("Llama-3.1-8B: 8.03 B parameters"), "{name}: {}", text(&out.stdout));
    }
    let out = cli().args(["vram", "--preset", "llama3 8b", "--vram-gib", "24"]).output().unwrap();
    assert!(text(&out.stderr).contains("read as Llama-3.1-8B (also Llama-3-8B"), "{}", text(&out.stderr));
    // Ambiguous: the candidates come first.
    let out = cli().args(["vram", "--preset", "llama 70b"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("'llama 70b' could be Llama-2-70B, Llama-3.1-70B"), "{}", text(&out.stderr));
}

#[test]
fn vram_user_presets_extend_the_built_in_ones_and_a_broken_file_is_reported() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("gpu-doctor");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("models.ron"), r#"[(name: "My-Model-1B", layers: 16, hidden: 2048, heads: 16, kv_heads: 4, intermediate: 8192, vocab: 32000)]"#)
        .unwrap();
    let out = cli().env("XDG_CONFIG_HOME", home.path()).args(["vram", "--list-presets"]).output().unwrap();
    let s = text(&out.stdout);
    assert!(s.contains("My-Model-1B") && s.contains("Llama-3.1-8B"), "{s}");
    std::fs::write(dir.join("models.ron"), "[( name: broken").unwrap();
    let out = cli()
        .env("XDG_CONFIG_HOME", home.path())
        .args(["vram", "--preset", "Llama-2-7B", "--vram-gib", "24"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stderr).contains("using the built-in presets"), "{}", text(&out.stderr));
}

#[test]
fn run_and_focus_without_a_driver_say_no_driver_answered() {
    let out = cli().args(["run", "--interval", "0.25", "--", "sleep", "0.3"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stderr);
    assert!(s.contains("GPU: no NVIDIA driver answered (see gpu-doctor-cli check)"), "{s}");
    assert!(!s.contains("not reported by the driver"), "{s}");
    let out = cli().args(["run", "--json", "--interval", "0.25", "--", "true"]).output().unwrap();
    let e = text(&out.stderr);
    let v: serde_json::Value = serde_json::from_str(&e[e.find('{').unwrap()..]).unwrap();
    assert_eq!(v["gpu_access"], "no-driver");

    let mut sleeper = std::process::Command::new("sleep").arg("20").spawn().unwrap();
    let pid = sleeper.id().to_string();
    let out = cli().args(["focus", "--watch", "1", "--interval", "0.25", "--pid", &pid]).output().unwrap();
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    let s = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{s}");
    assert!(s.contains("GPU: no NVIDIA driver answered (see gpu-doctor-cli check)"), "{s}");
    // States in words with counts, not letters; the real PID in the next step.
    assert!(s.contains("sleeping ") && s.contains(" readings") && !s.contains("SSS"), "{s}");
    assert!(s.contains(&format!("py-spy dump --pid {pid}")) && !s.contains("--pid PID"), "{s}");
}

use crate::common;

/// Issue 16, items 1-2: every reader of a user's file refuses a FIFO and a link to a device at
/// once, with the reason, instead of blocking forever or reading until memory runs out.
#[cfg(unix)]
#[test]
fn every_file_reader_refuses_fifos_and_devices_at_once() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    common::mkfifo(&fifo);
    let zero = dir.path().join("zero");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let fifo_s = fifo.to_string_lossy().into_owned();
    let zero_s = zero.to_string_lossy().into_owned();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["replay", &fifo_s], "a FIFO"),
        (vec!["replay", &zero_s], "a device"),
        (vec!["vram", "--config", &fifo_s], "a FIFO"),
        (vec!["vram", "--config", &zero_s], "a device"),
        (vec!["vram", "--presets-file", &fifo_s, "--preset", "x"], "a FIFO"),
        (vec!["vram", "--presets-file", &zero_s, "--preset", "x"], "a device"),
        (vec!["check", "--from", &fifo_s], ""),
    ];
    for (args, why) in cases {
        let started = Instant::now();
        let out = cli().args(&args).timeout(Duration::from_secs(20)).output().unwrap();
        assert!(started.elapsed() < Duration::from_secs(10), "{args:?} took {:?}", started.elapsed());
        let err = text(&out.stderr);
        assert!(matches!(out.status.code(), Some(1 | 2)), "{args:?}: {:?} {err}", out.status.code());
        assert!(err.contains(why), "{args:?}: {err}");
    }
}

/// Issue 16, items 9, 14, 16, 17: arguments a command cannot honour are refused before anything
/// runs, with the unit or the reason, exit 2.
#[test]
fn arguments_that_cannot_be_honoured_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let existing = dir.path().join("summary.json");
    std::fs::write(&existing, "keep me").unwrap();
    let marker = dir.path().join("ran");
    let existing_s = existing.to_string_lossy().into_owned();
    let marker_s = marker.to_string_lossy().into_owned();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["focus", "--pid", "1", "--watch", "1e300"], "out of range: give 0.25-3600 seconds"),
        (vec!["focus", "--pid", "1", "--watch", "NaN"], "out of range"),
        (vec!["focus", "--pid", "1", "--watch", "0"], "out of range"),
        (vec!["record", "--out", "/nonexistent/x", "--duration", "inf"], "out of range"),
        (vec!["record", "--out", "/nonexistent/x", "--duration=-1"], "out of range"),
        (vec!["vram", "--preset", "Llama-2-7B", "--vram-gib", "NaN"], "out of range: give 0.5-4096 GiB"),
        (vec!["vram", "--preset", "Llama-2-7B", "--vram-gib=-24"], "out of range"),
        (vec!["check", "--demo", "idle"], "unexpected argument '--demo'"),
        (vec!["capture", "--demo", "idle", "--out", "/nonexistent/x"], "unexpected argument '--demo'"),
        (vec!["focus", "--pid", "1", "--log", "/nonexistent/train.log"], "--log /nonexistent/train.log: No such file"),
        (vec!["focus", "--pid", "1", "--log", "/tmp"], "not a regular file (a directory)"),
        (vec!["run", "--json-out", &existing_s, "--", "touch", &marker_s], "already exists"),
    ];
    for (args, want) in cases {
        let out = cli().args(&args).output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    assert!(!marker.exists(), "the command never ran");
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "keep me");
}

/// Issue 16, item 8: a full disk is one line and exit 1; a reader that went away ends the output
/// quietly; never a panic.
#[cfg(target_os = "linux")]
#[test]
fn output_errors_are_one_line_or_quiet_never_a_panic() {
    let cases: [&[&str]; 6] = [
        &["info", "--demo", "idle"],
        &["check"],
        &["check", "--from", concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/healthy-workstation")],
        &["vram", "--preset", "Llama-2-7B", "--vram-gib", "24"],
        &["monitor", "--demo", "idle", "--count", "2", "--interval", "0.25"],
        &["report", "--demo", "idle", "--sample", "0"],
    ];
    for args in cases {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("gpu-doctor-cli"))
            .args(args)
            .env("GPU_DOCTOR_NVML_LIB", "/nonexistent/gpu-doctor-test/libnvidia-ml.so.1")
            .stdout(full)
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("could not write the output: No space left on device"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // The reading end closed before anything was written (like `| head` that has had enough).
    for args in [&["monitor", "--demo", "idle", "--count", "8", "--interval", "0.25"][..], &["check"][..]] {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("gpu-doctor-cli"))
            .args(args)
            .env("GPU_DOCTOR_NVML_LIB", "/nonexistent/gpu-doctor-test/libnvidia-ml.so.1")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = text(&out.stderr);
        assert!(!err.contains("panicked") && !err.contains("could not write"), "{args:?}: {err}");
        assert_ne!(out.status.code(), Some(101), "{args:?}");
    }
}

/// Issue 16, item 19: the command printed after `capture` runs as printed, spaces and quotes in
/// the path included.
#[test]
fn the_printed_follow_up_command_quotes_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("my cap's");
    let out = cli().args(["capture", "--out"]).arg(&cap).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    let quoted = format!("gpu-doctor-cli check --from '{}'\\''s'", dir.path().join("my cap").display());
    assert!(printed.contains(&quoted), "{printed}\nwanted: {quoted}");
}

/// Issue 16, item 12: a library the user named that is wrong gets a headline about that file.
#[cfg(target_os = "linux")]
#[test]
fn a_wrong_library_path_is_named_as_what_it_is() {
    let libc = ["/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib64/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .unwrap_or("/lib/x86_64-linux-gnu/libc.so.6");
    for (path, nvml, cuda) in [
        ("/etc/passwd", "/etc/passwd is not a shared library", "/etc/passwd is not a shared library"),
        ("/nonexistent/lib.so", "/nonexistent/lib.so does not exist.", "/nonexistent/lib.so does not exist"),
        (
            libc,
            "is a shared library but not NVML: it has no nvmlInit_v2",
            "is a shared library but not the CUDA driver: it has no cuInit",
        ),
    ] {
        let out = Command::cargo_bin("gpu-doctor-cli").unwrap().args(["info", "--nvml-lib", path]).output().unwrap();
        let s = text(&out.stdout);
        assert!(s.contains(nvml), "{path}: {s}");
        assert!(!s.contains("too old") && !s.contains("NVML) was not found"), "{path}: {s}");
        let out = Command::cargo_bin("gpu-doctor-cli").unwrap().args(["smoke", "--cuda-lib", path]).output().unwrap();
        let s = text(&out.stdout);
        assert!(s.contains(cuda), "{path}: {s}");
    }
}

/// Issue 16, item 7: on a really full disk (a small tmpfs, mounted in a private mount namespace
/// so no root is needed) `capture` and `report` fail with one clear line, leave no partial
/// capture, archive or report behind and never touch the user's file already there. Skips, saying
/// so, where mount namespaces are not allowed.
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_leaves_nothing_half_written() {
    let dir = tempfile::tempdir().unwrap();
    let disk = dir.path().join("disk");
    std::fs::create_dir(&disk).unwrap();
    let exe = env!("CARGO_BIN_EXE_gpu-doctor-cli");
    // 96 KiB: the user's file fits; then the rest is filled, so nothing more does (a capture
    // archive is a few KiB since captures hold only what the checks need).
    let script = format!(
        "mount -t tmpfs -o size=96k tmpfs '{d}' || exit 99
         head -c 40000 /dev/urandom > '{d}/mine.bin'; sum=$(md5sum < '{d}/mine.bin')
         cat /dev/zero > '{d}/filler.bin' 2>/dev/null
         '{exe}' capture --out '{d}/cap'; echo \"capture rc=$?\"
         '{exe}' capture --archive '{d}/cap.tar.gz'; echo \"archive rc=$?\"
         '{exe}' report --demo idle --sample 1 --format html --out '{d}/r.html'; echo \"report rc=$?\"
         rm '{d}/filler.bin'
         [ \"$(md5sum < '{d}/mine.bin')\" = \"$sum\" ] && echo 'mine kept'
         echo left: $(ls -A '{d}')",
        d = disk.display()
    );
    let direct = std::process::Command::new("sh").args(["-c", &script]).output().unwrap();
    let out = if direct.status.code() == Some(99) {
        std::process::Command::new("unshare").args(["-rm", "sh", "-c", &script]).output().unwrap()
    } else {
        direct
    };
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    if out.status.code() == Some(99) || !stdout.contains("left:") {
        crate::common::skip(
            "a_full_disk_leaves_nothing_half_written",
            &format!("no tmpfs could be mounted here (no mount namespace). {stderr}"),
        );
        return;
    }
    for rc in ["capture rc=1", "archive rc=1", "report rc=1"] {
        assert!(stdout.contains(rc), "{rc}: {stdout}{stderr}");
    }
    assert!(stdout.contains("mine kept"), "{stdout}");
    assert!(stdout.contains("left: mine.bin\n"), "partial files left: {stdout}");
    assert!(stderr.matches("No space left on device").count() >= 3, "{stderr}");
    // The tmpfs was mounted over `disk` only for the script.
    let _ = std::process::Command::new("umount").arg(&disk).status();
}

#[test]
fn vram_training_starts_from_the_trainers_defaults_and_states_what_moves_the_figure() {
    let base =
        ["vram", "--preset", "Llama-3.1-8B", "--mode", "lora", "--batch", "4", "--seq", "2048", "--vram-gib", "24"];
    let json = |extra: &[&str]| -> serde_json::Value {
        let out = cli().args(base).args(extra).arg("--json").output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    // A plain Hugging Face Trainer run keeps every activation; TRL turns checkpointing on and
    // chunks the loss; a flag beats the trainer.
    let hf = json(&[]);
    assert_eq!(hf["settings"]["trainer"], "hf_trainer");
    assert_eq!(hf["settings"]["checkpointing"], "none");
    let trl = json(&["--trainer", "trl"]);
    assert_eq!(trl["settings"]["checkpointing"], "full");
    assert_eq!(trl["settings"]["chunked_loss"], true);
    assert!(trl["per_gpu_gib"].as_f64() < hf["per_gpu_gib"].as_f64());
    let forced = json(&["--trainer", "trl", "--checkpointing", "none"]);
    assert_eq!(forced["settings"]["checkpointing"], "none");
    // Each listed assumption gives the figure under the other choice, and the text says it.
    let a = hf["assumptions"].as_array().unwrap();
    let ckpt = a.iter().find(|x| x["id"] == "checkpointing").expect("checkpointing is listed");
    let with_ckpt = ckpt["figure_if"].as_f64().unwrap() / (1u64 << 30) as f64;
    assert!(with_ckpt < hf["per_gpu_gib"].as_f64().unwrap() * 0.8, "{ckpt}");
    let s = text(&cli().args(base).output().unwrap().stdout);
    assert!(s.contains("trainer: HF Trainer"), "{s}");
    assert!(s.contains(&format!("with gradient checkpointing: {with_ckpt:.1} GiB")), "{s}");
}

#[test]
fn vram_gives_a_range_judged_on_its_high_end_and_keeps_a_peak_entered_by_hand() {
    let config = tempfile::tempdir().unwrap();
    let with_dir = || {
        let mut c = cli();
        c.env("GPU_DOCTOR_CONFIG_DIR", config.path());
        c
    };
    let base = [
        "vram",
        "--preset",
        "BERT-large",
        "--mode",
        "full",
        "--batch",
        "4",
        "--seq",
        "512",
        "--precision",
        "fp32",
        "--vram-gib",
        "16",
    ];
    let json = |extra: &[&str]| -> serde_json::Value {
        let out = with_dir().args(base).args(extra).arg("--json").output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let v = json(&[]);
    let b = &v["breakdown"];
    let (low, total, high) = (b["low"].as_f64().unwrap(), b["total"].as_f64().unwrap(), b["high"].as_f64().unwrap());
    assert!(low < total && total < high, "{b}");
    // The verdict's figure is the high end.
    assert!((v["per_gpu_gib"].as_f64().unwrap() - high / f64::from(1u32 << 30)).abs() < 1e-9, "{v}");
    assert!(!b["narrow_by"].as_array().unwrap().is_empty());
    // An encoder gets eager attention unless told otherwise; fused attention needs less.
    assert_eq!(v["settings"]["flash_attention"], false);
    let fused = json(&["--attention", "fused"]);
    assert_eq!(fused["settings"]["flash_attention"], true);
    assert!(fused["breakdown"]["total"].as_f64().unwrap() < total * 0.8);
    let s = text(&with_dir().args(base).output().unwrap().stdout);
    assert!(s.contains("the verdict uses the high end"), "{s}");
    // No measured run yet: --save-calibration says how to get one; a value given is kept.
    let out = with_dir().args(base).arg("--save-calibration").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no measured run to save"), "{}", text(&out.stderr));
    let out = with_dir().args(base).args(["--save-calibration", "15.2"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("Saved a calibration point for BERT-large: 15.20 GiB per GPU (entered by hand)")
    );
    let v = json(&[]);
    assert_eq!(v["calibration"]["measured_per_gpu"].as_f64(), Some(15.2 * f64::from(1u32 << 30)));
    // A broken calibration file is kept aside, never overwritten.
    std::fs::write(config.path().join("vram-calibration.json"), "not json").unwrap();
    let out = with_dir().args(base).args(["--save-calibration", "15.0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(config.path().join("vram-calibration.json.bak")).unwrap(), "not json");
}

/// Hugging Face generate's logits follow the transformers version: 4.45 and later keep the last
/// position's only (the default), `--transformers 4.44` the whole prompt's in fp32; the JSON and
/// the text name the assumption with the other version's figure.
#[test]
fn vram_models_generate_by_transformers_version() {
    let run = |extra: &[&str]| {
        vram_json(&[&["--preset", "Llama-3.1-8B", "--seq", "16384", "--vram-gib", "24"][..], extra].concat())
    };
    let gib = |v: &serde_json::Value| v["per_gpu_gib"].as_f64().unwrap();
    let (now, old) = (run(&[]), run(&["--transformers", "4.44.2"]));
    assert!(gib(&old) - gib(&now) > 7.0, "{} vs {}", gib(&old), gib(&now));
    let other = |v: &serde_json::Value| {
        v["assumptions"].as_array().unwrap().iter().find(|a| a["id"] == "hf_logits").cloned().unwrap()
    };
    assert_eq!(other(&now)["alternative"]["text"], "with transformers before 4.45");
    assert_eq!(other(&old)["alternative"]["text"], "with transformers 4.45+");
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_gpu-doctor-cli"))
        .args(["vram", "--preset", "Llama-3.1-8B", "--transformers", "new"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not a version such as 4.44"));
}

/// `gpu-doctor-cli vram ARGS --json`, which must succeed, as JSON.
fn vram_json(args: &[&str]) -> serde_json::Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gpu-doctor-cli"))
        .arg("vram")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
}

/// `--bitsandbytes 0.41`: a bf16 run's 4-bit matmul holds the fp16 dequantisation and its cast
/// (litgpt's Falcon-40B head: 65024 × 8192 in 16 bits, 1.0 GiB more); 0.43 and later is the
/// default; the JSON settings say which; a bad version is refused with an example.
/// `--held-logits`: the logits a loop keeps are counted and freeing them is the first advice.
#[test]
fn vram_takes_the_bitsandbytes_version_and_logits_a_loop_keeps() {
    let run = |args: &[&str]| vram_json(&[&["--vram-gib", "80"][..], args].concat());
    let gib = |v: &serde_json::Value| v["per_gpu_gib"].as_f64().unwrap();
    let falcon = ["--preset", "Falcon-40B", "--framework", "litgpt", "--quant", "nf4-dq", "--seq", "256"];
    let now = run(&falcon);
    let old = run(&[&falcon[..], &["--bitsandbytes", "0.41.1"]].concat());
    let newer = run(&[&falcon[..], &["--bitsandbytes", "0.45"]].concat());
    let act = |v: &serde_json::Value| v["breakdown"]["activations"].as_f64().unwrap();
    assert!((act(&old) - act(&now) - 65024.0 * 8192.0 * 2.0).abs() < 1.0);
    assert!(gib(&old) > gib(&now) + 0.99);
    assert_eq!(gib(&newer), gib(&now));
    assert_eq!(old["settings"]["bnb_before_0_43"], true);
    assert!(now["settings"].get("bnb_before_0_43").is_none());
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_gpu-doctor-cli"))
        .args(["vram", "--preset", "Falcon-40B", "--bitsandbytes", "old"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("old is not a version such as 0.42"));

    let lora =
        ["--preset", "Llama-3.1-8B", "--mode", "lora", "--batch", "2", "--seq", "4096", "--checkpointing", "full"];
    let (freed, held) = (run(&lora), run(&[&lora[..], &["--held-logits"]].concat()));
    let logits = 2.0 * 4096.0 * 128_256.0 * 4.0 / 1_073_741_824.0;
    assert!(gib(&held) - gib(&freed) >= logits, "{} vs {}", gib(&held), gib(&freed));
    assert_eq!(held["settings"]["held_logits"], true);
    let advice = held["suggestions"].as_array().expect("suggestions in the JSON");
    assert!(
        advice.iter().any(|a| a["change"].as_str().is_some_and(|c| c.starts_with("free the logits"))),
        "{advice:?}"
    );
}

/// Issue 53, item 18: a capture's capture.json (what a file chooser offers inside its folder) is
/// read as its capture, not refused.
#[test]
fn a_captures_capture_json_opens_its_capture() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/user-not-in-video-group");
    let by_folder = cli().args(["check", "--json", "--from"]).arg(&dir).output().unwrap();
    let by_file = cli().args(["check", "--json", "--from"]).arg(dir.join("capture.json")).output().unwrap();
    assert_eq!(by_file.status.code(), by_folder.status.code(), "{}", String::from_utf8_lossy(&by_file.stderr));
    let root = |o: &std::process::Output| {
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["root_cause"].clone()
    };
    assert_eq!(root(&by_file), root(&by_folder));
    assert!(root(&by_file).is_string(), "{}", String::from_utf8_lossy(&by_file.stdout));
}
