//! Dense (faer) and sparse (sprs) linear-algebra glue shared by every gimc crate (DESIGN §2,
//! §3.1–§3.3): the feature-matrix type ([`FeatureMatrix`], faer dense or sprs CSR) with its
//! products `XU`, `XᵀG`, `XᵀX`; the observed-entry set Ω ([`Observed`], CSR plus a CSC
//! permutation) with the sampled-product kernel p_i·q_j on Ω, `RQ` and `RᵀP` (DESIGN §3.2, the
//! hot loop of MC, IMC, GIMC and MCCC); kernel blocks k(x_i, u_r) computed as one GEMM plus row
//! norms, ‖x‖² − 2x·u + ‖u‖² (§3.1); conjugate gradient on matrix-valued SPD operators (§3.2);
//! Cholesky and ridge solves (primal or dual, §3.2–§3.3); thin, randomized truncated and
//! operator-based SVD with singular-value shrinkage (§3.2, §3.5); the symmetric
//! eigendecomposition with the Nyström pseudo-inverse square root (E^†)^{1/2} (§3.1); and seeded
//! ChaCha8 generators. It is the only crate that converts between sprs and faer. Dense matrices
//! follow faer's vocabulary at boundaries (take `MatRef`, write into `MatMut`, return `Mat`);
//! every row-parallel kernel gives bitwise identical results for any number of threads.

pub mod cg;
pub mod dense;
pub mod eig;
mod error;
pub mod features;
pub mod kernels;
pub mod observed;
pub mod rng;
pub mod solve;
pub mod sparse;
pub mod svd;

pub use cg::{CgParams, CgReport, LinearOperator, conjugate_gradient};
pub use eig::{pinv_factor, pinv_sqrt, sym_eig, sym_sqrt};
pub use error::LinalgError;
pub use features::{FeatureMatrix, Standardizer};
pub use kernels::{Kernel, kernel_block, kernel_block_dense};
pub use observed::{Observed, omega_mul_dense, omega_tr_mul_dense, sampled_dot};
pub use rng::GimcRng;
pub use solve::{cholesky_solve, ridge, ridge_solve};
pub use svd::{MatrixOperator, Svd, shrink_singular_values, thin_svd, top_k_svd, top_k_svd_op};

/// Re-exported so downstream crates name one version of each.
pub use faer;
/// Re-exported so downstream crates name one version of each.
pub use sprs;

/// Result alias of this crate.
pub type Result<T, E = LinalgError> = std::result::Result<T, E>;
