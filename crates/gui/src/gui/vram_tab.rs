//! The VRAM tab: pick a model (preset, imported config.json or custom shapes), set the workload,
//! and see a live stacked-bar breakdown, the fit on each GPU of this machine (total and free now,
//! and who holds the rest), the largest batch and longest context that fit, and what to change
//! to need less, each with its saving.

use crate::i18n::Here as _;
use eframe::egui::{self, Color32, RichText};

use super::palette::{self, Tone};
use crate::telemetry::snapshot::Snapshot;
use crate::units;
use crate::verdict::Verdict;
use crate::vram::{
    self, Arch, Breakdown, Checkpointing, Framework, GIB, HEADROOM, Mode, Optimizer, Precision, Quant, Sharding,
    Target, Trainer, Workload, presets,
};

/// State of the VRAM tab.
pub struct VramState {
    presets: Vec<Arch>,
    /// The model being estimated.
    pub arch: Arch,
    /// The workload.
    pub settings: Workload,
    /// GiB of a hypothetical GPU, used when this machine shows none.
    pub hypothetical_gib: f64,
    /// Why the last import failed.
    pub message: Option<String>,
    /// How byte counts are shown (the app copies the "Byte units" setting here).
    pub units: crate::units::ByteUnits,
    pending_import: Option<super::share::Chooser>,
    /// The tab was shown in this session (its estimate then goes into reports).
    pub visited: bool,
    /// Measured peaks saved for models and settings, and the last run `run` measured (read when
    /// the tab is first shown).
    pub calibration: Option<Calibration>,
}

/// The calibration file's points and the last measured run.
#[derive(Clone, Debug, Default)]
pub struct Calibration {
    /// Saved points.
    pub points: Vec<vram::calibration::Point>,
    /// What `gpu-doctor-cli run -- COMMAND` last measured.
    pub last_run: Option<vram::calibration::LastRun>,
    /// What went wrong reading or saving.
    pub message: Option<String>,
}

impl Calibration {
    /// Reads the user's files.
    pub fn load() -> Calibration {
        let mut c = Calibration::default();
        if let Some(path) = vram::calibration::path() {
            match vram::calibration::load(&path) {
                Ok(p) => c.points = p,
                Err(e) => c.message = Some(e.here()),
            }
        }
        c.last_run = vram::calibration::last_run_path().and_then(|p| vram::calibration::load_last_run(&p));
        c
    }
}

impl Default for VramState {
    fn default() -> Self {
        let (presets, warning) = presets::load_all();
        let arch = presets
            .iter()
            .find(|a| a.name == "Llama-3.1-8B")
            .or(presets.first())
            .cloned()
            .unwrap_or_else(|| Arch::decoder("custom", 32, 4096, 32, 8, 14336, 128_256));
        VramState {
            presets,
            arch,
            settings: Workload::default(),
            hypothetical_gib: 24.0,
            message: warning.as_ref().map(crate::i18n::Here::here),
            pending_import: None,
            visited: false,
            units: crate::units::ByteUnits::default(),
            calibration: None,
        }
    }
}

/// The parts of the breakdown, in English (shown through `crate::i18n::tr`) with their colours.
const SEGMENTS: [(&str, Color32); 8] = [
    (crate::tr_key!("weights"), Color32::from_rgb(66, 165, 245)),
    (crate::tr_key!("KV cache"), Color32::from_rgb(171, 71, 188)),
    (crate::tr_key!("activations"), Color32::from_rgb(255, 167, 38)),
    (crate::tr_key!("gradients"), Color32::from_rgb(239, 83, 80)),
    (crate::tr_key!("optimizer states"), Color32::from_rgb(255, 202, 40)),
    (crate::tr_key!("CUDA context"), Color32::from_rgb(120, 144, 156)),
    (crate::tr_key!("framework buffers"), Color32::from_rgb(141, 110, 99)),
    (crate::tr_key!("allocator slack"), Color32::from_rgb(97, 97, 97)),
];

