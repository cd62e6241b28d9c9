//! The conformance suite of `gimc-featmap` run on [`LaplaceFourier`] against an exact Laplacian
//! kernel matrix computed here, plus the map's own contracts: the scale convention of the
//! Cauchy directions, the reference formula, the family, and errors instead of panics.
//!
//! `cargo test -p custom-map -- --nocapture` prints the measured values.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

use custom_map::{LaplaceFamily, LaplaceFourier};
use gimc_featmap::conformance::{
    BackwardConfig, ConformanceConfig, KernelApproxConfig, KernelApproxReport, check_backward,
    check_kernel_approximation, run_all_learnable,
};
use gimc_featmap::{FeatMapError, FeatureMap, LearnableMap, MapFamily};
use gimc_linalg::dense::frob_dot;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{GimcRng, gaussian_mat, seeded};
use gimc_linalg::sparse::dense_to_csr;
use gimc_linalg::{FeatureMatrix, LinalgError};
use rand::Rng;

/// γ of the kernel exp(−γ‖x − y‖₁) in the tests: with entries in [−1, 1] at density 0.5 and
/// d = 6, ‖x − y‖₁ is about 2, so the kernel values spread over (0, 1).
const GAMMA: f64 = 0.5;

/// The same random n × d matrix (entries uniform in [−1, 1], about `density` of them
/// non-zero, every row with at least one non-zero) as dense and as sparse CSR.
fn data_pair(seed: u64, n: usize, d: usize, density: f64) -> (FeatureMatrix, FeatureMatrix) {
    let mut rng = seeded(seed);
    let mut x = Mat::<f64>::zeros(n, d);
    for i in 0..n {
        for j in 0..d {
            if rng.random_bool(density) {
                x[(i, j)] = rng.random_range(-1.0..1.0);
            }
        }
        if (0..d).all(|j| x[(i, j)] == 0.0) {
            let j = rng.random_range(0..d);
            x[(i, j)] = rng.random_range(0.1..1.0);
        }
    }
    let sparse = FeatureMatrix::sparse(dense_to_csr(x.as_ref()).unwrap()).unwrap();
    (FeatureMatrix::dense(x).unwrap(), sparse)
}

/// The exact Laplacian kernel matrix K_ik = exp(−γ‖x_i − y_k‖₁), computed directly.
fn laplacian_kernel_matrix(x: &FeatureMatrix, y: &FeatureMatrix, gamma: f64) -> Mat<f64> {
    let (a, b) = (x.to_dense(), y.to_dense());
    Mat::from_fn(a.nrows(), b.nrows(), |i, k| {
        let l1: f64 = (0..a.ncols()).map(|j| (a[(i, j)] - b[(k, j)]).abs()).sum();
        (-gamma * l1).exp()
    })
}

/// The suite's settings: size m = 8 for shapes, determinism and backward; kernel error at
/// m = 16 … 1024 (D = 32 … 2048), 4 trials each, slope of the mean error in [−0.65, −0.35].
fn suite_config(exact: Mat<f64>) -> ConformanceConfig {
    ConformanceConfig::new(8, 11).with_kernel(
        exact,
        KernelApproxConfig::new(vec![16, 64, 256, 1024])
            .with_trials(4)
            .with_slope(-0.65, -0.35),
    )
}

/// A map factory as the kernel-approximation check takes it.
type MakeMap = fn(usize, &mut GimcRng) -> gimc_featmap::Result<LaplaceFourier>;

fn print_kernel_report(label: &str, rep: &KernelApproxReport) {
    println!(
        "{label}: D {:?}\n  mean |ΦΦᵀ − K| {:?}\n  max  |ΦΦᵀ − K| {:?}\n  slope (mean) {:.3}, slope (max) {:.3}",
        rep.output_dims, rep.mean_abs_err, rep.max_abs_err, rep.slope_mean, rep.slope_max
    );
}

