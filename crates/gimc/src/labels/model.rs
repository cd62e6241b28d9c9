//! A fitted multi-label / multi-class model (DESIGN §3.3 "Prediction"): feature maps (one, or
//! several whose features are concatenated) and W (D × L); the scores of a new row x are
//! φ(x)ᵀW (inductive: rows never seen in training). Scores are computed in row blocks, so no
//! n_test × L matrix is formed: each block is ranked by a partial sort (top-k labels) or reduced
//! to its arg max (multi-class), then dropped.

use std::collections::BTreeMap;

use gimc_featmap::{FeatureMap, LearnableMap};
use gimc_linalg::FeatureMatrix;
use gimc_linalg::dense::{check_finite, par};
use gimc_linalg::faer::linalg::matmul::matmul as gemm;
use gimc_linalg::faer::{Accum, Mat, MatRef};
use gimc_metrics::{accuracy, precision_at_k_from_topk, top_k_indices};
use rayon::prelude::*;

use crate::error::{GimcError, Result};
use crate::error::{dim_err, param_err};
use crate::labels::data::{LabelData, Task};
use crate::labels::fastpath::{BLOCK_ENTRIES, LabelProblem};
use crate::labels::streamed::{DEFAULT_BLOCK_ENTRIES, blocks, row_block};
use crate::maps::concat_features;
use crate::registry::BoxedMap;

/// Scores of a labelled set: P@k for the requested k (multi-label) or accuracy (multi-class),
/// as fractions in [0, 1].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Evaluation {
    /// (k, P@k) pairs, k increasing (multi-label only).
    pub precision: Vec<(usize, f64)>,
    /// Accuracy (multi-class only).
    pub accuracy: Option<f64>,
}

impl Evaluation {
    /// P@k, if computed.
    pub fn precision_at(&self, k: usize) -> Option<f64> {
        self.precision
            .iter()
            .find(|(kk, _)| *kk == k)
            .map(|&(_, p)| p)
    }

    /// The selection score: P@`select_k` (multi-label) or accuracy (multi-class).
    pub fn score(&self, task: Task, select_k: usize) -> Option<f64> {
        match task {
            Task::MultiLabel => self.precision_at(select_k),
            Task::MultiClass => self.accuracy,
        }
    }
}

/// A fitted model: maps, W, the task and descriptive metadata (method name, hyper-parameters,
/// label names) that model files carry.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelModel<M = BoxedMap> {
    maps: Vec<M>,
    w: Mat<f64>,
    task: Task,
    lambda: f64,
    label_names: Vec<String>,
    label_columns: Vec<String>,
    method: String,
    hyper_parameters: BTreeMap<String, f64>,
}

impl<M: FeatureMap> LabelModel<M> {
    /// A model from its parts. Errors: no map, maps with different input dimensions, W not
    /// (Σ D_i) × L, non-finite W, label names not one per column of W.
    pub fn new(maps: Vec<M>, w: Mat<f64>, task: Task, lambda: f64) -> Result<Self> {
        let Some(first) = maps.first() else {
            return Err(GimcError::Empty("feature maps"));
        };
        let d_in = first.input_dim();
        if let Some(m) = maps.iter().find(|m| m.input_dim() != d_in) {
            return Err(dim_err(
                "feature maps",
                format!("input dimension {d_in} for every map"),
                format!("{}", m.input_dim()),
            ));
        }
        let d: usize = maps.iter().map(FeatureMap::output_dim).sum();
        if w.nrows() != d || w.ncols() == 0 {
            return Err(dim_err(
                "W",
                format!("{d} rows (the feature dimension) and >= 1 column"),
                format!("{} x {}", w.nrows(), w.ncols()),
            ));
        }
        check_finite(w.as_ref())?;
        Ok(Self {
            maps,
            w,
            task,
            lambda,
            label_names: Vec::new(),
            label_columns: Vec::new(),
            method: String::from("gimc"),
            hyper_parameters: BTreeMap::new(),
        })
    }