fn parts(b: &Breakdown) -> [f64; 8] {
    [b.weights, b.kv_cache, b.activations, b.gradients, b.optimizer, b.cuda_context, b.framework, b.allocator_slack]
}

impl VramState {
    /// Makes `a` the model, with the attention implementation transformers picks for it.
    /// A checkpoint saved quantised brings its format, and leaving it brings 16 bits back.
    /// Another kind of model (an LLM, SD 1.5, SDXL, FLUX) starts from its own native settings:
    /// its image size and pipeline defaults, one sequence or image per batch.
    pub fn set_arch(&mut self, a: Arch) {
        self.settings.flash_attention = !a.eager_by_default();
        if vram::Family::of(&a) != vram::Family::of(&self.arch) {
            self.settings.image = vram::ImageSettings::default();
            self.settings.batch = 1;
            if vram::Family::of(&a).is_some() {
                self.settings.mode = Mode::Inference;
            }
        }
        if let Some(q) = a.quantization {
            self.settings.quant = q;
            self.settings.prequantized = true;
        } else if self.settings.prequantized {
            self.settings.quant = crate::vram::Quant::Bf16;
            self.settings.prequantized = false;
        }
        self.arch = a;
    }

    /// Loads an architecture from a config.json (also the path tests use instead of the dialog).
    pub fn import_config(&mut self, path: &std::path::Path) {
        match presets::from_hf_config_file(path) {
            Ok(a) => {
                self.set_arch(a);
                self.message = None;
            }
            Err(e) => {
                self.message =
                    Some(crate::tr!("Could not import {path}: {error}", path = path.display(), error = e.here()))
            }
        }
    }

    fn open_dialog(&mut self) {
        if self.pending_import.is_none() {
            let kind = (crate::tr!("Hugging Face config"), "json");
            self.pending_import = Some(super::share::open_dialog_for(super::share::default_dir(), kind));
        }
    }

    /// The GPUs to judge against: this machine's (from the sampler, with the processes holding
    /// memory on each) or the hypothetical one.
    fn targets(&self, snap: &Snapshot) -> Vec<Target> {
        let mut out = Vec::new();
        for g in &snap.inventory.gpus {
            let demo = if snap.is_demo() && !g.name.contains("DEMO") {
                crate::msg!(" (DEMO)")
            } else {
                crate::i18n::Message::default()
            };
            out.extend(Target::of_gpu(g, snap.gpus.iter().find(|s| s.index == g.index), demo));
        }
        if out.is_empty() {
            out.push(Target {
                name: crate::msg!("hypothetical {gib} GiB GPU", gib = self.hypothetical_gib),
                total: self.hypothetical_gib * GIB,
                card_total: None,
                free: None,
                holders: Vec::new(),
            });
        }
        out
    }

    /// The current answer as report lines, when the tab was used in this session: the same text
    /// as `gpu-doctor-cli vram` prints (the breakdown, the assumptions, the fit on this machine's
    /// GPUs, the advice).
    pub fn report_lines(&self, snap: &Snapshot) -> Option<Vec<String>> {
        if !self.visited {
            return None;
        }
        let targets = self.targets(snap);
        let mut settings = self.settings.clone();
        settings.gpu_total_bytes = targets.first().map(|t| t.total);
        let text = match vram::answer(&self.arch, &settings, &targets) {
            Ok(answer) => crate::present::vram::text(&self.arch, &settings, &answer, None, crate::i18n::current()),
            Err(e) => crate::tr!("Cannot estimate: {error}", error = e.here()),
        };
        Some(text.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect())
    }

