//! Shared plumbing of the subcommands: input resolution (a path in any reader format, or a
//! named set in the data directory), conversion to the training data of crate `gimc`, and
//! output helpers.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use gimc::{LabelData, LabelModel};
use gimc_data::{
    ColumnRange, ColumnRef, DataError, Dataset, Format, LibsvmTarget, Manifest, MissingPolicy,
    Targets, describe_named_targets, describe_targets, guess_format, guess_format_with_labels,
    load_named, load_path, resolve_data_dir,
};
use gimc_linalg::{RowNorm, Standardizer};

use crate::globals::Globals;
use crate::progress;

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
        // a parameter named by a phrase (the number of feature columns) is not a flag
        let lower = if estimate.parameter.contains(' ') {
            estimate.parameter
        } else {
            flag
        };
        anyhow::bail!(
            "{} needs about {}, {} available: lower {lower} (largest: {})",
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
    let spinner = progress::spinner(g, &format!("loading {target}"));
    let ds = load_input(target, part, g);
    spinner.finish();
    ds
}

/// Loads `target`: an existing file path (format guessed from extension and content, with the
/// global input options applied, [`load_file`]), else a set name of the manifest whose part
/// `part` is read from the data directory. Says where the targets came from on stderr (unless
/// --quiet), e.g. `bibtex-train.arff: 159 labels from bibtex.xml`.
pub fn load_input(target: &str, part: &str, g: &Globals) -> Result<Dataset> {
    let missing = MissingValues {
        policy: MissingPolicy::Error,
        tokens: &[],
    };
    load_input_with(target, part, g, missing)
}

/// How a data file's missing values are read: `?`, empty CSV cells, and in CSV files the extra
/// `tokens`.
#[derive(Debug, Clone, Copy)]
pub struct MissingValues<'a> {
    /// What a missing value does: [`MissingPolicy::Mask`] records missing features and
    /// unlabelled rows instead of refusing them.
    pub policy: MissingPolicy,
    /// The extra tokens that mean "missing" in a CSV file.
    pub tokens: &'a [String],
}

/// [`load_input`] with `missing` for the missing values in a file (named sets have none).
pub fn load_input_with(
    target: &str,
    part: &str,
    g: &Globals,
    missing: MissingValues<'_>,
) -> Result<Dataset> {
    let MissingValues {
        policy: missing,
        tokens: missing_tokens,
    } = missing;
    let path = Path::new(target);
    let (ds, source) = if path.exists() {
        let (ds, source) = load_file(path, g, missing, missing_tokens)?;
        let shown = path
            .file_name()
            .map_or_else(|| target.to_string(), |n| n.to_string_lossy().into_owned());
        (ds, format!("{shown}: {source}"))
    } else {
        let ds = load_named_part(target, part, g)?;
        let source = describe_named_targets(target, part, &ds, false)?;
        let line = format!("{}: {source}", ds.name);
        (ds, line)
    };
    g.info(&source);
    Ok(ds)
}

/// The options that only a data file takes, with their flags.
pub fn file_only_flags(g: &Globals) -> Vec<&'static str> {
    [
        (g.label_column.is_some(), "--label-column"),
        (!g.label_columns.is_empty(), "--label-columns"),
        (!g.keep_columns.is_empty(), "--keep-column"),
        (g.labels_file.is_some(), "--label-file"),
        (g.multi_label, "--multi-label"),
    ]
    .into_iter()
    .filter_map(|(given, flag)| given.then_some(flag))
    .collect()
}

