//! General completion with side information on both sides (`gimc fit --triplets`, `gimc
//! predict --pairs`): GIMC / IMC on observed entries (i, j, value) with row features X and
//! column features Y, the maps learned on both sides (gimc::fit_completion), saved as a
//! completion model file.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use gimc::{
    CompletionData, CompletionParams, DynFamily, NoObserver, estimate_completion_family,
    fit_completion,
};
use gimc_data::{TripletOptions, read_triplets};
use gimc_linalg::Observed;
use gimc_linalg::rng::{child, seeded};

use crate::common::{Globals, load_input, memory_budget, preflight, write_output};

/// Settings of a completion fit taken from `gimc fit`'s arguments.
pub struct CompletionArgs<'a> {
    /// Observed entries.
    pub triplets: &'a Path,
    /// Row features (file or set name).
    pub row_features: &'a str,
    /// Column features.
    pub col_features: &'a str,
    /// The map family (the same for rows and columns).
    pub family: &'a DynFamily,
    /// Learn the maps.
    pub learn: bool,
    /// m, γ, λ, iterations, rank.
    pub m: usize,
    /// RBF γ (`scale` is resolved on each side's features).
    pub gamma: gimc::Gamma,
    /// Ridge λ.
    pub lambda: f64,
    /// Outer iterations.
    pub iters: usize,
    /// Rank of Z = WHᵀ.
    pub rank: usize,
    /// Model path.
    pub out: &'a Path,
}

/// Fits and saves a completion model.
pub fn fit(a: &CompletionArgs<'_>, method: &str, g: &Globals) -> Result<()> {
    let x = load_input(a.row_features, "train", g)?.features;
    let y = load_input(a.col_features, "train", g)?.features;
    let t = read_triplets(
        a.triplets,
        &TripletOptions {
            nrows: Some(x.nrows()),
            ncols: Some(y.nrows()),
            ..TripletOptions::default()
        },
    )?;
    let rows: Vec<usize> = t.entries.iter().map(|e| e.0).collect();
    let cols: Vec<usize> = t.entries.iter().map(|e| e.1).collect();
    let vals: Vec<f64> = t.entries.iter().map(|e| e.2).collect();
    if vals.is_empty() {
        bail!("{}: no observed entries", a.triplets.display());
    }
    let omega = Observed::from_triplets(x.nrows(), y.nrows(), &rows, &cols, &vals)
        .with_context(|| a.triplets.display().to_string())?;
    let data = CompletionData::new(&omega, &x, &y)?;
    let budget = memory_budget()?;
    let params = CompletionParams::default()
        .with_rank(a.rank)
        .with_lambda(a.lambda)
        .with_max_iter(if a.learn { a.iters } else { 0 })
        .with_learn_rows(a.learn)
        .with_learn_cols(a.learn)
        .with_memory(budget);
    preflight(
        g,
        &estimate_completion_family(&data, a.family, a.m, &params, None)?,
        budget,
        "--m",
    )?;
    let root = seeded(g.seed);
    let row_map = a
        .family
        .build(&x, a.m, a.gamma.resolve(&x), &mut child(&root, 1))?;
    let col_map = a
        .family
        .build(&y, a.m, a.gamma.resolve(&y), &mut child(&root, 2))?;
    let params = params.check()?;
    let spinner = crate::progress::spinner(g, &format!("fitting {method}"));
    let fit = fit_completion(
        &data,
        row_map,
        col_map,
        &params,
        None,
        &mut child(&root, 3),
        &mut NoObserver,
    );
    spinner.finish();
    let fit = fit?;
    gimc::persist::save_completion_model(&fit.model, a.out)
        .with_context(|| format!("saving the model to {}", a.out.display()))?;
    let pairs: Vec<(usize, usize)> = rows.iter().copied().zip(cols.iter().copied()).collect();
    let fitted = fit.model.predict_entries(&x, &y, &pairs)?;
    let rmse = crate::common::rmse(&fitted, &vals);
    let s = if g.json {
        format!(
            "{}\n",
            serde_json::json!({"model": a.out.display().to_string(), "method": method,
                "task": "completion", "rows": x.nrows(), "cols": y.nrows(),
                "observed": vals.len(), "train_rmse": rmse, "iterations": fit.history.len().saturating_sub(1)})
        )
    } else {
        format!(
            "fitted {method} (completion) on {} × {} with {} observed entries: training RMSE {rmse:.4}\nmodel saved to {}\n",
            x.nrows(),
            y.nrows(),
            vals.len(),
            a.out.display()
        )
    };
    write_output(None, &s)
}

/// Predicts the values of (row, column) pairs with a saved completion model.
pub fn predict(
    model: &Path,
    pairs_file: &Path,
    features: Option<(&str, &str)>,
    out: Option<&PathBuf>,
    g: &Globals,
) -> Result<()> {
    let m = gimc::persist::load_completion_model(model, &g.registry)?;
    let pairs = crate::complete::read_pairs(pairs_file, false)?;
    let v = match features {
        Some((row_features, col_features)) => {
            let x = load_input(row_features, "train", g)?.features;
            let y = load_input(col_features, "train", g)?.features;
            m.predict_entries(&x, &y, &pairs)?
        }
        // plain completion: the pairs index the training matrix
        None if matches!(m.method(), "mc-als" | "mc-nuclear") => m
            .predict_by_index(&pairs)
            .with_context(|| model.display().to_string())?,
        None => anyhow::bail!(
            "{}: a {} model maps feature rows: give --row-features and --col-features",
            model.display(),
            if m.method().is_empty() {
                "completion"
            } else {
                m.method()
            }
        ),
    };
    let s = if g.json {
        let rows: Vec<_> = pairs
            .iter()
            .zip(&v)
            .map(|(&(i, j), &p)| serde_json::json!([i, j, p]))
            .collect();
        format!("{}\n", serde_json::to_string(&rows)?)
    } else {
        let mut s = crate::common::PredictionKind::Values.header();
        for (&(i, j), p) in pairs.iter().zip(&v) {
            s.push_str(&format!("{i} {j} {p}\n"));
        }
        s
    };
    write_output(out.map(PathBuf::as_path), &s)
}