    /// The W-step on `data` for fixed maps: W = (ΦᵀΦ + λI)⁻¹ΦᵀA with Φ the concatenated
    /// features of `maps` (used for the combined LFF + LNYS features of DESIGN §3.3, and for the
    /// IMC-RFF / IMC-NYS baselines with unlearned maps).
    pub fn fit_w(maps: Vec<M>, data: &LabelData, lambda: f64) -> Result<Self> {
        let prob = LabelProblem::new(data, lambda)?;
        let feats = prob.features(&maps)?;
        let w = prob.w_step(&feats)?;
        let mut model = Self::new(maps, w, data.task(), lambda)?;
        model.label_names = data.label_names().to_vec();
        Ok(model)
    }

    /// The feature maps.
    pub fn maps(&self) -> &[M] {
        &self.maps
    }

    /// Consumes the model, returning its maps.
    pub fn into_maps(self) -> Vec<M> {
        self.maps
    }

    /// W (D × L).
    pub fn w(&self) -> MatRef<'_, f64> {
        self.w.as_ref()
    }

    /// The task.
    pub fn task(&self) -> Task {
        self.task
    }

    /// λ used in the fit.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// Number of labels / classes L.
    pub fn n_labels(&self) -> usize {
        self.w.ncols()
    }

    /// Input dimension d.
    pub fn input_dim(&self) -> usize {
        self.maps.first().map_or(0, FeatureMap::input_dim)
    }

    /// Feature dimension D (Σ of the maps' output dimensions).
    pub fn feature_dim(&self) -> usize {
        self.w.nrows()
    }

    /// Label names (possibly empty).
    pub fn label_names(&self) -> &[String] {
        &self.label_names
    }

    /// Sets the label names (one per label, or none).
    pub fn set_label_names(&mut self, names: Vec<String>) -> Result<()> {
        if !names.is_empty() && names.len() != self.n_labels() {
            return Err(dim_err(
                "label names",
                format!("{} names", self.n_labels()),
                format!("{}", names.len()),
            ));
        }
        self.label_names = names;
        Ok(())
    }

    /// The input columns that held the labels when the model was fitted (a CSV file's label
    /// columns, by header name, in label order), so that new rows of the same file layout have
    /// them taken out again; empty when the labels were not columns of the input.
    pub fn label_columns(&self) -> &[String] {
        &self.label_columns
    }

    /// Sets the input columns that held the labels ([`LabelModel::label_columns`]).
    pub fn set_label_columns(&mut self, columns: Vec<String>) {
        self.label_columns = columns;
    }

    /// The method name stored in model files (e.g. `gimc-lff`, `imc-rff`, `gimc-combined`).
    pub fn method(&self) -> &str {
        &self.method
    }

    /// Sets the method name.
    pub fn set_method(&mut self, method: impl Into<String>) {
        self.method = method.into();
    }

    /// Hyper-parameters recorded with the model (γ, m, λ, iterations…).
    pub fn hyper_parameters(&self) -> &BTreeMap<String, f64> {
        &self.hyper_parameters
    }

    /// Mutable access to the recorded hyper-parameters.
    pub fn hyper_parameters_mut(&mut self) -> &mut BTreeMap<String, f64> {
        &mut self.hyper_parameters
    }

    /// Φ = φ(X) (n × D), the concatenated features.
    pub fn features(&self, x: &FeatureMatrix) -> Result<Mat<f64>> {
        self.check_input(x)?;
        concat_features(&self.maps, x)
    }

    fn check_input(&self, x: &FeatureMatrix) -> Result<()> {
        if x.ncols() != self.input_dim() {
            return Err(dim_err(
                "features for prediction",
                format!("{} columns", self.input_dim()),
                format!("{}", x.ncols()),
            ));
        }
        Ok(())
    }

    /// The dense scores φ(x)ᵀW of the rows of `x` (n × L). Forms the whole n × L matrix:
    /// meant for small inputs; use [`LabelModel::top_k`] or [`LabelModel::predict_classes`]
    /// for large ones.
    pub fn scores(&self, x: &FeatureMatrix) -> Result<Mat<f64>> {
        let phi = self.features(x)?;
        Ok(gimc_linalg::dense::matmul(phi.as_ref(), self.w.as_ref())?)
    }

    /// Computes the scores of successive row blocks of `x` and reduces every row's scores
    /// with `per_row`, collecting the outputs in row order (no n × L matrix is kept).
    fn blocked<T: Send>(
        &self,
        x: &FeatureMatrix,
        per_row: impl Fn(&[f64]) -> T + Sync,
    ) -> Result<Vec<T>> {
        self.with_source(x, |src| src.reduce(self.w.as_ref(), per_row))
    }

    /// Calls `f` with the features of the rows of `x` as a [`PhiSource`] formed block by block.
    fn with_source<T>(
        &self,
        x: &FeatureMatrix,
        f: impl FnOnce(PhiSource<'_>) -> Result<T>,
    ) -> Result<T> {
        self.check_input(x)?;
        // feature blocks of about DEFAULT_BLOCK_ENTRIES entries (each forward pass also reads
        // the whole map, so blocks sized by the scores' width L would repeat that thousands of
        // times at XMC scale); the scores within a block go by BLOCK_ENTRIES / L rows
        let block = (DEFAULT_BLOCK_ENTRIES / self.feature_dim().max(1)).clamp(1, x.nrows().max(1));
        let phi = |lo: usize, b: usize| concat_features(&self.maps, &*row_block(x, lo, b)?);
        f(PhiSource::Blocks {
            n: x.nrows(),
            block,
            phi: &phi,
        })
    }

    /// The `k` highest-scoring labels of every row of `x`, best first (ties by the lower label
    /// index), computed block by block.
    pub fn top_k(&self, x: &FeatureMatrix, k: usize) -> Result<Vec<Vec<usize>>> {
        if k == 0 {
            return Err(param_err("k", "must be at least 1"));
        }
        self.blocked(x, |s| top_k_indices(s, k))
    }

    /// [`top_k`](Self::top_k) with each label's score φ(x)ᵀw_j, computed block by block (no
    /// n × L matrix).
    pub fn top_k_scored(&self, x: &FeatureMatrix, k: usize) -> Result<Vec<Vec<(usize, f64)>>> {
        if k == 0 {
            return Err(param_err("k", "must be at least 1"));
        }
        self.blocked(x, |s| {
            top_k_indices(s, k).into_iter().map(|j| (j, s[j])).collect()
        })
    }

    /// The arg-max label (class) of every row of `x` (ties by the lower index).
    pub fn predict_classes(&self, x: &FeatureMatrix) -> Result<Vec<usize>> {
        self.blocked(x, argmax)
    }

    /// P@k for every k in `ks` (multi-label) or the accuracy (multi-class) on `data`.
    pub fn evaluate(&self, data: &LabelData, ks: &[usize]) -> Result<Evaluation> {
        if data.n_labels() != self.n_labels() {
            return Err(dim_err(
                "evaluation labels",
                format!("{} labels", self.n_labels()),
                format!("{}", data.n_labels()),
            ));
        }
        self.with_source(data.features(), |src| {
            evaluate_phi(src, self.w.as_ref(), data, ks)
        })
    }
}

