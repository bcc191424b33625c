//! Windows-only checks (WIN-*): the driver model (WDDM / TCC / MCDM), the GPU watchdog (TDR)
//! registry values, nvml.dll and the driver version. They run on every platform, decide by the
//! view's platform (so a Windows capture is judged the same anywhere) and are skipped elsewhere.
//!
//! Sources: Microsoft Learn, "Testing and debugging TDR during driver development" (the
//! `TdrLevel`, `TdrDelay` and `TdrDdiDelay` registry keys); the NVML API reference
//! (<https://docs.nvidia.com/deploy/nvml-api/>) for the driver model and version queries.

use super::{Ctx, MISSING, WIN_01};
use crate::diagnose::parse;
use crate::diagnose::view::Tdr;
use crate::diagnose::{Check, Verdict};
use crate::telemetry::source::SourceStatus;

pub(super) fn win_02(c: Check, cx: &Ctx) -> Check {
    if cx.v.meta().platform != "windows" {
        return c.not_here("Windows", "Windows only");
    }
    let models: Vec<(u32, (String, String))> =
        cx.facts().iter().filter_map(|f| f.driver_model.value().map(|m| (f.index, m.clone()))).collect();
    if models.is_empty() {
        return c.verdict(Verdict::Skipped, "not reported");
    }
    if let Some((i, (cur, pend))) = models.iter().find(|(_, (c, p))| c != p) {
        return c
            .verdict(Verdict::Warn, format!("GPU {i}: {cur} now, {pend} after a reboot"))
            .found("A driver model change waits for a reboot")
            .text("Reboot to apply the pending driver model.");
    }
    let list = models.iter().map(|(i, (cur, _))| format!("GPU {i}: {cur}")).collect::<Vec<_>>().join(", ");
    c.verdict(Verdict::Info, list).found("The driver model is set").explain(
        "WDDM is needed for displays, DirectX and WSL; TCC/MCDM are for compute-only cards (no display, no WSL).",
    )
}

/// The TDR verdict for these registry values (pure, so it is tested on every platform).
pub fn tdr_check(t: &Tdr) -> Check {
    tdr_verdict(WIN_01.blank(), t)
}

/// WIN-01's verdict on `c` for these registry values.
fn tdr_verdict(c: Check, t: &Tdr) -> Check {
    let shown = |v: Option<u32>, default: u32| v.map_or(format!("{default} (default)"), |x| x.to_string());
    let c = c.evidence(format!(
        "HKLM\\System\\CurrentControlSet\\Control\\GraphicsDrivers: TdrLevel {}, TdrDelay {} s, TdrDdiDelay {} s",
        shown(t.level, 3),
        shown(t.delay, 2),
        shown(t.ddi_delay, 5)
    ));
    match t.level {
        Some(0) => c
            .verdict(Verdict::Warn, "the GPU watchdog is off (TdrLevel 0): a hung GPU freezes the desktop instead of being reset")
            .found("The GPU watchdog (TDR) is off")
            .text("Delete the TdrLevel value (or set it to 3) under HKLM\\System\\CurrentControlSet\\Control\\GraphicsDrivers, then reboot."),
        _ if t.delay.is_some_and(|d| d > 2) => c
            .verdict(
                Verdict::Info,
                format!("TdrDelay raised to {} s: long GPU kernels on a display GPU are allowed longer before Windows resets the driver", t.delay.unwrap_or(2)),
            )
            .found("The GPU watchdog allows long kernels"),
        _ => c
            .verdict(Verdict::Info, "defaults: Windows resets the driver when the GPU does not respond for 2 s")
            .found("The GPU watchdog has its default 2 s limit")
            .explain("A compute kernel running longer than that on a GPU that drives a display fails with 'the launch timed out' (CUDA error 702); split long kernels or use a GPU without a monitor."),
    }
}

pub(super) fn win_01(c: Check, cx: &Ctx) -> Check {
    if cx.v.meta().platform != "windows" {
        return c.not_here("Windows", "Windows only");
    }
    match &cx.v.meta().tdr {
        Some(t) => tdr_verdict(c, t),
        None => c.verdict(Verdict::Skipped, MISSING),
    }
}

pub(super) fn win_04(c: Check, cx: &Ctx) -> Check {
    if cx.v.meta().platform != "windows" {
        return c.not_here("Windows", "Windows only");
    }
    match cx.nvml.map(|n| &n.status) {
        Some(SourceStatus::Nvml { library, .. }) => {
            c.verdict(Verdict::Pass, format!("loaded {library}")).found("nvml.dll is installed")
        }
        Some(SourceStatus::Unavailable(no)) if no.attempts.iter().all(|a| a.error.contains("load")) => {
            let mut c = c
                .verdict(Verdict::Fail, "nvml.dll was not found in System32 or NVSMI")
                .found("nvml.dll is missing")
                .text("Reinstall the NVIDIA display driver (nvidia.com/drivers; a clean install).");
            for a in &no.attempts {
                c = c.evidence(format!("{}: {}", a.path, a.error));
            }
            c
        }
        _ => c.verdict(Verdict::Skipped, "the management library check above tells why NVML did not load"),
    }
}

pub(super) fn win_03(c: Check, cx: &Ctx) -> Check {
    if cx.v.meta().platform != "windows" {
        return c.not_here("Windows", "Windows only");
    }
    match cx.nvml.and_then(|n| n.inventory.driver_version.as_ref()).and_then(|r| r.value().cloned()) {
        Some(v) => {
            let shown = parse::windows_driver_version(&v).unwrap_or(v.clone());
            c.verdict(Verdict::Info, format!("NVIDIA driver {shown}"))
                .found(format!("NVIDIA driver {shown} is installed"))
                .evidence(format!("reported: {v}"))
        }
        None => c.verdict(Verdict::Skipped, "not reported"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::view::Tdr;

    #[test]
    fn tdr_verdicts() {
        assert_eq!(tdr_check(&Tdr::default()).verdict, Verdict::Info);
        assert!(tdr_check(&Tdr::default()).evidence[0].contains("TdrLevel 3 (default), TdrDelay 2 (default) s"));
        let off = tdr_check(&Tdr { level: Some(0), ..Tdr::default() });
        assert_eq!(off.verdict, Verdict::Warn);
        assert!(off.fixes[0].as_str().contains("TdrLevel"));
        let long = tdr_check(&Tdr { level: Some(3), delay: Some(60), ddi_delay: None });
        assert!(long.summary.contains("60 s"), "{}", long.summary);
    }
}
