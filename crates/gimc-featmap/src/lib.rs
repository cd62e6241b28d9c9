//! Feature maps for gimc (DESIGN §3.1, used by GIMC as in §3.3): the open [`FeatureMap`] trait
//! (forward pass Φ = φ(X), dimensions) and [`LearnableMap`] (parameters and the backward pass
//! ∂f/∂U from G = ∂f/∂Φ, a vector–Jacobian product that never forms a per-row Jacobian), with
//! blanket impls so `Box<dyn FeatureMap>` works; the built-in maps [`Identity`],
//! [`RandomFourier`] (GIMC eq. 6, Φ = m^{-1/2}[cos XU, sin XU]), [`RandomCosine`] (random
//! phases, Φ = √(2/D) cos(XU + 1bᵀ), as scikit-learn's `RBFSampler`), [`Nystrom`] (eq. 7–8,
//! Φ = k(X, U)(E^†)^{1/2}, landmarks uniform or k-means centres, learnable with M fixed),
//! [`RandomMaclaurin`] for the polynomial kernel (γ x·y + c₀)^p and [`ActivationMap`]
//! (Φ = m^{-1/2} σ(XU + 1bᵀ), σ = tanh or sigmoid), all learnable except the identity and all
//! keeping sparse input sparse in their products; and the public [`conformance`] suite (shapes,
//! determinism, dense = sparse, kernel error falling with D, backward against finite
//! differences) that every map, built-in or user-written, should pass. Random parameters are
//! drawn from a seeded [`gimc_linalg::rng::GimcRng`] passed in.

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

pub use activation::{Activation, ActivationMap, ActivationParams};
pub use cosine::RandomCosine;
pub use error::{FeatMapError, Result};
pub use family::{CosineFamily, FourierFamily, MapFamily, NystromFamily, scaled_dim};
pub use fourier::{RandomFourier, RandomFourierParams};
pub use identity::Identity;
pub use map::{FeatureMap, LearnableMap, check_grad, check_input, check_params};
pub use nystrom::{DEFAULT_REL_TOL, LandmarkInit, Nystrom, NystromNorm, NystromParams};
pub use polynomial::{PolynomialParams, RandomMaclaurin};
