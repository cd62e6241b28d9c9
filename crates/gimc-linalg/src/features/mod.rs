//! The feature-matrix type: a faer dense matrix or an sprs CSR matrix (DESIGN §3, notation).
//!
//! Sparse inputs (Bibtex, Delicious, LIBSVM files) stay sparse end to end; products with them
//! cost O(nnz) rather than O(n·d). Dense products go through faer's GEMM; sparse ones through the
//! row-parallel kernels of [`crate::sparse`], which give bitwise identical results for any number
//! of threads. [`Standardizer`] implements the "features standardised" preprocessing; on sparse
//! data it only scales (centring would densify). [`Preprocess`] chains the input transform of a
//! model: kept columns, [`TfIdf`] weights, standardisation, row normalisation and row scale.

use faer::{Mat, MatMut, MatRef};
use sprs::CsMat;

use crate::dense::{self, gram_nt, gram_tn};
use crate::error::dim_err;
use crate::shared::{Csr, shared_csr};
use crate::sparse::{self, Compressed};
use crate::{LinalgError, Result};

/// Row-entity features X (n × d), dense or compressed sparse row.
#[derive(Debug, Clone, PartialEq)]
pub enum FeatureMatrix {
    /// Dense, column-major faer matrix.
    Dense(Mat<f64>),
    /// Sparse matrix in CSR order (rows are items), over owned or shared buffers
    /// ([`crate::shared`]).
    Sparse(Csr),
}

impl FeatureMatrix {
    /// Wraps a dense matrix, rejecting NaN and infinite entries.
    pub fn dense(m: Mat<f64>) -> Result<Self> {
        crate::dense::check_finite(m.as_ref())?;
        Ok(Self::Dense(m))
    }

    /// Wraps a sparse matrix (converted to CSR if given in CSC), rejecting NaN and infinite
    /// entries.
    pub fn sparse(m: CsMat<f64>) -> Result<Self> {
        Self::sparse_shared(shared_csr(m))
    }

    /// Wraps a CSR matrix over owned or shared buffers ([`crate::shared`]) without copying
    /// them, rejecting NaN and infinite entries.
    pub fn sparse_shared(m: Csr) -> Result<Self> {
        sparse::csr_check_finite(&m)?;
        Ok(Self::Sparse(m))
    }

    /// Number of rows (items).
    pub fn nrows(&self) -> usize {
        match self {
            Self::Dense(m) => m.nrows(),
            Self::Sparse(m) => m.rows(),
        }
    }

    /// Number of columns (features).
    pub fn ncols(&self) -> usize {
        match self {
            Self::Dense(m) => m.ncols(),
            Self::Sparse(m) => m.cols(),
        }
    }

    /// Stored entries: n·d for dense, the number of stored non-zeros for sparse.
    pub fn nnz(&self) -> usize {
        match self {
            Self::Dense(m) => m.nrows() * m.ncols(),
            Self::Sparse(m) => m.nnz(),
        }
    }

    /// Whether the matrix is stored sparse.
    pub fn is_sparse(&self) -> bool {
        matches!(self, Self::Sparse(_))
    }

    /// `X·U` (n × k) for a dense `U` (d × k). O(nnz(X)·k).
    pub fn mul_dense(&self, rhs: MatRef<'_, f64>) -> Result<Mat<f64>> {
        match self {
            Self::Dense(m) => dense::matmul(m.as_ref(), rhs),
            Self::Sparse(m) => sparse::csr_mul_dense(m, rhs),
        }
    }

    /// `Xᵀ·G` (d × k) for a dense `G` (n × k). O(nnz(X)·k).
    ///
    /// For sparse `X` the transposed pattern is rebuilt per call (O(nnz(X)), negligible next to
    /// the product) and the product runs row-parallel over features, deterministically.
    pub fn tr_mul_dense(&self, g: MatRef<'_, f64>) -> Result<Mat<f64>> {
        match self {
            Self::Dense(m) => dense::matmul_tn(m.as_ref(), g),
            Self::Sparse(m) => sparse::csr_tr_mul_dense(m, g),
        }
    }

    /// `out += XᵀG` (d × k) without allocating the product: the backward passes of a fit
    /// streamed over row blocks accumulate their block sums here.
    pub fn tr_mul_dense_add(&self, g: MatRef<'_, f64>, out: MatMut<'_, f64>) -> Result<()> {
        match self {
            Self::Dense(m) => {
                if m.nrows() != g.nrows() || out.shape() != (m.ncols(), g.ncols()) {
                    return Err(dim_err(
                        "tr_mul_dense_add",
                        format!(
                            "G with {} rows and out {} x {}",
                            m.nrows(),
                            m.ncols(),
                            g.ncols()
                        ),
                        format!("{} rows and {} x {}", g.nrows(), out.nrows(), out.ncols()),
                    ));
                }
                faer::linalg::matmul::matmul(
                    out,
                    faer::Accum::Add,
                    m.transpose(),
                    g,
                    1.0,
                    dense::par(),
                );
                Ok(())
            }
            Self::Sparse(m) => sparse::csr_tr_mul_dense_add(m, g, out),
        }
    }

    /// Squared Euclidean norm ‖x_i‖² of every row.
    pub fn row_sq_norms(&self) -> Vec<f64> {
        match self {
            Self::Dense(m) => {
                let mut out = vec![0.0; m.nrows()];
                for j in 0..m.ncols() {
                    for (o, &v) in out.iter_mut().zip(m.col_as_slice(j)) {
                        *o += v * v;
                    }
                }
                out
            }
            Self::Sparse(m) => sparse::csr_row_sq_norms(m),
        }
    }