impl<M: LearnableMap> LabelModel<M> {
    /// Puts a single-map model back to an earlier iterate: map parameters `params` and W.
    pub(crate) fn restore_single(&mut self, params: Mat<f64>, w: Mat<f64>) -> Result<()> {
        let [map] = self.maps.as_mut_slice() else {
            return Err(param_err(
                "model",
                "restoring an iterate needs exactly one map",
            ));
        };
        if w.shape() != self.w.shape() {
            return Err(dim_err(
                "W of the iterate",
                format!("{} x {}", self.w.nrows(), self.w.ncols()),
                format!("{} x {}", w.nrows(), w.ncols()),
            ));
        }
        map.set_params(params)?;
        self.w = w;
        Ok(())
    }
}

/// Computes the scores (Φ_B W)ᵀ of one block and applies `per_row` to each row's scores.
pub(crate) fn scores_then<T: Send>(
    phi: MatRef<'_, f64>,
    w: MatRef<'_, f64>,
    per_row: &(impl Fn(&[f64]) -> T + Sync),
    out: &mut Vec<T>,
) {
    let b = phi.nrows();
    let mut st = Mat::<f64>::zeros(w.ncols(), b);
    gemm(
        st.as_mut(),
        Accum::Replace,
        w.transpose(),
        phi.transpose(),
        1.0,
        par(),
    );
    let rows: Vec<T> = (0..b)
        .into_par_iter()
        .map(|i| per_row(st.col_as_slice(i)))
        .collect();
    out.extend(rows);
}

