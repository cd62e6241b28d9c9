//! Shared plumbing of the subcommands: input resolution (a path in any reader format, or a
//! named set in the data directory), conversion to the training data of crate `gimc`, and
//! output helpers.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use gimc::{DynFamily, LabelData, MapRegistry};
use gimc_data::{
    ColumnRef, Dataset, Format, Manifest, MissingPolicy, Targets, guess_format, load_named,
    load_path, resolve_data_dir,
};
use gimc_linalg::{RowNorm, Standardizer};

/// Global options every subcommand sees.
#[derive(Debug, Clone)]
pub struct Globals {
    /// Data directory given on the command line.
    pub data_dir: Option<PathBuf>,
    /// JSON output.
    pub json: bool,
    /// No progress or informational messages on stderr.
    pub quiet: bool,
    /// Seed of every random draw.
    pub seed: u64,
    /// The label column of CSV inputs (name, 0-based index, or `last`).
    pub label_column: Option<String>,
    /// The map families (`--method`) and codecs (model files) in use.
    pub registry: MapRegistry,
}

/// The map family of a `--method` and whether its map is learned: `gimc-NAME` (learned) or
/// `imc-NAME` (the random draw kept) for any family `NAME` of the registry, a bare `NAME`
/// (learned), and the names the paper uses for the unlearned built-in maps: `imc-rff`
/// (= `imc-lff`), `imc-rff-phase` (= `imc-lff-phase`) and `imc-nys` (= `imc-lnys`).
pub fn map_method<'r>(method: &str, registry: &'r MapRegistry) -> Result<(&'r DynFamily, bool)> {
    let alias = match method {
        "imc-rff" | "rff" => Some(("lff", false)),
        "imc-rff-phase" | "rff-phase" => Some(("lff-phase", false)),
        "imc-nys" | "nys" => Some(("lnys", false)),
        _ => None,
    };
    let (name, learn) = alias.unwrap_or_else(|| {
        if let Some(n) = method.strip_prefix("gimc-") {
            (n, true)
        } else if let Some(n) = method.strip_prefix("imc-") {
            (n, false)
        } else {
            (method, true)
        }
    });
    match registry.family(name) {
        Ok(f) => Ok((f, learn)),
        Err(_) => {
            let names = registry.family_names();
            let learned: Vec<String> = names.iter().map(|n| format!("gimc-{n}")).collect();
            let fixed: Vec<String> = names.iter().map(|n| format!("imc-{n}")).collect();
            bail!(
                "unknown method `{method}` (choose {}, {}, or imc-rff, imc-rff-phase, imc-nys)",
                learned.join(", "),
                fixed.join(", ")
            )
        }
    }
}

impl Globals {
    /// Prints an informational line on stderr unless `--quiet`.
    pub fn info(&self, msg: &str) {
        if !self.quiet {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("{msg}");
            }
        }
    }
}

/// The memory budget of this run: `GIMC_MEMORY_LIMIT` (bytes, or with a K / M / G / T
/// suffix) when set, else the memory available now (`gimc_linalg::memory::available_bytes`),
/// else no check. Only the command line reads the variable; the library takes the figure in
/// its parameters.
pub fn memory_budget() -> Result<gimc::MemoryBudget> {
    if let Ok(v) = std::env::var("GIMC_MEMORY_LIMIT") {
        let b = gimc_linalg::memory::parse_bytes(&v).ok_or_else(|| {
            anyhow::anyhow!("GIMC_MEMORY_LIMIT={v:?}: expected bytes, e.g. 2G or 500M")
        })?;
        return Ok(gimc::MemoryBudget::Bytes(b));
    }
    Ok(match gimc_linalg::memory::available_bytes() {
        Some(b) => gimc::MemoryBudget::Bytes(b),
        None => gimc::MemoryBudget::Unchecked,
    })
}

