//! The feature blocks of a candidate on one fold and the block-penalised ridge solves that
//! score unions of them (primal, or dual when a union is wider than the rows).

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use gimc_linalg::FeatureMatrix;
use gimc_linalg::dense::{axpy, gram_tn, matmul_tn};
use gimc_linalg::faer::{Mat, MatRef, Scale};
use gimc_linalg::solve::{Cholesky, cholesky_solve};
use gimc_linalg::sparse::csr_tr_mul_dense;
use gimc_linalg::sprs::CsMat;

use crate::error::Result;
use crate::labels::data::LabelData;
use crate::labels::model::{PhiSource, evaluate_phi};
use crate::labels::shard::{RowSums, sum_mat};
use crate::registry::BoxedMap;
use gimc_linalg::sums::sum_slice;

/// The features of one block on the training and validation parts.
pub(super) struct Block {
    /// Training-part features: the rows themselves (linear part) or Φ_b.
    pub(super) train: BlockRows,
    /// Validation-part features, dense.
    pub(super) val: Mat<f64>,
    /// Φ_bᵀA (D_b × L).
    pub(super) cross: Mat<f64>,
    /// Mean squared row norm on the training part (its λ multiplier).
    pub(super) sq: f64,
    /// The map (None for the linear part).
    pub(super) map: Option<BoxedMap>,
    /// ΦΦᵀ on the training part and Φ_valΦᵀ (the dual form, for unions wider than the rows),
    /// formed on first use.
    pub(super) kernels: Option<(Mat<f64>, Mat<f64>)>,
}

pub(super) enum BlockRows {
    Rows(FeatureMatrix),
    Phi(Mat<f64>),
}

impl BlockRows {
    /// The squared Frobenius norm of the training-part features.
    fn frob_sq(&self) -> f64 {
        match self {
            BlockRows::Rows(x) => x.frob_sq(),
            BlockRows::Phi(p) => p.squared_norm_l2(),
        }
    }
}

/// A block's penalty multiplier: its mean squared row norm over `rows` rows, from its squared
/// Frobenius norm `frob` (1 when that is 0 or not finite).
fn penalty_scale(frob: f64, rows: f64) -> f64 {
    let sq = frob / rows;
    if sq > 0.0 && sq.is_finite() { sq } else { 1.0 }
}

impl Block {
    pub(super) fn dim(&self) -> usize {
        self.val.ncols()
    }

