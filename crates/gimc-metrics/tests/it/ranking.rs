//! P@k and nDCG@k against brute-force references (full stable sort, explicit label sets).

use gimc_linalg::faer::Mat;
use gimc_linalg::sprs::{CsMat, TriMat};
use gimc_metrics::{
    EmptyRows, ndcg_at_k, ndcg_at_k_from_topk_with, precision_at_k, precision_at_k_from_topk,
    precision_at_k_from_topk_with, top_k_indices, top_k_rows,
};
use proptest::prelude::*;

/// Full stable sort by descending score (NaN last), ties by index.
fn brute_ranking(row: &[f64]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..row.len()).collect();
    idx.sort_by(|&a, &b| {
        let key = |x: f64| if x.is_nan() { f64::NEG_INFINITY } else { x };
        let (x, y) = (key(row[a]), key(row[b]));
        let nan_order = row[a].is_nan().cmp(&row[b].is_nan());
        nan_order.then(y.partial_cmp(&x).unwrap()).then(a.cmp(&b))
    });
    idx
}

/// Reference metrics written directly from the definitions; `skip` drops label-less rows.
fn brute_metrics(scores: &[Vec<f64>], labels: &[Vec<bool>], k: usize, skip: bool) -> (f64, f64) {
    let (mut p_sum, mut n_sum, mut rows) = (0.0, 0.0, 0usize);
    for (row, lab) in scores.iter().zip(labels) {
        let n_rel = lab.iter().filter(|&&b| b).count();
        if n_rel == 0 {
            if !skip {
                rows += 1;
            }
            continue;
        }
        rows += 1;
        let rank = brute_ranking(row);
        let mut hits = 0;
        let mut dcg = 0.0;
        for (pos, &l) in rank.iter().enumerate().take(k) {
            if lab[l] {
                hits += 1;
                dcg += 1.0 / ((pos + 2) as f64).log2();
            }
        }
        let ideal: f64 = (0..k.min(n_rel))
            .map(|p| 1.0 / ((p + 2) as f64).log2())
            .sum();
        p_sum += hits as f64 / k as f64;
        n_sum += dcg / ideal;
    }
    (p_sum / rows as f64, n_sum / rows as f64)
}

fn to_csr(labels: &[Vec<bool>], l: usize) -> CsMat<f64> {
    let mut t = TriMat::new((labels.len(), l));
    for (i, row) in labels.iter().enumerate() {
        for (j, &b) in row.iter().enumerate() {
            if b {
                t.add_triplet(i, j, 1.0);
            }
        }
    }
    t.to_csr()
}

/// n × L scores drawn from a few values (so ties are common) and sparse 0/1 labels.
fn problem() -> impl Strategy<Value = (Vec<Vec<f64>>, Vec<Vec<bool>>, usize)> {
    (1usize..12, 1usize..10).prop_flat_map(|(n, l)| {
        (
            proptest::collection::vec(proptest::collection::vec(0u8..4, l), n).prop_map(|m| {
                m.into_iter()
                    .map(|r| r.into_iter().map(f64::from).collect())
                    .collect()
            }),
            proptest::collection::vec(
                proptest::collection::vec(proptest::bool::weighted(0.3), l),
                n,
            ),
            1usize..14, // k often larger than L
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn p_and_ndcg_match_brute_force((scores, labels, k) in problem()) {
        let (n, l) = (scores.len(), scores[0].len());
        let mat = Mat::from_fn(n, l, |i, j| scores[i][j]);
        let truth = to_csr(&labels, l);
        let (p_ref, n_ref) = brute_metrics(&scores, &labels, k, false);
        let p = precision_at_k(mat.as_ref(), &truth, k).unwrap();
        let nd = ndcg_at_k(mat.as_ref(), &truth, k).unwrap();
        prop_assert!((p - p_ref).abs() < 1e-12, "P@{k}: {p} vs {p_ref}");
        prop_assert!((nd - n_ref).abs() < 1e-12, "nDCG@{k}: {nd} vs {n_ref}");
        prop_assert!((0.0..=1.0).contains(&p) && (0.0..=1.0 + 1e-12).contains(&nd));

        let topk = top_k_rows(mat.as_ref(), k).unwrap();
        if labels.iter().any(|r| r.iter().any(|&b| b)) {
            let (p_ref, n_ref) = brute_metrics(&scores, &labels, k, true);
            let p = precision_at_k_from_topk_with(&topk, &truth, k, EmptyRows::Skip).unwrap();
            let nd = ndcg_at_k_from_topk_with(&topk, &truth, k, EmptyRows::Skip).unwrap();
            prop_assert!((p - p_ref).abs() < 1e-12);
            prop_assert!((nd - n_ref).abs() < 1e-12);
        }
    }

    #[test]
    fn longer_lists_give_same_smaller_k((scores, labels, k) in problem()) {
        // Lists computed once for the largest k serve every smaller k.
        let (n, l) = (scores.len(), scores[0].len());
        let mat = Mat::from_fn(n, l, |i, j| scores[i][j]);
        let truth = to_csr(&labels, l);
        let long = top_k_rows(mat.as_ref(), k + 3).unwrap();
        prop_assert_eq!(
            precision_at_k_from_topk(&long, &truth, k).unwrap(),
            precision_at_k(mat.as_ref(), &truth, k).unwrap()
        );
    }

    #[test]
    fn top_k_is_prefix_of_full_ranking(
        row in proptest::collection::vec(prop_oneof![
            4 => (0u8..5).prop_map(f64::from),
            1 => Just(f64::NAN),
            1 => Just(f64::NEG_INFINITY),
        ], 0..30),
        k in 0usize..35,
    ) {
        let full = brute_ranking(&row);
        let top = top_k_indices(&row, k);
        prop_assert_eq!(&top[..], &full[..k.min(row.len())]);
    }
}

#[test]
fn perfect_scores_give_one() {
    // Each row's labels scored highest: P@1 = nDCG@k = 1 for every k.
    let labels = vec![vec![true, false, true], vec![false, true, false]];
    let truth = to_csr(&labels, 3);
    let scores = Mat::from_fn(2, 3, |i, j| if labels[i][j] { 1.0 } else { 0.0 });
    assert_eq!(precision_at_k(scores.as_ref(), &truth, 1).unwrap(), 1.0);
    for k in 1..6 {
        assert!((ndcg_at_k(scores.as_ref(), &truth, k).unwrap() - 1.0).abs() < 1e-15);
    }
    // P@3 = (2/3 + 1/3) / 2.
    assert!((precision_at_k(scores.as_ref(), &truth, 3).unwrap() - 0.5).abs() < 1e-15);
}
