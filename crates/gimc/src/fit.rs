//! Fitting the multi-label / multi-class fast path (DESIGN §3.3, GIMC eq. 12 and Algorithm 1
//! specialised to Ψ = I, Ω = everything).
//!
//! Iteration 0 is the W-step at the initial map: the IMC-RFF / IMC-NYS solution. Each outer
//! iteration then takes ∂f/∂U at the current (W, U) and searches along it with Armijo
//! backtracking (accept η when f(U − ηg) ≤ f(U) − σ η‖g‖², first trial twice the last accepted
//! step, halving, bounded), and ends with the exact W-step at the new U:
//! - [`Scheme::Alternating`] (the paper's scheme): trials evaluate f(W, U − ηg) with W fixed;
//! - [`Scheme::VariableProjection`] (DESIGN §3.3 "better than the paper"): trials evaluate
//!   g(U − ηg) = min_W f(W, U − ηg), re-solving W each time; the gradient is the same by the
//!   envelope theorem.
//!
//! Either way f(W_t, U_t) ≤ f(W_{t−1}, U_{t−1}) − σ η‖g‖²; the fit checks this invariant after
//! every iteration and fails with [`GimcError::ObjectiveIncreased`] if it is ever violated.
//! After every iteration (and at iteration 0) an [`IterationInfo`] is recorded and handed to a
//! `gimc_solvers` [`Observer`] (objective, step, trials, seconds, train and validation P@k or
//! accuracy as extras); with a validation set the best-validation iterate (map and W) is kept,
//! so the number of iterations can be chosen on validation data in one run.

use std::time::Instant;

use gimc_featmap::LearnableMap;
use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::memory::{MemoryEstimate, Tally};
use gimc_solvers::{IterationRecord, Observer, ObserverAction};

use crate::data::{LabelData, Task};
use crate::error::{check_nonneg, dim_err, param_err};
use crate::fastpath::{LabelFeatures, LabelProblem};
use crate::linesearch::{LineSearchParams, Search, armijo, first_step};
use crate::model::{Evaluation, LabelModel, PhiSource, evaluate_phi};
use crate::shard::{ONE_PROCESS, RowSums};
use crate::streamed::{Storage, row_block};
use crate::{GimcError, Result};

/// How the line search treats W (DESIGN §3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scheme {
    /// The paper's alternating scheme: Armijo on U with W fixed, then the W-step.
    #[default]
    Alternating,
    /// Variable projection: Armijo on g(U) = min_W f(W, U), each trial re-solving W.
    VariableProjection,
}

impl Scheme {
    /// `alternating` or `varpro`.
    pub fn name(&self) -> &'static str {
        match self {
            Scheme::Alternating => "alternating",
            Scheme::VariableProjection => "varpro",
        }
    }
}

/// Hyper-parameters of [`fit_labels`].
#[derive(Debug, Clone, PartialEq)]
pub struct LabelParams {
    /// Ridge weight λ ≥ 0 on ‖W‖². Default 1.
    pub lambda: f64,
    /// Maximum number of outer iterations (0: just the IMC start). Default 10.
    pub max_iter: usize,
    /// Alternating or variable projection. Default [`Scheme::Alternating`].
    pub scheme: Scheme,
    /// The Armijo line search. Default σ = 1e-4, growth 2, 30 halvings.
    pub line_search: LineSearchParams,
    /// Stop when the relative decrease of f over one outer iteration is ≤ `tol` (0 disables
    /// the test). Default 0.
    pub tol: f64,
    /// The k of the P@k recorded per iteration (multi-label). Default `[1, 3, 5]`.
    pub eval_ks: Vec<usize>,
    /// The k whose validation P@k picks the best iterate (multi-label; multi-class uses
    /// accuracy). Default 1.
    pub select_k: usize,
    /// Whether to compute the training-set metrics each iteration (costs O(nDL) per
    /// iteration). Default true.
    pub eval_train: bool,
    /// Weight μ ≥ 0 of a proximal term that keeps the learned map near its start U₀:
    /// the map steps minimise f(W, U) + μ·f₀·‖U − U₀‖²_F / ‖U₀‖²_F, with f₀ the objective at the
    /// start (so μ is free of the scales of f and U: moving U by its own size costs μ·f₀).
    /// The recorded objective includes the term. Default 0 (none).
    pub proximal: f64,
    /// How Φ is held: whole (default) or streamed in row blocks, optionally with f32 block
    /// products ([`Storage`]). Streamed, the training and validation metrics are formed block
    /// by block as well.
    pub storage: Storage,
}

