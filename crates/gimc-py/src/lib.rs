//! `gimc._gimc`: the stateless Rust functions behind the Python package `gimc`.
//!
//! The estimators (pure Python, `python/gimc/`) hold their fitted state as NumPy arrays and as
//! the bytes of a gimc model file (safetensors + JSON, MODEL_FORMAT.md), and call these
//! functions with it. Features arrive as a C- or F-ordered float64 array or as the CSR arrays
//! of a SciPy matrix (`(indptr, indices, data, nrows, ncols)`, int64 indices, sorted and
//! without duplicates); sparse input stays sparse and is read in place, through buffer exports
//! of the three arrays, never copied. Every fit and prediction runs with the GIL
//! released; a fit runs on a worker thread while the calling thread polls for signals, so
//! Ctrl-C stops it at the next outer iteration with `KeyboardInterrupt`. Library errors are
//! raised as `ValueError` carrying the library's message.

#![deny(unsafe_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use gimc::persist::{label_model_to_bytes_with_preprocess, label_model_with_preprocess_from_bytes};
use gimc::{
    AutoParams, AutoTrial, Gamma, GimcError, IterationRecord, LabelData, LabelModel, MapRegistry,
    Precision, RowTransform, SelectionObserver, SelectionParams, SelectionStage, SemiSupParams,
    Storage, auto_fit, auto_storage, fit_semisupervised_observed, select_and_fit_observed,
};
use gimc_linalg::faer::Mat;
use gimc_linalg::memory::MemoryBudget;
use gimc_linalg::rng::seeded;
use gimc_linalg::shared::{Csr, ExternalSlice, SharedSlice, csr_from_parts};
use gimc_linalg::sprs::CsMat;
use gimc_linalg::{FeatureMatrix, Preprocess, RowNorm, StandardizeMode};
use gimc_solvers::completion::{CompletionMethod, fit_selected, fit_selected_pu};
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::buffer::{Element, PyBuffer};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// A library error as a Python `ValueError` with the library's message.
fn value_err(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Features from a float64 2-D array (copied into column-major storage) or a CSR tuple
/// `(indptr, indices, data, nrows, ncols)` (kept sparse, read in place: see [`exported_csr`]).
fn features(x: &Bound<'_, PyAny>) -> PyResult<FeatureMatrix> {
    if let Ok(a) = x.extract::<PyReadonlyArray2<'_, f64>>() {
        let a = a.as_array();
        let (n, d) = a.dim();
        return FeatureMatrix::dense(Mat::from_fn(n, d, |i, j| a[[i, j]])).map_err(value_err);
    }
    let type_err = || {
        pyo3::exceptions::PyTypeError::new_err(
            "features must be a float64 2-D array or a CSR tuple (indptr, indices, data, nrows, \
             ncols)",
        )
    };
    let (indptr, indices, data, n, d) = x
        .extract::<(
            Bound<'_, PyAny>,
            Bound<'_, PyAny>,
            Bound<'_, PyAny>,
            usize,
            usize,
        )>()
        .map_err(|_| type_err())?;
    FeatureMatrix::sparse_shared(exported_csr(&indptr, &indices, &data, n, d)?).map_err(value_err)
}

/// A CSR matrix whose three buffers are the given NumPy arrays themselves (int64 `indptr` and
/// `indices`, float64 `data`, each 1-D and C-contiguous), not copies: each is held through a
/// buffer export ([`Exported`]), which keeps its memory alive and in place for as long as the
/// matrix lives. Negative entries and a broken structure are refused with a `ValueError`.
fn exported_csr(
    indptr: &Bound<'_, PyAny>,
    indices: &Bound<'_, PyAny>,
    data: &Bound<'_, PyAny>,
    n: usize,
    d: usize,
) -> PyResult<Csr> {
    let indptr = Exported::<i64>::get(indptr, "indptr")?;
    let indices = Exported::<i64>::get(indices, "indices")?;
    let data = Exported::<f64>::get(data, "data")?;
    for (what, ix) in [("indptr entry", &indptr), ("column index", &indices)] {
        if let Some(&i) = ix.elements().iter().find(|&&i| i < 0) {
            return Err(value_err(format!("negative {what} {i}")));
        }
    }
    csr_from_parts(
        (n, d),
        SharedSlice::external(Arc::new(indptr)),
        SharedSlice::external(Arc::new(indices)),
        SharedSlice::external(Arc::new(data)),
    )
    .map_err(|e| value_err(format!("invalid CSR matrix {n} x {d}: {e}")))
}

/// A 1-D, C-contiguous Python buffer (a NumPy array) read in place. The `PyBuffer` is a buffer
/// export: while it is held the exporter may neither free nor move the memory (NumPy refuses
/// to resize an exported array), so the elements stay valid for the lifetime of this value.
/// Dropping it releases the export, attaching to the interpreter when needed (pyo3).
struct Exported<T: Element>(PyBuffer<T>);

