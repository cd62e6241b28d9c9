//! The input transforms of a model: [`RowNorm`], [`StandardizeMode`], [`TfIdf`] weights, the
//! [`Standardizer`] and [`Preprocess`], which chains them.

use super::FeatureMatrix;
use crate::dense;
use crate::error::dim_err;
use crate::shared::shared_csr;
use crate::{LinalgError, Result};

/// A row normalisation: every row scaled to unit norm (scikit-learn's `normalize`; the
/// Extreme Classification Repository's tools ship with `normalize = 1`). Rows of norm zero stay
/// zero. Stateless, so the same transform applies to new rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RowNorm {
    /// Rows as they are.
    #[default]
    None,
    /// x_i ↦ x_i / ‖x_i‖₂.
    L2,
}

impl RowNorm {
    /// The name used on the command line and in model files (`none`, `l2`).
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::L2 => "l2",
        }
    }

    /// The normalisation called `name` (`none`, `l2`), if any.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "none" => Some(Self::None),
            "l2" => Some(Self::L2),
            _ => None,
        }
    }
}

impl FeatureMatrix {
    /// The rows normalised by `norm`, keeping the representation (sparse stays sparse).
    pub fn normalize_rows(&self, norm: RowNorm) -> FeatureMatrix {
        let inv = |ss: f64| if ss > 0.0 { 1.0 / ss.sqrt() } else { 1.0 };
        match (norm, self) {
            (RowNorm::None, _) => self.clone(),
            (RowNorm::L2, Self::Dense(m)) => {
                let mut ss = vec![0.0; m.nrows()];
                for j in 0..m.ncols() {
                    for (s, v) in ss.iter_mut().zip(m.col_as_slice(j)) {
                        *s += v * v;
                    }
                }
                let scale: Vec<f64> = ss.into_iter().map(inv).collect();
                Self::Dense(dense::padded_from_fn(m.nrows(), m.ncols(), |i, j| {
                    m[(i, j)] * scale[i]
                }))
            }
            (RowNorm::L2, Self::Sparse(m)) => {
                let mut out = m.to_csr();
                let indptr = out.indptr().raw_storage().to_vec();
                let data = out.data_mut();
                for w in indptr.windows(2) {
                    let row = &mut data[w[0]..w[1]];
                    let s = inv(row.iter().map(|v| v * v).sum());
                    for v in row {
                        *v *= s;
                    }
                }
                Self::Sparse(shared_csr(out))
            }
        }
    }
}

/// Which feature matrices [`FeatureMatrix::standardize_by`] standardises (`gimc fit
/// --standardize`, the Python estimators' `standardize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StandardizeMode {
    /// Dense features (stored dense, or at least [`DENSE_FRACTION`] of the entries non-zero)
    /// are centred and scaled; sparse ones are left alone.
    #[default]
    Auto,
    /// Always: dense features are centred and scaled, sparse ones only scaled.
    On,
    /// Never.
    Off,
}

/// Sparse-stored features with at least this fraction of non-zero entries count as dense for
/// [`StandardizeMode::Auto`] (and are converted to dense storage to be centred).
pub const DENSE_FRACTION: f64 = 0.5;

impl FeatureMatrix {
    /// Standardises the columns by `mode`: the transformed matrix and the transform learnt on
    /// it, or `None` when `mode` leaves these features alone.
    ///
    /// ```
    /// use gimc_linalg::{FeatureMatrix, StandardizeMode, faer::Mat};
    /// let x = FeatureMatrix::dense(Mat::from_fn(4, 2, |i, j| (i * (j + 1)) as f64)).unwrap();
    /// let (z, st) = x.standardize_by(StandardizeMode::Auto).unwrap().unwrap();
    /// assert!(st.center);
    /// assert!(z.to_dense().col(0).iter().sum::<f64>().abs() < 1e-12);
    /// assert!(x.standardize_by(StandardizeMode::Off).unwrap().is_none());
    /// ```
    pub fn standardize_by(
        &self,
        mode: StandardizeMode,
    ) -> Result<Option<(FeatureMatrix, Standardizer)>> {
        if mode == StandardizeMode::Off {
            return Ok(None);
        }
        let cells = (self.nrows() as f64) * (self.ncols() as f64);
        let dense =
            !self.is_sparse() || (cells > 0.0 && self.nnz() as f64 >= DENSE_FRACTION * cells);
        if !dense && mode == StandardizeMode::Auto {
            return Ok(None);
        }
        let owned;
        let x = if dense && self.is_sparse() {
            owned = FeatureMatrix::dense(self.to_dense())?;
            &owned
        } else {
            self
        };
        let st = Standardizer::fit(x, dense)?;
        let z = st.transform(x)?;
        Ok(Some((z, st)))
    }
}

