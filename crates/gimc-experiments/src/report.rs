//! Experiment output (DESIGN §4): result records, titled string tables, the "ours | published"
//! pivot, and the writers for `<out>/<name>.md`, `<name>.csv` and `<name>.json`.
//!
//! Formats:
//! - JSON: an array of [`Record`]s `{"experiment", "dataset", "method", "setting", "metric",
//!   "ours", "published"}`; numbers in the unit the paper prints; `null` for a missing value.
//! - CSV: a header line, then one record per line, fields quoted as RFC 4180 requires (a field
//!   containing a comma, double quote, CR or LF is wrapped in double quotes with inner quotes
//!   doubled; lines end with LF). Missing numbers are empty fields.
//! - Markdown: `# title`, each [`Table`] as a GitHub table (every line with the header's
//!   number of cells, `|` escaped), then the notes as a bullet list.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::ExperimentError;

/// One number of one experiment: our value beside the published one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Stable experiment name (e.g. `gimc-table2`).
    pub experiment: String,
    /// Dataset name (manifest name, or a synthetic setting's name).
    pub dataset: String,
    /// Method (e.g. `GIMC-LFF`, `SLEEC`).
    pub method: String,
    /// Remaining setting that distinguishes rows (e.g. `|Ω| = 5n`, `ω = 40%`); may be empty.
    pub setting: String,
    /// Metric name with its unit as printed (e.g. `P@1 (%)`).
    pub metric: String,
    /// Our value; `None` when it could not be computed (e.g. missing dataset).
    pub ours: Option<f64>,
    /// The paper's value; `None` when the paper has none.
    pub published: Option<f64>,
}

/// A titled grid of strings, rendered as a GitHub Markdown table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Table {
    /// Title printed above the table (may be empty).
    pub title: String,
    /// Column headers.
    pub header: Vec<String>,
    /// Rows of cells; short rows are padded with empty cells, long rows truncated to the header.
    pub rows: Vec<Vec<String>>,
}

/// Everything one experiment produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Stable experiment name; also the file stem of the outputs.
    pub name: String,
    /// Human-readable title (the paper table / figure it reproduces).
    pub title: String,
    /// All numbers, ours beside published.
    pub records: Vec<Record>,
    /// Chosen hyper-parameters, missing data, binning conventions, deviations from the paper.
    pub notes: Vec<String>,
    /// Tables to print; when empty, the Markdown shows [`pivot_table`] of the records.
    pub tables: Vec<Table>,
    /// Figures as (file-name suffix, SVG text): written as `<name>-<suffix>.svg`, or
    /// `<name>.svg` for an empty suffix.
    pub figures: Vec<(String, String)>,
    /// A warning shown as a quote right under the title (a `--quick` run's, say).
    pub banner: Option<String>,
}

/// Text shown in a table for a missing number.
pub const MISSING: &str = "—";

/// Formats `value` with `decimals` digits after the point, or [`MISSING`] for `None`.
pub fn format_value(value: Option<f64>, decimals: usize) -> String {
    match value {
        Some(v) => format!("{v:.decimals$}"),
        None => MISSING.to_owned(),
    }
}

/// Escapes a cell for a Markdown table: `|` becomes `\|`, line breaks become spaces.
fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\r', '\n'], " ")
}

impl Table {
    /// An empty table with the given title and header.
    pub fn new(title: impl Into<String>, header: Vec<String>) -> Self {
        Self {
            title: title.into(),
            header,
            rows: Vec::new(),
        }
    }

