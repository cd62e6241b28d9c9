"""OKMF: online kernel matrix factorisation clustering, with scikit-learn's clusterer
conventions."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.validation import check_is_fitted

from . import _gimc
from ._classifier import GIMCClassifier, _grid
from ._convert import check_int, checked_features


class OKMF(ClusterMixin, BaseEstimator):
    """Online kernel matrix factorisation (Páez et al.): an RBF kernel factorised through a
    budget of p points by mini-batch SGD; each row's cluster is the largest entry of its latent
    vector. The model's size does not depend on the number of rows.

    Parameters
    ----------
    n_clusters : int, default=2
    budget_size : int, default=500
    gamma : float or str, default="scale"
    epochs : int, default=10
    batch_size : int, default=128
    standardize, normalize, random_state, n_jobs
        As in :class:`GIMCClassifier`.

    Attributes
    ----------
    labels_, budget_, W_, gamma_, loss_trace_
    """

    def __init__(
        self,
        n_clusters=2,
        budget_size=500,
        gamma="scale",
        epochs=10,
        batch_size=128,
        normalize=None,
        standardize="auto",
        random_state=0,
        n_jobs=None,
    ):
        self.n_clusters = n_clusters
        self.budget_size = budget_size
        self.gamma = gamma
        self.epochs = epochs
        self.batch_size = batch_size
        self.normalize = normalize
        self.standardize = standardize
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y=None):
        helper = GIMCClassifier(
            normalize=self.normalize,
            standardize=self.standardize,
            random_state=self.random_state,
            n_jobs=self.n_jobs,
        )
        standardize, normalize = helper._options()
        for name in ("n_clusters", "budget_size", "epochs", "batch_size"):
            check_int(name, getattr(self, name))
        gamma = _grid(self.gamma, "gamma", str)
        if len(gamma) != 1:
            raise ValueError("gamma takes one value here (no grid)")
        labels, info = _gimc.fit_okmf(
            checked_features(self, X, reset=True),
            int(self.n_clusters),
            int(self.budget_size),
            gamma[0],
            int(self.epochs),
            int(self.batch_size),
            helper._seed(),
            standardize,
            normalize,
            self.n_jobs,
        )
        self.labels_ = labels
        self.budget_ = info["budget"]
        self.W_ = info["w"]
        self.gamma_ = info["gamma"]
        self.loss_trace_ = np.asarray(info["loss_trace"])
        self._parts = (info["lambda"], info["alpha"], info["mean"], info.get("scale"), info.get("center", False), normalize)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def predict(self, X):
        """The clusters of new rows."""
        check_is_fitted(self, "W_")
        lam, alpha, mean, scale, center, normalize = self._parts
        return _gimc.okmf_predict(
            checked_features(self, X, reset=False), self.budget_, self.W_, self.gamma_, lam, alpha, mean, scale, center, normalize
        )
