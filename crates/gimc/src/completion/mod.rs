//! GIMC on any observed set Ω (Algorithm 1, DESIGN §3.3): the data ([`CompletionData`]), the
//! fit ([`fit_completion`]), the fitted model ([`CompletionModel`]) and the choice of its
//! settings on held-out entries ([`select_completion`]).

pub(crate) mod fit;
pub(crate) mod select;

pub use fit::{
    BestCompletion, CompletionData, CompletionFit, CompletionIteration, CompletionModel,
    CompletionParams, ValidCompletionParams, estimate_completion, estimate_completion_family,
    fit_completion,
};
pub use select::{
    CompletionScore, CompletionSelection, CompletionSelectionParams,
    ValidCompletionSelectionParams, select_completion,
};
