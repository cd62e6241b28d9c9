//! The `gimc` command line (DESIGN §1), also usable as a library.
//!
//! ```
//! use gimc_cli::{MapRegistry, run_with};
//!
//! // A small multi-class LIBSVM file: 60 rows, 3 separable classes, 4 features.
//! let dir = std::env::temp_dir().join(format!("gimc-cli-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let mut text = String::new();
//! for i in 0..60 {
//!     let (c, t) = (i % 3, i as f64 * 0.01);
//!     let x1 = if c == 0 { 1.0 + t } else { -t };
//!     let x2 = if c == 1 { 1.0 + t } else { t };
//!     let x3 = if c == 2 { 1.0 - t } else { 0.1 * t };
//!     text.push_str(&format!("{} 1:{x1} 2:{x2} 3:{x3} 4:0.5\n", c + 1));
//! }
//! let (data, model, pred) = (dir.join("train.svm"), dir.join("m.gimc"), dir.join("pred.txt"));
//! std::fs::write(&data, text)?;
//! let data = data.to_str().ok_or("non-UTF-8 temp path")?;
//! let model = model.to_str().ok_or("non-UTF-8 temp path")?;
//! let pred = pred.to_str().ok_or("non-UTF-8 temp path")?;
//!
//! // `gimc fit` (GIMC-LFF, a one-point grid, 2 outer iterations), then `gimc predict`.
//! let registry = MapRegistry::builtin();
//! let fit = ["gimc", "-q", "fit", data, "--m", "20", "--gamma", "0.5", "--lambda", "0.1"];
//! run_with(fit.into_iter().chain(["--iters", "2", "-o", model]), &registry)?;
//! run_with(["gimc", "-q", "predict", data, "-m", model, "-o", pred], &registry)?;
//!
//! // A first line recording what the file holds, a line naming the classes in index order,
//! // then one predicted class index per line (classes `1`, `2`, `3` are 0, 1, 2).
//! let predicted = std::fs::read_to_string(pred)?;
//! let mut lines = predicted.lines();
//! assert_eq!(lines.next(), Some("# gimc predictions: kind=classes"));
//! assert_eq!(lines.next(), Some(r#"# gimc classes: ["1","2","3"]"#));
//! let rows: Vec<&str> = lines.collect();
//! assert_eq!(rows.len(), 60);
//! let correct = rows.iter().enumerate().filter(|(i, l)| **l == (i % 3).to_string());
//! assert!(correct.count() >= 54);
//!
//! // Bad arguments are returned as an error, never printed or exited on.
//! let err = run_with(["gimc", "fit", data, "--iters", "many"], &registry).err();
//! assert!(err.ok_or("expected an error")?.to_string().contains("--iters"));
//! std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Subcommands
//!
//! - `fit`: GIMC / IMC with model selection on a validation split, saved as a versioned model
//!   file;
//! - `predict`: top-k labels or classes of new rows from a saved model;
//! - `cluster`: the k-means family, and clustering from pairwise constraints by GIMC
//!   Algorithm 2 or MCCC;
//! - `complete`: complete a partially observed matrix (MC-ALS, IMC by ALS, nuclear-norm MC /
//!   IMC by FPC, PU-IMC, or GIMC with learned maps on row and column features), λ (and for
//!   GIMC m, γ and the iteration count) chosen on held-out entries;
//! - `transduce`: MC-1 / MC-b (or imputation + SVM baselines) on a file with missing feature
//!   values and unlabelled rows;
//! - `constraints`: sample a constraint file from labelled data;
//! - `eval`: P@k, accuracy, RMSE, clustering accuracy of a prediction file, and the label and
//!   imputation errors of a `transduce` output;
//! - `plot`: SVG of a fit trace;
//! - `data`: summaries of data sets (`info`, `list`) and synthetic XMC-scale data (`synth xmc`).
//!
//! Errors, including bad arguments, are one clear line on stderr and exit status 1; no input
//! makes it panic. Progress (indicatif) draws on stderr only, and only when it is a terminal.
//!
//! # Your own binary
//!
//! [`main_with`] runs the command line with a [`MapRegistry`] of your choice, so a small binary
//! of your own gets every `gimc` subcommand with your feature maps selectable by name
//! (`--method gimc-NAME` learns a map of the family `NAME`, `imc-NAME` keeps its random draw)
//! and your model files loadable by `gimc predict` (not run here: it reads the process's
//! arguments):
//!
//! ```no_run
//! use gimc::MapRegistry;
//!
//! fn main() -> std::process::ExitCode {
//!     let mut registry = MapRegistry::builtin();
//!     // registry.register_family(MyFamily)?; registry.register_codec::<MyMap>()?;
//!     gimc_cli::main_with(registry)
//! }
//! ```
//!
//! [`run_with`], used above, is the same from an argument list, returning the error instead of
//! printing it (for tests and embedding).

