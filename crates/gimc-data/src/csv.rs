//! Delimited-text readers (DESIGN §6): CSV with a chosen separator, optional header line, a
//! chosen target column, dropped columns and nominal columns (one-hot or coded), and
//! `(row, column, value)` triplet files for partially observed matrices.
//!
//! CSV fields may be double-quoted (`""` is a quote inside); a quoted field cannot span lines.
//! A column is nominal as soon as one of its cells is not a number (abalone's `Sex`); nominal
//! categories are numbered in sorted order. Missing cells (empty, `?`, `NA`) follow the
//! [`MissingPolicy`].

use std::collections::{BTreeSet, HashMap};
use std::io::BufRead;
use std::path::Path;

use gimc_linalg::FeatureMatrix;
use gimc_linalg::faer::Mat;

use crate::io::{ClassInterner, Lines, Loc, open_text, parse_num, split_fields};
use crate::{Dataset, MissingPolicy, Result, Targets};

/// A column chosen by name (needs a header), 0-based position, or as the last column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnRef {
    /// By header name.
    Name(String),
    /// By 0-based position.
    Index(usize),
    /// The last column.
    Last,
}

/// How the target column is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TargetKind {
    /// Class names, numbered 0..C-1 in sorted order (numeric order when all are numbers).
    #[default]
    Classes,
    /// Real values.
    Values,
}

/// How nominal (non-numeric) feature columns become numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NominalEncoding {
    /// One 0/1 column per category (named `column=category`), categories in sorted order.
    #[default]
    OneHot,
    /// One column holding the category's index in sorted order (listed in
    /// [`Dataset::nominal_columns`]).
    Code,
}

/// Options of the CSV reader.
#[derive(Debug, Clone, PartialEq)]
pub struct CsvOptions {
    /// Field separator (`,` by default; `;` for the wine-quality files).
    pub separator: char,
    /// The first non-empty line holds column names.
    pub header: bool,
    /// The target column; `None` makes every kept column a feature.
    pub target: Option<ColumnRef>,
    /// How the target column is read.
    pub target_kind: TargetKind,
    /// Columns to drop (e.g. an `Id` column).
    pub drop: Vec<ColumnRef>,
    /// Encoding of nominal feature columns.
    pub nominal: NominalEncoding,
    /// Missing feature cells.
    pub missing: MissingPolicy,
    /// Cell values read as missing besides the built-in ones (an empty cell, `?`, `NA`), e.g.
    /// `-999` or `NULL` (`gimc transduce --missing TOKEN`). Compared after trimming.
    pub missing_tokens: Vec<String>,
}

impl Default for CsvOptions {
    fn default() -> Self {
        Self {
            separator: ',',
            header: true,
            target: None,
            target_kind: TargetKind::Classes,
            drop: Vec::new(),
            nominal: NominalEncoding::OneHot,
            missing: MissingPolicy::Error,
            missing_tokens: Vec::new(),
        }
    }
}

/// Reads a CSV file (gzip allowed).
pub fn read_csv(path: &Path, opts: &CsvOptions) -> Result<Dataset> {
    parse_csv(open_text(path)?, path, opts)
}

enum Col {
    Num(Vec<f64>),
    Cat {
        codes: Vec<u32>,
        names: Vec<String>,
        ids: HashMap<String, u32>,
    },
}

const MISSING_CODE: u32 = u32::MAX;

impl Col {
    fn intern(
        codes: &mut Vec<u32>,
        names: &mut Vec<String>,
        ids: &mut HashMap<String, u32>,
        s: &str,
    ) {
        let next = names.len() as u32;
        let id = *ids.entry(s.to_string()).or_insert_with(|| {
            names.push(s.to_string());
            next
        });
        codes.push(id);
    }
}

/// Refuses a class column in which every one of the `rows` rows is missing (`unlabeled` of
/// them): there would be no class names, and the rows' placeholder class would name nothing.
fn require_a_class(loc: &Loc, last_line: usize, rows: usize, unlabeled: usize) -> Result<()> {
    if rows > 0 && unlabeled == rows {
        return Err(loc.err(
            last_line,
            "every row's class is missing (at least one row needs a class)",
        ));
    }
    Ok(())
}

