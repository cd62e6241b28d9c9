//! GIMC completion with its settings chosen on held-out entries ([`select_completion`]): the
//! grid of `gimc complete --method gimc-lff|gimc-lnys|imc-rff|imc-nys` and of Python's
//! `MatrixCompletion(method="gimc-lff", …)`, written once.
//!
//! ```
//! use gimc::{CompletionData, CompletionSelectionParams, Gamma, select_completion};
//! use gimc::registry::MapRegistry;
//! use gimc_linalg::{FeatureMatrix, Observed};
//! use gimc_linalg::faer::Mat;
//!
//! // a 30 × 20 rank-1 matrix from 3 row and 2 column features, two thirds of it observed
//! let x = Mat::from_fn(30, 3, |i, j| ((i * 7 + j * 3) % 11) as f64 / 11.0 - 0.5);
//! let y = Mat::from_fn(20, 2, |i, j| ((i * 5 + j) % 7) as f64 / 7.0 - 0.5);
//! let (mut r, mut c, mut v) = (vec![], vec![], vec![]);
//! for i in 0..30 {
//!     for j in 0..20 {
//!         if (i + 2 * j) % 3 != 0 {
//!             r.push(i);
//!             c.push(j);
//!             v.push((x[(i, 0)] + x[(i, 1)]) * (y[(j, 0)] - y[(j, 1)]));
//!         }
//!     }
//! }
//! let omega = Observed::from_triplets(30, 20, &r, &c, &v)?;
//! let (x, y) = (FeatureMatrix::dense(x)?, FeatureMatrix::dense(y)?);
//! let params = CompletionSelectionParams::default()
//!     .with_ms(vec![20])
//!     .with_gammas(vec![Gamma::Value(0.5)])
//!     .with_lambdas(vec![1e-3, 1e-1])
//!     .with_rank(2)
//!     .with_max_iter(3)
//!     .check()?;
//! let registry = MapRegistry::builtin();
//! let data = CompletionData::new(&omega, &x, &y)?;
//! let sel = select_completion(&data, registry.family("lff")?, true, &params)?;
//! assert_eq!(sel.scores.len(), 2);
//! assert!(sel.chosen.holdout_relative_error.is_finite());
//! // the selection holds out part of Ω itself: validation entries of the caller's are refused
//! let with_val = data.with_validation(Some(&omega));
//! assert!(select_completion(&with_val, registry.family("lff")?, true, &params).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use gimc_linalg::memory::MemoryBudget;
use gimc_linalg::rng::{child, seeded};
use gimc_linalg::{Gamma, Observed};
use gimc_solvers::NoObserver;
use rand::seq::SliceRandom;

use crate::completion::data::CompletionData;
use crate::completion::fit::{CompletionInputs, fit_completion};
use crate::completion::model::CompletionModel;
use crate::completion::params::CompletionParams;
use crate::error::Result;
use crate::error::param_err;
use crate::grid::Grid;
use crate::registry::DynFamily;

