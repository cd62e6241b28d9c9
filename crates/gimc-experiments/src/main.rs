//! The `gimc-experiments` binary (DESIGN §4, §6): `reproduce` runs the registered experiments,
//! prints their tables and writes `<out>/<name>.{md,csv,json}` (and `.svg` figures); `render`
//! redraws the figures from saved `<name>.json` records without rerunning; `datasets` verifies the data
//! directory against the manifest and `datasets fetch` downloads the missing files
//! (`gimc_data::fetch`; `$GIMC_DATA_MIRROR` replaces the manifest's mirror URLs).

// A command-line program: printing is its job.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// mimalloc, told to keep freed pages for reuse ([`gimc_linalg::memory::retain_freed_pages`]):
/// the large, short-lived n × m blocks of a fit then cost no fresh page faults or unmap
/// shoot-downs each time (glibc unmaps blocks over 32 MiB).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use anyhow::{Result, bail};
use clap::{Args, Parser, Subcommand};
use gimc_data::fetch::{FetchParams, FetchStatus, fetch_all};
use gimc_data::{FileStatus, Manifest, resolve_data_dir, verify_all};
use gimc_experiments::bench::{
    BenchRun, Measurement, peak_rss_bytes, render_markdown, select_benches, update_markdown,
};
use gimc_experiments::{Context, Record, registry, render, reproduce, select, skipped_by_default};

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
    /// Verify the data directory against the manifest and report what is missing; `datasets
    /// fetch` downloads the missing files.
    Datasets(DatasetsArgs),
    /// Redraw the figures of saved records (<out>/<name>.json of an earlier `reproduce`) as
    /// <out>/<name>-<suffix>.svg, without rerunning the experiments.
    Render {
        /// Record files (JSON arrays as `reproduce` writes them).
        #[arg(required = true, value_name = "RECORDS.json")]
        records: Vec<PathBuf>,
        /// Output directory.
        #[arg(long, default_value = "out")]
        out: PathBuf,
    },
    /// Run the benchmarks, each in its own process, print them and write a Markdown report.
    Bench(BenchArgs),
    /// Write one trial of `mc1-yeast` or `mc1-emotions` (the experiment's features and labels
    /// with that trial's hidden cells as `?`, and the complete truth) as Mulan files, and print
    /// the `gimc transduce` / `gimc eval` commands that repeat the trial's MC-1 and MC-b fits.
    TrialData(TrialDataArgs),
    /// Run one benchmark in this process and print its measurements as JSON (used by `bench`).
    #[command(hide = true)]
    BenchOne {
        /// The benchmark's name.
        name: String,
        /// Data directory.
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
        /// Smaller sizes.
        #[arg(long)]
        quick: bool,
        /// Seed.
        #[arg(long, default_value_t = 2016)]
        seed: u64,
    },
}

#[derive(Debug, Args)]
struct BenchArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Write the Markdown report here (e.g. docs/BENCHMARKS.md).
    #[arg(long, value_name = "FILE")]
    write: Option<PathBuf>,
}

/// The options `bench` and `reproduce` share: which runs, how big, on which data, from which
/// seed.
#[derive(Debug, Args)]
struct RunArgs {
    /// Run only this one (repeatable; `--list` shows the names); default: all.
    #[arg(long = "only", value_name = "NAME")]
    only: Vec<String>,
    /// Smaller sizes, grids and trials (smoke runs, CI).
    #[arg(long)]
    quick: bool,
    /// Data directory (default: $GIMC_DATA, else datasets/).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Master seed of every random draw.
    #[arg(long, default_value_t = 2016)]
    seed: u64,
    /// List the names (marking those a plain run skips) and exit.
    #[arg(long)]
    list: bool,
}

