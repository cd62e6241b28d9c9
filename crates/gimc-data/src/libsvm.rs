//! LIBSVM / SVMlight reader (DESIGN §6): `target index:value index:value ...`, single-label
//! (class or regression target) or multi-label (`1,5,7 index:value ...`; a row with no label
//! starts with whitespace or directly with a feature). Indices are 1-based by default (0-based
//! on request), `qid:` tokens and `#` comments are skipped, trailing spaces, CRLF line ends and
//! a missing final newline are accepted. Features are kept sparse (CSR).

use std::io::BufRead;
use std::path::Path;

use gimc_linalg::FeatureMatrix;
use gimc_linalg::shared::shared_csr;

use crate::io::{ClassInterner, CsrBuilder, Lines, Loc, open_text};
use crate::{Dataset, Result, Targets};

/// How the first token of a LIBSVM row is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LibsvmTarget {
    /// A class name; classes are numbered 0..C-1 in sorted order of their values (numeric order
    /// when all are numbers, so mushrooms' `1` / `2` become 0 / 1).
    #[default]
    Classes,
    /// A real-valued target.
    Values,
    /// A comma-separated list of label indices (used as 0-based label columns as written).
    MultiLabel,
}

/// Options of the LIBSVM reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibsvmOptions {
    /// Feature indices start at 0 (default: 1-based, LIBSVM's convention).
    pub zero_based: bool,
    /// How the target token is read.
    pub target: LibsvmTarget,
    /// Number of feature columns; default the largest index seen + 1.
    pub n_features: Option<usize>,
    /// Number of label columns (multi-label); default the largest label seen + 1.
    pub n_labels: Option<usize>,
}

impl Default for LibsvmOptions {
    fn default() -> Self {
        Self {
            zero_based: false,
            target: LibsvmTarget::Classes,
            n_features: None,
            n_labels: None,
        }
    }
}

/// Reads a LIBSVM / SVMlight file (gzip allowed).
pub fn read_libsvm(path: &Path, opts: &LibsvmOptions) -> Result<Dataset> {
    parse_libsvm(open_text(path)?, path, opts)
}

/// [`read_libsvm`] on any reader; `path` names the source in errors.
pub fn parse_libsvm<R: BufRead>(reader: R, path: &Path, opts: &LibsvmOptions) -> Result<Dataset> {
    let loc = Loc::new(path);
    let mut lines = Lines::new(reader, path);
    let mut feats = CsrBuilder::new(opts.n_features.unwrap_or(usize::MAX));
    let mut labels = CsrBuilder::new(opts.n_labels.unwrap_or(usize::MAX));
    let mut max_feat = 0usize;
    let mut max_label = 0usize;
    let mut classes = ClassInterner::default();
    let mut values = Vec::new();
    let mut row_f: Vec<(usize, f64)> = Vec::new();
    let mut row_l: Vec<(usize, f64)> = Vec::new();
    while let Some((ln, line)) = lines.next_line()? {
        let content = line.split('#').next().unwrap_or("");
        if content.trim().is_empty() {
            continue;
        }
        let r = feats.nrows();
        let mut tokens = content.split_ascii_whitespace().peekable();
        let starts_blank = content.starts_with(|c: char| c.is_ascii_whitespace());
        row_l.clear();
        let first_is_feature = starts_blank || tokens.peek().is_some_and(|t| t.contains(':'));
        match opts.target {
            LibsvmTarget::MultiLabel => {
                if !first_is_feature && let Some(tok) = tokens.next() {
                    for l in tok.split(',') {
                        let l = loc.index(ln, l, false, "label")?;
                        if opts.n_labels.is_some_and(|nl| l >= nl) {
                            return Err(loc.err(
                                ln,
                                format!(
                                    "label {l} out of range ({} labels)",
                                    opts.n_labels.unwrap_or(0)
                                ),
                            ));
                        }
                        max_label = max_label.max(l.saturating_add(1));
                        row_l.push((l, 1.0));
                    }
                }
            }
            LibsvmTarget::Classes | LibsvmTarget::Values => {
                if first_is_feature {
                    return Err(loc.err(ln, "row has no target before its features"));
                }
                let tok = tokens.next().unwrap_or("");
                if opts.target == LibsvmTarget::Classes {
                    classes.push(tok);
                } else {
                    values.push(loc.number(ln, r, 0, tok, "target")?);
                }
            }
        }
        row_f.clear();
        for tok in tokens {
            let (idx, val) = tok
                .split_once(':')
                .ok_or_else(|| loc.err(ln, format!("token {tok:?} is not index:value")))?;
            if idx == "qid" {
                continue;
            }
            let j = loc.index(ln, idx, !opts.zero_based, "feature index")?;
            if opts.n_features.is_some_and(|d| j >= d) {
                return Err(loc.err(
                    ln,
                    format!(
                        "feature index {idx} out of range ({} features)",
                        opts.n_features.unwrap_or(0)
                    ),
                ));
            }
            let v = parse_value(&loc, ln, r, j, val)?;
            max_feat = max_feat.max(j.saturating_add(1));
            row_f.push((j, v));
        }
        feats.push_row(&mut row_f).map_err(|m| loc.err(ln, m))?;
        if opts.target == LibsvmTarget::MultiLabel {
            labels.push_row(&mut row_l).map_err(|m| loc.err(ln, m))?;
        }
    }
    let end = lines.count();
    let n_features = opts.n_features.unwrap_or(max_feat);
    feats.set_ncols(n_features);
    let x = feats.finish().map_err(|m| loc.err(end, m))?;
    let targets = match opts.target {
        LibsvmTarget::Classes => {
            let (classes, names) = classes.finish();
            Targets::Classes { classes, names }
        }
        LibsvmTarget::Values => Targets::Values(values),
        LibsvmTarget::MultiLabel => {
            let n_labels = opts.n_labels.unwrap_or(max_label);
            labels.set_ncols(n_labels);
            let matrix = labels.finish().map_err(|m| loc.err(end, m))?;
            Targets::Labels {
                matrix,
                names: Vec::new(),
            }
        }
    };
    let name = path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    Ok(Dataset {
        name,
        features: FeatureMatrix::Sparse(shared_csr(x)),
        targets,
        feature_names: Vec::new(),
        missing: Vec::new(),
        unlabeled: Vec::new(),
        missing_labels: Vec::new(),
        nominal_columns: Vec::new(),
    })
}

