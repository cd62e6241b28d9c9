//! Thin and truncated SVD, singular-value shrinkage (DESIGN §3.2 nuclear-norm solvers, §3.3
//! top-k singular vectors for clustering, §3.5 FPC).
//!
//! [`top_k_svd`] / [`top_k_svd_op`] use the randomized range finder (Halko, Martinsson & Tropp
//! 2011): Y = AΩ for a Gaussian Ω with k + p columns, q power iterations
//! Q ← orth(A orth(AᵀQ)) with re-orthonormalisation after every product, then the thin SVD of the
//! small (k + p) × n matrix QᵀA. Its error decays like (σ_{k+p+1}/σ_k)^{2q+1}. When k + p
//! reaches min(m, n) the dense path falls back to the exact thin SVD. The operator form needs
//! only products with A and Aᵀ, so sparse-plus-low-rank iterates never get formed.

use faer::{Mat, MatRef};

use crate::dense::{self, check_finite, orthonormalize};
use crate::error::dim_err;
use crate::observed::{Observed, omega_mul_dense, omega_tr_mul_dense};
use crate::rng::{GimcRng, gaussian_mat};
use crate::{FeatureMatrix, LinalgError, Result};

/// A (thin or truncated) singular value decomposition A ≈ U diag(s) Vᵀ with `s` descending,
/// `u` m × r and `v` n × r with orthonormal columns.
#[derive(Debug, Clone, PartialEq)]
pub struct Svd {
    /// Left singular vectors (m × r).
    pub u: Mat<f64>,
    /// Singular values, non-negative and non-increasing (length r).
    pub s: Vec<f64>,
    /// Right singular vectors (n × r).
    pub v: Mat<f64>,
}

impl Svd {
    /// Number of singular triplets kept.
    pub fn rank(&self) -> usize {
        self.s.len()
    }

    /// U diag(s) Vᵀ (m × n).
    pub fn reconstruct(&self) -> Mat<f64> {
        let us = self.u_scaled();
        dense::matmul_unchecked(us.as_ref(), self.v.transpose())
    }

    /// U diag(s) (m × r).
    pub fn u_scaled(&self) -> Mat<f64> {
        // usually the left operand of U·S·Vᵀ: zero padding (see `dense::zeros_padded`)
        crate::dense::padded_from_fn(self.u.nrows(), self.s.len(), |i, j| {
            self.u[(i, j)] * self.s[j]
        })
    }

    /// Keeps the leading `k` triplets (all of them if `k ≥ rank`).
    pub fn truncate(mut self, k: usize) -> Svd {
        let k = k.min(self.s.len());
        self.s.truncate(k);
        let (m, n) = (self.u.nrows(), self.v.nrows());
        self.u.truncate(m, k);
        self.v.truncate(n, k);
        self
    }
}

/// Products with a matrix A (m × n) and its transpose, applied to dense blocks.
pub trait MatrixOperator {
    /// m.
    fn nrows(&self) -> usize;
    /// n.
    fn ncols(&self) -> usize;
    /// A·X for X of shape n × k.
    fn apply(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>>;
    /// Aᵀ·X for X of shape m × k.
    fn apply_t(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>>;
}

impl<T: MatrixOperator + ?Sized> MatrixOperator for &T {
    fn nrows(&self) -> usize {
        (**self).nrows()
    }
    fn ncols(&self) -> usize {
        (**self).ncols()
    }
    fn apply(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        (**self).apply(x)
    }
    fn apply_t(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        (**self).apply_t(x)
    }
}

impl MatrixOperator for MatRef<'_, f64> {
    fn nrows(&self) -> usize {
        MatRef::nrows(self)
    }
    fn ncols(&self) -> usize {
        MatRef::ncols(self)
    }
    fn apply(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        dense::matmul(*self, x)
    }
    fn apply_t(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        dense::matmul_tn(*self, x)
    }
}

impl MatrixOperator for Mat<f64> {
    fn nrows(&self) -> usize {
        Mat::nrows(self)
    }
    fn ncols(&self) -> usize {
        Mat::ncols(self)
    }
    fn apply(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        dense::matmul(self.as_ref(), x)
    }
    fn apply_t(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        dense::matmul_tn(self.as_ref(), x)
    }
}

impl MatrixOperator for FeatureMatrix {
    fn nrows(&self) -> usize {
        FeatureMatrix::nrows(self)
    }
    fn ncols(&self) -> usize {
        FeatureMatrix::ncols(self)
    }
    fn apply(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        self.mul_dense(x)
    }
    fn apply_t(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        self.tr_mul_dense(x)
    }
}

/// A = S + L Rᵀ: a sparse matrix S with values `vals` (CSR order) on Ω plus a low-rank term with
/// factors `left` (m × r) and `right` (n × r). The iterate Z − τ∇ of nuclear-norm MC (DESIGN
/// §3.2) has this form; products cost O(|Ω|·k + (m + n)·r·k).
#[derive(Debug, Clone, Copy)]
pub struct SparsePlusLowRank<'a> {
    omega: &'a Observed,
    vals: &'a [f64],
    left: MatRef<'a, f64>,
    right: MatRef<'a, f64>,
}

