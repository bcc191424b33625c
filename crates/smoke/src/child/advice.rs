//! What to do next when a smoke-test stage fails or warns: the next-step text for each CUDA error
//! code ([`for_cuda_error`]), for a missing or wrong driver library, for no GPU, for wrong results
//! and for figures far below the hardware's limits.

use crate::i18n::Message;
use crate::smoke::Stage;

// The next steps below are marked for the catalogue and shown with crate::i18n::tr(..) where used.

/// The error name when no driver library could be loaded.
pub(super) const NOT_FOUND: &str = "LIBRARY_NOT_FOUND";

/// The toolkit's stub libcuda was loaded.
pub(super) const STUB_ADVICE: &str = crate::tr_key!(
    "The CUDA toolkit's stub libcuda (in a .../stubs directory, only for linking) was loaded instead of the driver's. Remove the stubs directory from LD_LIBRARY_PATH, and install the NVIDIA driver if there is none."
);

/// Something that cannot happen did: a gpu-doctor bug.
pub(super) const REPORT_BUG: &str = crate::tr_key!("This is a gpu-doctor bug: please report it with this output.");

/// The GPU computed a wrong result.
pub(super) const WRONG_RESULT_ADVICE: &str = if cfg!(windows) {
    crate::tr_key!(
        "The GPU computed a wrong answer: a sign of failing hardware or unstable clocks. Remove any overclock (MSI Afterburner and similar tools included), look in Event Viewer (eventvwr.msc → Windows Logs → System) for nvlddmkm errors and check the ECC and row-remapping counters (gpu-doctor-cli check), then run a longer burn (--burn 120). If wrong results repeat, have the card serviced."
    )
} else {
    crate::tr_key!(
        "The GPU computed a wrong answer: a sign of failing hardware or unstable clocks. Remove any overclock, check the kernel log for Xid errors (48, 63, 64, 94, 95: memory) and the ECC and row-remapping counters (gpu-doctor-cli check), then run a longer burn (--burn 120). If wrong results repeat, have the card serviced."
    )
};

/// The PCIe link runs below what the GPU and slot support.
pub(super) const LINK_ADVICE: &str = crate::tr_key!(
    "The GPU runs on fewer PCIe lanes or a slower generation than it supports. Use a full x16 slot wired to the CPU (not the chipset), avoid risers and x4/x8 adapters, reseat the card, and check the BIOS PCIe settings."
);

/// Host copies are far below the link's speed.
pub(super) const SLOW_COPY_ADVICE: &str = if cfg!(windows) {
    crate::tr_key!(
        "Host copies are far below the link's speed. Close other programs copying to the GPU; on a laptop, plug in the charger and choose the best-performance power mode (on battery the link and clocks are held low); check the BIOS PCIe settings and compare with the slot's wiring in the mainboard manual."
    )
} else {
    crate::tr_key!(
        "Host copies are far below the link's speed. Close other programs copying to the GPU, keep the process on the CPU socket next to the GPU (numactl --cpunodebind), check the BIOS PCIe and IOMMU settings, and compare with the slot's wiring in the mainboard manual."
    )
};

/// Copies within GPU memory are far below the memory's peak.
pub(super) const SLOW_MEMORY_ADVICE: &str = crate::tr_key!(
    "GPU memory is far slower than its specification. Look at the memory clock and throttle reasons in the Monitor while the test runs, check that no other program uses the GPU, and that no power or clock limit is set (nvidia-smi -q -d CLOCK,POWER)."
);

/// The clocks were held back during the burn.
pub(super) const THROTTLE_ADVICE: &str = crate::tr_key!(
    "Look at the reasons above: thermal limits need airflow and clean fans, power limits a power limit at the board's default (nvidia-smi -q -d POWER) and sound power cabling."
);

/// The driver library lacks a function the test calls.
pub(super) const OLD_LIBRARY_ADVICE: &str =
    crate::tr_key!("Update the NVIDIA driver; the installed libcuda is too old (or is not NVIDIA's).");

