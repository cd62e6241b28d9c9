use super::blocks::{Block, BlockRows, Blocks, solve_blocks};
use super::search::fold_rows;
use crate::labels::data::LabelData;
use crate::labels::model::{PhiSource, evaluate_phi};
use gimc_linalg::FeatureMatrix;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::gaussian_mat;
use gimc_linalg::rng::seeded;
use gimc_linalg::solve::cholesky_solve;
use gimc_linalg::sprs::TriMat;

fn data(n: usize, d: usize, seed: u64) -> LabelData {
    let x = gaussian_mat(&mut seeded(seed), n, d, 1.0);
    let mut t = TriMat::new((n, 3));
    for i in 0..n {
        t.add_triplet(i, usize::from(x[(i, 0)] > 0.0), 1.0);
        if x[(i, 1)] > 0.5 {
            t.add_triplet(i, 2, 1.0);
        }
    }
    LabelData::multi_label(FeatureMatrix::dense(x).unwrap(), t.to_csr()).unwrap()
}

/// The linear part's block: the rows themselves.
fn linear_block(train: &LabelData, val: &LabelData) -> Block {
    Block::new(
        BlockRows::Rows(train.features().clone()),
        val.features().to_dense(),
        train.labels(),
        None,
    )
    .unwrap()
}

#[test]
fn dual_and_primal_scores_agree() {
    let train = data(40, 6, 1);
    let val = data(25, 6, 2);
    let labels = train.labels();
    let phi = |seed| gaussian_mat(&mut seeded(seed), 40, 30, 0.5);
    let phi_val = |seed| gaussian_mat(&mut seeded(seed), 25, 30, 0.5);
    let mut blocks = Blocks::new();
    let lin = blocks.push(linear_block(&train, &val));
    let map = blocks.push(Block::new(BlockRows::Phi(phi(3)), phi_val(4), labels, None).unwrap());
    let set = [lin, map];
    // 36 columns > 40 rows is false: force each form on the same union
    let lambdas = [0.01, 0.3, 2.0];
    let dual = blocks
        .dual_scores(&set, None, &lambdas, &train, &val, &[1])
        .unwrap();
    let (gram, cross, penalty) = blocks.system(&set).unwrap();
    let phi_v = blocks.val_features(&set);
    for (&lambda, &d) in lambdas.iter().zip(&dual) {
        let w = solve_blocks(&gram, &cross, &penalty, lambda).unwrap();
        let p = evaluate_phi(PhiSource::Whole(phi_v.as_ref()), w.as_ref(), &val, &[1])
            .unwrap()
            .score(val.task(), 1)
            .unwrap();
        assert_eq!(p, d, "λ = {lambda}");
    }
    // the scores themselves: K_val (M + λI)⁻¹A against Φ_val W
    let w = solve_blocks(&gram, &cross, &penalty, 0.3).unwrap();
    let primal = &phi_v * &w;
    let mut m = Mat::<f64>::zeros(40, 40);
    let mut kv = Mat::<f64>::zeros(25, 40);
    for &i in &set {
        let s = blocks.blocks[i].sq;
        let (k, v) = blocks.blocks[i].kernels().unwrap();
        m += k * (1.0 / s);
        kv += v * (1.0 / s);
    }
    for j in 0..40 {
        m[(j, j)] += 0.3;
    }
    let a = gimc_linalg::sparse::csr_to_dense(labels);
    let dual = &kv * cholesky_solve(m.as_ref(), a.as_ref()).unwrap();
    assert!((&primal - &dual).norm_max() < 1e-8);
}

