//! Conjugate gradient against direct Cholesky solves, and the ridge solvers.

use gimc_linalg::cg::{DenseOperator, FnOperator, SylvesterOperator};
use gimc_linalg::dense::add_to_diagonal;
use gimc_linalg::faer::{Mat, MatMut, MatRef, Scale};
use gimc_linalg::{CgParams, cholesky_solve, conjugate_gradient, ridge};
use proptest::prelude::*;

use crate::common::{feature_pair, gauss, max_diff};

/// A random SPD matrix with condition number about `cond` (eigenvalues spread in [1, cond]).
fn spd(seed: u64, n: usize, cond: f64) -> Mat<f64> {
    let q = gimc_linalg::dense::orthonormalize(gauss(seed, n, n).as_ref());
    let d = Mat::from_fn(n, n, |i, j| {
        if i == j {
            1.0 + (cond - 1.0) * i as f64 / (n.max(2) - 1) as f64
        } else {
            0.0
        }
    });
    let a = &q * d * q.transpose();
    // exactly symmetric
    Mat::from_fn(n, n, |i, j| 0.5 * (a[(i, j)] + a[(j, i)]))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn cg_matches_cholesky_on_random_spd_systems(
        n in 1usize..40,
        k in 1usize..4,
        cond in 1.0f64..1e3,
        tol_exp in 4i32..11,
        seed in 0u64..10_000,
    ) {
        let a = spd(seed, n, cond);
        let b = gauss(seed + 1, n, k);
        let tol = 10f64.powi(-tol_exp);
        let op = DenseOperator::new(a.as_ref(), k).unwrap();
        let mut x = gauss(seed + 2, n, k); // arbitrary warm start
        let params = CgParams::default().with_tol(tol).with_max_iter(10 * n + 50).check().unwrap();
        let rep = conjugate_gradient(&op, b.as_ref(), x.as_mut(), &params).unwrap();
        prop_assert!(rep.converged, "{:?}", rep);
        prop_assert!(rep.relative_residual <= tol);
        // true residual meets the tolerance (small slack for the recursive residual's drift)
        let true_res = (&a * &x - &b).norm_l2() / b.norm_l2();
        prop_assert!(true_res <= 10.0 * tol + 1e-12, "true residual {} tol {}", true_res, tol);
        // and the error against the direct solve is bounded by cond · residual
        let direct = cholesky_solve(a.as_ref(), b.as_ref()).unwrap();
        let rel_err = (&x - &direct).norm_l2() / direct.norm_l2();
        prop_assert!(rel_err <= cond * (10.0 * tol + 1e-12) * 1.5, "rel err {}", rel_err);
    }
}

#[test]
fn cg_on_matrix_valued_unknown_with_sylvester_operator() {
    // 𝒜(S) = L S R + λS, the full-Ω IMC Hessian; compare with the direct solve of the
    // Kronecker system (Rᵀ ⊗ L + λI) vec(S) = vec(B)
    let (p, k, lambda) = (9, 4, 0.3);
    let l = {
        let g = gauss(1, 20, p);
        g.transpose() * &g
    };
    let r = {
        let g = gauss(2, 10, k);
        g.transpose() * &g
    };
    let b = gauss(3, p, k);
    let op = SylvesterOperator::new(l.as_ref(), r.as_ref(), lambda).unwrap();
    let cg = CgParams::default()
        .with_tol(1e-12)
        .with_max_iter(500)
        .check()
        .unwrap();
    let mut s = Mat::<f64>::zeros(p, k);
    let rep = conjugate_gradient(&op, b.as_ref(), s.as_mut(), &cg).unwrap();
    assert!(rep.converged, "{rep:?}");
    let mut kron = r.transpose().kron(&l);
    add_to_diagonal(kron.as_mut(), lambda).unwrap();
    let vec_b = Mat::from_fn(p * k, 1, |t, _| b[(t % p, t / p)]);
    let vec_s = cholesky_solve(kron.as_ref(), vec_b.as_ref()).unwrap();
    let direct = Mat::from_fn(p, k, |i, j| vec_s[(i + j * p, 0)]);
    assert!(max_diff(&s, &direct) < 1e-9, "{}", max_diff(&s, &direct));
    // the closure adapter gives the same operator
    let f = FnOperator::new(p, k, |x: MatRef<'_, f64>, mut out: MatMut<'_, f64>| {
        let y = &l * x * &r + x * Scale(lambda);
        out.copy_from(&y);
    });
    let mut s2 = Mat::<f64>::zeros(p, k);
    conjugate_gradient(&f, b.as_ref(), s2.as_mut(), &cg).unwrap();
    assert!(max_diff(&s2, &direct) < 1e-9);
}

#[test]
fn ridge_equals_normal_equations_for_dense_and_sparse_in_both_regimes() {
    for (n, d) in [(40, 12), (12, 40)] {
        let (xd, xs) = feature_pair(n as u64 * 100 + d as u64, n, d, 0.3);
        let y = gauss(4, n, 3);
        let lambda = 0.5;
        let x = xd.to_dense();
        let mut normal = x.transpose() * &x;
        add_to_diagonal(normal.as_mut(), lambda).unwrap();
        let reference = cholesky_solve(normal.as_ref(), (x.transpose() * &y).as_ref()).unwrap();
        for f in [&xd, &xs] {
            let w = ridge(f, y.as_ref(), lambda).unwrap();
            assert!(
                max_diff(&w, &reference) < 1e-9,
                "n={n} d={d} sparse={}",
                f.is_sparse()
            );
        }
    }
}
