//! Random Maclaurin features for the polynomial kernel k(x, y) = (γ x·y + c₀)^p (DESIGN §3.1,
//! "polynomial-kernel maps"; Kar & Karnick 2012), learnable.
//!
//! Homogenisation: with x' = [√γ x, √c₀] (c₀ ≥ 0), k(x, y) = (x'·y')^p, whose Maclaurin series
//! has the single term of degree p, so Random Maclaurin draws exactly p Rademacher vectors
//! w_{r,1} … w_{r,p} ∈ {±1}^{d+1} per feature and sets
//! φ_r(x) = D^{-1/2} Π_l (w_{r,l}·x'), r = 1 … D.
//! Since E[(w·x')(w·y')] = x'·y' for independent Rademacher entries,
//! E[φ(x)ᵀφ(y)] = (x'·y')^p = k(x, y), with an error falling like D^{-1/2}.
//!
//! Parameters: W of shape (d + 1) × (p·D); column r·p + l holds w_{r,l} (features contiguous).
//! S = X'W = √γ X W_top + √c₀ 1 w_lastᵀ is one product with X (sparse stays sparse).
//! Backward: ∂f/∂S_{:, r·p+l} = D^{-1/2} G_{:, r} ∘ Π_{l'≠l} S_{:, r·p+l'} =: Q, then
//! ∂f/∂W = [√γ XᵀQ; √c₀ 1ᵀQ]. Cost O(p·(nnz(X)·D + n·D)).

use gimc_linalg::FeatureMatrix;
use gimc_linalg::dense::check_finite;
use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::rng::GimcRng;
use rand::Rng;
use rayon::prelude::*;

use crate::Result;
use crate::affine::{affine, affine_backward};
use crate::error::{check_nonneg, check_pos, param_err};
use crate::map::{FeatureMap, LearnableMap, check_grad, check_input, check_params};

gimc_linalg::params! {
    /// Hyper-parameters of [`RandomMaclaurin`]. Build with [`PolynomialParams::new`] (no field has
    /// a default); [`PolynomialParams::check`] validates them into the [`ValidPolynomialParams`]
    /// that [`RandomMaclaurin::new`] takes.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct PolynomialParams => ValidPolynomialParams {
        /// D features for (γ x·y + c₀)^p.
        required {
            /// Number of features D ≥ 1 (the output dimension).
            pub features: usize,
            /// Scale γ > 0 of the inner product.
            pub gamma: f64,
            /// Offset c₀ ≥ 0 (finite).
            pub coef0: f64,
            /// Degree p ≥ 1.
            pub degree: u32,
        }
    }
    /// Checks D ≥ 1, γ finite and > 0, c₀ finite and ≥ 0 (a negative offset has no
    /// homogenisation), 1 ≤ p ≤ 64.
    check |this| -> crate::FeatMapError {
        if this.features == 0 {
            return Err(param_err("features", "must be at least 1"));
        }
        check_pos("gamma", this.gamma)?;
        check_nonneg("coef0", this.coef0)?;
        if !(1..=64).contains(&this.degree) {
            return Err(param_err(
                "degree",
                format!("must be in 1..=64, got {}", this.degree),
            ));
        }
    }
}

/// Random Maclaurin features for (γ x·y + c₀)^p; learnable in W ((d + 1) × p·D).
#[derive(Debug, Clone, PartialEq)]
pub struct RandomMaclaurin {
    w: Mat<f64>,
    gamma: f64,
    coef0: f64,
    degree: usize,
    features: usize,
}

impl RandomMaclaurin {
    /// Draws the Rademacher vectors from `rng`.
    pub fn new(
        input_dim: usize,
        params: &ValidPolynomialParams,
        rng: &mut GimcRng,
    ) -> Result<Self> {
        let degree = params.degree as usize;
        let cols = degree * params.features;
        let mut w = Mat::<f64>::zeros(input_dim + 1, cols);
        for j in 0..cols {
            for i in 0..=input_dim {
                w[(i, j)] = if rng.random::<bool>() { 1.0 } else { -1.0 };
            }
        }
        Ok(Self {
            w,
            gamma: params.gamma,
            coef0: params.coef0,
            degree,
            features: params.features,
        })
    }

