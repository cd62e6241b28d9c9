//! Experiment `imc-sample-complexity`: phase plot of exact-recovery failures of IMC with
//! Gaussian features (DESIGN §4, bilinear prediction slides).
//!
//! A = X Z Yᵀ with X, Y n × d standard Gaussian and Z of rank k = 5
//! (`gimc_data::synth::gaussian_imc`); |Ω| entries are observed, noiselessly. For each cell
//! (n, d) — (a) d varying at n = 1,000, (b) n varying at d = 50 — and each |Ω| of a grid, T trials
//! are run; a trial *fails* when the relative error ‖A − Â‖_F/‖A‖_F over **all** n² entries
//! exceeds 10⁻³. The error is computed exactly from d × d matrices,
//! ‖X(Ẑ − Z)Yᵀ‖²_F = tr(Δᵀ (XᵀX) Δ (YᵀY)) with Δ = Ẑ − Z, Ẑ = WHᵀ, so no n × n matrix is formed.
//!
//! Solvers: IMC by ALS (DESIGN §3.2, rank 5, spectral start, λ = 10⁻⁸: the data are exact, so
//! there is nothing to tune) and, in the full form, nuclear-norm IMC by FPC (DESIGN §3.2,
//! continuation down to μ = 10⁻⁶; slower, so fewer trials and only the d sweep).
//! Only rows and columns with at least one observed entry enter the fit (the others contribute
//! nothing to the objective, nor to the spectral start Φᵀ P_Ω(A) Ψ), which makes the cost
//! depend on |Ω| rather than n; the prediction uses all of X and Y.
//!
//! "Samples needed" for a cell is the smallest |Ω| of the grid from which on at least 90 % of
//! the trials succeed at that and every larger |Ω| of the grid. The published shape: samples
//! needed grow with d and are almost independent of n (the slides print no numbers).

use gimc_data::synth::{GaussianImcParams, gaussian_imc};
use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::rng::{child, seeded};
use gimc_linalg::{FeatureMatrix, Observed};
use gimc_solvers::nuclear::{FpcParams, fit_nuclear_imc};
use gimc_solvers::{CgParams, ImcInit, ImcParams, ImcProblem, ImcStart, NoObserver, Side, fit_imc};
use rayon::prelude::*;

use crate::report::{Report, Table};
use crate::{Context, ExpectedTime, Experiment, ExperimentError};

/// The `imc-sample-complexity` experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct ImcSampleComplexity;

/// Dataset name used in the records.
pub const DATASET: &str = "planted Gaussian IMC, k = 5";
/// Metric of the per-cell failure records (failed trials / trials).
pub const METRIC_FAILURES: &str = "failure rate";
/// Metric of the samples-needed records.
pub const METRIC_NEEDED: &str = "samples needed |Ω|";

/// A solver whose exact-recovery phase transition is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseSolver {
    /// IMC by alternating minimisation (ALS + CG), rank k.
    Als,
    /// Nuclear-norm IMC by fixed point continuation.
    Nuclear,
}

impl PhaseSolver {
    /// Name printed in tables and records.
    pub fn name(self) -> &'static str {
        match self {
            Self::Als => "IMC-ALS",
            Self::Nuclear => "IMC-nuclear (FPC)",
        }
    }
}

/// Which sweep a row belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sweep {
    /// d varies at fixed n.
    Dim,
    /// n varies at fixed d.
    Rows,
}

/// The grid of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseConfig {
    /// Rank k of Z (and of the ALS fit).
    pub rank: usize,
    /// Sweep (a): these d at n = `n_fixed`.
    pub d_sweep: Vec<usize>,
    /// n of sweep (a).
    pub n_fixed: usize,
    /// Sweep (b): these n at d = `d_fixed`.
    pub n_sweep: Vec<usize>,
    /// d of sweep (b).
    pub d_fixed: usize,
    /// The |Ω| grid (increasing).
    pub samples: Vec<usize>,
    /// Trials per (cell, |Ω|) for ALS.
    pub trials: usize,
    /// Nuclear-norm IMC: trials per (cell, |Ω|) on sweep (a), 0 to skip it.
    pub nuclear_trials: usize,
    /// A trial succeeds when the relative error is at most this.
    pub success_tol: f64,
    /// Fraction of successful trials required for "samples needed".
    pub success_rate: f64,
}

