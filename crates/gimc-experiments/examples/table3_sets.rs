//! Runs `gimc-table3` (full form unless `--quick`, or the paper-sized form with `--paper`) on
//! some of its data sets and prints the Markdown report: a set at a time when the whole table
//! does not fit a session; `--multiples=5,20` restricts the constraint counts |Ω| = c·n.
//!
//! `cargo run --release -p gimc-experiments --example table3_sets -- segment mushroom --multiples=20`
#![allow(clippy::print_stdout, clippy::print_stderr, missing_docs)]
use std::path::PathBuf;

use gimc_experiments::Context;
use gimc_experiments::experiments::gimc_table3::{DATASETS, Table3Config, run_table3};

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut config = if args.iter().any(|a| a == "--quick") {
        Table3Config::quick()
    } else if args.iter().any(|a| a == "--paper") {
        Table3Config::paper()
    } else {
        Table3Config::full()
    };
    // `--multiples=1,20` restricts the constraint counts |Ω| = c·n
    if let Some(list) = args.iter().find_map(|a| a.strip_prefix("--multiples=")) {
        config.multiples = list
            .split(',')
            .filter_map(|c| c.trim().parse().ok())
            .collect();
    }
    let wanted: Vec<usize> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .filter_map(|a| {
            DATASETS
                .iter()
                .position(|d| d.to_lowercase().starts_with(&a.to_lowercase()))
        })
        .collect();
    if !wanted.is_empty() {
        config.sets = wanted;
    }
    let ctx = Context {
        data_dir: gimc_data::resolve_data_dir(None),
        out_dir: PathBuf::from("out"),
        quick: false,
        seed: 2016,
    };
    match run_table3(&ctx, &config) {
        Ok(report) => {
            println!("{}", report.to_markdown());
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
