//! The row transforms the search tries ([`RowTransform`]) and the columns it drops first.

use gimc_linalg::{FeatureMatrix, Preprocess, RowNorm, StandardizeMode, TfIdf};

use crate::error::Result;
use crate::error::param_err;
use crate::labels::data::LabelData;

/// A row transform [`auto_fit`](crate::auto_fit) tries: what the rows look like before the maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowTransform {
    /// The rows as they are, standardised (training mean and standard deviation) when dense.
    Raw,
    /// Every row scaled to unit L2 norm.
    L2,
    /// tf-idf column weights, then unit L2 rows (what PECOS and the extreme-classification
    /// tools use on text); only for sparse non-negative features (counts or binary).
    TfIdfL2,
}

impl RowTransform {
    /// Every transform, in the order they are tried.
    pub const ALL: [Self; 3] = [Self::Raw, Self::L2, Self::TfIdfL2];

    /// `raw`, `l2` or `tfidf-l2`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Raw => "raw",
            Self::L2 => "l2",
            Self::TfIdfL2 => "tfidf-l2",
        }
    }

    /// The transform called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether the transform applies to `x` (tf-idf needs sparse non-negative features).
    pub fn applies_to(self, x: &FeatureMatrix) -> bool {
        match self {
            Self::TfIdfL2 => x.is_sparse() && x.is_nonnegative(),
            _ => true,
        }
    }

    /// Learns the transform on `x` (the training rows): the [`Preprocess`] (without column
    /// selection) and the transformed rows.
    pub fn fit(self, x: &FeatureMatrix) -> Result<(Preprocess, FeatureMatrix)> {
        let mut pre = Preprocess::default();
        let out = match self {
            Self::Raw => match x.standardize_by(StandardizeMode::Auto)? {
                Some((z, st)) => {
                    pre.standardizer = Some(st);
                    z
                }
                None => x.clone(),
            },
            Self::L2 => {
                pre.row_norm = RowNorm::L2;
                x.normalize_rows(RowNorm::L2)
            }
            Self::TfIdfL2 => {
                let t = TfIdf::fit(x)?;
                let z = t.transform(x)?.normalize_rows(RowNorm::L2);
                pre.tfidf = Some(t);
                pre.row_norm = RowNorm::L2;
                z
            }
        };
        Ok((pre, out))
    }
}

/// Drops the constant columns of `data` and the `exclude`d ones: the data on the kept
/// columns, the kept columns (`None` when all are kept), the constant columns and the
/// excluded non-constant ones.
#[allow(clippy::type_complexity)]
pub(super) fn drop_columns(
    data: &LabelData,
    exclude: &[usize],
) -> Result<(LabelData, Option<Vec<usize>>, Vec<usize>, Vec<usize>)> {
    let d = data.features().ncols();
    if let Some(&j) = exclude.iter().find(|&&j| j >= d) {
        return Err(param_err(
            "exclude_columns",
            format!("column {j} is out of range ({d} columns)"),
        ));
    }
    let constant = data.features().constant_columns();
    let mut excluded: Vec<usize> = exclude
        .iter()
        .copied()
        .filter(|j| constant.binary_search(j).is_err())
        .collect();
    excluded.sort_unstable();
    excluded.dedup();
    let kept: Vec<usize> = (0..d)
        .filter(|j| constant.binary_search(j).is_err() && excluded.binary_search(j).is_err())
        .collect();
    if kept.is_empty() {
        return Err(param_err(
            "features",
            "every feature column is constant or excluded: nothing to learn from",
        ));
    }
    if kept.len() == d {
        return Ok((data.clone(), None, constant, excluded));
    }
    let narrowed = data.with_features(data.features().select_columns(&kept)?)?;
    Ok((narrowed, Some(kept), constant, excluded))
}