impl Default for LabelParams {
    fn default() -> Self {
        Self {
            lambda: 1.0,
            max_iter: 10,
            scheme: Scheme::Alternating,
            line_search: LineSearchParams::default(),
            tol: 0.0,
            eval_ks: vec![1, 3, 5],
            select_k: 1,
            eval_train: true,
            proximal: 0.0,
            storage: Storage::Whole,
        }
    }
}

impl LabelParams {
    /// Checks λ ≥ 0, tol ≥ 0, proximal ≥ 0, select_k ≥ 1 and the line search.
    pub fn check(&self) -> Result<()> {
        check_nonneg("lambda", self.lambda)?;
        check_nonneg("tol", self.tol)?;
        check_nonneg("proximal", self.proximal)?;
        if self.select_k == 0 {
            return Err(param_err("select_k", "must be at least 1"));
        }
        self.line_search.check()
    }

    /// The k list used for evaluation: `eval_ks` plus `select_k`.
    fn ks(&self) -> Vec<usize> {
        let mut ks = self.eval_ks.clone();
        ks.push(self.select_k);
        ks.retain(|&k| k > 0);
        ks.sort_unstable();
        ks.dedup();
        ks
    }
}

/// What happened in one outer iteration (iteration 0: the start).
#[derive(Debug, Clone, PartialEq)]
pub struct IterationInfo {
    /// Iteration number (0 = the IMC start).
    pub iteration: usize,
    /// f(W, U) after the iteration.
    pub objective: f64,
    /// The accepted step η (None at iteration 0).
    pub step: Option<f64>,
    /// Line-search trials (objective evaluations) this iteration.
    pub trials: usize,
    /// Seconds since the fit started.
    pub seconds: f64,
    /// Training-set metrics (when enabled).
    pub train: Option<Evaluation>,
    /// Validation-set metrics (when a validation set was given).
    pub validation: Option<Evaluation>,
}

/// Why a fit stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FitStop {
    /// `max_iter` outer iterations were done.
    MaxIterations,
    /// The relative decrease fell to `tol`, or the gradient vanished.
    Converged,
    /// No step satisfied the Armijo condition within the halving budget; the last good iterate
    /// is kept.
    LineSearchFailed,
    /// The observer asked to stop.
    Observer,
}

/// The iterate with the best validation score: its map parameters and W (a snapshot, so the
/// map itself need not be `Clone`; [`LabelFit::into_chosen`] restores it).
#[derive(Debug, Clone, PartialEq)]
pub struct BestIterate {
    /// Its outer iteration (0 = the IMC start).
    pub iteration: usize,
    /// Its validation score (P@select_k or accuracy).
    pub score: f64,
    /// The map parameters U at that iteration.
    pub params: Mat<f64>,
    /// W at that iteration.
    pub w: Mat<f64>,
}

/// The result of [`fit_labels`].
#[derive(Debug, Clone, PartialEq)]
pub struct LabelFit<M> {
    /// The model at the last iteration.
    pub model: LabelModel<M>,
    /// The best-validation iterate (when a validation set was given).
    pub best: Option<BestIterate>,
    /// One record per iteration, starting with iteration 0.
    pub history: Vec<IterationInfo>,
    /// Why the fit stopped.
    pub stop_reason: FitStop,
}

impl<M: LearnableMap> LabelFit<M> {
    /// The objective values, iteration 0 first.
    pub fn objectives(&self) -> Vec<f64> {
        self.history.iter().map(|h| h.objective).collect()
    }

