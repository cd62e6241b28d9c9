//! The prepared IMC problem ([`ImcWorkspace`]): the objective f(W, H), its gradients with
//! respect to the factors and the features, and the half-steps (a warm-started CG ridge solve,
//! or an exact row-wise one for an identity side), with the free-function shorthands that build
//! a fresh workspace.

use std::cell::{OnceCell, RefCell};

use gimc_linalg::cg::{
    LinearOperator, SylvesterOperator, ValidCgParams, conjugate_gradient,
    preconditioned_conjugate_gradient,
};
use gimc_linalg::dense::{frob_dot, gram_tn};
use gimc_linalg::faer;
use gimc_linalg::faer::{Mat, MatMut, MatRef};
use gimc_linalg::shared::shared_csr;
use gimc_linalg::sums::{ONE_PROCESS, RowSums, fixed_order_sum, sum_mat, sum_scalar, sum_slice};
use gimc_linalg::{FeatureMatrix, Observed, omega_mul_dense, omega_tr_mul_dense, sampled_dot};

use crate::error::{check_finite_mat, check_nonneg, dim_err, param_err};
use crate::kernel::{OmegaView, omega_row_grams, rowwise_ridge, rowwise_ridge_from_grams};
use crate::{Side, SolverError};

use super::hessian::{KroneckerPreconditioner, Reduced, SampledHessian};
use super::params::ValidImcParams;
use super::preconditioner::PreconditionerBasis;
use super::problem::{ImcProblem, Term};

/// What one half-step did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HalfStepReport {
    /// CG iterations (0 for the exact row-wise solve).
    pub cg_iterations: usize,
    /// Final relative CG residual (0 for the exact solve).
    pub relative_residual: f64,
    /// Whether the half-step was solved exactly (identity side) rather than by CG.
    pub exact: bool,
}

/// ∂f/∂Φ and ∂f/∂Ψ of the loss part of f (DESIGN §3.3: (RQ)Wᵀ and (RᵀP)Hᵀ, with the fully
/// observed term in Gram form), `None` for an identity side.
#[derive(Debug, Clone, PartialEq)]
pub struct FeatureGradients {
    /// ∂f/∂Φ (n_x × D_x).
    pub d_phi: Option<Mat<f64>>,
    /// ∂f/∂Ψ (n_y × D_y).
    pub d_psi: Option<Mat<f64>>,
}

/// Which of ∂f/∂Φ, ∂f/∂Ψ [`ImcWorkspace::feature_gradients`] forms (each is an n × D product:
/// GIMC's search on one map needs only its own side's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeatureSides {
    /// ∂f/∂Φ only.
    Rows,
    /// ∂f/∂Ψ only.
    Cols,
    /// Both.
    Both,
}

/// ∂f/∂W and ∂f/∂H, regulariser included.
#[derive(Debug, Clone, PartialEq)]
pub struct FactorGradients {
    /// ∂f/∂W (D_x × k).
    pub d_w: Mat<f64>,
    /// ∂f/∂H (D_y × k).
    pub d_h: Mat<f64>,
}

/// P = ΦW (n_x × k) and Q = ΨH (n_y × k), the products every loss and feature gradient of an
/// [`ImcWorkspace`] starts from ([`ImcWorkspace::products`]). A caller that changes one side
/// at a time keeps the other side's product: GIMC's line search on the row map changes Φ and
/// so P only (each product is 2·n·D·k flops, as much as the rest of an objective on Ω).
#[derive(Debug, Clone, PartialEq)]
pub struct FactorProducts {
    /// P = ΦW (this process's rows on row shards).
    pub p: Mat<f64>,
    /// Q = ΨH.
    pub q: Mat<f64>,
}

/// Which factor a half-step updates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Which {
    W,
    H,
}

