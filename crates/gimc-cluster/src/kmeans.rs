//! k-means clustering (DESIGN §3.4): k-means++ or uniform seeding, Lloyd iterations parallel over
//! rows, several restarts keeping the lowest inertia, dense or sparse input.
//!
//! **Assignment step.** Squared distances come from one product `P = X·Cᵀ` (n × k) and the
//! expansion ‖x_i − c_r‖² = ‖x_i‖² − 2 P_ir + ‖c_r‖² (clamped at 0 against rounding, DESIGN
//! §3.1), so a sparse X is never densified and the step costs O(nnz(X)·k + n·k). Ties go to
//! the lowest centre index.
//!
//! **Update step.** Centres are the means of their points. The per-cluster sums are accumulated
//! in increasing row order by one task per feature column (dense input) or per cluster (sparse
//! input), so they are bitwise independent of the number of threads, and dense and sparse input
//! sum in the same order. An empty cluster is re-seeded deterministically with the point
//! farthest from its current centre (largest squared distance, ties to the lowest row index)
//! among clusters that keep at least one point, as scikit-learn does; this never increases the
//! inertia.
//!
//! **Stopping.** A restart stops when no label changes (a fixed point), or when the total squared
//! centre shift Σ_r ‖c_r^new − c_r^old‖² is at most `tol` times the mean column variance of X
//! (scikit-learn's relative tolerance), or after `max_iter` iterations. Labels and inertia
//! returned always belong to the returned centres.
//!
//! **Seeding.** Greedy k-means++ (Arthur & Vassilvitskii 2007; scikit-learn's variant): the first
//! centre is a uniform row; each further centre is the best, by resulting potential
//! Σ_i min_r ‖x_i − c_r‖², of 2 + ⌊ln k⌋ candidates drawn with probability proportional to the
//! current squared distance. `Random` picks k distinct rows uniformly.
//!
//! **Determinism.** `fit_kmeans` draws one 64-bit seed from the caller's generator and gives
//! restart `r` the child stream `r` of that seed ([`gimc_linalg::rng::child`]); restarts run one
//! after the other and every parallel kernel is thread-count independent, so the result depends
//! only on the generator's state.

use std::time::Instant;

use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::observe::{IterativeSolver, NoObserver, Observer, Progress, StopReason, run};
use gimc_linalg::rng::{GimcRng, child, seeded};
use gimc_linalg::sparse::{AsSparseView, csr_check_finite};
use gimc_linalg::{FeatureMatrix, dense::check_finite};
use rand::Rng;
use rayon::prelude::*;

use crate::error::{check_nonneg, param_err};
use crate::shard::Shard;
use crate::{ClusterError, Result};
use gimc_linalg::sums::{ONE_PROCESS, RowSums};

/// Rows handled by one rayon task in the assignment step.
const ROW_BLOCK: usize = 1024;

/// How the initial centres of each restart are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum KMeansInit {
    /// Greedy k-means++ with 2 + ⌊ln k⌋ candidates per centre (the default).
    #[default]
    PlusPlus,
    /// k distinct rows drawn uniformly.
    Random,
}

