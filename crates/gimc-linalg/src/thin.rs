//! The product Aᵀ U with a thin U (at most [`THIN_MAX_COLS`] columns), in one streaming pass
//! down A's columns and without packing A.
//!
//! faer's GEMM copies its left operand into micro-panels on every call; for Aᵀ (a row-major
//! view of a column-major A) times a thin U, that copy costs more than the product. On a
//! 256 × 500 block of segment's features (the ALS Hessian's Φ_blkᵀ U of `gimc-table3`),
//! single-threaded: 24.4 against 15.3 GFLOP/s with k = 7 columns, 20.6 against 6.4 with
//! k = 2 (`gimc-experiments bench --only thin-products`, BENCHMARKS). Here each pair of A's columns (two
//! contiguous streams the prefetcher follows) meets the cache-resident columns of U, with four
//! partial sums per dot product in registers. (The other orientation, A S, is not here: faer's
//! AVX-512 kernels run it at 44 GFLOP/s, faster than an AVX2 loop that streams A's columns.)
//!
//! Every entry is a fixed sequence of fused multiply-adds ([`f64::mul_add`]), whatever the
//! layout and the CPU: AVX2 + FMA kernels where the CPU has both (and the operands' rows are
//! contiguous), the same operations entry by entry otherwise, so the result is the same bits
//! everywhere. (Aᵀ U)_jc = Σ_r a_rj u_rc is summed in four interleaved partial sums (r mod 4)
//! over the first 4⌊m/4⌋ rows, combined as (s₀ + s₁) + (s₂ + s₃), then the remaining rows in
//! order.
//!
//! ```
//! use gimc_linalg::faer::{Mat, mat};
//! use gimc_linalg::thin::thin_tr_mul_into;
//!
//! let a = mat![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
//! let u = mat![[1.0], [-1.0]];
//! let mut atu = Mat::<f64>::zeros(3, 1);
//! thin_tr_mul_into(a.as_ref(), u.as_ref(), atu.as_mut())?;
//! assert_eq!((atu[(0, 0)], atu[(1, 0)], atu[(2, 0)]), (-3.0, -3.0, -3.0));
//! # Ok::<(), gimc_linalg::LinalgError>(())
//! ```

use faer::{MatMut, MatRef};

use crate::Result;
use crate::error::dim_err;

/// The most columns of U that [`thin_tr_mul_into`] takes.
pub const THIN_MAX_COLS: usize = 8;

/// out = Aᵀ U, for A (m × d), U (m × k) and out (d × k) with k ≤ [`THIN_MAX_COLS`].
///
/// Errors: a shape mismatch, or more than [`THIN_MAX_COLS`] columns (use a GEMM there).
pub fn thin_tr_mul_into(
    a: MatRef<'_, f64>,
    u: MatRef<'_, f64>,
    out: MatMut<'_, f64>,
) -> Result<()> {
    let (m, d) = a.shape();
    let k = u.ncols();
    if u.nrows() != m || out.shape() != (d, k) {
        return Err(dim_err(
            "thin_tr_mul_into",
            format!("U with {m} rows and out {d} x {k}"),
            format!(
                "U {} x {} and out {} x {}",
                u.nrows(),
                k,
                out.nrows(),
                out.ncols()
            ),
        ));
    }
    check_thin("thin_tr_mul_into", k)?;
    #[cfg(target_arch = "x86_64")]
    if let (Some(a_cols), Some(u_cols)) = (columns(a), columns(u))
        && fma_available()
    {
        let mut p = vec![0.0; d * k];
        // SAFETY: the CPU has AVX2 and FMA (checked just above); every column of A and U
        // holds m entries, and p holds d·k.
        #[allow(unsafe_code)]
        unsafe {
            avx2::tr_mul(&a_cols, &u_cols, &mut p, m)
        };
        copy_out(&p, d, out);
        return Ok(());
    }
    tr_mul_reference(a, u, out);
    Ok(())
}

fn check_thin(op: &'static str, k: usize) -> Result<()> {
    if k > THIN_MAX_COLS {
        return Err(dim_err(
            op,
            format!("at most {THIN_MAX_COLS} columns"),
            format!("{k}"),
        ));
    }
    Ok(())
}

#[cfg(target_arch = "x86_64")]
fn fma_available() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

/// The columns of `a` as slices when its rows are contiguous.
fn columns<'a>(a: MatRef<'a, f64>) -> Option<Vec<&'a [f64]>> {
    (0..a.ncols())
        .map(|j| a.col(j).try_as_col_major().map(|c| c.as_slice()))
        .collect()
}