gimc_linalg::params! {
    /// The grid and settings of [`select_completion`]. Build from [`Default`] with the `with_*`
    /// methods; [`CompletionSelectionParams::check`] validates them into the
    /// [`ValidCompletionSelectionParams`] it takes.
    #[derive(Debug, Clone, PartialEq)]
    pub struct CompletionSelectionParams => ValidCompletionSelectionParams {
        /// The m × γ × λ grid and the iteration cap of every fit (0 when the maps are not
        /// learned): m random directions / landmarks of both maps, γ resolved on each side's
        /// features, the ridge (for the solvers' methods, the penalty) weights λ. Default m
        /// {200}, γ {`scale`}, λ {0.1}, 30 iterations.
        pub grid: Grid = Grid::new(vec![200], vec![Gamma::Scale(1.0)], vec![0.1], 30) => with_grid,
        /// Rank k of the factors. Default 10.
        pub rank: usize = 10 => with_rank,
        /// Whether the row map is learned (when learning). Default true.
        pub learn_rows: bool = true,
        /// Whether the column map is learned (when learning). Default true.
        pub learn_cols: bool = true,
        /// PU-IMC's grid of ρ ∈ [0, 1), the assumed fraction of positives hidden among the
        /// unlabelled entries ([`CompletionMethod::PuImc`](crate::CompletionMethod::PuImc)).
        /// Default {0.5}.
        pub rhos: Vec<f64> = vec![0.5] => with_rhos,
        /// Fraction of the observed entries held out to score the grid, in (0, 1). Default 0.1.
        pub holdout: f64 = 0.1 => with_holdout,
        /// Validation patience of every grid point's fit ([`CompletionParams::patience`]): its
        /// learning stops once the held-out error has not beaten its best for this many outer
        /// iterations. Default `None` (every fit runs to `max_iter`).
        pub patience: Option<usize> = None => with_patience,
        /// Seed of the split and of the maps' draws. Default 0.
        pub seed: u64 = 0 => with_seed,
        /// Memory budget of every fit. Default: the machine's.
        pub memory: MemoryBudget = MemoryBudget::default() => with_memory,
    }
    /// Checks non-empty grids, every fit's parameters ([`CompletionParams::check`] at each λ),
    /// holdout ∈ (0, 1) and every ρ ∈ [0, 1).
    check |this| -> crate::GimcError {
        this.grid.check()?;
        if !(this.holdout > 0.0 && this.holdout < 1.0) {
            return Err(param_err(
                "holdout",
                format!("must be in (0, 1), got {}", this.holdout),
            ));
        }
        for &lambda in &this.grid.lambdas {
            this.fit_params(lambda, this.grid.max_iter, true).check()?;
        }
        if this.rhos.is_empty() {
            return Err(param_err("rho", "give at least one value"));
        }
        if let Some(rho) = this.rhos.iter().find(|r| !(0.0..1.0).contains(*r)) {
            return Err(param_err("rho", format!("must be in [0, 1), got {rho}")));
        }
    }
}

impl CompletionSelectionParams {
    crate::grid::grid_setters!();

    /// Sets which maps are learned.
    pub fn with_learn(mut self, rows: bool, cols: bool) -> Self {
        self.learn_rows = rows;
        self.learn_cols = cols;
        self
    }

    /// One fit's parameters at λ with at most `iters` outer iterations.
    fn fit_params(&self, lambda: f64, iters: usize, learn: bool) -> CompletionParams {
        CompletionParams::default()
            .with_rank(self.rank)
            .with_lambda(lambda)
            .with_max_iter(if learn { iters } else { 0 })
            .with_learn_rows(learn && self.learn_rows)
            .with_learn_cols(learn && self.learn_cols)
            .with_patience(self.patience)
            .with_memory(self.memory)
    }
}

/// One grid point's held-out score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompletionScore {
    /// m.
    pub m: usize,
    /// γ as given.
    pub gamma: Gamma,
    /// λ.
    pub lambda: f64,
    /// The outer iteration with the lowest held-out error.
    pub iterations: usize,
    /// ‖A − Â‖ / ‖A‖ on the held-out entries at that iteration.
    pub holdout_relative_error: f64,
}

/// What [`select_completion`] returns.
#[derive(Debug)]
pub struct CompletionSelection {
    /// The chosen setting refitted on every observed entry.
    pub model: CompletionModel,
    /// The chosen grid point.
    pub chosen: CompletionScore,
    /// γ of the chosen point resolved on the row and on the column features.
    pub gamma_resolved: (f64, f64),
    /// Every grid point, in the order m, γ, λ.
    pub scores: Vec<CompletionScore>,
}

