//! Online kernel matrix factorisation, OKMF (Páez-Torres & González 2015; DESIGN §3.4).
//!
//! **Model.** A budget B of p points (random rows of X, or k-means centres) spans the factors:
//! every φ(x) is approximated by Φ(B) W h with W (p × r) shared and h (r) per point, r = k the
//! number of clusters. The per-sample objective is
//!
//! J(W, h; x) = ½‖φ(x) − Φ(B)Wh‖² + (λ/2)‖W‖² + (α/2)‖h‖²
//!            = ½k(x, x) − k_xᵀWh + ½hᵀWᵀK_B W h + (λ/2)‖W‖² + (α/2)‖h‖²,
//!
//! with K_B = k(B, B) and k_x = k(B, x). Its minimiser in h is
//! h = (WᵀK_B W + αI)⁻¹ Wᵀk_x, where J(W, h) = ½(k(x, x) − (Wᵀk_x)·h) + (λ/2)‖W‖², and its
//! gradient in W at fixed h is
//!
//! ∂J/∂W = −k_x hᵀ + K_B W h hᵀ + λW
//!
//! (DESIGN §3.4: the paper prints −αI and the opposite sign on the first two terms; these signs
//! follow from differentiating J and are confirmed by a finite-difference test).
//!
//! **SGD.** Each epoch visits the rows in a fresh seeded pseudo-random order (a Feistel
//! permutation with cycle walking: O(1) memory instead of an n-long index vector) in mini-batches
//! of `batch_size` rows. For a batch X_b: the kernel rows K_b = k(X_b, B) (b × p) by one GEMM
//! ([`gimc_linalg::kernel_block`]), M = K_B W, the r × r Cholesky of WᵀM + αI, H = K_b W
//! (WᵀM + αI)⁻¹ (b × r, one h per row), then the mean gradient over the batch
//! (−K_bᵀH + M HᵀH)/b + λW and W ← W − γ_t·gradient. `batch_size` = 1 is the paper's per-sample
//! SGD exactly; larger batches average the per-sample gradients (the authors' code also uses
//! mini-batches). With `nonnegative` (the default) W is projected onto W ≥ 0 after every step,
//! as in the authors' reference code, so that the columns Φ(B)w_j stay conic combinations of
//! budget points.
//!
//! **Step size** ([`OkmfStep`]): `Normalized` (the default) takes γ_t = η_t / L_t with
//! L_t = λ_max(K_B)·‖H‖²_F/b + λ, an upper bound on the curvature of the batch objective in W
//! (its Hessian is (HᵀH/b) ⊗ K_B + λI), and η_t = η₀/(1 + e_t) decaying with the (fractional)
//! number of epochs e_t completed so far; this makes the step independent of the scale of the
//! kernel (a linear kernel on raw features can have K_B entries of 10⁵). `InverseScaling` is
//! the authors' schedule γ_t = γ₀/(1 + γ₀λt), t the number of batches so far.
//!
//! **Defaults** (η₀ = 0.1, batches of 128, 10 epochs, λ = 1e-4, α = 1e-3, W ≥ 0, W from kernel
//! k-means on the budget) were fixed on independently drawn synthetic rings, not on the
//! benchmark sets. There, larger steps lower the loss further but erode the clusters that the
//! initial W carries (η₀ = 0.2 with batches of 32: accuracy .57 instead of 1.0): the objective
//! is a reconstruction error, not a clustering criterion.
//!
//! **Initial W**: uniform [0, 1) entries (`Random`, the authors' code) or, by default, the
//! normalised cluster indicator of kernel k-means run on the budget itself (K_B is at hand):
//! W_jc = 1/|c| for budget point j in cluster c, so that Φ(B)w_c starts as a cluster mean.
//!
//! **Clusters**: the cluster of x is arg max_j h_j (ties to the lowest index).
//!
//! **Costs.** Per epoch O(n·p·(d + r) + (n/b)·p²r); memory O(p² + p·r + p·d + b·p),
//! independent of n: the fit never holds an n-sized buffer (the model has none; labels are
//! computed afterwards by [`Okmf::predict`], in blocks). The k-means budget runs k-means on a
//! uniform sample of at most `budget_sample` rows (default 10·p), also independent of n.
//!
//! **Loss trace.** After every epoch the observer receives the mean over that epoch's samples of
//! J(W, h; x) evaluated just before each batch's update (the "progressive" online loss, free to
//! compute), plus (λ/2)‖W‖² at the end of the epoch. [`Okmf::objective`] evaluates the exact
//! mean objective on any data.

