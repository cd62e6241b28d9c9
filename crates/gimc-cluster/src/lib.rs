//! Clustering for gimc (DESIGN §2, §3.4): k-means on dense or sparse feature matrices with
//! k-means++ seeding (the greedy variant, 2 + ⌊ln k⌋ candidates per centre) or uniform seeding,
//! Lloyd iterations parallel over rows whose assignment step uses one product `X·Cᵀ` and the
//! expansion ‖x‖² − 2x·c + ‖c‖² (so sparse input stays sparse), several restarts keeping the
//! lowest inertia, each restart drawing from its own child stream of the caller's seeded
//! generator so that results do not depend on the number of threads. Kernel k-means, mini-batch
//! k-means, OKMF and MCCC (the rest of §3.4) are to come.

mod error;
pub mod kmeans;

pub use error::{ClusterError, Result};
pub use kmeans::{
    KMeans, KMeansInit, KMeansParams, KMeansStep, fit_kmeans, fit_kmeans_observed, nearest_centers,
};
