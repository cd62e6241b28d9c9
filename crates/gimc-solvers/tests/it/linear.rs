//! The linear toolbox: closed-form regressions against brute force, SVM and logistic regression
//! accuracy floors and monotone objectives.

use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{GimcRng, gaussian_mat, seeded};
use gimc_linalg::sparse::dense_to_csr;
use gimc_linalg::{FeatureMatrix, Observed};
use gimc_solvers::linear::logistic::{LogisticParams, fit_logistic, fit_logistic_binary};
use gimc_solvers::linear::regression::{
    ReducedRank, RidgeParams, RidgeSystem, bilinear_regression, fit_ridge, reduced_rank_regression,
    regression_loss,
};
use gimc_solvers::linear::svm::{
    NewtonSvmParams, SvmLoss, SvmParams, fit_linear_svm, fit_linear_svm_binary,
};
use gimc_solvers::linear::{BinaryData, ClassData, LinearClassifier, Targets};
use gimc_solvers::{NoObserver, Trace};
use rand::Rng;

fn solve(a: &Mat<f64>, b: &Mat<f64>) -> Mat<f64> {
    gimc_linalg::cholesky_solve(a.as_ref(), b.as_ref()).unwrap()
}

/// Best objective of alternating least squares over rank-k factors X = P Qᵀ of
/// min ‖A P Qᵀ Bᵀ − T‖² (B = I for reduced-rank regression), from several random starts.
fn brute_force_bilinear(
    a: &Mat<f64>,
    b: &Mat<f64>,
    t: &Mat<f64>,
    k: usize,
    rng: &mut GimcRng,
) -> f64 {
    let ata = a.transpose() * a;
    let btb = b.transpose() * b;
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let mut q = gaussian_mat(rng, b.ncols(), k, 1.0);
        let mut p = Mat::<f64>::zeros(a.ncols(), k);
        for _ in 0..2000 {
            let c = b * &q;
            p = solve(&ata, &(a.transpose() * t * &c))
                * solve(&(c.transpose() * &c), &Mat::identity(k, k));
            let d = a * &p;
            q = solve(&btb, &(b.transpose() * t.transpose() * &d))
                * solve(&(d.transpose() * &d), &Mat::identity(k, k));
        }
        let f = (a * &p * q.transpose() * b.transpose() - t).squared_norm_l2();
        best = best.min(f);
    }
    best
}

/// Asserts that a closed-form objective `f` is no worse than the brute-force `brute` (to 1e-10
/// relative) and equal to it to 1e-7 relative.
fn assert_matches_brute_force(f: f64, brute: f64) {
    assert!(
        f <= brute * (1.0 + 1e-10),
        "closed form {f} vs brute force {brute}"
    );
    assert!(
        (f - brute).abs() < 1e-7 * brute,
        "closed form {f} vs brute force {brute}"
    );
}

fn singular_values(m: &Mat<f64>) -> Vec<f64> {
    gimc_linalg::thin_svd(m.as_ref()).unwrap().s
}

#[test]
fn reduced_rank_regression_matches_brute_force() {
    let mut rng = seeded(1);
    let (n, d, tc, k) = (40, 6, 5, 2);
    let a = gaussian_mat(&mut rng, n, d, 1.0);
    let t = &a * gaussian_mat(&mut rng, d, tc, 1.0) + gaussian_mat(&mut rng, n, tc, 0.5);
    let af = FeatureMatrix::dense(a.clone()).unwrap();
    let x = reduced_rank_regression(&af, Targets::Dense(t.as_ref()), k).unwrap();
    assert_eq!(x.shape(), (d, tc));
    let s = singular_values(&x);
    assert!(s[k] < 1e-10 * s[0], "rank of X*: {s:?}");
    let f = regression_loss(&af, x.as_ref(), Targets::Dense(t.as_ref())).unwrap();
    let brute = brute_force_bilinear(&a, &Mat::identity(tc, tc), &t, k, &mut rng);
    assert_matches_brute_force(f, brute);
    // the classical form: OLS solution projected on the top-k right singular vectors of A·B_ols
    let b_ols = solve(&(a.transpose() * &a), &(a.transpose() * &t));
    let v = gimc_linalg::thin_svd((&a * &b_ols).as_ref()).unwrap().v;
    let vk = v.as_ref().subcols(0, k);
    let x2 = &b_ols * vk * vk.transpose();
    assert!((&x - &x2).norm_l2() < 1e-9 * x2.norm_l2());
    // full rank = least squares
    let x_full = reduced_rank_regression(&af, Targets::Dense(t.as_ref()), tc).unwrap();
    assert!((&x_full - &b_ols).norm_l2() < 1e-9 * b_ols.norm_l2());
    // rank errors
    assert!(reduced_rank_regression(&af, Targets::Dense(t.as_ref()), 0).is_err());
    assert!(reduced_rank_regression(&af, Targets::Dense(t.as_ref()), tc + 1).is_err());
}

