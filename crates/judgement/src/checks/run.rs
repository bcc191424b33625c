//! The run over a view: [`all`] gives every check for the view's platform its result, in registry
//! order, except those whose facts the source did not collect ("not in this report") and, on a host
//! that reserves every NVIDIA GPU for virtual machines, the driver's, CUDA's, the device files' and
//! the runtime's checks, which do not apply there.

use super::Ctx;
use super::registry::CHECKS;
use crate::diagnose::system::SystemView;
use crate::diagnose::{Check, Layer, Verdict};

/// Runs every check for the view's platform over `v`, in registry order.
pub fn all(v: &dyn SystemView) -> Vec<Check> {
    let cx = Ctx::new(v);
    let platform = v.meta().platform;
    // A host that reserves every NVIDIA GPU for virtual machines (bound to vfio-pci or pci-stub)
    // runs no NVIDIA driver on purpose: the driver's, CUDA's, the device files' and the runtime's
    // checks do not apply to it, and none of them fails.
    let reserved = reserved_for_vms(&cx);
    CHECKS
        .iter()
        .filter(|d| d.platforms.includes(platform))
        .map(|d| match not_collected_for(d.id, v) {
            Some(what) => d
                .blank()
                .verdict(Verdict::Skipped, crate::msg!("not in this report: {what}", what = what))
                .found(crate::msg!("Not in this report: {what}", what = what)),
            None if reserved.is_some()
                && matches!(d.layer, Layer::Driver | Layer::Cuda | Layer::Permissions | Layer::Runtime) =>
            {
                d.blank().verdict(
                    Verdict::Skipped,
                    crate::i18n::Message::new(RESERVED_FOR_VMS).arg("gpus", reserved.clone().unwrap_or_default()),
                )
            }
            None => (d.run)(d.blank(), &cx),
        })
        .collect()
}

/// The summary of a check that does not apply because every GPU is reserved for virtual machines.
pub(crate) const RESERVED_FOR_VMS: &str = crate::tr_key!(
    "the GPUs are reserved for virtual machines ({gpus}): no NVIDIA driver is meant to run on this host"
);

/// The NVIDIA GPUs and the driver that holds each ("0000:01:00.0: vfio-pci"), when every one is
/// bound to a driver that reserves it for virtual machines (vfio-pci, pci-stub).
fn reserved_for_vms(cx: &Ctx) -> Option<String> {
    let pci = cx.pci.as_ref().filter(|p| !p.is_empty())?;
    pci.iter().all(|g| g.driver.as_deref().is_some_and(is_vm_driver)).then(|| {
        pci.iter()
            .map(|g| format!("{}: {}", g.address, g.driver.as_deref().unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// Whether a PCI driver reserves a device for virtual machines.
fn is_vm_driver(d: &str) -> bool {
    matches!(d, "vfio-pci" | "pci-stub")
}

/// The facts each check needs that a source may not have collected at all (see
/// [`crate::diagnose::system::Meta::not_collected`]), with how the report names them.
const NEEDS: &[(&str, &str)] = &[
    ("PERM-01", "device_nodes"),
    ("PERM-02", "device_nodes"),
    ("CUDA-LIB", "libraries"),
    ("WSL-02", "libraries"),
    ("ENV-01", "environment"),
    ("ENV-02", "environment"),
    ("ENV-03", "environment"),
    ("CUDA-04", "python"),
    ("CUDA-07", "python"),
    ("CUDA-08", "python"),
    ("DRV-09", "processes"),
    ("CUDA-INIT", "cuda"),
    ("CONT-01", "container"),
    ("CONT-02", "container"),
];

/// What `id` needs that the view did not collect, in words.
fn not_collected_for(id: &str, v: &dyn SystemView) -> Option<crate::i18n::Message> {
    let missing = &v.meta().not_collected;
    let (_, fact) = NEEDS.iter().find(|(c, f)| *c == id && missing.contains(*f))?;
    Some(match *fact {
        "device_nodes" => crate::msg!("the device files (ls -l /dev/nvidia*)"),
        "libraries" => crate::msg!("which driver libraries the loader finds"),
        "environment" => crate::msg!("the environment variables"),
        "python" => crate::msg!("the Python environments"),
        "processes" => crate::msg!("the running processes"),
        "container" => {
            crate::msg!("whether this runs in a container (/.dockerenv, /run/.containerenv, /proc/1/cgroup)")
        }
        _ => crate::msg!("a cuInit call"),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::diagnose::checks::{CheckDef, WIN_01, tdr_check};
    use crate::diagnose::system::{KernelLog, Meta, Platform, Tdr, UserInfo};

    /// A machine where nothing can be read.
    struct Bare(Meta);

    impl SystemView for Bare {
        fn read(&self, _: &str) -> Option<String> {
            None
        }
        fn read_bytes(&self, _: &str) -> Option<Vec<u8>> {
            None
        }
        fn list(&self, _: &str) -> Option<Vec<String>> {
            None
        }
        fn link(&self, _: &str) -> Option<String> {
            None
        }
        fn exists(&self, _: &str) -> bool {
            false
        }
        fn meta(&self) -> &Meta {
            &self.0
        }
    }

    fn bare(platform: Platform) -> Bare {
        Bare(Meta {
            platform,
            env: BTreeMap::new(),
            user: UserInfo::default(),
            device_nodes: Vec::new(),
            links: BTreeMap::new(),
            listings: BTreeMap::new(),
            nvml: None,
            libraries: Vec::new(),
            kernel_log: KernelLog::Lines(Vec::new()),
            kernel_log_source: None,
            renderer: None,
            tdr: Some(Tdr::default()),
            cuda: None,
            quick: false,
            not_collected: Default::default(),
            windows: None,
            holders: None,
        })
    }

    #[test]
    fn no_gpu_says_nothing_about_ecc_or_memory_repair() {
        let got = all(&bare(Platform::Linux));
        for id in ["RT-ECC", "RT-03"] {
            let c = got.iter().find(|c| c.id == id);
            let summary = c.map(|c| c.summary.en()).unwrap_or_default();
            assert_eq!(summary, "no GPU data (NVML not open)", "{id}");
        }
    }

    #[test]
    fn every_result_carries_its_definitions_id_layer_and_title() {
        for platform in [Platform::Linux, Platform::Windows] {
            let got = all(&bare(platform));
            let defs: Vec<&CheckDef> = CHECKS.iter().filter(|d| d.platforms.includes(platform)).collect();
            assert_eq!(got.len(), defs.len());
            // A Windows checklist has no Linux-only check and the other way round.
            assert!(got.iter().all(|c| !c.id.starts_with(if platform == Platform::Windows {
                "CONT-"
            } else {
                "WIN-"
            })));
            for (c, d) in got.iter().zip(defs) {
                assert_eq!((c.id.as_str(), c.layer, c.title.as_str()), (d.id, d.layer, d.title), "{platform:?}");
            }
        }
        let tdr = tdr_check(&Tdr::default());
        assert_eq!((tdr.id.as_str(), tdr.layer, tdr.title.as_str()), (WIN_01.id, WIN_01.layer, WIN_01.title));
        assert!(CHECKS.iter().any(|d| d.id == WIN_01.id && d.title == WIN_01.title));
    }
}