    /// A map with explicit weights W ((d + 1) × p·D, column r·p + l = w_{r,l}).
    pub fn from_weights(w: Mat<f64>, gamma: f64, coef0: f64, degree: u32) -> Result<Self> {
        let p = degree as usize;
        if w.nrows() == 0 || p == 0 || !w.ncols().is_multiple_of(p) {
            return Err(param_err(
                "w",
                format!(
                    "need (d + 1) x (p·D) weights with p = {degree}, got {} x {}",
                    w.nrows(),
                    w.ncols()
                ),
            ));
        }
        PolynomialParams::new(w.ncols() / p, gamma, coef0, degree).check()?;
        check_finite(w.as_ref())?;
        Ok(Self {
            features: w.ncols() / p,
            w,
            gamma,
            coef0,
            degree: p,
        })
    }

    /// S = X'W (n × p·D).
    fn projections(&self, x: &FeatureMatrix) -> Result<Mat<f64>> {
        affine(x, self.w.as_ref(), self.gamma.sqrt(), self.coef0.sqrt())
    }

    fn scale(&self) -> f64 {
        1.0 / (self.features as f64).sqrt()
    }
}

impl FeatureMap for RandomMaclaurin {
    fn input_dim(&self) -> usize {
        self.w.nrows() - 1
    }

    fn output_dim(&self) -> usize {
        self.features
    }

    fn forward(&self, x: &FeatureMatrix) -> Result<Mat<f64>> {
        check_input("RandomMaclaurin::forward", x, self.input_dim())?;
        let s = self.projections(x)?;
        let (n, p, scale) = (x.nrows(), self.degree, self.scale());
        let mut phi = gimc_linalg::dense::zeros_padded(n, self.features);
        phi.as_mut()
            .par_col_iter_mut()
            .enumerate()
            .for_each(|(r, col)| {
                for (i, v) in col.iter_mut().enumerate() {
                    let mut prod = scale;
                    for l in 0..p {
                        prod *= s[(i, r * p + l)];
                    }
                    *v = prod;
                }
            });
        Ok(phi)
    }
}

impl LearnableMap for RandomMaclaurin {
    fn params(&self) -> MatRef<'_, f64> {
        self.w.as_ref()
    }

    fn set_params(&mut self, params: Mat<f64>) -> Result<()> {
        check_params(
            "RandomMaclaurin::set_params",
            params.as_ref(),
            self.w.shape(),
        )?;
        self.w = params;
        Ok(())
    }

    fn backward(&self, x: &FeatureMatrix, g: MatRef<'_, f64>) -> Result<Mat<f64>> {
        check_input("RandomMaclaurin::backward", x, self.input_dim())?;
        check_grad("RandomMaclaurin::backward", g, x.nrows(), self.output_dim())?;
        let s = self.projections(x)?;
        let (n, p, scale) = (x.nrows(), self.degree, self.scale());
        // Q_{:, r·p+l} = D^{-1/2} G_{:, r} ∘ Π_{l'≠l} S_{:, r·p+l'} (prefix/suffix products, no
        // division, so zeros in S are handled)
        let mut q = gimc_linalg::dense::zeros_padded(n, p * self.features);
        q.as_mut()
            .par_col_chunks_mut(p)
            .enumerate()
            .for_each(|(r, mut block)| {
                let mut prefix = vec![1.0f64; p];
                for i in 0..n {
                    let mut acc = 1.0;
                    for (l, pre) in prefix.iter_mut().enumerate() {
                        *pre = acc;
                        acc *= s[(i, r * p + l)];
                    }
                    let mut suffix = scale * g[(i, r)];
                    for l in (0..p).rev() {
                        block[(i, l)] = prefix[l] * suffix;
                        suffix *= s[(i, r * p + l)];
                    }
                }
            });
        affine_backward(x, q.as_ref(), self.gamma.sqrt(), self.coef0.sqrt())
    }
}