impl<'a> SparsePlusLowRank<'a> {
    /// Checks that `vals` has one value per entry of Ω and that the factors fit Ω's shape.
    pub fn new(
        omega: &'a Observed,
        vals: &'a [f64],
        left: MatRef<'a, f64>,
        right: MatRef<'a, f64>,
    ) -> Result<Self> {
        omega.check_len("SparsePlusLowRank::new", vals.len())?;
        if left.nrows() != omega.nrows()
            || right.nrows() != omega.ncols()
            || left.ncols() != right.ncols()
        {
            return Err(dim_err(
                "SparsePlusLowRank::new",
                format!("factors {} x r and {} x r", omega.nrows(), omega.ncols()),
                format!(
                    "{} x {} and {} x {}",
                    left.nrows(),
                    left.ncols(),
                    right.nrows(),
                    right.ncols()
                ),
            ));
        }
        Ok(Self {
            omega,
            vals,
            left,
            right,
        })
    }
}

impl MatrixOperator for SparsePlusLowRank<'_> {
    fn nrows(&self) -> usize {
        self.omega.nrows()
    }
    fn ncols(&self) -> usize {
        self.omega.ncols()
    }
    fn apply(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        let mut out = omega_mul_dense(self.omega, self.vals, x)?;
        let rtx = dense::matmul_tn(self.right, x)?;
        faer::linalg::matmul::matmul(
            out.as_mut(),
            faer::Accum::Add,
            self.left,
            rtx.as_ref(),
            1.0,
            dense::par(),
        );
        Ok(out)
    }
    fn apply_t(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        let mut out = omega_tr_mul_dense(self.omega, self.vals, x)?;
        let ltx = dense::matmul_tn(self.left, x)?;
        faer::linalg::matmul::matmul(
            out.as_mut(),
            faer::Accum::Add,
            self.right,
            ltx.as_ref(),
            1.0,
            dense::par(),
        );
        Ok(out)
    }
}

crate::params! {
    /// Parameters of the randomized truncated SVD. Start from [`RsvdParams::default`] and the
    /// `with_*` methods; [`RsvdParams::check`] validates them into the [`ValidRsvdParams`] that
    /// [`top_k_svd_with`] and [`top_k_svd_op_with`] take.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct RsvdParams => ValidRsvdParams {
        /// Extra columns p of the sketch beyond k. Default 10.
        pub oversampling: usize = 10 => with_oversampling,
        /// Power iterations q. Default 4.
        pub power_iters: usize = 4 => with_power_iters,
    }
    /// Validates the parameters. Every value is accepted (p = 0 and q = 0 are the plain range
    /// finder; the sketch width k + p is capped at min(m, n) by the functions, and k is checked
    /// against the matrix there); the `Result` keeps a future constraint from being a breaking
    /// change.
    check |_this| -> LinalgError {}
}

fn svd_err(e: faer::linalg::solvers::SvdError) -> LinalgError {
    LinalgError::Factorization("svd", format!("{e:?}"))
}

/// The thin SVD of `a` (m × n): r = min(m, n) triplets, descending. NaN / Inf are rejected.
///
/// faer's SVD, split into tasks by the size alone ([`dense::factor_par`]), so the bits are the
/// same on every machine.
pub fn thin_svd(a: MatRef<'_, f64>) -> Result<Svd> {
    check_finite(a)?;
    let (m, n) = a.shape();
    if m == 0 || n == 0 {
        return Ok(Svd {
            u: Mat::zeros(m, 0),
            s: Vec::new(),
            v: Mat::zeros(n, 0),
        });
    }
    let r = m.min(n);
    let mut u = Mat::<f64>::zeros(m, r);
    let mut v = Mat::<f64>::zeros(n, r);
    let s = svd_fixed_split(a, Some((u.as_mut(), v.as_mut())))?;
    Ok(Svd { u, s, v })
}

