//! Plain MC by row-wise ALS.

use gimc_linalg::rng::seeded;
use gimc_solvers::{ImcInit, ImcParams, ImcStart, NoObserver, Side, fit_mc_als};

use crate::common::{observe, planted_low_rank, random_pairs, rel_err};

#[test]
fn mc_als_recovers_planted_low_rank() {
    let (n, m, k) = (80, 60, 3);
    let a = planted_low_rank(n, m, k, 3);
    let mut rng = seeded(4);
    let omega = observe(&a, &random_pairs(&mut rng, n, m, n * m * 2 / 5));
    let params = ImcParams::default()
        .with_rank(k)
        .with_lambda(1e-9)
        .with_max_outer(200)
        .with_tol(1e-16)
        .with_init(ImcInit::Spectral)
        .check()
        .unwrap();
    let model = fit_mc_als(&omega, &params, ImcStart::Draw(&mut rng), &mut NoObserver).unwrap();
    let ahat = model
        .scores_for_rows(Side::Identity(n), Side::Identity(m))
        .unwrap();
    let err = rel_err(&a, &ahat);
    assert!(
        err < 1e-4,
        "relative error {err} after {} iterations",
        model.iterations
    );
    assert!(
        model
            .objective_trace
            .windows(2)
            .all(|w| w[1] <= w[0] * (1.0 + 1e-12))
    );
}