#[test]
fn reduced_rank_regression_with_an_intercept_recovers_offset_low_rank_targets() {
    // T = A B + 1cᵀ with B of rank 2, on features far from centred: the intercept takes the
    // offset and the weights are B at rank 2, for dense and sparse targets alike
    let mut rng = seeded(3);
    let (n, d, tc) = (60, 5, 4);
    let a = Mat::from_fn(n, d, |i, j| 3.0 + ((i * 7 + j * 5) % 11) as f64 / 4.0)
        + gaussian_mat(&mut rng, n, d, 0.3);
    let b = gaussian_mat(&mut rng, d, 2, 1.0) * gaussian_mat(&mut rng, 2, tc, 1.0);
    let c = [0.5, -1.0, 2.0, 0.0];
    let t = Mat::from_fn(n, tc, |i, j| (&a * &b)[(i, j)] + c[j]);
    let af = FeatureMatrix::dense(a.clone()).unwrap();
    let fit = ReducedRank::new(&af, Targets::Dense(t.as_ref()), true)
        .unwrap()
        .fit(2)
        .unwrap();
    assert!((&fit.w - &b).norm_max() < 1e-9, "{:?}", fit.w);
    for (got, want) in fit.intercept.iter().zip(c) {
        assert!((got - want).abs() < 1e-9, "{got} vs {want}");
    }
    let omega = Observed::from_csr(&dense_to_csr(t.as_ref()).unwrap()).unwrap();
    let sparse = ReducedRank::new(&af, Targets::Sparse(&omega), true)
        .unwrap()
        .fit(2)
        .unwrap();
    assert!((&sparse.w - &fit.w).norm_max() < 1e-9);
    // without the intercept the offset is lost
    let plain = ReducedRank::new(&af, Targets::Dense(t.as_ref()), false)
        .unwrap()
        .fit(2)
        .unwrap();
    assert!(plain.intercept.iter().all(|&v| v == 0.0));
    assert!((&plain.w - &b).norm_max() > 1e-3);
}

#[test]
fn ridge_system_solves_the_centred_normal_equations_for_every_lambda() {
    // features far from centred and sparse 0/1 targets: one system serves a grid of λ, each
    // fit equal to a fresh fit_ridge, and with the intercept the residuals sum to zero per
    // target (the normal equation of the unpenalised intercept)
    let mut rng = seeded(8);
    let (n, d) = (40, 6);
    let a = Mat::from_fn(n, d, |i, j| 2.0 + ((i * 3 + j * 7) % 5) as f64)
        + gaussian_mat(&mut rng, n, d, 0.5);
    let t = Mat::<f64>::from_fn(n, 3, |i, j| f64::from(u8::from((i + j) % 3 == 0)));
    let omega = Observed::from_csr(&dense_to_csr(t.as_ref()).unwrap()).unwrap();
    let af = FeatureMatrix::dense(a.clone()).unwrap();
    let system = RidgeSystem::new(&af, Targets::Sparse(&omega), true).unwrap();
    for lambda in [0.01, 1.0, 100.0] {
        let fit = system.fit(lambda).unwrap();
        let p = RidgeParams::default()
            .with_lambda(lambda)
            .with_fit_intercept(true)
            .check()
            .unwrap();
        assert_eq!(fit, fit_ridge(&af, Targets::Dense(t.as_ref()), &p).unwrap());
        let residual = fit.predict(&af).unwrap() - &t;
        for j in 0..3 {
            let sum: f64 = (0..n).map(|i| residual[(i, j)]).sum();
            assert!(
                sum.abs() < 1e-9,
                "λ = {lambda}: residuals of target {j} sum to {sum}"
            );
        }
        // (XᵀX_c + λI)W = XᵀT_c: the gradient of the penalised loss vanishes at W
        let xc = Mat::from_fn(n, d, |i, j| {
            a[(i, j)] - (0..n).map(|r| a[(r, j)]).sum::<f64>() / n as f64
        });
        let grad = xc.transpose() * &residual + &fit.w * gimc_linalg::faer::Scale(lambda);
        assert!(
            grad.norm_max() < 1e-8,
            "λ = {lambda}: gradient {}",
            grad.norm_max()
        );
    }
    assert!(system.fit(-1.0).is_err());
    assert!(RidgeSystem::new(&af, Targets::Dense(t.subrows(0, 5)), true).is_err());
}

