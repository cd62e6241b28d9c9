//! The linear toolbox of DESIGN §3.2 (last paragraph), used as baselines and building blocks:
//! - [`regression`]: ridge and multi-target ridge in closed form (targets dense or sparse, e.g.
//!   the 0/1 label matrix of the multi-label W-step W = (ΦᵀΦ + λI)⁻¹ΦᵀA of DESIGN §3.3; a
//!   [`regression::RidgeSystem`] serves a grid of λ from one XᵀX), reduced-rank regression X* = V_A Σ_A⁻¹ M_k with M = U_Aᵀ T, and bilinear regression
//!   X* = V_A Σ_A⁻¹ M_k Σ_B⁻¹ V_Bᵀ with M = U_Aᵀ T U_B;
//! - [`svm`]: an L2-regularised linear SVM (hinge or squared hinge) by dual coordinate descent
//!   (Hsieh et al. 2008, as in LIBLINEAR), binary and one-vs-rest;
//! - [`logistic`]: L2-regularised logistic regression by Newton-CG with Armijo backtracking,
//!   binary and one-vs-rest.
//!
//! Sparse inputs stay sparse: rows of a CSR feature matrix are used as they are.
//!
//! ```
//! use gimc_linalg::FeatureMatrix;
//! use gimc_linalg::faer::Mat;
//! use gimc_linalg::rng::{gaussian_mat, seeded};
//! use gimc_solvers::NoObserver;
//! use gimc_solvers::linear::logistic::{LogisticParams, fit_logistic};
//! use gimc_solvers::linear::regression::{RidgeParams, fit_ridge, reduced_rank_regression};
//! use gimc_solvers::linear::{ClassData, Targets};
//!
//! // 300 rows of 6 features; 4 targets T = X B with B of rank 2, plus a little noise.
//! let x = gaussian_mat(&mut seeded(1), 300, 6, 1.0);
//! let b = &gaussian_mat(&mut seeded(2), 6, 2, 1.0) * &gaussian_mat(&mut seeded(3), 2, 4, 1.0);
//! let noise = gaussian_mat(&mut seeded(4), 300, 4, 0.01);
//! let t: Mat<f64> = &x * &b + &noise;
//! let features = FeatureMatrix::dense(x.clone())?;
//!
//! // Ridge: W = (XᵀX + λI)⁻¹XᵀT recovers B.
//! let ridge = fit_ridge(&features, Targets::Dense(t.as_ref()), &RidgeParams::default().check()?)?;
//! assert!((&ridge.w - &b).norm_max() < 0.05);
//!
//! // Reduced-rank regression at the true rank 2 recovers B as well.
//! let rrr = reduced_rank_regression(&features, Targets::Dense(t.as_ref()), 2)?;
//! assert!((&rrr - &b).norm_max() < 0.05);
//!
//! // Logistic regression, one-vs-rest over the four sign patterns of the first two targets
//! // (a class is an intersection of two half-spaces, so one-vs-rest is not exact; chance is 25 %).
//! let classes: Vec<usize> =
//!     (0..300).map(|i| usize::from(t[(i, 0)] > 0.0) + 2 * usize::from(t[(i, 1)] > 0.0)).collect();
//! let data = ClassData { x: &features, labels: &classes, n_classes: 4 };
//! let model = fit_logistic(data, &LogisticParams::default().check()?, &mut NoObserver)?;
//! let predicted = model.predict(&features)?;
//! let correct = predicted.iter().zip(&classes).filter(|(p, c)| p == c).count();
//! assert!(correct >= 240, "{correct} of 300");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod logistic;
pub mod regression;
pub mod svm;

use std::borrow::Cow;

use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::shared::{Csr, shared_csr};
use gimc_linalg::{FeatureMatrix, Observed};

use crate::SolverError;
use crate::error::dim_err;
use crate::iter::{IterationRecord, Observer, ObserverAction};

