//! The identity map φ(x) = x (DESIGN §3.1): plain IMC on the raw features. Φ is returned dense
//! (the [`FeatureMap`] contract); callers that can use X directly should do so for large sparse
//! inputs.

use gimc_linalg::FeatureMatrix;
use gimc_linalg::faer::Mat;

use crate::Result;
use crate::map::{FeatureMap, check_input};

/// φ(x) = x on R^d (D = d). Not learnable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    dim: usize,
}

impl Identity {
    /// The identity on R^`dim`.
    pub fn new(dim: usize) -> Self {
        Self { dim }
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
