//! Host metrics: CPU (total, per core, iowait), load, RAM and swap, per-disk and network rates,
//! pressure stall information, and gpu-doctor's own CPU and memory.
//!
//! [`LiveHost`] reads the machine through `sysinfo` (portable parts) and [`super::procfs`]
//! (Linux-only parts). Anything it cannot read becomes `n/a` with the reason.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sysinfo::{
    CpuRefreshKind, MemoryRefreshKind, Networks, Pid, ProcessRefreshKind, ProcessesToUpdate, RefreshKind, System,
};

use super::Reading;
use super::procfs::{self, CpuTimes, DiskCounters};
use super::sample::{DiskSample, HostSample, MemorySample, SelfUsage};

/// Something that produces host samples: the live machine or the demo.
pub trait HostSource: Send {
    /// Takes one sample. `t` is seconds since the sampler started.
    fn sample(&mut self, t: f64) -> HostSample;

    /// CPU seconds so far (own plus collected children's) of every process in the process trees
    /// of `roots`, each once, at time `t`; `None` when per-process CPU cannot be read (not Linux,
    /// or the processes live in another PID namespace). The default reads nothing.
    fn trees_cpu_secs(&mut self, roots: &[u32], t: f64) -> Option<Vec<(u32, f64)>> {
        let _ = (roots, t);
        None
    }

    /// Every process's name and CPU seconds so far at time `t` (to name the programs that keep a
    /// busy CPU busy); `None` when per-process CPU cannot be read. The default reads nothing.
    fn all_cpu_secs(&mut self, t: f64) -> Option<Vec<(u32, String, f64)>> {
        let _ = t;
        None
    }
}

/// The real machine.
pub struct LiveHost {
    sys: Result<System, crate::i18n::Message>,
    networks: Option<Networks>,
    root: PathBuf,
    prev_cpu: Option<CpuTimes>,
    prev_disks: Option<(Instant, Vec<DiskCounters>)>,
    prev_net_at: Instant,
    #[cfg(not(target_os = "linux"))]
    disks: Option<sysinfo::Disks>,
    /// The processor times of the last sample (Windows reads CPU usage itself: see `wincpu`).
    #[cfg(windows)]
    prev_win_cpu: Option<Vec<super::wincpu::CoreTimes>>,
}

impl LiveHost {
    /// Opens the live host reading `/proc` and `/sys` under `/`.
    pub fn new() -> Self {
        Self::with_root(PathBuf::from("/"))
    }

    /// Opens the live host reading `/proc` and `/sys` under `root` (tests use fixture trees).
    /// CPU and memory still come from the running kernel through `sysinfo`.
    pub fn with_root(root: PathBuf) -> Self {
        // On Windows sysinfo would read CPU usage through PDH queries; `wincpu` reads it instead.
        let cpu = if cfg!(windows) { CpuRefreshKind::nothing() } else { CpuRefreshKind::nothing().with_usage() };
        let sys = System::new_with_specifics(
            RefreshKind::nothing().with_cpu(cpu).with_memory(MemoryRefreshKind::everything()),
        )
        .map_err(|e| crate::msg!("cannot read CPU and memory counters: {error}", error = e));
        let mut host = LiveHost {
            sys,
            networks: Networks::new_with_refreshed_list().ok(),
            prev_cpu: procfs::read_cpu_times(&root).ok(),
            prev_disks: None,
            prev_net_at: Instant::now(),
            root,
            #[cfg(not(target_os = "linux"))]
            disks: sysinfo::Disks::new_with_refreshed_list().ok(),
            #[cfg(windows)]
            prev_win_cpu: super::wincpu::read(),
        };
        host.prev_disks = procfs::read_diskstats(&host.root).ok().map(|d| (Instant::now(), d));
        host
    }