#[test]
fn bilinear_regression_matches_brute_force_dense_and_sparse_targets() {
    let mut rng = seeded(2);
    let (n, m, da, db, k) = (30, 25, 5, 4, 2);
    let a = gaussian_mat(&mut rng, n, da, 1.0);
    let b = gaussian_mat(&mut rng, m, db, 1.0);
    // a 0/1 target, kept sparse in one of the two calls
    let score = &a * gaussian_mat(&mut rng, da, db, 1.0) * b.transpose();
    let t = Mat::<f64>::from_fn(n, m, |i, j| if score[(i, j)] > 0.5 { 1.0 } else { 0.0 });
    let ts = Observed::from_csr(&dense_to_csr(t.as_ref()).unwrap()).unwrap();
    let (af, bf) = (
        FeatureMatrix::dense(a.clone()).unwrap(),
        FeatureMatrix::dense(b.clone()).unwrap(),
    );
    let x = bilinear_regression(&af, &bf, Targets::Dense(t.as_ref()), k).unwrap();
    let xs = bilinear_regression(&af, &bf, Targets::Sparse(&ts), k).unwrap();
    assert!((&x - &xs).norm_l2() < 1e-10 * x.norm_l2());
    assert_eq!(x.shape(), (da, db));
    let f = (&a * &x * b.transpose() - &t).squared_norm_l2();
    let brute = brute_force_bilinear(&a, &b, &t, k, &mut rng);
    assert_matches_brute_force(f, brute);
    assert!(bilinear_regression(&af, &bf, Targets::Dense(t.as_ref()), 5).is_err());
    assert!(bilinear_regression(&af, &af, Targets::Dense(t.as_ref()), 2).is_err());
}

/// Gaussian blobs: class c centred at sep·e_c (plus a shared offset), unit noise; a fraction
/// `flip` of the labels replaced by a random class. With sep = 4 two classes are ~99.8 %
/// separable (Bayes error Φ(−2√2)).
fn blobs(
    rng: &mut GimcRng,
    n: usize,
    d: usize,
    classes: usize,
    flip: f64,
    sep: f64,
) -> (Mat<f64>, Vec<usize>) {
    let noise = gaussian_mat(rng, n, d, 1.0);
    let labels: Vec<usize> = (0..n).map(|i| i % classes).collect();
    let x = Mat::from_fn(n, d, |i, j| {
        noise[(i, j)] + if j == labels[i] { sep } else { 0.0 } + 0.3
    });
    let labels = labels
        .into_iter()
        .map(|l| {
            if rng.random::<f64>() < flip {
                rng.random_range(0..classes)
            } else {
                l
            }
        })
        .collect();
    (x, labels)
}

/// A training set of `n` blob rows (labels flipped at `flip`) and then a test set of `n_test`
/// rows (no flips) from the same blobs, both as dense features.
fn train_test_blobs(
    rng: &mut GimcRng,
    (n, n_test): (usize, usize),
    d: usize,
    classes: usize,
    flip: f64,
    sep: f64,
) -> (FeatureMatrix, Vec<usize>, FeatureMatrix, Vec<usize>) {
    let (xtr, ltr) = blobs(rng, n, d, classes, flip, sep);
    let (xte, lte) = blobs(rng, n_test, d, classes, 0.0, sep);
    (
        FeatureMatrix::dense(xtr).unwrap(),
        ltr,
        FeatureMatrix::dense(xte).unwrap(),
        lte,
    )
}

