//! The solvers' completion methods (MC-ALS, IMC by ALS + CG, nuclear-norm MC / IMC by FPC,
//! PU-IMC, bilinear regression) with λ (and PU-IMC's ρ) chosen on a seeded held-out part of Ω and refitted on all of
//! Ω: the factor models of [`complete`](crate::complete).

use std::collections::HashSet;

use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::memory::{MemoryEstimate, check_fits};
use gimc_linalg::observe::StopReason;
use gimc_linalg::rng::seeded;
use gimc_linalg::svd::thin_svd;
use gimc_linalg::{FeatureMatrix, Observed};
use gimc_solvers::linear::Targets;
use gimc_solvers::linear::regression::bilinear_regression;
use gimc_solvers::nuclear::{FpcParams, fit_nuclear_imc, fit_nuclear_mc};
use gimc_solvers::{
    ImcModel, ImcParams, ImcProblem, ImcStart, Observer, PuImcInputs, PuImcParams, Side, fit_imc,
    fit_mc_als, fit_pu_imc,
};
use rand::Rng;
use rand::seq::SliceRandom;

use crate::completion::method::CompletionMethod;
use crate::completion::select::{ValidCompletionSelectionParams, split_holdout};
use crate::error::{GimcError, Result, input_err, param_err};

/// One grid point's held-out score of a factor method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FactorScore {
    /// λ.
    pub lambda: f64,
    /// ρ (PU-IMC only).
    pub rho: Option<f64>,
    /// The held-out RMSE, or for PU-IMC the ROC AUC of the held-out positives against entries
    /// outside Ω.
    pub score: f64,
}

/// What [`complete`](crate::complete) returns for a solver's method.
#[derive(Debug, Clone)]
pub struct FactorSelection {
    /// The λ refitted on all of Ω.
    pub lambda: f64,
    /// The ρ refitted on all of Ω (PU-IMC only; the positives' weight is α = (1 + ρ)/2).
    pub rho: Option<f64>,
    /// Every grid point in grid order (ρ outer, λ inner), empty for a single point: nothing to
    /// choose.
    pub scores: Vec<FactorScore>,
    /// The model fitted on all of Ω with the chosen setting.
    pub model: ImcModel,
}

/// Entries drawn from outside Ω for PU-IMC's held-out AUC: as many as the held-out positives,
/// at least this many.
const PU_NEGATIVES_MIN: usize = 1000;

/// One fit of a solver's `method` at λ (and ρ): ridge λ for ALS and PU-IMC, the nuclear-norm
/// weight for FPC; the rank and at most `max_iter` outer iterations from `params` (ALS; FPC
/// keeps its own defaults), drawing from `seeded(params.seed)`.
fn fit_method(
    method: &CompletionMethod,
    sides: (Side<'_>, Side<'_>),
    omega: &Observed,
    (lambda, rho): (f64, f64),
    params: &ValidCompletionSelectionParams,
    observer: &mut (impl Observer + ?Sized),
) -> Result<ImcModel> {
    let (phi, psi) = sides;
    // the solvers take a sized observer: the reference is one
    let observer = &mut &mut *observer;
    let mut rng = seeded(params.seed);
    let imc = ImcParams::default()
        .with_rank(params.rank)
        .with_lambda(lambda)
        .with_max_outer(params.grid.max_iter);
    Ok(match method {
        CompletionMethod::McAls => {
            fit_mc_als(omega, &imc.check()?, ImcStart::Draw(&mut rng), observer)?
        }
        CompletionMethod::Imc => {
            let problem = ImcProblem::partial(phi, psi, omega)?;
            fit_imc(&problem, &imc.check()?, ImcStart::Draw(&mut rng), observer)?
        }
        CompletionMethod::McNuclear => {
            let p = FpcParams::default().with_mu(lambda).check()?;
            fit_nuclear_mc(omega, &p, &mut rng, observer)?
        }
        CompletionMethod::ImcNuclear => {
            let p = FpcParams::default().with_mu(lambda).check()?;
            let problem = ImcProblem::partial(phi, psi, omega)?;
            fit_nuclear_imc(&problem, &p, &mut rng, observer)?
        }
        CompletionMethod::PuImc => {
            let p = PuImcParams::default()
                .with_imc(imc)
                .with_alpha(0.5 * (1.0 + rho))
                .check()?;
            fit_pu_imc(
                PuImcInputs {
                    phi,
                    psi,
                    positives: omega,
                },
                &p,
                ImcStart::Draw(&mut rng),
                observer,
            )?
        }
        CompletionMethod::Bilinear => {
            let (Side::Features(x), Side::Features(y)) = (phi, psi) else {
                return Err(param_err(
                    "method",
                    "bilinear needs row and column features",
                ));
            };
            check_fits(&bilinear_estimate(x, y), params.memory)?;
            let z = bilinear_regression(x, y, Targets::Sparse(omega), params.rank)?;
            factor_pair(z.as_ref(), params.rank)?
        }
        CompletionMethod::Maps { .. } => {
            return Err(param_err(
                "method",
                format!("{} is not a factor method", method.name()),
            ));
        }
    })
}