    /// Draws the tab.
    pub fn ui(&mut self, ui: &mut egui::Ui, snap: &Snapshot) {
        self.visited = true;
        if let Some(Some(p)) = super::share::poll_dialog(ui.ctx(), &mut self.pending_import) {
            self.import_config(&p);
        }
        ui.columns(2, |cols| {
            // Text wraps before each column's floating scroll bar, never under it (a Chinese line
            // at 1024 pixels wide ran beneath it).
            egui::ScrollArea::vertical().id_salt("vram_inputs").show(&mut cols[0], |ui| {
                super::clear_of_scroll_bar(ui);
                self.inputs(ui, snap)
            });
            egui::ScrollArea::vertical().id_salt("vram_results").show(&mut cols[1], |ui| {
                super::clear_of_scroll_bar(ui);
                self.results(ui, snap)
            });
        });
    }

    fn inputs(&mut self, ui: &mut egui::Ui, snap: &Snapshot) {
        ui.heading(crate::tr!("Model"));
        let mut chosen = None;
        ui.horizontal(|ui| {
            let l = ui.label(crate::tr!("Preset"));
            egui::ComboBox::from_id_salt("preset")
                .selected_text(&self.arch.name)
                .width(220.0)
                .show_ui(ui, |ui| {
                    for p in &self.presets {
                        if ui.selectable_label(p.name == self.arch.name, &p.name).clicked() {
                            chosen = Some(p.clone());
                        }
                    }
                })
                .response
                .labelled_by(l.id);
            if ui
                .button(crate::tr!("Import config.json…"))
                .on_hover_text(crate::tr!("Read the architecture from a Hugging Face config.json"))
                .clicked()
            {
                self.open_dialog();
            }
        });
        if let Some(a) = chosen {
            self.set_arch(a);
        }
        if let Some(m) = &self.message {
            ui.colored_label(palette::tone(ui, Tone::Fail), m);
        }
        let p = self.arch.params().total() / 1e9;
        ui.label(crate::tr!(
            "{params} B parameters{note}",
            params = format!("{p:.2}"),
            note = if self.arch.note.is_empty() {
                String::new()
            } else {
                format!(" · {}", crate::i18n::tr_dyn(&self.arch.note))
            }
        ));
        egui::CollapsingHeader::new(crate::tr!("Architecture")).id_salt("arch").show(ui, |ui| {
            egui::Grid::new("arch_grid").num_columns(2).show(ui, |ui| {
                let num = |ui: &mut egui::Ui, label: &str, v: &mut u32, max: u32| {
                    let l = ui.label(label);
                    ui.add(egui::DragValue::new(v).range(1..=max)).labelled_by(l.id);
                    ui.end_row();
                };
                num(ui, crate::tr!("Layers"), &mut self.arch.layers, 1000);
                num(ui, crate::tr!("Hidden size"), &mut self.arch.hidden, 65_536);
                num(ui, crate::tr!("Attention heads"), &mut self.arch.heads, 1024);
                num(ui, crate::tr!("KV heads"), &mut self.arch.kv_heads, 1024);
                num(ui, crate::tr!("Intermediate size"), &mut self.arch.intermediate, 1 << 20);
                num(ui, crate::tr!("Vocabulary"), &mut self.arch.vocab, 1 << 22);
                ui.label(crate::tr!("Tied embeddings"));
                ui.checkbox(&mut self.arch.tied_embeddings, "");
                ui.end_row();
            });
        });
        ui.add_space(6.0);
        ui.heading(crate::tr!("Workload"));
        if let Some(family) = vram::Family::of(&self.arch) {
            let hypothetical = snap.inventory.gpus.is_empty().then_some(&mut self.hypothetical_gib);
            super::vram_image::inputs(ui, family, &mut self.settings, hypothetical);
            return;
        }
        let s = &mut self.settings;
        let before = (s.mode, s.trainer);
        ui.horizontal(|ui| {
            ui.selectable_value(&mut s.mode, Mode::Inference, crate::tr!("Inference"));
            ui.selectable_value(&mut s.mode, Mode::Full, crate::tr!("Full fine-tune"));
            ui.selectable_value(&mut s.mode, Mode::Lora, "LoRA");
            ui.selectable_value(&mut s.mode, Mode::Qlora, "QLoRA");
        });
        if s.mode != Mode::Inference {
            ui.horizontal_wrapped(|ui| {
                ui.label(crate::tr!("Trainer")).on_hover_text(crate::tr!(
                    "Its defaults (checkpointing, precision, loss, LoRA) apply; change them below"
                ));
                for t in Trainer::ALL {
                    ui.selectable_value(&mut s.trainer, t, t.name());
                }
            });
        }
        // A new method or trainer starts from that trainer's defaults.
        if s.mode != Mode::Inference && (s.mode, s.trainer) != before {
            *s = s.trainer.apply(s);
        }
        egui::Grid::new("workload").num_columns(2).show(ui, |ui| {
            if s.mode == Mode::Inference {
                ui.label(crate::tr!("Engine"));
                ui.horizontal(|ui| {
                    ui.selectable_value(&mut s.framework, Framework::Hf, "Transformers");
                    ui.selectable_value(&mut s.framework, Framework::Vllm, "vLLM");
                    ui.selectable_value(&mut s.framework, Framework::LlamaCpp, "llama.cpp");
                    ui.selectable_value(&mut s.framework, Framework::LitGpt, "litgpt");
                });
                ui.end_row();
                let l = ui.label(crate::tr!("Weights"));
                egui::ComboBox::from_id_salt("quant")
                    .selected_text(s.quant.name())
                    .show_ui(ui, |ui| {
                        for q in Quant::ALL {
                            ui.selectable_value(&mut s.quant, q, q.name());
                        }
                    })
                    .response
                    .labelled_by(l.id);
                ui.end_row();
            }
            let l = ui.label(crate::tr!("Batch"));
            ui.add(egui::DragValue::new(&mut s.batch).range(1..=crate::vram::MAX_BATCH)).labelled_by(l.id);
            ui.end_row();
            let l = ui.label(if s.mode == Mode::Inference {
                crate::tr!("Context (tokens)")
            } else {
                crate::tr!("Sequence (tokens)")
            });
            ui.add(egui::DragValue::new(&mut s.seq).range(1..=1 << 22).speed(64.0)).labelled_by(l.id);
            ui.end_row();
            let l = ui.label(crate::tr!("GPUs"));
            ui.horizontal(|ui| {
                ui.add(egui::DragValue::new(&mut s.gpus).range(1..=64)).labelled_by(l.id);
                if s.gpus > 1 {
                    ui.selectable_value(&mut s.sharding, Sharding::Replicated, crate::tr!("data parallel"));
                    ui.selectable_value(&mut s.sharding, Sharding::Tensor, crate::tr!("tensor parallel"));
                    ui.selectable_value(&mut s.sharding, Sharding::Fsdp, "FSDP");
                }
            });
            ui.end_row();
            if snap.inventory.gpus.is_empty() {
                let l = ui.label(crate::tr!("GPU memory (GiB)"));
                ui.add(egui::DragValue::new(&mut self.hypothetical_gib).range(1.0..=1024.0)).labelled_by(l.id);
                ui.end_row();
            }
        });
        egui::CollapsingHeader::new(crate::tr!("Advanced")).id_salt("advanced").show(ui, |ui| {
            let s = &mut self.settings;
            ui.checkbox(&mut s.flash_attention, crate::tr!("Fused (flash / SDPA) attention"));
            ui.horizontal(|ui| {
                let l = ui.label(crate::tr!("KV cache bytes per element"));
                ui.add(egui::DragValue::new(&mut s.kv_bytes).range(0.5..=4.0).speed(0.5)).labelled_by(l.id);
            });
            if s.mode == Mode::Inference && s.framework == Framework::Hf {
                ui.horizontal(|ui| {
                    ui.label(crate::tr!("transformers version"));
                    ui.selectable_value(&mut s.hf_generate, vram::HfGenerate::Current, "4.45+");
                    ui.selectable_value(&mut s.hf_generate, vram::HfGenerate::FullLogits, "4.42–4.44");
                    ui.selectable_value(&mut s.hf_generate, vram::HfGenerate::CopiedCache, crate::tr!("before 4.42"));
                });
                ui.horizontal(|ui| {
                    let l = ui.label(crate::tr!("Of the context, tokens generated (0: not known)"));
                    let most = s.seq.saturating_sub(1);
                    s.new_tokens = s.new_tokens.min(most);
                    ui.add(egui::DragValue::new(&mut s.new_tokens).range(0..=most).speed(16.0)).labelled_by(l.id);
                });
            }
            if matches!(s.weight_quant(), Quant::Nf4 | Quant::Nf4Dq | Quant::Int8 | Quant::Gptq4) {
                ui.checkbox(
                    &mut s.prequantized,
                    crate::tr!("Checkpoint saved quantised (bnb-4bit, GPTQ, AWQ): nothing quantised at load"),
                );
            }
            if s.bnb_4bit() {
                ui.checkbox(&mut s.bnb_before_0_43, crate::tr!("bitsandbytes before 0.43 (dequantised through fp16)"));
            }
            if s.mode != Mode::Inference && self.arch.kind == vram::ModelKind::Encoder {
                ui.horizontal(|ui| {
                    ui.label(crate::tr!("Head"));
                    ui.selectable_value(
                        &mut s.encoder_head,
                        vram::EncoderHead::Classification,
                        crate::tr!("classification"),
                    );
                    ui.selectable_value(&mut s.encoder_head, vram::EncoderHead::MaskedLm, crate::tr!("masked LM"));
                });
            }
            if s.framework == Framework::Vllm {
                ui.horizontal(|ui| {
                    let l = ui.label("gpu_memory_utilization");
                    ui.add(egui::DragValue::new(&mut s.vllm_utilization).range(0.1..=1.0).speed(0.01))
                        .labelled_by(l.id);
                });
            }
            if s.mode != Mode::Inference {
                ui.horizontal(|ui| {
                    ui.label(crate::tr!("Optimizer"));
                    ui.selectable_value(&mut s.optimizer, Optimizer::AdamW, "AdamW");
                    ui.selectable_value(&mut s.optimizer, Optimizer::AdamW8bit, crate::tr!("8-bit AdamW"));
                    ui.selectable_value(&mut s.optimizer, Optimizer::Sgd, "SGD");
                    ui.selectable_value(&mut s.optimizer, Optimizer::Adafactor, "Adafactor");
                });
                ui.horizontal(|ui| {
                    ui.label(crate::tr!("Precision"));
                    ui.selectable_value(&mut s.precision, Precision::Bf16True, "bf16");
                    ui.selectable_value(&mut s.precision, Precision::Mixed, crate::tr!("mixed (fp32 master)"));
                    ui.selectable_value(&mut s.precision, Precision::Fp32, "fp32");
                });
                ui.horizontal(|ui| {
                    ui.label(crate::tr!("Activation checkpointing"));
                    ui.selectable_value(&mut s.checkpointing, Checkpointing::None, crate::tr!("none"));
                    ui.selectable_value(&mut s.checkpointing, Checkpointing::Selective, crate::tr!("selective"));
                    ui.selectable_value(&mut s.checkpointing, Checkpointing::Full, crate::tr!("full"));
                });
                ui.checkbox(&mut s.chunked_loss, crate::tr!("Chunked loss (torchtune, Unsloth, Liger)"));
                if !s.chunked_loss {
                    ui.checkbox(&mut s.held_logits, crate::tr!("The loop keeps the logits through backward"))
                        .on_hover_text(crate::tr!(
                            "No del logits before loss.backward(): torchtune before 0.3 and many hand-written loops hold the fp32 logits until backward ends"
                        ));
                }
                if matches!(s.mode, Mode::Lora | Mode::Qlora) {
                    ui.horizontal(|ui| {
                        let l = ui.label(crate::tr!("LoRA rank"));
                        ui.add(egui::DragValue::new(&mut s.lora_rank).range(1..=1024)).labelled_by(l.id);
                        ui.checkbox(&mut s.lora_all_linear, crate::tr!("all linear layers"));
                    });
                }
            }
        });
    }

