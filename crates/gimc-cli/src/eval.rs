//! `gimc eval`: metrics of a prediction file against the truth: P@1/3/5 for top-k label lists,
//! accuracy for classes, RMSE for values, clustering accuracy and pairwise error for cluster
//! assignments. The first line of a file gimc wrote records what it holds (`# gimc predictions:
//! kind=labels|classes|clusters|values`): the metric follows it, and a kind that does not fit
//! the truth's targets (or `--clusters`) is refused. A file without that line (written by an
//! older gimc or another program) is read by the targets alone, cluster assignments only with
//! `--clusters`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use gimc_data::Targets;
use serde_json::json;

use crate::common::{PredictionKind, load_input, write_output};
use crate::globals::Globals;

/// Arguments of `gimc eval`: `gimc eval PREDICTIONS TRUTH`, or the same files named with
/// `--pred` and `--truth` (a positional file then fills whichever of the two is not named).
#[derive(Args, Debug)]
pub struct EvalArgs {
    /// PREDICTIONS TRUTH: the prediction file (`gimc predict` / `gimc cluster` output: text,
    /// `j:score` tokens, or CSV) and the truth (a data file or a set name, its `test` part
    /// unless --part).
    #[arg(value_name = "FILE", num_args = 0..=2)]
    pub files: Vec<String>,
    /// The prediction file (instead of the first positional argument).
    #[arg(long, value_name = "FILE")]
    pub pred: Option<PathBuf>,
    /// The truth: a data file or a set name (instead of the second positional argument).
    #[arg(long, value_name = "DATA")]
    pub truth: Option<String>,
    /// Part of a named set.
    #[arg(long, default_value = "test")]
    pub part: String,
    /// The predictions are cluster assignments (clustering accuracy, pairwise error); implied
    /// by the first line of a `gimc cluster` output.
    #[arg(long)]
    pub clusters: bool,
    /// The ks of P@k (multi-label).
    #[arg(long, default_value = "1,3,5", value_delimiter = ',')]
    pub k: Vec<usize>,
    /// The predictions are a `gimc transduce` output (CSV): the transductive label error (%)
    /// over the predicted rows' missing label cells (every label of a row without --input;
    /// the class error for classes).
    #[arg(long)]
    pub transduction: bool,
    /// With --transduction: the file given to `gimc transduce` (its `?` / empty cells are the
    /// missing ones): the label error is then counted over its missing label cells only ...
    #[arg(long, value_name = "FILE")]
    pub input: Option<String>,
    /// ... and its `--impute-out` file: the relative imputation error Σ(x − x̂)² / Σx² over
    /// the missing cells, against the truth's features.
    #[arg(long, value_name = "FILE", requires = "input")]
    pub imputed: Option<PathBuf>,
    /// The model that made the predictions: a CSV truth's label columns are the ones it
    /// records (`gimc fit --label-columns`), as `gimc predict` finds them.
    #[arg(long, short = 'm', value_name = "FILE")]
    pub model: Option<PathBuf>,
    /// With --input: the extra CSV tokens that mark a missing cell (as `gimc transduce
    /// --missing`).
    #[arg(long, value_name = "TOKEN", allow_hyphen_values = true)]
    pub missing: Vec<String>,
}

