//! `info`: the inventory and the NVML load attempts, as text or JSON.

use crate::i18n::{Here as _, Shown as _};
use std::fmt::Write as _;
use std::process::ExitCode;

use serde::Serialize;

use super::exit;
use super::{CliError, InfoArgs};
use crate::diagnose::headline::Headline;
use crate::diagnose::input::CheckSource;
use crate::present;
use crate::telemetry::GpuSource as _;
use crate::telemetry::sample::Inventory;
use crate::telemetry::source::{ASLEEP_STATE, SourceStatus};
use crate::tr;
use crate::units;

#[derive(Serialize)]
struct InfoJson<'a> {
    app_version: &'static str,
    demo: bool,
    source: &'a SourceStatus,
    inventory: &'a Inventory,
    /// Without GPU data: the checklist's root cause and first fix (else NVML's explanation).
    #[serde(skip_serializing_if = "Option::is_none")]
    diagnosis: Option<&'a Headline>,
}

/// Renders the inventory as text.
pub fn render_text(status: &SourceStatus, inv: &Inventory, diagnosis: Option<&Headline>) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{}", tr!("gpu-doctor {version}: GPU inventory", version = env!("CARGO_PKG_VERSION")));
    if status.is_demo() {
        let _ = writeln!(o, "{}", tr!("DEMO: simulated data, not this machine."));
    }
    let _ = writeln!(o, "{}", tr!("Source: {source}", source = status.label().here()));
    if !inv.gpus.is_empty() || inv.driver_version.is_some() {
        let _ = writeln!(
            o,
            "{}",
            tr!(
                "Driver {driver} | CUDA (driver supports up to) {cuda} | NVML {nvml}",
                driver = present::version(&inv.driver_version, crate::i18n::current()),
                cuda = present::version(&inv.cuda_driver_version, crate::i18n::current()),
                nvml = present::version(&inv.nvml_version, crate::i18n::current())
            )
        );
    }
    for g in &inv.gpus {
        let _ = writeln!(o, "\nGPU {}  {}", g.index, crate::present::gpu_name(&g.name, crate::i18n::current()));
        // Whole lines are translated, so that each language aligns its own labels.
        let _ = writeln!(o, "{}", tr!("  UUID           {uuid}", uuid = g.uuid.show(|s| s.clone())));
        let _ = writeln!(o, "{}", tr!("  PCI bus id     {bus}", bus = g.pci_bus_id.show(|s| s.clone())));
        let _ = writeln!(o, "{}", tr!("  VRAM           {vram}", vram = g.vram_total_bytes.show(|b| units::bytes(*b))));
        let limit = g.power_limit_default_w.show(|w| tr!("{watts} W (default)", watts = format!("{w:.0}")));
        let _ = writeln!(o, "{}", tr!("  Power limit    {limit}", limit = limit));
        let _ = writeln!(
            o,
            "{}",
            tr!(
                "  Max clocks     SM {sm} | memory {memory}",
                sm = g.max_sm_clock_mhz.show(|m| format!("{m} MHz")),
                memory = g.max_mem_clock_mhz.show(|m| format!("{m} MHz"))
            )
        );
        let link = match (g.max_pcie_gen.get(), g.max_pcie_width.get()) {
            (Some(gen_), Some(w)) => format!("Gen{gen_} x{w}"),
            _ => g.max_pcie_gen.show(|x| format!("Gen{x}")),
        };
        let _ = writeln!(o, "{}", tr!("  Max PCIe link  {link}", link = link));
        let _ = writeln!(o, "{}", tr!("  Slowdown temp  {temp}", temp = g.slowdown_temp_c.show(|t| format!("{t} °C"))));
        let _ = writeln!(o, "{}", tr!("  Compute cap.   {cc}", cc = g.compute_capability.show(|c| c.clone())));
        let _ = writeln!(o, "{}", tr!("  VBIOS          {vbios}", vbios = g.vbios_version.show(|v| v.clone())));
    }
    match status {
        SourceStatus::Nvml { library, attempts } => {
            let _ = writeln!(o, "\n{}", tr!("NVML load attempts:"));
            for a in attempts {
                let _ = writeln!(o, "  {}: {}", a.path, a.error);
            }
            let _ = writeln!(o, "  {library}: {}", tr!("loaded"));
            if inv.gpus.is_empty() {
                let _ = writeln!(o, "\n{}", tr!("NVML loaded but reports no GPUs."));
            }
        }
        SourceStatus::Unavailable(no) => {
            let h = diagnosis.cloned().unwrap_or_else(|| Headline::of_nvml(no));
            let _ = writeln!(
                o,
                "\n{}",
                tr!("No NVIDIA GPU data. {finding}", finding = present::sentence(&h.finding.here()))
            );
            o.push_str(&crate::present::checklist::headline_steps(&h, crate::i18n::current()));
            if h.from_checklist() {
                let _ = writeln!(o, "{}", tr!("(The checklist's root cause; all checks: gpu-doctor-cli check)"));
                // What NVML said, without gpu-doctor's generic next step, and not at all where
                // that is only a guess from a missing library ("no driver seems to be installed"
                // under a container's root cause): the attempts below say it.
                if !no.is_not_found() {
                    let _ = writeln!(
                        o,
                        "\n{}",
                        tr!("What NVML said: {summary}", summary = present::sentence(&no.summary_message().here()))
                    );
                }
            }
            let _ = writeln!(o, "\n{}", tr!("NVML load attempts:"));
            for a in &no.attempts {
                let _ = writeln!(o, "  {}: {}", a.path, a.error);
            }
            let _ = writeln!(
                o,
                "\n{}",
                tr!(
                    "To see what gpu-doctor shows on a working machine: gpu-doctor-cli monitor --demo healthy-training"
                )
            );
        }
        SourceStatus::Asleep { functions } => {
            let _ = writeln!(
                o,
                "\n{}",
                tr!(
                    "The NVIDIA GPU is asleep ({state}): {gpus}.",
                    state = crate::i18n::tr(ASLEEP_STATE),
                    gpus = functions.join(", ")
                )
            );
            let _ = writeln!(
                o,
                "{}",
                tr!(
                    "gpu-doctor leaves it asleep: reading it through NVML would wake it and keep it awake. To read it anyway: --wake-sleeping-gpu"
                )
            );
        }
        SourceStatus::Opening => {
            let _ = writeln!(o, "\n{}", tr!("NVML is still opening."));
        }
        SourceStatus::Demo { .. } | SourceStatus::Replay { .. } => {}
    }
    o
}

