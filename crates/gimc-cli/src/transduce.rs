//! `gimc transduce`: MC-1 / MC-b transduction (Goldberg et al., NIPS 2010; DESIGN §3.5) on one
//! data file whose missing feature values are marked (ARFF `?`, empty / `?` / `NA` CSV cells)
//! and whose missing labels are the ones to predict: single `?` label cells of a multi-label
//! file, whole rows without labels (every label `?`), or an empty class cell. Labels
//! (multi-label, or one-vs-rest ±1 for classes) and the observed features form one low-rank
//! matrix; λ and μ are chosen by the same cross-validation over observed entries as the
//! experiments (`gimc_solvers::transduction::data::transduce`). The imputation + SVM baselines
//! of the paper's tables (`--method fpc-svm|mean-svm|zero-svm`) run on the same table. Writes,
//! for every row with a missing label, its label set completed at the missing cells (or its
//! class) with the scores of every label and, on request, the imputed feature matrix.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use gimc_data::{Dataset, MissingPolicy, Targets};
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::seeded;
use gimc_solvers::transduction::data::{
    Baseline, Transduced, TransductionTable, transduce, transduce_baseline,
};
use gimc_solvers::{
    FpcImputeParams, SvmCvParams, TransductionCvParams, TransductionParams, TransductionVariant,
    ValidSvmCvParams, ValidTransductionCvParams, ValidTransductionParams,
};
use serde_json::json;

use crate::common::{MissingValues, check_outputs, load_input_with, write_output};
use crate::globals::Globals;

/// The transductive method, or a baseline of the paper's tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TransduceMethod {
    /// MC-1: a row of ones in the completed matrix carries the bias.
    Mc1,
    /// MC-b: an explicit bias per label.
    Mcb,
    /// Baseline: FPC (nuclear-norm) imputation of the features, then one SVM per label.
    FpcSvm,
    /// Baseline: mean imputation, then one SVM per label.
    MeanSvm,
    /// Baseline: zero imputation, then one SVM per label.
    ZeroSvm,
}

/// Arguments of `gimc transduce`.
#[derive(Args, Debug)]
pub struct TransduceArgs {
    /// The data: a file (ARFF / Mulan pair, or CSV with --label-column) with missing feature
    /// values marked and the labels to predict missing (`?` cells, or unlabelled rows).
    pub target: String,
    /// Part of a named set.
    #[arg(long, default_value = "train")]
    pub part: String,
    /// MC-1 or MC-b.
    #[arg(long, value_enum, default_value_t = TransduceMethod::Mc1)]
    pub method: TransduceMethod,
    /// λ candidates (label-loss weight), chosen by cross-validation.
    #[arg(long, value_delimiter = ',', default_value = "0.001,0.01,0.1,1")]
    pub lambda: Vec<f64>,
    /// Cross-validation folds over the observed entries.
    #[arg(long, default_value_t = 5)]
    pub folds: usize,
    /// Length of the μ grid σ₁ηᵏ, k = 1..K (per λ).
    #[arg(long, default_value_t = 6)]
    pub mu_count: usize,
    /// At most this many FPC steps per μ stage.
    #[arg(long, default_value_t = 1000)]
    pub max_stage_iters: usize,
    /// Standardise every feature with the mean and standard deviation of its observed entries
    /// (the transduction experiments do; the imputed features are written back in the file's
    /// units).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub standardize: bool,
    /// Write the imputed feature matrix (observed entries kept, missing ones filled) as CSV.
    #[arg(long, value_name = "FILE")]
    pub impute_out: Option<PathBuf>,
    /// Output file of the predictions (default stdout).
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
    /// A CSV cell value that marks a missing value, besides an empty cell, `?` and `NA`
    /// (repeatable, e.g. `--missing -999 --missing NULL`).
    #[arg(long, value_name = "TOKEN", allow_hyphen_values = true)]
    pub missing: Vec<String>,
    /// Child streams under `--seed`: the fit draws from child(…child(seeded(seed), s₁)…, sₖ),
    /// the way the transduction experiments derive each trial's and method's generator
    /// (`gimc-experiments trial-data` prints the streams that reproduce one of its fits).
    #[arg(long, value_name = "S1,S2,...", value_delimiter = ',')]
    pub stream: Vec<u64>,
}

