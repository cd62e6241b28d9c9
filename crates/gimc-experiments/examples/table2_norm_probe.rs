//! Evidence for issue 15's preprocessing and γ choices on the gimc-table2 sets: raw against
//! L2-normalised rows, γ from the `scale` rule (1 / (d · Var X) on the rows the map sees)
//! times {1/4, 1/2, 1, 2, 4}, the table's fixed γ beside it; IMC-RFF (no learning) or GIMC-LFF
//! at one m, λ on the table's validation split. Prints validation P@1 of every candidate and
//! the test P@1/3/5 of the validation pick per preprocessing.
//!
//! `cargo run --release -p gimc-experiments --example table2_norm_probe -- [bibtex|delicious] [m] [iters] [lambdas]`
//! (`PROBE_FACTORS=0.125,0.25` and `PROBE_NORMS=l2` narrow the grid; `PROBE_FIXED_ONLY=1` tries
//! only the table's fixed γ on raw rows; `PROBE_GAMMAS=0.001,0.004` gives absolute γ values instead
//! of multiples of the rule; `PROBE_MAX_STEP=ρ` caps every map step at ρ‖U‖; `PROBE_PROX=μ` adds the proximal term; `PROBE_SEED=S` replaces the
//! table's seed 2016 for the split and the map draws; `PROBE_FAMILY=lnys` fits the learned Nyström
//! map instead of the Fourier one; `PROBE_PATIENCE=p` stops each fit after p iterations without a
//! validation gain)
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]
use std::time::Instant;

use gimc::{LabelData, MapRegistry, SelectionParams, select_and_fit};
use gimc_experiments::experiments::gimc_table2::{BASELINE_LAMBDAS, load_train_test};
use gimc_linalg::RowNorm;

fn normalized(d: &LabelData, norm: RowNorm) -> LabelData {
    d.with_features(d.features().normalize_rows(norm)).unwrap()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let key = args.get(1).map_or("bibtex", String::as_str).to_string();
    let m: usize = args.get(2).map_or(1000, |s| s.parse().unwrap());
    let iters: usize = args.get(3).map_or(0, |s| s.parse().unwrap());
    let lambdas: Vec<f64> = args.get(4).map_or(BASELINE_LAMBDAS.to_vec(), |s| {
        s.split(',').map(|v| v.parse().unwrap()).collect()
    });
    let fixed = if key == "bibtex" { 0.002 } else { 0.02 };
    let data_dir = gimc_data::resolve_data_dir(None);
    let (train, test) = load_train_test(&data_dir, &key).unwrap();
    let registry = MapRegistry::builtin();
    let family_name = std::env::var("PROBE_FAMILY").unwrap_or_else(|_| "lff".into());
    let family = registry.family(&family_name).unwrap();
    let list = |var: &str, default: &str| -> Vec<String> {
        std::env::var(var)
            .unwrap_or_else(|_| default.into())
            .split(',')
            .map(str::to_string)
            .collect()
    };
    let factors: Vec<f64> = list("PROBE_FACTORS", "0.25,0.5,1,2,4")
        .iter()
        .map(|f| f.parse().unwrap())
        .collect();
    let norms: Vec<RowNorm> = list("PROBE_NORMS", "none,l2")
        .iter()
        .map(|n| RowNorm::from_name(n).unwrap())
        .collect();
    for norm in norms {
        let (tr, te) = (normalized(&train, norm), normalized(&test, norm));
        let scale = tr.features().gamma_scale();
        let absolute = std::env::var("PROBE_GAMMAS").ok();
        let mut gammas: Vec<f64> = if let Some(list) = &absolute {
            list.split(',').map(|g| g.parse().unwrap()).collect()
        } else if std::env::var("PROBE_FIXED_ONLY").is_ok() {
            Vec::new()
        } else {
            factors.iter().map(|f| f * scale).collect()
        };
        if norm == RowNorm::None && absolute.is_none() {
            gammas.push(fixed);
        }
        let t = Instant::now();
        let sel = select_and_fit(
            &tr,
            family,
            &SelectionParams::default()
                .with_gammas(gammas.iter().map(|&g| gimc::Gamma::Value(g)).collect())
                .with_lambdas(lambdas.clone())
                .with_ms(vec![m])
                .with_max_iter(iters)
                .with_seed(std::env::var("PROBE_SEED").map_or(2016, |v| v.parse().unwrap()))
                .with_line_search(
                    gimc::LineSearchParams::default().with_max_relative_step(
                        std::env::var("PROBE_MAX_STEP")
                            .ok()
                            .map(|v| v.parse().unwrap()),
                    ),
                )
                .with_proximal(std::env::var("PROBE_PROX").map_or(0.0, |v| v.parse().unwrap()))
                .with_patience(
                    std::env::var("PROBE_PATIENCE")
                        .ok()
                        .map(|v| v.parse().unwrap()),
                )
                .check()
                .unwrap(),
        )
        .unwrap();
        println!("{key} rows {}: γ_scale = {scale:.5}", norm.name());
        for c in &sel.candidates {
            let curve: Vec<String> = c
                .scores
                .iter()
                .map(|v| format!("{:.1}", 100.0 * v))
                .collect();
            println!(
                "  γ = {:.5} ({:.2}·scale) λ = {:<5} val P@1 {:.2} (iteration {}) curve {}",
                c.gamma,
                c.gamma / scale,
                c.lambda,
                100.0 * c.best_score,
                c.best_iteration,
                curve.join(" ")
            );
        }
        let e = sel.model.evaluate(&te, &[1, 3, 5]).unwrap();
        let p = |k| 100.0 * e.precision_at(k).unwrap();
        println!(
            "  pick {}: test P@1/3/5 {:.2} / {:.2} / {:.2}  ({:.0} s)",
            sel.chosen.describe(),
            p(1),
            p(3),
            p(5),
            t.elapsed().as_secs_f64()
        );
    }
}