/// Examples with one class each: the data of the multi-class classifiers
/// ([`svm::fit_linear_svm`], [`logistic::fit_logistic`]).
#[derive(Debug, Clone, Copy)]
pub struct ClassData<'a> {
    /// The features X (n × d).
    pub x: &'a FeatureMatrix,
    /// The class of every row, in `0..n_classes`.
    pub labels: &'a [usize],
    /// The number of classes.
    pub n_classes: usize,
}

/// Examples with a binary label each: the data of the binary classifiers
/// ([`svm::fit_linear_svm_binary`], [`logistic::fit_logistic_binary`]).
#[derive(Debug, Clone, Copy)]
pub struct BinaryData<'a> {
    /// The features X (n × d).
    pub x: &'a FeatureMatrix,
    /// `y[i]` true for the positive class (predicted as class 1).
    pub y: &'a [bool],
}

/// Regression targets T (n × t): dense, or sparse given by the non-zeros (every other entry is
/// 0, e.g. a multi-label indicator matrix).
#[derive(Debug, Clone, Copy)]
pub enum Targets<'a> {
    /// A dense n × t matrix.
    Dense(MatRef<'a, f64>),
    /// The non-zeros of an n × t matrix.
    Sparse(&'a Observed),
}

impl Targets<'_> {
    /// n.
    pub fn nrows(&self) -> usize {
        match self {
            Self::Dense(m) => m.nrows(),
            Self::Sparse(o) => o.nrows(),
        }
    }

    /// t.
    pub fn ncols(&self) -> usize {
        match self {
            Self::Dense(m) => m.ncols(),
            Self::Sparse(o) => o.ncols(),
        }
    }

    pub(crate) fn check(&self, n: usize) -> Result<(), SolverError> {
        if self.nrows() != n {
            return Err(dim_err(
                "targets",
                format!("{n} rows (one per example)"),
                format!("{} rows", self.nrows()),
            ));
        }
        if let Self::Dense(m) = self {
            crate::error::check_finite_mat("targets", *m)?;
        }
        Ok(())
    }

    /// Column means ȳ.
    pub(crate) fn column_means(&self) -> Vec<f64> {
        let n = self.nrows().max(1) as f64;
        match self {
            Self::Dense(m) => (0..m.ncols())
                .map(|j| m.col(j).iter().sum::<f64>() / n)
                .collect(),
            Self::Sparse(o) => {
                let mut s = vec![0.0; o.ncols()];
                for (_, j, v) in o.iter() {
                    s[j] += v;
                }
                s.iter().map(|v| v / n).collect()
            }
        }
    }

    /// Tᵀ·G (t × k) for a dense G (n × k).
    pub(crate) fn tr_mul(&self, g: MatRef<'_, f64>) -> Result<Mat<f64>, SolverError> {
        match self {
            Self::Dense(m) => Ok(gimc_linalg::dense::matmul_tn(*m, g)?),
            Self::Sparse(o) => Ok(gimc_linalg::omega_tr_mul_dense(o, o.values(), g)?),
        }
    }

    /// T·G (n × k) for a dense G (t × k).
    pub(crate) fn mul(&self, g: MatRef<'_, f64>) -> Result<Mat<f64>, SolverError> {
        match self {
            Self::Dense(m) => Ok(gimc_linalg::dense::matmul(*m, g)?),
            Self::Sparse(o) => Ok(gimc_linalg::omega_mul_dense(o, o.values(), g)?),
        }
    }

    /// ‖T‖²_F.
    pub(crate) fn frob_sq(&self) -> f64 {
        match self {
            Self::Dense(m) => m.squared_norm_l2(),
            Self::Sparse(o) => o.values_sq_norm(),
        }
    }
}

