//! IMC by alternating minimisation (ALS, the LEML scheme): the parameters, the factors, the
//! [`ImcAls`] solver in the shape of [`IterativeSolver`](crate::IterativeSolver) and
//! [`fit_imc`].

use gimc_linalg::faer::Mat;
use gimc_linalg::rng::GimcRng;
use gimc_linalg::sums::{ONE_PROCESS, RowSums, sum_scalar};

use crate::Side;
use crate::SolverError;
use crate::error::{check_finite_mat, dim_err};
use crate::iter::{IterativeSolver, Observer, Progress, RunReport, relative_decrease, run};

use super::factors::{ImcFactors, check_rank};
use super::hessian::Reduced;
use super::params::ValidImcParams;
use super::predict::ImcModel;
use super::problem::{ImcProblem, ObservationModel};
use super::spectral::init_factors_sharded;
use super::workspace::ImcWorkspace;

/// The alternating-minimisation solver (one step = a W half-step then an H half-step), in the
/// shape of [`IterativeSolver`]. Extras per step: `cg_iters_w`, `cg_iters_h`.
#[derive(Debug)]
pub struct ImcAls<'p, 'a> {
    ws: ImcWorkspace<'p, 'a>,
    params: ValidImcParams,
    prev: f64,
    /// f at the start, when it was evaluated on another problem (the full-dimensional one of
    /// a row-space run, [`run_in_row_space`]).
    start_objective: Option<f64>,
}

impl<'p, 'a> ImcAls<'p, 'a> {
    /// A solver for `problem`.
    pub fn new(problem: &'p ImcProblem<'a>, params: ValidImcParams) -> Self {
        Self::with_workspace(ImcWorkspace::new(problem), params)
    }

    /// A solver for this process's row shard `problem` of a fit across the processes of `sums`
    /// (see [`fit_imc_sharded`]); errors as [`ImcWorkspace::sharded`].
    pub fn sharded(
        problem: &'p ImcProblem<'a>,
        params: ValidImcParams,
        sums: &'p dyn RowSums,
    ) -> Result<Self, SolverError> {
        Ok(Self::with_workspace(
            ImcWorkspace::sharded(problem, sums)?,
            params,
        ))
    }

    fn with_workspace(ws: ImcWorkspace<'p, 'a>, params: ValidImcParams) -> Self {
        Self {
            ws,
            params,
            prev: f64::INFINITY,
            start_objective: None,
        }
    }

    /// The workspace (objective, residual, gradients at any point).
    pub fn workspace(&self) -> &ImcWorkspace<'p, 'a> {
        &self.ws
    }
}

impl IterativeSolver for ImcAls<'_, '_> {
    type State = ImcFactors;
    type Error = SolverError;

    fn name(&self) -> &'static str {
        "imc-als"
    }

    fn init(&mut self, state: &mut ImcFactors) -> Result<Option<Progress>, SolverError> {
        let f = match self.start_objective.take() {
            Some(f) => f,
            None => self
                .ws
                .objective(self.params.lambda, state.w.as_ref(), state.h.as_ref())?,
        };
        self.prev = f;
        Ok(Some(Progress::new(f, false)))
    }

    fn step(
        &mut self,
        state: &mut ImcFactors,
        _it: usize,
    ) -> Result<Option<Progress>, SolverError> {
        let p = &self.params;
        let rw = self
            .ws
            .w_step(p.lambda, state.h.as_ref(), state.w.as_mut(), p.valid_cg())?;
        let rh = self
            .ws
            .h_step(p.lambda, state.w.as_ref(), state.h.as_mut(), p.valid_cg())?;
        let f = self
            .ws
            .objective(p.lambda, state.w.as_ref(), state.h.as_ref())?;
        let converged = relative_decrease(self.prev, f) <= p.tol;
        self.prev = f;
        Ok(Some(Progress {
            objective: f,
            extras: vec![
                ("cg_iters_w", rw.cg_iterations as f64),
                ("cg_iters_h", rh.cg_iterations as f64),
            ],
            converged,
        }))
    }
}

