//! A partially observed matrix with row and column features ([`CompletionData`]).

use gimc_linalg::{FeatureMatrix, Observed};

use crate::error::dim_err;
use crate::error::{GimcError, Result};

/// A partially observed matrix with row and column features: A on Ω (n_x × n_y), X (n_x × d_x),
/// Y (n_y × d_y); optionally, held-out entries of the same matrix to validate a fit on
/// ([`CompletionData::with_validation`]).
#[derive(Debug, Clone, Copy)]
pub struct CompletionData<'a> {
    pub(crate) omega: &'a Observed,
    pub(crate) x: &'a FeatureMatrix,
    pub(crate) y: &'a FeatureMatrix,
    pub(crate) validation: Option<&'a Observed>,
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
        Ok(Self {
            omega,
            x,
            y,
            validation: None,
        })
    }

    /// The same data with `validation` (held-out entries of the same matrix, same shape as Ω;
    /// `None` for none), which [`fit_completion`](crate::fit_completion) scores after every
    /// iteration. Checked by the fit.
    #[must_use]
    pub fn with_validation(mut self, validation: Option<&'a Observed>) -> Self {
        self.validation = validation;
        self
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

    /// The validation entries, if any.
    pub fn validation(&self) -> Option<&'a Observed> {
        self.validation
    }
}
