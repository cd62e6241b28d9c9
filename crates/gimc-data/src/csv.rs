//! Delimited-text readers (DESIGN §6): CSV with a chosen separator, optional header line, a
//! chosen target column, dropped columns and nominal columns (one-hot or coded), and
//! `(row, column, value)` triplet files for partially observed matrices.
//!
//! CSV fields may be double-quoted (`""` is a quote inside); a quoted field cannot span lines.
//! A column is nominal when most of its cells (more than half of those not missing) are not
//! numbers (abalone's `Sex`); its numbers are then categories like its other values, numbered
//! with them in sorted order. A column of numbers with a few other cells is an error naming the
//! first such cell (`data.csv:57: column `x` is numeric in 56 rows but `abc` here`): a typo
//! must not silently turn a measurement into one-hot categories. Missing cells (empty, `?`,
//! `NA`) follow the [`MissingPolicy`].
//!
//! Targets: one class or value column ([`CsvOptions::target`]), or several 0/1 label columns
//! ([`CsvOptions::label_columns`]) giving multi-label targets. Without a target, a nominal
//! column that looks like a class can be refused rather than encoded into the features
//! ([`CsvOptions::refuse_class_like`]).

use std::collections::{BTreeSet, HashMap};
use std::io::BufRead;
use std::path::Path;

use gimc_linalg::FeatureMatrix;
use gimc_linalg::faer::Mat;

use crate::io::{ClassInterner, CsrBuilder, Lines, Loc, open_text, parse_num, split_fields};
use crate::{Dataset, MissingPolicy, Result, Targets};

/// A column chosen by name (needs a header), 0-based position, or as the last column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnRef {
    /// By header name. Without a header, `c<i>` (the name a header-less file's column gets)
    /// is column i.
    Name(String),
    /// By 0-based position.
    Index(usize),
    /// The last column.
    Last,
}

impl ColumnRef {
    /// `last`, a 0-based index (all digits), or a header name.
    pub fn parse(s: &str) -> Self {
        let s = s.trim();
        match s {
            "last" => Self::Last,
            _ => s
                .parse::<usize>()
                .map_or_else(|_| Self::Name(s.to_string()), Self::Index),
        }
    }
}

/// Consecutive columns from `first` to `last`, both included (one column when they are the
/// same).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnRange {
    /// The first column.
    pub first: ColumnRef,
    /// The last column (at or after `first`).
    pub last: ColumnRef,
}

impl ColumnRange {
    /// The single column `c`.
    pub fn one(c: ColumnRef) -> Self {
        Self {
            first: c.clone(),
            last: c,
        }
    }

    /// A comma-separated list of columns and ranges `A..B` (both ends included), each end a
    /// header name, a 0-based index or `last` ([`ColumnRef::parse`]): `l0,l1,l2`, `3..7`,
    /// `l0..l3`. Empty items are skipped.
    pub fn parse_list(s: &str) -> Vec<Self> {
        s.split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(|t| match t.split_once("..") {
                Some((a, b)) => Self {
                    first: ColumnRef::parse(a),
                    last: ColumnRef::parse(b),
                },
                None => Self::one(ColumnRef::parse(t)),
            })
            .collect()
    }
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
    /// Multi-label targets: these columns, in this order, are the labels (one per column,
    /// named by the header); a cell is a positive when it is a non-zero number or `true`, a
    /// negative when it is 0 or `false` (case ignored). Exclusive with `target`.
    pub label_columns: Vec<ColumnRange>,
    /// Without a target (`target` and `label_columns` unset): refuse a nominal feature column
    /// that looks like a class ([`DataError::ClassLikeColumn`](crate::DataError)) rather than
    /// encode it. A column looks like a class when it is named `class`, `label`, `labels`,
    /// `species`, `target`, `y` or `category` (case ignored), or has at most 20 distinct
    /// values, each in two rows or more on average.
    pub refuse_class_like: bool,
    /// Columns kept as features even when they look like a class.
    pub keep: Vec<ColumnRef>,
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
            label_columns: Vec::new(),
            refuse_class_like: false,
            keep: Vec::new(),
        }
    }
}

/// Reads a CSV file (gzip allowed).
pub fn read_csv(path: &Path, opts: &CsvOptions) -> Result<Dataset> {
    parse_csv(open_text(path)?, path, opts)
}