    /// The iteration of the chosen model ([`LabelFit::into_chosen`]): the best-validation
    /// iterate when there is one, else the last.
    pub fn chosen_iteration(&self) -> usize {
        self.best.as_ref().map_or_else(
            || self.history.last().map_or(0, |h| h.iteration),
            |b| b.iteration,
        )
    }

    /// Consumes the fit, returning the chosen model: the best-validation iterate when there is
    /// one (its map parameters and W restored into the last model), else the last.
    pub fn into_chosen(self) -> Result<LabelModel<M>> {
        let mut model = self.model;
        if let Some(b) = self.best {
            model.restore_single(b.params, b.w)?;
        }
        Ok(model)
    }
}

/// Names of the observer extras for P@k, k = 1..=10.
const TRAIN_P: [&str; 10] = [
    "train_p@1",
    "train_p@2",
    "train_p@3",
    "train_p@4",
    "train_p@5",
    "train_p@6",
    "train_p@7",
    "train_p@8",
    "train_p@9",
    "train_p@10",
];
const VAL_P: [&str; 10] = [
    "val_p@1", "val_p@2", "val_p@3", "val_p@4", "val_p@5", "val_p@6", "val_p@7", "val_p@8",
    "val_p@9", "val_p@10",
];

fn record_of(info: &IterationInfo) -> IterationRecord {
    let mut extras = Vec::new();
    if let Some(s) = info.step {
        extras.push(("step", s));
    }
    extras.push(("trials", info.trials as f64));
    for (eval, names, acc) in [
        (&info.train, &TRAIN_P, "train_accuracy"),
        (&info.validation, &VAL_P, "val_accuracy"),
    ] {
        if let Some(e) = eval {
            for &(k, p) in &e.precision {
                if let Some(name) = k.checked_sub(1).and_then(|i| names.get(i)) {
                    extras.push((*name, p));
                }
            }
            if let Some(a) = e.accuracy {
                extras.push((acc, a));
            }
        }
    }
    IterationRecord {
        iteration: info.iteration,
        objective: info.objective,
        elapsed_secs: info.seconds,
        extras,
    }
}

/// Sets the map's parameters to U − η·g (the Armijo trial point, DESIGN §3.3). Returns
/// `false`, leaving the map unchanged, when the map refuses them (e.g. non-finite entries):
/// the trial is then rejected.
pub(crate) fn move_params<M: LearnableMap + ?Sized>(
    map: &mut M,
    u: MatRef<'_, f64>,
    g: MatRef<'_, f64>,
    eta: f64,
) -> bool {
    let next = Mat::from_fn(u.nrows(), u.ncols(), |i, j| u[(i, j)] - eta * g[(i, j)]);
    map.set_params(next).is_ok()
}

/// The estimated peak memory of [`fit_labels`] with `map` on `data` (and `validation`):
/// the data themselves, Φ, ΦᵀΦ, W and the largest of the gradient, line-search and scoring
/// phases (see [`crate::memory`]). The parameter to lower is `m`.
pub fn estimate_fit_labels<M: LearnableMap + ?Sized>(
    data: &LabelData,
    map: &M,
    params: &LabelParams,
    validation: Option<&LabelData>,
) -> MemoryEstimate {
    let d = data.features().ncols().max(1);
    let mut t = Tally::new("fit", "m");
    t.bytes("process", crate::memory::PROCESS_BASE_BYTES)
        .bytes("X", crate::memory::feature_bytes(data.features()))
        .bytes("A", crate::memory::sparse_bytes(data.labels()));
    let mut validation_rows = 0;
    if let Some(v) = validation {
        validation_rows = v.nrows();
        t.bytes("validation X", crate::memory::feature_bytes(v.features()))
            .bytes("validation A", crate::memory::sparse_bytes(v.labels()));
    }
    crate::memory::add_fit(
        &mut t,
        &crate::memory::FitShape {
            rows: data.nrows(),
            validation_rows,
            features: d,
            labels: data.n_labels(),
            m: map.n_params() / d,
            dim: map.output_dim(),
            max_iter: params.max_iter,
            block_rows: params.storage.block_rows(
                data.nrows(),
                data.features().ncols(),
                map.output_dim(),
            ),
        },
    );
    t.finish()
}

