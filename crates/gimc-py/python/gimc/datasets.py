"""Data sets as scikit-learn's loaders return them: the named sets of a gimc data directory
(``load_dataset``) and data files in any format gimc reads (``load_file``), read by the Rust
readers the command line uses, so Python and ``gimc`` see the same numbers.

    from gimc.datasets import load_dataset
    X, Y = load_dataset("bibtex", "train", return_X_y=True)   # SciPy CSR, 0/1 CSR indicator
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils import Bunch

from . import _gimc


def _bunch(d, return_X_y):
    x = d["X"]
    if isinstance(x, tuple):
        indptr, indices, data, n, cols = x
        X = sp.csr_matrix((data, indices, indptr), shape=(n, cols))
    else:
        X = x
    kind = d["kind"]
    target_names = None
    if kind == "labels":
        indptr, indices, n, n_labels = d["labels"]
        y = sp.csr_matrix(
            (np.ones(len(indices), dtype=np.int64), indices, indptr), shape=(n, n_labels)
        )
        target_names = np.asarray(d["label_names"]) if d["label_names"] else None
    elif kind == "classes":
        names = d["class_names"]
        y = np.asarray(names)[d["classes"]] if names else d["classes"]
        target_names = np.asarray(names) if names else None
    elif kind == "values":
        y = d["values"]
    else:
        y = None
    if return_X_y:
        return X, y
    return Bunch(
        data=X,
        target=y,
        target_kind=kind,
        target_names=target_names,
        feature_names=np.asarray(d["feature_names"]) if d["feature_names"] else None,
        name=d["name"],
    )


def load_dataset(name, part="train", *, data_dir=None, return_X_y=False):
    """One part of a named set (``bibtex``, ``delicious``, ``yeast``, ``emotions``,
    ``segment``, ``mushrooms``, …) from the data directory: ``data_dir``, else
    ``$GIMC_DATA``, else ``datasets/``, as ``gimc --data-dir DIR … NAME --part PART`` reads it.
    ``cargo xtask datasets fetch`` fetches the files; a missing one is a ``ValueError`` naming
    it and its public source.

    Returns a :class:`sklearn.utils.Bunch` with ``data`` (a SciPy CSR matrix for sparse files,
    else a float64 array), ``target`` (a 0/1 CSR indicator matrix for multi-label sets, an
    array of class names for multi-class ones, values for regression), ``target_kind``
    (``"labels"``, ``"classes"``, ``"values"`` or ``"none"``), ``target_names``,
    ``feature_names`` and ``name``; or ``(data, target)`` with ``return_X_y=True``.
    """
    return _bunch(
        _gimc.load_named(str(name), str(part), None if data_dir is None else str(data_dir)),
        return_X_y,
    )


def load_file(path, *, labels=None, return_X_y=False):
    """A data file in any format gimc reads: ARFF (with its Mulan XML for multi-label
    sets), LIBSVM, the extreme-classification repository's format, or CSV, guessed from the
    name and the first lines. ``labels`` names the Mulan XML label file of an ARFF file; by
    default it is found beside the file as ``gimc`` finds it (``NAME.xml`` for
    ``NAME[-train|-test][-sparse].arff``, else the one XML file whose labels are all attributes
    of the ARFF file). Returns what :func:`load_dataset` returns. Malformed input, a label file
    that does not parse whole, and ``labels`` given for a file that is not ARFF are a
    ``ValueError`` naming the file."""
    return _bunch(
        _gimc.load_file(str(path), None if labels is None else str(labels)), return_X_y
    )
