//! Exact shapes of the shared real data sets, read through `load_named`.

use std::collections::HashSet;

use gimc_data::{Dataset, NamedOptions, Targets, load_named, load_named_part, load_named_with};
use gimc_linalg::FeatureMatrix;
use gimc_linalg::rng::seeded;

use crate::require_set;

fn label_info(ds: &Dataset) -> (usize, usize, Vec<String>) {
    let Targets::Labels { matrix, names } = &ds.targets else {
        panic!("{}: labels expected", ds.name)
    };
    let empty = matrix.outer_iterator().filter(|r| r.nnz() == 0).count();
    (matrix.cols(), empty, names.clone())
}

fn dense(ds: &Dataset) -> &gimc_linalg::faer::Mat<f64> {
    match &ds.features {
        FeatureMatrix::Dense(m) => m,
        FeatureMatrix::Sparse(_) => panic!("{}: dense expected", ds.name),
    }
}

#[test]
fn bibtex() {
    let Some(dir) = require_set("bibtex") else {
        return;
    };
    let set = load_named(&dir, "bibtex").unwrap();
    let train = set.part("train").unwrap();
    let test = set.part("test").unwrap();
    assert_eq!((train.nrows(), train.ncols()), (4880, 1836));
    assert_eq!((test.nrows(), test.ncols()), (2515, 1836));
    assert!(train.features.is_sparse());
    assert_eq!(train.features.nnz(), 334_250);
    assert_eq!(test.features.nnz(), 173_496);
    let (l, empty, names) = label_info(train);
    assert_eq!((l, empty), (159, 0));
    assert_eq!(names[0], "TAG_2005");
    let s = train.summary();
    assert!((s.label_cardinality.unwrap() - 2.380).abs() < 1e-3, "{s}");
    assert_eq!(train.feature_names.len(), 1836);
}

#[test]
fn delicious() {
    let Some(dir) = require_set("delicious") else {
        return;
    };
    let set = load_named(&dir, "delicious").unwrap();
    let train = set.part("train").unwrap();
    let test = set.part("test").unwrap();
    assert_eq!((train.nrows(), train.ncols()), (12_920, 500));
    assert_eq!((test.nrows(), test.ncols()), (3185, 500));
    let (l, empty_train, names) = label_info(train);
    let (_, empty_test, _) = label_info(test);
    assert_eq!(l, 983);
    assert_eq!((empty_train, empty_test), (10, 4));
    assert!(
        names.iter().any(|n| n == "TAG_m'usica"),
        "escaped label name"
    );
    assert!(names.iter().any(|n| n == "TAG_musica"));
    assert!(names.iter().any(|n| n == "TAG_dise\\~no"));
    assert_eq!(names.iter().collect::<HashSet<_>>().len(), 983);
    assert!((train.summary().label_cardinality.unwrap() - 19.047).abs() < 1e-3);
    assert_eq!(train.features.nnz(), 239_549);
}

#[test]
fn yeast() {
    let Some(dir) = require_set("yeast") else {
        return;
    };
    let set = load_named(&dir, "yeast").unwrap();
    let train = set.part("train").unwrap();
    let test = set.part("test").unwrap();
    assert_eq!(
        (train.nrows(), train.ncols(), test.nrows(), test.ncols()),
        (1500, 103, 917, 103)
    );
    assert!(!train.features.is_sparse());
    assert_eq!(label_info(train).0, 14);
    assert!((train.summary().label_cardinality.unwrap() - 4.228).abs() < 1e-3);
    assert_eq!(label_info(train).2[0], "Class1");
}

#[test]
fn emotions() {
    let Some(dir) = require_set("emotions") else {
        return;
    };
    let set = load_named(&dir, "emotions").unwrap();
    let (train, test, full) = (
        set.part("train").unwrap(),
        set.part("test").unwrap(),
        set.part("full").unwrap(),
    );
    assert_eq!((train.nrows(), test.nrows(), full.nrows()), (391, 202, 593));
    for d in [train, test, full] {
        assert_eq!(d.ncols(), 72);
        assert_eq!(label_info(d).0, 6);
        assert_eq!(label_info(d).1, 0);
    }
    assert!((full.summary().label_cardinality.unwrap() - 1.868).abs() < 1e-3);
    let both = set.concat(&["train", "test"]).unwrap();
    assert_eq!(both.labels().unwrap().nnz(), full.labels().unwrap().nnz());
}

#[test]
fn birds() {
    let Some(dir) = require_set("birds") else {
        return;
    };
    let set = load_named(&dir, "birds").unwrap();
    let (train, test) = (set.part("train").unwrap(), set.part("test").unwrap());
    assert_eq!((train.nrows(), test.nrows()), (322, 323));
    for d in [train, test] {
        assert_eq!(d.ncols(), 260);
        assert!(!d.features.is_sparse());
    }
    let (l, empty_train, names) = label_info(train);
    assert_eq!((l, empty_train, label_info(test).1), (19, 143, 151));
    // declared 'Swainson\'s Thrush' in the ARFF, plain in the XML
    assert!(names.iter().any(|n| n == "Swainson's Thrush"), "{names:?}");
    // nominal `location` {2,10,1,...} is coded by declaration index: 0..12
    let loc = train
        .feature_names
        .iter()
        .position(|n| n == "location")
        .unwrap();
    let x = dense(train);
    assert!((0..train.nrows()).all(|i| (0.0..12.0).contains(&x[(i, loc)])));
}

