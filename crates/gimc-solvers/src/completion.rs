//! One entry point for the completion methods of `gimc complete` and the Python
//! `MatrixCompletion`: MC-ALS, IMC by ALS + CG, nuclear-norm MC / IMC by FPC and PU-IMC, with a
//! λ grid chosen by the RMSE on a seeded held-out part of Ω and refitted on all of Ω.
//!
//! ```
//! use gimc_linalg::Observed;
//! use gimc_solvers::{NoObserver, Side};
//! use gimc_solvers::completion::{CompletionMethod, SelectedCompletion, fit_selected};
//!
//! // a rank-1 10 × 8 matrix, 60 % of it observed
//! let (mut r, mut c, mut v) = (vec![], vec![], vec![]);
//! for i in 0..10 {
//!     for j in 0..8 {
//!         if (i * 7 + j * 3) % 5 < 3 {
//!             r.push(i);
//!             c.push(j);
//!             v.push((i as f64 + 1.0) * (j as f64 - 3.5));
//!         }
//!     }
//! }
//! let omega = Observed::from_triplets(10, 8, &r, &c, &v)?;
//! let fit: SelectedCompletion = fit_selected(
//!     CompletionMethod::McNuclear,
//!     Side::Identity(10),
//!     Side::Identity(8),
//!     &omega,
//!     &[1.0, 0.01],
//!     0.2,
//!     2,
//!     50,
//!     7,
//!     &mut NoObserver,
//! )?;
//! assert_eq!(fit.holdout_rmse.len(), 2);
//! let z = fit.model.predict_entries(Side::Identity(10), Side::Identity(8), &[(1, 2)])?;
//! assert!((z[0] - 2.0 * -1.5).abs() < 0.5, "{z:?}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use gimc_linalg::Observed;
use gimc_linalg::rng::seeded;
use rand::Rng;
use rand::seq::SliceRandom;

use crate::error::param_err;
use crate::nuclear::{FpcParams, fit_nuclear_imc, fit_nuclear_mc};
use crate::{
    ImcModel, ImcParams, ImcProblem, Observer, PuImcParams, Side, SolverError, fit_imc, fit_mc_als,
    fit_pu_imc,
};

/// A completion method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CompletionMethod {
    /// Low-rank MC by ALS (no features).
    McAls,
    /// IMC by ALS + CG (features on either side; an identity side is plain MC there).
    Imc,
    /// Nuclear-norm MC by FPC (no features; λ is the nuclear-norm weight μ, the rank unused).
    McNuclear,
    /// Nuclear-norm IMC by FPC (features on at least one side).
    ImcNuclear,
    /// PU (biased) IMC: Ω holds the positives, every other entry is an unlabelled 0 weighted
    /// 1 − α with α = (1 + ρ)/2.
    PuImc {
        /// The assumed fraction ρ ∈ [0, 1) of positives hidden among the unlabelled entries.
        rho: f64,
    },
}

impl CompletionMethod {
    /// From the command line's name (`mc-als`, `imc`, `mc-nuclear`, `imc-nuclear`, `pu-imc`;
    /// `rho` is used by `pu-imc` only).
    pub fn from_name(name: &str, rho: f64) -> Result<Self, SolverError> {
        Ok(match name {
            "mc-als" => Self::McAls,
            "imc" => Self::Imc,
            "mc-nuclear" => Self::McNuclear,
            "imc-nuclear" => Self::ImcNuclear,
            "pu-imc" => Self::PuImc { rho },
            other => {
                return Err(param_err(
                    "method",
                    format!(
                        "unknown method `{other}` (choose mc-als, imc, mc-nuclear, imc-nuclear \
                         or pu-imc)"
                    ),
                ));
            }
        })
    }

    /// The command line's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::McAls => "mc-als",
            Self::Imc => "imc",
            Self::McNuclear => "mc-nuclear",
            Self::ImcNuclear => "imc-nuclear",
            Self::PuImc { .. } => "pu-imc",
        }
    }

    /// Checks the method against the sides (MC methods take no features, nuclear-norm IMC
    /// needs some) and ρ.
    pub fn check(self, phi: Side<'_>, psi: Side<'_>) -> Result<(), SolverError> {
        let features = !matches!((phi, psi), (Side::Identity(_), Side::Identity(_)));
        match self {
            Self::McAls | Self::McNuclear if features => Err(param_err(
                "method",
                format!(
                    "{} takes no features; use {}",
                    self.name(),
                    if self == Self::McAls {
                        "imc"
                    } else {
                        "imc-nuclear"
                    }
                ),
            )),
            Self::ImcNuclear if !features => Err(param_err(
                "method",
                "imc-nuclear needs row and/or column features",
            )),
            Self::PuImc { rho } if !(0.0..1.0).contains(&rho) => {
                Err(param_err("rho", format!("must be in [0, 1), got {rho}")))
            }
            _ => Ok(()),
        }
    }
}