/// The part `part` of the named set `target`.
fn load_named_part(target: &str, part: &str, g: &Globals) -> Result<Dataset> {
    let manifest = Manifest::embedded()?;
    if manifest.entry(target).is_none() {
        bail!("{target}: no such file, and not a data set name (see `gimc data list`)");
    }
    if let Some(flag) = file_only_flags(g).first() {
        bail!(
            "{flag} applies to data files, and `{target}` is a named set (its targets are fixed)"
        );
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

/// Loads the data file `path` in its format with the global input options applied
/// ([`input_format`]), and says in words where its targets came from
/// ([`gimc_data::describe_targets`]).
pub fn load_file(
    path: &Path,
    g: &Globals,
    missing: MissingPolicy,
    missing_tokens: &[String],
) -> Result<(Dataset, String)> {
    let format = input_format(path, g, missing, missing_tokens)?;
    let ds = load_path(path, Some(&format)).map_err(|e| match e {
        DataError::ClassLikeColumn { ref column, .. } => anyhow::anyhow!(
            "{e}; name it with --label-column {column}, or keep it as features with \
             --keep-column {column}"
        ),
        other => other.into(),
    })?;
    if ds.nrows() == 0 {
        bail!("{}: no data rows in the file", path.display());
    }
    let source = describe_targets(path, &format, &ds);
    Ok((ds, source))
}

/// The format of the data file `path` (guessed, [`gimc_data::guess_format`]) with the global
/// input options applied: the missing-value policy, `--label-file` (ARFF), `--label-column`,
/// `--label-columns` and `--keep-column` (CSV; a CSV file without a target refuses a column
/// that looks like a class), and `--multi-label`.
pub fn input_format(
    path: &Path,
    g: &Globals,
    missing: MissingPolicy,
    missing_tokens: &[String],
) -> Result<Format> {
    let mut format =
        guess_format_with_labels(path, g.labels_file.as_deref()).map_err(|e| match e {
            DataError::InvalidParameter {
                name: "labels",
                reason,
            } => {
                anyhow::anyhow!("--label-file: {reason}")
            }
            other => other.into(),
        })?;
    match &mut format {
        Format::Arff(o) => o.missing = missing,
        Format::Csv(o) => {
            o.missing = missing;
            o.missing_tokens = missing_tokens.to_vec();
        }
        Format::Mulan { missing: m, .. } => *m = missing,
        _ => {}
    }
    apply_csv_flags(path, &mut format, g)?;
    if g.multi_label {
        force_multi_label(path, &mut format, g)?;
    }
    Ok(format)
}

/// `--label-column`, `--label-columns` and `--keep-column` on a CSV file (an error on others).
fn apply_csv_flags(path: &Path, format: &mut Format, g: &Globals) -> Result<()> {
    let csv_flags = [
        (g.label_column.is_some(), "--label-column"),
        (!g.label_columns.is_empty(), "--label-columns"),
        (!g.keep_columns.is_empty(), "--keep-column"),
    ];
    let Format::Csv(o) = format else {
        if let Some((_, flag)) = csv_flags.iter().find(|(given, _)| *given) {
            bail!(
                "{}: {flag} applies to CSV files only (the file is read as {})",
                path.display(),
                format.name()
            );
        }
        return Ok(());
    };
    if g.label_column.is_some() && !g.label_columns.is_empty() {
        bail!(
            "--label-column and --label-columns: give one (a class column, or the label columns \
             of a multi-label file)"
        );
    }
    o.target = g.label_column.as_deref().map(ColumnRef::parse);
    o.label_columns = g.label_columns.clone();
    o.keep = g.keep_columns.iter().map(|c| ColumnRef::parse(c)).collect();
    o.refuse_class_like = true;
    Ok(())
}

/// `--multi-label`: LIBSVM targets read as label lists; files that are multi-label by format
/// (Mulan ARFF, XMC, CSV with label columns) are left as they are, others refused.
fn force_multi_label(path: &Path, format: &mut Format, g: &Globals) -> Result<()> {
    match format {
        Format::Libsvm(o) => o.target = LibsvmTarget::MultiLabel,
        Format::Mulan { .. } | Format::Xmc => {}
        Format::Csv(_) if !g.label_columns.is_empty() => {}
        Format::Csv(_) => bail!(
            "--multi-label: name the label columns of the CSV file {} with --label-columns",
            path.display()
        ),
        other => bail!(
            "--multi-label: {} is read as {} with no Mulan label file found beside it; name it \
             with --label-file FILE.xml",
            path.display(),
            other.name()
        ),
    }
    Ok(())
}

/// Records in `model` the input columns its labels came from when they were CSV label columns
/// (`--label-columns`): they are the label names, so `gimc predict` and `gimc eval -m` take
/// them out of new rows again without the flag.
pub fn record_label_columns<M: gimc_featmap::FeatureMap>(model: &mut LabelModel<M>, g: &Globals) {
    if !g.label_columns.is_empty() {
        model.set_label_columns(model.label_names().to_vec());
    }
}

/// `g` with the label columns the model file `model` records, when no class or label column
/// is given and `input` is a CSV file that has any of them: its rows are in the fit's layout,
/// and those columns are labels rather than features (a file of new rows without them is read
/// as features only). Errors: the model file cannot be read.
pub fn with_model_label_columns(g: &Globals, model: &Path, input: &str) -> Result<Globals> {
    let mut g = g.clone();
    let path = Path::new(input);
    let csv = match path.is_file().then(|| guess_format(path)) {
        Some(Ok(Format::Csv(o))) => o,
        _ => return Ok(g),
    };
    if g.label_column.is_some() || !g.label_columns.is_empty() {
        return Ok(g);
    }
    let Some(cols) = gimc::persist::read_model_meta(model)?.label_columns else {
        return Ok(g);
    };
    let header = gimc_data::read_csv_columns(path, &csv)?;
    if cols.iter().any(|c| header.contains(c)) {
        g.label_columns = cols
            .into_iter()
            .map(|c| ColumnRange::one(ColumnRef::Name(c)))
            .collect();
    }
    Ok(g)
}

/// Multi-label or multi-class training data from a loaded set.
pub fn label_data(ds: Dataset) -> Result<LabelData> {
    let name = ds.name.clone();
    let data = match ds.targets {
        Targets::Labels { matrix, .. } if matrix.cols() == 0 => {
            bail!("{name}: no row has a label: a training file needs labelled rows")
        }
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
            "{name}: no labels or classes found (CSV: name the class column with --label-column, \
             or the label columns with --label-columns)"
        ),
    };
    Ok(data)
}

/// `labels` (multi-label) or `classes` (multi-class).
pub fn labels_word(task: gimc::Task) -> &'static str {
    if task == gimc::Task::MultiLabel {
        "labels"
    } else {
        "classes"
    }
}

