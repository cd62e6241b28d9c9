//! The x86 SIMD state that faer's GEMM kernels leave behind, and the one call that clears it.
//!
//! faer's matrix products (through the `gemm` crate's AVX-512 / AVX2 micro-kernels, and so also
//! `&a * &b`, `thin_svd` and every other routine that ends in a large product) return with the
//! upper halves of the vector registers *dirty*: no `vzeroupper` is executed after them. Our own
//! code is compiled for baseline x86-64, so its scalar floating-point instructions are legacy
//! SSE, while glibc's `exp`, `log1p`, `sin`, `cos`, `tanh`, … (chosen at load time for the FMA
//! machine) are VEX-encoded. With the upper state dirty, every switch between the two costs a
//! state transition, two per libm call. Measured on the project's machine (Intel Xeon, 2 cores),
//! a loop of `exp` + `ln_1p` runs at 7.6 ns per element on a clean state and at 244 ns after one
//! faer `matmul` (`sin`: 4.9 → 129 ns); plain arithmetic is unaffected. faer's symmetric
//! eigensolver and QR happen to end clean, which is why the cost came and went with the
//! surrounding code (MC-1's FPC step ends in an eigendecomposition, MC-b's does not: the same
//! loss evaluation was 5× slower in MC-b).
//!
//! [`clear_upper_state`] executes `vzeroupper` (when the CPU has AVX). It changes no value
//! anywhere: it only zeroes the upper register halves, which no live value occupies between
//! calls. Call it at the start of every loop of transcendental functions that may follow a
//! GEMM, once per thread (inside each rayon task, since the GEMM may have run on any of them).
//!
//! ```
//! use gimc_linalg::simd::clear_upper_state;
//!
//! let z = [0.5_f64, -1.0, 2.0];
//! clear_upper_state(); // before the libm-heavy loop
//! let loss: f64 = z.iter().map(|&m| (-m).exp().ln_1p()).sum();
//! assert!(loss > 0.0);
//! ```

/// Executes `vzeroupper` on x86-64 CPUs with AVX (a no-op elsewhere): clears the dirty upper
/// SIMD state a preceding faer GEMM leaves, so that the scalar libm calls after it run at their
/// normal speed. Values are unaffected.
#[inline]
pub fn clear_upper_state() {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx") {
            // SAFETY: the CPU supports AVX (checked just above), the only requirement of
            // `vzeroupper`; no value lives in the upper register halves across this call.
            #[allow(unsafe_code)]
            unsafe {
                std::arch::x86_64::_mm256_zeroupper();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::linalg::matmul::matmul;
    use faer::{Accum, Mat, Par};

    #[test]
    fn clearing_after_a_gemm_changes_no_value() {
        let a = Mat::<f64>::from_fn(64, 200, |i, j| ((i * 7 + j) as f64 * 0.01).sin());
        let mut g = Mat::<f64>::zeros(64, 64);
        let loss = |g: &Mat<f64>| -> f64 {
            (0..g.nrows())
                .map(|i| (-g[(i, i)].abs()).exp().ln_1p() + g[(i, 0)].sin())
                .sum()
        };
        matmul(
            g.as_mut(),
            Accum::Replace,
            a.as_ref(),
            a.transpose(),
            1.0,
            Par::Seq,
        );
        // the loss right after the GEMM (dirty state), then again after clearing
        let dirty = loss(&g);
        clear_upper_state();
        let clean = loss(&g);
        assert_eq!(dirty.to_bits(), clean.to_bits());
        assert!(clean.is_finite() && clean > 0.0);
    }
}
