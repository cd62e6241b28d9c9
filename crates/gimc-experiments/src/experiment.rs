//! The experiment interface (DESIGN §4): the run [`Context`], the [`Experiment`] trait, the
//! [`registry`] of all experiments in their canonical order, selection by name, and
//! [`reproduce`], which runs a selection, prints each table and writes the report files.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use gimc_linalg::memory::process_cpu_seconds;

use crate::report::{Record, Report, write_figures, write_report};
use crate::{ExperimentError, experiments};

/// Where and how experiments run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    /// The data directory (DESIGN §6: `--data-dir`, else `$GIMC_DATA`, else `datasets/`);
    /// each set lives in `<data_dir>/<name>/`.
    pub data_dir: PathBuf,
    /// Where `<name>.md`, `.csv`, `.json` (and `.svg`) are written.
    pub out_dir: PathBuf,
    /// Run the smaller `--quick` grid (fewer trials) meant for CI and smoke runs.
    pub quick: bool,
    /// Master seed; experiments derive every stream from it with `gimc_linalg::rng`.
    pub seed: u64,
}

/// The wall time of an experiment as last measured, in seconds, for the full protocol and for
/// `--quick`: the full figures from the latest whole run in docs/REPRODUCTION.md's run-time
/// table (a two-core Zen 4 host), the quick ones from a whole `reproduce --quick` run of the
/// same code on two cores, both with the data present. `None` where not measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExpectedTime {
    /// Seconds of the full protocol.
    pub full: Option<u32>,
    /// Seconds of `--quick`.
    pub quick: Option<u32>,
}

impl ExpectedTime {
    /// Both times known.
    pub const fn new(full: u32, quick: u32) -> Self {
        Self {
            full: Some(full),
            quick: Some(quick),
        }
    }

    /// Only the full protocol's time known.
    pub const fn full(full: u32) -> Self {
        Self {
            full: Some(full),
            quick: None,
        }
    }
}

/// `s` seconds as `1 h 02 min`, `6 min 43 s`, `7 s` or `under 1 s`.
fn duration(s: u32) -> String {
    match s {
        0 => "under 1 s".to_owned(),
        1..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600 + 30) / 60),
    }
}

impl std::fmt::Display for ExpectedTime {
    /// `about 6 min 43 s (--quick: 7 s)`, or what of it is known.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.full, self.quick) {
            (Some(full), Some(quick)) => {
                write!(f, "about {} (--quick: {})", duration(full), duration(quick))
            }
            (Some(full), None) => write!(f, "about {} (--quick: not measured)", duration(full)),
            (None, Some(quick)) => write!(f, "--quick: about {}", duration(quick)),
            (None, None) => write!(f, "time not measured"),
        }
    }
}

/// One reproducible table or figure.
pub trait Experiment {
    /// Stable name (`gimc-table2`, `datasets`, …); also the output file stem.
    fn name(&self) -> &'static str;
    /// One line saying what the experiment reproduces.
    fn description(&self) -> &'static str;
    /// Runs the experiment (quick or full form per `ctx.quick`) and returns its report.
    /// It must not write files itself; [`reproduce`] writes them.
    fn run(&self, ctx: &Context) -> Result<Report, ExperimentError>;
    /// How long the experiment runs, full and `--quick` ([`ExpectedTime`]); `reproduce --list`
    /// shows it. Unknown by default.
    fn expected_time(&self) -> ExpectedTime {
        ExpectedTime::default()
    }
    /// Why a plain `reproduce` (no `--only`, no `--all`) skips this experiment, or `None` when
    /// it runs by default.
    fn skipped_by_default(&self) -> Option<&'static str> {
        None
    }
    /// The figures drawn from the experiment's records, as (file-name suffix, chart): what
    /// [`render`] redraws from a saved `<name>.json` without rerunning. An experiment whose
    /// [`Experiment::run`] draws its figures with this from its own records keeps the two
    /// identical. None by default.
    fn figures(
        &self,
        records: &[Record],
    ) -> Result<Vec<(String, gimc_plot::LineChart)>, ExperimentError> {
        let _ = records;
        Ok(Vec::new())
    }
}

