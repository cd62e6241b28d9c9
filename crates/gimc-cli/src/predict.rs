//! `gimc predict`: loads a model saved by `gimc fit` and writes the top-k labels (multi-label)
//! or the class (multi-class) of every row of new data, or their scores. A model that stores an
//! input transform (kept columns, tf-idf weights, standardisation, row normalisation, row scale)
//! has it applied to the new rows first. Sparse rows indexed by column number (LIBSVM, XMC)
//! that never reach the model's last columns are widened with zero columns. Text and CSV output
//! starts with the line `# gimc predictions: kind=labels` (or `kind=classes`), which `gimc
//! eval` reads; class predictions of a model that knows its class names go on with the line
//! `# gimc classes: ["name0", "name1", …]`, the names of the class indices, by which `gimc
//! eval` matches them with the truth's classes. With `--pairs`, a completion model saved by
//! `gimc complete --save` predicts the values of (row, column) pairs, on new rows or columns
//! given their features.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use gimc::Task;
use serde_json::json;

use crate::common::{PredictionKind, check_outputs, load_input, load_target, write_output};
use crate::complete::read_pairs;
use crate::globals::Globals;

/// Arguments of `gimc predict`.
#[derive(Args, Debug)]
pub struct PredictArgs {
    /// The data to predict: a file or a set name (its `test` part unless --part).
    #[arg(required_unless_present = "pairs")]
    pub target: Option<String>,
    /// The model file written by `gimc fit`.
    #[arg(long, short = 'm', default_value = "model.gimc")]
    pub model: PathBuf,
    /// Part of a named set.
    #[arg(long, default_value = "test")]
    pub part: String,
    /// Labels per row, at least 1 (multi-label; multi-class always writes the top class unless
    /// --scores).
    #[arg(
        long,
        default_value_t = 5,
        value_parser = crate::common::at_least_one,
        allow_negative_numbers = true
    )]
    pub top_k: usize,
    /// Write label:score pairs instead of bare label indices.
    #[arg(long)]
    pub scores: bool,
    /// CSV output (row, rank, label, score).
    #[arg(long)]
    pub csv: bool,
    /// Completion models: predict the values of the `i j` pairs in this file (TARGET ignored).
    /// Give the row and column features, except for a plain completion model (mc-als,
    /// mc-nuclear), whose pairs index the training matrix.
    #[arg(long, value_name = "FILE")]
    pub pairs: Option<PathBuf>,
    /// Row features for --pairs.
    #[arg(long, value_name = "DATA", requires_all = ["pairs", "col_features"])]
    pub row_features: Option<String>,
    /// Column features for --pairs.
    #[arg(long, value_name = "DATA", requires_all = ["pairs", "row_features"])]
    pub col_features: Option<String>,
    /// Output file (default stdout).
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
}

/// Runs `gimc predict`.
pub fn run(a: &PredictArgs, g: &Globals) -> Result<()> {
    let inputs: Vec<&Path> = [
        a.target.as_deref().map(Path::new),
        Some(a.model.as_path()),
        a.pairs.as_deref(),
        a.row_features.as_deref().map(Path::new),
        a.col_features.as_deref().map(Path::new),
    ]
    .into_iter()
    .flatten()
    .collect();
    check_outputs(g, &[a.out.as_deref()], &inputs)?;
    if let Some(pf) = &a.pairs {
        let features = a.row_features.as_deref().zip(a.col_features.as_deref());
        return predict_pairs(&a.model, pf, features, a.out.as_ref(), g);
    }
    let (model, preprocess) =
        gimc::persist::load_label_model_with_preprocess(&a.model, &g.registry)?;
    let mut ds = load_target(a.target.as_deref(), &a.part, g)?;
    // the raw width: the model's input dimension unless it keeps some of the input columns
    let width = preprocess.input_dim.unwrap_or(model.input_dim());
    if indexed_by_column_number(&ds) && ds.ncols() < width {
        // sparse rows (LIBSVM, XMC) that never use the last features: those columns are zero
        ds.features = ds.features.widen(width)?;
    }
    if ds.ncols() != width {
        bail!(
            "{}: {} feature columns, but the model {} was trained on {}",
            ds.name,
            ds.ncols(),
            a.model.display(),
            width
        );
    }
    ds.features = preprocess
        .apply(&ds.features)
        .with_context(|| format!("{}: applying the model's input transform", ds.name))?;
    let k = match model.task() {
        Task::MultiClass if !a.scores => 1,
        _ => a.top_k,
    }
    .min(model.n_labels());
    // block by block: never the rows × labels score matrix
    let rows = model
        .top_k_scored(&ds.features, k.max(1))
        .with_context(|| ds.name.clone())?;
    let n = rows.len();
    let kind = match model.task() {
        Task::MultiLabel => PredictionKind::Labels,
        Task::MultiClass => PredictionKind::Classes,
    };
    let names = model.label_names();
    let header = kind.header_with_names(if names.len() == model.n_labels() {
        names
    } else {
        &[]
    });
    let s = if g.json {
        let v: Vec<_> = rows
            .iter()
            .map(|r| {
                if a.scores {
                    json!(
                        r.iter()
                            .map(|&(j, s)| json!({"label": j, "score": s}))
                            .collect::<Vec<_>>()
                    )
                } else {
                    json!(r.iter().map(|&(j, _)| j).collect::<Vec<_>>())
                }
            })
            .collect();
        format!("{}\n", serde_json::to_string(&v)?)
    } else if a.csv {
        let mut s = header;
        s.push_str("row,rank,label,score\n");
        for (i, r) in rows.iter().enumerate() {
            for (rank, &(j, sc)) in r.iter().enumerate() {
                s.push_str(&format!("{i},{},{j},{sc}\n", rank + 1));
            }
        }
        s
    } else {
        let mut s = header;
        for r in &rows {
            let line: Vec<String> = r
                .iter()
                .map(|&(j, sc)| {
                    if a.scores {
                        format!("{j}:{sc:.6}")
                    } else {
                        j.to_string()
                    }
                })
                .collect();
            s.push_str(&line.join(" "));
            s.push('\n');
        }
        s
    };
    write_output(a.out.as_deref(), &s)?;
    g.info(&format!(
        "predicted {n} rows with {} ({}, top {k})",
        a.model.display(),
        model.method()
    ));
    Ok(())
}

/// Whether the set's columns are known only by their numbers in sparse rows (LIBSVM, XMC: no
/// feature names), so that a file whose rows never use the last columns reads narrower than the
/// data the model was trained on, and the missing columns are zero.
fn indexed_by_column_number(ds: &gimc_data::Dataset) -> bool {
    ds.features.is_sparse() && ds.feature_names.is_empty()
}

/// Predicts the values of (row, column) pairs with a saved completion model.
fn predict_pairs(
    model: &Path,
    pairs_file: &Path,
    features: Option<(&str, &str)>,
    out: Option<&PathBuf>,
    g: &Globals,
) -> Result<()> {
    let m = gimc::persist::load_completion_model(model, &g.registry)?;
    let pairs = read_pairs(pairs_file, false)?;
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
        None => bail!(
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
            .map(|(&(i, j), &p)| json!([i, j, p]))
            .collect();
        format!("{}\n", serde_json::to_string(&rows)?)
    } else {
        let mut s = PredictionKind::Values.header();
        for (&(i, j), p) in pairs.iter().zip(&v) {
            s.push_str(&format!("{i} {j} {p}\n"));
        }
        s
    };
    write_output(out.map(PathBuf::as_path), &s)
}
