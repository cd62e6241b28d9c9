//! Model selection on a validation split of the training data (DESIGN §4: γ, λ, m and the
//! iteration count are chosen on validation data, never on the test set, and printed with
//! every result). Shared by the experiments and the CLI.
//!
//! The training rows are split (seeded; stratified by class for multi-class data); every
//! setting of the grid is fitted once on the training part for `max_iter` iterations while the
//! validation part is scored after each iteration, so the best iteration count of a setting
//! comes for free; the setting (and iteration count) with the best validation P@`select_k`
//! (multi-label) or accuracy (multi-class) wins; the model is then refitted on all training
//! rows with those values. Every candidate map is drawn from the same random stream, so the
//! grid compares γ, m and λ on common random numbers, and the refit reuses that stream.
//! [`select_and_fit`] reports every fit and outer iteration to a [`SelectionObserver`] (the
//! command line's progress bar; `NoObserver` for none).
//!
//! The maps are drawn by any [`MapFamily`] — a built-in one (`gimc_featmap::FourierFamily`,
//! `NystromFamily`, …), a user's, or one looked up by name in a
//! [`MapRegistry`](crate::MapRegistry) — and the fitted models hold the family's map type.

use gimc_featmap::{LearnableMap, MapFamily};
use gimc_linalg::Gamma;
use gimc_linalg::memory::{MemoryBudget, MemoryEstimate, Tally, check_fits};
use gimc_linalg::rng::{GimcRng, child, seeded};
use rand::seq::SliceRandom;

use crate::error::{GimcError, Result};
use crate::error::{check_nonneg, param_err};
use crate::grid::Grid;
use crate::labels::data::{LabelData, Task};
use crate::labels::estimate::{FitShape, add_fit};
use crate::labels::fastpath::LabelProblem;
use crate::labels::fit::{IterationInfo, LabelParams, Scheme, ValidLabelParams, fit_labels};
use crate::labels::model::{LabelModel, PhiSource, evaluate_phi};
use crate::labels::streamed::Storage;
use crate::linesearch::LineSearchParams;
use crate::maps::concat_features;
use crate::memory::{PROCESS_BASE_BYTES, feature_bytes, sparse_bytes};
use crate::outer::FitStop;
use gimc_solvers::{IterationRecord, NoObserver, Observer, ObserverAction};

gimc_linalg::params! {
    /// The grid and protocol of [`select_and_fit`]. Build with [`SelectionParams::default`] and the
    /// `with_*` methods; [`SelectionParams::check`] validates them into the
    /// [`ValidSelectionParams`] that [`select_and_fit`] takes.
    #[derive(Debug, Clone, PartialEq)]
    pub struct SelectionParams => ValidSelectionParams {
        /// The m × γ × λ grid and the iteration cap of every fit. Default m {500}, γ {`scale`}
        /// (γ = 1 / (d · Var X)), λ {1}, 10 iterations.
        pub grid: Grid = Grid::new(vec![500], vec![Gamma::SCALE], vec![1.0], 10) => with_grid,
        /// Fraction of the training rows held out for validation, in (0, 1). Default 0.2.
        pub validation_fraction: f64 = 0.2 => with_validation_fraction,
        /// Alternating or variable projection. Default alternating.
        pub scheme: Scheme = Scheme::Alternating => with_scheme,
        /// The Armijo line search.
        pub line_search: LineSearchParams = LineSearchParams::default() => with_line_search,
        /// The k of the validation P@k that decides (multi-label). Default 1.
        pub select_k: usize = 1 => with_select_k,
        /// Seed of the split and of the maps' random draws. Default 0.
        pub seed: u64 = 0 => with_seed,
        /// The memory pre-flight: [`estimate_selection`] is checked against it before the split
        /// is made or any map drawn. Default [`MemoryBudget::Detect`] (the memory available now).
        pub memory: MemoryBudget = MemoryBudget::Detect => with_memory,
        /// Weight μ of the proximal term toward the random start ([`LabelParams::proximal`]).
        /// Default 0.
        pub proximal: f64 = 0.0 => with_proximal,
        /// How each fit holds Φ ([`LabelParams::storage`]). Default [`Storage::Whole`].
        pub storage: Storage = Storage::Whole => with_storage,
        /// Validation patience of every candidate's fit ([`LabelParams::patience`]): a candidate
        /// stops once its validation score has not beaten its best for this many iterations.
        /// Default `None` (every candidate runs to `max_iter`).
        pub patience: Option<usize> = None => with_patience,
    }
    /// Checks the grid (non-empty, valid values) and the protocol parameters.
    check |this| -> crate::GimcError {
        this.grid.check()?;
        check_validation_fraction(this.validation_fraction)?;
        if this.select_k == 0 {
            return Err(param_err("select_k", "must be at least 1"));
        }
        check_nonneg("proximal", this.proximal)?;
        if this.patience == Some(0) {
            return Err(param_err("patience", "must be at least 1"));
        }
        this.line_search.check()?;
    }
}

