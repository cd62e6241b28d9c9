//! The one observer shape of the workspace (DESIGN §2: "iterative solvers share one shape:
//! init / step / stop, with an observer that records the objective and timing per iteration",
//! after argmin's observers). Every iterative loop (the solvers of `gimc-solvers`, the GIMC outer
//! loop, k-means and OKMF in `gimc-cluster`) hands an [`IterationRecord`] to an [`Observer`]
//! after its starting point and after every iteration, and the observer answers with an
//! [`ObserverAction`]: continue, or stop. What a stop means is the loop's to document: the
//! solvers return the current iterate, the fits that a user interrupts return an `Interrupted`
//! error. [`Trace`] stores the records, [`NoObserver`] ignores them and [`FnObserver`] adapts a
//! closure.
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
