//! Cholesky and ridge solves (DESIGN §3.2 linear toolbox, §3.3 closed-form W-step).
//!
//! The ridge solution W = (XᵀX + λI)⁻¹ XᵀY is computed through the d × d primal system when
//! d ≤ n and through the n × n dual system W = Xᵀ(XXᵀ + λI)⁻¹Y otherwise (the two are equal by
//! the push-through identity), so the factorised matrix is always of order min(n, d).

use std::sync::Arc;

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{cholesky_in_place, cholesky_in_place_scratch};
use faer::linalg::matmul::matmul;
use faer::linalg::solvers::LltError;
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, Conj, Mat, MatMut, MatRef};

use crate::dense::{self, check_finite, check_square, gram_tn, par};
use crate::error::{check_nonneg, dim_err};
use crate::{FeatureMatrix, LinalgError, Result};

/// A Cholesky factorisation A = LLᵀ of a symmetric positive definite matrix, to solve with
/// several right-hand sides, or to extend to a bordered matrix ([`Cholesky::extend`]).
///
/// An extended factor keeps the factor it extends (shared, not copied) with its border:
/// extending a factor of order n₁ by n₂ allocates only the n₁ × n₂ border and the n₂ × n₂
/// corner, and solves go through the parts in turn.
#[derive(Debug, Clone)]
pub struct Cholesky {
    factor: Arc<Factor>,
}

#[derive(Debug)]
enum Factor {
    /// L itself (lower triangle; the upper triangle is zero).
    Whole(Mat<f64>),
    /// The factor of a bordered matrix.
    Bordered(Border),
}

/// L = [L₁₁ 0; Xᵀ L₂₂] for the bordered matrix [A B; Bᵀ C], with L₁₁ the factor of A
/// (`head`), X = L₁₁⁻¹B (`x`, n₁ × n₂) and L₂₂ the factor of the Schur complement C − XᵀX
/// (`corner`).
#[derive(Debug)]
struct Border {
    head: Cholesky,
    x: Mat<f64>,
    corner: Mat<f64>,
}

impl Border {
    /// [y₁; y₂] ← L⁻¹[y₁; y₂]: y₁ ← L₁₁⁻¹y₁, then y₂ ← L₂₂⁻¹(y₂ − Xᵀy₁).
    fn forward(&self, y: MatMut<'_, f64>) {
        let (mut y1, mut y2) = y.split_at_row_mut(self.head.dim());
        self.head.forward(y1.rb_mut());
        sub_product(y2.rb_mut(), self.x.transpose(), y1.rb());
        solve_lower_triangular_in_place(self.corner.as_ref(), y2, par());
    }

    /// [y₁; y₂] ← L⁻ᵀ[y₁; y₂]: y₂ ← L₂₂⁻ᵀy₂, then y₁ ← L₁₁⁻ᵀ(y₁ − Xy₂).
    fn backward(&self, y: MatMut<'_, f64>) {
        let (mut y1, mut y2) = y.split_at_row_mut(self.head.dim());
        solve_upper_triangular_in_place(self.corner.transpose(), y2.rb_mut(), par());
        sub_product(y1.rb_mut(), self.x.as_ref(), y2.rb());
        self.head.backward(y1);
    }
}

impl Cholesky {
    /// Factorises `a`, reading only its lower triangle. A non-positive pivot gives
    /// [`LinalgError::NotPositiveDefinite`] with the pivot index; NaN / Inf are rejected.
    pub fn new(a: MatRef<'_, f64>) -> Result<Self> {
        Ok(Self {
            factor: Arc::new(Factor::Whole(lower_factor(a.to_owned())?)),
        })
    }

    /// Factorises A + shift·I (a ridge system), reading only the lower triangle of `a` and
    /// copying it once.
    pub fn shifted(a: MatRef<'_, f64>, shift: f64) -> Result<Self> {
        check_square("cholesky", a)?;
        let mut l = a.to_owned();
        dense::add_to_diagonal(l.as_mut(), shift)?;
        Ok(Self {
            factor: Arc::new(Factor::Whole(lower_factor(l)?)),
        })
    }

    /// Order of the factorised matrix.
    pub fn dim(&self) -> usize {
        match &*self.factor {
            Factor::Whole(l) => l.nrows(),
            Factor::Bordered(b) => b.head.dim() + b.corner.nrows(),
        }
    }

    /// The lower-triangular factor L, assembled.
    pub fn l(&self) -> Mat<f64> {
        match &*self.factor {
            Factor::Whole(l) => l.clone(),
            Factor::Bordered(b) => {
                let (n1, n2) = (b.head.dim(), b.corner.nrows());
                let mut l = Mat::zeros(n1 + n2, n1 + n2);
                l.as_mut()
                    .submatrix_mut(0, 0, n1, n1)
                    .copy_from(b.head.l().as_ref());
                l.as_mut()
                    .submatrix_mut(n1, 0, n2, n1)
                    .copy_from(b.x.as_ref().transpose());
                l.as_mut()
                    .submatrix_mut(n1, n1, n2, n2)
                    .copy_from(b.corner.as_ref());
                l
            }
        }
    }

