//! The two-step baselines of the transduction paper (DESIGN §3.5): impute the missing features,
//! then train one linear SVM per label on that label's observed entries.
//!
//! Imputations (features are d × n, items are columns):
//! - [`impute_zero`]: missing entries 0;
//! - [`impute_mean`]: missing entries the mean of the feature's observed entries;
//! - [`impute_em_gaussian`]: EM for one Gaussian N(m, S) over the items with missing entries
//!   (E-step: conditional mean x̂_u = m_u + S_uo S_oo⁻¹ (x_o − m_o) and conditional covariance
//!   S_uu − S_uo S_oo⁻¹ S_ou; M-step: m = mean of x̂, S = mean of (x̂ − m)(x̂ − m)ᵀ plus the
//!   conditional covariances, plus a small ridge), imputing by the conditional mean (the
//!   paper's EM1: a one-component mixture);
//! - [`impute_fpc_cv`]: nuclear-norm completion of X alone by the same FPC as MC-1 / MC-b with no
//!   label rows (the loss (1/|Ω_X|) Σ ½(z − x)²), μ chosen by k-fold cross-validation of the
//!   squared error on held-out observed features.
//!
//! [`svm_per_label_cv`] then trains, for every label row, a linear SVM
//! ([`crate::linear::svm`]) on the items whose label is observed, with C chosen by k-fold
//! cross-validation over a grid (10^-8 … 10^8 in the paper), warm-starting the dual coordinate
//! descent along increasing C.

use gimc_linalg::faer;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{GimcRng, child};
use gimc_linalg::solve::Cholesky;
use gimc_linalg::{FeatureMatrix, Observed};
use rayon::prelude::*;

use super::{
    ShrinkSvd, TransductionParams, TransductionProblem, TransductionVariant,
    ValidTransductionParams, fit_transduction_path, fold_assignment, mu_grid,
};
use crate::SolverError;
use crate::error::{check_nonneg, check_pos, param_err};
use crate::iter::{NoObserver, run};
use crate::linear::svm::{NewtonSvmParams, SvmDualCd, SvmLoss, SvmParams, l2svm_primal_newton};

/// The observed features with 0 in every missing entry (d × n).
pub fn impute_zero(features: &Observed) -> Mat<f64> {
    features.to_dense()
}

/// The observed features with every missing entry replaced by the mean of that feature's
/// observed entries (0 for a feature with none), d × n.
pub fn impute_mean(features: &Observed) -> Mat<f64> {
    let means = observed_row_means(features);
    let mut x = Mat::from_fn(features.nrows(), features.ncols(), |i, _| means[i]);
    for (i, j, v) in features.iter() {
        x[(i, j)] = v;
    }
    x
}

fn observed_row_means(features: &Observed) -> Vec<f64> {
    let mut sum = vec![0.0; features.nrows()];
    let mut cnt = vec![0usize; features.nrows()];
    for (i, _, v) in features.iter() {
        sum[i] += v;
        cnt[i] += 1;
    }
    sum.iter()
        .zip(&cnt)
        .map(|(s, &c)| if c == 0 { 0.0 } else { s / c as f64 })
        .collect()
}

gimc_linalg::params! {
    /// Settings of [`impute_em_gaussian`]. Build from [`Default`] with the `with_*` methods;
    /// [`EmParams::check`] validates them into the [`ValidEmParams`] the imputation takes.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct EmParams => ValidEmParams {
        /// Maximum EM iterations. Default 200.
        pub max_iter: usize = 200 => with_max_iter,
        /// Stop when the observed-data log-likelihood changes by less than `tol` relative.
        /// Default 1e-6.
        pub tol: f64 = 1e-6 => with_tol,
        /// Ridge added to the covariance after every M-step, relative to its mean diagonal
        /// (keeps S positive definite when few entries are observed). Default 1e-3.
        pub ridge: f64 = 1e-3 => with_ridge,
    }
    /// Checks tol > 0, ridge ≥ 0 and max_iter ≥ 1.
    check |this| -> crate::SolverError {
        check_pos("tol", this.tol)?;
        check_nonneg("ridge", this.ridge)?;
        if this.max_iter == 0 {
            return Err(param_err("max_iter", "must be >= 1"));
        }
    }
}

