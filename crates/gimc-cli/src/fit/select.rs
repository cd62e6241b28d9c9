//! `gimc fit --method NAME`: one map family's GIMC or IMC fit with model selection on a
//! validation split ([`gimc::select_and_fit`]). Dense features are standardised with the
//! training statistics first (`--standardize`), rows are then normalised on request
//! (`--normalize l2`), and both are stored in the model for `gimc predict`.

use std::path::Path;

use anyhow::{Context, Result, bail};
use gimc::labels::{Chosen, IterationInfo};
use gimc::{
    DynFamily, Gamma, LabelData, SelectionParams, Task, estimate_selection, select_and_fit,
};
use gimc_linalg::{Preprocess, RowNorm, Standardizer};
use serde_json::json;

use super::args::FitArgs;
use crate::common::{
    Normalize, label_data, labels_word, load_target, memory_budget, normalize, preflight,
    standardize, write_output,
};
use crate::globals::Globals;
use crate::progress::FitProgress;

/// Runs `gimc fit --method NAME`.
pub fn run(a: &FitArgs, g: &Globals) -> Result<()> {
    let (family, learn) = g.registry.map_method(&a.method)?;
    if !a.families.is_empty() {
        bail!(
            "--families narrows `--method auto`; --method {} fixes the map",
            a.method
        );
    }
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
    let budget = memory_budget()?;
    let params = selection_params(a, g, &data, family, learn, budget)?;
    preflight(
        g,
        &estimate_selection(&data, family, &params)?,
        budget,
        "--m",
    )?;
    let mut progress = FitProgress::new(g, &a.method);
    let sel = params
        .check()
        .and_then(|params| select_and_fit(&data, family, &params, &mut progress));
    progress.finish();
    let mut sel = sel?;
    sel.model.set_method(a.method.clone());
    crate::common::record_label_columns(&mut sel.model, g);
    let preprocess = Preprocess {
        standardizer,
        row_norm,
        ..Preprocess::default()
    };
    gimc::persist::save_label_model_with_preprocess(&sel.model, &preprocess, &a.out)
        .with_context(|| format!("saving the model to {}", a.out.display()))?;
    if let Some(t) = &a.trace {
        // validation scores per iteration of the chosen setting in the selection fit (the
        // refit on all rows has no held-out part)
        let val_scores: &[f64] = sel
            .candidates
            .iter()
            .find(|c| {
                (c.m, c.gamma, c.lambda) == (sel.chosen.m, sel.chosen.gamma, sel.chosen.lambda)
            })
            .map(|c| c.scores.as_slice())
            .unwrap_or(&[]);
        write_trace(
            t,
            &sel.history,
            val_scores,
            data.task(),
            a.select_k.unwrap_or(1),
        )?;
    }
    let fitted = Fitted {
        name: &name,
        data: &data,
        chosen: &sel.chosen,
        iterations: sel.history.len().saturating_sub(1),
        params: &params,
        standardizer: preprocess.standardizer.as_ref(),
        row_norm,
    };
    report(a, g, &fitted)
}

/// The selection's grid (`--gamma`, `--lambda`, `--m`, each with its default) and settings,
/// with the storage of Φ (`--stream auto` streams when the whole Φ would not fit `budget`).
fn selection_params(
    a: &FitArgs,
    g: &Globals,
    data: &LabelData,
    family: &DynFamily,
    learn: bool,
    budget: gimc::MemoryBudget,
) -> Result<SelectionParams> {
    let or_default = |v: &[f64], default: f64| {
        if v.is_empty() {
            vec![default]
        } else {
            v.to_vec()
        }
    };
    let gammas = if a.gamma.is_empty() {
        vec![Gamma::SCALE]
    } else {
        a.gamma.clone()
    };
    let ms = if a.m.is_empty() {
        vec![500]
    } else {
        a.m.clone()
    };
    let mut params = SelectionParams::default()
        .with_gammas(gammas)
        .with_lambdas(or_default(&a.lambda, 1.0))
        .with_ms(ms)
        .with_max_iter(if learn { a.iters } else { 0 })
        .with_validation_fraction(a.validation)
        .with_select_k(a.select_k.unwrap_or(1))
        .with_seed(g.seed)
        .with_memory(budget)
        .with_line_search(gimc::LineSearchParams::default().with_max_relative_step(a.max_step))
        .with_proximal(a.proximal)
        .with_patience(a.patience);
    params.storage = a.storage(
        "--precision f32 and --block-rows need the streamed path (--stream on or auto)",
        |streamed| {
            let storage = gimc::labels::auto_storage(data, family, &params, streamed)?;
            if storage.is_streamed() {
                g.info("the whole features would not fit the memory available: streaming them in row blocks");
            }
            Ok(storage)
        },
    )?;
    Ok(params)
}

