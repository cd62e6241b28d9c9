//! Semi-supervised clustering (Algorithm 2, DESIGN §3.3).

use gimc::NoObserver;
use gimc::{
    GimcError, SemiSupFit, SemiSupInputs, SemiSupParams, ValidSemiSupParams, fit_semisupervised,
    fit_semisupervised_with_start,
};
use gimc_data::synth::two_class_2d;
use gimc_featmap::{FourierFamily, RandomFourier};
use gimc_linalg::FeatureMatrix;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::seeded;
use gimc_metrics::{constraint_error, pairwise_clustering_error};
use rand::Rng;

/// Two concentric rings (no linear separator) and `count` random constraint pairs from the
/// truth.
fn rings(
    n: usize,
    count: usize,
    seed: u64,
) -> (FeatureMatrix, Vec<usize>, Vec<(usize, usize, f64)>) {
    let mut rng = seeded(seed);
    let d = two_class_2d(n, 0.15, &mut rng).unwrap();
    let truth = d.classes().unwrap().to_vec();
    let mut pairs = Vec::with_capacity(count);
    while pairs.len() < count {
        let (i, j) = (rng.random_range(0..n), rng.random_range(0..n));
        if i != j {
            pairs.push((i, j, f64::from(u8::from(truth[i] == truth[j]))));
        }
    }
    (d.features.clone(), truth, pairs)
}

/// A deliberately poor start: 4 Fourier directions at a length scale far above the rings', so the
/// unlearned map cannot tell the rings apart and learning U, V has to find the scale.
fn params(learn: bool) -> SemiSupParams {
    let mut p = SemiSupParams::new(2, 4, 0.002)
        .with_learn(learn)
        .with_lambdas(vec![0.1]);
    p.completion.max_iter = 15;
    p.completion.start_iters = 20;
    p
}

/// [`fit_semisupervised`] with Fourier maps, the rng seeded with `seed` and no observer.
fn fourier_fit(
    x: &FeatureMatrix,
    pairs: &[(usize, usize, f64)],
    params: &ValidSemiSupParams,
    seed: u64,
) -> gimc::Result<SemiSupFit<RandomFourier>> {
    fit_semisupervised(
        SemiSupInputs {
            x,
            pairs,
            family: &FourierFamily,
        },
        params,
        &mut seeded(seed),
        &mut NoObserver,
    )
}

#[test]
fn learned_map_beats_its_start_on_rings() {
    let (x, truth, pairs) = rings(300, 1500, 3);
    let (test, train) = pairs.split_at(500);
    let start = fourier_fit(&x, train, &params(false).check().unwrap(), 9).unwrap();
    let learned = fourier_fit(&x, train, &params(true).check().unwrap(), 9).unwrap();
    assert_eq!(start.iterations, 0);
    assert!(learned.iterations > 0, "validation kept the start");
    let e_start = constraint_error(test, &start.labels).unwrap();
    let e_learned = constraint_error(test, &learned.labels).unwrap();
    let p_start = pairwise_clustering_error(&start.labels, &truth).unwrap();
    let p_learned = pairwise_clustering_error(&learned.labels, &truth).unwrap();
    eprintln!(
        "held-out constraint error {e_start} -> {e_learned}; pairwise {p_start} -> {p_learned}"
    );
    assert!(e_learned < e_start, "{e_learned} !< {e_start}");
    assert!(p_learned < p_start);
    assert!(learned.train_constraint_error <= start.train_constraint_error);
}

#[test]
fn lambda_is_chosen_on_held_out_constraints() {
    let (x, _, pairs) = rings(120, 600, 5);
    let mut p = params(true).with_lambdas(vec![0.1, 10.0]);
    p.completion.max_iter = 3;
    let p = p.check().unwrap();
    let fit = fourier_fit(&x, &pairs, &p, 1).unwrap();
    assert_eq!(fit.validation.len(), 2);
    let best = fit
        .validation
        .iter()
        .map(|s| s.constraint_error)
        .fold(f64::INFINITY, f64::min);
    let chosen = fit
        .validation
        .iter()
        .find(|s| s.lambda == fit.lambda)
        .unwrap();
    assert_eq!(chosen.constraint_error, best);
    assert_eq!(fit.labels.len(), 120);
    // deterministic from the seed
    let again = fourier_fit(&x, &pairs, &p, 1).unwrap();
    assert_eq!(again.labels, fit.labels);
}