impl PhaseConfig {
    /// The form run by `reproduce`: quick (d ∈ {10, 30, 50}, n ∈ {250, 1000, 2000}, 6 sample
    /// counts, 2 trials, ALS only) or full (d ∈ {10, …, 50}, n ∈ {250, 500, 1000, 2000},
    /// 14 sample counts, 10 ALS trials, 3 nuclear-norm trials on the d sweep).
    pub fn new(quick: bool) -> Self {
        if quick {
            Self {
                rank: 5,
                d_sweep: vec![10, 30, 50],
                n_fixed: 1000,
                n_sweep: vec![250, 1000, 2000],
                d_fixed: 50,
                samples: vec![50, 100, 200, 400, 700, 1000],
                trials: 2,
                nuclear_trials: 0,
                success_tol: 1e-3,
                success_rate: 0.9,
            }
        } else {
            Self {
                rank: 5,
                d_sweep: vec![10, 20, 30, 40, 50],
                n_fixed: 1000,
                n_sweep: vec![250, 500, 1000, 2000],
                d_fixed: 50,
                samples: vec![
                    50, 100, 150, 200, 300, 400, 500, 600, 700, 800, 1000, 1200, 1600, 2400,
                ],
                trials: 10,
                nuclear_trials: 3,
                success_tol: 1e-3,
                success_rate: 0.9,
            }
        }
    }
}

/// Failures of one solver in one cell (n, d) across the |Ω| grid.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseRow {
    /// Solver.
    pub solver: PhaseSolver,
    /// Sweep the row belongs to.
    pub sweep: Sweep,
    /// Rows (and columns) n of A.
    pub n: usize,
    /// Feature dimension d.
    pub d: usize,
    /// Failed trials per |Ω| of the grid.
    pub failures: Vec<usize>,
    /// Trials per |Ω|.
    pub trials: usize,
    /// Median relative error per |Ω| (diagnostic).
    pub median_error: Vec<f64>,
    /// Samples needed (see [`samples_needed`]); `None` when no grid value suffices.
    pub needed: Option<usize>,
}

/// The smallest `samples[c]` such that at every c' ≥ c at most (1 − `success_rate`)·`trials`
/// trials failed; `None` when even the largest fails that test.
pub fn samples_needed(
    samples: &[usize],
    failures: &[usize],
    trials: usize,
    success_rate: f64,
) -> Option<usize> {
    let ok = |f: usize| (trials - f.min(trials)) as f64 >= success_rate * trials as f64 - 1e-9;
    let mut needed = None;
    for (&s, &f) in samples.iter().zip(failures).rev() {
        if ok(f) {
            needed = Some(s);
        } else {
            break;
        }
    }
    needed
}

/// Degrees of freedom of a rank-k d × d matrix, k(2d − k).
pub fn degrees_of_freedom(d: usize, k: usize) -> usize {
    k * (2 * d).saturating_sub(k)
}

/// tr(Mᵀ G_x M G_y) = ‖X M Yᵀ‖²_F for G_x = XᵀX, G_y = YᵀY.
fn weighted_sq(m: MatRef<'_, f64>, gx: MatRef<'_, f64>, gy: MatRef<'_, f64>) -> f64 {
    let left = gx * m; // d × d
    let right = m * gy; // d × d
    // tr(Mᵀ Gx M Gy) = Σ_ij (Gx M)_ij (M Gy)_ij
    let mut s = 0.0;
    for j in 0..m.ncols() {
        for i in 0..m.nrows() {
            s += left[(i, j)] * right[(i, j)];
        }
    }
    s
}

