//! Seeded random-number helpers (DESIGN §2, determinism).
//!
//! Every random draw in gimc comes from a [`GimcRng`] (ChaCha8) created from an explicit seed and
//! passed in by the caller. [`child`] derives independent streams for parallel work so that
//! results do not depend on the number of threads.

use faer::Mat;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};

/// The generator used throughout gimc.
pub type GimcRng = rand_chacha::ChaCha8Rng;

/// A generator from a 64-bit seed.
pub fn seeded(seed: u64) -> GimcRng {
    GimcRng::seed_from_u64(seed)
}

/// An independent generator for stream `stream` of `parent`'s seed, without advancing `parent`.
///
/// Used to give each parallel task (row block, restart, trial) its own reproducible stream.
pub fn child(parent: &GimcRng, stream: u64) -> GimcRng {
    let mut rng = GimcRng::from_seed(parent.get_seed());
    rng.set_stream(stream.wrapping_add(1));
    rng
}

/// A `rows × cols` matrix of independent N(0, std²) entries, drawn column by column.
pub fn gaussian_mat(rng: &mut GimcRng, rows: usize, cols: usize, std: f64) -> Mat<f64> {
    let mut m = Mat::<f64>::zeros(rows, cols);
    for j in 0..cols {
        for i in 0..rows {
            let z: f64 = StandardNormal.sample(rng);
            m[(i, j)] = std * z;
        }
    }
    m
}

/// A vector of `len` independent N(0, std²) draws.
pub fn gaussian_vec(rng: &mut GimcRng, len: usize, std: f64) -> Vec<f64> {
    (0..len)
        .map(|_| {
            let z: f64 = StandardNormal.sample(rng);
            std * z
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_draws() {
        let a = gaussian_mat(&mut seeded(7), 5, 4, 1.0);
        let b = gaussian_mat(&mut seeded(7), 5, 4, 1.0);
        let c = gaussian_mat(&mut seeded(8), 5, 4, 1.0);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn children_differ_from_each_other_and_are_reproducible() {
        let p = seeded(3);
        let a = gaussian_vec(&mut child(&p, 0), 8, 1.0);
        let b = gaussian_vec(&mut child(&p, 1), 8, 1.0);
        assert_ne!(a, b);
        assert_eq!(a, gaussian_vec(&mut child(&p, 0), 8, 1.0));
    }

    #[test]
    fn gaussian_moments() {
        let v = gaussian_vec(&mut seeded(1), 200_000, 2.0);
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64;
        assert!(mean.abs() < 0.02, "mean {mean}");
        assert!((var - 4.0).abs() < 0.05, "var {var}");
    }
}