    /// A dense copy.
    pub fn to_dense(&self) -> Mat<f64> {
        match self {
            Self::Dense(m) => m.clone(),
            Self::Sparse(m) => sparse::csr_to_dense(m),
        }
    }

    /// The rows `rows` (in the given order, repetitions allowed), in the same representation.
    pub fn select_rows(&self, rows: &[usize]) -> Result<FeatureMatrix> {
        match self {
            Self::Dense(m) => {
                if let Some(&r) = rows.iter().find(|&&r| r >= m.nrows()) {
                    return Err(LinalgError::IndexOutOfBounds {
                        row: r,
                        col: 0,
                        nrows: m.nrows(),
                        ncols: m.ncols(),
                    });
                }
                Ok(Self::Dense(dense::padded_from_fn(
                    rows.len(),
                    m.ncols(),
                    |r, j| m[(rows[r], j)],
                )))
            }
            Self::Sparse(m) => Ok(Self::Sparse(shared_csr(sparse::csr_select_rows(m, rows)?))),
        }
    }

    /// The columns that hold one value in every row (zero columns included), sorted; none
    /// without rows. O(n·d) dense, O(nnz) sparse.
    pub fn constant_columns(&self) -> Vec<usize> {
        let n = self.nrows();
        if n == 0 {
            return Vec::new();
        }
        match self {
            Self::Dense(m) => (0..m.ncols())
                .filter(|&j| {
                    let col = m.col_as_slice(j);
                    col.iter().all(|&v| v == col[0])
                })
                .collect(),
            Self::Sparse(m) => {
                let d = m.cols();
                // per column: stored entries, the first stored value, whether all are equal
                let mut count = vec![0usize; d];
                let mut first = vec![0.0f64; d];
                let mut equal = vec![true; d];
                for row in m.outer_iterator() {
                    for (j, &v) in row.iter() {
                        if count[j] == 0 {
                            first[j] = v;
                        } else if v != first[j] {
                            equal[j] = false;
                        }
                        count[j] += 1;
                    }
                }
                // constant: nothing stored, or one value stored in every row, or only stored
                // zeros (the implicit entries are zeros too)
                (0..d)
                    .filter(|&j| count[j] == 0 || (equal[j] && (count[j] == n || first[j] == 0.0)))
                    .collect()
            }
        }
    }

    /// `XᵀX` (d × d), exactly symmetric. Dense: one triangular GEMM, O(n·d²/2); sparse:
    /// O(Σ_i nnz(row i)²) without densifying.
    pub fn gram(&self) -> Mat<f64> {
        match self {
            Self::Dense(m) => gram_tn(m.as_ref()),
            Self::Sparse(m) => sparse::csr_gram(m),
        }
    }

    /// `XXᵀ` (n × n), exactly symmetric; used by the dual ridge solve when d > n.
    pub fn outer_gram(&self) -> Mat<f64> {
        match self {
            Self::Dense(m) => gram_nt(m.as_ref()),
            Self::Sparse(m) => sparse::csr_outer_gram(m),
        }
    }

    /// ‖X‖²_F.
    pub fn frob_sq(&self) -> f64 {
        match self {
            Self::Dense(m) => m.squared_norm_l2(),
            Self::Sparse(m) => sparse::csr_frob_sq(m),
        }
    }

    /// Mean of every column (implicit zeros counted for sparse input).
    pub fn column_means(&self) -> Vec<f64> {
        let n = self.nrows();
        let mut sums = self.column_sums();
        if n > 0 {
            for s in &mut sums {
                *s /= n as f64;
            }
        }
        sums
    }

    /// Σ_i x_ij for every column j (a sparse matrix sums its stored entries in row order).
    pub fn column_sums(&self) -> Vec<f64> {
        let mut sums = vec![0.0; self.ncols()];
        match self {
            Self::Dense(m) => {
                for (j, s) in sums.iter_mut().enumerate() {
                    *s = m.col_as_slice(j).iter().sum();
                }
            }
            Self::Sparse(m) => {
                let view = m.view();
                let rows = Compressed::rows_of(&view);
                for i in 0..rows.outer {
                    let (cols, vals) = rows.row(i);
                    for (&j, &v) in cols.iter().zip(vals) {
                        sums[j] += v;
                    }
                }
            }
        }
        sums
    }

    /// Population standard deviation of every column (divisor n; implicit zeros counted).
    pub fn column_stds(&self) -> Vec<f64> {
        let n = self.nrows();
        let means = self.column_means();
        if n == 0 {
            return vec![0.0; self.ncols()];
        }
        let ss = self.sq_deviations_unchecked(&means);
        ss.iter().map(|s| (s / n as f64).sqrt()).collect()
    }

    /// Σ_i (x_ij − μ_j)² for every column j, given the column centres μ (which may be the
    /// means of a larger matrix these rows are part of, as in a sharded fit).
    pub fn column_sq_deviations(&self, means: &[f64]) -> Result<Vec<f64>> {
        if means.len() != self.ncols() {
            return Err(dim_err(
                "column_sq_deviations",
                format!("{} column centres", self.ncols()),
                format!("{}", means.len()),
            ));
        }
        Ok(self.sq_deviations_unchecked(means))
    }