fn is_missing_token(s: &str, extra: &[String]) -> bool {
    s.is_empty() || s == "?" || s == "NA" || extra.iter().any(|t| t.trim() == s)
}

fn resolve(
    r: &ColumnRef,
    header: Option<&[String]>,
    ncols: usize,
    loc: &Loc,
    ln: usize,
) -> Result<usize> {
    match r {
        ColumnRef::Last => ncols
            .checked_sub(1)
            .ok_or_else(|| loc.err(ln, "no columns")),
        ColumnRef::Index(i) if *i < ncols => Ok(*i),
        ColumnRef::Index(i) => {
            Err(loc.err(ln, format!("column {i} out of range ({ncols} columns)")))
        }
        ColumnRef::Name(name) => header
            .and_then(|h| h.iter().position(|c| c == name))
            .ok_or_else(|| loc.err(ln, format!("no column named {name:?}"))),
    }
}

/// [`read_csv`] on any reader; `path` names the source in errors.
pub fn parse_csv<R: BufRead>(reader: R, path: &Path, opts: &CsvOptions) -> Result<Dataset> {
    let loc = Loc::new(path);
    let mut lines = Lines::new(reader, path);
    let sep = opts.separator;
    let mut header: Option<Vec<String>> = None;
    let mut first_row: Option<(usize, Vec<String>)> = None;
    // the first non-empty line fixes the column count
    while let Some((ln, line)) = lines.next_line()? {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<String> = split_fields(line, sep, false)
            .map_err(|m| loc.err(ln, m))?
            .into_iter()
            .map(|c| c.into_owned())
            .collect();
        if opts.header {
            header = Some(fields);
        } else {
            first_row = Some((ln, fields));
        }
        break;
    }
    let ncols = match (&header, &first_row) {
        (Some(h), _) => h.len(),
        (None, Some((_, f))) => f.len(),
        (None, None) => return Err(loc.err(lines.count(), "empty file")),
    };
    let at = lines.count();
    let target = opts
        .target
        .as_ref()
        .map(|t| resolve(t, header.as_deref(), ncols, &loc, at))
        .transpose()?;
    let mut dropped = vec![false; ncols];
    for d in &opts.drop {
        dropped[resolve(d, header.as_deref(), ncols, &loc, at)?] = true;
    }
    if let Some(t) = target {
        dropped[t] = true;
    }
    let kept: Vec<usize> = (0..ncols).filter(|&c| !dropped[c]).collect();
    let names: Vec<String> = match &header {
        Some(h) => kept.iter().map(|&c| h[c].clone()).collect(),
        None => kept.iter().map(|c| format!("c{c}")).collect(),
    };
    let mut cols: Vec<Col> = kept.iter().map(|_| Col::Num(Vec::new())).collect();
    let mut classes = ClassInterner::default();
    let mut values = Vec::new();
    let mut missing: Vec<(usize, usize)> = Vec::new(); // (row, kept-column index)
    let mut unlabeled: Vec<usize> = Vec::new();
    let mut nrows = 0usize;

    let mut handle = |ln: usize, fields: &[&str], nrows: &mut usize| -> Result<()> {
        if fields.len() != ncols {
            return Err(loc.err(ln, format!("{} fields, expected {ncols}", fields.len())));
        }
        let r = *nrows;
        if let Some(t) = target {
            let s = fields[t];
            if is_missing_token(s, &opts.missing_tokens) {
                if opts.missing == MissingPolicy::Error {
                    return Err(loc.err(ln, "missing target value"));
                }
                // an unlabelled row: a placeholder target, the row recorded
                unlabeled.push(r);
                match opts.target_kind {
                    TargetKind::Classes => classes.push_unlabeled(),
                    TargetKind::Values => values.push(0.0),
                }
            } else {
                match opts.target_kind {
                    TargetKind::Classes => classes.push(s),
                    TargetKind::Values => values.push(loc.number(ln, r, t, s, "target")?),
                }
            }
        }
        for (k, &c) in kept.iter().enumerate() {
            let s = fields[c];
            if is_missing_token(s, &opts.missing_tokens) {
                if opts.missing == MissingPolicy::Error {
                    return Err(loc.err(
                        ln,
                        format!("missing value in column {} (row {r})", names[k]),
                    ));
                }
                missing.push((r, k));
                match &mut cols[k] {
                    Col::Num(v) => v.push(0.0),
                    Col::Cat { codes, .. } => codes.push(MISSING_CODE),
                }
                continue;
            }
            let num = parse_num(s);
            match (&mut cols[k], num) {
                (Col::Num(v), Some(x)) => {
                    if !x.is_finite() {
                        return Err(loc.non_finite(ln, r, k, x));
                    }
                    v.push(x);
                }
                (Col::Num(v), None) => {
                    // the column turns nominal: earlier numbers become category names
                    let mut codes = Vec::with_capacity(v.len() + 1);
                    let mut cat_names = Vec::new();
                    let mut ids = HashMap::new();
                    let was_missing: BTreeSet<usize> =
                        missing.iter().filter(|m| m.1 == k).map(|m| m.0).collect();
                    for (i, &x) in v.iter().enumerate() {
                        if was_missing.contains(&i) {
                            codes.push(MISSING_CODE);
                        } else {
                            Col::intern(&mut codes, &mut cat_names, &mut ids, &x.to_string());
                        }
                    }
                    Col::intern(&mut codes, &mut cat_names, &mut ids, s);
                    cols[k] = Col::Cat {
                        codes,
                        names: cat_names,
                        ids,
                    };
                }
                (Col::Cat { codes, names, ids }, _) => Col::intern(codes, names, ids, s),
            }
        }
        *nrows += 1;
        Ok(())
    };

    let mut last_line = 0;
    if let Some((ln, fields)) = &first_row {
        let refs: Vec<&str> = fields.iter().map(String::as_str).collect();
        handle(*ln, &refs, &mut nrows)?;
        last_line = *ln;
    }
    while let Some((ln, line)) = lines.next_line()? {
        if line.trim().is_empty() {
            continue;
        }
        let fields = split_fields(line, sep, false).map_err(|m| loc.err(ln, m))?;
        let refs: Vec<&str> = fields.iter().map(|c| c.as_ref()).collect();
        handle(ln, &refs, &mut nrows)?;
        last_line = ln;
    }
    if target.is_some() && opts.target_kind == TargetKind::Classes {
        require_a_class(&loc, last_line, nrows, unlabeled.len())?;
    }

    // assemble the feature columns
    let mut out_cols: Vec<Vec<f64>> = Vec::new();
    let mut feature_names = Vec::new();
    let mut nominal_columns = Vec::new();
    let mut col_map: Vec<Vec<usize>> = Vec::new(); // kept column -> output columns
    for (k, col) in cols.into_iter().enumerate() {
        match col {
            Col::Num(v) => {
                col_map.push(vec![out_cols.len()]);
                out_cols.push(v);
                feature_names.push(names[k].clone());
            }
            Col::Cat {
                codes, names: cats, ..
            } => {
                let mut order: Vec<usize> = (0..cats.len()).collect();
                order.sort_by(|&a, &b| cats[a].cmp(&cats[b]));
                let mut rank = vec![0usize; cats.len()];
                for (pos, &id) in order.iter().enumerate() {
                    rank[id] = pos;
                }
                match opts.nominal {
                    NominalEncoding::Code => {
                        nominal_columns.push(out_cols.len());
                        col_map.push(vec![out_cols.len()]);
                        out_cols.push(
                            codes
                                .iter()
                                .map(|&c| {
                                    if c == MISSING_CODE {
                                        0.0
                                    } else {
                                        rank[c as usize] as f64
                                    }
                                })
                                .collect(),
                        );
                        feature_names.push(names[k].clone());
                    }
                    NominalEncoding::OneHot => {
                        let base = out_cols.len();
                        col_map.push((base..base + cats.len()).collect());
                        for &id in &order {
                            out_cols.push(
                                codes
                                    .iter()
                                    .map(|&c| if c as usize == id { 1.0 } else { 0.0 })
                                    .collect(),
                            );
                            feature_names.push(format!("{}={}", names[k], cats[id]));
                        }
                    }
                }
            }
        }
    }
    let x = Mat::from_fn(nrows, out_cols.len(), |i, j| out_cols[j][i]);
    let mut missing_out: Vec<(usize, usize)> = missing
        .iter()
        .flat_map(|&(r, k)| col_map[k].iter().map(move |&c| (r, c)))
        .collect();
    missing_out.sort_unstable();
    let targets = match (target, opts.target_kind) {
        (None, _) => Targets::None,
        (Some(_), TargetKind::Classes) => {
            let (classes, names) = classes.finish();
            Targets::Classes { classes, names }
        }
        (Some(_), TargetKind::Values) => Targets::Values(values),
    };
    let name = path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let name = name
        .strip_suffix(".csv")
        .map(str::to_string)
        .unwrap_or(name);
    Ok(Dataset {
        name,
        features: FeatureMatrix::Dense(x),
        targets,
        feature_names,
        missing: missing_out,
        unlabeled,
        missing_labels: Vec::new(),
        nominal_columns,
    })
}

