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
//!
//! The loop is the shared driver of [`crate::outer`]; this module is the fast path's
//! [`OuterProblem`]: one block (the map U), the W-step after the search
//! ([`OuterProblem::factors_after_search`]) and [`NoStep::Stop`].

use std::time::Instant;

use gimc_featmap::LearnableMap;
use gimc_linalg::faer::{Mat, MatRef, Scale};
use gimc_linalg::memory::{MemoryEstimate, Tally};
use gimc_solvers::{IterationRecord, Observer};

use crate::error::{GimcError, Result};
use crate::error::{check_nonneg, dim_err, param_err};
use crate::labels::data::{LabelData, Task};
use crate::labels::fastpath::{LabelFeatures, LabelProblem};
use crate::labels::model::{Evaluation, LabelModel, PhiSource, evaluate_phi};
use crate::labels::shard::{ONE_PROCESS, RowSums};
use crate::labels::streamed::{Storage, row_block};
use crate::linesearch::LineSearchParams;
use crate::outer::{
    FitStop, Goal, NoStep, OuterIteration, OuterProblem, OuterRun, OuterSettings, run_outer,
};

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

gimc_linalg::params! {
    /// Hyper-parameters of [`fit_labels`]. Build with [`LabelParams::default`] and the `with_*`
    /// methods; [`LabelParams::check`] validates them into the [`ValidLabelParams`] that
    /// [`fit_labels`] takes.
    #[derive(Debug, Clone, PartialEq)]
    pub struct LabelParams => ValidLabelParams {
        /// Ridge weight λ ≥ 0 on ‖W‖². Default 1.
        pub lambda: f64 = 1.0 => with_lambda,
        /// Maximum number of outer iterations (0: just the IMC start). Default 10.
        pub max_iter: usize = 10 => with_max_iter,
        /// Alternating or variable projection. Default [`Scheme::Alternating`].
        pub scheme: Scheme = Scheme::Alternating => with_scheme,
        /// The Armijo line search. Default σ = 1e-4, growth 2, 30 halvings.
        pub line_search: LineSearchParams = LineSearchParams::default() => with_line_search,
        /// Stop when the relative decrease of f over one outer iteration is ≤ `tol` (0 disables
        /// the test). Default 0.
        pub tol: f64 = 0.0 => with_tol,
        /// The k of the P@k recorded per iteration (multi-label). Default `[1, 3, 5]`.
        pub eval_ks: Vec<usize> = vec![1, 3, 5] => with_eval_ks,
        /// The k whose validation P@k picks the best iterate (multi-label; multi-class uses
        /// accuracy). Default 1.
        pub select_k: usize = 1 => with_select_k,
        /// Whether to compute the training-set metrics each iteration (costs O(nDL) per
        /// iteration). Default true.
        pub eval_train: bool = true => with_eval_train,
        /// Weight μ ≥ 0 of a proximal term that keeps the learned map near its start U₀: the map
        /// steps minimise f(W, U) + μ·f₀·‖U − U₀‖²_F / ‖U₀‖²_F, with f₀ the objective at the start
        /// (so μ is free of the scales of f and U: moving U by its own size costs μ·f₀). The
        /// recorded objective includes the term. Default 0 (none).
        pub proximal: f64 = 0.0 => with_proximal,
        /// How Φ is held: whole (default) or streamed in row blocks, optionally with f32 block
        /// products ([`Storage`]). Streamed, the training and validation metrics are formed block
        /// by block as well.
        pub storage: Storage = Storage::Whole => with_storage,
        /// Stop once validation P@select_k (accuracy, multi-class) has not beaten its best for
        /// this many outer iterations in a row ([`FitStop::NoValidationGain`]); acts only when a
        /// validation set is given. Default `None` (run to `max_iter`).
        pub patience: Option<usize> = None => with_patience,
    }
    /// Checks λ ≥ 0, tol ≥ 0, proximal ≥ 0, select_k ≥ 1, patience ≥ 1 and the line search.
    check |this| -> crate::GimcError {
        check_nonneg("lambda", this.lambda)?;
        check_nonneg("tol", this.tol)?;
        check_nonneg("proximal", this.proximal)?;
        if this.select_k == 0 {
            return Err(param_err("select_k", "must be at least 1"));
        }
        if this.patience == Some(0) {
            return Err(param_err("patience", "must be at least 1"));
        }
        this.line_search.check()?;
    }
}

