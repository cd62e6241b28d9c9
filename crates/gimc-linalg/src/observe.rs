//! The one iteration model of the workspace (DESIGN §2: "iterative solvers share one shape:
//! init / step / stop, with an observer that records the objective and timing per iteration",
//! after argmin's executor and observers).
//!
//! - A loop implements [`IterativeSolver`]: `init` evaluates the starting point, `step` performs
//!   one iteration (one ALS alternation, one proximal step, one Lloyd iteration of k-means) and
//!   says whether the loop's own convergence test is met.
//! - [`run`] drives it: after `init` (when the starting point has an objective) and after every
//!   `step` it hands an [`IterationRecord`] to an [`Observer`], then stops when the loop converged, the iteration budget is spent, or the
//!   observer asks to stop. A NaN or infinite objective ends the run with the loop's own error
//!   (from [`NonFiniteObjective`]).
//! - The observer answers every record with an [`ObserverAction`]: continue, or stop. What a stop
//!   means is the caller's to document: the solvers return the current iterate, the fits that a
//!   user interrupts return an `Interrupted` error. [`Trace`] stores the records, [`NoObserver`]
//!   ignores them and [`FnObserver`] adapts a closure.
//!
//! Every iterative loop of the workspace runs on [`run`]: the solvers of `gimc-solvers`, the
//! loops of `gimc-cluster` (the k-means and kernel k-means restarts, OKMF's epochs, which have
//! no starting objective) and GIMC's outer loop in `gimc` (whose steps may end the fit without a
//! record, [`StopReason::Halted`], and whose own stopping rules stand behind the convergence
//! flag).
//!
//! ```
//! use gimc_linalg::observe::{FnObserver, IterationRecord, Observer, ObserverAction, Trace};
//!
//! let record = |iteration, objective| IterationRecord {
//!     iteration,
//!     objective,
//!     elapsed_secs: 0.0,
//!     extras: vec![("step", 0.5)],
//! };
//! let mut trace = Trace::new();
//! trace.observe(&record(0, 2.0));
//! trace.observe(&record(1, 1.0));
//! assert_eq!(trace.objectives(), vec![2.0, 1.0]);
//! assert_eq!(trace.records[1].extra("step"), Some(0.5));
//!
//! // Stop once the objective is below 1.5.
//! let mut stop_early = FnObserver(|r: &IterationRecord| {
//!     if r.objective < 1.5 { ObserverAction::Stop } else { ObserverAction::Continue }
//! });
//! assert_eq!(stop_early.observe(&record(0, 2.0)), ObserverAction::Continue);
//! assert_eq!(stop_early.observe(&record(1, 1.0)), ObserverAction::Stop);
//! ```

/// One line of a loop's history, handed to the [`Observer`].
#[derive(Debug, Clone, PartialEq)]
pub struct IterationRecord {
    /// Iteration number: 0 for the starting point, then 1, 2, ….
    pub iteration: usize,
    /// Objective value after this iteration.
    pub objective: f64,
    /// Wall-clock seconds since the run started (includes `init`).
    pub elapsed_secs: f64,
    /// Solver-specific diagnostics.
    pub extras: Vec<(&'static str, f64)>,
}

impl IterationRecord {
    /// The value of extra `name`, if reported.
    pub fn extra(&self, name: &str) -> Option<f64> {
        self.extras
            .iter()
            .find(|(k, _)| *k == name)
            .map(|&(_, v)| v)
    }
}

/// What an observer wants the driver to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObserverAction {
    /// Keep iterating.
    Continue,
    /// Stop after this iteration (the current iterate is returned).
    Stop,
}

/// Receives one [`IterationRecord`] per iteration; may ask the loop to stop early.
pub trait Observer {
    /// Called after `init` (iteration 0) and after every step.
    fn observe(&mut self, record: &IterationRecord) -> ObserverAction;
}

impl<O: Observer + ?Sized> Observer for &mut O {
    fn observe(&mut self, record: &IterationRecord) -> ObserverAction {
        (**self).observe(record)
    }
}

impl<O: Observer + ?Sized> Observer for Box<O> {
    fn observe(&mut self, record: &IterationRecord) -> ObserverAction {
        (**self).observe(record)
    }
}

/// The observer that ignores everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoObserver;

impl Observer for NoObserver {
    fn observe(&mut self, _record: &IterationRecord) -> ObserverAction {
        ObserverAction::Continue
    }
}

/// An observer that stores every record (and never stops the run).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    /// The records, in order.
    pub records: Vec<IterationRecord>,
}

impl Trace {
    /// An empty trace.
    pub fn new() -> Self {
        Self::default()
    }