gimc_linalg::params! {
    /// Hyper-parameters of k-means. Build with [`KMeansParams::new`] and the `with_*` methods;
    /// [`KMeansParams::check`] validates them into the [`ValidKMeansParams`] that [`fit_kmeans`]
    /// takes.
    #[derive(Debug, Clone, PartialEq)]
    pub struct KMeansParams => ValidKMeansParams {
        /// `k` clusters with the default settings (3 restarts, 300 iterations, tol 1e-4,
        /// k-means++).
        required {
            /// Number of clusters k ≥ 1 (at most the number of points).
            pub k: usize,
        }
        /// Number of restarts ≥ 1; the one with the lowest inertia is kept. Default 3.
        pub n_init: usize = 3 => with_n_init,
        /// Maximum Lloyd iterations per restart, ≥ 1. Default 300.
        pub max_iter: usize = 300 => with_max_iter,
        /// Relative tolerance on the total squared centre shift, in units of the mean column
        /// variance of X (scikit-learn's convention); finite and ≥ 0. Default 1e-4.
        pub tol: f64 = 1e-4 => with_tol,
        /// Seeding method. Default [`KMeansInit::PlusPlus`].
        pub init: KMeansInit = KMeansInit::PlusPlus => with_init,
    }
    /// Checks the parameters that do not depend on the data: k ≥ 1, n_init ≥ 1, max_iter ≥ 1,
    /// tol finite and ≥ 0 (k ≤ n is checked by the fit).
    check |this| -> crate::ClusterError {
        let bad = |name, reason: &str| Err(param_err(name, reason));
        if this.k == 0 {
            return bad("k", "must be at least 1");
        }
        if this.n_init == 0 {
            return bad("n_init", "must be at least 1");
        }
        if this.max_iter == 0 {
            return bad("max_iter", "must be at least 1");
        }
        check_nonneg("tol", this.tol)?;
    }
}

/// A fitted k-means model.
#[derive(Debug, Clone, PartialEq)]
pub struct KMeans {
    /// Centres, one per row (k × d).
    pub centers: Mat<f64>,
    /// Label (index of the nearest centre) of every training point.
    pub labels: Vec<usize>,
    /// Σ_i ‖x_i − c_{label_i}‖² on the training data.
    pub inertia: f64,
    /// Lloyd iterations run by the kept restart.
    pub n_iter: usize,
    /// Whether the kept restart met a stopping criterion before `max_iter`.
    pub converged: bool,
}

impl KMeans {
    /// Number of clusters.
    pub fn k(&self) -> usize {
        self.centers.nrows()
    }

    /// The index of the nearest centre for every row of `x` (same number of columns as the
    /// training data).
    pub fn predict(&self, x: &FeatureMatrix) -> Result<Vec<usize>> {
        Ok(nearest_centers(x, self.centers.as_ref())?.0)
    }
}

/// Fits k-means to the rows of `x`; see the module documentation for the algorithm.
///
/// `observer` receives a record after the seeding of every restart (iteration 0) and after every
/// Lloyd iteration: the objective is the inertia Σ_i min_r ‖x_i − c_r‖² (never increasing
/// within a restart, up to rounding), with extras `restart` (0-based), `center_shift` (the total
/// squared centre shift of the iteration, 0 at iteration 0) and `n_changed` (points whose label
/// changed, n at iteration 0).
/// [`ObserverAction::Stop`](gimc_linalg::observe::ObserverAction::Stop) ends the fit with
/// [`ClusterError::Interrupted`].
///
/// Errors: k > n ([`ClusterError::TooFewPoints`]), NaN/Inf in `x` (with position), or overflow
/// during the iterations.
pub fn fit_kmeans(
    x: &FeatureMatrix,
    params: &ValidKMeansParams,
    rng: &mut GimcRng,
    observer: &mut (impl Observer + ?Sized),
) -> Result<KMeans> {
    fit_kmeans_on_shards(x, params, rng, observer, &ONE_PROCESS)
}

/// [`fit_kmeans`] on rows shared by several processes: `x` holds this process's rows, the
/// processes' shards are contiguous blocks of the whole in the order of their ranks, and
/// `sums` sums across the processes (MPI in `gimc cluster --mpi`). Every process must call it
/// with the same parameters and the same generator state. The result is the fit on the union
/// of the shards, up to the rounding of sums taken in another order: every process receives
/// the same centres, inertia and iteration count, and the labels of its own rows. With
/// [`gimc_linalg::OneProcess`] it is [`fit_kmeans`], bit for bit.
///
/// An error on one process (NaN in its rows) is returned on that process only;
/// the caller must then stop every process (the command line aborts the MPI job).
pub fn fit_kmeans_sharded(
    x: &FeatureMatrix,
    params: &ValidKMeansParams,
    rng: &mut GimcRng,
    sums: &dyn RowSums,
) -> Result<KMeans> {
    fit_kmeans_on_shards(x, params, rng, &mut NoObserver, sums)
}

