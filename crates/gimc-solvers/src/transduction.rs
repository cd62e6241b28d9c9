//! Transduction with matrix completion: MC-1 and MC-b (Goldberg, Zhu, Recht, Xu & Nowak,
//! NIPS 2010), DESIGN §3.5.
//!
//! Items are columns. Z stacks t label rows over d feature rows (MC-1 adds a last row forced to
//! all ones), and the smooth loss on the observed entries is
//!
//! f(Z, b) = (λ/|Ω_Y|) Σ_{Ω_Y} log(1 + exp(−y_ij (z_ij + b_i))) + (1/|Ω_X|) Σ_{Ω_X} ½(z_(t+i)j − x_ij)²,
//!
//! minimised with μ‖Z‖_* added (b is the unregularised bias of MC-b; MC-1 has b = 0). Fixed
//! point continuation (FPC, DESIGN §3.2 and §3.5): b ← b − τ_b ∇_b f, A = Z − τ_Z ∇_Z f,
//! Z = U max(Λ − τ_Z μ, 0) Vᵀ, and for MC-1 the last row of Z is reset to ones. Steps
//! τ_Z = min(3.8|Ω_Y|/λ, |Ω_X|), τ_b = 3.8|Ω_Y|/(λ n): the logistic loss has curvature ≤ ¼, so
//! these are just below 1/L for each block and, with the b–Z coupling, below 2/L jointly, which
//! keeps the MC-b objective non-increasing within a μ stage (the MC-1 reset is not a proximal
//! step; see [`TransductionFpc`]). Continuation: μ_1 = η_μ σ_1(∇f(0)) (σ_1 of the zero-filled
//! observed matrix with each block scaled by its loss weight, i.e. the smallest μ for which
//! Z = 0 would be optimal, times η_μ = 0.25), then μ_{k+1} = max(η_μ μ_k, next target), each
//! stage stopped when the relative objective change falls below 1e-5. One continuation run
//! returns the iterate at every μ of a decreasing grid ([`fit_transduction_path`]); λ and μ are
//! chosen by 5-fold cross-validation over Ω_X and Ω_Y with the held-out label error as criterion
//! ([`cross_validate_transduction`]). Initial Z: the rank-1 SVD approximation of the zero-filled
//! observed matrix; b = 0.
//!
//! The shrinkage needs the singular triplets of A above τ_Z μ. [`ShrinkSvd::Auto`] (default)
//! takes them from the eigendecomposition of the small Gram matrix A Aᵀ (or AᵀA): Z stacks few
//! rows (t + d + 1 ≤ a few hundred) over many items, so this costs one GEMM of O(m² n) plus an
//! m × m eigensolver, about half a thin SVD; above [`GRAM_LIMIT`] it uses the partial SVD.
//! [`ShrinkSvd::Partial`] computes only the leading triplets by the randomized range finder
//! with an adaptive rank (grown until the smallest computed value falls below the threshold),
//! falling back to the thin SVD when the rank approaches min(m, n). [`ShrinkSvd::Exact`] always
//! takes the thin SVD.
//!
//! Optionally ([`TransductionParams::accelerate`]) each gradient step starts from the
//! extrapolated point of monotone FISTA (Beck & Teboulle 2009), restarted at every μ stage:
//! same step sizes, shrinkage, reset, continuation and stopping rule, the objective still
//! non-increasing within a stage, and about 4x fewer steps on the paper's problems.
//!
//! Baselines (imputation followed by one linear SVM per label) are in [`baselines`].

pub mod baselines;
pub mod data;

use gimc_linalg::faer;
use gimc_linalg::faer::linalg::matmul::matmul;
use gimc_linalg::faer::{Accum, Mat, MatMut, MatRef, Par};
use gimc_linalg::rng::{GimcRng, child};
use gimc_linalg::svd::{RsvdParams, Svd, shrink_singular_values, thin_svd, top_k_svd_with};
use gimc_linalg::{LinalgError, Observed, dense, sym_eig};
use rand::seq::SliceRandom;
use rayon::prelude::*;

use crate::SolverError;
use crate::error::{check_pos, dim_err, param_err};
use crate::iter::{IterativeSolver, NoObserver, Observer, Progress, run};

/// Largest min(m, n) for which [`ShrinkSvd::Auto`] uses the Gram-matrix eigendecomposition.
pub const GRAM_LIMIT: usize = 512;

/// The two formulations of the paper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TransductionVariant {
    /// MC-1: Z has a last row forced to all ones, so the bias is part of the low-rank model.
    #[default]
    Mc1,
    /// MC-b: an unregularised bias b_i per label row; labels are sign(z_ij + b_i).
    McB,
}

impl TransductionVariant {
    /// `"MC-1"` or `"MC-b"`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Mc1 => "MC-1",
            Self::McB => "MC-b",
        }
    }
}

/// How the singular value shrinkage obtains the singular triplets above the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ShrinkSvd {
    /// Gram-matrix eigendecomposition when min(m, n) ≤ [`GRAM_LIMIT`], else [`ShrinkSvd::Partial`].
    #[default]
    Auto,
    /// The thin SVD every step.
    Exact,
    /// Randomized partial SVD with adaptive rank, thin SVD when the rank approaches min(m, n).
    Partial,
}

/// A transduction problem: observed labels Ω_Y (t × n, values ±1) and observed features
/// Ω_X (d × n) of the same n items (columns).
#[derive(Debug, Clone, PartialEq)]
pub struct TransductionProblem {
    labels: Observed,
    features: Observed,
}

impl TransductionProblem {
    /// Checks that both sets describe the same n items, that every label is −1 or +1 and that
    /// at least one entry is observed. `labels` may have t = 0 rows (plain nuclear-norm
    /// completion of the features, the FPC baseline).
    pub fn new(labels: Observed, features: Observed) -> Result<Self, SolverError> {
        if labels.ncols() != features.ncols() {
            return Err(dim_err(
                "labels and features",
                format!("{} items (columns) in both", features.ncols()),
                format!("{} label columns", labels.ncols()),
            ));
        }
        if features.ncols() == 0 {
            return Err(SolverError::Empty("items"));
        }
        if let Some((i, j, v)) = labels.iter().find(|&(_, _, v)| v != 1.0 && v != -1.0) {
            return Err(SolverError::InvalidInput {
                what: "labels",
                reason: format!("label {v} at (label {i}, item {j}) is not -1 or +1"),
            });
        }
        if labels.is_empty() && features.is_empty() {
            return Err(SolverError::Empty("observed labels and features"));
        }
        Ok(Self { labels, features })
    }

    /// Observed labels Ω_Y (t × n).
    pub fn labels(&self) -> &Observed {
        &self.labels
    }

    /// Observed features Ω_X (d × n).
    pub fn features(&self) -> &Observed {
        &self.features
    }

    /// t.
    pub fn n_labels(&self) -> usize {
        self.labels.nrows()
    }

    /// d.
    pub fn n_features(&self) -> usize {
        self.features.nrows()
    }

    /// n.
    pub fn n_items(&self) -> usize {
        self.features.ncols()
    }

    /// Rows of Z: t + d (+ 1 for MC-1).
    pub fn z_rows(&self, variant: TransductionVariant) -> usize {
        self.n_labels() + self.n_features() + usize::from(variant == TransductionVariant::Mc1)
    }

    /// The problem restricted to the given CSR positions of Ω_Y and Ω_X (a CV training part).
    pub fn subset(
        &self,
        label_entries: &[usize],
        feature_entries: &[usize],
    ) -> Result<Self, SolverError> {
        Self::new(
            self.labels.select_entries(label_entries)?,
            self.features.select_entries(feature_entries)?,
        )
    }
}

/// Hyper-parameters of MC-1 / MC-b by FPC.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TransductionParams {
    /// MC-1 or MC-b. Default [`TransductionVariant::Mc1`].
    pub variant: TransductionVariant,
    /// Weight λ > 0 of the label loss. Default 1.
    pub lambda: f64,
    /// Continuation factor η_μ ∈ (0, 1). Default 0.25.
    pub eta_mu: f64,
    /// A μ stage ends when |F_k − F_{k−1}| / |F_{k−1}| < `tol`. Default 1e-5.
    pub tol: f64,
    /// Maximum FPC steps per μ stage. Default 2,000.
    pub max_stage_iters: usize,
    /// How the shrinkage gets its singular triplets. Default [`ShrinkSvd::Auto`].
    pub svd: ShrinkSvd,
    /// Take each gradient step from the monotone-FISTA extrapolated point (restarted at every
    /// μ stage and adaptively, see [`TransductionFpc`]) instead of the iterate. Default `false`
    /// (plain FPC, as in the paper).
    pub accelerate: bool,
}

impl Default for TransductionParams {
    fn default() -> Self {
        Self {
            variant: TransductionVariant::Mc1,
            lambda: 1.0,
            eta_mu: 0.25,
            tol: 1e-5,
            max_stage_iters: 2000,
            svd: ShrinkSvd::Auto,
            accelerate: false,
        }
    }
}

/// [`TransductionParams`] that passed [`TransductionParams::check`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValidTransductionParams(TransductionParams);

impl std::ops::Deref for ValidTransductionParams {
    type Target = TransductionParams;
    fn deref(&self) -> &TransductionParams {
        &self.0
    }
}

impl TransductionParams {
    /// Checks λ > 0, η_μ ∈ (0, 1), tol > 0 and max_stage_iters ≥ 1.
    pub fn check(&self) -> Result<ValidTransductionParams, SolverError> {
        check_pos("lambda", self.lambda)?;
        if !(self.eta_mu > 0.0 && self.eta_mu < 1.0) {
            return Err(param_err(
                "eta_mu",
                format!("must be in (0, 1), got {}", self.eta_mu),
            ));
        }
        check_pos("tol", self.tol)?;
        if self.max_stage_iters == 0 {
            return Err(param_err("max_stage_iters", "must be >= 1"));
        }
        Ok(ValidTransductionParams(*self))
    }
}

