//! L2-regularised linear SVM by dual coordinate descent (Hsieh, Chang, Lin, Keerthi &
//! Sundararajan 2008; the LIBLINEAR solver), DESIGN §3.2 baselines and §3.5 FPC+SVM.
//!
//! Primal: min_w ½‖w‖² + C Σ_i ξ(1 − y_i wᵀx_i) with ξ(m) = max(0, m) (hinge) or max(0, m)²
//! (squared hinge). Dual: min_α ½ αᵀQ̄α − 1ᵀα, 0 ≤ α_i ≤ U, Q̄ = Q + D, Q_ij = y_i y_j x_iᵀx_j,
//! with U = C, D = 0 (hinge) or U = ∞, D_ii = 1/(2C) (squared hinge). Each epoch visits every
//! coordinate in a seeded random order and minimises the dual exactly along it, maintaining
//! w = Σ α_i y_i x_i, so the dual objective never increases. The run stops when the spread of
//! the projected gradient, max PG − min PG, falls below `eps` (LIBLINEAR's criterion). With
//! LIBLINEAR's shrinking, a coordinate at a bound whose gradient points outwards by more than
//! the previous epoch's extreme projected gradient is set aside; when the active set meets the
//! criterion, every coordinate is restored and the run continues until the whole problem meets
//! it, so shrinking changes the work per epoch, never the stopping point's accuracy. With a bias, every x is augmented by a constant feature `bias` whose weight is
//! regularised like the others (as LIBLINEAR does).

use gimc_linalg::FeatureMatrix;
use gimc_linalg::faer;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::GimcRng;
use rand::seq::SliceRandom;

use super::{BinaryData, ClassData, LinearClassifier, Rows, fit_classes};
use crate::SolverError;
use crate::error::{check_pos, param_err};
use crate::iter::{IterativeSolver, Observer, Progress, run};

/// The loss of the linear SVM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SvmLoss {
    /// max(0, 1 − y wᵀx).
    Hinge,
    /// max(0, 1 − y wᵀx)² (LIBLINEAR's default).
    #[default]
    SquaredHinge,
}

gimc_linalg::params! {
    /// Hyper-parameters of the linear SVM. Start from [`SvmParams::default`] and the `with_*`
    /// methods; [`SvmParams::check`] validates them into the [`ValidSvmParams`] that
    /// [`fit_linear_svm`], [`fit_linear_svm_binary`] and [`SvmDualCd::new`] take.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct SvmParams => ValidSvmParams {
        /// Cost C > 0. Default 1.
        pub c: f64 = 1.0 => with_c,
        /// Loss. Default [`SvmLoss::SquaredHinge`].
        pub loss: SvmLoss = SvmLoss::SquaredHinge => with_loss,
        /// Value of the constant feature appended to every row (its weight is the bias), `None` for
        /// no bias. Default `Some(1.0)`.
        pub bias: Option<f64> = Some(1.0) => with_bias,
        /// Stop when max PG − min PG ≤ eps. Default 0.1 (LIBLINEAR).
        pub eps: f64 = 0.1 => with_eps,
        /// Maximum epochs. Default 1,000.
        pub max_epochs: usize = 1000 => with_max_epochs,
    }
    /// Checks C > 0, eps > 0, a finite bias and max_epochs ≥ 1.
    check |this| -> crate::SolverError {
        check_pos("c", this.c)?;
        check_pos("eps", this.eps)?;
        if let Some(b) = this.bias
            && !b.is_finite()
        {
            return Err(param_err("bias", format!("must be finite, got {b}")));
        }
        if this.max_epochs == 0 {
            return Err(param_err("max_epochs", "must be >= 1"));
        }
    }
}

/// The state of [`SvmDualCd`]: dual variables and the primal weights w = Σ α_i y_i x_i (the
/// bias weight last when a bias is used).
#[derive(Debug, Clone, PartialEq)]
pub struct SvmState {
    /// α (length n).
    pub alpha: Vec<f64>,
    /// w (length d, or d + 1 with a bias).
    pub w: Vec<f64>,
}

