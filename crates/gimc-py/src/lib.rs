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
//!
//! The functions are grouped by what they wrap: `labels` (the label estimators and their
//! metrics), `completion`, `clustering`, `transduction` and `data` (data sets and files), on
//! `convert` (NumPy and SciPy values in and out, option strings) and `interrupt` (a fit on a
//! worker thread that a signal stops).

#![deny(unsafe_code)]

mod clustering;
mod completion;
mod convert;
mod data;
mod interrupt;
mod labels;
mod transduction;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// A library error as a Python `ValueError` with the library's message.
fn value_err(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The extension module.
#[pymodule]
fn _gimc(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(labels::fit_labels, m)?)?;
    m.add_function(wrap_pyfunction!(labels::fit_auto, m)?)?;
    m.add_function(wrap_pyfunction!(labels::fit_linear, m)?)?;
    m.add_function(wrap_pyfunction!(clustering::fit_clusters, m)?)?;
    m.add_function(wrap_pyfunction!(clustering::fit_okmf, m)?)?;
    m.add_function(wrap_pyfunction!(clustering::okmf_predict, m)?)?;
    m.add_function(wrap_pyfunction!(completion::fit_completion, m)?)?;
    m.add_function(wrap_pyfunction!(completion::fit_gimc_completion, m)?)?;
    m.add_function(wrap_pyfunction!(completion::completion_factors, m)?)?;
    m.add_function(wrap_pyfunction!(transduction::transduce, m)?)?;
    m.add_function(wrap_pyfunction!(labels::decision_function, m)?)?;
    m.add_function(wrap_pyfunction!(labels::top_k, m)?)?;
    m.add_function(wrap_pyfunction!(labels::model_info, m)?)?;
    m.add_function(wrap_pyfunction!(labels::precision_at_k, m)?)?;
    m.add_function(wrap_pyfunction!(labels::ndcg_at_k, m)?)?;
    m.add_function(wrap_pyfunction!(data::gamma_scale, m)?)?;
    m.add_function(wrap_pyfunction!(data::load_named, m)?)?;
    m.add_function(wrap_pyfunction!(data::load_file, m)?)?;
    m.add_function(wrap_pyfunction!(convert::sparse_buffer_addresses, m)?)?;
    Ok(())
}
