//! The label estimators: fits with model selection, the `auto` search or a linear model,
//! scores and top-k predictions from a model file, its description, and the ranking metrics.

use gimc::labels::{AutoTrial, LinearSetting, auto_storage};
use gimc::persist::{label_model_to_bytes_with_preprocess, label_model_with_preprocess_from_bytes};
use gimc::{
    AutoParams, GimcError, LabelData, LabelModel, LinearMethod, LinearParams, MapRegistry,
    Precision, RowTransform, SelectionParams, Storage, auto_fit, select_and_fit,
};
use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::sprs::CsMat;
use gimc_linalg::{FeatureMatrix, Preprocess, RowNorm};
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::convert::{
    CsrTruth, InputRows, csr, family_name, features, parse_gammas, row_norm, scores_mat, truth,
};
use crate::interrupt::{Cancel, run_interruptible};
use crate::value_err;

/// Fits a label model with model selection on a validation split (`gimc::select_and_fit`):
/// multi-class when `classes` (int64, 0..n_classes) is given, else multi-label from the CSR
/// indicator `labels = (indptr, indices, nrows, n_labels)`. Returns the model file's bytes
/// (with the input transform) and a dict of the chosen setting.
#[pyfunction]
#[pyo3(signature = (x, classes, n_classes, labels, map, m, gamma, alpha, max_iter,
                    validation_fraction, select_k, seed, standardize, normalize, n_jobs=None,
                    storage="auto", block_rows=0, precision="float64", patience=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit_labels<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    classes: Option<PyReadonlyArray1<'py, i64>>,
    n_classes: usize,
    labels: Option<Indicator<'py>>,
    map: &str,
    m: Vec<usize>,
    gamma: Vec<String>,
    alpha: Vec<f64>,
    max_iter: usize,
    validation_fraction: f64,
    select_k: usize,
    seed: u64,
    standardize: &str,
    normalize: &str,
    n_jobs: Option<usize>,
    storage: &str,
    block_rows: usize,
    precision: &str,
    patience: Option<usize>,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyDict>)> {
    let rows = InputRows::new(x, standardize, normalize)?;
    let norm = rows.norm;
    let precision = match precision {
        "float64" => Precision::F64,
        "float32" => Precision::F32,
        other => {
            return Err(value_err(format!(
                "precision must be 'float64' or 'float32', got {other:?}"
            )));
        }
    };
    let streamed = Storage::Streamed {
        block_rows,
        precision,
    };
    // f32 and a block size only mean something when Φ is streamed
    let asked = precision == Precision::F32 || block_rows > 0;
    let storage = match storage {
        "whole" if asked => {
            return Err(value_err(
                "precision='float32' and block_rows need storage='streamed' or 'auto'",
            ));
        }
        "whole" => Some(Storage::Whole),
        "streamed" => Some(streamed),
        "auto" if asked => Some(streamed),
        "auto" => None,
        other => {
            return Err(value_err(format!(
                "storage must be 'auto', 'whole' or 'streamed', got {other:?}"
            )));
        }
    };
    let (family, learn) = family_name(map)?;
    let gammas = parse_gammas(&gamma)?;
    let target = Target::new(classes, n_classes, labels)?;
    let params = SelectionParams::default()
        .with_gammas(gammas)
        .with_lambdas(alpha)
        .with_ms(m)
        .with_max_iter(if learn { max_iter } else { 0 })
        .with_validation_fraction(validation_fraction)
        .with_select_k(select_k)
        .with_seed(seed)
        .with_patience(patience);
    let (bytes, chosen, streamed_used) = run_interruptible(py, n_jobs, |cancel| {
        let (x, standardizer) = rows.transform()?;
        let data = target.data(x)?;
        let registry = MapRegistry::builtin();
        let fam = registry.family(family)?;
        let storage = match storage {
            Some(s) => s,
            None => auto_storage(&data, fam, &params, streamed)?,
        };
        let params = params.with_storage(storage).check()?;
        let mut sel = select_and_fit(&data, fam, &params, &mut Cancel(cancel))?;
        sel.model.set_method(if learn {
            format!("gimc-{family}")
        } else {
            format!("imc-{}", if family == "lff" { "rff" } else { "nys" })
        });
        let preprocess = Preprocess {
            standardizer,
            row_norm: norm,
            ..Preprocess::default()
        };
        let bytes = label_model_to_bytes_with_preprocess(&sel.model, &preprocess)?;
        Ok((bytes, sel.chosen, storage.is_streamed()))
    })?;
    let info = PyDict::new(py);
    info.set_item("m", chosen.m)?;
    info.set_item("gamma", chosen.gamma)?;
    info.set_item("alpha", chosen.lambda)?;
    info.set_item("iterations", chosen.iterations)?;
    info.set_item("validation_score", chosen.validation_score)?;
    info.set_item("streamed", streamed_used)?;
    Ok((PyBytes::new(py, &bytes), info))
}