#[test]
fn exact_laplacian_kernel_matches_a_hand_computation() {
    let x = FeatureMatrix::dense(Mat::from_fn(2, 3, |i, j| {
        [[0.5, -1.0, 0.0], [0.0, 1.0, 2.0]][i][j]
    }))
    .unwrap();
    let k = laplacian_kernel_matrix(&x, &x, 0.25);
    // ‖x_0 − x_1‖₁ = 0.5 + 2 + 2 = 4.5
    assert!((k[(0, 1)] - (-0.25f64 * 4.5).exp()).abs() < 1e-15);
    assert_eq!(k[(1, 0)], k[(0, 1)]);
    assert_eq!((k[(0, 0)], k[(1, 1)]), (1.0, 1.0));
}

/// The conformance suite on dense and on sparse input; prints every measured value.
#[test]
fn conformance_suite_passes_and_report() {
    let (dense, sparse) = data_pair(1, 40, 6, 0.5);
    let exact = laplacian_kernel_matrix(&dense, &dense, GAMMA);
    for x in [&dense, &sparse] {
        let storage = if x.is_sparse() { "sparse" } else { "dense" };
        let rep = run_all_learnable(
            |m, rng| LaplaceFourier::new(6, m, GAMMA, rng),
            x,
            &suite_config(exact.to_owned()),
        );
        let rep = match rep {
            Ok(rep) => rep,
            Err(e) => panic!("conformance failed on {storage} input: {e}"),
        };
        println!(
            "LaplaceFourier conformance report ({storage} input, n = 40, d = 6, γ = {GAMMA}):\n{rep}"
        );
        let slope = rep.get("kernel error slope").unwrap().value;
        assert!((slope + 0.5).abs() < 0.15, "slope {slope}");
        assert!(
            rep.get("dense and sparse input agree").unwrap().value <= 1e-12,
            "{rep}"
        );
    }
}

/// Bochner's theorem gives Cauchy(0, γ) directions; drawing them at another scale (or from the
/// RBF kernel's Gaussian) approximates a different kernel, and the error against the exact
/// Laplacian kernel stops falling at a floor.
#[test]
fn kernel_error_falls_like_inverse_sqrt_d_only_at_the_right_scale() {
    let (dense, sparse) = data_pair(2, 40, 6, 0.5);
    let exact = laplacian_kernel_matrix(&dense, &dense, GAMMA);
    let cfg = KernelApproxConfig::new(vec![16, 64, 256, 1024, 4096])
        .with_trials(4)
        .with_slope(-0.65, -0.35);
    let right = check_kernel_approximation(
        |m, rng| LaplaceFourier::new(6, m, GAMMA, rng),
        &sparse,
        exact.as_ref(),
        &cfg,
    )
    .unwrap();
    print_kernel_report("Cauchy(0, γ) directions (correct)", &right);
    assert!(right.passed, "{}", right.to_report(&cfg));
    assert!((right.slope_mean + 0.5).abs() < 0.15);
    assert!((right.slope_max + 0.5).abs() < 0.2);
    let last = |r: &KernelApproxReport| *r.mean_abs_err.last().unwrap();

    let wrong_scales: [(&str, MakeMap); 3] = [
        ("Cauchy(0, 2γ) directions", |m, rng| {
            LaplaceFourier::new(6, m, 2.0 * GAMMA, rng)
        }),
        ("Cauchy(0, γ/2) directions", |m, rng| {
            LaplaceFourier::new(6, m, 0.5 * GAMMA, rng)
        }),
        ("N(0, 2γ) directions (the RBF convention)", |m, rng| {
            LaplaceFourier::from_directions(gaussian_mat(rng, 6, m, (2.0 * GAMMA).sqrt()), GAMMA)
        }),
    ];
    for (label, make) in wrong_scales {
        let wrong = check_kernel_approximation(make, &dense, exact.as_ref(), &cfg).unwrap();
        print_kernel_report(label, &wrong);
        assert!(
            last(&wrong) > 5.0 * last(&right),
            "{label}: {} vs {}",
            last(&wrong),
            last(&right)
        );
        assert!(
            wrong.slope_mean > -0.3,
            "{label}: slope {}",
            wrong.slope_mean
        );
    }
}

