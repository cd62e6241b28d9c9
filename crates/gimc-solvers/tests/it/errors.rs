//! Every invalid parameter or input gives a typed error (never a panic); numerical breakdown
//! is reported as a fit error.

use gimc_linalg::faer;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{gaussian_mat, seeded};
use gimc_linalg::{FeatureMatrix, Observed};
use gimc_solvers::linear::logistic::{LogisticParams, fit_logistic};
use gimc_solvers::linear::regression::{RidgeParams, bilinear_regression, fit_ridge};
use gimc_solvers::linear::svm::{SvmParams, fit_linear_svm};
use gimc_solvers::linear::{ClassData, LinearClassifier, Targets};
use gimc_solvers::nuclear::{FpcParams, fit_nuclear_imc, fit_nuclear_mc};
use gimc_solvers::{
    ImcParams, ImcProblem, ImcStart, NoObserver, PuImcParams, Side, SolverError, fit_imc,
    fit_mc_als, imc_objective, w_step,
};

use crate::common::{observe, random_pairs};

fn data() -> (FeatureMatrix, FeatureMatrix, Observed) {
    let mut rng = seeded(1);
    let x = FeatureMatrix::dense(gaussian_mat(&mut rng, 20, 5, 1.0)).unwrap();
    let y = FeatureMatrix::dense(gaussian_mat(&mut rng, 15, 4, 1.0)).unwrap();
    let a = gaussian_mat(&mut rng, 20, 15, 1.0);
    let o = observe(&a, &random_pairs(&mut rng, 20, 15, 100));
    (x, y, o)
}

fn is_param(r: Result<impl std::fmt::Debug, SolverError>) -> bool {
    matches!(r, Err(e) if e.is_parameter_error())
}

#[test]
fn imc_and_mc_parameter_errors() {
    let (x, y, o) = data();
    let mut rng = seeded(2);
    let problem = ImcProblem::partial(Side::Features(&x), Side::Features(&y), &o).unwrap();
    let base = ImcParams::default().with_rank(2);
    // rank 0, rank ≥ min dimension, λ < 0, NaN λ, NaN tolerances
    assert!(is_param(base.with_rank(0).check()));
    for rank in [4, 7] {
        let p = base.with_rank(rank).check().unwrap();
        assert!(is_param(fit_imc(
            &problem,
            &p,
            ImcStart::Draw(&mut rng),
            &mut NoObserver
        )));
    }
    for lambda in [-0.1, f64::NAN, f64::INFINITY] {
        assert!(is_param(base.with_lambda(lambda).check()));
        let w = Mat::<f64>::zeros(5, 2);
        let h = Mat::<f64>::zeros(4, 2);
        assert!(is_param(imc_objective(
            &problem,
            lambda,
            w.as_ref(),
            h.as_ref()
        )));
    }
    let mut bad_cg = base;
    bad_cg.cg.tol = f64::NAN;
    assert!(is_param(bad_cg.check()));
    // empty Ω, dimension mismatches
    let empty = Observed::from_triplets(20, 15, &[], &[], &[]).unwrap();
    assert!(is_param(ImcProblem::partial(
        Side::Features(&x),
        Side::Features(&y),
        &empty
    )));
    assert!(is_param(ImcProblem::partial(
        Side::Features(&y),
        Side::Features(&x),
        &o
    )));
    assert!(is_param(ImcProblem::fully_observed(
        Side::Identity(3),
        Side::Features(&y),
        &o
    )));
    let vp = base.check().unwrap();
    assert!(is_param(fit_mc_als(
        &empty,
        &vp,
        ImcStart::Draw(&mut rng),
        &mut NoObserver
    )));
    let big = base.with_rank(15).check().unwrap();
    assert!(is_param(fit_mc_als(
        &o,
        &big,
        ImcStart::Draw(&mut rng),
        &mut NoObserver
    )));
    // NaN features (bypassing the FeatureMatrix constructor) and NaN warm starts
    let mut xn = x.to_dense();
    xn[(3, 2)] = f64::NAN;
    let xn = FeatureMatrix::Dense(xn);
    assert!(is_param(ImcProblem::partial(
        Side::Features(&xn),
        Side::Features(&y),
        &o
    )));
    let mut w0 = Mat::<f64>::zeros(5, 2);
    w0[(0, 0)] = f64::NAN;
    let h0 = Mat::<f64>::zeros(4, 2);
    assert!(is_param(fit_imc(
        &problem,
        &vp,
        ImcStart::Warm(w0.clone(), h0.clone()),
        &mut NoObserver
    )));
    let mut w1 = Mat::<f64>::zeros(5, 2);
    assert!(is_param(w_step(
        &problem,
        &vp.params().with_lambda(0.1).check().unwrap(),
        Mat::<f64>::zeros(4, 3).as_ref(),
        w1.as_mut(),
    )));
    // PU
    assert!(is_param(PuImcParams::default().with_alpha(0.0).check()));
    assert!(is_param(ImcProblem::pu(
        Side::Features(&x),
        Side::Features(&y),
        &o,
        f64::NAN
    )));
}

