//! Kernel k-means (DESIGN §3.4, OKMF's baseline): k-means in the feature space of a kernel
//! k(x, y) = ⟨φ(x), φ(y)⟩ (RBF, linear or polynomial, [`gimc_linalg::Kernel`]).
//!
//! **Distances.** With the cluster indicator scaled by size, Z_jc = 1/|c| for j ∈ c, the squared
//! distance of φ(x_i) to the mean μ_c of cluster c is
//!
//! ‖φ(x_i) − μ_c‖² = K_ii − 2 (KZ)_ic + T_c,   T_c = z_cᵀ K z_c = Σ_{j,l∈c} K_jl / |c|²,
//!
//! so one Lloyd iteration is one GEMM `K·Z` (O(n²k)) plus O(nk). The centre shift used by the
//! stopping rule is ‖μ_c^new − μ_c^old‖² = T_c^new − 2 z_c^newᵀ K z_c^old + T_c^old, from the
//! previous iteration's `K·Z`.
//!
//! **Memory: O(n²).** The whole n × n kernel matrix is kept (8n² bytes: 800 MB at n = 10,000);
//! it is computed in blocks of rows (`kernel_block`, one GEMM each, sparse input kept sparse).
//! Fits with n above [`KernelKMeansParams::max_points`] (default
//! [`KERNEL_KMEANS_MAX_POINTS`] = 10,000) are refused with [`ClusterError::TooLarge`]; use
//! [`crate::okmf`] (memory O(p² + pr), independent of n) for larger sets.
//!
//! **Seeding and restarts** are those of [`crate::kmeans`]: greedy k-means++ on the
//! feature-space distances K_ii − 2K_ij + K_jj (the same generator draws in the same order) or
//! k distinct uniform points; one 64-bit seed drawn from the caller's generator, restart r on
//! child stream r; empty clusters re-seeded with the farthest point; ties to the lowest index.
//! Hence with the linear kernel and `tol = 0` the result equals [`crate::fit_kmeans`] with the
//! same parameters and seed, up to rounding (tested).
//!
//! **Stopping**: no label changes, or total squared centre shift ≤ `tol` times the mean
//! feature-space variance (1/n)Σ_i K_ii − (1/n²)Σ_ij K_ij (for the linear kernel this is d
//! times k-means' unit, the mean column variance), or `max_iter` iterations.

use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::observe::{IterativeSolver, NoObserver, Progress, StopReason, run};
use gimc_linalg::rng::{GimcRng, child, seeded};
use gimc_linalg::{FeatureMatrix, Kernel, kernel_block};
use rand::Rng;
use rayon::prelude::*;

use crate::kmeans::{KMeansInit, check_features, counts_of, plus_plus_indices, relocate_empty};
use crate::shard::Shard;
use crate::{ClusterError, Result};
use gimc_linalg::sums::ONE_PROCESS;

/// Default (and documented) limit on the number of points of kernel k-means: the n × n kernel
/// matrix takes 8n² bytes (800 MB at this limit).
pub const KERNEL_KMEANS_MAX_POINTS: usize = 10_000;

/// Rows of X per kernel block (when building K and when predicting).
const BLOCK: usize = 1024;

gimc_linalg::params! {
    /// Hyper-parameters of kernel k-means. Build with [`KernelKMeansParams::new`] (k and the kernel
    /// have no default) and the `with_*` methods; [`KernelKMeansParams::check`] validates them into
    /// the [`ValidKernelKMeansParams`] that [`fit_kernel_kmeans`] takes.
    #[derive(Debug, Clone, PartialEq)]
    pub struct KernelKMeansParams => ValidKernelKMeansParams {
        /// `k` clusters with `kernel` and the defaults.
        required {
            /// Number of clusters k ≥ 1.
            pub k: usize,
            /// The kernel (its parameters are checked by [`KernelKMeansParams::check`]).
            pub kernel: Kernel,
        }
        /// Restarts ≥ 1 (lowest feature-space inertia kept). Default 3.
        pub n_init: usize = 3 => with_n_init,
        /// Maximum Lloyd iterations per restart, ≥ 1. Default 300.
        pub max_iter: usize = 300 => with_max_iter,
        /// Relative centre-shift tolerance (module documentation), finite and ≥ 0. Default 1e-4.
        pub tol: f64 = 1e-4 => with_tol,
        /// Seeding. Default [`KMeansInit::PlusPlus`].
        pub init: KMeansInit = KMeansInit::PlusPlus => with_init,
        /// Largest n accepted (the kernel matrix is n × n). Default [`KERNEL_KMEANS_MAX_POINTS`].
        pub max_points: usize = KERNEL_KMEANS_MAX_POINTS => with_max_points,
    }
    /// Checks k, n_init, max_iter ≥ 1, tol finite ≥ 0 and the kernel's parameters (k ≤ n and
    /// n ≤ `max_points` are checked by the fit).
    check |this| -> crate::ClusterError {
        crate::KMeansParams {
            k: this.k,
            n_init: this.n_init,
            max_iter: this.max_iter,
            tol: this.tol,
            init: this.init,
        }
        .check()?;
        this.kernel.check()?;
    }
}

