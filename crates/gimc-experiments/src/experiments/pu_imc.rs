//! Experiment `pu-imc`: biased (PU) IMC against plain IMC on a planted positive-unlabeled
//! problem (DESIGN §3.2 "PU / biased IMC", §4, bilinear prediction slides).
//!
//! Planted data: X, Y (n × d) and Z_L, Z_R (d × r) standard Gaussian, scores S = X Z_L (Y Z_R)ᵀ,
//! and the 0/1 matrix T = 1\[S > τ\] with τ the quantile that makes a fraction π = 10 % of the
//! entries positive. Each positive is observed independently with probability 1 − ρ (a fraction
//! ρ of the positives is hidden); nothing else is observed. Both methods use the features
//! Φ = [X, 1], Ψ = [Y, 1] (a constant column, so the offset of T is representable):
//! - IMC: plain IMC on the observed positives as Ω with value 1 (GIMC eq. 3);
//! - PU-IMC: loss α on observed positives (target 1), 1 − α on every other entry (target 0),
//!   fitted without enumerating the unobserved entries (DESIGN §3.2); α = 1 is plain IMC's
//!   loss plus nothing on the unlabeled entries, α ≈ (1 + ρ)/2 the slides' choice.
//!
//! Selection uses only observed positives: 20 % of them are held out (they are unlabeled during
//! selection), and the setting (rank k, λ, and α for PU-IMC) maximising the PU criterion of
//! Lee & Liu (2003), recall² / P(ŷ = 1) with ŷ = 1\[Â > ½\] (recall on the held-out positives,
//! P(ŷ = 1) over all entries; proportional to precision·recall, so no negatives are needed),
//! is refitted on all observed positives. Metrics over all n² entries of T: the relative error
//! ‖T − 1\[Â > ½\]‖_F / ‖T‖_F (the biased-MC thresholding rule), the relative error of the
//! real-valued prediction ‖T − Â‖_F / ‖T‖_F, and the AUC of the hidden positives against the
//! true negatives. The slides give no numbers (`published` is null).

use std::time::Instant;

use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{GimcRng, child, gaussian_mat, seeded};
use gimc_linalg::{FeatureMatrix, Observed};
use gimc_solvers::{
    ImcModel, ImcParams, ImcProblem, ImcStart, NoObserver, PuImcInputs, PuImcParams, Side, fit_imc,
    fit_pu_imc,
};
use rand::Rng;
use rayon::prelude::*;

use super::support::{auc, holdout, mean_std, observed_from};
use crate::report::{Report, Table};
use crate::{Context, ExpectedTime, Experiment, ExperimentError};

/// The `pu-imc` experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct PuImc;

/// Metric: relative error of the thresholded prediction.
pub const METRIC_THRESHOLDED: &str = "relative error ‖T − 1[Â > ½]‖_F/‖T‖_F";
/// Metric: relative error of the real-valued prediction.
pub const METRIC_REAL: &str = "relative error ‖T − Â‖_F/‖T‖_F";
/// Metric: AUC of hidden positives against true negatives.
pub const METRIC_AUC: &str = "AUC (hidden positives vs negatives)";
/// Method names.
pub const METHODS: [&str; 2] = ["IMC", "PU-IMC"];

/// Sizes of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct PuConfig {
    /// Rows and columns n of T.
    pub n: usize,
    /// Feature dimension d.
    pub d: usize,
    /// Rank r of the planted score matrix.
    pub planted_rank: usize,
    /// Fraction π of positive entries.
    pub positive_rate: f64,
    /// Hidden fractions ρ of the positives.
    pub rhos: Vec<f64>,
    /// Independent planted problems per ρ.
    pub seeds: usize,
    /// Rank candidates k.
    pub ranks: Vec<usize>,
    /// λ candidates.
    pub lambdas: Vec<f64>,
    /// α candidates of PU-IMC ((1 + ρ)/2 is always added).
    pub alphas: Vec<f64>,
    /// Fraction of the observed positives held out for selection.
    pub validation_fraction: f64,
    /// ALS alternations per fit.
    pub max_outer: usize,
}

