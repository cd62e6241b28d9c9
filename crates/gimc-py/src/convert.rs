//! Python values in and out: features from NumPy arrays and SciPy CSR tuples (read in place),
//! the estimators' option strings as library types, and matrices back as NumPy arrays.

use std::sync::Arc;

use gimc::{Gamma, GimcError};
use gimc_linalg::faer::Mat;
use gimc_linalg::shared::{Csr, ExternalSlice, SharedSlice, csr_from_parts};
use gimc_linalg::sprs::CsMat;
use gimc_linalg::{FeatureMatrix, RowNorm, StandardizeMode};
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::buffer::{Element, PyBuffer};
use pyo3::prelude::*;

use crate::value_err;

/// Features from a float64 2-D array (copied into column-major storage) or a CSR tuple
/// `(indptr, indices, data, nrows, ncols)` (kept sparse, read in place: see [`exported_csr`]).
pub(crate) fn features(x: &Bound<'_, PyAny>) -> PyResult<FeatureMatrix> {
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
pub(crate) fn exported_csr(
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
pub(crate) struct Exported<T: Element>(PyBuffer<T>);

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
pub(crate) fn sparse_buffer_addresses(
    x: &Bound<'_, PyAny>,
) -> PyResult<Option<(usize, usize, usize)>> {
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
pub(crate) fn csr(
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

pub(crate) fn row_norm(s: &str) -> PyResult<RowNorm> {
    match s {
        "none" => Ok(RowNorm::None),
        "l2" => Ok(RowNorm::L2),
        _ => Err(value_err(format!(
            "normalize must be None or 'l2', got {s:?}"
        ))),
    }
}

/// An RBF width from the estimator's `gamma` string (`"scale"`, `"0.5*scale"`, a number).
pub(crate) fn parse_gamma(gamma: &str) -> PyResult<Gamma> {
    gamma
        .parse::<Gamma>()
        .map_err(|e| value_err(format!("gamma: {e}")))
}

/// RBF widths from the estimator's `gamma` strings (see [`parse_gamma`]).
pub(crate) fn parse_gammas(gammas: &[String]) -> PyResult<Vec<Gamma>> {
    gammas.iter().map(|g| parse_gamma(g)).collect()
}

/// The map family and whether it is learned, from the estimator's `map`.
pub(crate) fn family_name(map: &str) -> PyResult<(&'static str, bool)> {
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

/// A 0/1 matrix as the CSR arrays `(indptr, indices, nrows, ncols)` (int64 indices).
pub(crate) type CsrTruth<'py> = (
    PyReadonlyArray1<'py, i64>,
    PyReadonlyArray1<'py, i64>,
    usize,
    usize,
);

/// Truth as a CSR 0/1 matrix from `(indptr, indices, nrows, ncols)`.
pub(crate) fn truth(t: CsrTruth<'_>) -> PyResult<CsMat<f64>> {
    let nnz = t.1.len()?;
    csr(&t.0, &t.1, vec![1.0; nnz], t.2, t.3)
}

pub(crate) fn scores_mat(s: &PyReadonlyArray2<'_, f64>) -> Mat<f64> {
    let a = s.as_array();
    let (n, l) = a.dim();
    Mat::from_fn(n, l, |i, j| a[[i, j]])
}

/// An estimator's input rows with the standardisation and row normalisation its options ask
/// for, checked here and applied by [`InputRows::transform`] (inside the interruptible fit).
pub(crate) struct InputRows {
    x: FeatureMatrix,
    mode: StandardizeMode,
    /// The row normalisation (stored with a label model).
    pub(crate) norm: RowNorm,
}

impl InputRows {
    /// The rows of `x` ([`features`]) with the options `standardize` and `normalize`.
    pub(crate) fn new(x: &Bound<'_, PyAny>, standardize: &str, normalize: &str) -> PyResult<Self> {
        Ok(Self {
            x: features(x)?,
            mode: standardize_mode(standardize)?,
            norm: row_norm(normalize)?,
        })
    }

    /// The standardised and normalised rows, and the standardisation learnt.
    pub(crate) fn transform(
        self,
    ) -> Result<(FeatureMatrix, Option<gimc_linalg::Standardizer>), GimcError> {
        let (x, st) = match self.x.standardize_by(self.mode)? {
            Some((z, st)) => (z, Some(st)),
            None => (self.x, None),
        };
        let x = if self.norm == RowNorm::None {
            x
        } else {
            x.normalize_rows(self.norm)
        };
        Ok((x, st))
    }
}

pub(crate) fn mat_to_py<'py>(py: Python<'py>, m: &Mat<f64>) -> Bound<'py, PyArray2<f64>> {
    Array2::from_shape_fn((m.nrows(), m.ncols()), |(i, j)| m[(i, j)]).into_pyarray(py)
}

pub(crate) fn mat_from_py(a: &PyReadonlyArray2<'_, f64>) -> Mat<f64> {
    let a = a.as_array();
    let (n, d) = a.dim();
    Mat::from_fn(n, d, |i, j| a[[i, j]])
}

/// Entry indices from a NumPy int64 array, refusing negative ones.
pub(crate) fn indices(v: &PyReadonlyArray1<'_, i64>, what: &str) -> PyResult<Vec<usize>> {
    v.as_slice()?
        .iter()
        .map(|&i| usize::try_from(i).map_err(|_| value_err(format!("negative {what} {i}"))))
        .collect()
}