impl<T: Element> Exported<T> {
    fn get(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Self> {
        let buf = PyBuffer::<T>::get(obj).map_err(|e| {
            pyo3::exceptions::PyTypeError::new_err(format!(
                "CSR {what}: {e} (expected a 1-D array of {})",
                std::any::type_name::<T>()
            ))
        })?;
        let aligned = (buf.buf_ptr() as usize).is_multiple_of(std::mem::align_of::<T>());
        if buf.dimensions() != 1 || !buf.is_c_contiguous() || !aligned {
            return Err(value_err(format!(
                "CSR {what} must be a 1-D, contiguous, aligned array"
            )));
        }
        Ok(Self(buf))
    }

    /// The elements, borrowed from the exporter's memory.
    #[allow(unsafe_code)]
    fn elements(&self) -> &[T] {
        let len = self.0.item_count();
        if len == 0 {
            return &[];
        }
        // SAFETY: `get` checked a 1-D, C-contiguous buffer of `len` items of `T` at an aligned,
        // non-null address; the export held in `self.0` keeps that memory valid and in place
        // for as long as `self` lives, and it is only read.
        unsafe { std::slice::from_raw_parts(self.0.buf_ptr() as *const T, len) }
    }
}

impl ExternalSlice<f64> for Exported<f64> {
    fn as_slice(&self) -> &[f64] {
        self.elements()
    }
}

// an int64 index array read as `usize` (the same size and alignment on 64-bit targets, every bit
// pattern valid; `exported_csr` refuses negative entries first)
const _: () = assert!(
    std::mem::size_of::<usize>() == std::mem::size_of::<i64>()
        && std::mem::align_of::<usize>() == std::mem::align_of::<i64>()
);

impl ExternalSlice<usize> for Exported<i64> {
    #[allow(unsafe_code)]
    fn as_slice(&self) -> &[usize] {
        let e = self.elements();
        // SAFETY: i64 and usize have the same size and alignment (asserted above) and every
        // bit pattern is a valid usize; the slice borrows `self` as `e` does.
        unsafe { std::slice::from_raw_parts(e.as_ptr().cast::<usize>(), e.len()) }
    }
}

/// The addresses of the `indptr`, `indices` and `data` buffers that sparse features passed as
/// `x` are read from, or `None` for dense features: the tests compare them with the NumPy
/// arrays' own to show that sparse input is not copied.
#[pyfunction]
fn sparse_buffer_addresses(x: &Bound<'_, PyAny>) -> PyResult<Option<(usize, usize, usize)>> {
    Ok(match features(x)? {
        FeatureMatrix::Sparse(m) => Some((
            m.indptr().raw_storage().as_ptr() as usize,
            m.indices().as_ptr() as usize,
            m.data().as_ptr() as usize,
        )),
        FeatureMatrix::Dense(_) => None,
    })
}

/// A CSR matrix from int64 index arrays (negative entries refused).
fn csr(
    indptr: &PyReadonlyArray1<'_, i64>,
    indices: &PyReadonlyArray1<'_, i64>,
    data: Vec<f64>,
    n: usize,
    d: usize,
) -> PyResult<CsMat<f64>> {
    let to_usize = |v: &[i64], what: &str| -> PyResult<Vec<usize>> {
        v.iter()
            .map(|&i| usize::try_from(i).map_err(|_| value_err(format!("negative {what} {i}"))))
            .collect()
    };
    let indptr = to_usize(indptr.as_slice()?, "indptr entry")?;
    let indices = to_usize(indices.as_slice()?, "column index")?;
    CsMat::try_new((n, d), indptr, indices, data)
        .map_err(|(_, _, _, e)| value_err(format!("invalid CSR matrix {n} x {d}: {e}")))
}

fn standardize_mode(s: &str) -> PyResult<StandardizeMode> {
    match s {
        "auto" => Ok(StandardizeMode::Auto),
        "on" | "true" => Ok(StandardizeMode::On),
        "off" | "false" => Ok(StandardizeMode::Off),
        _ => Err(value_err(format!(
            "standardize must be 'auto', True or False, got {s:?}"
        ))),
    }
}

fn row_norm(s: &str) -> PyResult<RowNorm> {
    match s {
        "none" => Ok(RowNorm::None),
        "l2" => Ok(RowNorm::L2),
        _ => Err(value_err(format!(
            "normalize must be None or 'l2', got {s:?}"
        ))),
    }
}

/// RBF widths from the estimator's `gamma` strings (`"scale"`, `"0.5*scale"`, a number).
fn parse_gammas(gammas: &[String]) -> PyResult<Vec<Gamma>> {
    gammas
        .iter()
        .map(|g| {
            g.parse::<Gamma>()
                .map_err(|e| value_err(format!("gamma: {e}")))
        })
        .collect()
}

/// The map family and whether it is learned, from the estimator's `map`.
fn family_name(map: &str) -> PyResult<(&'static str, bool)> {
    match map {
        "lff" => Ok(("lff", true)),
        "lnys" => Ok(("lnys", true)),
        "rff" => Ok(("lff", false)),
        "nys" => Ok(("lnys", false)),
        _ => Err(value_err(format!(
            "map must be 'lff', 'lnys', 'rff' or 'nys', got {map:?}"
        ))),
    }
}

/// Stops the selection when the polling thread saw a signal.
struct Cancel<'a>(&'a AtomicBool);

impl SelectionObserver for Cancel<'_> {
    fn fit_started(&mut self, _stage: &SelectionStage, _max_iter: usize) {}
    fn iteration(&mut self, _record: &IterationRecord) {}
    fn interrupted(&mut self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Stops an iterative solver when the polling thread saw a signal (the solver returns its
/// iterate; [`run_interruptible`] then raises the signal's exception).
struct StopOnSignal<'a>(&'a AtomicBool);

impl gimc_solvers::Observer for StopOnSignal<'_> {
    fn observe(&mut self, _record: &gimc_solvers::IterationRecord) -> gimc_solvers::ObserverAction {
        if self.0.load(Ordering::Relaxed) {
            gimc_solvers::ObserverAction::Stop
        } else {
            gimc_solvers::ObserverAction::Continue
        }
    }
}

