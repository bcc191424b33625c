//! [`CHECKS`]: every check's definition, in the order they run, and [`find`] by id. One table of
//! plain data that reads best in one place, in the method's order (WIN-01's row is named in the
//! parent module, as `tdr_check` in `windows.rs` gives its result outside a run too); the functions
//! it names live in the layer files.

use super::{
    CheckDef, Platforms, WIN_01, access, container, cuda, driver, env, frameworks, hardware, nvml, runtime, windows,
    wsl,
};
use crate::diagnose::Layer;

/// Every check, in the order they run (the order of [`crate::diagnose::Report::checks`]).
pub static CHECKS: &[CheckDef] = &[
    CheckDef {
        id: "WIN-ADAPTER",
        platforms: Platforms::Windows,
        layer: Layer::Hardware,
        title: crate::tr_key!("NVIDIA display adapter (Device Manager)"),
        depends_on: &[],
        explains: &["DRV-08", "CUDA-INIT", "WIN-04", "RT-LOST"],
        run: windows::win_adapter,
    },
    CheckDef {
        id: "HW-01",
        platforms: Platforms::Linux,
        layer: Layer::Hardware,
        title: crate::tr_key!("NVIDIA GPU on the PCI bus"),
        depends_on: &[],
        explains: &[],
        run: hardware::gpu_on_pci_bus,
    },
    CheckDef {
        id: "HW-02",
        platforms: Platforms::Linux,
        layer: Layer::Hardware,
        title: crate::tr_key!("Kernel driver of each GPU"),
        depends_on: &["HW-01", "DRV-04", "DRV-01"],
        explains: &[],
        run: hardware::kernel_driver_bound,
    },
    CheckDef {
        id: "DRV-01",
        platforms: Platforms::Linux,
        layer: Layer::Driver,
        title: crate::tr_key!("NVIDIA kernel module"),
        depends_on: &["HW-01", "DRV-04", "DRV-05"],
        explains: &[],
        run: driver::kernel_module_loaded,
    },
    CheckDef {
        id: "DRV-02",
        platforms: Platforms::Linux,
        layer: Layer::Driver,
        title: crate::tr_key!("Kernel module version"),
        depends_on: &[],
        explains: &[],
        run: driver::kernel_module_version,
    },
    CheckDef {
        id: "DRV-04",
        platforms: Platforms::Linux,
        layer: Layer::Driver,
        title: crate::tr_key!("nouveau and the GPU"),
        depends_on: &["HW-01"],
        explains: &[],
        run: driver::nouveau_not_holding_gpu,
    },
    CheckDef {
        id: "DRV-05",
        platforms: Platforms::Linux,
        layer: Layer::Driver,
        title: crate::tr_key!("Secure Boot and the kernel module"),
        depends_on: &[],
        // nouveau takes the GPU when Secure Boot keeps the NVIDIA module out.
        explains: &["DRV-04"],
        run: driver::secure_boot_and_module,
    },
    CheckDef {
        id: "DRV-HUNG",
        platforms: Platforms::Any,
        layer: Layer::Driver,
        title: crate::tr_key!("Driver responsiveness"),
        depends_on: &[],
        // A call that never returns wedges everything that calls the driver after it.
        explains: &["DRV-08", "CUDA-LIB", "CUDA-INIT", "CUDA-01", "HW-03", "RT-LOST", "RT-XID"],
        run: nvml::drv_hung,
    },
    CheckDef {
        id: "DRV-08",
        platforms: Platforms::Any,
        layer: Layer::Driver,
        title: crate::tr_key!("NVML (the driver's management library)"),
        depends_on: &["DRV-01", "HW-01", "DRV-06", "CONT-02", "WSL-01", "WSL-02", "PERM-02", "PERM-01"],
        explains: &[],
        run: nvml::nvml_loads,
    },
    CheckDef {
        id: "DRV-06",
        platforms: Platforms::Linux,
        layer: Layer::Driver,
        title: crate::tr_key!("Kernel module and library versions"),
        depends_on: &["DRV-01", "HW-01"],
        explains: &[],
        run: nvml::module_and_libraries_match,
    },
    CheckDef {
        id: "HW-03",
        platforms: Platforms::Linux,
        layer: Layer::Hardware,
        title: crate::tr_key!("PCI GPUs seen by NVML"),
        depends_on: &["DRV-08", "DRV-06", "DRV-01"],
        explains: &[],
        run: hardware::nvml_sees_every_gpu,
    },
    CheckDef {
        id: "DRV-09",
        platforms: Platforms::Linux,
        layer: Layer::Driver,
        title: crate::tr_key!("Persistence daemon"),
        depends_on: &[],
        explains: &[],
        run: nvml::persistence_daemon,
    },
    CheckDef {
        id: "DRV-10",
        platforms: Platforms::Linux,
        layer: Layer::Driver,
        title: crate::tr_key!("Kernel module flavour for the GPU generation"),
        depends_on: &[],
        explains: &[],
        run: driver::module_flavour_fits_gpu,
    },
    CheckDef {
        id: "CUDA-01",
        platforms: Platforms::Any,
        layer: Layer::Cuda,
        title: crate::tr_key!("Newest CUDA the driver supports"),
        depends_on: &["DRV-08", "DRV-06", "DRV-01"],
        explains: &[],
        run: cuda::driver_cuda_version,
    },
    CheckDef {
        id: "CUDA-LIB",
        platforms: Platforms::Linux,
        layer: Layer::Cuda,
        title: crate::tr_key!("CUDA driver library (libcuda.so.1)"),
        depends_on: &["DRV-08", "DRV-06", "DRV-01", "CONT-02", "WSL-01", "WSL-02"],
        explains: &[],
        run: cuda::cuda_lib,
    },
    CheckDef {
        id: "CUDA-INIT",
        platforms: Platforms::Any,
        layer: Layer::Cuda,
        title: crate::tr_key!("CUDA driver initialisation (cuInit)"),
        depends_on: &[
            "CUDA-LIB", "DRV-08", "DRV-06", "DRV-01", "PERM-01", "PERM-02", "CONT-02", "WSL-01", "WSL-02", "ENV-01",
            "ENV-03",
        ],
        explains: &[],
        run: cuda::cuda_init,
    },
    CheckDef {
        id: "CUDA-04",
        platforms: Platforms::Linux,
        layer: Layer::Cuda,
        title: crate::tr_key!("PyTorch builds vs the driver"),
        depends_on: &["CUDA-01", "DRV-08"],
        explains: &[],
        run: cuda::torch_builds_vs_driver,
    },
    CheckDef {
        id: "CUDA-08",
        platforms: Platforms::Linux,
        layer: Layer::Cuda,
        title: crate::tr_key!("TensorFlow, JAX, ONNX Runtime and PaddlePaddle builds vs the driver"),
        depends_on: &["CUDA-01", "DRV-08"],
        explains: &[],
        run: frameworks::framework_builds_vs_driver,
    },
    CheckDef {
        id: "CUDA-07",
        platforms: Platforms::Linux,
        layer: Layer::Cuda,
        title: crate::tr_key!("GPU architecture supported by the PyTorch builds"),
        depends_on: &["DRV-08"],
        explains: &[],
        run: cuda::gpu_arch_in_torch_builds,
    },
    CheckDef {
        id: "WIN-TORCH",
        platforms: Platforms::Windows,
        layer: Layer::Cuda,
        title: crate::tr_key!("CUDA in the Python environments' PyTorch"),
        depends_on: &["WIN-ADAPTER"],
        explains: &[],
        run: windows::win_torch,
    },
    CheckDef {
        id: "CONT-01",
        platforms: Platforms::Linux,
        layer: Layer::Containers,
        title: crate::tr_key!("Container environment"),
        depends_on: &[],
        explains: &[],
        run: container::in_container,
    },
    CheckDef {
        id: "CONT-02",
        platforms: Platforms::Linux,
        layer: Layer::Containers,
        title: crate::tr_key!("GPUs in the container"),
        depends_on: &[],
        explains: &["DRV-08", "CUDA-LIB", "CUDA-INIT", "CUDA-01", "PERM-01", "PERM-02", "HW-03"],
        run: container::gpus_passed_into_container,
    },
    CheckDef {
        id: "PERM-01",
        platforms: Platforms::Linux,
        layer: Layer::Permissions,
        title: crate::tr_key!("GPU device files"),
        depends_on: &["DRV-01", "CONT-02"],
        explains: &[],
        run: access::device_files_present,
    },
    CheckDef {
        id: "PERM-02",
        platforms: Platforms::Linux,
        layer: Layer::Permissions,
        title: crate::tr_key!("This user's access to the GPU device files"),
        depends_on: &["PERM-01"],
        explains: &[],
        run: access::device_files_open,
    },
    CheckDef {
        id: "WSL-01",
        platforms: Platforms::Linux,
        layer: Layer::Wsl,
        title: crate::tr_key!("WSL version and GPU paravirtualisation"),
        depends_on: &[],
        explains: &[],
        run: wsl::wsl_gpu_paravirtualisation,
    },
    CheckDef {
        id: "WSL-02",
        platforms: Platforms::Linux,
        layer: Layer::Wsl,
        title: crate::tr_key!("Source of CUDA in WSL (/usr/lib/wsl/lib)"),
        depends_on: &["WSL-01"],
        explains: &["DRV-08", "CUDA-LIB", "CUDA-INIT", "CUDA-01"],
        run: wsl::wsl_cuda_from_windows_driver,
    },
    CheckDef {
        id: "WSL-08",
        platforms: Platforms::Linux,
        layer: Layer::Wsl,
        title: crate::tr_key!("Graphics rendering in WSL"),
        depends_on: &[],
        explains: &[],
        run: wsl::wsl_graphics,
    },
    CheckDef {
        id: "WIN-GPUPREF",
        platforms: Platforms::Windows,
        layer: Layer::Environment,
        title: crate::tr_key!("Programs held on the integrated GPU (hybrid laptops)"),
        depends_on: &[],
        explains: &[],
        run: windows::win_gpupref,
    },
    CheckDef {
        id: "ENV-01",
        platforms: Platforms::Any,
        layer: Layer::Environment,
        title: "CUDA_VISIBLE_DEVICES",
        depends_on: &["DRV-08", "PERM-02"],
        explains: &["CUDA-INIT"],
        run: env::cuda_visible_devices,
    },
    CheckDef {
        id: "ENV-02",
        platforms: Platforms::Any,
        layer: Layer::Environment,
        title: crate::tr_key!("GPU numbering in CUDA and nvidia-smi"),
        depends_on: &["DRV-08", "PERM-02"],
        explains: &[],
        run: env::cuda_and_smi_order,
    },
    CheckDef {
        id: "ENV-03",
        platforms: Platforms::Linux,
        layer: Layer::Environment,
        title: crate::tr_key!("LD_LIBRARY_PATH and the driver's libraries"),
        depends_on: &[],
        explains: &[],
        run: env::ld_library_path_shadows,
    },
    CheckDef {
        id: "WIN-TDR",
        platforms: Platforms::Windows,
        layer: Layer::Runtime,
        title: crate::tr_key!("Driver resets (TDR) in the last 7 days"),
        depends_on: &[],
        explains: &[],
        run: windows::win_tdr,
    },
    CheckDef {
        id: "RT-LOST",
        platforms: Platforms::Any,
        layer: Layer::Runtime,
        title: crate::tr_key!("GPUs answering"),
        depends_on: &["DRV-08"],
        // A lost GPU is missing from NVML's count, fails cuInit, and its Xid lines are the same fault.
        explains: &["HW-03", "CUDA-INIT", "CUDA-01", "RT-XID"],
        run: runtime::rt_lost,
    },
    CheckDef {
        id: "RT-03",
        platforms: Platforms::Any,
        layer: Layer::Runtime,
        title: crate::tr_key!("Memory repair (row remapping, retired pages)"),
        depends_on: &["DRV-08"],
        explains: &[],
        run: runtime::memory_repair,
    },
    CheckDef {
        id: "RT-XID",
        platforms: Platforms::Linux,
        layer: Layer::Runtime,
        title: crate::tr_key!("GPU errors in the kernel log (Xid)"),
        // The kernel log does not need NVML: a GPU that fell off the bus before NVML saw it is
        // found here. A fatal Xid (only those fail) explains what the GPU's loss breaks above it.
        depends_on: &["CONT-02", "WSL-02"],
        explains: &["HW-02", "HW-03", "DRV-08", "CUDA-INIT", "CUDA-01", "PERM-01", "PERM-02"],
        run: runtime::rt_xid,
    },
    CheckDef {
        id: "RT-05",
        platforms: Platforms::Any,
        layer: Layer::Runtime,
        title: crate::tr_key!("Clocks held back (throttle reasons)"),
        depends_on: &["DRV-08"],
        explains: &[],
        run: runtime::clocks_held_back,
    },
    CheckDef {
        id: "RT-04",
        platforms: Platforms::Any,
        layer: Layer::Runtime,
        title: crate::tr_key!("PCIe link speed and width"),
        depends_on: &["DRV-08"],
        explains: &[],
        run: runtime::pcie_link_at_max,
    },
    CheckDef {
        id: "RT-ECC",
        platforms: Platforms::Any,
        layer: Layer::Runtime,
        title: crate::tr_key!("Uncorrectable memory (ECC) errors"),
        depends_on: &["DRV-08"],
        explains: &[],
        run: runtime::rt_ecc,
    },
    CheckDef {
        id: "RT-08",
        platforms: Platforms::Any,
        layer: Layer::Runtime,
        title: crate::tr_key!("Other programs holding the GPU"),
        depends_on: &["DRV-08"],
        explains: &[],
        run: runtime::other_programs_on_gpu,
    },
    CheckDef {
        id: "RT-06",
        platforms: Platforms::Any,
        layer: Layer::Runtime,
        title: crate::tr_key!("MIG (multi-instance GPU) mode"),
        depends_on: &["DRV-08"],
        explains: &["CUDA-INIT"],
        run: runtime::mig_mode,
    },
    CheckDef {
        id: "RT-07",
        platforms: Platforms::Any,
        layer: Layer::Runtime,
        title: crate::tr_key!("Compute mode"),
        depends_on: &["DRV-08"],
        explains: &[],
        run: runtime::compute_mode,
    },
    CheckDef {
        id: "WIN-CUDAPATH",
        platforms: Platforms::Windows,
        layer: Layer::Cuda,
        title: crate::tr_key!("CUDA toolkit (CUDA_PATH) vs the driver"),
        depends_on: &["WIN-ADAPTER", "DRV-08"],
        explains: &[],
        run: windows::win_cudapath,
    },
    CheckDef {
        id: "WIN-POWER",
        platforms: Platforms::Windows,
        layer: Layer::Windows,
        title: crate::tr_key!("Power plan"),
        depends_on: &[],
        explains: &[],
        run: windows::win_power,
    },
    CheckDef {
        id: "WIN-02",
        platforms: Platforms::Windows,
        layer: Layer::Windows,
        title: crate::tr_key!("Driver model (WDDM / TCC / MCDM)"),
        depends_on: &[],
        explains: &[],
        run: windows::driver_model,
    },
    CheckDef {
        id: "WIN-VER",
        platforms: Platforms::Windows,
        layer: Layer::Windows,
        title: crate::tr_key!("Windows version"),
        depends_on: &[],
        explains: &[],
        run: windows::win_ver,
    },
    CheckDef {
        id: "WIN-WSL",
        platforms: Platforms::Windows,
        layer: Layer::Windows,
        title: crate::tr_key!("WSL from the Windows side"),
        depends_on: &[],
        explains: &[],
        run: windows::win_wsl,
    },
    WIN_01,
    CheckDef {
        id: "WIN-04",
        platforms: Platforms::Windows,
        layer: Layer::Windows,
        title: crate::tr_key!("nvml.dll"),
        depends_on: &[],
        explains: &[],
        run: windows::nvml_dll_found,
    },
    CheckDef {
        id: "WIN-03",
        platforms: Platforms::Windows,
        layer: Layer::Windows,
        title: crate::tr_key!("Driver version"),
        depends_on: &[],
        explains: &[],
        run: windows::driver_version_on_windows,
    },
];

