//! Integration tests of gimc-data: real data shapes (skipped when the data directory lacks a
//! set, unless `GIMC_REQUIRE_DATA=1`), reader robustness (proptest), verification, splits and
//! constraint sampling, and the synthetic generators.

// test helpers outside #[test] functions unwrap and print skip notices
#![allow(clippy::unwrap_used, clippy::print_stderr)]

#[cfg(feature = "fetch")]
mod fetch;
mod nominal;
mod readers;
mod real_data;
mod splits;
mod synth;
mod verify;
mod xmc_synth;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use gimc_data::Manifest;

/// The data directory for tests: `$GIMC_DATA`, else `<workspace>/datasets`.
pub fn data_dir() -> PathBuf {
    match std::env::var_os("GIMC_DATA") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../datasets"),
    }
}

/// The data directory if every file of `set` is present; otherwise prints a skip notice and
/// returns `None`, or panics when `GIMC_REQUIRE_DATA=1`.
pub fn require_set(set: &str) -> Option<PathBuf> {
    let dir = data_dir();
    let manifest = Manifest::embedded().expect("embedded manifest");
    let entry = manifest.entry(set).expect("set in manifest");
    let missing: Vec<&str> = entry
        .files
        .iter()
        .filter(|f| !dir.join(&f.path).is_file())
        .map(|f| f.path.as_str())
        .collect();
    if missing.is_empty() {
        return Some(dir);
    }
    if std::env::var("GIMC_REQUIRE_DATA").is_ok_and(|v| v == "1") {
        panic!(
            "GIMC_REQUIRE_DATA=1 but {set} files are missing from {}: {missing:?}",
            dir.display()
        );
    }
    eprintln!(
        "skipping {set}: files missing from {} ({missing:?}); set GIMC_DATA",
        dir.display()
    );
    None
}

/// A fresh empty directory under the system temp dir.
pub fn temp_dir(tag: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("gimc-data-test-{}-{tag}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}
