//! Semi-supervised clustering from pairwise constraints: GIMC's Algorithm 2
//! ([`fit_semisupervised`], learned maps on both sides) and its linear baseline MCCC
//! ([`mccc`]).

pub mod mccc;
pub(crate) mod semisup;

pub use mccc::{MccParams, Mccc, ValidMccParams, estimate_mccc, fit_mccc};
pub use semisup::{
    DEFAULT_LAMBDAS, LambdaScore, SemiSupFit, SemiSupInputs, SemiSupPair, SemiSupParams,
    ValidSemiSupParams, estimate_semisupervised, fit_semisupervised, fit_semisupervised_with_start,
};
