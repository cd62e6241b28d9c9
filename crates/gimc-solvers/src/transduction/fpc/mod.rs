//! Fixed point continuation (FPC) for MC-1 / MC-b in the shape of
//! [`IterativeSolver`](crate::iter::IterativeSolver): the continuation schedule, the iterate,
//! the gradient step (optionally accelerated), the shrinkage and the MC-1 reset. The fused
//! column passes are in `columns`, the step itself and the end of a μ stage in `step`.

use gimc_linalg::dense;
use gimc_linalg::faer::{Mat, MatMut, MatRef};
use gimc_linalg::rng::{GimcRng, child};
use gimc_linalg::svd::{ValidRsvdParams, shrink_singular_values, thin_svd, top_k_svd_with};

use crate::SolverError;
use crate::error::{check_pos, param_err};

use super::loss::{
    ColumnEntries, DenseFeatures, check_iterate, col_slices, column_major_entries, loss_weights,
};
use super::shrink::{Shrunk, gram_shrink};
use super::{
    GRAM_LIMIT, ShrinkSvd, TransductionProblem, TransductionSolution, TransductionVariant,
    ValidTransductionParams, sigma1_at_zero, step_sizes,
};

mod columns;
mod step;

use columns::{
    CandidateColumns, DescentColumns, candidate_columns_dispatch, descent_columns_dispatch,
    restart_bias,
};

/// The continuation schedule: (μ, index into the grid when the stage is a grid point).
/// Starts at max(`start`, grid[0]) and steps μ ← η μ, landing exactly on every grid point.
pub(crate) fn schedule(start: f64, eta: f64, grid: &[f64]) -> Vec<(f64, Option<usize>)> {
    let mut out = Vec::new();
    let mut next = start;
    for (k, &g) in grid.iter().enumerate() {
        while next > g * (1.0 + 1e-9) {
            out.push((next, None));
            next *= eta;
        }
        out.push((g, Some(k)));
        next = eta * g;
    }
    out
}

/// The iterate of [`TransductionFpc`]: Z, b and the solutions recorded at the grid points.
#[derive(Debug, Clone, PartialEq)]
pub struct TransductionState {
    /// Current Z.
    pub z: Mat<f64>,
    /// Current bias (zeros for MC-1).
    pub bias: Vec<f64>,
    /// Solutions recorded at the end of every grid stage so far.
    pub solutions: Vec<TransductionSolution>,
}

/// FPC for MC-1 / MC-b in the [`IterativeSolver`](crate::iter::IterativeSolver) shape: one
/// step is one gradient step plus shrinkage (and the MC-1 reset); the continuation over the
/// schedule runs inside. Extras per record: `mu`, `stage`, `rank`, `rel_change`, `restart` (1
/// when an accelerated step dropped its momentum), `stage_end` (1 when the step ended a stage).
///
/// MC-b is a proximal gradient method with steps below 2/L, so its objective never increases
/// within a stage. MC-1 resets the last row to ones after the shrinkage, which is not the
/// proximal operator of μ‖·‖_* on that affine set; its objective is monitored all the same and
/// the tests check it does not increase on the problems they draw.
///
/// With [`TransductionParams::accelerate`] the gradient step is taken from the extrapolated
/// point of monotone FISTA (Beck & Teboulle 2009, MFISTA: the candidate replaces the iterate
/// only when it lowers the objective), restarted at every μ stage and adaptively within one
/// (O'Donoghue & Candès 2015: after a rejected candidate, and when the inner product
/// ⟨y − z_{k+1}, z_{k+1} − x_k⟩ is positive). A candidate from the iterate itself is the plain
/// FPC step: rejected, it ends the stage when it changes F by less than `tol`, and is taken
/// otherwise. MC-b's objective therefore never increases within a stage; MC-1's can rise only
/// where plain FPC's would (its reset).
///
/// [`TransductionParams::accelerate`]: super::TransductionParams::accelerate
#[derive(Debug)]
pub struct TransductionFpc<'a> {
    problem: &'a TransductionProblem,
    params: ValidTransductionParams,
    schedule: Vec<(f64, Option<usize>)>,
    stage: usize,
    stage_iters: usize,
    prev_obj: f64,
    /// ‖Z‖_* of the current iterate, from the step (or start) that produced it: a stage
    /// change re-prices the iterate at the next μ without another decomposition.
    nuclear: f64,
    tau_z: f64,
    tau_b: f64,
    rank: usize,
    rng: GimcRng,
    /// Observed entries, labels first then features, each part sorted by column (Z is
    /// column-major) and stored column by column.
    entries: ColumnEntries,
    /// λ/|Ω_Y| and 1/|Ω_X|.
    weights: (f64, f64),
    /// ∂f/∂z at the last evaluated point, one per entry of `entries` (filled by `eval`).
    grad: Vec<f64>,
    /// Scratch of the label terms, one per label entry: the margins m = y (z + b), then
    /// log(1 + e^{−m}) and 1 / (1 + e^{m}) from [`gimc_linalg::simd::logistic_terms`].
    logistic: LogisticScratch,
    /// The feature block as dense d × n arrays when Ω_X covers at least [`DENSE_FEATURES`] of
    /// it (the loss and gradient then stream through columns instead of gathering entries).
    pub(super) dense: Option<DenseFeatures>,
    /// MFISTA: the extrapolated point (Z, b), the previous iterate and t_k.
    momentum: Option<Momentum>,
    /// The gradient step's buffer, kept from step to step (see [`take_work`]).
    work: Option<Mat<f64>>,
    /// The iterate the last step replaced (or its rejected candidate): the next shrinkage
    /// writes its Z there.
    spare: Option<Mat<f64>>,
    /// The iterate (Z, b) that ended the previous μ stage, and that stage's μ: the secant
    /// start's second point ([`Self::secant_start`]).
    path_prev: Option<(Mat<f64>, Vec<f64>, f64)>,
}

