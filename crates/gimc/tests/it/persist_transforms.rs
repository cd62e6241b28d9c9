//! Model files with a stored input transform: standardisation, row normalisation, kept
//! columns, tf-idf and row scale round-trip and predict like the in-process model, each is
//! written with the oldest version that holds it, version-1 files still load, and inconsistent
//! transforms are refused on save and on load.

use std::collections::HashMap;

use gimc::persist::{
    label_model_from_bytes, label_model_to_bytes, label_model_to_bytes_with_preprocess,
    label_model_with_preprocess_from_bytes, load_label_model, load_label_model_with_preprocess,
    read_model_meta, save_label_model_with_preprocess,
};
use gimc::{GimcError, LabelData, LabelModel, LabelParams};
use gimc_featmap::LearnableMap;
use gimc_linalg::{FeatureMatrix, Preprocess, RowNorm, Standardizer};
use safetensors::tensor::{Dtype, TensorView};

use crate::common;
use crate::persist::{
    MetaEdit, TensorEdit, assert_same, build, fitted_label_model, reg, temp_path, with_meta,
};

/// Features on wildly different column scales, their standardisation, and data with the
/// standardised features and the same classes.
fn badly_scaled() -> (FeatureMatrix, Standardizer, LabelData) {
    let base = common::multiclass(60, 3, 3, 12);
    let raw = base.features().to_dense();
    let raw = FeatureMatrix::dense(gimc_linalg::faer::Mat::from_fn(60, 3, |i, j| {
        [1000.0, 0.01, 5.0][j] * raw[(i, j)] + [50.0, -3.0, 0.0][j]
    }))
    .unwrap();
    let st = Standardizer::fit(&raw, true).unwrap();
    let z = st.transform(&raw).unwrap();
    let classes = base.classes().unwrap().to_vec();
    let data = LabelData::multi_class(z, &classes, 3).unwrap();
    (raw, st, data)
}

