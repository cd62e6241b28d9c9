//! The sampled-product kernel against a dense reference, and its thread-count independence.

use gimc_linalg::dense::in_pool;
use gimc_linalg::faer::Mat;
use gimc_linalg::observed::{omega_mul_dense, omega_tr_mul_dense, sampled_dot, sampled_residual};
use gimc_linalg::rng::seeded;
use proptest::prelude::*;

use crate::common::{gauss, max_diff, random_omega};

fn check_against_dense(n: usize, m: usize, k: usize, density: f64, single: bool, seed: u64) {
    let mut rng = seeded(seed);
    let omega = random_omega(&mut rng, n, m, density, single);
    let p = gauss(seed + 1, n, k);
    let q = gauss(seed + 2, m, k);
    let dense_pq = &p * q.transpose();
    // sampled_dot = entries of P Qᵀ on Ω, CSR order
    let s = sampled_dot(&omega, p.as_ref(), q.as_ref()).unwrap();
    assert_eq!(s.len(), omega.len());
    for ((i, j, _), v) in omega.iter().zip(&s) {
        assert!((dense_pq[(i, j)] - v).abs() < 1e-12, "({i},{j})");
    }
    let r = sampled_residual(&omega, p.as_ref(), q.as_ref()).unwrap();
    for ((i, j, a), v) in omega.iter().zip(&r) {
        assert!((dense_pq[(i, j)] - a - v).abs() < 1e-12);
    }
    // R Q and Rᵀ P with R = P_Ω(values) and with other per-entry values
    let r_dense = omega.to_dense();
    let rq = omega_mul_dense(&omega, omega.values(), q.as_ref()).unwrap();
    assert!(max_diff(&rq, &(&r_dense * &q)) < 1e-12);
    let rtp = omega_tr_mul_dense(&omega, omega.values(), p.as_ref()).unwrap();
    assert!(max_diff(&rtp, &(r_dense.transpose() * &p)) < 1e-12);
    let s_dense = omega.with_values(s.clone()).unwrap().to_dense();
    let sq = omega_mul_dense(&omega, &s, q.as_ref()).unwrap();
    assert!(max_diff(&sq, &(&s_dense * &q)) < 1e-10);
    let stp = omega_tr_mul_dense(&omega, &s, p.as_ref()).unwrap();
    assert!(max_diff(&stp, &(s_dense.transpose() * &p)) < 1e-10);
    // the transposed set gives the transposed products
    let t = omega.transpose();
    let tv = sampled_dot(&t, q.as_ref(), p.as_ref()).unwrap();
    for ((j, i, _), v) in t.iter().zip(&tv) {
        assert!((dense_pq[(i, j)] - v).abs() < 1e-12);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn kernel_matches_dense_reference(
        n in 1usize..25,
        m in 1usize..25,
        k in 1usize..7,
        density in prop_oneof![Just(0.0), 0.01f64..0.3, 0.3f64..1.0, Just(1.0)],
        single in proptest::bool::weighted(0.15),
        seed in 0u64..10_000,
    ) {
        check_against_dense(n, m, k, density, single, seed);
    }
}

#[test]
fn single_entry_and_empty_rows_and_columns() {
    // one entry in a 5 x 4 matrix: every other row and column is empty
    let omega = gimc_linalg::Observed::from_triplets(5, 4, &[3], &[2], &[2.0]).unwrap();
    let p = gauss(1, 5, 3);
    let q = gauss(2, 4, 3);
    let s = sampled_dot(&omega, p.as_ref(), q.as_ref()).unwrap();
    let expect: f64 = (0..3).map(|c| p[(3, c)] * q[(2, c)]).sum();
    assert!((s[0] - expect).abs() < 1e-14);
    let rq = omega_mul_dense(&omega, &[2.0], q.as_ref()).unwrap();
    let rtp = omega_tr_mul_dense(&omega, &[2.0], p.as_ref()).unwrap();
    for c in 0..3 {
        for i in 0..5 {
            let want = if i == 3 { 2.0 * q[(2, c)] } else { 0.0 };
            assert_eq!(rq[(i, c)], want);
        }
        for j in 0..4 {
            let want = if j == 2 { 2.0 * p[(3, c)] } else { 0.0 };
            assert_eq!(rtp[(j, c)], want);
        }
    }
    // the empty set gives zeros of the right shapes
    let empty = gimc_linalg::Observed::from_triplets(5, 4, &[], &[], &[]).unwrap();
    assert!(empty.is_empty());
    assert!(
        sampled_dot(&empty, p.as_ref(), q.as_ref())
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        omega_mul_dense(&empty, &[], q.as_ref()).unwrap(),
        Mat::<f64>::zeros(5, 3)
    );
    assert_eq!(
        omega_tr_mul_dense(&empty, &[], p.as_ref()).unwrap(),
        Mat::<f64>::zeros(4, 3)
    );
}

#[test]
fn results_are_bitwise_independent_of_thread_count() {
    // large enough that the kernels split into many rayon tasks
    let mut rng = seeded(77);
    let omega = random_omega(&mut rng, 700, 400, 0.08, false);
    let p = gauss(78, 700, 16);
    let q = gauss(79, 400, 16);
    let run = || {
        let s = sampled_dot(&omega, p.as_ref(), q.as_ref()).unwrap();
        let rq = omega_mul_dense(&omega, &s, q.as_ref()).unwrap();
        let rtp = omega_tr_mul_dense(&omega, &s, p.as_ref()).unwrap();
        (s, rq, rtp)
    };
    let seq = in_pool(1, run).unwrap();
    let par = in_pool(4, run).unwrap();
    assert_eq!(seq.0, par.0);
    assert_eq!(seq.1, par.1);
    assert_eq!(seq.2, par.2);
    assert_eq!(seq, in_pool(3, run).unwrap());
}
