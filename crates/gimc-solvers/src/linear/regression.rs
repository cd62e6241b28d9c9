//! Closed-form regressions (DESIGN §3.2, linear toolbox):
//! - ridge / multi-target ridge W = (XᵀX + λI)⁻¹XᵀT, optionally with an unpenalised intercept
//!   (through the centred Gram XᵀX − n μμᵀ, so sparse X stays sparse);
//! - reduced-rank regression min ‖AX − T‖²_F s.t. rank X ≤ k: X* = V_A Σ_A⁻¹ M_k with
//!   M = U_Aᵀ T and M_k its best rank-k approximation, optionally with an unpenalised intercept
//!   (A centred);
//! - bilinear regression min ‖A X Bᵀ − T‖²_F s.t. rank X ≤ k: X* = V_A Σ_A⁻¹ M_k Σ_B⁻¹ V_Bᵀ with
//!   M = U_Aᵀ T U_B.
//!
//! Both low-rank forms use the thin SVDs A = U_A Σ_A V_Aᵀ, B = U_B Σ_B V_Bᵀ; singular values
//! below max(n, d)·ε·σ_1 are dropped (pseudo-inverse), so rank-deficient A, B are allowed and
//! give the minimum-norm solution.

use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::svd::{Svd, thin_svd};
use gimc_linalg::{FeatureMatrix, ridge, ridge_solve};

use super::{Targets, xt_targets};
use crate::SolverError;
use crate::error::{check_nonneg, dim_err, param_err};

gimc_linalg::params! {
    /// Parameters of [`fit_ridge`]. Start from [`RidgeParams::default`] and the `with_*` methods;
    /// [`RidgeParams::check`] validates them into the [`ValidRidgeParams`] that [`fit_ridge`]
    /// takes.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct RidgeParams => ValidRidgeParams {
        /// λ ≥ 0 (λ = 0 needs XᵀX positive definite). Default 1.0.
        pub lambda: f64 = 1.0 => with_lambda,
        /// Fit an unpenalised intercept per target. Default `false`.
        pub fit_intercept: bool = false => with_fit_intercept,
    }
    /// Checks λ finite and ≥ 0.
    check |this| -> crate::SolverError {
        check_nonneg("lambda", this.lambda)?;
    }
}

/// A fitted linear regression T̂ = X W + 1 bᵀ.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearRegression {
    /// Weights W (d × t).
    pub w: Mat<f64>,
    /// Intercepts b (length t; zeros when not fitted).
    pub intercept: Vec<f64>,
}

impl LinearRegression {
    /// Predictions X W + 1 bᵀ (n × t).
    pub fn predict(&self, x: &FeatureMatrix) -> Result<Mat<f64>, SolverError> {
        if x.ncols() != self.w.nrows() {
            return Err(dim_err(
                "features for prediction",
                format!("{} columns", self.w.nrows()),
                format!("{} columns", x.ncols()),
            ));
        }
        let mut p = x.mul_dense(self.w.as_ref())?;
        for (j, &b) in self.intercept.iter().enumerate() {
            for i in 0..p.nrows() {
                p[(i, j)] += b;
            }
        }
        Ok(p)
    }
}

/// Ridge / multi-target ridge regression (closed form). Without intercept and with dense
/// targets and d > n it solves the n × n dual system; otherwise the d × d primal system of
/// [`RidgeSystem`], with XᵀX (a sparse Gram for sparse X) and XᵀT computed without densifying
/// sparse X or T (the multi-label W-step of DESIGN §3.3: W = (ΦᵀΦ + λI)⁻¹ΦᵀA).
pub fn fit_ridge(
    x: &FeatureMatrix,
    t: Targets<'_>,
    params: &ValidRidgeParams,
) -> Result<LinearRegression, SolverError> {
    let n = x.nrows();
    if !params.fit_intercept
        && let Targets::Dense(m) = t
        && x.ncols() > n
    {
        // the primal path checks its inputs in RidgeSystem::new
        if n == 0 {
            return Err(SolverError::Empty("training examples"));
        }
        t.check(n)?;
        crate::Side::Features(x).check_finite("features")?;
        return Ok(LinearRegression {
            w: ridge(x, m, params.lambda)?,
            intercept: vec![0.0; m.ncols()],
        });
    }
    RidgeSystem::new(x, t, params.fit_intercept)?.fit(params.lambda)
}

