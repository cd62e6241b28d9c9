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
//! P@k over [`AutoParams::select_ks`] (default P@1 and P@3), or accuracy for classes.
//!
//! The search, cheapest first:
//! 1. **Single blocks.** For every row transform ([`RowTransform`]) and γ (multiples of the
//!    `scale` rule on the rows as the maps see them), every block alone is one ridge solve per
//!    λ (W = (ΦᵀΦ + Λ)⁻¹ΦᵀA). Per transform, the best γ of each family goes on.
//! 2. **Unions.** Per transform, every union of two or more of the best block of each kind (the
//!    linear part with a map, two maps — the paper's combined LFF + LNYS model — or all of
//!    them), again one ridge solve per λ from Gram blocks computed once.
//! 3. **Learned maps**, on the transform whose best union scored highest: successive halving
//!    over the maps with the best fixed scores, each at its fixed λ and ten times it (GIMC's map
//!    learning, Algorithm 1, on every fold); each map's iteration count is the best of its mean
//!    validation curve. The learned maps alone and in unions are scored like the fixed ones, and
//!    they are chosen only if they score higher; otherwise the maps stay random.
//! 4. **Refit** of the chosen transform, maps (learned for their chosen number of iterations)
//!    and W on all training rows.
//!
//! Before all of this, constant feature columns and the columns the caller excludes (an
//! identifier attribute, [`AutoParams::exclude_columns`]) are dropped; the kept columns are part
//! of the returned [`Preprocess`], which `gimc predict` applies to new rows.

use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Instant;

use gimc_featmap::{Constant, FeatureMap, Identity, MapFamily};
use gimc_linalg::dense::{gram_tn, matmul_tn};
use gimc_linalg::faer::Mat;
use gimc_linalg::memory::{MemoryBudget, MemoryEstimate, Tally, check_fits};
use gimc_linalg::rng::{GimcRng, child, seeded};
use gimc_linalg::solve::cholesky_solve;
use gimc_linalg::sparse::csr_tr_mul_dense;
use gimc_linalg::sprs::CsMat;
use gimc_linalg::{FeatureMatrix, Gamma, Preprocess, RowNorm, StandardizeMode, TfIdf};

use crate::error::param_err;
use crate::error::{GimcError, Result};
use crate::labels::data::LabelData;
use crate::labels::fit::{LabelParams, fit_labels};
use crate::labels::model::{LabelModel, PhiSource, evaluate_phi};
use crate::labels::select::{SelectionObserver, SelectionStage, validation_split};
use crate::memory::PROCESS_BASE_BYTES;
use crate::registry::{BoxedMap, DynFamily, MapRegistry};
use gimc_solvers::{IterationRecord, Observer, ObserverAction};
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
    /// Candidate λ, each multiplied per block by its mean squared row norm. Default {0.001,
    /// 0.01, 0.1, 1, 10}.
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
    /// The ks whose mean validation P@k decides (multi-label; multi-class uses accuracy).
    /// Default {1, 3}: more hits per row than P@1 alone, so the choice is less noisy.
    pub select_ks: Vec<usize>,
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
            lambdas: vec![0.001, 0.01, 0.1, 1.0, 10.0],
            families: vec!["lff".into(), "lnys".into()],
            m: 500,
            linear: LinearPart::Auto,
            linear_max_dim: 4096,
            max_iter: 10,
            patience: 2,
            validation_fraction: 0.2,
            cv_folds: 5,
            cv_max_rows: 2000,
            select_ks: vec![1, 3],
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
    /// Sets the ks of the deciding validation P@k.
    with_select_ks: select_ks: Vec<usize>;
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
        if self.select_ks.is_empty() || self.select_ks.contains(&0) {
            return Err(param_err(
                "select_ks",
                "must be one or more ks of at least 1",
            ));
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
    /// Its validation score (the mean P@k over [`AutoParams::select_ks`], or accuracy).
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
    /// ΦΦᵀ on the training part and Φ_valΦᵀ (the dual form, for unions wider than the rows),
    /// formed on first use.
    kernels: Option<(Mat<f64>, Mat<f64>)>,
}