/// The library given with `--cuda-lib` did not load.
pub(super) const CUDA_LIB_ADVICE: &str = crate::tr_key!(
    "Check the path given with --cuda-lib, or leave the option out to load the driver's library from the standard places."
);

/// Another libcuda was loaded than the one asked for.
pub(super) const OTHER_LIBRARY_ADVICE: &str = if cfg!(windows) {
    crate::tr_key!(
        "Another nvcuda.dll comes first in Windows' DLL search order (the program's own folder comes before System32): remove the copy beside the program, so the driver's own is loaded."
    )
} else {
    crate::tr_key!(
        "Another libcuda comes first in the loader's search order; put the directory of the library you want first in LD_LIBRARY_PATH."
    )
};

/// The driver's CUDA version is older than the kernels' PTX needs.
pub(super) const OLD_DRIVER_ADVICE: &str = crate::tr_key!(
    "Update the NVIDIA driver (any driver from 2017 on, R384 or newer, is enough for this test; current frameworks need R525 or newer)."
);

/// The next step for a failed driver call with this `CUresult` code, in this stage; the driver's
/// CUDA version ("12.4"), when known, makes the PTX-version advice concrete.
pub(super) fn for_cuda_error(code: u32, stage: Stage, driver_cuda: Option<&str>) -> Message {
    match code {
        2 if stage == Stage::Context => crate::msg!(
            "The GPU has too little free memory even for a context. Close other programs using it (the Monitor lists them), then run the test again."
        ),
        2 => crate::msg!(
            "The GPU has too little free memory. Close other programs using it (the Monitor lists them), then run the test again."
        ),
        34 => crate::i18n::Message::new(STUB_ADVICE),
        100 => no_device_advice(),
        209 => crate::msg!(
            "The driver has no code for this GPU; it is likely too old for this GPU model. Update the NVIDIA driver."
        ),
        218 | 300 => crate::msg!(
            "The driver's JIT compiler rejected the test's PTX. {report_bug}",
            report_bug = crate::i18n::Message::new(REPORT_BUG)
        ),
        222 => match driver_cuda {
            Some(c) => crate::msg!(
                "The driver's JIT compiler is older than the kernels' PTX (ISA 6.0, CUDA 9.0); this driver supports CUDA {cuda}. Update the NVIDIA driver. If the driver is new, a CUDA forward-compatibility libcuda (/usr/local/cuda/compat) that does not match it may be on the library path: remove it.",
                cuda = c
            ),
            None => crate::msg!(
                "The driver's JIT compiler is older than the kernels' PTX (ISA 6.0, CUDA 9.0). Update the NVIDIA driver. If the driver is new, a CUDA forward-compatibility libcuda (/usr/local/cuda/compat) that does not match it may be on the library path: remove it."
            ),
        },
        700 | 716 | 719 if cfg!(windows) => crate::msg!(
            "The GPU faulted while running the test kernel. Look in Event Viewer (eventvwr.msc → Windows Logs → System) for nvlddmkm errors, remove overclocks, and reboot; if it repeats, the card needs service."
        ),
        700 | 716 | 719 => crate::msg!(
            "The GPU faulted while running the test kernel. Check the kernel log for Xid errors (sudo dmesg | grep -i xid), remove overclocks, and reset or reboot; if it repeats, the card needs service."
        ),
        code => {
            let (_, meaning) = crate::knowledge::cuda::cu_result(code as i32);
            crate::msg!(
                "{meaning} Run the Checklist (gpu-doctor-cli check) for the cause.",
                meaning = crate::i18n::Message::new(meaning)
            )
        }
    }
}

/// The next step when the asked-for device does not exist; CUDA sees `count` (at least one).
pub(super) fn invalid_device_advice(count: i32) -> Message {
    crate::msg!(
        "Choose a device from 0 to {max} (CUDA numbers the GPUs it can see, after CUDA_VISIBLE_DEVICES).",
        max = count - 1
    )
}

