//! Shared reader plumbing: opening plain or gzip files, streaming lines with their 1-based
//! numbers, error construction, number parsing, CSR row builders and class-name interning
//! (DESIGN §6: readers stream and report the file and line of malformed input).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;
use gimc_linalg::faer::Mat;
use gimc_linalg::sprs::CsMat;

use crate::{DataError, Result};

/// Opens `path` for line reading, decompressing it transparently when it starts with the gzip
/// magic bytes `1f 8b` (whatever its extension).
pub fn open_text(path: &Path) -> Result<Box<dyn BufRead>> {
    let io_err = |source| DataError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io_err)?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut magic = [0u8; 2];
    let head = reader.fill_buf().map_err(io_err)?;
    let n = head.len().min(2);
    magic[..n].copy_from_slice(&head[..n]);
    if n == 2 && magic == [0x1f, 0x8b] {
        Ok(Box::new(BufReader::with_capacity(
            1 << 16,
            MultiGzDecoder::new(reader),
        )))
    } else {
        Ok(Box::new(reader))
    }
}

/// Error constructor bound to one file.
#[derive(Debug, Clone)]
pub(crate) struct Loc {
    path: PathBuf,
}

impl Loc {
    pub(crate) fn new(path: &Path) -> Self {
        Self {
            path: path.to_path_buf(),
        }
    }

    pub(crate) fn err(&self, line: usize, msg: impl Into<String>) -> DataError {
        DataError::Parse {
            path: self.path.clone(),
            line: line.max(1),
            msg: msg.into(),
        }
    }

    pub(crate) fn non_finite(&self, line: usize, row: usize, col: usize, value: f64) -> DataError {
        DataError::NonFinite {
            path: self.path.clone(),
            line: line.max(1),
            row,
            col,
            value,
        }
    }

    /// Parses a finite number; `what` names the field in the error message.
    pub(crate) fn number(
        &self,
        line: usize,
        row: usize,
        col: usize,
        text: &str,
        what: &str,
    ) -> Result<f64> {
        let v = parse_num(text)
            .ok_or_else(|| self.err(line, format!("cannot parse {what} {text:?} as a number")))?;
        if v.is_finite() {
            Ok(v)
        } else {
            Err(self.non_finite(line, row, col, v))
        }
    }

    /// Parses an index, converting from 1-based when `one_based`.
    pub(crate) fn index(
        &self,
        line: usize,
        text: &str,
        one_based: bool,
        what: &str,
    ) -> Result<usize> {
        let i: usize = text.parse().map_err(|_| {
            self.err(
                line,
                format!("cannot parse {what} {text:?} as a non-negative integer"),
            )
        })?;
        if one_based {
            i.checked_sub(1)
                .ok_or_else(|| self.err(line, format!("{what} 0 in a file with 1-based indices")))
        } else {
            Ok(i)
        }
    }
}

/// Parses a decimal number (also accepts `inf` / `nan`, which callers then reject).
pub(crate) fn parse_num(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok()
}

/// The UTF-8 byte-order mark some editors write at the start of a text file.
pub(crate) const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// `s` without a leading UTF-8 byte-order mark.
pub(crate) fn strip_bom(s: &str) -> &str {
    s.strip_prefix('\u{feff}').unwrap_or(s)
}

/// Streams lines with their 1-based numbers, without the trailing `\n` / `\r\n` and without a
/// UTF-8 byte-order mark at the start of the first line. Invalid UTF-8 is replaced (lossy)
/// rather than rejected, so Latin-1 attribute names still load.
pub(crate) struct Lines<R> {
    reader: R,
    buf: Vec<u8>,
    line: usize,
    bytes: u64,
    loc: Loc,
}

impl<R: BufRead> Lines<R> {
    pub(crate) fn new(reader: R, path: &Path) -> Self {
        Self {
            reader,
            buf: Vec::new(),
            line: 0,
            bytes: 0,
            loc: Loc::new(path),
        }
    }

    /// Number of lines read so far (the last line's number at end of file).
    pub(crate) fn count(&self) -> usize {
        self.line
    }

    /// The reader, positioned after the last line read.
    pub(crate) fn into_inner(self) -> R {
        self.reader
    }

