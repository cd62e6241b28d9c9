//! `auto`: the default model selection of `gimc fit`, `GIMCClassifier()` and
//! [`AutoParams::default`]. It searches what decides accuracy on real multi-label and
//! multi-class data — the row transform, γ, λ, which maps, and a linear part — on a validation
//! split of the training rows only, and refits the winner on all of them.
//!
//! The features are blocks Φ = [X̃, φ₁(X̃), φ₂(X̃), …]: the transformed rows themselves (the
//! linear part, when d ≤ [`AutoParams::linear_max_dim`]) and one map per family (`lff`,
//! `lnys`, or a user's). A linear model is the special case Φ = X̃, so `auto` is never worse on
//! validation than ridge on the same rows. Each block b is penalised by λ·s_b, s_b its mean
//! squared row norm on the training part, so one λ grid serves blocks of any scale (the same as
//! scaling every block to unit mean row norm).
//!
//! The search, cheapest first:
//! 1. **Fixed maps.** For every row transform ([`RowTransform`]) and γ (multiples of the
//!    `scale` rule on the rows as the maps see them), every block alone is one ridge solve per
//!    λ (W = (ΦᵀΦ + Λ)⁻¹ΦᵀA). Per transform, the best γ of each family is kept.
//! 2. **Combinations.** Per transform, every union of two or more of those blocks (the linear
//!    part with a map, two maps — the paper's combined LFF + LNYS model — or all of them), again
//!    one ridge solve per λ from Gram blocks computed once.
//! 3. **Learned maps.** The maps of the best combination are learned (GIMC, Algorithm 1) on the
//!    training part, each with validation early stopping, and the combination is scored again
//!    with the learned maps. The learned maps are kept only if they beat the fixed ones on
//!    validation; otherwise the model keeps its random maps (iterations = 0).
//! 4. **Refit** of the chosen transform, maps (learned for the chosen number of iterations)
//!    and W on all training rows.
//!
//! Before all of this, constant feature columns and the columns the caller excludes (an
//! identifier attribute, [`AutoParams::exclude_columns`]) are dropped; the kept columns are part
//! of the returned [`Preprocess`], which `gimc predict` applies to new rows.

use std::collections::HashMap;
use std::time::Instant;

use gimc_featmap::{FeatureMap, Identity, MapFamily};
use gimc_linalg::dense::{gram_tn, matmul_tn};
use gimc_linalg::faer::Mat;
use gimc_linalg::memory::{MemoryBudget, MemoryEstimate, Tally, check_fits};
use gimc_linalg::rng::{GimcRng, child, seeded};
use gimc_linalg::solve::cholesky_solve;
use gimc_linalg::sparse::csr_tr_mul_dense;
use gimc_linalg::sprs::CsMat;
use gimc_linalg::{FeatureMatrix, Gamma, Preprocess, RowNorm, StandardizeMode, TfIdf};

use crate::data::LabelData;
use crate::error::param_err;
use crate::fit::{LabelParams, fit_labels};
use crate::memory::PROCESS_BASE_BYTES;
use crate::model::{LabelModel, PhiSource, evaluate_phi};
use crate::registry::{BoxedMap, DynFamily, MapRegistry};
use crate::select::{SelectionObserver, SelectionStage, validation_split};
use crate::{GimcError, IterationRecord, Observer, ObserverAction, Result};
use rand::seq::SliceRandom;

/// A row transform [`auto_fit`] tries: what the rows look like before the maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowTransform {
    /// The rows as they are, standardised (training mean and standard deviation) when dense.
    Raw,
    /// Every row scaled to unit L2 norm.
    L2,
    /// tf-idf column weights, then unit L2 rows (what PECOS and the extreme-classification
    /// tools use on text); only for sparse non-negative features (counts or binary).
    TfIdfL2,
}

impl RowTransform {
    /// Every transform, in the order they are tried.
    pub const ALL: [Self; 3] = [Self::Raw, Self::L2, Self::TfIdfL2];

    /// `raw`, `l2` or `tfidf-l2`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Raw => "raw",
            Self::L2 => "l2",
            Self::TfIdfL2 => "tfidf-l2",
        }
    }

    /// The transform called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether the transform applies to `x` (tf-idf needs sparse non-negative features).
    pub fn applies_to(self, x: &FeatureMatrix) -> bool {
        match self {
            Self::TfIdfL2 => x.is_sparse() && x.is_nonnegative(),
            _ => true,
        }
    }

    /// Learns the transform on `x` (the training rows): the [`Preprocess`] (without column
    /// selection) and the transformed rows.
    pub fn fit(self, x: &FeatureMatrix) -> Result<(Preprocess, FeatureMatrix)> {
        let mut pre = Preprocess::default();
        let out = match self {
            Self::Raw => match x.standardize_by(StandardizeMode::Auto)? {
                Some((z, st)) => {
                    pre.standardizer = Some(st);
                    z
                }
                None => x.clone(),
            },
            Self::L2 => {
                pre.row_norm = RowNorm::L2;
                x.normalize_rows(RowNorm::L2)
            }
            Self::TfIdfL2 => {
                let t = TfIdf::fit(x)?;
                let z = t.transform(x)?.normalize_rows(RowNorm::L2);
                pre.tfidf = Some(t);
                pre.row_norm = RowNorm::L2;
                z
            }
        };
        Ok((pre, out))
    }
}

/// Whether [`auto_fit`] may put the rows themselves in Φ (the linear part).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinearPart {
    /// Searched, when the row width is at most [`AutoParams::linear_max_dim`].
    Auto,
    /// Never.
    Off,
}