    /// The objective values, in order.
    pub fn objectives(&self) -> Vec<f64> {
        self.records.iter().map(|r| r.objective).collect()
    }
}

impl Observer for Trace {
    fn observe(&mut self, record: &IterationRecord) -> ObserverAction {
        self.records.push(record.clone());
        ObserverAction::Continue
    }
}

/// Adapts a closure `FnMut(&IterationRecord) -> ObserverAction` as an [`Observer`].
#[derive(Debug, Clone)]
pub struct FnObserver<F>(pub F);

impl<F: FnMut(&IterationRecord) -> ObserverAction> Observer for FnObserver<F> {
    fn observe(&mut self, record: &IterationRecord) -> ObserverAction {
        (self.0)(record)
    }
}

/// What a loop reports after `init` and after each `step`.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// The objective value at the current iterate.
    pub objective: f64,
    /// Loop-specific diagnostics (e.g. `("cg_iters", 12.0)`, `("rank", 5.0)`).
    pub extras: Vec<(&'static str, f64)>,
    /// Whether the loop's own stopping test is met (always `false` from `init`).
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

/// The objective a loop reported at `iteration` is NaN or infinite; each loop's error type
/// converts it into its own error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NonFiniteObjective {
    /// The loop's [`IterativeSolver::name`].
    pub solver: &'static str,
    /// The iteration (0: the starting point).
    pub iteration: usize,
}

/// An iterative loop: a starting point, one step at a time, its own convergence test.
pub trait IterativeSolver {
    /// The iterate (and whatever the loop carries from one step to the next).
    type State;
    /// The loop's error, which a non-finite objective becomes.
    type Error: From<NonFiniteObjective>;

    /// A short name used in errors and records (e.g. `"imc-als"`).
    fn name(&self) -> &'static str;

    /// Evaluates the starting point (may also prepare caches); `None` when the loop has no
    /// objective there (OKMF, whose loss is a mean over an epoch), so that the first record is
    /// iteration 1's.
    fn init(&mut self, state: &mut Self::State) -> Result<Option<Progress>, Self::Error>;

    /// Performs iteration `iteration` (1-based), updating `state`; `None` when the loop ends
    /// within the iteration without finishing it (nothing is recorded for it, and the run stops
    /// with [`StopReason::Halted`]; GIMC's fast path when a map takes no step).
    fn step(
        &mut self,
        state: &mut Self::State,
        iteration: usize,
    ) -> Result<Option<Progress>, Self::Error>;

    /// When the loop's records count their seconds from (default: the start of [`run`]); a
    /// loop whose setup before `init` is part of its fit gives that start.
    fn started(&self) -> Option<std::time::Instant> {
        None
    }
}

/// Why [`run`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The loop's own convergence test was met.
    Converged,
    /// The iteration budget was spent.
    MaxIterations,
    /// The observer asked to stop.
    Observer,
    /// A step ended the loop without finishing its iteration ([`IterativeSolver::step`] returned
    /// `None`).
    Halted,
}