/// The iterate at one μ of the path.
#[derive(Debug, Clone, PartialEq)]
pub struct TransductionSolution {
    /// MC-1 or MC-b.
    pub variant: TransductionVariant,
    /// The μ of this stage.
    pub mu: f64,
    /// Z: t label rows, d feature rows (and the all-ones row for MC-1), n columns.
    pub z: Mat<f64>,
    /// The bias b_i of every label row (zeros for MC-1).
    pub bias: Vec<f64>,
    /// Objective F_μ(Z, b) at the end of the stage.
    pub objective: f64,
    /// Rank of Z.
    pub rank: usize,
    /// FPC steps spent in this stage.
    pub iterations: usize,
    /// Whether the stage ended by the tolerance (not by `max_stage_iters`).
    pub converged: bool,
    n_labels: usize,
    n_features: usize,
}

impl TransductionSolution {
    /// Label scores z_ij + b_i (t × n).
    pub fn label_scores(&self) -> Mat<f64> {
        Mat::from_fn(self.n_labels, self.z.ncols(), |i, j| {
            self.z[(i, j)] + self.bias[i]
        })
    }

    /// Predicted labels sign(z_ij + b_i) as ±1 (t × n); a score of exactly 0 gives −1.
    pub fn predicted_labels(&self) -> Mat<f64> {
        let s = self.label_scores();
        Mat::from_fn(s.nrows(), s.ncols(), |i, j| {
            if s[(i, j)] > 0.0 { 1.0 } else { -1.0 }
        })
    }

    /// Imputed features: the d feature rows of Z (d × n).
    pub fn imputed_features(&self) -> Mat<f64> {
        self.z.subrows(self.n_labels, self.n_features).to_owned()
    }
}

/// The iterates of one continuation run, one per μ of the requested grid, in grid order.
#[derive(Debug, Clone, PartialEq)]
pub struct TransductionPath {
    /// One solution per μ of the grid.
    pub solutions: Vec<TransductionSolution>,
    /// Objective after the start and after every FPC step (at that step's μ).
    pub objective_trace: Vec<f64>,
    /// FPC steps in total.
    pub iterations: usize,
}

/// σ_1 of the gradient of the smooth loss at Z = 0, b = 0: the zero-filled observed matrix with
/// label entries −λ y/(2|Ω_Y|), feature entries −x/|Ω_X| (and a zero ones-row for MC-1). Z = 0
/// minimises the MC-b objective for every μ ≥ σ_1; continuation starts at η_μ σ_1.
pub fn sigma1_at_zero(
    problem: &TransductionProblem,
    params: &ValidTransductionParams,
) -> Result<f64, SolverError> {
    let (t, n) = (problem.n_labels(), problem.n_items());
    let m = t + problem.n_features();
    let mut g = Mat::<f64>::zeros(m, n);
    let (wy, wx) = loss_weights(problem, params.lambda);
    for (i, j, y) in problem.labels.iter() {
        g[(i, j)] = -0.5 * wy * y;
    }
    for (i, j, x) in problem.features.iter() {
        g[(t + i, j)] = -wx * x;
    }
    Ok(largest_singular_value(g.as_ref())?)
}

/// The decreasing grid μ_k = σ_1 η_μ^k, k = 1..=`count`, with σ_1 from [`sigma1_at_zero`]
/// (the continuation path of the paper: μ_1 = η_μ σ_1, μ_{k+1} = η_μ μ_k).
pub fn mu_grid(
    problem: &TransductionProblem,
    params: &ValidTransductionParams,
    count: usize,
) -> Result<Vec<f64>, SolverError> {
    let s1 = sigma1_at_zero(problem, params)?;
    if !(s1 > 0.0 && s1.is_finite()) {
        return Err(SolverError::InvalidInput {
            what: "observed entries",
            reason: format!("the gradient at zero has σ_1 = {s1}; no μ grid can be built"),
        });
    }
    let mut mu = s1;
    Ok((0..count)
        .map(|_| {
            mu *= params.eta_mu;
            mu
        })
        .collect())
}

/// λ/|Ω_Y| and 1/|Ω_X| (0 for an empty set).
fn loss_weights(problem: &TransductionProblem, lambda: f64) -> (f64, f64) {
    let ny = problem.labels.len();
    let nx = problem.features.len();
    let wy = if ny == 0 { 0.0 } else { lambda / ny as f64 };
    let wx = if nx == 0 { 0.0 } else { 1.0 / nx as f64 };
    (wy, wx)
}

/// τ_Z = min(3.8|Ω_Y|/λ, |Ω_X|) and τ_b = 3.8|Ω_Y|/(λ n), over the non-empty sets.
pub fn step_sizes(problem: &TransductionProblem, lambda: f64) -> (f64, f64) {
    let ny = problem.labels.len() as f64;
    let nx = problem.features.len() as f64;
    let n = problem.n_items() as f64;
    let ty = if ny > 0.0 {
        3.8 * ny / lambda
    } else {
        f64::INFINITY
    };
    let tx = if nx > 0.0 { nx } else { f64::INFINITY };
    let tau_b = if ny > 0.0 {
        3.8 * ny / (lambda * n)
    } else {
        0.0
    };
    (ty.min(tx), tau_b)
}

/// log(1 + exp(−m)) without overflow.
fn softplus_neg(m: f64) -> f64 {
    if m > 0.0 {
        (-m).exp().ln_1p()
    } else {
        -m + m.exp().ln_1p()
    }
}

/// 1 / (1 + exp(m)), the derivative of −log(1 + exp(−m)) with respect to m, without overflow.
fn sigmoid_neg(m: f64) -> f64 {
    if m > 0.0 {
        let e = (-m).exp();
        e / (1.0 + e)
    } else {
        1.0 / (1.0 + m.exp())
    }
}

fn check_iterate(
    problem: &TransductionProblem,
    variant: TransductionVariant,
    z: MatRef<'_, f64>,
    bias: &[f64],
) -> Result<(), SolverError> {
    let m = problem.z_rows(variant);
    if z.nrows() != m || z.ncols() != problem.n_items() {
        return Err(dim_err(
            "Z",
            format!("{m} x {}", problem.n_items()),
            format!("{} x {}", z.nrows(), z.ncols()),
        ));
    }
    if bias.len() != problem.n_labels() {
        return Err(dim_err(
            "bias",
            format!("{} entries", problem.n_labels()),
            format!("{}", bias.len()),
        ));
    }
    crate::error::check_finite_mat("Z", z)?;
    if let Some((i, b)) = bias.iter().enumerate().find(|(_, b)| !b.is_finite()) {
        return Err(SolverError::InvalidInput {
            what: "bias",
            reason: format!("non-finite value {b} at {i}"),
        });
    }
    Ok(())
}

/// The smooth loss f(Z, b) (DESIGN §3.5) for an iterate of the given variant (the ones row of
/// MC-1 and the bias are used as given; MC-1 ignores `bias` when it is all zeros).
pub fn transduction_loss(
    problem: &TransductionProblem,
    variant: TransductionVariant,
    lambda: f64,
    z: MatRef<'_, f64>,
    bias: &[f64],
) -> Result<f64, SolverError> {
    check_pos("lambda", lambda)?;
    check_iterate(problem, variant, z, bias)?;
    Ok(smooth_loss(problem, lambda, z, bias))
}

fn smooth_loss(
    problem: &TransductionProblem,
    lambda: f64,
    z: MatRef<'_, f64>,
    bias: &[f64],
) -> f64 {
    let t = problem.n_labels();
    let (wy, wx) = loss_weights(problem, lambda);
    let ly: f64 = problem
        .labels
        .iter()
        .map(|(i, j, y)| softplus_neg(y * (z[(i, j)] + bias[i])))
        .sum();
    let lx: f64 = problem
        .features
        .iter()
        .map(|(i, j, x)| {
            let r = z[(t + i, j)] - x;
            0.5 * r * r
        })
        .sum();
    wy * ly + wx * lx
}

/// The gradient of the smooth loss: ∇_Z f (same shape as Z, non-zero on Ω only) and ∇_b f.
pub fn transduction_gradient(
    problem: &TransductionProblem,
    variant: TransductionVariant,
    lambda: f64,
    z: MatRef<'_, f64>,
    bias: &[f64],
) -> Result<(Mat<f64>, Vec<f64>), SolverError> {
    check_pos("lambda", lambda)?;
    check_iterate(problem, variant, z, bias)?;
    let mut g = Mat::<f64>::zeros(z.nrows(), z.ncols());
    let mut gb = vec![0.0; bias.len()];
    for_each_gradient(
        problem,
        lambda,
        z,
        bias,
        |i, j, v| {
            g[(i, j)] = v;
        },
        &mut gb,
    );
    Ok((g, gb))
}

/// Calls `visit(row of Z, column, ∂f/∂z)` for every observed entry and accumulates ∂f/∂b.
fn for_each_gradient(
    problem: &TransductionProblem,
    lambda: f64,
    z: MatRef<'_, f64>,
    bias: &[f64],
    mut visit: impl FnMut(usize, usize, f64),
    gb: &mut [f64],
) {
    let t = problem.n_labels();
    let (wy, wx) = loss_weights(problem, lambda);
    for (i, j, y) in problem.labels.iter() {
        // d/dz log(1 + exp(−y z)) = −y / (1 + exp(y z))
        let g = -wy * y * sigmoid_neg(y * (z[(i, j)] + bias[i]));
        gb[i] += g;
        visit(i, j, g);
    }
    for (i, j, x) in problem.features.iter() {
        visit(t + i, j, wx * (z[(t + i, j)] - x));
    }
}