/// The search of [`auto_fit`]. [`AutoParams::default`] is what `gimc fit` does with no flags;
/// the `with_*` methods narrow it (a fixed γ, one map family, …), and [`AutoParams::check`]
/// validates it into the [`ValidAutoParams`] that [`auto_fit`] takes.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AutoParams {
    /// Row transforms tried (those that do not apply to the data are skipped). Default all of
    /// [`RowTransform::ALL`].
    pub transforms: Vec<RowTransform>,
    /// Candidate RBF widths, each resolved on the transformed training rows. Default
    /// {1/16, 1/4, 1} × the `scale` rule.
    pub gammas: Vec<Gamma>,
    /// Candidate λ, each multiplied per block by its mean squared row norm. Default {0.01,
    /// 0.1, 1, 10}.
    pub lambdas: Vec<f64>,
    /// Map families by registry name. Default `lff` and `lnys`.
    pub families: Vec<String>,
    /// m of every map (directions or landmarks; Nyström landmarks are capped at the number of
    /// training rows). Default 500.
    pub m: usize,
    /// The linear part. Default [`LinearPart::Auto`].
    pub linear: LinearPart,
    /// Widest rows the linear part takes (its Gram matrix is d × d). Default 4096.
    pub linear_max_dim: usize,
    /// Most outer iterations of map learning (0: maps stay random). Default 10.
    pub max_iter: usize,
    /// Map learning stops after this many outer iterations without a new best validation
    /// score. Default 2.
    pub patience: usize,
    /// Fraction of the training rows held out for validation, in (0, 1), when the search
    /// uses one split. Default 0.2.
    pub validation_fraction: f64,
    /// Folds of the cross-validated search on small data (≥ 2; 1 = always one split).
    /// Default 5.
    pub cv_folds: usize,
    /// Data with at most this many rows is searched by `cv_folds`-fold cross-validation (the
    /// maps are learned on the first fold); larger data on one split. Default 2000.
    pub cv_max_rows: usize,
    /// The k of the validation P@k that decides (multi-label; multi-class uses accuracy).
    /// Default 1.
    pub select_k: usize,
    /// Seed of the split and of every map draw. Default 0.
    pub seed: u64,
    /// The memory pre-flight ([`estimate_auto`]). Default [`MemoryBudget::Detect`].
    pub memory: MemoryBudget,
    /// Feature columns to drop before anything else (e.g. an identifier attribute with one
    /// value per row). Default none.
    pub exclude_columns: Vec<usize>,
}

impl Default for AutoParams {
    fn default() -> Self {
        Self {
            transforms: RowTransform::ALL.to_vec(),
            gammas: vec![Gamma::Scale(0.0625), Gamma::Scale(0.25), Gamma::SCALE],
            lambdas: vec![0.01, 0.1, 1.0, 10.0],
            families: vec!["lff".into(), "lnys".into()],
            m: 500,
            linear: LinearPart::Auto,
            linear_max_dim: 4096,
            max_iter: 10,
            patience: 2,
            validation_fraction: 0.2,
            cv_folds: 5,
            cv_max_rows: 2000,
            select_k: 1,
            seed: 0,
            memory: MemoryBudget::Detect,
            exclude_columns: Vec::new(),
        }
    }
}

macro_rules! auto_setters {
    ($($(#[$doc:meta])* $name:ident: $field:ident: $ty:ty;)*) => {
        impl AutoParams {
            $(
                $(#[$doc])*
                pub fn $name(mut self, $field: $ty) -> Self {
                    self.$field = $field;
                    self
                }
            )*
        }
    };
}

auto_setters! {
    /// Sets the row transforms tried.
    with_transforms: transforms: Vec<RowTransform>;
    /// Sets the candidate γ.
    with_gammas: gammas: Vec<Gamma>;
    /// Sets the candidate λ.
    with_lambdas: lambdas: Vec<f64>;
    /// Sets the map families (registry names).
    with_families: families: Vec<String>;
    /// Sets m.
    with_m: m: usize;
    /// Sets whether the linear part is searched.
    with_linear: linear: LinearPart;
    /// Sets the widest rows the linear part takes.
    with_linear_max_dim: linear_max_dim: usize;
    /// Sets the most outer iterations of map learning.
    with_max_iter: max_iter: usize;
    /// Sets the patience of map learning.
    with_patience: patience: usize;
    /// Sets the validation fraction.
    with_validation_fraction: validation_fraction: f64;
    /// Sets the folds of the cross-validated search.
    with_cv_folds: cv_folds: usize;
    /// Sets the most rows searched by cross-validation.
    with_cv_max_rows: cv_max_rows: usize;
    /// Sets the k of the deciding validation P@k.
    with_select_k: select_k: usize;
    /// Sets the seed.
    with_seed: seed: u64;
    /// Sets the memory budget of the pre-flight.
    with_memory: memory: MemoryBudget;
    /// Sets the feature columns dropped first.
    with_exclude_columns: exclude_columns: Vec<usize>;
}

impl AutoParams {
    /// Checks the search: non-empty lists, valid values.
    pub fn check(&self) -> Result<ValidAutoParams> {
        if self.transforms.is_empty() || self.gammas.is_empty() || self.lambdas.is_empty() {
            return Err(GimcError::Empty(
                "auto search (transforms, gammas, lambdas)",
            ));
        }
        if self.families.is_empty() && self.linear == LinearPart::Off {
            return Err(param_err(
                "families",
                "no map family and no linear part: nothing to fit",
            ));
        }
        for &g in &self.gammas {
            g.check()?;
        }
        for &l in &self.lambdas {
            if !(l > 0.0 && l.is_finite()) {
                return Err(param_err(
                    "lambda",
                    format!("must be finite and > 0, got {l}"),
                ));
            }
        }
        if self.m == 0 {
            return Err(param_err("m", "must be at least 1"));
        }
        if self.patience == 0 {
            return Err(param_err("patience", "must be at least 1"));
        }
        if !(self.validation_fraction > 0.0 && self.validation_fraction < 1.0) {
            return Err(param_err(
                "validation_fraction",
                format!("must be in (0, 1), got {}", self.validation_fraction),
            ));
        }
        if self.select_k == 0 {
            return Err(param_err("select_k", "must be at least 1"));
        }
        if self.cv_folds == 0 {
            return Err(param_err("cv_folds", "must be at least 1"));
        }
        Ok(ValidAutoParams(self.clone()))
    }
}

/// [`AutoParams`] that passed [`AutoParams::check`].
#[derive(Debug, Clone, PartialEq)]
pub struct ValidAutoParams(AutoParams);

impl std::ops::Deref for ValidAutoParams {
    type Target = AutoParams;
    fn deref(&self) -> &AutoParams {
        &self.0
    }
}

/// Which stage of the search a [`AutoTrial`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoStage {
    /// One block with a random map (or the linear part alone).
    Fixed,
    /// A union of blocks with random maps.
    Combined,
    /// The best union with its maps learned on the training part.
    Learned,
}

impl AutoStage {
    /// `fixed`, `combined` or `learned`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Fixed => "fixed",
            Self::Combined => "combined",
            Self::Learned => "learned",
        }
    }
}