#[test]
fn genbase() {
    let Some(dir) = require_set("genbase") else {
        return;
    };
    let set = load_named(&dir, "genbase").unwrap();
    let (train, test) = (set.part("train").unwrap(), set.part("test").unwrap());
    assert_eq!((train.nrows(), test.nrows()), (463, 199));
    assert_eq!((train.ncols(), test.ncols()), (1186, 1186));
    assert_eq!(train.feature_names[0], "protein");
    let (l, empty, _) = label_info(train);
    assert_eq!((l, empty, label_info(test).1), (27, 0, 0));
    // motifs are declared {YES,NO}: YES is 0, NO is 1 (the first row's PS00010 is NO)
    assert_eq!(train.feature_names[1], "PS00010");
    let x = dense(train);
    assert_eq!(x[(0, 1)], 1.0);
    assert!((0..train.nrows()).all(|i| x[(i, 1)] == 0.0 || x[(i, 1)] == 1.0));
    assert!((train.summary().label_cardinality.unwrap() - 1.261).abs() < 1e-3);
}

#[test]
fn flags() {
    let Some(dir) = require_set("flags") else {
        return;
    };
    let set = load_named(&dir, "flags").unwrap();
    let (train, test) = (set.part("train").unwrap(), set.part("test").unwrap());
    assert_eq!(
        (train.nrows(), train.ncols(), test.nrows(), test.ncols()),
        (129, 19, 65, 19)
    );
    let (l, empty, names) = label_info(train);
    assert_eq!((l, empty), (7, 0));
    assert_eq!(names[0], "red");
    assert!((train.summary().label_cardinality.unwrap() - 3.419).abs() < 1e-3);
}

#[test]
fn mushrooms() {
    let Some(dir) = require_set("mushrooms") else {
        return;
    };
    let ds = load_named_part(&dir, "mushrooms", "all", &NamedOptions::default()).unwrap();
    assert_eq!((ds.nrows(), ds.ncols()), (8124, 112));
    assert_eq!(ds.features.nnz(), 170_604);
    let s = ds.summary();
    assert_eq!(s.class_counts, Some(vec![3916, 4208]));
    let Targets::Classes { names, .. } = &ds.targets else {
        panic!()
    };
    assert_eq!(names, &["1", "2"]);
    let FeatureMatrix::Sparse(x) = &ds.features else {
        panic!()
    };
    assert!(x.outer_iterator().all(|r| r.nnz() == 21));
}

#[test]
fn segment() {
    let Some(dir) = require_set("segment") else {
        return;
    };
    let set = load_named(&dir, "segment").unwrap();
    let (train, test) = (set.part("train").unwrap(), set.part("test").unwrap());
    assert_eq!(
        (train.nrows(), test.nrows(), train.ncols()),
        (1500, 810, 19)
    );
    let all = set.concat(&["train", "test"]).unwrap();
    assert_eq!(all.nrows(), 2310);
    assert_eq!(all.summary().class_counts, Some(vec![330; 7]));
    let Targets::Classes { names, .. } = &all.targets else {
        panic!()
    };
    assert_eq!(names[0], "brickface");
    assert_eq!(train.feature_names[2], "region-pixel-count");
    let x = dense(train);
    assert!(
        (0..x.nrows()).all(|i| x[(i, 2)] == 9.0),
        "region-pixel-count is constant 9"
    );
}

#[test]
fn abalone() {
    let Some(dir) = require_set("abalone") else {
        return;
    };
    let ds = load_named_part(&dir, "abalone", "all", &NamedOptions::default()).unwrap();
    assert_eq!(
        (ds.nrows(), ds.ncols()),
        (4177, 10),
        "8 columns with Sex one-hot = 10 features"
    );
    assert_eq!(&ds.feature_names[..3], &["Sex=F", "Sex=I", "Sex=M"]);
    let x = dense(&ds);
    let sums: Vec<f64> = (0..3)
        .map(|j| (0..x.nrows()).map(|i| x[(i, j)]).sum())
        .collect();
    assert_eq!(sums, vec![1307.0, 1342.0, 1528.0]);
    let Targets::Values(rings) = &ds.targets else {
        panic!()
    };
    let distinct: HashSet<u64> = rings.iter().map(|r| r.to_bits()).collect();
    assert_eq!(distinct.len(), 28);
    assert_eq!(x[(0, 3)], 0.455);
    let binned =
        load_named_part(&dir, "abalone", "all", &NamedOptions { bin_targets: true }).unwrap();
    let Targets::Classes { classes, names } = &binned.targets else {
        panic!()
    };
    assert_eq!(names.len(), 3);
    for (c, r) in classes.iter().zip(rings) {
        let expected = if *r <= 8.0 {
            0
        } else if *r <= 10.0 {
            1
        } else {
            2
        };
        assert_eq!(*c, expected);
    }
}

