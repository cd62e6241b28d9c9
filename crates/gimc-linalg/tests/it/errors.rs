//! Every user-facing error case returns the right LinalgError variant instead of panicking.

use gimc_linalg::faer::Mat;
use gimc_linalg::kernels::{Kernel, kernel_block};
use gimc_linalg::observed::{omega_mul_dense, omega_tr_mul_dense, sampled_dot};
use gimc_linalg::sprs::CsMat;
use gimc_linalg::{
    FeatureMatrix, LinalgError, Observed, ValidCgParams, cholesky_solve, conjugate_gradient,
    pinv_sqrt, ridge_solve, thin_svd,
};

use crate::common::gauss;

fn dim(r: Result<impl std::fmt::Debug, LinalgError>) {
    assert!(
        matches!(r, Err(LinalgError::DimensionMismatch { .. })),
        "{r:?}"
    );
}

#[test]
fn dimension_mismatches() {
    let omega = Observed::from_triplets(3, 4, &[0, 2], &[1, 3], &[1.0, 2.0]).unwrap();
    let p = gauss(1, 3, 2);
    let q = gauss(2, 4, 2);
    dim(sampled_dot(&omega, q.as_ref(), q.as_ref()));
    dim(sampled_dot(&omega, p.as_ref(), gauss(3, 4, 3).as_ref()));
    dim(omega_mul_dense(&omega, &[1.0, 2.0], p.as_ref()));
    dim(omega_mul_dense(&omega, &[1.0], q.as_ref()));
    dim(omega_tr_mul_dense(&omega, &[1.0, 2.0], q.as_ref()));
    let x = FeatureMatrix::dense(gauss(4, 5, 3)).unwrap();
    dim(x.mul_dense(gauss(5, 4, 2).as_ref()));
    dim(x.tr_mul_dense(gauss(5, 4, 2).as_ref()));
    dim(kernel_block(&Kernel::Linear, &x, gauss(6, 2, 4).as_ref()));
    dim(cholesky_solve(
        Mat::<f64>::identity(3, 3).as_ref(),
        gauss(7, 4, 1).as_ref(),
    ));
    dim(ridge_solve(
        gauss(8, 3, 2).as_ref(),
        gauss(7, 3, 1).as_ref(),
        1.0,
    ));
    let a = Mat::<f64>::identity(3, 3);
    let op = gimc_linalg::cg::DenseOperator::new(a.as_ref(), 2).unwrap();
    let mut x0 = Mat::<f64>::zeros(3, 2);
    dim(conjugate_gradient(
        &op,
        gauss(9, 3, 1).as_ref(),
        x0.as_mut(),
        &ValidCgParams::default(),
    ));
    dim(omega.with_values(vec![1.0]));
}

#[test]
fn out_of_range_and_duplicate_omega_entries() {
    assert!(matches!(
        Observed::from_triplets(3, 4, &[0, 3], &[1, 1], &[1.0, 2.0]),
        Err(LinalgError::IndexOutOfBounds {
            row: 3,
            col: 1,
            nrows: 3,
            ncols: 4
        })
    ));
    assert!(matches!(
        Observed::from_triplets(3, 4, &[0, 1], &[4, 1], &[1.0, 2.0]),
        Err(LinalgError::IndexOutOfBounds { row: 0, col: 4, .. })
    ));
    let dup = Observed::from_triplets(3, 4, &[2, 0, 2], &[1, 1, 1], &[1.0, 2.0, 3.0]);
    match dup {
        Err(LinalgError::InvalidParameter { reason, .. }) => {
            assert!(
                reason.contains("duplicate") && reason.contains("(2, 1)"),
                "{reason}"
            )
        }
        other => panic!("expected duplicate error, got {other:?}"),
    }
}

#[test]
fn non_finite_values_are_rejected_with_position() {
    assert!(matches!(
        Observed::from_triplets(3, 4, &[0, 2], &[1, 3], &[1.0, f64::NAN]),
        Err(LinalgError::NonFinite { row: 2, col: 3, .. })
    ));
    let mut m = gauss(1, 4, 3);
    m[(2, 1)] = f64::INFINITY;
    assert!(matches!(
        Observed::full_from_dense(m.as_ref()),
        Err(LinalgError::NonFinite { row: 2, col: 1, .. })
    ));
    assert!(matches!(
        FeatureMatrix::dense(m.clone()),
        Err(LinalgError::NonFinite { row: 2, col: 1, .. })
    ));
    assert!(matches!(
        thin_svd(m.as_ref()),
        Err(LinalgError::NonFinite { row: 2, col: 1, .. })
    ));
    let csr = CsMat::new((2, 3), vec![0, 1, 2], vec![2, 0], vec![1.0, f64::NAN]);
    assert!(matches!(
        Observed::from_csr(&csr),
        Err(LinalgError::NonFinite { row: 1, col: 0, .. })
    ));
    assert!(matches!(
        FeatureMatrix::sparse(csr),
        Err(LinalgError::NonFinite { row: 1, col: 0, .. })
    ));
    let mut sym = Mat::<f64>::identity(3, 3);
    sym[(0, 0)] = f64::NAN;
    assert!(matches!(
        pinv_sqrt(sym.as_ref(), 1e-8),
        Err(LinalgError::NonFinite { .. })
    ));
    assert!(matches!(
        cholesky_solve(sym.as_ref(), gauss(2, 3, 1).as_ref()),
        Err(LinalgError::NonFinite { .. })
    ));
}

#[test]
fn non_positive_definite_cholesky() {
    // symmetric indefinite: eigenvalues 3 and −1
    let a = Mat::from_fn(2, 2, |i, j| if i == j { 1.0 } else { 2.0 });
    assert!(matches!(
        cholesky_solve(a.as_ref(), gauss(1, 2, 1).as_ref()),
        Err(LinalgError::NotPositiveDefinite {
            op: "cholesky",
            index: 1
        })
    ));
    // singular PSD with λ = 0
    let g = gauss(2, 2, 4);
    let gram = g.transpose() * &g; // 4 × 4 of rank 2
    assert!(matches!(
        ridge_solve(gram.as_ref(), gauss(3, 4, 1).as_ref(), 0.0),
        Err(LinalgError::NotPositiveDefinite { .. })
    ));
    assert!(ridge_solve(gram.as_ref(), gauss(3, 4, 1).as_ref(), 0.1).is_ok());
    assert!(matches!(
        ridge_solve(gram.as_ref(), gauss(3, 4, 1).as_ref(), f64::NAN),
        Err(LinalgError::InvalidParameter { name: "lambda", .. })
    ));
}

#[test]
fn invalid_kernel_parameters() {
    let x = FeatureMatrix::dense(gauss(1, 3, 2)).unwrap();
    for k in [
        Kernel::Rbf { gamma: 0.0 },
        Kernel::Rbf { gamma: -2.0 },
        Kernel::Rbf {
            gamma: f64::INFINITY,
        },
        Kernel::Polynomial {
            gamma: f64::NAN,
            coef0: 0.0,
            degree: 2,
        },
    ] {
        assert!(matches!(
            kernel_block(&k, &x, gauss(2, 2, 2).as_ref()),
            Err(LinalgError::InvalidParameter { name: "gamma", .. })
        ));
    }
}
