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

mod gamma;
mod preprocess;

pub use gamma::{Gamma, gamma_scale_from_moments};
pub use preprocess::{DENSE_FRACTION, Preprocess, RowNorm, StandardizeMode, Standardizer, TfIdf};

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
        self.fold_columns(|_, col| col.iter().sum(), |s, _, v| *s += v)
    }

    /// One value per column: `dense(j, column j)` for a dense matrix; for a sparse one, starting
    /// from `T::default()`, `add(&mut value_j, j, v)` for every stored entry v of column j, the
    /// stored entries visited in row order.
    fn fold_columns<T: Clone + Default>(
        &self,
        dense: impl Fn(usize, &[f64]) -> T,
        mut add: impl FnMut(&mut T, usize, f64),
    ) -> Vec<T> {
        match self {
            Self::Dense(m) => (0..m.ncols())
                .map(|j| dense(j, m.col_as_slice(j)))
                .collect(),
            Self::Sparse(m) => {
                let mut out = vec![T::default(); m.cols()];
                let view = m.view();
                let rows = Compressed::rows_of(&view);
                for i in 0..rows.outer {
                    let (cols, vals) = rows.row(i);
                    for (&j, &v) in cols.iter().zip(vals) {
                        add(&mut out[j], j, v);
                    }
                }
                out
            }
        }
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
        let mut count = vec![0usize; self.ncols()];
        let mut ss = self.fold_columns(
            |j, col| {
                let mu = means[j];
                col.iter().map(|v| (v - mu) * (v - mu)).sum()
            },
            |s, j, v| {
                *s += (v - means[j]) * (v - means[j]);
                count[j] += 1;
            },
        );
        if self.is_sparse() {
            // Σ_i (x_ij − μ)² = Σ_stored (x − μ)² + (n − nnz_j) μ²
            for j in 0..ss.len() {
                ss[j] += (n - count[j]) as f64 * means[j] * means[j];
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
    /// Whether every stored entry is ≥ 0 and finite (the condition for [`TfIdf`]).
    pub fn is_nonnegative(&self) -> bool {
        self.first_negative_or_non_finite().is_none()
    }

    /// The first stored entry (row, column, value) that is negative or not finite, if any.
    pub(super) fn first_negative_or_non_finite(&self) -> Option<(usize, usize, f64)> {
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
        self.fold_columns(
            |_, col| col.iter().filter(|&&v| v != 0.0).count(),
            |c, _, v| {
                if v != 0.0 {
                    *c += 1;
                }
            },
        )
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
    pub(super) fn scaled(&self, s: f64) -> FeatureMatrix {
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

#[cfg(test)]
mod tests;
