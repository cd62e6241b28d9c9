//! `gimc fit` with `--method auto` (the default): the library's `auto` search
//! ([`gimc::auto_fit`]) on the raw rows of the file, narrowed by the flags the user gave. It
//! drops identifier and constant columns (saying so), prints the chosen setting and the best
//! settings tried, and saves the model with its input transform. On a distributed group
//! (`--mpi`) every process holds its shard of the rows ([`crate::group`]) and the search is
//! [`gimc::auto_fit_sharded`]: it selects on a sample of every shard's rows and refits on all
//! of them; process 0 saves the model and reports.

use anyhow::{Context, Result, bail};
use gimc::labels::AutoTrial;
use gimc::{
    AutoParams, AutoSelection, LabelData, NoObserver, RowTransform, SelectionObserver, Task,
    auto_fit, auto_fit_sharded, estimate_auto,
};
use gimc_data::Dataset;
use serde_json::json;

use super::args::{FitArgs, Stream};
use crate::common::{
    Normalize, Standardize, label_data, labels_word, memory_budget, preflight, write_output,
};
use crate::globals::Globals;
use crate::group::{Group, LocalShard, layout, load_rows};
use crate::progress::FitProgress;
use gimc::Precision;

/// Rows of the validation table printed without `--json`.
const SHOWN: usize = 8;

/// Runs `gimc fit --method auto` on `group`.
pub fn run(a: &FitArgs, g: &Globals, group: &dyn Group) -> Result<()> {
    let single_fit_flags = [
        (a.trace.is_some(), "--trace"),
        (a.stream != Stream::Auto, "--stream"),
        (a.block_rows > 0, "--block-rows"),
        (a.precision != Precision::F64, "--precision"),
        (a.max_step.is_some(), "--max-step"),
        (a.proximal != 0.0, "--proximal"),
        (a.standardize != Standardize::Auto, "--standardize"),
    ];
    if let Some((_, flag)) = single_fit_flags.iter().find(|(given, _)| *given) {
        bail!(
            "{flag} applies to one map family's fit: give --method gimc-NAME with it (the \
             default search, --method auto, holds Φ whole and chooses the row transform itself)"
        );
    }
    let (ds, announced) = load_rows(a.target.as_deref(), &a.part, g, group)?;
    let name = ds.name.clone();
    let identifiers = identifier_columns(&ds, group);
    let id_names: Vec<String> = identifiers
        .iter()
        .map(|&j| {
            ds.feature_names
                .get(j)
                .cloned()
                .unwrap_or_else(|| format!("column {j}"))
        })
        .collect();
    let data = label_data(ds)?;
    let rows = whole_rows(&data, announced, group)?;
    let mut params = AutoParams::default()
        .with_exclude_columns(identifiers)
        .with_seed(g.seed)
        .with_validation_fraction(a.validation)
        .with_max_iter(a.iters)
        .with_memory(memory_budget()?);
    if !a.gamma.is_empty() {
        params = params.with_gammas(a.gamma.clone());
    }
    if !a.lambda.is_empty() {
        params = params.with_lambdas(a.lambda.clone());
    }
    match a.m.as_slice() {
        [] => {}
        [m] => params = params.with_m(*m),
        _ => bail!("--m: `--method auto` takes one value (a grid over m needs --method gimc-NAME)"),
    }
    if !a.families.is_empty() {
        params = params.with_families(a.families.clone());
    }
    if let Some(k) = a.select_k {
        params = params.with_select_ks(vec![k]);
    }
    if let Some(p) = a.patience {
        params = params.with_patience(p);
    }
    #[cfg(feature = "mpi")]
    if let Some(rows) = a.sample_rows {
        params = params.with_sample_rows(rows);
    }
    match a.normalize {
        None => {}
        Some(Normalize::L2) => params = params.with_transforms(vec![RowTransform::L2]),
        Some(Normalize::None) => params = params.with_transforms(vec![RowTransform::Raw]),
    }
    if group.lead() {
        g.info(&format!(
            "fitting auto on {name}: {rows} rows, {} features, {} {}",
            data.features().ncols(),
            data.n_labels(),
            labels_word(data.task())
        ));
    }
    let mut progress = FitProgress::new(g, "auto");
    let sel = if group.distributed() {
        // the library checks the sample's, the search's and each shard's memory
        let mut quiet = NoObserver;
        let observer: &mut dyn SelectionObserver = if group.lead() {
            &mut progress
        } else {
            &mut quiet
        };
        params
            .check()
            .and_then(|p| auto_fit_sharded(&data, &g.registry, &p, observer, group))
    } else {
        let budget = memory_budget()?;
        preflight(g, &estimate_auto(&data, &params)?, budget, "--m")?;
        params
            .check()
            .and_then(|p| auto_fit(&data, &g.registry, &p, &mut progress))
    };
    progress.finish();
    let mut sel = sel?;
    if !group.lead() {
        return Ok(());
    }
    crate::common::record_label_columns(&mut sel.model, g);
    if !id_names.is_empty() {
        g.info(&format!(
            "dropped {} identifier column{} (one value per row): {}",
            id_names.len(),
            if id_names.len() == 1 { "" } else { "s" },
            id_names.join(", ")
        ));
    }
    if !sel.constant_columns.is_empty() {
        g.info(&format!(
            "dropped {} constant column{}",
            sel.constant_columns.len(),
            if sel.constant_columns.len() == 1 {
                ""
            } else {
                "s"
            }
        ));
    }
    gimc::persist::save_label_model_with_preprocess(&sel.model, &sel.preprocess, &a.out)
        .with_context(|| format!("saving the model to {}", a.out.display()))?;
    report(a, g, (&name, rows), &data, &sel, &id_names)
}

