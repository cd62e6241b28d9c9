//! Conjugate gradient on symmetric positive (semi)definite linear operators acting on matrices
//! (DESIGN §3.2: each ALS half-step of IMC is a ridge problem solved by CG, warm-started, with
//! capped iterations).
//!
//! The unknown is a matrix (D × k in IMC) treated as a vector under the Frobenius inner product
//! ⟨A, B⟩ = Σ A_ij B_ij. Reductions are sequential in a fixed order, so with a deterministic
//! operator the iterates do not depend on the number of threads.

use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Mat, MatMut, MatRef};

use crate::dense::{self, axpy_unchecked, frob_dot_unchecked};
use crate::error::{check_nonneg, dim_err};
use crate::{LinalgError, Result};

/// A linear operator 𝒜 on matrices of a fixed shape, symmetric positive (semi)definite under the
/// Frobenius inner product for use with [`conjugate_gradient`].
pub trait LinearOperator {
    /// The shape (rows, cols) of the unknown matrix (and of the output).
    fn shape(&self) -> (usize, usize);
    /// Writes 𝒜(x) into `out` (both of shape [`LinearOperator::shape`]; `out` is overwritten).
    fn apply(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>);
}

impl<T: LinearOperator + ?Sized> LinearOperator for &T {
    fn shape(&self) -> (usize, usize) {
        (**self).shape()
    }
    fn apply(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        (**self).apply(x, out)
    }
}

impl<T: LinearOperator + ?Sized> LinearOperator for Box<T> {
    fn shape(&self) -> (usize, usize) {
        (**self).shape()
    }
    fn apply(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        (**self).apply(x, out)
    }
}

/// Adapts a closure `f(x, out)` writing 𝒜(x) into `out` as a [`LinearOperator`].
#[derive(Debug, Clone)]
pub struct FnOperator<F> {
    shape: (usize, usize),
    f: F,
}

impl<F> FnOperator<F>
where
    F: Fn(MatRef<'_, f64>, MatMut<'_, f64>),
{
    /// An operator on `nrows × ncols` matrices.
    pub fn new(nrows: usize, ncols: usize, f: F) -> Self {
        Self {
            shape: (nrows, ncols),
            f,
        }
    }
}

impl<F> LinearOperator for FnOperator<F>
where
    F: Fn(MatRef<'_, f64>, MatMut<'_, f64>),
{
    fn shape(&self) -> (usize, usize) {
        self.shape
    }
    fn apply(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        (self.f)(x, out)
    }
}

/// X ↦ A·X for a dense symmetric n × n matrix `A`, on n × k unknowns.
#[derive(Debug, Clone, Copy)]
pub struct DenseOperator<'a> {
    a: MatRef<'a, f64>,
    k: usize,
}

impl<'a> DenseOperator<'a> {
    /// The operator of the square matrix `a` on unknowns with `k` columns.
    pub fn new(a: MatRef<'a, f64>, k: usize) -> Result<Self> {
        dense::check_square("DenseOperator::new", a)?;
        Ok(Self { a, k })
    }
}

impl LinearOperator for DenseOperator<'_> {
    fn shape(&self) -> (usize, usize) {
        (self.a.nrows(), self.k)
    }
    fn apply(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        faer::linalg::matmul::matmul(out, faer::Accum::Replace, self.a, x, 1.0, dense::par());
    }
}

/// X ↦ L·X·R + σX for symmetric PSD `L` (p × p) and `R` (k × k) and σ ≥ 0: the Hessian of IMC
/// when Ω is every entry, (ΦᵀΦ) S (QᵀQ) + λS (DESIGN §3.2), cost O(p²k + pk²) per product.
#[derive(Debug, Clone, Copy)]
pub struct SylvesterOperator<'a> {
    left: MatRef<'a, f64>,
    right: MatRef<'a, f64>,
    shift: f64,
}

impl<'a> SylvesterOperator<'a> {
    /// Checks that both factors are square and the shift finite.
    pub fn new(left: MatRef<'a, f64>, right: MatRef<'a, f64>, shift: f64) -> Result<Self> {
        dense::check_square("SylvesterOperator::new", left)?;
        dense::check_square("SylvesterOperator::new", right)?;
        if !shift.is_finite() {
            return Err(LinalgError::InvalidParameter {
                name: "shift",
                reason: format!("must be finite, got {shift}"),
            });
        }
        Ok(Self { left, right, shift })
    }
}

