//! A partially observed matrix with row and column features ([`CompletionData`]).

use gimc_linalg::{FeatureMatrix, Observed};

use crate::error::dim_err;
use crate::error::{GimcError, Result};

/// A partially observed matrix with row and column features: A on Ω (n_x × n_y), X (n_x × d_x),
/// Y (n_y × d_y).
#[derive(Debug, Clone, Copy)]
pub struct CompletionData<'a> {
    pub(crate) omega: &'a Observed,
    pub(crate) x: &'a FeatureMatrix,
    pub(crate) y: &'a FeatureMatrix,
}

impl<'a> CompletionData<'a> {
    /// Checks that Ω is not empty and that X has n_x rows and Y has n_y rows (Ω's values are
    /// finite by construction of [`Observed`]).
    pub fn new(omega: &'a Observed, x: &'a FeatureMatrix, y: &'a FeatureMatrix) -> Result<Self> {
        if omega.is_empty() {
            return Err(GimcError::Empty("observed set Ω"));
        }
        if x.nrows() != omega.nrows() {
            return Err(dim_err(
                "row features X",
                format!("{} rows (rows of A)", omega.nrows()),
                format!("{} rows", x.nrows()),
            ));
        }
        if y.nrows() != omega.ncols() {
            return Err(dim_err(
                "column features Y",
                format!("{} rows (columns of A)", omega.ncols()),
                format!("{} rows", y.nrows()),
            ));
        }
        Ok(Self { omega, x, y })
    }

    /// Ω with the observed values.
    pub fn omega(&self) -> &'a Observed {
        self.omega
    }

    /// Row features X.
    pub fn x(&self) -> &'a FeatureMatrix {
        self.x
    }

    /// Column features Y.
    pub fn y(&self) -> &'a FeatureMatrix {
        self.y
    }
}
