//! FeatureMatrix and sparse products: dense and sparse representations agree, and the sparse
//! kernels are independent of the thread count.

use gimc_linalg::FeatureMatrix;
use gimc_linalg::dense::in_pool;
use gimc_linalg::kernels::{Kernel, kernel_block, kernel_block_dense};
use gimc_linalg::rng::seeded;
use gimc_linalg::sparse::{csr_mul_dense, csr_to_dense, csr_tr_mul_dense, dense_to_csr};
use proptest::prelude::*;

use crate::common::{feature_pair, gauss, max_diff, random_csr};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn dense_and_sparse_representations_agree(
        n in 1usize..30,
        d in 1usize..30,
        k in 1usize..6,
        density in 0.0f64..0.6,
        seed in 0u64..10_000,
    ) {
        let (xd, xs) = feature_pair(seed, n, d, density);
        prop_assert_eq!(xd.to_dense(), xs.to_dense());
        let u = gauss(seed + 1, d, k);
        let g = gauss(seed + 2, n, k);
        prop_assert!(max_diff(&xd.mul_dense(u.as_ref()).unwrap(), &xs.mul_dense(u.as_ref()).unwrap()) < 1e-12);
        prop_assert!(max_diff(&xd.tr_mul_dense(g.as_ref()).unwrap(), &xs.tr_mul_dense(g.as_ref()).unwrap()) < 1e-12);
        prop_assert!(max_diff(&xd.gram(), &xs.gram()) < 1e-12);
        prop_assert!(max_diff(&xd.outer_gram(), &xs.outer_gram()) < 1e-12);
        for (a, b) in xd.row_sq_norms().iter().zip(xs.row_sq_norms()) {
            prop_assert!((a - b).abs() < 1e-12);
        }
        for (a, b) in xd.column_means().iter().zip(xs.column_means()) {
            prop_assert!((a - b).abs() < 1e-12);
        }
        // and both equal the naive dense reference
        let x = xd.to_dense();
        prop_assert!(max_diff(&xs.mul_dense(u.as_ref()).unwrap(), &(&x * &u)) < 1e-12);
        prop_assert!(max_diff(&xs.tr_mul_dense(g.as_ref()).unwrap(), &(x.transpose() * &g)) < 1e-12);
        // a transposed (strided) right-hand side works too
        let ut = u.transpose().to_owned();
        prop_assert!(max_diff(&xs.mul_dense(ut.transpose()).unwrap(), &(&x * &u)) < 1e-12);
        let rows: Vec<usize> = (0..n).rev().step_by(2).collect();
        prop_assert_eq!(xd.select_rows(&rows).unwrap().to_dense(), xs.select_rows(&rows).unwrap().to_dense());
        // dense -> csr -> dense round trip
        prop_assert_eq!(csr_to_dense(&dense_to_csr(x.as_ref()).unwrap()), x);
    }
}

#[test]
fn sparse_products_are_bitwise_independent_of_thread_count() {
    let a = random_csr(&mut seeded(5), 900, 300, 0.05);
    let x = FeatureMatrix::sparse(a.clone()).unwrap();
    let b = gauss(6, 300, 12);
    let g = gauss(7, 900, 12);
    let landmarks = gauss(8, 20, 300);
    let run = || {
        (
            csr_mul_dense(&a, b.as_ref()).unwrap(),
            csr_tr_mul_dense(&a, g.as_ref()).unwrap(),
            x.gram(),
            x.outer_gram(),
            x.row_sq_norms(),
            kernel_block(&Kernel::Rbf { gamma: 0.1 }, &x, landmarks.as_ref()).unwrap(),
        )
    };
    let seq = in_pool(1, run).unwrap();
    let par = in_pool(4, run).unwrap();
    assert!(seq == par);
    // the CSC storage of the same matrix gives the same bits
    let csc = a.to_csc();
    let par_csc = in_pool(4, || {
        (
            csr_mul_dense(&csc, b.as_ref()).unwrap(),
            csr_tr_mul_dense(&csc, g.as_ref()).unwrap(),
        )
    })
    .unwrap();
    assert_eq!(par_csc.0, seq.0);
    assert_eq!(par_csc.1, seq.1);
}

#[test]
fn dense_feature_products_agree_across_thread_counts() {
    // dense products go through faer's GEMM; gimc relies on them being reproducible too
    let (xd, _) = feature_pair(9, 300, 200, 1.0);
    let u = gauss(10, 200, 64);
    let g = gauss(11, 300, 64);
    let run = || {
        (
            xd.mul_dense(u.as_ref()).unwrap(),
            xd.tr_mul_dense(g.as_ref()).unwrap(),
            xd.gram(),
        )
    };
    let seq = in_pool(1, run).unwrap();
    let par = in_pool(4, run).unwrap();
    assert!(seq == par);
}

#[test]
fn sparse_landmarks_take_the_compressed_path_with_the_same_values() {
    // Landmarks copied from rows of a sparse set are mostly zeros, so kernel_block multiplies
    // through their compressed form; the values must equal the dense computation.
    let a = random_csr(&mut seeded(21), 300, 80, 0.05);
    let xs = FeatureMatrix::sparse(a).unwrap();
    let xd = FeatureMatrix::dense(xs.to_dense()).unwrap();
    let rows: Vec<usize> = (0..40).map(|i| 7 * i).collect();
    let landmarks = xs.select_rows(&rows).unwrap().to_dense();
    let kernel = Kernel::Rbf { gamma: 0.3 };
    let via_sparse = kernel_block(&kernel, &xs, landmarks.as_ref()).unwrap();
    let via_dense = kernel_block(&kernel, &xd, landmarks.as_ref()).unwrap();
    assert!(max_diff(&via_sparse, &via_dense) < 1e-12);
    let lm = kernel_block_dense(&kernel, landmarks.as_ref(), landmarks.as_ref()).unwrap();
    let reference =
        kernel_block(&kernel, &xd.select_rows(&rows).unwrap(), landmarks.as_ref()).unwrap();
    assert!(max_diff(&lm, &reference) < 1e-12);
    for i in 0..rows.len() {
        assert!((lm[(i, i)] - 1.0).abs() < 1e-12, "k(u, u) = 1 for RBF");
    }
}

#[test]
fn blocked_sparse_products_match_the_naive_product_for_any_width() {
    // widths around the 8-column block and row counts spanning several row tasks
    let a = random_csr(&mut seeded(31), 1500, 120, 0.08);
    let x = csr_to_dense(&a);
    for k in [1, 7, 8, 9, 17, 37] {
        let b = gauss(32 + k as u64, 120, k);
        let g = gauss(64 + k as u64, 1500, k);
        assert!(
            max_diff(&csr_mul_dense(&a, b.as_ref()).unwrap(), &(&x * &b)) < 1e-11,
            "k = {k}"
        );
        assert!(
            max_diff(
                &csr_tr_mul_dense(&a, g.as_ref()).unwrap(),
                &(x.transpose() * &g)
            ) < 1e-10,
            "k = {k}"
        );
    }
}