use std::time::Instant;

use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::kernels::kernel_diag;
use gimc_linalg::observe::{IterativeSolver, NoObserver, Observer, Progress, StopReason, run};
use gimc_linalg::rng::{FeistelPermutation, GimcRng, child, seeded};
use gimc_linalg::solve::Cholesky;
use gimc_linalg::{FeatureMatrix, Kernel, kernel_block, kernel_block_dense, sym_eig};
use rand::Rng;

use crate::error::{check_nonneg, check_pos, param_err};
use crate::kernel_kmeans::{KernelKMeansParams, kernel_kmeans_on_matrix};
use crate::kmeans::check_features;
use crate::{ClusterError, KMeansParams, Result, fit_kmeans};

/// Rows per block when predicting or evaluating the objective.
const PREDICT_BLOCK: usize = 4096;

/// Called with (first row, the block's rows, C = K_b W, H) for each block of rows.
type BlockVisitor<'a> =
    dyn FnMut(usize, &FeatureMatrix, MatRef<'_, f64>, MatRef<'_, f64>) -> Result<()> + 'a;

/// How the budget B is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OkmfBudget {
    /// p distinct rows drawn uniformly (the paper's "R" variants). The default.
    #[default]
    Random,
    /// The p centres of k-means (one restart, at most 20 Lloyd iterations) fitted on a uniform
    /// sample of `budget_sample` rows (the paper's "K" variants).
    KMeans,
}

/// How W is initialised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OkmfInit {
    /// Kernel k-means with k clusters on the budget (on K_B); W_jc = 1/|c| for j ∈ c. Default.
    #[default]
    KernelKMeans,
    /// Independent uniform [0, 1) entries (the authors' reference code).
    Random,
}

/// The step-size schedule of the SGD.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum OkmfStep {
    /// γ_t = η₀ / ((1 + e_t) L_t), L_t = λ_max(K_B)‖H‖²_F/b + λ, e_t = epochs completed
    /// (module documentation). η₀ ∈ (0, 2).
    Normalized {
        /// η₀ (default 0.1).
        eta0: f64,
    },
    /// γ_t = γ₀ / (1 + γ₀ λ t), t = batches processed (the authors' schedule).
    InverseScaling {
        /// γ₀ > 0.
        gamma0: f64,
    },
}

impl Default for OkmfStep {
    fn default() -> Self {
        Self::Normalized { eta0: 0.1 }
    }
}

gimc_linalg::params! {
    /// Hyper-parameters of OKMF. Build with [`OkmfParams::new`] (k and the kernel have no default)
    /// and the `with_*` methods; [`OkmfParams::check`] validates them into the [`ValidOkmfParams`]
    /// that [`fit_okmf`] takes.
    #[derive(Debug, Clone, PartialEq)]
    pub struct OkmfParams => ValidOkmfParams {
        /// `k` clusters with `kernel` and the defaults.
        required {
            /// Number of clusters = latent dimension r ≥ 1.
            pub k: usize,
            /// The kernel.
            pub kernel: Kernel,
        }
        /// Budget size p ≥ k (capped at n). Default 500 (the paper's).
        pub budget_size: usize = 500 => with_budget_size,
        /// Budget selection. Default [`OkmfBudget::Random`].
        pub budget: OkmfBudget = OkmfBudget::Random => with_budget,
        /// Rows sampled for the k-means budget; 0 (default) means 10·p. Capped at n.
        pub budget_sample: usize = 0 => with_budget_sample,
        /// Passes over the data ≥ 1. Default 10.
        pub epochs: usize = 10 => with_epochs,
        /// Rows per SGD step ≥ 1. Default 128.
        pub batch_size: usize = 128 => with_batch_size,
        /// Step-size schedule. Default `Normalized { eta0: 0.1 }`.
        pub step: OkmfStep = OkmfStep::default() => with_step,
        /// λ ≥ 0, weight of (λ/2)‖W‖². Default 1e-4.
        pub lambda: f64 = 1e-4 => with_lambda,
        /// α > 0, weight of (α/2)‖h‖² (keeps WᵀK_B W + αI invertible). Default 1e-3.
        pub alpha: f64 = 1e-3 => with_alpha,
        /// Project W onto W ≥ 0 after every step. Default true.
        pub nonnegative: bool = true => with_nonnegative,
        /// Initial W. Default [`OkmfInit::KernelKMeans`].
        pub init: OkmfInit = OkmfInit::KernelKMeans => with_init,
    }
    /// Checks the data-independent constraints: k, budget_size, epochs, batch_size ≥ 1,
    /// budget_size ≥ k, λ finite ≥ 0, α finite > 0, the step parameters and the kernel (k ≤ n
    /// is checked by the fit).
    check |this| -> crate::ClusterError {
        let bad = |name, reason: String| Err(param_err(name, reason));
        if this.k == 0 {
            return bad("k", "must be at least 1".into());
        }
        if this.budget_size < this.k {
            return bad(
                "budget_size",
                format!("must be at least k = {}, got {}", this.k, this.budget_size),
            );
        }
        if this.epochs == 0 {
            return bad("epochs", "must be at least 1".into());
        }
        if this.batch_size == 0 {
            return bad("batch_size", "must be at least 1".into());
        }
        check_nonneg("lambda", this.lambda)?;
        check_pos("alpha", this.alpha)?;
        match this.step {
            OkmfStep::Normalized { eta0 } => {
                if !(eta0.is_finite() && eta0 > 0.0 && eta0 < 2.0) {
                    return bad("eta0", format!("must be in (0, 2), got {eta0}"));
                }
            }
            OkmfStep::InverseScaling { gamma0 } => {
                check_pos("gamma0", gamma0)?;
            }
        }
        this.kernel.check()?;
    }
}