/// The largest singular value of a (small) dense matrix.
fn largest_singular_value(a: MatRef<'_, f64>) -> Result<f64, LinalgError> {
    if a.nrows() == 0 || a.ncols() == 0 {
        return Ok(0.0);
    }
    let g = if a.nrows() <= a.ncols() {
        a * a.transpose()
    } else {
        a.transpose() * a
    };
    let (vals, _) = sym_eig(g.as_ref())?;
    Ok(vals.last().copied().unwrap_or(0.0).max(0.0).sqrt())
}

/// Eigenvalues (ascending) and, with `vectors`, eigenvectors of a symmetric matrix (its lower
/// triangle is read), computed sequentially: the solver runs inside parallel trials and folds,
/// where faer's own parallelism would only oversubscribe the cores.
fn sym_evd_seq(g: MatRef<'_, f64>, vectors: bool) -> Result<(Vec<f64>, Mat<f64>), SolverError> {
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::linalg::evd::{ComputeEigenvectors, self_adjoint_evd, self_adjoint_evd_scratch};
    let n = g.nrows();
    crate::error::check_finite_mat("Gram matrix", g)?;
    let mut s = faer::diag::Diag::<f64>::zeros(n);
    let mut u = Mat::<f64>::zeros(if vectors { n } else { 0 }, if vectors { n } else { 0 });
    if n == 0 {
        return Ok((Vec::new(), u));
    }
    let compute = if vectors {
        ComputeEigenvectors::Yes
    } else {
        ComputeEigenvectors::No
    };
    let mut buf = MemBuffer::new(self_adjoint_evd_scratch::<f64>(
        n,
        compute,
        Par::Seq,
        Default::default(),
    ));
    self_adjoint_evd(
        g,
        s.as_mut(),
        if vectors { Some(u.as_mut()) } else { None },
        Par::Seq,
        MemStack::new(&mut buf),
        Default::default(),
    )
    .map_err(|e| {
        SolverError::Linalg(LinalgError::Factorization(
            "symmetric eigendecomposition",
            format!("{e:?}"),
        ))
    })?;
    Ok((s.column_vector().iter().copied().collect(), u))
}

/// The symmetric product A Aᵀ (m ≤ n) or Aᵀ A, one triangle by a sequential GEMM, mirrored.
fn gram_seq(a: MatRef<'_, f64>) -> Mat<f64> {
    // AᵀA of the (tall) operand
    let tall = if a.nrows() <= a.ncols() {
        a.transpose()
    } else {
        a
    };
    gimc_linalg::dense::gram_tn_with(tall, Par::Seq)
}

/// Ω_Y then Ω_X as (row of Z, column, value), each sorted by (column, row).
fn column_major_entries(problem: &TransductionProblem) -> Vec<(usize, usize, f64)> {
    let mut labels: Vec<(usize, usize, f64)> = problem.labels.iter().collect();
    let t = problem.n_labels();
    let mut features: Vec<(usize, usize, f64)> = problem
        .features
        .iter()
        .map(|(i, j, x)| (t + i, j, x))
        .collect();
    labels.sort_by_key(|e| (e.1, e.0));
    features.sort_by_key(|e| (e.1, e.0));
    labels.extend(features);
    labels
}

/// Observed entries stored column by column (CSC-like): the label entries of column j are
/// `label_ptr[j]..label_ptr[j + 1]` and its feature entries `feature_ptr[j]..feature_ptr[j + 1]`
/// (positions into `rows` / `vals`, rows of Z, labels first then features), in the order of
/// [`column_major_entries`].
#[derive(Debug)]
struct ColumnEntries {
    label_ptr: Vec<usize>,
    feature_ptr: Vec<usize>,
    rows: Vec<usize>,
    vals: Vec<f64>,
}

impl ColumnEntries {
    /// From [`column_major_entries`] (the first `split` of them labels) for n columns.
    fn new(entries: &[(usize, usize, f64)], split: usize, n: usize) -> Self {
        let ptr = |part: &[(usize, usize, f64)], offset: usize| {
            let mut p = vec![0usize; n + 1];
            for e in part {
                p[e.1 + 1] += 1;
            }
            for j in 0..n {
                p[j + 1] += p[j];
            }
            p.iter_mut().for_each(|x| *x += offset);
            p
        };
        let (labels, features) = entries.split_at(split);
        Self {
            label_ptr: ptr(labels, 0),
            feature_ptr: ptr(features, split),
            rows: entries.iter().map(|e| e.0).collect(),
            vals: entries.iter().map(|e| e.2).collect(),
        }
    }
}

/// Smallest fraction of the feature block observed for [`DenseFeatures`].
const DENSE_FEATURES: f64 = 0.25;

/// The observed features as dense column-major d × n arrays: values (0 off Ω_X), a 0/1 mask
/// and the gradient ∂f/∂z of the feature rows (0 off Ω_X).
#[derive(Debug)]
struct DenseFeatures {
    t: usize,
    d: usize,
    x: Vec<f64>,
    mask: Vec<f64>,
    grad: Vec<f64>,
}

impl DenseFeatures {
    fn new(problem: &TransductionProblem) -> Option<Self> {
        let (t, d, n) = (problem.n_labels(), problem.n_features(), problem.n_items());
        let size = d.checked_mul(n)?;
        if size == 0 || (problem.features.len() as f64) < DENSE_FEATURES * size as f64 {
            return None;
        }
        let mut x = vec![0.0; size];
        let mut mask = vec![0.0; size];
        for (i, j, v) in problem.features.iter() {
            x[j * d + i] = v;
            mask[j * d + i] = 1.0;
        }
        Some(Self {
            t,
            d,
            x,
            mask,
            grad: vec![0.0; size],
        })
    }
}

/// The columns of a matrix with unit row stride as slices.
fn col_slices(z: MatRef<'_, f64>) -> Vec<&[f64]> {
    (0..z.ncols())
        .map(|j| {
            z.col(j)
                .try_as_col_major()
                .map_or(&[][..], |c| c.as_slice())
        })
        .collect()
}

/// The result of one shrinkage: Z = U diag(s) Vᵀ = S_t(A), with σ the kept singular values of A
/// (s = σ − t). V is absent when Z was formed as U diag(1 − t/σ) Uᵀ A.
struct Shrunk {
    z: Mat<f64>,
    u: Mat<f64>,
    s: Vec<f64>,
    sigma: Vec<f64>,
    v: Option<Mat<f64>>,
}

impl Shrunk {
    fn from_svd(svd: Svd, thresh: f64) -> Self {
        let us = svd.u_scaled();
        let mut z = Mat::<f64>::zeros(svd.u.nrows(), svd.v.nrows());
        if !svd.s.is_empty() {
            matmul(
                z.as_mut(),
                Accum::Replace,
                us.as_ref(),
                svd.v.transpose(),
                1.0,
                Par::Seq,
            );
        }
        let sigma = svd.s.iter().map(|s| s + thresh).collect();
        Self {
            z,
            u: svd.u,
            s: svd.s,
            sigma,
            v: Some(svd.v),
        }
    }

    /// Vᵀc for the n-vector c (with V = Aᵀ U diag(1/σ) when V was not formed).
    fn vt_times(&self, a: MatRef<'_, f64>, c: &[f64]) -> Vec<f64> {
        match &self.v {
            Some(v) => (0..v.ncols())
                .map(|k| (0..c.len()).map(|j| v[(j, k)] * c[j]).sum())
                .collect(),
            None => {
                let mut ac = vec![0.0; a.nrows()];
                for (j, &cj) in c.iter().enumerate() {
                    let col = a.col(j);
                    if let Some(col) = col.try_as_col_major() {
                        for (v, &x) in ac.iter_mut().zip(col.as_slice()) {
                            *v += x * cj;
                        }
                    } else {
                        for (i, v) in ac.iter_mut().enumerate() {
                            *v += col[i] * cj;
                        }
                    }
                }
                (0..self.u.ncols())
                    .map(|k| {
                        (0..ac.len()).map(|i| self.u[(i, k)] * ac[i]).sum::<f64>() / self.sigma[k]
                    })
                    .collect()
            }
        }
    }
}

/// Singular value shrinkage S_t(A) from the eigendecomposition of the smaller Gram matrix.
/// For m ≤ n: A Aᵀ = U Λ Uᵀ, σ = √λ; with k triplets above t, Z = U diag(σ − t) Vᵀ where
/// V = Aᵀ U diag(1/σ), formed as (AᵀU) products (2mnk) when k < m/2 and as the projector
/// product (U diag(1 − t/σ) Uᵀ) A (m²n) otherwise. For m > n the roles swap (AᵀA, U = AV/σ).
fn gram_shrink(a: MatRef<'_, f64>, thresh: f64) -> Result<Shrunk, SolverError> {
    let (m, n) = a.shape();
    let wide = m <= n;
    let small = m.min(n);
    // one triangle of the symmetric Gram matrix, mirrored
    let g = gram_seq(a);
    let (vals, vecs) = sym_evd_seq(g.as_ref(), true)?;
    // eigenvalues ascending: walk from the top
    let keep: Vec<(usize, f64)> = (0..vals.len())
        .rev()
        .map(|i| (i, vals[i].max(0.0).sqrt()))
        .take_while(|&(_, s)| s > thresh)
        .collect();
    let k = keep.len();
    let basis = Mat::from_fn(small, k, |r, c| vecs[(r, keep[c].0)]);
    let sigma: Vec<f64> = keep.iter().map(|&(_, s)| s).collect();
    let s: Vec<f64> = sigma.iter().map(|s| s - thresh).collect();
    if wide && 2 * k >= m && k > 0 {
        // Z = P A with P = U diag(1 − t/σ) Uᵀ
        // both are GEMM left operands: zero padding (see `dense::zeros_padded`)
        let uw = dense::padded_from_fn(m, k, |r, c| basis[(r, c)] * s[c] / sigma[c]);
        let mut p = dense::zeros_padded(m, m);
        matmul(
            p.as_mut(),
            Accum::Replace,
            uw.as_ref(),
            basis.transpose(),
            1.0,
            Par::Seq,
        );
        let mut z = Mat::<f64>::zeros(m, n);
        matmul(z.as_mut(), Accum::Replace, p.as_ref(), a, 1.0, Par::Seq);
        return Ok(Shrunk {
            z,
            u: basis,
            s,
            sigma,
            v: None,
        });
    }
    let mut other = Mat::<f64>::zeros(if wide { n } else { m }, k);
    if k > 0 {
        if wide {
            matmul(
                other.as_mut(),
                Accum::Replace,
                a.transpose(),
                basis.as_ref(),
                1.0,
                Par::Seq,
            );
        } else {
            matmul(
                other.as_mut(),
                Accum::Replace,
                a,
                basis.as_ref(),
                1.0,
                Par::Seq,
            );
        }
    }
    for (c, &sg) in sigma.iter().enumerate() {
        let inv = 1.0 / sg;
        for r in 0..other.nrows() {
            other[(r, c)] *= inv;
        }
    }
    let svd = if wide {
        Svd {
            u: basis,
            s,
            v: other,
        }
    } else {
        Svd {
            u: other,
            s,
            v: basis,
        }
    };
    Ok(Shrunk::from_svd(svd, thresh))
}

