//! Times one trial of each transduction method on yeast at ω = 80 % with the paper's grids
//! (a profiling aid for `mc1-yeast`).
//!
//! `cargo run --release -p gimc-experiments --example mc1_method_timing -- [set]`
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]
use std::path::PathBuf;
use std::time::Instant;

use gimc_experiments::Context;
use gimc_experiments::experiments::mc1_common::{Mc1Config, Method, RealSpec, run_real};

fn main() {
    let set: &'static str = match std::env::args().nth(1).as_deref() {
        Some("emotions") => "emotions",
        _ => "yeast",
    };
    let ctx = Context {
        data_dir: gimc_data::resolve_data_dir(None),
        out_dir: PathBuf::from("/tmp/mc1-timing"),
        quick: false,
        seed: 1,
    };
    for method in [Method::MeanSvm, Method::FpcSvm, Method::Mc1, Method::McB] {
        let spec = RealSpec {
            experiment: "timing",
            title: "timing",
            set,
            parts: &["train", "test"],
            omegas: vec![0.8],
            published_label: vec![],
            published_imputation: vec![],
            standardize: set == "yeast",
        };
        let config = Mc1Config::paper(1, vec![method], false);
        let t = Instant::now();
        let r = run_real(&spec, &ctx, &config).unwrap();
        println!("{}: {:.1} s", method.name(), t.elapsed().as_secs_f64());
        let _ = r;
    }
}