fn fit_kmeans_on_shards(
    x: &FeatureMatrix,
    params: &ValidKMeansParams,
    rng: &mut GimcRng,
    observer: &mut (impl Observer + ?Sized),
    sums: &dyn RowSums,
) -> Result<KMeans> {
    let started = Instant::now();
    let shard = if sums.processes() <= 1 {
        Shard::single(sums, x.nrows())
    } else {
        Shard::layout(sums, x.nrows())?
    };
    let n = shard.total;
    if params.k > n {
        return Err(ClusterError::TooFewPoints { k: params.k, n });
    }
    check_features(x)?;
    let xx = x.row_sq_norms();
    let d = x.ncols();
    let mean_var = if d == 0 {
        0.0
    } else {
        global_column_stds(x, &shard)?
            .iter()
            .map(|s| s * s)
            .sum::<f64>()
            / d as f64
    };
    let tol_abs = params.tol * mean_var;
    let base = seeded(rng.random::<u64>());
    let mut best: Option<KMeans> = None;
    for restart in 0..params.n_init {
        let mut stream = child(&base, restart as u64);
        let mut lloyd = Lloyd {
            x,
            xx: &xx,
            shard: &shard,
            params,
            tol_abs,
            rng: &mut stream,
            restart,
            started,
        };
        let mut state = LloydState::empty();
        let report = run(&mut lloyd, &mut state, params.max_iter, &mut *observer)?;
        if report.stop_reason == StopReason::Observer {
            return Err(ClusterError::Interrupted {
                iteration: report.iterations,
            });
        }
        let run = KMeans {
            centers: state.centers,
            labels: state.labels,
            inertia: state.inertia,
            n_iter: report.iterations,
            converged: report.stop_reason == StopReason::Converged,
        };
        if best.as_ref().is_none_or(|b| run.inertia < b.inertia) {
            best = Some(run);
        }
    }
    best.ok_or(ClusterError::InvalidParameter {
        name: "n_init",
        reason: "must be at least 1".into(),
    })
}

/// The population standard deviation of every column over all shards' rows (two passes: the
/// column means, then the squared deviations from them, each summed across the processes);
/// with one process, [`FeatureMatrix::column_stds`] bit for bit.
fn global_column_stds(x: &FeatureMatrix, shard: &Shard<'_>) -> Result<Vec<f64>> {
    let n = shard.total;
    if n == 0 {
        return Ok(vec![0.0; x.ncols()]);
    }
    let mut means = x.column_sums();
    shard.sum_vec(&mut means);
    for m in &mut means {
        *m /= n as f64;
    }
    let mut ss = x.column_sq_deviations(&means)?;
    shard.sum_vec(&mut ss);
    Ok(ss.iter().map(|s| (s / n as f64).sqrt()).collect())
}

/// For every row of `x`, the index of the nearest row of `centers` (k × d, k ≥ 1) and the
/// squared distance to it, through one product `X·Cᵀ` (sparse `x` stays sparse).
pub fn nearest_centers(
    x: &FeatureMatrix,
    centers: MatRef<'_, f64>,
) -> Result<(Vec<usize>, Vec<f64>)> {
    if centers.nrows() == 0 {
        return Err(ClusterError::InvalidParameter {
            name: "centers",
            reason: "at least one centre is needed".into(),
        });
    }
    if centers.ncols() != x.ncols() {
        return Err(ClusterError::DimensionMismatch {
            op: "nearest_centers",
            expected: format!("centres with {} columns", x.ncols()),
            got: format!("{} columns", centers.ncols()),
        });
    }
    check_finite(centers)?;
    check_features(x)?;
    assign(x, &x.row_sq_norms(), centers)
}