/// Summary and next step when no CUDA driver library can be loaded, for this kind of machine.
pub(super) fn missing_library_advice() -> (Message, Message) {
    let wsl = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .is_ok_and(|r| r.to_lowercase().contains("microsoft"))
        || std::path::Path::new("/dev/dxg").exists();
    let container = std::path::Path::new("/.dockerenv").exists() || std::path::Path::new("/run/.containerenv").exists();
    missing_library_text(cfg!(windows), wsl, container)
}

/// Summary and next step when no CUDA driver library can be loaded, on Windows, in WSL, in a
/// container or on a plain Linux machine.
fn missing_library_text(windows: bool, wsl: bool, container: bool) -> (Message, Message) {
    if windows {
        return (
            crate::msg!("nvcuda.dll, the NVIDIA driver's CUDA library, was not found"),
            crate::msg!(
                "Install the NVIDIA driver for this GPU (from NVIDIA or Windows Update); the CUDA toolkit alone is not enough."
            ),
        );
    }
    let summary = crate::msg!("no CUDA driver library (libcuda.so.1) could be loaded");
    let next = if wsl {
        crate::msg!(
            "In WSL the library comes from the Windows driver, in /usr/lib/wsl/lib. Make it visible: export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH (or run sudo ldconfig), keep the Windows NVIDIA driver current, and do not install a Linux NVIDIA driver inside WSL."
        )
    } else if container {
        crate::msg!(
            "This container has no GPU driver library: the GPU was not passed in. Start it with --gpus all (Docker with the NVIDIA Container Toolkit), or request nvidia.com/gpu in Kubernetes."
        )
    } else {
        crate::msg!(
            "Install the NVIDIA driver (Ubuntu: sudo ubuntu-drivers install; or the libnvidia-compute package of your driver branch). Check with: ldconfig -p | grep libcuda. The CUDA toolkit alone does not provide it."
        )
    };
    (summary, next)
}

/// The next step when CUDA sees no GPU, naming CUDA_VISIBLE_DEVICES when it is set.
pub(super) fn no_device_advice() -> Message {
    match std::env::var("CUDA_VISIBLE_DEVICES").ok() {
        Some(v) => crate::msg!(
            "CUDA sees no GPU. CUDA_VISIBLE_DEVICES is set to '{value}': unset it or list a GPU that exists. The Checklist (gpu-doctor-cli check) finds which.",
            value = v
        ),
        None => crate::msg!(
            "CUDA sees no GPU. Check that the driver is loaded (nvidia-smi), that /dev/nvidia* exist and are accessible, and in a container that it was started with --gpus all. The Checklist (gpu-doctor-cli check) finds which."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_library_advice_fits_the_machine() {
        assert!(missing_library_text(false, true, false).1.en().contains("/usr/lib/wsl/lib"));
        assert!(missing_library_text(false, false, true).1.en().contains("--gpus all"));
        assert!(missing_library_text(false, false, false).1.en().contains("ldconfig -p | grep libcuda"));
        assert!(missing_library_text(true, false, false).0.en().contains("nvcuda.dll"));
        // WSL inside a container is still WSL: the library path is the fix.
        assert!(missing_library_text(false, true, true).1.en().contains("/usr/lib/wsl/lib"));
    }

    #[test]
    fn cuda_errors_get_their_own_next_step() {
        assert!(for_cuda_error(2, Stage::Context, None).en().contains("too little free memory even for a context"));
        assert!(!for_cuda_error(2, Stage::Alloc, None).en().contains("even for a context"));
        assert!(for_cuda_error(222, Stage::Module, Some("12.4")).en().contains("; this driver supports CUDA 12.4."));
        assert_eq!(for_cuda_error(34, Stage::Init, None).en(), STUB_ADVICE);
        assert!(
            for_cuda_error(999, Stage::Init, None)
                .en()
                .ends_with("Run the Checklist (gpu-doctor-cli check) for the cause.")
        );
    }
}