/// Fits `method` with penalty `lambda` (ridge for ALS and PU-IMC, the nuclear-norm weight for
/// FPC), rank `rank` and at most `max_iter` outer iterations (ALS; FPC keeps its own
/// defaults), drawing from `seeded(seed)`.
#[allow(clippy::too_many_arguments)]
pub fn fit_method(
    method: CompletionMethod,
    phi: Side<'_>,
    psi: Side<'_>,
    omega: &Observed,
    lambda: f64,
    rank: usize,
    max_iter: usize,
    seed: u64,
    observer: &mut impl Observer,
) -> Result<ImcModel, SolverError> {
    method.check(phi, psi)?;
    let mut rng = seeded(seed);
    let imc = ImcParams::default()
        .with_rank(rank)
        .with_lambda(lambda)
        .with_max_outer(max_iter);
    match method {
        CompletionMethod::McAls => fit_mc_als(omega, &imc.check()?, None, &mut rng, observer),
        CompletionMethod::Imc => {
            let problem = ImcProblem::partial(phi, psi, omega)?;
            fit_imc(&problem, &imc.check()?, None, &mut rng, observer)
        }
        CompletionMethod::McNuclear | CompletionMethod::ImcNuclear => {
            let p = FpcParams::default().with_mu(lambda).check()?;
            if method == CompletionMethod::McNuclear {
                fit_nuclear_mc(omega, &p, &mut rng, observer)
            } else {
                let problem = ImcProblem::partial(phi, psi, omega)?;
                fit_nuclear_imc(&problem, &p, &mut rng, observer)
            }
        }
        CompletionMethod::PuImc { rho } => {
            let p = PuImcParams::default()
                .with_imc(imc)
                .with_alpha(0.5 * (1.0 + rho))
                .check()?;
            fit_pu_imc(phi, psi, omega, &p, None, &mut rng, observer)
        }
    }
}

/// The result of [`fit_selected`].
#[derive(Debug, Clone)]
pub struct SelectedCompletion {
    /// The λ refitted on all of Ω.
    pub lambda: f64,
    /// (λ, held-out RMSE) of every grid value (empty for a single λ: nothing to choose).
    pub holdout_rmse: Vec<(f64, f64)>,
    /// The model fitted on all of Ω with `lambda`.
    pub model: ImcModel,
}

/// Fits `method` for every λ of `lambdas` on Ω minus a seeded `holdout` fraction of it, keeps
/// the λ with the lowest RMSE on the held-out entries (the first on ties), and refits it on
/// all of Ω. A single λ is fitted on all of Ω directly. `observer` sees every fit's
/// iterations (and may stop them, e.g. on Ctrl-C).
#[allow(clippy::too_many_arguments)]
pub fn fit_selected(
    method: CompletionMethod,
    phi: Side<'_>,
    psi: Side<'_>,
    omega: &Observed,
    lambdas: &[f64],
    holdout: f64,
    rank: usize,
    max_iter: usize,
    seed: u64,
    observer: &mut impl Observer,
) -> Result<SelectedCompletion, SolverError> {
    method.check(phi, psi)?;
    let fit_on = |method, omega: &Observed, lambda, observer: &mut _| {
        fit_method(
            method, phi, psi, omega, lambda, rank, max_iter, seed, observer,
        )
    };
    let [first, ..] = lambdas else {
        return Err(SolverError::Empty("λ grid"));
    };
    let mut holdout_rmse = Vec::new();
    let lambda = if lambdas.len() == 1 {
        *first
    } else {
        let (train, held, truth) = split_holdout(omega, holdout, seed)?;
        let mut best = (*first, f64::INFINITY);
        for &lambda in lambdas {
            let model = fit_on(method, &train, lambda, &mut *observer)?;
            let pred = model.predict_entries(phi, psi, &held)?;
            let se: f64 = pred.iter().zip(&truth).map(|(p, t)| (p - t).powi(2)).sum();
            let rmse = (se / truth.len() as f64).sqrt();
            holdout_rmse.push((lambda, rmse));
            if rmse < best.1 {
                best = (lambda, rmse);
            }
        }
        best.0
    };
    let model = fit_on(method, omega, lambda, &mut *observer)?;
    Ok(SelectedCompletion {
        lambda,
        holdout_rmse,
        model,
    })
}

/// Ω split at random (seeded by `seed`) into a training part and a held-out `holdout`
/// fraction: (the training Ω, the held-out pairs, their values).
#[allow(clippy::type_complexity)]
fn split_holdout(
    omega: &Observed,
    holdout: f64,
    seed: u64,
) -> Result<(Observed, Vec<(usize, usize)>, Vec<f64>), SolverError> {
    if !(holdout > 0.0 && holdout < 1.0) {
        return Err(param_err(
            "holdout",
            format!("must be in (0, 1), got {holdout}"),
        ));
    }
    let entries: Vec<(usize, usize, f64)> = omega.iter().collect();
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.shuffle(&mut seeded(seed ^ 0x686f_6c64));
    let n_out = (holdout * entries.len() as f64).round() as usize;
    if n_out == 0 || n_out >= entries.len() {
        return Err(param_err(
            "holdout",
            format!(
                "{holdout} of {} observed entries leaves one side of the split empty",
                entries.len()
            ),
        ));
    }
    let (out, keep) = order.split_at(n_out);
    let part = |idx: &[usize], k: usize| -> Vec<usize> {
        idx.iter()
            .map(|&e| if k == 0 { entries[e].0 } else { entries[e].1 })
            .collect()
    };
    let kept_vals: Vec<f64> = keep.iter().map(|&e| entries[e].2).collect();
    let train = Observed::from_triplets(
        omega.nrows(),
        omega.ncols(),
        &part(keep, 0),
        &part(keep, 1),
        &kept_vals,
    )?;
    let held: Vec<(usize, usize)> = out.iter().map(|&e| (entries[e].0, entries[e].1)).collect();
    let truth: Vec<f64> = out.iter().map(|&e| entries[e].2).collect();
    Ok((train, held, truth))
}

