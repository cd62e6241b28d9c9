//! The public conformance suite: every built-in map passes it; deliberately broken user maps
//! fail it with the right check named.

use std::sync::atomic::{AtomicU64, Ordering};

use gimc_featmap::conformance::{
    BackwardConfig, ConformanceConfig, KernelApproxConfig, check_backward, check_determinism,
    check_shapes, exact_kernel_matrix, run_all, run_all_learnable,
};
use gimc_featmap::{
    ActivationMap, ActivationParams, FeatMapError, FeatureMap, Identity, LearnableMap, Nystrom,
    NystromParams, RandomFourier, RandomFourierParams, Result, check_input,
};
use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::rng::{GimcRng, seeded};
use gimc_linalg::{FeatureMatrix, Kernel};

use crate::common::{GAMMA, data_pair, maclaurin, polynomial_kernel};

#[test]
fn every_built_in_map_passes_the_suite() {
    let (dense, sparse) = data_pair(41, 30, 5, 0.5);
    let rbf = exact_kernel_matrix(&Kernel::Rbf { gamma: GAMMA }, &dense).unwrap();
    for x in [&dense, &sparse] {
        // identity: exact linear kernel
        let lin = exact_kernel_matrix(&Kernel::Linear, &dense).unwrap();
        let mut cfg = ConformanceConfig::new(5, 1);
        cfg.kernel = Some(lin);
        cfg.exact = Some((5, 1e-12));
        let rep = run_all(|d, _rng: &mut GimcRng| Ok(Identity::new(d)), x, &cfg).unwrap();
        assert!(rep.passed());

        // RFF: error falls like D^{-1/2}
        let cfg = ConformanceConfig::new(8, 2).with_kernel(
            rbf.clone(),
            KernelApproxConfig::new(vec![16, 64, 256, 1024])
                .with_trials(3)
                .with_slope(-0.7, -0.3),
        );
        let rep = run_all_learnable(
            |m, rng| {
                RandomFourier::new(5, &RandomFourierParams::new(m, GAMMA).check().unwrap(), rng)
            },
            x,
            &cfg,
        )
        .unwrap();
        println!("RFF suite:\n{rep}");

        // Nyström: error falls with m and is exact with every point a landmark
        let cfg = ConformanceConfig::new(6, 3)
            .with_kernel(rbf.clone(), KernelApproxConfig::new(vec![3, 6, 12, 24]))
            .with_exact(30, 1e-8);
        let rep = run_all_learnable(
            |m, rng| {
                Nystrom::fit(
                    &dense,
                    &NystromParams::new(m, Kernel::Rbf { gamma: GAMMA })
                        .check()
                        .unwrap(),
                    rng,
                )
            },
            x,
            &cfg,
        )
        .unwrap();
        assert!(rep.get("exact kernel reproduced").unwrap().value < 1e-8);

        // Random Maclaurin
        let (gamma, coef0, degree) = (0.5, 1.0, 2);
        let poly = polynomial_kernel(&dense, gamma, coef0, degree);
        let cfg = ConformanceConfig::new(6, 4).with_kernel(
            poly,
            KernelApproxConfig::new(vec![32, 128, 512]).with_trials(3),
        );
        run_all_learnable(
            |f, rng| maclaurin(5, f, (gamma, coef0, degree), rng),
            x,
            &cfg,
        )
        .unwrap();

        // activation map (no closed-form kernel: shapes, determinism, backward)
        let cfg = ConformanceConfig::new(6, 5);
        run_all_learnable(
            |m, rng| ActivationMap::new(5, &ActivationParams::new(m, GAMMA).check().unwrap(), rng),
            x,
            &cfg,
        )
        .unwrap();
    }
}

/// RFF with a sign error in the backward pass (the kind of bug the suite must catch).
struct WrongSignRff(RandomFourier);

impl FeatureMap for WrongSignRff {
    fn input_dim(&self) -> usize {
        self.0.input_dim()
    }
    fn output_dim(&self) -> usize {
        self.0.output_dim()
    }
    fn forward(&self, x: &FeatureMatrix) -> Result<Mat<f64>> {
        self.0.forward(x)
    }
}

impl LearnableMap for WrongSignRff {
    fn params(&self) -> MatRef<'_, f64> {
        self.0.params()
    }
    fn set_params(&mut self, p: Mat<f64>) -> Result<()> {
        self.0.set_params(p)
    }
    fn backward(&self, x: &FeatureMatrix, g: MatRef<'_, f64>) -> Result<Mat<f64>> {
        Ok(self.0.backward(x, g)? * -1.0)
    }
}

/// A map whose `output_dim` disagrees with its forward pass and which panics on nothing but
/// ignores the input dimension.
struct LyingDims;

impl FeatureMap for LyingDims {
    fn input_dim(&self) -> usize {
        3
    }
    fn output_dim(&self) -> usize {
        4
    }
    fn forward(&self, x: &FeatureMatrix) -> Result<Mat<f64>> {
        Ok(Mat::zeros(x.nrows(), 5))
    }
}

/// A map whose output changes from call to call.
struct Drifting(AtomicU64);

