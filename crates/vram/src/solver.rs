//! Solvers over the estimator: the largest batch and the longest sequence that fit a capacity
//! ([`max_batch`], [`max_seq`], binary searches), and the ways to need less memory, each with
//! its saving ([`suggestions`]). [`limits`] solves for one GPU's fit, against the card's total
//! ("with the card free") when other processes' memory is what stands in the way, and
//! [`advice`] is the one list of suggestions the CLI and the app show: stopping those processes
//! first when that is enough, then the ways to need less.

use serde::{Deserialize, Serialize};

use super::arch::Arch;
use super::breakdown::GIB;
use super::estimate::estimate;
use super::fit::{Fit, FitVerdict, Holder, and_list, need};
use super::image_settings::{Family, ImageSettings, Offload, VaeDecode};
use super::quant::Quant;
use super::workload::{Checkpointing, Framework, Mode, Optimizer, Precision, Sharding, Workload};
use crate::i18n::Message;

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

/// The largest batch (up to [`super::workload::MAX_BATCH`]) whose estimate fits in `capacity` bytes per GPU; `None` when
/// not even one sequence fits.
pub fn max_batch(arch: &Arch, s: &Workload, capacity: f64) -> Option<u32> {
    largest(1, super::workload::MAX_BATCH, |batch| {
        estimate(arch, &Workload { batch, ..s.clone() }).is_ok_and(|b| need(&b, s) <= capacity)
    })
}

/// The longest sequence (up to the model's context, or 1 M tokens) that fits in `capacity`.
pub fn max_seq(arch: &Arch, s: &Workload, capacity: f64) -> Option<u32> {
    let hi = arch.context.unwrap_or(1 << 20).max(1);
    largest(1, hi, |seq| estimate(arch, &Workload { seq, ..s.clone() }).is_ok_and(|b| need(&b, s) <= capacity))
}

/// One way to need less memory, with what it saves per GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct Suggestion {
    /// What to change, as a message (JSON: `change`, its English text, and `change_message`).
    pub change: Message,
    /// Bytes saved (or, for stopping other processes, freed) per GPU.
    pub saving: f64,
    /// Stopping other processes: `saving` is memory they free, the estimate is unchanged.
    pub frees_others: bool,
}

impl Serialize for Suggestion {
    /// `change` is the English text (as every text field of `--json`), `change_message` the same
    /// as data (docs/messages.md).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut st = s.serialize_struct("Suggestion", 4)?;
        st.serialize_field("change", &self.change.en())?;
        st.serialize_field("change_message", &self.change)?;
        st.serialize_field("saving", &self.saving)?;
        st.serialize_field("frees_others", &self.frees_others)?;
        st.end()
    }
}

impl<'de> Deserialize<'de> for Suggestion {
    /// Reads `change_message`; output without it (an older gpu-doctor) gives the English `change`
    /// as the message's key, which the catalogue still translates when it is one of its texts.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Suggestion, D::Error> {
        #[derive(Deserialize)]
        struct Wire {
            change: String,
            #[serde(default)]
            change_message: Option<Message>,
            saving: f64,
            #[serde(default)]
            frees_others: bool,
        }
        let w = Wire::deserialize(d)?;
        Ok(Suggestion {
            change: w.change_message.unwrap_or_else(|| Message::new(&w.change)),
            saving: w.saving,
            frees_others: w.frees_others,
        })
    }
}

impl Suggestion {
    /// The line both the CLI and the app show: "halve the batch (8 to 4) — saves 1.2 GiB",
    /// "stop `python serve.py` (pid 4242) to free GPU 0 … — frees 20.0 GiB".
    pub fn line(&self) -> Message {
        let gib = format!("{:.1}", self.saving / GIB);
        if self.frees_others {
            crate::msg!("{change} — frees {gib} GiB", change = self.change.clone(), gib = gib)
        } else {
            crate::msg!("{change} — saves {gib} GiB", change = self.change.clone(), gib = gib)
        }
    }
}

