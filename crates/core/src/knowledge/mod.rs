//! What gpu-doctor knows about the NVIDIA stack, as tables taken from NVIDIA's and the
//! frameworks' own documentation (each table names its source): which driver each CUDA release
//! needs, what each Xid and CUresult means, which CUDA each PyTorch wheel targets, how a Windows
//! driver file version maps to NVIDIA's version. Pure data and lookups: no file is read here, and
//! every layer above may use them (the checklist, the smoke test, the reports).

use std::cmp::Ordering;

pub mod cuda;
pub mod frameworks;
pub mod torch_pythons;
pub mod windows;
pub mod xid;

/// Compares dotted versions numerically component by component (`570.124.06` > `570.26`).
pub fn cmp_version(a: &str, b: &str) -> Ordering {
    let parts = |s: &str| s.split('.').map(|p| p.trim().parse::<u64>().unwrap_or(0)).collect::<Vec<_>>();
    let (pa, pb) = (parts(a), parts(b));
    for i in 0..pa.len().max(pb.len()) {
        let o = pa.get(i).unwrap_or(&0).cmp(pb.get(i).unwrap_or(&0));
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_numerically() {
        assert_eq!(cmp_version("570.124.06", "570.26"), Ordering::Greater);
        assert_eq!(cmp_version("535.54.03", "535.54.03"), Ordering::Equal);
        assert_eq!(cmp_version("525.60.13", "530.30.02"), Ordering::Less);
    }
}