    /// [`Self::column_sq_deviations`] for `means` of length ncols.
    fn sq_deviations_unchecked(&self, means: &[f64]) -> Vec<f64> {
        let n = self.nrows();
        let mut ss = vec![0.0; self.ncols()];
        match self {
            Self::Dense(m) => {
                for (j, s) in ss.iter_mut().enumerate() {
                    let mu = means[j];
                    *s = m.col_as_slice(j).iter().map(|v| (v - mu) * (v - mu)).sum();
                }
            }
            Self::Sparse(m) => {
                // Σ_i (x_ij − μ)² = Σ_stored (x − μ)² + (n − nnz_j) μ²
                let view = m.view();
                let rows = Compressed::rows_of(&view);
                let mut count = vec![0usize; self.ncols()];
                for i in 0..rows.outer {
                    let (cols, vals) = rows.row(i);
                    for (&j, &v) in cols.iter().zip(vals) {
                        ss[j] += (v - means[j]) * (v - means[j]);
                        count[j] += 1;
                    }
                }
                for j in 0..ss.len() {
                    ss[j] += (n - count[j]) as f64 * means[j] * means[j];
                }
            }
        }
        ss
    }

    /// Standardises the columns: dense data is centred and scaled to unit variance, sparse data
    /// is only scaled (centring would densify it). Returns the transformed matrix and the
    /// [`Standardizer`] to apply the same transform to new rows.
    pub fn standardize(&self) -> Result<(FeatureMatrix, Standardizer)> {
        let st = Standardizer::fit(self, !self.is_sparse())?;
        let out = st.transform(self)?;
        Ok((out, st))
    }

    /// Multiplies column j by `scale[j]`, keeping the representation (sparse stays sparse).
    pub fn scale_columns(&self, scale: &[f64]) -> Result<FeatureMatrix> {
        if scale.len() != self.ncols() {
            return Err(dim_err(
                "scale_columns",
                format!("{} scales", self.ncols()),
                format!("{}", scale.len()),
            ));
        }
        if let Some((j, &value)) = scale.iter().enumerate().find(|(_, s)| !s.is_finite()) {
            return Err(LinalgError::NonFinite {
                row: 0,
                col: j,
                value,
            });
        }
        Ok(match self {
            Self::Dense(m) => Self::Dense(dense::padded_from_fn(m.nrows(), m.ncols(), |i, j| {
                m[(i, j)] * scale[j]
            })),
            Self::Sparse(m) => {
                let mut m = m.to_csr();
                let cols = m.indices().to_vec();
                for (v, j) in m.data_mut().iter_mut().zip(cols) {
                    *v *= scale[j];
                }
                Self::Sparse(shared_csr(m))
            }
        })
    }
}

impl FeatureMatrix {
    /// The data-adaptive RBF width γ = 1 / (d · Var X) (scikit-learn's `gamma = "scale"`), with
    /// Var X the variance of all n·d entries (implicit zeros of sparse storage included): the
    /// kernel exp(−γ‖x − y‖²) then sees squared distances in units of their typical size
    /// 2·d·Var X. Computed on the features as the map sees them (after any standardisation or
    /// row normalisation). A constant matrix (Var X = 0) gives γ = 1, as scikit-learn does.
    ///
    /// ```
    /// use gimc_linalg::{FeatureMatrix, faer::Mat};
    /// // entries 0, 1, 2, 3: variance 1.25 over d = 2 columns
    /// let x = FeatureMatrix::dense(Mat::from_fn(2, 2, |i, j| (2 * i + j) as f64)).unwrap();
    /// assert!((x.gamma_scale() - 1.0 / (2.0 * 1.25)).abs() < 1e-12);
    /// ```
    pub fn gamma_scale(&self) -> f64 {
        gamma_scale_from_moments(self.value_moments(), self.ncols())
    }

    /// (Σ x, Σ x², number of cells n·d) over every cell, zeros included: the sums behind
    /// [`gamma_scale`](Self::gamma_scale), which shards of the rows can add up.
    pub fn value_moments(&self) -> (f64, f64, f64) {
        let cells = self.nrows() as f64 * self.ncols() as f64;
        let (sum, sumsq) = match self {
            Self::Dense(m) => (0..m.ncols()).fold((0.0, 0.0), |(s, q), j| {
                let col = m.col_as_slice(j);
                (
                    s + col.iter().sum::<f64>(),
                    q + col.iter().map(|v| v * v).sum::<f64>(),
                )
            }),
            Self::Sparse(m) => (m.data().iter().sum(), m.data().iter().map(|v| v * v).sum()),
        };
        (sum, sumsq, cells)
    }
}

/// The scale rule γ = 1 / (d · Var X) from [`FeatureMatrix::value_moments`] (summed over
/// shards of the rows, for a data-parallel fit) and the column count d; 1 when the variance is
/// zero or not finite.
pub fn gamma_scale_from_moments((sum, sumsq, cells): (f64, f64, f64), ncols: usize) -> f64 {
    if cells == 0.0 {
        return 1.0;
    }
    let mean = sum / cells;
    let var = (sumsq / cells - mean * mean).max(0.0);
    if var > 0.0 && var.is_finite() {
        1.0 / (ncols as f64 * var)
    } else {
        1.0
    }
}

