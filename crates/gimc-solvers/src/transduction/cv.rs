//! Choosing λ and μ by cross-validation over Ω_X and Ω_Y with the held-out label error as
//! criterion ([`cross_validate_transduction`]), and the refit on the whole problem.

use gimc_linalg::rng::{GimcRng, child};
use rand::seq::SliceRandom;
use rayon::prelude::*;

use crate::SolverError;
use crate::error::param_err;
use crate::iter::NoObserver;

use super::{
    TransductionProblem, TransductionSolution, ValidTransductionParams, fit_transduction_path,
    mu_grid,
};

gimc_linalg::params! {
    /// Settings of [`cross_validate_transduction`]. Build from [`Default`] with the `with_*`
    /// methods; [`TransductionCvParams::check`] validates them into the
    /// [`ValidTransductionCvParams`] the cross-validation takes.
    #[derive(Debug, Clone, PartialEq)]
    pub struct TransductionCvParams => ValidTransductionCvParams {
        /// Number of folds (≥ 2). Default 5.
        pub folds: usize = 5 => with_folds,
        /// λ candidates. Default {1e-3, 1e-2, 1e-1, 1}.
        pub lambdas: Vec<f64> = vec![1e-3, 1e-2, 1e-1, 1.0] => with_lambdas,
        /// Length K of the μ grid μ_k = σ_1 η_μ^k, k = 1..=K (σ_1 per λ on the whole problem).
        /// Default 8.
        pub mu_count: usize = 8 => with_mu_count,
    }
    /// Checks folds ≥ 2, at least one λ (each positive) and mu_count ≥ 1 (that the observed
    /// labels fill the folds is checked against the problem).
    check |this| -> crate::SolverError {
        if this.folds < 2 {
            return Err(param_err(
                "folds",
                format!("must be >= 2, got {}", this.folds),
            ));
        }
        if this.lambdas.is_empty() || this.mu_count == 0 {
            return Err(param_err(
                "lambdas / mu_count",
                "need at least one λ and one μ",
            ));
        }
        for &lambda in &this.lambdas {
            crate::error::check_pos("lambda", lambda)?;
        }
    }
}

/// The outcome of [`cross_validate_transduction`].
#[derive(Debug, Clone, PartialEq)]
pub struct TransductionCv {
    /// The chosen λ.
    pub lambda: f64,
    /// The chosen μ.
    pub mu: f64,
    /// The μ grid of every λ (rows in the order of the λ candidates).
    pub grids: Vec<Vec<f64>>,
    /// Mean held-out label error (%) for every (λ, μ), same layout as `grids`.
    pub errors: Vec<Vec<f64>>,
}

/// Assigns each of `len` entries to one of `folds` folds at random (balanced sizes).
pub(crate) fn fold_assignment(len: usize, folds: usize, rng: &mut GimcRng) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..len).collect();
    idx.shuffle(rng);
    let mut fold = vec![0; len];
    for (pos, &e) in idx.iter().enumerate() {
        fold[e] = pos % folds.max(1);
    }
    fold
}

