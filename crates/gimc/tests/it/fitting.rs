//! Fitting: the objective never increases across outer iterations (proptest over small random
//! problems, both schemes, both learned maps, and the general path), GIMC ends below its IMC
//! start, the best-validation iterate is the one recorded, observers see every iteration and
//! can stop the fit, and the combined features fit at least as well as either map alone.

use gimc::labels::LabelProblem;
use gimc::{
    CompletionData, CompletionFit, CompletionInputs, CompletionParams, FitStop, LabelModel,
    LabelParams, LineSearchParams, MapRegistry, NoObserver, Scheme, Task, Trace, fit_completion,
    fit_labels,
};
use gimc_featmap::{
    FeatureMap, FourierFamily, LearnableMap, MapFamily, NystromFamily, RandomFourier,
};
use gimc_linalg::rng::seeded;
use gimc_linalg::{FeatureMatrix, Observed};
use gimc_solvers::{FnObserver, IterationRecord, ObserverAction};
use proptest::prelude::*;

use crate::common;

fn assert_monotone(objectives: &[f64]) {
    for w in objectives.windows(2) {
        assert!(
            w[1] <= w[0] + 1e-10 * w[0].abs().max(1.0),
            "objective increased: {objectives:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn fast_path_objective_never_increases(
        n in 8usize..30, d in 1usize..5, l in 2usize..6, m in 2usize..7,
        log_gamma in -2.0f64..0.5, log_lambda in -2.0f64..1.0,
        seed in 0u64..1000, varpro in any::<bool>(), nystrom in any::<bool>(),
        sparse in any::<bool>(),
    ) {
        let data = if sparse {
            common::multilabel_sparse(n, d, l, seed)
        } else {
            common::multilabel(n, d, l, seed)
        };
        let gamma = 10f64.powf(log_gamma);
        // maps of either family through one boxed type, as the registry hands them out
        let (family, m) = if nystrom { ("lnys", m.min(n)) } else { ("lff", m) };
        let map = MapRegistry::builtin()
            .family(family)
            .unwrap()
            .build(data.features(), m, gamma, &mut seeded(seed + 1))
            .unwrap();
        let params = LabelParams::default().with_lambda(10f64.powf(log_lambda)).with_max_iter(6).with_scheme(if varpro { Scheme::VariableProjection } else { Scheme::Alternating });
        let fit = common::fit_checked(&data, map, &params, None).unwrap();
        let obj = fit.objectives();
        assert_monotone(&obj);
        prop_assert!(!obj.is_empty() && obj.len() <= 7);
        // the reported final objective is that of the returned model
        let prob = LabelProblem::new(&data, params.lambda).unwrap();
        let feats = prob.features(fit.model.maps()).unwrap();
        let f = prob.objective(&feats, fit.model.w()).unwrap();
        prop_assert!((f - obj[obj.len() - 1]).abs() <= 1e-8 * f.abs().max(1.0));
    }

    #[test]
    fn general_path_objective_never_increases(
        nx in 6usize..16, ny in 6usize..16, frac in 0.3f64..0.9, seed in 0u64..1000,
        nystrom_rows in any::<bool>(), learn_cols in any::<bool>(),
    ) {
        let (omega, x, y, _) = common::completion(nx, ny, 3, frac, seed);
        prop_assume!(omega.len() > 3);
        let data = CompletionData::new(&omega, &x, &y).unwrap();
        let (family, m) = if nystrom_rows { ("lnys", 5) } else { ("lff", 3) };
        let rm = MapRegistry::builtin()
            .family(family)
            .unwrap()
            .build(&x, m, 0.3, &mut seeded(seed))
            .unwrap();
        let cm = FourierFamily.build(&y, 3, 0.3, &mut seeded(seed + 1)).unwrap();
        let params = CompletionParams::default().with_rank(2).with_lambda(0.1).with_max_iter(4).with_start_iters(10).with_inner_iters(2).with_learn_cols(learn_cols);
        let inputs = CompletionInputs { data, row_map: rm, col_map: cm };
        let fit = fit_completion(inputs, &params.check().unwrap(), &mut seeded(seed + 2), &mut NoObserver)
            .unwrap();
        assert_monotone(&fit.objectives());
        for h in &fit.history {
            prop_assert!(h.objective <= h.objective_after_imc + 1e-12 * h.objective.abs().max(1.0));
        }
    }
}

#[test]
fn gimc_lowers_the_objective_of_its_imc_start_and_tracks_validation() {
    let all = common::multilabel(160, 4, 5, 11);
    let train = all.select_rows(&(0..120).collect::<Vec<_>>()).unwrap();
    let val = all.select_rows(&(120..160).collect::<Vec<_>>()).unwrap();
    for scheme in [Scheme::Alternating, Scheme::VariableProjection] {
        let map = FourierFamily
            .build(train.features(), 8, 0.2, &mut seeded(3))
            .unwrap();
        let params = LabelParams::default()
            .with_lambda(0.5)
            .with_max_iter(8)
            .with_scheme(scheme);
        let mut trace = Trace::new();
        let fit = fit_labels(
            &train,
            map.clone(),
            &params.check().unwrap(),
            Some(&val),
            &mut trace,
        )
        .unwrap();
        let obj = fit.objectives();
        assert!(
            obj[obj.len() - 1] < 0.95 * obj[0],
            "{scheme:?}: GIMC did not improve on IMC-RFF: {obj:?}"
        );
        // iteration 0 is exactly the IMC-RFF solution (the W-step at the initial map)
        let start = LabelModel::fit_w(vec![map], &train, 0.5).unwrap();
        let prob = LabelProblem::new(&train, 0.5).unwrap();
        let f0 = prob
            .objective(&prob.features(start.maps()).unwrap(), start.w())
            .unwrap();
        assert!((f0 - obj[0]).abs() < 1e-9 * f0);
        // the observer saw every iteration with its metrics
        assert_eq!(trace.records.len(), fit.history.len());
        assert!(trace.records[1].extra("step").is_some());
        assert!(trace.records[1].extra("val_p@1").is_some());
        assert!(trace.records[1].extra("train_p@3").is_some());
        // the best iterate is the recorded maximum, and re-evaluating it gives its score
        let best = fit.best.as_ref().unwrap();
        let max = fit
            .history
            .iter()
            .map(|h| h.validation.as_ref().unwrap().precision_at(1).unwrap())
            .fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(best.score, max);
        let (best_score, best_iteration) = (best.score, best.iteration);
        assert_eq!(fit.chosen_iteration(), best_iteration);
        assert_eq!(fit.stop_reason, FitStop::MaxIterations);
        // the chosen model is the best iterate restored (map parameters and W)
        let last = fit.model.w().to_owned();
        let chosen = fit.into_chosen().unwrap();
        let again = chosen.evaluate(&val, &[1]).unwrap();
        assert!((again.precision_at(1).unwrap() - best_score).abs() < 1e-12);
        if best_iteration + 1 < obj.len() {
            assert_ne!(chosen.w(), last.as_ref());
        }
    }
}

#[test]
fn observer_can_stop_and_line_search_failure_keeps_the_last_iterate() {
    let data = common::multilabel(40, 3, 4, 5);
    let map = FourierFamily
        .build(data.features(), 5, 0.3, &mut seeded(1))
        .unwrap();
    let mut stop = FnObserver(|r: &IterationRecord| {
        if r.iteration >= 2 {
            ObserverAction::Stop
        } else {
            ObserverAction::Continue
        }
    });
    let fit = fit_labels(
        &data,
        map.clone(),
        &LabelParams::default().check().unwrap(),
        None,
        &mut stop,
    )
    .unwrap();
    assert_eq!(fit.history.len(), 3);
    assert_eq!(fit.stop_reason, FitStop::Observer);

    // an absurd first step and no halvings: nothing is accepted, the start is returned
    let params = LabelParams::default().with_line_search(
        LineSearchParams::default()
            .with_initial_step(Some(1e9))
            .with_max_halvings(0),
    );
    let fit = common::fit_checked(&data, map.clone(), &params, None).unwrap();
    assert_eq!(fit.stop_reason, FitStop::LineSearchFailed);
    assert_eq!(fit.history.len(), 1);
    let start = LabelModel::fit_w(vec![map.clone()], &data, 1.0).unwrap();
    assert_eq!(fit.model.w(), start.w());

    // zero iterations: the IMC start itself
    let params = LabelParams::default().with_max_iter(0);
    let fit = common::fit_checked(&data, map, &params, None).unwrap();
    assert_eq!(fit.model.w(), start.w());
    assert_eq!(fit.stop_reason, FitStop::MaxIterations);
}

#[test]
fn multiclass_path_predicts_arg_max_and_scores_accuracy() {
    let data = common::multiclass(150, 3, 3, 8);
    let map = FourierFamily
        .build(data.features(), 10, 0.5, &mut seeded(2))
        .unwrap();
    let params = LabelParams::default().with_max_iter(5);
    let fit = common::fit_checked(&data, map, &params, Some(&data)).unwrap();
    let last = fit.history.last().unwrap();
    let acc = last.validation.as_ref().unwrap().accuracy.unwrap();
    assert!(last.train.as_ref().unwrap().precision.is_empty());
    let pred = fit.model.predict_classes(data.features()).unwrap();
    let manual = pred
        .iter()
        .zip(data.classes().unwrap())
        .filter(|(a, b)| a == b)
        .count() as f64
        / 150.0;
    assert!((manual - acc).abs() < 1e-12);
    assert!(acc > 0.5, "accuracy {acc}");
    assert_eq!(fit.model.task(), Task::MultiClass);
    let scores = fit.model.scores(data.features()).unwrap();
    for (i, &p) in pred.iter().enumerate() {
        for j in 0..3 {
            assert!(scores[(i, p)] >= scores[(i, j)]);
        }
    }
}

#[test]
fn combined_features_fit_at_least_as_well_as_either_map() {
    let data = common::multilabel(80, 3, 4, 9);
    let lambda = 0.5;
    let params = LabelParams::default().with_lambda(lambda).with_max_iter(3);
    let fourier = FourierFamily
        .build(data.features(), 6, 0.3, &mut seeded(1))
        .unwrap();
    let lff = common::fit_checked(&data, fourier, &params, None).unwrap();
    let nystrom = NystromFamily::default()
        .build(data.features(), 8, 0.3, &mut seeded(2))
        .unwrap();
    let lnys = common::fit_checked(&data, nystrom, &params, None).unwrap();
    // maps of two types side by side, boxed
    let maps: Vec<gimc::BoxedMap> = vec![
        Box::new(lff.model.maps()[0].clone()),
        Box::new(lnys.model.maps()[0].clone()),
    ];
    let comb = LabelModel::fit_w(maps, &data, lambda).unwrap();
    assert_eq!(comb.feature_dim(), 12 + 8);
    assert_eq!(comb.maps()[1].output_dim(), 8);
    let prob = LabelProblem::new(&data, lambda).unwrap();
    fn f<M: FeatureMap>(prob: &LabelProblem<'_>, m: &LabelModel<M>) -> f64 {
        prob.objective(&prob.features(m.maps()).unwrap(), m.w())
            .unwrap()
    }
    let (fc, f1, f2) = (f(&prob, &comb), f(&prob, &lff.model), f(&prob, &lnys.model));
    assert!(fc <= f1.min(f2) + 1e-9, "{fc} vs {f1}, {f2}");
    let top = comb.top_k(data.features(), 2).unwrap();
    assert_eq!(top.len(), 80);
}

/// Fourier maps of `m` features (γ 0.3) on the row features `x` (seed 1) and the column
/// features `y` (seed 2).
fn fourier_maps(x: &FeatureMatrix, y: &FeatureMatrix, m: usize) -> (RandomFourier, RandomFourier) {
    (
        FourierFamily.build(x, m, 0.3, &mut seeded(1)).unwrap(),
        FourierFamily.build(y, m, 0.3, &mut seeded(2)).unwrap(),
    )
}

/// [`fit_completion`] with `params` checked, the rng seeded with `seed` and no observer.
fn fit_general<MR: LearnableMap, MC: LearnableMap>(
    data: &CompletionData<'_>,
    (row_map, col_map): (MR, MC),
    params: &CompletionParams,
    validation: Option<&Observed>,
    seed: u64,
) -> gimc::Result<CompletionFit<MR, MC>> {
    fit_completion(
        CompletionInputs {
            data: data.with_validation(validation),
            row_map,
            col_map,
        },
        &params.check().unwrap(),
        &mut seeded(seed),
        &mut NoObserver,
    )
}

/// Every entry of `full` not in Ω, as validation entries.
fn unobserved(omega: &Observed, full: &gimc_linalg::faer::Mat<f64>) -> Observed {
    let seen: std::collections::HashSet<(usize, usize)> =
        omega.iter().map(|(i, j, _)| (i, j)).collect();
    let (mut vr, mut vc, mut vv) = (vec![], vec![], vec![]);
    for i in 0..full.nrows() {
        for j in 0..full.ncols() {
            if !seen.contains(&(i, j)) {
                vr.push(i);
                vc.push(j);
                vv.push(full[(i, j)]);
            }
        }
    }
    Observed::from_triplets(full.nrows(), full.ncols(), &vr, &vc, &vv).unwrap()
}

#[test]
fn general_path_improves_on_imc_and_predicts_consistently() {
    let (omega, x, y, full) = common::completion(40, 30, 3, 0.4, 3);
    let data = CompletionData::new(&omega, &x, &y).unwrap();
    let val = unobserved(&omega, &full);
    let maps = fourier_maps(&x, &y, 10);
    let params = CompletionParams::default()
        .with_rank(4)
        .with_lambda(0.05)
        .with_max_iter(8);
    let fit = fit_general(&data, maps.clone(), &params, Some(&val), 3).unwrap();
    // the best iterate is the recorded minimum of the validation error, and recomputing the
    // error of its model gives the same number
    let best = fit.best.as_ref().unwrap();
    let min = fit
        .history
        .iter()
        .map(|h| h.validation_error.unwrap())
        .fold(f64::INFINITY, f64::min);
    assert_eq!(best.error, min);
    let best_error = best.error;
    let obj = fit.objectives();
    assert_monotone(&obj);
    assert!(
        obj[obj.len() - 1] < 0.9 * fit.start_objective(),
        "GIMC did not improve on IMC-RFF: {obj:?}"
    );
    assert!(fit.history.iter().skip(1).any(|h| h.step_rows.is_some()));
    assert!(fit.history.iter().skip(1).any(|h| h.step_cols.is_some()));
    assert!((fit.model.objective(&data).unwrap() - obj[obj.len() - 1]).abs() < 1e-9);
    let dense = fit.model.predict_dense(&x, &y).unwrap();
    let pairs = [(0, 0), (39, 29), (7, 3)];
    let e = fit.model.predict_entries(&x, &y, &pairs).unwrap();
    for (&(i, j), v) in pairs.iter().zip(e) {
        assert!((dense[(i, j)] - v).abs() < 1e-12);
    }
    assert!(fit.model.predict_entries(&x, &y, &[(40, 0)]).is_err());
    // the chosen model is the best iterate restored: its error is the recorded minimum
    assert_eq!(fit.chosen_iteration(), fit.best.as_ref().unwrap().iteration);
    let chosen = fit.into_chosen().unwrap();
    let pairs: Vec<(usize, usize)> = val.iter().map(|(i, j, _)| (i, j)).collect();
    let pred = chosen.predict_entries(&x, &y, &pairs).unwrap();
    let num: f64 = pred
        .iter()
        .zip(val.values())
        .map(|(a, b)| (a - b) * (a - b))
        .sum();
    assert!(((num / val.values_sq_norm()).sqrt() - best_error).abs() < 1e-10);
    // rank must be below both feature dimensions
    let bad = params.with_rank(20);
    let err = fit_general(&data, maps, &bad, None, 3).unwrap_err();
    assert!(err.is_parameter_error(), "{err}");
}

/// With a validation patience P the general path runs the same iterations as without it up to
/// P iterations past its best validation error, then stops there: the history is a prefix of
/// the full run's, bit for bit, and the chosen iterate is the same whenever the full run never
/// waited P iterations for a new best.
#[test]
fn completion_patience_stops_past_the_best_and_keeps_it() {
    let (omega, x, y, full) = common::completion(40, 30, 3, 0.15, 5);
    let data = CompletionData::new(&omega, &x, &y).unwrap();
    let val = unobserved(&omega, &full);
    let maps = fourier_maps(&x, &y, 20);
    // few entries and a small λ: the validation error bottoms out and the run goes on past it
    let params = CompletionParams::default()
        .with_rank(4)
        .with_lambda(1e-3)
        .with_max_iter(25);
    let run = |p: CompletionParams| fit_general(&data, maps.clone(), &p, Some(&val), 3).unwrap();
    let whole = run(params);
    let errors: Vec<f64> = whole
        .history
        .iter()
        .map(|h| h.validation_error.unwrap())
        .collect();
    // the longest wait for a new best, and where the best is
    let (mut best, mut longest) = (0, 0);
    for (i, &e) in errors.iter().enumerate() {
        if e < errors[best] {
            longest = longest.max(i - best);
            best = i;
        }
    }
    assert_eq!(whole.best.as_ref().unwrap().iteration, best);
    assert_eq!(whole.stop_reason, FitStop::MaxIterations);
    assert!(
        best + 2 < 25,
        "the fixture must leave iterations after the best: best at {best} of 25"
    );
    let patience = (longest + 1).max(2);
    assert!(best + patience < 25, "best {best}, patience {patience}");
    let cut = run(params.with_patience(Some(patience)));
    assert_eq!(cut.stop_reason, FitStop::NoValidationGain);
    assert_eq!(cut.history.len(), best + patience + 1);
    for (a, b) in cut.history.iter().zip(&whole.history) {
        assert_eq!(a.objective.to_bits(), b.objective.to_bits());
        assert_eq!(
            a.validation_error.unwrap().to_bits(),
            b.validation_error.unwrap().to_bits()
        );
    }
    assert_eq!(cut.chosen_iteration(), best);
    let (cut_best, whole_best) = (cut.best.unwrap(), whole.best.clone().unwrap());
    assert_eq!(cut_best.error.to_bits(), whole_best.error.to_bits());
    assert_eq!(cut_best.w, whole_best.w);
    assert_eq!(cut_best.h, whole_best.h);
    // the kept start is iteration 0: its validation error, and its model's objective
    let kept = run(params.with_keep_start(true));
    assert_eq!(kept.objectives(), whole.objectives());
    let start = kept.start.clone().unwrap();
    assert_eq!(start.iteration, 0);
    assert_eq!(start.error.to_bits(), errors[0].to_bits());
    assert!(whole.start.is_none());
    let start_model = start.restore_into(kept.model).unwrap();
    let f0 = start_model.objective(&data).unwrap();
    assert!(
        (f0 - whole.start_objective()).abs() <= 1e-12 * f0.abs(),
        "{f0}"
    );
    // without a validation set the patience never acts
    let blind = fit_general(&data, maps.clone(), &params.with_patience(Some(1)), None, 3).unwrap();
    assert_eq!(blind.history.len(), 26);
}

#[test]
fn completion_inputs_and_parameters_are_checked() {
    let (omega, x, y, _) = common::completion(10, 8, 2, 0.5, 1);
    assert!(CompletionData::new(&omega, &y, &y).is_err());
    assert!(CompletionData::new(&omega, &x, &x).is_err());
    let empty = Observed::from_triplets(10, 8, &[], &[], &[]).unwrap();
    assert!(CompletionData::new(&empty, &x, &y).is_err());
    let data = CompletionData::new(&omega, &x, &y).unwrap();
    let maps = fourier_maps(&x, &y, 4);
    for bad in [
        CompletionParams::default().with_rank(0),
        CompletionParams::default().with_lambda(-1.0),
        CompletionParams::default().with_rank(2).with_tol(f64::NAN),
        CompletionParams::default()
            .with_rank(2)
            .with_patience(Some(0)),
        CompletionParams::default()
            .with_rank(2)
            .with_cg(gimc_solvers::CgParams::default().with_tol(-1.0)),
    ] {
        let e = bad.check().unwrap_err();
        assert!(e.is_parameter_error(), "{e}");
    }
    // the checked IMC parameters of the start and of step (1) carry the CG rule
    let cg = gimc_solvers::CgParams::default()
        .with_tol(1e-9)
        .with_max_iter(7);
    let v = CompletionParams::default()
        .with_rank(2)
        .with_start_iters(5)
        .with_inner_iters(0)
        .with_cg(cg)
        .check()
        .unwrap();
    assert_eq!(**v.valid_cg(), cg);
    assert_eq!(v.valid_imc_start().max_outer, 5);
    assert_eq!(v.valid_imc_inner().max_outer, 1);
    assert_eq!(**v.valid_imc_inner().valid_cg(), cg);
    let wrong_shape = Observed::from_triplets(9, 8, &[0], &[0], &[1.0]).unwrap();
    let params = CompletionParams::default().with_rank(2).with_max_iter(1);
    let e = fit_general(&data, maps, &params, Some(&wrong_shape), 1).unwrap_err();
    assert!(e.is_parameter_error(), "{e}");
}

#[test]
fn label_fit_inputs_and_parameters_are_checked() {
    let data = common::multilabel(30, 3, 4, 2);
    let other = common::multilabel(30, 2, 4, 3);
    let wrong_labels = common::multilabel(30, 3, 5, 4);
    let map = FourierFamily
        .build(data.features(), 4, 0.3, &mut seeded(1))
        .unwrap();
    let p = LabelParams::default();
    let wrong_map = FourierFamily
        .build(other.features(), 4, 0.3, &mut seeded(1))
        .unwrap();
    assert!(common::fit_checked(&data, wrong_map, &p, None).is_err());
    for v in [&other, &wrong_labels] {
        let e = common::fit_checked(&data, map.clone(), &p, Some(v)).unwrap_err();
        assert!(e.is_parameter_error(), "{e}");
    }
    let mc = common::multiclass(30, 3, 4, 5);
    assert!(common::fit_checked(&data, map.clone(), &p, Some(&mc)).is_err());
    for bad in [
        LabelParams::default().with_lambda(f64::NAN),
        LabelParams::default().with_select_k(0),
        LabelParams::default().with_patience(Some(0)),
        LabelParams::default().with_line_search(LineSearchParams::default().with_sigma(0.0)),
    ] {
        let e = bad.check().unwrap_err();
        assert!(e.is_parameter_error(), "{e}");
    }
}

/// The fitting loops need no `Clone`: a `Box<dyn LearnableMap>` (not `Clone`) is fitted by
/// `fit_labels` (both schemes) and `fit_completion` exactly as the typed map is, the line
/// search's trials and the best-validation restore included.
#[test]
fn boxed_dyn_maps_fit_exactly_like_the_typed_map() {
    use gimc_featmap::LearnableMap;
    let all = common::multilabel(120, 4, 5, 13);
    let train = all.select_rows(&(0..90).collect::<Vec<_>>()).unwrap();
    let val = all.select_rows(&(90..120).collect::<Vec<_>>()).unwrap();
    for scheme in [Scheme::Alternating, Scheme::VariableProjection] {
        let params = LabelParams::default()
            .with_lambda(0.5)
            .with_max_iter(5)
            .with_scheme(scheme);
        let build = || NystromFamily::default().build(train.features(), 10, 0.3, &mut seeded(4));
        let typed = common::fit_checked(&train, build().unwrap(), &params, Some(&val)).unwrap();
        let boxed: Box<dyn LearnableMap> = Box::new(build().unwrap());
        let dynamic = common::fit_checked(&train, boxed, &params, Some(&val)).unwrap();
        assert_eq!(typed.objectives(), dynamic.objectives(), "{scheme:?}");
        assert!(
            typed.history.iter().skip(1).any(|h| h.trials > 0),
            "{scheme:?}"
        );
        let (a, b) = (typed.into_chosen().unwrap(), dynamic.into_chosen().unwrap());
        assert_eq!(a.maps()[0].params(), b.maps()[0].params(), "{scheme:?}");
        assert_eq!(a.w(), b.w(), "{scheme:?}");
    }

    let (omega, x, y, _) = common::completion(30, 25, 3, 0.5, 5);
    let data = CompletionData::new(&omega, &x, &y).unwrap();
    let params = CompletionParams::default()
        .with_rank(3)
        .with_lambda(0.05)
        .with_max_iter(4);
    let (rm, cm) = fourier_maps(&x, &y, 6);
    let boxed_r: Box<dyn LearnableMap> = Box::new(rm.clone());
    let boxed_c: Box<dyn LearnableMap> = Box::new(cm.clone());
    let typed = fit_general(&data, (rm, cm), &params, None, 3).unwrap();
    let dynamic = fit_general(&data, (boxed_r, boxed_c), &params, None, 3).unwrap();
    assert_eq!(typed.objectives(), dynamic.objectives());
    assert_eq!(
        typed.model.row_map().params(),
        dynamic.model.row_map().params()
    );
    assert_eq!(
        typed.model.col_map().params(),
        dynamic.model.col_map().params()
    );
}

#[test]
fn a_relative_step_cap_bounds_every_map_update_and_the_objective_still_falls() {
    let data = common::multilabel(40, 3, 4, 5);
    let map = FourierFamily
        .build(data.features(), 5, 0.3, &mut seeded(1))
        .unwrap();
    let rho = 0.01;
    let capped = LabelParams::default()
        .with_max_iter(4)
        .with_line_search(LineSearchParams::default().with_max_relative_step(Some(rho)));
    // one iteration at a time, so that each update can be measured against the map it left
    let mut u = map.params().to_owned();
    let mut current = map.clone();
    for _ in 0..3 {
        let params = capped.clone().with_max_iter(1);
        let fit = common::fit_checked(&data, current.clone(), &params, None).unwrap();
        assert_monotone(&fit.objectives());
        let next = fit.model.maps()[0].clone();
        let moved = (next.params() - u.as_ref()).norm_l2();
        assert!(
            moved <= rho * u.norm_l2() * (1.0 + 1e-9),
            "moved {moved} > {rho} · {}",
            u.norm_l2()
        );
        u = next.params().to_owned();
        current = next;
    }
    // the uncapped first update of the same start is larger than the cap allows
    let free = LabelParams::default().with_max_iter(1);
    let fit = common::fit_checked(&data, map.clone(), &free, None).unwrap();
    let moved = (fit.model.maps()[0].params() - map.params()).norm_l2();
    assert!(
        moved > rho * map.params().norm_l2(),
        "uncapped move {moved}"
    );
    // and the capped multi-iteration fit still lowers the objective below its start
    let fit = common::fit_checked(&data, map, &capped, None).unwrap();
    let obj = fit.objectives();
    assert!(obj.last().unwrap() < &obj[0], "{obj:?}");
}

#[test]
fn a_proximal_term_keeps_the_map_near_its_start() {
    let data = common::multilabel(40, 3, 4, 7);
    let map = FourierFamily
        .build(data.features(), 5, 0.3, &mut seeded(2))
        .unwrap();
    let moved = |proximal: f64| {
        let params = LabelParams::default()
            .with_max_iter(5)
            .with_proximal(proximal);
        let fit = common::fit_checked(&data, map.clone(), &params, None).unwrap();
        // the recorded objective includes the term and still never increases
        assert_monotone(&fit.objectives());
        (fit.model.maps()[0].params() - map.params()).norm_l2()
    };
    let (free, light, heavy) = (moved(0.0), moved(0.1), moved(100.0));
    assert!(free > 0.0);
    assert!(
        heavy < light && light < free,
        "moves {free} / {light} / {heavy}"
    );
    // a zero weight is exactly the plain fit
    let plain = common::fit_checked(&data, map.clone(), &LabelParams::default(), None).unwrap();
    let zero = LabelParams::default().with_proximal(0.0);
    let same = common::fit_checked(&data, map.clone(), &zero, None).unwrap();
    assert_eq!(plain.objectives(), same.objectives());
    let bad = LabelParams::default().with_proximal(-1.0);
    assert!(bad.check().is_err());
}