/// See [`TransductionFpc::logistic`].
#[derive(Debug)]
struct LogisticScratch {
    margins: Vec<f64>,
    softplus: Vec<f64>,
    sigmoid: Vec<f64>,
}

impl LogisticScratch {
    fn new(len: usize) -> Self {
        Self {
            margins: vec![0.0; len],
            softplus: vec![0.0; len],
            sigmoid: vec![0.0; len],
        }
    }

    /// The margins of the label entries at (Z, b) (`cols` Z's columns), then their logistic
    /// terms, each only when asked for.
    fn fill(
        &mut self,
        e: &ColumnEntries,
        cols: &[&[f64]],
        bias: &[f64],
        softplus: bool,
        sigmoid: bool,
    ) {
        for (j, col) in cols.iter().enumerate() {
            for k in e.label_ptr[j]..e.label_ptr[j + 1] {
                let i = e.rows[k];
                self.margins[k] = e.vals[k] * (col[i] + bias[i]);
            }
        }
        gimc_linalg::simd::logistic_terms(
            &self.margins,
            softplus.then_some(&mut self.softplus[..]),
            sigmoid.then_some(&mut self.sigmoid[..]),
        );
    }
}

#[derive(Debug)]
struct Momentum {
    yz: Mat<f64>,
    yb: Vec<f64>,
    t: f64,
}

/// A proximal step's result: the new (Z, b), F_μ there, the rank of the shrunk matrix and
/// ‖Z‖_* (after MC-1's reset).
struct Candidate {
    z: Mat<f64>,
    bias: Vec<f64>,
    objective: f64,
    rank: usize,
    nuclear: f64,
}

impl<'a> TransductionFpc<'a> {
    /// A solver returning the iterates at every μ of `grid` (positive, strictly decreasing).
    pub fn new(
        problem: &'a TransductionProblem,
        params: ValidTransductionParams,
        grid: &[f64],
        rng: &mut GimcRng,
    ) -> Result<Self, SolverError> {
        if grid.is_empty() {
            return Err(param_err("mu grid", "must not be empty"));
        }
        for (k, &g) in grid.iter().enumerate() {
            check_pos("mu", g)?;
            if k > 0 && g >= grid[k - 1] {
                return Err(param_err(
                    "mu grid",
                    format!(
                        "must be strictly decreasing; entry {k} = {g} follows {}",
                        grid[k - 1]
                    ),
                ));
            }
        }
        let start = (params.eta_mu * sigma1_at_zero(problem, &params)?).max(grid[0]);
        let (tau_z, tau_b) = step_sizes(problem, params.lambda);
        Ok(Self {
            problem,
            params,
            schedule: schedule(start, params.eta_mu, grid),
            stage: 0,
            stage_iters: 0,
            prev_obj: f64::NAN,
            nuclear: f64::NAN,
            tau_z,
            tau_b,
            rank: 0,
            rng: child(rng, 0x7472),
            entries: ColumnEntries::new(
                &column_major_entries(problem),
                problem.labels.len(),
                problem.n_items(),
            ),
            weights: loss_weights(problem, params.lambda),
            grad: vec![0.0; problem.labels.len() + problem.features.len()],
            logistic: LogisticScratch::new(problem.labels.len()),
            dense: DenseFeatures::new(problem),
            momentum: None,
            work: None,
            spare: None,
            path_prev: None,
        })
    }