/// The intercept's all-ones kernels, added to the dual sums as a constant, give the scores of
/// the union that holds the intercept column in the primal form, and the same bits as summing
/// its kernels.
#[test]
fn the_dual_intercept_is_the_primal_intercept_column() {
    let train = data(40, 6, 1);
    let val = data(25, 6, 2);
    let labels = train.labels();
    let mut blocks = Blocks::new();
    let map = blocks.push(
        Block::new(
            BlockRows::Phi(gaussian_mat(&mut seeded(3), 40, 30, 0.5)),
            gaussian_mat(&mut seeded(4), 25, 30, 0.5),
            labels,
            None,
        )
        .unwrap(),
    );
    let bias = blocks.push(
        Block::new(
            BlockRows::Phi(Mat::from_fn(40, 1, |_, _| 1.0)),
            Mat::from_fn(25, 1, |_, _| 1.0),
            labels,
            None,
        )
        .unwrap(),
    );
    let lambdas = [0.01, 0.3, 2.0];
    let dual = blocks
        .dual_scores(&[map], Some(bias), &lambdas, &train, &val, &[1, 3])
        .unwrap();
    let summed = blocks
        .dual_scores(&[map, bias], None, &lambdas, &train, &val, &[1, 3])
        .unwrap();
    assert_eq!(dual, summed);
    let (gram, cross, penalty) = blocks.system(&[map, bias]).unwrap();
    let phi_v = blocks.val_features(&[map, bias]);
    for (&lambda, &d) in lambdas.iter().zip(&dual) {
        let w = solve_blocks(&gram, &cross, &penalty, lambda).unwrap();
        let e = evaluate_phi(PhiSource::Whole(phi_v.as_ref()), w.as_ref(), &val, &[1, 3]).unwrap();
        let p = (e.score(val.task(), 1).unwrap() + e.score(val.task(), 3).unwrap()) / 2.0;
        assert!((p - d).abs() < 1e-12, "λ = {lambda}: primal {p}, dual {d}");
    }
}

#[test]
fn folds_partition_the_rows_and_stratify_classes() {
    let x = FeatureMatrix::dense(gaussian_mat(&mut seeded(1), 50, 2, 1.0)).unwrap();
    let classes: Vec<usize> = (0..50).map(|i| usize::from(i % 5 == 0)).collect();
    let d = LabelData::multi_class(x, &classes, 2).unwrap();
    let folds = fold_rows(&d, 5, 0.2, &mut seeded(3)).unwrap();
    assert_eq!(folds.len(), 5);
    let mut seen = [0; 50];
    for (tr, va) in &folds {
        assert_eq!(tr.len() + va.len(), 50);
        assert!(va.iter().all(|v| tr.binary_search(v).is_err()));
        for &v in va {
            seen[v] += 1;
        }
        // 10 rows of class 1 over 5 folds: 2 in each validation part
        assert_eq!(va.iter().filter(|&&i| classes[i] == 1).count(), 2);
    }
    assert!(seen.iter().all(|&c| c == 1));
    assert_eq!(fold_rows(&d, 1, 0.2, &mut seeded(3)).unwrap().len(), 1);
}

#[test]
fn constant_columns_dense_and_sparse() {
    let dense = Mat::from_fn(4, 3, |i, j| if j == 1 { 7.0 } else { (i * j) as f64 });
    let x = FeatureMatrix::dense(dense.clone()).unwrap();
    assert_eq!(x.constant_columns(), vec![0, 1]);
    let s =
        FeatureMatrix::sparse(gimc_linalg::sparse::dense_to_csr(dense.as_ref()).unwrap()).unwrap();
    assert_eq!(s.constant_columns(), vec![0, 1]);
}

