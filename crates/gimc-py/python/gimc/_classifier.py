"""GIMCClassifier: multi-class and multi-label GIMC / IMC with model selection on a validation
split, following scikit-learn's estimator conventions."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from . import _gimc
from ._convert import checked_features, features, indicator_csr

_MAPS = ("lff", "lnys", "rff", "nys")


def _grid(value, name, kind):
    values = list(value) if isinstance(value, (list, tuple, np.ndarray)) else [value]
    if not values:
        raise ValueError(f"{name} must not be empty")
    out = []
    for v in values:
        if kind is str:
            if isinstance(v, str):
                out.append(v.strip())
            elif isinstance(v, numbers.Real) and not isinstance(v, bool):
                out.append(repr(float(v)))
            else:
                raise TypeError(f"{name} entries must be numbers or strings like 'scale', got {v!r}")
        elif kind is int:
            if not isinstance(v, numbers.Integral) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name} entries must be integers >= 1, got {v!r}")
            out.append(int(v))
        else:
            if not isinstance(v, numbers.Real) or isinstance(v, bool) or not np.isfinite(v) or v < 0:
                raise ValueError(f"{name} entries must be finite numbers >= 0, got {v!r}")
            out.append(float(v))
    return out


class GIMCClassifier(ClassifierMixin, BaseEstimator):
    """Goal-directed inductive matrix completion for multi-class and multi-label learning.

    The rows are mapped by a kernel feature map (random Fourier features ``"rff"`` or Nyström
    landmarks ``"nys"``), learned jointly with the model for ``"lff"`` / ``"lnys"`` (GIMC,
    KDD 2016), and the labels are predicted from the mapped rows by a ridge-regularised linear
    model. ``m``, ``gamma`` and ``alpha`` may be single values or lists: every combination is
    fitted on a seeded split of the training rows and scored on the held-out part (accuracy for
    classes, P@``select_k`` for labels) after every outer iteration, and the best setting and
    iteration count are refitted on all rows.

    Parameters
    ----------
    map : {"lff", "lnys", "rff", "nys"}, default="lff"
        The feature map; ``lff`` / ``lnys`` are learned, ``rff`` / ``nys`` fixed.
    m : int or list of int, default=500
        Random directions (the Fourier map has 2m features) or landmarks.
    gamma : float, str or list, default="scale"
        RBF width. ``"scale"`` is scikit-learn's rule 1 / (n_features · X.var()) computed on
        the features as the map sees them (after ``standardize`` and ``normalize``); ``"0.25*scale"``
        multiplies it; a number fixes it.
    alpha : float or list of float, default=1.0
        Ridge penalty λ of the label model.
    max_iter : int, default=10
        Maximum outer iterations of the map learning (ignored for fixed maps).
    n_iter_no_change : int or None, default=None
        Stop a setting's map learning once its validation score has not beaten its best for
        this many outer iterations; None runs every setting to ``max_iter``.
    normalize : {None, "l2"}, default=None
        Scale every row to unit norm (after any standardisation).
    standardize : {"auto", True, False}, default="auto"
        Standardise feature columns with the training statistics; ``"auto"`` does so for dense
        features only (sparse input is never densified).
    validation_fraction : float, default=0.2
        Fraction of the training rows held out to choose the setting and iteration count.
    select_k : int, default=1
        The k of the validation P@k (multi-label).
    random_state : int, RandomState or None, default=None
        Seed of the split and of the maps' draws; an int gives the same model as
        ``gimc fit --seed`` and the Rust library.
    n_jobs : int or None, default=None
        Worker threads (None: all cores).
    storage : {"auto", "whole", "streamed"}, default="auto"
        How the mapped rows Φ (n × 2m) are held: whole in memory, or formed in row blocks and
        never held whole (memory O(m² + m·L + block·m) besides the data, one more pass over
        the features per iteration). ``"auto"`` streams only when the whole fit would not fit
        the memory available. The same fit either way, up to rounding.
    block_rows : int or None, default=None
        Rows per streamed block (None: about 8 Mi entries of Φ).
    precision : {"float64", "float32"}, default="float64"
        Arithmetic of the streamed block products; float32 roughly doubles their speed while
        the sums over blocks, the label model and the line search stay float64.

    Attributes
    ----------
    classes_ : ndarray
        Class labels (multi-class) or label indices 0..L-1 (multi-label).
    n_features_in_ : int
    multilabel_ : bool
    best_params_ : dict
        The chosen ``m``, ``gamma`` (resolved), ``alpha`` and ``iterations``.
    validation_score_ : float
    n_iter_ : int
        Outer iterations of the final fit.
    gamma_ : float
        The RBF width used.
    model_bytes_ : bytes
        The fitted model as a gimc model file (usable with ``gimc predict``).
    streamed_ : bool
        Whether Φ was streamed in row blocks.
    """

    def __init__(
        self,
        map="lff",
        m=500,
        gamma="scale",
        alpha=1.0,
        max_iter=10,
        n_iter_no_change=None,
        normalize=None,
        standardize="auto",
        validation_fraction=0.2,
        select_k=1,
        random_state=None,
        n_jobs=None,
        storage="auto",
        block_rows=None,
        precision="float64",
    ):
        self.map = map
        self.m = m
        self.gamma = gamma
        self.alpha = alpha
        self.max_iter = max_iter
        self.n_iter_no_change = n_iter_no_change
        self.normalize = normalize
        self.standardize = standardize
        self.validation_fraction = validation_fraction
        self.select_k = select_k
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.storage = storage
        self.block_rows = block_rows
        self.precision = precision

    def _seed(self) -> int:
        if isinstance(self.random_state, numbers.Integral) and not isinstance(self.random_state, bool):
            if self.random_state < 0:
                raise ValueError(f"random_state must be >= 0, got {self.random_state}")
            return int(self.random_state)
        return int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))

    def _options(self):
        if self.map not in _MAPS:
            raise ValueError(f"map must be one of {_MAPS}, got {self.map!r}")
        standardize = {"auto": "auto", True: "on", False: "off"}.get(self.standardize)
        if standardize is None:
            raise ValueError(f"standardize must be 'auto', True or False, got {self.standardize!r}")
        normalize = {None: "none", "l2": "l2"}.get(self.normalize)
        if normalize is None:
            raise ValueError(f"normalize must be None or 'l2', got {self.normalize!r}")
        if not isinstance(self.max_iter, numbers.Integral) or self.max_iter < 0:
            raise ValueError(f"max_iter must be an integer >= 0, got {self.max_iter!r}")
        if self.n_iter_no_change is not None and (
            not isinstance(self.n_iter_no_change, numbers.Integral) or self.n_iter_no_change < 1
        ):
            raise ValueError(
                f"n_iter_no_change must be None or an integer >= 1, got {self.n_iter_no_change!r}"
            )
        if not isinstance(self.select_k, numbers.Integral) or self.select_k < 1:
            raise ValueError(f"select_k must be an integer >= 1, got {self.select_k!r}")
        if self.n_jobs is not None and (not isinstance(self.n_jobs, numbers.Integral) or self.n_jobs < 1):
            raise ValueError(f"n_jobs must be None or an integer >= 1, got {self.n_jobs!r}")
        if self.block_rows is not None and (
            not isinstance(self.block_rows, numbers.Integral) or self.block_rows < 1
        ):
            raise ValueError(f"block_rows must be None or an integer >= 1, got {self.block_rows!r}")
        return standardize, normalize

    def fit(self, X, y):
        """Fit on features ``X`` (array or SciPy sparse, n × d) and targets ``y`` (a vector of
        classes, or an n × L 0/1 indicator matrix, dense or sparse). Returns ``self``."""
        standardize, normalize = self._options()
        # scikit-learn's checks and messages for X and y (y finite; at least two rows, since
        # a validation part is split off); sparse X stays sparse
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse=("csr", "csc"),
            dtype=np.float64,
            multi_output=True,
            ensure_min_samples=2,
        )
        x = features(X)
        self.multilabel_ = sp.issparse(y) or (y.ndim == 2 and y.shape[1] > 1)
        self._sparse_labels = sp.issparse(y)
        classes, n_classes, labels = None, 0, None
        if self.multilabel_:
            kind = type_of_target(y)
            if kind != "multilabel-indicator":
                raise ValueError(f"a 2-D y must be a 0/1 label indicator matrix, got {kind} targets")
            labels = indicator_csr(y)
            self.classes_ = np.arange(labels[3])
        else:
            y = column_or_1d(y, warn=True)
            check_classification_targets(y)
            self.classes_, idx = np.unique(y, return_inverse=True)
            classes, n_classes = idx.astype(np.int64), len(self.classes_)
        model, info = _gimc.fit_labels(
            x,
            classes,
            n_classes,
            labels,
            self.map,
            _grid(self.m, "m", int),
            _grid(self.gamma, "gamma", str),
            _grid(self.alpha, "alpha", float),
            int(self.max_iter),
            float(self.validation_fraction),
            int(self.select_k),
            self._seed(),
            standardize,
            normalize,
            self.n_jobs,
            str(self.storage),
            int(self.block_rows or 0),
            str(self.precision),
            None if self.n_iter_no_change is None else int(self.n_iter_no_change),
        )
        self.model_bytes_ = bytes(model)
        self.streamed_ = bool(info["streamed"])
        self.best_params_ = {k: info[k] for k in ("m", "gamma", "alpha", "iterations")}
        self.validation_score_ = info["validation_score"]
        self.n_iter_ = info["iterations"]
        self.gamma_ = info["gamma"]
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_label = True
        return tags

    def _x(self, X):
        check_is_fitted(self, "model_bytes_")
        return checked_features(self, X, reset=False)

    def _scores(self, X):
        x = self._x(X)
        return _gimc.decision_function(self.model_bytes_, x)

    def decision_function(self, X):
        """The n × L scores (one column per class or label); with two classes, as
        scikit-learn's binary classifiers do, the vector of score(classes_[1]) −
        score(classes_[0]), positive where ``classes_[1]`` is predicted."""
        scores = self._scores(X)
        if not self.multilabel_ and len(self.classes_) == 2:
            return scores[:, 1] - scores[:, 0]
        return scores

    def predict_top_k(self, X, k=5):
        """The k best classes / label indices of every row, best first (n × k)."""
        x = self._x(X)
        top = _gimc.top_k(self.model_bytes_, x, int(k))
        return self.classes_[top]

    def predict(self, X):
        """Classes (multi-class), or the 0/1 indicator of labels scoring at least 0.5
        (multi-label; the label model is a least-squares fit to 0/1 targets), sparse when
        the training labels were."""
        scores = self._scores(X)
        if not self.multilabel_:
            return self.classes_[np.argmax(scores, axis=1)]
        pred = (scores >= 0.5).astype(np.int64)
        return sp.csr_matrix(pred) if self._sparse_labels else pred

    def score(self, X, y, sample_weight=None):
        """Accuracy (multi-class) or P@1 (multi-label)."""
        if sample_weight is not None:
            raise ValueError("sample_weight is not supported")
        if self.multilabel_:
            from .metrics import precision_at_k

            return precision_at_k(y, self._scores(X), 1)
        return float(np.mean(self.predict(X) == np.asarray(y).ravel()))