    fn disks(&mut self) -> Reading<Vec<DiskSample>> {
        #[cfg(target_os = "linux")]
        {
            let now = Instant::now();
            match procfs::read_diskstats(&self.root) {
                Err(e) => Reading::na(e.message()),
                Ok(current) => {
                    let out = match &self.prev_disks {
                        Some((at, prev)) => {
                            let dt = now.duration_since(*at).as_secs_f64().max(1e-3);
                            current
                                .iter()
                                .map(|d| {
                                    let before = prev.iter().find(|p| p.name == d.name);
                                    let rate = |now: u64, before: Option<u64>| {
                                        before.map_or(0.0, |b| now.saturating_sub(b) as f64 / dt)
                                    };
                                    DiskSample {
                                        name: d.name.clone(),
                                        read_bps: rate(d.read_bytes, before.map(|b| b.read_bytes)),
                                        write_bps: rate(d.written_bytes, before.map(|b| b.written_bytes)),
                                    }
                                })
                                .collect()
                        }
                        None => current
                            .iter()
                            .map(|d| DiskSample { name: d.name.clone(), read_bps: 0.0, write_bps: 0.0 })
                            .collect(),
                    };
                    self.prev_disks = Some((now, current));
                    Reading::Value(out)
                }
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let dt = self.prev_net_at.elapsed().as_secs_f64().max(1e-3);
            match self.disks.as_mut() {
                None => Reading::na(crate::msg!("disk counters unavailable")),
                Some(disks) => {
                    disks.refresh(true);
                    Reading::Value(
                        disks
                            .iter()
                            .map(|d| {
                                let u = d.usage();
                                DiskSample {
                                    name: d.name().to_string_lossy().into_owned(),
                                    read_bps: u.read_bytes as f64 / dt,
                                    write_bps: u.written_bytes as f64 / dt,
                                }
                            })
                            .collect(),
                    )
                }
            }
        }
    }

    fn iowait(&mut self) -> Reading<f64> {
        if !cfg!(target_os = "linux") {
            return Reading::na(crate::msg!("iowait is reported by Linux only"));
        }
        match procfs::read_cpu_times(&self.root) {
            Err(e) => Reading::na(e.message()),
            Ok(now) => {
                let value = self.prev_cpu.and_then(|prev| procfs::iowait_pct(prev, now));
                self.prev_cpu = Some(now);
                match value {
                    Some(v) => Reading::Value(v),
                    None => Reading::na(crate::msg!("waiting for a second reading")),
                }
            }
        }
    }
}

impl Default for LiveHost {
    fn default() -> Self {
        Self::new()
    }
}

impl HostSource for LiveHost {
    #[cfg(target_os = "linux")]
    fn trees_cpu_secs(&mut self, roots: &[u32], _t: f64) -> Option<Vec<(u32, f64)>> {
        super::proctree::trees_cpu_secs(&self.root, roots)
    }

    #[cfg(target_os = "linux")]
    fn all_cpu_secs(&mut self, _t: f64) -> Option<Vec<(u32, String, f64)>> {
        super::proctree::all_cpu_secs(&self.root)
    }

