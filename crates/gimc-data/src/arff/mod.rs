//! Weka ARFF and Mulan (ARFF + XML label list) readers (DESIGN §6).
//!
//! Supports dense rows (`v1,v2,...`) and sparse rows (`{index value, ...}` with 0-based attribute
//! indices counting every attribute, features and labels alike), numeric (`numeric`, `real`,
//! `integer`) and nominal (`{a,b,c}`) attributes, `%` comments, quoted attribute names and values
//! (single or double quotes, Weka's backslash escapes). Nominal features are coded by the index
//! of their value in the declaration (0, 1, …), one column each, listed in
//! [`Dataset::nominal_columns`]. `string`, `date` and `relational` attributes are rejected. A
//! trailing instance weight (`,{w}`) is ignored.
//!
//! Targets: Mulan labels chosen by name (the label list of the `.xml` file), a Weka class
//! attribute (nominal → classes in declaration order, numeric → values), or none.
//!
//! Label names are matched against attribute names both as written and with backslash escapes
//! resolved: Delicious declares `TAG_m\'usica` in the ARFF and in the XML; the data set's label
//! name is the unescaped `TAG_m'usica`.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use gimc_linalg::FeatureMatrix;
use gimc_linalg::shared::shared_csr;

use crate::io::{CsrBuilder, Lines, Loc, open_text, split_fields, unescape};
use crate::{Dataset, MissingPolicy, Result, Targets};

mod mulan;

pub use mulan::{parse_mulan_labels, read_mulan_labels};

/// Which ARFF attributes are targets.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub enum ArffTarget {
    /// The last attribute is the class if it is nominal; otherwise there is no target.
    #[default]
    Auto,
    /// Every attribute is a feature.
    None,
    /// Weka class attribute: the named one, or the last one for `None`. Nominal → classes,
    /// numeric → values.
    Class(Option<String>),
    /// Mulan: these attributes (by name, in this order) are the labels; their values must be
    /// 0 or 1.
    Labels(Vec<String>),
}

/// Options of the ARFF reader.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ArffOptions {
    /// Which attributes are targets.
    pub target: ArffTarget,
    /// What to do with `?` in a feature.
    pub missing: MissingPolicy,
}

/// Reads a Weka / Mulan ARFF file (gzip allowed).
pub fn read_arff(path: &Path, opts: &ArffOptions) -> Result<Dataset> {
    parse_arff(open_text(path)?, path, opts)
}

/// Reads a Mulan data set: the ARFF file with the labels listed in the XML file.
pub fn read_mulan(arff: &Path, xml: &Path, missing: MissingPolicy) -> Result<Dataset> {
    let labels = read_mulan_labels(xml)?;
    read_arff(
        arff,
        &ArffOptions {
            target: ArffTarget::Labels(labels),
            missing,
        },
    )
}

#[derive(Debug)]
enum Kind {
    Numeric,
    Nominal(HashMap<String, usize>, Vec<String>),
}

