//! Data for gimc (DESIGN §2, §6): readers for the field's formats, the [`Dataset`] type, the
//! dataset manifest, seeded splits and sampling, and the papers' synthetic generators.
//!
//! ```
//! use std::path::Path;
//!
//! use gimc_data::split::split_rows;
//! use gimc_data::{LibsvmOptions, LibsvmTarget, parse_libsvm};
//! use gimc_linalg::rng::seeded;
//!
//! // Four multi-label LIBSVM rows: comma-separated labels, then 1-based `index:value` features.
//! let text = "0,2 1:0.5 3:1.0\n1 2:2.0\n0 1:1.5 2:-1.0\n2 3:0.25\n";
//! let opts = LibsvmOptions {
//!     target: LibsvmTarget::MultiLabel,
//!     ..LibsvmOptions::default()
//! };
//! let data = parse_libsvm(text.as_bytes(), Path::new("tiny.svm"), &opts)?;
//! assert_eq!((data.nrows(), data.ncols()), (4, 3));
//! assert!(data.features.is_sparse());
//! let labels = data.labels().ok_or("expected multi-label targets")?;
//! assert_eq!((labels.rows(), labels.cols(), labels.nnz()), (4, 3, 5));
//! assert_eq!(data.summary().rows_without_label, Some(0));
//!
//! // Malformed input names the source and the 1-based line.
//! let err = parse_libsvm("1 1:0.5\n0 2:oops\n".as_bytes(), Path::new("bad.svm"), &opts)
//!     .err()
//!     .ok_or("expected an error")?;
//! assert!(err.to_string().contains("bad.svm:2"));
//!
//! // A seeded train / validation split of the rows.
//! let split = split_rows(data.nrows(), 0.5, &mut seeded(0))?;
//! let train = data.select_rows(&split.train)?;
//! assert_eq!((train.nrows(), split.validation.len()), (2, 2));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Contents
//!
//! - Streaming readers, each a `read_*` function on a path (gzip read transparently) and a
//!   `parse_*` function on any reader: Mulan / Weka ARFF with the Mulan XML label list
//!   ([`read_arff`], [`read_mulan`]), LIBSVM / SVMlight single- and multi-label
//!   ([`read_libsvm`]), the Extreme Classification Repository text format ([`read_xmc`]), CSV
//!   ([`read_csv`]) and (row, column, value) triplets ([`read_triplets`]). Malformed input is
//!   reported with the file and 1-based line, NaN / Inf with the row.
//! - [`Dataset`]: features as a [`FeatureMatrix`] and [`Targets`] (labels, classes, values or
//!   none), with row selection, stacking and a [`Summary`].
//! - The dataset [`Manifest`] embedded from `datasets/manifest.toml`: data-directory
//!   resolution ([`resolve_data_dir`]), named-set loading ([`load_named`]) and sha256 / shape
//!   verification ([`verify`]).
//! - [`split`]: seeded row splits, pairwise-constraint sampling and balanced subsampling for
//!   semi-supervised clustering (DESIGN §3.3, §4 `gimc-table3`).
//! - [`synth`]: the papers' seeded synthetic generators — the GIMC toy A = XYᵀ + N (§4
//!   `gimc-fig1`), the MC-1 transduction data (§3.5), planted Gaussian IMC (§4
//!   `imc-sample-complexity`), and 2-D rings and blobs for clustering (§4 `okmf-table2`).
//! - [`synth_xmc`]: an extreme-multi-label generator at the scale of the Extreme Classification
//!   Repository's sets (presets `amazoncat-13k`, `eurlex-4k`, `wiki10-31k`): Zipf feature and
//!   label frequencies and a planted nonlinear label structure, streamed row by row to the XMC
//!   text format ([`synth_xmc::write_xmc_synth`]).

#![deny(missing_docs)]

mod arff;
mod csv;
mod dataset;
mod error;
#[cfg(feature = "fetch")]
pub mod fetch;
mod io;
mod libsvm;
mod manifest;
mod named;
pub mod output;
pub mod split;
pub mod synth;
pub mod synth_xmc;
mod xmc;

pub use arff::{
    ArffOptions, ArffTarget, parse_arff, parse_mulan_labels, read_arff, read_mulan,
    read_mulan_labels,
};
pub use csv::{
    ColumnRange, ColumnRef, Constraints, CsvOptions, NominalEncoding, TargetKind, TripletOptions,
    Triplets, parse_constraints, parse_csv, parse_triplets, read_constraints, read_csv,
    read_csv_columns, read_triplets,
};
pub use dataset::{Dataset, Summary, Targets};
pub use error::DataError;
/// Re-exported: the feature-matrix type of [`Dataset::features`].
pub use gimc_linalg::FeatureMatrix;
pub use io::open_text;
pub use libsvm::{LibsvmOptions, LibsvmTarget, parse_libsvm, read_libsvm};
pub use manifest::{Bins, FileEntry, Manifest, NotObtained, PartEntry, PartFormat, SetEntry};
pub use named::{
    FileReport, FileStatus, Format, NamedOptions, NamedSet, VerifyReport, describe_named_targets,
    describe_targets, find_mulan_labels, guess_format, guess_format_with_labels, load_named,
    load_named_part, load_named_with, load_path, resolve_data_dir, sha256_file, verify, verify_all,
};
pub use output::{OutputError, OutputFile};
pub use xmc::{parse_xmc, read_xmc, read_xmc_shard};

/// Result alias of this crate.
pub type Result<T, E = DataError> = std::result::Result<T, E>;

/// What a reader does with a missing feature value (`?` in ARFF; empty, `?` or `NA` in CSV).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissingPolicy {
    /// Missing values are an error naming the file and line.
    #[default]
    Error,
    /// Missing values are stored as 0 and their positions recorded in [`Dataset::missing`]
    /// (transduction, DESIGN §3.5, treats them as unobserved).
    Mask,
}