/// Redraws the figures of saved records (the `<name>.json` of an earlier run, parsed) without
/// rerunning anything: for each experiment named in the records' `experiment` field, in order
/// of appearance, its [`Experiment::figures`] of its records, written as
/// `<out_dir>/<name>-<suffix>.svg` (`<name>.svg` for an empty suffix). Returns the paths.
///
/// Errors: an experiment name that is not registered, one that draws no figure from records,
/// a chart that cannot be drawn, or an I/O failure.
pub fn render(records: &[Record], out_dir: &Path) -> Result<Vec<PathBuf>, ExperimentError> {
    let mut names: Vec<&str> = Vec::new();
    for r in records {
        if !names.contains(&r.experiment.as_str()) {
            names.push(&r.experiment);
        }
    }
    let mut paths = Vec::new();
    for name in names {
        let experiment = select(&[name.to_owned()])?.remove(0);
        let mine: Vec<Record> = records
            .iter()
            .filter(|r| r.experiment == name)
            .cloned()
            .collect();
        let mut report = Report::new(experiment.name(), "");
        for (suffix, chart) in experiment.figures(&mine)? {
            report.figure(suffix, &chart)?;
        }
        if report.figures.is_empty() {
            return Err(ExperimentError::Failed(format!(
                "{name}: no figure to draw from these records"
            )));
        }
        paths.extend(write_figures(&report, out_dir)?);
    }
    Ok(paths)
}

/// Every experiment, in the order `reproduce` runs them.
pub fn registry() -> Vec<Box<dyn Experiment>> {
    vec![
        Box::new(experiments::datasets::Datasets),
        Box::new(experiments::gimc_fig1::GimcFig1),
        Box::new(experiments::gimc_fig2::GimcFig2),
        Box::new(experiments::gimc_table2::GimcTable2),
        Box::new(experiments::gimc_multiclass::GimcMulticlass),
        Box::new(experiments::imc_sample_complexity::ImcSampleComplexity),
        Box::new(experiments::pu_imc::PuImc),
        Box::new(experiments::mc1_synthetic::Mc1Synthetic),
        Box::new(experiments::mc1_emotions::Mc1Emotions),
        Box::new(experiments::mc1_yeast::Mc1Yeast),
        Box::new(experiments::okmf_table2::OkmfTable2),
        Box::new(experiments::okmf_scaling::OkmfScaling),
        Box::new(experiments::gimc_table3::GimcTable3),
        Box::new(experiments::gimc_table2_extended::GimcTable2Extended),
    ]
}

/// The experiments a plain `reproduce` skips, with the reason (see
/// [`Experiment::skipped_by_default`]).
pub fn skipped_by_default() -> Vec<(&'static str, &'static str)> {
    registry()
        .iter()
        .filter_map(|e| e.skipped_by_default().map(|r| (e.name(), r)))
        .collect()
}

/// The names of every registered experiment, in registry order.
pub fn experiment_names() -> Vec<&'static str> {
    registry().iter().map(|e| e.name()).collect()
}

/// The experiments named in `only` (in the order given, duplicates dropped), or, when `only`
/// is empty, every experiment that runs by default (all but [`skipped_by_default`]; the whole
/// [`registry`] is `--all`).
///
/// Errors: [`ExperimentError::UnknownExperiment`] for the first unknown name, listing the known
/// ones.
pub fn select(only: &[String]) -> Result<Vec<Box<dyn Experiment>>, ExperimentError> {
    if only.is_empty() {
        return Ok(registry()
            .into_iter()
            .filter(|e| e.skipped_by_default().is_none())
            .collect());
    }
    let mut selected: Vec<Box<dyn Experiment>> = Vec::new();
    for name in only {
        if selected.iter().any(|e| e.name() == name) {
            continue;
        }
        match registry().into_iter().find(|e| e.name() == name) {
            Some(e) => selected.push(e),
            None => {
                return Err(ExperimentError::UnknownExperiment {
                    name: name.clone(),
                    known: experiment_names().join(", "),
                });
            }
        }
    }
    Ok(selected)
}