/// Dual coordinate descent for one binary problem, in the [`IterativeSolver`] shape (one step =
/// one epoch). The objective is the dual objective; extras: `pg_gap`, `active` (coordinates not
/// shrunk) and, at convergence, the `primal` objective.
#[derive(Debug)]
pub struct SvmDualCd<'a> {
    rows: Rows<'a>,
    y: Vec<f64>,
    d: usize,
    params: ValidSvmParams,
    qd: Vec<f64>,
    /// Coordinates in visiting order; the first `active` are not shrunk.
    order: Vec<usize>,
    active: usize,
    /// The previous epoch's max / min projected gradient (±∞ after a restore), the shrinking
    /// thresholds.
    pg_max_old: f64,
    pg_min_old: f64,
    rng: GimcRng,
}

impl<'a> SvmDualCd<'a> {
    /// A solver for features `x` and labels `y` (true = positive class); shuffles with a stream
    /// derived from `rng`.
    pub fn new(
        x: &'a FeatureMatrix,
        y: &[bool],
        params: ValidSvmParams,
        rng: &mut GimcRng,
    ) -> Result<Self, SolverError> {
        let n = x.nrows();
        super::check_binary_labels(n, y.len())?;
        crate::Side::Features(x).check_finite("features")?;
        let rows = Rows::new(x);
        let dii = match params.loss {
            SvmLoss::Hinge => 0.0,
            SvmLoss::SquaredHinge => 0.5 / params.c,
        };
        let b2 = params.bias.map_or(0.0, |b| b * b);
        let qd = (0..n).map(|i| rows.sq_norm(i) + b2 + dii).collect();
        Ok(Self {
            rows,
            y: y.iter().map(|&p| if p { 1.0 } else { -1.0 }).collect(),
            d: x.ncols(),
            params,
            qd,
            order: (0..n).collect(),
            active: n,
            pg_max_old: f64::INFINITY,
            pg_min_old: f64::NEG_INFINITY,
            rng: gimc_linalg::rng::child(rng, 0x53564d),
        })
    }

    /// A zero start (α = 0, w = 0).
    pub fn zero_state(&self) -> SvmState {
        SvmState {
            alpha: vec![0.0; self.y.len()],
            w: vec![0.0; self.d + usize::from(self.params.bias.is_some())],
        }
    }

    fn dii(&self) -> f64 {
        match self.params.loss {
            SvmLoss::Hinge => 0.0,
            SvmLoss::SquaredHinge => 0.5 / self.params.c,
        }
    }

    fn upper(&self) -> f64 {
        match self.params.loss {
            SvmLoss::Hinge => self.params.c,
            SvmLoss::SquaredHinge => f64::INFINITY,
        }
    }

    fn margin(&self, i: usize, w: &[f64]) -> f64 {
        let mut s = self.rows.dot(i, w);
        if let Some(b) = self.params.bias {
            s += b * w[self.d];
        }
        s
    }

    /// Dual objective ½‖w‖² + ½ Σ D_ii α_i² − Σ α_i.
    fn dual(&self, st: &SvmState) -> f64 {
        let dii = self.dii();
        0.5 * st.w.iter().map(|v| v * v).sum::<f64>()
            + st.alpha.iter().map(|a| 0.5 * dii * a * a - a).sum::<f64>()
    }

    /// Primal objective ½‖w‖² + C Σ ξ_i.
    fn primal(&self, w: &[f64]) -> f64 {
        let loss: f64 = (0..self.y.len())
            .map(|i| {
                let m = (1.0 - self.y[i] * self.margin(i, w)).max(0.0);
                match self.params.loss {
                    SvmLoss::Hinge => m,
                    SvmLoss::SquaredHinge => m * m,
                }
            })
            .sum();
        0.5 * w.iter().map(|v| v * v).sum::<f64>() + self.params.c * loss
    }
}