/// Relative error of one trial: ‖X(Ẑ − Z)Yᵀ‖_F / ‖XZYᵀ‖_F.
fn trial_error(
    z: MatRef<'_, f64>,
    zhat: MatRef<'_, f64>,
    gx: MatRef<'_, f64>,
    gy: MatRef<'_, f64>,
) -> f64 {
    let diff = zhat - z;
    let num = weighted_sq(diff.as_ref(), gx, gy);
    let den = weighted_sq(z, gx, gy);
    if den > 0.0 && num.is_finite() {
        (num / den).sqrt()
    } else {
        f64::INFINITY
    }
}

/// Runs one trial and returns its relative error (∞ when the solver fails numerically).
fn run_trial(
    solver: PhaseSolver,
    n: usize,
    d: usize,
    rank: usize,
    samples: usize,
    data_seed: u64,
    fit_seed: u64,
) -> Result<f64, ExperimentError> {
    let params = GaussianImcParams::new(n, n, d, d, rank, samples.min(n * n)).check()?;
    let g = gaussian_imc(&params, &mut seeded(data_seed))?;
    // restrict the fit to the observed rows and columns (identical objective)
    let (rows, row_of) = compact(g.observed.iter().map(|e| e.0), n);
    let (cols, col_of) = compact(g.observed.iter().map(|e| e.1), n);
    let ri: Vec<usize> = g.observed.iter().map(|e| row_of[e.0]).collect();
    let ci: Vec<usize> = g.observed.iter().map(|e| col_of[e.1]).collect();
    let vals: Vec<f64> = g.observed.iter().map(|e| e.2).collect();
    let omega = Observed::from_triplets(rows.len(), cols.len(), &ri, &ci, &vals)?;
    let x = FeatureMatrix::dense(g.x.clone())?.select_rows(&rows)?;
    let y = FeatureMatrix::dense(g.y.clone())?.select_rows(&cols)?;
    let problem = ImcProblem::partial(Side::Features(&x), Side::Features(&y), &omega)?;
    let mut rng = seeded(fit_seed);
    let fitted = match solver {
        PhaseSolver::Als => {
            let p = ImcParams::default()
                .with_rank(rank)
                .with_lambda(1e-8)
                .with_max_outer(60)
                .with_tol(1e-12)
                .with_cg(CgParams::default().with_tol(1e-9).with_max_iter(60))
                .with_init(ImcInit::Spectral)
                .check()?;
            fit_imc(&problem, &p, ImcStart::Draw(&mut rng), &mut NoObserver)
        }
        PhaseSolver::Nuclear => {
            let p = FpcParams::default()
                .with_mu(1e-6)
                .with_xtol(1e-8)
                .with_max_iter(2000)
                .check()?;
            fit_nuclear_imc(&problem, &p, &mut rng, &mut NoObserver)
        }
    };
    let model = match fitted {
        Ok(m) => m,
        // a numerical breakdown counts as a failed recovery, not as a failed experiment
        Err(gimc_solvers::SolverError::NonFinite { .. }) => return Ok(f64::INFINITY),
        Err(e) => return Err(e.into()),
    };
    let zhat: Mat<f64> = &model.w * model.h.transpose();
    let gx = g.x.transpose() * &g.x;
    let gy = g.y.transpose() * &g.y;
    Ok(trial_error(
        g.z.as_ref(),
        zhat.as_ref(),
        gx.as_ref(),
        gy.as_ref(),
    ))
}

/// The distinct values of `idx` (sorted) and, for each original index, its position among them.
fn compact(idx: impl Iterator<Item = usize>, n: usize) -> (Vec<usize>, Vec<usize>) {
    let mut seen = vec![false; n];
    for i in idx {
        if let Some(s) = seen.get_mut(i) {
            *s = true;
        }
    }
    let kept: Vec<usize> = (0..n).filter(|&i| seen[i]).collect();
    let mut pos = vec![usize::MAX; n];
    for (p, &i) in kept.iter().enumerate() {
        pos[i] = p;
    }
    (kept, pos)
}