/// An evaluation of `rows` rows of this process pooled over the processes: every P@k and the
/// accuracy are means over rows, so each is summed as (mean · rows, rows). A process with no
/// rows (its evaluation fails as empty) contributes (0, 0). Nothing changes for one process.
fn pooled(
    local: Result<Evaluation>,
    rows: usize,
    task: Task,
    ks: &[usize],
    sums: &dyn RowSums,
) -> Result<Evaluation> {
    if sums.processes() <= 1 {
        return local;
    }
    let local = if rows == 0 {
        Evaluation::default()
    } else {
        local?
    };
    // one layout on every process, from the parameters: the sum for each k (multi-label) or
    // the accuracy's (multi-class), then the rows
    let entries: Vec<f64> = match task {
        Task::MultiLabel => ks
            .iter()
            .map(|&k| local.precision_at(k).unwrap_or(0.0) * rows as f64)
            .collect(),
        Task::MultiClass => vec![local.accuracy.unwrap_or(0.0) * rows as f64],
    };
    let mut buf = entries;
    buf.push(rows as f64);
    sums.sum(&mut buf);
    let total = buf[buf.len() - 1];
    if total == 0.0 {
        return Err(GimcError::Empty("rows to evaluate (on every process)"));
    }
    Ok(match task {
        Task::MultiLabel => Evaluation {
            precision: ks.iter().zip(&buf).map(|(&k, &s)| (k, s / total)).collect(),
            accuracy: None,
        },
        Task::MultiClass => Evaluation {
            precision: Vec::new(),
            accuracy: Some(buf[0] / total),
        },
    })
}

/// Relative slack allowed by the monotonicity check (rounding in the Cholesky solve and the
/// Gram-form objective).
const MONOTONE_SLACK: f64 = 1e-10;

/// Fits GIMC on the multi-label / multi-class fast path (DESIGN §3.3), learning `map` from its
/// initial parameters. `validation` (optional) is scored after every iteration and the best
/// iterate kept. The fit's own randomness is nil: all draws happen when the map is built.
///
/// Errors: parameter / shape errors before any work; [`GimcError::NonFinite`] if the objective
/// or gradient stops being finite; [`GimcError::ObjectiveIncreased`] if the monotonicity
/// invariant fails.
pub fn fit_labels<M, O>(
    data: &LabelData,
    map: M,
    params: &LabelParams,
    validation: Option<&LabelData>,
    observer: &mut O,
) -> Result<LabelFit<M>>
where
    M: LearnableMap,
    O: Observer + ?Sized,
{
    fit_labels_sharded(data, map, params, validation, observer, &ONE_PROCESS)
}

