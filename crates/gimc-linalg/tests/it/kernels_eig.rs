//! Kernel blocks against per-pair evaluation; the Nyström pseudo-inverse square root.

use gimc_linalg::faer::Mat;
use gimc_linalg::kernels::{Kernel, kernel_block, kernel_block_dense, kernel_diag};
use gimc_linalg::{cholesky_solve, pinv_factor, pinv_sqrt, sym_eig, sym_sqrt};
use proptest::prelude::*;

use crate::common::{feature_pair, gauss, max_diff};

fn kernels() -> Vec<Kernel> {
    vec![
        Kernel::Rbf { gamma: 0.7 },
        Kernel::Linear,
        Kernel::Polynomial {
            gamma: 0.3,
            coef0: 1.0,
            degree: 2,
        },
        Kernel::Polynomial {
            gamma: 1.0,
            coef0: -0.5,
            degree: 3,
        },
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn kernel_block_matches_direct_evaluation(
        n in 1usize..15,
        m in 1usize..8,
        d in 1usize..10,
        density in 0.1f64..1.0,
        seed in 0u64..10_000,
    ) {
        let (xd, xs) = feature_pair(seed, n, d, density);
        let x = xd.to_dense();
        let u = gauss(seed + 1, m, d);
        for k in kernels() {
            let bd = kernel_block(&k, &xd, u.as_ref()).unwrap();
            let bs = kernel_block(&k, &xs, u.as_ref()).unwrap();
            prop_assert_eq!(bd.shape(), (n, m));
            for i in 0..n {
                let xi: Vec<f64> = (0..d).map(|c| x[(i, c)]).collect();
                for r in 0..m {
                    let ur: Vec<f64> = (0..d).map(|c| u[(r, c)]).collect();
                    let direct = k.eval(&xi, &ur).unwrap();
                    let scale = 1.0 + direct.abs();
                    prop_assert!((bd[(i, r)] - direct).abs() < 1e-10 * scale, "{:?}", k);
                    prop_assert!((bs[(i, r)] - direct).abs() < 1e-10 * scale, "{:?}", k);
                }
            }
            let bdd = kernel_block_dense(&k, x.as_ref(), u.as_ref()).unwrap();
            prop_assert!(max_diff(&bdd, &bd) < 1e-10 * (1.0 + bd.norm_max()));
            let diag = kernel_diag(&k, &xs).unwrap();
            for (i, v) in diag.iter().enumerate() {
                let xi: Vec<f64> = (0..d).map(|c| x[(i, c)]).collect();
                prop_assert!((v - k.eval(&xi, &xi).unwrap()).abs() < 1e-10 * (1.0 + v.abs()));
            }
        }
    }
}

#[test]
fn pinv_sqrt_gives_projector_on_rank_deficient_psd() {
    // E = C Cᵀ with C 8 × 3: rank 3
    let c = gauss(1, 8, 3);
    let e = &c * c.transpose();
    let m = pinv_sqrt(e.as_ref(), 1e-10).unwrap();
    let proj = &m * &e * &m;
    // orthogonal projector onto range(E) = range(C)
    assert!(max_diff(&(&proj * &proj), &proj) < 1e-9);
    assert!(max_diff(&proj, &proj.transpose().to_owned()) < 1e-12);
    assert!((proj.diagonal().column_vector().sum() - 3.0).abs() < 1e-9);
    assert!(max_diff(&(&proj * &c), &c) < 1e-9);
    // Nyström with every point as a landmark reproduces the kernel exactly: (E M)(E M)ᵀ = E
    let phi = &e * &m;
    assert!(max_diff(&(&phi * phi.transpose()), &e) < 1e-9);
}

#[test]
fn pinv_sqrt_squared_is_inverse_on_full_rank_psd() {
    let g = gauss(2, 10, 6);
    let mut e = g.transpose() * &g;
    for i in 0..6 {
        e[(i, i)] += 0.5;
    }
    let m = pinv_sqrt(e.as_ref(), 1e-12).unwrap();
    let inv = cholesky_solve(e.as_ref(), Mat::<f64>::identity(6, 6).as_ref()).unwrap();
    assert!(max_diff(&(&m * &m), &inv) < 1e-9);
    let r = sym_sqrt(e.as_ref()).unwrap();
    assert!(max_diff(&(&r * &m), &Mat::<f64>::identity(6, 6)) < 1e-9);
}

#[test]
fn pinv_sqrt_drops_small_eigenvalues() {
    // eigenvalues 1, 1e-3, 1e-12: with rel_tol 1e-6 only two survive
    let q = gimc_linalg::dense::orthonormalize(gauss(3, 3, 3).as_ref());
    let d = Mat::from_fn(
        3,
        3,
        |i, j| if i == j { [1.0, 1e-3, 1e-12][i] } else { 0.0 },
    );
    let e = &q * d * q.transpose();
    let m = pinv_sqrt(e.as_ref(), 1e-6).unwrap();
    let (vals, _) = sym_eig(m.as_ref()).unwrap();
    assert!(vals[0].abs() < 1e-6, "{vals:?}");
    assert!(
        (vals[1] - 1.0).abs() < 1e-6 && (vals[2] - 1e3f64.sqrt()).abs() < 1e-3,
        "{vals:?}"
    );
}

#[test]
fn pinv_factor_is_inverse_cholesky_on_well_conditioned_psd() {
    let g = gauss(5, 12, 6);
    let mut e = g.transpose() * &g;
    for i in 0..6 {
        e[(i, i)] += 0.5;
    }
    let m = pinv_factor(e.as_ref(), 1e-12).unwrap();
    // the Cholesky route: M = L⁻ᵀ is upper triangular and M Mᵀ = E⁻¹
    for j in 0..6 {
        for i in (j + 1)..6 {
            assert_eq!(m[(i, j)], 0.0, "M must be upper triangular");
        }
    }
    let inv = cholesky_solve(e.as_ref(), Mat::<f64>::identity(6, 6).as_ref()).unwrap();
    assert!(max_diff(&(&m * m.transpose()), &inv) < 1e-9);
    // and Mᵀ E M = I: Φ = C M whitens the landmarks' kernel
    assert!(max_diff(&(m.transpose() * &e * &m), &Mat::<f64>::identity(6, 6)) < 1e-9);
}

#[test]
fn pinv_factor_falls_back_to_pinv_sqrt_when_an_eigenvalue_would_be_cut() {
    // rank-deficient: the Cholesky fails or is not certified, so the result is (E^†)^{1/2}
    let c = gauss(6, 8, 3);
    let e = &c * c.transpose();
    let f = pinv_factor(e.as_ref(), 1e-10).unwrap();
    let s = pinv_sqrt(e.as_ref(), 1e-10).unwrap();
    assert!(max_diff(&f, &s) < 1e-12);
    // full rank but with an eigenvalue below rel_tol·λ_max: still the thresholded square root
    let q = gimc_linalg::dense::orthonormalize(gauss(7, 3, 3).as_ref());
    let d = Mat::from_fn(3, 3, |i, j| if i == j { [1.0, 1e-3, 1e-9][i] } else { 0.0 });
    let e = &q * d * q.transpose();
    let f = pinv_factor(e.as_ref(), 1e-6).unwrap();
    let s = pinv_sqrt(e.as_ref(), 1e-6).unwrap();
    assert!(max_diff(&f, &s) < 1e-9);
    // the same Φ Φᵀ either way for any C: here C = I
    assert!(max_diff(&(&f * f.transpose()), &(&s * &s)) < 1e-9);
}

#[test]
fn kernel_block_with_sparse_landmarks_matches_dense_over_many_row_blocks() {
    // Landmarks taken from the rows of sparse data are mostly zero, so the sparse data take the
    // fused compressed product (kernel applied per row block); the dense copy takes the GEMM
    // path. n = 1,500 rows span several row blocks for every m.
    let (xd, xs) = feature_pair(11, 1500, 60, 0.05);
    let x = xd.to_dense();
    for m in [1usize, 7, 300] {
        let u = x.subrows(100, m).to_owned();
        for k in kernels() {
            let bs = kernel_block(&k, &xs, u.as_ref()).unwrap();
            let bd = kernel_block(&k, &xd, u.as_ref()).unwrap();
            assert_eq!(bs.shape(), (1500, m));
            assert!(
                max_diff(&bs, &bd) < 1e-10 * (1.0 + bd.norm_max()),
                "{k:?} m={m}"
            );
            let bdd = kernel_block_dense(&k, x.as_ref(), u.as_ref()).unwrap();
            assert!(
                max_diff(&bdd, &bd) < 1e-10 * (1.0 + bd.norm_max()),
                "{k:?} m={m}"
            );
        }
    }
}

#[test]
fn rbf_block_on_sparse_data_is_in_unit_interval() {
    let (_, xs) = feature_pair(4, 50, 30, 0.1);
    let x = xs.to_dense();
    let landmarks = x.subrows(0, 5).to_owned();
    let b = kernel_block(&Kernel::Rbf { gamma: 0.5 }, &xs, landmarks.as_ref()).unwrap();
    for i in 0..50 {
        for r in 0..5 {
            assert!(b[(i, r)] > 0.0 && b[(i, r)] <= 1.0);
        }
    }
    for r in 0..5 {
        assert!((b[(r, r)] - 1.0).abs() < 1e-12);
    }
}