/// The row count of the whole: every shard's together (this process's alone on one process),
/// after checking that they agree on the features and labels.
fn whole_rows(data: &LabelData, announced: Option<usize>, group: &dyn Group) -> Result<usize> {
    let widths = [data.features().ncols(), data.n_labels()];
    let whole = layout(
        group,
        LocalShard {
            rows: data.nrows(),
            widths: &widths,
            announced,
        },
        || {
            format!(
                "the shards disagree on the number of features or labels (classes): process {} \
                 has {} and {}",
                group.rank(),
                widths[0],
                widths[1]
            )
        },
    )?;
    Ok(whole.rows)
}

/// The identifier columns of `ds` ([`Dataset::identifier_columns`]); on a distributed group,
/// those of every process's shard.
fn identifier_columns(ds: &Dataset, group: &dyn Group) -> Vec<usize> {
    let local = ds.identifier_columns();
    if !group.distributed() {
        return local;
    }
    let mut flags = vec![0.0; ds.features.ncols()];
    for &j in &local {
        flags[j] = 1.0;
    }
    group.sum(&mut flags);
    let every = group.processes() as f64;
    (0..flags.len()).filter(|&j| flags[j] == every).collect()
}

fn trial_json(t: &AutoTrial) -> serde_json::Value {
    json!({
        "stage": t.stage.name(),
        "transform": t.transform.name(),
        "blocks": t.blocks.iter().map(|b| json!({
            "name": b.name,
            "gamma_factor": b.gamma_factor,
            "gamma": b.gamma,
            "iterations": b.iterations,
        })).collect::<Vec<_>>(),
        "lambda": t.lambda,
        "validation_score": t.score,
    })
}

/// Prints the choice and the best settings tried (`--json`: all of them); `name` and `rows`:
/// the data's name and the row count of the whole.
fn report(
    a: &FitArgs,
    g: &Globals,
    (name, rows): (&str, usize),
    data: &LabelData,
    sel: &AutoSelection,
    id_names: &[String],
) -> Result<()> {
    let metric = if data.task() == Task::MultiLabel {
        match a.select_k {
            Some(k) => format!("P@{k}"),
            None => "(P@1 + P@3) / 2".to_string(),
        }
    } else {
        "accuracy".to_string()
    };
    if g.json {
        let v = json!({
            "model": a.out.display().to_string(),
            "method": "auto",
            "task": data.task().name(),
            "rows": rows,
            "features": data.features().ncols(),
            "labels": data.n_labels(),
            "chosen": trial_json(&sel.chosen),
            "validation_metric": metric,
            "validation_score": sel.chosen.score,
            "dropped_identifier_columns": id_names,
            "dropped_constant_columns": sel.constant_columns,
            "selection_seconds": sel.seconds.0,
            "refit_seconds": sel.seconds.1,
            "tried": sel.trials.iter().map(trial_json).collect::<Vec<_>>(),
        });
        return write_output(None, &format!("{}\n", serde_json::to_string_pretty(&v)?));
    }
    let mut s = format!(
        "fitted auto ({}) on {name}: {rows} rows × {} features, {} {}\nchosen: {} (validation {metric} {:.4})\n",
        data.task().name(),
        data.features().ncols(),
        data.n_labels(),
        labels_word(data.task()),
        sel.chosen.describe(),
        sel.chosen.score,
    );
    let mut order: Vec<&AutoTrial> = sel.trials.iter().collect();
    order.sort_by(|x, y| y.score.total_cmp(&x.score));
    s.push_str(&format!(
        "validation {metric} of the best {} of {} settings tried (--json lists all):\n",
        SHOWN.min(order.len()),
        order.len()
    ));
    for t in order.iter().take(SHOWN) {
        s.push_str(&format!(
            "  {:.4}  {:<8} {}\n",
            t.score,
            t.stage.name(),
            t.describe()
        ));
    }
    s.push_str(&format!(
        "selection {:.1} s, refit {:.1} s\nmodel saved to {}\n",
        sel.seconds.0,
        sel.seconds.1,
        a.out.display()
    ));
    write_output(None, &s)
}