/// The column names of a CSV file as [`read_csv`] names them: its header (after the
/// separator of `opts`), or `c0`, `c1`, … without one. Reads only the first non-empty line.
pub fn read_csv_columns(path: &Path, opts: &CsvOptions) -> Result<Vec<String>> {
    let loc = Loc::new(path);
    let mut lines = Lines::new(open_text(path)?, path);
    Ok(match read_head(&mut lines, &loc, opts)? {
        (Some(header), _, _) => header,
        (None, _, n) => (0..n).map(|c| format!("c{c}")).collect(),
    })
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

/// A feature column as it is read: numbers until a cell is not one, then categories; with the
/// counts that decide at the end whether it is nominal.
struct Column {
    values: Col,
    /// Cells (not missing) that are finite numbers.
    numbers: usize,
    /// Cells (not missing) that are not.
    texts: usize,
    /// The line and text of the first cell that is not a number.
    first_text: Option<(usize, String)>,
}

impl Column {
    fn new() -> Self {
        Self {
            values: Col::Num(Vec::new()),
            numbers: 0,
            texts: 0,
            first_text: None,
        }
    }

    fn push_missing(&mut self) {
        match &mut self.values {
            Col::Num(v) => v.push(0.0),
            Col::Cat { codes, .. } => codes.push(MISSING_CODE),
        }
    }

    /// Adds a present cell; `missing_rows` lists this column's missing rows so far (for the
    /// switch to categories). Errors: a NaN or infinity while the column is numeric.
    fn push(
        &mut self,
        s: &str,
        at: (&Loc, usize, usize, usize),
        missing_rows: impl Fn() -> BTreeSet<usize>,
    ) -> Result<()> {
        let (loc, ln, r, k) = at;
        let num = parse_num(s);
        if let (Col::Num(_), Some(x)) = (&self.values, num)
            && !x.is_finite()
        {
            return Err(loc.non_finite(ln, r, k, x));
        }
        match num.filter(|x| x.is_finite()) {
            Some(x) => {
                self.numbers += 1;
                match &mut self.values {
                    Col::Num(v) => v.push(x),
                    // a number among categories is the category of its canonical text
                    Col::Cat { codes, names, ids } => {
                        Col::intern(codes, names, ids, &x.to_string())
                    }
                }
            }
            None => {
                self.texts += 1;
                self.first_text.get_or_insert_with(|| (ln, s.to_string()));
                if let Col::Num(v) = &self.values {
                    self.values = categories_of(v, &missing_rows());
                }
                if let Col::Cat { codes, names, ids } = &mut self.values {
                    Col::intern(codes, names, ids, s);
                }
            }
        }
        Ok(())
    }

    /// Refuses a column of numbers with a few other cells: nominal needs more than half of the
    /// present cells to be non-numbers.
    fn check_nominal(&self, loc: &Loc, name: &str) -> Result<()> {
        let Some((ln, text)) = &self.first_text else {
            return Ok(());
        };
        if self.texts > self.numbers {
            return Ok(());
        }
        let others = match self.texts - 1 {
            0 => String::new(),
            1 => " (and in 1 other row)".to_string(),
            n => format!(" (and in {n} other rows)"),
        };
        Err(loc.err(
            *ln,
            format!(
                "column `{name}` is numeric in {} rows but `{text}` here{others}",
                self.numbers
            ),
        ))
    }

    /// The number of distinct categories (0 for a numeric column).
    fn categories(&self) -> usize {
        match &self.values {
            Col::Num(_) => 0,
            Col::Cat { names, .. } => names.len(),
        }
    }
}

/// The numbers read so far as categories (the cells in `missing` stay missing).
fn categories_of(v: &[f64], missing: &BTreeSet<usize>) -> Col {
    let mut codes = Vec::with_capacity(v.len() + 1);
    let mut names = Vec::new();
    let mut ids = HashMap::new();
    for (i, &x) in v.iter().enumerate() {
        if missing.contains(&i) {
            codes.push(MISSING_CODE);
        } else {
            Col::intern(&mut codes, &mut names, &mut ids, &x.to_string());
        }
    }
    Col::Cat { codes, names, ids }
}

/// Column names that say a column holds classes.
const CLASS_LIKE_NAMES: [&str; 7] = [
    "class", "label", "labels", "species", "target", "y", "category",
];

/// At most this many distinct values make a nominal column look like a class.
const CLASS_LIKE_VALUES: usize = 20;

/// Whether a nominal column named `name` with `values` distinct values over `rows` rows
/// looks like a class ([`CsvOptions::refuse_class_like`]).
fn looks_like_class(name: &str, values: usize, rows: usize) -> bool {
    let named = CLASS_LIKE_NAMES
        .iter()
        .any(|c| name.trim().eq_ignore_ascii_case(c));
    named || (values <= CLASS_LIKE_VALUES && values * 2 <= rows)
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
        ColumnRef::Name(name) => match header {
            Some(h) => h.iter().position(|c| c == name),
            // a header-less file's columns are named c0, c1, …
            None => name
                .strip_prefix('c')
                .and_then(|i| i.parse::<usize>().ok())
                .filter(|&i| i < ncols),
        }
        .ok_or_else(|| loc.err(ln, format!("no column named {name:?}"))),
    }
}