    /// The settings that move the figure by more than 5 %, each as a toggle to the other choice
    /// showing the figure it gives.
    /// The measured peak saved for these settings, or the offer to save the last measured run.
    fn calibration_row(&mut self, ui: &mut egui::Ui, settings: &vram::Workload, total: f64) {
        let c = self.calibration.get_or_insert_with(Calibration::load);
        if let Some(p) = vram::calibration::find(&c.points, &self.arch, settings) {
            ui.label(RichText::new(crate::tr!("Measured: {line}", line = p.line(total).here())).strong());
        } else if let Some(last) = &c.last_run {
            let label = crate::tr!(
                "Save the last measured run ({gib} GiB, {command}, {when}) as a calibration point for these settings",
                gib = format!("{:.2}", last.peak_bytes / GIB),
                command = last.command,
                when = last.when
            );
            if ui.button(label).clicked() {
                let point = vram::calibration::point_from(last, &self.arch, settings);
                match vram::calibration::path().map(|path| vram::calibration::save(&path, point.clone())) {
                    Some(Ok(_)) => {
                        c.points.push(point);
                        c.message = None;
                    }
                    Some(Err(e)) => c.message = Some(e.here()),
                    None => c.message = Some(crate::tr!("no config directory (set GPU_DOCTOR_CONFIG_DIR)").into()),
                }
            }
        }
        if let Some(m) = &c.message {
            ui.colored_label(palette::tone(ui, Tone::Warn), m);
        }
    }

