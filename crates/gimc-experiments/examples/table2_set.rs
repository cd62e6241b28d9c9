//! One set of `gimc-table2` at one seed, without the other set: the rows of [`run_set`] with
//! the full protocol ([`SetConfig::full`]). For the seed spread of one set's rows.
//!
//! `cargo run --release -p gimc-experiments --example table2_set -- [Bibtex|Delicious] [seed]`
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]
use gimc_experiments::experiments::gimc_table2::{SetConfig, load_train_test, run_set};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let name: &'static str = match args.get(1).map_or("Delicious", String::as_str) {
        "Bibtex" | "bibtex" => "Bibtex",
        _ => "Delicious",
    };
    let seed: u64 = args.get(2).map_or(2016, |s| s.parse().unwrap());
    let cfg = SetConfig::full(name, seed).unwrap();
    let data_dir = gimc_data::resolve_data_dir(None);
    let (train, test) = load_train_test(&data_dir, cfg.key).unwrap();
    println!("{name}, seed {seed}: {}", cfg.describe_gimc());
    for r in run_set(&cfg, &train, &test).unwrap() {
        let [p1, p3, p5] = r.precision;
        println!(
            "{:<24} {p1:6.2} {p3:6.2} {p5:6.2}  validation {:6.2}  {:6.1} s  {}",
            r.method, r.validation, r.seconds, r.setting
        );
    }
}
