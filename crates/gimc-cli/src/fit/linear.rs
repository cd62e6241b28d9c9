//! `gimc fit --method ridge|rrr|logistic|svm`: the linear models of the solvers' toolbox on the
//! rows as they are ([`gimc::fit_linear`]), the grid (`--lambda`, or `--rank` for `rrr`)
//! chosen on a validation split. Dense features are standardised first (`--standardize`),
//! rows normalised on request (`--normalize`), and both are stored in the model for
//! `gimc predict`.

use anyhow::{Context, Result, bail};
use gimc::labels::{LinearSelection, LinearSetting};
use gimc::{LinearMethod, LinearParams, Task, estimate_linear, fit_linear};
use gimc_linalg::{Preprocess, RowNorm};
use serde_json::json;

use super::args::FitArgs;
use crate::common::{
    Normalize, label_data, labels_word, load_target, memory_budget, normalize, preflight,
    standardize, write_output,
};
use crate::globals::Globals;
use crate::progress::FitProgress;

/// Runs `gimc fit --method` with a linear method.
pub fn run(a: &FitArgs, g: &Globals, method: LinearMethod) -> Result<()> {
    refuse_map_flags(a, method)?;
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
    let mut params = LinearParams::default()
        .with_method(method)
        .with_validation_fraction(a.validation)
        .with_select_k(a.select_k.unwrap_or(1))
        .with_seed(g.seed)
        .with_memory(budget);
    if !a.lambda.is_empty() {
        params = params.with_lambdas(a.lambda.clone());
    }
    if !a.rank.is_empty() {
        params = params.with_ranks(a.rank.clone());
    }
    let params = params.check()?;
    preflight(g, &estimate_linear(&data, &params), budget, "--method")?;
    let mut progress = FitProgress::new(g, &a.method);
    let sel = fit_linear(&data, &params, &mut progress);
    progress.finish();
    let mut sel = sel?;
    crate::common::record_label_columns(&mut sel.model, g);
    let preprocess = Preprocess {
        standardizer,
        row_norm,
        ..Preprocess::default()
    };
    gimc::persist::save_label_model_with_preprocess(&sel.model, &preprocess, &a.out)
        .with_context(|| format!("saving the model to {}", a.out.display()))?;
    let stored = Stored {
        standardized: preprocess.standardizer.as_ref().map(|st| st.center),
        row_norm,
    };
    report(a, g, &name, &data, &sel, stored)
}

/// The input transform stored in the model: standardised (`Some(true)`: centred and scaled,
/// `Some(false)`: scaled, sparse) and the row norm.
struct Stored {
    standardized: Option<bool>,
    row_norm: RowNorm,
}

/// Refuses the flags of the map fits, which a linear model has no use for.
fn refuse_map_flags(a: &FitArgs, method: LinearMethod) -> Result<()> {
    let given = [
        (!a.families.is_empty(), "--families"),
        (!a.m.is_empty(), "--m"),
        (!a.gamma.is_empty(), "--gamma"),
        (a.patience.is_some(), "--patience"),
        (a.max_step.is_some(), "--max-step"),
        (a.proximal != 0.0, "--proximal"),
        (a.trace.is_some(), "--trace"),
        (
            method == LinearMethod::ReducedRank && !a.lambda.is_empty(),
            "--lambda",
        ),
        (
            method != LinearMethod::ReducedRank && !a.rank.is_empty(),
            "--rank",
        ),
    ];
    if let Some((_, flag)) = given.iter().find(|(given, _)| *given) {
        bail!(
            "{flag} does not apply to --method {} (a linear model on the rows; its grid is {})",
            method.name(),
            if method == LinearMethod::ReducedRank {
                "--rank"
            } else {
                "--lambda"
            }
        );
    }
    Ok(())
}

/// Prints the chosen setting and the validation score of every setting tried (JSON with
/// `--json`).
fn report(
    a: &FitArgs,
    g: &Globals,
    name: &str,
    data: &gimc::LabelData,
    sel: &LinearSelection,
    stored: Stored,
) -> Result<()> {
    let row_norm = stored.row_norm;
    let metric = if data.task() == Task::MultiLabel {
        format!("P@{}", a.select_k.unwrap_or(1))
    } else {
        "accuracy".to_string()
    };
    let setting = |s: &LinearSetting| match s {
        LinearSetting::Lambda(l) => json!({ "lambda": l }),
        LinearSetting::Rank(k) => json!({ "rank": k }),
    };
    if g.json {
        let tried: Vec<_> = sel
            .tried
            .iter()
            .map(|t| json!({ "setting": setting(&t.setting), "validation_score": t.score }))
            .collect();
        let v = json!({
            "model": a.out.display().to_string(),
            "method": a.method,
            "task": data.task().name(),
            "rows": data.nrows(),
            "features": data.features().ncols(),
            "labels": data.n_labels(),
            "chosen": setting(&sel.chosen.setting),
            "standardized": stored.standardized.map(|c| if c { "center-scale" } else { "scale" }),
            "normalized": (row_norm != RowNorm::None).then(|| row_norm.name()),
            "validation_metric": metric,
            "validation_score": sel.chosen.score,
            "tried": tried,
        });
        return write_output(None, &format!("{}\n", serde_json::to_string_pretty(&v)?));
    }
    let mut s = format!(
        "fitted {} ({}) on {name}: {} rows × {} features, {} {}\nchosen: {}\n",
        a.method,
        data.task().name(),
        data.nrows(),
        data.features().ncols(),
        data.n_labels(),
        labels_word(data.task()),
        sel.chosen.setting.describe()
    );
    if sel.tried.len() > 1 {
        s.push_str(&format!("validation {metric} of the settings tried:\n"));
        for t in &sel.tried {
            let score = t
                .score
                .map_or_else(|| "-".to_string(), |v| format!("{v:.4}"));
            s.push_str(&format!("  {score}  {}\n", t.setting.describe()));
        }
    }
    match stored.standardized {
        Some(true) => s.push_str(
            "features standardised (training mean and standard deviation, stored in the model)\n",
        ),
        Some(false) => {
            s.push_str("features scaled (training standard deviation, stored in the model)\n")
        }
        None => {}
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
