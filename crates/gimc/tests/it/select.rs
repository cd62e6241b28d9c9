//! Model selection on a validation split of the training data (DESIGN §4).

use gimc::labels::{SelectionStage, validation_split};
use gimc::{
    Gamma, IterationRecord, LabelParams, MapRegistry, NoObserver, Observer, ObserverAction,
    SelectionObserver, SelectionParams, select_and_fit, select_combined,
};
use gimc_featmap::{CosineFamily, FourierFamily, LearnableMap, MapFamily, NystromFamily};
use gimc_linalg::rng::{child, seeded};

use crate::common;

/// [`select_and_fit`] with `params` checked and no observer.
fn select<F: MapFamily + ?Sized>(
    data: &gimc::LabelData,
    family: &F,
    params: &SelectionParams,
) -> gimc::Selection<F::Map> {
    select_and_fit(data, family, &params.check().unwrap(), &mut NoObserver).unwrap()
}

/// Selection of m = 6 over γ ∈ {1e-4, 0.3} and `lambdas` on the multi-label set of seed 41
/// (150 rows), seed 5.
fn two_gamma_selection(lambdas: Vec<f64>, max_iter: usize) -> (gimc::LabelData, SelectionParams) {
    let data = common::multilabel(150, 3, 4, 41);
    let params = SelectionParams::default()
        .with_gammas(vec![Gamma::Value(1e-4), Gamma::Value(0.3)])
        .with_lambdas(lambdas)
        .with_ms(vec![6])
        .with_max_iter(max_iter)
        .with_seed(5);
    (data, params)
}

#[test]
fn selection_picks_the_best_validation_setting_and_refits_deterministically() {
    let (data, params) = two_gamma_selection(vec![0.1, 1.0], 4);
    let sel = select(&data, &FourierFamily, &params);
    assert_eq!(sel.candidates.len(), 4);
    let best = sel
        .candidates
        .iter()
        .map(|c| c.best_score)
        .fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(sel.chosen.validation_score, best);
    for c in &sel.candidates {
        assert_eq!(c.scores.len(), 5);
        assert_eq!(c.scores[c.best_iteration], c.best_score);
        assert!(
            c.scores[..c.best_iteration]
                .iter()
                .all(|&s| s < c.best_score)
        );
    }
    // the winner is the first candidate reaching the best score, with its best iteration
    let winner = sel
        .candidates
        .iter()
        .find(|c| c.best_score == best)
        .unwrap();
    assert_eq!(
        (
            sel.chosen.m,
            sel.chosen.gamma,
            sel.chosen.lambda,
            sel.chosen.iterations
        ),
        (winner.m, winner.gamma, winner.lambda, winner.best_iteration)
    );
    assert!(sel.chosen.iterations <= 4);
    assert_eq!(sel.history.len(), sel.chosen.iterations + 1);
    let hp = sel.model.hyper_parameters();
    assert_eq!(hp["gamma"], sel.chosen.gamma);
    assert_eq!(hp["iterations"], sel.chosen.iterations as f64);
    assert_eq!(sel.model.method(), "gimc-lff");
    assert!(sel.chosen.describe().contains("m=6"));

    // the refit equals a direct fit with the chosen values on the same random stream
    let map = FourierFamily
        .build(
            data.features(),
            sel.chosen.m,
            sel.chosen.gamma,
            &mut child(&seeded(5), 1),
        )
        .unwrap();
    let direct_params = LabelParams::default()
        .with_lambda(sel.chosen.lambda)
        .with_max_iter(sel.chosen.iterations)
        .with_eval_train(false);
    let direct = common::fit_checked(&data, map, &direct_params, None).unwrap();
    assert_eq!(direct.model.w(), sel.model.w());
    // and the whole procedure is deterministic
    let again = select(&data, &FourierFamily, &params);
    assert_eq!(again.chosen, sel.chosen);
    assert_eq!(again.model, sel.model);
    // the same family through the registry (boxed maps) makes exactly the same selection
    let registry = MapRegistry::builtin();
    let boxed = select(&data, registry.family("lff").unwrap(), &params);
    assert_eq!(boxed.chosen, sel.chosen);
    assert_eq!(boxed.model.w(), sel.model.w());
    assert_eq!(boxed.model.maps()[0].params(), sel.model.maps()[0].params());
}

#[test]
fn multiclass_selection_uses_accuracy_and_a_stratified_split() {
    let data = common::multiclass(120, 3, 3, 2);
    let (tr, va) = validation_split(&data, 0.25, &mut seeded(1)).unwrap();
    assert_eq!(tr.len() + va.len(), 120);
    let classes = data.classes().unwrap();
    for c in 0..3 {
        let total = classes.iter().filter(|&&k| k == c).count() as f64;
        let in_val = va.iter().filter(|&&i| classes[i] == c).count() as f64;
        assert!((in_val - 0.25 * total).abs() <= 0.5 + 1e-9);
    }
    let params = SelectionParams::default()
        .with_gammas(vec![Gamma::Value(0.5)])
        .with_ms(vec![10])
        .with_max_iter(3);
    let sel = select(&data, &NystromFamily::default(), &params);
    assert!(sel.chosen.validation_score > 0.4);
    assert_eq!(sel.model.method(), "gimc-lnys");
    assert!(sel.model.evaluate(&data, &[1]).unwrap().accuracy.is_some());
}

