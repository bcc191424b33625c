//! Checking what the GPU computed: copies that must come back unchanged, saxpy against the CPU,
//! the GEMM with Freivalds' check, and the burn's count of mismatching values. Each check returns
//! the description of the first wrong value, and [`wrong_result`] turns it into the failure.

use super::Failure;
use super::advice::WRONG_RESULT_ADVICE;
use crate::i18n::Message;
use crate::smoke::{BurnTick, buffer_text};
use crate::units::{self, ByteUnits};

/// The failure for a wrong result, described by `summary`.
pub(super) fn wrong_result(summary: Message) -> Failure {
    Failure::new(Some("WRONG_RESULT".to_string()), summary, crate::i18n::Message::new(WRONG_RESULT_ADVICE))
}

/// Checks that a buffer came back from the GPU as it was sent; describes the first changed byte.
pub(super) fn check_round_trip(sent: &[u8], back: &[u8], units: ByteUnits) -> Option<Message> {
    let i = first_difference(sent, back)?;
    Some(crate::msg!(
        "a {size} buffer came back from the GPU changed (first difference at byte {offset})",
        size = buffer_text(sent.len() as u64, units),
        offset = i
    ))
}

/// The first index where the two differ (within their common length), when they differ.
fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    if a == b {
        return None;
    }
    a.iter().zip(b).position(|(x, y)| x != y)
}

/// Checks saxpy's output `y` against the CPU's `expected`, allowing float rounding; describes how
/// many values are wrong and the first.
pub(super) fn check_saxpy(y: &[f32], expected: &[f32]) -> Option<Message> {
    let wrong: Vec<usize> = y
        .iter()
        .zip(expected)
        .enumerate()
        .filter(|(_, (y, e))| (*y - *e).abs() > 1e-5 * e.abs().max(1.0))
        .map(|(i, _)| i)
        .collect();
    let &i = wrong.first()?;
    Some(if wrong.len() == 1 {
        crate::msg!(
            "saxpy gave {count} wrong value of {total}; first at element {index}: {got} instead of {want}",
            count = wrong.len(),
            total = y.len(),
            index = i,
            got = y[i],
            want = expected[i]
        )
    } else {
        crate::msg!(
            "saxpy gave {count} wrong values of {total}; first at element {index}: {got} instead of {want}",
            count = wrong.len(),
            total = y.len(),
            index = i,
            got = y[i],
            want = expected[i]
        )
    })
}

/// Checks C = A B with Freivalds' method (C r against A (B r) for a random ±1 vector r, in f64),
/// which catches any single wrong element bigger than the rounding noise, in O(n²). Returns a
/// description of the first wrong element, located exactly.
pub fn check_gemm(n: usize, a: &[f32], b: &[f32], c: &[f32]) -> Option<Message> {
    let r: Vec<f64> = (0..n).map(|j| if (j.wrapping_mul(2_654_435_761) >> 7) & 1 == 0 { 1.0 } else { -1.0 }).collect();
    let br: Vec<f64> = (0..n).map(|k| (0..n).map(|j| f64::from(b[k * n + j]) * r[j]).sum()).collect();
    for i in 0..n {
        let row = &c[i * n..(i + 1) * n];
        let cr: f64 = row.iter().zip(&r).map(|(c, r)| f64::from(*c) * r).sum();
        let abr: f64 = (0..n).map(|k| f64::from(a[i * n + k]) * br[k]).sum();
        let scale: f64 = row.iter().map(|c| f64::from(c.abs())).sum();
        if (cr - abr).abs() > 1e-5 * scale + 1e-3 || !cr.is_finite() {
            // Locate the column: recompute this row exactly.
            let (mut worst, mut col, mut want) = (-1.0f64, 0, 0.0f64);
            for j in 0..n {
                let exact: f64 = (0..n).map(|k| f64::from(a[i * n + k]) * f64::from(b[k * n + j])).sum();
                let d = (f64::from(row[j]) - exact).abs();
                if d > worst || d.is_nan() {
                    (worst, col, want) = (d, j, exact);
                }
            }
            return Some(crate::msg!(
                "the matrix product is wrong at row {row}, column {col}: {got} instead of {want}",
                row = i,
                col = col,
                got = row[col],
                want = format!("{want:.4}")
            ));
        }
    }
    None
}

