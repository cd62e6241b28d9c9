//! `gimc fit`: multi-label / multi-class GIMC and IMC fits, saved as a versioned model file
//! (MODEL_FORMAT.md), in one of three ways:
//!
//! - `--method auto` (the default, [`auto`]): the library's search over the row transform, the
//!   maps, γ and λ on a validation split; with `--mpi`, on a sample of every process's rows,
//!   and the refit data-parallel on the process group;
//! - `--method NAME` ([`select`]): one map family, its grid chosen on a validation split;
//! - `--method ridge|rrr|logistic|svm` ([`linear`]): a linear model of the solvers' toolbox,
//!   its grid chosen on a validation split;
//! - `--method NAME --mpi` ([`setting`]): one setting fitted data-parallel on the process
//!   group.
//!
//! General completion (observed entries with row and column features) is `gimc complete`;
//! `gimc fit --triplets` is refused with the equivalent command.

mod args;
mod auto;
mod linear;
mod select;
mod setting;

use std::path::Path;

use anyhow::{Result, bail};
use gimc::LabelData;
use gimc::labels::OneProcess;
use gimc_linalg::{Preprocess, RowNorm};

pub use args::FitArgs;

use crate::common::{
    Normalize, check_outputs, label_data, labels_word, load_target, normalize, standardize,
};
use crate::globals::Globals;
use crate::group::Group;

/// Runs `gimc fit`.
pub fn run(a: &FitArgs, g: &Globals) -> Result<()> {
    refuse_triplets(a)?;
    // the model and the trace may replace neither an input nor each other (checked before the
    // fit, not after it)
    let inputs: Vec<&Path> = a.target.as_deref().map(Path::new).into_iter().collect();
    check_outputs(g, &[Some(&a.out), a.trace.as_deref()], &inputs)?;
    #[cfg(feature = "mpi")]
    if a.mpi {
        return crate::group::run_mpi(|group| fit(a, g, group));
    }
    fit(a, g, &OneProcess)
}

/// The fit on `group`: `auto` on either; a named method's grid on one process, or its one
/// setting on a distributed group's shards.
fn fit(a: &FitArgs, g: &Globals, group: &dyn Group) -> Result<()> {
    if a.method == "auto" {
        auto::run(a, g, group)
    } else if let Some(method) = gimc::LinearMethod::from_name(&a.method) {
        if group.distributed() {
            bail!(
                "--method {}: a linear model fits on one process (no --mpi)",
                a.method
            );
        }
        linear::run(a, g, method)
    } else if group.distributed() {
        setting::run(a, g, group)
    } else {
        select::run(a, g)
    }
}

/// Refuses `--triplets` (and the completion flags `--row-features`, `--col-features`, and
/// `--rank` but with a linear method: `rrr` takes it, the others refuse it themselves), naming
/// the `gimc complete` command with the same data and setting.
fn refuse_triplets(a: &FitArgs) -> Result<()> {
    let Some(triplets) = &a.triplets else {
        let given = [
            (a.row_features.is_some(), "--row-features"),
            (a.col_features.is_some(), "--col-features"),
            (
                !a.rank.is_empty() && gimc::LinearMethod::from_name(&a.method).is_none(),
                "--rank",
            ),
        ];
        if let Some((_, flag)) = given.iter().find(|(given, _)| *given) {
            bail!(
                "{flag}: general completion is `gimc complete` (`gimc complete TRIPLETS \
                 --row-features X --col-features Y …`)"
            );
        }
        return Ok(());
    };
    let list = |v: Vec<String>, default: &str| {
        if v.is_empty() {
            default.to_string()
        } else {
            v.join(",")
        }
    };
    let method = if a.method == "auto" {
        "gimc-lff"
    } else {
        a.method.as_str()
    };
    bail!(
        "--triplets: general completion is `gimc complete`: run `gimc complete {} \
         --row-features {} --col-features {} --method {method} --m {} --gamma {} --lambda {} \
         --rank {} --iters {} --save {}`",
        triplets.display(),
        a.row_features.as_deref().unwrap_or("ROWS"),
        a.col_features.as_deref().unwrap_or("COLS"),
        list(a.m.iter().map(usize::to_string).collect(), "500"),
        list(a.gamma.iter().map(ToString::to_string).collect(), "scale"),
        list(a.lambda.iter().map(f64::to_string).collect(), "1"),
        a.rank.first().copied().unwrap_or(10),
        a.iters,
        a.out.display()
    )
}