fn accuracy(model: &LinearClassifier, x: &FeatureMatrix, labels: &[usize]) -> f64 {
    let p = model.predict(x).unwrap();
    p.iter().zip(labels).filter(|(a, b)| a == b).count() as f64 / labels.len() as f64
}

fn non_increasing(trace: &[f64]) -> bool {
    trace
        .windows(2)
        .all(|w| w[1] <= w[0] + 1e-12 * w[0].abs().max(1.0))
}

/// Binary SVM parameters: C, the loss and the stopping tolerance.
fn svm(c: f64, loss: SvmLoss, eps: f64) -> SvmParams {
    SvmParams::default().with_c(c).with_loss(loss).with_eps(eps)
}

/// Asserts that a dual coordinate-descent `trace` never increased its dual objective, and that
/// weak duality holds at its last record with the gap closed to below `rel` · P(w).
fn assert_dual_converged(trace: &Trace, loss: SvmLoss, rel: f64) {
    assert!(
        non_increasing(&trace.objectives()),
        "{loss:?}: dual objective increased"
    );
    // weak duality P(w) ≥ −D(α), and the gap closes at convergence
    let last = trace.records.last().unwrap();
    let primal = last.extra("primal").unwrap();
    let gap = primal + last.objective;
    assert!(
        gap >= -1e-9 && gap < rel * primal,
        "{loss:?}: duality gap {gap}, primal {primal}"
    );
}

#[test]
fn linear_svm_accuracy_duality_and_monotone_dual() {
    let mut rng = seeded(3);
    let (xtr, ltr, xte, lte) = train_test_blobs(&mut rng, (400, 200), 10, 2, 0.0, 4.0);
    for loss in [SvmLoss::Hinge, SvmLoss::SquaredHinge] {
        let params = svm(1.0, loss, 1e-4).check().unwrap();
        let y: Vec<bool> = ltr.iter().map(|&l| l == 1).collect();
        let mut trace = Trace::new();
        let model = fit_linear_svm_binary(
            BinaryData { x: &xtr, y: &y },
            &params,
            &mut seeded(4),
            &mut trace,
        )
        .unwrap();
        let acc = accuracy(&model, &xte, &lte);
        assert!(acc >= 0.97, "{loss:?}: test accuracy {acc}");
        assert_dual_converged(&trace, loss, 1e-3);
    }
}

#[test]
fn linear_svm_shrinking_reaches_the_full_problem_optimum_at_large_c() {
    // Overlapping classes and a large C: many α_i stay at 0 and get shrunk; the run must still
    // stop only when the whole problem meets the criterion, so the duality gap closes.
    let mut rng = seeded(8);
    let (x, l) = blobs(&mut rng, 600, 10, 2, 0.1, 1.5);
    let x = FeatureMatrix::dense(x).unwrap();
    let y: Vec<bool> = l.iter().map(|&c| c == 1).collect();
    for loss in [SvmLoss::Hinge, SvmLoss::SquaredHinge] {
        let params = svm(10.0, loss, 1e-2)
            .with_max_epochs(20_000)
            .check()
            .unwrap();
        let mut trace = Trace::new();
        fit_linear_svm_binary(
            BinaryData { x: &x, y: &y },
            &params,
            &mut seeded(9),
            &mut trace,
        )
        .unwrap();
        assert!(
            non_increasing(&trace.objectives()),
            "{loss:?}: dual increased"
        );
        let shrunk = trace
            .records
            .iter()
            .filter_map(|r| r.extra("active"))
            .any(|a| a < 600.0);
        assert!(shrunk, "{loss:?}: shrinking never set a coordinate aside");
        let last = trace.records.last().unwrap();
        assert_eq!(
            last.extra("active"),
            Some(600.0),
            "{loss:?}: stopped on a shrunk set after {} epochs, gap {:?}",
            trace.records.len(),
            last.extra("pg_gap")
        );
        assert_dual_converged(&trace, loss, 1e-2);
    }
}

