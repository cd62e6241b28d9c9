//! Training data of the multi-label / multi-class path (DESIGN §3.3, GIMC eq. 12): features X
//! (dense or CSR) and the target matrix A, an n × L sparse 0/1 matrix in CSR order (multi-class:
//! one 1 per row, the one-hot class). This crate does not depend on `gimc-data`; build a
//! [`LabelData`] from a data set's features and labels or classes.

use gimc_linalg::FeatureMatrix;
use gimc_linalg::sparse::{csr_check_finite, csr_select_rows};
use gimc_linalg::sprs::{CsMat, TriMat};

use crate::error::Result;
use crate::error::{GimcError, dim_err, input_err};

/// Whether each row has a set of labels or exactly one class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// Several labels per row; predictions are ranked label lists, scored by P@k.
    MultiLabel,
    /// One class per row; the prediction is the arg max, scored by accuracy.
    MultiClass,
}

impl Task {
    /// `multi-label` or `multi-class`.
    pub fn name(&self) -> &'static str {
        match self {
            Task::MultiLabel => "multi-label",
            Task::MultiClass => "multi-class",
        }
    }
}

/// Features and targets of n rows (DESIGN §3.3 multi-label / multi-class path).
#[derive(Debug, Clone, PartialEq)]
pub struct LabelData {
    features: FeatureMatrix,
    labels: CsMat<f64>,
    task: Task,
    classes: Option<Vec<usize>>,
    label_names: Vec<String>,
}

impl LabelData {
    /// Multi-label data: `labels` is the n × L target matrix (CSR or CSC; stored values are the
    /// targets, normally 1). Rows without a label are rows like any other (they count in
    /// training and in P@k). Errors: no rows or no label columns, row counts differ, NaN / Inf
    /// in the features or labels (with the position), and a label matrix in which no row has
    /// a label (no non-zero stored value): there is nothing to learn.
    pub fn multi_label(features: FeatureMatrix, labels: CsMat<f64>) -> Result<Self> {
        let labels = if labels.is_csr() {
            labels
        } else {
            labels.to_csr()
        };
        Self::check_common(&features, labels.rows(), labels.cols())?;
        csr_check_finite(&labels)?;
        if labels.data().iter().all(|&v| v == 0.0) {
            return Err(input_err(
                "labels",
                format!(
                    "the data has no labels: none of its {} rows has one of the {} labels",
                    labels.rows(),
                    labels.cols()
                ),
            ));
        }
        Ok(Self {
            features,
            labels,
            task: Task::MultiLabel,
            classes: None,
            label_names: Vec::new(),
        })
    }

    /// Multi-class data: `classes[i]` ∈ 0..`n_classes` is the class of row i; A is its one-hot
    /// matrix. Errors: no rows, `n_classes` = 0, a class out of range (with its row), row
    /// counts differ, NaN / Inf in the features.
    pub fn multi_class(
        features: FeatureMatrix,
        classes: &[usize],
        n_classes: usize,
    ) -> Result<Self> {
        Self::check_common(&features, classes.len(), n_classes)?;
        if let Some((i, &c)) = classes.iter().enumerate().find(|(_, c)| **c >= n_classes) {
            return Err(input_err(
                "classes",
                format!("class {c} of row {i} is not below the number of classes {n_classes}"),
            ));
        }
        let mut tri = TriMat::with_capacity((classes.len(), n_classes), classes.len());
        for (i, &c) in classes.iter().enumerate() {
            tri.add_triplet(i, c, 1.0);
        }
        Ok(Self {
            features,
            labels: tri.to_csr(),
            task: Task::MultiClass,
            classes: Some(classes.to_vec()),
            label_names: Vec::new(),
        })
    }

    fn check_common(features: &FeatureMatrix, rows: usize, n_labels: usize) -> Result<()> {
        if features.nrows() == 0 {
            return Err(GimcError::Empty("training rows"));
        }
        if n_labels == 0 {
            return Err(GimcError::Empty("labels / classes"));
        }
        if features.ncols() == 0 {
            return Err(GimcError::Empty("feature columns"));
        }
        if rows != features.nrows() {
            return Err(dim_err(
                "targets",
                format!("{} rows (rows of the features)", features.nrows()),
                format!("{rows} rows"),
            ));
        }
        match features {
            FeatureMatrix::Dense(m) => gimc_linalg::dense::check_finite(m.as_ref())?,
            FeatureMatrix::Sparse(m) => csr_check_finite(m)?,
        }
        Ok(())
    }

    /// Attaches label (or class) names, one per column of A.
    pub fn with_label_names(mut self, names: Vec<String>) -> Result<Self> {
        if !names.is_empty() && names.len() != self.n_labels() {
            return Err(dim_err(
                "label names",
                format!("{} names (one per label)", self.n_labels()),
                format!("{}", names.len()),
            ));
        }
        self.label_names = names;
        Ok(self)
    }

    /// Number of rows n.
    pub fn nrows(&self) -> usize {
        self.features.nrows()
    }

    /// Number of labels / classes L.
    pub fn n_labels(&self) -> usize {
        self.labels.cols()
    }

    /// The features X (n × d).
    pub fn features(&self) -> &FeatureMatrix {
        &self.features
    }

    /// The target matrix A (n × L, CSR).
    pub fn labels(&self) -> &CsMat<f64> {
        &self.labels
    }

    /// Multi-label or multi-class.
    pub fn task(&self) -> Task {
        self.task
    }

