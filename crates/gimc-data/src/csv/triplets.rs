//! `(row, column, value)` triplet files for partially observed matrices, and the pairwise
//! clustering constraints read in the same format.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use crate::Result;
use crate::io::{Lines, Loc, open_text};

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