/// GIMC completion (Algorithm 1 on the Ω of `data`, with its features) with maps of `family`
/// on both sides, learned
/// when `learn` (which sides: [`CompletionSelectionParams::learn_rows`] / `learn_cols`), else
/// kept at their random draw (IMC-RFF / IMC-NYS). Every (m, γ, λ) of the grid is fitted on Ω
/// minus a seeded held-out part and scored by the relative error on it after every outer
/// iteration; the best point (the first of equals, in grid order) and its iteration count are
/// refitted on all of Ω. Draws: the held-out part that every completion method of
/// [`complete`](crate::complete) draws (a shuffle of Ω's entries in canonical order by
/// `seeded(seed ^ 0x686f6c64)`), the row and column
/// maps from child streams 1 and 2 of `seeded(seed)`, each fit from stream 3.
///
/// Errors: `data` with validation entries ([`CompletionData::with_validation`]) is refused, as
/// the selection scores its own held-out part of Ω.
pub fn select_completion(
    data: &CompletionData<'_>,
    family: &DynFamily,
    learn: bool,
    params: &ValidCompletionSelectionParams,
) -> Result<CompletionSelection> {
    if data.validation.is_some() {
        return Err(param_err(
            "validation",
            "select_completion scores its own held-out part of Ω; pass data without validation entries",
        ));
    }
    let (omega, x, y) = (data.omega, data.x, data.y);
    // the held-out part as every completion method draws it
    let (train, held_pairs, held_values) = split_holdout(omega, params.holdout, params.seed)?;
    let (held_rows, held_cols): (Vec<usize>, Vec<usize>) = held_pairs.into_iter().unzip();
    let held = Observed::from_triplets(
        omega.nrows(),
        omega.ncols(),
        &held_rows,
        &held_cols,
        &held_values,
    )?;
    let root = seeded(params.seed);
    let build = |m: usize, gamma: Gamma| -> Result<_> {
        Ok((
            family.build(x, m, gamma.resolve(x), &mut child(&root, 1))?,
            family.build(y, m, gamma.resolve(y), &mut child(&root, 2))?,
        ))
    };
    let train_data = CompletionData::new(&train, x, y)?;
    let mut scores = Vec::new();
    for &m in &params.grid.ms {
        for &gamma in &params.grid.gammas {
            for &lambda in &params.grid.lambdas {
                let (rm, cm) = build(m, gamma)?;
                let fit = fit_completion(
                    CompletionInputs {
                        data: train_data.with_validation(Some(&held)),
                        row_map: rm,
                        col_map: cm,
                    },
                    &params
                        .fit_params(lambda, params.grid.max_iter, learn)
                        .check()?,
                    &mut child(&root, 3),
                    &mut NoObserver,
                )?;
                let (err, it) = fit
                    .best
                    .as_ref()
                    .map_or((f64::INFINITY, 0), |b| (b.error, b.iteration));
                scores.push(CompletionScore {
                    m,
                    gamma,
                    lambda,
                    iterations: it,
                    holdout_relative_error: err,
                });
            }
        }
    }
    let chosen = scores
        .iter()
        .copied()
        .reduce(|best, s| {
            if s.holdout_relative_error < best.holdout_relative_error {
                s
            } else {
                best
            }
        })
        .ok_or_else(|| param_err::<crate::error::GimcError>("grid", "is empty"))?;
    let (rm, cm) = build(chosen.m, chosen.gamma)?;
    let data = CompletionData::new(omega, x, y)?;
    let fit = fit_completion(
        CompletionInputs {
            data,
            row_map: rm,
            col_map: cm,
        },
        &params
            .fit_params(chosen.lambda, chosen.iterations, learn)
            .check()?,
        &mut child(&root, 3),
        &mut NoObserver,
    )?;
    Ok(CompletionSelection {
        model: fit.model,
        chosen,
        gamma_resolved: (chosen.gamma.resolve(x), chosen.gamma.resolve(y)),
        scores,
    })
}

/// Ω split at random (seeded by `seed`) into a training part and a held-out `holdout`
/// fraction: (the training Ω, the held-out pairs, their values): the first round(holdout · |Ω|)
/// entries of a shuffle of Ω in its canonical order by `seeded(seed ^ 0x686f6c64)`. Every
/// completion method draws this split, the GIMC map methods
/// ([`select_completion`](crate::select_completion)) included.
#[allow(clippy::type_complexity)]
pub(crate) fn split_holdout(
    omega: &Observed,
    holdout: f64,
    seed: u64,
) -> Result<(Observed, Vec<(usize, usize)>, Vec<f64>)> {
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