/// The memory pre-flight of a command: prints `estimated peak memory: …` (unless --quiet)
/// and refuses, naming both figures and the option to lower (`flag`, e.g. `--m`), when the
/// estimate exceeds `budget`.
pub fn preflight(
    g: &Globals,
    estimate: &gimc::MemoryEstimate,
    budget: gimc::MemoryBudget,
    flag: &str,
) -> Result<()> {
    use gimc_linalg::memory::human_bytes;
    check_memory(estimate, budget, flag)?;
    g.info(&format!(
        "estimated peak memory: {}{}",
        human_bytes(estimate.bytes),
        budget.resolve().map_or(String::new(), |a| format!(
            " ({} available)",
            human_bytes(a)
        ))
    ));
    Ok(())
}

/// The refusal of [`preflight`] without the estimate line (commands whose stderr stays silent
/// on success): an error naming both figures and the option to lower.
pub fn check_memory(
    estimate: &gimc::MemoryEstimate,
    budget: gimc::MemoryBudget,
    flag: &str,
) -> Result<()> {
    use gimc_linalg::memory::human_bytes;
    if let Some(a) = budget.resolve()
        && estimate.bytes > a
    {
        anyhow::bail!(
            "{} needs about {}, {} available: lower {flag} (largest: {})",
            estimate.what,
            human_bytes(estimate.bytes),
            human_bytes(a),
            estimate.detail
        );
    }
    Ok(())
}

/// The data argument of `fit` / `predict` (a file or a set name), loaded under a spinner.
pub fn load_target(target: Option<&str>, part: &str, g: &Globals) -> Result<Dataset> {
    let target = target.ok_or_else(|| anyhow::anyhow!("missing the data argument"))?;
    let spinner = crate::progress::spinner(g, &format!("loading {target}"));
    let ds = load_input(target, part, g);
    spinner.finish();
    ds
}

/// Loads `target`: an existing file path (format guessed from extension and content; Mulan
/// ARFF finds its XML label file next to it), else a set name of the manifest whose part
/// `part` is read from the data directory.
pub fn load_input(target: &str, part: &str, g: &Globals) -> Result<Dataset> {
    load_input_with(target, part, g, MissingPolicy::Error, &[])
}

/// [`load_input`] with a policy for missing values in a file (`?`, empty CSV cells, and in CSV
/// files the extra `missing_tokens`): [`MissingPolicy::Mask`] records missing features and
/// unlabelled rows instead of refusing them (named sets have none).
pub fn load_input_with(
    target: &str,
    part: &str,
    g: &Globals,
    missing: MissingPolicy,
    missing_tokens: &[String],
) -> Result<Dataset> {
    let path = Path::new(target);
    if path.exists() {
        let mut format = guess_format(path)?;
        match &mut format {
            Format::Arff(o) => o.missing = missing,
            Format::Csv(o) => {
                o.missing = missing;
                o.missing_tokens = missing_tokens.to_vec();
            }
            Format::Mulan { missing: m, .. } => *m = missing,
            _ => {}
        }
        if let Some(col) = &g.label_column {
            match &mut format {
                Format::Csv(o) => {
                    o.target = Some(match col.as_str() {
                        "last" => ColumnRef::Last,
                        c => match c.parse::<usize>() {
                            Ok(i) => ColumnRef::Index(i),
                            Err(_) => ColumnRef::Name(c.to_string()),
                        },
                    });
                }
                _ => bail!(
                    "{}: --label-column applies to CSV files only",
                    path.display()
                ),
            }
        }
        let ds = load_path(path, Some(&format))?;
        if ds.nrows() == 0 {
            bail!("{}: no data rows in the file", path.display());
        }
        return Ok(ds);
    }
    let manifest = Manifest::embedded()?;
    if manifest.entry(target).is_none() {
        bail!("{target}: no such file, and not a data set name (see `gimc data list`)");
    }
    let dir = resolve_data_dir(g.data_dir.as_deref());
    let mut set = load_named(&dir, target).with_context(|| {
        format!(
            "loading `{target}` from {} (set --data-dir or GIMC_DATA)",
            dir.display()
        )
    })?;
    let names: Vec<String> = set.part_names().iter().map(|s| s.to_string()).collect();
    match set.take_part(part) {
        Some(d) => Ok(d),
        None => bail!(
            "{target}: no part `{part}` (parts: {}); choose one with --part",
            names.join(", ")
        ),
    }
}

