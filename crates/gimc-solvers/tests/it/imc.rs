//! IMC by ALS + CG: recovery, monotone objective, fully-observed fast path = general path.

use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{gaussian_mat, seeded};
use gimc_linalg::sparse::dense_to_csr;
use gimc_linalg::{CgParams, FeatureMatrix, Observed};
use gimc_solvers::{
    ImcInit, ImcParams, ImcProblem, ImcStart, NoObserver, Side, Trace, fit_imc, imc_objective,
};
use proptest::prelude::*;

use crate::common::{observe, planted_imc, random_pairs};

#[test]
fn imc_recovers_planted_low_rank_with_gaussian_features() {
    let (n, d, k) = (200, 20, 4);
    let pl = planted_imc(n, d, k, 1);
    let mut rng = seeded(2);
    let pairs = random_pairs(&mut rng, n, n, 2000);
    let omega = observe(&pl.a, &pairs);
    let problem = pl.problem(&omega);
    let params = ImcParams::default()
        .with_rank(k)
        .with_lambda(1e-8)
        .with_max_outer(100)
        .with_tol(1e-15)
        .with_cg(CgParams::default().with_tol(1e-10).with_max_iter(200))
        .with_init(ImcInit::Spectral)
        .check()
        .unwrap();
    let mut trace = Trace::new();
    let model = fit_imc(&problem, &params, ImcStart::Draw(&mut rng), &mut trace).unwrap();
    let err = pl.rel_err_of(&model);
    assert!(
        err < 1e-3,
        "relative error {err}, {} iterations",
        model.iterations
    );
    assert_eq!(trace.records.len(), model.iterations + 1);
    assert!(trace.records[1].extra("cg_iters_w").is_some());
}

/// Same iterations from the same start: Φᵀ P_Ω((ΦS)Qᵀ) Q with Ω = all entries equals the Gram
/// form (ΦᵀΦ) S (QᵀQ), so both paths give the same W, H.
#[test]
fn fully_observed_fast_path_equals_general_path() {
    let mut rng = seeded(7);
    let (n, m, dx, dy, k) = (30, 25, 6, 5, 3);
    let x = FeatureMatrix::dense(gaussian_mat(&mut rng, n, dx, 1.0)).unwrap();
    let y = FeatureMatrix::dense(gaussian_mat(&mut rng, m, dy, 1.0)).unwrap();
    // a sparse 0/1 target, as in multi-label data
    let a = Mat::<f64>::from_fn(
        n,
        m,
        |i, j| if (i * 7 + j * 3) % 5 == 0 { 1.0 } else { 0.0 },
    );
    let nonzeros = Observed::from_csr(&dense_to_csr(a.as_ref()).unwrap()).unwrap();
    let all = Observed::full_from_dense(a.as_ref()).unwrap();
    let cg = CgParams::default().with_tol(1e-13).with_max_iter(1000);
    for psi_identity in [false, true] {
        let psi = if psi_identity {
            Side::Identity(m)
        } else {
            Side::Features(&y)
        };
        let full = ImcProblem::fully_observed(Side::Features(&x), psi, &nonzeros).unwrap();
        let general = ImcProblem::partial(Side::Features(&x), psi, &all).unwrap();
        let dy_eff = psi.dim();
        let w0 = gaussian_mat(&mut rng, dx, k, 1.0);
        let h0 = gaussian_mat(&mut rng, dy_eff, k, 1.0);
        let params = ImcParams::default()
            .with_rank(k)
            .with_lambda(0.3)
            .with_max_outer(6)
            .with_tol(0.0)
            .with_cg(cg)
            .with_init(ImcInit::Random)
            .check()
            .unwrap();
        let mf = fit_imc(
            &full,
            &params,
            ImcStart::Warm(w0.clone(), h0.clone()),
            &mut NoObserver,
        )
        .unwrap();
        let mg = fit_imc(&general, &params, ImcStart::Warm(w0, h0), &mut NoObserver).unwrap();
        assert_eq!(mf.iterations, 6);
        assert_eq!(mg.iterations, 6);
        let dw = (&mf.w - &mg.w).norm_l2() / mg.w.norm_l2();
        let dh = (&mf.h - &mg.h).norm_l2() / mg.h.norm_l2();
        assert!(
            dw < 1e-9 && dh < 1e-9,
            "psi identity {psi_identity}: dW {dw}, dH {dh}"
        );
        for (a, b) in mf.objective_trace.iter().zip(&mg.objective_trace) {
            assert!((a - b).abs() < 1e-9 * b.abs().max(1.0), "{a} vs {b}");
        }
        // and the objectives agree as functions too
        let fa = imc_objective(&full, 0.3, mf.w.as_ref(), mf.h.as_ref()).unwrap();
        let fb = imc_objective(&general, 0.3, mf.w.as_ref(), mf.h.as_ref()).unwrap();
        assert!((fa - fb).abs() < 1e-10 * fb.abs().max(1.0));
    }
}