impl SelectionParams {
    crate::grid::grid_setters!();
}

impl ValidSelectionParams {
    /// The parameters of one fit of the grid: λ (from the checked grid), `max_iter` iterations,
    /// the checked scheme, line search, select_k, proximal weight and storage.
    fn label_params(
        &self,
        lambda: f64,
        max_iter: usize,
        eval_train: bool,
    ) -> Result<ValidLabelParams> {
        LabelParams {
            lambda,
            max_iter,
            scheme: self.scheme,
            line_search: self.line_search,
            select_k: self.select_k,
            eval_ks: vec![self.select_k],
            eval_train,
            proximal: self.proximal,
            storage: self.storage,
            patience: self.patience,
            ..LabelParams::default()
        }
        .check()
    }
}

/// One fitted setting of the grid.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// m (directions or landmarks).
    pub m: usize,
    /// γ.
    pub gamma: f64,
    /// λ.
    pub lambda: f64,
    /// Validation score after each iteration (iteration 0 first).
    pub scores: Vec<f64>,
    /// The iteration with the best validation score (the earliest on ties).
    pub best_iteration: usize,
    /// That score.
    pub best_score: f64,
    /// Seconds the fit took.
    pub seconds: f64,
}

/// The chosen hyper-parameters (print them with every result).
#[derive(Debug, Clone, PartialEq)]
pub struct Chosen {
    /// The map family's name (`lff`, `lnys`, …).
    pub family: String,
    /// m (directions or landmarks).
    pub m: usize,
    /// γ.
    pub gamma: f64,
    /// λ.
    pub lambda: f64,
    /// Outer iterations of the refit (0 means the unlearned IMC start won).
    pub iterations: usize,
    /// The validation score that chose them.
    pub validation_score: f64,
}

impl Chosen {
    /// A one-line description, e.g. `lff m=500 gamma=0.002 lambda=1 iterations=9 (validation
    /// 0.6420)`.
    pub fn describe(&self) -> String {
        format!(
            "{} m={} gamma={} lambda={} iterations={} (validation {:.4})",
            self.family, self.m, self.gamma, self.lambda, self.iterations, self.validation_score
        )
    }
}

/// The result of [`select_and_fit`].
#[derive(Debug, Clone, PartialEq)]
pub struct Selection<M> {
    /// The chosen values.
    pub chosen: Chosen,
    /// Every setting tried, in grid order (m, then γ, then λ).
    pub candidates: Vec<Candidate>,
    /// The model refitted on all training rows with the chosen values.
    pub model: LabelModel<M>,
    /// The refit's history.
    pub history: Vec<IterationInfo>,
    /// The chosen setting's best-validation model fitted on the training part only (what
    /// [`select_combined`] combines on the validation part).
    pub validation_model: LabelModel<M>,
    /// Rows of the training part of the split (sorted).
    pub train_rows: Vec<usize>,
    /// Rows of the validation part of the split (sorted).
    pub validation_rows: Vec<usize>,
}

