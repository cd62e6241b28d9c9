//! Model files (DESIGN §1, §7): a fitted [`LabelModel`] or [`CompletionModel`] saved as one
//! [safetensors](https://github.com/huggingface/safetensors) file, readable by any safetensors
//! reader (Python `safetensors`, NumPy, PyTorch, Rust).
//!
//! Maps are stored through their [`MapCodec`]: a registered kind name, the
//! map's tensors and its JSON metadata. Saving works for any map that implements
//! [`AnyMap`] (every `MapCodec` does); loading takes the [`MapRegistry`] whose codecs rebuild
//! the maps, so a user's map round-trips once its codec is registered, and a kind that is not
//! registered is an error naming it. The built-in maps are stored exactly the same way.
//!
//! # Format `gimc-model`, versions 1 to 5
//! - **Tensors**: every matrix as a 2-D little-endian `F64` tensor in row-major order
//!   (element (i, j) of an r × c matrix at position i·c + j):
//!   - label models: `W` (D × L) and, for the i-th feature map (features concatenated in
//!     order i = 0, 1, …), tensors named `map.<i>.<part>`;
//!   - completion models: `W` (D_x × k), `H` (D_y × k), `row_map.<part>`, `col_map.<part>`;
//!   - map parts (written by each map's codec; the built-in ones:) random Fourier features `directions` (d × m, column r = u_r; Φ =
//!     m^{-1/2}[cos XU, sin XU]); random-phase Fourier features (version 2) `directions`
//!     (d × D) and `phases` (1 × D; Φ = √(2/D) cos(XU + 1bᵀ)); Nyström `landmarks` (m × d,
//!     one landmark per row) and, when the map is normalised, `normalization` (m × m, Φ =
//!     k(X, U)·M; absent means M = I);
//!   - label models with input standardisation (version 2): `preprocess.mean` and
//!     `preprocess.scale` (1 × d each); rows are mapped x_j ↦ (x_j − mean_j)·scale_j before
//!     the feature maps (and before the row normalisation, if any);
//!   - label models that keep some input columns (version 5): `preprocess.columns` (1 × d,
//!     the kept columns' indices into the raw input, strictly increasing, stored as F64);
//!     label models with tf-idf weights (version 5): `preprocess.idf` (1 × d), applied
//!     x_j ↦ x_j·idf_j after the column selection and before the standardisation.
//! - **Metadata**: the safetensors header's `__metadata__` holds `"format": "gimc-model"`,
//!   `"format_version"` and `"gimc"`, a JSON document ([`ModelMeta`]) with the model kind
//!   (`labels` or `completion`), the method name, the task (`multi-label` / `multi-class`), λ,
//!   the maps (kind, prefix, input dimension, output dimension, and the codec's own metadata
//!   fields beside them: m, the kernel and its parameters, normalisation for the built-in
//!   kinds), the input standardisation if any (version 2), the row normalisation if any
//!   (version 4: `"normalize": "l2"`, rows scaled to unit norm after the standardisation), the
//!   row scale if not 1 (version 5: `"row_scale"`, every row multiplied by it last), the raw
//!   input width if recorded (version 5: `"input_dim"`, required with kept columns), the
//!   shape of every tensor, label names (and the input columns that held them, if recorded:
//!   `"label_columns"`), hyper-parameters and the writer; and `"checksum"`,
//!   `sha256:` and the lower-case hex SHA-256 of the tensors (name, dtype, shape and data) and
//!   of the other metadata entries (see "Checksum" below).
//!
//! # Checksum
//! `sha256:` followed by the lower-case hex SHA-256 of this sequence, where every string or
//! byte run is written as its length (u64, little-endian) and then its bytes: the number of
//! tensors (u64, little-endian); for each tensor, in byte order of the names, its name, its
//! dtype as in the header (`F64`), its shape (decimal dimensions joined by `,`, e.g. `3,4`) and
//! its data; the number of `__metadata__` entries other than `checksum` (u64, little-endian);
//! for each of them, in byte order of the keys, the key and the value. The layout of the
//! header (its whitespace, the order of its entries, the data offsets) is not hashed; the
//! loader checks it separately.
//!
//! A file is written with the oldest version that holds it: 1 with only `random-fourier` and
//! `nystrom` maps, 2 with a random-phase map (`random-cosine`) or a stored standardisation, 3
//! with a map of any other registered kind (a user's map), 4 with a row normalisation, 5 with
//! kept columns, tf-idf weights, a row scale or a recorded raw input width. Readers of older
//! versions keep reading every file they can understand (and refuse the newer ones, whose rows
//! they would transform wrongly); this crate reads all five.
//!
//! Loading checks the format name and version, that every tensor is present with dtype F64 and
//! the shape the metadata states, that the shapes are consistent (map input dimensions, W's
//! rows = Σ map output dimensions, label names one per column, standardisation and idf vectors
//! of the model's input dimension, one kept column per model input, kept columns strictly
//! increasing integers below the raw input width), that every value is finite, idf weights
//! and the row scale positive.
//! A truncated, corrupted or foreign file is an error ([`GimcError::ModelFormat`]), never a
//! panic. Every file this crate writes carries a checksum, verified on load before anything
//! else is read from the file: a file whose bytes changed after it was written (a flipped bit,
//! an edited metadata field) is refused with [`GimcError::ModelChecksum`]. Files written before
//! checksums existed have none and load as before; the metadata holds no entries other than
//! `format`, `format_version`, `gimc` and `checksum`, so a damaged `checksum` key is refused
//! rather than read as an absent checksum. The checksum is not a signature: someone who edits
//! a file on purpose can compute a new one. `crates/gimc/MODEL_FORMAT.md` repeats this
//! description with a JSON example and Python readers of the matrices and of the checksum.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use gimc_featmap::FeatureMap;
use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::{Preprocess, RowNorm, Standardizer, TfIdf};
use safetensors::tensor::{Dtype, SafeTensors, View};
use serde::{Deserialize, Serialize};
use serde_json::{Map as JsonMap, Value};
use sha2::{Digest, Sha256};

