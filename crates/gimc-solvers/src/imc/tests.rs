//! Unit tests of the IMC solvers, including the internals of the half-steps.

use super::*;

use gimc_linalg::cg::CgParams;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::gaussian_mat;
use gimc_linalg::{FeatureMatrix, Observed};

use crate::error::refused;
use crate::iter::StopReason;
use crate::{Side, SolverError};

use super::hessian::{Reduced, ReducedBasis};
use super::predict::top_indices;
use crate::NoObserver;
use gimc_linalg::rng::seeded;

fn small_problem_data(seed: u64) -> (FeatureMatrix, FeatureMatrix, Observed) {
    let mut rng = seeded(seed);
    let x = gaussian_mat(&mut rng, 12, 5, 1.0);
    let y = gaussian_mat(&mut rng, 9, 4, 1.0);
    let (mut r, mut c, mut v) = (vec![], vec![], vec![]);
    for i in 0..12 {
        for j in 0..9 {
            if (i * 5 + j * 3) % 3 == 0 {
                r.push(i);
                c.push(j);
                v.push(((i + 2 * j) % 5) as f64 - 2.0);
            }
        }
    }
    let o = Observed::from_triplets(12, 9, &r, &c, &v).unwrap();
    (
        FeatureMatrix::dense(x).unwrap(),
        FeatureMatrix::dense(y).unwrap(),
        o,
    )
}

/// `x` and `y` as dense feature matrices, and the same values stored sparse.
fn dense_and_stored_sparse(
    x: &Mat<f64>,
    y: &Mat<f64>,
) -> (
    (FeatureMatrix, FeatureMatrix),
    (FeatureMatrix, FeatureMatrix),
) {
    (
        (
            FeatureMatrix::dense(x.clone()).unwrap(),
            FeatureMatrix::dense(y.clone()).unwrap(),
        ),
        (stored_sparse(x), stored_sparse(y)),
    )
}

/// The same values as a sparse feature matrix (whose half-steps take neither the
/// preconditioner nor the row-space reduction): the plain-CG reference.
fn stored_sparse(a: &Mat<f64>) -> FeatureMatrix {
    let mut t = gimc_linalg::sprs::TriMat::new((a.nrows(), a.ncols()));
    for i in 0..a.nrows() {
        for j in 0..a.ncols() {
            t.add_triplet(i, j, a[(i, j)]);
        }
    }
    FeatureMatrix::sparse(t.to_csr()).unwrap()
}

/// The blocked weighted Gram of the preconditioner basis equals Φᵀ diag(c) Φ formed whole
/// (n spans several blocks).
#[test]
fn preconditioner_basis_spans_the_count_weighted_gram() {
    let (n, d) = (2500, 6);
    let phi = gaussian_mat(&mut seeded(31), n, d, 1.0);
    let counts: Vec<f64> = (0..n).map(|i| (i % 9) as f64).collect();
    let f = FeatureMatrix::dense(phi.clone()).unwrap();
    let basis = PreconditionerBasis::compute(Side::Features(&f), &counts).unwrap();
    let want = Mat::from_fn(d, d, |a, b| {
        (0..n)
            .map(|i| counts[i] * phi[(i, a)] * phi[(i, b)])
            .sum::<f64>()
    });
    let vecs = basis.vecs.as_ref().unwrap();
    let got = vecs
        * Mat::from_fn(d, d, |a, b| if a == b { basis.vals[a] } else { 0.0 })
        * vecs.transpose();
    let rel = (&got - &want).norm_l2() / want.norm_l2();
    assert!(rel < 1e-12, "basis reproduces G_c only to {rel}");
}