/// A partially observed matrix as (row, column, value) entries.
#[derive(Debug, Clone, PartialEq)]
pub struct Triplets {
    /// Rows of the matrix.
    pub nrows: usize,
    /// Columns of the matrix.
    pub ncols: usize,
    /// The observed entries, in file order, each (row, column) at most once.
    pub entries: Vec<(usize, usize, f64)>,
}

/// Options of the triplet reader.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TripletOptions {
    /// Row and column indices start at 1 (default: 0-based).
    pub one_based: bool,
    /// Skip the first non-comment line (column names).
    pub header: bool,
    /// Matrix rows; default the largest row index + 1.
    pub nrows: Option<usize>,
    /// Matrix columns; default the largest column index + 1.
    pub ncols: Option<usize>,
}

/// Reads a triplet file: one `row col value` per line, separated by whitespace, `,`, `;` or
/// tabs; lines starting with `#` or `%` are comments (gzip allowed).
pub fn read_triplets(path: &Path, opts: &TripletOptions) -> Result<Triplets> {
    parse_triplets(open_text(path)?, path, opts)
}

/// [`read_triplets`] on any reader; `path` names the source in errors.
pub fn parse_triplets<R: BufRead>(
    reader: R,
    path: &Path,
    opts: &TripletOptions,
) -> Result<Triplets> {
    let loc = Loc::new(path);
    let mut lines = Lines::new(reader, path);
    let mut entries = Vec::new();
    let mut seen: HashMap<(usize, usize), usize> = HashMap::new();
    let (mut max_r, mut max_c) = (0usize, 0usize);
    let mut skip_header = opts.header;
    while let Some((ln, line)) = lines.next_line()? {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with('%') {
            continue;
        }
        if skip_header {
            skip_header = false;
            continue;
        }
        let parts: Vec<&str> = t
            .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
            .filter(|s| !s.is_empty())
            .collect();
        let [i, j, v] = parts[..] else {
            return Err(loc.err(
                ln,
                format!("expected 'row col value', got {} fields", parts.len()),
            ));
        };
        let i = loc.index(ln, i, opts.one_based, "row index")?;
        let j = loc.index(ln, j, opts.one_based, "column index")?;
        if opts.nrows.is_some_and(|n| i >= n) || opts.ncols.is_some_and(|n| j >= n) {
            return Err(loc.err(ln, format!("entry ({i}, {j}) outside the given shape")));
        }
        let v = loc.number(ln, entries.len(), j, v, "value")?;
        if let Some(prev) = seen.insert((i, j), ln) {
            return Err(loc.err(
                ln,
                format!("entry ({i}, {j}) repeated (first on line {prev})"),
            ));
        }
        max_r = max_r.max(i.saturating_add(1));
        max_c = max_c.max(j.saturating_add(1));
        entries.push((i, j, v));
    }
    Ok(Triplets {
        nrows: opts.nrows.unwrap_or(max_r),
        ncols: opts.ncols.unwrap_or(max_c),
        entries,
    })
}

