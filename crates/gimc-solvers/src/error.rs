//! The error type of `gimc-solvers`: parameter (and input) errors, reported before any work is
//! done, kept separate from fit errors, which arise while a solver runs (DESIGN §2, errors;
//! §7, solvers stop on NaN and report it).

use gimc_linalg::LinalgError;
use gimc_linalg::faer;

/// Everything that can go wrong in a solver.
///
/// The first group of variants are *parameter errors*: the hyper-parameters or the shapes of the
/// inputs are invalid, and nothing was computed ([`SolverError::is_parameter_error`]). The second
/// group are *fit errors*: the inputs were accepted but the iteration broke down.
#[derive(Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum SolverError {
    /// A hyper-parameter is outside its valid range (λ < 0, rank 0, NaN tolerance, …).
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
    /// The observed-entry set Ω (or a training set) is empty.
    #[error("no observed entries / training examples: {0}")]
    Empty(&'static str),
    /// An input contains NaN / Inf or an invalid value (e.g. a label out of range).
    #[error("invalid input {what}: {reason}")]
    InvalidInput {
        /// Which input.
        what: &'static str,
        /// What is wrong, with the position where it applies.
        reason: String,
    },
    /// A valid problem that this code path does not handle, e.g. a fully observed term in a fit
    /// on row shards ([`fit_imc_sharded`](crate::imc::fit_imc_sharded)).
    #[error("not supported: {what}: {reason}")]
    Unsupported {
        /// What is not supported.
        what: &'static str,
        /// Why, and what to use instead.
        reason: String,
    },
    /// A solver produced NaN or an infinite value; it stopped instead of returning garbage.
    #[error("{solver} produced a non-finite {what} at iteration {iteration}")]
    NonFinite {
        /// The solver.
        solver: &'static str,
        /// The quantity that became non-finite (objective, iterate, …).
        what: &'static str,
        /// Iteration at which it happened (0 = initialisation).
        iteration: usize,
    },
    /// A linear-algebra routine failed during the fit (a factorisation, CG breakdown, …).
    #[error("linear algebra: {0}")]
    Linalg(#[from] LinalgError),
}

impl SolverError {
    /// Whether this is a parameter / input error (raised before any fitting), as opposed to a fit
    /// error raised while iterating.
    pub fn is_parameter_error(&self) -> bool {
        matches!(
            self,
            Self::InvalidParameter { .. }
                | Self::DimensionMismatch { .. }
                | Self::Empty(_)
                | Self::InvalidInput { .. }
                | Self::Unsupported { .. }
        )
    }
}

/// The error helpers shared by every gimc crate, building [`SolverError`] variants.
pub(crate) use gimc_linalg::error::{check_nonneg, check_pos, dim_err, param_err};

gimc_linalg::shared_error_conversions!(SolverError, what);

/// Checks that every entry of a dense matrix is finite, naming the input and the position.
pub(crate) fn check_finite_mat(
    what: &'static str,
    m: faer::MatRef<'_, f64>,
) -> Result<(), SolverError> {
    match gimc_linalg::dense::first_non_finite(m) {
        Some((i, j, v)) => Err(SolverError::InvalidInput {
            what,
            reason: format!("non-finite value {v} at row {i}, column {j}"),
        }),
        None => Ok(()),
    }
}

/// The name of the parameter a `check()` refused (tests of every params type).
#[cfg(test)]
pub(crate) fn refused<T: std::fmt::Debug>(r: Result<T, SolverError>) -> &'static str {
    match r {
        Err(SolverError::InvalidParameter { name, .. }) => name,
        other => panic!("expected a parameter error, got {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_of_errors() {
        assert!(param_err::<SolverError>("lambda", "x").is_parameter_error());
        assert!(dim_err::<SolverError>("phi", "3", "4").is_parameter_error());
        assert!(SolverError::Empty("omega").is_parameter_error());
        let fit = SolverError::NonFinite {
            solver: "imc",
            what: "objective",
            iteration: 3,
        };
        assert!(!fit.is_parameter_error());
        assert!(fit.to_string().contains("iteration 3"));
        assert!(check_nonneg("l", -1.0).is_err());
        assert!(check_nonneg("l", f64::NAN).is_err());
        assert!(check_nonneg("l", 0.0).is_ok());
        assert!(check_pos("l", 0.0).is_err());
        let mut m = faer::Mat::<f64>::zeros(2, 2);
        m[(1, 0)] = f64::INFINITY;
        assert!(matches!(
            check_finite_mat("m", m.as_ref()),
            Err(SolverError::InvalidInput { .. })
        ));
    }
}