/// Runs `work` on a worker thread (inside a pool of `n_jobs` threads when given) with the GIL
/// released, polling for signals on the calling thread every 20 ms; a signal's exception (e.g.
/// `KeyboardInterrupt`) sets the cancel flag and is raised once the work has stopped.
fn run_interruptible<T: Send>(
    py: Python<'_>,
    n_jobs: Option<usize>,
    work: impl FnOnce(&AtomicBool) -> Result<T, GimcError> + Send,
) -> PyResult<T> {
    let cancel = AtomicBool::new(false);
    let pool = match n_jobs {
        Some(n) => {
            // the bound `gimc --threads` has too
            let n = gimc::threads::check_threads(n).map_err(|e| match e {
                GimcError::InvalidParameter { reason, .. } => {
                    PyValueError::new_err(format!("n_jobs: {reason}"))
                }
                other => value_err(other),
            })?;
            Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .build()
                    .map_err(|e| PyRuntimeError::new_err(format!("thread pool: {e}")))?,
            )
        }
        None => None,
    };
    let (result, signal) = py.detach(|| {
        std::thread::scope(|s| {
            let handle = s.spawn(|| match &pool {
                Some(p) => p.install(|| work(&cancel)),
                None => work(&cancel),
            });
            let mut signal: Option<PyErr> = None;
            while !handle.is_finished() {
                std::thread::sleep(Duration::from_millis(20));
                if signal.is_none()
                    && let Err(e) = Python::attach(|py| py.check_signals())
                {
                    cancel.store(true, Ordering::Relaxed);
                    signal = Some(e);
                }
            }
            let result = handle
                .join()
                .map_err(|_| PyRuntimeError::new_err("the gimc worker thread panicked"));
            (result, signal)
        })
    });
    if let Some(e) = signal {
        return Err(e);
    }
    result?.map_err(value_err)
}

/// Fits a label model with model selection on a validation split (`gimc::select_and_fit`):
/// multi-class when `classes` (int64, 0..n_classes) is given, else multi-label from the CSR
/// indicator `labels = (indptr, indices, nrows, n_labels)`. Returns the model file's bytes
/// (with the input transform) and a dict of the chosen setting.
#[pyfunction]
#[pyo3(signature = (x, classes, n_classes, labels, map, m, gamma, alpha, max_iter,
                    validation_fraction, select_k, seed, standardize, normalize, n_jobs=None,
                    storage="auto", block_rows=0, precision="float64", patience=None))]
#[allow(clippy::too_many_arguments)]
fn fit_labels<'py>(
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
    let x = features(x)?;
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
    let mode = standardize_mode(standardize)?;
    let norm = row_norm(normalize)?;
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
        let (x, standardizer) = match x.standardize_by(mode)? {
            Some((z, st)) => (z, Some(st)),
            None => (x, None),
        };
        let x = if norm == RowNorm::None {
            x
        } else {
            x.normalize_rows(norm)
        };
        let data = target.data(x)?;
        let registry = MapRegistry::builtin();
        let fam = registry.family(family)?;
        let storage = match storage {
            Some(s) => s,
            None => auto_storage(&data, fam, &params, MemoryBudget::Detect, streamed)?,
        };
        let params = params.with_storage(storage).check()?;
        let mut sel = select_and_fit_observed(&data, fam, &params, &mut Cancel(cancel))?;
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
enum Target {
    Classes(Vec<usize>, usize),
    Labels(CsMat<f64>),
}

/// A CSR label indicator as the estimator passes it: `(indptr, indices, nrows, n_labels)`.
type Indicator<'py> = (
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
fn fit_auto<'py>(
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

/// One setting of the `auto` search as a dict: stage, transform, blocks (name, gamma,
/// gamma_factor, iterations), alpha and validation_score.
fn trial_dict<'py>(py: Python<'py>, t: &AutoTrial) -> PyResult<Bound<'py, PyDict>> {
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
fn load(bytes: &[u8]) -> Result<(LabelModel, Preprocess), GimcError> {
    label_model_with_preprocess_from_bytes(bytes, &MapRegistry::builtin())
}

/// The n × L scores of the rows `x` (transformed as the model was trained).
#[pyfunction]
fn decision_function<'py>(
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
fn top_k<'py>(
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
fn model_info<'py>(py: Python<'py>, model: &[u8]) -> PyResult<Bound<'py, PyDict>> {
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

/// Truth as a CSR 0/1 matrix from `(indptr, indices, nrows, ncols)`.
fn truth(
    t: (
        PyReadonlyArray1<'_, i64>,
        PyReadonlyArray1<'_, i64>,
        usize,
        usize,
    ),
) -> PyResult<CsMat<f64>> {
    let nnz = t.1.len()?;
    csr(&t.0, &t.1, vec![1.0; nnz], t.2, t.3)
}

fn scores_mat(s: &PyReadonlyArray2<'_, f64>) -> Mat<f64> {
    let a = s.as_array();
    let (n, l) = a.dim();
    Mat::from_fn(n, l, |i, j| a[[i, j]])
}

/// Precision at k of the scores against the CSR truth (a fraction in [0, 1]).
#[pyfunction]
fn precision_at_k(
    scores: PyReadonlyArray2<'_, f64>,
    truth_csr: (
        PyReadonlyArray1<'_, i64>,
        PyReadonlyArray1<'_, i64>,
        usize,
        usize,
    ),
    k: usize,
) -> PyResult<f64> {
    let t = truth(truth_csr)?;
    gimc_metrics::precision_at_k(scores_mat(&scores).as_ref(), &t, k).map_err(value_err)
}

/// nDCG at k of the scores against the CSR truth (in [0, 1]).
#[pyfunction]
fn ndcg_at_k(
    scores: PyReadonlyArray2<'_, f64>,
    truth_csr: (
        PyReadonlyArray1<'_, i64>,
        PyReadonlyArray1<'_, i64>,
        usize,
        usize,
    ),
    k: usize,
) -> PyResult<f64> {
    let t = truth(truth_csr)?;
    gimc_metrics::ndcg_at_k(scores_mat(&scores).as_ref(), &t, k).map_err(value_err)
}

