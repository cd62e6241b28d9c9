//! The `gimc` command line: inspect data sets now; fit, predict, cluster, complete and evaluate
//! as the solver crates land (DESIGN §1). Errors are one clear line on stderr and a non-zero
//! exit status; no input makes it panic.

mod data;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Inspect data sets.
    #[command(subcommand)]
    Data(data::DataCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Data(cmd) => data::run(cmd, cli.data_dir.as_deref(), cli.json),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("gimc: error: {e:#}");
            }
            ExitCode::FAILURE
        }
    }
}