/// A prepared [`ImcProblem`]: caches ΦᵀΦ, ΨᵀΨ (for the fully observed term), Φᵀ, Ψᵀ in CSR
/// form (sparse features) and ‖A_F‖², so repeated objective evaluations and half-steps (ALS, or
/// GIMC alternating them with feature updates) do not redo that work.
///
/// On row shards ([`ImcWorkspace::sharded`]) the problem holds this process's rows of Ω and Φ
/// and the whole Ψ; every quantity that sums over Ω is summed across the processes, so the
/// objective, the factor gradients and the half-steps are those of the union of the shards, on
/// every process alike (see [`fit_imc_sharded`](super::fit_imc_sharded)).
#[derive(Debug)]
pub struct ImcWorkspace<'p, 'a> {
    problem: &'p ImcProblem<'a>,
    sums: &'p dyn RowSums,
    gram_phi: OnceCell<Option<Mat<f64>>>,
    gram_psi: OnceCell<Option<Mat<f64>>>,
    phi_t: OnceCell<Option<FeatureMatrix>>,
    psi_t: OnceCell<Option<FeatureMatrix>>,
    /// Eigendecompositions of the count-weighted Grams Φᵀ diag(|Ω_i|) Φ and Ψᵀ diag(|Ω^j|) Ψ
    /// of the Kronecker preconditioner ([`KroneckerPreconditioner`]).
    weighted_eig_phi: OnceCell<Option<PreconditionerBasis>>,
    weighted_eig_psi: OnceCell<Option<PreconditionerBasis>>,
    /// Row-space reductions of wide dense sides (D > n), see [`Reduced`].
    reduced_phi: OnceCell<Option<Reduced<'a>>>,
    reduced_psi: OnceCell<Option<Reduced<'a>>>,
    /// Entries per column of the sampled term's Ω, summed across the processes.
    col_counts: OnceCell<Vec<f64>>,
    a_full_sq: f64,
}

/// Entries of Ω per parallel chunk of the loss sums ([`fixed_order_sum`]: the same bits on
/// every run and thread count).
const LOSS_CHUNK: usize = 1 << 14;

fn t_sampled<'a>(pr: &ImcProblem<'a>) -> Result<Term<'a>, SolverError> {
    pr.sampled
        .ok_or_else(|| param_err("problem", "no sampled term"))
}

impl<'p, 'a> ImcWorkspace<'p, 'a> {
    /// Prepares `problem` (the caches are filled lazily): one process, the whole problem.
    pub fn new(problem: &'p ImcProblem<'a>) -> Self {
        Self::unchecked(problem, &ONE_PROCESS)
    }

    /// Prepares `problem`, this process's row shard of a problem split by rows of Ω across the
    /// processes of `sums` (see [`fit_imc_sharded`](super::fit_imc_sharded) for what a shard
    /// holds). With one process this is [`ImcWorkspace::new`]. With more, errors
    /// ([`SolverError::Unsupported`]) on what the sharded sums do not cover: a fully observed
    /// or PU term, identity row features Φ (W's rows would be the rows of A, split across
    /// processes), and preconditioner bases given with
    /// [`ImcProblem::with_preconditioner_bases`] (each process would hold its own).
    pub fn sharded(
        problem: &'p ImcProblem<'a>,
        sums: &'p dyn RowSums,
    ) -> Result<Self, SolverError> {
        if sums.processes() > 1 {
            let unsupported = |what, reason: &str| {
                Err(SolverError::Unsupported {
                    what,
                    reason: format!(
                        "{reason} (fit on row shards, {} processes)",
                        sums.processes()
                    ),
                })
            };
            if problem.full.is_some() || problem.sampled.is_none() {
                return unsupported(
                    "observation model",
                    "only a partially observed A (the sampled term over Ω) is summed across \
                     processes; fully observed and PU problems run on one process",
                );
            }
            if problem.phi.is_identity() {
                return unsupported(
                    "identity row features",
                    "with Φ = I the rows of W are the rows of A, which are split across \
                     processes; give row features",
                );
            }
            if problem.basis_phi.is_some() || problem.basis_psi.is_some() {
                return unsupported(
                    "given preconditioner bases",
                    "each process would hold the basis of its own shard; let the fit sum them",
                );
            }
        }
        Ok(Self::unchecked(problem, sums))
    }

    fn unchecked(problem: &'p ImcProblem<'a>, sums: &'p dyn RowSums) -> Self {
        let a_full_sq = problem.full.map_or(0.0, |t| t.a.values_sq_norm());
        Self {
            problem,
            sums,
            gram_phi: OnceCell::new(),
            gram_psi: OnceCell::new(),
            phi_t: OnceCell::new(),
            psi_t: OnceCell::new(),
            weighted_eig_phi: OnceCell::new(),
            weighted_eig_psi: OnceCell::new(),
            reduced_phi: OnceCell::new(),
            reduced_psi: OnceCell::new(),
            col_counts: OnceCell::new(),
            a_full_sq,
        }
    }

    /// The problem.
    pub fn problem(&self) -> &'p ImcProblem<'a> {
        self.problem
    }