/// The columns of a range, in order.
fn resolve_range(
    r: &ColumnRange,
    header: Option<&[String]>,
    ncols: usize,
    loc: &Loc,
    ln: usize,
) -> Result<Vec<usize>> {
    let first = resolve(&r.first, header, ncols, loc, ln)?;
    let last = resolve(&r.last, header, ncols, loc, ln)?;
    if last < first {
        return Err(loc.err(
            ln,
            format!("column range ends (column {last}) before it starts (column {first})"),
        ));
    }
    Ok((first..=last).collect())
}

/// The roles of the columns, fixed by the header (or the first row) and the options.
struct Layout {
    ncols: usize,
    target: Option<usize>,
    /// Label columns, in label order, and their names.
    labels: Vec<usize>,
    label_names: Vec<String>,
    /// Feature columns, their names, and whether each is kept even if it looks like a class.
    kept: Vec<usize>,
    names: Vec<String>,
    keep: Vec<bool>,
}

impl Layout {
    fn new(
        header: Option<&[String]>,
        ncols: usize,
        opts: &CsvOptions,
        loc: &Loc,
        at: usize,
    ) -> Result<Self> {
        let name_of = |c: usize| header.map_or_else(|| format!("c{c}"), |h| h[c].clone());
        if opts.target.is_some() && !opts.label_columns.is_empty() {
            return Err(loc.err(at, "a class column and label columns are exclusive"));
        }
        let target = opts
            .target
            .as_ref()
            .map(|t| resolve(t, header, ncols, loc, at))
            .transpose()?;
        let mut role: Vec<Option<&str>> = vec![None; ncols];
        if let Some(t) = target {
            role[t] = Some("the class column");
        }
        let mut labels = Vec::new();
        for r in &opts.label_columns {
            for c in resolve_range(r, header, ncols, loc, at)? {
                if let Some(was) = role[c] {
                    return Err(loc.err(
                        at,
                        format!("label column `{}` is already {was}", name_of(c)),
                    ));
                }
                role[c] = Some("a label column");
                labels.push(c);
            }
        }
        let mut dropped = role.iter().map(Option::is_some).collect::<Vec<_>>();
        for d in &opts.drop {
            dropped[resolve(d, header, ncols, loc, at)?] = true;
        }
        let mut keep_col = vec![false; ncols];
        for k in &opts.keep {
            let c = resolve(k, header, ncols, loc, at)?;
            if let Some(was) = role[c] {
                return Err(loc.err(
                    at,
                    format!(
                        "column `{}` is {was}, so it cannot be kept as features",
                        name_of(c)
                    ),
                ));
            }
            keep_col[c] = true;
        }
        let kept: Vec<usize> = (0..ncols).filter(|&c| !dropped[c]).collect();
        Ok(Self {
            ncols,
            target,
            label_names: labels.iter().map(|&c| name_of(c)).collect(),
            labels,
            names: kept.iter().map(|&c| name_of(c)).collect(),
            keep: kept.iter().map(|&c| keep_col[c]).collect(),
            kept,
        })
    }
}

/// Reads the first non-empty line: the header, or the first data row (with its line).
#[allow(clippy::type_complexity)]
fn read_head<R: BufRead>(
    lines: &mut Lines<R>,
    loc: &Loc,
    opts: &CsvOptions,
) -> Result<(Option<Vec<String>>, Option<(usize, Vec<String>)>, usize)> {
    while let Some((ln, line)) = lines.next_line()? {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<String> = split_fields(line, opts.separator, false)
            .map_err(|m| loc.err(ln, m))?
            .into_iter()
            .map(|c| c.into_owned())
            .collect();
        let n = fields.len();
        return Ok(if opts.header {
            (Some(fields), None, n)
        } else {
            (None, Some((ln, fields)), n)
        });
    }
    Err(loc.err(lines.count(), "empty file"))
}

