//! Extreme Classification Repository text format (DESIGN §6): a header line `n d L`, then one
//! row per line, `l1,l2,... f:v f:v ...` with 0-based label and feature indices; a row with no
//! label starts with a space. The row count must match the header. Features and labels are
//! kept sparse (CSR).

use std::io::BufRead;
use std::path::Path;

use gimc_linalg::FeatureMatrix;

use crate::io::{CsrBuilder, Lines, Loc, open_text};
use crate::{Dataset, Result, Targets};

/// Reads an Extreme Classification Repository data file (gzip allowed).
pub fn read_xmc(path: &Path) -> Result<Dataset> {
    parse_xmc(open_text(path)?, path)
}

/// [`read_xmc`] on any reader; `path` names the source in errors.
pub fn parse_xmc<R: BufRead>(reader: R, path: &Path) -> Result<Dataset> {
    let loc = Loc::new(path);
    let mut lines = Lines::new(reader, path);
    let (n, d, l) = loop {
        let Some((ln, line)) = lines.next_line()? else {
            return Err(loc.err(lines.count(), "empty file: expected a header line 'n d L'"));
        };
        if line.trim().is_empty() {
            continue;
        }
        let parts: Vec<&str> = line.split_ascii_whitespace().collect();
        if parts.len() != 3 {
            return Err(loc.err(
                ln,
                "expected a header line 'n d L' (rows, features, labels)",
            ));
        }
        let n = loc.index(ln, parts[0], false, "row count")?;
        let d = loc.index(ln, parts[1], false, "feature count")?;
        let l = loc.index(ln, parts[2], false, "label count")?;
        break (n, d, l);
    };
    let mut feats = CsrBuilder::new(d);
    let mut labels = CsrBuilder::new(l);
    let mut row_f = Vec::new();
    let mut row_l = Vec::new();
    while let Some((ln, line)) = lines.next_line()? {
        if line.trim().is_empty() {
            continue;
        }
        let r = feats.nrows();
        if r >= n {
            return Err(loc.err(
                ln,
                format!("more rows than the {n} announced in the header"),
            ));
        }
        row_f.clear();
        row_l.clear();
        let mut tokens = line.split_ascii_whitespace().peekable();
        let has_labels = !line.starts_with(|c: char| c.is_ascii_whitespace())
            && tokens.peek().is_some_and(|t| !t.contains(':'));
        if has_labels && let Some(tok) = tokens.next() {
            for lab in tok.split(',') {
                let j = loc.index(ln, lab, false, "label")?;
                if j >= l {
                    return Err(loc.err(ln, format!("label {j} out of range ({l} labels)")));
                }
                row_l.push((j, 1.0));
            }
        }
        for tok in tokens {
            let (idx, val) = tok
                .split_once(':')
                .ok_or_else(|| loc.err(ln, format!("token {tok:?} is not index:value")))?;
            let j = loc.index(ln, idx, false, "feature index")?;
            if j >= d {
                return Err(loc.err(ln, format!("feature index {j} out of range ({d} features)")));
            }
            row_f.push((j, loc.number(ln, r, j, val, "feature value")?));
        }
        feats.push_row(&mut row_f).map_err(|m| loc.err(ln, m))?;
        labels.push_row(&mut row_l).map_err(|m| loc.err(ln, m))?;
    }
    let end = lines.count();
    if feats.nrows() != n {
        return Err(loc.err(
            end,
            format!("header announces {n} rows, file has {}", feats.nrows()),
        ));
    }
    let x = feats.finish().map_err(|m| loc.err(end, m))?;
    let y = labels.finish().map_err(|m| loc.err(end, m))?;
    let name = path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    Ok(Dataset {
        name,
        features: FeatureMatrix::Sparse(x),
        targets: Targets::Labels {
            matrix: y,
            names: Vec::new(),
        },
        feature_names: Vec::new(),
        missing: Vec::new(),
        unlabeled: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Dataset> {
        parse_xmc(text.as_bytes(), Path::new("inline_data.txt"))
    }

    #[test]
    fn reads_rows_with_and_without_labels() {
        let ds = parse("3 4 5\n0,4 0:1.5 3:2\n 1:1\n2 \n").unwrap();
        assert_eq!((ds.nrows(), ds.ncols()), (3, 4));
        let Targets::Labels { matrix, .. } = &ds.targets else {
            panic!()
        };
        assert_eq!(matrix.cols(), 5);
        assert_eq!(matrix.nnz(), 3);
        assert_eq!(matrix.get(0, 4), Some(&1.0));
        assert_eq!(matrix.outer_view(1).unwrap().nnz(), 0);
        assert_eq!(matrix.get(2, 2), Some(&1.0));
        assert_eq!(ds.features.nnz(), 3);
        assert_eq!(ds.summary().rows_without_label, Some(1));
    }

    #[test]
    fn errors_name_lines() {
        for (text, line) in [
            ("3 4\n", 1),
            ("1 2 3\n0 2:1\n", 2),
            ("1 2 3\n3 0:1\n", 2),
            ("2 2 3\n0 0:1\n", 2),
            ("1 2 3\n0 0:1\n1 1:1\n", 3),
            ("", 1),
            ("1 2 3\n0,,1 0:1\n", 2),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line(), Some(line), "{text:?}: {e}");
        }
    }
}