/// The label side of the problem: the number of label rows t, the ±1 targets of the known
/// label cells as (label, row, ±1) (one label row per label, or per class one-vs-rest), the
/// cells to predict per row, the label names, and whether the data is multi-label.
struct LabelSide {
    t: usize,
    entries: Vec<(usize, usize, f64)>,
    /// For every row, whether each of its t label cells is unknown (rows with none left out).
    unknown: std::collections::BTreeMap<usize, Vec<bool>>,
    names: Vec<String>,
    multilabel: bool,
}

fn label_entries(ds: &Dataset) -> Result<LabelSide> {
    let n = ds.nrows();
    let (t, names, multilabel) = match &ds.targets {
        Targets::Labels { matrix, names } => (matrix.cols(), names, true),
        Targets::Classes { classes, names } => (
            names
                .len()
                .max(classes.iter().map(|&k| k + 1).max().unwrap_or(0)),
            names,
            false,
        ),
        _ => bail!(
            "{}: transduction needs labels or classes (a multi-label ARFF / Mulan file, or a CSV \
             with --label-column)",
            ds.name
        ),
    };
    // unknown cells: every cell of an unlabelled row, and the `?` label cells of the others
    let mut unknown: std::collections::BTreeMap<usize, Vec<bool>> = Default::default();
    for &i in &ds.unlabeled {
        unknown.insert(i, vec![true; t]);
    }
    for &(i, l) in &ds.missing_labels {
        unknown.entry(i).or_insert_with(|| vec![false; t])[l] = true;
    }
    let is_unknown = |i: usize, l: usize| unknown.get(&i).is_some_and(|u| u[l]);
    let mut e = Vec::with_capacity(n * t);
    match &ds.targets {
        Targets::Labels { matrix, .. } => {
            for (i, row) in matrix.outer_iterator().enumerate() {
                let mut y = vec![-1.0; t];
                for (j, &v) in row.iter() {
                    if v != 0.0 {
                        y[j] = 1.0;
                    }
                }
                e.extend(
                    y.iter()
                        .enumerate()
                        .filter(|&(l, _)| !is_unknown(i, l))
                        .map(|(l, &v)| (l, i, v)),
                );
            }
        }
        Targets::Classes { classes, .. } => {
            for (i, &k) in classes.iter().enumerate() {
                if !unknown.contains_key(&i) {
                    e.extend((0..t).map(|j| (j, i, if j == k { 1.0 } else { -1.0 })));
                }
            }
        }
        _ => unreachable!("checked above"),
    }
    let names = if names.len() == t {
        names.clone()
    } else {
        let stem = if multilabel { "label" } else { "class" };
        (0..t).map(|j| format!("{stem}{j}")).collect()
    };
    Ok(LabelSide {
        t,
        entries: e,
        unknown,
        names,
        multilabel,
    })
}

/// The peak memory of `gimc transduce` from shapes: the table twice (read, and with NaN
/// cells) and the label matrix; the observed entries (32 bytes each, for the problem and every
/// fold's subset); and for every (λ, fold) continuation path about ten (t + d + 1) × n
/// iterates and buffers plus the dense feature block's values, mask and gradient: rayon's work
/// stealing can hold every path alive at once. Measured on emotions (593 × 72, 6 labels, the
/// task of docs/CLI.md's `transduce` example): 92 MB peak resident for 20 paths against an estimate of 118.5 MiB, and 92 MB
/// for 6 paths against 54.8 MiB.
fn estimate(n: usize, d: usize, t: usize, paths: usize) -> gimc::MemoryEstimate {
    use gimc_linalg::memory::{Tally, mat_bytes};
    let concurrent = paths.max(1);
    let entries = n.saturating_mul(d.saturating_add(t));
    let mut tally = Tally::new("transduction", "folds");
    tally
        .bytes("process", gimc::memory::PROCESS_BASE_BYTES)
        .bytes(
            "the table (read and with NaN cells)",
            mat_bytes(n, d).saturating_mul(2),
        )
        .bytes("labels", mat_bytes(n, t))
        .bytes("observed entries and fold subsets", mat_bytes(entries, 8))
        .bytes(
            format!("{concurrent} continuation path(s) (λ × folds)"),
            mat_bytes(t + d + 1, n)
                .saturating_mul(10)
                .saturating_add(mat_bytes(d, n).saturating_mul(3))
                .saturating_mul(concurrent as u64),
        );
    tally.finish()
}

