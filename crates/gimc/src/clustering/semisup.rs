//! Semi-supervised clustering with GIMC (GIMC §5.2, Algorithm 2; DESIGN §3.3).
//!
//! Input: n items with features X (n × d) and pairwise constraints (i, j, s), s = 1 (similar /
//! must-link) or s = 0 (dissimilar / cannot-link). The constraints are the observed entries Ω of
//! the n × n similarity matrix A = S, symmetrically (`gimc_cluster::constraint_matrix`), and
//! Y = X. Algorithm 2:
//!
//! 1. solve GIMC eq. 13, min ½‖P_Ω(S − φ_U(X) W Hᵀ φ_V(X)ᵀ)‖² + (λ/2)(‖W‖² + ‖H‖²), with the
//!    general path [`fit_completion`](crate::fit_completion): two maps U (rows) and V (columns)
//!    started from the same random draw (the IMC-RFF / IMC-NYS solution is iteration 0) and both
//!    learned (GIMC-LFF with random Fourier features, GIMC-LNYS with learned Nyström);
//! 2. T = the top-k left singular vectors of ΦW (n × r with r the IMC rank: a thin SVD of an
//!    n × r matrix, never an n × n one);
//! 3. k-means on the rows of T (`gimc_cluster::spectral_kmeans`).
//!
//! λ is chosen from a grid (default {0.1, 0.5, 1, 5, 10}) by the constraint error of the final
//! clustering on a held-out part of Ω; the fit on the remaining constraints also keeps its
//! best-validation iterate (the iteration count, 0 meaning the unlearned start). The chosen
//! (λ, iteration count) is then refitted on all of Ω. The unlearned baseline IMC-RFF runs
//! through the same routine with [`SemiSupParams::learn`] = false.
//!
//! The maps come from any [`MapFamily`]; rows and columns (and every λ) start from the same
//! draw, made by building the map again from the same random stream (maps need not be
//! `Clone`).

use gimc_cluster::{
    KMeansParams, SpectralKMeans, ValidKMeansParams, constraint_matrix, spectral_kmeans,
};
use gimc_featmap::{LearnableMap, MapFamily};
use gimc_linalg::FeatureMatrix;
use gimc_linalg::memory::{MemoryEstimate, Tally, check_fits};
use gimc_linalg::rng::{GimcRng, child};
use gimc_metrics::constraint_error;
use gimc_solvers::{NoObserver, Observer};
use rand::seq::SliceRandom;

use crate::completion::data::CompletionData;
use crate::completion::fit::{CompletionInputs, fit_completion};
use crate::completion::model::{CompletionModel, CompletionParts};
use crate::completion::params::CompletionParams;
use crate::error::{GimcError, Result};
use crate::error::{input_err, param_err};
use gimc_linalg::Gamma;

/// The λ grid of the paper (GIMC §5.2).
pub const DEFAULT_LAMBDAS: [f64; 5] = [0.1, 0.5, 1.0, 5.0, 10.0];

/// Hyper-parameters of [`fit_semisupervised`]. Build with [`SemiSupParams::new`] (k, m and γ
/// have no default) and the `with_*` methods; [`SemiSupParams::check`] validates them into the
/// [`ValidSemiSupParams`] that [`fit_semisupervised`] takes.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SemiSupParams {
    /// Number of clusters k (≥ 1, ≤ n).
    pub k: usize,
    /// Size m of the feature map (directions or landmarks, ≥ 1); the same initial draw is
    /// used for rows and columns.
    pub m: usize,
    /// Inverse length scale γ of the feature map: a value > 0 or a multiple of the scale rule
    /// resolved on the features passed to the fit ([`Gamma`]).
    pub gamma: Gamma,
    /// Learn the maps (GIMC-LFF / GIMC-LNYS); `false` gives the unlearned baseline (IMC-RFF /
    /// IMC-NYS: just the IMC start). Default true.
    pub learn: bool,
    /// The λ grid (non-empty, each ≥ 0). Default [`DEFAULT_LAMBDAS`].
    pub lambdas: Vec<f64>,
    /// Fraction of the constraints held out to choose λ and the iteration count, in (0, 1).
    /// Default 0.2. With a single λ and `learn` = false nothing needs choosing, and all
    /// constraints are used at once.
    pub holdout: f64,
    /// Settings of the completion fit (rank r of Z = WHᵀ, iterations, CG, line search); its
    /// `lambda` is replaced by each grid value. Default rank = k, 10 outer iterations.
    pub completion: CompletionParams,
    /// k-means on the embedding T. Default k clusters, 10 restarts.
    pub kmeans: KMeansParams,
    /// Refit the chosen (λ, iteration count) on all constraints (default true); `false` keeps
    /// the selection fit on the training part of the constraints.
    pub refit: bool,
}