#[derive(Debug)]
struct Attr {
    /// Name with escapes resolved.
    name: String,
    /// Name as written (without surrounding quotes).
    raw: String,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Role {
    Feature(usize),
    Label(usize),
    Class,
}

/// Splits `@keyword rest`.
fn keyword(t: &str) -> (&str, &str) {
    match t.find(char::is_whitespace) {
        Some(i) => (&t[..i], t[i..].trim_start()),
        None => (t, ""),
    }
}

fn parse_attribute(rest: &str, ln: usize, loc: &Loc) -> Result<Attr> {
    let (name, raw, ty) = if let Some(q) = rest.chars().next().filter(|&c| c == '\'' || c == '"') {
        let mut name = String::new();
        let mut raw = String::new();
        let mut chars = rest.char_indices().skip(1);
        let mut end = None;
        while let Some((i, c)) = chars.next() {
            if c == '\\' {
                let (_, e) = chars
                    .next()
                    .ok_or_else(|| loc.err(ln, "backslash at end of attribute name"))?;
                name.push_str(&crate::io::unescape_char(e));
                raw.push(c);
                raw.push(e);
            } else if c == q {
                end = Some(i + c.len_utf8());
                break;
            } else {
                name.push(c);
                raw.push(c);
            }
        }
        let end = end.ok_or_else(|| loc.err(ln, "unterminated quoted attribute name"))?;
        (name, raw, rest[end..].trim())
    } else {
        let (tok, ty) = keyword(rest);
        if tok.is_empty() {
            return Err(loc.err(ln, "@attribute without a name"));
        }
        (unescape(tok), tok.to_string(), ty)
    };
    let kind = if let Some(inner) = ty.strip_prefix('{') {
        let inner = inner
            .trim_end()
            .strip_suffix('}')
            .ok_or_else(|| loc.err(ln, "nominal attribute type without closing '}'"))?;
        let values = split_fields(inner, ',', true).map_err(|m| loc.err(ln, m))?;
        let mut map = HashMap::new();
        let mut list = Vec::new();
        for v in values {
            let v = v.into_owned();
            if map.insert(v.clone(), list.len()).is_some() {
                return Err(loc.err(ln, format!("nominal value {v:?} declared twice")));
            }
            list.push(v);
        }
        Kind::Nominal(map, list)
    } else {
        let word = ty
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        match word.as_str() {
            "numeric" | "real" | "integer" => Kind::Numeric,
            "" => return Err(loc.err(ln, format!("attribute {name:?} has no type"))),
            "string" | "date" | "relational" => {
                return Err(loc.err(
                    ln,
                    format!("attribute {name:?}: {word} attributes are not supported"),
                ));
            }
            other => return Err(loc.err(ln, format!("attribute {name:?}: unknown type {other:?}"))),
        }
    };
    Ok(Attr { name, raw, kind })
}

fn find_attr(attrs: &[Attr], name: &str) -> Option<usize> {
    let un = unescape(name);
    attrs
        .iter()
        .position(|a| a.raw == name || a.name == name || a.name == un)
}

/// The attributes of an ARFF header and the line of its `@data`, the lines read up to it.
fn parse_header<R: BufRead>(lines: &mut Lines<R>, loc: &Loc) -> Result<(Vec<Attr>, usize)> {
    let mut attrs: Vec<Attr> = Vec::new();
    while let Some((ln, line)) = lines.next_line()? {
        let t = line.trim();
        if t.is_empty() || t.starts_with('%') {
            continue;
        }
        if !t.starts_with('@') {
            return Err(loc.err(
                ln,
                "expected @relation, @attribute or @data in the ARFF header",
            ));
        }
        let (kw, rest) = keyword(t);
        match kw.to_ascii_lowercase().as_str() {
            "@relation" => {}
            "@attribute" => attrs.push(parse_attribute(rest, ln, loc)?),
            "@data" if attrs.is_empty() => {
                return Err(loc.err(ln, "no @attribute before @data"));
            }
            "@data" => return Ok((attrs, ln)),
            other => return Err(loc.err(ln, format!("unknown ARFF keyword {other:?}"))),
        }
    }
    Err(loc.err(lines.count(), "no @data section"))
}

/// The attributes declared in an ARFF file's header.
#[derive(Debug)]
pub(crate) struct ArffHeader {
    attrs: Vec<Attr>,
}

impl ArffHeader {
    /// Reads the header of the ARFF file at `path` (the lines up to `@data`).
    pub(crate) fn read(path: &Path) -> Result<Self> {
        let mut lines = Lines::new(open_text(path)?, path);
        let (attrs, _) = parse_header(&mut lines, &Loc::new(path))?;
        Ok(Self { attrs })
    }

    /// Whether `name` is an attribute (as written or with escapes resolved, as the reader
    /// matches Mulan label names).
    pub(crate) fn has(&self, name: &str) -> bool {
        find_attr(&self.attrs, name).is_some()
    }

    /// The name of the last attribute and whether it is nominal.
    pub(crate) fn last(&self) -> Option<(&str, bool)> {
        self.attrs
            .last()
            .map(|a| (a.name.as_str(), matches!(a.kind, Kind::Nominal(..))))
    }

    /// How many attributes at the end are nominal `{0,1}`: Mulan's label attributes look so.
    pub(crate) fn trailing_binary(&self) -> usize {
        self.attrs
            .iter()
            .rev()
            .take_while(|a| matches!(&a.kind, Kind::Nominal(_, v) if v == &["0", "1"]))
            .count()
    }
}

/// State of the row being parsed.
struct Row {
    features: Vec<(usize, f64)>,
    labels: Vec<(usize, f64)>,
    class: Option<f64>,
    missing: Vec<usize>,
    /// Labels whose value was `?` (allowed under [`MissingPolicy::Mask`]).
    missing_labels: Vec<usize>,
    /// The class value was `?` (allowed under [`MissingPolicy::Mask`]).
    unlabeled: bool,
}

impl Row {
    fn new() -> Self {
        Self {
            features: Vec::new(),
            labels: Vec::new(),
            class: None,
            missing: Vec::new(),
            missing_labels: Vec::new(),
            unlabeled: false,
        }
    }