/// Pairwise clustering constraints (i, j, s) over `n` items, s = 1 similar / s = 0 dissimilar
/// (GIMC Algorithm 2, DESIGN §3.3).
#[derive(Debug, Clone, PartialEq)]
pub struct Constraints {
    /// Number of items (the largest index + 1 unless given).
    pub n: usize,
    /// The pairs in file order.
    pub pairs: Vec<(usize, usize, f64)>,
}

/// Reads a constraint file: one `i j s` triplet per line (the [`read_triplets`] format, so
/// comments, separators, gzip, `one_based` and `header` work the same), with s = 1 (similar) or
/// 0 (dissimilar). `n` (items) defaults to the largest index + 1; a given `n` bounds both
/// indices. Errors: a malformed line, a repeated (i, j), an index ≥ n, a label other than 0 / 1
/// (each with its line), or no constraints at all.
pub fn read_constraints(path: &Path, n: Option<usize>, one_based: bool) -> Result<Constraints> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut open_text(path)?, &mut text).map_err(|source| {
        crate::DataError::Io {
            path: path.to_path_buf(),
            source,
        }
    })?;
    parse_constraints(&text, path, n, one_based)
}

/// [`read_constraints`] on text already in memory; `path` names the source in errors.
pub fn parse_constraints(
    text: &str,
    path: &Path,
    n: Option<usize>,
    one_based: bool,
) -> Result<Constraints> {
    let opts = TripletOptions {
        one_based,
        header: false,
        nrows: n,
        ncols: n,
    };
    let t = parse_triplets(text.as_bytes(), path, &opts)?;
    // the p-th entry came from the p-th data line (every data line gives exactly one entry)
    let line_of = |p: usize| {
        text.lines()
            .enumerate()
            .filter(|(_, l)| {
                let l = l.trim();
                !(l.is_empty() || l.starts_with('#') || l.starts_with('%'))
            })
            .nth(p)
            .map_or(0, |(ln, _)| ln + 1)
    };
    let parse_err = |line: usize, msg: String| crate::DataError::Parse {
        path: path.to_path_buf(),
        line,
        msg,
    };
    if t.entries.is_empty() {
        return Err(parse_err(0, "no constraints in the file".into()));
    }
    let n = n.unwrap_or(t.nrows.max(t.ncols));
    for (p, &(i, j, s)) in t.entries.iter().enumerate() {
        if i >= n || j >= n {
            return Err(parse_err(
                line_of(p),
                format!("pair ({i}, {j}) names an item >= n = {n}"),
            ));
        }
        if s != 0.0 && s != 1.0 {
            return Err(parse_err(
                line_of(p),
                format!("label {s}; expected 1 (similar) or 0 (dissimilar)"),
            ));
        }
    }
    if let Some((p, msg)) = contradiction(&t.entries, n) {
        return Err(parse_err(line_of(p), msg));
    }
    Ok(Constraints {
        n,
        pairs: t.entries,
    })
}

