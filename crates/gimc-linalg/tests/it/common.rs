//! Shared helpers: random sparse matrices and random Ω.

use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{GimcRng, gaussian_mat, seeded};
use gimc_linalg::sprs::{CsMat, TriMat};
use gimc_linalg::{FeatureMatrix, Observed};
use rand::Rng;

/// A random `n × m` CSR matrix, each entry present with probability `density`, values N(0, 1).
pub fn random_csr(rng: &mut GimcRng, n: usize, m: usize, density: f64) -> CsMat<f64> {
    let mut t = TriMat::new((n, m));
    for i in 0..n {
        for j in 0..m {
            if rng.random::<f64>() < density {
                let v: f64 = rng.random::<f64>() * 2.0 - 1.0;
                t.add_triplet(i, j, if v == 0.0 { 0.5 } else { v });
            }
        }
    }
    t.to_csr()
}

/// A random Ω on `n × m` with N(0, 1)-ish values: Bernoulli(density) entries, or exactly one
/// entry when `single` is set.
pub fn random_omega(rng: &mut GimcRng, n: usize, m: usize, density: f64, single: bool) -> Observed {
    let (mut rows, mut cols, mut vals) = (vec![], vec![], vec![]);
    if single {
        rows.push(rng.random_range(0..n));
        cols.push(rng.random_range(0..m));
        vals.push(1.5);
    } else {
        for i in 0..n {
            for j in 0..m {
                if rng.random::<f64>() < density {
                    rows.push(i);
                    cols.push(j);
                    vals.push(rng.random::<f64>() - 0.5);
                }
            }
        }
    }
    // shuffle the triplets' order: the constructor must not depend on it
    let perm: Vec<usize> = {
        let mut p: Vec<usize> = (0..rows.len()).collect();
        for i in (1..p.len()).rev() {
            p.swap(i, rng.random_range(0..=i));
        }
        p
    };
    let r: Vec<usize> = perm.iter().map(|&t| rows[t]).collect();
    let c: Vec<usize> = perm.iter().map(|&t| cols[t]).collect();
    let v: Vec<f64> = perm.iter().map(|&t| vals[t]).collect();
    Observed::from_triplets(n, m, &r, &c, &v).unwrap()
}

/// The same random matrix as `FeatureMatrix::Dense` and `FeatureMatrix::Sparse`.
pub fn feature_pair(seed: u64, n: usize, d: usize, density: f64) -> (FeatureMatrix, FeatureMatrix) {
    let s = random_csr(&mut seeded(seed), n, d, density);
    let dense = gimc_linalg::sparse::csr_to_dense(&s);
    (
        FeatureMatrix::dense(dense).unwrap(),
        FeatureMatrix::sparse(s).unwrap(),
    )
}

/// Max absolute entrywise difference.
pub fn max_diff(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
    assert_eq!(a.shape(), b.shape());
    (a - b).norm_max()
}

/// A dense Gaussian matrix from a seed.
pub fn gauss(seed: u64, n: usize, m: usize) -> Mat<f64> {
    gaussian_mat(&mut seeded(seed), n, m, 1.0)
}
