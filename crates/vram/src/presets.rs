//! Model presets (assets/models.ron, built in and extendable by a user file) and import of a
//! Hugging Face `config.json`.

use std::path::Path;

use super::{Arch, InputError, Mla, ModelKind, Moe};
use crate::i18n::Message;

/// The built-in presets file.
pub const BUILT_IN: &str = include_str!("../../../assets/models.ron");

/// The user's own presets file: `$XDG_CONFIG_HOME/gpu-doctor/models.ron` (default
/// `~/.config/...`), or `%APPDATA%\gpu-doctor\models.ron` on Windows. Its entries are added to
/// the built-in ones (same name: the user's wins).
pub fn user_file() -> Option<std::path::PathBuf> {
    crate::paths::platform_config_dir().map(|d| d.join("models.ron"))
}

/// Built-in presets plus the user's file when it exists; a broken user file is reported, and the
/// built-in presets are used alone.
pub fn load_all() -> (Vec<Arch>, Option<Message>) {
    let mut list = built_in();
    let Some(path) = user_file().filter(|p| p.exists()) else { return (list, None) };
    match read(&path) {
        Ok(user) => {
            for a in user {
                list.retain(|b| b.name != a.name);
                list.push(a);
            }
            (list, None)
        }
        Err(e) => (
            list,
            Some(crate::msg!(
                "{path}: {error} (using the built-in presets)",
                path = path.display(),
                error = e.message()
            )),
        ),
    }
}

/// Why a presets file or a preset name cannot be used.
#[derive(Debug, Clone, PartialEq)]
pub enum PresetError {
    /// The file could not be read.
    Read(Message),
    /// The file is not a RON list of models.
    Syntax(Message),
    /// One model's shape is impossible.
    Invalid {
        /// The preset.
        name: String,
        /// What is wrong.
        problem: InputError,
    },
    /// Several presets match a loose name.
    Ambiguous {
        /// The name asked for.
        name: String,
        /// The presets it matches.
        candidates: Vec<String>,
    },
    /// No preset has that name.
    Unknown {
        /// The name asked for.
        name: String,
        /// The closest names.
        closest: Vec<String>,
    },
}

impl crate::i18n::ToMessage for PresetError {
    fn to_message(&self) -> crate::i18n::Message {
        self.message()
    }
}

/// In English (logs); a front end shows [`crate::i18n::ToMessage::to_message`] in its language.
impl std::fmt::Display for PresetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message().en())
    }
}

impl PresetError {
    /// What is wrong, as a message.
    pub fn message(&self) -> Message {
        match self {
            PresetError::Read(e) => e.clone(),
            PresetError::Syntax(e) => crate::msg!("presets file: {error}", error = e),
            PresetError::Invalid { name, problem } => crate::msg!(
                "preset '{name}': {problem}",
                name = name,
                problem = crate::msg!("{label}: {value}", label = problem.field, value = &problem.problem)
            ),
            PresetError::Ambiguous { name, candidates } => crate::msg!(
                "'{name}' could be {candidates}: give one of these names. All presets: gpu-doctor-cli vram --list-presets",
                name = name,
                candidates = candidates.join(", ")
            ),
            PresetError::Unknown { name, closest } => crate::msg!(
                "no preset named '{name}'. Closest: {closest}. All presets: gpu-doctor-cli vram --list-presets",
                name = name,
                closest = closest.join(", ")
            ),
        }
    }
}

impl std::error::Error for PresetError {}

/// Reads and parses a presets file.
pub fn read(path: &Path) -> Result<Vec<Arch>, PresetError> {
    let text = crate::safe_fs::read_text(path, crate::safe_fs::PRESETS_CAP).map_err(|e| PresetError::Read(e.into()))?;
    // A syntax error names the file as well as the place in it.
    parse(&text).map_err(|e| match e {
        PresetError::Syntax(e) => {
            PresetError::Syntax(crate::msg!("{label}: {value}", label = path.display(), value = e))
        }
        other => other,
    })
}

/// Parses a presets file (a RON list of [`Arch`]).
pub fn parse(text: &str) -> Result<Vec<Arch>, PresetError> {
    let list: Vec<Arch> = ron::from_str(text).map_err(|e| PresetError::Syntax(ron_problem(&e)))?;
    for a in &list {
        a.validate().map_err(|problem| PresetError::Invalid { name: a.name.clone(), problem })?;
    }
    Ok(list)
}

/// The built-in presets (validated by a test, so this never fails in a release).
pub fn built_in() -> Vec<Arch> {
    parse(BUILT_IN).unwrap_or_default()
}

