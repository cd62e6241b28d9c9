//! Helpers shared by the synthetic experiments (`gimc-fig1`, `imc-sample-complexity`,
//! `pu-imc`): error conversion from the solver and feature-map crates, mean / standard
//! deviation and its "mean ± std" table cell (also `gimc-table3`, `okmf-table2`), random
//! hold-out splits of an observed set, building Ω from triplets, the area under the ROC curve,
//! and a runner for single-threaded jobs side by side (`okmf-table2`).

use gimc_linalg::Observed;
use gimc_linalg::faer::MatRef;
use gimc_linalg::rng::GimcRng;
use rand::seq::SliceRandom;

use crate::ExperimentError;

/// Mean and sample standard deviation (0 for fewer than two values; NaN mean when empty).
pub fn mean_std(values: &[f64]) -> (f64, f64) {
    let n = values.len();
    if n == 0 {
        return (f64::NAN, 0.0);
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, 0.0);
    }
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1) as f64;
    (mean, var.sqrt())
}

/// A table cell "mean ± std" of `values` ([`mean_std`], 4 digits after the point), or
/// [`MISSING`](crate::report::MISSING) when there are none.
pub(crate) fn mean_pm_std_cell(values: &[f64]) -> String {
    if values.is_empty() {
        return crate::report::MISSING.to_owned();
    }
    let (m, s) = mean_std(values);
    format!("{m:.4} ± {s:.4}")
}

/// Splits `entries` at random into (train, validation) with round(`fraction`·len) validation
/// entries (at least one and at most len − 1 when len ≥ 2). Both parts keep their input order.
pub(crate) fn holdout<T: Clone>(
    entries: &[T],
    fraction: f64,
    rng: &mut GimcRng,
) -> (Vec<T>, Vec<T>) {
    let n = entries.len();
    let n_val = ((n as f64) * fraction).round() as usize;
    let n_val = if n >= 2 { n_val.clamp(1, n - 1) } else { 0 };
    let mut idx: Vec<usize> = (0..n).collect();
    idx.shuffle(rng);
    let mut is_val = vec![false; n];
    for &i in idx.iter().take(n_val) {
        is_val[i] = true;
    }
    let (mut train, mut val) = (Vec::with_capacity(n - n_val), Vec::with_capacity(n_val));
    for (e, v) in entries.iter().zip(is_val) {
        if v {
            val.push(e.clone());
        } else {
            train.push(e.clone());
        }
    }
    (train, val)
}

/// Ω of an `nrows × ncols` matrix from (i, j, value) triplets.
pub(crate) fn observed_from(
    nrows: usize,
    ncols: usize,
    entries: &[(usize, usize, f64)],
) -> Result<Observed, ExperimentError> {
    let rows: Vec<usize> = entries.iter().map(|e| e.0).collect();
    let cols: Vec<usize> = entries.iter().map(|e| e.1).collect();
    let vals: Vec<f64> = entries.iter().map(|e| e.2).collect();
    Ok(Observed::from_triplets(nrows, ncols, &rows, &cols, &vals)?)
}

/// Root-mean-square difference between `pred` at the entries and the entries' values.
pub(crate) fn rmse_on(pred: MatRef<'_, f64>, entries: &[(usize, usize, f64)]) -> f64 {
    if entries.is_empty() {
        return f64::NAN;
    }
    let sq: f64 = entries
        .iter()
        .map(|&(i, j, v)| {
            let d = pred[(i, j)] - v;
            d * d
        })
        .sum();
    (sq / entries.len() as f64).sqrt()
}

/// [`gimc_metrics::roc_auc`], NaN when either side is empty or a score is not finite (a
/// table cell that cannot be computed).
pub(crate) fn auc(positives: &[f64], negatives: &[f64]) -> f64 {
    gimc_metrics::roc_auc(positives, negatives).unwrap_or(f64::NAN)
}

/// Runs `job(i)` for i in 0..`count` on as many worker threads as there are cores, each job
/// entirely on its own thread: every worker installs a one-thread rayon pool (so the library's
/// row-parallel loops stay on it) and faer runs sequentially ([`SequentialFaer`]). For
/// experiments that time single fits whose work is too fine-grained to share two cores (one
/// fit per core keeps both busy, and a fit's wall time is its one-thread time). Results come
/// back in job order; the first error (in job order) is returned.
pub(crate) fn run_jobs_single_threaded<T: Send>(
    count: usize,
    job: impl Fn(usize) -> Result<T, ExperimentError> + Sync,
) -> Result<Vec<T>, ExperimentError> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let _seq = SequentialFaer::new();
    let workers = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .clamp(1, count.max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<T, ExperimentError>>>> =
        Mutex::new((0..count).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        break;
                    }
                    let r = match &pool {
                        Ok(pool) => pool.install(|| job(i)),
                        Err(e) => Err(ExperimentError::Failed(format!("thread pool: {e}"))),
                    };
                    if let Ok(mut slots) = results.lock() {
                        slots[i] = Some(r);
                    }
                }
            });
        }
    });
    let slots = results
        .into_inner()
        .map_err(|_| ExperimentError::Failed("a worker thread panicked".into()))?;
    slots
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(ExperimentError::Failed("a job did not run".into()))))
        .collect()
}

/// Sets faer's global parallelism to `Par::Seq` and restores the previous setting when dropped.
#[derive(Debug)]
pub struct SequentialFaer(gimc_linalg::faer::Par);

impl SequentialFaer {
    /// Switches faer to sequential until the guard is dropped.
    pub fn new() -> Self {
        let prev = gimc_linalg::faer::get_global_parallelism();
        gimc_linalg::faer::set_global_parallelism(gimc_linalg::faer::Par::Seq);
        Self(prev)
    }
}

impl Default for SequentialFaer {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for SequentialFaer {
    fn drop(&mut self) {
        gimc_linalg::faer::set_global_parallelism(self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimc_linalg::rng::seeded;

    #[test]
    fn auc_is_nan_when_undefined() {
        assert_eq!(auc(&[1.0, 2.0], &[0.0]), 1.0);
        assert!(auc(&[], &[1.0]).is_nan());
    }

    #[test]
    fn holdout_partitions() {
        let v: Vec<usize> = (0..100).collect();
        let (t, h) = holdout(&v, 0.15, &mut seeded(3));
        assert_eq!(h.len(), 15);
        assert_eq!(t.len(), 85);
        let mut all: Vec<usize> = t.iter().chain(&h).copied().collect();
        all.sort_unstable();
        assert_eq!(all, v);
        let (t, h) = holdout(&[1, 2], 0.0, &mut seeded(3));
        assert_eq!((t.len(), h.len()), (1, 1));
    }

    #[test]
    fn mean_std_values() {
        let (m, s) = mean_std(&[1.0, 2.0, 3.0]);
        assert!((m - 2.0).abs() < 1e-15 && (s - 1.0).abs() < 1e-15);
        assert_eq!(mean_std(&[4.0]), (4.0, 0.0));
    }
}