/// Runs each selected benchmark in a child process (so its peak memory is its own), prints the
/// measurements and optionally writes the Markdown report.
fn run_bench(args: BenchArgs) -> Result<()> {
    let selected = select_benches(&args.run.only)?;
    let mut stdout = std::io::stdout().lock();
    if args.run.list {
        for b in &selected {
            writeln!(stdout, "{:<16} {}", b.name(), b.description())?;
        }
        return Ok(());
    }
    let data_dir = resolve_data_dir(args.run.data_dir.as_deref());
    let exe = std::env::current_exe()?;
    let mut results = Vec::new();
    let mut failed = Vec::new();
    for b in &selected {
        writeln!(stdout, "==> {}", b.name())?;
        stdout.flush()?;
        let mut cmd = std::process::Command::new(&exe);
        cmd.args(["bench-one", b.name(), "--seed", &args.run.seed.to_string()])
            .arg("--data-dir")
            .arg(&data_dir)
            .stderr(std::process::Stdio::inherit());
        if args.run.quick {
            cmd.arg("--quick");
        }
        let out = cmd.output()?;
        if !out.status.success() {
            writeln!(stdout, "<== {} failed ({})", b.name(), out.status)?;
            failed.push(b.name());
            continue;
        }
        let ms: Vec<Measurement> = serde_json::from_slice(&out.stdout)?;
        for m in &ms {
            let reference = match (m.reference, &m.reference_source) {
                (Some(r), Some(src)) => format!("   (reference {r} {}: {src})", m.unit),
                _ => String::new(),
            };
            writeln!(
                stdout,
                "    {:<40} {:<24} {:>12.4} {}{reference}",
                m.case, m.metric, m.value, m.unit
            )?;
        }
        results.push((b.name().to_string(), b.description().to_string(), ms));
    }
    if let Some(path) = &args.write {
        let machine = format!(
            "{} cores, {}",
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            std::env::consts::ARCH
        );
        let date = std::process::Command::new("date")
            .arg("-u")
            .arg("+%Y-%m-%d")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|| "an unknown date".into());
        let command = if args.run.quick {
            "cargo xtask bench --quick"
        } else {
            "cargo xtask bench"
        };
        // an existing report keeps its prose: only the generated parts are replaced
        let run = BenchRun {
            machine: &machine,
            date: &date,
            command,
        };
        let report = match std::fs::read_to_string(path) {
            Ok(existing) => update_markdown(&existing, &results, &run),
            Err(_) => render_markdown(&results, &run),
        };
        gimc_data::output::write_file(path, report.as_bytes(), &[])?;
        writeln!(stdout, "wrote {}", path.display())?;
    }
    if !failed.is_empty() {
        bail!("benchmark(s) failed: {}", failed.join(", "));
    }
    Ok(())
}

/// Runs one benchmark here and prints its measurements, with this process's peak memory, as JSON.
fn run_bench_one(name: String, data_dir: Option<PathBuf>, quick: bool, seed: u64) -> Result<()> {
    let benches = select_benches(std::slice::from_ref(&name))?;
    let ctx = Context {
        data_dir: resolve_data_dir(data_dir.as_deref()),
        out_dir: PathBuf::from("out"),
        quick,
        seed,
    };
    let mut ms = Vec::new();
    for b in benches {
        ms.extend(b.run(&ctx)?);
    }
    if let Some(rss) = peak_rss_bytes() {
        ms.push(Measurement::new(
            "whole process",
            "peak RSS",
            rss as f64 / (1u64 << 20) as f64,
            "MiB",
        ));
    }
    println!("{}", serde_json::to_string(&ms)?);
    Ok(())
}

#[derive(Debug, Args)]
struct DatasetsArgs {
    /// Data directory (default: $GIMC_DATA, else datasets/).
    #[arg(long, value_name = "DIR", global = true)]
    data_dir: Option<PathBuf>,
    #[command(subcommand)]
    action: Option<DatasetsAction>,
}

#[derive(Debug, Subcommand)]
enum DatasetsAction {
    /// Download every manifest file that is missing or altered (from its mirror URL, or from
    /// $GIMC_DATA_MIRROR/<set>/<file> when that is set), checking size and sha256.
    Fetch {
        /// Fetch only this set (repeatable); default: every set.
        #[arg(long = "only", value_name = "NAME")]
        only: Vec<String>,
    },
}

#[derive(Debug, Args)]
struct TrialDataArgs {
    /// The experiment: mc1-yeast or mc1-emotions.
    experiment: String,
    /// Observed fraction ω of the trial (one of the experiment's: 0.4, 0.6, 0.8).
    #[arg(long)]
    omega: f64,
    /// Trial number (0-based; the experiment runs 10).
    #[arg(long, default_value_t = 0)]
    trial: usize,
    /// Output directory.
    #[arg(long, default_value = "out/trials")]
    out: PathBuf,
    /// Data directory (default: $GIMC_DATA, else datasets/).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Master seed (as `reproduce --seed`).
    #[arg(long, default_value_t = 2016)]
    seed: u64,
}