impl SemiSupParams {
    /// `k` clusters with maps of size `m` and inverse length scale `gamma`: rank k, λ grid of
    /// the paper, 20 % held out, 10 outer iterations, k-means with 10 restarts, refit on all
    /// constraints.
    pub fn new(k: usize, m: usize, gamma: impl Into<Gamma>) -> Self {
        Self {
            k,
            m,
            gamma: gamma.into(),
            learn: true,
            lambdas: DEFAULT_LAMBDAS.to_vec(),
            holdout: 0.2,
            completion: CompletionParams {
                rank: k.max(1),
                ..CompletionParams::default()
            },
            kmeans: KMeansParams::new(k).with_n_init(10),
            refit: true,
        }
    }

    /// Sets the inverse length scale γ of the feature map.
    pub fn with_gamma(mut self, gamma: impl Into<Gamma>) -> Self {
        self.gamma = gamma.into();
        self
    }

    /// Sets whether the maps are learned.
    pub fn with_learn(mut self, learn: bool) -> Self {
        self.learn = learn;
        self
    }

    /// Sets the λ grid.
    pub fn with_lambdas(mut self, lambdas: Vec<f64>) -> Self {
        self.lambdas = lambdas;
        self
    }

    /// Sets the fraction of the constraints held out to choose λ and the iteration count.
    pub fn with_holdout(mut self, holdout: f64) -> Self {
        self.holdout = holdout;
        self
    }

    /// Sets the settings of the completion fit.
    pub fn with_completion(mut self, completion: CompletionParams) -> Self {
        self.completion = completion;
        self
    }

    /// Sets the k-means on the embedding (its k must stay the number of clusters k).
    pub fn with_kmeans(mut self, kmeans: KMeansParams) -> Self {
        self.kmeans = kmeans;
        self
    }

    /// Sets whether the chosen (λ, iteration count) is refitted on all constraints.
    pub fn with_refit(mut self, refit: bool) -> Self {
        self.refit = refit;
        self
    }

    /// Checks k, the map, the grid, the held-out fraction and the completion / k-means settings.
    pub fn check(&self) -> Result<ValidSemiSupParams> {
        if self.k == 0 {
            return Err(param_err("k", "must be at least 1"));
        }
        if self.kmeans.k != self.k {
            return Err(param_err(
                "kmeans.k",
                format!("must equal k = {}, got {}", self.k, self.kmeans.k),
            ));
        }
        if self.m == 0 {
            return Err(param_err("m", "must be at least 1"));
        }
        self.gamma.check()?;
        if self.lambdas.is_empty() {
            return Err(GimcError::Empty("λ grid"));
        }
        if let Some(l) = self.lambdas.iter().find(|l| !(l.is_finite() && **l >= 0.0)) {
            return Err(param_err(
                "lambdas",
                format!("each must be finite and >= 0, got {l}"),
            ));
        }
        if !(self.holdout > 0.0 && self.holdout < 1.0) {
            return Err(param_err(
                "holdout",
                format!("must lie in (0, 1), got {}", self.holdout),
            ));
        }
        self.completion.check()?;
        let kmeans = self.kmeans.check()?;
        Ok(ValidSemiSupParams {
            params: self.clone(),
            kmeans,
        })
    }