    /// The μ stages in order, `Some(k)` marking grid point k.
    pub fn schedule(&self) -> &[(f64, Option<usize>)] {
        &self.schedule
    }

    /// (τ_Z, τ_b).
    pub fn steps(&self) -> (f64, f64) {
        (self.tau_z, self.tau_b)
    }

    /// The starting iterate: Z the rank-1 SVD approximation of the zero-filled observed matrix
    /// (with the ones row for MC-1, which is then reset to ones), b = 0.
    pub fn initial_state(&self) -> Result<TransductionState, SolverError> {
        let p = self.problem;
        let variant = self.params.variant;
        let (t, m, n) = (p.n_labels(), p.z_rows(variant), p.n_items());
        let mut z0 = Mat::<f64>::zeros(m, n);
        for (i, j, y) in p.labels.iter() {
            z0[(i, j)] = y;
        }
        for (i, j, x) in p.features.iter() {
            z0[(t + i, j)] = x;
        }
        if variant == TransductionVariant::Mc1 {
            for j in 0..n {
                z0[(m - 1, j)] = 1.0;
            }
        }
        let svd = thin_svd(z0.as_ref())?.truncate(1);
        let mut z = svd.reconstruct();
        if variant == TransductionVariant::Mc1 {
            for j in 0..n {
                z[(m - 1, j)] = 1.0;
            }
        }
        Ok(TransductionState {
            z,
            bias: vec![0.0; t],
            solutions: Vec::new(),
        })
    }

    fn mu(&self) -> f64 {
        self.schedule.get(self.stage).map_or(f64::NAN, |s| s.0)
    }

    /// The smooth loss f(Z, b) at a point (`with_loss`; else 0 is returned) and, with
    /// `with_grad`, ∂f/∂z on Ω cached in `grad` (the label terms vectorised by
    /// [`gimc_linalg::simd::logistic_terms`]). The two are asked for separately where they are
    /// used separately (accelerated FPC needs the gradient at the extrapolated point and the
    /// loss at the candidate): the feature block's gradient-only pass then vectorises, its
    /// loss-only pass stores nothing. The loss is summed in the same order in every mode.
    fn eval_with(
        &mut self,
        z: MatRef<'_, f64>,
        bias: &[f64],
        with_loss: bool,
        with_grad: bool,
    ) -> f64 {
        let owned;
        let z = if z.row_stride() == 1 {
            z
        } else {
            owned = z.to_owned();
            owned.as_ref()
        };
        let cols = col_slices(z);
        let (wy, wx) = self.weights;
        let (mut ly, mut lx) = (0.0, 0.0);
        let e = &self.entries;
        let grad = &mut self.grad;
        // the label terms, vectorised: log(1 + e^{−m}) and d/dz = −y / (1 + e^{m}), m = y (z + b)
        let terms = &mut self.logistic;
        terms.fill(e, &cols, bias, with_loss, with_grad);
        if with_loss {
            for &v in &terms.softplus {
                ly += v;
            }
        }
        if with_grad {
            for ((g, &y), &sig) in grad.iter_mut().zip(&e.vals).zip(&terms.sigmoid) {
                *g = -wy * y * sig;
            }
        }
        if let Some(df) = self.dense.as_mut() {
            // same terms in the same (column, row) order, plus exact zeros off Ω_X
            let (t, d) = (df.t, df.d);
            for (j, col) in cols.iter().enumerate() {
                let zc = &col[t..t + d];
                let range = j * d..(j + 1) * d;
                let (xc, mc) = (&df.x[range.clone()], &df.mask[range.clone()]);
                let gc = &mut df.grad[range];
                match (with_loss, with_grad) {
                    (true, true) => {
                        for i in 0..d {
                            let r = (zc[i] - xc[i]) * mc[i];
                            lx += 0.5 * r * r;
                            gc[i] = wx * r;
                        }
                    }
                    (true, false) => {
                        for ((&z, &x), &m) in zc.iter().zip(xc).zip(mc) {
                            let r = (z - x) * m;
                            lx += 0.5 * r * r;
                        }
                    }
                    (false, _) => {
                        for (((g, &z), &x), &m) in gc.iter_mut().zip(zc).zip(xc).zip(mc) {
                            *g = wx * ((z - x) * m);
                        }
                    }
                }
            }
            return wy * ly + wx * lx;
        }
        for (j, col) in cols.iter().enumerate() {
            let r = e.feature_ptr[j]..e.feature_ptr[j + 1];
            let part = e.rows[r.clone()].iter().zip(&e.vals[r.clone()]);
            for ((&i, &x), g) in part.zip(&mut grad[r]) {
                let r = col[i] - x;
                lx += 0.5 * r * r;
                if with_grad {
                    *g = wx * r;
                }
            }
        }
        wy * ly + wx * lx
    }

