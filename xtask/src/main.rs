//! Project automation, run as `cargo xtask <command>` (alias in `.cargo/config.toml`).
//!
//! xtask keeps few dependencies and delegates the work to the workspace's own binaries through
//! `$CARGO` (DESIGN §2): `datasets`, `reproduce`, `render` and `bench` run the
//! `gimc-experiments` binary in release mode.

mod fuzz;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "gimc project automation")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Verify every dataset of datasets/manifest.toml (sha256 and parsed shape); `datasets
    /// fetch` downloads the missing ones.
    Datasets {
        /// Data directory (default: $GIMC_DATA, else datasets/).
        #[arg(long, global = true)]
        data_dir: Option<PathBuf>,
        #[command(subcommand)]
        action: Option<DatasetsCmd>,
    },
    /// Regenerate the papers' tables and figures with the published numbers beside ours.
    Reproduce {
        /// Run only these experiments (repeatable); `--list` shows the names.
        #[arg(long)]
        only: Vec<String>,
        /// Smaller grids and fewer trials (smoke runs, CI).
        #[arg(long)]
        quick: bool,
        /// Data directory (default: $GIMC_DATA, else datasets/).
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// Output directory for NAME.md / .csv / .json / .svg.
        #[arg(long, default_value = "out")]
        out: PathBuf,
        /// Seed of every random draw.
        #[arg(long)]
        seed: Option<u64>,
        /// List the experiments and exit.
        #[arg(long)]
        list: bool,
        /// Also the experiments a plain run skips (`--list` marks them).
        #[arg(long, conflicts_with = "only")]
        all: bool,
        /// First download the missing data files (`datasets fetch`; $GIMC_DATA_MIRROR applies).
        #[arg(long)]
        fetch: bool,
    },
    /// Redraw figures from saved records (the NAME.json of a `reproduce` run) without
    /// rerunning: `cargo xtask render docs/figures/gimc-fig1.json --out docs/figures`.
    Render {
        /// Record files (NAME.json).
        #[arg(required = true)]
        records: Vec<PathBuf>,
        /// Output directory for NAME-SUFFIX.svg.
        #[arg(long, default_value = "out")]
        out: PathBuf,
    },
    /// Run the benchmarks (each in its own process) and write docs/BENCHMARKS.md.
    Bench {
        /// Run only these benchmarks (repeatable); `--list` shows the names.
        #[arg(long)]
        only: Vec<String>,
        /// Smaller sizes (smoke runs); the report is then not written unless --write is given.
        #[arg(long)]
        quick: bool,
        /// Data directory (default: $GIMC_DATA, else datasets/).
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// Where to write the Markdown report (default: docs/BENCHMARKS.md for a full run).
        #[arg(long)]
        write: Option<PathBuf>,
        /// List the benchmarks and exit.
        #[arg(long)]
        list: bool,
    },
    /// Fuzz the readers and the model loader (coverage-guided, on stable): each target for
    /// --seconds; corpus and findings in target/fuzz-out/TARGET/.
    Fuzz {
        /// How long to run each target.
        #[arg(long, default_value_t = 60)]
        seconds: u64,
        /// Run only these targets (repeatable); default: every target.
        #[arg(long)]
        target: Vec<String>,
        /// Seed of the mutations.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
}

