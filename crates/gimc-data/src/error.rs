//! The error type of `gimc-data` (DESIGN §7: every reader returns a typed error naming the file
//! and the 1-based line; NaN / Inf are rejected with their row).

use std::path::{Path, PathBuf};

use gimc_linalg::LinalgError;

/// Everything that can go wrong while reading, locating, verifying or generating data.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DataError {
    /// A file could not be opened or read at all.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Malformed input.
    #[error("{}:{line}: {msg}", path.display())]
    Parse {
        /// The file (or the label given to an in-memory reader).
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        msg: String,
    },
    /// A NaN or infinite value in the data.
    #[error("{}:{line}: non-finite value {value} in row {row}, column {col}", path.display())]
    NonFinite {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// 0-based data row.
        row: usize,
        /// 0-based feature column (or target column for a target value).
        col: usize,
        /// The value read.
        value: f64,
    },
    /// A non-numeric CSV column that looks like a class would become features
    /// ([`crate::CsvOptions::refuse_class_like`]).
    #[error("{}: column `{column}` looks like a class ({values} values)", path.display())]
    ClassLikeColumn {
        /// The file.
        path: PathBuf,
        /// The column's name.
        column: String,
        /// Its number of distinct values.
        values: usize,
    },
    /// The data set name is not in the manifest.
    #[error("unknown data set {name:?} (known: {})", known.join(", "))]
    UnknownSet {
        /// The requested name.
        name: String,
        /// Names in the manifest.
        known: Vec<String>,
    },
    /// The data set is listed in the manifest as not obtained.
    #[error("data set {name:?} is not available in gimc's data collection; public source(s): {}", sources.join(", "))]
    NotObtained {
        /// The requested name.
        name: String,
        /// Where to get it.
        sources: Vec<String>,
    },
    /// The requested part of a named set does not exist.
    #[error("data set {set:?} has no part {part:?} (parts: {})", parts.join(", "))]
    UnknownPart {
        /// The set.
        set: String,
        /// The requested part.
        part: String,
        /// The parts it has.
        parts: Vec<String>,
    },
    /// A file of a named set is not in the data directory.
    #[error("{}: file missing; public source: {origin}; run `cargo xtask datasets fetch --only {set}`", path.display())]
    MissingFile {
        /// Where it was expected.
        path: PathBuf,
        /// The named set the file belongs to.
        set: String,
        /// Where to get it.
        origin: String,
    },
    /// A named set's part does not have the shape recorded in the manifest.
    #[error("{}: shape differs from the manifest: {}", path.display(), problems.join("; "))]
    ShapeMismatch {
        /// The file.
        path: PathBuf,
        /// Each difference, e.g. `rows: expected 4880, got 4879`.
        problems: Vec<String>,
    },
    /// The embedded or a user-supplied manifest is invalid.
    #[error("invalid manifest: {0}")]
    Manifest(String),
    /// A parameter is outside its valid range.
    #[error("invalid parameter {name}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// Why it is invalid.
        reason: String,
    },
    /// Data sets or targets that must agree (stacking, class alignment) do not.
    #[error("incompatible data: {0}")]
    Incompatible(String),
    /// An error from `gimc-linalg` (e.g. a rejected matrix).
    #[error(transparent)]
    Linalg(#[from] LinalgError),
}

impl DataError {
    /// The file the error refers to, if any.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Self::Io { path, .. }
            | Self::Parse { path, .. }
            | Self::NonFinite { path, .. }
            | Self::MissingFile { path, .. }
            | Self::ShapeMismatch { path, .. }
            | Self::ClassLikeColumn { path, .. } => Some(path),
            _ => None,
        }
    }

    /// The 1-based line the error refers to, if any.
    pub fn line(&self) -> Option<usize> {
        match self {
            Self::Parse { line, .. } | Self::NonFinite { line, .. } => Some(*line),
            _ => None,
        }
    }
}

/// The error helpers shared by every gimc crate, building [`DataError`] variants.
pub(crate) use gimc_linalg::error::{check_nonzero, param_err};

gimc_linalg::shared_error_conversions!(DataError);
