//! MC-1 / MC-b transduction (DESIGN §3.5) and its baselines: monotone FPC objective within a μ
//! stage, MC-1's ones row after every step, exact recovery of fully observed noiseless features,
//! the logistic-loss gradient against finite differences, the cached gradient of the solver
//! against the public one, the three shrinkage SVDs agreeing, cross-validation, and the
//! imputation + SVM baselines on planted data.

use gimc_linalg::Observed;
use gimc_linalg::faer;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{GimcRng, gaussian_mat, gaussian_vec, seeded};
use gimc_solvers::transduction::baselines::{
    EmParams, FpcImputeParams, SvmCvParams, impute_em_gaussian, impute_fpc_cv, impute_mean,
    impute_zero, svm_per_label_cv,
};
use gimc_solvers::transduction::*;
use gimc_solvers::{IterativeSolver, NoObserver, SolverError, Trace};
use proptest::prelude::*;
use rand::Rng;
use rand::seq::index::sample;

/// A planted problem in the paper's generator (DESIGN §3.5), smaller.
struct Planted {
    x: Mat<f64>,
    y: Mat<f64>,
    ox: Vec<(usize, usize)>,
    oy: Vec<(usize, usize)>,
}

#[allow(clippy::too_many_arguments)]
fn planted(
    n: usize,
    d: usize,
    t: usize,
    r: usize,
    noise: f64,
    omega_x: f64,
    omega_y: f64,
    rng: &mut GimcRng,
) -> Planted {
    let l = gaussian_mat(rng, d, r, 1.0);
    let rr = gaussian_mat(rng, n, r, 1.0);
    let x0 = &l * rr.transpose();
    let s = (x0.squared_norm_l2() / (d * n) as f64).sqrt();
    let x0 = Mat::from_fn(d, n, |i, j| x0[(i, j)] / s);
    let x = &x0 + gaussian_mat(rng, d, n, noise.sqrt());
    let w = gaussian_mat(rng, t, d, 10f64.sqrt());
    let b = gaussian_vec(rng, t, 10f64.sqrt());
    let y0 = &w * &x0;
    let y = Mat::from_fn(t, n, |i, j| {
        let p = 1.0 / (1.0 + (-(y0[(i, j)] + b[i])).exp());
        if rng.random::<f64>() < p { 1.0 } else { -1.0 }
    });
    let mut pick = |m: usize, omega: f64| {
        let k = ((m * n) as f64 * omega).round() as usize;
        let mut v: Vec<(usize, usize)> = sample(rng, m * n, k)
            .into_iter()
            .map(|e| (e / n, e % n))
            .collect();
        v.sort_unstable();
        v
    };
    let ox = pick(d, omega_x);
    let oy = pick(t, omega_y);
    Planted { x, y, ox, oy }
}

fn observe(a: &Mat<f64>, p: &[(usize, usize)]) -> Observed {
    let r: Vec<usize> = p.iter().map(|e| e.0).collect();
    let c: Vec<usize> = p.iter().map(|e| e.1).collect();
    let v: Vec<f64> = p.iter().map(|&(i, j)| a[(i, j)]).collect();
    Observed::from_triplets(a.nrows(), a.ncols(), &r, &c, &v).unwrap()
}

fn problem(p: &Planted) -> TransductionProblem {
    TransductionProblem::new(observe(&p.y, &p.oy), observe(&p.x, &p.ox)).unwrap()
}

/// Label error (%) over the unobserved labels.
fn label_error(scores: &Mat<f64>, p: &Planted) -> f64 {
    let n = p.y.ncols();
    let mut seen = vec![false; p.y.nrows() * n];
    for &(i, j) in &p.oy {
        seen[i * n + j] = true;
    }
    let (mut wrong, mut count) = (0, 0);
    for i in 0..p.y.nrows() {
        for j in 0..n {
            if !seen[i * n + j] {
                count += 1;
                if scores[(i, j)] * p.y[(i, j)] <= 0.0 {
                    wrong += 1;
                }
            }
        }
    }
    100.0 * wrong as f64 / count as f64
}