/// The continuation schedule: (μ, index into the grid when the stage is a grid point).
/// Starts at max(`start`, grid[0]) and steps μ ← η μ, landing exactly on every grid point.
pub(crate) fn schedule(start: f64, eta: f64, grid: &[f64]) -> Vec<(f64, Option<usize>)> {
    let mut out = Vec::new();
    let mut next = start;
    for (k, &g) in grid.iter().enumerate() {
        while next > g * (1.0 + 1e-9) {
            out.push((next, None));
            next *= eta;
        }
        out.push((g, Some(k)));
        next = eta * g;
    }
    out
}

/// The iterate of [`TransductionFpc`]: Z, b and the solutions recorded at the grid points.
#[derive(Debug, Clone, PartialEq)]
pub struct TransductionState {
    /// Current Z.
    pub z: Mat<f64>,
    /// Current bias (zeros for MC-1).
    pub bias: Vec<f64>,
    /// Solutions recorded at the end of every grid stage so far.
    pub solutions: Vec<TransductionSolution>,
}

/// FPC for MC-1 / MC-b in the [`IterativeSolver`] shape: one step is one gradient step plus
/// shrinkage (and the MC-1 reset); the continuation over the schedule runs inside. Extras per
/// record: `mu`, `stage`, `rank`, `rel_change`, `restart` (1 when an accelerated step dropped
/// its momentum), `stage_end` (1 when the step ended a stage).
///
/// MC-b is a proximal gradient method with steps below 2/L, so its objective never increases
/// within a stage. MC-1 resets the last row to ones after the shrinkage, which is not the
/// proximal operator of μ‖·‖_* on that affine set; its objective is monitored all the same and
/// the tests check it does not increase on the problems they draw.
///
/// With [`TransductionParams::accelerate`] the gradient step is taken from the extrapolated
/// point of monotone FISTA (Beck & Teboulle 2009, MFISTA: the candidate replaces the iterate
/// only when it lowers the objective), restarted at every μ stage and adaptively within one
/// (O'Donoghue & Candès 2015: after a rejected candidate, and when the inner product
/// ⟨y − z_{k+1}, z_{k+1} − x_k⟩ is positive). A candidate from the iterate itself is the plain
/// FPC step: rejected, it ends the stage when it changes F by less than `tol`, and is taken
/// otherwise. MC-b's objective therefore never increases within a stage; MC-1's can rise only
/// where plain FPC's would (its reset).
#[derive(Debug)]
pub struct TransductionFpc<'a> {
    problem: &'a TransductionProblem,
    params: ValidTransductionParams,
    schedule: Vec<(f64, Option<usize>)>,
    stage: usize,
    stage_iters: usize,
    prev_obj: f64,
    tau_z: f64,
    tau_b: f64,
    rank: usize,
    rng: GimcRng,
    /// Observed entries, labels first then features, each part sorted by column (Z is
    /// column-major) and stored column by column.
    entries: ColumnEntries,
    /// λ/|Ω_Y| and 1/|Ω_X|.
    weights: (f64, f64),
    /// ∂f/∂z at the last evaluated point, one per entry of `entries` (filled by `eval`).
    grad: Vec<f64>,
    /// The feature block as dense d × n arrays when Ω_X covers at least [`DENSE_FEATURES`] of
    /// it (the loss and gradient then stream through columns instead of gathering entries).
    dense: Option<DenseFeatures>,
    /// MFISTA: the extrapolated point (Z, b), the previous iterate and t_k.
    momentum: Option<Momentum>,
    /// The gradient step's buffer, kept from step to step (see [`take_work`]).
    work: Option<Mat<f64>>,
}

#[derive(Debug)]
struct Momentum {
    yz: Mat<f64>,
    yb: Vec<f64>,
    t: f64,
}

impl<'a> TransductionFpc<'a> {
    /// A solver returning the iterates at every μ of `grid` (positive, strictly decreasing).
    pub fn new(
        problem: &'a TransductionProblem,
        params: ValidTransductionParams,
        grid: &[f64],
        rng: &mut GimcRng,
    ) -> Result<Self, SolverError> {
        if grid.is_empty() {
            return Err(param_err("mu grid", "must not be empty"));
        }
        for (k, &g) in grid.iter().enumerate() {
            check_pos("mu", g)?;
            if k > 0 && g >= grid[k - 1] {
                return Err(param_err(
                    "mu grid",
                    format!(
                        "must be strictly decreasing; entry {k} = {g} follows {}",
                        grid[k - 1]
                    ),
                ));
            }
        }
        let start = (params.eta_mu * sigma1_at_zero(problem, &params)?).max(grid[0]);
        let (tau_z, tau_b) = step_sizes(problem, params.lambda);
        Ok(Self {
            problem,
            params,
            schedule: schedule(start, params.eta_mu, grid),
            stage: 0,
            stage_iters: 0,
            prev_obj: f64::NAN,
            tau_z,
            tau_b,
            rank: 0,
            rng: child(rng, 0x7472),
            entries: ColumnEntries::new(
                &column_major_entries(problem),
                problem.labels.len(),
                problem.n_items(),
            ),
            weights: loss_weights(problem, params.lambda),
            grad: vec![0.0; problem.labels.len() + problem.features.len()],
            dense: DenseFeatures::new(problem),
            momentum: None,
            work: None,
        })
    }

    /// The μ stages in order, `Some(k)` marking grid point k.
    pub fn schedule(&self) -> &[(f64, Option<usize>)] {
        &self.schedule
    }

    /// (τ_Z, τ_b).
    pub fn steps(&self) -> (f64, f64) {
        (self.tau_z, self.tau_b)
    }

    /// The starting iterate: Z the rank-1 SVD approximation of the zero-filled observed matrix
    /// (with the ones row for MC-1, which is then reset to ones), b = 0.
    pub fn initial_state(&self) -> Result<TransductionState, SolverError> {
        let p = self.problem;
        let variant = self.params.variant;
        let (t, m, n) = (p.n_labels(), p.z_rows(variant), p.n_items());
        let mut z0 = Mat::<f64>::zeros(m, n);
        for (i, j, y) in p.labels.iter() {
            z0[(i, j)] = y;
        }
        for (i, j, x) in p.features.iter() {
            z0[(t + i, j)] = x;
        }
        if variant == TransductionVariant::Mc1 {
            for j in 0..n {
                z0[(m - 1, j)] = 1.0;
            }
        }
        let svd = thin_svd(z0.as_ref())?.truncate(1);
        let mut z = svd.reconstruct();
        if variant == TransductionVariant::Mc1 {
            for j in 0..n {
                z[(m - 1, j)] = 1.0;
            }
        }
        Ok(TransductionState {
            z,
            bias: vec![0.0; t],
            solutions: Vec::new(),
        })
    }

    fn mu(&self) -> f64 {
        self.schedule.get(self.stage).map_or(f64::NAN, |s| s.0)
    }