/// One block of a candidate's Φ: the linear part or a map of a family at a γ.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockChoice {
    /// `linear`, or the map family's name.
    pub name: String,
    /// γ as a multiple of the scale rule (maps only).
    pub gamma_factor: Option<f64>,
    /// γ resolved on the rows the map saw (maps only).
    pub gamma: Option<f64>,
    /// Outer iterations the map was learned for (0: random map).
    pub iterations: usize,
}

impl BlockChoice {
    fn describe(&self) -> String {
        match (self.gamma_factor, self.gamma) {
            (Some(f), Some(g)) => format!(
                "{}(gamma={}*scale={:.4e}{})",
                self.name,
                f,
                g,
                if self.iterations > 0 {
                    format!(", learned {} it.", self.iterations)
                } else {
                    String::new()
                }
            ),
            _ => self.name.clone(),
        }
    }
}

/// One setting the search scored on the validation part.
#[derive(Debug, Clone, PartialEq)]
pub struct AutoTrial {
    /// The stage.
    pub stage: AutoStage,
    /// The row transform.
    pub transform: RowTransform,
    /// The blocks of Φ.
    pub blocks: Vec<BlockChoice>,
    /// The best λ of this setting.
    pub lambda: f64,
    /// Its validation score (P@select_k, or accuracy).
    pub score: f64,
}

impl AutoTrial {
    /// A one-line description, e.g. `tfidf-l2 linear+lff(gamma=0.25*scale=…) lambda=0.1`.
    pub fn describe(&self) -> String {
        format!(
            "{} {} lambda={}",
            self.transform.name(),
            self.blocks
                .iter()
                .map(BlockChoice::describe)
                .collect::<Vec<_>>()
                .join("+"),
            self.lambda
        )
    }
}

/// The result of [`auto_fit`].
#[derive(Debug)]
pub struct AutoSelection {
    /// The model refitted on all training rows (its maps: the linear part as an identity map,
    /// then one map per chosen family). It takes rows after [`AutoSelection::preprocess`].
    pub model: LabelModel<BoxedMap>,
    /// The transform of input rows (kept columns, tf-idf, standardisation, row norm).
    pub preprocess: Preprocess,
    /// The chosen setting (stage [`AutoStage::Learned`] when learning paid on validation).
    pub chosen: AutoTrial,
    /// Every setting scored, in search order (best λ of each).
    pub trials: Vec<AutoTrial>,
    /// Constant feature columns dropped.
    pub constant_columns: Vec<usize>,
    /// Columns dropped because the caller excluded them.
    pub excluded_columns: Vec<usize>,
    /// Seconds of the selection (everything before the refit) and of the refit.
    pub seconds: (f64, f64),
}

/// The features of one block on the training and validation parts.
struct Block {
    choice: BlockChoice,
    /// Training-part features: the rows themselves (linear part) or Φ_b.
    train: BlockRows,
    /// Validation-part features, dense.
    val: Mat<f64>,
    /// Φ_bᵀA (D_b × L).
    cross: Mat<f64>,
    /// Mean squared row norm on the training part (its λ multiplier).
    sq: f64,
    /// The map (None for the linear part).
    map: Option<BoxedMap>,
}

enum BlockRows {
    Rows(FeatureMatrix),
    Phi(Mat<f64>),
}

impl Block {
    fn dim(&self) -> usize {
        self.val.ncols()
    }

    fn new(
        choice: BlockChoice,
        train: BlockRows,
        val: Mat<f64>,
        labels: &CsMat<f64>,
        map: Option<BoxedMap>,
    ) -> Result<Self> {
        let n = labels.rows().max(1) as f64;
        let (cross, sq) = match &train {
            BlockRows::Rows(x) => (rows_cross(x, labels)?, x.frob_sq() / n),
            BlockRows::Phi(p) => (
                csr_tr_mul_dense(labels, p.as_ref())?.transpose().to_owned(),
                p.squared_norm_l2() / n,
            ),
        };
        Ok(Self {
            choice,
            train,
            val,
            cross,
            sq: if sq > 0.0 && sq.is_finite() { sq } else { 1.0 },
            map,
        })
    }
}

