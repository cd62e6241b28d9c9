//! Kernel approximation: RFF error falls like D^{-1/2}, Random Maclaurin likewise, Nyström is
//! exact with every point a landmark and improves with m, the activation map converges to its
//! (Monte-Carlo) kernel, the identity reproduces the linear kernel.

use gimc_cluster::KMeansParams;
use gimc_featmap::conformance::{
    KernelApproxConfig, KernelApproxReport, check_exact_kernel, check_kernel_approximation,
    exact_kernel_matrix,
};
use gimc_featmap::{
    ActivationMap, ActivationParams, FeatureMap, Identity, LandmarkInit, Nystrom, NystromParams,
    RandomFourier, RandomFourierParams,
};
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{GimcRng, seeded};
use gimc_linalg::{FeatureMatrix, Kernel};

use crate::common::{GAMMA, data_pair, maclaurin, polynomial_kernel};

/// [`check_kernel_approximation`] of the maps `make_map` builds, on `x` against `exact`:
/// prints the errors as `what`, asserts that the check passed and returns its report.
fn assert_approximates<M: FeatureMap>(
    what: &str,
    make_map: impl Fn(usize, &mut GimcRng) -> gimc_featmap::Result<M>,
    x: &FeatureMatrix,
    exact: &Mat<f64>,
    cfg: &KernelApproxConfig,
) -> KernelApproxReport {
    let rep = check_kernel_approximation(make_map, x, exact.as_ref(), cfg).unwrap();
    println!(
        "{what}: D {:?} mean err {:?} max err {:?} slope {:.3} (max: {:.3})",
        rep.output_dims, rep.mean_abs_err, rep.max_abs_err, rep.slope_mean, rep.slope_max
    );
    assert!(rep.passed, "{what}: {}", rep.to_report(cfg));
    rep
}

#[test]
fn rff_error_falls_like_inverse_sqrt_d() {
    let (dense, sparse) = data_pair(21, 40, 6, 0.5);
    let k = exact_kernel_matrix(&Kernel::Rbf { gamma: GAMMA }, &dense).unwrap();
    let cfg = KernelApproxConfig::new(vec![16, 64, 256, 1024])
        .with_trials(4)
        .with_slope(-0.65, -0.35);
    for x in [&dense, &sparse] {
        let rff = |m, rng: &mut GimcRng| {
            RandomFourier::new(6, &RandomFourierParams::new(m, GAMMA).check().unwrap(), rng)
        };
        let rep = assert_approximates("RFF", rff, x, &k, &cfg);
        assert_eq!(rep.output_dims, vec![32, 128, 512, 2048]);
        assert!((rep.slope_mean + 0.5).abs() < 0.15);
        assert!((rep.slope_max + 0.5).abs() < 0.2);
    }
}

#[test]
fn random_phase_rff_error_falls_like_inverse_sqrt_d() {
    let (dense, sparse) = data_pair(23, 40, 6, 0.5);
    let k = exact_kernel_matrix(&Kernel::Rbf { gamma: GAMMA }, &dense).unwrap();
    let cfg = KernelApproxConfig::new(vec![32, 128, 512, 2048])
        .with_trials(4)
        .with_slope(-0.65, -0.35);
    for x in [&dense, &sparse] {
        let cosine = |d, rng: &mut GimcRng| gimc_featmap::RandomCosine::new(6, d, GAMMA, rng);
        let rep = assert_approximates("random-phase RFF", cosine, x, &k, &cfg);
        assert_eq!(rep.output_dims, vec![32, 128, 512, 2048]);
        assert!((rep.slope_mean + 0.5).abs() < 0.15);
    }
}

#[test]
fn maclaurin_error_falls_like_inverse_sqrt_d() {
    let (dense, _) = data_pair(22, 30, 5, 0.5);
    let (gamma, coef0) = (0.6, 1.0);
    for degree in [2u32, 3] {
        let k = polynomial_kernel(&dense, gamma, coef0, degree);
        let cfg = KernelApproxConfig::new(vec![64, 256, 1024, 4096])
            .with_trials(4)
            .with_slope(-0.7, -0.3);
        let map = |big_d, rng: &mut GimcRng| maclaurin(5, big_d, (gamma, coef0, degree), rng);
        assert_approximates(&format!("Maclaurin p={degree}"), map, &dense, &k, &cfg);
    }
}

#[test]
fn nystrom_is_exact_with_every_point_a_landmark() {
    let (dense, sparse) = data_pair(23, 50, 6, 0.5);
    for kernel in [
        Kernel::Rbf { gamma: GAMMA },
        Kernel::Rbf { gamma: 5.0 },
        Kernel::Linear,
        Kernel::Polynomial {
            gamma: 0.5,
            coef0: 1.0,
            degree: 2,
        },
    ] {
        let k = exact_kernel_matrix(&kernel, &dense).unwrap();
        for x in [&dense, &sparse] {
            let map = Nystrom::fit(
                x,
                &NystromParams::new(50, kernel).check().unwrap(),
                &mut seeded(24),
            )
            .unwrap();
            let rep = check_exact_kernel(&map, x, k.as_ref(), 1e-8).unwrap();
            println!("Nyström exact {kernel:?}: {rep}");
            assert!(rep.passed(), "{kernel:?}\n{rep}");
        }
    }
}

#[test]
fn nystrom_error_falls_with_m_for_uniform_and_kmeans_landmarks() {
    let (dense, sparse) = data_pair(25, 80, 5, 0.6);
    let kernel = Kernel::Rbf { gamma: GAMMA };
    let k = exact_kernel_matrix(&kernel, &dense).unwrap();
    let cfg = KernelApproxConfig::new(vec![4, 8, 16, 32]).with_trials(3);
    for landmarks in [
        LandmarkInit::Uniform,
        LandmarkInit::KMeans(KMeansParams::new(1)),
    ] {
        let params = |m| {
            NystromParams::new(m, kernel)
                .with_landmarks(landmarks.clone())
                .check()
                .unwrap()
        };
        let nystrom = |m, rng: &mut GimcRng| Nystrom::fit(&sparse, &params(m), rng);
        let rep = assert_approximates(&format!("Nyström {landmarks:?}"), nystrom, &dense, &k, &cfg);
        assert!(rep.mean_abs_err[3] < 0.2 * rep.mean_abs_err[0]);
    }
}

#[test]
fn activation_map_converges_to_its_kernel() {
    let (dense, _) = data_pair(26, 25, 4, 0.5);
    let params = |m| ActivationParams::new(m, GAMMA).check().unwrap();
    // the kernel E[σ(uᵀx + b) σ(uᵀy + b)] has no closed form: estimate it with a huge map
    let reference = ActivationMap::new(4, &params(40_000), &mut seeded(27)).unwrap();
    let k = reference.approx_kernel(&dense, &dense).unwrap();
    let cfg = KernelApproxConfig::new(vec![16, 64, 256, 1024]).with_trials(4);
    let tanh = |m, rng: &mut GimcRng| ActivationMap::new(4, &params(m), rng);
    let rep = assert_approximates("tanh", tanh, &dense, &k, &cfg);
    assert!(rep.slope_mean < -0.3);
}

#[test]
fn identity_reproduces_the_linear_kernel() {
    let (dense, sparse) = data_pair(28, 20, 7, 0.4);
    let k = exact_kernel_matrix(&Kernel::Linear, &dense).unwrap();
    for x in [&dense, &sparse] {
        assert!(
            check_exact_kernel(&Identity::new(7), x, k.as_ref(), 1e-14)
                .unwrap()
                .passed()
        );
    }
}