use crate::completion::model::CompletionModel;
use crate::error::{GimcError, Result};
use crate::labels::data::Task;
use crate::labels::model::LabelModel;
use crate::registry::{AnyMap, BoxedMap, MapCodec, MapRecord, MapRegistry};

/// The format name stored in every model file.
pub const FORMAT_NAME: &str = "gimc-model";
/// The newest format version this crate writes and reads. Every file is written with the
/// oldest version that can hold it (see the module documentation).
pub const FORMAT_VERSION: u32 = 5;

/// The prefix of the input-transform tensors (`preprocess.mean`, `preprocess.scale`,
/// `preprocess.columns`, `preprocess.idf`).
pub const PREPROCESS_PREFIX: &str = "preprocess";

/// The tensor of the kept input columns (version 5).
const COLUMNS_TENSOR: &str = "preprocess.columns";
/// The tensor of the tf-idf weights (version 5).
const IDF_TENSOR: &str = "preprocess.idf";

/// The `__metadata__` entry holding the checksum (see the module documentation).
pub const CHECKSUM_KEY: &str = "checksum";
/// The prefix of a checksum's value: the hash function.
const CHECKSUM_PREFIX: &str = "sha256:";
/// The `__metadata__` entries a model file may hold.
const METADATA_KEYS: [&str; 4] = ["format", "format_version", "gimc", CHECKSUM_KEY];

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

/// A row-major F64 tensor ready for serialisation.
struct Tensor {
    shape: Vec<usize>,
    bytes: Vec<u8>,
}

impl Tensor {
    fn of(m: MatRef<'_, f64>) -> Self {
        let mut bytes = Vec::with_capacity(m.nrows() * m.ncols() * 8);
        for i in 0..m.nrows() {
            for j in 0..m.ncols() {
                bytes.extend_from_slice(&m[(i, j)].to_le_bytes());
            }
        }
        Self {
            shape: vec![m.nrows(), m.ncols()],
            bytes,
        }
    }
}

impl View for &Tensor {
    fn dtype(&self) -> Dtype {
        Dtype::F64
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(&self.bytes)
    }
    fn data_len(&self) -> usize {
        self.bytes.len()
    }
}

/// One tensor as the checksum sees it.
struct TensorEntry<'a> {
    name: &'a str,
    dtype: String,
    shape: &'a [usize],
    data: &'a [u8],
}

/// The header's name of a dtype (`F64`).
fn dtype_name(dtype: Dtype) -> String {
    format!("{dtype:?}")
}

