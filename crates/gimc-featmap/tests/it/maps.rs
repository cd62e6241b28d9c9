//! Shapes, determinism, dense = sparse, forward against reference formulas, trait objects and
//! error cases.

use gimc_cluster::{KMeansParams, fit_kmeans};
use gimc_featmap::conformance::{check_determinism, check_representations, check_shapes};
use gimc_featmap::{
    Activation, ActivationMap, ActivationParams, FeatMapError, FeatureMap, Identity, LandmarkInit,
    LearnableMap, Nystrom, NystromNorm, NystromParams, PolynomialParams, RandomFourier,
    RandomFourierParams, RandomMaclaurin,
};
use gimc_linalg::faer::Mat;
use gimc_linalg::observe::NoObserver;
use gimc_linalg::rng::{gaussian_mat, seeded};
use gimc_linalg::{FeatureMatrix, Kernel, LinalgError, pinv_sqrt};

use crate::common::{GAMMA, data_pair, identity_for, learnable_maps, max_diff};

#[test]
fn every_map_has_the_right_shapes_on_both_storages() {
    let (dense, sparse) = data_pair(1, 30, 7, 0.3);
    for x in [&dense, &sparse] {
        let rep = check_shapes(&identity_for(x), x).unwrap();
        assert!(rep.passed(), "identity\n{rep}");
        for (name, map) in learnable_maps(&dense, 6, &mut seeded(2)) {
            let rep = check_shapes(&map, x).unwrap();
            assert!(rep.passed(), "{name}\n{rep}");
            let phi = map.forward(x).unwrap();
            assert_eq!(phi.shape(), (30, map.output_dim()), "{name}");
        }
    }
    // the output dimensions promised by the docs
    let d = 7;
    let rff = RandomFourier::new(
        d,
        &RandomFourierParams::new(5, 1.0).check().unwrap(),
        &mut seeded(3),
    )
    .unwrap();
    assert_eq!(
        (rff.input_dim(), rff.output_dim(), rff.n_params()),
        (7, 10, 35)
    );
    let poly = RandomMaclaurin::new(
        d,
        &PolynomialParams::new(9, 1.0, 1.0, 3).check().unwrap(),
        &mut seeded(3),
    )
    .unwrap();
    assert_eq!((poly.output_dim(), poly.params().shape()), (9, (8, 27)));
    let act = ActivationMap::new(
        d,
        &ActivationParams::new(4, 1.0).check().unwrap(),
        &mut seeded(3),
    )
    .unwrap();
    assert_eq!((act.output_dim(), act.params().shape()), (4, (8, 4)));
    let nys = Nystrom::fit(
        &dense,
        &NystromParams::new(11, Kernel::Linear).check().unwrap(),
        &mut seeded(3),
    )
    .unwrap();
    assert_eq!((nys.output_dim(), nys.params().shape()), (11, (11, 7)));
}

#[test]
fn maps_are_deterministic_by_seed() {
    let (dense, sparse) = data_pair(4, 40, 6, 0.4);
    for (i, x) in [&dense, &sparse].into_iter().enumerate() {
        for idx in 0..learnable_maps(&dense, 5, &mut seeded(0)).len() {
            let make = |rng: &mut _| Ok(learnable_maps(&dense, 5, rng).swap_remove(idx).1);
            let rep = check_determinism(make, x, 17).unwrap();
            assert!(rep.passed(), "map {idx} storage {i}\n{rep}");
            // a different seed gives a different map
            let a = make(&mut seeded(1)).unwrap().forward(x).unwrap();
            let b = make(&mut seeded(2)).unwrap().forward(x).unwrap();
            assert_ne!(a, b, "map {idx}");
        }
    }
}

#[test]
fn dense_and_sparse_input_give_equal_phi() {
    let (dense, sparse) = data_pair(5, 50, 9, 0.2);
    assert!(
        check_representations(&identity_for(&dense), &dense)
            .unwrap()
            .passed()
    );
    for (name, map) in learnable_maps(&dense, 8, &mut seeded(6)) {
        let a = map.forward(&dense).unwrap();
        let b = map.forward(&sparse).unwrap();
        assert!(max_diff(&a, &b) < 1e-12, "{name}");
        assert!(
            check_representations(&map, &sparse).unwrap().passed(),
            "{name}"
        );
    }
}