/// The definition of the check with `id`.
pub fn find(id: &str) -> Option<&'static CheckDef> {
    CHECKS.iter().find(|d| d.id == id)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    /// Issue 38, item 6: a title names what is checked, never the outcome, so that
    /// "[FAIL] <title>: <summary>" cannot contradict itself ("[FAIL] GPU passed into container:
    /// no GPU passed into this container"); in Chinese a question (是否, 能否) or a noun.
    #[test]
    fn titles_name_what_is_checked_not_the_outcome() {
        const CLAIMS: [&str; 14] = [
            " loaded",
            " loads",
            " present",
            " found",
            " answers",
            " works",
            " can ",
            " sees ",
            " does not ",
            " not holding",
            " have the same",
            " passed into",
            " fits ",
            " at its maximum",
        ];
        for d in CHECKS {
            let t = d.title;
            assert!(!CLAIMS.iter().any(|c| format!("{t} ").contains(c)), "{}: \"{t}\" reads as an outcome", d.id);
            assert!(!t.starts_with("The ") && !t.starts_with("Every "), "{}: \"{t}\"", d.id);
        }
        let cont = CHECKS.iter().find(|d| d.id == "CONT-02").map(|d| d.title).unwrap_or_default();
        assert_eq!(crate::i18n::Message::new(cont).render(crate::i18n::Lang::ZhCn), "容器中是否有 GPU");
    }

    #[test]
    fn ids_are_unique() {
        let mut seen = HashSet::new();
        for d in CHECKS {
            assert!(seen.insert(d.id), "{} is defined twice", d.id);
        }
    }

    #[test]
    fn every_dependency_is_another_check_of_the_registry() {
        for d in CHECKS {
            for dep in d.depends_on {
                assert!(find(dep).is_some(), "{} depends on {dep}, which is not in the registry", d.id);
                assert_ne!(*dep, d.id, "{} depends on itself", d.id);
            }
        }
    }

    /// Asserts that following `edges` from every check never comes back to where it started.
    fn assert_acyclic(what: &str, edges: fn(&CheckDef) -> &'static [&'static str]) {
        // Depth-first search; `path` holds the ids being visited, `done` those proven acyclic.
        fn visit(
            id: &'static str,
            edges: fn(&CheckDef) -> &'static [&'static str],
            what: &str,
            path: &mut Vec<&'static str>,
            done: &mut HashSet<&'static str>,
        ) {
            if done.contains(id) {
                return;
            }
            assert!(!path.contains(&id), "{what} cycle: {} -> {id}", path.join(" -> "));
            path.push(id);
            for next in find(id).map_or(&[][..], edges) {
                visit(next, edges, what, path, done);
            }
            path.pop();
            done.insert(id);
        }
        let mut done = HashSet::new();
        for d in CHECKS {
            visit(d.id, edges, what, &mut Vec::new(), &mut done);
        }
        assert_eq!(done.len(), CHECKS.len());
    }

    #[test]
    fn the_dependencies_have_no_cycle() {
        assert_acyclic("dependency", |d| d.depends_on);
    }

    #[test]
    fn causes_and_consequences_have_no_cycle_and_name_real_checks() {
        assert_acyclic("explains", |d| d.explains);
        for d in CHECKS {
            for e in d.explains {
                assert!(find(e).is_some() && *e != d.id, "{} explains {e}, which is not another check", d.id);
            }
        }
    }
}
