//! Clustering for gimc (DESIGN §2, §3.4): k-means ([`kmeans`]: k-means++ seeding, Lloyd
//! iterations parallel over rows through one product `X·Cᵀ`, restarts, dense or sparse input),
//! mini-batch k-means ([`minibatch`], Sculley 2010, per-centre rates 1/count), kernel k-means
//! ([`kernel_kmeans`], the O(n²)-memory baseline with a documented size limit), online kernel
//! matrix factorisation ([`okmf`], SGD on ½‖φ(x) − Φ(B)Wh‖² + (λ/2)‖W‖² + (α/2)‖h‖² over a
//! budget B, with the gradient signs of §3.4, memory independent of n), and the constraint
//! matrix and spectral step of constraint-based clustering ([`spectral`]: top-k left singular
//! vectors of an embedding source, then k-means; shared by MCCC and GIMC's Algorithm 2, both
//! in `gimc`). Every random draw comes from the caller's seeded generator and results do not
//! depend on the number of threads.

mod error;
pub mod kernel_kmeans;
pub mod kmeans;
pub mod minibatch;
pub mod okmf;
pub mod spectral;

pub use error::{ClusterError, Result};
pub use kernel_kmeans::{
    KERNEL_KMEANS_MAX_POINTS, KernelKMeans, KernelKMeansParams, fit_kernel_kmeans,
};
pub use kmeans::{
    KMeans, KMeansInit, KMeansParams, KMeansStep, fit_kmeans, fit_kmeans_observed, nearest_centers,
};
pub use minibatch::{MiniBatchKMeansParams, fit_minibatch_kmeans};
pub use okmf::{
    Okmf, OkmfBudget, OkmfEpoch, OkmfInit, OkmfParams, OkmfStep, fit_okmf, fit_okmf_observed,
    okmf_sample_gradient, okmf_sample_objective,
};
pub use spectral::{SpectralKMeans, constraint_matrix, spectral_kmeans};
