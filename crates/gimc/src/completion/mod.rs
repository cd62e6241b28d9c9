//! GIMC on any observed set Ω (Algorithm 1, DESIGN §3.3): the data ([`CompletionData`]), the
//! hyper-parameters ([`CompletionParams`]), the fit ([`fit_completion`]) and what it returns
//! ([`CompletionFit`]), the fitted model ([`CompletionModel`]) and the choice of its settings
//! on held-out entries ([`select_completion`]).

pub(crate) mod data;
pub(crate) mod fit;
pub(crate) mod model;
pub(crate) mod outcome;
pub(crate) mod params;
mod problem;
pub(crate) mod select;

pub use data::CompletionData;
pub use fit::{estimate_completion, estimate_completion_family, fit_completion};
pub use model::CompletionModel;
pub use outcome::{BestCompletion, CompletionFit, CompletionIteration};
pub use params::{CompletionParams, ValidCompletionParams};
pub use select::{
    CompletionScore, CompletionSelection, CompletionSelectionParams,
    ValidCompletionSelectionParams, select_completion,
};
