//! The feature-matrix type: a faer dense matrix or an sprs CSR matrix (DESIGN §3, notation).
//!
//! Sparse inputs (Bibtex, Delicious, LIBSVM files) stay sparse end to end; products with them
//! cost O(nnz) rather than O(n·d). Dense products go through faer's GEMM; sparse ones through the
//! row-parallel kernels of [`crate::sparse`], which give bitwise identical results for any number
//! of threads. [`Standardizer`] implements the "features standardised" preprocessing; on sparse
//! data it only scales (centring would densify).

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

/// The transform a model's input rows go through before its feature maps: the per-column
/// standardisation (if any), then the row normalisation.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Preprocess {
    /// Column standardisation learnt on the training rows (`None`: none).
    pub standardizer: Option<Standardizer>,
    /// Row normalisation applied after it.
    pub row_norm: RowNorm,
}

impl Preprocess {
    /// Whether the transform leaves rows unchanged.
    pub fn is_identity(&self) -> bool {
        self.standardizer.is_none() && self.row_norm == RowNorm::None
    }

    /// Applies the transform to `x` (the standardisation's number of columns). Sparse rows
    /// meet a centring standardisation as dense rows (the training features were dense, or
    /// counted as dense by [`StandardizeMode::Auto`]).
    pub fn apply(&self, x: &FeatureMatrix) -> Result<FeatureMatrix> {
        let densified;
        let x = match &self.standardizer {
            Some(st) if st.center && x.is_sparse() => {
                densified = FeatureMatrix::dense(x.to_dense())?;
                &densified
            }
            _ => x,
        };
        Ok(match (&self.standardizer, self.row_norm) {
            (Some(st), RowNorm::None) => st.transform(x)?,
            (Some(st), norm) => st.transform(x)?.normalize_rows(norm),
            (None, norm) => x.normalize_rows(norm),
        })
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