/// The result of [`select_combined`].
#[derive(Debug, Clone, PartialEq)]
pub struct CombinedSelection<M> {
    /// The chosen λ of the final W-step.
    pub lambda: f64,
    /// Its validation score.
    pub validation_score: f64,
    /// (λ, validation score) for every λ tried.
    pub scores: Vec<(f64, f64)>,
    /// The combined model: the refitted maps of every part, concatenated, with W fitted on all
    /// training rows.
    pub model: LabelModel<M>,
}

/// Checks a held-out fraction: in (0, 1).
pub(crate) fn check_validation_fraction(fraction: f64) -> Result<()> {
    if fraction > 0.0 && fraction < 1.0 {
        Ok(())
    } else {
        Err(param_err(
            "validation_fraction",
            format!("must be in (0, 1), got {fraction}"),
        ))
    }
}

/// Splits rows 0..n (seeded): round(fraction·n) rows (at least 1, at most n − 1) go to
/// validation; for multi-class data the split is stratified by class. Returns (train,
/// validation), each sorted.
pub fn validation_split(
    data: &LabelData,
    fraction: f64,
    rng: &mut GimcRng,
) -> Result<(Vec<usize>, Vec<usize>)> {
    let n = data.nrows();
    if n < 2 {
        return Err(param_err(
            "data",
            "need at least 2 rows to split off validation",
        ));
    }
    check_validation_fraction(fraction)?;
    let (mut train, mut val) = (Vec::new(), Vec::new());
    match (data.task(), data.rows_by_class()) {
        (Task::MultiClass, Some(by_class)) => {
            for mut rows in by_class {
                rows.shuffle(rng);
                let k = ((rows.len() as f64) * fraction).round() as usize;
                val.extend_from_slice(&rows[..k.min(rows.len())]);
                train.extend_from_slice(&rows[k.min(rows.len())..]);
            }
        }
        _ => {
            let mut rows: Vec<usize> = (0..n).collect();
            rows.shuffle(rng);
            let k = (((n as f64) * fraction).round() as usize).clamp(1, n - 1);
            val.extend_from_slice(&rows[..k]);
            train.extend_from_slice(&rows[k..]);
        }
    }
    if val.is_empty() || train.is_empty() {
        return Err(param_err(
            "validation_fraction",
            "leaves an empty training or validation part",
        ));
    }
    train.sort_unstable();
    val.sort_unstable();
    Ok((train, val))
}

/// Which fit of [`select_and_fit`] is running.
#[derive(Debug, Clone, PartialEq)]
pub enum SelectionStage {
    /// Setting `index` (0-based, grid order) of `total`, fitted on the training part.
    Candidate {
        /// Position in the grid.
        index: usize,
        /// Number of settings in the grid.
        total: usize,
        /// m of this setting.
        m: usize,
        /// γ of this setting.
        gamma: f64,
        /// λ of this setting.
        lambda: f64,
    },
    /// The refit of the chosen setting on all training rows.
    Refit {
        /// The chosen setting.
        chosen: Chosen,
    },
}

/// The observer of a selection ([`select_and_fit`], [`auto_fit`](crate::auto_fit)): the one
/// [`Observer`], which sees every outer iteration of every fit (iteration 0: the starting
/// point) and may stop it, told before each fit which one starts, and asked between steps that
/// have no iterations whether to stop. A stop, from either, ends the selection with
/// [`GimcError::Interrupted`] (a user's Ctrl-C, a deadline). Both methods do nothing by default.
pub trait SelectionObserver: Observer {
    /// A fit of at most `max_iter` outer iterations starts.
    fn fit_started(&mut self, _stage: &SelectionStage, _max_iter: usize) {}
    /// Asked after every outer iteration and between steps: `true` stops the selection.
    /// Default never.
    fn interrupted(&mut self) -> bool {
        false
    }
}

