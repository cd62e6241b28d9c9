//! Inductive matrix completion by alternating minimisation with conjugate gradient (DESIGN §3.2,
//! GIMC eq. 3; the LEML scheme), plain MC by row-wise ALS (GIMC eq. 2) and the pieces GIMC
//! (DESIGN §3.3) calls between its feature-map updates.
//!
//! The model is Â = Φ W Hᵀ Ψᵀ with W (D_x × k), H (D_y × k). The objective is a weighted sum of
//! a *sampled* term over Ω and a *fully observed* term over every entry,
//!
//! f(W, H) = (w_Ω/2)‖P_Ω(A − ΦWHᵀΨᵀ)‖² + (w_F/2)‖A_F − ΦWHᵀΨᵀ‖² + (λ/2)(‖W‖² + ‖H‖²),
//!
//! which covers the three problems of DESIGN §3.2:
//! - partial observations (w_Ω = 1, w_F = 0): GIMC eq. 3;
//! - fully observed A given by its non-zeros (w_Ω = 0, w_F = 1): the multi-label path, where
//!   Φᵀ(ΦSQᵀ)Q = (ΦᵀΦ)S(QᵀQ) and ΦᵀΦ is computed once, so no n × L matrix is ever formed;
//! - PU / biased IMC (w_F = 1 − α with A_F = the observed positives, w_Ω = 2α − 1 on them):
//!   loss α on observed positives and 1 − α on every unobserved entry (target 0), never
//!   enumerating the unobserved entries.
//!
//! Each half-step (W with H fixed, or H with W fixed) is a ridge problem. With Q = ΨH, the
//! W-step's gradient is Φᵀ[w_Ω R Q + w_F (ΦWQᵀ − A_F) Q] + λW (R the residual on Ω) and its
//! Hessian–vector product is Φᵀ[w_Ω P_Ω((ΦS)Qᵀ) Q] + w_F (ΦᵀΦ) S (QᵀQ) + λS. It is solved by
//! CG warm-started from the current factor with capped iterations when the side has features
//! (never forming an n_x × n_y or Kronecker matrix), and exactly, row by row (one k × k
//! Cholesky per row, rayon-parallel), when the side is the identity: that is plain-MC ALS.
//! Both decrease the half-step's quadratic, so f never increases across iterations.
//!
//! Every one of those products that sums over Ω is a sum over the rows of A, so a partial-Ω
//! fit also runs on row shards across processes ([`fit_imc_sharded`], through
//! `gimc_linalg::sums::RowSums`): each process holds its rows of Ω and Φ, the sums are summed,
//! and W, H and every decision are the same on every process; [`fit_imc`] is its one-process
//! case.

mod als;
mod factors;
mod hessian;
mod mc_als;
mod params;
mod preconditioner;
mod predict;
mod problem;
mod pu;
mod spectral;
mod workspace;

pub use als::{ImcAls, ImcStart, fit_imc, fit_imc_sharded};
pub use factors::{ImcFactors, ImcInit};
pub use hessian::preconditioner_bases;
pub use mc_als::fit_mc_als;
pub use params::{ImcParams, ValidImcParams};
pub use preconditioner::{PRECONDITIONER_MAX_DIM, PreconditionerBasis};
pub use predict::ImcModel;
pub use problem::{ImcProblem, ObservationModel};
pub use pu::{PuImcInputs, PuImcParams, ValidPuImcParams, fit_pu_imc};
pub use spectral::init_factors;
pub use workspace::{
    FactorGradients, FactorProducts, FeatureGradients, FeatureSides, HalfStepReport, ImcWorkspace,
    h_step, imc_objective, imc_residual, w_step,
};

#[cfg(test)]
mod tests;
