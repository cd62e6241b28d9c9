//! The outer loop of GIMC's Algorithm 1, written once (DESIGN §3.3) and run by both paths: the
//! multi-label / multi-class fast path ([`fit_labels`](crate::fit_labels) and
//! [`fit_labels_sharded`](crate::fit_labels_sharded)) and the general path
//! ([`fit_completion`](crate::fit_completion), which
//! [`fit_semisupervised`](crate::fit_semisupervised) calls for every λ).
//!
//! A path implements [`OuterProblem`]: its factors (W, or W and H), its learned maps as a list of
//! *blocks* searched in turn (the fast path: U; the general path: U then V, the ones learned),
//! the gradient and trial objective of one block, and what it records per iteration. The start
//! (iteration 0, the IMC-RFF / IMC-NYS solution at the initial maps) is the path's own
//! constructor; [`run_outer`] takes its objective f₀ and then, in every outer iteration t:
//!
//! 1. [`OuterProblem::factors_before_search`] (the general path's step (1): warm-started IMC
//!    alternations on W, H with the maps fixed);
//! 2. for every block b: g = ∂f/∂U_b, the first trial η₀ from the last accepted step of b
//!    ([`first_step`]), and Armijo backtracking along −g ([`armijo`]: accept η when
//!    f(U_b − ηg) ≤ f − σ η‖g‖²); the map ends at the accepted trial, or is restored to U_b;
//! 3. [`OuterProblem::factors_after_search`] (the fast path's exact W-step at the new map);
//! 4. the checked invariants: f_t finite ([`GimcError::NonFinite`]) and
//!    f_t ≤ f_{t−1} + 10⁻¹⁰·max(|f_{t−1}|, 1) ([`GimcError::ObjectiveIncreased`]);
//! 5. the iteration's record, the best-validation iterate, the observer;
//! 6. the stopping rules: the observer, no block moved ([`NoStep::Skip`]), the relative
//!    decrease (f_{t−1} − f_t) ≤ tol·|f_{t−1}|, and the validation patience: p iterations in a
//!    row without a better validation value than the best so far ([`FitStop::NoValidationGain`]).
//!
//! A block whose gradient vanishes, or whose search accepts no step, either ends the fit at once
//! (the fast path, [`NoStep::Stop`]: no W-step and no record for that iteration) or takes no
//! step this iteration ([`NoStep::Skip`], the general path).
//!
//! The loop runs on the workspace's runner ([`gimc_linalg::observe::run`], as the solvers and
//! the clustering loops do): its start is the runner's `init` and each outer iteration a
//! `step`, which ends the run without a record when a block takes no step under
//! [`NoStep::Stop`] ([`StopReason::Halted`]) and otherwise reports the iteration's record, its
//! own stopping rules standing behind the runner's convergence flag. Every record goes to the
//! caller's [`Observer`] as an [`IterationRecord`].

use std::time::Instant;

use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::observe::{IterativeSolver, NonFiniteObjective, Progress, StopReason, run};
use gimc_solvers::{IterationRecord, Observer};

use crate::error::{GimcError, Result};
use crate::linesearch::{LineSearchParams, Search, armijo, first_step};

/// Why a fit stopped (the stop of the outer loop, on either path).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FitStop {
    /// `max_iter` outer iterations were done.
    MaxIterations,
    /// The relative decrease fell to `tol`, or the gradient vanished.
    Converged,
    /// No step satisfied the Armijo condition within the halving budget; the last good iterate
    /// is kept.
    LineSearchFailed,
    /// The observer asked to stop.
    Observer,
    /// The validation score did not improve on its best for `patience` iterations in a row.
    NoValidationGain,
}

/// Relative slack allowed by the monotonicity check (rounding in the Cholesky solves, the CG
/// half-steps and the Gram-form objective).
const MONOTONE_SLACK: f64 = 1e-10;

/// Whether a larger or a smaller validation value is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Goal {
    /// A score (P@k, accuracy).
    Maximise,
    /// An error.
    Minimise,
}

/// What the loop does when a block takes no step (its gradient vanished, or no trial was
/// accepted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoStep {
    /// End the fit at once, keeping the last good iterate: a vanished gradient is
    /// [`FitStop::Converged`], a failed search [`FitStop::LineSearchFailed`]. The iteration is
    /// neither finished nor recorded (the fast path).
    Stop,
    /// The block stays where it is for this iteration; an iteration in which no block moved is
    /// recorded and then ends the fit with [`FitStop::LineSearchFailed`] (the general path).
    Skip,
}

