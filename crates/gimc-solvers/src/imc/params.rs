//! The settings of IMC by alternating minimisation ([`ImcParams`]) and their checked form.

use gimc_linalg::cg::{CgParams, ValidCgParams};

use super::factors::ImcInit;
use crate::SolverError;
use crate::error::{check_nonneg, param_err};

gimc_linalg::params! {
    /// Hyper-parameters of [`fit_imc`](super::fit_imc) / [`fit_mc_als`](super::fit_mc_als). Start from
    /// [`ImcParams::default`] and the `with_*` methods; [`ImcParams::check`] validates them into
    /// the [`ValidImcParams`] that the fits take.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct ImcParams => ValidImcParams {
        /// Rank k: 1 ≤ k < min(D_x, D_y). Default 10.
        pub rank: usize = 10 => with_rank,
        /// Ridge weight λ ≥ 0 on ‖W‖² + ‖H‖². Default 0.1.
        pub lambda: f64 = 0.1 => with_lambda,
        /// Maximum number of alternations (W-step + H-step). Default 20.
        pub max_outer: usize = 20 => with_max_outer,
        /// Stop when the relative decrease of f over one alternation is ≤ `tol`. Default 1e-6.
        pub tol: f64 = 1e-6 => with_tol,
        /// CG stopping rule for each half-step with features (warm-started). Default tol 1e-6,
        /// 50 iterations.
        pub cg: CgParams = CgParams::default().with_tol(1e-6).with_max_iter(50) => with_cg,
        /// Initialisation when no warm start is passed. Default [`ImcInit::Spectral`].
        pub init: ImcInit = ImcInit::Spectral => with_init,
    }
    check(manual) -> crate::SolverError;
}

impl ImcParams {
    /// Checks the parameters that do not depend on the data (the rank is also checked against
    /// the problem's dimensions by the fit), the CG stopping rule included.
    pub fn check(&self) -> Result<ValidImcParams, SolverError> {
        if self.rank == 0 {
            return Err(param_err("rank", "must be >= 1"));
        }
        check_nonneg("lambda", self.lambda)?;
        check_nonneg("tol", self.tol)?;
        check_nonneg("cg.tol", self.cg.tol)?;
        // cannot fail after the line above; named `cg.tol` there
        let cg = self.cg.check()?;
        Ok(ValidImcParams { params: *self, cg })
    }
}

/// [`ImcParams`] that passed [`ImcParams::check`]; it derefs to the parameters and keeps the
/// checked CG stopping rule ([`ValidImcParams::valid_cg`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValidImcParams {
    params: ImcParams,
    cg: ValidCgParams,
}

impl ValidImcParams {
    /// The checked parameters.
    pub fn params(&self) -> &ImcParams {
        &self.params
    }

    /// The checked CG stopping rule of the half-steps (the `cg` field).
    pub fn valid_cg(&self) -> &ValidCgParams {
        &self.cg
    }
}

impl std::ops::Deref for ValidImcParams {
    type Target = ImcParams;
    fn deref(&self) -> &ImcParams {
        &self.params
    }
}
