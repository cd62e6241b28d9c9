//! Kernel k-means: agreement with k-means for the linear kernel, rings with RBF, prediction,
//! determinism, size limit and errors.

use gimc_cluster::{
    ClusterError, KMeansInit, KMeansParams, KernelKMeansParams, fit_kernel_kmeans, fit_kmeans,
};
use gimc_linalg::dense::in_pool;
use gimc_linalg::faer::Mat;
use gimc_linalg::observe::NoObserver;
use gimc_linalg::rng::{gaussian_mat, seeded};
use gimc_linalg::{FeatureMatrix, Kernel};
use gimc_metrics::clustering_accuracy;

use crate::common::{blobs, same_partition, sparse_pair};

#[test]
fn linear_kernel_matches_kmeans_from_the_same_seeds() {
    let x = gaussian_mat(&mut seeded(1), 300, 5, 1.0);
    let fx = FeatureMatrix::dense(x).unwrap();
    let (_, sparse) = sparse_pair(&mut seeded(2), 250, 12, 0.3);
    for data in [&fx, &sparse] {
        for init in [KMeansInit::PlusPlus, KMeansInit::Random] {
            for (k, seed) in [(2, 3u64), (5, 4), (8, 5)] {
                let km_params = KMeansParams::new(k)
                    .with_n_init(3)
                    .with_tol(0.0)
                    .with_init(init);
                let kkm_params = KernelKMeansParams::new(k, Kernel::Linear)
                    .with_n_init(3)
                    .with_tol(0.0)
                    .with_init(init);
                let km = fit_kmeans(
                    data,
                    &km_params.check().unwrap(),
                    &mut seeded(seed),
                    &mut NoObserver,
                )
                .unwrap();
                let kkm = fit_kernel_kmeans(data, &kkm_params.check().unwrap(), &mut seeded(seed))
                    .unwrap();
                assert_eq!(kkm.labels, km.labels, "k = {k}, {init:?}");
                assert_eq!(kkm.n_iter, km.n_iter);
                assert_eq!(kkm.converged, km.converged);
                assert!((kkm.inertia - km.inertia).abs() <= 1e-8 * km.inertia);
                assert_eq!(kkm.predict(data).unwrap(), km.predict(data).unwrap());
            }
        }
    }
}

#[test]
fn rbf_kernel_separates_the_rings_that_kmeans_cannot() {
    let d = gimc_data::synth::two_class_2d(600, 0.1, &mut seeded(7)).unwrap();
    let truth = d.classes().unwrap().to_vec();
    let kkm = fit_kernel_kmeans(
        &d.features,
        &KernelKMeansParams::new(2, Kernel::Rbf { gamma: 0.5 })
            .with_n_init(5)
            .check()
            .unwrap(),
        &mut seeded(8),
    )
    .unwrap();
    assert!(same_partition(&kkm.labels, &truth));
    let km = fit_kmeans(
        &d.features,
        &KMeansParams::new(2).check().unwrap(),
        &mut seeded(8),
        &mut NoObserver,
    )
    .unwrap();
    assert!(clustering_accuracy(&km.labels, &truth).unwrap() < 0.7);
    // new points from the same rings go to their ring's cluster
    let test = gimc_data::synth::two_class_2d(200, 0.1, &mut seeded(9)).unwrap();
    let pred = kkm.predict(&test.features).unwrap();
    let map = kkm.labels[0]; // training row 0 is class 0
    for (p, &c) in pred.iter().zip(test.classes().unwrap()) {
        assert_eq!(*p == map, c == 0);
    }
}

#[test]
fn polynomial_kernel_on_blobs_and_predict_is_consistent() {
    let centres = Mat::from_fn(3, 2, |r, j| 6.0 * ((r + j) % 3) as f64 - 6.0);
    let (x, truth) = blobs(&centres, 40, 0.3, 10);
    let fx = FeatureMatrix::dense(x).unwrap();
    let kernel = Kernel::Polynomial {
        gamma: 0.1,
        coef0: 1.0,
        degree: 2,
    };
    let kkm = fit_kernel_kmeans(
        &fx,
        &KernelKMeansParams::new(3, kernel)
            .with_n_init(5)
            .check()
            .unwrap(),
        &mut seeded(11),
    )
    .unwrap();
    assert!(same_partition(&kkm.labels, &truth));
    assert!(kkm.converged);
    assert_eq!(kkm.predict(&fx).unwrap(), kkm.labels);
}

#[test]
fn deterministic_by_seed_and_thread_count() {
    let x = gaussian_mat(&mut seeded(12), 400, 4, 1.0);
    let fx = FeatureMatrix::dense(x).unwrap();
    let params = KernelKMeansParams::new(4, Kernel::Rbf { gamma: 0.3 })
        .check()
        .unwrap();
    let one = in_pool(1, || {
        fit_kernel_kmeans(&fx, &params, &mut seeded(13)).unwrap()
    })
    .unwrap();
    let two = in_pool(2, || {
        fit_kernel_kmeans(&fx, &params, &mut seeded(13)).unwrap()
    })
    .unwrap();
    assert_eq!(one, two);
}

#[test]
fn size_limit_and_errors() {
    let x = gaussian_mat(&mut seeded(14), 20, 2, 1.0);
    let fx = FeatureMatrix::dense(x.clone()).unwrap();
    let mut rng = seeded(1);
    let err = fit_kernel_kmeans(
        &fx,
        &KernelKMeansParams::new(2, Kernel::Linear)
            .with_max_points(10)
            .check()
            .unwrap(),
        &mut rng,
    )
    .unwrap_err();
    assert!(matches!(
        err,
        ClusterError::TooLarge {
            n: 20,
            limit: 10,
            ..
        }
    ));
    assert!(err.to_string().contains("OKMF"));
    assert_eq!(
        gimc_cluster::KERNEL_KMEANS_MAX_POINTS,
        KernelKMeansParams::new(2, Kernel::Linear).max_points
    );
    assert!(matches!(
        fit_kernel_kmeans(
            &fx,
            &KernelKMeansParams::new(21, Kernel::Linear).check().unwrap(),
            &mut rng
        ),
        Err(ClusterError::TooFewPoints { k: 21, n: 20 })
    ));
    assert!(
        KernelKMeansParams::new(2, Kernel::Rbf { gamma: -1.0 })
            .check()
            .is_err()
    );
    assert!(
        KernelKMeansParams::new(2, Kernel::Linear)
            .with_n_init(0)
            .check()
            .is_err()
    );
    let mut bad = x;
    bad[(4, 1)] = f64::INFINITY;
    assert!(matches!(
        fit_kernel_kmeans(
            &FeatureMatrix::Dense(bad),
            &KernelKMeansParams::new(2, Kernel::Linear).check().unwrap(),
            &mut rng
        ),
        Err(ClusterError::Linalg(gimc_linalg::LinalgError::NonFinite {
            row: 4,
            col: 1,
            ..
        }))
    ));
    let model = fit_kernel_kmeans(
        &fx,
        &KernelKMeansParams::new(2, Kernel::Linear).check().unwrap(),
        &mut rng,
    )
    .unwrap();
    let wide = FeatureMatrix::dense(Mat::zeros(3, 5)).unwrap();
    assert!(matches!(
        model.predict(&wide),
        Err(ClusterError::DimensionMismatch { .. })
    ));
}