/// Rejects NaN/Inf entries of `x`, reporting the position.
pub(crate) fn check_features(x: &FeatureMatrix) -> Result<()> {
    match x {
        FeatureMatrix::Dense(m) => check_finite(m.as_ref())?,
        FeatureMatrix::Sparse(m) => csr_check_finite(m)?,
    }
    Ok(())
}

/// Squared norms of the rows of a dense matrix.
pub(crate) fn row_sq_norms(a: MatRef<'_, f64>) -> Vec<f64> {
    let mut out = vec![0.0; a.nrows()];
    for j in 0..a.ncols() {
        for (o, &v) in out.iter_mut().zip(a.col(j).iter()) {
            *o += v * v;
        }
    }
    out
}

/// Squared distances (n × t) from every row of `x` to every row of `c` (t × d).
pub(crate) fn sq_dists(x: &FeatureMatrix, xx: &[f64], c: MatRef<'_, f64>) -> Result<Mat<f64>> {
    let mut p = x.mul_dense(c.transpose())?;
    let cc = row_sq_norms(c);
    p.as_mut()
        .par_col_iter_mut()
        .zip(cc.par_iter())
        .for_each(|(col, &cr)| {
            for (v, &xi) in col.iter_mut().zip(xx) {
                *v = (xi - 2.0 * *v + cr).max(0.0);
            }
        });
    Ok(p)
}

/// Assignment step: nearest centre (ties to the lowest index) and squared distance per row.
pub(crate) fn assign(
    x: &FeatureMatrix,
    xx: &[f64],
    centers: MatRef<'_, f64>,
) -> Result<(Vec<usize>, Vec<f64>)> {
    let p = x.mul_dense(centers.transpose())?;
    let cc = row_sq_norms(centers);
    let n = x.nrows();
    let mut labels = vec![0usize; n];
    let mut dists = vec![f64::INFINITY; n];
    labels
        .par_chunks_mut(ROW_BLOCK)
        .zip(dists.par_chunks_mut(ROW_BLOCK))
        .enumerate()
        .for_each(|(b, (lab, dis))| {
            let start = b * ROW_BLOCK;
            let end = start + lab.len();
            let xb = &xx[start..end];
            for (r, &cr) in cc.iter().enumerate() {
                let col = &p.col_as_slice(r)[start..end];
                for (((l, d), &xi), &pi) in lab.iter_mut().zip(dis.iter_mut()).zip(xb).zip(col) {
                    let dist = xi - 2.0 * pi + cr;
                    if dist < *d {
                        *d = dist;
                        *l = r;
                    }
                }
            }
            for d in dis.iter_mut() {
                *d = d.max(0.0);
            }
        });
    Ok((labels, dists))
}

/// Number of points per cluster.
pub(crate) fn counts_of(labels: &[usize], k: usize) -> Vec<usize> {
    let mut counts = vec![0usize; k];
    for &l in labels {
        counts[l] += 1;
    }
    counts
}

/// Moves, for every empty cluster (in increasing index order), the point farthest from its
/// centre among clusters with at least two points into that cluster. Returns how many moved.
pub(crate) fn relocate_empty(labels: &mut [usize], dists: &[f64], k: usize) -> usize {
    let mut counts = counts_of(labels, k);
    let empties: Vec<usize> = (0..k).filter(|&r| counts[r] == 0).collect();
    if empties.is_empty() {
        return 0;
    }
    let mut order: Vec<usize> = (0..labels.len()).collect();
    order.sort_by(|&a, &b| dists[b].total_cmp(&dists[a]).then(a.cmp(&b)));
    let mut candidates = order.into_iter();
    let mut moved = 0;
    for r in empties {
        for i in candidates.by_ref() {
            let old = labels[i];
            if counts[old] > 1 {
                counts[old] -= 1;
                counts[r] += 1;
                labels[i] = r;
                moved += 1;
                break;
            }
        }
    }
    moved
}