/// The banner at the top of every report of a `--quick` run.
pub const QUICK_BANNER: &str = "**Quick protocol (`--quick`).** Smaller grids, fewer trials \
    and smaller sizes than the papers' protocol: these numbers are a smoke test and are not \
    comparable with the published ones. Run without `--quick` for the reproduction.";

/// The outcome of one experiment in a [`reproduce`] run.
#[derive(Debug)]
pub struct Outcome {
    /// Experiment name.
    pub name: &'static str,
    /// Files written, or why the experiment failed.
    pub result: Result<Vec<PathBuf>, ExperimentError>,
    /// Wall-clock seconds spent running (not writing) it.
    pub seconds: f64,
    /// CPU seconds of the process over the same stretch (every thread), where the platform
    /// tells ([`process_cpu_seconds`]).
    pub cpu_seconds: Option<f64>,
}

/// The outcomes of a [`reproduce`] run.
#[derive(Debug, Default)]
pub struct Summary {
    /// One entry per experiment run, in order.
    pub outcomes: Vec<Outcome>,
}

impl Summary {
    /// Names of the experiments that failed.
    pub fn failed(&self) -> Vec<&'static str> {
        self.outcomes
            .iter()
            .filter(|o| o.result.is_err())
            .map(|o| o.name)
            .collect()
    }

    /// Whether every experiment succeeded.
    pub fn all_ok(&self) -> bool {
        self.outcomes.iter().all(|o| o.result.is_ok())
    }

    /// The per-experiment wall-time table (Markdown): experiment, status, wall time, CPU time
    /// and the cores it kept busy on average (CPU / wall), and a total row; the same table is
    /// kept in docs/REPRODUCTION.md.
    pub fn wall_time_table(&self) -> String {
        let fmt = |s: f64| {
            let s = s.round() as u64;
            format!("{} min {:02} s", s / 60, s % 60)
        };
        let cpu = |cpu: Option<f64>, wall: f64| match cpu {
            Some(c) if wall > 0.0 => (fmt(c), format!("{:.2}", c / wall)),
            _ => ("—".to_owned(), "—".to_owned()),
        };
        let mut out = String::from(
            "| experiment | status | wall time | CPU time | cores busy |\n\
             | --- | --- | ---: | ---: | ---: |\n",
        );
        for o in &self.outcomes {
            let status = if o.result.is_ok() { "ok" } else { "FAILED" };
            let (c, busy) = cpu(o.cpu_seconds, o.seconds);
            out.push_str(&format!(
                "| {} | {status} | {} | {c} | {busy} |\n",
                o.name,
                fmt(o.seconds)
            ));
        }
        let total: f64 = self.outcomes.iter().map(|o| o.seconds).sum();
        let total_cpu: Option<f64> = self.outcomes.iter().map(|o| o.cpu_seconds).sum();
        let (c, busy) = cpu(total_cpu, total);
        out.push_str(&format!(
            "| **total** | | **{}** | {c} | {busy} |\n",
            fmt(total)
        ));
        out
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let failed = self.failed();
        writeln!(f, "Wall time per experiment:\n\n{}", self.wall_time_table())?;
        write!(
            f,
            "reproduce: {} experiment(s), {} succeeded, {} failed",
            self.outcomes.len(),
            self.outcomes.len() - failed.len(),
            failed.len()
        )?;
        if !failed.is_empty() {
            write!(f, " ({})", failed.join(", "))?;
        }
        Ok(())
    }
}

