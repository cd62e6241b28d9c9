//! Model files: save → load gives identical predictions (label models with Fourier,
//! random-phase Fourier, Nyström and combined maps; completion models), metadata is readable,
//! truncated, corrupted, foreign or mismatched files give errors, not panics, and a user map
//! loads once its codec is registered. Stored input transforms: `persist_transforms`.

use std::collections::HashMap;
use std::path::PathBuf;

use gimc::persist::{
    FORMAT_NAME, completion_model_from_bytes, completion_model_to_bytes, label_model_from_bytes,
    label_model_to_bytes, load_completion_model, load_label_model, read_model_meta,
    save_completion_model, save_label_model,
};
use gimc::{
    AnyMap, BoxedMap, CompletionData, CompletionInputs, CompletionModel, CompletionParams, Gamma,
    GimcError, LabelData, LabelModel, LabelParams, MapRegistry, NoObserver, fit_completion,
};
use gimc_featmap::{FeatureMap, LearnableMap};
use gimc_linalg::FeatureMatrix;
use gimc_linalg::rng::seeded;
use safetensors::tensor::{Dtype, TensorView};

use crate::common;

/// The registry whose codecs the loaders use.
pub(crate) fn reg() -> MapRegistry {
    MapRegistry::builtin()
}

/// A map of the built-in family `name`, drawn from `seed`.
pub(crate) fn build(name: &str, x: &FeatureMatrix, m: usize, gamma: f64, seed: u64) -> BoxedMap {
    reg()
        .family(name)
        .unwrap()
        .build(x, m, gamma, &mut seeded(seed))
        .unwrap()
}

/// Two label models are the same: every map's record (kind, dimensions, tensors, metadata),
/// W, task, λ, label names, method and hyper-parameters.
pub(crate) fn assert_same<M: AnyMap, N: AnyMap>(a: &LabelModel<M>, b: &LabelModel<N>) {
    assert_eq!(a.maps().len(), b.maps().len());
    for (x, y) in a.maps().iter().zip(b.maps()) {
        assert_eq!(x.encode().unwrap(), y.encode().unwrap());
    }
    assert_eq!(a.w(), b.w());
    assert_eq!(a.task(), b.task());
    assert_eq!(a.lambda(), b.lambda());
    assert_eq!(a.label_names(), b.label_names());
    assert_eq!(a.method(), b.method());
    assert_eq!(a.hyper_parameters(), b.hyper_parameters());
}

/// [`assert_same`] for completion models.
fn assert_same_completion(a: &CompletionModel, b: &CompletionModel) {
    assert_eq!(a.row_map().encode().unwrap(), b.row_map().encode().unwrap());
    assert_eq!(a.col_map().encode().unwrap(), b.col_map().encode().unwrap());
    assert_eq!((a.w(), a.h()), (b.w(), b.h()));
    assert_eq!((a.lambda(), a.method()), (b.lambda(), b.method()));
}

pub(crate) fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gimc-it-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

pub(crate) fn fitted_label_model() -> (LabelModel, gimc::LabelData) {
    let data = common::multilabel(50, 3, 4, 31)
        .with_label_names(vec!["a".into(), "b".into(), "c".into(), "d é".into()])
        .unwrap();
    let params = LabelParams::default().with_max_iter(3);
    let map = build("lff", data.features(), 5, 0.3, 1);
    let mut model = common::fit_checked(&data, map, &params, None)
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
        vec![build("nys-kmeans", data.features(), 6, 0.4, 2)],
        &data,
        0.3,
    )
    .unwrap();
    let combined = LabelModel::fit_w(
        vec![
            build("lff", data.features(), 5, 0.3, 1),
            build("lnys", data.features(), 7, 0.2, 3),
        ],
        &data,
        2.0,
    )
    .unwrap();
    let multiclass = {
        let d = common::multiclass(40, 3, 3, 4);
        LabelModel::fit_w(vec![build("lff", d.features(), 4, 0.5, 5)], &d, 1.0).unwrap()
    };
    for (i, model) in [lff, lnys_norm, combined, multiclass]
        .into_iter()
        .enumerate()
    {
        let path = temp_path(&format!("label-{i}.safetensors"));
        save_label_model(&model, &path).unwrap();
        let back = load_label_model(&path, &reg()).unwrap();
        assert_same(&back, &model);
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
    let rm = build("lff", &x, 4, 0.3, 1);
    let cm = build("lnys", &y, 6, 0.3, 2);
    let params = CompletionParams::default().with_rank(3).with_max_iter(2);
    let fit = fit_completion(
        CompletionInputs {
            data,
            row_map: rm,
            col_map: cm,
        },
        &params.check().unwrap(),
        &mut seeded(3),
        &mut NoObserver,
    )
    .unwrap();
    let path = temp_path("completion.safetensors");
    save_completion_model(&fit.model, &path).unwrap();
    let back = load_completion_model(&path, &reg()).unwrap();
    assert_same_completion(&back, &fit.model);
    assert_eq!(
        back.predict_dense(&x, &y).unwrap(),
        fit.model.predict_dense(&x, &y).unwrap()
    );
    // a completion file is not a label model and vice versa
    assert!(matches!(
        load_label_model(&path, &reg()),
        Err(GimcError::ModelFormat { .. })
    ));
    let (lm, _) = fitted_label_model();
    let lb = label_model_to_bytes(&lm).unwrap();
    assert!(matches!(
        completion_model_from_bytes(&lb, &reg()),
        Err(GimcError::ModelFormat { .. })
    ));
    let cb = completion_model_to_bytes(&fit.model).unwrap();
    assert_same_completion(
        &completion_model_from_bytes(&cb, &reg()).unwrap(),
        &fit.model,
    );
    let _ = std::fs::remove_file(&path);
}