    /// Solves A X = B.
    pub fn solve(&self, b: MatRef<'_, f64>) -> Result<Mat<f64>> {
        if b.nrows() != self.dim() {
            return Err(dim_err(
                "cholesky_solve",
                format!("right-hand side with {} rows", self.dim()),
                format!("{} rows", b.nrows()),
            ));
        }
        check_finite(b)?;
        let mut x = b.to_owned();
        match &*self.factor {
            // the forward and backward substitutions of faer's own `Llt::solve`
            Factor::Whole(l) => faer::linalg::cholesky::llt::solve::solve_in_place_with_conj(
                l.as_ref(),
                Conj::No,
                x.as_mut(),
                par(),
                MemStack::new(&mut []),
            ),
            Factor::Bordered(b) => {
                b.forward(x.as_mut());
                b.backward(x.as_mut());
            }
        }
        Ok(x)
    }

    /// Y ← L⁻¹Y.
    fn forward(&self, y: MatMut<'_, f64>) {
        match &*self.factor {
            Factor::Whole(l) => solve_lower_triangular_in_place(l.as_ref(), y, par()),
            Factor::Bordered(b) => b.forward(y),
        }
    }

    /// Y ← L⁻ᵀY.
    fn backward(&self, y: MatMut<'_, f64>) {
        match &*self.factor {
            Factor::Whole(l) => solve_upper_triangular_in_place(l.transpose(), y, par()),
            Factor::Bordered(b) => b.backward(y),
        }
    }

    /// The factor of the bordered matrix [A B; Bᵀ C] from this factor of A (n₁ × n₁), for
    /// `b` n₁ × n₂ and `c` n₂ × n₂ (lower triangle read): with X = L⁻¹B, the factor is
    /// [L 0; Xᵀ L₂₂] where L₂₂L₂₂ᵀ = C − XᵀX, the Schur complement. That costs n₁²n₂ + n₁n₂² +
    /// n₂³/3 instead of (n₁ + n₂)³/3 for factorising the bordered matrix anew, and the new
    /// factor shares this one instead of copying it. A non-positive pivot of the Schur
    /// complement is reported at its index in the bordered matrix.
    pub fn extend(&self, b: MatRef<'_, f64>, c: MatRef<'_, f64>) -> Result<Self> {
        let (n1, n2) = (self.dim(), check_square("cholesky extend", c)?);
        if b.nrows() != n1 || b.ncols() != n2 {
            return Err(dim_err(
                "cholesky extend",
                format!("a border of {n1} x {n2}"),
                format!("{} x {}", b.nrows(), b.ncols()),
            ));
        }
        check_finite(b)?;
        check_finite(c)?;
        let mut x = b.to_owned();
        self.forward(x.as_mut());
        let mut schur = gram_tn(x.as_ref());
        for j in 0..n2 {
            for i in j..n2 {
                schur[(i, j)] = c[(i, j)] - schur[(i, j)];
            }
        }
        let corner = lower_factor(schur).map_err(|e| match e {
            LinalgError::NotPositiveDefinite { index, .. } => LinalgError::NotPositiveDefinite {
                op: "cholesky",
                index: n1 + index,
            },
            e => e,
        })?;
        Ok(Self {
            factor: Arc::new(Factor::Bordered(Border {
                head: self.clone(),
                x,
                corner,
            })),
        })
    }

    /// log det A = 2 Σ log L_ii.
    pub fn log_det(&self) -> f64 {
        match &*self.factor {
            Factor::Whole(l) => diag_log_det(l),
            Factor::Bordered(b) => b.head.log_det() + diag_log_det(&b.corner),
        }
    }
}

/// 2 Σ log L_ii of a triangular factor L.
fn diag_log_det(l: &Mat<f64>) -> f64 {
    (0..l.nrows()).map(|i| 2.0 * l[(i, i)].ln()).sum()
}

/// `dst` ← `dst` − `a`·`b`.
fn sub_product(dst: MatMut<'_, f64>, a: MatRef<'_, f64>, b: MatRef<'_, f64>) {
    matmul(dst, Accum::Add, a, b, -1.0, par());
}