/// [`fit_labels`] on one shard of the rows of a data-parallel fit (and, optionally, one shard
/// of the validation rows): every sum over rows is summed across the processes by `sums`
/// ([`crate::RowSums`]), so every process computes the fit of the union of the shards and
/// returns the same model. Every process must start from the same map (its parameters drawn
/// from the same seed, not from its own rows) and call this with the same parameters; the
/// validation scores are pooled over the processes' validation shards (a shard may be empty).
/// The training-set metrics, when asked for, are pooled the same way.
pub fn fit_labels_sharded<M, O>(
    data: &LabelData,
    map: M,
    params: &LabelParams,
    validation: Option<&LabelData>,
    observer: &mut O,
    sums: &dyn RowSums,
) -> Result<LabelFit<M>>
where
    M: LearnableMap,
    O: Observer + ?Sized,
{
    params.check()?;
    if map.input_dim() != data.features().ncols() {
        return Err(dim_err(
            "map input dimension",
            format!("{} (feature columns)", data.features().ncols()),
            format!("{}", map.input_dim()),
        ));
    }
    if let Some(v) = validation {
        if v.features().ncols() != data.features().ncols() || v.n_labels() != data.n_labels() {
            return Err(dim_err(
                "validation set",
                format!(
                    "{} features and {} labels",
                    data.features().ncols(),
                    data.n_labels()
                ),
                format!("{} and {}", v.features().ncols(), v.n_labels()),
            ));
        }
        if v.task() != data.task() {
            return Err(param_err(
                "validation",
                "must have the same task as the training data",
            ));
        }
    }
    let start = Instant::now();
    let task = data.task();
    let ks = params.ks();
    let problem = LabelProblem::new(data, params.lambda)?
        .with_storage(params.storage)
        .with_sums(sums);
    let mut map = map;
    let mut feats = problem.features(std::slice::from_ref(&map))?;
    let mut w = problem.w_step(&feats)?;
    let mut f = problem.objective(&feats, w.as_ref())?;
    if !f.is_finite() {
        return Err(GimcError::NonFinite {
            what: "objective",
            iteration: 0,
        });
    }
    // the proximal term c·‖U − U₀‖² with c = μ·f₀/‖U₀‖² (zero at the start), when μ > 0
    let prox: Option<(Mat<f64>, f64)> = if params.proximal > 0.0 {
        let u0 = map.params().to_owned();
        let sq = u0.squared_norm_l2();
        (sq > 0.0).then(|| (u0, params.proximal * f.abs() / sq))
    } else {
        None
    };
    let penalty = |u: gimc_linalg::faer::MatRef<'_, f64>| -> f64 {
        prox.as_ref()
            .map_or(0.0, |(u0, c)| c * (u - u0.as_ref()).squared_norm_l2())
    };

    // streamed: the rows' features one block at a time, as the fit forms them
    let streamed_eval = |map: &M, w: &Mat<f64>, set: &LabelData| -> Result<Evaluation> {
        let x = set.features();
        let block = params
            .storage
            .block_rows(x.nrows(), x.ncols(), map.output_dim());
        let phi = |lo: usize, b: usize| Ok(map.forward(&*row_block(x, lo, b)?)?);
        let src = PhiSource::Blocks {
            n: x.nrows(),
            block,
            phi: &phi,
        };
        evaluate_phi(src, w.as_ref(), set, &ks)
    };
    let evaluate = |map: &M, feats: &LabelFeatures, w: &Mat<f64>| -> Result<_> {
        let train = match (params.eval_train, feats.is_streamed()) {
            (false, _) => None,
            (true, false) => Some(pooled(
                evaluate_phi(PhiSource::Whole(feats.phi()?), w.as_ref(), data, &ks),
                data.nrows(),
                task,
                &ks,
                sums,
            )?),
            (true, true) => Some(pooled(
                streamed_eval(map, w, data),
                data.nrows(),
                task,
                &ks,
                sums,
            )?),
        };
        let val = match validation {
            Some(v) if params.storage.is_streamed() => Some(pooled(
                streamed_eval(map, w, v),
                v.nrows(),
                task,
                &ks,
                sums,
            )?),
            Some(v) => {
                let phi = crate::maps::concat_features(std::slice::from_ref(map), v.features())?;
                Some(pooled(
                    evaluate_phi(PhiSource::Whole(phi.as_ref()), w.as_ref(), v, &ks),
                    v.nrows(),
                    task,
                    &ks,
                    sums,
                )?)
            }
            None => None,
        };
        Ok((train, val))
    };
    let mut history = Vec::with_capacity(params.max_iter + 1);
    let mut best: Option<BestIterate> = None;
    let (train, val) = evaluate(&map, &feats, &w)?;
    let info = IterationInfo {
        iteration: 0,
        objective: f,
        step: None,
        trials: 0,
        seconds: start.elapsed().as_secs_f64(),
        train,
        validation: val,
    };
    let consider = |info: &IterationInfo, best: &mut Option<BestIterate>, map: &M, w: &Mat<f64>| {
        if let Some(score) = info
            .validation
            .as_ref()
            .and_then(|v| v.score(task, params.select_k))
            && best.as_ref().is_none_or(|b| score > b.score)
        {
            *best = Some(BestIterate {
                iteration: info.iteration,
                score,
                params: map.params().to_owned(),
                w: w.clone(),
            });
        }
    };
    consider(&info, &mut best, &map, &w);
    let mut stop_reason = FitStop::MaxIterations;
    let action = observer.observe(&record_of(&info));
    history.push(info);
    if action == ObserverAction::Stop {
        stop_reason = FitStop::Observer;
    }

    let mut last_eta: Option<f64> = None;
    if stop_reason != FitStop::Observer {
        for it in 1..=params.max_iter {
            let mut g = problem.gradient(&map, &feats, w.as_ref())?;
            if let Some((u0, c)) = &prox {
                // ∇ c‖U − U₀‖² = 2c(U − U₀)
                g += (map.params() - u0.as_ref()) * gimc_linalg::faer::Scale(2.0 * c);
            }
            let g_sq = g.squared_norm_l2();
            if !g_sq.is_finite() {
                return Err(GimcError::NonFinite {
                    what: "gradient",
                    iteration: it,
                });
            }
            if g_sq == 0.0 {
                stop_reason = FitStop::Converged;
                break;
            }
            let eta0 = first_step(
                &params.line_search,
                last_eta,
                f,
                map.params().norm_l2(),
                g_sq.sqrt(),
            );
            // trials move the map itself to U − ηg; the search stops at the first accepted
            // trial, so the map ends there, or is restored to U when none is accepted
            let u = map.params().to_owned();
            let search = armijo(f, g_sq, eta0, &params.line_search, |eta| {
                if !move_params(&mut map, u.as_ref(), g.as_ref(), eta) {
                    return Ok(None);
                }
                let tf = problem.features(std::slice::from_ref(&map))?;
                let pen = penalty(map.params());
                match params.scheme {
                    Scheme::Alternating => {
                        let fv = problem.objective(&tf, w.as_ref())? + pen;
                        Ok(Some((fv, (tf, None))))
                    }
                    Scheme::VariableProjection => match problem.w_step(&tf) {
                        Ok(tw) => {
                            let fv = problem.objective(&tf, tw.as_ref())? + pen;
                            Ok(Some((fv, (tf, Some(tw)))))
                        }
                        Err(GimcError::Linalg(_)) => Ok(None),
                        Err(e) => Err(e),
                    },
                }
            })?;
            let (acc, trials) = match search {
                Search::Accepted(acc, trials) => (acc, trials),
                Search::Failed(_) => {
                    map.set_params(u)?;
                    stop_reason = FitStop::LineSearchFailed;
                    break;
                }
            };
            let (new_feats, new_w) = acc.payload;
            let new_w = match new_w {
                Some(w) => w,
                None => problem.w_step(&new_feats)?,
            };
            let f_new = problem.objective(&new_feats, new_w.as_ref())? + penalty(map.params());
            if !f_new.is_finite() {
                return Err(GimcError::NonFinite {
                    what: "objective",
                    iteration: it,
                });
            }
            // checked invariant of DESIGN §3.3: f never increases across outer iterations
            if f_new > f + MONOTONE_SLACK * f.abs().max(1.0) {
                return Err(GimcError::ObjectiveIncreased {
                    iteration: it,
                    before: f,
                    after: f_new,
                });
            }
            feats = new_feats;
            w = new_w;
            last_eta = Some(acc.eta);
            let f_prev = f;
            f = f_new;
            let (train, val) = evaluate(&map, &feats, &w)?;
            let info = IterationInfo {
                iteration: it,
                objective: f,
                step: Some(acc.eta),
                trials,
                seconds: start.elapsed().as_secs_f64(),
                train,
                validation: val,
            };
            consider(&info, &mut best, &map, &w);
            let action = observer.observe(&record_of(&info));
            history.push(info);
            if action == ObserverAction::Stop {
                stop_reason = FitStop::Observer;
                break;
            }
            if params.tol > 0.0 && (f_prev - f) <= params.tol * f_prev.abs() {
                stop_reason = FitStop::Converged;
                break;
            }
        }
    }
    let mut model = LabelModel::new(vec![map], w, task, params.lambda)?;
    model.set_label_names(data.label_names().to_vec())?;
    Ok(LabelFit {
        model,
        best,
        history,
        stop_reason,
    })
}