/// An RBF width γ: a fixed value, or a multiple of the data-adaptive scale rule
/// ([`FeatureMatrix::gamma_scale`], scikit-learn's `gamma = "scale"`), resolved on the features
/// as the map sees them (after any standardisation or row normalisation). The default is the
/// rule itself, so a width tuned on one data set is never silently reused on another.
///
/// Written and parsed as on the command line: a number (`0.002`), `scale`, or `F*scale`.
///
/// ```
/// use gimc_linalg::{FeatureMatrix, Gamma, faer::Mat};
/// let x = FeatureMatrix::dense(Mat::from_fn(2, 2, |i, j| (2 * i + j) as f64)).unwrap();
/// assert_eq!(Gamma::default(), Gamma::SCALE);
/// assert_eq!(Gamma::SCALE.resolve(&x), x.gamma_scale());
/// let g: Gamma = "0.5*scale".parse().unwrap();
/// assert_eq!(g.resolve(&x), 0.5 * x.gamma_scale());
/// assert_eq!(Gamma::from(0.002).resolve(&x), 0.002);
/// assert_eq!(g.to_string(), "0.5*scale");
/// assert!("-1".parse::<Gamma>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Gamma {
    /// A fixed γ > 0.
    Value(f64),
    /// F · 1 / (d · Var X) for the factor F > 0.
    Scale(f64),
}

impl Gamma {
    /// The scale rule itself, γ = 1 / (d · Var X).
    pub const SCALE: Self = Self::Scale(1.0);

    /// γ for the features `x` the map will see.
    pub fn resolve(self, x: &FeatureMatrix) -> f64 {
        match self {
            Self::Value(g) => g,
            Self::Scale(f) => f * x.gamma_scale(),
        }
    }

    /// Checks that the value or factor is finite and positive.
    pub fn check(self) -> Result<Self> {
        let (v, what) = match self {
            Self::Value(g) => (g, "must be finite and > 0"),
            Self::Scale(f) => (f, "scale factor must be finite and > 0"),
        };
        if v > 0.0 && v.is_finite() {
            Ok(self)
        } else {
            Err(LinalgError::InvalidParameter {
                name: "gamma",
                reason: format!("{what}, got {self}"),
            })
        }
    }
}

impl Default for Gamma {
    fn default() -> Self {
        Self::SCALE
    }
}

impl From<f64> for Gamma {
    fn from(g: f64) -> Self {
        Self::Value(g)
    }
}

impl std::str::FromStr for Gamma {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let positive = |v: &str| -> std::result::Result<f64, String> {
            match v.trim().parse::<f64>() {
                Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
                _ => Err(format!(
                    "{s:?} is not a positive number, `scale` or `F*scale` (e.g. 0.5*scale)"
                )),
            }
        };
        let s = s.trim();
        if s == "scale" {
            return Ok(Self::SCALE);
        }
        if let Some(f) = s.strip_suffix("*scale") {
            return positive(f).map(Self::Scale);
        }
        positive(s).map(Self::Value)
    }
}

impl std::fmt::Display for Gamma {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Value(g) => write!(f, "{g}"),
            Self::Scale(k) if *k == 1.0 => write!(f, "scale"),
            Self::Scale(k) => write!(f, "{k}*scale"),
        }
    }
}

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

impl FeatureMatrix {
    /// Whether every stored entry is ≥ 0 and finite (the condition for [`TfIdf`]).
    pub fn is_nonnegative(&self) -> bool {
        self.first_negative_or_non_finite().is_none()
    }

    /// The first stored entry (row, column, value) that is negative or not finite, if any.
    fn first_negative_or_non_finite(&self) -> Option<(usize, usize, f64)> {
        let bad = |v: f64| !(v >= 0.0 && v.is_finite());
        match self {
            Self::Dense(m) => (0..m.ncols()).find_map(|j| {
                let col = m.col_as_slice(j);
                col.iter().position(|&v| bad(v)).map(|i| (i, j, col[i]))
            }),
            Self::Sparse(m) => {
                let view = m.view();
                let rows = Compressed::rows_of(&view);
                (0..rows.outer).find_map(|i| {
                    let (cols, vals) = rows.row(i);
                    vals.iter()
                        .position(|&v| bad(v))
                        .map(|p| (i, cols[p], vals[p]))
                })
            }
        }
    }

    /// The number of rows with a non-zero entry in every column (document frequencies).
    /// O(nnz).
    pub fn column_nonzero_counts(&self) -> Vec<usize> {
        let mut counts = vec![0usize; self.ncols()];
        match self {
            Self::Dense(m) => {
                for (j, c) in counts.iter_mut().enumerate() {
                    *c = m.col_as_slice(j).iter().filter(|&&v| v != 0.0).count();
                }
            }
            Self::Sparse(m) => {
                let view = m.view();
                let rows = Compressed::rows_of(&view);
                for i in 0..rows.outer {
                    let (cols, vals) = rows.row(i);
                    for (&j, &v) in cols.iter().zip(vals) {
                        if v != 0.0 {
                            counts[j] += 1;
                        }
                    }
                }
            }
        }
        counts
    }

