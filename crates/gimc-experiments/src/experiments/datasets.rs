//! Experiment `datasets`: what is in the data directory (DESIGN §4, §6).
//!
//! For every set of the embedded manifest it verifies the files (presence, sha256, parsed
//! shape; `gimc_data::verify`), loads each part whose files are present (abalone and wine
//! quality with their 3-class binning, as the experiments use them) and tabulates rows,
//! features, labels or classes, stored entries and label cardinality, with the status of the
//! files and, for missing ones, where to get them. Shapes stated in the papers are recorded as
//! the published values, so differences (e.g. mushrooms 8,124 rows here vs 8,142 in the GIMC
//! paper) show in the table. Sets the experiments would use but that were not obtained are
//! listed with their sources.

use gimc_data::{
    FileStatus, Manifest, NamedOptions, SetEntry, Targets, VerifyReport, load_named_part, verify,
};

use crate::report::{MISSING, Report, Table, format_value, pivot_table};
use crate::{Context, ExpectedTime, Experiment, ExperimentError};

/// The `datasets` experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct Datasets;

/// Shapes stated in the papers (DESIGN §4): (set, part, metric, value). Part `*` applies to
/// every part of the set.
const PUBLISHED: &[(&str, &str, &str, f64)] = &[
    // GIMC paper, Table 2 data description.
    ("bibtex", "train", "rows", 4880.0),
    ("bibtex", "test", "rows", 2515.0),
    ("bibtex", "*", "features", 1836.0),
    ("bibtex", "*", "labels", 159.0),
    ("delicious", "train", "rows", 12920.0),
    ("delicious", "test", "rows", 3185.0),
    ("delicious", "*", "features", 500.0),
    ("delicious", "*", "labels", 983.0),
    // GIMC paper, Table 3.
    ("mushrooms", "all", "rows", 8142.0),
    ("mushrooms", "*", "features", 112.0),
    ("mushrooms", "*", "classes", 2.0),
    ("segment", "*", "features", 19.0),
    ("segment", "*", "classes", 7.0),
    ("covtype", "*", "features", 54.0),
    ("covtype", "*", "classes", 7.0),
    // NIPS 2010 transduction paper, Tables 4-5.
    ("emotions", "full", "rows", 593.0),
    ("emotions", "*", "features", 72.0),
    ("emotions", "*", "labels", 6.0),
    ("yeast", "*", "features", 103.0),
    ("yeast", "*", "labels", 14.0),
    // OKMF paper, Table 2.
    ("abalone", "all", "rows", 4177.0),
    ("abalone", "*", "features", 8.0),
    ("abalone", "*", "classes", 3.0),
    ("winequality", "white", "rows", 4898.0),
    ("winequality", "white", "features", 11.0),
    ("winequality", "white", "classes", 3.0),
    ("seismic", "*", "rows", 98528.0),
    ("seismic", "*", "features", 50.0),
    ("seismic", "*", "classes", 3.0),
    ("covtype-full", "*", "rows", 581_012.0),
    ("covtype-full", "*", "features", 54.0),
    ("covtype-full", "*", "classes", 7.0),
];

/// Whole-set sizes the papers give for sets stored in several parts, as notes.
const PUBLISHED_NOTES: &[&str] = &[
    "yeast: the NIPS 2010 paper uses all 2,417 rows (train 1,500 + test 917).",
    "segment: the GIMC paper states n = 2,319; the Weka files hold 1,500 + 810 = 2,310 rows.",
    "covtype: the GIMC paper's Covtype-sub (1,711 rows, balanced) is drawn from these files by \
     the experiment; OKMF uses all 581,012 rows, which are not available (covtype-full).",
    "abalone: the OKMF paper's 8 features count Sex as one column; it is one-hot encoded here.",
];

/// The published value of `metric` for `set`/`part`, if a paper states one.
fn published(set: &str, part: &str, metric: &str) -> Option<f64> {
    PUBLISHED
        .iter()
        .find(|(s, p, m, _)| *s == set && (*p == part || *p == "*") && *m == metric)
        .map(|t| t.3)
}

/// A short status for the files of one part: `ok`, or each problem with its file (missing
/// files named once, followed by where to get them); and whether every file is present.
fn part_status(report: &VerifyReport, files: &[&str]) -> (bool, String) {
    let mut problems = Vec::new();
    let mut missing = Vec::new();
    let mut source = None;
    for f in files {
        match report.files.iter().find(|r| r.path == *f) {
            Some(r) if r.status.is_ok() => {}
            Some(r) => match &r.status {
                FileStatus::Missing { source: s, .. } => {
                    missing.push(*f);
                    source = Some(s.clone());
                }
                other => problems.push(format!("{f}: {other}")),
            },
            None => problems.push(format!("{f}: not in the manifest's file list")),
        }
    }
    if !missing.is_empty() {
        let from = source
            .map(|s| format!(" (public source: {s})"))
            .unwrap_or_default();
        problems.insert(
            0,
            format!(
                "missing {}{from}; run `cargo xtask datasets fetch --only {}`",
                missing.join(", "),
                report.set
            ),
        );
    }
    if problems.is_empty() {
        (true, "ok".to_owned())
    } else {
        (missing.is_empty(), problems.join("; "))
    }
}

/// Formats an integer count for the table.
fn count(v: Option<f64>) -> String {
    format_value(v, 0)
}

