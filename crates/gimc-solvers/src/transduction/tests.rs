//! Unit tests of MC-1 / MC-b: the loss and its gradient, the shrinkage, FPC, the μ path and
//! cross-validation.

use super::*;
use gimc_linalg::Observed;
use gimc_linalg::svd::{shrink_singular_values, thin_svd};

use crate::iter::{NoObserver, run};

use super::fpc::{mc1_nuclear_norm, schedule};
use super::loss::{sigmoid_neg, softplus_neg};
use super::shrink::{gram_shrink, nuclear_norm_gram};
use gimc_linalg::rng::{gaussian_mat, seeded};

/// A small problem with ±1 labels and features observed at random with probability `p`.
fn random_problem(t: usize, d: usize, n: usize, p: f64, seed: u64) -> TransductionProblem {
    use rand::Rng;
    let mut rng = seeded(seed);
    let x = gaussian_mat(&mut rng, d, n, 1.0);
    let (mut lr, mut lc, mut lv) = (Vec::new(), Vec::new(), Vec::new());
    let (mut fr, mut fc, mut fv) = (Vec::new(), Vec::new(), Vec::new());
    for j in 0..n {
        for i in 0..t {
            if rng.random::<f64>() < p {
                lr.push(i);
                lc.push(j);
                lv.push(if x[(i % d, j)] > 0.0 { 1.0 } else { -1.0 });
            }
        }
        for i in 0..d {
            if rng.random::<f64>() < p {
                fr.push(i);
                fc.push(j);
                fv.push(x[(i, j)]);
            }
        }
    }
    TransductionProblem::new(
        Observed::from_triplets(t, n, &lr, &lc, &lv).unwrap(),
        Observed::from_triplets(d, n, &fr, &fc, &fv).unwrap(),
    )
    .unwrap()
}

#[test]
fn dense_feature_path_is_bitwise_the_sparse_one() {
    let problem = random_problem(3, 8, 40, 0.6, 21);
    for (variant, accelerate) in [
        (TransductionVariant::Mc1, true),
        (TransductionVariant::McB, true),
        (TransductionVariant::McB, false),
    ] {
        let params = TransductionParams {
            variant,
            lambda: 0.5,
            accelerate,
            max_stage_iters: 200,
            ..TransductionParams::default()
        }
        .check()
        .unwrap();
        let grid = mu_grid(&problem, &params, 4).unwrap();
        let fit = |dense: bool| {
            let mut rng = seeded(5);
            let mut solver = TransductionFpc::new(&problem, params, &grid, &mut rng).unwrap();
            if !dense {
                solver.dense = None;
            } else {
                assert!(solver.dense.is_some());
            }
            let mut st = solver.initial_state().unwrap();
            let report = run(&mut solver, &mut st, 2000, &mut NoObserver).unwrap();
            (st.solutions, report.objective_trace)
        };
        let (a, ta) = fit(true);
        let (b, tb) = fit(false);
        assert_eq!(ta, tb);
        assert_eq!(a.len(), grid.len());
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.z, y.z);
            assert_eq!(x.bias, y.bias);
            assert_eq!(x.objective, y.objective);
        }
    }
    // a sparse feature block keeps the entry lists
    let sparse = random_problem(2, 8, 40, 0.1, 22);
    let params = TransductionParams::default().check().unwrap();
    let grid = mu_grid(&sparse, &params, 2).unwrap();
    let solver = TransductionFpc::new(&sparse, params, &grid, &mut seeded(1)).unwrap();
    assert!(solver.dense.is_none());
}

#[test]
fn schedule_lands_on_grid_points() {
    let s = schedule(100.0, 0.25, &[10.0, 2.5, 0.1]);
    let mus: Vec<f64> = s.iter().map(|x| x.0).collect();
    assert_eq!(mus, vec![100.0, 25.0, 10.0, 2.5, 0.625, 0.15625, 0.1]);
    let marks: Vec<Option<usize>> = s.iter().map(|x| x.1).collect();
    assert_eq!(
        marks,
        vec![None, None, Some(0), Some(1), None, None, Some(2)]
    );
    // a grid point above the start is the first stage
    let s = schedule(1.0, 0.25, &[4.0, 1.0]);
    assert_eq!(s, vec![(4.0, Some(0)), (1.0, Some(1))]);
}

#[test]
fn gram_shrink_matches_exact_shrinkage() {
    let mut rng = seeded(3);
    for (m, n) in [(6, 20), (20, 6), (7, 7)] {
        let a = gaussian_mat(&mut rng, m, n, 1.0);
        for t in [1.5, 0.2] {
            let exact = shrink_singular_values(thin_svd(a.as_ref()).unwrap(), t).unwrap();
            let gram = gram_shrink(a.as_ref(), t, None).unwrap();
            assert_eq!(exact.s.len(), gram.s.len());
            for (x, y) in exact.s.iter().zip(&gram.s) {
                assert!((x - y).abs() < 1e-10);
            }
            assert!((exact.reconstruct() - &gram.z).norm_l2() < 1e-9);
            // Vᵀc either way
            let c: Vec<f64> = (0..n).map(|j| j as f64 - 3.0).collect();
            let want: Vec<f64> = (0..exact.s.len())
                .map(|k| (0..n).map(|j| exact.v[(j, k)] * c[j]).sum())
                .collect();
            let got = gram.vt_times(a.as_ref(), &c);
            for (w, g) in want.iter().zip(&got) {
                assert!((w.abs() - g.abs()).abs() < 1e-8, "{w} vs {g}");
            }
        }
    }
}