impl PuConfig {
    /// The form run by `reproduce`: quick (n = 200, ρ ∈ {0.3, 0.7}, 2 seeds, small grid) or full
    /// (n = 400, ρ ∈ {0.1, 0.3, 0.5, 0.7, 0.9}, 5 seeds).
    pub fn new(quick: bool) -> Self {
        if quick {
            Self {
                n: 200,
                d: 10,
                planted_rank: 3,
                positive_rate: 0.1,
                rhos: vec![0.3, 0.7],
                seeds: 2,
                ranks: vec![5],
                lambdas: vec![1.0, 10.0],
                alphas: vec![0.6, 0.9],
                validation_fraction: 0.2,
                max_outer: 15,
            }
        } else {
            Self {
                n: 400,
                d: 10,
                planted_rank: 3,
                positive_rate: 0.1,
                rhos: vec![0.1, 0.3, 0.5, 0.7, 0.9],
                seeds: 5,
                ranks: vec![3, 5, 8],
                lambdas: vec![0.1, 1.0, 10.0],
                alphas: vec![0.55, 0.65, 0.75, 0.85, 0.95],
                validation_fraction: 0.2,
                max_outer: 30,
            }
        }
    }
}

/// A planted PU problem.
#[derive(Debug, Clone)]
pub struct PuProblem {
    /// Φ = [X, 1] (n × (d + 1)).
    pub phi: FeatureMatrix,
    /// Ψ = [Y, 1] (n × (d + 1)).
    pub psi: FeatureMatrix,
    /// The 0/1 truth T (n × n).
    pub truth: Mat<f64>,
    /// Observed positives (i, j), sorted.
    pub observed: Vec<(usize, usize)>,
}

/// Draws a planted PU problem (draw order: X, Y, Z_L, Z_R, then one uniform per positive in
/// row-major order deciding whether it is observed).
pub fn planted_pu(
    config: &PuConfig,
    rho: f64,
    rng: &mut GimcRng,
) -> Result<PuProblem, ExperimentError> {
    let (n, d, r) = (config.n, config.d, config.planted_rank);
    let rate_ok = config.positive_rate > 0.0 && config.positive_rate < 1.0;
    if n < 2 || d == 0 || r == 0 || !(0.0..1.0).contains(&rho) || !rate_ok {
        return Err(ExperimentError::Failed(format!(
            "pu-imc: invalid sizes n = {n} (need ≥ 2), d = {d}, r = {r}, ρ = {rho} (need \
             [0, 1)) or positive rate {} (need (0, 1))",
            config.positive_rate
        )));
    }
    let x = gaussian_mat(rng, n, d, 1.0);
    let y = gaussian_mat(rng, n, d, 1.0);
    let zl = gaussian_mat(rng, d, r, 1.0);
    let zr = gaussian_mat(rng, d, r, 1.0);
    let s = (&x * &zl) * (&y * &zr).transpose();
    let mut sorted: Vec<f64> = (0..n)
        .flat_map(|j| s.col_as_slice(j).iter().copied())
        .collect();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let n_pos = ((config.positive_rate * (n * n) as f64).round() as usize).clamp(1, n * n - 1);
    // τ between the n_pos-th and (n_pos + 1)-th largest score
    let tau = 0.5 * (sorted[n_pos - 1] + sorted[n_pos]);
    let truth = Mat::from_fn(n, n, |i, j| if s[(i, j)] > tau { 1.0 } else { 0.0 });
    let mut observed = Vec::new();
    for i in 0..n {
        for j in 0..n {
            if truth[(i, j)] == 1.0 && rng.random::<f64>() >= rho {
                observed.push((i, j));
            }
        }
    }
    let with_bias =
        |m: &Mat<f64>| Mat::from_fn(n, d + 1, |i, j| if j < d { m[(i, j)] } else { 1.0 });
    Ok(PuProblem {
        phi: FeatureMatrix::dense(with_bias(&x))?,
        psi: FeatureMatrix::dense(with_bias(&y))?,
        truth,
        observed,
    })
}

/// One hyper-parameter setting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PuSetting {
    /// Rank k.
    pub rank: usize,
    /// Ridge weight λ.
    pub lambda: f64,
    /// α (PU-IMC only).
    pub alpha: Option<f64>,
}

impl std::fmt::Display for PuSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "k = {}, λ = {}", self.rank, self.lambda)?;
        if let Some(a) = self.alpha {
            write!(f, ", α = {a:.2}")?;
        }
        Ok(())
    }
}