impl LabelParams {
    /// The outer loop's settings: the fast path ends at a vanished gradient or a failed search
    /// ([`NoStep::Stop`]).
    fn outer_settings(&self) -> OuterSettings<'_> {
        OuterSettings::new(self.max_iter, self.tol, &self.line_search, NoStep::Stop)
            .with_patience(self.patience)
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
    crate::labels::estimate::add_fit(
        &mut t,
        &crate::labels::estimate::FitShape {
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

/// Fits GIMC on the multi-label / multi-class fast path (DESIGN §3.3), learning `map` from its
/// initial parameters. `validation` (optional) is scored after every iteration and the best
/// iterate kept. The fit's own randomness is nil: all draws happen when the map is built.
///
/// Errors: shape errors before any work (the parameters were checked by
/// [`LabelParams::check`]); [`GimcError::NonFinite`] if the objective or gradient stops being
/// finite; [`GimcError::ObjectiveIncreased`] if the monotonicity invariant fails.
pub fn fit_labels<M, O>(
    data: &LabelData,
    map: M,
    params: &ValidLabelParams,
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
/// ([`crate::labels::RowSums`]), so every process computes the fit of the union of the shards and
/// returns the same model. Every process must start from the same map (its parameters drawn
/// from the same seed, not from its own rows) and call this with the same parameters; the
/// validation scores are pooled over the processes' validation shards (a shard may be empty).
/// The training-set metrics, when asked for, are pooled the same way.
pub fn fit_labels_sharded<M, O>(
    data: &LabelData,
    map: M,
    params: &ValidLabelParams,
    validation: Option<&LabelData>,
    observer: &mut O,
    sums: &dyn RowSums,
) -> Result<LabelFit<M>>
where
    M: LearnableMap,
    O: Observer + ?Sized,
{
    check_inputs(data, &map, validation)?;
    let started = Instant::now();
    let (mut outer, f0) = LabelOuter::start(data, map, params, validation, sums)?;
    let run = run_outer(&mut outer, f0, &params.outer_settings(), started, observer)?;
    outer.into_fit(run)
}

/// Checks that `map` reads the data's features and that `validation` has the data's shape
/// and task.
fn check_inputs<M: LearnableMap>(
    data: &LabelData,
    map: &M,
    validation: Option<&LabelData>,
) -> Result<()> {
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
    Ok(())
}

/// The proximal term c·‖U − U₀‖²_F of [`LabelParams::proximal`], with c = μ·|f₀|/‖U₀‖²_F.
#[derive(Debug)]
struct Proximal {
    u0: Mat<f64>,
    c: f64,
}

impl Proximal {
    /// The term for weight μ at the start U₀ with objective f₀; none when μ = 0 or U₀ = 0.
    fn new(mu: f64, u0: MatRef<'_, f64>, f0: f64) -> Option<Self> {
        if mu > 0.0 {
            let u0 = u0.to_owned();
            let sq = u0.squared_norm_l2();
            (sq > 0.0).then(|| Self {
                u0,
                c: mu * f0.abs() / sq,
            })
        } else {
            None
        }
    }

    /// c·‖U − U₀‖²_F.
    fn value(&self, u: MatRef<'_, f64>) -> f64 {
        self.c * (u - self.u0.as_ref()).squared_norm_l2()
    }

    /// Adds ∇ c‖U − U₀‖² = 2c(U − U₀) to `g`.
    fn add_gradient(&self, g: &mut Mat<f64>, u: MatRef<'_, f64>) {
        *g += (u - self.u0.as_ref()) * Scale(2.0 * self.c);
    }
}

/// The fast path as an [`OuterProblem`] (module documentation): one block, the map U; W by
/// the exact W-step after each search ([`Scheme::Alternating`]) or inside every trial
/// ([`Scheme::VariableProjection`]).
struct LabelOuter<'a, M> {
    problem: LabelProblem<'a>,
    params: &'a LabelParams,
    validation: Option<&'a LabelData>,
    /// The k of every recorded P@k.
    ks: Vec<usize>,
    sums: &'a dyn RowSums,
    map: M,
    /// Φ (or its sums) at the current map.
    feats: LabelFeatures,
    w: Mat<f64>,
    /// The W of the accepted variable-projection trial, taken instead of a new W-step.
    trial_w: Option<Mat<f64>>,
    proximal: Option<Proximal>,
}

impl<'a, M: LearnableMap> LabelOuter<'a, M> {
    /// Iteration 0: the W-step at the initial map (the IMC-RFF / IMC-NYS solution), with its
    /// objective.
    fn start(
        data: &'a LabelData,
        map: M,
        params: &'a LabelParams,
        validation: Option<&'a LabelData>,
        sums: &'a dyn RowSums,
    ) -> Result<(Self, f64)> {
        let problem = LabelProblem::new(data, params.lambda)?
            .with_storage(params.storage)
            .with_sums(sums);
        let feats = problem.features(std::slice::from_ref(&map))?;
        let (w, f0) = problem.w_step_with_objective(&feats)?;
        let proximal = Proximal::new(params.proximal, map.params(), f0);
        let outer = Self {
            problem,
            params,
            validation,
            ks: params.ks(),
            sums,
            map,
            feats,
            w,
            trial_w: None,
            proximal,
        };
        Ok((outer, f0))
    }

    fn data(&self) -> &'a LabelData {
        self.problem.data()
    }

    /// The proximal term at `u` (0 without one).
    fn penalty(&self, u: MatRef<'_, f64>) -> f64 {
        self.proximal.as_ref().map_or(0.0, |p| p.value(u))
    }

    /// The training (when asked for) and validation metrics of the current iterate, pooled
    /// over the processes.
    fn evaluate(&self) -> Result<(Option<Evaluation>, Option<Evaluation>)> {
        let data = self.data();
        let train = match (self.params.eval_train, self.feats.is_streamed()) {
            (false, _) => None,
            (true, false) => Some(self.pooled(
                evaluate_phi(
                    PhiSource::Whole(self.feats.phi()?),
                    self.w.as_ref(),
                    data,
                    &self.ks,
                ),
                data,
            )?),
            (true, true) => Some(self.pooled(self.evaluate_streamed(data), data)?),
        };
        let validation = match self.validation {
            Some(v) if self.params.storage.is_streamed() => {
                Some(self.pooled(self.evaluate_streamed(v), v)?)
            }
            Some(v) => {
                let phi =
                    crate::maps::concat_features(std::slice::from_ref(&self.map), v.features())?;
                Some(self.pooled(
                    evaluate_phi(PhiSource::Whole(phi.as_ref()), self.w.as_ref(), v, &self.ks),
                    v,
                )?)
            }
            None => None,
        };
        Ok((train, validation))
    }

    /// The metrics of `set` with its features formed one row block at a time, as the
    /// streamed fit forms them.
    fn evaluate_streamed(&self, set: &LabelData) -> Result<Evaluation> {
        let x = set.features();
        let block = self
            .params
            .storage
            .block_rows(x.nrows(), x.ncols(), self.map.output_dim());
        let phi = |lo: usize, b: usize| Ok(self.map.forward(&*row_block(x, lo, b)?)?);
        let src = PhiSource::Blocks {
            n: x.nrows(),
            block,
            phi: &phi,
        };
        evaluate_phi(src, self.w.as_ref(), set, &self.ks)
    }

    /// [`pooled`] for this fit's rows of `set`.
    fn pooled(&self, local: Result<Evaluation>, set: &LabelData) -> Result<Evaluation> {
        pooled(local, set.nrows(), set.task(), &self.ks, self.sums)
    }

    /// The fit's result from the loop's: the model at the last iterate, the best iterate.
    fn into_fit(self, run: OuterRun<IterationInfo, (Mat<f64>, Mat<f64>)>) -> Result<LabelFit<M>> {
        let data = self.data();
        let mut model = LabelModel::new(vec![self.map], self.w, data.task(), self.params.lambda)?;
        model.set_label_names(data.label_names().to_vec())?;
        Ok(LabelFit {
            model,
            best: run.best.map(|b| BestIterate {
                iteration: b.iteration,
                score: b.value,
                params: b.snapshot.0,
                w: b.snapshot.1,
            }),
            history: run.history,
            stop_reason: run.stop_reason,
        })
    }
}

impl<M: LearnableMap> OuterProblem for LabelOuter<'_, M> {
    type Info = IterationInfo;
    /// The map parameters U and W.
    type Snapshot = (Mat<f64>, Mat<f64>);
    /// The features at the trial map, and W there under variable projection.
    type Trial = (LabelFeatures, Option<Mat<f64>>);
    type Block = ();

    const GOAL: Goal = Goal::Maximise;

    fn blocks(&self) -> Vec<()> {
        vec![()]
    }

    fn params(&self, _: ()) -> MatRef<'_, f64> {
        self.map.params()
    }