/// The targets of a label fit: class indices and their number, or a CSR label indicator.
pub(crate) enum Target {
    Classes(Vec<usize>, usize),
    Labels(CsMat<f64>),
}

/// A CSR label indicator as the estimator passes it: `(indptr, indices, nrows, n_labels)`.
pub(crate) type Indicator<'py> = (
    PyReadonlyArray1<'py, i64>,
    PyReadonlyArray1<'py, i64>,
    usize,
    usize,
);

impl Target {
    /// The targets from exactly one of `classes` (int64, 0..n_classes) and `labels`.
    fn new(
        classes: Option<PyReadonlyArray1<'_, i64>>,
        n_classes: usize,
        labels: Option<Indicator<'_>>,
    ) -> PyResult<Self> {
        match (classes, labels) {
            (Some(c), None) => {
                let c: Vec<usize> = c
                    .as_slice()?
                    .iter()
                    .map(|&v| {
                        usize::try_from(v).map_err(|_| value_err(format!("negative class {v}")))
                    })
                    .collect::<PyResult<_>>()?;
                Ok(Self::Classes(c, n_classes))
            }
            (None, Some((indptr, indices, n, l))) => {
                let nnz = indices.len()?;
                Ok(Self::Labels(csr(&indptr, &indices, vec![1.0; nnz], n, l)?))
            }
            _ => Err(value_err("give exactly one of classes and labels")),
        }
    }

    /// The label data of the rows `x` with these targets.
    fn data(self, x: FeatureMatrix) -> Result<LabelData, GimcError> {
        match self {
            Self::Classes(c, k) => LabelData::multi_class(x, &c, k),
            Self::Labels(a) => LabelData::multi_label(x, a),
        }
    }
}

/// Fits a label model with the library's `auto` search (`gimc::auto_fit`, as `gimc fit` with
/// no `--method`): the row transform, γ, λ, the maps (`lff`, `lnys`, their unions) and a
/// linear part chosen on validation data from the training rows, the best maps learned, and
/// the winner refitted on all rows. Targets as [`fit_labels`] takes them. `gamma`, `alpha`,
/// `m`, `max_iter`, `normalize` (`"none"`: raw rows only, `"l2"`: unit rows only), `patience`
/// and `select_k` narrow the search when given, as `gimc fit`'s `--gamma`, `--lambda`, `--m`,
/// `--iters`, `--normalize`, `--patience` and `--select-k` do; `None` keeps the search's
/// default. Returns the model file's bytes (with its input transform: kept columns, tf-idf
/// weights, standardisation, row norm) and a dict of the chosen setting (`chosen`), every
/// setting scored (`trials`) and the dropped constant columns (`constant_columns`).
#[pyfunction]
#[pyo3(signature = (x, classes, n_classes, labels, gamma, alpha, m, max_iter, normalize,
                    patience, validation_fraction, select_k, seed, n_jobs=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit_auto<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    classes: Option<PyReadonlyArray1<'py, i64>>,
    n_classes: usize,
    labels: Option<Indicator<'py>>,
    gamma: Option<Vec<String>>,
    alpha: Option<Vec<f64>>,
    m: Option<usize>,
    max_iter: Option<usize>,
    normalize: Option<&str>,
    patience: Option<usize>,
    validation_fraction: f64,
    select_k: Option<usize>,
    seed: u64,
    n_jobs: Option<usize>,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyDict>)> {
    let x = features(x)?;
    let target = Target::new(classes, n_classes, labels)?;
    let mut params = AutoParams::default()
        .with_seed(seed)
        .with_validation_fraction(validation_fraction);
    if let Some(k) = select_k {
        params = params.with_select_ks(vec![k]);
    }
    if let Some(g) = gamma {
        params = params.with_gammas(parse_gammas(&g)?);
    }
    if let Some(a) = alpha {
        params = params.with_lambdas(a);
    }
    if let Some(m) = m {
        params = params.with_m(m);
    }
    if let Some(it) = max_iter {
        params = params.with_max_iter(it);
    }
    if let Some(p) = patience {
        params = params.with_patience(p);
    }
    match normalize.map(row_norm).transpose()? {
        None => {}
        Some(RowNorm::L2) => params = params.with_transforms(vec![RowTransform::L2]),
        Some(_) => params = params.with_transforms(vec![RowTransform::Raw]),
    }
    let params = params.check().map_err(value_err)?;
    let (bytes, sel) = run_interruptible(py, n_jobs, |cancel| {
        let data = target.data(x)?;
        let sel = auto_fit(&data, &MapRegistry::builtin(), &params, &mut Cancel(cancel))?;
        let bytes = label_model_to_bytes_with_preprocess(&sel.model, &sel.preprocess)?;
        Ok((bytes, sel))
    })?;
    let info = PyDict::new(py);
    info.set_item("chosen", trial_dict(py, &sel.chosen)?)?;
    let trials = sel
        .trials
        .iter()
        .map(|t| trial_dict(py, t))
        .collect::<PyResult<Vec<_>>>()?;
    info.set_item("trials", trials)?;
    info.set_item("constant_columns", sel.constant_columns.clone())?;
    Ok((PyBytes::new(py, &bytes), info))
}