/// The result of [`impute_em_gaussian`].
#[derive(Debug, Clone, PartialEq)]
pub struct EmImputation {
    /// Features with the missing entries replaced by their conditional means (d × n).
    pub x: Mat<f64>,
    /// Estimated mean m (d).
    pub mean: Vec<f64>,
    /// Estimated covariance S (d × d).
    pub cov: Mat<f64>,
    /// Observed-data log-likelihood after every E-step.
    pub loglik_trace: Vec<f64>,
}

/// One E-step: imputed features, Σ_j (x̂_j x̂_jᵀ + C_j) and the observed-data log-likelihood.
fn em_e_step(
    features: &Observed,
    mean: &[f64],
    cov: &Mat<f64>,
) -> Result<(Mat<f64>, Mat<f64>, f64), SolverError> {
    let (d, n) = features.shape();
    let mut x = Mat::<f64>::zeros(d, n);
    let mut second = Mat::<f64>::zeros(d, d);
    let mut loglik = 0.0;
    let mut is_obs = vec![false; d];
    let ln_2pi = (2.0 * std::f64::consts::PI).ln();
    for j in 0..n {
        let (rows, pos) = features.col(j).unwrap_or((&[], &[]));
        let obs: Vec<usize> = rows.to_vec();
        let vals: Vec<f64> = pos
            .iter()
            .map(|&p| features.values().get(p).copied().unwrap_or(0.0))
            .collect();
        is_obs.iter_mut().for_each(|b| *b = false);
        for &i in &obs {
            is_obs[i] = true;
        }
        let mis: Vec<usize> = (0..d).filter(|&i| !is_obs[i]).collect();
        let mut xj: Vec<f64> = mean.to_vec();
        // conditional covariance of the missing block, zero elsewhere
        let mut cuu = Mat::<f64>::zeros(mis.len(), mis.len());
        if obs.is_empty() {
            for (a, &ia) in mis.iter().enumerate() {
                for (b, &ib) in mis.iter().enumerate() {
                    cuu[(a, b)] = cov[(ia, ib)];
                }
            }
        } else {
            let soo = Mat::from_fn(obs.len(), obs.len(), |a, b| cov[(obs[a], obs[b])]);
            let chol = Cholesky::new(soo.as_ref())?;
            let r = Mat::from_fn(obs.len(), 1, |a, _| vals[a] - mean[obs[a]]);
            let w = chol.solve(r.as_ref())?;
            let quad: f64 = (0..obs.len()).map(|a| r[(a, 0)] * w[(a, 0)]).sum();
            loglik -= 0.5 * (obs.len() as f64 * ln_2pi + chol.log_det() + quad);
            for (a, &i) in obs.iter().enumerate() {
                xj[i] = vals[a];
            }
            if !mis.is_empty() {
                let sou = Mat::from_fn(obs.len(), mis.len(), |a, b| cov[(obs[a], mis[b])]);
                // x̂_u = m_u + S_uo S_oo⁻¹ (x_o − m_o)
                for (b, &i) in mis.iter().enumerate() {
                    let s: f64 = (0..obs.len()).map(|a| sou[(a, b)] * w[(a, 0)]).sum();
                    xj[i] = mean[i] + s;
                }
                // C_uu = S_uu − S_uo S_oo⁻¹ S_ou
                let k = chol.solve(sou.as_ref())?;
                let corr = sou.transpose() * &k;
                for (a, &ia) in mis.iter().enumerate() {
                    for (b, &ib) in mis.iter().enumerate() {
                        cuu[(a, b)] = cov[(ia, ib)] - corr[(a, b)];
                    }
                }
            }
        }
        for i in 0..d {
            x[(i, j)] = xj[i];
        }
        for (a, &ia) in mis.iter().enumerate() {
            for (b, &ib) in mis.iter().enumerate() {
                second[(ia, ib)] += cuu[(a, b)];
            }
        }
        for a in 0..d {
            for b in 0..d {
                second[(a, b)] += xj[a] * xj[b];
            }
        }
    }
    Ok((x, second, loglik))
}