/// Runs `gimc transduce`.
pub fn run(a: &TransduceArgs, g: &Globals) -> Result<()> {
    check_outputs(
        g,
        &[a.out.as_deref(), a.impute_out.as_deref()],
        &[Path::new(&a.target)],
    )?;
    let missing = MissingValues {
        policy: MissingPolicy::Mask,
        tokens: &a.missing,
    };
    let ds = load_input_with(&a.target, &a.part, g, missing)?;
    let (n, d) = (ds.nrows(), ds.ncols());
    let side = label_entries(&ds)?;
    let t = side.t;
    if side.unknown.is_empty() {
        bail!(
            "{}: every label is known, so there is nothing to predict (leave the labels to \
             predict missing: `?` in ARFF, for a whole row or single cells; an empty class cell \
             in CSV)",
            ds.name
        );
    }
    if side.entries.is_empty() {
        bail!("{}: no labelled rows to learn from", ds.name);
    }
    crate::common::preflight(
        g,
        &estimate(n, d, t, a.lambda.len() * a.folds),
        crate::common::memory_budget()?,
        "--folds or the λ grid",
    )?;
    let (x, y) = matrices(&ds, &side);
    let settings = Settings::new(a)?;
    g.info(&format!(
        "{}: {n} rows ({} unlabelled, {} with some labels missing), {d} features ({} missing), {t} {}; {}-fold cross-validation over λ ∈ {:?}",
        ds.name,
        ds.unlabeled.len(),
        side.unknown.len() - ds.unlabeled.len(),
        ds.missing.len(),
        if side.multilabel { "labels" } else { "classes" },
        a.folds,
        a.lambda
    ));
    let spinner = crate::progress::spinner(g, &format!("transducing with {:?}", a.method));
    let mut rng = a
        .stream
        .iter()
        .fold(seeded(g.seed), |r, &s| gimc_linalg::rng::child(&r, s));
    let table = TransductionTable {
        x: x.as_ref(),
        y: y.as_ref(),
        standardize: a.standardize,
    };
    let fit = match &settings.baseline {
        None => transduce(table, &settings.params, &settings.cv, &mut rng),
        Some(b) => transduce_baseline(table, b, &settings.svm, &mut rng),
    };
    spinner.finish();
    let out = fit?;
    let (rows, predicted) = predicted_labels(&ds, &side, &out.scores);
    write_output(
        a.out.as_deref(),
        &predictions_text(a, g, &side, &out, &rows, &predicted)?,
    )?;
    let unknown_cells: usize = side
        .unknown
        .values()
        .map(|u| u.iter().filter(|&&b| b).count())
        .sum();
    if let Some(path) = &a.impute_out {
        write_imputed(path, &ds, &out.imputed)?;
    }
    g.info(&format!(
        "{:?}: λ = {}, μ = {:.3e}; cross-validated label error {:.2} %; {unknown_cells} \
         label cells of {} rows predicted",
        a.method,
        out.lambda,
        out.mu,
        out.cv_label_error,
        rows.len()
    ));
    Ok(())
}

/// The features with NaN in the missing cells (n × d), and the labels: ±1 known, 0 unknown
/// (n × t).
fn matrices(ds: &Dataset, side: &LabelSide) -> (Mat<f64>, Mat<f64>) {
    let (n, d) = (ds.nrows(), ds.ncols());
    let missing: std::collections::HashSet<(usize, usize)> = ds.missing.iter().copied().collect();
    let dense = ds.features.to_dense();
    let x = Mat::from_fn(n, d, |i, j| {
        if missing.contains(&(i, j)) {
            f64::NAN
        } else {
            dense[(i, j)]
        }
    });
    let mut y = Mat::<f64>::zeros(n, side.t);
    for &(l, i, v) in &side.entries {
        y[(i, l)] = v;
    }
    (x, y)
}

/// The checked settings of the method and of its cross-validations.
struct Settings {
    params: ValidTransductionParams,
    cv: ValidTransductionCvParams,
    svm: ValidSvmCvParams,
    /// The imputation + SVM baseline, if the method is one.
    baseline: Option<Baseline>,
}

impl Settings {
    fn new(a: &TransduceArgs) -> Result<Self> {
        let variant = match a.method {
            TransduceMethod::Mcb => TransductionVariant::McB,
            _ => TransductionVariant::Mc1,
        };
        let params = TransductionParams::default()
            .with_variant(variant)
            .with_max_stage_iters(a.max_stage_iters)
            .with_accelerate(true)
            .check()?;
        let cv = TransductionCvParams::default()
            .with_folds(a.folds)
            .with_lambdas(a.lambda.clone())
            .with_mu_count(a.mu_count)
            .check()?;
        let svm = SvmCvParams::default().with_folds(a.folds).check()?;
        let baseline = match a.method {
            TransduceMethod::Mc1 | TransduceMethod::Mcb => None,
            TransduceMethod::FpcSvm => Some(Baseline::FpcSvm(
                FpcImputeParams::default()
                    .with_folds(a.folds)
                    .with_mu_count(a.mu_count)
                    .with_max_stage_iters(a.max_stage_iters)
                    .with_accelerate(true)
                    .check()?,
            )),
            TransduceMethod::MeanSvm => Some(Baseline::MeanSvm),
            TransduceMethod::ZeroSvm => Some(Baseline::ZeroSvm),
        };
        Ok(Self {
            params,
            cv,
            svm,
            baseline,
        })
    }
}

