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
use gimc_linalg::Preprocess;
use serde_json::json;

use super::args::FitArgs;
use super::{
    TrainingRows, metric_name, summary_head, summary_json, training_rows, transform_lines,
};
use crate::common::{memory_budget, preflight, write_output};
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
    let TrainingRows {
        name,
        data,
        preprocess,
    } = training_rows(a, g)?;
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
        preprocess: &preprocess,
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
    /// The input transform stored in the model.
    preprocess: &'f Preprocess,
}

/// Prints the summary: the chosen setting, its validation score and the input transform
/// stored in the model (JSON with `--json`).
fn report(a: &FitArgs, g: &Globals, f: &Fitted<'_>) -> Result<()> {
    let (data, chosen) = (f.data, f.chosen);
    let best_val = chosen.validation_score;
    if g.json {
        let mut v = summary_json(a, data, f.preprocess);
        v["chosen"] = json!(chosen.describe());
        v["streamed"] = json!(f.params.storage.is_streamed());
        v["precision"] = json!(f.params.storage.precision().name());
        v["validation_score"] = json!(if best_val.is_finite() {
            Some(best_val)
        } else {
            None
        });
        v["iterations"] = json!(f.iterations);
        return write_output(None, &format!("{}\n", serde_json::to_string_pretty(&v)?));
    }
    let mut s = summary_head(a, f.name, data, &chosen.describe());
    let metric = metric_name(data, a.select_k.unwrap_or(1));
    if best_val.is_finite() {
        s.push_str(&format!("validation {metric}: {:.4}\n", best_val));
    }
    s.push_str(&transform_lines(f.preprocess));
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