    /// Empties the row for the next data line (keeping its buffers).
    fn clear(&mut self) {
        self.features.clear();
        self.labels.clear();
        self.class = None;
        self.missing.clear();
        self.missing_labels.clear();
        self.unlabeled = false;
    }
}

/// The role of every attribute under the reader's target option, with the names of the labels
/// and of the feature columns, and which feature columns are nominal.
struct Layout {
    roles: Vec<Role>,
    /// The class attribute, when the targets are a class or values.
    class_attr: Option<usize>,
    label_names: Vec<String>,
    feature_names: Vec<String>,
    nominal_columns: Vec<usize>,
}

impl Layout {
    /// The roles of `attrs` under `target`; errors name the `@data` line.
    fn new(attrs: &[Attr], target: &ArffTarget, data_line: usize, loc: &Loc) -> Result<Self> {
        let n_attr = attrs.len();
        let mut roles: Vec<Option<Role>> = vec![None; n_attr];
        let mut label_names = Vec::new();
        let class_attr = match target {
            ArffTarget::Labels(names) => {
                if names.is_empty() {
                    return Err(loc.err(data_line, "empty label list"));
                }
                for (l, name) in names.iter().enumerate() {
                    let a = find_attr(attrs, name).ok_or_else(|| {
                        loc.err(
                            data_line,
                            format!("label {name:?} is not an attribute of this file"),
                        )
                    })?;
                    if roles[a].is_some() {
                        return Err(loc.err(data_line, format!("label {name:?} listed twice")));
                    }
                    roles[a] = Some(Role::Label(l));
                    label_names.push(attrs[a].name.clone());
                }
                None
            }
            ArffTarget::Class(Some(name)) => Some(find_attr(attrs, name).ok_or_else(|| {
                loc.err(data_line, format!("class attribute {name:?} not found"))
            })?),
            ArffTarget::Class(None) => Some(n_attr - 1),
            ArffTarget::Auto => {
                matches!(attrs[n_attr - 1].kind, Kind::Nominal(..)).then_some(n_attr - 1)
            }
            ArffTarget::None => None,
        };
        if let Some(c) = class_attr {
            roles[c] = Some(Role::Class);
        }
        let mut feature_names = Vec::new();
        let mut nominal_columns = Vec::new();
        for (a, role) in roles.iter_mut().enumerate() {
            if role.is_none() {
                if matches!(attrs[a].kind, Kind::Nominal(..)) {
                    nominal_columns.push(feature_names.len());
                }
                *role = Some(Role::Feature(feature_names.len()));
                feature_names.push(attrs[a].name.clone());
            }
        }
        let roles: Vec<Role> = roles
            .into_iter()
            .map(|r| r.unwrap_or(Role::Class))
            .collect();
        Ok(Self {
            roles,
            class_attr,
            label_names,
            feature_names,
            nominal_columns,
        })
    }
}

/// Reads the values of one data line into a [`Row`]: what every attribute is and does, and
/// the file the errors name.
struct RowReader<'a> {
    attrs: &'a [Attr],
    roles: &'a [Role],
    loc: &'a Loc,
    missing: MissingPolicy,
}

impl RowReader<'_> {
    /// A sparse row `{index value, ...}` given as the text after its `{`, on line `ln`, row `r`.
    fn sparse(&self, row: &mut Row, body: &str, ln: usize, r: usize) -> Result<()> {
        let loc = self.loc;
        let n_attr = self.attrs.len();
        let close = find_unquoted(body, '}')
            .ok_or_else(|| loc.err(ln, "sparse row without closing '}'"))?;
        let (inner, tail) = (&body[..close], body[close + 1..].trim());
        let weight_only = tail
            .strip_prefix(',')
            .is_some_and(|w| w.trim().starts_with('{'));
        if !tail.is_empty() && !weight_only {
            return Err(loc.err(ln, format!("unexpected text {tail:?} after a sparse row")));
        }
        if !inner.trim().is_empty() {
            let mut last: Option<usize> = None;
            for entry in split_unquoted(inner, ',') {
                let entry = entry.trim();
                let (idx, val) = match entry.find(char::is_whitespace) {
                    Some(i) => (&entry[..i], entry[i..].trim()),
                    None => {
                        return Err(
                            loc.err(ln, format!("sparse entry {entry:?} is not 'index value'"))
                        );
                    }
                };
                let a = loc.index(ln, idx, false, "attribute index")?;
                if a >= n_attr {
                    return Err(loc.err(
                        ln,
                        format!("attribute index {a} out of range ({n_attr} attributes)"),
                    ));
                }
                if last.is_some_and(|p| p >= a) {
                    return Err(loc.err(ln, format!("attribute index {a} not increasing")));
                }
                last = Some(a);
                let val = unquote(val);
                set_value(
                    row,
                    &self.attrs[a],
                    self.roles[a],
                    &val,
                    ln,
                    r,
                    loc,
                    self.missing,
                )?;
            }
        }
        Ok(())
    }

    /// A dense row `v1,v2,...` (an instance weight `,{w}` after the values is dropped) on line
    /// `ln`, row `r`.
    fn dense(&self, row: &mut Row, t: &str, ln: usize, r: usize) -> Result<()> {
        let loc = self.loc;
        let n_attr = self.attrs.len();
        let mut fields = split_fields(t, ',', true).map_err(|m| loc.err(ln, m))?;
        if fields.len() == n_attr + 1 && fields.last().is_some_and(|f| f.starts_with('{')) {
            fields.pop();
        }
        if fields.len() != n_attr {
            return Err(loc.err(
                ln,
                format!("{} values in a row of {n_attr} attributes", fields.len()),
            ));
        }
        for (a, f) in fields.iter().enumerate() {
            set_value(
                row,
                &self.attrs[a],
                self.roles[a],
                f,
                ln,
                r,
                loc,
                self.missing,
            )?;
        }
        Ok(())
    }
}