    /// The smooth loss f(Z, b) at a point (`with_loss`; else 0 is returned) and, with
    /// `with_grad`, ∂f/∂z on Ω cached in `grad` (one exp per label entry, one log1p more for the
    /// loss). The two are asked for separately where they are used separately (accelerated FPC
    /// needs the gradient at the extrapolated point and the loss at the candidate): the feature
    /// block's gradient-only pass then vectorises, its loss-only pass stores nothing. The loss
    /// is summed in the same order in every mode.
    fn eval_with(
        &mut self,
        z: MatRef<'_, f64>,
        bias: &[f64],
        with_loss: bool,
        with_grad: bool,
    ) -> f64 {
        let owned;
        let z = if z.row_stride() == 1 {
            z
        } else {
            owned = z.to_owned();
            owned.as_ref()
        };
        let cols = col_slices(z);
        // one exp (and log1p) per label entry, after the shrinkage's GEMMs (gimc_linalg::simd)
        gimc_linalg::simd::clear_upper_state();
        let (wy, wx) = self.weights;
        let (mut ly, mut lx) = (0.0, 0.0);
        let e = &self.entries;
        let grad = &mut self.grad;
        for (j, col) in cols.iter().enumerate() {
            let r = e.label_ptr[j]..e.label_ptr[j + 1];
            let part = e.rows[r.clone()].iter().zip(&e.vals[r.clone()]);
            for ((&i, &y), g) in part.zip(&mut grad[r]) {
                // m = y (z + b); log(1 + e^{−m}) and d/dz = −y / (1 + e^{m})
                let m = y * (col[i] + bias[i]);
                let ex = (-m.abs()).exp();
                if with_loss {
                    ly += (-m).max(0.0) + ex.ln_1p();
                }
                if with_grad {
                    let sig = if m > 0.0 {
                        ex / (1.0 + ex)
                    } else {
                        1.0 / (1.0 + ex)
                    };
                    *g = -wy * y * sig;
                }
            }
        }
        if let Some(df) = self.dense.as_mut() {
            // same terms in the same (column, row) order, plus exact zeros off Ω_X
            let (t, d) = (df.t, df.d);
            for (j, col) in cols.iter().enumerate() {
                let zc = &col[t..t + d];
                let range = j * d..(j + 1) * d;
                let (xc, mc) = (&df.x[range.clone()], &df.mask[range.clone()]);
                let gc = &mut df.grad[range];
                match (with_loss, with_grad) {
                    (true, true) => {
                        for i in 0..d {
                            let r = (zc[i] - xc[i]) * mc[i];
                            lx += 0.5 * r * r;
                            gc[i] = wx * r;
                        }
                    }
                    (true, false) => {
                        for ((&z, &x), &m) in zc.iter().zip(xc).zip(mc) {
                            let r = (z - x) * m;
                            lx += 0.5 * r * r;
                        }
                    }
                    (false, _) => {
                        for (((g, &z), &x), &m) in gc.iter_mut().zip(zc).zip(xc).zip(mc) {
                            *g = wx * ((z - x) * m);
                        }
                    }
                }
            }
            return wy * ly + wx * lx;
        }
        for (j, col) in cols.iter().enumerate() {
            let r = e.feature_ptr[j]..e.feature_ptr[j + 1];
            let part = e.rows[r.clone()].iter().zip(&e.vals[r.clone()]);
            for ((&i, &x), g) in part.zip(&mut grad[r]) {
                let r = col[i] - x;
                lx += 0.5 * r * r;
                if with_grad {
                    *g = wx * r;
                }
            }
        }
        wy * ly + wx * lx
    }

    fn eval(&mut self, z: MatRef<'_, f64>, bias: &[f64]) -> f64 {
        self.eval_with(z, bias, true, true)
    }

    /// S_t(A) by the configured method.
    fn shrink(&mut self, a: MatRef<'_, f64>, thresh: f64) -> Result<Shrunk, SolverError> {
        let (m, n) = a.shape();
        let min_dim = m.min(n);
        match self.params.svd {
            ShrinkSvd::Auto if min_dim <= GRAM_LIMIT => gram_shrink(a, thresh),
            ShrinkSvd::Exact => Ok(Shrunk::from_svd(
                shrink_singular_values(thin_svd(a)?, thresh)?,
                thresh,
            )),
            ShrinkSvd::Auto | ShrinkSvd::Partial => {
                let rsvd = RsvdParams {
                    oversampling: 10,
                    power_iters: 4,
                };
                let mut k = (self.rank + 5).clamp(1, min_dim.max(1));
                loop {
                    if k + rsvd.oversampling >= min_dim {
                        let svd = shrink_singular_values(thin_svd(a)?, thresh)?;
                        return Ok(Shrunk::from_svd(svd, thresh));
                    }
                    let svd = top_k_svd_with(a, k, &rsvd, &mut self.rng)?;
                    if svd.s.last().is_none_or(|&s| s <= thresh) {
                        let svd = shrink_singular_values(svd, thresh)?;
                        return Ok(Shrunk::from_svd(svd, thresh));
                    }
                    k = (2 * k).min(min_dim);
                }
            }
        }
    }

    /// The gradient step A = Z − τ_Z ∇_Z f, b ← b − τ_b ∇_b f (DESIGN §3.5) from the point
    /// (Z, b), using the gradient cached at that point by [`Self::eval_with`], into a buffer
    /// with zero padding (a GEMM left operand when Z is tall; see `dense::zeros_padded`).
    fn descent_from_cache(&mut self, z: MatRef<'_, f64>, bias: &[f64]) -> (Mat<f64>, Vec<f64>) {
        let (tau_z, tau_b) = (self.tau_z, self.tau_b);
        let mut a = take_work(&mut self.work, z.nrows(), z.ncols());
        a.copy_from(z);
        let mut new_b = bias.to_vec();
        let e = &self.entries;
        let mcb = self.params.variant == TransductionVariant::McB;
        for j in 0..a.ncols() {
            let mut col = a.col_mut(j);
            for k in e.label_ptr[j]..e.label_ptr[j + 1] {
                let (i, g) = (e.rows[k], self.grad[k]);
                col[i] -= tau_z * g;
            }
            if let Some(df) = self.dense.as_ref() {
                // a zero gradient off Ω_X leaves those entries exactly as they are
                let gc = &df.grad[j * df.d..(j + 1) * df.d];
                let mut block = col.as_mut().subrows_mut(df.t, df.d);
                if let Some(slice) = block.as_mut().try_as_col_major_mut() {
                    for (v, &g) in slice.as_slice_mut().iter_mut().zip(gc) {
                        *v -= tau_z * g;
                    }
                } else {
                    for (i, &g) in gc.iter().enumerate() {
                        block[i] -= tau_z * g;
                    }
                }
            } else {
                for k in e.feature_ptr[j]..e.feature_ptr[j + 1] {
                    col[e.rows[k]] -= tau_z * self.grad[k];
                }
            }
        }
        if mcb {
            // ∇_b f accumulated in the order of the label entries (by column, then row)
            for j in 0..a.ncols() {
                for k in e.label_ptr[j]..e.label_ptr[j + 1] {
                    new_b[e.rows[k]] -= tau_b * self.grad[k];
                }
            }
        }
        (a, new_b)
    }

    /// [`Self::descent_from_cache`] with the gradient at (Y, b) evaluated in the same pass over
    /// the columns (accelerated FPC's step from the extrapolated point): no gradient array is
    /// written and read back, and Y is read once. The same operations in the same order as
    /// `eval_with(Y, b, false, true)` followed by [`Self::descent_from_cache`], so bitwise the
    /// same A and b; the label gradients are still cached (as `eval_with` caches them).
    fn descent_fused(&mut self, y: MatRef<'_, f64>, bias: &[f64]) -> (Mat<f64>, Vec<f64>) {
        let Some(df) = self.dense.as_ref() else {
            self.eval_with(y, bias, false, true);
            return self.descent_from_cache(y, bias);
        };
        let mut a = take_work(&mut self.work, y.nrows(), y.ncols());
        a.copy_from(y);
        let (tau_z, tau_b) = (self.tau_z, self.tau_b);
        let (wy, wx) = self.weights;
        let (t, d) = (df.t, df.d);
        let mut new_b = bias.to_vec();
        let e = &self.entries;
        let grad = &mut self.grad;
        let mcb = self.params.variant == TransductionVariant::McB;
        gimc_linalg::simd::clear_upper_state();
        for j in 0..a.ncols() {
            let mut col = a.col_mut(j);
            let r = e.label_ptr[j]..e.label_ptr[j + 1];
            for k in r {
                let (i, yv) = (e.rows[k], e.vals[k]);
                // m = y (z + b); d/dz log(1 + e^{−m}) = −y / (1 + e^{m}) (as in `eval_with`)
                let m = yv * (col[i] + bias[i]);
                let ex = (-m.abs()).exp();
                let sig = if m > 0.0 {
                    ex / (1.0 + ex)
                } else {
                    1.0 / (1.0 + ex)
                };
                let g = -wy * yv * sig;
                grad[k] = g;
                col[i] -= tau_z * g;
                if mcb {
                    new_b[i] -= tau_b * g;
                }
            }
            let range = j * d..(j + 1) * d;
            let (xc, mc) = (&df.x[range.clone()], &df.mask[range]);
            let mut block = col.as_mut().subrows_mut(t, d);
            if let Some(slice) = block.as_mut().try_as_col_major_mut() {
                for ((v, &x), &m) in slice.as_slice_mut().iter_mut().zip(xc).zip(mc) {
                    *v -= tau_z * (wx * ((*v - x) * m));
                }
            } else {
                for i in 0..d {
                    block[i] -= tau_z * (wx * ((block[i] - xc[i]) * mc[i]));
                }
            }
        }
        (a, new_b)
    }

    /// One proximal gradient step from the point (Z, b): returns the new (Z, b), F_μ there and
    /// the rank of the shrunk matrix. With `fused`, the gradient at (Z, b) is evaluated in the
    /// gradient step's pass ([`Self::descent_fused`]); else the one cached at that point is used.
    fn prox_step(
        &mut self,
        z: MatRef<'_, f64>,
        bias: &[f64],
        mu: f64,
        it: usize,
        fused: bool,
    ) -> Result<(Mat<f64>, Vec<f64>, f64, usize), SolverError> {
        let variant = self.params.variant;
        let tau_z = self.tau_z;
        let (a, new_b) = if fused {
            self.descent_fused(z, bias)
        } else {
            self.descent_from_cache(z, bias)
        };
        // one vectorised pass: a NaN or an infinity anywhere makes the sum non-finite
        if !a.sum().is_finite() || new_b.iter().any(|b| !b.is_finite()) {
            return Err(SolverError::NonFinite {
                solver: "transduction-fpc",
                what: "gradient step",
                iteration: it,
            });
        }
        // shrinkage Z = U max(Λ − τ_Z μ, 0) Vᵀ
        let shrunk = self.shrink(a.as_ref(), tau_z * mu)?;
        let rank = shrunk.s.len();
        let mut new_z = shrunk.z;
        let nuclear = if variant == TransductionVariant::Mc1 {
            // reset the ones row (DESIGN §3.5); ‖Z‖_* of Z = U S Vᵀ + e_m cᵀ
            let (m, n) = (new_z.nrows(), new_z.ncols());
            let c: Vec<f64> = (0..n).map(|j| 1.0 - new_z[(m - 1, j)]).collect();
            for j in 0..n {
                new_z[(m - 1, j)] = 1.0;
            }
            let parts = Shrunk {
                z: Mat::zeros(0, 0),
                u: shrunk.u,
                s: shrunk.s,
                sigma: shrunk.sigma,
                v: shrunk.v,
            };
            let vtc = parts.vt_times(a.as_ref(), &c);
            mc1_nuclear_norm(parts.u.as_ref(), &parts.s, &vtc, &c)?
        } else {
            shrunk.s.iter().sum()
        };
        self.work = Some(a);
        // plain FPC steps next from this point and needs its gradient; accelerated FPC steps
        // from the extrapolated point and evaluates the gradient there
        let with_grad = !self.params.accelerate;
        let f = self.eval_with(new_z.as_ref(), &new_b, true, with_grad) + mu * nuclear;
        if !f.is_finite() {
            return Err(SolverError::NonFinite {
                solver: "transduction-fpc",
                what: "objective",
                iteration: it,
            });
        }
        Ok((new_z, new_b, f, rank))
    }
}

