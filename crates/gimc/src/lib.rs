//! GIMC, goal-directed inductive matrix completion with learned kernel feature maps (DESIGN
//! §3.3): the multi-label / multi-class fast path of GIMC eq. 12 ([`fit_labels`]: closed-form
//! W-step W = (ΦᵀΦ + λI)⁻¹ΦᵀA, Armijo steps on the map parameters U with W fixed or by
//! variable projection, never an n × L matrix, blocked top-k prediction, per-iteration trace and
//! best-validation iterate), Algorithm 1 on any observed set Ω ([`fit_completion`]: warm-started
//! IMC from `gimc-solvers` for Z = WHᵀ, then Armijo on U and on V through ∂f/∂Φ = (RQ)Wᵀ and
//! ∂f/∂Ψ = (RᵀP)Hᵀ, optional best-validation iterate), model selection of γ, λ, m and the
//! iteration count on a validation split of the training data ([`select_and_fit`]; combined
//! LFF + LNYS features by [`select_combined`]), and a versioned model file format (safetensors
//! matrices plus JSON metadata, [`persist`]), and semi-supervised clustering from pairwise
//! constraints (Algorithm 2, [`fit_semisupervised`]: eq. 13 on the constraint matrix with learned
//! maps on both sides, top-k left singular vectors of ΦW, k-means, λ by held-out constraint
//! error). Feature maps come from `gimc-featmap` (§3.1); the objective never
//! increases across outer iterations, a checked invariant.

mod completion;
mod data;
mod error;
mod fastpath;
mod fit;
mod linesearch;
mod maps;
pub mod mccc;
mod model;
pub mod persist;
pub mod registry;
mod select;
mod semisup;

pub use completion::{
    BestCompletion, CompletionData, CompletionFit, CompletionIteration, CompletionModel,
    CompletionParams, fit_completion,
};
pub use data::{LabelData, Task};
pub use error::{GimcError, Result};
pub use fastpath::{LabelFeatures, LabelProblem};
pub use fit::{BestIterate, FitStop, IterationInfo, LabelFit, LabelParams, Scheme, fit_labels};
pub use linesearch::LineSearchParams;
pub use maps::concat_features;
pub use mccc::{MccParams, Mccc, fit_mccc};
pub use model::{Evaluation, LabelModel};
pub use registry::{
    AnyMap, BoxedFamily, BoxedMap, DynFamily, KernelMeta, MapCodec, MapRecord, MapRegistry,
};
pub use select::{
    Candidate, Chosen, CombinedSelection, Selection, SelectionObserver, SelectionParams,
    SelectionStage, select_and_fit, select_and_fit_observed, select_combined, validation_split,
};
pub use semisup::{DEFAULT_LAMBDAS, LambdaScore, SemiSupFit, SemiSupParams, fit_semisupervised};

/// Re-exported observer types (the shared iterative-solver shape of DESIGN §2).
pub use gimc_solvers::{IterationRecord, NoObserver, Observer, ObserverAction, Trace};