/// The min(m, n) singular values of `a` (m × n), descending, split as [`thin_svd`]. NaN / Inf
/// are rejected.
pub fn singular_values(a: MatRef<'_, f64>) -> Result<Vec<f64>> {
    check_finite(a)?;
    if a.nrows() == 0 || a.ncols() == 0 {
        return Ok(Vec::new());
    }
    svd_fixed_split(a, None)
}

/// faer's SVD of a non-empty `a` with [`dense::factor_par`]: the singular values, and the thin
/// U and V written into `vectors` when given.
fn svd_fixed_split(
    a: MatRef<'_, f64>,
    vectors: Option<(faer::MatMut<'_, f64>, faer::MatMut<'_, f64>)>,
) -> Result<Vec<f64>> {
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::linalg::svd::{ComputeSvdVectors, svd, svd_scratch};
    let (m, n) = a.shape();
    let compute = if vectors.is_some() {
        ComputeSvdVectors::Thin
    } else {
        ComputeSvdVectors::No
    };
    let mut s = faer::diag::Diag::<f64>::zeros(m.min(n));
    let par = dense::factor_par(m.min(n));
    let mut buf = MemBuffer::new(svd_scratch::<f64>(
        m,
        n,
        compute,
        compute,
        par,
        Default::default(),
    ));
    let (u, v) = match vectors {
        Some((u, v)) => (Some(u), Some(v)),
        None => (None, None),
    };
    svd(
        a,
        s.as_mut(),
        u,
        v,
        par,
        MemStack::new(&mut buf),
        Default::default(),
    )
    .map_err(svd_err)?;
    Ok(s.column_vector().iter().copied().collect())
}

fn check_k(k: usize, m: usize, n: usize) -> Result<()> {
    if k == 0 || k > m.min(n) {
        return Err(LinalgError::InvalidParameter {
            name: "k",
            reason: format!(
                "must be in 1..={} for a {m} x {n} matrix, got {k}",
                m.min(n)
            ),
        });
    }
    Ok(())
}

/// The leading `k` singular triplets of a dense `a`, by the randomized range finder with the
/// default [`RsvdParams`]; exact thin SVD when k + p ≥ min(m, n).
pub fn top_k_svd(a: MatRef<'_, f64>, k: usize, rng: &mut GimcRng) -> Result<Svd> {
    top_k_svd_with(a, k, &ValidRsvdParams::default(), rng)
}

/// [`top_k_svd`] with explicit parameters.
pub fn top_k_svd_with(
    a: MatRef<'_, f64>,
    k: usize,
    params: &ValidRsvdParams,
    rng: &mut GimcRng,
) -> Result<Svd> {
    let (m, n) = a.shape();
    check_k(k, m, n)?;
    check_finite(a)?;
    if k.saturating_add(params.oversampling) >= m.min(n) {
        return Ok(thin_svd(a)?.truncate(k));
    }
    top_k_svd_op_with(&a, k, params, rng)
}

/// The leading `k` singular triplets of the matrix behind `op` (m × n), using only products with
/// A and Aᵀ (default [`RsvdParams`]).
pub fn top_k_svd_op(op: &impl MatrixOperator, k: usize, rng: &mut GimcRng) -> Result<Svd> {
    top_k_svd_op_with(op, k, &ValidRsvdParams::default(), rng)
}

/// [`top_k_svd_op`] with explicit parameters. The sketch width k + p is capped at min(m, n).
pub fn top_k_svd_op_with(
    op: &impl MatrixOperator,
    k: usize,
    params: &ValidRsvdParams,
    rng: &mut GimcRng,
) -> Result<Svd> {
    let (m, n) = (op.nrows(), op.ncols());
    check_k(k, m, n)?;
    let l = k.saturating_add(params.oversampling).min(m.min(n));
    let omega = gaussian_mat(rng, n, l, 1.0);
    let mut q = orthonormalize(op.apply(omega.as_ref())?.as_ref());
    check_finite(q.as_ref()).map_err(|_| LinalgError::NumericalBreakdown {
        method: "top_k_svd",
        iteration: 0,
    })?;
    for it in 0..params.power_iters {
        let z = orthonormalize(op.apply_t(q.as_ref())?.as_ref());
        q = orthonormalize(op.apply(z.as_ref())?.as_ref());
        check_finite(q.as_ref()).map_err(|_| LinalgError::NumericalBreakdown {
            method: "top_k_svd",
            iteration: it + 1,
        })?;
    }
    // B = QᵀA = (AᵀQ)ᵀ, l × n; B = Ub S Vbᵀ  ⇒  A ≈ (Q Ub) S Vbᵀ
    let bt = op.apply_t(q.as_ref())?;
    let small = thin_svd(bt.transpose())?.truncate(k);
    let u = dense::matmul_unchecked(q.as_ref(), small.u.as_ref());
    Ok(Svd {
        u,
        s: small.s,
        v: small.v,
    })
}

