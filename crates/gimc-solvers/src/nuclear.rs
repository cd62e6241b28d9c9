//! Nuclear-norm MC and IMC by fixed point continuation (FPC, a proximal gradient method;
//! DESIGN §3.2, GIMC eq. 1 and the convex relaxation of eq. 3):
//!
//! minimise F_μ(Z) = ½‖P_Ω(A − Φ Z Ψᵀ)‖² + μ‖Z‖_*  by  Z ← S_{τμ}(Z − τ∇),
//!
//! where S_t shrinks singular values by t and ∇ = Φᵀ P_Ω(ΦZΨᵀ − A) Ψ. The step is τ = 1/L with
//! L = ‖Φ‖₂²‖Ψ‖₂² (1 for MC), which makes F_μ non-increasing within a μ stage. Continuation:
//! μ_1 = η_μ σ_1(∇F(0)) = η_μ σ_1(Φᵀ P_Ω(A) Ψ) (σ_1 of the observed matrix for MC), then
//! μ_{k+1} = max(η_μ μ_k, μ) with η_μ = 0.25, moving to the next μ when
//! ‖Z_{t+1} − Z_t‖_F / max(1, ‖Z_t‖_F) < `xtol` (or after `max_inner` steps at that μ).
//!
//! MC (Φ = Ψ = I) never forms an n_x × n_y iterate: Z is kept as its thin SVD and
//! Z − τ∇ = U S Vᵀ − τ P_Ω(Z − A) is a sparse-plus-low-rank operator whose leading singular
//! triplets come from the randomized range finder, the number of triplets grown until the
//! smallest computed one falls below the threshold τμ. Only when the needed rank approaches
//! min(n_x, n_y) *and* n_x·n_y ≤ 4·10⁶ is a dense iterate formed for an exact thin SVD.
//! IMC keeps the d_x × d_y variable Z (dense; d_x, d_y are feature dimensions) and takes its
//! exact thin SVD each step; a sparse Ψ (or Φ, when Ψ = I) is densified once.

use gimc_linalg::faer;
use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::rng::GimcRng;
use gimc_linalg::sparse::csr_to_dense;
use gimc_linalg::svd::{
    RsvdParams, SparsePlusLowRank, Svd, ValidRsvdParams, shrink_singular_values, thin_svd,
    top_k_svd_op, top_k_svd_op_with,
};
use gimc_linalg::{FeatureMatrix, Observed, omega_mul_dense, omega_tr_mul_dense, sampled_dot};

use crate::error::{check_nonneg, check_pos, param_err};
use crate::imc::ObservationModel;
use crate::iter::{IterativeSolver, Observer, Progress, run};
use crate::{ImcModel, ImcProblem, Side, SolverError};

/// Largest n_x·n_y for which MC's FPC may form a dense iterate (when the needed rank approaches
/// min(n_x, n_y)).
pub const DENSE_ITERATE_LIMIT: usize = 4_000_000;

