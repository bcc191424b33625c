//! CUDA's own tables: the driver each CUDA toolkit release needs (CUDA release notes, Table 3,
//! and the minor-version compatibility table), and what the `CUresult` codes of `cuInit` mean
//! (CUDA Driver API, "Error Handling").

/// Minimum Linux and Windows driver for a CUDA toolkit `major.minor` (Table 3 of the CUDA release
/// notes, GA releases). `None` for versions not in the table.
pub fn cuda_min_driver(cuda: &str) -> Option<(&'static str, Option<&'static str>)> {
    const TABLE: &[(&str, &str, Option<&str>)] = &[
        ("13.2", "595.45.04", None),
        ("13.1", "590.44.01", None),
        ("13.0", "580.65.06", None),
        ("12.9", "575.51.03", Some("576.02")),
        ("12.8", "570.26", Some("570.65")),
        ("12.6", "560.28.03", Some("560.76")),
        ("12.5", "555.42.02", Some("555.85")),
        ("12.4", "550.54.14", Some("551.61")),
        ("12.3", "545.23.06", Some("545.84")),
        ("12.2", "535.54.03", Some("536.25")),
        ("12.1", "530.30.02", Some("531.14")),
        ("12.0", "525.60.13", Some("527.41")),
        ("11.8", "520.61.05", Some("520.06")),
        ("11.7", "515.43.04", Some("516.01")),
        ("11.6", "510.39.01", Some("511.23")),
        ("11.5", "495.29.05", Some("496.04")),
        ("11.4", "470.42.01", Some("471.11")),
        ("11.3", "465.19.01", Some("465.89")),
        ("11.2", "460.27.03", Some("460.82")),
        ("11.1", "455.23", Some("456.38")),
        ("11.0", "450.36.06", Some("451.22")),
        ("10.2", "440.33", Some("441.22")),
        ("10.1", "418.39", Some("418.96")),
        ("10.0", "410.48", Some("411.31")),
    ];
    let mm: Vec<&str> = cuda.split('.').take(2).collect();
    let key = format!("{}.{}", mm.first()?, mm.get(1).unwrap_or(&"0"));
    TABLE.iter().find(|(c, _, _)| *c == key).map(|(_, l, w)| (*l, *w))
}

/// The oldest driver that runs every CUDA `major`.x runtime through CUDA minor-version
/// compatibility (Linux, Windows): a program built with CUDA 12.8 runs on a 12.0 driver, with
/// features that need a newer driver (and JIT of newer PTX) unavailable. From the CUDA Toolkit
/// release notes, "CUDA Toolkit and Minimum Required Driver Version for CUDA Minor Version
/// Compatibility" (<https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/>), and NVIDIA's CUDA
/// Compatibility guide (<https://docs.nvidia.com/deploy/cuda-compatibility/>). Windows for 12.x:
/// 527.41 (the guide and the 12.0 GA row; later copies of the table say 528.33); 13.x on Windows is
/// not stated ("N/A"), so none is given.
pub fn cuda_family_min_driver(major: u32) -> Option<(&'static str, Option<&'static str>)> {
    match major {
        11 => Some(("450.80.02", Some("452.39"))),
        12 => Some(("525.60.13", Some("527.41"))),
        13 => Some(("580.65.06", None)),
        _ => None,
    }
}

/// The CUresult names and meanings (catalogue keys) `cuInit` returns in practice (also used by the
/// smoke test).
pub fn cu_result(code: i32) -> (&'static str, &'static str) {
    match code {
        0 => ("CUDA_SUCCESS", ""),
        2 => (
            "CUDA_ERROR_OUT_OF_MEMORY",
            crate::tr_key!("The GPU has no memory left to create the driver's context; close other GPU programs."),
        ),
        3 => ("CUDA_ERROR_NOT_INITIALIZED", crate::tr_key!("The driver did not initialise; see the kernel log.")),
        34 => (
            "CUDA_ERROR_STUB_LIBRARY",
            crate::tr_key!(
                "The CUDA toolkit's stub libcuda was loaded instead of the driver's; remove the stubs directory from LD_LIBRARY_PATH."
            ),
        ),
        46 => (
            "CUDA_ERROR_DEVICE_UNAVAILABLE",
            crate::tr_key!("The GPU is busy or set to an exclusive/prohibited compute mode."),
        ),
        100 => (
            "CUDA_ERROR_NO_DEVICE",
            crate::tr_key!(
                "CUDA sees no GPU: the driver is not running, the device files are missing or not accessible, or CUDA_VISIBLE_DEVICES hides every GPU."
            ),
        ),
        304 => (
            "CUDA_ERROR_OPERATING_SYSTEM",
            crate::tr_key!("The operating system or container runtime blocked the GPU."),
        ),
        35 => (
            "CUDA_ERROR_INSUFFICIENT_DRIVER",
            crate::tr_key!("The driver is older than this CUDA needs; update the driver."),
        ),
        802 => (
            "CUDA_ERROR_SYSTEM_NOT_READY",
            crate::tr_key!("The GPUs wait for their NVSwitch fabric: start the fabric manager (HGX and DGX systems)."),
        ),
        803 => (
            "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
            crate::tr_key!(
                "The driver was updated but the old kernel module still runs (or a forward-compatibility libcuda does not match it); reboot."
            ),
        ),
        804 => (
            "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
            crate::tr_key!(
                "A forward-compatibility libcuda is loaded on a GPU that does not support it; remove /usr/local/cuda/compat from the library path."
            ),
        ),
        999 => (
            "CUDA_ERROR_UNKNOWN",
            crate::tr_key!(
                "Often /dev/nvidia-uvm is missing or broken (e.g. after suspend): sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm."
            ),
        ),
        _ => (crate::tr_key!("CUDA error"), crate::tr_key!("See the CUDA driver API error list for this number.")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuda_table() {
        assert_eq!(cuda_min_driver("12.1").map(|t| t.0), Some("530.30.02"));
        assert_eq!(cuda_min_driver("12.4.1").map(|t| t.0), Some("550.54.14"));
        assert_eq!(cuda_min_driver("99.0"), None);
    }
}
