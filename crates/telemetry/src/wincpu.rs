//! CPU utilization on Windows, per logical core, from the kernel's processor times
//! (`NtQuerySystemInformation(SystemProcessorPerformanceInformation)`, the counters Task Manager
//! reads) rather than the Performance Data Helper (PDH) queries `sysinfo` uses.
//!
//! Why: a PDH query is slow to open and heavy to collect, and when the performance-counter
//! registry is damaged (a known Windows failure, repaired with `lodctr /R`) `sysinfo` asks PDH to
//! reload it through `PdhEnumObjectsW`, which Wine does not implement: the process aborted. The
//! kernel's times need neither. They cover the processor group of the calling thread (up to 64
//! logical processors), which is every processor on all but the largest servers.

/// One logical processor's cumulative times in 100 ns units: idle, and kernel + user (the kernel
/// time includes the idle time, as Windows counts it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CoreTimes {
    /// Time spent idle.
    pub idle: i64,
    /// Kernel plus user time (idle included).
    pub total: i64,
}

/// Busy percentage of each core between two readings, and of all of them together; `None` when
/// the core count changed or no time passed.
pub fn usage_between(before: &[CoreTimes], after: &[CoreTimes]) -> Option<(f64, Vec<f64>)> {
    if before.len() != after.len() || after.is_empty() {
        return None;
    }
    let mut per_core = Vec::with_capacity(after.len());
    let (mut busy_sum, mut total_sum) = (0i64, 0i64);
    for (b, a) in before.iter().zip(after) {
        let total = (a.total - b.total).max(0);
        let busy = (total - (a.idle - b.idle).max(0)).clamp(0, total);
        busy_sum += busy;
        total_sum += total;
        per_core.push(if total > 0 { 100.0 * busy as f64 / total as f64 } else { 0.0 });
    }
    (total_sum > 0).then(|| (100.0 * busy_sum as f64 / total_sum as f64, per_core))
}

/// The current times of each logical processor of this processor group; `None` when the kernel
/// does not answer.
#[cfg(windows)]
pub fn read() -> Option<Vec<CoreTimes>> {
    use windows_sys::Wdk::System::SystemInformation::{
        NtQuerySystemInformation, SystemProcessorPerformanceInformation,
    };
    use windows_sys::Win32::System::WindowsProgramming::SYSTEM_PROCESSOR_PERFORMANCE_INFORMATION;
    let mut buf = vec![SYSTEM_PROCESSOR_PERFORMANCE_INFORMATION::default(); 64];
    let size = std::mem::size_of_val(buf.as_slice()) as u32;
    let mut returned = 0u32;
    // SAFETY: the buffer is `size` bytes of the structure this information class fills; the
    // kernel writes at most that much and says how much it wrote.
    let status = unsafe {
        NtQuerySystemInformation(SystemProcessorPerformanceInformation, buf.as_mut_ptr().cast(), size, &mut returned)
    };
    if status < 0 {
        return None;
    }
    let n = returned as usize / std::mem::size_of::<SYSTEM_PROCESSOR_PERFORMANCE_INFORMATION>();
    Some(
        buf[..n.min(buf.len())]
            .iter()
            .map(|p| CoreTimes { idle: p.IdleTime, total: p.KernelTime + p.UserTime })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_share_per_core_and_overall() {
        let t = |idle, total| CoreTimes { idle, total };
        let before = [t(100, 200), t(1000, 1000)];
        // Core 0: 100 of 100 ticks busy; core 1: 25 of 100 busy.
        let after = [t(100, 300), t(1075, 1100)];
        let (all, cores) = usage_between(&before, &after).unwrap_or_default();
        assert_eq!(cores, vec![100.0, 25.0]);
        assert!((all - 62.5).abs() < 1e-9, "{all}");
        // A core appearing, or no time passing, is no reading.
        assert!(usage_between(&before, &after[..1]).is_none());
        assert!(usage_between(&before, &before).is_none());
        // Counters that went backwards (a wrapped or reset reading) never give a negative share.
        let (_, cores) = usage_between(&after, &[t(0, 400), t(1200, 1200)]).unwrap_or_default();
        assert!(cores.iter().all(|c| (0.0..=100.0).contains(c)), "{cores:?}");
    }
}