    /// Appends a row of cells.
    pub fn push_row(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    /// The table as GitHub Markdown: an optional `**title**` line, then the header, the
    /// separator and the rows, every line with exactly `header.len()` cells (at least one),
    /// padded to aligned column widths.
    pub fn to_markdown(&self) -> String {
        let ncols = self.header.len().max(1);
        let cell_rows: Vec<Vec<String>> = std::iter::once(&self.header)
            .chain(&self.rows)
            .map(|r| {
                (0..ncols)
                    .map(|j| r.get(j).map(|c| md_cell(c)).unwrap_or_default())
                    .collect()
            })
            .collect();
        let mut widths = vec![3usize; ncols];
        for r in &cell_rows {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let mut s = String::from("|");
            for (c, &w) in cells.iter().zip(&widths) {
                let pad = w.saturating_sub(c.chars().count());
                let _ = write!(s, " {c}{} |", " ".repeat(pad));
            }
            s.push('\n');
            s
        };
        let mut out = String::new();
        if !self.title.is_empty() {
            let _ = writeln!(out, "**{}**\n", md_cell(&self.title));
        }
        let mut rows = cell_rows.iter();
        if let Some(h) = rows.next() {
            out.push_str(&line(h));
        }
        let sep: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
        out.push_str(&line(&sep));
        for r in rows {
            out.push_str(&line(r));
        }
        out
    }
}

/// Quotes one CSV field as RFC 4180 requires.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// A number for CSV / machine output: shortest round-trip form, empty when missing.
fn csv_number(v: Option<f64>) -> String {
    v.map(|x| format!("{x}")).unwrap_or_default()
}

/// The records as CSV: header `experiment,dataset,method,setting,metric,ours,published`, then one
/// line per record.
pub fn records_to_csv(records: &[Record]) -> String {
    let mut out = String::from("experiment,dataset,method,setting,metric,ours,published\n");
    for r in records {
        let fields = [
            csv_field(&r.experiment),
            csv_field(&r.dataset),
            csv_field(&r.method),
            csv_field(&r.setting),
            csv_field(&r.metric),
            csv_number(r.ours),
            csv_number(r.published),
        ];
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

/// The records as a pretty-printed JSON array.
pub fn records_to_json(records: &[Record]) -> Result<String, ExperimentError> {
    Ok(serde_json::to_string_pretty(records)?)
}

/// Pivots records into an "ours | published" table: one row per (dataset, method, setting) and,
/// per metric, a column of ours and a column of the paper's value side by side, all in order of
/// first appearance, formatted with `decimals` digits.
///
/// A metric with no published value in any record gets only the "ours" column; the method and
/// setting columns are left out when every method (setting) is empty. If several records share a row and metric,
/// the last wins.
pub fn pivot_table(title: impl Into<String>, records: &[Record], decimals: usize) -> Table {
    let mut row_keys: Vec<(&str, &str, &str)> = Vec::new();
    let mut metrics: Vec<&str> = Vec::new();
    for r in records {
        let key = (r.dataset.as_str(), r.method.as_str(), r.setting.as_str());
        if !row_keys.contains(&key) {
            row_keys.push(key);
        }
        if !metrics.contains(&r.metric.as_str()) {
            metrics.push(&r.metric);
        }
    }
    let has_method = row_keys.iter().any(|k| !k.1.is_empty());
    let has_setting = row_keys.iter().any(|k| !k.2.is_empty());
    let has_published: Vec<bool> = metrics
        .iter()
        .map(|m| {
            records
                .iter()
                .any(|r| r.metric == *m && r.published.is_some())
        })
        .collect();
    let mut header = vec!["dataset".to_owned()];
    if has_method {
        header.push("method".to_owned());
    }
    if has_setting {
        header.push("setting".to_owned());
    }
    for (m, &p) in metrics.iter().zip(&has_published) {
        if p {
            header.push(format!("{m} ours"));
            header.push(format!("{m} paper"));
        } else {
            header.push((*m).to_owned());
        }
    }
    let mut table = Table::new(title, header);
    for key in &row_keys {
        let mut row = vec![key.0.to_owned()];
        if has_method {
            row.push(key.1.to_owned());
        }
        if has_setting {
            row.push(key.2.to_owned());
        }
        for (m, &p) in metrics.iter().zip(&has_published) {
            let rec = records.iter().rev().find(|r| {
                (r.dataset.as_str(), r.method.as_str(), r.setting.as_str()) == *key
                    && r.metric == *m
            });
            row.push(format_value(rec.and_then(|r| r.ours), decimals));
            if p {
                row.push(format_value(rec.and_then(|r| r.published), decimals));
            }
        }
        table.push_row(row);
    }
    table
}

impl Report {
    /// An empty report.
    pub fn new(name: impl Into<String>, title: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: title.into(),
            ..Self::default()
        }
    }

    /// Adds `chart` as a figure of the report, written beside its tables as
    /// `<name>-<suffix>.svg` (`<name>.svg` when `suffix` is empty).
    pub fn figure(
        &mut self,
        suffix: impl Into<String>,
        chart: &gimc_plot::LineChart,
    ) -> Result<(), ExperimentError> {
        let svg = chart
            .to_svg()
            .map_err(|e| ExperimentError::Failed(format!("plot: {e}")))?;
        self.figures.push((suffix.into(), svg));
        Ok(())
    }

    /// Appends a record whose `experiment` field is this report's name.
    pub fn record(
        &mut self,
        dataset: impl Into<String>,
        method: impl Into<String>,
        setting: impl Into<String>,
        metric: impl Into<String>,
        ours: Option<f64>,
        published: Option<f64>,
    ) {
        self.records.push(Record {
            experiment: self.name.clone(),
            dataset: dataset.into(),
            method: method.into(),
            setting: setting.into(),
            metric: metric.into(),
            ours,
            published,
        });
    }

    /// Appends a note (chosen hyper-parameters, missing data, conventions).
    pub fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }

    /// The report as Markdown: `# title`, the banner as a quote, the tables (or the 4-decimal pivot of the records when
    /// there are none), then the notes as a bullet list.
    pub fn to_markdown(&self) -> String {
        let mut out = format!("# {}\n\n", md_cell(&self.title));
        if let Some(banner) = &self.banner {
            let _ = writeln!(out, "> {}\n", banner.replace(['\r', '\n'], " "));
        }
        if self.tables.is_empty() {
            if !self.records.is_empty() {
                out.push_str(&pivot_table("", &self.records, 4).to_markdown());
                out.push('\n');
            }
        } else {
            for t in &self.tables {
                out.push_str(&t.to_markdown());
                out.push('\n');
            }
        }
        if !self.notes.is_empty() {
            out.push_str("Notes:\n\n");
            for n in &self.notes {
                let _ = writeln!(out, "- {}", n.replace(['\r', '\n'], " "));
            }
        }
        out
    }

    /// The records as CSV (see [`records_to_csv`]).
    pub fn to_csv(&self) -> String {
        records_to_csv(&self.records)
    }

    /// The records as JSON (see [`records_to_json`]).
    pub fn to_json(&self) -> Result<String, ExperimentError> {
        records_to_json(&self.records)
    }
}

/// Writes one file through the output writer ([`gimc_data::output`]: a temporary file synced
/// and renamed over it) and returns its path.
fn write_file(path: PathBuf, contents: &str) -> Result<PathBuf, ExperimentError> {
    gimc_data::output::write_file(&path, contents.as_bytes(), &[])?;
    Ok(path)
}

/// A report name must be a plain file stem.
fn check_name(name: &str) -> Result<(), ExperimentError> {
    if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
        return Err(ExperimentError::Failed(format!(
            "invalid report name {name:?} (must be a plain file stem)"
        )));
    }
    Ok(())
}