fn is_format_error(r: Result<LabelModel, GimcError>) -> bool {
    matches!(r, Err(GimcError::ModelFormat { .. }))
}

#[test]
fn truncated_corrupted_and_foreign_files_are_errors() {
    let (model, _) = fitted_label_model();
    let bytes = label_model_to_bytes(&model).unwrap();
    assert_same(&label_model_from_bytes(&bytes, &reg()).unwrap(), &model);
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
            is_format_error(label_model_from_bytes(&bytes[..cut], &reg())),
            "cut at {cut}"
        );
    }
    // a corrupted header byte (a control character, invalid anywhere in the JSON) or length
    // prefix
    let mut bad = bytes.clone();
    bad[8 + header_len / 3] = 0x01;
    assert!(is_format_error(label_model_from_bytes(&bad, &reg())));
    let mut bad = bytes.clone();
    bad[0] ^= 0x40;
    assert!(is_format_error(label_model_from_bytes(&bad, &reg())));
    // extra bytes at the end
    let mut bad = bytes.clone();
    bad.extend_from_slice(&[0; 8]);
    assert!(is_format_error(label_model_from_bytes(&bad, &reg())));
    // a NaN written into the data section: the checksum no longer matches, and without a
    // checksum the value itself is refused
    let mut bad = bytes.clone();
    let n = bad.len();
    bad[n - 8..].copy_from_slice(&f64::NAN.to_le_bytes());
    let err = label_model_from_bytes(&bad, &reg()).unwrap_err();
    assert!(matches!(err, GimcError::ModelChecksum { .. }), "{err}");
    let unsigned = with_meta(&bytes, |_| {});
    let mut bad = unsigned.clone();
    let n = bad.len();
    bad[n - 8..].copy_from_slice(&f64::NAN.to_le_bytes());
    let err = label_model_from_bytes(&bad, &reg()).unwrap_err();
    assert!(err.to_string().contains("non-finite"), "{err}");
    // foreign files: text, random bytes, empty
    assert!(is_format_error(label_model_from_bytes(
        b"hello, world\n",
        &reg()
    )));
    assert!(is_format_error(label_model_from_bytes(&[0xff; 64], &reg())));
    assert!(is_format_error(label_model_from_bytes(&[], &reg())));
    // a valid safetensors file that is not a gimc model
    let data = vec![0u8; 16];
    let t = TensorView::new(Dtype::F64, vec![2, 1], &data).unwrap();
    let plain = safetensors::serialize([("W", t.clone())], None).unwrap();
    assert!(is_format_error(label_model_from_bytes(&plain, &reg())));
    let other: HashMap<String, String> = [("format".to_string(), "pt".to_string())].into();
    let pt = safetensors::serialize([("W", t)], Some(other)).unwrap();
    assert!(is_format_error(label_model_from_bytes(&pt, &reg())));
    // missing file
    assert!(matches!(
        load_label_model(&temp_path("does-not-exist.safetensors"), &reg()),
        Err(GimcError::Io { .. })
    ));
}

/// Rewrites the `gimc` metadata of a model file through `edit`, without a checksum (as a
/// file of a writer before checksums, so that the loader's own checks are what refuses it).
pub(crate) fn with_meta(bytes: &[u8], edit: impl Fn(&mut serde_json::Value)) -> Vec<u8> {
    let st = safetensors::SafeTensors::deserialize(bytes).unwrap();
    let (_, header) = safetensors::SafeTensors::read_metadata(bytes).unwrap();
    let mut md = header.metadata().clone().unwrap();
    md.remove(gimc::persist::CHECKSUM_KEY);
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
    assert!(label_model_from_bytes(&with_meta(&bytes, |_| {}), &reg()).is_ok());
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
            is_format_error(label_model_from_bytes(&bad, &reg())),
            "edit {name} was accepted"
        );
    }
}

