//! The VRAM tab's inputs for an image model (SD 1.5, SDXL, FLUX.1): weights, images per batch,
//! size, guidance, the VAE decode, offload and the text encoders, in diffusers' terms; for FLUX.1
//! also LoRA and QLoRA training.

use eframe::egui;

use crate::vram::{Family, Offload, Quant, VaeDecode, Workload};

/// The weight formats offered for an image model's denoiser.
const FORMATS: [Quant; 5] = [Quant::Fp32, Quant::Bf16, Quant::Fp8, Quant::Int8, Quant::Nf4];

/// Draws the image-generation inputs into `s`; `hypothetical` is shown when the machine has no GPU.
pub fn inputs(ui: &mut egui::Ui, family: Family, s: &mut Workload, hypothetical: Option<&mut f64>) {
    use crate::vram::{Checkpointing, Mode};
    // FLUX.1 can be trained with LoRA or QLoRA (diffusers' recipe: checkpointing on, 8-bit
    // AdamW, rank 4, prompt embeddings and latents cached); the others generate only.
    let trains = matches!(family, Family::Flux { .. });
    if !trains || s.mode == Mode::Full {
        s.mode = Mode::Inference;
    }
    if trains {
        let before = s.mode;
        ui.horizontal(|ui| {
            ui.selectable_value(&mut s.mode, Mode::Inference, crate::tr!("Generate images"));
            ui.selectable_value(&mut s.mode, Mode::Lora, "LoRA");
            ui.selectable_value(&mut s.mode, Mode::Qlora, "QLoRA");
        });
        if s.mode != before && s.mode != Mode::Inference && before == Mode::Inference {
            s.checkpointing = Checkpointing::Full;
            s.optimizer = crate::vram::Optimizer::AdamW8bit;
            s.lora_rank = 4;
            s.image.text_encoders = false;
        }
    }
    if s.mode != Mode::Inference {
        training_inputs(ui, family, s, hypothetical);
        return;
    }
    egui::Grid::new("image_workload").num_columns(2).show(ui, |ui| {
        let l = ui.label(crate::tr!("Weights"));
        egui::ComboBox::from_id_salt("image_quant")
            .selected_text(s.quant.name())
            .show_ui(ui, |ui| {
                for q in FORMATS {
                    ui.selectable_value(&mut s.quant, q, q.name());
                }
            })
            .response
            .labelled_by(l.id);
        ui.end_row();
        let l = ui.label(crate::tr!("Images per batch"));
        ui.add(egui::DragValue::new(&mut s.batch).range(1..=crate::vram::MAX_BATCH)).labelled_by(l.id);
        ui.end_row();
        let (mut w, mut h) = s.image.size(family);
        let l = ui.label(crate::tr!("Size (pixels)"));
        ui.horizontal(|ui| {
            ui.add(egui::DragValue::new(&mut w).range(64..=16_384).speed(64.0)).labelled_by(l.id);
            ui.label("×");
            ui.add(egui::DragValue::new(&mut h).range(64..=16_384).speed(64.0)).labelled_by(l.id);
        });
        (s.image.width, s.image.height) = (w, h);
        ui.end_row();
        let mut cfg = s.image.cfg.unwrap_or(family.cfg_default());
        ui.label(crate::tr!("Guidance"));
        if ui.checkbox(&mut cfg, crate::tr!("classifier-free guidance (doubles the denoiser's batch)")).changed() {
            s.image.cfg = Some(cfg);
        }
        ui.end_row();
        ui.label(crate::tr!("VAE decode"));
        ui.horizontal(|ui| {
            ui.selectable_value(&mut s.image.vae, VaeDecode::Full, crate::tr!("all at once"));
            ui.selectable_value(&mut s.image.vae, VaeDecode::Sliced, crate::tr!("one image at a time"));
            ui.selectable_value(&mut s.image.vae, VaeDecode::Tiled, crate::tr!("tiled"));
        });
        ui.end_row();
        ui.label(crate::tr!("Offload"));
        ui.horizontal(|ui| {
            ui.selectable_value(&mut s.image.offload, Offload::None, crate::tr!("everything on the GPU"));
            ui.selectable_value(&mut s.image.offload, Offload::Model, crate::tr!("model CPU offload"));
        });
        ui.end_row();
        ui.label(crate::tr!("Text encoders"));
        ui.checkbox(&mut s.image.text_encoders, crate::tr!("on the GPU"));
        ui.end_row();
        if matches!(family, Family::Sd3(_)) {
            ui.label("T5-XXL");
            ui.checkbox(&mut s.image.without_t5, crate::tr!("left out (text_encoder_3=None)"))
                .on_hover_text(crate::tr!("The pipeline feeds zeros in its place: far less memory, slightly weaker on complex prompts (diffusers' Stable Diffusion 3 documentation)"));
            ui.end_row();
        }
        if family == Family::Sd15 {
            ui.label(crate::tr!("Safety checker"));
            ui.checkbox(&mut s.image.safety_checker, crate::tr!("loaded (the pipeline's default)"));
            ui.end_row();
        }
        if let Some(gib) = hypothetical {
            let l = ui.label(crate::tr!("GPU memory (GiB)"));
            ui.add(egui::DragValue::new(gib).range(1.0..=1024.0)).labelled_by(l.id);
            ui.end_row();
        }
    });
    ui.checkbox(&mut s.flash_attention, crate::tr!("Fused (flash / SDPA) attention"));
}

