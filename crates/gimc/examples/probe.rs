//! Diagnostic trajectory: fits GIMC on a named multi-label set for a fixed number of iterations
//! and prints, per iteration, the objective, step, trials, time and the P@1/3/5 of the TEST set
//! (passed as the tracked set). For looking at the optimisation only: never choose anything on
//! these numbers (use the `multilabel` example, which selects on a validation split).
//!
//! `cargo run --release -p gimc --example probe -- bibtex lff 500 0.002 10 alt 7`
//! (set, lff | lnys, m, γ, iterations, alt | varpro, seed, [initial step])
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]

use gimc::{LabelData, LabelParams, MapRegistry, NoObserver, Scheme, fit_labels};
use gimc_data::Targets;
use gimc_linalg::rng::seeded;

fn to_label_data(d: &gimc_data::Dataset) -> LabelData {
    match &d.targets {
        Targets::Labels { matrix, .. } => {
            LabelData::multi_label(d.features.clone(), matrix.clone()).unwrap()
        }
        _ => panic!("not multi-label"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let set = args.get(1).map(String::as_str).unwrap_or("bibtex");
    let kind = args.get(2).map(String::as_str).unwrap_or("lff");
    let m: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(500);
    let gamma: f64 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(0.002);
    let iters: usize = args.get(5).and_then(|s| s.parse().ok()).unwrap_or(10);
    let scheme = if args.get(6).map(String::as_str) == Some("varpro") {
        Scheme::VariableProjection
    } else {
        Scheme::Alternating
    };
    let seed: u64 = args.get(7).and_then(|s| s.parse().ok()).unwrap_or(7);
    let init_step: Option<f64> = args.get(8).and_then(|s| s.parse().ok());
    let named = gimc_data::load_named(&gimc_data::resolve_data_dir(None), set).unwrap();
    let train = to_label_data(named.part("train").unwrap());
    let test = to_label_data(named.part("test").unwrap());
    let registry = MapRegistry::builtin();
    let family = registry
        .family(if kind == "lnys" { "lnys" } else { "lff" })
        .unwrap();
    let t0 = std::time::Instant::now();
    let map = family
        .build(train.features(), m, gamma, &mut seeded(seed))
        .unwrap();
    let params = LabelParams::default()
        .with_max_iter(iters)
        .with_scheme(scheme)
        .with_line_search(gimc::LineSearchParams::default().with_initial_step(init_step));
    let fit = fit_labels(
        &train,
        map,
        &params.check().unwrap(),
        Some(&test),
        &mut NoObserver,
    )
    .unwrap();
    for h in &fit.history {
        let v = h.validation.as_ref().unwrap();
        let t = h.train.as_ref().unwrap();
        println!(
            "it {:2} f {:.4} step {:?} trials {} t {:.2}s train P@1 {:.2} test P@1/3/5 {:.2} {:.2} {:.2}",
            h.iteration,
            h.objective,
            h.step,
            h.trials,
            h.seconds,
            100.0 * t.precision_at(1).unwrap(),
            100.0 * v.precision_at(1).unwrap(),
            100.0 * v.precision_at(3).unwrap(),
            100.0 * v.precision_at(5).unwrap()
        );
    }
    println!(
        "stop {:?}, total {:.2}s",
        fit.stop_reason,
        t0.elapsed().as_secs_f64()
    );
}