/// Sparse features give the same fit as their dense copy.
#[test]
fn sparse_features_match_dense_features() {
    let mut rng = seeded(11);
    let (n, m, d) = (40, 30, 8);
    let mut xd = gaussian_mat(&mut rng, n, d, 1.0);
    for i in 0..n {
        for j in 0..d {
            if (i + 3 * j) % 3 != 0 {
                xd[(i, j)] = 0.0;
            }
        }
    }
    let xs = FeatureMatrix::sparse(dense_to_csr(xd.as_ref()).unwrap()).unwrap();
    let xd = FeatureMatrix::dense(xd).unwrap();
    let a = gaussian_mat(&mut rng, n, m, 1.0);
    let omega = observe(&a, &random_pairs(&mut rng, n, m, 500));
    let params = ImcParams::default()
        .with_rank(3)
        .with_lambda(0.5)
        .with_max_outer(4)
        .with_tol(0.0)
        .with_cg(CgParams::default().with_tol(1e-12).with_max_iter(500))
        .with_init(ImcInit::Spectral)
        .check()
        .unwrap();
    let pd = ImcProblem::partial(Side::Features(&xd), Side::Identity(m), &omega).unwrap();
    let ps = ImcProblem::partial(Side::Features(&xs), Side::Identity(m), &omega).unwrap();
    let md = fit_imc(
        &pd,
        &params,
        ImcStart::Draw(&mut seeded(5)),
        &mut NoObserver,
    )
    .unwrap();
    let ms = fit_imc(
        &ps,
        &params,
        ImcStart::Draw(&mut seeded(5)),
        &mut NoObserver,
    )
    .unwrap();
    assert!((&md.w - &ms.w).norm_l2() < 1e-8 * md.w.norm_l2());
    assert!((&md.h - &ms.h).norm_l2() < 1e-8 * md.h.norm_l2());
}

