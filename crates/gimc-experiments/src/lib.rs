//! Reproduction harness for gimc (DESIGN §2, §4): every table and figure of the papers is an
//! [`Experiment`] with a stable name and a quick form, run by [`reproduce`] in the order of the
//! [`registry`]; each returns a [`Report`] of [`Record`]s (our number beside the published one,
//! in the paper's unit) with notes on chosen hyper-parameters and missing data, which
//! [`write_report`] saves as `<out>/<name>.md`, `.csv` and `.json`. The `gimc-experiments`
//! binary drives it (`reproduce`, `datasets`).

pub mod bench;
mod error;
mod experiment;
pub mod experiments;
pub mod report;

pub use error::ExperimentError;
pub use experiment::{
    Context, Experiment, Outcome, Summary, experiment_names, registry, reproduce, select,
};
pub use report::{Record, Report, Table, pivot_table, write_report};
