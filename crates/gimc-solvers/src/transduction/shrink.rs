//! Singular value shrinkage S_t(A): from the eigendecomposition of the small Gram matrix
//! ([`ShrinkSvd::Auto`](super::ShrinkSvd::Auto) up to [`GRAM_LIMIT`]), the partial or the thin
//! SVD, with the sequential dense kernels it needs.

use gimc_linalg::faer::linalg::matmul::matmul;
use gimc_linalg::faer::{Accum, Mat, MatRef, Par};
use gimc_linalg::svd::Svd;
use gimc_linalg::{LinalgError, dense, sym_eig};

use crate::SolverError;

/// Largest min(m, n) for which [`ShrinkSvd::Auto`] uses the Gram-matrix eigendecomposition.
///
/// [`ShrinkSvd::Auto`]: super::ShrinkSvd::Auto
pub const GRAM_LIMIT: usize = 512;

/// The largest singular value of a (small) dense matrix.
pub(super) fn largest_singular_value(a: MatRef<'_, f64>) -> Result<f64, LinalgError> {
    if a.nrows() == 0 || a.ncols() == 0 {
        return Ok(0.0);
    }
    let g = if a.nrows() <= a.ncols() {
        a * a.transpose()
    } else {
        a.transpose() * a
    };
    let (vals, _) = sym_eig(g.as_ref())?;
    Ok(vals.last().copied().unwrap_or(0.0).max(0.0).sqrt())
}

/// Eigenvalues (ascending) and, with `vectors`, eigenvectors of the symmetric `g` on the
/// calling thread ([`gimc_linalg::eig::sym_eig_seq`]), as a solver error.
pub(super) fn sym_evd_seq(
    g: MatRef<'_, f64>,
    vectors: bool,
) -> Result<(Vec<f64>, Mat<f64>), SolverError> {
    Ok(gimc_linalg::eig::sym_eig_seq(g, vectors)?)
}

/// ‖A‖_* as Σ √λ_i over the eigenvalues (values only) of the smaller Gram matrix: a third of
/// the cost of the singular values of A. A singular value far below √ε σ_1 comes out with an
/// absolute error of about √ε σ_1 (λ_i's error is ε σ_1²), so the sum carries at most
/// min(m, n) such errors; FPC uses it only to price its secant-start candidates.
pub(super) fn nuclear_norm_gram(a: MatRef<'_, f64>) -> Result<f64, SolverError> {
    if a.nrows() == 0 || a.ncols() == 0 {
        return Ok(0.0);
    }
    let (vals, _) = sym_evd_seq(gram_seq(a).as_ref(), false)?;
    Ok(vals.iter().map(|v| v.max(0.0).sqrt()).sum())
}

/// The symmetric product A Aᵀ (m ≤ n) or Aᵀ A, one triangle by a sequential GEMM, mirrored.
fn gram_seq(a: MatRef<'_, f64>) -> Mat<f64> {
    // AᵀA of the (tall) operand
    let tall = if a.nrows() <= a.ncols() {
        a.transpose()
    } else {
        a
    };
    gimc_linalg::dense::gram_tn_with(tall, Par::Seq)
}

/// The result of one shrinkage: Z = U diag(s) Vᵀ = S_t(A), with σ the kept singular values of A
/// (s = σ − t). V is absent when Z was formed as U diag(1 − t/σ) Uᵀ A.
pub(super) struct Shrunk {
    pub(super) z: Mat<f64>,
    pub(super) u: Mat<f64>,
    pub(super) s: Vec<f64>,
    pub(super) sigma: Vec<f64>,
    pub(super) v: Option<Mat<f64>>,
}

impl Shrunk {
    pub(super) fn from_svd(svd: Svd, thresh: f64) -> Self {
        let us = svd.u_scaled();
        let mut z = Mat::<f64>::zeros(svd.u.nrows(), svd.v.nrows());
        if !svd.s.is_empty() {
            matmul(
                z.as_mut(),
                Accum::Replace,
                us.as_ref(),
                svd.v.transpose(),
                1.0,
                Par::Seq,
            );
        }
        let sigma = svd.s.iter().map(|s| s + thresh).collect();
        Self {
            z,
            u: svd.u,
            s: svd.s,
            sigma,
            v: Some(svd.v),
        }
    }

    /// Vᵀc for the n-vector c (with V = Aᵀ U diag(1/σ) when V was not formed).
    pub(super) fn vt_times(&self, a: MatRef<'_, f64>, c: &[f64]) -> Vec<f64> {
        match &self.v {
            Some(v) => (0..v.ncols())
                .map(|k| (0..c.len()).map(|j| v[(j, k)] * c[j]).sum())
                .collect(),
            None => {
                let mut ac = vec![0.0; a.nrows()];
                for (j, &cj) in c.iter().enumerate() {
                    add_scaled_col(&mut ac, a, j, cj);
                }
                self.vt_times_from_ac(&ac)
            }
        }
    }

