//! The stages of the search on one transform: single blocks, unions, learned maps, and the
//! refit of the choice on all training rows.

use super::blocks::{Blocks, solve_blocks};
use super::report::{AutoStage, AutoTrial};
use super::search::{
    FIRST_ROUND, Fold, GridSearch, LEARN_CANDIDATES, LEARN_LAMBDAS, Search, Spec, TransformBest,
    best_of_each_kind, best_of_mean, better, union_lambdas, unions, validation_curve,
};
use super::transform::RowTransform;
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use gimc_featmap::{Constant, FeatureMap, Identity, LearnableMap, MapFamily};
use gimc_linalg::faer::Mat;
use gimc_linalg::observe::{IterationRecord, Observer, ObserverAction};
use gimc_linalg::{Gamma, Preprocess};

use crate::error::param_err;
use crate::error::{GimcError, Result};
use crate::labels::data::LabelData;
use crate::labels::fit::{LabelFit, LabelParams, fit_labels, fit_labels_sharded};
use crate::labels::model::LabelModel;
use crate::labels::select::{Forward, SelectionObserver, SelectionStage, stopped};
use crate::labels::shard::{RowSums, sum_scalar};
use crate::outer::FitStop;
use crate::registry::BoxedMap;

impl Search<'_> {
    /// Stage 1 on one transform: every block alone, the linear part and each family's maps
    /// along the grid of γ ([`gamma_search`]: a walk from its middle when the grid
    /// increases); the trials are appended to `trials`. Returns the best and every block's
    /// best λ and score.
    pub(super) fn singles(
        &self,
        transform: RowTransform,
        folds: &[Fold],
        linear: bool,
        trials: &mut Vec<AutoTrial>,
    ) -> Result<TransformBest> {
        let grid = lambda_search(&self.params.lambdas);
        let mut best: Option<AutoTrial> = None;
        let mut all: Vec<(Spec, f64, f64)> = Vec::new();
        let mut score = |spec: Spec| -> Result<f64> {
            let set = [spec];
            let scores = self.cv_scores(folds, &[set.to_vec()], std::slice::from_ref(&grid))?;
            let t = self.trial(AutoStage::Fixed, transform, &set, &scores[0], &folds[0]);
            best = better(best.take(), &t);
            all.push((spec, t.lambda, t.score));
            let score = t.score;
            trials.push(t);
            // only the best block of each kind so far stays (and goes on to the unions) with
            // the intercept every union holds: a fold holds at most one block more than that
            let mut specs = best_of_each_kind(&all);
            specs.push(Spec::Bias);
            for fold in folds {
                fold.keep_only(&specs);
            }
            Ok(score)
        };
        if linear {
            score(Spec::Linear)?;
        }
        let walk = gamma_search(&self.params.gammas);
        for family in 0..self.families.len() {
            let mut scores = vec![f64::NEG_INFINITY; self.params.gammas.len()];
            let mut wanted = walk.first();
            while !wanted.is_empty() {
                for &gamma in &wanted {
                    scores[gamma] = score(Spec::Map { family, gamma })?;
                }
                wanted = walk.after(&wanted, &scores);
            }
        }
        Ok((best, all))
    }

    /// Stage 2 on one transform: every union of two or more of the best block of each kind
    /// (`singles` from [`Search::singles`]); the trials are appended to `trials`. Returns the
    /// best union.
    pub(super) fn unions(
        &self,
        transform: RowTransform,
        folds: &[Fold],
        singles: &[(Spec, f64, f64)],
        trials: &mut Vec<AutoTrial>,
    ) -> Result<Option<AutoTrial>> {
        let sets = unions(&best_of_each_kind(singles));
        let ranges: Vec<_> = sets
            .iter()
            .map(|set| union_lambdas(&self.params.lambdas, set, singles))
            .collect();
        let scores = self.cv_scores(folds, &sets, &ranges)?;
        let mut best = None;
        for (set, sc) in sets.iter().zip(&scores) {
            let t = self.trial(AutoStage::Combined, transform, set, sc, &folds[0]);
            best = better(best, &t);
            trials.push(t);
        }
        Ok(best)
    }

    /// Stage 3, successive halving over the maps with the best fixed scores (`singles`: every
    /// single block with its best λ and score): the best [`LEARN_CANDIDATES`] maps (one on a
    /// single split), each at its fixed λ and ten times it, are learned on every fold for
    /// [`FIRST_ROUND`] outer iterations, the better half by the best of their mean validation
    /// curve to 2·[`FIRST_ROUND`] + 1, and the better half of those to
    /// [`AutoParams::max_iter`], each round resuming from the last iterate of the round before
    /// ([`FoldRun`]); a candidate whose mean curve has not improved for
    /// [`AutoParams::patience`] iterations at the end of a round runs no further. Each map's
    /// iteration count is the best of its mean curve over the folds (0: the random map stays),
    /// and each fold's learned map is its best validation iterate.
    /// Every learned map alone, and every union of the best block of each kind holding a
    /// learned map, is then scored; returns those trials (stage [`AutoStage::Learned`]).
    pub(super) fn learn<S: SelectionObserver + ?Sized>(
        &mut self,
        transform: RowTransform,
        folds: &[Fold],
        singles: &[(Spec, f64, f64)],
        observer: &mut S,
    ) -> Result<Vec<AutoTrial>> {
        // the maps with the best fixed scores start (the earliest on ties)
        let mut ranked: Vec<(usize, usize, f64, f64)> = singles
            .iter()
            .filter_map(|&(s, l, score)| match s {
                Spec::Map { family, gamma } => Some((family, gamma, l, score)),
                _ => None,
            })
            .collect();
        ranked.sort_by(|a, b| b.3.total_cmp(&a.3));
        // the learning's own λ is searched too: the fixed map's best λ, and ten times it (a
        // stiffer W lets the map move further before it over-fits)
        let mut cands: Vec<(usize, usize, f64)> = ranked
            .iter()
            .take(if folds.len() > 1 { LEARN_CANDIDATES } else { 1 })
            .flat_map(|&(f, g, l, _)| LEARN_LAMBDAS.iter().map(move |&x| (f, g, l * x)))
            .collect();
        // rounds of (iterations, candidates): every map for a few iterations, then the better
        // half for more, then the best quarter to the end
        let mut rounds: Vec<(usize, usize)> = Vec::new();
        let mut keep = cands.len();
        for iters in [FIRST_ROUND, 2 * FIRST_ROUND + 1, self.params.max_iter] {
            let iters = iters.min(self.params.max_iter);
            if rounds.last().is_some_and(|r| r.0 >= iters) || keep == 0 {
                break;
            }
            match rounds.last_mut() {
                // the same candidates: one longer round instead of two
                Some(last) if last.1 == keep => last.0 = iters,
                _ => rounds.push((iters, keep)),
            }
            keep = keep.div_ceil(2);
        }
        let total: usize = rounds.iter().map(|r| r.1).sum::<usize>() * folds.len();
        let mut started = 0;
        // each candidate's learning on each fold, resumed from round to round (warm starts)
        let mut runs: Vec<Vec<FoldRun>> = Vec::new();
        for (round, &(iters, keep)) in rounds.iter().enumerate() {
            cands.truncate(keep);
            runs.truncate(keep);
            for (c, &(family, gamma, lambda)) in cands.iter().enumerate() {
                if runs.len() == c {
                    runs.push(Vec::with_capacity(folds.len()));
                }
                for fold in folds.iter().skip(runs[c].len()) {
                    let g = self.params.gammas[gamma].resolve(fold.train.features());
                    let map = self.draw(family, g, fold.train.features())?;
                    let sq = map.forward(fold.train.features())?.squared_norm_l2()
                        / fold.train.nrows().max(1) as f64;
                    runs[c].push(FoldRun::new(map, lambda * if sq > 0.0 { sq } else { 1.0 }));
                }
            }
            // the last round of one split stops on patience
            let patience =
                (folds.len() == 1 && round + 1 == rounds.len()).then_some(self.params.patience);
            // this round's runs: every candidate's unfinished folds
            let mut jobs: Vec<LearnJob<'_>> = Vec::new();
            for (c, runs_c) in runs.iter_mut().enumerate() {
                let (family, gamma, _) = cands[c];
                for (run, fold) in runs_c.iter_mut().zip(folds) {
                    if run.stopped || run.iterations() >= iters {
                        continue;
                    }
                    let g = self.params.gammas[gamma].resolve(fold.train.features());
                    observer.fit_started(
                        &SelectionStage::Candidate {
                            index: started.min(total - 1),
                            total,
                            m: self.sizes[family],
                            gamma: g,
                            lambda: run.lambda,
                        },
                        iters - run.iterations(),
                    );
                    started += 1;
                    jobs.push(LearnJob {
                        run,
                        train: &fold.train,
                        val: &fold.val,
                    });
                }
            }
            self.run_jobs(jobs, iters, patience, observer)?;
            if observer.interrupted() {
                return Err(GimcError::Interrupted);
            }
            // the better half (by the best of the mean curve) goes on; a candidate whose mean
            // curve has not improved for `patience` iterations has found its best and runs no
            // further (its folds are done)
            let means: Vec<(usize, f64)> = runs.iter().map(|r| mean_curve_best(r)).collect();
            for (runs_c, &(best, _)) in runs.iter_mut().zip(&means) {
                let ran = runs_c.iter().map(FoldRun::iterations).min().unwrap_or(0);
                if ran >= best + self.params.patience {
                    for run in runs_c.iter_mut() {
                        run.stopped = true;
                    }
                }
            }
            let mut order: Vec<usize> = (0..cands.len()).collect();
            order.sort_by(|&a, &b| means[b].1.total_cmp(&means[a].1));
            cands = order.iter().map(|&i| cands[i]).collect();
            let mut taken: Vec<Option<Vec<FoldRun>>> = runs.drain(..).map(Some).collect();
            runs = order.iter().filter_map(|&i| taken[i].take()).collect();
        }
        let mut results: Vec<(usize, f64, Vec<BoxedMap>)> = Vec::with_capacity(runs.len());
        for r in runs {
            let (t, score) = mean_curve_best(&r);
            let maps = r
                .into_iter()
                .map(FoldRun::into_best_map)
                .collect::<Result<Vec<_>>>()?;
            results.push((t, score, maps));
        }
        let mut best_score: HashMap<(usize, usize), f64> = HashMap::new();
        for (&(family, gamma, _), (t, score, maps)) in cands.iter().zip(results) {
            let key = (family, gamma);
            if t > 0 && best_score.get(&key).is_none_or(|&b| score > b) {
                best_score.insert(key, score);
                self.learned.insert(key, (t, maps));
            }
        }
        self.score_learned(transform, folds, singles)
    }

    /// The trials of stage 3: every learned map alone, and every union of the best block of
    /// each kind (fixed or learned, `singles` with the learned maps) that holds a learned map.
    fn score_learned(
        &self,
        transform: RowTransform,
        folds: &[Fold],
        singles: &[(Spec, f64, f64)],
    ) -> Result<Vec<AutoTrial>> {
        if self.learned.is_empty() {
            return Ok(Vec::new());
        }
        let mut keys: Vec<(usize, usize)> = self.learned.keys().copied().collect();
        keys.sort_unstable();
        let one: Vec<Vec<Spec>> = keys
            .iter()
            .map(|&(family, gamma)| vec![Spec::Learned { family, gamma }])
            .collect();
        let grid = vec![lambda_search(&self.params.lambdas); one.len()];
        let scores = self.cv_scores(folds, &one, &grid)?;
        let mut trials: Vec<AutoTrial> = Vec::new();
        let mut scored = singles.to_vec();
        for (set, sc) in one.iter().zip(&scores) {
            let t = self.trial(AutoStage::Learned, transform, set, sc, &folds[0]);
            scored.push((set[0], t.lambda, t.score));
            trials.push(t);
        }
        let specs = best_of_each_kind(&scored);
        let sets: Vec<Vec<Spec>> = unions(&specs)
            .into_iter()
            .filter(|u| u.iter().any(|s| matches!(s, Spec::Learned { .. })))
            .collect();
        let ranges: Vec<_> = sets
            .iter()
            .map(|set| union_lambdas(&self.params.lambdas, set, &scored))
            .collect();
        let scores = self.cv_scores(folds, &sets, &ranges)?;
        for (set, sc) in sets.iter().zip(&scores) {
            trials.push(self.trial(AutoStage::Learned, transform, set, sc, &folds[0]));
        }
        Ok(trials)
    }

    /// Learns `map` on a fold's training part for at most `max_iter` outer iterations,
    /// scoring its validation part when `patience` is given or a curve is wanted.
    pub(super) fn learn_map<S: SelectionObserver + ?Sized>(
        &self,
        map: BoxedMap,
        lambda: f64,
        max_iter: usize,
        (train, val): (&LabelData, &LabelData),
        patience: Option<usize>,
        observer: &mut S,
    ) -> Result<crate::labels::fit::LabelFit<BoxedMap>> {
        let ks = &self.params.select_ks;
        let lp = LabelParams {
            lambda,
            max_iter,
            eval_ks: ks.clone(),
            select_k: ks[0],
            eval_train: false,
            patience,
            ..LabelParams::default()
        }
        .check()?;
        let fit = fit_labels(train, map, &lp, Some(val), &mut Forward(&mut *observer))?;
        if stopped(fit.stop_reason, observer) {
            return Err(GimcError::Interrupted);
        }
        Ok(fit)
    }

    /// Runs one round's learning `jobs`, each for up to `iters` outer iterations in all. One job
    /// runs on this thread with `observer`; several run side by side on the thread pool while
    /// this thread relays their iteration records to `observer` and polls it, so that a stop
    /// reaches every job at its next iteration.
    fn run_jobs<S: SelectionObserver + ?Sized>(
        &self,
        jobs: Vec<LearnJob<'_>>,
        iters: usize,
        patience: Option<usize>,
        observer: &mut S,
    ) -> Result<()> {
        let run = |job: LearnJob<'_>, obs: &mut dyn SelectionObserver| -> Result<()> {
            let done = job.run.iterations();
            let map = job.run.map.take().ok_or(GimcError::Empty("feature maps"))?;
            let parts = (job.train, job.val);
            let fit = self.learn_map(map, job.run.lambda, iters - done, parts, patience, obs)?;
            let curve = validation_curve(&fit.history, job.val, &self.params.select_ks);
            job.run.resume_with(fit, curve);
            Ok(())
        };
        if jobs.len() <= 1 {
            return jobs
                .into_iter()
                .try_for_each(|job| run(job, &mut Relayed(observer)));
        }
        let stop = AtomicBool::new(false);
        let (tx, rx) = mpsc::channel::<IterationRecord>();
        std::thread::scope(|scope| {
            let stop = &stop;
            let worker = scope.spawn(move || {
                jobs.into_par_iter()
                    .map_with(tx, |tx, job| run(job, &mut Relay { tx, stop }))
                    .collect::<Result<()>>()
            });
            loop {
                let quit = match rx.recv_timeout(RELAY_POLL) {
                    Ok(record) => observer.observe(&record) == ObserverAction::Stop,
                    Err(RecvTimeoutError::Timeout) => false,
                    Err(RecvTimeoutError::Disconnected) => break,
                };
                if quit || observer.interrupted() {
                    stop.store(true, Ordering::Relaxed);
                }
            }
            // a job's panic is the caller's panic, as it would be on one thread
            worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })?;
        if stop.load(Ordering::Relaxed) {
            return Err(GimcError::Interrupted);
        }
        Ok(())
    }

    /// Stage 4: the chosen transform, maps (learned for their chosen iterations) and W on
    /// every row of `data`. The transform is fitted, and the maps drawn, on the rows of
    /// `drawn_on` (`None`: `data`'s own). On a data-parallel group `data` is this process's
    /// shard, `drawn_on` the search's sample that every process holds, and every sum over rows
    /// (the learning's, ΦᵀΦ, ΦᵀA and the blocks' penalty scales) goes through `sums`, so that
    /// every process refits the same model on the union of the shards.
    pub(super) fn refit<S: SelectionObserver + ?Sized>(
        &self,
        data: &LabelData,
        drawn_on: Option<&LabelData>,
        chosen: &AutoTrial,
        observer: &mut S,
        sums: &dyn RowSums,
    ) -> Result<(LabelModel<BoxedMap>, Preprocess)> {
        let iterations = chosen
            .blocks
            .iter()
            .map(|b| b.iterations)
            .max()
            .unwrap_or(0);
        observer.fit_started(
            &SelectionStage::Refit {
                chosen: crate::labels::select::Chosen {
                    family: "auto".into(),
                    m: self.params.m,
                    gamma: f64::NAN,
                    lambda: chosen.lambda,
                    iterations,
                    validation_score: chosen.score,
                },
            },
            iterations,
        );
        let (pre, xt) = chosen.transform.fit(drawn_on.unwrap_or(data).features())?;
        let (all, sample) = match drawn_on {
            None => (data.with_features(xt)?, None),
            Some(sample) => (
                data.with_features(pre.apply(data.features())?)?,
                Some(sample.with_features(xt)?),
            ),
        };
        // the rows the maps are drawn on
        let base = sample.as_ref().unwrap_or(&all);
        let rows = sum_scalar(sums, all.nrows() as f64).max(1.0);
        let fold = Fold::new(all.clone(), all.select_rows(&[0])?);
        let mut maps: Vec<BoxedMap> = Vec::new();
        let mut blocks = Blocks::new();
        let mut set = Vec::new();
        for b in &chosen.blocks {
            if b.name == "linear" {
                set.push(blocks.push(self.build(Spec::Linear, &fold, 0)?));
                maps.push(Box::new(Identity::new(all.features().ncols())));
                continue;
            }
            let family = self
                .families
                .iter()
                .position(|f| f.name() == b.name)
                .ok_or_else(|| {
                    param_err::<GimcError>("families", format!("unknown family {}", b.name))
                })?;
            let gamma = match b.gamma_factor {
                Some(f) => Gamma::Scale(f).resolve(base.features()),
                None => b.gamma.unwrap_or(1.0),
            };
            let mut map = self.draw(family, gamma, base.features())?;
            if b.iterations > 0 {
                let sq = sum_scalar(sums, map.forward(all.features())?.squared_norm_l2()) / rows;
                let lp = LabelParams {
                    lambda: chosen.lambda * if sq > 0.0 { sq } else { 1.0 },
                    max_iter: b.iterations,
                    eval_ks: vec![self.params.select_ks[0]],
                    select_k: self.params.select_ks[0],
                    eval_train: false,
                    ..LabelParams::default()
                }
                .check()?;
                let fit =
                    fit_labels_sharded(&all, map, &lp, None, &mut Forward(&mut *observer), sums)?;
                if stopped(fit.stop_reason, observer) {
                    return Err(GimcError::Interrupted);
                }
                map = fit
                    .model
                    .into_maps()
                    .pop()
                    .ok_or(GimcError::Empty("feature maps"))?;
            }
            let mut block = self.map_block(map, &fold)?;
            maps.push(block.map.take().ok_or(GimcError::Empty("feature maps"))?);
            set.push(blocks.push(block));
        }
        set.push(blocks.push(self.build(Spec::Bias, &fold, 0)?));
        maps.push(Box::new(Constant::new(all.features().ncols())));
        let (gram, cross, penalty) = blocks.system_summed(&set, rows, sums)?;
        let w = solve_blocks(&gram, &cross, &penalty, chosen.lambda)?;
        let mut model = LabelModel::new(maps, w, data.task(), chosen.lambda)?;
        if !data.label_names().is_empty() {
            model.set_label_names(data.label_names().to_vec())?;
        }
        model.set_method("gimc-auto");
        let hp = model.hyper_parameters_mut();
        hp.insert("lambda".into(), chosen.lambda);
        hp.insert("validation_score".into(), chosen.score);
        for b in &chosen.blocks {
            if let Some(g) = b.gamma {
                hp.insert(format!("{}.gamma", b.name), g);
                hp.insert(format!("{}.iterations", b.name), b.iterations as f64);
            }
        }
        Ok((model, pre))
    }
}