#[test]
fn l2svm_primal_newton_matches_dual_coordinate_descent() {
    // The same squared-hinge primal solved two ways: the objectives agree at the optimum for a
    // small and a large C, and the warm start from another C converges to the same point.
    let mut rng = seeded(12);
    let (x, l) = blobs(&mut rng, 300, 6, 2, 0.1, 2.0);
    let y: Vec<bool> = l.iter().map(|&c| c == 1).collect();
    let primal = |w: &[f64], c: f64| {
        let loss: f64 = (0..300)
            .map(|i| {
                let m: f64 = (0..6).map(|j| x[(i, j)] * w[j]).sum::<f64>() + w[6];
                let s = (1.0 - if y[i] { m } else { -m }).max(0.0);
                s * s
            })
            .sum();
        0.5 * w.iter().map(|v| v * v).sum::<f64>() + c * loss
    };
    let xf = FeatureMatrix::dense(x.clone()).unwrap();
    let mut warm: Option<Vec<f64>> = None;
    for c in [0.01, 1.0, 1e4] {
        let newton_params = NewtonSvmParams {
            c,
            bias: Some(1.0),
            tol: 1e-10,
            max_iter: 100,
        };
        let newton =
            gimc_solvers::linear::svm::l2svm_primal_newton(x.as_ref(), &y, &newton_params, None)
                .unwrap();
        let params = SvmParams::default()
            .with_c(c)
            .with_eps(1e-6)
            .with_max_epochs(200_000)
            .check()
            .unwrap();
        let dual = fit_linear_svm_binary(
            BinaryData { x: &xf, y: &y },
            &params,
            &mut seeded(13),
            &mut NoObserver,
        )
        .unwrap();
        let mut wd: Vec<f64> = (0..6).map(|j| dual.w[(j, 0)]).collect();
        wd.push(dual.bias[0]);
        let (pn, pd) = (primal(&newton, c), primal(&wd, c));
        assert!(
            pn <= pd * (1.0 + 1e-6),
            "C={c}: Newton {pn} above dual CD {pd}"
        );
        if c <= 1.0 {
            // (at C = 10^4 dual CD is still far from its optimum after 200,000 epochs — the
            // reason for the Newton solver — so only the optimality test below applies there)
            assert!(
                pd <= pn * (1.0 + 1e-4),
                "C={c}: dual CD {pd} far above Newton {pn}"
            );
        }
        // first-order optimality: ∇f(w) = w − 2C Σ_i y_i s_i x̃_i ≈ 0 (s_i the positive slacks)
        let mut grad = newton.clone();
        let mut scale = 0.0f64;
        for i in 0..300 {
            let xi: Vec<f64> = (0..6).map(|j| x[(i, j)]).chain([1.0]).collect();
            let m: f64 = xi.iter().zip(&newton).map(|(a, b)| a * b).sum();
            let yi = if y[i] { 1.0 } else { -1.0 };
            let s = (1.0 - yi * m).max(0.0);
            for (g, v) in grad.iter_mut().zip(&xi) {
                *g -= 2.0 * c * yi * s * v;
                scale = scale.max((2.0 * c * v).abs());
            }
        }
        let gnorm = grad.iter().map(|g| g * g).sum::<f64>().sqrt();
        assert!(gnorm <= 1e-6 * scale * 300.0, "C={c}: gradient {gnorm}");
        if let Some(w0) = &warm {
            let warmed = gimc_solvers::linear::svm::l2svm_primal_newton(
                x.as_ref(),
                &y,
                &newton_params,
                Some(w0),
            )
            .unwrap();
            assert!(
                (primal(&warmed, c) - pn).abs() <= 1e-9 * pn,
                "C={c}: warm start"
            );
        }
        warm = Some(newton);
    }
}

