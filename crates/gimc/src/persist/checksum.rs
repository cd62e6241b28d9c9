//! The checksum of a model file's tensors and metadata, and the canonical header that makes
//! the same model give the same bytes.

use std::collections::{BTreeMap, HashMap};

use safetensors::tensor::Dtype;
use sha2::{Digest, Sha256};

use super::meta::{CHECKSUM_KEY, CHECKSUM_PREFIX};
use crate::error::{GimcError, Result};

/// One tensor as the checksum sees it.
pub(super) struct TensorEntry<'a> {
    pub(super) name: &'a str,
    pub(super) dtype: String,
    pub(super) shape: &'a [usize],
    pub(super) data: &'a [u8],
}

/// The header's name of a dtype (`F64`).
pub(super) fn dtype_name(dtype: Dtype) -> String {
    format!("{dtype:?}")
}

/// The checksum of a model file's tensors and `__metadata__` entries (the `checksum` entry
/// itself left out), as the module documentation defines it.
pub(super) fn model_checksum<'a>(
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

/// The file with its safetensors header rewritten with sorted keys (the metadata map is a
/// `HashMap`, whose order changes from run to run), so that the same model gives the same
/// bytes. The header keeps its length: only the order of its entries changes.
pub(super) fn canonical_header(mut bytes: Vec<u8>) -> Result<Vec<u8>> {
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