/// Ways to cut memory in the method's order (batch, sequence, precision, checkpointing,
/// quantisation, sharding), each estimated; only those that save something.
pub fn suggestions(arch: &Arch, s: &Workload) -> Vec<Suggestion> {
    suggestions_for(arch, s, None)
}

/// [`suggestions`] for a machine with `machine_gpus` GPUs (`None`: not known, a hypothetical
/// card): sharding over 2 GPUs is offered only where there are two.
fn suggestions_for(arch: &Arch, s: &Workload, machine_gpus: Option<usize>) -> Vec<Suggestion> {
    let Ok(base) = estimate(arch, s) else { return Vec::new() };
    let base_need = need(&base, s);
    let training = s.mode != Mode::Inference;
    let mut tries: Vec<(Message, Workload)> = Vec::new();
    if Family::of(arch).is_some() {
        return keep_savings(arch, base_need, image_tries(s));
    }
    // Free and first: the loss keeps what its backward needs, the loop's copy is dead weight.
    if training && s.held_logits && !s.chunked_loss {
        tries.push((
            crate::msg!("free the logits before backward (del logits once the loss is computed)"),
            Workload { held_logits: false, ..s.clone() },
        ));
    }
    if s.batch > 1 {
        // Training keeps what it learns per step by accumulating two half batches.
        let change = if training {
            crate::msg!(
                "halve the batch ({from} to {to}) and accumulate 2 steps (gradient accumulation), so each update still sees {from}",
                from = s.batch,
                to = s.batch / 2
            )
        } else {
            crate::msg!("halve the batch ({from} to {to})", from = s.batch, to = s.batch / 2)
        };
        tries.push((change, Workload { batch: s.batch / 2, ..s.clone() }));
    }
    // On one card, without changing the model: the loss over chunks of the output instead of
    // the whole fp32 logits, and a QLoRA run's other parameters kept in 16 bits.
    if training && !s.chunked_loss {
        tries.push((
            crate::msg!("a chunked loss (Liger, torchtune, Unsloth: no full fp32 copy of the logits)"),
            Workload { chunked_loss: true, held_logits: false, ..s.clone() },
        ));
    }
    if s.mode == Mode::Qlora && s.kbit_upcast {
        tries.push((
            crate::msg!(
                "keep the parameters that are not 4-bit in 16 bits (no fp32 upcast in prepare_model_for_kbit_training)"
            ),
            Workload { kbit_upcast: false, ..s.clone() },
        ));
    }
    if s.seq > 256 {
        tries.push((
            crate::msg!("halve the sequence length ({from} to {to} tokens)", from = s.seq, to = s.seq / 2),
            Workload { seq: s.seq / 2, ..s.clone() },
        ));
    }
    if training && s.mode == Mode::Full && s.precision != Precision::Bf16True {
        tries.push((
            crate::msg!("train in bf16 (no fp32 master copy)"),
            Workload { precision: Precision::Bf16True, ..s.clone() },
        ));
    }
    if training && s.optimizer == Optimizer::AdamW {
        tries.push((crate::msg!("8-bit AdamW"), Workload { optimizer: Optimizer::AdamW8bit, ..s.clone() }));
    }
    if training && s.checkpointing != Checkpointing::Full {
        tries.push((
            crate::msg!("activation checkpointing on every layer"),
            Workload { checkpointing: Checkpointing::Full, ..s.clone() },
        ));
    }
    if !s.flash_attention {
        tries.push((crate::msg!("fused (flash / SDPA) attention"), Workload { flash_attention: true, ..s.clone() }));
    }
    match s.mode {
        Mode::Full => {
            tries.push((crate::msg!("LoRA instead of a full fine-tune"), Workload { mode: Mode::Lora, ..s.clone() }))
        }
        Mode::Lora => tries.push((crate::msg!("QLoRA (4-bit base)"), Workload { mode: Mode::Qlora, ..s.clone() })),
        Mode::Inference => {
            for q in [Quant::Fp8, Quant::Gptq4, Quant::GgufQ4KM] {
                if q.linear_bits() < s.quant.linear_bits() && (q.is_gguf() == (s.framework == Framework::LlamaCpp)) {
                    tries.push((crate::msg!("{quant} weights", quant = q.name()), Workload { quant: q, ..s.clone() }));
                }
            }
            if s.kv_bytes > 1.0 {
                tries.push((crate::msg!("8-bit KV cache"), Workload { kv_bytes: 1.0, ..s.clone() }));
            }
        }
        Mode::Qlora => {}
    }
    if s.gpus == 1 && machine_gpus.is_none_or(|n| n >= 2) {
        let sharding = if training { Sharding::Fsdp } else { Sharding::Tensor };
        let change = if training {
            crate::msg!("shard over 2 GPUs (FSDP)")
        } else {
            crate::msg!("shard over 2 GPUs (tensor parallel)")
        };
        tries.push((change, Workload { gpus: 2, sharding, ..s.clone() }));
    }
    keep_savings(arch, base_need, tries)
}