/// `gimc eval --transduction`: label error of a `gimc transduce` output against the complete
/// truth, and (with --input and --imputed) the relative imputation error of its missing cells.
fn run_transduction(a: &EvalArgs, g: &Globals, pred_path: &Path, truth_name: &str) -> Result<()> {
    let truth = load_input(truth_name, &a.part, g)?;
    let text = std::fs::read_to_string(pred_path)
        .with_context(|| format!("cannot read {}", pred_path.display()))?;
    let mut lines = text.lines().enumerate();
    let Some((_, header)) = lines.next() else {
        bail!("{}: empty file", pred_path.display());
    };
    let names: Vec<&str> = header.split(',').skip(2).collect();
    if !header.starts_with("row,predicted,") || names.is_empty() {
        bail!(
            "{}:1: not a `gimc transduce` output (expected the header `row,predicted,<labels>`)",
            pred_path.display()
        );
    }
    let masked = match &a.input {
        Some(input) => Some(crate::common::load_input_with(
            input,
            &a.part,
            g,
            crate::common::MissingValues {
                policy: gimc_data::MissingPolicy::Mask,
                tokens: &a.missing,
            },
        )?),
        None => None,
    };
    // the missing label cells of the input (every cell of its unlabelled rows)
    let unknown_cell = |r: usize, j: usize| -> bool {
        masked.as_ref().is_none_or(|m| {
            m.unlabeled.binary_search(&r).is_ok() || m.missing_labels.binary_search(&(r, j)).is_ok()
        })
    };
    let (mut wrong, mut total) = (0usize, 0usize);
    for (no, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        let loc = || format!("{}:{}", pred_path.display(), no + 1);
        let r: usize = f
            .first()
            .and_then(|v| v.parse().ok())
            .with_context(|| format!("{}: expected a row index", loc()))?;
        if r >= truth.nrows() {
            bail!(
                "{}: row {r} is outside the truth's {} rows",
                loc(),
                truth.nrows()
            );
        }
        let predicted: Vec<&str> = f.get(1).map_or(Vec::new(), |p| p.split(' ').collect());
        match &truth.targets {
            Targets::Labels { matrix, names: tn } => {
                let row = matrix.outer_view(r).with_context(loc)?;
                for (j, name) in names.iter().enumerate() {
                    if !unknown_cell(r, j) {
                        continue;
                    }
                    let truth_pos = row.get(j).is_some_and(|&v| v != 0.0);
                    let name_here = tn.get(j).map_or(*name, String::as_str);
                    wrong += usize::from(predicted.contains(&name_here) != truth_pos);
                    total += 1;
                }
            }
            Targets::Classes { classes, names: tn } => {
                let want = tn.get(classes[r]).map_or("", String::as_str);
                wrong += usize::from(predicted.first().copied() != Some(want));
                total += 1;
            }
            _ => bail!("{}: the truth has no labels or classes", truth.name),
        }
    }
    if total == 0 {
        bail!(
            "{}: no predicted rows (with --input: none with a missing label cell)",
            pred_path.display()
        );
    }
    let mut metrics = vec![(
        "label_error".to_string(),
        100.0 * wrong as f64 / total as f64,
    )];
    if let (Some(input), Some(masked), Some(imputed)) = (&a.input, &masked, &a.imputed) {
        let (n, d) = (truth.nrows(), truth.ncols());
        if (masked.nrows(), masked.ncols()) != (n, d) {
            bail!(
                "{input}: {} × {} but the truth is {n} × {d}",
                masked.nrows(),
                masked.ncols()
            );
        }
        // the `--impute-out` CSV: a header and only feature columns
        let est = gimc_data::read_csv(
            imputed,
            &gimc_data::CsvOptions {
                target: None,
                ..gimc_data::CsvOptions::default()
            },
        )?;
        if (est.nrows(), est.ncols()) != (n, d) {
            bail!(
                "{}: {} × {} but the truth is {n} × {d}",
                imputed.display(),
                est.nrows(),
                est.ncols()
            );
        }
        let mut observed = vec![true; n * d];
        for &(i, j) in &masked.missing {
            observed[i * d + j] = false;
        }
        let (t, e) = (truth.features.to_dense(), est.features.to_dense());
        let flat = |m: &gimc_linalg::faer::Mat<f64>| -> Vec<f64> {
            (0..n)
                .flat_map(|i| (0..d).map(move |j| m[(i, j)]))
                .collect()
        };
        metrics.push((
            "relative_imputation_error".into(),
            gimc_metrics::relative_imputation_error(&flat(&t), &flat(&e), &observed)?,
        ));
    }
    let s = if g.json {
        let m: serde_json::Map<String, serde_json::Value> =
            metrics.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        format!("{}\n", serde_json::to_string_pretty(&m)?)
    } else {
        metrics
            .iter()
            .map(|(k, v)| format!("{k}: {v:.4}\n"))
            .collect()
    };
    write_output(None, &s)
}