/// The checksum of a model file's tensors and `__metadata__` entries (the `checksum` entry
/// itself left out), as the module documentation defines it.
fn model_checksum<'a>(
    tensors: impl IntoIterator<Item = TensorEntry<'a>>,
    metadata: &HashMap<String, String>,
) -> String {
    fn field(h: &mut Sha256, bytes: &[u8]) {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    let mut tensors: Vec<TensorEntry<'a>> = tensors.into_iter().collect();
    tensors.sort_by(|a, b| a.name.cmp(b.name));
    let mut h = Sha256::new();
    h.update((tensors.len() as u64).to_le_bytes());
    for t in &tensors {
        field(&mut h, t.name.as_bytes());
        field(&mut h, t.dtype.as_bytes());
        let shape: Vec<String> = t.shape.iter().map(usize::to_string).collect();
        field(&mut h, shape.join(",").as_bytes());
        field(&mut h, t.data);
    }
    let entries: BTreeMap<&str, &str> = metadata
        .iter()
        .filter(|(k, _)| k.as_str() != CHECKSUM_KEY)
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    h.update((entries.len() as u64).to_le_bytes());
    for (k, v) in entries {
        field(&mut h, k.as_bytes());
        field(&mut h, v.as_bytes());
    }
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    format!("{CHECKSUM_PREFIX}{hex}")
}

/// Collects tensors and map descriptions while saving.
#[derive(Default)]
struct Writer {
    tensors: Vec<(String, Tensor)>,
    maps: Vec<MapMeta>,
}

impl Writer {
    fn add(&mut self, name: String, m: MatRef<'_, f64>) {
        self.tensors.push((name, Tensor::of(m)));
    }

    fn add_map<M: AnyMap + ?Sized>(&mut self, prefix: &str, map: &M) -> Result<()> {
        let rec = map.encode()?;
        let bad = |reason: String| GimcError::InvalidInput {
            what: "map to save",
            reason: format!("{} map: {reason}", rec.kind),
        };
        if rec.kind != map.kind() || rec.kind.is_empty() {
            return Err(bad(format!("its record has kind {:?}", rec.kind)));
        }
        if rec.input_dim != map.input_dim() || rec.output_dim != map.output_dim() {
            return Err(bad("its record's dimensions differ from the map's".into()));
        }
        for reserved in ["kind", "prefix", "input_dim", "output_dim"] {
            if rec.metadata.contains_key(reserved) {
                return Err(bad(format!("metadata field {reserved:?} is reserved")));
            }
        }
        for (part, m) in &rec.tensors {
            if part.is_empty() || part.contains('.') {
                return Err(bad(format!(
                    "tensor part name {part:?} is empty or has a '.'"
                )));
            }
            self.add(format!("{prefix}.{part}"), m.as_ref());
        }
        self.maps.push(MapMeta {
            kind: rec.kind,
            prefix: prefix.to_string(),
            input_dim: rec.input_dim,
            output_dim: rec.output_dim,
            metadata: rec.metadata,
        });
        Ok(())
    }

    /// Stores a standardisation of `input_dim` columns (checked: lengths and finite values).
    fn add_preprocess(&mut self, st: &Standardizer, input_dim: usize) -> Result<PreprocessMeta> {
        let bad = |reason: String| GimcError::InvalidInput {
            what: "standardisation to save",
            reason,
        };
        if st.mean.len() != input_dim || st.scale.len() != input_dim {
            return Err(bad(format!(
                "{} means and {} scales for a model of input dimension {input_dim}",
                st.mean.len(),
                st.scale.len()
            )));
        }
        check_standardizer(st).map_err(bad)?;
        for (name, v) in [("mean", &st.mean), ("scale", &st.scale)] {
            self.add(
                format!("{PREPROCESS_PREFIX}.{name}"),
                MatRef::from_row_major_slice(v, 1, v.len()),
            );
        }
        Ok(PreprocessMeta::Standardize {
            input_dim,
            center: st.center,
        })
    }

    /// Stores the version-5 parts of `pre` for a model of input dimension `d` (checked as on
    /// load): the kept columns and the tf-idf weights as tensors, the row scale and the raw
    /// input width in `meta`.
    fn add_selection_and_weights(
        &mut self,
        pre: &Preprocess,
        d: usize,
        meta: &mut ModelMeta,
    ) -> Result<()> {
        check_v5_parts(pre, d).map_err(|reason| GimcError::InvalidInput {
            what: "input transform to save",
            reason,
        })?;
        if let Some(cols) = &pre.columns {
            let v: Vec<f64> = cols.iter().map(|&c| c as f64).collect();
            self.add(
                COLUMNS_TENSOR.to_string(),
                MatRef::from_row_major_slice(&v, 1, v.len()),
            );
        }
        if let Some(tf) = &pre.tfidf {
            self.add(
                IDF_TENSOR.to_string(),
                MatRef::from_row_major_slice(&tf.idf, 1, tf.idf.len()),
            );
        }
        meta.input_dim = pre.input_dim;
        meta.row_scale = (pre.row_scale != 1.0).then_some(pre.row_scale);
        Ok(())
    }

    fn finish(self, mut meta: ModelMeta) -> Result<Vec<u8>> {
        meta.maps = self.maps;
        meta.tensors = self
            .tensors
            .iter()
            .map(|(n, t)| (n.clone(), [t.shape[0], t.shape[1]]))
            .collect();
        meta.version = required_version(&meta);
        let json = serde_json::to_string(&meta).map_err(|e| GimcError::InvalidInput {
            what: "model metadata",
            reason: e.to_string(),
        })?;
        let mut header: HashMap<String, String> = [
            ("format".to_string(), FORMAT_NAME.to_string()),
            ("format_version".to_string(), meta.version.to_string()),
            ("gimc".to_string(), json),
        ]
        .into_iter()
        .collect();
        let checksum = model_checksum(
            self.tensors.iter().map(|(n, t)| TensorEntry {
                name: n,
                dtype: dtype_name(Dtype::F64),
                shape: &t.shape,
                data: &t.bytes,
            }),
            &header,
        );
        header.insert(CHECKSUM_KEY.to_string(), checksum);
        let bytes = safetensors::serialize(
            self.tensors.iter().map(|(n, t)| (n.clone(), t)),
            Some(header),
        )
        .map_err(|e| GimcError::InvalidInput {
            what: "model to save",
            reason: e.to_string(),
        })?;
        canonical_header(bytes)
    }
}

/// The file with its safetensors header rewritten with sorted keys (the metadata map is a
/// `HashMap`, whose order changes from run to run), so that the same model gives the same
/// bytes. The header keeps its length: only the order of its entries changes.
fn canonical_header(mut bytes: Vec<u8>) -> Result<Vec<u8>> {
    let bad = |reason: &str| GimcError::InvalidInput {
        what: "model to save",
        reason: reason.to_string(),
    };
    let len = bytes
        .get(..8)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .map(u64::from_le_bytes)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| bad("no safetensors header"))?;
    let end = 8usize
        .checked_add(len)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| bad("safetensors header out of range"))?;
    // serde_json's maps are ordered by key: parsing and writing again sorts every object
    let value: serde_json::Value =
        serde_json::from_slice(&bytes[8..end]).map_err(|e| bad(&e.to_string()))?;
    let sorted = serde_json::to_string(&value).map_err(|e| bad(&e.to_string()))?;
    if sorted.len() > len {
        return Err(bad("the sorted header is longer than the header"));
    }
    let header = &mut bytes[8..end];
    header.fill(b' ');
    header[..sorted.len()].copy_from_slice(sorted.as_bytes());
    Ok(bytes)
}

