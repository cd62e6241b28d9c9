//! `auto`: the default model selection of `gimc fit`, `GIMCClassifier()` and
//! [`AutoParams::default`]. It searches what decides accuracy on real multi-label and
//! multi-class data — the row transform, γ, λ, which maps, a linear part and how long to learn
//! the maps — on validation data drawn from the training rows only, and refits the winner on
//! all of them.
//!
//! The features are blocks Φ = [X̃, φ₁(X̃), φ₂(X̃), …, 1]: the transformed rows themselves (the
//! linear part, when d ≤ [`AutoParams::linear_max_dim`]), one map per family (`lff`, `lnys`,
//! or a user's) and an intercept column. A linear model is the special case Φ = [X̃, 1], so
//! `auto` is never worse on validation than ridge on the same rows. Each block b is penalised
//! by λ·s_b, s_b its mean squared row norm on the training part, so one λ grid serves blocks of
//! any scale (the same as scaling every block to unit mean row norm). A union wider than the
//! training rows is solved in the dual form (O(n³) instead of O(D³)).
//!
//! Validation: data with at most [`AutoParams::cv_max_rows`] rows is searched by
//! [`AutoParams::cv_folds`]-fold cross-validation (every score is the mean over the folds),
//! larger data on one split of [`AutoParams::validation_fraction`]. The score is the mean of
//! P@k over [`AutoParams::select_ks`] (default P@1 and P@3), or accuracy for classes. Tied
//! scores (the same hits on every fold, common on small data) go to the simpler model: fewer
//! blocks, fewer maps, fewer learned iterations, then the larger λ.
//!
//! The search, cheapest first (stages 1 and 2 run the row transforms side by side on the thread
//! pool; the result does not depend on it):
//! 1. **Single blocks.** For every row transform ([`RowTransform`]) and γ (multiples of the
//!    `scale` rule on the rows as the maps see them), every block alone is one ridge solve per
//!    λ (W = (ΦᵀΦ + Λ)⁻¹ΦᵀA). Each family's γ, and each block's λ, are walked from the
//!    middle of their grid, first down and then up, each way until the validation score falls
//!    (it rises and then falls along the grid). Per transform, the best γ of each family goes
//!    on; the blocks are scored one at a time, and one that is not the best of its kind so far
//!    is freed at once.
//! 2. **Unions.** Per transform, every union of two or more of the best block of each kind (the
//!    linear part with a map, two maps — the paper's combined LFF + LNYS model — or all of
//!    them), again one ridge solve per λ from Gram blocks computed once. A union searches only
//!    the λ from the smallest to the largest best λ of its blocks alone (with penalties scaled
//!    per block, its best λ lies between theirs), walking from the best λ of its best block
//!    alone until the validation score falls, and its Cholesky factor extends that of the
//!    union without its last block (the linear part with two maps extends the linear part with
//!    the first).
//! 3. **Learned maps**, on the transform whose best union scored highest: successive halving
//!    over the maps with the best fixed scores, each at its fixed λ and ten times it (GIMC's map
//!    learning, Algorithm 1, on every fold); a later round resumes each map from the last
//!    iterate of the round before (warm starts), and each map's iteration count is the best of
//!    its mean validation curve. A map whose mean curve has not improved for
//!    [`AutoParams::patience`] iterations at the end of a round learns no further. The runs of a round (every candidate on every fold) go side by
//!    side on the thread pool. The learned maps alone and in unions are scored like the fixed
//!    ones, and they are chosen only if they score higher; otherwise the maps stay random.
//! 4. **Refit** of the chosen transform, maps (learned for their chosen number of iterations)
//!    and W on all training rows.
//!
//! Before all of this, constant feature columns and the columns the caller excludes (an
//! identifier attribute, [`AutoParams::exclude_columns`]) are dropped; the kept columns are part
//! of the returned [`Preprocess`], which `gimc predict` applies to new rows.
//!
//! On a data-parallel group, [`auto_fit_sharded`] searches on a sample of every shard's rows
//! and refits on all of them.

mod blocks;
mod estimate;
mod params;
mod report;
mod search;
mod sharded;
mod stages;
#[cfg(test)]
mod tests;
mod transform;

pub use estimate::estimate_auto;
pub use params::{AutoParams, LinearPart, ValidAutoParams};
pub use report::{AutoSelection, AutoStage, AutoTrial, BlockChoice};
pub use sharded::auto_fit_sharded;
pub use transform::RowTransform;

use rayon::prelude::*;
use search::{Fold, Search, Winner, beats, better, fold_rows, map_size};
use std::collections::HashMap;
use std::time::Instant;
use transform::drop_columns;

