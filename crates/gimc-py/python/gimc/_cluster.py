"""SemiSupervisedClustering: GIMC Algorithm 2 (clustering from must-link / cannot-link pairs)
with scikit-learn's clusterer conventions."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from . import _gimc
from ._classifier import GIMCClassifier, _grid
from ._convert import check_int, checked_features


class SemiSupervisedClustering(ClusterMixin, BaseEstimator):
    """Clusters rows from pairwise constraints by completing the n × n constraint matrix with
    learned kernel feature maps on both sides (GIMC Algorithm 2), then running k-means on the
    top-k left singular vectors.

    Parameters
    ----------
    n_clusters : int, default=2
    map : {"lff", "lnys", "rff", "nys"}, default="lff"
    m : int, default=200
    gamma : float or str, default="scale"
        As in :class:`GIMCClassifier`.
    alpha : float, list of float or None, default=None
        λ grid chosen on held-out constraints (None: the paper's {0.1, 0.5, 1, 5, 10}).
    max_iter : int, default=10
        Outer iterations (the count is chosen on the held-out constraints).
    standardize, normalize, random_state, n_jobs
        As in :class:`GIMCClassifier`.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    best_params_ : dict
        The chosen ``alpha`` and ``iterations``, and the ``gamma`` used.
    train_constraint_error_ : float
    """

    def __init__(
        self,
        n_clusters=2,
        map="lff",
        m=200,
        gamma="scale",
        alpha=None,
        max_iter=10,
        normalize=None,
        standardize="auto",
        random_state=0,
        n_jobs=None,
    ):
        self.n_clusters = n_clusters
        self.map = map
        self.m = m
        self.gamma = gamma
        self.alpha = alpha
        self.max_iter = max_iter
        self.normalize = normalize
        self.standardize = standardize
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, constraints, y=None):
        """Cluster the rows of ``X`` (array or SciPy sparse) from ``constraints``, an array of
        (i, j, same) rows (same = 1 must-link, 0 cannot-link). Returns ``self``."""
        helper = GIMCClassifier(
            map=self.map,
            normalize=self.normalize,
            standardize=self.standardize,
            random_state=self.random_state,
            n_jobs=self.n_jobs,
        )
        standardize, normalize = helper._options()
        check_int("n_clusters", self.n_clusters)
        check_int("m", self.m)
        pairs = np.asarray(constraints)
        if np.iscomplexobj(pairs):
            raise ValueError("constraints must be real (i, j, same) rows, got complex values")
        pairs = pairs.astype(np.float64)
        if pairs.ndim != 2 or pairs.shape[1] != 3:
            raise ValueError(f"constraints must have shape (n_pairs, 3), got {pairs.shape}")
        gamma = _grid(self.gamma, "gamma", str)
        if len(gamma) != 1:
            raise ValueError("gamma takes one value here (no grid)")
        alpha = [] if self.alpha is None else _grid(self.alpha, "alpha", float)
        labels, info = _gimc.fit_clusters(
            checked_features(self, X, reset=True),
            np.ascontiguousarray(pairs),
            int(self.n_clusters),
            self.map,
            int(self.m),
            gamma[0],
            alpha,
            int(self.max_iter),
            helper._seed(),
            standardize,
            normalize,
            self.n_jobs,
        )
        self.labels_ = labels
        self.best_params_ = {"alpha": info["alpha"], "iterations": info["iterations"], "gamma": info["gamma"]}
        self.train_constraint_error_ = info["train_constraint_error"]
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def fit_predict(self, X, constraints, y=None):
        """``fit`` and return ``labels_``."""
        return self.fit(X, constraints).labels_