/// tf-idf column weights (scikit-learn's `TfidfTransformer` with `smooth_idf=True`,
/// `sublinear_tf=False` and no normalisation): idf_j = ln((1 + n) / (1 + df_j)) + 1, with
/// df_j the number of training rows whose entry in column j is non-zero. A column no training
/// row uses gets the largest weight, ln(1 + n) + 1; every weight is ≥ 1.
///
/// ```
/// use gimc_linalg::{FeatureMatrix, TfIdf, faer::Mat};
/// // rows [1, 0] and [2, 3]: column 0 used by both rows, column 1 by one
/// let x = FeatureMatrix::dense(Mat::from_fn(2, 2, |i, j| [[1.0, 0.0], [2.0, 3.0]][i][j])).unwrap();
/// let tf = TfIdf::fit(&x).unwrap();
/// assert_eq!(tf.idf[0], 1.0);
/// assert!((tf.idf[1] - ((3.0_f64 / 2.0).ln() + 1.0)).abs() < 1e-15);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct TfIdf {
    /// The weight of every column (length d).
    pub idf: Vec<f64>,
}

impl TfIdf {
    /// Learns the column weights of `x` (n × d). Errors
    /// ([`LinalgError::InvalidParameter`]) if `x` has a negative or non-finite entry: tf-idf
    /// weighs counts or frequencies.
    pub fn fit(x: &FeatureMatrix) -> Result<Self> {
        if let Some((row, col, value)) = x.first_negative_or_non_finite() {
            return Err(LinalgError::InvalidParameter {
                name: "tf-idf features",
                reason: format!(
                    "tf-idf needs non-negative finite entries; entry ({row}, {col}) is {value}"
                ),
            });
        }
        let n = x.nrows() as f64;
        let idf = x
            .column_nonzero_counts()
            .into_iter()
            .map(|df| ((1.0 + n) / (1.0 + df as f64)).ln() + 1.0)
            .collect();
        Ok(Self { idf })
    }

    /// x_ij · idf_j for every entry, keeping the representation (sparse stays sparse). Errors
    /// when `x` does not have one column per weight.
    pub fn transform(&self, x: &FeatureMatrix) -> Result<FeatureMatrix> {
        if x.ncols() != self.idf.len() {
            return Err(dim_err(
                "TfIdf::transform",
                format!("{} columns", self.idf.len()),
                format!("{} columns", x.ncols()),
            ));
        }
        x.scale_columns(&self.idf)
    }
}

/// The transform a model's input rows go through before its feature maps, in this order:
/// the kept input columns, the tf-idf weights, the per-column standardisation, the row
/// normalisation and a constant row scale. Every step is optional; the default is the
/// identity.
#[derive(Debug, Clone, PartialEq)]
pub struct Preprocess {
    /// Input columns kept, in order (`None`: all). Applied first; indices into the raw
    /// input's columns.
    pub columns: Option<Vec<usize>>,
    /// The raw input width the model expects (needed with `columns`; `None`: unchecked, as
    /// in models that predate it).
    pub input_dim: Option<usize>,
    /// tf-idf column weights, of the kept columns.
    pub tfidf: Option<TfIdf>,
    /// Column standardisation learnt on the training rows after the steps above (`None`:
    /// none).
    pub standardizer: Option<Standardizer>,
    /// Row normalisation applied after it.
    pub row_norm: RowNorm,
    /// Every row multiplied by this after the normalisation (1: none). Finite and positive.
    pub row_scale: f64,
}

impl Default for Preprocess {
    fn default() -> Self {
        Self {
            columns: None,
            input_dim: None,
            tfidf: None,
            standardizer: None,
            row_norm: RowNorm::None,
            row_scale: 1.0,
        }
    }
}

impl Preprocess {
    /// Whether the transform has no step, so that it leaves rows unchanged (`input_dim` is
    /// only a check).
    pub fn is_identity(&self) -> bool {
        self.columns.is_none()
            && self.tfidf.is_none()
            && self.standardizer.is_none()
            && self.row_norm == RowNorm::None
            && self.row_scale == 1.0
    }

