//! Exact RBF kernel ridge regression on a gimc-table2 set: the m = ∞ limit of IMC-RFF / IMC-NYS
//! (issue 15, item 3). The full n × n kernel of the training rows is formed on purpose (this
//! is the experiment about exactly that: 1.3 GB for Delicious' 12,920 rows) and solved by
//! Cholesky, α = (K + λI)⁻¹ Y, scores k(x, X)·α. γ and λ are chosen by validation P@1 on the
//! table's split (20 % of train, seed 2016), then the model is refitted on all training rows.
//!
//! `cargo run --release -p gimc-experiments --example exact_krr_probe -- [bibtex|delicious] [raw|l2] [γ,…] [λ,…]`
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]
use std::time::Instant;

use gimc::{LabelData, validation_split};
use gimc_experiments::experiments::gimc_table2::load_train_test;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{child, seeded};
use gimc_linalg::sparse::csr_to_dense;
use gimc_linalg::{Kernel, RowNorm, kernel_block, ridge_solve};
use gimc_metrics::precision_at_k;

/// α for the rows of `fit` and the scores of the rows of `eval` under (γ, each λ).
fn scores(fit: &LabelData, eval: &LabelData, gamma: f64, lambdas: &[f64]) -> Vec<Mat<f64>> {
    let kernel = Kernel::Rbf { gamma };
    let xf = fit.features().to_dense();
    let k = kernel_block(&kernel, fit.features(), xf.as_ref()).unwrap();
    // exactly symmetric for Cholesky
    let k = Mat::from_fn(k.nrows(), k.ncols(), |i, j| 0.5 * (k[(i, j)] + k[(j, i)]));
    let ke = kernel_block(&kernel, eval.features(), xf.as_ref()).unwrap();
    let y = csr_to_dense(fit.labels());
    lambdas
        .iter()
        .map(|&l| {
            let alpha = ridge_solve(k.as_ref(), y.as_ref(), l).unwrap();
            &ke * &alpha
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let key = args.get(1).map_or("bibtex", String::as_str).to_string();
    let norm = RowNorm::from_name(args.get(2).map_or("raw", String::as_str)).unwrap_or_default();
    let list = |i: usize, d: &str| -> Vec<f64> {
        args.get(i)
            .map_or(d, String::as_str)
            .split(',')
            .map(|v| v.parse().unwrap())
            .collect()
    };
    let gammas = list(
        3,
        if key == "bibtex" {
            "0.001,0.002,0.005"
        } else {
            "0.01,0.02,0.05"
        },
    );
    let lambdas = list(4, "0.1,1,10");
    let data_dir = gimc_data::resolve_data_dir(None);
    let (train, test) = load_train_test(&data_dir, &key).unwrap();
    let rows = |d: &LabelData| d.with_features(d.features().normalize_rows(norm)).unwrap();
    let (train, test) = (rows(&train), rows(&test));
    let (tr, va) = validation_split(&train, 0.2, &mut child(&seeded(2016), 0)).unwrap();
    let (fit, val) = (
        train.select_rows(&tr).unwrap(),
        train.select_rows(&va).unwrap(),
    );
    let t = Instant::now();
    let mut best = (f64::NEG_INFINITY, 0.0, 0.0);
    for &g in &gammas {
        for (s, &l) in scores(&fit, &val, g, &lambdas).iter().zip(&lambdas) {
            let p1 = 100.0 * precision_at_k(s.as_ref(), val.labels(), 1).unwrap();
            println!(
                "{key} rows {}: γ = {g} λ = {l}: validation P@1 {p1:.2}",
                norm.name()
            );
            if p1 > best.0 {
                best = (p1, g, l);
            }
        }
    }
    let (_, g, l) = best;
    let s = scores(&train, &test, g, &[l]).remove(0);
    let p = |k| 100.0 * precision_at_k(s.as_ref(), test.labels(), k).unwrap();
    println!(
        "{key} rows {}: exact KRR pick γ = {g} λ = {l} (validation P@1 {:.2}): test P@1/3/5 {:.2} / {:.2} / {:.2} ({:.0} s)",
        norm.name(),
        best.0,
        p(1),
        p(3),
        p(5),
        t.elapsed().as_secs_f64()
    );
}
