//! One step of [`TransductionFpc`] as [`IterativeSolver::step`]: a plain FPC step or an
//! accelerated (MFISTA) one, then the end of the μ stage when the step ends it (the solution
//! recorded at a grid point, the next stage's start).

use gimc_linalg::dense;
use gimc_linalg::faer::Mat;

use crate::SolverError;
use crate::iter::{IterativeSolver, Progress};
use crate::transduction::TransductionSolution;
use crate::transduction::shrink;

use super::columns::{add_scaled_diff, restart_product_extrapolate};
use super::{Candidate, Momentum, TransductionFpc, TransductionState, check_iterate};

impl TransductionFpc<'_> {
    /// Predictor–corrector continuation: the stage that just ended at μ_k left Z_k, the one
    /// before it Z_{k−1} at μ_{k−1}. The solution path is followed along a secant in log μ,
    /// Z_k + c (Z_k − Z_{k−1}) with c = s · ln(μ_k/μ_{k+1}) / ln(μ_{k−1}/μ_k) (1 on a
    /// geometric schedule) for s ∈ {1, ½, ¼} (the same for b); the next stage starts from the
    /// candidate with the lowest F_{μ_{k+1}} if that is below F_{μ_{k+1}}(Z_k) (in
    /// `prev_obj`), else from Z_k. MC-1's ones row is kept (1 + c (1 − 1) = 1). The stage's
    /// steps and stopping rule are unchanged; only its start moves closer to its solution.
    fn secant_start(
        &mut self,
        st: &mut TransductionState,
        next_mu: f64,
    ) -> Result<(), SolverError> {
        let done_mu = self.schedule[self.stage - 1].0;
        let Some((zp, bp, mu_prev)) = self.path_prev.take() else {
            self.path_prev = Some((st.z.clone(), st.bias.clone(), done_mu));
            return Ok(());
        };
        let secant = (done_mu / next_mu).ln() / (mu_prev / done_mu).ln();
        let mut best: Option<(Mat<f64>, Vec<f64>, f64, f64)> = None;
        for s in [1.0, 0.5, 0.25] {
            let c = s * secant;
            let mut z = dense::zeros_padded(st.z.nrows(), st.z.ncols());
            add_scaled_diff(z.as_mut(), st.z.as_ref(), c, st.z.as_ref(), zp.as_ref());
            let b: Vec<f64> = st
                .bias
                .iter()
                .zip(&bp)
                .map(|(&x, &p)| x + c * (x - p))
                .collect();
            let nuclear = shrink::nuclear_norm_gram(z.as_ref())?;
            let f = self.eval_with(z.as_ref(), &b, true, false) + next_mu * nuclear;
            if f < best.as_ref().map_or(self.prev_obj, |b| b.2) {
                best = Some((z, b, f, nuclear));
            }
        }
        match best {
            Some((z, b, f, nuclear)) => {
                self.prev_obj = f;
                self.nuclear = nuclear;
                let z_k = std::mem::replace(&mut st.z, z);
                let b_k = std::mem::replace(&mut st.bias, b);
                self.path_prev = Some((z_k, b_k, done_mu));
                // plain FPC steps from the cached gradient: cache it at the new start
                if !self.params.accelerate {
                    self.eval_with(st.z.as_ref(), &st.bias, false, true);
                }
            }
            // (the candidates' loss-only evaluations left the gradient cached at Z_k alone)
            None => self.path_prev = Some((st.z.clone(), st.bias.clone(), done_mu)),
        }
        Ok(())
    }

    /// A plain FPC step from the iterate (the gradient there was cached by its evaluation):
    /// the proximal step's result becomes the iterate. Returns F_μ there and its relative
    /// change.
    fn plain_step(
        &mut self,
        st: &mut TransductionState,
        mu: f64,
        it: usize,
    ) -> Result<(f64, f64), SolverError> {
        // plain FPC: the gradient at the iterate was cached by its evaluation
        let Candidate {
            z,
            bias,
            objective: f,
            rank,
            nuclear,
        } = self.prox_step(st.z.as_ref(), &st.bias, mu, it)?;
        self.rank = rank;
        self.nuclear = nuclear;
        self.spare = Some(std::mem::replace(&mut st.z, z));
        st.bias = bias;
        let rel = (self.prev_obj - f).abs() / self.prev_obj.abs().max(f64::MIN_POSITIVE);
        Ok((f, rel))
    }

    /// An MFISTA step: the candidate from the extrapolated point of `mom`, kept only if it is
    /// better (or, from the iterate itself, as plain FPC keeps it), then the next extrapolated
    /// point, or the iterate itself after a restart. Returns F_μ of the iterate, the relative
    /// change and whether the momentum was dropped.
    fn accelerated_step(
        &mut self,
        st: &mut TransductionState,
        mom: Momentum,
        mu: f64,
        it: usize,
    ) -> Result<(f64, f64, bool), SolverError> {
        // MFISTA: candidate from the extrapolated point, kept only if it is better
        let Momentum {
            yz: mut y,
            mut yb,
            t,
        } = mom;
        let t_next = 0.5 * (1.0 + (1.0 + 4.0 * t * t).sqrt());
        let c2 = (t - 1.0) / t_next;
        // with a dense feature block, the restart product and the next extrapolation
        // come out of the candidate's own pass (written over y; see
        // `accelerated_candidate`)
        let (candidate, fused_product) = if self.dense.is_some() {
            let (candidate, product) = self.accelerated_candidate(
                y.as_mut(),
                &mut yb,
                (st.z.as_ref(), &st.bias),
                mu,
                it,
                c2,
            )?;
            (candidate, Some(product))
        } else {
            (self.prox_step(y.as_ref(), &yb, mu, it)?, None)
        };
        let Candidate {
            z: cz,
            bias: cb,
            objective: fc,
            rank,
            nuclear,
        } = candidate;
        self.rank = rank;
        // t = 1: y is the iterate itself (a stage start or a restart), so the candidate
        // is the plain FPC step. A rejected plain step ends the stage when it changes F
        // by less than the tolerance (the iterate is stationary up to rounding); a larger
        // increase (MC-1's reset is not a proximal step) is taken as plain FPC takes it.
        // Rejecting it would only repeat the same step until `max_stage_iters`.
        let from_iterate = t <= 1.0;
        let change = (self.prev_obj - fc).abs() / self.prev_obj.abs().max(f64::MIN_POSITIVE);
        let accepted = fc <= self.prev_obj || (from_iterate && change >= self.params.tol);
        // adaptive restart (O'Donoghue & Candès 2015): momentum is dropped (t = 1, y =
        // the iterate) when the candidate is rejected (function scheme) or when the
        // step from y to the candidate points against the last change of the iterate,
        // ⟨y − z_{k+1}, z_{k+1} − x_k⟩ > 0 (gradient scheme). (Restarts alone did not
        // end the 1,000-step spins on yeast; the plain-step rule above did.)
        //
        // y = x_{k+1} + ((t_k − 1)/t_{k+1})(x_{k+1} − x_k) with x_{k+1} = z_{k+1} (the
        // candidate, accepted); MFISTA's term in z_{k+1} − x_{k+1} vanishes because a
        // rejected candidate restarts. Written into y's buffer, in the same pass as the
        // restart test; a restart (rare) then redoes it with coefficient 0.
        let restart = if accepted {
            let product = match fused_product {
                Some(product) => product,
                None => restart_product_extrapolate(
                    y.as_mut(),
                    &mut yb,
                    (cz.as_ref(), &cb),
                    (st.z.as_ref(), &st.bias),
                    c2,
                ),
            };
            if product > 0.0 {
                add_scaled_diff(y.as_mut(), cz.as_ref(), 0.0, cz.as_ref(), st.z.as_ref());
                for ((v, &c), &p) in yb.iter_mut().zip(&cb).zip(&st.bias) {
                    *v = c + 0.0 * (c - p);
                }
            }
            self.spare = Some(std::mem::replace(&mut st.z, cz));
            st.bias = cb;
            self.nuclear = nuclear;
            product > 0.0
        } else {
            self.spare = Some(cz);
            true
        };
        let t_next = if restart { 1.0 } else { t_next };
        if !accepted {
            y.copy_from(st.z.as_ref());
            yb.copy_from_slice(&st.bias);
        }
        self.momentum = Some(Momentum {
            yz: y,
            yb,
            t: t_next,
        });
        let rel = if accepted || from_iterate {
            change
        } else {
            f64::INFINITY
        };
        Ok((if accepted { fc } else { self.prev_obj }, rel, restart))
    }

    /// Ends the μ stage when the step with objective `f` and relative change `rel` met the
    /// tolerance or used up the stage's steps: the iterate is recorded at a grid point and the
    /// next stage starts (re-priced at its μ, the secant start, the momentum restarted).
    /// Pushes `stage_end` to `extras`; returns whether the schedule is done.
    fn end_stage(
        &mut self,
        st: &mut TransductionState,
        f: f64,
        rel: f64,
        extras: &mut Vec<(&'static str, f64)>,
    ) -> Result<bool, SolverError> {
        let variant = self.params.variant;
        let tol_met = rel < self.params.tol;
        let stage_end = tol_met || self.stage_iters >= self.params.max_stage_iters;
        let mut converged = false;
        if stage_end {
            if let Some(&(mu, Some(_))) = self.schedule.get(self.stage) {
                st.solutions.push(TransductionSolution {
                    variant,
                    mu,
                    z: st.z.clone(),
                    bias: st.bias.clone(),
                    objective: f,
                    rank: self.rank,
                    iterations: self.stage_iters,
                    converged: tol_met,
                    n_labels: self.problem.n_labels(),
                    n_features: self.problem.n_features(),
                });
            }
            self.stage += 1;
            self.stage_iters = 0;
            converged = self.stage >= self.schedule.len();
            extras.push(("stage_end", 1.0));
            if !converged {
                // the objective of the current iterate at the next stage's μ (and the cached
                // gradient at the iterate, for plain FPC)
                let next_mu = self.mu();
                self.prev_obj = self.eval(st.z.as_ref(), &st.bias) + next_mu * self.nuclear;
                if self.params.secant_start {
                    self.secant_start(st, next_mu)?;
                }
                if let Some(mom) = self.momentum.as_mut() {
                    // restart the momentum at every stage
                    mom.yz = st.z.clone();
                    mom.yb = st.bias.clone();
                    mom.t = 1.0;
                }
            }
        } else {
            self.prev_obj = f;
            // (plain FPC: the cache already holds the gradient at the new iterate)
            extras.push(("stage_end", 0.0));
        }
        Ok(converged)
    }
}