    /// (ΦΦᵀ, Φ_valΦᵀ), formed once.
    pub(super) fn kernels(&mut self) -> Result<&(Mat<f64>, Mat<f64>)> {
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

    pub(super) fn new(
        train: BlockRows,
        val: Mat<f64>,
        labels: &CsMat<f64>,
        map: Option<BoxedMap>,
    ) -> Result<Self> {
        let cross = match &train {
            BlockRows::Rows(x) => rows_cross(x, labels)?,
            BlockRows::Phi(p) => csr_tr_mul_dense(labels, p.as_ref())?.transpose().to_owned(),
        };
        let sq = penalty_scale(train.frob_sq(), labels.rows().max(1) as f64);
        Ok(Self {
            train,
            val,
            cross,
            sq,
            map,
            kernels: None,
        })
    }
}

/// XᵀA (d × L) for the rows X and the sparse labels A, without an n × L matrix.
pub(super) fn rows_cross(x: &FeatureMatrix, labels: &CsMat<f64>) -> Result<Mat<f64>> {
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
pub(super) fn pair_gram(a: &Block, b: &Block) -> Result<Mat<f64>> {
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
pub(super) struct Blocks {
    pub(super) blocks: Vec<Block>,
    pub(super) grams: Vec<Vec<Option<Mat<f64>>>>,
}

impl Blocks {
    pub(super) fn new() -> Self {
        Self {
            blocks: Vec::new(),
            grams: Vec::new(),
        }
    }

    pub(super) fn push(&mut self, b: Block) -> usize {
        self.blocks.push(b);
        for row in &mut self.grams {
            row.push(None);
        }
        self.grams.push(vec![None; self.blocks.len()]);
        self.blocks.len() - 1
    }

    /// Frees block `i`'s features once the search has moved past it.
    pub(super) fn release(&mut self, i: usize) {
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

    pub(super) fn gram(&mut self, i: usize, j: usize) -> Result<&Mat<f64>> {
        let (lo, hi) = if i <= j { (i, j) } else { (j, i) };
        let g = match self.grams[lo][hi].take() {
            Some(g) => g,
            None => pair_gram(&self.blocks[lo], &self.blocks[hi])?,
        };
        Ok(&*self.grams[lo][hi].insert(g))
    }

    /// The validation score of every union of `sets` (block ids, each with the intercept block
    /// `bias`, and the numbers of the `lambdas` to score it at) at each of its λ (−∞ at the
    /// others). A union no wider than the training rows is
    /// solved in the primal form from a Cholesky factor that extends the factor of the union
    /// without its last block ([`Cholesky::extend`]) when another union of `sets` needs that
    /// one too: the union of the linear part and two maps extends the linear part with the
    /// first map, which it shares with that pair's own solve.
    pub(super) fn scores(
        &mut self,
        sets: &[(Vec<usize>, Vec<usize>)],
        bias: usize,
        lambdas: &[f64],
        train: &LabelData,
        val: &LabelData,
        ks: &[usize],
    ) -> Result<Vec<Vec<f64>>> {
        let mut out = vec![vec![f64::NEG_INFINITY; lambdas.len()]; sets.len()];
        let mut primal = Vec::new();
        for (i, (set, wanted)) in sets.iter().enumerate() {
            if wanted.is_empty() {
                continue;
            }
            let width: usize = set
                .iter()
                .chain([&bias])
                .map(|&b| self.blocks[b].dim())
                .sum();
            if train.nrows() < width {
                let at: Vec<f64> = wanted.iter().map(|&li| lambdas[li]).collect();
                let s = self.dual_scores(set, Some(bias), &at, train, val, ks)?;
                for (&li, s) in wanted.iter().zip(s) {
                    out[i][li] = s;
                }
            } else {
                primal.push(i);
            }
        }
        // the unions whose factor another union extends
        let needed: HashSet<&[usize]> = primal
            .iter()
            .flat_map(|&i| (1..sets[i].0.len()).map(move |k| &sets[i].0[..k]))
            .collect();
        for (li, &lambda) in lambdas.iter().enumerate() {
            let mut cache: HashMap<Vec<usize>, Rc<Cholesky>> = HashMap::new();
            for &i in primal.iter().filter(|&&i| sets[i].1.contains(&li)) {
                let base = self.factor(&sets[i].0, lambda, &mut cache, &needed)?;
                let whole = self.border(&base, &sets[i].0, bias, lambda)?;
                let ids: Vec<usize> = sets[i].0.iter().copied().chain([bias]).collect();
                let w = whole.solve(self.cross(&ids).as_ref())?;
                let phi_val = self.val_features(&ids);
                let e = evaluate_phi(PhiSource::Whole(phi_val.as_ref()), w.as_ref(), val, ks)?;
                out[i][li] = select_score(&e, val.task(), ks);
            }
        }
        Ok(out)
    }

    /// The Cholesky factor of ΦᵀΦ + λ·diag(s) over the blocks `set`, from the cached factor of
    /// `set` without its last block when there is one; kept in `cache` when `needed`.
    fn factor(
        &mut self,
        set: &[usize],
        lambda: f64,
        cache: &mut HashMap<Vec<usize>, Rc<Cholesky>>,
        needed: &HashSet<&[usize]>,
    ) -> Result<Rc<Cholesky>> {
        if let Some(f) = cache.get(set) {
            return Ok(Rc::clone(f));
        }
        let f = match set.split_last() {
            Some((&last, [])) => {
                let shift = lambda * self.blocks[last].sq;
                Rc::new(Cholesky::shifted(self.gram(last, last)?.as_ref(), shift)?)
            }
            Some((&last, head)) => {
                let h = self.factor(head, lambda, cache, needed)?;
                Rc::new(self.border(&h, head, last, lambda)?)
            }
            None => return Err(crate::error::GimcError::Empty("auto union")),
        };
        if needed.contains(set) {
            cache.insert(set.to_vec(), Rc::clone(&f));
        }
        Ok(f)
    }

    /// The factor over `head` and then block `last`, from `f`, the factor over `head`.
    fn border(
        &mut self,
        f: &Cholesky,
        head: &[usize],
        last: usize,
        lambda: f64,
    ) -> Result<Cholesky> {
        let dl = self.blocks[last].dim();
        let mut b = Mat::zeros(f.dim(), dl);
        let mut off = 0;
        for &h in head {
            let dh = self.blocks[h].dim();
            let g = self.gram(h, last)?;
            let g = if h <= last {
                g.as_ref()
            } else {
                g.as_ref().transpose()
            };
            b.as_mut().subrows_mut(off, dh).copy_from(g);
            off += dh;
        }
        let mut c = self.gram(last, last)?.clone();
        add_penalty(&mut c, lambda * self.blocks[last].sq);
        Ok(f.extend(b.as_ref(), c.as_ref())?)
    }

    /// ΦᵀA of the union `set` (its blocks' cross products stacked).
    fn cross(&self, set: &[usize]) -> Mat<f64> {
        let parts: Vec<MatRef<'_, f64>> =
            set.iter().map(|&i| self.blocks[i].cross.as_ref()).collect();
        vstack(&parts)
    }

    /// [`Blocks::scores`] in the dual form, for a union wider than the training rows: with
    /// M = Σ_b Φ_bΦ_bᵀ/s_b and K_val = Σ_b Φ_val,bΦ_bᵀ/s_b the validation scores of the
    /// block-penalised ridge solution are K_val(M + λI)⁻¹A (O(n³) instead of O(D³)). The
    /// intercept block `bias` (a column of ones, last in the sums) adds the constant 1/s to
    /// every entry of both, without forming its all-ones kernels.
    pub(super) fn dual_scores(
        &mut self,
        set: &[usize],
        bias: Option<usize>,
        lambdas: &[f64],
        train: &LabelData,
        val: &LabelData,
        ks: &[usize],
    ) -> Result<Vec<f64>> {
        let (n, nv) = (train.nrows(), val.nrows());
        let mut sums: Option<(Mat<f64>, Mat<f64>)> = None;
        for &i in set {
            let a = 1.0 / self.blocks[i].sq;
            let (k, v) = self.blocks[i].kernels()?;
            match &mut sums {
                None => sums = Some((k * Scale(a), v * Scale(a))),
                Some((m, kv)) => {
                    axpy(a, k.as_ref(), m.as_mut())?;
                    axpy(a, v.as_ref(), kv.as_mut())?;
                }
            }
        }
        let (mut m, mut kv) = sums.unwrap_or_else(|| (Mat::zeros(n, n), Mat::zeros(nv, n)));
        if let Some(b) = bias {
            let c = 1.0 / self.blocks[b].sq;
            for x in [&mut m, &mut kv] {
                x.as_mut().col_iter_mut().for_each(|col| {
                    col.iter_mut().for_each(|e| *e += c);
                });
            }
        }
        let a = gimc_linalg::sparse::csr_to_dense(train.labels());
        lambdas
            .iter()
            .map(|&lambda| {
                let z = Cholesky::shifted(m.as_ref(), lambda)?.solve(a.as_ref())?;
                let e = evaluate_phi(PhiSource::Whole(kv.as_ref()), z.as_ref(), val, ks)?;
                Ok(select_score(&e, val.task(), ks))
            })
            .collect()
    }

    /// ΦᵀΦ, ΦᵀA and the per-coordinate penalty multipliers of the union `set`.
    pub(super) fn system(&mut self, set: &[usize]) -> Result<(Mat<f64>, Mat<f64>, Vec<f64>)> {
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

    /// [`Blocks::system`] on a data-parallel group: ΦᵀΦ and ΦᵀA summed across the processes by
    /// `sums`, and each block's penalty multiplier from its squared norm over the `rows` rows
    /// of every shard together. For one process, [`Blocks::system`] itself.
    pub(super) fn system_summed(
        &mut self,
        set: &[usize],
        rows: f64,
        sums: &dyn RowSums,
    ) -> Result<(Mat<f64>, Mat<f64>, Vec<f64>)> {
        let (mut gram, mut cross, mut penalty) = self.system(set)?;
        if sums.processes() <= 1 {
            return Ok((gram, cross, penalty));
        }
        sum_mat(sums, &mut gram);
        sum_mat(sums, &mut cross);
        let mut frob: Vec<f64> = set
            .iter()
            .map(|&i| self.blocks[i].train.frob_sq())
            .collect();
        sum_slice(sums, &mut frob);
        penalty.clear();
        for (&i, f) in set.iter().zip(frob) {
            penalty.extend(std::iter::repeat_n(
                penalty_scale(f, rows),
                self.blocks[i].dim(),
            ));
        }
        Ok((gram, cross, penalty))
    }

    pub(super) fn val_features(&self, set: &[usize]) -> Mat<f64> {
        if let [one] = set {
            return self.blocks[*one].val.clone();
        }
        let parts: Vec<&Mat<f64>> = set.iter().map(|&i| &self.blocks[i].val).collect();
        hstack(&parts)
    }
}

pub(super) fn hstack(parts: &[&Mat<f64>]) -> Mat<f64> {
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

/// Adds `v` to the diagonal of `g`.
fn add_penalty(g: &mut Mat<f64>, v: f64) {
    for i in 0..g.nrows() {
        g[(i, i)] += v;
    }
}

/// The rows of `parts` one under the other.
fn vstack(parts: &[MatRef<'_, f64>]) -> Mat<f64> {
    let ncols = parts.first().map_or(0, |p| p.ncols());
    let total: usize = parts.iter().map(|p| p.nrows()).sum();
    let mut out = Mat::zeros(total, ncols);
    let mut off = 0;
    for p in parts {
        out.as_mut().subrows_mut(off, p.nrows()).copy_from(*p);
        off += p.nrows();
    }
    out
}

/// W = (G + λ·diag(s))⁻¹C (the block-penalised ridge solve).
pub(super) fn solve_blocks(
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

/// The score that decides: accuracy (multi-class), or the mean P@k over `ks` (multi-label).
pub(super) fn select_score(
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