/// A fitted kernel k-means model. It keeps the training points (to evaluate k(x, x_j) for new
/// points) but not the kernel matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelKMeans {
    /// Label of every training point.
    pub labels: Vec<usize>,
    /// Σ_i ‖φ(x_i) − μ_{label_i}‖² on the training data.
    pub inertia: f64,
    /// Lloyd iterations run by the kept restart.
    pub n_iter: usize,
    /// Whether the kept restart stopped before `max_iter`.
    pub converged: bool,
    kernel: Kernel,
    train: FeatureMatrix,
    /// Memberships defining the centres μ_c (the last update step's labels).
    members: Vec<usize>,
    /// T_c = ‖μ_c‖².
    center_sq_norms: Vec<f64>,
}

impl KernelKMeans {
    /// Number of clusters.
    pub fn k(&self) -> usize {
        self.center_sq_norms.len()
    }

    /// The kernel.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The nearest feature-space centre of every row of `x` (same columns as the training data),
    /// computing k(x, x_j) in blocks of training points: O(n_x · n · d) time, O(n_x · 1024)
    /// memory.
    pub fn predict(&self, x: &FeatureMatrix) -> Result<Vec<usize>> {
        if x.ncols() != self.train.ncols() {
            return Err(ClusterError::DimensionMismatch {
                op: "KernelKMeans::predict",
                expected: format!("{} columns", self.train.ncols()),
                got: format!("{} columns", x.ncols()),
            });
        }
        check_features(x)?;
        let k = self.k();
        let counts = counts_of(&self.members, k);
        let n = self.train.nrows();
        let mut s = Mat::<f64>::zeros(x.nrows(), k);
        for start in (0..n).step_by(BLOCK) {
            let end = (start + BLOCK).min(n);
            let rows: Vec<usize> = (start..end).collect();
            let block = self.train.select_rows(&rows)?.to_dense();
            let kb = kernel_block(&self.kernel, x, block.as_ref())?;
            for (t, &j) in rows.iter().enumerate() {
                let c = self.members[j];
                let w = 1.0 / counts[c].max(1) as f64;
                let src = kb.col_as_slice(t);
                for (o, &v) in s.col_as_slice_mut(c).iter_mut().zip(src) {
                    *o += w * v;
                }
            }
        }
        let diag = gimc_linalg::kernels::kernel_diag(&self.kernel, x)?;
        let (labels, _) = nearest_in_feature_space(&diag, s.as_ref(), &self.center_sq_norms);
        Ok(labels)
    }
}

/// The full kernel matrix K (n × n) of the rows of `x`, built from blocks of columns.
pub(crate) fn kernel_matrix(kernel: &Kernel, x: &FeatureMatrix) -> Result<Mat<f64>> {
    let n = x.nrows();
    if let FeatureMatrix::Dense(m) = x {
        return Ok(kernel_block(kernel, x, m.as_ref())?);
    }
    let mut k = Mat::<f64>::zeros(n, n);
    for start in (0..n).step_by(BLOCK) {
        let end = (start + BLOCK).min(n);
        let rows: Vec<usize> = (start..end).collect();
        let block = x.select_rows(&rows)?.to_dense();
        let kb = kernel_block(kernel, x, block.as_ref())?;
        k.as_mut()
            .subcols_mut(start, end - start)
            .copy_from(kb.as_ref());
    }
    Ok(k)
}

