//! The error type of `gimc-linalg`.

/// Everything that can go wrong in a linear-algebra routine given user-shaped input.
#[derive(Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum LinalgError {
    /// Two operands whose dimensions must agree do not.
    #[error("dimension mismatch in {op}: expected {expected}, got {got}")]
    DimensionMismatch {
        /// The operation that checked the dimensions.
        op: &'static str,
        /// What was expected, e.g. `"3 columns"`.
        expected: String,
        /// What was given.
        got: String,
    },
    /// A NaN or infinite value was found.
    #[error("non-finite value {value} at row {row}, column {col}")]
    NonFinite {
        /// Row of the offending entry (0-based).
        row: usize,
        /// Column of the offending entry (0-based).
        col: usize,
        /// The value itself.
        value: f64,
    },
    /// An index lies outside the matrix it refers to.
    #[error("index ({row}, {col}) out of bounds for a {nrows} x {ncols} matrix")]
    IndexOutOfBounds {
        /// Row index.
        row: usize,
        /// Column index.
        col: usize,
        /// Number of rows of the matrix.
        nrows: usize,
        /// Number of columns of the matrix.
        ncols: usize,
    },
    /// A parameter is outside its valid range.
    #[error("invalid parameter {name}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// Why it is invalid.
        reason: String,
    },
    /// A factorisation failed (matrix not positive definite, SVD did not converge, …).
    #[error("{0} failed: {1}")]
    Factorization(&'static str, String),
    /// An iterative method did not reach its tolerance.
    #[error("{method} did not converge in {iterations} iterations (residual {residual:e})")]
    NotConverged {
        /// The method.
        method: &'static str,
        /// Iterations performed.
        iterations: usize,
        /// Final relative residual.
        residual: f64,
    },
    /// A matrix that must be (symmetric) positive definite is not: a Cholesky pivot or a
    /// conjugate-gradient curvature ⟨p, A p⟩ was not positive.
    #[error("{op}: matrix is not positive definite (failed at index {index})")]
    NotPositiveDefinite {
        /// The operation that found it.
        op: &'static str,
        /// Pivot index (Cholesky) or iteration (CG) at which it was found.
        index: usize,
    },
    /// An iterative method produced NaN or an infinite value (the inputs were finite).
    #[error("{method} produced a non-finite value at iteration {iteration}")]
    NumericalBreakdown {
        /// The method.
        method: &'static str,
        /// Iteration at which it happened.
        iteration: usize,
    },
}

/// Shorthand for a [`LinalgError::DimensionMismatch`].
pub(crate) fn dim_err(op: &'static str, expected: String, got: String) -> LinalgError {
    LinalgError::DimensionMismatch { op, expected, got }
}
