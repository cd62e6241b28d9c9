//! The linear label models of `fit_linear`: each is the solver's own model in the [X, 1] form,
//! the grid is chosen on validation, and the models go through model files like any other.

use gimc::labels::{LinearSetting, LinearTrial};
use gimc::persist::{label_model_from_bytes, label_model_to_bytes};
use gimc::{GimcError, LabelData, LinearMethod, LinearParams, MapRegistry, NoObserver, fit_linear};
use gimc_linalg::faer::Mat;
use gimc_linalg::memory::MemoryBudget;
use gimc_linalg::rng::{gaussian_mat, seeded};
use gimc_linalg::{FeatureMatrix, Observed};
use gimc_solvers::linear::logistic::{LogisticParams, fit_logistic_binary};
use gimc_solvers::linear::regression::{ReducedRank, RidgeParams, fit_ridge};
use gimc_solvers::linear::{BinaryData, Targets};

use crate::common;

fn fit(data: &LabelData, params: LinearParams) -> gimc::Result<gimc::labels::LinearSelection> {
    fit_linear(data, &params.check().unwrap(), &mut NoObserver)
}

/// The labels of `data` as dense 0/1 targets.
fn dense_labels(data: &LabelData) -> Mat<f64> {
    let a = data.labels();
    let mut t = Mat::zeros(a.rows(), a.cols());
    for (i, row) in a.outer_iterator().enumerate() {
        for (j, &v) in row.iter() {
            t[(i, j)] = v;
        }
    }
    t
}

#[test]
fn the_ridge_model_scores_as_the_solvers_ridge_with_its_intercept() {
    let data = common::multilabel(120, 5, 4, 3);
    let sel = fit(&data, LinearParams::default().with_lambdas(vec![0.5])).unwrap();
    // one setting: no split, no score
    assert_eq!(
        sel.tried,
        vec![LinearTrial {
            setting: LinearSetting::Lambda(0.5),
            score: None
        }]
    );
    let a = Observed::from_csr(data.labels()).unwrap();
    let p = RidgeParams::default()
        .with_lambda(0.5)
        .with_fit_intercept(true)
        .check()
        .unwrap();
    let direct = fit_ridge(data.features(), Targets::Sparse(&a), &p).unwrap();
    let expected = direct.predict(data.features()).unwrap();
    let scores = sel.model.scores(data.features()).unwrap();
    assert!((&scores - &expected).norm_max() < 1e-10);
    // the intercept is not penalised: it is nonzero on 0/1 targets
    assert!(direct.intercept.iter().any(|b| b.abs() > 1e-3));
    assert_eq!(sel.model.method(), "ridge");
    assert_eq!(sel.model.hyper_parameters().get("lambda"), Some(&0.5));
}

#[test]
fn reduced_rank_regression_caps_its_rank_at_the_labels_and_matches_the_solver() {
    let data = common::multilabel(100, 6, 3, 5);
    // 2 and 10 (capped at min(d, L) = 3) are tried; 3 twice would be once
    let sel = fit(
        &data,
        LinearParams::default()
            .with_method(LinearMethod::ReducedRank)
            .with_ranks(vec![2, 10, 3]),
    )
    .unwrap();
    let ranks: Vec<LinearSetting> = sel.tried.iter().map(|t| t.setting).collect();
    assert_eq!(ranks, [LinearSetting::Rank(2), LinearSetting::Rank(3)]);
    let LinearSetting::Rank(k) = sel.chosen.setting else {
        panic!("{:?}", sel.chosen)
    };
    // with its intercept (the features are not centred)
    let t = dense_labels(&data);
    let fit = ReducedRank::new(data.features(), Targets::Dense(t.as_ref()), true)
        .unwrap()
        .fit(k)
        .unwrap();
    assert!(fit.intercept.iter().any(|b| b.abs() > 1e-3));
    let expected = fit.predict(data.features()).unwrap();
    let scores = sel.model.scores(data.features()).unwrap();
    assert!((&scores - &expected).norm_max() < 1e-9);
}