    /// Bytes read so far (newlines included).
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The next line and its number, or `None` at end of file.
    pub(crate) fn next_line(&mut self) -> Result<Option<(usize, &str)>> {
        self.buf.clear();
        let n = self
            .reader
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| self.loc.err(self.line + 1, format!("cannot read: {e}")))?;
        if n == 0 {
            return Ok(None);
        }
        self.bytes += n as u64;
        self.line += 1;
        if self.line == 1 && self.buf.starts_with(UTF8_BOM) {
            self.buf.drain(..UTF8_BOM.len());
        }
        while matches!(self.buf.last(), Some(b'\n' | b'\r')) {
            self.buf.pop();
        }
        if std::str::from_utf8(&self.buf).is_err() {
            let fixed = String::from_utf8_lossy(&self.buf).into_owned();
            self.buf = fixed.into_bytes();
        }
        let text =
            std::str::from_utf8(&self.buf).map_err(|_| self.loc.err(self.line, "invalid UTF-8"))?;
        Ok(Some((self.line, text)))
    }
}

/// Builds a CSR matrix row by row.
#[derive(Debug, Clone)]
pub(crate) struct CsrBuilder {
    ncols: usize,
    indptr: Vec<usize>,
    indices: Vec<usize>,
    data: Vec<f64>,
}

impl CsrBuilder {
    pub(crate) fn new(ncols: usize) -> Self {
        Self {
            ncols,
            indptr: vec![0],
            indices: Vec::new(),
            data: Vec::new(),
        }
    }

    pub(crate) fn nrows(&self) -> usize {
        self.indptr.len() - 1
    }

    /// Sets the final column count (every stored index must be below it).
    pub(crate) fn set_ncols(&mut self, ncols: usize) {
        self.ncols = ncols;
    }

    /// Appends a row given as (column, value) pairs in any order. Zeros are dropped; a repeated
    /// column is an error (returned as the message text).
    pub(crate) fn push_row(
        &mut self,
        entries: &mut [(usize, f64)],
    ) -> std::result::Result<(), String> {
        entries.sort_unstable_by_key(|e| e.0);
        for w in entries.windows(2) {
            if w[0].0 == w[1].0 {
                return Err(format!("index {} appears twice in one row", w[0].0));
            }
        }
        if let Some(&(c, _)) = entries.last()
            && c >= self.ncols
        {
            return Err(format!(
                "index {c} out of range (at most {} columns)",
                self.ncols
            ));
        }
        for &(c, v) in entries.iter() {
            if v != 0.0 {
                self.indices.push(c);
                self.data.push(v);
            }
        }
        self.indptr.push(self.indices.len());
        Ok(())
    }

    pub(crate) fn finish(self) -> std::result::Result<CsMat<f64>, String> {
        let rows = self.nrows();
        CsMat::try_new((rows, self.ncols), self.indptr, self.indices, self.data)
            .map_err(|(_, _, _, e)| format!("invalid sparse structure: {e}"))
    }

    /// The rows as a dense matrix.
    pub(crate) fn to_dense(&self) -> Mat<f64> {
        let mut m = Mat::<f64>::zeros(self.nrows(), self.ncols);
        for r in 0..self.nrows() {
            for k in self.indptr[r]..self.indptr[r + 1] {
                m[(r, self.indices[k])] = self.data[k];
            }
        }
        m
    }
}

/// Interns class names read from a file and maps them to 0..C-1 at the end: numerically sorted
/// when every name is a finite number (`+1` and `1` are the same class), lexicographically
/// otherwise.
#[derive(Debug, Default, Clone)]
pub(crate) struct ClassInterner {
    ids: HashMap<String, u32>,
    names: Vec<String>,
    rows: Vec<u32>,
}

impl ClassInterner {
    pub(crate) fn push(&mut self, name: &str) {
        let next = self.names.len() as u32;
        let id = *self.ids.entry(name.to_string()).or_insert_with(|| {
            self.names.push(name.to_string());
            next
        });
        self.rows.push(id);
    }

    /// A row without a class (read as class 0 by [`Self::finish`]; the caller records the
    /// row as unlabelled).
    pub(crate) fn push_unlabeled(&mut self) {
        self.rows.push(u32::MAX);
    }

