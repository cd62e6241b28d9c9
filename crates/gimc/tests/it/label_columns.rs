//! The input's label columns recorded in a model file: written when set, read back into the
//! model and the metadata, absent otherwise, and refused when they do not match the labels.

use gimc::persist::{
    label_model_to_bytes, label_model_with_preprocess_from_bytes, read_model_meta, save_label_model,
};
use gimc::{LabelModel, MapRegistry};
use gimc_linalg::rng::seeded;

use crate::common;

fn model() -> LabelModel {
    let data = common::multilabel(30, 3, 2, 5);
    let map = MapRegistry::builtin()
        .family("lff")
        .unwrap()
        .build(data.features(), 4, 0.5, &mut seeded(1))
        .unwrap();
    LabelModel::fit_w(vec![map], &data, 1.0).unwrap()
}

#[test]
fn label_columns_round_trip_and_are_checked() {
    let reg = MapRegistry::builtin();
    let mut m = model();
    // not recorded: no field in the metadata
    let plain = label_model_to_bytes(&m).unwrap();
    assert!(!String::from_utf8_lossy(&plain).contains("label_columns"));
    let (back, _) = label_model_with_preprocess_from_bytes(&plain, &reg).unwrap();
    assert!(back.label_columns().is_empty());

    m.set_label_columns(vec!["l0".into(), "l 1".into()]);
    let bytes = label_model_to_bytes(&m).unwrap();
    let (back, _) = label_model_with_preprocess_from_bytes(&bytes, &reg).unwrap();
    assert_eq!(back.label_columns(), ["l0", "l 1"]);
    let path = std::env::temp_dir().join(format!("gimc-label-columns-{}.gimc", std::process::id()));
    save_label_model(&m, &path).unwrap();
    let meta = read_model_meta(&path).unwrap();
    assert_eq!(
        meta.label_columns,
        Some(vec!["l0".to_string(), "l 1".to_string()])
    );
    std::fs::remove_file(&path).unwrap();

    // one column per label, or the file is refused
    m.set_label_columns(vec!["only".into()]);
    let bytes = label_model_to_bytes(&m).unwrap();
    let err = label_model_with_preprocess_from_bytes(&bytes, &reg).unwrap_err();
    assert!(
        err.to_string().contains("1 label columns for 2 labels"),
        "{err}"
    );
}