/// A fitted OKMF model: budget, K_B and W. Its size does not depend on the number of rows it
/// was fitted on.
#[derive(Debug, Clone, PartialEq)]
pub struct Okmf {
    /// The budget points B, one per row (p × d).
    pub budget: Mat<f64>,
    /// K_B = k(B, B) (p × p).
    pub kernel_budget: Mat<f64>,
    /// The factor W (p × r).
    pub w: Mat<f64>,
    /// Progressive loss of every epoch (module documentation).
    pub loss_trace: Vec<f64>,
    /// SGD steps taken.
    pub n_steps: usize,
    kernel: Kernel,
    lambda: f64,
    alpha: f64,
}

/// The stored parts of an [`Okmf`] model (a model kept outside Rust, e.g. by the Python
/// package), for [`Okmf::from_parts`].
#[derive(Debug, Clone, PartialEq)]
pub struct OkmfParts {
    /// The budget B (p × d).
    pub budget: Mat<f64>,
    /// The factor W (p × r).
    pub w: Mat<f64>,
    /// The kernel it was fitted with.
    pub kernel: Kernel,
    /// The λ it was fitted with.
    pub lambda: f64,
    /// The α it was fitted with.
    pub alpha: f64,
}

impl Okmf {
    /// A model from its stored parts. K_B is recomputed. Errors: shapes that disagree, an empty
    /// budget or factor, non-finite values, an invalid kernel or λ < 0, α ≤ 0.
    pub fn from_parts(parts: OkmfParts) -> Result<Self> {
        let OkmfParts {
            budget,
            w,
            kernel,
            lambda,
            alpha,
        } = parts;
        kernel.check()?;
        if budget.nrows() == 0 || w.ncols() == 0 || w.nrows() != budget.nrows() {
            return Err(ClusterError::DimensionMismatch {
                op: "Okmf::from_parts",
                expected: format!(
                    "W with {} rows (one per budget point) and r ≥ 1",
                    budget.nrows()
                ),
                got: format!("W of {} × {}", w.nrows(), w.ncols()),
            });
        }
        if !(lambda >= 0.0 && lambda.is_finite() && alpha > 0.0 && alpha.is_finite()) {
            return Err(ClusterError::InvalidParameter {
                name: "lambda / alpha",
                reason: format!("need λ ≥ 0 and α > 0, finite; got λ = {lambda}, α = {alpha}"),
            });
        }
        check_features(&FeatureMatrix::dense(budget.clone())?)?;
        check_features(&FeatureMatrix::dense(w.clone())?)?;
        let kernel_budget = budget_kernel(&kernel, budget.as_ref())?;
        Ok(Self {
            budget,
            kernel_budget,
            w,
            loss_trace: Vec::new(),
            n_steps: 0,
            kernel,
            lambda,
            alpha,
        })
    }

    /// λ, the weight of (λ/2)‖W‖².
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// α, the weight of (α/2)‖h‖².
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Number of clusters r.
    pub fn k(&self) -> usize {
        self.w.ncols()
    }