enum BlockRows {
    Rows(FeatureMatrix),
    Phi(Mat<f64>),
}

impl Block {
    fn dim(&self) -> usize {
        self.val.ncols()
    }

    /// (ΦΦᵀ, Φ_valΦᵀ), formed once.
    fn kernels(&mut self) -> Result<&(Mat<f64>, Mat<f64>)> {
        let k = match self.kernels.take() {
            Some(k) => k,
            None => match &self.train {
                BlockRows::Rows(x) => (
                    x.outer_gram(),
                    x.mul_dense(self.val.as_ref().transpose())?
                        .transpose()
                        .to_owned(),
                ),
                BlockRows::Phi(p) => (
                    gimc_linalg::dense::gram_nt(p.as_ref()),
                    gimc_linalg::dense::matmul_nt(self.val.as_ref(), p.as_ref())?,
                ),
            },
        };
        Ok(&*self.kernels.insert(k))
    }

    fn new(
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
            train,
            val,
            cross,
            sq: if sq > 0.0 && sq.is_finite() { sq } else { 1.0 },
            map,
            kernels: None,
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
        b.kernels = None;
        for j in 0..self.blocks.len() {
            self.grams[i][j] = None;
            self.grams[j][i] = None;
        }
    }

    fn gram(&mut self, i: usize, j: usize) -> Result<&Mat<f64>> {
        let (lo, hi) = if i <= j { (i, j) } else { (j, i) };
        let g = match self.grams[lo][hi].take() {
            Some(g) => g,
            None => pair_gram(&self.blocks[lo], &self.blocks[hi])?,
        };
        Ok(&*self.grams[lo][hi].insert(g))
    }

    /// The validation score of the union of blocks `set` for every λ of `lambdas`, in order.
    fn scores(
        &mut self,
        set: &[usize],
        lambdas: &[f64],
        train: &LabelData,
        val: &LabelData,
        ks: &[usize],
    ) -> Result<Vec<f64>> {
        let width: usize = set.iter().map(|&i| self.blocks[i].dim()).sum();
        if train.nrows() < width {
            return self.dual_scores(set, lambdas, train, val, ks);
        }
        let (gram, cross, penalty) = self.system(set)?;
        let phi_val = self.val_features(set);
        lambdas
            .iter()
            .map(|&lambda| {
                let w = solve_blocks(&gram, &cross, &penalty, lambda)?;
                let e = evaluate_phi(PhiSource::Whole(phi_val.as_ref()), w.as_ref(), val, ks)?;
                Ok(select_score(&e, val.task(), ks))
            })
            .collect()
    }