    /// The sums across the processes ([`ONE_PROCESS`] for [`ImcWorkspace::new`]).
    pub fn sums(&self) -> &'p dyn RowSums {
        self.sums
    }

    fn gram(&self, which: Which) -> Option<&Mat<f64>> {
        match which {
            Which::W => self.gram_phi.get_or_init(|| self.problem.phi.gram()),
            Which::H => self.gram_psi.get_or_init(|| self.problem.psi.gram()),
        }
        .as_ref()
    }

    /// The row-space reduction of one side ([`Reduced`]): only for dense features with more
    /// columns than rows in a problem with a sampled term only, on one process (the row space
    /// of Φ depends on every process's rows).
    pub(super) fn reduced(&self, which: Which) -> Option<&Reduced<'a>> {
        if self.sums.processes() > 1 {
            return None;
        }
        let (cell, side) = match which {
            Which::W => (&self.reduced_phi, self.problem.phi),
            Which::H => (&self.reduced_psi, self.problem.psi),
        };
        cell.get_or_init(|| {
            let Some(FeatureMatrix::Dense(phi)) = side.features() else {
                return None;
            };
            let t = self.problem.sampled?;
            if self.problem.full.is_some() || phi.ncols() <= phi.nrows() {
                return None;
            }
            let counts = match which {
                Which::W => OmegaView::rows(t.a),
                Which::H => OmegaView::cols(t.a),
            }
            .line_counts();
            Reduced::new(phi.as_ref(), &counts)
        })
        .as_ref()
    }

    /// The Kronecker preconditioner basis of one side: the problem's own (see
    /// [`ImcProblem::with_preconditioner_bases`]) or one computed on first use.
    fn weighted_eig(&self, which: Which) -> Option<&PreconditionerBasis> {
        let (given, cell, side) = match which {
            Which::W => (
                self.problem.basis_phi,
                &self.weighted_eig_phi,
                self.problem.phi,
            ),
            Which::H => (
                self.problem.basis_psi,
                &self.weighted_eig_psi,
                self.problem.psi,
            ),
        };
        if given.is_some() {
            return given;
        }
        cell.get_or_init(|| {
            let t = self.problem.sampled?;
            if self.problem.full.is_some() {
                return None;
            }
            match which {
                // this process's rows of Φ with their counts: G_c is summed
                Which::W => PreconditionerBasis::compute_sharded(
                    side,
                    &OmegaView::rows(t.a).line_counts(),
                    self.sums,
                ),
                // the whole Ψ with the column counts summed over every process's Ω
                Which::H => PreconditionerBasis::compute(side, self.col_counts_summed(t.a)),
            }
        })
        .as_ref()
    }

    /// The column counts of the sampled term's Ω (entries per column of A), summed across the
    /// processes once.
    fn col_counts_summed(&self, a: &Observed) -> &[f64] {
        self.col_counts.get_or_init(|| {
            let mut counts = OmegaView::cols(a).line_counts();
            sum_slice(self.sums, &mut counts);
            counts
        })
    }

    /// The transpose of a sparse side in CSR form (so Φᵀ·G is a row kernel without rebuilding
    /// the transposed pattern at every CG iteration); `None` for dense or identity sides.
    fn transposed(&self, which: Which) -> Option<&FeatureMatrix> {
        let (cell, side) = match which {
            Which::W => (&self.phi_t, self.problem.phi),
            Which::H => (&self.psi_t, self.problem.psi),
        };
        cell.get_or_init(|| match side.features() {
            Some(FeatureMatrix::Sparse(m)) => Some(FeatureMatrix::Sparse(shared_csr(
                m.transpose_view().to_csr(),
            ))),
            _ => None,
        })
        .as_ref()
    }

    fn check_factors(&self, w: MatRef<'_, f64>, h: MatRef<'_, f64>) -> Result<(), SolverError> {
        let (dx, dy) = self.problem.dims();
        if w.nrows() != dx {
            return Err(dim_err(
                "W",
                format!("{dx} rows (D_x)"),
                format!("{} rows", w.nrows()),
            ));
        }
        if h.nrows() != dy {
            return Err(dim_err(
                "H",
                format!("{dy} rows (D_y)"),
                format!("{} rows", h.nrows()),
            ));
        }
        if w.ncols() != h.ncols() {
            return Err(dim_err(
                "H",
                format!("{} columns (the rank of W)", w.ncols()),
                format!("{} columns", h.ncols()),
            ));
        }
        Ok(())
    }

    /// The loss part of f at P = ΦW, Q = ΨH, as the quadratic in a scale c of PQᵀ:
    /// loss(c) = ½(a − 2c·cross + c²·quad) with a = Σ_terms w‖A‖², cross = Σ w⟨A, PQᵀ⟩ and
    /// quad = Σ w‖PQᵀ‖² (each term on its own entries).
    pub(super) fn loss_parts(
        &self,
        p: MatRef<'_, f64>,
        q: MatRef<'_, f64>,
    ) -> Result<(f64, f64, f64), SolverError> {
        let (mut a2, mut cross, mut quad) = (0.0, 0.0, 0.0);
        if let Some(t) = self.problem.sampled {
            let d = sampled_dot(t.a, p, q)?;
            let a = t.a.values();
            let [aa, ad, dd] = fixed_order_sum(d.len(), LOSS_CHUNK, |r| {
                d[r.clone()]
                    .iter()
                    .zip(&a[r])
                    .fold([0.0; 3], |[aa, ad, dd], (d, a)| {
                        [aa + a * a, ad + a * d, dd + d * d]
                    })
            });
            a2 += t.weight * aa;
            cross += t.weight * ad;
            quad += t.weight * dd;
        }
        if let Some(t) = self.problem.full {
            // ‖A − PQᵀ‖² = ‖A‖² − 2⟨A, PQᵀ⟩ + ⟨PᵀP, QᵀQ⟩ (DESIGN §3.3, no n × L matrix)
            let d = sampled_dot(t.a, p, q)?;
            let ad: f64 = d.iter().zip(t.a.values()).map(|(d, a)| d * a).sum();
            let quad_f = frob_dot(gram_tn(p).as_ref(), gram_tn(q).as_ref())?;
            a2 += t.weight * self.a_full_sq;
            cross += t.weight * ad;
            quad += t.weight * quad_f;
        }
        let mut parts = [a2, cross, quad];
        self.sums.sum(&mut parts);
        Ok((parts[0], parts[1], parts[2]))
    }

    /// The loss part of f at P = ΦW, Q = ΨH.
    fn loss_pq(&self, p: MatRef<'_, f64>, q: MatRef<'_, f64>) -> Result<f64, SolverError> {
        if self.problem.full.is_none() {
            // sum the squared residuals directly (no cancellation)
            let Some(t) = self.problem.sampled else {
                return Ok(0.0);
            };
            let d = sampled_dot(t.a, p, q)?;
            let a = t.a.values();
            let [ss] = fixed_order_sum(d.len(), LOSS_CHUNK, |r| {
                [d[r.clone()]
                    .iter()
                    .zip(&a[r])
                    .fold(0.0, |ss, (d, a)| ss + (d - a) * (d - a))]
            });
            let ss = sum_scalar(self.sums, ss);
            return Ok(0.5 * t.weight * ss);
        }
        let (a2, cross, quad) = self.loss_parts(p, q)?;
        Ok(0.5 * (a2 - 2.0 * cross + quad).max(0.0))
    }

    /// P = ΦW and Q = ΨH.
    pub fn products(
        &self,
        w: MatRef<'_, f64>,
        h: MatRef<'_, f64>,
    ) -> Result<FactorProducts, SolverError> {
        self.check_factors(w, h)?;
        Ok(FactorProducts {
            p: self.problem.phi.mul(w)?,
            q: self.problem.psi.mul(h)?,
        })
    }

    /// Fails unless `pq` has the shapes of ΦW and ΨH for factors of rank `k` (its values are
    /// the caller's to keep in step with the factors).
    fn check_products(&self, pq: &FactorProducts, k: usize) -> Result<(), SolverError> {
        let (nx, ny) = self.problem.shape();
        for (name, m, rows) in [("P = ΦW", &pq.p, nx), ("Q = ΨH", &pq.q, ny)] {
            if (m.nrows(), m.ncols()) != (rows, k) {
                return Err(dim_err(
                    name,
                    format!("{rows} × {k}"),
                    format!("{} × {}", m.nrows(), m.ncols()),
                ));
            }
        }
        Ok(())
    }

    /// f(W, H) (DESIGN §3.2, GIMC eq. 3, with the weights of the problem's observation model).
    pub fn objective(
        &self,
        lambda: f64,
        w: MatRef<'_, f64>,
        h: MatRef<'_, f64>,
    ) -> Result<f64, SolverError> {
        check_nonneg("lambda", lambda)?;
        let pq = self.products(w, h)?;
        self.objective_with(lambda, w, h, &pq)
    }

    /// f(W, H) from its products `pq` = [`ImcWorkspace::products`] of `w`, `h` (the same bits
    /// as [`ImcWorkspace::objective`], without forming them).
    pub fn objective_with(
        &self,
        lambda: f64,
        w: MatRef<'_, f64>,
        h: MatRef<'_, f64>,
        pq: &FactorProducts,
    ) -> Result<f64, SolverError> {
        check_nonneg("lambda", lambda)?;
        self.check_factors(w, h)?;
        self.check_products(pq, w.ncols())?;
        let loss = self.loss_pq(pq.p.as_ref(), pq.q.as_ref())?;
        Ok(loss + 0.5 * lambda * (w.squared_norm_l2() + h.squared_norm_l2()))
    }

    /// The residual p_i·q_j − A_ij on Ω (CSR order of the observed set), P = ΦW, Q = ΨH: the
    /// sparse R of DESIGN §3.2–§3.3 (on row shards, of this process's entries). `None` when the problem has no sampled term (fully
    /// observed; use [`ImcWorkspace::feature_gradients`] there).
    pub fn residual(
        &self,
        w: MatRef<'_, f64>,
        h: MatRef<'_, f64>,
    ) -> Result<Option<Vec<f64>>, SolverError> {
        self.check_factors(w, h)?;
        let Some(t) = self.problem.sampled else {
            return Ok(None);
        };
        let p = self.problem.phi.mul(w)?;
        let q = self.problem.psi.mul(h)?;
        Ok(Some(gimc_linalg::observed::sampled_residual(
            t.a,
            p.as_ref(),
            q.as_ref(),
        )?))
    }

    /// ∂(loss)/∂P (n_x × k) at P = ΦW, Q = ΨH: w_Ω R Q + w_F (P(QᵀQ) − A_F Q); and the same for
    /// the H side, ∂/∂Q = w_Ω Rᵀ P + w_F (Q(PᵀP) − A_Fᵀ P).
    fn grad_pq(
        &self,
        p: MatRef<'_, f64>,
        q: MatRef<'_, f64>,
    ) -> Result<(Mat<f64>, Mat<f64>), SolverError> {
        let (nx, ny) = self.problem.shape();
        let k = p.ncols();
        let mut gp = Mat::<f64>::zeros(nx, k);
        let mut gq = Mat::<f64>::zeros(ny, k);
        if let Some(t) = self.problem.sampled {
            let mut r = sampled_dot(t.a, p, q)?;
            for (r, a) in r.iter_mut().zip(t.a.values()) {
                *r = t.weight * (*r - a);
            }
            gp += omega_mul_dense(t.a, &r, q)?;
            gq += omega_tr_mul_dense(t.a, &r, p)?;
        }
        if let Some(t) = self.problem.full {
            let pp = gram_tn(p);
            let qq = gram_tn(q);
            let s = faer::Scale(t.weight);
            gp += (p * &qq - omega_mul_dense(t.a, t.a.values(), q)?) * s;
            gq += (q * &pp - omega_tr_mul_dense(t.a, t.a.values(), p)?) * s;
        }
        Ok((gp, gq))
    }

    /// ∂f/∂Φ = (∂f/∂P) Wᵀ and ∂f/∂Ψ = (∂f/∂Q) Hᵀ (DESIGN §3.3), for the feature-map backward
    /// pass of GIMC: those of `sides`, `None` for the other and on an identity side. Cost
    /// O(|Ω|·k + (n_x + n_y)·k·D). On row shards ∂f/∂Φ holds this process's rows and ∂f/∂Ψ is
    /// summed (whole on every process).
    pub fn feature_gradients(
        &self,
        w: MatRef<'_, f64>,
        h: MatRef<'_, f64>,
        sides: FeatureSides,
    ) -> Result<FeatureGradients, SolverError> {
        let pq = self.products(w, h)?;
        self.feature_gradients_with(w, h, &pq, sides)
    }

    /// [`ImcWorkspace::feature_gradients`] from the products `pq` = [`ImcWorkspace::products`]
    /// of `w`, `h` (the same bits, without forming them).
    pub fn feature_gradients_with(
        &self,
        w: MatRef<'_, f64>,
        h: MatRef<'_, f64>,
        pq: &FactorProducts,
        sides: FeatureSides,
    ) -> Result<FeatureGradients, SolverError> {
        self.check_factors(w, h)?;
        self.check_products(pq, w.ncols())?;
        let (gp, mut gq) = self.grad_pq(pq.p.as_ref(), pq.q.as_ref())?;
        sum_mat(self.sums, &mut gq);
        let rows = sides != FeatureSides::Cols && !self.problem.phi.is_identity();
        let cols = sides != FeatureSides::Rows && !self.problem.psi.is_identity();
        let d_phi = rows.then(|| &gp * w.transpose());
        let d_psi = cols.then(|| &gq * h.transpose());
        Ok(FeatureGradients { d_phi, d_psi })
    }

    /// ∂f/∂W = Φᵀ(∂f/∂P) + λW and ∂f/∂H = Ψᵀ(∂f/∂Q) + λH (the loss parts summed across the
    /// processes on row shards).
    pub fn factor_gradients(
        &self,
        lambda: f64,
        w: MatRef<'_, f64>,
        h: MatRef<'_, f64>,
    ) -> Result<FactorGradients, SolverError> {
        check_nonneg("lambda", lambda)?;
        let pq = self.products(w, h)?;
        let (gp, gq) = self.grad_pq(pq.p.as_ref(), pq.q.as_ref())?;
        let s = faer::Scale(lambda);
        let mut d_w = self.problem.phi.tr_mul(gp.as_ref())?;
        let mut d_h = self.problem.psi.tr_mul(gq.as_ref())?;
        sum_mat(self.sums, &mut d_w);
        sum_mat(self.sums, &mut d_h);
        let d_w = d_w + w * s;
        let d_h = d_h + h * s;
        Ok(FactorGradients { d_w, d_h })
    }

    /// The W half-step: minimises f over W with H fixed, warm-started from (and written into)
    /// `w`. CG with `cg` when Φ has features, an exact row-wise solve when Φ = I.
    pub fn w_step(
        &self,
        lambda: f64,
        h: MatRef<'_, f64>,
        w: MatMut<'_, f64>,
        cg: &ValidCgParams,
    ) -> Result<HalfStepReport, SolverError> {
        self.check_factors(w.as_ref(), h)?;
        self.half_step(Which::W, lambda, h, w, cg)
    }

    /// The H half-step: minimises f over H with W fixed, warm-started from (and written into)
    /// `h`.
    pub fn h_step(
        &self,
        lambda: f64,
        w: MatRef<'_, f64>,
        h: MatMut<'_, f64>,
        cg: &ValidCgParams,
    ) -> Result<HalfStepReport, SolverError> {
        self.check_factors(w, h.as_ref())?;
        self.half_step(Which::H, lambda, w, h, cg)
    }

    fn half_step(
        &self,
        which: Which,
        lambda: f64,
        other: MatRef<'_, f64>,
        x: MatMut<'_, f64>,
        cg: &ValidCgParams,
    ) -> Result<HalfStepReport, SolverError> {
        check_nonneg("lambda", lambda)?;
        check_finite_mat("warm start", x.as_ref())?;
        check_finite_mat("fixed factor", other)?;
        let side = match which {
            Which::W => self.problem.phi,
            Which::H => self.problem.psi,
        };
        let (system, reduced) = self.half_step_system(which, lambda, other, x.ncols())?;
        match side {
            Side::Identity(_) => self.exact_half_step(&system, x),
            Side::Features(f) => self.cg_half_step(&system, f, reduced, x, cg),
        }
    }

    /// The linear system of a half-step on `which` with the other factor fixed at `other`
    /// (k columns), and the updated side's row-space reduction when it has one.
    fn half_step_system(
        &self,
        which: Which,
        lambda: f64,
        other: MatRef<'_, f64>,
        k: usize,
    ) -> Result<(HalfStepSystem<'a>, Option<&Reduced<'a>>), SolverError> {
        let pr = self.problem;
        let (side, other_side) = match which {
            Which::W => (pr.phi, pr.psi),
            Which::H => (pr.psi, pr.phi),
        };
        let view = |a: &'a Observed| match which {
            Which::W => OmegaView::rows(a),
            Which::H => OmegaView::cols(a),
        };
        let a_times = |a: &Observed, vals: &[f64], q: MatRef<'_, f64>| match which {
            Which::W => omega_mul_dense(a, vals, q),
            Which::H => omega_tr_mul_dense(a, vals, q),
        };
        // Q: the other side's projected factor (n_other × k), and its rows as columns
        let q = other_side.mul(other)?;
        let qt = q.transpose().to_owned();
        // right-hand side: sideᵀ [w_Ω A_Ω Q + w_F A_F Q]
        let n_side = side.nrows();
        let mut aq = Mat::<f64>::zeros(n_side, k);
        match (pr.sampled, pr.full) {
            (Some(s), Some(f)) if std::ptr::eq(s.a, f.a) => {
                aq += a_times(s.a, s.a.values(), q.as_ref())? * faer::Scale(s.weight + f.weight);
            }
            (s, f) => {
                for t in [s, f].into_iter().flatten() {
                    aq += a_times(t.a, t.a.values(), q.as_ref())? * faer::Scale(t.weight);
                }
            }
        }
        // a wide dense side is solved in its row space (see `cg_half_step`), where the
        // right-hand side Vᵀ Φᵀ (AQ) is Lᵀ (AQ): Φᵀ(AQ) itself is then never needed
        let reduced = match side {
            Side::Features(_) => self.reduced(which),
            Side::Identity(_) => None,
        };
        let mut b = match reduced {
            Some(red) => red.l.tr_mul_dense(aq.as_ref())?,
            None => side.tr_mul(aq.as_ref())?,
        };
        // a sum over this process's entries of Ω
        sum_mat(self.sums, &mut b);
        // the fully observed term's right factor w_F QᵀQ
        let c = pr.full.map(|t| gram_tn(q.as_ref()) * faer::Scale(t.weight));
        let sampled = pr.sampled.map(|t| (view(t.a), t.weight));
        let system = HalfStepSystem {
            which,
            lambda,
            q,
            qt,
            b,
            c,
            sampled,
        };
        Ok((system, reduced))
    }

    /// The half-step of an identity side, solved exactly line by line (a k × k ridge system
    /// per row of the updated factor).
    fn exact_half_step(
        &self,
        system: &HalfStepSystem<'a>,
        mut x: MatMut<'_, f64>,
    ) -> Result<HalfStepReport, SolverError> {
        let HalfStepSystem {
            lambda,
            qt,
            b,
            c,
            sampled,
            ..
        } = system;
        if self.sums.processes() > 1 {
            // on row shards (only the H side can be the identity there) the per-line Grams
            // w Σ_{i∈Ω^j} p_i p_iᵀ are split across processes: sum them, then solve each line
            let (view, weight) =
                sampled.ok_or_else(|| param_err::<SolverError>("problem", "no sampled term"))?;
            let mut grams = omega_row_grams(view, qt.as_ref(), weight);
            sum_slice(self.sums, &mut grams);
            rowwise_ridge_from_grams(&grams, *lambda, b.as_ref(), x.as_mut())
                .map_err(not_positive_definite)?;
        } else {
            rowwise_ridge(
                *sampled,
                c.as_ref().map(|c| c.as_ref()),
                qt.as_ref(),
                *lambda,
                b.as_ref(),
                x.as_mut(),
            )
            .map_err(not_positive_definite)?;
        }
        Ok(HalfStepReport {
            cg_iterations: 0,
            relative_residual: 0.0,
            exact: true,
        })
    }

    /// The half-step of a feature side `f`, by CG warm-started from `x`: on the Sylvester
    /// operator of the fully observed term alone, else on the sampled Hessian with the
    /// Kronecker preconditioner, in the row space of `f` when it is `reduced`.
    fn cg_half_step(
        &self,
        system: &HalfStepSystem<'a>,
        f: &FeatureMatrix,
        reduced: Option<&Reduced<'a>>,
        mut x: MatMut<'_, f64>,
        cg: &ValidCgParams,
    ) -> Result<HalfStepReport, SolverError> {
        let HalfStepSystem {
            which,
            lambda,
            q,
            qt,
            b,
            c,
            sampled,
        } = system;
        let (which, lambda) = (*which, *lambda);
        let pr = self.problem;
        let k = x.ncols();
        let n_side = f.nrows();
        let gram = c.as_ref().and_then(|_| self.gram(which));
        let report = match *sampled {
            None => {
                let (Some(g), Some(c)) = (gram, c.as_ref()) else {
                    return Err(param_err("problem", "no loss term"));
                };
                let op = SylvesterOperator::new(g.as_ref(), c.as_ref(), lambda)?;
                conjugate_gradient(&op, b.as_ref(), x.as_mut(), cg)?
            }
            Some((view, weight)) => {
                // the B_i of the Ω term pay off when k is below the entries per line;
                // with dense features they also let the whole Hessian product run as
                // one blocked pass over Φ (`dense_row_gram_hessian`) instead of two
                // thin GEMMs that pack the n × D matrix again at every CG iteration,
                // which is most of the time for small k and sparse Ω (mushrooms at
                // |Ω| = n: k = 2). Applying the B_i costs n·k² against the pass's
                // 4·n·D·k, and they take n·k² memory, so k² ≤ D bounds both by Φ's.
                let dense_dim = match reduced {
                    Some(red) => Some(red.l.ncols()),
                    None => match f {
                        FeatureMatrix::Dense(m) => Some(m.ncols()),
                        _ => None,
                    },
                };
                let grams = (k * n_side <= view.nnz() || dense_dim.is_some_and(|d| k * k <= d))
                    .then(|| omega_row_grams(view, qt.as_ref(), weight));
                // the W side's other lines are Ψ's (whole on every process: counts
                // summed), the H side's are this process's rows of Φ (summed in the
                // preconditioner)
                let (other_counts, other_sums) = match which {
                    Which::W => (
                        self.col_counts_summed(t_sampled(pr)?.a).to_vec(),
                        &ONE_PROCESS as &dyn RowSums,
                    ),
                    Which::H => (OmegaView::rows(t_sampled(pr)?.a).line_counts(), self.sums),
                };
                let solve = |f: &FeatureMatrix,
                             side_t: Option<&FeatureMatrix>,
                             basis: Option<&PreconditionerBasis>,
                             grams: Option<Vec<f64>>,
                             b: MatRef<'_, f64>,
                             x: MatMut<'_, f64>| {
                    let op = SampledHessian {
                        grams,
                        side: f,
                        side_t,
                        view,
                        weight,
                        qt: qt.as_ref(),
                        full: gram.zip(c.as_ref()).map(|(g, c)| (g.as_ref(), c.as_ref())),
                        lambda,
                        pt: RefCell::new(Mat::zeros(k, n_side)),
                        u: RefCell::new(vec![0.0; n_side * k]),
                        sums: self.sums,
                    };
                    let precond = basis.and_then(|eig| {
                        KroneckerPreconditioner::new(
                            eig,
                            q.as_ref(),
                            &other_counts,
                            weight,
                            lambda,
                            other_sums,
                        )
                    });
                    preconditioned_conjugate_gradient(
                        &op,
                        precond.as_ref().map(|m| m as &dyn LinearOperator),
                        b,
                        x,
                        cg,
                    )
                };
                match reduced {
                    // D > n: W = Vα with α the same half-step on the n × n features
                    // L = ΦV (the minimiser lies in the row space of Φ = span V); `b`
                    // is already the reduced right-hand side Lᵀ(AQ)
                    Some(red) => {
                        let mut alpha = red.v_t_mul(x.as_ref());
                        let report = solve(
                            &red.l,
                            None,
                            red.basis.as_ref(),
                            grams,
                            b.as_ref(),
                            alpha.as_mut(),
                        )?;
                        x.copy_from(red.v_mul(alpha.as_ref()));
                        report
                    }
                    None => solve(
                        f,
                        self.transposed(which),
                        self.weighted_eig(which),
                        grams,
                        b.as_ref(),
                        x.as_mut(),
                    )?,
                }
            }
        };
        Ok(HalfStepReport {
            cg_iterations: report.iterations,
            relative_residual: report.relative_residual,
            exact: false,
        })
    }
}