/// The Kronecker-preconditioned half-step (dense features) reaches the same minimiser as
/// plain CG on the identical problem with the features stored sparse (no preconditioner),
/// in fewer iterations, with a badly scaled Ω (line counts from 1 to all).
#[test]
fn preconditioned_half_step_matches_plain_cg_in_fewer_iterations() {
    let (n, m, d, k) = (300, 120, 40, 3);
    let mut rng = seeded(11);
    let x = gaussian_mat(&mut rng, n, d, 1.0);
    let y = gaussian_mat(&mut rng, m, d, 1.0);
    let (mut r, mut c, mut v) = (vec![], vec![], vec![]);
    for i in 0..n {
        // row i observes 1 + (7i mod 40) entries, spread over the columns
        for t in 0..(1 + (i * 7) % 40) {
            r.push(i);
            c.push((i * 13 + t * 17) % m);
            v.push(((i + 3 * t) % 7) as f64 - 3.0);
        }
    }
    let o = Observed::from_triplets(n, m, &r, &c, &v).unwrap();
    let ((xd, yd), (xs, ys)) = dense_and_stored_sparse(&x, &y);
    let dense = ImcProblem::partial(Side::Features(&xd), Side::Features(&yd), &o).unwrap();
    let sparse = ImcProblem::partial(Side::Features(&xs), Side::Features(&ys), &o).unwrap();
    let (bases_x, _) = preconditioner_bases(&dense);
    assert!(bases_x.is_some());
    assert!(preconditioner_bases(&sparse).0.is_none());
    let h = gaussian_mat(&mut rng, d, k, 0.3);
    let params = ImcParams::default()
        .with_lambda(0.01)
        .with_cg(CgParams::default().with_tol(1e-10).with_max_iter(2000))
        .check()
        .unwrap();
    let mut w_pre = Mat::<f64>::zeros(d, k);
    let rep_pre = w_step(&dense, &params, h.as_ref(), w_pre.as_mut()).unwrap();
    let mut w_plain = Mat::<f64>::zeros(d, k);
    let rep_plain = w_step(&sparse, &params, h.as_ref(), w_plain.as_mut()).unwrap();
    let rel = (&w_pre - &w_plain).norm_l2() / w_plain.norm_l2();
    assert!(rel < 1e-7, "solutions differ by {rel}");
    assert!(
        rep_pre.cg_iterations * 2 <= rep_plain.cg_iterations,
        "preconditioned {} vs plain {} CG iterations",
        rep_pre.cg_iterations,
        rep_plain.cg_iterations
    );
    // an explicitly given basis of the wrong dimension is refused, the right one taken
    let (sx, sy, so) = small_problem_data(3);
    let small = ImcProblem::partial(Side::Features(&sx), Side::Features(&sy), &so).unwrap();
    let (small_basis, _) = preconditioner_bases(&small);
    let wrong = dense.with_preconditioner_bases(small_basis.as_ref(), None);
    assert!(wrong.is_err());
    let given = ImcProblem::partial(Side::Features(&xd), Side::Features(&yd), &o)
        .unwrap()
        .with_preconditioner_bases(bases_x.as_ref(), None)
        .unwrap();
    let mut w_given = Mat::<f64>::zeros(d, k);
    let rep_given = w_step(&given, &params, h.as_ref(), w_given.as_mut()).unwrap();
    assert_eq!(rep_given.cg_iterations, rep_pre.cg_iterations);
}

/// Wide dense features (D > n) take the row-space reduction W = Vα: the half-step reaches
/// the same minimiser as plain CG on the same features stored sparse (no reduction).
#[test]
fn row_space_reduction_of_wide_features_gives_the_same_half_step() {
    let (n, m, d, k) = (30, 25, 80, 2);
    let mut rng = seeded(21);
    let x = gaussian_mat(&mut rng, n, d, 1.0);
    let y = gaussian_mat(&mut rng, m, d, 1.0);
    let (mut r, mut c, mut v) = (vec![], vec![], vec![]);
    for i in 0..n {
        for j in 0..m {
            if (i * 7 + j * 5) % 4 == 0 {
                r.push(i);
                c.push(j);
                v.push(((i + j) % 5) as f64 - 2.0);
            }
        }
    }
    let o = Observed::from_triplets(n, m, &r, &c, &v).unwrap();
    let ((xd, yd), (xs, ys)) = dense_and_stored_sparse(&x, &y);
    let dense = ImcProblem::partial(Side::Features(&xd), Side::Features(&yd), &o).unwrap();
    let sparse = ImcProblem::partial(Side::Features(&xs), Side::Features(&ys), &o).unwrap();
    let params = ImcParams::default()
        .with_lambda(0.05)
        .with_cg(CgParams::default().with_tol(1e-12).with_max_iter(5000))
        .check()
        .unwrap();
    let h = gaussian_mat(&mut rng, d, k, 0.3);
    // a warm start with a component outside the row space of Φ
    let w0 = gaussian_mat(&mut rng, d, k, 1.0);
    let mut w_red = w0.clone();
    let rep = w_step(&dense, &params, h.as_ref(), w_red.as_mut()).unwrap();
    assert!(rep.relative_residual <= 1e-12, "{rep:?}");
    let mut w_plain = w0.clone();
    w_step(&sparse, &params, h.as_ref(), w_plain.as_mut()).unwrap();
    let rel = (&w_red - &w_plain).norm_l2() / w_plain.norm_l2();
    assert!(rel < 1e-8, "solutions differ by {rel}");
    // and the objective agrees with the reduced solution
    let f_red = imc_objective(&dense, 0.05, w_red.as_ref(), h.as_ref()).unwrap();
    let f_plain = imc_objective(&dense, 0.05, w_plain.as_ref(), h.as_ref()).unwrap();
    assert!((f_red - f_plain).abs() <= 1e-9 * f_plain.abs());
}

