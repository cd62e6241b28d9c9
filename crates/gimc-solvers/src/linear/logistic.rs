//! L2-regularised logistic regression (DESIGN §3.2 baselines): min_w ½‖w‖² + C Σ_i
//! log(1 + exp(−y_i wᵀx_i)), by Newton's method with the Newton system solved inexactly by CG
//! (Hessian–vector products v + C Xᵀ(D ∘ Xv), D_ii = σ_i(1 − σ_i), never forming the d × d
//! Hessian) and an Armijo backtracking line search, so the objective decreases at every
//! iteration. Binary and one-vs-rest. A bias is a constant feature with a regularised weight,
//! as in LIBLINEAR.

use gimc_linalg::FeatureMatrix;
use gimc_linalg::cg::{CgParams, FnOperator, conjugate_gradient};
use gimc_linalg::faer;
use gimc_linalg::faer::{Mat, MatMut, MatRef};

use super::{BinaryData, ClassData, LinearClassifier, fit_classes};
use crate::SolverError;
use crate::error::{check_pos, param_err};
use crate::iter::{IterativeSolver, Observer, Progress, run};

gimc_linalg::params! {
    /// Hyper-parameters of logistic regression. Start from [`LogisticParams::default`] and the
    /// `with_*` methods; [`LogisticParams::check`] validates them into the [`ValidLogisticParams`]
    /// that [`fit_logistic`], [`fit_logistic_binary`] and [`LogisticNewton::new`] take.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct LogisticParams => ValidLogisticParams {
        /// Cost C > 0 on the summed log-loss. Default 1.
        pub c: f64 = 1.0 => with_c,
        /// Value of the constant feature (its weight is the bias), `None` for no bias. Default
        /// `Some(1.0)`.
        pub bias: Option<f64> = Some(1.0) => with_bias,
        /// Stop when ‖∇f(w)‖ ≤ tol·‖∇f(0)‖. Default 1e-6.
        pub tol: f64 = 1e-6 => with_tol,
        /// Maximum Newton iterations. Default 100.
        pub max_iter: usize = 100 => with_max_iter,
        /// CG iteration cap per Newton step. Default 100.
        pub max_cg: usize = 100 => with_max_cg,
    }
    /// Checks C > 0, tol > 0, a finite bias, max_iter ≥ 1, max_cg ≥ 1.
    check |this| -> crate::SolverError {
        check_pos("c", this.c)?;
        check_pos("tol", this.tol)?;
        if let Some(b) = this.bias
            && !b.is_finite()
        {
            return Err(param_err("bias", format!("must be finite, got {b}")));
        }
        if this.max_iter == 0 || this.max_cg == 0 {
            return Err(param_err("max_iter", "iteration caps must be >= 1"));
        }
    }
}

/// log(1 + exp(−m)), computed without overflow.
fn log1p_exp_neg(m: f64) -> f64 {
    if m > 0.0 {
        (-m).exp().ln_1p()
    } else {
        -m + m.exp().ln_1p()
    }
}

/// 1 / (1 + exp(−m)).
fn sigmoid(m: f64) -> f64 {
    if m >= 0.0 {
        1.0 / (1.0 + (-m).exp())
    } else {
        let e = m.exp();
        e / (1.0 + e)
    }
}

/// Newton-CG for one binary problem, in the [`IterativeSolver`] shape (state: w with the bias
/// weight last). Extras: `grad_norm`, `cg_iters`, `step`.
#[derive(Debug)]
pub struct LogisticNewton<'a> {
    x: &'a FeatureMatrix,
    y: Vec<f64>,
    params: ValidLogisticParams,
    g0: f64,
}

impl<'a> LogisticNewton<'a> {
    /// A solver for features `x` and labels `y` (true = positive).
    pub fn new(
        x: &'a FeatureMatrix,
        y: &[bool],
        params: ValidLogisticParams,
    ) -> Result<Self, SolverError> {
        let n = x.nrows();
        super::check_binary_labels(n, y.len())?;
        crate::Side::Features(x).check_finite("features")?;
        Ok(Self {
            x,
            y: y.iter().map(|&p| if p { 1.0 } else { -1.0 }).collect(),
            params,
            g0: 0.0,
        })
    }

    /// Number of weights (d, plus one with a bias).
    pub fn n_weights(&self) -> usize {
        self.x.ncols() + usize::from(self.params.bias.is_some())
    }

