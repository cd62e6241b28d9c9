"""GIMCClassifier: multi-class and multi-label GIMC / IMC, chosen by the library's ``auto`` search
or fitted with one map family and model selection on a validation split, following
scikit-learn's estimator conventions."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from . import _gimc
from ._convert import check_int, checked_features, features, indicator_csr

_MAPS = ("auto", "lff", "lnys", "rff", "nys")


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


class _LabelEstimator:
    """What the label estimators share: the option and target checks, :meth:`fit` around the
    estimator's own ``_fit`` and, once fitted, the scores, predictions and score of the model in
    ``model_bytes_``."""

    def _targets(self, X, y):
        """The checked features and targets: ``(x, classes, n_classes, labels)`` as the Rust
        fits take them; sets ``multilabel_`` and ``classes_``."""
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
        return x, classes, n_classes, labels

    def _seed(self) -> int:
        if isinstance(self.random_state, numbers.Integral) and not isinstance(self.random_state, bool):
            if self.random_state < 0:
                raise ValueError(f"random_state must be >= 0, got {self.random_state}")
            return int(self.random_state)
        return int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))

    def _check_choice(self, name, choices):
        """Raises ValueError unless the parameter ``name`` is one of ``choices``."""
        value = getattr(self, name)
        if value not in choices:
            raise ValueError(f"{name} must be one of {choices}, got {value!r}")

    def _standardize_option(self):
        """``standardize`` as the Rust fits take it: "auto", "on" or "off"."""
        standardize = {"auto": "auto", True: "on", False: "off"}.get(self.standardize)
        if standardize is None:
            raise ValueError(f"standardize must be 'auto', True or False, got {self.standardize!r}")
        return standardize

    def _check_n_jobs(self):
        check_int("n_jobs", self.n_jobs, optional=True)

    def fit(self, X, y):
        """Fit on features ``X`` (array or SciPy sparse, n × d) and targets ``y`` (a vector of
        classes, or an n × L 0/1 indicator matrix, dense or sparse). Returns ``self``."""
        standardize, normalize = self._options()
        x, classes, n_classes, labels = self._targets(X, y)
        self._fit(x, classes, n_classes, labels, standardize, normalize)
        return self

    def _label_threshold(self):
        return 0.5

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
        """Classes (multi-class), or the 0/1 indicator of labels scoring at least the
        estimator's threshold (multi-label: 0.5 for a least-squares fit to 0/1 targets, 0 for
        a classifier's margin), sparse when the training labels were."""
        scores = self._scores(X)
        if not self.multilabel_:
            return self.classes_[np.argmax(scores, axis=1)]
        pred = (scores >= self._label_threshold()).astype(np.int64)
        return sp.csr_matrix(pred) if self._sparse_labels else pred

    def score(self, X, y, sample_weight=None):
        """Accuracy (multi-class) or P@1 (multi-label)."""
        if sample_weight is not None:
            raise ValueError("sample_weight is not supported")
        if self.multilabel_:
            from .metrics import precision_at_k

            return precision_at_k(y, self._scores(X), 1)
        return float(np.mean(self.predict(X) == np.asarray(y).ravel()))