impl FeatureMap for Drifting {
    fn input_dim(&self) -> usize {
        3
    }
    fn output_dim(&self) -> usize {
        1
    }
    fn forward(&self, x: &FeatureMatrix) -> Result<Mat<f64>> {
        check_input("Drifting::forward", x, 3)?;
        let c = self.0.fetch_add(1, Ordering::Relaxed) as f64;
        Ok(Mat::from_fn(x.nrows(), 1, |_, _| c))
    }
}

#[test]
fn broken_maps_fail_the_suite() {
    let (dense, _) = data_pair(42, 12, 3, 0.5);
    // wrong sign in backward
    let mut bad = WrongSignRff(
        RandomFourier::new(
            3,
            &RandomFourierParams::new(3, GAMMA).check().unwrap(),
            &mut seeded(1),
        )
        .unwrap(),
    );
    let rep = check_backward(&mut bad, &dense, &mut seeded(2), &BackwardConfig::default()).unwrap();
    let fd = rep.get("backward matches finite differences").unwrap();
    assert!(!fd.passed && fd.value > 1.0, "{rep}");
    let err = run_all_learnable(
        |m, rng| {
            Ok(WrongSignRff(RandomFourier::new(
                3,
                &RandomFourierParams::new(m, GAMMA).check().unwrap(),
                rng,
            )?))
        },
        &dense,
        &ConformanceConfig::new(3, 0),
    )
    .unwrap_err();
    match err {
        FeatMapError::ConformanceFailed { summary } => {
            assert!(
                summary.contains("backward matches finite differences"),
                "{summary}"
            )
        }
        other => panic!("{other:?}"),
    }

    // output_dim lies, wrong input dimension accepted
    let rep = check_shapes(&LyingDims, &dense).unwrap();
    assert!(!rep.get("forward shape").unwrap().passed);
    assert!(!rep.get("wrong input dimension rejected").unwrap().passed);
    assert!(rep.into_result().is_err());

    // non-deterministic
    let rep = check_determinism(|_| Ok(Drifting(AtomicU64::new(0))), &dense, 0).unwrap();
    assert!(
        rep.get("same seed gives bitwise equal maps")
            .unwrap()
            .passed
    );
    assert!(!rep.get("repeated forward is bitwise equal").unwrap().passed);
    assert!(!rep.passed());

    // a kernel check with too few distinct sizes is a usage error, not a pass
    let k = exact_kernel_matrix(&Kernel::Rbf { gamma: GAMMA }, &dense).unwrap();
    assert!(
        gimc_featmap::conformance::check_kernel_approximation(
            |m, rng| RandomFourier::new(
                3,
                &RandomFourierParams::new(m, GAMMA).check().unwrap(),
                rng
            ),
            &dense,
            k.as_ref(),
            &KernelApproxConfig::new(vec![8, 8]),
        )
        .is_err()
    );
}

/// A user-written learnable map (x ↦ m^{-1/2} (XU)², elementwise) passes the suite unchanged.
#[derive(Clone)]
struct Squares(Mat<f64>);

impl FeatureMap for Squares {
    fn input_dim(&self) -> usize {
        self.0.nrows()
    }
    fn output_dim(&self) -> usize {
        self.0.ncols()
    }
    fn forward(&self, x: &FeatureMatrix) -> Result<Mat<f64>> {
        check_input("Squares::forward", x, self.input_dim())?;
        let s = x.mul_dense(self.0.as_ref())?;
        let scale = 1.0 / (self.0.ncols() as f64).sqrt();
        Ok(Mat::from_fn(s.nrows(), s.ncols(), |i, j| {
            scale * s[(i, j)] * s[(i, j)]
        }))
    }
}

impl LearnableMap for Squares {
    fn params(&self) -> MatRef<'_, f64> {
        self.0.as_ref()
    }
    fn set_params(&mut self, p: Mat<f64>) -> Result<()> {
        gimc_featmap::check_params("Squares::set_params", p.as_ref(), self.0.shape())?;
        self.0 = p;
        Ok(())
    }
    fn backward(&self, x: &FeatureMatrix, g: MatRef<'_, f64>) -> Result<Mat<f64>> {
        gimc_featmap::check_grad("Squares::backward", g, x.nrows(), self.output_dim())?;
        let s = x.mul_dense(self.0.as_ref())?;
        let scale = 2.0 / (self.0.ncols() as f64).sqrt();
        let h = Mat::from_fn(s.nrows(), s.ncols(), |i, j| scale * s[(i, j)] * g[(i, j)]);
        Ok(x.tr_mul_dense(h.as_ref())?)
    }
}

#[test]
fn a_user_map_passes_the_suite() {
    let (dense, sparse) = data_pair(43, 15, 4, 0.5);
    for x in [&dense, &sparse] {
        let rep = run_all_learnable(
            |m, rng| Ok(Squares(gimc_linalg::rng::gaussian_mat(rng, 4, m, 1.0))),
            x,
            &ConformanceConfig::new(3, 9),
        )
        .unwrap();
        assert!(rep.outcomes.len() >= 15, "{rep}");
    }
}