/// A fit whose sides are both wide and dense (D > n: the alternation runs in their row
/// spaces) ends where the same fit on the features stored sparse (no reduction) ends, from a
/// warm start with components outside the row spaces, with the same objective trace.
#[test]
fn row_space_fit_matches_the_full_dimensional_fit() {
    let mut rng = seeded(21);
    let (n, m, dx, dy, k) = (25, 20, 60, 45, 3);
    let x = gaussian_mat(&mut rng, n, dx, 1.0);
    let y = gaussian_mat(&mut rng, m, dy, 1.0);
    let (xd, yd) = (
        FeatureMatrix::dense(x.clone()).unwrap(),
        FeatureMatrix::dense(y.clone()).unwrap(),
    );
    let xs = FeatureMatrix::sparse(dense_to_csr(x.as_ref()).unwrap()).unwrap();
    let ys = FeatureMatrix::sparse(dense_to_csr(y.as_ref()).unwrap()).unwrap();
    let a = gaussian_mat(&mut rng, n, m, 1.0);
    let omega = observe(&a, &random_pairs(&mut rng, n, m, 200));
    let params = ImcParams::default()
        .with_rank(k)
        .with_lambda(0.3)
        .with_max_outer(6)
        .with_tol(0.0)
        .with_cg(CgParams::default().with_tol(1e-13).with_max_iter(2000))
        .check()
        .unwrap();
    let w0 = gaussian_mat(&mut rng, dx, k, 0.5);
    let h0 = gaussian_mat(&mut rng, dy, k, 0.5);
    let fit = |p: &ImcProblem<'_>| {
        let mut trace = Trace::default();
        let model = fit_imc(
            p,
            &params,
            ImcStart::Warm(w0.clone(), h0.clone()),
            &mut trace,
        )
        .unwrap();
        (model, trace)
    };
    let pd = ImcProblem::partial(Side::Features(&xd), Side::Features(&yd), &omega).unwrap();
    let ps = ImcProblem::partial(Side::Features(&xs), Side::Features(&ys), &omega).unwrap();
    let ((md, td), (ms, ts)) = (fit(&pd), fit(&ps));
    assert_eq!(md.objective_trace.len(), 7);
    for (fd, fs) in md.objective_trace.iter().zip(&ms.objective_trace) {
        assert!(
            (fd - fs).abs() <= 1e-9 * fs.abs(),
            "objective {fd} against {fs}"
        );
    }
    // the start is the warm start's full objective, outside parts included (the dense and
    // the sparse products differ in rounding only)
    let (f0, want) = (md.objective_trace[0], ms.objective_trace[0]);
    assert!(
        (f0 - want).abs() <= 1e-14 * want,
        "start {f0} against {want}"
    );
    assert!((&md.w - &ms.w).norm_l2() < 1e-8 * ms.w.norm_l2());
    assert!((&md.h - &ms.h).norm_l2() < 1e-8 * ms.h.norm_l2());
    assert_eq!(td.records.len(), ts.records.len());
}

fn side_for<'a>(kind: u8, f: &'a FeatureMatrix, f_sparse: &'a FeatureMatrix) -> Side<'a> {
    match kind {
        0 => Side::Identity(f.nrows()),
        1 => Side::Features(f),
        _ => Side::Features(f_sparse),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The ALS objective never increases, for every observation model and side type, even with
    /// CG capped at a few iterations.
    #[test]
    fn als_objective_never_increases(
        seed in 0u64..10_000,
        nx in 6usize..14,
        ny in 5usize..12,
        phi_kind in 0u8..3,
        psi_kind in 0u8..3,
        model in 0u8..3,
        cg_iters in 1usize..6,
        lambda in 0.01f64..1.0,
    ) {
        let mut rng = seeded(seed);
        let (dx, dy) = (4usize, 3usize);
        let make = |rng: &mut _, n: usize, d: usize| {
            let mut m = gaussian_mat(rng, n, d, 1.0);
            for i in 0..n { for j in 0..d { if (i + j) % 2 == 0 { m[(i, j)] *= 0.0; } } }
            let s = FeatureMatrix::sparse(dense_to_csr(m.as_ref()).unwrap()).unwrap();
            (FeatureMatrix::dense(m).unwrap(), s)
        };
        let (xd, xs) = make(&mut rng, nx, dx);
        let (yd, ys) = make(&mut rng, ny, dy);
        let a = gaussian_mat(&mut rng, nx, ny, 1.0);
        let count = (nx * ny) / 3 + 1;
        let omega = observe(&a, &random_pairs(&mut rng, nx, ny, count));
        let phi = side_for(phi_kind, &xd, &xs);
        let psi = side_for(psi_kind, &yd, &ys);
        let problem = match model {
            0 => ImcProblem::partial(phi, psi, &omega).unwrap(),
            1 => ImcProblem::fully_observed(phi, psi, &omega).unwrap(),
            _ => ImcProblem::pu(phi, psi, &omega, 0.7).unwrap(),
        };
        let params = ImcParams::default()
            .with_rank(2)
            .with_lambda(lambda)
            .with_max_outer(8)
            .with_tol(0.0)
            .with_cg(CgParams::default().with_tol(1e-12).with_max_iter(cg_iters))
            .with_init(ImcInit::Random)
            .check()
            .unwrap();
        let model = fit_imc(&problem, &params, ImcStart::Draw(&mut rng), &mut NoObserver).unwrap();
        for w in model.objective_trace.windows(2) {
            prop_assert!(w[1] <= w[0] + 1e-10 * w[0].abs().max(1.0), "{} -> {}", w[0], w[1]);
        }
    }
}
