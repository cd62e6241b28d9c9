//! Matrix-completion solvers of gimc: inductive matrix completion (IMC) by alternating
//! minimisation with conjugate gradient, plain MC by ALS, nuclear-norm MC and IMC, transductive
//! multi-label completion, and a linear toolbox.
//!
//! # Example
//!
//! Inductive matrix completion of a rank-2 matrix A = X W Hᵀ Yᵀ from a third of its entries:
//!
//! ```
//! use gimc_linalg::rng::{gaussian_mat, seeded};
//! use gimc_linalg::{FeatureMatrix, Observed};
//! use gimc_solvers::{ImcParams, ImcProblem, ImcStart, NoObserver, Side, fit_imc};
//!
//! // 30 row entities and 20 column entities with 5 features each
//! let mut rng = seeded(7);
//! let x = gaussian_mat(&mut rng, 30, 5, 1.0);
//! let y = gaussian_mat(&mut rng, 20, 5, 1.0);
//! let (w, h) = (gaussian_mat(&mut rng, 5, 2, 1.0), gaussian_mat(&mut rng, 5, 2, 1.0));
//! let a = (&x * &w) * (&y * &h).transpose();
//!
//! // observe the entries with (i + j) % 3 == 0
//! let (mut rows, mut cols, mut vals) = (vec![], vec![], vec![]);
//! for i in 0..30 {
//!     for j in (0..20).filter(|j| (i + j) % 3 == 0) {
//!         rows.push(i);
//!         cols.push(j);
//!         vals.push(a[(i, j)]);
//!     }
//! }
//! let omega = Observed::from_triplets(30, 20, &rows, &cols, &vals)?;
//!
//! let (fx, fy) = (FeatureMatrix::dense(x)?, FeatureMatrix::dense(y)?);
//! let problem = ImcProblem::partial(Side::Features(&fx), Side::Features(&fy), &omega)?;
//! let params = ImcParams::default().with_rank(2).with_lambda(1e-4).check()?;
//! let model = fit_imc(&problem, &params, ImcStart::Draw(&mut seeded(8)), &mut NoObserver)?;
//!
//! // the objective never increases, and an unobserved entry is recovered
//! assert!(model.objective_trace.windows(2).all(|f| f[1] <= f[0]));
//! let pred = model.predict_entries(Side::Features(&fx), Side::Features(&fy), &[(0, 1)])?;
//! assert!((pred[0] - a[(0, 1)]).abs() < 1e-2 * a.norm_max());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Overview
//!
//! - [`imc`]: IMC Â = Φ W Hᵀ Ψᵀ (GIMC eq. 3, [`fit_imc`]) by alternating W- and H-steps, each a
//!   warm-started CG ridge solve through the sampled-product kernel on Ω; the fully observed
//!   (multi-label) fast path (ΦᵀΦ) S (QᵀQ) and positive-unlabeled (biased) IMC
//!   ([`fit_pu_imc`]) through the same machinery; plain MC (GIMC eq. 2, [`fit_mc_als`]) by
//!   row-wise ALS. Either side is a [`Side`]: features, or the identity.
//! - [`nuclear`]: nuclear-norm MC and IMC by fixed point continuation
//!   Z ← S_{τμ}(Z − τ∇) (GIMC eq. 1, 3).
//! - [`transduction`]: transductive multi-label completion of the joint feature–label matrix,
//!   with its imputation and per-label SVM baselines.
//! - [`linear`]: ridge and multi-target ridge, reduced-rank and bilinear regression, a dual
//!   coordinate-descent linear SVM and L2 logistic regression.
//! - [`iter`]: every solver is an [`IterativeSolver`] driven by [`run`] (the workspace's one
//!   iteration model, [`gimc_linalg::observe`]), with an [`Observer`] receiving one
//!   [`IterationRecord`] per iteration.
//!
//! Hyper-parameters are checked once (`params.check()`, returning e.g. [`ValidImcParams`]);
//! errors are one [`SolverError`] enum with parameter errors kept apart from fit errors.
//! Random draws come from the caller's seeded generator, and results do not depend on the
//! number of threads.

#![deny(missing_docs)]

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
    FactorGradients, FactorProducts, FeatureGradients, FeatureSides, HalfStepReport, ImcAls,
    ImcFactors, ImcInit, ImcModel, ImcParams, ImcProblem, ImcStart, ImcWorkspace, ObservationModel,
    PRECONDITIONER_MAX_DIM, PreconditionerBasis, PuImcInputs, PuImcParams, ValidImcParams,
    ValidPuImcParams, fit_imc, fit_imc_sharded, fit_mc_als, fit_pu_imc, h_step, imc_objective,
    imc_residual, init_factors, preconditioner_bases, w_step,
};
pub use iter::{
    FnObserver, IterationRecord, IterativeSolver, NoObserver, Observer, ObserverAction, Progress,
    RunReport, StopReason, Trace, run,
};
pub use side::{ScreenedFeatures, Side};
pub use transduction::baselines::{
    EmImputation, EmParams, FpcImputation, FpcImputeParams, LabelSvms, SvmCvParams, ValidEmParams,
    ValidFpcImputeParams, ValidSvmCvParams, impute_em_gaussian, impute_fpc_cv, impute_mean,
    impute_zero, svm_per_label_cv,
};
pub use transduction::{
    ShrinkSvd, TransductionCv, TransductionCvParams, TransductionFpc, TransductionParams,
    TransductionPath, TransductionProblem, TransductionSolution, TransductionState,
    TransductionVariant, ValidTransductionCvParams, ValidTransductionParams,
    cross_validate_transduction, fit_transduction, fit_transduction_cv, fit_transduction_path,
    mu_grid,
};

/// Re-exported CG parameters (the `cg` field of [`ImcParams`]).
pub use gimc_linalg::{CgParams, ValidCgParams};