impl SelectionObserver for NoObserver {}

/// Hands one fit's outer iterations to a [`SelectionObserver`], stopping the fit when it asks
/// to, by its `observe` or its `interrupted`.
pub(crate) struct Forward<'a, S: SelectionObserver + ?Sized>(pub(crate) &'a mut S);

impl<S: SelectionObserver + ?Sized> Observer for Forward<'_, S> {
    fn observe(&mut self, record: &IterationRecord) -> ObserverAction {
        let action = self.0.observe(record);
        if action == ObserverAction::Stop || self.0.interrupted() {
            ObserverAction::Stop
        } else {
            ObserverAction::Continue
        }
    }
}

/// Whether a selection must end after a fit that stopped for `stop`: its observer stopped it,
/// or asks to stop now.
pub(crate) fn stopped<S: SelectionObserver + ?Sized>(stop: FitStop, observer: &mut S) -> bool {
    stop == FitStop::Observer || observer.interrupted()
}

/// The storage of Φ for [`select_and_fit`] under the memory budget of `params`
/// ([`SelectionParams::memory`]): [`Storage::Whole`] when the estimate of the whole-Φ fit
/// ([`estimate_selection`]) fits, else `streamed` (which should be a [`Storage::Streamed`]). The
/// `auto` of `gimc fit --stream` and of the Python estimator.
pub fn auto_storage<F: MapFamily + ?Sized>(
    data: &LabelData,
    family: &F,
    params: &SelectionParams,
    streamed: Storage,
) -> Result<Storage> {
    let budget = params.memory;
    let whole = SelectionParams {
        storage: Storage::Whole,
        ..params.clone()
    };
    let estimate = estimate_selection(data, family, &whole)?;
    Ok(
        if gimc_linalg::memory::check_fits(&estimate, budget).is_ok() {
            Storage::Whole
        } else {
            streamed
        },
    )
}

/// The estimated peak memory of [`select_and_fit`] with `family` on `data`: the data, the
/// train / validation copies of the split, and the larger of the largest candidate's fit on
/// the training part (scoring the validation part) and the refit on all rows, for the largest
/// m of the grid (see [`crate::memory`]). The parameter to lower is `m`. Errors when the
/// family refuses an m of the grid (its output dimension).
pub fn estimate_selection<F: MapFamily + ?Sized>(
    data: &LabelData,
    family: &F,
    params: &SelectionParams,
) -> Result<MemoryEstimate> {
    let n = data.nrows();
    let n_val = ((n as f64) * params.validation_fraction)
        .round()
        .clamp(0.0, n as f64) as usize;
    let (x, a) = (feature_bytes(data.features()), sparse_bytes(data.labels()));
    let mut best: Option<MemoryEstimate> = None;
    for &m in &params.grid.ms {
        let dim = family.output_dim(m)?;
        let shape = |rows, validation_rows, max_iter| FitShape {
            rows,
            validation_rows,
            features: data.features().ncols(),
            labels: data.n_labels(),
            m,
            dim,
            max_iter,
            block_rows: params
                .storage
                .block_rows(rows, data.features().ncols(), dim),
        };
        let mut candidate = Tally::new("candidate fit", "m");
        add_fit(
            &mut candidate,
            &shape(n.saturating_sub(n_val), n_val, params.grid.max_iter),
        );
        let mut refit = Tally::new("refit", "m");
        add_fit(&mut refit, &shape(n, 0, params.grid.max_iter));
        let fit = if candidate.total() >= refit.total() {
            candidate
        } else {
            refit
        };
        let mut t = Tally::new("fit", "m");
        t.bytes("process", PROCESS_BASE_BYTES)
            .bytes("X and A", x.saturating_add(a))
            .bytes("train / validation copies", x.saturating_add(a));
        let est_fit = fit.finish();
        t.bytes(
            format!("m = {m} {} [{}]", est_fit.what, est_fit.detail),
            est_fit.bytes,
        );
        let est = t.finish();
        if best.as_ref().is_none_or(|b| est.bytes > b.bytes) {
            best = Some(est);
        }
    }
    best.ok_or(GimcError::Empty("selection grid (ms)"))
}