#[derive(Subcommand)]
enum DatasetsCmd {
    /// Download every missing or altered file (size and sha256 checked) from its manifest
    /// mirror URL, or from $GIMC_DATA_MIRROR/SET/FILE when that is set.
    Fetch {
        /// Fetch only this set (repeatable); default: every set.
        #[arg(long)]
        only: Vec<String>,
    },
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("xtask: {e:#}");
            }
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    let root = workspace_root()?;
    match cli.command {
        Cmd::Datasets { data_dir, action } => {
            let mut args = vec!["datasets".to_string()];
            if let Some(DatasetsCmd::Fetch { only }) = action {
                args.push("fetch".into());
                for name in only {
                    args.extend(["--only".to_string(), name]);
                }
            }
            push_path(&mut args, "--data-dir", data_dir.as_deref());
            run_experiments_bin(&root, &args)
        }
        Cmd::Reproduce {
            only,
            quick,
            data_dir,
            out,
            seed,
            list,
            all,
            fetch,
        } => {
            let mut args = vec!["reproduce".to_string()];
            if fetch {
                args.push("--fetch".into());
            }
            if all {
                args.push("--all".into());
            }
            for name in only {
                args.extend(["--only".to_string(), name]);
            }
            if quick {
                args.push("--quick".into());
            }
            if list {
                args.push("--list".into());
            }
            push_path(&mut args, "--data-dir", data_dir.as_deref());
            push_path(&mut args, "--out", Some(&out));
            if let Some(seed) = seed {
                args.extend(["--seed".to_string(), seed.to_string()]);
            }
            run_experiments_bin(&root, &args)
        }
        Cmd::Fuzz {
            seconds,
            target,
            seed,
        } => fuzz::run(&root, &target, seconds, seed),
        Cmd::Render { records, out } => {
            let mut args = vec!["render".to_string()];
            args.extend(records.iter().map(|p| p.display().to_string()));
            push_path(&mut args, "--out", Some(&out));
            run_experiments_bin(&root, &args)
        }
        Cmd::Bench {
            only,
            quick,
            data_dir,
            write,
            list,
        } => {
            if !list {
                build_gimc_for_bench(&root)?;
            }
            let mut args = vec!["bench".to_string()];
            for name in &only {
                args.extend(["--only".to_string(), name.clone()]);
            }
            if quick {
                args.push("--quick".into());
            }
            if list {
                args.push("--list".into());
            }
            push_path(&mut args, "--data-dir", data_dir.as_deref());
            // A full run of every benchmark refreshes docs/BENCHMARKS.md.
            let default_report = root.join("docs/BENCHMARKS.md");
            let report = write.or((!quick && only.is_empty() && !list).then_some(default_report));
            push_path(&mut args, "--write", report.as_deref());
            run_experiments_bin(&root, &args)
        }
    }
}

/// Builds the `gimc` binary the `xmc-scaling` benchmark runs under `mpirun`: with the `mpi`
/// feature when `mpirun` is on the PATH (falling back to a plain build, which that benchmark
/// then reports as unable to run), else plain.
#[allow(clippy::print_stderr)]
fn build_gimc_for_bench(root: &Path) -> Result<()> {
    let build = |features: &[&str]| {
        cargo()
            .current_dir(root)
            .args(["build", "--quiet", "--release", "--package", "gimc-cli"])
            .args(features)
            .status()
            .context("could not start cargo")
    };
    let has_mpirun = Command::new("mpirun")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if has_mpirun && build(&["--features", "mpi"])?.success() {
        return Ok(());
    }
    if has_mpirun {
        eprintln!("xtask: gimc-cli did not build with --features mpi; building it without");
    }
    if !build(&[])?.success() {
        bail!("cargo build -p gimc-cli failed");
    }
    Ok(())
}

fn push_path(args: &mut Vec<String>, flag: &str, path: Option<&Path>) {
    if let Some(p) = path {
        args.push(flag.to_string());
        args.push(p.display().to_string());
    }
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

fn workspace_root() -> Result<PathBuf> {
    // `cargo run` sets CARGO_MANIFEST_DIR for the process: prefer it to the compile-time value,
    // which points at whichever checkout last built a shared target directory.
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest
        .parent()
        .map(Path::to_path_buf)
        .context("xtask manifest has no parent directory")
}

fn run_experiments_bin(root: &Path, args: &[String]) -> Result<()> {
    let status = cargo()
        .current_dir(root)
        .args([
            "run",
            "--quiet",
            "--release",
            "--package",
            "gimc-experiments",
            "--",
        ])
        .args(args)
        .status()
        .context("could not start cargo")?;
    if !status.success() {
        bail!("gimc-experiments {} failed ({status})", args.join(" "));
    }
    Ok(())
}