/// A buffer for the gradient step's A with zero padding: the one the last step left in `work`
/// (its padding is still zero; every other entry is overwritten) or a new one.
fn take_work(work: &mut Option<Mat<f64>>, nrows: usize, ncols: usize) -> Mat<f64> {
    match work.take() {
        Some(w) if w.nrows() == nrows && w.ncols() == ncols => w,
        _ => dense::zeros_padded(nrows, ncols),
    }
}

/// The adaptive restart test of accelerated FPC, ⟨y − z, z − x⟩ over the Z blocks and the
/// biases (all Z of the same shape, unit row stride), returned, and in the same pass the
/// extrapolation y ← z + c (z − x) written over y (each entry of y is read before it is
/// written).
fn restart_product_extrapolate(
    mut y: MatMut<'_, f64>,
    yb: &mut [f64],
    (z, zb): (MatRef<'_, f64>, &[f64]),
    (x, xb): (MatRef<'_, f64>, &[f64]),
    c: f64,
) -> f64 {
    // four partial sums: the result only decides a restart
    let mut acc = [0.0; 4];
    for j in 0..z.ncols() {
        let (zc, xc) = (z.col(j), x.col(j));
        match (
            y.as_mut().col_mut(j).try_as_col_major_mut(),
            zc.try_as_col_major(),
            xc.try_as_col_major(),
        ) {
            (Some(yc), Some(zc), Some(xc)) => {
                let (yc, zc, xc) = (yc.as_slice_mut(), zc.as_slice(), xc.as_slice());
                let len = yc.len();
                let tail = len - len % 4;
                let mut chunks = yc
                    .chunks_exact_mut(4)
                    .zip(zc.chunks_exact(4))
                    .zip(xc.chunks_exact(4));
                for ((y4, z4), x4) in &mut chunks {
                    for l in 0..4 {
                        acc[l] += (y4[l] - z4[l]) * (z4[l] - x4[l]);
                        y4[l] = z4[l] + c * (z4[l] - x4[l]);
                    }
                }
                for i in tail..len {
                    acc[0] += (yc[i] - zc[i]) * (zc[i] - xc[i]);
                    yc[i] = zc[i] + c * (zc[i] - xc[i]);
                }
            }
            _ => {
                for i in 0..z.nrows() {
                    acc[0] += (y[(i, j)] - zc[i]) * (zc[i] - xc[i]);
                    y[(i, j)] = zc[i] + c * (zc[i] - xc[i]);
                }
            }
        }
    }
    let mut bias_sum = 0.0;
    for ((v, &z), &x) in yb.iter_mut().zip(zb).zip(xb) {
        bias_sum += (*v - z) * (z - x);
        *v = z + c * (z - x);
    }
    acc.iter().sum::<f64>() + bias_sum
}

/// out = a + c (b − d) entrywise (all of the same shape, unit row stride), column by column.
fn add_scaled_diff(
    mut out: MatMut<'_, f64>,
    a: MatRef<'_, f64>,
    c: f64,
    b: MatRef<'_, f64>,
    d: MatRef<'_, f64>,
) {
    for j in 0..out.ncols() {
        let (ac, bc, dc) = (a.col(j), b.col(j), d.col(j));
        let slices = (
            ac.try_as_col_major(),
            bc.try_as_col_major(),
            dc.try_as_col_major(),
        );
        match (out.as_mut().col_mut(j).try_as_col_major_mut(), slices) {
            (Some(o), (Some(a), Some(b), Some(d))) => {
                let (o, a, b, d) = (o.as_slice_mut(), a.as_slice(), b.as_slice(), d.as_slice());
                for (((o, &a), &b), &d) in o.iter_mut().zip(a).zip(b).zip(d) {
                    *o = a + c * (b - d);
                }
            }
            _ => {
                for i in 0..out.nrows() {
                    out[(i, j)] = ac[i] + c * (bc[i] - dc[i]);
                }
            }
        }
    }
}

/// ‖Z‖_* of the MC-1 iterate after the reset, Z = U S Vᵀ + e_m cᵀ with c = 1 − (U S Vᵀ)_m,
/// in O(m k + k³) given Vᵀc: Z = [U, e_m] B with B = [S Vᵀ; cᵀ]; the thin QR of [U, e_m] has
/// R = [[I, q], [0, ρ]] with q = Uᵀ e_m, ρ = √(1 − ‖q‖²), and the singular values of Z are the
/// square roots of the eigenvalues of R (B Bᵀ) Rᵀ, where B Bᵀ = [[S², S Vᵀc], [cᵀV S, cᵀc]].
fn mc1_nuclear_norm(
    u: MatRef<'_, f64>,
    s: &[f64],
    vtc: &[f64],
    c: &[f64],
) -> Result<f64, SolverError> {
    let k = s.len();
    let m = u.nrows();
    let ctc: f64 = c.iter().map(|x| x * x).sum();
    let q: Vec<f64> = (0..k).map(|col| u[(m - 1, col)]).collect();
    let rho = (1.0 - q.iter().map(|x| x * x).sum::<f64>()).max(0.0).sqrt();
    // with B Bᵀ = [[D, w], [wᵀ, γ]] (D = S², w = S Vᵀc, γ = cᵀc), R (B Bᵀ) Rᵀ is
    // [[D + q wᵀ + w qᵀ + γ q qᵀ, ρ (w + γ q)], [ρ (w + γ q)ᵀ, ρ² γ]]: O(k²), lower triangle
    let w: Vec<f64> = (0..k).map(|a| s[a] * vtc[a]).collect();
    let core = Mat::from_fn(k + 1, k + 1, |a, b| match (a < k, b < k) {
        (true, true) => {
            let d = if a == b { s[a] * s[a] } else { 0.0 };
            d + q[a] * w[b] + w[a] * q[b] + ctc * q[a] * q[b]
        }
        (true, false) => rho * (w[a] + ctc * q[a]),
        (false, true) => rho * (w[b] + ctc * q[b]),
        (false, false) => rho * rho * ctc,
    });
    let (vals, _) = sym_evd_seq(core.as_ref(), false)?;
    Ok(vals.iter().map(|v| v.max(0.0).sqrt()).sum())
}

impl IterativeSolver for TransductionFpc<'_> {
    type State = TransductionState;

    fn name(&self) -> &'static str {
        "transduction-fpc"
    }

    fn init(&mut self, st: &mut TransductionState) -> Result<Progress, SolverError> {
        check_iterate(self.problem, self.params.variant, st.z.as_ref(), &st.bias)?;
        let sv = st.z.as_ref().singular_values().map_err(|e| {
            SolverError::Linalg(LinalgError::Factorization(
                "singular values",
                format!("{e:?}"),
            ))
        })?;
        self.rank = sv.iter().filter(|&&s| s > 0.0).count();
        let mu = self.mu();
        let f = self.eval(st.z.as_ref(), &st.bias) + mu * sv.iter().sum::<f64>();
        self.prev_obj = f;
        if self.params.accelerate {
            self.momentum = Some(Momentum {
                yz: st.z.clone(),
                yb: st.bias.clone(),
                t: 1.0,
            });
        }
        let mut p = Progress::new(f, false);
        p.extras = vec![("mu", mu), ("stage", 0.0), ("rank", self.rank as f64)];
        Ok(p)
    }

    fn step(&mut self, st: &mut TransductionState, it: usize) -> Result<Progress, SolverError> {
        let mu = self.mu();
        let variant = self.params.variant;
        let mut restarted = false;
        let (f, rel) = match self.momentum.take() {
            None => {
                // plain FPC: the gradient at the iterate was cached by its evaluation
                let (z, b, f, rank) = self.prox_step(st.z.as_ref(), &st.bias, mu, it, false)?;
                self.rank = rank;
                st.z = z;
                st.bias = b;
                let rel = (self.prev_obj - f).abs() / self.prev_obj.abs().max(f64::MIN_POSITIVE);
                (f, rel)
            }
            Some(mom) => {
                // MFISTA: candidate from the extrapolated point, kept only if it is better
                let Momentum {
                    yz: mut y,
                    mut yb,
                    t,
                } = mom;
                let (cz, cb, fc, rank) = self.prox_step(y.as_ref(), &yb, mu, it, true)?;
                self.rank = rank;
                // t = 1: y is the iterate itself (a stage start or a restart), so the candidate
                // is the plain FPC step. A rejected plain step ends the stage when it changes F
                // by less than the tolerance (the iterate is stationary up to rounding); a larger
                // increase (MC-1's reset is not a proximal step) is taken as plain FPC takes it.
                // Rejecting it would only repeat the same step until `max_stage_iters`.
                let from_iterate = t <= 1.0;
                let change =
                    (self.prev_obj - fc).abs() / self.prev_obj.abs().max(f64::MIN_POSITIVE);
                let accepted = fc <= self.prev_obj || (from_iterate && change >= self.params.tol);
                // adaptive restart (O'Donoghue & Candès 2015): momentum is dropped (t = 1, y =
                // the iterate) when the candidate is rejected (function scheme) or when the
                // step from y to the candidate points against the last change of the iterate,
                // ⟨y − z_{k+1}, z_{k+1} − x_k⟩ > 0 (gradient scheme). (Restarts alone did not
                // end the 1,000-step spins on yeast; the plain-step rule above did.)
                //
                // y = x_{k+1} + ((t_k − 1)/t_{k+1})(x_{k+1} − x_k) with x_{k+1} = z_{k+1} (the
                // candidate, accepted); MFISTA's term in z_{k+1} − x_{k+1} vanishes because a
                // rejected candidate restarts. Written into y's buffer, in the same pass as the
                // restart test; a restart (rare) then redoes it with coefficient 0.
                let restart = if accepted {
                    let t_next = 0.5 * (1.0 + (1.0 + 4.0 * t * t).sqrt());
                    let c2 = (t - 1.0) / t_next;
                    let product = restart_product_extrapolate(
                        y.as_mut(),
                        &mut yb,
                        (cz.as_ref(), &cb),
                        (st.z.as_ref(), &st.bias),
                        c2,
                    );
                    if product > 0.0 {
                        add_scaled_diff(y.as_mut(), cz.as_ref(), 0.0, cz.as_ref(), st.z.as_ref());
                        for ((v, &c), &p) in yb.iter_mut().zip(&cb).zip(&st.bias) {
                            *v = c + 0.0 * (c - p);
                        }
                    }
                    st.z = cz;
                    st.bias = cb;
                    product > 0.0
                } else {
                    true
                };
                let t_next = if restart {
                    1.0
                } else {
                    0.5 * (1.0 + (1.0 + 4.0 * t * t).sqrt())
                };
                if !accepted {
                    y.copy_from(st.z.as_ref());
                    yb.copy_from_slice(&st.bias);
                }
                self.momentum = Some(Momentum {
                    yz: y,
                    yb,
                    t: t_next,
                });
                let rel = if accepted || from_iterate {
                    change
                } else {
                    f64::INFINITY
                };
                restarted = restart;
                (if accepted { fc } else { self.prev_obj }, rel)
            }
        };
        self.stage_iters += 1;
        let mut extras = vec![
            ("mu", mu),
            ("stage", self.stage as f64),
            ("rank", self.rank as f64),
            ("rel_change", rel),
            ("restart", f64::from(u8::from(restarted))),
        ];
        let tol_met = rel < self.params.tol;
        let stage_end = tol_met || self.stage_iters >= self.params.max_stage_iters;
        let mut converged = false;
        if stage_end {
            if let Some(&(mu, Some(_))) = self.schedule.get(self.stage) {
                st.solutions.push(TransductionSolution {
                    variant,
                    mu,
                    z: st.z.clone(),
                    bias: st.bias.clone(),
                    objective: f,
                    rank: self.rank,
                    iterations: self.stage_iters,
                    converged: tol_met,
                    n_labels: self.problem.n_labels(),
                    n_features: self.problem.n_features(),
                });
            }
            self.stage += 1;
            self.stage_iters = 0;
            converged = self.stage >= self.schedule.len();
            extras.push(("stage_end", 1.0));
            if !converged {
                // the objective of the current iterate at the next stage's μ (and the cached
                // gradient at the iterate, for plain FPC)
                let next_mu = self.mu();
                let nuclear = nuclear_norm(st.z.as_ref())?;
                self.prev_obj = self.eval(st.z.as_ref(), &st.bias) + next_mu * nuclear;
                if let Some(mom) = self.momentum.as_mut() {
                    // restart the momentum at every stage
                    mom.yz = st.z.clone();
                    mom.yb = st.bias.clone();
                    mom.t = 1.0;
                }
            }
        } else {
            self.prev_obj = f;
            // (plain FPC: the cache already holds the gradient at the new iterate)
            extras.push(("stage_end", 0.0));
        }
        Ok(Progress {
            objective: f,
            extras,
            converged,
        })
    }
}