/// The RBF width of the scale rule, 1 / (d · Var X), for the features `x`.
#[pyfunction]
fn gamma_scale(x: &Bound<'_, PyAny>) -> PyResult<f64> {
    Ok(features(x)?.gamma_scale())
}

/// Semi-supervised clustering from pairwise constraints (GIMC Algorithm 2,
/// `gimc::fit_semisupervised`, as `gimc cluster --constraints`): `pairs` is a p × 3 float64
/// array of (i, j, 1 same / 0 different). Returns the cluster of every row and a dict of the
/// chosen λ, iteration count, γ and the training constraint error. An empty `alpha` keeps the
/// paper's λ grid.
#[pyfunction]
#[pyo3(signature = (x, pairs, k, map, m, gamma, alpha, max_iter, seed, standardize, normalize,
                    n_jobs=None))]
#[allow(clippy::too_many_arguments)]
fn fit_clusters<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    pairs: PyReadonlyArray2<'py, f64>,
    k: usize,
    map: &str,
    m: usize,
    gamma: &str,
    alpha: Vec<f64>,
    max_iter: usize,
    seed: u64,
    standardize: &str,
    normalize: &str,
    n_jobs: Option<usize>,
) -> PyResult<(Bound<'py, numpy::PyArray1<i64>>, Bound<'py, PyDict>)> {
    let x = features(x)?;
    let mode = standardize_mode(standardize)?;
    let norm = row_norm(normalize)?;
    let (family, learn) = family_name(map)?;
    let gamma: Gamma = gamma
        .parse()
        .map_err(|e| value_err(format!("gamma: {e}")))?;
    let p = pairs.as_array();
    if p.ncols() != 3 {
        return Err(value_err(format!(
            "constraints must be a (n_pairs, 3) array of (i, j, same), got {} columns",
            p.ncols()
        )));
    }
    let mut list = Vec::with_capacity(p.nrows());
    for (r, row) in p.rows().into_iter().enumerate() {
        let idx = |v: f64| -> PyResult<usize> {
            if v >= 0.0 && v.fract() == 0.0 && v < usize::MAX as f64 {
                Ok(v as usize)
            } else {
                Err(value_err(format!(
                    "constraint {r}: row index {v} is not a non-negative integer"
                )))
            }
        };
        list.push((idx(row[0])?, idx(row[1])?, row[2]));
    }
    let fit = run_interruptible(py, n_jobs, |cancel| {
        let x = match x.standardize_by(mode)? {
            Some((z, _)) => z,
            None => x,
        };
        let x = if norm == RowNorm::None {
            x
        } else {
            x.normalize_rows(norm)
        };
        let registry = MapRegistry::builtin();
        let fam = registry.family(family)?;
        let mut params = SemiSupParams::new(k, m, gamma).with_learn(learn);
        if !alpha.is_empty() {
            params = params.with_lambdas(alpha);
        }
        params.completion.max_iter = max_iter;
        let params = params.check()?;
        let r = fit_semisupervised_observed(
            &x,
            &list,
            fam,
            &params,
            &mut seeded(seed),
            &mut StopOnSignal(cancel),
        )?;
        Ok((
            r.labels,
            r.lambda,
            r.iterations,
            r.gamma,
            r.train_constraint_error,
        ))
    })?;
    let (labels, lambda, iterations, gamma, err) = fit;
    let info = PyDict::new(py);
    info.set_item("alpha", lambda)?;
    info.set_item("iterations", iterations)?;
    info.set_item("gamma", gamma)?;
    info.set_item("train_constraint_error", err)?;
    let labels: Vec<i64> = labels.into_iter().map(|c| c as i64).collect();
    Ok((labels.into_pyarray(py), info))
}

/// Input rows after the standardisation and row normalisation the estimator asks for, and the
/// standardisation learnt (as `(mean, scale, center)` for the Python side to keep).
fn preprocess(
    x: FeatureMatrix,
    mode: StandardizeMode,
    norm: RowNorm,
) -> Result<(FeatureMatrix, Option<gimc_linalg::Standardizer>), GimcError> {
    let (x, st) = match x.standardize_by(mode)? {
        Some((z, st)) => (z, Some(st)),
        None => (x, None),
    };
    let x = if norm == RowNorm::None {
        x
    } else {
        x.normalize_rows(norm)
    };
    Ok((x, st))
}

fn mat_to_py<'py>(py: Python<'py>, m: &Mat<f64>) -> Bound<'py, PyArray2<f64>> {
    Array2::from_shape_fn((m.nrows(), m.ncols()), |(i, j)| m[(i, j)]).into_pyarray(py)
}

fn mat_from_py(a: &PyReadonlyArray2<'_, f64>) -> Mat<f64> {
    let a = a.as_array();
    let (n, d) = a.dim();
    Mat::from_fn(n, d, |i, j| a[[i, j]])
}

/// OKMF (online kernel matrix factorisation, `gimc_cluster::fit_okmf`, as `gimc cluster
/// --method okmf`) with an RBF kernel. Returns the clusters of the rows and the model's parts:
/// `budget` (p × d, in the transformed feature space), `w` (p × k), `gamma`, `lambda`, `alpha`,
/// the standardisation (`mean`, `scale`, `center`, or None) and `loss_trace`.
#[pyfunction]
#[pyo3(signature = (x, k, budget_size, gamma, epochs, batch_size, seed, standardize, normalize,
                    n_jobs=None))]