/// [`relocate_empty`] over the shards: the counts are summed, and for every empty cluster each
/// process proposes its farthest eligible point (largest distance, ties to the lowest index);
/// the proposals are summed into one slot per process and every process takes the same one.
/// With one process, [`relocate_empty`] itself.
fn relocate_empty_sharded(
    labels: &mut [usize],
    dists: &[f64],
    k: usize,
    shard: &Shard<'_>,
) -> usize {
    if shard.sums.processes() <= 1 {
        return relocate_empty(labels, dists, k);
    }
    let mut counts: Vec<f64> = counts_of(labels, k).iter().map(|&c| c as f64).collect();
    shard.sum_vec(&mut counts);
    let empties: Vec<usize> = (0..k).filter(|&r| counts[r] == 0.0).collect();
    let mut moved = 0;
    for r in empties {
        // (distance, global index, cluster) of this shard's best eligible point; −1: none
        let mine = labels
            .iter()
            .zip(dists)
            .enumerate()
            .filter(|&(_, (&l, _))| counts[l] > 1.0)
            .fold(None::<(f64, usize)>, |best, (i, (_, &d))| match best {
                Some((bd, _)) if bd >= d => best,
                _ => Some((d, i)),
            });
        let slot = match mine {
            Some((d, i)) => [d, (shard.offset + i) as f64, labels[i] as f64],
            None => [-1.0, 0.0, 0.0],
        };
        let proposals = shard.per_process(&slot);
        let pick = proposals
            .iter()
            .filter(|p| p[0] >= 0.0)
            .fold(None::<&Vec<f64>>, |best, p| match best {
                Some(b) if b[0] > p[0] || (b[0] == p[0] && b[1] <= p[1]) => best,
                _ => Some(p),
            });
        let Some(p) = pick else { break };
        let (global, old) = (p[1] as usize, p[2] as usize);
        if global >= shard.offset && global < shard.offset + shard.local {
            labels[global - shard.offset] = r;
        }
        counts[old] -= 1.0;
        counts[r] += 1.0;
        moved += 1;
    }
    moved
}

/// Update step: the mean of each cluster's points (k × d), sums and counts taken over every
/// shard. Every cluster must be non-empty.
pub(crate) fn cluster_means(
    x: &FeatureMatrix,
    labels: &[usize],
    k: usize,
    shard: &Shard<'_>,
) -> Mat<f64> {
    let d = x.ncols();
    let mut counts: Vec<f64> = counts_of(labels, k).iter().map(|&c| c as f64).collect();
    let mut sums = cluster_sums(x, labels, k);
    shard.sum_vec(&mut counts);
    shard.sum_mat(&mut sums);
    for j in 0..d {
        for (r, &c) in counts.iter().enumerate() {
            if c > 0.0 {
                sums[(r, j)] /= c;
            }
        }
    }
    sums
}

/// Per-cluster sums of the rows of `x` (k × d), in a thread-count independent order.
pub(crate) fn cluster_sums(x: &FeatureMatrix, labels: &[usize], k: usize) -> Mat<f64> {
    match x {
        FeatureMatrix::Dense(m) => dense_sums(m, labels, k),
        FeatureMatrix::Sparse(m) => {
            if m.is_csr() {
                sparse_sums(m, labels, k)
            } else {
                sparse_sums(&m.to_csr(), labels, k)
            }
        }
    }
}

/// Per-cluster sums for dense X: one task per feature column, rows in increasing order.
pub(crate) fn dense_sums(m: &Mat<f64>, labels: &[usize], k: usize) -> Mat<f64> {
    let mut sums = Mat::<f64>::zeros(k, m.ncols());
    sums.as_mut()
        .par_col_iter_mut()
        .enumerate()
        .for_each(|(j, col)| {
            let mut buf = vec![0.0f64; k];
            for (&l, &v) in labels.iter().zip(m.col_as_slice(j)) {
                buf[l] += v;
            }
            for (o, b) in col.iter_mut().zip(buf) {
                *o = b;
            }
        });
    sums
}

