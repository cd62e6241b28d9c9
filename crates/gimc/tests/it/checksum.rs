//! The checksum of model files: every single-bit flip of a saved model is refused, an edited
//! metadata field is refused with a clear error, the stored checksum is the one the format
//! documents, and the same model always saves to the same bytes.

use std::collections::HashMap;

use gimc::persist::{
    CHECKSUM_KEY, completion_model_from_bytes, completion_model_to_bytes,
    label_model_to_bytes_with_preprocess, label_model_with_preprocess_from_bytes,
    load_label_model_with_preprocess, save_label_model_with_preprocess,
};
use gimc::{BoxedMap, CompletionModel, CompletionParts, GimcError, LabelModel, MapRegistry};
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::seeded;
use gimc_linalg::{Preprocess, RowNorm, Standardizer};
use sha2::{Digest, Sha256};

use crate::common;

/// A small multi-label model (3 inputs, 2 random Fourier directions, 2 labels) with a stored
/// standardisation and row normalisation: every part of the format in a file of about 2 KB.
fn small_model() -> (LabelModel, Preprocess) {
    let data = common::multilabel(20, 3, 2, 7)
        .with_label_names(vec!["x".into(), "y".into()])
        .unwrap();
    let map = MapRegistry::builtin()
        .family("lff")
        .unwrap()
        .build(data.features(), 2, 0.5, &mut seeded(3))
        .unwrap();
    let mut model = LabelModel::fit_w(vec![map], &data, 0.5).unwrap();
    model.set_method("gimc-lff");
    let pre = Preprocess {
        standardizer: Some(Standardizer {
            mean: vec![0.5, -1.0, 2.0],
            scale: vec![1.0, 0.25, 4.0],
            center: true,
        }),
        row_norm: RowNorm::L2,
        ..Preprocess::default()
    };
    (model, pre)
}

/// A small completion model with identity maps (W 3 × 2, H 2 × 2).
fn small_completion() -> CompletionModel {
    let w = Mat::from_fn(3, 2, |i, j| (i + 2 * j) as f64 * 0.5 - 1.0);
    let h = Mat::from_fn(2, 2, |i, j| (i * j) as f64 + 0.25);
    let mut m = CompletionModel::new(CompletionParts {
        row_map: Box::new(gimc_featmap::Identity::new(3)) as BoxedMap,
        col_map: Box::new(gimc_featmap::Identity::new(2)) as BoxedMap,
        w,
        h,
        lambda: 0.1,
    })
    .unwrap();
    m.set_method("imc");
    m
}

/// The end of the safetensors header (where the tensor data starts).
fn data_start(bytes: &[u8]) -> usize {
    8 + u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize
}

/// The `__metadata__` entries of a model file.
fn metadata(bytes: &[u8]) -> HashMap<String, String> {
    let (_, header) = safetensors::SafeTensors::read_metadata(bytes).unwrap();
    header.metadata().clone().unwrap()
}

/// `bytes` with its metadata replaced by `md` (the tensors as they are).
fn with_metadata(bytes: &[u8], md: HashMap<String, String>) -> Vec<u8> {
    let st = safetensors::SafeTensors::deserialize(bytes).unwrap();
    safetensors::serialize(st.tensors(), Some(md)).unwrap()
}

#[test]
fn every_single_bit_flip_of_a_small_label_model_is_refused() {
    let (model, pre) = small_model();
    let bytes = label_model_to_bytes_with_preprocess(&model, &pre).unwrap();
    let reg = MapRegistry::builtin();
    assert!(label_model_with_preprocess_from_bytes(&bytes, &reg).is_ok());
    assert!(bytes.len() < 4096, "{} bytes", bytes.len());
    let start = data_start(&bytes);
    let mut flipped = bytes.clone();
    for pos in 0..bytes.len() {
        for bit in 0..8 {
            flipped[pos] ^= 1 << bit;
            match label_model_with_preprocess_from_bytes(&flipped, &reg) {
                Ok(_) => panic!("the flip of bit {bit} of byte {pos} was accepted"),
                // tensor data: always the checksum
                Err(GimcError::ModelChecksum { .. }) => {}
                Err(e) => assert!(pos < start, "byte {pos} (data) bit {bit}: {e}"),
            }
            flipped[pos] ^= 1 << bit;
        }
    }
    assert_eq!(flipped, bytes);
}

#[test]
fn every_single_bit_flip_of_a_small_completion_model_is_refused() {
    let bytes = completion_model_to_bytes(&small_completion()).unwrap();
    let reg = MapRegistry::builtin();
    assert!(completion_model_from_bytes(&bytes, &reg).is_ok());
    let mut flipped = bytes.clone();
    for pos in 0..bytes.len() {
        for bit in 0..8 {
            flipped[pos] ^= 1 << bit;
            assert!(
                completion_model_from_bytes(&flipped, &reg).is_err(),
                "the flip of bit {bit} of byte {pos} was accepted"
            );
            flipped[pos] ^= 1 << bit;
        }
    }
}