#[test]
fn nuclear_parameter_errors() {
    let (x, y, o) = data();
    let mut rng = seeded(3);
    for p in [
        FpcParams::default().with_mu(0.0),
        FpcParams::default().with_mu(f64::NAN),
        FpcParams::default().with_eta_mu(1.5),
        FpcParams::default().with_tau(Some(-1.0)),
        FpcParams::default().with_max_rank(Some(0)),
    ] {
        assert!(is_param(p.check()));
    }
    let vp = FpcParams::default().check().unwrap();
    let empty = Observed::from_triplets(20, 15, &[], &[], &[]).unwrap();
    assert!(is_param(fit_nuclear_mc(
        &empty,
        &vp,
        &mut rng,
        &mut NoObserver
    )));
    let ident = ImcProblem::partial(Side::Identity(20), Side::Identity(15), &o).unwrap();
    assert!(is_param(fit_nuclear_imc(
        &ident,
        &vp,
        &mut rng,
        &mut NoObserver
    )));
    let full = ImcProblem::fully_observed(Side::Features(&x), Side::Features(&y), &o).unwrap();
    assert!(is_param(fit_nuclear_imc(
        &full,
        &vp,
        &mut rng,
        &mut NoObserver
    )));
}

#[test]
fn linear_toolbox_parameter_errors() {
    let (x, y, _) = data();
    let t = Mat::<f64>::zeros(20, 3);
    assert!(is_param(
        RidgeParams::default()
            .with_lambda(-1.0)
            .with_fit_intercept(false)
            .check()
    ));
    let rp = RidgeParams::default().check().unwrap();
    assert!(is_param(fit_ridge(
        &x,
        Targets::Dense(Mat::<f64>::zeros(19, 3).as_ref()),
        &rp
    )));
    let mut tn = t.clone();
    tn[(0, 0)] = f64::NAN;
    assert!(is_param(fit_ridge(&x, Targets::Dense(tn.as_ref()), &rp)));
    assert!(is_param(bilinear_regression(
        &x,
        &y,
        Targets::Dense(t.as_ref()),
        2
    )));
    let mut rng = seeded(4);
    let labels: Vec<usize> = (0..20).map(|i| i % 3).collect();
    for p in [
        SvmParams::default().with_c(0.0),
        SvmParams::default().with_c(f64::NAN),
        SvmParams::default().with_eps(-1.0),
        SvmParams::default().with_bias(Some(f64::INFINITY)),
        SvmParams::default().with_max_epochs(0),
    ] {
        assert!(is_param(p.check()));
    }
    let sp = SvmParams::default().check().unwrap();
    let fit_svm =
        |labels: &[usize], k: usize, rng: &mut _| -> Result<LinearClassifier, SolverError> {
            fit_linear_svm(
                ClassData {
                    x: &x,
                    labels,
                    n_classes: k,
                },
                &sp,
                rng,
                &mut NoObserver,
            )
        };
    assert!(is_param(fit_svm(&labels[..19], 3, &mut rng)));
    assert!(is_param(fit_svm(&labels, 2, &mut rng)));
    assert!(is_param(fit_svm(&labels, 1, &mut rng)));
    assert!(is_param(LogisticParams::default().with_c(-1.0).check()));
    let lp = LogisticParams::default().check().unwrap();
    assert!(is_param(fit_logistic(
        ClassData {
            x: &x,
            labels: &labels,
            n_classes: 2
        },
        &lp,
        &mut NoObserver
    )));
    let model = fit_svm(&labels, 3, &mut rng).unwrap();
    assert!(is_param(model.predict(&y)));
}

/// Features so large that products overflow: the solver stops with a fit error instead of
/// returning infinite or NaN factors.
#[test]
fn overflow_is_reported_as_a_fit_error() {
    let (x, y, o) = data();
    let huge = FeatureMatrix::dense(x.to_dense() * faer::Scale(1e160)).unwrap();
    let problem = ImcProblem::partial(Side::Features(&huge), Side::Features(&y), &o).unwrap();
    let p = ImcParams::default().with_rank(2).check().unwrap();
    let w0 = Mat::<f64>::full(5, 2, 1.0);
    let h0 = Mat::<f64>::full(4, 2, 1.0);
    let r = fit_imc(&problem, &p, ImcStart::Warm(w0, h0), &mut NoObserver);
    match r {
        Err(e) => assert!(!e.is_parameter_error(), "{e}"),
        Ok(m) => panic!("expected a fit error, got a model with W = {:?}", m.w),
    }
}