/// EM for a single Gaussian over the items (columns) with missing entries, imputing each
/// missing entry by its conditional mean given the item's observed entries (EM1 of the paper).
/// Starts from the observed means and the diagonal of observed variances.
pub fn impute_em_gaussian(
    features: &Observed,
    params: &ValidEmParams,
) -> Result<EmImputation, SolverError> {
    let (d, n) = features.shape();
    if n == 0 || d == 0 {
        return Err(SolverError::Empty("features"));
    }
    let mut mean = observed_row_means(features);
    let mut var = vec![0.0; d];
    let mut cnt = vec![0usize; d];
    for (i, _, v) in features.iter() {
        var[i] += (v - mean[i]) * (v - mean[i]);
        cnt[i] += 1;
    }
    let mut cov = Mat::<f64>::zeros(d, d);
    for i in 0..d {
        let v = if cnt[i] > 1 {
            var[i] / cnt[i] as f64
        } else {
            0.0
        };
        cov[(i, i)] = if v > 0.0 { v } else { 1.0 };
    }
    let mut trace = Vec::new();
    for _ in 0..params.max_iter {
        // E-step at the current parameters, then the M-step from its sufficient statistics
        let (xh, second, ll) = em_e_step(features, &mean, &cov)?;
        let prev = trace.last().copied();
        trace.push(ll);
        let nf = n as f64;
        let new_mean: Vec<f64> = (0..d)
            .map(|i| (0..n).map(|j| xh[(i, j)]).sum::<f64>() / nf)
            .collect();
        let mut new_cov =
            Mat::from_fn(d, d, |a, b| second[(a, b)] / nf - new_mean[a] * new_mean[b]);
        let avg_diag = (0..d).map(|i| new_cov[(i, i)]).sum::<f64>() / d as f64;
        let r = params.ridge * avg_diag.max(f64::MIN_POSITIVE);
        for i in 0..d {
            new_cov[(i, i)] += r;
        }
        // symmetrise against rounding
        for a in 0..d {
            for b in 0..a {
                let s = 0.5 * (new_cov[(a, b)] + new_cov[(b, a)]);
                new_cov[(a, b)] = s;
                new_cov[(b, a)] = s;
            }
        }
        mean = new_mean;
        cov = new_cov;
        if let Some(p) = prev
            && (ll - p).abs() <= params.tol * p.abs().max(1.0)
        {
            break;
        }
    }
    let (x, _, ll) = em_e_step(features, &mean, &cov)?;
    trace.push(ll);
    Ok(EmImputation {
        x,
        mean,
        cov,
        loglik_trace: trace,
    })
}

gimc_linalg::params! {
    /// Settings of [`impute_fpc_cv`]. Build from [`Default`] with the `with_*` methods;
    /// [`FpcImputeParams::check`] validates them into the [`ValidFpcImputeParams`] the imputation
    /// takes.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct FpcImputeParams => ValidFpcImputeParams {
        /// Continuation factor η_μ. Default 0.25.
        pub eta_mu: f64 = 0.25 => with_eta_mu,
        /// Stage tolerance on the relative objective change. Default 1e-5.
        pub tol: f64 = 1e-5 => with_tol,
        /// Maximum FPC steps per stage. Default 2,000.
        pub max_stage_iters: usize = 2000 => with_max_stage_iters,
        /// Folds of the μ cross-validation (≥ 2). Default 5.
        pub folds: usize = 5 => with_folds,
        /// Length of the μ grid σ_1 η_μ^k, k = 1..=K. Default 8.
        pub mu_count: usize = 8 => with_mu_count,
        /// Shrinkage SVD. Default [`ShrinkSvd::Auto`].
        pub svd: ShrinkSvd = ShrinkSvd::Auto => with_svd,
        /// Monotone-FISTA acceleration (see [`TransductionParams::accelerate`]). Default `false`.
        pub accelerate: bool = false => with_accelerate,
    }
    check(manual) -> crate::SolverError;
}