/// An edit of a model file's JSON metadata.
pub(crate) type MetaEdit = Box<dyn Fn(&mut serde_json::Value)>;

/// An edit of a tensor's values by name (`None` drops the tensor).
pub(crate) type TensorEdit = dyn Fn(&str, Vec<f64>) -> Option<Vec<f64>>;

/// A label model with a random-phase Fourier map, fitted (learned) on `data`.
fn fitted_phase_model(data: &LabelData) -> LabelModel {
    let map = build("lff-phase", data.features(), 6, 0.3, 8);
    let params = LabelParams::default().with_max_iter(2);
    let mut model = common::fit_checked(data, map, &params, None).unwrap().model;
    model.set_method("gimc-lff-phase");
    model
}

#[test]
fn random_phase_maps_round_trip_as_version_2() {
    let (_, data) = fitted_label_model();
    let model = fitted_phase_model(&data);
    let map = &model.maps()[0];
    assert_eq!(map.kind(), "random-cosine");
    assert_eq!(map.output_dim(), 12);
    let phases: Vec<f64> = map.encode().unwrap().tensors["phases"]
        .row(0)
        .iter()
        .copied()
        .collect();
    let path = temp_path("phase.safetensors");
    save_label_model(&model, &path).unwrap();
    let back = load_label_model(&path, &reg()).unwrap();
    assert_same(&back, &model);
    let x = data.features();
    assert_eq!(back.scores(x).unwrap(), model.scores(x).unwrap());
    let meta = read_model_meta(&path).unwrap();
    assert_eq!(meta.version, 2);
    assert_eq!(meta.tensors["map.0.directions"], [3, 12]);
    assert_eq!(meta.tensors["map.0.phases"], [1, 12]);
    // the phases are stored as a plain 1 × D row
    let bytes = std::fs::read(&path).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let t = st.tensor("map.0.phases").unwrap();
    let stored: Vec<f64> = t
        .data()
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(stored, phases);
    let json: serde_json::Value = serde_json::to_value(&meta).unwrap();
    assert_eq!(json["maps"][0]["kind"], "random-cosine");
    // combined with a paired Fourier map
    let combined = LabelModel::fit_w(
        vec![
            fitted_phase_model(&data).into_maps().remove(0),
            fitted_label_model().0.into_maps().remove(0),
        ],
        &data,
        1.0,
    )
    .unwrap();
    let bytes = label_model_to_bytes(&combined).unwrap();
    assert_same(&label_model_from_bytes(&bytes, &reg()).unwrap(), &combined);
    // bad phase tensors are format errors
    let edits: Vec<(&str, MetaEdit)> = vec![
        (
            "output_dim",
            Box::new(|j| j["maps"][0]["output_dim"] = 11.into()),
        ),
        (
            "zero output_dim",
            Box::new(|j| j["maps"][0]["output_dim"] = 0.into()),
        ),
        ("as version 1", Box::new(|j| j["version"] = 1.into())),
    ];
    let good = label_model_to_bytes(&model).unwrap();
    for (name, edit) in edits {
        assert!(
            is_format_error(label_model_from_bytes(&with_meta(&good, edit), &reg())),
            "edit {name} was accepted"
        );
    }
    let _ = std::fs::remove_file(&path);
}

/// A map that is not built in (Φ = −φ(X) for random Fourier features φ), with its own codec
/// and family: it goes through selection, save and load exactly like a built-in map.
#[derive(Debug)]
struct Negated(gimc_featmap::RandomFourier);

impl FeatureMap for Negated {
    fn input_dim(&self) -> usize {
        self.0.input_dim()
    }
    fn output_dim(&self) -> usize {
        self.0.output_dim()
    }
    fn forward(&self, x: &FeatureMatrix) -> gimc_featmap::Result<gimc_linalg::faer::Mat<f64>> {
        Ok(-self.0.forward(x)?)
    }
}

impl LearnableMap for Negated {
    fn params(&self) -> gimc_linalg::faer::MatRef<'_, f64> {
        self.0.params()
    }
    fn set_params(&mut self, p: gimc_linalg::faer::Mat<f64>) -> gimc_featmap::Result<()> {
        self.0.set_params(p)
    }
    fn backward(
        &self,
        x: &FeatureMatrix,
        g: gimc_linalg::faer::MatRef<'_, f64>,
    ) -> gimc_featmap::Result<gimc_linalg::faer::Mat<f64>> {
        Ok(-self.0.backward(x, g)?)
    }
}

