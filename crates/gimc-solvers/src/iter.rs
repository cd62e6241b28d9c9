//! The one shape shared by every iterative solver of this crate (DESIGN §2: "iterative solvers
//! share one shape: init / step / stop, with an observer that records the objective and timing
//! per iteration", after argmin).
//!
//! A solver implements [`IterativeSolver`]: `init` evaluates the starting point, `step` performs
//! one iteration (one ALS alternation, one proximal step, one epoch of coordinate descent, one
//! Newton step) and says whether the solver's own convergence test is met. [`run`] drives it:
//! after `init` and after every `step` it hands an [`IterationRecord`] to an [`Observer`], then
//! stops when the solver converged, the iteration budget is spent, or the observer asks to stop.
//! A non-finite objective stops the run with [`SolverError::NonFinite`]. [`Trace`] stores the
//! records (the experiments plot them); [`NoObserver`] ignores them.

use std::time::Instant;

use crate::SolverError;

/// What a solver reports after `init` and after each `step`.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// The objective value at the current iterate.
    pub objective: f64,
    /// Solver-specific diagnostics (e.g. `("cg_iters", 12.0)`, `("rank", 5.0)`).
    pub extras: Vec<(&'static str, f64)>,
    /// Whether the solver's own stopping test is met (always `false` from `init`).
    pub converged: bool,
}

impl Progress {
    /// A progress report with no extras.
    pub fn new(objective: f64, converged: bool) -> Self {
        Self {
            objective,
            extras: Vec::new(),
            converged,
        }
    }
}

pub use gimc_linalg::observe::{
    FnObserver, IterationRecord, NoObserver, Observer, ObserverAction, Trace,
};

/// An iterative solver: a starting point, one step at a time, its own convergence test.
pub trait IterativeSolver {
    /// The iterate (and whatever the solver carries from one step to the next).
    type State;

    /// A short name used in errors and records (e.g. `"imc-als"`).
    fn name(&self) -> &'static str;

    /// Evaluates the starting point (may also prepare caches).
    fn init(&mut self, state: &mut Self::State) -> Result<Progress, SolverError>;

    /// Performs iteration `iteration` (1-based), updating `state`.
    fn step(&mut self, state: &mut Self::State, iteration: usize) -> Result<Progress, SolverError>;
}

/// Why [`run`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The solver's own convergence test was met.
    Converged,
    /// The iteration budget was spent.
    MaxIterations,
    /// The observer asked to stop.
    Observer,
}

/// Summary of a [`run`].
#[derive(Debug, Clone, PartialEq)]
pub struct RunReport {
    /// Steps performed (not counting `init`).
    pub iterations: usize,
    /// Why the run stopped.
    pub stop_reason: StopReason,
    /// Objective after `init` and after every step (length `iterations + 1`).
    pub objective_trace: Vec<f64>,
    /// Total wall-clock seconds.
    pub elapsed_secs: f64,
}

impl RunReport {
    /// The final objective value.
    pub fn final_objective(&self) -> f64 {
        self.objective_trace.last().copied().unwrap_or(f64::NAN)
    }
}