#[allow(clippy::too_many_arguments)]
fn fit_okmf<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    k: usize,
    budget_size: usize,
    gamma: &str,
    epochs: usize,
    batch_size: usize,
    seed: u64,
    standardize: &str,
    normalize: &str,
    n_jobs: Option<usize>,
) -> PyResult<(Bound<'py, numpy::PyArray1<i64>>, Bound<'py, PyDict>)> {
    let x = features(x)?;
    let mode = standardize_mode(standardize)?;
    let norm = row_norm(normalize)?;
    let gamma: Gamma = gamma
        .parse()
        .map_err(|e| value_err(format!("gamma: {e}")))?;
    let (labels, model, st, g) = run_interruptible(py, n_jobs, |cancel| {
        let (x, st) = preprocess(x, mode, norm)?;
        let g = gamma.resolve(&x);
        let params = gimc_cluster::OkmfParams::new(k, gimc_linalg::Kernel::Rbf { gamma: g })
            .with_budget_size(budget_size)
            .with_epochs(epochs)
            .with_batch_size(batch_size)
            .check()?;
        let mut until_cancelled = StopOnSignal(cancel);
        let model = gimc_cluster::fit_okmf(&x, &params, &mut seeded(seed), &mut until_cancelled)?;
        let labels = model.predict(&x)?;
        Ok((labels, model, st, g))
    })?;
    let info = PyDict::new(py);
    info.set_item("budget", mat_to_py(py, &model.budget))?;
    info.set_item("w", mat_to_py(py, &model.w))?;
    info.set_item("gamma", g)?;
    info.set_item("lambda", model.lambda())?;
    info.set_item("alpha", model.alpha())?;
    info.set_item("loss_trace", model.loss_trace.clone())?;
    match st {
        Some(st) => {
            info.set_item("mean", st.mean.clone())?;
            info.set_item("scale", st.scale.clone())?;
            info.set_item("center", st.center)?;
        }
        None => info.set_item("mean", py.None())?,
    }
    let labels: Vec<i64> = labels.into_iter().map(|c| c as i64).collect();
    Ok((labels.into_pyarray(py), info))
}

/// The OKMF clusters of new rows from a model's parts (see [`fit_okmf`]); `mean` / `scale` /
/// `center` restore the standardisation (None: none) and `normalize` the row normalisation.
#[pyfunction]
#[pyo3(signature = (x, budget, w, gamma, lambda_, alpha, mean, scale, center, normalize))]
#[allow(clippy::too_many_arguments)]
fn okmf_predict<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    budget: PyReadonlyArray2<'py, f64>,
    w: PyReadonlyArray2<'py, f64>,
    gamma: f64,
    lambda_: f64,
    alpha: f64,
    mean: Option<Vec<f64>>,
    scale: Option<Vec<f64>>,
    center: bool,
    normalize: &str,
) -> PyResult<Bound<'py, numpy::PyArray1<i64>>> {
    let x = features(x)?;
    let (budget, w) = (mat_from_py(&budget), mat_from_py(&w));
    let pre = Preprocess {
        standardizer: match (mean, scale) {
            (Some(mean), Some(scale)) => Some(gimc_linalg::Standardizer {
                mean,
                scale,
                center,
            }),
            (None, None) => None,
            _ => return Err(value_err("give both mean and scale, or neither")),
        },
        row_norm: row_norm(normalize)?,
        ..Preprocess::default()
    };
    let labels = py
        .detach(|| -> Result<Vec<usize>, GimcError> {
            let model = gimc_cluster::Okmf::from_parts(
                budget,
                w,
                gimc_linalg::Kernel::Rbf { gamma },
                lambda_,
                alpha,
            )?;
            let x = pre.apply(&x)?;
            Ok(model.predict(&x)?)
        })
        .map_err(value_err)?;
    let labels: Vec<i64> = labels.into_iter().map(|c| c as i64).collect();
    Ok(labels.into_pyarray(py))
}

/// Entry indices from a NumPy int64 array, refusing negative ones.
fn indices(v: &PyReadonlyArray1<'_, i64>, what: &str) -> PyResult<Vec<usize>> {
    v.as_slice()?
        .iter()
        .map(|&i| usize::try_from(i).map_err(|_| value_err(format!("negative {what} {i}"))))
        .collect()
}

/// W, H and the fit's description.
type CompletionFit<'py> = (
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyDict>,
);

/// Matrix completion by `method` (`gimc_solvers::completion::fit_selected`, as `gimc complete
/// --method`): `mc-als`, `imc` (ALS + CG), `mc-nuclear` / `imc-nuclear` (FPC), `pu-imc`.
/// Z = X W (Y H)ᵀ is fitted to the observed `(rows, cols, values)`; `x_rows` / `x_cols` are the
/// row and column features (None: the identity, with `n_rows` / `n_cols` entries). A grid
/// `alpha` is chosen by the RMSE on a held-out `holdout` fraction of Ω; for `pu-imc`, the grids
/// `alpha` and `rho` by the AUC of the held-out positives against entries outside Ω
/// (`fit_selected_pu`). Returns W, H and a dict of the chosen λ (and ρ), the held-out RMSE per
/// λ (or AUC per (λ, ρ)), the rank, the iterations and the objective.
#[pyfunction]
#[pyo3(signature = (method, x_rows, n_rows, x_cols, n_cols, rows, cols, values, rank, alpha,
                    holdout, rho, max_iter, seed, n_jobs=None))]