#[test]
fn initial_directions_are_cauchy_with_scale_gamma() {
    let gamma = 0.3;
    let map = LaplaceFourier::new(50, 400, gamma, &mut seeded(3)).unwrap();
    let u = map.directions();
    assert_eq!(u.shape(), (50, 400));
    let values: Vec<f64> = (0..u.ncols())
        .flat_map(|r| u.col(r).iter().copied().collect::<Vec<_>>())
        .collect();
    let frac = |pred: &dyn Fn(f64) -> bool| {
        values.iter().filter(|&&v| pred(v)).count() as f64 / values.len() as f64
    };
    // |u| for u ~ Cauchy(0, γ) has quartiles γ·tan(π/8), γ, γ·tan(3π/8)
    let pi = std::f64::consts::PI;
    for (q, p) in [
        ((pi / 8.0).tan(), 0.25),
        (1.0, 0.5),
        ((3.0 * pi / 8.0).tan(), 0.75),
    ] {
        let f = frac(&|v| v.abs() <= q * gamma);
        assert!((f - p).abs() < 0.015, "P(|u| <= {q}γ) = {f}, expected {p}");
    }
    let positive = frac(&|v| v > 0.0);
    assert!((positive - 0.5).abs() < 0.015, "P(u > 0) = {positive}");
    // heavy tails: P(|u| > 100γ) = (2/π)·atan(1/100) ≈ 0.0064
    let tail = frac(&|v| v.abs() > 100.0 * gamma);
    assert!(tail > 0.003 && tail < 0.01, "tail {tail}");
    assert_eq!(map.gamma(), gamma);
}

#[test]
fn forward_matches_the_reference_formula() {
    let (dense, sparse) = data_pair(4, 12, 4, 0.5);
    let x = dense.to_dense();
    let map = LaplaceFourier::new(4, 3, GAMMA, &mut seeded(5)).unwrap();
    let u = map.directions();
    let scale = 1.0 / 3f64.sqrt();
    for input in [&dense, &sparse] {
        let phi = map.forward(input).unwrap();
        assert_eq!(phi.shape(), (12, 6));
        for i in 0..12 {
            for r in 0..3 {
                let s: f64 = (0..4).map(|j| x[(i, j)] * u[(j, r)]).sum();
                assert!((phi[(i, r)] - scale * s.cos()).abs() < 1e-13);
                assert!((phi[(i, 3 + r)] - scale * s.sin()).abs() < 1e-13);
            }
        }
    }
    // the provided methods work on top of forward
    let rows = map.forward_rows(&sparse, &[3, 3, 0]).unwrap();
    assert_eq!(rows.shape(), (3, 6));
    assert_eq!(rows[(0, 1)], rows[(1, 1)]);
    let k = map.approx_kernel(&sparse, &dense).unwrap();
    assert!((0..12).all(|i| (k[(i, i)] - 1.0).abs() < 1e-12));
}

/// The backward pass on its own, with a tighter finite-difference step than the suite's
/// default, on a larger map (a random subset of 64 of the 6 × 40 parameters).
#[test]
fn backward_matches_finite_differences() {
    let (dense, sparse) = data_pair(6, 25, 6, 0.5);
    let mut map = LaplaceFourier::new(6, 40, GAMMA, &mut seeded(7)).unwrap();
    let before = map.directions().to_owned();
    for x in [&dense, &sparse] {
        let rep = check_backward(&mut map, x, &mut seeded(8), &BackwardConfig::default()).unwrap();
        println!(
            "backward check ({} input):\n{rep}",
            if x.is_sparse() { "sparse" } else { "dense" }
        );
        assert!(rep.passed(), "{rep}");
    }
    assert_eq!(map.directions(), before.as_ref());
}