/// The rows (solver, sweep, n, d) of a configuration, in table order.
fn row_specs(config: &PhaseConfig) -> Vec<(PhaseSolver, Sweep, usize, usize, usize)> {
    let mut specs = Vec::new();
    for &d in &config.d_sweep {
        specs.push((
            PhaseSolver::Als,
            Sweep::Dim,
            config.n_fixed,
            d,
            config.trials,
        ));
    }
    for &n in &config.n_sweep {
        specs.push((
            PhaseSolver::Als,
            Sweep::Rows,
            n,
            config.d_fixed,
            config.trials,
        ));
    }
    if config.nuclear_trials > 0 {
        for &d in &config.d_sweep {
            specs.push((
                PhaseSolver::Nuclear,
                Sweep::Dim,
                config.n_fixed,
                d,
                config.nuclear_trials,
            ));
        }
    }
    specs
}

/// Runs every trial of `config` (in parallel) and returns one row per (solver, sweep, cell).
/// Trial t of cell (n, d) uses the same X, Y, Z at every |Ω| (only Ω changes) and the same data
/// for both solvers; a cell in both sweeps is run once and reported in both.
pub fn run_phase(config: &PhaseConfig, seed: u64) -> Result<Vec<PhaseRow>, ExperimentError> {
    let base = seeded(seed);
    let specs = row_specs(config);
    // distinct (solver, n, d, trials) cells: the cell shared by both sweeps runs once
    let mut cells: Vec<(PhaseSolver, usize, usize, usize)> = Vec::new();
    let cell_of: Vec<usize> = specs
        .iter()
        .map(|&(solver, _, n, d, trials)| {
            let key = (solver, n, d, trials);
            match cells.iter().position(|c| *c == key) {
                Some(i) => i,
                None => {
                    cells.push(key);
                    cells.len() - 1
                }
            }
        })
        .collect();
    let jobs: Vec<(usize, usize, usize)> = cells
        .iter()
        .enumerate()
        .flat_map(|(cell, &(_, _, _, trials))| {
            (0..config.samples.len()).flat_map(move |c| (0..trials).map(move |t| (cell, c, t)))
        })
        .collect();
    let stream_seed = |stream: u64| -> u64 {
        use rand::RngCore;
        child(&base, stream).next_u64()
    };
    let errors: Vec<f64> = jobs
        .par_iter()
        .map(|&(cell, c, t)| {
            let (solver, n, d, _) = cells[cell];
            let data_seed = stream_seed(((n as u64) << 32) | ((d as u64) << 16) | t as u64);
            let fit_seed = data_seed ^ 0x9e37_79b9_7f4a_7c15;
            run_trial(
                solver,
                n,
                d,
                config.rank,
                config.samples[c],
                data_seed,
                fit_seed,
            )
        })
        .collect::<Result<_, _>>()?;
    let mut rows = Vec::with_capacity(specs.len());
    for (&(solver, sweep, n, d, trials), &cell) in specs.iter().zip(&cell_of) {
        let mut failures = Vec::with_capacity(config.samples.len());
        let mut median_error = Vec::with_capacity(config.samples.len());
        for c in 0..config.samples.len() {
            let mut errs: Vec<f64> = jobs
                .iter()
                .zip(&errors)
                .filter(|((jcell, jc, _), _)| *jcell == cell && *jc == c)
                .map(|(_, &e)| e)
                .collect();
            failures.push(
                errs.iter()
                    .filter(|&&e| e.is_nan() || e > config.success_tol)
                    .count(),
            );
            errs.sort_by(|a, b| a.total_cmp(b));
            median_error.push(errs.get(errs.len() / 2).copied().unwrap_or(f64::NAN));
        }
        let needed = samples_needed(&config.samples, &failures, trials, config.success_rate);
        rows.push(PhaseRow {
            solver,
            sweep,
            n,
            d,
            failures,
            trials,
            median_error,
            needed,
        });
    }
    Ok(rows)
}

fn needed_label(needed: Option<usize>, max: usize) -> String {
    needed.map_or_else(|| format!("> {max}"), |s| s.to_string())
}

