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
use gimc::labels::OneProcess;

pub use args::FitArgs;

use crate::common::check_outputs;
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