impl LinearOperator for SylvesterOperator<'_> {
    fn shape(&self) -> (usize, usize) {
        (self.left.nrows(), self.right.nrows())
    }
    fn apply(&self, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
        let lx = dense::matmul_unchecked(self.left, x);
        faer::linalg::matmul::matmul(
            out.rb_mut(),
            faer::Accum::Replace,
            lx.as_ref(),
            self.right,
            1.0,
            dense::par(),
        );
        if self.shift != 0.0 {
            axpy_unchecked(self.shift, x, out);
        }
    }
}

crate::params! {
    /// Stopping rule of [`conjugate_gradient`]. Start from [`CgParams::default`] and the `with_*`
    /// methods; [`CgParams::check`] validates them into the [`ValidCgParams`] that
    /// [`conjugate_gradient`] and [`preconditioned_conjugate_gradient`] take.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct CgParams => ValidCgParams {
        /// Stop when ‖b − 𝒜x‖_F ≤ tol·‖b‖_F. Default 1e-6.
        pub tol: f64 = 1e-6 => with_tol,
        /// Iteration cap (hitting it is reported, not an error). Default 100.
        pub max_iter: usize = 100 => with_max_iter,
    }
    /// Checks that `tol` is finite and non-negative.
    check |this| -> crate::LinalgError {
        check_nonneg("tol", this.tol)?;
    }
}

/// What a [`conjugate_gradient`] run did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CgReport {
    /// Iterations performed (operator applications, not counting the initial residual).
    pub iterations: usize,
    /// Final relative residual ‖b − 𝒜x‖_F / ‖b‖_F (the recursively updated residual).
    pub relative_residual: f64,
    /// Whether `relative_residual ≤ tol` was reached within `max_iter`.
    pub converged: bool,
}

/// Solves 𝒜(X) = B by conjugate gradient for a symmetric positive definite `op`, starting from
/// the warm start in `x`, which is overwritten with the solution.
///
/// Hitting `max_iter` is not an error (see [`CgReport::converged`]). Errors: shape mismatch,
/// non-finite `b` or `x` ([`LinalgError::NonFinite`]), a non-positive curvature ⟨p, 𝒜p⟩
/// ([`LinalgError::NotPositiveDefinite`]) and NaN / Inf produced during the iteration
/// ([`LinalgError::NumericalBreakdown`]; `x` then holds the last finite iterate). If `b = 0`
/// the solution is `x = 0`.
pub fn conjugate_gradient(
    op: &impl LinearOperator,
    b: MatRef<'_, f64>,
    x: MatMut<'_, f64>,
    params: &ValidCgParams,
) -> Result<CgReport> {
    preconditioned_conjugate_gradient(op, None, b, x, params)
}

