//! Shared helpers: blobs and random sparse data.

use gimc_linalg::FeatureMatrix;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{GimcRng, gaussian_mat, seeded};
use gimc_linalg::sparse::dense_to_csr;
use rand::Rng;

/// `per` points around each of `centres` (rows), noise std `noise`; returns data and truth.
pub fn blobs(centres: &Mat<f64>, per: usize, noise: f64, seed: u64) -> (Mat<f64>, Vec<usize>) {
    let (k, d) = centres.shape();
    let eps = gaussian_mat(&mut seeded(seed), k * per, d, noise);
    let truth: Vec<usize> = (0..k * per).map(|i| i % k).collect();
    let x = Mat::from_fn(k * per, d, |i, j| centres[(truth[i], j)] + eps[(i, j)]);
    (x, truth)
}

/// A random matrix with about `density` non-zeros, as dense and sparse feature matrices.
pub fn sparse_pair(
    rng: &mut GimcRng,
    n: usize,
    d: usize,
    density: f64,
) -> (FeatureMatrix, FeatureMatrix) {
    let m = Mat::from_fn(n, d, |_, _| {
        if rng.random::<f64>() < density {
            rng.random::<f64>() * 4.0 - 2.0
        } else {
            0.0
        }
    });
    let s = dense_to_csr(m.as_ref()).unwrap();
    (
        FeatureMatrix::dense(m).unwrap(),
        FeatureMatrix::sparse(s).unwrap(),
    )
}

/// Whether two labelings are the same partition (equal up to renaming the clusters).
pub fn same_partition(a: &[usize], b: &[usize]) -> bool {
    use std::collections::HashMap;
    let (mut ab, mut ba) = (HashMap::new(), HashMap::new());
    a.iter()
        .zip(b)
        .all(|(&x, &y)| *ab.entry(x).or_insert(y) == y && *ba.entry(y).or_insert(x) == x)
}