/// The primal normal equations of ridge regression, formed once for a grid of λ: XᵀX and XᵀT,
/// centred when an unpenalised intercept is fitted (XᵀX − n μμᵀ and XᵀT − n μ t̄ᵀ, so sparse X
/// and T stay sparse). Each [`RidgeSystem::fit`] then costs one d × d Cholesky factorisation
/// and solve; the intercept is b = t̄ − Wᵀμ.
#[derive(Debug, Clone)]
pub struct RidgeSystem {
    /// XᵀX (d × d), centred with an intercept.
    gram: Mat<f64>,
    /// XᵀT (d × t), centred with an intercept.
    xtt: Mat<f64>,
    /// With an intercept: the column means μ of X and t̄ of T.
    means: Option<(Vec<f64>, Vec<f64>)>,
}

impl RidgeSystem {
    /// The normal equations of `x` and targets `t`. Errors: shape mismatch, empty data,
    /// non-finite entries.
    pub fn new(
        x: &FeatureMatrix,
        t: Targets<'_>,
        fit_intercept: bool,
    ) -> Result<Self, SolverError> {
        let n = x.nrows();
        if n == 0 {
            return Err(SolverError::Empty("training examples"));
        }
        t.check(n)?;
        crate::Side::Features(x).check_finite("features")?;
        let mut gram = x.gram();
        let mut xtt = xt_targets(x, t)?;
        if !fit_intercept {
            return Ok(Self {
                gram,
                xtt,
                means: None,
            });
        }
        let mu = x.column_means();
        let tbar = t.column_means();
        let nf = n as f64;
        let d = mu.len();
        for i in 0..d {
            for j in 0..d {
                gram[(i, j)] -= nf * mu[i] * mu[j];
            }
        }
        for i in 0..d {
            for j in 0..tbar.len() {
                xtt[(i, j)] -= nf * mu[i] * tbar[j];
            }
        }
        Ok(Self {
            gram,
            xtt,
            means: Some((mu, tbar)),
        })
    }

    /// The ridge solution at `lambda` (≥ 0; 0 needs XᵀX positive definite).
    pub fn fit(&self, lambda: f64) -> Result<LinearRegression, SolverError> {
        check_nonneg("lambda", lambda)?;
        let w = ridge_solve(self.gram.as_ref(), self.xtt.as_ref(), lambda)?;
        let intercept = match &self.means {
            Some((mu, tbar)) => tbar
                .iter()
                .enumerate()
                .map(|(j, &tb)| {
                    tb - mu
                        .iter()
                        .enumerate()
                        .map(|(i, &m)| w[(i, j)] * m)
                        .sum::<f64>()
                })
                .collect(),
            None => vec![0.0; w.ncols()],
        };
        Ok(LinearRegression { w, intercept })
    }
}

/// Thin SVD of a feature matrix with negligible singular values dropped.
fn pinv_svd(a: &FeatureMatrix) -> Result<Svd, SolverError> {
    crate::Side::Features(a).check_finite("features")?;
    let svd = thin_svd(a.to_dense().as_ref())?;
    let s1 = svd.s.first().copied().unwrap_or(0.0);
    let cut = (a.nrows().max(a.ncols()) as f64) * f64::EPSILON * s1;
    let keep = svd.s.iter().take_while(|&&s| s > cut).count();
    Ok(svd.truncate(keep))
}

fn check_rank_le(rank: usize, bound: usize) -> Result<(), SolverError> {
    if rank == 0 || rank > bound {
        return Err(param_err(
            "rank",
            format!("must satisfy 1 <= rank <= {bound}, got {rank}"),
        ));
    }
    Ok(())
}

/// Best rank-k approximation M_k of a dense M.
fn truncate_rank(m: MatRef<'_, f64>, k: usize) -> Result<Mat<f64>, SolverError> {
    Ok(thin_svd(m)?.truncate(k).reconstruct())
}

/// Reduced-rank regression (DESIGN §3.2): X* = argmin_{rank X ≤ k} ‖AX − T‖²_F = V_A Σ_A⁻¹ M_k,
/// M = U_Aᵀ T, at any rank k from one thin SVD of A and one of M ([`ReducedRank::new`]), so a
/// grid of ranks costs one SVD of A. `a` is n × d (densified for its thin SVD), `t` n × t.
///
/// With an intercept, A is centred (A_c = A − 1μᵀ) and the intercept is b = t̄ − X*ᵀμ. T need
/// not be centred: the columns of A_c sum to 0, so U_{A_c}ᵀ1 = 0 and U_{A_c}ᵀ(T − 1t̄ᵀ) =
/// U_{A_c}ᵀT, and sparse targets stay sparse.
#[derive(Debug, Clone)]
pub struct ReducedRank {
    /// The thin SVD of A (or A_c; negligible singular values dropped).
    a: Svd,
    /// The thin SVD of M = U_Aᵀ T.
    m: Svd,
    /// The largest rank, min(d, t).
    max_rank: usize,
    /// With an intercept: the column means μ of A and t̄ of T.
    means: Option<(Vec<f64>, Vec<f64>)>,
}