/// `trial-data`: writes the trial's files and prints the commands that repeat its fits.
fn run_trial_data(args: TrialDataArgs) -> Result<()> {
    use gimc_experiments::experiments::{mc1_common, mc1_emotions, mc1_yeast};
    let (spec, config) = match args.experiment.as_str() {
        "mc1-yeast" => (mc1_yeast::spec(false), mc1_yeast::config(false)),
        "mc1-emotions" => (mc1_emotions::spec(false), mc1_emotions::config(false)),
        other => bail!("trial-data: unknown experiment {other:?} (mc1-yeast or mc1-emotions)"),
    };
    let Some(wi) = spec
        .omegas
        .iter()
        .position(|&w| (w - args.omega).abs() < 1e-9)
    else {
        bail!(
            "{}: ω = {} is not one of its fractions {:?}",
            spec.experiment,
            args.omega,
            spec.omegas
        );
    };
    if args.trial >= config.trials {
        bail!(
            "{}: trial {} does not exist (it runs {} trials, 0 to {})",
            spec.experiment,
            args.trial,
            config.trials,
            config.trials - 1
        );
    }
    let ctx = Context {
        data_dir: resolve_data_dir(args.data_dir.as_deref()),
        out_dir: args.out.clone(),
        quick: false,
        seed: args.seed,
    };
    let (data, streams) = mc1_common::real_trial(&spec, &ctx, wi, args.trial)?;
    let stem = format!("{}-w{:.0}-t{}", spec.set, 100.0 * args.omega, args.trial);
    let (masked, truth) = mc1_common::write_trial_mulan(&data, &args.out, &stem)?;
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "wrote {} (hidden cells `?`) and {}",
        masked.display(),
        truth.display()
    )?;
    for (k, method) in config.methods.iter().enumerate() {
        let flag = match method {
            mc1_common::Method::Mc1 => "mc1",
            mc1_common::Method::McB => "mcb",
            _ => continue,
        };
        let mut path: Vec<String> = streams.iter().map(u64::to_string).collect();
        path.push((mc1_common::METHOD_STREAM_BASE + k as u64).to_string());
        let pred = args.out.join(format!("{stem}-{flag}.csv"));
        // the file holds the features as the experiment fits them (yeast: standardised over
        // all rows before the cells are hidden), so transduce must not rescale them
        writeln!(
            stdout,
            "{}: gimc --seed {} transduce {} --method {flag} --standardize false --stream {} -o {}\n      \
             gimc eval --transduction {} {} --input {}",
            method.name(),
            args.seed,
            masked.display(),
            path.join(","),
            pred.display(),
            pred.display(),
            truth.display(),
            masked.display()
        )?;
    }
    Ok(())
}

#[derive(Debug, Args)]
struct ReproduceArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Output directory.
    #[arg(long, default_value = "out")]
    out: PathBuf,
    /// Every experiment, including those a plain run skips (`--list` marks them).
    #[arg(long, conflicts_with = "only")]
    all: bool,
    /// First download the data files that are missing (see `datasets fetch`).
    #[arg(long)]
    fetch: bool,
}

fn run_reproduce(args: ReproduceArgs) -> Result<()> {
    if args.run.list {
        let mut stdout = std::io::stdout().lock();
        let listed = if args.run.only.is_empty() {
            registry()
        } else {
            select(&args.run.only)?
        };
        for e in &listed {
            writeln!(stdout, "{:<24} {}", e.name(), e.description())?;
            writeln!(stdout, "{:<24} run time: {}", "", e.expected_time())?;
            if let Some(reason) = e.skipped_by_default() {
                writeln!(
                    stdout,
                    "{:<24} (skipped by default: {reason}; run it with --only {} or --all)",
                    "",
                    e.name()
                )?;
            }
        }
        return Ok(());
    }
    let selected = if args.all {
        registry()
    } else {
        select(&args.run.only)?
    };
    if args.fetch
        && let Err(e) = run_fetch(args.run.data_dir.clone(), &[])
    {
        eprintln!("warning: {e:#}; experiments whose data is missing will say so");
    }
    let mut stdout = std::io::stdout().lock();
    let ctx = Context {
        data_dir: resolve_data_dir(args.run.data_dir.as_deref()),
        out_dir: args.out,
        quick: args.run.quick,
        seed: args.run.seed,
    };
    let summary = reproduce(&ctx, &selected, &mut stdout)?;
    writeln!(stdout, "{summary}")?;
    if args.run.only.is_empty() && !args.all {
        for (name, reason) in skipped_by_default() {
            writeln!(
                stdout,
                "skipped {name}: {reason} (run it with --only {name} or --all)"
            )?;
        }
    }
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
    if missing > 0 || !bad.is_empty() {
        writeln!(
            stdout,
            "run `cargo xtask datasets fetch` (or `--only NAME`) to download missing or altered files"
        )?;
    }
    stdout.flush()?;
    if !bad.is_empty() {
        bail!("altered or unreadable data files: {}", bad.join(", "));
    }
    Ok(())
}