/// ‖Z‖_* by the singular values of the smaller Gram matrix (stage changes only).
fn nuclear_norm(z: MatRef<'_, f64>) -> Result<f64, SolverError> {
    if z.nrows() == 0 || z.ncols() == 0 {
        return Ok(0.0);
    }
    let sv = z.singular_values().map_err(|e| {
        SolverError::Linalg(LinalgError::Factorization(
            "singular values",
            format!("{e:?}"),
        ))
    })?;
    Ok(sv.iter().sum())
}

/// MC-1 / MC-b by FPC along a decreasing grid of μ (one continuation run from
/// max(η_μ σ_1, grid₀)); returns the iterate at every grid point. Build the grid with
/// [`mu_grid`].
pub fn fit_transduction_path(
    problem: &TransductionProblem,
    params: &ValidTransductionParams,
    grid: &[f64],
    rng: &mut GimcRng,
    observer: &mut impl Observer,
) -> Result<TransductionPath, SolverError> {
    let mut solver = TransductionFpc::new(problem, *params, grid, rng)?;
    let mut st = solver.initial_state()?;
    let max_iter = solver
        .schedule()
        .len()
        .saturating_mul(params.max_stage_iters);
    let report = run(&mut solver, &mut st, max_iter, observer)?;
    Ok(TransductionPath {
        solutions: st.solutions,
        objective_trace: report.objective_trace,
        iterations: report.iterations,
    })
}

/// MC-1 / MC-b at one target μ (continuation from η_μ σ_1 down to μ).
pub fn fit_transduction(
    problem: &TransductionProblem,
    params: &ValidTransductionParams,
    mu: f64,
    rng: &mut GimcRng,
    observer: &mut impl Observer,
) -> Result<TransductionSolution, SolverError> {
    let path = fit_transduction_path(problem, params, &[mu], rng, observer)?;
    path.solutions
        .into_iter()
        .next()
        .ok_or(SolverError::Empty("continuation stages"))
}

/// Settings of [`cross_validate_transduction`].
#[derive(Debug, Clone, PartialEq)]
pub struct TransductionCvParams {
    /// Number of folds (≥ 2). Default 5.
    pub folds: usize,
    /// λ candidates. Default {1e-3, 1e-2, 1e-1, 1}.
    pub lambdas: Vec<f64>,
    /// Length K of the μ grid μ_k = σ_1 η_μ^k, k = 1..=K (σ_1 per λ on the whole problem).
    /// Default 8.
    pub mu_count: usize,
}

impl Default for TransductionCvParams {
    fn default() -> Self {
        Self {
            folds: 5,
            lambdas: vec![1e-3, 1e-2, 1e-1, 1.0],
            mu_count: 8,
        }
    }
}

/// The outcome of [`cross_validate_transduction`].
#[derive(Debug, Clone, PartialEq)]
pub struct TransductionCv {
    /// The chosen λ.
    pub lambda: f64,
    /// The chosen μ.
    pub mu: f64,
    /// The μ grid of every λ (rows in the order of the λ candidates).
    pub grids: Vec<Vec<f64>>,
    /// Mean held-out label error (%) for every (λ, μ), same layout as `grids`.
    pub errors: Vec<Vec<f64>>,
}

/// Assigns each of `len` entries to one of `folds` folds at random (balanced sizes).
pub(crate) fn fold_assignment(len: usize, folds: usize, rng: &mut GimcRng) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..len).collect();
    idx.shuffle(rng);
    let mut fold = vec![0; len];
    for (pos, &e) in idx.iter().enumerate() {
        fold[e] = pos % folds.max(1);
    }
    fold
}