    fn sample(&mut self, _t: f64) -> HostSample {
        let (cpu_pct, per_core, memory) = match self.sys.as_mut() {
            Err(e) => (Reading::na(e.clone()), Vec::new(), Reading::na(e.clone())),
            Ok(sys) => {
                #[cfg(windows)]
                let (cpu, per_core) = {
                    let now = super::wincpu::read();
                    let usage = match (&self.prev_win_cpu, &now) {
                        (Some(before), Some(after)) => super::wincpu::usage_between(before, after),
                        _ => None,
                    };
                    self.prev_win_cpu = now;
                    match usage {
                        Some((all, cores)) => (Reading::Value(all), cores),
                        None => (Reading::na(crate::msg!("no CPU counters")), Vec::new()),
                    }
                };
                #[cfg(not(windows))]
                let (cpu, per_core) = {
                    sys.refresh_cpu_usage();
                    let per_core: Vec<f64> = sys.cpus().iter().map(|c| f64::from(c.usage())).collect();
                    let cpu = if per_core.is_empty() {
                        Reading::na(crate::msg!("no CPU counters"))
                    } else {
                        Reading::Value(f64::from(sys.global_cpu_usage()))
                    };
                    (cpu, per_core)
                };
                sys.refresh_memory();
                let memory = Reading::Value(MemorySample {
                    ram_used_bytes: sys.used_memory(),
                    ram_available_bytes: sys.available_memory(),
                    ram_total_bytes: sys.total_memory(),
                    swap_used_bytes: sys.used_swap(),
                    swap_total_bytes: sys.total_swap(),
                });
                (cpu, per_core, memory)
            }
        };
        let load_avg = if cfg!(windows) {
            Reading::na(crate::msg!("Windows has no load average"))
        } else {
            match System::load_average() {
                Ok(la) => Reading::Value([la.one, la.five, la.fifteen]),
                Err(e) => Reading::na(crate::msg!("load average unavailable: {error}", error = e)),
            }
        };
        let iowait_pct = self.iowait();
        let disks = self.disks();
        let pressure = if cfg!(target_os = "linux") {
            match procfs::read_pressure(&self.root) {
                Ok(p) => Reading::Value(p),
                Err(e) => Reading::na(e.message()),
            }
        } else {
            Reading::na(crate::msg!("pressure stall information is a Linux feature"))
        };
        let dt = self.prev_net_at.elapsed().as_secs_f64().max(1e-3);
        self.prev_net_at = Instant::now();
        let (net_rx_bps, net_tx_bps) = match self.networks.as_mut() {
            Some(nets) => {
                nets.refresh(true);
                let (rx, tx) = nets
                    .iter()
                    .filter(|(name, _)| name.as_os_str() != "lo")
                    .fold((0u64, 0u64), |(rx, tx), (_, n)| (rx + n.received(), tx + n.transmitted()));
                (Reading::Value(rx as f64 / dt), Reading::Value(tx as f64 / dt))
            }
            None => (
                Reading::na(crate::msg!("network counters unavailable")),
                Reading::na(crate::msg!("network counters unavailable")),
            ),
        };
        HostSample {
            cpu_pct,
            per_core_pct: per_core,
            iowait_pct,
            load_avg,
            memory,
            disks,
            pressure,
            net_rx_bps,
            net_tx_bps,
        }
    }
}

/// Measures gpu-doctor's own CPU and memory (real even when the data shown is a demo).
pub struct SelfProbe {
    sys: Option<System>,
    pid: Option<Pid>,
    /// Linux: the previous reading of `/proc/self/stat` (when, CPU seconds).
    prev: Option<(Instant, f64)>,
    /// The last CPU figure, given again for a call that comes too soon after the previous one.
    last_pct: f64,
}

/// The shortest span a CPU figure is measured over: `/proc/self/stat` counts in clock ticks
/// (10 ms), so one tick over a few milliseconds would read as several hundred per cent.
const MIN_CPU_SPAN: Duration = Duration::from_millis(500);

impl SelfProbe {
    /// A probe for the current process.
    pub fn new() -> Self {
        SelfProbe { sys: System::new().ok(), pid: sysinfo::get_current_pid().ok(), prev: None, last_pct: 0.0 }
    }