gimc_linalg::params! {
    /// Hyper-parameters of [`fit_nuclear_mc`] and [`fit_nuclear_imc`]. Start from
    /// [`FpcParams::default`] and the `with_*` methods; [`FpcParams::check`] validates them into
    /// the [`ValidFpcParams`] that the fits and the [`FpcMc`] / [`FpcImc`] solvers take.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct FpcParams => ValidFpcParams {
        /// Target regularisation μ > 0 (the last continuation stage). Default 1e-3.
        pub mu: f64 = 1e-3 => with_mu,
        /// Continuation factor η_μ ∈ (0, 1). Default 0.25 (DESIGN §3.2).
        pub eta_mu: f64 = 0.25 => with_eta_mu,
        /// Initial step τ; `None` uses 1/L (L = 1 for MC; the power-iteration estimate of
        /// ‖Z ↦ Φᵀ P_Ω(ΦZΨᵀ)Ψ‖ for IMC). For MC values above 1 lose the monotone decrease (FPC
        /// converges for τ < 2); IMC halves τ whenever the sufficient-decrease test fails.
        /// Default `None`.
        pub tau: Option<f64> = None => with_tau,
        /// Stage stopping rule ‖Z_{t+1} − Z_t‖_F / max(1, ‖Z_t‖_F) < `xtol`. Default 1e-6.
        pub xtol: f64 = 1e-6 => with_xtol,
        /// Maximum proximal steps per μ stage. Default 500.
        pub max_inner: usize = 500 => with_max_inner,
        /// Maximum proximal steps in total. Default 5,000.
        pub max_iter: usize = 5000 => with_max_iter,
        /// Upper bound on the rank of the iterate (singular triplets kept), `None` for no bound.
        /// Default `None`.
        pub max_rank: Option<usize> = None => with_max_rank,
    }
    /// Checks μ > 0, η_μ ∈ (0, 1), τ > 0, xtol ≥ 0, max_inner ≥ 1, max_rank ≥ 1.
    check |this| -> crate::SolverError {
        check_pos("mu", this.mu)?;
        if !(this.eta_mu > 0.0 && this.eta_mu < 1.0) {
            return Err(param_err(
                "eta_mu",
                format!("must be in (0, 1), got {}", this.eta_mu),
            ));
        }
        if let Some(t) = this.tau {
            check_pos("tau", t)?;
        }
        check_nonneg("xtol", this.xtol)?;
        if this.max_inner == 0 {
            return Err(param_err("max_inner", "must be >= 1"));
        }
        if this.max_rank == Some(0) {
            return Err(param_err("max_rank", "must be >= 1"));
        }
    }
}

/// The continuation schedule μ_1 > μ_2 > … > μ and its stage bookkeeping.
#[derive(Debug, Clone)]
struct Continuation {
    mu: f64,
    target: f64,
    eta: f64,
    stage_iters: usize,
    max_inner: usize,
    xtol: f64,
}

impl Continuation {
    fn new(sigma1: f64, p: &FpcParams) -> Self {
        Self {
            mu: (p.eta_mu * sigma1).max(p.mu),
            target: p.mu,
            eta: p.eta_mu,
            stage_iters: 0,
            max_inner: p.max_inner,
            xtol: p.xtol,
        }
    }

    /// After a step with relative change `rel`: returns whether the whole run converged, moving
    /// to the next μ when the stage is done.
    fn advance(&mut self, rel: f64) -> bool {
        self.stage_iters += 1;
        if rel < self.xtol || self.stage_iters >= self.max_inner {
            if self.mu <= self.target {
                return rel < self.xtol;
            }
            self.mu = (self.eta * self.mu).max(self.target);
            self.stage_iters = 0;
        }
        false
    }
}

/// ‖L₁R₁ᵀ − L₀R₀ᵀ‖²_F from the factors, with k × k products only.
fn factored_diff_sq(
    l1: MatRef<'_, f64>,
    r1: MatRef<'_, f64>,
    l0: MatRef<'_, f64>,
    r0: MatRef<'_, f64>,
) -> f64 {
    let gram = |a: MatRef<'_, f64>, b: MatRef<'_, f64>| a.transpose() * b;
    let tr = |a: Mat<f64>, b: Mat<f64>| -> f64 {
        // tr(A B) for square-compatible A (p × q), B (q × p)
        let mut t = 0.0;
        for i in 0..a.nrows() {
            for j in 0..a.ncols() {
                t += a[(i, j)] * b[(j, i)];
            }
        }
        t
    };
    let n1 = tr(gram(l1, l1), gram(r1, r1));
    let n0 = tr(gram(l0, l0), gram(r0, r0));
    let cross = tr(gram(l0, l1), gram(r1, r0));
    (n1 + n0 - 2.0 * cross).max(0.0)
}

fn u_scaled(svd: &Svd) -> Mat<f64> {
    svd.u_scaled()
}

