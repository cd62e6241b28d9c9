//! Thin SVD reconstruction and the randomized truncated SVD against the thin SVD.

use gimc_linalg::dense::in_pool;
use gimc_linalg::faer::Mat;
use gimc_linalg::observed::Observed;
use gimc_linalg::rng::seeded;
use gimc_linalg::svd::{SparsePlusLowRank, Svd, top_k_svd_op};
use gimc_linalg::{FeatureMatrix, thin_svd, top_k_svd};
use proptest::prelude::*;

use crate::common::{gauss, max_diff, random_omega};

/// An m × n matrix with prescribed singular values (random orthonormal factors).
fn with_spectrum(seed: u64, m: usize, n: usize, s: &[f64]) -> Mat<f64> {
    let u = gimc_linalg::dense::orthonormalize(gauss(seed, m, s.len()).as_ref());
    let v = gimc_linalg::dense::orthonormalize(gauss(seed + 1, n, s.len()).as_ref());
    let us = Mat::from_fn(m, s.len(), |i, j| u[(i, j)] * s[j]);
    &us * v.transpose()
}

/// Leading-k agreement up to the sign of each singular pair.
fn assert_leading_match(f: &Svd, reference: &Svd, k: usize, tol: f64) {
    assert_eq!(f.rank(), k);
    for j in 0..k {
        let rel = (f.s[j] - reference.s[j]).abs() / reference.s[0];
        assert!(rel < tol, "sigma_{j}: {} vs {}", f.s[j], reference.s[j]);
        let dot_u: f64 = (0..f.u.nrows())
            .map(|i| f.u[(i, j)] * reference.u[(i, j)])
            .sum();
        let dot_v: f64 = (0..f.v.nrows())
            .map(|i| f.v[(i, j)] * reference.v[(i, j)])
            .sum();
        assert!(1.0 - dot_u.abs() < tol, "u_{j}: |cos| = {}", dot_u.abs());
        assert!(1.0 - dot_v.abs() < tol, "v_{j}: |cos| = {}", dot_v.abs());
        // the same sign flip on u and v (so u s vᵀ is unchanged)
        assert!(dot_u * dot_v > 0.0);
    }
    // orthonormal columns
    let k_eye = Mat::<f64>::identity(k, k);
    assert!(max_diff(&(f.u.transpose() * &f.u), &k_eye) < 1e-10);
    assert!(max_diff(&(f.v.transpose() * &f.v), &k_eye) < 1e-10);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn thin_svd_reconstructs(m in 1usize..30, n in 1usize..30, seed in 0u64..10_000) {
        let a = gauss(seed, m, n);
        let f = thin_svd(a.as_ref()).unwrap();
        prop_assert_eq!(f.rank(), m.min(n));
        prop_assert!(f.s.windows(2).all(|w| w[0] >= w[1]));
        prop_assert!(f.s.iter().all(|&s| s >= 0.0));
        prop_assert!(max_diff(&f.reconstruct(), &a) < 1e-10);
    }

    #[test]
    fn top_k_matches_thin_svd_with_a_gap(
        m in 40usize..90,
        n in 40usize..90,
        k in 1usize..6,
        seed in 0u64..10_000,
    ) {
        // k distinct leading values well separated, then a gap to a tail decaying from 1
        let r = m.min(n);
        let spectrum: Vec<f64> = (0..r)
            .map(|i| if i < k { 100.0 - 10.0 * i as f64 } else { 1.0 / (1 + i - k) as f64 })
            .collect();
        let a = with_spectrum(seed, m, n, &spectrum);
        let reference = thin_svd(a.as_ref()).unwrap();
        let f = top_k_svd(a.as_ref(), k, &mut seeded(seed + 7)).unwrap();
        assert_leading_match(&f, &reference, k, 1e-8);
    }
}

#[test]
fn top_k_falls_back_to_thin_svd_near_full_rank() {
    let a = gauss(1, 12, 9);
    let reference = thin_svd(a.as_ref()).unwrap();
    let f = top_k_svd(a.as_ref(), 8, &mut seeded(2)).unwrap();
    assert_leading_match(&f, &reference, 8, 1e-10);
}