impl FpcImputeParams {
    /// Checks folds ≥ 2 and mu_count ≥ 1, and the FPC settings as
    /// [`TransductionParams::check`] does (η_μ ∈ (0, 1), tol > 0, max_stage_iters ≥ 1).
    pub fn check(&self) -> Result<ValidFpcImputeParams, SolverError> {
        if self.folds < 2 || self.mu_count == 0 {
            return Err(param_err(
                "folds / mu_count",
                "need folds >= 2 and mu_count >= 1",
            ));
        }
        // FPC on the features alone: MC-b with no label rows (λ is then unused)
        let fpc = TransductionParams::default()
            .with_variant(TransductionVariant::McB)
            .with_lambda(1.0)
            .with_eta_mu(self.eta_mu)
            .with_tol(self.tol)
            .with_max_stage_iters(self.max_stage_iters)
            .with_svd(self.svd)
            .with_accelerate(self.accelerate)
            .check()?;
        Ok(ValidFpcImputeParams { params: *self, fpc })
    }
}

/// [`FpcImputeParams`] that passed [`FpcImputeParams::check`], with the FPC settings they
/// give.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValidFpcImputeParams {
    params: FpcImputeParams,
    fpc: ValidTransductionParams,
}

impl std::ops::Deref for ValidFpcImputeParams {
    type Target = FpcImputeParams;
    fn deref(&self) -> &FpcImputeParams {
        &self.params
    }
}

/// The result of [`impute_fpc_cv`].
#[derive(Debug, Clone, PartialEq)]
pub struct FpcImputation {
    /// The completed features (d × n): the FPC iterate at the chosen μ.
    pub x: Mat<f64>,
    /// The chosen μ.
    pub mu: f64,
    /// The μ grid.
    pub grid: Vec<f64>,
    /// Held-out mean squared error for every μ of the grid.
    pub cv_errors: Vec<f64>,
}

/// Nuclear-norm completion of the features alone (FPC, the FPC+SVM baseline), μ by
/// cross-validation of the squared error on held-out observed features.
pub fn impute_fpc_cv(
    features: &Observed,
    params: &ValidFpcImputeParams,
    rng: &mut GimcRng,
) -> Result<FpcImputation, SolverError> {
    if features.len() < params.folds {
        return Err(SolverError::Empty(
            "observed features (fewer than the folds)",
        ));
    }
    let n = features.ncols();
    let no_labels = Observed::from_triplets(0, n, &[], &[], &[])?;
    let problem = TransductionProblem::new(no_labels.clone(), features.clone())?;
    let tp = params.fpc;
    let grid = mu_grid(&problem, &tp, params.mu_count)?;
    let fold = fold_assignment(features.len(), params.folds, rng);
    let base = rng.clone();
    let sq = (0..params.folds)
        .into_par_iter()
        .map(|f| -> Result<Vec<f64>, SolverError> {
            let train: Vec<usize> = (0..fold.len()).filter(|&e| fold[e] != f).collect();
            let sub =
                TransductionProblem::new(no_labels.clone(), features.select_entries(&train)?)?;
            let mut frng = child(&base, f as u64);
            let path = fit_transduction_path(&sub, &tp, &grid, &mut frng, &mut NoObserver)?;
            Ok(path
                .solutions
                .iter()
                .map(|s| {
                    features
                        .iter()
                        .enumerate()
                        .filter(|&(e, _)| fold[e] == f)
                        .map(|(_, (i, j, x))| (s.z[(i, j)] - x).powi(2))
                        .sum()
                })
                .collect())
        })
        .collect::<Result<Vec<Vec<f64>>, _>>()?;
    let cv_errors: Vec<f64> = (0..grid.len())
        .map(|k| {
            sq.iter()
                .map(|v| v.get(k).copied().unwrap_or(f64::INFINITY))
                .sum::<f64>()
                / features.len() as f64
        })
        .collect();
    let mut best = 0;
    for k in 1..grid.len() {
        if cv_errors[k] < cv_errors[best] {
            best = k;
        }
    }
    let mut frng = child(rng, 0x0066_7063);
    let path = fit_transduction_path(&problem, &tp, &grid[..=best], &mut frng, &mut NoObserver)?;
    let sol = path
        .solutions
        .last()
        .ok_or(SolverError::Empty("continuation stages"))?;
    Ok(FpcImputation {
        x: sol.imputed_features(),
        mu: grid[best],
        grid,
        cv_errors,
    })
}