/// Whether a label cell is a positive: a non-zero number or `true` (case ignored); 0 and
/// `false` are negatives, anything else an error.
fn label_cell(loc: &Loc, ln: usize, name: &str, s: &str) -> Result<bool> {
    if s.eq_ignore_ascii_case("true") {
        return Ok(true);
    }
    if s.eq_ignore_ascii_case("false") {
        return Ok(false);
    }
    match parse_num(s) {
        Some(v) if v.is_finite() => Ok(v != 0.0),
        _ => Err(loc.err(
            ln,
            format!("label column `{name}` holds `{s}`; expected 0 / 1, a number or true / false"),
        )),
    }
}

/// The rows' values as they are read.
struct Rows<'a> {
    layout: &'a Layout,
    opts: &'a CsvOptions,
    loc: &'a Loc,
    cols: Vec<Column>,
    classes: ClassInterner,
    values: Vec<f64>,
    labels: CsrBuilder,
    /// (row, kept-column index) of the missing feature cells.
    missing: Vec<(usize, usize)>,
    missing_labels: Vec<(usize, usize)>,
    unlabeled: Vec<usize>,
    nrows: usize,
}

impl<'a> Rows<'a> {
    fn new(layout: &'a Layout, opts: &'a CsvOptions, loc: &'a Loc) -> Self {
        Self {
            cols: layout.kept.iter().map(|_| Column::new()).collect(),
            labels: CsrBuilder::new(layout.labels.len()),
            layout,
            opts,
            loc,
            classes: ClassInterner::default(),
            values: Vec::new(),
            missing: Vec::new(),
            missing_labels: Vec::new(),
            unlabeled: Vec::new(),
            nrows: 0,
        }
    }

    fn missing_cell(&self, s: &str) -> bool {
        is_missing_token(s, &self.opts.missing_tokens)
    }

    fn row(&mut self, ln: usize, fields: &[&str]) -> Result<()> {
        let ncols = self.layout.ncols;
        if fields.len() != ncols {
            return Err(self
                .loc
                .err(ln, format!("{} fields, expected {ncols}", fields.len())));
        }
        if let Some(t) = self.layout.target {
            self.target(ln, fields[t])?;
        }
        if !self.layout.labels.is_empty() {
            self.label_row(ln, fields)?;
        }
        for k in 0..self.layout.kept.len() {
            self.feature(ln, k, fields[self.layout.kept[k]])?;
        }
        self.nrows += 1;
        Ok(())
    }

    fn target(&mut self, ln: usize, s: &str) -> Result<()> {
        let r = self.nrows;
        if self.missing_cell(s) {
            if self.opts.missing == MissingPolicy::Error {
                return Err(self.loc.err(ln, "missing target value"));
            }
            // an unlabelled row: a placeholder target, the row recorded
            self.unlabeled.push(r);
            match self.opts.target_kind {
                TargetKind::Classes => self.classes.push_unlabeled(),
                TargetKind::Values => self.values.push(0.0),
            }
            return Ok(());
        }
        match self.opts.target_kind {
            TargetKind::Classes => self.classes.push(s),
            TargetKind::Values => {
                let t = self.layout.target.unwrap_or(0);
                self.values.push(self.loc.number(ln, r, t, s, "target")?);
            }
        }
        Ok(())
    }

    fn label_row(&mut self, ln: usize, fields: &[&str]) -> Result<()> {
        let r = self.nrows;
        let mut row = Vec::new();
        let mut absent = 0;
        for (l, &c) in self.layout.labels.iter().enumerate() {
            let s = fields[c];
            let name = &self.layout.label_names[l];
            if self.missing_cell(s) {
                if self.opts.missing == MissingPolicy::Error {
                    return Err(self
                        .loc
                        .err(ln, format!("missing value in label column `{name}`")));
                }
                self.missing_labels.push((r, l));
                absent += 1;
            } else if label_cell(self.loc, ln, name, s)? {
                row.push((l, 1.0));
            }
        }
        if absent == self.layout.labels.len() {
            self.unlabeled.push(r);
        }
        self.labels
            .push_row(&mut row)
            .map_err(|m| self.loc.err(ln, m))
    }

