//! The implicit QL algorithm with Wilkinson shifts for a symmetric tridiagonal matrix
//! (EISPACK tql1 / tql2, as in JAMA's `EigenvalueDecomposition`), for the small
//! eigendecompositions of [`super::sym_eig_seq`].
//!
//! What it does differently from faer's tridiagonal QR (which it replaces at these sizes): the
//! deflation test |e_i| ≤ ε · max_{j ≤ l} (|d_j| + |e_j|) is a comparison (faer evaluates a
//! `hypot` for every off-diagonal entry at every sweep), and the rotations take √(p² + q²)
//! directly on the power-of-two-scaled matrix, falling back to `hypot` only where that could
//! under- or overflow. The eigenvalues then carry the normwise backward error of symmetric QR,
//! O(ε ‖T‖) absolute.

use crate::{LinalgError, Result};

/// √(a² + b²) without `hypot`'s cost where the sum of squares is safely inside the normal range.
#[inline(always)]
fn norm2(a: f64, b: f64) -> f64 {
    let s = a * a + b * b;
    if s > 1e-300 && s < 1e300 {
        s.sqrt()
    } else {
        a.hypot(b)
    }
}

/// Applies one QL sweep's rotations to the column-major `v` (n rows): for i = m − 1 down to l,
/// columns (i, i + 1) ← (c_i v_i − s_i v_{i+1}, s_i v_i + c_i v_{i+1}), with (c_i, s_i) =
/// `rotations[i − l]`. Row block by row block, carrying column i + 1 in registers from one
/// rotation to the next: one load and one store per column instead of two each, and the same
/// operations on every entry as rotating the columns one rotation at a time.
#[inline(always)]
fn apply_sweep(v: &mut [f64], n: usize, l: usize, m: usize, rotations: &[(f64, f64)]) {
    // 16 rows: four independent 4-lane chains through `carry`, enough to hide its latency
    let mut r0 = 0;
    while r0 + 16 <= n {
        rotate_block::<16>(v, n, r0, l, m, rotations);
        r0 += 16;
    }
    while r0 + 4 <= n {
        rotate_block::<4>(v, n, r0, l, m, rotations);
        r0 += 4;
    }
    while r0 < n {
        rotate_block::<1>(v, n, r0, l, m, rotations);
        r0 += 1;
    }
}

crate::avx2_dispatch! {
    /// [`apply_sweep`] four lanes wide where the CPU has AVX2 (no fused multiply-add: the same
    /// bits; [`crate::avx2_dispatch`]): a closure passed to [`crate::simd::with_avx2`] here was
    /// once left out of line by the optimiser after an unrelated change, and then ran two
    /// lanes wide (18.7 % of a yeast MC-1 path instead of 8 %).
    fn apply_sweep_dispatch(
        v: &mut [f64],
        n: usize,
        l: usize,
        m: usize,
        rotations: &[(f64, f64)],
    ) = apply_sweep;
}

/// [`apply_sweep`] on rows r0..r0 + R.
#[inline(always)]
fn rotate_block<const R: usize>(
    v: &mut [f64],
    n: usize,
    r0: usize,
    l: usize,
    m: usize,
    rotations: &[(f64, f64)],
) {
    let at = |col: usize| col * n + r0..col * n + r0 + R;
    let mut carry = [0.0; R];
    carry.copy_from_slice(&v[at(m)]);
    for i in (l..m).rev() {
        let (c, s) = rotations[i - l];
        let mut a = [0.0; R];
        a.copy_from_slice(&v[at(i)]);
        let out = &mut v[at(i + 1)];
        for k in 0..R {
            let h = carry[k];
            out[k] = s * a[k] + c * h;
            carry[k] = c * a[k] - s * h;
        }
    }
    v[at(l)].copy_from_slice(&carry);
}

/// Eigenvalues of the symmetric tridiagonal matrix with diagonal `d` and off-diagonal
/// `e` (e_i = T_{i+1,i}; `e` has the length of `d`, its last entry ignored), overwriting `d`
/// (unsorted), and with `v` the eigenvectors: `v` holds an n × n column-major matrix Q on entry
/// and Q times the eigenvectors of T on exit (so the identity gives T's eigenvectors).
pub(super) fn tridiagonal_ql(
    d: &mut [f64],
    e: &mut [f64],
    mut v: Option<&mut [f64]>,
) -> Result<()> {
    let n = d.len();
    if n == 0 {
        return Ok(());
    }
    e[n - 1] = 0.0;
    // a power of two brings the largest entry into [1/2, 1): exact, and keeps p² + q² in range
    let max = d
        .iter()
        .chain(e.iter())
        .fold(0.0_f64, |m, x| m.max(x.abs()));
    if max == 0.0 {
        return Ok(());
    }
    let scale = 2f64.powi(max.log2().floor() as i32 + 1);
    let inv = 1.0 / scale;
    d.iter_mut().chain(e.iter_mut()).for_each(|x| *x *= inv);
    let eps = f64::EPSILON;
    let max_iters = 30 * n.max(1);
    let mut f = 0.0;
    let mut tst1 = 0.0_f64;
    let mut rotations = vec![(0.0, 0.0); if v.is_some() { n } else { 0 }];
    for l in 0..n {
        tst1 = tst1.max(d[l].abs() + e[l].abs());
        let mut m = l;
        while m < n - 1 && e[m].abs() > eps * tst1 {
            m += 1;
        }
        if m > l {
            let mut iter = 0;
            loop {
                iter += 1;
                if iter > max_iters {
                    return Err(LinalgError::Factorization(
                        "symmetric tridiagonal QL",
                        format!("no convergence for eigenvalue {l} after {max_iters} sweeps"),
                    ));
                }
                // the Wilkinson shift from the leading 2 × 2 block
                let g = d[l];
                let p = (d[l + 1] - g) / (2.0 * e[l]);
                let mut r = norm2(p, 1.0);
                if p < 0.0 {
                    r = -r;
                }
                d[l] = e[l] / (p + r);
                d[l + 1] = e[l] * (p + r);
                let dl1 = d[l + 1];
                let h = g - d[l];
                for x in &mut d[l + 2..] {
                    *x -= h;
                }
                f += h;
                // the implicit QL sweep from m up to l
                let mut p = d[m];
                let (mut c, mut c2, mut c3) = (1.0, 1.0, 1.0);
                let el1 = e[l + 1];
                let (mut s, mut s2) = (0.0, 0.0);
                for i in (l..m).rev() {
                    c3 = c2;
                    c2 = c;
                    s2 = s;
                    let g = c * e[i];
                    let h = c * p;
                    let r = norm2(p, e[i]);
                    e[i + 1] = s * r;
                    s = e[i] / r;
                    c = p / r;
                    p = c * d[i] - s * g;
                    d[i + 1] = h + s * (c * g + s * d[i]);
                    if let Some(slot) = rotations.get_mut(i - l) {
                        *slot = (c, s);
                    }
                }
                if let Some(v) = v.as_deref_mut() {
                    apply_sweep_dispatch(v, n, l, m, &rotations);
                }
                let p = -s * s2 * c3 * el1 * e[l] / dl1;
                e[l] = s * p;
                d[l] = c * p;
                if e[l].abs() <= eps * tst1 {
                    break;
                }
            }
        }
        d[l] += f;
        e[l] = 0.0;
    }
    d.iter_mut().for_each(|x| *x *= scale);
    Ok(())
}