/// The search of a family's γ in stage 1: a walk from the middle of `gammas` when they
/// increase (all multiples of the `scale` rule, or all numbers), every one of them otherwise.
pub(super) fn gamma_search(gammas: &[Gamma]) -> GridSearch {
    let increasing = gammas.windows(2).all(|w| match (w[0], w[1]) {
        (Gamma::Scale(a), Gamma::Scale(b)) | (Gamma::Value(a), Gamma::Value(b)) => a < b,
        _ => false,
    });
    GridSearch::walk_if_increasing(gammas.len(), increasing)
}

/// The λ search of a single block in stages 1 and 3: a walk from the middle of `lambdas` when
/// they increase (the validation score rises and then falls along λ), every one of them
/// otherwise.
pub(super) fn lambda_search(lambdas: &[f64]) -> GridSearch {
    GridSearch::walk_if_increasing(lambdas.len(), lambdas.windows(2).all(|w| w[0] < w[1]))
}

/// How often the relay of [`Search::run_jobs`] polls its observer while no record arrives.
const RELAY_POLL: Duration = Duration::from_millis(50);

/// A job's observer while jobs run side by side: sends each record to the relaying thread, and
/// stops once that thread has seen a stop.
struct Relay<'a> {
    tx: &'a mpsc::Sender<IterationRecord>,
    stop: &'a AtomicBool,
}

