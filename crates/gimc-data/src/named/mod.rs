//! The data directory and named sets (DESIGN §6): resolving the directory (`--data-dir`, else
//! `$GIMC_DATA`, else `datasets/`), loading a named set's parts as the manifest describes,
//! loading a user's file with its format guessed or given, and verifying a set's files (sha256
//! and shape) with a per-file status that never panics on missing or altered files.

use std::path::{Path, PathBuf};

mod format;
mod load;
mod verify;

pub use format::{
    Format, describe_targets, find_mulan_labels, guess_format, guess_format_with_labels, load_path,
};
pub use load::{
    NamedOptions, NamedSet, describe_named_targets, load_named, load_named_part, load_named_with,
};
pub use verify::{FileReport, FileStatus, VerifyReport, sha256_file, verify, verify_all};

/// The data directory: `cli` if given, else `$GIMC_DATA` if set and non-empty, else `datasets`
/// (relative to the working directory).
pub fn resolve_data_dir(cli: Option<&Path>) -> PathBuf {
    if let Some(p) = cli {
        return p.to_path_buf();
    }
    match std::env::var_os("GIMC_DATA") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => PathBuf::from("datasets"),
    }
}
