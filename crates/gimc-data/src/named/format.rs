//! A user's data file: its format guessed from the extension and the first line, or given, and
//! loading it ([`load_path`]).

use std::path::{Path, PathBuf};

use crate::arff::{ArffOptions, read_arff};
use crate::csv::{CsvOptions, read_csv};
use crate::io::{Lines, open_text};
use crate::libsvm::{LibsvmOptions, LibsvmTarget, read_libsvm};
use crate::xmc::read_xmc;
use crate::{Dataset, MissingPolicy, Result};

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