impl Datasets {
    /// Tabulates one manifest set: one table row and the records of each part.
    fn set_rows(
        &self,
        ctx: &Context,
        entry: &SetEntry,
        report: &mut Report,
        table: &mut Table,
    ) -> Result<(), ExperimentError> {
        let verified = verify(&ctx.data_dir, entry);
        let opts = NamedOptions { bin_targets: true };
        for part in &entry.parts {
            let mut files = vec![part.file.as_str()];
            if let Some(l) = &part.labels_file {
                files.push(l);
            }
            let (present, mut status) = part_status(&verified, &files);
            let loaded = if present {
                match load_named_part(&ctx.data_dir, &entry.name, &part.name, &opts) {
                    Ok(ds) => Some(ds),
                    Err(e) => {
                        status = format!("load failed: {e}");
                        None
                    }
                }
            } else {
                None
            };
            let summary = loaded.as_ref().map(|d| d.summary());
            let target_metric = match loaded.as_ref().map(|d| &d.targets) {
                Some(Targets::Labels { .. }) => Some("labels"),
                Some(Targets::Classes { .. }) => Some("classes"),
                Some(_) => None,
                None => match (part.labels, part.classes) {
                    (Some(_), _) => Some("labels"),
                    (None, Some(_)) => Some("classes"),
                    _ => None,
                },
            };
            let s = summary.as_ref();
            let rows = s.map(|s| s.rows as f64);
            let features = s.map(|s| s.features as f64);
            let n_targets = s.map(|s| s.n_targets as f64);
            let nnz = s.map(|s| s.nnz as f64);
            let card = s.and_then(|s| s.label_cardinality);
            let name = entry.name.as_str();
            let pname = part.name.as_str();
            for (metric, ours) in [("rows", rows), ("features", features)] {
                report.record(
                    name,
                    "",
                    pname,
                    metric,
                    ours,
                    published(name, pname, metric),
                );
            }
            if let Some(m) = target_metric {
                report.record(name, "", pname, m, n_targets, published(name, pname, m));
            }
            report.record(name, "", pname, "nnz", nnz, None);
            if target_metric == Some("labels") {
                report.record(name, "", pname, "label cardinality", card, None);
            }
            let targets = match (target_metric, n_targets) {
                (Some(m), Some(v)) => format!("{v:.0} {m}"),
                (Some(m), None) => format!("{MISSING} {m}"),
                (None, _) => "real target".to_owned(),
            };
            table.push_row(vec![
                name.to_owned(),
                pname.to_owned(),
                entry.task.clone(),
                count(rows),
                count(features),
                targets,
                count(nnz),
                card.map_or_else(|| MISSING.to_owned(), |c| format!("{c:.3}")),
                status,
            ]);
        }
        if let Some(bins) = &entry.bins {
            report.note(format!(
                "{}: real target binned into {} classes ({}), edges {:?}.",
                entry.name,
                bins.names.len(),
                bins.names.join(", "),
                bins.edges
            ));
        }
        Ok(())
    }
}

impl Experiment for Datasets {
    fn name(&self) -> &'static str {
        "datasets"
    }

    fn description(&self) -> &'static str {
        "the sets in the data directory: parts, shapes, labels / classes, status and sources"
    }

    fn expected_time(&self) -> ExpectedTime {
        ExpectedTime::new(1, 1)
    }

    fn run(&self, ctx: &Context) -> Result<Report, ExperimentError> {
        let manifest = Manifest::embedded()?;
        let mut report = Report::new(self.name(), "Data sets in the data directory");
        report.note(format!("data directory: {}", ctx.data_dir.display()));
        let mut table = Table::new(
            format!("Data directory {}", ctx.data_dir.display()),
            [
                "set",
                "part",
                "task",
                "rows",
                "features",
                "labels / classes",
                "nnz",
                "label cardinality",
                "status",
            ]
            .map(String::from)
            .to_vec(),
        );
        for entry in &manifest.sets {
            self.set_rows(ctx, entry, &mut report, &mut table)?;
        }
        let mut missing = Table::new(
            "Not obtained (not in gimc's data collection)",
            ["set", "description", "sources"].map(String::from).to_vec(),
        );
        for n in &manifest.not_obtained {
            for metric in ["rows", "features", "classes"] {
                if let Some(p) = published(&n.name, "*", metric) {
                    report.record(&n.name, "", "", metric, None, Some(p));
                }
            }
            missing.push_row(vec![
                n.name.clone(),
                n.description.clone(),
                n.sources.join(", "),
            ]);
        }
        let compared: Vec<_> = report
            .records
            .iter()
            .filter(|r| r.published.is_some())
            .cloned()
            .collect();
        let n_missing = table
            .rows
            .iter()
            .filter(|r| r.get(3).is_some_and(|c| c == MISSING))
            .count();
        report.tables = vec![
            table,
            pivot_table("Shapes stated in the papers", &compared, 0),
            missing,
        ];
        for n in PUBLISHED_NOTES {
            report.note(*n);
        }
        report.note(format!(
            "{n_missing} part(s) could not be loaded; the status column says why and where to get the files."
        ));
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_lookup() {
        assert_eq!(published("bibtex", "test", "rows"), Some(2515.0));
        assert_eq!(published("bibtex", "test", "labels"), Some(159.0));
        assert_eq!(published("yeast", "train", "rows"), None);
        assert_eq!(published("winequality", "red", "classes"), None);
    }
}