    /// The kernel.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// Number of f64 values the model stores: p·d + p² + p·r (the loss trace aside).
    pub fn stored_values(&self) -> usize {
        self.budget.nrows() * self.budget.ncols()
            + self.kernel_budget.nrows() * self.kernel_budget.ncols()
            + self.w.nrows() * self.w.ncols()
    }

    /// The Cholesky factor of WᵀK_B W + αI.
    fn h_system(&self) -> Result<Cholesky> {
        let m = &self.kernel_budget * &self.w;
        let mut g = self.w.transpose() * &m;
        for c in 0..g.nrows() {
            g[(c, c)] += self.alpha;
        }
        Ok(Cholesky::new(g.as_ref())?)
    }

    /// Calls `f(first_row, kernel_rows, H)` for consecutive blocks of rows of `x`.
    fn for_blocks(&self, x: &FeatureMatrix, f: &mut BlockVisitor<'_>) -> Result<()> {
        if x.ncols() != self.budget.ncols() {
            return Err(ClusterError::DimensionMismatch {
                op: "Okmf",
                expected: format!("{} columns", self.budget.ncols()),
                got: format!("{} columns", x.ncols()),
            });
        }
        check_features(x)?;
        let chol = self.h_system()?;
        let n = x.nrows();
        for start in (0..n).step_by(PREDICT_BLOCK) {
            let end = (start + PREDICT_BLOCK).min(n);
            let rows: Vec<usize> = (start..end).collect();
            let xb = x.select_rows(&rows)?;
            let kb = kernel_block(&self.kernel, &xb, self.budget.as_ref())?;
            let c = &kb * &self.w;
            let h = chol.solve(c.transpose())?.transpose().to_owned();
            f(start, &xb, c.as_ref(), h.as_ref())?;
        }
        Ok(())
    }

    /// The latent codes H (n × r), h = (WᵀK_B W + αI)⁻¹Wᵀk_x for every row of `x`.
    pub fn latent(&self, x: &FeatureMatrix) -> Result<Mat<f64>> {
        let mut out = Mat::<f64>::zeros(x.nrows(), self.k());
        self.for_blocks(x, &mut |start, _, _, h| {
            out.as_mut().subrows_mut(start, h.nrows()).copy_from(h);
            Ok(())
        })?;
        Ok(out)
    }

    /// The cluster arg max_j h_j of every row of `x` (ties to the lowest index), in blocks of
    /// rows: memory O(block·(p + r)) besides the labels.
    pub fn predict(&self, x: &FeatureMatrix) -> Result<Vec<usize>> {
        let mut labels = Vec::with_capacity(x.nrows());
        self.for_blocks(x, &mut |_, _, _, h| {
            labels.extend((0..h.nrows()).map(|i| argmax_row(h, i)));
            Ok(())
        })?;
        Ok(labels)
    }

    /// The exact mean objective (1/n)Σ_i min_h J(W, h; x_i) = (1/n)Σ_i ½(k(x_i, x_i) −
    /// (Wᵀk_{x_i})·h_i) + (λ/2)‖W‖² on the rows of `x` (NaN for no rows).
    pub fn objective(&self, x: &FeatureMatrix) -> Result<f64> {
        let mut total = 0.0;
        let kernel = self.kernel;
        self.for_blocks(x, &mut |_, xb, c, h| {
            let diag = kernel_diag(&kernel, xb)?;
            total += sample_losses(&diag, c, h);
            Ok(())
        })?;
        Ok(total / x.nrows() as f64 + 0.5 * self.lambda * self.w.squared_norm_l2())
    }
}

/// Σ_i ½(k(x_i, x_i) − c_i·h_i): the data part of J at the optimal h, for a batch.
fn sample_losses(diag: &[f64], c: MatRef<'_, f64>, h: MatRef<'_, f64>) -> f64 {
    let mut total = 0.0;
    for (i, &kxx) in diag.iter().enumerate() {
        let mut ch = 0.0;
        for j in 0..c.ncols() {
            ch += c[(i, j)] * h[(i, j)];
        }
        total += 0.5 * (kxx - ch);
    }
    total
}

/// Index of the largest entry of row `i` (ties to the lowest index).
fn argmax_row(h: MatRef<'_, f64>, i: usize) -> usize {
    let mut best = (0usize, f64::NEG_INFINITY);
    for j in 0..h.ncols() {
        if h[(i, j)] > best.1 {
            best = (j, h[(i, j)]);
        }
    }
    best.0
}