/// Row `i` of a dense matrix as a vector.
fn row(x: &Mat<f64>, i: usize) -> Vec<f64> {
    (0..x.ncols()).map(|j| x[(i, j)]).collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn forward_matches_reference_formulas() {
    let (dense, sparse) = data_pair(7, 12, 4, 0.5);
    let x = dense.to_dense();
    let (n, d) = x.shape();
    // RFF: Φ = m^{-1/2}[cos XU, sin XU]
    let u = gaussian_mat(&mut seeded(8), d, 3, 1.0);
    let rff = RandomFourier::from_directions(u.clone()).unwrap();
    let phi = rff.forward(&sparse).unwrap();
    for i in 0..n {
        for r in 0..3 {
            let s: f64 = (0..d).map(|j| x[(i, j)] * u[(j, r)]).sum();
            assert!((phi[(i, r)] - s.cos() / 3f64.sqrt()).abs() < 1e-13);
            assert!((phi[(i, 3 + r)] - s.sin() / 3f64.sqrt()).abs() < 1e-13);
        }
    }
    // Nyström: Φ = k(X, U) (E^†)^{1/2}
    let kernel = Kernel::Rbf { gamma: 0.8 };
    let lm = gaussian_mat(&mut seeded(9), 5, d, 0.5);
    let nys = Nystrom::from_landmarks(kernel, lm.clone(), NystromNorm::PinvSqrt { rel_tol: 1e-12 })
        .unwrap();
    let e = Mat::from_fn(5, 5, |r, s| {
        kernel.eval(&row(&lm, r), &row(&lm, s)).unwrap()
    });
    let m = pinv_sqrt(e.as_ref(), 1e-12).unwrap();
    let c = Mat::from_fn(n, 5, |i, r| kernel.eval(&row(&x, i), &row(&lm, r)).unwrap());
    assert!(max_diff(&nys.forward(&sparse).unwrap(), &(&c * &m)) < 1e-12);
    assert!(
        max_diff(
            nys.normalization().map(|m| m.to_owned()).as_ref().unwrap(),
            &m
        ) < 1e-12
    );
    // the default whitening M (inverse Cholesky here, E being well-conditioned) rotates Φ:
    // the same ΦΦᵀ = C E^† Cᵀ, a different Φ
    let white = Nystrom::from_landmarks(kernel, lm.clone(), NystromNorm::Whiten { rel_tol: 1e-12 })
        .unwrap();
    let (pw, pp) = (
        white.forward(&sparse).unwrap(),
        nys.forward(&sparse).unwrap(),
    );
    assert!(max_diff(&(&pw * pw.transpose()), &(&pp * pp.transpose())) < 1e-10);
    assert!(
        max_diff(&pw, &pp) > 1e-6,
        "whitening should differ from the symmetric root"
    );
    let plain = Nystrom::from_landmarks(kernel, lm.clone(), NystromNorm::Identity).unwrap();
    assert!(max_diff(&plain.forward(&dense).unwrap(), &c) < 1e-13);
    // Random Maclaurin: φ_r(x) = D^{-1/2} Π_l (w_{r,l} · [√γ x, √c₀])
    let (gamma, coef0, p, big_d) = (0.7, 0.4, 3usize, 4usize);
    let w = gaussian_mat(&mut seeded(10), d + 1, p * big_d, 1.0);
    let poly = RandomMaclaurin::from_weights(w.clone(), gamma, coef0, p as u32).unwrap();
    let phi = poly.forward(&sparse).unwrap();
    for i in 0..n {
        let xp: Vec<f64> = (0..=d)
            .map(|j| {
                if j < d {
                    gamma.sqrt() * x[(i, j)]
                } else {
                    coef0.sqrt()
                }
            })
            .collect();
        for r in 0..big_d {
            let prod: f64 = (0..p)
                .map(|l| dot(&xp, &(0..=d).map(|j| w[(j, r * p + l)]).collect::<Vec<_>>()))
                .product();
            assert!((phi[(i, r)] - prod / (big_d as f64).sqrt()).abs() < 1e-12);
        }
    }
    // activation: Φ = m^{-1/2} σ(XU + 1bᵀ)
    let w = gaussian_mat(&mut seeded(11), d + 1, 3, 1.0);
    for act in [Activation::Tanh, Activation::Sigmoid] {
        let map = ActivationMap::from_weights(w.clone(), act).unwrap();
        let phi = map.forward(&sparse).unwrap();
        for i in 0..n {
            for r in 0..3 {
                let z: f64 = (0..d).map(|j| x[(i, j)] * w[(j, r)]).sum::<f64>() + w[(d, r)];
                let s = match act {
                    Activation::Tanh => z.tanh(),
                    _ => 1.0 / (1.0 + (-z).exp()),
                };
                assert!((phi[(i, r)] - s / 3f64.sqrt()).abs() < 1e-13);
            }
        }
    }
    // identity
    assert_eq!(Identity::new(d).forward(&sparse).unwrap(), x);
}

#[test]
fn initial_parameters_follow_the_documented_distributions() {
    // RFF directions ~ N(0, 2γ)
    let rff = RandomFourier::new(
        50,
        &RandomFourierParams::new(400, 0.3).check().unwrap(),
        &mut seeded(12),
    )
    .unwrap();
    let u = rff.directions();
    let var = (0..u.ncols())
        .flat_map(|j| u.col(j).iter().copied().collect::<Vec<_>>())
        .map(|v| v * v)
        .sum::<f64>()
        / (50.0 * 400.0);
    assert!((var - 0.6).abs() < 0.02, "variance {var}");
    // Maclaurin weights are ±1
    let poly = RandomMaclaurin::new(
        5,
        &PolynomialParams::new(7, 1.0, 1.0, 2).check().unwrap(),
        &mut seeded(13),
    )
    .unwrap();
    let p = poly.params();
    assert!((0..p.ncols()).all(|j| p.col(j).iter().all(|v| v.abs() == 1.0)));
}

#[test]
fn nystrom_landmarks_uniform_rows_or_kmeans_centres() {
    let (dense, sparse) = data_pair(14, 60, 5, 0.5);
    let x = dense.to_dense();
    let nys = Nystrom::fit(
        &sparse,
        &NystromParams::new(10, Kernel::Linear).check().unwrap(),
        &mut seeded(15),
    )
    .unwrap();
    let lm = nys.landmarks();
    // every landmark is a distinct data row
    let mut found = vec![];
    for r in 0..10 {
        let i = (0..60)
            .find(|&i| (0..5).all(|j| x[(i, j)] == lm[(r, j)]))
            .expect("landmark is a data row");
        found.push(i);
    }
    found.sort_unstable();
    found.dedup();
    assert_eq!(found.len(), 10);
    // k-means landmarks are the centres of fit_kmeans with the same generator state
    let km_params = KMeansParams::new(1).with_n_init(2);
    let params = NystromParams::new(6, Kernel::Rbf { gamma: GAMMA })
        .with_landmarks(LandmarkInit::KMeans(km_params.clone()))
        .check()
        .unwrap();
    let nys = Nystrom::fit(&dense, &params, &mut seeded(16)).unwrap();
    let mut km6 = km_params;
    km6.k = 6;
    let km = fit_kmeans(
        &dense,
        &km6.check().unwrap(),
        &mut seeded(16),
        &mut NoObserver,
    )
    .unwrap();
    assert_eq!(nys.landmarks().to_owned(), km.centers);
}

#[test]
fn trait_objects_and_step() {
    let (dense, _) = data_pair(17, 10, 3, 0.5);
    let mut maps: Vec<Box<dyn FeatureMap>> = vec![Box::new(Identity::new(3))];
    for (_, m) in learnable_maps(&dense, 4, &mut seeded(18)) {
        maps.push(Box::new(m));
    }
    for m in &maps {
        let by_ref: &dyn FeatureMap = m.as_ref();
        assert_eq!(by_ref.forward(&dense).unwrap(), m.forward(&dense).unwrap());
        assert_eq!(m.forward_rows(&dense, &[2, 2]).unwrap().nrows(), 2);
        let k = m.approx_kernel(&dense, &dense).unwrap();
        assert_eq!(k.shape(), (10, 10));
    }
    // step: U ← U − η·direction, through a Box<dyn LearnableMap>
    let mut boxed: Box<dyn LearnableMap> = Box::new(
        RandomFourier::new(
            3,
            &RandomFourierParams::new(2, 1.0).check().unwrap(),
            &mut seeded(19),
        )
        .unwrap(),
    );
    let before = boxed.params().to_owned();
    let dir = gaussian_mat(&mut seeded(20), 3, 2, 1.0);
    boxed.step(dir.as_ref(), 0.25).unwrap();
    assert!(max_diff(&boxed.params().to_owned(), &(&before - &dir * 0.25)) < 1e-15);
    assert!(boxed.step(Mat::zeros(2, 2).as_ref(), 1.0).is_err());
    let by_mut: &mut dyn LearnableMap = boxed.as_mut();
    assert_eq!(by_mut.n_params(), 6);
}

#[test]
fn parameter_errors() {
    fn inv<T: std::fmt::Debug>(r: Result<T, FeatMapError>, name: &str) {
        match r {
            Err(FeatMapError::InvalidParameter { name: n, .. }) => assert_eq!(n, name),
            other => panic!("expected InvalidParameter({name}), got {other:?}"),
        }
    }
    inv(RandomFourierParams::new(0, 1.0).check(), "m");
    inv(RandomFourierParams::new(3, 0.0).check(), "gamma");
    inv(RandomFourierParams::new(3, -1.0).check(), "gamma");
    inv(RandomFourierParams::new(3, f64::NAN).check(), "gamma");
    inv(RandomFourierParams::new(3, f64::INFINITY).check(), "gamma");
    inv(ActivationParams::new(0, 1.0).check(), "m");
    inv(ActivationParams::new(2, f64::NAN).check(), "gamma");
    inv(
        ActivationParams::new(2, 1.0).with_bias_std(-1.0).check(),
        "bias_std",
    );
    inv(PolynomialParams::new(0, 1.0, 1.0, 2).check(), "features");
    inv(PolynomialParams::new(2, 0.0, 1.0, 2).check(), "gamma");
    inv(PolynomialParams::new(2, 1.0, -1.0, 2).check(), "coef0");
    inv(PolynomialParams::new(2, 1.0, f64::NAN, 2).check(), "coef0");
    inv(PolynomialParams::new(2, 1.0, 1.0, 0).check(), "degree");
    inv(NystromParams::new(0, Kernel::Linear).check(), "m");
    inv(
        NystromParams::new(2, Kernel::Linear)
            .with_normalization(NystromNorm::PinvSqrt { rel_tol: 1.0 })
            .check(),
        "rel_tol",
    );
    inv(
        NystromParams::new(2, Kernel::Linear)
            .with_normalization(NystromNorm::PinvSqrt { rel_tol: f64::NAN })
            .check(),
        "rel_tol",
    );
    assert!(matches!(
        NystromParams::new(2, Kernel::Rbf { gamma: -1.0 }).check(),
        Err(FeatMapError::Linalg(LinalgError::InvalidParameter {
            name: "gamma",
            ..
        }))
    ));
    assert!(matches!(
        NystromParams::new(2, Kernel::Linear)
            .with_landmarks(LandmarkInit::KMeans(KMeansParams::new(2).with_n_init(0)))
            .check(),
        Err(FeatMapError::Cluster(_))
    ));
    // constructors from parts check too (the others take checked parameters)
    let mut rng = seeded(1);
    assert!(RandomFourier::from_directions(Mat::zeros(3, 0)).is_err());
    let mut nan = Mat::<f64>::zeros(3, 2);
    nan[(1, 1)] = f64::NAN;
    assert!(matches!(
        RandomFourier::from_directions(nan.clone()),
        Err(FeatMapError::Linalg(LinalgError::NonFinite {
            row: 1,
            col: 1,
            ..
        }))
    ));
    assert!(ActivationMap::from_weights(nan.clone(), Activation::Tanh).is_err());
    assert!(RandomMaclaurin::from_weights(Mat::zeros(3, 5), 1.0, 1.0, 2).is_err());
    assert!(
        Nystrom::from_landmarks(Kernel::Linear, Mat::zeros(0, 3), NystromNorm::Identity).is_err()
    );
    assert!(Nystrom::from_parts(Kernel::Linear, Mat::zeros(2, 3), Some(Mat::zeros(3, 3))).is_err());
    let (dense, _) = data_pair(2, 5, 3, 0.5);
    inv(
        Nystrom::fit(
            &dense,
            &NystromParams::new(6, Kernel::Linear).check().unwrap(),
            &mut rng,
        )
        .map(|_| ()),
        "m",
    );
}

#[test]
fn input_errors() {
    let (dense, sparse) = data_pair(3, 8, 4, 0.5);
    let wide = FeatureMatrix::dense(Mat::zeros(8, 5)).unwrap();
    let mut bad = dense.to_dense();
    bad[(6, 2)] = f64::INFINITY;
    let bad = FeatureMatrix::Dense(bad);
    assert!(Identity::new(4).forward(&wide).is_err());
    for (name, mut map) in learnable_maps(&dense, 3, &mut seeded(4)) {
        assert!(
            matches!(
                map.forward(&wide),
                Err(FeatMapError::DimensionMismatch { .. })
            ),
            "{name}"
        );
        assert!(
            matches!(
                map.forward(&bad),
                Err(FeatMapError::Linalg(LinalgError::NonFinite {
                    row: 6,
                    col: 2,
                    ..
                }))
            ),
            "{name}"
        );
        let big_d = map.output_dim();
        let g = Mat::<f64>::zeros(8, big_d);
        assert!(map.backward(&sparse, g.as_ref()).is_ok(), "{name}");
        assert!(map.backward(&wide, g.as_ref()).is_err(), "{name}");
        assert!(
            map.backward(&dense, Mat::<f64>::zeros(7, big_d).as_ref())
                .is_err(),
            "{name}"
        );
        let mut gn = g.clone();
        gn[(0, 0)] = f64::NAN;
        assert!(map.backward(&dense, gn.as_ref()).is_err(), "{name}");
        let (r, c) = map.params().shape();
        let before = map.params().to_owned();
        assert!(map.set_params(Mat::zeros(r, c + 1)).is_err(), "{name}");
        let mut pn = before.clone();
        pn[(0, 0)] = f64::NAN;
        assert!(map.set_params(pn).is_err(), "{name}");
        assert_eq!(map.params().to_owned(), before, "{name}");
    }
}