/// The lower-triangular Cholesky factor of `l`, factorised in place (lower triangle read; the
/// factor's upper triangle is zero).
fn lower_factor(mut l: Mat<f64>) -> Result<Mat<f64>> {
    let n = check_square("cholesky", l.as_ref())?;
    check_finite(l.as_ref())?;
    zero_upper(l.as_mut());
    let p = par();
    let mut mem = MemBuffer::new(cholesky_in_place_scratch::<f64>(n, p, Default::default()));
    cholesky_in_place(
        l.as_mut(),
        Default::default(),
        p,
        MemStack::new(&mut mem),
        Default::default(),
    )
    .map_err(|e| match e {
        LltError::NonPositivePivot { index } => LinalgError::NotPositiveDefinite {
            op: "cholesky",
            index,
        },
    })?;
    // the factorisation leaves work in the upper triangle
    zero_upper(l.as_mut());
    Ok(l)
}

/// Sets the strict upper triangle of the square `l` to zero.
fn zero_upper(mut l: MatMut<'_, f64>) {
    for j in 1..l.ncols() {
        l.rb_mut().col_mut(j).subrows_mut(0, j).fill(0.0);
    }
}

/// Solves A X = B for a symmetric positive definite `a` (lower triangle read).
pub fn cholesky_solve(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Result<Mat<f64>> {
    Cholesky::new(a)?.solve(b)
}

fn check_lambda(lambda: f64) -> Result<()> {
    Ok(check_nonneg("lambda", lambda)?)
}

/// Solves (G + λI) W = R for a symmetric PSD Gram matrix `gram` and λ ≥ 0 (λ = 0 needs `gram`
/// positive definite).
pub fn ridge_solve(gram: MatRef<'_, f64>, rhs: MatRef<'_, f64>, lambda: f64) -> Result<Mat<f64>> {
    check_lambda(lambda)?;
    check_square("ridge_solve", gram)?;
    Cholesky::shifted(gram, lambda)?.solve(rhs)
}

/// Ridge regression W = argmin ½‖XW − Y‖² + (λ/2)‖W‖² = (XᵀX + λI)⁻¹XᵀY (d × k).
///
/// When d ≤ n this solves the d × d primal system with XᵀX (one GEMM / sparse Gram, O(nd²));
/// when d > n it solves the n × n dual system W = Xᵀ(XXᵀ + λI)⁻¹Y (O(n²d)), which needs λ > 0
/// unless XXᵀ is positive definite.
pub fn ridge(x: &FeatureMatrix, y: MatRef<'_, f64>, lambda: f64) -> Result<Mat<f64>> {
    check_lambda(lambda)?;
    if y.nrows() != x.nrows() {
        return Err(dim_err(
            "ridge",
            format!("Y with {} rows", x.nrows()),
            format!("{} rows", y.nrows()),
        ));
    }
    check_finite(y)?;
    if x.ncols() <= x.nrows() {
        let xty = x.tr_mul_dense(y)?;
        ridge_solve(x.gram().as_ref(), xty.as_ref(), lambda)
    } else {
        let alpha = ridge_solve(x.outer_gram().as_ref(), y, lambda)?;
        x.tr_mul_dense(alpha.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{gaussian_mat, seeded};

    #[test]
    fn cholesky_solves_and_rejects_indefinite() {
        let g = gaussian_mat(&mut seeded(1), 8, 8, 1.0);
        let mut a = g.transpose() * &g;
        dense::add_to_diagonal(a.as_mut(), 1.0).unwrap();
        let b = gaussian_mat(&mut seeded(2), 8, 2, 1.0);
        let x = cholesky_solve(a.as_ref(), b.as_ref()).unwrap();
        assert!((&a * &x - &b).norm_l2() < 1e-10);
        let c = Cholesky::new(a.as_ref()).unwrap();
        let det = a.determinant();
        assert!((c.log_det() - det.ln()).abs() < 1e-8);
        let mut bad = Mat::<f64>::identity(3, 3);
        bad[(2, 2)] = -1.0;
        assert!(matches!(
            cholesky_solve(bad.as_ref(), Mat::<f64>::zeros(3, 1).as_ref()),
            Err(LinalgError::NotPositiveDefinite { index: 2, .. })
        ));
        assert!(matches!(
            cholesky_solve(a.as_ref(), Mat::<f64>::zeros(3, 1).as_ref()),
            Err(LinalgError::DimensionMismatch { .. })
        ));
        assert!(matches!(
            cholesky_solve(
                Mat::<f64>::zeros(3, 2).as_ref(),
                Mat::<f64>::zeros(3, 1).as_ref()
            ),
            Err(LinalgError::DimensionMismatch { .. })
        ));
    }

    #[test]
    fn shifted_factors_the_ridge_system_and_reads_only_the_lower_triangle() {
        let g = gaussian_mat(&mut seeded(3), 7, 7, 1.0);
        let gram = g.transpose() * &g;
        let mut a = gram.clone();
        dense::add_to_diagonal(a.as_mut(), 0.7).unwrap();
        // garbage above the diagonal is never read
        let mut lower = gram.clone();
        for j in 1..7 {
            for i in 0..j {
                lower[(i, j)] = 1e6;
            }
        }
        let shifted = Cholesky::shifted(lower.as_ref(), 0.7).unwrap();
        assert!((shifted.l() - Cholesky::new(a.as_ref()).unwrap().l()).norm_l2() < 1e-12);
        let b = gaussian_mat(&mut seeded(4), 7, 3, 1.0);
        let x = shifted.solve(b.as_ref()).unwrap();
        assert!((&a * &x - &b).norm_l2() < 1e-10);
        // a shift that leaves a negative pivot, and a non-square matrix, are errors
        assert!(matches!(
            Cholesky::shifted(Mat::<f64>::identity(3, 3).as_ref(), -2.0),
            Err(LinalgError::NotPositiveDefinite { index: 0, .. })
        ));
        assert!(Cholesky::shifted(Mat::<f64>::zeros(3, 2).as_ref(), 1.0).is_err());
    }

    #[test]
    fn extend_gives_the_factor_of_the_bordered_matrix() {
        let g = gaussian_mat(&mut seeded(5), 9, 9, 1.0);
        let mut a = g.transpose() * &g;
        dense::add_to_diagonal(a.as_mut(), 0.5).unwrap();
        let whole = Cholesky::new(a.as_ref()).unwrap();
        let head = Cholesky::new(a.as_ref().submatrix(0, 0, 6, 6)).unwrap();
        let ext = head
            .extend(
                a.as_ref().submatrix(0, 6, 6, 3),
                a.as_ref().submatrix(6, 6, 3, 3),
            )
            .unwrap();
        assert!((ext.l() - whole.l()).norm_l2() < 1e-10);
        assert!((ext.log_det() - whole.log_det()).abs() < 1e-10);
        let b = gaussian_mat(&mut seeded(6), 9, 2, 1.0);
        let x = ext.solve(b.as_ref()).unwrap();
        assert!((&a * &x - &b).norm_l2() < 1e-9);
        // an extended factor extends again: 4 + 2 + 3
        let twice = Cholesky::new(a.as_ref().submatrix(0, 0, 4, 4))
            .unwrap()
            .extend(
                a.as_ref().submatrix(0, 4, 4, 2),
                a.as_ref().submatrix(4, 4, 2, 2),
            )
            .unwrap()
            .extend(
                a.as_ref().submatrix(0, 6, 6, 3),
                a.as_ref().submatrix(6, 6, 3, 3),
            )
            .unwrap();
        assert_eq!(twice.dim(), 9);
        assert!((twice.l() - whole.l()).norm_l2() < 1e-10);
        assert!((twice.log_det() - whole.log_det()).abs() < 1e-10);
        let x = twice.solve(b.as_ref()).unwrap();
        assert!((&a * &x - &b).norm_l2() < 1e-9);
        // a border that makes the matrix indefinite fails at the border's pivot
        let mut c = a.as_ref().submatrix(6, 6, 3, 3).to_owned();
        c[(1, 1)] = -1.0;
        assert!(matches!(
            head.extend(a.as_ref().submatrix(0, 6, 6, 3), c.as_ref()),
            Err(LinalgError::NotPositiveDefinite { index: 7, .. })
        ));
        assert!(matches!(
            head.extend(a.as_ref().submatrix(0, 6, 5, 3), c.as_ref()),
            Err(LinalgError::DimensionMismatch { .. })
        ));
    }

    #[test]
    fn ridge_primal_and_dual_agree_with_normal_equations() {
        for (n, d) in [(12, 5), (5, 12)] {
            let xd = gaussian_mat(&mut seeded(3), n, d, 1.0);
            let y = gaussian_mat(&mut seeded(4), n, 2, 1.0);
            let x = FeatureMatrix::dense(xd.clone()).unwrap();
            let w = ridge(&x, y.as_ref(), 0.7).unwrap();
            assert_eq!(w.shape(), (d, 2));
            // gradient of the ridge objective vanishes: Xᵀ(XW − Y) + λW = 0
            let grad = xd.transpose() * (&xd * &w - &y) + &w * faer::Scale(0.7);
            assert!(grad.norm_l2() < 1e-9, "n={n} d={d}: {}", grad.norm_l2());
        }
        let x = FeatureMatrix::dense(Mat::<f64>::zeros(3, 2)).unwrap();
        assert!(matches!(
            ridge(&x, Mat::<f64>::zeros(3, 1).as_ref(), -1.0),
            Err(LinalgError::InvalidParameter { .. })
        ));
        assert!(matches!(
            ridge(&x, Mat::<f64>::zeros(3, 1).as_ref(), 0.0),
            Err(LinalgError::NotPositiveDefinite { .. })
        ));
        assert!(ridge(&x, Mat::<f64>::zeros(4, 1).as_ref(), 1.0).is_err());
    }
}