/// Runs `solver` from `state` for at most `max_iter` steps, reporting to `observer`.
///
/// Stops with [`SolverError::NonFinite`] when an objective is NaN or infinite; the error from a
/// failing step is passed through. `state` then holds the iterate at which the failure happened.
pub fn run<S, O>(
    solver: &mut S,
    state: &mut S::State,
    max_iter: usize,
    observer: &mut O,
) -> Result<RunReport, SolverError>
where
    S: IterativeSolver + ?Sized,
    O: Observer + ?Sized,
{
    let start = Instant::now();
    let name = solver.name();
    let mut trace = Vec::with_capacity(max_iter.saturating_add(1).min(1 << 16));
    let emit = |iteration: usize,
                progress: Progress,
                trace: &mut Vec<f64>,
                observer: &mut O|
     -> Result<(bool, ObserverAction), SolverError> {
        if !progress.objective.is_finite() {
            return Err(SolverError::NonFinite {
                solver: name,
                what: "objective",
                iteration,
            });
        }
        trace.push(progress.objective);
        let record = IterationRecord {
            iteration,
            objective: progress.objective,
            elapsed_secs: start.elapsed().as_secs_f64(),
            extras: progress.extras,
        };
        Ok((progress.converged, observer.observe(&record)))
    };
    let p0 = solver.init(state)?;
    let (_, action) = emit(0, p0, &mut trace, observer)?;
    let mut iterations = 0;
    let mut stop_reason = if action == ObserverAction::Stop {
        StopReason::Observer
    } else {
        StopReason::MaxIterations
    };
    if action == ObserverAction::Continue {
        for it in 1..=max_iter {
            let p = solver.step(state, it)?;
            iterations = it;
            let (converged, action) = emit(it, p, &mut trace, observer)?;
            if converged {
                stop_reason = StopReason::Converged;
                break;
            }
            if action == ObserverAction::Stop {
                stop_reason = StopReason::Observer;
                break;
            }
        }
    }
    Ok(RunReport {
        iterations,
        stop_reason,
        objective_trace: trace,
        elapsed_secs: start.elapsed().as_secs_f64(),
    })
}

/// Relative decrease (f_prev − f) / max(|f_prev|, tiny): the usual stopping quantity on the
/// objective. Negative when the objective increased.
pub(crate) fn relative_decrease(prev: f64, cur: f64) -> f64 {
    (prev - cur) / prev.abs().max(f64::MIN_POSITIVE)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Minimises (x − 3)² by damped steps x ← x − 0.5·(x − 3)·2·0.5.
    struct Toy {
        nan_at: Option<usize>,
    }

    impl IterativeSolver for Toy {
        type State = f64;
        fn name(&self) -> &'static str {
            "toy"
        }
        fn init(&mut self, x: &mut f64) -> Result<Progress, SolverError> {
            Ok(Progress::new((*x - 3.0).powi(2), false))
        }
        fn step(&mut self, x: &mut f64, it: usize) -> Result<Progress, SolverError> {
            *x -= 0.5 * (*x - 3.0);
            let f = if Some(it) == self.nan_at {
                f64::NAN
            } else {
                (*x - 3.0).powi(2)
            };
            let mut p = Progress::new(f, f < 1e-12);
            p.extras.push(("x", *x));
            Ok(p)
        }
    }

    #[test]
    fn driver_records_stops_and_reports_nan() {
        let mut x = 0.0;
        let mut trace = Trace::new();
        let rep = run(&mut Toy { nan_at: None }, &mut x, 1000, &mut trace).unwrap();
        assert_eq!(rep.stop_reason, StopReason::Converged);
        assert_eq!(trace.records.len(), rep.iterations + 1);
        assert_eq!(trace.objectives(), rep.objective_trace);
        assert!(trace.records[0].iteration == 0 && trace.records[1].extra("x") == Some(1.5));
        assert!(rep.objective_trace.windows(2).all(|w| w[1] <= w[0]));

        let mut x = 0.0;
        let rep = run(&mut Toy { nan_at: None }, &mut x, 3, &mut NoObserver).unwrap();
        assert_eq!(
            (rep.iterations, rep.stop_reason),
            (3, StopReason::MaxIterations)
        );

        let mut x = 0.0;
        let mut stop_after_two = FnObserver(|r: &IterationRecord| {
            if r.iteration >= 2 {
                ObserverAction::Stop
            } else {
                ObserverAction::Continue
            }
        });
        let rep = run(&mut Toy { nan_at: None }, &mut x, 100, &mut stop_after_two).unwrap();
        assert_eq!((rep.iterations, rep.stop_reason), (2, StopReason::Observer));

        let mut x = 0.0;
        let err = run(&mut Toy { nan_at: Some(4) }, &mut x, 100, &mut NoObserver).unwrap_err();
        assert_eq!(
            err,
            SolverError::NonFinite {
                solver: "toy",
                what: "objective",
                iteration: 4
            }
        );
        assert!(relative_decrease(2.0, 1.0) > 0.0 && relative_decrease(1.0, 2.0) < 0.0);
    }
}
