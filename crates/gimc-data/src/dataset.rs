//! The in-memory data set: features X (dense or CSR, DESIGN §3 notation), targets (multi-label
//! 0/1 matrix, classes, real values or none), feature names, the columns that code a nominal
//! attribute, and the positions of features that were missing in the file (for transduction,
//! DESIGN §3.5). Row selection, stacking, target binning, a summary, and the columns a model
//! should not learn from as they are: identifiers ([`Dataset::identifier_columns`]) and
//! constants ([`Dataset::constant_columns`]).

use std::collections::HashSet;
use std::fmt;

use gimc_linalg::FeatureMatrix;
use gimc_linalg::faer::Mat;
use gimc_linalg::shared::shared_csr;
use gimc_linalg::sparse::AsSparseView;
use gimc_linalg::sprs::CsMat;

use crate::error::param_err;
use crate::io::CsrBuilder;
use crate::{DataError, Result};

/// What is to be predicted for each row.
#[derive(Debug, Clone, PartialEq)]
pub enum Targets {
    /// Multi-label: an n × L CSR matrix holding 1.0 for every relevant (row, label).
    Labels {
        /// The 0/1 label matrix (only the ones are stored).
        matrix: CsMat<f64>,
        /// Label names, one per column, or empty when the format has none (LIBSVM, XMC:
        /// labels are known by 0-based index).
        names: Vec<String>,
    },
    /// Multi-class: one class index in 0..C per row.
    Classes {
        /// Class of each row.
        classes: Vec<usize>,
        /// Class names, indexed by class.
        names: Vec<String>,
    },
    /// A real-valued target per row (regression).
    Values(Vec<f64>),
    /// No target.
    None,
}

impl Targets {
    /// Number of rows the targets describe (`None` for [`Targets::None`]).
    pub fn nrows(&self) -> Option<usize> {
        match self {
            Self::Labels { matrix, .. } => Some(matrix.rows()),
            Self::Classes { classes, .. } => Some(classes.len()),
            Self::Values(v) => Some(v.len()),
            Self::None => None,
        }
    }

    /// A short name of the kind: `labels`, `classes`, `values` or `none`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Labels { .. } => "labels",
            Self::Classes { .. } => "classes",
            Self::Values(_) => "values",
            Self::None => "none",
        }
    }

    /// Bins real values into classes: class c holds the values v with exactly c edges below v
    /// (`edges` strictly increasing; `names` has `edges.len() + 1` entries). E.g. abalone rings
    /// with edges [8.5, 10.5] give the classes 1–8, 9–10, 11+.
    pub fn bin(&self, edges: &[f64], names: &[String]) -> Result<Self> {
        let Self::Values(values) = self else {
            return Err(DataError::Incompatible(format!(
                "cannot bin {} targets",
                self.kind()
            )));
        };
        if names.len() != edges.len() + 1 {
            return Err(param_err(
                "names",
                format!(
                    "{} edges need {} names, got {}",
                    edges.len(),
                    edges.len() + 1,
                    names.len()
                ),
            ));
        }
        if edges.iter().any(|e| !e.is_finite()) || edges.windows(2).any(|w| w[0] >= w[1]) {
            return Err(param_err(
                "edges",
                "bin edges must be finite and strictly increasing",
            ));
        }
        let classes = values
            .iter()
            .map(|&v| edges.iter().filter(|&&e| v > e).count())
            .collect();
        Ok(Self::Classes {
            classes,
            names: names.to_vec(),
        })
    }

    /// Re-indexes classes so that their names follow `names` (every present name must be in
    /// it); used to give a train and a test file the same class numbering.
    pub fn align_classes(&self, names: &[String]) -> Result<Self> {
        let Self::Classes {
            classes,
            names: own,
        } = self
        else {
            return Err(DataError::Incompatible(format!(
                "cannot align {} targets as classes",
                self.kind()
            )));
        };
        let map = own
            .iter()
            .map(|n| {
                names.iter().position(|m| m == n).ok_or_else(|| {
                    DataError::Incompatible(format!("class {n:?} is not in the given class list"))
                })
            })
            .collect::<Result<Vec<usize>>>()?;
        let classes = classes
            .iter()
            .map(|&c| {
                map.get(c)
                    .copied()
                    .ok_or_else(|| DataError::Incompatible(format!("class index {c} out of range")))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self::Classes {
            classes,
            names: names.to_vec(),
        })
    }

    fn select_rows(&self, rows: &[usize]) -> Result<Self> {
        Ok(match self {
            Self::Labels { matrix, names } => Self::Labels {
                matrix: select_csr(matrix, rows)?,
                names: names.clone(),
            },
            Self::Classes { classes, names } => Self::Classes {
                classes: rows.iter().map(|&r| classes[r]).collect(),
                names: names.clone(),
            },
            Self::Values(v) => Self::Values(rows.iter().map(|&r| v[r]).collect()),
            Self::None => Self::None,
        })
    }
}