/// With a validation patience p every candidate's curve is the unpatient curve cut at the
/// first iteration t with t − argmax(scores[..=t]) = p, so the candidates' bests, and the
/// chosen setting, are those of the full run whenever no best lies beyond a stall of p.
#[test]
fn a_validation_patience_cuts_each_curve_at_its_first_stall() {
    let (data, params) = two_gamma_selection(vec![0.01, 1.0], 12);
    let full = select(&data, &FourierFamily, &params);
    let patience = 2;
    let cut = select(
        &data,
        &FourierFamily,
        &params.clone().with_patience(Some(patience)),
    );
    let mut stalled = 0;
    for (f, c) in full.candidates.iter().zip(&cut.candidates) {
        let mut best = 0;
        let mut end = f.scores.len() - 1;
        for (t, &s) in f.scores.iter().enumerate() {
            if s > f.scores[best] {
                best = t;
            }
            if t - best >= patience {
                end = t;
                stalled += 1;
                break;
            }
        }
        assert_eq!(c.scores, f.scores[..=end], "γ {} λ {}", f.gamma, f.lambda);
    }
    assert!(stalled > 0, "no curve stalled: the test checks nothing");
}

#[test]
fn bad_grids_are_parameter_errors() {
    for p in [
        SelectionParams::default().with_gammas(vec![]),
        SelectionParams::default().with_gammas(vec![Gamma::Value(-1.0)]),
        SelectionParams::default().with_ms(vec![0]),
        SelectionParams::default().with_validation_fraction(1.0),
        SelectionParams::default().with_select_k(0),
        SelectionParams::default().with_patience(Some(0)),
    ] {
        let e = p.check().unwrap_err();
        assert!(e.is_parameter_error(), "{e}");
    }
}

#[test]
fn combined_selection_concatenates_the_refitted_maps_and_picks_lambda_on_validation() {
    let data = common::multilabel(120, 3, 4, 17);
    let base = SelectionParams::default()
        .with_ms(vec![5])
        .with_gammas(vec![Gamma::Value(0.3)])
        .with_max_iter(2)
        .with_seed(3);
    // two families of different map types combine through the registry's boxed maps
    let registry = MapRegistry::builtin();
    let select_family = |name: &str, params: &SelectionParams| {
        select(&data, registry.family(name).unwrap(), params)
    };
    let lff = select_family("lff", &base);
    let lnys = select_family("lnys", &base);
    assert_eq!(lff.validation_rows, lnys.validation_rows);
    assert_eq!(lff.validation_model.n_labels(), 4);
    let (lff_u, lnys_u) = (
        lff.model.maps()[0].params().to_owned(),
        lnys.model.maps()[0].params().to_owned(),
    );
    let comb = select_combined(&data, vec![lff, lnys], &[0.1, 1.0, 10.0], 1).unwrap();
    assert_eq!(comb.scores.len(), 3);
    let best = comb
        .scores
        .iter()
        .map(|s| s.1)
        .fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(comb.validation_score, best);
    assert_eq!(comb.model.maps().len(), 2);
    assert_eq!(comb.model.maps()[0].params(), lff_u.as_ref());
    assert_eq!(comb.model.maps()[1].params(), lnys_u.as_ref());
    assert_eq!(comb.model.lambda(), comb.lambda);
    assert_eq!(comb.model.method(), "gimc-combined");
    // a selection made on another split cannot be combined
    let other = select_family("lff", &base.clone().with_seed(4));
    let lff = select_family("lff", &base);
    assert!(select_combined(&data, vec![lff, other], &[1.0], 1).is_err());
    assert!(select_combined::<gimc::BoxedMap>(&data, vec![], &[1.0], 1).is_err());
    assert!(select_combined(&data, vec![select_family("lff", &base)], &[], 1).is_err());
}

/// Records what [`select_and_fit_observed`] reports.
#[derive(Default)]
struct Recorder {
    starts: Vec<(SelectionStage, usize)>,
    /// Iteration numbers reported, per fit.
    iterations: Vec<Vec<usize>>,
}

impl SelectionObserver for Recorder {
    fn fit_started(&mut self, stage: &SelectionStage, max_iter: usize) {
        self.starts.push((stage.clone(), max_iter));
        self.iterations.push(Vec::new());
    }
}

impl Observer for Recorder {
    fn observe(&mut self, record: &IterationRecord) -> ObserverAction {
        if let Some(v) = self.iterations.last_mut() {
            v.push(record.iteration);
        }
        ObserverAction::Continue
    }
}