/// Fits a linear label model of the solvers' toolbox (`gimc::fit_linear`, as `gimc fit
/// --method ridge|rrr|logistic|svm`): `method` names it, `alpha` is its λ grid (C = 1/λ for
/// logistic regression and the SVM) and `rank` the rank grid of `rrr`, `None` keeping the
/// library's default; the grid is chosen on a seeded validation split. Targets as
/// [`fit_labels`] takes them; features standardised (`standardize`) and rows normalised
/// (`normalize`) first, both stored with the model. Returns the model file's bytes and a dict
/// of the chosen setting (`alpha` or `rank`), its `validation_score` and every setting
/// `tried` (each with its `validation_score`, `None` for a grid of one).
#[pyfunction]
#[pyo3(signature = (x, classes, n_classes, labels, method, alpha, rank, standardize, normalize,
                    validation_fraction, select_k, seed, n_jobs=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit_linear<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    classes: Option<PyReadonlyArray1<'py, i64>>,
    n_classes: usize,
    labels: Option<Indicator<'py>>,
    method: &str,
    alpha: Option<Vec<f64>>,
    rank: Option<Vec<usize>>,
    standardize: &str,
    normalize: &str,
    validation_fraction: f64,
    select_k: usize,
    seed: u64,
    n_jobs: Option<usize>,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyDict>)> {
    let rows = InputRows::new(x, standardize, normalize)?;
    let norm = rows.norm;
    let target = Target::new(classes, n_classes, labels)?;
    let linear = LinearMethod::from_name(method).ok_or_else(|| {
        let names: Vec<&str> = LinearMethod::ALL.iter().map(|m| m.name()).collect();
        value_err(format!(
            "method must be one of {}, got {method:?}",
            names.join(", ")
        ))
    })?;
    let mut params = LinearParams::default()
        .with_method(linear)
        .with_validation_fraction(validation_fraction)
        .with_select_k(select_k)
        .with_seed(seed);
    if let Some(a) = alpha {
        params = params.with_lambdas(a);
    }
    if let Some(r) = rank {
        params = params.with_ranks(r);
    }
    let params = params.check().map_err(value_err)?;
    let (bytes, sel) = run_interruptible(py, n_jobs, |cancel| {
        let (x, standardizer) = rows.transform()?;
        let data = target.data(x)?;
        let sel = gimc::fit_linear(&data, &params, &mut Cancel(cancel))?;
        let preprocess = Preprocess {
            standardizer,
            row_norm: norm,
            ..Preprocess::default()
        };
        let bytes = label_model_to_bytes_with_preprocess(&sel.model, &preprocess)?;
        Ok((bytes, (sel.chosen, sel.tried)))
    })?;
    let (chosen, tried) = sel;
    let setting = |s: LinearSetting| -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        match s {
            LinearSetting::Lambda(l) => d.set_item("alpha", l)?,
            LinearSetting::Rank(k) => d.set_item("rank", k)?,
        }
        Ok(d)
    };
    let info = PyDict::new(py);
    info.set_item("chosen", setting(chosen.setting)?)?;
    info.set_item("validation_score", chosen.score)?;
    let tried = tried
        .iter()
        .map(|t| {
            let d = setting(t.setting)?;
            d.set_item("validation_score", t.score)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    info.set_item("tried", tried)?;
    Ok((PyBytes::new(py, &bytes), info))
}

/// One setting of the `auto` search as a dict: stage, transform, blocks (name, gamma,
/// gamma_factor, iterations), alpha and validation_score.
pub(crate) fn trial_dict<'py>(py: Python<'py>, t: &AutoTrial) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("stage", t.stage.name())?;
    d.set_item("transform", t.transform.name())?;
    let blocks = t
        .blocks
        .iter()
        .map(|b| {
            let bd = PyDict::new(py);
            bd.set_item("name", &b.name)?;
            bd.set_item("gamma", b.gamma)?;
            bd.set_item("gamma_factor", b.gamma_factor)?;
            bd.set_item("iterations", b.iterations)?;
            Ok(bd)
        })
        .collect::<PyResult<Vec<_>>>()?;
    d.set_item("blocks", blocks)?;
    d.set_item("alpha", t.lambda)?;
    d.set_item("validation_score", t.score)?;
    Ok(d)
}