/// The changes that save memory, with what each saves.
fn keep_savings(arch: &Arch, base_need: f64, tries: Vec<(Message, Workload)>) -> Vec<Suggestion> {
    tries
        .into_iter()
        .filter_map(|(change, t)| {
            let b = estimate(arch, &t).ok()?;
            let saving = base_need - need(&b, &t);
            // A change that saves less than 0.05 GiB (it would read "saves 0.0 GiB") or 1 % of
            // the figure is not worth making.
            (saving >= (0.05 * GIB).max(0.01 * base_need)).then_some(Suggestion { change, saving, frees_others: false })
        })
        .collect()
}

/// What an image-generation run can change, in diffusers' words.
fn image_tries(s: &Workload) -> Vec<(Message, Workload)> {
    let mut tries: Vec<(Message, Workload)> = Vec::new();
    let with = |f: &dyn Fn(&mut ImageSettings)| {
        let mut w = s.clone();
        f(&mut w.image);
        w
    };
    if s.batch > 1 {
        tries.push((
            crate::msg!("halve the batch ({from} to {to})", from = s.batch, to = s.batch / 2),
            Workload { batch: s.batch / 2, ..s.clone() },
        ));
    }
    if s.image.vae != VaeDecode::Sliced && s.batch > 1 {
        tries.push((
            crate::msg!("decode one image at a time (pipe.enable_vae_slicing())"),
            with(&|i| i.vae = VaeDecode::Sliced),
        ));
    }
    if s.image.vae == VaeDecode::Full {
        tries.push((crate::msg!("tiled VAE decode (pipe.enable_vae_tiling())"), with(&|i| i.vae = VaeDecode::Tiled)));
    }
    if s.image.offload == Offload::None {
        tries.push((
            crate::msg!("model CPU offload (pipe.enable_model_cpu_offload())"),
            with(&|i| i.offload = Offload::Model),
        ));
    }
    for q in [Quant::Fp8, Quant::Nf4] {
        if q.linear_bits() < s.quant.linear_bits() {
            tries.push((crate::msg!("{quant} weights", quant = q.name()), Workload { quant: q, ..s.clone() }));
        }
    }
    if !s.flash_attention {
        tries.push((crate::msg!("fused (flash / SDPA) attention"), Workload { flash_attention: true, ..s.clone() }));
    }
    tries
}

/// The largest batch and the longest context that fit one GPU, and what they were solved against.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Limits {
    /// Solved against the card's total, because other processes hold the memory now.
    pub with_card_free: bool,
    /// The largest batch at the workload's sequence length.
    pub max_batch: Option<u32>,
    /// The longest sequence at the workload's batch.
    pub max_seq: Option<u32>,
    /// The workload's batch (the one `max_seq` is for).
    pub batch: u32,
    /// An image model: only the batch is solved (images per batch).
    pub image: bool,
    /// The workload itself fits, only not within the headroom (the verdict is tight).
    pub tight: bool,
}

