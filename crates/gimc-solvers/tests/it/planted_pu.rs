//! The planted positive-unlabeled problem of the PU-IMC tests: gimc-solvers' tests declare this
//! module, and gimc's include the same file by path.

use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{GimcRng, gaussian_mat};
use gimc_linalg::{FeatureMatrix, Observed};
use rand::Rng;

/// Block-structured features: one-hot group (4 groups) plus noise, 3 pure-noise columns and a
/// constant (bias) column. The bias lets a model predict "1 everywhere" cheaply, which is what
/// fitting the observed positives alone rewards.
pub fn features(rng: &mut GimcRng, n: usize) -> FeatureMatrix {
    let noise = gaussian_mat(rng, n, 8, 1.0);
    FeatureMatrix::dense(Mat::from_fn(n, 8, |i, j| match j {
        0..4 => (if i % 4 == j { 1.0 } else { 0.0 }) + 0.05 * noise[(i, j)],
        4..7 => noise[(i, j)],
        _ => 1.0,
    }))
    .unwrap()
}

/// An n × n positive-unlabeled problem: T_ij = 1 when rows i and j of the [`features`] fall in
/// the same group, and each 1 observed unless hidden with probability ρ.
pub struct PlantedPu {
    /// The row features.
    pub x: FeatureMatrix,
    /// The column features.
    pub y: FeatureMatrix,
    /// T, row-major (entry (i, j) at i·n + j).
    pub truth: Vec<bool>,
    /// The observed positives (all 1).
    pub positives: Observed,
}

impl PlantedPu {
    /// Whether (i, j) is a positive that is not observed.
    pub fn hidden(&self, i: usize, j: usize) -> bool {
        let n = self.positives.ncols();
        self.truth[i * n + j] && !self.positives.row(i).is_some_and(|(c, _)| c.contains(&j))
    }
}

/// Draws the row features, the column features and then the hidden positives (fraction `rho`)
/// from `rng`, in this order.
pub fn planted_pu(rng: &mut GimcRng, n: usize, rho: f64) -> PlantedPu {
    let x = features(rng, n);
    let y = features(rng, n);
    let truth: Vec<bool> = (0..n * n).map(|t| (t / n) % 4 == (t % n) % 4).collect();
    let (mut rows, mut cols) = (vec![], vec![]);
    for i in 0..n {
        for j in 0..n {
            if truth[i * n + j] && rng.random::<f64>() >= rho {
                rows.push(i);
                cols.push(j);
            }
        }
    }
    let positives = Observed::from_triplets(n, n, &rows, &cols, &vec![1.0; rows.len()]).unwrap();
    PlantedPu {
        x,
        y,
        truth,
        positives,
    }
}
