//! Verifying a named set's files: presence, sha256 and the shape of the parts, with a per-file
//! status that never panics on missing or altered files.

use std::fmt;
use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::arff::read_mulan_labels;
use crate::manifest::{Manifest, SetEntry};
use crate::{DataError, Dataset, Result, Targets};

use super::load::{NamedOptions, read_part, shape_problems};

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