/// The loop's settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OuterSettings<'a> {
    /// Maximum number of outer iterations.
    pub max_iter: usize,
    /// Relative-decrease stopping rule (0 disables it).
    pub tol: f64,
    /// The Armijo search of every block (one last accepted step per block).
    pub line_search: &'a LineSearchParams,
    /// What a block that takes no step does to the fit.
    pub no_step: NoStep,
    /// Stop once this many iterations in a row have not improved the best validation value
    /// (`None`: never; the path must report validation values for it to act).
    pub patience: Option<usize>,
}

impl<'a> OuterSettings<'a> {
    /// At most `max_iter` iterations, stopping at a relative decrease ≤ `tol` (0: never), each
    /// block searched by `line_search`, a block without a step handled as `no_step` says.
    pub fn new(
        max_iter: usize,
        tol: f64,
        line_search: &'a LineSearchParams,
        no_step: NoStep,
    ) -> Self {
        Self {
            max_iter,
            tol,
            line_search,
            no_step,
            patience: None,
        }
    }

    /// Adds the validation patience (`None`: never stop on validation).
    pub fn with_patience(mut self, patience: Option<usize>) -> Self {
        self.patience = patience;
        self
    }
}

/// What the loop knows about one finished iteration, handed to [`OuterProblem::info`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct OuterIteration<'a> {
    /// The iteration (0: the start).
    pub iteration: usize,
    /// f after the iteration.
    pub objective: f64,
    /// f after [`OuterProblem::factors_before_search`] (the objective itself at iteration 0).
    pub objective_after_factors: f64,
    /// The accepted step of every block, in block order (`None`: no step; all `None` at 0).
    pub steps: &'a [Option<f64>],
    /// Line-search trials of the iteration, all blocks together.
    pub trials: usize,
    /// When the fit started (the record's seconds are measured from it).
    pub started: Instant,
}

impl OuterIteration<'_> {
    /// The accepted step of the first block, if it took one.
    pub fn first_step(&self) -> Option<f64> {
        self.steps.first().copied().flatten()
    }

    /// Seconds since the fit started, now.
    pub fn seconds(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }
}

/// One path of GIMC as the outer loop sees it: the current iterate (maps, features, factors)
/// lives in the implementing type, which the loop updates through these calls only.
pub(crate) trait OuterProblem {
    /// The per-iteration history entry the path returns.
    type Info;
    /// What is kept of the best-validation iterate.
    type Snapshot;
    /// What an accepted trial computed (features, a W), so that it need not be computed again.
    type Trial;
    /// A learned map searched on its own (the fast path: `()`, its one map; the general path:
    /// the row or the column map).
    type Block: Copy;

    /// Whether a larger or smaller [`validation`](Self::validation) value is better.
    const GOAL: Goal;

    /// The blocks searched in every iteration, in order (fixed for the fit).
    fn blocks(&self) -> Vec<Self::Block>;

    /// The current parameters of `block`.
    fn params(&self, block: Self::Block) -> MatRef<'_, f64>;

    /// Sets the parameters of `block` (the trial point, or the restored start of a failed
    /// search); fails when the map refuses them.
    fn set_params(&mut self, block: Self::Block, params: Mat<f64>) -> Result<()>;

    /// ∂f/∂(parameters of `block`) at the current iterate; `None` when the block has none.
    fn gradient(&mut self, block: Self::Block) -> Result<Option<Mat<f64>>>;

    /// f at the block's current (trial) parameters, everything else fixed, with what the
    /// trial computed; `None` rejects the trial (e.g. a W-step that failed there).
    fn trial(&mut self, block: Self::Block) -> Result<Option<(f64, Self::Trial)>>;

    /// Makes an accepted trial of `block` the current iterate.
    fn accept(&mut self, block: Self::Block, trial: Self::Trial);

    /// Updates the factors before the searches; returns f after it (default: nothing, f).
    fn factors_before_search(&mut self, f: f64) -> Result<f64> {
        Ok(f)
    }

