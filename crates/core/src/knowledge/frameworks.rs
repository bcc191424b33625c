//! Frameworks and the CUDA they were built for: PyTorch's CUDA wheel variants and the compute
//! capabilities each build carries kernels for.

use std::cmp::Ordering;

use super::cmp_version;
use super::cuda::cuda_family_min_driver;

/// PyTorch's CUDA wheel variants: (index tag, first torch release, last torch release; "" while
/// still published for new releases, as of torch 2.14). From pytorch.org's "Previous PyTorch
/// Versions" page and the release compatibility matrix in pytorch/pytorch RELEASE.md (2.12-2.14:
/// cu126, cu130, cu132). There never was a cu114, cu119 or cu120 index.
pub const TORCH_WHEELS: &[(&str, &str, &str)] = &[
    ("cu92", "1.4.0", "1.7.1"),
    ("cu101", "1.4.0", "1.8.1"),
    ("cu102", "1.5.0", "1.12.1"),
    ("cu110", "1.7.0", "1.7.1"),
    ("cu111", "1.8.0", "1.10.2"),
    ("cu113", "1.10.0", "1.12.1"),
    ("cu115", "1.11.0", "1.11.0"),
    ("cu116", "1.12.0", "1.13.1"),
    ("cu117", "1.13.0", "2.0.1"),
    ("cu118", "2.0.0", "2.7.1"),
    ("cu121", "2.1.0", "2.5.1"),
    ("cu124", "2.4.0", "2.6.0"),
    ("cu126", "2.6.0", ""),
    ("cu128", "2.7.0", "2.11.0"),
    ("cu129", "2.8.0", "2.8.0"),
    ("cu130", "2.9.0", ""),
    ("cu132", "2.12.0", ""),
];

/// The PyTorch wheel to suggest for a driver whose newest CUDA is `driver_cuda` ("12.2"): the
/// newest variant of the driver's CUDA major version that new releases still use (it runs there
/// through minor-version compatibility), else the newest older variant the driver supports, with
/// the last torch release built for it. `None` for drivers older than any variant. `driver` (the
/// driver's own version, when known) below the family minimum (an early CUDA 11.0 driver) rules
/// out minor-version compatibility.
pub fn torch_wheel_for_driver(driver_cuda: &str, driver: Option<&str>) -> Option<(&'static str, &'static str)> {
    torch_variants(driver_cuda, driver).first().map(|w| (w.0, w.2))
}

/// [`torch_wheel_for_driver`] for an environment whose Python is 3.`python`: the first variant,
/// in the same order of preference, with a release that has a wheel for that Python, and the
/// release to pin ("" when the newest release has one). `None` when no release the driver can
/// run has a wheel for it (from [`super::torch_pythons::TORCH_PYTHONS`]).
pub fn torch_wheel_for_python(
    driver_cuda: &str,
    driver: Option<&str>,
    python: u32,
) -> Option<(&'static str, &'static str)> {
    torch_variants(driver_cuda, driver)
        .into_iter()
        .find_map(|w| Some((w.0, torch_release_for_python(w.1, w.2, python)?)))
}

/// The newest torch release from `first` to `last` ("" while still published) with a wheel for
/// Python 3.`python`: "" when that is the newest release of all (no pin needed), `None` when none.
pub fn torch_release_for_python(first: &str, last: &str, python: u32) -> Option<&'static str> {
    use super::torch_pythons::TORCH_PYTHONS;
    let newest = TORCH_PYTHONS.first()?.0;
    let r = TORCH_PYTHONS.iter().find(|(r, lo, hi)| {
        cmp_version(r, first) != Ordering::Less
            && (last.is_empty() || cmp_version(r, last) != Ordering::Greater)
            && (*lo..=*hi).contains(&python)
    })?;
    Some(if r.0 == newest { "" } else { r.0 })
}

/// The Python 3 minor versions torch `release` has wheels for (`None` for a release not listed).
pub fn torch_pythons(release: &str) -> Option<(u32, u32)> {
    super::torch_pythons::TORCH_PYTHONS.iter().find(|(r, ..)| *r == release).map(|(_, lo, hi)| (*lo, *hi))
}