    /// The columns `cols` (in the given order, repetitions allowed), in the same
    /// representation (sparse stays sparse; O(nnz + d) then). Errors
    /// ([`LinalgError::InvalidParameter`]) on a column index ≥ ncols.
    pub fn select_columns(&self, cols: &[usize]) -> Result<FeatureMatrix> {
        let d = self.ncols();
        if let Some(&c) = cols.iter().find(|&&c| c >= d) {
            return Err(LinalgError::InvalidParameter {
                name: "columns",
                reason: format!("column {c} is out of range for a matrix of {d} columns"),
            });
        }
        match self {
            Self::Dense(m) => Ok(Self::Dense(dense::padded_from_fn(
                m.nrows(),
                cols.len(),
                |i, k| m[(i, cols[k])],
            ))),
            Self::Sparse(m) => {
                // old column -> its new positions, as a compressed list
                let mut start = vec![0usize; d + 1];
                for &c in cols {
                    start[c + 1] += 1;
                }
                for j in 0..d {
                    start[j + 1] += start[j];
                }
                let mut fill = start.clone();
                let mut targets = vec![0usize; cols.len()];
                for (k, &c) in cols.iter().enumerate() {
                    targets[fill[c]] = k;
                    fill[c] += 1;
                }
                let increasing = cols.windows(2).all(|w| w[0] < w[1]);
                let view = m.view();
                let rows = Compressed::rows_of(&view);
                let mut ptr = Vec::with_capacity(rows.outer + 1);
                let mut idx = Vec::new();
                let mut val = Vec::new();
                let mut row: Vec<(usize, f64)> = Vec::new();
                ptr.push(0);
                for i in 0..rows.outer {
                    let (js, vs) = rows.row(i);
                    row.clear();
                    for (&j, &v) in js.iter().zip(vs) {
                        row.extend(targets[start[j]..start[j + 1]].iter().map(|&k| (k, v)));
                    }
                    if !increasing {
                        row.sort_unstable_by_key(|&(k, _)| k);
                    }
                    idx.extend(row.iter().map(|&(k, _)| k));
                    val.extend(row.iter().map(|&(_, v)| v));
                    ptr.push(idx.len());
                }
                let out = sparse::build_csr((rows.outer, cols.len()), ptr, idx, val)?;
                Ok(Self::Sparse(shared_csr(out)))
            }
        }
    }

    /// The matrix widened to `ncols` columns by zero columns on the right, in the same
    /// representation (sparse keeps its stored entries): a LIBSVM file whose rows never use
    /// the last features reads narrower than the data it belongs to. Errors
    /// ([`LinalgError::DimensionMismatch`]) when `ncols` is below the current width.
    pub fn widen(&self, ncols: usize) -> Result<FeatureMatrix> {
        let d = self.ncols();
        if ncols < d {
            return Err(dim_err(
                "FeatureMatrix::widen",
                format!("at least {d} columns"),
                format!("{ncols} columns"),
            ));
        }
        match self {
            Self::Dense(m) => Ok(Self::Dense(dense::padded_from_fn(
                m.nrows(),
                ncols,
                |i, j| if j < d { m[(i, j)] } else { 0.0 },
            ))),
            Self::Sparse(m) => {
                let rows = m.rows();
                let (ptr, idx, val) = m.to_csr().into_raw_storage();
                let out = sparse::build_csr((rows, ncols), ptr, idx, val)?;
                Ok(Self::Sparse(shared_csr(out)))
            }
        }
    }