/// What `gimc fit --method NAME` fitted, for its summary.
struct Fitted<'f> {
    /// The data set's name.
    name: &'f str,
    data: &'f LabelData,
    chosen: &'f Chosen,
    /// Outer iterations of the refit.
    iterations: usize,
    params: &'f SelectionParams,
    standardizer: Option<&'f Standardizer>,
    row_norm: RowNorm,
}

/// Prints the summary: the chosen setting, its validation score and the input transform
/// stored in the model (JSON with `--json`).
fn report(a: &FitArgs, g: &Globals, f: &Fitted<'_>) -> Result<()> {
    let (data, chosen, row_norm) = (f.data, f.chosen, f.row_norm);
    let select_k = a.select_k.unwrap_or(1);
    let best_val = chosen.validation_score;
    let metric = if data.task() == Task::MultiLabel {
        format!("P@{select_k}")
    } else {
        "accuracy".to_string()
    };
    if g.json {
        // how the features were standardised: null (not), "center-scale" or "scale" (sparse)
        let standardized = f
            .standardizer
            .map(|st| if st.center { "center-scale" } else { "scale" });
        let v = json!({
            "model": a.out.display().to_string(),
            "method": a.method,
            "task": data.task().name(),
            "rows": data.nrows(),
            "features": data.features().ncols(),
            "labels": data.n_labels(),
            "chosen": chosen.describe(),
            "standardized": standardized,
            "normalized": (row_norm != RowNorm::None).then(|| row_norm.name()),
            "streamed": f.params.storage.is_streamed(),
            "precision": f.params.storage.precision().name(),
            "validation_metric": metric,
            "validation_score": if best_val.is_finite() { Some(best_val) } else { None },
            "iterations": f.iterations,
        });
        return write_output(None, &format!("{}\n", serde_json::to_string_pretty(&v)?));
    }
    let mut s = format!(
        "fitted {} ({}) on {}: {} rows × {} features, {} {}\nchosen: {}\n",
        a.method,
        data.task().name(),
        f.name,
        data.nrows(),
        data.features().ncols(),
        data.n_labels(),
        labels_word(data.task()),
        chosen.describe()
    );
    if best_val.is_finite() {
        s.push_str(&format!("validation {metric}: {:.4}\n", best_val));
    }
    if let Some(st) = f.standardizer {
        s.push_str(if st.center {
            "features standardised (training mean and standard deviation, stored in the model)\n"
        } else {
            "features scaled (training standard deviation, stored in the model)\n"
        });
    }
    if row_norm != RowNorm::None {
        s.push_str(&format!(
            "rows normalised ({}, stored in the model)\n",
            row_norm.name()
        ));
    }
    s.push_str(&format!("model saved to {}\n", a.out.display()));
    write_output(None, &s)
}

/// Writes the refit's per-iteration trace; `validation_metric` is the selection fit's
/// validation score after the same number of iterations.
fn write_trace(
    path: &Path,
    history: &[IterationInfo],
    val_scores: &[f64],
    task: Task,
    k: usize,
) -> Result<()> {
    let metric = |e: &Option<gimc::labels::Evaluation>| e.as_ref().and_then(|e| e.score(task, k));
    let val = |h: &IterationInfo| metric(&h.validation).or(val_scores.get(h.iteration).copied());
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let s = if is_json {
        let rows: Vec<_> = history
            .iter()
            .map(|h| {
                json!({
                    "iteration": h.iteration,
                    "objective": h.objective,
                    "step": h.step,
                    "seconds": h.seconds,
                    "train_metric": metric(&h.train),
                    "validation_metric": val(h),
                })
            })
            .collect();
        format!("{}\n", serde_json::to_string_pretty(&rows)?)
    } else {
        let opt = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
        let mut s =
            String::from("iteration,objective,step,seconds,train_metric,validation_metric\n");
        for h in history {
            s.push_str(&format!(
                "{},{},{},{},{},{}\n",
                h.iteration,
                h.objective,
                opt(h.step),
                h.seconds,
                opt(metric(&h.train)),
                opt(val(h))
            ));
        }
        s
    };
    write_output(Some(path), &s)
}