/// A data set: n rows of features with their targets.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// A display name, e.g. `bibtex/train` or the file stem.
    pub name: String,
    /// Features X (n × d), dense or CSR.
    pub features: FeatureMatrix,
    /// Targets of the n rows.
    pub targets: Targets,
    /// One name per feature column, or empty when the format has no names (LIBSVM, XMC:
    /// columns are known by index; see [`Dataset::feature_name`]).
    pub feature_names: Vec<String>,
    /// (row, column) positions of features that were missing (`?`) in the file, sorted; they
    /// are stored as 0 in `features`. Empty unless a reader was asked to record missing values
    /// ([`crate::MissingPolicy::Mask`]).
    pub missing: Vec<(usize, usize)>,
    /// Rows whose whole target was missing in the file (a `?` class or value, an empty CSV
    /// cell, or `?` in every label), sorted: the rows a transductive method predicts. Their
    /// targets hold a placeholder (no labels, class 0, value 0). Empty unless a reader was
    /// asked to record missing values ([`crate::MissingPolicy::Mask`]).
    pub unlabeled: Vec<usize>,
    /// (row, label) positions of the label cells that were `?` in a multi-label file, sorted
    /// (those of [`Dataset::unlabeled`] rows included); they are stored as 0 (absent) in the
    /// label matrix. A row with only some of its labels missing is partly labelled: its known
    /// cells are training targets and its missing ones are predicted. Empty unless a reader
    /// was asked to record missing values ([`crate::MissingPolicy::Mask`]).
    pub missing_labels: Vec<(usize, usize)>,
    /// The feature columns that code a nominal attribute by the index of its value (ARFF
    /// nominal features, CSV nominal columns read with [`crate::NominalEncoding::Code`]),
    /// sorted. Their numbers name categories rather than measure anything. Empty for formats
    /// without nominal attributes (LIBSVM, XMC) and for one-hot columns.
    pub nominal_columns: Vec<usize>,
}

/// Summary numbers of a [`Dataset`] (what `gimc data info` prints).
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The data set's name.
    pub name: String,
    /// Rows n.
    pub rows: usize,
    /// Feature columns d.
    pub features: usize,
    /// Stored feature entries (n·d when dense).
    pub nnz: usize,
    /// Whether the features are stored sparse.
    pub sparse: bool,
    /// `labels`, `classes`, `values` or `none`.
    pub target_kind: &'static str,
    /// Number of labels L (multi-label) or classes C (multi-class); 0 otherwise.
    pub n_targets: usize,
    /// Mean number of labels per row (multi-label only).
    pub label_cardinality: Option<f64>,
    /// Rows with no label (multi-label only).
    pub rows_without_label: Option<usize>,
    /// Rows per class (multi-class only), indexed by class.
    pub class_counts: Option<Vec<usize>>,
    /// Minimum and maximum target value (regression only).
    pub value_range: Option<(f64, f64)>,
    /// Number of missing feature entries recorded.
    pub missing: usize,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}: {} rows x {} features ({}, {} stored entries)",
            self.name,
            self.rows,
            self.features,
            if self.sparse { "sparse" } else { "dense" },
            self.nnz
        )?;
        match self.target_kind {
            "labels" => {
                write!(
                    f,
                    "  {} labels, label cardinality {:.3}",
                    self.n_targets,
                    self.label_cardinality.unwrap_or(0.0)
                )?;
                writeln!(
                    f,
                    ", {} rows without a label",
                    self.rows_without_label.unwrap_or(0)
                )?;
            }
            "classes" => {
                let counts = self.class_counts.as_deref().unwrap_or(&[]);
                let counts: Vec<String> = counts.iter().map(|c| c.to_string()).collect();
                writeln!(
                    f,
                    "  {} classes, counts {}",
                    self.n_targets,
                    counts.join(" / ")
                )?;
            }
            "values" => {
                let (lo, hi) = self.value_range.unwrap_or((f64::NAN, f64::NAN));
                writeln!(f, "  real-valued target in [{lo}, {hi}]")?;
            }
            _ => writeln!(f, "  no target")?,
        }
        if self.missing > 0 {
            writeln!(f, "  {} missing feature entries", self.missing)?;
        }
        Ok(())
    }
}

