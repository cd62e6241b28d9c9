//! Mini-batch (online) k-means (Sculley 2010, "Web-scale k-means clustering"; DESIGN §3.4, the
//! large-scale baseline of OKMF's Table 2), on dense or sparse input.
//!
//! **Seeding.** k-means++ ([`crate::kmeans`]'s greedy variant) on a uniform sample of
//! `init_size` rows (default 3 × batch size, at least 3k, at most n); with `n_init` > 1 several
//! seedings (each on its own sample) are tried and the one with the lowest inertia on its sample
//! is kept, as scikit-learn does.
//!
//! **Steps.** Each step draws `batch_size` rows uniformly with replacement (Sculley's
//! "M ← b examples picked randomly from X"), assigns them to their nearest centre with the
//! centres of the start of the step (one product X_M·Cᵀ, sparse rows stay sparse), then moves
//! each centre c toward its points with the per-centre learning rate η = 1/v_c, v_c being the
//! number of points ever assigned to c: c ← (1 − η)c + ηx point by point. Applied to the m
//! points of c in a batch this telescopes to c ← (v_c c + Σ x)/(v_c + m), which is what is
//! computed (the per-cluster sums in a fixed order, so the result does not depend on the
//! number of threads). A centre that receives no point stays where it is. There are
//! `max_steps` steps (default: `epochs` passes' worth, ⌈epochs·n/batch_size⌉).
//!
//! **Result.** A [`KMeans`] whose labels and inertia come from one final full assignment pass;
//! `n_iter` is the number of steps and `converged` is always true (no early stopping).

use gimc_linalg::FeatureMatrix;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{GimcRng, child, seeded};
use rand::Rng;

use crate::error::param_err;
use crate::kmeans::{KMeans, assign, check_features, cluster_sums, plus_plus};
use crate::{ClusterError, Result};

gimc_linalg::params! {
    /// Hyper-parameters of mini-batch k-means. Build with [`MiniBatchKMeansParams::new`] and the
    /// `with_*` methods; [`MiniBatchKMeansParams::check`] validates them into the
    /// [`ValidMiniBatchKMeansParams`] that [`fit_minibatch_kmeans`] takes.
    #[derive(Debug, Clone, PartialEq)]
    pub struct MiniBatchKMeansParams => ValidMiniBatchKMeansParams {
        /// `k` clusters with the defaults.
        required {
            /// Number of clusters k ≥ 1.
            pub k: usize,
        }
        /// Rows per step ≥ 1. Default 1024 (scikit-learn's).
        pub batch_size: usize = 1024 => with_batch_size,
        /// Passes' worth of steps when `max_steps` is 0: ⌈epochs·n/batch_size⌉ steps. Default 10.
        pub epochs: usize = 10 => with_epochs,
        /// Number of steps; 0 (the default) means "from `epochs`".
        pub max_steps: usize = 0 => with_max_steps,
        /// Rows sampled for seeding; 0 (the default) means 3·batch_size (at least 3k), capped at n.
        pub init_size: usize = 0 => with_init_size,
        /// Seedings tried (the best on its sample is kept) ≥ 1. Default 3.
        pub n_init: usize = 3 => with_n_init,
    }
    /// Checks k, batch_size, n_init ≥ 1 and that epochs or max_steps is positive (k ≤ n is
    /// checked by the fit).
    check |this| -> crate::ClusterError {
        let bad = |name, reason: &str| Err(param_err(name, reason));
        if this.k == 0 {
            return bad("k", "must be at least 1");
        }
        if this.batch_size == 0 {
            return bad("batch_size", "must be at least 1");
        }
        if this.n_init == 0 {
            return bad("n_init", "must be at least 1");
        }
        if this.epochs == 0 && this.max_steps == 0 {
            return bad("epochs", "epochs or max_steps must be positive");
        }
    }
}

impl MiniBatchKMeansParams {
    /// The number of steps for n rows.
    fn steps(&self, n: usize) -> usize {
        if self.max_steps > 0 {
            self.max_steps
        } else {
            (self.epochs.saturating_mul(n))
                .div_ceil(self.batch_size)
                .max(1)
        }
    }
}