/// How long `info` waits for NVML to open before calling the driver hung.
pub const OPEN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Waits, up to [`OPEN_TIMEOUT`], until `sampler`'s NVML is no longer being opened and, when
/// `sampled`, an opened NVML has given its first sample; a driver that never answers is left to
/// the caller to report.
pub fn wait_until_opened(sampler: &crate::telemetry::sampler::Sampler, sampled: bool) {
    use crate::telemetry::source::SourceStatus;
    let deadline = std::time::Instant::now() + OPEN_TIMEOUT;
    while std::time::Instant::now() < deadline {
        let snap = sampler.snapshot();
        let opened = !matches!(snap.source, SourceStatus::Opening);
        let first = !sampled || snap.gpu_t.is_some() || !matches!(snap.source, SourceStatus::Nvml { .. });
        if opened && first {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Runs `info`; returns the exit code.
pub fn run(args: &InfoArgs) -> Result<ExitCode, CliError> {
    let source = args.source.options();
    let gpu: std::sync::Arc<dyn crate::telemetry::GpuSource> = if source.demo.is_some() {
        source.open().0
    } else {
        let live = source.live_gpus();
        if !live.advance_within(OPEN_TIMEOUT) {
            return Err(CliError::new(
                exit::NOT_RESPONDING,
                tr!(
                    "NVML did not finish opening within {secs} s ({call}). The NVIDIA driver may be hung; check the kernel log (sudo dmesg | grep -i -e xid -e nvrm) and consider a reboot.",
                    secs = OPEN_TIMEOUT.as_secs(),
                    call = live.in_flight(false).map_or_else(|| "nvmlInit".to_string(), |c| c.here())
                ),
            ));
        }
        source.selected(live)
    };
    let status = gpu.status();
    let inv = gpu.inventory();
    // Without GPU data the first thing said is the checklist's root cause, as everywhere else.
    let diagnosis = match &status {
        SourceStatus::Unavailable(no) if source.demo.is_none() => {
            let checks = CheckSource::Live(source.clone()).run(None).ok();
            Some(Headline::for_no_gpu(checks.as_ref(), no))
        }
        _ => None,
    };
    if args.json.on() {
        let doc = InfoJson {
            app_version: env!("CARGO_PKG_VERSION"),
            demo: status.is_demo(),
            source: &status,
            inventory: &inv,
            diagnosis: diagnosis.as_ref(),
        };
        super::outln(&super::to_json(&doc)?)?;
    } else {
        super::out(&render_text(&status, &inv, diagnosis.as_ref()))?;
    }
    Ok(ExitCode::from(if matches!(status, SourceStatus::Unavailable(_)) { exit::NO_GPU } else { exit::OK }))
}