/// The reduction of a wide Φ reproduces Φ = L Vᵀ, and V (applied without being formed) has
/// orthonormal columns (Vᵀ V α = α) spanning the row space of Φ: by Cholesky QR on a
/// well-conditioned Φ, and by Householder QR when a row repeats (a zero pivot). The features
/// L are rotated into the preconditioner's eigenbasis: Lᵀ diag(c) L is the diagonal of its
/// eigenvalues.
#[test]
fn reduction_factors_reproduce_the_features() {
    let (n, d, k) = (12, 40, 3);
    let mut rng = seeded(5);
    let phi = gaussian_mat(&mut rng, n, d, 1.0);
    let mut repeated = phi.clone();
    for j in 0..d {
        repeated[(7, j)] = phi[(2, j)];
    }
    for (phi, cholesky) in [(phi, true), (repeated, false)] {
        let counts: Vec<f64> = (0..n).map(|i| (i % 3 + 1) as f64).collect();
        let red = Reduced::new(phi.as_ref(), &counts).unwrap();
        assert_eq!(
            matches!(red.basis_v, ReducedBasis::Cholesky(_)),
            cholesky,
            "which factorisation"
        );
        assert_eq!(red.dim(), n);
        let l = red.l_dense().to_owned();
        // V (D × n) applied to the identity
        let v = red.v_mul(Mat::<f64>::identity(n, n).as_ref());
        assert_eq!(v.shape(), (d, n));
        assert!((&l * v.transpose() - &phi).norm_l2() < 1e-12 * phi.norm_l2());
        assert!((&phi * &v - &l).norm_l2() < 1e-12 * phi.norm_l2());
        // Vᵀx agrees with the formed V on a vector with a component outside the row space
        let x = gaussian_mat(&mut rng, d, k, 1.0);
        assert!((red.v_t_mul(x.as_ref()) - v.transpose() * &x).norm_l2() < 1e-12 * x.norm_l2());
        let eye = v.transpose() * &v;
        assert!((eye - Mat::<f64>::identity(n, n)).norm_l2() < 1e-12);
        let alpha = gaussian_mat(&mut rng, n, k, 1.0);
        let back = red.v_t_mul(red.v_mul(alpha.as_ref()).as_ref());
        assert!((back - &alpha).norm_l2() < 1e-12 * alpha.norm_l2());
        let basis = red.basis.as_ref().expect("a rotated reduction");
        assert!(basis.vecs.is_none());
        let vals = &basis.vals;
        let weighted = Mat::from_fn(n, n, |i, j| counts[i] * l[(i, j)]);
        let g = l.transpose() * &weighted;
        let diag = Mat::from_fn(n, n, |a, b| if a == b { vals[a] } else { 0.0 });
        assert!(
            (&g - &diag).norm_l2() < 1e-10 * g.norm_l2(),
            "Lᵀ diag(c) L not diagonal"
        );
    }
}