#[test]
fn winequality() {
    let Some(dir) = require_set("winequality") else {
        return;
    };
    let set = load_named_with(&dir, "winequality", &NamedOptions { bin_targets: true }).unwrap();
    let (red, white) = (set.part("red").unwrap(), set.part("white").unwrap());
    assert_eq!(
        (red.nrows(), red.ncols(), white.nrows(), white.ncols()),
        (1599, 11, 4898, 11)
    );
    assert_eq!(red.feature_names[0], "fixed acidity");
    assert_eq!(
        red.summary().class_counts,
        Some(vec![10 + 53 + 681, 638, 199 + 18])
    );
    assert_eq!(
        white.summary().class_counts,
        Some(vec![20 + 163 + 1457, 2198, 880 + 175 + 5])
    );
    let raw = load_named_part(&dir, "winequality", "white", &NamedOptions::default()).unwrap();
    assert_eq!(raw.summary().value_range, Some((3.0, 9.0)));
}

#[test]
fn covtype() {
    let Some(dir) = require_set("covtype") else {
        return;
    };
    let set = load_named(&dir, "covtype").unwrap();
    let (strat, bal) = (
        set.part("stratified").unwrap(),
        set.part("balanced").unwrap(),
    );
    assert_eq!((strat.nrows(), strat.ncols()), (92_962, 54));
    assert_eq!((bal.nrows(), bal.ncols()), (15_120, 54));
    assert_eq!(
        strat.summary().class_counts,
        Some(vec![33_894, 45_328, 5721, 439, 1519, 2779, 3282])
    );
    assert_eq!(bal.summary().class_counts, Some(vec![2160; 7]));
    assert_eq!(
        strat.feature_names, bal.feature_names,
        "Id dropped, same columns"
    );
    let (xs, xb) = (dense(strat), dense(bal));
    assert!((xb[(0, 0)] - (2596.0 - 1859.0) / (3858.0 - 1859.0)).abs() < 1e-12);
    for x in [xs, xb] {
        for j in 0..10 {
            assert!(
                (0..x.nrows()).all(|i| (-1e-9..=1.0 + 1e-9).contains(&x[(i, j)])),
                "column {j} in [0,1]"
            );
        }
    }
    // inverting the common scaling recovers the UCI integers: 2,447 rows are in both parts
    let ranges = [
        (1859.0, 3858.0),
        (0.0, 360.0),
        (0.0, 66.0),
        (0.0, 1397.0),
        (-173.0, 601.0),
        (0.0, 7117.0),
        (0.0, 254.0),
        (0.0, 254.0),
        (0.0, 254.0),
        (0.0, 7173.0),
    ];
    let key = |x: &gimc_linalg::faer::Mat<f64>, i: usize, c: usize| -> Vec<i64> {
        let mut k: Vec<i64> = (0..54)
            .map(|j| {
                if j < 10 {
                    (x[(i, j)] * (ranges[j].1 - ranges[j].0) + ranges[j].0).round() as i64
                } else {
                    x[(i, j)] as i64
                }
            })
            .collect();
        k.push(c as i64);
        k
    };
    let (cs, cb) = (strat.classes().unwrap(), bal.classes().unwrap());
    let in_strat: HashSet<Vec<i64>> = (0..xs.nrows()).map(|i| key(xs, i, cs[i])).collect();
    let overlap = (0..xb.nrows())
        .filter(|&i| in_strat.contains(&key(xb, i, cb[i])))
        .count();
    assert_eq!(overlap, 2447);
    // covtype-sub: 1,711 balanced rows
    let sub = strat.balanced_subsample(1711, &mut seeded(2016)).unwrap();
    assert_eq!(sub.nrows(), 1711);
    assert_eq!(
        sub.summary().class_counts,
        Some(vec![245, 245, 245, 244, 244, 244, 244])
    );
}

#[test]
fn abalone_scale() {
    let Some(dir) = require_set("abalone_scale") else {
        return;
    };
    let ds = load_named_part(&dir, "abalone_scale", "all", &NamedOptions::default()).unwrap();
    assert_eq!((ds.nrows(), ds.ncols()), (4174, 8));
    assert_eq!(ds.features.nnz(), 32_057);
    let FeatureMatrix::Sparse(x) = &ds.features else {
        panic!()
    };
    assert!(x.iter().all(|(&v, _)| (-1.0..=1.0).contains(&v)));
    let Targets::Values(v) = &ds.targets else {
        panic!()
    };
    assert_eq!((v[0], v[v.len() - 1]), (15.0, 10.0));
}