fn empty_svd(m: usize, n: usize) -> Svd {
    Svd {
        u: Mat::zeros(m, 0),
        s: Vec::new(),
        v: Mat::zeros(n, 0),
    }
}

fn to_model(svd: Svd, report: crate::RunReport) -> ImcModel {
    let r = svd.s.len();
    let sq: Vec<f64> = svd.s.iter().map(|s| s.sqrt()).collect();
    let w = Mat::from_fn(svd.u.nrows(), r, |i, j| svd.u[(i, j)] * sq[j]);
    let h = Mat::from_fn(svd.v.nrows(), r, |i, j| svd.v[(i, j)] * sq[j]);
    ImcModel {
        w,
        h,
        objective_trace: report.objective_trace,
        iterations: report.iterations,
        stop_reason: report.stop_reason,
    }
}

/// FPC for nuclear-norm MC, in the [`IterativeSolver`] shape (state: the thin SVD of Z).
/// Extras per step: `mu`, `rank`, `rel_change`.
#[derive(Debug)]
pub struct FpcMc<'a> {
    omega: &'a Observed,
    params: ValidFpcParams,
    tau: f64,
    cont: Continuation,
    rng: GimcRng,
    rsvd: ValidRsvdParams,
}

impl<'a> FpcMc<'a> {
    /// A solver for Ω with values `omega`; draws the randomized SVD sketches from `rng`.
    pub fn new(
        omega: &'a Observed,
        params: ValidFpcParams,
        rng: &mut GimcRng,
    ) -> Result<Self, SolverError> {
        if omega.is_empty() {
            return Err(SolverError::Empty("observed set Ω"));
        }
        let tau = params.tau.unwrap_or(1.0);
        let (m, n) = omega.shape();
        let zl = Mat::<f64>::zeros(m, 0);
        let zr = Mat::<f64>::zeros(n, 0);
        let op = SparsePlusLowRank::new(omega, omega.values(), zl.as_ref(), zr.as_ref())?;
        let sigma1 = top_k_svd_op(&op, 1, rng)?.s.first().copied().unwrap_or(0.0);
        let cont = Continuation::new(sigma1, &params);
        Ok(Self {
            omega,
            params,
            tau,
            cont,
            rng: gimc_linalg::rng::child(rng, 0x4d43),
            rsvd: RsvdParams::default()
                .with_oversampling(10)
                .with_power_iters(6)
                .check()?,
        })
    }

    /// The current μ.
    pub fn mu(&self) -> f64 {
        self.cont.mu
    }

    fn objective(&self, z: &Svd, mu: f64) -> Result<(f64, Vec<f64>), SolverError> {
        let l = u_scaled(z);
        let mut g = sampled_dot(self.omega, l.as_ref(), z.v.as_ref())?;
        for (g, a) in g.iter_mut().zip(self.omega.values()) {
            *g -= a;
        }
        let loss: f64 = 0.5 * g.iter().map(|r| r * r).sum::<f64>();
        Ok((loss + mu * z.s.iter().sum::<f64>(), g))
    }

    /// The leading singular triplets of Y = L Rᵀ + S needed for the shrinkage at `thresh`.
    fn shrunk_svd(
        &mut self,
        y: &SparsePlusLowRank<'_>,
        dense: impl Fn() -> Result<Mat<f64>, SolverError>,
        prev_rank: usize,
        thresh: f64,
    ) -> Result<Svd, SolverError> {
        let (m, n) = self.omega.shape();
        let min_dim = m.min(n);
        let cap = self.params.max_rank.unwrap_or(min_dim).min(min_dim);
        let mut k = (prev_rank + 5).clamp(1, cap);
        loop {
            let near_full = k + self.rsvd.oversampling >= min_dim;
            let svd = if near_full && m.saturating_mul(n) <= DENSE_ITERATE_LIMIT {
                thin_svd(dense()?.as_ref())?.truncate(k)
            } else {
                top_k_svd_op_with(y, k, &self.rsvd, &mut self.rng)?
            };
            let above = svd.s.iter().filter(|&&s| s > thresh).count();
            if above < k || k >= cap {
                return Ok(shrink_singular_values(svd, thresh)?);
            }
            k = (2 * k).min(cap);
        }
    }
}

