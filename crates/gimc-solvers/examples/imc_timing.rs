//! Synthetic timing probe for the two IMC performance targets of the solvers issue (numbers
//! for docs/BENCHMARKS.md come from `cargo xtask bench`, not from here):
//!
//! - `imc_timing bibtex`: a Bibtex-shaped fully observed problem (n = 4,880, d = 1,836 binary
//!   sparse features with ~68 non-zeros per row, L = 159 labels, ~3 per row, Ψ = I, k = 50,
//!   10 alternations);
//! - `imc_timing partial [n] [|Ω|]`: the partial-Ω path with dense Gaussian features
//!   (default n_x = n_y = 100,000, |Ω| = 10⁷, d = 100, k = 20, 3 alternations of 10 + 10 CG
//!   iterations), after timing the gimc-linalg sampled kernels once.
//!
//! Run with `cargo run --release -p gimc-solvers --example imc_timing -- bibtex`.
#![allow(clippy::unwrap_used, clippy::print_stdout)]
use std::time::Instant;

use gimc_linalg::rng::{gaussian_mat, seeded};
use gimc_linalg::sprs;
use gimc_linalg::{FeatureMatrix, Observed};
use gimc_solvers::{CgParams, ImcInit, ImcParams, ImcProblem, Side, Trace, fit_imc};
use rand::Rng;

/// Entry point: see the module documentation.
fn main() {
    let which = std::env::args().nth(1).unwrap_or_default();
    let mut rng = seeded(1);
    if which == "bibtex" {
        let (n, d, l) = (4880, 1836, 159);
        let (mut r, mut c, mut v) = (vec![], vec![], vec![]);
        for i in 0..n {
            for _ in 0..68 {
                r.push(i);
                c.push(rng.random_range(0..d));
                v.push(1.0);
            }
        }
        let mut tri = sprs::TriMat::new((n, d));
        let mut seen = std::collections::HashSet::new();
        for ((i, j), v) in r.iter().zip(&c).zip(&v) {
            if seen.insert((*i, *j)) {
                tri.add_triplet(*i, *j, *v);
            }
        }
        let x = FeatureMatrix::sparse(tri.to_csr()).unwrap();
        let (mut ar, mut ac) = (vec![], vec![]);
        for i in 0..n {
            let mut s = std::collections::BTreeSet::new();
            for _ in 0..3 {
                s.insert(rng.random_range(0..l));
            }
            for j in s {
                ar.push(i);
                ac.push(j);
            }
        }
        let ones = vec![1.0; ar.len()];
        let a = Observed::from_triplets(n, l, &ar, &ac, &ones).unwrap();
        let t = Instant::now();
        let problem =
            ImcProblem::fully_observed(Side::Features(&x), Side::Identity(l), &a).unwrap();
        let params = ImcParams::default()
            .with_rank(50)
            .with_lambda(1.0)
            .with_max_outer(10)
            .with_tol(0.0)
            .with_cg(CgParams::default().with_tol(1e-6).with_max_iter(50))
            .with_init(ImcInit::Spectral)
            .check()
            .unwrap();
        let mut trace = Trace::new();
        let m = fit_imc(&problem, &params, None, &mut rng, &mut trace).unwrap();
        println!(
            "bibtex-like: {:.2}s, {} iterations",
            t.elapsed().as_secs_f64(),
            m.iterations
        );
        for r in &trace.records {
            println!(
                "  it {} f {:.6e} t {:.2} {:?}",
                r.iteration, r.objective, r.elapsed_secs, r.extras
            );
        }
    } else {
        let n: usize = std::env::args()
            .nth(2)
            .map_or(100_000, |s| s.parse().unwrap());
        let nnz: usize = std::env::args()
            .nth(3)
            .map_or(10_000_000, |s| s.parse().unwrap());
        let (d, k) = (100, 20);
        let t = Instant::now();
        let x = FeatureMatrix::dense(gaussian_mat(&mut rng, n, d, 1.0)).unwrap();
        let y = FeatureMatrix::dense(gaussian_mat(&mut rng, n, d, 1.0)).unwrap();
        let per = nnz / n;
        let mut rows = Vec::with_capacity(nnz);
        let mut cols = Vec::with_capacity(nnz);
        for i in 0..n {
            let mut s = std::collections::BTreeSet::new();
            while s.len() < per {
                s.insert(rng.random_range(0..n));
            }
            for j in s {
                rows.push(i);
                cols.push(j);
            }
        }
        let vals: Vec<f64> = (0..rows.len()).map(|_| rng.random::<f64>()).collect();
        let omega = Observed::from_triplets(n, n, &rows, &cols, &vals).unwrap();
        drop((rows, cols, vals));
        println!("setup {:.2}s", t.elapsed().as_secs_f64());
        let p = gaussian_mat(&mut rng, n, k, 1.0);
        let q = gaussian_mat(&mut rng, n, k, 1.0);
        for _ in 0..2 {
            let t = Instant::now();
            let r = gimc_linalg::sampled_dot(&omega, p.as_ref(), q.as_ref()).unwrap();
            let t1 = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let _rq = gimc_linalg::omega_mul_dense(&omega, &r, q.as_ref()).unwrap();
            let t2 = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let _xs = x
                .mul_dense(gaussian_mat(&mut rng, d, k, 1.0).as_ref())
                .unwrap();
            let _xt = x.tr_mul_dense(p.as_ref()).unwrap();
            let t3 = t.elapsed().as_secs_f64();
            println!("sampled_dot {t1:.3}s omega_mul_dense {t2:.3}s X products {t3:.3}s");
        }
        let problem = ImcProblem::partial(Side::Features(&x), Side::Features(&y), &omega).unwrap();
        let params = ImcParams::default()
            .with_rank(k)
            .with_lambda(1.0)
            .with_max_outer(3)
            .with_tol(0.0)
            .with_cg(CgParams::default().with_tol(1e-6).with_max_iter(10))
            .with_init(ImcInit::Random)
            .check()
            .unwrap();
        let t = Instant::now();
        let mut trace = Trace::new();
        fit_imc(&problem, &params, None, &mut rng, &mut trace).unwrap();
        println!("partial: {:.2}s", t.elapsed().as_secs_f64());
        for r in &trace.records {
            println!(
                "  it {} f {:.6e} t {:.2} {:?}",
                r.iteration, r.objective, r.elapsed_secs, r.extras
            );
        }
    }
}
