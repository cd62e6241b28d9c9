use super::*;
use crate::rng::{gaussian_mat, seeded};
use crate::sparse::dense_to_csr;

fn pair() -> (FeatureMatrix, FeatureMatrix) {
    let mut rng = seeded(11);
    let mut d = gaussian_mat(&mut rng, 9, 6, 1.0);
    for i in 0..9 {
        for j in 0..6 {
            if (i * 7 + j * 3) % 4 != 0 {
                d[(i, j)] = 0.0;
            }
        }
    }
    let s = dense_to_csr(d.as_ref()).unwrap();
    (
        FeatureMatrix::dense(d).unwrap(),
        FeatureMatrix::sparse(s).unwrap(),
    )
}

#[test]
fn l2_rows_have_unit_norm_in_both_storages() {
    let (d, s) = pair();
    let (nd, ns) = (d.normalize_rows(RowNorm::L2), s.normalize_rows(RowNorm::L2));
    assert!(ns.is_sparse());
    let (dd, sd) = (nd.to_dense(), ns.to_dense());
    let raw = d.to_dense();
    for i in 0..raw.nrows() {
        let norm = |m: &Mat<f64>| (0..m.ncols()).map(|j| m[(i, j)].powi(2)).sum::<f64>();
        let n0 = norm(&raw);
        // a zero row stays zero, every other row has unit norm and its direction
        let want = if n0 > 0.0 { 1.0 } else { 0.0 };
        assert!((norm(&dd) - want).abs() < 1e-12);
        assert!((norm(&sd) - want).abs() < 1e-12);
        for j in 0..raw.ncols() {
            assert!((dd[(i, j)] * n0.sqrt() - raw[(i, j)]).abs() < 1e-12);
            assert_eq!(dd[(i, j)], sd[(i, j)]);
        }
    }
    assert_eq!(d.normalize_rows(RowNorm::None), d);
}

#[test]
fn gamma_scale_is_one_over_d_times_the_entry_variance_in_both_storages() {
    let (d, s) = pair();
    let x = d.to_dense();
    let (n, p) = x.shape();
    let vals: Vec<f64> = (0..p).flat_map(|j| x.col_as_slice(j).to_vec()).collect();
    let mean = vals.iter().sum::<f64>() / (n * p) as f64;
    let var = vals.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n * p) as f64;
    let want = 1.0 / (p as f64 * var);
    assert!((d.gamma_scale() - want).abs() < 1e-12 * want);
    assert!((s.gamma_scale() - want).abs() < 1e-12 * want);
    // scaling the data by c scales γ by 1/c²; constant data falls back to 1
    let c = FeatureMatrix::dense(x.as_ref() * faer::Scale(3.0)).unwrap();
    assert!((c.gamma_scale() - want / 9.0).abs() < 1e-12 * want);
    let flat = FeatureMatrix::dense(Mat::from_fn(4, 3, |_, _| 2.5)).unwrap();
    assert_eq!(flat.gamma_scale(), 1.0);
}

#[test]
fn preprocess_standardises_then_normalises() {
    let (d, _) = pair();
    let st = Standardizer::fit(&d, true).unwrap();
    let pre = Preprocess {
        standardizer: Some(st.clone()),
        row_norm: RowNorm::L2,
        ..Preprocess::default()
    };
    assert!(!pre.is_identity() && Preprocess::default().is_identity());
    let want = st.transform(&d).unwrap().normalize_rows(RowNorm::L2);
    assert_eq!(pre.apply(&d).unwrap(), want);
    assert!(
        pre.apply(&FeatureMatrix::dense(Mat::zeros(2, 5)).unwrap())
            .is_err()
    );
    for n in [RowNorm::None, RowNorm::L2] {
        assert_eq!(RowNorm::from_name(n.name()), Some(n));
    }
    assert_eq!(RowNorm::from_name("l1"), None);
}