    /// Margins z = Xw (+ bias·w_b).
    fn margins(&self, w: MatRef<'_, f64>) -> Result<Vec<f64>, SolverError> {
        let d = self.x.ncols();
        let z = self.x.mul_dense(w.subrows(0, d))?;
        let b = self.params.bias.map_or(0.0, |b| b * w[(d, 0)]);
        Ok((0..z.nrows()).map(|i| z[(i, 0)] + b).collect())
    }

    /// Xᵀ v (+ the bias row Σ bias·v_i).
    fn tr_apply(&self, v: &[f64]) -> Result<Mat<f64>, SolverError> {
        let d = self.x.ncols();
        let vm = MatRef::from_column_major_slice(v, v.len(), 1);
        let g = self.x.tr_mul_dense(vm)?;
        let mut out = Mat::<f64>::zeros(self.n_weights(), 1);
        out.as_mut().subrows_mut(0, d).copy_from(&g);
        if let Some(b) = self.params.bias {
            out[(d, 0)] = b * v.iter().sum::<f64>();
        }
        Ok(out)
    }

    fn objective_at(&self, w: MatRef<'_, f64>) -> Result<(f64, Vec<f64>), SolverError> {
        let z = self.margins(w)?;
        // log1p/exp per margin after the product that formed them (gimc_linalg::simd)
        gimc_linalg::simd::clear_upper_state();
        let loss: f64 = z
            .iter()
            .zip(&self.y)
            .map(|(z, y)| log1p_exp_neg(y * z))
            .sum();
        Ok((0.5 * w.squared_norm_l2() + self.params.c * loss, z))
    }

    fn gradient(&self, w: MatRef<'_, f64>, z: &[f64]) -> Result<Mat<f64>, SolverError> {
        // ∇ = w + C Σ (σ(y z) − 1) y x
        gimc_linalg::simd::clear_upper_state();
        let v: Vec<f64> = z
            .iter()
            .zip(&self.y)
            .map(|(z, y)| self.params.c * (sigmoid(y * z) - 1.0) * y)
            .collect();
        Ok(self.tr_apply(&v)? + w)
    }
}

impl IterativeSolver for LogisticNewton<'_> {
    type State = Mat<f64>;
    type Error = SolverError;

    fn name(&self) -> &'static str {
        "logistic-newton-cg"
    }

    fn init(&mut self, w: &mut Mat<f64>) -> Result<Option<Progress>, SolverError> {
        let (f, _) = self.objective_at(w.as_ref())?;
        let zero = Mat::<f64>::zeros(self.n_weights(), 1);
        let z0 = vec![0.0; self.y.len()];
        self.g0 = self.gradient(zero.as_ref(), &z0)?.norm_l2();
        Ok(Some(Progress::new(f, false)))
    }

    fn step(&mut self, w: &mut Mat<f64>, it: usize) -> Result<Option<Progress>, SolverError> {
        let (f, z) = self.objective_at(w.as_ref())?;
        let g = self.gradient(w.as_ref(), &z)?;
        let gnorm = g.norm_l2();
        if gnorm <= self.params.tol * self.g0.max(f64::MIN_POSITIVE) {
            let mut p = Progress::new(f, true);
            p.extras = vec![("grad_norm", gnorm), ("cg_iters", 0.0), ("step", 0.0)];
            return Ok(Some(p));
        }
        gimc_linalg::simd::clear_upper_state();
        let dvec: Vec<f64> = z
            .iter()
            .zip(&self.y)
            .map(|(z, y)| {
                let s = sigmoid(y * z);
                self.params.c * s * (1.0 - s)
            })
            .collect();
        let dim = self.n_weights();
        let hess = FnOperator::new(dim, 1, |v: MatRef<'_, f64>, mut out: MatMut<'_, f64>| {
            let res = self.margins(v).and_then(|xv| {
                let dxv: Vec<f64> = xv.iter().zip(&dvec).map(|(a, b)| a * b).collect();
                self.tr_apply(&dxv)
            });
            match res {
                Ok(h) => {
                    out.copy_from(&h);
                    out += v;
                }
                Err(_) => out.fill(f64::NAN),
            }
        });
        let mut s = Mat::<f64>::zeros(dim, 1);
        let neg_g = &g * faer::Scale(-1.0);
        let cg = CgParams::default()
            .with_tol((0.1f64).min(gnorm.sqrt()))
            .with_max_iter(self.params.max_cg)
            .check()?;
        let rep = conjugate_gradient(&hess, neg_g.as_ref(), s.as_mut(), &cg)?;
        // Armijo backtracking: f(w + t s) ≤ f(w) + 1e-4 t ∇ᵀs
        let slope = gimc_linalg::dense::frob_dot(g.as_ref(), s.as_ref())?;
        let mut t = 1.0;
        let mut accepted = None;
        for _ in 0..40 {
            let trial = &*w + &s * faer::Scale(t);
            let (ft, _) = self.objective_at(trial.as_ref())?;
            if ft.is_finite() && ft <= f + 1e-4 * t * slope {
                accepted = Some((trial, ft));
                break;
            }
            t *= 0.5;
        }
        let Some((trial, ft)) = accepted else {
            // no decrease possible at machine precision: we are at the optimum
            let mut p = Progress::new(f, true);
            p.extras = vec![("grad_norm", gnorm), ("cg_iters", rep.iterations as f64)];
            return Ok(Some(p));
        };
        if !ft.is_finite() {
            return Err(SolverError::NonFinite {
                solver: "logistic-newton-cg",
                what: "objective",
                iteration: it,
            });
        }
        *w = trial;
        Ok(Some(Progress {
            objective: ft,
            extras: vec![
                ("grad_norm", gnorm),
                ("cg_iters", rep.iterations as f64),
                ("step", t),
            ],
            converged: false,
        }))
    }
}