    fn eval(&mut self, z: MatRef<'_, f64>, bias: &[f64]) -> f64 {
        self.eval_with(z, bias, true, true)
    }

    /// S_t(A) by the configured method.
    fn shrink(&mut self, a: MatRef<'_, f64>, thresh: f64) -> Result<Shrunk, SolverError> {
        let (m, n) = a.shape();
        let min_dim = m.min(n);
        match self.params.svd {
            ShrinkSvd::Auto if min_dim <= GRAM_LIMIT => gram_shrink(a, thresh, self.spare.take()),
            ShrinkSvd::Exact => Ok(Shrunk::from_svd(
                shrink_singular_values(thin_svd(a)?, thresh)?,
                thresh,
            )),
            ShrinkSvd::Auto | ShrinkSvd::Partial => {
                // the defaults: p = 10, q = 4
                let rsvd = ValidRsvdParams::default();
                let mut k = (self.rank + 5).clamp(1, min_dim.max(1));
                loop {
                    if k + rsvd.oversampling >= min_dim {
                        let svd = shrink_singular_values(thin_svd(a)?, thresh)?;
                        return Ok(Shrunk::from_svd(svd, thresh));
                    }
                    let svd = top_k_svd_with(a, k, &rsvd, &mut self.rng)?;
                    if svd.s.last().is_none_or(|&s| s <= thresh) {
                        let svd = shrink_singular_values(svd, thresh)?;
                        return Ok(Shrunk::from_svd(svd, thresh));
                    }
                    k = (2 * k).min(min_dim);
                }
            }
        }
    }

    /// The gradient step A = Z − τ_Z ∇_Z f, b ← b − τ_b ∇_b f (DESIGN §3.5) from the point
    /// (Z, b), using the gradient cached at that point by [`Self::eval_with`], into a buffer
    /// with zero padding (a GEMM left operand when Z is tall; see `dense::zeros_padded`).
    fn descent_from_cache(&mut self, z: MatRef<'_, f64>, bias: &[f64]) -> (Mat<f64>, Vec<f64>) {
        let (tau_z, tau_b) = (self.tau_z, self.tau_b);
        let mut a = take_work(&mut self.work, z.nrows(), z.ncols());
        a.copy_from(z);
        let mut new_b = bias.to_vec();
        let e = &self.entries;
        let mcb = self.params.variant == TransductionVariant::McB;
        for j in 0..a.ncols() {
            let mut col = a.col_mut(j);
            for k in e.label_ptr[j]..e.label_ptr[j + 1] {
                let (i, g) = (e.rows[k], self.grad[k]);
                col[i] -= tau_z * g;
            }
            if let Some(df) = self.dense.as_ref() {
                // a zero gradient off Ω_X leaves those entries exactly as they are
                let gc = &df.grad[j * df.d..(j + 1) * df.d];
                let mut block = col.as_mut().subrows_mut(df.t, df.d);
                if let Some(slice) = block.as_mut().try_as_col_major_mut() {
                    for (v, &g) in slice.as_slice_mut().iter_mut().zip(gc) {
                        *v -= tau_z * g;
                    }
                } else {
                    for (i, &g) in gc.iter().enumerate() {
                        block[i] -= tau_z * g;
                    }
                }
            } else {
                for k in e.feature_ptr[j]..e.feature_ptr[j + 1] {
                    col[e.rows[k]] -= tau_z * self.grad[k];
                }
            }
        }
        if mcb {
            // ∇_b f accumulated in the order of the label entries (by column, then row)
            for j in 0..a.ncols() {
                for k in e.label_ptr[j]..e.label_ptr[j + 1] {
                    new_b[e.rows[k]] -= tau_b * self.grad[k];
                }
            }
        }
        (a, new_b)
    }