    fn set_params(&mut self, _: (), params: Mat<f64>) -> Result<()> {
        Ok(self.map.set_params(params)?)
    }

    /// ∂f/∂U at (W, U), plus the proximal term's gradient.
    fn gradient(&mut self, _: ()) -> Result<Option<Mat<f64>>> {
        let mut g = self
            .problem
            .gradient(&self.map, &self.feats, self.w.as_ref())?;
        if let Some(p) = &self.proximal {
            p.add_gradient(&mut g, self.map.params());
        }
        Ok(Some(g))
    }

    /// f(W, U) with W fixed (alternating), or min_W f(W, U) by a W-step (variable projection;
    /// a failed W-step rejects the trial), plus the proximal term.
    fn trial(&mut self, _: ()) -> Result<Option<(f64, Self::Trial)>> {
        let feats = self.problem.features(std::slice::from_ref(&self.map))?;
        let penalty = self.penalty(self.map.params());
        match self.params.scheme {
            Scheme::Alternating => {
                let f = self.problem.objective(&feats, self.w.as_ref())? + penalty;
                Ok(Some((f, (feats, None))))
            }
            Scheme::VariableProjection => match self.problem.w_step_with_objective(&feats) {
                Ok((w, f)) => Ok(Some((f + penalty, (feats, Some(w))))),
                Err(GimcError::Linalg(_)) => Ok(None),
                Err(e) => Err(e),
            },
        }
    }