#[test]
fn extended_factors_score_as_whole_solves_within_each_range() {
    let (train, val) = (data(80, 6, 5), data(30, 6, 6));
    let labels = train.labels();
    let mut blocks = Blocks::new();
    let lin = blocks.push(linear_block(&train, &val));
    let mut map = |d, seed| {
        let tr = gaussian_mat(&mut seeded(seed), 80, d, 0.7);
        let va = gaussian_mat(&mut seeded(seed + 1), 30, d, 0.7);
        blocks.push(Block::new(BlockRows::Phi(tr), va, labels, None).unwrap())
    };
    let (a, b) = (map(10, 7), map(8, 9));
    let bias = blocks.push(
        Block::new(
            BlockRows::Phi(Mat::from_fn(80, 1, |_, _| 1.0)),
            Mat::from_fn(30, 1, |_, _| 1.0),
            labels,
            None,
        )
        .unwrap(),
    );
    let lambdas = [0.01, 0.3, 2.0];
    // the triple extends the pair's factor, the pair the linear part's
    let sets = vec![
        (vec![lin, a], vec![0, 1, 2]),
        (vec![lin, a, b], vec![2, 1]),
        (vec![b], vec![0]),
    ];
    let got = blocks
        .scores(&sets, bias, &lambdas, &train, &val, &[1, 2])
        .unwrap();
    for ((set, wanted), scores) in sets.iter().zip(&got) {
        let ids: Vec<usize> = set.iter().copied().chain([bias]).collect();
        let (gram, cross, penalty) = blocks.system(&ids).unwrap();
        let phi_v = blocks.val_features(&ids);
        for (li, &lambda) in lambdas.iter().enumerate() {
            if !wanted.contains(&li) {
                assert_eq!(scores[li], f64::NEG_INFINITY);
                continue;
            }
            let w = solve_blocks(&gram, &cross, &penalty, lambda).unwrap();
            let e =
                evaluate_phi(PhiSource::Whole(phi_v.as_ref()), w.as_ref(), &val, &[1, 2]).unwrap();
            let want = (e.score(val.task(), 1).unwrap() + e.score(val.task(), 2).unwrap()) / 2.0;
            assert!((scores[li] - want).abs() < 1e-12, "{set:?} λ = {lambda}");
        }
    }
}

#[test]
fn a_union_walks_the_lambdas_between_its_blocks_from_its_best_blocks() {
    use super::search::{GridSearch, Spec, union_lambdas};
    let lambdas = [0.001, 0.01, 0.1, 1.0, 10.0];
    let m = |family| Spec::Map { family, gamma: 0 };
    let scored = [
        (Spec::Linear, 1.0, 0.5),
        (m(0), 0.01, 0.4),
        (m(1), 1.0, 0.3),
        (m(3), 0.1, 0.6),
    ];
    let walk = |range, start| GridSearch {
        range,
        start: Some(start),
    };
    assert_eq!(
        union_lambdas(&lambdas, &[Spec::Linear, m(0)], &scored),
        walk(1..4, 3)
    );
    assert_eq!(
        union_lambdas(&lambdas, &[Spec::Linear, m(1)], &scored),
        walk(3..4, 3)
    );
    // the best block alone starts the walk, wherever it stands in the range
    assert_eq!(
        union_lambdas(&lambdas, &[Spec::Linear, m(0), m(3)], &scored),
        walk(1..4, 2)
    );
    // a block not scored alone: the whole grid
    assert_eq!(
        union_lambdas(&lambdas, &[Spec::Linear, m(2)], &scored),
        GridSearch::grid(5)
    );
}

/// The λ numbers a walk of `search` scores on the validation curve `curve`, in order, with the
/// scores it has then (−∞ where not scored), as [`Search::cv_scores`] drives it.
fn walked(search: &super::search::GridSearch, curve: &[f64]) -> (Vec<usize>, Vec<f64>) {
    let mut scores = vec![f64::NEG_INFINITY; curve.len()];
    let mut order = Vec::new();
    let mut wanted = search.first();
    while !wanted.is_empty() {
        for &li in &wanted {
            scores[li] = curve[li];
            order.push(li);
        }
        wanted = search.after(&wanted, &scores);
    }
    (order, scores)
}