/// Writes `<out_dir>/<name>.md`, `.csv` and `.json` and the report's figures as SVG (creating
/// `out_dir`) and returns their paths.
///
/// Errors: a report name that is empty or contains a path separator, or an I/O failure.
pub fn write_report(report: &Report, out_dir: &Path) -> Result<Vec<PathBuf>, ExperimentError> {
    let name = report.name.as_str();
    prepare_out_dir(name, out_dir)?;
    let mut paths = vec![
        write_file(out_dir.join(format!("{name}.md")), &report.to_markdown())?,
        write_file(out_dir.join(format!("{name}.csv")), &report.to_csv())?,
        write_file(out_dir.join(format!("{name}.json")), &report.to_json()?)?,
    ];
    paths.extend(write_figures(report, out_dir)?);
    Ok(paths)
}

/// Checks the report name and creates `out_dir`.
fn prepare_out_dir(name: &str, out_dir: &Path) -> Result<(), ExperimentError> {
    check_name(name)?;
    std::fs::create_dir_all(out_dir).map_err(ExperimentError::io(out_dir))
}

/// Writes the report's figures as `<out_dir>/<name>-<suffix>.svg` (`<name>.svg` for an empty
/// suffix), creating `out_dir`, and returns their paths.
///
/// Errors: a report name or suffix that is not a plain file-name part, or an I/O failure.
pub(crate) fn write_figures(
    report: &Report,
    out_dir: &Path,
) -> Result<Vec<PathBuf>, ExperimentError> {
    let name = report.name.as_str();
    prepare_out_dir(name, out_dir)?;
    let mut paths = Vec::new();
    for (suffix, svg) in &report.figures {
        if suffix.contains(['/', '\\']) || suffix == ".." {
            return Err(ExperimentError::Failed(format!(
                "invalid figure suffix {suffix:?} (must be a plain file-name part)"
            )));
        }
        let file = if suffix.is_empty() {
            format!("{name}.svg")
        } else {
            format!("{name}-{suffix}.svg")
        };
        paths.push(write_file(out_dir.join(file), svg)?);
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Report {
        let mut r = Report::new("t", "Title | with pipe");
        r.record("bibtex", "GIMC", "", "P@1 (%)", Some(64.123), Some(65.85));
        r.record("bibtex", "GIMC", "", "P@3 (%)", Some(39.0), Some(41.17));
        r.record("bibtex", "SLEEC", "", "P@1 (%)", None, Some(65.08));
        r.record(
            "yeast, \"small\"",
            "k-means",
            "",
            "time (s)",
            Some(1.5),
            None,
        );
        r.note("λ = 1 chosen on validation");
        r
    }

    #[test]
    fn pivot_layout() {
        let t = pivot_table("x", &sample().records, 2);
        assert_eq!(
            t.header,
            [
                "dataset",
                "method",
                "P@1 (%) ours",
                "P@1 (%) paper",
                "P@3 (%) ours",
                "P@3 (%) paper",
                "time (s)"
            ]
        );
        assert_eq!(t.rows.len(), 3);
        assert_eq!(
            t.rows[0],
            [
                "bibtex", "GIMC", "64.12", "65.85", "39.00", "41.17", MISSING
            ]
        );
        assert_eq!(t.rows[1][2], MISSING);
        assert_eq!(t.rows[1][3], "65.08");
        assert_eq!(t.rows[2][6], "1.50");
    }

    #[test]
    fn markdown_escapes_and_aligns() {
        let mut t = Table::new("", vec!["a".into(), "b|c".into()]);
        t.push_row(vec!["1".into()]);
        t.push_row(vec!["x".into(), "y".into(), "dropped".into()]);
        let md = t.to_markdown();
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[0].contains("b\\|c"));
        let len = lines[0].chars().count();
        assert!(lines.iter().all(|l| l.chars().count() == len));
        assert!(!md.contains("dropped"));
        let md = sample().to_markdown();
        assert!(md.starts_with("# Title \\| with pipe\n"));
        assert!(md.contains("- λ = 1 chosen on validation"));
    }

    #[test]
    fn csv_quoting() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        let csv = sample().to_csv();
        assert!(csv.contains("\"yeast, \"\"small\"\"\",k-means,,time (s),1.5,\n"));
        assert!(csv.contains("t,bibtex,SLEEC,,P@1 (%),,65.08\n"));
    }

    #[test]
    fn bad_names_are_rejected() {
        let dir = std::env::temp_dir();
        for name in ["", "../x", "a/b", ".."] {
            let r = Report::new(name, "t");
            assert!(write_report(&r, &dir).is_err(), "{name:?}");
        }
    }

    #[test]
    fn reports_are_replaced_whole_through_the_output_writer() {
        let dir = std::env::temp_dir().join(format!("gimc-report-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut r = sample();
        r.figures.push(("fig".into(), "<svg/>\n".into()));
        write_report(&r, &dir).unwrap();
        r.note("a second run");
        let paths = write_report(&r, &dir).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        // no temporary file is left beside the reports
        assert_eq!(names, ["t-fig.svg", "t.csv", "t.json", "t.md"]);
        assert_eq!(std::fs::read_to_string(&paths[0]).unwrap(), r.to_markdown());
        // a directory where a report goes is refused, naming it
        std::fs::remove_file(dir.join("t.csv")).unwrap();
        std::fs::create_dir(dir.join("t.csv")).unwrap();
        let err = write_report(&r, &dir).unwrap_err();
        assert!(matches!(err, ExperimentError::Output(_)), "{err}");
        assert!(err.to_string().contains("t.csv: is a directory"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