/// Nearest centre (ties to the lowest index) and clamped squared distance, from the diagonal
/// K_ii, S = K·Z and T_c.
fn nearest_in_feature_space(diag: &[f64], s: MatRef<'_, f64>, t: &[f64]) -> (Vec<usize>, Vec<f64>) {
    let n = diag.len();
    let mut labels = vec![0usize; n];
    let mut dists = vec![f64::INFINITY; n];
    labels
        .par_iter_mut()
        .zip(dists.par_iter_mut())
        .enumerate()
        .for_each(|(i, (l, d))| {
            for (c, &tc) in t.iter().enumerate() {
                let dist = diag[i] - 2.0 * s[(i, c)] + tc;
                if dist < *d {
                    *d = dist;
                    *l = c;
                }
            }
            *d = d.max(0.0);
        });
    (labels, dists)
}

/// U = K·E for the 0/1 indicator E of `labels` (n × k): the unnormalised sums Σ_{j∈c} K_ij.
fn cluster_kernel_sums(kmat: &Mat<f64>, labels: &[usize], k: usize) -> Mat<f64> {
    let n = labels.len();
    let e = Mat::from_fn(n, k, |j, c| if labels[j] == c { 1.0 } else { 0.0 });
    kmat * &e
}

/// Updates U = K·E in place for the points that moved from `old` to `new` labels: O(n) per
/// moved point, one task per cluster, moved points in increasing order.
fn update_kernel_sums(kmat: &Mat<f64>, u: &mut Mat<f64>, old: &[usize], new: &[usize]) {
    let moved: Vec<usize> = (0..old.len()).filter(|&j| old[j] != new[j]).collect();
    u.as_mut()
        .par_col_iter_mut()
        .enumerate()
        .for_each(|(c, col)| {
            let col = col.try_as_col_major_mut();
            let Some(col) = col else { return };
            let col = col.as_slice_mut();
            for &j in &moved {
                let sign = if new[j] == c {
                    1.0
                } else if old[j] == c {
                    -1.0
                } else {
                    continue;
                };
                for (o, &v) in col.iter_mut().zip(kmat.col_as_slice(j)) {
                    *o += sign * v;
                }
            }
        });
}

/// S = U / |c| (= K·Z for the size-scaled indicator Z) and T_c = z_cᵀ K z_c.
fn centre_products_from_sums(u: &Mat<f64>, labels: &[usize], k: usize) -> (Mat<f64>, Vec<f64>) {
    let counts = counts_of(labels, k);
    let s = Mat::from_fn(u.nrows(), k, |i, c| u[(i, c)] / counts[c].max(1) as f64);
    let mut t = vec![0.0f64; k];
    for (j, &c) in labels.iter().enumerate() {
        t[c] += s[(j, c)];
    }
    for (tc, &cnt) in t.iter_mut().zip(&counts) {
        *tc /= cnt.max(1) as f64;
    }
    (s, t)
}

/// S = K·Z and T_c for `labels` (every cluster non-empty), computed from scratch.
#[cfg(test)]
fn centre_products(kmat: &Mat<f64>, labels: &[usize], k: usize) -> (Mat<f64>, Vec<f64>) {
    centre_products_from_sums(&cluster_kernel_sums(kmat, labels, k), labels, k)
}

/// Fits kernel k-means to the rows of `x` (module documentation).
///
/// Errors: k > n, n > `max_points` ([`ClusterError::TooLarge`]), NaN/Inf in `x`, overflow.
pub fn fit_kernel_kmeans(
    x: &FeatureMatrix,
    params: &ValidKernelKMeansParams,
    rng: &mut GimcRng,
) -> Result<KernelKMeans> {
    let n = x.nrows();
    if params.k > n {
        return Err(ClusterError::TooFewPoints { k: params.k, n });
    }
    if n > params.max_points {
        return Err(ClusterError::TooLarge {
            method: "kernel k-means",
            n,
            limit: params.max_points,
            reason: "it stores the n x n kernel matrix (8 n^2 bytes); raise max_points if the \
                     memory is there, or use OKMF, whose memory does not grow with n",
        });
    }
    check_features(x)?;
    let kmat = kernel_matrix(&params.kernel, x)?;
    let run = kernel_kmeans_on_matrix(&kmat, params, rng)?;
    Ok(KernelKMeans {
        labels: run.labels,
        inertia: run.inertia,
        n_iter: run.n_iter,
        converged: run.converged,
        kernel: params.kernel,
        train: x.clone(),
        members: run.members,
        center_sq_norms: run.center_sq_norms,
    })
}

