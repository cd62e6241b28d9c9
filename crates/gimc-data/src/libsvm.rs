//! LIBSVM / SVMlight reader (DESIGN §6): `target index:value index:value ...`, single-label
//! (class or regression target) or multi-label (`1,5,7 index:value ...`; a row with no label
//! starts with whitespace or directly with a feature). Indices are 1-based by default (0-based
//! on request), `qid:` tokens and `#` comments are skipped, trailing spaces, CRLF line ends and
//! a missing final newline are accepted. Features are kept sparse (CSR).

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use crate::io::{ClassInterner, CsrBuilder, Lines, Loc, open_text, parse_num};
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
    /// Decided from every row: multi-label ([`LibsvmTarget::MultiLabel`]) when any row's target
    /// is a comma-separated list (`0,2`), else classes ([`LibsvmTarget::Classes`]). The file is
    /// read once; the target tokens are kept until its end.
    Auto,
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
    let mut targets = TargetReader::new(opts);
    let mut max_feat = 0usize;
    let mut row_f: Vec<(usize, f64)> = Vec::new();
    while let Some((ln, line)) = lines.next_line()? {
        let content = line.split('#').next().unwrap_or("");
        if content.trim().is_empty() {
            continue;
        }
        let r = feats.nrows();
        let mut tokens = content.split_ascii_whitespace().peekable();
        let starts_blank = content.starts_with(|c: char| c.is_ascii_whitespace());
        let first_is_feature = starts_blank || tokens.peek().is_some_and(|t| t.contains(':'));
        let target = if first_is_feature {
            None
        } else {
            tokens.next()
        };
        targets.push(&loc, ln, r, target)?;
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
    }
    let end = lines.count();
    feats.set_ncols(opts.n_features.unwrap_or(max_feat));
    let x = feats.finish().map_err(|m| loc.err(end, m))?;
    let targets = targets.finish(&loc, end)?;
    Ok(Dataset::from_sparse_file(path, x, targets))
}

/// The targets of the rows as they are read, in the options' mode.
enum TargetReader {
    Classes(ClassInterner),
    Values(Vec<f64>),
    Labels(LabelRows),
    Auto(AutoTargets),
}

/// Multi-label rows: the label matrix built row by row.
struct LabelRows {
    rows: CsrBuilder,
    n_labels: Option<usize>,
    max_label: usize,
}

/// The target tokens of [`LibsvmTarget::Auto`], interned with the line of their first use
/// until the end of the file decides the task.
#[derive(Default)]
struct AutoTargets {
    ids: HashMap<String, u32>,
    tokens: Vec<(String, usize)>,
    /// Per row the token's id, or `u32::MAX` for a row without a target.
    rows: Vec<u32>,
    /// The line of the first row without a target.
    first_untargeted: Option<usize>,
    /// A token holds a comma: the file is multi-label.
    lists: bool,
}

const NO_TARGET: &str = "row has no target before its features";

impl TargetReader {
    fn new(opts: &LibsvmOptions) -> Self {
        match opts.target {
            LibsvmTarget::Classes => Self::Classes(ClassInterner::default()),
            LibsvmTarget::Values => Self::Values(Vec::new()),
            LibsvmTarget::MultiLabel => Self::Labels(LabelRows::new(opts.n_labels)),
            LibsvmTarget::Auto => Self::Auto(AutoTargets::default()),
        }
    }

    /// Records row `r`'s target token (`None`: the row starts with a feature).
    fn push(&mut self, loc: &Loc, ln: usize, r: usize, token: Option<&str>) -> Result<()> {
        match self {
            Self::Classes(c) => {
                let tok = token.ok_or_else(|| loc.err(ln, NO_TARGET))?;
                check_class(loc, ln, tok)?;
                c.push(tok);
            }
            Self::Values(v) => {
                let tok = token.ok_or_else(|| loc.err(ln, NO_TARGET))?;
                v.push(loc.number(ln, r, 0, tok, "target")?);
            }
            Self::Labels(l) => l.push(loc, ln, token)?,
            Self::Auto(a) => a.push(ln, token),
        }
        Ok(())
    }

    fn finish(self, loc: &Loc, end: usize) -> Result<Targets> {
        Ok(match self {
            Self::Classes(c) => {
                let (classes, names) = c.finish();
                Targets::Classes { classes, names }
            }
            Self::Values(v) => Targets::Values(v),
            Self::Labels(l) => l.finish(loc, end)?,
            Self::Auto(a) => a.finish(loc, end)?,
        })
    }
}

/// Refuses a class token that reads as NaN or an infinity (`nan`, `inf`, `-Infinity`): it is
/// a broken number, not a class name.
fn check_class(loc: &Loc, ln: usize, tok: &str) -> Result<()> {
    if parse_num(tok).is_some_and(|v| !v.is_finite()) {
        return Err(loc.err(
            ln,
            format!("class {tok:?} is not a finite number (a class must be a number or a name)"),
        ));
    }
    Ok(())
}

impl LabelRows {
    fn new(n_labels: Option<usize>) -> Self {
        Self {
            rows: CsrBuilder::new(n_labels.unwrap_or(usize::MAX)),
            n_labels,
            max_label: 0,
        }
    }

    fn push(&mut self, loc: &Loc, ln: usize, token: Option<&str>) -> Result<()> {
        let mut row = match token {
            Some(tok) => label_list(loc, ln, tok, self.n_labels)?,
            None => Vec::new(),
        };
        for &(l, _) in &row {
            self.max_label = self.max_label.max(l.saturating_add(1));
        }
        self.rows.push_row(&mut row).map_err(|m| loc.err(ln, m))
    }

