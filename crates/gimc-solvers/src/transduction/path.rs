//! The μ path: σ_1 of the gradient at zero, the decreasing grid of μ, and the continuation runs
//! that return the iterate at every grid point ([`fit_transduction_path`]) or at one target μ
//! ([`fit_transduction`]).

use gimc_linalg::faer::Mat;
use gimc_linalg::rng::GimcRng;

use crate::SolverError;
use crate::iter::{Observer, run};

use super::loss::loss_weights;
use super::shrink::largest_singular_value;
use super::{
    TransductionFpc, TransductionPath, TransductionProblem, TransductionSolution,
    ValidTransductionParams,
};

/// σ_1 of the gradient of the smooth loss at Z = 0, b = 0: the zero-filled observed matrix with
/// label entries −λ y/(2|Ω_Y|), feature entries −x/|Ω_X| (and a zero ones-row for MC-1). Z = 0
/// minimises the MC-b objective for every μ ≥ σ_1; continuation starts at η_μ σ_1.
pub fn sigma1_at_zero(
    problem: &TransductionProblem,
    params: &ValidTransductionParams,
) -> Result<f64, SolverError> {
    let (t, n) = (problem.n_labels(), problem.n_items());
    let m = t + problem.n_features();
    let mut g = Mat::<f64>::zeros(m, n);
    let (wy, wx) = loss_weights(problem, params.lambda);
    for (i, j, y) in problem.labels.iter() {
        g[(i, j)] = -0.5 * wy * y;
    }
    for (i, j, x) in problem.features.iter() {
        g[(t + i, j)] = -wx * x;
    }
    Ok(largest_singular_value(g.as_ref())?)
}

/// The decreasing grid μ_k = σ_1 η_μ^k, k = 1..=`count`, with σ_1 from [`sigma1_at_zero`]
/// (the continuation path of the paper: μ_1 = η_μ σ_1, μ_{k+1} = η_μ μ_k).
pub fn mu_grid(
    problem: &TransductionProblem,
    params: &ValidTransductionParams,
    count: usize,
) -> Result<Vec<f64>, SolverError> {
    let s1 = sigma1_at_zero(problem, params)?;
    if !(s1 > 0.0 && s1.is_finite()) {
        return Err(SolverError::InvalidInput {
            what: "observed entries",
            reason: format!("the gradient at zero has σ_1 = {s1}; no μ grid can be built"),
        });
    }
    let mut mu = s1;
    Ok((0..count)
        .map(|_| {
            mu *= params.eta_mu;
            mu
        })
        .collect())
}

/// MC-1 / MC-b by FPC along a decreasing grid of μ (one continuation run from
/// max(η_μ σ_1, grid₀)); returns the iterate at every grid point. Build the grid with
/// [`mu_grid`].
pub fn fit_transduction_path(
    problem: &TransductionProblem,
    params: &ValidTransductionParams,
    grid: &[f64],
    rng: &mut GimcRng,
    observer: &mut impl Observer,
) -> Result<TransductionPath, SolverError> {
    let mut solver = TransductionFpc::new(problem, *params, grid, rng)?;
    let mut st = solver.initial_state()?;
    let max_iter = solver
        .schedule()
        .len()
        .saturating_mul(params.max_stage_iters);
    let report = run(&mut solver, &mut st, max_iter, observer)?;
    Ok(TransductionPath {
        solutions: st.solutions,
        objective_trace: report.objective_trace,
        iterations: report.iterations,
    })
}

/// MC-1 / MC-b at one target μ (continuation from η_μ σ_1 down to μ).
pub fn fit_transduction(
    problem: &TransductionProblem,
    params: &ValidTransductionParams,
    mu: f64,
    rng: &mut GimcRng,
    observer: &mut impl Observer,
) -> Result<TransductionSolution, SolverError> {
    let path = fit_transduction_path(problem, params, &[mu], rng, observer)?;
    path.solutions
        .into_iter()
        .next()
        .ok_or(SolverError::Empty("continuation stages"))
}
