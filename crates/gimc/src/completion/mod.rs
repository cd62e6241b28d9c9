//! General completion of a matrix observed on Ω. [`complete`] is the one entry point: any
//! [`CompletionMethod`] (the solvers' MC-ALS, IMC, nuclear-norm MC / IMC and PU-IMC, or GIMC
//! with a map family on both sides) with its settings chosen on held-out entries by one
//! [`CompletionSelectionParams`]. Below it, GIMC on any Ω (Algorithm 1, DESIGN §3.3): the data
//! ([`CompletionData`]), the hyper-parameters ([`CompletionParams`]), the fit
//! ([`fit_completion`]) and what it returns ([`CompletionFit`]), the fitted model
//! ([`CompletionModel`]) and the choice of its settings ([`select_completion`]).

mod complete;
pub(crate) mod data;
mod factors;
pub(crate) mod fit;
mod method;
pub(crate) mod model;
pub(crate) mod outcome;
pub(crate) mod params;
mod problem;
pub(crate) mod select;

pub use complete::{Completed, ObservedMatrix, complete};
pub use data::CompletionData;
pub use factors::{FactorScore, FactorSelection};
pub use fit::{CompletionInputs, estimate_completion, estimate_completion_family, fit_completion};
pub use method::CompletionMethod;
pub use model::{CompletionModel, CompletionParts};
pub use outcome::{BestCompletion, CompletionFit, CompletionIteration};
pub use params::{CompletionParams, ValidCompletionParams};
pub use select::{
    CompletionScore, CompletionSelection, CompletionSelectionParams,
    ValidCompletionSelectionParams, select_completion,
};
