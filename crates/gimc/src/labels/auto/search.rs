//! The state of the search: the folds, the block specifications, the candidates' scores on
//! every fold, and the helpers that rank them.

use super::blocks::{Block, BlockRows, Blocks, select_score};
use super::params::ValidAutoParams;
use super::report::{AutoStage, AutoTrial, BlockChoice};
use super::transform::RowTransform;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;

use gimc_featmap::FeatureMap;
use gimc_linalg::faer::Mat;
use gimc_linalg::rng::{GimcRng, child};
use gimc_linalg::{FeatureMatrix, Gamma};

use crate::error::param_err;
use crate::error::{GimcError, Result};
use crate::labels::data::LabelData;
use crate::labels::select::validation_split;
use crate::registry::{BoxedMap, DynFamily};
use rand::seq::SliceRandom;

/// The transform whose best union scored highest, with its folds and every single block's
/// best λ and score (where the map learning runs).
pub(super) struct Winner {
    pub(super) transform: RowTransform,
    pub(super) folds: Vec<Fold>,
    pub(super) singles: Vec<(Spec, f64, f64)>,
    pub(super) score: f64,
}

/// A block of a candidate before it is built on some rows: the linear part, or the map of
/// family `family` (index into [`AutoParams::families`]) at γ number `gamma`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Spec {
    /// The intercept column (in every candidate).
    Bias,
    Linear,
    Map {
        family: usize,
        gamma: usize,
    },
    /// The map of `Map { family, gamma }` after learning ([`Search::learned`]).
    Learned {
        family: usize,
        gamma: usize,
    },
}

/// The transformed training and validation parts of one fold, and the blocks built on them
/// so far (kept between the stages of the search; see [`Fold::keep_only`]).
pub(super) struct Fold {
    pub(super) train: LabelData,
    pub(super) val: LabelData,
    pub(super) cache: RefCell<(Blocks, HashMap<Spec, usize>)>,
}

impl Fold {
    pub(super) fn new(train: LabelData, val: LabelData) -> Self {
        Self {
            train,
            val,
            cache: RefCell::new((Blocks::new(), HashMap::new())),
        }
    }

    /// Frees every cached block but those of `keep`.
    pub(super) fn keep_only(&self, keep: &[Spec]) {
        let mut cache = self.cache.borrow_mut();
        let (blocks, index) = &mut *cache;
        index.retain(|spec, &mut i| {
            let kept = keep.contains(spec);
            if !kept {
                blocks.release(i);
            }
            kept
        });
    }
}

/// What the search needs at hand: the checked parameters, the families, the root generator and
/// the size of every family's maps.
pub(super) struct Search<'a> {
    pub(super) params: &'a ValidAutoParams,
    pub(super) families: Vec<&'a DynFamily>,
    pub(super) root: GimcRng,
    /// m of each family (Nyström landmarks capped at the fewest training rows of a fold).
    pub(super) sizes: Vec<usize>,
    /// The learned maps by (family, γ number): the chosen iteration count and the map learned
    /// on each fold's training part.
    pub(super) learned: HashMap<(usize, usize), (usize, Vec<BoxedMap>)>,
}