/// Kernel k-means on a precomputed kernel matrix `kmat` (n × n, symmetric PSD; not checked):
/// the restarts of [`fit_kernel_kmeans`] without the size limit (the caller owns the matrix).
pub(crate) fn kernel_kmeans_on_matrix(
    kmat: &Mat<f64>,
    params: &ValidKernelKMeansParams,
    rng: &mut GimcRng,
) -> Result<KernelRun> {
    let n = kmat.nrows();
    let diag: Vec<f64> = (0..n).map(|i| kmat[(i, i)]).collect();
    let total_var = if n == 0 {
        0.0
    } else {
        let mean_diag = diag.iter().sum::<f64>() / n as f64;
        let mean_all = kmat.sum() / (n as f64 * n as f64);
        (mean_diag - mean_all).max(0.0)
    };
    let tol_abs = params.tol * total_var;
    let base = seeded(rng.random::<u64>());
    let mut best: Option<KernelRun> = None;
    for restart in 0..params.n_init {
        let mut stream = child(&base, restart as u64);
        let mut lloyd = KernelLloyd {
            kmat,
            diag: &diag,
            params,
            tol_abs,
            rng: &mut stream,
        };
        let mut state = KernelState::empty();
        let report = run(&mut lloyd, &mut state, params.max_iter, &mut NoObserver)?;
        let run = KernelRun {
            labels: state.labels,
            inertia: state.inertia,
            n_iter: report.iterations,
            converged: report.stop_reason == StopReason::Converged,
            members: state.members,
            center_sq_norms: state.t,
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

/// The outcome of one restart.
pub(crate) struct KernelRun {
    pub(crate) labels: Vec<usize>,
    pub(crate) inertia: f64,
    pub(crate) n_iter: usize,
    pub(crate) converged: bool,
    /// The memberships defining the final centres (the labels of the last update step).
    pub(crate) members: Vec<usize>,
    /// ‖μ_c‖² of the final centres.
    pub(crate) center_sq_norms: Vec<f64>,
}

/// One restart of kernel Lloyd as an iterative loop: the seeding and first assignment
/// (`init`), then Lloyd iterations in feature space (`step`) until no label changes or the
/// centres move by at most the tolerance.
struct KernelLloyd<'a> {
    kmat: &'a Mat<f64>,
    diag: &'a [f64],
    params: &'a KernelKMeansParams,
    tol_abs: f64,
    rng: &'a mut GimcRng,
}

/// The iterate of a restart: the centres as S = K·Z and T = (‖μ_c‖²), every point's label and
/// squared distance, the memberships that define the centres, U = K·E for them (kept up to date
/// incrementally; `None` until the first update) and the inertia.
struct KernelState {
    s: Mat<f64>,
    t: Vec<f64>,
    labels: Vec<usize>,
    dists: Vec<f64>,
    members: Vec<usize>,
    sums: Option<Mat<f64>>,
    inertia: f64,
}

impl KernelState {
    /// Before the seeding (`init` fills every field).
    fn empty() -> Self {
        Self {
            s: Mat::zeros(0, 0),
            t: Vec::new(),
            labels: Vec::new(),
            dists: Vec::new(),
            members: Vec::new(),
            sums: None,
            inertia: 0.0,
        }
    }
}

impl IterativeSolver for KernelLloyd<'_> {
    type State = KernelState;
    type Error = ClusterError;

    fn name(&self) -> &'static str {
        "kernel k-means"
    }

    fn init(&mut self, st: &mut KernelState) -> Result<Option<Progress>> {
        let (kmat, diag) = (self.kmat, self.diag);
        let n = diag.len();
        let k = self.params.k;
        let seeds = match self.params.init {
            KMeansInit::PlusPlus => plus_plus_indices(
                &Shard::single(&ONE_PROCESS, n),
                k,
                self.rng,
                &mut |cands: &[usize]| {
                    Ok(Mat::from_fn(n, cands.len(), |i, t| {
                        let j = cands[t];
                        (diag[i] - 2.0 * kmat[(i, j)] + diag[j]).max(0.0)
                    }))
                },
            )?,
            KMeansInit::Random => rand::seq::index::sample(self.rng, n, k).into_vec(),
        };
        // the seeds as "centres": S = K[:, seeds], T = diag[seeds]
        st.s = Mat::from_fn(n, k, |i, c| kmat[(i, seeds[c])]);
        st.t = seeds.iter().map(|&j| diag[j]).collect();
        (st.labels, st.dists) = nearest_in_feature_space(diag, st.s.as_ref(), &st.t);
        st.inertia = st.dists.iter().sum();
        st.members = st.labels.clone();
        Ok(Some(Progress::new(st.inertia, false)))
    }

    fn step(&mut self, st: &mut KernelState, iteration: usize) -> Result<Option<Progress>> {
        let kmat = self.kmat;
        let n = self.diag.len();
        let k = self.params.k;
        relocate_empty(&mut st.labels, &st.dists, k);
        let n_moved = st
            .members
            .iter()
            .zip(&st.labels)
            .filter(|(a, b)| a != b)
            .count();
        // U = K·E for the memberships: updated incrementally, or recomputed by one GEMM when
        // many points move
        match st.sums.as_mut() {
            Some(u) if n_moved <= n / 4 => update_kernel_sums(kmat, u, &st.members, &st.labels),
            _ => st.sums = Some(cluster_kernel_sums(kmat, &st.labels, k)),
        }
        st.members.clone_from(&st.labels);
        let u = st.sums.as_ref().ok_or(ClusterError::NumericalBreakdown {
            method: "kernel k-means",
            iteration,
        })?;
        let (new_s, new_t) = centre_products_from_sums(u, &st.members, k);
        // ‖μ_new − μ_old‖² = T_new − 2 z_newᵀ (K z_old) + T_old, summed over clusters
        let counts = counts_of(&st.members, k);
        let mut cross = vec![0.0f64; k];
        for (j, &c) in st.members.iter().enumerate() {
            cross[c] += st.s[(j, c)];
        }
        let center_shift: f64 = (0..k)
            .map(|c| (new_t[c] - 2.0 * cross[c] / counts[c].max(1) as f64 + st.t[c]).max(0.0))
            .sum();
        st.s = new_s;
        st.t = new_t;
        let (new_labels, new_dists) = nearest_in_feature_space(self.diag, st.s.as_ref(), &st.t);
        let n_changed = st
            .labels
            .iter()
            .zip(&new_labels)
            .filter(|(a, b)| a != b)
            .count();
        st.labels = new_labels;
        st.dists = new_dists;
        st.inertia = st.dists.iter().sum();
        Ok(Some(Progress::new(
            st.inertia,
            n_changed == 0 || center_shift <= self.tol_abs,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimc_linalg::rng::gaussian_mat;

    #[test]
    fn feature_space_distances_match_explicit_linear_means() {
        let x = gaussian_mat(&mut seeded(3), 30, 4, 1.0);
        let fx = FeatureMatrix::dense(x.clone()).unwrap();
        let kmat = kernel_matrix(&Kernel::Linear, &fx).unwrap();
        let labels: Vec<usize> = (0..30).map(|i| i % 3).collect();
        let (s, t) = centre_products(&kmat, &labels, 3);
        let diag: Vec<f64> = (0..30).map(|i| kmat[(i, i)]).collect();
        let (_, d) = nearest_in_feature_space(&diag, s.as_ref(), &t);
        let means = crate::kmeans::cluster_means(
            &fx,
            &labels,
            3,
            &Shard::single(&ONE_PROCESS, labels.len()),
        );
        let (_, d_ref) = crate::nearest_centers(&fx, means.as_ref()).unwrap();
        for (a, b) in d.iter().zip(&d_ref) {
            assert!((a - b).abs() < 1e-10 * (1.0 + b));
        }
    }

    #[test]
    fn sparse_kernel_matrix_equals_dense() {
        let x = gaussian_mat(&mut seeded(4), 1500, 3, 1.0);
        let fx = FeatureMatrix::dense(x.clone()).unwrap();
        let sx =
            FeatureMatrix::sparse(gimc_linalg::sparse::dense_to_csr(x.as_ref()).unwrap()).unwrap();
        let kern = Kernel::Rbf { gamma: 0.7 };
        let a = kernel_matrix(&kern, &fx).unwrap();
        let b = kernel_matrix(&kern, &sx).unwrap();
        assert!((&a - &b).norm_max() < 1e-12);
    }
}
