"""MatrixCompletion and InductiveMatrixCompletion: Z = X W (Y H)ᵀ from observed entries, with scikit-learn's
conventions."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from . import _gimc
from ._classifier import GIMCClassifier, _grid
from ._convert import check_int, features


def _side(X):
    if X is None:
        return None
    return features(X)


def _project(X, M):
    """X M for a dense or SciPy sparse X (None: the rows of M themselves)."""
    if X is None:
        return np.asarray(M)
    if sp.issparse(X):
        return np.asarray(sp.csr_matrix(X, dtype=np.float64) @ M)
    return np.asarray(X, dtype=np.float64) @ M


_GIMC_METHODS = ("gimc-lff", "gimc-lnys", "imc-rff", "imc-nys")


class _Completion(BaseEstimator):
    """The fit and prediction shared by the completion estimators."""

    def _method(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def fit(self, X, Y, entries, shape=None):
        """Fit to ``entries``, an (n_obs, 3) array of (row, column, value). ``X`` / ``Y`` are
        the row and column features (arrays or SciPy sparse; None for none, then ``shape``
        gives the matrix size). Returns ``self``."""
        e = np.asarray(entries, dtype=np.float64)
        if e.ndim != 2 or e.shape[1] != 3:
            raise ValueError(f"entries must have shape (n_obs, 3), got {e.shape}")
        if len(e) == 0:
            raise ValueError("no observed entries")
        rows, cols = e[:, 0], e[:, 1]
        for name, v in (("row", rows), ("column", cols)):
            if np.any(v != np.floor(v)) or np.any(v < 0):
                raise ValueError(f"{name} indices must be non-negative integers")
        check_int("rank", self.rank)
        if shape is None:
            shape = (
                X.shape[0] if X is not None else int(rows.max()) + 1,
                Y.shape[0] if Y is not None else int(cols.max()) + 1,
            )
        seed = GIMCClassifier(random_state=self.random_state)._seed()
        if self._method() in _GIMC_METHODS:
            return self._fit_gimc(X, Y, rows, cols, e[:, 2], seed)
        W, H, info = _gimc.fit_completion(
            self._method(),
            _side(X),
            int(shape[0]),
            _side(Y),
            int(shape[1]),
            rows.astype(np.int64),
            cols.astype(np.int64),
            np.ascontiguousarray(e[:, 2]),
            int(self.rank),
            _grid(self.alpha, "alpha", float),
            float(getattr(self, "holdout", 0.1)),
            _grid(getattr(self, "rho", 0.5), "rho", float),
            int(self.max_iter),
            seed,
            self.n_jobs,
        )
        self.W_, self.H_ = W, H
        self.row_factors_ = _project(X, W)
        self.col_factors_ = _project(Y, H)
        self.alpha_ = info["alpha"]
        self.holdout_rmse_ = dict(info["holdout_rmse"])
        if info["rho"] is not None:
            self.rho_ = info["rho"]
            self.holdout_auc_ = {(a, r): auc for a, r, auc in info["holdout_auc"]}
        self.rank_ = info["rank"]
        self.n_iter_ = info["iterations"]
        self.objective_ = info["objective"]
        self.shape_ = (int(shape[0]), int(shape[1]))
        return self

    def _fit_gimc(self, X, Y, rows, cols, values, seed):
        """GIMC completion with kernel maps on both sides (``gimc.select_completion``)."""
        if X is None or Y is None:
            raise ValueError(f"method {self._method()!r} needs row and column features X and Y")
        patience = getattr(self, "n_iter_no_change", None)
        check_int("n_iter_no_change", patience, optional=True)
        learned, family = self._method().split("-", 1)
        map_name = {("gimc", "lff"): "lff", ("gimc", "lnys"): "lnys",
                    ("imc", "rff"): "rff", ("imc", "nys"): "nys"}[(learned, family)]
        model, P, Q, info = _gimc.fit_gimc_completion(
            map_name,
            str(self.learn),
            _side(X),
            _side(Y),
            rows.astype(np.int64),
            cols.astype(np.int64),
            np.ascontiguousarray(values),
            _grid(self.m, "m", int),
            [str(g) for g in _grid(self.gamma, "gamma", str)],
            _grid(self.alpha, "alpha", float),
            int(self.rank),
            int(self.max_iter),
            float(self.holdout),
            seed,
            self.n_jobs,
            patience=None if patience is None else int(patience),
        )
        self.model_ = bytes(model)
        self.W_ = self.H_ = None
        self.row_factors_, self.col_factors_ = P, Q
        self.alpha_, self.m_, self.gamma_ = info["alpha"], info["m"], info["gamma"]
        self.gamma_resolved_ = tuple(info["gamma_resolved"])
        self.n_iter_ = info["iterations"]
        self.holdout_error_ = info["holdout_error"]
        self.holdout_errors_ = {(m, g, a): (it, err) for m, g, a, it, err in info["holdout_errors"]}
        self.rank_ = info["rank"]
        self.shape_ = (P.shape[0], Q.shape[0])
        return self

    def _factors(self, X, side):
        if getattr(self, "model_", None) is not None:
            return _gimc.completion_factors(self.model_, _side(X), side)
        return _project(X, self.W_ if side == "rows" else self.H_)

    def predict(self, rows, cols, X=None, Y=None):
        """Predicted entries (rows[t], cols[t]). With ``X`` (``Y``) the row (column) indices
        refer to those new feature rows (inductive prediction); otherwise to the training
        matrix."""
        check_is_fitted(self, "row_factors_")
        P = self.row_factors_ if X is None else self._factors(X, "rows")
        Q = self.col_factors_ if Y is None else self._factors(Y, "cols")
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        if rows.shape != cols.shape:
            raise ValueError(f"rows and cols differ in shape: {rows.shape} vs {cols.shape}")
        if rows.size and (rows.min() < 0 or rows.max() >= len(P) or cols.min() < 0 or cols.max() >= len(Q)):
            raise ValueError(f"an index is outside the {len(P)} × {len(Q)} matrix")
        return np.einsum("ij,ij->i", P[rows], Q[cols])


class MatrixCompletion(_Completion):
    """Matrix completion by any of gimc's methods, as ``gimc complete --method``:

    - ``"mc-als"``: low-rank MC by alternating least squares (no features);
    - ``"imc"``: inductive MC, Z = X W (Y H)ᵀ, by ALS + CG (features on either side);
    - ``"mc-nuclear"`` / ``"imc-nuclear"``: nuclear-norm MC / IMC by fixed point continuation
      (``alpha`` is the nuclear-norm weight; ``rank`` is not used);
    - ``"pu-imc"``: PU IMC, the observed entries are positives and every other entry an
      unlabelled 0 weighted 1 − (1 + ``rho``)/2;
    - ``"bilinear"``: bilinear regression, the rank-``rank`` Z minimising ‖X Z Yᵀ − T‖² over
      every entry with T zero outside the observed ones, in closed form (X and Y needed;
      ``alpha`` unused, one value);
    - ``"gimc-lff"`` / ``"gimc-lnys"``: GIMC, Z = Φ(X) W (Ψ(Y) H)ᵀ with random Fourier /
      Nyström maps of width ``m`` and RBF ``gamma`` learned with the factors (Algorithm 1 on a
      general Ω; ``learn`` = "both", "rows" or "cols"); ``"imc-rff"`` / ``"imc-nys"`` keep the
      maps at their random draw. ``m``, ``gamma`` and ``alpha`` may be lists: they are chosen
      with the iteration count (≤ ``max_iter``) on ``holdout`` of the entries, as ``gimc
      complete`` chooses them, and refitted (``holdout_errors_``); ``n_iter_no_change`` stops
      each grid point's map learning after that many iterations without a lower held-out error
      (``gimc complete --patience``; None runs every point to ``max_iter``). Both X and Y are
      needed; the fitted model is kept as the bytes of a model file (``model_``).

    ``alpha`` may be a list: it is then chosen by the RMSE on a seeded ``holdout`` fraction of
    the observed entries and refitted on all of them (``holdout_rmse_`` keeps each value's).
    For ``"pu-imc"``, ``alpha`` and ``rho`` may both be lists: the pair is chosen by the AUC of
    the held-out positives against entries outside the observed set (RMSE would reward
    predicting 1 everywhere), kept in ``rho_`` and ``holdout_auc_``.

    Attributes
    ----------
    W_, H_ : ndarray
        The factors (d × k with features on that side, else n × k).
    row_factors_, col_factors_ : ndarray
    alpha_ : float
    holdout_rmse_ : dict
    rho_, holdout_auc_ : float, dict
        ``"pu-imc"`` only: the chosen ρ and the held-out AUC of every (alpha, rho).
    m_, gamma_, gamma_resolved_, holdout_error_, holdout_errors_, model_
        GIMC methods only: the chosen m and γ (γ resolved on the row and column features), the
        held-out relative error and every grid point's (iterations, error), the model bytes.
    rank_, n_iter_, objective_
    """

    def __init__(
        self,
        method="imc",
        rank=10,
        alpha=0.1,
        holdout=0.1,
        rho=0.5,
        max_iter=30,
        m=200,
        gamma="scale",
        learn="both",
        n_iter_no_change=None,
        random_state=0,
        n_jobs=None,
    ):
        self.method = method
        self.rank = rank
        self.alpha = alpha
        self.holdout = holdout
        self.rho = rho
        self.max_iter = max_iter
        self.m = m
        self.gamma = gamma
        self.learn = learn
        self.n_iter_no_change = n_iter_no_change
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _method(self) -> str:
        return self.method


class InductiveMatrixCompletion(_Completion):
    """Inductive matrix completion (IMC) by alternating minimisation with conjugate gradients:
    the n₁ × n₂ matrix is modelled as Z = X W (Y H)ᵀ with row features X (n₁ × d₁), column
    features Y (n₂ × d₂) and rank-k factors W, H, fitted to the observed entries with penalty
    ``alpha`` (‖W‖² + ‖H‖²). Without features on a side, that side's factor is free (plain
    matrix completion). New rows or columns are predicted from their features. The same as
    ``MatrixCompletion(method="imc")``.

    Parameters
    ----------
    rank : int, default=10
    alpha : float or list of float, default=0.1
        Ridge penalty λ (a list is chosen on ``holdout`` of the entries).
    holdout : float, default=0.1
    max_iter : int, default=30
        Alternations (each solves W then H by CG).
    random_state : int, RandomState or None, default=0
        As in :class:`GIMCClassifier`.
    n_jobs : int or None, default=None

    Attributes
    ----------
    W_ : ndarray (d₁ × k, or n₁ × k without row features)
    H_ : ndarray (d₂ × k, or n₂ × k without column features)
    row_factors_, col_factors_ : ndarray
        X W and Y H of the training rows and columns (n₁ × k, n₂ × k).
    alpha_, holdout_rmse_, n_iter_, objective_
    """

    def __init__(self, rank=10, alpha=0.1, holdout=0.1, max_iter=30, random_state=0, n_jobs=None):
        self.rank = rank
        self.alpha = alpha
        self.holdout = holdout
        self.max_iter = max_iter
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _method(self) -> str:
        return "imc"