#[test]
fn multi_label_logistic_is_one_binary_model_per_label() {
    let data = common::multilabel_sparse(90, 8, 3, 7);
    let sel = fit(
        &data,
        LinearParams::default()
            .with_method(LinearMethod::Logistic)
            .with_lambdas(vec![2.0]),
    )
    .unwrap();
    let scores = sel.model.scores(data.features()).unwrap();
    let t = dense_labels(&data);
    let p = LogisticParams::default().with_c(0.5).check().unwrap();
    for label in 0..data.n_labels() {
        let y: Vec<bool> = (0..data.nrows()).map(|i| t[(i, label)] != 0.0).collect();
        let m = fit_logistic_binary(
            BinaryData {
                x: data.features(),
                y: &y,
            },
            &p,
            &mut NoObserver,
        )
        .unwrap();
        let margin = m.decision_function(data.features()).unwrap();
        for i in 0..data.nrows() {
            assert!((scores[(i, label)] - margin[(i, 0)]).abs() < 1e-10);
        }
    }
}

/// Multi-class data whose class is the arg max of a linear score x·v_c.
fn linear_classes(n: usize, d: usize, c: usize, seed: u64) -> LabelData {
    let x = gaussian_mat(&mut seeded(seed), n, d, 1.0);
    let v = gaussian_mat(&mut seeded(seed + 1), d, c, 1.0);
    let s = &x * &v;
    let classes: Vec<usize> = (0..n)
        .map(|i| {
            (0..c)
                .max_by(|&a, &b| s[(i, a)].total_cmp(&s[(i, b)]))
                .unwrap()
        })
        .collect();
    LabelData::multi_class(FeatureMatrix::dense(x).unwrap(), &classes, c).unwrap()
}

#[test]
fn logistic_and_svm_separate_classes_and_two_classes_score_by_one_margin() {
    for method in [LinearMethod::Logistic, LinearMethod::Svm] {
        for classes in [2, 3] {
            let data = linear_classes(150, 4, classes, 11);
            let sel = fit(&data, LinearParams::default().with_method(method)).unwrap();
            let predicted = sel.model.predict_classes(data.features()).unwrap();
            let truth = data.classes().unwrap();
            let right = predicted.iter().zip(truth).filter(|(a, b)| a == b).count();
            assert!(
                right as f64 >= 0.9 * truth.len() as f64,
                "{method:?} {classes}: {right} of {}",
                truth.len()
            );
            if classes == 2 {
                let s = sel.model.scores(data.features()).unwrap();
                assert!((0..s.nrows()).all(|i| s[(i, 0)] == -s[(i, 1)]));
            }
        }
    }
}

#[test]
fn the_grid_is_chosen_on_validation_deterministically_and_the_model_file_round_trips() {
    let data = common::multilabel(200, 5, 4, 13);
    let params = LinearParams::default().with_seed(3);
    let a = fit(&data, params.clone()).unwrap();
    let b = fit(&data, params).unwrap();
    assert_eq!(a.tried.len(), 5);
    let best = a
        .tried
        .iter()
        .filter_map(|t| t.score)
        .fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(a.chosen.score, Some(best));
    // of the tied best, the largest λ
    let tied_max = a
        .tried
        .iter()
        .filter(|t| t.score == Some(best))
        .map(|t| match t.setting {
            LinearSetting::Lambda(l) => l,
            LinearSetting::Rank(_) => f64::NAN,
        })
        .fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(a.chosen.setting, LinearSetting::Lambda(tied_max));
    let bytes = label_model_to_bytes(&a.model).unwrap();
    assert_eq!(bytes, label_model_to_bytes(&b.model).unwrap());
    let loaded = label_model_from_bytes(&bytes, &MapRegistry::builtin()).unwrap();
    assert_eq!(loaded.method(), "ridge");
    let x: &FeatureMatrix = data.features();
    assert!((&loaded.scores(x).unwrap() - &a.model.scores(x).unwrap()).norm_max() < 1e-12);
}

#[test]
fn bad_grids_and_data_too_large_for_memory_are_refused() {
    let bad = [
        LinearParams::default().with_lambdas(vec![]),
        LinearParams::default().with_lambdas(vec![0.0]),
        LinearParams::default().with_lambdas(vec![f64::NAN]),
        LinearParams::default()
            .with_method(LinearMethod::ReducedRank)
            .with_ranks(vec![0]),
        LinearParams::default().with_validation_fraction(1.0),
        LinearParams::default().with_select_k(0),
    ];
    for p in bad {
        assert!(p.check().is_err(), "{p:?}");
    }
    let data = common::multilabel(50, 5, 3, 1);
    let small = LinearParams::default().with_memory(MemoryBudget::Bytes(1000));
    assert!(matches!(
        fit(&data, small),
        Err(GimcError::InsufficientMemory(_))
    ));
    for method in LinearMethod::ALL {
        assert_eq!(LinearMethod::from_name(method.name()), Some(method));
    }
    assert_eq!(LinearMethod::from_name("lasso"), None);
}