/// The shape check of one sweep, as a note: along d the samples needed grow; along n they stay
/// almost flat (max/min at most 1.5).
fn shape_note(solver: PhaseSolver, sweep: Sweep, sel: &[&PhaseRow], max: usize) -> String {
    let needed: Vec<Option<usize>> = sel.iter().map(|r| r.needed).collect();
    let shown: Vec<String> = needed.iter().map(|&s| needed_label(s, max)).collect();
    match sweep {
        Sweep::Dim => {
            let grows = needed.windows(2).all(|w| match (w[0], w[1]) {
                (Some(a), Some(b)) => a <= b,
                (_, None) => true,
                (None, Some(_)) => false,
            }) && needed.first() != needed.last();
            format!(
                "Shape check, {}: samples needed grow with d ({}): {}.",
                solver.name(),
                shown.join(" → "),
                if grows { "yes" } else { "NO" }
            )
        }
        Sweep::Rows => {
            let vals: Vec<usize> = needed.iter().flatten().copied().collect();
            let ratio = match (vals.iter().min(), vals.iter().max()) {
                (Some(&lo), Some(&hi)) if vals.len() == needed.len() && lo > 0 => {
                    hi as f64 / lo as f64
                }
                _ => f64::INFINITY,
            };
            format!(
                "Shape check, {}: samples needed almost flat in n ({}; max/min = \
                 {ratio:.2}): {}.",
                solver.name(),
                shown.join(", "),
                if ratio <= 1.5 { "yes" } else { "NO" }
            )
        }
    }
}