/// Where an IMC fit starts: factors drawn by `params.init` from a generator, or a warm start.
#[derive(Debug)]
pub enum ImcStart<'r> {
    /// Factors from [`ImcParams::init`](super::ImcParams::init), drawing from the generator.
    Draw(&'r mut GimcRng),
    /// The factors (W, H) (e.g. the previous GIMC iterate); nothing is drawn.
    Warm(Mat<f64>, Mat<f64>),
}

/// Fits IMC (DESIGN §3.2) by alternating minimisation: W-step then H-step per iteration, each a
/// warm-started ridge solve, until the relative decrease of f is ≤ `tol` or `max_outer`
/// alternations, from `start` ([`ImcStart::Warm`] factors, or factors from `params.init` drawn
/// by [`ImcStart::Draw`]). This is [`fit_imc_sharded`] on one process.
pub fn fit_imc(
    problem: &ImcProblem<'_>,
    params: &ValidImcParams,
    start: ImcStart<'_>,
    observer: &mut impl Observer,
) -> Result<ImcModel, SolverError> {
    fit_imc_sharded(problem, params, start, observer, &ONE_PROCESS)
}

/// [`fit_imc`] on row shards of Ω: a data-parallel fit across the processes of `sums` (MPI
/// ranks, or [`ThreadSums`](gimc_linalg::sums::ThreadSums) in tests), each calling it with its
/// own shard and ending with the same W and H.
///
/// **What a shard holds.** Process r passes a partial problem
/// ([`ImcProblem::partial_shard`]) built from its block of rows of A: the observed entries of
/// those rows (row indices local to the block) with the matching rows of Φ, and the whole Ψ.
/// Shards cover disjoint rows and together all of them; the order of the rows does not matter.
/// Holding only its rows of Φ (rather than the whole Φ with only its rows' entries) is what
/// lets the data outgrow one process: memory per process is its rows' share of Φ and Ω, plus Ψ,
/// W, H and the D × D preconditioner Grams.
///
/// **What is summed.** The model's factors are D × k, the same on every process; every
/// quantity that sums over Ω is a [`RowSums::sum`] of the processes' partial sums: the
/// right-hand side of each half-step, every Hessian product of its CG, the count-weighted Grams
/// of the Kronecker preconditioner (the column counts, G_c of the row side and the k × k B̄ of
/// the H-step), the per-column Grams of an exact H-step when Ψ = I, the products of the
/// spectral start's Φᵀ A Ψ and its loss scale, and the objective. The sums reach every process
/// with the same bits, so every process takes the same CG and stopping decisions. With one
/// process every sum is the local value and this is `fit_imc` bit for bit; with several the
/// fit is that on the union of the shards up to the rounding of the summation order.
///
/// **Restrictions on several processes** ([`SolverError::Unsupported`]): only the partial
/// observation model (no fully observed or PU term), row features Φ (not the identity), no
/// preconditioner bases given on the problem. The row-space reduction of wide dense sides
/// (D > n) is not used, since it depends on every row of Φ: such a half-step runs CG on the
/// D-dimensional features. Every process must pass the same parameters, the same start (warm
/// factors, or a generator in the same state: the random and spectral starts then draw the same
/// numbers), and the same kind of features (dense or sparse) on each side. The small dense work
/// that follows the sums (CG's updates, the preconditioner) is repeated by every process on the
/// same numbers and must give the same bits there: run the processes with the same build and
/// thread count. The observer is called on every process with the same numbers.
pub fn fit_imc_sharded(
    problem: &ImcProblem<'_>,
    params: &ValidImcParams,
    start: ImcStart<'_>,
    observer: &mut impl Observer,
    sums: &dyn RowSums,
) -> Result<ImcModel, SolverError> {
    let mut solver = ImcAls::sharded(problem, *params, sums)?;
    // a shard may be empty (ImcProblem::partial_shard), their union may not
    if problem.model() == ObservationModel::Partial
        && sum_scalar(sums, problem.observed().len() as f64) == 0.0
    {
        return Err(SolverError::Empty("observed set Ω (on every process)"));
    }
    let (dx, dy) = problem.dims();
    check_rank(params.rank, dx, dy)?;
    let mut state = match start {
        ImcStart::Warm(w, h) => {
            let shape_ok = w.shape() == (dx, params.rank) && h.shape() == (dy, params.rank);
            if !shape_ok {
                return Err(dim_err(
                    "initial factors (W, H)",
                    format!("{dx} x {k} and {dy} x {k}", k = params.rank),
                    format!(
                        "{} x {} and {} x {}",
                        w.nrows(),
                        w.ncols(),
                        h.nrows(),
                        h.ncols()
                    ),
                ));
            }
            check_finite_mat("initial W", w.as_ref())?;
            check_finite_mat("initial H", h.as_ref())?;
            ImcFactors { w, h }
        }
        ImcStart::Draw(rng) => init_factors_sharded(&solver.ws, params.rank, params.init, rng)?,
    };
    let report = match run_in_row_space(&solver, &mut state, observer)? {
        Some(report) => report,
        None => run(&mut solver, &mut state, params.max_outer, observer)?,
    };
    Ok(ImcModel {
        w: state.w,
        h: state.h,
        objective_trace: report.objective_trace,
        iterations: report.iterations,
        stop_reason: report.stop_reason,
    })
}