/// Chooses γ, λ, m and the iteration count for maps of `family` on a validation split of
/// `data` and refits on all of `data` (see the module documentation), reporting each fit's
/// start and every outer iteration to `observer` ([`NoObserver`] for none).
pub fn select_and_fit<F, S>(
    data: &LabelData,
    family: &F,
    params: &ValidSelectionParams,
    observer: &mut S,
) -> Result<Selection<F::Map>>
where
    F: MapFamily + ?Sized,
    S: SelectionObserver + ?Sized,
{
    check_fits(&estimate_selection(data, family, params)?, params.memory)?;
    let root = seeded(params.seed);
    let mut split_rng = child(&root, 0);
    let (tr, va) = validation_split(data, params.validation_fraction, &mut split_rng)?;
    let train = data.select_rows(&tr)?;
    let val = data.select_rows(&va)?;
    let task = data.task();
    let mut candidates = Vec::new();
    let mut best_val_model: Option<(f64, LabelModel<F::Map>)> = None;
    let total = params.grid.len();
    // γ from the rule is resolved once, on all of `data` (the rows the refit sees)
    let gammas: Vec<f64> = params
        .grid
        .gammas
        .iter()
        .map(|g| g.resolve(data.features()))
        .collect();
    for &m in &params.grid.ms {
        for &gamma in &gammas {
            for &lambda in &params.grid.lambdas {
                let stage = SelectionStage::Candidate {
                    index: candidates.len(),
                    total,
                    m,
                    gamma,
                    lambda,
                };
                observer.fit_started(&stage, params.grid.max_iter);
                let map = family.build(train.features(), m, gamma, &mut child(&root, 1))?;
                let lp = params.label_params(lambda, params.grid.max_iter, false)?;
                let fit = fit_labels(&train, map, &lp, Some(&val), &mut Forward(&mut *observer))?;
                if stopped(fit.stop_reason, observer) {
                    return Err(GimcError::Interrupted);
                }
                let scores: Vec<f64> = fit
                    .history
                    .iter()
                    .map(|h| {
                        h.validation
                            .as_ref()
                            .and_then(|v| v.score(task, params.select_k))
                            .unwrap_or(f64::NEG_INFINITY)
                    })
                    .collect();
                let (best_iteration, best_score) =
                    scores
                        .iter()
                        .enumerate()
                        .fold((0, f64::NEG_INFINITY), |(bi, bs), (i, &s)| {
                            if s > bs { (i, s) } else { (bi, bs) }
                        });
                let seconds = fit.history.last().map_or(0.0, |h| h.seconds);
                if best_val_model.as_ref().is_none_or(|(s, _)| best_score > *s) {
                    best_val_model = Some((best_score, fit.into_chosen()?));
                }
                candidates.push(Candidate {
                    m,
                    gamma,
                    lambda,
                    scores,
                    best_iteration,
                    best_score,
                    seconds,
                });
            }
        }
    }
    let best = candidates
        .iter()
        .fold(None::<&Candidate>, |acc, c| match acc {
            Some(b) if b.best_score >= c.best_score => Some(b),
            _ => Some(c),
        })
        .ok_or(GimcError::Empty("selection grid"))?;
    let chosen = Chosen {
        family: family.name().to_string(),
        m: best.m,
        gamma: best.gamma,
        lambda: best.lambda,
        iterations: best.best_iteration,
        validation_score: best.best_score,
    };
    observer.fit_started(
        &SelectionStage::Refit {
            chosen: chosen.clone(),
        },
        chosen.iterations,
    );
    let map = family.build(
        data.features(),
        chosen.m,
        chosen.gamma,
        &mut child(&root, 1),
    )?;
    let lp = params.label_params(chosen.lambda, chosen.iterations, false)?;
    let fit = fit_labels(data, map, &lp, None, &mut Forward(&mut *observer))?;
    if stopped(fit.stop_reason, observer) {
        return Err(GimcError::Interrupted);
    }
    let mut model = fit.model;
    model.set_method(format!("gimc-{}", chosen.family));
    let hp = model.hyper_parameters_mut();
    hp.insert("gamma".into(), chosen.gamma);
    hp.insert("m".into(), chosen.m as f64);
    hp.insert("lambda".into(), chosen.lambda);
    hp.insert("iterations".into(), chosen.iterations as f64);
    hp.insert("validation_score".into(), chosen.validation_score);
    let validation_model = best_val_model
        .map(|(_, m)| m)
        .ok_or(GimcError::Empty("selection grid"))?;
    Ok(Selection {
        chosen,
        candidates,
        model,
        history: fit.history,
        validation_model,
        train_rows: tr,
        validation_rows: va,
    })
}

