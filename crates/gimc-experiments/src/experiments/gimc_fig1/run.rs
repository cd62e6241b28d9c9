//! The runs: every method on every toy, fraction and seed.

use std::time::Instant;

use gimc_data::synth::{Fig1Params, Fig1Toy, gimc_fig1_toy, observe};
use gimc_linalg::FeatureMatrix;
use gimc_linalg::rng::{child, seeded};
use gimc_metrics::relative_frobenius_error;
use rayon::prelude::*;

use super::grid::{Setting, select};
use super::methods::{Fig1Task, fig1_methods};
use super::{FRACTIONS, RANK, VALIDATION_FRACTION};
use crate::ExperimentError;
use crate::experiments::mc1_common::SequentialFaer;
use crate::experiments::support::{holdout, observed_from, rmse_on};

/// The sizes of one run of the experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct Fig1Config {
    /// Toy parameters (the paper's by default).
    pub toy: Fig1Params,
    /// Observed fractions.
    pub fractions: Vec<f64>,
    /// Number of seeds (independent toys and observed sets).
    pub seeds: usize,
    /// Quick form (smaller grids).
    pub quick: bool,
}

impl Fig1Config {
    /// The form run by `reproduce` (`quick`: 2 seeds and smaller grids; full: 5 seeds).
    pub fn new(quick: bool) -> Self {
        Self {
            toy: Fig1Params::default(),
            fractions: FRACTIONS.to_vec(),
            seeds: if quick { 2 } else { 5 },
            quick,
        }
    }
}

/// The outcome of one method on one (seed, fraction).
#[derive(Debug, Clone, PartialEq)]
pub struct Fig1Cell {
    /// Method name.
    pub method: &'static str,
    /// Seed index.
    pub seed: usize,
    /// Observed fraction.
    pub fraction: f64,
    /// The setting chosen on the validation split.
    pub chosen: Setting,
    /// Its validation RMSE.
    pub validation_rmse: f64,
    /// Relative error over all entries after refitting on all of Ω.
    pub test_error: f64,
    /// Grid points fitted during selection.
    pub fits: usize,
    /// Wall-clock seconds of the grid search and the refit.
    pub seconds: f64,
}

/// Runs every method of [`fig1_methods`] on every (seed, fraction) of `config`, (seed, fraction)
/// pairs in parallel; returns the cells in (seed, fraction, method) order.
pub fn run_fig1(config: &Fig1Config, seed: u64) -> Result<Vec<Fig1Cell>, ExperimentError> {
    let mut panels = run_fig1_panels(std::slice::from_ref(config), seed)?;
    Ok(panels.pop().unwrap_or_default())
}

