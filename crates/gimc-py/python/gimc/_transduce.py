"""MC1Transducer: transductive multi-label / multi-class learning with missing features
(MC-1 / MC-b, Goldberg et al., NIPS 2010), with scikit-learn's conventions."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from . import _gimc
from ._classifier import GIMCClassifier, _grid
from ._convert import check_int, checked_features


class MC1Transducer(TransformerMixin, BaseEstimator):
    """Labels and partly missing features completed as one low-rank matrix.

    ``X`` holds the features with ``NaN`` in the missing cells. ``y`` is either a vector of
    classes with ``-1`` marking the rows to predict (scikit-learn's semi-supervised
    convention), or an n × L label matrix of 1 / 0 with ``NaN`` marking unknown entries (a row
    of ``NaN`` is a row to predict). λ (``alpha``) and μ are chosen by ``folds``-fold
    cross-validation over the observed entries, as in ``gimc transduce``.

    Parameters
    ----------
    method : {"mc1", "mcb", "fpc-svm", "mean-svm", "zero-svm"}, default="mc1"
        MC-1 / MC-b, or an imputation + SVM baseline of the paper's tables.
    alpha : float or list of float, default=(0.001, 0.01, 0.1, 1.0)
        λ candidates (label-loss weight).
    folds : int, default=5
    mu_count : int, default=6
        Length of the μ grid per λ.
    max_stage_iters : int, default=1000
    standardize : bool, default=True
        Standardise each feature on its observed cells first.
    random_state, n_jobs
        As in :class:`GIMCClassifier`.

    Attributes
    ----------
    imputed_ : ndarray (n × d)
        ``X`` with every missing cell filled (``fit_transform`` returns it).
    decision_ : ndarray (n × t)
        Label scores of every row (positive: +1).
    transduction_ : ndarray
        The label (class) of every row, or the 0/1 label matrix: known ones as given,
        unknown ones predicted.
    unlabeled_ : ndarray
        Indices of the rows that were predicted.
    missing_ : ndarray of bool (n × d)
        The cells of ``X`` that were missing.
    classes_ : ndarray
    alpha_, mu_, cv_label_error_
    """

    def __init__(
        self,
        method="mc1",
        alpha=(0.001, 0.01, 0.1, 1.0),
        folds=5,
        mu_count=6,
        max_stage_iters=1000,
        standardize=True,
        random_state=0,
        n_jobs=None,
    ):
        self.method = method
        self.alpha = alpha
        self.folds = folds
        self.mu_count = mu_count
        self.max_stage_iters = max_stage_iters
        self.standardize = standardize
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y):
        """Complete the table: ``X`` dense with ``NaN`` in the missing cells, ``y`` as in the
        class description. Returns ``self``."""
        # scikit-learn's checks and messages (dense only; NaN allowed, ±inf refused)
        X = checked_features(self, X, reset=True, allow_nan=True, accept_sparse=False, min_samples=2)
        n = X.shape[0]
        y_arr = np.asarray(y.toarray() if sp.issparse(y) else y)
        if y_arr.shape[0] != n:
            raise ValueError(f"y has {y_arr.shape[0]} rows but X has {n}")
        for name in ("folds", "mu_count", "max_stage_iters"):
            check_int(name, getattr(self, name))
        self.multilabel_ = y_arr.ndim == 2 and y_arr.shape[1] > 1
        if self.multilabel_:
            Yf = y_arr.astype(np.float64)
            known = ~np.isnan(Yf)
            if np.any((Yf[known] != 0) & (Yf[known] != 1) & (Yf[known] != -1)):
                raise ValueError("label entries must be 1, 0 (or -1) and NaN for unknown")
            T = np.where(known, np.where(Yf > 0, 1.0, -1.0), 0.0)
            self.classes_ = np.arange(Yf.shape[1])
            self.unlabeled_ = np.flatnonzero(~known.any(axis=1))
        else:
            y1 = y_arr.ravel()
            is_unl = y1 == -1 if np.issubdtype(y1.dtype, np.number) else (y1 == "-1")
            self.classes_ = np.unique(y1[~is_unl])
            if len(self.classes_) < 2:
                raise ValueError("need labelled rows of at least two classes")
            idx = np.searchsorted(self.classes_, y1[~is_unl])
            T = np.zeros((n, len(self.classes_)))
            rows = np.flatnonzero(~is_unl)
            T[rows] = -1.0
            T[rows, idx] = 1.0
            self.unlabeled_ = np.flatnonzero(is_unl)
        seed = GIMCClassifier(random_state=self.random_state)._seed()
        scores, imputed, info = _gimc.transduce(
            np.ascontiguousarray(X),
            np.ascontiguousarray(T),
            str(self.method),
            _grid(self.alpha, "alpha", float),
            int(self.folds),
            int(self.mu_count),
            int(self.max_stage_iters),
            bool(self.standardize),
            seed,
            self.n_jobs,
        )
        self.decision_ = scores
        self.imputed_ = imputed
        self.missing_ = np.isnan(X)
        self.alpha_, self.mu_, self.cv_label_error_ = info["alpha"], info["mu"], info["cv_label_error"]
        self.svm_c_ = np.asarray(info["svm_c"])
        if self.multilabel_:
            pred = (scores > 0).astype(np.int64)
            self.transduction_ = np.where(np.isnan(Yf), pred, (Yf > 0).astype(np.int64))
        else:
            full = self.classes_[np.argmax(scores, axis=1)]
            self.transduction_ = np.where(is_unl, full, y1)
        return self

    def fit_transform(self, X, y):
        """``fit`` and return the imputed features."""
        return self.fit(X, y).imputed_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    def _fitted_table(self, X):
        """Check that ``X`` is None or the table ``fit`` saw (same shape, same missing cells,
        same known values): the method is transductive and has no model for new rows."""
        check_is_fitted(self, "imputed_")
        if X is None:
            return
        X = checked_features(self, X, reset=False, allow_nan=True, accept_sparse=False)
        known = ~self.missing_
        if (
            X.shape != self.imputed_.shape
            or not np.array_equal(np.isnan(X), self.missing_)
            or not np.array_equal(X[known], self.imputed_[known])
        ):
            raise ValueError(
                "MC1Transducer is transductive: pass the table it was fitted on (or nothing); "
                "new rows need a new fit with them included"
            )

    def transform(self, X=None):
        """The imputed features of the fitted table. ``X``, if given, must be that table."""
        self._fitted_table(X)
        return self.imputed_

    def predict(self, X=None):
        """The labels (classes, or 0/1 label rows) of the rows that were unlabelled. ``X``, if
        given, must be the fitted table."""
        self._fitted_table(X)
        return self.transduction_[self.unlabeled_]
