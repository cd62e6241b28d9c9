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
//! By default ([`TransductionParams::secant_start`]) every μ stage after the second starts
//! from a secant prediction along the solution path (predictor–corrector continuation), when
//! that lowers the new stage's objective: the stopping rule is unchanged, and on yeast,
//! emotions and the synthetic problems the paths take 9–45 % fewer steps, ending as close to
//! a 10⁻⁸-tolerance reference (objective and held-out label error) as without it.
//!
//! Baselines (imputation followed by one linear SVM per label) are in [`baselines`].

pub mod baselines;
mod cv;
pub mod data;
mod fpc;
mod loss;
mod path;
mod problem;
mod shrink;

pub(crate) use cv::fold_assignment;
pub use cv::{
    TransductionCv, TransductionCvParams, ValidTransductionCvParams, cross_validate_transduction,
    fit_transduction_cv,
};
pub use fpc::{TransductionFpc, TransductionState};
pub use loss::{step_sizes, transduction_gradient, transduction_loss};
pub use path::{fit_transduction, fit_transduction_path, mu_grid, sigma1_at_zero};
pub use problem::{
    ShrinkSvd, TransductionParams, TransductionPath, TransductionProblem, TransductionSolution,
    TransductionVariant, ValidTransductionParams,
};
pub use shrink::GRAM_LIMIT;

#[cfg(test)]
mod tests;
