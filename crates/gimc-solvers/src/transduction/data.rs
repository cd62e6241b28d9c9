//! Transduction on a user's table (`gimc transduce`, Python `MC1Transducer`): features with
//! missing cells (NaN) and labels with unknown entries (0), standardised on the observed cells,
//! λ and μ chosen by cross-validation ([`fit_transduction_cv`]), the result back in the table's
//! units.
//!
//! ```
//! use gimc_linalg::faer::Mat;
//! use gimc_linalg::rng::seeded;
//! use gimc_solvers::transduction::data::{TransductionTable, transduce};
//! use gimc_solvers::{TransductionCvParams, TransductionParams};
//!
//! // 40 rows of two classes; every 5th feature cell missing; rows 0..8 unlabelled
//! let x = Mat::from_fn(40, 4, |i, j| {
//!     if (i + j) % 5 == 0 { f64::NAN } else { (i % 2) as f64 * 2.0 - 1.0 + 0.05 * j as f64 }
//! });
//! let y = Mat::from_fn(40, 1, |i, _| if i < 8 { 0.0 } else if i % 2 == 1 { 1.0 } else { -1.0 });
//! let cv = TransductionCvParams::default()
//!     .with_folds(3)
//!     .with_lambdas(vec![0.1, 1.0])
//!     .with_mu_count(4)
//!     .check()?;
//! let params = TransductionParams::default().check()?;
//! let table = TransductionTable { x: x.as_ref(), y: y.as_ref(), standardize: true };
//! let out = transduce(table, &params, &cv, &mut seeded(1))?;
//! for i in 0..8 {
//!     assert_eq!(out.scores[(i, 0)] > 0.0, i % 2 == 1, "row {i}");
//! }
//! assert!(out.imputed[(0, 0)] < 0.0); // row 0 is of the negative class
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use gimc_linalg::Observed;
use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::rng::GimcRng;

use super::baselines::{
    ValidFpcImputeParams, ValidSvmCvParams, impute_fpc_cv, impute_mean, impute_zero,
    svm_per_label_cv,
};
use super::{
    TransductionProblem, ValidTransductionCvParams, ValidTransductionParams, fit_transduction_cv,
};
use crate::SolverError;
use crate::error::{dim_err, param_err};

/// What [`transduce`] returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Transduced {
    /// Label scores z + b of every row (n × t); positive means +1.
    pub scores: Mat<f64>,
    /// The features with every missing cell imputed, observed cells as given (n × d).
    pub imputed: Mat<f64>,
    /// The chosen λ.
    pub lambda: f64,
    /// The chosen μ.
    pub mu: f64,
    /// Cross-validated label error (%) at the chosen (λ, μ).
    pub cv_label_error: f64,
    /// The SVM's C per label (baselines; empty for MC-1 / MC-b).
    pub svm_c: Vec<f64>,
}

/// The problem built from a table, the table's features, and the standardisation applied to
/// them.
struct Prepared<'a> {
    x: MatRef<'a, f64>,
    problem: TransductionProblem,
    mean: Vec<f64>,
    scale: Vec<f64>,
}

/// Builds the transduction problem of the table's `x` (NaN missing) and `y` (±1 known, 0
/// unknown), standardising each feature on its observed cells when asked.
fn prepare(table: TransductionTable<'_>) -> Result<Prepared<'_>, SolverError> {
    let TransductionTable { x, y, standardize } = table;
    let (n, d) = x.shape();
    let t = y.ncols();
    if y.nrows() != n {
        return Err(dim_err(
            "transduce labels",
            format!("{n} rows (the rows of the features)"),
            format!("{} rows", y.nrows()),
        ));
    }
    let (mut mean, mut scale) = (vec![0.0; d], vec![1.0; d]);
    for j in 0..d {
        let mut count = 0usize;
        let mut sum = 0.0;
        for i in 0..n {
            let v = x[(i, j)];
            if v.is_infinite() {
                return Err(param_err(
                    "features",
                    format!("infinite value at row {i}, column {j}"),
                ));
            }
            if !v.is_nan() {
                count += 1;
                sum += v;
            }
        }
        if standardize && count > 0 {
            let m = sum / count as f64;
            let var = (0..n)
                .map(|i| x[(i, j)])
                .filter(|v| !v.is_nan())
                .map(|v| (v - m) * (v - m))
                .sum::<f64>()
                / count as f64;
            mean[j] = m;
            scale[j] = if var > 0.0 { var.sqrt() } else { 1.0 };
        }
    }
    let (mut fr, mut fc, mut fv) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        for j in 0..d {
            let v = x[(i, j)];
            if !v.is_nan() {
                fr.push(j);
                fc.push(i);
                fv.push((v - mean[j]) / scale[j]);
            }
        }
    }
    if fv.is_empty() {
        return Err(SolverError::Empty("observed feature cells"));
    }
    let (mut lr, mut lc, mut lv) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        for l in 0..t {
            let v = y[(i, l)];
            if v == 1.0 || v == -1.0 {
                lr.push(l);
                lc.push(i);
                lv.push(v);
            } else if v != 0.0 {
                return Err(param_err(
                    "labels",
                    format!("row {i}, label {l} is {v}; expected +1, -1 or 0 (unknown)"),
                ));
            }
        }
    }
    if lv.is_empty() {
        return Err(SolverError::Empty("known labels"));
    }
    let problem = TransductionProblem::new(
        Observed::from_triplets(t, n, &lr, &lc, &lv)?,
        Observed::from_triplets(d, n, &fr, &fc, &fv)?,
    )?;
    Ok(Prepared {
        x,
        problem,
        mean,
        scale,
    })
}