/// Soft-thresholds the singular values: s_i ← max(s_i − t, 0), dropping the triplets that
/// reach 0 (the proximal operator S_t of t‖·‖_*, DESIGN §3.2). `t` must be finite and ≥ 0.
pub fn shrink_singular_values(svd: Svd, t: f64) -> Result<Svd> {
    if !(t.is_finite() && t >= 0.0) {
        return Err(LinalgError::InvalidParameter {
            name: "t",
            reason: format!("threshold must be finite and >= 0, got {t}"),
        });
    }
    let keep = svd.s.iter().take_while(|&&s| s > t).count();
    let mut out = svd.truncate(keep);
    for s in &mut out.s {
        *s -= t;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::seeded;

    #[test]
    fn rsvd_params_builders_and_check() {
        // no field has an invalid value: p = 0 / q = 0 are the plain range finder
        let p = RsvdParams::default()
            .with_oversampling(0)
            .with_power_iters(0)
            .check()
            .unwrap();
        assert_eq!((p.oversampling, p.power_iters), (0, 0));
        assert_eq!(
            *ValidRsvdParams::default(),
            RsvdParams::default()
                .with_oversampling(10)
                .with_power_iters(4)
        );
        // a huge oversampling saturates into the exact path instead of overflowing
        let a = gaussian_mat(&mut seeded(2), 9, 6, 1.0);
        let huge = RsvdParams::default()
            .with_oversampling(usize::MAX)
            .check()
            .unwrap();
        let f = top_k_svd_with(a.as_ref(), 2, &huge, &mut seeded(3)).unwrap();
        let e = thin_svd(a.as_ref()).unwrap().truncate(2);
        assert_eq!(f.s, e.s);
        let g = top_k_svd_op_with(&a, 2, &huge, &mut seeded(3)).unwrap();
        assert!((g.s[0] - e.s[0]).abs() < 1e-10 * e.s[0]);
    }

    #[test]
    fn thin_svd_reconstructs_and_is_sorted() {
        let a = gaussian_mat(&mut seeded(1), 7, 4, 1.0);
        let f = thin_svd(a.as_ref()).unwrap();
        assert_eq!(f.rank(), 4);
        assert!(f.s.windows(2).all(|w| w[0] >= w[1]));
        assert!((f.reconstruct() - &a).norm_l2() < 1e-12);
        let wide = thin_svd(a.transpose()).unwrap();
        assert_eq!((wide.u.nrows(), wide.v.nrows()), (4, 7));
        let mut bad = a.clone();
        bad[(1, 1)] = f64::NAN;
        assert!(matches!(
            thin_svd(bad.as_ref()),
            Err(LinalgError::NonFinite { .. })
        ));
    }

    #[test]
    fn shrink_drops_small_values() {
        let a = gaussian_mat(&mut seeded(2), 6, 5, 1.0);
        let f = thin_svd(a.as_ref()).unwrap();
        let t = 0.5 * (f.s[1] + f.s[2]);
        let g = shrink_singular_values(f.clone(), t).unwrap();
        assert_eq!(g.rank(), 2);
        assert!((g.s[0] - (f.s[0] - t)).abs() < 1e-15);
        assert_eq!(shrink_singular_values(f.clone(), 1e9).unwrap().rank(), 0);
        assert!(shrink_singular_values(f, -1.0).is_err());
    }

    #[test]
    fn k_out_of_range_is_an_error() {
        let a = gaussian_mat(&mut seeded(3), 6, 5, 1.0);
        let mut rng = seeded(4);
        assert!(top_k_svd(a.as_ref(), 0, &mut rng).is_err());
        assert!(top_k_svd(a.as_ref(), 6, &mut rng).is_err());
        assert_eq!(top_k_svd(a.as_ref(), 5, &mut rng).unwrap().rank(), 5);
    }
}
