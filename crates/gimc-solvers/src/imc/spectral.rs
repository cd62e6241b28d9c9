//! The spectral start of IMC: the top-k singular vectors of Φᵀ A Ψ (an operator, never
//! formed), scaled and rescaled to minimise the loss along ΦWHᵀΨᵀ ([`init_factors`]).

use gimc_linalg::faer;
use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::rng::{GimcRng, gaussian_mat};
use gimc_linalg::sums::{RowSums, sum_mat};
use gimc_linalg::svd::{MatrixOperator, top_k_svd_op};
use gimc_linalg::{omega_mul_dense, omega_tr_mul_dense};

use crate::SolverError;

use super::factors::{ImcFactors, ImcInit, check_rank};
use super::problem::{ImcProblem, Term};
use super::workspace::ImcWorkspace;

/// Φᵀ (w_Ω A_Ω + w_F A_F) Ψ as an operator (D_x × D_y, never formed), for the spectral start;
/// on row shards each product is a sum over this process's rows, summed across the processes.
struct CrossOperator<'p, 'a> {
    problem: &'p ImcProblem<'a>,
    sums: &'p dyn RowSums,
}

impl CrossOperator<'_, '_> {
    fn terms(&self) -> impl Iterator<Item = Term<'_>> {
        [self.problem.sampled, self.problem.full]
            .into_iter()
            .flatten()
    }
}

impl MatrixOperator for CrossOperator<'_, '_> {
    fn nrows(&self) -> usize {
        self.problem.phi.dim()
    }
    fn ncols(&self) -> usize {
        self.problem.psi.dim()
    }
    fn apply(&self, x: MatRef<'_, f64>) -> gimc_linalg::Result<Mat<f64>> {
        let px = self.problem.psi.mul(x).map_err(to_linalg)?;
        let mut ax = Mat::<f64>::zeros(self.problem.phi.nrows(), x.ncols());
        for t in self.terms() {
            ax += omega_mul_dense(t.a, t.a.values(), px.as_ref())? * faer::Scale(t.weight);
        }
        let mut out = self.problem.phi.tr_mul(ax.as_ref()).map_err(to_linalg)?;
        sum_mat(self.sums, &mut out);
        Ok(out)
    }
    fn apply_t(&self, y: MatRef<'_, f64>) -> gimc_linalg::Result<Mat<f64>> {
        let py = self.problem.phi.mul(y).map_err(to_linalg)?;
        let mut ay = Mat::<f64>::zeros(self.problem.psi.nrows(), y.ncols());
        for t in self.terms() {
            ay += omega_tr_mul_dense(t.a, t.a.values(), py.as_ref())? * faer::Scale(t.weight);
        }
        let mut out = self.problem.psi.tr_mul(ay.as_ref()).map_err(to_linalg)?;
        sum_mat(self.sums, &mut out);
        Ok(out)
    }
}

fn to_linalg(e: SolverError) -> gimc_linalg::LinalgError {
    match e {
        SolverError::Linalg(l) => l,
        other => gimc_linalg::LinalgError::InvalidParameter {
            name: "side features",
            reason: other.to_string(),
        },
    }
}

/// Initial factors for `problem` at rank `k`.
pub fn init_factors(
    problem: &ImcProblem<'_>,
    k: usize,
    init: ImcInit,
    rng: &mut GimcRng,
) -> Result<ImcFactors, SolverError> {
    init_factors_sharded(&ImcWorkspace::new(problem), k, init, rng)
}

/// [`init_factors`] on the workspace's problem, summing across its processes (row shards):
/// every process must pass a generator in the same state, and then draws the same factors.
pub(super) fn init_factors_sharded(
    ws: &ImcWorkspace<'_, '_>,
    k: usize,
    init: ImcInit,
    rng: &mut GimcRng,
) -> Result<ImcFactors, SolverError> {
    let problem = ws.problem();
    let (dx, dy) = problem.dims();
    check_rank(k, dx, dy)?;
    match init {
        ImcInit::Random => Ok(ImcFactors {
            w: gaussian_mat(rng, dx, k, 1.0 / (dx as f64).sqrt()),
            h: gaussian_mat(rng, dy, k, 1.0 / (dy as f64).sqrt()),
        }),
        ImcInit::Spectral => {
            let op = CrossOperator {
                problem,
                sums: ws.sums(),
            };
            let svd = top_k_svd_op(&op, k, rng)?;
            let s1 = svd.s.first().copied().unwrap_or(0.0);
            let floor = if s1 > 0.0 { 1e-3 * s1 } else { 1.0 };
            let scale: Vec<f64> = svd.s.iter().map(|&s| s.max(floor).sqrt()).collect();
            let mut w = Mat::from_fn(dx, k, |i, j| svd.u[(i, j)] * scale[j]);
            let mut h = Mat::from_fn(dy, k, |i, j| svd.v[(i, j)] * scale[j]);
            // rescale ΦWHᵀΨᵀ by the c minimising the loss along it: c = cross / quad
            let p = problem.phi.mul(w.as_ref())?;
            let q = problem.psi.mul(h.as_ref())?;
            let (_, cross, quad) = ws.loss_parts(p.as_ref(), q.as_ref())?;
            if cross > 0.0 && quad > 0.0 && (cross / quad).is_finite() {
                let c = (cross / quad).sqrt();
                w *= faer::Scale(c);
                h *= faer::Scale(c);
            }
            Ok(ImcFactors { w, h })
        }
    }
}