    /// Updates the factors after the searches; returns f after it (default: nothing, f).
    fn factors_after_search(&mut self, f: f64) -> Result<f64> {
        Ok(f)
    }

    /// The history entry of a finished iteration (may evaluate validation data).
    fn info(&self, iteration: &OuterIteration<'_>) -> Result<Self::Info>;

    /// The observer's record of a history entry.
    fn record(&self, info: &Self::Info) -> IterationRecord;

    /// The validation value of a history entry, if any (compared by [`Self::GOAL`]).
    fn validation(&self, info: &Self::Info) -> Option<f64>;

    /// A snapshot of the current iterate, kept when it is the best so far.
    fn snapshot(&self) -> Self::Snapshot;
}

/// The best-validation iterate found by [`run_outer`].
#[derive(Debug, Clone)]
pub(crate) struct Best<S> {
    /// Its outer iteration (0: the start).
    pub iteration: usize,
    /// Its validation value.
    pub value: f64,
    /// The path's snapshot of it.
    pub snapshot: S,
}

/// What [`run_outer`] returns; the iterate itself is left in the problem.
#[derive(Debug, Clone)]
pub(crate) struct OuterRun<I, S> {
    /// One entry per recorded iteration, the start first.
    pub history: Vec<I>,
    /// The best-validation iterate (when the path reports validation values).
    pub best: Option<Best<S>>,
    /// Why the loop stopped.
    pub stop_reason: FitStop,
}

/// Runs the outer iterations of Algorithm 1 on `problem` from its start, whose objective is
/// `f0` (module documentation), on the workspace's runner ([`run`]). Errors:
/// [`GimcError::NonFinite`] when an objective or a gradient is not finite,
/// [`GimcError::ObjectiveIncreased`] when the monotonicity invariant fails, and whatever the
/// problem's own steps return.
pub(crate) fn run_outer<P, O>(
    problem: &mut P,
    f0: f64,
    settings: &OuterSettings<'_>,
    started: Instant,
    observer: &mut O,
) -> Result<OuterRun<P::Info, P::Snapshot>>
where
    P: OuterProblem,
    O: Observer + ?Sized,
{
    let blocks = problem.blocks();
    let mut log = Log {
        history: Vec::with_capacity(settings.max_iter.saturating_add(1).min(1 << 16)),
        best: None,
    };
    let mut outer = OuterLoop {
        last_steps: vec![None; blocks.len()],
        problem,
        blocks,
        settings,
        started,
        f: f0,
        stop: None,
    };
    let report = run(&mut outer, &mut log, settings.max_iter, observer)?;
    let reason = match report.stop_reason {
        StopReason::Observer => FitStop::Observer,
        StopReason::MaxIterations => FitStop::MaxIterations,
        StopReason::Converged | StopReason::Halted => outer.stop.unwrap_or(FitStop::Converged),
    };
    Ok(log.finish(reason))
}

/// The outer loop as an iterative loop of the runner: the iterate lives in `problem`, the
/// history and the best iterate in the runner's state ([`Log`]).
struct OuterLoop<'p, 's, P: OuterProblem> {
    problem: &'p mut P,
    blocks: Vec<P::Block>,
    settings: &'s OuterSettings<'s>,
    started: Instant,
    /// f at the current iterate.
    f: f64,
    /// The last accepted step of every block (the next search's first trial).
    last_steps: Vec<Option<f64>>,
    /// Why the loop ended itself (a stopping rule of step 6, or a block without a step).
    stop: Option<FitStop>,
}

impl<P: OuterProblem> IterativeSolver for OuterLoop<'_, '_, P> {
    type State = Log<P::Info, P::Snapshot>;
    type Error = GimcError;

    fn name(&self) -> &'static str {
        "gimc"
    }

    fn started(&self) -> Option<Instant> {
        Some(self.started)
    }

    fn init(&mut self, log: &mut Self::State) -> Result<Option<Progress>> {
        check_finite_objective(self.f, 0)?;
        let start = OuterIteration {
            iteration: 0,
            objective: self.f,
            objective_after_factors: self.f,
            steps: &vec![None; self.blocks.len()],
            trials: 0,
            started: self.started,
        };
        Ok(Some(log.push(&*self.problem, &start)?))
    }

