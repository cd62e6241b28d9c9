//! `gimc fit --method ridge|rrr|logistic|svm`: the linear models of the solvers' toolbox on the
//! rows as they are ([`gimc::fit_linear`]), the grid (`--lambda`, or `--rank` for `rrr`)
//! chosen on a validation split. Dense features are standardised first (`--standardize`),
//! rows normalised on request (`--normalize`), and both are stored in the model for
//! `gimc predict`.

use anyhow::{Context, Result, bail};
use gimc::labels::{LinearSelection, LinearSetting};
use gimc::{LinearMethod, LinearParams, estimate_linear, fit_linear};
use serde_json::json;

use super::args::FitArgs;
use super::{
    TrainingRows, metric_name, summary_head, summary_json, training_rows, transform_lines,
};
use crate::common::{memory_budget, preflight, write_output};
use crate::globals::Globals;
use crate::progress::FitProgress;

/// Runs `gimc fit --method` with a linear method.
pub fn run(a: &FitArgs, g: &Globals, method: LinearMethod) -> Result<()> {
    refuse_map_flags(a, method)?;
    let rows = training_rows(a, g)?;
    let data = &rows.data;
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
    preflight(g, &estimate_linear(data, &params), budget, "--method")?;
    let mut progress = FitProgress::new(g, &a.method);
    let sel = fit_linear(data, &params, &mut progress);
    progress.finish();
    let mut sel = sel?;
    crate::common::record_label_columns(&mut sel.model, g);
    gimc::persist::save_label_model_with_preprocess(&sel.model, &rows.preprocess, &a.out)
        .with_context(|| format!("saving the model to {}", a.out.display()))?;
    report(a, g, &rows, &sel)
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
fn report(a: &FitArgs, g: &Globals, rows: &TrainingRows, sel: &LinearSelection) -> Result<()> {
    let (data, preprocess) = (&rows.data, &rows.preprocess);
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
        let mut v = summary_json(a, data, preprocess);
        v["chosen"] = setting(&sel.chosen.setting);
        v["validation_score"] = json!(sel.chosen.score);
        v["tried"] = json!(tried);
        return write_output(None, &format!("{}\n", serde_json::to_string_pretty(&v)?));
    }
    let mut s = summary_head(a, &rows.name, data, &sel.chosen.setting.describe());
    let metric = metric_name(data, a.select_k.unwrap_or(1));
    if sel.tried.len() > 1 {
        s.push_str(&format!("validation {metric} of the settings tried:\n"));
        for t in &sel.tried {
            let score = t
                .score
                .map_or_else(|| "-".to_string(), |v| format!("{v:.4}"));
            s.push_str(&format!("  {score}  {}\n", t.setting.describe()));
        }
    }
    s.push_str(&transform_lines(preprocess));
    s.push_str(&format!("model saved to {}\n", a.out.display()));
    write_output(None, &s)
}
