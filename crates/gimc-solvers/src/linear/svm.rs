//! L2-regularised linear SVM by dual coordinate descent (Hsieh, Chang, Lin, Keerthi &
//! Sundararajan 2008; the LIBLINEAR solver), DESIGN §3.2 baselines and §3.5 FPC+SVM.
//!
//! Primal: min_w ½‖w‖² + C Σ_i ξ(1 − y_i wᵀx_i) with ξ(m) = max(0, m) (hinge) or max(0, m)²
//! (squared hinge). Dual: min_α ½ αᵀQ̄α − 1ᵀα, 0 ≤ α_i ≤ U, Q̄ = Q + D, Q_ij = y_i y_j x_iᵀx_j,
//! with U = C, D = 0 (hinge) or U = ∞, D_ii = 1/(2C) (squared hinge). Each epoch visits every
//! coordinate in a seeded random order and minimises the dual exactly along it, maintaining
//! w = Σ α_i y_i x_i, so the dual objective never increases. The run stops when the spread of
//! the projected gradient, max PG − min PG, falls below `eps` (LIBLINEAR's criterion, without
//! shrinking). With a bias, every x is augmented by a constant feature `bias` whose weight is
//! regularised like the others (as LIBLINEAR does).

use faer::Mat;
use gimc_linalg::FeatureMatrix;
use gimc_linalg::rng::GimcRng;
use rand::seq::SliceRandom;

use super::{ClassTag, LinearClassifier, Rows, check_labels};
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

/// Hyper-parameters of the linear SVM.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SvmParams {
    /// Cost C > 0. Default 1.
    pub c: f64,
    /// Loss. Default [`SvmLoss::SquaredHinge`].
    pub loss: SvmLoss,
    /// Value of the constant feature appended to every row (its weight is the bias), `None` for
    /// no bias. Default `Some(1.0)`.
    pub bias: Option<f64>,
    /// Stop when max PG − min PG ≤ eps. Default 0.1 (LIBLINEAR).
    pub eps: f64,
    /// Maximum epochs. Default 1,000.
    pub max_epochs: usize,
}

impl Default for SvmParams {
    fn default() -> Self {
        Self {
            c: 1.0,
            loss: SvmLoss::SquaredHinge,
            bias: Some(1.0),
            eps: 0.1,
            max_epochs: 1000,
        }
    }
}

/// [`SvmParams`] that passed [`SvmParams::check`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValidSvmParams(SvmParams);

impl std::ops::Deref for ValidSvmParams {
    type Target = SvmParams;
    fn deref(&self) -> &SvmParams {
        &self.0
    }
}

impl SvmParams {
    /// Checks C > 0, eps > 0, a finite bias and max_epochs ≥ 1.
    pub fn check(&self) -> Result<ValidSvmParams, SolverError> {
        check_pos("c", self.c)?;
        check_pos("eps", self.eps)?;
        if let Some(b) = self.bias
            && !b.is_finite()
        {
            return Err(param_err("bias", format!("must be finite, got {b}")));
        }
        if self.max_epochs == 0 {
            return Err(param_err("max_epochs", "must be >= 1"));
        }
        Ok(ValidSvmParams(*self))
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
/// one epoch). The objective is the dual objective; extras: `primal` objective, `pg_gap`.
#[derive(Debug)]
pub struct SvmDualCd<'a> {
    rows: Rows<'a>,
    y: Vec<f64>,
    d: usize,
    params: ValidSvmParams,
    qd: Vec<f64>,
    order: Vec<usize>,
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
        if y.len() != n {
            return Err(crate::error::dim_err(
                "labels",
                format!("{n} labels"),
                format!("{}", y.len()),
            ));
        }
        if n == 0 {
            return Err(SolverError::Empty("training examples"));
        }
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

    fn name(&self) -> &'static str {
        "linear-svm-dcd"
    }

    fn init(&mut self, st: &mut SvmState) -> Result<Progress, SolverError> {
        let mut p = Progress::new(self.dual(st), false);
        p.extras = vec![("primal", self.primal(&st.w))];
        Ok(p)
    }

    fn step(&mut self, st: &mut SvmState, _it: usize) -> Result<Progress, SolverError> {
        let (dii, upper) = (self.dii(), self.upper());
        self.order.shuffle(&mut self.rng);
        let (mut pg_max, mut pg_min) = (f64::NEG_INFINITY, f64::INFINITY);
        for t in 0..self.order.len() {
            let i = self.order[t];
            let yi = self.y[i];
            let g = yi * self.margin(i, &st.w) - 1.0 + dii * st.alpha[i];
            let a = st.alpha[i];
            let pg = if a == 0.0 {
                g.min(0.0)
            } else if a == upper {
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
        }
        let gap = pg_max - pg_min;
        Ok(Progress {
            objective: self.dual(st),
            extras: vec![("primal", self.primal(&st.w)), ("pg_gap", gap)],
            converged: gap <= self.params.eps,
        })
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

/// A binary linear SVM; `y[i]` true for the positive class (predicted as class 1).
pub fn fit_linear_svm_binary(
    x: &FeatureMatrix,
    y: &[bool],
    params: &ValidSvmParams,
    rng: &mut GimcRng,
    observer: &mut impl Observer,
) -> Result<LinearClassifier, SolverError> {
    let (w, b, trace) = binary_model(x, y, params, rng, observer)?;
    Ok(LinearClassifier {
        w: Mat::from_fn(w.len(), 1, |i, _| w[i]),
        bias: vec![b],
        n_classes: 2,
        objective_traces: vec![trace],
    })
}

/// A multi-class linear SVM, one-vs-rest (one binary SVM per class, run in class order; the
/// observer sees every run, each record tagged with the extra `("class", c)`). With
/// `n_classes = 2` a single binary SVM is fitted (class 1 positive).
pub fn fit_linear_svm(
    x: &FeatureMatrix,
    labels: &[usize],
    n_classes: usize,
    params: &ValidSvmParams,
    rng: &mut GimcRng,
    observer: &mut impl Observer,
) -> Result<LinearClassifier, SolverError> {
    check_labels(labels, x.nrows(), n_classes)?;
    if n_classes == 2 {
        let y: Vec<bool> = labels.iter().map(|&l| l == 1).collect();
        return fit_linear_svm_binary(x, &y, params, rng, observer);
    }
    let d = x.ncols();
    let mut w = Mat::<f64>::zeros(d, n_classes);
    let mut bias = vec![0.0; n_classes];
    let mut traces = Vec::with_capacity(n_classes);
    for c in 0..n_classes {
        let y: Vec<bool> = labels.iter().map(|&l| l == c).collect();
        let mut tag = ClassTag {
            inner: observer,
            class: c,
        };
        let mut crng = gimc_linalg::rng::child(rng, c as u64);
        let (wc, bc, trace) = binary_model(x, &y, params, &mut crng, &mut tag)?;
        for (i, v) in wc.iter().enumerate() {
            w[(i, c)] = *v;
        }
        bias[c] = bc;
        traces.push(trace);
    }
    Ok(LinearClassifier {
        w,
        bias,
        n_classes,
        objective_traces: traces,
    })
}