    fn feature(&mut self, ln: usize, k: usize, s: &str) -> Result<()> {
        let r = self.nrows;
        if self.missing_cell(s) {
            if self.opts.missing == MissingPolicy::Error {
                return Err(self.loc.err(
                    ln,
                    format!("missing value in column {} (row {r})", self.layout.names[k]),
                ));
            }
            self.missing.push((r, k));
            self.cols[k].push_missing();
            return Ok(());
        }
        let missing = &self.missing;
        let rows = || missing.iter().filter(|m| m.1 == k).map(|m| m.0).collect();
        self.cols[k].push(s, (self.loc, ln, r, k), rows)
    }

    /// Checks every feature column (numeric with a few other cells; a class-like column
    /// without a target) once all rows are read.
    fn check_columns(&self, path: &Path) -> Result<()> {
        for (k, col) in self.cols.iter().enumerate() {
            col.check_nominal(self.loc, &self.layout.names[k])?;
        }
        let no_target = self.layout.target.is_none() && self.layout.labels.is_empty();
        if !(self.opts.refuse_class_like && no_target) {
            return Ok(());
        }
        for (k, col) in self.cols.iter().enumerate() {
            let values = col.categories();
            let name = &self.layout.names[k];
            if values > 0 && !self.layout.keep[k] && looks_like_class(name, values, self.nrows) {
                return Err(crate::DataError::ClassLikeColumn {
                    path: path.to_path_buf(),
                    column: name.clone(),
                    values,
                });
            }
        }
        Ok(())
    }
}

/// [`read_csv`] on any reader; `path` names the source in errors.
pub fn parse_csv<R: BufRead>(reader: R, path: &Path, opts: &CsvOptions) -> Result<Dataset> {
    let loc = Loc::new(path);
    let mut lines = Lines::new(reader, path);
    let (header, first_row, ncols) = read_head(&mut lines, &loc, opts)?;
    let layout = Layout::new(header.as_deref(), ncols, opts, &loc, lines.count())?;
    let mut rows = Rows::new(&layout, opts, &loc);
    let mut last_line = 0;
    if let Some((ln, fields)) = &first_row {
        let refs: Vec<&str> = fields.iter().map(String::as_str).collect();
        rows.row(*ln, &refs)?;
        last_line = *ln;
    }
    while let Some((ln, line)) = lines.next_line()? {
        if line.trim().is_empty() {
            continue;
        }
        let fields = split_fields(line, opts.separator, false).map_err(|m| loc.err(ln, m))?;
        let refs: Vec<&str> = fields.iter().map(|c| c.as_ref()).collect();
        rows.row(ln, &refs)?;
        last_line = ln;
    }
    if layout.target.is_some() && opts.target_kind == TargetKind::Classes {
        require_a_class(&loc, last_line, rows.nrows, rows.unlabeled.len())?;
    }
    rows.check_columns(path)?;
    let name = path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let name = name
        .strip_suffix(".csv")
        .map(str::to_string)
        .unwrap_or(name);
    assemble(rows, name, &loc, last_line)
}

/// The data set from the rows read: feature columns encoded, targets finished.
fn assemble(rows: Rows<'_>, name: String, loc: &Loc, last_line: usize) -> Result<Dataset> {
    let (layout, opts, nrows) = (rows.layout, rows.opts, rows.nrows);
    let mut out = Encoded::default();
    for (k, col) in rows.cols.into_iter().enumerate() {
        out.add(col.values, &layout.names[k], opts.nominal);
    }
    let x = Mat::from_fn(nrows, out.cols.len(), |i, j| out.cols[j][i]);
    let mut missing: Vec<(usize, usize)> = rows
        .missing
        .iter()
        .flat_map(|&(r, k)| out.map[k].iter().map(move |&c| (r, c)))
        .collect();
    missing.sort_unstable();
    let targets = if !layout.labels.is_empty() {
        Targets::Labels {
            matrix: rows.labels.finish().map_err(|m| loc.err(last_line, m))?,
            names: layout.label_names.clone(),
        }
    } else {
        match (layout.target, opts.target_kind) {
            (None, _) => Targets::None,
            (Some(_), TargetKind::Classes) => {
                let (classes, names) = rows.classes.finish();
                Targets::Classes { classes, names }
            }
            (Some(_), TargetKind::Values) => Targets::Values(rows.values),
        }
    };
    let mut missing_labels = rows.missing_labels;
    missing_labels.sort_unstable();
    Ok(Dataset {
        name,
        features: FeatureMatrix::Dense(x),
        targets,
        feature_names: out.names,
        missing,
        unlabeled: rows.unlabeled,
        missing_labels,
        nominal_columns: out.nominal,
    })
}

