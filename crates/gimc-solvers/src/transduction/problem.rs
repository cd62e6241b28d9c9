//! The transduction problem (observed labels Ω_Y and features Ω_X over the same items), the
//! variant (MC-1 / MC-b), the FPC hyper-parameters and the solutions along the μ path.

use gimc_linalg::Observed;
use gimc_linalg::faer::Mat;

use crate::SolverError;
use crate::error::{check_pos, dim_err, param_err};

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
    ///
    /// [`GRAM_LIMIT`]: super::GRAM_LIMIT
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
    pub(super) labels: Observed,
    pub(super) features: Observed,
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

gimc_linalg::params! {
    /// Hyper-parameters of MC-1 / MC-b by FPC. Build from [`Default`] with the `with_*` methods;
    /// [`TransductionParams::check`] validates them into the [`ValidTransductionParams`] the
    /// solvers take.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct TransductionParams => ValidTransductionParams {
        /// MC-1 or MC-b. Default [`TransductionVariant::Mc1`].
        pub variant: TransductionVariant = TransductionVariant::Mc1 => with_variant,
        /// Weight λ > 0 of the label loss. Default 1.
        pub lambda: f64 = 1.0 => with_lambda,
        /// Continuation factor η_μ ∈ (0, 1). Default 0.25.
        pub eta_mu: f64 = 0.25 => with_eta_mu,
        /// A μ stage ends when |F_k − F_{k−1}| / |F_{k−1}| < `tol`. Default 1e-5.
        pub tol: f64 = 1e-5 => with_tol,
        /// Maximum FPC steps per μ stage. Default 2,000.
        pub max_stage_iters: usize = 2000 => with_max_stage_iters,
        /// How the shrinkage gets its singular triplets. Default [`ShrinkSvd::Auto`].
        pub svd: ShrinkSvd = ShrinkSvd::Auto => with_svd,
        /// Take each gradient step from the monotone-FISTA extrapolated point (restarted at every
        /// μ stage and adaptively, see [`TransductionFpc`]) instead of the iterate. Default `false`
        /// (plain FPC, as in the paper).
        ///
        /// [`TransductionFpc`]: super::TransductionFpc
        pub accelerate: bool = false => with_accelerate,
        /// Start every μ stage after the second from a secant prediction along the solution path
        /// when it lowers the new stage's objective (predictor–corrector continuation, see
        /// [`TransductionFpc`]): the same stopping rule, a closer start. Default `true`; `false`
        /// with `accelerate = false` is the paper's FPC.
        ///
        /// [`TransductionFpc`]: super::TransductionFpc
        pub secant_start: bool = true => with_secant_start,
    }
    /// Checks λ > 0, η_μ ∈ (0, 1), tol > 0 and max_stage_iters ≥ 1.
    check |this| -> crate::SolverError {
        check_pos("lambda", this.lambda)?;
        if !(this.eta_mu > 0.0 && this.eta_mu < 1.0) {
            return Err(param_err(
                "eta_mu",
                format!("must be in (0, 1), got {}", this.eta_mu),
            ));
        }
        check_pos("tol", this.tol)?;
        if this.max_stage_iters == 0 {
            return Err(param_err("max_stage_iters", "must be >= 1"));
        }
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
    pub(super) n_labels: usize,
    pub(super) n_features: usize,
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