impl Limits {
    /// "Within the headroom: largest batch 12 · longest context at batch 1: 65536 tokens", or,
    /// solved against the total, "With the card free, within the headroom: …".
    pub fn sentence(&self) -> Message {
        // A tight fit runs, only without the headroom: "none" alone would read as "does not fit".
        let (no_batch, no_seq) = if self.tight {
            (
                crate::msg!("none (this batch fits only without the headroom)"),
                crate::msg!("none (this context fits only without the headroom)"),
            )
        } else {
            (crate::msg!("none (not even 1)"), crate::msg!("none"))
        };
        let largest = self.max_batch.map_or(no_batch, |b| Message::data(b.to_string()));
        let longest = self.max_seq.map_or(no_seq, |s| crate::msg!("{n} tokens", n = s));
        if self.image {
            return if self.with_card_free {
                crate::msg!(
                    "With the card free, within the headroom: largest batch {largest} images",
                    largest = largest
                )
            } else {
                crate::msg!("Within the headroom: largest batch {largest} images", largest = largest)
            };
        }
        if self.with_card_free {
            crate::msg!(
                "With the card free, within the headroom: largest batch {largest} · longest context at batch {batch}: {longest}",
                largest = largest,
                batch = self.batch,
                longest = longest
            )
        } else {
            crate::msg!(
                "Within the headroom: largest batch {largest} · longest context at batch {batch}: {longest}",
                largest = largest,
                batch = self.batch,
                longest = longest
            )
        }
    }
}

/// The largest batch and longest context for the GPU `f` judged, within the headroom: against
/// what is free now, or the card's total when others' memory is in the way ([`Fit::capacity`]).
pub fn limits(arch: &Arch, s: &Workload, f: &Fit) -> Limits {
    let cap = f.capacity();
    let image = Family::of(arch).is_some();
    Limits {
        with_card_free: f.blocked_by_others(),
        max_batch: max_batch(arch, s, cap),
        max_seq: if image { None } else { max_seq(arch, s, cap) },
        batch: s.batch,
        image,
        tight: f.verdict == FitVerdict::Tight,
    }
}

/// The heading over an [`advice`] list: "What to do (in the order to try it)" when it starts with
/// stopping other processes, else "To need less memory (in the order to try them)".
pub fn advice_heading(advice: &[Suggestion]) -> Message {
    if advice.iter().any(|a| a.frees_others) {
        crate::msg!("What to do (in the order to try it)")
    } else {
        crate::msg!("To need less memory (in the order to try them)")
    }
}