/// XᵀT (d × t) for features X (n × d) and targets T (n × t), keeping sparse inputs sparse:
/// O(nnz(X)·t) for dense T, O(nnz(T)·d) for dense X and sparse T, and
/// O(Σ_i nnz(x_i)·nnz(t_i)) when both are sparse.
pub(crate) fn xt_targets(x: &FeatureMatrix, t: Targets<'_>) -> Result<Mat<f64>, SolverError> {
    match (x, t) {
        (_, Targets::Dense(m)) => Ok(x.tr_mul_dense(m)?),
        (FeatureMatrix::Dense(xd), Targets::Sparse(o)) => {
            Ok(gimc_linalg::omega_tr_mul_dense(o, o.values(), xd.as_ref())?
                .transpose()
                .to_owned())
        }
        (FeatureMatrix::Sparse(xs), Targets::Sparse(o)) => {
            let xs = csr(xs);
            let (d, tc) = (xs.cols(), o.ncols());
            let mut out = Mat::<f64>::zeros(d, tc);
            for (i, row) in xs.outer_iterator().enumerate() {
                let Some((cols, vals)) = o.row(i) else {
                    continue;
                };
                for (f, &xv) in row.iter() {
                    for (&j, &tv) in cols.iter().zip(vals) {
                        out[(f, j)] += xv * tv;
                    }
                }
            }
            Ok(out)
        }
    }
}

/// A CSR view of a sparse matrix (converted when stored CSC).
pub(crate) fn csr(m: &Csr) -> Cow<'_, Csr> {
    if m.is_csr() {
        Cow::Borrowed(m)
    } else {
        Cow::Owned(shared_csr(m.to_csr()))
    }
}

/// Row access to a feature matrix for the coordinate-wise solvers: dense rows copied once into
/// a row-major buffer, sparse rows read from the CSR arrays.
#[derive(Debug)]
pub(crate) enum Rows<'a> {
    Dense { buf: Vec<f64>, d: usize },
    Sparse(Cow<'a, Csr>),
}

impl<'a> Rows<'a> {
    pub(crate) fn new(x: &'a FeatureMatrix) -> Self {
        match x {
            FeatureMatrix::Dense(m) => {
                let (n, d) = m.shape();
                let mut buf = vec![0.0; n * d];
                for i in 0..n {
                    for j in 0..d {
                        buf[i * d + j] = m[(i, j)];
                    }
                }
                Self::Dense { buf, d }
            }
            FeatureMatrix::Sparse(m) => Self::Sparse(csr(m)),
        }
    }

    /// x_i · w (w has at least d entries).
    #[inline]
    pub(crate) fn dot(&self, i: usize, w: &[f64]) -> f64 {
        match self {
            Self::Dense { buf, d } => buf[i * d..(i + 1) * d]
                .iter()
                .zip(w)
                .map(|(a, b)| a * b)
                .sum(),
            Self::Sparse(m) => m
                .outer_view(i)
                .map_or(0.0, |r| r.iter().map(|(j, v)| v * w[j]).sum()),
        }
    }

    /// w += a·x_i.
    #[inline]
    pub(crate) fn axpy(&self, i: usize, a: f64, w: &mut [f64]) {
        match self {
            Self::Dense { buf, d } => {
                for (wj, xj) in w.iter_mut().zip(&buf[i * d..(i + 1) * d]) {
                    *wj += a * xj;
                }
            }
            Self::Sparse(m) => {
                if let Some(r) = m.outer_view(i) {
                    for (j, v) in r.iter() {
                        w[j] += a * v;
                    }
                }
            }
        }
    }

    /// ‖x_i‖².
    pub(crate) fn sq_norm(&self, i: usize) -> f64 {
        match self {
            Self::Dense { buf, d } => buf[i * d..(i + 1) * d].iter().map(|v| v * v).sum(),
            Self::Sparse(m) => m
                .outer_view(i)
                .map_or(0.0, |r| r.iter().map(|(_, v)| v * v).sum()),
        }
    }
}

/// A linear classifier: one weight vector (column of `w`) and bias per model. Binary
/// classifiers have one model (score > 0 ⇒ class 1); one-vs-rest classifiers one per class
/// (prediction = arg max).
#[derive(Debug, Clone, PartialEq)]
pub struct LinearClassifier {
    /// Weights, d × models.
    pub w: Mat<f64>,
    /// Bias of every model (the weight of the constant feature times its value; 0 without
    /// bias).
    pub bias: Vec<f64>,
    /// Number of classes (2 for a binary classifier).
    pub n_classes: usize,
    /// Objective trace of every model's solver run.
    pub objective_traces: Vec<Vec<f64>>,
}

