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

mod triplets;

pub use triplets::{
    Constraints, TripletOptions, Triplets, parse_constraints, parse_triplets, read_constraints,
    read_triplets,
};

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
    let name = crate::dataset::file_stem(path);
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

#[cfg(test)]
mod tests;