impl Observer for Relay<'_> {
    fn observe(&mut self, record: &IterationRecord) -> ObserverAction {
        // a closed channel means the relay is gone: nothing to report to
        let _ = self.tx.send(record.clone());
        if self.stop.load(Ordering::Relaxed) {
            ObserverAction::Stop
        } else {
            ObserverAction::Continue
        }
    }
}

impl SelectionObserver for Relay<'_> {
    fn interrupted(&mut self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// A caller's observer seen through `dyn` (one job runs with it directly).
struct Relayed<'a, S: SelectionObserver + ?Sized>(&'a mut S);

impl<S: SelectionObserver + ?Sized> Observer for Relayed<'_, S> {
    fn observe(&mut self, record: &IterationRecord) -> ObserverAction {
        self.0.observe(record)
    }
}

impl<S: SelectionObserver + ?Sized> SelectionObserver for Relayed<'_, S> {
    fn fit_started(&mut self, stage: &SelectionStage, max_iter: usize) {
        self.0.fit_started(stage, max_iter);
    }
    fn interrupted(&mut self) -> bool {
        self.0.interrupted()
    }
}

/// One run of a round of the map learning: a candidate's [`FoldRun`] and its fold's parts.
struct LearnJob<'a> {
    run: &'a mut FoldRun,
    train: &'a LabelData,
    val: &'a LabelData,
}