/// Finds a preset by name: exactly (ignoring case); else the one preset whose name matches once
/// case, spaces, dashes, dots and underscores are ignored ("llama 3.1 8b"); else the one preset of
/// that family whose name holds every word and number given, in order ("llama3 8b" is
/// Llama-3.1-8B, "qwen 7b" Qwen2.5-7B). Several matches are an error naming them; no match names
/// the closest presets.
pub fn find<'a>(list: &'a [Arch], name: &str) -> Result<&'a Arch, PresetError> {
    let want = name.trim().to_ascii_lowercase();
    if let Some(a) = list.iter().find(|a| a.name.to_ascii_lowercase() == want) {
        return Ok(a);
    }
    let squashed = |s: &str| s.chars().filter(char::is_ascii_alphanumeric).collect::<String>().to_ascii_lowercase();
    let wanted = tokens(name);
    let rules: [&dyn Fn(&Arch) -> bool; 2] = [&|a| !want.is_empty() && squashed(&a.name) == squashed(&want), &|a| {
        let have = tokens(&a.name);
        wanted.first().is_some_and(|w| have.first() == Some(w)) && is_subsequence(&wanted, &have)
    }];
    for rule in rules {
        let hits: Vec<&Arch> = list.iter().filter(|a| rule(a)).collect();
        match hits.as_slice() {
            [one] => return Ok(one),
            [] => {}
            many => {
                return Err(PresetError::Ambiguous {
                    name: name.to_string(),
                    candidates: many.iter().map(|a| a.name.clone()).collect(),
                });
            }
        }
    }
    let mut scored: Vec<(f64, &str)> =
        list.iter().map(|a| (strsim::jaro_winkler(&want, &a.name.to_ascii_lowercase()), a.name.as_str())).collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let closest = scored.iter().take(3).map(|s| s.1.to_string()).collect();
    Err(PresetError::Unknown { name: name.to_string(), closest })
}

