use super::*;

fn small() -> Dataset {
    let x = Mat::from_fn(4, 2, |i, j| (i * 2 + j) as f64);
    let mut ds = Dataset::new(
        "t",
        FeatureMatrix::dense(x).unwrap(),
        Targets::Classes {
            classes: vec![0, 1, 1, 0],
            names: vec!["a".into(), "b".into()],
        },
        vec!["f0".into(), "f1".into()],
    )
    .unwrap();
    ds.missing = vec![(1, 0), (3, 1)];
    ds
}

#[test]
fn select_rows_and_missing() {
    let ds = small();
    let s = ds.select_rows(&[3, 1, 1]).unwrap();
    assert_eq!(s.nrows(), 3);
    assert_eq!(s.classes().unwrap(), &[0, 1, 1]);
    assert_eq!(s.missing, vec![(0, 1), (1, 0), (2, 0)]);
    match &s.features {
        FeatureMatrix::Dense(m) => assert_eq!(m[(0, 1)], 7.0),
        FeatureMatrix::Sparse(_) => panic!("dense expected"),
    }
    assert!(ds.select_rows(&[4]).is_err());
}

#[test]
fn vstack_and_summary() {
    let ds = small();
    let st = Dataset::vstack("both", &[&ds, &ds]).unwrap();
    assert_eq!(st.nrows(), 8);
    assert_eq!(st.missing.len(), 4);
    let s = st.summary();
    assert_eq!(s.class_counts, Some(vec![4, 4]));
    assert!(s.to_string().contains("2 classes"));
}

/// The same 12 × 5 features dense and sparse: column 0 distinct codes 0..11 (one row 0),
/// column 1 two codes, column 2 all zero, column 3 all 2.5, column 4 zero but in one row.
fn coded() -> (Dataset, Dataset) {
    let x = Mat::from_fn(12, 5, |i, j| match j {
        0 => ((i * 5) % 12) as f64,
        1 => (i % 2) as f64,
        2 => 0.0,
        3 => 2.5,
        _ => {
            if i == 7 {
                1.0
            } else {
                0.0
            }
        }
    });
    let sparse = gimc_linalg::sparse::dense_to_csr(x.as_ref()).unwrap();
    let make = |f: FeatureMatrix| {
        let mut ds = Dataset::new("c", f, Targets::None, Vec::new()).unwrap();
        ds.nominal_columns = vec![0, 1, 2, 3, 4];
        ds.check().unwrap();
        ds
    };
    (
        make(FeatureMatrix::dense(x).unwrap()),
        make(FeatureMatrix::sparse(sparse).unwrap()),
    )
}

#[test]
fn identifier_and_constant_columns_in_both_storages() {
    let (d, s) = coded();
    assert!(s.features.is_sparse());
    for ds in [&d, &s] {
        assert_eq!(ds.identifier_columns(), vec![0]);
        assert_eq!(ds.constant_columns(), vec![2, 3]);
        // without identifier names, only nominal columns can be identifiers
        let mut numeric = ds.clone();
        numeric.nominal_columns = vec![1, 2];
        assert!(numeric.identifier_columns().is_empty());
        assert_eq!(numeric.constant_columns(), vec![2, 3]);
        // a repeated code (row 11 takes row 0's) makes column 0 an ordinary feature
        let rows: Vec<usize> = (0..11).chain([0]).collect();
        assert!(
            ds.select_rows(&rows)
                .unwrap()
                .identifier_columns()
                .is_empty()
        );
        // rows 0..6, without the single non-zero of column 4, make it constant too
        let first = ds.select_rows(&(0..7).collect::<Vec<_>>()).unwrap();
        assert_eq!(first.constant_columns(), vec![2, 3, 4]);
        // no rows: nothing to judge
        assert!(ds.select_rows(&[]).unwrap().constant_columns().is_empty());
    }
    // a sparse column whose stored values all equal a non-zero value but that has an
    // implicit zero is not constant; one stored everywhere is
    let mut t = gimc_linalg::sprs::TriMat::new((3, 2));
    for i in 0..3 {
        t.add_triplet(i, 1, 4.0);
    }
    t.add_triplet(0, 0, 4.0);
    t.add_triplet(2, 0, 4.0);
    let m = FeatureMatrix::sparse(t.to_csr()).unwrap();
    let ds = Dataset::new("t", m, Targets::None, Vec::new()).unwrap();
    assert_eq!(ds.constant_columns(), vec![1]);
}