/// Downloads the missing or altered files of the sets `only` (every set when empty), mirror
/// from $GIMC_DATA_MIRROR, progress bars only on a terminal; fails if any file failed.
fn run_fetch(data_dir: Option<PathBuf>, only: &[String]) -> Result<()> {
    let data_dir = resolve_data_dir(data_dir.as_deref());
    let params = FetchParams::default()
        .with_mirror(
            std::env::var("GIMC_DATA_MIRROR")
                .ok()
                .filter(|v| !v.is_empty()),
        )
        .with_progress(std::io::stderr().is_terminal())
        .check()?;
    let manifest = Manifest::embedded()?;
    {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "data directory: {}", data_dir.display())?;
        if let Some(m) = &params.mirror {
            writeln!(stdout, "mirror: {m} (GIMC_DATA_MIRROR)")?;
        }
        stdout.flush()?;
    }
    let reports = fetch_all(&data_dir, &manifest, only, &params)?;
    let mut stdout = std::io::stdout().lock();
    let (mut ok, mut present, mut failed) = (0usize, 0usize, Vec::new());
    for r in &reports {
        write!(stdout, "{r}")?;
        if !r.is_ok() {
            failed.push(r.set.clone());
        } else if r.fetched() == 0 {
            present += 1;
        } else {
            ok += 1;
        }
    }
    writeln!(
        stdout,
        "fetch: {} set(s): {ok} fetched, {present} already present, {} failed",
        reports.len(),
        failed.len()
    )?;
    stdout.flush()?;
    if !failed.is_empty() {
        let no_host = reports.iter().flat_map(|r| &r.files).any(
            |f| matches!(&f.status, FetchStatus::Failed { reason } if reason.contains("not found")),
        );
        if no_host {
            eprintln!(
                "a download host was not found: without a network, set GIMC_DATA_MIRROR to a \
                 mirror's base URL, or copy the files into {}/<set>/ (`cargo xtask datasets` \
                 lists them and checks their sha256)",
                data_dir.display()
            );
        }
        bail!("fetching failed for: {}", failed.join(", "));
    }
    Ok(())
}

/// Reads every record file and redraws their figures into `out`.
fn run_render(files: &[PathBuf], out: &std::path::Path) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    for file in files {
        let text = std::fs::read_to_string(file)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
        let records: Vec<Record> = serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{}: not a record array: {e}", file.display()))?;
        for path in render(&records, out)? {
            writeln!(stdout, "wrote {}", path.display())?;
        }
    }
    Ok(())
}

/// Runs the command; an error is printed on one line (its context chain joined by ": "), with
/// no backtrace, and the exit code is 1.
fn main() -> ExitCode {
    gimc_linalg::memory::retain_freed_pages();
    match run(Cli::parse().command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(command: Command) -> Result<()> {
    match command {
        Command::Reproduce(args) => run_reproduce(args),
        Command::Datasets(DatasetsArgs { data_dir, action }) => match action {
            None => run_datasets(data_dir),
            Some(DatasetsAction::Fetch { only }) => run_fetch(data_dir, &only),
        },
        Command::Render { records, out } => run_render(&records, &out),
        Command::Bench(args) => run_bench(args),
        Command::TrialData(args) => run_trial_data(args),
        Command::BenchOne {
            name,
            data_dir,
            quick,
            seed,
        } => run_bench_one(name, data_dir, quick, seed),
    }
}
