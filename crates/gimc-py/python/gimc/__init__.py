"""gimc: goal-directed inductive matrix completion with learned kernel feature maps.

A Rust-backed package with scikit-learn's estimator conventions::

    from gimc import GIMCClassifier
    clf = GIMCClassifier().fit(X_train, Y_train)  # the `auto` search, as `gimc fit` runs it
    print(clf.best_params_)  # the chosen row transform, blocks (linear, maps), alpha
    top5 = clf.predict_top_k(X_test, 5)

Sparse SciPy input stays sparse; fits release the GIL and stop on Ctrl-C; fitted estimators
pickle through the gimc model file format (``model_bytes_``).
"""

from . import datasets, metrics
from ._classifier import GIMCClassifier
from ._cluster import SemiSupervisedClustering
from ._completion import InductiveMatrixCompletion, MatrixCompletion
from ._linear import LinearClassifier
from ._okmf import OKMF
from ._transduce import MC1Transducer

__all__ = [
    "GIMCClassifier",
    "InductiveMatrixCompletion",
    "LinearClassifier",
    "MC1Transducer",
    "MatrixCompletion",
    "OKMF",
    "SemiSupervisedClustering",
    "datasets",
    "metrics",
]
__version__ = "0.1.0"
