//! Reproduction harness for gimc (DESIGN §2, §4): every table and figure of the papers is an
//! [`Experiment`] with a stable name and a quick form.
//!
//! ```
//! use gimc_experiments::{Context, reproduce, select};
//!
//! // the quick form of one synthetic experiment (PU-IMC: positive-unlabelled completion)
//! let out_dir = std::env::temp_dir().join(format!("gimc-experiments-doc-{}", std::process::id()));
//! let ctx = Context { data_dir: "datasets".into(), out_dir: out_dir.clone(), quick: true, seed: 0 };
//! let experiments = select(&["pu-imc".to_string()])?;
//! let mut log = Vec::new(); // the Markdown tables, as `cargo xtask reproduce` prints them
//! let summary = reproduce(&ctx, &experiments, &mut log)?;
//! assert!(summary.all_ok(), "{summary}");
//! assert!(String::from_utf8(log)?.contains("<== pu-imc ok"));
//! assert!(out_dir.join("pu-imc.md").is_file() && out_dir.join("pu-imc.csv").is_file());
//! # std::fs::remove_dir_all(&out_dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`reproduce`] runs experiments in the order of the [`registry`]; each returns a [`Report`]
//! of [`Record`]s (our number beside the published one, in the paper's unit) with notes on
//! chosen hyper-parameters and missing data, which [`write_report`] saves as
//! `<out>/<name>.md`, `.csv` and `.json`. The `gimc-experiments` binary drives it
//! (`reproduce`, `datasets`, `bench`); `cargo xtask` calls that binary. Not published: it is
//! the project's harness, not a library for users.

pub mod bench;
mod error;
mod experiment;
pub mod experiments;
pub mod report;

pub use error::ExperimentError;
pub use experiment::{
    Context, ExpectedTime, Experiment, Outcome, QUICK_BANNER, Summary, experiment_names, registry,
    render, reproduce, select, skipped_by_default,
};
pub use report::{Record, Report, Table, pivot_table, write_report};