    /// Vᵀc = diag(1/σ) Uᵀ (A c) when V was not formed, from A c.
    pub(super) fn vt_times_from_ac(&self, ac: &[f64]) -> Vec<f64> {
        (0..self.u.ncols())
            .map(|k| (0..ac.len()).map(|i| self.u[(i, k)] * ac[i]).sum::<f64>() / self.sigma[k])
            .collect()
    }
}

/// acc += c · (column j of A): one term of A c, summed over j in order by the callers.
#[inline]
pub(super) fn add_scaled_col(acc: &mut [f64], a: MatRef<'_, f64>, j: usize, c: f64) {
    let col = a.col(j);
    if let Some(col) = col.try_as_col_major() {
        for (v, &x) in acc.iter_mut().zip(col.as_slice()) {
            *v += x * c;
        }
    } else {
        for (i, v) in acc.iter_mut().enumerate() {
            *v += col[i] * c;
        }
    }
}

/// Singular value shrinkage S_t(A) from the eigendecomposition of the smaller Gram matrix.
/// For m ≤ n: A Aᵀ = U Λ Uᵀ, σ = √λ; with k triplets above t, Z = U diag(σ − t) Vᵀ where
/// V = Aᵀ U diag(1/σ), formed as (AᵀU) products (2mnk) when k < m/2 and as the projector
/// product (U diag(1 − t/σ) Uᵀ) A (m²n) otherwise. For m > n the roles swap (AᵀA, U = AV/σ).
///
/// `buffer`, when it is m × n, receives Z (its contents are overwritten, never read): the
/// iterative solvers hand back the iterate Z replaces, so a step allocates and zero-fills no
/// m × n array.
pub(super) fn gram_shrink(
    a: MatRef<'_, f64>,
    thresh: f64,
    buffer: Option<Mat<f64>>,
) -> Result<Shrunk, SolverError> {
    let (m, n) = a.shape();
    let wide = m <= n;
    let small = m.min(n);
    // one triangle of the symmetric Gram matrix, mirrored
    let g = gram_seq(a);
    let (vals, vecs) = sym_evd_seq(g.as_ref(), true)?;
    // eigenvalues ascending: walk from the top
    let keep: Vec<(usize, f64)> = (0..vals.len())
        .rev()
        .map(|i| (i, vals[i].max(0.0).sqrt()))
        .take_while(|&(_, s)| s > thresh)
        .collect();
    let k = keep.len();
    let basis = Mat::from_fn(small, k, |r, c| vecs[(r, keep[c].0)]);
    let sigma: Vec<f64> = keep.iter().map(|&(_, s)| s).collect();
    let s: Vec<f64> = sigma.iter().map(|s| s - thresh).collect();
    if wide && 2 * k >= m && k > 0 {
        // Z = P A with P = U diag(1 − t/σ) Uᵀ
        // both are GEMM left operands: zero padding (see `dense::zeros_padded`)
        let uw = dense::padded_from_fn(m, k, |r, c| basis[(r, c)] * s[c] / sigma[c]);
        let mut p = dense::zeros_padded(m, m);
        matmul(
            p.as_mut(),
            Accum::Replace,
            uw.as_ref(),
            basis.transpose(),
            1.0,
            Par::Seq,
        );
        let mut z = match buffer {
            Some(b) if b.shape() == (m, n) => b,
            _ => Mat::<f64>::zeros(m, n),
        };
        matmul(z.as_mut(), Accum::Replace, p.as_ref(), a, 1.0, Par::Seq);
        return Ok(Shrunk {
            z,
            u: basis,
            s,
            sigma,
            v: None,
        });
    }
    let mut other = Mat::<f64>::zeros(if wide { n } else { m }, k);
    if k > 0 {
        if wide {
            matmul(
                other.as_mut(),
                Accum::Replace,
                a.transpose(),
                basis.as_ref(),
                1.0,
                Par::Seq,
            );
        } else {
            matmul(
                other.as_mut(),
                Accum::Replace,
                a,
                basis.as_ref(),
                1.0,
                Par::Seq,
            );
        }
    }
    for (c, &sg) in sigma.iter().enumerate() {
        let inv = 1.0 / sg;
        for r in 0..other.nrows() {
            other[(r, c)] *= inv;
        }
    }
    let svd = if wide {
        Svd {
            u: basis,
            s,
            v: other,
        }
    } else {
        Svd {
            u: other,
            s,
            v: basis,
        }
    };
    Ok(Shrunk::from_svd(svd, thresh))
}