    fn assumption_toggles(&mut self, ui: &mut egui::Ui, settings: &vram::Workload) {
        let mut assumed = vram::assumptions(&self.arch, settings);
        if assumed.is_empty() {
            return;
        }
        // In a fixed order (by the setting's name), not by how much each moves the figure: a row
        // clicked changes the figures, and the rows must not change places under the pointer.
        assumed.sort_by_key(|a| a.id);
        ui.add_space(4.0);
        ui.label(RichText::new(crate::tr!("Assumed (each changes the figure by more than 5 %):")).strong());
        let mut chosen = None;
        egui::Grid::new("vram_assumptions").num_columns(2).spacing([12.0, 4.0]).show(ui, |ui| {
            for a in &assumed {
                ui.label(a.assumed.here());
                // Wrapped, so a long alternative stays inside the window.
                let button = egui::Button::new(a.line().here()).wrap();
                if ui.add(button).on_hover_text(crate::tr!("Use this setting instead")).clicked() {
                    chosen = Some(a.workload.clone());
                }
                ui.end_row();
            }
        });
        if let Some(mut w) = chosen {
            w.gpu_total_bytes = self.settings.gpu_total_bytes;
            self.settings = w;
        }
    }

    fn results(&mut self, ui: &mut egui::Ui, snap: &Snapshot) {
        let targets = self.targets(snap);
        let mut settings = self.settings.clone();
        settings.gpu_total_bytes = targets.first().map(|t| t.total);
        let answer = match vram::answer(&self.arch, &settings, &targets) {
            Ok(a) => a,
            Err(e) => {
                ui.colored_label(
                    palette::tone(ui, Tone::Fail),
                    crate::tr!("Cannot estimate: {error}", error = e.here()),
                );
                return;
            }
        };
        let (b, need) = (&answer.breakdown, answer.need());
        if b.high > b.low && need >= b.high {
            ui.heading(crate::tr!(
                "{low}–{high} GiB per GPU",
                low = format!("{:.1}", b.low / GIB),
                high = format!("{:.1}", b.high / GIB)
            ));
            ui.label(crate::tr!(
                "Most likely {total} GiB (the bar); the fit is judged on the high end, {high} GiB.",
                total = format!("{:.1}", b.total / GIB),
                high = format!("{:.1}", b.high / GIB)
            ))
            .on_hover_text(format!(
                "{}\n{}",
                crate::tr!("What would narrow the range:"),
                b.narrow_by.iter().map(|n| format!("• {}", n.here())).collect::<Vec<_>>().join("\n")
            ));
        } else {
            ui.heading(crate::tr!("{gib} GiB per GPU", gib = format!("{:.1}", need / GIB)));
        }
        stacked_bar(ui, b);
        for n in &b.notes {
            ui.weak(n.here());
        }
        self.calibration_row(ui, &settings, b.total);
        self.assumption_toggles(ui, &settings);
        ui.add_space(6.0);
        ui.label(
            RichText::new(crate::tr!(
                "Fit (keeping {pct} % headroom for longer inputs and other processes)",
                pct = format!("{:.0}", HEADROOM * 100.0)
            ))
            .strong(),
        );
        for (f, limits) in answer.fits.iter().zip(&answer.limits) {
            let t = &f.target;
            let color = palette::tone(
                ui,
                match f.verdict.verdict() {
                    Verdict::Pass => Tone::Pass,
                    Verdict::Warn => Tone::Warn,
                    _ => Tone::Fail,
                },
            );
            ui.horizontal_wrapped(|ui| {
                ui.label(RichText::new(f.verdict.word().here().to_uppercase()).strong().color(color));
                ui.label(crate::tr!(
                    "{label}: {value}",
                    label = t.name.here(),
                    value = f.detail.render(crate::i18n::current())
                ));
            });
            if !t.holders.is_empty() && t.free.is_some_and(|fr| fr < t.total * 0.95) {
                let mut hs = t.holders.clone();
                hs.sort_by(|a, b| b.bytes.unwrap_or(0.0).total_cmp(&a.bytes.unwrap_or(0.0)));
                let named: Vec<String> = hs
                    .iter()
                    .map(|h| {
                        let held = h
                            .bytes
                            .map_or_else(|| crate::tr!("n/a").to_string(), |b| units::bytes_in(b as u64, self.units));
                        crate::tr!("{name} (pid {pid}, {held})", name = h.name, pid = h.pid, held = held)
                    })
                    .collect();
                let processes = named.join(crate::tr!(", "));
                ui.weak(crate::tr!("Memory in use by: {processes}", processes = processes));
            }
            ui.label(format!("  {}", limits.sentence().here()));
        }
        let advice = &answer.suggestions;
        if !advice.is_empty() {
            ui.add_space(6.0);
            ui.label(RichText::new(vram::advice_heading(advice).here()).strong());
            for a in advice {
                ui.label(format!("• {}", a.line().here()));
            }
        }
    }
}

