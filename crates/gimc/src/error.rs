//! The error type of `gimc`: parameter and input errors (reported before any work is done) kept
//! apart from fit errors (raised while iterating) and model-file errors (DESIGN §2 errors, §7).

use gimc_featmap::FeatMapError;
use gimc_linalg::LinalgError;
use gimc_metrics::MetricsError;
use gimc_solvers::SolverError;

/// Everything that can go wrong in GIMC fitting, prediction, model selection or model I/O.
///
/// Not `PartialEq`: [`GimcError::Io`] keeps the [`std::io::Error`] as its source; tests match
/// the variant instead.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GimcError {
    /// The caller's observer asked to stop (e.g. Ctrl-C); no result was produced.
    #[error("interrupted")]
    Interrupted,
    /// A hyper-parameter is outside its valid range.
    #[error("invalid parameter {name}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// Why it is invalid.
        reason: String,
    },
    /// Two inputs whose shapes must agree do not.
    #[error("dimension mismatch in {what}: expected {expected}, got {got}")]
    DimensionMismatch {
        /// Which input or operation.
        what: &'static str,
        /// What was expected.
        expected: String,
        /// What was given.
        got: String,
    },
    /// An input is invalid (NaN / Inf, a class index out of range, a row without its class…),
    /// with the position where it applies.
    #[error("invalid input {what}: {reason}")]
    InvalidInput {
        /// Which input.
        what: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A required input is empty (no rows, no observed entries, an empty grid).
    #[error("empty input: {0}")]
    Empty(&'static str),
    /// Something asked for a whole-matrix quantity of a streamed fit (Storage::Streamed),
    /// which never holds it.
    #[error("{0} is not held by a streamed fit (it is formed one row block at a time)")]
    Streamed(&'static str),
    /// The fit produced NaN or an infinite value and stopped instead of returning garbage.
    #[error("non-finite {what} at iteration {iteration}")]
    NonFinite {
        /// The quantity (objective, gradient, …).
        what: &'static str,
        /// Outer iteration (0 = the start).
        iteration: usize,
    },
    /// The checked invariant of DESIGN §3.3 failed: the objective increased from one outer
    /// iteration to the next (a bug, or a numerically hopeless problem).
    #[error("objective increased at iteration {iteration}: {before:e} -> {after:e}")]
    ObjectiveIncreased {
        /// Outer iteration.
        iteration: usize,
        /// Objective before the iteration.
        before: f64,
        /// Objective after it.
        after: f64,
    },
    /// A model file is malformed, truncated, foreign or of an unsupported version.
    #[error("model file {path}: {reason}")]
    ModelFormat {
        /// The file (or `<memory>` for a byte buffer).
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A map family or map kind that is not registered (a model file written with a user's
    /// map, read without its codec registered).
    #[error("unknown {what} {name:?} (registered: {known})")]
    UnknownMap {
        /// `map family` or `map kind`.
        what: &'static str,
        /// The name asked for.
        name: String,
        /// The registered names, comma-separated.
        known: String,
    },
    /// A method name that is not a method (of completion, or a map method of the registry).
    #[error("unknown method `{name}` (choose {choices})")]
    UnknownMethod {
        /// The name asked for.
        name: String,
        /// The methods that exist, comma-separated.
        choices: String,
    },
    /// Reading or writing a file failed.
    #[error("i/o error on {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A model file's contents disagree with the checksum stored in it: the file is damaged
    /// or was edited.
    #[error(
        "{path}: checksum mismatch: the file is damaged or was edited (expected {expected}, \
         found {found})"
    )]
    ModelChecksum {
        /// The file (or `<memory>` for a byte buffer).
        path: String,
        /// The checksum stored in the file.
        expected: String,
        /// The checksum of the contents read.
        found: String,
    },
    /// An output file was not written: a directory or an input at its path, or an I/O error
    /// (the file at the path is left as it was).
    #[error(transparent)]
    Output(#[from] gimc_data::OutputError),
    /// The estimated peak memory of a fit exceeds the memory available (the memory pre-flight,
    /// raised before anything large is allocated): names both figures and the parameter to
    /// lower.
    #[error(transparent)]
    InsufficientMemory(#[from] gimc_linalg::memory::InsufficientMemory),
    /// An error from the linear-algebra layer.
    #[error(transparent)]
    Linalg(#[from] LinalgError),
    /// An error from a feature map.
    #[error(transparent)]
    FeatMap(#[from] FeatMapError),
    /// An error from the IMC solvers.
    #[error(transparent)]
    Solver(#[from] SolverError),
    /// An error from the metrics.
    #[error(transparent)]
    Metrics(#[from] MetricsError),
    /// An error from the clustering layer (constraint matrix, k-means on the embedding).
    #[error(transparent)]
    Cluster(#[from] gimc_cluster::ClusterError),
}

impl GimcError {
    /// Whether this is a parameter / input error (raised before fitting).
    pub fn is_parameter_error(&self) -> bool {
        match self {
            Self::InvalidParameter { .. }
            | Self::DimensionMismatch { .. }
            | Self::InvalidInput { .. }
            | Self::Empty(_) => true,
            Self::Solver(e) => e.is_parameter_error(),
            Self::Linalg(e) => matches!(
                e,
                gimc_linalg::LinalgError::InvalidParameter { .. }
                    | gimc_linalg::LinalgError::DimensionMismatch { .. }
            ),
            Self::Cluster(e) => matches!(
                e,
                gimc_cluster::ClusterError::InvalidParameter { .. }
                    | gimc_cluster::ClusterError::InvalidInput { .. }
                    | gimc_cluster::ClusterError::TooFewPoints { .. }
                    | gimc_cluster::ClusterError::DimensionMismatch { .. }
            ),
            _ => false,
        }
    }
}

/// Result alias of this crate.
pub type Result<T, E = GimcError> = std::result::Result<T, E>;

/// The error helpers shared by every gimc crate, building [`GimcError`] variants.
pub(crate) use gimc_linalg::error::{check_nonneg, check_pos, dim_err, param_err};

gimc_linalg::shared_error_conversions!(GimcError, what);

/// Shorthand for a [`GimcError::InvalidInput`].
pub(crate) fn input_err(what: &'static str, reason: impl Into<String>) -> GimcError {
    GimcError::InvalidInput {
        what,
        reason: reason.into(),
    }
}