/// Finite differences of the objective against the factor gradients, for every
/// observation model and both dense and identity sides.
#[test]
fn gradients_match_finite_differences() {
    let (x, y, o) = small_problem_data(1);
    let ident_o = o.clone();
    let cases: Vec<ImcProblem<'_>> = vec![
        ImcProblem::partial(Side::Features(&x), Side::Features(&y), &o).unwrap(),
        ImcProblem::fully_observed(Side::Features(&x), Side::Features(&y), &o).unwrap(),
        ImcProblem::pu(Side::Features(&x), Side::Features(&y), &o, 0.8).unwrap(),
        ImcProblem::pu(Side::Features(&x), Side::Identity(9), &o, 0.3).unwrap(),
        ImcProblem::partial(Side::Identity(12), Side::Identity(9), &ident_o).unwrap(),
    ];
    for (c, pr) in cases.iter().enumerate() {
        let (dx, dy) = pr.dims();
        let mut rng = seeded(10 + c as u64);
        let w = gaussian_mat(&mut rng, dx, 2, 1.0);
        let h = gaussian_mat(&mut rng, dy, 2, 1.0);
        let ws = ImcWorkspace::new(pr);
        let g = ws.factor_gradients(0.3, w.as_ref(), h.as_ref()).unwrap();
        // central differences (step 1e-6) of the objective in entries of W, then of H
        let eps = 1e-6;
        let f = |w: &Mat<f64>, h: &Mat<f64>| ws.objective(0.3, w.as_ref(), h.as_ref()).unwrap();
        let w_entries = [(0, 0), (dx - 1, 1), (1, 1)].map(|e| (true, e));
        let h_entries = [(0, 1), (dy - 1, 0)].map(|e| (false, e));
        for (in_w, (i, j)) in w_entries.into_iter().chain(h_entries) {
            let (name, factor, grad) = if in_w {
                ("W", &w, &g.d_w)
            } else {
                ("H", &h, &g.d_h)
            };
            let (mut plus, mut minus) = (factor.clone(), factor.clone());
            plus[(i, j)] += eps;
            minus[(i, j)] -= eps;
            let fd = if in_w {
                (f(&plus, &h) - f(&minus, &h)) / (2.0 * eps)
            } else {
                (f(&w, &plus) - f(&w, &minus)) / (2.0 * eps)
            };
            assert!(
                (fd - grad[(i, j)]).abs() < 1e-5 * (1.0 + fd.abs()),
                "case {c} {name}({i},{j}): fd {fd} vs {}",
                grad[(i, j)]
            );
        }
        // feature gradients: ∂f/∂Φ = (∂f/∂P) Wᵀ, so Φᵀ(∂f/∂Φ)... check via ⟨∂f/∂Φ, ΔΦ⟩
        let fg = ws
            .feature_gradients(w.as_ref(), h.as_ref(), FeatureSides::Both)
            .unwrap();
        assert_eq!(fg.d_phi.is_some(), !pr.phi().is_identity());
        assert_eq!(fg.d_psi.is_some(), !pr.psi().is_identity());
        for (sides, rows, cols) in [
            (FeatureSides::Rows, true, false),
            (FeatureSides::Cols, false, true),
        ] {
            let one = ws.feature_gradients(w.as_ref(), h.as_ref(), sides).unwrap();
            assert_eq!(one.d_phi.is_some(), rows && !pr.phi().is_identity());
            assert_eq!(one.d_psi.is_some(), cols && !pr.psi().is_identity());
            if rows {
                assert_eq!(one.d_phi, fg.d_phi);
            } else {
                assert_eq!(one.d_psi, fg.d_psi);
            }
        }
    }
}

/// The objective and feature gradients from kept products: a P formed for one W beside a Q
/// kept from before gives the same bits as forming both, and products of the wrong shape are
/// refused (a stale or mismatched cache must not pass silently).
#[test]
fn kept_products_give_the_same_bits_and_wrong_shapes_are_refused() {
    let (x, y, o) = small_problem_data(3);
    let pr = ImcProblem::partial(Side::Features(&x), Side::Features(&y), &o).unwrap();
    let (dx, dy) = pr.dims();
    let mut rng = seeded(31);
    let (w0, w1) = (
        gaussian_mat(&mut rng, dx, 3, 1.0),
        gaussian_mat(&mut rng, dx, 3, 1.0),
    );
    let h = gaussian_mat(&mut rng, dy, 3, 1.0);
    let ws = ImcWorkspace::new(&pr);
    let kept = ws.products(w0.as_ref(), h.as_ref()).unwrap();
    let pq = FactorProducts {
        p: ws.products(w1.as_ref(), h.as_ref()).unwrap().p,
        q: kept.q.clone(),
    };
    let f = ws.objective(0.2, w1.as_ref(), h.as_ref()).unwrap();
    let f_kept = ws
        .objective_with(0.2, w1.as_ref(), h.as_ref(), &pq)
        .unwrap();
    assert_eq!(f.to_bits(), f_kept.to_bits());
    assert_ne!(
        f.to_bits(),
        ws.objective_with(0.2, w1.as_ref(), h.as_ref(), &kept)
            .unwrap()
            .to_bits(),
        "the products, not the factors, carry the loss"
    );
    let g = ws
        .feature_gradients(w1.as_ref(), h.as_ref(), FeatureSides::Both)
        .unwrap();
    let g_kept = ws
        .feature_gradients_with(w1.as_ref(), h.as_ref(), &pq, FeatureSides::Both)
        .unwrap();
    assert_eq!(g, g_kept);
    let short = FactorProducts {
        p: pq.p.subrows(0, pq.p.nrows() - 1).to_owned(),
        q: pq.q.clone(),
    };
    let narrow = FactorProducts {
        p: pq.p.clone(),
        q: pq.q.subcols(0, 2).to_owned(),
    };
    for bad in [&short, &narrow] {
        let err = ws
            .objective_with(0.2, w1.as_ref(), h.as_ref(), bad)
            .unwrap_err();
        assert!(
            matches!(err, SolverError::DimensionMismatch { .. }),
            "{err}"
        );
        assert!(
            ws.feature_gradients_with(w1.as_ref(), h.as_ref(), bad, FeatureSides::Rows)
                .is_err()
        );
    }
}