/// The rows with unknown cells, and for each a label set completed at those cells (the known
/// cells as given), or the class of an unlabelled row.
fn predicted_labels(
    ds: &Dataset,
    side: &LabelSide,
    scores: &Mat<f64>,
) -> (Vec<usize>, Vec<Vec<usize>>) {
    let t = side.t;
    let rows: Vec<usize> = side.unknown.keys().copied().collect();
    let known_positive = |i: usize, j: usize| -> bool {
        match &ds.targets {
            Targets::Labels { matrix, .. } => matrix.get(i, j).is_some_and(|&v| v != 0.0),
            _ => false,
        }
    };
    let predicted = rows
        .iter()
        .map(|&i| {
            if side.multilabel {
                let u = &side.unknown[&i];
                (0..t)
                    .filter(|&j| {
                        if u[j] {
                            scores[(i, j)] > 0.0
                        } else {
                            known_positive(i, j)
                        }
                    })
                    .collect()
            } else {
                let best = (0..t)
                    .max_by(|&a, &b| scores[(i, a)].total_cmp(&scores[(i, b)]))
                    .unwrap_or(0);
                vec![best]
            }
        })
        .collect();
    (rows, predicted)
}

/// The predictions file: a CSV line per row with its predicted labels and every label's
/// score, or with `--json` the chosen settings, the labels and the rows' predictions and
/// scores.
fn predictions_text(
    a: &TransduceArgs,
    g: &Globals,
    side: &LabelSide,
    out: &Transduced,
    rows: &[usize],
    predicted: &[Vec<usize>],
) -> Result<String> {
    let (t, names, scores) = (side.t, &side.names, &out.scores);
    if g.json {
        let v = json!({
            "method": a.method.to_possible_value().map(|v| v.get_name().to_string()),
            "lambda": out.lambda,
            "mu": out.mu,
            "cv_label_error": out.cv_label_error,
            "svm_c": out.svm_c,
            "labels": names,
            "rows": rows,
            "predicted": predicted
                .iter()
                .map(|p| p.iter().map(|&j| names[j].clone()).collect::<Vec<_>>())
                .collect::<Vec<_>>(),
            "scores": rows
                .iter()
                .map(|&i| (0..t).map(|j| scores[(i, j)]).collect::<Vec<_>>())
                .collect::<Vec<_>>(),
        });
        return Ok(format!("{}\n", serde_json::to_string_pretty(&v)?));
    }
    let mut s = format!("row,predicted,{}\n", names.join(","));
    for (&i, p) in rows.iter().zip(predicted) {
        let labels: Vec<&str> = p.iter().map(|&j| names[j].as_str()).collect();
        let sc: Vec<String> = (0..t).map(|j| format!("{}", scores[(i, j)])).collect();
        s.push_str(&format!("{i},{},{}\n", labels.join(" "), sc.join(",")));
    }
    Ok(s)
}

/// Writes the imputed features as CSV with the feature names (`f0`, `f1`, … where unnamed),
/// streamed row by row through the output writer and committed only when complete.
fn write_imputed(path: &Path, ds: &Dataset, imputed: &Mat<f64>) -> Result<()> {
    let (n, d) = (ds.nrows(), ds.ncols());
    let mut f = gimc_data::OutputFile::create(path, &[])?;
    let header: Vec<String> = (0..d)
        .map(|j| {
            ds.feature_names
                .get(j)
                .cloned()
                .unwrap_or_else(|| format!("f{j}"))
        })
        .collect();
    let written = (|| -> std::io::Result<()> {
        writeln!(f, "{}", header.join(","))?;
        for i in 0..n {
            let row: Vec<String> = (0..d).map(|j| format!("{}", imputed[(i, j)])).collect();
            writeln!(f, "{}", row.join(","))?;
        }
        Ok(())
    })();
    written.map_err(|e| f.error(e))?;
    f.commit()?;
    Ok(())
}