impl Experiment for ImcSampleComplexity {
    fn name(&self) -> &'static str {
        "imc-sample-complexity"
    }

    fn description(&self) -> &'static str {
        "Bilinear slides: IMC exact-recovery failures against |Ω| for varying d and n (k = 5)"
    }

    fn expected_time(&self) -> ExpectedTime {
        ExpectedTime::new(67, 1)
    }

    fn run(&self, ctx: &Context) -> Result<Report, ExperimentError> {
        let config = PhaseConfig::new(ctx.quick);
        let rows = run_phase(&config, ctx.seed)?;
        let mut report = Report::new(
            self.name(),
            "Bilinear prediction slides: sample complexity of IMC with Gaussian features (k = 5)",
        );
        let max = config.samples.last().copied().unwrap_or(0);
        let solvers: Vec<PhaseSolver> = {
            let mut s: Vec<PhaseSolver> = rows.iter().map(|r| r.solver).collect();
            s.dedup();
            s
        };
        for &solver in &solvers {
            for sweep in [Sweep::Dim, Sweep::Rows] {
                let sel: Vec<&PhaseRow> = rows
                    .iter()
                    .filter(|r| r.solver == solver && r.sweep == sweep)
                    .collect();
                let Some(first) = sel.first() else { continue };
                let (title, key) = match sweep {
                    Sweep::Dim => (format!("(a) vary d at n = {}", config.n_fixed), "d"),
                    Sweep::Rows => (format!("(b) vary n at d = {}", config.d_fixed), "n"),
                };
                let mut header = vec![key.to_owned()];
                header.extend(config.samples.iter().map(|s| format!("#Ω={s}")));
                header.push("needed".to_owned());
                header.push("needed / k(2d−k)".to_owned());
                let mut table = Table::new(
                    format!(
                        "{}: {title}; failures / {} trials (relative error > {:e})",
                        solver.name(),
                        first.trials,
                        config.success_tol
                    ),
                    header,
                );
                for r in &sel {
                    let mut cells = vec![match sweep {
                        Sweep::Dim => r.d.to_string(),
                        Sweep::Rows => r.n.to_string(),
                    }];
                    cells.extend(r.failures.iter().map(|f| format!("{f}/{}", r.trials)));
                    cells.push(needed_label(r.needed, max));
                    let dof = degrees_of_freedom(r.d, config.rank) as f64;
                    cells.push(
                        r.needed
                            .map_or_else(|| "—".to_owned(), |s| format!("{:.2}", s as f64 / dof)),
                    );
                    table.push_row(cells);
                    let setting = format!("n = {}, d = {}", r.n, r.d);
                    for (&s, &f) in config.samples.iter().zip(&r.failures) {
                        report.record(
                            DATASET,
                            solver.name(),
                            format!("{setting}, |Ω| = {s}"),
                            METRIC_FAILURES,
                            Some(f as f64 / r.trials as f64),
                            None,
                        );
                    }
                    report.record(
                        DATASET,
                        solver.name(),
                        setting,
                        METRIC_NEEDED,
                        r.needed.map(|s| s as f64),
                        None,
                    );
                }
                report.tables.push(table);
                // the slides' phase transition as curves: failure rate against |Ω|, one per d / n
                let mut chart = gimc_plot::LineChart::new(
                    format!("{}: {title}", solver.name()),
                    "observed entries |Ω|",
                    "failure rate",
                );
                for r in &sel {
                    let label = match sweep {
                        Sweep::Dim => format!("d = {}", r.d),
                        Sweep::Rows => format!("n = {}", r.n),
                    };
                    let pts = config
                        .samples
                        .iter()
                        .zip(&r.failures)
                        .map(|(&s, &f)| (s as f64, f as f64 / r.trials.max(1) as f64))
                        .collect();
                    chart = chart.with_series(label, pts);
                }
                let stem: String = solver
                    .name()
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | ' '))
                    .collect();
                report.figure(
                    format!("{}-{key}", stem.to_lowercase().replace(' ', "-")),
                    &chart,
                )?;
                report.note(shape_note(solver, sweep, &sel, max));
            }
        }
        report.note(
            "Published shape (the slides print no numbers, so `published` is null): samples \
             needed grow with d and are almost independent of n.",
        );
        report.note(format!(
            "A trial fails when ‖A − Â‖_F/‖A‖_F over all n² entries exceeds {:e}; \"needed\" is \
             the smallest |Ω| of the grid from which on ≥ {:.0}% of trials succeed; k(2d−k) is \
             the number of degrees of freedom of Z.",
            config.success_tol,
            100.0 * config.success_rate
        ));
        report.note(
            "No hyper-parameters are tuned: the observations are exact, ALS uses the true rank \
             k = 5, λ = 1e-8 (a numerical safeguard), spectral start, ≤ 60 alternations, CG \
             tol 1e-9; nuclear-norm IMC uses FPC with continuation to μ = 1e-6, ≤ 2,000 steps.",
        );
        if config.nuclear_trials == 0 {
            report.note(
                "Quick form: ALS only (nuclear-norm IMC runs in the full form, on sweep (a)).",
            );
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_needed_requires_success_from_there_on() {
        let s = [100, 200, 300, 400];
        assert_eq!(samples_needed(&s, &[2, 0, 1, 0], 10, 0.9), Some(200));
        assert_eq!(samples_needed(&s, &[0, 5, 0, 0], 10, 0.9), Some(300));
        assert_eq!(samples_needed(&s, &[5, 5, 5, 5], 10, 0.9), None);
        assert_eq!(samples_needed(&s, &[0, 0, 0, 0], 2, 0.9), Some(100));
        assert_eq!(samples_needed(&s, &[1, 1, 0, 0], 2, 0.9), Some(300));
    }

    #[test]
    fn weighted_error_matches_dense() {
        let mut rng = seeded(4);
        let g =
            |r: &mut gimc_linalg::rng::GimcRng, a, b| gimc_linalg::rng::gaussian_mat(r, a, b, 1.0);
        let (x, y, z, zh) = (
            g(&mut rng, 30, 4),
            g(&mut rng, 20, 4),
            g(&mut rng, 4, 4),
            g(&mut rng, 4, 4),
        );
        let a = &x * &z * y.transpose();
        let ah = &x * &zh * y.transpose();
        let dense = (&a - &ah).norm_l2() / a.norm_l2();
        let gx = x.transpose() * &x;
        let gy = y.transpose() * &y;
        let fast = trial_error(z.as_ref(), zh.as_ref(), gx.as_ref(), gy.as_ref());
        assert!(
            (dense - fast).abs() < 1e-12 * dense.max(1.0),
            "{dense} {fast}"
        );
    }

    #[test]
    fn compact_maps_indices() {
        let (kept, pos) = compact([5, 1, 5, 3].into_iter(), 6);
        assert_eq!(kept, [1, 3, 5]);
        assert_eq!((pos[1], pos[3], pos[5]), (0, 1, 2));
    }
}
