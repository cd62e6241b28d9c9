//! Model files: save → load gives identical predictions (label models with Fourier, Nyström
//! with and without a stored normalisation, combined maps; completion models), metadata is
//! readable, and truncated, corrupted, foreign or mismatched files give errors, not panics.

use std::collections::HashMap;
use std::path::PathBuf;

use gimc::persist::{
    FORMAT_NAME, completion_model_from_bytes, completion_model_to_bytes, label_model_from_bytes,
    label_model_to_bytes, load_completion_model, load_label_model, read_model_meta,
    save_completion_model, save_label_model,
};
use gimc::{
    CompletionData, CompletionParams, GimcError, LabelModel, LabelParams, Landmarks, MapKind,
    MapSpec, NoObserver, fit_completion, fit_labels,
};
use gimc_linalg::rng::seeded;
use safetensors::tensor::{Dtype, TensorView};

use crate::common;

fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gimc-it-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn fitted_label_model() -> (LabelModel, gimc::LabelData) {
    let data = common::multilabel(50, 3, 4, 31)
        .with_label_names(vec!["a".into(), "b".into(), "c".into(), "d é".into()])
        .unwrap();
    let params = LabelParams {
        max_iter: 3,
        ..LabelParams::default()
    };
    let map = MapSpec::fourier(5, 0.3)
        .build(data.features(), &mut seeded(1))
        .unwrap();
    let mut model = fit_labels(&data, map, &params, None, &mut NoObserver)
        .unwrap()
        .model;
    model.set_method("gimc-lff");
    model.hyper_parameters_mut().insert("gamma".into(), 0.3);
    (model, data)
}

#[test]
fn label_models_round_trip_with_identical_predictions() {
    let (lff, data) = fitted_label_model();
    let lnys_norm = LabelModel::fit_w(
        vec![
            MapSpec {
                kind: MapKind::Nystrom {
                    landmarks: Landmarks::KMeans,
                    normalized: true,
                },
                m: 6,
                gamma: 0.4,
            }
            .build(data.features(), &mut seeded(2))
            .unwrap(),
        ],
        &data,
        0.3,
    )
    .unwrap();
    let combined = LabelModel::fit_w(
        vec![
            lff.maps()[0].clone(),
            MapSpec::nystrom(7, 0.2)
                .build(data.features(), &mut seeded(3))
                .unwrap(),
        ],
        &data,
        2.0,
    )
    .unwrap();
    let multiclass = {
        let d = common::multiclass(40, 3, 3, 4);
        LabelModel::fit_w(
            vec![
                MapSpec::fourier(4, 0.5)
                    .build(d.features(), &mut seeded(5))
                    .unwrap(),
            ],
            &d,
            1.0,
        )
        .unwrap()
    };
    for (i, model) in [lff, lnys_norm, combined, multiclass]
        .into_iter()
        .enumerate()
    {
        let path = temp_path(&format!("label-{i}.safetensors"));
        save_label_model(&model, &path).unwrap();
        let back = load_label_model(&path).unwrap();
        assert_eq!(back, model, "model {i} changed in the round trip");
        let x = data.features();
        if back.input_dim() == x.ncols() {
            assert_eq!(back.scores(x).unwrap(), model.scores(x).unwrap());
            assert_eq!(back.top_k(x, 3).unwrap(), model.top_k(x, 3).unwrap());
        }
        let meta = read_model_meta(&path).unwrap();
        assert_eq!(meta.format, FORMAT_NAME);
        assert_eq!(meta.version, 1);
        assert_eq!(meta.kind, "labels");
        assert_eq!(meta.tensors["W"], [model.feature_dim(), model.n_labels()]);
        let _ = std::fs::remove_file(&path);
    }
}