/// Where the features of the rows to score come from.
pub(crate) enum PhiSource<'a> {
    /// Φ itself, all rows.
    Whole(MatRef<'a, f64>),
    /// Φ formed block by block: `phi(lo, b)` gives the features of rows [lo, lo + b) of n.
    Blocks {
        /// Number of rows.
        n: usize,
        /// Rows per block.
        block: usize,
        /// The features of one block.
        phi: &'a dyn Fn(usize, usize) -> Result<Mat<f64>>,
    },
}

impl PhiSource<'_> {
    /// The scores of every row (one block at a time), reduced per row by `per_row`, in row
    /// order: no n × L matrix is formed.
    pub(crate) fn reduce<T: Send>(
        &self,
        w: MatRef<'_, f64>,
        per_row: impl Fn(&[f64]) -> T + Sync,
    ) -> Result<Vec<T>> {
        match self {
            PhiSource::Whole(phi) => Ok(blocked_from_phi(*phi, w, per_row)),
            PhiSource::Blocks { n, block, phi } => {
                let mut out = Vec::with_capacity(*n);
                for (lo, b) in blocks(*n, *block) {
                    let p = phi(lo, b)?;
                    out.extend(blocked_from_phi(p.as_ref(), w, &per_row));
                }
                Ok(out)
            }
        }
    }
}

/// Scores of a given Φ (all rows at once, blocked) reduced per row: used for the training-set
/// metrics during a fit, where Φ is already available.
pub(crate) fn blocked_from_phi<T: Send>(
    phi: MatRef<'_, f64>,
    w: MatRef<'_, f64>,
    per_row: impl Fn(&[f64]) -> T + Sync,
) -> Vec<T> {
    let n = phi.nrows();
    let width = phi.ncols().max(w.ncols()).max(1);
    let block = (BLOCK_ENTRIES / width).clamp(1, n.max(1));
    let mut out = Vec::with_capacity(n);
    for (lo, b) in blocks(n, block) {
        scores_then(phi.subrows(lo, b), w, &per_row, &mut out);
    }
    out
}

/// Index of the largest entry (first on ties; NaN never wins over a number).
pub(crate) fn argmax(s: &[f64]) -> usize {
    let mut best = 0;
    let mut best_v = f64::NEG_INFINITY;
    let mut seen_number = false;
    for (j, &v) in s.iter().enumerate() {
        if v.is_nan() {
            continue;
        }
        if !seen_number || v > best_v {
            best = j;
            best_v = v;
            seen_number = true;
        }
    }
    best
}

/// The [`Evaluation`] of ranked lists against `data`'s labels.
pub(crate) fn evaluation_from_topk(
    topk: &[Vec<usize>],
    data: &LabelData,
    ks: &[usize],
) -> Result<Evaluation> {
    let mut ks: Vec<usize> = ks.iter().copied().filter(|&k| k > 0).collect();
    ks.sort_unstable();
    ks.dedup();
    let precision = ks
        .iter()
        .map(|&k| Ok((k, precision_at_k_from_topk(topk, data.labels(), k)?)))
        .collect::<Result<Vec<_>>>()?;
    Ok(Evaluation {
        precision,
        accuracy: None,
    })
}