/// One candidate's map learning on one fold, carried from one round of the successive halving
/// to the next: a later round resumes from the last iterate instead of starting again.
pub(super) struct FoldRun {
    /// The map at the last iteration run (taken while a round runs it).
    pub(super) map: Option<BoxedMap>,
    /// The learning's λ: the candidate's, times the random map's mean squared row norm.
    lambda: f64,
    /// The validation score after each iteration so far, iteration 0 first.
    pub(super) curve: Vec<f64>,
    /// The best validation iterate so far (P@select_k, the fit's own choice) and its map
    /// parameters.
    pub(super) best: Option<(f64, Mat<f64>)>,
    /// The fit stopped before its iterations ran out (converged, no step, patience).
    stopped: bool,
}

impl FoldRun {
    pub(super) fn new(map: BoxedMap, lambda: f64) -> Self {
        Self {
            map: Some(map),
            lambda,
            curve: Vec::new(),
            best: None,
            stopped: false,
        }
    }

    /// Outer iterations run so far.
    pub(super) fn iterations(&self) -> usize {
        self.curve.len().saturating_sub(1)
    }

    /// Appends a fit that resumed from the last iterate, with its validation `curve`: the
    /// curve after its iteration 0 (the last iterate again), a better best iterate, and its
    /// last map.
    pub(super) fn resume_with(&mut self, fit: LabelFit<BoxedMap>, curve: Vec<f64>) {
        let skip = usize::from(!self.curve.is_empty());
        self.curve.extend(curve.into_iter().skip(skip));
        if let Some(b) = &fit.best
            && self.best.as_ref().is_none_or(|(s, _)| b.score > *s)
        {
            self.best = Some((b.score, b.params.clone()));
        }
        self.stopped = fit.stop_reason != FitStop::MaxIterations;
        self.map = fit.model.into_maps().pop();
    }

    /// The map at the best validation iterate (the last when there is none).
    pub(super) fn into_best_map(self) -> Result<BoxedMap> {
        let mut map = self.map.ok_or(GimcError::Empty("feature maps"))?;
        if let Some((_, params)) = self.best {
            map.set_params(params)?;
        }
        Ok(map)
    }
}

/// The best iteration of the mean validation curve over a candidate's folds, and that mean.
fn mean_curve_best(runs: &[FoldRun]) -> (usize, f64) {
    let curves: Vec<Vec<f64>> = runs.iter().map(|r| r.curve.clone()).collect();
    best_of_mean(&curves)
}