/// XᵀA (d × L) for the rows X and the sparse labels A, without an n × L matrix.
fn rows_cross(x: &FeatureMatrix, labels: &CsMat<f64>) -> Result<Mat<f64>> {
    match x {
        FeatureMatrix::Dense(m) => Ok(csr_tr_mul_dense(labels, m.as_ref())?.transpose().to_owned()),
        FeatureMatrix::Sparse(s) => {
            let mut out = Mat::zeros(x.ncols(), labels.cols());
            for (xi, ai) in s.outer_iterator().zip(labels.outer_iterator()) {
                for (j, &v) in xi.iter() {
                    for (l, &a) in ai.iter() {
                        out[(j, l)] += v * a;
                    }
                }
            }
            Ok(out)
        }
    }
}

/// Φ_aᵀΦ_b on the training part.
fn pair_gram(a: &Block, b: &Block) -> Result<Mat<f64>> {
    Ok(match (&a.train, &b.train) {
        (BlockRows::Rows(x), BlockRows::Rows(_)) => x.gram(),
        (BlockRows::Rows(x), BlockRows::Phi(p)) => x.tr_mul_dense(p.as_ref())?,
        (BlockRows::Phi(p), BlockRows::Rows(x)) => {
            x.tr_mul_dense(p.as_ref())?.transpose().to_owned()
        }
        (BlockRows::Phi(p), BlockRows::Phi(q)) => {
            if std::ptr::eq(a, b) {
                gram_tn(p.as_ref())
            } else {
                matmul_tn(p.as_ref(), q.as_ref())?
            }
        }
    })
}

/// The blocks of one transform with their pairwise Gram matrices (computed on first use).
struct Blocks {
    blocks: Vec<Block>,
    grams: Vec<Vec<Option<Mat<f64>>>>,
}

impl Blocks {
    fn new() -> Self {
        Self {
            blocks: Vec::new(),
            grams: Vec::new(),
        }
    }

    fn push(&mut self, b: Block) -> usize {
        self.blocks.push(b);
        for row in &mut self.grams {
            row.push(None);
        }
        self.grams.push(vec![None; self.blocks.len()]);
        self.blocks.len() - 1
    }

    /// Frees block `i`'s features once the search has moved past it.
    fn release(&mut self, i: usize) {
        let b = &mut self.blocks[i];
        b.train = BlockRows::Phi(Mat::zeros(0, 0));
        b.val = Mat::zeros(0, 0);
        b.map = None;
        for j in 0..self.blocks.len() {
            self.grams[i][j] = None;
            self.grams[j][i] = None;
        }
    }

    fn gram(&mut self, i: usize, j: usize) -> Result<&Mat<f64>> {
        let (lo, hi) = if i <= j { (i, j) } else { (j, i) };
        if self.grams[lo][hi].is_none() {
            let g = pair_gram(&self.blocks[lo], &self.blocks[hi])?;
            self.grams[lo][hi] = Some(g);
        }
        Ok(self.grams[lo][hi].as_ref().expect("just filled"))
    }

    /// The validation score of the union of blocks `set` for every λ of `lambdas`, in order.
    fn scores(
        &mut self,
        set: &[usize],
        lambdas: &[f64],
        val: &LabelData,
        select_k: usize,
    ) -> Result<Vec<f64>> {
        let (gram, cross, penalty) = self.system(set)?;
        let phi_val = self.val_features(set);
        lambdas
            .iter()
            .map(|&lambda| {
                let w = solve_blocks(&gram, &cross, &penalty, lambda)?;
                Ok(evaluate_phi(
                    PhiSource::Whole(phi_val.as_ref()),
                    w.as_ref(),
                    val,
                    &[select_k],
                )?
                .score(val.task(), select_k)
                .unwrap_or(f64::NEG_INFINITY))
            })
            .collect()
    }

    /// ΦᵀΦ, ΦᵀA and the per-coordinate penalty multipliers of the union `set`.
    fn system(&mut self, set: &[usize]) -> Result<(Mat<f64>, Mat<f64>, Vec<f64>)> {
        let dims: Vec<usize> = set.iter().map(|&i| self.blocks[i].dim()).collect();
        let total: usize = dims.iter().sum();
        let l = self.blocks[set[0]].cross.ncols();
        let mut gram = Mat::zeros(total, total);
        let mut cross = Mat::zeros(total, l);
        let mut penalty = Vec::with_capacity(total);
        let mut off_a = 0;
        for (ia, &a) in set.iter().enumerate() {
            let mut off_b = 0;
            for (ib, &b) in set.iter().enumerate() {
                let g = self.gram(a, b)?;
                let g = if a <= b {
                    g.as_ref()
                } else {
                    g.as_ref().transpose()
                };
                gram.as_mut()
                    .submatrix_mut(off_a, off_b, dims[ia], dims[ib])
                    .copy_from(g);
                off_b += dims[ib];
            }
            cross
                .as_mut()
                .subrows_mut(off_a, dims[ia])
                .copy_from(self.blocks[a].cross.as_ref());
            penalty.extend(std::iter::repeat_n(self.blocks[a].sq, dims[ia]));
            off_a += dims[ia];
        }
        Ok((gram, cross, penalty))
    }

