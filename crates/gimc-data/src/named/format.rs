//! A user's data file: its format guessed from the extension and the first line, or given, its
//! Mulan label file found, loading it ([`load_path`]), and where its targets came from in words
//! ([`describe_targets`]).

use std::path::{Path, PathBuf};

use crate::arff::{ArffHeader, ArffOptions, ArffTarget, parse_mulan_labels, read_arff};
use crate::csv::{ColumnRef, CsvOptions, read_csv};
use crate::error::param_err;
use crate::io::{Lines, open_text};
use crate::libsvm::{LibsvmOptions, LibsvmTarget, read_libsvm};
use crate::xmc::read_xmc;
use crate::{Dataset, MissingPolicy, Result, Targets};

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

impl Format {
    /// A short name of the format: `ARFF`, `Mulan ARFF`, `LIBSVM`, `XMC` or `CSV`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Arff(_) => "ARFF",
            Self::Mulan { .. } => "Mulan ARFF",
            Self::Libsvm(_) => "LIBSVM",
            Self::Xmc => "XMC",
            Self::Csv(_) => "CSV",
        }
    }
}

/// Guesses the format of `path` from its extension (`.gz` stripped) and, failing that, from its
/// first non-empty line (a UTF-8 byte-order mark skipped): `.arff` or a line starting with `@` /
/// `%` → ARFF, Mulan when a label file is found ([`find_mulan_labels`]); three integers → XMC;
/// `index:value` tokens → LIBSVM with the task decided from every row
/// ([`LibsvmTarget::Auto`]); `.csv` / `.tsv` or anything else → CSV with the separator sniffed
/// from the first line (`;`, tab or `,`), a header if the first line is not all numbers, and no
/// target.
pub fn guess_format(path: &Path) -> Result<Format> {
    guess_format_with_labels(path, None)
}

/// [`guess_format`] with the Mulan label file given: an ARFF file is read with `labels` (no
/// other is looked for); a file of another format is an error
/// ([`DataError::InvalidParameter`](crate::DataError::InvalidParameter) `labels`).
pub fn guess_format_with_labels(path: &Path, labels: Option<&Path>) -> Result<Format> {
    match (sniff_format(path)?, labels) {
        (Format::Arff(o), Some(xml)) => Ok(Format::Mulan {
            labels_file: xml.to_path_buf(),
            missing: o.missing,
        }),
        (other, Some(_)) => Err(param_err(
            "labels",
            format!(
                "{} is read as {}: a Mulan label file applies to ARFF files only",
                path.display(),
                other.name()
            ),
        )),
        (Format::Arff(o), None) => Ok(match find_mulan_labels(path)? {
            Some(xml) => Format::Mulan {
                labels_file: xml,
                missing: o.missing,
            },
            None => Format::Arff(o),
        }),
        (other, None) => Ok(other),
    }
}

