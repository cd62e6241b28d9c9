"""Conversions between NumPy / SciPy inputs and the arrays the Rust functions borrow."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import validate_data


def check_int(name, value, minimum=1, optional=False):
    """Raises ValueError unless ``value`` is an integer (not a bool) >= ``minimum``, or None
    when ``optional``."""
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        allowed = "None or an integer" if optional else "an integer"
        raise ValueError(f"{name} must be {allowed} >= {minimum}, got {value!r}")


def _canonical_csr(X):
    """CSR matrix ``X`` in canonical form (a copy with sorted indices and duplicates summed
    when it is not), with its ``indptr`` and ``indices`` as contiguous int64 arrays."""
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return (
        X,
        np.ascontiguousarray(X.indptr, dtype=np.int64),
        np.ascontiguousarray(X.indices, dtype=np.int64),
    )


def features(X):
    """A float64 2-D array, or the CSR tuple ``(indptr, indices, data, nrows, ncols)``.

    Sparse input (any SciPy sparse matrix or array) stays sparse: it is converted to CSR with
    sorted indices and no duplicates, never densified. A CSR float64 matrix in canonical form
    is passed as its own arrays (int32 indices are widened to int64, the one copy), and the
    Rust side reads them in place. Dense input must be 2-D and numeric.
    """
    if sp.issparse(X):
        X, indptr, indices = _canonical_csr(sp.csr_matrix(X, dtype=np.float64))
        return (
            indptr,
            indices,
            np.ascontiguousarray(X.data, dtype=np.float64),
            int(X.shape[0]),
            int(X.shape[1]),
        )
    X = np.asarray(X)
    if X.dtype == object or not np.issubdtype(X.dtype, np.number):
        raise TypeError(f"X must be numeric, got dtype {X.dtype}")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}")
    return np.asarray(X, dtype=np.float64)


def checked_features(estimator, X, *, reset, allow_nan=False, accept_sparse=True, min_samples=1):
    """``X`` checked by scikit-learn's ``validate_data``, then as :func:`features` returns it.

    The check is scikit-learn's own, with its messages: ``X`` must be 2-D and numeric (complex
    values and non-numeric objects are refused), finite (``NaN`` allowed only with
    ``allow_nan``, where it marks a missing value), with at least ``min_samples`` rows and one
    column. ``reset`` records ``n_features_in_`` (in ``fit``); otherwise ``X`` must have that
    many columns. Sparse input stays sparse (CSR or CSC, converted to CSR by
    :func:`features`); with ``accept_sparse=False`` it is refused with a ``TypeError`` that
    says so.
    """
    X = validate_data(
        estimator,
        X,
        reset=reset,
        accept_sparse=("csr", "csc") if accept_sparse else False,
        dtype=np.float64,
        ensure_all_finite="allow-nan" if allow_nan else True,
        ensure_min_samples=min_samples,
    )
    return features(X)


def indicator_csr(Y):
    """A 0/1 indicator matrix (dense or sparse) as ``(indptr, indices, nrows, ncols)``."""
    Y = sp.csr_matrix(Y)
    Y.eliminate_zeros()
    Y, indptr, indices = _canonical_csr(Y)
    return (indptr, indices, int(Y.shape[0]), int(Y.shape[1]))