impl ReducedRank {
    /// The SVDs of A (centred when `fit_intercept`) and M. Errors: shape mismatch, empty data,
    /// non-finite entries.
    pub fn new(
        a: &FeatureMatrix,
        t: Targets<'_>,
        fit_intercept: bool,
    ) -> Result<Self, SolverError> {
        if a.nrows() == 0 {
            return Err(SolverError::Empty("training examples"));
        }
        t.check(a.nrows())?;
        let (sa, means) = if fit_intercept {
            let mu = a.column_means();
            let mut centred = a.to_dense();
            for (j, m) in mu.iter().enumerate() {
                for v in centred.col_mut(j).iter_mut() {
                    *v -= m;
                }
            }
            let sa = pinv_svd(&FeatureMatrix::dense(centred)?)?;
            (sa, Some((mu, t.column_means())))
        } else {
            (pinv_svd(a)?, None)
        };
        // M = U_Aᵀ T = (Tᵀ U_A)ᵀ
        let m = t.tr_mul(sa.u.as_ref())?.transpose().to_owned();
        Ok(Self {
            m: thin_svd(m.as_ref())?,
            a: sa,
            max_rank: a.ncols().min(t.ncols()),
            means,
        })
    }

    /// The largest rank, min(d, t); a rank this large gives the least-squares solution.
    pub fn max_rank(&self) -> usize {
        self.max_rank
    }

    /// The fit at rank `rank`: X* (d × t) and the intercepts (zeros without).
    /// Errors: rank 0 or above [`ReducedRank::max_rank`].
    pub fn fit(&self, rank: usize) -> Result<LinearRegression, SolverError> {
        check_rank_le(rank, self.max_rank)?;
        let mk = self.m.clone().truncate(rank).reconstruct();
        // V_A Σ_A⁻¹ M_k
        let scaled = Mat::from_fn(mk.nrows(), mk.ncols(), |i, j| mk[(i, j)] / self.a.s[i]);
        let w = &self.a.v * &scaled;
        let intercept = match &self.means {
            Some((mu, tbar)) => (0..w.ncols())
                .map(|j| tbar[j] - (0..w.nrows()).map(|i| w[(i, j)] * mu[i]).sum::<f64>())
                .collect(),
            None => vec![0.0; w.ncols()],
        };
        Ok(LinearRegression { w, intercept })
    }
}

/// Reduced-rank regression at one rank, without an intercept: the weights of
/// [`ReducedRank::fit`]. Errors: rank 0 or above min(d, t), shape mismatch, empty data.
pub fn reduced_rank_regression(
    a: &FeatureMatrix,
    t: Targets<'_>,
    rank: usize,
) -> Result<Mat<f64>, SolverError> {
    if a.nrows() == 0 {
        return Err(SolverError::Empty("training examples"));
    }
    t.check(a.nrows())?;
    check_rank_le(rank, a.ncols().min(t.ncols()))?;
    Ok(ReducedRank::new(a, t, false)?.fit(rank)?.w)
}

/// Bilinear regression (DESIGN §3.2): X* = argmin_{rank X ≤ k} ‖A X Bᵀ − T‖²_F
/// = V_A Σ_A⁻¹ M_k Σ_B⁻¹ V_Bᵀ with M = U_Aᵀ T U_B. `a` is n × d_a, `b` m × d_b, `t` n × m
/// (dense or sparse); the result is d_a × d_b (the IMC model Z with Frobenius loss on every
/// entry and a hard rank constraint).
pub fn bilinear_regression(
    a: &FeatureMatrix,
    b: &FeatureMatrix,
    t: Targets<'_>,
    rank: usize,
) -> Result<Mat<f64>, SolverError> {
    if a.nrows() == 0 || b.nrows() == 0 {
        return Err(SolverError::Empty("training examples"));
    }
    t.check(a.nrows())?;
    if t.ncols() != b.nrows() {
        return Err(dim_err(
            "targets",
            format!("{} columns (rows of B)", b.nrows()),
            format!("{} columns", t.ncols()),
        ));
    }
    check_rank_le(rank, a.ncols().min(b.ncols()))?;
    let sa = pinv_svd(a)?;
    let sb = pinv_svd(b)?;
    // M = U_Aᵀ (T U_B)
    let tub = t.mul(sb.u.as_ref())?;
    let m = sa.u.transpose() * &tub;
    let mk = truncate_rank(m.as_ref(), rank)?;
    let scaled = Mat::from_fn(mk.nrows(), mk.ncols(), |i, j| {
        mk[(i, j)] / (sa.s[i] * sb.s[j])
    });
    Ok(&sa.v * &scaled * sb.v.transpose())
}

