//! Shared generators for the integration tests.

use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{GimcRng, gaussian_mat, seeded};
use gimc_linalg::{FeatureMatrix, Observed};
use gimc_solvers::{ImcModel, ImcProblem, Side};
use rand::seq::index::sample;

/// `count` distinct (i, j) pairs of an n × m matrix, sorted.
pub fn random_pairs(rng: &mut GimcRng, n: usize, m: usize, count: usize) -> Vec<(usize, usize)> {
    let mut idx = sample(rng, n * m, count).into_vec();
    idx.sort_unstable();
    idx.into_iter().map(|t| (t / m, t % m)).collect()
}

/// The entries of `a` at `pairs` as an observed set.
pub fn observe(a: &Mat<f64>, pairs: &[(usize, usize)]) -> Observed {
    let rows: Vec<usize> = pairs.iter().map(|p| p.0).collect();
    let cols: Vec<usize> = pairs.iter().map(|p| p.1).collect();
    let vals: Vec<f64> = pairs.iter().map(|&(i, j)| a[(i, j)]).collect();
    Observed::from_triplets(a.nrows(), a.ncols(), &rows, &cols, &vals).unwrap()
}

/// ‖A − B‖_F / ‖A‖_F.
pub fn rel_err(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
    (a - b).norm_l2() / a.norm_l2()
}

/// A planted IMC problem: Gaussian X (n × d), Y (n × d), rank-k Z* = W*H*ᵀ, A = X Z* Yᵀ.
pub struct Planted {
    pub x: FeatureMatrix,
    pub y: FeatureMatrix,
    pub a: Mat<f64>,
}

impl Planted {
    /// The partial IMC problem of the planted features observed at `omega`.
    pub fn problem<'a>(&'a self, omega: &'a Observed) -> ImcProblem<'a> {
        ImcProblem::partial(Side::Features(&self.x), Side::Features(&self.y), omega).unwrap()
    }

    /// ‖A − Â‖_F / ‖A‖_F of the scores Â that `model` gives every (row, column) pair.
    pub fn rel_err_of(&self, model: &ImcModel) -> f64 {
        let ahat = model
            .scores_for_rows(Side::Features(&self.x), Side::Features(&self.y))
            .unwrap();
        rel_err(&self.a, &ahat)
    }
}

pub fn planted_imc(n: usize, d: usize, k: usize, seed: u64) -> Planted {
    let mut rng = seeded(seed);
    let x = gaussian_mat(&mut rng, n, d, 1.0);
    let y = gaussian_mat(&mut rng, n, d, 1.0);
    let w = gaussian_mat(&mut rng, d, k, 1.0);
    let h = gaussian_mat(&mut rng, d, k, 1.0);
    let a = &x * &w * h.transpose() * y.transpose();
    Planted {
        x: FeatureMatrix::dense(x).unwrap(),
        y: FeatureMatrix::dense(y).unwrap(),
        a,
    }
}

/// A planted rank-k n × m matrix.
pub fn planted_low_rank(n: usize, m: usize, k: usize, seed: u64) -> Mat<f64> {
    let mut rng = seeded(seed);
    let u = gaussian_mat(&mut rng, n, k, 1.0);
    let v = gaussian_mat(&mut rng, m, k, 1.0);
    &u * v.transpose()
}