/// `out` from the column-major `p` with `rows` rows.
fn copy_out(p: &[f64], rows: usize, mut out: MatMut<'_, f64>) {
    for (c, col) in p.chunks_exact(rows.max(1)).enumerate().take(out.ncols()) {
        for (r, &v) in col.iter().enumerate() {
            out[(r, c)] = v;
        }
    }
}

/// Aᵀ U entry by entry in the documented order (the path without AVX2 + FMA, and for
/// strided operands).
fn tr_mul_reference(a: MatRef<'_, f64>, u: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
    let m = a.nrows();
    let quads = m / 4 * 4;
    for c in 0..u.ncols() {
        for j in 0..a.ncols() {
            let mut lanes = [0.0; 4];
            for r in 0..quads {
                lanes[r % 4] = a[(r, j)].mul_add(u[(r, c)], lanes[r % 4]);
            }
            let mut s = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
            for r in quads..m {
                s = a[(r, j)].mul_add(u[(r, c)], s);
            }
            out[(j, c)] = s;
        }
    }
}

/// The AVX2 + FMA kernels. Every function requires a CPU with both.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2 {
    use std::arch::x86_64::{
        __m256d, _mm256_fmadd_pd, _mm256_loadu_pd, _mm256_setzero_pd, _mm256_storeu_pd,
    };

    /// p = Aᵀ U (p column-major d × k), A's columns `a` and U's `u` (m entries each): 2
    /// columns of A against 4 of U at a time, four lanes per dot product.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn tr_mul(a: &[&[f64]], u: &[&[f64]], p: &mut [f64], m: usize) {
        let (d, k) = (a.len(), u.len());
        let mut j0 = 0;
        while j0 < d {
            let jn = (d - j0).min(2);
            let mut c0 = 0;
            while c0 < k {
                let cn = (k - c0).min(4);
                // SAFETY: forwarded (the caller's contract; j0 + jn ≤ d, c0 + cn ≤ k)
                unsafe {
                    match (jn, cn) {
                        (2, 4) => dots::<2, 4>(a, u, p, m, j0, c0),
                        (2, 3) => dots::<2, 3>(a, u, p, m, j0, c0),
                        (2, 2) => dots::<2, 2>(a, u, p, m, j0, c0),
                        (2, _) => dots::<2, 1>(a, u, p, m, j0, c0),
                        (_, 4) => dots::<1, 4>(a, u, p, m, j0, c0),
                        (_, 3) => dots::<1, 3>(a, u, p, m, j0, c0),
                        (_, 2) => dots::<1, 2>(a, u, p, m, j0, c0),
                        _ => dots::<1, 1>(a, u, p, m, j0, c0),
                    }
                }
                c0 += 4;
            }
            j0 += 2;
        }
    }

    /// The J × C dot products of A's columns j0.. with U's columns c0.., into p (d rows).
    #[inline(always)]
    unsafe fn dots<const J: usize, const C: usize>(
        a: &[&[f64]],
        u: &[&[f64]],
        p: &mut [f64],
        m: usize,
        j0: usize,
        c0: usize,
    ) {
        let d = a.len();
        let xs: [&[f64]; J] = std::array::from_fn(|jj| &a[j0 + jj][..m]);
        let us: [&[f64]; C] = std::array::from_fn(|cc| &u[c0 + cc][..m]);
        let quads = m / 4 * 4;
        let mut lanes = [[[0.0; 4]; C]; J];
        // SAFETY: the caller guarantees AVX2 + FMA; every load is at r + 4 ≤ m of a slice of
        // m entries, every store into a 4-entry array
        unsafe {
            let mut acc = [[_mm256_setzero_pd(); C]; J];
            let mut r = 0;
            while r < quads {
                let uq: [__m256d; C] =
                    std::array::from_fn(|cc| _mm256_loadu_pd(us[cc].as_ptr().add(r)));
                for jj in 0..J {
                    let x = _mm256_loadu_pd(xs[jj].as_ptr().add(r));
                    for cc in 0..C {
                        acc[jj][cc] = _mm256_fmadd_pd(x, uq[cc], acc[jj][cc]);
                    }
                }
                r += 4;
            }
            for jj in 0..J {
                for cc in 0..C {
                    _mm256_storeu_pd(lanes[jj][cc].as_mut_ptr(), acc[jj][cc]);
                }
            }
        }
        for (jj, x) in xs.iter().enumerate() {
            for (cc, col) in us.iter().enumerate() {
                let l = lanes[jj][cc];
                let mut s = (l[0] + l[1]) + (l[2] + l[3]);
                for r in quads..m {
                    s = x[r].mul_add(col[r], s);
                }
                p[(c0 + cc) * d + j0 + jj] = s;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{gaussian_mat, seeded};
    use faer::Mat;

    /// The entry-by-entry path (the one without AVX2 + FMA), whatever the CPU: on a CPU with
    /// both, the tests below compare the kernels against it bit for bit.
    fn reference(a: MatRef<'_, f64>, u: MatRef<'_, f64>) -> Mat<f64> {
        let mut out = Mat::<f64>::zeros(a.ncols(), u.ncols());
        tr_mul_reference(a, u, out.as_mut());
        out
    }

    fn assert_bits(x: MatRef<'_, f64>, y: MatRef<'_, f64>) {
        assert_eq!(x.shape(), y.shape());
        for c in 0..x.ncols() {
            for r in 0..x.nrows() {
                assert_eq!(x[(r, c)].to_bits(), y[(r, c)].to_bits(), "entry ({r}, {c})");
            }
        }
    }

    fn tr_mul(a: MatRef<'_, f64>, u: MatRef<'_, f64>) -> Mat<f64> {
        let mut out = Mat::<f64>::zeros(a.ncols(), u.ncols());
        thin_tr_mul_into(a, u, out.as_mut()).expect("shapes agree");
        out
    }

    #[test]
    fn follows_its_summation_order_bit_for_bit() {
        let mut rng = seeded(7);
        // rows around the quad size, odd and even column counts, every width up to 8
        for &(m, d) in &[
            (1, 1),
            (3, 2),
            (7, 3),
            (8, 5),
            (13, 9),
            (256, 40),
            (203, 31),
        ] {
            let a: Mat<f64> = gaussian_mat(&mut rng, m, d, 1.0);
            for k in 1..=THIN_MAX_COLS {
                let u: Mat<f64> = gaussian_mat(&mut rng, m, k, 1.0);
                let got = tr_mul(a.as_ref(), u.as_ref());
                assert_bits(got.as_ref(), reference(a.as_ref(), u.as_ref()).as_ref());
            }
        }
    }

    #[test]
    fn strided_operands_give_the_same_bits_as_contiguous_ones() {
        let mut rng = seeded(8);
        let big: Mat<f64> = gaussian_mat(&mut rng, 30, 40, 1.0);
        // a row-major view (transpose of a column-major block) and a column-major copy
        let a_view = big.as_ref().submatrix(3, 5, 20, 17).transpose();
        let a_copy = a_view.to_owned();
        let u: Mat<f64> = gaussian_mat(&mut rng, 17, 6, 1.0);
        assert_bits(
            tr_mul(a_view, u.as_ref()).as_ref(),
            tr_mul(a_copy.as_ref(), u.as_ref()).as_ref(),
        );
        // a block of rows of a taller matrix (a column stride above the row count)
        let rows = big.as_ref().subrows(4, 21);
        let u: Mat<f64> = gaussian_mat(&mut rng, 21, 7, 1.0);
        assert_bits(
            tr_mul(rows, u.as_ref()).as_ref(),
            reference(rows, u.as_ref()).as_ref(),
        );
    }

    #[test]
    fn agrees_with_faer() {
        let mut rng = seeded(9);
        let a: Mat<f64> = gaussian_mat(&mut rng, 300, 120, 1.0);
        for k in [3, 7] {
            let u: Mat<f64> = gaussian_mat(&mut rng, 300, k, 1.0);
            let exact = a.transpose() * &u;
            let diff = (&tr_mul(a.as_ref(), u.as_ref()) - &exact).norm_l2() / exact.norm_l2();
            assert!(diff < 1e-14, "relative difference {diff}");
        }
    }

    #[test]
    fn bad_shapes_and_wide_factors_are_errors() {
        let a = Mat::<f64>::zeros(4, 3);
        let u = Mat::<f64>::zeros(5, 2);
        let mut out = Mat::<f64>::zeros(3, 2);
        assert!(thin_tr_mul_into(a.as_ref(), u.as_ref(), out.as_mut()).is_err());
        let u = Mat::<f64>::zeros(4, 2);
        let mut out = Mat::<f64>::zeros(2, 2);
        assert!(thin_tr_mul_into(a.as_ref(), u.as_ref(), out.as_mut()).is_err());
        let wide = Mat::<f64>::zeros(4, THIN_MAX_COLS + 1);
        let mut out = Mat::<f64>::zeros(3, THIN_MAX_COLS + 1);
        assert!(thin_tr_mul_into(a.as_ref(), wide.as_ref(), out.as_mut()).is_err());
    }
}
