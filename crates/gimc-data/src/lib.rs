//! Data for gimc (DESIGN §2, §6): streaming readers for the field's formats (Mulan / Weka ARFF
//! with the Mulan XML label list, LIBSVM / SVMlight single- and multi-label, the Extreme
//! Classification Repository text format, CSV and (row, column, value) triplets; gzip read
//! transparently; malformed input reported with file and 1-based line, NaN / Inf rejected with
//! the row), the [`Dataset`] type (features as a `gimc_linalg::FeatureMatrix`, targets as labels,
//! classes or values), the dataset manifest embedded from `datasets/manifest.toml` with the
//! data-directory resolution, named-set loading and sha256 / shape verification, seeded row
//! splits, pairwise-constraint sampling and balanced subsampling for semi-supervised clustering
//! (DESIGN §3.3, §4 `gimc-table3`), and the papers' seeded synthetic generators: the GIMC toy
//! A = XYᵀ + N (§4 `gimc-fig1`), the MC-1 transduction data (§3.5), planted Gaussian IMC
//! (§4 `imc-sample-complexity`), and 2-D rings and blobs for clustering (§4 `okmf-table2`).

mod arff;
mod csv;
mod dataset;
mod error;
mod io;
mod libsvm;
mod manifest;
mod named;
pub mod split;
pub mod synth;
mod xmc;

pub use arff::{
    ArffOptions, ArffTarget, parse_arff, parse_mulan_labels, read_arff, read_mulan,
    read_mulan_labels,
};
pub use csv::{
    ColumnRef, Constraints, CsvOptions, NominalEncoding, TargetKind, TripletOptions, Triplets,
    parse_constraints, parse_csv, parse_triplets, read_constraints, read_csv, read_triplets,
};
pub use dataset::{Dataset, Summary, Targets};
pub use error::DataError;
/// Re-exported: the feature-matrix type of [`Dataset::features`].
pub use gimc_linalg::FeatureMatrix;
pub use io::open_text;
pub use libsvm::{LibsvmOptions, LibsvmTarget, parse_libsvm, read_libsvm};
pub use manifest::{Bins, FileEntry, Manifest, NotObtained, PartEntry, PartFormat, SetEntry};
pub use named::{
    FileReport, FileStatus, Format, NamedOptions, NamedSet, VerifyReport, guess_format, load_named,
    load_named_part, load_named_with, load_path, resolve_data_dir, sha256_file, verify, verify_all,
};
pub use xmc::{parse_xmc, read_xmc};

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