/// A 4 × 4 count matrix: column document frequencies 2, 1, 3, 0.
fn counts() -> Mat<f64> {
    let rows = [
        [1.0, 0.0, 2.0, 0.0],
        [0.0, 0.0, 3.0, 0.0],
        [4.0, 5.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
    ];
    Mat::from_fn(4, 4, |i, j| rows[i][j])
}

#[test]
fn tfidf_matches_scikit_learn() {
    let x = counts();
    let dense = FeatureMatrix::dense(x.clone()).unwrap();
    let sparse = FeatureMatrix::sparse(dense_to_csr(x.as_ref()).unwrap()).unwrap();
    // idf_j = ln((1 + n) / (1 + df_j)) + 1 with n = 4 and df = (2, 1, 3, 0), by hand ...
    let by_hand: Vec<f64> = [2.0, 1.0, 3.0, 0.0]
        .iter()
        .map(|df: &f64| (5.0 / (1.0 + df)).ln() + 1.0)
        .collect();
    // ... and as scikit-learn 1.9.1 computes it: TfidfTransformer(norm=None,
    // smooth_idf=True, sublinear_tf=False).fit(x).idf_
    let sklearn = [
        1.5108256237659907,
        1.916290731874155,
        1.2231435513142097,
        2.6094379124341005,
    ];
    for m in [&dense, &sparse] {
        let tf = TfIdf::fit(m).unwrap();
        assert_eq!(tf.idf.len(), 4);
        for j in 0..4 {
            assert!((tf.idf[j] - by_hand[j]).abs() < 1e-15, "{j}");
            assert!((tf.idf[j] - sklearn[j]).abs() < 1e-15, "{j}");
        }
    }
    assert_eq!(TfIdf::fit(&dense), TfIdf::fit(&sparse));
    // the transform scales the columns; sparse stays sparse with the same pattern
    let tf = TfIdf::fit(&dense).unwrap();
    let (td, ts) = (
        tf.transform(&dense).unwrap(),
        tf.transform(&sparse).unwrap(),
    );
    assert!(!td.is_sparse() && ts.is_sparse());
    assert_eq!(ts.nnz(), sparse.nnz());
    // scikit-learn's transform(x) row 2: [4 · idf_0, 5 · idf_1, 0, 0]
    let (a, b) = (td.to_dense(), ts.to_dense());
    assert!((a[(2, 0)] - 6.043302495063963).abs() < 1e-14);
    assert!((a[(2, 1)] - 9.581453659370776).abs() < 1e-14);
    assert!((a[(1, 2)] - 3.669430653942629).abs() < 1e-14);
    for i in 0..4 {
        for j in 0..4 {
            assert_eq!(a[(i, j)], x[(i, j)] * tf.idf[j]);
            assert_eq!(a[(i, j)], b[(i, j)]);
        }
    }
    // errors: a column-count mismatch, negative or non-finite training entries
    assert!(matches!(
        tf.transform(&FeatureMatrix::dense(Mat::zeros(2, 3)).unwrap()),
        Err(LinalgError::DimensionMismatch { .. })
    ));
    let mut neg = x.clone();
    neg[(3, 1)] = -0.5;
    let err = TfIdf::fit(&FeatureMatrix::dense(neg.clone()).unwrap()).unwrap_err();
    assert!(err.to_string().contains("(3, 1)"), "{err}");
    let neg_sparse = FeatureMatrix::sparse(dense_to_csr(neg.as_ref()).unwrap()).unwrap();
    assert!(TfIdf::fit(&neg_sparse).is_err());
    let mut nan = x.clone();
    nan[(0, 0)] = f64::NAN;
    // the constructor refuses NaN, the raw variant does not: fit checks again
    assert!(TfIdf::fit(&FeatureMatrix::Dense(nan)).is_err());
    // no rows: every weight is ln(1) + 1 = 1
    let none = TfIdf::fit(&FeatureMatrix::dense(Mat::zeros(0, 3)).unwrap()).unwrap();
    assert_eq!(none.idf, vec![1.0; 3]);
}

#[test]
fn nonnegativity_and_column_counts() {
    let (d, s) = pair();
    // the pair has Gaussian (signed) entries
    assert!(!d.is_nonnegative() && !s.is_nonnegative());
    let c = FeatureMatrix::dense(counts()).unwrap();
    assert!(c.is_nonnegative());
    assert_eq!(c.column_nonzero_counts(), vec![2, 1, 3, 0]);
    assert_eq!(d.column_nonzero_counts(), s.column_nonzero_counts());
    let mut inf = counts();
    inf[(1, 3)] = f64::INFINITY;
    assert!(!FeatureMatrix::Dense(inf).is_nonnegative());
}

#[test]
fn select_columns_in_both_storages() {
    let (d, s) = pair();
    let x = d.to_dense();
    for cols in [
        vec![4, 1, 1, 5],
        vec![0, 2, 3],
        vec![],
        vec![5, 4, 3, 2, 1, 0],
    ] {
        let (sd, ss) = (
            d.select_columns(&cols).unwrap(),
            s.select_columns(&cols).unwrap(),
        );
        assert!(!sd.is_sparse() && ss.is_sparse());
        assert_eq!((sd.nrows(), sd.ncols()), (9, cols.len()));
        let (a, b) = (sd.to_dense(), ss.to_dense());
        for i in 0..9 {
            for (k, &c) in cols.iter().enumerate() {
                assert_eq!(a[(i, k)], x[(i, c)]);
                assert_eq!(b[(i, k)], x[(i, c)]);
            }
        }
        // sparse keeps only the stored entries of the kept columns
        let kept: usize = cols.iter().map(|&c| s.column_nonzero_counts()[c]).sum();
        assert_eq!(ss.nnz(), kept);
    }
    for m in [&d, &s] {
        let err = m.select_columns(&[0, 6]).unwrap_err();
        assert!(err.to_string().contains("column 6"), "{err}");
    }
}

#[test]
fn widen_appends_zero_columns_in_both_storages() {
    let (d, s) = pair();
    let x = d.to_dense();
    for m in [&d, &s] {
        let w = m.widen(9).unwrap();
        assert_eq!(w.is_sparse(), m.is_sparse());
        assert_eq!(
            (w.nrows(), w.ncols(), w.nnz() == m.nnz()),
            (9, 9, m.is_sparse())
        );
        let wd = w.to_dense();
        for i in 0..9 {
            for j in 0..9 {
                assert_eq!(wd[(i, j)], if j < 6 { x[(i, j)] } else { 0.0 });
            }
        }
        assert_eq!(m.widen(6).unwrap(), *m);
        assert!(matches!(
            m.widen(5),
            Err(LinalgError::DimensionMismatch { .. })
        ));
    }
}

#[test]
fn preprocess_applies_its_steps_in_order() {
    // raw input of 6 columns; the model keeps 4 of them
    let raw = Mat::from_fn(5, 6, |i, j| ((i * 3 + j * 5) % 7) as f64);
    let dense = FeatureMatrix::dense(raw.clone()).unwrap();
    let sparse = FeatureMatrix::sparse(dense_to_csr(raw.as_ref()).unwrap()).unwrap();
    let cols = vec![0, 2, 3, 5];
    let kept = dense.select_columns(&cols).unwrap();
    let tfidf = TfIdf::fit(&kept).unwrap();
    let weighted = tfidf.transform(&kept).unwrap();
    let st = Standardizer::fit(&weighted, false).unwrap();
    let pre = Preprocess {
        columns: Some(cols.clone()),
        input_dim: Some(6),
        tfidf: Some(tfidf.clone()),
        standardizer: Some(st.clone()),
        row_norm: RowNorm::L2,
        row_scale: 2.5,
    };
    assert!(!pre.is_identity());
    let want = st
        .transform(&weighted)
        .unwrap()
        .normalize_rows(RowNorm::L2)
        .to_dense();
    let (got_d, got_s) = (pre.apply(&dense).unwrap(), pre.apply(&sparse).unwrap());
    // sparse stays sparse (the standardisation only scales) and agrees with dense
    assert!(!got_d.is_sparse() && got_s.is_sparse());
    assert_eq!((got_d.nrows(), got_d.ncols()), (5, 4));
    let (a, b) = (got_d.to_dense(), got_s.to_dense());
    for i in 0..5 {
        let mut norm = 0.0;
        for j in 0..4 {
            assert!((a[(i, j)] - 2.5 * want[(i, j)]).abs() < 1e-12);
            assert!((a[(i, j)] - b[(i, j)]).abs() < 1e-12);
            norm += a[(i, j)] * a[(i, j)];
        }
        // the row scale comes after the normalisation: every non-zero row has norm 2.5
        assert!((norm.sqrt() - 2.5).abs() < 1e-12, "row {i}: {norm}");
    }
    // a centring standardisation densifies sparse rows, with the dense result; it comes
    // after the tf-idf weights (weighting after centring gives other rows)
    let st_c = Standardizer::fit(&weighted, true).unwrap();
    let centred = Preprocess {
        standardizer: Some(st_c.clone()),
        ..pre.clone()
    };
    let (cd, cs) = (
        centred.apply(&dense).unwrap(),
        centred.apply(&sparse).unwrap(),
    );
    assert!(!cs.is_sparse());
    assert!((cd.to_dense() - cs.to_dense()).norm_max() < 1e-12);
    let in_order = st_c
        .transform(&weighted)
        .unwrap()
        .normalize_rows(RowNorm::L2)
        .to_dense();
    assert!((&in_order * faer::Scale(2.5) - cd.to_dense()).norm_max() < 1e-12);
    let swapped = tfidf
        .transform(&st_c.transform(&kept).unwrap())
        .unwrap()
        .normalize_rows(RowNorm::L2)
        .to_dense();
    assert!((&swapped * faer::Scale(2.5) - cd.to_dense()).norm_max() > 1e-3);
    // only some steps: the columns alone give the selection
    let only_cols = Preprocess {
        columns: Some(cols.clone()),
        input_dim: Some(6),
        ..Preprocess::default()
    };
    assert!(!only_cols.is_identity());
    assert_eq!(
        only_cols.apply(&sparse).unwrap(),
        sparse.select_columns(&cols).unwrap()
    );
    let identity = Preprocess {
        input_dim: Some(6),
        ..Preprocess::default()
    };
    assert!(identity.is_identity());
    assert_eq!(identity.apply(&dense).unwrap(), dense);
}

#[test]
fn preprocess_errors_name_the_widths() {
    let raw = FeatureMatrix::dense(Mat::from_fn(3, 6, |i, j| (i + j) as f64)).unwrap();
    let pre = Preprocess {
        columns: Some(vec![1, 4]),
        input_dim: Some(6),
        ..Preprocess::default()
    };
    let narrow = raw.select_columns(&[0, 1, 2, 3, 4]).unwrap();
    let err = pre.apply(&narrow).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("6 input columns") && msg.contains("5 columns"),
        "{msg}"
    );
    // without input_dim the kept columns are still checked against the width
    let unchecked = Preprocess {
        columns: Some(vec![1, 5]),
        ..Preprocess::default()
    };
    assert!(unchecked.apply(&narrow).is_err());
    assert!(unchecked.apply(&raw).is_ok());
    // a tf-idf of another width
    let tf = Preprocess {
        tfidf: Some(TfIdf { idf: vec![1.0; 3] }),
        ..pre.clone()
    };
    assert!(matches!(
        tf.apply(&raw),
        Err(LinalgError::DimensionMismatch { .. })
    ));
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let p = Preprocess {
            row_scale: bad,
            ..pre.clone()
        };
        assert!(
            matches!(p.apply(&raw), Err(LinalgError::InvalidParameter { .. })),
            "{bad}"
        );
    }
}

