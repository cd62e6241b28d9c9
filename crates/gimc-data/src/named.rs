//! The data directory and named sets (DESIGN §6): resolving the directory (`--data-dir`, else
//! `$GIMC_DATA`, else `datasets/`), loading a named set's parts as the manifest describes,
//! loading a user's file with its format guessed or given, and verifying a set's files (sha256
//! and shape) with a per-file status that never panics on missing or altered files.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::arff::{ArffOptions, ArffTarget, read_arff, read_mulan_labels};
use crate::csv::{ColumnRef, CsvOptions, NominalEncoding, TargetKind, read_csv};
use crate::io::{Lines, open_text};
use crate::libsvm::{LibsvmOptions, LibsvmTarget, read_libsvm};
use crate::manifest::{Manifest, PartEntry, PartFormat, SetEntry};
use crate::xmc::read_xmc;
use crate::{DataError, Dataset, MissingPolicy, Result, Targets};

/// The data directory: `cli` if given, else `$GIMC_DATA` if set and non-empty, else `datasets`
/// (relative to the working directory).
pub fn resolve_data_dir(cli: Option<&Path>) -> PathBuf {
    if let Some(p) = cli {
        return p.to_path_buf();
    }
    match std::env::var_os("GIMC_DATA") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => PathBuf::from("datasets"),
    }
}

/// A file format with its reader options.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Format {
    /// Weka / Mulan ARFF.
    Arff(ArffOptions),
    /// Mulan ARFF whose labels are listed in an XML file.
    Mulan {
        /// The XML label file.
        labels_file: PathBuf,
        /// Missing feature values.
        missing: MissingPolicy,
    },
    /// LIBSVM / SVMlight.
    Libsvm(LibsvmOptions),
    /// Extreme Classification Repository text.
    Xmc,
    /// CSV.
    Csv(CsvOptions),
}

/// Guesses the format of `path` from its extension (`.gz` stripped) and, failing that, from its
/// first non-empty line: `.arff` or a line starting with `@` / `%` → ARFF (Mulan if an XML label
/// file sits next to it: `<stem>.xml`, or the stem without a `-train` / `-test` / `_train` /
/// `_test` suffix); three integers → XMC; `index:value` tokens → LIBSVM (multi-label when the
/// target token holds commas); `.csv` / `.tsv` or anything else → CSV with the separator sniffed
/// from the first line (`;`, tab or `,`), a header if the first line is not all numbers, and no
/// target.
pub fn guess_format(path: &Path) -> Result<Format> {
    let file_name = path
        .file_name()
        .map(|s| s.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let base = file_name
        .strip_suffix(".gz")
        .unwrap_or(&file_name)
        .to_string();
    let ext = Path::new(&base)
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_default();
    let first = first_line(path)?;
    let first_trim = first.trim();
    let looks_arff = ext == "arff" || first_trim.starts_with('@') || first_trim.starts_with('%');
    if looks_arff {
        if let Some(xml) = mulan_xml_for(path) {
            return Ok(Format::Mulan {
                labels_file: xml,
                missing: MissingPolicy::Error,
            });
        }
        return Ok(Format::Arff(ArffOptions::default()));
    }
    let tokens: Vec<&str> = first_trim.split_ascii_whitespace().collect();
    if ext != "csv" && ext != "tsv" {
        if tokens.len() == 3 && tokens.iter().all(|t| t.parse::<usize>().is_ok()) {
            return Ok(Format::Xmc);
        }
        let svm_ext = matches!(ext.as_str(), "svm" | "libsvm" | "svmlight" | "scale" | "t");
        if svm_ext || tokens.iter().skip(1).any(|t| t.contains(':')) {
            let multi = tokens
                .first()
                .is_some_and(|t| t.contains(',') && !t.contains(':'));
            let target = if multi {
                LibsvmTarget::MultiLabel
            } else {
                LibsvmTarget::Classes
            };
            return Ok(Format::Libsvm(LibsvmOptions {
                target,
                ..LibsvmOptions::default()
            }));
        }
    }
    let separator = if ext == "tsv" || first.contains('\t') {
        '\t'
    } else if first.contains(';') {
        ';'
    } else {
        ','
    };
    let header = first
        .split(separator)
        .any(|f| crate::io::parse_num(f.trim().trim_matches('"')).is_none());
    Ok(Format::Csv(CsvOptions {
        separator,
        header,
        ..CsvOptions::default()
    }))
}

fn first_line(path: &Path) -> Result<String> {
    let mut lines = Lines::new(open_text(path)?, path);
    while let Some((_, line)) = lines.next_line()? {
        if !line.trim().is_empty() {
            return Ok(line.to_string());
        }
    }
    Ok(String::new())
}

fn mulan_xml_for(path: &Path) -> Option<PathBuf> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name()?.to_string_lossy().into_owned();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    let stem = name.strip_suffix(".arff").unwrap_or(name);
    let mut candidates = vec![stem.to_string()];
    for suf in ["-train", "-test", "_train", "_test"] {
        if let Some(s) = stem.strip_suffix(suf) {
            candidates.push(s.to_string());
        }
    }
    candidates
        .into_iter()
        .map(|c| dir.join(format!("{c}.xml")))
        .find(|p| p.is_file())
}

