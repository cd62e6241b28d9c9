//! The default model selection `auto`: what it searches, what it drops, and that its model
//! with its input transform predicts raw rows.

use gimc::labels::AutoStage;
use gimc::persist::{label_model_to_bytes_with_preprocess, label_model_with_preprocess_from_bytes};
use gimc::{
    AutoParams, Gamma, LabelData, LinearPart, MapRegistry, NoObserver, RowTransform, auto_fit,
    auto_fit_sharded,
};
use gimc_linalg::FeatureMatrix;
use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::sprs::TriMat;
use gimc_linalg::sums::{RowSums, ThreadSums};

use crate::common;

/// A small, quick search.
fn quick() -> AutoParams {
    AutoParams::default()
        .with_m(8)
        .with_max_iter(3)
        .with_lambdas(vec![0.1, 1.0])
}

/// [`auto_fit`] with the built-in families, `params` checked and no observer.
fn auto(data: &LabelData, params: &AutoParams) -> gimc::Result<gimc::AutoSelection> {
    auto_fit(
        data,
        &MapRegistry::builtin(),
        &params.check().unwrap(),
        &mut NoObserver,
    )
}

/// Counts data: nonnegative sparse features whose first label follows column 0.
fn counts(n: usize) -> LabelData {
    let mut x = TriMat::new((n, 6));
    let mut y = TriMat::new((n, 3));
    for i in 0..n {
        for j in 0..6 {
            if (i * 7 + j * 3) % 4 != 0 {
                x.add_triplet(i, j, ((i + 2 * j) % 5 + 1) as f64);
            }
        }
        y.add_triplet(i, (i * 7) % 4 / 2, 1.0);
        y.add_triplet(i, 2, 1.0);
    }
    LabelData::multi_label(FeatureMatrix::sparse(x.to_csr()).unwrap(), y.to_csr()).unwrap()
}

#[test]
fn the_search_covers_transforms_blocks_and_unions_and_the_choice_is_its_best() {
    let data = common::multilabel(160, 4, 3, 3);
    let sel = auto(&data, &quick()).unwrap();
    // dense data: raw and l2 rows (tf-idf needs sparse counts)
    let transforms: Vec<RowTransform> = sel.trials.iter().map(|t| t.transform).collect();
    assert!(transforms.contains(&RowTransform::Raw) && transforms.contains(&RowTransform::L2));
    assert!(!transforms.contains(&RowTransform::TfIdfL2));
    let names =
        |t: &gimc::labels::AutoTrial| t.blocks.iter().map(|b| b.name.clone()).collect::<Vec<_>>();
    // per transform: the linear part alone, then each family's γ walked from the middle of the
    // grid (1 × scale, then down and up until the score falls), then the unions of the 3 kinds
    for transform in [RowTransform::Raw, RowTransform::L2] {
        let fixed: Vec<_> = sel
            .trials
            .iter()
            .filter(|t| t.stage == AutoStage::Fixed && t.transform == transform)
            .collect();
        assert_eq!(names(fixed[0]), ["linear"]);
        for family in ["lff", "lnys"] {
            let factors: Vec<f64> = fixed
                .iter()
                .filter(|t| names(t) == [family])
                .map(|t| t.blocks[0].gamma_factor.unwrap())
                .collect();
            assert_eq!(factors[0], 1.0, "{transform:?} {family}");
            assert!((2..=5).contains(&factors.len()), "{factors:?}");
        }
    }
    let combined = sel
        .trials
        .iter()
        .filter(|t| t.stage == AutoStage::Combined)
        .count();
    assert_eq!(combined, 2 * 4);
    assert!(sel.trials.iter().any(|t| names(t) == ["linear"]));
    assert!(
        sel.trials
            .iter()
            .any(|t| names(t) == ["linear", "lff", "lnys"])
    );
    let best = sel
        .trials
        .iter()
        .map(|t| t.score)
        .fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(sel.chosen.score, best);
    // the model holds the chosen blocks and the intercept
    assert_eq!(sel.model.maps().len(), sel.chosen.blocks.len() + 1);
}