#[test]
fn dense_and_sparse_agree() {
    let (d, s) = pair();
    let mut rng = seeded(12);
    let u = gaussian_mat(&mut rng, 6, 4, 1.0);
    let g = gaussian_mat(&mut rng, 9, 3, 1.0);
    let close = |a: &Mat<f64>, b: &Mat<f64>| (a - b).norm_l2() < 1e-12;
    assert!(close(
        &d.mul_dense(u.as_ref()).unwrap(),
        &s.mul_dense(u.as_ref()).unwrap()
    ));
    assert!(close(
        &d.tr_mul_dense(g.as_ref()).unwrap(),
        &s.tr_mul_dense(g.as_ref()).unwrap()
    ));
    assert!(close(&d.gram(), &s.gram()));
    assert!(close(&d.outer_gram(), &s.outer_gram()));
    assert_eq!(d.to_dense(), s.to_dense());
    for (a, b) in d.row_sq_norms().iter().zip(s.row_sq_norms()) {
        assert!((a - b).abs() < 1e-12);
    }
    for (a, b) in d.column_stds().iter().zip(s.column_stds()) {
        assert!((a - b).abs() < 1e-12);
    }
    assert!((d.frob_sq() - s.frob_sq()).abs() < 1e-12);
    let rows = [3, 0, 3, 8];
    assert_eq!(
        d.select_rows(&rows).unwrap().to_dense(),
        s.select_rows(&rows).unwrap().to_dense()
    );
    assert!(matches!(
        d.select_rows(&[9]),
        Err(LinalgError::IndexOutOfBounds { row: 9, .. })
    ));
    assert!(s.select_rows(&[9]).is_err());
    assert!(d.mul_dense(g.as_ref()).is_err());
    assert!(s.tr_mul_dense(u.as_ref()).is_err());
}

#[test]
fn standardize_dense_and_sparse() {
    let (d, s) = pair();
    let (dz, st) = d.standardize().unwrap();
    assert!(st.center);
    for m in dz.column_means() {
        assert!(m.abs() < 1e-12);
    }
    for sd in dz.column_stds() {
        assert!((sd - 1.0).abs() < 1e-12 || sd == 0.0);
    }
    let (sz, sst) = s.standardize().unwrap();
    assert!(sz.is_sparse() && !sst.center);
    assert_eq!(sz.nnz(), s.nnz());
    for sd in sz.column_stds() {
        assert!((sd - 1.0).abs() < 1e-12);
    }
    assert!(matches!(
        Standardizer::fit(&s, true),
        Err(LinalgError::InvalidParameter { .. })
    ));
    // the dense scale-only transform equals the sparse one
    let dst = Standardizer::fit(&d, false).unwrap();
    assert!((dst.transform(&d).unwrap().to_dense() - sz.to_dense()).norm_l2() < 1e-12);
    assert!(st.transform(&s).is_err());
}
