//! PU (biased) IMC (DESIGN §3.2): observed positives weighted α, every unobserved entry a
//! target 0 weighted 1 − α.

use gimc_linalg::Observed;

use crate::error::param_err;
use crate::iter::Observer;
use crate::{Side, SolverError};

use super::als::{ImcStart, fit_imc};
use super::params::{ImcParams, ValidImcParams};
use super::predict::ImcModel;
use super::problem::ImcProblem;

gimc_linalg::params! {
    /// Parameters of PU-IMC: the IMC parameters and α. Start from [`PuImcParams::default`] and the
    /// `with_*` methods; [`PuImcParams::check`] validates them into the [`ValidPuImcParams`] that
    /// [`fit_pu_imc`] takes.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct PuImcParams => ValidPuImcParams {
        /// The IMC parameters.
        pub imc: ImcParams = ImcParams::default() => with_imc,
        /// Weight α ∈ (0, 1] of observed positives (1 − α on unlabeled entries). Default 0.75,
        /// i.e. (1 + ρ)/2 for ρ = 0.5.
        pub alpha: f64 = 0.75 => with_alpha,
    }
    check(manual) -> crate::SolverError;
}

impl PuImcParams {
    /// Checks the IMC parameters and α ∈ (0, 1].
    pub fn check(&self) -> Result<ValidPuImcParams, SolverError> {
        let imc = self.imc.check()?;
        if !(self.alpha.is_finite() && self.alpha > 0.0 && self.alpha <= 1.0) {
            return Err(param_err(
                "alpha",
                format!("must be in (0, 1], got {}", self.alpha),
            ));
        }
        Ok(ValidPuImcParams {
            imc,
            alpha: self.alpha,
        })
    }
}

/// [`PuImcParams`] that passed [`PuImcParams::check`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValidPuImcParams {
    imc: ValidImcParams,
    alpha: f64,
}

impl ValidPuImcParams {
    /// The checked IMC parameters.
    pub fn imc(&self) -> &ValidImcParams {
        &self.imc
    }
    /// α.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
}

/// The data of a PU-IMC fit.
#[derive(Debug, Clone, Copy)]
pub struct PuImcInputs<'a> {
    /// Φ: the row features, or the identity.
    pub phi: Side<'a>,
    /// Ψ: the column features, or the identity.
    pub psi: Side<'a>,
    /// The observed positives.
    pub positives: &'a Observed,
}

/// PU (biased) IMC (DESIGN §3.2): fits [`ImcProblem::pu`] built from `inputs`, from `start`.
pub fn fit_pu_imc(
    inputs: PuImcInputs<'_>,
    params: &ValidPuImcParams,
    start: ImcStart<'_>,
    observer: &mut impl Observer,
) -> Result<ImcModel, SolverError> {
    let PuImcInputs {
        phi,
        psi,
        positives,
    } = inputs;
    let problem = ImcProblem::pu(phi, psi, positives, params.alpha)?;
    fit_imc(&problem, &params.imc, start, observer)
}