/// The training rows of a named method's fit (`--method NAME`, or a linear method): the data
/// set's name, the rows standardised (`--standardize`) and normalised (`--normalize`), and
/// that input transform, which the model stores for `gimc predict`.
struct TrainingRows {
    name: String,
    data: LabelData,
    preprocess: Preprocess,
}

/// Loads, standardises and normalises the training rows and says what is fitted on them.
fn training_rows(a: &FitArgs, g: &Globals) -> Result<TrainingRows> {
    let mut ds = load_target(a.target.as_deref(), &a.part, g)?;
    let name = ds.name.clone();
    let standardizer = standardize(&mut ds, a.standardize)?;
    let row_norm = normalize(&mut ds, a.normalize.unwrap_or(Normalize::None));
    let data = label_data(ds)?;
    g.info(&format!(
        "fitting {} on {name}: {} rows, {} features, {} {}",
        a.method,
        data.nrows(),
        data.features().ncols(),
        data.n_labels(),
        labels_word(data.task())
    ));
    Ok(TrainingRows {
        name,
        data,
        preprocess: Preprocess {
            standardizer,
            row_norm,
            ..Preprocess::default()
        },
    })
}

/// The validation metric of `data`'s task: P@`select_k` (labels) or accuracy (classes).
fn metric_name(data: &LabelData, select_k: usize) -> String {
    if data.task() == gimc::Task::MultiLabel {
        format!("P@{select_k}")
    } else {
        "accuracy".to_string()
    }
}

/// The `--json` summary's fields that every named method's fit has: the model's path, the
/// method, the task and shape of the data, the stored transform (`standardized`: null,
/// "center-scale" or "scale" for sparse features; `normalized`) and the validation metric.
fn summary_json(a: &FitArgs, data: &LabelData, p: &Preprocess) -> serde_json::Value {
    serde_json::json!({
        "model": a.out.display().to_string(),
        "method": a.method,
        "task": data.task().name(),
        "rows": data.nrows(),
        "features": data.features().ncols(),
        "labels": data.n_labels(),
        "standardized": p.standardizer.as_ref().map(|st| if st.center { "center-scale" } else { "scale" }),
        "normalized": (p.row_norm != RowNorm::None).then(|| p.row_norm.name()),
        "validation_metric": metric_name(data, a.select_k.unwrap_or(1)),
    })
}

/// The text summary's first lines: what was fitted on what, and the chosen setting.
fn summary_head(a: &FitArgs, name: &str, data: &LabelData, chosen: &str) -> String {
    format!(
        "fitted {} ({}) on {name}: {} rows × {} features, {} {}\nchosen: {chosen}\n",
        a.method,
        data.task().name(),
        data.nrows(),
        data.features().ncols(),
        data.n_labels(),
        labels_word(data.task()),
    )
}

/// The summary's lines on the stored transform (none when the rows are used as they are).
fn transform_lines(p: &Preprocess) -> String {
    let mut s = String::new();
    if let Some(st) = &p.standardizer {
        s.push_str(if st.center {
            "features standardised (training mean and standard deviation, stored in the model)\n"
        } else {
            "features scaled (training standard deviation, stored in the model)\n"
        });
    }
    if p.row_norm != RowNorm::None {
        s.push_str(&format!(
            "rows normalised ({}, stored in the model)\n",
            p.row_norm.name()
        ));
    }
    s
}
