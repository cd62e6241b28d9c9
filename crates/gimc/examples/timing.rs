//! Times the pieces of one fast-path iteration on a named multi-label set (DESIGN §5).
//!
//! `cargo run --release -p gimc --example timing -- bibtex 500 0.002`
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]
use std::path::Path;
use std::time::Instant;

use gimc::{LabelData, LabelProblem};
use gimc_data::Targets;
use gimc_featmap::{FeatureMap, LearnableMap};
use gimc_featmap::{FourierFamily, MapFamily};
use gimc_linalg::rng::seeded;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let set = a.get(1).map_or("bibtex", String::as_str);
    let m: usize = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(500);
    let gamma: f64 = a.get(3).and_then(|s| s.parse().ok()).unwrap_or(0.002);
    let named = gimc_data::load_named(Path::new("/work/shared/datasets"), set).unwrap();
    let d = named.part("train").unwrap();
    let Targets::Labels { matrix, .. } = &d.targets else {
        panic!()
    };
    let data = LabelData::multi_label(d.features.clone(), matrix.clone()).unwrap();
    let map = FourierFamily
        .build(data.features(), m, gamma, &mut seeded(1))
        .unwrap();
    let prob = LabelProblem::new(&data, 1.0).unwrap();
    let (n, dd, l) = (data.nrows() as f64, (2 * m) as f64, data.n_labels() as f64);
    let u = map.params().to_owned();
    for _ in 0..3 {
        let t = Instant::now();
        let s = data.features().mul_dense(u.as_ref()).unwrap();
        let t1 = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut acc = 0.0;
        for j in 0..s.ncols() {
            for &v in s.col_as_slice(j) {
                let (a, b) = v.sin_cos();
                acc += a + b;
            }
        }
        let t2 = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let back = data.features().tr_mul_dense(s.as_ref()).unwrap();
        let t3 = t.elapsed().as_secs_f64();
        println!(
            "nnz(X) {} XU {t1:.3}  sincos (1 thread) {t2:.3}  XtH {t3:.3} {acc:.1} {}",
            data.features().nnz(),
            back.nrows()
        );
    }
    for rep in 0..3 {
        let t = Instant::now();
        let phi = map.forward(data.features()).unwrap();
        let t_fwd = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let feats = prob.features_from(phi).unwrap();
        let t_feat = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let w = prob.w_step(&feats).unwrap();
        let t_w = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let f = prob.objective(&feats, w.as_ref()).unwrap();
        let t_f = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let g = prob.phi_gradient(&feats, w.as_ref()).unwrap();
        let t_g = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let gu = map.backward(data.features(), g.as_ref()).unwrap();
        let t_b = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let gm = gimc_linalg::dense::gram_tn(feats.phi().unwrap());
        let t_gram = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let full =
            gimc_linalg::dense::matmul_tn(feats.phi().unwrap(), feats.phi().unwrap()).unwrap();
        let t_full = t.elapsed().as_secs_f64();
        println!(
            "full gram GEMM {t_full:.3} ({:.1} GFLOP/s) {}",
            2.0 * n * dd * dd / t_full / 1e9,
            full.nrows()
        );
        let t = Instant::now();
        let _ = gimc_linalg::dense::matmul(feats.phi().unwrap(), w.as_ref()).unwrap();
        let t_pw = t.elapsed().as_secs_f64();
        println!(
            "rep {rep}: forward {t_fwd:.3}  gram+AtPhi {t_feat:.3} (gram alone {t_gram:.3}, {:.1} GFLOP/s)  \
             w-step {t_w:.3}  objective {t_f:.4}  dPhi {t_g:.3} ({:.1} GFLOP/s)  backward {t_b:.3}  PhiW {t_pw:.3}  f={f:.3} |g|={:.3e} {}",
            n * dd * dd / t_gram / 1e9,
            4.0 * n * dd * l / t_g / 1e9,
            gu.norm_l2(),
            gm.nrows()
        );
        let _ = map.params();
    }
}
