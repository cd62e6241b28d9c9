//! `gimc data …`: summaries of named sets and of users' files, and synthetic data.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Subcommand};
use gimc_data::synth_xmc::{XmcSynthParams, XmcSynthSummary, write_xmc_synth};
use gimc_data::{
    DataError, Dataset, Manifest, MissingPolicy, NamedOptions, Summary, describe_named_targets,
    load_named_with, resolve_data_dir,
};
use gimc_linalg::rng::seeded;
use serde_json::{Value, json};

use crate::common::{file_only_flags, load_file};
use crate::globals::Globals;

/// Subcommands of `gimc data`.
#[derive(Subcommand)]
pub enum DataCommand {
    /// Rows, features, labels or classes, non-zeros and label cardinality of a named set (as
    /// listed in datasets/manifest.toml) or of a file (ARFF, LIBSVM, XMC, CSV; .gz read too).
    Info {
        /// A set name (e.g. `bibtex`) or a path to a data file.
        target: String,
        /// Bin real-valued targets into the set's classes where the manifest defines bins
        /// (abalone, winequality).
        #[arg(long)]
        bin_targets: bool,
    },
    /// List the named sets of the manifest.
    List,
    /// Generate synthetic data sets.
    #[command(subcommand)]
    Synth(SynthCommand),
}

/// Subcommands of `gimc data synth`.
#[derive(Subcommand)]
pub enum SynthCommand {
    /// Extreme-multi-label data at the scale of the Extreme Classification Repository.
    ///
    /// Written row by row (memory independent of the row count) in the repository's text
    /// format: a header `rows features labels`, then one row per line, `l1,l2,... f:v f:v ...`
    /// with 0-based indices, readable by every command. Feature and label frequencies follow
    /// Zipf laws, rows draw features from topics, and the labels depend nonlinearly on the
    /// features through a planted latent space (the model is documented in
    /// `gimc_data::synth_xmc`). Without --preset: 10000 rows × 10000 features, 1000 labels, 50
    /// non-zeros and 5 labels per row on average; the other flags override the preset's values.
    Xmc(XmcArgs),
}

/// Arguments of `gimc data synth xmc`.
#[derive(Args)]
pub struct XmcArgs {
    /// Start from the shape and per-row means of a real set: amazoncat-13k (1186239 rows ×
    /// 203882 features, 13330 labels, 71.2 non-zeros and 5.04 labels per row), eurlex-4k (15539
    /// × 5000, 3993, 236.8, 5.31) or wiki10-31k (14146 × 101938, 30938, 673.4, 18.64).
    #[arg(long, value_name = "NAME")]
    preset: Option<String>,
    /// Rows.
    #[arg(long, value_name = "N")]
    rows: Option<usize>,
    /// Features (columns).
    #[arg(long, value_name = "N")]
    features: Option<usize>,
    /// Labels.
    #[arg(long, value_name = "N")]
    labels: Option<usize>,
    /// Mean non-zero features per row, in [1, features].
    #[arg(long, value_name = "F", allow_negative_numbers = true)]
    nnz_per_row: Option<f64>,
    /// Mean labels per row, in [1, labels].
    #[arg(long, value_name = "F", allow_negative_numbers = true)]
    labels_per_row: Option<f64>,
    /// Zipf exponent of the feature frequencies (default 1.1).
    #[arg(long, value_name = "S", allow_negative_numbers = true)]
    feature_exponent: Option<f64>,
    /// Zipf exponent of the label frequencies (default 1.1).
    #[arg(long, value_name = "S", allow_negative_numbers = true)]
    label_exponent: Option<f64>,
    /// Dimension of the planted latent space (default 32).
    #[arg(long, value_name = "R")]
    latent: Option<usize>,
    /// Seed of every random draw, the same as the global `gimc --seed S` (the same seed gives
    /// the same file, byte for byte).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Output file (written through a buffer as rows are generated).
    #[arg(long, short = 'o', value_name = "FILE")]
    output: PathBuf,
}

/// Runs a `gimc data` subcommand.
pub fn run(cmd: &DataCommand, g: &Globals) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let json = g.json;
    match cmd {
        DataCommand::Info {
            target,
            bin_targets,
        } => info(&mut out, target, g, *bin_targets),
        DataCommand::List => list(&mut out, json),
        DataCommand::Synth(SynthCommand::Xmc(a)) => synth_xmc(&mut out, a, json),
    }
}

/// `DataError::InvalidParameter` named by its command-line flag (`nnz_per_row` →
/// `--nnz-per-row`); other errors unchanged.
fn flag_error(e: DataError) -> anyhow::Error {
    match e {
        DataError::InvalidParameter { name, reason } => {
            anyhow!("--{}: {reason}", name.replace('_', "-"))
        }
        other => other.into(),
    }
}