/// The peak memory of bilinear regression on the sides `x` and `y`, before anything is
/// allocated: each side densified with its thin SVD and the SVD's workspace (about ten n × d
/// arrays, as reduced-rank regression measures on Bibtex), and Z (d_x × d_y).
fn bilinear_estimate(x: &FeatureMatrix, y: &FeatureMatrix) -> MemoryEstimate {
    let words = |a: usize, b: usize| (a as u64).saturating_mul(b as u64);
    let side = |f: &FeatureMatrix| words(f.nrows(), f.ncols()).saturating_mul(10);
    let bytes = side(x)
        .saturating_add(side(y))
        .saturating_add(words(x.ncols(), y.ncols()))
        .saturating_mul(8);
    MemoryEstimate {
        bytes,
        what: "bilinear regression",
        parameter: "features",
        detail: format!(
            "rows {} × {} and columns {} × {} densified with their SVDs",
            x.nrows(),
            x.ncols(),
            y.nrows(),
            y.ncols()
        ),
    }
}

/// W = U_k Σ_k^{1/2}, H = V_k Σ_k^{1/2} from the thin SVD of `z` at rank `rank`, so that
/// W Hᵀ = Z (bilinear regression's Z has rank at most `rank`): the factor model of a closed-form
/// Z.
fn factor_pair(z: MatRef<'_, f64>, rank: usize) -> Result<ImcModel> {
    let svd = thin_svd(z)?.truncate(rank);
    let root: Vec<f64> = svd.s.iter().map(|s| s.sqrt()).collect();
    let scale = |m: &Mat<f64>| Mat::from_fn(m.nrows(), root.len(), |i, j| m[(i, j)] * root[j]);
    Ok(ImcModel {
        w: scale(&svd.u),
        h: scale(&svd.v),
        objective_trace: Vec::new(),
        iterations: 0,
        stop_reason: StopReason::Converged,
    })
}