    /// Every entry multiplied by `s`, keeping the representation.
    fn scaled(&self, s: f64) -> FeatureMatrix {
        match self {
            Self::Dense(m) => Self::Dense(dense::padded_from_fn(m.nrows(), m.ncols(), |i, j| {
                m[(i, j)] * s
            })),
            Self::Sparse(m) => {
                let mut m = m.to_csr();
                for v in m.data_mut() {
                    *v *= s;
                }
                Self::Sparse(shared_csr(m))
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{gaussian_mat, seeded};
    use crate::sparse::dense_to_csr;

    fn pair() -> (FeatureMatrix, FeatureMatrix) {
        let mut rng = seeded(11);
        let mut d = gaussian_mat(&mut rng, 9, 6, 1.0);
        for i in 0..9 {
            for j in 0..6 {
                if (i * 7 + j * 3) % 4 != 0 {
                    d[(i, j)] = 0.0;
                }
            }
        }
        let s = dense_to_csr(d.as_ref()).unwrap();
        (
            FeatureMatrix::dense(d).unwrap(),
            FeatureMatrix::sparse(s).unwrap(),
        )
    }

    #[test]
    fn l2_rows_have_unit_norm_in_both_storages() {
        let (d, s) = pair();
        let (nd, ns) = (d.normalize_rows(RowNorm::L2), s.normalize_rows(RowNorm::L2));
        assert!(ns.is_sparse());
        let (dd, sd) = (nd.to_dense(), ns.to_dense());
        let raw = d.to_dense();
        for i in 0..raw.nrows() {
            let norm = |m: &Mat<f64>| (0..m.ncols()).map(|j| m[(i, j)].powi(2)).sum::<f64>();
            let n0 = norm(&raw);
            // a zero row stays zero, every other row has unit norm and its direction
            let want = if n0 > 0.0 { 1.0 } else { 0.0 };
            assert!((norm(&dd) - want).abs() < 1e-12);
            assert!((norm(&sd) - want).abs() < 1e-12);
            for j in 0..raw.ncols() {
                assert!((dd[(i, j)] * n0.sqrt() - raw[(i, j)]).abs() < 1e-12);
                assert_eq!(dd[(i, j)], sd[(i, j)]);
            }
        }
        assert_eq!(d.normalize_rows(RowNorm::None), d);
    }

    #[test]
    fn gamma_scale_is_one_over_d_times_the_entry_variance_in_both_storages() {
        let (d, s) = pair();
        let x = d.to_dense();
        let (n, p) = x.shape();
        let vals: Vec<f64> = (0..p).flat_map(|j| x.col_as_slice(j).to_vec()).collect();
        let mean = vals.iter().sum::<f64>() / (n * p) as f64;
        let var = vals.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n * p) as f64;
        let want = 1.0 / (p as f64 * var);
        assert!((d.gamma_scale() - want).abs() < 1e-12 * want);
        assert!((s.gamma_scale() - want).abs() < 1e-12 * want);
        // scaling the data by c scales γ by 1/c²; constant data falls back to 1
        let c = FeatureMatrix::dense(x.as_ref() * faer::Scale(3.0)).unwrap();
        assert!((c.gamma_scale() - want / 9.0).abs() < 1e-12 * want);
        let flat = FeatureMatrix::dense(Mat::from_fn(4, 3, |_, _| 2.5)).unwrap();
        assert_eq!(flat.gamma_scale(), 1.0);
    }

    #[test]
    fn preprocess_standardises_then_normalises() {
        let (d, _) = pair();
        let st = Standardizer::fit(&d, true).unwrap();
        let pre = Preprocess {
            standardizer: Some(st.clone()),
            row_norm: RowNorm::L2,
            ..Preprocess::default()
        };
        assert!(!pre.is_identity() && Preprocess::default().is_identity());
        let want = st.transform(&d).unwrap().normalize_rows(RowNorm::L2);
        assert_eq!(pre.apply(&d).unwrap(), want);
        assert!(
            pre.apply(&FeatureMatrix::dense(Mat::zeros(2, 5)).unwrap())
                .is_err()
        );
        for n in [RowNorm::None, RowNorm::L2] {
            assert_eq!(RowNorm::from_name(n.name()), Some(n));
        }
        assert_eq!(RowNorm::from_name("l1"), None);
    }

    /// A 4 × 4 count matrix: column document frequencies 2, 1, 3, 0.
    fn counts() -> Mat<f64> {
        let rows = [
            [1.0, 0.0, 2.0, 0.0],
            [0.0, 0.0, 3.0, 0.0],
            [4.0, 5.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
        ];
        Mat::from_fn(4, 4, |i, j| rows[i][j])
    }

    #[test]
    fn tfidf_matches_scikit_learn() {
        let x = counts();
        let dense = FeatureMatrix::dense(x.clone()).unwrap();
        let sparse = FeatureMatrix::sparse(dense_to_csr(x.as_ref()).unwrap()).unwrap();
        // idf_j = ln((1 + n) / (1 + df_j)) + 1 with n = 4 and df = (2, 1, 3, 0), by hand ...
        let by_hand: Vec<f64> = [2.0, 1.0, 3.0, 0.0]
            .iter()
            .map(|df: &f64| (5.0 / (1.0 + df)).ln() + 1.0)
            .collect();
        // ... and as scikit-learn 1.9.1 computes it: TfidfTransformer(norm=None,
        // smooth_idf=True, sublinear_tf=False).fit(x).idf_
        let sklearn = [
            1.5108256237659907,
            1.916290731874155,
            1.2231435513142097,
            2.6094379124341005,
        ];
        for m in [&dense, &sparse] {
            let tf = TfIdf::fit(m).unwrap();
            assert_eq!(tf.idf.len(), 4);
            for j in 0..4 {
                assert!((tf.idf[j] - by_hand[j]).abs() < 1e-15, "{j}");
                assert!((tf.idf[j] - sklearn[j]).abs() < 1e-15, "{j}");
            }
        }
        assert_eq!(TfIdf::fit(&dense), TfIdf::fit(&sparse));
        // the transform scales the columns; sparse stays sparse with the same pattern
        let tf = TfIdf::fit(&dense).unwrap();
        let (td, ts) = (
            tf.transform(&dense).unwrap(),
            tf.transform(&sparse).unwrap(),
        );
        assert!(!td.is_sparse() && ts.is_sparse());
        assert_eq!(ts.nnz(), sparse.nnz());
        // scikit-learn's transform(x) row 2: [4 · idf_0, 5 · idf_1, 0, 0]
        let (a, b) = (td.to_dense(), ts.to_dense());
        assert!((a[(2, 0)] - 6.043302495063963).abs() < 1e-14);
        assert!((a[(2, 1)] - 9.581453659370776).abs() < 1e-14);
        assert!((a[(1, 2)] - 3.669430653942629).abs() < 1e-14);
        for i in 0..4 {
            for j in 0..4 {
                assert_eq!(a[(i, j)], x[(i, j)] * tf.idf[j]);
                assert_eq!(a[(i, j)], b[(i, j)]);
            }
        }
        // errors: a column-count mismatch, negative or non-finite training entries
        assert!(matches!(
            tf.transform(&FeatureMatrix::dense(Mat::zeros(2, 3)).unwrap()),
            Err(LinalgError::DimensionMismatch { .. })
        ));
        let mut neg = x.clone();
        neg[(3, 1)] = -0.5;
        let err = TfIdf::fit(&FeatureMatrix::dense(neg.clone()).unwrap()).unwrap_err();
        assert!(err.to_string().contains("(3, 1)"), "{err}");
        let neg_sparse = FeatureMatrix::sparse(dense_to_csr(neg.as_ref()).unwrap()).unwrap();
        assert!(TfIdf::fit(&neg_sparse).is_err());
        let mut nan = x.clone();
        nan[(0, 0)] = f64::NAN;
        // the constructor refuses NaN, the raw variant does not: fit checks again
        assert!(TfIdf::fit(&FeatureMatrix::Dense(nan)).is_err());
        // no rows: every weight is ln(1) + 1 = 1
        let none = TfIdf::fit(&FeatureMatrix::dense(Mat::zeros(0, 3)).unwrap()).unwrap();
        assert_eq!(none.idf, vec![1.0; 3]);
    }

    #[test]
    fn nonnegativity_and_column_counts() {
        let (d, s) = pair();
        // the pair has Gaussian (signed) entries
        assert!(!d.is_nonnegative() && !s.is_nonnegative());
        let c = FeatureMatrix::dense(counts()).unwrap();
        assert!(c.is_nonnegative());
        assert_eq!(c.column_nonzero_counts(), vec![2, 1, 3, 0]);
        assert_eq!(d.column_nonzero_counts(), s.column_nonzero_counts());
        let mut inf = counts();
        inf[(1, 3)] = f64::INFINITY;
        assert!(!FeatureMatrix::Dense(inf).is_nonnegative());
    }

    #[test]
    fn select_columns_in_both_storages() {
        let (d, s) = pair();
        let x = d.to_dense();
        for cols in [
            vec![4, 1, 1, 5],
            vec![0, 2, 3],
            vec![],
            vec![5, 4, 3, 2, 1, 0],
        ] {
            let (sd, ss) = (
                d.select_columns(&cols).unwrap(),
                s.select_columns(&cols).unwrap(),
            );
            assert!(!sd.is_sparse() && ss.is_sparse());
            assert_eq!((sd.nrows(), sd.ncols()), (9, cols.len()));
            let (a, b) = (sd.to_dense(), ss.to_dense());
            for i in 0..9 {
                for (k, &c) in cols.iter().enumerate() {
                    assert_eq!(a[(i, k)], x[(i, c)]);
                    assert_eq!(b[(i, k)], x[(i, c)]);
                }
            }
            // sparse keeps only the stored entries of the kept columns
            let kept: usize = cols.iter().map(|&c| s.column_nonzero_counts()[c]).sum();
            assert_eq!(ss.nnz(), kept);
        }
        for m in [&d, &s] {
            let err = m.select_columns(&[0, 6]).unwrap_err();
            assert!(err.to_string().contains("column 6"), "{err}");
        }
    }

    #[test]
    fn widen_appends_zero_columns_in_both_storages() {
        let (d, s) = pair();
        let x = d.to_dense();
        for m in [&d, &s] {
            let w = m.widen(9).unwrap();
            assert_eq!(w.is_sparse(), m.is_sparse());
            assert_eq!(
                (w.nrows(), w.ncols(), w.nnz() == m.nnz()),
                (9, 9, m.is_sparse())
            );
            let wd = w.to_dense();
            for i in 0..9 {
                for j in 0..9 {
                    assert_eq!(wd[(i, j)], if j < 6 { x[(i, j)] } else { 0.0 });
                }
            }
            assert_eq!(m.widen(6).unwrap(), *m);
            assert!(matches!(
                m.widen(5),
                Err(LinalgError::DimensionMismatch { .. })
            ));
        }
    }

    #[test]
    fn preprocess_applies_its_steps_in_order() {
        // raw input of 6 columns; the model keeps 4 of them
        let raw = Mat::from_fn(5, 6, |i, j| ((i * 3 + j * 5) % 7) as f64);
        let dense = FeatureMatrix::dense(raw.clone()).unwrap();
        let sparse = FeatureMatrix::sparse(dense_to_csr(raw.as_ref()).unwrap()).unwrap();
        let cols = vec![0, 2, 3, 5];
        let kept = dense.select_columns(&cols).unwrap();
        let tfidf = TfIdf::fit(&kept).unwrap();
        let weighted = tfidf.transform(&kept).unwrap();
        let st = Standardizer::fit(&weighted, false).unwrap();
        let pre = Preprocess {
            columns: Some(cols.clone()),
            input_dim: Some(6),
            tfidf: Some(tfidf.clone()),
            standardizer: Some(st.clone()),
            row_norm: RowNorm::L2,
            row_scale: 2.5,
        };
        assert!(!pre.is_identity());
        let want = st
            .transform(&weighted)
            .unwrap()
            .normalize_rows(RowNorm::L2)
            .to_dense();
        let (got_d, got_s) = (pre.apply(&dense).unwrap(), pre.apply(&sparse).unwrap());
        // sparse stays sparse (the standardisation only scales) and agrees with dense
        assert!(!got_d.is_sparse() && got_s.is_sparse());
        assert_eq!((got_d.nrows(), got_d.ncols()), (5, 4));
        let (a, b) = (got_d.to_dense(), got_s.to_dense());
        for i in 0..5 {
            let mut norm = 0.0;
            for j in 0..4 {
                assert!((a[(i, j)] - 2.5 * want[(i, j)]).abs() < 1e-12);
                assert!((a[(i, j)] - b[(i, j)]).abs() < 1e-12);
                norm += a[(i, j)] * a[(i, j)];
            }
            // the row scale comes after the normalisation: every non-zero row has norm 2.5
            assert!((norm.sqrt() - 2.5).abs() < 1e-12, "row {i}: {norm}");
        }
        // a centring standardisation densifies sparse rows, with the dense result; it comes
        // after the tf-idf weights (weighting after centring gives other rows)
        let st_c = Standardizer::fit(&weighted, true).unwrap();
        let centred = Preprocess {
            standardizer: Some(st_c.clone()),
            ..pre.clone()
        };
        let (cd, cs) = (
            centred.apply(&dense).unwrap(),
            centred.apply(&sparse).unwrap(),
        );
        assert!(!cs.is_sparse());
        assert!((cd.to_dense() - cs.to_dense()).norm_max() < 1e-12);
        let in_order = st_c
            .transform(&weighted)
            .unwrap()
            .normalize_rows(RowNorm::L2)
            .to_dense();
        assert!((&in_order * faer::Scale(2.5) - cd.to_dense()).norm_max() < 1e-12);
        let swapped = tfidf
            .transform(&st_c.transform(&kept).unwrap())
            .unwrap()
            .normalize_rows(RowNorm::L2)
            .to_dense();
        assert!((&swapped * faer::Scale(2.5) - cd.to_dense()).norm_max() > 1e-3);
        // only some steps: the columns alone give the selection
        let only_cols = Preprocess {
            columns: Some(cols.clone()),
            input_dim: Some(6),
            ..Preprocess::default()
        };
        assert!(!only_cols.is_identity());
        assert_eq!(
            only_cols.apply(&sparse).unwrap(),
            sparse.select_columns(&cols).unwrap()
        );
        let identity = Preprocess {
            input_dim: Some(6),
            ..Preprocess::default()
        };
        assert!(identity.is_identity());
        assert_eq!(identity.apply(&dense).unwrap(), dense);
    }

    #[test]
    fn preprocess_errors_name_the_widths() {
        let raw = FeatureMatrix::dense(Mat::from_fn(3, 6, |i, j| (i + j) as f64)).unwrap();
        let pre = Preprocess {
            columns: Some(vec![1, 4]),
            input_dim: Some(6),
            ..Preprocess::default()
        };
        let narrow = raw.select_columns(&[0, 1, 2, 3, 4]).unwrap();
        let err = pre.apply(&narrow).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("6 input columns") && msg.contains("5 columns"),
            "{msg}"
        );
        // without input_dim the kept columns are still checked against the width
        let unchecked = Preprocess {
            columns: Some(vec![1, 5]),
            ..Preprocess::default()
        };
        assert!(unchecked.apply(&narrow).is_err());
        assert!(unchecked.apply(&raw).is_ok());
        // a tf-idf of another width
        let tf = Preprocess {
            tfidf: Some(TfIdf { idf: vec![1.0; 3] }),
            ..pre.clone()
        };
        assert!(matches!(
            tf.apply(&raw),
            Err(LinalgError::DimensionMismatch { .. })
        ));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let p = Preprocess {
                row_scale: bad,
                ..pre.clone()
            };
            assert!(
                matches!(p.apply(&raw), Err(LinalgError::InvalidParameter { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn dense_and_sparse_agree() {
        let (d, s) = pair();
        let mut rng = seeded(12);
        let u = gaussian_mat(&mut rng, 6, 4, 1.0);
        let g = gaussian_mat(&mut rng, 9, 3, 1.0);
        let close = |a: &Mat<f64>, b: &Mat<f64>| (a - b).norm_l2() < 1e-12;
        assert!(close(
            &d.mul_dense(u.as_ref()).unwrap(),
            &s.mul_dense(u.as_ref()).unwrap()
        ));
        assert!(close(
            &d.tr_mul_dense(g.as_ref()).unwrap(),
            &s.tr_mul_dense(g.as_ref()).unwrap()
        ));
        assert!(close(&d.gram(), &s.gram()));
        assert!(close(&d.outer_gram(), &s.outer_gram()));
        assert_eq!(d.to_dense(), s.to_dense());
        for (a, b) in d.row_sq_norms().iter().zip(s.row_sq_norms()) {
            assert!((a - b).abs() < 1e-12);
        }
        for (a, b) in d.column_stds().iter().zip(s.column_stds()) {
            assert!((a - b).abs() < 1e-12);
        }
        assert!((d.frob_sq() - s.frob_sq()).abs() < 1e-12);
        let rows = [3, 0, 3, 8];
        assert_eq!(
            d.select_rows(&rows).unwrap().to_dense(),
            s.select_rows(&rows).unwrap().to_dense()
        );
        assert!(matches!(
            d.select_rows(&[9]),
            Err(LinalgError::IndexOutOfBounds { row: 9, .. })
        ));
        assert!(s.select_rows(&[9]).is_err());
        assert!(d.mul_dense(g.as_ref()).is_err());
        assert!(s.tr_mul_dense(u.as_ref()).is_err());
    }

    #[test]
    fn standardize_dense_and_sparse() {
        let (d, s) = pair();
        let (dz, st) = d.standardize().unwrap();
        assert!(st.center);
        for m in dz.column_means() {
            assert!(m.abs() < 1e-12);
        }
        for sd in dz.column_stds() {
            assert!((sd - 1.0).abs() < 1e-12 || sd == 0.0);
        }
        let (sz, sst) = s.standardize().unwrap();
        assert!(sz.is_sparse() && !sst.center);
        assert_eq!(sz.nnz(), s.nnz());
        for sd in sz.column_stds() {
            assert!((sd - 1.0).abs() < 1e-12);
        }
        assert!(matches!(
            Standardizer::fit(&s, true),
            Err(LinalgError::InvalidParameter { .. })
        ));
        // the dense scale-only transform equals the sparse one
        let dst = Standardizer::fit(&d, false).unwrap();
        assert!((dst.transform(&d).unwrap().to_dense() - sz.to_dense()).norm_l2() < 1e-12);
        assert!(st.transform(&s).is_err());
    }
}