    /// Class per row and class names in class order.
    pub(crate) fn finish(self) -> (Vec<usize>, Vec<String>) {
        let numeric: Option<Vec<f64>> = self
            .names
            .iter()
            .map(|s| parse_num(s).filter(|v| v.is_finite()))
            .collect();
        // map interned id -> final class
        let (map, names) = match numeric {
            Some(values) => {
                let mut order: Vec<usize> = (0..values.len()).collect();
                order.sort_by(|&a, &b| values[a].total_cmp(&values[b]).then(a.cmp(&b)));
                let mut map = vec![0usize; values.len()];
                let mut names: Vec<String> = Vec::new();
                let mut last: Option<f64> = None;
                for &id in &order {
                    if last != Some(values[id]) {
                        names.push(self.names[id].clone());
                        last = Some(values[id]);
                    }
                    map[id] = names.len() - 1;
                }
                (map, names)
            }
            None => {
                let mut order: Vec<usize> = (0..self.names.len()).collect();
                order.sort_by(|&a, &b| self.names[a].cmp(&self.names[b]));
                let mut map = vec![0usize; self.names.len()];
                for (c, &id) in order.iter().enumerate() {
                    map[id] = c;
                }
                (map, order.iter().map(|&i| self.names[i].clone()).collect())
            }
        };
        (
            self.rows
                .iter()
                .map(|&id| map.get(id as usize).copied().unwrap_or(0))
                .collect(),
            names,
        )
    }
}

/// Splits `s` on `sep` outside quotes. `'` and `"` quote (ARFF style, with backslash escapes)
/// when `arff_quotes`; otherwise only `"` quotes and `""` is an escaped quote (CSV style).
/// Fields are trimmed and unquoted.
pub(crate) fn split_fields(
    s: &str,
    sep: char,
    arff_quotes: bool,
) -> std::result::Result<Vec<Cow<'_, str>>, String> {
    if !s.contains(['"', '\'']) || (!arff_quotes && !s.contains('"')) {
        return Ok(s.split(sep).map(|f| Cow::Borrowed(f.trim())).collect());
    }
    let mut out = Vec::new();
    let mut chars = s.char_indices().peekable();
    loop {
        // skip leading whitespace of the field (unless whitespace is the separator)
        while let Some(&(_, c)) = chars.peek() {
            if c != sep && c.is_whitespace() {
                chars.next();
            } else {
                break;
            }
        }
        let quote = match chars.peek() {
            Some(&(_, c)) if c == '"' || (arff_quotes && c == '\'') => Some(c),
            _ => None,
        };
        if let Some(q) = quote {
            chars.next();
            let mut field = String::new();
            let mut closed = false;
            while let Some((_, c)) = chars.next() {
                if arff_quotes && c == '\\' {
                    match chars.next() {
                        Some((_, e)) => field.push_str(&unescape_char(e)),
                        None => return Err("backslash at end of line".into()),
                    }
                } else if c == q {
                    if !arff_quotes && matches!(chars.peek(), Some(&(_, c2)) if c2 == q) {
                        chars.next();
                        field.push(q);
                    } else {
                        closed = true;
                        break;
                    }
                } else {
                    field.push(c);
                }
            }
            if !closed {
                return Err("unterminated quoted field".into());
            }
            // after the closing quote: whitespace then separator or end
            loop {
                match chars.next() {
                    None => {
                        out.push(Cow::Owned(field));
                        return Ok(out);
                    }
                    Some((_, c)) if c == sep => break,
                    Some((_, c)) if c.is_whitespace() => {}
                    Some((_, c)) => return Err(format!("unexpected {c:?} after a quoted field")),
                }
            }
            out.push(Cow::Owned(field));
        } else {
            let start = chars.peek().map_or(s.len(), |&(i, _)| i);
            let mut end = s.len();
            let mut hit_sep = false;
            for (i, c) in chars.by_ref() {
                if c == sep {
                    end = i;
                    hit_sep = true;
                    break;
                }
            }
            out.push(Cow::Borrowed(s[start..end].trim()));
            if !hit_sep {
                return Ok(out);
            }
        }
    }
}

