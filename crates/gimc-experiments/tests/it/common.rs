//! Shared helpers: quick contexts in temporary directories and readers of report records.

use std::path::PathBuf;

use gimc_experiments::{Context, Report};

/// A quick context under the temporary directory `{name}-{process id}`: data in its `data/`
/// (unless `data_dir` is given), output in its `out/`.
pub fn quick_context(name: &str, seed: u64, data_dir: Option<PathBuf>) -> Context {
    let base = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    Context {
        data_dir: data_dir.unwrap_or_else(|| base.join("data")),
        out_dir: base.join("out"),
        quick: true,
        seed,
    }
}

/// Our value of the record (method, setting, metric).
pub fn ours(report: &Report, method: &str, setting: &str, metric: &str) -> f64 {
    report
        .records
        .iter()
        .find(|r| r.method == method && r.setting == setting && r.metric == metric)
        .and_then(|r| r.ours)
        .unwrap_or_else(|| panic!("no record {method} / {setting} / {metric}"))
}
