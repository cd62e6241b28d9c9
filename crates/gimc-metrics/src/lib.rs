//! Evaluation metrics for gimc (DESIGN §2, §3.3 prediction, §3.4 metrics, §3.5 metrics, §4):
//! precision@k and nDCG@k in the Extreme Classification Repository convention (from scores or
//! from predicted top-k lists, with a partial-sort top-k helper), multi-class accuracy, pairwise
//! clustering error and Hungarian-matched clustering accuracy computed from the contingency
//! table (never from the O(n²) item pairs), constraint error of a clustering or of predicted
//! similarities, relative Frobenius error ‖A − Â‖_F/‖A‖_F, and the transduction paper's
//! label error (%) and relative imputation error Σ_{∉Ω}(x − x̂)²/Σ_{∉Ω}x². Every function checks
//! its inputs and returns a [`MetricsError`] naming the argument and position of a bad value.

mod classification;
mod clustering;
mod completion;
mod error;
mod ranking;

pub use classification::accuracy;
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