/// The rows read so far: features and labels as CSR rows, class values, and the missing cells,
/// unlabelled rows and missing labels.
struct Collected {
    feats: CsrBuilder,
    labels: CsrBuilder,
    class_values: Vec<f64>,
    missing: Vec<(usize, usize)>,
    unlabeled: Vec<usize>,
    missing_labels: Vec<(usize, usize)>,
    any_sparse: bool,
}

impl Collected {
    fn new(layout: &Layout) -> Self {
        Self {
            feats: CsrBuilder::new(layout.feature_names.len()),
            labels: CsrBuilder::new(layout.label_names.len()),
            class_values: Vec::new(),
            missing: Vec::new(),
            unlabeled: Vec::new(),
            missing_labels: Vec::new(),
            any_sparse: false,
        }
    }

    /// Adds the row read from line `ln` (row number [`CsrBuilder::nrows`] before the call).
    fn push(&mut self, row: &mut Row, layout: &Layout, ln: usize, loc: &Loc) -> Result<()> {
        let r = self.feats.nrows();
        let n_labels = layout.label_names.len();
        self.feats
            .push_row(&mut row.features)
            .map_err(|m| loc.err(ln, m))?;
        if n_labels > 0 {
            self.labels
                .push_row(&mut row.labels)
                .map_err(|m| loc.err(ln, m))?;
        }
        if layout.class_attr.is_some() {
            // an omitted class in a sparse row is value 0 (first nominal value)
            self.class_values.push(row.class.unwrap_or(0.0));
        }
        self.missing.extend(row.missing.iter().map(|&c| (r, c)));
        // a row is unlabelled when its class, or every one of its labels, is missing
        if row.unlabeled || (n_labels > 0 && row.missing_labels.len() == n_labels) {
            self.unlabeled.push(r);
        }
        row.missing_labels.sort_unstable();
        self.missing_labels
            .extend(row.missing_labels.iter().map(|&l| (r, l)));
        Ok(())
    }

    /// The data set of the rows read; `end` is the last line, named by errors.
    fn finish(
        mut self,
        layout: Layout,
        attrs: &[Attr],
        path: &Path,
        loc: &Loc,
        end: usize,
    ) -> Result<Dataset> {
        let features = if self.any_sparse {
            FeatureMatrix::Sparse(shared_csr(
                self.feats.finish().map_err(|m| loc.err(end, m))?,
            ))
        } else {
            FeatureMatrix::Dense(self.feats.to_dense())
        };
        let targets = if !layout.label_names.is_empty() {
            let matrix = self.labels.finish().map_err(|m| loc.err(end, m))?;
            Targets::Labels {
                matrix,
                names: layout.label_names,
            }
        } else if let Some(c) = layout.class_attr {
            match &attrs[c].kind {
                Kind::Nominal(_, list) => Targets::Classes {
                    classes: self.class_values.iter().map(|&v| v as usize).collect(),
                    names: list.clone(),
                },
                Kind::Numeric => Targets::Values(self.class_values),
            }
        } else {
            Targets::None
        };
        self.missing.sort_unstable();
        let name = crate::dataset::file_stem(path);
        Ok(Dataset {
            name,
            features,
            targets,
            feature_names: layout.feature_names,
            missing: self.missing,
            unlabeled: self.unlabeled,
            missing_labels: self.missing_labels,
            nominal_columns: layout.nominal_columns,
        })
    }
}