    /// [`Blocks::scores`] in the dual form, for a union wider than the training rows: with
    /// M = Σ_b Φ_bΦ_bᵀ/s_b and K_val = Σ_b Φ_val,bΦ_bᵀ/s_b the validation scores of the
    /// block-penalised ridge solution are K_val(M + λI)⁻¹A (O(n³) instead of O(D³)).
    fn dual_scores(
        &mut self,
        set: &[usize],
        lambdas: &[f64],
        train: &LabelData,
        val: &LabelData,
        ks: &[usize],
    ) -> Result<Vec<f64>> {
        let (n, nv) = (train.nrows(), val.nrows());
        let mut m = Mat::<f64>::zeros(n, n);
        let mut kv = Mat::<f64>::zeros(nv, n);
        for &i in set {
            let s = self.blocks[i].sq;
            let (k, v) = self.blocks[i].kernels()?;
            m += k * (1.0 / s);
            kv += v * (1.0 / s);
        }
        let a = gimc_linalg::sparse::csr_to_dense(train.labels());
        lambdas
            .iter()
            .map(|&lambda| {
                let mut ml = m.clone();
                for j in 0..n {
                    ml[(j, j)] += lambda;
                }
                let z = cholesky_solve(ml.as_ref(), a.as_ref())?;
                let e = evaluate_phi(PhiSource::Whole(kv.as_ref()), z.as_ref(), val, ks)?;
                Ok(select_score(&e, val.task(), ks))
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

/// The estimated peak memory of [`auto_fit`]: the data and its transformed copies, the blocks
/// of every transform's widest union (training and validation features), the widest Gram
/// matrix and its factor, and the map learning's gradient buffers.
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
    let mut t = Tally::new("fit", "m");
    t.bytes("process", PROCESS_BASE_BYTES)
        .bytes("X, its transformed and split copies", x.saturating_mul(4))
        // the constant-column scan (count, first value, flag) and the column lists it returns
        .bytes(
            format!("per-column statistics of {d} columns"),
            (d as u64).saturating_mul(COLUMN_STAT_BYTES),
        )
        .lowered_by("the number of feature columns")
        .f64s(
            "map parameters (Fourier directions, Nyström landmarks)",
            d,
            map_dim,
        )
        .f64s(
            "block features of every transform (train, validation)",
            n,
            width.saturating_mul(params.transforms.len().max(1)),
        )
        .f64s("Gram matrix and its factor", width, width.saturating_mul(3))
        .f64s("block cross products and W", width, l.saturating_mul(3))
        .f64s(
            "map gradient buffers",
            n.saturating_sub(n_val),
            params.m.saturating_mul(4),
        );
    Ok(t.finish())
}

/// Bytes per input column of the column analysis of [`auto_fit`]: a count, a first value and a
/// flag per column (`FeatureMatrix::constant_columns`), the constant and kept column lists,
/// and the tf-idf weights.
const COLUMN_STAT_BYTES: u64 = 8 + 8 + 1 + 8 + 8 + 8;

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

/// The transform whose best union scored highest, with its folds and every single block's
/// best λ and score (where the map learning runs).
struct Winner {
    transform: RowTransform,
    folds: Vec<Fold>,
    singles: Vec<(Spec, f64, f64)>,
    score: f64,
}

/// A block of a candidate before it is built on some rows: the linear part, or the map of
/// family `family` (index into [`AutoParams::families`]) at γ number `gamma`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Spec {
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
struct Fold {
    train: LabelData,
    val: LabelData,
    cache: RefCell<(Blocks, HashMap<Spec, usize>)>,
}

impl Fold {
    fn new(train: LabelData, val: LabelData) -> Self {
        Self {
            train,
            val,
            cache: RefCell::new((Blocks::new(), HashMap::new())),
        }
    }

    /// Frees every cached block but those of `keep`.
    fn keep_only(&self, keep: &[Spec]) {
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
struct Search<'a> {
    params: &'a ValidAutoParams,
    families: Vec<&'a DynFamily>,
    root: GimcRng,
    /// m of each family (Nyström landmarks capped at the fewest training rows of a fold).
    sizes: Vec<usize>,
    /// The learned maps by (family, γ number): the chosen iteration count and the map learned
    /// on each fold's training part.
    learned: HashMap<(usize, usize), (usize, Vec<BoxedMap>)>,
}

impl Search<'_> {
    fn choice(&self, spec: Spec, gamma: Option<f64>) -> BlockChoice {
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
    fn draw(&self, family: usize, gamma: f64, x: &FeatureMatrix) -> Result<BoxedMap> {
        Ok(self.families[family].build(
            x,
            self.sizes[family],
            gamma,
            &mut child(&self.root, 1 + family as u64),
        )?)
    }

    /// Block `spec` on fold number `f`.
    fn build(&self, spec: Spec, fold: &Fold, f: usize) -> Result<Block> {
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

    fn map_block(&self, map: BoxedMap, fold: &Fold) -> Result<Block> {
        let phi_tr = map.forward(fold.train.features())?;
        let phi_va = map.forward(fold.val.features())?;
        Block::new(
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
        for (f, fold) in folds.iter().enumerate() {
            let mut cache = fold.cache.borrow_mut();
            let (blocks, index) = &mut *cache;
            for (c, set) in candidates.iter().enumerate() {
                let mut ids = Vec::with_capacity(set.len() + 1);
                for &spec in set.iter().chain(std::iter::once(&Spec::Bias)) {
                    let i = match index.get(&spec) {
                        Some(&i) => i,
                        None => {
                            let i = blocks.push(self.build(spec, fold, f)?);
                            index.insert(spec, i);
                            i
                        }
                    };
                    ids.push(i);
                }
                let s = blocks.scores(
                    &ids,
                    &self.params.lambdas,
                    &fold.train,
                    &fold.val,
                    &self.params.select_ks,
                )?;
                for (a, v) in acc[c].iter_mut().zip(s) {
                    *a += v / folds.len() as f64;
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
    let mut search = Search {
        params,
        families,
        root,
        sizes,
        learned: HashMap::new(),
    };
    let linear =
        params.linear == LinearPart::Auto && data.features().ncols() <= params.linear_max_dim;
    let mut trials = Vec::new();
    // stage 1 on every transform, then stage 2 on each
    let mut stage1: Vec<(Winner, AutoTrial)> = Vec::new();
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
                Ok(Fold::new(train.with_features(xt)?, val.with_features(xv)?))
            })
            .collect::<Result<Vec<_>>>()?;
        let (best, singles) = search.singles(transform, &folds, linear, &mut trials)?;
        if observer.interrupted() {
            return Err(GimcError::Interrupted);
        }
        if let Some(best) = best {
            let w = Winner {
                transform,
                folds,
                singles,
                score: best.score,
            };
            stage1.push((w, best));
        }
    }
    // stable: the earlier transform first on ties
    stage1.sort_by(|x, y| y.1.score.total_cmp(&x.1.score));
    let mut chosen: Option<AutoTrial> = None;
    let mut win: Option<Winner> = None;
    for (mut w, best) in stage1 {
        let mut best = Some(best);
        if let Some(u) = search.unions(w.transform, &w.folds, &w.singles, &mut trials)? {
            best = better(best, &u);
        }
        let Some(t) = best else { continue };
        if win.as_ref().is_none_or(|x| t.score > x.score) {
            w.score = t.score;
            win = Some(w);
        }
        chosen = better(chosen, &t);
    }
    let (Some(mut chosen), Some(win)) = (chosen, win) else {
        return Err(GimcError::Empty("auto search (no transform applies)"));
    };
    if params.max_iter > 0 {
        for t in search.learn(win.transform, &win.folds, &win.singles, observer)? {
            if t.score > chosen.score {
                chosen = t.clone();
            }
            trials.push(t);
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
    let constant = data.features().constant_columns();
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

/// The best single block of one transform, and every single block with its best λ and score.
type TransformBest = (Option<AutoTrial>, Vec<(Spec, f64, f64)>);

/// Outer iterations of the first round of the map learning's successive halving.
const FIRST_ROUND: usize = 2;

/// Maps (by their fixed scores) whose learning is tried on cross-validated (small) data, each
/// with every multiplier of [`LEARN_LAMBDAS`]; on one split (large data) only the best map is.
const LEARN_CANDIDATES: usize = 2;

/// Multipliers of a map's best fixed λ that its learning tries.
const LEARN_LAMBDAS: [f64; 2] = [1.0, 10.0];

/// The validation score after each iteration of a fit (iteration 0 first).
fn validation_curve(
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

/// The score that decides: accuracy (multi-class), or the mean P@k over `ks` (multi-label).
fn select_score(
    e: &crate::labels::model::Evaluation,
    task: crate::labels::data::Task,
    ks: &[usize],
) -> f64 {
    let scores: Option<Vec<f64>> = ks.iter().map(|&k| e.score(task, k)).collect();
    match (task, scores) {
        (crate::labels::data::Task::MultiClass, Some(s)) => {
            s.first().copied().unwrap_or(f64::NEG_INFINITY)
        }
        (_, Some(s)) if !s.is_empty() => s.iter().sum::<f64>() / s.len() as f64,
        _ => f64::NEG_INFINITY,
    }
}

/// The iteration with the best mean over `curves` (over the common length; the earliest on
/// ties) and that mean.
fn best_of_mean(curves: &[Vec<f64>]) -> (usize, f64) {
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
fn kind(spec: &Spec) -> Option<usize> {
    match spec {
        Spec::Bias | Spec::Linear => None,
        Spec::Map { family, .. } | Spec::Learned { family, .. } => Some(*family),
    }
}

/// The best-scoring block of each kind among `scored` (spec, λ, score), in order of first
/// appearance (the earliest on ties).
fn best_of_each_kind(scored: &[(Spec, f64, f64)]) -> Vec<Spec> {
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
fn unions(kinds: &[Spec]) -> Vec<Vec<Spec>> {
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

/// The better of two trials (the first on ties).
fn better(a: Option<AutoTrial>, b: &AutoTrial) -> Option<AutoTrial> {
    match a {
        Some(a) if a.score >= b.score => Some(a),
        _ => Some(b.clone()),
    }
}

impl Search<'_> {
    /// Stage 1 on one transform: every block alone (the linear part, each family at each γ);
    /// the trials are appended to `trials`. Returns the best and every block's best λ and
    /// score.
    fn singles(
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
        let mut best: Option<AutoTrial> = None;
        let mut all: Vec<(Spec, f64, f64)> = Vec::new();
        for (set, sc) in one.iter().zip(&scores) {
            let t = self.trial(AutoStage::Fixed, transform, set, sc, &folds[0]);
            best = better(best, &t);
            all.push((set[0], t.lambda, t.score));
            trials.push(t);
        }
        // only the best block of each kind goes on to the unions
        let specs = best_of_each_kind(&all);
        for fold in folds {
            fold.keep_only(&specs);
        }
        Ok((best, all))
    }

    /// Stage 2 on one transform: every union of two or more of the best block of each kind
    /// (`singles` from [`Search::singles`]); the trials are appended to `trials`. Returns the
    /// best union.
    fn unions(
        &self,
        transform: RowTransform,
        folds: &[Fold],
        singles: &[(Spec, f64, f64)],
        trials: &mut Vec<AutoTrial>,
    ) -> Result<Option<AutoTrial>> {
        let sets = unions(&best_of_each_kind(singles));
        let scores = self.cv_scores(folds, &sets)?;
        let mut best = None;
        for (set, sc) in sets.iter().zip(&scores) {
            let t = self.trial(AutoStage::Combined, transform, set, sc, &folds[0]);
            best = better(best, &t);
            trials.push(t);
        }
        Ok(best)
    }

    /// Stage 3, successive halving over the maps with the best fixed scores (`singles`: every
    /// single block with its best λ and score): the best [`LEARN_CANDIDATES`] maps (one on a single
    /// split), each at its fixed λ and ten times it, are learned
    /// on every fold for [`FIRST_ROUND`] outer iterations, the better half by the best of
    /// their mean validation curve for 2·[`FIRST_ROUND`] + 1, and the better half of those to
    /// [`AutoParams::max_iter`]; each map's iteration count is the best of its mean curve over
    /// the folds (0: the random map stays). Every learned map alone, and every union
    /// of the best block of each kind holding a learned map, is then scored; returns those
    /// trials (stage [`AutoStage::Learned`]).
    fn learn<S: SelectionObserver + ?Sized>(
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
        let mut results: Vec<(usize, f64, Vec<BoxedMap>)> = Vec::new();
        for (round, &(iters, keep)) in rounds.iter().enumerate() {
            cands.truncate(keep);
            results.clear();
            for &(family, gamma, lambda) in &cands {
                let mut curves = Vec::with_capacity(folds.len());
                let mut maps = Vec::with_capacity(folds.len());
                for fold in folds {
                    let map = self.draw(
                        family,
                        self.params.gammas[gamma].resolve(fold.train.features()),
                        fold.train.features(),
                    )?;
                    let sq = map.forward(fold.train.features())?.squared_norm_l2()
                        / fold.train.nrows().max(1) as f64;
                    let lambda = lambda * if sq > 0.0 { sq } else { 1.0 };
                    observer.fit_started(
                        &SelectionStage::Candidate {
                            index: started.min(total - 1),
                            total,
                            m: self.sizes[family],
                            gamma: self.params.gammas[gamma].resolve(fold.train.features()),
                            lambda,
                        },
                        iters,
                    );
                    started += 1;
                    // the last round of one split stops on patience
                    let patience = (folds.len() == 1 && round + 1 == rounds.len())
                        .then_some(self.params.patience);
                    let fit = self.learn_map(map, lambda, iters, fold, patience, observer)?;
                    curves.push(validation_curve(
                        &fit.history,
                        &fold.val,
                        &self.params.select_ks,
                    ));
                    maps.push(
                        fit.into_chosen()?
                            .into_maps()
                            .pop()
                            .ok_or(GimcError::Empty("feature maps"))?,
                    );
                }
                let (t, score) = best_of_mean(&curves);
                results.push((t, score, maps));
            }
            // the better half (by the best of the mean curve) goes on
            let mut order: Vec<usize> = (0..cands.len()).collect();
            order.sort_by(|&a, &b| results[b].1.total_cmp(&results[a].1));
            cands = order.iter().map(|&i| cands[i]).collect();
            let mut sorted: Vec<(usize, f64, Vec<BoxedMap>)> = Vec::new();
            let mut taken: Vec<Option<(usize, f64, Vec<BoxedMap>)>> =
                results.drain(..).map(Some).collect();
            for &i in &order {
                sorted.extend(taken[i].take());
            }
            results = sorted;
        }
        let mut best_score: HashMap<(usize, usize), f64> = HashMap::new();
        for (&(family, gamma, _), (t, score, maps)) in cands.iter().zip(results) {
            let key = (family, gamma);
            if t > 0 && best_score.get(&key).is_none_or(|&b| score > b) {
                best_score.insert(key, score);
                self.learned.insert(key, (t, maps));
            }
        }
        if self.learned.is_empty() {
            return Ok(Vec::new());
        }
        let mut keys: Vec<(usize, usize)> = self.learned.keys().copied().collect();
        keys.sort_unstable();
        let one: Vec<Vec<Spec>> = keys
            .iter()
            .map(|&(family, gamma)| vec![Spec::Learned { family, gamma }])
            .collect();
        let scores = self.cv_scores(folds, &one)?;
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
        let scores = self.cv_scores(folds, &sets)?;
        for (set, sc) in sets.iter().zip(&scores) {
            trials.push(self.trial(AutoStage::Learned, transform, set, sc, &folds[0]));
        }
        Ok(trials)
    }

    /// Learns `map` on a fold's training part for at most `max_iter` outer iterations,
    /// scoring its validation part when `patience` is given or a curve is wanted.
    fn learn_map<S: SelectionObserver + ?Sized>(
        &self,
        map: BoxedMap,
        lambda: f64,
        max_iter: usize,
        fold: &Fold,
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
        Ok(fit)
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
        let (pre, xt) = chosen.transform.fit(data.features())?;
        let all = data.with_features(xt)?;
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
                Some(f) => Gamma::Scale(f).resolve(all.features()),
                None => b.gamma.unwrap_or(1.0),
            };
            let mut map = self.draw(family, gamma, all.features())?;
            if b.iterations > 0 {
                let sq = map.forward(all.features())?.squared_norm_l2() / all.nrows().max(1) as f64;
                let lp = LabelParams {
                    lambda: chosen.lambda * if sq > 0.0 { sq } else { 1.0 },
                    max_iter: b.iterations,
                    eval_ks: vec![self.params.select_ks[0]],
                    select_k: self.params.select_ks[0],
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
            let mut block = self.map_block(map, &fold)?;
            maps.push(block.map.take().ok_or(GimcError::Empty("feature maps"))?);
            set.push(blocks.push(block));
        }
        set.push(blocks.push(self.build(Spec::Bias, &fold, 0)?));
        maps.push(Box::new(Constant::new(all.features().ncols())));
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

#[cfg(test)]
mod tests {
    use super::*;
    use gimc_linalg::rng::gaussian_mat;
    use gimc_linalg::sprs::TriMat;

    fn data(n: usize, d: usize, seed: u64) -> LabelData {
        let x = gaussian_mat(&mut seeded(seed), n, d, 1.0);
        let mut t = TriMat::new((n, 3));
        for i in 0..n {
            t.add_triplet(i, usize::from(x[(i, 0)] > 0.0), 1.0);
            if x[(i, 1)] > 0.5 {
                t.add_triplet(i, 2, 1.0);
            }
        }
        LabelData::multi_label(FeatureMatrix::dense(x).unwrap(), t.to_csr()).unwrap()
    }

    #[test]
    fn dual_and_primal_scores_agree() {
        let train = data(40, 6, 1);
        let val = data(25, 6, 2);
        let labels = train.labels();
        let phi = |seed| gaussian_mat(&mut seeded(seed), 40, 30, 0.5);
        let phi_val = |seed| gaussian_mat(&mut seeded(seed), 25, 30, 0.5);
        let mut blocks = Blocks::new();
        let lin = blocks.push(
            Block::new(
                BlockRows::Rows(train.features().clone()),
                val.features().to_dense(),
                labels,
                None,
            )
            .unwrap(),
        );
        let map =
            blocks.push(Block::new(BlockRows::Phi(phi(3)), phi_val(4), labels, None).unwrap());
        let set = [lin, map];
        // 36 columns > 40 rows is false: force each form on the same union
        let lambdas = [0.01, 0.3, 2.0];
        let dual = blocks
            .dual_scores(&set, &lambdas, &train, &val, &[1])
            .unwrap();
        let (gram, cross, penalty) = blocks.system(&set).unwrap();
        let phi_v = blocks.val_features(&set);
        for (&lambda, &d) in lambdas.iter().zip(&dual) {
            let w = solve_blocks(&gram, &cross, &penalty, lambda).unwrap();
            let p = evaluate_phi(PhiSource::Whole(phi_v.as_ref()), w.as_ref(), &val, &[1])
                .unwrap()
                .score(val.task(), 1)
                .unwrap();
            assert_eq!(p, d, "λ = {lambda}");
        }
        // the scores themselves: K_val (M + λI)⁻¹A against Φ_val W
        let w = solve_blocks(&gram, &cross, &penalty, 0.3).unwrap();
        let primal = &phi_v * &w;
        let mut m = Mat::<f64>::zeros(40, 40);
        let mut kv = Mat::<f64>::zeros(25, 40);
        for &i in &set {
            let s = blocks.blocks[i].sq;
            let (k, v) = blocks.blocks[i].kernels().unwrap();
            m += k * (1.0 / s);
            kv += v * (1.0 / s);
        }
        for j in 0..40 {
            m[(j, j)] += 0.3;
        }
        let a = gimc_linalg::sparse::csr_to_dense(labels);
        let dual = &kv * cholesky_solve(m.as_ref(), a.as_ref()).unwrap();
        assert!((&primal - &dual).norm_max() < 1e-8);
    }

    #[test]
    fn folds_partition_the_rows_and_stratify_classes() {
        let x = FeatureMatrix::dense(gaussian_mat(&mut seeded(1), 50, 2, 1.0)).unwrap();
        let classes: Vec<usize> = (0..50).map(|i| usize::from(i % 5 == 0)).collect();
        let d = LabelData::multi_class(x, &classes, 2).unwrap();
        let folds = fold_rows(&d, 5, 0.2, &mut seeded(3)).unwrap();
        assert_eq!(folds.len(), 5);
        let mut seen = [0; 50];
        for (tr, va) in &folds {
            assert_eq!(tr.len() + va.len(), 50);
            assert!(va.iter().all(|v| tr.binary_search(v).is_err()));
            for &v in va {
                seen[v] += 1;
            }
            // 10 rows of class 1 over 5 folds: 2 in each validation part
            assert_eq!(va.iter().filter(|&&i| classes[i] == 1).count(), 2);
        }
        assert!(seen.iter().all(|&c| c == 1));
        assert_eq!(fold_rows(&d, 1, 0.2, &mut seeded(3)).unwrap().len(), 1);
    }

    #[test]
    fn constant_columns_dense_and_sparse() {
        let dense = Mat::from_fn(4, 3, |i, j| if j == 1 { 7.0 } else { (i * j) as f64 });
        let x = FeatureMatrix::dense(dense.clone()).unwrap();
        assert_eq!(x.constant_columns(), vec![0, 1]);
        let s = FeatureMatrix::sparse(gimc_linalg::sparse::dense_to_csr(dense.as_ref()).unwrap())
            .unwrap();
        assert_eq!(s.constant_columns(), vec![0, 1]);
    }
}