/// The first cannot-link (label 0) whose two items are joined by must-links (label 1), as
/// (entry position, message): a self cannot-link, a pair given both labels, or a chain
/// i ~ … ~ j of must-links anywhere in the file. Union-find over the must-links, then one pass
/// over the cannot-links.
fn contradiction(pairs: &[(usize, usize, f64)], n: usize) -> Option<(usize, String)> {
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for &(i, j, s) in pairs {
        if s == 1.0 {
            let (a, b) = (root(&mut parent, i), root(&mut parent, j));
            parent[a.max(b)] = a.min(b);
        }
    }
    pairs.iter().enumerate().find_map(|(p, &(i, j, s))| {
        if s != 0.0 {
            return None;
        }
        let msg = if i == j {
            format!("pair ({i}, {j}) says item {i} is dissimilar to itself")
        } else if root(&mut parent, i) == root(&mut parent, j) {
            format!(
                "pair ({i}, {j}) is a cannot-link, but must-links elsewhere in the file join {i} and {j}"
            )
        } else {
            return None;
        };
        Some((p, msg))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DataError;

    fn parse(text: &str, opts: &CsvOptions) -> Result<Dataset> {
        parse_csv(text.as_bytes(), Path::new("inline.csv"), opts)
    }

    #[test]
    fn abalone_like_one_hot_and_values() {
        let text = "Sex,Length,Rings\nM,0.455,15\nF,0.35,7\nI,0.53,9\nM,0.44,10\n";
        let opts = CsvOptions {
            target: Some(ColumnRef::Name("Rings".into())),
            target_kind: TargetKind::Values,
            ..CsvOptions::default()
        };
        let ds = parse(text, &opts).unwrap();
        assert_eq!(ds.feature_names, vec!["Sex=F", "Sex=I", "Sex=M", "Length"]);
        let FeatureMatrix::Dense(x) = &ds.features else {
            panic!()
        };
        assert_eq!(x.nrows(), 4);
        assert_eq!(
            (x[(0, 2)], x[(1, 0)], x[(2, 1)], x[(2, 3)]),
            (1.0, 1.0, 1.0, 0.53)
        );
        assert_eq!(x[(0, 0)] + x[(0, 1)], 0.0);
        assert_eq!(ds.targets, Targets::Values(vec![15.0, 7.0, 9.0, 10.0]));
        let coded = parse(
            text,
            &CsvOptions {
                nominal: NominalEncoding::Code,
                ..opts
            },
        )
        .unwrap();
        let FeatureMatrix::Dense(x) = &coded.features else {
            panic!()
        };
        assert_eq!((x[(0, 0)], x[(1, 0)], x[(2, 0)]), (2.0, 0.0, 1.0));
        // the coded column is nominal; one-hot columns are plain 0/1 features
        assert_eq!(coded.nominal_columns, vec![0]);
        assert!(ds.nominal_columns.is_empty());
        // a nominal column after a numeric one, behind a dropped column
        let text = "Id,Length,Sex,Rings\n1,0.4,M,3\n2,0.5,F,4\n";
        let later = parse(
            text,
            &CsvOptions {
                nominal: NominalEncoding::Code,
                drop: vec![ColumnRef::Name("Id".into())],
                ..CsvOptions::default()
            },
        )
        .unwrap();
        assert_eq!(later.feature_names, vec!["Length", "Sex", "Rings"]);
        assert_eq!(later.nominal_columns, vec![1]);
    }

    #[test]
    fn wine_like_semicolon_quoted_header_classes() {
        let text = "\"fixed acidity\";\"pH\";\"quality\"\n7.4;3.51;5\n7.8;3.2;6\n7.8;3.26;5\n";
        let opts = CsvOptions {
            separator: ';',
            target: Some(ColumnRef::Last),
            ..CsvOptions::default()
        };
        let ds = parse(text, &opts).unwrap();
        assert_eq!(ds.feature_names, vec!["fixed acidity", "pH"]);
        assert_eq!(
            ds.targets,
            Targets::Classes {
                classes: vec![0, 1, 0],
                names: vec!["5".into(), "6".into()]
            }
        );
    }

    #[test]
    fn drop_no_header_and_missing() {
        let text = "1,2,3\n4,,6\n";
        let opts = CsvOptions {
            header: false,
            drop: vec![ColumnRef::Index(0)],
            missing: MissingPolicy::Mask,
            ..CsvOptions::default()
        };
        let ds = parse(text, &opts).unwrap();
        assert_eq!(ds.feature_names, vec!["c1", "c2"]);
        assert_eq!(ds.missing, vec![(1, 0)]);
        let e = parse(
            text,
            &CsvOptions {
                missing: MissingPolicy::Error,
                ..opts
            },
        )
        .unwrap_err();
        assert_eq!(e.line(), Some(2));
    }

    #[test]
    fn csv_errors() {
        let d = CsvOptions::default();
        assert_eq!(parse("a,b\n1,2\n3\n", &d).unwrap_err().line(), Some(3));
        assert_eq!(parse("a,b\n1,\"2\n", &d).unwrap_err().line(), Some(2));
        let e = parse("a,b\n1,2\n1,inf\n", &d).unwrap_err();
        assert!(
            matches!(
                e,
                DataError::NonFinite {
                    row: 1,
                    col: 1,
                    line: 3,
                    ..
                }
            ),
            "{e}"
        );
        assert!(
            parse(
                "a,b\n1,2\n",
                &CsvOptions {
                    target: Some(ColumnRef::Name("zz".into())),
                    ..d.clone()
                }
            )
            .is_err()
        );
        assert_eq!(parse("", &d).unwrap_err().line(), Some(1));
    }

    #[test]
    fn column_turning_nominal_late() {
        let ds = parse("a\n1\nx\n1\n", &CsvOptions::default()).unwrap();
        assert_eq!(ds.feature_names, vec!["a=1", "a=x"]);
        let FeatureMatrix::Dense(x) = &ds.features else {
            panic!()
        };
        assert_eq!((x[(0, 0)], x[(1, 1)], x[(2, 0)]), (1.0, 1.0, 1.0));
    }

    #[test]
    fn triplets() {
        let text = "# r c v\n0 1 2.5\n2,0,-1\n\n1;1;3\n";
        let t = parse_triplets(
            text.as_bytes(),
            Path::new("t.txt"),
            &TripletOptions::default(),
        )
        .unwrap();
        assert_eq!((t.nrows, t.ncols), (3, 2));
        assert_eq!(t.entries, vec![(0, 1, 2.5), (2, 0, -1.0), (1, 1, 3.0)]);
        let one = parse_triplets(
            "i j v\n1 1 1\n".as_bytes(),
            Path::new("t"),
            &TripletOptions {
                one_based: true,
                header: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(one.entries, vec![(0, 0, 1.0)]);
        for (text, line) in [
            ("0 0 1\n0 0 2\n", 2),
            ("0 0\n", 1),
            ("0 0 nan\n", 1),
            ("a 0 1\n", 1),
        ] {
            let e = parse_triplets(text.as_bytes(), Path::new("t"), &TripletOptions::default())
                .unwrap_err();
            assert_eq!(e.line(), Some(line), "{text:?}");
        }
        let e = parse_triplets(
            "0 0 1\n".as_bytes(),
            Path::new("t"),
            &TripletOptions {
                one_based: true,
                ..Default::default()
            },
        )
        .unwrap_err();
        assert_eq!(e.line(), Some(1));
    }

    #[test]
    fn constraints_read_and_validate() {
        let p = Path::new("c.txt");
        let c = parse_constraints("# i j s\n0 1 1\n2 3 0\n", p, None, false).unwrap();
        assert_eq!(c.n, 4);
        assert_eq!(c.pairs, vec![(0, 1, 1.0), (2, 3, 0.0)]);
        let c = parse_constraints("1 2 1\n", p, Some(5), true).unwrap();
        assert_eq!((c.n, c.pairs.clone()), (5, vec![(0, 1, 1.0)]));
        match parse_constraints("0 1 1\n\n# c\n2 3 0.5\n", p, None, false) {
            Err(crate::DataError::Parse { line, msg, .. }) => {
                assert_eq!(line, 4);
                assert!(msg.contains("0.5"), "{msg}");
            }
            other => panic!("expected a parse error, got {other:?}"),
        }
        assert!(parse_constraints("0 9 1\n", p, Some(4), false).is_err());
        // contradictions name their line: a self cannot-link, a pair with both labels, a chain
        let line = |text: &str| match parse_constraints(text, p, None, false) {
            Err(DataError::Parse { line, msg, .. }) => (line, msg),
            other => panic!("expected a parse error, got {other:?}"),
        };
        assert_eq!(line("0 1 1\n4 4 0\n").0, 2);
        assert_eq!(line("0 1 0\n1 0 1\n").0, 1);
        let (l, msg) = line("0 1 1\n# c\n1 2 1\n5 6 0\n2 0 0\n");
        assert_eq!(l, 5, "{msg}");
        assert!(msg.contains("must-links"), "{msg}");
        // must-links alone, or cannot-links across components, are consistent
        assert!(parse_constraints("0 1 1\n1 2 1\n2 3 0\n3 4 1\n", p, None, false).is_ok());
        assert!(parse_constraints("2 2 1\n", p, None, false).is_ok());
        assert!(parse_constraints("# nothing\n", p, None, false).is_err());
        assert!(parse_constraints("0 1\n", p, None, false).is_err());
    }
}