#[allow(clippy::too_many_arguments)]
fn fit_completion<'py>(
    py: Python<'py>,
    method: &str,
    x_rows: Option<&Bound<'py, PyAny>>,
    n_rows: usize,
    x_cols: Option<&Bound<'py, PyAny>>,
    n_cols: usize,
    rows: PyReadonlyArray1<'py, i64>,
    cols: PyReadonlyArray1<'py, i64>,
    values: PyReadonlyArray1<'py, f64>,
    rank: usize,
    alpha: Vec<f64>,
    holdout: f64,
    rho: Vec<f64>,
    max_iter: usize,
    seed: u64,
    n_jobs: Option<usize>,
) -> PyResult<CompletionFit<'py>> {
    let first_rho = rho.first().copied().unwrap_or(0.5);
    let method = CompletionMethod::from_name(method, first_rho).map_err(value_err)?;
    let pu = matches!(method, CompletionMethod::PuImc { .. });
    if !pu && rho.len() > 1 {
        return Err(value_err("rho is a grid of pu-imc only"));
    }
    let fx = x_rows.map(features).transpose()?;
    let fy = x_cols.map(features).transpose()?;
    let (r, c) = (
        indices(&rows, "row index")?,
        indices(&cols, "column index")?,
    );
    let vals = values.as_slice()?.to_vec();
    let fit = run_interruptible(py, n_jobs, |cancel| {
        let n1 = fx.as_ref().map_or(n_rows, |f| f.nrows());
        let n2 = fy.as_ref().map_or(n_cols, |f| f.nrows());
        let omega = gimc_linalg::Observed::from_triplets(n1, n2, &r, &c, &vals)?;
        let phi = fx.as_ref().map_or(
            gimc_solvers::Side::Identity(n1),
            gimc_solvers::Side::Features,
        );
        let psi = fy.as_ref().map_or(
            gimc_solvers::Side::Identity(n2),
            gimc_solvers::Side::Features,
        );
        let mut stop = StopOnSignal(cancel);
        Ok(if pu {
            let f = fit_selected_pu(
                phi, psi, &omega, &alpha, &rho, holdout, rank, max_iter, seed, &mut stop,
            )?;
            (f.lambda, Some(f.rho), Vec::new(), f.holdout_auc, f.model)
        } else {
            let f = fit_selected(
                method, phi, psi, &omega, &alpha, holdout, rank, max_iter, seed, &mut stop,
            )?;
            (f.lambda, None, f.holdout_rmse, Vec::new(), f.model)
        })
    })?;
    let (lambda, chosen_rho, holdout_rmse, holdout_auc, model) = fit;
    let info = PyDict::new(py);
    info.set_item("alpha", lambda)?;
    info.set_item("rho", chosen_rho)?;
    info.set_item("holdout_rmse", holdout_rmse)?;
    info.set_item("holdout_auc", holdout_auc)?;
    info.set_item("rank", model.rank())?;
    info.set_item("iterations", model.iterations)?;
    info.set_item("objective", model.objective_trace.last().copied())?;
    info.set_item("stop_reason", format!("{:?}", model.stop_reason))?;
    Ok((mat_to_py(py, &model.w), mat_to_py(py, &model.h), info))
}

/// The model bytes, the row and column factors Φ(X) W and Ψ(Y) H of the training features,
/// and the fit's description.
type GimcCompletionFit<'py> = (
    Bound<'py, PyBytes>,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyDict>,
);

/// GIMC completion with kernel maps on both sides (`gimc::select_completion`, as `gimc complete
/// --method gimc-lff|gimc-lnys|imc-rff|imc-nys`): `map` is `lff` / `lnys` (learned) or `rff` /
/// `nys` (kept at the random draw); `learn` is `both`, `rows` or `cols`; m, γ and λ are grids
/// chosen with the iteration count on a held-out `holdout` fraction of Ω, then refitted.
/// `patience` stops each grid point's map learning that many iterations without a better
/// held-out error (None: run to `max_iter`). Returns the model file's bytes, Φ(X) W, Ψ(Y) H
/// and a dict of the choice and every grid point's held-out relative error.
#[pyfunction]
#[pyo3(signature = (map, learn, x_rows, x_cols, rows, cols, values, ms, gammas, alpha, rank,
                    max_iter, holdout, seed, n_jobs=None, patience=None))]
#[allow(clippy::too_many_arguments)]
fn fit_gimc_completion<'py>(
    py: Python<'py>,
    map: &str,
    learn: &str,
    x_rows: &Bound<'py, PyAny>,
    x_cols: &Bound<'py, PyAny>,
    rows: PyReadonlyArray1<'py, i64>,
    cols: PyReadonlyArray1<'py, i64>,
    values: PyReadonlyArray1<'py, f64>,
    ms: Vec<usize>,
    gammas: Vec<String>,
    alpha: Vec<f64>,
    rank: usize,
    max_iter: usize,
    holdout: f64,
    seed: u64,
    n_jobs: Option<usize>,
    patience: Option<usize>,
) -> PyResult<GimcCompletionFit<'py>> {
    let (family, learned) = family_name(map)?;
    let (learn_rows, learn_cols) = match learn {
        "both" => (true, true),
        "rows" => (true, false),
        "cols" => (false, true),
        _ => {
            return Err(value_err(format!(
                "learn must be 'both', 'rows' or 'cols', got {learn:?}"
            )));
        }
    };
    let gammas = parse_gammas(&gammas)?;
    let (fx, fy) = (features(x_rows)?, features(x_cols)?);
    let (r, c) = (
        indices(&rows, "row index")?,
        indices(&cols, "column index")?,
    );
    let vals = values.as_slice()?.to_vec();
    let params = gimc::CompletionSelectionParams::default()
        .with_ms(ms)
        .with_gammas(gammas)
        .with_lambdas(alpha)
        .with_rank(rank)
        .with_max_iter(max_iter)
        .with_learn(learn_rows, learn_cols)
        .with_holdout(holdout)
        .with_patience(patience)
        .with_seed(seed)
        .check()
        .map_err(|e| value_err(e.to_string()))?;
    let (bytes, p, q, sel) = run_interruptible(py, n_jobs, |_cancel| {
        let omega = gimc_linalg::Observed::from_triplets(fx.nrows(), fy.nrows(), &r, &c, &vals)?;
        let registry = MapRegistry::builtin();
        let sel =
            gimc::select_completion(&omega, &fx, &fy, registry.family(family)?, learned, &params)?;
        let bytes = gimc::persist::completion_model_to_bytes(&sel.model)?;
        let p = sel.model.row_factors(&fx)?;
        let q = sel.model.col_factors(&fy)?;
        Ok((bytes, p, q, sel))
    })?;
    let info = PyDict::new(py);
    let c = sel.chosen;
    info.set_item("alpha", c.lambda)?;
    info.set_item("m", c.m)?;
    info.set_item("gamma", c.gamma.to_string())?;
    info.set_item("gamma_resolved", sel.gamma_resolved)?;
    info.set_item("iterations", c.iterations)?;
    info.set_item("holdout_error", c.holdout_relative_error)?;
    let grid: Vec<(usize, String, f64, usize, f64)> = sel
        .scores
        .iter()
        .map(|s| {
            (
                s.m,
                s.gamma.to_string(),
                s.lambda,
                s.iterations,
                s.holdout_relative_error,
            )
        })
        .collect();
    info.set_item("holdout_errors", grid)?;
    info.set_item("rank", sel.model.rank())?;
    Ok((
        PyBytes::new(py, &bytes),
        mat_to_py(py, &p),
        mat_to_py(py, &q),
        info,
    ))
}