    /// [`Self::descent_from_cache`] with the gradient at (Y, b) evaluated in the same pass over
    /// the columns (accelerated FPC's step from the extrapolated point): no gradient array is
    /// written and read back, and Y is read once. The same operations in the same order as
    /// `eval_with(Y, b, false, true)` followed by [`Self::descent_from_cache`], so bitwise the
    /// same A and b; the label gradients are still cached (as `eval_with` caches them). A is
    /// written straight from Y (no copy pass), and the returned flag says whether every entry
    /// of A is finite (screened column by column while it is in cache).
    fn descent_fused(&mut self, y: MatRef<'_, f64>, bias: &[f64]) -> (Mat<f64>, Vec<f64>, bool) {
        let Some(df) = self.dense.as_ref() else {
            self.eval_with(y, bias, false, true);
            let (a, b) = self.descent_from_cache(y, bias);
            let finite = dense::first_non_finite(a.as_ref()).is_none();
            return (a, b, finite);
        };
        let mut a = take_work(&mut self.work, y.nrows(), y.ncols());
        let (tau_z, tau_b) = (self.tau_z, self.tau_b);
        let (wy, wx) = self.weights;
        let (t, d) = (df.t, df.d);
        let mut new_b = bias.to_vec();
        let e = &self.entries;
        let grad = &mut self.grad;
        let mcb = self.params.variant == TransductionVariant::McB;
        // the label terms at Y first, vectorised (A's label rows are Y's until updated below)
        let owned;
        let yz = if y.row_stride() == 1 {
            y
        } else {
            owned = y.to_owned();
            owned.as_ref()
        };
        self.logistic.fill(e, &col_slices(yz), bias, false, true);
        let columns = DescentColumns {
            a: a.as_mut(),
            y,
            t,
            d,
            features: (&df.x, &df.mask),
            steps: (tau_z, tau_b),
            weights: (wy, wx),
            entries: e,
            sigmoid: &self.logistic.sigmoid,
            grad,
            new_b: if mcb { Some(&mut new_b) } else { None },
        };
        let finite = descent_columns_dispatch(columns);
        (a, new_b, finite)
    }

    /// The gradient step and the shrinkage from the point (Z, b): the shrunk Z (before MC-1's
    /// reset) with its factors, the new b and the gradient step's A. Accelerated FPC steps from
    /// extrapolated points, where no gradient is cached, so the gradient at (Z, b) is evaluated
    /// in the gradient step's pass ([`Self::descent_fused`]); plain FPC uses the one cached at
    /// the iterate by its evaluation.
    fn shrink_step(
        &mut self,
        z: MatRef<'_, f64>,
        bias: &[f64],
        mu: f64,
        it: usize,
    ) -> Result<(Shrunk, Vec<f64>, Mat<f64>), SolverError> {
        let (a, new_b, finite) = if self.params.accelerate {
            self.descent_fused(z, bias)
        } else {
            let (a, b) = self.descent_from_cache(z, bias);
            let finite = dense::first_non_finite(a.as_ref()).is_none();
            (a, b, finite)
        };
        if !finite || new_b.iter().any(|b| !b.is_finite()) {
            return Err(SolverError::NonFinite {
                solver: "transduction-fpc",
                what: "gradient step",
                iteration: it,
            });
        }
        // shrinkage Z = U max(Λ − τ_Z μ, 0) Vᵀ
        let shrunk = self.shrink(a.as_ref(), self.tau_z * mu)?;
        Ok((shrunk, new_b, a))
    }