    /// The class of every row (multi-class only).
    pub fn classes(&self) -> Option<&[usize]> {
        self.classes.as_deref()
    }

    /// The rows of each class, in row order (multi-class data; `None` for multi-label).
    pub fn rows_by_class(&self) -> Option<Vec<Vec<usize>>> {
        let classes = self.classes()?;
        let mut by_class = vec![Vec::new(); self.n_labels()];
        for (i, &c) in classes.iter().enumerate() {
            if let Some(v) = by_class.get_mut(c) {
                v.push(i);
            }
        }
        Some(by_class)
    }

    /// Label names (possibly empty).
    pub fn label_names(&self) -> &[String] {
        &self.label_names
    }

    /// The same targets with other features of the same n rows (e.g. the rows after a
    /// [`gimc_linalg::Preprocess`]). Errors: a different row count or no columns, NaN / Inf.
    pub fn with_features(&self, features: FeatureMatrix) -> Result<Self> {
        Self::check_common(&features, self.nrows(), self.n_labels())?;
        Ok(Self {
            features,
            labels: self.labels.clone(),
            task: self.task,
            classes: self.classes.clone(),
            label_names: self.label_names.clone(),
        })
    }

    /// The rows `rows` (in that order), same task and names. Errors on an out-of-range row.
    pub fn select_rows(&self, rows: &[usize]) -> Result<Self> {
        if rows.is_empty() {
            return Err(GimcError::Empty("selected rows"));
        }
        let features = self.features.select_rows(rows)?;
        let labels = csr_select_rows(&self.labels, rows)?;
        let classes = match &self.classes {
            Some(c) => Some(
                rows.iter()
                    .map(|&r| c.get(r).copied())
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| input_err("rows", "row index out of range"))?,
            ),
            None => None,
        };
        Ok(Self {
            features,
            labels,
            task: self.task,
            classes,
            label_names: self.label_names.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimc_linalg::faer::Mat;

    #[test]
    fn constructors_check_their_inputs() {
        let x = FeatureMatrix::dense(Mat::from_fn(3, 2, |i, j| (i + j) as f64)).unwrap();
        let d = LabelData::multi_class(x.clone(), &[0, 2, 1], 3).unwrap();
        assert_eq!(d.labels().nnz(), 3);
        assert_eq!(d.labels().get(1, 2), Some(&1.0));
        assert_eq!(d.task(), Task::MultiClass);
        let s = d.select_rows(&[2, 0]).unwrap();
        assert_eq!(s.classes(), Some(&[1usize, 0][..]));
        assert_eq!(s.labels().get(0, 1), Some(&1.0));
        assert!(d.select_rows(&[5]).is_err());
        assert!(d.select_rows(&[]).is_err());
        assert!(LabelData::multi_class(x.clone(), &[0, 3, 1], 3).is_err());
        assert!(LabelData::multi_class(x.clone(), &[0, 1], 3).is_err());
        assert!(LabelData::multi_class(x.clone(), &[0, 1, 0], 0).is_err());
        let mut t = TriMat::new((3, 4));
        t.add_triplet(0, 1, 1.0);
        t.add_triplet(2, 3, 1.0);
        let ml = LabelData::multi_label(x.clone(), t.to_csc()).unwrap();
        assert!(ml.labels().is_csr());
        assert_eq!(ml.n_labels(), 4);
        assert!(ml.clone().with_label_names(vec!["a".into()]).is_err());
        let named = ml
            .with_label_names(vec!["a".into(), "b".into(), "c".into(), "d".into()])
            .unwrap();
        assert_eq!(named.label_names()[3], "d");
        // rows without labels stay rows; a label matrix without any label is refused
        let mut one = TriMat::new((3, 4));
        one.add_triplet(2, 0, 1.0);
        let sparse_rows = LabelData::multi_label(x.clone(), one.to_csr()).unwrap();
        assert_eq!((sparse_rows.nrows(), sparse_rows.labels().nnz()), (3, 1));
        let mut zeros = TriMat::new((3, 4));
        zeros.add_triplet(0, 1, 0.0);
        for empty in [TriMat::<f64>::new((3, 4)).to_csr(), zeros.to_csr()] {
            let e = LabelData::multi_label(x.clone(), empty).unwrap_err();
            assert!(matches!(e, GimcError::InvalidInput { what: "labels", .. }));
            assert!(e.to_string().contains("has no labels"), "{e}");
        }
        let mut bad = TriMat::new((3, 4));
        bad.add_triplet(1, 1, f64::NAN);
        assert!(LabelData::multi_label(x.clone(), bad.to_csr()).is_err());
        let mut nanx = Mat::<f64>::zeros(3, 2);
        nanx[(1, 1)] = f64::INFINITY;
        let e =
            LabelData::multi_class(FeatureMatrix::Dense(nanx.clone()), &[0, 0, 0], 1).unwrap_err();
        assert!(e.to_string().contains("row 1"), "{e}");
        // other features for the same rows keep the targets; a wrong shape or NaN is refused
        let unit = d
            .with_features(x.normalize_rows(gimc_linalg::RowNorm::L2))
            .unwrap();
        assert_eq!((unit.classes(), unit.labels()), (d.classes(), d.labels()));
        assert_ne!(unit.features(), d.features());
        let two_rows = FeatureMatrix::dense(Mat::zeros(2, 2)).unwrap();
        assert!(d.with_features(two_rows).is_err());
        assert!(d.with_features(FeatureMatrix::Dense(nanx)).is_err());
    }
}