/// The wheel variants a driver can run, most preferred first (see [`torch_wheel_for_driver`]).
fn torch_variants(driver_cuda: &str, driver: Option<&str>) -> Vec<&'static (&'static str, &'static str, &'static str)> {
    let v = |s: &str| -> (u32, u32) {
        let mut p = s.split('.').map(|x| x.parse::<u32>().unwrap_or(0));
        (p.next().unwrap_or(0), p.next().unwrap_or(0))
    };
    let tag = |t: &str| -> (u32, u32) {
        let n: u32 = t.trim_start_matches("cu").parse().unwrap_or(0);
        (n / 10, n % 10)
    };
    let (major, minor) = v(driver_cuda);
    let mut out: Vec<&'static (&'static str, &'static str, &'static str)> = Vec::new();
    // Minor-version compatibility holds from CUDA 11 on: any variant of the same major version.
    let compatible = cuda_family_min_driver(major)
        .is_some_and(|(min, _)| driver.is_none_or(|d| cmp_version(d, min) != Ordering::Less));
    if compatible {
        let same: Vec<_> = TORCH_WHEELS.iter().filter(|w| tag(w.0).0 == major).collect();
        // Prefer a variant new releases still use, the lowest such (widest driver support), then
        // the others, newest first.
        out.extend(same.iter().find(|w| w.2.is_empty()).copied());
        out.extend(same.iter().rev().filter(|w| !w.2.is_empty()).copied());
    }
    for w in TORCH_WHEELS.iter().rev().filter(|w| tag(w.0) <= (major, minor)) {
        if !out.iter().any(|o| o.0 == w.0) {
            out.push(w);
        }
    }
    out
}

/// The oldest compute capability a PyTorch build for CUDA `cuda` runs on, and whether it carries
/// kernels for Blackwell (compute capability 10.x/12.x). From PyTorch's CUDA support matrix:
/// CUDA ≤ 12.6 builds cover 5.0-9.0; 12.8/12.9 builds drop Maxwell/Pascal (7.0+, 7.5+ from 2.10)
/// and add 10.0/12.0; CUDA 13 builds cover 7.5+.
pub fn torch_arch_support(torch: &str, cuda: &str) -> (f64, bool) {
    let v = |s: &str| s.split('.').take(2).map(|p| p.parse::<u32>().unwrap_or(0)).collect::<Vec<_>>();
    let c = v(cuda);
    let t = v(torch.split('+').next().unwrap_or(""));
    let cuda_ge = |maj: u32, min: u32| (c.first().copied().unwrap_or(0), c.get(1).copied().unwrap_or(0)) >= (maj, min);
    let torch_ge = |maj: u32, min: u32| (t.first().copied().unwrap_or(0), t.get(1).copied().unwrap_or(0)) >= (maj, min);
    if cuda_ge(13, 0) {
        (7.5, true)
    } else if cuda_ge(12, 8) {
        (if torch_ge(2, 10) { 7.5 } else { 7.0 }, true)
    } else {
        (5.0, false)
    }
}

/// The newest compute capability a CUDA release compiles for: a build made with it has no kernels
/// for a newer GPU ("no kernel image is available for execution on the device"). From the CUDA
/// Toolkit release notes: 11.0 added 8.0, 11.1 added 8.6, 11.4 added 8.7, 11.8 added 8.9 and 9.0,
/// 12.8 added 10.0 and 12.0, 12.9 added 10.3 and 12.1.
pub fn cuda_max_cc(cuda: &str) -> f64 {
    let v: Vec<u32> = cuda.split('.').take(2).map(|p| p.trim().parse().unwrap_or(0)).collect();
    let (maj, min) = (v.first().copied().unwrap_or(0), v.get(1).copied().unwrap_or(0));
    match (maj, min) {
        (0..=10, _) => 7.5,
        (11, 0) => 8.0,
        (11, 1..=3) => 8.6,
        (11, 4..=7) => 8.7,
        (11, _) | (12, 0..=7) => 9.0,
        (12, 8) => 12.0,
        _ => 12.1,
    }
}