/// The inputs of a LoRA or QLoRA run on an image model: images per batch, size, the adapters'
/// rank, checkpointing and whether the prompts and latents were encoded beforehand.
fn training_inputs(ui: &mut egui::Ui, family: Family, s: &mut Workload, hypothetical: Option<&mut f64>) {
    use crate::vram::{Checkpointing, Optimizer};
    egui::Grid::new("image_training").num_columns(2).show(ui, |ui| {
        let l = ui.label(crate::tr!("Images per batch"));
        ui.add(egui::DragValue::new(&mut s.batch).range(1..=crate::vram::MAX_BATCH)).labelled_by(l.id);
        ui.end_row();
        let (mut w, mut h) = s.image.size(family);
        let l = ui.label(crate::tr!("Size (pixels)"));
        ui.horizontal(|ui| {
            ui.add(egui::DragValue::new(&mut w).range(64..=16_384).speed(64.0)).labelled_by(l.id);
            ui.label("×");
            ui.add(egui::DragValue::new(&mut h).range(64..=16_384).speed(64.0)).labelled_by(l.id);
        });
        (s.image.width, s.image.height) = (w, h);
        ui.end_row();
        let l = ui.label(crate::tr!("LoRA rank"));
        ui.add(egui::DragValue::new(&mut s.lora_rank).range(1..=1024)).labelled_by(l.id);
        ui.end_row();
        ui.label(crate::tr!("Gradient checkpointing"));
        let mut on = s.checkpointing != Checkpointing::None;
        if ui.checkbox(&mut on, crate::tr!("recompute each block in backward")).changed() {
            s.checkpointing = if on { Checkpointing::Full } else { Checkpointing::None };
        }
        ui.end_row();
        ui.label(crate::tr!("Optimizer"));
        ui.horizontal(|ui| {
            ui.selectable_value(&mut s.optimizer, Optimizer::AdamW, "AdamW");
            ui.selectable_value(&mut s.optimizer, Optimizer::AdamW8bit, crate::tr!("8-bit AdamW"));
        });
        ui.end_row();
        ui.label(crate::tr!("Text encoders"));
        let mut cached = !s.image.text_encoders;
        if ui.checkbox(&mut cached, crate::tr!("prompts and latents encoded beforehand (off the GPU)")).changed() {
            s.image.text_encoders = !cached;
        }
        ui.end_row();
        if let Some(gib) = hypothetical {
            let l = ui.label(crate::tr!("GPU memory (GiB)"));
            ui.add(egui::DragValue::new(gib).range(1.0..=1024.0)).labelled_by(l.id);
            ui.end_row();
        }
    });
}