/// One sample x of the per-sample OKMF objective, given by its kernel values, and its code h.
#[derive(Debug, Clone, Copy)]
pub struct OkmfSample<'a> {
    /// k(x, x).
    pub kxx: f64,
    /// k_x = k(B, x) (length p).
    pub kx: &'a [f64],
    /// The code h (length r).
    pub h: &'a [f64],
}

/// The model side of the per-sample OKMF objective: K_B and the factor W.
#[derive(Debug, Clone, Copy)]
pub struct OkmfFactor<'a> {
    /// K_B = k(B, B) (p × p).
    pub kernel_budget: MatRef<'a, f64>,
    /// W (p × r).
    pub w: MatRef<'a, f64>,
}

/// The per-sample OKMF objective J(W, h; x) = ½k(x,x) − k_xᵀWh + ½hᵀWᵀK_B W h + (λ/2)‖W‖² +
/// (α/2)‖h‖² for one sample given by k(x, x) and k_x = k(B, x) (DESIGN §3.4). For tests and
/// diagnostics.
pub fn okmf_sample_objective(
    sample: OkmfSample<'_>,
    factor: OkmfFactor<'_>,
    lambda: f64,
    alpha: f64,
) -> Result<f64> {
    let OkmfSample { kxx, kx, h } = sample;
    let OkmfFactor { kernel_budget, w } = factor;
    check_sample_shapes(kx, kernel_budget, w, h)?;
    let wh: Vec<f64> = (0..w.nrows())
        .map(|i| (0..w.ncols()).map(|j| w[(i, j)] * h[j]).sum())
        .collect();
    let kwh: f64 = kx.iter().zip(&wh).map(|(a, b)| a * b).sum();
    let mut quad = 0.0;
    for i in 0..wh.len() {
        for j in 0..wh.len() {
            quad += wh[i] * kernel_budget[(i, j)] * wh[j];
        }
    }
    let hh: f64 = h.iter().map(|v| v * v).sum();
    Ok(0.5 * kxx - kwh + 0.5 * quad + 0.5 * lambda * w.squared_norm_l2() + 0.5 * alpha * hh)
}

/// The gradient ∂J/∂W = −k_x hᵀ + K_B W h hᵀ + λW of [`okmf_sample_objective`] at fixed h
/// (p × r), the update direction of OKMF's SGD (DESIGN §3.4, with the corrected signs). The
/// k(x, x) of `sample` does not enter.
pub fn okmf_sample_gradient(
    sample: OkmfSample<'_>,
    factor: OkmfFactor<'_>,
    lambda: f64,
) -> Result<Mat<f64>> {
    let OkmfSample { kx, h, .. } = sample;
    let OkmfFactor { kernel_budget, w } = factor;
    check_sample_shapes(kx, kernel_budget, w, h)?;
    let kx_mat = Mat::from_fn(1, kx.len(), |_, j| kx[j]);
    let h_mat = Mat::from_fn(1, h.len(), |_, j| h[j]);
    let m = kernel_budget * w;
    Ok(batch_gradient(
        kx_mat.as_ref(),
        m.as_ref(),
        w,
        h_mat.as_ref(),
        lambda,
    ))
}

fn check_sample_shapes(
    kx: &[f64],
    kernel_budget: MatRef<'_, f64>,
    w: MatRef<'_, f64>,
    h: &[f64],
) -> Result<()> {
    let p = w.nrows();
    if kx.len() != p
        || kernel_budget.nrows() != p
        || kernel_budget.ncols() != p
        || h.len() != w.ncols()
    {
        return Err(ClusterError::DimensionMismatch {
            op: "okmf sample objective",
            expected: format!(
                "k_x of length {p}, K_B {p} x {p}, h of length {}",
                w.ncols()
            ),
            got: format!(
                "k_x of length {}, K_B {} x {}, h of length {}",
                kx.len(),
                kernel_budget.nrows(),
                kernel_budget.ncols(),
                h.len()
            ),
        });
    }
    Ok(())
}

/// The mean gradient over a batch: (−K_bᵀH + M HᵀH)/b + λW with M = K_B W, K_b (b × p),
/// H (b × r).
fn batch_gradient(
    kb: MatRef<'_, f64>,
    m: MatRef<'_, f64>,
    w: MatRef<'_, f64>,
    h: MatRef<'_, f64>,
    lambda: f64,
) -> Mat<f64> {
    let b = kb.nrows().max(1) as f64;
    let hth = h.transpose() * h;
    let mut g = m * &hth - kb.transpose() * h;
    for j in 0..g.ncols() {
        for i in 0..g.nrows() {
            g[(i, j)] = g[(i, j)] / b + lambda * w[(i, j)];
        }
    }
    g
}

