//! MCCC and the spectral step: constraint matrix, recovery of blobs from constraints, the
//! embedding's properties, errors.

use gimc_cluster::{
    ClusterError, KMeansParams, MccParams, constraint_matrix, fit_mccc, spectral_kmeans,
};
use gimc_linalg::FeatureMatrix;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{gaussian_mat, seeded};
use rand::Rng;

use crate::common::{blobs, same_partition};

/// `count` random pairs (i ≠ j) labelled 1 when `truth` agrees, else 0.
fn pairs_from(truth: &[usize], count: usize, seed: u64) -> Vec<(usize, usize, f64)> {
    let mut rng = seeded(seed);
    let n = truth.len();
    (0..count)
        .filter_map(|_| {
            let (i, j) = (rng.random_range(0..n), rng.random_range(0..n));
            (i != j).then(|| (i, j, f64::from(u8::from(truth[i] == truth[j]))))
        })
        .collect()
}

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
fn recovers_blobs_from_constraints() {
    let centres = Mat::from_fn(3, 8, |r, j| 6.0 * f64::from(u8::from((r + j) % 3 == 0)));
    let (x, truth) = blobs(&centres, 60, 0.5, 3);
    let fx = FeatureMatrix::dense(x).unwrap();
    let n = truth.len();
    let pairs = pairs_from(&truth, 5 * n, 4);
    let model = fit_mccc(&fx, &pairs, &MccParams::new(3), &mut seeded(5)).unwrap();
    assert!(same_partition(&model.labels, &truth));
    assert_eq!(model.spectral.embedding.shape(), (n, 3));
    assert_eq!(model.imc.w.shape(), (8, 3));
    // the fitted constraint matrix matches most constraints
    let p = fx.mul_dense(model.imc.w.as_ref()).unwrap();
    let q = fx.mul_dense(model.imc.h.as_ref()).unwrap();
    let agree = pairs
        .iter()
        .filter(|&&(i, j, s)| {
            let v: f64 = (0..3).map(|c| p[(i, c)] * q[(j, c)]).sum();
            (v > 0.5) == (s == 1.0)
        })
        .count();
    assert!(agree as f64 > 0.95 * pairs.len() as f64);
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
    let out = spectral_kmeans(p.as_ref(), &KMeansParams::new(3), &mut seeded(8)).unwrap();
    let t = &out.embedding;
    let gram = t.transpose() * t;
    assert!((&gram - Mat::<f64>::identity(3, 3)).norm_max() < 1e-10);
    assert!(out.singular_values.windows(2).all(|w| w[0] >= w[1]));
    assert!(same_partition(&out.kmeans.labels, &truth));
    // fewer columns than clusters: the available vectors are used
    let narrow = Mat::from_fn(n, 1, |i, _| truth[i] as f64);
    let out = spectral_kmeans(narrow.as_ref(), &KMeansParams::new(3), &mut seeded(9)).unwrap();
    assert_eq!(out.embedding.ncols(), 1);
    assert!(same_partition(&out.kmeans.labels, &truth));
}

#[test]
fn errors() {
    let x = gaussian_mat(&mut seeded(10), 20, 3, 1.0);
    let fx = FeatureMatrix::dense(x).unwrap();
    let pairs = vec![(0, 1, 1.0), (2, 3, 0.0)];
    let mut rng = seeded(1);
    // IMC rank must be below d = 3
    assert!(matches!(
        fit_mccc(&fx, &pairs, &MccParams::new(3), &mut rng),
        Err(ClusterError::Solver(_))
    ));
    assert!(matches!(
        fit_mccc(&fx, &[(0, 25, 1.0)], &MccParams::new(2), &mut rng),
        Err(ClusterError::InvalidInput { .. })
    ));
    assert!(matches!(
        fit_mccc(&fx, &pairs, &MccParams::new(21).with_rank(2), &mut rng),
        Err(ClusterError::TooFewPoints { .. })
    ));
    assert!(matches!(
        fit_mccc(&fx, &pairs, &MccParams::new(2).with_lambda(-1.0), &mut rng),
        Err(ClusterError::Solver(_))
    ));
    let empty = Mat::<f64>::zeros(0, 2);
    assert!(spectral_kmeans(empty.as_ref(), &KMeansParams::new(1), &mut rng).is_err());
    let mut nan = Mat::<f64>::zeros(4, 2);
    nan[(1, 1)] = f64::NAN;
    assert!(spectral_kmeans(nan.as_ref(), &KMeansParams::new(2), &mut rng).is_err());
}