/// [`read_arff`] on any reader; `path` names the source in errors.
pub fn parse_arff<R: BufRead>(reader: R, path: &Path, opts: &ArffOptions) -> Result<Dataset> {
    let loc = Loc::new(path);
    let mut lines = Lines::new(reader, path);
    let (attrs, data_line) = parse_header(&mut lines, &loc)?;
    let layout = Layout::new(&attrs, &opts.target, data_line, &loc)?;
    let reader = RowReader {
        attrs: &attrs,
        roles: &layout.roles,
        loc: &loc,
        missing: opts.missing,
    };
    let mut rows = Collected::new(&layout);
    let mut row = Row::new();
    while let Some((ln, line)) = lines.next_line()? {
        let t = line.trim();
        if t.is_empty() || t.starts_with('%') {
            continue;
        }
        let r = rows.feats.nrows();
        row.clear();
        if let Some(body) = t.strip_prefix('{') {
            rows.any_sparse = true;
            reader.sparse(&mut row, body, ln, r)?;
        } else {
            reader.dense(&mut row, t, ln, r)?;
        }
        rows.push(&mut row, &layout, ln, &loc)?;
    }
    let end = lines.count();
    rows.finish(layout, &attrs, path, &loc, end)
}

/// Removes matching surrounding quotes and resolves escapes inside them.
fn unquote(v: &str) -> String {
    for q in ['\'', '"'] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return unescape(&v[1..v.len() - 1]);
        }
    }
    v.to_string()
}

/// Splits on `sep` outside quotes, keeping the pieces as written.
fn split_unquoted(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(i) = find_unquoted(rest, sep) {
        out.push(&rest[..i]);
        rest = &rest[i + sep.len_utf8()..];
    }
    out.push(rest);
    out
}

fn find_unquoted(s: &str, target: char) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match quote {
            Some(q) => {
                if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => {
                if c == '\'' || c == '"' {
                    quote = Some(c);
                } else if c == target {
                    return Some(i);
                }
            }
        }
    }
    None
}

#[allow(clippy::too_many_arguments)]
fn set_value(
    row: &mut Row,
    attr: &Attr,
    role: Role,
    text: &str,
    ln: usize,
    r: usize,
    loc: &Loc,
    missing: MissingPolicy,
) -> Result<()> {
    let is_missing = text == "?";
    match role {
        Role::Feature(col) => {
            if is_missing {
                return match missing {
                    MissingPolicy::Error => Err(loc.err(
                        ln,
                        format!("missing value '?' for feature {:?} (row {r})", attr.name),
                    )),
                    MissingPolicy::Mask => {
                        row.missing.push(col);
                        Ok(())
                    }
                };
            }
            let v = attr_value(attr, text, ln, r, col, loc)?;
            row.features.push((col, v));
        }
        Role::Label(l) => {
            if is_missing {
                return match missing {
                    MissingPolicy::Error => {
                        Err(loc.err(ln, format!("missing value '?' for label {:?}", attr.name)))
                    }
                    MissingPolicy::Mask => {
                        row.missing_labels.push(l);
                        Ok(())
                    }
                };
            }
            let v = loc.number(ln, r, l, text, "label value")?;
            if v == 1.0 {
                row.labels.push((l, 1.0));
            } else if v != 0.0 {
                return Err(loc.err(
                    ln,
                    format!("label {:?} has value {text:?}, expected 0 or 1", attr.name),
                ));
            }
        }
        Role::Class => {
            if is_missing {
                return match missing {
                    MissingPolicy::Error => {
                        Err(loc.err(ln, format!("missing class value for {:?}", attr.name)))
                    }
                    MissingPolicy::Mask => {
                        row.unlabeled = true;
                        Ok(())
                    }
                };
            }
            row.class = Some(attr_value(attr, text, ln, r, 0, loc)?);
        }
    }
    Ok(())
}

fn attr_value(attr: &Attr, text: &str, ln: usize, r: usize, col: usize, loc: &Loc) -> Result<f64> {
    match &attr.kind {
        Kind::Numeric => loc.number(ln, r, col, text, &format!("value of {:?}", attr.name)),
        Kind::Nominal(map, _) => map.get(text).map(|&i| i as f64).ok_or_else(|| {
            loc.err(
                ln,
                format!(
                    "value {text:?} is not declared for nominal attribute {:?}",
                    attr.name
                ),
            )
        }),
    }
}

#[cfg(test)]
mod tests;