/// What to do, in the order to try it, for the fits of one estimate: stopping the processes
/// that hold the memory first when the card itself is big enough, then the ways to need less
/// ([`suggestions`]). The `vram` command and the app's VRAM tab both show this list.
pub fn advice(arch: &Arch, s: &Workload, fits: &[Fit]) -> Vec<Suggestion> {
    let mut out = Vec::new();
    for f in fits.iter().filter(|f| matches!(f.verdict, FitVerdict::FitsOnceFreed | FitVerdict::DoesNotFitNow)) {
        let t = &f.target;
        let held = (t.total - t.free.unwrap_or(t.total)).max(0.0);
        let known: Option<f64> = f.to_stop.iter().map(|h| h.bytes).sum();
        let change = if f.to_stop.is_empty() {
            crate::msg!("free {gpu}: stop the other processes using it (nvidia-smi lists them)", gpu = &t.name)
        } else {
            crate::msg!(
                "stop {processes} to free {gpu}",
                processes = and_list(&f.to_stop.iter().map(Holder::phrase).collect::<Vec<_>>()),
                gpu = &t.name
            )
        };
        out.push(Suggestion { change, saving: known.unwrap_or(held), frees_others: true });
    }
    // This machine's GPUs (those it reads free memory of); none known for a hypothetical card.
    let here = fits.iter().filter(|f| f.target.free.is_some()).count();
    let mut ways = suggestions_for(arch, s, (here > 0).then_some(here));
    // When it does not fit, the changes that make it fit come first (within the headroom, then
    // at all), each group in the method's order: a plain HF Trainer LoRA that is too big leads
    // with checkpointing, not with a smaller batch that still does not fit.
    let best = fits.iter().map(Fit::capacity).fold(0.0, f64::max);
    if let (true, Ok(b)) = (best > 0.0, estimate(arch, s)) {
        let base = need(&b, s);
        if base > best {
            let rank = |w: &Suggestion| {
                let after = base - w.saving;
                if after <= best {
                    0
                } else if after <= best / (1.0 - super::fit::HEADROOM) {
                    1
                } else {
                    2
                }
            };
            ways.sort_by_key(rank);
        }
    }
    out.extend(ways);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vram::{Target, presets};

    #[test]
    fn advice_crosses_json_as_data_and_older_text_is_read_as_a_key() {
        let s = Suggestion {
            change: crate::msg!("halve the batch ({from} to {to})", from = 8u32, to = 4u32),
            saving: GIB,
            frees_others: false,
        };
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["change"], "halve the batch (8 to 4)");
        let back: Suggestion = serde_json::from_value(json).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.change.render(crate::i18n::Lang::ZhCn), "批次大小减半（8 → 4）");
        let old: Suggestion = serde_json::from_str(r#"{"change": "8-bit KV cache", "saving": 1.0}"#).unwrap();
        assert_eq!(old.change.render(crate::i18n::Lang::ZhCn), "使用 8 比特 KV 缓存");
    }

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
        assert!(sug.iter().any(|x| x.change.en().starts_with("halve the batch")), "{sug:?}");
        // Issue 53, item 25: training halves the batch with gradient accumulation (the same
        // update), and a chunked loss is offered where the logits are a full fp32 copy.
        assert!(sug.iter().any(|x| x.change.en().contains("accumulate 2 steps")), "{sug:?}");
        assert!(sug.iter().any(|x| x.change.en().starts_with("a chunked loss")), "{sug:?}");
        let chunked = Workload { chunked_loss: true, ..full.clone() };
        assert!(suggestions(a, &chunked).iter().all(|x| !x.change.en().starts_with("a chunked loss")));
        assert!(sug.iter().any(|x| x.change.en().contains("bf16")), "{sug:?}");
        assert!(sug.iter().all(|x| x.saving > 0.0));
    }

    /// A loop that keeps its fp32 logits through backward is told to free them (the change that
    /// costs nothing) and the assumption is stated; once freed, neither is offered.
    #[test]
    fn a_loop_holding_its_logits_is_told_to_free_them() {
        let list = presets::built_in();
        let a = presets::find(&list, "Llama-3.1-8B").unwrap();
        let s = Workload { mode: Mode::Lora, batch: 2, seq: 4096, held_logits: true, ..Workload::default() };
        let held = 2.0 * 4096.0 * 128_256.0 * 4.0;
        let sug = suggestions(a, &s);
        let free = sug.iter().find(|x| x.change.en().starts_with("free the logits")).expect("offered");
        assert!(free.saving >= held && free.saving < 1.1 * held, "{} GiB", free.saving / GIB);
        let said = crate::vram::assumptions(a, &s);
        assert!(said.iter().any(|x| x.id == "held_logits" && x.figure_if < need(&estimate(a, &s).unwrap(), &s)));
        let freed = Workload { held_logits: false, ..s };
        assert!(suggestions(a, &freed).iter().all(|x| !x.change.en().starts_with("free the logits")));
        let chunked = Workload { chunked_loss: true, held_logits: true, ..freed };
        assert!(suggestions(a, &chunked).iter().all(|x| !x.change.en().starts_with("free the logits")));
        assert!(crate::vram::assumptions(a, &chunked).iter().all(|x| x.id != "held_logits"));
    }

    /// Issue 38, item 12: a plain HF Trainer LoRA of Llama 3 8B that does not fit a 24 GB card
    /// leads with the change that makes it fit (checkpointing), not a smaller batch that still
    /// does not; a change that saves nothing is not offered; a tight fit's limits say that this
    /// batch runs, only without the headroom.
    #[test]
    fn advice_leads_with_what_makes_it_fit_and_offers_no_empty_savings() {
        let list = presets::built_in();
        let a = presets::find(&list, "Llama-3.1-8B").unwrap();
        let lora = Workload { mode: Mode::Lora, batch: 1, seq: 2048, ..Workload::default() };
        let s = crate::vram::Trainer::HfTrainer.apply(&lora);
        assert_eq!(s.checkpointing, Checkpointing::None);
        let card =
            Target { name: Message::data("24 GB"), total: 24e9, card_total: None, free: None, holders: Vec::new() };
        let base = need(&estimate(a, &s).unwrap(), &s);
        let f = crate::vram::fit(base, &card);
        assert_eq!(f.verdict, FitVerdict::DoesNotFit, "{:.1} GiB", base / GIB);
        let advice = advice(a, &s, std::slice::from_ref(&f));
        let first = advice.first().expect("something to change");
        assert!(
            base - first.saving <= card.total,
            "{} leaves {:.1} GiB",
            first.change.en(),
            (base - first.saving) / GIB
        );
        assert!(first.change.en().contains("checkpointing"), "{advice:?}");
        // LoRA's 8-bit optimizer states save next to nothing: not offered.
        assert!(advice.iter().all(|w| !w.change.en().contains("8-bit AdamW")), "{advice:?}");
        assert!(advice.iter().all(|w| w.saving >= 0.05 * GIB));
        // Tight: "none" says this batch still runs without the headroom.
        let tight =
            Limits { with_card_free: false, max_batch: None, max_seq: None, batch: 4, image: false, tight: true };
        assert!(tight.sentence().en().contains("fits only without the headroom"), "{}", tight.sentence().en());
        let none = Limits { tight: false, ..tight };
        assert!(none.sentence().en().contains("none (not even 1)"));
    }

    /// An 8B model in bf16 (about 16 GiB at 1 × 2048) on a 24 GiB card of which others hold 23 GiB.
    #[test]
    fn on_a_busy_card_the_solver_uses_the_total_and_stopping_the_holder_comes_first() {
        let list = presets::built_in();
        let a = presets::find(&list, "Llama-3.1-8B").unwrap();
        let s = Workload { seq: 2048, ..Workload::default() };
        let card = crate::vram::fit::tests::busy_card();
        let n = need(&estimate(a, &s).unwrap(), &s);
        let f = crate::vram::fit(n, &card);
        assert_eq!(f.verdict, crate::vram::FitVerdict::FitsOnceFreed, "{:?}", f.detail);
        let l = limits(a, &s, &f);
        assert!(l.with_card_free);
        assert!(l.max_batch.is_some_and(|b| b >= 1), "{l:?}");
        assert!(l.max_seq.is_some_and(|t| t >= 2048), "{l:?}");
        assert!(l.sentence().en().starts_with("With the card free"), "{}", l.sentence().en());
        assert_eq!(l.max_batch, max_batch(a, &s, 24.0 * GIB * 0.8));
        let adv = advice(a, &s, std::slice::from_ref(&f));
        assert!(adv[0].change.en().starts_with("stop `python serve.py` (pid 4242)"), "{adv:?}");
        assert_eq!(f.to_stop[0].pid, 4242, "largest first");
        let freed: f64 = f.to_stop.iter().filter_map(|h| h.bytes).sum();
        assert!((adv[0].saving - freed).abs() < 1.0);
        assert!(!adv[0].change.en().contains("weights"));
        assert!(adv[0].line().en().contains(" — frees "), "{}", adv[0].line().en());
        assert_eq!(adv[1..], suggestions_for(a, &s, Some(1))[..]);
        // Issue 53, item 25: this machine has one GPU, so sharding over two is not offered; for
        // a hypothetical card (no machine) it is.
        let shard = |w: &[Suggestion]| w.iter().any(|x| x.change.en().starts_with("shard over 2 GPUs"));
        assert!(!shard(&adv), "{adv:?}");
        assert!(shard(&suggestions(a, &s)));
        // On a free card the advice is the suggestions alone.
        let free = Target { free: Some(24.0 * GIB), holders: Vec::new(), ..card };
        let f = crate::vram::fit(n, &free);
        assert_eq!(advice(a, &s, std::slice::from_ref(&f)), suggestions_for(a, &s, Some(1)));
        assert!(!limits(a, &s, &f).with_card_free);
    }
}