/// Loads a user's file in the given format, or the guessed one ([`guess_format`]).
pub fn load_path(path: &Path, format: Option<&Format>) -> Result<Dataset> {
    let guessed;
    let format = match format {
        Some(f) => f,
        None => {
            guessed = guess_format(path)?;
            &guessed
        }
    };
    match format {
        Format::Arff(o) => read_arff(path, o),
        Format::Mulan {
            labels_file,
            missing,
        } => crate::arff::read_mulan(path, labels_file, *missing),
        Format::Libsvm(o) => read_libsvm(path, o),
        Format::Xmc => read_xmc(path),
        Format::Csv(o) => read_csv(path, o),
    }
}

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
fn read_part(
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
                missing_tokens: Vec::new(),
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
fn shape_problems(p: &PartEntry, ds: &Dataset, binned: bool) -> Vec<String> {
    let s = ds.summary();
    let mut out = Vec::new();
    let mut cmp = |what: &str, expected: Option<usize>, got: usize| {
        if let Some(e) = expected
            && e != got
        {
            out.push(format!("{what}: expected {e}, got {got}"));
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
            cmp(
                "labels",
                p.labels,
                if s.target_kind == "labels" {
                    s.n_targets
                } else {
                    0
                },
            );
            cmp(
                "rows without a label",
                p.rows_without_label,
                s.rows_without_label.unwrap_or(0),
            );
        }
        if p.classes.is_some() {
            cmp(
                "classes",
                p.classes,
                if s.target_kind == "classes" {
                    s.n_targets
                } else {
                    0
                },
            );
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

/// Lower-case hex sha256 of a file's bytes (as stored, not decompressed).
pub fn sha256_file(path: &Path) -> Result<String> {
    let io_err = |source| DataError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut f = std::fs::File::open(path).map_err(io_err)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf).map_err(io_err)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// The state of one file of a named set.
#[derive(Debug, Clone, PartialEq)]
pub enum FileStatus {
    /// Checksum matches, and the parts read from it have the manifest's shape.
    Ok {
        /// What was checked, e.g. `train: 4880 rows x 1836 features, 159 labels`.
        detail: String,
    },
    /// Not in the data directory.
    Missing {
        /// The data's public home page.
        source: String,
        /// Direct URL of the exact copy, if known.
        mirror: Option<String>,
    },
    /// The file differs from the one in the manifest.
    ChecksumMismatch {
        /// sha256 in the manifest.
        expected: String,
        /// sha256 of the file found.
        actual: String,
    },
    /// Checksum matches but the parsed shape does not (should not happen unless the manifest
    /// or a reader is wrong).
    ShapeMismatch {
        /// Each difference.
        problems: Vec<String>,
    },
    /// The file could not be read or parsed.
    ParseError {
        /// The error.
        message: String,
    },
    /// Checksum matches, but the shape could not be checked because a companion file (the XML
    /// label list) is missing or altered.
    NotChecked {
        /// Why.
        reason: String,
    },
}

impl FileStatus {
    /// Whether the status is [`FileStatus::Ok`].
    pub fn is_ok(&self) -> bool {
        matches!(self, Self::Ok { .. })
    }
}

impl fmt::Display for FileStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ok { detail } => write!(f, "ok ({detail})"),
            Self::Missing { source, mirror } => {
                write!(f, "missing; public source {source}")?;
                if let Some(m) = mirror {
                    write!(f, "; exact copy {m}")?;
                }
                Ok(())
            }
            Self::ChecksumMismatch { expected, actual } => write!(
                f,
                "checksum mismatch: expected sha256 {expected}, found {actual}"
            ),
            Self::ShapeMismatch { problems } => {
                write!(f, "shape mismatch: {}", problems.join("; "))
            }
            Self::ParseError { message } => write!(f, "parse error: {message}"),
            Self::NotChecked { reason } => write!(f, "checksum ok, shape not checked: {reason}"),
        }
    }
}

/// One file's verification result.
#[derive(Debug, Clone, PartialEq)]
pub struct FileReport {
    /// Path relative to the data directory.
    pub path: String,
    /// Its state.
    pub status: FileStatus,
}

/// Verification of one named set.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifyReport {
    /// The set's name.
    pub set: String,
    /// One report per manifest file, in manifest order.
    pub files: Vec<FileReport>,
}

