//! The feature-matrix type: a faer dense matrix or an sprs CSR matrix (DESIGN §3, notation).
//!
//! Sparse inputs (Bibtex, Delicious, LIBSVM files) stay sparse end to end; products with them
//! cost O(nnz) rather than O(n·d).

use faer::Mat;
use sprs::CsMat;

use crate::{LinalgError, Result};

/// Row-entity features X (n × d), dense or compressed sparse row.
#[derive(Debug, Clone, PartialEq)]
pub enum FeatureMatrix {
    /// Dense, column-major faer matrix.
    Dense(Mat<f64>),
    /// Sparse matrix in CSR order (rows are items).
    Sparse(CsMat<f64>),
}

impl FeatureMatrix {
    /// Wraps a dense matrix, rejecting NaN and infinite entries.
    pub fn dense(m: Mat<f64>) -> Result<Self> {
        for j in 0..m.ncols() {
            for i in 0..m.nrows() {
                let value = m[(i, j)];
                if !value.is_finite() {
                    return Err(LinalgError::NonFinite { row: i, col: j, value });
                }
            }
        }
        Ok(Self::Dense(m))
    }

    /// Wraps a sparse matrix (converted to CSR if given in CSC), rejecting NaN and infinite
    /// entries.
    pub fn sparse(m: CsMat<f64>) -> Result<Self> {
        let m = if m.is_csr() { m } else { m.to_csr() };
        for (row, vec) in m.outer_iterator().enumerate() {
            for (col, &value) in vec.iter() {
                if !value.is_finite() {
                    return Err(LinalgError::NonFinite { row, col, value });
                }
            }
        }
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
}