#[test]
fn identifier_names() {
    for yes in [
        "id",
        "Id",
        "ID",
        " index ",
        "idx",
        "row_id",
        "RowID",
        "Unnamed: 0",
        "PassengerId",
        "customer_id",
        "sample-id",
        "record id",
        "meta.id",
        "PID",
    ] {
        assert!(is_identifier_name(yes), "{yes}");
    }
    for no in [
        "acid", "Humid", "idle", "identity", "width", "grid", "valid", "indexes",
    ] {
        assert!(!is_identifier_name(no), "{no}");
    }
}

#[test]
fn numeric_columns_named_as_identifiers_of_whole_numbers_are_identifiers() {
    // 12 rows: a row number `Id`, a unique measurement `area`, a unique non-integer
    // `row_id`, a repeated `index`, and `customer_id` with one value missing
    let x = Mat::from_fn(12, 5, |i, j| match j {
        0 => (i + 1) as f64,
        1 => i as f64 * 1.5 + 0.25,
        2 => i as f64 + 0.5,
        3 => (i % 6) as f64,
        _ => (100 + i) as f64,
    });
    let mut sparse = gimc_linalg::sprs::TriMat::new((12, 5));
    for i in 0..12 {
        for j in 0..5 {
            if x[(i, j)] != 0.0 {
                sparse.add_triplet(i, j, x[(i, j)]);
            }
        }
    }
    let names: Vec<String> = ["Id", "area", "row_id", "index", "customer_id"]
        .map(String::from)
        .to_vec();
    for f in [
        FeatureMatrix::dense(x.clone()).unwrap(),
        FeatureMatrix::sparse(sparse.to_csr()).unwrap(),
    ] {
        let mut ds = Dataset::new("n", f, Targets::None, names.clone()).unwrap();
        let sparse = ds.features.is_sparse();
        assert_eq!(ds.identifier_columns(), vec![0, 4], "sparse {sparse}");
        ds.missing = vec![(3, 4)];
        assert_eq!(ds.identifier_columns(), vec![0], "sparse {sparse}");
        // the same values without names are measurements
        ds.feature_names.clear();
        assert!(ds.identifier_columns().is_empty(), "sparse {sparse}");
    }
}

#[test]
fn nominal_columns_are_checked_and_stacked() {
    let (d, _) = coded();
    for bad in [vec![1, 0], vec![2, 2], vec![5]] {
        let mut x = d.clone();
        x.nominal_columns = bad.clone();
        assert!(x.check().is_err(), "{bad:?}");
    }
    let mut other = d.clone();
    other.nominal_columns = vec![3];
    let mut one = d.clone();
    one.nominal_columns = vec![0, 4];
    let st = Dataset::vstack("both", &[&one, &other]).unwrap();
    assert_eq!(st.nominal_columns, vec![0, 3, 4]);
    // a stack of 24 rows repeats every code of column 0
    assert!(st.identifier_columns().is_empty());
}

#[test]
fn binning() {
    let t = Targets::Values(vec![1.0, 8.0, 9.0, 10.0, 11.0, 29.0]);
    let names: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    let Targets::Classes { classes, .. } = t.bin(&[8.5, 10.5], &names).unwrap() else {
        panic!()
    };
    assert_eq!(classes, vec![0, 0, 1, 1, 2, 2]);
    assert!(t.bin(&[10.5, 8.5], &names).is_err());
}

#[test]
fn align() {
    let t = Targets::Classes {
        classes: vec![0, 1],
        names: vec!["x".into(), "z".into()],
    };
    let names: Vec<String> = ["z", "y", "x"].iter().map(|s| s.to_string()).collect();
    let Targets::Classes { classes, .. } = t.align_classes(&names).unwrap() else {
        panic!()
    };
    assert_eq!(classes, vec![2, 0]);
    assert!(t.align_classes(&names[..2]).is_err());
}