impl Dataset {
    /// Builds a data set, checking that targets, names and missing positions fit the features.
    pub fn new(
        name: impl Into<String>,
        features: FeatureMatrix,
        targets: Targets,
        feature_names: Vec<String>,
    ) -> Result<Self> {
        let ds = Self {
            name: name.into(),
            features,
            targets,
            feature_names,
            missing: Vec::new(),
            unlabeled: Vec::new(),
            missing_labels: Vec::new(),
            nominal_columns: Vec::new(),
        };
        ds.check()?;
        Ok(ds)
    }

    /// The data set of a sparse-format file (LIBSVM, XMC): named by the file's stem, sparse
    /// features, no feature names, nothing missing. Unchecked: the readers build consistent
    /// parts.
    pub(crate) fn from_sparse_file(
        path: &std::path::Path,
        features: CsMat<f64>,
        targets: Targets,
    ) -> Self {
        Self {
            name: file_stem(path),
            features: FeatureMatrix::Sparse(shared_csr(features)),
            targets,
            feature_names: Vec::new(),
            missing: Vec::new(),
            unlabeled: Vec::new(),
            missing_labels: Vec::new(),
            nominal_columns: Vec::new(),
        }
    }

    /// Checks the internal consistency of the public fields.
    pub fn check(&self) -> Result<()> {
        let n = self.features.nrows();
        if let Some(t) = self.targets.nrows()
            && t != n
        {
            return Err(DataError::Incompatible(format!(
                "{n} feature rows but {t} target rows"
            )));
        }
        if !self.feature_names.is_empty() && self.feature_names.len() != self.features.ncols() {
            return Err(DataError::Incompatible(format!(
                "{} feature columns but {} feature names",
                self.features.ncols(),
                self.feature_names.len()
            )));
        }
        match &self.targets {
            Targets::Labels { matrix, names }
                if !names.is_empty() && matrix.cols() != names.len() =>
            {
                return Err(DataError::Incompatible(format!(
                    "{} label columns but {} label names",
                    matrix.cols(),
                    names.len()
                )));
            }
            Targets::Classes { classes, names } if classes.iter().any(|&c| c >= names.len()) => {
                return Err(DataError::Incompatible(format!(
                    "class index out of range for {} class names",
                    names.len()
                )));
            }
            _ => {}
        }
        if self
            .missing
            .iter()
            .any(|&(r, c)| r >= n || c >= self.features.ncols())
        {
            return Err(DataError::Incompatible(
                "missing-value position outside the feature matrix".into(),
            ));
        }
        let labels = match &self.targets {
            Targets::Labels { matrix, .. } => matrix.cols(),
            _ => 0,
        };
        if self
            .missing_labels
            .iter()
            .any(|&(r, l)| r >= n || l >= labels)
        {
            return Err(DataError::Incompatible(
                "missing-label position outside the label matrix".into(),
            ));
        }
        if self
            .nominal_columns
            .last()
            .is_some_and(|&c| c >= self.features.ncols())
            || self.nominal_columns.windows(2).any(|w| w[0] >= w[1])
        {
            return Err(DataError::Incompatible(format!(
                "nominal columns must be sorted, distinct and below the {} feature columns",
                self.features.ncols()
            )));
        }
        Ok(())
    }