/// Fits OKMF to the rows of `x` (module documentation). Draws one seed from `rng`; budget,
/// initialisation and the epochs' orders use child streams of it.
///
/// `observer` receives a record after every epoch (iterations 1, 2, …): the objective is the
/// epoch's mean loss plus (λ/2)‖W‖², with the extra `step_size` (the last step size γ).
/// [`ObserverAction::Stop`](gimc_linalg::observe::ObserverAction::Stop) ends the fit with
/// [`ClusterError::Interrupted`] (e.g. on Ctrl-C).
///
/// Errors: fewer than k rows, NaN/Inf in `x`, a singular h-system (only
/// with α tiny against the kernel's scale) or a non-finite W.
pub fn fit_okmf(
    x: &FeatureMatrix,
    params: &ValidOkmfParams,
    rng: &mut GimcRng,
    observer: &mut (impl Observer + ?Sized),
) -> Result<Okmf> {
    let started = Instant::now();
    let n = x.nrows();
    let k = params.k;
    if n < k {
        return Err(ClusterError::TooFewPoints { k, n });
    }
    check_features(x)?;
    let base = seeded(rng.random::<u64>());
    let p = params.budget_size.min(n);
    let budget = select_budget(x, params, p, &mut child(&base, 0))?;
    let kb_budget = budget_kernel(&params.kernel, budget.as_ref())?;
    let mut w = init_w(&kb_budget, params, &mut child(&base, 1))?;
    let lmax_kb = match params.step {
        OkmfStep::Normalized { .. } => {
            let (vals, _) = sym_eig(kb_budget.as_ref())?;
            vals.last().copied().unwrap_or(0.0).max(f64::MIN_POSITIVE)
        }
        OkmfStep::InverseScaling { .. } => 0.0,
    };
    let mut epochs = Epochs {
        x,
        params,
        budget: budget.as_ref(),
        kb_budget: &kb_budget,
        lmax_kb,
        order_rng: child(&base, 2),
        steps: 0,
        gamma: 0.0,
        started,
    };
    let report = run(&mut epochs, &mut w, params.epochs, observer)?;
    let n_steps = epochs.steps;
    if report.stop_reason == StopReason::Observer {
        return Err(ClusterError::Interrupted {
            iteration: report.iterations,
        });
    }
    Ok(Okmf {
        budget,
        kernel_budget: kb_budget,
        w,
        loss_trace: report.objective_trace,
        n_steps,
        kernel: params.kernel,
        lambda: params.lambda,
        alpha: params.alpha,
    })
}

/// OKMF's epochs as an iterative loop on W (no objective before the first epoch): each step is
/// one pass over the rows in a fresh order, in mini-batches, and reports the epoch's mean loss
/// plus (λ/2)‖W‖² with the extra `step_size` (the last step size γ).
struct Epochs<'a> {
    x: &'a FeatureMatrix,
    params: &'a OkmfParams,
    budget: MatRef<'a, f64>,
    kb_budget: &'a Mat<f64>,
    /// The largest eigenvalue of K_B (the normalised step's scale; 0 for inverse scaling).
    lmax_kb: f64,
    order_rng: GimcRng,
    /// Updates of W so far.
    steps: usize,
    /// The last step size γ.
    gamma: f64,
    /// The start of the fit (its records count seconds from it).
    started: Instant,
}