    /// CPU (% of one core, since the previous call) and resident memory of this process. On Linux
    /// two small files of `/proc/self` (sysinfo would also read every thread's files each time).
    pub fn sample(&mut self) -> Option<SelfUsage> {
        let me =
            if cfg!(target_os = "linux") { super::proctree::read(Path::new("/"), std::process::id()) } else { None };
        if let Some(me) = me {
            let now = Instant::now();
            let cpu_pct = match self.prev {
                Some((at, _)) if now.duration_since(at) < MIN_CPU_SPAN => self.last_pct,
                Some((at, secs)) => {
                    self.prev = Some((now, me.cpu_secs));
                    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
                    let pct = 100.0 * (me.cpu_secs - secs).max(0.0) / now.duration_since(at).as_secs_f64();
                    pct.min(100.0 * cores as f64)
                }
                None => {
                    self.prev = Some((now, me.cpu_secs));
                    0.0
                }
            };
            self.last_pct = cpu_pct;
            return Some(SelfUsage { cpu_pct, rss_bytes: me.rss_bytes });
        }
        let pid = self.pid?;
        let sys = self.sys.as_mut()?;
        sys.refresh_processes_specifics(
            ProcessesToUpdate::Some(&[pid]),
            true,
            ProcessRefreshKind::nothing().with_cpu().with_memory(),
        );
        let p = sys.process(pid)?;
        Some(SelfUsage { cpu_pct: f64::from(p.cpu_usage()), rss_bytes: p.memory() })
    }
}

impl Default for SelfProbe {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_self_probe_reads_this_process_cpu_and_memory() {
        let mut p = SelfProbe::new();
        let first = p.sample().expect("a first reading");
        assert!(first.rss_bytes > 1 << 20, "{first:?}");
        // Burn some CPU, then the second reading shows it; a reading taken a few milliseconds
        // after another (one clock tick over no time) never reads as more than the machine has.
        let start = Instant::now();
        let mut x = 0u64;
        let mut soon = Vec::new();
        while start.elapsed() < MIN_CPU_SPAN + Duration::from_millis(100) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            if x.is_multiple_of(4096) && soon.len() < 50 {
                soon.extend(p.sample().map(|s| s.cpu_pct));
            }
        }
        std::hint::black_box(x);
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get) as f64;
        assert!(soon.iter().all(|c| *c <= 100.0 * cores), "{soon:?}");
        let second = p.sample().expect("a second reading");
        assert!(second.cpu_pct > 20.0 && second.cpu_pct <= 100.0 * cores, "{second:?}");
    }

    #[test]
    fn unreadable_proc_files_become_na_with_reason() {
        let root = tempfile::tempdir().map(|d| d.path().to_path_buf()).unwrap_or_default();
        let mut host = LiveHost::with_root(root.join("empty"));
        let s = host.sample(0.0);
        if cfg!(target_os = "linux") {
            assert!(s.iowait_pct.reason().is_some_and(|r| r.en().contains("proc/stat")));
            assert!(s.disks.reason().is_some_and(|r| r.en().contains("diskstats")));
            assert!(s.pressure.reason().is_some());
        }
        assert!(s.memory.value().is_some_and(|m| m.ram_total_bytes > 0), "RAM still comes from the kernel");
    }

    #[test]
    fn fixture_root_gives_iowait_disks_and_pressure() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let w = |rel: &str, text: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap_or(root)).unwrap();
            std::fs::write(p, text).unwrap();
        };
        w("proc/stat", "cpu  100 0 50 800 40 5 5 0 0 0\n");
        w("proc/diskstats", "   8 0 sda 1 0 100 0 1 0 200 0 0 0 0\n");
        std::fs::create_dir_all(root.join("sys/block/sda")).unwrap();
        w("proc/pressure/io", "some avg10=30.00 avg60=0 avg300=0 total=1\nfull avg10=10.00 avg60=0 avg300=0 total=1\n");
        let mut host = LiveHost::with_root(root.to_path_buf());
        w("proc/stat", "cpu  150 0 50 850 140 5 5 0 0 0\n");
        w("proc/diskstats", "   8 0 sda 1 0 100 0 1 0 200 0 0 0 0\n");
        let s = host.sample(1.0);
        if cfg!(target_os = "linux") {
            assert_eq!(s.iowait_pct.get(), Some(50.0));
            assert_eq!(s.disks.value().map(|d| d.len()), Some(1));
            assert_eq!(s.pressure.value().and_then(|p| p.io_some), Some(30.0));
            assert_eq!(s.pressure.value().and_then(|p| p.cpu_some), None);
        }
    }
}
