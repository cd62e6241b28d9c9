//! One (seed, fraction) task of `gimc-fig1` at the full grids: a profiling aid.
//!
//! `cargo run --release -p gimc-experiments --example fig1_probe -- [a|b] [fraction] [seeds]`
//! prints, per method, the chosen setting, validation RMSE, test error (full precision, to
//! compare runs bit for bit) and seconds.
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]
use std::time::Instant;

use gimc_experiments::experiments::gimc_fig1::{Fig1Config, PANELS, run_fig1};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let panel = match args.get(1).map(String::as_str) {
        Some("a") => &PANELS[0],
        _ => &PANELS[1],
    };
    let fraction: f64 = args.get(2).map_or(0.1, |s| s.parse().unwrap());
    let seeds: usize = args.get(3).map_or(1, |s| s.parse().unwrap());
    let mut config = Fig1Config::new(false);
    config.toy.target = panel.target;
    config.fractions = vec![fraction];
    config.seeds = seeds;
    let t = Instant::now();
    let cells = run_fig1(&config, 2016).unwrap();
    for c in &cells {
        println!(
            "{} seed {} f {}: chosen ({}) val {:.17e} test {:.17e} fits {} {:.2} s",
            c.method,
            c.seed,
            c.fraction,
            c.chosen,
            c.validation_rmse,
            c.test_error,
            c.fits,
            c.seconds
        );
    }
    println!("total {:.2} s", t.elapsed().as_secs_f64());
}