    /// The columns that identify their rows: every row has a value (none missing) and no two
    /// rows share one, as an accession number or a record id does. Such a column carries no
    /// information a model can transfer to new rows. Two kinds qualify:
    /// - nominal columns ([`Dataset::nominal_columns`]), such as genbase's `protein`;
    /// - numeric columns of whole numbers whose name says identifier (`Id`, `PassengerId`,
    ///   `row_id`, `index`, pandas's `Unnamed: 0`, …), such as the `Id` row number of a
    ///   Kaggle CSV. A numeric column with another name is a measurement even when every row
    ///   holds another value.
    ///
    /// Judged only on at least 10 rows (fewer rows are too few to tell an identifier from a
    /// rare category); sorted. O(n·|candidates|) for dense features, O(nnz) for sparse ones.
    pub fn identifier_columns(&self) -> Vec<usize> {
        let (n, d) = (self.nrows(), self.ncols());
        if n < 10 {
            return Vec::new();
        }
        let with_missing: HashSet<usize> = self.missing.iter().map(|&(_, c)| c).collect();
        let named: Vec<usize> = (0..d)
            .filter(|&c| {
                self.feature_names
                    .get(c)
                    .is_some_and(|name| is_identifier_name(name))
            })
            .collect();
        let mut candidates: Vec<usize> =
            self.nominal_columns.iter().copied().chain(named).collect();
        candidates.sort_unstable();
        candidates.dedup();
        candidates.retain(|&c| c < d && !with_missing.contains(&c));
        let mut values: Vec<Vec<f64>> = match &self.features {
            FeatureMatrix::Dense(m) => candidates
                .iter()
                .map(|&c| m.col_as_slice(c).to_vec())
                .collect(),
            FeatureMatrix::Sparse(m) => {
                let mut slot = vec![None; d];
                for (k, &c) in candidates.iter().enumerate() {
                    slot[c] = Some(k);
                }
                let mut values = vec![Vec::new(); candidates.len()];
                for row in m.sparse_view().outer_iterator() {
                    for (j, &v) in row.iter() {
                        if let Some(k) = slot[j] {
                            values[k].push(v);
                        }
                    }
                }
                // the implicit zeros: two or more repeat 0, one is a value like any other
                for v in &mut values {
                    match n - v.len() {
                        0 => {}
                        1 => v.push(0.0),
                        _ => v.clear(),
                    }
                }
                values
            }
        };
        for v in &mut values {
            v.sort_unstable_by(f64::total_cmp);
        }
        let nominal: HashSet<usize> = self.nominal_columns.iter().copied().collect();
        candidates
            .iter()
            .zip(&values)
            .filter(|&(c, v)| {
                v.len() == n
                    && v.windows(2).all(|w| w[0] != w[1])
                    && (nominal.contains(c) || v.iter().all(|x| x.fract() == 0.0))
            })
            .map(|(&c, _)| c)
            .collect()
    }

    /// The feature columns that hold one value in every row (zero columns included), sorted
    /// ([`FeatureMatrix::constant_columns`]). Missing cells count as the 0 they are stored as.
    pub fn constant_columns(&self) -> Vec<usize> {
        self.features.constant_columns()
    }

    /// The name of feature column `j`: its recorded name, else its 0-based index.
    pub fn feature_name(&self, j: usize) -> String {
        self.feature_names
            .get(j)
            .cloned()
            .unwrap_or_else(|| j.to_string())
    }

    /// Number of rows n.
    pub fn nrows(&self) -> usize {
        self.features.nrows()
    }

    /// Number of feature columns d.
    pub fn ncols(&self) -> usize {
        self.features.ncols()
    }

    /// The class vector, if the targets are classes.
    pub fn classes(&self) -> Option<&[usize]> {
        match &self.targets {
            Targets::Classes { classes, .. } => Some(classes),
            _ => None,
        }
    }

