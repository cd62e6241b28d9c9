//! IMC benchmarks (DESIGN §3.2, §5): the fully-observed fast path on Bibtex against
//! the reference C++ LEML, and the cost of one CG step of the partial-Ω path at scale.

use std::path::Path;

use gimc_data::load_named;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{GimcRng, gaussian_mat, seeded};
use gimc_linalg::{FeatureMatrix, Observed, sampled_dot};
use gimc_metrics::precision_at_k_from_topk;
use gimc_solvers::{
    CgParams, ImcInit, ImcParams, ImcProblem, ImcStart, ImcWorkspace, NoObserver, Side, fit_imc,
    w_step,
};
use rand::seq::index::sample;

use super::{Benchmark, Measurement, median_secs};
use crate::error::fail;
use crate::{Context, ExperimentError};

/// IMC on Bibtex with Ψ = I and every entry observed (LEML's multi-label setting).
pub struct ImcBibtex;

/// Settings of the Bibtex IMC benchmark (LEML's: rank 50, 10 alternations).
const BIBTEX_RANK: usize = 50;
const BIBTEX_ALTERNATIONS: usize = 10;
const BIBTEX_LAMBDA: f64 = 10.0;

/// Fits IMC on `bibtex` train and returns (fit seconds, P@1, P@3, P@5 in %).
fn bibtex_run(data_dir: &Path, runs: usize) -> Result<(f64, [f64; 3]), ExperimentError> {
    let set = load_named(data_dir, "bibtex")?;
    let (train, test) = match (set.part("train"), set.part("test")) {
        (Some(a), Some(b)) => (a, b),
        _ => return Err(fail("bibtex lacks a train or test part")),
    };
    let (ytr, yte) = match (train.labels(), test.labels()) {
        (Some(a), Some(b)) => (a, b),
        _ => return Err(fail("bibtex has no label matrix")),
    };
    let n_labels = ytr.cols();
    let params = ImcParams::default()
        .with_rank(BIBTEX_RANK)
        .with_lambda(BIBTEX_LAMBDA)
        .with_max_outer(BIBTEX_ALTERNATIONS)
        .with_tol(0.0)
        .with_cg(CgParams::default().with_tol(1e-6).with_max_iter(20))
        .with_init(ImcInit::Spectral)
        .check()?;
    let (secs, model) = median_secs(runs, || {
        // The timed region is the whole fit from the loaded data: Ω built from the labels,
        // Gram matrices, initialisation and the alternations.
        let a = Observed::from_csr(ytr)?;
        let problem = ImcProblem::fully_observed(
            Side::Features(&train.features),
            Side::Identity(n_labels),
            &a,
        )?;
        fit_imc(
            &problem,
            &params,
            ImcStart::Draw(&mut seeded(0)),
            &mut NoObserver,
        )
        .map_err(ExperimentError::from)
    })?;
    let top = model.top_k_for_rows(Side::Features(&test.features), Side::Identity(n_labels), 5)?;
    let mut p = [0.0; 3];
    for (slot, k) in p.iter_mut().zip([1, 3, 5]) {
        *slot = 100.0 * precision_at_k_from_topk(&top, yte, k)?;
    }
    Ok((secs, p))
}

impl Benchmark for ImcBibtex {
    fn name(&self) -> &'static str {
        "imc-bibtex"
    }

    fn description(&self) -> &'static str {
        "IMC (alternating CG) on Bibtex train: raw sparse features, Ψ = I, all 4,880 × 159 \
         entries observed, rank 50, λ = 10, 10 alternations, at most 20 CG steps per half-step; P@k on the test set. Reference: the \
         C++ LEML on this machine with 2 threads, about 24 s reaching P@1 59.4."
    }

    fn run(&self, ctx: &Context) -> Result<Vec<Measurement>, ExperimentError> {
        let (secs, p) = bibtex_run(&ctx.data_dir, if ctx.quick { 1 } else { 3 })?;
        let case = "bibtex k=50, 10 alternations";
        Ok(vec![
            Measurement::new(case, "fit", secs, "s").with_reference(24.0, "C++ LEML, 2 threads"),
            Measurement::new(case, "P@1", p[0], "%").with_reference(59.4, "C++ LEML"),
            Measurement::new(case, "P@3", p[1], "%"),
            Measurement::new(case, "P@5", p[2], "%"),
        ])
    }
}

/// Seconds per CG step of the partial-Ω W half-step at scale.
pub struct ImcCgStep;