/// Reads a prediction file into the kind its first line records (if it has that line) and one
/// list of label indices (or values) per row.
fn read_predictions(path: &Path) -> Result<Predictions> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut lines = text.lines().enumerate().peekable();
    let kind = match lines.peek() {
        Some((_, first)) => PredictionKind::parse(first)
            .map_err(|e| anyhow::anyhow!("{}:1: {e}", path.display()))?,
        None => None,
    };
    let mut head = 0;
    if kind.is_some() {
        lines.next();
        head += 1;
    }
    let mut class_names = None;
    if let Some(list) = lines
        .peek()
        .and_then(|(_, l)| l.trim().strip_prefix(PredictionKind::CLASSES))
    {
        let names: Vec<String> = serde_json::from_str(list.trim()).map_err(|e| {
            anyhow::anyhow!(
                "{}:{}: the class names are not a JSON list of strings: {e}",
                path.display(),
                head + 1
            )
        })?;
        class_names = Some(names);
        lines.next();
        head += 1;
    }
    let csv = lines
        .peek()
        .is_some_and(|(_, l)| l.trim_start().starts_with("row,rank,label"));
    let mut rows: Vec<Vec<f64>> = Vec::new();
    if csv {
        lines.next();
        for (no, line) in lines {
            if line.trim().is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split(',').collect();
            let (Some(r), Some(l)) = (f.first(), f.get(2)) else {
                bail!(
                    "{}:{}: expected row,rank,label,score",
                    path.display(),
                    no + 1
                );
            };
            let r: usize = r.trim().parse().map_err(|_| {
                anyhow::anyhow!("{}:{}: bad row index `{r}`", path.display(), no + 1)
            })?;
            let l: f64 = l
                .trim()
                .parse()
                .map_err(|_| anyhow::anyhow!("{}:{}: bad label `{l}`", path.display(), no + 1))?;
            if r >= rows.len() {
                rows.resize(r + 1, Vec::new());
            }
            rows[r].push(l);
        }
    } else {
        for (no, line) in lines {
            let mut row = Vec::new();
            for tok in line.split([' ', '\t', ',']).filter(|t| !t.is_empty()) {
                let head = tok.split(':').next().unwrap_or(tok);
                let v: f64 = head.parse().map_err(|_| {
                    anyhow::anyhow!("{}:{}: `{tok}` is not a number", path.display(), no + 1)
                })?;
                if !v.is_finite() {
                    bail!("{}:{}: `{tok}` is not finite", path.display(), no + 1);
                }
                row.push(v);
            }
            rows.push(row);
        }
        while rows.last().is_some_and(|r| r.is_empty()) {
            rows.pop();
        }
    }
    if rows.is_empty() {
        bail!("{}: no predictions in the file", path.display());
    }
    Ok(Predictions {
        kind,
        class_names,
        head,
        rows,
    })
}

/// P@k for each of `ks` of the top-k label rows `pred` (read from the prediction file `p`,
/// whose first `skip` lines are its header) against the truth's label `matrix`. Labels known
/// by number (`numbered`: LIBSVM, XMC) run up to the largest one the file holds, so a predicted
/// label above it is one no row of the truth has, a miss; named labels must be the truth's.
fn label_metrics(
    pred: &[Vec<f64>],
    (p, skip): (&Path, usize),
    (matrix, numbered): (&gimc_linalg::sprs::CsMat<f64>, bool),
    ks: &[usize],
    g: &Globals,
) -> Result<Vec<(String, f64)>> {
    let l = if numbered { usize::MAX } else { matrix.cols() };
    let mut topk = Vec::with_capacity(pred.len());
    for (i, r) in pred.iter().enumerate() {
        let mut row = Vec::with_capacity(r.len());
        for &v in r {
            let j = as_index(v, p, i + skip)?;
            if j >= l {
                bail!(
                    "{}:{}: label {j} is not below the {l} labels of the truth",
                    p.display(),
                    i + 1 + skip
                );
            }
            if row.contains(&j) {
                bail!("{}:{}: label {j} repeated", p.display(), i + 1 + skip);
            }
            row.push(j);
        }
        topk.push(row);
    }
    // the truth as wide as the largest predicted label (numbered labels only)
    let widest = topk.iter().flatten().map(|&j| j + 1).max().unwrap_or(0);
    let widened = if widest > matrix.cols() {
        let (ptr, idx, val) = matrix.clone().into_raw_storage();
        let shape = (matrix.rows(), widest);
        Some(
            gimc_linalg::sprs::CsMat::try_new(shape, ptr, idx, val)
                .map_err(|(.., e)| anyhow::anyhow!("widening the truth's labels: {e}"))?,
        )
    } else {
        None
    };
    let matrix = widened.as_ref().unwrap_or(matrix);
    let width = topk.iter().map(Vec::len).max().unwrap_or(0);
    let mut metrics = Vec::with_capacity(ks.len());
    for &k in ks {
        if k == 0 {
            bail!("--k: k must be at least 1");
        }
        if k > width {
            g.info(&format!(
                "P@{k}: the predictions list at most {width} labels per row; missing ranks count as misses"
            ));
        }
        metrics.push((
            format!("P@{k}"),
            gimc_metrics::precision_at_k_from_topk(&topk, matrix, k)?,
        ));
    }
    Ok(metrics)
}