    /// One proximal gradient step from the point (Z, b) (the gradient there as
    /// [`Self::shrink_step`] takes it).
    fn prox_step(
        &mut self,
        z: MatRef<'_, f64>,
        bias: &[f64],
        mu: f64,
        it: usize,
    ) -> Result<Candidate, SolverError> {
        let (mut shrunk, new_b, a) = self.shrink_step(z, bias, mu, it)?;
        let rank = shrunk.s.len();
        let mut new_z = std::mem::replace(&mut shrunk.z, Mat::zeros(0, 0));
        let nuclear = if self.params.variant == TransductionVariant::Mc1 {
            // reset the ones row (DESIGN §3.5); ‖Z‖_* of Z = U S Vᵀ + e_m cᵀ
            let (m, n) = (new_z.nrows(), new_z.ncols());
            let c: Vec<f64> = (0..n).map(|j| 1.0 - new_z[(m - 1, j)]).collect();
            for j in 0..n {
                new_z[(m - 1, j)] = 1.0;
            }
            let vtc = shrunk.vt_times(a.as_ref(), &c);
            mc1_nuclear_norm(shrunk.u.as_ref(), &shrunk.s, &vtc, &c)?
        } else {
            shrunk.s.iter().sum()
        };
        self.work = Some(a);
        // plain FPC steps next from this point and needs its gradient; accelerated FPC steps
        // from the extrapolated point and evaluates the gradient there
        let with_grad = !self.params.accelerate;
        let f = self.eval_with(new_z.as_ref(), &new_b, true, with_grad) + mu * nuclear;
        check_objective(f, it)?;
        Ok(Candidate {
            z: new_z,
            bias: new_b,
            objective: f,
            rank,
            nuclear,
        })
    }