/// A half-step solves its ridge problem: the W-gradient vanishes afterwards.
#[test]
fn half_steps_zero_the_partial_gradient() {
    let (x, y, o) = small_problem_data(2);
    let cg = CgParams::default()
        .with_tol(1e-12)
        .with_max_iter(500)
        .check()
        .unwrap();
    for pr in [
        ImcProblem::partial(Side::Features(&x), Side::Features(&y), &o).unwrap(),
        ImcProblem::pu(Side::Identity(12), Side::Features(&y), &o, 0.7).unwrap(),
        ImcProblem::fully_observed(Side::Features(&x), Side::Identity(9), &o).unwrap(),
    ] {
        let (dx, dy) = pr.dims();
        let mut rng = seeded(3);
        let mut w = gaussian_mat(&mut rng, dx, 2, 1.0);
        let mut h = gaussian_mat(&mut rng, dy, 2, 1.0);
        let ws = ImcWorkspace::new(&pr);
        ws.w_step(0.2, h.as_ref(), w.as_mut(), &cg).unwrap();
        let g = ws.factor_gradients(0.2, w.as_ref(), h.as_ref()).unwrap();
        assert!(g.d_w.norm_l2() < 1e-8, "{}", g.d_w.norm_l2());
        ws.h_step(0.2, w.as_ref(), h.as_mut(), &cg).unwrap();
        let g = ws.factor_gradients(0.2, w.as_ref(), h.as_ref()).unwrap();
        assert!(g.d_h.norm_l2() < 1e-8, "{}", g.d_h.norm_l2());
    }
}

#[test]
fn residual_and_top_k() {
    let (x, y, o) = small_problem_data(3);
    let pr = ImcProblem::partial(Side::Features(&x), Side::Features(&y), &o).unwrap();
    let mut rng = seeded(4);
    let w = gaussian_mat(&mut rng, 5, 2, 1.0);
    let h = gaussian_mat(&mut rng, 4, 2, 1.0);
    let r = imc_residual(&pr, w.as_ref(), h.as_ref()).unwrap().unwrap();
    let full = x.to_dense() * &w * h.transpose() * y.to_dense().transpose();
    for ((i, j, a), r) in o.iter().zip(&r) {
        assert!((full[(i, j)] - a - r).abs() < 1e-12);
    }
    let model = ImcModel {
        w,
        h,
        objective_trace: vec![],
        iterations: 0,
        stop_reason: StopReason::MaxIterations,
    };
    let pairs = [(0, 0), (11, 8), (3, 4)];
    let pred = model
        .predict_entries(Side::Features(&x), Side::Features(&y), &pairs)
        .unwrap();
    for (&(i, j), p) in pairs.iter().zip(&pred) {
        assert!((full[(i, j)] - p).abs() < 1e-12);
    }
    assert!(
        model
            .predict_entries(Side::Features(&x), Side::Features(&y), &[(12, 0)])
            .is_err()
    );
    let scores = model
        .scores_for_rows(Side::Features(&x), Side::Features(&y))
        .unwrap();
    assert!((&scores - &full).norm_l2() < 1e-12);
    let top = model
        .top_k_for_rows(Side::Features(&x), Side::Features(&y), 3)
        .unwrap();
    for (i, t) in top.iter().enumerate() {
        let mut want: Vec<usize> = (0..9).collect();
        want.sort_by(|&a, &b| full[(i, b)].total_cmp(&full[(i, a)]));
        assert_eq!(t, &want[..3]);
    }
    assert_eq!(
        top_indices(vec![1.0, f64::NAN, 3.0, 3.0], 4),
        vec![2, 3, 0, 1]
    );
}

