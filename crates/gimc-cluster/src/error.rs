//! The error type of `gimc-cluster`.

use gimc_linalg::LinalgError;
use gimc_linalg::observe::NonFiniteObjective;

/// Everything that can go wrong when fitting or applying a clustering.
#[derive(Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum ClusterError {
    /// The caller's observer asked to stop (e.g. Ctrl-C); no model.
    #[error("interrupted after iteration {iteration}")]
    Interrupted {
        /// The last iteration completed: an epoch of OKMF, a Lloyd iteration of k-means.
        iteration: usize,
    },
    /// A hyper-parameter is outside its valid range (reported by `check()`).
    #[error("invalid parameter {name}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// Why it is invalid.
        reason: String,
    },
    /// More clusters were asked for than there are points.
    #[error("cannot form {k} clusters from {n} points")]
    TooFewPoints {
        /// Clusters asked for.
        k: usize,
        /// Points available.
        n: usize,
    },
    /// The data and a fitted model (or two operands) disagree in dimension.
    #[error("dimension mismatch in {op}: expected {expected}, got {got}")]
    DimensionMismatch {
        /// The operation that checked the dimensions.
        op: &'static str,
        /// What was expected.
        expected: String,
        /// What was given.
        got: String,
    },
    /// A computation produced NaN or an infinite value from finite input (overflow).
    #[error("{method} produced a non-finite value at iteration {iteration}")]
    NumericalBreakdown {
        /// The method.
        method: &'static str,
        /// Iteration at which it happened.
        iteration: usize,
    },
    /// The problem is larger than a method's documented memory limit (kernel k-means keeps the
    /// n × n kernel matrix).
    #[error("{method} refuses {n} points: above its limit of {limit} ({reason})")]
    TooLarge {
        /// The method.
        method: &'static str,
        /// Points given.
        n: usize,
        /// The limit.
        limit: usize,
        /// Why the limit exists and what to do instead.
        reason: &'static str,
    },
    /// Invalid input data other than NaN/Inf (e.g. a constraint label outside {0, 1}).
    #[error("invalid input {what}: {reason}")]
    InvalidInput {
        /// Which input.
        what: &'static str,
        /// What is wrong, with its position.
        reason: String,
    },
    /// An error from the linear-algebra layer (including NaN/Inf in the input, with position).
    #[error(transparent)]
    Linalg(#[from] LinalgError),
}

/// A loop's objective (k-means' inertia) became NaN or infinite: a numerical breakdown.
impl From<NonFiniteObjective> for ClusterError {
    fn from(e: NonFiniteObjective) -> Self {
        ClusterError::NumericalBreakdown {
            method: e.solver,
            iteration: e.iteration,
        }
    }
}

/// Result alias of this crate.
pub type Result<T, E = ClusterError> = std::result::Result<T, E>;

/// The error helpers shared by every gimc crate, building [`ClusterError`] variants.
pub(crate) use gimc_linalg::error::{check_nonneg, check_pos, param_err};

gimc_linalg::shared_error_conversions!(ClusterError, op);