/// The factors of new rows (`side = "rows"`: Φ(X) W) or columns (`"cols"`: Ψ(Y) H) under a
/// completion model's bytes.
#[pyfunction]
fn completion_factors<'py>(
    py: Python<'py>,
    model: &[u8],
    x: &Bound<'py, PyAny>,
    side: &str,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let f = features(x)?;
    let m = gimc::persist::completion_model_from_bytes(model, &MapRegistry::builtin())
        .map_err(|e| value_err(e.to_string()))?;
    let out = match side {
        "rows" => m.row_factors(&f),
        "cols" => m.col_factors(&f),
        _ => {
            return Err(value_err(format!(
                "side must be 'rows' or 'cols', got {side:?}"
            )));
        }
    }
    .map_err(|e| value_err(e.to_string()))?;
    Ok(mat_to_py(py, &out))
}

/// MC-1 / MC-b transduction of a table (`gimc_solvers::transduction::data::transduce`, as
/// `gimc transduce`): `x` n × d with NaN in the missing cells, `y` n × t with +1 / −1 known
/// labels and 0 unknown. Returns the n × t scores, the n × d imputed features and a dict of the
/// chosen λ, μ and the cross-validated label error (%).
#[pyfunction]
#[pyo3(signature = (x, y, method, lambdas, folds, mu_count, max_stage_iters, standardize, seed,
                    n_jobs=None))]
#[allow(clippy::too_many_arguments)]
fn transduce<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray2<'py, f64>,
    method: &str,
    lambdas: Vec<f64>,
    folds: usize,
    mu_count: usize,
    max_stage_iters: usize,
    standardize: bool,
    seed: u64,
    n_jobs: Option<usize>,
) -> PyResult<CompletionFit<'py>> {
    use gimc_solvers::transduction::data::{Baseline, transduce_baseline};
    let (variant, baseline) = match method {
        "mc1" => (gimc_solvers::TransductionVariant::Mc1, None),
        "mcb" => (gimc_solvers::TransductionVariant::McB, None),
        "fpc-svm" => (
            gimc_solvers::TransductionVariant::Mc1,
            Some(Baseline::FpcSvm(
                gimc_solvers::FpcImputeParams::default()
                    .with_folds(folds)
                    .with_mu_count(mu_count)
                    .with_max_stage_iters(max_stage_iters)
                    .with_accelerate(true)
                    .check()
                    .map_err(|e| value_err(e.to_string()))?,
            )),
        ),
        "mean-svm" => (
            gimc_solvers::TransductionVariant::Mc1,
            Some(Baseline::MeanSvm),
        ),
        "zero-svm" => (
            gimc_solvers::TransductionVariant::Mc1,
            Some(Baseline::ZeroSvm),
        ),
        _ => {
            return Err(value_err(format!(
                "method must be 'mc1', 'mcb', 'fpc-svm', 'mean-svm' or 'zero-svm', got {method:?}"
            )));
        }
    };
    let (x, y) = (mat_from_py(&x), mat_from_py(&y));
    let out = run_interruptible(py, n_jobs, |_cancel| {
        if let Some(b) = &baseline {
            let svm = gimc_solvers::SvmCvParams::default()
                .with_folds(folds)
                .check()?;
            return Ok(transduce_baseline(
                x.as_ref(),
                y.as_ref(),
                standardize,
                b,
                &svm,
                &mut seeded(seed),
            )?);
        }
        let params = gimc_solvers::TransductionParams::default()
            .with_variant(variant)
            .with_max_stage_iters(max_stage_iters)
            .with_accelerate(true)
            .check()?;
        let cv = gimc_solvers::TransductionCvParams::default()
            .with_folds(folds)
            .with_lambdas(lambdas)
            .with_mu_count(mu_count)
            .check()?;
        Ok(gimc_solvers::transduction::data::transduce(
            x.as_ref(),
            y.as_ref(),
            standardize,
            &params,
            &cv,
            &mut seeded(seed),
        )?)
    })?;
    let info = PyDict::new(py);
    info.set_item("alpha", out.lambda)?;
    info.set_item("mu", out.mu)?;
    info.set_item("cv_label_error", out.cv_label_error)?;
    info.set_item("svm_c", out.svm_c.clone())?;
    Ok((
        mat_to_py(py, &out.scores),
        mat_to_py(py, &out.imputed),
        info,
    ))
}