#[test]
fn the_fit_is_deterministic_and_its_file_predicts_raw_rows() {
    let data = common::multilabel(150, 4, 3, 9);
    let p = quick().with_seed(4).check().unwrap();
    let a = auto_fit(&data, &MapRegistry::builtin(), &p, &mut NoObserver).unwrap();
    let b = auto_fit(&data, &MapRegistry::builtin(), &p, &mut NoObserver).unwrap();
    let bytes = label_model_to_bytes_with_preprocess(&a.model, &a.preprocess).unwrap();
    assert_eq!(
        bytes,
        label_model_to_bytes_with_preprocess(&b.model, &b.preprocess).unwrap()
    );
    let (model, pre) =
        label_model_with_preprocess_from_bytes(&bytes, &MapRegistry::builtin()).unwrap();
    let direct = a
        .model
        .scores(&a.preprocess.apply(data.features()).unwrap())
        .unwrap();
    let loaded = model.scores(&pre.apply(data.features()).unwrap()).unwrap();
    assert!((&direct - &loaded).norm_max() < 1e-12);
    assert_eq!(model.method(), "gimc-auto");
}

#[test]
fn constant_and_excluded_columns_are_dropped_and_recorded() {
    let base = common::multilabel(120, 3, 3, 5);
    let x = base.features().to_dense();
    // columns: 0..3 the data, 3 constant, 4 an identifier (one value per row)
    let wide = Mat::from_fn(120, 5, |i, j| match j {
        3 => 2.5,
        4 => i as f64,
        _ => x[(i, j)],
    });
    let data = base
        .with_features(FeatureMatrix::dense(wide).unwrap())
        .unwrap();
    let p = quick()
        .with_max_iter(0)
        .with_exclude_columns(vec![4])
        .check()
        .unwrap();
    let sel = auto_fit(&data, &MapRegistry::builtin(), &p, &mut NoObserver).unwrap();
    assert_eq!(sel.constant_columns, vec![3]);
    assert_eq!(sel.excluded_columns, vec![4]);
    assert_eq!(sel.preprocess.columns.as_deref(), Some(&[0, 1, 2][..]));
    assert_eq!(sel.preprocess.input_dim, Some(5));
    assert_eq!(sel.model.input_dim(), 3);
    // every column constant or excluded: an error, not a model
    let p = quick()
        .with_exclude_columns(vec![0, 1, 2, 4])
        .check()
        .unwrap();
    assert!(auto_fit(&data, &MapRegistry::builtin(), &p, &mut NoObserver).is_err());
}

#[test]
fn sparse_counts_try_tfidf_and_a_narrowed_search_stays_narrow() {
    let data = counts(90);
    let p = quick()
        .with_gammas(vec![Gamma::Value(0.5)])
        .with_families(vec!["lff".into()])
        .with_linear(LinearPart::Off)
        .with_max_iter(0)
        .check()
        .unwrap();
    let sel = auto_fit(&data, &MapRegistry::builtin(), &p, &mut NoObserver).unwrap();
    assert!(
        sel.trials
            .iter()
            .any(|t| t.transform == RowTransform::TfIdfL2)
    );
    for t in &sel.trials {
        assert_eq!(t.blocks.len(), 1);
        assert_eq!(t.blocks[0].name, "lff");
        assert_eq!(t.blocks[0].gamma, Some(0.5));
        assert_eq!(t.blocks[0].iterations, 0);
    }
    if sel.chosen.transform == RowTransform::TfIdfL2 {
        assert!(sel.preprocess.tfidf.is_some());
    }
}

#[test]
fn multi_class_data_is_searched_by_accuracy_with_stratified_folds() {
    let data = common::multiclass(150, 3, 3, 2);
    let sel = auto(&data, &quick()).unwrap();
    assert!(sel.chosen.score > 1.0 / 3.0 && sel.chosen.score <= 1.0);
    let pred = sel
        .model
        .predict_classes(&sel.preprocess.apply(data.features()).unwrap())
        .unwrap();
    let classes = data.classes().unwrap();
    let right = pred.iter().zip(classes).filter(|(a, b)| a == b).count();
    assert!(right as f64 / 150.0 > 0.5);
}

#[test]
fn bad_params_are_refused() {
    assert!(AutoParams::default().with_lambdas(vec![]).check().is_err());
    assert!(
        AutoParams::default()
            .with_lambdas(vec![0.0])
            .check()
            .is_err()
    );
    assert!(AutoParams::default().with_m(0).check().is_err());
    assert!(AutoParams::default().with_cv_folds(0).check().is_err());
    assert!(
        AutoParams::default()
            .with_families(vec![])
            .with_linear(LinearPart::Off)
            .check()
            .is_err()
    );
    let data = common::multilabel(40, 3, 2, 1);
    let p = AutoParams::default()
        .with_families(vec!["no-such-map".into()])
        .check()
        .unwrap();
    assert!(auto_fit(&data, &MapRegistry::builtin(), &p, &mut NoObserver).is_err());
}

