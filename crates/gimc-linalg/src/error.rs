//! The error type of `gimc-linalg`, and the error helpers every gimc crate shares ([`param_err`],
//! [`dim_err`], [`check_pos`], [`check_nonneg`], [`check_nonzero`]).

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
    /// A structure sized from its input would not fit in the memory available (checked before
    /// allocating it).
    #[error(transparent)]
    InsufficientMemory(#[from] crate::memory::InsufficientMemory),
    /// An iterative method produced NaN or an infinite value (the inputs were finite).
    #[error("{method} produced a non-finite value at iteration {iteration}")]
    NumericalBreakdown {
        /// The method.
        method: &'static str,
        /// Iteration at which it happened.
        iteration: usize,
    },
}

/// A hyper-parameter outside its valid range: the shared value from which every gimc crate's
/// `InvalidParameter` variant is built (each error type implements `From<ParamError>`), so that
/// [`param_err`], [`check_pos`], [`check_nonneg`] and [`check_nonzero`] serve every crate.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid parameter {name}: {reason}")]
pub struct ParamError {
    /// Parameter name.
    pub name: &'static str,
    /// Why it is invalid.
    pub reason: String,
}

/// Two operands whose dimensions must agree do not: the shared value from which every gimc
/// crate's `DimensionMismatch` variant is built (each error type with such a variant implements
/// `From<DimError>`), so that [`dim_err`] serves every crate.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("dimension mismatch in {op}: expected {expected}, got {got}")]
pub struct DimError {
    /// The operation (or input) that checked the dimensions.
    pub op: &'static str,
    /// What was expected, e.g. `"3 columns"`.
    pub expected: String,
    /// What was given.
    pub got: String,
}

/// An invalid-parameter error of any gimc error type: `name` and why it is invalid.
///
/// The checks below return the bare [`ParamError`]: `?` turns it into the caller's error type.
pub fn param_err<E: From<ParamError>>(name: &'static str, reason: impl Into<String>) -> E {
    E::from(ParamError {
        name,
        reason: reason.into(),
    })
}

/// A dimension-mismatch error of any gimc error type: in `op`, `expected` but `got`.
pub fn dim_err<E: From<DimError>>(
    op: &'static str,
    expected: impl Into<String>,
    got: impl Into<String>,
) -> E {
    E::from(DimError {
        op,
        expected: expected.into(),
        got: got.into(),
    })
}

/// Checks that `value` is finite and > 0.
pub fn check_pos(name: &'static str, value: f64) -> Result<(), ParamError> {
    if !(value.is_finite() && value > 0.0) {
        return Err(param_err(
            name,
            format!("must be finite and > 0, got {value}"),
        ));
    }
    Ok(())
}

/// Checks that `value` is finite and ≥ 0.
pub fn check_nonneg(name: &'static str, value: f64) -> Result<(), ParamError> {
    if !(value.is_finite() && value >= 0.0) {
        return Err(param_err(
            name,
            format!("must be finite and >= 0, got {value}"),
        ));
    }
    Ok(())
}

/// Checks that a count (a size, a number of items) is positive.
pub fn check_nonzero(name: &'static str, value: usize) -> Result<(), ParamError> {
    if value == 0 {
        return Err(param_err(name, "must be positive"));
    }
    Ok(())
}

/// Implements `From<ParamError>` for a gimc error enum, onto its variant
/// `InvalidParameter { name, reason }`, and, given the name of the field that holds the operation,
/// `From<DimError>` onto its variant `DimensionMismatch { <field>, expected, got }`: the glue
/// that lets [`param_err`], [`dim_err`] and the checks build that crate's errors.
#[macro_export]
macro_rules! shared_error_conversions {
    ($ty:ty) => {
        impl From<$crate::ParamError> for $ty {
            fn from($crate::ParamError { name, reason }: $crate::ParamError) -> Self {
                Self::InvalidParameter { name, reason }
            }
        }
    };
    ($ty:ty, $op:ident) => {
        $crate::shared_error_conversions!($ty);
        impl From<$crate::DimError> for $ty {
            fn from($crate::DimError { op, expected, got }: $crate::DimError) -> Self {
                Self::DimensionMismatch {
                    $op: op,
                    expected,
                    got,
                }
            }
        }
    };
}

shared_error_conversions!(LinalgError, op);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_build_the_variants_with_their_messages() {
        let e: LinalgError = param_err("tol", "x");
        assert_eq!(e.to_string(), "invalid parameter tol: x");
        assert_eq!(
            e.to_string(),
            ParamError {
                name: "tol",
                reason: "x".into()
            }
            .to_string()
        );
        let e: LinalgError = dim_err("matmul", "3", "4");
        assert_eq!(
            e.to_string(),
            "dimension mismatch in matmul: expected 3, got 4"
        );
        assert!(check_nonneg("l", -1.0).is_err());
        assert!(check_nonneg("l", f64::NAN).is_err());
        assert!(check_nonneg("l", 0.0).is_ok());
        assert!(check_pos("l", 0.0).is_err());
        assert!(check_pos("l", f64::INFINITY).is_err());
        assert!(check_pos("l", 1e-300).is_ok());
        assert_eq!(
            check_nonzero("n", 0),
            Err(param_err("n", "must be positive"))
        );
        assert!(check_nonzero("n", 1).is_ok());
    }
}