/// A planted rank-`k` problem: Gaussian features (n × d on both sides) and `per_row` distinct
/// observed columns in every row, valued x_iᵀ Z y_j.
fn planted_problem(
    n: usize,
    d: usize,
    k: usize,
    per_row: usize,
    rng: &mut GimcRng,
) -> Result<(FeatureMatrix, FeatureMatrix, Observed), ExperimentError> {
    let x = FeatureMatrix::dense(gaussian_mat(rng, n, d, 1.0))?;
    let y = FeatureMatrix::dense(gaussian_mat(rng, n, d, 1.0))?;
    let mut rows = Vec::with_capacity(n * per_row);
    let mut cols = Vec::with_capacity(n * per_row);
    for i in 0..n {
        let mut c = sample(rng, n, per_row).into_vec();
        c.sort_unstable();
        rows.extend(std::iter::repeat_n(i, per_row));
        cols.extend(c);
    }
    let zeros = vec![0.0; rows.len()];
    let pattern = Observed::from_triplets(n, n, &rows, &cols, &zeros)?;
    drop((rows, cols, zeros));
    let scale = 1.0 / (d as f64).sqrt();
    let p = x.mul_dense(gaussian_mat(rng, d, k, scale).as_ref())?;
    let q = y.mul_dense(gaussian_mat(rng, d, k, scale).as_ref())?;
    let values = sampled_dot(&pattern, p.as_ref(), q.as_ref())?;
    let omega = pattern.with_values(values)?;
    Ok((x, y, omega))
}

impl Benchmark for ImcCgStep {
    fn name(&self) -> &'static str {
        "imc-cg-step"
    }

    fn description(&self) -> &'static str {
        "One CG step of the partial-Ω IMC W half-step (Hessian-vector product by the per-row \
         k × k grams in one blocked pass over Φ, plus the Kronecker preconditioner, DESIGN \
         §3.2): n_x = n_y = 100,000, |Ω| = 10^7, d = 100, k = 20 (quick: n = 20,000, \
         |Ω| = 10^6). Seconds per step from the difference of half-steps with 5 and 15 CG \
         iterations, so set-up cost (grams, preconditioner basis) cancels."
    }

    fn run(&self, ctx: &Context) -> Result<Vec<Measurement>, ExperimentError> {
        let (n, per_row) = if ctx.quick {
            (20_000, 50)
        } else {
            (100_000, 100)
        };
        let (d, k) = (100, 20);
        let mut rng = seeded(ctx.seed);
        let (x, y, omega) = planted_problem(n, d, k, per_row, &mut rng)?;
        let problem = ImcProblem::partial(Side::Features(&x), Side::Features(&y), &omega)?;
        let h = gaussian_mat(&mut rng, d, k, 1.0);
        let time_half_step = |iters: usize| -> Result<(f64, usize), ExperimentError> {
            let params = ImcParams::default()
                .with_lambda(0.1)
                .with_cg(CgParams::default().with_tol(0.0).with_max_iter(iters))
                .check()?;
            let (secs, report) = median_secs(3, || {
                let mut w = Mat::<f64>::zeros(d, k);
                w_step(&problem, &params, h.as_ref(), w.as_mut()).map_err(ExperimentError::from)
            })?;
            Ok((secs, report.cg_iterations))
        };
        let (t5, i5) = time_half_step(5)?;
        let (t15, i15) = time_half_step(15)?;
        if i15 <= i5 {
            return Err(fail(format!(
                "CG stopped early ({i5} and {i15} iterations)"
            )));
        }
        let per_step = (t15 - t5) / (i15 - i5) as f64;
        let case = format!("n={n}, |Ω|={}, d={d}, k={k}", omega.len());
        Ok(vec![
            Measurement::new(&case, "CG step", per_step, "s"),
            Measurement::new(&case, "half-step, 15 CG steps", t15, "s"),
        ])
    }
}

/// A whole IMC fit on wide dense features (D > n): gimc-fig1's shape, where every GIMC outer
/// iteration and line-search trial runs one.
pub struct ImcWideFit;

/// gimc-fig1's IMC fits: 200 rows per side, D = 3,200 (m = 1,600 Fourier pairs), rank 20,
/// 20 % of the entries, λ = 0.3, 3 warm-started alternations, CG to 10⁻⁶ (at most 50).
const WIDE_N: usize = 200;
const WIDE_D: usize = 3200;
const WIDE_RANK: usize = 20;
const WIDE_ALTERNATIONS: usize = 3;
const WIDE_RUNS: usize = 15;