    fn step(&mut self, log: &mut Self::State, iteration: usize) -> Result<Option<Progress>> {
        let settings = self.settings;
        let f_prev = self.f;
        let mut f = self.problem.factors_before_search(f_prev)?;
        let objective_after_factors = f;
        let searched = search_blocks(
            &mut *self.problem,
            &self.blocks,
            &mut f,
            &mut self.last_steps,
            settings,
            iteration,
        )?;
        let (steps, trials) = match searched {
            Searched::Blocks { steps, trials } => (steps, trials),
            Searched::Stop(reason) => {
                self.stop = Some(reason);
                return Ok(None);
            }
        };
        f = self.problem.factors_after_search(f)?;
        check_decrease(f_prev, f, iteration)?;
        self.f = f;
        let done = OuterIteration {
            iteration,
            objective: f,
            objective_after_factors,
            steps: &steps,
            trials,
            started: self.started,
        };
        let mut progress = log.push(&*self.problem, &done)?;
        // the stopping rules after the record (the observer's stop comes first, in the runner)
        let no_block_moved = !steps.is_empty() && steps.iter().all(Option::is_none);
        self.stop = if settings.no_step == NoStep::Skip && no_block_moved {
            Some(FitStop::LineSearchFailed)
        } else if settings.tol > 0.0 && (f_prev - f) <= settings.tol * f_prev.abs() {
            Some(FitStop::Converged)
        } else if let (Some(patience), Some(best)) = (settings.patience, log.best.as_ref())
            && iteration - best.iteration >= patience
        {
            Some(FitStop::NoValidationGain)
        } else {
            None
        };
        progress.converged = self.stop.is_some();
        Ok(Some(progress))
    }
}

/// The history and best iterate as the loop builds them.
struct Log<I, S> {
    history: Vec<I>,
    best: Option<Best<S>>,
}

