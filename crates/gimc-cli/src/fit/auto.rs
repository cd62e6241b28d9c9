//! `gimc fit` with `--method auto` (the default): the library's `auto` search
//! ([`gimc::auto_fit`]) on the raw rows of the file, narrowed by the flags the user gave. It
//! drops identifier and constant columns (saying so), prints the chosen setting and the best
//! settings tried, and saves the model with its input transform.

use anyhow::{Context, Result, bail};
use gimc::labels::AutoTrial;
use gimc::{AutoParams, AutoSelection, RowTransform, Task, auto_fit, estimate_auto};
use serde_json::json;

use super::args::{FitArgs, Stream};
use crate::common::{
    Normalize, Standardize, label_data, labels_word, load_target, memory_budget, preflight,
    write_output,
};
use crate::globals::Globals;
use crate::progress::FitProgress;
use gimc::Precision;

/// Rows of the validation table printed without `--json`.
const SHOWN: usize = 8;

/// Runs `gimc fit --method auto`.
pub fn run(a: &FitArgs, g: &Globals) -> Result<()> {
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
    let ds = load_target(a.target.as_deref(), &a.part, g)?;
    let name = ds.name.clone();
    let identifiers = ds.identifier_columns();
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
    match a.normalize {
        None => {}
        Some(Normalize::L2) => params = params.with_transforms(vec![RowTransform::L2]),
        Some(Normalize::None) => params = params.with_transforms(vec![RowTransform::Raw]),
    }
    g.info(&format!(
        "fitting auto on {name}: {} rows, {} features, {} {}",
        data.nrows(),
        data.features().ncols(),
        data.n_labels(),
        labels_word(data.task())
    ));
    let budget = memory_budget()?;
    preflight(g, &estimate_auto(&data, &params)?, budget, "--m")?;
    let mut progress = FitProgress::new(g, "auto");
    let sel = params
        .check()
        .and_then(|p| auto_fit(&data, &g.registry, &p, &mut progress));
    progress.finish();
    let mut sel = sel?;
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
    report(a, g, &name, &data, &sel, &id_names)
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

fn report(
    a: &FitArgs,
    g: &Globals,
    name: &str,
    data: &gimc::LabelData,
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
            "rows": data.nrows(),
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
        "fitted auto ({}) on {name}: {} rows × {} features, {} {}\nchosen: {} (validation {metric} {:.4})\n",
        data.task().name(),
        data.nrows(),
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
