//! The harness runs experiments, keeps going after a failure, and the `datasets` experiment
//! reports every manifest set even when the data directory is empty.

use std::path::PathBuf;

use gimc_experiments::experiments::datasets::Datasets;
use gimc_experiments::{Context, Experiment, ExperimentError, Report, reproduce};

use crate::common::quick_context;

fn ctx(tag: &str) -> Context {
    quick_context(&format!("gimc-exp-{tag}"), 1, None)
}

struct Fails;

impl Experiment for Fails {
    fn name(&self) -> &'static str {
        "fails"
    }
    fn description(&self) -> &'static str {
        "always fails"
    }
    fn run(&self, _: &Context) -> Result<Report, ExperimentError> {
        Err(ExperimentError::Failed("planned failure".into()))
    }
}

struct Tiny;

impl Experiment for Tiny {
    fn name(&self) -> &'static str {
        "tiny"
    }
    fn description(&self) -> &'static str {
        "one record"
    }
    fn run(&self, ctx: &Context) -> Result<Report, ExperimentError> {
        let mut r = Report::new(self.name(), "Tiny");
        r.record("d", "m", "", "err", Some(ctx.seed as f64), Some(0.5));
        Ok(r)
    }
}

#[test]
fn reproduce_continues_after_failure_and_writes_files() {
    let ctx = ctx("run");
    let list: Vec<Box<dyn Experiment>> = vec![Box::new(Fails), Box::new(Tiny)];
    let mut out = Vec::new();
    let summary = reproduce(&ctx, &list, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(!summary.all_ok());
    assert_eq!(summary.failed(), vec!["fails"]);
    assert!(text.contains("planned failure"));
    assert!(
        text.contains("| err ours | err paper |") || text.contains("err ours"),
        "{text}"
    );
    assert!(summary.to_string().contains("1 failed (fails)"));
    for ext in ["md", "csv", "json"] {
        let p: PathBuf = ctx.out_dir.join(format!("tiny.{ext}"));
        assert!(p.is_file(), "{p:?}");
    }
    assert!(!ctx.out_dir.join("fails.json").exists());
    std::fs::remove_dir_all(ctx.out_dir.parent().unwrap()).ok();
}

#[test]
fn datasets_on_empty_directory_lists_everything_as_missing() {
    let ctx = ctx("empty");
    let report = Datasets.run(&ctx).unwrap();
    let manifest = gimc_data::Manifest::embedded().unwrap();
    let table = &report.tables[0];
    let n_parts: usize = manifest.sets.iter().map(|s| s.parts.len()).sum();
    assert_eq!(table.rows.len(), n_parts);
    for row in &table.rows {
        assert!(row.last().unwrap().starts_with("missing"), "{row:?}");
    }
    // Nothing loaded: no "ours", but the papers' shapes are there.
    assert!(report.records.iter().all(|r| r.ours.is_none()));
    let bib = report
        .records
        .iter()
        .find(|r| r.dataset == "bibtex" && r.setting == "test" && r.metric == "rows")
        .unwrap();
    assert_eq!(bib.published, Some(2515.0));
    // Sets not obtained are listed with their sources.
    assert_eq!(report.tables[2].rows.len(), manifest.not_obtained.len());
}

#[test]
fn datasets_on_real_data_when_available() {
    // Runs only where the data directory is configured (GIMC_DATA) and holds bibtex.
    let Some(dir) = std::env::var_os("GIMC_DATA").map(PathBuf::from) else {
        return;
    };
    if !dir.join("bibtex/bibtex-test.arff").is_file() {
        return;
    }
    let mut ctx = ctx("real");
    ctx.data_dir = dir;
    let report = Datasets.run(&ctx).unwrap();
    for r in report.records.iter().filter(|r| r.dataset == "bibtex") {
        assert!(r.ours.is_some(), "{r:?}");
        if let Some(p) = r.published {
            assert_eq!(r.ours, Some(p), "{r:?}");
        }
    }
}