impl LinearClassifier {
    /// The binary classifier of one model: weights `w`, bias `bias` and its solver's trace.
    pub(crate) fn binary((w, bias, trace): (Vec<f64>, f64, Vec<f64>)) -> Self {
        Self {
            w: Mat::from_fn(w.len(), 1, |i, _| w[i]),
            bias: vec![bias],
            n_classes: 2,
            objective_traces: vec![trace],
        }
    }

    /// Scores x_iᵀ w_c + b_c (n × models).
    pub fn decision_function(&self, x: &FeatureMatrix) -> Result<Mat<f64>, SolverError> {
        if x.ncols() != self.w.nrows() {
            return Err(dim_err(
                "features for prediction",
                format!("{} columns", self.w.nrows()),
                format!("{} columns", x.ncols()),
            ));
        }
        let mut s = x.mul_dense(self.w.as_ref())?;
        for (c, &b) in self.bias.iter().enumerate() {
            for i in 0..s.nrows() {
                s[(i, c)] += b;
            }
        }
        Ok(s)
    }

    /// Predicted class of every row: `1` if the score is positive, else `0` (binary); the
    /// arg max over models (one-vs-rest).
    pub fn predict(&self, x: &FeatureMatrix) -> Result<Vec<usize>, SolverError> {
        let s = self.decision_function(x)?;
        Ok((0..s.nrows())
            .map(|i| {
                if s.ncols() == 1 {
                    usize::from(s[(i, 0)] > 0.0)
                } else {
                    let mut best = 0;
                    for c in 1..s.ncols() {
                        if s[(i, c)] > s[(i, best)] {
                            best = c;
                        }
                    }
                    best
                }
            })
            .collect())
    }
}

/// Checks that there is one binary label per example and at least one example.
pub(crate) fn check_binary_labels(n: usize, labels: usize) -> Result<(), SolverError> {
    if labels != n {
        return Err(dim_err(
            "labels",
            format!("{n} labels"),
            format!("{labels}"),
        ));
    }
    if n == 0 {
        return Err(SolverError::Empty("training examples"));
    }
    Ok(())
}

/// Checks class labels: one per row, each < `n_classes`, with `n_classes ≥ 2`.
pub(crate) fn check_labels(
    labels: &[usize],
    n: usize,
    n_classes: usize,
) -> Result<(), SolverError> {
    if labels.len() != n {
        return Err(dim_err(
            "labels",
            format!("{n} labels (one per row)"),
            format!("{}", labels.len()),
        ));
    }
    if n == 0 {
        return Err(SolverError::Empty("training examples"));
    }
    if n_classes < 2 {
        return Err(crate::error::param_err(
            "n_classes",
            format!("must be >= 2, got {n_classes}"),
        ));
    }
    if let Some((i, &l)) = labels.iter().enumerate().find(|&(_, &l)| l >= n_classes) {
        return Err(SolverError::InvalidInput {
            what: "labels",
            reason: format!("label {l} at row {i} is not below n_classes = {n_classes}"),
        });
    }
    Ok(())
}

/// One binary model: weights, bias and objective trace.
pub(crate) type BinaryModel = (Vec<f64>, f64, Vec<f64>);