impl VerifyReport {
    /// Whether every file is ok.
    pub fn is_ok(&self) -> bool {
        self.files.iter().all(|f| f.status.is_ok())
    }
}

impl fmt::Display for VerifyReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}: {}",
            self.set,
            if self.is_ok() { "ok" } else { "NOT OK" }
        )?;
        for r in &self.files {
            writeln!(f, "  {}: {}", r.path, r.status)?;
        }
        Ok(())
    }
}

/// Verifies every file of `entry` in `data_dir`: presence, sha256, and for data files the shape
/// of the parts read from them; XML label files are checked for their label count.
pub fn verify(data_dir: &Path, entry: &SetEntry) -> VerifyReport {
    // checksum pass
    let mut checks: Vec<(String, Result<(), FileStatus>)> = Vec::new();
    for f in &entry.files {
        let path = data_dir.join(&f.path);
        let state = if !path.is_file() {
            Err(FileStatus::Missing {
                source: entry.source.clone(),
                mirror: f.mirror.clone(),
            })
        } else {
            match sha256_file(&path) {
                Err(e) => Err(FileStatus::ParseError {
                    message: e.to_string(),
                }),
                Ok(actual) if actual != f.sha256 => Err(FileStatus::ChecksumMismatch {
                    expected: f.sha256.clone(),
                    actual,
                }),
                Ok(_) => Ok(()),
            }
        };
        checks.push((f.path.clone(), state));
    }
    let state_of = |rel: &str| {
        checks
            .iter()
            .find(|(p, _)| p == rel)
            .map(|(_, s)| s.clone())
    };
    let mut files = Vec::new();
    for (rel, state) in &checks {
        let status = match state {
            Err(s) => s.clone(),
            Ok(()) => {
                let mut details = Vec::new();
                let mut status = None;
                for p in entry.parts.iter().filter(|p| &p.file == rel) {
                    if let Some(xml) = &p.labels_file
                        && !matches!(state_of(xml), Some(Ok(())))
                    {
                        status = Some(FileStatus::NotChecked {
                            reason: format!("label file {xml} is missing or altered"),
                        });
                        break;
                    }
                    match read_part(data_dir, entry, p, &NamedOptions::default()) {
                        Err(e) => {
                            status = Some(FileStatus::ParseError {
                                message: e.to_string(),
                            });
                            break;
                        }
                        Ok(ds) => {
                            let problems = shape_problems(p, &ds, false);
                            if !problems.is_empty() {
                                status = Some(FileStatus::ShapeMismatch { problems });
                                break;
                            }
                            details.push(describe(&p.name, &ds));
                        }
                    }
                }
                if status.is_none() {
                    // label files: count the labels
                    if let Some(p) = entry
                        .parts
                        .iter()
                        .find(|p| p.labels_file.as_deref() == Some(rel.as_str()))
                    {
                        match read_mulan_labels(&data_dir.join(rel)) {
                            Err(e) => {
                                status = Some(FileStatus::ParseError {
                                    message: e.to_string(),
                                })
                            }
                            Ok(names) if Some(names.len()) != p.labels => {
                                status = Some(FileStatus::ShapeMismatch {
                                    problems: vec![format!(
                                        "labels: expected {}, got {}",
                                        p.labels.unwrap_or(0),
                                        names.len()
                                    )],
                                });
                            }
                            Ok(names) => details.push(format!("{} labels", names.len())),
                        }
                    }
                }
                status.unwrap_or_else(|| FileStatus::Ok {
                    detail: if details.is_empty() {
                        "checksum".into()
                    } else {
                        details.join("; ")
                    },
                })
            }
        };
        files.push(FileReport {
            path: rel.clone(),
            status,
        });
    }
    VerifyReport {
        set: entry.name.clone(),
        files,
    }
}

fn describe(part: &str, ds: &Dataset) -> String {
    let s = ds.summary();
    let target = match &ds.targets {
        Targets::Labels { .. } => format!(", {} labels", s.n_targets),
        Targets::Classes { .. } => format!(", {} classes", s.n_targets),
        Targets::Values(_) => ", real target".to_string(),
        Targets::None => String::new(),
    };
    format!("{part}: {} rows x {} features{target}", s.rows, s.features)
}

/// Verifies every set of the embedded manifest.
pub fn verify_all(data_dir: &Path) -> Result<Vec<VerifyReport>> {
    let m = Manifest::embedded()?;
    Ok(m.sets.iter().map(|e| verify(data_dir, e)).collect())
}