/// Clap value parser of a count that must be at least 1 (e.g. `--top-k`).
pub fn at_least_one(s: &str) -> std::result::Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1, got 0".into()),
        Ok(k) => Ok(k),
        Err(e) => Err(format!("not a whole number ({e})")),
    }
}

/// Writes `s` to the file `out` or to stdout. A file is written through the one output
/// writer, [`gimc_data::output`]: a temporary file beside it, synced and renamed over it, so
/// `out` holds its old contents or all of `s`, never a cut file.
pub fn write_output(out: Option<&Path>, s: &str) -> Result<()> {
    match out {
        Some(p) => Ok(gimc_data::output::write_file(p, s.as_bytes(), &[])?),
        None => {
            let mut o = std::io::stdout().lock();
            o.write_all(s.as_bytes())?;
            Ok(())
        }
    }
}

/// The files an input argument reads: the path itself when it is an existing file, and for a
/// Mulan ARFF file its XML label file (as [`guess_format`] finds it). A set name reads from
/// the data directory and contributes none.
fn input_files(input: &Path) -> Vec<PathBuf> {
    if !input.is_file() {
        return Vec::new();
    }
    let mut files = vec![input.to_path_buf()];
    if let Ok(Format::Mulan { labels_file, .. }) = guess_format(input) {
        files.push(labels_file);
    }
    files
}

/// Refuses, before a command does any work, an output path (`None`: stdout) that is a
/// directory, the same file as one of the `inputs` (paths or set names, as given on the
/// command line) or as the `--labels` file, or the same file as another output
/// ([`gimc_data::output::check_outputs`]).
pub fn check_outputs(g: &Globals, outputs: &[Option<&Path>], inputs: &[&Path]) -> Result<()> {
    let outputs: Vec<&Path> = outputs.iter().flatten().copied().collect();
    let mut files: Vec<PathBuf> = inputs.iter().flat_map(|i| input_files(i)).collect();
    files.extend(g.labels_file.clone());
    let files: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    Ok(gimc_data::output::check_outputs(&outputs, &files)?)
}

/// What a prediction file holds, recorded in its first line (`# gimc predictions:
/// kind=labels`) so that `gimc eval` picks the metric from the file rather than guessing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PredictionKind {
    /// Top-k labels of a multi-label model, one row per line (`gimc predict`).
    Labels,
    /// The class of a multi-class model, one row per line (`gimc predict`).
    Classes,
    /// A cluster index per row (`gimc cluster`).
    Clusters,
    /// Predicted matrix entries, `i j value` per line (`gimc complete`, `gimc predict --pairs`).
    Values,
}

impl PredictionKind {
    /// The start of the first line of a prediction file.
    pub const HEADER: &str = "# gimc predictions:";

    /// The kind's name in the header.
    pub fn name(self) -> &'static str {
        match self {
            Self::Labels => "labels",
            Self::Classes => "classes",
            Self::Clusters => "clusters",
            Self::Values => "values",
        }
    }

    /// The start of the line after the header of a class prediction file that names the
    /// model's classes in the order of their indices, as a JSON array of strings: `gimc eval`
    /// compares the predictions with a truth by these names, whatever order the truth file
    /// lists its classes in (a CSV or LIBSVM test file numbers only the classes it holds).
    pub const CLASSES: &str = "# gimc classes:";

    /// The header line (with its newline) of a prediction file of this kind.
    pub fn header(self) -> String {
        format!("{} kind={}\n", Self::HEADER, self.name())
    }

    /// The header line, and for classes with `names` (the model's class names, one per
    /// class) the [`PredictionKind::CLASSES`] line.
    pub fn header_with_names(self, names: &[String]) -> String {
        let mut s = self.header();
        if self == Self::Classes && !names.is_empty() {
            let list = serde_json::to_string(names).unwrap_or_else(|_| "[]".into());
            s.push_str(&format!("{} {list}\n", Self::CLASSES));
        }
        s
    }

    /// The kind a prediction file's first line records: `None` when the line is not a header
    /// (a file written before the header, or by another program), an error when it is a
    /// header without a known kind.
    pub fn parse(line: &str) -> std::result::Result<Option<Self>, String> {
        let Some(rest) = line.trim().strip_prefix(Self::HEADER) else {
            return Ok(None);
        };
        let kind = rest
            .split_whitespace()
            .find_map(|field| field.strip_prefix("kind="))
            .ok_or_else(|| format!("`{}` names no kind=…", line.trim()))?;
        [Self::Labels, Self::Classes, Self::Clusters, Self::Values]
            .into_iter()
            .find(|k| k.name() == kind)
            .map(Some)
            .ok_or_else(|| {
                format!("unknown prediction kind `{kind}` (labels, classes, clusters or values)")
            })
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