fn binary_model(
    x: &FeatureMatrix,
    y: &[bool],
    params: &ValidLogisticParams,
    observer: &mut (impl Observer + ?Sized),
) -> Result<(Vec<f64>, f64, Vec<f64>), SolverError> {
    let mut solver = LogisticNewton::new(x, y, *params)?;
    let mut w = Mat::<f64>::zeros(solver.n_weights(), 1);
    let report = run(&mut solver, &mut w, params.max_iter, observer)?;
    let d = x.ncols();
    let bias = params.bias.map_or(0.0, |b| b * w[(d, 0)]);
    Ok((
        (0..d).map(|i| w[(i, 0)]).collect(),
        bias,
        report.objective_trace,
    ))
}

/// Binary L2 logistic regression on `data` (`y[i]` true for the positive class, predicted as
/// class 1).
pub fn fit_logistic_binary(
    data: BinaryData<'_>,
    params: &ValidLogisticParams,
    observer: &mut impl Observer,
) -> Result<LinearClassifier, SolverError> {
    Ok(LinearClassifier::binary(binary_model(
        data.x, data.y, params, observer,
    )?))
}

/// Multi-class L2 logistic regression on `data`, one-vs-rest (records tagged `("class", c)`);
/// with `n_classes = 2` a single binary model (class 1 positive). Deterministic (no random
/// draws).
pub fn fit_logistic(
    data: ClassData<'_>,
    params: &ValidLogisticParams,
    observer: &mut impl Observer,
) -> Result<LinearClassifier, SolverError> {
    fit_classes(data, observer, |_, y, observer| {
        binary_model(data.x, y, params, observer)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::refused;

    #[test]
    fn check_refuses_each_bad_field() {
        let p = LogisticParams::default();
        assert!(p.check().is_ok());
        assert_eq!(refused(p.with_c(0.0).check()), "c");
        assert_eq!(refused(p.with_c(f64::NAN).check()), "c");
        assert_eq!(refused(p.with_tol(-1.0).check()), "tol");
        assert_eq!(refused(p.with_bias(Some(f64::INFINITY)).check()), "bias");
        assert_eq!(refused(p.with_max_iter(0).check()), "max_iter");
        assert_eq!(refused(p.with_max_cg(0).check()), "max_iter");
        assert!(p.with_bias(None).check().is_ok());
    }

    #[test]
    fn stable_scalar_functions() {
        assert!((log1p_exp_neg(0.0) - 2f64.ln()).abs() < 1e-15);
        assert!(log1p_exp_neg(800.0) >= 0.0 && log1p_exp_neg(800.0) < 1e-300);
        assert!((log1p_exp_neg(-800.0) - 800.0).abs() < 1e-9);
        assert!((sigmoid(0.0) - 0.5).abs() < 1e-15);
        assert!(sigmoid(-800.0) >= 0.0 && sigmoid(800.0) <= 1.0);
    }
}