#[test]
fn invalid_constraints_give_typed_errors() {
    let (x, _, pairs) = rings(40, 100, 2);
    let p = params(true).check().unwrap();
    let run = |pairs: &[(usize, usize, f64)]| fourier_fit(&x, pairs, &p, 0);
    assert!(matches!(run(&[]), Err(GimcError::Empty(_))));
    let mut bad = pairs.clone();
    bad.push((3, 40, 1.0));
    assert!(matches!(run(&bad), Err(GimcError::InvalidInput { .. })));
    let mut bad = pairs.clone();
    bad.push((3, 4, 0.5));
    assert!(matches!(run(&bad), Err(GimcError::InvalidInput { .. })));
    let mut bad = pairs.clone();
    bad.push((pairs[0].1, pairs[0].0, 1.0 - pairs[0].2));
    let e = run(&bad).unwrap_err();
    assert!(e.is_parameter_error(), "{e}");
    let mut xn = x.to_dense();
    xn[(7, 1)] = f64::NAN;
    let xn = FeatureMatrix::Dense(xn);
    assert!(fourier_fit(&xn, &pairs, &p, 0).is_err());
    let xe = FeatureMatrix::Dense(Mat::zeros(0, 2));
    assert!(fourier_fit(&xe, &pairs, &p, 0).is_err());
    let mut pk = params(true);
    pk.k = 0;
    assert!(matches!(
        pk.check(),
        Err(GimcError::InvalidParameter { .. })
    ));
}

#[test]
fn gamma_from_the_scale_rule_is_resolved_on_the_features_and_reported() {
    let (x, _, pairs) = rings(120, 300, 5);
    let mut p = SemiSupParams::new(2, 8, gimc::Gamma::Scale(2.0))
        .with_learn(false)
        .with_lambdas(vec![0.1]);
    p.completion.start_iters = 5;
    let fit = fourier_fit(&x, &pairs, &p.check().unwrap(), 1).unwrap();
    assert_eq!(fit.gamma, 2.0 * x.gamma_scale());
    let fixed = p.clone().with_gamma(0.3).check().unwrap();
    let fit = fourier_fit(&x, &pairs, &fixed, 1).unwrap();
    assert_eq!(fit.gamma, 0.3);
    let bad = p.with_gamma(gimc::Gamma::Scale(f64::NAN));
    assert!(bad.check().is_err());
}

#[test]
fn an_observer_that_stops_interrupts_the_whole_fit() {
    struct StopAfter(usize);
    impl gimc::Observer for StopAfter {
        fn observe(&mut self, _r: &gimc::IterationRecord) -> gimc::ObserverAction {
            self.0 += 1;
            if self.0 >= 2 {
                gimc::ObserverAction::Stop
            } else {
                gimc::ObserverAction::Continue
            }
        }
    }
    let (x, _, pairs) = rings(120, 400, 6);
    let mut stop = StopAfter(0);
    let err = gimc::fit_semisupervised(
        SemiSupInputs {
            x: &x,
            pairs: &pairs,
            family: &FourierFamily,
        },
        &params(true).check().unwrap(),
        &mut seeded(2),
        &mut stop,
    )
    .unwrap_err();
    assert!(matches!(err, GimcError::Interrupted), "{err}");
    assert_eq!(
        stop.0, 2,
        "the fit went on after the observer asked to stop"
    );
}

/// One pass gives GIMC and its unlearned baseline exactly as two separate fits from the same
/// generator state do, whichever λ each chooses, with and without the refit, and with a single
/// λ (no selection for the baseline).
#[test]
fn the_pair_equals_the_two_separate_fits() {
    let (x, _, pairs) = rings(120, 400, 5);
    let family = FourierFamily;
    let grids: [&[f64]; 3] = [&[0.001, 0.1, 10.0, 1000.0], &[0.1], &[1000.0, 0.001]];
    // whether the two chose the same λ (the refit's start shared) or not, per refitted case
    let mut same_lambda = Vec::new();
    for (g, lambdas) in grids.iter().enumerate() {
        for refit in [true, false] {
            let build = |learn: bool| {
                let mut p = SemiSupParams::new(2, 6, 0.5)
                    .with_learn(learn)
                    .with_lambdas(lambdas.to_vec())
                    .with_refit(refit);
                p.completion.max_iter = 4;
                p.completion.start_iters = 10;
                p.check().unwrap()
            };
            let seed = 50 + g as u64;
            let inputs = SemiSupInputs {
                x: &x,
                pairs: &pairs,
                family: &family,
            };
            let pair =
                fit_semisupervised_with_start(inputs, &build(true), &mut seeded(seed)).unwrap();
            let fit = |learn: bool| {
                fit_semisupervised(inputs, &build(learn), &mut seeded(seed), &mut NoObserver)
                    .unwrap()
            };
            let (learned, start) = (fit(true), fit(false));
            assert_eq!(pair.learned, learned, "grid {lambdas:?}, refit {refit}");
            assert_eq!(pair.start, start, "grid {lambdas:?}, refit {refit}");
            assert_eq!(pair.start.iterations, 0);
            assert!(pair.start_seconds > 0.0);
            if refit {
                same_lambda.push(pair.start.lambda == pair.learned.lambda);
            }
        }
    }
    assert!(
        same_lambda.contains(&true) && same_lambda.contains(&false),
        "{same_lambda:?}"
    );
    // the baseline alone has no start to share
    let e = fit_semisupervised_with_start(
        SemiSupInputs {
            x: &x,
            pairs: &pairs,
            family: &family,
        },
        &SemiSupParams::new(2, 6, 0.5)
            .with_learn(false)
            .check()
            .unwrap(),
        &mut seeded(1),
    )
    .unwrap_err();
    assert!(e.is_parameter_error(), "{e}");
}
