//! Data sets: named sets of the data directory and data files as dicts, and the RBF scale rule
//! of a feature matrix.

use gimc_linalg::FeatureMatrix;
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{features, mat_to_py};
use crate::value_err;

/// The RBF width of the scale rule, 1 / (d · Var X), for the features `x`.
#[pyfunction]
pub(crate) fn gamma_scale(x: &Bound<'_, PyAny>) -> PyResult<f64> {
    Ok(features(x)?.gamma_scale())
}

/// A [`gimc_data::Dataset`] as a dict: `X` (a float64 array, or the CSR arrays `(indptr,
/// indices, data, nrows, ncols)` of sparse features), `feature_names`, `name`, and the
/// targets: `kind` (`labels`, `classes`, `values` or `none`) with `labels` (the CSR arrays
/// `(indptr, indices, nrows, ncols)` of the 0/1 label matrix) and `label_names`, or `classes`
/// (class indices) and `class_names`, or `values`.
pub(crate) fn dataset_dict<'py>(
    py: Python<'py>,
    set: gimc_data::Dataset,
) -> PyResult<Bound<'py, PyDict>> {
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
pub(crate) fn load_named<'py>(
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
pub(crate) fn load_file<'py>(
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