impl IterativeSolver for FpcMc<'_> {
    type State = Svd;
    type Error = SolverError;

    fn name(&self) -> &'static str {
        "fpc-mc"
    }

    fn init(&mut self, z: &mut Svd) -> Result<Option<Progress>, SolverError> {
        let (f, _) = self.objective(z, self.cont.mu)?;
        let mut p = Progress::new(f, false);
        p.extras = vec![("mu", self.cont.mu), ("rank", z.s.len() as f64)];
        Ok(Some(p))
    }

    fn step(&mut self, z: &mut Svd, it: usize) -> Result<Option<Progress>, SolverError> {
        let mu = self.cont.mu;
        let (_, g) = self.objective(z, mu)?;
        // Y = Z − τ P_Ω(Z − A): low rank L Rᵀ plus the sparse −τ g on Ω
        let vals: Vec<f64> = g.iter().map(|g| -self.tau * g).collect();
        if vals.iter().any(|v| !v.is_finite()) {
            return Err(SolverError::NonFinite {
                solver: "fpc-mc",
                what: "gradient",
                iteration: it,
            });
        }
        let l = u_scaled(z);
        let omega = self.omega;
        let y = SparsePlusLowRank::new(omega, &vals, l.as_ref(), z.v.as_ref())?;
        let dense = || -> Result<Mat<f64>, SolverError> {
            let mut d = &l * z.v.transpose();
            for ((i, j, _), v) in omega.iter().zip(&vals) {
                d[(i, j)] += v;
            }
            Ok(d)
        };
        let new = self.shrunk_svd(&y, dense, z.s.len(), self.tau * mu)?;
        let nl = u_scaled(&new);
        let diff = factored_diff_sq(nl.as_ref(), new.v.as_ref(), l.as_ref(), z.v.as_ref()).sqrt();
        let norm = z.s.iter().map(|s| s * s).sum::<f64>().sqrt();
        let rel = diff / norm.max(1.0);
        *z = new;
        let (f, _) = self.objective(z, mu)?;
        let converged = self.cont.advance(rel);
        Ok(Some(Progress {
            objective: f,
            extras: vec![("mu", mu), ("rank", z.s.len() as f64), ("rel_change", rel)],
            converged,
        }))
    }
}

/// Nuclear-norm MC (GIMC eq. 1) by FPC with continuation, from Z = 0. The model's W, H are
/// U√S and V√S of the final iterate Z = U S Vᵀ (predict with `Side::Identity` on both sides).
pub fn fit_nuclear_mc(
    omega: &Observed,
    params: &ValidFpcParams,
    rng: &mut GimcRng,
    observer: &mut impl Observer,
) -> Result<ImcModel, SolverError> {
    let mut solver = FpcMc::new(omega, *params, rng)?;
    let mut z = empty_svd(omega.nrows(), omega.ncols());
    let report = run(&mut solver, &mut z, params.max_iter, observer)?;
    Ok(to_model(z, report))
}

/// FPC for nuclear-norm IMC (state: the thin SVD of the d_x × d_y variable Z). Extras per step:
/// `mu`, `rank`, `rel_change`, `tau`.
#[derive(Debug)]
pub struct FpcImc<'p, 'a> {
    problem: &'p ImcProblem<'a>,
    params: ValidFpcParams,
    tau: f64,
    cont: Continuation,
    /// Ψ densified when Ψ is sparse (or Φ when Ψ = I and Φ is sparse).
    dense_side: Option<Mat<f64>>,
}