impl Search<'_> {
    pub(super) fn choice(&self, spec: Spec, gamma: Option<f64>) -> BlockChoice {
        match spec {
            Spec::Bias => BlockChoice {
                name: "bias".into(),
                gamma_factor: None,
                gamma: None,
                iterations: 0,
            },
            Spec::Linear => BlockChoice {
                name: "linear".into(),
                gamma_factor: None,
                gamma: None,
                iterations: 0,
            },
            Spec::Map { family, gamma: gi } | Spec::Learned { family, gamma: gi } => BlockChoice {
                name: self.families[family].name().to_string(),
                gamma_factor: match self.params.gammas[gi] {
                    Gamma::Scale(f) => Some(f),
                    Gamma::Value(_) => None,
                },
                gamma,
                iterations: match spec {
                    Spec::Learned { .. } => self.learned.get(&(family, gi)).map_or(0, |l| l.0),
                    _ => 0,
                },
            },
        }
    }

    /// The map of `spec` drawn on `x` (every γ and fold of a family draws from one stream).
    pub(super) fn draw(&self, family: usize, gamma: f64, x: &FeatureMatrix) -> Result<BoxedMap> {
        Ok(self.families[family].build(
            x,
            self.sizes[family],
            gamma,
            &mut child(&self.root, 1 + family as u64),
        )?)
    }

    /// Block `spec` on fold number `f`.
    pub(super) fn build(&self, spec: Spec, fold: &Fold, f: usize) -> Result<Block> {
        let labels = fold.train.labels();
        match spec {
            Spec::Bias => Block::new(
                BlockRows::Phi(Mat::from_fn(fold.train.nrows(), 1, |_, _| 1.0)),
                Mat::from_fn(fold.val.nrows(), 1, |_, _| 1.0),
                labels,
                None,
            ),
            Spec::Linear => Block::new(
                BlockRows::Rows(fold.train.features().clone()),
                fold.val.features().to_dense(),
                labels,
                None,
            ),
            Spec::Map { family, gamma } => {
                let g = self.params.gammas[gamma].resolve(fold.train.features());
                let map = self.draw(family, g, fold.train.features())?;
                self.map_block(map, fold)
            }
            Spec::Learned { family, gamma } => {
                let map = self
                    .learned
                    .get(&(family, gamma))
                    .and_then(|(_, maps)| maps.get(f))
                    .ok_or(GimcError::Empty("learned maps"))?;
                let phi_tr = map.forward(fold.train.features())?;
                let phi_va = map.forward(fold.val.features())?;
                Block::new(BlockRows::Phi(phi_tr), phi_va, fold.train.labels(), None)
            }
        }
    }

    pub(super) fn map_block(&self, map: BoxedMap, fold: &Fold) -> Result<Block> {
        let phi_tr = map.forward(fold.train.features())?;
        let phi_va = map.forward(fold.val.features())?;
        Block::new(
            BlockRows::Phi(phi_tr),
            phi_va,
            fold.train.labels(),
            Some(map),
        )
    }

    /// The mean validation score over `folds` of every candidate (a union of blocks) at every
    /// λ of [`AutoParams::lambdas`] its [`GridSearch`] scores (−∞ at the others). A walk
    /// decides each next λ on the mean over the folds, so the candidates are scored in rounds
    /// of one λ each. A fold's blocks are built once and kept for the later candidates.
    pub(super) fn cv_scores(
        &self,
        folds: &[Fold],
        candidates: &[Vec<Spec>],
        searches: &[GridSearch],
    ) -> Result<Vec<Vec<f64>>> {
        let nl = self.params.lambdas.len();
        let mut scores = vec![vec![f64::NEG_INFINITY; nl]; candidates.len()];
        let mut wanted: Vec<Vec<usize>> = searches.iter().map(GridSearch::first).collect();
        while wanted.iter().any(|w| !w.is_empty()) {
            let round = self.cv_round(folds, candidates, &wanted)?;
            for (i, (search, round)) in searches.iter().zip(round).enumerate() {
                for &li in &wanted[i] {
                    scores[i][li] = round[li];
                }
                wanted[i] = search.after(&wanted[i], &scores[i]);
            }
        }
        Ok(scores)
    }

    /// One round of [`Search::cv_scores`]: the mean over `folds` of every candidate at the λ
    /// numbers `wanted` holds for it.
    fn cv_round(
        &self,
        folds: &[Fold],
        candidates: &[Vec<Spec>],
        wanted: &[Vec<usize>],
    ) -> Result<Vec<Vec<f64>>> {
        let nl = self.params.lambdas.len();
        let mut acc = vec![vec![0.0; nl]; candidates.len()];
        for (f, fold) in folds.iter().enumerate() {
            let mut cache = fold.cache.borrow_mut();
            let (blocks, index) = &mut *cache;
            let mut id = |spec: Spec| -> Result<usize> {
                Ok(match index.get(&spec) {
                    Some(&i) => i,
                    None => {
                        let i = blocks.push(self.build(spec, fold, f)?);
                        index.insert(spec, i);
                        i
                    }
                })
            };
            let sets = candidates
                .iter()
                .zip(wanted)
                .map(|(set, wanted)| {
                    let ids = set
                        .iter()
                        .map(|&spec| id(spec))
                        .collect::<Result<Vec<_>>>()?;
                    Ok((ids, wanted.clone()))
                })
                .collect::<Result<Vec<_>>>()?;
            let bias = id(Spec::Bias)?;
            let scores = blocks.scores(
                &sets,
                bias,
                &self.params.lambdas,
                &fold.train,
                &fold.val,
                &self.params.select_ks,
            )?;
            for (a, s) in acc.iter_mut().zip(scores) {
                for (a, v) in a.iter_mut().zip(s) {
                    *a += v / folds.len() as f64;
                }
            }
        }
        Ok(acc)
    }

    /// The trial of candidate `set` from its per-λ scores (the best λ; the smallest on ties).
    pub(super) fn trial(
        &self,
        stage: AutoStage,
        transform: RowTransform,
        set: &[Spec],
        scores: &[f64],
        fold: &Fold,
    ) -> AutoTrial {
        // the best λ, the largest on ties (the simpler model)
        let lambdas = &self.params.lambdas;
        let (li, score) =
            scores
                .iter()
                .copied()
                .enumerate()
                .fold((0, f64::NEG_INFINITY), |b, (i, s)| {
                    let tied = ties(s, b.1);
                    if (tied && lambdas[i] > lambdas[b.0]) || (!tied && s > b.1) {
                        (i, s)
                    } else {
                        b
                    }
                });
        AutoTrial {
            stage,
            transform,
            blocks: set
                .iter()
                .map(|&spec| {
                    let g = match spec {
                        Spec::Map { gamma, .. } | Spec::Learned { gamma, .. } => {
                            Some(self.params.gammas[gamma].resolve(fold.train.features()))
                        }
                        Spec::Bias | Spec::Linear => None,
                    };
                    self.choice(spec, g)
                })
                .collect(),
            lambda: self.params.lambdas[li],
            score,
        }
    }
}

