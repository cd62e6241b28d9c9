//! Model files (DESIGN §1, §7): a fitted [`LabelModel`] or [`CompletionModel`] saved as one
//! [safetensors](https://github.com/huggingface/safetensors) file, readable by any safetensors
//! reader (Python `safetensors`, NumPy, PyTorch, Rust).
//!
//! Maps are stored through their [`MapCodec`](crate::MapCodec): a registered kind name, the
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

mod checks;
mod checksum;
mod meta;
mod read;
mod write;

pub use meta::{
    CHECKSUM_KEY, FORMAT_NAME, FORMAT_VERSION, MapMeta, ModelMeta, PREPROCESS_PREFIX,
    PreprocessMeta,
};

use std::path::Path;

use gimc_linalg::{Preprocess, RowNorm};

use crate::completion::model::CompletionModel;
use crate::error::{GimcError, Result};
use crate::labels::model::LabelModel;
use crate::registry::{AnyMap, MapRegistry};
use meta::base_meta;
use read::{Reader, completion_model_from_bytes_named, label_model_from_bytes_named};
use write::Writer;

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
pub(super) fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    Ok(gimc_data::output::write_file(path, bytes, &[])?)
}

/// Reads a model file whole, after checking that it is a regular file (not a device such as
/// `/dev/zero`, which would be read until memory runs out) small enough for the memory
/// available.
pub(super) fn read_file(path: &Path) -> Result<Vec<u8>> {
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

pub(super) fn without_preprocess((model, pre): (LabelModel, Preprocess)) -> Result<LabelModel> {
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