class GIMCClassifier(_LabelEstimator, ClassifierMixin, BaseEstimator):
    """Goal-directed inductive matrix completion for multi-class and multi-label learning.

    The rows are mapped by kernel feature maps (random Fourier features or Nyström
    landmarks, learned jointly with the model as in GIMC, KDD 2016), and the labels are
    predicted from the mapped rows by a ridge-regularised linear model.

    With ``map="auto"`` (the default) the model is chosen by the library's ``auto`` search,
    the default of ``gimc fit`` (``gimc::auto_fit``): on validation data from the training
    rows only (3-fold cross-validation up to 2,000 rows, one seeded split of
    ``validation_fraction`` above) it tries the row transform (raw rows, standardised when
    dense; unit L2 rows; tf-idf weights then unit rows, for sparse non-negative features), the
    RBF width γ, the ridge penalty λ, and the blocks of features: a linear part (the rows
    themselves, up to 4,096 columns), a random Fourier map ``lff`` and a Nyström map ``lnys``,
    alone and in unions. It then learns the best maps (GIMC's map learning) and keeps a learned
    map only where learning beats its random draw on validation, and refits the winner on all
    rows. Constant feature columns are dropped first; the kept columns, tf-idf weights,
    standardisation and row norm are stored with the model and applied to the rows given to
    ``predict`` and ``decision_function``, as ``gimc predict`` applies them. ``gamma``,
    ``alpha``, ``m``, ``max_iter``, ``normalize``, ``n_iter_no_change`` and ``select_k``
    narrow the search when set, as ``gimc fit``'s ``--gamma``, ``--lambda``, ``--m``,
    ``--iters``, ``--normalize``, ``--patience`` and ``--select-k`` do.

    With a fixed map (``"lff"``, ``"lnys"``, ``"rff"``, ``"nys"``) ``m``, ``gamma`` and
    ``alpha`` may be single values or lists: every combination is fitted on a seeded split of
    the training rows and scored on the held-out part (accuracy for classes, P@``select_k``
    for labels) after every outer iteration, and the best setting and iteration count are
    refitted on all rows.

    Parameters
    ----------
    map : {"auto", "lff", "lnys", "rff", "nys"}, default="auto"
        The model: ``"auto"`` searches it (above); ``lff`` / ``lnys`` are one learned Fourier /
        Nyström map, ``rff`` / ``nys`` the same maps fixed at their random draw.
    m : int, list of int or None, default=None
        Random directions (the Fourier map has 2m features) or landmarks (capped at the
        training rows by ``"auto"``). None: 500. ``"auto"`` takes one value, used by every map
        of its search.
    gamma : float, str, list or None, default=None
        RBF width. ``"scale"`` is scikit-learn's rule 1 / (n_features · X.var()) computed on
        the features as the map sees them (after the row transform, or ``standardize`` and
        ``normalize``); ``"0.25*scale"`` multiplies it; a number fixes it. None: ``"auto"``
        walks ``0.0625*scale``, ``0.25*scale``, ``scale``, ``4*scale`` and ``16*scale`` from
        ``scale``; a fixed map uses ``"scale"``.
        Given, it is the list ``"auto"`` searches.
    alpha : float, list of float or None, default=None
        Ridge penalty λ of the label model. None: ``"auto"`` searches 0.001, 0.01, 0.1, 1 and
        10; a fixed map uses 1.0. ``"auto"`` multiplies λ for each block of features (linear
        part, each map) by its mean squared row norm.
    max_iter : int, default=10
        Maximum outer iterations of the map learning (ignored for fixed maps; with ``"auto"``,
        0 keeps the maps at their random draw).
    n_iter_no_change : int or None, default=None
        Stop the map learning once its validation score has not beaten its best for this many
        outer iterations. None: ``"auto"`` stops after 2; a fixed map runs every setting to
        ``max_iter``.
    normalize : {"auto", None, "l2"}, default="auto"
        The row normalisation. ``"auto"``: ``map="auto"`` searches the row transform (raw,
        l2, tf-idf + l2); a fixed map leaves rows unnormalised. None: rows as they are
        (standardised when dense; ``"auto"`` then tries raw rows only). ``"l2"``: every row
        scaled to unit norm (after any standardisation; ``"auto"`` then tries unit rows only).
    standardize : {"auto", True, False}, default="auto"
        Standardise feature columns with the training statistics; ``"auto"`` does so for dense
        features only (sparse input is never densified). ``map="auto"`` takes ``"auto"`` only
        (its raw transform standardises dense features; its other transforms do not).
    validation_fraction : float, default=0.2
        Fraction of the training rows held out to choose the setting and iteration count
        (``"auto"``: when it searches on one split, above 2,000 rows).
    select_k : int or None, default=None
        The k of the validation P@k that decides (multi-label). None: a fixed map uses P@1;
        ``"auto"`` the mean of P@1 and P@3.
    random_state : int, RandomState or None, default=0
        Seed of the split and of the maps' draws: an int gives the same model as
        ``gimc fit --seed`` and the Rust library, so the default gives ``gimc fit``'s model
        (its default seed is 0) and the same fit gives the same model every time. None (or a
        RandomState) draws a seed from that generator instead, as scikit-learn's estimators
        do by default.
    n_jobs : int or None, default=None
        Worker threads (None: all cores).
    storage : {"auto", "whole", "streamed"}, default="auto"
        How the mapped rows Φ (n × 2m) of a fixed map are held: whole in memory, or formed in
        row blocks and never held whole (memory O(m² + m·L + block·m) besides the data, one
        more pass over the features per iteration). ``"auto"`` streams only when the whole fit
        would not fit the memory available. The same fit either way, up to rounding.
        ``map="auto"`` holds Φ whole and takes ``"auto"`` only.
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
        The chosen setting. A fixed map: ``m``, ``gamma`` (resolved), ``alpha`` and
        ``iterations``. ``"auto"``: ``stage`` (``"fixed"``: one block with a random map or
        the linear part alone, ``"combined"``: a union of blocks, ``"learned"``: the union
        with its maps learned), ``transform`` (``"raw"``, ``"l2"`` or ``"tfidf-l2"``),
        ``blocks`` (a list of dicts: ``name`` — ``"linear"``, ``"lff"`` or ``"lnys"`` —,
        ``gamma`` resolved on the training rows, ``gamma_factor`` of the scale rule, both
        None for the linear part, and ``iterations`` of the map learning, 0 for a random
        map), ``alpha`` and ``validation_score``.
    search_results_ : list of dict
        ``"auto"`` only: every setting scored on validation, in search order, each as
        ``best_params_`` describes it (its best λ as ``alpha``).
    constant_columns_ : ndarray of int
        ``"auto"`` only: the constant feature columns dropped before the search.
    validation_score_ : float
        Validation accuracy (classes) or the validation P@k that decides (labels; see
        ``select_k``) of the chosen setting.
    n_iter_ : int
        Outer iterations of the final fit's map learning (``"auto"``: the most of its maps).
    gamma_ : float or list of float
        The RBF width used; ``"auto"``: the list of the widths of its maps (empty when it
        chose the linear part alone).
    model_bytes_ : bytes
        The fitted model as a gimc model file with its input transform (usable with
        ``gimc predict``).
    streamed_ : bool
        Whether Φ was streamed in row blocks.
    """

    def __init__(
        self,
        map="auto",
        m=None,
        gamma=None,
        alpha=None,
        max_iter=10,
        n_iter_no_change=None,
        normalize="auto",
        standardize="auto",
        validation_fraction=0.2,
        select_k=None,
        random_state=0,
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

    def _options(self):
        self._check_choice("map", _MAPS)
        standardize = self._standardize_option()
        if isinstance(self.normalize, str) and self.normalize in ("auto", "l2"):
            normalize = self.normalize
        elif self.normalize is None:
            normalize = "none"
        else:
            raise ValueError(f"normalize must be 'auto', None or 'l2', got {self.normalize!r}")
        check_int("max_iter", self.max_iter, minimum=0)
        check_int("n_iter_no_change", self.n_iter_no_change, optional=True)
        check_int("select_k", self.select_k, optional=True)
        self._check_n_jobs()
        check_int("block_rows", self.block_rows, optional=True)
        if self.map == "auto":
            if standardize != "auto":
                raise ValueError(
                    "standardize applies to the fixed maps; map='auto' standardises dense "
                    "features in its raw row transform (narrow its transforms with normalize)"
                )
            if (self.storage, self.block_rows, self.precision) != ("auto", None, "float64"):
                raise ValueError(
                    "storage, block_rows and precision apply to the fixed maps; map='auto' "
                    "holds its features whole in float64"
                )
        elif normalize == "auto":
            normalize = "none"  # a fixed map: rows unnormalised unless normalize='l2'
        return standardize, normalize

    def _auto_search(self):
        """The narrowing of the ``auto`` search: ``(gamma, alpha, m)``, each None when
        searched (or, for ``m``, left at the search's default)."""
        gamma = None if self.gamma is None else _grid(self.gamma, "gamma", str)
        alpha = None if self.alpha is None else _grid(self.alpha, "alpha", float)
        m = None
        if self.m is not None:
            ms = _grid(self.m, "m", int)
            if len(ms) != 1:
                raise ValueError(
                    f"map='auto' takes one m (every map of its search has m), got {self.m!r}; "
                    "a grid over m needs a fixed map"
                )
            m = ms[0]
        return gamma, alpha, m

    def _fit(self, x, classes, n_classes, labels, standardize, normalize):
        """Fits the checked features and targets of :meth:`fit`: the ``auto`` search or the
        fixed map."""
        if self.map == "auto":
            self._fit_auto(x, classes, n_classes, labels, normalize)
            return
        model, info = _gimc.fit_labels(
            x,
            classes,
            n_classes,
            labels,
            self.map,
            _grid(500 if self.m is None else self.m, "m", int),
            _grid("scale" if self.gamma is None else self.gamma, "gamma", str),
            _grid(1.0 if self.alpha is None else self.alpha, "alpha", float),
            int(self.max_iter),
            float(self.validation_fraction),
            1 if self.select_k is None else int(self.select_k),
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

    def _fit_auto(self, x, classes, n_classes, labels, normalize):
        gamma, alpha, m = self._auto_search()
        model, info = _gimc.fit_auto(
            x,
            classes,
            n_classes,
            labels,
            gamma,
            alpha,
            m,
            int(self.max_iter),
            None if normalize == "auto" else normalize,
            None if self.n_iter_no_change is None else int(self.n_iter_no_change),
            float(self.validation_fraction),
            None if self.select_k is None else int(self.select_k),
            self._seed(),
            self.n_jobs,
        )
        chosen = info["chosen"]
        self.model_bytes_ = bytes(model)
        self.streamed_ = False
        self.best_params_ = chosen
        self.search_results_ = info["trials"]
        self.constant_columns_ = np.asarray(info["constant_columns"], dtype=np.int64)
        self.validation_score_ = chosen["validation_score"]
        self.n_iter_ = max((b["iterations"] for b in chosen["blocks"]), default=0)
        self.gamma_ = [b["gamma"] for b in chosen["blocks"] if b["gamma"] is not None]