impl<'p, 'a> FpcImc<'p, 'a> {
    /// A solver for a [`ImcProblem::partial`] problem with features on at least one side
    /// (Φ = Ψ = I is nuclear-norm MC: use [`FpcMc`]).
    pub fn new(
        problem: &'p ImcProblem<'a>,
        params: ValidFpcParams,
        rng: &mut GimcRng,
    ) -> Result<Self, SolverError> {
        if problem.model() != ObservationModel::Partial {
            return Err(param_err(
                "problem",
                "nuclear-norm IMC supports partially observed problems only",
            ));
        }
        if problem.phi().is_identity() && problem.psi().is_identity() {
            return Err(param_err(
                "problem",
                "Φ = Ψ = I is nuclear-norm MC: use fit_nuclear_mc",
            ));
        }
        let dense_side = match (problem.phi(), problem.psi()) {
            (_, Side::Features(FeatureMatrix::Sparse(m)))
            | (Side::Features(FeatureMatrix::Sparse(m)), Side::Identity(_)) => {
                Some(csr_to_dense(m))
            }
            _ => None,
        };
        let mut me = Self {
            problem,
            params,
            tau: 1.0,
            cont: Continuation::new(0.0, &params),
            dense_side,
        };
        me.tau = match params.tau {
            Some(t) => t,
            None => 1.0 / me.estimate_lipschitz(rng)?.max(f64::MIN_POSITIVE),
        };
        let a = problem.observed();
        let neg: Vec<f64> = a.values().iter().map(|v| -v).collect();
        let g0 = me.gradient_from_residual(&neg)?;
        let sigma1 = thin_svd(g0.as_ref())?.s.first().copied().unwrap_or(0.0);
        me.cont = Continuation::new(sigma1, &params);
        Ok(me)
    }

    /// The step τ in use.
    pub fn tau(&self) -> f64 {
        self.tau
    }

    /// The entries of Φ Z Ψᵀ on Ω for a dense d_x × d_y `z` (CSR order).
    fn sampled_of_dense(&self, z: MatRef<'_, f64>) -> Result<Vec<f64>, SolverError> {
        let a = self.problem.observed();
        let p = self.problem.phi().mul(z)?;
        match self.problem.psi() {
            Side::Identity(_) => Ok(a.iter().map(|(i, j, _)| p[(i, j)]).collect()),
            Side::Features(f) => {
                let psi_d = self.dense_psi(f)?;
                Ok(sampled_dot(a, p.as_ref(), psi_d)?)
            }
        }
    }

    /// L = ‖Z ↦ Φᵀ P_Ω(Φ Z Ψᵀ) Ψ‖₂ by 30 power iterations (a lower estimate; the backtracking
    /// in `step` covers the difference).
    fn estimate_lipschitz(&self, rng: &mut GimcRng) -> Result<f64, SolverError> {
        let (dx, dy) = self.problem.dims();
        let mut v = gimc_linalg::rng::gaussian_mat(rng, dx, dy, 1.0);
        let mut est = 0.0;
        for _ in 0..30 {
            let nv = v.norm_l2();
            if !(nv > 0.0 && nv.is_finite()) {
                break;
            }
            v *= faer::Scale(1.0 / nv);
            let r = self.sampled_of_dense(v.as_ref())?;
            v = self.gradient_from_residual(&r)?;
            est = v.norm_l2();
        }
        Ok(est)
    }

    /// Ψ's features as a dense matrix: the densified copy of a sparse Ψ, else Ψ itself.
    fn dense_psi<'s>(&'s self, f: &'s FeatureMatrix) -> Result<MatRef<'s, f64>, SolverError> {
        match (&self.dense_side, f) {
            (Some(d), _) => Ok(d.as_ref()),
            (None, FeatureMatrix::Dense(m)) => Ok(m.as_ref()),
            (None, FeatureMatrix::Sparse(_)) => {
                Err(param_err("psi", "internal: sparse Ψ not densified"))
            }
        }
    }

