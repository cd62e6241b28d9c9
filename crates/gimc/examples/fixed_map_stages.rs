//! Times the stages of a fixed-map (IMC-RFF / IMC-NYS) fit on a named multi-label set: map
//! construction, forward pass, ΦᵀΦ / AᵀΦ, W-step, and the whole `fit_labels` call (DESIGN §5;
//! the kernel-ridge-peers bench).
//!
//! `cargo run --release -p gimc --example fixed_map_stages -- bibtex nys 500 0.005 0.1`
//! (kinds: `nys` normalised Nyström, `phase` random-phase Fourier, `rff` paired Fourier).
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]
use std::time::Instant;

use gimc::{LabelData, LabelParams, LabelProblem, MapRegistry, NoObserver};
use gimc_data::Targets;
use gimc_featmap::FeatureMap;
use gimc_linalg::rng::seeded;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let set = a.get(1).map_or("bibtex", String::as_str);
    let kind = a.get(2).map_or("nys", String::as_str);
    let m: usize = a.get(3).and_then(|s| s.parse().ok()).unwrap_or(500);
    let gamma: f64 = a.get(4).and_then(|s| s.parse().ok()).unwrap_or(0.005);
    let lambda: f64 = a.get(5).and_then(|s| s.parse().ok()).unwrap_or(0.1);
    let named = gimc_data::load_named(&gimc_data::resolve_data_dir(None), set).unwrap();
    let d = named.part("train").unwrap();
    let Targets::Labels { matrix, .. } = &d.targets else {
        panic!("{set} is not a multi-label set")
    };
    let data = LabelData::multi_label(d.features.clone(), matrix.clone()).unwrap();
    let prob = LabelProblem::new(&data, lambda).unwrap();
    let registry = MapRegistry::builtin();
    let family = registry
        .family(match kind {
            "nys" => "nys-whiten",
            "phase" => "lff-phase",
            _ => "lff",
        })
        .unwrap();
    for rep in 0..4 {
        let t = Instant::now();
        let map = family
            .build(data.features(), m, gamma, &mut seeded(rep))
            .unwrap();
        let t_build = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let (c, mm) = map.forward_factored(data.features()).unwrap();
        let t_fwd = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let feats = match mm {
            Some(mm) => prob.features_factored(c, mm).unwrap(),
            None => prob.features_from(c).unwrap(),
        };
        let t_feat = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let w = prob.w_step(&feats).unwrap();
        let t_w = t.elapsed().as_secs_f64();
        let f = prob.objective(&feats, w.as_ref()).unwrap();
        let params = LabelParams::default()
            .with_lambda(lambda)
            .with_max_iter(0)
            .with_eval_train(false);
        let t = Instant::now();
        let map = family
            .build(data.features(), m, gamma, &mut seeded(rep))
            .unwrap();
        gimc::fit_labels(&data, map, &params.check().unwrap(), None, &mut NoObserver).unwrap();
        println!(
            "build {t_build:.3} forward {t_fwd:.3} products {t_feat:.3} w-step {t_w:.3} \
             (f = {f:.4e}); whole fit_labels {:.3} s",
            t.elapsed().as_secs_f64()
        );
    }
}
