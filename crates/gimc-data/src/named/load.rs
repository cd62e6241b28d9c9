//! Loading a named set's parts as the manifest describes them, with the shape check against the
//! manifest.

use std::path::{Path, PathBuf};

use crate::arff::{ArffOptions, ArffTarget, read_arff, read_mulan_labels};
use crate::csv::{ColumnRef, CsvOptions, NominalEncoding, TargetKind, read_csv};
use crate::libsvm::{LibsvmOptions, LibsvmTarget, read_libsvm};
use crate::manifest::{Manifest, PartEntry, PartFormat, SetEntry};
use crate::xmc::read_xmc;
use crate::{DataError, Dataset, MissingPolicy, Result, Targets};

/// Options of named-set loading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NamedOptions {
    /// Replace real-valued targets by the set's classes when the manifest defines bins
    /// (abalone and abalone_scale: rings 1–8, 9–10, 11+; winequality: ≤5, 6, ≥7).
    pub bin_targets: bool,
}

/// A named set's parts, in manifest order.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedSet {
    /// The set's name.
    pub name: String,
    /// (part name, data) pairs.
    pub parts: Vec<(String, Dataset)>,
}

impl NamedSet {
    /// The part `name` (`train`, `test`, `red`, `white`, `stratified`, `balanced`, `all`,
    /// `full`).
    pub fn part(&self, name: &str) -> Option<&Dataset> {
        self.parts.iter().find(|(n, _)| n == name).map(|(_, d)| d)
    }

    /// Removes and returns the part `name`.
    pub fn take_part(&mut self, name: &str) -> Option<Dataset> {
        let i = self.parts.iter().position(|(n, _)| n == name)?;
        Some(self.parts.remove(i).1)
    }

