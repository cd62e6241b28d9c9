//! Activation maps: the three-layer-network view of GIMC (DESIGN §3.1, "other activations in
//! place of cos/sin"), learnable.
//!
//! Φ = m^{-1/2} σ(XU + 1bᵀ) for an elementwise activation σ (tanh or the logistic sigmoid), with
//! parameters W = [U; bᵀ] of shape (d + 1) × m initialised as u_r ~ N(0, 2γ I) (the RFF scale)
//! and b_r ~ N(0, bias_std²). Z = XU + 1bᵀ is one product with X (sparse stays sparse).
//! Backward: with H = m^{-1/2} G ∘ σ'(Z), ∂f/∂U = XᵀH and ∂f/∂b = 1ᵀH (i.e. ∂f/∂W = [XᵀH; 1ᵀH]).
//! Cost O(nnz(X)·m + n·m). These maps approximate the (non-closed-form) kernel
//! E[σ(uᵀx + b) σ(uᵀy + b)] as m grows.

use gimc_linalg::FeatureMatrix;
use gimc_linalg::dense::check_finite;
use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::rng::{GimcRng, gaussian_mat, gaussian_vec};

use crate::Result;
use crate::affine::{affine, affine_backward, par_map, par_zip_map};
use crate::error::{check_nonneg, check_pos, param_err};
use crate::map::{FeatureMap, LearnableMap, check_grad, check_input, check_params};

/// The elementwise nonlinearity σ of an [`ActivationMap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Activation {
    /// σ(t) = tanh t, σ' = 1 − tanh² t (the default).
    #[default]
    Tanh,
    /// σ(t) = 1 / (1 + e^{−t}), σ' = σ(1 − σ).
    Sigmoid,
}

impl Activation {
    /// σ(t).
    pub fn eval(self, t: f64) -> f64 {
        match self {
            Activation::Tanh => t.tanh(),
            Activation::Sigmoid => sigmoid(t),
        }
    }

    /// σ'(t).
    pub fn derivative(self, t: f64) -> f64 {
        match self {
            Activation::Tanh => {
                let y = t.tanh();
                1.0 - y * y
            }
            Activation::Sigmoid => {
                let y = sigmoid(t);
                y * (1.0 - y)
            }
        }
    }
}

/// The logistic function, evaluated without overflow for either sign.
fn sigmoid(t: f64) -> f64 {
    if t >= 0.0 {
        1.0 / (1.0 + (-t).exp())
    } else {
        let e = t.exp();
        e / (1.0 + e)
    }
}

gimc_linalg::params! {
    /// Hyper-parameters of [`ActivationMap`]. Build with [`ActivationParams::new`] (m and γ have no
    /// default) and the `with_*` methods; [`ActivationParams::check`] validates them into the
    /// [`ValidActivationParams`] that [`ActivationMap::new`] takes.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct ActivationParams => ValidActivationParams {
        /// m tanh units with weights N(0, 2γ) and biases N(0, 1).
        required {
            /// Number of hidden units m ≥ 1 (the output dimension).
            pub m: usize,
            /// Weight scale: u_r ~ N(0, 2γ I); γ finite and > 0.
            pub gamma: f64,
        }
        /// Bias scale: b_r ~ N(0, bias_std²); finite and ≥ 0. Default 1.
        pub bias_std: f64 = 1.0 => with_bias_std,
        /// The nonlinearity. Default tanh.
        pub activation: Activation = Activation::Tanh => with_activation,
    }
    /// Checks m ≥ 1, γ finite and > 0, bias_std finite and ≥ 0.
    check |this| -> crate::FeatMapError {
        if this.m == 0 {
            return Err(param_err("m", "must be at least 1"));
        }
        check_pos("gamma", this.gamma)?;
        check_nonneg("bias_std", this.bias_std)?;
    }
}

/// Φ = m^{-1/2} σ(XU + 1bᵀ); learnable in W = [U; bᵀ] ((d + 1) × m).
#[derive(Debug, Clone, PartialEq)]
pub struct ActivationMap {
    w: Mat<f64>,
    activation: Activation,
}

impl ActivationMap {
    /// Draws U and b from `rng`.
    pub fn new(
        input_dim: usize,
        params: &ValidActivationParams,
        rng: &mut GimcRng,
    ) -> Result<Self> {
        let u = gaussian_mat(rng, input_dim, params.m, (2.0 * params.gamma).sqrt());
        let b = gaussian_vec(rng, params.m, params.bias_std);
        let w = Mat::from_fn(input_dim + 1, params.m, |i, j| {
            if i < input_dim { u[(i, j)] } else { b[j] }
        });
        Ok(Self {
            w,
            activation: params.activation,
        })
    }

    /// A map with explicit weights W = [U; bᵀ] ((d + 1) × m, m ≥ 1).
    pub fn from_weights(w: Mat<f64>, activation: Activation) -> Result<Self> {
        if w.nrows() == 0 || w.ncols() == 0 {
            return Err(param_err(
                "w",
                format!(
                    "need (d + 1) x m weights with m >= 1, got {} x {}",
                    w.nrows(),
                    w.ncols()
                ),
            ));
        }
        check_finite(w.as_ref())?;
        Ok(Self { w, activation })
    }

    /// The nonlinearity.
    pub fn activation(&self) -> Activation {
        self.activation
    }

    fn scale(&self) -> f64 {
        1.0 / (self.w.ncols() as f64).sqrt()
    }
}

impl FeatureMap for ActivationMap {
    fn input_dim(&self) -> usize {
        self.w.nrows() - 1
    }

    fn output_dim(&self) -> usize {
        self.w.ncols()
    }

    fn forward(&self, x: &FeatureMatrix) -> Result<Mat<f64>> {
        check_input("ActivationMap::forward", x, self.input_dim())?;
        let mut z = affine(x, self.w.as_ref(), 1.0, 1.0)?;
        let (act, scale) = (self.activation, self.scale());
        par_map(&mut z, |t| scale * act.eval(t));
        Ok(z)
    }
}

impl LearnableMap for ActivationMap {
    fn params(&self) -> MatRef<'_, f64> {
        self.w.as_ref()
    }

    fn set_params(&mut self, params: Mat<f64>) -> Result<()> {
        check_params("ActivationMap::set_params", params.as_ref(), self.w.shape())?;
        self.w = params;
        Ok(())
    }

    fn backward(&self, x: &FeatureMatrix, g: MatRef<'_, f64>) -> Result<Mat<f64>> {
        check_input("ActivationMap::backward", x, self.input_dim())?;
        check_grad("ActivationMap::backward", g, x.nrows(), self.output_dim())?;
        let mut h = affine(x, self.w.as_ref(), 1.0, 1.0)?;
        let (act, scale) = (self.activation, self.scale());
        par_zip_map(&mut h, g, |t, gv| scale * gv * act.derivative(t));
        affine_backward(x, h.as_ref(), 1.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivatives_match_finite_differences_and_sigmoid_is_stable() {
        for act in [Activation::Tanh, Activation::Sigmoid] {
            for t in [-30.0, -3.0, -0.5, 0.0, 0.7, 4.0, 30.0] {
                let h = 1e-6;
                let fd = (act.eval(t + h) - act.eval(t - h)) / (2.0 * h);
                assert!((fd - act.derivative(t)).abs() < 1e-8, "{act:?} at {t}");
            }
        }
        assert_eq!(sigmoid(-1000.0), 0.0);
        assert_eq!(sigmoid(1000.0), 1.0);
        assert!((sigmoid(0.0) - 0.5).abs() < 1e-16);
    }
}