/// Fits one method on the positives `pos` and returns the dense prediction Â.
fn fit_predict(
    problem: &PuProblem,
    pos: &[(usize, usize)],
    setting: &PuSetting,
    max_outer: usize,
    rng: &mut GimcRng,
) -> Result<Mat<f64>, ExperimentError> {
    let n = problem.truth.nrows();
    let ones: Vec<(usize, usize, f64)> = pos.iter().map(|&(i, j)| (i, j, 1.0)).collect();
    let omega: Observed = observed_from(n, n, &ones)?;
    let (phi, psi) = (Side::Features(&problem.phi), Side::Features(&problem.psi));
    let imc = ImcParams::default()
        .with_rank(setting.rank)
        .with_lambda(setting.lambda)
        .with_max_outer(max_outer);
    let model: ImcModel = match setting.alpha {
        None => {
            let p = imc.check()?;
            let pr = ImcProblem::partial(phi, psi, &omega)?;
            fit_imc(&pr, &p, ImcStart::Draw(rng), &mut NoObserver)?
        }
        Some(alpha) => {
            let p = PuImcParams::default()
                .with_imc(imc)
                .with_alpha(alpha)
                .check()?;
            fit_pu_imc(
                PuImcInputs {
                    phi,
                    psi,
                    positives: &omega,
                },
                &p,
                ImcStart::Draw(rng),
                &mut NoObserver,
            )?
        }
    };
    model
        .scores_for_rows(phi, psi)
        .map_err(ExperimentError::from)
}

/// The Lee & Liu PU criterion recall² / P(ŷ = 1) of ŷ = 1\[Â > ½\], recall on `held_out`.
fn lee_liu(pred: &Mat<f64>, held_out: &[(usize, usize)]) -> f64 {
    let recall = held_out
        .iter()
        .filter(|&&(i, j)| pred[(i, j)] > 0.5)
        .count() as f64
        / held_out.len().max(1) as f64;
    let total = (pred.nrows() * pred.ncols()).max(1) as f64;
    let positive = (0..pred.ncols())
        .map(|j| pred.col_as_slice(j).iter().filter(|&&v| v > 0.5).count())
        .sum::<usize>() as f64
        / total;
    if positive > 0.0 {
        recall * recall / positive
    } else {
        0.0
    }
}

/// Test metrics of a prediction: (thresholded relative error, real relative error, AUC).
fn evaluate(problem: &PuProblem, pred: &Mat<f64>) -> (f64, f64, f64) {
    let t = &problem.truth;
    let n = t.nrows();
    let mut observed = vec![false; n * n];
    for &(i, j) in &problem.observed {
        observed[i * n + j] = true;
    }
    let (mut thr, mut real, mut norm) = (0.0, 0.0, 0.0);
    let (mut hidden, mut negatives) = (Vec::new(), Vec::new());
    for i in 0..n {
        for j in 0..n {
            let (tv, p) = (t[(i, j)], pred[(i, j)]);
            let th = if p > 0.5 { 1.0 } else { 0.0 };
            thr += (tv - th) * (tv - th);
            real += (tv - p) * (tv - p);
            norm += tv * tv;
            if tv == 1.0 && !observed[i * n + j] {
                hidden.push(p);
            } else if tv == 0.0 {
                negatives.push(p);
            }
        }
    }
    let norm = norm.max(f64::MIN_POSITIVE);
    (
        (thr / norm).sqrt(),
        (real / norm).sqrt(),
        auc(&hidden, &negatives),
    )
}

/// One method on one (ρ, seed).
#[derive(Debug, Clone, PartialEq)]
pub struct PuCell {
    /// Method (`IMC` or `PU-IMC`).
    pub method: &'static str,
    /// Hidden fraction ρ.
    pub rho: f64,
    /// Seed index.
    pub seed: usize,
    /// Chosen setting.
    pub chosen: PuSetting,
    /// Its validation criterion.
    pub criterion: f64,
    /// ‖T − 1\[Â > ½\]‖_F / ‖T‖_F.
    pub thresholded_error: f64,
    /// ‖T − Â‖_F / ‖T‖_F.
    pub real_error: f64,
    /// AUC of hidden positives against negatives.
    pub auc: f64,
    /// Observed positives.
    pub n_observed: usize,
    /// Seconds spent on selection and refit.
    pub seconds: f64,
}