/// Multi-label or multi-class training data from a loaded set.
pub fn label_data(ds: Dataset) -> Result<LabelData> {
    let name = ds.name.clone();
    let data = match ds.targets {
        Targets::Labels { matrix, names } => {
            let d = LabelData::multi_label(ds.features, matrix).with_context(|| name.clone())?;
            if names.is_empty() {
                d
            } else {
                d.with_label_names(names)?
            }
        }
        Targets::Classes { classes, names } => {
            let n = names
                .len()
                .max(classes.iter().map(|c| c + 1).max().unwrap_or(0));
            let d =
                LabelData::multi_class(ds.features, &classes, n).with_context(|| name.clone())?;
            if names.len() == n {
                d.with_label_names(names)?
            } else {
                d
            }
        }
        Targets::Values(_) => bail!(
            "{name}: the targets are real values; `fit` needs labels or classes (use `gimc complete` for values)"
        ),
        Targets::None => bail!(
            "{name}: no labels or classes found (CSV: name the label column with --label-column)"
        ),
    };
    Ok(data)
}

/// Clap value parser of a count that must be at least 1 (e.g. `--top-k`).
pub fn at_least_one(s: &str) -> std::result::Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1, got 0".into()),
        Ok(k) => Ok(k),
        Err(e) => Err(format!("not a whole number ({e})")),
    }
}

/// Writes `s` to the file `out` or to stdout.
pub fn write_output(out: Option<&Path>, s: &str) -> Result<()> {
    match out {
        Some(p) => std::fs::write(p, s).with_context(|| format!("cannot write {}", p.display())),
        None => {
            let mut o = std::io::stdout().lock();
            o.write_all(s.as_bytes())?;
            Ok(())
        }
    }
}

/// Root mean squared difference of two equally long value lists (0 when empty).
pub fn rmse(fitted: &[f64], truth: &[f64]) -> f64 {
    let n = truth.len().min(fitted.len());
    if n == 0 {
        return 0.0;
    }
    let ss: f64 = fitted.iter().zip(truth).map(|(f, v)| (f - v).powi(2)).sum();
    (ss / n as f64).sqrt()
}

/// Whether `gimc fit` / `gimc cluster` standardise the feature columns first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Standardize {
    /// On for dense features (stored dense, or at least half the entries non-zero), off for
    /// sparse ones.
    Auto,
    /// Always: dense features are centred and scaled to unit variance, sparse ones only scaled.
    On,
    /// Never: the maps see the raw feature scales.
    Off,
}

/// Whether `gimc fit` / `gimc cluster` normalise the rows (after any standardisation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Normalize {
    /// Rows as they are.
    None,
    /// Every row scaled to unit Euclidean norm (zero rows stay zero), as scikit-learn's
    /// `normalize` and the Extreme Classification Repository's tools do.
    L2,
}

impl Normalize {
    /// The library's row normalisation.
    pub fn row_norm(self) -> RowNorm {
        match self {
            Self::None => RowNorm::None,
            Self::L2 => RowNorm::L2,
        }
    }
}

/// Applies `--normalize` to the set's rows in place and returns the normalisation.
pub fn normalize(ds: &mut Dataset, mode: Normalize) -> RowNorm {
    let norm = mode.row_norm();
    if norm != RowNorm::None {
        ds.features = ds.features.normalize_rows(norm);
    }
    norm
}

/// Applies `--standardize` to the training set in place and returns the fitted transform
/// (`None` when off): the library's rule, [`gimc_linalg::FeatureMatrix::standardize_by`].
pub fn standardize(ds: &mut Dataset, mode: Standardize) -> Result<Option<Standardizer>> {
    let mode = match mode {
        Standardize::Auto => gimc_linalg::StandardizeMode::Auto,
        Standardize::On => gimc_linalg::StandardizeMode::On,
        Standardize::Off => gimc_linalg::StandardizeMode::Off,
    };
    let out = ds
        .features
        .standardize_by(mode)
        .with_context(|| format!("{}: standardising the features", ds.name))?;
    Ok(out.map(|(x, st)| {
        ds.features = x;
        st
    }))
}
