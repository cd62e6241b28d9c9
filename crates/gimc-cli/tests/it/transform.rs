//! `gimc predict` with a model whose file stores a version-5 input transform (kept columns,
//! tf-idf weights, row scale): the new rows go through exactly the training transform, and a
//! LIBSVM file whose rows never use the last raw features still fits the model.

use gimc::{LabelData, LabelModel, MapRegistry, persist};
use gimc_linalg::rng::seeded;
use gimc_linalg::sprs::TriMat;
use gimc_linalg::{FeatureMatrix, Preprocess, RowNorm, TfIdf};

use crate::{gimc, gimc_ok, stderr, stdout, temp_file};

/// 30 rows of counts over 8 raw columns, column 7 (0-based) never used, and their classes.
fn counts() -> (FeatureMatrix, Vec<usize>) {
    let mut t = TriMat::new((30, 8));
    let mut classes = Vec::new();
    for i in 0..30 {
        let c = i % 3;
        for j in 0..7 {
            let v = ((i * 7 + j * 3) % 5) as f64 + if j == 2 * c { 4.0 } else { 0.0 };
            if v > 1.0 {
                t.add_triplet(i, j, v);
            }
        }
        classes.push(c);
    }
    (FeatureMatrix::sparse(t.to_csr()).unwrap(), classes)
}

/// The rows as a LIBSVM file (1-based feature indices, the class as the label).
fn libsvm(x: &FeatureMatrix, classes: &[usize]) -> String {
    let d = x.to_dense();
    let mut s = String::new();
    for (i, c) in classes.iter().enumerate() {
        s.push_str(&c.to_string());
        for j in 0..d.ncols() {
            if d[(i, j)] != 0.0 {
                s.push_str(&format!(" {}:{}", j + 1, d[(i, j)]));
            }
        }
        s.push('\n');
    }
    s
}

#[test]
fn predict_applies_the_stored_columns_tfidf_and_row_scale() {
    let (raw, classes) = counts();
    let columns = vec![0, 2, 4, 5, 7];
    let kept = raw.select_columns(&columns).unwrap();
    let tfidf = TfIdf::fit(&kept).unwrap();
    let pre = Preprocess {
        columns: Some(columns),
        input_dim: Some(8),
        tfidf: Some(tfidf),
        row_norm: RowNorm::L2,
        row_scale: 2.0,
        ..Preprocess::default()
    };
    let z = pre.apply(&raw).unwrap();
    let data = LabelData::multi_class(z.clone(), &classes, 3).unwrap();
    let map = MapRegistry::builtin()
        .family("lff")
        .unwrap()
        .build(&z, 6, 0.5, &mut seeded(3))
        .unwrap();
    let model = LabelModel::fit_w(vec![map], &data, 0.1).unwrap();
    let model_path = temp_file("v5.safetensors", b"");
    persist::save_label_model_with_preprocess(&model, &pre, &model_path).unwrap();
    let want = model.top_k_scored(&z, 3).unwrap();

    // the file never names feature 8, so it reads 7 columns wide: widened to the model's 8
    let text = libsvm(&raw, &classes);
    assert!(!text.contains(" 8:"));
    let data_path = temp_file("v5-rows.svm", text.as_bytes());
    let o = gimc_ok(&[
        "--json",
        "-q",
        "predict",
        data_path.to_str().unwrap(),
        "-m",
        model_path.to_str().unwrap(),
        "--scores",
        "--top-k",
        "3",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 30);
    for (row, w) in rows.iter().zip(&want) {
        let got: Vec<(usize, f64)> = row
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["label"].as_u64().unwrap() as usize,
                    e["score"].as_f64().unwrap(),
                )
            })
            .collect();
        // the same labels and scores as the in-process model on the transformed rows (up to
        // the last bit of serde_json's float parsing)
        assert_eq!(got.len(), w.len());
        for (&(gl, gs), &(wl, ws)) in got.iter().zip(w) {
            assert_eq!(gl, wl);
            assert!((gs - ws).abs() <= 1e-14 * ws.abs().max(1.0), "{gs} vs {ws}");
        }
    }
    // and the transform matters: the model on the raw kept columns ranks differently
    let untransformed = model.top_k_scored(&kept, 3).unwrap();
    assert_ne!(untransformed, want);

    // a file wider than the model's raw input is refused with both widths
    let wide = temp_file("v5-wide.svm", format!("{text}0 9:1\n").as_bytes());
    let o = gimc(&[
        "predict",
        wide.to_str().unwrap(),
        "-m",
        model_path.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("9 feature columns") && err.contains("trained on 8"),
        "{err}"
    );
}
