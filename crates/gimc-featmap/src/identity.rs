//! The identity map φ(x) = x (DESIGN §3.1): plain IMC on the raw features. Φ is returned dense
//! (the [`FeatureMap`] contract); callers that can use X directly should do so for large sparse
//! inputs.

use gimc_linalg::FeatureMatrix;
use gimc_linalg::faer::{Mat, MatRef};

use crate::Result;
use crate::error::dim_err;
use crate::map::{FeatureMap, LearnableMap, check_input};

/// φ(x) = x on R^d (D = d). A [`LearnableMap`] with no parameters (a 0 × 0 U), so that plain
/// IMC models (W, H on the raw features) live in the same model type and file format as GIMC's
/// learned ones.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    dim: usize,
    none: Mat<f64>,
}

impl Identity {
    /// The identity on R^`dim`.
    pub fn new(dim: usize) -> Self {
        Self {
            dim,
            none: Mat::zeros(0, 0),
        }
    }
}

impl LearnableMap for Identity {
    fn params(&self) -> MatRef<'_, f64> {
        self.none.as_ref()
    }

    /// Accepts only the empty 0 × 0 parameter matrix.
    fn set_params(&mut self, params: Mat<f64>) -> Result<()> {
        if params.shape() != (0, 0) {
            return Err(dim_err(
                "Identity::set_params",
                "a 0 x 0 matrix (the identity has no parameters)",
                format!("{} x {}", params.nrows(), params.ncols()),
            ));
        }
        Ok(())
    }

    /// The (empty) gradient; checks the shapes all the same.
    fn backward(&self, x: &FeatureMatrix, g: MatRef<'_, f64>) -> Result<Mat<f64>> {
        check_input("Identity::backward", x, self.dim)?;
        if g.shape() != (x.nrows(), self.dim) {
            return Err(dim_err(
                "Identity::backward",
                format!("G of shape {} x {}", x.nrows(), self.dim),
                format!("{} x {}", g.nrows(), g.ncols()),
            ));
        }
        Ok(Mat::zeros(0, 0))
    }
}

impl FeatureMap for Identity {
    fn input_dim(&self) -> usize {
        self.dim
    }

    fn output_dim(&self) -> usize {
        self.dim
    }

    fn forward(&self, x: &FeatureMatrix) -> Result<Mat<f64>> {
        check_input("Identity::forward", x, self.dim)?;
        Ok(x.to_dense())
    }
}

/// φ(x) = 1 on R^d (D = 1): the intercept column of a linear model, so that a model's scores
/// carry a per-label offset (the labels' prior). A [`LearnableMap`] with no parameters, like
/// [`Identity`].
#[derive(Debug, Clone, PartialEq)]
pub struct Constant {
    dim: usize,
    none: Mat<f64>,
}

impl Constant {
    /// The constant map on R^`dim`.
    pub fn new(dim: usize) -> Self {
        Self {
            dim,
            none: Mat::zeros(0, 0),
        }
    }
}

impl LearnableMap for Constant {
    fn params(&self) -> MatRef<'_, f64> {
        self.none.as_ref()
    }

    /// Accepts only the empty 0 × 0 parameter matrix.
    fn set_params(&mut self, params: Mat<f64>) -> Result<()> {
        if params.shape() != (0, 0) {
            return Err(dim_err(
                "Constant::set_params",
                "a 0 x 0 matrix (the constant map has no parameters)",
                format!("{} x {}", params.nrows(), params.ncols()),
            ));
        }
        Ok(())
    }

    /// The (empty) gradient; checks the shapes all the same.
    fn backward(&self, x: &FeatureMatrix, g: MatRef<'_, f64>) -> Result<Mat<f64>> {
        check_input("Constant::backward", x, self.dim)?;
        if g.shape() != (x.nrows(), 1) {
            return Err(dim_err(
                "Constant::backward",
                format!("G of shape {} x 1", x.nrows()),
                format!("{} x {}", g.nrows(), g.ncols()),
            ));
        }
        Ok(Mat::zeros(0, 0))
    }
}

impl FeatureMap for Constant {
    fn input_dim(&self) -> usize {
        self.dim
    }

    fn output_dim(&self) -> usize {
        1
    }

    fn forward(&self, x: &FeatureMatrix) -> Result<Mat<f64>> {
        check_input("Constant::forward", x, self.dim)?;
        Ok(Mat::from_fn(x.nrows(), 1, |_, _| 1.0))
    }
}

#[cfg(test)]
mod constant_tests {
    use super::*;

    #[test]
    fn constant_is_one_column_of_ones_and_checks_width() {
        let x = FeatureMatrix::dense(Mat::from_fn(3, 2, |i, j| (i + j) as f64)).unwrap();
        let c = Constant::new(2);
        let phi = c.forward(&x).unwrap();
        assert_eq!(phi.shape(), (3, 1));
        assert!(phi.col_as_slice(0).iter().all(|&v| v == 1.0));
        assert!(Constant::new(3).forward(&x).is_err());
        assert!(c.backward(&x, Mat::zeros(3, 2).as_ref()).is_err());
        assert_eq!(
            c.backward(&x, Mat::zeros(3, 1).as_ref()).unwrap().shape(),
            (0, 0)
        );
    }
}