gimc_linalg::params! {
    /// Settings of [`svm_per_label_cv`]. Build from [`Default`] with the `with_*` methods;
    /// [`SvmCvParams::check`] validates them into the [`ValidSvmCvParams`] the fit takes.
    #[derive(Debug, Clone, PartialEq)]
    pub struct SvmCvParams => ValidSvmCvParams {
        /// C candidates (sorted ascending before use). Default 10^-8, 10^-7, …, 10^8.
        pub cs: Vec<f64> = (-8..=8).map(|e| 10f64.powi(e)).collect() => with_cs,
        /// Folds (≥ 2; fewer when a label has fewer training items). Default 5.
        pub folds: usize = 5 => with_folds,
        /// The SVM (its `c` is replaced by each candidate). Default [`SvmParams::default`].
        pub svm: SvmParams = SvmParams::default() => with_svm,
    }
    check(manual) -> crate::SolverError;
}

impl SvmCvParams {
    /// Checks folds ≥ 2 and at least one C, each positive; the candidates are sorted ascending.
    pub fn check(&self) -> Result<ValidSvmCvParams, SolverError> {
        if self.folds < 2 || self.cs.is_empty() {
            return Err(param_err(
                "folds / cs",
                "need folds >= 2 and at least one C",
            ));
        }
        for &c in &self.cs {
            check_pos("c", c)?;
        }
        let mut sorted = self.clone();
        sorted.cs.sort_by(f64::total_cmp);
        Ok(ValidSvmCvParams(sorted))
    }
}

/// [`SvmCvParams`] that passed [`SvmCvParams::check`] (C candidates ascending).
#[derive(Debug, Clone, PartialEq)]
pub struct ValidSvmCvParams(SvmCvParams);

impl std::ops::Deref for ValidSvmCvParams {
    type Target = SvmCvParams;
    fn deref(&self) -> &SvmCvParams {
        &self.0
    }
}

/// The result of [`svm_per_label_cv`].
#[derive(Debug, Clone, PartialEq)]
pub struct LabelSvms {
    /// Decision values of every label for every item (t × n); predicted label = sign.
    pub scores: Mat<f64>,
    /// The C chosen for every label (NaN when the label had no training item).
    pub c: Vec<f64>,
}

/// Fits a path of SVMs along `cs` (ascending) on `x`/`y`, warm-starting each C from the
/// previous solution; returns the (weights, bias) of every C. The squared-hinge SVM (the
/// default) is solved in the primal by Newton's method ([`l2svm_primal_newton`]): these
/// baselines' features are dense with a few hundred columns at most, where a Newton step is
/// cheap and, unlike dual coordinate descent, the step count does not grow with C (the grid
/// reaches 10^8). The hinge loss keeps dual coordinate descent.
fn svm_c_path(
    x: &FeatureMatrix,
    y: &[bool],
    cs: &[f64],
    base: &SvmParams,
    rng: &mut GimcRng,
) -> Result<Vec<(Vec<f64>, f64)>, SolverError> {
    let d = x.ncols();
    let split = |w: &[f64], bias: Option<f64>| -> (Vec<f64>, f64) {
        let b = bias.map_or(0.0, |b| b * w.get(d).copied().unwrap_or(0.0));
        (w[..d.min(w.len())].to_vec(), b)
    };
    let mut out = Vec::with_capacity(cs.len());
    if let (SvmLoss::SquaredHinge, FeatureMatrix::Dense(xd)) = (base.loss, x) {
        let mut prev: Option<Vec<f64>> = None;
        for &c in cs {
            let p = base.with_c(c).check()?;
            let newton = NewtonSvmParams {
                c,
                bias: p.bias,
                tol: NEWTON_TOL,
                max_iter: NEWTON_MAX_ITER,
            };
            let w = l2svm_primal_newton(xd.as_ref(), y, &newton, prev.as_deref())?;
            out.push(split(&w, p.bias));
            prev = Some(w);
        }
        return Ok(out);
    }
    let mut state = None;
    for &c in cs {
        let p = base.with_c(c).check()?;
        let mut solver = SvmDualCd::new(x, y, p, rng)?;
        let mut st = match state.take() {
            Some(s) => s,
            None => solver.zero_state(),
        };
        run(&mut solver, &mut st, p.max_epochs, &mut NoObserver)?;
        out.push(split(&st.w, p.bias));
        state = Some(st);
    }
    Ok(out)
}

