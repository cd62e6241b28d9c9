//! Random Fourier features of the Laplacian kernel k(x, y) = exp(−γ‖x − y‖₁), learnable in
//! their directions.
//!
//! # The map
//!
//! Bochner's theorem writes a shift-invariant kernel as the characteristic function of a
//! probability density p: k(x, y) = E_{u∼p}[cos(uᵀ(x − y))]. The Laplacian kernel factorises
//! over coordinates, exp(−γ‖δ‖₁) = Π_j exp(−γ|δ_j|), and exp(−γ|t|) is the characteristic
//! function of the Cauchy distribution with median 0 and scale γ, so p is a product of Cauchy
//! densities: the entries u_rj of every direction are i.i.d. Cauchy(0, γ), density
//! γ / (π(γ² + u²)). (Compare the RBF kernel exp(−γ‖δ‖²), whose directions are N(0, 2γI).)
//!
//! With m directions U = [u_1 … u_m] (d × m) and S = XU (n × m),
//!
//! Φ = m^{-1/2} [cos S, sin S]  (n × 2m, so D = 2m),
//!
//! and φ(x)ᵀφ(y) = m^{-1} Σ_r cos(u_rᵀ(x − y)), an unbiased estimate of k(x, y) whose error
//! falls like m^{-1/2}. Every row of Φ has unit norm, matching k(x, x) = 1.
//!
//! # Learning the directions
//!
//! As for GIMC-LFF, the parameters are U. For a scalar f with G = ∂f/∂Φ split into its cos and
//! sin halves G = [G_c, G_s],
//!
//! ∂f/∂U = m^{-1/2} Xᵀ (G_s ∘ cos S − G_c ∘ sin S),
//!
//! one product XU and one product XᵀH: O(nnz(X)·m + n·m), and sparse X stays sparse in both.
//!
//! # Things to know about this kernel
//!
//! - The Cauchy distribution has heavy tails: a few directions have very large entries and
//!   give rapidly oscillating features. That is what makes the kernel non-smooth at x = y, not
//!   a bug; learning U can move them.
//! - γ multiplies an ℓ1 distance, not a squared ℓ2 distance, so the RBF γ grid does not carry
//!   over: the median heuristic γ = 1 / median_{i≠j} ‖x_i − x_j‖₁ is a reasonable centre for a
//!   search.
//! - This is scikit-learn's `laplacian_kernel` (ℓ1 distance), not the "exponential" kernel
//!   exp(−γ‖x − y‖₂), whose spectral density is a multivariate Cauchy instead.

use gimc_featmap::{
    FeatMapError, FeatureMap, LearnableMap, MapFamily, Result, check_grad, check_input,
    check_params, scaled_dim,
};
use gimc_linalg::FeatureMatrix;
use gimc_linalg::dense::check_finite;
use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::rng::GimcRng;
use rand_distr::{Cauchy, Distribution};

/// Shorthand for a [`FeatMapError::InvalidParameter`].
fn invalid(name: &'static str, reason: impl Into<String>) -> FeatMapError {
    FeatMapError::InvalidParameter {
        name,
        reason: reason.into(),
    }
}

/// Checks that γ is finite and > 0.
fn check_gamma(gamma: f64) -> Result<()> {
    if gamma.is_finite() && gamma > 0.0 {
        Ok(())
    } else {
        Err(invalid(
            "gamma",
            format!("must be finite and > 0, got {gamma}"),
        ))
    }
}

/// Random Fourier features of the Laplacian kernel exp(−γ‖x − y‖₁):
/// Φ = m^{-1/2}[cos XU, sin XU] with directions U (d × m) initialised with i.i.d. Cauchy(0, γ)
/// entries; learnable in U. See the [module documentation](self) for the derivation.
///
/// ```
/// use custom_map::LaplaceFourier;
/// use gimc_featmap::{FeatureMap, LearnableMap};
/// use gimc_linalg::FeatureMatrix;
/// use gimc_linalg::faer::Mat;
/// use gimc_linalg::rng::seeded;
///
/// let x = FeatureMatrix::dense(Mat::from_fn(5, 2, |i, j| (i + j) as f64 / 5.0))?;
/// let map = LaplaceFourier::new(2, 4, 1.0, &mut seeded(3))?;
/// assert_eq!((map.output_dim(), map.n_params()), (8, 8));
/// // every row of Φ has unit norm: φ(x)ᵀφ(x) = k(x, x) = 1
/// let k = map.approx_kernel(&x, &x)?;
/// assert!((0..5).all(|i| (k[(i, i)] - 1.0).abs() < 1e-12));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct LaplaceFourier {
    /// The directions U (d × m), the learnable parameters.
    u: Mat<f64>,
    /// The γ the map was initialised for (metadata; the forward pass uses only U).
    gamma: f64,
}

impl LaplaceFourier {
    /// Draws U (`input_dim` × `m`) with i.i.d. Cauchy(0, `gamma`) entries from `rng`, column by
    /// column (direction by direction).
    ///
    /// Errors if m = 0, γ is not finite and > 0, `input_dim`·m overflows, or γ is so large
    /// that a sampled entry is not finite.
    pub fn new(input_dim: usize, m: usize, gamma: f64, rng: &mut GimcRng) -> Result<Self> {
        scaled_dim(m, 2)?;
        check_gamma(gamma)?;
        if input_dim.checked_mul(m).is_none() {
            return Err(invalid(
                "m",
                format!("{input_dim} x {m} directions are too many"),
            ));
        }
        let cauchy = Cauchy::new(0.0, gamma).map_err(|e| invalid("gamma", e.to_string()))?;
        let mut u = Mat::<f64>::zeros(input_dim, m);
        for r in 0..m {
            for j in 0..input_dim {
                u[(j, r)] = cauchy.sample(rng);
            }
        }
        if check_finite(u.as_ref()).is_err() {
            return Err(invalid(
                "gamma",
                format!("{gamma} is too large: a sampled direction is not finite"),
            ));
        }
        Ok(Self { u, gamma })
    }