    fn val_features(&self, set: &[usize]) -> Mat<f64> {
        if let [one] = set {
            return self.blocks[*one].val.clone();
        }
        let parts: Vec<&Mat<f64>> = set.iter().map(|&i| &self.blocks[i].val).collect();
        hstack(&parts)
    }
}

fn hstack(parts: &[&Mat<f64>]) -> Mat<f64> {
    let n = parts.first().map_or(0, |p| p.nrows());
    let total: usize = parts.iter().map(|p| p.ncols()).sum();
    let mut out = Mat::zeros(n, total);
    let mut off = 0;
    for p in parts {
        out.as_mut()
            .subcols_mut(off, p.ncols())
            .copy_from(p.as_ref());
        off += p.ncols();
    }
    out
}

/// W = (G + λ·diag(s))⁻¹C (the block-penalised ridge solve).
fn solve_blocks(
    gram: &Mat<f64>,
    cross: &Mat<f64>,
    penalty: &[f64],
    lambda: f64,
) -> Result<Mat<f64>> {
    let mut g = gram.clone();
    for (i, &s) in penalty.iter().enumerate() {
        g[(i, i)] += lambda * s;
    }
    Ok(cholesky_solve(g.as_ref(), cross.as_ref())?)
}

/// Columns with one value over every row (zero columns included).
pub fn constant_columns(x: &FeatureMatrix) -> Vec<usize> {
    let n = x.nrows();
    match x {
        FeatureMatrix::Dense(m) => (0..m.ncols())
            .filter(|&j| {
                let c = m.col_as_slice(j);
                c.iter().all(|&v| v == c[0])
            })
            .collect(),
        FeatureMatrix::Sparse(s) => {
            // a column is constant when it is all zero, or stored in every row with one value
            let d = s.cols();
            let mut count = vec![0usize; d];
            let mut first = vec![f64::NAN; d];
            let mut same = vec![true; d];
            for row in s.outer_iterator() {
                for (j, &v) in row.iter() {
                    if v == 0.0 {
                        continue;
                    }
                    if count[j] == 0 {
                        first[j] = v;
                    } else if v != first[j] {
                        same[j] = false;
                    }
                    count[j] += 1;
                }
            }
            (0..d)
                .filter(|&j| count[j] == 0 || (count[j] == n && same[j]))
                .collect()
        }
    }
}

/// The estimated peak memory of [`auto_fit`]: the data and its transformed copies, the blocks
/// of the widest union (training and validation features, their Gram matrix and a factor of
/// it), and the refit's features.
pub fn estimate_auto(data: &LabelData, params: &AutoParams) -> Result<MemoryEstimate> {
    let n = data.nrows();
    let d = data.features().ncols();
    let l = data.n_labels();
    let n_val = ((n as f64) * params.validation_fraction).round() as usize;
    let map_dim = params
        .families
        .len()
        .saturating_mul(params.m.saturating_mul(2));
    let lin = if params.linear == LinearPart::Auto && d <= params.linear_max_dim {
        d
    } else {
        0
    };
    let width = map_dim.saturating_add(lin);
    let x = crate::memory::feature_bytes(data.features());
    let mut t = Tally::new("auto fit", "m");
    t.bytes("process", PROCESS_BASE_BYTES)
        .bytes("X, its transformed and split copies", x.saturating_mul(4))
        .f64s("block features (train, validation)", n, width)
        .f64s("Gram matrix and its factor", width, width.saturating_mul(3))
        .f64s("block cross products and W", width, l.saturating_mul(3))
        .f64s(
            "map gradient buffers",
            n.saturating_sub(n_val),
            params.m.saturating_mul(4),
        );
    Ok(t.finish())
}

/// Forwards the iterations of the map learning to a [`SelectionObserver`].
struct Forward<'a, S: SelectionObserver + ?Sized>(&'a mut S);

impl<S: SelectionObserver + ?Sized> Observer for Forward<'_, S> {
    fn observe(&mut self, record: &IterationRecord) -> ObserverAction {
        self.0.iteration(record);
        if self.0.interrupted() {
            ObserverAction::Stop
        } else {
            ObserverAction::Continue
        }
    }
}

/// A block of a candidate before it is built on some rows: the linear part, or the map of
/// family `family` (index into [`AutoParams::families`]) at γ number `gamma`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Spec {
    Linear,
    Map { family: usize, gamma: usize },
}

/// The transformed training and validation parts of one fold.
struct Fold {
    train: LabelData,
    val: LabelData,
}

/// What the search needs at hand: the checked parameters, the families, the root generator and
/// the size of every family's maps.
struct Search<'a> {
    params: &'a ValidAutoParams,
    families: Vec<&'a DynFamily>,
    root: GimcRng,
    /// m of each family (Nyström landmarks capped at the fewest training rows of a fold).
    sizes: Vec<usize>,
}