/// A name's words and numbers, lower case: "Llama-3.1-8B" → llama, 3, 1, 8, b.
fn tokens(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    for c in name.chars().map(|c| c.to_ascii_lowercase()) {
        let same_kind = cur.chars().last().is_some_and(|p| p.is_ascii_digit() == c.is_ascii_digit());
        if (!c.is_ascii_alphanumeric() || !same_kind) && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        if c.is_ascii_alphanumeric() {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// True when every item of `want` appears in `have`, in order.
fn is_subsequence(want: &[String], have: &[String]) -> bool {
    let mut rest = have.iter();
    !want.is_empty() && want.iter().all(|w| rest.any(|h| h == w))
}

/// The first of `keys` that `v` holds as a number: `Ok(None)` when none is there (or it is not a
/// number: some models keep a list per layer under these names); an error naming the key when
/// the number is not a whole one that fits (`"hidden_size": -4096` is wrong, not missing).
fn field_u32(v: &serde_json::Value, keys: &[&'static str]) -> Result<Option<u32>, InputError> {
    let Some((key, x)) = keys.iter().find_map(|k| v.get(*k).filter(|x| x.is_number()).map(|x| (*k, x))) else {
        return Ok(None);
    };
    x.as_u64().and_then(|n| u32::try_from(n).ok()).map(Some).ok_or_else(|| not_whole(key, x))
}

fn not_whole(key: &'static str, x: &serde_json::Value) -> InputError {
    InputError {
        field: key,
        problem: crate::msg!("{value} is not a whole number from 0 to {max}", value = x, max = u32::MAX),
    }
}

/// A presets file's syntax error in plain words, with where it is: "line 1, column 23: a model
/// needs `hidden`", not the parser's "Unexpected missing field named `hidden` in `Arch`".
fn ron_problem(e: &ron::error::SpannedError) -> Message {
    use ron::error::Error as E;
    let at = crate::msg!("line {line}, column {col}", line = e.span.start.line, col = e.span.start.col);
    let what = match &e.code {
        E::MissingStructField { field, .. } => {
            crate::msg!("a model needs `{field}` (see the built-in presets for every field)", field = field)
        }
        E::NoSuchStructField { expected, found, .. } => crate::msg!(
            "`{found}` is not a field of a model; the fields are: {fields}",
            found = found,
            fields = expected.join(", ")
        ),
        E::DuplicateStructField { field, .. } => crate::msg!("`{field}` is given twice", field = field),
        E::ExpectedArray => crate::msg!("the file must be a list of models: [ (name: …, …), … ]"),
        E::ExpectedComma | E::ExpectedArrayEnd | E::ExpectedStructLikeEnd => {
            crate::msg!("a comma or a closing bracket is missing here")
        }
        E::IntegerOutOfBounds | E::ExpectedInteger | E::InvalidIntegerDigit { .. } => {
            crate::msg!("this must be a whole number from 0 to {max}", max = u32::MAX)
        }
        E::ExpectedString | E::ExpectedStringEnd => crate::msg!("this must be text in double quotes"),
        E::ExpectedBoolean => crate::msg!("this must be true or false"),
        E::Eof => crate::msg!("the file ends before the list does"),
        E::UnclosedBlockComment | E::UnclosedLineComment => crate::msg!("a comment is not closed"),
        E::TrailingCharacters => crate::msg!("there is more after the list of models"),
        // The rest are rare; the parser's own words are the best there is, marked as such.
        other => crate::msg!("not valid here ({error})", error = other),
    };
    crate::msg!("{label}: {value}", label = at, value = what)
}

/// Reads the memory-relevant fields of a Hugging Face `config.json` (Llama, Mistral, Mixtral,
/// Qwen2/3, Gemma, Phi-3, Falcon, GPT-BigCode, DeepSeek-V3 naming). Missing required fields are
/// named in the error.
pub fn from_hf_config(text: &str, name: &str) -> Result<Arch, InputError> {
    let bad = |field: &'static str, problem: crate::i18n::Message| InputError { field, problem };
    let v: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| InputError { field: "config.json", problem: crate::msg!("not valid JSON: {error}", error = e) })?;
    let top = v.clone();
    let v = v.get("text_config").cloned().unwrap_or(v);
    let need = |keys: &[&'static str], field: &'static str| {
        if let Some(n) = field_u32(&v, keys)? {
            return Ok(n);
        }
        // There, but not a number ("4096", a list): wrong, not missing.
        match keys.iter().find_map(|k| v.get(*k).filter(|x| !x.is_null()).map(|x| (*k, x))) {
            Some((key, x)) => Err(not_whole(key, x)),
            None => Err(bad(field, crate::msg!("missing (looked for {keys})", keys = keys.join(", ")))),
        }
    };
    let layers = need(&["num_hidden_layers", "n_layer", "num_layers"], "num_hidden_layers")?;
    let hidden = need(&["hidden_size", "n_embd", "d_model"], "hidden_size")?;
    let heads = need(&["num_attention_heads", "n_head"], "num_attention_heads")?;
    let model_type = v.get("model_type").and_then(|m| m.as_str()).unwrap_or("");
    let multi_query = v.get("multi_query").and_then(serde_json::Value::as_bool).unwrap_or(false);
    let kv_heads = field_u32(&v, &["num_key_value_heads", "num_kv_heads", "n_head_kv"])?.unwrap_or(if multi_query {
        1
    } else {
        heads
    });
    let encoder =
        matches!(model_type, "bert" | "roberta" | "xlm-roberta" | "electra" | "camembert" | "deberta" | "deberta-v2");
    let gated = !encoder && !matches!(model_type, "falcon" | "gpt_bigcode" | "phi" | "gpt_neox" | "gpt2");
    let intermediate = field_u32(&v, &["intermediate_size", "n_inner", "ffn_hidden_size"])?.unwrap_or(4 * hidden);
    let vocab = need(&["vocab_size"], "vocab_size")?;
    let experts = field_u32(&v, &["num_local_experts", "n_routed_experts", "num_experts"])?;
    let moe = match experts {
        Some(e) if e > 1 => Some(Moe {
            experts: e,
            active: field_u32(&v, &["num_experts_per_tok", "moe_topk"])?
                .ok_or_else(|| bad("num_experts_per_tok", crate::msg!("missing for a mixture-of-experts model")))?,
            expert_intermediate: field_u32(&v, &["moe_intermediate_size"])?.unwrap_or(intermediate),
            shared_experts: field_u32(&v, &["n_shared_experts"])?.unwrap_or(0),
            dense_layers: field_u32(&v, &["first_k_dense_replace"])?.unwrap_or(0),
        }),
        _ => None,
    };
    let rope_dim = field_u32(&v, &["qk_rope_head_dim"])?.unwrap_or(64);
    let mla = field_u32(&v, &["kv_lora_rank"])?.map(|r| Mla { kv_lora_rank: r, rope_dim });
    let arch = Arch {
        name: name.to_string(),
        kind: if encoder { ModelKind::Encoder } else { ModelKind::Decoder },
        layers,
        hidden,
        heads,
        kv_heads,
        head_dim: match field_u32(&v, &["head_dim"])? {
            Some(d) => Some(d),
            None => field_u32(&v, &["v_head_dim"])?,
        },
        intermediate,
        vocab,
        tied_embeddings: v
            .get("tie_word_embeddings")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(encoder || matches!(model_type, "gemma" | "gemma2" | "falcon" | "gpt_bigcode")),
        gated_mlp: gated,
        qkv_bias: v.get("attention_bias").and_then(serde_json::Value::as_bool).unwrap_or(model_type == "qwen2"),
        moe,
        mla,
        sliding_window: field_u32(&v, &["sliding_window"])?,
        context: field_u32(&v, &["max_position_embeddings", "n_positions", "seq_length"])?,
        params_b: None,
        note: format!("imported from config.json (model_type {model_type})"),
        model_type: (!model_type.is_empty()).then(|| model_type.to_string()),
        // `quantization_config` sits at the top level (beside `text_config` for multimodal models).
        quantization: quantization_of(top.get("quantization_config")),
    };
    arch.validate()?;
    Ok(arch)
}

/// The stored format a `quantization_config` describes: bitsandbytes 4-bit (NF4, with double
/// quantisation when `bnb_4bit_use_double_quant`) or 8-bit, GPTQ/AWQ (4-bit; other widths are
/// taken as 4-bit's neighbour, int8), FP8. `None` for no config or a method the calculator does
/// not model.
fn quantization_of(q: Option<&serde_json::Value>) -> Option<super::Quant> {
    use super::Quant;
    let q = q?;
    let flag = |k: &str| q.get(k).and_then(serde_json::Value::as_bool).unwrap_or(false);
    let method = q.get("quant_method").and_then(|m| m.as_str()).unwrap_or("").to_ascii_lowercase();
    let bits = q.get("bits").and_then(serde_json::Value::as_u64);
    match method.as_str() {
        "bitsandbytes" | "" if flag("load_in_4bit") => {
            Some(if flag("bnb_4bit_use_double_quant") { Quant::Nf4Dq } else { Quant::Nf4 })
        }
        "bitsandbytes" | "" if flag("load_in_8bit") => Some(Quant::Int8),
        "gptq" | "awq" | "autoround" => Some(if bits.is_some_and(|b| b >= 8) { Quant::Int8 } else { Quant::Gptq4 }),
        "fp8" | "fbgemm_fp8" => Some(Quant::Fp8),
        _ => None,
    }
}

/// Imports a `config.json` from disk.
pub fn from_hf_config_file(path: &Path) -> Result<Arch, InputError> {
    let text = crate::safe_fs::read_text(path, crate::safe_fs::CONFIG_JSON_CAP)
        .map_err(|e| InputError { field: "config.json", problem: crate::msg!("cannot read {error}", error = e) })?;
    let name = path
        .parent()
        .and_then(|p| p.file_name())
        .map_or_else(|| "imported model".to_string(), |n| n.to_string_lossy().into_owned());
    from_hf_config(&text, &name)
}

#[cfg(test)]
mod tests {
    #[test]
    fn quantization_config_says_how_the_checkpoint_is_saved() {
        let cfg = |q: &str| {
            format!(
                r#"{{"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100{q}}}"#
            )
        };
        let of = |q: &str| from_hf_config(&cfg(q), "m").unwrap().quantization;
        use crate::vram::Quant;
        assert_eq!(of(""), None);
        let bnb = r#", "quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": true, "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": true}"#;
        assert_eq!(of(bnb), Some(Quant::Nf4Dq));
        assert_eq!(of(r#", "quantization_config": {"load_in_4bit": true}"#), Some(Quant::Nf4));
        assert_eq!(
            of(r#", "quantization_config": {"quant_method": "bitsandbytes", "load_in_8bit": true}"#),
            Some(Quant::Int8)
        );
        assert_eq!(
            of(r#", "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128}"#),
            Some(Quant::Gptq4)
        );
        assert_eq!(of(r#", "quantization_config": {"quant_method": "awq", "bits": 4}"#), Some(Quant::Gptq4));
        assert_eq!(of(r#", "quantization_config": {"quant_method": "hqq"}"#), None);
        // The built-in pre-quantised presets say so.
        let list = built_in();
        assert_eq!(find(&list, "Llama-3.1-70B-bnb-4bit").unwrap().quantization, Some(Quant::Nf4Dq));
        assert_eq!(find(&list, "Llama-2-70B-GPTQ").unwrap().quantization, Some(Quant::Gptq4));
        assert_eq!(find(&list, "Llama-2-70B").unwrap().quantization, None);
    }

    use super::*;

    #[test]
    fn built_in_presets_parse_and_are_plenty() {
        let list = parse(BUILT_IN).unwrap();
        assert!(list.len() >= 25, "{}", list.len());
        let published = [
            ("Llama-2-7B", 6.738),
            ("Llama-2-13B", 13.016),
            ("Llama-2-70B", 68.98),
            ("Llama-3.1-8B", 8.030),
            ("Llama-3.1-70B", 70.55),
            ("Llama-3.2-3B", 3.213),
            ("Mistral-7B-v0.1", 7.242),
            ("Mixtral-8x7B", 46.70),
            ("Qwen2.5-7B", 7.616),
            ("Qwen2.5-14B", 14.77),
            ("Qwen2.5-32B", 32.76),
            ("Qwen2.5-72B", 72.71),
            ("Qwen3-32B", 32.76),
            ("Gemma-2-9B", 9.242),
            ("Gemma-2-27B", 27.23),
            ("Phi-3-mini-4k", 3.821),
            ("Falcon-7B", 6.92),
        ];
        for (name, b) in published {
            let a = find(&list, name).unwrap();
            let got = a.params().total() / 1e9;
            assert!((got - b).abs() / b < 0.01, "{name}: {got:.3} B vs published {b}");
        }
    }

    #[test]
    fn unknown_preset_suggests_close_names() {
        let list = built_in();
        let e = find(&list, "lama-3.1-8b").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("Closest: Llama-3.1-8B"), "{e}");
        assert!(find(&list, "qwen2.5-7b").is_ok(), "case-insensitive");
    }

    #[test]
    fn near_names_find_the_one_preset_they_can_mean() {
        let list = built_in();
        let name = |q: &str| find(&list, q).map(|a| a.name.clone()).map_err(|e| e.to_string());
        for q in ["llama3 8b", "llama-3.1-8b", "Llama 3.1 8B", "llama_3.1_8b", "LLAMA-3-8B", "llama 8b"] {
            assert_eq!(name(q), Ok("Llama-3.1-8B".to_string()), "{q}");
        }
        assert_eq!(name("qwen 2.5 7b"), Ok("Qwen2.5-7B".to_string()));
        assert_eq!(name("qwen3 32b"), Ok("Qwen3-32B".to_string()));
        assert_eq!(name("mixtral 8x7b"), Ok("Mixtral-8x7B".to_string()));
        assert_eq!(name("code llama 34b"), Ok("CodeLlama-34B".to_string()));
        // Several presets fit: the error names them first.
        let e = name("llama 70b").err().unwrap_or_default();
        assert!(e.starts_with("'llama 70b' could be Llama-2-70B, Llama-3.1-70B"), "{e}");
        // A saved-quantised variant does not make its plain name ambiguous.
        assert_eq!(name("llama 3.1 70b"), Ok("Llama-3.1-70B".to_string()));
        assert_eq!(name("llama-2-70b"), Ok("Llama-2-70B".to_string()));
        let e = name("qwen 32b").err().unwrap_or_default();
        assert!(e.contains("Qwen2.5-32B") && e.contains("Qwen3-32B"), "{e}");
        // A size alone is no family: not guessed.
        assert!(name("8b").is_err() && name("").is_err());
        assert_eq!(tokens("Mistral-7B-v0.1"), ["mistral", "7", "b", "v", "0", "1"]);
    }

    #[test]
    fn hf_configs_import() {
        let llama = r#"{"model_type":"llama","num_hidden_layers":32,"hidden_size":4096,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":128256,"tie_word_embeddings":false,"max_position_embeddings":131072}"#;
        let a = from_hf_config(llama, "x").unwrap();
        assert!((a.params().total() / 1e9 - 8.03).abs() < 0.01);
        let mixtral = r#"{"model_type":"mixtral","num_hidden_layers":32,"hidden_size":4096,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":32000,"num_local_experts":8,"num_experts_per_tok":2}"#;
        let m = from_hf_config(mixtral, "m").unwrap();
        assert!((m.params().total() / 1e9 - 46.70).abs() < 0.1, "{}", m.params().total() / 1e9);
        let partial = r#"{"model_type":"llama","hidden_size":4096}"#;
        let e = from_hf_config(partial, "p").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.starts_with("num_hidden_layers: missing"), "{e}");
        assert!(from_hf_config("{not json", "b").err().is_some_and(|e| e.field == "config.json"));
        let odd = r#"{"num_hidden_layers":32,"hidden_size":4096,"num_attention_heads":30,"num_key_value_heads":8,"vocab_size":1000}"#;
        assert_eq!(from_hf_config(odd, "o").err().map(|e| e.field), Some("kv_heads"));
    }
}
