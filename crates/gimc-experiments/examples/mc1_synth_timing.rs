//! Times one trial of each transduction method on every `mc1-synthetic` setting (or those whose
//! label contains the argument) with the paper's grids: a profiling aid for `mc1-synthetic`.
//!
//! `RAYON_NUM_THREADS=1 cargo run --release -p gimc-experiments --example mc1_synth_timing -- [filter]`
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]
use std::time::Instant;

use gimc_experiments::experiments::mc1_common::Mc1Config;
use gimc_experiments::experiments::mc1_synthetic::{METHODS, grid, run_setting};
use gimc_linalg::rng::{child, seeded};

fn main() {
    let filter = std::env::args().nth(1).unwrap_or_default();
    let master = seeded(2016);
    let mut totals = vec![0.0; METHODS.len()];
    for (k, s) in grid(false).iter().enumerate() {
        if !s.label().contains(&filter) {
            continue;
        }
        let mut line = format!("{:<40}", s.label());
        for (mi, &m) in METHODS.iter().enumerate() {
            let config = Mc1Config::paper(1, vec![m], false);
            let t = Instant::now();
            run_setting(s, &config, &child(&master, k as u64)).unwrap();
            let secs = t.elapsed().as_secs_f64();
            totals[mi] += secs;
            line.push_str(&format!(" {}={secs:.2}", m.name()));
        }
        println!("{line}");
    }
    let tot: Vec<String> = METHODS
        .iter()
        .zip(&totals)
        .map(|(m, t)| format!("{}={t:.1}", m.name()))
        .collect();
    println!("total per trial: {}", tot.join(" "));
}