/// The candidate settings of `method` at hidden fraction `rho`.
fn candidates(config: &PuConfig, method: &str, rho: f64) -> Vec<PuSetting> {
    let mut alphas: Vec<Option<f64>> = if method == "PU-IMC" {
        let mut a: Vec<f64> = config.alphas.clone();
        let slides = (1.0 + rho) / 2.0;
        if !a.iter().any(|&v| (v - slides).abs() < 1e-9) {
            a.push(slides);
        }
        a.into_iter().map(Some).collect()
    } else {
        vec![None]
    };
    alphas.dedup();
    let mut out = Vec::new();
    for &rank in &config.ranks {
        for &lambda in &config.lambdas {
            for &alpha in &alphas {
                out.push(PuSetting {
                    rank,
                    lambda,
                    alpha,
                });
            }
        }
    }
    out
}

/// Runs both methods on every (ρ, seed), in parallel; cells in (ρ, seed, method) order.
pub fn run_pu(config: &PuConfig, seed: u64) -> Result<Vec<PuCell>, ExperimentError> {
    let base = seeded(seed);
    let tasks: Vec<(usize, usize)> = (0..config.rhos.len())
        .flat_map(|r| (0..config.seeds).map(move |s| (r, s)))
        .collect();
    let cells: Vec<Vec<PuCell>> = tasks
        .par_iter()
        .map(|&(ri, s)| {
            let rho = config.rhos[ri];
            let stream = ((ri * 1000 + s) as u64) << 8;
            let problem = planted_pu(config, rho, &mut child(&base, stream))?;
            let (train, held_out) = holdout(
                &problem.observed,
                config.validation_fraction,
                &mut child(&base, stream + 1),
            );
            let mut out = Vec::new();
            for (mi, &method) in METHODS.iter().enumerate() {
                let start = Instant::now();
                let fit_rng = || child(&base, stream + 2 + mi as u64);
                let mut best: Option<(PuSetting, f64)> = None;
                for setting in candidates(config, method, rho) {
                    let pred =
                        fit_predict(&problem, &train, &setting, config.max_outer, &mut fit_rng())?;
                    let c = lee_liu(&pred, &held_out);
                    if best.as_ref().is_none_or(|b| c > b.1) {
                        best = Some((setting, c));
                    }
                }
                let (chosen, criterion) = best.ok_or_else(|| {
                    ExperimentError::Failed("pu-imc: empty hyper-parameter grid".into())
                })?;
                let pred = fit_predict(
                    &problem,
                    &problem.observed,
                    &chosen,
                    config.max_outer,
                    &mut fit_rng(),
                )?;
                let (thresholded_error, real_error, auc) = evaluate(&problem, &pred);
                out.push(PuCell {
                    method,
                    rho,
                    seed: s,
                    chosen,
                    criterion,
                    thresholded_error,
                    real_error,
                    auc,
                    n_observed: problem.observed.len(),
                    seconds: start.elapsed().as_secs_f64(),
                });
            }
            Ok(out)
        })
        .collect::<Result<_, ExperimentError>>()?;
    Ok(cells.into_iter().flatten().collect())
}

/// Label of a hidden fraction, e.g. `ρ = 0.3`.
pub fn rho_label(rho: f64) -> String {
    format!("ρ = {rho}")
}