/// The alternation of `solver` run in the row space of its wide dense sides (D > n, one
/// process, a sampled term only: [`Reduced`](super::hessian::Reduced)), or `None` when no side
/// reduces. Every half-step's minimiser lies in span V of its side, so the whole run takes place
/// there: W = V α and H = V' β, with ΦW = (LE) α, ‖W‖ = ‖α‖ and ALS run on the n × n features
/// LE. The factors enter as α = VᵀW (the part of a warm start outside span V is what the
/// first half-step drops, and Ψ maps it to zero before that) and leave as Vα. This is the same
/// sequence of iterates as the half-steps reducing one at a time, in exact arithmetic; f at the
/// start is taken on the full problem, as it includes that part. What it saves: the n × D × k
/// products of each half-step (ΨH, VᵀW, Vα) and of each objective (ΦW, ΨH), which are then
/// n × n × k.
fn run_in_row_space(
    solver: &ImcAls<'_, '_>,
    state: &mut ImcFactors,
    observer: &mut impl Observer,
) -> Result<Option<RunReport>, SolverError> {
    use super::workspace::Which;
    let ws = &solver.ws;
    let (red_w, red_h) = (ws.reduced(Which::W), ws.reduced(Which::H));
    if red_w.is_none() && red_h.is_none() {
        return Ok(None);
    }
    let params = solver.params;
    let start = ws.objective(params.lambda, state.w.as_ref(), state.h.as_ref())?;
    let pr = ws.problem();
    let reduced = pr.on_features(
        red_w.map_or(pr.phi, |r| Side::Features(&r.l)),
        red_h.map_or(pr.psi, |r| Side::Features(&r.l)),
        red_w.map_or(pr.basis_phi, |r| r.basis.as_ref()),
        red_h.map_or(pr.basis_psi, |r| r.basis.as_ref()),
    );
    let to_row_space = |red: Option<&Reduced<'_>>, x: &Mat<f64>| match red {
        Some(r) => r.v_t_mul(x.as_ref()),
        None => x.clone(),
    };
    let mut inner = ImcAls::new(&reduced, params);
    inner.start_objective = Some(start);
    let mut coords = ImcFactors {
        w: to_row_space(red_w, &state.w),
        h: to_row_space(red_h, &state.h),
    };
    let report = run(&mut inner, &mut coords, params.max_outer, observer)?;
    let back = |red: Option<&Reduced<'_>>, x: Mat<f64>| match red {
        Some(r) => r.v_mul(x.as_ref()),
        None => x,
    };
    state.w = back(red_w, coords.w);
    state.h = back(red_h, coords.h);
    Ok(Some(report))
}