/// Weka's backslash escapes (`\'`, `\"`, `\\`, `\%`, `\t`, `\n`, `\r`); any other escaped
/// character keeps its backslash (Delicious has `TAG_dise\~no`).
pub(crate) fn unescape_char(c: char) -> String {
    match c {
        '\'' | '"' | '\\' | '%' => c.to_string(),
        't' => "\t".into(),
        'n' => "\n".into(),
        'r' => "\r".into(),
        other => format!("\\{other}"),
    }
}

/// Applies [`unescape_char`] to every backslash sequence of `s`.
pub(crate) fn unescape(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(e) => out.push_str(&unescape_char(e)),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_plain_and_quoted() {
        let f = split_fields("a, b ,c", ',', true).unwrap();
        assert_eq!(f, vec!["a", "b", "c"]);
        let f = split_fields("'x, y', \"z\\'q\" ,w", ',', true).unwrap();
        assert_eq!(f, vec!["x, y", "z'q", "w"]);
        let f = split_fields("\"a;b\";\"c\"\"d\";e", ';', false).unwrap();
        assert_eq!(f, vec!["a;b", "c\"d", "e"]);
        assert!(split_fields("'abc", ',', true).is_err());
        assert!(split_fields("\"a\"b,c", ',', false).is_err());
        let f = split_fields("a,,", ',', false).unwrap();
        assert_eq!(f, vec!["a", "", ""]);
    }

    #[test]
    fn unescape_weka() {
        assert_eq!(unescape("TAG_m\\'usica"), "TAG_m'usica");
        assert_eq!(unescape("TAG_dise\\~no"), "TAG_dise\\~no");
        assert_eq!(unescape("a\\\\b"), "a\\b");
    }

    #[test]
    fn classes_sorted_numerically_and_merged() {
        let mut c = ClassInterner::default();
        for s in ["2", "10", "+1", "1", "2"] {
            c.push(s);
        }
        let (rows, names) = c.finish();
        assert_eq!(names, vec!["+1", "2", "10"]);
        assert_eq!(rows, vec![1, 2, 0, 0, 1]);
        let mut c = ClassInterner::default();
        for s in ["sky", "grass", "sky"] {
            c.push(s);
        }
        let (rows, names) = c.finish();
        assert_eq!(names, vec!["grass", "sky"]);
        assert_eq!(rows, vec![1, 0, 1]);
    }

    #[test]
    fn csr_builder_checks() {
        let mut b = CsrBuilder::new(3);
        b.push_row(&mut [(2, 1.0), (0, 2.0)]).unwrap();
        assert!(b.push_row(&mut [(1, 1.0), (1, 2.0)]).is_err());
        assert!(b.push_row(&mut [(3, 1.0)]).is_err());
        b.push_row(&mut [(1, 0.0)]).unwrap();
        let m = b.finish().unwrap();
        assert_eq!(m.rows(), 2);
        assert_eq!(m.nnz(), 2);
        assert_eq!(m.get(0, 2), Some(&1.0));
    }

    #[test]
    fn lines_strip_crlf_and_count() {
        let text = b"a \r\nb\n\xffc";
        let mut l = Lines::new(&text[..], Path::new("mem"));
        assert_eq!(l.next_line().unwrap(), Some((1, "a ")));
        assert_eq!(l.next_line().unwrap(), Some((2, "b")));
        let (n, s) = l.next_line().unwrap().unwrap();
        assert_eq!(n, 3);
        assert!(s.ends_with('c'));
        assert_eq!(l.next_line().unwrap(), None);
        assert_eq!(l.count(), 3);
    }

    #[test]
    fn lines_skip_a_byte_order_mark_on_the_first_line_only() {
        let text = b"\xef\xbb\xbfa,b\n\xef\xbb\xbfc\n";
        let mut l = Lines::new(&text[..], Path::new("mem"));
        assert_eq!(l.next_line().unwrap(), Some((1, "a,b")));
        assert_eq!(l.next_line().unwrap(), Some((2, "\u{feff}c")));
        assert_eq!(strip_bom("\u{feff}x"), "x");
        assert_eq!(strip_bom("x"), "x");
    }
}
