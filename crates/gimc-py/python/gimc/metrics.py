"""Ranking metrics of multi-label predictions, computed by the Rust library (gimc-metrics)."""

from __future__ import annotations

import numpy as np

from . import _gimc
from ._convert import indicator_csr


def _check(y_true, y_score):
    scores = np.asarray(y_score, dtype=np.float64)
    if scores.ndim != 2:
        raise ValueError(f"y_score must be 2-D (n_samples, n_labels), got shape {scores.shape}")
    truth = indicator_csr(y_true)
    if (truth[2], truth[3]) != scores.shape:
        raise ValueError(
            f"y_true has shape {(truth[2], truth[3])} but y_score has shape {scores.shape}"
        )
    return truth, scores


def precision_at_k(y_true, y_score, k: int = 1) -> float:
    """Mean over rows of the fraction of the k highest-scoring labels that are true.

    ``y_true`` is a 0/1 indicator matrix (NumPy or SciPy sparse), ``y_score`` the n × L
    scores (e.g. ``GIMCClassifier.decision_function``).
    """
    truth, scores = _check(y_true, y_score)
    return _gimc.precision_at_k(scores, truth, int(k))


def ndcg_at_k(y_true, y_score, k: int = 1) -> float:
    """Mean over rows of the normalised discounted cumulative gain of the top k labels."""
    truth, scores = _check(y_true, y_score)
    return _gimc.ndcg_at_k(scores, truth, int(k))
