//! Mini-batch k-means: near-k-means inertia on blobs, dense = sparse, determinism, errors.

use gimc_cluster::{
    ClusterError, KMeansParams, MiniBatchKMeansParams, fit_kmeans, fit_minibatch_kmeans,
};
use gimc_linalg::FeatureMatrix;
use gimc_linalg::dense::in_pool;
use gimc_linalg::faer::Mat;
use gimc_linalg::observe::NoObserver;
use gimc_linalg::rng::seeded;

use crate::common::{blobs, same_partition, sparse_pair};

#[test]
fn reaches_near_kmeans_inertia_on_blobs() {
    let centres = Mat::from_fn(6, 4, |r, j| 8.0 * ((r * 5 + j * 3) % 7) as f64 + r as f64);
    let (x, truth) = blobs(&centres, 500, 1.0, 21);
    let fx = FeatureMatrix::dense(x).unwrap();
    let km = fit_kmeans(
        &fx,
        &KMeansParams::new(6).with_n_init(5).check().unwrap(),
        &mut seeded(1),
        &mut NoObserver,
    )
    .unwrap();
    for seed in 0..4 {
        let mb = fit_minibatch_kmeans(
            &fx,
            &MiniBatchKMeansParams::new(6)
                .with_batch_size(256)
                .check()
                .unwrap(),
            &mut seeded(seed),
        )
        .unwrap();
        assert!(
            mb.inertia <= 1.02 * km.inertia,
            "mini-batch {} vs k-means {}",
            mb.inertia,
            km.inertia
        );
        assert!(same_partition(&mb.labels, &truth));
        assert_eq!(mb.predict(&fx).unwrap(), mb.labels);
        assert_eq!(mb.n_iter, (10 * 3000usize).div_ceil(256));
    }
}

#[test]
fn dense_and_sparse_agree_and_runs_are_deterministic() {
    let (dense, sparse) = sparse_pair(&mut seeded(3), 600, 20, 0.2);
    let params = MiniBatchKMeansParams::new(5)
        .with_batch_size(64)
        .with_max_steps(50)
        .check()
        .unwrap();
    let a = fit_minibatch_kmeans(&dense, &params, &mut seeded(4)).unwrap();
    let b = fit_minibatch_kmeans(&sparse, &params, &mut seeded(4)).unwrap();
    assert_eq!(a.labels, b.labels);
    assert!((&a.centers - &b.centers).norm_max() < 1e-10);
    let one = in_pool(1, || {
        fit_minibatch_kmeans(&sparse, &params, &mut seeded(4)).unwrap()
    })
    .unwrap();
    let two = in_pool(2, || {
        fit_minibatch_kmeans(&sparse, &params, &mut seeded(4)).unwrap()
    })
    .unwrap();
    assert_eq!(one, two);
    assert_eq!(b.n_iter, 50);
}

#[test]
fn errors() {
    let (dense, _) = sparse_pair(&mut seeded(5), 10, 3, 0.9);
    let mut rng = seeded(1);
    assert!(matches!(
        fit_minibatch_kmeans(
            &dense,
            &MiniBatchKMeansParams::new(11).check().unwrap(),
            &mut rng
        ),
        Err(ClusterError::TooFewPoints { k: 11, n: 10 })
    ));
    for bad in [
        MiniBatchKMeansParams::new(0),
        MiniBatchKMeansParams::new(2).with_batch_size(0),
        MiniBatchKMeansParams::new(2).with_n_init(0),
        MiniBatchKMeansParams::new(2).with_epochs(0),
    ] {
        assert!(matches!(
            bad.check(),
            Err(ClusterError::InvalidParameter { .. })
        ));
    }
    let mut m = dense.to_dense();
    m[(2, 0)] = f64::NAN;
    assert!(
        fit_minibatch_kmeans(
            &FeatureMatrix::Dense(m),
            &MiniBatchKMeansParams::new(2).check().unwrap(),
            &mut rng
        )
        .is_err()
    );
}
