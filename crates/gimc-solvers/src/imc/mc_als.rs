//! Plain matrix completion by row-wise ALS (GIMC eq. 2): IMC with identity sides.

use gimc_linalg::Observed;

use crate::iter::Observer;
use crate::{Side, SolverError};

use super::als::{ImcStart, fit_imc};
use super::params::ValidImcParams;
use super::predict::ImcModel;
use super::problem::ImcProblem;

/// Plain matrix completion (DESIGN §3.2, GIMC eq. 2) by row-wise ALS: IMC with Φ = I, Ψ = I, so
/// every half-step is one exact k × k ridge solve per row (rayon-parallel), sharing the Ω
/// kernels with IMC. The model's W (n_x × k) and H (n_y × k) are the factors of Â = WHᵀ;
/// predict with `Side::Identity` on both sides.
pub fn fit_mc_als(
    omega: &Observed,
    params: &ValidImcParams,
    start: ImcStart<'_>,
    observer: &mut impl Observer,
) -> Result<ImcModel, SolverError> {
    let problem = ImcProblem::partial(
        Side::Identity(omega.nrows()),
        Side::Identity(omega.ncols()),
        omega,
    )?;
    fit_imc(&problem, params, start, observer)
}