use gimc_featmap::MapFamily;
use gimc_linalg::Preprocess;
use gimc_linalg::memory::check_fits;
use gimc_linalg::rng::{child, seeded};

use crate::error::{GimcError, Result};
use crate::labels::data::LabelData;
use crate::labels::select::SelectionObserver;
use crate::labels::shard::{ONE_PROCESS, RowSums};
use crate::registry::MapRegistry;

/// Chooses the row transform, γ, λ, maps, linear part and learning iterations on validation
/// data from the training rows and refits on all of them (see the module documentation).
/// `registry` names the map families. `data` holds the raw rows; the returned
/// [`AutoSelection::preprocess`] turns raw rows into the model's input.
///
/// ```
/// use gimc::{AutoParams, LabelData, MapRegistry, NoObserver, auto_fit};
/// use gimc_linalg::FeatureMatrix;
/// use gimc_linalg::faer::Mat;
/// use gimc_linalg::sprs::TriMat;
///
/// // 60 rows, 3 features; label 0 when the first feature is positive, else label 1
/// let x = Mat::from_fn(60, 3, |i, j| ((i * 7 + j * 5) % 11) as f64 - 5.0);
/// let mut y = TriMat::new((60, 2));
/// for i in 0..60 {
///     y.add_triplet(i, usize::from(x[(i, 0)] <= 0.0), 1.0);
/// }
/// let data = LabelData::multi_label(FeatureMatrix::dense(x).unwrap(), y.to_csr()).unwrap();
/// // the default search, made small for the example
/// let params = AutoParams::default().with_m(8).with_max_iter(2).check().unwrap();
/// let sel = auto_fit(&data, &MapRegistry::builtin(), &params, &mut NoObserver).unwrap();
/// println!("{} (validation {:.3})", sel.chosen.describe(), sel.chosen.score);
/// // new raw rows go through the stored transform, then the model
/// let rows = sel.preprocess.apply(data.features()).unwrap();
/// let top = sel.model.top_k(&rows, 1).unwrap();
/// assert_eq!(top.len(), 60);
/// ```
pub fn auto_fit<S: SelectionObserver + ?Sized>(
    data: &LabelData,
    registry: &MapRegistry,
    params: &ValidAutoParams,
    observer: &mut S,
) -> Result<AutoSelection> {
    let started = Instant::now();
    check_fits(&estimate_auto(data, params)?, params.memory)?;
    let mut prepared = Prepared::new(data, registry, params)?;
    let outcome = prepared.select(observer)?;
    prepared.finish(None, outcome, started, observer, &ONE_PROCESS)
}

/// The search's data and state before the selection: the rows on the kept columns, the
/// folds' row lists and the [`Search`].
struct Prepared<'a> {
    /// The rows on the kept columns.
    data: LabelData,
    /// The input width before any column is dropped.
    d_raw: usize,
    /// The kept columns (`None`: all), the constant ones and the excluded ones.
    columns: Option<Vec<usize>>,
    constant: Vec<usize>,
    excluded: Vec<usize>,
    /// Each fold's training and validation rows.
    split: Vec<(Vec<usize>, Vec<usize>)>,
    /// Whether the linear part is searched.
    linear: bool,
    search: Search<'a>,
}

impl<'a> Prepared<'a> {
    /// Drops the constant and excluded columns, cuts the folds and draws nothing yet.
    fn new(
        data: &LabelData,
        registry: &'a MapRegistry,
        params: &'a ValidAutoParams,
    ) -> Result<Self> {
        let d_raw = data.features().ncols();
        let (data, columns, constant, excluded) = drop_columns(data, &params.exclude_columns)?;
        let families = params
            .families
            .iter()
            .map(|f| registry.family(f))
            .collect::<Result<Vec<_>>>()?;
        let root = seeded(params.seed);
        let k = if data.nrows() <= params.cv_max_rows {
            params.cv_folds
        } else {
            1
        };
        let split = fold_rows(&data, k, params.validation_fraction, &mut child(&root, 0))?;
        let fewest = split.iter().map(|(tr, _)| tr.len()).min().unwrap_or(0);
        let sizes = families
            .iter()
            .map(|f| map_size(f.name(), params.m, fewest))
            .collect();
        let linear =
            params.linear == LinearPart::Auto && data.features().ncols() <= params.linear_max_dim;
        Ok(Self {
            data,
            d_raw,
            columns,
            constant,
            excluded,
            split,
            linear,
            search: Search {
                params,
                families,
                root,
                sizes,
                learned: HashMap::new(),
            },
        })
    }