/// The error of a row-wise ridge solve whose k × k system at line `row` is not positive
/// definite.
fn not_positive_definite(row: usize) -> SolverError {
    SolverError::Linalg(gimc_linalg::LinalgError::NotPositiveDefinite {
        op: "row-wise ALS ridge solve (use lambda > 0)",
        index: row,
    })
}

/// The linear system of one half-step: Q = Ψ H (or Φ W for the H side) and its rows as
/// columns, the right-hand side (reduced to the row space of a reduced side), the fully
/// observed term's right factor w_F QᵀQ, and the Ω term seen along the updated side's lines
/// with its weight.
struct HalfStepSystem<'a> {
    which: Which,
    lambda: f64,
    q: Mat<f64>,
    qt: Mat<f64>,
    b: Mat<f64>,
    c: Option<Mat<f64>>,
    sampled: Option<(OmegaView<'a>, f64)>,
}

/// f(W, H) of `problem` (DESIGN §3.2). Builds a fresh [`ImcWorkspace`]; keep one yourself to
/// evaluate repeatedly.
pub fn imc_objective(
    problem: &ImcProblem<'_>,
    lambda: f64,
    w: MatRef<'_, f64>,
    h: MatRef<'_, f64>,
) -> Result<f64, SolverError> {
    ImcWorkspace::new(problem).objective(lambda, w, h)
}

/// The residual on Ω (see [`ImcWorkspace::residual`]).
pub fn imc_residual(
    problem: &ImcProblem<'_>,
    w: MatRef<'_, f64>,
    h: MatRef<'_, f64>,
) -> Result<Option<Vec<f64>>, SolverError> {
    ImcWorkspace::new(problem).residual(w, h)
}

/// One W half-step (see [`ImcWorkspace::w_step`]) with the λ and the CG stopping rule of
/// `params`.
pub fn w_step(
    problem: &ImcProblem<'_>,
    params: &ValidImcParams,
    h: MatRef<'_, f64>,
    w: MatMut<'_, f64>,
) -> Result<HalfStepReport, SolverError> {
    ImcWorkspace::new(problem).w_step(params.lambda, h, w, params.valid_cg())
}

/// One H half-step (see [`ImcWorkspace::h_step`]) with the λ and the CG stopping rule of
/// `params`.
pub fn h_step(
    problem: &ImcProblem<'_>,
    params: &ValidImcParams,
    w: MatRef<'_, f64>,
    h: MatMut<'_, f64>,
) -> Result<HalfStepReport, SolverError> {
    ImcWorkspace::new(problem).h_step(params.lambda, w, h, params.valid_cg())
}