/// Checks the burn: every repeated GEMM must equal the verified result bit for bit. `errors` is
/// the GPU's count of mismatching values over `iterations` GEMMs; `ticks` say when they appeared.
pub(super) fn check_burn(errors: u32, iterations: u64, ticks: &[BurnTick]) -> Option<Message> {
    if errors == 0 {
        return None;
    }
    let first = ticks.iter().find(|t| t.errors > 0).map_or(0.0, |t| t.t_s);
    let first = units::duration_words(first);
    Some(if errors == 1 {
        crate::msg!(
            "{errors} wrong value in {iterations} repeated GEMMs (first seen by {first}); the same inputs must give the same bits",
            errors = errors,
            iterations = iterations,
            first = first
        )
    } else {
        crate::msg!(
            "{errors} wrong values in {iterations} repeated GEMMs (first seen by {first}); the same inputs must give the same bits",
            errors = errors,
            iterations = iterations,
            first = first
        )
    })
}

/// 16777216 -> "16,777,216".
pub(super) fn group(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn product(n: usize, a: &[f32], b: &[f32]) -> Vec<f32> {
        let mut c = vec![0f32; n * n];
        for i in 0..n {
            for k in 0..n {
                for j in 0..n {
                    c[i * n + j] += a[i * n + k] * b[k * n + j];
                }
            }
        }
        c
    }

    #[test]
    fn freivalds_accepts_a_right_product_and_finds_a_wrong_element() {
        let n = 64;
        let a: Vec<f32> = (0..n * n).map(|i| ((i * 37 % 101) as f32 / 50.0) - 1.0).collect();
        let b: Vec<f32> = (0..n * n).map(|i| ((i * 53 % 97) as f32 / 48.0) - 1.0).collect();
        let mut c = product(n, &a, &b);
        assert_eq!(check_gemm(n, &a, &b, &c), None);
        c[5 * n + 9] += 0.25;
        let msg = check_gemm(n, &a, &b, &c).unwrap_or_default();
        assert!(msg.en().contains("row 5, column 9"), "{}", msg.en());
        c[5 * n + 9] = f32::NAN;
        assert!(check_gemm(n, &a, &b, &c).is_some());
    }

    #[test]
    fn groups_thousands() {
        assert_eq!(group(16_777_216), "16,777,216");
        assert_eq!(group(999), "999");
    }

    #[test]
    fn round_trips_name_the_first_changed_byte_in_the_chosen_units() {
        let sent = vec![7u8; 64 << 20];
        assert_eq!(check_round_trip(&sent, &sent, ByteUnits::Binary), None);
        let mut back = sent.clone();
        back[1000] = 0;
        back[2000] = 0;
        assert_eq!(
            check_round_trip(&sent, &back, ByteUnits::Binary).unwrap_or_default().en(),
            "a 64 MiB buffer came back from the GPU changed (first difference at byte 1000)"
        );
        assert!(
            check_round_trip(&sent, &back, ByteUnits::Decimal).unwrap_or_default().en().starts_with("a 67.1 MB buffer")
        );
    }

    #[test]
    fn saxpy_allows_rounding_and_counts_wrong_values() {
        let expected = [1.0f32, 2.0, 1000.0, 4.0];
        let mut y = expected;
        y[2] += 0.001; // within 1e-5 relative
        assert_eq!(check_saxpy(&y, &expected), None);
        y[1] = 2.5;
        y[3] = 0.0;
        assert_eq!(
            check_saxpy(&y, &expected).unwrap_or_default().en(),
            "saxpy gave 2 wrong values of 4; first at element 1: 2.5 instead of 2"
        );
    }

    #[test]
    fn burn_mismatches_say_when_they_began() {
        let tick = |t_s: f64, errors: u64| BurnTick {
            t_s,
            iterations: 10,
            errors,
            gflops: 1.0,
            sm_clock_mhz: None,
            temperature_c: None,
            power_w: None,
            throttle_mask: None,
        };
        assert_eq!(check_burn(0, 50, &[tick(1.0, 0)]), None);
        let msg = check_burn(3, 50, &[tick(1.0, 0), tick(2.0, 3)]).unwrap_or_default();
        assert!(msg.en().starts_with("3 wrong values in 50 repeated GEMMs (first seen by 2 s)"), "{}", msg.en());
    }
}