    fn needs_selection(&self) -> bool {
        self.learn || self.lambdas.len() > 1
    }
}

/// [`SemiSupParams`] that passed [`SemiSupParams::check`].
#[derive(Debug, Clone, PartialEq)]
pub struct ValidSemiSupParams {
    params: SemiSupParams,
    kmeans: ValidKMeansParams,
}

impl ValidSemiSupParams {
    /// The checked k-means parameters of the embedding.
    pub fn valid_kmeans(&self) -> &ValidKMeansParams {
        &self.kmeans
    }
}

impl std::ops::Deref for ValidSemiSupParams {
    type Target = SemiSupParams;
    fn deref(&self) -> &SemiSupParams {
        &self.params
    }
}

/// One λ of the grid, scored on the held-out constraints.
#[derive(Debug, Clone, PartialEq)]
pub struct LambdaScore {
    /// λ.
    pub lambda: f64,
    /// Constraint error of the clustering on the held-out pairs (the selection criterion).
    pub constraint_error: f64,
    /// The best-validation outer iteration of the completion fit (0 = the unlearned start).
    pub iteration: usize,
    /// Objective of the unlearned start and of the chosen iterate, on the training constraints.
    pub objectives: (f64, f64),
}

/// The result of [`fit_semisupervised`].
#[derive(Debug, Clone, PartialEq)]
pub struct SemiSupFit<M> {
    /// Cluster of every item (0..k).
    pub labels: Vec<usize>,
    /// The map's γ (the resolved value when the parameter was a multiple of the scale rule).
    pub gamma: f64,
    /// The chosen λ.
    pub lambda: f64,
    /// The chosen outer-iteration count (0: the unlearned IMC start).
    pub iterations: usize,
    /// One score per grid value, in grid order (empty when nothing was selected).
    pub validation: Vec<LambdaScore>,
    /// Constraint error of the final clustering on all given constraints (training error).
    pub train_constraint_error: f64,
    /// The fitted completion model (maps, W, H).
    pub model: CompletionModel<M, M>,
    /// The embedding T and its k-means.
    pub spectral: SpectralKMeans,
}