    /// The label matrix, if the targets are multi-label.
    pub fn labels(&self) -> Option<&CsMat<f64>> {
        match &self.targets {
            Targets::Labels { matrix, .. } => Some(matrix),
            _ => None,
        }
    }

    /// Summary numbers: shape, stored entries, labels / classes and their statistics.
    pub fn summary(&self) -> Summary {
        let rows = self.nrows();
        let (n_targets, label_cardinality, rows_without_label, class_counts, value_range) =
            match &self.targets {
                Targets::Labels { matrix, .. } => {
                    let empty = matrix.outer_iterator().filter(|r| r.nnz() == 0).count();
                    let card = if rows == 0 {
                        0.0
                    } else {
                        matrix.nnz() as f64 / rows as f64
                    };
                    (matrix.cols(), Some(card), Some(empty), None, None)
                }
                Targets::Classes { classes, names } => {
                    let mut counts = vec![0usize; names.len()];
                    for &c in classes {
                        if let Some(x) = counts.get_mut(c) {
                            *x += 1;
                        }
                    }
                    (names.len(), None, None, Some(counts), None)
                }
                Targets::Values(v) => {
                    let range = v.iter().fold(None, |acc: Option<(f64, f64)>, &x| {
                        Some(acc.map_or((x, x), |(lo, hi)| (lo.min(x), hi.max(x))))
                    });
                    (0, None, None, None, range)
                }
                Targets::None => (0, None, None, None, None),
            };
        Summary {
            name: self.name.clone(),
            rows,
            features: self.ncols(),
            nnz: self.features.nnz(),
            sparse: self.features.is_sparse(),
            target_kind: self.targets.kind(),
            n_targets,
            label_cardinality,
            rows_without_label,
            class_counts,
            value_range,
            missing: self.missing.len(),
        }
    }

    /// The rows `rows` (in that order, repeats allowed) as a new data set.
    pub fn select_rows(&self, rows: &[usize]) -> Result<Self> {
        self.check()?;
        let n = self.nrows();
        if let Some(&bad) = rows.iter().find(|&&r| r >= n) {
            return Err(param_err(
                "rows",
                format!("row {bad} out of range for {n} rows"),
            ));
        }
        let features = match &self.features {
            FeatureMatrix::Dense(m) => {
                FeatureMatrix::Dense(Mat::from_fn(rows.len(), m.ncols(), |i, j| m[(rows[i], j)]))
            }
            FeatureMatrix::Sparse(m) => FeatureMatrix::Sparse(shared_csr(select_csr(m, rows)?)),
        };
        let missing = select_cells(&self.missing, rows, n);
        let missing_labels = select_cells(&self.missing_labels, rows, n);
        let unlabeled = if self.unlabeled.is_empty() {
            Vec::new()
        } else {
            let set: std::collections::HashSet<usize> = self.unlabeled.iter().copied().collect();
            (0..rows.len())
                .filter(|&i| set.contains(&rows[i]))
                .collect()
        };
        Ok(Self {
            name: self.name.clone(),
            features,
            targets: self.targets.select_rows(rows)?,
            feature_names: self.feature_names.clone(),
            missing,
            unlabeled,
            missing_labels,
            nominal_columns: self.nominal_columns.clone(),
        })
    }