fn params(variant: TransductionVariant, lambda: f64, svd: ShrinkSvd) -> ValidTransductionParams {
    TransductionParams::default()
        .with_variant(variant)
        .with_lambda(lambda)
        .with_svd(svd)
        .with_max_stage_iters(300)
        .check()
        .unwrap()
}

/// Consecutive records at the same μ never increase the objective (relative slack `slack`),
/// except, with `plain_may_rise`, at a step taken from the iterate itself (the first step of a
/// stage, or the step after a restart): accelerated MC-1 takes a rejected plain step as plain
/// FPC takes it, and MC-1's reset of the last row is not a proximal step, so plain FPC can rise
/// there.
fn monotone_within_stages(trace: &Trace, slack: f64, plain_may_rise: bool) -> Result<(), String> {
    for w in trace.records.windows(2) {
        let same_stage = w[0].extra("mu") == w[1].extra("mu");
        let from_iterate = w[0].iteration == 0
            || w[0].extra("restart") == Some(1.0)
            || w[0].extra("stage_end") == Some(1.0);
        if plain_may_rise && from_iterate {
            continue;
        }
        if same_stage && w[1].objective > w[0].objective * (1.0 + slack) + 1e-15 {
            return Err(format!(
                "objective rose from {} to {} at iteration {} (μ = {:?})",
                w[0].objective,
                w[1].objective,
                w[1].iteration,
                w[1].extra("mu")
            ));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// MC-b is a proximal gradient method with steps below 2/L: its objective never increases
    /// within a μ stage (exact SVD and the default Gram shrinkage; monotone FISTA by
    /// construction). MC-1's reset of the last row is not a proximal step, so plain MC-1 can
    /// rise slightly (CI found 0.67837 → 0.67837 + 6e-6 at seed 782); MC-1 is checked in the
    /// form the experiments run, monotone FISTA, whose extrapolated steps never raise it and
    /// whose plain steps from the iterate rise only as plain FPC's do (a run found
    /// + 1.3e-5 relative at seed 652 on such a step).
    #[test]
    fn objective_never_increases_within_a_stage(
        seed in 0u64..1000,
        n in 15usize..40,
        omega in 0.2f64..0.7,
        lambda_exp in -3i32..1,
    ) {
        let mut rng = seeded(seed);
        let p = planted(n, 6, 3, 2, 0.01, omega, omega, &mut rng);
        let prob = problem(&p);
        let lambda = 10f64.powi(lambda_exp);
        for variant in [TransductionVariant::McB, TransductionVariant::Mc1] {
            for (svd, accelerate) in [
                (ShrinkSvd::Exact, false),
                (ShrinkSvd::Auto, false),
                (ShrinkSvd::Auto, true),
            ] {
                if variant == TransductionVariant::Mc1 && !accelerate {
                    continue;
                }
                let par = params(variant, lambda, svd)
                    .with_accelerate(accelerate)
                    .check()
                    .unwrap();
                let grid = mu_grid(&prob, &par, 4).unwrap();
                let mut trace = Trace::new();
                let path = fit_transduction_path(&prob, &par, &grid, &mut rng, &mut trace).unwrap();
                prop_assert_eq!(path.solutions.len(), 4);
                prop_assert_eq!(trace.records.len(), path.iterations + 1);
                let slack = if svd == ShrinkSvd::Exact { 1e-12 } else { 1e-10 };
                let plain_may_rise = variant == TransductionVariant::Mc1;
                if let Err(e) = monotone_within_stages(&trace, slack, plain_may_rise) {
                    return Err(TestCaseError::fail(format!(
                        "{variant:?} {svd:?} accelerate {accelerate}: {e}"
                    )));
                }
            }
        }
    }
}

#[test]
fn mc1_last_row_is_exactly_one_after_every_iteration() {
    let mut rng = seeded(11);
    let p = planted(30, 8, 4, 2, 0.1, 0.3, 0.3, &mut rng);
    let prob = problem(&p);
    for svd in [ShrinkSvd::Auto, ShrinkSvd::Exact, ShrinkSvd::Partial] {
        let par = params(TransductionVariant::Mc1, 0.1, svd);
        let grid = mu_grid(&prob, &par, 5).unwrap();
        let mut solver = TransductionFpc::new(&prob, par, &grid, &mut rng).unwrap();
        let mut st = solver.initial_state().unwrap();
        let m = st.z.nrows();
        assert_eq!(m, 4 + 8 + 1);
        assert!((0..30).all(|j| st.z[(m - 1, j)] == 1.0));
        solver.init(&mut st).unwrap();
        let mut steps = 0;
        for it in 1..=2000 {
            let progress = solver
                .step(&mut st, it)
                .unwrap()
                .expect("FPC steps never halt");
            steps += 1;
            for j in 0..30 {
                assert_eq!(st.z[(m - 1, j)], 1.0, "{svd:?}: iteration {it}, column {j}");
            }
            assert!(st.bias.iter().all(|&b| b == 0.0), "MC-1 has no bias");
            if progress.converged {
                break;
            }
        }
        assert!(steps > 5);
        assert_eq!(st.solutions.len(), 5);
        for s in &st.solutions {
            assert!((0..30).all(|j| s.z[(m - 1, j)] == 1.0));
        }
    }
}

#[test]
fn fully_observed_noiseless_features_are_recovered() {
    let mut rng = seeded(12);
    // every label and feature entry observed, no noise
    let p = planted(60, 12, 4, 3, 0.0, 1.0, 1.0, &mut rng);
    let prob = problem(&p);
    for variant in [TransductionVariant::Mc1, TransductionVariant::McB] {
        let par = TransductionParams::default()
            .with_variant(variant)
            .with_lambda(1e-3)
            .with_max_stage_iters(2000)
            .check()
            .unwrap();
        let grid = mu_grid(&prob, &par, 10).unwrap();
        let path = fit_transduction_path(&prob, &par, &grid, &mut rng, &mut NoObserver).unwrap();
        let last = path.solutions.last().unwrap();
        let est = last.imputed_features();
        let rel = (&est - &p.x).squared_norm_l2() / p.x.squared_norm_l2();
        assert!(rel < 1e-4, "{variant:?}: relative feature error {rel}");
    }
    // noiseless rank-3 features, half of them hidden: the hidden ones are imputed well
    let p = planted(120, 12, 4, 3, 0.0, 0.6, 0.6, &mut rng);
    let prob = problem(&p);
    let par = TransductionParams::default()
        .with_lambda(1e-3)
        .with_max_stage_iters(2000)
        .check()
        .unwrap();
    let grid = mu_grid(&prob, &par, 9).unwrap();
    let path = fit_transduction_path(&prob, &par, &grid, &mut rng, &mut NoObserver).unwrap();
    let est = path.solutions.last().unwrap().imputed_features();
    let n = p.x.ncols();
    let mut seen = vec![false; 12 * n];
    for &(i, j) in &p.ox {
        seen[i * n + j] = true;
    }
    let (mut num, mut den) = (0.0, 0.0);
    for i in 0..12 {
        for j in 0..n {
            if !seen[i * n + j] {
                num += (est[(i, j)] - p.x[(i, j)]).powi(2);
                den += p.x[(i, j)].powi(2);
            }
        }
    }
    assert!(num / den < 0.02, "imputation error {}", num / den);
}

#[test]
fn logistic_gradient_matches_finite_differences() {
    let mut rng = seeded(13);
    let p = planted(9, 4, 3, 2, 0.1, 0.6, 0.7, &mut rng);
    let prob = problem(&p);
    for variant in [TransductionVariant::McB, TransductionVariant::Mc1] {
        let m = prob.z_rows(variant);
        let z = gaussian_mat(&mut rng, m, 9, 2.0);
        let bias = if variant == TransductionVariant::McB {
            gaussian_vec(&mut rng, 3, 1.0)
        } else {
            vec![0.0; 3]
        };
        let par = TransductionParams::default()
            .with_variant(variant)
            .with_lambda(0.7)
            .check()
            .unwrap();
        let (g, gb) = transduction_gradient(&prob, &par, z.as_ref(), &bias).unwrap();
        let f = |z: &Mat<f64>, b: &[f64]| transduction_loss(&prob, &par, z.as_ref(), b).unwrap();
        let h = 1e-6;
        for i in 0..m {
            for j in 0..9 {
                let mut zp = z.clone();
                zp[(i, j)] += h;
                let mut zm = z.clone();
                zm[(i, j)] -= h;
                let fd = (f(&zp, &bias) - f(&zm, &bias)) / (2.0 * h);
                assert!(
                    (fd - g[(i, j)]).abs() < 1e-7 * (1.0 + fd.abs()),
                    "{variant:?} ({i}, {j}): fd {fd} vs {}",
                    g[(i, j)]
                );
            }
        }
        for k in 0..3 {
            let mut bp = bias.clone();
            bp[k] += h;
            let mut bm = bias.clone();
            bm[k] -= h;
            let fd = (f(&z, &bp) - f(&z, &bm)) / (2.0 * h);
            assert!(
                (fd - gb[k]).abs() < 1e-7 * (1.0 + fd.abs()),
                "bias {k}: {fd} vs {}",
                gb[k]
            );
        }
        // the gradient is zero off Ω (and on the ones row)
        let nnz = (0..m)
            .flat_map(|i| (0..9).map(move |j| (i, j)))
            .filter(|&(i, j)| g[(i, j)] != 0.0)
            .count();
        assert!(nnz <= p.ox.len() + p.oy.len());
    }
}

#[test]
fn one_fpc_step_is_gradient_step_then_shrinkage() {
    let mut rng = seeded(14);
    let p = planted(20, 5, 3, 2, 0.1, 0.5, 0.5, &mut rng);
    let prob = problem(&p);
    let par = params(TransductionVariant::McB, 0.3, ShrinkSvd::Exact);
    let grid = mu_grid(&prob, &par, 2).unwrap();
    let mut solver = TransductionFpc::new(&prob, par, &grid, &mut rng).unwrap();
    let (tau_z, tau_b) = solver.steps();
    let ny = p.oy.len() as f64;
    let nx = p.ox.len() as f64;
    assert_eq!(tau_z, (3.8 * ny / 0.3).min(nx));
    assert_eq!(tau_b, 3.8 * ny / (0.3 * 20.0));
    let mu = solver.schedule()[0].0;
    let mut st = solver.initial_state().unwrap();
    // initial Z has rank 1
    assert_eq!(
        gimc_linalg::svd::singular_values(st.z.as_ref())
            .unwrap()
            .iter()
            .filter(|&&s| s > 1e-10)
            .count(),
        1
    );
    let (g, gb) = transduction_gradient(&prob, &par, st.z.as_ref(), &st.bias).unwrap();
    let a = &st.z - &g * faer::Scale(tau_z);
    let svd = gimc_linalg::thin_svd(a.as_ref()).unwrap();
    let want = gimc_linalg::shrink_singular_values(svd, tau_z * mu)
        .unwrap()
        .reconstruct();
    let want_b: Vec<f64> = st
        .bias
        .iter()
        .zip(&gb)
        .map(|(b, g)| b - tau_b * g)
        .collect();
    solver.init(&mut st).unwrap();
    solver.step(&mut st, 1).unwrap();
    assert!((&st.z - &want).norm_l2() < 1e-10 * (1.0 + want.norm_l2()));
    for (b, w) in st.bias.iter().zip(&want_b) {
        assert!((b - w).abs() < 1e-12);
    }
}

#[test]
fn accelerated_and_plain_fpc_reach_the_same_minimum() {
    let mut rng = seeded(20);
    let p = planted(40, 8, 3, 2, 0.05, 0.5, 0.5, &mut rng);
    let prob = problem(&p);
    let mut finals = Vec::new();
    for accelerate in [false, true] {
        let par = TransductionParams::default()
            .with_variant(TransductionVariant::McB)
            .with_lambda(0.5)
            .with_tol(1e-12)
            .with_max_stage_iters(20_000)
            .with_accelerate(accelerate)
            .check()
            .unwrap();
        let grid = mu_grid(&prob, &par, 3).unwrap();
        let path =
            fit_transduction_path(&prob, &par, &grid, &mut seeded(2), &mut NoObserver).unwrap();
        let last = path.solutions.last().unwrap().clone();
        finals.push((last, path.iterations));
    }
    let (plain, plain_iters) = &finals[0];
    let (fast, fast_iters) = &finals[1];
    assert!(
        (plain.objective - fast.objective).abs() < 1e-7 * plain.objective.abs(),
        "{} vs {}",
        plain.objective,
        fast.objective
    );
    assert!((&plain.z - &fast.z).norm_l2() < 1e-3 * plain.z.norm_l2());
    assert!(fast_iters < plain_iters, "{fast_iters} vs {plain_iters}");
}

#[test]
fn shrinkage_methods_agree_along_the_path() {
    let mut rng = seeded(15);
    let p = planted(80, 10, 4, 3, 0.01, 0.4, 0.4, &mut rng);
    let prob = problem(&p);
    let mut finals = Vec::new();
    for svd in [ShrinkSvd::Exact, ShrinkSvd::Auto, ShrinkSvd::Partial] {
        let par = params(TransductionVariant::Mc1, 0.1, svd);
        let grid = mu_grid(&prob, &par, 3).unwrap();
        let path =
            fit_transduction_path(&prob, &par, &grid, &mut seeded(1), &mut NoObserver).unwrap();
        finals.push(path.solutions.last().unwrap().z.clone());
    }
    for z in &finals[1..] {
        let rel = (z - &finals[0]).norm_l2() / finals[0].norm_l2();
        assert!(rel < 1e-5, "shrinkage methods differ by {rel}");
    }
}

#[test]
fn cross_validation_picks_from_the_grid_and_beats_chance() {
    let mut rng = seeded(16);
    let p = planted(150, 20, 10, 2, 0.01, 0.3, 0.3, &mut rng);
    let prob = problem(&p);
    let base = TransductionParams::default()
        .with_max_stage_iters(500)
        .check()
        .unwrap();
    let cv = TransductionCvParams::default()
        .with_mu_count(5)
        .check()
        .unwrap();
    let (sol, res) = fit_transduction_cv(&prob, &base, &cv, &mut rng).unwrap();
    assert_eq!(res.errors.len(), 4);
    assert!(res.errors.iter().all(|r| r.len() == 5));
    let li = cv.lambdas.iter().position(|&l| l == res.lambda).unwrap();
    let k = res.grids[li].iter().position(|&m| m == res.mu).unwrap();
    let best = res.errors[li][k];
    assert!(res.errors.iter().flatten().all(|&e| e >= best));
    assert_eq!(sol.mu, res.mu);
    let err = label_error(&sol.label_scores(), &p);
    assert!(err < 30.0, "MC-1 label error {err}");
    // predicted labels are the signs of the scores
    let s = sol.label_scores();
    let y = sol.predicted_labels();
    assert!(
        (0..10).all(|i| (0..150).all(|j| y[(i, j)] == if s[(i, j)] > 0.0 { 1.0 } else { -1.0 }))
    );
}

#[test]
fn invalid_inputs_are_typed_errors() {
    let lab = Observed::from_triplets(2, 3, &[0], &[1], &[0.5]).unwrap();
    let feat = Observed::from_triplets(2, 3, &[1], &[2], &[1.0]).unwrap();
    assert!(matches!(
        TransductionProblem::new(lab, feat.clone()),
        Err(SolverError::InvalidInput { .. })
    ));
    let lab = Observed::from_triplets(2, 4, &[0], &[1], &[1.0]).unwrap();
    assert!(matches!(
        TransductionProblem::new(lab, feat.clone()),
        Err(SolverError::DimensionMismatch { .. })
    ));
    let empty = Observed::from_triplets(2, 3, &[], &[], &[]).unwrap();
    assert!(TransductionProblem::new(empty.clone(), empty).is_err());
    let d = TransductionParams::default();
    for bad in [
        d.with_lambda(0.0),
        d.with_eta_mu(1.0),
        d.with_tol(f64::NAN),
        d.with_max_stage_iters(0),
    ] {
        assert!(bad.check().unwrap_err().is_parameter_error());
    }
    // the cross-validation's and the baselines' settings are refused at check()
    let cv = TransductionCvParams::default();
    for bad in [
        cv.clone().with_folds(1),
        cv.clone().with_lambdas(vec![]),
        cv.clone().with_lambdas(vec![0.1, -1.0]),
        cv.with_mu_count(0),
    ] {
        assert!(bad.check().unwrap_err().is_parameter_error(), "{bad:?}");
    }
    let fpc = FpcImputeParams::default();
    for bad in [
        fpc.with_folds(1),
        fpc.with_mu_count(0),
        fpc.with_eta_mu(0.0),
    ] {
        assert!(bad.check().unwrap_err().is_parameter_error(), "{bad:?}");
    }
    let svm = SvmCvParams::default();
    for bad in [
        svm.clone().with_folds(1),
        svm.clone().with_cs(vec![]),
        svm.with_cs(vec![1.0, 0.0]),
    ] {
        assert!(bad.check().unwrap_err().is_parameter_error(), "{bad:?}");
    }
    let em = EmParams::default();
    for bad in [em.with_max_iter(0), em.with_tol(0.0), em.with_ridge(-1.0)] {
        assert!(bad.check().unwrap_err().is_parameter_error(), "{bad:?}");
    }
    let sorted = SvmCvParams::default()
        .with_cs(vec![10.0, 0.1, 1.0])
        .check()
        .unwrap();
    assert_eq!(sorted.cs, vec![0.1, 1.0, 10.0]);
    let lab = Observed::from_triplets(2, 3, &[0, 1], &[1, 2], &[1.0, -1.0]).unwrap();
    let prob = TransductionProblem::new(lab, feat).unwrap();
    let par = TransductionParams::default().check().unwrap();
    let mut rng = seeded(1);
    for grid in [vec![], vec![1.0, 2.0], vec![-1.0]] {
        assert!(fit_transduction_path(&prob, &par, &grid, &mut rng, &mut NoObserver).is_err());
    }
    let z = Mat::<f64>::zeros(3, 3);
    let mc1 = TransductionParams::default()
        .with_variant(TransductionVariant::Mc1)
        .with_lambda(1.0)
        .check()
        .unwrap();
    assert!(transduction_loss(&prob, &mc1, z.as_ref(), &[0.0; 2]).is_err());
}

#[test]
fn simple_imputations() {
    let x = Mat::from_fn(2, 4, |i, j| (i * 4 + j) as f64);
    let o = observe(&x, &[(0, 0), (0, 2), (1, 1)]);
    let z = impute_zero(&o);
    let m = impute_mean(&o);
    assert_eq!(z[(0, 1)], 0.0);
    assert_eq!(z[(0, 2)], 2.0);
    assert_eq!(m[(0, 1)], 1.0); // mean of 0 and 2
    assert_eq!(m[(1, 3)], 5.0);
    assert_eq!(m[(1, 1)], 5.0);
}

#[test]
fn em_imputes_a_correlated_gaussian_by_conditional_means() {
    let mut rng = seeded(17);
    // x2 = 2 x1 + small noise, x3 independent; hide one coordinate of half the items
    let n = 400;
    let x = {
        let a = gaussian_vec(&mut rng, n, 1.0);
        let e = gaussian_vec(&mut rng, n, 0.1);
        let c = gaussian_vec(&mut rng, n, 1.0);
        Mat::from_fn(3, n, |i, j| match i {
            0 => a[j] + 1.0,
            1 => 2.0 * a[j] + e[j],
            _ => c[j],
        })
    };
    let mut entries = Vec::new();
    for j in 0..n {
        for i in 0..3 {
            if !(j % 2 == 0 && i == (j / 2) % 2) {
                entries.push((i, j));
            }
        }
    }
    let o = observe(&x, &entries);
    let em = impute_em_gaussian(&o, &EmParams::default().check().unwrap()).unwrap();
    // log-likelihood non-decreasing (EM monotonicity)
    assert!(
        em.loglik_trace
            .windows(2)
            .all(|w| w[1] >= w[0] - 1e-8 * w[0].abs())
    );
    let mean = impute_mean(&o);
    let hidden: Vec<(usize, usize)> = (0..n)
        .filter(|j| j % 2 == 0)
        .map(|j| ((j / 2) % 2, j))
        .collect();
    let err = |est: &Mat<f64>| -> f64 {
        hidden
            .iter()
            .map(|&(i, j)| (est[(i, j)] - x[(i, j)]).powi(2))
            .sum()
    };
    assert!(
        err(&em.x) < 0.05 * err(&mean),
        "EM {} vs mean {}",
        err(&em.x),
        err(&mean)
    );
    assert!((em.mean[0] - 1.0).abs() < 0.2 && (em.cov[(0, 1)] - 2.0).abs() < 0.4);
}

#[test]
fn fpc_imputation_recovers_low_rank_features() {
    let mut rng = seeded(18);
    let p = planted(100, 15, 1, 2, 0.0, 0.5, 0.5, &mut rng);
    let o = observe(&p.x, &p.ox);
    let imp = impute_fpc_cv(&o, &FpcImputeParams::default().check().unwrap(), &mut rng).unwrap();
    assert_eq!(imp.cv_errors.len(), imp.grid.len());
    assert!(imp.grid.contains(&imp.mu));
    let mean = impute_mean(&o);
    let hidden_err = |est: &Mat<f64>| -> f64 {
        let mut seen = vec![false; 15 * 100];
        for &(i, j) in &p.ox {
            seen[i * 100 + j] = true;
        }
        let mut s = 0.0;
        for i in 0..15 {
            for j in 0..100 {
                if !seen[i * 100 + j] {
                    s += (est[(i, j)] - p.x[(i, j)]).powi(2);
                }
            }
        }
        s
    };
    assert!(hidden_err(&imp.x) < 0.05 * hidden_err(&mean));
}

#[test]
fn svm_per_label_learns_linear_labels() {
    let mut rng = seeded(19);
    let (d, n, t) = (5, 300, 3);
    let x = gaussian_mat(&mut rng, d, n, 1.0);
    let w = gaussian_mat(&mut rng, t, d, 1.0);
    let s = &w * &x;
    let y = Mat::from_fn(t, n, |i, j| if s[(i, j)] + 0.3 > 0.0 { 1.0 } else { -1.0 });
    let mut oy = Vec::new();
    for i in 0..t {
        for j in 0..n {
            if (i + j) % 3 == 0 {
                oy.push((i, j));
            }
        }
    }
    let labels = observe(&y, &oy);
    let params = SvmCvParams::default()
        .with_cs(vec![1e-3, 1e-1, 10.0, 1e3])
        .check()
        .unwrap();
    let svms = svm_per_label_cv(x.as_ref(), &labels, &params, &mut rng).unwrap();
    assert_eq!(svms.c.len(), t);
    assert!(svms.c.iter().all(|c| params.cs.contains(c)));
    let p = Planted {
        x: x.clone(),
        y: y.clone(),
        ox: vec![],
        oy,
    };
    let err = label_error(&svms.scores, &p);
    assert!(err < 8.0, "SVM label error {err}");
    // a label without training entries gets the majority sign everywhere
    let only_first = observe(&y, &[(0, 0), (0, 1), (0, 2), (0, 3), (0, 4)]);
    let svms = svm_per_label_cv(x.as_ref(), &only_first, &params, &mut rng).unwrap();
    assert!(svms.c[1].is_nan() && svms.scores[(1, 7)].abs() == 1.0);
}

/// Accelerated MC-1 never spins on a rejected plain step: every stage of every path ends by the
/// tolerance (before the adaptive restart and the plain-step rule, MC-1's reset made the same
/// rejected candidate come back until `max_stage_iters`, 1,000 steps at the first μ of one λ
/// in three on yeast).
#[test]
fn accelerated_mc1_stages_end_by_the_tolerance() {
    let mut capped = Vec::new();
    // seed 105 with λ = 1 hit the cap at its last μ before the fix
    for seed in [104u64, 105] {
        let mut rng = seeded(seed);
        let p = planted(300, 40, 10, 5, 0.5, 0.8, 0.8, &mut rng);
        let prob = problem(&p);
        for lambda in [1e-1, 1.0] {
            let par = TransductionParams::default()
                .with_variant(TransductionVariant::Mc1)
                .with_lambda(lambda)
                .with_max_stage_iters(300)
                .with_accelerate(true)
                .check()
                .unwrap();
            let grid = mu_grid(&prob, &par, 6).unwrap();
            let path =
                fit_transduction_path(&prob, &par, &grid, &mut seeded(3), &mut NoObserver).unwrap();
            for s in &path.solutions {
                if !s.converged {
                    capped.push((seed, lambda, s.mu, s.iterations));
                }
            }
        }
    }
    assert!(capped.is_empty(), "stages ended by the cap: {capped:?}");
}