#[test]
fn random_phase_fourier_selection_learns_and_reports_progress() {
    let data = common::multilabel(120, 3, 4, 43);
    let params = SelectionParams::default()
        .with_gammas(vec![Gamma::Value(0.05), Gamma::Value(0.3)])
        .with_lambdas(vec![0.1])
        .with_ms(vec![5])
        .with_max_iter(3)
        .with_seed(2);
    let mut rec = Recorder::default();
    let sel = select_and_fit(&data, &CosineFamily, &params.check().unwrap(), &mut rec).unwrap();
    // the same selection as without an observer (all but the timings)
    let plain = select(&data, &CosineFamily, &params);
    assert_eq!((&sel.chosen, &sel.model), (&plain.chosen, &plain.model));
    let scores = |s: &gimc::Selection<gimc_featmap::RandomCosine>| -> Vec<Vec<f64>> {
        s.candidates.iter().map(|c| c.scores.clone()).collect()
    };
    assert_eq!(scores(&sel), scores(&plain));
    assert_eq!(sel.model.method(), "gimc-lff-phase");
    assert!(sel.chosen.describe().starts_with("lff-phase m=5"));
    let map = &sel.model.maps()[0];
    // D = 2m directions, each with its own phase in [0, 2π)
    assert_eq!(map.directions().shape(), (3, 10));
    assert!(
        map.phases()
            .iter()
            .all(|b| (0.0..std::f64::consts::TAU).contains(b))
    );
    // learning moves the directions of the refit away from the initial draw when it iterates
    if sel.chosen.iterations > 0 {
        let init = CosineFamily
            .build(
                data.features(),
                sel.chosen.m,
                sel.chosen.gamma,
                &mut child(&seeded(2), 1),
            )
            .unwrap();
        assert_eq!(init.phases(), map.phases());
        assert_ne!(init.directions(), map.directions());
    }
    // the observer saw two candidates then the refit, each from iteration 0
    assert_eq!(rec.starts.len(), 3);
    for (i, (stage, max_iter)) in rec.starts[..2].iter().enumerate() {
        let SelectionStage::Candidate {
            index,
            total,
            m,
            gamma,
            ..
        } = stage
        else {
            panic!("fit {i} is not a candidate");
        };
        assert_eq!((*index, *total, *max_iter), (i, 2, 3));
        assert_eq!((*m, *gamma), (sel.candidates[i].m, sel.candidates[i].gamma));
        assert_eq!(rec.iterations[i].len(), sel.candidates[i].scores.len());
    }
    assert_eq!(
        rec.starts[2],
        (
            SelectionStage::Refit {
                chosen: sel.chosen.clone()
            },
            sel.chosen.iterations
        )
    );
    let want: Vec<usize> = (0..=sel.chosen.iterations).collect();
    assert_eq!(rec.iterations[2], want);
    assert_eq!(rec.iterations[2].len(), sel.history.len());
}

#[test]
fn default_gamma_is_the_scale_rule_resolved_on_the_data_passed() {
    let data = common::multilabel(120, 3, 4, 43);
    let rule = data.features().gamma_scale();
    let params = SelectionParams::default()
        .with_ms(vec![6])
        .with_max_iter(1)
        .with_seed(2);
    assert_eq!(params.grid.gammas, vec![Gamma::SCALE]);
    let sel = select(&data, &FourierFamily, &params);
    assert_eq!(sel.chosen.gamma, rule);
    // a multiple of the rule, and a fixed value, are taken as given
    let params = params.with_gammas(vec![Gamma::Scale(0.25), Gamma::Value(0.7)]);
    let sel = select(&data, &FourierFamily, &params);
    let tried: Vec<f64> = sel.candidates.iter().map(|c| c.gamma).collect();
    assert_eq!(tried, vec![0.25 * rule, 0.7]);
    // a non-positive factor is refused before any work
    let bad = params.with_gammas(vec![Gamma::Scale(0.0)]);
    let err = bad.check().unwrap_err();
    assert!(err.to_string().contains("gamma"), "{err}");
}

#[test]
fn an_observer_can_interrupt_the_selection() {
    struct StopAfter(usize, usize);
    impl SelectionObserver for StopAfter {}
    impl Observer for StopAfter {
        fn observe(&mut self, _record: &IterationRecord) -> ObserverAction {
            self.0 += 1;
            if self.0 >= self.1 {
                ObserverAction::Stop
            } else {
                ObserverAction::Continue
            }
        }
    }
    let data = common::multilabel(120, 3, 4, 44);
    let params = SelectionParams::default()
        .with_gammas(vec![Gamma::Value(0.3)])
        .with_ms(vec![6])
        .with_max_iter(6);
    let mut stop = StopAfter(0, 3);
    let err =
        select_and_fit(&data, &FourierFamily, &params.check().unwrap(), &mut stop).unwrap_err();
    assert!(matches!(err, gimc::GimcError::Interrupted), "{err}");
    // the fit stopped at the iteration that asked, not at the end of the grid
    assert_eq!(stop.0, 3);
}