impl IterativeSolver for SvmDualCd<'_> {
    type State = SvmState;
    type Error = SolverError;

    fn name(&self) -> &'static str {
        "linear-svm-dcd"
    }

    fn init(&mut self, st: &mut SvmState) -> Result<Option<Progress>, SolverError> {
        let mut p = Progress::new(self.dual(st), false);
        p.extras = vec![("primal", self.primal(&st.w))];
        Ok(Some(p))
    }

    fn step(&mut self, st: &mut SvmState, _it: usize) -> Result<Option<Progress>, SolverError> {
        let (dii, upper) = (self.dii(), self.upper());
        let n = self.order.len();
        self.order[..self.active].shuffle(&mut self.rng);
        let (mut pg_max, mut pg_min) = (f64::NEG_INFINITY, f64::INFINITY);
        let mut s = 0;
        while s < self.active {
            let i = self.order[s];
            let yi = self.y[i];
            let g = yi * self.margin(i, &st.w) - 1.0 + dii * st.alpha[i];
            let a = st.alpha[i];
            // Shrinking (LIBLINEAR): at a bound with the gradient pointing out of the feasible
            // set beyond last epoch's extreme, the coordinate is very likely to stay there.
            let pg = if a == 0.0 {
                if g > self.pg_max_old {
                    self.active -= 1;
                    self.order.swap(s, self.active);
                    continue;
                }
                g.min(0.0)
            } else if a == upper {
                if g < self.pg_min_old {
                    self.active -= 1;
                    self.order.swap(s, self.active);
                    continue;
                }
                g.max(0.0)
            } else {
                g
            };
            pg_max = pg_max.max(pg);
            pg_min = pg_min.min(pg);
            if pg.abs() > 1e-12 {
                let new = (a - g / self.qd[i]).clamp(0.0, upper);
                let delta = (new - a) * yi;
                st.alpha[i] = new;
                self.rows.axpy(i, delta, &mut st.w);
                if let Some(b) = self.params.bias {
                    st.w[self.d] += delta * b;
                }
            }
            s += 1;
        }
        let gap = if self.active == 0 {
            0.0
        } else {
            pg_max - pg_min
        };
        let mut converged = false;
        if gap <= self.params.eps {
            if self.active == n {
                converged = true;
            } else {
                // the shrunk problem is solved: restore every coordinate and check them all
                self.active = n;
                self.pg_max_old = f64::INFINITY;
                self.pg_min_old = f64::NEG_INFINITY;
            }
        } else {
            self.pg_max_old = if pg_max <= 0.0 { f64::INFINITY } else { pg_max };
            self.pg_min_old = if pg_min >= 0.0 {
                f64::NEG_INFINITY
            } else {
                pg_min
            };
        }
        // The primal objective costs a pass over the data: computed only at convergence.
        let mut extras = vec![("pg_gap", gap), ("active", self.active as f64)];
        if converged {
            extras.push(("primal", self.primal(&st.w)));
        }
        Ok(Some(Progress {
            objective: self.dual(st),
            extras,
            converged,
        }))
    }
}

fn binary_model(
    x: &FeatureMatrix,
    y: &[bool],
    params: &ValidSvmParams,
    rng: &mut GimcRng,
    observer: &mut (impl Observer + ?Sized),
) -> Result<(Vec<f64>, f64, Vec<f64>), SolverError> {
    let mut solver = SvmDualCd::new(x, y, *params, rng)?;
    let mut st = solver.zero_state();
    let report = run(&mut solver, &mut st, params.max_epochs, observer)?;
    let d = x.ncols();
    let bias = params.bias.map_or(0.0, |b| b * st.w[d]);
    st.w.truncate(d);
    Ok((st.w, bias, report.objective_trace))
}