#![deny(missing_docs)]

mod cluster;
mod common;
mod complete;
mod data;
mod eval;
mod fit;
mod globals;
mod group;
mod plot;
mod predict;
mod progress;
mod transduce;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
pub use gimc::MapRegistry;

/// Matrix completion with side information and learned kernel feature maps.
#[derive(Parser)]
#[command(name = "gimc", version, about, propagate_version = true)]
struct Cli {
    /// Data directory holding the named sets (default: $GIMC_DATA, else datasets/).
    #[arg(long, global = true, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    json: bool,
    /// No progress display or informational messages on stderr.
    #[arg(long, short = 'q', global = true)]
    quiet: bool,
    /// Worker threads (default: all cores; at most 4 per core, and 1024).
    #[arg(long, global = true, value_name = "N")]
    threads: Option<usize>,
    /// Seed of every random draw (splits, maps, k-means seeding).
    #[arg(long, global = true, default_value_t = 0)]
    seed: u64,
    /// The label / class column of CSV inputs: a header name, a 0-based index, or `last`.
    #[arg(long, global = true, value_name = "COLUMN")]
    label_column: Option<String>,
    /// The label columns of a multi-label CSV input, comma-separated: header names, 0-based
    /// indices, or ranges with both ends included (`l0..l3`, `3..7`). A cell is a positive when
    /// it is a non-zero number or `true`. `fit` stores them in the model, so `predict` (and
    /// `eval -m MODEL`) find them again.
    #[arg(long, global = true, value_name = "COLUMNS")]
    label_columns: Option<String>,
    /// A non-numeric CSV column to keep as features although it looks like a class (few
    /// distinct values, or named class, label, species, target, y or category); repeat or
    /// comma-separate for several. Without it such a column is refused when no target is
    /// named.
    #[arg(long, global = true, value_name = "COLUMN", value_delimiter = ',')]
    keep_column: Vec<String>,
    /// The Mulan XML label file of an ARFF input (default: found beside it: `NAME.xml` for
    /// `NAME[-train|-test][-sparse].arff`, else the one XML file whose labels are all
    /// attributes of the ARFF file).
    #[arg(long, global = true, value_name = "FILE.xml")]
    label_file: Option<PathBuf>,
    /// The input is multi-label: a LIBSVM file's targets are comma-separated label lists even
    /// if no row has more than one (by default any row with a list makes the file
    /// multi-label); other formats must be multi-label by themselves.
    #[arg(long, global = true)]
    multi_label: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Fit a multi-label or multi-class model (GIMC-LFF, GIMC-LNYS, IMC-RFF, IMC-NYS, and the
    /// random-phase GIMC-LFF-phase / IMC-RFF-phase) and save it.
    Fit(fit::FitArgs),
    /// Predict top-k labels / classes / scores of new rows with a saved model.
    Predict(predict::PredictArgs),
    /// Cluster rows (k-means family, or from pairwise constraints).
    Cluster(cluster::ClusterArgs),
    /// Complete a partially observed matrix (MC-ALS, IMC, nuclear-norm MC / IMC, PU-IMC, or GIMC
    /// with learned maps on row / column features).
    Complete(complete::CompleteArgs),
    /// Transductive multi-label / multi-class learning with missing features (MC-1 / MC-b):
    /// predict the unlabelled rows of a file and impute its missing values.
    Transduce(transduce::TransduceArgs),
    /// Sample a pairwise constraint file from a labelled set.
    Constraints(cluster::ConstraintArgs),
    /// Metrics of a prediction file against the truth.
    Eval(eval::EvalArgs),
    /// Draw a fit trace (`gimc fit --trace`) as SVG.
    Plot(plot::PlotArgs),
    /// Inspect data sets.
    #[command(subcommand)]
    Data(data::DataCommand),
}

fn run(cli: &Cli, registry: &MapRegistry) -> anyhow::Result<()> {
    if let Some(t) = cli.threads {
        let t = gimc::threads::check_threads(t).map_err(|e| match e {
            gimc::GimcError::InvalidParameter { reason, .. } => {
                anyhow::anyhow!("--threads: {reason}")
            }
            other => other.into(),
        })?;
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build_global()
            .map_err(|e| anyhow::anyhow!("--threads: {e}"))?;
    }
    let g = globals::Globals {
        data_dir: cli.data_dir.clone(),
        json: cli.json,
        quiet: cli.quiet,
        seed: cli.seed,
        label_column: cli.label_column.clone(),
        label_columns: cli
            .label_columns
            .as_deref()
            .map(gimc_data::ColumnRange::parse_list)
            .unwrap_or_default(),
        keep_columns: cli.keep_column.clone(),
        labels_file: cli.label_file.clone(),
        multi_label: cli.multi_label,
        registry: registry.clone(),
    };
    if cli.label_columns.is_some() && g.label_columns.is_empty() {
        anyhow::bail!("--label-columns: no columns given");
    }
    match &cli.command {
        Command::Fit(a) => fit::run(a, &g),
        Command::Predict(a) => {
            // rows in the layout of the fit: the model's label columns are labels again (a
            // model that cannot be read is reported by `predict` itself)
            let g = match (&a.pairs, a.target.as_deref()) {
                (None, Some(t)) => common::with_model_label_columns(&g, &a.model, t).unwrap_or(g),
                _ => g,
            };
            predict::run(a, &g)
        }
        Command::Cluster(a) => cluster::run(a, &g),
        Command::Complete(a) => complete::run(a, &g),
        Command::Transduce(a) => transduce::run(a, &g),
        Command::Constraints(a) => cluster::run_constraints(a, &g),
        Command::Eval(a) => eval::run(a, &g),
        Command::Plot(a) => plot::run(a, &g),
        Command::Data(cmd) => data::run(cmd, &g),
    }
}

/// Prints `gimc: error: <msg>` as one line on stderr (newlines inside `msg` flattened).
/// One line for an error: its context chain joined by ": ", leaving out a cause whose text
/// the line already holds (an error that prints its source and also returns it, as I/O errors
/// often do, would otherwise repeat the OS message).
fn error_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

fn report_error(msg: &str) -> ExitCode {
    let msg = msg.trim().replace('\n', " ");
    #[allow(clippy::print_stderr)]
    {
        eprintln!("gimc: error: {msg}");
    }
    ExitCode::FAILURE
}

/// The first line of a clap usage error without clap's `error: ` prefix (clap adds a usage
/// block and a `--help` hint on further lines).
fn clap_message(e: &clap::Error) -> String {
    let rendered = e.to_string();
    let first = rendered
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("invalid arguments");
    first.strip_prefix("error: ").unwrap_or(first).to_string()
}

/// Runs the command line on the process's arguments with the map families and codecs of
/// `registry`: parses, runs, prints errors as one line `gimc: error: …` on stderr and returns
/// the exit status (`--help` / `--version` print and exit as usual).
pub fn main_with(registry: MapRegistry) -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            return match e.kind() {
                // --help, --version and bare `gimc` print clap's own text
                ErrorKind::DisplayHelp
                | ErrorKind::DisplayVersion
                | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
                _ => report_error(&format!("{} (see --help)", clap_message(&e))),
            };
        }
    };
    match run(&cli, &registry) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => report_error(&error_line(&e)),
    }
}

/// Runs the command line on `args` (the first item is the program name) with `registry`,
/// returning the error, with its context chain, instead of printing it. Output goes to stdout
/// or the files the arguments name, as with the binary.
pub fn run_with<I, T>(args: I, registry: &MapRegistry) -> anyhow::Result<()>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = Cli::try_parse_from(args).map_err(|e| anyhow::anyhow!(clap_message(&e)))?;
    run(&cli, registry)
}

#[cfg(test)]
mod tests {
    use super::error_line;

    /// An error that prints its source and also returns it.
    #[derive(Debug)]
    struct Repeats {
        source: std::io::Error,
    }

    impl std::fmt::Display for Repeats {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "i/o error on m.gimc: {}", self.source)
        }
    }

    impl std::error::Error for Repeats {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.source)
        }
    }

    #[test]
    fn error_line_joins_the_chain_without_repeating_a_cause() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        let e = anyhow::Error::new(Repeats { source: io }).context("loading the model");
        assert_eq!(
            error_line(&e),
            "loading the model: i/o error on m.gimc: No such file"
        );
        let plain = anyhow::anyhow!("inner").context("outer");
        assert_eq!(error_line(&plain), "outer: inner");
    }
}
