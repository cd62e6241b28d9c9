//! The error type of `gimc-experiments`.

use std::path::PathBuf;

use thiserror::Error;

/// Everything that can make an experiment (or the harness around it) fail.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ExperimentError {
    /// Reading or writing a file failed.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Serialising the records failed.
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A metric rejected its input.
    #[error("metric: {0}")]
    Metrics(#[from] gimc_metrics::MetricsError),
    /// A linear-algebra routine failed.
    #[error("linear algebra: {0}")]
    Linalg(#[from] gimc_linalg::LinalgError),
    /// Loading data failed.
    #[error("data: {0}")]
    Data(#[from] gimc_data::DataError),
    /// A name passed to `--only` is not a registered experiment.
    #[error("unknown experiment {name:?}; known experiments: {known}")]
    UnknownExperiment {
        /// The unknown name.
        name: String,
        /// Comma-separated list of the registered names.
        known: String,
    },
    /// Any other failure, described.
    #[error("{0}")]
    Failed(String),
}
