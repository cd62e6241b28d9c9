//! The global options of the command line, which every subcommand sees.

use std::path::PathBuf;

use gimc::MapRegistry;
use gimc_data::ColumnRange;

/// Global options every subcommand sees.
#[derive(Debug, Clone)]
pub struct Globals {
    /// Data directory given on the command line.
    pub data_dir: Option<PathBuf>,
    /// JSON output.
    pub json: bool,
    /// No progress or informational messages on stderr.
    pub quiet: bool,
    /// Seed of every random draw.
    pub seed: u64,
    /// The label column of CSV inputs (name, 0-based index, or `last`).
    pub label_column: Option<String>,
    /// The label columns of multi-label CSV inputs (`--label-columns`, or as a model records
    /// them).
    pub label_columns: Vec<ColumnRange>,
    /// CSV columns kept as features even when they look like a class (`--keep-column`).
    pub keep_columns: Vec<String>,
    /// The Mulan XML label file of ARFF inputs (`--label-file`).
    pub labels_file: Option<PathBuf>,
    /// Read the inputs as multi-label (`--multi-label`).
    pub multi_label: bool,
    /// The map families (`--method`) and codecs (model files) in use.
    pub registry: MapRegistry,
}

impl Globals {
    /// Prints an informational line on stderr unless `--quiet`.
    pub fn info(&self, msg: &str) {
        if !self.quiet {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("{msg}");
            }
        }
    }
}