/// Evaluation from the features of `data`'s rows and W (blocked; no n × L matrix).
pub(crate) fn evaluate_phi(
    phi: PhiSource<'_>,
    w: MatRef<'_, f64>,
    data: &LabelData,
    ks: &[usize],
) -> Result<Evaluation> {
    match data.classes() {
        Some(classes) => {
            let pred = phi.reduce(w, argmax)?;
            Ok(Evaluation {
                precision: Vec::new(),
                accuracy: Some(accuracy(&pred, classes)?),
            })
        }
        None => {
            let kmax = ks.iter().copied().max().unwrap_or(0);
            if kmax == 0 {
                return Ok(Evaluation::default());
            }
            let topk = phi.reduce(w, |s| top_k_indices(s, kmax))?;
            evaluation_from_topk(&topk, data, ks)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimc_featmap::{FourierFamily, MapFamily};
    use gimc_linalg::rng::{gaussian_mat, seeded};

    #[test]
    fn rows_without_labels_count_in_p_at_k() {
        // 8 rows, rows 1, 4 and 6 without a label
        let x = FeatureMatrix::dense(gaussian_mat(&mut seeded(5), 8, 3, 1.0)).unwrap();
        let mut t = gimc_linalg::sprs::TriMat::new((8, 4));
        for (i, j) in [(0, 1), (2, 0), (2, 3), (3, 2), (5, 1), (7, 0), (7, 2)] {
            t.add_triplet(i, j, 1.0);
        }
        let data = LabelData::multi_label(x.clone(), t.to_csr()).unwrap();
        let map = FourierFamily.build(&x, 4, 0.5, &mut seeded(6)).unwrap();
        let w = gaussian_mat(&mut seeded(7), 8, 4, 1.0);
        let model = LabelModel::new(vec![map], w, Task::MultiLabel, 1.0).unwrap();
        let top = model.top_k(&x, 2).unwrap();
        let ev = model.evaluate(&data, &[1, 2]).unwrap();
        for k in [1, 2] {
            // hits over all 8 rows, the 3 label-less rows scoring 0 in the denominator
            let hits: usize = (0..8)
                .map(|i| {
                    top[i][..k]
                        .iter()
                        .filter(|&&j| data.labels().get(i, j).is_some())
                        .count()
                })
                .sum();
            // (some hits, so that dropping the label-less rows would give another mean)
            assert!(hits > 0, "P@{k}: no hit to tell the conventions apart");
            let want = hits as f64 / (k * 8) as f64;
            assert_eq!(ev.precision_at(k), Some(want), "P@{k}");
        }
    }

    #[test]
    fn blocked_predictions_match_dense_scores() {
        assert_eq!(argmax(&[1.0, 3.0, 3.0, f64::NAN]), 1);
        assert_eq!(argmax(&[f64::NAN, -1.0]), 1);
        let x = FeatureMatrix::dense(gaussian_mat(&mut seeded(1), 40, 3, 1.0)).unwrap();
        let map = FourierFamily.build(&x, 4, 0.5, &mut seeded(2)).unwrap();
        let w = gaussian_mat(&mut seeded(3), 8, 5, 1.0);
        let model = LabelModel::new(vec![map], w, Task::MultiLabel, 1.0).unwrap();
        let s = model.scores(&x).unwrap();
        let top = model.top_k(&x, 3).unwrap();
        let cls = model.predict_classes(&x).unwrap();
        for i in 0..40 {
            let row: Vec<f64> = (0..5).map(|j| s[(i, j)]).collect();
            assert_eq!(top[i], top_k_indices(&row, 3));
            assert_eq!(cls[i], top[i][0]);
        }
        let scored = model.top_k_scored(&x, 3).unwrap();
        for i in 0..40 {
            let labels: Vec<usize> = scored[i].iter().map(|&(j, _)| j).collect();
            assert_eq!(labels, top[i]);
            for &(j, v) in &scored[i] {
                assert!((v - s[(i, j)]).abs() <= 1e-12 * s[(i, j)].abs().max(1.0));
            }
        }
        assert!(model.top_k_scored(&x, 0).is_err());
        let phi = model.features(&x).unwrap();
        assert_eq!(
            blocked_from_phi(phi.as_ref(), model.w(), |r| top_k_indices(r, 3)),
            top
        );
        assert!(model.top_k(&x, 0).is_err());
        let bad = FeatureMatrix::dense(Mat::zeros(2, 4)).unwrap();
        assert!(model.top_k(&bad, 1).is_err());
        assert!(
            LabelModel::new(
                model.maps().to_vec(),
                Mat::zeros(7, 5),
                Task::MultiLabel,
                1.0
            )
            .is_err()
        );
    }
}