/// The first CUDA release that compiles for compute capability `cc` (see [`cuda_max_cc`]).
pub fn cuda_for_cc(cc: f64) -> &'static str {
    if cc <= 7.5 {
        "10.0"
    } else if cc <= 8.0 {
        "11.0"
    } else if cc <= 8.6 {
        "11.1"
    } else if cc <= 8.7 {
        "11.4"
    } else if cc <= 9.0 {
        "11.8"
    } else if cc <= 12.0 {
        "12.8"
    } else {
        "12.9"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 53, item 22: a wheel is offered only for a Python it exists for.
    #[test]
    fn the_wheel_offered_has_a_build_for_the_environments_python() {
        // Driver 470 (CUDA 11.4): cu118, whose last release 2.7.1 has wheels for 3.9-3.13.
        assert_eq!(torch_wheel_for_python("11.4", Some("470.182.03"), 13), Some(("cu118", "2.7.1")));
        // Python 3.8: the newest cu118 release with a 3.8 wheel, not 2.7.1 (none for 3.8).
        let (tag, pin) = torch_wheel_for_python("11.4", Some("470.182.03"), 8).unwrap();
        assert_eq!(tag, "cu118");
        let (lo, hi) = torch_pythons(pin).unwrap();
        assert!((lo..=hi).contains(&8) && cmp_version(pin, "2.7.1") == Ordering::Less, "{pin}");
        // Python 3.14: no release the driver can run has a wheel for it.
        assert_eq!(torch_wheel_for_python("11.4", Some("470.182.03"), 14), None);
        // A current driver: no pin while the newest release has the wheel; a pin when it has not.
        assert_eq!(torch_wheel_for_python("13.0", None, 12), Some(("cu130", "")));
        let newest = crate::knowledge::torch_pythons::TORCH_PYTHONS[0];
        if newest.1 > 10 {
            let (_, pin) = torch_wheel_for_python("13.0", None, 10).unwrap();
            assert!(!pin.is_empty());
        }
        // Driver 440 (CUDA 10.2): cu102 ends at 1.12.1 (Python 3.7-3.10).
        assert_eq!(torch_wheel_for_python("10.2", Some("440.33.01"), 10), Some(("cu102", "1.12.1")));
        assert_eq!(torch_wheel_for_python("10.2", Some("440.33.01"), 11), None);
    }

    #[test]
    fn the_suggested_torch_wheel_exists_and_runs_on_the_driver() {
        assert_eq!(torch_wheel_for_driver("12.2", Some("535.183.01")), Some(("cu126", "")));
        assert_eq!(
            torch_wheel_for_driver("11.4", Some("470.182.03")),
            Some(("cu118", "2.7.1")),
            "no cu114 index ever existed"
        );
        assert_eq!(
            torch_wheel_for_driver("11.0", Some("450.51.06")),
            Some(("cu110", "1.7.1")),
            "too early for minor-version compatibility"
        );
        assert_eq!(torch_wheel_for_driver("13.0", None), Some(("cu130", "")));
        assert_eq!(torch_wheel_for_driver("10.2", Some("440.33.01")), Some(("cu102", "1.12.1")));
        assert_eq!(torch_wheel_for_driver("9.0", None), None);
        for major in 9..=13u32 {
            for minor in 0..=9u32 {
                let d = format!("{major}.{minor}");
                if let Some((tag, _)) = torch_wheel_for_driver(&d, None) {
                    assert!(TORCH_WHEELS.iter().any(|w| w.0 == tag), "{d}: {tag}");
                    let n: u32 = tag.trim_start_matches("cu").parse().unwrap_or(0);
                    // Same major (minor-version compatibility from CUDA 11), else not newer.
                    assert!(
                        n / 10 == major && cuda_family_min_driver(major).is_some()
                            || (n / 10, n % 10) <= (major, minor),
                        "{d}: {tag}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_cuda_release_compiles_up_to_its_newest_architecture() {
        assert_eq!(cuda_max_cc("10.2"), 7.5);
        assert_eq!(cuda_max_cc("11.0"), 8.0);
        assert_eq!(cuda_max_cc("11.3"), 8.6);
        assert_eq!(cuda_max_cc("11.8"), 9.0);
        assert_eq!(cuda_max_cc("12.6"), 9.0);
        assert_eq!(cuda_max_cc("12.8"), 12.0);
        assert_eq!(cuda_max_cc("13.0"), 12.1);
        for cc in [7.5, 8.0, 8.6, 8.7, 8.9, 9.0, 10.0, 12.0] {
            assert!(cuda_max_cc(cuda_for_cc(cc)) >= cc, "{cc}");
        }
        assert_eq!(cuda_for_cc(8.6), "11.1");
    }

    #[test]
    fn torch_arches() {
        assert_eq!(torch_arch_support("2.5.1+cu121", "12.1"), (5.0, false));
        assert_eq!(torch_arch_support("2.8.0+cu128", "12.8"), (7.0, true));
        assert_eq!(torch_arch_support("2.10.0+cu128", "12.8"), (7.5, true));
        assert_eq!(torch_arch_support("2.9.0+cu130", "13.0"), (7.5, true));
    }
}