/// Chooses λ and μ by `folds`-fold cross-validation: Ω_Y and Ω_X are each split into folds at
/// random; for every fold and λ one continuation run on the other folds gives the iterate at
/// every μ of that λ's grid, scored by the label error (%) on the held-out labels. The (λ, μ)
/// with the lowest mean error wins (ties: the larger μ, then the first λ). The runs are
/// parallel (rayon); each draws from its own stream of `rng`.
pub fn cross_validate_transduction(
    problem: &TransductionProblem,
    params: &ValidTransductionParams,
    cv: &TransductionCvParams,
    rng: &mut GimcRng,
) -> Result<TransductionCv, SolverError> {
    if cv.folds < 2 {
        return Err(param_err(
            "folds",
            format!("must be >= 2, got {}", cv.folds),
        ));
    }
    if cv.lambdas.is_empty() || cv.mu_count == 0 {
        return Err(param_err(
            "lambdas / mu_count",
            "need at least one λ and one μ",
        ));
    }
    if problem.labels.len() < cv.folds {
        return Err(param_err(
            "folds",
            format!(
                "{} observed labels cannot be split into {} folds",
                problem.labels.len(),
                cv.folds
            ),
        ));
    }
    let label_fold = fold_assignment(problem.labels.len(), cv.folds, rng);
    let feature_fold = fold_assignment(problem.features.len(), cv.folds, rng);
    let lambda_params = cv
        .lambdas
        .iter()
        .map(|&lambda| TransductionParams { lambda, ..**params }.check())
        .collect::<Result<Vec<_>, _>>()?;
    let grids = lambda_params
        .iter()
        .map(|p| mu_grid(problem, p, cv.mu_count))
        .collect::<Result<Vec<_>, _>>()?;
    let tasks: Vec<(usize, usize)> = (0..cv.lambdas.len())
        .flat_map(|l| (0..cv.folds).map(move |f| (l, f)))
        .collect();
    let base = rng.clone();
    // (wrong, scored) counts per μ for every (λ, fold)
    let counts = tasks
        .par_iter()
        .map(|&(l, f)| -> Result<Vec<(usize, usize)>, SolverError> {
            let train_y: Vec<usize> = (0..label_fold.len())
                .filter(|&e| label_fold[e] != f)
                .collect();
            let train_x: Vec<usize> = (0..feature_fold.len())
                .filter(|&e| feature_fold[e] != f)
                .collect();
            let sub = problem.subset(&train_y, &train_x)?;
            let mut trng = child(&base, (l * cv.folds + f) as u64);
            let path = fit_transduction_path(
                &sub,
                &lambda_params[l],
                &grids[l],
                &mut trng,
                &mut NoObserver,
            )?;
            Ok(path
                .solutions
                .iter()
                .map(|s| {
                    let mut wrong = 0;
                    let mut scored = 0;
                    for (e, (i, j, y)) in problem.labels.iter().enumerate() {
                        if label_fold[e] == f {
                            scored += 1;
                            if y * (s.z[(i, j)] + s.bias[i]) <= 0.0 {
                                wrong += 1;
                            }
                        }
                    }
                    (wrong, scored)
                })
                .collect())
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut errors = vec![vec![0.0; cv.mu_count]; cv.lambdas.len()];
    for (l, row) in errors.iter_mut().enumerate() {
        for (k, e) in row.iter_mut().enumerate() {
            let (mut wrong, mut scored) = (0, 0);
            for f in 0..cv.folds {
                if let Some(&(w, s)) = counts[l * cv.folds + f].get(k) {
                    wrong += w;
                    scored += s;
                }
            }
            *e = if scored == 0 {
                f64::INFINITY
            } else {
                100.0 * wrong as f64 / scored as f64
            };
        }
    }
    let (mut best_l, mut best_k) = (0, 0);
    for k in 0..cv.mu_count {
        for l in 0..cv.lambdas.len() {
            if errors[l][k] < errors[best_l][best_k] {
                best_l = l;
                best_k = k;
            }
        }
    }
    Ok(TransductionCv {
        lambda: cv.lambdas[best_l],
        mu: grids[best_l][best_k],
        grids,
        errors,
    })
}

/// Cross-validates λ and μ ([`cross_validate_transduction`]) and refits on the whole problem
/// with the chosen pair (continuation along the chosen λ's grid down to the chosen μ).
pub fn fit_transduction_cv(
    problem: &TransductionProblem,
    params: &ValidTransductionParams,
    cv: &TransductionCvParams,
    rng: &mut GimcRng,
) -> Result<(TransductionSolution, TransductionCv), SolverError> {
    let result = cross_validate_transduction(problem, params, cv, rng)?;
    let p = TransductionParams {
        lambda: result.lambda,
        ..**params
    }
    .check()?;
    let grid: Vec<f64> = result
        .grids
        .iter()
        .zip(&cv.lambdas)
        .find(|(_, l)| **l == result.lambda)
        .map(|(g, _)| g.iter().copied().take_while(|&m| m >= result.mu).collect())
        .unwrap_or_else(|| vec![result.mu]);
    let mut frng = child(rng, 0x0066_6974);
    let path = fit_transduction_path(problem, &p, &grid, &mut frng, &mut NoObserver)?;
    let sol = path
        .solutions
        .into_iter()
        .last()
        .ok_or(SolverError::Empty("continuation stages"))?;
    Ok((sol, result))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimc_linalg::rng::{gaussian_mat, seeded};

    /// A small problem with ±1 labels and features observed at random with probability `p`.
    fn random_problem(t: usize, d: usize, n: usize, p: f64, seed: u64) -> TransductionProblem {
        use rand::Rng;
        let mut rng = seeded(seed);
        let x = gaussian_mat(&mut rng, d, n, 1.0);
        let (mut lr, mut lc, mut lv) = (Vec::new(), Vec::new(), Vec::new());
        let (mut fr, mut fc, mut fv) = (Vec::new(), Vec::new(), Vec::new());
        for j in 0..n {
            for i in 0..t {
                if rng.random::<f64>() < p {
                    lr.push(i);
                    lc.push(j);
                    lv.push(if x[(i % d, j)] > 0.0 { 1.0 } else { -1.0 });
                }
            }
            for i in 0..d {
                if rng.random::<f64>() < p {
                    fr.push(i);
                    fc.push(j);
                    fv.push(x[(i, j)]);
                }
            }
        }
        TransductionProblem::new(
            Observed::from_triplets(t, n, &lr, &lc, &lv).unwrap(),
            Observed::from_triplets(d, n, &fr, &fc, &fv).unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn dense_feature_path_is_bitwise_the_sparse_one() {
        let problem = random_problem(3, 8, 40, 0.6, 21);
        for (variant, accelerate) in [
            (TransductionVariant::Mc1, true),
            (TransductionVariant::McB, true),
            (TransductionVariant::McB, false),
        ] {
            let params = TransductionParams {
                variant,
                lambda: 0.5,
                accelerate,
                max_stage_iters: 200,
                ..TransductionParams::default()
            }
            .check()
            .unwrap();
            let grid = mu_grid(&problem, &params, 4).unwrap();
            let fit = |dense: bool| {
                let mut rng = seeded(5);
                let mut solver = TransductionFpc::new(&problem, params, &grid, &mut rng).unwrap();
                if !dense {
                    solver.dense = None;
                } else {
                    assert!(solver.dense.is_some());
                }
                let mut st = solver.initial_state().unwrap();
                let report = run(&mut solver, &mut st, 2000, &mut NoObserver).unwrap();
                (st.solutions, report.objective_trace)
            };
            let (a, ta) = fit(true);
            let (b, tb) = fit(false);
            assert_eq!(ta, tb);
            assert_eq!(a.len(), grid.len());
            for (x, y) in a.iter().zip(&b) {
                assert_eq!(x.z, y.z);
                assert_eq!(x.bias, y.bias);
                assert_eq!(x.objective, y.objective);
            }
        }
        // a sparse feature block keeps the entry lists
        let sparse = random_problem(2, 8, 40, 0.1, 22);
        let params = TransductionParams::default().check().unwrap();
        let grid = mu_grid(&sparse, &params, 2).unwrap();
        let solver = TransductionFpc::new(&sparse, params, &grid, &mut seeded(1)).unwrap();
        assert!(solver.dense.is_none());
    }

    #[test]
    fn schedule_lands_on_grid_points() {
        let s = schedule(100.0, 0.25, &[10.0, 2.5, 0.1]);
        let mus: Vec<f64> = s.iter().map(|x| x.0).collect();
        assert_eq!(mus, vec![100.0, 25.0, 10.0, 2.5, 0.625, 0.15625, 0.1]);
        let marks: Vec<Option<usize>> = s.iter().map(|x| x.1).collect();
        assert_eq!(
            marks,
            vec![None, None, Some(0), Some(1), None, None, Some(2)]
        );
        // a grid point above the start is the first stage
        let s = schedule(1.0, 0.25, &[4.0, 1.0]);
        assert_eq!(s, vec![(4.0, Some(0)), (1.0, Some(1))]);
    }

    #[test]
    fn gram_shrink_matches_exact_shrinkage() {
        let mut rng = seeded(3);
        for (m, n) in [(6, 20), (20, 6), (7, 7)] {
            let a = gaussian_mat(&mut rng, m, n, 1.0);
            for t in [1.5, 0.2] {
                let exact = shrink_singular_values(thin_svd(a.as_ref()).unwrap(), t).unwrap();
                let gram = gram_shrink(a.as_ref(), t).unwrap();
                assert_eq!(exact.s.len(), gram.s.len());
                for (x, y) in exact.s.iter().zip(&gram.s) {
                    assert!((x - y).abs() < 1e-10);
                }
                assert!((exact.reconstruct() - &gram.z).norm_l2() < 1e-9);
                // Vᵀc either way
                let c: Vec<f64> = (0..n).map(|j| j as f64 - 3.0).collect();
                let want: Vec<f64> = (0..exact.s.len())
                    .map(|k| (0..n).map(|j| exact.v[(j, k)] * c[j]).sum())
                    .collect();
                let got = gram.vt_times(a.as_ref(), &c);
                for (w, g) in want.iter().zip(&got) {
                    assert!((w.abs() - g.abs()).abs() < 1e-8, "{w} vs {g}");
                }
            }
        }
    }

    #[test]
    fn mc1_nuclear_norm_matches_dense() {
        let mut rng = seeded(4);
        for (m, n, k) in [(9, 14, 3), (6, 30, 0), (12, 5, 4)] {
            let a = gaussian_mat(&mut rng, m, n, 1.0);
            let svd = thin_svd(a.as_ref()).unwrap().truncate(k);
            let mut z = svd.reconstruct();
            let c: Vec<f64> = (0..n).map(|j| 1.0 - z[(m - 1, j)]).collect();
            for j in 0..n {
                z[(m - 1, j)] = 1.0;
            }
            let dense: f64 = z.singular_values().unwrap().iter().sum();
            let vtc: Vec<f64> = (0..k)
                .map(|col| (0..n).map(|j| svd.v[(j, col)] * c[j]).sum())
                .collect();
            let f = mc1_nuclear_norm(svd.u.as_ref(), &svd.s, &vtc, &c).unwrap();
            assert!((dense - f).abs() < 1e-9 * dense, "{dense} vs {f}");
        }
    }

    #[test]
    fn stable_logistic_pieces() {
        for m in [-800.0, -3.0, 0.0, 2.0, 800.0] {
            let sp = softplus_neg(m);
            assert!(sp.is_finite() && sp >= 0.0);
            let s = sigmoid_neg(m);
            assert!((0.0..=1.0).contains(&s));
        }
        assert!((softplus_neg(0.0) - 2f64.ln()).abs() < 1e-15);
        assert!((sigmoid_neg(0.0) - 0.5).abs() < 1e-15);
        assert!((softplus_neg(-800.0) - 800.0).abs() < 1e-9);
    }
}
