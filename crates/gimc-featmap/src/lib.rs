//! Feature maps for gimc (DESIGN §3.1, used by GIMC as in §3.3): Φ = φ(X) with learnable
//! parameters, the built-in kernel approximations, and a conformance suite for any map.
//!
//! ```
//! use gimc_featmap::{FeatureMap, LearnableMap, RandomFourier, RandomFourierParams};
//! use gimc_linalg::rng::{gaussian_mat, seeded};
//! use gimc_linalg::{FeatureMatrix, Kernel, kernel_block_dense};
//!
//! // 6 rows with 3 features, and m = 2000 random directions for exp(−γ‖x − y‖²), γ = 0.5.
//! let mut rng = seeded(42);
//! let x = gaussian_mat(&mut rng, 6, 3, 1.0);
//! let gamma = 0.5;
//! // parameters are checked once, into the validated type the constructor takes
//! let params = RandomFourierParams::new(2000, gamma).check()?;
//! let map = RandomFourier::new(3, &params, &mut rng)?;
//!
//! // Forward pass: Φ = m^{-1/2}[cos XU, sin XU] is n × 2m; the parameters U are d × m.
//! let features = FeatureMatrix::dense(x.clone())?;
//! let phi = map.forward(&features)?;
//! assert_eq!((phi.nrows(), phi.ncols()), (6, map.output_dim()));
//! assert_eq!((map.params().nrows(), map.params().ncols()), (3, 2000));
//!
//! // ΦΦᵀ approximates the RBF kernel matrix, with an error of order m^{-1/2}.
//! let approx = map.approx_kernel(&features, &features)?;
//! let exact = kernel_block_dense(&Kernel::Rbf { gamma }, x.as_ref(), x.as_ref())?;
//! assert!((&approx - &exact).norm_max() < 0.1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Contents
//!
//! - [`FeatureMap`]: the open trait of a map (forward pass Φ = φ(X), input and output
//!   dimensions, kernel approximation ΦΦᵀ), with blanket impls so `Box<dyn FeatureMap>` works.
//! - [`LearnableMap`]: parameters U and the backward pass ∂f/∂U from G = ∂f/∂Φ, a
//!   vector–Jacobian product that never forms a per-row Jacobian.
//! - The built-in maps, all learnable except the identity and all keeping sparse input sparse
//!   in their products:
//!   - [`Identity`]: Φ = X, and [`Constant`]: Φ = 1 (an intercept);
//!   - [`RandomFourier`]: GIMC eq. 6, Φ = m^{-1/2}[cos XU, sin XU];
//!   - [`RandomCosine`]: random phases, Φ = √(2/D) cos(XU + 1bᵀ), as scikit-learn's
//!     `RBFSampler`;
//!   - [`Nystrom`]: eq. 7–8, Φ = k(X, U)(E^†)^{1/2}, landmarks uniform or k-means centres,
//!     learnable with M fixed;
//!   - [`RandomMaclaurin`]: the polynomial kernel (γ x·y + c₀)^p;
//!   - [`ActivationMap`]: Φ = m^{-1/2} σ(XU + 1bᵀ), σ = tanh or sigmoid.
//! - [`MapFamily`]: how model selection draws an initial map from (m, γ) and a seeded
//!   generator ([`FourierFamily`], [`CosineFamily`], [`NystromFamily`], or a user's family).
//! - [`conformance`]: the public suite (shapes, determinism, dense = sparse, kernel error
//!   falling with D, backward against finite differences) that every map, built-in or
//!   user-written, should pass.
//!
//! Random parameters are drawn from a seeded [`gimc_linalg::rng::GimcRng`] passed in.

#![deny(missing_docs)]

mod activation;
mod affine;
pub mod conformance;
mod cosine;
mod error;
mod family;
mod fourier;
mod identity;
mod map;
mod nystrom;
mod polynomial;

pub use activation::{Activation, ActivationMap, ActivationParams, ValidActivationParams};
pub use cosine::RandomCosine;
pub use error::{FeatMapError, Result};
pub use family::{CosineFamily, FourierFamily, MapFamily, NystromFamily, scaled_dim};
pub use fourier::{RandomFourier, RandomFourierParams, ValidRandomFourierParams};
pub use identity::{Constant, Identity};
pub use map::{FeatureMap, LearnableMap, check_grad, check_input, check_params};
pub use nystrom::{
    DEFAULT_REL_TOL, LandmarkInit, Nystrom, NystromNorm, NystromParams, ValidNystromParams,
};
pub use polynomial::{PolynomialParams, RandomMaclaurin, ValidPolynomialParams};
