//! The error type of `gimc-metrics`.

use thiserror::Error;

/// Everything that can go wrong when computing a metric.
///
/// Every variant names the offending argument (`what`) and, where there is one, the position of
/// the bad value, so that a caller can report it without further digging.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum MetricsError {
    /// Two inputs that must have the same length do not.
    #[error("length mismatch in {what}: expected {expected}, found {found}")]
    LengthMismatch {
        /// Which argument has the wrong length.
        what: &'static str,
        /// The length implied by the other arguments.
        expected: usize,
        /// The length found.
        found: usize,
    },
    /// Two matrices that must have the same shape do not.
    #[error("shape mismatch in {what}: expected {expected:?}, found {found:?}")]
    ShapeMismatch {
        /// Which argument has the wrong shape.
        what: &'static str,
        /// The shape (rows, columns) implied by the other arguments.
        expected: (usize, usize),
        /// The shape found.
        found: (usize, usize),
    },
    /// An input that must be non-empty is empty.
    #[error("empty input: {what}")]
    Empty {
        /// Which argument is empty.
        what: &'static str,
    },
    /// A cut-off `k` of zero was given to a ranking metric.
    #[error("k must be at least 1")]
    ZeroK,
    /// A value is NaN (or infinite where only finite values make sense).
    #[error("non-finite value {value} in {what} at {position}")]
    NonFinite {
        /// Which argument holds the value.
        what: &'static str,
        /// Where: `index i` for a slice, `(row, col)` for a matrix.
        position: Position,
        /// The offending value.
        value: f64,
    },
    /// A value lies outside the set the metric accepts (e.g. a constraint label other than 0/1).
    #[error("invalid value {value} in {what} at {position}: {expected}")]
    InvalidValue {
        /// Which argument holds the value.
        what: &'static str,
        /// Where the value sits.
        position: Position,
        /// The offending value.
        value: f64,
        /// What was expected instead.
        expected: &'static str,
    },
    /// An index (label, item) is out of range.
    #[error("index {index} out of range 0..{bound} in {what} at {position}")]
    IndexOutOfRange {
        /// Which argument holds the index.
        what: &'static str,
        /// Where the index sits.
        position: Position,
        /// The offending index.
        index: usize,
        /// The exclusive upper bound.
        bound: usize,
    },
    /// A predicted top-k list names the same label twice.
    #[error("label {label} appears twice in the predicted list of row {row}")]
    DuplicateLabel {
        /// The row whose list is bad.
        row: usize,
        /// The repeated label.
        label: usize,
    },
    /// Too few items for the metric to be defined (e.g. fewer than two items for a pair count).
    #[error("{what} needs at least {needed} items, found {found}")]
    TooFewItems {
        /// Which metric.
        what: &'static str,
        /// The minimum number of items.
        needed: usize,
        /// The number given.
        found: usize,
    },
    /// The metric's denominator is zero (e.g. ‖A‖_F = 0, no unobserved entries).
    #[error("the denominator of {what} is zero")]
    ZeroDenominator {
        /// Which quantity vanished.
        what: &'static str,
    },
}

/// Where a bad value sits: a slice index or a matrix entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// Index into a slice (or the row of a list of lists).
    Index(usize),
    /// Entry (row, column) of a matrix, or (row, position) in a list of lists.
    Entry(usize, usize),
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Position::Index(i) => write!(f, "index {i}"),
            Position::Entry(i, j) => write!(f, "({i}, {j})"),
        }
    }
}

/// Result alias of this crate.
pub type Result<T, E = MetricsError> = std::result::Result<T, E>;