    /// A map with the given directions U (d × m, m ≥ 1, finite entries) and the γ they were
    /// drawn for (finite, > 0; kept as metadata, e.g. to store it in a model file).
    pub fn from_directions(u: Mat<f64>, gamma: f64) -> Result<Self> {
        scaled_dim(u.ncols(), 2)?;
        check_gamma(gamma)?;
        check_finite(u.as_ref())?;
        Ok(Self { u, gamma })
    }

    /// The directions U (d × m).
    pub fn directions(&self) -> MatRef<'_, f64> {
        self.u.as_ref()
    }

    /// Number of directions m (the output dimension is 2m).
    pub fn n_directions(&self) -> usize {
        self.u.ncols()
    }

    /// The γ of the kernel exp(−γ‖x − y‖₁) the map was initialised for. Learning changes U
    /// but not this value.
    pub fn gamma(&self) -> f64 {
        self.gamma
    }

    /// The normalisation m^{-1/2}.
    fn scale(&self) -> f64 {
        1.0 / (self.u.ncols() as f64).sqrt()
    }
}

impl FeatureMap for LaplaceFourier {
    fn input_dim(&self) -> usize {
        self.u.nrows()
    }

    fn output_dim(&self) -> usize {
        2 * self.u.ncols()
    }

    fn forward(&self, x: &FeatureMatrix) -> Result<Mat<f64>> {
        // wrong column count or NaN/Inf in X: an error, never a panic
        check_input("LaplaceFourier::forward", x, self.input_dim())?;
        // S = XU through FeatureMatrix, so sparse X costs O(nnz(X)·m) and is never densified
        let s = x.mul_dense(self.u.as_ref())?;
        let (n, m) = s.shape();
        let scale = self.scale();
        let mut phi = Mat::<f64>::zeros(n, 2 * m);
        for r in 0..m {
            for i in 0..n {
                let (sin, cos) = s[(i, r)].sin_cos();
                phi[(i, r)] = scale * cos;
                phi[(i, m + r)] = scale * sin;
            }
        }
        Ok(phi)
    }
}

impl LearnableMap for LaplaceFourier {
    fn params(&self) -> MatRef<'_, f64> {
        self.u.as_ref()
    }

    fn set_params(&mut self, params: Mat<f64>) -> Result<()> {
        // validate before assigning, so a rejected U leaves the map unchanged
        check_params(
            "LaplaceFourier::set_params",
            params.as_ref(),
            self.u.shape(),
        )?;
        self.u = params;
        Ok(())
    }

    fn backward(&self, x: &FeatureMatrix, g: MatRef<'_, f64>) -> Result<Mat<f64>> {
        check_input("LaplaceFourier::backward", x, self.input_dim())?;
        check_grad("LaplaceFourier::backward", g, x.nrows(), self.output_dim())?;
        let s = x.mul_dense(self.u.as_ref())?;
        let (n, m) = s.shape();
        let scale = self.scale();
        // H = m^{-1/2} (G_s ∘ cos S − G_c ∘ sin S), n × m
        let mut h = Mat::<f64>::zeros(n, m);
        for r in 0..m {
            for i in 0..n {
                let (sin, cos) = s[(i, r)].sin_cos();
                h[(i, r)] = scale * (g[(i, m + r)] * cos - g[(i, r)] * sin);
            }
        }
        // ∂f/∂U = Xᵀ H, again O(nnz(X)·m) for sparse X
        Ok(x.tr_mul_dense(h.as_ref())?)
    }
}

/// The family of [`LaplaceFourier`] maps for model selection: m directions drawn for the
/// Laplacian kernel exp(−γ‖x − y‖₁), D = 2m. Name `llff` (so `gimc-llff` learned and
/// `imc-llff` fixed, once registered).
///
/// ```
/// use custom_map::LaplaceFamily;
/// use gimc_featmap::{FeatureMap, MapFamily};
/// use gimc_linalg::FeatureMatrix;
/// use gimc_linalg::faer::Mat;
/// use gimc_linalg::rng::seeded;
///
/// let x = FeatureMatrix::dense(Mat::from_fn(6, 3, |i, j| (i * j) as f64 / 10.0))?;
/// let map = LaplaceFamily.build(&x, 5, 0.5, &mut seeded(1))?;
/// assert_eq!(map.output_dim(), LaplaceFamily.output_dim(5)?);
/// assert!(LaplaceFamily.build(&x, 5, -1.0, &mut seeded(1)).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LaplaceFamily;

impl LaplaceFamily {
    /// The family's name, `llff`.
    pub const NAME: &'static str = "llff";
}

impl MapFamily for LaplaceFamily {
    type Map = LaplaceFourier;

    fn name(&self) -> &str {
        Self::NAME
    }

    fn output_dim(&self, m: usize) -> Result<usize> {
        scaled_dim(m, 2)
    }

    fn build(
        &self,
        x: &FeatureMatrix,
        m: usize,
        gamma: f64,
        rng: &mut GimcRng,
    ) -> Result<LaplaceFourier> {
        // the map does not depend on the data, only on its number of columns
        LaplaceFourier::new(x.ncols(), m, gamma, rng)
    }
}
