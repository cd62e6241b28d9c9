//! Mulan XML label files: the label names, in document order, of a `<labels>` document.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use crate::Result;
use crate::io::{Loc, open_text, strip_bom};

/// Reads the label names of a Mulan XML label file (`<label name="...">`, nested or flat), in
/// document order.
pub fn read_mulan_labels(path: &Path) -> Result<Vec<String>> {
    parse_mulan_labels(open_text(path)?, path)
}

/// [`read_mulan_labels`] on any reader; `path` names the source in errors. The whole document
/// must parse: one `<labels>` root element, every element closed, and at least one `<label>`;
/// a file cut short (e.g. before `</labels>`) is an error naming the unclosed element rather
/// than a partial label list.
pub fn parse_mulan_labels<R: BufRead>(mut reader: R, path: &Path) -> Result<Vec<String>> {
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .map_err(|source| crate::DataError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    let text = String::from_utf8_lossy(&bytes);
    XmlScan {
        text: strip_bom(&text),
        pos: 0,
        line: 1,
        loc: Loc::new(path),
    }
    .labels()
}

/// A scan of a Mulan label document: tags, comments, processing instructions and text.
struct XmlScan<'a> {
    text: &'a str,
    pos: usize,
    line: usize,
    loc: Loc,
}

impl XmlScan<'_> {
    /// Moves to byte `to`, counting the lines passed.
    fn advance(&mut self, to: usize) {
        self.line += self.text[self.pos..to].matches('\n').count();
        self.pos = to;
    }

    /// Skips to just after `end`, or fails naming `what` when the file ends first.
    fn skip_past(&mut self, end: &str, what: &str) -> Result<()> {
        match self.text[self.pos..].find(end) {
            Some(i) => {
                self.advance(self.pos + i + end.len());
                Ok(())
            }
            None => Err(self.loc.err(
                self.line,
                format!("{what} is not closed (the file ends inside it)"),
            )),
        }
    }

    /// The end of the start tag at `pos` (the index of its `>`, quotes respected).
    fn tag_end(&self) -> Option<usize> {
        let mut quote = None;
        for (i, c) in self.text[self.pos..].char_indices() {
            match (quote, c) {
                (None, '"' | '\'') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (None, '>') => return Some(self.pos + i),
                _ => {}
            }
        }
        None
    }

    fn labels(mut self) -> Result<Vec<String>> {
        let mut names: Vec<String> = Vec::new();
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut open: Vec<(String, usize)> = Vec::new();
        let mut root_done = false;
        while let Some(i) = self.text[self.pos..].find('<') {
            self.advance(self.pos + i);
            let rest = &self.text[self.pos..];
            if rest.starts_with("<!--") {
                self.skip_past("-->", "a comment")?;
            } else if rest.starts_with("<?") {
                self.skip_past("?>", "a processing instruction")?;
            } else if rest.starts_with("<!") {
                self.skip_past(">", "a declaration")?;
            } else if let Some(close) = rest.strip_prefix("</") {
                let name = close.split('>').next().unwrap_or("").trim().to_string();
                let ln = self.line;
                self.skip_past(">", &format!("the end tag `</{name}`"))?;
                match open.pop() {
                    Some((o, _)) if o == name => root_done = open.is_empty(),
                    Some((o, at)) => {
                        return Err(self.loc.err(
                            ln,
                            format!("`</{name}>` does not close `<{o}>` (opened on line {at})"),
                        ));
                    }
                    None => {
                        return Err(self.loc.err(ln, format!("`</{name}>` closes nothing")));
                    }
                }
            } else {
                if root_done {
                    return Err(self
                        .loc
                        .err(self.line, "an element after the end of `</labels>`"));
                }
                let ln = self.line;
                let (name, closed) = self.start_tag(&mut names, &mut seen, open.is_empty())?;
                if !closed {
                    open.push((name, ln));
                } else if open.is_empty() {
                    root_done = true;
                }
            }
        }
        // the last line with content
        let last = self.text.trim_end().matches('\n').count() + 1;
        if let Some((name, at)) = open.last() {
            return Err(self.loc.err(
                last,
                format!(
                    "the file ends before `</{name}>` (`<{name}>` opened on line {at}): the label \
                     list is incomplete"
                ),
            ));
        }
        if !root_done {
            return Err(self
                .loc
                .err(last, "no `<labels>` element: not a Mulan label file"));
        }
        if names.is_empty() {
            return Err(self.loc.err(last, "no <label name=\"...\"> element found"));
        }
        Ok(names)
    }

    /// Reads the start tag at `pos`: its name and whether it closes itself (`<x/>`); a
    /// `<label>` adds its name to `names`. The root element must be `<labels>`.
    fn start_tag(
        &mut self,
        names: &mut Vec<String>,
        seen: &mut HashMap<String, usize>,
        is_root: bool,
    ) -> Result<(String, bool)> {
        let ln = self.line;
        let end = self.tag_end().ok_or_else(|| {
            let head: String = self.text[self.pos..].chars().take(20).collect();
            self.loc.err(
                ln,
                format!(
                    "tag `{}` is not closed (the file ends inside it)",
                    head.trim_end()
                ),
            )
        })?;
        let tag = &self.text[self.pos + 1..end];
        let closed = tag.ends_with('/');
        let tag = tag.strip_suffix('/').unwrap_or(tag);
        let name = tag
            .split(char::is_whitespace)
            .next()
            .unwrap_or("")
            .to_string();
        let local = name.rsplit(':').next().unwrap_or("");
        if is_root && local != "labels" {
            return Err(self.loc.err(
                ln,
                format!(
                    "the root element is `<{name}>`, expected `<labels>`: not a Mulan label file"
                ),
            ));
        }
        if local == "label" {
            let label = xml_attribute(tag, "name")
                .ok_or_else(|| self.loc.err(ln, "<label> without a name attribute"))?;
            let label = xml_unescape(&label).map_err(|m| self.loc.err(ln, m))?;
            if let Some(prev) = seen.insert(label.clone(), ln) {
                return Err(self.loc.err(
                    ln,
                    format!("label {label:?} listed twice (also on line {prev})"),
                ));
            }
            names.push(label);
        }
        self.advance(end + 1);
        Ok((name, closed))
    }
}