/// The folds of the search: `k` ≥ 2 disjoint validation parts covering the rows (stratified by
/// class for multi-class data), or for `k` = 1 the one split of [`validation_split`].
pub(super) fn fold_rows(
    data: &LabelData,
    k: usize,
    fraction: f64,
    rng: &mut GimcRng,
) -> Result<Vec<(Vec<usize>, Vec<usize>)>> {
    if k <= 1 {
        return Ok(vec![validation_split(data, fraction, rng)?]);
    }
    let n = data.nrows();
    // deal the shuffled rows (by class for multi-class data) round robin into k parts
    let mut order: Vec<usize> = Vec::with_capacity(n);
    match data.rows_by_class() {
        Some(by_class) => {
            for mut rows in by_class {
                rows.shuffle(rng);
                order.extend(rows);
            }
        }
        None => {
            order.extend(0..n);
            order.shuffle(rng);
        }
    }
    let mut part = vec![0usize; n];
    for (pos, &i) in order.iter().enumerate() {
        part[i] = pos % k;
    }
    (0..k)
        .map(|f| {
            let (va, tr): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| part[i] == f);
            if va.is_empty() || tr.is_empty() {
                return Err(param_err(
                    "folds",
                    "a fold has no training or validation rows",
                ));
            }
            Ok((tr, va))
        })
        .collect()
}

/// Which points of a grid (by number, in increasing order: the λ of [`AutoParams::lambdas`]
/// or the γ of [`AutoParams::gammas`]) a candidate is scored at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct GridSearch {
    /// The numbers searched.
    pub(super) range: Range<usize>,
    /// `None`: every point of `range`. `Some(s)`: a walk from point `s` for a score that rises
    /// and then falls along the grid: down the grid until the score falls below the best so
    /// far or the range ends, then, unless going down found a better point, up from `s` in
    /// the same way.
    pub(super) start: Option<usize>,
}

