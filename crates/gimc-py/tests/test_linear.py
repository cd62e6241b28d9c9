"""LinearClassifier: the linear toolbox (ridge, reduced-rank regression, logistic regression,
linear SVM) from Python, the same fits as ``gimc fit --method ridge|rrr|logistic|svm``."""

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_multilabel_classification
from sklearn.linear_model import Ridge

from gimc import LinearClassifier, _gimc
from gimc.metrics import precision_at_k

from test_gimc import _cli_model


@pytest.fixture(scope="module")
def multilabel():
    X, Y = make_multilabel_classification(n_samples=500, n_features=25, n_classes=8, random_state=0)
    return X[:400], Y[:400], X[400:], Y[400:]


@pytest.fixture(scope="module")
def multiclass():
    X, y = make_classification(n_samples=400, n_features=8, n_informative=5, n_classes=3,
                               random_state=2)
    return X[:300], y[:300], X[300:], y[300:]


def test_ridge_is_scikit_learns_ridge_with_its_intercept(multilabel):
    X, Y, Xt, _ = multilabel
    clf = LinearClassifier(alpha=3.0, standardize=False).fit(X, Y)
    ref = Ridge(alpha=3.0).fit(X, Y)
    assert np.allclose(clf.decision_function(Xt), ref.predict(Xt), atol=1e-8)
    assert clf.best_params_ == {"alpha": 3.0}
    assert clf.validation_score_ is None  # one setting: no split


@pytest.mark.parametrize("method", ["ridge", "rrr", "logistic", "svm"])
def test_every_method_ranks_labels_well_above_chance(multilabel, method):
    X, Y, Xt, Yt = multilabel
    clf = LinearClassifier(method=method, random_state=0).fit(X, Y)
    p1 = precision_at_k(Yt, clf.decision_function(Xt), 1)
    # a random ranking of 8 labels hits about 0.3 of the time on this data
    assert p1 > 0.6, (method, p1)
    assert clf.score(Xt, Yt) == pytest.approx(p1)
    grid = clf.search_results_
    assert len(grid) == (1 if method == "rrr" else 5)  # rrr: ranks capped at the 8 labels
    pred = clf.predict(Xt)
    assert pred.shape == Yt.shape and set(np.unique(pred)) <= {0, 1}


@pytest.mark.parametrize("method", ["logistic", "svm"])
def test_classifiers_classify_and_match_gimc_fit(multiclass, method, tmp_path):
    X, y, Xt, yt = multiclass
    clf = LinearClassifier(method=method, random_state=3).fit(X, y)
    # chance is 1/3; scikit-learn's LinearSVC and LogisticRegression reach 0.62-0.66 here
    assert np.mean(clf.predict(Xt) == yt) > 0.55
    cli = _cli_model(X, y, tmp_path, "--method", method, "--standardize", "auto")
    assert np.array_equal(_gimc.decision_function(cli, Xt), clf.decision_function(Xt))


def test_grids_and_bad_options(multiclass):
    X, y, _, _ = multiclass
    clf = LinearClassifier(alpha=[0.1, 10.0], random_state=0).fit(X, y)
    scores = [r["validation_score"] for r in clf.search_results_]
    assert [r["alpha"] for r in clf.search_results_] == [0.1, 10.0]
    assert clf.validation_score_ == max(scores)
    with pytest.raises(ValueError, match="method must be one of"):
        LinearClassifier(method="lasso").fit(X, y)
    with pytest.raises(ValueError, match="takes rank, not alpha"):
        LinearClassifier(method="rrr", alpha=1.0).fit(X, y)
    with pytest.raises(ValueError, match="takes alpha, not rank"):
        LinearClassifier(rank=2).fit(X, y)
    with pytest.raises(ValueError, match="alpha"):
        LinearClassifier(alpha=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="must be finite and > 0"):
        LinearClassifier(alpha=0.0).fit(X, y)


def test_bilinear_regression_through_matrix_completion_matches_gimc_complete(tmp_path):
    import json
    import os
    import subprocess

    from gimc import MatrixCompletion

    from test_gimc import _write_completion_files

    # every entry of a rank-2 T = X A (Y B)ᵀ observed: bilinear regression recovers it
    rng = np.random.default_rng(4)
    X, Y = rng.normal(size=(40, 5)), rng.normal(size=(30, 5))
    T = X @ rng.normal(size=(5, 2)) @ (Y @ rng.normal(size=(5, 2))).T
    i, j = np.indices(T.shape).reshape(2, -1)
    entries = np.c_[i, j, T[i, j]]
    est = MatrixCompletion(method="bilinear", rank=2, alpha=1.0).fit(X, Y, entries)
    pred = est.predict(i, j)
    assert np.allclose(pred, T[i, j], atol=1e-8)
    # new rows from their features alone
    Xn = rng.normal(size=(3, 5))
    assert np.allclose(est.predict(np.repeat(np.arange(3), 30), np.tile(np.arange(30), 3), X=Xn),
                       (Xn @ est.W_ @ (Y @ est.H_).T).ravel())
    with pytest.raises(ValueError, match="no λ"):
        MatrixCompletion(method="bilinear", rank=2, alpha=[0.1, 1.0]).fit(X, Y, entries)
    gimc_bin = os.environ.get("GIMC_BIN")
    if not gimc_bin:
        pytest.skip("GIMC_BIN (the gimc command line) not set")
    xf, yf, tf, af = _write_completion_files(tmp_path, X, Y, entries, i, j)
    out = subprocess.run(
        [gimc_bin, "-q", "--json", "complete", str(tf), "--method", "bilinear", "--rank", "2",
         "--lambda", "1", "--entries", str(af), "--row-features", str(xf), "--col-features",
         str(yf)],
        check=True, capture_output=True, text=True,
    ).stdout
    cli = np.array([t[2] for t in json.loads(out)["predictions"]])
    assert np.allclose(cli, pred, rtol=1e-9, atol=1e-10)