/// A prediction file as [`read_predictions`] reads it.
struct Predictions {
    /// The kind its header records (`None`: no header).
    kind: Option<PredictionKind>,
    /// The model's class names in index order ([`PredictionKind::CLASSES`]), if recorded.
    class_names: Option<Vec<String>>,
    /// The lines before the first row's (header and class names).
    head: usize,
    /// The numbers of each row's line (label or class indices, or values).
    rows: Vec<Vec<f64>>,
}

/// The truth's `classes` (indices into its `names`) as indices into the model's `model_names`,
/// so that they compare with predicted indices; a class the model does not know becomes an
/// index no prediction holds. Returns them and the number of rows of unknown classes.
fn classes_by_name(
    classes: &[usize],
    names: &[String],
    model_names: &[String],
) -> (Vec<usize>, usize) {
    let to_model: Vec<usize> = names
        .iter()
        .map(|n| {
            model_names
                .iter()
                .position(|m| m == n)
                .unwrap_or(usize::MAX)
        })
        .collect();
    let aligned: Vec<usize> = classes
        .iter()
        .map(|&c| to_model.get(c).copied().unwrap_or(usize::MAX))
        .collect();
    let unknown = aligned.iter().filter(|&&c| c == usize::MAX).count();
    (aligned, unknown)
}

/// What predictions of `kind` are, in a message.
fn kind_text(kind: PredictionKind) -> &'static str {
    match kind {
        PredictionKind::Labels => "the top labels of a multi-label model",
        PredictionKind::Classes => "the classes of a multi-class model",
        PredictionKind::Clusters => "cluster assignments",
        PredictionKind::Values => "predicted matrix entries",
    }
}

/// Refuses predictions whose recorded kind does not fit `--clusters` or the truth's targets:
/// labels need multi-label truth, classes and clusters multi-class truth, and matrix entries
/// are not compared row by row with a data set.
fn check_kind(
    kind: Option<PredictionKind>,
    clusters_flag: bool,
    path: &Path,
    truth: &gimc_data::Dataset,
) -> Result<()> {
    let Some(kind) = kind else {
        return Ok(());
    };
    let recorded = format!("its first line records kind={}", kind.name());
    if clusters_flag && kind != PredictionKind::Clusters {
        bail!(
            "--clusters: {} holds {} ({recorded}), not cluster assignments",
            path.display(),
            kind_text(kind)
        );
    }
    if kind == PredictionKind::Values {
        bail!(
            "{} holds {} (`i j value` lines; {recorded}), which are not one prediction per row \
             of a data set: compare them with the held-out entries (gimc complete reports the \
             held-out RMSE it chose by)",
            path.display(),
            kind_text(kind)
        );
    }
    let truth_has = match &truth.targets {
        Targets::Labels { .. } => "labels (multi-label)",
        Targets::Classes { .. } => "classes (multi-class)",
        Targets::Values(_) => "real values",
        // the metric's own error names the missing targets
        Targets::None => return Ok(()),
    };
    let fits = matches!(
        (kind, &truth.targets),
        (PredictionKind::Labels, Targets::Labels { .. })
            | (
                PredictionKind::Classes | PredictionKind::Clusters,
                Targets::Classes { .. }
            )
    );
    if !fits {
        bail!(
            "{} holds {} ({recorded}), but the truth {} has {truth_has}: evaluate them against \
             a truth of the same task",
            path.display(),
            kind_text(kind),
            truth.name
        );
    }
    Ok(())
}

fn as_index(v: f64, path: &Path, row: usize) -> Result<usize> {
    if v >= 0.0 && v.fract() == 0.0 && v < usize::MAX as f64 {
        Ok(v as usize)
    } else {
        bail!(
            "{}:{}: `{v}` is not a label / class index",
            path.display(),
            row + 1
        )
    }
}

