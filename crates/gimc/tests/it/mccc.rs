//! MCCC (moved here from gimc-cluster with the IMC dependency): recovery of blobs from
//! constraints, errors.

use gimc::{GimcError, MccParams, fit_mccc};
use gimc_cluster::ClusterError;
use gimc_linalg::FeatureMatrix;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{gaussian_mat, seeded};
use rand::Rng;

/// `per` points around each of `centres` (rows), noise std `noise`; returns data and truth.
fn blobs(centres: &Mat<f64>, per: usize, noise: f64, seed: u64) -> (Mat<f64>, Vec<usize>) {
    let (k, d) = centres.shape();
    let eps = gaussian_mat(&mut seeded(seed), k * per, d, noise);
    let truth: Vec<usize> = (0..k * per).map(|i| i % k).collect();
    let x = Mat::from_fn(k * per, d, |i, j| centres[(truth[i], j)] + eps[(i, j)]);
    (x, truth)
}

/// Whether two labelings are the same partition (equal up to renaming the clusters).
fn same_partition(a: &[usize], b: &[usize]) -> bool {
    use std::collections::HashMap;
    let (mut ab, mut ba) = (HashMap::new(), HashMap::new());
    a.iter()
        .zip(b)
        .all(|(&x, &y)| *ab.entry(x).or_insert(y) == y && *ba.entry(y).or_insert(x) == x)
}

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
fn recovers_blobs_from_constraints() {
    let centres = Mat::from_fn(3, 8, |r, j| 6.0 * f64::from(u8::from((r + j) % 3 == 0)));
    let (x, truth) = blobs(&centres, 60, 0.5, 3);
    let fx = FeatureMatrix::dense(x).unwrap();
    let n = truth.len();
    let pairs = pairs_from(&truth, 5 * n, 4);
    let model = fit_mccc(
        &fx,
        &pairs,
        &MccParams::new(3).check().unwrap(),
        &mut seeded(5),
    )
    .unwrap();
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
fn errors() {
    let x = gaussian_mat(&mut seeded(10), 20, 3, 1.0);
    let fx = FeatureMatrix::dense(x).unwrap();
    let pairs = vec![(0, 1, 1.0), (2, 3, 0.0)];
    let mut rng = seeded(1);
    // IMC rank must be below d = 3
    assert!(matches!(
        fit_mccc(&fx, &pairs, &MccParams::new(3).check().unwrap(), &mut rng),
        Err(GimcError::Solver(_))
    ));
    assert!(matches!(
        fit_mccc(
            &fx,
            &[(0, 25, 1.0)],
            &MccParams::new(2).check().unwrap(),
            &mut rng
        ),
        Err(GimcError::Cluster(ClusterError::InvalidInput { .. }))
    ));
    assert!(matches!(
        fit_mccc(
            &fx,
            &pairs,
            &MccParams::new(21).with_rank(2).check().unwrap(),
            &mut rng
        ),
        Err(GimcError::Cluster(ClusterError::TooFewPoints { .. }))
    ));
    // a negative λ is refused by the check
    assert!(matches!(
        MccParams::new(2).with_lambda(-1.0).check(),
        Err(GimcError::Solver(_))
    ));
}