#[test]
fn operator_svd_on_sparse_features_and_sparse_plus_low_rank() {
    // sparse feature matrix with a planted low-rank part dominating
    let planted = with_spectrum(3, 120, 80, &[50.0, 40.0, 30.0]);
    let noise = crate::common::random_csr(&mut seeded(4), 120, 80, 0.05);
    let dense = &planted + gimc_linalg::sparse::csr_to_dense(&noise);
    let sparse = gimc_linalg::sparse::dense_to_csr(dense.as_ref()).unwrap();
    let x = FeatureMatrix::sparse(sparse).unwrap();
    let reference = thin_svd(dense.as_ref()).unwrap();
    let f = top_k_svd_op(&x, 3, &mut seeded(5)).unwrap();
    assert_leading_match(&f, &reference, 3, 1e-8);

    // S + L Rᵀ with S on a random Ω
    let omega: Observed = random_omega(&mut seeded(6), 100, 70, 0.1, false);
    let left = gauss(7, 100, 2) * gimc_linalg::faer::Scale(3.0);
    let right = gauss(8, 70, 2);
    let op = SparsePlusLowRank::new(&omega, omega.values(), left.as_ref(), right.as_ref()).unwrap();
    let full = omega.to_dense() + &left * right.transpose();
    let reference = thin_svd(full.as_ref()).unwrap();
    let f = in_pool(2, || top_k_svd_op(&op, 2, &mut seeded(9)).unwrap()).unwrap();
    let gap = reference.s[2] / reference.s[1];
    assert!(gap < 0.5, "test matrix needs a gap, got {gap}");
    assert_leading_match(&f, &reference, 2, 1e-6);
    // mismatched factors are rejected
    assert!(SparsePlusLowRank::new(&omega, omega.values(), right.as_ref(), left.as_ref()).is_err());
}

#[test]
fn top_k_is_reproducible_for_a_seed() {
    let a = gauss(10, 60, 50);
    let f1 = top_k_svd(a.as_ref(), 3, &mut seeded(11)).unwrap();
    let f2 = top_k_svd(a.as_ref(), 3, &mut seeded(11)).unwrap();
    assert_eq!(f1, f2);
}

/// The bits of every entry of `m`, to compare factorisations exactly.
fn bits(m: &Mat<f64>) -> Vec<u64> {
    (0..m.ncols())
        .flat_map(|j| (0..m.nrows()).map(move |i| m[(i, j)].to_bits()))
        .collect()
}

/// The eigen, SVD and QR factorisations give the same bits on 1 and 3 threads, below and above
/// the size from which they run in parallel (`dense::factor_par`). faer's own factorisations,
/// which follow the current pool, differ in the last bits of nearly every entry between the two.
#[test]
fn factorisations_are_bitwise_independent_of_thread_count() {
    use gimc_linalg::dense::{HouseholderQr, PARALLEL_FACTOR_MIN, orthonormalize};
    use gimc_linalg::svd::singular_values;
    use gimc_linalg::sym_eig;
    for (seed, n, m) in [
        (1, 60, 40),
        (2, 2 * PARALLEL_FACTOR_MIN, PARALLEL_FACTOR_MIN + 9),
    ] {
        let a = gauss(seed, n, m);
        let sym = a.transpose() * &a;
        let run = || {
            let (vals, vecs) = sym_eig(sym.as_ref()).unwrap();
            let svd = thin_svd(a.as_ref()).unwrap();
            let qr = HouseholderQr::new(a.as_ref());
            let mut out = vec![
                vals.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                bits(&vecs),
                svd.s.iter().map(|v| v.to_bits()).collect(),
                bits(&svd.u),
                bits(&svd.v),
                singular_values(a.as_ref())
                    .unwrap()
                    .iter()
                    .map(|v| v.to_bits())
                    .collect(),
                bits(&qr.thin_r().to_owned()),
                bits(&qr.thin_q()),
                bits(&orthonormalize(a.transpose())),
            ];
            out.push(bits(&(qr.thin_q() * qr.thin_r())));
            out
        };
        let one = in_pool(1, run).unwrap();
        let three = in_pool(3, run).unwrap();
        for (part, (x, y)) in one.iter().zip(&three).enumerate() {
            assert!(
                x == y,
                "{n} x {m}: part {part} differs between 1 and 3 threads"
            );
        }
        // and they are factorisations of `a`
        let qr = HouseholderQr::new(a.as_ref());
        assert!(max_diff(&(qr.thin_q() * qr.thin_r()), &a) < 1e-10);
        let svd = thin_svd(a.as_ref()).unwrap();
        assert!(max_diff(&svd.reconstruct(), &a) < 1e-10);
    }
}
