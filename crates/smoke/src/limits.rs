//! Theoretical limits the smoke test's figures are judged against.

/// Usable bandwidth of one PCIe lane in one direction, GB/s (10^9 bytes), after line coding:
/// Gen1/2 8b/10b, Gen3-5 128b/130b, Gen6 FLIT mode (242 of 256 bytes carry data).
pub fn pcie_lane_gbs(generation: u32) -> Option<f64> {
    Some(match generation {
        1 => 2.5 * 0.8 / 8.0,
        2 => 5.0 * 0.8 / 8.0,
        3 => 8.0 * 128.0 / 130.0 / 8.0,
        4 => 16.0 * 128.0 / 130.0 / 8.0,
        5 => 32.0 * 128.0 / 130.0 / 8.0,
        6 => 64.0 * 242.0 / 256.0 / 8.0,
        _ => return None,
    })
}

/// A PCIe link's bandwidth in one direction, GB/s, e.g. Gen4 x16 = 31.5.
pub fn pcie_gbs(generation: u32, width: u32) -> Option<f64> {
    pcie_lane_gbs(generation).map(|l| l * f64::from(width))
}

/// Peak memory bandwidth from the memory clock CUDA reports (kHz) and the bus width (bits): two
/// transfers per clock, as deviceQuery computes it. H100 SXM: 2 619 MHz x 5 120 bits = 3 352 GB/s.
pub fn memory_gbs(memory_clock_khz: i32, bus_width_bits: i32) -> Option<f64> {
    (memory_clock_khz > 0 && bus_width_bits > 0)
        .then(|| 2.0 * f64::from(memory_clock_khz) * 1e3 * f64::from(bus_width_bits) / 8.0 / 1e9)
}

/// FP32 lanes per SM for a compute capability (CUDA programming guide's arithmetic-throughput
/// table); None for an unknown architecture.
pub fn fp32_lanes_per_sm(major: i32, minor: i32) -> Option<i32> {
    Some(match (major, minor) {
        (3, _) => 192,
        (5, _) => 128,
        (6, 0) => 64,
        (6, _) => 128,
        (7, _) => 64,
        (8, 0) => 64,
        (8, _) => 128,
        (9, 0) => 128,
        (10, _) | (11, _) | (12, _) => 128,
        _ => return None,
    })
}

/// Peak FP32 GFLOP/s (one fused multiply-add = 2 FLOP per lane per clock).
pub fn fp32_peak_gflops(major: i32, minor: i32, sms: i32, clock_khz: i32) -> Option<f64> {
    let lanes = fp32_lanes_per_sm(major, minor)?;
    (sms > 0 && clock_khz > 0).then(|| 2.0 * f64::from(lanes) * f64::from(sms) * f64::from(clock_khz) * 1e3 / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcie_links() {
        let g4 = pcie_gbs(4, 16).unwrap_or_default();
        assert!((g4 - 31.5).abs() < 0.1, "{g4}");
        let g3x8 = pcie_gbs(3, 8).unwrap_or_default();
        assert!((g3x8 - 7.88).abs() < 0.01, "{g3x8}");
        assert!((pcie_gbs(5, 16).unwrap_or_default() - 63.0).abs() < 0.1);
        assert!((pcie_gbs(1, 1).unwrap_or_default() - 0.25).abs() < 1e-9);
        assert_eq!(pcie_gbs(0, 16), None);
    }

    #[test]
    fn memory_bandwidth_matches_published_figures() {
        // H100 SXM5 80 GB: 3.35 TB/s; RTX 4090: 1008 GB/s (CUDA: 10 501 MHz, 384 bits).
        let h100 = memory_gbs(2_619_000, 5120).unwrap_or_default();
        assert!((h100 - 3352.0).abs() < 5.0, "{h100}");
        let rtx4090 = memory_gbs(10_501_000, 384).unwrap_or_default();
        assert!((rtx4090 - 1008.0).abs() < 2.0, "{rtx4090}");
        assert_eq!(memory_gbs(0, 384), None);
    }

    #[test]
    fn fp32_peak() {
        // A100: 108 SMs x 64 lanes x 2 x 1.41 GHz = 19.5 TFLOP/s.
        let a100 = fp32_peak_gflops(8, 0, 108, 1_410_000).unwrap_or_default();
        assert!((a100 - 19_492.0).abs() < 10.0, "{a100}");
        // RTX 4090: 128 SMs x 128 x 2 x 2.52 GHz = 82.6 TFLOP/s.
        let ada = fp32_peak_gflops(8, 9, 128, 2_520_000).unwrap_or_default();
        assert!((ada - 82_575.0).abs() < 10.0, "{ada}");
        assert_eq!(fp32_peak_gflops(99, 0, 10, 1), None);
    }
}
