//! Side information of one side of the matrix (DESIGN §3.2): a feature matrix Φ (dense or CSR)
//! or the identity Φ = I, which is never materialised (plain MC is IMC with Φ = Ψ = I; the
//! multi-label path has Ψ = I).

use gimc_linalg::FeatureMatrix;
use gimc_linalg::faer::{Mat, MatRef};

use crate::SolverError;
use crate::error::dim_err;

/// A feature matrix screened for NaN / Inf once, when it was built: the proof that lets
/// [`ImcProblem::partial_screened`](crate::ImcProblem::partial_screened) skip the screen that
/// [`ImcProblem::partial`](crate::ImcProblem::partial) runs over both sides at every call. For
/// loops that build many problems from the same features (GIMC's outer iterations and
/// line-search trials): each matrix is screened once, where it is produced, instead of at
/// every problem built from it. Derefs to the matrix; immutable, so the proof stays true.
#[derive(Debug, Clone, PartialEq)]
pub struct ScreenedFeatures(FeatureMatrix);

impl ScreenedFeatures {
    /// Screens `features` for NaN / Inf; the error names `what` and the first bad position.
    pub fn new(features: FeatureMatrix, what: &'static str) -> Result<Self, SolverError> {
        Side::Features(&features).check_finite(what)?;
        Ok(Self(features))
    }

    /// The features as a [`Side`].
    pub fn side(&self) -> Side<'_> {
        Side::Features(&self.0)
    }

    /// The matrix, giving up the proof.
    pub fn into_inner(self) -> FeatureMatrix {
        self.0
    }
}

impl std::ops::Deref for ScreenedFeatures {
    type Target = FeatureMatrix;

    fn deref(&self) -> &FeatureMatrix {
        &self.0
    }
}

/// The features of the row entities (Φ, n_x × D_x) or of the column entities (Ψ, n_y × D_y).
#[derive(Debug, Clone, Copy)]
pub enum Side<'a> {
    /// Φ = I_n: no side information on this side; the factor has one row per entity.
    Identity(usize),
    /// A feature matrix, dense or sparse (kept sparse).
    Features(&'a FeatureMatrix),
}

impl<'a> Side<'a> {
    /// Number of entities n (rows of Φ).
    pub fn nrows(&self) -> usize {
        match self {
            Self::Identity(n) => *n,
            Self::Features(f) => f.nrows(),
        }
    }

    /// Feature dimension D (columns of Φ; equal to n for the identity).
    pub fn dim(&self) -> usize {
        match self {
            Self::Identity(n) => *n,
            Self::Features(f) => f.ncols(),
        }
    }

    /// Whether this side is the identity.
    pub fn is_identity(&self) -> bool {
        matches!(self, Self::Identity(_))
    }

    /// The feature matrix, if any.
    pub fn features(&self) -> Option<&'a FeatureMatrix> {
        match self {
            Self::Identity(_) => None,
            Self::Features(f) => Some(f),
        }
    }

    /// Φ·S (n × k) for S of shape D × k. O(nnz(Φ)·k); a copy of S for the identity.
    pub fn mul(&self, s: MatRef<'_, f64>) -> Result<Mat<f64>, SolverError> {
        if s.nrows() != self.dim() {
            return Err(dim_err(
                "side features times factor",
                format!("factor with {} rows", self.dim()),
                format!("{} rows", s.nrows()),
            ));
        }
        match self {
            Self::Identity(_) => Ok(s.to_owned()),
            Self::Features(f) => Ok(f.mul_dense(s)?),
        }
    }

    /// Φᵀ·G (D × k) for G of shape n × k. O(nnz(Φ)·k); a copy of G for the identity.
    pub fn tr_mul(&self, g: MatRef<'_, f64>) -> Result<Mat<f64>, SolverError> {
        if g.nrows() != self.nrows() {
            return Err(dim_err(
                "side features transposed times matrix",
                format!("matrix with {} rows", self.nrows()),
                format!("{} rows", g.nrows()),
            ));
        }
        match self {
            Self::Identity(_) => Ok(g.to_owned()),
            Self::Features(f) => Ok(f.tr_mul_dense(g)?),
        }
    }

    /// ΦᵀΦ (D × D), or `None` for the identity (whose Gram matrix is I and is never formed).
    pub fn gram(&self) -> Option<Mat<f64>> {
        self.features().map(FeatureMatrix::gram)
    }

    /// Rejects NaN / Inf in the features (a `FeatureMatrix` built through its enum variants
    /// bypasses the constructor's check), naming the position.
    pub(crate) fn check_finite(&self, what: &'static str) -> Result<(), SolverError> {
        let Some(f) = self.features() else {
            return Ok(());
        };
        let bad = match f {
            FeatureMatrix::Dense(m) => gimc_linalg::dense::first_non_finite(m.as_ref()),
            FeatureMatrix::Sparse(m) => m
                .iter()
                .find(|(v, _)| !v.is_finite())
                .map(|(v, (i, j))| (i, j, *v)),
        };
        match bad {
            Some((i, j, v)) => Err(SolverError::InvalidInput {
                what,
                reason: format!("non-finite value {v} at row {i}, column {j}"),
            }),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimc_linalg::rng::{gaussian_mat, seeded};

    #[test]
    fn identity_and_features_agree() {
        let x = gaussian_mat(&mut seeded(1), 5, 5, 1.0);
        let s = gaussian_mat(&mut seeded(2), 5, 2, 1.0);
        let eye = FeatureMatrix::dense(Mat::<f64>::identity(5, 5)).unwrap();
        let (a, b) = (Side::Identity(5), Side::Features(&eye));
        assert_eq!(a.mul(s.as_ref()).unwrap(), b.mul(s.as_ref()).unwrap());
        assert_eq!(a.tr_mul(s.as_ref()).unwrap(), b.tr_mul(s.as_ref()).unwrap());
        assert!(a.gram().is_none());
        assert_eq!(b.gram().unwrap(), Mat::<f64>::identity(5, 5));
        assert!(a.mul(x.as_ref().subrows(0, 3)).is_err());
        let mut bad = x.clone();
        bad[(3, 1)] = f64::NAN;
        let bad = FeatureMatrix::Dense(bad);
        let e = Side::Features(&bad).check_finite("phi").unwrap_err();
        assert!(e.to_string().contains("row 3, column 1"), "{e}");
        let e = ScreenedFeatures::new(bad, "phi").unwrap_err();
        assert!(e.to_string().contains("row 3, column 1"), "{e}");
        let good = ScreenedFeatures::new(eye.clone(), "phi").unwrap();
        assert_eq!(*good, eye);
        assert_eq!(good.side().dim(), 5);
        assert_eq!(good.into_inner(), eye);
    }
}