/// [`conjugate_gradient`] with a symmetric positive definite preconditioner 𝓜 ≈ 𝒜⁻¹ (`precond`
/// applies 𝓜; `None` is plain CG). The stopping rule is unchanged: the true relative residual
/// ‖b − 𝒜x‖_F / ‖b‖_F ≤ `tol`, so a preconditioner changes how many iterations are needed, not
/// what "solved" means. One application of `precond` per iteration.
pub fn preconditioned_conjugate_gradient(
    op: &impl LinearOperator,
    precond: Option<&dyn LinearOperator>,
    b: MatRef<'_, f64>,
    mut x: MatMut<'_, f64>,
    params: &ValidCgParams,
) -> Result<CgReport> {
    if let Some(m) = precond
        && m.shape() != op.shape()
    {
        let (r, c) = m.shape();
        return Err(dim_err(
            "conjugate_gradient",
            format!(
                "a preconditioner of shape {} x {}",
                op.shape().0,
                op.shape().1
            ),
            format!("{r} x {c}"),
        ));
    }
    let shape = op.shape();
    for (what, s) in [("b", b.shape()), ("x", (x.nrows(), x.ncols()))] {
        if s != shape {
            return Err(dim_err(
                "conjugate_gradient",
                format!("{what} of shape {} x {}", shape.0, shape.1),
                format!("{} x {}", s.0, s.1),
            ));
        }
    }
    dense::check_finite(b)?;
    dense::check_finite(x.rb())?;
    let b_norm = b.norm_l2();
    if b_norm == 0.0 {
        x.fill(0.0);
        return Ok(CgReport {
            iterations: 0,
            relative_residual: 0.0,
            converged: true,
        });
    }
    let breakdown = |iteration| LinalgError::NumericalBreakdown {
        method: "conjugate_gradient",
        iteration,
    };
    // r = b − 𝒜x
    let mut r = Mat::<f64>::zeros(shape.0, shape.1);
    op.apply(x.rb(), r.as_mut());
    faer::zip!(r.as_mut(), b).for_each(|faer::unzip!(r, b)| *r = *b - *r);
    let rr = frob_dot_unchecked(r.as_ref(), r.as_ref());
    if !rr.is_finite() {
        return Err(breakdown(0));
    }
    let mut rel = rr.sqrt() / b_norm;
    if rel <= params.tol {
        return Ok(CgReport {
            iterations: 0,
            relative_residual: rel,
            converged: true,
        });
    }
    // z = 𝓜r (z = r without a preconditioner); rs = ⟨r, z⟩
    let mut z = Mat::<f64>::zeros(shape.0, shape.1);
    let precondition = |r: MatRef<'_, f64>, z: MatMut<'_, f64>| match precond {
        Some(m) => m.apply(r, z),
        None => {
            let mut z = z;
            z.copy_from(r);
        }
    };
    precondition(r.as_ref(), z.as_mut());
    let mut rs = frob_dot_unchecked(r.as_ref(), z.as_ref());
    if !rs.is_finite() {
        return Err(breakdown(0));
    }
    let mut p = z.clone();
    let mut ap = Mat::<f64>::zeros(shape.0, shape.1);
    for it in 1..=params.max_iter {
        op.apply(p.as_ref(), ap.as_mut());
        let pap = frob_dot_unchecked(p.as_ref(), ap.as_ref());
        if !pap.is_finite() {
            return Err(breakdown(it));
        }
        if pap <= 0.0 {
            return Err(LinalgError::NotPositiveDefinite {
                op: "conjugate_gradient",
                index: it,
            });
        }
        let alpha = rs / pap;
        axpy_unchecked(alpha, p.as_ref(), x.rb_mut());
        axpy_unchecked(-alpha, ap.as_ref(), r.as_mut());
        let rr = frob_dot_unchecked(r.as_ref(), r.as_ref());
        if !rr.is_finite() {
            return Err(breakdown(it));
        }
        rel = rr.sqrt() / b_norm;
        if rel <= params.tol {
            return Ok(CgReport {
                iterations: it,
                relative_residual: rel,
                converged: true,
            });
        }
        precondition(r.as_ref(), z.as_mut());
        let rs_new = frob_dot_unchecked(r.as_ref(), z.as_ref());
        if !rs_new.is_finite() {
            return Err(breakdown(it));
        }
        let beta = rs_new / rs;
        faer::zip!(p.as_mut(), z.as_ref()).for_each(|faer::unzip!(p, z)| *p = *z + beta * *p);
        rs = rs_new;
    }
    Ok(CgReport {
        iterations: params.max_iter,
        relative_residual: rel,
        converged: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{gaussian_mat, seeded};

    fn spd(n: usize, seed: u64) -> Mat<f64> {
        let g = gaussian_mat(&mut seeded(seed), n, n, 1.0);
        let mut a = g.transpose() * &g;
        dense::add_to_diagonal(a.as_mut(), n as f64 * 0.1).unwrap();
        a
    }

    #[test]
    fn check_refuses_each_bad_field() {
        let p = CgParams::default()
            .with_tol(1e-8)
            .with_max_iter(7)
            .check()
            .unwrap();
        assert_eq!((p.tol, p.max_iter), (1e-8, 7));
        assert_eq!(*ValidCgParams::default(), CgParams::default());
        for tol in [-1e-3, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                CgParams::default().with_tol(tol).check(),
                Err(LinalgError::InvalidParameter { name: "tol", .. })
            ));
        }
        // every iteration cap is valid, 0 included (CG then reports the start)
        assert!(CgParams::default().with_max_iter(0).check().is_ok());
    }

    #[test]
    fn solves_dense_spd_system() {
        let a = spd(20, 1);
        let b = gaussian_mat(&mut seeded(2), 20, 3, 1.0);
        let op = DenseOperator::new(a.as_ref(), 3).unwrap();
        let mut x = Mat::<f64>::zeros(20, 3);
        let params = CgParams::default()
            .with_tol(1e-10)
            .with_max_iter(200)
            .check()
            .unwrap();
        let rep = conjugate_gradient(&op, b.as_ref(), x.as_mut(), &params).unwrap();
        assert!(rep.converged, "{rep:?}");
        let res = (&a * &x - &b).norm_l2() / b.norm_l2();
        assert!(res < 1e-9, "true residual {res}");
        // warm start at the solution converges immediately
        let rep2 = conjugate_gradient(&op, b.as_ref(), x.as_mut(), &params).unwrap();
        assert!(rep2.iterations <= 1);
    }

    #[test]
    fn a_good_preconditioner_cuts_iterations_and_keeps_the_solution() {
        // badly scaled SPD system: D A D with D spanning four orders of magnitude
        let n = 40;
        let base = spd(n, 5);
        let scale: Vec<f64> = (0..n)
            .map(|i| 10f64.powf(4.0 * i as f64 / n as f64))
            .collect();
        let a = Mat::from_fn(n, n, |i, j| scale[i] * base[(i, j)] * scale[j]);
        let b = gaussian_mat(&mut seeded(6), n, 2, 1.0);
        let op = DenseOperator::new(a.as_ref(), 2).unwrap();
        let params = CgParams::default()
            .with_tol(1e-10)
            .with_max_iter(2000)
            .check()
            .unwrap();
        let mut x_plain = Mat::<f64>::zeros(n, 2);
        let plain = conjugate_gradient(&op, b.as_ref(), x_plain.as_mut(), &params).unwrap();
        // Jacobi preconditioner 𝓜 = diag(A)⁻¹
        let jacobi = Mat::from_fn(n, n, |i, j| if i == j { 1.0 / a[(i, i)] } else { 0.0 });
        let m = DenseOperator::new(jacobi.as_ref(), 2).unwrap();
        let mut x = Mat::<f64>::zeros(n, 2);
        let pre = preconditioned_conjugate_gradient(&op, Some(&m), b.as_ref(), x.as_mut(), &params)
            .unwrap();
        assert!(pre.converged, "{pre:?}");
        assert!(
            pre.iterations * 2 < plain.iterations,
            "preconditioned {} vs plain {} iterations",
            pre.iterations,
            plain.iterations
        );
        let res = (&a * &x - &b).norm_l2() / b.norm_l2();
        assert!(res < 1e-9, "true residual {res}");
        // the exact inverse solves in one step
        let inv =
            crate::solve::cholesky_solve(a.as_ref(), Mat::<f64>::identity(n, n).as_ref()).unwrap();
        let m = DenseOperator::new(inv.as_ref(), 2).unwrap();
        let mut x = Mat::<f64>::zeros(n, 2);
        let exact =
            preconditioned_conjugate_gradient(&op, Some(&m), b.as_ref(), x.as_mut(), &params)
                .unwrap();
        assert!(exact.iterations <= 2, "{exact:?}");
        // a preconditioner of the wrong shape is a dimension error
        let small = DenseOperator::new(inv.as_ref(), 1).unwrap();
        assert!(
            preconditioned_conjugate_gradient(&op, Some(&small), b.as_ref(), x.as_mut(), &params)
                .is_err()
        );
    }

    #[test]
    fn max_iter_is_reported_not_error_and_errors_are_typed() {
        let a = spd(30, 3);
        let b = gaussian_mat(&mut seeded(4), 30, 1, 1.0);
        let op = DenseOperator::new(a.as_ref(), 1).unwrap();
        let mut x = Mat::<f64>::zeros(30, 1);
        let rep = conjugate_gradient(
            &op,
            b.as_ref(),
            x.as_mut(),
            &CgParams::default()
                .with_tol(1e-14)
                .with_max_iter(2)
                .check()
                .unwrap(),
        )
        .unwrap();
        assert!(!rep.converged);
        assert_eq!(rep.iterations, 2);
        // negative definite operator
        let neg = FnOperator::new(3, 1, |x: MatRef<'_, f64>, mut out: MatMut<'_, f64>| {
            out.copy_from(x);
            out *= faer::Scale(-1.0);
        });
        let bb = Mat::<f64>::from_fn(3, 1, |i, _| i as f64 + 1.0);
        let mut xx = Mat::<f64>::zeros(3, 1);
        assert!(matches!(
            conjugate_gradient(&neg, bb.as_ref(), xx.as_mut(), &ValidCgParams::default()),
            Err(LinalgError::NotPositiveDefinite { .. })
        ));
        // NaN-producing operator
        let nan = FnOperator::new(3, 1, |_x: MatRef<'_, f64>, mut out: MatMut<'_, f64>| {
            out.fill(f64::NAN);
        });
        assert!(matches!(
            conjugate_gradient(&nan, bb.as_ref(), xx.as_mut(), &ValidCgParams::default()),
            Err(LinalgError::NumericalBreakdown { .. })
        ));
        // shape mismatch
        let mut wrong = Mat::<f64>::zeros(3, 2);
        assert!(matches!(
            conjugate_gradient(&neg, bb.as_ref(), wrong.as_mut(), &ValidCgParams::default()),
            Err(LinalgError::DimensionMismatch { .. })
        ));
        // zero right-hand side gives zero
        let mut x0 = Mat::<f64>::full(3, 1, 5.0);
        let rep = conjugate_gradient(
            &neg,
            Mat::<f64>::zeros(3, 1).as_ref(),
            x0.as_mut(),
            &ValidCgParams::default(),
        )
        .unwrap();
        assert!(rep.converged && x0.norm_l2() == 0.0);
    }
}
