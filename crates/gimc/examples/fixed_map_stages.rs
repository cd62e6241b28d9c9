//! Times the stages of a fixed-map (IMC-RFF / IMC-NYS) fit on a named multi-label set: map
//! construction, forward pass, ΦᵀΦ / AᵀΦ, W-step (DESIGN §5; the kernel-ridge-peers bench).
//!
//! `cargo run --release -p gimc --example fixed_map_stages -- bibtex nys 500 0.005 0.1`
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]
use std::path::Path;
use std::time::Instant;

use gimc::{LabelData, LabelProblem, Landmarks, MapKind, MapSpec};
use gimc_data::Targets;
use gimc_featmap::{FeatureMap, RandomCosine};
use gimc_linalg::rng::seeded;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let set = a.get(1).map_or("bibtex", String::as_str);
    let kind = a.get(2).map_or("nys", String::as_str);
    let m: usize = a.get(3).and_then(|s| s.parse().ok()).unwrap_or(500);
    let gamma: f64 = a.get(4).and_then(|s| s.parse().ok()).unwrap_or(0.005);
    let lambda: f64 = a.get(5).and_then(|s| s.parse().ok()).unwrap_or(0.1);
    let dir = std::env::var("GIMC_DATA").unwrap_or_else(|_| "/work/shared/datasets".into());
    let named = gimc_data::load_named(Path::new(&dir), set).unwrap();
    let d = named.part("train").unwrap();
    let Targets::Labels { matrix, .. } = &d.targets else {
        panic!()
    };
    let data = LabelData::multi_label(d.features.clone(), matrix.clone()).unwrap();
    let prob = LabelProblem::new(&data, lambda).unwrap();
    for rep in 0..4 {
        if kind == "nys" {
            let params = gimc::LabelParams {
                lambda,
                max_iter: 0,
                eval_train: false,
                ..gimc::LabelParams::default()
            };
            let t = Instant::now();
            let spec = MapSpec {
                kind: MapKind::Nystrom {
                    landmarks: Landmarks::Uniform,
                    normalized: true,
                },
                m,
                gamma,
            };
            let map = spec.build(data.features(), &mut seeded(rep)).unwrap();
            let fit = gimc::fit_labels(&data, map, &params, None, &mut gimc::NoObserver).unwrap();
            println!(
                "whole fit_labels {:.3} (f = {:.4e})",
                t.elapsed().as_secs_f64(),
                fit.history.last().map_or(f64::NAN, |h| h.objective)
            );
        }
        let t = Instant::now();
        let (c, mm) = match kind {
            "nys" => {
                let spec = MapSpec {
                    kind: MapKind::Nystrom {
                        landmarks: Landmarks::Uniform,
                        normalized: true,
                    },
                    m,
                    gamma,
                };
                let map = spec.build(data.features(), &mut seeded(1)).unwrap();
                let t_build = t.elapsed().as_secs_f64();
                let t = Instant::now();
                let out = map.forward_factored(data.features()).unwrap();
                print!(
                    "build {t_build:.3} forward {:.3} ",
                    t.elapsed().as_secs_f64()
                );
                out
            }
            "phase" => {
                let map = RandomCosine::new(data.features().ncols(), 2 * m, gamma, &mut seeded(1))
                    .unwrap();
                let t_build = t.elapsed().as_secs_f64();
                let t = Instant::now();
                let out = map.forward_factored(data.features()).unwrap();
                print!(
                    "build {t_build:.3} forward {:.3} ",
                    t.elapsed().as_secs_f64()
                );
                out
            }
            _ => {
                let map = MapSpec::fourier(m, gamma)
                    .build(data.features(), &mut seeded(1))
                    .unwrap();
                let t_build = t.elapsed().as_secs_f64();
                let t = Instant::now();
                let out = map.forward_factored(data.features()).unwrap();
                print!(
                    "build {t_build:.3} forward {:.3} ",
                    t.elapsed().as_secs_f64()
                );
                out
            }
        };
        let t = Instant::now();
        let feats = match mm {
            Some(mm) => prob.features_factored(c, mm).unwrap(),
            None => prob.features_from(c).unwrap(),
        };
        let t_feat = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let w = prob.w_step(&feats).unwrap();
        let t_w = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let f = prob.objective(&feats, w.as_ref()).unwrap();
        println!(
            "products {t_feat:.3} w-step {t_w:.3} objective {:.3} (f = {f:.4e})",
            t.elapsed().as_secs_f64()
        );
    }
}
