//! Shared helpers: data in both storages and the built-in maps by name.

use gimc_featmap::conformance::exact_kernel_matrix;
use gimc_featmap::{
    Activation, ActivationMap, ActivationParams, Identity, LearnableMap, Nystrom, NystromNorm,
    NystromParams, PolynomialParams, RandomCosine, RandomFourier, RandomFourierParams,
    RandomMaclaurin,
};
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{GimcRng, seeded};
use gimc_linalg::sparse::dense_to_csr;
use gimc_linalg::{FeatureMatrix, Kernel};
use rand::Rng;

/// The same random n × d matrix (entries uniform in [−1, 1], about `density` of them non-zero,
/// every row with at least one non-zero) as dense and as sparse CSR.
pub fn data_pair(seed: u64, n: usize, d: usize, density: f64) -> (FeatureMatrix, FeatureMatrix) {
    let mut rng = seeded(seed);
    let mut m = Mat::<f64>::zeros(n, d);
    for i in 0..n {
        for j in 0..d {
            if j == i % d || rng.random::<f64>() < density {
                m[(i, j)] = rng.random::<f64>() * 2.0 - 1.0;
            }
        }
    }
    let s = dense_to_csr(m.as_ref()).unwrap();
    (
        FeatureMatrix::dense(m).unwrap(),
        FeatureMatrix::sparse(s).unwrap(),
    )
}

/// Max |a − b|.
pub fn max_diff(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
    assert_eq!(a.shape(), b.shape());
    (a - b).norm_max()
}

pub const GAMMA: f64 = 0.5;

/// The exact polynomial kernel matrix (γ xᵀy + c₀)^p of the rows of `x`.
pub fn polynomial_kernel(x: &FeatureMatrix, gamma: f64, coef0: f64, degree: u32) -> Mat<f64> {
    let kernel = Kernel::Polynomial {
        gamma,
        coef0,
        degree,
    };
    exact_kernel_matrix(&kernel, x).unwrap()
}

/// A Random Maclaurin map of input dimension `d` and output dimension `big_d` for the
/// polynomial kernel (γ xᵀy + c₀)^p.
pub fn maclaurin(
    d: usize,
    big_d: usize,
    (gamma, coef0, degree): (f64, f64, u32),
    rng: &mut GimcRng,
) -> gimc_featmap::Result<RandomMaclaurin> {
    let params = PolynomialParams::new(big_d, gamma, coef0, degree)
        .check()
        .unwrap();
    RandomMaclaurin::new(d, &params, rng)
}

/// Every learnable built-in map (with its variants), boxed, built for input dimension `d` with
/// size `m` from `rng`; Nyström landmarks come from `x`.
pub fn learnable_maps(
    x: &FeatureMatrix,
    m: usize,
    rng: &mut GimcRng,
) -> Vec<(&'static str, Box<dyn LearnableMap + Sync>)> {
    let d = x.ncols();
    let poly = Kernel::Polynomial {
        gamma: 0.7,
        coef0: 0.5,
        degree: 3,
    };
    vec![
        (
            "rff-phase",
            Box::new(RandomCosine::new(d, 2 * m, GAMMA, rng).unwrap())
                as Box<dyn LearnableMap + Sync>,
        ),
        (
            "rff",
            Box::new(
                RandomFourier::new(d, &RandomFourierParams::new(m, GAMMA).check().unwrap(), rng)
                    .unwrap(),
            ) as Box<dyn LearnableMap + Sync>,
        ),
        (
            "nystrom-rbf-pinv",
            Box::new(
                Nystrom::fit(
                    x,
                    &NystromParams::new(m, Kernel::Rbf { gamma: GAMMA })
                        .check()
                        .unwrap(),
                    rng,
                )
                .unwrap(),
            ),
        ),
        (
            "nystrom-rbf-identity",
            Box::new(
                Nystrom::fit(
                    x,
                    &NystromParams::new(m, Kernel::Rbf { gamma: GAMMA })
                        .with_normalization(NystromNorm::Identity)
                        .check()
                        .unwrap(),
                    rng,
                )
                .unwrap(),
            ),
        ),
        (
            "nystrom-linear",
            Box::new(
                Nystrom::fit(
                    x,
                    &NystromParams::new(m, Kernel::Linear).check().unwrap(),
                    rng,
                )
                .unwrap(),
            ),
        ),
        (
            "nystrom-poly",
            Box::new(Nystrom::fit(x, &NystromParams::new(m, poly).check().unwrap(), rng).unwrap()),
        ),
        (
            "maclaurin-p3",
            Box::new(
                RandomMaclaurin::new(
                    d,
                    &PolynomialParams::new(m, 0.7, 0.5, 3).check().unwrap(),
                    rng,
                )
                .unwrap(),
            ),
        ),
        (
            "maclaurin-p1-c0",
            Box::new(
                RandomMaclaurin::new(
                    d,
                    &PolynomialParams::new(m, 1.3, 0.0, 1).check().unwrap(),
                    rng,
                )
                .unwrap(),
            ),
        ),
        (
            "tanh",
            Box::new(
                ActivationMap::new(d, &ActivationParams::new(m, GAMMA).check().unwrap(), rng)
                    .unwrap(),
            ),
        ),
        (
            "sigmoid",
            Box::new(
                ActivationMap::new(
                    d,
                    &ActivationParams::new(m, GAMMA)
                        .with_activation(Activation::Sigmoid)
                        .check()
                        .unwrap(),
                    rng,
                )
                .unwrap(),
            ),
        ),
    ]
}

/// The identity map for the data's dimension.
pub fn identity_for(x: &FeatureMatrix) -> Identity {
    Identity::new(x.ncols())
}