impl GridSearch {
    /// Every point of a grid of `n`.
    pub(super) fn grid(n: usize) -> Self {
        Self {
            range: 0..n,
            start: None,
        }
    }

    /// A grid of `n` walked from its middle when it `increases` (a score that rises and then
    /// falls along it), every point of it otherwise.
    pub(super) fn walk_if_increasing(n: usize, increases: bool) -> Self {
        Self {
            range: 0..n,
            start: increases.then_some(n / 2),
        }
    }

    /// The numbers scored first: the whole range, or the start of the walk.
    pub(super) fn first(&self) -> Vec<usize> {
        match self.start {
            None => self.range.clone().collect(),
            Some(s) => vec![s],
        }
    }

    /// The numbers to score after a round that scored `scored`, from the `scores` so far (−∞
    /// where not scored): a walk's next point after its one, nothing once the walk is done or
    /// after the whole range.
    pub(super) fn after(&self, scored: &[usize], scores: &[f64]) -> Vec<usize> {
        match scored {
            [li] => self.next(*li, scores).into_iter().collect(),
            _ => Vec::new(),
        }
    }

    /// The number a walk scores after number `li`, from the `scores` so far; `None` when it is
    /// done (and always for a whole range).
    fn next(&self, li: usize, scores: &[f64]) -> Option<usize> {
        let start = self.start?;
        let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let below = |s: f64| s < best && !ties(s, best);
        let fell = below(scores[li]);
        // up from the start only while the start is still the best: past a better point
        // below it, the score only falls above it
        let up = (start + 1 < self.range.end && !below(scores[start])).then_some(start + 1);
        if li <= start {
            if !fell && li > self.range.start {
                Some(li - 1)
            } else {
                up
            }
        } else if !fell && li + 1 < self.range.end {
            Some(li + 1)
        } else {
            None
        }
    }
}

/// The λ search of a union of `set`: from the smallest to the largest best λ of its blocks
/// alone (`scored`: spec, best λ, score), walked from the best λ of its best-scoring block
/// alone. With each block's penalty scaled by its mean squared row norm, the union's best λ
/// lies between its blocks' (so in every union of the seven data sets of `cargo xtask bench
/// --only multilabel-peers` searched over the whole grid), and the validation score rises and
/// then falls along the grid, so the walk stops once it falls. The whole grid when a block
/// was not scored alone.
pub(super) fn union_lambdas(
    lambdas: &[f64],
    set: &[Spec],
    scored: &[(Spec, f64, f64)],
) -> GridSearch {
    let mut lo = usize::MAX;
    let mut hi = 0;
    let mut start: Option<(usize, f64)> = None;
    for spec in set {
        let best = scored
            .iter()
            .filter(|(s, _, _)| s == spec)
            .find_map(|&(_, l, score)| Some((lambdas.iter().position(|&x| x == l)?, score)));
        let Some((i, score)) = best else {
            return GridSearch::grid(lambdas.len());
        };
        lo = lo.min(i);
        hi = hi.max(i);
        if start.is_none_or(|(_, s)| score > s) {
            start = Some((i, score));
        }
    }
    match start {
        Some((s, _)) if lo <= hi => GridSearch {
            range: lo..hi + 1,
            start: Some(s),
        },
        _ => GridSearch::grid(lambdas.len()),
    }
}

/// m of a map of `family` on `rows` training rows: Nyström landmarks are capped at the rows.
pub(super) fn map_size(family: &str, m: usize, rows: usize) -> usize {
    if family.contains("nys") {
        m.min(rows)
    } else {
        m
    }
}

/// The best single block of one transform, and every single block with its best λ and score.
pub(super) type TransformBest = (Option<AutoTrial>, Vec<(Spec, f64, f64)>);

/// Outer iterations of the first round of the map learning's successive halving.
pub(super) const FIRST_ROUND: usize = 2;

/// Maps (by their fixed scores) whose learning is tried on cross-validated (small) data, each
/// with every multiplier of [`LEARN_LAMBDAS`]; on one split (large data) only the best map is.
pub(super) const LEARN_CANDIDATES: usize = 2;