/// ‖A X − T‖²_F for dense or sparse T. For sparse T (e.g. the multi-label matrix) no n × t
/// matrix is formed: ‖AX − T‖² = ⟨AᵀA, XXᵀ⟩ − 2⟨AᵀT, X⟩ + ‖T‖² (DESIGN §3.3).
pub fn regression_loss(
    a: &FeatureMatrix,
    x: MatRef<'_, f64>,
    t: Targets<'_>,
) -> Result<f64, SolverError> {
    t.check(a.nrows())?;
    if x.nrows() != a.ncols() || x.ncols() != t.ncols() {
        return Err(dim_err(
            "coefficients",
            format!("{} x {}", a.ncols(), t.ncols()),
            format!("{} x {}", x.nrows(), x.ncols()),
        ));
    }
    let (quad, cross) = match t {
        Targets::Dense(m) => {
            let ax = a.mul_dense(x)?;
            (
                ax.squared_norm_l2(),
                gimc_linalg::dense::frob_dot(ax.as_ref(), m)?,
            )
        }
        Targets::Sparse(_) => {
            let xxt = x * x.transpose();
            let quad = gimc_linalg::dense::frob_dot(a.gram().as_ref(), xxt.as_ref())?;
            let att = xt_targets(a, t)?;
            (quad, gimc_linalg::dense::frob_dot(att.as_ref(), x)?)
        }
    };
    Ok((quad - 2.0 * cross + t.frob_sq()).max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::refused;
    use gimc_linalg::Observed;
    use gimc_linalg::faer;
    use gimc_linalg::rng::{gaussian_mat, seeded};
    use gimc_linalg::sparse::dense_to_csr;

    #[test]
    fn ridge_with_and_without_intercept_zeroes_the_gradient() {
        let mut rng = seeded(1);
        let xd = gaussian_mat(&mut rng, 30, 5, 1.0) + Mat::<f64>::full(30, 5, 2.0);
        let t = gaussian_mat(&mut rng, 30, 3, 1.0) + Mat::<f64>::full(30, 3, -1.0);
        let x = FeatureMatrix::dense(xd.clone()).unwrap();
        for fit_intercept in [false, true] {
            let p = RidgeParams::default()
                .with_lambda(0.5)
                .with_fit_intercept(fit_intercept)
                .check()
                .unwrap();
            let m = fit_ridge(&x, Targets::Dense(t.as_ref()), &p).unwrap();
            let resid = m.predict(&x).unwrap() - &t;
            // ∂/∂W = Xᵀ r + λW = 0, ∂/∂b = 1ᵀ r = 0
            let gw = xd.transpose() * &resid + &m.w * faer::Scale(0.5);
            assert!(gw.norm_l2() < 1e-9, "{fit_intercept}: {}", gw.norm_l2());
            if fit_intercept {
                for j in 0..3 {
                    assert!(resid.col(j).iter().sum::<f64>().abs() < 1e-9);
                }
            }
        }
        // sparse X and sparse T give the same fit
        let xs = FeatureMatrix::sparse(dense_to_csr(xd.as_ref()).unwrap()).unwrap();
        let tb = Mat::<f64>::from_fn(30, 3, |i, j| if (i + j) % 4 == 0 { 1.0 } else { 0.0 });
        let to = Observed::from_csr(&dense_to_csr(tb.as_ref()).unwrap()).unwrap();
        let p = RidgeParams::default()
            .with_lambda(0.1)
            .with_fit_intercept(true)
            .check()
            .unwrap();
        let a = fit_ridge(&x, Targets::Dense(tb.as_ref()), &p).unwrap();
        let b = fit_ridge(&xs, Targets::Sparse(&to), &p).unwrap();
        assert!((&a.w - &b.w).norm_l2() < 1e-10);
        assert!(
            a.intercept
                .iter()
                .zip(&b.intercept)
                .all(|(u, v)| (u - v).abs() < 1e-10)
        );
        let l1 = regression_loss(&x, a.w.as_ref(), Targets::Dense(tb.as_ref())).unwrap();
        let l2 = regression_loss(&xs, a.w.as_ref(), Targets::Sparse(&to)).unwrap();
        assert!((l1 - l2).abs() < 1e-9 * l1.max(1.0));
    }

    #[test]
    fn check_refuses_each_bad_field() {
        let p = RidgeParams::default();
        assert!(p.check().is_ok() && p.with_lambda(0.0).check().is_ok());
        assert_eq!(refused(p.with_lambda(-1.0).check()), "lambda");
        assert_eq!(refused(p.with_lambda(f64::NAN).check()), "lambda");
        assert_eq!(refused(p.with_lambda(f64::INFINITY).check()), "lambda");
    }
}