/// A solver's `method` with the grid of `params`: every λ (for PU-IMC every (λ, ρ), λ varying
/// fastest) fitted on Ω minus a seeded `holdout` fraction of it and scored on the held-out
/// entries, by RMSE, or for PU-IMC by the ROC AUC of the held-out positives against entries
/// drawn uniformly from outside Ω (unlabelled, so mostly negatives: as many as the hidden
/// positives, at least 1,000, at most all of them; RMSE would not do, since a model that
/// predicts 1 everywhere fits hidden positives perfectly). The best point (the first on ties)
/// is refitted on all of Ω; a single point is fitted on all of Ω directly.
pub(crate) fn select_factors(
    method: &CompletionMethod,
    sides: (Side<'_>, Side<'_>),
    omega: &Observed,
    params: &ValidCompletionSelectionParams,
    observer: &mut (impl Observer + ?Sized),
) -> Result<FactorSelection> {
    let pu = *method == CompletionMethod::PuImc;
    if *method == CompletionMethod::Bilinear && params.grid.lambdas.len() > 1 {
        return Err(param_err(
            "lambdas",
            "bilinear regression has no λ: give one value (it is not used)",
        ));
    }
    let rhos: &[f64] = if pu { &params.rhos } else { &[0.0] };
    let (Some(&lambda0), Some(&rho0)) = (params.grid.lambdas.first(), rhos.first()) else {
        return Err(GimcError::Empty("λ or ρ grid"));
    };
    let mut scores = Vec::new();
    let (lambda, rho) = if params.grid.lambdas.len() * rhos.len() == 1 {
        (lambda0, rho0)
    } else {
        let (train, held, truth) = split_holdout(omega, params.holdout, params.seed)?;
        let negatives = if pu {
            unobserved_sample(omega, held.len().max(PU_NEGATIVES_MIN), params.seed)?
        } else {
            Vec::new()
        };
        // the first point wins ties; a NaN score never wins
        let mut best = (lambda0, rho0, f64::NEG_INFINITY);
        for &rho in rhos {
            for &lambda in &params.grid.lambdas {
                let model =
                    fit_method(method, sides, &train, (lambda, rho), params, &mut *observer)?;
                let pred = model.predict_entries(sides.0, sides.1, &held)?;
                // the score to maximise: the AUC, or minus the RMSE
                let (score, gain) = if pu {
                    let neg = model.predict_entries(sides.0, sides.1, &negatives)?;
                    let auc = gimc_metrics::roc_auc(&pred, &neg)
                        .map_err(|e| input_err("held-out scores", e.to_string()))?;
                    (auc, auc)
                } else {
                    let se: f64 = pred.iter().zip(&truth).map(|(p, t)| (p - t).powi(2)).sum();
                    let rmse = (se / truth.len() as f64).sqrt();
                    (rmse, -rmse)
                };
                scores.push(FactorScore {
                    lambda,
                    rho: pu.then_some(rho),
                    score,
                });
                if gain > best.2 {
                    best = (lambda, rho, gain);
                }
            }
        }
        (best.0, best.1)
    };
    let model = fit_method(method, sides, omega, (lambda, rho), params, &mut *observer)?;
    Ok(FactorSelection {
        lambda,
        rho: pu.then_some(rho),
        scores,
        model,
    })
}

/// `count` distinct entries drawn uniformly (seeded) from outside Ω, or all of them when there
/// are fewer. Errors when Ω covers the whole matrix.
fn unobserved_sample(omega: &Observed, count: usize, seed: u64) -> Result<Vec<(usize, usize)>> {
    let (n, m) = (omega.nrows(), omega.ncols());
    let seen: HashSet<(usize, usize)> = omega.iter().map(|(i, j, _)| (i, j)).collect();
    let outside = n.saturating_mul(m).saturating_sub(seen.len());
    if outside == 0 {
        return Err(GimcError::Empty(
            "unobserved entries (PU needs entries outside Ω)",
        ));
    }
    let mut rng = seeded(seed ^ 0x6e65_6773);
    if outside <= 2 * count {
        // few enough to list: a random `count` of them
        let mut all: Vec<(usize, usize)> = (0..n)
            .flat_map(|i| (0..m).map(move |j| (i, j)))
            .filter(|e| !seen.contains(e))
            .collect();
        all.shuffle(&mut rng);
        all.truncate(count);
        return Ok(all);
    }
    let mut drawn = HashSet::with_capacity(count);
    let mut out = Vec::with_capacity(count);
    // rejection sampling: more than twice `count` entries lie outside Ω, so it ends
    while out.len() < count {
        let e = (rng.random_range(0..n), rng.random_range(0..m));
        if !seen.contains(&e) && drawn.insert(e) {
            out.push(e);
        }
    }
    Ok(out)
}
