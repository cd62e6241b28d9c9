//! Evaluation metrics for gimc (DESIGN §2, §3.3 prediction, §3.4 and §3.5 metrics, §4).
//!
//! ```
//! use gimc_linalg::faer::mat;
//! use gimc_linalg::sprs::{CsMat, TriMat};
//! use gimc_metrics::{MetricsError, ndcg_at_k, precision_at_k, top_k_rows};
//!
//! // Scores of 3 items (rows) for 4 labels (columns).
//! let scores = mat![
//!     [0.9, 0.1, 0.8, 0.0],
//!     [0.2, 0.7, 0.1, 0.6],
//!     [0.5, 0.4, 0.3, 0.2],
//! ];
//! // The true labels: item 0 has {0, 2}, item 1 has {3}, item 2 has {1}.
//! let mut truth = TriMat::new((3, 4));
//! for (item, label) in [(0, 0), (0, 2), (1, 3), (2, 1)] {
//!     truth.add_triplet(item, label, 1.0);
//! }
//! let truth: CsMat<f64> = truth.to_csr();
//!
//! // Ranked top-2 labels, best first.
//! assert_eq!(top_k_rows(scores.as_ref(), 2)?, [vec![0, 2], vec![1, 3], vec![0, 1]]);
//! // P@1: only item 0's first label is right, so 1/3.
//! let p1 = precision_at_k(scores.as_ref(), &truth, 1)?;
//! assert!((p1 - 1.0 / 3.0).abs() < 1e-12);
//! // P@2: 2, 1 and 1 hits out of 2, so (1 + 1/2 + 1/2) / 3 = 2/3.
//! let p2 = precision_at_k(scores.as_ref(), &truth, 2)?;
//! assert!((p2 - 2.0 / 3.0).abs() < 1e-12);
//! // nDCG@2 is 1 only when every row is ranked ideally.
//! assert!(ndcg_at_k(scores.as_ref(), &truth, 2)? < 1.0);
//! // Bad input is an error, never a panic.
//! assert_eq!(precision_at_k(scores.as_ref(), &truth, 0), Err(MetricsError::ZeroK));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Contents
//!
//! - Ranking, in the Extreme Classification Repository convention: [`precision_at_k`] and
//!   [`ndcg_at_k`] from scores, their `_from_topk` forms from predicted top-k lists (with an
//!   explicit [`EmptyRows`] convention in the `_with` forms), and the partial-sort top-k helpers
//!   [`top_k_indices`] and [`top_k_rows`].
//! - Classification: multi-class [`accuracy`].
//! - Clustering: [`pairwise_clustering_error`] and Hungarian-matched [`clustering_accuracy`],
//!   both computed from the contingency table (never from the O(n²) item pairs), and the
//!   [`constraint_error`] of a clustering or of predicted similarities
//!   ([`constraint_error_from_scores`]).
//! - Completion: the relative Frobenius error ‖A − Â‖_F/‖A‖_F
//!   ([`relative_frobenius_error`]), and the transduction paper's label error in %
//!   ([`transductive_label_error`]) and relative imputation error Σ_{∉Ω}(x − x̂)²/Σ_{∉Ω}x²
//!   ([`relative_imputation_error`]).
//!
//! Every function checks its inputs and returns a [`MetricsError`] naming the argument and
//! position of a bad value.

#![deny(missing_docs)]

mod classification;
mod clustering;
mod completion;
mod error;
mod ranking;

pub use classification::{accuracy, roc_auc};
pub use clustering::{
    clustering_accuracy, constraint_error, constraint_error_from_scores, pairwise_clustering_error,
};
pub use completion::{
    relative_frobenius_error, relative_imputation_error, transductive_label_error,
};
pub use error::{MetricsError, Position, Result};
pub use ranking::{
    EmptyRows, ndcg_at_k, ndcg_at_k_from_topk, ndcg_at_k_from_topk_with, precision_at_k,
    precision_at_k_from_topk, precision_at_k_from_topk_with, top_k_indices, top_k_rows,
};