fn parse_value(loc: &Loc, ln: usize, r: usize, j: usize, val: &str) -> Result<f64> {
    loc.number(ln, r, j, val, "feature value")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DataError;

    fn parse(text: &str, opts: &LibsvmOptions) -> Result<Dataset> {
        parse_libsvm(text.as_bytes(), Path::new("inline.svm"), opts)
    }

    #[test]
    fn classes_sorted_and_trailing_space_crlf_no_final_newline() {
        let text = "2 1:1 3:0.5 \r\n1 2:1 \r\n2 3:-1 # comment\n\n1 qid:4 1:2";
        let ds = parse(text, &LibsvmOptions::default()).unwrap();
        assert_eq!(ds.nrows(), 4);
        assert_eq!(ds.ncols(), 3);
        assert_eq!(
            ds.targets,
            Targets::Classes {
                classes: vec![1, 0, 1, 0],
                names: vec!["1".into(), "2".into()]
            }
        );
        let FeatureMatrix::Sparse(x) = &ds.features else {
            panic!()
        };
        assert_eq!(x.get(0, 2), Some(&0.5));
        assert_eq!(x.get(3, 0), Some(&2.0));
        assert!(ds.feature_names.is_empty());
    }

    #[test]
    fn zero_based_values_and_width() {
        let opts = LibsvmOptions {
            zero_based: true,
            target: LibsvmTarget::Values,
            n_features: Some(5),
            n_labels: None,
        };
        let ds = parse("1.5 0:1 4:2\n-3 2:1\n", &opts).unwrap();
        assert_eq!(ds.ncols(), 5);
        assert_eq!(ds.targets, Targets::Values(vec![1.5, -3.0]));
        assert!(parse("1 5:1\n", &opts).is_err());
    }

    #[test]
    fn multilabel_rows_with_and_without_labels() {
        let opts = LibsvmOptions {
            target: LibsvmTarget::MultiLabel,
            ..LibsvmOptions::default()
        };
        let ds = parse("1,5,7 1:1 2:1\n 3:1\n2:1\n0 1:0.5\n", &opts).unwrap();
        let Targets::Labels { matrix, names } = &ds.targets else {
            panic!()
        };
        assert!(names.is_empty());
        assert_eq!(matrix.cols(), 8);
        assert_eq!(matrix.nnz(), 4);
        assert_eq!(matrix.outer_view(1).unwrap().nnz(), 0);
        assert_eq!(matrix.outer_view(2).unwrap().nnz(), 0);
        assert_eq!(matrix.get(3, 0), Some(&1.0));
        let FeatureMatrix::Sparse(x) = &ds.features else {
            panic!()
        };
        assert_eq!(x.get(2, 1), Some(&1.0));
    }

    #[test]
    fn errors() {
        let d = LibsvmOptions::default();
        for (text, line) in [
            ("1 0:1\n", 1),
            ("1 1:1\n1 a:1\n", 2),
            ("1 1:1 1:2\n", 1),
            ("1 1\n", 1),
            (" 1:1\n", 1),
            ("1 1:x\n", 1),
        ] {
            let e = parse(text, &d).unwrap_err();
            assert_eq!(e.line(), Some(line), "{text:?} {e}");
        }
        let e = parse("1 1:1\n2 2:NaN\n", &d).unwrap_err();
        assert!(
            matches!(
                e,
                DataError::NonFinite {
                    row: 1,
                    col: 1,
                    line: 2,
                    ..
                }
            ),
            "{e}"
        );
        let e = parse(
            "inf 1:1\n",
            &LibsvmOptions {
                target: LibsvmTarget::Values,
                ..d
            },
        )
        .unwrap_err();
        assert!(matches!(e, DataError::NonFinite { .. }));
    }
}
