//! GIMC, goal-directed inductive matrix completion with learned kernel feature maps (DESIGN
//! §3.3).
//!
//! ```
//! use gimc::{Gamma, LabelData, NoObserver, SelectionParams, select_and_fit};
//! use gimc_featmap::FourierFamily;
//! use gimc_linalg::FeatureMatrix;
//! use gimc_linalg::rng::{gaussian_mat, seeded};
//! use gimc_linalg::sprs::TriMat;
//!
//! // 200 points in the plane with 3 nonlinear labels: 0 = inside the unit circle, 1 = outside
//! // it, 2 = in the first or third quadrant.
//! let n = 200;
//! let x = gaussian_mat(&mut seeded(1), n, 2, 1.0);
//! let mut labels = TriMat::new((n, 3));
//! for i in 0..n {
//!     let (a, b) = (x[(i, 0)], x[(i, 1)]);
//!     labels.add_triplet(i, if a * a + b * b < 1.0 { 0 } else { 1 }, 1.0);
//!     if a * b > 0.0 {
//!         labels.add_triplet(i, 2, 1.0);
//!     }
//! }
//! let data = LabelData::multi_label(FeatureMatrix::dense(x)?, labels.to_csr())?;
//! let train = data.select_rows(&(0..150).collect::<Vec<_>>())?;
//! let test = data.select_rows(&(150..n).collect::<Vec<_>>())?;
//!
//! // GIMC-LFF: choose γ and the iteration count on a seeded validation split of the training
//! // rows, then refit on all of them.
//! let params = SelectionParams::default()
//!     .with_gammas(vec![Gamma::Value(0.5), Gamma::Value(2.0)])
//!     .with_lambdas(vec![0.01])
//!     .with_ms(vec![50])
//!     .with_max_iter(5)
//!     .with_seed(3)
//!     .check()?;
//! let selection = select_and_fit(&train, &FourierFamily, &params, &mut NoObserver)?;
//! assert!([0.5, 2.0].contains(&selection.chosen.gamma));
//! let model = selection.model;
//!
//! // Predict the top-2 labels of the held-out rows and score the ranking.
//! let top = model.top_k(test.features(), 2)?;
//! assert_eq!(top.len(), 50);
//! let p1 = model.evaluate(&test, &[1])?.precision_at(1).ok_or("P@1 not computed")?;
//! assert!(p1 > 0.8, "test P@1 {p1}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Modules
//!
//! - [`labels`]: the multi-label / multi-class path — data, fit, model, selection and the
//!   default search [`auto_fit`] (on a data-parallel group, [`auto_fit_sharded`]).
//! - [`completion`]: GIMC on any observed set Ω — data, fit, model and the selection of its
//!   settings on held-out entries.
//! - [`clustering`]: semi-supervised clustering from pairwise constraints (GIMC's Algorithm 2
//!   and its linear baseline [`mccc`]).
//! - Shared by all three: [`persist`] (model files), [`registry`] (map families and codecs),
//!   [`memory`] (peak-memory estimates), [`threads`], the errors ([`GimcError`]), the feature
//!   concatenation [`concat_features`] and the crate-private outer loop and line search.
//!
//! The root re-exports the types and functions of every path.
//!
//! # Contents
//!
//! - [`fit_labels`]: the multi-label / multi-class fast path of GIMC eq. 12 on [`LabelData`] —
//!   closed-form W-step W = (ΦᵀΦ + λI)⁻¹ΦᵀA, Armijo steps on the map parameters U with W fixed
//!   or by variable projection ([`Scheme`]), never an n × L matrix, blocked top-k prediction
//!   ([`LabelModel`]), per-iteration trace and best-validation iterate.
//! - [`fit_completion`]: Algorithm 1 on any observed set Ω — warm-started IMC from
//!   `gimc-solvers` for Z = WHᵀ, then Armijo on U and on V through ∂f/∂Φ = (RQ)Wᵀ and
//!   ∂f/∂Ψ = (RᵀP)Hᵀ, optional best-validation iterate.
//! - [`select_and_fit`]: model selection of γ, λ, m and the iteration count on a validation
//!   split of the training data; combined LFF + LNYS features by [`select_combined`].
//! - [`fit_semisupervised`]: semi-supervised clustering from pairwise constraints (Algorithm 2:
//!   eq. 13 on the constraint matrix with learned maps on both sides, top-k left singular
//!   vectors of ΦW, k-means, λ by held-out constraint error).
//! - [`persist`]: a versioned model file format (safetensors matrices plus JSON metadata,
//!   with a checksum verified on load).
//! - [`registry`]: the open map API — [`MapRegistry`] names map families and the
//!   [`MapCodec`]s that store maps in model files.
//! - [`threads`]: the bound on a requested worker-thread count.
//!
//! Feature maps and their families come from `gimc-featmap` (§3.1). [`fit_labels`] (and
//! [`fit_labels_sharded`]) and [`fit_completion`] (and through it [`fit_semisupervised`]) run
//! one outer loop of Algorithm 1, written once (the crate-private `outer` module: the Armijo
//! searches on the maps, the checks, the best-validation iterate, the observer). The objective
//! never increases across outer iterations, a checked invariant.

#![deny(missing_docs)]

pub mod clustering;
pub mod completion;
mod error;
mod grid;
pub mod labels;
mod linesearch;
mod maps;
pub mod memory;
mod outer;
pub mod persist;
pub mod registry;
pub mod threads;

pub use clustering::mccc;
pub use clustering::{
    MccParams, Mccc, SemiSupFit, SemiSupInputs, SemiSupParams, ValidMccParams, ValidSemiSupParams,
    estimate_mccc, estimate_semisupervised, fit_mccc, fit_semisupervised,
    fit_semisupervised_with_start,
};
pub use completion::{
    Completed, CompletionData, CompletionFit, CompletionInputs, CompletionMethod, CompletionModel,
    CompletionParams, CompletionParts, CompletionSelection, CompletionSelectionParams,
    FactorSelection, ObservedMatrix, ValidCompletionParams, ValidCompletionSelectionParams,
    complete, estimate_completion, estimate_completion_family, fit_completion, select_completion,
};
pub use error::{GimcError, Result};
pub use gimc_linalg::Gamma;
pub use gimc_linalg::memory::{InsufficientMemory, MemoryBudget, MemoryEstimate};
pub use grid::Grid;
pub use labels::{
    AutoParams, AutoSelection, CombinedSelection, LabelData, LabelFit, LabelModel, LabelParams,
    LinearMethod, LinearParams, LinearPart, Precision, RowTransform, Scheme, Selection,
    SelectionObserver, SelectionParams, Storage, Task, ValidAutoParams, ValidLabelParams,
    ValidLinearParams, ValidSelectionParams, auto_fit, auto_fit_sharded, estimate_auto,
    estimate_fit_labels, estimate_linear, estimate_selection, fit_labels, fit_labels_sharded,
    fit_linear, select_and_fit, select_combined,
};
pub use linesearch::{LineSearchParams, ValidLineSearchParams};
pub use maps::concat_features;
pub use outer::FitStop;
pub use registry::{
    AnyMap, BoxedFamily, BoxedMap, DynFamily, KernelMeta, MapCodec, MapRecord, MapRegistry,
};

/// Re-exported observer types (the shared iterative-solver shape of DESIGN §2).
pub use gimc_solvers::{IterationRecord, NoObserver, Observer, ObserverAction, Trace};