    fn finish(mut self, loc: &Loc, end: usize) -> Result<Targets> {
        self.rows.set_ncols(self.n_labels.unwrap_or(self.max_label));
        let matrix = self.rows.finish().map_err(|m| loc.err(end, m))?;
        Ok(Targets::Labels {
            matrix,
            names: Vec::new(),
        })
    }
}

/// The labels of a comma-separated list token, each below `n_labels` when given.
fn label_list(
    loc: &Loc,
    ln: usize,
    tok: &str,
    n_labels: Option<usize>,
) -> Result<Vec<(usize, f64)>> {
    tok.split(',')
        .map(|l| {
            let l = loc.index(ln, l, false, "label")?;
            match n_labels {
                Some(nl) if l >= nl => {
                    Err(loc.err(ln, format!("label {l} out of range ({nl} labels)")))
                }
                _ => Ok((l, 1.0)),
            }
        })
        .collect()
}

impl AutoTargets {
    fn push(&mut self, ln: usize, token: Option<&str>) {
        let Some(tok) = token else {
            self.first_untargeted.get_or_insert(ln);
            self.rows.push(u32::MAX);
            return;
        };
        let next = self.tokens.len() as u32;
        let id = *self.ids.entry(tok.to_string()).or_insert_with(|| {
            self.lists |= tok.contains(',');
            self.tokens.push((tok.to_string(), ln));
            next
        });
        self.rows.push(id);
    }

    fn finish(self, loc: &Loc, end: usize) -> Result<Targets> {
        if self.lists {
            let lists = self
                .tokens
                .iter()
                .map(|(tok, ln)| label_list(loc, *ln, tok, None))
                .collect::<Result<Vec<_>>>()?;
            let mut labels = LabelRows::new(None);
            for &id in &self.rows {
                let mut row = lists.get(id as usize).cloned().unwrap_or_default();
                for &(l, _) in &row {
                    labels.max_label = labels.max_label.max(l.saturating_add(1));
                }
                labels
                    .rows
                    .push_row(&mut row)
                    .map_err(|m| loc.err(end, m))?;
            }
            return labels.finish(loc, end);
        }
        if let Some(ln) = self.first_untargeted {
            return Err(loc.err(
                ln,
                format!(
                    "{NO_TARGET} (no row holds a comma-separated label list, so the file is \
                     read as classes; read it as multi-label if its rows are label lists)"
                ),
            ));
        }
        let mut classes = ClassInterner::default();
        for (tok, ln) in &self.tokens {
            check_class(loc, *ln, tok)?;
        }
        for &id in &self.rows {
            classes.push(&self.tokens[id as usize].0);
        }
        let (classes, names) = classes.finish();
        Ok(Targets::Classes { classes, names })
    }
}

fn parse_value(loc: &Loc, ln: usize, r: usize, j: usize, val: &str) -> Result<f64> {
    loc.number(ln, r, j, val, "feature value")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DataError;
    use gimc_linalg::FeatureMatrix;

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
    fn auto_decides_the_task_from_every_row() {
        let auto = LibsvmOptions {
            target: LibsvmTarget::Auto,
            ..LibsvmOptions::default()
        };
        // the first row has one label; a later row's list makes the file multi-label
        let ds = parse("3 1:1\n0,2 2:1\n 1:2\n1 3:1\n", &auto).unwrap();
        let Targets::Labels { matrix, .. } = &ds.targets else {
            panic!("multi-label expected: {:?}", ds.targets)
        };
        assert_eq!((matrix.rows(), matrix.cols(), matrix.nnz()), (4, 4, 4));
        assert_eq!(
            (matrix.get(0, 3), matrix.get(1, 2)),
            (Some(&1.0), Some(&1.0))
        );
        assert_eq!(matrix.outer_view(2).unwrap().nnz(), 0);
        // no list anywhere: classes, as with LibsvmTarget::Classes
        let text = "+1 1:1\n-1 2:1\n1 3:1\n";
        let ds = parse(text, &auto).unwrap();
        assert_eq!(
            ds.targets,
            parse(text, &LibsvmOptions::default()).unwrap().targets
        );
        // a bad label in a list is reported at its row
        let e = parse("1 1:1\n0,x 1:1\n", &auto).unwrap_err();
        assert_eq!(e.line(), Some(2), "{e}");
        // a row without a target in a file of classes
        let e = parse("1 1:1\n 2:1\n", &auto).unwrap_err();
        assert_eq!(e.line(), Some(2), "{e}");
        assert!(e.to_string().contains("no target"), "{e}");
    }

    #[test]
    fn nan_and_infinity_are_not_class_names() {
        for mode in [LibsvmTarget::Classes, LibsvmTarget::Auto] {
            let opts = LibsvmOptions {
                target: mode,
                ..LibsvmOptions::default()
            };
            for bad in ["nan", "inf", "-Infinity", "NaN"] {
                let e = parse(&format!("1 1:1\n{bad} 2:1\n"), &opts).unwrap_err();
                assert_eq!(e.line(), Some(2), "{mode:?} {bad}: {e}");
                assert!(e.to_string().contains("is not a finite number"), "{e}");
            }
        }
    }

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_first_class() {
        let ds = parse("\u{feff}1 1:1\n2 1:2\n1 2:1\n", &LibsvmOptions::default()).unwrap();
        let Targets::Classes { names, .. } = &ds.targets else {
            panic!()
        };
        assert_eq!(names, &["1", "2"]);
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