/// Per-cluster sums for CSR X: one task per cluster, its rows in increasing order.
pub(crate) fn sparse_sums(m: &impl AsSparseView, labels: &[usize], k: usize) -> Mat<f64> {
    let m = m.sparse_view();
    let d = m.cols();
    if d == 0 || k == 0 {
        return Mat::zeros(k, d);
    }
    // members of every cluster, in increasing row order (counting sort)
    let counts = counts_of(labels, k);
    let mut starts = vec![0usize; k + 1];
    for r in 0..k {
        starts[r + 1] = starts[r] + counts[r];
    }
    let mut next = starts.clone();
    let mut members = vec![0usize; labels.len()];
    for (i, &l) in labels.iter().enumerate() {
        members[next[l]] = i;
        next[l] += 1;
    }
    let ptr = m.proper_indptr();
    let (idx, val) = (m.indices(), m.data());
    let mut buf = vec![0.0f64; k * d];
    buf.par_chunks_mut(d).enumerate().for_each(|(r, out)| {
        for &i in &members[starts[r]..starts[r + 1]] {
            let range = ptr[i]..ptr[i + 1];
            for (&j, &v) in idx[range.clone()].iter().zip(&val[range]) {
                out[j] += v;
            }
        }
    });
    Mat::from_fn(k, d, |r, j| buf[r * d + j])
}

/// k distinct rows drawn uniformly from every shard's rows.
fn random_init(
    x: &FeatureMatrix,
    k: usize,
    rng: &mut GimcRng,
    shard: &Shard<'_>,
) -> Result<Mat<f64>> {
    let rows = rand::seq::index::sample(rng, shard.total, k).into_vec();
    shard.gather_rows(x, &rows)
}

/// Greedy k-means++ seeding (module documentation) on the rows of `x`.
pub(crate) fn plus_plus(
    x: &FeatureMatrix,
    xx: &[f64],
    k: usize,
    rng: &mut GimcRng,
) -> Result<Mat<f64>> {
    plus_plus_sharded(x, xx, k, rng, &Shard::single(&ONE_PROCESS, x.nrows()))
}

/// [`plus_plus`] over every shard's rows.
fn plus_plus_sharded(
    x: &FeatureMatrix,
    xx: &[f64],
    k: usize,
    rng: &mut GimcRng,
    shard: &Shard<'_>,
) -> Result<Mat<f64>> {
    let chosen = plus_plus_indices(shard, k, rng, &mut |cands: &[usize]| {
        let rows = shard.gather_rows(x, cands)?;
        sq_dists(x, xx, rows.as_ref())
    })?;
    shard.gather_rows(x, &chosen)
}