impl IterativeSolver for Epochs<'_> {
    type State = Mat<f64>;
    type Error = ClusterError;

    fn name(&self) -> &'static str {
        "OKMF"
    }

    fn started(&self) -> Option<Instant> {
        Some(self.started)
    }

    fn init(&mut self, _w: &mut Mat<f64>) -> Result<Option<Progress>> {
        Ok(None)
    }

    fn step(&mut self, w: &mut Mat<f64>, epoch: usize) -> Result<Option<Progress>> {
        let (x, params) = (self.x, self.params);
        let n = x.nrows();
        let k = params.k;
        let p = self.budget.nrows();
        let bsz = params.batch_size.min(n);
        let perm = FeistelPermutation::new(n, &mut self.order_rng);
        let mut loss_sum = 0.0;
        for bstart in (0..n).step_by(bsz) {
            let bend = (bstart + bsz).min(n);
            let mut rows: Vec<usize> = (bstart..bend).map(|i| perm.get(i)).collect();
            rows.sort_unstable();
            let xb = x.select_rows(&rows)?;
            let kb = kernel_block(&params.kernel, &xb, self.budget)?;
            let m = self.kb_budget * &*w;
            let mut g = w.transpose() * &m;
            for c in 0..k {
                g[(c, c)] += params.alpha;
            }
            let chol = Cholesky::new(g.as_ref())?;
            let c = &kb * &*w;
            let h = chol.solve(c.transpose())?.transpose().to_owned();
            let diag = kernel_diag(&params.kernel, &xb)?;
            loss_sum += sample_losses(&diag, c.as_ref(), h.as_ref());
            let grad = batch_gradient(
                kb.as_ref(),
                m.as_ref(),
                w.as_ref(),
                h.as_ref(),
                params.lambda,
            );
            self.gamma = match params.step {
                OkmfStep::Normalized { eta0 } => {
                    let b = (bend - bstart) as f64;
                    let seen = (epoch - 1) as f64 + bstart as f64 / n as f64;
                    let l = self.lmax_kb * h.squared_norm_l2() / b + params.lambda;
                    if l > 0.0 {
                        eta0 / ((1.0 + seen) * l)
                    } else {
                        0.0
                    }
                }
                OkmfStep::InverseScaling { gamma0 } => {
                    gamma0 / (1.0 + gamma0 * params.lambda * self.steps as f64)
                }
            };
            for j in 0..k {
                for i in 0..p {
                    let v = w[(i, j)] - self.gamma * grad[(i, j)];
                    w[(i, j)] = if params.nonnegative { v.max(0.0) } else { v };
                }
            }
            self.steps += 1;
            if !w.as_ref().is_all_finite() {
                return Err(ClusterError::NumericalBreakdown {
                    method: "OKMF",
                    iteration: self.steps,
                });
            }
        }
        let loss = loss_sum / n as f64 + 0.5 * params.lambda * w.squared_norm_l2();
        Ok(Some(Progress {
            objective: loss,
            extras: vec![("step_size", self.gamma)],
            converged: false,
        }))
    }
}

/// K_B = k(B, B), made exactly symmetric.
fn budget_kernel(kernel: &Kernel, budget: MatRef<'_, f64>) -> Result<Mat<f64>> {
    let p = budget.nrows();
    let kmat = kernel_block_dense(kernel, budget, budget)?;
    Ok(Mat::from_fn(p, p, |i, j| {
        0.5 * (kmat[(i, j)] + kmat[(j, i)])
    }))
}

/// The budget B (p × d, dense).
fn select_budget(
    x: &FeatureMatrix,
    params: &OkmfParams,
    p: usize,
    rng: &mut GimcRng,
) -> Result<Mat<f64>> {
    let n = x.nrows();
    match params.budget {
        OkmfBudget::Random => {
            let mut rows = rand::seq::index::sample(rng, n, p).into_vec();
            rows.sort_unstable();
            Ok(x.select_rows(&rows)?.to_dense())
        }
        OkmfBudget::KMeans => {
            let s = if params.budget_sample > 0 {
                params.budget_sample
            } else {
                p.saturating_mul(10)
            }
            .clamp(p, n);
            let sample = if s == n {
                x.clone()
            } else {
                let mut rows = rand::seq::index::sample(rng, n, s).into_vec();
                rows.sort_unstable();
                x.select_rows(&rows)?
            };
            let km = fit_kmeans(
                &sample,
                &KMeansParams::new(p)
                    .with_n_init(1)
                    .with_max_iter(20)
                    .check()?,
                rng,
                &mut NoObserver,
            )?;
            Ok(km.centers)
        }
    }
}