/// Counts the records and fits it sees, and asks to stop after `stop_after` records.
struct Stopper {
    records: usize,
    fits: usize,
    stop_after: usize,
}

impl gimc::Observer for Stopper {
    fn observe(&mut self, _: &gimc::IterationRecord) -> gimc::ObserverAction {
        self.records += 1;
        gimc::ObserverAction::Continue
    }
}

impl gimc::SelectionObserver for Stopper {
    fn fit_started(&mut self, _: &gimc::labels::SelectionStage, _: usize) {
        self.fits += 1;
    }
    fn interrupted(&mut self) -> bool {
        self.records >= self.stop_after
    }
}

#[test]
fn the_map_learning_reports_every_run_and_stops_when_asked() {
    // 3 folds: the learning's runs go side by side, their records relayed to the observer
    let data = common::multilabel(150, 4, 3, 9);
    let p = quick().with_seed(4).check().unwrap();
    let mut all = Stopper {
        records: 0,
        fits: 0,
        stop_after: usize::MAX,
    };
    let whole = auto_fit(&data, &MapRegistry::builtin(), &p, &mut all).unwrap();
    assert!(whole.chosen.score.is_finite());
    // every learning run on every fold starts and records its iterations 0..
    assert!(all.fits >= 2 * 3, "{} fits", all.fits);
    assert!(all.records >= all.fits, "{} records", all.records);
    // a stop during the learning ends the search
    let mut early = Stopper {
        records: 0,
        fits: 0,
        stop_after: 2,
    };
    let stopped = auto_fit(&data, &MapRegistry::builtin(), &p, &mut early);
    assert!(
        matches!(stopped, Err(gimc::GimcError::Interrupted)),
        "{stopped:?}"
    );
    assert!(early.records < all.records);
}

#[test]
fn a_map_learns_no_further_once_its_validation_curve_stops_improving() {
    // every row has label 0 and it ranks first from the start; with three labels P@3 is fixed
    // too, so the mean validation curve of every candidate is best at iteration 0
    let n = 120;
    let x = common::multilabel(n, 4, 1, 6).features().clone();
    let mut y = TriMat::new((n, 3));
    for i in 0..n {
        y.add_triplet(i, 0, 1.0);
        if (i * 7) % 3 == 0 {
            y.add_triplet(i, 1 + i % 2, 1.0);
        }
    }
    let data = LabelData::multi_label(x, y.to_csr()).unwrap();
    let run = |patience: usize| {
        let p = quick()
            .with_max_iter(10)
            .with_patience(patience)
            .check()
            .unwrap();
        let mut count = Stopper {
            records: 0,
            fits: 0,
            stop_after: usize::MAX,
        };
        let sel = auto_fit(&data, &MapRegistry::builtin(), &p, &mut count).unwrap();
        (count.records, sel.chosen)
    };
    let (short, chosen_short) = run(1);
    let (long, chosen_long) = run(50);
    // with patience 1 the first round (2 iterations) is the last; with 50 the best candidates
    // go on to 5 and 10 iterations, for the same choice
    assert!(short < long, "{short} records against {long}");
    assert_eq!(chosen_short, chosen_long);
}

/// [`auto_fit_sharded`] on `p` threads standing in for processes, each holding its contiguous
/// share of `data`'s rows: every member's selection.
fn sharded(data: &LabelData, params: &AutoParams, p: usize) -> Vec<gimc::AutoSelection> {
    let params = params.check().unwrap();
    let registry = MapRegistry::builtin();
    let n = data.nrows();
    ThreadSums::on_threads(p, |member| {
        let rows: Vec<usize> = (n * member.rank() / p..n * (member.rank() + 1) / p).collect();
        let shard = data.select_rows(&rows).unwrap();
        auto_fit_sharded(&shard, &registry, &params, &mut NoObserver, member).unwrap()
    })
}

/// ‖a − b‖ / ‖b‖.
fn rel_diff(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
    (a - b).norm_l2() / b.norm_l2()
}