impl Experiment for PuImc {
    fn name(&self) -> &'static str {
        "pu-imc"
    }

    fn description(&self) -> &'static str {
        "Bilinear slides: PU (biased) IMC vs plain IMC on a planted positive-unlabeled problem"
    }

    fn expected_time(&self) -> ExpectedTime {
        ExpectedTime::new(10, 0)
    }

    fn run(&self, ctx: &Context) -> Result<Report, ExperimentError> {
        let config = PuConfig::new(ctx.quick);
        let cells = run_pu(&config, ctx.seed)?;
        let dataset = format!(
            "planted PU, n = {}, d = {}, r = {}, {:.0}% positive",
            config.n,
            config.d,
            config.planted_rank,
            100.0 * config.positive_rate
        );
        let mut report = Report::new(
            self.name(),
            "Bilinear prediction slides: PU (biased) IMC vs plain IMC, recovery of T",
        );
        let mut header = vec!["ρ (hidden)".to_owned(), "method".to_owned()];
        header.extend(
            ["‖T − 1[Â > ½]‖/‖T‖", "‖T − Â‖/‖T‖", "AUC hidden vs neg."]
                .iter()
                .map(|m| format!("{m} (mean ± std)")),
        );
        let mut table = Table::new(
            format!(
                "{dataset}; mean ± std over {} seeds; all n² entries",
                config.seeds
            ),
            header,
        );
        let mut pu_wins = true;
        for &rho in &config.rhos {
            let mut means = Vec::new();
            for &method in &METHODS {
                let sel: Vec<&PuCell> = cells
                    .iter()
                    .filter(|c| c.method == method && c.rho == rho)
                    .collect();
                let stat =
                    |f: fn(&PuCell) -> f64| mean_std(&sel.iter().map(|c| f(c)).collect::<Vec<_>>());
                let metrics = [
                    (METRIC_THRESHOLDED, stat(|c| c.thresholded_error)),
                    (METRIC_REAL, stat(|c| c.real_error)),
                    (METRIC_AUC, stat(|c| c.auc)),
                ];
                let mut row = vec![format!("{rho}"), method.to_owned()];
                for (metric, (mean, std)) in metrics {
                    row.push(format!("{mean:.4} ± {std:.4}"));
                    report.record(&dataset, method, rho_label(rho), metric, Some(mean), None);
                }
                table.push_row(row);
                means.push((metrics[0].1.0, metrics[2].1.0));
            }
            if let [imc, pu] = means[..] {
                pu_wins &= pu.0 < imc.0 && pu.1 > imc.1;
            }
        }
        report.tables.push(table);
        report.note(format!(
            "Shape check: PU-IMC beats plain IMC (lower thresholded error and higher AUC) at \
             every ρ: {}.",
            if pu_wins { "yes" } else { "NO" }
        ));
        report.note(
            "The slides print no numbers (`published` is null); their claim is that biased \
             (PU) IMC recovers T where plain IMC on the observed 1s cannot.",
        );
        report.note(format!(
            "Features Φ = [X, 1], Ψ = [Y, 1]; planted T = 1[X Z_L (Y Z_R)ᵀ > τ]; each positive \
             observed with probability 1 − ρ. Selection: {:.0}% of the observed positives held \
             out, criterion recall²/P(ŷ = 1) of ŷ = 1[Â > ½] (Lee & Liu 2003, needs no \
             negatives); grid k ∈ {:?}, λ ∈ {:?}, α ∈ {:?} ∪ {{(1 + ρ)/2}}; then refit on all \
             observed positives. {} ALS alternations per fit.",
            100.0 * config.validation_fraction,
            config.ranks,
            config.lambdas,
            config.alphas,
            config.max_outer
        ));
        for &method in &METHODS {
            let parts: Vec<String> = config
                .rhos
                .iter()
                .map(|&rho| {
                    let chosen: Vec<String> = cells
                        .iter()
                        .filter(|c| c.method == method && c.rho == rho)
                        .map(|c| format!("({})", c.chosen))
                        .collect();
                    format!("ρ = {rho}: {}", chosen.join(" "))
                })
                .collect();
            report.note(format!("{method} chosen per seed: {}", parts.join("; ")));
        }
        let secs: f64 = cells.iter().map(|c| c.seconds).sum();
        report.note(format!(
            "Selection and refits took {secs:.1} s summed over the (parallel) runs."
        ));
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planted_problem_has_the_requested_positives() {
        let config = PuConfig::new(true);
        let p = planted_pu(&config, 0.5, &mut seeded(1)).unwrap();
        let n = config.n;
        let positives: f64 = (0..n)
            .map(|j| p.truth.col_as_slice(j).iter().sum::<f64>())
            .sum();
        assert_eq!(positives as usize, (0.1 * (n * n) as f64).round() as usize);
        assert!(p.observed.iter().all(|&(i, j)| p.truth[(i, j)] == 1.0));
        let frac = p.observed.len() as f64 / positives;
        assert!((frac - 0.5).abs() < 0.05, "{frac}");
        assert_eq!(p.phi.ncols(), config.d + 1);
        let tiny = PuConfig {
            n: 1,
            ..config.clone()
        };
        assert!(planted_pu(&tiny, 0.5, &mut seeded(1)).is_err());
        assert!(planted_pu(&config, 1.0, &mut seeded(1)).is_err());
    }

    #[test]
    fn lee_liu_prefers_precise_predictions() {
        let mut perfect = Mat::<f64>::zeros(4, 4);
        perfect[(0, 0)] = 1.0;
        perfect[(1, 1)] = 1.0;
        let all = Mat::from_fn(4, 4, |_, _| 1.0);
        let held = [(0, 0), (1, 1)];
        assert!((lee_liu(&perfect, &held) - 8.0).abs() < 1e-12);
        assert!((lee_liu(&all, &held) - 1.0).abs() < 1e-12);
        assert_eq!(lee_liu(&Mat::zeros(4, 4), &held), 0.0);
    }
}