#[test]
fn files_are_plain_safetensors_with_row_major_f64_and_json_metadata() {
    let (model, _) = fitted_label_model();
    let bytes = label_model_to_bytes(&model).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let w = st.tensor("W").unwrap();
    assert_eq!(w.dtype(), Dtype::F64);
    assert_eq!(w.shape(), [model.feature_dim(), model.n_labels()]);
    // element (1, 2) sits at position 1·L + 2
    let l = model.n_labels();
    let pos = (l + 2) * 8;
    let v = f64::from_le_bytes(w.data()[pos..pos + 8].try_into().unwrap());
    assert_eq!(v, model.w()[(1, 2)]);
    let dirs = st.tensor("map.0.directions").unwrap();
    assert_eq!(dirs.shape(), [3, 5]);
    let (_, header) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    let md = header.metadata().as_ref().unwrap();
    assert_eq!(md["format"], "gimc-model");
    assert_eq!(md["format_version"], "1");
    let json: serde_json::Value = serde_json::from_str(&md["gimc"]).unwrap();
    assert_eq!(json["method"], "gimc-lff");
    assert_eq!(json["task"], "multi-label");
    assert_eq!(json["maps"][0]["kind"], "random-fourier");
    assert_eq!(json["label_names"][3], "d é");
    assert_eq!(json["hyper_parameters"]["gamma"], 0.3);
}

#[test]
fn completion_models_round_trip() {
    let (omega, x, y, _) = common::completion(20, 15, 3, 0.5, 6);
    let data = CompletionData::new(&omega, &x, &y).unwrap();
    let rm = MapSpec::fourier(4, 0.3).build(&x, &mut seeded(1)).unwrap();
    let cm = MapSpec::nystrom(6, 0.3).build(&y, &mut seeded(2)).unwrap();
    let params = CompletionParams {
        rank: 3,
        max_iter: 2,
        ..CompletionParams::default()
    };
    let fit = fit_completion(
        &data,
        rm,
        cm,
        &params,
        None,
        &mut seeded(3),
        &mut NoObserver,
    )
    .unwrap();
    let path = temp_path("completion.safetensors");
    save_completion_model(&fit.model, &path).unwrap();
    let back = load_completion_model(&path).unwrap();
    assert_eq!(back, fit.model);
    assert_eq!(
        back.predict_dense(&x, &y).unwrap(),
        fit.model.predict_dense(&x, &y).unwrap()
    );
    // a completion file is not a label model and vice versa
    assert!(matches!(
        load_label_model(&path),
        Err(GimcError::ModelFormat { .. })
    ));
    let (lm, _) = fitted_label_model();
    let lb = label_model_to_bytes(&lm).unwrap();
    assert!(matches!(
        completion_model_from_bytes(&lb),
        Err(GimcError::ModelFormat { .. })
    ));
    let cb = completion_model_to_bytes(&fit.model).unwrap();
    assert_eq!(completion_model_from_bytes(&cb).unwrap(), fit.model);
    let _ = std::fs::remove_file(&path);
}

fn is_format_error(r: Result<LabelModel, GimcError>) -> bool {
    matches!(r, Err(GimcError::ModelFormat { .. }))
}

