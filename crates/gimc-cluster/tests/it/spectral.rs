//! The constraint matrix and the spectral step: symmetry and deduplication, the embedding's
//! properties, errors (MCCC itself is tested in `gimc`).

use gimc_cluster::{ClusterError, KMeansParams, constraint_matrix, spectral_kmeans};
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{gaussian_mat, seeded};

use crate::common::same_partition;

#[test]
fn constraint_matrix_is_symmetric_and_deduplicated() {
    let pairs = [(0, 1, 1.0), (2, 1, 0.0), (1, 0, 1.0), (3, 3, 1.0)];
    let omega = constraint_matrix(4, &pairs).unwrap();
    assert_eq!(omega.shape(), (4, 4));
    assert_eq!(omega.len(), 5); // (0,1),(1,0),(1,2),(2,1),(3,3)
    let dense = omega.to_dense();
    assert_eq!(dense, dense.transpose().to_owned());
    assert_eq!(dense[(1, 0)], 1.0);
    assert_eq!(dense[(1, 2)], 0.0);
    let entries: Vec<(usize, usize)> = omega.iter().map(|(i, j, _)| (i, j)).collect();
    assert!(entries.contains(&(2, 1)) && entries.contains(&(1, 2)));
    for (bad, what) in [
        (vec![(0, 1, 1.0), (1, 0, 0.0)], "pair 1"),
        (vec![(0, 4, 1.0)], "pair 0"),
        (vec![(0, 1, 0.5)], "label 0.5"),
    ] {
        let err = constraint_matrix(4, &bad).unwrap_err();
        assert!(matches!(err, ClusterError::InvalidInput { .. }));
        assert!(err.to_string().contains(what), "{err}");
    }
    assert!(constraint_matrix(4, &[]).is_err());
}

#[test]
fn spectral_step_embedding_is_orthonormal_and_clusters_a_planted_structure() {
    // P = indicator(3 clusters) · R + small noise, so the top-3 left singular vectors span the
    // indicators
    let n = 90;
    let truth: Vec<usize> = (0..n).map(|i| i % 3).collect();
    let r = gaussian_mat(&mut seeded(6), 3, 5, 1.0);
    let noise = gaussian_mat(&mut seeded(7), n, 5, 0.01);
    let p = Mat::from_fn(n, 5, |i, j| r[(truth[i], j)] + noise[(i, j)]);
    let out = spectral_kmeans(
        p.as_ref(),
        &KMeansParams::new(3).check().unwrap(),
        &mut seeded(8),
    )
    .unwrap();
    let t = &out.embedding;
    let gram = t.transpose() * t;
    assert!((&gram - Mat::<f64>::identity(3, 3)).norm_max() < 1e-10);
    assert!(out.singular_values.windows(2).all(|w| w[0] >= w[1]));
    assert!(same_partition(&out.kmeans.labels, &truth));
    // fewer columns than clusters: the available vectors are used
    let narrow = Mat::from_fn(n, 1, |i, _| truth[i] as f64);
    let out = spectral_kmeans(
        narrow.as_ref(),
        &KMeansParams::new(3).check().unwrap(),
        &mut seeded(9),
    )
    .unwrap();
    assert_eq!(out.embedding.ncols(), 1);
    assert!(same_partition(&out.kmeans.labels, &truth));
}

#[test]
fn spectral_errors() {
    let mut rng = seeded(1);
    let empty = Mat::<f64>::zeros(0, 2);
    assert!(
        spectral_kmeans(
            empty.as_ref(),
            &KMeansParams::new(1).check().unwrap(),
            &mut rng
        )
        .is_err()
    );
    let mut nan = Mat::<f64>::zeros(4, 2);
    nan[(1, 1)] = f64::NAN;
    assert!(
        spectral_kmeans(
            nan.as_ref(),
            &KMeansParams::new(2).check().unwrap(),
            &mut rng
        )
        .is_err()
    );
    let small = Mat::<f64>::identity(3, 2);
    assert!(matches!(
        spectral_kmeans(
            small.as_ref(),
            &KMeansParams::new(4).check().unwrap(),
            &mut rng
        ),
        Err(ClusterError::TooFewPoints { .. })
    ));
}