    fn accept(&mut self, _: (), (feats, w): Self::Trial) {
        self.feats = feats;
        self.trial_w = w;
    }

    /// The W-step at the new map (the trial's W under variable projection), and f there.
    /// Under variable projection the accepted trial already computed f at this map and W (by
    /// [`LabelProblem::w_step_with_objective`]), so `f` is returned as it is.
    fn factors_after_search(&mut self, f: f64) -> Result<f64> {
        if let Some(w) = self.trial_w.take() {
            self.w = w;
            return Ok(f);
        }
        self.w = self.problem.w_step(&self.feats)?;
        Ok(self.problem.objective(&self.feats, self.w.as_ref())? + self.penalty(self.map.params()))
    }

    fn info(&self, it: &OuterIteration<'_>) -> Result<IterationInfo> {
        let (train, validation) = self.evaluate()?;
        Ok(IterationInfo {
            iteration: it.iteration,
            objective: it.objective,
            step: it.first_step(),
            trials: it.trials,
            seconds: it.seconds(),
            train,
            validation,
        })
    }

    fn record(&self, info: &IterationInfo) -> IterationRecord {
        record_of(info)
    }

    /// P@select_k (multi-label) or accuracy (multi-class) on the validation set.
    fn validation(&self, info: &IterationInfo) -> Option<f64> {
        info.validation
            .as_ref()
            .and_then(|v| v.score(self.data().task(), self.params.select_k))
    }

    fn snapshot(&self) -> Self::Snapshot {
        (self.map.params().to_owned(), self.w.clone())
    }
}