    /// Stacks data sets vertically (same feature columns and target kind; class and label name
    /// lists must be equal). A column is nominal in the stack when it is in any part.
    pub fn vstack(name: impl Into<String>, parts: &[&Dataset]) -> Result<Self> {
        let Some(first) = parts.first() else {
            return Err(param_err("parts", "nothing to stack"));
        };
        for p in parts {
            p.check()?;
        }
        let d = first.ncols();
        for p in parts {
            if p.ncols() != d || p.feature_names != first.feature_names {
                return Err(DataError::Incompatible(format!(
                    "{} and {} have different feature columns",
                    first.name, p.name
                )));
            }
            if p.targets.kind() != first.targets.kind() {
                return Err(DataError::Incompatible(format!(
                    "{} and {} have different target kinds",
                    first.name, p.name
                )));
            }
        }
        let any_sparse = parts.iter().any(|p| p.features.is_sparse());
        let total: usize = parts.iter().map(|p| p.nrows()).sum();
        let features = if any_sparse {
            let mut b = CsrBuilder::new(d);
            let mut row = Vec::new();
            for p in parts {
                for i in 0..p.nrows() {
                    row.clear();
                    match &p.features {
                        FeatureMatrix::Dense(m) => row.extend((0..d).map(|j| (j, m[(i, j)]))),
                        FeatureMatrix::Sparse(m) => {
                            if let Some(v) = m.outer_view(i) {
                                row.extend(v.iter().map(|(j, &x)| (j, x)));
                            }
                        }
                    }
                    b.push_row(&mut row).map_err(DataError::Incompatible)?;
                }
            }
            FeatureMatrix::Sparse(shared_csr(b.finish().map_err(DataError::Incompatible)?))
        } else {
            let mut m = Mat::<f64>::zeros(total, d);
            let mut off = 0;
            for p in parts {
                if let FeatureMatrix::Dense(src) = &p.features {
                    m.as_mut()
                        .submatrix_mut(off, 0, src.nrows(), d)
                        .copy_from(src.as_ref());
                }
                off += p.nrows();
            }
            FeatureMatrix::Dense(m)
        };
        let targets = match &first.targets {
            Targets::Labels { names, matrix: m0 } => {
                let mut b = CsrBuilder::new(m0.cols());
                let mut row = Vec::new();
                for p in parts {
                    let Targets::Labels {
                        matrix,
                        names: other,
                    } = &p.targets
                    else {
                        return Err(kinds_differ());
                    };
                    if other != names || matrix.cols() != m0.cols() {
                        return Err(DataError::Incompatible(format!(
                            "{} and {} have different labels",
                            first.name, p.name
                        )));
                    }
                    for v in matrix.outer_iterator() {
                        row.clear();
                        row.extend(v.iter().map(|(j, &x)| (j, x)));
                        b.push_row(&mut row).map_err(DataError::Incompatible)?;
                    }
                }
                Targets::Labels {
                    matrix: b.finish().map_err(DataError::Incompatible)?,
                    names: names.clone(),
                }
            }
            Targets::Classes { names, .. } => {
                let mut all = Vec::with_capacity(total);
                for p in parts {
                    let Targets::Classes {
                        classes,
                        names: other,
                    } = &p.targets
                    else {
                        return Err(kinds_differ());
                    };
                    if other != names {
                        return Err(DataError::Incompatible(format!(
                            "{} and {} have different class names",
                            first.name, p.name
                        )));
                    }
                    all.extend_from_slice(classes);
                }
                Targets::Classes {
                    classes: all,
                    names: names.clone(),
                }
            }
            Targets::Values(_) => {
                let mut all = Vec::with_capacity(total);
                for p in parts {
                    if let Targets::Values(v) = &p.targets {
                        all.extend_from_slice(v);
                    }
                }
                Targets::Values(all)
            }
            Targets::None => Targets::None,
        };
        let mut missing = Vec::new();
        let mut unlabeled = Vec::new();
        let mut missing_labels = Vec::new();
        let mut off = 0;
        for p in parts {
            missing.extend(p.missing.iter().map(|&(r, c)| (r + off, c)));
            unlabeled.extend(p.unlabeled.iter().map(|&r| r + off));
            missing_labels.extend(p.missing_labels.iter().map(|&(r, l)| (r + off, l)));
            off += p.nrows();
        }
        let mut nominal_columns: Vec<usize> = parts
            .iter()
            .flat_map(|p| p.nominal_columns.iter().copied())
            .collect();
        nominal_columns.sort_unstable();
        nominal_columns.dedup();
        Ok(Self {
            name: name.into(),
            features,
            targets,
            feature_names: first.feature_names.clone(),
            missing,
            unlabeled,
            missing_labels,
            nominal_columns,
        })
    }

