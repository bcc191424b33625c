//! Demo data: simulated GPUs and host in named scenarios, deterministic for a given seed.
//!
//! Demo data goes through exactly the same types as real data, so every chart, table and CLI
//! path can be seen and tested on a machine without a GPU. It is always labelled DEMO.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::Reading;
use super::host::HostSource;
use super::sample::{
    DiskSample, GpuHealth, GpuInfo, GpuProcess, GpuSample, GpuSlowSample, HostSample, Inventory, MemorySample,
    Pressure, ProcessKind,
};
use super::source::{GpuSource, SourceStatus};
use super::throttle;

/// A simulated situation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    /// Busy GPUs, no throttling beyond the power cap, host keeping up.
    HealthyTraining,
    /// GPU utilization saw-tooth while the CPU cores saturate (data loader too slow).
    DataStarved,
    /// Disk reads and iowait high, GPU mostly waiting.
    IoBound,
    /// GPU above its slowdown temperature, clocks cut.
    ThermalThrottle,
    /// VRAM nearly full.
    VramFull,
    /// All load on GPU 0 of 4.
    Imbalance,
    /// Nothing running.
    Idle,
}

impl Scenario {
    /// Every scenario, in the order shown to users.
    pub const ALL: [Scenario; 7] = [
        Scenario::HealthyTraining,
        Scenario::DataStarved,
        Scenario::IoBound,
        Scenario::ThermalThrottle,
        Scenario::VramFull,
        Scenario::Imbalance,
        Scenario::Idle,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::HealthyTraining => "healthy-training",
            Scenario::DataStarved => "data-starved",
            Scenario::IoBound => "io-bound",
            Scenario::ThermalThrottle => "thermal-throttle",
            Scenario::VramFull => "vram-full",
            Scenario::Imbalance => "imbalance",
            Scenario::Idle => "idle",
        }
    }

    /// One line saying what the scenario shows.
    pub fn description(self) -> crate::i18n::Message {
        match self {
            Scenario::HealthyTraining => crate::msg!("busy GPUs, host keeping up"),
            Scenario::DataStarved => crate::msg!("GPU utilization saw-tooth while CPU cores saturate"),
            Scenario::IoBound => crate::msg!("high disk reads and iowait, GPU mostly waiting"),
            Scenario::ThermalThrottle => crate::msg!("GPU above its slowdown temperature, clocks cut"),
            Scenario::VramFull => crate::msg!("VRAM nearly full"),
            Scenario::Imbalance => crate::msg!("all load on GPU 0 of 4"),
            Scenario::Idle => crate::msg!("nothing running"),
        }
    }

    /// Number of GPUs simulated when the user does not say.
    pub fn default_gpus(self) -> u32 {
        match self {
            Scenario::Imbalance => 4,
            _ => 1,
        }
    }

    /// Comma-separated list of valid names, for error messages.
    pub fn valid_names() -> String {
        Scenario::ALL.iter().map(|s| s.name()).collect::<Vec<_>>().join(", ")
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Error for an unknown scenario name; lists the valid ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct UnknownScenario {
    given: String,
    valid: String,
}

impl UnknownScenario {
    /// What is wrong, as a message.
    pub fn message(&self) -> crate::i18n::Message {
        crate::msg!("unknown demo scenario '{given}'; valid scenarios: {valid}", given = self.given, valid = self.valid)
    }
}

impl crate::i18n::ToMessage for UnknownScenario {
    fn to_message(&self) -> crate::i18n::Message {
        self.message()
    }
}

/// In English (logs); a front end shows [`crate::i18n::ToMessage::to_message`] in its language.
impl fmt::Display for UnknownScenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message().en())
    }
}

impl FromStr for Scenario {
    type Err = UnknownScenario;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Scenario::ALL
            .iter()
            .copied()
            .find(|x| x.name() == s)
            .ok_or_else(|| UnknownScenario { given: s.to_string(), valid: Scenario::valid_names() })
    }
}

/// Most GPUs a demo simulates.
pub const MAX_DEMO_GPUS: u32 = 8;

const GIB: u64 = 1 << 30;
const VRAM_TOTAL: u64 = 24 * GIB;
const POWER_LIMIT_W: f64 = 450.0;
const MAX_SM_MHZ: u32 = 2790;
const MAX_MEM_MHZ: u32 = 10501;
const SLOWDOWN_C: u32 = 90;
const DEMO_CORES: usize = 16;