/// Sculley's per-centre update for one batch whose rows have the given `labels`: for each
/// centre c with m points in the batch, c ← (v_c c + Σ x)/(v_c + m) and v_c ← v_c + m, which is
/// the point-by-point rule c ← (1 − 1/v_c)c + x/v_c (v_c incremented first) summed up.
fn update_centres(
    centers: &mut Mat<f64>,
    counts: &mut [usize],
    batch: &FeatureMatrix,
    labels: &[usize],
) {
    let k = counts.len();
    let sums = cluster_sums(batch, labels, k);
    let mut m = vec![0usize; k];
    for &l in labels {
        m[l] += 1;
    }
    for c in 0..k {
        if m[c] == 0 {
            continue;
        }
        let (old, new) = (counts[c] as f64, (counts[c] + m[c]) as f64);
        for j in 0..centers.ncols() {
            centers[(c, j)] = (old * centers[(c, j)] + sums[(c, j)]) / new;
        }
        counts[c] += m[c];
    }
}

/// Fits mini-batch k-means to the rows of `x` (module documentation). Draws one seed from `rng`;
/// the seeding and the steps use child streams of it.
///
/// Errors: k > n, NaN/Inf in `x` (with position), overflow.
pub fn fit_minibatch_kmeans(
    x: &FeatureMatrix,
    params: &ValidMiniBatchKMeansParams,
    rng: &mut GimcRng,
) -> Result<KMeans> {
    let n = x.nrows();
    let k = params.k;
    if k > n {
        return Err(ClusterError::TooFewPoints { k, n });
    }
    check_features(x)?;
    let base = seeded(rng.random::<u64>());
    let init_size = if params.init_size > 0 {
        params.init_size
    } else {
        (3 * params.batch_size).max(3 * k)
    }
    .clamp(k, n);
    // seeding: best of n_init k-means++ runs, each on its own sample
    let mut best: Option<(Mat<f64>, f64)> = None;
    for r in 0..params.n_init {
        let mut stream = child(&base, r as u64);
        let rows = rand::seq::index::sample(&mut stream, n, init_size).into_vec();
        let sample = x.select_rows(&rows)?;
        let xx = sample.row_sq_norms();
        let centers = plus_plus(&sample, &xx, k, &mut stream)?;
        let (_, d) = assign(&sample, &xx, centers.as_ref())?;
        let inertia: f64 = d.iter().sum();
        if best.as_ref().is_none_or(|b| inertia < b.1) {
            best = Some((centers, inertia));
        }
    }
    let mut centers = best.map(|b| b.0).ok_or(ClusterError::InvalidParameter {
        name: "n_init",
        reason: "must be at least 1".into(),
    })?;
    let mut counts = vec![0usize; k];
    let mut stream = child(&base, params.n_init as u64);
    let steps = params.steps(n);
    for step in 0..steps {
        let rows: Vec<usize> = (0..params.batch_size)
            .map(|_| stream.random_range(0..n))
            .collect();
        let batch = x.select_rows(&rows)?;
        let (labels, _) = assign(&batch, &batch.row_sq_norms(), centers.as_ref())?;
        update_centres(&mut centers, &mut counts, &batch, &labels);
        if !centers.as_ref().is_all_finite() {
            return Err(ClusterError::NumericalBreakdown {
                method: "mini-batch k-means",
                iteration: step + 1,
            });
        }
    }
    let xx = x.row_sq_norms();
    let (labels, dists) = assign(x, &xx, centers.as_ref())?;
    let inertia = dists.iter().sum();
    Ok(KMeans {
        centers,
        labels,
        inertia,
        n_iter: steps,
        converged: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimc_linalg::rng::gaussian_mat;

    #[test]
    fn batch_update_equals_sculleys_point_by_point_rule() {
        let x = gaussian_mat(&mut seeded(1), 40, 3, 1.0);
        let fx = FeatureMatrix::dense(x.clone()).unwrap();
        let labels: Vec<usize> = (0..40).map(|i| (i * 7) % 3).collect();
        let start = gaussian_mat(&mut seeded(2), 3, 3, 1.0);
        let mut counts = vec![0usize, 5, 2];
        let mut centres = start.clone();
        update_centres(&mut centres, &mut counts, &fx, &labels);
        // Sculley 2010, Algorithm 1: v[c] += 1; η = 1/v[c]; c ← (1 − η)c + ηx
        let mut v = [0usize, 5, 2];
        let mut reference = start;
        for (i, &c) in labels.iter().enumerate() {
            v[c] += 1;
            let eta = 1.0 / v[c] as f64;
            for j in 0..3 {
                reference[(c, j)] = (1.0 - eta) * reference[(c, j)] + eta * x[(i, j)];
            }
        }
        assert_eq!(counts, v.to_vec());
        assert!((&centres - &reference).norm_max() < 1e-12);
    }
}