    /// Min-max scales the given dense columns: v ← (v − lo) / (hi − lo). Sparse features are
    /// scaled in place on their stored entries (zeros are left alone, so use lo = 0 there).
    pub fn scale_columns(&mut self, columns: &[(usize, f64, f64)]) -> Result<()> {
        for &(c, lo, hi) in columns {
            if c >= self.ncols() {
                return Err(param_err("columns", format!("column {c} out of range")));
            }
            if !(lo.is_finite() && hi.is_finite() && hi > lo) {
                return Err(param_err(
                    "columns",
                    format!("bad range [{lo}, {hi}] for column {c}"),
                ));
            }
        }
        match &mut self.features {
            FeatureMatrix::Dense(m) => {
                for &(c, lo, hi) in columns {
                    for i in 0..m.nrows() {
                        m[(i, c)] = (m[(i, c)] - lo) / (hi - lo);
                    }
                }
            }
            FeatureMatrix::Sparse(m) => {
                let mut scale = vec![None; m.cols()];
                for &(c, lo, hi) in columns {
                    scale[c] = Some((lo, hi));
                }
                // the buffers may be shared: rescale an owned copy
                let mut owned = m.to_csr();
                for mut row in owned.outer_iterator_mut() {
                    for (j, v) in row.iter_mut() {
                        if let Some((lo, hi)) = scale[j] {
                            *v = (*v - lo) / (hi - lo);
                        }
                    }
                }
                *m = shared_csr(owned);
            }
        }
        Ok(())
    }
}

fn kinds_differ() -> DataError {
    DataError::Incompatible("target kinds differ".into())
}

/// Selected rows of a CSR matrix (caller checked the bounds).
fn select_csr(m: &impl AsSparseView, rows: &[usize]) -> Result<CsMat<f64>> {
    let m = m.sparse_view();
    let mut indptr = Vec::with_capacity(rows.len() + 1);
    indptr.push(0);
    let mut indices = Vec::new();
    let mut data = Vec::new();
    for &r in rows {
        if let Some(v) = m.outer_view(r) {
            indices.extend_from_slice(v.indices());
            data.extend_from_slice(v.data());
        }
        indptr.push(indices.len());
    }
    CsMat::try_new((rows.len(), m.cols()), indptr, indices, data)
        .map_err(|(_, _, _, e)| DataError::Incompatible(format!("row selection: {e}")))
}

/// The (row, column) cells of `cells` (sorted, rows < `n`) that fall in the selected `rows`,
/// renumbered to the selection's row order.
fn select_cells(cells: &[(usize, usize)], rows: &[usize], n: usize) -> Vec<(usize, usize)> {
    if cells.is_empty() {
        return Vec::new();
    }
    let mut per_row: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(r, c) in cells {
        per_row[r].push(c);
    }
    let mut out = Vec::new();
    for (i, &r) in rows.iter().enumerate() {
        out.extend(per_row[r].iter().map(|&c| (i, c)));
    }
    out
}

/// A data set's name from its file: the file name without its last extension ("" if none).
pub(crate) fn file_stem(path: &std::path::Path) -> String {
    path.file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned())
}

/// Whether a column name says the column identifies rows (for
/// [`Dataset::identifier_columns`]): `id`, `index`, `idx`, `row`, `rowid`, `row_id`,
/// `row_number` or `unnamed: N` (how pandas names an index it writes), in any case, or a name
/// ending in `_id`, `-id`, ` id`, `.id`, `ID` or, after a lowercase letter, `Id`
/// (`PassengerId`; `acid` and `Humid` are not).
fn is_identifier_name(name: &str) -> bool {
    let name = name.trim();
    let lower = name.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "id" | "index" | "idx" | "row" | "rowid" | "row_id" | "row_number"
    ) || lower.starts_with("unnamed:")
    {
        return true;
    }
    if ["_id", "-id", " id", ".id"]
        .iter()
        .any(|s| lower.ends_with(s))
    {
        return true;
    }
    let Some(stem) = name.strip_suffix("ID").or_else(|| name.strip_suffix("Id")) else {
        return false;
    };
    // `ID` after anything, `Id` only after a lowercase letter (camel case)
    name.ends_with("ID") || stem.chars().last().is_some_and(|c| c.is_ascii_lowercase())
}

#[cfg(test)]
mod tests;