/// Deterministic noise in [-1, 1] from a seed and coordinates (splitmix64 finaliser).
fn noise(seed: u64, a: u64, b: u64, c: u64) -> f64 {
    let mut z = seed
        ^ a.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ b.wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
        ^ c.wrapping_mul(0x1656_67B1_9E37_79F9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}

/// Tick index used for noise: quarter seconds, so the same `t` always gives the same value.
fn tick(t: f64) -> u64 {
    (t * 4.0).round() as i64 as u64
}

/// Simulated GPUs.
pub struct DemoGpus {
    scenario: Scenario,
    seed: u64,
    inventory: Arc<Inventory>,
}

/// The demo's driver and NVML versions, labelled.
const DEMO_DRIVER: &str = crate::tr_key!("550.54.15 (DEMO)");
const DEMO_NVML: &str = crate::tr_key!("12.550.54.15 (DEMO)");

impl DemoGpus {
    /// `gpus` is clamped to 1..=[`MAX_DEMO_GPUS`].
    pub fn new(scenario: Scenario, gpus: u32, seed: u64) -> Self {
        let n = gpus.clamp(1, MAX_DEMO_GPUS);
        let gpus = (0..n)
            .map(|i| GpuInfo {
                index: i,
                // (English like every inventory; shown in the reader's language through
                // `present::gpu_name`.)
                name: crate::tr_key!("Simulated GeForce RTX 4090 (DEMO)").to_string(),
                uuid: Reading::Value(format!("GPU-DEMO0000-0000-0000-0000-00000000000{i}")),
                pci_bus_id: Reading::Value(format!("00000000:{:02X}:00.0", 0x17 + i * 0x10)),
                vram_total_bytes: Reading::Value(VRAM_TOTAL),
                power_limit_default_w: Reading::Value(POWER_LIMIT_W),
                max_sm_clock_mhz: Reading::Value(MAX_SM_MHZ),
                max_mem_clock_mhz: Reading::Value(MAX_MEM_MHZ),
                max_pcie_gen: Reading::Value(4),
                max_pcie_width: Reading::Value(16),
                slowdown_temp_c: Reading::Value(SLOWDOWN_C),
                compute_capability: Reading::Value("8.9".to_string()),
                // Made up (demo data), in the form nvidia-smi -q prints an Ada board's VBIOS version.
                vbios_version: Reading::Value("95.02.18.80.5F".to_string()),
            })
            .collect();
        let inventory = Inventory {
            driver_version: Some(Reading::Value(DEMO_DRIVER.to_string())),
            cuda_driver_version: Some(Reading::Value("12.4".to_string())),
            nvml_version: Some(Reading::Value(DEMO_NVML.to_string())),
            gpus,
        };
        DemoGpus { scenario, seed, inventory: Arc::new(inventory) }
    }

    /// The scenario being simulated.
    pub fn scenario(&self) -> Scenario {
        self.scenario
    }

    /// GPU load 0..1 of GPU `i` at time `t`.
    fn load(&self, i: u32, t: f64) -> f64 {
        let n = noise(self.seed, u64::from(i), tick(t), 1);
        match self.scenario {
            Scenario::HealthyTraining => 0.96 + 0.03 * n,
            Scenario::DataStarved => {
                // 8 s cycle: a 2 s burst of compute, then 6 s waiting for the next batch.
                let phase = (t + f64::from(i) * 0.5).rem_euclid(8.0);
                if phase < 2.0 { 0.93 + 0.05 * n } else { 0.06 + 0.05 * n.abs() }
            }
            Scenario::IoBound => 0.18 + 0.08 * n,
            Scenario::ThermalThrottle => 0.98 - 0.02 * n.abs(),
            Scenario::VramFull => 0.72 + 0.1 * n,
            Scenario::Imbalance => {
                if i == 0 {
                    0.97 + 0.02 * n
                } else {
                    0.0
                }
            }
            Scenario::Idle => 0.0,
        }
        .clamp(0.0, 1.0)
    }

    fn busy(&self, i: u32) -> bool {
        match self.scenario {
            Scenario::Idle => false,
            Scenario::Imbalance => i == 0,
            _ => true,
        }
    }

    fn gpu_sample(&self, i: u32, t: f64) -> GpuSample {
        let k = tick(t);
        let nz = |c: u64| noise(self.seed, u64::from(i), k, c);
        let load = self.load(i, t);
        let busy = self.busy(i);
        let vram_used = match self.scenario {
            Scenario::Idle => GIB / 2,
            Scenario::VramFull => VRAM_TOTAL - 380 * (1 << 20) + (nz(2) * 40.0 * f64::from(1 << 20)) as u64,
            _ if !busy => GIB / 2,
            _ => 20 * GIB + (nz(2) * 64.0 * f64::from(1 << 20)) as u64,
        };
        let temp = match self.scenario {
            Scenario::ThermalThrottle => 92.0 + nz(3),
            _ => 35.0 + 38.0 * load + nz(3),
        };
        let power = match self.scenario {
            Scenario::ThermalThrottle => 300.0 + 10.0 * nz(4),
            _ => 22.0 + 400.0 * load + 6.0 * nz(4),
        };
        let mut mask = 0;
        if !busy || load < 0.1 {
            mask |= throttle::GPU_IDLE;
        }
        if power > POWER_LIMIT_W * 0.88 {
            mask |= throttle::SW_POWER_CAP;
        }
        if self.scenario == Scenario::ThermalThrottle {
            mask |= throttle::SW_THERMAL;
            if nz(5) > 0.2 {
                mask |= throttle::HW_THERMAL;
            }
        }
        let sm_clock = if self.scenario == Scenario::ThermalThrottle {
            1150.0 + 80.0 * nz(6)
        } else if busy && load > 0.1 {
            2520.0 + 30.0 * nz(6)
        } else {
            210.0
        };
        let mem_bw = match self.scenario {
            Scenario::HealthyTraining | Scenario::ThermalThrottle => 0.6 * load,
            _ => 0.45 * load,
        };
        GpuSample {
            index: i,
            health: GpuHealth::Ok,
            util_gpu_pct: Reading::Value((100.0 * load).round()),
            util_mem_bw_pct: Reading::Value((100.0 * mem_bw + 2.0 * nz(7).abs()).round().min(100.0)),
            vram_used_bytes: Reading::Value(vram_used),
            vram_free_bytes: Reading::Value(VRAM_TOTAL.saturating_sub(vram_used)),
            vram_total_bytes: Reading::Value(VRAM_TOTAL),
            temp_c: Reading::Value(temp.round() as u32),
            power_w: Reading::Value((power * 10.0).round() / 10.0),
            power_limit_w: Reading::Value(POWER_LIMIT_W),
            sm_clock_mhz: Reading::Value(sm_clock.round() as u32),
            mem_clock_mhz: Reading::Value(if busy { MAX_MEM_MHZ } else { 405 }),
            pcie_gen: Reading::Value(if busy { 4 } else { 1 }),
            pcie_width: Reading::Value(16),
            pcie_rx_bps: Reading::na(crate::i18n::Message::new(crate::telemetry::sample::SAMPLED_SLOWER)),
            pcie_tx_bps: Reading::na(crate::i18n::Message::new(crate::telemetry::sample::SAMPLED_SLOWER)),
            fan_pct: Reading::Value(if self.scenario == Scenario::ThermalThrottle {
                100
            } else {
                (30.0 + 50.0 * load).round() as u32
            }),
            pstate: Reading::Value(if busy { 2 } else { 8 }),
            throttle_mask: Reading::Value(mask),
            encoder_pct: Reading::Value(0),
            decoder_pct: Reading::Value(0),
            ecc_uncorrected_volatile: Reading::na(crate::msg!("not supported on this GPU (GeForce has no ECC)")),
            processes: Reading::Value(Vec::new()),
        }
    }

    fn slow_sample(&self, i: u32, t: f64) -> GpuSlowSample {
        let load = self.load(i, t);
        let n = noise(self.seed, u64::from(i), tick(t), 8);
        let rx = match self.scenario {
            Scenario::Idle => 0.0,
            _ if !self.busy(i) => 0.0,
            _ => (2.0e9 * load + 1.0e8 * n).max(0.0),
        };
        let processes = if self.busy(i) {
            let (pid, name) = match self.scenario {
                Scenario::VramFull => (4242, "python serve.py"),
                _ => (4242 + i, "python train.py"),
            };
            // The job runs every kernel on the GPU; the display server's share rounds to 0.
            let mut job = GpuProcess::new(
                pid,
                name,
                Reading::Value(if self.scenario == Scenario::VramFull { 23 * GIB } else { 19 * GIB + GIB / 2 }),
                ProcessKind::Compute,
            );
            job.sm_pct = Reading::Value((100.0 * load).round() as u32);
            let mut xorg = GpuProcess::new(DEMO_XORG_PID, "Xorg", Reading::Value(180 << 20), ProcessKind::Graphics);
            xorg.sm_pct = Reading::Value(0);
            for p in [&mut job, &mut xorg] {
                p.encoder_pct = Reading::Value(0);
                p.decoder_pct = Reading::Value(0);
            }
            vec![job, xorg]
        } else {
            Vec::new()
        };
        GpuSlowSample {
            index: i,
            pcie_rx_bps: Reading::Value(rx.round()),
            pcie_tx_bps: Reading::Value((rx * 0.05).round()),
            processes: Reading::Value(processes),
        }
    }
}

impl GpuSource for DemoGpus {
    fn status(&self) -> SourceStatus {
        SourceStatus::Demo {
            scenario: self.scenario.name().to_string(),
            gpus: self.inventory.gpus.len() as u32,
            seed: self.seed,
        }
    }
    fn inventory(&self) -> Arc<Inventory> {
        Arc::clone(&self.inventory)
    }
    fn sample(&self, t: f64) -> Vec<GpuSample> {
        (0..self.inventory.gpus.len() as u32).map(|i| self.gpu_sample(i, t)).collect()
    }
    fn sample_slow(&self, t: f64) -> Vec<GpuSlowSample> {
        (0..self.inventory.gpus.len() as u32).map(|i| self.slow_sample(i, t)).collect()
    }
}

/// The demo's display server on every busy GPU.
const DEMO_XORG_PID: u32 = 1870;

/// Simulated host matching a scenario.
pub struct DemoHost {
    scenario: Scenario,
    seed: u64,
}

impl DemoHost {
    /// A simulated 16-core host with 64 GiB of RAM.
    pub fn new(scenario: Scenario, seed: u64) -> Self {
        DemoHost { scenario, seed }
    }
}

impl DemoHost {
    /// Cores the GPU job's process tree keeps busy: the data-starved job's loader saturates
    /// several, a healthy job uses one or two, an I/O-bound one waits.
    fn job_cores(&self, pid: u32) -> f64 {
        if pid == DEMO_XORG_PID {
            return 0.02;
        }
        match self.scenario {
            Scenario::DataStarved => 3.4,
            Scenario::IoBound => 0.3,
            Scenario::VramFull => 0.6,
            Scenario::Idle => 0.0,
            _ => 1.2,
        }
    }
}

impl HostSource for DemoHost {
    fn trees_cpu_secs(&mut self, roots: &[u32], t: f64) -> Option<Vec<(u32, f64)>> {
        // Cumulative CPU seconds since a boot well before the prefilled history (whose times are
        // negative), so the job's CPU reads the same before and after the app started.
        const BOOTED_SECS_AGO: f64 = 1.0e6;
        Some(roots.iter().map(|&p| (p, self.job_cores(p) * (t + BOOTED_SECS_AGO).max(0.0))).collect())
    }

    fn sample(&mut self, t: f64) -> HostSample {
        let k = tick(t);
        let nz = |a: u64, c: u64| noise(self.seed, 100 + a, k, c);
        let per_core: Vec<f64> = (0..DEMO_CORES as u64)
            .map(|c| {
                let base = match self.scenario {
                    Scenario::DataStarved => 96.0,
                    Scenario::IoBound => 12.0,
                    Scenario::Idle => 1.5,
                    _ => 30.0,
                };
                (base + 4.0 * nz(c, 1)).clamp(0.0, 100.0)
            })
            .collect();
        let cpu = per_core.iter().sum::<f64>() / per_core.len() as f64;
        let (read, write, iowait, io_psi) = match self.scenario {
            Scenario::IoBound => (460e6 + 30e6 * nz(0, 2), 2e6, 38.0 + 4.0 * nz(0, 3), 45.0 + 5.0 * nz(0, 4)),
            Scenario::Idle => (0.0, 20e3, 0.0, 0.0),
            Scenario::DataStarved => (40e6 + 5e6 * nz(0, 2), 1e6, 0.8, 1.0),
            _ => (55e6 + 10e6 * nz(0, 2), 3e6, 0.5, 0.5),
        };
        let used = match self.scenario {
            Scenario::Idle => 6 * GIB,
            _ => 38 * GIB + (nz(0, 5) * 200.0 * f64::from(1 << 20)) as u64,
        };
        HostSample {
            cpu_pct: Reading::Value(cpu),
            per_core_pct: per_core,
            iowait_pct: Reading::Value(iowait.max(0.0)),
            load_avg: Reading::Value([cpu / 100.0 * DEMO_CORES as f64; 3]),
            memory: Reading::Value(MemorySample {
                ram_used_bytes: used,
                ram_available_bytes: 64 * GIB - used,
                ram_total_bytes: 64 * GIB,
                swap_used_bytes: 0,
                swap_total_bytes: 8 * GIB,
            }),
            disks: Reading::Value(vec![
                DiskSample { name: "nvme0n1".to_string(), read_bps: read.max(0.0), write_bps: write },
                DiskSample { name: "sda".to_string(), read_bps: 0.0, write_bps: 0.0 },
            ]),
            pressure: Reading::Value(Pressure {
                cpu_some: Some(if self.scenario == Scenario::DataStarved { 35.0 } else { 1.0 }),
                io_some: Some(io_psi.max(0.0)),
                io_full: Some((io_psi * 0.4).max(0.0)),
                memory_some: Some(0.0),
                memory_full: Some(0.0),
            }),
            net_rx_bps: Reading::Value(2e5 + 1e5 * nz(0, 6)),
            net_tx_bps: Reading::Value(5e4),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_data_other_seed_other_data() {
        let a = DemoGpus::new(Scenario::HealthyTraining, 2, 7);
        let b = DemoGpus::new(Scenario::HealthyTraining, 2, 7);
        let c = DemoGpus::new(Scenario::HealthyTraining, 2, 8);
        for t in [0.0, 1.0, 2.5, 100.0] {
            assert_eq!(a.sample(t), b.sample(t));
            assert_eq!(a.sample_slow(t), b.sample_slow(t));
        }
        assert!((0..20).any(|t| a.sample(f64::from(t)) != c.sample(f64::from(t))));
        let mut h1 = DemoHost::new(Scenario::IoBound, 1);
        let mut h2 = DemoHost::new(Scenario::IoBound, 1);
        assert_eq!(h1.sample(3.0), h2.sample(3.0));
    }

    #[test]
    fn scenario_names_round_trip_and_unknown_lists_valid() {
        for s in Scenario::ALL {
            assert_eq!(s.name().parse::<Scenario>(), Ok(s));
        }
        let err = "fast".parse::<Scenario>().err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("'fast'") && err.contains("data-starved") && err.contains("idle"), "{err}");
    }

    fn util(g: &DemoGpus, i: usize, t: f64) -> f64 {
        g.sample(t).get(i).and_then(|s| s.util_gpu_pct.get()).unwrap_or(-1.0)
    }

    #[test]
    fn scenarios_show_their_signature() {
        let starved = DemoGpus::new(Scenario::DataStarved, 1, 1);
        let utils: Vec<f64> = (0..16).map(|t| util(&starved, 0, f64::from(t))).collect();
        assert!(utils.iter().any(|u| *u > 85.0) && utils.iter().filter(|u| **u < 15.0).count() >= 8, "{utils:?}");
        let host = DemoHost::new(Scenario::DataStarved, 1).sample(1.0);
        assert!(host.per_core_pct.iter().all(|c| *c > 85.0));

        let io = DemoHost::new(Scenario::IoBound, 1).sample(1.0);
        assert!(io.iowait_pct.get().is_some_and(|v| v > 25.0));
        assert!(io.disk_read_total().is_some_and(|r| r > 300e6));

        let hot = DemoGpus::new(Scenario::ThermalThrottle, 1, 1).sample(1.0);
        let mask = hot.first().and_then(|s| s.throttle_mask.get()).unwrap_or(0);
        assert!(mask & throttle::SW_THERMAL != 0);

        let full = DemoGpus::new(Scenario::VramFull, 1, 1).sample(1.0);
        let (used, total) = full
            .first()
            .map(|s| (s.vram_used_bytes.get().unwrap_or(0), s.vram_total_bytes.get().unwrap_or(1)))
            .unwrap_or((0, 1));
        assert!(used as f64 / total as f64 > 0.97);

        let imb = DemoGpus::new(Scenario::Imbalance, Scenario::Imbalance.default_gpus(), 1);
        assert_eq!(imb.inventory().gpus.len(), 4);
        assert!(util(&imb, 0, 1.0) > 90.0);
        assert!((1..4).all(|i| util(&imb, i, 1.0) == 0.0));

        let idle = DemoGpus::new(Scenario::Idle, 3, 1);
        assert!((0..3).all(|i| util(&idle, i, 5.0) == 0.0));
        assert_eq!(DemoGpus::new(Scenario::Idle, 99, 1).inventory().gpus.len(), 8);
    }
}