/// Multipliers of a map's best fixed λ that its learning tries.
pub(super) const LEARN_LAMBDAS: [f64; 2] = [1.0, 10.0];

/// The validation score after each iteration of a fit (iteration 0 first).
pub(super) fn validation_curve(
    history: &[crate::labels::fit::IterationInfo],
    val: &LabelData,
    ks: &[usize],
) -> Vec<f64> {
    history
        .iter()
        .map(|h| {
            h.validation
                .as_ref()
                .map_or(f64::NEG_INFINITY, |e| select_score(e, val.task(), ks))
        })
        .collect()
}

/// The iteration with the best mean over `curves` (over the common length; the earliest on
/// ties) and that mean.
pub(super) fn best_of_mean(curves: &[Vec<f64>]) -> (usize, f64) {
    let len = curves.iter().map(Vec::len).min().unwrap_or(0);
    (0..len)
        .map(|t| curves.iter().map(|c| c[t]).sum::<f64>() / curves.len().max(1) as f64)
        .enumerate()
        .fold(
            (0, f64::NEG_INFINITY),
            |b, (t, s)| if s > b.1 { (t, s) } else { b },
        )
}

/// The kind of a block: the linear part (`None`) or a map family.
pub(super) fn kind(spec: &Spec) -> Option<usize> {
    match spec {
        Spec::Bias | Spec::Linear => None,
        Spec::Map { family, .. } | Spec::Learned { family, .. } => Some(*family),
    }
}

/// The best-scoring block of each kind among `scored` (spec, λ, score), in order of first
/// appearance (the earliest on ties).
pub(super) fn best_of_each_kind(scored: &[(Spec, f64, f64)]) -> Vec<Spec> {
    let mut best: Vec<(Spec, f64)> = Vec::new();
    for &(spec, _, score) in scored {
        match best.iter_mut().find(|(k, _)| kind(k) == kind(&spec)) {
            Some(slot) if score > slot.1 => *slot = (spec, score),
            Some(_) => {}
            None => best.push((spec, score)),
        }
    }
    best.into_iter().map(|(s, _)| s).collect()
}

/// Every union of two or more of `kinds`, in mask order.
pub(super) fn unions(kinds: &[Spec]) -> Vec<Vec<Spec>> {
    (1u32..(1 << kinds.len()))
        .filter(|mask| mask.count_ones() >= 2)
        .map(|mask| {
            (0..kinds.len())
                .filter(|b| mask & (1 << b) != 0)
                .map(|b| kinds[b])
                .collect()
        })
        .collect()
}

/// Validation scores closer than this (relative) are a tie: the same hits on every fold.
const TIE: f64 = 1e-9;

/// Whether finite scores `a` and `b` tie (within [`TIE`]).
pub(super) fn ties(a: f64, b: f64) -> bool {
    a.is_finite() && b.is_finite() && (a - b).abs() <= TIE * a.abs().max(b.abs()).max(1.0)
}

/// How complex a trial's model is, least first: blocks, then maps among them, then learned
/// iterations, then the weaker penalty (−λ). Ties in score go to the least complex.
fn complexity(t: &AutoTrial) -> (usize, usize, usize, f64) {
    let maps = t.blocks.iter().filter(|b| b.gamma_factor.is_some()).count();
    let iterations = t.blocks.iter().map(|b| b.iterations).sum();
    (t.blocks.len(), maps, iterations, -t.lambda)
}

/// Whether trial `b` beats trial `a`: a higher score, or a tied score with a simpler model
/// ([`complexity`]); on a full tie the first stays.
pub(super) fn beats(b: &AutoTrial, a: &AutoTrial) -> bool {
    if ties(a.score, b.score) {
        complexity(b).partial_cmp(&complexity(a)) == Some(std::cmp::Ordering::Less)
    } else {
        b.score > a.score
    }
}

/// The better of two trials ([`beats`]).
pub(super) fn better(a: Option<AutoTrial>, b: &AutoTrial) -> Option<AutoTrial> {
    match a {
        Some(a) if !beats(b, &a) => Some(a),
        _ => Some(b.clone()),
    }
}
