//! Extreme Classification Repository text format (DESIGN §6): a header line `n d L`, then one
//! row per line, `l1,l2,... f:v f:v ...` with 0-based label and feature indices; a row with no
//! label starts with a space. The row count must match the header. Features and labels are
//! kept sparse (CSR).

use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;

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
    let (n, d, l) = parse_header(&mut lines, &loc)?;
    parse_rows(&mut lines, &loc, path, (d, l), Some(n), u64::MAX)
}

/// One shard of the rows of a plain (not gzip) XC-format file, for a data-parallel fit: the body
/// after the header is cut into `shards` byte ranges of equal size, and shard `k` holds the rows
/// whose lines start in range `k` (a line crossing a boundary belongs to the shard where it
/// starts), so every row is in exactly one shard and each process reads only its own bytes.
/// Returns the shard and the header's row count (the shards' rows add up to it). Errors name
/// the shard and count lines from its first byte.
pub fn read_xmc_shard(path: &Path, shard: usize, shards: usize) -> Result<(Dataset, usize)> {
    if shards == 0 || shard >= shards {
        return Err(crate::DataError::InvalidParameter {
            name: "shard",
            reason: format!("shard {shard} of {shards} does not exist"),
        });
    }
    let io_err = |e: std::io::Error| crate::DataError::Io {
        path: path.to_path_buf(),
        source: e,
    };
    let file = std::fs::File::open(path).map_err(io_err)?;
    let len = file.metadata().map_err(io_err)?.len();
    let loc = Loc::new(path);
    let mut lines = Lines::new(BufReader::new(file), path);
    let (n, d, l) = parse_header(&mut lines, &loc)?;
    let header = lines.bytes();
    let body = len.saturating_sub(header);
    let cut = |k: usize| header + (u128::from(body) * k as u128 / shards as u128) as u64;
    let (start, end) = (cut(shard), cut(shard + 1));
    let mut reader = lines.into_inner();
    // the first line starting at or after `start`: skip the rest of the line holding byte
    // start − 1 (it belongs to the shard before)
    let mut pos = start;
    if start > header {
        reader.seek(SeekFrom::Start(start - 1)).map_err(io_err)?;
        let mut skipped = Vec::new();
        pos = start - 1 + reader.read_until(b'\n', &mut skipped).map_err(io_err)? as u64;
    }
    let named = std::path::PathBuf::from(format!(
        "{} (shard {shard} of {shards}, lines counted from byte {pos})",
        path.display()
    ));
    let mut rows = Lines::new(reader, &named);
    let ds = parse_rows(
        &mut rows,
        &Loc::new(&named),
        path,
        (d, l),
        None,
        end.saturating_sub(pos),
    )?;
    Ok((ds, n))
}

/// The header line `n d L`.
fn parse_header<R: BufRead>(lines: &mut Lines<R>, loc: &Loc) -> Result<(usize, usize, usize)> {
    loop {
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
        return Ok((n, d, l));
    }
}

/// The rows after the header: all of them (`rows` = the header's count, checked), or the lines
/// that start within the next `budget` bytes (`rows` = None).
fn parse_rows<R: BufRead>(
    lines: &mut Lines<R>,
    loc: &Loc,
    path: &Path,
    (d, l): (usize, usize),
    rows: Option<usize>,
    budget: u64,
) -> Result<Dataset> {
    let mut feats = CsrBuilder::new(d);
    let mut labels = CsrBuilder::new(l);
    let mut row_f = Vec::new();
    let mut row_l = Vec::new();
    let start = lines.bytes();
    while lines.bytes() - start < budget {
        let Some((ln, line)) = lines.next_line()? else {
            break;
        };
        if line.trim().is_empty() {
            continue;
        }
        let r = feats.nrows();
        if let Some(n) = rows
            && r >= n
        {
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
    if let Some(n) = rows
        && feats.nrows() != n
    {
        return Err(loc.err(
            end,
            format!("header announces {n} rows, file has {}", feats.nrows()),
        ));
    }
    let x = feats.finish().map_err(|m| loc.err(end, m))?;
    let y = labels.finish().map_err(|m| loc.err(end, m))?;
    Ok(Dataset::from_sparse_file(
        path,
        x,
        Targets::Labels {
            matrix: y,
            names: Vec::new(),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_rows_at_any_count() {
        let mut text = String::from("9 6 4\n");
        for i in 0..9 {
            // rows of varying lengths, one without labels
            if i == 4 {
                text.push_str(" 1:0.5\n");
                continue;
            }
            text.push_str(&format!("{},{} ", i % 4, (i + 1) % 4));
            for j in 0..(i % 5 + 1) {
                text.push_str(&format!("{}:{}.25 ", j, i + j));
            }
            text.push('\n');
        }
        let dir = std::env::temp_dir().join(format!("gimc-xmc-shard-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("rows.txt");
        std::fs::write(&path, &text).unwrap();
        let whole = read_xmc(&path).unwrap();
        let dense = |d: &Dataset| d.features.to_dense();
        for shards in 1..=12 {
            let mut rows = Vec::new();
            let mut labels = Vec::new();
            for k in 0..shards {
                let (part, n) = read_xmc_shard(&path, k, shards).unwrap();
                assert_eq!(n, 9);
                let x = dense(&part);
                for i in 0..part.nrows() {
                    rows.push((0..6).map(|j| x[(i, j)]).collect::<Vec<_>>());
                }
                if let Targets::Labels { matrix, .. } = &part.targets {
                    for i in 0..matrix.rows() {
                        labels.push(matrix.outer_view(i).unwrap().indices().to_vec());
                    }
                }
            }
            assert_eq!(rows.len(), 9, "{shards} shards");
            let x = dense(&whole);
            for (i, r) in rows.iter().enumerate() {
                assert_eq!(*r, (0..6).map(|j| x[(i, j)]).collect::<Vec<_>>());
            }
            let Targets::Labels { matrix, .. } = &whole.targets else {
                unreachable!()
            };
            for (i, l) in labels.iter().enumerate() {
                assert_eq!(l.as_slice(), matrix.outer_view(i).unwrap().indices());
            }
        }
        assert!(read_xmc_shard(&path, 3, 3).is_err());
        std::fs::write(&path, "2 3 1\n0 1:x\n0 2:1\n").unwrap();
        let err = read_xmc_shard(&path, 0, 1).unwrap_err().to_string();
        assert!(err.contains("shard 0 of 1") && err.contains(":1:"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

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
    fn a_byte_order_mark_before_the_header_is_skipped() {
        let ds = parse("\u{feff}2 3 2\n0 0:1\n1 2:1\n").unwrap();
        assert_eq!((ds.nrows(), ds.ncols()), (2, 3));
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