    /// ∇ = Φᵀ R Ψ (d_x × d_y) for residual values `r` on Ω.
    fn gradient_from_residual(&self, r: &[f64]) -> Result<Mat<f64>, SolverError> {
        let a = self.problem.observed();
        let (phi, psi) = (self.problem.phi(), self.problem.psi());
        match psi {
            Side::Features(f) => {
                let psi_d = self.dense_psi(f)?;
                let t = omega_mul_dense(a, r, psi_d)?;
                phi.tr_mul(t.as_ref())
            }
            Side::Identity(_) => {
                let phi_d: MatRef<'_, f64> = match (&self.dense_side, phi.features()) {
                    (Some(d), _) => d.as_ref(),
                    (None, Some(FeatureMatrix::Dense(m))) => m.as_ref(),
                    _ => return Err(param_err("phi", "internal: features expected")),
                };
                Ok(omega_tr_mul_dense(a, r, phi_d)?.transpose().to_owned())
            }
        }
    }

    fn residual(&self, z: &Svd) -> Result<Vec<f64>, SolverError> {
        let a = self.problem.observed();
        let p = self.problem.phi().mul(u_scaled(z).as_ref())?;
        let q = self.problem.psi().mul(z.v.as_ref())?;
        let mut r = sampled_dot(a, p.as_ref(), q.as_ref())?;
        for (r, a) in r.iter_mut().zip(a.values()) {
            *r -= a;
        }
        Ok(r)
    }

    fn objective(&self, z: &Svd, r: &[f64], mu: f64) -> f64 {
        0.5 * r.iter().map(|r| r * r).sum::<f64>() + mu * z.s.iter().sum::<f64>()
    }
}

impl IterativeSolver for FpcImc<'_, '_> {
    type State = Svd;
    type Error = SolverError;

    fn name(&self) -> &'static str {
        "fpc-imc"
    }

    fn init(&mut self, z: &mut Svd) -> Result<Option<Progress>, SolverError> {
        let r = self.residual(z)?;
        let mut p = Progress::new(self.objective(z, &r, self.cont.mu), false);
        p.extras = vec![("mu", self.cont.mu), ("rank", z.s.len() as f64)];
        Ok(Some(p))
    }

    fn step(&mut self, z: &mut Svd, it: usize) -> Result<Option<Progress>, SolverError> {
        let mu = self.cont.mu;
        let r = self.residual(z)?;
        let f_old = 0.5 * r.iter().map(|r| r * r).sum::<f64>();
        let g = self.gradient_from_residual(&r)?;
        let zd = z.reconstruct();
        let mut backtracks = 0;
        // proximal step with backtracking (Beck & Teboulle): accept when the smooth part obeys
        // f(Z⁺) ≤ f(Z) + ⟨∇, Z⁺ − Z⟩ + ‖Z⁺ − Z‖²/(2τ), which makes F_μ non-increasing
        let (svd, r_new, diff) = loop {
            let mut y = zd.clone();
            y -= &g * faer::Scale(self.tau);
            let mut svd = shrink_singular_values(thin_svd(y.as_ref())?, self.tau * mu)?;
            if let Some(cap) = self.params.max_rank {
                svd = svd.truncate(cap);
            }
            let d = svd.reconstruct() - &zd;
            let r_new = self.residual(&svd)?;
            let f_new = 0.5 * r_new.iter().map(|r| r * r).sum::<f64>();
            if !f_new.is_finite() {
                return Err(SolverError::NonFinite {
                    solver: "fpc-imc",
                    what: "objective",
                    iteration: it,
                });
            }
            let bound = f_old
                + gimc_linalg::dense::frob_dot(g.as_ref(), d.as_ref())?
                + d.squared_norm_l2() / (2.0 * self.tau);
            if f_new <= bound + 1e-12 * f_old.abs() || backtracks >= 50 {
                break (svd, r_new, d.norm_l2());
            }
            self.tau *= 0.5;
            backtracks += 1;
        };
        let norm = z.s.iter().map(|s| s * s).sum::<f64>().sqrt();
        let rel = diff / norm.max(1.0);
        *z = svd;
        let f = self.objective(z, &r_new, mu);
        let converged = self.cont.advance(rel);
        Ok(Some(Progress {
            objective: f,
            extras: vec![
                ("mu", mu),
                ("rank", z.s.len() as f64),
                ("rel_change", rel),
                ("tau", self.tau),
            ],
            converged,
        }))
    }
}

