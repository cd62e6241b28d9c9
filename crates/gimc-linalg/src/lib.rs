//! Dense (faer) and sparse (sprs) linear-algebra glue shared by every gimc crate (DESIGN §2,
//! §3.1–§3.3).
//!
//! ```
//! use gimc_linalg::rng::{gaussian_mat, seeded};
//! use gimc_linalg::sparse::dense_to_csr;
//! use gimc_linalg::{FeatureMatrix, ridge};
//!
//! // 50 items with 4 features and noiseless 2-column targets Y = X W, all drawn from one
//! // seeded generator (every random draw in gimc is seeded).
//! let mut rng = seeded(7);
//! let x = gaussian_mat(&mut rng, 50, 4, 1.0);
//! let w_true = gaussian_mat(&mut rng, 4, 2, 1.0);
//! let y = &x * &w_true;
//!
//! // The same features stored dense and sparse give the same product X·W.
//! let dense = FeatureMatrix::dense(x.clone())?;
//! let sparse = FeatureMatrix::sparse(dense_to_csr(x.as_ref())?)?;
//! let xw_dense = dense.mul_dense(w_true.as_ref())?;
//! let xw_sparse = sparse.mul_dense(w_true.as_ref())?;
//! assert!((&xw_dense - &xw_sparse).norm_max() < 1e-12);
//!
//! // Ridge regression (XᵀX + λI)⁻¹XᵀY with a tiny λ recovers W (4 × 2).
//! let w = ridge(&sparse, y.as_ref(), 1e-9)?;
//! assert_eq!((w.nrows(), w.ncols()), (4, 2));
//! assert!((&w - &w_true).norm_max() < 1e-6);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Contents
//!
//! - [`FeatureMatrix`]: the n × d feature matrix X, faer dense or sprs CSR, with its products
//!   `XU`, `XᵀG`, `XᵀX`, and the input transform of a model, [`Preprocess`] (kept columns,
//!   [`TfIdf`] weights, the [`Standardizer`], row normalisation and scale; [`features`]).
//! - [`Observed`]: the observed-entry set Ω (CSR plus a CSC permutation) with the
//!   sampled-product kernel p_i·q_j on Ω, `RQ` and `RᵀP` — the hot loop of MC, IMC, GIMC and
//!   MCCC ([`observed`], DESIGN §3.2).
//! - [`kernel_block`] / [`kernel_block_dense`]: kernel blocks k(x_i, u_r) computed as one GEMM
//!   plus row norms, ‖x‖² − 2x·u + ‖u‖² ([`kernels`], §3.1).
//! - [`conjugate_gradient`]: CG on matrix-valued SPD operators ([`cg`], §3.2), and
//!   [`preconditioned_conjugate_gradient`] with an SPD preconditioner.
//! - [`cholesky_solve`], [`ridge_solve`], [`ridge`]: Cholesky and ridge solves, primal or dual
//!   ([`solve`], §3.2–§3.3).
//! - [`thin_svd`], [`top_k_svd`], [`top_k_svd_op`], [`shrink_singular_values`]: thin,
//!   randomized truncated and operator-based SVD with singular-value shrinkage ([`svd`], §3.2,
//!   §3.5).
//! - [`sym_eig`], [`pinv_sqrt`]: the symmetric eigendecomposition and the Nyström
//!   pseudo-inverse square root (E^†)^{1/2} ([`eig`], §3.1).
//! - [`rng::seeded`], [`rng::child`]: seeded ChaCha8 generators ([`GimcRng`]) and independent
//!   streams for parallel work ([`rng`]).
//! - [`memory`]: the memory pre-flight: [`memory::available_bytes`], estimates and the
//!   [`memory::InsufficientMemory`] refusal.
//! - [`simd::clear_upper_state`]: clears the dirty upper SIMD state faer's GEMMs leave, before
//!   loops of libm calls (`exp`, `sin`, …) that it would otherwise slow down up to 30× ([`simd`]).
//! - [`params`](mod@params): the one parameters idiom, the [`params::Params`] trait and the
//!   [`params!`] macro (struct, defaults, `with_*` setters, `check` into a valid form).
//! - [`observe`]: the one observer shape of every iterative loop ([`observe::Observer`],
//!   [`observe::IterationRecord`], continue or stop).
//! - [`dense`] and [`sparse`]: dimension-checked dense helpers and the sprs ↔ faer products and
//!   conversions; this is the only crate that converts between sprs and faer.
//!
//! # Conventions
//!
//! Dense matrices follow faer's vocabulary at boundaries (take `MatRef`, write into `MatMut`,
//! return `Mat`). Every row-parallel kernel gives bitwise identical results for any number of
//! threads. Errors are a [`LinalgError`] naming the operation and the offending shape or value.

#![deny(missing_docs)]

pub mod cg;
pub mod dense;
pub mod eig;
pub mod error;
pub mod features;
pub mod kernels;
pub mod memory;
pub mod observe;
pub mod observed;
pub mod params;
pub mod rng;
pub mod shared;
pub mod simd;
pub mod solve;
pub mod sparse;
pub mod sums;
pub mod svd;
pub mod thin;

pub use cg::{
    CgParams, CgReport, LinearOperator, ValidCgParams, conjugate_gradient,
    preconditioned_conjugate_gradient,
};
pub use eig::{pinv_factor, pinv_sqrt, sym_eig, sym_eig_seq, sym_sqrt};
pub use error::{DimError, LinalgError, ParamError};
pub use features::{
    DENSE_FRACTION, FeatureMatrix, Gamma, Preprocess, RowNorm, StandardizeMode, Standardizer,
    TfIdf, gamma_scale_from_moments,
};
pub use kernels::{Kernel, kernel_block, kernel_block_dense};
pub use observed::{Observed, omega_mul_dense, omega_tr_mul_dense, sampled_dot};
pub use rng::GimcRng;
pub use solve::{cholesky_solve, ridge, ridge_solve};
pub use sums::{OneProcess, RowSums};
pub use svd::{MatrixOperator, Svd, shrink_singular_values, thin_svd, top_k_svd, top_k_svd_op};

/// Re-exported so downstream crates name one version of each.
pub use faer;
/// Re-exported so downstream crates name one version of each.
pub use sprs;

/// Result alias of this crate.
pub type Result<T, E = LinalgError> = std::result::Result<T, E>;