/// The settings of [`l2svm_primal_newton`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewtonSvmParams {
    /// The cost C > 0.
    pub c: f64,
    /// The value of the constant feature appended for the bias (`None`: no bias).
    pub bias: Option<f64>,
    /// Stop when ‖∇f‖ ≤ `tol`·‖∇f(0)‖.
    pub tol: f64,
    /// The cap on Newton steps.
    pub max_iter: usize,
}

/// The squared-hinge (L2-loss) SVM primal min_w ½‖w‖² + C Σ_i max(0, 1 − y_i wᵀx̃_i)² — the
/// same problem [`SvmDualCd`] solves in the dual, x̃ = [x, bias] — by the generalised Newton
/// method of Keerthi & DeCoste (2005) with Armijo backtracking, for dense features with few
/// columns. With I the rows inside the margin, the gradient is w − 2C X̃_Iᵀ(y_I ∘ (1 − y_I ∘
/// X̃_I w)) and the (generalised) Hessian I + 2C X̃_IᵀX̃_I, so a step costs O(|I|·p²) with p the
/// augmented dimension, and the method converges in a handful of steps whatever C is — where the
/// dual's coordinate descent slows down as C grows (its diagonal 1/(2C) vanishes).
///
/// `w0` (length p) warm-starts the run (e.g. the solution at the previous C of a path). Stops
/// when ‖∇f‖ ≤ `params.tol`·‖∇f(0)‖ or after `params.max_iter` steps. Returns w (length p).
pub fn l2svm_primal_newton(
    x: faer::MatRef<'_, f64>,
    y: &[bool],
    params: &NewtonSvmParams,
    w0: Option<&[f64]>,
) -> Result<Vec<f64>, SolverError> {
    use gimc_linalg::dense::{gram_tn, matmul, matmul_tn};
    let NewtonSvmParams {
        c,
        bias,
        tol,
        max_iter,
    } = *params;
    let (n, d) = x.shape();
    super::check_binary_labels(n, y.len())?;
    check_pos("c", c)?;
    let p = d + usize::from(bias.is_some());
    // X̃ with the signs folded in: row i is y_i x̃_i, so margins are X̃w and the loss 1 − X̃w.
    let z = Mat::from_fn(n, p, |i, j| {
        let sign = if y[i] { 1.0 } else { -1.0 };
        sign * if j < d {
            x[(i, j)]
        } else {
            bias.unwrap_or(0.0)
        }
    });
    crate::error::check_finite_mat("features", z.as_ref())?;
    let mut w = match w0 {
        Some(w0) if w0.len() == p => Mat::from_fn(p, 1, |i, _| w0[i]),
        Some(w0) => {
            return Err(crate::error::dim_err(
                "warm start",
                format!("{p} weights"),
                format!("{}", w0.len()),
            ));
        }
        None => Mat::zeros(p, 1),
    };
    // objective and the slacks 1 − z_i·w
    let eval = |w: &Mat<f64>| -> Result<(f64, Vec<f64>), SolverError> {
        let m = matmul(z.as_ref(), w.as_ref())?;
        let slack: Vec<f64> = (0..n).map(|i| 1.0 - m[(i, 0)]).collect();
        let loss: f64 = slack
            .iter()
            .map(|&s| if s > 0.0 { s * s } else { 0.0 })
            .sum();
        Ok((0.5 * w.squared_norm_l2() + c * loss, slack))
    };
    // ∇f(0) = −2C Σ z_i: the scale of the stopping test
    let g0 = (0..p)
        .map(|j| (0..n).map(|i| z[(i, j)]).sum::<f64>() * 2.0 * c)
        .map(|v| v * v)
        .sum::<f64>()
        .sqrt();
    let (mut f, mut slack) = eval(&w)?;
    for _ in 0..max_iter {
        let active: Vec<usize> = (0..n).filter(|&i| slack[i] > 0.0).collect();
        let za = Mat::from_fn(active.len(), p, |r, j| z[(active[r], j)]);
        let sa = Mat::from_fn(active.len(), 1, |r, _| slack[active[r]]);
        // ∇f = w − 2C Z_Iᵀ s_I
        let zs = matmul_tn(za.as_ref(), sa.as_ref())?;
        let grad = Mat::from_fn(p, 1, |j, _| w[(j, 0)] - 2.0 * c * zs[(j, 0)]);
        let gnorm = grad.norm_l2();
        if !gnorm.is_finite() {
            return Err(SolverError::NonFinite {
                solver: "l2svm-newton",
                what: "gradient",
                iteration: 0,
            });
        }
        if gnorm <= tol * g0.max(f64::MIN_POSITIVE) {
            break;
        }
        // H = I + 2C Z_IᵀZ_I; the Newton direction solves H·dir = −∇f
        let mut h = gram_tn(za.as_ref());
        for i in 0..p {
            for j in 0..p {
                h[(i, j)] *= 2.0 * c;
            }
            h[(i, i)] += 1.0;
        }
        let neg = Mat::from_fn(p, 1, |j, _| -grad[(j, 0)]);
        let dir = gimc_linalg::cholesky_solve(h.as_ref(), neg.as_ref())?;
        // directional derivative ∇f·dir (< 0: H is positive definite)
        let slope: f64 = (0..p).map(|j| grad[(j, 0)] * dir[(j, 0)]).sum();
        // Armijo backtracking on the piecewise-quadratic objective (full steps are the rule)
        let mut t = 1.0;
        let mut accepted = false;
        for _ in 0..40 {
            let trial = Mat::from_fn(p, 1, |j, _| w[(j, 0)] + t * dir[(j, 0)]);
            let (ft, st) = eval(&trial)?;
            if ft <= f + 1e-4 * t * slope {
                w = trial;
                f = ft;
                slack = st;
                accepted = true;
                break;
            }
            t *= 0.5;
        }
        if !accepted {
            break;
        }
    }
    Ok((0..p).map(|j| w[(j, 0)]).collect())
}

