//! Nuclear-norm MC and IMC by FPC with continuation.

use gimc_linalg::rng::seeded;
use gimc_solvers::nuclear::{FpcParams, fit_nuclear_imc, fit_nuclear_mc};
use gimc_solvers::{Side, Trace};

use crate::common::{observe, planted_imc, planted_low_rank, random_pairs, rel_err};

/// Within each μ stage the FPC objective F_μ must not increase (τ = 1/L).
fn assert_monotone_within_stages(trace: &Trace) {
    for w in trace.records.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        if a.extra("mu") == b.extra("mu") {
            assert!(
                b.objective <= a.objective * (1.0 + 1e-9) + 1e-12,
                "iteration {}: {} -> {} at mu {:?}",
                b.iteration,
                a.objective,
                b.objective,
                b.extra("mu")
            );
        }
    }
}

#[test]
fn nuclear_mc_recovers_planted_low_rank() {
    let (n, m, k) = (100, 80, 3);
    let a = planted_low_rank(n, m, k, 5);
    let mut rng = seeded(6);
    let omega = observe(&a, &random_pairs(&mut rng, n, m, n * m / 2));
    let params = FpcParams::default()
        .with_mu(1e-4)
        .with_xtol(1e-9)
        .with_max_iter(3000)
        .check()
        .unwrap();
    let mut trace = Trace::new();
    let model = fit_nuclear_mc(&omega, &params, &mut rng, &mut trace).unwrap();
    let ahat = model
        .scores_for_rows(Side::Identity(n), Side::Identity(m))
        .unwrap();
    let err = rel_err(&a, &ahat);
    assert!(
        err < 1e-3,
        "relative error {err}, rank {}, {} iterations",
        model.rank(),
        model.iterations
    );
    assert_eq!(model.rank(), k);
    assert_monotone_within_stages(&trace);
    // continuation: μ decreases geometrically down to the target
    let mus: Vec<f64> = trace.records.iter().filter_map(|r| r.extra("mu")).collect();
    assert!(mus.windows(2).all(|w| w[1] <= w[0]));
    assert_eq!(*mus.last().unwrap(), 1e-4);
}

#[test]
fn nuclear_imc_recovers_planted_low_rank() {
    let (n, d, k) = (100, 10, 2);
    let pl = planted_imc(n, d, k, 8);
    let mut rng = seeded(9);
    let omega = observe(&pl.a, &random_pairs(&mut rng, n, n, 600));
    let problem = pl.problem(&omega);
    let params = FpcParams::default()
        .with_mu(1e-3)
        .with_xtol(1e-10)
        .with_max_iter(5000)
        .check()
        .unwrap();
    let mut trace = Trace::new();
    let model = fit_nuclear_imc(&problem, &params, &mut rng, &mut trace).unwrap();
    let err = pl.rel_err_of(&model);
    assert!(
        err < 1e-3,
        "relative error {err}, rank {}, {} iterations",
        model.rank(),
        model.iterations
    );
    assert_monotone_within_stages(&trace);
}