    /// Accelerated FPC's candidate from the extrapolated point (Y, b_Y) when the feature block
    /// is dense: [`Self::prox_step`] and the restart test with the next extrapolation
    /// ([`restart_product_extrapolate`] with coefficient `c2`, written over Y) in one pass over
    /// the candidate's columns, which also resets MC-1's ones row, gathers the label margins,
    /// sums the feature loss and accumulates A c for ‖Z‖_*. Every sum runs in the order of the
    /// separate passes, so the candidate, F and the product are bitwise theirs. The
    /// extrapolation is written whether or not the candidate is accepted: the caller
    /// overwrites Y when it is rejected or the momentum restarts, as before.
    ///
    /// Returns the candidate and ⟨Y − Z, Z − X⟩, with X the current iterate (`x`, `xb`).
    fn accelerated_candidate(
        &mut self,
        mut y: MatMut<'_, f64>,
        yb: &mut [f64],
        (x, xb): (MatRef<'_, f64>, &[f64]),
        mu: f64,
        it: usize,
        c2: f64,
    ) -> Result<(Candidate, f64), SolverError> {
        let (mut shrunk, new_b, a) = self.shrink_step(y.as_ref(), yb, mu, it)?;
        let rank = shrunk.s.len();
        let mut z = std::mem::replace(&mut shrunk.z, Mat::zeros(0, 0));
        let Some(df) = self.dense.as_ref() else {
            return Err(SolverError::InvalidInput {
                what: "accelerated candidate",
                reason: "needs the dense feature block".into(),
            });
        };
        let mc1 = self.params.variant == TransductionVariant::Mc1;
        let (m, n) = z.shape();
        let (t, d) = (df.t, df.d);
        let (wy, wx) = self.weights;
        let e = &self.entries;
        let margins = &mut self.logistic.margins;
        let mut c = vec![0.0; if mc1 { n } else { 0 }];
        // A c, accumulated column by column when V was not formed (as `Shrunk::vt_times`)
        let mut ac = vec![0.0; if mc1 && shrunk.v.is_none() { m } else { 0 }];
        let columns = CandidateColumns {
            mc1,
            t,
            d,
            z: z.as_mut(),
            c: &mut c,
            ac: &mut ac,
            a: a.as_ref(),
            x,
            y: y.as_mut(),
            entries: e,
            margins,
            bias: &new_b,
            features: (&df.x, &df.mask),
            c2,
        };
        let Some((lx, acc)) = candidate_columns_dispatch(columns) else {
            return Err(SolverError::InvalidInput {
                what: "accelerated candidate",
                reason: "the iterates must be column-major".into(),
            });
        };
        let product = acc.iter().sum::<f64>() + restart_bias(yb, &new_b, xb, c2);
        let terms = &mut self.logistic;
        gimc_linalg::simd::logistic_terms(&terms.margins, Some(&mut terms.softplus[..]), None);
        let mut ly = 0.0;
        for &v in &terms.softplus {
            ly += v;
        }
        let loss = wy * ly + wx * lx;
        let nuclear = if mc1 {
            let vtc = if ac.is_empty() {
                shrunk.vt_times(a.as_ref(), &c)
            } else {
                shrunk.vt_times_from_ac(&ac)
            };
            mc1_nuclear_norm(shrunk.u.as_ref(), &shrunk.s, &vtc, &c)?
        } else {
            shrunk.s.iter().sum()
        };
        self.work = Some(a);
        let f = loss + mu * nuclear;
        check_objective(f, it)?;
        Ok((
            Candidate {
                z,
                bias: new_b,
                objective: f,
                rank,
                nuclear,
            },
            product,
        ))
    }
}

/// The objective after a step, as an error when it is not finite.
fn check_objective(f: f64, it: usize) -> Result<(), SolverError> {
    if f.is_finite() {
        Ok(())
    } else {
        Err(SolverError::NonFinite {
            solver: "transduction-fpc",
            what: "objective",
            iteration: it,
        })
    }
}

/// A buffer for the gradient step's A with zero padding: the one the last step left in `work`
/// (its padding is still zero; every other entry is overwritten) or a new one.
fn take_work(work: &mut Option<Mat<f64>>, nrows: usize, ncols: usize) -> Mat<f64> {
    match work.take() {
        Some(w) if w.nrows() == nrows && w.ncols() == ncols => w,
        _ => dense::zeros_padded(nrows, ncols),
    }
}

/// ‖Z‖_* of the MC-1 iterate after the reset, Z = U S Vᵀ + e_m cᵀ with c = 1 − (U S Vᵀ)_m,
/// in O(m k + k²) given Vᵀc: Z = [U, e_m] B with B = [S Vᵀ; cᵀ]; the thin QR of [U, e_m] has
/// R = [[I, q], [0, ρ]] with q = Uᵀ e_m, ρ = √(1 − ‖q‖²), and the singular values of Z are the
/// square roots of the eigenvalues of R (B Bᵀ) Rᵀ, where B Bᵀ = [[S², S Vᵀc], [cᵀV S, cᵀc]].
/// With q̂ = (q, ρ), ŵ = (S Vᵀc, 0) and γ = cᵀc that core is diag(S², 0) + q̂ŵᵀ + ŵq̂ᵀ + γ q̂q̂ᵀ,
/// a diagonal plus the symmetric rank-two a q̂ᵀ + q̂ aᵀ with a = ŵ + (γ/2) q̂, whose eigenvalues
/// come from two secular equations ([`diag_rank_two_eigenvalues`]).
///
/// [`diag_rank_two_eigenvalues`]: gimc_linalg::eig::diag_rank_two_eigenvalues
pub(super) fn mc1_nuclear_norm(
    u: MatRef<'_, f64>,
    s: &[f64],
    vtc: &[f64],
    c: &[f64],
) -> Result<f64, SolverError> {
    let k = s.len();
    let m = u.nrows();
    let ctc: f64 = c.iter().map(|x| x * x).sum();
    let mut q: Vec<f64> = (0..k).map(|col| u[(m - 1, col)]).collect();
    q.push((1.0 - q.iter().map(|x| x * x).sum::<f64>()).max(0.0).sqrt());
    let mut d: Vec<f64> = s.iter().map(|v| v * v).collect();
    d.push(0.0);
    let a: Vec<f64> = (0..=k)
        .map(|i| if i < k { s[i] * vtc[i] } else { 0.0 } + 0.5 * ctc * q[i])
        .collect();
    let vals = gimc_linalg::eig::diag_rank_two_eigenvalues(&d, &a, &q)?;
    Ok(vals.iter().map(|v| v.max(0.0).sqrt()).sum())
}