/// The oldest format version that can hold `meta`: 5 with kept columns, tf-idf weights, a
/// row scale or a raw input width, else 4 with a row normalisation, else 3 with a map of a
/// kind other than the built-in ones, else 2 with a random-phase map or a stored
/// standardisation, else 1.
fn required_version(meta: &ModelMeta) -> u32 {
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

type RandomFourierKind = gimc_featmap::RandomFourier;
type NystromKind = gimc_featmap::Nystrom;
type CosineKind = gimc_featmap::RandomCosine;

/// Checks a standardisation's own consistency: equally long vectors, every value finite,
/// scales > 0, and an all-zero mean when it does not centre.
fn check_standardizer(st: &Standardizer) -> std::result::Result<(), String> {
    if st.mean.len() != st.scale.len() {
        return Err(format!(
            "{} means but {} scales",
            st.mean.len(),
            st.scale.len()
        ));
    }
    if let Some(j) = st.mean.iter().position(|v| !v.is_finite()) {
        return Err(format!("mean {j} is not finite ({})", st.mean[j]));
    }
    if let Some(j) = st.scale.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
        return Err(format!(
            "scale {j} is not finite and positive ({})",
            st.scale[j]
        ));
    }
    if !st.center && st.mean.iter().any(|&v| v != 0.0) {
        return Err("a non-centring standardisation has a non-zero mean".into());
    }
    Ok(())
}

/// Checks the version-5 parts of an input transform for a model of input dimension `d`: kept
/// columns (with the raw input width, one per model input, strictly increasing, below the
/// width), a raw width equal to `d` without kept columns, tf-idf weights (one per model
/// input, finite, > 0) and the row scale (finite, > 0).
fn check_v5_parts(pre: &Preprocess, d: usize) -> std::result::Result<(), String> {
    match (&pre.columns, pre.input_dim) {
        (Some(_), None) => {
            return Err("kept input columns need the raw input width (input_dim)".into());
        }
        (Some(cols), Some(width)) => {
            if cols.len() != d {
                return Err(format!(
                    "{} kept columns for a model of input dimension {d}",
                    cols.len()
                ));
            }
            if let Some(&c) = cols.iter().find(|&&c| c >= width) {
                return Err(format!(
                    "kept column {c} is out of range for {width} input columns"
                ));
            }
            if let Some(w) = cols.windows(2).find(|w| w[0] >= w[1]) {
                return Err(format!(
                    "kept columns must be strictly increasing ({} then {})",
                    w[0], w[1]
                ));
            }
        }
        (None, Some(width)) if width != d => {
            return Err(format!(
                "raw input width {width} without kept columns, but the model's input \
                 dimension is {d}"
            ));
        }
        (None, _) => {}
    }
    if let Some(tf) = &pre.tfidf {
        if tf.idf.len() != d {
            return Err(format!(
                "{} tf-idf weights for a model of input dimension {d}",
                tf.idf.len()
            ));
        }
        if let Some(j) = tf.idf.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
            return Err(format!(
                "tf-idf weight {j} is not finite and positive ({})",
                tf.idf[j]
            ));
        }
    }
    if !(pre.row_scale.is_finite() && pre.row_scale > 0.0) {
        return Err(format!(
            "the row scale must be finite and positive, got {}",
            pre.row_scale
        ));
    }
    Ok(())
}