impl Search<'_> {
    fn choice(&self, spec: Spec, gamma: Option<f64>) -> BlockChoice {
        match spec {
            Spec::Linear => BlockChoice {
                name: "linear".into(),
                gamma_factor: None,
                gamma: None,
                iterations: 0,
            },
            Spec::Map { family, gamma: gi } => BlockChoice {
                name: self.families[family].name().to_string(),
                gamma_factor: match self.params.gammas[gi] {
                    Gamma::Scale(f) => Some(f),
                    Gamma::Value(_) => None,
                },
                gamma,
                iterations: 0,
            },
        }
    }

    /// The map of `spec` drawn on `x` (every γ and fold of a family draws from one stream).
    fn draw(&self, family: usize, gamma: f64, x: &FeatureMatrix) -> Result<BoxedMap> {
        Ok(self.families[family].build(
            x,
            self.sizes[family],
            gamma,
            &mut child(&self.root, 1 + family as u64),
        )?)
    }

    /// Block `spec` on a fold.
    fn build(&self, spec: Spec, fold: &Fold) -> Result<Block> {
        let labels = fold.train.labels();
        match spec {
            Spec::Linear => Block::new(
                self.choice(spec, None),
                BlockRows::Rows(fold.train.features().clone()),
                fold.val.features().to_dense(),
                labels,
                None,
            ),
            Spec::Map { family, gamma } => {
                let g = self.params.gammas[gamma].resolve(fold.train.features());
                let map = self.draw(family, g, fold.train.features())?;
                self.map_block(self.choice(spec, Some(g)), map, fold)
            }
        }
    }

    fn map_block(&self, choice: BlockChoice, map: BoxedMap, fold: &Fold) -> Result<Block> {
        let phi_tr = map.forward(fold.train.features())?;
        let phi_va = map.forward(fold.val.features())?;
        Block::new(
            choice,
            BlockRows::Phi(phi_tr),
            phi_va,
            fold.train.labels(),
            Some(map),
        )
    }

    /// The mean validation score over `folds` of every candidate (a union of blocks) for every
    /// λ. A fold's blocks are built once and freed after their last candidate.
    fn cv_scores(&self, folds: &[Fold], candidates: &[Vec<Spec>]) -> Result<Vec<Vec<f64>>> {
        let nl = self.params.lambdas.len();
        let mut acc = vec![vec![0.0; nl]; candidates.len()];
        let mut last_use: HashMap<Spec, usize> = HashMap::new();
        for (c, set) in candidates.iter().enumerate() {
            for &spec in set {
                last_use.insert(spec, c);
            }
        }
        for fold in folds {
            let mut blocks = Blocks::new();
            let mut index: HashMap<Spec, usize> = HashMap::new();
            for (c, set) in candidates.iter().enumerate() {
                let mut ids = Vec::with_capacity(set.len());
                for &spec in set {
                    let i = match index.get(&spec) {
                        Some(&i) => i,
                        None => {
                            let i = blocks.push(self.build(spec, fold)?);
                            index.insert(spec, i);
                            i
                        }
                    };
                    ids.push(i);
                }
                let s =
                    blocks.scores(&ids, &self.params.lambdas, &fold.val, self.params.select_k)?;
                for (a, v) in acc[c].iter_mut().zip(s) {
                    *a += v / folds.len() as f64;
                }
                for &spec in set {
                    if last_use.get(&spec) == Some(&c) {
                        blocks.release(index[&spec]);
                    }
                }
            }
        }
        Ok(acc)
    }

    /// The trial of candidate `set` from its per-λ scores (the best λ; the smallest on ties).
    fn trial(
        &self,
        stage: AutoStage,
        transform: RowTransform,
        set: &[Spec],
        scores: &[f64],
        fold: &Fold,
    ) -> AutoTrial {
        let (li, score) =
            scores
                .iter()
                .copied()
                .enumerate()
                .fold(
                    (0, f64::NEG_INFINITY),
                    |b, (i, s)| if s > b.1 { (i, s) } else { b },
                );
        AutoTrial {
            stage,
            transform,
            blocks: set
                .iter()
                .map(|&spec| {
                    let g = match spec {
                        Spec::Map { gamma, .. } => {
                            Some(self.params.gammas[gamma].resolve(fold.train.features()))
                        }
                        Spec::Linear => None,
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
fn fold_rows(
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
    match data.classes() {
        Some(classes) => {
            let mut by_class = vec![Vec::new(); data.n_labels()];
            for (i, &c) in classes.iter().enumerate() {
                if let Some(v) = by_class.get_mut(c) {
                    v.push(i);
                }
            }
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

/// Chooses the row transform, γ, λ, maps, linear part and learning iterations on validation
/// data from the training rows and refits on all of them (see the module documentation).
/// `registry` names the map families. `data` holds the raw rows; the returned
/// [`AutoSelection::preprocess`] turns raw rows into the model's input.
pub fn auto_fit<S: SelectionObserver + ?Sized>(
    data: &LabelData,
    registry: &MapRegistry,
    params: &ValidAutoParams,
    observer: &mut S,
) -> Result<AutoSelection> {
    let started = Instant::now();
    check_fits(&estimate_auto(data, params)?, params.memory)?;
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
    let search = Search {
        params,
        families,
        root,
        sizes,
    };
    let linear =
        params.linear == LinearPart::Auto && data.features().ncols() <= params.linear_max_dim;
    let mut trials = Vec::new();
    let mut win: Option<(
        RowTransform,
        Vec<Fold>,
        Vec<Spec>,
        AutoTrial,
        Option<Vec<Spec>>,
    )> = None;
    for &transform in &params.transforms {
        if !transform.applies_to(data.features()) {
            continue;
        }
        let folds = split
            .iter()
            .map(|(tr, va)| {
                let train = data.select_rows(tr)?;
                let (pre, xt) = transform.fit(train.features())?;
                let val = data.select_rows(va)?;
                let xv = pre.apply(val.features())?;
                Ok(Fold {
                    train: train.with_features(xt)?,
                    val: val.with_features(xv)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let (best, best_map) = search.transform_trials(transform, &folds, linear, &mut trials)?;
        if observer.interrupted() {
            return Err(GimcError::Interrupted);
        }
        if let Some((set, t)) = best {
            if win.as_ref().is_none_or(|w| t.score > w.3.score) {
                win = Some((transform, folds, set, t, best_map));
            }
        }
    }
    let Some((transform, folds, set, mut chosen, map_set)) = win else {
        return Err(GimcError::Empty("auto search (no transform applies)"));
    };
    if let (Some(map_set), true) = (map_set, params.max_iter > 0) {
        if let Some(t) = search.learn(transform, &folds[0], &set, &map_set, observer)? {
            trials.push(t.clone());
            chosen = t;
        }
    }
    let select_secs = started.elapsed().as_secs_f64();
    let refit_started = Instant::now();
    let (model, pre) = search.refit(&data, &chosen, observer)?;
    let preprocess = Preprocess {
        columns,
        input_dim: Some(d_raw),
        ..pre
    };
    Ok(AutoSelection {
        model,
        preprocess,
        chosen,
        trials,
        constant_columns: constant,
        excluded_columns: excluded,
        seconds: (select_secs, refit_started.elapsed().as_secs_f64()),
    })
}

/// Drops the constant columns of `data` and the `exclude`d ones: the data on the kept
/// columns, the kept columns (`None` when all are kept), the constant columns and the
/// excluded non-constant ones.
#[allow(clippy::type_complexity)]
fn drop_columns(
    data: &LabelData,
    exclude: &[usize],
) -> Result<(LabelData, Option<Vec<usize>>, Vec<usize>, Vec<usize>)> {
    let d = data.features().ncols();
    if let Some(&j) = exclude.iter().find(|&&j| j >= d) {
        return Err(param_err(
            "exclude_columns",
            format!("column {j} is out of range ({d} columns)"),
        ));
    }
    let constant = constant_columns(data.features());
    let mut excluded: Vec<usize> = exclude
        .iter()
        .copied()
        .filter(|j| constant.binary_search(j).is_err())
        .collect();
    excluded.sort_unstable();
    excluded.dedup();
    let kept: Vec<usize> = (0..d)
        .filter(|j| constant.binary_search(j).is_err() && excluded.binary_search(j).is_err())
        .collect();
    if kept.is_empty() {
        return Err(param_err(
            "features",
            "every feature column is constant or excluded: nothing to learn from",
        ));
    }
    if kept.len() == d {
        return Ok((data.clone(), None, constant, excluded));
    }
    let narrowed = data.with_features(data.features().select_columns(&kept)?)?;
    Ok((narrowed, Some(kept), constant, excluded))
}

/// m of a map of `family` on `rows` training rows: Nyström landmarks are capped at the rows.
fn map_size(family: &str, m: usize, rows: usize) -> usize {
    if family.contains("nys") {
        m.min(rows)
    } else {
        m
    }
}

/// The best union of one transform, and the best union holding a map.
type TransformBest = (Option<(Vec<Spec>, AutoTrial)>, Option<Vec<Spec>>);

impl Search<'_> {
    /// Stages 1 and 2 on one transform: every block alone, then every union of the best block
    /// of each kind; the trials are appended to `trials`.
    fn transform_trials(
        &self,
        transform: RowTransform,
        folds: &[Fold],
        linear: bool,
        trials: &mut Vec<AutoTrial>,
    ) -> Result<TransformBest> {
        let mut singles: Vec<Spec> = Vec::new();
        if linear {
            singles.push(Spec::Linear);
        }
        for family in 0..self.families.len() {
            for gamma in 0..self.params.gammas.len() {
                singles.push(Spec::Map { family, gamma });
            }
        }
        let one: Vec<Vec<Spec>> = singles.iter().map(|&s| vec![s]).collect();
        let scores = self.cv_scores(folds, &one)?;
        let mut best: Option<(Vec<Spec>, AutoTrial)> = None;
        let mut best_map: Option<(Vec<Spec>, f64)> = None;
        let mut consider = |set: &[Spec], t: &AutoTrial| {
            if best.as_ref().is_none_or(|(_, b)| t.score > b.score) {
                best = Some((set.to_vec(), t.clone()));
            }
            let has_map = set.iter().any(|s| matches!(s, Spec::Map { .. }));
            if has_map && best_map.as_ref().is_none_or(|(_, b)| t.score > *b) {
                best_map = Some((set.to_vec(), t.score));
            }
        };
        // the best block of each kind: the linear part, and each family at its best γ
        let mut kinds: Vec<(Spec, f64)> = Vec::new();
        for (set, s) in one.iter().zip(&scores) {
            let t = self.trial(AutoStage::Fixed, transform, set, s, &folds[0]);
            consider(set, &t);
            let kind = |x: &Spec| match x {
                Spec::Linear => None,
                Spec::Map { family, .. } => Some(*family),
            };
            match kinds.iter_mut().find(|(k, _)| kind(k) == kind(&set[0])) {
                Some(slot) if t.score > slot.1 => *slot = (set[0], t.score),
                Some(_) => {}
                None => kinds.push((set[0], t.score)),
            }
            trials.push(t);
        }
        let mut unions: Vec<Vec<Spec>> = Vec::new();
        for mask in 1u32..(1 << kinds.len()) {
            if mask.count_ones() >= 2 {
                unions.push(
                    (0..kinds.len())
                        .filter(|b| mask & (1 << b) != 0)
                        .map(|b| kinds[b].0)
                        .collect(),
                );
            }
        }
        let scores = self.cv_scores(folds, &unions)?;
        for (set, s) in unions.iter().zip(&scores) {
            let t = self.trial(AutoStage::Combined, transform, set, s, &folds[0]);
            consider(set, &t);
            trials.push(t);
        }
        Ok((best, best_map.map(|(s, _)| s)))
    }

    /// Stage 3 on the first fold: learns the maps of `map_set` (the best union holding a map)
    /// and scores the union with them. Returns the learned trial when it beats the best union
    /// `best` on the same fold, else `None` (the random maps stay).
    fn learn<S: SelectionObserver + ?Sized>(
        &self,
        transform: RowTransform,
        fold: &Fold,
        best: &[Spec],
        map_set: &[Spec],
        observer: &mut S,
    ) -> Result<Option<AutoTrial>> {
        let lambdas = &self.params.lambdas;
        let k = self.params.select_k;
        let to_beat = self.cv_scores(
            std::slice::from_ref(fold),
            &[best.to_vec(), map_set.to_vec()],
        )?;
        let best_score = to_beat[0].iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let set_trial = self.trial(AutoStage::Learned, transform, map_set, &to_beat[1], fold);
        let mut blocks = Blocks::new();
        let mut ids = Vec::new();
        let n_maps = map_set
            .iter()
            .filter(|s| matches!(s, Spec::Map { .. }))
            .count();
        let mut learned_any = false;
        for &spec in map_set {
            let mut block = self.build(spec, fold)?;
            if let (Spec::Map { .. }, Some(map)) = (spec, block.map.take()) {
                let lp = LabelParams {
                    lambda: set_trial.lambda * block.sq,
                    max_iter: self.params.max_iter,
                    eval_ks: vec![k],
                    select_k: k,
                    eval_train: false,
                    patience: Some(self.params.patience),
                    ..LabelParams::default()
                }
                .check()?;
                observer.fit_started(
                    &SelectionStage::Candidate {
                        index: ids.len().min(n_maps.saturating_sub(1)),
                        total: n_maps,
                        m: map.output_dim(),
                        gamma: block.choice.gamma.unwrap_or(f64::NAN),
                        lambda: lp.lambda,
                    },
                    self.params.max_iter,
                );
                let fit = fit_labels(
                    &fold.train,
                    map,
                    &lp,
                    Some(&fold.val),
                    &mut Forward(&mut *observer),
                )?;
                if observer.interrupted() {
                    return Err(GimcError::Interrupted);
                }
                let iterations = fit.chosen_iteration();
                let map = fit
                    .into_chosen()?
                    .into_maps()
                    .pop()
                    .ok_or(GimcError::Empty("feature maps"))?;
                let mut choice = block.choice.clone();
                choice.iterations = iterations;
                learned_any |= iterations > 0;
                block = self.map_block(choice, map, fold)?;
            }
            ids.push(blocks.push(block));
        }
        if !learned_any {
            return Ok(None);
        }
        let scores = blocks.scores(&ids, lambdas, &fold.val, k)?;
        let (li, score) =
            scores
                .iter()
                .copied()
                .enumerate()
                .fold(
                    (0, f64::NEG_INFINITY),
                    |b, (i, s)| if s > b.1 { (i, s) } else { b },
                );
        if score <= best_score {
            return Ok(None);
        }
        Ok(Some(AutoTrial {
            stage: AutoStage::Learned,
            transform,
            blocks: ids
                .iter()
                .map(|&i| blocks.blocks[i].choice.clone())
                .collect(),
            lambda: lambdas[li],
            score,
        }))
    }

    /// Stage 4: the chosen transform, maps (learned for their chosen iterations) and W on
    /// every row of `data`.
    fn refit<S: SelectionObserver + ?Sized>(
        &self,
        data: &LabelData,
        chosen: &AutoTrial,
        observer: &mut S,
    ) -> Result<(LabelModel<BoxedMap>, Preprocess)> {
        let iterations = chosen
            .blocks
            .iter()
            .map(|b| b.iterations)
            .max()
            .unwrap_or(0);
        observer.fit_started(
            &SelectionStage::Refit {
                chosen: crate::select::Chosen {
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
        let (pre, xt) = chosen.transform.fit(data.features())?;
        let all = data.with_features(xt)?;
        let fold = Fold {
            train: all.clone(),
            val: all.select_rows(&[0])?,
        };
        let mut maps: Vec<BoxedMap> = Vec::new();
        let mut blocks = Blocks::new();
        let mut set = Vec::new();
        for b in &chosen.blocks {
            if b.name == "linear" {
                set.push(blocks.push(self.build(Spec::Linear, &fold)?));
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
                Some(f) => Gamma::Scale(f).resolve(all.features()),
                None => b.gamma.unwrap_or(1.0),
            };
            let mut map = self.draw(family, gamma, all.features())?;
            if b.iterations > 0 {
                let sq = map.forward(all.features())?.squared_norm_l2() / all.nrows().max(1) as f64;
                let lp = LabelParams {
                    lambda: chosen.lambda * if sq > 0.0 { sq } else { 1.0 },
                    max_iter: b.iterations,
                    eval_ks: vec![self.params.select_k],
                    select_k: self.params.select_k,
                    eval_train: false,
                    ..LabelParams::default()
                }
                .check()?;
                let fit = fit_labels(&all, map, &lp, None, &mut Forward(&mut *observer))?;
                if observer.interrupted() {
                    return Err(GimcError::Interrupted);
                }
                map = fit
                    .model
                    .into_maps()
                    .pop()
                    .ok_or(GimcError::Empty("feature maps"))?;
            }
            let mut block = self.map_block(b.clone(), map, &fold)?;
            maps.push(block.map.take().ok_or(GimcError::Empty("feature maps"))?);
            set.push(blocks.push(block));
        }
        let (gram, cross, penalty) = blocks.system(&set)?;
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