/// Relative gradient tolerance of the primal Newton SVM in the C path.
const NEWTON_TOL: f64 = 1e-6;
/// Step cap of the primal Newton SVM (it typically needs fewer than 15).
const NEWTON_MAX_ITER: usize = 50;

/// x_jᵀ w + b for column `j` of the d × n features.
fn score(x: faer::MatRef<'_, f64>, j: usize, w: &[f64], b: f64) -> f64 {
    w.iter()
        .enumerate()
        .map(|(k, wk)| x[(k, j)] * wk)
        .sum::<f64>()
        + b
}

/// One linear SVM per label row of `labels` (t × n, ±1 on Ω_Y) on the features `x` (d × n,
/// completed), trained on the items whose label is observed, C chosen per label by k-fold
/// cross-validation of the error on held-out items (ties: the C closest to 1 in log scale).
/// Labels run in parallel; each draws from its own stream of `rng`. A label without any
/// training item gets the sign of the majority of all observed labels as its score.
pub fn svm_per_label_cv(
    x: faer::MatRef<'_, f64>,
    labels: &Observed,
    params: &ValidSvmCvParams,
    rng: &mut GimcRng,
) -> Result<LabelSvms, SolverError> {
    let n = x.ncols();
    if labels.ncols() != n {
        return Err(crate::error::dim_err(
            "labels",
            format!("{n} items (columns)"),
            format!("{}", labels.ncols()),
        ));
    }
    crate::error::check_finite_mat("features", x)?;
    let cs = &params.cs;
    let items = FeatureMatrix::dense(x.transpose().to_owned())?;
    let majority = if labels.values().iter().sum::<f64>() > 0.0 {
        1.0
    } else {
        -1.0
    };
    let base = rng.clone();
    let t = labels.nrows();
    let per_label = (0..t)
        .into_par_iter()
        .map(|l| -> Result<(Vec<f64>, f64), SolverError> {
            let (cols, vals) = labels.row(l).unwrap_or((&[], &[]));
            if cols.is_empty() {
                return Ok((vec![majority; n], f64::NAN));
            }
            let mut lrng = child(&base, l as u64);
            let train = items.select_rows(cols)?;
            let y: Vec<bool> = vals.iter().map(|&v| v > 0.0).collect();
            let m = cols.len();
            let folds = params.folds.min(m);
            let best_c = if folds < 2 {
                1.0
            } else {
                let fold = fold_assignment(m, folds, &mut lrng);
                let mut wrong = vec![0usize; cs.len()];
                for f in 0..folds {
                    let tr: Vec<usize> = (0..m).filter(|&e| fold[e] != f).collect();
                    let xt = train.select_rows(&tr)?;
                    let yt: Vec<bool> = tr.iter().map(|&e| y[e]).collect();
                    let mut frng = child(&lrng, f as u64 + 1);
                    let path = svm_c_path(&xt, &yt, cs, &params.svm, &mut frng)?;
                    for (k, (w, b)) in path.iter().enumerate() {
                        for e in (0..m).filter(|&e| fold[e] == f) {
                            let s = score(x, cols[e], w, *b);
                            if (s > 0.0) != y[e] {
                                wrong[k] += 1;
                            }
                        }
                    }
                }
                let mut best = 0;
                for k in 1..cs.len() {
                    let closer = cs[k].ln().abs() < cs[best].ln().abs();
                    if wrong[k] < wrong[best] || (wrong[k] == wrong[best] && closer) {
                        best = k;
                    }
                }
                cs[best]
            };
            let mut frng = child(&lrng, 0);
            let path = svm_c_path(&train, &y, &[best_c], &params.svm, &mut frng)?;
            let (w, b) = path
                .into_iter()
                .next()
                .ok_or(SolverError::Empty("SVM path"))?;
            Ok(((0..n).map(|j| score(x, j, &w, b)).collect(), best_c))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut scores = Mat::<f64>::zeros(t, n);
    let mut c = Vec::with_capacity(t);
    for (l, (s, cl)) in per_label.into_iter().enumerate() {
        for (j, v) in s.into_iter().enumerate() {
            scores[(l, j)] = v;
        }
        c.push(cl);
    }
    Ok(LabelSvms { scores, c })
}