/// A small step against the gradient lowers the linear functional f(U) = ⟨G, φ_U(X)⟩, through
/// the provided `step` and a `Box<dyn LearnableMap>`.
#[test]
fn a_gradient_step_lowers_the_objective() {
    let (_, sparse) = data_pair(9, 30, 6, 0.5);
    let mut map: Box<dyn LearnableMap> =
        Box::new(LaplaceFourier::new(6, 10, GAMMA, &mut seeded(10)).unwrap());
    let g = gaussian_mat(&mut seeded(11), 30, 20, 1.0);
    let f =
        |m: &dyn LearnableMap| frob_dot(g.as_ref(), m.forward(&sparse).unwrap().as_ref()).unwrap();
    let f0 = f(map.as_ref());
    let grad = map.backward(&sparse, g.as_ref()).unwrap();
    let sq = frob_dot(grad.as_ref(), grad.as_ref()).unwrap();
    let eta = 1e-4;
    map.step(grad.as_ref(), eta).unwrap();
    let f1 = f(map.as_ref());
    // first order: f1 ≈ f0 − η‖∇f‖²
    assert!(f1 < f0);
    assert!(
        ((f0 - f1) / (eta * sq) - 1.0).abs() < 1e-2,
        "{f0} {f1} {sq}"
    );
}

#[test]
fn family_builds_deterministically_and_rejects_bad_parameters() {
    let (dense, sparse) = data_pair(12, 20, 5, 0.5);
    let family = LaplaceFamily;
    assert_eq!(family.name(), "llff");
    assert_eq!(family.name(), LaplaceFamily::NAME);
    assert_eq!(family.output_dim(7).unwrap(), 14);
    assert!(family.output_dim(0).is_err());
    assert!(family.output_dim(usize::MAX).is_err());

    // same seed ⇒ the same map, on dense and sparse rows alike; another seed ⇒ another map
    let a = family.build(&dense, 7, GAMMA, &mut seeded(13)).unwrap();
    let b = family.build(&sparse, 7, GAMMA, &mut seeded(13)).unwrap();
    let c = family.build(&dense, 7, GAMMA, &mut seeded(14)).unwrap();
    assert_eq!(a, b);
    assert_ne!(a.directions(), c.directions());
    assert_eq!(
        (a.input_dim(), a.output_dim()),
        (5, family.output_dim(7).unwrap())
    );
    assert_eq!(a.forward(&dense).unwrap(), b.forward(&dense).unwrap());
    // the family draws exactly what LaplaceFourier::new draws from the same generator state
    let mut rng = seeded(15);
    let first = family.build(&dense, 3, GAMMA, &mut rng).unwrap();
    let second = family.build(&dense, 3, GAMMA, &mut rng).unwrap();
    let mut rng = seeded(15);
    assert_eq!(first, LaplaceFourier::new(5, 3, GAMMA, &mut rng).unwrap());
    assert_eq!(second, LaplaceFourier::new(5, 3, GAMMA, &mut rng).unwrap());
    assert_ne!(first, second);

    // bad m or γ: an InvalidParameter error naming it
    let bad: [(usize, f64, &str); 7] = [
        (0, GAMMA, "m"),
        (3, 0.0, "gamma"),
        (3, -1.0, "gamma"),
        (3, f64::NAN, "gamma"),
        (3, f64::INFINITY, "gamma"),
        (3, f64::NEG_INFINITY, "gamma"),
        (3, f64::MAX, "gamma"), // finite, but the sampled directions overflow
    ];
    for (m, gamma, name) in bad {
        match family.build(&dense, m, gamma, &mut seeded(16)) {
            Err(FeatMapError::InvalidParameter { name: n, .. }) => {
                assert_eq!(n, name, "m = {m}, γ = {gamma}")
            }
            other => {
                panic!("m = {m}, γ = {gamma}: expected InvalidParameter({name}), got {other:?}")
            }
        }
    }

    // the family works behind a reference and a box, as model selection holds it
    fn build_via<F: MapFamily>(family: F, x: &FeatureMatrix) -> F::Map {
        family.build(x, 7, GAMMA, &mut seeded(13)).unwrap()
    }
    let boxed: Box<dyn MapFamily<Map = LaplaceFourier>> = Box::new(LaplaceFamily);
    assert_eq!(build_via(&family, &dense), a);
    assert_eq!(build_via(boxed, &dense), a);

    // and the conformance suite runs on maps the family builds
    let exact = laplacian_kernel_matrix(&dense, &dense, GAMMA);
    run_all_learnable(
        |m, rng| family.build(&sparse, m, GAMMA, rng),
        &sparse,
        &suite_config(exact),
    )
    .unwrap();
}