#[test]
fn parameter_errors() {
    let (x, y, o) = small_problem_data(5);
    let mut p = ImcParams::default().with_rank(0);
    assert!(p.check().is_err());
    p.rank = 2;
    p.lambda = -1.0;
    assert!(p.check().is_err());
    p.lambda = f64::NAN;
    assert!(p.check().is_err());
    p.lambda = 0.1;
    p.tol = f64::NAN;
    assert!(p.check().is_err());
    p.tol = 0.0;
    let vp = p.check().unwrap();
    let pr = ImcProblem::partial(Side::Features(&x), Side::Features(&y), &o).unwrap();
    let mut rng = seeded(1);
    for rank in [4, 5] {
        let bad = p.with_rank(rank).check().unwrap();
        let e = fit_imc(&pr, &bad, ImcStart::Draw(&mut rng), &mut NoObserver).unwrap_err();
        assert!(e.is_parameter_error(), "{e}");
    }
    let e = fit_imc(
        &pr,
        &vp,
        ImcStart::Warm(Mat::zeros(5, 2), Mat::zeros(3, 2)),
        &mut NoObserver,
    )
    .unwrap_err();
    assert!(matches!(e, SolverError::DimensionMismatch { .. }));
    let empty = Observed::from_triplets(12, 9, &[], &[], &[]).unwrap();
    assert!(matches!(
        ImcProblem::partial(Side::Features(&x), Side::Features(&y), &empty),
        Err(SolverError::Empty(_))
    ));
    assert!(ImcProblem::partial(Side::Features(&y), Side::Features(&y), &o).is_err());
    assert!(ImcProblem::partial(Side::Features(&x), Side::Identity(8), &o).is_err());
    assert!(ImcProblem::pu(Side::Features(&x), Side::Features(&y), &o, 0.0).is_err());
    assert!(ImcProblem::pu(Side::Features(&x), Side::Features(&y), &o, 1.5).is_err());
    assert!(PuImcParams::default().with_alpha(f64::NAN).check().is_err());
}

#[test]
fn imc_and_pu_imc_check_refuse_each_bad_field() {
    let p = ImcParams::default();
    let v = p.check().unwrap();
    assert_eq!(**v.valid_cg(), p.cg);
    assert_eq!(refused(p.with_rank(0).check()), "rank");
    for bad in [-1.0, f64::NAN, f64::INFINITY] {
        assert_eq!(refused(p.with_lambda(bad).check()), "lambda");
        assert_eq!(refused(p.with_tol(bad).check()), "tol");
        let cg = CgParams::default().with_tol(bad);
        assert_eq!(refused(p.with_cg(cg).check()), "cg.tol");
    }
    let set = p
        .with_rank(3)
        .with_lambda(0.0)
        .with_max_outer(0)
        .with_tol(0.0)
        .with_cg(CgParams::default().with_tol(1e-9).with_max_iter(0))
        .with_init(ImcInit::Random)
        .check()
        .unwrap();
    assert_eq!(
        (set.rank, set.lambda, set.max_outer, set.tol, set.init),
        (3, 0.0, 0, 0.0, ImcInit::Random)
    );
    assert_eq!((set.valid_cg().tol, set.valid_cg().max_iter), (1e-9, 0));

    let pu = PuImcParams::default();
    assert_eq!(pu.check().unwrap().alpha(), 0.75);
    assert_eq!(refused(pu.with_imc(p.with_rank(0)).check()), "rank");
    let cg = CgParams::default().with_tol(-1.0);
    assert_eq!(refused(pu.with_imc(p.with_cg(cg)).check()), "cg.tol");
    for alpha in [0.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
        assert_eq!(refused(pu.with_alpha(alpha).check()), "alpha");
    }
    let v = pu.with_imc(p.with_rank(4)).with_alpha(1.0).check().unwrap();
    assert_eq!((v.imc().rank, v.alpha()), (4, 1.0));
}