fn xml_attribute(tag: &str, key: &str) -> Option<String> {
    let bytes = tag.as_bytes();
    let mut from = 0;
    while let Some(off) = tag.get(from..)?.find(key) {
        let start = from + off;
        let before_ok = start == 0
            || bytes
                .get(start - 1)
                .is_some_and(|b| b.is_ascii_whitespace());
        let rest = tag.get(start + key.len()..)?.trim_start();
        if before_ok && let Some(rest) = rest.strip_prefix('=') {
            let rest = rest.trim_start();
            let quote = rest.chars().next()?;
            if quote == '"' || quote == '\'' {
                let body = &rest[1..];
                let close = body.find(quote)?;
                return Some(body[..close].to_string());
            }
            return None;
        }
        from = start + key.len();
    }
    None
}

fn xml_unescape(s: &str) -> std::result::Result<String, String> {
    if !s.contains('&') {
        return Ok(s.to_string());
    }
    let mut out = String::new();
    let mut rest = s;
    while let Some(p) = rest.find('&') {
        out.push_str(&rest[..p]);
        let tail = &rest[p + 1..];
        let semi = tail
            .find(';')
            .ok_or_else(|| format!("unterminated entity in {s:?}"))?;
        let ent = &tail[..semi];
        let ch = match ent {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            _ => {
                let code =
                    if let Some(h) = ent.strip_prefix("#x").or_else(|| ent.strip_prefix("#X")) {
                        u32::from_str_radix(h, 16).ok()
                    } else if let Some(d) = ent.strip_prefix('#') {
                        d.parse().ok()
                    } else {
                        None
                    };
                code.and_then(char::from_u32)
                    .ok_or_else(|| format!("unknown entity &{ent}; in {s:?}"))?
            }
        };
        out.push(ch);
        rest = &tail[semi + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