/// Chooses λ and μ by `folds`-fold cross-validation: Ω_Y and Ω_X are each split into folds at
/// random; for every fold and λ one continuation run on the other folds gives the iterate at
/// every μ of that λ's grid, scored by the label error (%) on the held-out labels. The (λ, μ)
/// with the lowest mean error wins (ties: the larger μ, then the first λ). The runs are
/// parallel (rayon); each draws from its own stream of `rng`.
pub fn cross_validate_transduction(
    problem: &TransductionProblem,
    params: &ValidTransductionParams,
    cv: &ValidTransductionCvParams,
    rng: &mut GimcRng,
) -> Result<TransductionCv, SolverError> {
    if problem.labels.len() < cv.folds {
        return Err(param_err(
            "folds",
            format!(
                "{} observed labels cannot be split into {} folds",
                problem.labels.len(),
                cv.folds
            ),
        ));
    }
    let label_fold = fold_assignment(problem.labels.len(), cv.folds, rng);
    let feature_fold = fold_assignment(problem.features.len(), cv.folds, rng);
    let lambda_params = cv
        .lambdas
        .iter()
        .map(|&lambda| params.with_lambda(lambda).check())
        .collect::<Result<Vec<_>, _>>()?;
    let grids = lambda_params
        .iter()
        .map(|p| mu_grid(problem, p, cv.mu_count))
        .collect::<Result<Vec<_>, _>>()?;
    let tasks: Vec<(usize, usize)> = (0..cv.lambdas.len())
        .flat_map(|l| (0..cv.folds).map(move |f| (l, f)))
        .collect();
    let base = rng.clone();
    // (wrong, scored) counts per μ for every (λ, fold)
    let counts = tasks
        .par_iter()
        .map(|&(l, f)| -> Result<Vec<(usize, usize)>, SolverError> {
            let train_y: Vec<usize> = (0..label_fold.len())
                .filter(|&e| label_fold[e] != f)
                .collect();
            let train_x: Vec<usize> = (0..feature_fold.len())
                .filter(|&e| feature_fold[e] != f)
                .collect();
            let sub = problem.subset(&train_y, &train_x)?;
            let mut trng = child(&base, (l * cv.folds + f) as u64);
            let path = fit_transduction_path(
                &sub,
                &lambda_params[l],
                &grids[l],
                &mut trng,
                &mut NoObserver,
            )?;
            Ok(path
                .solutions
                .iter()
                .map(|s| {
                    let mut wrong = 0;
                    let mut scored = 0;
                    for (e, (i, j, y)) in problem.labels.iter().enumerate() {
                        if label_fold[e] == f {
                            scored += 1;
                            if y * (s.z[(i, j)] + s.bias[i]) <= 0.0 {
                                wrong += 1;
                            }
                        }
                    }
                    (wrong, scored)
                })
                .collect())
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut errors = vec![vec![0.0; cv.mu_count]; cv.lambdas.len()];
    for (l, row) in errors.iter_mut().enumerate() {
        for (k, e) in row.iter_mut().enumerate() {
            let (mut wrong, mut scored) = (0, 0);
            for f in 0..cv.folds {
                if let Some(&(w, s)) = counts[l * cv.folds + f].get(k) {
                    wrong += w;
                    scored += s;
                }
            }
            *e = if scored == 0 {
                f64::INFINITY
            } else {
                100.0 * wrong as f64 / scored as f64
            };
        }
    }
    let (mut best_l, mut best_k) = (0, 0);
    for k in 0..cv.mu_count {
        for l in 0..cv.lambdas.len() {
            if errors[l][k] < errors[best_l][best_k] {
                best_l = l;
                best_k = k;
            }
        }
    }
    Ok(TransductionCv {
        lambda: cv.lambdas[best_l],
        mu: grids[best_l][best_k],
        grids,
        errors,
    })
}

/// Cross-validates λ and μ ([`cross_validate_transduction`]) and refits on the whole problem
/// with the chosen pair (continuation along the chosen λ's grid down to the chosen μ).
pub fn fit_transduction_cv(
    problem: &TransductionProblem,
    params: &ValidTransductionParams,
    cv: &ValidTransductionCvParams,
    rng: &mut GimcRng,
) -> Result<(TransductionSolution, TransductionCv), SolverError> {
    let result = cross_validate_transduction(problem, params, cv, rng)?;
    let p = params.with_lambda(result.lambda).check()?;
    let grid: Vec<f64> = result
        .grids
        .iter()
        .zip(&cv.lambdas)
        .find(|(_, l)| **l == result.lambda)
        .map(|(g, _)| g.iter().copied().take_while(|&m| m >= result.mu).collect())
        .unwrap_or_else(|| vec![result.mu]);
    let mut frng = child(rng, 0x0066_6974);
    let path = fit_transduction_path(problem, &p, &grid, &mut frng, &mut NoObserver)?;
    let sol = path
        .solutions
        .into_iter()
        .last()
        .ok_or(SolverError::Empty("continuation stages"))?;
    Ok((sol, result))
}