#[test]
fn truncated_corrupted_and_foreign_files_are_errors() {
    let (model, _) = fitted_label_model();
    let bytes = label_model_to_bytes(&model).unwrap();
    assert_eq!(label_model_from_bytes(&bytes).unwrap(), model);
    // truncated anywhere
    let header_len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    for cut in [
        0,
        3,
        8,
        9,
        header_len / 2,
        header_len + 7,
        bytes.len() / 2,
        bytes.len() - 1,
    ] {
        assert!(
            is_format_error(label_model_from_bytes(&bytes[..cut])),
            "cut at {cut}"
        );
    }
    // a corrupted header byte (inside the JSON) or length prefix
    let mut bad = bytes.clone();
    bad[8 + header_len / 3] = b'}';
    assert!(is_format_error(label_model_from_bytes(&bad)));
    let mut bad = bytes.clone();
    bad[0] ^= 0x40;
    assert!(is_format_error(label_model_from_bytes(&bad)));
    // extra bytes at the end
    let mut bad = bytes.clone();
    bad.extend_from_slice(&[0; 8]);
    assert!(is_format_error(label_model_from_bytes(&bad)));
    // a NaN written into the data section
    let mut bad = bytes.clone();
    let n = bad.len();
    bad[n - 8..].copy_from_slice(&f64::NAN.to_le_bytes());
    let err = label_model_from_bytes(&bad).unwrap_err();
    assert!(err.to_string().contains("non-finite"), "{err}");
    // foreign files: text, random bytes, empty
    assert!(is_format_error(label_model_from_bytes(b"hello, world\n")));
    assert!(is_format_error(label_model_from_bytes(&[0xff; 64])));
    assert!(is_format_error(label_model_from_bytes(&[])));
    // a valid safetensors file that is not a gimc model
    let data = vec![0u8; 16];
    let t = TensorView::new(Dtype::F64, vec![2, 1], &data).unwrap();
    let plain = safetensors::serialize([("W", t.clone())], None).unwrap();
    assert!(is_format_error(label_model_from_bytes(&plain)));
    let other: HashMap<String, String> = [("format".to_string(), "pt".to_string())].into();
    let pt = safetensors::serialize([("W", t)], Some(other)).unwrap();
    assert!(is_format_error(label_model_from_bytes(&pt)));
    // missing file
    assert!(matches!(
        load_label_model(&temp_path("does-not-exist.safetensors")),
        Err(GimcError::Io { .. })
    ));
}

/// Rewrites the `gimc` metadata of a model file through `edit`.
fn with_meta(bytes: &[u8], edit: impl Fn(&mut serde_json::Value)) -> Vec<u8> {
    let st = safetensors::SafeTensors::deserialize(bytes).unwrap();
    let (_, header) = safetensors::SafeTensors::read_metadata(bytes).unwrap();
    let mut md = header.metadata().clone().unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&md["gimc"]).unwrap();
    edit(&mut json);
    md.insert("gimc".into(), json.to_string());
    if let Some(v) = json.get("version").and_then(|v| v.as_u64()) {
        md.insert("format_version".into(), v.to_string());
    }
    safetensors::serialize(st.tensors(), Some(md)).unwrap()
}

#[test]
fn inconsistent_metadata_is_rejected() {
    let (model, _) = fitted_label_model();
    let bytes = label_model_to_bytes(&model).unwrap();
    // sanity: an unedited rewrite loads
    assert!(label_model_from_bytes(&with_meta(&bytes, |_| {})).is_ok());
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let edits: Vec<(&str, Edit)> = vec![
        ("future version", Box::new(|j| j["version"] = 9.into())),
        ("version 0", Box::new(|j| j["version"] = 0.into())),
        ("format", Box::new(|j| j["format"] = "other".into())),
        ("kind", Box::new(|j| j["kind"] = "completion".into())),
        ("task", Box::new(|j| j["task"] = "regression".into())),
        ("lambda", Box::new(|j| j["lambda"] = (-1.0).into())),
        ("m", Box::new(|j| j["maps"][0]["m"] = 6.into())),
        (
            "input_dim",
            Box::new(|j| j["maps"][0]["input_dim"] = 4.into()),
        ),
        (
            "output_dim",
            Box::new(|j| j["maps"][0]["output_dim"] = 7.into()),
        ),
        (
            "map kind",
            Box::new(|j| j["maps"][0]["kind"] = "mystery".into()),
        ),
        ("no maps", Box::new(|j| j["maps"] = serde_json::json!([]))),
        (
            "tensor shape",
            Box::new(|j| j["tensors"]["W"] = serde_json::json!([10, 5])),
        ),
        (
            "label names",
            Box::new(|j| j["label_names"] = serde_json::json!(["x"])),
        ),
        (
            "prefix",
            Box::new(|j| j["maps"][0]["prefix"] = "map.7".into()),
        ),
    ];
    for (name, edit) in edits {
        let bad = with_meta(&bytes, edit);
        assert!(
            is_format_error(label_model_from_bytes(&bad)),
            "edit {name} was accepted"
        );
    }
}