#[test]
fn a_lambda_walk_finds_the_peak_of_a_rise_and_fall_and_stops_past_it() {
    use super::search::GridSearch;
    let walk = |range, start| GridSearch {
        range,
        start: Some(start),
    };
    let curve = [0.30, 0.45, 0.50, 0.48, 0.40, 0.20];
    // from the top end: down past the peak to the first fall, and nothing above the start
    assert_eq!(walked(&walk(0..5, 4), &curve).0, vec![4, 3, 2, 1]);
    // from below the peak: down until it falls, then up past the peak until it falls
    assert_eq!(walked(&walk(0..6, 1), &curve).0, vec![1, 0, 2, 3]);
    // from above the peak: down past it until it falls, and never up, where it only falls
    assert_eq!(walked(&walk(0..6, 3), &curve).0, vec![3, 2, 1]);
    // a tie goes on; the range bounds the walk
    let flat = [0.5, 0.5, 0.5, 0.4];
    assert_eq!(walked(&walk(1..3, 2), &flat).0, vec![2, 1]);
    // every walk's best equals the best of its range wherever the curve rises then falls
    for start in 0..6 {
        let (_, scores) = walked(&walk(0..6, start), &curve);
        let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(best, 0.50, "start {start}");
    }
    // the whole grid scores every λ at once
    assert_eq!(walked(&GridSearch::grid(4), &flat).0, vec![0, 1, 2, 3]);
}

#[test]
fn an_increasing_gamma_grid_is_walked_from_its_middle_and_any_other_scored_whole() {
    use super::search::GridSearch;
    use super::stages::gamma_search;
    use gimc_linalg::Gamma;
    let walk = |n, start| GridSearch {
        range: 0..n,
        start: Some(start),
    };
    let scale = [Gamma::Scale(0.0625), Gamma::Scale(0.25), Gamma::SCALE];
    assert_eq!(gamma_search(&scale), walk(3, 1));
    // the default grid starts from the scale rule itself
    let default = super::AutoParams::default().gammas;
    assert_eq!(default[2], Gamma::SCALE);
    assert_eq!(gamma_search(&default), walk(5, 2));
    assert_eq!(
        gamma_search(&[Gamma::Value(0.1), Gamma::Value(1.0)]),
        walk(2, 1)
    );
    assert_eq!(gamma_search(&[Gamma::Value(0.5)]), walk(1, 0));
    // out of order, or rules mixed with numbers: every γ
    assert_eq!(
        gamma_search(&[Gamma::SCALE, Gamma::Scale(0.25)]),
        GridSearch::grid(2)
    );
    assert_eq!(
        gamma_search(&[Gamma::Scale(0.25), Gamma::Value(1.0)]),
        GridSearch::grid(2)
    );
}

#[test]
fn an_increasing_lambda_grid_is_walked_from_its_middle_and_any_other_scored_whole() {
    use super::search::GridSearch;
    use super::stages::lambda_search;
    let walk = |n, start| GridSearch {
        range: 0..n,
        start: Some(start),
    };
    // the default grid 0.001 … 10 starts from 0.1
    let default = super::AutoParams::default().lambdas;
    assert_eq!(default[2], 0.1);
    assert_eq!(lambda_search(&default), walk(5, 2));
    assert_eq!(lambda_search(&[0.5]), walk(1, 0));
    assert_eq!(lambda_search(&[1.0, 0.1]), GridSearch::grid(2));
    assert_eq!(lambda_search(&[0.1, 0.1]), GridSearch::grid(2));
    // on a curve that rises and then falls, the walk finds the best λ of the whole grid
    let search = lambda_search(&default);
    for curve in [
        [0.5, 0.6, 0.4, 0.3, 0.2],
        [0.9, 0.8, 0.7, 0.6, 0.5],
        [0.1, 0.2, 0.3, 0.4, 0.5],
        [0.1, 0.2, 0.3, 0.5, 0.4],
    ] {
        let (seen, scores) = walked(&search, &curve);
        let best = |s: &[f64]| (0..5).max_by(|&a, &b| s[a].total_cmp(&s[b])).unwrap();
        assert_eq!(best(&scores), best(&curve), "{curve:?}: scored {seen:?}");
        assert!(seen.len() < 5, "{curve:?}: scored {seen:?}");
    }
}

