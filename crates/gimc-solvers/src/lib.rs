//! Matrix-completion solvers of gimc (DESIGN §3.2): inductive matrix completion
//! Â = Φ W Hᵀ Ψᵀ (GIMC eq. 3) by alternating minimisation whose half-steps are warm-started CG
//! ridge solves using the sampled-product kernel on Ω, with the fully-observed (multi-label) fast
//! path (ΦᵀΦ) S (QᵀQ) and positive-unlabeled (biased) IMC through the same machinery; plain MC
//! (GIMC eq. 2) by row-wise ALS; nuclear-norm MC and IMC by fixed point continuation
//! Z ← S_{τμ}(Z − τ∇) (GIMC eq. 1, 3); and the linear toolbox of §3.2 (ridge and multi-target
//! ridge, reduced-rank and bilinear regression, a dual coordinate-descent linear SVM and L2
//! logistic regression). Every iterative solver has one shape, [`IterativeSolver`] driven by
//! [`run`] with an [`Observer`] receiving one [`IterationRecord`] per iteration (DESIGN §2);
//! hyper-parameters are checked once (`params.check()`), and errors are one [`SolverError`] enum
//! with parameter errors separate from fit errors.

mod error;
pub mod imc;
pub mod iter;
mod kernel;
pub mod linear;
pub mod nuclear;
mod side;
pub mod transduction;

pub use error::SolverError;
pub use imc::{
    FactorGradients, FeatureGradients, HalfStepReport, ImcAls, ImcFactors, ImcInit, ImcModel,
    ImcParams, ImcProblem, ImcWorkspace, ObservationModel, PuImcParams, ValidImcParams,
    ValidPuImcParams, fit_imc, fit_mc_als, fit_pu_imc, h_step, imc_objective, imc_residual,
    init_factors, w_step,
};
pub use iter::{
    FnObserver, IterationRecord, IterativeSolver, NoObserver, Observer, ObserverAction, Progress,
    RunReport, StopReason, Trace, run,
};
pub use side::Side;
pub use transduction::baselines::{
    EmImputation, EmParams, FpcImputation, FpcImputeParams, LabelSvms, SvmCvParams,
    impute_em_gaussian, impute_fpc_cv, impute_mean, impute_zero, svm_per_label_cv,
};
pub use transduction::{
    ShrinkSvd, TransductionCv, TransductionCvParams, TransductionFpc, TransductionParams,
    TransductionPath, TransductionProblem, TransductionSolution, TransductionState,
    TransductionVariant, ValidTransductionParams, cross_validate_transduction, fit_transduction,
    fit_transduction_cv, fit_transduction_path, mu_grid,
};

/// Re-exported CG parameters (the `cg` field of [`ImcParams`]).
pub use gimc_linalg::CgParams;
