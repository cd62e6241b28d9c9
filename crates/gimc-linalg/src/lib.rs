//! Dense (faer) and sparse (sprs) linear-algebra glue shared by every gimc crate (DESIGN §2, §3.2).
//!
//! This is the only crate that converts between sprs and faer. It provides the feature-matrix
//! type ([`FeatureMatrix`]: faer dense or sprs CSR) with the products every solver needs, the
//! observed-entry set Ω stored in CSR and CSC order with the sampled-product kernel (the hot
//! loop of MC, IMC, GIMC and MCCC), kernel blocks computed through GEMM, conjugate gradient on
//! a linear operator, ridge / Cholesky solves, thin and truncated SVD, the symmetric
//! eigendecomposition with the pseudo-inverse square root, and seeded ChaCha RNG helpers.
//! Dense matrices follow faer's vocabulary at boundaries: take `MatRef`, write into `MatMut`,
//! return `Mat`.

mod error;
pub mod features;
pub mod rng;

pub use error::LinalgError;
pub use features::FeatureMatrix;

/// Re-exported so downstream crates name one version of each.
pub use faer;
/// Re-exported so downstream crates name one version of each.
pub use sprs;

/// Result alias of this crate.
pub type Result<T, E = LinalgError> = std::result::Result<T, E>;
