//! The relative difference ‖W_a − W_b‖_F / ‖W_b‖_F and the largest map-parameter difference of
//! two label model files (e.g. `mpirun -np 2` against one process).
//!
//! `cargo run --release -p gimc-experiments --example model_diff -- A.gimc B.gimc`
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]
use std::path::Path;

use gimc::MapRegistry;
use gimc_featmap::LearnableMap;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let registry = MapRegistry::builtin();
    let a = gimc::persist::load_label_model(Path::new(&args[1]), &registry).unwrap();
    let b = gimc::persist::load_label_model(Path::new(&args[2]), &registry).unwrap();
    let (wa, wb) = (a.w().to_owned(), b.w().to_owned());
    let rel = (&wa - &wb).norm_l2() / wb.norm_l2();
    let (ua, ub) = (
        a.maps()[0].params().to_owned(),
        b.maps()[0].params().to_owned(),
    );
    let urel = (&ua - &ub).norm_l2() / ub.norm_l2();
    println!(
        "W: {} x {}, relative difference {rel:.3e}; U relative difference {urel:.3e}",
        wa.nrows(),
        wa.ncols()
    );
}