impl Prepared<'_> {
    /// The result in the table's layout and units: scores (t × n → n × t) and the imputed
    /// features (d × n, standardised → n × d, observed cells as given).
    fn finish(
        &self,
        s: &Mat<f64>,
        z: &Mat<f64>,
        lambda: f64,
        mu: f64,
        cv_label_error: f64,
        svm_c: Vec<f64>,
    ) -> Transduced {
        let Self { x, mean, scale, .. } = self;
        let (n, d) = x.shape();
        Transduced {
            scores: Mat::from_fn(n, s.nrows(), |i, l| s[(l, i)]),
            imputed: Mat::from_fn(n, d, |i, j| {
                let v = x[(i, j)];
                if v.is_nan() {
                    z[(j, i)] * scale[j] + mean[j]
                } else {
                    v
                }
            }),
            lambda,
            mu,
            cv_label_error,
            svm_c,
        }
    }
}

/// An imputation + SVM baseline of the transduction tables.
#[derive(Debug, Clone, PartialEq)]
pub enum Baseline {
    /// Nuclear-norm completion of the features (μ by cross-validation), then SVMs.
    FpcSvm(ValidFpcImputeParams),
    /// Missing cells set to their feature's observed mean, then SVMs.
    MeanSvm,
    /// Missing cells set to 0 (after any standardisation: the mean), then SVMs.
    ZeroSvm,
}

/// A user's table: what [`transduce`] and [`transduce_baseline`] complete.
#[derive(Debug, Clone, Copy)]
pub struct TransductionTable<'a> {
    /// The n × d features (NaN: missing).
    pub x: MatRef<'a, f64>,
    /// The n × t labels (+1 / −1 known, 0 unknown).
    pub y: MatRef<'a, f64>,
    /// Centre and scale every feature by the mean and standard deviation of its observed cells
    /// first (the imputed cells are returned in the original units).
    pub standardize: bool,
}

/// A [`Baseline`] on the same table as [`transduce`]: impute the features, then one linear SVM
/// per label with C chosen by cross-validation (`svm`). `lambda` and `cv_label_error` of the
/// result are NaN; `mu` is FPC's (NaN otherwise); `svm_c` holds each label's C.
pub fn transduce_baseline(
    table: TransductionTable<'_>,
    baseline: &Baseline,
    svm: &ValidSvmCvParams,
    rng: &mut GimcRng,
) -> Result<Transduced, SolverError> {
    let prepared = prepare(table)?;
    let problem = &prepared.problem;
    let (imputed, mu) = match baseline {
        Baseline::FpcSvm(p) => {
            let f = impute_fpc_cv(problem.features(), p, rng)?;
            (f.x, f.mu)
        }
        Baseline::MeanSvm => (impute_mean(problem.features()), f64::NAN),
        Baseline::ZeroSvm => (impute_zero(problem.features()), f64::NAN),
    };
    let svms = svm_per_label_cv(imputed.as_ref(), problem.labels(), svm, rng)?;
    Ok(prepared.finish(&svms.scores, &imputed, f64::NAN, mu, f64::NAN, svms.c))
}

/// MC-1 / MC-b transduction (the variant of `params`) of `table`: its n × d features (NaN:
/// missing) and n × t labels (+1 / −1 known, 0 unknown), standardised first when
/// `table.standardize`. Errors: shapes that disagree, infinite values, labels other than ±1 /
/// 0, no known label, or no observed feature cell.
pub fn transduce(
    table: TransductionTable<'_>,
    params: &ValidTransductionParams,
    cv: &ValidTransductionCvParams,
    rng: &mut GimcRng,
) -> Result<Transduced, SolverError> {
    let prepared = prepare(table)?;
    let problem = &prepared.problem;
    let (sol, chosen) = fit_transduction_cv(problem, params, cv, rng)?;
    let cv_label_error = cv
        .lambdas
        .iter()
        .position(|&l| l == chosen.lambda)
        .and_then(|li| {
            chosen.grids[li]
                .iter()
                .position(|&m| m == chosen.mu)
                .map(|mi| chosen.errors[li][mi])
        })
        .unwrap_or(f64::NAN);
    Ok(prepared.finish(
        &sol.label_scores(),
        &sol.imputed_features(),
        chosen.lambda,
        chosen.mu,
        cv_label_error,
        Vec::new(),
    ))
}