impl Benchmark for ImcWideFit {
    fn name(&self) -> &'static str {
        "imc-wide-fit"
    }

    fn description(&self) -> &'static str {
        "One partial-Ω IMC fit on wide dense features, gimc-fig1's shape (n = 200 rows per \
         side, D = 3,200, k = 20, 20 % of the entries, λ = 0.3, 3 alternations, CG to 10⁻⁶ \
         with at most 50 iterations, warm-started from the factors of 3 alternations before, \
         as every GIMC outer iteration is; quick: D = 800). `fit_imc` runs \
         the whole alternation in the sides' rotated row spaces (n × n features, DESIGN §3.2); \
         the reference runs the same alternations half-step by half-step on one workspace \
         (`ImcWorkspace::w_step` / `h_step`), which reduce each half-step's problem and map \
         the factors back to D dimensions, as an earlier `fit_imc` did. \
         Median of 15 fits each, the two alternating, one thread (faer sequential), with the \
         largest relative \
         difference of the two results."
    }

    fn run(&self, ctx: &Context) -> Result<Vec<Measurement>, ExperimentError> {
        let d = if ctx.quick { 800 } else { WIDE_D };
        let (n, k) = (WIDE_N, WIDE_RANK);
        let mut rng = seeded(ctx.seed);
        let (x, y, omega) = planted_problem(n, d, k, n / 5, &mut rng)?;
        let problem = ImcProblem::partial(Side::Features(&x), Side::Features(&y), &omega)?;
        let cg = CgParams::default().with_tol(1e-6).with_max_iter(50);
        let params = ImcParams::default()
            .with_rank(k)
            .with_lambda(0.3)
            .with_max_outer(WIDE_ALTERNATIONS)
            .with_tol(0.0)
            .with_cg(cg)
            .check()?;
        // the warm start of a GIMC outer iteration: the factors of the fit before it (here 3
        // alternations from a random start on the same features)
        let start = fit_imc(
            &problem,
            &params,
            ImcStart::Warm(
                gaussian_mat(&mut rng, d, k, 0.1),
                gaussian_mat(&mut rng, d, k, 0.1),
            ),
            &mut NoObserver,
        )?;
        let (w0, h0) = (start.w, start.h);
        let sequential = gimc_linalg::faer::get_global_parallelism();
        gimc_linalg::faer::set_global_parallelism(gimc_linalg::faer::Par::Seq);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .map_err(fail)?;
        let fit = || {
            fit_imc(
                &problem,
                &params,
                ImcStart::Warm(w0.clone(), h0.clone()),
                &mut NoObserver,
            )
            .map_err(ExperimentError::from)
        };
        let steps = || {
            let ws = ImcWorkspace::new(&problem);
            let (mut w, mut h) = (w0.clone(), h0.clone());
            ws.objective(params.lambda, w.as_ref(), h.as_ref())?;
            for _ in 0..WIDE_ALTERNATIONS {
                ws.w_step(params.lambda, h.as_ref(), w.as_mut(), params.valid_cg())?;
                ws.h_step(params.lambda, w.as_ref(), h.as_mut(), params.valid_cg())?;
                ws.objective(params.lambda, w.as_ref(), h.as_ref())?;
            }
            Ok::<_, ExperimentError>((w, h))
        };
        // the two alternate, one run each at a time, so that a slower stretch of the machine
        // falls on both
        let result = pool.install(|| -> Result<_, ExperimentError> {
            let (mut t_fit, mut t_steps) = (Vec::new(), Vec::new());
            let mut last = None;
            for _ in 0..WIDE_RUNS {
                let (t, model) = median_secs(1, fit)?;
                let (u, wh) = median_secs(1, steps)?;
                t_fit.push(t);
                t_steps.push(u);
                last = Some((model, wh));
            }
            let Some((model, (w, h))) = last else {
                unreachable!("WIDE_RUNS > 0 runs were made")
            };
            let median = |mut v: Vec<f64>| {
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            let rel = |a: &Mat<f64>, b: &Mat<f64>| (a - b).norm_l2() / b.norm_l2();
            Ok((
                median(t_fit),
                median(t_steps),
                rel(&model.w, &w).max(rel(&model.h, &h)),
            ))
        });
        gimc_linalg::faer::set_global_parallelism(sequential);
        let (t_fit, t_steps, diff) = result?;
        let case = format!(
            "n={n}, D={d}, k={k}, |Ω|={}, {WIDE_ALTERNATIONS} alternations",
            omega.len()
        );
        Ok(vec![
            Measurement::new(&case, "fit (row space)", t_fit, "s")
                .with_reference(t_steps, "half-step by half-step reduction, same run"),
            Measurement::new(&case, "largest relative difference", diff, ""),
        ])
    }
}
