//! Reading a model file: the structural checks, the checksum, the metadata, and the models
//! rebuilt from it.

use gimc_featmap::FeatureMap;
use gimc_linalg::faer::Mat;
use gimc_linalg::{Preprocess, RowNorm, Standardizer, TfIdf};
use safetensors::tensor::{Dtype, SafeTensors};

use super::checks::{check_standardizer, check_v5_parts};
use super::checksum::{TensorEntry, dtype_name, model_checksum};
use super::meta::{
    CHECKSUM_KEY, COLUMNS_TENSOR, FORMAT_NAME, FORMAT_VERSION, IDF_TENSOR, METADATA_KEYS, MapMeta,
    ModelMeta, PREPROCESS_PREFIX, PreprocessMeta, required_version,
};
use crate::completion::model::{CompletionModel, CompletionParts};
use crate::error::{GimcError, Result};
use crate::labels::data::Task;
use crate::labels::model::LabelModel;
use crate::registry::{BoxedMap, MapRecord, MapRegistry};

/// A parsed, structurally valid file.
pub(super) struct Reader<'a> {
    pub(super) st: SafeTensors<'a>,
    pub(super) meta: ModelMeta,
    pub(super) name: String,
}

impl<'a> Reader<'a> {
    pub(super) fn new(bytes: &'a [u8], name: &str) -> Result<Self> {
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

    pub(super) fn bad(&self, reason: impl Into<String>) -> GimcError {
        GimcError::ModelFormat {
            path: self.name.clone(),
            reason: reason.into(),
        }
    }

    /// The tensor `name` as a matrix of shape `shape` (checked against the file and the
    /// metadata), with every value finite.
    pub(super) fn matrix(&self, name: &str, shape: (usize, usize)) -> Result<Mat<f64>> {
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
    pub(super) fn map(&self, meta: &MapMeta, registry: &MapRegistry) -> Result<BoxedMap> {
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
    pub(super) fn preprocess(&self, d: usize) -> Result<Preprocess> {
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
    pub(super) fn standardizer(&self, d: usize) -> Result<Option<Standardizer>> {
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

    pub(super) fn expect_kind(&self, kind: &str) -> Result<()> {
        if self.meta.kind != kind {
            return Err(self.bad(format!(
                "holds a {:?} model, not a {kind:?} model",
                self.meta.kind
            )));
        }
        Ok(())
    }
}

pub(super) fn label_model_from_bytes_named(
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

pub(super) fn completion_model_from_bytes_named(
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
    let mut model = CompletionModel::new(CompletionParts {
        row_map,
        col_map,
        w,
        h,
        lambda: rd.meta.lambda,
    })
    .map_err(|e| rd.bad(e.to_string()))?;
    model.set_method(rd.meta.method.clone());
    Ok(model)
}