/// The encoded feature columns.
#[derive(Default)]
struct Encoded {
    cols: Vec<Vec<f64>>,
    names: Vec<String>,
    nominal: Vec<usize>,
    /// Per read column, its output columns.
    map: Vec<Vec<usize>>,
}

impl Encoded {
    fn add(&mut self, col: Col, name: &str, encoding: NominalEncoding) {
        let base = self.cols.len();
        let Col::Cat {
            codes, names: cats, ..
        } = col
        else {
            if let Col::Num(v) = col {
                self.map.push(vec![base]);
                self.cols.push(v);
                self.names.push(name.to_string());
            }
            return;
        };
        let mut order: Vec<usize> = (0..cats.len()).collect();
        order.sort_by(|&a, &b| cats[a].cmp(&cats[b]));
        let mut rank = vec![0usize; cats.len()];
        for (pos, &id) in order.iter().enumerate() {
            rank[id] = pos;
        }
        match encoding {
            NominalEncoding::Code => {
                self.nominal.push(base);
                self.map.push(vec![base]);
                self.cols.push(
                    codes
                        .iter()
                        .map(|&c| match c {
                            MISSING_CODE => 0.0,
                            c => rank[c as usize] as f64,
                        })
                        .collect(),
                );
                self.names.push(name.to_string());
            }
            NominalEncoding::OneHot => {
                self.map.push((base..base + cats.len()).collect());
                for &id in &order {
                    self.cols.push(
                        codes
                            .iter()
                            .map(|&c| if c as usize == id { 1.0 } else { 0.0 })
                            .collect(),
                    );
                    self.names.push(format!("{name}={}", cats[id]));
                }
            }
        }
    }
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
    let text = crate::io::strip_bom(text);
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
    if let Some((p, msg)) = contradiction(&t.entries) {
        return Err(parse_err(line_of(p), msg));
    }
    Ok(Constraints {
        n,
        pairs: t.entries,
    })
}