#[test]
fn shards_no_larger_than_the_sample_choose_and_fit_what_one_process_does() {
    for data in [
        common::multilabel(150, 4, 3, 3),
        counts(120),
        common::multiclass(150, 3, 3, 2),
    ] {
        let whole = auto(&data, &quick()).unwrap();
        let members = sharded(&data, &quick(), 2);
        // process 0 reports the trials, the others the choice alone
        assert_eq!(members[0].trials, whole.trials);
        assert!(members[1].trials.is_empty());
        for m in &members {
            assert_eq!(m.chosen, whole.chosen);
            assert_eq!(m.preprocess, whole.preprocess);
            // the refit's sums run over two shards: the same model up to their order
            let rel = rel_diff(m.model.w(), whole.model.w());
            assert!(
                rel < 1e-8,
                "{}: W differs by {rel:e}",
                whole.chosen.describe()
            );
        }
        // every process holds the same bytes
        assert_eq!(members[0].model.w(), members[1].model.w());
    }
}

#[test]
fn the_sample_depends_on_the_rows_not_on_how_they_are_shared() {
    let data = common::multilabel(300, 4, 3, 5);
    let params = quick().with_sample_rows(120);
    let two = sharded(&data, &params, 2);
    let three = sharded(&data, &params, 3);
    assert_eq!(two[0].trials, three[0].trials);
    assert_eq!(two[0].chosen, three[0].chosen);
    let rel = rel_diff(three[2].model.w(), two[0].model.w());
    assert!(rel < 1e-8, "W differs by {rel:e}");
    // the search saw a sample: its trials differ from those on every row
    let whole = auto(&data, &quick()).unwrap();
    assert_ne!(two[0].trials, whole.trials);
    // the refit saw every row: its model predicts the training rows as well as the whole's
    let rows = two[0].preprocess.apply(data.features()).unwrap();
    let p1 = |sel: &gimc::AutoSelection| {
        let top = sel
            .model
            .top_k(&sel.preprocess.apply(data.features()).unwrap(), 1)
            .unwrap();
        let hits = top
            .iter()
            .enumerate()
            .filter(|(i, t)| data.labels().get(*i, t[0]).is_some())
            .count();
        hits as f64 / data.nrows() as f64
    };
    assert_eq!(two[0].model.top_k(&rows, 1).unwrap().len(), 300);
    assert!(p1(&two[0]) > 0.5 && p1(&whole) > 0.5);
}

#[test]
fn shards_that_disagree_on_their_width_are_refused() {
    let params = quick().check().unwrap();
    let registry = MapRegistry::builtin();
    let errors = ThreadSums::on_threads(2, |member| {
        let shard = common::multilabel(40, 3 + member.rank(), 3, 1);
        auto_fit_sharded(&shard, &registry, &params, &mut NoObserver, member)
            .unwrap_err()
            .to_string()
    });
    for e in errors {
        assert!(e.contains("shards"), "{e}");
    }
}

#[test]
fn a_shard_too_large_for_its_refit_stops_every_process_with_an_error() {
    // process 0 holds 40 rows and process 1 the other 20,000; the sample of 40 rows fits the
    // budget, and so does process 0's refit, but not process 1's
    let data = common::multilabel(20_040, 4, 3, 7);
    let params = quick()
        .with_sample_rows(40)
        .with_max_iter(0)
        .with_memory(gimc_linalg::memory::MemoryBudget::Bytes(26 << 20))
        .check()
        .unwrap();
    let registry = MapRegistry::builtin();
    let errors = ThreadSums::on_threads(2, |member| {
        let rows: Vec<usize> = if member.rank() == 0 {
            (0..40).collect()
        } else {
            (40..20_040).collect()
        };
        let shard = data.select_rows(&rows).unwrap();
        auto_fit_sharded(&shard, &registry, &params, &mut NoObserver, member)
            .unwrap_err()
            .to_string()
    });
    assert!(errors[0].contains("another process"), "{}", errors[0]);
    assert!(errors[1].contains("rows per process"), "{}", errors[1]);
}

#[test]
fn a_sample_too_large_for_memory_is_refused_before_it_is_gathered() {
    let data = common::multilabel(2_000, 50, 3, 7);
    // 2,000 × 50 features, twice: 1.6 MB against a 1 MiB budget
    let params = quick()
        .with_memory(gimc_linalg::memory::MemoryBudget::Bytes(1 << 20))
        .check()
        .unwrap();
    let registry = MapRegistry::builtin();
    let errors = ThreadSums::on_threads(2, |member| {
        let rows: Vec<usize> = (member.rank() * 1_000..(member.rank() + 1) * 1_000).collect();
        let shard = data.select_rows(&rows).unwrap();
        auto_fit_sharded(&shard, &registry, &params, &mut NoObserver, member)
            .unwrap_err()
            .to_string()
    });
    for e in errors {
        assert!(e.contains("sample_rows"), "{e}");
    }
}