    /// Names of the parts.
    pub fn part_names(&self) -> Vec<&str> {
        self.parts.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// The given parts stacked vertically (e.g. segment `train` + `test` = 2,310 rows).
    pub fn concat(&self, names: &[&str]) -> Result<Dataset> {
        let parts = names
            .iter()
            .map(|n| {
                self.part(n).ok_or_else(|| DataError::UnknownPart {
                    set: self.name.clone(),
                    part: n.to_string(),
                    parts: self.part_names().iter().map(|s| s.to_string()).collect(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Dataset::vstack(format!("{}/{}", self.name, names.join("+")), &parts)
    }
}

/// Loads every part of the named set with default options.
pub fn load_named(data_dir: &Path, name: &str) -> Result<NamedSet> {
    load_named_with(data_dir, name, &NamedOptions::default())
}

/// Loads every part of the named set.
pub fn load_named_with(data_dir: &Path, name: &str, opts: &NamedOptions) -> Result<NamedSet> {
    let manifest = Manifest::embedded()?;
    let entry = manifest.require(name)?;
    let parts = entry
        .parts
        .iter()
        .map(|p| Ok((p.name.clone(), load_part(data_dir, entry, p, opts)?)))
        .collect::<Result<Vec<_>>>()?;
    Ok(NamedSet {
        name: name.to_string(),
        parts,
    })
}

/// Loads one part of the named set.
pub fn load_named_part(
    data_dir: &Path,
    name: &str,
    part: &str,
    opts: &NamedOptions,
) -> Result<Dataset> {
    let manifest = Manifest::embedded()?;
    let entry = manifest.require(name)?;
    let p = entry.part(part).ok_or_else(|| DataError::UnknownPart {
        set: name.to_string(),
        part: part.to_string(),
        parts: entry.parts.iter().map(|p| p.name.clone()).collect(),
    })?;
    load_part(data_dir, entry, p, opts)
}

/// Where the targets of `ds`, the part `part` of the named set `name` (its values `binned`
/// into the set's classes or not, [`NamedOptions::bin_targets`]), came from, in words, as
/// [`describe_targets`](super::format::describe_targets) says it for a file: e.g. `159 labels
/// from bibtex/bibtex.xml`.
pub fn describe_named_targets(
    name: &str,
    part: &str,
    ds: &Dataset,
    binned: bool,
) -> Result<String> {
    let manifest = Manifest::embedded()?;
    let entry = manifest.require(name)?;
    let Some(p) = entry.part(part) else {
        return Ok(super::format::target_count(ds));
    };
    let count = super::format::target_count(ds);
    if count.is_empty() {
        return Ok("no target: every column is a feature".to_string());
    }
    let source = match (&p.format, &ds.targets) {
        (_, Targets::Classes { .. }) if binned && entry.bins.is_some() => {
            let column = p.target.as_deref().unwrap_or("the first token of each row");
            format!("the set's bins of {column}")
        }
        (PartFormat::MulanArff, _) => p.labels_file.clone().unwrap_or_default(),
        (PartFormat::WekaArff, _) => match &p.class {
            Some(c) => format!("attribute `{c}`"),
            None => "the last attribute".to_string(),
        },
        (PartFormat::Libsvm, _) => "the first token of each row".to_string(),
        (PartFormat::Xmc, _) => "the label lists of the rows".to_string(),
        (PartFormat::Csv, _) => format!("column `{}`", p.target.as_deref().unwrap_or("?")),
    };
    Ok(format!("{count} from {source}"))
}

fn present(data_dir: &Path, entry: &SetEntry, rel: &str) -> Result<PathBuf> {
    let path = data_dir.join(rel);
    if path.is_file() {
        return Ok(path);
    }
    let origin = entry.file(rel).and_then(|f| f.mirror.clone()).map_or_else(
        || entry.source.clone(),
        |m| format!("{} (copy used: {m})", entry.source),
    );
    Err(DataError::MissingFile {
        path,
        set: entry.name.clone(),
        origin,
    })
}

fn target_kind(p: &PartEntry) -> Result<TargetKind> {
    match p.target_kind.as_deref() {
        None | Some("classes") => Ok(TargetKind::Classes),
        Some("values") => Ok(TargetKind::Values),
        Some(other) => Err(DataError::Manifest(format!(
            "part {}: unknown target_kind {other:?}",
            p.name
        ))),
    }
}

/// Reads a part as the manifest says, without the shape check.
pub(super) fn read_part(
    data_dir: &Path,
    entry: &SetEntry,
    p: &PartEntry,
    opts: &NamedOptions,
) -> Result<Dataset> {
    let path = present(data_dir, entry, &p.file)?;
    let mut ds = match p.format {
        PartFormat::MulanArff => {
            let xml = present(
                data_dir,
                entry,
                p.labels_file.as_deref().unwrap_or_default(),
            )?;
            let labels = read_mulan_labels(&xml)?;
            read_arff(
                &path,
                &ArffOptions {
                    target: ArffTarget::Labels(labels),
                    missing: MissingPolicy::Error,
                },
            )?
        }
        PartFormat::WekaArff => read_arff(
            &path,
            &ArffOptions {
                target: ArffTarget::Class(p.class.clone()),
                missing: MissingPolicy::Error,
            },
        )?,
        PartFormat::Libsvm => {
            let target = match target_kind(p)? {
                TargetKind::Classes => LibsvmTarget::Classes,
                TargetKind::Values => LibsvmTarget::Values,
            };
            read_libsvm(
                &path,
                &LibsvmOptions {
                    zero_based: p.zero_based,
                    target,
                    n_features: p.n_features,
                    n_labels: None,
                },
            )?
        }
        PartFormat::Xmc => read_xmc(&path)?,
        PartFormat::Csv => {
            let separator = match p.separator.as_deref() {
                None => ',',
                Some(s) => {
                    let mut c = s.chars();
                    match (c.next(), c.next()) {
                        (Some(ch), None) => ch,
                        _ => {
                            return Err(DataError::Manifest(format!(
                                "part {}: separator must be one character",
                                p.name
                            )));
                        }
                    }
                }
            };
            let nominal = match p.nominal.as_deref() {
                None | Some("one-hot") => NominalEncoding::OneHot,
                Some("code") => NominalEncoding::Code,
                Some(other) => {
                    return Err(DataError::Manifest(format!(
                        "part {}: unknown nominal encoding {other:?}",
                        p.name
                    )));
                }
            };
            let csv = CsvOptions {
                separator,
                header: p.header.unwrap_or(true),
                target: p.target.clone().map(ColumnRef::Name),
                target_kind: target_kind(p)?,
                drop: p.drop.iter().cloned().map(ColumnRef::Name).collect(),
                nominal,
                missing: MissingPolicy::Error,
                ..CsvOptions::default()
            };
            read_csv(&path, &csv)?
        }
    };
    if !p.scale.is_empty() {
        let cols = p
            .scale
            .iter()
            .map(|(name, [lo, hi])| {
                ds.feature_names
                    .iter()
                    .position(|f| f == name)
                    .map(|c| (c, *lo, *hi))
                    .ok_or_else(|| {
                        DataError::Manifest(format!("part {}: no column {name:?} to scale", p.name))
                    })
            })
            .collect::<Result<Vec<_>>>()?;
        ds.scale_columns(&cols)?;
    }
    if opts.bin_targets
        && let Some(b) = &entry.bins
    {
        ds.targets = ds.targets.bin(&b.edges, &b.names)?;
    }
    ds.name = format!("{}/{}", entry.name, p.name);
    Ok(ds)
}

/// Differences between a part's data and the manifest's expectations (targets compared only
/// when they are the file's own, i.e. not binned).
pub(super) fn shape_problems(p: &PartEntry, ds: &Dataset, binned: bool) -> Vec<String> {
    let s = ds.summary();
    let mut out = Vec::new();
    let mut cmp = |what: &str, expected: Option<usize>, got: usize| {
        if let Some(e) = expected
            && e != got
        {
            out.push(format!("{what}: expected {e}, got {got}"));
        }
    };
    // the summary's target count when its targets are of `kind`, else 0
    let n_targets_of = |kind: &str| {
        if s.target_kind == kind {
            s.n_targets
        } else {
            0
        }
    };
    cmp("rows", Some(p.rows), s.rows);
    cmp("features", Some(p.features), s.features);
    if let Some(nnz) = p.nnz
        && ds.features.is_sparse()
    {
        cmp("stored entries", Some(nnz), s.nnz);
    }
    if !binned {
        if p.labels.is_some() {
            cmp("labels", p.labels, n_targets_of("labels"));
            cmp(
                "rows without a label",
                p.rows_without_label,
                s.rows_without_label.unwrap_or(0),
            );
        }
        if p.classes.is_some() {
            cmp("classes", p.classes, n_targets_of("classes"));
        }
        if let Some(expected) = &p.class_counts
            && s.class_counts.as_ref() != Some(expected)
        {
            out.push(format!(
                "class counts: expected {expected:?}, got {:?}",
                s.class_counts.unwrap_or_default()
            ));
        }
    }
    out
}

fn load_part(
    data_dir: &Path,
    entry: &SetEntry,
    p: &PartEntry,
    opts: &NamedOptions,
) -> Result<Dataset> {
    let ds = read_part(data_dir, entry, p, opts)?;
    let binned = opts.bin_targets && entry.bins.is_some();
    let problems = shape_problems(p, &ds, binned);
    if !problems.is_empty() {
        return Err(DataError::ShapeMismatch {
            path: data_dir.join(&p.file),
            problems,
        });
    }
    Ok(ds)
}