fn stacked_bar(ui: &mut egui::Ui, b: &Breakdown) {
    let values = parts(b);
    let total: f64 = values.iter().sum();
    let (rect, _) = ui.allocate_exact_size(egui::vec2(ui.available_width(), 22.0), egui::Sense::hover());
    let painter = ui.painter();
    let mut x = rect.left();
    for ((_, color), v) in SEGMENTS.iter().zip(values) {
        if v <= 0.0 || total <= 0.0 {
            continue;
        }
        let w = (v / total) as f32 * rect.width();
        painter.rect_filled(
            egui::Rect::from_min_size(egui::pos2(x, rect.top()), egui::vec2(w, rect.height())),
            0.0,
            *color,
        );
        x += w;
    }
    egui::Grid::new("breakdown_legend").num_columns(2).show(ui, |ui| {
        for ((name, color), v) in SEGMENTS.iter().zip(values) {
            if v <= 0.0 {
                continue;
            }
            ui.horizontal(|ui| {
                let (r, _) = ui.allocate_exact_size(egui::vec2(10.0, 10.0), egui::Sense::hover());
                ui.painter().rect_filled(r, 2.0, *color);
                ui.label(crate::i18n::tr(name));
            });
            ui.label(format!("{:.2} GiB", v / GIB));
            ui.end_row();
        }
    });
}