#[test]
fn a_resumed_learning_continues_its_curve_and_keeps_the_best_iterate() {
    use super::search::validation_curve;
    use super::stages::FoldRun;
    use crate::labels::fit::{LabelParams, fit_labels};
    use crate::registry::MapRegistry;
    use gimc_featmap::LearnableMap;
    use gimc_linalg::observe::NoObserver;
    let (train, val) = (data(60, 4, 11), data(30, 4, 12));
    let registry = MapRegistry::builtin();
    let map = registry
        .family("lff")
        .unwrap()
        .build(train.features(), 8, 0.5, &mut seeded(13))
        .unwrap();
    let ks = [1, 2];
    let fit_for = |map, max_iter| {
        let lp = LabelParams {
            lambda: 0.1,
            max_iter,
            eval_ks: ks.to_vec(),
            select_k: 1,
            eval_train: false,
            ..LabelParams::default()
        }
        .check()
        .unwrap();
        fit_labels(&train, map, &lp, Some(&val), &mut NoObserver).unwrap()
    };
    let mut run = FoldRun::new(map, 0.1);
    let first = fit_for(run.map.take().unwrap(), 2);
    let best_first = first.best.as_ref().map(|b| b.score);
    let curve = validation_curve(&first.history, &val, &ks);
    run.resume_with(first, curve);
    assert_eq!(run.iterations(), 2);
    assert_eq!(run.curve.len(), 3);
    // the next round starts from the last iterate: its iteration 0 is that iterate again
    let second = fit_for(run.map.take().unwrap(), 3);
    let best_second = second.best.as_ref().map(|b| b.score);
    let curve = validation_curve(&second.history, &val, &ks);
    assert_eq!(curve[0], run.curve[2]);
    run.resume_with(second, curve);
    assert_eq!(run.iterations(), 5);
    assert_eq!(run.curve.len(), 6);
    // the best iterate is the better of the two rounds' (the earlier on ties)
    let (b1, b2) = (best_first.unwrap(), best_second.unwrap());
    let best = run.best.as_ref().unwrap();
    assert_eq!(best.0, if b2 > b1 { b2 } else { b1 });
    let params = best.1.clone();
    assert_eq!(run.into_best_map().unwrap().params().to_owned(), params);
}

#[test]
fn tied_scores_go_to_the_simpler_model() {
    use super::report::{AutoStage, AutoTrial, BlockChoice};
    use super::search::{beats, better};
    use super::transform::RowTransform;
    let block = |name: &str, map: bool, iterations| BlockChoice {
        name: name.into(),
        gamma_factor: map.then_some(0.25),
        gamma: map.then_some(0.01),
        iterations,
    };
    let trial = |blocks, lambda, score| AutoTrial {
        stage: AutoStage::Fixed,
        transform: RowTransform::ALL[0],
        blocks,
        lambda,
        score,
    };
    let linear = trial(vec![block("linear", false, 0)], 0.1, 0.7);
    let map = trial(vec![block("lff", true, 0)], 0.1, 0.7);
    let learned = trial(vec![block("lff", true, 3)], 0.1, 0.7);
    let union = trial(
        vec![block("linear", false, 0), block("lff", true, 0)],
        1.0,
        0.7,
    );
    // the same score: fewer blocks, then no map, then no learning, then the larger λ
    assert!(beats(&linear, &map) && !beats(&map, &linear));
    assert!(beats(&map, &learned) && !beats(&learned, &map));
    assert!(beats(&map, &union) && beats(&linear, &union));
    let stiffer = trial(vec![block("lff", true, 0)], 1.0, 0.7 + 1e-12);
    assert!(beats(&stiffer, &map) && !beats(&map, &stiffer));
    // a higher score wins whatever its complexity; a full tie keeps the first
    let higher = trial(union.blocks.clone(), 0.001, 0.7001);
    assert!(beats(&higher, &linear));
    assert_eq!(better(Some(map.clone()), &map.clone()), Some(map.clone()));
    assert_eq!(better(Some(union), &linear), Some(linear));
}