/// The format from the name and first line alone (ARFF never Mulan).
fn sniff_format(path: &Path) -> Result<Format> {
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
    if ext == "arff" || first_trim.starts_with('@') || first_trim.starts_with('%') {
        return Ok(Format::Arff(ArffOptions::default()));
    }
    let tokens: Vec<&str> = first_trim.split_ascii_whitespace().collect();
    if ext != "csv" && ext != "tsv" {
        if tokens.len() == 3 && tokens.iter().all(|t| t.parse::<usize>().is_ok()) {
            return Ok(Format::Xmc);
        }
        let svm_ext = matches!(ext.as_str(), "svm" | "libsvm" | "svmlight" | "scale" | "t");
        if svm_ext || tokens.iter().skip(1).any(|t| t.contains(':')) {
            return Ok(Format::Libsvm(LibsvmOptions {
                target: LibsvmTarget::Auto,
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

/// The suffixes Mulan's file names add to a set's name (`bibtex-train-sparse.arff` is part of
/// `bibtex`, labelled by `bibtex.xml`).
const PART_SUFFIXES: [&str; 6] = ["-train", "-test", "_train", "_test", "-sparse", "_sparse"];

/// The Mulan label file of the ARFF file `path`, if one is found in its folder: `<stem>.xml`,
/// or the stem without Mulan's part suffixes (`-train`, `-test`, `-sparse`, and with `_`),
/// removed one at a time from the end; failing that, the one `.xml` file of the folder whose
/// label names are all attributes of `path`. Errors: a Mulan label file of the folder that does
/// not parse (it might be this file's), and several label files that fit.
pub fn find_mulan_labels(path: &Path) -> Result<Option<PathBuf>> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return Ok(None);
    };
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    let mut stem = name.strip_suffix(".arff").unwrap_or(name);
    let mut candidates = vec![stem.to_string()];
    while let Some(shorter) = PART_SUFFIXES.iter().find_map(|s| stem.strip_suffix(s)) {
        candidates.push(shorter.to_string());
        stem = shorter;
    }
    if let Some(xml) = candidates
        .iter()
        .map(|c| dir.join(format!("{c}.xml")))
        .find(|p| p.is_file())
    {
        return Ok(Some(xml));
    }
    fitting_label_file(path, dir)
}

/// The one Mulan label file of `dir` whose labels are all attributes of the ARFF file `path`.
fn fitting_label_file(path: &Path, dir: &Path) -> Result<Option<PathBuf>> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(None);
    };
    let mut xmls: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e.eq_ignore_ascii_case("xml")))
        .collect();
    xmls.sort();
    let mut header = None;
    let mut fitting = Vec::new();
    for xml in xmls {
        let Ok(text) = std::fs::read(&xml) else {
            continue;
        };
        // other XML documents are not label files; a broken label file is an error
        if !String::from_utf8_lossy(&text).contains("<labels") {
            continue;
        }
        let labels = parse_mulan_labels(text.as_slice(), &xml)?;
        if header.is_none() {
            header = Some(ArffHeader::read(path)?);
        }
        if header
            .as_ref()
            .is_some_and(|h| labels.iter().all(|l| h.has(l)))
        {
            fitting.push(xml);
        }
    }
    match fitting.len() {
        0 | 1 => Ok(fitting.pop()),
        _ => {
            let names: Vec<String> = fitting.iter().map(|p| file_name(p)).collect();
            Err(param_err(
                "labels",
                format!(
                    "several Mulan label files beside {} list only its attributes ({}): name one",
                    path.display(),
                    names.join(", ")
                ),
            ))
        }
    }
}

fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// The count of a data set's targets: `159 labels`, `7 classes`, `real values in [1, 29]`.
pub(super) fn target_count(ds: &Dataset) -> String {
    match &ds.targets {
        Targets::Labels { matrix, .. } => plural(matrix.cols(), "label"),
        Targets::Classes { names, .. } => plural(names.len(), "class"),
        Targets::Values(v) => {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            format!("real values in [{lo}, {hi}]")
        }
        Targets::None => String::new(),
    }
}

fn plural(n: usize, what: &str) -> String {
    match (n, what) {
        (1, _) => format!("1 {what}"),
        (_, "class") => format!("{n} classes"),
        _ => format!("{n} {what}s"),
    }
}

/// `a, b, c`, or the first five and the count.
fn name_list(names: &[String]) -> String {
    if names.len() <= 6 {
        return names.join(", ");
    }
    format!("{}, … ({} columns)", names[..5].join(", "), names.len())
}

/// Where the targets of `ds`, read from `path` in `format`, came from, in words: e.g.
/// `159 labels from bibtex.xml`, `7 classes from the last attribute `class``, `3 classes from
/// column `species``, `2 classes from the first token of each row`, or `no target: every
/// column is a feature`.
pub fn describe_targets(path: &Path, format: &Format, ds: &Dataset) -> String {
    let count = target_count(ds);
    let source = match (format, &ds.targets) {
        (_, Targets::None) => return no_target(path, format),
        (Format::Mulan { labels_file, .. }, _) => {
            let beside = labels_file.parent() == path.parent();
            if beside {
                file_name(labels_file)
            } else {
                labels_file.display().to_string()
            }
        }
        (Format::Arff(o), _) => match &o.target {
            ArffTarget::Labels(_) => "the given label list".to_string(),
            ArffTarget::Class(Some(name)) => format!("attribute `{name}`"),
            _ => last_attribute(path),
        },
        (Format::Libsvm(_), Targets::Labels { .. }) => {
            "the comma-separated label lists of the rows".to_string()
        }
        (Format::Libsvm(_), _) => "the first token of each row".to_string(),
        (Format::Xmc, _) => "the label lists of the rows".to_string(),
        (Format::Csv(_), Targets::Labels { names, .. }) => format!("columns {}", name_list(names)),
        (Format::Csv(o), _) => format!("column `{}`", csv_target_name(path, o)),
    };
    format!("{count} from {source}")
}