impl gimc::MapCodec for Negated {
    const KIND: &'static str = "test-negated-fourier";
    fn encode(&self) -> gimc::Result<gimc::MapRecord> {
        gimc::MapRecord::new(Self::KIND, self.input_dim(), self.output_dim())
            .with_tensor("directions", self.0.directions())
            .with_meta("sign", -1)
    }
    fn decode(r: &gimc::MapRecord) -> gimc::Result<Self> {
        if r.meta::<i32>("sign")? != -1 {
            return Err(r.bad("sign must be -1"));
        }
        let u = r.tensor("directions", (r.input_dim, r.output_dim / 2))?;
        Ok(Self(gimc_featmap::RandomFourier::from_directions(
            u.clone(),
        )?))
    }
}

struct NegatedFamily;

impl gimc_featmap::MapFamily for NegatedFamily {
    type Map = Negated;
    fn name(&self) -> &str {
        "neg-lff"
    }
    fn output_dim(&self, m: usize) -> gimc_featmap::Result<usize> {
        gimc_featmap::scaled_dim(m, 2)
    }
    fn build(
        &self,
        x: &FeatureMatrix,
        m: usize,
        gamma: f64,
        rng: &mut gimc_linalg::rng::GimcRng,
    ) -> gimc_featmap::Result<Negated> {
        Ok(Negated(
            gimc_featmap::FourierFamily.build(x, m, gamma, rng)?,
        ))
    }
}

#[test]
fn a_user_map_selects_saves_and_loads_once_its_codec_is_registered() {
    let data = common::multilabel(80, 3, 4, 51);
    let mut registry = MapRegistry::builtin();
    registry.register_family(NegatedFamily).unwrap();
    registry.register_codec::<Negated>().unwrap();
    assert!(registry.register_codec::<Negated>().is_err());
    let params = gimc::SelectionParams::default()
        .with_gammas(vec![Gamma::Value(0.1), Gamma::Value(0.5)])
        .with_ms(vec![5])
        .with_max_iter(2)
        .with_seed(7);
    // by name through the registry (boxed), and typed: the same selection
    let boxed = gimc::select_and_fit(
        &data,
        registry.family("neg-lff").unwrap(),
        &params.check().unwrap(),
        &mut NoObserver,
    )
    .unwrap();
    let typed = gimc::select_and_fit(
        &data,
        &NegatedFamily,
        &params.check().unwrap(),
        &mut NoObserver,
    )
    .unwrap();
    assert_eq!(boxed.chosen, typed.chosen);
    assert_eq!(boxed.model.w(), typed.model.w());
    assert_eq!(typed.model.method(), "gimc-neg-lff");
    // Φ = −φ: W is the negation of the plain Fourier fit's on the same draws, predictions equal
    let plain = gimc::select_and_fit(
        &data,
        &gimc_featmap::FourierFamily,
        &params.check().unwrap(),
        &mut NoObserver,
    )
    .unwrap();
    assert_eq!(plain.chosen.gamma, typed.chosen.gamma);
    assert_eq!(
        plain.model.top_k(data.features(), 3).unwrap(),
        typed.model.top_k(data.features(), 3).unwrap()
    );
    // save the typed model; load it back through the registry
    let bytes = label_model_to_bytes(&typed.model).unwrap();
    let back = label_model_from_bytes(&bytes, &registry).unwrap();
    assert_same(&back, &typed.model);
    assert_eq!(back.maps()[0].kind(), "test-negated-fourier");
    assert_eq!(
        back.scores(data.features()).unwrap(),
        typed.model.scores(data.features()).unwrap()
    );
    let (_, header) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    let md = header.metadata().as_ref().unwrap();
    assert_eq!(md["format_version"], "3");
    let json: serde_json::Value = serde_json::from_str(&md["gimc"]).unwrap();
    assert_eq!(json["maps"][0]["sign"], -1);
    // without the codec: a clear error naming the kind, never a panic
    let err = label_model_from_bytes(&bytes, &reg()).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, GimcError::ModelFormat { .. }), "{msg}");
    assert!(
        msg.contains("test-negated-fourier") && msg.contains("random-fourier"),
        "{msg}"
    );
    // a version-2 file may not hold a kind that is not built in
    let as_v2 = with_meta(&bytes, |j| j["version"] = 2.into());
    assert!(is_format_error(label_model_from_bytes(&as_v2, &registry)));
    // the codec's own checks run on load
    let bad_sign = with_meta(&bytes, |j| j["maps"][0]["sign"] = 1.into());
    assert!(is_format_error(label_model_from_bytes(
        &bad_sign, &registry
    )));
}
