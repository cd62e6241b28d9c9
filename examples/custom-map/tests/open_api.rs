//! The Laplacian map through gimc's open API, as a user's map: selected on validation by
//! `select_and_fit`, stored in a model file through its codec and loaded back, refused by a
//! registry that lacks the codec, and fitted on Bibtex (when the data is present).

#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)]

use gimc::NoObserver;
use std::path::PathBuf;

use custom_map::{LaplaceFamily, LaplaceFourier, registry};
use gimc::persist::{label_model_from_bytes, label_model_to_bytes};
use gimc::{AnyMap, Gamma, LabelData, MapCodec, MapRegistry, SelectionParams, select_and_fit};
use gimc_data::{Targets, load_named};
use gimc_featmap::{FeatureMap, LearnableMap, MapFamily};
use gimc_linalg::FeatureMatrix;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{gaussian_mat, seeded};

/// Three classes whose rows sit in three separated blobs of R^4 (120 rows).
fn blobs() -> LabelData {
    let noise = gaussian_mat(&mut seeded(5), 120, 4, 0.3);
    let classes: Vec<usize> = (0..120).map(|i| i % 3).collect();
    let x = Mat::from_fn(120, 4, |i, j| {
        noise[(i, j)] + if j == classes[i] { 2.0 } else { 0.0 }
    });
    LabelData::multi_class(FeatureMatrix::dense(x).unwrap(), &classes, 3).unwrap()
}

#[test]
fn codec_round_trips_the_map_and_rejects_bad_records() {
    let map = LaplaceFourier::new(4, 6, 0.7, &mut seeded(1)).unwrap();
    let rec = MapCodec::encode(&map).unwrap();
    assert_eq!(
        (rec.kind.as_str(), rec.input_dim, rec.output_dim),
        ("laplace-fourier", 4, 12)
    );
    let back = registry().unwrap().decode(&rec).unwrap();
    assert_eq!(back.params(), map.params());
    assert_eq!(back.kind(), "laplace-fourier");
    let x = FeatureMatrix::dense(gaussian_mat(&mut seeded(2), 5, 4, 1.0)).unwrap();
    assert_eq!(back.forward(&x).unwrap(), map.forward(&x).unwrap());

    // a record with a missing, inconsistent or non-finite part is an error, not a panic
    let mut bad = rec.clone();
    bad.metadata.remove("gamma");
    assert!(LaplaceFourier::decode(&bad).is_err());
    let mut bad = rec.clone();
    bad.output_dim = 11;
    assert!(LaplaceFourier::decode(&bad).is_err());
    let mut bad = rec.clone();
    bad.tensors.insert("directions".into(), Mat::zeros(3, 6));
    assert!(LaplaceFourier::decode(&bad).is_err());
    let mut bad = rec;
    bad.tensors
        .insert("directions".into(), Mat::from_fn(4, 6, |_, _| f64::NAN));
    assert!(LaplaceFourier::decode(&bad).is_err());
}

#[test]
fn registry_adds_the_family_and_codec_beside_the_builtin_ones() {
    let reg = registry().unwrap();
    assert!(reg.family_names().contains(&"llff"));
    assert!(reg.family_names().contains(&"lff"));
    assert!(reg.codec_kinds().contains(&"laplace-fourier"));
    // the registered family builds exactly the map the typed family builds from the same stream
    let x = blobs();
    let boxed = reg
        .family("llff")
        .unwrap()
        .build(x.features(), 7, 0.4, &mut seeded(3))
        .unwrap();
    let typed = LaplaceFamily
        .build(x.features(), 7, 0.4, &mut seeded(3))
        .unwrap();
    assert_eq!(boxed.params(), typed.params());
    // registering twice is refused
    let mut reg = reg;
    assert!(reg.register_family(LaplaceFamily).is_err());
    assert!(reg.register_codec::<LaplaceFourier>().is_err());
}

#[test]
fn selected_fitted_saved_loaded_and_refused_without_its_codec() {
    let data = blobs();
    let params = SelectionParams::default()
        .with_ms(vec![20])
        .with_gammas(vec![Gamma::Value(0.1), Gamma::Value(1.0)])
        .with_lambdas(vec![0.1])
        .with_max_iter(4)
        .with_seed(3)
        .check()
        .unwrap();
    let sel = select_and_fit(&data, &LaplaceFamily, &params, &mut NoObserver).unwrap();
    assert_eq!(sel.chosen.family, "llff");
    assert_eq!(sel.candidates.len(), 2);
    assert_eq!(sel.model.method(), "gimc-llff");
    let acc = sel.model.evaluate(&data, &[1]).unwrap().accuracy.unwrap();
    assert!(acc > 0.9, "training accuracy {acc} on separated blobs");

    let bytes = label_model_to_bytes(&sel.model).unwrap();
    let loaded = label_model_from_bytes(&bytes, &registry().unwrap()).unwrap();
    assert_eq!(loaded.maps()[0].kind(), "laplace-fourier");
    assert_eq!(loaded.maps()[0].params(), sel.model.maps()[0].params());
    assert_eq!(
        loaded.scores(data.features()).unwrap(),
        sel.model.scores(data.features()).unwrap()
    );
    // a registry without the codec names the kind it does not know and the ones it does
    let err = label_model_from_bytes(&bytes, &MapRegistry::builtin())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("laplace-fourier") && err.contains("random-fourier"),
        "{err}"
    );
}

/// The shared data directory, or None (test skipped) unless GIMC_REQUIRE_DATA=1 demands it.
fn data_dir(set: &str) -> Option<PathBuf> {
    let dir = gimc_data::resolve_data_dir(None);
    if dir.join(set).is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("GIMC_REQUIRE_DATA").as_deref() != Ok("1"),
        "GIMC_REQUIRE_DATA=1 but {set} is not in {}",
        dir.display()
    );
    eprintln!("skipped: {set} not found in {}", dir.display());
    None
}

fn label_data(d: &gimc_data::Dataset) -> LabelData {
    let Targets::Labels { matrix, .. } = &d.targets else {
        panic!("bibtex is multi-label")
    };
    LabelData::multi_label(d.features.clone(), matrix.clone()).unwrap()
}

/// Bibtex with a small grid (m = 100, two γ, three iterations): validation chooses, learning
/// does not lose to the random draw on validation, and test P@1 clears a floor far above a
/// random ranking of 159 labels (about 0.015) and the most-frequent-label baseline (about 0.10).
#[test]
fn bibtex_small_grid_is_selected_on_validation() {
    let Some(dir) = data_dir("bibtex") else {
        return;
    };
    let named = load_named(&dir, "bibtex").unwrap();
    let train = label_data(named.part("train").unwrap());
    let test = label_data(named.part("test").unwrap());
    let params = SelectionParams::default()
        .with_ms(vec![100])
        .with_gammas(vec![Gamma::Value(0.003), Gamma::Value(0.01)])
        .with_lambdas(vec![1.0])
        .with_max_iter(3)
        .check()
        .unwrap();
    let sel = select_and_fit(&train, &LaplaceFamily, &params, &mut NoObserver).unwrap();
    println!("chosen {}", sel.chosen.describe());
    for c in &sel.candidates {
        assert!(
            c.best_score >= c.scores[0],
            "learning lost to the start: {:?}",
            c.scores
        );
    }
    let p1 = sel
        .model
        .evaluate(&test, &[1])
        .unwrap()
        .precision_at(1)
        .unwrap();
    println!("test P@1 {p1:.4}");
    assert!(p1 > 0.45, "test P@1 {p1}");
}