/// `the last attribute `NAME``, and when the attributes before it are 0/1 too (as Mulan's
/// labels are), that no Mulan label file was found.
fn last_attribute(path: &Path) -> String {
    let Ok(header) = ArffHeader::read(path) else {
        return "the last attribute".to_string();
    };
    let name = header.last().map_or("", |(n, _)| n);
    if header.trailing_binary() >= 2 {
        return format!(
            "the last attribute `{name}` (no Mulan label file found, though the attributes \
             before it are 0/1 too)"
        );
    }
    format!("the last attribute `{name}`")
}

fn no_target(path: &Path, format: &Format) -> String {
    if let Format::Arff(o) = format
        && o.target == ArffTarget::Auto
        && let Some((name, false)) = ArffHeader::read(path)
            .ok()
            .as_ref()
            .and_then(ArffHeader::last)
    {
        return format!(
            "no target: the last attribute `{name}` is numeric, so every attribute is a feature"
        );
    }
    "no target: every column is a feature".to_string()
}

/// The header name of a CSV file's target column (its position when there is no header).
fn csv_target_name(path: &Path, o: &CsvOptions) -> String {
    let header = || -> Option<Vec<String>> {
        let line = first_line(path).ok()?;
        let fields = crate::io::split_fields(&line, o.separator, false).ok()?;
        Some(fields.into_iter().map(|f| f.into_owned()).collect())
    };
    match &o.target {
        Some(ColumnRef::Name(n)) => n.clone(),
        Some(ColumnRef::Index(i)) if o.header => header()
            .and_then(|h| h.get(*i).cloned())
            .unwrap_or_else(|| format!("c{i}")),
        Some(ColumnRef::Index(i)) => format!("c{i}"),
        Some(ColumnRef::Last) => match header() {
            Some(h) if o.header => h.last().cloned().unwrap_or_default(),
            Some(h) => format!("c{}", h.len().saturating_sub(1)),
            None => "last".to_string(),
        },
        None => String::new(),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder under the temp directory for one test.
    fn folder(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("gimc-format-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    const ARFF: &str = "@relation r\n@attribute f numeric\n@attribute a {0,1}\n@attribute b {0,1}\n@data\n0.5,1,0\n1.5,0,1\n2.5,1,1\n";
    const XML: &str = "<?xml version=\"1.0\"?>\n<labels xmlns=\"http://mulan.sourceforge.net/labels\">\n<label name=\"a\"></label>\n<label name=\"b\"></label>\n</labels>\n";

    #[test]
    fn mulan_label_files_are_found_by_stem_then_by_content() {
        let dir = folder("find");
        let train = dir.join("set-train-sparse.arff");
        std::fs::write(&train, ARFF).unwrap();
        // no label file: a Weka ARFF whose last attribute is the class
        assert_eq!(find_mulan_labels(&train).unwrap(), None);
        let weka = guess_format(&train).unwrap();
        assert!(matches!(weka, Format::Arff(_)));
        let ds = load_path(&train, Some(&weka)).unwrap();
        assert_eq!(
            describe_targets(&train, &weka, &ds),
            "2 classes from the last attribute `b` (no Mulan label file found, though the \
             attributes before it are 0/1 too)"
        );
        // `set.xml` beside `set-train-sparse.arff`
        std::fs::write(dir.join("set.xml"), XML).unwrap();
        assert_eq!(
            find_mulan_labels(&train).unwrap(),
            Some(dir.join("set.xml"))
        );
        let format = guess_format(&train).unwrap();
        let ds = load_path(&train, Some(&format)).unwrap();
        assert_eq!(ds.labels().unwrap().cols(), 2);
        assert_eq!(
            describe_targets(&train, &format, &ds),
            "2 labels from set.xml"
        );
        // another name: found because its labels are attributes of the file; an unrelated XML
        // document is ignored
        std::fs::rename(dir.join("set.xml"), dir.join("labels-of-set.xml")).unwrap();
        std::fs::write(
            dir.join("pom.xml"),
            "<project><label name=\"zz\"/></project>",
        )
        .unwrap();
        assert_eq!(
            find_mulan_labels(&train).unwrap(),
            Some(dir.join("labels-of-set.xml"))
        );
        // a label file whose labels are not all attributes does not fit
        std::fs::write(
            dir.join("other.xml"),
            XML.replace("\"b\"", "\"zz\"").as_bytes(),
        )
        .unwrap();
        assert_eq!(
            find_mulan_labels(&train).unwrap(),
            Some(dir.join("labels-of-set.xml"))
        );
        // two that fit: an error asking for one
        std::fs::write(dir.join("copy.xml"), XML).unwrap();
        let e = find_mulan_labels(&train).unwrap_err().to_string();
        assert!(
            e.contains("copy.xml, labels-of-set.xml") && e.contains("name one"),
            "{e}"
        );
        std::fs::remove_file(dir.join("copy.xml")).unwrap();
        // a broken label file is an error naming it, not a reason to read a Weka ARFF
        std::fs::write(
            dir.join("broken.xml"),
            &XML[..XML.find("</labels>").unwrap()],
        )
        .unwrap();
        let e = find_mulan_labels(&train).unwrap_err().to_string();
        assert!(e.contains("broken.xml") && e.contains("</labels>"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_given_label_file_applies_to_arff_only() {
        let dir = folder("given");
        let arff = dir.join("d.arff");
        std::fs::write(&arff, ARFF).unwrap();
        let xml = dir.join("elsewhere.xml");
        std::fs::write(&xml, XML).unwrap();
        let f = guess_format_with_labels(&arff, Some(&xml)).unwrap();
        assert_eq!(
            f,
            Format::Mulan {
                labels_file: xml.clone(),
                missing: MissingPolicy::Error
            }
        );
        let svm = dir.join("d.svm");
        std::fs::write(&svm, "1 1:1\n").unwrap();
        let e = guess_format_with_labels(&svm, Some(&xml)).unwrap_err();
        assert!(e.to_string().contains("read as LIBSVM"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn guessing_skips_a_byte_order_mark_and_describes_targets() {
        let dir = folder("bom");
        let write = |name: &str, text: &str| {
            let p = dir.join(name);
            let mut bytes = b"\xef\xbb\xbf".to_vec();
            bytes.extend_from_slice(text.as_bytes());
            std::fs::write(&p, bytes).unwrap();
            p
        };
        let cases = [
            (
                write("x.txt", "2 3 2\n0 0:1\n1 2:1\n"),
                "XMC",
                "2 labels from the label lists of the rows",
            ),
            (
                write(
                    "w.data",
                    "@relation r\n@attribute f numeric\n@attribute class {p,q}\n@data\n1,p\n2,q\n",
                ),
                "ARFF",
                "2 classes from the last attribute `class`",
            ),
            (
                write("s.txt", "1 1:1\n2 2:1\n"),
                "LIBSVM",
                "2 classes from the first token of each row",
            ),
            (
                write("m.txt", "1 1:1\n0,2 2:1\n"),
                "LIBSVM",
                "3 labels from the comma-separated label lists of the rows",
            ),
            (
                write("c.csv", "a,b\n1,2\n"),
                "CSV",
                "no target: every column is a feature",
            ),
        ];
        for (path, name, what) in cases {
            let f = guess_format(&path).unwrap();
            assert_eq!(f.name(), name, "{}", path.display());
            let ds = load_path(&path, Some(&f)).unwrap();
            assert_eq!(describe_targets(&path, &f, &ds), what, "{}", path.display());
        }
        let csv = dir.join("t.csv");
        std::fs::write(&csv, "x,kind\n1,a\n2,b\n").unwrap();
        for target in [
            ColumnRef::Last,
            ColumnRef::Index(1),
            ColumnRef::Name("kind".into()),
        ] {
            let f = Format::Csv(CsvOptions {
                target: Some(target),
                ..CsvOptions::default()
            });
            let ds = load_path(&csv, Some(&f)).unwrap();
            assert_eq!(
                describe_targets(&csv, &f, &ds),
                "2 classes from column `kind`"
            );
        }
        let numeric = dir.join("n.arff");
        std::fs::write(
            &numeric,
            "@relation r\n@attribute f numeric\n@attribute g numeric\n@data\n1,2\n",
        )
        .unwrap();
        let f = guess_format(&numeric).unwrap();
        let ds = load_path(&numeric, Some(&f)).unwrap();
        assert!(describe_targets(&numeric, &f, &ds).contains("the last attribute `g` is numeric"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