/// [`run_fig1`] for several configurations (the figure's panels) as one parallel loop over
/// every (panel, seed, fraction): each task's cells are those `run_fig1` gives for its panel
/// (its random streams depend on the seed and fraction only), and one loop keeps both cores
/// busy across the end of a panel, where the last, longest tasks would leave one idle (a task
/// takes from 10 to 60 s on one core). Returns one list of cells per configuration.
///
/// The tasks fill every core through rayon, so faer's own parallelism is switched off for the
/// duration ([`SequentialFaer`]): every matrix here is at most 200 × 3200 and nested faer
/// threads inside the tasks only synchronise.
pub fn run_fig1_panels(
    configs: &[Fig1Config],
    seed: u64,
) -> Result<Vec<Vec<Fig1Cell>>, ExperimentError> {
    let _seq = SequentialFaer::new();
    let base_rng = seeded(seed);
    let methods = fig1_methods();
    let toys: Vec<Vec<Fig1Toy>> = configs
        .iter()
        .map(|config| {
            let toy_params = config.toy.check()?;
            (0..config.seeds)
                .map(|s| gimc_fig1_toy(&toy_params, &mut child(&base_rng, (1 << 60) | s as u64)))
                .collect::<Result<Vec<_>, _>>()
        })
        .collect::<Result<_, _>>()?;
    let tasks: Vec<(usize, usize, usize)> = configs
        .iter()
        .enumerate()
        .flat_map(|(p, config)| {
            (0..config.seeds).flat_map(move |s| (0..config.fractions.len()).map(move |f| (p, s, f)))
        })
        .collect();
    let cells: Vec<Vec<Fig1Cell>> = tasks
        .par_iter()
        .map(|&(p, s, fi)| {
            let config = &configs[p];
            let toy = &toys[p][s];
            let fraction = config.fractions[fi];
            // streams: task (seed, fraction) in bits 32.., method in 24..32, grid point below
            let stream = ((s as u64) << 40) | ((fi as u64) << 32);
            let mut rng = child(&base_rng, stream);
            let omega = observe(toy.a.as_ref(), fraction, &mut rng)?;
            let (train, val) = holdout(&omega, VALIDATION_FRACTION, &mut rng);
            let (n, m) = (toy.a.nrows(), toy.a.ncols());
            let all = observed_from(n, m, &omega)?;
            let train = observed_from(n, m, &train)?;
            let val_observed = observed_from(n, m, &val)?;
            let x = FeatureMatrix::dense(toy.x.clone())?;
            let y = FeatureMatrix::dense(toy.y.clone())?;
            let task = Fig1Task {
                toy,
                x: &x,
                y: &y,
                rank: RANK,
                quick: config.quick,
            };
            let mut out: Vec<Fig1Cell> = Vec::new();
            // per method: the random stream of its chosen grid point (for methods starting
            // from it)
            let mut chosen_streams: Vec<(&'static str, u64)> = Vec::new();
            for (mi, method) in methods.iter().enumerate() {
                let base = match method.starts_from() {
                    Some(name) => {
                        let cell = out.iter().find(|c| c.method == name);
                        let stream = chosen_streams.iter().find(|(n, _)| *n == name);
                        match (cell, stream) {
                            (Some(c), Some(&(_, st))) => Some((c.chosen.clone(), st)),
                            _ => {
                                return Err(ExperimentError::Failed(format!(
                                    "{} starts from {name}, which has not run before it",
                                    method.name()
                                )));
                            }
                        }
                    }
                    None => None,
                };
                let grid = method.grid(config.quick, x.ncols(), base.as_ref().map(|b| &b.0));
                let stream_of = |idx: &[usize]| match &base {
                    Some((_, st)) => *st,
                    None => {
                        let point = (grid.flat(idx) as u64) & 0xFF_FFFF;
                        stream | ((mi as u64 + 1) << 24) | point
                    }
                };
                let start = Instant::now();
                let mut effective: Vec<(Vec<usize>, Setting)> = Vec::new();
                let (best, validation_rmse, fits) = select(&grid, |idx| {
                    let setting = grid.setting(idx);
                    let fit = method.fit_predict(
                        &task,
                        &train,
                        Some(&val_observed),
                        &setting,
                        &mut child(&base_rng, stream_of(idx)),
                    )?;
                    if let Some(e) = fit.effective {
                        effective.push((idx.to_vec(), e));
                    }
                    Ok(rmse_on(fit.prediction.as_ref(), &val))
                })
                .map_err(|e| ExperimentError::Failed(format!("{}: {e}", method.name())))?;
                let chosen = effective
                    .into_iter()
                    .find(|(i, _)| *i == best)
                    .map_or_else(|| grid.setting(&best), |(_, e)| e);
                let chosen_stream = stream_of(&best);
                let pred = method.fit_predict(
                    &task,
                    &all,
                    None,
                    &chosen,
                    &mut child(&base_rng, chosen_stream),
                )?;
                let test_error =
                    relative_frobenius_error(toy.a.as_ref(), pred.prediction.as_ref())?;
                chosen_streams.push((method.name(), chosen_stream));
                out.push(Fig1Cell {
                    method: method.name(),
                    seed: s,
                    fraction,
                    chosen,
                    validation_rmse,
                    test_error,
                    fits,
                    seconds: start.elapsed().as_secs_f64(),
                });
            }
            Ok(out)
        })
        .collect::<Result<_, ExperimentError>>()?;
    let mut panels: Vec<Vec<Fig1Cell>> = vec![Vec::new(); configs.len()];
    for (&(p, _, _), task_cells) in tasks.iter().zip(cells) {
        panels[p].extend(task_cells);
    }
    Ok(panels)
}