/// Combined features (DESIGN §3.3, the paper's Delicious-large row): concatenates the learned
/// maps of several selections (e.g. GIMC-LFF and GIMC-LNYS, made with the same seed and
/// validation fraction, hence the same split) and chooses the λ of the final W-step on the
/// validation part, using the maps fitted on the training part; the returned model
/// concatenates the refitted maps and fits W on all of `data` with that λ. The selections are
/// consumed: their maps move into the combined model. For maps of different types, select
/// through boxed families (e.g. from a [`MapRegistry`](crate::MapRegistry)).
pub fn select_combined<M: LearnableMap>(
    data: &LabelData,
    parts: Vec<Selection<M>>,
    lambdas: &[f64],
    select_k: usize,
) -> Result<CombinedSelection<M>> {
    let Some(first) = parts.first() else {
        return Err(GimcError::Empty("selections to combine"));
    };
    if lambdas.is_empty() {
        return Err(GimcError::Empty("lambdas"));
    }
    for &l in lambdas {
        crate::error::check_nonneg("lambda", l)?;
    }
    if parts
        .iter()
        .any(|p| p.train_rows != first.train_rows || p.validation_rows != first.validation_rows)
    {
        return Err(param_err(
            "parts",
            "the selections must share one train / validation split (same seed and fraction)",
        ));
    }
    let train = data.select_rows(&first.train_rows)?;
    let val = data.select_rows(&first.validation_rows)?;
    // the training-part maps: Φ of both parts is formed once, then one W-step per λ
    let val_maps: Vec<&M> = parts
        .iter()
        .flat_map(|p| p.validation_model.maps().iter())
        .collect();
    let problem = LabelProblem::new(&train, 0.0)?;
    let feats = problem.features(&val_maps)?;
    let phi_val = concat_features(&val_maps, val.features())?;
    let mut scores = Vec::with_capacity(lambdas.len());
    for &lambda in lambdas {
        let w = LabelProblem::new(&train, lambda)?.w_step(&feats)?;
        let score = evaluate_phi(
            PhiSource::Whole(phi_val.as_ref()),
            w.as_ref(),
            &val,
            &[select_k],
        )?
        .score(data.task(), select_k)
        .unwrap_or(f64::NEG_INFINITY);
        scores.push((lambda, score));
    }
    let (lambda, validation_score) =
        scores
            .iter()
            .copied()
            .fold((f64::NAN, f64::NEG_INFINITY), |acc, (l, s)| {
                if s > acc.1 { (l, s) } else { acc }
            });
    let maps: Vec<M> = parts
        .into_iter()
        .flat_map(|p| p.model.into_maps())
        .collect();
    let mut model = LabelModel::fit_w(maps, data, lambda)?;
    model.set_method("gimc-combined");
    let hp = model.hyper_parameters_mut();
    hp.insert("lambda".into(), lambda);
    hp.insert("validation_score".into(), validation_score);
    Ok(CombinedSelection {
        lambda,
        validation_score,
        scores,
        model,
    })
}