/// A binary linear SVM on `data` (`y[i]` true for the positive class, predicted as class 1).
pub fn fit_linear_svm_binary(
    data: BinaryData<'_>,
    params: &ValidSvmParams,
    rng: &mut GimcRng,
    observer: &mut impl Observer,
) -> Result<LinearClassifier, SolverError> {
    Ok(LinearClassifier::binary(binary_model(
        data.x, data.y, params, rng, observer,
    )?))
}

/// A multi-class linear SVM on `data`, one-vs-rest (one binary SVM per class, run in class
/// order; the observer sees every run, each record tagged with the extra `("class", c)`). With
/// `n_classes = 2` a single binary SVM is fitted (class 1 positive).
pub fn fit_linear_svm(
    data: ClassData<'_>,
    params: &ValidSvmParams,
    rng: &mut GimcRng,
    observer: &mut impl Observer,
) -> Result<LinearClassifier, SolverError> {
    fit_classes(data, observer, |class, y, observer| match class {
        None => binary_model(data.x, y, params, rng, observer),
        Some(c) => binary_model(
            data.x,
            y,
            params,
            &mut gimc_linalg::rng::child(rng, c as u64),
            observer,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::refused;

    #[test]
    fn check_refuses_each_bad_field() {
        let p = SvmParams::default();
        assert!(p.check().is_ok());
        assert_eq!(refused(p.with_c(0.0).check()), "c");
        assert_eq!(refused(p.with_c(f64::NAN).check()), "c");
        assert_eq!(refused(p.with_eps(-1.0).check()), "eps");
        assert_eq!(refused(p.with_bias(Some(f64::NAN)).check()), "bias");
        assert_eq!(refused(p.with_max_epochs(0).check()), "max_epochs");
        let hinge = p.with_loss(SvmLoss::Hinge).with_bias(None).check().unwrap();
        assert_eq!((hinge.loss, hinge.bias), (SvmLoss::Hinge, None));
    }
}
