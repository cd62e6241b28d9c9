//! The solvers' side of the workspace's one iteration model ([`gimc_linalg::observe`]): every
//! solver of this crate implements [`IterativeSolver`] (with [`SolverError`] as its error) and
//! runs on [`run`], which hands an [`IterationRecord`] to an [`Observer`] after `init` and
//! after every step. A NaN or infinite objective stops a run with [`SolverError::NonFinite`].

use crate::SolverError;

pub use gimc_linalg::observe::{
    FnObserver, IterationRecord, IterativeSolver, NoObserver, NonFiniteObjective, Observer,
    ObserverAction, Progress, RunReport, StopReason, Trace, run,
};

impl From<NonFiniteObjective> for SolverError {
    fn from(e: NonFiniteObjective) -> Self {
        SolverError::NonFinite {
            solver: e.solver,
            what: "objective",
            iteration: e.iteration,
        }
    }
}

/// Relative decrease (f_prev − f) / max(|f_prev|, tiny): the usual stopping quantity on the
/// objective. Negative when the objective increased.
pub(crate) fn relative_decrease(prev: f64, cur: f64) -> f64 {
    (prev - cur) / prev.abs().max(f64::MIN_POSITIVE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_non_finite_objective_is_a_solver_error_and_decrease_has_a_sign() {
        let e: SolverError = NonFiniteObjective {
            solver: "imc-als",
            iteration: 4,
        }
        .into();
        assert_eq!(
            e,
            SolverError::NonFinite {
                solver: "imc-als",
                what: "objective",
                iteration: 4
            }
        );
        assert!(relative_decrease(2.0, 1.0) > 0.0 && relative_decrease(1.0, 2.0) < 0.0);
    }
}