    /// Stages 1 to 3: the chosen setting and every setting scored, in search order.
    fn select<S: SelectionObserver + ?Sized>(
        &mut self,
        observer: &mut S,
    ) -> Result<(AutoTrial, Vec<AutoTrial>)> {
        let (data, split, linear, search) =
            (&self.data, &self.split, self.linear, &mut self.search);
        // stages 1 and 2 on every transform, the transforms side by side (each task owns its
        // folds and blocks; the map draws depend on the seed alone, so the order does not
        // matter)
        let applicable: Vec<RowTransform> = search
            .params
            .transforms
            .iter()
            .copied()
            .filter(|t| t.applies_to(data.features()))
            .collect();
        let shared: &Search<'_> = search;
        let stage1: Vec<(Winner, Option<AutoTrial>, Vec<AutoTrial>)> = applicable
            .par_iter()
            .map(|&transform| {
                let folds = split
                    .iter()
                    .map(|(tr, va)| {
                        let train = data.select_rows(tr)?;
                        let (pre, xt) = transform.fit(train.features())?;
                        let val = data.select_rows(va)?;
                        let xv = pre.apply(val.features())?;
                        Ok(Fold::new(train.with_features(xt)?, val.with_features(xv)?))
                    })
                    .collect::<Result<Vec<_>>>()?;
                let mut trials = Vec::new();
                let (best, singles) = shared.singles(transform, &folds, linear, &mut trials)?;
                let w = Winner {
                    transform,
                    folds,
                    singles,
                    score: best.as_ref().map_or(f64::NEG_INFINITY, |b| b.score),
                };
                Ok((w, best, trials))
            })
            .collect::<Result<Vec<_>>>()?;
        if observer.interrupted() {
            return Err(GimcError::Interrupted);
        }
        let mut trials: Vec<AutoTrial> = Vec::new();
        let mut stage1: Vec<(Winner, AutoTrial)> = stage1
            .into_iter()
            .filter_map(|(w, best, t)| {
                trials.extend(t);
                best.map(|b| (w, b))
            })
            .collect();
        // stable: the earlier transform first on ties
        stage1.sort_by(|x, y| y.1.score.total_cmp(&x.1.score));
        type Stage2 = (Winner, AutoTrial, Option<AutoTrial>, Vec<AutoTrial>);
        let stage2: Vec<Stage2> = stage1
            .into_par_iter()
            .map(|(w, best)| {
                let mut t = Vec::new();
                let u = shared.unions(w.transform, &w.folds, &w.singles, &mut t)?;
                Ok((w, best, u, t))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut chosen: Option<AutoTrial> = None;
        let mut win: Option<Winner> = None;
        for (mut w, best, u, t) in stage2 {
            trials.extend(t);
            let mut best = Some(best);
            if let Some(u) = u {
                best = better(best, &u);
            }
            let Some(t) = best else { continue };
            // the learned stage runs on the transform of the best fixed choice
            if chosen.as_ref().is_none_or(|c| beats(&t, c)) {
                w.score = t.score;
                win = Some(w);
                chosen = Some(t);
            }
        }
        let (Some(mut chosen), Some(win)) = (chosen, win) else {
            return Err(GimcError::Empty("auto search (no transform applies)"));
        };
        if search.params.max_iter > 0 {
            for t in search.learn(win.transform, &win.folds, &win.singles, observer)? {
                if beats(&t, &chosen) {
                    chosen = t.clone();
                }
                trials.push(t);
            }
        }
        Ok((chosen, trials))
    }

    /// Stage 4 and the result: the refit of `chosen` (the search's `outcome`, with every trial)
    /// on the search's rows, or on this process's `shard` of a data-parallel group with the
    /// transform and maps drawn on the search's rows ([`Search::refit`]). `started`: when the
    /// search began.
    fn finish<S: SelectionObserver + ?Sized>(
        self,
        shard: Option<&LabelData>,
        (chosen, trials): (AutoTrial, Vec<AutoTrial>),
        started: Instant,
        observer: &mut S,
        sums: &dyn RowSums,
    ) -> Result<AutoSelection> {
        let select_secs = started.elapsed().as_secs_f64();
        let refit_started = Instant::now();
        let (model, pre) = match shard {
            None => self
                .search
                .refit(&self.data, None, &chosen, observer, sums)?,
            Some(rows) => self
                .search
                .refit(rows, Some(&self.data), &chosen, observer, sums)?,
        };
        Ok(AutoSelection {
            model,
            preprocess: Preprocess {
                columns: self.columns,
                input_dim: Some(self.d_raw),
                ..pre
            },
            chosen,
            trials,
            constant_columns: self.constant,
            excluded_columns: self.excluded,
            seconds: (select_secs, refit_started.elapsed().as_secs_f64()),
        })
    }
}