/// The model and its input transform from model-file bytes.
pub(crate) fn load(bytes: &[u8]) -> Result<(LabelModel, Preprocess), GimcError> {
    label_model_with_preprocess_from_bytes(bytes, &MapRegistry::builtin())
}

/// The n × L scores of the rows `x` (transformed as the model was trained).
#[pyfunction]
pub(crate) fn decision_function<'py>(
    py: Python<'py>,
    model: &[u8],
    x: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let x = features(x)?;
    let s = py
        .detach(|| -> Result<Mat<f64>, GimcError> {
            let (model, pre) = load(model)?;
            let x = pre.apply(&x)?;
            model.scores(&x)
        })
        .map_err(value_err)?;
    let (n, l) = s.shape();
    Ok(Array2::from_shape_fn((n, l), |(i, j)| s[(i, j)]).into_pyarray(py))
}

/// The indices of the k highest-scoring labels of every row, best first (n × k, int64).
#[pyfunction]
pub(crate) fn top_k<'py>(
    py: Python<'py>,
    model: &[u8],
    x: &Bound<'py, PyAny>,
    k: usize,
) -> PyResult<Bound<'py, PyArray2<i64>>> {
    let x = features(x)?;
    let top = py
        .detach(|| -> Result<Vec<Vec<usize>>, GimcError> {
            let (model, pre) = load(model)?;
            let x = pre.apply(&x)?;
            model.top_k(&x, k)
        })
        .map_err(value_err)?;
    let width = top.first().map_or(0, Vec::len);
    let out = Array2::from_shape_fn((top.len(), width), |(i, j)| {
        top[i].get(j).map_or(-1, |&v| v as i64)
    });
    Ok(out.into_pyarray(py))
}

/// A dict of the model file's description: method, task, λ, input and label dimensions, the
/// input transform (standardised, row norm, tf-idf, kept columns) and the stored
/// hyper-parameters.
#[pyfunction]
pub(crate) fn model_info<'py>(py: Python<'py>, model: &[u8]) -> PyResult<Bound<'py, PyDict>> {
    let (model, pre) = load(model).map_err(value_err)?;
    let d = PyDict::new(py);
    d.set_item("method", model.method())?;
    d.set_item("task", model.task().name())?;
    d.set_item("alpha", model.lambda())?;
    // the raw width (the model's own input is narrower when the transform keeps some columns)
    d.set_item("n_features_in", pre.input_dim.unwrap_or(model.input_dim()))?;
    d.set_item("n_labels", model.n_labels())?;
    d.set_item("feature_dim", model.feature_dim())?;
    d.set_item("standardized", pre.standardizer.is_some())?;
    d.set_item("normalize", pre.row_norm.name())?;
    d.set_item("tfidf", pre.tfidf.is_some())?;
    d.set_item("columns", pre.columns.clone())?;
    for (k, v) in model.hyper_parameters() {
        d.set_item(k, *v)?;
    }
    Ok(d)
}

/// A ranking metric of the scores against the CSR truth, its error as a `ValueError`.
fn ranking_metric(
    scores: &PyReadonlyArray2<'_, f64>,
    truth_csr: CsrTruth<'_>,
    k: usize,
    metric: fn(MatRef<'_, f64>, &CsMat<f64>, usize) -> gimc_metrics::Result<f64>,
) -> PyResult<f64> {
    let t = truth(truth_csr)?;
    metric(scores_mat(scores).as_ref(), &t, k).map_err(value_err)
}

/// Precision at k of the scores against the CSR truth (a fraction in [0, 1]).
#[pyfunction]
pub(crate) fn precision_at_k(
    scores: PyReadonlyArray2<'_, f64>,
    truth_csr: CsrTruth<'_>,
    k: usize,
) -> PyResult<f64> {
    ranking_metric(&scores, truth_csr, k, gimc_metrics::precision_at_k)
}

/// nDCG at k of the scores against the CSR truth (in [0, 1]).
#[pyfunction]
pub(crate) fn ndcg_at_k(
    scores: PyReadonlyArray2<'_, f64>,
    truth_csr: CsrTruth<'_>,
    k: usize,
) -> PyResult<f64> {
    ranking_metric(&scores, truth_csr, k, gimc_metrics::ndcg_at_k)
}
