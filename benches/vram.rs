//! VRAM calculator cost: one estimate, and the largest-batch / longest-context solves.
#![allow(missing_docs)]

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use gpu_doctor::vram::{self, GIB, Mode, Workload, presets};

fn bench(c: &mut Criterion) {
    let list = presets::built_in();
    let Ok(arch) = presets::find(&list, "Llama-3.1-70B").cloned() else { return };
    let infer = Workload { seq: 8192, ..Workload::default() };
    let lora = Workload { mode: Mode::Lora, batch: 2, seq: 2048, ..Workload::default() };
    c.bench_function("vram: one estimate (inference)", |b| b.iter(|| vram::estimate(&arch, &infer)));
    c.bench_function("vram: one estimate (LoRA)", |b| b.iter(|| vram::estimate(&arch, &lora)));
    c.bench_function("vram: largest batch that fits 80 GiB", |b| {
        b.iter(|| vram::max_batch(&arch, &infer, 160.0 * GIB))
    });
    c.bench_function("vram: longest context that fits 80 GiB", |b| {
        b.iter(|| vram::max_seq(&arch, &infer, 160.0 * GIB))
    });
    c.bench_function("vram: suggestions", |b| b.iter(|| vram::suggestions(&arch, &lora)));
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(500));
    targets = bench
}
criterion_main!(benches);