/// Summary of a [`run`].
#[derive(Debug, Clone, PartialEq)]
pub struct RunReport {
    /// Steps finished (not counting `init`, nor a step that halted).
    pub iterations: usize,
    /// Why the run stopped.
    pub stop_reason: StopReason,
    /// Objective after `init` (when it has one) and after every step (length `iterations + 1`,
    /// or `iterations` without a starting objective).
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
/// A NaN or infinite objective stops the run with [`NonFiniteObjective`] (as the loop's error);
/// the error from a failing step is passed through. `state` then holds the iterate at which the
/// failure happened. A stop is never lost: when a step both converges and is answered with a
/// stop, the run ends with [`StopReason::Observer`].
pub fn run<S, O>(
    solver: &mut S,
    state: &mut S::State,
    max_iter: usize,
    observer: &mut O,
) -> Result<RunReport, S::Error>
where
    S: IterativeSolver + ?Sized,
    O: Observer + ?Sized,
{
    let start = solver.started().unwrap_or_else(std::time::Instant::now);
    let name = solver.name();
    let mut trace = Vec::with_capacity(max_iter.saturating_add(1).min(1 << 16));
    let emit = |iteration: usize,
                progress: Progress,
                trace: &mut Vec<f64>,
                observer: &mut O|
     -> Result<(bool, ObserverAction), S::Error> {
        if !progress.objective.is_finite() {
            return Err(NonFiniteObjective {
                solver: name,
                iteration,
            }
            .into());
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
    let action = match solver.init(state)? {
        Some(p0) => emit(0, p0, &mut trace, observer)?.1,
        None => ObserverAction::Continue,
    };
    let mut iterations = 0;
    let mut stop_reason = if action == ObserverAction::Stop {
        StopReason::Observer
    } else {
        StopReason::MaxIterations
    };
    if action == ObserverAction::Continue {
        for it in 1..=max_iter {
            let Some(p) = solver.step(state, it)? else {
                stop_reason = StopReason::Halted;
                break;
            };
            iterations = it;
            let (converged, action) = emit(it, p, &mut trace, observer)?;
            if action == ObserverAction::Stop {
                stop_reason = StopReason::Observer;
                break;
            }
            if converged {
                stop_reason = StopReason::Converged;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct ToyError(NonFiniteObjective);

    impl From<NonFiniteObjective> for ToyError {
        fn from(e: NonFiniteObjective) -> Self {
            Self(e)
        }
    }

    /// Minimises (x − 3)² by damped steps x ← x − 0.5·(x − 3).
    struct Toy {
        nan_at: Option<usize>,
        halt_at: Option<usize>,
    }

    impl IterativeSolver for Toy {
        type State = f64;
        type Error = ToyError;
        fn name(&self) -> &'static str {
            "toy"
        }
        fn init(&mut self, x: &mut f64) -> Result<Option<Progress>, ToyError> {
            Ok(Some(Progress::new((*x - 3.0).powi(2), false)))
        }
        fn step(&mut self, x: &mut f64, it: usize) -> Result<Option<Progress>, ToyError> {
            if Some(it) == self.halt_at {
                return Ok(None);
            }
            *x -= 0.5 * (*x - 3.0);
            let f = if Some(it) == self.nan_at {
                f64::NAN
            } else {
                (*x - 3.0).powi(2)
            };
            let mut p = Progress::new(f, f < 1e-12);
            p.extras.push(("x", *x));
            Ok(Some(p))
        }
    }

    /// Runs the toy from `x0` (a NaN objective at `nan_at`, a halt at `halt_at`) for at most
    /// `max_iter` steps.
    fn toy<O: Observer>(
        x0: f64,
        nan_at: Option<usize>,
        halt_at: Option<usize>,
        max_iter: usize,
        observer: &mut O,
    ) -> Result<RunReport, ToyError> {
        let mut x = x0;
        run(&mut Toy { nan_at, halt_at }, &mut x, max_iter, observer)
    }

    /// Stops at iteration `at` and after.
    fn stop_at(at: usize) -> impl Observer {
        FnObserver(move |r: &IterationRecord| {
            if r.iteration >= at {
                ObserverAction::Stop
            } else {
                ObserverAction::Continue
            }
        })
    }

    #[test]
    fn the_runner_records_stops_and_reports_a_non_finite_objective() {
        let mut trace = Trace::new();
        let rep = toy(0.0, None, None, 1000, &mut trace).unwrap();
        assert_eq!(rep.stop_reason, StopReason::Converged);
        assert_eq!(trace.records.len(), rep.iterations + 1);
        assert_eq!(trace.objectives(), rep.objective_trace);
        assert!(trace.records[0].iteration == 0 && trace.records[1].extra("x") == Some(1.5));
        assert!(rep.objective_trace.windows(2).all(|w| w[1] <= w[0]));

        let rep = toy(0.0, None, None, 3, &mut NoObserver).unwrap();
        let stopped = toy(0.0, None, None, 100, &mut stop_at(2)).unwrap();
        assert_eq!(
            (rep.iterations, rep.stop_reason),
            (3, StopReason::MaxIterations)
        );
        assert_eq!(
            (stopped.iterations, stopped.stop_reason),
            (2, StopReason::Observer)
        );

        // from the minimum the first step converges: a later stop does not matter, a stop at
        // that step still counts
        for (observer_stop, want) in [(2, StopReason::Converged), (1, StopReason::Observer)] {
            let rep = toy(3.0, None, None, 100, &mut stop_at(observer_stop)).unwrap();
            assert_eq!((rep.iterations, rep.stop_reason), (1, want));
        }

        // a step that halts ends the run unrecorded
        let mut trace = Trace::new();
        let rep = toy(0.0, None, Some(3), 100, &mut trace).unwrap();
        assert_eq!((rep.iterations, rep.stop_reason), (2, StopReason::Halted));
        assert_eq!(trace.records.len(), 3);

        let err = toy(0.0, Some(4), None, 100, &mut NoObserver).unwrap_err();
        assert_eq!(
            err,
            ToyError(NonFiniteObjective {
                solver: "toy",
                iteration: 4
            })
        );
    }
}