fn base_meta(kind: &str, method: &str, lambda: f64) -> ModelMeta {
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

/// Serialises a label model to the bytes of a model file.
pub fn label_model_to_bytes<M: AnyMap>(model: &LabelModel<M>) -> Result<Vec<u8>> {
    label_model_to_bytes_with_preprocess(model, &Preprocess::default())
}

/// Serialises a label model and the transform its input rows need (kept columns, tf-idf
/// weights, standardisation, row normalisation, row scale) to the bytes of a model file. A
/// transform without kept columns, tf-idf weights, a row scale other than 1 or a raw input
/// width is written exactly as by the format versions before 5. Errors unless the transform
/// fits the model: a standardisation and tf-idf weights of the model's input dimension with
/// finite values (scales and weights > 0), kept columns (one per model input, strictly
/// increasing, below `input_dim`, which they require), a raw width equal to the model's input
/// dimension without kept columns, and a finite positive row scale.
pub fn label_model_to_bytes_with_preprocess<M: AnyMap>(
    model: &LabelModel<M>,
    preprocess: &Preprocess,
) -> Result<Vec<u8>> {
    let mut wr = Writer::default();
    for (i, m) in model.maps().iter().enumerate() {
        wr.add_map(&format!("map.{i}"), m)?;
    }
    wr.add("W".to_string(), model.w());
    let mut meta = base_meta("labels", model.method(), model.lambda());
    wr.add_selection_and_weights(preprocess, model.input_dim(), &mut meta)?;
    if let Some(st) = &preprocess.standardizer {
        meta.preprocess = Some(wr.add_preprocess(st, model.input_dim())?);
    }
    if preprocess.row_norm != RowNorm::None {
        meta.normalize = Some(preprocess.row_norm.name().to_string());
    }
    meta.task = Some(model.task().name().to_string());
    meta.label_names = model.label_names().to_vec();
    meta.label_columns =
        (!model.label_columns().is_empty()).then(|| model.label_columns().to_vec());
    meta.hyper_parameters = model.hyper_parameters().clone();
    wr.finish(meta)
}

/// Serialises a completion model to the bytes of a model file.
pub fn completion_model_to_bytes<MR: AnyMap, MC: AnyMap>(
    model: &CompletionModel<MR, MC>,
) -> Result<Vec<u8>> {
    let mut wr = Writer::default();
    wr.add_map("row_map", model.row_map())?;
    wr.add_map("col_map", model.col_map())?;
    wr.add("W".to_string(), model.w());
    wr.add("H".to_string(), model.h());
    wr.finish(base_meta("completion", model.method(), model.lambda()))
}

/// Writes a model file through the one output writer ([`gimc_data::output`]): a temporary
/// file created exclusively beside `path`, synced, then renamed over it.
fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    Ok(gimc_data::output::write_file(path, bytes, &[])?)
}

