//! The GPUs a user picked (`--gpu 0,2`, as `nvidia-smi -i` picks them): a source that shows only
//! those, so every command and the window that reads a data source reads the same selection.
//! Indices are NVML's (the order `nvidia-smi` lists, by PCI bus), not CUDA's device ordinals.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::remote::info::RemoteInfo;
use super::sample::{GpuFacts, GpuSample, GpuSlowSample, Inventory};
use super::source::{GpuSource, SourceStatus};
use crate::i18n::Message;
use crate::msg;

/// NVML indices of the GPUs to show.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GpuSelection(BTreeSet<u32>);

impl GpuSelection {
    /// `0`, `0,2` or `1-3` (and mixes: `0,2-3`), indices as NVML numbers them.
    pub fn parse(text: &str) -> Result<GpuSelection, Message> {
        let bad = || msg!("'{text}' is not a list of GPU indices like 0 or 0,2 or 1-3", text = text.trim());
        let mut set = BTreeSet::new();
        for part in text.split(',').map(str::trim) {
            let (lo, hi) = match part.split_once('-') {
                Some((a, b)) => (a.trim().parse::<u32>(), b.trim().parse::<u32>()),
                None => (part.parse::<u32>(), part.parse::<u32>()),
            };
            let (Ok(lo), Ok(hi)) = (lo, hi) else { return Err(bad()) };
            if lo > hi || hi >= super::sample::MAX_GPUS as u32 {
                return Err(bad());
            }
            set.extend(lo..=hi);
        }
        Ok(GpuSelection(set))
    }

    /// True when GPU `index` is selected.
    pub fn keeps(&self, index: u32) -> bool {
        self.0.contains(&index)
    }

    /// The selected indices, lowest first.
    pub fn indices(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().copied()
    }
}

/// A GPU source showing only the selected GPUs of another.
pub struct SelectedGpus {
    inner: Arc<dyn GpuSource>,
    keep: GpuSelection,
}

impl SelectedGpus {
    /// `inner`, showing only the GPUs `keep` selects.
    pub fn new(inner: Arc<dyn GpuSource>, keep: GpuSelection) -> SelectedGpus {
        SelectedGpus { inner, keep }
    }
}

impl GpuSource for SelectedGpus {
    /// The inner source's; a simulation counts the GPUs shown, so the status bar agrees with the
    /// cards.
    fn status(&self) -> SourceStatus {
        match self.inner.status() {
            SourceStatus::Demo { scenario, gpus, seed } => {
                let shown = self.keep.indices().filter(|i| *i < gpus).count() as u32;
                SourceStatus::Demo { scenario, gpus: shown, seed }
            }
            other => other,
        }
    }

    fn inventory(&self) -> Arc<Inventory> {
        let all = self.inner.inventory();
        let gpus = all.gpus.iter().filter(|g| self.keep.keeps(g.index)).cloned().collect();
        Arc::new(Inventory { gpus, ..(*all).clone() })
    }

    fn sample(&self, t: f64) -> Vec<GpuSample> {
        self.inner.sample(t).into_iter().filter(|g| self.keep.keeps(g.index)).collect()
    }

    fn sample_slow(&self, t: f64) -> Vec<GpuSlowSample> {
        self.inner.sample_slow(t).into_iter().filter(|g| self.keep.keeps(g.index)).collect()
    }

    fn in_flight(&self, slow: bool) -> Option<Message> {
        self.inner.in_flight(slow)
    }

    fn allow_wake(&self) {
        self.inner.allow_wake();
    }

    fn facts(&self) -> Vec<GpuFacts> {
        self.inner.facts().into_iter().filter(|g| self.keep.keeps(g.index)).collect()
    }

    fn memory_used(&self) -> Vec<(u32, u64)> {
        self.inner.memory_used().into_iter().filter(|(i, _)| self.keep.keeps(*i)).collect()
    }

    fn remote(&self) -> Option<RemoteInfo> {
        self.inner.remote()
    }

    fn prepare(&self) {
        self.inner.prepare();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::demo::{DemoGpus, Scenario};

    #[test]
    fn lists_and_ranges_are_read_and_nonsense_refused() {
        let got = |t: &str| GpuSelection::parse(t).map(|s| s.indices().collect::<Vec<_>>());
        assert_eq!(got("0"), Ok(vec![0]));
        assert_eq!(got(" 0, 2 "), Ok(vec![0, 2]));
        assert_eq!(got("1-3,0"), Ok(vec![0, 1, 2, 3]));
        for bad in ["", "a", "3-1", "-1", "0,,1", "9999"] {
            let e = GpuSelection::parse(bad).err().map(|m| m.en()).unwrap_or_default();
            assert!(e.contains("is not a list of GPU indices"), "{bad}: {e}");
        }
    }

    #[test]
    fn only_the_selected_gpus_are_listed_and_sampled() {
        let demo: Arc<dyn GpuSource> = Arc::new(DemoGpus::new(Scenario::Imbalance, 4, 1));
        let src = SelectedGpus::new(demo, GpuSelection::parse("1,3").unwrap_or_default());
        let listed: Vec<u32> = src.inventory().gpus.iter().map(|g| g.index).collect();
        assert_eq!(listed, [1, 3]);
        let sampled: Vec<u32> = src.sample(1.0).iter().map(|g| g.index).collect();
        assert_eq!(sampled, [1, 3]);
        assert!(src.sample_slow(2.0).iter().all(|g| g.index == 1 || g.index == 3));
        assert!(src.inventory().driver_version.is_some(), "the driver's facts stay");
        assert!(matches!(src.status(), SourceStatus::Demo { gpus: 2, .. }), "{:?}", src.status());
    }
}