/// The result of [`fit_selected_pu`].
#[derive(Debug, Clone)]
pub struct SelectedPu {
    /// The λ refitted on all of Ω.
    pub lambda: f64,
    /// The ρ refitted on all of Ω (the positives' weight is α = (1 + ρ)/2).
    pub rho: f64,
    /// (λ, ρ, held-out AUC) of every grid pair (empty for a single pair: nothing to choose).
    pub holdout_auc: Vec<(f64, f64, f64)>,
    /// The model fitted on all of Ω with `lambda` and `rho`.
    pub model: ImcModel,
}

/// Entries drawn from outside Ω for the held-out AUC: as many as the held-out positives, at
/// least this many.
const PU_NEGATIVES_MIN: usize = 1000;

/// PU-IMC with λ and ρ chosen on held-out positives. The observed entries are positives; a
/// seeded `holdout` fraction of them is hidden, every (λ, ρ) of the grids is fitted on the
/// rest, and scored by the ROC AUC of the hidden positives against entries drawn uniformly from
/// outside Ω (unlabelled, so mostly negatives: as many as the hidden positives, at least
/// 1,000, at most all of them). RMSE would not do here: a model that predicts
/// 1 everywhere fits the hidden positives perfectly. The best pair (the first on ties, λ
/// varying fastest) is refitted on all of Ω; a single pair is fitted on all of Ω directly.
#[allow(clippy::too_many_arguments)]
pub fn fit_selected_pu(
    phi: Side<'_>,
    psi: Side<'_>,
    omega: &Observed,
    lambdas: &[f64],
    rhos: &[f64],
    holdout: f64,
    rank: usize,
    max_iter: usize,
    seed: u64,
    observer: &mut impl Observer,
) -> Result<SelectedPu, SolverError> {
    let (Some(&lambda0), Some(&rho0)) = (lambdas.first(), rhos.first()) else {
        return Err(SolverError::Empty("λ or ρ grid"));
    };
    for &rho in rhos {
        CompletionMethod::PuImc { rho }.check(phi, psi)?;
    }
    let fit_on = |method, omega: &Observed, lambda, observer: &mut _| {
        fit_method(
            method, phi, psi, omega, lambda, rank, max_iter, seed, observer,
        )
    };
    let mut holdout_auc = Vec::new();
    let (lambda, rho) = if lambdas.len() * rhos.len() == 1 {
        (lambda0, rho0)
    } else {
        let (train, held, _) = split_holdout(omega, holdout, seed)?;
        let negatives = unobserved_sample(omega, held.len().max(PU_NEGATIVES_MIN), seed)?;
        let mut best = (lambda0, rho0, f64::NEG_INFINITY);
        for &rho in rhos {
            for &lambda in lambdas {
                let model = fit_on(CompletionMethod::PuImc { rho }, &train, lambda, observer)?;
                let pos = model.predict_entries(phi, psi, &held)?;
                let neg = model.predict_entries(phi, psi, &negatives)?;
                let auc =
                    gimc_metrics::roc_auc(&pos, &neg).map_err(|e| SolverError::InvalidInput {
                        what: "held-out scores",
                        reason: e.to_string(),
                    })?;
                holdout_auc.push((lambda, rho, auc));
                if auc > best.2 {
                    best = (lambda, rho, auc);
                }
            }
        }
        (best.0, best.1)
    };
    let model = fit_on(
        CompletionMethod::PuImc { rho },
        omega,
        lambda,
        &mut *observer,
    )?;
    Ok(SelectedPu {
        lambda,
        rho,
        holdout_auc,
        model,
    })
}

/// `count` distinct entries drawn uniformly (seeded) from outside Ω, or all of them when there
/// are fewer. Errors when Ω covers the whole matrix.
fn unobserved_sample(
    omega: &Observed,
    count: usize,
    seed: u64,
) -> Result<Vec<(usize, usize)>, SolverError> {
    let (n, m) = (omega.nrows(), omega.ncols());
    let seen: std::collections::HashSet<(usize, usize)> =
        omega.iter().map(|(i, j, _)| (i, j)).collect();
    let outside = n.saturating_mul(m).saturating_sub(seen.len());
    if outside == 0 {
        return Err(SolverError::Empty(
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
    let mut drawn = std::collections::HashSet::with_capacity(count);
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