    /// Applies the transform to `x`: select the columns, weight by tf-idf, standardise,
    /// normalise the rows, scale the rows. Sparse rows stay sparse, except that they meet a
    /// centring standardisation as dense rows (the training features were dense, or counted
    /// as dense by [`StandardizeMode::Auto`]). Errors when `x` is not `input_dim` wide (or a
    /// step's width differs, naming the expected and the given width), on a kept column out
    /// of range, and on a row scale that is not finite and positive.
    pub fn apply(&self, x: &FeatureMatrix) -> Result<FeatureMatrix> {
        if let Some(d) = self.input_dim
            && x.ncols() != d
        {
            return Err(dim_err(
                "Preprocess::apply",
                format!("{d} input columns"),
                format!("{} columns", x.ncols()),
            ));
        }
        if !(self.row_scale.is_finite() && self.row_scale > 0.0) {
            return Err(LinalgError::InvalidParameter {
                name: "row_scale",
                reason: format!("must be finite and positive, got {}", self.row_scale),
            });
        }
        // `owned` holds the result of the last step that ran; `cur` the current rows
        let mut owned: Option<FeatureMatrix> = None;
        if let Some(cols) = &self.columns {
            owned = Some(x.select_columns(cols)?);
        }
        if let Some(tf) = &self.tfidf {
            let next = tf.transform(owned.as_ref().unwrap_or(x))?;
            owned = Some(next);
        }
        if let Some(st) = &self.standardizer {
            let cur = owned.as_ref().unwrap_or(x);
            let next = if st.center && cur.is_sparse() {
                st.transform(&FeatureMatrix::dense(cur.to_dense())?)?
            } else {
                st.transform(cur)?
            };
            owned = Some(next);
        }
        if self.row_norm != RowNorm::None {
            let next = owned.as_ref().unwrap_or(x).normalize_rows(self.row_norm);
            owned = Some(next);
        }
        if self.row_scale != 1.0 {
            let next = owned.as_ref().unwrap_or(x).scaled(self.row_scale);
            owned = Some(next);
        }
        Ok(owned.unwrap_or_else(|| x.clone()))
    }
}

/// Per-column affine transform x_j ↦ (x_j − mean_j)·scale_j learnt on training features.
#[derive(Debug, Clone, PartialEq)]
pub struct Standardizer {
    /// Column means subtracted (all zero when the transform does not centre).
    pub mean: Vec<f64>,
    /// Column multipliers: 1/std, or 1 for constant columns.
    pub scale: Vec<f64>,
    /// Whether the transform centres (never for sparse input).
    pub center: bool,
}

impl Standardizer {
    /// Learns the column statistics of `x`. `center = true` is refused for sparse `x`
    /// ([`LinalgError::InvalidParameter`]) since the result would be dense.
    pub fn fit(x: &FeatureMatrix, center: bool) -> Result<Self> {
        if center && x.is_sparse() {
            return Err(LinalgError::InvalidParameter {
                name: "center",
                reason: "centring a sparse feature matrix would densify it; scale only".into(),
            });
        }
        let stds = x.column_stds();
        let scale = stds
            .iter()
            .map(|&s| {
                if s > 0.0 && s.is_finite() {
                    1.0 / s
                } else {
                    1.0
                }
            })
            .collect();
        let mean = if center {
            x.column_means()
        } else {
            vec![0.0; x.ncols()]
        };
        Ok(Self {
            mean,
            scale,
            center,
        })
    }

    /// Applies the transform to `x` (same number of columns as the data it was fitted on).
    pub fn transform(&self, x: &FeatureMatrix) -> Result<FeatureMatrix> {
        if x.ncols() != self.scale.len() {
            return Err(dim_err(
                "Standardizer::transform",
                format!("{} columns", self.scale.len()),
                format!("{} columns", x.ncols()),
            ));
        }
        if !self.center {
            return x.scale_columns(&self.scale);
        }
        match x {
            FeatureMatrix::Dense(m) => Ok(FeatureMatrix::Dense(dense::padded_from_fn(
                m.nrows(),
                m.ncols(),
                |i, j| (m[(i, j)] - self.mean[j]) * self.scale[j],
            ))),
            FeatureMatrix::Sparse(_) => Err(LinalgError::InvalidParameter {
                name: "center",
                reason: "cannot centre a sparse feature matrix".into(),
            }),
        }
    }
}
