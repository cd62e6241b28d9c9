//! Clustering for gimc: k-means, mini-batch k-means, kernel k-means, online kernel matrix
//! factorisation (OKMF), and the constraint matrix and spectral step of constraint-based
//! clustering.
//!
//! # Example
//!
//! k-means on three well-separated blobs in the plane:
//!
//! ```
//! use gimc_cluster::{KMeansParams, fit_kmeans};
//! use gimc_linalg::FeatureMatrix;
//! use gimc_linalg::faer::Mat;
//! use gimc_linalg::observe::Trace;
//! use gimc_linalg::rng::{gaussian_mat, seeded};
//!
//! // 60 points around (0, 0), (10, 0) and (0, 10); point i belongs to blob i % 3
//! let centres = [[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]];
//! let noise = gaussian_mat(&mut seeded(1), 60, 2, 0.5);
//! let x = FeatureMatrix::dense(Mat::from_fn(60, 2, |i, j| centres[i % 3][j] + noise[(i, j)]))?;
//!
//! // parameters are checked once, into the validated type the fit takes
//! let params = KMeansParams::new(3).with_n_init(5).check()?;
//! // the observer sees the inertia after each restart's seeding and each Lloyd iteration
//! let mut trace = Trace::new();
//! let model = fit_kmeans(&x, &params, &mut seeded(2), &mut trace)?;
//! assert_eq!(model.k(), 3);
//! assert!(trace.records.iter().any(|r| r.extra("restart") == Some(4.0)));
//! // the clusters are the blobs (up to renaming)
//! for i in 0..60 {
//!     assert_eq!(model.labels[i] == model.labels[0], i % 3 == 0);
//! }
//! // new points go to the nearest centre
//! let new = FeatureMatrix::dense(Mat::from_fn(1, 2, |_, j| centres[1][j]))?;
//! assert_eq!(model.predict(&new)?, vec![model.labels[1]]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Overview
//!
//! - [`kmeans`] ([`fit_kmeans`]): k-means++ seeding (or random rows), Lloyd iterations
//!   parallel over rows through one product `X·Cᵀ`, restarts keeping the lowest inertia, dense
//!   or sparse input.
//! - [`minibatch`] ([`fit_minibatch_kmeans`]): mini-batch k-means (Sculley 2010, per-centre
//!   rates 1/count) for data too large for full Lloyd passes.
//! - [`kernel_kmeans`] ([`fit_kernel_kmeans`]): the O(n²)-memory kernel k-means baseline,
//!   refusing more than [`KERNEL_KMEANS_MAX_POINTS`] points.
//! - [`okmf`] ([`fit_okmf`]): online kernel matrix factorisation, SGD on
//!   ½‖φ(x) − Φ(B)Wh‖² + (λ/2)‖W‖² + (α/2)‖h‖² over a budget B, memory independent of n.
//! - [`spectral`] ([`constraint_matrix`], [`spectral_kmeans`]): pairwise constraints as the
//!   observed set of a symmetric similarity matrix, and the "top-k left singular vectors, then
//!   k-means" step shared by MCCC (`gimc::fit_mccc`) and GIMC's Algorithm 2
//!   (`gimc::fit_semisupervised`).
//!
//! Every random draw comes from the caller's seeded generator
//! ([`GimcRng`](gimc_linalg::rng::GimcRng)), and results do not depend on the number of
//! threads. Parameters are checked once, before any work: every `…Params` struct is built with
//! its `new` constructor and `with_*` methods, and its `check()` returns the `Valid…Params`
//! (e.g. [`ValidKMeansParams`]) that the fits take; the fits check only what depends on the
//! data (k ≤ n, NaN/Inf). Every failure is a [`ClusterError`]. This crate depends only on `gimc-linalg` among the gimc crates, so
//! `gimc-featmap` can use k-means (Nyström landmarks) without pulling in the solvers.

#![deny(missing_docs)]

mod error;
pub mod kernel_kmeans;
pub mod kmeans;
pub mod minibatch;
pub mod okmf;
mod shard;
pub mod spectral;

pub use error::{ClusterError, Result};
pub use kernel_kmeans::{
    KERNEL_KMEANS_MAX_POINTS, KernelKMeans, KernelKMeansParams, ValidKernelKMeansParams,
    fit_kernel_kmeans,
};
pub use kmeans::{
    KMeans, KMeansInit, KMeansParams, ValidKMeansParams, fit_kmeans, fit_kmeans_sharded,
    nearest_centers,
};
pub use minibatch::{MiniBatchKMeansParams, ValidMiniBatchKMeansParams, fit_minibatch_kmeans};
pub use okmf::{
    Okmf, OkmfBudget, OkmfFactor, OkmfInit, OkmfParams, OkmfParts, OkmfSample, OkmfStep,
    ValidOkmfParams, fit_okmf, okmf_sample_gradient, okmf_sample_objective,
};
pub use spectral::{SpectralKMeans, constraint_matrix, spectral_kmeans};