#[test]
fn errors_not_panics() {
    let (dense, sparse) = data_pair(17, 8, 4, 0.5);
    let mut map = LaplaceFourier::new(4, 3, GAMMA, &mut seeded(18)).unwrap();

    // constructors
    let mut rng = seeded(19);
    assert!(LaplaceFourier::new(4, 0, GAMMA, &mut rng).is_err());
    assert!(LaplaceFourier::new(4, usize::MAX, GAMMA, &mut rng).is_err());
    assert!(LaplaceFourier::new(usize::MAX, 2, GAMMA, &mut rng).is_err());
    assert!(LaplaceFourier::new(4, 3, -0.5, &mut rng).is_err());
    assert!(LaplaceFourier::from_directions(Mat::zeros(4, 0), GAMMA).is_err());
    assert!(LaplaceFourier::from_directions(Mat::zeros(4, 2), 0.0).is_err());
    assert!(LaplaceFourier::from_directions(Mat::zeros(4, 2), f64::NAN).is_err());
    let mut nan = Mat::<f64>::zeros(4, 2);
    nan[(1, 1)] = f64::NAN;
    assert!(matches!(
        LaplaceFourier::from_directions(nan, GAMMA),
        Err(FeatMapError::Linalg(LinalgError::NonFinite {
            row: 1,
            col: 1,
            ..
        }))
    ));
    let ok =
        LaplaceFourier::from_directions(Mat::from_fn(4, 2, |i, j| (i + j) as f64), 2.0).unwrap();
    assert_eq!(
        (ok.n_directions(), ok.gamma(), ok.output_dim()),
        (2, 2.0, 4)
    );

    // forward / backward input checks: wrong width and NaN/Inf (the variants of FeatureMatrix
    // are public, so a matrix can bypass the checking constructors)
    let wide = FeatureMatrix::dense(Mat::zeros(8, 5)).unwrap();
    let mut bad = dense.to_dense();
    bad[(6, 2)] = f64::INFINITY;
    let bad = FeatureMatrix::Dense(bad);
    assert!(matches!(
        map.forward(&wide),
        Err(FeatMapError::DimensionMismatch { .. })
    ));
    assert!(matches!(
        map.forward(&bad),
        Err(FeatMapError::Linalg(LinalgError::NonFinite {
            row: 6,
            col: 2,
            ..
        }))
    ));
    let g = Mat::<f64>::zeros(8, 6);
    assert!(map.backward(&sparse, g.as_ref()).is_ok());
    assert!(map.backward(&wide, g.as_ref()).is_err());
    assert!(map.backward(&bad, g.as_ref()).is_err());
    assert!(
        map.backward(&dense, Mat::<f64>::zeros(7, 6).as_ref())
            .is_err()
    );
    assert!(
        map.backward(&dense, Mat::<f64>::zeros(8, 7).as_ref())
            .is_err()
    );
    let mut gn = Mat::<f64>::zeros(8, 6);
    gn[(0, 0)] = f64::NAN;
    assert!(map.backward(&dense, gn.as_ref()).is_err());

    // set_params: wrong shape or NaN rejected, map unchanged
    let before = map.directions().to_owned();
    assert!(map.set_params(Mat::zeros(4, 4)).is_err());
    let mut pn = before.to_owned();
    pn[(0, 0)] = f64::NAN;
    assert!(map.set_params(pn).is_err());
    assert!(map.step(Mat::zeros(3, 3).as_ref(), 1.0).is_err());
    assert_eq!(map.directions(), before.as_ref());
    // an empty input is fine
    assert_eq!(
        map.forward(&sparse.select_rows(&[]).unwrap())
            .unwrap()
            .shape(),
        (0, 6)
    );
}

/// What a `MapCodec` in the `gimc` crate will require of the map type.
#[test]
fn map_meets_the_bounds_a_codec_needs() {
    fn bounds<T: LearnableMap + std::fmt::Debug + Send + Sync + Sized + 'static>() {}
    bounds::<LaplaceFourier>();
}