/// Reads a model file whole, after checking that it is a regular file (not a device such as
/// `/dev/zero`, which would be read until memory runs out) small enough for the memory
/// available.
fn read_file(path: &Path) -> Result<Vec<u8>> {
    let io = |source| GimcError::Io {
        path: path.display().to_string(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(GimcError::ModelFormat {
            path: path.display().to_string(),
            reason: "not a regular file".into(),
        });
    }
    let mut t = gimc_linalg::memory::Tally::new("reading the model file", "the file");
    t.bytes(format!("{} (its size)", path.display()), meta.len());
    gimc_linalg::memory::check_fits(&t.finish(), gimc_linalg::memory::MemoryBudget::Detect)
        .map_err(gimc_linalg::LinalgError::from)?;
    std::fs::read(path).map_err(io)
}

/// Saves a label model to `path`: written to a temporary file beside it, synced, then renamed
/// over it, so `path` holds the old file or the whole new one, never a cut file; a directory
/// at `path` is refused.
pub fn save_label_model<M: AnyMap>(model: &LabelModel<M>, path: &Path) -> Result<()> {
    write_file(path, &label_model_to_bytes(model)?)
}

/// Saves a label model with the transform of its input rows (see
/// [`label_model_to_bytes_with_preprocess`]).
pub fn save_label_model_with_preprocess<M: AnyMap>(
    model: &LabelModel<M>,
    preprocess: &Preprocess,
    path: &Path,
) -> Result<()> {
    write_file(
        path,
        &label_model_to_bytes_with_preprocess(model, preprocess)?,
    )
}

/// Saves a completion model to `path`.
pub fn save_completion_model<MR: AnyMap, MC: AnyMap>(
    model: &CompletionModel<MR, MC>,
    path: &Path,
) -> Result<()> {
    write_file(path, &completion_model_to_bytes(model)?)
}

/// Loads a label model from `path`, rebuilding its maps with the codecs of `registry`. A file
/// that stores an input transform (kept columns, tf-idf weights, standardisation, row
/// normalisation or row scale) is refused (its model would silently mis-predict raw rows): load
/// it with [`load_label_model_with_preprocess`].
pub fn load_label_model(path: &Path, registry: &MapRegistry) -> Result<LabelModel> {
    let bytes = read_file(path)?;
    without_preprocess(label_model_from_bytes_named(
        &bytes,
        &path.display().to_string(),
        registry,
    )?)
}

/// Loads a label model and the transform its input rows need (the identity for files without
/// one, e.g. every version-1 file). Apply it with [`Preprocess::apply`] before
/// [`LabelModel::scores`].
pub fn load_label_model_with_preprocess(
    path: &Path,
    registry: &MapRegistry,
) -> Result<(LabelModel, Preprocess)> {
    let bytes = read_file(path)?;
    label_model_from_bytes_named(&bytes, &path.display().to_string(), registry)
}

/// Loads a completion model from `path`, rebuilding its maps with the codecs of `registry`.
pub fn load_completion_model(path: &Path, registry: &MapRegistry) -> Result<CompletionModel> {
    let bytes = read_file(path)?;
    completion_model_from_bytes_named(&bytes, &path.display().to_string(), registry)
}

/// Reads only the metadata of the model file at `path` (after checking the file's structure).
pub fn read_model_meta(path: &Path) -> Result<ModelMeta> {
    let bytes = read_file(path)?;
    let name = path.display().to_string();
    Ok(Reader::new(&bytes, &name)?.meta)
}

/// A label model from the bytes of a model file (refused if the file stores an input
/// transform, as in [`load_label_model`]).
pub fn label_model_from_bytes(bytes: &[u8], registry: &MapRegistry) -> Result<LabelModel> {
    without_preprocess(label_model_from_bytes_named(bytes, "<memory>", registry)?)
}

/// A label model and its input transform (the identity if none is stored) from the bytes of
/// a model file.
pub fn label_model_with_preprocess_from_bytes(
    bytes: &[u8],
    registry: &MapRegistry,
) -> Result<(LabelModel, Preprocess)> {
    label_model_from_bytes_named(bytes, "<memory>", registry)
}

fn without_preprocess((model, pre): (LabelModel, Preprocess)) -> Result<LabelModel> {
    if pre.is_identity() {
        return Ok(model);
    }
    Err(GimcError::InvalidInput {
        what: "model file",
        reason: "the model transforms its input rows (kept columns, tf-idf weights, \
                 standardisation, row normalisation or row scale); load it with \
                 load_label_model_with_preprocess and transform the rows first"
            .into(),
    })
}

/// A completion model from the bytes of a model file.
pub fn completion_model_from_bytes(
    bytes: &[u8],
    registry: &MapRegistry,
) -> Result<CompletionModel> {
    completion_model_from_bytes_named(bytes, "<memory>", registry)
}

/// A parsed, structurally valid file.
struct Reader<'a> {
    st: SafeTensors<'a>,
    meta: ModelMeta,
    name: String,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8], name: &str) -> Result<Self> {
        let bad = |reason: String| GimcError::ModelFormat {
            path: name.to_string(),
            reason,
        };
        let st = SafeTensors::deserialize(bytes)
            .map_err(|e| bad(format!("not a readable safetensors file ({e})")))?;
        let (_, header) = SafeTensors::read_metadata(bytes)
            .map_err(|e| bad(format!("not a readable safetensors file ({e})")))?;
        let Some(md) = header.metadata() else {
            return Err(bad("no __metadata__: not a gimc model file".into()));
        };
        if md.get("format").map(String::as_str) != Some(FORMAT_NAME) {
            return Err(bad(format!(
                "format is {:?}, expected {FORMAT_NAME:?}: not a gimc model file",
                md.get("format")
            )));
        }
        if let Some(key) = md
            .keys()
            .filter(|k| !METADATA_KEYS.contains(&k.as_str()))
            .min()
        {
            return Err(bad(format!(
                "unknown metadata entry {key:?}: the file is damaged or was not written by gimc"
            )));
        }
        if let Some(expected) = md.get(CHECKSUM_KEY) {
            let tensors = st.tensors();
            let found = model_checksum(
                tensors.iter().map(|(n, t)| TensorEntry {
                    name: n,
                    dtype: dtype_name(t.dtype()),
                    shape: t.shape(),
                    data: t.data(),
                }),
                md,
            );
            if *expected != found {
                return Err(GimcError::ModelChecksum {
                    path: name.to_string(),
                    expected: expected.clone(),
                    found,
                });
            }
        }
        let json = md
            .get("gimc")
            .ok_or_else(|| bad("missing the `gimc` metadata entry".into()))?;
        let meta: ModelMeta = serde_json::from_str(json)
            .map_err(|e| bad(format!("metadata is not valid JSON for this format ({e})")))?;
        if meta.format != FORMAT_NAME {
            return Err(bad(format!("metadata format is {:?}", meta.format)));
        }
        if meta.version == 0 || meta.version > FORMAT_VERSION {
            return Err(bad(format!(
                "format version {} is not supported (this build reads 1..={FORMAT_VERSION})",
                meta.version
            )));
        }
        if md.get("format_version").map(String::as_str) != Some(&meta.version.to_string()) {
            return Err(bad("format_version disagrees with the metadata".into()));
        }
        let needed = required_version(&meta);
        if needed > meta.version {
            return Err(bad(format!(
                "a version-{} file uses version-{needed} features ({})",
                meta.version,
                match needed {
                    5 => "kept columns, tf-idf weights, a row scale or a raw input width",
                    4 => "a row normalisation",
                    3 => "a map kind that is not built in",
                    _ => "random-phase map or standardisation",
                }
            )));
        }
        if !meta.lambda.is_finite() || meta.lambda < 0.0 {
            return Err(bad(format!("invalid lambda {}", meta.lambda)));
        }
        Ok(Self {
            st,
            meta,
            name: name.to_string(),
        })
    }

    fn bad(&self, reason: impl Into<String>) -> GimcError {
        GimcError::ModelFormat {
            path: self.name.clone(),
            reason: reason.into(),
        }
    }

    /// The tensor `name` as a matrix of shape `shape` (checked against the file and the
    /// metadata), with every value finite.
    fn matrix(&self, name: &str, shape: (usize, usize)) -> Result<Mat<f64>> {
        let t = self
            .st
            .tensor(name)
            .map_err(|_| self.bad(format!("tensor {name} is missing")))?;
        if t.dtype() != Dtype::F64 {
            return Err(self.bad(format!("tensor {name} has dtype {:?}, not F64", t.dtype())));
        }
        if t.shape() != [shape.0, shape.1] {
            return Err(self.bad(format!(
                "tensor {name} has shape {:?}, expected [{}, {}]",
                t.shape(),
                shape.0,
                shape.1
            )));
        }
        if self.meta.tensors.get(name) != Some(&[shape.0, shape.1]) {
            return Err(self.bad(format!(
                "the metadata's shape of tensor {name} disagrees with the file"
            )));
        }
        let data = t.data();
        let (r, c) = shape;
        if r.checked_mul(c).and_then(|n| n.checked_mul(8)) != Some(data.len()) {
            return Err(self.bad(format!("tensor {name} has {} bytes", data.len())));
        }
        let vals: Vec<f64> = data
            .chunks_exact(8)
            .map(|b| {
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                f64::from_le_bytes(a)
            })
            .collect();
        if let Some(p) = vals.iter().position(|v| !v.is_finite()) {
            return Err(self.bad(format!(
                "tensor {name} has a non-finite value at ({}, {})",
                p / c.max(1),
                p % c.max(1)
            )));
        }
        Ok(Mat::from_fn(r, c, |i, j| vals[i * c + j]))
    }

    /// The map of `meta`, rebuilt by the codec `registry` has for its kind from its tensors
    /// (`<prefix>.<part>`, shapes as the metadata states, values finite) and metadata.
    fn map(&self, meta: &MapMeta, registry: &MapRegistry) -> Result<BoxedMap> {
        let mut record = MapRecord::new(meta.kind.clone(), meta.input_dim, meta.output_dim);
        record.metadata = meta.metadata.clone();
        let head = format!("{}.", meta.prefix);
        for (name, shape) in &self.meta.tensors {
            if let Some(part) = name.strip_prefix(&head) {
                let m = self.matrix(name, (shape[0], shape[1]))?;
                record.tensors.insert(part.to_string(), m);
            }
        }
        registry
            .decode(&record)
            .map_err(|e| self.bad(format!("map {}: {e}", meta.prefix)))
    }

    /// The stored input transform: the kept columns and the raw input width, the tf-idf
    /// weights, the standardisation (if any; both vectors of length d, finite, scales > 0,
    /// mean zero when not centring), the row normalisation (a known name) and the row scale,
    /// checked against the model's input dimension `d` as [`check_v5_parts`] says.
    fn preprocess(&self, d: usize) -> Result<Preprocess> {
        let row_norm = match self.meta.normalize.as_deref() {
            None => RowNorm::None,
            Some(name) => match RowNorm::from_name(name) {
                Some(n) if n != RowNorm::None => n,
                _ => return Err(self.bad(format!("unknown row normalisation {name:?}"))),
            },
        };
        let columns = match self.meta.tensors.get(COLUMNS_TENSOR) {
            None => None,
            Some(&[_, k]) => {
                let m = self.matrix(COLUMNS_TENSOR, (1, k))?;
                let cols = (0..k)
                    .map(|j| {
                        let v = m[(0, j)];
                        // exact non-negative integers only (f64 holds every index < 2^53)
                        if v >= 0.0 && v.fract() == 0.0 && v < 9.007_199_254_740_992e15 {
                            Ok(v as usize)
                        } else {
                            Err(self.bad(format!("kept column {j} is not an index ({v})")))
                        }
                    })
                    .collect::<Result<Vec<usize>>>()?;
                Some(cols)
            }
        };
        let tfidf = match self.meta.tensors.get(IDF_TENSOR) {
            None => None,
            Some(&[_, k]) => {
                let m = self.matrix(IDF_TENSOR, (1, k))?;
                Some(TfIdf {
                    idf: (0..k).map(|j| m[(0, j)]).collect(),
                })
            }
        };
        let pre = Preprocess {
            columns,
            input_dim: self.meta.input_dim,
            tfidf,
            standardizer: self.standardizer(d)?,
            row_norm,
            row_scale: self.meta.row_scale.unwrap_or(1.0),
        };
        check_v5_parts(&pre, d).map_err(|r| self.bad(format!("input transform: {r}")))?;
        Ok(pre)
    }

    /// The stored standardisation (if any), checked as [`Reader::preprocess`] says.
    fn standardizer(&self, d: usize) -> Result<Option<Standardizer>> {
        let Some(PreprocessMeta::Standardize { input_dim, center }) = self.meta.preprocess else {
            return Ok(None);
        };
        if input_dim != d {
            return Err(self.bad(format!(
                "the standardisation is for {input_dim} columns, but the model's input \
                 dimension is {d}"
            )));
        }
        let row = |name: &str| -> Result<Vec<f64>> {
            let m = self.matrix(&format!("{PREPROCESS_PREFIX}.{name}"), (1, d))?;
            Ok((0..d).map(|j| m[(0, j)]).collect())
        };
        let st = Standardizer {
            mean: row("mean")?,
            scale: row("scale")?,
            center,
        };
        check_standardizer(&st).map_err(|r| self.bad(format!("standardisation: {r}")))?;
        Ok(Some(st))
    }

    fn expect_kind(&self, kind: &str) -> Result<()> {
        if self.meta.kind != kind {
            return Err(self.bad(format!(
                "holds a {:?} model, not a {kind:?} model",
                self.meta.kind
            )));
        }
        Ok(())
    }
}

