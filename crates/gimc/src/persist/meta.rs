//! The metadata of a model file: the format's constants, the JSON metadata types, the oldest
//! version that can hold a model and the metadata every model starts from.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map as JsonMap, Value};

use crate::registry::MapCodec;

/// The format name stored in every model file.
pub const FORMAT_NAME: &str = "gimc-model";
/// The newest format version this crate writes and reads. Every file is written with the
/// oldest version that can hold it (see the module documentation).
pub const FORMAT_VERSION: u32 = 5;

/// The prefix of the input-transform tensors (`preprocess.mean`, `preprocess.scale`,
/// `preprocess.columns`, `preprocess.idf`).
pub const PREPROCESS_PREFIX: &str = "preprocess";

/// The tensor of the kept input columns (version 5).
pub(super) const COLUMNS_TENSOR: &str = "preprocess.columns";
/// The tensor of the tf-idf weights (version 5).
pub(super) const IDF_TENSOR: &str = "preprocess.idf";

/// The `__metadata__` entry holding the checksum (see the module documentation).
pub const CHECKSUM_KEY: &str = "checksum";
/// The prefix of a checksum's value: the hash function.
pub(super) const CHECKSUM_PREFIX: &str = "sha256:";
/// The `__metadata__` entries a model file may hold.
pub(super) const METADATA_KEYS: [&str; 4] = ["format", "format_version", "gimc", CHECKSUM_KEY];

/// The JSON metadata of a model file (the `gimc` entry of the safetensors `__metadata__`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelMeta {
    /// Always `gimc-model`.
    pub format: String,
    /// Format version (the oldest that holds the file: 1 to 5).
    pub version: u32,
    /// `labels` (multi-label / multi-class) or `completion` (Â = ΦWHᵀΨᵀ).
    pub kind: String,
    /// Method name (e.g. `gimc-lff`, `gimc-lnys`, `imc-rff`, `gimc-combined`).
    pub method: String,
    /// `multi-label` or `multi-class` (label models only).
    #[serde(default)]
    pub task: Option<String>,
    /// The ridge weight λ of the fit.
    pub lambda: f64,
    /// The feature maps: label models list their maps in concatenation order; completion
    /// models list the row map then the column map.
    pub maps: Vec<MapMeta>,
    /// The transform applied to input rows before the maps (label models, version 2; absent:
    /// none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preprocess: Option<PreprocessMeta>,
    /// The row normalisation applied after the standardisation (label models, version 4:
    /// `l2`; absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normalize: Option<String>,
    /// The factor every row is multiplied by after the normalisation (label models, version
    /// 5; absent: 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_scale: Option<f64>,
    /// The raw input width the model expects, before its kept columns are selected (label
    /// models, version 5; required with `preprocess.columns`; absent: unchecked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_dim: Option<usize>,
    /// Shape (rows, columns) of every tensor in the file.
    pub tensors: BTreeMap<String, [usize; 2]>,
    /// Label (class) names, one per column of W, or empty.
    #[serde(default)]
    pub label_names: Vec<String>,
    /// The input columns that held the labels at fit time (a CSV file's label columns, by
    /// header name, one per column of W), taken out of new rows again; absent when the labels
    /// were not input columns. Optional in every version: a reader that ignores it refuses the
    /// wider rows rather than mis-predicting them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_columns: Option<Vec<String>>,
    /// Hyper-parameters and fit facts (γ, m, iterations, …).
    #[serde(default)]
    pub hyper_parameters: BTreeMap<String, f64>,
    /// The writer, e.g. `gimc 0.1.0`.
    #[serde(default)]
    pub created_by: String,
}

/// One feature map in the metadata: its kind (the registered codec), the prefix of its tensors
/// (`<prefix>.<part>`), its dimensions, and the codec's own fields beside them (e.g. `m`,
/// `kernel`, `normalized` for the built-in kinds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MapMeta {
    /// The map's registered kind (`random-fourier`, `random-cosine`, `nystrom`, or a user's).
    pub kind: String,
    /// Tensor-name prefix (`map.0`, `row_map`, …).
    pub prefix: String,
    /// Input dimension d.
    pub input_dim: usize,
    /// Output dimension D.
    pub output_dim: usize,
    /// The codec's metadata fields.
    #[serde(flatten)]
    pub metadata: JsonMap<String, Value>,
}

/// An input transform in the metadata (version 2).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum PreprocessMeta {
    /// Per-column standardisation x_j ↦ (x_j − mean_j)·scale_j with the training statistics
    /// (tensors `preprocess.mean` and `preprocess.scale`, 1 × input_dim each).
    Standardize {
        /// Input dimension d (the model's).
        input_dim: usize,
        /// Whether the columns are centred (else `preprocess.mean` is all zero: sparse data is
        /// only scaled).
        center: bool,
    },
}

/// The oldest format version that can hold `meta`: 5 with kept columns, tf-idf weights, a
/// row scale or a raw input width, else 4 with a row normalisation, else 3 with a map of a
/// kind other than the built-in ones, else 2 with a random-phase map or a stored
/// standardisation, else 1.
pub(super) fn required_version(meta: &ModelMeta) -> u32 {
    let kind_version = |kind: &str| match kind {
        k if k == RandomFourierKind::KIND || k == NystromKind::KIND => 1,
        k if k == CosineKind::KIND => 2,
        _ => 3,
    };
    let maps = meta.maps.iter().map(|m| kind_version(&m.kind)).max();
    let v5 = meta.row_scale.is_some()
        || meta.input_dim.is_some()
        || meta.tensors.contains_key(COLUMNS_TENSOR)
        || meta.tensors.contains_key(IDF_TENSOR);
    let pre = if v5 {
        5
    } else if meta.normalize.is_some() {
        4
    } else if meta.preprocess.is_some() {
        2
    } else {
        1
    };
    maps.unwrap_or(1).max(pre)
}

pub(super) type RandomFourierKind = gimc_featmap::RandomFourier;
pub(super) type NystromKind = gimc_featmap::Nystrom;
pub(super) type CosineKind = gimc_featmap::RandomCosine;

pub(super) fn base_meta(kind: &str, method: &str, lambda: f64) -> ModelMeta {
    ModelMeta {
        format: FORMAT_NAME.to_string(),
        version: FORMAT_VERSION,
        kind: kind.to_string(),
        method: method.to_string(),
        task: None,
        lambda,
        maps: Vec::new(),
        preprocess: None,
        normalize: None,
        row_scale: None,
        input_dim: None,
        tensors: BTreeMap::new(),
        label_names: Vec::new(),
        label_columns: None,
        hyper_parameters: BTreeMap::new(),
        created_by: format!("gimc {}", env!("CARGO_PKG_VERSION")),
    }
}
