"""LinearClassifier: the linear models of the solvers' toolbox (ridge, reduced-rank regression,
logistic regression, linear SVM) for multi-class and multi-label data, as ``gimc fit --method
ridge|rrr|logistic|svm`` fits them."""

from __future__ import annotations

from sklearn.base import BaseEstimator, ClassifierMixin

from . import _gimc
from ._classifier import _grid, _LabelEstimator
from ._convert import check_int

_METHODS = ("ridge", "rrr", "logistic", "svm")


class LinearClassifier(_LabelEstimator, ClassifierMixin, BaseEstimator):
    """A linear model on the rows themselves, for multi-class and multi-label learning
    (``gimc::fit_linear``, the same fit as ``gimc fit --method METHOD``).

    - ``"ridge"``: multi-target ridge regression of the 0/1 label matrix with an unpenalised
      intercept, W = (X_cᵀX_c + αI)⁻¹X_cᵀY_c on centred X and Y.
    - ``"rrr"``: reduced-rank regression, the least-squares fit of rank at most ``rank``
      with an unpenalised intercept.
    - ``"logistic"``: L2 logistic regression with C = 1/α and a bias feature, one binary model
      per label (multi-label) or per class (multi-class, one-vs-rest; one model for two
      classes).
    - ``"svm"``: a linear SVM (squared hinge, dual coordinate descent) with C = 1/α, one model
      per label or class as for ``"logistic"``.

    The grid (``alpha``, or ``rank`` for ``"rrr"``) is chosen on a seeded split of
    ``validation_fraction`` of the training rows by validation accuracy (classes) or P@k
    (labels), and the winner refitted on all rows. Scores are the models' margins (least-squares
    fits for ``"ridge"`` and ``"rrr"``): labels are ranked by them and a class is their arg max.
    There is no ``predict_proba``. ``score`` is accuracy for classes and P@1 for labels
    (scikit-learn's default for multi-label is subset accuracy).

    Parameters
    ----------
    method : {"ridge", "rrr", "logistic", "svm"}, default="ridge"
        The model (above).
    alpha : float, list of float or None, default=None
        The penalty: ridge's α, or C = 1/α for ``"logistic"`` and ``"svm"`` (``"rrr"`` takes
        none). A list is a grid chosen on validation. None: 0.1, 1, 10, 100 and 1000.
    rank : int, list of int or None, default=None
        The rank of ``"rrr"`` (a list is a grid; each capped at min(n_features, n_labels)).
        None: 16, 64 and 256.
    standardize : {"auto", True, False}, default="auto"
        Standardise feature columns with the training statistics (stored with the model);
        ``"auto"`` does so for dense features only.
    normalize : {None, "l2"}, default=None
        Scale every row to unit norm (after any standardisation).
    validation_fraction : float, default=0.2
        Fraction of the training rows held out to choose from the grid (a grid of one setting
        is fitted on every row at once).
    select_k : int, default=1
        The k of the validation P@k that decides (multi-label).
    random_state : int, RandomState or None, default=0
        Seed of the split and of the SVM's coordinate order; an int gives the same model as
        ``gimc fit --seed`` (the default, ``gimc fit``'s default seed). As in
        :class:`GIMCClassifier`.
    n_jobs : int or None, default=None
        Worker threads (None: all cores).

    Attributes
    ----------
    classes_ : ndarray
        Class labels (multi-class) or label indices 0..L-1 (multi-label).
    n_features_in_ : int
    multilabel_ : bool
    best_params_ : dict
        The chosen ``alpha`` (or ``rank``).
    search_results_ : list of dict
        Every setting tried, in grid order, with its ``validation_score`` (None for a grid of
        one).
    validation_score_ : float or None
        The chosen setting's validation score.
    model_bytes_ : bytes
        The fitted model as a gimc model file with its input transform (usable with
        ``gimc predict``).
    """

    def __init__(
        self,
        method="ridge",
        alpha=None,
        rank=None,
        standardize="auto",
        normalize=None,
        validation_fraction=0.2,
        select_k=1,
        random_state=0,
        n_jobs=None,
    ):
        self.method = method
        self.alpha = alpha
        self.rank = rank
        self.standardize = standardize
        self.normalize = normalize
        self.validation_fraction = validation_fraction
        self.select_k = select_k
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _options(self):
        self._check_choice("method", _METHODS)
        standardize = self._standardize_option()
        if self.normalize not in (None, "l2"):
            raise ValueError(f"normalize must be None or 'l2', got {self.normalize!r}")
        if self.method == "rrr" and self.alpha is not None:
            raise ValueError("method='rrr' takes rank, not alpha")
        if self.method != "rrr" and self.rank is not None:
            raise ValueError(f"method={self.method!r} takes alpha, not rank")
        check_int("select_k", self.select_k)
        self._check_n_jobs()
        return standardize, "none" if self.normalize is None else "l2"

    def _fit(self, x, classes, n_classes, labels, standardize, normalize):
        """Fits the checked features and targets of :meth:`fit`."""
        model, info = _gimc.fit_linear(
            x,
            classes,
            n_classes,
            labels,
            self.method,
            None if self.alpha is None else _grid(self.alpha, "alpha", float),
            None if self.rank is None else _grid(self.rank, "rank", int),
            standardize,
            normalize,
            float(self.validation_fraction),
            int(self.select_k),
            self._seed(),
            self.n_jobs,
        )
        self.model_bytes_ = bytes(model)
        self.best_params_ = dict(info["chosen"])
        self.search_results_ = list(info["tried"])
        self.validation_score_ = info["validation_score"]

    def _label_threshold(self):
        # a classifier's margin is positive for a predicted label; a least-squares fit to 0/1
        # targets crosses 0.5
        return 0.0 if self.method in ("logistic", "svm") else 0.5
