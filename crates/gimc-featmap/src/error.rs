//! The error type of `gimc-featmap`.

use gimc_cluster::ClusterError;
use gimc_linalg::LinalgError;

/// Everything that can go wrong when building, applying or differentiating a feature map.
#[derive(Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum FeatMapError {
    /// A hyper-parameter is outside its valid range (reported by the params' `check()`).
    #[error("invalid parameter {name}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// Why it is invalid.
        reason: String,
    },
    /// An input, gradient or parameter matrix has the wrong shape.
    #[error("dimension mismatch in {op}: expected {expected}, got {got}")]
    DimensionMismatch {
        /// The operation that checked the dimensions.
        op: &'static str,
        /// What was expected.
        expected: String,
        /// What was given.
        got: String,
    },
    /// The operation is not available for this configuration (e.g. the backward pass of a
    /// kernel whose derivative is not implemented).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A conformance suite run found failing checks (the summary lists them with their
    /// measured values).
    #[error("conformance checks failed: {summary}")]
    ConformanceFailed {
        /// One line per failed check.
        summary: String,
    },
    /// An error from the linear-algebra layer (including NaN/Inf with its position).
    #[error(transparent)]
    Linalg(#[from] LinalgError),
    /// An error from the clustering layer (k-means landmarks).
    #[error(transparent)]
    Cluster(#[from] ClusterError),
}

/// Result alias of this crate.
pub type Result<T, E = FeatMapError> = std::result::Result<T, E>;

/// The error helpers shared by every gimc crate, building [`FeatMapError`] variants.
pub(crate) use gimc_linalg::error::{check_nonneg, check_pos, dim_err, param_err};

gimc_linalg::shared_error_conversions!(FeatMapError, op);