#[test]
fn linear_svm_multiclass_sparse_equals_dense_and_nearly_separable() {
    let mut rng = seeded(5);
    let (xtr, ltr) = blobs(&mut rng, 600, 8, 3, 0.05, 3.0);
    let (xte, lte) = blobs(&mut rng, 300, 8, 3, 0.0, 3.0);
    let mut xsp = xtr.clone();
    for i in 0..xsp.nrows() {
        for j in 0..xsp.ncols() {
            if xsp[(i, j)].abs() < 0.5 {
                xsp[(i, j)] = 0.0;
            }
        }
    }
    let xd = FeatureMatrix::dense(xsp.clone()).unwrap();
    let xs = FeatureMatrix::sparse(dense_to_csr(xsp.as_ref()).unwrap()).unwrap();
    let xtr = FeatureMatrix::dense(xtr).unwrap();
    let xte = FeatureMatrix::dense(xte).unwrap();
    let params = SvmParams::default().check().unwrap();
    let mut trace = Trace::new();
    let model = fit_linear_svm(
        ClassData {
            x: &xtr,
            labels: &ltr,
            n_classes: 3,
        },
        &params,
        &mut seeded(6),
        &mut trace,
    )
    .unwrap();
    assert_eq!(model.w.shape(), (8, 3));
    let acc = accuracy(&model, &xte, &lte);
    assert!(acc >= 0.93, "multi-class test accuracy {acc}");
    for c in 0..3 {
        let tr: Vec<f64> = trace
            .records
            .iter()
            .filter(|r| r.extra("class") == Some(c as f64))
            .map(|r| r.objective)
            .collect();
        assert!(tr.len() >= 2 && non_increasing(&tr));
    }
    // sparse rows give the same classifier as their dense copy (same seed, same visiting order)
    let fit = |x: &FeatureMatrix| {
        let data = ClassData {
            x,
            labels: &ltr,
            n_classes: 3,
        };
        fit_linear_svm(data, &params, &mut seeded(7), &mut NoObserver).unwrap()
    };
    let (md, ms) = (fit(&xd), fit(&xs));
    let (sd, ss) = (
        md.decision_function(&xd).unwrap(),
        ms.decision_function(&xs).unwrap(),
    );
    assert!((&sd - &ss).norm_l2() < 1e-8 * sd.norm_l2());
    // determinism: the same seed gives the same model
    let md2 = fit(&xd);
    assert_eq!(md, md2);
}

#[test]
fn logistic_regression_accuracy_and_monotone_objective() {
    let mut rng = seeded(8);
    let (xtr, ltr, xte, lte) = train_test_blobs(&mut rng, (400, 200), 10, 2, 0.05, 4.0);
    let params = LogisticParams::default().check().unwrap();
    let y: Vec<bool> = ltr.iter().map(|&l| l == 1).collect();
    let mut trace = Trace::new();
    let model = fit_logistic_binary(BinaryData { x: &xtr, y: &y }, &params, &mut trace).unwrap();
    let acc = accuracy(&model, &xte, &lte);
    assert!(acc >= 0.95, "test accuracy {acc}");
    let obj = trace.objectives();
    assert!(
        obj.windows(2).all(|w| w[1] <= w[0]),
        "objective increased: {obj:?}"
    );
    assert!(
        obj.len() <= 20,
        "Newton should converge in a few steps: {}",
        obj.len()
    );
    // optimality: ∇ = w + C Σ (σ(y z) − 1) y x vanishes (checked by finite differences of the
    // objective along the coordinate axes through the bias-augmented weights)
    let f = |w: &Mat<f64>, b: f64| -> f64 {
        let z = xtr.mul_dense(w.as_ref()).unwrap();
        let loss: f64 = (0..z.nrows())
            .map(|i| {
                let m = if y[i] { 1.0 } else { -1.0 } * (z[(i, 0)] + b);
                (1.0 + (-m).exp()).ln()
            })
            .sum();
        0.5 * (w.squared_norm_l2() + b * b) + loss
    };
    let (w, b) = (model.w.clone(), model.bias[0]);
    for j in 0..3 {
        let mut wp = w.clone();
        wp[(j, 0)] += 1e-5;
        let mut wm = w.clone();
        wm[(j, 0)] -= 1e-5;
        let g = (f(&wp, b) - f(&wm, b)) / 2e-5;
        assert!(g.abs() < 1e-4, "gradient component {j}: {g}");
    }
    // multi-class one-vs-rest
    let (x3, l3, x3t, l3t) = train_test_blobs(&mut rng, (450, 300), 6, 3, 0.0, 3.0);
    let m3 = fit_logistic(
        ClassData {
            x: &x3,
            labels: &l3,
            n_classes: 3,
        },
        &params,
        &mut NoObserver,
    )
    .unwrap();
    let acc3 = accuracy(&m3, &x3t, &l3t);
    assert!(acc3 >= 0.93, "multi-class accuracy {acc3}");
}