fn label_model_from_bytes_named(
    bytes: &[u8],
    name: &str,
    registry: &MapRegistry,
) -> Result<(LabelModel, Preprocess)> {
    let rd = Reader::new(bytes, name)?;
    rd.expect_kind("labels")?;
    let task = match rd.meta.task.as_deref() {
        Some("multi-label") => Task::MultiLabel,
        Some("multi-class") => Task::MultiClass,
        other => return Err(rd.bad(format!("unknown task {other:?}"))),
    };
    if rd.meta.maps.is_empty() {
        return Err(rd.bad("no feature map"));
    }
    let maps = rd
        .meta
        .maps
        .iter()
        .map(|m| rd.map(m, registry))
        .collect::<Result<Vec<_>>>()?;
    let d: usize = maps.iter().map(FeatureMap::output_dim).sum();
    let l = rd
        .meta
        .tensors
        .get("W")
        .map(|s| s[1])
        .ok_or_else(|| rd.bad("tensor W is missing"))?;
    let w = rd.matrix("W", (d, l))?;
    let mut model =
        LabelModel::new(maps, w, task, rd.meta.lambda).map_err(|e| rd.bad(e.to_string()))?;
    model
        .set_label_names(rd.meta.label_names.clone())
        .map_err(|e| rd.bad(e.to_string()))?;
    if let Some(cols) = &rd.meta.label_columns {
        if cols.len() != model.n_labels() {
            return Err(rd.bad(format!(
                "{} label columns for {} labels",
                cols.len(),
                model.n_labels()
            )));
        }
        model.set_label_columns(cols.clone());
    }
    model.set_method(rd.meta.method.clone());
    *model.hyper_parameters_mut() = rd.meta.hyper_parameters.clone();
    let pre = rd.preprocess(model.input_dim())?;
    Ok((model, pre))
}