/// The initial W (p × r).
fn init_w(kb_budget: &Mat<f64>, params: &OkmfParams, rng: &mut GimcRng) -> Result<Mat<f64>> {
    let p = kb_budget.nrows();
    let k = params.k;
    match params.init {
        OkmfInit::Random => Ok(Mat::from_fn(p, k, |_, _| rng.random::<f64>())),
        OkmfInit::KernelKMeans => {
            let run = kernel_kmeans_on_matrix(
                kb_budget,
                &KernelKMeansParams::new(k, params.kernel)
                    .with_n_init(10)
                    .check()?,
                rng,
            )?;
            let counts = crate::kmeans::counts_of(&run.labels, k);
            Ok(Mat::from_fn(p, k, |j, c| {
                if run.labels[j] == c {
                    1.0 / counts[c].max(1) as f64
                } else {
                    0.0
                }
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_rebuilt_from_its_parts_predicts_the_same() {
        let x = FeatureMatrix::dense(Mat::from_fn(120, 2, |i, j| {
            let c = if i % 2 == 0 { 3.0 } else { -3.0 };
            c + ((i * 7 + j * 3) % 11) as f64 / 11.0
        }))
        .unwrap();
        let params = OkmfParams::new(2, Kernel::Rbf { gamma: 0.5 })
            .with_budget_size(20)
            .with_epochs(3)
            .check()
            .unwrap();
        let fit = fit_okmf(&x, &params, &mut seeded(5), &mut NoObserver).unwrap();
        let back = Okmf::from_parts(OkmfParts {
            budget: fit.budget.clone(),
            w: fit.w.clone(),
            kernel: fit.kernel(),
            lambda: fit.lambda(),
            alpha: fit.alpha(),
        })
        .unwrap();
        assert_eq!(back.predict(&x).unwrap(), fit.predict(&x).unwrap());
        assert_eq!(back.kernel_budget, fit.kernel_budget);
        let bad = Okmf::from_parts(OkmfParts {
            budget: fit.budget.clone(),
            w: Mat::zeros(3, 2),
            kernel: fit.kernel(),
            lambda: 0.0,
            alpha: 1.0,
        });
        assert!(matches!(bad, Err(ClusterError::DimensionMismatch { .. })));
        let bad = Okmf::from_parts(OkmfParts {
            budget: fit.budget.clone(),
            w: fit.w.clone(),
            kernel: fit.kernel(),
            lambda: 0.0,
            alpha: 0.0,
        });
        assert!(matches!(bad, Err(ClusterError::InvalidParameter { .. })));
    }

    #[test]
    fn batch_gradient_is_the_mean_of_sample_gradients() {
        let kb_budget = Mat::from_fn(4, 4, |i, j| if i == j { 1.0 } else { 0.3 });
        let w = Mat::from_fn(4, 2, |i, j| 0.2 + 0.15 * ((i * 3 + j) % 5) as f64);
        let kb = Mat::from_fn(3, 4, |i, j| 0.1 * (1 + (i * 2 + j) % 7) as f64);
        let h = Mat::from_fn(3, 2, |i, j| (i as f64 - 1.0) * 0.4 + j as f64 * 0.25);
        let m = &kb_budget * &w;
        let g = batch_gradient(kb.as_ref(), m.as_ref(), w.as_ref(), h.as_ref(), 0.05);
        let mut mean = Mat::<f64>::zeros(4, 2);
        for i in 0..3 {
            let kx: Vec<f64> = (0..4).map(|j| kb[(i, j)]).collect();
            let hi: Vec<f64> = (0..2).map(|j| h[(i, j)]).collect();
            let gi = okmf_sample_gradient(
                OkmfSample {
                    kxx: 0.0,
                    kx: &kx,
                    h: &hi,
                },
                OkmfFactor {
                    kernel_budget: kb_budget.as_ref(),
                    w: w.as_ref(),
                },
                0.05,
            )
            .unwrap();
            mean += &gi * gimc_linalg::faer::Scale(1.0 / 3.0);
        }
        assert!((&g - &mean).norm_max() < 1e-12);
    }

    #[test]
    fn loss_at_optimal_h_matches_the_direct_objective() {
        let kb = Mat::from_fn(3, 3, |i, j| if i == j { 2.0 } else { 0.5 });
        let w = Mat::from_fn(3, 2, |i, j| 0.3 + 0.1 * (i + 2 * j) as f64);
        let kx = [0.7, 0.2, 0.4];
        let mut g = w.transpose() * &kb * &w;
        for c in 0..2 {
            g[(c, c)] += 0.1;
        }
        let c = Mat::from_fn(1, 2, |_, j| (0..3).map(|i| w[(i, j)] * kx[i]).sum());
        let h = Cholesky::new(g.as_ref())
            .unwrap()
            .solve(c.transpose())
            .unwrap()
            .transpose()
            .to_owned();
        let direct = okmf_sample_objective(
            OkmfSample {
                kxx: 1.5,
                kx: &kx,
                h: &[h[(0, 0)], h[(0, 1)]],
            },
            OkmfFactor {
                kernel_budget: kb.as_ref(),
                w: w.as_ref(),
            },
            0.0,
            0.1,
        )
        .unwrap();
        let cheap = sample_losses(&[1.5], c.as_ref(), h.as_ref());
        assert!((direct - cheap).abs() < 1e-12);
    }
}