#[test]
fn mc1_nuclear_norm_matches_dense() {
    let mut rng = seeded(4);
    for (m, n, k) in [(9, 14, 3), (6, 30, 0), (12, 5, 4)] {
        let a = gaussian_mat(&mut rng, m, n, 1.0);
        let svd = thin_svd(a.as_ref()).unwrap().truncate(k);
        let mut z = svd.reconstruct();
        let c: Vec<f64> = (0..n).map(|j| 1.0 - z[(m - 1, j)]).collect();
        for j in 0..n {
            z[(m - 1, j)] = 1.0;
        }
        let dense: f64 = gimc_linalg::svd::singular_values(z.as_ref())
            .unwrap()
            .iter()
            .sum();
        let vtc: Vec<f64> = (0..k)
            .map(|col| (0..n).map(|j| svd.v[(j, col)] * c[j]).sum())
            .collect();
        let f = mc1_nuclear_norm(svd.u.as_ref(), &svd.s, &vtc, &c).unwrap();
        assert!((dense - f).abs() < 1e-9 * dense, "{dense} vs {f}");
    }
}

#[test]
fn gram_nuclear_norm_matches_singular_values() {
    let mut rng = seeded(5);
    // wide, tall, rank-deficient (rank 2 of 7) and empty
    let low = {
        let a = gaussian_mat(&mut rng, 7, 2, 1.0);
        let b = gaussian_mat(&mut rng, 2, 40, 1.0);
        &a * &b
    };
    for a in [
        gaussian_mat(&mut rng, 8, 50, 1.0),
        gaussian_mat(&mut rng, 60, 9, 3.0),
        low,
        gimc_linalg::faer::Mat::<f64>::zeros(0, 4),
    ] {
        let exact: f64 = gimc_linalg::svd::singular_values(a.as_ref())
            .unwrap()
            .iter()
            .sum();
        let gram = nuclear_norm_gram(a.as_ref()).unwrap();
        // the 5 zero singular values of the rank-2 matrix each come out near √ε σ_1
        assert!(
            (exact - gram).abs() <= 1e-6 * exact.max(1.0),
            "{exact} vs {gram}"
        );
        assert!(gram >= 0.0);
    }
}

#[test]
fn stable_logistic_pieces() {
    for m in [-800.0, -3.0, 0.0, 2.0, 800.0] {
        let sp = softplus_neg(m);
        assert!(sp.is_finite() && sp >= 0.0);
        let s = sigmoid_neg(m);
        assert!((0.0..=1.0).contains(&s));
    }
    assert!((softplus_neg(0.0) - 2f64.ln()).abs() < 1e-15);
    assert!((sigmoid_neg(0.0) - 0.5).abs() < 1e-15);
    assert!((softplus_neg(-800.0) - 800.0).abs() < 1e-9);
}

/// The secant start of the μ stages: on both variants (accelerated and plain FPC) every grid
/// point ends as close to a tight-tolerance reference as without it, fewer steps in all, and
/// no stage starts above the objective of the iterate the last stage left (the starts are
/// only taken when they lower F at the new μ).
#[test]
fn secant_start_keeps_the_path_and_saves_steps() {
    use crate::iter::{IterationRecord, Observer, ObserverAction};
    /// The objective of every stage's first step and the number of steps.
    struct Starts(Vec<f64>, usize, bool);
    impl Observer for Starts {
        fn observe(&mut self, r: &IterationRecord) -> ObserverAction {
            if r.iteration > 0 {
                self.1 += 1;
                if self.2 {
                    self.0.push(r.objective);
                }
                self.2 = r.extra("stage_end") == Some(1.0);
            }
            ObserverAction::Continue
        }
    }
    let problem = random_problem(4, 12, 120, 0.5, 31);
    for (variant, accelerate) in [
        (TransductionVariant::Mc1, true),
        (TransductionVariant::McB, true),
        (TransductionVariant::McB, false),
    ] {
        let base = TransductionParams::default()
            .with_variant(variant)
            .with_lambda(0.1)
            .with_accelerate(accelerate)
            .with_max_stage_iters(5000);
        let grid = mu_grid(&problem, &base.check().unwrap(), 6).unwrap();
        let fit = |secant: bool, tol: f64| {
            let p = base
                .with_secant_start(secant)
                .with_tol(tol)
                .check()
                .unwrap();
            let mut obs = Starts(Vec::new(), 0, true);
            let path =
                fit_transduction_path(&problem, &p, &grid, &mut seeded(2), &mut obs).unwrap();
            (path, obs)
        };
        let (reference, _) = fit(false, 1e-10);
        let (with, with_obs) = fit(true, 1e-5);
        let (without, without_obs) = fit(false, 1e-5);
        assert!(
            with_obs.1 < without_obs.1,
            "{variant:?} {accelerate}: {} steps with the secant start, {} without",
            with_obs.1,
            without_obs.1
        );
        let gap = |path: &TransductionPath| -> f64 {
            path.solutions
                .iter()
                .zip(&reference.solutions)
                .map(|(s, r)| (s.objective - r.objective) / r.objective)
                .fold(0.0, f64::max)
        };
        let (g_with, g_without) = (gap(&with), gap(&without));
        assert!(
            g_with <= 2.0 * g_without.max(1e-4),
            "{variant:?} {accelerate}: gaps {g_with:e} with the secant start, {g_without:e} without"
        );
        // the first stages (before any secant exists) are the same
        assert_eq!(with.solutions[0].objective, without.solutions[0].objective);
        assert_eq!(with_obs.0[..2], without_obs.0[..2]);
    }
}