#[test]
fn an_edited_task_is_refused_with_a_checksum_mismatch_naming_the_file() {
    let (model, pre) = small_model();
    let path = std::env::temp_dir()
        .join(format!("gimc-it-checksum-{}", std::process::id()))
        .join("model.gimc");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    save_label_model_with_preprocess(&model, &pre, &path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let mut md = metadata(&bytes);
    let json = md["gimc"].replace("\"multi-label\"", "\"multi-class\"");
    assert_ne!(json, md["gimc"]);
    md.insert("gimc".into(), json);
    std::fs::write(&path, with_metadata(&bytes, md)).unwrap();
    let err = load_label_model_with_preprocess(&path, &MapRegistry::builtin()).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, GimcError::ModelChecksum { .. }), "{msg}");
    let want = format!(
        "{}: checksum mismatch: the file is damaged or was edited (expected sha256:",
        path.display()
    );
    assert!(msg.starts_with(&want), "{msg}");
    assert!(msg.contains(", found sha256:"), "{msg}");
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

#[test]
fn a_renamed_or_extra_metadata_entry_is_refused() {
    let (model, pre) = small_model();
    let bytes = label_model_to_bytes_with_preprocess(&model, &pre).unwrap();
    let reg = MapRegistry::builtin();
    // the checksum under another key is not an absent checksum
    let mut md = metadata(&bytes);
    let sum = md.remove(CHECKSUM_KEY).unwrap();
    md.insert("chfcksum".into(), sum);
    let err = label_model_with_preprocess_from_bytes(&with_metadata(&bytes, md), &reg)
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown metadata entry \"chfcksum\""), "{err}");
    // nor is an entry added beside the checksum
    let mut md = metadata(&bytes);
    md.insert("note".into(), "x".into());
    let err = label_model_with_preprocess_from_bytes(&with_metadata(&bytes, md), &reg)
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown metadata entry \"note\""), "{err}");
    // a file without a checksum (a writer before checksums) still loads
    let mut md = metadata(&bytes);
    md.remove(CHECKSUM_KEY);
    assert!(label_model_with_preprocess_from_bytes(&with_metadata(&bytes, md), &reg).is_ok());
}

/// The checksum as crates/gimc/MODEL_FORMAT.md defines it, computed from the raw bytes the
/// way its Python reader does (independently of the crate's writer and reader).
fn documented_checksum(bytes: &[u8]) -> String {
    fn field(h: &mut Sha256, b: &[u8]) {
        h.update((b.len() as u64).to_le_bytes());
        h.update(b);
    }
    let start = data_start(bytes);
    let mut header: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&bytes[8..start]).unwrap();
    let data = &bytes[start..];
    let meta = header.remove("__metadata__").unwrap();
    let mut h = Sha256::new();
    h.update((header.len() as u64).to_le_bytes());
    // serde_json's maps iterate in key order
    for (name, t) in &header {
        let offsets = t["data_offsets"].as_array().unwrap();
        let (s, e) = (
            offsets[0].as_u64().unwrap() as usize,
            offsets[1].as_u64().unwrap() as usize,
        );
        let shape: Vec<String> = t["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.to_string())
            .collect();
        field(&mut h, name.as_bytes());
        field(&mut h, t["dtype"].as_str().unwrap().as_bytes());
        field(&mut h, shape.join(",").as_bytes());
        field(&mut h, &data[s..e]);
    }
    let entries: Vec<(&String, &str)> = meta
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| *k != "checksum")
        .map(|(k, v)| (k, v.as_str().unwrap()))
        .collect();
    h.update((entries.len() as u64).to_le_bytes());
    for (k, v) in entries {
        field(&mut h, k.as_bytes());
        field(&mut h, v.as_bytes());
    }
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

#[test]
fn the_stored_checksum_is_the_documented_one() {
    let (model, pre) = small_model();
    for bytes in [
        label_model_to_bytes_with_preprocess(&model, &pre).unwrap(),
        completion_model_to_bytes(&small_completion()).unwrap(),
    ] {
        let stored = metadata(&bytes)[CHECKSUM_KEY].clone();
        assert!(
            stored.starts_with("sha256:") && stored.len() == 7 + 64,
            "{stored}"
        );
        assert_eq!(stored, documented_checksum(&bytes));
    }
}

#[test]
fn the_same_model_saves_to_the_same_bytes() {
    let (model, pre) = small_model();
    let dir = std::env::temp_dir().join(format!("gimc-it-same-bytes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("a.gimc"), dir.join("b.gimc"));
    save_label_model_with_preprocess(&model, &pre, &a).unwrap();
    save_label_model_with_preprocess(&model, &pre, &b).unwrap();
    let first = std::fs::read(&a).unwrap();
    assert_eq!(first, std::fs::read(&b).unwrap());
    // and after a load: the loaded model saves to the same bytes again
    let (back, back_pre) = load_label_model_with_preprocess(&a, &MapRegistry::builtin()).unwrap();
    save_label_model_with_preprocess(&back, &back_pre, &b).unwrap();
    assert_eq!(first, std::fs::read(&b).unwrap());
    // nothing but the two files: no temporary file is left beside them
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}