fn synth_xmc(out: &mut impl Write, a: &XmcArgs, json: bool) -> Result<()> {
    let mut p = match &a.preset {
        Some(name) => XmcSynthParams::preset(name).map_err(flag_error)?,
        None => XmcSynthParams::default(),
    };
    p.rows = a.rows.unwrap_or(p.rows);
    p.features = a.features.unwrap_or(p.features);
    p.labels = a.labels.unwrap_or(p.labels);
    p.nnz_per_row = a.nnz_per_row.unwrap_or(p.nnz_per_row);
    p.labels_per_row = a.labels_per_row.unwrap_or(p.labels_per_row);
    p.feature_exponent = a.feature_exponent.unwrap_or(p.feature_exponent);
    p.label_exponent = a.label_exponent.unwrap_or(p.label_exponent);
    p.latent = a.latent.unwrap_or(p.latent);
    // checked before the output file is created (or truncated)
    let p = p.check().map_err(flag_error)?;
    let path = &a.output;
    // the output writer: a temporary file beside `path`, renamed over it once complete
    let mut writer = gimc_data::OutputFile::create(path, &[])?;
    let s = write_xmc_synth(&p, &mut seeded(a.seed), &mut writer).map_err(|e| match e {
        DataError::Io { source, .. } => anyhow!("cannot write {}: {source}", path.display()),
        other => flag_error(other),
    })?;
    writer.commit()?;
    if json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&xmc_json(a, &p, &s))?
        )?;
    } else {
        writeln!(
            out,
            "wrote {}: {} rows × {} features, {} labels; {} non-zeros ({:.2} per row), {} \
             labels ({:.2} per row); {:.1} MB",
            path.display(),
            s.rows,
            s.features,
            s.labels,
            s.nnz,
            s.mean_nnz_per_row,
            s.label_nnz,
            s.mean_labels_per_row,
            s.bytes as f64 / 1e6
        )?;
    }
    Ok(())
}

fn xmc_json(a: &XmcArgs, p: &XmcSynthParams, s: &XmcSynthSummary) -> Value {
    json!({
        "output": a.output.display().to_string(),
        "preset": a.preset.as_deref().map(str::to_ascii_lowercase),
        "seed": a.seed,
        "rows": s.rows,
        "features": s.features,
        "labels": s.labels,
        "nnz": s.nnz,
        "label_nnz": s.label_nnz,
        "mean_nnz_per_row": s.mean_nnz_per_row,
        "mean_labels_per_row": s.mean_labels_per_row,
        "bytes": s.bytes,
        "params": {
            "nnz_per_row": p.nnz_per_row,
            "labels_per_row": p.labels_per_row,
            "feature_exponent": p.feature_exponent,
            "label_exponent": p.label_exponent,
            "latent": p.latent,
        },
    })
}

/// `gimc data info`: a named set's parts, or a file read as every command reads it (the
/// global input options applied), with where the targets came from on stderr.
fn info(out: &mut impl Write, target: &str, g: &Globals, bin_targets: bool) -> Result<()> {
    let json = g.json;
    let manifest = Manifest::embedded()?;
    let parts: Vec<(String, Dataset)> = if manifest.entry(target).is_some() {
        if let Some(flag) = file_only_flags(g).first() {
            bail!(
                "{flag} applies to data files, and `{target}` is a named set (its targets are \
                 fixed)"
            );
        }
        let dir = resolve_data_dir(g.data_dir.as_deref());
        let set =
            load_named_with(&dir, target, &NamedOptions { bin_targets }).with_context(|| {
                format!(
                    "loading `{target}` from {} (set --data-dir or GIMC_DATA)",
                    dir.display()
                )
            })?;
        for (part, ds) in &set.parts {
            let source = describe_named_targets(target, part, ds, bin_targets)?;
            g.info(&format!("{}: {source}", ds.name));
        }
        set.parts
    } else {
        let path = Path::new(target);
        if !path.exists() {
            let names = manifest.names().join(", ");
            bail!("`{target}` is neither a file nor a named set (known sets: {names})");
        }
        let (ds, source) = load_file(path, g, MissingPolicy::Error, &[])?;
        g.info(&format!("{target}: {source}"));
        vec![("all".to_string(), ds)]
    };
    let summaries: Vec<(String, Summary)> = parts
        .iter()
        .map(|(p, d)| (p.clone(), d.summary()))
        .collect();
    if json {
        let arr: Vec<Value> = summaries.iter().map(|(p, s)| summary_json(p, s)).collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&Value::Array(arr))?)?;
    } else {
        for (_, s) in &summaries {
            write!(out, "{s}")?;
        }
        if summaries.len() > 1 {
            let rows: usize = summaries.iter().map(|(_, s)| s.rows).sum();
            let nnz: usize = summaries.iter().map(|(_, s)| s.nnz).sum();
            writeln!(
                out,
                "{target} total: {rows} rows, {nnz} stored feature entries in {} parts",
                summaries.len()
            )?;
        }
    }
    Ok(())
}

fn summary_json(part: &str, s: &Summary) -> Value {
    json!({
        "name": s.name,
        "part": part,
        "rows": s.rows,
        "features": s.features,
        "nnz": s.nnz,
        "sparse": s.sparse,
        "target_kind": s.target_kind,
        "labels_or_classes": s.n_targets,
        "label_cardinality": s.label_cardinality,
        "rows_without_label": s.rows_without_label,
        "class_counts": s.class_counts,
        "value_range": s.value_range.map(|(lo, hi)| [lo, hi]),
        "missing": s.missing,
    })
}

fn list(out: &mut impl Write, json: bool) -> Result<()> {
    let manifest = Manifest::embedded()?;
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&manifest.names())?)?;
    } else {
        for name in manifest.names() {
            writeln!(out, "{name}")?;
        }
    }
    Ok(())
}
