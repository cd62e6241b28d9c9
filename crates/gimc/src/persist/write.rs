//! Collecting a model's tensors and map descriptions into the bytes of a model file.

use std::borrow::Cow;
use std::collections::HashMap;

use gimc_linalg::faer::MatRef;
use gimc_linalg::{Preprocess, Standardizer};
use safetensors::tensor::{Dtype, View};

use super::checks::{check_standardizer, check_v5_parts};
use super::checksum::{TensorEntry, canonical_header, dtype_name, model_checksum};
use super::meta::{
    CHECKSUM_KEY, COLUMNS_TENSOR, FORMAT_NAME, IDF_TENSOR, MapMeta, ModelMeta, PREPROCESS_PREFIX,
    PreprocessMeta, required_version,
};
use crate::error::{GimcError, Result};
use crate::registry::AnyMap;

/// A row-major F64 tensor ready for serialisation.
pub(super) struct Tensor {
    pub(super) shape: Vec<usize>,
    pub(super) bytes: Vec<u8>,
}

impl Tensor {
    pub(super) fn of(m: MatRef<'_, f64>) -> Self {
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

/// Collects tensors and map descriptions while saving.
#[derive(Default)]
pub(super) struct Writer {
    pub(super) tensors: Vec<(String, Tensor)>,
    pub(super) maps: Vec<MapMeta>,
}

impl Writer {
    pub(super) fn add(&mut self, name: String, m: MatRef<'_, f64>) {
        self.tensors.push((name, Tensor::of(m)));
    }

    pub(super) fn add_map<M: AnyMap + ?Sized>(&mut self, prefix: &str, map: &M) -> Result<()> {
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
    pub(super) fn add_preprocess(
        &mut self,
        st: &Standardizer,
        input_dim: usize,
    ) -> Result<PreprocessMeta> {
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
    pub(super) fn add_selection_and_weights(
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

    pub(super) fn finish(self, mut meta: ModelMeta) -> Result<Vec<u8>> {
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
