//! The `gimc-experiments` binary (DESIGN §4, §6): `reproduce` runs the registered experiments,
//! prints their tables and writes `<out>/<name>.{md,csv,json}`; `datasets` verifies the data
//! directory against the manifest.

// A command-line program: printing is its job.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::{Args, Parser, Subcommand};
use gimc_data::{FileStatus, Manifest, resolve_data_dir, verify_all};
use gimc_experiments::{Context, reproduce, select};

/// Reproduce the tables and figures of the GIMC, MC-1 and OKMF papers.
#[derive(Debug, Parser)]
#[command(name = "gimc-experiments", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run experiments, print their tables and write <out>/<name>.{md,csv,json}.
    Reproduce(ReproduceArgs),
    /// Verify the data directory against the manifest and report what is missing.
    Datasets {
        /// Data directory (default: $GIMC_DATA, else datasets/).
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
struct ReproduceArgs {
    /// Run only this experiment (repeatable); default: all, in registry order.
    #[arg(long = "only", value_name = "NAME")]
    only: Vec<String>,
    /// Smaller grids and fewer trials (CI / smoke runs).
    #[arg(long)]
    quick: bool,
    /// Data directory (default: $GIMC_DATA, else datasets/).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Output directory.
    #[arg(long, default_value = "out")]
    out: PathBuf,
    /// Master seed of every random draw.
    #[arg(long, default_value_t = 2016)]
    seed: u64,
    /// List the selected experiments and exit.
    #[arg(long)]
    list: bool,
}

fn run_reproduce(args: ReproduceArgs) -> Result<()> {
    let selected = select(&args.only)?;
    let mut stdout = std::io::stdout().lock();
    if args.list {
        for e in &selected {
            writeln!(stdout, "{:<24} {}", e.name(), e.description())?;
        }
        return Ok(());
    }
    let ctx = Context {
        data_dir: resolve_data_dir(args.data_dir.as_deref()),
        out_dir: args.out,
        quick: args.quick,
        seed: args.seed,
    };
    let summary = reproduce(&ctx, &selected, &mut stdout)?;
    writeln!(stdout, "{summary}")?;
    stdout.flush()?;
    if !summary.all_ok() {
        bail!(
            "{} experiment(s) failed: {}",
            summary.failed().len(),
            summary.failed().join(", ")
        );
    }
    Ok(())
}

/// Verifies every manifest set; missing files are reported (with where to get them) but only
/// altered or unreadable files make the command fail.
fn run_datasets(data_dir: Option<PathBuf>) -> Result<()> {
    let data_dir = resolve_data_dir(data_dir.as_deref());
    let reports = verify_all(&data_dir)?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "data directory: {}", data_dir.display())?;
    let (mut ok, mut missing, mut bad) = (0usize, 0usize, Vec::new());
    for r in &reports {
        write!(stdout, "{r}")?;
        for f in &r.files {
            match f.status {
                FileStatus::Ok { .. } => ok += 1,
                FileStatus::Missing { .. } => missing += 1,
                _ => bad.push(f.path.clone()),
            }
        }
    }
    let manifest = Manifest::embedded()?;
    if !manifest.not_obtained.is_empty() {
        writeln!(stdout, "not in gimc's data collection:")?;
        for n in &manifest.not_obtained {
            writeln!(
                stdout,
                "  {}: {} ({})",
                n.name,
                n.description,
                n.sources.join(", ")
            )?;
        }
    }
    writeln!(
        stdout,
        "datasets: {} set(s), {ok} file(s) ok, {missing} missing, {} altered or unreadable",
        reports.len(),
        bad.len()
    )?;
    stdout.flush()?;
    if !bad.is_empty() {
        bail!("altered or unreadable data files: {}", bad.join(", "));
    }
    Ok(())
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Command::Reproduce(args) => run_reproduce(args),
        Command::Datasets { data_dir } => run_datasets(data_dir),
    }
}