/// The prediction file and the truth from `--pred`, `--truth` and the positional files.
fn resolve_files(a: &EvalArgs) -> Result<(PathBuf, String)> {
    let mut rest = a.files.iter();
    let pred = match &a.pred {
        Some(p) => p.clone(),
        None => PathBuf::from(rest.next().ok_or_else(|| {
            anyhow::anyhow!("missing the prediction file (PREDICTIONS TRUTH, or --pred FILE)")
        })?),
    };
    let truth = match &a.truth {
        Some(t) => t.clone(),
        None => rest
            .next()
            .ok_or_else(|| {
                anyhow::anyhow!("missing the truth (PREDICTIONS TRUTH, or --truth DATA)")
            })?
            .clone(),
    };
    if let Some(extra) = rest.next() {
        bail!("unexpected argument `{extra}`: the prediction file and the truth are already given");
    }
    Ok((pred, truth))
}

/// Runs `gimc eval`.
pub fn run(a: &EvalArgs, g: &Globals) -> Result<()> {
    let (predictions, truth_name) = resolve_files(a)?;
    let g = &match &a.model {
        Some(m) => crate::common::with_model_label_columns(g, m, &truth_name)?,
        None => g.clone(),
    };
    if a.transduction {
        return run_transduction(a, g, &predictions, &truth_name);
    }
    let Predictions {
        kind,
        class_names,
        head: skip,
        rows: pred,
    } = read_predictions(&predictions)?;
    let truth = load_input(&truth_name, &a.part, g)?;
    check_kind(kind, a.clusters, &predictions, &truth)?;
    let clusters = a.clusters || kind == Some(PredictionKind::Clusters);
    // the file's line of row i is i + 1 + skip: after the kind and class-name lines, if any
    let n = truth.nrows();
    if pred.len() != n {
        bail!(
            "{}: {} prediction rows, but the truth {} has {n} rows",
            predictions.display(),
            pred.len(),
            truth.name
        );
    }
    let p = &predictions;
    let firsts = || -> Result<Vec<usize>> {
        pred.iter()
            .enumerate()
            .map(|(i, r)| match r.first() {
                Some(&v) => as_index(v, p, i + skip),
                None => bail!("{}:{}: empty prediction line", p.display(), i + 1 + skip),
            })
            .collect()
    };
    let mut metrics: Vec<(String, f64)> = Vec::new();
    match &truth.targets {
        Targets::Classes { classes, .. } if clusters => {
            let c = firsts()?;
            metrics.push((
                "clustering_accuracy".into(),
                gimc_metrics::clustering_accuracy(&c, classes)?,
            ));
            metrics.push((
                "pairwise_error".into(),
                gimc_metrics::pairwise_clustering_error(&c, classes)?,
            ));
        }
        Targets::Classes { classes, names } => {
            let c = firsts()?;
            let truth_classes = match &class_names {
                // the predictions index the model's classes: compare by name
                Some(model_names) if !names.is_empty() => {
                    let (aligned, unknown) = classes_by_name(classes, names, model_names);
                    if unknown > 0 {
                        g.info(&format!(
                            "{unknown} rows of {} hold a class the model does not know; they count as misses",
                            truth.name
                        ));
                    }
                    aligned
                }
                _ => classes.clone(),
            };
            metrics.push((
                "accuracy".into(),
                gimc_metrics::accuracy(&c, &truth_classes)?,
            ));
        }
        Targets::Labels { matrix, names } => {
            let labels = (matrix, names.is_empty());
            metrics.extend(label_metrics(&pred, (p, skip), labels, &a.k, g)?);
        }
        Targets::Values(y) => {
            let mut se = 0.0;
            for (i, r) in pred.iter().enumerate() {
                let Some(&v) = r.first() else {
                    bail!("{}:{}: empty prediction line", p.display(), i + 1 + skip);
                };
                se += (v - y[i]).powi(2);
            }
            metrics.push(("rmse".into(), (se / n as f64).sqrt()));
        }
        Targets::None => bail!(
            "{}: the truth has no labels, classes or values (CSV: name its class column with \
             --label-column, or its label columns with --label-columns or -m MODEL)",
            truth.name
        ),
    }
    let s = if g.json {
        let obj: serde_json::Map<String, serde_json::Value> =
            metrics.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        format!(
            "{}\n",
            serde_json::to_string_pretty(&json!({"rows": n, "metrics": obj}))?
        )
    } else {
        let mut s = format!("{n} rows of {}\n", truth.name);
        for (k, v) in &metrics {
            if k.starts_with("P@") || k.contains("accuracy") || k.contains("error") {
                s.push_str(&format!("{k}: {:.2} %\n", 100.0 * v));
            } else {
                s.push_str(&format!("{k}: {v:.4}\n"));
            }
        }
        s
    };
    write_output(None, &s)
}
