//! Clustering metrics against O(n²) / brute-force references and invariances.

use gimc_metrics::{clustering_accuracy, constraint_error, pairwise_clustering_error};
use proptest::prelude::*;

/// O(n²) reference: fraction of unordered pairs on which "same cluster" disagrees.
fn brute_pairwise(pred: &[usize], truth: &[usize]) -> f64 {
    let n = pred.len();
    let (mut bad, mut all) = (0usize, 0usize);
    for i in 0..n {
        for j in i + 1..n {
            all += 1;
            if (pred[i] == pred[j]) != (truth[i] == truth[j]) {
                bad += 1;
            }
        }
    }
    bad as f64 / all as f64
}

/// Brute-force best matching: tries every injective map from clusters to classes.
fn brute_accuracy(pred: &[usize], truth: &[usize], cp: usize, ct: usize) -> f64 {
    fn rec(
        a: usize,
        cp: usize,
        ct: usize,
        used: &mut Vec<bool>,
        table: &[Vec<usize>],
        acc: usize,
        best: &mut usize,
    ) {
        if a == cp {
            *best = (*best).max(acc);
            return;
        }
        // cluster a unmatched
        rec(a + 1, cp, ct, used, table, acc, best);
        for b in 0..ct {
            if !used[b] {
                used[b] = true;
                rec(a + 1, cp, ct, used, table, acc + table[a][b], best);
                used[b] = false;
            }
        }
    }
    let mut table = vec![vec![0usize; ct]; cp];
    for (&p, &t) in pred.iter().zip(truth) {
        table[p][t] += 1;
    }
    let mut best = 0;
    rec(0, cp, ct, &mut vec![false; ct], &table, 0, &mut best);
    best as f64 / pred.len() as f64
}

/// A labelling and a permutation of its label values.
fn labelling_and_perm() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    (1usize..8).prop_flat_map(|c| {
        (
            proptest::collection::vec(0..c, 2..60),
            Just((0..c).collect::<Vec<_>>()).prop_shuffle(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn permuted_labelling_is_perfect((truth, perm) in labelling_and_perm(), shift in 0usize..1000) {
        // Relabel through a permutation and an arbitrary offset: same partition.
        let pred: Vec<usize> = truth.iter().map(|&t| perm[t] * 7 + shift).collect();
        prop_assert_eq!(clustering_accuracy(&pred, &truth).unwrap(), 1.0);
        prop_assert_eq!(pairwise_clustering_error(&pred, &truth).unwrap(), 0.0);
    }

    #[test]
    fn pairwise_matches_brute_force(
        (pred, truth) in (2usize..50).prop_flat_map(|n| (
            proptest::collection::vec(0usize..6, n),
            proptest::collection::vec(0usize..4, n),
        ))
    ) {
        let fast = pairwise_clustering_error(&pred, &truth).unwrap();
        let slow = brute_pairwise(&pred, &truth);
        prop_assert!((fast - slow).abs() < 1e-12, "fast {fast} slow {slow}");
        // symmetric in its arguments
        prop_assert_eq!(fast, pairwise_clustering_error(&truth, &pred).unwrap());
    }

    #[test]
    fn accuracy_matches_brute_force_matching(
        (pred, truth) in (1usize..30).prop_flat_map(|n| (
            proptest::collection::vec(0usize..5, n),
            proptest::collection::vec(0usize..4, n),
        ))
    ) {
        let cp = pred.iter().max().unwrap() + 1;
        let ct = truth.iter().max().unwrap() + 1;
        let fast = clustering_accuracy(&pred, &truth).unwrap();
        let slow = brute_accuracy(&pred, &truth, cp, ct);
        prop_assert!((fast - slow).abs() < 1e-12, "fast {fast} slow {slow}");
    }

    #[test]
    fn constraints_from_truth_are_satisfied_by_truth(
        truth in proptest::collection::vec(0usize..4, 2..40),
        raw in proptest::collection::vec((any::<usize>(), any::<usize>()), 1..50),
    ) {
        let n = truth.len();
        let pairs: Vec<(usize, usize, f64)> = raw
            .iter()
            .map(|&(i, j)| {
                let (i, j) = (i % n, j % n);
                (i, j, if truth[i] == truth[j] { 1.0 } else { 0.0 })
            })
            .collect();
        prop_assert_eq!(constraint_error(&pairs, &truth).unwrap(), 0.0);
        // Flipping every label makes every constraint violated.
        let flipped: Vec<_> = pairs.iter().map(|&(i, j, s)| (i, j, 1.0 - s)).collect();
        prop_assert_eq!(constraint_error(&flipped, &truth).unwrap(), 1.0);
    }
}

#[test]
fn large_input_is_linear() {
    // 2 million items: an O(n²) implementation would not finish; the contingency path is fast.
    let n = 2_000_000usize;
    let truth: Vec<usize> = (0..n).map(|i| i % 7).collect();
    let pred: Vec<usize> = (0..n).map(|i| (i / 3) % 7).collect();
    let e = pairwise_clustering_error(&pred, &truth).unwrap();
    assert!(e > 0.0 && e < 1.0);
    let a = clustering_accuracy(&pred, &truth).unwrap();
    assert!(a > 0.0 && a <= 1.0);
}
