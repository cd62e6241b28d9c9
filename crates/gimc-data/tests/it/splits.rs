//! Splits, constraint sampling and balanced subsampling: determinism by seed, partitions, no
//! duplicate pairs, S_ij = 1 exactly for same-class pairs.

use std::collections::HashSet;

use gimc_data::split::{
    balanced_subsample, pair_count, sample_pairs, split_pairs, split_rows, stratified_split,
};
use gimc_data::synth::{BlobsParams, blobs};
use gimc_linalg::rng::seeded;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn split_rows_partitions(n in 0usize..300, frac in 0.0f64..=1.0, seed in any::<u64>()) {
        let s = split_rows(n, frac, &mut seeded(seed)).unwrap();
        prop_assert_eq!(s.validation.len(), ((n as f64) * frac).round() as usize);
        let mut all: Vec<usize> = s.train.iter().chain(&s.validation).copied().collect();
        all.sort_unstable();
        prop_assert_eq!(all, (0..n).collect::<Vec<_>>());
        prop_assert_eq!(&s, &split_rows(n, frac, &mut seeded(seed)).unwrap());
    }

    #[test]
    fn stratified_keeps_proportions(classes in proptest::collection::vec(0usize..4, 1..300), frac in 0.0f64..=1.0, seed in any::<u64>()) {
        let s = stratified_split(&classes, frac, &mut seeded(seed)).unwrap();
        for c in 0..4 {
            let total = classes.iter().filter(|&&k| k == c).count();
            let val = s.validation.iter().filter(|&&i| classes[i] == c).count();
            prop_assert_eq!(val, ((total as f64) * frac).round() as usize);
        }
        prop_assert_eq!(s.train.len() + s.validation.len(), classes.len());
        let v: HashSet<usize> = s.validation.iter().copied().collect();
        prop_assert!(s.train.iter().all(|i| !v.contains(i)));
    }

    #[test]
    fn pairs_are_distinct_labelled_and_seeded(classes in proptest::collection::vec(0usize..3, 2..120), frac in 0.0f64..=1.0, seed in any::<u64>()) {
        let n = classes.len();
        let count = ((pair_count(n) as f64) * frac) as usize;
        let pairs = sample_pairs(&classes, count, &mut seeded(seed)).unwrap();
        prop_assert_eq!(pairs.len(), count);
        let distinct: HashSet<(usize, usize)> = pairs.iter().map(|&(i, j, _)| (i, j)).collect();
        prop_assert_eq!(distinct.len(), count);
        for &(i, j, s) in &pairs {
            prop_assert!(i < j && j < n);
            prop_assert_eq!(s, if classes[i] == classes[j] { 1.0 } else { 0.0 });
        }
        prop_assert_eq!(&pairs, &sample_pairs(&classes, count, &mut seeded(seed)).unwrap());
        let (kept, held) = split_pairs(&pairs, 0.2, &mut seeded(seed)).unwrap();
        prop_assert_eq!(held.len(), ((count as f64) * 0.2).round() as usize);
        prop_assert_eq!(kept.len() + held.len(), count);
        let h: HashSet<(usize, usize)> = held.iter().map(|&(i, j, _)| (i, j)).collect();
        prop_assert!(kept.iter().all(|&(i, j, _)| !h.contains(&(i, j))));
    }
}

#[test]
fn pairs_are_uniform_enough() {
    // 3 items, 3 possible pairs; drawing 1 pair many times hits each about a third of the time
    let classes = [0, 0, 1];
    let mut counts = [0usize; 3];
    for seed in 0..3000 {
        let p = sample_pairs(&classes, 1, &mut seeded(seed)).unwrap();
        let k = match (p[0].0, p[0].1) {
            (0, 1) => 0,
            (0, 2) => 1,
            _ => 2,
        };
        counts[k] += 1;
    }
    assert!(
        counts.iter().all(|&c| (900..1100).contains(&c)),
        "{counts:?}"
    );
}

#[test]
fn different_seeds_differ() {
    let classes: Vec<usize> = (0..500).map(|i| i % 5).collect();
    let a = sample_pairs(&classes, 500, &mut seeded(1)).unwrap();
    let b = sample_pairs(&classes, 500, &mut seeded(2)).unwrap();
    assert_ne!(a, b);
    // about 1/5 of random pairs are must-links
    let ones = a.iter().filter(|p| p.2 == 1.0).count();
    assert!((60..140).contains(&ones), "{ones}");
}

#[test]
fn dataset_split_and_balanced_subsample() {
    let ds = blobs(
        &BlobsParams::new(700, 3, 7, 0.5).check().unwrap(),
        &mut seeded(4),
    )
    .unwrap();
    let (tr, va) = ds.split(0.2, true, &mut seeded(5)).unwrap();
    assert_eq!((tr.nrows(), va.nrows()), (560, 140));
    assert_eq!(va.summary().class_counts, Some(vec![20; 7]));
    let rows = balanced_subsample(ds.classes().unwrap(), 50, &mut seeded(6)).unwrap();
    assert_eq!(rows.len(), 50);
    assert_eq!(
        rows,
        balanced_subsample(ds.classes().unwrap(), 50, &mut seeded(6)).unwrap()
    );
    let sub = ds.balanced_subsample(50, &mut seeded(6)).unwrap();
    assert_eq!(sub.summary().class_counts, Some(vec![8, 7, 7, 7, 7, 7, 7]));
}