/// Greedy k-means++ on the points of `shard` (global indices), known only through
/// `dists_to(candidates)`, which returns the squared distances (this process's points ×
/// candidates.len(), clamped at 0) to each candidate. Returns the chosen point indices. Shared
/// by k-means and kernel k-means, so both consume the generator identically and pick the same
/// points when their distances agree.
pub(crate) fn plus_plus_indices(
    shard: &Shard<'_>,
    k: usize,
    rng: &mut GimcRng,
    dists_to: &mut dyn FnMut(&[usize]) -> Result<Mat<f64>>,
) -> Result<Vec<usize>> {
    let n = shard.total;
    let n_local = 2 + (k as f64).ln().floor() as usize;
    let first = rng.random_range(0..n);
    let mut chosen = vec![first];
    let mut closest: Vec<f64> = dists_to(&[first])?.col_as_slice(0).to_vec();
    let mut cumsum = vec![0.0f64; closest.len()];
    for _ in 1..k {
        let mut total = 0.0;
        for (c, &v) in cumsum.iter_mut().zip(&closest) {
            total += v;
            *c = total;
        }
        // every process's D² total (one process: its own, as it is)
        let totals: Vec<f64> = if shard.sums.processes() <= 1 {
            vec![total]
        } else {
            shard.per_process(&[total]).iter().map(|t| t[0]).collect()
        };
        let total: f64 = if totals.len() == 1 {
            totals[0]
        } else {
            totals.iter().sum()
        };
        let last_positive = shard.last_positive(&closest);
        let mut candidates = Vec::with_capacity(n_local);
        for _ in 0..n_local {
            candidates.push(match last_positive {
                Some(last) if total > 0.0 => {
                    let u = rng.random::<f64>() * total;
                    shard.locate(&cumsum, &totals, u).min(last)
                }
                // every point coincides with a centre: any row will do
                _ => rng.random_range(0..n),
            });
        }
        let dc = dists_to(&candidates)?;
        let mut potentials: Vec<f64> = (0..n_local)
            .map(|t| {
                closest
                    .iter()
                    .zip(dc.col_as_slice(t))
                    .map(|(&a, &b)| a.min(b))
                    .sum()
            })
            .collect();
        shard.sum_vec(&mut potentials);
        let mut best = (0usize, f64::INFINITY);
        for (t, &pot) in potentials.iter().enumerate() {
            if pot < best.1 {
                best = (t, pot);
            }
        }
        for (c, &v) in closest.iter_mut().zip(dc.col_as_slice(best.0)) {
            *c = c.min(v);
        }
        chosen.push(candidates[best.0]);
    }
    Ok(chosen)
}

/// One restart of k-means as an iterative loop: the seeding and first assignment (`init`),
/// then Lloyd iterations (`step`) until no label changes or the centres move by at most the
/// tolerance. Its progress carries the extras `restart`, `center_shift` and `n_changed`, and its
/// records count seconds from `started`, the start of the fit's restarts.
struct Lloyd<'a, 's> {
    x: &'a FeatureMatrix,
    xx: &'a [f64],
    shard: &'a Shard<'s>,
    params: &'a KMeansParams,
    tol_abs: f64,
    rng: &'a mut GimcRng,
    restart: usize,
    started: Instant,
}

/// The iterate of a restart: the centres, every row's label and squared distance to its
/// centre, and the inertia (summed over the processes).
struct LloydState {
    centers: Mat<f64>,
    labels: Vec<usize>,
    dists: Vec<f64>,
    inertia: f64,
}

impl LloydState {
    /// Before the seeding (`init` fills every field).
    fn empty() -> Self {
        Self {
            centers: Mat::zeros(0, 0),
            labels: Vec::new(),
            dists: Vec::new(),
            inertia: 0.0,
        }
    }
}

impl Lloyd<'_, '_> {
    fn progress(&self, inertia: f64, center_shift: f64, n_changed: usize, done: bool) -> Progress {
        Progress {
            objective: inertia,
            extras: vec![
                ("restart", self.restart as f64),
                ("center_shift", center_shift),
                ("n_changed", n_changed as f64),
            ],
            converged: done,
        }
    }
}

impl IterativeSolver for Lloyd<'_, '_> {
    type State = LloydState;
    type Error = ClusterError;