/// A classifier of `data`'s classes after [`check_labels`]: with `n_classes = 2` one binary
/// model `binary(None, y, observer)` (y[i] = labels[i] == 1, records untagged); otherwise
/// one-vs-rest, `binary(Some(c), y, observer)` fitting class c against the rest
/// (y[i] = labels[i] == c) in class order, its records tagged `("class", c)`, the models the
/// columns of W (d × n_classes).
pub(crate) fn fit_classes<O: Observer + ?Sized>(
    data: ClassData<'_>,
    observer: &mut O,
    mut binary: impl FnMut(
        Option<usize>,
        &[bool],
        &mut ClassTag<'_, O>,
    ) -> Result<BinaryModel, SolverError>,
) -> Result<LinearClassifier, SolverError> {
    let ClassData {
        x,
        labels,
        n_classes,
    } = data;
    check_labels(labels, x.nrows(), n_classes)?;
    if n_classes == 2 {
        let y: Vec<bool> = labels.iter().map(|&l| l == 1).collect();
        let mut untagged = ClassTag {
            inner: observer,
            class: None,
        };
        return Ok(LinearClassifier::binary(binary(None, &y, &mut untagged)?));
    }
    let mut w = Mat::<f64>::zeros(x.ncols(), n_classes);
    let mut bias = vec![0.0; n_classes];
    let mut traces = Vec::with_capacity(n_classes);
    for c in 0..n_classes {
        let y: Vec<bool> = labels.iter().map(|&l| l == c).collect();
        let mut tag = ClassTag {
            inner: &mut *observer,
            class: Some(c),
        };
        let (wc, bc, trace) = binary(Some(c), &y, &mut tag)?;
        for (i, v) in wc.iter().enumerate() {
            w[(i, c)] = *v;
        }
        bias[c] = bc;
        traces.push(trace);
    }
    Ok(LinearClassifier {
        w,
        bias,
        n_classes,
        objective_traces: traces,
    })
}

/// Forwards records to an inner observer, with an extra `("class", c)` when `class` is
/// `Some(c)` (one-vs-rest runs) and unchanged when it is `None`.
pub(crate) struct ClassTag<'o, O: Observer + ?Sized> {
    pub(crate) inner: &'o mut O,
    pub(crate) class: Option<usize>,
}

impl<O: Observer + ?Sized> Observer for ClassTag<'_, O> {
    fn observe(&mut self, record: &IterationRecord) -> ObserverAction {
        let Some(class) = self.class else {
            return self.inner.observe(record);
        };
        let mut r = record.clone();
        r.extras.push(("class", class as f64));
        self.inner.observe(&r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimc_linalg::rng::{gaussian_mat, seeded};
    use gimc_linalg::sparse::dense_to_csr;

    #[test]
    fn xt_targets_all_combinations_agree() {
        let mut rng = seeded(1);
        let mut xd = gaussian_mat(&mut rng, 7, 4, 1.0);
        xd[(2, 1)] = 0.0;
        xd[(5, 3)] = 0.0;
        let t = Mat::<f64>::from_fn(7, 3, |i, j| if (i + j) % 3 == 0 { 1.0 } else { 0.0 });
        let to = Observed::from_csr(&dense_to_csr(t.as_ref()).unwrap()).unwrap();
        let want = xd.transpose() * &t;
        let xs = FeatureMatrix::sparse(dense_to_csr(xd.as_ref()).unwrap()).unwrap();
        let xdm = FeatureMatrix::dense(xd).unwrap();
        for x in [&xdm, &xs] {
            for tt in [Targets::Dense(t.as_ref()), Targets::Sparse(&to)] {
                let got = xt_targets(x, tt).unwrap();
                assert!((&got - &want).norm_l2() < 1e-12);
            }
        }
        let rows = Rows::new(&xs);
        let rows_d = Rows::new(&xdm);
        let w = [1.0, -2.0, 0.5, 3.0];
        for i in 0..7 {
            assert!((rows.dot(i, &w) - rows_d.dot(i, &w)).abs() < 1e-12);
            assert!((rows.sq_norm(i) - rows_d.sq_norm(i)).abs() < 1e-12);
        }
        assert!(check_labels(&[0, 1, 2], 3, 2).is_err());
        assert!(check_labels(&[0, 1], 3, 2).is_err());
        assert!(check_labels(&[0, 1, 1], 3, 1).is_err());
        assert!(check_labels(&[], 0, 2).is_err());
    }
}