/// Nuclear-norm IMC (DESIGN §3.2) by FPC with continuation from Z = 0, for a partially observed
/// problem with features on at least one side. The model's W, H are U√S and V√S of the final
/// Z = U S Vᵀ (d_x × d_y).
pub fn fit_nuclear_imc(
    problem: &ImcProblem<'_>,
    params: &ValidFpcParams,
    rng: &mut GimcRng,
    observer: &mut impl Observer,
) -> Result<ImcModel, SolverError> {
    let mut solver = FpcImc::new(problem, *params, rng)?;
    let (dx, dy) = problem.dims();
    let mut z = empty_svd(dx, dy);
    let report = run(&mut solver, &mut z, params.max_iter, observer)?;
    Ok(to_model(z, report))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::refused;

    #[test]
    fn factored_difference_matches_dense() {
        let mut rng = gimc_linalg::rng::seeded(1);
        let g = |r: &mut GimcRng, m, n| gimc_linalg::rng::gaussian_mat(r, m, n, 1.0);
        let (l1, r1, l0, r0) = (
            g(&mut rng, 6, 2),
            g(&mut rng, 5, 2),
            g(&mut rng, 6, 3),
            g(&mut rng, 5, 3),
        );
        let d = (&l1 * r1.transpose() - &l0 * r0.transpose()).squared_norm_l2();
        let f = factored_diff_sq(l1.as_ref(), r1.as_ref(), l0.as_ref(), r0.as_ref());
        assert!((d - f).abs() < 1e-10 * d.max(1.0));
    }

    #[test]
    fn continuation_schedule() {
        let p = FpcParams::default()
            .with_mu(1.0)
            .with_eta_mu(0.25)
            .with_xtol(1e-3)
            .with_max_inner(3);
        let mut c = Continuation::new(100.0, &p);
        assert_eq!(c.mu, 25.0);
        assert!(!c.advance(1e-4));
        assert_eq!(c.mu, 6.25);
        // max_inner ends a stage too
        assert!(!c.advance(1.0) && !c.advance(1.0) && !c.advance(1.0));
        assert_eq!(c.mu, 1.5625);
        assert!(!c.advance(1e-4));
        assert_eq!(c.mu, 1.0);
        assert!(!c.advance(1.0));
        assert!(c.advance(1e-4));
    }

    #[test]
    fn check_refuses_each_bad_field() {
        let p = FpcParams::default();
        assert!(p.check().is_ok());
        assert_eq!(refused(p.with_mu(0.0).check()), "mu");
        assert_eq!(refused(p.with_mu(f64::NAN).check()), "mu");
        assert_eq!(refused(p.with_eta_mu(1.0).check()), "eta_mu");
        assert_eq!(refused(p.with_eta_mu(0.0).check()), "eta_mu");
        assert_eq!(refused(p.with_tau(Some(f64::NAN)).check()), "tau");
        assert_eq!(refused(p.with_tau(Some(-1.0)).check()), "tau");
        assert_eq!(refused(p.with_xtol(-1.0).check()), "xtol");
        assert_eq!(refused(p.with_max_inner(0).check()), "max_inner");
        assert_eq!(refused(p.with_max_rank(Some(0)).check()), "max_rank");
        assert!(p.with_tau(Some(1.5)).with_max_rank(Some(3)).check().is_ok());
    }
}