    fn name(&self) -> &'static str {
        "k-means"
    }

    fn started(&self) -> Option<Instant> {
        Some(self.started)
    }

    fn init(&mut self, st: &mut LloydState) -> Result<Option<Progress>> {
        let k = self.params.k;
        st.centers = match self.params.init {
            KMeansInit::PlusPlus => plus_plus_sharded(self.x, self.xx, k, self.rng, self.shard)?,
            KMeansInit::Random => random_init(self.x, k, self.rng, self.shard)?,
        };
        (st.labels, st.dists) = assign(self.x, self.xx, st.centers.as_ref())?;
        st.inertia = self.shard.sum(st.dists.iter().sum());
        Ok(Some(self.progress(
            st.inertia,
            0.0,
            self.shard.total,
            false,
        )))
    }

    fn step(&mut self, st: &mut LloydState, _iteration: usize) -> Result<Option<Progress>> {
        let k = self.params.k;
        relocate_empty_sharded(&mut st.labels, &st.dists, k, self.shard);
        let new_centers = cluster_means(self.x, &st.labels, k, self.shard);
        let center_shift = (&new_centers - &st.centers).squared_norm_l2();
        st.centers = new_centers;
        let (new_labels, new_dists) = assign(self.x, self.xx, st.centers.as_ref())?;
        let changed_here = st
            .labels
            .iter()
            .zip(&new_labels)
            .filter(|(a, b)| a != b)
            .count();
        let n_changed = self.shard.sum(changed_here as f64) as usize;
        st.labels = new_labels;
        st.dists = new_dists;
        st.inertia = self.shard.sum(st.dists.iter().sum());
        let done = n_changed == 0 || center_shift <= self.tol_abs;
        Ok(Some(self.progress(
            st.inertia,
            center_shift,
            n_changed,
            done,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimc_linalg::sparse::dense_to_csr;

    fn fm(rows: &[[f64; 2]]) -> FeatureMatrix {
        FeatureMatrix::dense(Mat::from_fn(rows.len(), 2, |i, j| rows[i][j])).unwrap()
    }

    #[test]
    fn check_rejects_bad_parameters() {
        assert!(KMeansParams::new(2).check().is_ok());
        assert!(KMeansParams::new(0).check().is_err());
        assert!(KMeansParams::new(2).with_n_init(0).check().is_err());
        assert!(KMeansParams::new(2).with_max_iter(0).check().is_err());
        assert!(KMeansParams::new(2).with_tol(-1.0).check().is_err());
        assert!(KMeansParams::new(2).with_tol(f64::NAN).check().is_err());
    }

    #[test]
    fn relocation_takes_the_farthest_point_of_a_shared_cluster() {
        // cluster 0 has points 0,1,2; cluster 1 has only point 3 (farthest overall); 2 is empty
        let mut labels = vec![0, 0, 0, 1];
        let dists = [0.1, 5.0, 0.2, 9.0];
        assert_eq!(relocate_empty(&mut labels, &dists, 3), 1);
        assert_eq!(labels, vec![0, 2, 0, 1]);
        let mut full = vec![0, 1];
        assert_eq!(relocate_empty(&mut full, &[1.0, 1.0], 2), 0);
    }

    #[test]
    fn sums_agree_bitwise_dense_and_sparse() {
        let x = Mat::from_fn(7, 3, |i, j| {
            if (i + j) % 3 == 0 {
                0.0
            } else {
                (i as f64 * 0.37 - j as f64).sin()
            }
        });
        let s = dense_to_csr(x.as_ref()).unwrap();
        let labels = [2, 0, 1, 2, 0, 0, 1];
        assert_eq!(dense_sums(&x, &labels, 3), sparse_sums(&s, &labels, 3));
    }

    #[test]
    fn duplicate_points_do_not_break_seeding() {
        let x = fm(&[[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]);
        let km = fit_kmeans(
            &x,
            &KMeansParams::new(3).check().unwrap(),
            &mut seeded(1),
            &mut NoObserver,
        )
        .unwrap();
        // all centres coincide; ties go to the lowest index
        assert_eq!(km.inertia, 0.0);
        assert_eq!(km.labels, vec![0, 0, 0]);
        assert!(km.converged);
    }

    #[test]
    fn single_cluster_is_the_mean() {
        let x = fm(&[[0.0, 0.0], [2.0, 0.0], [1.0, 3.0]]);
        let km = fit_kmeans(
            &x,
            &KMeansParams::new(1).check().unwrap(),
            &mut seeded(2),
            &mut NoObserver,
        )
        .unwrap();
        assert!((km.centers[(0, 0)] - 1.0).abs() < 1e-12);
        assert!((km.centers[(0, 1)] - 1.0).abs() < 1e-12);
        assert!((km.inertia - (2.0 + 2.0 + 4.0)).abs() < 1e-9);
    }
}