#[test]
fn a_stored_standardisation_round_trips_and_predicts_like_the_in_process_model() {
    let (raw, st, data) = badly_scaled();
    let map = build("lff", data.features(), 8, 0.5, 4);
    let model = common::fit_checked(&data, map, &LabelParams::default().with_max_iter(2), None)
        .unwrap()
        .model;
    let path = temp_path("standardized.safetensors");
    let pre = Preprocess {
        standardizer: Some(st.clone()),
        row_norm: RowNorm::None,
        ..Preprocess::default()
    };
    save_label_model_with_preprocess(&model, &pre, &path).unwrap();
    let (back, back_pre) = load_label_model_with_preprocess(&path, &reg()).unwrap();
    assert_same(&back, &model);
    assert_eq!(back_pre.row_norm, RowNorm::None);
    let back_st = back_pre
        .standardizer
        .expect("the standardisation is stored");
    assert_eq!(back_st, st);
    // prediction on raw rows through the loaded transform = the in-process prediction on the
    // standardised rows, bit for bit
    let z = back_st.transform(&raw).unwrap();
    assert_eq!(
        back.scores(&z).unwrap(),
        model.scores(data.features()).unwrap()
    );
    assert_eq!(
        back.top_k(&z, 1).unwrap(),
        model.top_k(data.features(), 1).unwrap()
    );
    // and it matters: the raw rows score differently
    assert_ne!(
        back.scores(&raw).unwrap(),
        model.scores(data.features()).unwrap()
    );
    let meta = read_model_meta(&path).unwrap();
    assert_eq!(meta.version, 2);
    assert_eq!(meta.tensors["preprocess.mean"], [1, 3]);
    assert_eq!(meta.tensors["preprocess.scale"], [1, 3]);
    let json = serde_json::to_value(&meta).unwrap();
    assert_eq!(
        json["preprocess"],
        serde_json::json!({"type": "standardize", "input_dim": 3, "center": true})
    );
    // the plain loader refuses it rather than mis-predicting raw rows
    let err = load_label_model(&path, &reg()).unwrap_err();
    assert!(
        err.to_string().contains("load_label_model_with_preprocess"),
        "{err}"
    );
    // a scale-only (sparse) standardisation round trips too
    let scale_only = Standardizer::fit(&raw, false).unwrap();
    let only = |st: &Standardizer| Preprocess {
        standardizer: Some(st.clone()),
        row_norm: RowNorm::None,
        ..Preprocess::default()
    };
    let bytes = label_model_to_bytes_with_preprocess(&model, &only(&scale_only)).unwrap();
    let (_, s2) = label_model_with_preprocess_from_bytes(&bytes, &reg()).unwrap();
    assert_eq!(s2.standardizer, Some(scale_only));
    // saving a standardisation of the wrong width or with bad values is refused
    let mut wrong = st.clone();
    wrong.mean.push(0.0);
    wrong.scale.push(1.0);
    assert!(label_model_to_bytes_with_preprocess(&model, &only(&wrong)).is_err());
    let mut nan = st.clone();
    nan.scale[1] = f64::NAN;
    assert!(label_model_to_bytes_with_preprocess(&model, &only(&nan)).is_err());
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_stored_row_normalisation_round_trips_as_version_4_and_predicts_like_the_in_process_model() {
    let (raw, st, standardized) = badly_scaled();
    let pre = Preprocess {
        standardizer: Some(st),
        row_norm: RowNorm::L2,
        ..Preprocess::default()
    };
    let z = pre.apply(&raw).unwrap();
    let classes = standardized.classes().unwrap().to_vec();
    let data = LabelData::multi_class(z, &classes, 3).unwrap();
    let map = build("lff", data.features(), 8, 0.5, 4);
    let model = common::fit_checked(&data, map, &LabelParams::default(), None)
        .unwrap()
        .model;
    let bytes = label_model_to_bytes_with_preprocess(&model, &pre).unwrap();
    let (back, back_pre) = label_model_with_preprocess_from_bytes(&bytes, &reg()).unwrap();
    assert_eq!(back_pre, pre);
    // raw rows through the loaded transform score exactly as the in-process model's rows
    assert_eq!(
        back.scores(&back_pre.apply(&raw).unwrap()).unwrap(),
        model.scores(data.features()).unwrap()
    );
    let (_, header) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    let md = header.metadata().as_ref().unwrap();
    assert_eq!(md["format_version"], "4");
    let json: serde_json::Value = serde_json::from_str(&md["gimc"]).unwrap();
    assert_eq!(json["normalize"], "l2");
    // the plain loader refuses it, and a normalisation alone is enough for that
    assert!(label_model_from_bytes(&bytes, &reg()).is_err());
    let norm_only = Preprocess {
        standardizer: None,
        row_norm: RowNorm::L2,
        ..Preprocess::default()
    };
    let bytes = label_model_to_bytes_with_preprocess(&model, &norm_only).unwrap();
    assert!(label_model_from_bytes(&bytes, &reg()).is_err());
    // an unknown normalisation name is a format error, not a silent identity
    let tampered = with_meta(&bytes, |j| j["normalize"] = "l7".into());
    let err = label_model_with_preprocess_from_bytes(&tampered, &reg()).unwrap_err();
    assert!(err.to_string().contains("row normalisation"), "{err}");
}

#[test]
fn version_1_files_without_preprocessing_still_load() {
    let (model, data) = fitted_label_model();
    let bytes = label_model_to_bytes(&model).unwrap();
    // a model without version-2 features is written exactly as version 1 was: format_version
    // "1" and no `preprocess` key
    let (_, header) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    let md = header.metadata().as_ref().unwrap();
    assert_eq!(md["format_version"], "1");
    let json: serde_json::Value = serde_json::from_str(&md["gimc"]).unwrap();
    assert_eq!(json["version"], 1);
    assert!(json.get("preprocess").is_none());
    assert!(!md["gimc"].contains("preprocess"));
    // both loaders read it; there is no standardisation to apply
    let (back, pre) = label_model_with_preprocess_from_bytes(&bytes, &reg()).unwrap();
    assert_same(&back, &model);
    assert!(pre.is_identity());
    assert_eq!(
        back.scores(data.features()).unwrap(),
        model.scores(data.features()).unwrap()
    );
    assert_same(&label_model_from_bytes(&bytes, &reg()).unwrap(), &model);

    // a file assembled by hand the way the version-1 writer laid it out (independent of this
    // crate's writer): metadata JSON without any version-2 key
    let u = model.maps()[0].params().to_owned();
    let w = model.w().to_owned();
    let row_major = |m: &gimc_linalg::faer::Mat<f64>| -> Vec<u8> {
        (0..m.nrows())
            .flat_map(|i| (0..m.ncols()).map(move |j| (i, j)))
            .flat_map(|(i, j)| m[(i, j)].to_le_bytes())
            .collect()
    };
    let (ub, wb) = (row_major(&u), row_major(&w));
    let json = format!(
        concat!(
            r#"{{"format":"gimc-model","version":1,"kind":"labels","method":"gimc-lff","#,
            r#""task":"multi-label","lambda":{},"maps":[{{"kind":"random-fourier","#,
            r#""prefix":"map.0","input_dim":3,"m":5,"output_dim":10}}],"#,
            r#""tensors":{{"W":[10,4],"map.0.directions":[3,5]}},"label_names":[],"#,
            r#""hyper_parameters":{{}},"created_by":"gimc 0.1.0"}}"#
        ),
        model.lambda()
    );
    let md: HashMap<String, String> = [
        ("format".to_string(), "gimc-model".to_string()),
        ("format_version".to_string(), "1".to_string()),
        ("gimc".to_string(), json),
    ]
    .into();
    let old = safetensors::serialize(
        [
            ("W", TensorView::new(Dtype::F64, vec![10, 4], &wb).unwrap()),
            (
                "map.0.directions",
                TensorView::new(Dtype::F64, vec![3, 5], &ub).unwrap(),
            ),
        ],
        Some(md),
    )
    .unwrap();
    let (old_model, old_pre) = label_model_with_preprocess_from_bytes(&old, &reg()).unwrap();
    assert!(old_pre.is_identity());
    assert_eq!(
        old_model.scores(data.features()).unwrap(),
        model.scores(data.features()).unwrap()
    );
}

#[test]
fn inconsistent_standardisations_are_rejected_on_load() {
    let (_, st, data) = badly_scaled();
    let model =
        LabelModel::fit_w(vec![build("lff", data.features(), 4, 0.5, 1)], &data, 1.0).unwrap();
    let pre = Preprocess {
        standardizer: Some(st),
        row_norm: RowNorm::None,
        ..Preprocess::default()
    };
    let good = label_model_to_bytes_with_preprocess(&model, &pre).unwrap();
    assert!(label_model_with_preprocess_from_bytes(&good, &reg()).is_ok());
    let is_bad = |b: &[u8]| {
        matches!(
            label_model_with_preprocess_from_bytes(b, &reg()),
            Err(GimcError::ModelFormat { .. })
        )
    };
    let edits: Vec<(&str, MetaEdit)> = vec![
        (
            "input_dim",
            Box::new(|j| j["preprocess"]["input_dim"] = 4.into()),
        ),
        ("as version 1", Box::new(|j| j["version"] = 1.into())),
        (
            "type",
            Box::new(|j| j["preprocess"]["type"] = "whiten".into()),
        ),
        // a centring flag dropped: the stored non-zero mean is then inconsistent
        (
            "center",
            Box::new(|j| j["preprocess"]["center"] = false.into()),
        ),
        (
            "tensor shape",
            Box::new(|j| j["tensors"]["preprocess.scale"] = serde_json::json!([3, 1])),
        ),
    ];
    for (name, edit) in edits {
        assert!(is_bad(&with_meta(&good, edit)), "edit {name} was accepted");
    }
    // a missing tensor, a zero scale and a NaN mean in the data section
    let rewrite = |f: &TensorEdit| rewrite_tensors(&good, f);
    let missing = rewrite(&|n, v| (n != "preprocess.mean").then_some(v));
    assert!(is_bad(&missing), "missing mean accepted");
    let zero_scale = rewrite(&|n, mut v| {
        if n == "preprocess.scale" {
            v[2] = 0.0;
        }
        Some(v)
    });
    let err = label_model_with_preprocess_from_bytes(&zero_scale, &reg()).unwrap_err();
    assert!(err.to_string().contains("scale 2"), "{err}");
    let nan_mean = rewrite(&|n, mut v| {
        if n == "preprocess.mean" {
            v[0] = f64::NAN;
        }
        Some(v)
    });
    let err = label_model_with_preprocess_from_bytes(&nan_mean, &reg()).unwrap_err();
    assert!(err.to_string().contains("non-finite"), "{err}");
    // an unedited rewrite still loads (the helper itself is sound)
    assert!(label_model_with_preprocess_from_bytes(&rewrite(&|_, v| Some(v)), &reg()).is_ok());
}

/// Sparse non-negative counts over 6 raw columns (|x| of sparse Gaussian features), the
/// version-5 transform of a model that keeps 4 of them (tf-idf weights, a scale-only
/// standardisation, unit rows scaled by 3), and the label data of the transformed rows.
fn selected_tfidf() -> (FeatureMatrix, Preprocess, LabelData) {
    let base = common::multilabel_sparse(50, 6, 4, 41);
    let FeatureMatrix::Sparse(x) = base.features() else {
        panic!("sparse features expected")
    };
    let mut counts = x.to_csr();
    for v in counts.data_mut() {
        *v = (3.0 * v.abs()).round();
    }
    let raw = FeatureMatrix::sparse(counts).unwrap();
    let columns = vec![0, 2, 3, 5];
    let kept = raw.select_columns(&columns).unwrap();
    let tfidf = gimc_linalg::TfIdf::fit(&kept).unwrap();
    let st = Standardizer::fit(&tfidf.transform(&kept).unwrap(), false).unwrap();
    let pre = Preprocess {
        columns: Some(columns),
        input_dim: Some(6),
        tfidf: Some(tfidf),
        standardizer: Some(st),
        row_norm: RowNorm::L2,
        row_scale: 3.0,
    };
    let data = LabelData::multi_label(pre.apply(&raw).unwrap(), base.labels().clone()).unwrap();
    (raw, pre, data)
}

#[test]
fn kept_columns_tfidf_and_row_scale_round_trip_as_version_5() {
    let (raw, pre, data) = selected_tfidf();
    assert!(data.features().is_sparse());
    let model =
        LabelModel::fit_w(vec![build("lff", data.features(), 6, 0.5, 9)], &data, 0.5).unwrap();
    assert_eq!(model.input_dim(), 4);
    let path = temp_path("selected-tfidf.safetensors");
    save_label_model_with_preprocess(&model, &pre, &path).unwrap();
    let (back, back_pre) = load_label_model_with_preprocess(&path, &reg()).unwrap();
    assert_same(&back, &model);
    assert_eq!(back_pre, pre);
    // raw 6-column rows through the loaded transform score exactly as the in-process rows
    let z = back_pre.apply(&raw).unwrap();
    assert!(z.is_sparse());
    assert_eq!(
        back.scores(&z).unwrap(),
        model.scores(data.features()).unwrap()
    );
    // raw rows of the wrong width are refused by the transform, naming both widths
    let err = back_pre
        .apply(&raw.select_columns(&[0, 1, 2, 3, 4]).unwrap())
        .unwrap_err();
    assert!(err.to_string().contains("6 input columns"), "{err}");
    let meta = read_model_meta(&path).unwrap();
    assert_eq!(meta.version, 5);
    assert_eq!((meta.input_dim, meta.row_scale), (Some(6), Some(3.0)));
    assert_eq!(meta.tensors["preprocess.columns"], [1, 4]);
    assert_eq!(meta.tensors["preprocess.idf"], [1, 4]);
    // the kept columns are plain F64 indices in the file
    let bytes = std::fs::read(&path).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let cols: Vec<f64> = st
        .tensor("preprocess.columns")
        .unwrap()
        .data()
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(cols, vec![0.0, 2.0, 3.0, 5.0]);
    // the plain loader refuses it, and each new part alone is enough for that
    assert!(load_label_model(&path, &reg()).is_err());
    for part in [
        Preprocess {
            columns: Some(vec![0, 1, 2, 3]),
            input_dim: Some(4),
            ..Preprocess::default()
        },
        Preprocess {
            tfidf: pre.tfidf.clone(),
            ..Preprocess::default()
        },
        Preprocess {
            row_scale: 2.0,
            ..Preprocess::default()
        },
    ] {
        let b = label_model_to_bytes_with_preprocess(&model, &part).unwrap();
        assert!(label_model_from_bytes(&b, &reg()).is_err());
        let (_, p) = label_model_with_preprocess_from_bytes(&b, &reg()).unwrap();
        assert_eq!(p, part);
        assert_eq!(read_version(&b), 5);
    }
    // the raw width alone (no kept columns) is recorded too, and must be the model's
    let width_only = Preprocess {
        input_dim: Some(4),
        ..Preprocess::default()
    };
    let b = label_model_to_bytes_with_preprocess(&model, &width_only).unwrap();
    assert_eq!(read_version(&b), 5);
    let (_, p) = label_model_with_preprocess_from_bytes(&b, &reg()).unwrap();
    assert_eq!(p, width_only);
    let _ = std::fs::remove_file(&path);
}

/// The `format_version` of a model file's bytes.
fn read_version(bytes: &[u8]) -> u32 {
    let (_, header) = safetensors::SafeTensors::read_metadata(bytes).unwrap();
    header.metadata().as_ref().unwrap()["format_version"]
        .parse()
        .unwrap()
}

#[test]
fn transforms_without_version_5_parts_are_written_as_before() {
    let (raw, st, data) = badly_scaled();
    let model =
        LabelModel::fit_w(vec![build("lff", data.features(), 4, 0.5, 1)], &data, 1.0).unwrap();
    let standardized = vec![
        "W",
        "map.0.directions",
        "preprocess.mean",
        "preprocess.scale",
    ];
    // a row scale of exactly 1 and no columns, weights or width: no version-5 key or tensor
    for (pre, version, tensors) in [
        (Preprocess::default(), 1, vec!["W", "map.0.directions"]),
        (
            Preprocess {
                standardizer: Some(st.clone()),
                ..Preprocess::default()
            },
            2,
            standardized.clone(),
        ),
        (
            Preprocess {
                standardizer: Some(st.clone()),
                row_norm: RowNorm::L2,
                row_scale: 1.0,
                ..Preprocess::default()
            },
            4,
            standardized.clone(),
        ),
    ] {
        let bytes = label_model_to_bytes_with_preprocess(&model, &pre).unwrap();
        assert_eq!(read_version(&bytes), version);
        let (_, header) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
        let json = &header.metadata().as_ref().unwrap()["gimc"];
        assert!(!json.contains("row_scale") && !json.contains("preprocess.idf"));
        let meta: serde_json::Value = serde_json::from_str(json).unwrap();
        // `input_dim` also names map and standardisation fields: no top-level key
        assert!(meta.get("input_dim").is_none() && meta.get("row_scale").is_none());
        let names: Vec<&str> = meta["tensors"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(names, tensors);
        let (_, back) = label_model_with_preprocess_from_bytes(&bytes, &reg()).unwrap();
        assert_eq!(back, pre);
        assert_eq!(back.input_dim, None);
    }
    let _ = raw;
}

#[test]
fn inconsistent_version_5_transforms_are_refused_on_save_and_load() {
    let (_, pre, data) = selected_tfidf();
    let model =
        LabelModel::fit_w(vec![build("lff", data.features(), 6, 0.5, 9)], &data, 0.5).unwrap();
    // saving: every inconsistency is an InvalidInput error naming it
    let save_err = |p: Preprocess| -> String {
        match label_model_to_bytes_with_preprocess(&model, &p) {
            Err(e @ GimcError::InvalidInput { .. }) => e.to_string(),
            other => panic!("{p:?} gave {other:?}"),
        }
    };
    let with = |f: &dyn Fn(&mut Preprocess)| {
        let mut p = pre.clone();
        f(&mut p);
        p
    };
    assert!(save_err(with(&|p| p.input_dim = None)).contains("input_dim"));
    assert!(save_err(with(&|p| p.columns = Some(vec![0, 2, 5]))).contains("3 kept columns"));
    assert!(save_err(with(&|p| p.columns = Some(vec![0, 3, 2, 5]))).contains("increasing"));
    assert!(save_err(with(&|p| p.columns = Some(vec![0, 2, 2, 5]))).contains("increasing"));
    assert!(save_err(with(&|p| p.columns = Some(vec![0, 2, 3, 6]))).contains("out of range"));
    assert!(
        save_err(with(&|p| {
            p.columns = None;
            p.input_dim = Some(6);
        }))
        .contains("raw input width 6")
    );
    assert!(save_err(with(&|p| p.tfidf.as_mut().unwrap().idf.push(1.0))).contains("tf-idf"));
    assert!(save_err(with(&|p| p.tfidf.as_mut().unwrap().idf[1] = 0.0)).contains("weight 1"));
    for bad in [0.0, -2.0, f64::NAN, f64::INFINITY] {
        assert!(save_err(with(&|p| p.row_scale = bad)).contains("row scale"));
    }
    // loading: a file edited after writing is a format error, never a panic
    let good = label_model_to_bytes_with_preprocess(&model, &pre).unwrap();
    assert!(label_model_with_preprocess_from_bytes(&good, &reg()).is_ok());
    let is_bad = |b: &[u8], what: &str| match label_model_with_preprocess_from_bytes(b, &reg()) {
        Err(GimcError::ModelFormat { reason, .. }) => assert!(
            reason.contains(what),
            "expected {what:?} in the error, got {reason:?}"
        ),
        other => panic!("expected a format error about {what:?}, got {other:?}"),
    };
    let edits: Vec<(&str, MetaEdit)> = vec![
        ("out of range", Box::new(|j| j["input_dim"] = 5.into())),
        (
            "input_dim",
            Box::new(|j| {
                j.as_object_mut().unwrap().remove("input_dim");
            }),
        ),
        ("row scale", Box::new(|j| j["row_scale"] = 0.0.into())),
        ("row scale", Box::new(|j| j["row_scale"] = (-1.5).into())),
        ("version-5 features", Box::new(|j| j["version"] = 4.into())),
        (
            "shape",
            Box::new(|j| j["tensors"]["preprocess.idf"] = serde_json::json!([1, 3])),
        ),
    ];
    for (what, edit) in edits {
        is_bad(&with_meta(&good, edit), what);
    }
    let set = |name: &'static str, k: usize, v: f64| {
        rewrite_tensors(&good, &move |n, mut vals| {
            if n == name {
                vals[k] = v;
            }
            Some(vals)
        })
    };
    is_bad(&set("preprocess.columns", 1, 3.0), "increasing");
    is_bad(&set("preprocess.columns", 1, 0.0), "increasing");
    is_bad(&set("preprocess.columns", 2, 2.5), "not an index");
    is_bad(&set("preprocess.columns", 0, -1.0), "not an index");
    is_bad(&set("preprocess.columns", 3, 6.0), "out of range");
    is_bad(&set("preprocess.columns", 3, 1e300), "not an index");
    is_bad(&set("preprocess.idf", 0, 0.0), "weight 0");
    is_bad(&set("preprocess.idf", 3, -1.0), "weight 3");
    is_bad(&set("preprocess.idf", 2, f64::NAN), "non-finite");
    let dropped = rewrite_tensors(&good, &|n, v| (n != "preprocess.idf").then_some(v));
    is_bad(&dropped, "missing");
    // the unedited rewrite still loads (the helpers themselves are sound)
    assert!(
        label_model_with_preprocess_from_bytes(&rewrite_tensors(&good, &|_, v| Some(v)), &reg())
            .is_ok()
    );
}

/// `bytes` with every tensor's values passed through `f` (dropped where it returns `None`),
/// the metadata kept as it is but for the checksum, left out (as in [`with_meta`]).
fn rewrite_tensors(bytes: &[u8], f: &TensorEdit) -> Vec<u8> {
    let st = safetensors::SafeTensors::deserialize(bytes).unwrap();
    let (_, header) = safetensors::SafeTensors::read_metadata(bytes).unwrap();
    let mut md = header.metadata().clone().unwrap();
    md.remove(gimc::persist::CHECKSUM_KEY);
    let mut owned: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::new();
    for (name, t) in st.tensors() {
        let vals: Vec<f64> = t
            .data()
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
            .collect();
        if let Some(v) = f(&name, vals) {
            let bytes = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            owned.push((name, t.shape().to_vec(), bytes));
        }
    }
    let views: Vec<(String, TensorView<'_>)> = owned
        .iter()
        .map(|(n, s, b)| {
            (
                n.clone(),
                TensorView::new(Dtype::F64, s.clone(), b).unwrap(),
            )
        })
        .collect();
    safetensors::serialize(views, Some(md)).unwrap()
}