impl<I, S> Log<I, S> {
    /// Records a finished iteration: its history entry and the best iterate (a strictly better
    /// validation value replaces it; the first value, even NaN, starts it). Returns the
    /// observer's record of it as the runner's progress.
    fn push<P>(&mut self, problem: &P, done: &OuterIteration<'_>) -> Result<Progress>
    where
        P: OuterProblem<Info = I, Snapshot = S>,
    {
        let info = problem.info(done)?;
        if let Some(value) = problem.validation(&info)
            && self
                .best
                .as_ref()
                .is_none_or(|b| improves(P::GOAL, value, b.value))
        {
            self.best = Some(Best {
                iteration: done.iteration,
                value,
                snapshot: problem.snapshot(),
            });
        }
        let record = problem.record(&info);
        self.history.push(info);
        Ok(Progress {
            objective: record.objective,
            extras: record.extras,
            converged: false,
        })
    }

    fn finish(self, stop_reason: FitStop) -> OuterRun<I, S> {
        OuterRun {
            history: self.history,
            best: self.best,
            stop_reason,
        }
    }
}

/// Whether `value` is strictly better than `best`.
fn improves(goal: Goal, value: f64, best: f64) -> bool {
    match goal {
        Goal::Maximise => value > best,
        Goal::Minimise => value < best,
    }
}

/// The outcome of the searches of one iteration.
enum Searched {
    /// Every block was searched: the accepted steps (in block order) and the trials.
    Blocks {
        steps: Vec<Option<f64>>,
        trials: usize,
    },
    /// A block took no step under [`NoStep::Stop`]: the fit ends for this reason.
    Stop(FitStop),
}

/// Searches every block in turn (step 2 of the module documentation), each from the iterate
/// the previous one left; `f` follows the accepted trials.
fn search_blocks<P: OuterProblem>(
    problem: &mut P,
    blocks: &[P::Block],
    f: &mut f64,
    last_steps: &mut [Option<f64>],
    settings: &OuterSettings<'_>,
    iteration: usize,
) -> Result<Searched> {
    let mut steps = Vec::with_capacity(blocks.len());
    let mut trials = 0;
    for (&block, last) in blocks.iter().zip(last_steps.iter_mut()) {
        let outcome = search_block(problem, block, f, last, settings.line_search, iteration)?;
        let (step, block_trials, stop) = match outcome {
            BlockSearch::Moved { eta, trials } => (Some(eta), trials, None),
            BlockSearch::Stationary => (None, 0, Some(FitStop::Converged)),
            BlockSearch::Failed { trials } => (None, trials, Some(FitStop::LineSearchFailed)),
        };
        steps.push(step);
        trials += block_trials;
        if let Some(reason) = stop
            && settings.no_step == NoStep::Stop
        {
            return Ok(Searched::Stop(reason));
        }
    }
    Ok(Searched::Blocks { steps, trials })
}

/// The outcome of one block's search.
enum BlockSearch {
    /// A step η was accepted after `trials` trials.
    Moved { eta: f64, trials: usize },
    /// The gradient vanished (or the block has none): no search.
    Stationary,
    /// No trial was accepted; the block's parameters were restored.
    Failed { trials: usize },
}

/// Armijo on one block along −∂f/∂U_b (DESIGN §3.3, Algorithm 1 steps 2–3). Trials move the
/// map itself; it ends at the accepted trial (which becomes the iterate, `f` its objective and
/// `last` its step) or is restored to where it was.
fn search_block<P: OuterProblem>(
    problem: &mut P,
    block: P::Block,
    f: &mut f64,
    last: &mut Option<f64>,
    line_search: &LineSearchParams,
    iteration: usize,
) -> Result<BlockSearch> {
    let Some(g) = problem.gradient(block)? else {
        return Ok(BlockSearch::Stationary);
    };
    let g_sq = g.squared_norm_l2();
    if !g_sq.is_finite() {
        return Err(GimcError::NonFinite {
            what: "gradient",
            iteration,
        });
    }
    if g_sq == 0.0 {
        return Ok(BlockSearch::Stationary);
    }
    let u_norm = problem.params(block).norm_l2();
    let eta0 = first_step(line_search, *last, *f, u_norm, g_sq.sqrt());
    let u = problem.params(block).to_owned();
    let search = armijo(*f, g_sq, eta0, line_search, |eta| {
        if problem
            .set_params(block, trial_point(u.as_ref(), g.as_ref(), eta))
            .is_err()
        {
            return Ok(None);
        }
        problem.trial(block)
    })?;
    match search {
        Search::Accepted(accepted, trials) => {
            problem.accept(block, accepted.payload);
            *f = accepted.objective;
            *last = Some(accepted.eta);
            Ok(BlockSearch::Moved {
                eta: accepted.eta,
                trials,
            })
        }
        Search::Failed(trials) => {
            problem.set_params(block, u)?;
            Ok(BlockSearch::Failed { trials })
        }
    }
}

/// The Armijo trial point U − η·g.
fn trial_point(u: MatRef<'_, f64>, g: MatRef<'_, f64>, eta: f64) -> Mat<f64> {
    Mat::from_fn(u.nrows(), u.ncols(), |i, j| u[(i, j)] - eta * g[(i, j)])
}

/// A non-finite objective the runner finds is [`GimcError::NonFinite`], as the loop's own check.
impl From<NonFiniteObjective> for GimcError {
    fn from(e: NonFiniteObjective) -> Self {
        GimcError::NonFinite {
            what: "objective",
            iteration: e.iteration,
        }
    }
}

/// Fails with [`GimcError::NonFinite`] when the objective of `iteration` is not finite.
fn check_finite_objective(f: f64, iteration: usize) -> Result<()> {
    if f.is_finite() {
        Ok(())
    } else {
        Err(GimcError::NonFinite {
            what: "objective",
            iteration,
        })
    }
}

/// The checked invariant of DESIGN §3.3: f_t is finite and never above f_{t−1} beyond the
/// rounding slack.
fn check_decrease(before: f64, after: f64, iteration: usize) -> Result<()> {
    check_finite_objective(after, iteration)?;
    if after > before + MONOTONE_SLACK * before.abs().max(1.0) {
        return Err(GimcError::ObjectiveIncreased {
            iteration,
            before,
            after,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimc_solvers::{FnObserver, ObserverAction, Trace};

    /// f(u) = Σ_b (u_b − t_b)² over scalar blocks u_b; the validation value is
    /// max(f, `validation_floor`).
    struct Quadratic {
        u: Vec<f64>,
        target: Vec<f64>,
        nan_gradient: bool,
        validation_floor: f64,
    }

    impl Quadratic {
        fn new(u: Vec<f64>, target: Vec<f64>) -> Self {
            Self {
                u,
                target,
                nan_gradient: false,
                validation_floor: f64::NEG_INFINITY,
            }
        }

        fn f(&self) -> f64 {
            self.u
                .iter()
                .zip(&self.target)
                .map(|(u, t)| (u - t) * (u - t))
                .sum()
        }
    }

    impl OuterProblem for Quadratic {
        type Info = (usize, f64, Vec<Option<f64>>, usize);
        type Snapshot = Vec<f64>;
        type Trial = ();
        type Block = usize;
        const GOAL: Goal = Goal::Minimise;

        fn blocks(&self) -> Vec<usize> {
            (0..self.u.len()).collect()
        }
        fn params(&self, b: usize) -> MatRef<'_, f64> {
            MatRef::from_column_major_slice(std::slice::from_ref(&self.u[b]), 1, 1)
        }
        fn set_params(&mut self, b: usize, p: Mat<f64>) -> Result<()> {
            self.u[b] = p[(0, 0)];
            Ok(())
        }
        fn gradient(&mut self, b: usize) -> Result<Option<Mat<f64>>> {
            let g = if self.nan_gradient {
                f64::NAN
            } else {
                2.0 * (self.u[b] - self.target[b])
            };
            Ok(Some(Mat::from_fn(1, 1, |_, _| g)))
        }
        fn trial(&mut self, _: usize) -> Result<Option<(f64, ())>> {
            Ok(Some((self.f(), ())))
        }
        fn accept(&mut self, _: usize, _: ()) {}
        fn info(&self, it: &OuterIteration<'_>) -> Result<Self::Info> {
            Ok((it.iteration, it.objective, it.steps.to_vec(), it.trials))
        }
        fn record(&self, info: &Self::Info) -> IterationRecord {
            IterationRecord {
                iteration: info.0,
                objective: info.1,
                elapsed_secs: 0.0,
                extras: vec![("trials", info.3 as f64)],
            }
        }
        fn validation(&self, info: &Self::Info) -> Option<f64> {
            Some(info.1.max(self.validation_floor))
        }
        fn snapshot(&self) -> Vec<f64> {
            self.u.clone()
        }
    }

    /// Runs the loop on `q` from its own objective, at most 20 iterations, no tolerance.
    fn run(
        q: &mut Quadratic,
        ls: &LineSearchParams,
        no_step: NoStep,
        observer: &mut dyn Observer,
    ) -> Result<OuterRun<<Quadratic as OuterProblem>::Info, Vec<f64>>> {
        let f0 = q.f();
        let settings = OuterSettings::new(20, 0.0, ls, no_step);
        run_outer(q, f0, &settings, Instant::now(), observer)
    }

    /// The number of records and the stop reason of a run that must succeed.
    fn ending<I, S>(run: Result<OuterRun<I, S>>) -> (usize, FitStop) {
        let run = run.expect("the run succeeds");
        (run.history.len(), run.stop_reason)
    }

    #[test]
    fn blocks_are_searched_in_turn_and_the_best_iterate_is_kept() {
        let ls = LineSearchParams::default();
        let mut q = Quadratic::new(vec![0.0, 5.0], vec![1.0, 2.0]);
        let f0 = q.f();
        let mut trace = Trace::new();
        let run = run(&mut q, &ls, NoStep::Skip, &mut trace).expect("fit");
        assert_eq!(trace.records.len(), run.history.len());
        let f: Vec<f64> = run.history.iter().map(|h| h.1).collect();
        assert!(f.windows(2).all(|w| w[1] <= w[0]), "{f:?}");
        assert!(f[f.len() - 1] < 1e-3 * f0, "{f:?}");
        // both blocks moved in the first iteration, each with its own trials
        assert!(run.history[1].2.iter().all(Option::is_some) && run.history[1].3 >= 2);
        // Minimise: the best is the lowest objective, and its snapshot the iterate there
        let best = run.best.expect("validation values were given");
        let (i, low) =
            f.iter().enumerate().fold(
                (0, f64::INFINITY),
                |a, (i, &v)| {
                    if v < a.1 { (i, v) } else { a }
                },
            );
        assert_eq!((best.iteration, best.value), (i, low));
        assert!(improves(Goal::Maximise, 2.0, 1.0) && !improves(Goal::Minimise, 2.0, 1.0));
    }

    #[test]
    fn the_validation_patience_stops_after_that_many_iterations_without_gain() {
        let ls = LineSearchParams::default();
        let free = run(
            &mut Quadratic::new(vec![0.0, 5.0], vec![1.0, 2.0]),
            &ls,
            NoStep::Skip,
            &mut Trace::new(),
        )
        .expect("fit");
        let f: Vec<f64> = free.history.iter().map(|h| h.1).collect();
        assert!(f.len() > 6 && f[1] > f[2], "{f:?}");
        // validation flat from iteration 2 on: best at 2, then 3 iterations without gain
        let mut q = Quadratic::new(vec![0.0, 5.0], vec![1.0, 2.0]);
        q.validation_floor = f[2];
        let settings = OuterSettings::new(20, 0.0, &ls, NoStep::Skip).with_patience(Some(3));
        let stalled = run_outer(&mut q, f[0], &settings, Instant::now(), &mut Trace::new());
        let stalled = stalled.expect("fit");
        assert_eq!(stalled.stop_reason, FitStop::NoValidationGain);
        assert_eq!(stalled.history.len(), 6);
        assert_eq!(stalled.best.map(|b| b.iteration), Some(2));
        // a patience longer than the stall never fires; improving values never stall
        let settings = OuterSettings::new(20, 0.0, &ls, NoStep::Skip).with_patience(Some(1));
        let mut q = Quadratic::new(vec![0.0, 5.0], vec![1.0, 2.0]);
        let improving = run_outer(&mut q, f[0], &settings, Instant::now(), &mut Trace::new());
        let improving = improving.expect("fit");
        assert_eq!(improving.history.len(), free.history.len());
        assert_eq!(improving.stop_reason, free.stop_reason);
    }

    #[test]
    fn a_block_without_a_step_stops_or_is_skipped() {
        let ls = LineSearchParams::default();
        // at the minimum the gradient vanishes: Stop ends at once, without a record
        let mut q = Quadratic::new(vec![1.0], vec![1.0]);
        let stop = run(&mut q, &ls, NoStep::Stop, &mut Trace::new());
        assert_eq!(ending(stop), (1, FitStop::Converged));
        // Skip records the iteration, then stops as no block moved
        let skip = run(&mut q, &ls, NoStep::Skip, &mut Trace::new());
        assert_eq!(ending(skip), (2, FitStop::LineSearchFailed));
        // a search that accepts nothing restores the block
        let no_halving = LineSearchParams {
            max_halvings: 0,
            initial_step: Some(10.0),
            ..LineSearchParams::default()
        };
        let mut q = Quadratic::new(vec![0.0], vec![1.0]);
        let failed = run(&mut q, &no_halving, NoStep::Stop, &mut Trace::new());
        assert_eq!(ending(failed), (1, FitStop::LineSearchFailed));
        assert_eq!(q.u, vec![0.0]);
    }

    #[test]
    fn observers_stop_and_non_finite_values_fail() {
        let ls = LineSearchParams::default();
        let mut q = Quadratic::new(vec![0.0], vec![1.0]);
        let mut stop_at_one = FnObserver(|r: &IterationRecord| {
            if r.iteration == 1 {
                ObserverAction::Stop
            } else {
                ObserverAction::Continue
            }
        });
        let stopped = run(&mut q, &ls, NoStep::Stop, &mut stop_at_one);
        assert_eq!(ending(stopped), (2, FitStop::Observer));
        let settings = OuterSettings::new(20, 0.0, &ls, NoStep::Stop);
        let e = run_outer(
            &mut q,
            f64::NAN,
            &settings,
            Instant::now(),
            &mut Trace::new(),
        );
        assert!(matches!(
            e,
            Err(GimcError::NonFinite {
                what: "objective",
                iteration: 0
            })
        ));
        q.nan_gradient = true;
        let e = run(&mut q, &ls, NoStep::Stop, &mut Trace::new());
        assert!(matches!(
            e,
            Err(GimcError::NonFinite {
                what: "gradient",
                iteration: 1
            })
        ));
        assert!(matches!(
            check_decrease(1.0, 2.0, 3),
            Err(GimcError::ObjectiveIncreased { iteration: 3, .. })
        ));
        assert!(check_decrease(1.0, 1.0 + 1e-12, 3).is_ok());
    }
}