impl IterativeSolver for TransductionFpc<'_> {
    type State = TransductionState;
    type Error = SolverError;

    fn name(&self) -> &'static str {
        "transduction-fpc"
    }

    fn init(&mut self, st: &mut TransductionState) -> Result<Option<Progress>, SolverError> {
        check_iterate(self.problem, self.params.variant, st.z.as_ref(), &st.bias)?;
        let sv = gimc_linalg::svd::singular_values(st.z.as_ref())?;
        self.rank = sv.iter().filter(|&&s| s > 0.0).count();
        let mu = self.mu();
        self.nuclear = sv.iter().sum::<f64>();
        let f = self.eval(st.z.as_ref(), &st.bias) + mu * self.nuclear;
        self.prev_obj = f;
        if self.params.accelerate {
            self.momentum = Some(Momentum {
                yz: st.z.clone(),
                yb: st.bias.clone(),
                t: 1.0,
            });
        }
        let mut p = Progress::new(f, false);
        p.extras = vec![("mu", mu), ("stage", 0.0), ("rank", self.rank as f64)];
        Ok(Some(p))
    }

    fn step(
        &mut self,
        st: &mut TransductionState,
        it: usize,
    ) -> Result<Option<Progress>, SolverError> {
        let mu = self.mu();
        let (f, rel, restarted) = match self.momentum.take() {
            None => {
                let (f, rel) = self.plain_step(st, mu, it)?;
                (f, rel, false)
            }
            Some(mom) => self.accelerated_step(st, mom, mu, it)?,
        };
        self.stage_iters += 1;
        let mut extras = vec![
            ("mu", mu),
            ("stage", self.stage as f64),
            ("rank", self.rank as f64),
            ("rel_change", rel),
            ("restart", f64::from(u8::from(restarted))),
        ];
        let converged = self.end_stage(st, f, rel, &mut extras)?;
        Ok(Some(Progress {
            objective: f,
            extras,
            converged,
        }))
    }
}
