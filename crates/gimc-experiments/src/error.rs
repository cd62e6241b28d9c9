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
    /// An output file was not written (a directory at its path, or an I/O error; the file
    /// at the path is left as it was).
    #[error(transparent)]
    Output(#[from] gimc_data::OutputError),
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
    /// A GIMC fit or prediction failed.
    #[error("gimc: {0}")]
    Gimc(#[from] gimc::GimcError),
    /// A solver (IMC, FPC, SVM, …) failed.
    #[error("solver: {0}")]
    Solver(#[from] gimc_solvers::SolverError),
    /// A feature map failed.
    #[error("feature map: {0}")]
    FeatMap(#[from] gimc_featmap::FeatMapError),
    /// A clustering method failed.
    #[error("clustering: {0}")]
    Cluster(#[from] gimc_cluster::ClusterError),
    /// A computation was refused because it would not fit in memory.
    #[error(transparent)]
    InsufficientMemory(#[from] gimc_linalg::memory::InsufficientMemory),
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

impl ExperimentError {
    /// The [`ExperimentError::Io`] of an I/O error on `path`, for `map_err`:
    /// `std::fs::create_dir_all(&p).map_err(ExperimentError::io(&p))?`.
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io { path, source }
    }
}

/// Any displayable failure as [`ExperimentError::Failed`], for `map_err` on errors that have no
/// variant of their own (a child process, a parse, a message built in place).
pub(crate) fn fail(e: impl std::fmt::Display) -> ExperimentError {
    ExperimentError::Failed(e.to_string())
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn library_errors_convert_with_their_source_kept() {
        let e: ExperimentError = gimc_solvers::SolverError::Empty("Ω").into();
        assert_eq!(
            e.to_string(),
            "solver: no observed entries / training examples: Ω"
        );
        let source = e.source().expect("the solver error is the source");
        assert!(matches!(
            source.downcast_ref::<gimc_solvers::SolverError>(),
            Some(gimc_solvers::SolverError::Empty("Ω"))
        ));
        assert_eq!(fail("k-means: 3 rows").to_string(), "k-means: 3 rows");
    }

    #[test]
    fn io_errors_name_their_path_and_keep_their_source() {
        let missing = std::path::Path::new("/nonexistent/gimc/records.csv");
        let e = std::fs::read(missing)
            .map_err(ExperimentError::io(missing))
            .expect_err("the file does not exist");
        assert!(
            e.to_string()
                .starts_with("I/O error on /nonexistent/gimc/records.csv: "),
            "{e}"
        );
        let source = e.source().expect("the I/O error is the source");
        assert_eq!(
            source.downcast_ref::<std::io::Error>().map(|e| e.kind()),
            Some(std::io::ErrorKind::NotFound)
        );
    }

    #[test]
    fn a_memory_refusal_keeps_its_message() {
        let refusal = gimc_linalg::memory::InsufficientMemory {
            what: "exact kernel ridge",
            needed: 3 << 30,
            available: 1 << 30,
            parameter: "rows",
            detail: "K".into(),
        };
        let message = refusal.to_string();
        let e: ExperimentError = refusal.into();
        assert!(matches!(e, ExperimentError::InsufficientMemory(_)));
        assert_eq!(e.to_string(), message);
    }
}
