//! `gimc data …`: summaries of named sets and of users' files.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use gimc_data::{
    Dataset, Manifest, NamedOptions, Summary, load_named_with, load_path, resolve_data_dir,
};
use serde_json::{Value, json};

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
}

/// Runs a `gimc data` subcommand.
pub fn run(cmd: &DataCommand, data_dir: Option<&Path>, json: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match cmd {
        DataCommand::Info {
            target,
            bin_targets,
        } => info(&mut out, target, data_dir, *bin_targets, json),
        DataCommand::List => list(&mut out, json),
    }
}

fn info(
    out: &mut impl Write,
    target: &str,
    data_dir: Option<&Path>,
    bin_targets: bool,
    json: bool,
) -> Result<()> {
    let manifest = Manifest::embedded()?;
    let parts: Vec<(String, Dataset)> = if manifest.entry(target).is_some() {
        let dir = resolve_data_dir(data_dir);
        let set =
            load_named_with(&dir, target, &NamedOptions { bin_targets }).with_context(|| {
                format!(
                    "loading `{target}` from {} (set --data-dir or GIMC_DATA)",
                    dir.display()
                )
            })?;
        set.parts
    } else {
        let path = Path::new(target);
        if !path.exists() {
            let names = manifest.names().join(", ");
            bail!("`{target}` is neither a file nor a named set (known sets: {names})");
        }
        let ds = load_path(path, None).with_context(|| format!("reading {}", path.display()))?;
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