fn completion_model_from_bytes_named(
    bytes: &[u8],
    name: &str,
    registry: &MapRegistry,
) -> Result<CompletionModel> {
    let rd = Reader::new(bytes, name)?;
    rd.expect_kind("completion")?;
    if rd.meta.preprocess.is_some()
        || rd.meta.normalize.is_some()
        || rd.meta.row_scale.is_some()
        || rd.meta.input_dim.is_some()
        || rd
            .meta
            .tensors
            .keys()
            .any(|t| t.starts_with(&format!("{PREPROCESS_PREFIX}.")))
    {
        return Err(rd.bad("a completion model cannot store an input transform"));
    }
    let [row_meta, col_meta] = rd.meta.maps.as_slice() else {
        return Err(rd.bad("a completion model needs exactly two maps (row, column)"));
    };
    let row_map = rd.map(row_meta, registry)?;
    let col_map = rd.map(col_meta, registry)?;
    let k = rd
        .meta
        .tensors
        .get("W")
        .map(|s| s[1])
        .ok_or_else(|| rd.bad("tensor W is missing"))?;
    let w = rd.matrix("W", (row_map.output_dim(), k))?;
    let h = rd.matrix("H", (col_map.output_dim(), k))?;
    let mut model = CompletionModel::new(row_map, col_map, w, h, rd.meta.lambda)
        .map_err(|e| rd.bad(e.to_string()))?;
    model.set_method(rd.meta.method.clone());
    Ok(model)
}