/// The first cannot-link (label 0) whose two items are joined by must-links (label 1), as
/// (entry position, message): a self cannot-link, a pair given both labels, or a chain
/// i ~ … ~ j of must-links anywhere in the file. Union-find over the items that appear in the
/// file (O(pairs) memory, whatever the item numbers), then one pass over the cannot-links.
fn contradiction(pairs: &[(usize, usize, f64)]) -> Option<(usize, String)> {
    let mut id: HashMap<usize, usize> = HashMap::new();
    let mut parent: Vec<usize> = Vec::new();
    let mut node = |item: usize| {
        *id.entry(item).or_insert_with(|| {
            parent.push(parent.len());
            parent.len() - 1
        })
    };
    let nodes: Vec<(usize, usize)> = pairs.iter().map(|&(i, j, _)| (node(i), node(j))).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for (&(a, b), &(_, _, s)) in nodes.iter().zip(pairs) {
        if s == 1.0 {
            let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
            parent[ra.max(rb)] = ra.min(rb);
        }
    }
    pairs.iter().zip(&nodes).enumerate().find_map(|(p, (&(i, j, s), &(a, b)))| {
        if s != 0.0 {
            return None;
        }
        let msg = if i == j {
            format!("pair ({i}, {j}) says item {i} is dissimilar to itself")
        } else if root(&mut parent, a) == root(&mut parent, b) {
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
    fn a_column_is_nominal_only_when_most_cells_are_not_numbers() {
        // three text cells, two numbers: nominal; `1.0` (read before the switch) and `1`
        // (after it) are the same category
        let ds = parse("a\n1.0\nx\ny\n1\nz\n", &CsvOptions::default()).unwrap();
        assert_eq!(ds.feature_names, vec!["a=1", "a=x", "a=y", "a=z"]);
        let FeatureMatrix::Dense(x) = &ds.features else {
            panic!()
        };
        assert_eq!(
            (x[(0, 0)], x[(3, 0)], x[(1, 1)], x[(4, 3)]),
            (1.0, 1.0, 1.0, 1.0)
        );
        // a typo in a numeric column names the file, line, column and cell
        let text = "x,b\n1,2\n3,4\nabc,5\n6,7\n";
        let e = parse(text, &CsvOptions::default()).unwrap_err();
        assert_eq!(e.line(), Some(4), "{e}");
        assert!(
            e.to_string()
                .contains("inline.csv:4: column `x` is numeric in 3 rows but `abc` here"),
            "{e}"
        );
        let e = parse("x\n1\nabc\n2\nq\n3\n", &CsvOptions::default()).unwrap_err();
        assert!(
            e.to_string().ends_with("`abc` here (and in 1 other row)"),
            "{e}"
        );
        // as many numbers as other cells is not "most"
        let e = parse("x\nabc\n1\n", &CsvOptions::default()).unwrap_err();
        assert_eq!(e.line(), Some(2), "{e}");
        // missing cells count for neither side
        let masked = CsvOptions {
            missing: MissingPolicy::Mask,
            ..CsvOptions::default()
        };
        let ds = parse("x\nabc\n?\n\"\"\n1\nq\n", &masked).unwrap();
        assert_eq!(ds.feature_names, vec!["x=1", "x=abc", "x=q"]);
        assert_eq!(
            ds.missing,
            vec![(1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2)]
        );
    }

    #[test]
    fn label_columns_give_multi_label_targets() {
        let text = "f,l0,l1,l2,g\n0.5,1,0,true,2\n1.5,0,0,FALSE,3\n2.5,0,2,0,4\n";
        let opts = |spec: &str| CsvOptions {
            label_columns: ColumnRange::parse_list(spec),
            ..CsvOptions::default()
        };
        for spec in ["l0,l1,l2", "1..3", "l0..l2", "l0, 2..l2"] {
            let ds = parse(text, &opts(spec)).unwrap();
            assert_eq!(ds.feature_names, vec!["f", "g"], "{spec}");
            let Targets::Labels { matrix, names } = &ds.targets else {
                panic!("{spec}: labels expected")
            };
            assert_eq!(names, &["l0", "l1", "l2"], "{spec}");
            assert_eq!(matrix.nnz(), 3, "{spec}");
            assert_eq!(
                (matrix.get(0, 0), matrix.get(0, 2), matrix.get(2, 1)),
                (Some(&1.0), Some(&1.0), Some(&1.0))
            );
            assert_eq!(matrix.outer_view(1).unwrap().nnz(), 0);
        }
        // label order follows the list
        let ds = parse(text, &opts("l2,l0")).unwrap();
        assert_eq!(ds.labels().unwrap().get(0, 0), Some(&1.0));
        assert_eq!(ds.feature_names, vec!["f", "l1", "g"]);
        // header-less files name their columns c0, c1, …
        let ds = parse(
            "0.5,1,0\n1.5,0,1\n",
            &CsvOptions {
                header: false,
                ..opts("c1..c2")
            },
        )
        .unwrap();
        assert_eq!(ds.feature_names, vec!["c0"]);
        assert_eq!(ds.labels().unwrap().nnz(), 2);
        for (spec, needle) in [
            ("l0,zz", "no column named \"zz\""),
            ("l2..l0", "column range ends"),
            ("l0,l0", "label column `l0` is already a label column"),
        ] {
            let e = parse(text, &opts(spec)).unwrap_err();
            assert!(e.to_string().contains(needle), "{spec}: {e}");
        }
        let e = parse("f,l\n1,yes\n", &opts("l")).unwrap_err();
        assert_eq!(e.line(), Some(2));
        assert!(
            e.to_string().contains("label column `l` holds `yes`"),
            "{e}"
        );
        let e = parse("f,l\n1,\n", &opts("l")).unwrap_err();
        assert!(
            e.to_string().contains("missing value in label column `l`"),
            "{e}"
        );
        let both = CsvOptions {
            target: Some(ColumnRef::Name("g".into())),
            ..opts("l0")
        };
        assert!(parse(text, &both).is_err());
        // masked label cells: a row with every label missing is unlabelled
        let masked = CsvOptions {
            missing: MissingPolicy::Mask,
            ..opts("l0,l1")
        };
        let ds = parse("f,l0,l1\n1,1,?\n2,?,?\n", &masked).unwrap();
        assert_eq!(ds.missing_labels, vec![(0, 1), (1, 0), (1, 1)]);
        assert_eq!(ds.unlabeled, vec![1]);
    }

    #[test]
    fn class_like_columns_are_refused_unless_kept_or_named_as_the_target() {
        let mut iris = String::from("sepal,petal,species\n");
        for i in 0..12 {
            iris.push_str(&format!(
                "{}.5,{i},{}\n",
                i % 4,
                ["setosa", "virginica"][i % 2]
            ));
        }
        let refuse = CsvOptions {
            refuse_class_like: true,
            ..CsvOptions::default()
        };
        let e = parse(&iris, &refuse).unwrap_err();
        assert!(
            matches!(&e, DataError::ClassLikeColumn { column, values: 2, .. } if column == "species"),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            "inline.csv: column `species` looks like a class (2 values)"
        );
        // kept as features, or named as the target: read
        let kept = CsvOptions {
            keep: vec![ColumnRef::Name("species".into())],
            ..refuse.clone()
        };
        assert_eq!(parse(&iris, &kept).unwrap().ncols(), 4);
        let target = CsvOptions {
            target: Some(ColumnRef::Last),
            ..refuse.clone()
        };
        assert_eq!(parse(&iris, &target).unwrap().ncols(), 2);
        // not refused unless asked (library default)
        assert_eq!(parse(&iris, &CsvOptions::default()).unwrap().ncols(), 4);
        // many distinct values: a categorical feature, not a class; a class-like name is
        // refused whatever its count
        let mut ids = String::from("x,name\n");
        for i in 0..12 {
            ids.push_str(&format!("{i},n{i}\n"));
        }
        assert_eq!(parse(&ids, &refuse).unwrap().ncols(), 13);
        let named = ids.replace("x,name", "x,Label");
        let e = parse(&named, &refuse).unwrap_err();
        assert!(
            e.to_string()
                .contains("column `Label` looks like a class (12 values)"),
            "{e}"
        );
        // a kept column must exist and must not be the target
        let bad = CsvOptions {
            keep: vec![ColumnRef::Name("zz".into())],
            ..refuse.clone()
        };
        assert!(parse(&iris, &bad).is_err());
        let clash = CsvOptions {
            keep: vec![ColumnRef::Last],
            ..target
        };
        let e = parse(&iris, &clash).unwrap_err();
        assert!(e.to_string().contains("cannot be kept as features"), "{e}");
    }

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_first_column_name() {
        let ds = parse(
            "\u{feff}label,x\na,1\nb,2\n",
            &CsvOptions {
                target: Some(ColumnRef::Name("label".into())),
                ..CsvOptions::default()
            },
        )
        .unwrap();
        assert_eq!(ds.feature_names, vec!["x"]);
        let c = parse_constraints(
            "\u{feff}# i j s\n0 1 1\n2 3 0.5\n",
            Path::new("c"),
            None,
            false,
        )
        .unwrap_err();
        assert_eq!(c.line(), Some(3), "{c}");
    }

    #[test]
    fn the_columns_of_a_file_are_its_header_or_positions() {
        let path = std::env::temp_dir().join(format!("gimc-csv-cols-{}.csv", std::process::id()));
        std::fs::write(&path, "\u{feff}\n\"a b\";c\n1;2\n").unwrap();
        let semi = CsvOptions {
            separator: ';',
            ..CsvOptions::default()
        };
        assert_eq!(read_csv_columns(&path, &semi).unwrap(), ["a b", "c"]);
        let plain = CsvOptions {
            header: false,
            ..semi
        };
        assert_eq!(read_csv_columns(&path, &plain).unwrap(), ["c0", "c1"]);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn column_refs_and_ranges_parse() {
        assert_eq!(ColumnRef::parse(" last "), ColumnRef::Last);
        assert_eq!(ColumnRef::parse("3"), ColumnRef::Index(3));
        assert_eq!(ColumnRef::parse("l3"), ColumnRef::Name("l3".into()));
        assert_eq!(
            ColumnRange::parse_list("a, 3..7,,l0..last"),
            vec![
                ColumnRange::one(ColumnRef::Name("a".into())),
                ColumnRange {
                    first: ColumnRef::Index(3),
                    last: ColumnRef::Index(7)
                },
                ColumnRange {
                    first: ColumnRef::Name("l0".into()),
                    last: ColumnRef::Last
                },
            ]
        );
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