/// The extension module.
/// A [`gimc_data::Dataset`] as a dict: `X` (a float64 array, or the CSR arrays `(indptr,
/// indices, data, nrows, ncols)` of sparse features), `feature_names`, `name`, and the
/// targets: `kind` (`labels`, `classes`, `values` or `none`) with `labels` (the CSR arrays
/// `(indptr, indices, nrows, ncols)` of the 0/1 label matrix) and `label_names`, or `classes`
/// (class indices) and `class_names`, or `values`.
fn dataset_dict<'py>(py: Python<'py>, set: gimc_data::Dataset) -> PyResult<Bound<'py, PyDict>> {
    use gimc_data::Targets;
    let to_i64 = |v: &[usize]| v.iter().map(|&i| i as i64).collect::<Vec<i64>>();
    let d = PyDict::new(py);
    d.set_item("name", &set.name)?;
    match &set.features {
        FeatureMatrix::Dense(m) => d.set_item("X", mat_to_py(py, m))?,
        FeatureMatrix::Sparse(c) => {
            let (n, cols) = c.shape();
            let indptr = to_i64(c.indptr().raw_storage());
            d.set_item(
                "X",
                (
                    indptr.into_pyarray(py),
                    to_i64(c.indices()).into_pyarray(py),
                    c.data().to_vec().into_pyarray(py),
                    n,
                    cols,
                ),
            )?;
        }
    }
    d.set_item("feature_names", &set.feature_names)?;
    match set.targets {
        Targets::Labels { matrix, names } => {
            d.set_item("kind", "labels")?;
            let (n, l) = matrix.shape();
            let m = if matrix.is_csr() {
                matrix
            } else {
                matrix.to_csr()
            };
            let indptr = to_i64(m.indptr().raw_storage());
            d.set_item(
                "labels",
                (
                    indptr.into_pyarray(py),
                    to_i64(m.indices()).into_pyarray(py),
                    n,
                    l,
                ),
            )?;
            d.set_item("label_names", names)?;
        }
        Targets::Classes { classes, names } => {
            d.set_item("kind", "classes")?;
            d.set_item("classes", to_i64(&classes).into_pyarray(py))?;
            d.set_item("class_names", names)?;
        }
        Targets::Values(v) => {
            d.set_item("kind", "values")?;
            d.set_item("values", v.into_pyarray(py))?;
        }
        Targets::None => d.set_item("kind", "none")?,
    }
    Ok(d)
}

/// One part of a named set of the data directory (`data_dir`, else `$GIMC_DATA`, else
/// `datasets/`), read as `gimc --data-dir DIR … SET --part PART` reads it: see
/// [`dataset_dict`]. A missing file is a `ValueError` naming it and its public source.
#[pyfunction]
#[pyo3(signature = (name, part, data_dir=None))]
fn load_named<'py>(
    py: Python<'py>,
    name: &str,
    part: &str,
    data_dir: Option<std::path::PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let dir = gimc_data::resolve_data_dir(data_dir.as_deref());
    let set = py
        .detach(|| {
            gimc_data::load_named_part(&dir, name, part, &gimc_data::NamedOptions::default())
        })
        .map_err(value_err)?;
    dataset_dict(py, set)
}

/// A data file in any format gimc reads (guessed from its name and first lines: ARFF with its
/// Mulan XML, LIBSVM, the extreme-classification repository's format, CSV): see
/// [`dataset_dict`]. `labels` names the Mulan XML label file of an ARFF file (default: found
/// beside it, as the command line finds it). Malformed input is a `ValueError` naming the file
/// and line.
#[pyfunction]
#[pyo3(signature = (path, labels=None))]
fn load_file<'py>(
    py: Python<'py>,
    path: std::path::PathBuf,
    labels: Option<std::path::PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let set = py
        .detach(|| {
            let format = gimc_data::guess_format_with_labels(&path, labels.as_deref())?;
            gimc_data::load_path(&path, Some(&format))
        })
        .map_err(value_err)?;
    dataset_dict(py, set)
}

#[pymodule]
fn _gimc(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fit_labels, m)?)?;
    m.add_function(wrap_pyfunction!(fit_auto, m)?)?;
    m.add_function(wrap_pyfunction!(fit_clusters, m)?)?;
    m.add_function(wrap_pyfunction!(fit_okmf, m)?)?;
    m.add_function(wrap_pyfunction!(okmf_predict, m)?)?;
    m.add_function(wrap_pyfunction!(fit_completion, m)?)?;
    m.add_function(wrap_pyfunction!(fit_gimc_completion, m)?)?;
    m.add_function(wrap_pyfunction!(completion_factors, m)?)?;
    m.add_function(wrap_pyfunction!(transduce, m)?)?;
    m.add_function(wrap_pyfunction!(decision_function, m)?)?;
    m.add_function(wrap_pyfunction!(top_k, m)?)?;
    m.add_function(wrap_pyfunction!(model_info, m)?)?;
    m.add_function(wrap_pyfunction!(precision_at_k, m)?)?;
    m.add_function(wrap_pyfunction!(ndcg_at_k, m)?)?;
    m.add_function(wrap_pyfunction!(gamma_scale, m)?)?;
    m.add_function(wrap_pyfunction!(load_named, m)?)?;
    m.add_function(wrap_pyfunction!(load_file, m)?)?;
    m.add_function(wrap_pyfunction!(sparse_buffer_addresses, m)?)?;
    Ok(())
}