/// Runs `experiments` in order: for each, prints a heading and its Markdown report (tables and
/// notes) to `out`, writes its files to `ctx.out_dir`, and records the outcome. A failing
/// experiment is reported on `out` and does not stop the others.
///
/// Errors only when writing to `out` fails.
pub fn reproduce(
    ctx: &Context,
    experiments: &[Box<dyn Experiment>],
    out: &mut dyn Write,
) -> std::io::Result<Summary> {
    let mut summary = Summary::default();
    for e in experiments {
        writeln!(out, "==> {}: {}", e.name(), e.description())?;
        let start = Instant::now();
        let cpu_start = process_cpu_seconds();
        let report = e.run(ctx);
        let seconds = start.elapsed().as_secs_f64();
        let cpu_seconds = cpu_start.zip(process_cpu_seconds()).map(|(a, b)| b - a);
        let result = match report {
            Ok(mut r) => {
                if ctx.quick {
                    r.banner = Some(QUICK_BANNER.to_owned());
                }
                writeln!(out, "{}", r.to_markdown())?;
                write_report(&r, &ctx.out_dir)
            }
            Err(e) => Err(e),
        };
        match &result {
            Ok(paths) => {
                let files: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                writeln!(
                    out,
                    "<== {} ok in {seconds:.1} s: {}\n",
                    e.name(),
                    files.join(", ")
                )?;
            }
            Err(err) => writeln!(out, "<== {} FAILED after {seconds:.1} s: {err}\n", e.name())?,
        }
        summary.outcomes.push(Outcome {
            name: e.name(),
            result,
            seconds,
            cpu_seconds,
        });
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_times_read_as_durations() {
        assert_eq!(
            ExpectedTime::new(403, 7).to_string(),
            "about 6 min 43 s (--quick: 7 s)"
        );
        assert_eq!(
            ExpectedTime::full(5207).to_string(),
            "about 1 h 27 min (--quick: not measured)"
        );
        assert_eq!(ExpectedTime::default().to_string(), "time not measured");
        // every registered experiment says how long its full run takes
        for e in registry() {
            assert!(e.expected_time().full.is_some(), "{}", e.name());
        }
    }

    #[test]
    fn a_quick_run_puts_the_banner_at_the_top_of_each_report() {
        let dir = std::env::temp_dir().join(format!("gimc-quick-banner-{}", std::process::id()));
        let ctx = Context {
            data_dir: dir.join("no-data"),
            out_dir: dir.clone(),
            quick: true,
            seed: 1,
        };
        let mut printed = Vec::new();
        let summary =
            reproduce(&ctx, &select(&["datasets".into()]).unwrap(), &mut printed).unwrap();
        assert!(summary.all_ok(), "{summary}");
        let md = std::fs::read_to_string(dir.join("datasets.md")).unwrap();
        let first_lines: Vec<&str> = md.lines().take(3).collect();
        assert!(first_lines[2].starts_with("> **Quick protocol"), "{md}");
        assert!(md.contains("not comparable with the published"));
        let full = Context {
            quick: false,
            ..ctx
        };
        reproduce(
            &full,
            &select(&["datasets".into()]).unwrap(),
            &mut Vec::new(),
        )
        .unwrap();
        let md = std::fs::read_to_string(dir.join("datasets.md")).unwrap();
        assert!(!md.contains("Quick protocol"), "{md}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn wall_time_table_lists_every_experiment_and_the_total() {
        let summary = Summary {
            outcomes: vec![
                Outcome {
                    name: "a",
                    result: Ok(Vec::new()),
                    seconds: 61.4,
                    cpu_seconds: Some(119.0),
                },
                Outcome {
                    name: "b",
                    result: Err(ExperimentError::Failed("x".into())),
                    seconds: 3599.6,
                    cpu_seconds: None,
                },
            ],
        };
        let t = summary.wall_time_table();
        assert!(
            t.contains("| a | ok | 1 min 01 s | 1 min 59 s | 1.94 |"),
            "{t}"
        );
        assert!(t.contains("| b | FAILED | 60 min 00 s | — | — |"), "{t}");
        // a total CPU time only when every experiment has one
        assert!(
            t.contains("| **total** | | **61 min 01 s** | — | — |"),
            "{t}"
        );
        assert!(summary.to_string().contains("Wall time per experiment"));
    }
}