/// Checks X for NaN / Inf (reported with its position).
fn check_features(x: &FeatureMatrix) -> Result<()> {
    match x {
        FeatureMatrix::Dense(m) => gimc_linalg::dense::check_finite(m.as_ref())?,
        FeatureMatrix::Sparse(m) => {
            for (&v, (i, j)) in m.iter() {
                if !v.is_finite() {
                    return Err(input_err(
                        "features X",
                        format!("non-finite value {v} at ({i}, {j})"),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Checks the constraints against n items (non-empty, indices < n, labels 0 or 1).
fn check_pairs(n: usize, pairs: &[(usize, usize, f64)]) -> Result<()> {
    if pairs.is_empty() {
        return Err(GimcError::Empty("constraints"));
    }
    for (pos, &(i, j, s)) in pairs.iter().enumerate() {
        if i >= n || j >= n {
            return Err(input_err(
                "constraints",
                format!("pair {pos} = ({i}, {j}) names an item >= n = {n}"),
            ));
        }
        if s != 0.0 && s != 1.0 {
            return Err(input_err(
                "constraints",
                format!("pair {pos} has label {s}; expected 1 (similar) or 0 (dissimilar)"),
            ));
        }
    }
    Ok(())
}

/// One λ's fit: the chosen model, its iteration, the objectives of the start and of the chosen
/// iterate, and the clustering of its embedding.
struct OneFit<M> {
    model: CompletionModel<M, M>,
    iteration: usize,
    objectives: (f64, f64),
    spectral: SpectralKMeans,
}

/// Forwards to an observer and remembers whether it ever asked to stop.
struct StopLatch<'a> {
    inner: &'a mut dyn Observer,
    stopped: bool,
}

impl Observer for StopLatch<'_> {
    fn observe(&mut self, record: &gimc_solvers::IterationRecord) -> gimc_solvers::ObserverAction {
        let action = self.inner.observe(record);
        if action == gimc_solvers::ObserverAction::Stop {
            self.stopped = true;
        }
        action
    }
}

/// Fits the completion for one λ on `train` (validation entries `val`, if any), then the
/// spectral k-means on ΦW of the chosen iterate. With `keep_start`, also the unlearned
/// baseline's result from the fit's IMC start (its embedding from the same stream), with the
/// seconds of the start and of that embedding.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn fit_one<M: LearnableMap>(
    x: &FeatureMatrix,
    train: &[(usize, usize, f64)],
    val: Option<&[(usize, usize, f64)]>,
    draw: &impl Fn() -> Result<M>,
    params: &ValidSemiSupParams,
    lambda: f64,
    max_iter: usize,
    keep_start: bool,
    rng: &GimcRng,
    observer: &mut dyn Observer,
) -> Result<(OneFit<M>, Option<(OneFit<M>, f64)>)> {
    let n = x.nrows();
    let omega = constraint_matrix(n, train)?;
    let val_omega = match val {
        Some(v) => Some(constraint_matrix(n, v)?),
        None => None,
    };
    let data = CompletionData::new(&omega, x, x)?;
    let cp = CompletionParams {
        lambda,
        max_iter: if params.learn { max_iter } else { 0 },
        learn_rows: params.learn,
        learn_cols: params.learn,
        keep_start,
        ..params.completion
    }
    .check()?;
    let mut fit = fit_completion(
        CompletionInputs {
            data: data.with_validation(val_omega.as_ref()),
            row_map: draw()?,
            col_map: draw()?,
        },
        &cp,
        &mut child(rng, 1),
        observer,
    )?;
    let start_obj = fit.start_objective();
    let start = match fit.start.take() {
        Some(s) => {
            let t = std::time::Instant::now();
            let secs = fit.history.first().map_or(0.0, |h| h.seconds);
            let model = CompletionModel::new(CompletionParts {
                row_map: draw()?,
                col_map: draw()?,
                w: s.w.clone(),
                h: s.h.clone(),
                lambda,
            })?;
            let model = s.restore_into(model)?;
            let one = embed(x, model, 0, (start_obj, start_obj), params, rng)?;
            Some((one, secs + t.elapsed().as_secs_f64()))
        }
        None => None,
    };
    let iteration = fit.chosen_iteration();
    let chosen_obj = fit.history.get(iteration).map_or(f64::NAN, |h| h.objective);
    let model = fit.into_chosen()?;
    Ok((
        embed(x, model, iteration, (start_obj, chosen_obj), params, rng)?,
        start,
    ))
}

/// The spectral k-means on ΦW of `model` (the stream `child(rng, 2)`).
fn embed<M: LearnableMap>(
    x: &FeatureMatrix,
    model: CompletionModel<M, M>,
    iteration: usize,
    objectives: (f64, f64),
    params: &ValidSemiSupParams,
    rng: &GimcRng,
) -> Result<OneFit<M>> {
    let p = model.row_factors(x)?;
    let spectral = spectral_kmeans(p.as_ref(), params.valid_kmeans(), &mut child(rng, 2))?;
    Ok(OneFit {
        model,
        iteration,
        objectives,
        spectral,
    })
}

fn scores_err(scores: &[LambdaScore], i: usize) -> f64 {
    scores.get(i).map_or(f64::INFINITY, |s| s.constraint_error)
}

/// The estimated peak memory of [`fit_semisupervised`] on `x` with `n_pairs` constraints: the
/// completion of the n × n constraint matrix (Ω holds both orientations of every pair, the
/// held-out part as validation entries) with X on both sides and maps of size m (taken to have
/// d·m parameters), plus the spectral embedding and k-means (n × k). The parameter to lower is
/// `m`. Errors when the family refuses m.
pub fn estimate_semisupervised<F: MapFamily + ?Sized>(
    x: &FeatureMatrix,
    n_pairs: usize,
    family: &F,
    params: &SemiSupParams,
) -> Result<MemoryEstimate> {
    use crate::memory::{CompletionShape, Side, add_completion, feature_bytes, observed_bytes};
    let n = x.nrows();
    let dim = family.output_dim(params.m)?;
    let entries = n_pairs.saturating_mul(2);
    let val = if params.needs_selection() {
        ((entries as f64) * params.holdout).round() as usize
    } else {
        0
    };
    let side = Side {
        rows: n,
        features: x.ncols(),
        m: params.m,
        dim,
        learn: params.learn,
    };
    let mut t = Tally::new("semi-supervised clustering", "m");
    t.bytes("process", crate::memory::PROCESS_BASE_BYTES)
        .bytes("X", feature_bytes(x))
        .bytes(
            "constraints and Ω",
            observed_bytes(n, n, entries)
                .saturating_add(gimc_linalg::memory::mat_bytes(n_pairs, 3)),
        )
        .bytes(
            "embedding and k-means",
            gimc_linalg::memory::mat_bytes(n, params.completion.rank.saturating_add(params.k))
                .saturating_mul(2),
        );
    add_completion(
        &mut t,
        &CompletionShape {
            x: side,
            y: side,
            rank: params.completion.rank,
            nnz: entries.saturating_sub(val),
            validation_nnz: val,
            max_iter: if params.learn {
                params.completion.max_iter
            } else {
                0
            },
            keep_start: params.completion.keep_start,
        },
    );
    Ok(t.finish())
}

/// What [`fit_semisupervised`] clusters: the points, the pairwise constraints on them and the
/// family of the map drawn on them.
pub struct SemiSupInputs<'a, F: ?Sized> {
    /// The points X (n × d).
    pub x: &'a FeatureMatrix,
    /// The constraints (i, j, s) on the rows of `x` (s = 1: same cluster, 0: different).
    pub pairs: &'a [(usize, usize, f64)],
    /// The family of the map.
    pub family: &'a F,
}

impl<F: ?Sized> Clone for SemiSupInputs<'_, F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F: ?Sized> Copy for SemiSupInputs<'_, F> {}

/// Semi-supervised clustering by GIMC (Algorithm 2; module documentation) of `inputs`: the map
/// of its family is drawn from `rng` once (the same draw for every λ and for rows and columns),
/// and the held-out split, IMC starts and k-means restarts use further streams of it.
///
/// Errors (the parameters were checked by [`SemiSupParams::check`]): no constraints, an index
/// ≥ n, a label other than 0 / 1, the same pair with both labels, NaN / Inf in `x`, k > n,
/// rank ≥ the map's output dimension, too few constraints to hold some out; fit failures of
/// [`fit_completion`].
///
/// `observer` sees every outer iteration of every completion fit (one per λ, then the refit;
/// [`NoObserver`] for none). An observer that asks to stop (e.g. on Ctrl-C) ends the running
/// fit, and the whole fit returns [`GimcError::Interrupted`].
pub fn fit_semisupervised<F: MapFamily + ?Sized>(
    inputs: SemiSupInputs<'_, F>,
    params: &ValidSemiSupParams,
    rng: &mut GimcRng,
    observer: &mut dyn Observer,
) -> Result<SemiSupFit<F::Map>> {
    let SemiSupInputs { x, pairs, family } = inputs;
    Ok(fit_both(x, pairs, family, params, false, rng, observer)?.0)
}

/// GIMC (learned maps) and its unlearned baseline (IMC-RFF / IMC-NYS) from one pass: the same
/// two results as [`fit_semisupervised`] with `learn` true and with `learn` false from the
/// same `rng` state, bit for bit, but each λ's IMC start, which both share (iteration 0 of the
/// learned fit is the unlearned fit), is solved once, as is the refit's when both choose the
/// same λ. `params.learn` must be true.
pub fn fit_semisupervised_with_start<F: MapFamily + ?Sized>(
    inputs: SemiSupInputs<'_, F>,
    params: &ValidSemiSupParams,
    rng: &mut GimcRng,
) -> Result<SemiSupPair<F::Map>> {
    let SemiSupInputs { x, pairs, family } = inputs;
    if !params.learn {
        return Err(param_err(
            "learn",
            "must be true: the unlearned fit is the learned fit's start",
        ));
    }
    let (learned, start) = fit_both(x, pairs, family, params, true, rng, &mut NoObserver)?;
    let (start, start_seconds) = start.ok_or(GimcError::Empty("unlearned start"))?;
    Ok(SemiSupPair {
        start,
        learned,
        start_seconds,
    })
}

/// The two results of [`fit_semisupervised_with_start`].
#[derive(Debug, Clone, PartialEq)]
pub struct SemiSupPair<M> {
    /// The unlearned baseline (`learn` = false), as [`fit_semisupervised`] gives it.
    pub start: SemiSupFit<M>,
    /// GIMC with learned maps, as [`fit_semisupervised`] gives it.
    pub learned: SemiSupFit<M>,
    /// Seconds the baseline's own work took (its IMC starts, embeddings and refit), as if it
    /// had run alone.
    pub start_seconds: f64,
}

/// The selection and refit of [`fit_semisupervised`]; with `with_start` (and
/// `params.learn`) also the unlearned baseline's, from the learned fits' starts, with the
/// seconds of its own work.
#[allow(clippy::type_complexity)]
fn fit_both<F: MapFamily + ?Sized>(
    x: &FeatureMatrix,
    pairs: &[(usize, usize, f64)],
    family: &F,
    params: &ValidSemiSupParams,
    with_start: bool,
    rng: &mut GimcRng,
    observer: &mut dyn Observer,
) -> Result<(SemiSupFit<F::Map>, Option<(SemiSupFit<F::Map>, f64)>)> {
    let mut latch = StopLatch {
        inner: observer,
        stopped: false,
    };
    let observer = &mut latch;
    // the baseline from the learned fits' starts: each fit keeps a copy of its start
    let shares = with_start && params.learn;
    check_inputs(x, pairs, family, params, shares)?;
    let base = child(rng, 0x5353_4331);
    let gamma = params.gamma.resolve(x);
    let draw = || -> Result<F::Map> { Ok(family.build(x, params.m, gamma, &mut child(&base, 0))?) };
    check_rank(family, params)?;
    // the baseline's parameters: the same, unlearned
    let start_params = shares.then(|| ValidSemiSupParams {
        params: SemiSupParams {
            learn: false,
            ..params.params.clone()
        },
        kmeans: params.kmeans.clone(),
    });
    let run = Run {
        x,
        pairs,
        draw: &draw,
        base: &base,
    };
    // the selection fits on the training constraints, scored on the held-out ones
    let (mut learned, mut start) = if params.needs_selection() {
        run.select(params, start_params.as_ref(), observer)?
    } else {
        (Selection::default(), Selection::default())
    };
    let (lambda, iterations) = learned.choice(params)?;
    // the refits on all constraints (or the selection fits kept)
    let mut start_refit = None;
    let (model, spectral) = match learned.best.take() {
        Some((_, one)) if !params.refit => (one.model, one.spectral),
        _ => {
            let (one, start_one) = run.fit(
                pairs,
                None,
                params,
                (lambda, iterations),
                start_params.is_some(),
                3,
                &mut *observer,
            )?;
            if observer.stopped {
                return Err(GimcError::Interrupted);
            }
            // the learned refit's start is the baseline's refit when both chose this λ
            start_refit = start_one.map(|s| (lambda, s));
            (one.model, one.spectral)
        }
    };
    let learned_fit = finish(pairs, gamma, (lambda, iterations), learned, model, spectral)?;
    let Some(sp) = start_params else {
        return Ok((learned_fit, None));
    };
    let (s_lambda, _) = start.choice(&sp)?;
    let (model, spectral) = match (start.best.take(), start_refit) {
        (Some((_, one)), _) if !sp.refit => (one.model, one.spectral),
        (_, Some((l, (one, secs)))) if l == s_lambda => {
            start.seconds += secs;
            (one.model, one.spectral)
        }
        _ => {
            let t = std::time::Instant::now();
            let (one, _) = run.fit(pairs, None, &sp, (s_lambda, 0), false, 3, &mut NoObserver)?;
            start.seconds += t.elapsed().as_secs_f64();
            (one.model, one.spectral)
        }
    };
    let seconds = start.seconds;
    let start_fit = finish(pairs, gamma, (s_lambda, 0), start, model, spectral)?;
    Ok((learned_fit, Some((start_fit, seconds))))
}

/// The checks before any work: items, k, the pairs, the features, the memory estimate (with
/// the copies of the starts when the baseline `shares` the learned fits) and conflicting
/// duplicate constraints.
fn check_inputs<F: MapFamily + ?Sized>(
    x: &FeatureMatrix,
    pairs: &[(usize, usize, f64)],
    family: &F,
    params: &ValidSemiSupParams,
    shares: bool,
) -> Result<()> {
    let n = x.nrows();
    if n == 0 {
        return Err(GimcError::Empty("items (rows of X)"));
    }
    if params.k > n {
        return Err(param_err(
            "k",
            format!("cannot form {} clusters from {n} items", params.k),
        ));
    }
    check_pairs(n, pairs)?;
    check_features(x)?;
    let estimated = SemiSupParams {
        completion: CompletionParams {
            keep_start: params.completion.keep_start || shares,
            ..params.completion
        },
        ..params.params.clone()
    };
    check_fits(
        &estimate_semisupervised(x, pairs.len(), family, &estimated)?,
        params.completion.memory,
    )?;
    // conflicting duplicates are reported here, before any work
    constraint_matrix(n, pairs)?;
    Ok(())
}

/// The completion rank must be below the map's output dimension.
fn check_rank<F: MapFamily + ?Sized>(family: &F, params: &ValidSemiSupParams) -> Result<()> {
    let dim = family.output_dim(params.m)?;
    if params.completion.rank >= dim {
        return Err(param_err(
            "completion.rank",
            format!(
                "must be below the map's output dimension {}, got {}",
                dim, params.completion.rank
            ),
        ));
    }
    Ok(())
}

/// What every fit of one [`fit_both`] shares: the items, all constraints, the map draw and the
/// base stream (child 1 shuffles the constraints, 2 seeds the selection fits, 3 the refits).
struct Run<'a, D> {
    x: &'a FeatureMatrix,
    pairs: &'a [(usize, usize, f64)],
    draw: &'a D,
    base: &'a GimcRng,
}

impl<M: LearnableMap, D: Fn() -> Result<M>> Run<'_, D> {
    /// [`fit_one`] on `train` at (λ, iteration budget) from child `stream` of the base stream.
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn fit(
        &self,
        train: &[(usize, usize, f64)],
        val: Option<&[(usize, usize, f64)]>,
        params: &ValidSemiSupParams,
        (lambda, max_iter): (f64, usize),
        keep_start: bool,
        stream: u64,
        observer: &mut dyn Observer,
    ) -> Result<(OneFit<M>, Option<(OneFit<M>, f64)>)> {
        fit_one(
            self.x,
            train,
            val,
            self.draw,
            params,
            lambda,
            max_iter,
            keep_start,
            &child(self.base, stream),
            observer,
        )
    }

    /// The held-out constraints (a seeded fraction `params.holdout` of them) and the rest.
    #[allow(clippy::type_complexity)]
    fn holdout(
        &self,
        params: &ValidSemiSupParams,
    ) -> Result<(Vec<(usize, usize, f64)>, Vec<(usize, usize, f64)>)> {
        let pairs = self.pairs;
        let mut order: Vec<usize> = (0..pairs.len()).collect();
        order.shuffle(&mut child(self.base, 1));
        let n_val = ((pairs.len() as f64 * params.holdout).round() as usize).max(1);
        if n_val >= pairs.len() {
            return Err(input_err(
                "constraints",
                format!(
                    "{} pairs are too few to hold out a fraction {} for choosing λ",
                    pairs.len(),
                    params.holdout
                ),
            ));
        }
        let val = order[..n_val].iter().map(|&p| pairs[p]).collect();
        let train = order[n_val..].iter().map(|&p| pairs[p]).collect();
        Ok((val, train))
    }

    /// The selection over the λ grid: every λ fitted on the training constraints and scored on
    /// the held-out ones, for the learned maps and (with `start_params`) for the baseline from
    /// the same fits' starts.
    fn select(
        &self,
        params: &ValidSemiSupParams,
        start_params: Option<&ValidSemiSupParams>,
        observer: &mut StopLatch<'_>,
    ) -> Result<(Selection<M>, Selection<M>)> {
        let mut learned = Selection::default();
        let mut start = Selection::default();
        let (val, train) = self.holdout(params)?;
        for &lambda in &params.lambdas {
            let (one, start_one) = self.fit(
                &train,
                Some(&val),
                params,
                (lambda, params.completion.max_iter),
                start_params.is_some(),
                2,
                &mut *observer,
            )?;
            if observer.stopped {
                return Err(GimcError::Interrupted);
            }
            learned.score(lambda, one, &val)?;
            if let (Some(sp), Some((one, secs))) = (start_params, start_one)
                && sp.needs_selection()
            {
                start.seconds += secs;
                start.score(lambda, one, &val)?;
            }
        }
        Ok((learned, start))
    }
}

/// One method's selection over the λ grid: the scores in grid order and the best fit so far.
struct Selection<M> {
    scores: Vec<LambdaScore>,
    best: Option<(usize, OneFit<M>)>,
    /// Seconds of the method's own work (the baseline's, when it shares the learned fits).
    seconds: f64,
}

impl<M> Default for Selection<M> {
    fn default() -> Self {
        Self {
            scores: Vec::new(),
            best: None,
            seconds: 0.0,
        }
    }
}

impl<M> Selection<M> {
    /// Scores `one` (fitted with `lambda`) on the held-out constraints `val`: the lowest
    /// constraint error is kept, ties going to the earlier grid value.
    fn score(&mut self, lambda: f64, one: OneFit<M>, val: &[(usize, usize, f64)]) -> Result<()> {
        let score = LambdaScore {
            lambda,
            constraint_error: constraint_error(val, &one.spectral.kmeans.labels)?,
            iteration: one.iteration,
            objectives: one.objectives,
        };
        if self
            .best
            .as_ref()
            .is_none_or(|(b, _)| score.constraint_error < scores_err(&self.scores, *b))
        {
            self.best = Some((self.scores.len(), one));
        }
        self.scores.push(score);
        Ok(())
    }

    /// The chosen (λ, iteration count): the best score's, or the grid's first λ and no
    /// iterations when nothing was selected.
    fn choice(&self, params: &SemiSupParams) -> Result<(f64, usize)> {
        if !params.needs_selection() {
            return Ok((params.lambdas[0], 0));
        }
        let (bi, _) = self.best.as_ref().ok_or(GimcError::Empty("λ grid"))?;
        let s = &self.scores[*bi];
        Ok((s.lambda, s.iteration))
    }
}

/// The fit's result from the chosen model and its clustering.
fn finish<M>(
    pairs: &[(usize, usize, f64)],
    gamma: f64,
    (lambda, iterations): (f64, usize),
    selection: Selection<M>,
    model: CompletionModel<M, M>,
    spectral: SpectralKMeans,
) -> Result<SemiSupFit<M>> {
    let labels = spectral.kmeans.labels.clone();
    let train_constraint_error = constraint_error(pairs, &labels)?;
    Ok(SemiSupFit {
        labels,
        gamma,
        lambda,
        iterations,
        validation: selection.scores,
        train_constraint_error,
        model,
        spectral,
    })
}
